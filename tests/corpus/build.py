"""Build the regression corpus of the replay validator: short, hand-written ``xzlog/1`` records.

Run ``python tests/corpus/build.py`` from the repository root to (re)write ``tests/corpus/*.jsonl`` and
``tests/corpus/README.md``; a test checks the committed files are what this module writes.

Every case is a record (or a raw line) plus the exact set of issue codes the validator must report
(empty for a valid record). Claimed results are worked out by hand from ``docs/RULES.md`` and written down
here; the validator recomputes them and must agree. Records are written compactly: hands in tile notation
by seat (``"111m444m789m567p8p"``), events, claimed payments and wins in the hand notation of
:mod:`pipeline.formats.notation` (``"0-8p 1h8p<0"``, ``"0>1=1hu@1"``, ``"1@1:1f1p"``).
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.formats.notation import parse_events, parse_payments, parse_wins

HERE = Path(__file__).resolve().parent
PLAYERS = ["p1", "p2", "p3", "p4"]
TILES = [f"{rank}{suit}" for suit in "mps" for rank in range(1, 10)]
Record = dict[str, Any]


# ---------------------------------------------------------------------------------------------- notation
def tiles(text: str) -> list[str]:
    """``"111m45p"`` → ``["1m", "1m", "1m", "4p", "5p"]`` (spaces allowed)."""
    out: list[str] = []
    for group in re.findall(r"([1-9]+)([mps])", text.replace(" ", "")):
        out += [f"{rank}{group[1]}" for rank in group[0]]
    assert "".join(re.findall(r"[1-9]+[mps]", text.replace(" ", ""))) == text.replace(" ", ""), text
    return out


def events(text: str) -> list[dict[str, Any]]:
    """Compact event text → event objects (the notation of :mod:`pipeline.formats.notation`)."""
    return parse_events(text)


def claim(pays: str | None, deltas: Sequence[int], wins: str | None = "") -> dict[str, Any]:
    """A claimed ``result`` from compact text; ``pays=None`` claims the deltas alone (payments not itemised:
    the field left out), ``wins=None`` leaves the optional ``wins`` out."""
    out: dict[str, Any] = {"payments": parse_payments(pays or ""), "deltas": list(deltas)}
    if pays is None:
        del out["payments"]
    if wins is not None:
        out["wins"] = parse_wins(wins)
    return out


def wall_of(
    deal: Sequence[str], dealer: int, draws: Sequence[str], tail: Sequence[str] = (), suits: str = "mps"
) -> list[str]:
    """The wall (108 tiles, or 36 a suit of ``suits``) that deals ``deal`` (by seat, as many seats as hands)
    and then feeds ``draws``, then ``tail``, then the remaining tiles in kind order."""
    hands = [tiles(h) for h in deal]
    seats = len(hands)
    wall: list[str] = []
    for k in range(seats):
        wall += hands[(dealer + k) % seats][:13]
    wall.append(hands[dealer][13])
    wall += list(draws) + list(tail)
    rest = Counter({t: 4 for t in TILES if t[1] in suits})
    rest.subtract(wall)
    assert all(n >= 0 for n in rest.values()), f"more than four of {[t for t, n in rest.items() if n < 0]}"
    assert not set(wall) - set(rest), f"tiles of a suit not in {suits}"
    return wall + [t for t in TILES for _ in range(rest[t])]


def record(
    hand_id: str,
    *,
    deal: Sequence[str] | None = None,
    wall: Sequence[str] | None = None,
    evs: str | list[dict[str, Any]],
    result: dict[str, Any] | None = None,
    ruleset: str | dict[str, Any] = "chengdu",
    dealer: int = 0,
    que: str | None = None,
    exchange: tuple[str, Sequence[str]] | None = None,
    **extra: Any,
) -> Record:
    """One record object, fields in the order of schemas/XZLOG.md. ``que`` is written ``"spmm"`` (seat 0 first,
    ``-`` for null)."""
    out: Record = {"format": "xzlog/1", "hand_id": hand_id}
    players = extra.pop("players", PLAYERS)
    out.update(extra)
    out["ruleset"] = ruleset
    out["players"] = list(players)
    out["dealer"] = dealer
    if wall is not None:
        out["wall"] = list(wall)
    if deal is not None:
        out["deal"] = [tiles(h) for h in deal]
    if exchange is not None:
        out["exchange"] = {"direction": exchange[0], "given": [tiles(g) for g in exchange[1]]}
    if que is not None:
        out["que"] = [None if q == "-" else q for q in que]
    out["events"] = events(evs) if isinstance(evs, str) else evs
    if result is not None:
        out["result"] = result
    return out


# ---------------------------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    """One corpus entry: a record (or a raw line) and the exact issue codes it must raise."""

    id: str
    file: str  # the corpus file (without .jsonl) the line goes to
    doc: str  # what the case shows, in words
    expect: frozenset[str]
    line: str  # the JSON line as written to the file
    record: Record | None = None
    computed: str | None = None  # for a hand that stops: the payments the validator must compute
    twin: str | None = None  # a valid case the record differs from in one point


@dataclass(frozen=True)
class SessionCase:
    """A small sequence of records and the exact (hand_id, code) pairs ``check_sessions`` must report."""

    id: str
    doc: str
    expect: frozenset[tuple[str, str]]
    records: tuple[Record, ...]


CASES: list[Case] = []
SESSIONS: list[SessionCase] = []


KEY_ORDER = (
    "format",
    "level",
    "hand_id",
    "session_id",
    "hand_no",
    "table_id",
    "played_at",
    "ruleset",
    "players",
    "dealer",
    "wall",
    "deal",
    "exchange",
    "que",
    "events",
    "end",
    "result",
)


def dumps(obj: Any) -> str:
    """One JSON line; a record's fields in the order of schemas/XZLOG.md, unknown and ``x_*`` fields last."""
    if isinstance(obj, dict):
        obj = {k: obj[k] for k in sorted(obj, key=lambda k: KEY_ORDER.index(k) if k in KEY_ORDER else len(KEY_ORDER))}
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


_DERIVED: dict[str, str] = {}  # hand_id → the hand_id of the record it was varied from


def case(file: str, rec: Record, doc: str, *codes: str, computed: str | None = None, twin: str | None = None) -> Record:
    """Register ``rec`` (its ``hand_id`` is the case id) as expecting exactly ``codes``; ``twin`` names the valid
    case it differs from (by default the case it was varied from)."""
    assert not any(c.id == rec["hand_id"] for c in CASES), f"duplicate case {rec['hand_id']}"
    twin = twin or _DERIVED.get(rec["hand_id"])
    CASES.append(Case(rec["hand_id"], file, " ".join(doc.split()), frozenset(codes), dumps(rec), rec, computed, twin))
    return rec


def raw_case(file: str, case_id: str, line: str, doc: str, *codes: str, twin: str | None = None) -> None:
    """A line that is not a record object (for ``SCHEMA_JSON``)."""
    CASES.append(Case(case_id, file, " ".join(doc.split()), frozenset(codes), line, twin=twin))


def vary(
    base: Record,
    hand_id: str,
    *,
    evs: str | None = None,
    result: Any = "keep",
    patch: Callable[[Record], None] | None = None,
    **fields: Any,
) -> Record:
    """A copy of ``base`` with a new id and some fields replaced (``result=None`` drops the claim)."""
    out = copy.deepcopy(base)
    out["hand_id"] = hand_id
    _DERIVED[hand_id] = base["hand_id"]
    if evs is not None:
        out["events"] = events(evs)
    if result != "keep":
        if result is None:
            out.pop("result", None)
        else:
            out["result"] = result
    for name, value in fields.items():
        if name == "deal":
            out["deal"] = [tiles(h) for h in value]
        elif name == "que":
            out["que"] = [None if q == "-" else q for q in value]
        else:
            out[name] = value
    if patch is not None:
        patch(out)
    return out


def rotate(rec: Record, k: int, hand_id: str) -> Record:
    """The same hand with every seat moved ``k`` places on (seat s plays what seat s-k played), so the
    dealer changes and the players stay in their seats."""
    out = copy.deepcopy(rec)
    out["hand_id"] = hand_id

    def s(seat: int | None) -> int | None:
        return None if seat is None else (seat + k) % 4

    out["dealer"] = s(rec["dealer"])  # a wall stays as it is: it deals from the dealer round the table
    if "deal" in rec:
        out["deal"] = [rec["deal"][(i - k) % 4] for i in range(4)]
    if "que" in rec:
        out["que"] = [rec["que"][(i - k) % 4] for i in range(4)]
    for e in out["events"]:
        e["seat"] = s(e["seat"])
        if "from" in e:
            e["from"] = s(e["from"])
    if "result" in rec:
        res = out["result"]
        for p in res["payments"]:
            p["from"], p["to"] = s(p["from"]), s(p["to"])
        res["deltas"] = [rec["result"]["deltas"][(i - k) % 4] for i in range(4)]
        for w in res.get("wins", []):
            w["seat"] = s(w["seat"])
    return out


def full_hand(
    deal: Sequence[str],
    *,
    first: str,
    front: str = "",
    last: str = "",
    kong: dict[int, str] | None = None,
    finish: str = "discard",
) -> tuple[list[str], str]:
    """A whole hand to the empty wall, played out by *tsumogiri* (every player discards the tile just drawn),
    dealer 0. Returns ``(wall, events)``.

    The wall after the deal is ``front``, then the undealt tiles not named in ``front`` or ``last`` in an
    order that mixes the suits, then ``last``. ``kong[seat] = tile``: on its first turn the seat declares a
    concealed kong of ``tile`` (held four times from the deal) and discards the replacement instead.
    ``finish`` is what the seat drawing the last tile does: ``discard`` it, win by self-draw (``hu``), or
    discard it for seat ``n`` to win on (``ron<n>``). Written without the engine, so the validator's
    replay of it is an independent check.
    """
    kong = dict(kong or {})
    hands = [tiles(h) for h in deal]
    rest = Counter({t: 4 for t in TILES})
    rest.subtract(t for h in hands for t in h)
    rest.subtract(tiles(front) if front else [])
    rest.subtract(tiles(last) if last else [])
    assert all(n >= 0 for n in rest.values()), rest

    def mixed(t: str) -> int:  # a fixed order that interleaves ranks and suits
        return (int(t[0]) * 7 + "mps".index(t[1]) * 3) % 27 * 10 + "mps".index(t[1])

    middle = sorted(rest.elements(), key=mixed)
    tail = (tiles(front) if front else []) + middle + (tiles(last) if last else [])
    assert len(tail) == 55
    out = [f"0-{first}"]
    seat, pos = 0, 0
    while pos < len(tail):
        seat = (seat + 1) % 4
        drawn = tail[pos]
        pos += 1
        out.append(f"{seat}+{drawn}")
        if seat in kong:
            out.append(f"{seat}c{kong.pop(seat)}")
            drawn = tail[pos]
            pos += 1
            out.append(f"{seat}+{drawn}")
        if pos < len(tail) or finish == "discard":
            out.append(f"{seat}-{drawn}")
        elif finish == "hu":
            out.append(f"{seat}h{drawn}")
        else:
            winner = int(finish.removeprefix("ron"))
            out += [f"{seat}-{drawn}", f"{winner}h{drawn}<{seat}"]
    return wall_of(deal, 0, tail), " ".join(out)


# ================================================================================================ the hands
# D1: the base hand. Seat 1 waits on 5p/8p, seat 2 on 9s (all pungs), seat 3 on 2s/5s; the dealer's first
# discard 8p feeds seat 1 (平胡 1 fan), seat 2 then self-draws 9s (对对胡 2 fan: 2 + 1 自摸加底 from each of
# seats 0 and 3), seat 3 self-draws 5s (1 fan: 1 + 1 from seat 0, the only other player still in).
D1 = ["235669m1248p3668s", "111m444m789m567p8p", "111s222s333p999p9s", "123p456p789s234s5s"]
D1_EVENTS = "0-8p 1h8p<0 2+9s 2h9s 3+5s 3h5s"
D1_RESULT = claim("0>1=1hu@1 0>2=3hu@3 3>2=3hu@3 0>3=2hu@5", [-6, 1, 6, -1], "1@1:1f1p 2@3:2f2p 3@5:1f1p")


def play_cases() -> None:
    f = "play"
    base = case(
        f,
        record("play-three-winners", deal=D1, evs=D1_EVENTS, result=D1_RESULT),
        """
        Valid. The dealer discards first (no draw event for the 14th tile); seat 1 wins on it (点炮, 1 fan,
        the discarder pays 1); play goes on with seat 2 (血战到底), who self-draws (自摸加底: 2 + 1 from each
        player still in, seats 0 and 3, not seat 1 who has won); seat 3 self-draws and the hand ends with
        three winners.""",
    )
    case(
        f,
        vary(base, "play-turn-order", evs="0-8p 1h8p<0 3+5s 3h5s 2+9s 2h9s"),
        """
        After seat 1's win on seat 0's discard, seat 3 draws: the turn was seat 2's (next after the winner).""",
        "TURN_ORDER",
    )
    case(
        f,
        vary(base, "play-after-end", evs=D1_EVENTS + " 0+2m"),
        """
        Three players have won: the hand is over, and seat 0 still draws.""",
        "TURN_AFTER_END",
    )
    case(
        f,
        vary(base, "play-truncated", evs="0-8p 1h8p<0 2+9s"),
        """
        The record stops after seat 2's draw, with one winner and the wall far from empty.""",
        "TURN_INCOMPLETE",
    )
    case(
        f,
        vary(base, "play-truncated-no-claim", evs="0-8p 1h8p<0 2+9s", result=None),
        """
        The same truncated record without a claimed result: the same single issue.""",
        "TURN_INCOMPLETE",
    )
    case(
        f,
        vary(base, "play-no-claim", result=None),
        """
        Valid: the base hand without a claimed result (``result`` is optional).""",
    )

    # After a self-draw win, the next seat still in moves, skipping winners.
    ev = "0-2m 1+7m 1-7m 2+3m 2-3m 3+5s 3h5s 0+5m 0-5m 1+2m 1-2m 2+9s 2h9s 0+6m 0-8p 1h8p<0"
    skip = case(
        f,
        record(
            "play-selfdraw-skips-winner",
            deal=D1,
            evs=ev,
            result=claim(
                "0>3=2hu@6 1>3=2hu@6 2>3=2hu@6 0>2=3hu@12 1>2=3hu@12 0>1=1hu@15",
                [-6, -4, 4, 6],
                "3@6:1f1p 2@12:2f2p 1@15:1f1p",
            ),
        ),
        """
        Valid. Seat 3 self-draws first (all three others pay 1 + 1); seat 2's later self-draw is followed by
        seat 0, not seat 3 who has won; seat 2's self-draw is paid by seats 0 and 1 only; seat 0 then feeds
        seat 1.""",
    )
    case(
        f,
        vary(skip, "play-selfdraw-winner-moves", evs=ev.split(" 0+6m")[0] + " 3+6m 3-6m"),
        """
        After seat 2's self-draw, seat 3 draws again, but seat 3 has already won.""",
        "TURN_WON",
    )
    case(
        f,
        vary(base, "play-winner-discards", evs="0-8p 1h8p<0 1-8p"),
        """
        Seat 1 discards right after winning: a winner leaves play.""",
        "TURN_WON",
    )

    # 一炮多响: seats 1 and 3 both win on the dealer's 8p; counting from the discarder the last winner is
    # seat 3, so the next to draw is seat 0, the discarder itself.
    d2 = [D1[0], D1[1], D1[2], "123p567p234s789s8p"]
    yipao = case(
        f,
        record(
            "play-yipao-duoxiang",
            deal=d2,
            evs="0-8p 1h8p<0 3h8p<0 0+9s 0-9s 2h9s<0",
            result=claim("0>1=1hu@1 0>3=1hu@2 0>2=2hu@5", [-4, 1, 2, 1], "1@1:1f1p 3@2:1f1p 2@5:2f2p"),
        ),
        """
        Valid 一炮多响: seats 1 and 3 both win on seat 0's 8p, each paid by the discarder. Counting from the
        discarder the last winner is seat 3, so play resumes with seat 0 (the next seat still in after seat 3),
        who draws 9s and feeds seat 2 (对对胡 2 fan on a discard: 2).""",
    )
    heaven = ["111m444m789m567p88p", D1[2], D1[3], "2355669m124p368s"]
    case(
        f,
        record(
            "play-heavenly",
            deal=heaven,
            evs="0h8p 1+9s 1h9s 2+5s 2h5s",
            result=claim(
                "1>0=2hu@0 2>0=2hu@0 3>0=2hu@0 2>1=3hu@2 3>1=3hu@2 3>2=2hu@4",
                [6, 4, -3, -7],
                "0@0:1f1p 1@2:2f2p 2@4:1f1p",
            ),
        ),
        """
        Valid 天胡: the dealer's fourteen dealt tiles win before any discard (a self-draw on any of its tiles);
        Chengdu scores it as a normal hand ("就当正常胡牌算"). Seats 1 and 2 then win on their first draws (地胡,
        also normal under Chengdu rules).""",
    )
    case(
        f,
        vary(yipao, "play-yipao-wrong-next", evs="0-8p 1h8p<0 3h8p<0 2+9s 2h9s"),
        """
        After 一炮多响 by seats 1 and 3 on seat 0's discard, seat 2 draws; the turn was seat 0's.""",
        "TURN_ORDER",
    )
    case(
        f,
        vary(yipao, "play-yipao-wrong-winner-next", evs="0-8p 1h8p<0 3h8p<0 1+9s"),
        """
        After 一炮多响, seat 1 (a winner) draws.""",
        "TURN_WON",
    )


# KA: a concealed kong and 杠上花, then a second concealed kong paid only by the players still in, and
# 杠上炮 on the discard after it.
KA = ["14689m1238p23588s", "345m44p555p678p99p", "12p12345677799s", "1234556789m777p"]
KA_EVENTS = "0-9m 1+5p 1c5p 1+4p 1h4p 2+7s 2c7s 2+5m 2-5m 3h5m<2 0+6s 0-6s 2+3p 2h3p"
KA_PAYS = (
    "0>1=2kong@2 2>1=2kong@2 3>1=2kong@2 0>1=5hu@4 2>1=5hu@4 3>1=5hu@4 0>2=2kong@6 3>2=2kong@6 2>3=2hu@9 0>2=3hu@13"
)
KA_WINS = "1@4:3f4p 3@9:2f2p 2@13:2f2p"
# KB: 点杠花. Seat 0 feeds seat 1's direct kong of 5m; seat 1 wins on the replacement 4p.
KB = ["4599m1288p344668s", "123m555m678m4p777p", D1[2], D1[3]]
# KD: a pong, then the added kong robbed (抢杠). KF: a pong kept with the fourth tile, added later (not fresh).
KD = ["11479m2358p46789s", "1234567899m55p1s", "8m4p99p111222333s", "123789p2345789s"]
KD_EVENTS = "0-5p 1p5p<0 1-1s 2+6p 2-8m 3+4m 3-4m 0+7m 0-7m 1+5p 1a5p 2h5p<1! 3+5s 3h5s 0+1m 0-9m 1h9m<0"
KF = ["23468m12458p3668s", "123m456m789m9m555p", D1[2], "123789p2345789s"]
KF_EVENTS = "0-5p 1p5p<0 1-9m 2+7m 2-7m 3+6p 3-6p 0+4s 0-4s 1+1m 1a5p 1+1m 1h1m 2+9s 2h9s 3+5s 3h5s"


def claim_cases() -> None:
    f = "claims"
    ka = case(
        f,
        record(
            "kong-concealed-gang-shang-hua", deal=KA, evs=KA_EVENTS, result=claim(KA_PAYS, [-12, 21, -2, -7], KA_WINS)
        ),
        """
        Valid. Seat 1 draws its fourth 5p, declares a concealed kong (下雨: 2 from each other player), draws the
        replacement 4p from the front of the wall and wins on it: 杠上花, 平胡 1 + 根 1 (the kong) + 杠上花 1 =
        3 fan, 4 points + 1 自摸加底 from each of the three others. Seat 2 then kongs 7s: only seats 0 and 3
        pay, seat 1 has won. Seat 2 discards the replacement 5m and seat 3 wins on it: 杠上炮, 1 + 1 = 2 fan,
        paid by seat 2; the kong money stays (Chengdu). Seat 0 is next after seat 3, then seat 2 self-draws
        (平胡 1 + 根 1 for the kong = 2 fan, 2 + 1 from seat 0 alone).""",
    )
    case(
        f,
        vary(
            ka,
            "kong-gang-shang-pao-transfer",
            ruleset={"profile": "chengdu", "gang_shang_pao_money": "transfer"},
            result=claim(KA_PAYS + " 2>3=4transfer@9", [-12, 21, -6, -3], KA_WINS),
        ),
        """
        Valid. As kong-concealed-gang-shang-hua with the 杠上炮 money switch set to ``transfer`` (呼叫转移):
        the 4 points seat 2 collected for the kong at event 6 move to seat 3, who won on the discard after it.""",
    )
    case(
        f,
        vary(
            ka,
            "kong-gang-shang-pao-refund",
            ruleset={"profile": "chengdu", "gang_shang_pao_money": "refund"},
            result=claim(KA_PAYS + " 2>0=2tui_shui@9 2>3=2tui_shui@9", [-10, 21, -6, -5], KA_WINS),
        ),
        """
        Valid. The same hand with the switch set to ``refund``: seat 2 returns the kong money to the two
        players who paid it (seats 0 and 3).""",
    )
    case(
        f,
        vary(
            ka,
            "kong-gang-shang-pao-transfer-not-claimed",
            ruleset={"profile": "chengdu", "gang_shang_pao_money": "transfer"},
        ),
        """
        The transfer switch is on, but the claim keeps the kong money with seat 2 (the Chengdu default).""",
        "SETTLE_MISSING",
    )
    case(
        f,
        vary(ka, "kong-rob-concealed", evs="0-9m 1+5p 1c5p 3h5p<1!"),
        """
        Seat 3 claims to rob seat 1's concealed kong of 5p: only an added kong (面下杠) can be robbed.""",
        "CLAIM_ROB_CONCEALED",
    )
    case(
        f,
        vary(ka, "kong-no-replacement", evs="0-9m 1+5p 1c5p 1-4p"),
        """
        小相公: seat 1 declares a kong and discards without drawing the replacement ("杠牌的时候忘了摸起一张来"). It
        pays everybody 1 fan's worth and returns the kong money it collected (as for 诈胡, docs/RULES.md §6).""",
        "TILE_COUNT_SHORT",
        computed="0>1=2kong@2 2>1=2kong@2 3>1=2kong@2 1>0=1penalty@3 1>2=1penalty@3 "
        "1>3=1penalty@3 1>0=2tui_shui@3 1>2=2tui_shui@3 1>3=2tui_shui@3",
    )
    case(
        "settle",
        vary(ka, "settle-winner-pays-kong", result=claim(KA_PAYS + " 1>2=2kong@6", [-12, 19, 0, -7], KA_WINS)),
        """
        The claim makes seat 1, who has already won, pay for seat 2's later kong: players who have won pay
        nothing for later events.""",
        "SETTLE_EXTRA",
    )

    kb_pays = "0>1=2kong@1 {hu} 0>2=3hu@5 3>2=3hu@5 0>3=2hu@7"
    kb = case(
        f,
        record(
            "kong-dian-gang-hua-feeder",
            deal=KB,
            evs="0-5m 1k5m<0 1+4p 1h4p 2+9s 2h9s 3+5s 3h5s",
            result=claim(kb_pays.format(hu="0>1=4hu@3"), [-11, 6, 6, -1], "1@3:3f4p 2@5:2f2p 3@7:1f1p"),
        ),
        """
        Valid 点杠花 under Chengdu rules. Seat 0's 5m feeds seat 1's direct kong (直杠: seat 0 pays 2); seat 1
        wins on the replacement 4p: 平胡 1 + 根 1 + 杠上花 1 = 3 fan, 4 points, paid by the feeder alone as if
        dealing in ("算引杠者点炮": no 自摸加底).""",
    )
    case(
        f,
        vary(
            kb,
            "kong-dian-gang-hua-self-draw",
            ruleset={"profile": "chengdu", "dian_gang_hua": "self_draw"},
            result=claim(
                kb_pays.format(hu="0>1=5hu@3 2>1=5hu@3 3>1=5hu@3"), [-12, 17, 1, -6], "1@3:3f4p 2@5:2f2p 3@7:1f1p"
            ),
        ),
        """
        Valid. The same hand with the 点杠花 switch set to ``self_draw`` (the app text's "算自摸"): every other
        player pays 4 + 1.""",
    )
    case(
        f,
        vary(
            kb,
            "kong-dian-gang-hua-app",
            ruleset="app",
            que="msmm",
            result=claim(
                kb_pays.format(hu="0>1=9hu@3 2>1=9hu@3 3>1=9hu@3"), [-16, 29, -3, -10], "1@3:4f8p 2@5:2f2p 3@7:1f1p"
            ),
        ),
        """
        Valid. The same hand under the app profile: 点杠花 counts as a self-draw and 杠上花 is worth 2 fan, so
        seat 1's win is 1 + 1 + 2 = 4 fan, 8 points, and each other player pays 8 + 1.""",
    )
    case(
        f,
        vary(
            kb,
            "kong-dian-gang-hua-feeder-claimed-as-self-draw",
            result=claim(
                kb_pays.format(hu="0>1=5hu@3 2>1=5hu@3 3>1=5hu@3"), [-12, 17, 1, -6], "1@3:3f4p 2@5:2f2p 3@7:1f1p"
            ),
        ),
        """
        Chengdu rules, but the claim settles 点杠花 as a self-draw: the feeder should pay 4 alone. Seat 0's
        payment has the right parties and a wrong amount, seats 2 and 3 pay what they owe nothing for.""",
        "SETTLE_AMOUNT",
        "SETTLE_EXTRA",
    )
    case(
        f,
        record(
            "kong-second-kong-gang-shang-hua",
            deal=KB,
            evs="0-5m 1k5m<0 1+7p 1c7p 1+4p 1h4p 2+9s 2h9s 3+5s 3h5s",
            result=claim(
                "0>1=2kong@1 0>1=2kong@3 2>1=2kong@3 3>1=2kong@3 0>1=9hu@5 2>1=9hu@5 3>1=9hu@5 "
                "0>2=3hu@7 3>2=3hu@7 0>3=2hu@9",
                [-18, 35, -5, -12],
                "1@5:4f8p 2@7:2f2p 3@9:1f1p",
            ),
        ),
        """
        Valid. After the direct kong fed by seat 0, seat 1's replacement is its fourth 7p: a second kong
        (concealed) in a row, and the next replacement wins. Then it is not 点杠花: "就算在场的还没胡牌的所有人的了",
        every other player pays 1 + 2 roots + 杠上花 1 = 4 fan, 8 + 1.""",
    )

    case(
        f,
        record(
            "kong-second-kong-capped",
            deal=KB,
            ruleset={"profile": "chengdu", "cap": 3},
            evs="0-5m 1k5m<0 1+7p 1c7p 1+4p 1h4p 2+9s 2h9s 3+5s 3h5s",
            result=claim(
                "0>1=2kong@1 0>1=2kong@3 2>1=2kong@3 3>1=2kong@3 0>1=5hu@5 2>1=5hu@5 3>1=5hu@5 "
                "0>2=3hu@7 3>2=3hu@7 0>3=2hu@9",
                [-14, 23, -1, -8],
                "1@5:4f4p 2@7:2f2p 3@9:1f1p",
            ),
        ),
        """
        Valid: kong-second-kong-gang-shang-hua with a 3-fan cap (封顶): seat 1's 4 fan are paid as 3, 4 points
        (+ 1 自摸加底); the claimed fan is the count before the cap.""",
    )
    kd = case(
        f,
        record(
            "claim-rob-added-kong",
            deal=KD,
            evs=KD_EVENTS,
            result=claim(
                "1>2=2hu@11 0>3=2hu@13 1>3=2hu@13 0>1=1hu@16", [-3, -3, 2, 4], "2@11:2f2p 3@13:1f1p 1@16:1f1p"
            ),
        ),
        """
        Valid 抢杠. Seat 1 pongs seat 0's 5p, later draws the fourth 5p and adds it to the pong (面下杠); seat 2
        wins on it: 平胡 1 + 抢杠 1 = 2 fan, paid by seat 1; the robbed kong earns nothing and stays a pong.
        Play resumes after the robber (seat 3). Seat 1 later wins with the pong.""",
    )
    case(
        f,
        vary(kd, "claim-pong-old-discard", evs="0-5p 1+7m 1p5p<0"),
        """
        Seat 1 pongs seat 0's 5p after drawing: a claim is only on the tile just discarded.""",
        "CLAIM_NOT_ALLOWED",
    )
    case(
        f,
        vary(kd, "claim-pong-one-tile", evs="0-4m 1p4m<0"),
        """
        Seat 1 pongs 4m holding one 4m.""",
        "CLAIM_NOT_ALLOWED",
    )
    case(
        f,
        vary(kd, "claim-pong-own-discard", evs="0-5p 0p5p<0"),
        """
        Seat 0 pongs its own discard.""",
        "CLAIM_NOT_ALLOWED",
    )
    case(
        f,
        vary(kd, "claim-rob-direct-kong", evs="0-5p 1p5p<0 1-1s 2k1s<1 3h1s<2!"),
        """
        Seat 3 claims to rob seat 2's direct kong; only an added kong can be robbed, and the replacement is
        the next move: no tile is open to win on.""",
        "WIN_WRONG_TILE",
    )

    kf_pays = "{kong}0>1=5hu@12 2>1=5hu@12 3>1=5hu@12 0>2=3hu@14 3>2=3hu@14 0>3=2hu@16"
    kf_wins = "1@12:3f4p 2@14:2f2p 3@16:1f1p"
    case(
        f,
        record(
            "kong-added-stands",
            deal=KF,
            evs=KF_EVENTS,
            result=claim(kf_pays.format(kong="0>1=1kong@10 2>1=1kong@10 3>1=1kong@10 "), [-11, 18, 0, -7], kf_wins),
        ),
        """
        Valid. Seat 1 holds three 5p and pongs seat 0's fourth (先碰); later it adds the fourth tile it kept
        (面下杠, not freshly drawn). Nobody robs it: every other player pays 1 (Chengdu: always). The
        replacement 1m wins: 平胡 1 + 根 1 + 杠上花 1 = 3 fan; after an added kong everybody pays 4 + 1.""",
    )
    case(
        f,
        record(
            "kong-added-not-fresh-unpaid",
            deal=KF,
            evs=KF_EVENTS,
            ruleset={"profile": "chengdu", "added_kong_paid": "fresh"},
            result=claim(kf_pays.format(kong=""), [-10, 15, 1, -6], kf_wins),
        ),
        """
        Valid. The same hand with ``added_kong_paid = fresh`` (many apps): the added tile was not drawn this
        turn, so the kong earns nothing.""",
    )
    case(
        f,
        record(
            "kong-added-not-fresh-claimed-paid",
            deal=KF,
            evs=KF_EVENTS,
            ruleset={"profile": "chengdu", "added_kong_paid": "fresh"},
            result=claim(kf_pays.format(kong="0>1=1kong@10 2>1=1kong@10 3>1=1kong@10 "), [-11, 18, 0, -7], kf_wins),
        ),
        """
        The fresh-only switch is on, but the claim pays the stale added kong.""",
        "SETTLE_EXTRA",
        twin="kong-added-not-fresh-unpaid",
    )

    # Win precedence: seat 2 holds 88p and could pong the dealer's 8p, but seat 1 wins on it first.
    d1p = [D1[0], D1[1], "111s222s88p999p99s", D1[3]]
    pre = case(
        f,
        record("claim-pass-then-pong-allowed", deal=d1p, evs=D1_EVENTS, result=D1_RESULT),
        """
        Valid. Seat 2 waits on 8p or 9s; it lets seat 1 win alone on the dealer's 8p (passing is allowed before
        the last four tiles) and self-draws 9s later (对对胡 2 fan).""",
    )
    case(
        f,
        vary(pre, "claim-pong-after-win", evs="0-8p 1h8p<0 2p8p<0"),
        """
        Seat 1 wins on the dealer's 8p, then seat 2 pongs the same 8p: a win takes precedence over pong and
        kong, the tile is gone.""",
        "CLAIM_PRECEDENCE",
    )


# H: 过手胡. Seat 3 (111m 99m 333p 45p 789p) waits on 3p (2 fan: the fourth 3p is a 根), 6p and 9m (1 fan
# each); seat 1 waits on 8p (2 fan: 平胡 + the 根 of its four 2s), seat 2 on 5s/7s/8s (1 fan).
H = ["156m12299p134899s", "123456789222s8p", "234567888m6667s", "11199m33345789p"]


def pass_cases() -> None:
    f = "passing"
    case(
        f,
        record("pass-then-win-same-fan", deal=H, evs="0-1p 1+6p 1-6p 2+9m 2-9m 3h9m<2", result=None),
        """
        过手胡: seat 3 could win on seat 1's 6p (1 fan) and let it go; before its own next draw it wins on
        seat 2's 9m, worth the same 1 fan.""",
        "CLAIM_PASSED_WIN",
        twin="pass-rule-off",
    )
    case(
        f,
        record("pass-then-win-less-fan", deal=H, evs="0-1p 1+3p 1-3p 2+9m 2-9m 3h9m<2", result=None),
        """
        过手胡: seat 3 lets seat 1's 3p go (2 fan with the 根), then wins on seat 2's 9m (1 fan) before its
        next draw.""",
        "CLAIM_PASSED_WIN",
        twin="pass-then-win-more-fan",
    )
    case(
        f,
        record(
            "pass-then-win-more-fan",
            deal=H,
            evs="0-1p 1+6p 1-6p 2+3p 2-3p 3h3p<2 0+5p 0-5p 1+8p 1h8p 2+7s 2h7s",
            result=claim("2>3=2hu@5 0>1=3hu@9 2>1=3hu@9 0>2=2hu@11", [-5, 6, -3, 2], "3@5:2f2p 1@9:2f2p 2@11:1f1p"),
        ),
        """
        Valid: seat 3 passes 6p (1 fan) and then wins on seat 2's 3p, worth more (2 fan): "加番可以胡".""",
    )
    case(
        f,
        record(
            "pass-then-self-draw",
            deal=H,
            evs="0-1p 1+6p 1-6p 2+4m 2-4m 3+9m 3h9m 0+5p 0-5p 1+8p 1h8p 2+7s 2h7s",
            result=claim(
                "0>3=2hu@6 1>3=2hu@6 2>3=2hu@6 0>1=3hu@10 2>1=3hu@10 0>2=2hu@12",
                [-7, 4, -3, 6],
                "3@6:1f1p 1@10:2f2p 2@12:1f1p",
            ),
        ),
        """
        Valid: seat 3 passes 6p, then self-draws 9m (same fan): "自摸可以胡".""",
    )
    case(
        f,
        record(
            "pass-then-draw-then-win",
            deal=H,
            evs="0-1p 1+6p 1-6p 2+4m 2-4m 3+5p 3-5p 0+9m 0-9m 3h9m<0 0+4p 0-4p 1+8p 1h8p 2+7s 2h7s",
            result=claim("0>3=1hu@9 0>1=3hu@13 2>1=3hu@13 0>2=2hu@15", [-6, 6, -1, 1], "3@9:1f1p 1@13:2f2p 2@15:1f1p"),
        ),
        """
        Valid: seat 3 passes 6p but draws before winning on seat 0's 9m: the restriction lasts until the
        player's own next draw.""",
    )
    case(
        f,
        record(
            "pass-rule-off",
            deal=H,
            ruleset={"profile": "chengdu", "pass_win_rule": False},
            evs="0-1p 1+6p 1-6p 2+9m 2-9m 3h9m<2 0+5p 0-5p 1+8p 1h8p 2+7s 2h7s",
            result=claim("2>3=1hu@5 0>1=3hu@9 2>1=3hu@9 0>2=2hu@11", [-5, 6, -2, 1], "3@5:1f1p 1@9:2f2p 2@11:1f1p"),
        ),
        """
        Valid: the hand of pass-then-win-same-fan with the 过手胡 switch off.""",
    )


def undo_exchange(post: Sequence[str], given: Sequence[str], direction: str) -> list[str]:
    """The dealt hands that become ``post`` after seat i passes ``given[i]`` to seat (i + offset) % 4."""
    offset = {"cw": 3, "ccw": 1, "across": 2}[direction]
    out = []
    for seat in range(4):
        hand = Counter(tiles(post[seat]))
        hand.subtract(tiles(given[(seat - offset) % 4]))
        hand.update(tiles(given[seat]))
        assert all(n >= 0 for n in hand.values()), (seat, post[seat])
        out.append("".join(t for t in TILES for _ in range(hand[t])))
    return out


# V: the app profile (定缺 declared, void tiles discarded first, 换三张). After the exchange the hands are D1.
V_EVENTS = "0-1p 1+3s 1-3s 2+6m 2-6m 3+7m 3-7m 0+5p 0-8p 1h8p<0 2+9s 2h9s 3+5s 3h5s"
V_RESULT = claim("0>1=1hu@9 0>2=3hu@11 3>2=3hu@11 0>3=2hu@13", [-6, 1, 6, -1], "1@9:1f1p 2@11:2f2p 3@13:1f1p")
V_GIVEN = {
    "across": ["333p", "789s", "366s", "444m"],
    "cw": ["789s", "366s", "444m", "333p"],
    "ccw": ["444m", "333p", "789s", "366s"],
}


def void_cases() -> None:
    f = "void"
    v = {}
    offsets = {"cw": 3, "ccw": 1, "across": 2}
    for direction, given in V_GIVEN.items():
        v[direction] = case(
            f,
            record(
                f"app-exchange-{direction}",
                ruleset="app",
                deal=undo_exchange(D1, given, direction),
                exchange=(direction, given),
                que="psmm",
                evs=V_EVENTS,
                result=V_RESULT,
            ),
            f"""
            Valid app hand with 换三张 ``{direction}`` (seat i passes to seat (i+{offsets[direction]})
            mod 4) and 定缺 (seat 0 void p, seat 1 s, seats 2 and 3 m). Every discard respects void-first: the
            dealer sheds 1p and later 8p while holding other p tiles, the others discard the void tile they
            draw. Seat 1 wins on 8p at event 9 (no 地胡: seat 1 has discarded), seats 2 and 3 self-draw.""",
        )
    base = v["across"]
    case(
        f,
        vary(base, "app-no-que", patch=lambda r: r.pop("que")),
        """
        The app profile requires every seat to declare a void suit; the record has no ``que``.""",
        "TILE_VOID",
    )
    case(
        f,
        vary(base, "app-que-null", que="ps-m"),
        """
        Seat 2 declared no void suit under the app profile.""",
        "TILE_VOID",
    )
    case(
        f,
        vary(base, "app-que-bad-suit", patch=lambda r: r.__setitem__("que", ["p", "s", "z", "m"])),
        """
        A void suit that is not m, p or s.""",
        "TILE_VOID",
    )
    case(
        f,
        vary(base, "app-void-not-first", evs="0-2m" + V_EVENTS[4:]),
        """
        The dealer (void p) discards 2m while holding 1p, 2p, 4p and 8p.""",
        "TURN_VOID_FIRST",
    )
    case(
        f,
        vary(base, "app-void-drawn-kept", evs="0-1p 1+3s 1-5p"),
        """
        Seat 1 (void s) draws 3s and discards 5p, keeping the void tile.""",
        "TURN_VOID_FIRST",
    )
    case(
        f,
        vary(
            base,
            "exchange-mixed-suits",
            exchange={
                "direction": "across",
                "given": [["3p", "3p", "8s"], ["7s", "8s", "9s"], ["3s", "6s", "6s"], ["4m", "4m", "4m"]],
            },
        ),
        """
        Seat 0 passes 3p 3p 8s: the three tiles of 换三张 are of one suit.""",
        "TILE_EXCHANGE",
    )
    case(
        f,
        vary(
            base,
            "exchange-not-held",
            exchange={
                "direction": "across",
                "given": [["4p", "4p", "4p"], ["7s", "8s", "9s"], ["3s", "6s", "6s"], ["4m", "4m", "4m"]],
            },
        ),
        """
        Seat 0 passes three 4p but was dealt one.""",
        "TILE_NOT_HELD",
    )
    case(
        f,
        vary(base, "exchange-in-chengdu", ruleset="chengdu"),
        """
        The Chengdu profile plays no 换三张, and the record has an exchange.""",
        "TILE_EXCHANGE",
    )
    case(
        f,
        record("chengdu-void-any-order", deal=D1, que="psmm", evs="0-2m" + V_EVENTS[4:], result=V_RESULT),
        """
        Valid: the events of app-void-not-first under Chengdu rules (no exchange), where a declared void
        suit need not be discarded first.""",
    )
    case(
        f,
        record(
            "app-earthly",
            ruleset="app",
            deal=undo_exchange(D1, V_GIVEN["across"], "across"),
            exchange=("across", V_GIVEN["across"]),
            que="psmm",
            evs="0-8p 1h8p<0 2+9s 2h9s 3+5s 3h5s",
            result=claim(
                "0>1=128hu@1 0>2=129hu@3 3>2=129hu@3 0>3=129hu@5",
                [-386, 128, 258, 0],
                "1@1:8f128p 2@3:8f128p 3@5:8f128p",
            ),
        ),
        """
        Valid, the app profile's reading of 地胡 (fixed 8 fan, 128 points): seat 1 wins on the dealer's first
        discard, seats 2 and 3 on their first draw before any call or discard of theirs (each payer adds the
        1 of 自摸加底). Under Chengdu rules the same events are play-three-winners (normal hands).""",
    )
    case(
        f,
        record(
            "app-heavenly",
            ruleset="app",
            que="smmm",
            deal=["111m444m789m567p88p", D1[2], D1[3], "2355669m124p368s"],
            evs="0h8p 1+9s 1h9s 2+5s 2h5s",
            result=claim(
                "1>0=129hu@0 2>0=129hu@0 3>0=129hu@0 2>1=129hu@2 3>1=129hu@2 3>2=129hu@4",
                [387, 129, -129, -387],
                "0@0:8f128p 1@2:8f128p 2@4:8f128p",
            ),
        ),
        """
        Valid: play-heavenly under the app profile, which reads 天胡 and 地胡 as a fixed 8 fan (128 points, + 1
        自摸加底 from each payer).""",
    )
    case(
        f,
        vary(base, "app-earthly-claimed-normal", evs="0-8p 1h8p<0 2+9s 2h9s 3+5s 3h5s", result=D1_RESULT),
        """
        The app hand of app-earthly with a claim that scores the three wins as normal hands.""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )
    case(
        f,
        record("win-void-suit-declared", deal=D1, que="-p--", evs=D1_EVENTS, result=D1_RESULT),
        """
        Chengdu rules with 定缺 recorded: seat 1 declared p void and wins holding 567p 88p.""",
        "WIN_VOID_SUIT",
        twin="win-void-declared-ok",
    )
    case(
        f,
        record("win-void-declared-ok", deal=D1, que="-s--", evs=D1_EVENTS, result=D1_RESULT),
        """
        Valid: the same hand with seat 1 declaring s, which it does not hold.""",
    )
    case(
        f,
        record("win-three-suits", deal=[D1[0], "111m444m567p789s8p", D1[2], D1[3]], evs=D1_EVENTS, result=D1_RESULT),
        """
        Seat 1 wins holding 111m 444m 567p 88p 789s: three suits (缺一门: at most two at a win).""",
        "WIN_VOID_SUIT",
        twin="play-three-winners",
    )


def _base() -> Record:
    """play-three-winners, the base hand the one-point variations start from."""
    rec = next(c.record for c in CASES if c.id == "play-three-winners")
    assert rec is not None
    return rec


def tile_cases() -> None:
    f = "tiles"
    base = _base()
    case(
        f,
        vary(base, "tile-not-held", evs="0-7p"),
        """
        The dealer discards 7p, which it does not hold.""",
        "TILE_NOT_HELD",
    )
    case(
        f,
        vary(base, "tile-fifth-copy-dealt", deal=["115669m1248p3668s", *D1[1:]]),
        """
        The deal holds five 1m (seat 0 two, seat 1 three).""",
        "TILE_FIFTH_COPY",
    )
    case(
        f,
        vary(base, "tile-fifth-copy-drawn", evs="0-8p 1h8p<0 2+2s"),
        """
        Seat 2 draws a 2s; seats 2 and 3 already hold all four.""",
        "TILE_FIFTH_COPY",
    )
    case(
        f,
        vary(base, "tile-dealt-short", deal=["35669m1248p3668s", *D1[1:]]),
        """
        小相公 at the deal: the dealer holds 13 tiles, not 14.""",
        "TILE_COUNT_SHORT",
    )
    case(
        f,
        vary(base, "tile-dealt-long", deal=[*D1[:3], "7m123p456p789s234s5s"]),
        """
        大相公 at the deal: seat 3 holds 14 tiles, not 13.""",
        "TILE_COUNT_LONG",
    )
    case(
        f,
        vary(base, "tile-discard-without-draw", evs="0-2m 1-7m"),
        """
        小相公: seat 1 discards without drawing after the dealer's discard. The penalty (Chengdu: as for a false
        win, 1 fan to every other player, all three because nobody knows when the count went wrong) is in
        the computed ledger.""",
        "TILE_COUNT_SHORT",
        computed="1>0=1penalty@1 1>2=1penalty@1 1>3=1penalty@1",
    )
    case(
        f,
        vary(base, "tile-draw-twice", evs="0-2m 1+7m 1+3m"),
        """
        大相公: seat 1 draws twice in a row.""",
        "TILE_COUNT_LONG",
        computed="1>0=1penalty@2 1>2=1penalty@2 1>3=1penalty@2",
    )

    f = "wins"
    case(
        f,
        vary(base, "win-false", evs="0-2m 1h2m<0"),
        """
        诈胡: seat 1 declares a win on 2m, which does not complete its hand. It pays every player still in
        1 fan's worth (the penalty is computed; a hand that stops is not compared with its claim).""",
        "WIN_FALSE",
        computed="1>0=1penalty@1 1>2=1penalty@1 1>3=1penalty@1",
    )
    case(
        f,
        vary(base, "win-false-after-winners", evs="0-8p 1h8p<0 2+9s 2h9s 3+4p 3h4p"),
        """
        诈胡 by seat 3 after seats 1 and 2 have won: only seat 0, still in, is paid
        ("对于先于麻胡者胡牌的玩家，就不再赔了").""",
        "WIN_FALSE",
        computed="0>1=1hu@1 0>2=3hu@3 3>2=3hu@3 3>0=1penalty@5",
    )
    case(
        f,
        record(
            "win-false-loses-kong",
            deal=KA,
            evs="0-9m 1+5p 1c5p 1+4p 1h4p 2+7s 2c7s 2+5m 2-5m 3h5m<2 0+6s 0-6s 2+8s 2h8s",
            result=claim(KA_PAYS, [-12, 21, -2, -7], KA_WINS),
        ),
        """
        诈胡 by seat 2, who collected 4 for its kong at event 6: it pays seat 0 (the only other player still
        in) 1 fan's worth and returns its kong money ("并不再计算其刮风下雨收益").""",
        "WIN_FALSE",
        twin="kong-concealed-gang-shang-hua",
        computed="0>1=2kong@2 2>1=2kong@2 3>1=2kong@2 0>1=5hu@4 2>1=5hu@4 3>1=5hu@4 0>2=2kong@6 3>2=2kong@6 "
        "2>3=2hu@9 2>0=1penalty@13 2>0=2tui_shui@13 2>3=2tui_shui@13",
    )
    case(
        f,
        vary(base, "win-wrong-tile", evs="0-8p 1h5p<0"),
        """
        Seat 1 claims a win on 5p after the dealer discarded 8p.""",
        "WIN_WRONG_TILE",
    )
    case(
        f,
        vary(base, "win-wrong-source", evs="0-8p 1h8p<2"),
        """
        Seat 1 claims the 8p came from seat 2; seat 0 discarded it.""",
        "WIN_WRONG_TILE",
    )
    case(
        f,
        vary(base, "win-self-draw-wrong-tile", evs="0-8p 1h8p<0 2+9s 2h2s"),
        """
        Seat 2 draws 9s and claims a self-drawn win on 2s.""",
        "WIN_WRONG_TILE",
    )
    case(
        f,
        vary(base, "win-on-own-discard", evs="0-8p 0h8p<0"),
        """
        The dealer claims a win on its own discard.""",
        "WIN_WRONG_TILE",
    )


def wall_cases() -> None:
    f = "wall"
    wall = wall_of(D1, 0, ["9s", "5s"])
    base = case(
        f,
        record("wall-valid", wall=wall, deal=D1, evs=D1_EVENTS, result=D1_RESULT),
        """
        Valid: play-three-winners with its wall; the deal agrees with the wall and the draws are wall[53]
        and wall[54].""",
    )
    case(
        f,
        vary(base, "wall-only", patch=lambda r: r.pop("deal")),
        """
        Valid: the same hand with the wall alone (the starting hands come from the dealing order).""",
    )
    case(
        f,
        vary(base, "wall-five-copies", wall=[*wall[:-1], "1m"]),
        """
        The wall's last tile is a fifth 1m (and only three 9s are left).""",
        "TILE_WALL",
    )
    case(
        f,
        vary(base, "wall-deal-mismatch", deal=["5669m1248p3668s27m", "111m444m89m2m567p8p", *D1[2:]]),
        """
        The deal swaps a tile between seats 0 and 1; the wall deals them otherwise.""",
        "TILE_DEAL",
    )
    case(
        f,
        vary(base, "wall-draw-out-of-order", wall=wall_of(D1, 0, ["5s", "9s"])),
        """
        Seat 2 draws 9s where the wall's next tile is 5s.""",
        "TILE_WALL_ORDER",
    )
    case(
        f,
        record(
            "wall-dealer-2",
            wall=wall,
            evs="2-8p 3h8p<2 0+9s 0h9s 1+5s 1h5s",
            dealer=2,
            result=claim("2>3=1hu@1 2>0=3hu@3 1>0=3hu@3 2>1=2hu@5", [6, -1, -6, 1], "3@1:1f1p 0@3:2f2p 1@5:1f1p"),
        ),
        """
        Valid: the same wall with seat 2 as dealer: seat 2 receives wall[0:13] and wall[52], seat 3 the next
        13 tiles, and so on round the table.""",
    )
    kb_wall = wall_of(KB, 0, ["4p", "9s", "5s"])
    kb = case(
        f,
        record(
            "wall-kong-replacement-front",
            wall=kb_wall,
            evs="0-5m 1k5m<0 1+4p 1h4p 2+9s 2h9s 3+5s 3h5s",
            result=claim(
                "0>1=2kong@1 0>1=4hu@3 0>2=3hu@5 3>2=3hu@5 0>3=2hu@7", [-11, 6, 6, -1], "1@3:3f4p 2@5:2f2p 3@7:1f1p"
            ),
        ),
        """
        Valid: kong-dian-gang-hua-feeder with its wall; the kong replacement is the wall's next tile.""",
    )
    back = wall_of(KB, 0, ["9s", "5s"])
    back.remove("4p")
    case(
        f,
        vary(kb, "wall-kong-replacement-back", wall=[*back, "4p"]),
        """
        Seat 1 takes its kong replacement 4p from the back of the wall; replacements come from the front
        ("杠牌要顺着拿牌").""",
        "TILE_WALL_ORDER",
    )


def commitment_cases() -> None:
    """Wall commitments (schemas/XZLOG.md, commitment): the seed against the published hash, the wall against
    the seed. The seed here gives another wall than wall-valid's, which is what the second case shows."""
    import hashlib

    f = "wall"
    seed, salt = "5a" * 32, "0f" * 16
    digest = hashlib.sha256((seed + salt).encode()).hexdigest()
    base = next(c.record for c in CASES if c.id == "wall-valid")
    assert base is not None
    stored = {"scheme": "salasasa-sha256-v1", "hash": digest, "salt": salt, "round": 1}
    case(
        f,
        vary(base, "wall-commitment-stored", commitment=stored),
        """
        Valid: wall-valid with a published commitment and no revealed seed: nothing to check yet.""",
    )
    case(
        f,
        vary(base, "wall-commitment-wrong-seed", commitment={**stored, "seed": "11" * 32}),
        """
        The revealed seed does not hash (with the salt) to the published commitment.""",
        "TILE_COMMIT_SEED",
        twin="wall-commitment-stored",
    )
    case(
        f,
        vary(base, "wall-commitment-other-wall", commitment={**stored, "seed": seed}),
        """
        The seed is the committed one, but the wall it gives (salasasa-sha256-v1, hand 1) is not this record's.""",
        "TILE_COMMIT_WALL",
        twin="wall-commitment-stored",
    )


def _set(path: Sequence[str | int], value: Any) -> Callable[[Record], None]:
    def patch(rec: Record) -> None:
        node: Any = rec
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return patch


def _drop(*path: str | int) -> Callable[[Record], None]:
    def patch(rec: Record) -> None:
        node: Any = rec
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return patch


def schema_cases() -> None:
    f = "schema"
    base = _base()
    raw_case(
        f,
        "schema-cut-off",
        '{"format": "xzlog/1", "hand_id": "schema-cut-off",',
        """
        A line cut off in the middle of the object: not JSON.""",
        "SCHEMA_JSON",
        twin="play-three-winners",
    )
    raw_case(
        f,
        "schema-array",
        '["xzlog/1", "schema-array"]',
        """
        A JSON array, not an object.""",
        "SCHEMA_JSON",
        twin="play-three-winners",
    )
    case(
        f,
        vary(base, "schema-format-2", format="xzlog/2"),
        """
        A record of a later format version: rejected before anything else is read.""",
        "SCHEMA_FORMAT",
    )
    case(
        f,
        vary(base, "schema-format-missing", patch=_drop("format")),
        """
        No ``format`` field.""",
        "SCHEMA_FORMAT",
    )
    case(
        f,
        vary(base, "schema-no-players", patch=_drop("players")),
        """
        The required field ``players`` is missing.""",
        "SCHEMA_FIELD",
    )
    case(
        f,
        vary(base, "schema-unknown-field", patch=_set(["foo"], 1)),
        """
        A top-level field ``foo`` the format does not know (extensions are named ``x_*``).""",
        "SCHEMA_FIELD",
    )
    case(
        f,
        vary(base, "schema-no-deal-no-wall", patch=_drop("deal")),
        """
        Neither ``wall`` nor ``deal``: the starting hands are unknown.""",
        "SCHEMA_FIELD",
    )
    case(
        f,
        vary(base, "schema-dealer-4", dealer=4),
        """
        ``dealer`` is 4: seats are 0-3.""",
        "SCHEMA_TYPE",
    )
    case(
        f,
        vary(base, "schema-three-players", players=["p1", "p2", "p3"]),
        """
        Three players under chengdu, whose table seats four.""",
        "SCHEMA_SHAPE",
    )
    case(
        f,
        vary(base, "schema-hand-no-0", hand_no=0),
        """
        ``hand_no`` counts from 1.""",
        "SCHEMA_TYPE",
    )
    case(
        f,
        vary(base, "schema-wall-107", wall=wall_of(D1, 0, [])[:107]),
        """
        A wall of 107 tiles.""",
        "SCHEMA_TYPE",
    )
    case(
        f,
        vary(base, "schema-deal-12", deal=[D1[0], D1[1], D1[2], "123p456p789s234s"]),
        """
        Seat 3 is dealt 12 tiles: a starting hand holds 13 or 14 (the schema's bound; a dealer with 13 or
        another seat with 14 is a 相公 found by replay).""",
        "SCHEMA_TYPE",
    )
    case(
        f,
        vary(base, "schema-events-object", events={"0": {"t": "discard"}}),
        """
        ``events`` is an object, not a list.""",
        "SCHEMA_TYPE",
    )
    chow = {"t": "chow", "seat": 1, "tile": "8p", "from": 0}
    case(
        f,
        vary(base, "schema-event-chow", patch=_set(["events", 1], chow)),
        """An event of type ``chow``: Sichuan mahjong has no chow.""",
        "SCHEMA_EVENT",
    )
    case(
        f,
        vary(
            base,
            "schema-direct-kong-no-from",
            evs="0-8p 1h8p<0",
            patch=_set(["events", 1], {"t": "kong", "seat": 1, "tile": "8p", "kind": "direct"}),
        ),
        """
        A direct kong without ``from``.""",
        "SCHEMA_EVENT",
    )
    case(
        f,
        vary(
            base,
            "schema-concealed-kong-from",
            evs="0-8p 1h8p<0",
            patch=_set(["events", 1], {"t": "kong", "seat": 1, "tile": "1m", "kind": "concealed", "from": 1}),
        ),
        """A concealed kong with a ``from``.""",
        "SCHEMA_EVENT",
    )
    case(
        f,
        vary(base, "schema-event-extra-field", patch=_set(["events", 0, "note"], "tsumogiri")),
        """
        An event field ``note`` the format does not know.""",
        "SCHEMA_EVENT",
    )
    case(
        f,
        vary(base, "schema-hu-no-from", patch=_drop("events", 1, "from")),
        """
        A ``hu`` without ``from`` (null is required for a self-draw).""",
        "SCHEMA_EVENT",
    )
    case(
        f,
        vary(base, "schema-event-seat-4", patch=_set(["events", 0, "seat"], 4)),
        """
        An event by seat 4.""",
        "SCHEMA_EVENT",
    )
    case(
        f,
        vary(base, "schema-event-ms-negative", patch=_set(["events", 0, "ms"], -5)),
        """
        A negative decision time.""",
        "SCHEMA_EVENT",
    )
    case(
        f,
        vary(base, "schema-result-deltas-2", result={"payments": D1_RESULT["payments"], "deltas": [1, 2]}),
        """
        The claimed ``deltas`` hold two numbers: the claim is malformed and not compared, the replay itself
        is fine.""",
        "SCHEMA_RESULT",
    )
    case(
        f,
        vary(base, "schema-result-bad-reason", patch=_set(["result", "payments", 0, "reason"], "bonus")),
        """
        A claimed payment with the unknown reason ``bonus``.""",
        "SCHEMA_RESULT",
    )
    case(
        f,
        vary(base, "schema-result-payments-not-a-list", patch=_set(["result", "payments"], "all paid")),
        """
        A claimed result whose ``payments`` is a string (a list of payments, or left out or null when the
        source did not itemise them).""",
        "SCHEMA_RESULT",
    )
    case(
        f,
        vary(base, "schema-result-extra-field", patch=_set(["result", "wins", 0, "bonus"], 1)),
        """
        A claimed win with a field the format does not know.""",
        "SCHEMA_RESULT",
    )
    case(
        f,
        vary(base, "schema-result-win-empty", patch=_set(["result", "wins", 0], {"seat": 1, "event": 1})),
        """
        A claimed win with neither ``fan`` nor ``points``.""",
        "SCHEMA_RESULT",
    )
    case(
        f,
        vary(base, "ruleset-unknown-switch", ruleset={"profile": "chengdu", "cpa": 4}),
        """
        A misspelt switch (``cpa`` for ``cap``) is an error, never ignored.""",
        "RULESET_UNKNOWN",
    )
    case(
        f,
        vary(base, "ruleset-unknown-profile", ruleset="beijing"),
        """
        A profile that does not exist.""",
        "RULESET_UNKNOWN",
    )
    case(
        f,
        vary(base, "ruleset-bad-value", ruleset={"profile": "chengdu", "dian_gang_hua": "nobody"}),
        """
        A switch value outside its choices.""",
        "RULESET_UNKNOWN",
    )
    case(
        f,
        vary(base, "tile-notation-rank-0", patch=_set(["deal", 0, 0], "0m")),
        """
        ``0m`` in a dealt hand.""",
        "TILE_NOTATION",
    )
    case(
        f,
        vary(base, "tile-notation-honour", patch=_set(["events", 0, "tile"], "5z")),
        """
        ``5z`` in an event: Sichuan mahjong has no honours.""",
        "TILE_NOTATION",
    )
    case(
        f,
        vary(base, "tile-notation-capital", patch=_set(["deal", 1, 12], "8P")),
        """
        ``8P``: suit letters are lower case.""",
        "TILE_NOTATION",
    )

    def extend(rec: Record) -> None:
        rec["x_source"] = {"app": "demo", "version": 3}
        rec["events"][0]["x_auto"] = True
        rec["events"][0]["ms"] = 2100
        rec["result"]["x_currency"] = "points"
        rec["result"]["payments"][0]["x_note"] = "点炮"
        rec["result"]["wins"][0]["x_title"] = "平胡"

    ext = case(
        f,
        vary(
            base,
            "schema-extensions",
            patch=extend,
            session_id="s1",
            hand_no=1,
            table_id="t1",
            played_at="2026-11-01T20:15:00+08:00",
        ),
        """
        Valid: the optional fields, decision times and ``x_*`` extensions at the top, in an event, in the
        result, a payment and a win are all accepted and ignored.""",
    )
    case(
        f,
        vary(ext, "schema-played-at-not-a-time", played_at="2026-13-01 25:00"),
        """
        ``played_at`` is no date-time (month 13, hour 25): a warning; the hand is replayed and its claim checked,
        and it is stored with no time.""",
        "SCHEMA_TIME",
    )
    ex = record(
        "schema-exchange-extension",
        ruleset="app",
        deal=undo_exchange(D1, V_GIVEN["across"], "across"),
        exchange=("across", V_GIVEN["across"]),
        que="psmm",
        evs=V_EVENTS,
        result=V_RESULT,
    )
    ex["exchange"]["x_dice"] = 7
    case(
        f,
        ex,
        """
        Valid: an ``x_*`` extension inside ``exchange`` (app-exchange-across otherwise).""",
    )
    case(
        f,
        vary(
            base,
            "schema-wins-fan-only",
            result=claim("0>1=1hu@1 0>2=3hu@3 3>2=3hu@3 0>3=2hu@5", [-6, 1, 6, -1], None)
            | {
                "wins": [
                    {"seat": 1, "event": 1, "fan": 1},
                    {"seat": 2, "event": 3, "points": 2},
                    {"seat": 3, "event": 5, "fan": 1},
                ]
            },
        ),
        """Valid: claimed wins may give fan or points alone.""",
    )


def settle_cases() -> None:
    f = "settle"
    base = _base()
    pays = "0>1=1hu@1 0>2=3hu@3 3>2=3hu@3 0>3=2hu@5"
    case(
        f,
        vary(base, "score-fan-wrong", result=claim(pays, [-6, 1, 6, -1], "1@1:1f1p 2@3:3f2p 3@5:1f1p")),
        """
        Seat 2's 对对胡 is claimed at 3 fan (it is 2); its points and payments are right.""",
        "SCORE_FAN",
    )
    case(
        f,
        vary(base, "score-points-wrong", result=claim(pays, [-6, 1, 6, -1], "1@1:1f1p 2@3:2f4p 3@5:1f1p")),
        """
        Seat 2's win is claimed at 4 points (2 fan is 2 points).""",
        "SCORE_POINTS",
    )
    case(
        f,
        vary(base, "score-win-missing", result=claim(pays, [-6, 1, 6, -1], "1@1:1f1p 2@3:2f2p")),
        """
        The claimed wins leave out seat 3's self-draw at event 5.""",
        "SCORE_WIN_MISSING",
    )
    case(
        f,
        vary(base, "score-win-not-a-win", result=claim(pays, [-6, 1, 6, -1], "1@1:1f1p 2@2:2f2p 3@5:1f1p")),
        """
        The claimed wins put seat 2's win at event 2, which is its draw: that entry is not a win, and the
        win at event 3 has no entry.""",
        "SCORE_WIN_MISSING",
    )
    case(
        f,
        vary(base, "score-wins-omitted", result=claim(pays, [-6, 1, 6, -1], None)),
        """
        Valid: ``wins`` is optional.""",
    )
    case(
        f,
        vary(
            base,
            "settle-missing",
            result=claim("0>1=1hu@1 0>2=3hu@3 3>2=3hu@3", [-4, 1, 6, -3], "1@1:1f1p 2@3:2f2p 3@5:1f1p"),
        ),
        """
        The claim leaves out seat 0's payment for seat 3's self-draw (its deltas agree with its payments).""",
        "SETTLE_MISSING",
    )
    case(
        f,
        vary(base, "settle-extra", result=claim(pays + " 0>1=1kong@1", [-7, 2, 6, -1], "1@1:1f1p 2@3:2f2p 3@5:1f1p")),
        """The claim adds kong money for event 1, which is a win.""",
        "SETTLE_EXTRA",
    )
    case(
        f,
        vary(
            base,
            "settle-amount",
            result=claim("0>1=1hu@1 0>2=2hu@3 3>2=2hu@3 0>3=2hu@5", [-5, 1, 4, 0], "1@1:1f1p 2@3:2f2p 3@5:1f1p"),
        ),
        """
        Seat 2's self-draw is paid 2 by each payer: the points without 自摸加底 (2 + 1).""",
        "SETTLE_AMOUNT",
    )
    case(
        f,
        vary(
            base,
            "settle-payer",
            result=claim("3>1=1hu@1 0>2=3hu@3 3>2=3hu@3 0>3=2hu@5", [-5, 1, 6, -2], "1@1:1f1p 2@3:2f2p 3@5:1f1p"),
        ),
        """
        Seat 3 pays for seat 1's win, which seat 0 dealt in.""",
        "SETTLE_PAYER",
    )
    case(
        f,
        vary(base, "settle-delta", result=claim(None, [-5, 1, 6, -2], None)),
        """
        A claim of deltas alone (no itemised payments), and seat 0's and seat 3's are wrong.""",
        "SETTLE_DELTA",
    )
    case(
        f,
        vary(base, "settle-deltas-only", result=claim(None, [-6, 1, 6, -1], None)),
        """
        Valid: a claim of the deltas alone (``payments`` left out: not itemised), and they are right.""",
    )
    case(
        f,
        vary(base, "settle-deltas-null-payments", patch=_set(["result", "payments"], None)),
        """
        Valid: ``payments`` null is "not itemised" too; the claimed deltas are the base hand's, right.""",
    )
    case(
        f,
        vary(base, "settle-empty-payments", result=claim("", [-6, 1, 6, -1], None)),
        """
        An empty ``payments`` list is a claim that nothing was paid: the deltas say otherwise, and each
        computed payment is missing from it.""",
        "SETTLE_UNBALANCED",
        "SETTLE_MISSING",
        twin="settle-deltas-only",
    )
    case(
        f,
        vary(base, "settle-unbalanced", result=claim(pays, [-6, 1, 6, 0], "1@1:1f1p 2@3:2f2p 3@5:1f1p")),
        """
        The claimed deltas sum to 1.""",
        "SETTLE_UNBALANCED",
    )
    case(
        f,
        vary(base, "settle-deltas-disagree", result=claim(pays, [-5, 1, 6, -2], "1@1:1f1p 2@3:2f2p 3@5:1f1p")),
        """
        The claimed deltas sum to zero but are not the net of the claimed payments.""",
        "SETTLE_UNBALANCED",
    )
    case(
        f,
        vary(
            base,
            "settle-no-event-index",
            result=claim("0>1=1hu 0>2=3hu 3>2=3hu 0>3=2hu", [-6, 1, 6, -1], "1@1:1f1p 2@3:2f2p 3@5:1f1p"),
        ),
        """
        Valid: payments claimed without event indexes match the computed ones at any event.""",
    )


# E: hands played to the empty wall (黄庄). Seat 1 (111m 99m 333p 45p 789p) waits on 3p (2 fan), 6p and 9m
# (1 fan); seat 3 (111s 234s 567s 888s + 6p or 5p) on one tile; seat 2 (7777m ...) is far from ready and
# two-suited; the dealer holds three suits (花猪) to the end. Every copy of a tile a ready player waits on
# is in the hands, except where a case puts one at the end of the wall.
E1 = ["2345699m3666p369s", "111m99m333p45p789p", "2577778m134579s", "111234567888s6p"]
E_NO_WIN = "0>1=10hua_zhu 0>2=10hua_zhu 0>3=10hua_zhu 2>1=1cha_jiao 2>3=1cha_jiao"


def empty_wall_cases() -> None:
    f = "empty_wall"
    wall, evs = full_hand(E1, first="9s", front="2s2s", kong={2: "7m"})
    e1 = case(
        f,
        record(
            "wall-empty-hua-zhu-cha-jiao-tui-shui",
            wall=wall,
            evs=evs,
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 " + E_NO_WIN + " 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-30, 11, 8, 11],
                "",
            ),
        ),
        """
        Valid, a whole hand to the empty wall with nobody winning (黄庄); everybody discards the tile just
        drawn. Seat 2 declares a concealed kong of 7m on its first turn (2 from each other player). At the
        end, in order: 查花猪, the dealer still holds three suits and pays each other player 10 (Chengdu:
        满庄, 10 × base when uncapped); 查大叫, seat 2 is not ready and pays each ready player the minimum
        they could win (Chengdu): 1 to seat 1 (its waits are worth 2, 1 and 1) and 1 to seat 3; the pig
        pays no 查大叫; 退税, seat 2, not ready, returns its kong money.""",
    )
    case(
        f,
        record(
            "wall-empty-app",
            wall=wall,
            evs=evs,
            que="sspm",
            ruleset={"profile": "app", "void_discard_first": False},
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=16hua_zhu 0>2=16hua_zhu 0>3=16hua_zhu 2>1=2cha_jiao "
                "2>3=1cha_jiao 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-48, 18, 13, 17],
                "",
            ),
        ),
        """
        Valid: the same hand under the app profile (void-first switched off so the dealer may stay a pig):
        the pig pays 16 × base to each non-pig, and 查大叫 pays the maximum, 2 to seat 1 (its 3p wait makes
        a 根).""",
    )
    case(
        f,
        vary(
            e1,
            "wall-empty-capped",
            ruleset={"profile": "chengdu", "cap": 3},
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=4hua_zhu 0>2=4hua_zhu 0>3=4hua_zhu "
                "2>1=1cha_jiao 2>3=1cha_jiao 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-12, 5, 2, 5],
                "",
            ),
        ),
        """
        Valid: the same Chengdu hand with a 3-fan cap: the pig pays 满庄, the capped value of a hand (4).""",
    )
    case(
        f,
        vary(
            e1,
            "wall-empty-claimed-max",
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=10hua_zhu 0>2=10hua_zhu 0>3=10hua_zhu 2>1=2cha_jiao "
                "2>3=1cha_jiao 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-30, 12, 7, 11],
                "",
            ),
        ),
        """
        The Chengdu hand claimed with 查大叫 at the maximum: seat 2 owes seat 1 the minimum, 1.""",
        "SETTLE_AMOUNT",
    )
    case(
        f,
        vary(
            e1,
            "wall-empty-no-refund-claimed",
            result=claim("0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 " + E_NO_WIN, [-32, 9, 14, 9], ""),
        ),
        """
        The claim lets seat 2 keep its kong money although it is not ready at the end (退税).""",
        "SETTLE_MISSING",
    )
    case(
        f,
        vary(e1, "wall-empty-draw-after-end", evs=evs + " 3+1m"),
        """
        A draw after the last wall tile.""",
        "TURN_AFTER_END",
    )
    case(
        f,
        vary(e1, "wall-empty-kong-at-end", evs=evs + " 3c1s"),
        """
        A kong after the last discard, with no wall left for a replacement.""",
        "TURN_AFTER_END",
    )

    # 海底 on the discard after the last tile: seat 3 draws the last 9m and discards it; seat 1 wins on it.
    e4 = ["2345689m3p666p369s", E1[1], E1[2], E1[3]]
    wall, evs = full_hand(e4, first="9s", last="9m", finish="ron1")
    hd = case(
        f,
        record(
            "wall-empty-hai-di-discard",
            wall=wall,
            evs=evs,
            result=claim(
                f"3>1=2hu@{len(evs.split()) - 1} 0>2=10hua_zhu 0>3=10hua_zhu 2>3=1cha_jiao",
                [-20, 2, 9, 9],
                f"1@{len(evs.split()) - 1}:2f2p",
            ),
        ),
        """
        Valid 海底 on a discard: the last wall tile, 9m, goes to seat 3, who discards it; seat 1 wins on it,
        平胡 1 + 海底 1 = 2 fan, paid by seat 3. The wall is empty with three players still in: the dealer (a
        pig) pays seats 2 and 3, seat 2 (not ready) pays ready seat 3 1.""",
    )
    case(
        f,
        vary(
            hd,
            "wall-empty-pig-pays-everyone",
            ruleset={"profile": "chengdu", "hua_zhu_payees": "everyone"},
            result=claim(
                f"3>1=2hu@{len(evs.split()) - 1} 0>1=10hua_zhu 0>2=10hua_zhu 0>3=10hua_zhu 2>3=1cha_jiao",
                [-30, 12, 9, 9],
                f"1@{len(evs.split()) - 1}:2f2p",
            ),
        ),
        """
        Valid where a flower pig pays every other player, winners and other pigs alike (hua_zhu_payees =
        everyone, some engines' rule): the dealer also pays seat 1, who won on the last discard.""",
    )
    case(
        f,
        vary(
            hd,
            "wall-empty-pig-pays-a-winner-under-chengdu",
            result=claim(
                f"3>1=2hu@{len(evs.split()) - 1} 0>1=10hua_zhu 0>2=10hua_zhu 0>3=10hua_zhu 2>3=1cha_jiao",
                [-30, 12, 9, 9],
                f"1@{len(evs.split()) - 1}:2f2p",
            ),
        ),
        """
        The claim of wall-empty-pig-pays-everyone under chengdu: "花猪无条件包还在场的麻友满庄", the players still at
        the table; seat 1 has won.""",
        "SETTLE_EXTRA",
    )
    case(
        f,
        vary(hd, "last-four-pass", evs=evs.rsplit(" ", 1)[0], result=claim(E_NO_WIN, [-30, 11, 8, 11], "")),
        """
        最后四张能胡必须胡: seat 1 lets the last discard (9m) go although it wins on it. The pass is reported
        and the hand is settled as it was played (the claim is right for that).""",
        "CLAIM_COMPULSORY_PASS",
    )

    # 海底 by self-draw: seat 3 waits on 5p alone and draws the last tile, a 5p.
    e3 = ["2346m99m35p6666p39s", E1[1], E1[2], "111234567888s5p"]
    wall, evs = full_hand(e3, first="9s", last="5p", finish="hu")
    n = len(evs.split()) - 1
    hs = case(
        f,
        record(
            "wall-empty-hai-di-self-draw",
            wall=wall,
            evs=evs,
            result=claim(
                f"0>3=3hu@{n} 1>3=3hu@{n} 2>3=3hu@{n} 0>1=10hua_zhu 0>2=10hua_zhu 2>1=1cha_jiao",
                [-23, 8, 6, 9],
                f"3@{n}:2f2p",
            ),
        ),
        """
        Valid 海底 by self-draw: seat 3 draws the last tile, 5p, and wins: 平胡 1 + 海底 1 = 2 fan, 2 + 1
        from each other player. Three players are left at the empty wall: the pig pays seats 1 and 2 10
        each, seat 2 pays ready seat 1 1.""",
    )
    case(
        f,
        vary(
            hs,
            "last-four-self-draw-pass",
            evs=evs.rsplit(" ", 1)[0] + " 3-5p",
            result=claim(E_NO_WIN, [-30, 11, 8, 11], ""),
        ),
        """
        最后四张能胡必须胡: seat 3 draws the last tile, which completes its hand, and discards it instead of
        winning ("当这张牌出现时，叫的玩家只能胡牌").""",
        "CLAIM_COMPULSORY_PASS",
    )

    # 最后四张 and 过手胡 together: seat 1 lets seat 3's 6p go with four tiles left (allowed), then seat 0
    # discards 9m from the last four; seat 1 may not win on it (过手胡, same fan, no draw in between), so
    # letting it go is no violation of 最后四张能胡必须胡.
    e5 = ["23458m9m3p55p666p39s", E1[1], E1[2], "111234567888s5p"]
    wall, evs = full_hand(e5, first="9s", last="6p9m1p1p2p")
    case(
        f,
        record("last-four-pass-barred", wall=wall, evs=evs, result=claim(E_NO_WIN, [-30, 11, 8, 11], "")),
        """
        Valid. Seat 1 lets seat 3's 6p go with four tiles left in the wall (the last four have not been
        reached), then seat 0 draws 9m from the last four and discards it: seat 1 could not win on it (过手胡,
        1 fan again before its own next draw), so passing it is no violation of 最后四张能胡必须胡.""",
    )


# ================================================================================================ sessions
def _in_session(rec: Record, hand_id: str, session: str, hand_no: int, **fields: Any) -> Record:
    out = copy.deepcopy(rec)
    out["hand_id"] = hand_id
    out["session_id"] = session
    out["hand_no"] = hand_no
    out.update(fields)
    return out


def session_cases() -> None:
    a = record("a", deal=D1, evs=D1_EVENTS, result=D1_RESULT)  # dealer 0, first winner seat 1
    b, c = rotate(a, 1, "b"), rotate(a, 2, "c")  # dealers 1 and 2, first winners seats 2 and 3
    yipao = next(x.record for x in CASES if x.id == "play-yipao-duoxiang")  # 一炮多响 on the dealer's discard
    no_win = next(x.record for x in CASES if x.id == "wall-empty-hua-zhu-cha-jiao-tui-shui")  # dealer 0, 黄庄
    assert yipao is not None and no_win is not None

    def session(case_id: str, doc: str, hands: Sequence[tuple[Record, int] | Record], *expect: tuple[int, str]) -> None:
        records = []
        for i, item in enumerate(hands):
            rec, no = item if isinstance(item, tuple) else (item, i + 1)
            records.append(rec if rec.get("session_id") else _in_session(rec, f"{case_id}-h{i + 1}", case_id, no))
        SESSIONS.append(
            SessionCase(
                case_id,
                " ".join(doc.split()),
                frozenset((records[i]["hand_id"], code) for i, code in expect),
                tuple(records),
            )
        )

    session(
        "session-valid",
        """
        Valid: each hand's dealer is the previous hand's first winner (seat 1, then seat 2).""",
        [a, b, c],
    )
    session(
        "session-valid-special-dealers",
        """
        Valid: after a hand nobody won (黄庄) the dealer stays; after 一炮多响 on the first win the discarder
        deals; then the first winner.""",
        [no_win, yipao, a, b],
    )
    nearest = copy.deepcopy(yipao)
    nearest["ruleset"] = {"profile": "chengdu", "dealer_next": "nearest_winner"}
    session(
        "session-valid-nearest-winner",
        """
        Valid under Mahjong Soul's dealer rule (dealer_next = nearest_winner): after 一炮多响 on the first win,
        the winner nearest after the discarder (seat 1) deals next, not the discarder.""",
        [nearest, b],
    )
    session(
        "session-dealer",
        """
        Hand 2 is dealt by seat 2; hand 1's first winner was seat 1.""",
        [a, c],
        (1, "SESSION_DEALER"),
    )
    session(
        "session-dealer-yipao",
        """
        After 一炮多响 on the first win the discarder (seat 0) deals next, not the first winner in turn order
        (seat 1).""",
        [yipao, b],
        (1, "SESSION_DEALER"),
    )
    # 普通版 (chengdu_putong, dealer_next = dealt_in): seat 2 wins on the dealer's 5p, so the dealer, who dealt
    # in, deals again ("点炮者坐庄", seed 003)
    ordinary = record(
        "o",
        deal=DOUBLE_5P,
        ruleset="chengdu_putong",
        evs="0-5p 2h5p<0",
        result=claim("0>2=1hu@1", [-1, 0, 1, 0], "2@1:1f1p"),
    )
    session(
        "session-ordinary-dealt-in-deals",
        """
        Valid 普通版: the player who dealt in to the first win (the dealer, seat 0) deals the next hand.""",
        [ordinary, ordinary],
    )
    session(
        "session-ordinary-dealer",
        """
        In 普通版 hand 2 is dealt by the winner of hand 1 (seat 2), as in 血战到底; the rule makes the player
        who dealt in (seat 0) the dealer.""",
        [ordinary, rotate(ordinary, 2, "o2")],
        (1, "SESSION_DEALER"),
    )
    session(
        "session-duplicate-hand",
        """
        The same hand_id in two sessions.""",
        [a, _in_session(b, "session-duplicate-hand-h1", "other", 1)],
        (1, "SESSION_DUPLICATE_HAND"),
    )
    session(
        "session-gap",
        """
        Hands 1, 2 and 4: hand 3 is missing (a warning).""",
        [(a, 1), (b, 2), (c, 4)],
        (2, "SESSION_HAND_GAP"),
    )
    session(
        "session-repeat",
        """
        Two different hands numbered 2.""",
        [(a, 1), (b, 2), (b, 2)],
        (2, "SESSION_HAND_REPEAT"),
    )
    session(
        "session-players",
        """
        Seat 3's player changes between hands 1 and 2 (a warning).""",
        [a, vary(b, "b", players=["p1", "p2", "p3", "p9"])],
        (1, "SESSION_PLAYERS"),
    )


# ================================================================================================ tables
# 一炮多响 on the dealer's first discard: seats 1 and 2 both wait on 5p (seat 1: 清一色 with 根 of 4p; seat 2:
# 平胡 on 567p).
DOUBLE_5P = ("123456789m1119s5p", "123p444p678p99p46p", "123m456m789m55p67p", "222s333s444s555s6s")
# Three players, 筒 and 条 (三人两房): seat 1 waits on 5s (清一色 with 根 of 4s), seat 2 on 6p (清对).
THREE = ("123456789p1119s5s", "123s444s678s99s46s", "222p333p444p555p6p")
THREE_PLAYERS = ["p1", "p2", "p3"]
# Four players, 筒 and 条 (四人两色): 一炮多响 on the dealer's 5p, then seat 3 draws 8s (清对).
FOUR_PS = ("123456789s1119p5p", "123p444p678p99p46p", "222s333s444s55p67p", "555s666s777s88s99s")


FLOW = ("123456789m1119s5p", "123p444p678p99p46p", "123m456m789m55p67p", "147m258s369s1m4m7m9m")


def flow_hand() -> tuple[list[str], str]:
    """A whole 血流成河 hand to the empty wall (dealer 0, the FLOW deal): seat 1 wins on the dealer's 5p and
    again on the last 5p, its first draw; everyone else discards what they draw. The three other 8p (seat
    2's wait) and 9s (the dealer's) come early, so nobody passes a win in the last four tiles."""
    front = tiles("8p8p8p5p9s9s")
    rest = Counter({t: 4 for t in TILES})
    rest.subtract(t for h in FLOW for t in tiles(h))
    rest.subtract(front)
    middle = sorted(
        rest.elements(), key=lambda t: (int(t[0]) * 7 + "mps".index(t[1]) * 3) % 27 * 10 + "mps".index(t[1])
    )
    tail = front + middle
    assert len(tail) == 55, len(tail)
    out = ["0-5p", "1h5p<0"]
    seat = 1
    for drawn in tail:
        seat = (seat + 1) % 4
        out.append(f"{seat}+{drawn}")
        out.append(f"{seat}h{drawn}" if (seat, drawn) == (1, "5p") else f"{seat}-{drawn}")
    return wall_of(FLOW, 0, tail), " ".join(out)


def table_cases() -> None:
    f = "table"
    ordinary = case(
        f,
        record(
            "table-ordinary-yipao-ends",
            deal=DOUBLE_5P,
            ruleset="chengdu_putong",
            evs="0-5p 1h5p<0 2h5p<0",
            result=claim("0>1=8hu@1 0>2=1hu@2", [-9, 8, 1, 0], "1@1:4f8p 2@2:1f1p"),
        ),
        """
        Valid 普通版 (chengdu_putong): the hand ends with the first win, and 一炮多响 ends it with both winners on
        the dealer's discard (seat 1: 清一色 3 + 根 1 = 4 fan, 8 points; seat 2: 平胡 1). Nobody draws again.""",
    )
    case(
        f,
        vary(ordinary, "table-ordinary-plays-on", evs="0-5p 1h5p<0 2h5p<0 3+7s"),
        """
        The same hand goes on after the wins, as it would in 血战到底: in 普通版 the hand is over.""",
        "TURN_AFTER_END",
    )
    case(
        f,
        record(
            "table-ordinary-self-draw-ends",
            deal=DOUBLE_5P,
            ruleset="chengdu_putong",
            evs="0-5p 1+5p 1h5p",
            result=claim("0>1=9hu@2 2>1=9hu@2 3>1=9hu@2", [-9, 27, -9, -9], "1@2:4f8p"),
        ),
        """
        Valid 普通版: seats 1 and 2 let the dealer's 5p go; seat 1 draws the last 5p and wins by self-draw
        (4 fan, 8 points + 1 base from each of the three others). The self-draw ends the hand.""",
    )
    case(
        f,
        vary(ordinary, "table-ordinary-claimed-as-blood-battle", ruleset="chengdu"),
        """
        The same record under blood-battle rules (chengdu): two wins do not end the hand, and the record stops
        while the two players left still play.""",
        "TURN_INCOMPLETE",
        twin="table-ordinary-yipao-ends",
    )
    three = case(
        f,
        record(
            "table-three-players-72",
            wall=wall_of(THREE, 0, ["6p"], suits="ps"),
            ruleset="sanren_liangfang",
            evs="0-5s 1h5s<0 2+6p 2h6p",
            players=THREE_PLAYERS,
            result=claim("0>1=8hu@1 0>2=9hu@3", [-17, 8, 9], "1@1:4f8p 2@3:4f8p"),
        ),
        """
        Valid three-player hand with 筒 and 条 (sanren_liangfang): a 72-tile wall, 13 tiles each and one more
        for the dealer, 32 to draw. Seat 1 wins on the dealer's 5s (清一色 3 + 根 1 = 4 fan, 8 points); seat 2
        draws 6p and wins by self-draw (清一色 + 对对胡 = 4 fan, 8 + 1 base, paid by the one player still in).
        Two winners at three players end the blood battle.""",
    )
    case(
        f,
        vary(three, "table-three-players-fourth-seat", players=[*THREE_PLAYERS, "p4"]),
        """
        The same hand with four players named: the sanren_liangfang table seats three.""",
        "SCHEMA_SHAPE",
    )
    case(
        f,
        vary(three, "table-three-players-108-wall", wall=wall_of((*THREE, "1m"), 0, ["6p"])[:108]),
        """
        The same hand with a 108-tile wall of three suits: the table plays 72 tiles of 筒 and 条.""",
        "SCHEMA_SHAPE",
    )
    case(
        f,
        record(
            "table-four-players-two-suits",
            wall=wall_of(FOUR_PS, 0, ["8s"], suits="ps"),
            ruleset="siren_liangse",
            evs="0-5p 1h5p<0 2h5p<0 3+8s 3h8s",
            result=claim("0>1=8hu@1 0>2=1hu@2 0>3=9hu@4", [-18, 8, 1, 9], "1@1:4f8p 2@2:1f1p 3@4:4f8p"),
        ),
        """
        Valid four-player hand with 筒 and 条 (siren_liangse): a 72-tile wall, 19 tiles to draw after the
        deal. 一炮多响 on the dealer's 5p (seat 1: 清一色 + 根 = 4 fan; seat 2: 平胡), then seat 3 draws 8s and
        wins by self-draw (清一色 + 对对胡 = 4 fan, 8 + 1 base from the dealer, the one player still in): the
        third winner ends the hand.""",
    )
    wall, evs = flow_hand()
    flow = case(
        f,
        record(
            "table-blood-flow-wins-twice",
            wall=wall,
            ruleset="xueliu",
            evs=evs,
            result=claim(
                "0>1=8hu@1 0>1=9hu@9 2>1=9hu@9 3>1=9hu@9 3>0=1cha_jiao 3>2=1cha_jiao",
                [-16, 35, -8, -11],
                "1@1:4f8p 1@9:4f8p",
            ),
        ),
        """
        Valid 血流成河 (xueliu): seat 1 wins on the dealer's 5p (清一色 + 根 = 4 fan, 8 points) and stays in
        with its hand locked; it draws the last 5p and wins again by self-draw (8 + 1 base from each of the
        three others: winners stay in and pay too). Everybody then discards what they draw to the empty wall,
        where the players who never won are checked: seat 3, not ready, pays 查大叫 to the dealer and seat 2
        (平胡 1 each); seat 1, a winner, takes no part.""",
    )
    case(
        f,
        vary(flow, "table-blood-flow-locked-hand", evs=evs.replace("1+5p 1h5p", "1+5p 1-9p", 1)),
        """
        The same hand, but seat 1 keeps the 5p it drew and discards a 9p: a winner's hand is locked in
        血流成河, it discards what it draws.""",
        "TURN_AFTER_WIN",
    )
    dealt_three = case(
        f,
        record(
            "table-three-players-dealt",
            deal=THREE,
            ruleset="sanren_liangfang",
            evs="0-5s 1h5s<0 2+6p 2h6p",
            players=THREE_PLAYERS,
            result=claim("0>1=8hu@1 0>2=9hu@3", [-17, 8, 9], "1@1:4f8p 2@3:4f8p"),
        ),
        """
        Valid: the same three-player hand recorded with its deal and no wall.""",
    )
    case(
        f,
        vary(dealt_three, "table-suit-not-in-play", evs="0-5s 1h5s<0 2+5m"),
        """
        Seat 2 draws a 5m at a table that plays 筒 and 条 only.""",
        "TILE_SUIT",
    )


# R: other rule sets. LAST: the dealer discards 9s and waits on 7p alone; seat 2 holds 55p and pongs the last
# discard, a 5p, then discards 7p; seat 1 (AP on 8p or 0 fan on 7p) and seat 3 (AP on 6p, or 5p) stay ready.
LAST = ("123m456m789m111p7p9s", "222m333m444m666p8p", "55p777m888m999m7p1m", "111s222s333s444p6p")
# PATTERNS: seat 1 waits on 9m (带幺九) and 6m; seats 2 (将对, on 5s) and 3 (on 7s) each hold four pungs and
# wait on one tile alone (a Golden Wait under single_wait_all_pungs).
PATTERN_HANDS = ("34669m234678p346s", "123m789m123s789s9m", "222m555m888m222s5s", "111p555p999p111s7s")
GOLDEN = {"profile": "chengdu", "jin_gou_diao": "single_wait_all_pungs", "jin_gou_diao_fan": 1}
# HEAVENLY: the dealer kongs 1m on its first turn and wins on the replacement 9p; seats 1 and 2 self-draw next.
HEAVENLY = ("1111m234m567m88p99p", "123s456s789s2p3p4p5s", "123p456p789s1s2s3s4s", "222m333m444m666p7p")
# E_KONG: E1 with seat 2 holding 7777m 123s 456s 789s: after its concealed kong it waits on 2s alone (ready).
E_KONG = [E1[0], E1[1], "7777m123456789s", E1[3]]
# DOUBLE_5P with the dealer left holding three suits (万, 条 and 1p) once it has discarded 5p.
PIG_DEALER_5P = ("123456789m119s1p5p", DOUBLE_5P[1], DOUBLE_5P[2], DOUBLE_5P[3])


def ruleset_cases() -> None:
    f = "rulesets"
    sbr = case(
        f,
        record(
            "sbr-fan-base-zero",
            deal=DOUBLE_5P,
            ruleset="sbr",
            que="pmsm",
            evs="0-5p 1h5p<0 2h5p<0 3+6s 3h6s",
            result=claim("0>1=8hu@1 0>2=1hu@2 0>3=9hu@4", [-18, 8, 1, 9], "1@1:3f8p 2@2:0f1p 3@4:3f8p"),
        ),
        """
        Valid SBR (sbr: a plain hand is 0 fan, 2^fan points, limit 3): seats 1 and 2 win on the dealer's 5p,
        seat 1 with Full Flush 2 + Root 1 (the four 4p) = 3 fan, 8 points, seat 2 with nothing, 0 fan, 1 point;
        seat 3 self-draws 6s, Full Flush 2 + All Pungs 1 = 3 fan, 8 points + 1 from the only player still in.""",
    )
    case(
        f,
        vary(sbr, "sbr-fan-claimed-in-chengdu-count", ruleset="chengdu"),
        """
        The same claim read under chengdu, whose plain hand is 1 fan: the points agree, each fan is one short.""",
        "SCORE_FAN",
    )
    sal = case(
        f,
        vary(sbr, "salasasa-fan-as-sbr", ruleset="salasasa"),
        """
        Valid under the Salasasa platform's rules (salasasa) too: 平和 alone is 0 fan and 1 point, 清一色 2, 根 1,
        大对子 1, 2^min(fan, 3) points, a self-draw 1 more from each player still in: the same claim as SBR's.""",
    )
    case(
        f,
        vary(sal, "salasasa-que-unrecorded", patch=lambda r: (r.pop("que"), r.update(unrecorded=["que"]))),
        """
        Valid: the same hand from a record that did not store 定缺 ("unrecorded": ["que"]): the profile declares
        void suits, but the record says they are unknown, so the checks that need them are listed as not checked
        (no TILE_VOID).""",
    )
    case(
        f,
        vary(sal, "salasasa-que-missing", patch=lambda r: r.pop("que")),
        """
        The same hand with no que and no word that it was not recorded: the profile declares 定缺.""",
        "TILE_VOID",
    )
    wall, evs = full_hand(E1, first="9s", front="2s2s", kong={2: "7m"})
    wall_end = case(
        f,
        record(
            "sbr-wall-end-void-penalty-to-the-pot",
            wall=wall,
            evs=evs,
            que="sspm",
            ruleset="sbr",
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>pot=48penalty 0>1=2cha_jiao 0>3=1cha_jiao 2>1=2cha_jiao "
                "2>3=1cha_jiao 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-51, 4, -3, 2],
                "",
            ),
        ),
        """
        Valid SBR, the empty-wall hand of empty_wall.jsonl: the dealer (void 条) still holds 3s and 6s at the end
        and pays 48 that nobody receives (the deltas sum to −48), and counts as not ready; seats 0 and 2 pay the
        ready players their theoretical maximum, 2 to seat 1 (3p makes a Root) and 1 to seat 3; seat 2, not
        ready, loses its kong money.""",
    )
    case(
        f,
        vary(
            wall_end,
            "sbr-wall-end-pot-not-claimed",
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=2cha_jiao 0>3=1cha_jiao 2>1=2cha_jiao 2>3=1cha_jiao "
                "2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-3, 4, -3, 2],
                "",
            ),
        ),
        """
        The claim leaves out the void penalty, and its deltas sum to zero.""",
        "SETTLE_MISSING",
    )
    case(
        f,
        vary(
            wall_end,
            "sbr-wall-end-penalty-paid-to-a-player",
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=48penalty 0>1=2cha_jiao 0>3=1cha_jiao 2>1=2cha_jiao "
                "2>3=1cha_jiao 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-51, 52, -3, 2],
                "",
            ),
        ),
        """
        The void penalty claimed as paid to seat 1: under SBR it leaves the table.""",
        "SETTLE_MISSING",
        "SETTLE_EXTRA",
    )
    case(
        f,
        vary(
            wall_end,
            "sbr-void-kong-and-void-tiles",
            que="ssmm",
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 2>pot=48penalty@4 0>pot=48penalty 2>pot=48penalty "
                "0>1=2cha_jiao 0>3=1cha_jiao 2>1=2cha_jiao 2>3=1cha_jiao 2>0=2tui_shui 2>1=2tui_shui "
                "2>3=2tui_shui",
                [-51, 4, -99, 2],
                "",
            ),
        ),
        """
        Valid SBR: seat 2 declares 万 void and still declares its concealed kong of 7m, legal at a penalty of 48
        to the pot (and still paid as a kong); at the end it still holds 258m, void tiles: another 48.""",
    )
    case(
        f,
        vary(wall_end, "sbr-void-kong-forbidden", que="ssmm", ruleset={"profile": "sbr", "void_meld": "forbid"}),
        """
        The same kong where a void-suit meld is forbidden (void_meld = forbid, as in chengdu).""",
        "CLAIM_NOT_ALLOWED",
        twin="sbr-void-kong-and-void-tiles",
    )
    wall, evs = full_hand(LAST, first="9s", front="7p7p", last="5p")
    chain = case(
        f,
        record(
            "sbr-pong-on-the-last-discard",
            wall=wall,
            evs=evs + " 2p5p<3 2-7p 0h7p<2",
            que="sssm",
            ruleset="sbr",
            result=claim("2>0=2hu@113", [2, 0, -2, 0], "0@113:1f2p"),
        ),
        """
        Valid SBR: seat 3 draws the last tile and discards 5p; seat 2 pongs it (Hu or Pung is allowed on the
        last discard) and discards 7p, the new last discard, on which the dealer wins: Under the Sea, 1 fan,
        2 points. The three players left are all ready: nothing more is paid.""",
    )
    case(
        f,
        vary(chain, "sbr-pong-on-the-last-discard-refused", ruleset={"profile": "sbr", "call_on_last_discard": "none"}),
        """
        The same pong where no call is allowed on the last discard (call_on_last_discard = none).""",
        "CLAIM_NOT_ALLOWED",
    )
    case(
        f,
        record("rules-no-robbing", deal=KD, evs=KD_EVENTS, ruleset={"profile": "chengdu", "rob_kong": False}),
        """
        claims.jsonl's 抢杠 hand where robbing is off (rob_kong = false, an SBR house option): the added kong
        stands at once and seat 2's win on its tile is refused.""",
        "CLAIM_NOT_ALLOWED",
        twin="claim-rob-added-kong",
    )
    wall, evs = full_hand(E1, first="9s", front="2s2s", kong={2: "7m"})
    case(
        f,
        record(
            "rules-pig-pays-ready-value-or-four-fan",
            wall=wall,
            evs=evs,
            ruleset={
                "profile": "chengdu",
                "hua_zhu_amount": "cha_jiao_or_fan",
                "hua_zhu_min_fan": 4,
                "hua_zhu_payees": "all_others",
            },
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=8hua_zhu 0>2=8hua_zhu 0>3=8hua_zhu 2>1=1cha_jiao "
                "2>3=1cha_jiao 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui",
                [-24, 9, 6, 9],
                "",
            ),
        ),
        """
        Valid: empty_wall.jsonl's first hand with Mahjong Soul's pig rule on Chengdu: the dealer, a pig, pays
        every other player still in the larger of their 查大叫 value (1 each for seats 1 and 3, at the minimum;
        seat 2 is not ready) and a 4-fan hand, 8.""",
    )
    three_hu = case(
        f,
        record(
            "rules-pig-checked-at-three-hu",
            deal=PIG_DEALER_5P,
            ruleset={"profile": "chengdu", "hua_zhu_at_three_hu": True, "hua_zhu_payees": "non_pigs"},
            evs="0-5p 1h5p<0 2h5p<0 3+6s 3h6s",
            result=claim(
                "0>1=8hu@1 0>2=1hu@2 0>3=9hu@4 0>1=10hua_zhu 0>2=10hua_zhu 0>3=10hua_zhu",
                [-48, 18, 11, 19],
                "1@1:4f8p 2@2:1f1p 3@4:4f8p",
            ),
        ),
        """
        Valid where the pig check also runs when three have won (hua_zhu_at_three_hu) and a pig pays every
        non-pig, winners too: the dealer is left holding 万, 条 and 1p and pays each winner 10 × base (uncapped).
        Seat 1: 清一色 + 根 = 4 fan; seat 2: 平胡; seat 3 self-draws 清对, 8 + 1.""",
    )
    case(
        f,
        vary(three_hu, "rules-pig-not-checked-at-three-hu", ruleset="chengdu"),
        """
        The same claim under chengdu: a hand ended by its third winner has no 查花猪.""",
        "SETTLE_EXTRA",
    )
    patterns = case(
        f,
        record(
            "rules-terminals-258-golden-wait",
            deal=PATTERN_HANDS,
            ruleset=GOLDEN,
            evs="0-9m 1h9m<0 2+5s 2h5s 3+7s 3h7s",
            result=claim("0>1=4hu@1 0>2=17hu@3 3>2=17hu@3 0>3=5hu@5", [-26, 4, 34, -12], "1@1:3f4p 2@3:5f16p 3@5:3f4p"),
        ),
        """
        Valid, Chengdu with SBR's Golden Wait (jin_gou_diao = single_wait_all_pungs, +1): seat 1 wins 带幺九 (1 + 2
        = 3 fan, 4) on the dealer's 9m; seat 2, four concealed pungs waiting on 5s alone, self-draws 将对 with a
        Golden Wait (1 + 对对胡 1 + 2 + 1 = 5 fan, 16 + 1 from each of the two still in); seat 3, four pungs
        waiting on 7s alone, self-draws it: 1 + 对对胡 1 + 金钩钓 1 = 3 fan, 4 + 1.""",
    )
    case(
        f,
        vary(patterns, "rules-golden-wait-needs-four-melds", ruleset={"profile": "chengdu", "jin_gou_diao_fan": 1}),
        """
        The same claim where 金钩钓 needs four melds (exposed_melds): the concealed pungs of seats 2 and 3 are no
        Golden Wait.""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )
    case(
        f,
        vary(patterns, "rules-no-terminals-no-258", ruleset={**GOLDEN, "dai_yao_jiu_fan": 0, "jiang_dui_fan": 0}),
        """
        The same claim where 带幺九 and 将对 add nothing (SBR has neither): seat 1 is a plain hand, seat 2 all
        pungs.""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )
    heavenly = {"profile": "chengdu", "heavenly": "fixed", "heavenly_fan": 6}
    kong_heavenly = case(
        f,
        record(
            "rules-heavenly-after-a-kong",
            deal=HEAVENLY,
            ruleset={**heavenly, "heavenly_after_kong": True},
            evs="0c1m 0+9p 0h9p 1+5s 1h5s 2+4s 2h4s",
            result=claim(
                "1>0=2kong@0 2>0=2kong@0 3>0=2kong@0 1>0=33hu@2 2>0=33hu@2 3>0=33hu@2 2>1=2hu@4 3>1=2hu@4 3>2=2hu@6",
                [105, -31, -35, -39],
                "0@2:6f32p 1@4:1f1p 2@6:1f1p",
            ),
        ),
        """
        Valid where 天胡 (a fixed 6 fan here) also counts a win on the replacement after the dealer's first-turn
        concealed kong (heavenly_after_kong): 32 + 1 from each of the three; seats 1 and 2 then self-draw plain
        hands (no 地胡: the kong came before).""",
    )
    case(
        f,
        vary(kong_heavenly, "rules-no-heavenly-after-a-kong", ruleset=heavenly),
        """
        The same claim where a kong spoils 天胡: the dealer's win is 杠上花, 平胡 1 + 根 1 + 杠上花 1 = 3 fan.""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )
    wall, evs = full_hand(E_KONG, first="9s", front="2s2s", kong={2: "7m"})
    kong_ready = case(
        f,
        record(
            "rules-ready-value-counts-the-kong",
            wall=wall,
            evs=evs,
            ruleset={"profile": "chengdu", "hua_zhu_pays_cha_jiao": True},
            result=claim(
                "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=10hua_zhu 0>2=10hua_zhu 0>3=10hua_zhu 0>1=1cha_jiao "
                "0>2=2cha_jiao 0>3=1cha_jiao",
                [-36, 9, 18, 9],
                "",
            ),
        ),
        """
        Valid, empty_wall.jsonl's hand with seat 2 ready after its concealed kong of 7m (waiting on 2s alone), and
        a pig that also pays 查大叫 (hua_zhu_pays_cha_jiao): seat 2's ready hand counts its kong as a 根, 平胡 1 +
        根 1 = 2 fan, 2; seats 1 and 3 are worth 1 at their cheapest wait. Ready, seat 2 keeps its kong money.""",
    )
    case(
        f,
        vary(
            kong_ready,
            "rules-ready-value-without-the-kong",
            ruleset={"profile": "chengdu", "hua_zhu_pays_cha_jiao": True, "cha_jiao_kong_fan": False},
        ),
        """
        The same claim where the ready value leaves declared kongs out (cha_jiao_kong_fan = false, SBR's worked
        example): seat 2's hand is worth 1.""",
        "SETTLE_AMOUNT",
    )
    soul = case(
        f,
        record(
            "majsoul-yipao-is-no-earthly-hand",
            deal=DOUBLE_5P,
            ruleset={"profile": "majsoul", "exchange_three": False},
            que="pmsm",
            evs="0-5p 1h5p<0 2h5p<0 3+6s 3h6s",
            result=claim(
                "0>1=8000hu@1 0>2=1000hu@2 0>3=33000hu@4",
                [-42000, 8000, 1000, 33000],
                "1@1:4f8000p 2@2:1f1000p 3@4:6f32000p",
            ),
        ),
        """
        Valid Mahjong Soul (majsoul, its 换三张 switched off: the record has none): base 1,000, 2^(fan−1),
        cap 6. Winning on the dealer's first discard is no 地和 there: seat 1 has 清一色 + 根 = 4 fan, 8,000;
        seat 2 a plain hand, 1,000. Seat 3's self-draw on its first draw, before any pong or kong, is 地和: a
        fixed 6 fan, 32,000 + 1,000 自摸加底 (the wins before it do not spoil it).""",
    )
    case(
        f,
        vary(soul, "majsoul-claimed-as-app-earthly", ruleset={"profile": "app", "exchange_three": False}),
        """
        The same claim under the app profile, whose 地胡 also counts a win on the dealer's first discard (a fixed
        8 fan) and whose base is 1: every amount differs.""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )

    ruleset_text_cases(sbr)


# GOLDEN_DEAD: seat 1 holds standing pungs 111m, 999m and 999s, three 7s and 8s (void 筒); it draws the fourth 7s,
# declares a concealed kong and then waits on 8s alone: 7s would complete 789s + 99s, but all four 7s are in its
# kong. Seat 2 draws 8s and discards it; seat 1 wins on it. Seats 2 and 3 then self-draw 5p and 6s.
GOLDEN_DEAD = ("234567m234567m55p", "111m999m777s999s8s", "123p444p678p99p46p", "222s333s444s555s6s")
GOLDEN_DEAD_EVENTS = "0-2m 1+7s 1c7s 1+5m 1-5m 2+8s 2-8s 1h8s<2 2+5p 2h5p 3+6s 3h6s"
GOLDEN_DEAD_PAYS = "0>1=2kong@2 2>1=2kong@2 3>1=2kong@2 2>1={win}hu@7 0>2=9hu@9 3>2=9hu@9 0>3=9hu@11"
# SOUL_HEAVEN: the dealer's dealt hand is 龙七对 with two roots (1111m 2222m 44m 55p 77p); seats 1 and 2 win on
# their first draws (地和), seat 3 is left.
SOUL_HEAVEN = ("1111m2222m44m55p77p", "123s456s789s2p3p4p5s", "123p456p789s1s2s3s4s", "333m555m666m888m9p")
# GSP_YIPAO: the dealer declares a concealed kong of 1m on its first turn, draws 9m and discards 5p: seats 1 and 2
# both win on it (一炮多响, 杠上炮), seat 3 then self-draws 6s.
GSP_YIPAO = ("1111m2345678m99s5p", "123p444p678p99p46p", "555m666m777m55p67p", "222s333s444s555s6s")
# GOLDEN_READY: seat 1 holds 7777s 111m 999m 999s, draws 8s and declares a concealed kong of 7s on its first turn;
# to the empty wall it waits on 8s alone. Seat 2 waits on 5p, seat 3 on 5s; the dealer is not ready.
GOLDEN_READY = ("2345688m3666p789p", "7777s111m999m999s", "234567m234p678p5p", "111p222s333s444s5s")
# XU_TING: empty_wall.jsonl's hand with seat 3 holding 8888s and 777888999p: its only wait is a fifth 8s.
XU_TING = (E1[0], E1[1], E1[2], "8888s777888999p")


def ruleset_text_cases(sbr: Record) -> None:
    """Points where independent checks and xuezhan disagreed, each decided by the rule text (issue 38)."""
    f = "rulesets"
    dead = case(
        f,
        record(
            "sbr-golden-wait-beside-a-dead-tile",
            deal=GOLDEN_DEAD,
            ruleset={"profile": "sbr", "jin_gou_diao": "single_wait_all_pungs"},
            que="spmm",
            evs=GOLDEN_DEAD_EVENTS,
            result=claim(GOLDEN_DEAD_PAYS.format(win=8), [-20, 14, 8, -2], "1@7:3f8p 2@9:3f8p 3@11:3f8p"),
        ),
        """
        Valid SBR with standing pungs counted for the Golden Wait (jin_gou_diao = single_wait_all_pungs): seat 1's
        hand, standing 111m 999m 999s + 8s beside its concealed kong of 7s, would also complete on 7s (789s +
        99s), but "A tile of which the player's standing tiles already hold all four is not a wait" (an
        exhaustive wait, SBR p. 30): every 7s is in its kong, so it waits on 8s alone. Its win on seat 2's 8s is
        All Pungs 1 + Kong 1 + Golden Wait 1 = 3 fan, 8 points. Seats 2 (Full Flush 2 + Root 1) and 3 (Full
        Flush 2 + All Pungs 1) self-draw 3-fan hands, 8 + 1 from each player still in.""",
    )
    case(
        f,
        vary(
            dead,
            "sbr-golden-wait-dead-tile-counted-as-a-wait",
            result=claim(GOLDEN_DEAD_PAYS.format(win=4), [-20, 10, 12, -2], "1@7:2f4p 2@9:3f8p 3@11:3f8p"),
        ),
        """
        The same hand claimed as if the dead 7s were a second wait (no Golden Wait: 2 fan, 4 points).""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )
    standing = case(
        f,
        vary(
            dead,
            "sbr-no-golden-wait-on-standing-pungs",
            ruleset="sbr",
            result=claim(GOLDEN_DEAD_PAYS.format(win=4), [-20, 10, 12, -2], "1@7:2f4p 2@9:3f8p 3@11:3f8p"),
        ),
        """
        Valid SBR as the book defines the Golden Wait: "Four melds (pungs or kongs) in hand, the winning tile
        completes the pair" (Table 4, p. 26), a melded set "contains a tile claimed from a discard" (p. 13) and
        standing pungs are part of the concealed hand (Table 2, p. 15). Seat 1 has one declared set, its kong,
        beside three standing pungs: All Pungs 1 + Kong 1 = 2 fan, 4 points.""",
    )
    case(
        f,
        vary(
            standing,
            "sbr-standing-pungs-claimed-as-a-golden-wait",
            result=claim(GOLDEN_DEAD_PAYS.format(win=8), [-20, 14, 8, -2], "1@7:3f8p 2@9:3f8p 3@11:3f8p"),
        ),
        """
        The same hand under sbr claimed with a Golden Wait on the standing pungs (3 fan, 8 points).""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )
    heaven = case(
        f,
        record(
            "majsoul-heavenly-hand-with-a-root",
            deal=SOUL_HEAVEN,
            ruleset={"profile": "majsoul", "exchange_three": False},
            que="smms",
            evs="0h7p 1+5s 1h5s 2+4s 2h4s",
            result=claim(
                "1>0=33000hu@0 2>0=33000hu@0 3>0=33000hu@0 2>1=33000hu@2 3>1=33000hu@2 3>2=33000hu@4",
                [99000, 33000, -33000, -99000],
                "0@0:7f32000p 1@2:6f32000p 2@4:6f32000p",
            ),
        ),
        """
        Valid Mahjong Soul: a hand scores one named hand plus the bonuses 根, 杠上花, 杠上炮, 抢杠 and 海底捞月 (the
        replay editor's calcFanChuanma/ans2Fan). The dealer's dealt 龙七对 with two roots wins as 天和 (6) + the
        根 that 龙七对 does not take (1) = 7 fan, capped at 32,000, + 1,000 from each of the three; seats 1 and 2
        win on their first draws, 地和, 6 fan each.""",
    )
    case(
        f,
        vary(
            heaven,
            "majsoul-heavenly-hand-claimed-additive",
            result=claim(
                "1>0=33000hu@0 2>0=33000hu@0 3>0=33000hu@0 2>1=33000hu@2 3>1=33000hu@2 3>2=33000hu@4",
                [99000, 33000, -33000, -99000],
                "0@0:6f32000p 1@2:6f32000p 2@4:6f32000p",
            ),
        ),
        """
        The same hand claimed with 天和 as a fixed 6 fan that replaces the roots (an additive table's reading):
        the game shows 7.""",
        "SCORE_FAN",
    )
    void_hu = case(
        f,
        vary(
            sbr,
            "sbr-false-hu-with-a-void-tile",
            que="ppsm",
            result=None,
        ),
        """
        SBR: seat 1 holds only 筒 but declared 筒 void, and declares Hu on the dealer's 5p: a Hu with void-suit
        tiles is a false Hu, 8 points to each player still in and its kong money returned (p. 30), and "48 on top
        of the false-Hu penalty" (p. 31), which goes to the pot like SBR's other void penalties.""",
        "WIN_VOID_SUIT",
        computed="1>0=8penalty@1 1>2=8penalty@1 1>3=8penalty@1 1>pot=48penalty@1",
        twin="sbr-fan-base-zero",
    )
    case(
        f,
        vary(void_hu, "sbr-false-hu-on-its-shape", que="pmsm", evs="0-5p 3h5p<0"),
        """
        A false Hu that holds no void tile: seat 3 (four pungs of 条 and 6s, 万 void) declares Hu on the dealer's 5p,
        which does not complete its hand: the false-Hu penalty alone, 8 to each player still in, no 48.""",
        "WIN_FALSE",
        computed="3>0=8penalty@1 3>1=8penalty@1 3>2=8penalty@1",
        twin="sbr-fan-base-zero",
    )
    wall, evs = full_hand(GOLDEN_READY, first="2m", front="8s1p", kong={1: "7s"})
    ready_dead = case(
        f,
        record(
            "sbr-ready-value-golden-wait-beside-a-dead-tile",
            wall=wall,
            evs=evs,
            ruleset={"profile": "sbr", "jin_gou_diao": "single_wait_all_pungs"},
            que="spsm",
            result=claim(
                "0>1=2kong@2 2>1=2kong@2 3>1=2kong@2 0>1=4cha_jiao 0>2=1cha_jiao 0>3=2cha_jiao", [-9, 10, -1, 0], ""
            ),
        ),
        """
        Valid SBR (standing pungs counted for the Golden Wait), to the empty wall: seat 1 declares a concealed
        kong of 7s on its first turn and ends holding 111m 999m 999s 8s, waiting on 8s alone (every 7s is in its
        kong: "not a wait", p. 30). Its theoretical maximum leaves the kong out, the kong valued as the pong it
        was (SBR p. 32), yet its 7s stay dead: All Pungs 1 + Golden Wait 1 = 2 fan, 4, which the dealer (not
        ready) pays it; seats 2 (0 fan, 1) and 3 (All Pungs, 2) are paid too.""",
    )
    case(
        f,
        vary(
            ready_dead,
            "sbr-ready-value-dead-tile-counted-as-a-wait",
            result=claim(
                "0>1=2kong@2 2>1=2kong@2 3>1=2kong@2 0>1=2cha_jiao 0>2=1cha_jiao 0>3=2cha_jiao", [-7, 8, -1, 0], ""
            ),
        ),
        """
        The same hand claimed as if the kong, valued as a pong, left a 7s to wait on: All Pungs alone, 2.""",
        "SETTLE_AMOUNT",
    )
    four = case(
        f,
        record(
            "sbr-four-standing-pungs-no-golden-wait",
            deal=PATTERN_HANDS,
            ruleset="sbr",
            que="sppm",
            evs="0-9m 1h9m<0 2+5s 2h5s 3+7s 3h7s",
            result=claim("0>1=1hu@1 0>2=3hu@3 3>2=3hu@3 0>3=3hu@5", [-7, 1, 6, 0], "1@1:0f1p 2@3:1f2p 3@5:1f2p"),
        ),
        """
        Valid SBR: seats 2 and 3 each hold four standing pungs and win on the pair, All Pungs 1 fan, 2 points + 1
        a payer: no Golden Wait, which needs "Four melds (pungs or kongs)" (Table 4, p. 26), melded sets holding
        a claimed tile (p. 13). Seat 1's 带幺九 hand is nothing in SBR (0 fan, 1 point).""",
    )
    case(
        f,
        vary(
            four,
            "sbr-four-standing-pungs-golden-wait-override",
            ruleset={"profile": "sbr", "jin_gou_diao": "single_wait_all_pungs"},
            result=claim("0>1=1hu@1 0>2=5hu@3 3>2=5hu@3 0>3=5hu@5", [-11, 1, 10, 0], "1@1:0f1p 2@3:2f4p 3@5:2f4p"),
        ),
        """
        Valid: the same hand where standing pungs count for the Golden Wait (jin_gou_diao = single_wait_all_pungs,
        a room's reading): seats 2 and 3 add Golden Wait, 2 fan, 4 points + 1 a payer.""",
    )
    case(
        f,
        vary(
            four,
            "sbr-four-standing-pungs-claimed-golden",
            result=claim("0>1=1hu@1 0>2=5hu@3 3>2=5hu@3 0>3=5hu@5", [-11, 1, 10, 0], "1@1:0f1p 2@3:2f4p 3@5:2f4p"),
        ),
        """
        The override's claim under sbr: the standing pungs are no Golden Wait.""",
        "SCORE_FAN",
        "SCORE_POINTS",
        "SETTLE_AMOUNT",
    )
    wall, evs = full_hand(XU_TING, first="9s", front="2s2s", kong={2: "7m"})
    kong_pays = "0>2=2kong@4 1>2=2kong@4 3>2=2kong@4 0>1=10hua_zhu 0>2=10hua_zhu 0>3=10hua_zhu 2>1=1cha_jiao "
    refund = " 2>0=2tui_shui 2>1=2tui_shui 2>3=2tui_shui"
    dead_wait = case(
        f,
        record(
            "rules-wait-on-a-fourth-tile-is-no-wait",
            wall=wall,
            evs=evs,
            result=claim(kong_pays + "3>1=1cha_jiao" + refund, [-30, 12, 9, 9], ""),
        ),
        """
        Valid Chengdu: empty_wall.jsonl's hand with seat 3 holding 8888s 777888999p to the end. Its only wait is a
        fifth 8s, which does not exist: not ready (cha_jiao_fourth_tile = false), it pays ready seat 1 its
        cheapest wait, 1.""",
    )
    case(
        f,
        vary(
            dead_wait,
            "rules-xu-ting-without-the-root",
            ruleset={"profile": "chengdu", "cha_jiao_fourth_tile": "xu_ting"},
            result=claim(kong_pays + "2>3=2cha_jiao" + refund, [-30, 11, 7, 12], ""),
        ),
        """
        Valid 虚听 (cha_jiao_fourth_tile = xu_ting): a platform counts the wait on a fifth 8s as ready and values it
        as if that tile existed, the four 8s held making no 根: 888s + 88s with 777p 888p 999p is 平胡 1 + 对对胡
        1 = 2 fan, 2, which seat 2 (not ready) pays seat 3.""",
    )
    case(
        f,
        vary(
            dead_wait,
            "rules-fourth-tile-with-the-root",
            ruleset={"profile": "chengdu", "cha_jiao_fourth_tile": True},
            result=claim(kong_pays + "2>3=4cha_jiao" + refund, [-30, 11, 5, 14], ""),
        ),
        """
        Valid: the same wait where the four 8s still make their 根 (cha_jiao_fourth_tile = true): 平胡 1 + 对对胡 1
        + 根 1 = 3 fan, 4.""",
    )
    case(
        f,
        vary(
            dead_wait,
            "rules-xu-ting-claimed-with-the-root",
            ruleset={"profile": "chengdu", "cha_jiao_fourth_tile": "xu_ting"},
            result=claim(kong_pays + "2>3=4cha_jiao" + refund, [-30, 11, 5, 14], ""),
        ),
        """
        The claim of rules-fourth-tile-with-the-root under 虚听: the four held make no 根, seat 3's value is 2.""",
        "SETTLE_AMOUNT",
        twin="rules-xu-ting-without-the-root",
    )
    refund_yipao = case(
        f,
        record(
            "sbr-gang-shang-pao-refund-at-the-last-winner",
            deal=GSP_YIPAO,
            ruleset="sbr",
            que="pmsm",
            evs="0c1m 0+9m 0-5p 1h5p<0 2h5p<0 3+6s 3h6s",
            result=claim(
                "1>0=2kong@0 2>0=2kong@0 3>0=2kong@0 0>1=8hu@3 0>2=2hu@4 0>1=2tui_shui@4 0>2=2tui_shui@4 "
                "0>3=2tui_shui@4 0>3=9hu@6",
                [-19, 8, 2, 9],
                "1@3:4f8p 2@4:1f2p 3@6:3f8p",
            ),
        ),
        """
        Valid SBR 一炮多响 on a Shoot after Kong: the dealer declares a concealed kong (2 from each of the three),
        draws 9m and discards 5p, on which seats 1 (Full Flush 2 + Root 1 + Shoot after Kong 1 = 4 fan, capped
        at 8 points) and 2 (Shoot after Kong, 1 fan, 2) both win. "Kong money is cancelled when another player
        wins on the discard that follows the kong" (p. 28): one 退税 payment per kong payment returned, written
        at the hu of the discard's last winner (event 4, schemas/XZLOG.md). Seat 3 then self-draws 6s, 8 + 1.""",
    )
    case(
        f,
        vary(
            refund_yipao,
            "sbr-gang-shang-pao-refund-at-the-first-winner",
            result=claim(
                "1>0=2kong@0 2>0=2kong@0 3>0=2kong@0 0>1=8hu@3 0>2=2hu@4 0>1=2tui_shui@3 0>2=2tui_shui@3 "
                "0>3=2tui_shui@3 0>3=9hu@6",
                [-19, 8, 2, 9],
                "1@3:4f8p 2@4:1f2p 3@6:3f8p",
            ),
        ),
        """
        The refund claimed at the first winner's hu (event 3): it is written at the last one's.""",
        "SETTLE_MISSING",
        "SETTLE_EXTRA",
    )


# ================================================================================================ levels
def level_cases() -> None:
    """Records below the full level (schemas/XZLOG.md, "Levels of record"): what each can still be judged on."""
    f = "levels"
    sheet = case(
        f,
        {
            "format": "xzlog/1",
            "level": "settlement",
            "hand_id": "level-settlement",
            "ruleset": "chengdu",
            "players": ["a", "b", "c", "d"],
            "dealer": 0,
            "events": [{"t": "hu", "seat": 1, "from": 2}],
            "end": [
                {"seat": 0, "state": "not_ready"},
                {"seat": 2, "state": "ready", "fan": 1},
                {"seat": 3, "state": "ready", "fan": 2},
            ],
            "result": {
                "payments": [
                    {"from": 2, "to": 1, "amount": 4, "reason": "hu", "event": 0},
                    {"from": 0, "to": 2, "amount": 1, "reason": "cha_jiao", "event": None},
                    {"from": 0, "to": 3, "amount": 2, "reason": "cha_jiao", "event": None},
                ],
                "deltas": [-3, 4, -3, 2],
                "wins": [{"seat": 1, "event": 0, "patterns": ["qing_yi_se"], "fan": 3, "points": 4}],
            },
        },
        """
        Valid. A score sheet's hand (no tiles): seat 1 wins 清一色 (3 fan, 4 points) on seat 2's discard; at
        the empty wall seat 0 is not ready and pays 查大叫 to the ready seats 2 (1 fan: 1 point) and 3 (2 fan:
        2 points).""",
    )
    case(
        f,
        vary(
            sheet, "level-settlement-winner-at-the-end", patch=lambda r: r["end"].append({"seat": 1, "state": "ready"})
        ),
        """
        The end states list seat 1, who won at event 0 and left play: they must name exactly the players
        still in.""",
        "SETTLE_END",
    )
    sbr_sheet = case(
        f,
        {
            "format": "xzlog/1",
            "level": "settlement",
            "hand_id": "level-settlement-sbr-unshown",
            "ruleset": "sbr",
            "players": ["a", "b", "c", "d"],
            "dealer": 0,
            "events": [{"t": "kong", "seat": 1, "kind": "added"}, {"t": "hu", "seat": 2, "from": 3}],
            "end": [
                {"seat": 0, "state": "not_ready"},
                {"seat": 1, "state": "ready", "fan": 1},
                {"seat": 3, "state": "not_ready"},
            ],
            "result": {
                "payments": [
                    {"from": 3, "to": 2, "amount": 4, "reason": "hu", "event": 1},
                    {"from": 0, "to": None, "amount": 48, "reason": "penalty", "event": None},
                    {"from": 3, "to": None, "amount": 48, "reason": "penalty", "event": None},
                    {"from": 0, "to": 1, "amount": 2, "reason": "cha_jiao", "event": None},
                    {"from": 3, "to": 1, "amount": 2, "reason": "cha_jiao", "event": None},
                ],
                "deltas": [-50, 4, 4, -54],
                "wins": [{"seat": 2, "event": 1, "patterns": ["qing_yi_se"], "fan": 2, "points": 4}],
            },
        },
        """
        Valid. An SBR score sheet's hand (no draws, no pongs, no tiles): seat 1's added kong has no payment, a
        Postponed Kong ("a tile already among standing tiles", paid 0, p. 28), which the sheet cannot show but
        the claim says; seat 2 wins Full Flush (2 fan, 4) on seat 3's discard; seat 0 paid 48 to the pot (a
        pong of its void suit, p. 31) and seat 3 48 (void tiles at the wall's end, p. 27), penalties the record
        cannot show either. A finding must rest on what the record shows: both are taken as claimed and listed
        as not checked; not ready, seats 0 and 3 pay ready seat 1 its 1 fan, 2.""",
    )
    case(
        f,
        vary(
            sbr_sheet,
            "level-settlement-sbr-promoted-kong",
            patch=lambda r: (
                r["result"]["payments"].extend(
                    {"from": s, "to": 1, "amount": 1, "reason": "kong", "event": 0} for s in (0, 2, 3)
                ),
                r["result"].update(deltas=[-51, 7, 3, -55]),
            ),
        ),
        """
        Valid: the same sheet where the added kong was a Promoted Kong, the tile just drawn, paid 1 by each player
        still in (p. 27-28): the claimed kong payments say which.""",
    )
    case(
        f,
        vary(
            sbr_sheet,
            "level-settlement-sbr-penalty-not-void",
            patch=lambda r: (
                r["result"]["payments"][1].update(amount=30),
                r["result"].update(deltas=[-32, 4, 4, -54]),
            ),
        ),
        """
        The same sheet with a penalty of 30 to the pot: not one of SBR's void-suit penalties (48), so not due.""",
        "SETTLE_EXTRA",
    )


# ================================================================================================ output
SECTIONS = (
    play_cases,
    claim_cases,
    pass_cases,
    void_cases,
    tile_cases,
    wall_cases,
    commitment_cases,
    schema_cases,
    settle_cases,
    empty_wall_cases,
    table_cases,
    ruleset_cases,
    level_cases,
    session_cases,
)
for _section in SECTIONS:
    _section()

FILES = {
    "play": "Turn order, blood battle, 一炮多响, who moves after a win.",
    "claims": "Pongs, kongs, their money, 杠上花, 点杠花, 杠上炮, 抢杠, win precedence.",
    "passing": "过手胡 / 弃先胡后.",
    "void": "定缺 and 换三张 (app profile), the void suit at a win, 地胡.",
    "tiles": "Tiles that cannot exist or are not held; 相公 (wrong tile counts).",
    "wins": "诈胡 and wins on the wrong tile.",
    "wall": "Records with a wall: dealing, draw order, kong replacements from the front, wall commitments.",
    "schema": "The record's shape, rulesets, tile notation, extensions.",
    "settle": "Claimed fan, points, payments and deltas.",
    "empty_wall": "Whole hands to the empty wall: 查花猪, 查大叫, 退税, 海底, 最后四张能胡必须胡.",
    "table": "Other tables and modes: 普通版 (the first win ends the hand), three players and two suits.",
    "rulesets": (
        "Other rule sets: Sichuan Bloody Rules (sbr), Mahjong Soul (majsoul), the Salasasa platform (salasasa), "
        "and the switches they need."
    ),
    "levels": "Records below the full level: a score sheet's hand (settlement level).",
}


def _readme() -> str:
    lines = [
        "# The validator's regression corpus",
        "",
        "Hand-written `xzlog/1` records, each with the exact set of issue codes `xuezhan validate` must report",
        "(none for a valid record). Written by `build.py` (run `python tests/corpus/build.py` from the",
        "repository root after changing it; a test checks these files are what it writes). Claimed results were",
        "worked out by hand from `docs/RULES.md` (Chengdu profile unless a case says otherwise: base 1, no cap,",
        "自摸加底, plain hand = 1 fan, points = 2^(fan−1)). A hand whose replay stops (an illegal action) is not",
        "compared with its claim; for 诈胡 and 相公 the test checks the penalty in the computed ledger instead.",
        "Every case that raises codes names a valid twin it differs from in one point (see `build.py`).",
        "",
        "Run the tests with `python -m pytest tests/corpus`.",
        "",
        "Notation in the builder: hands in tile notation by seat; events as `<seat><op><tile>[<from>][!]` with",
        "`+` draw, `-` discard, `p` pong, `k` direct kong, `a` added kong, `c` concealed kong, `h` hu (`<n` on",
        "seat n's tile, nothing for a self-draw, `!` robbing a kong); payments as",
        "`<from>><to>=<amount><reason>@<event>` (`<from>>pot=…` for a penalty to the pot).",
        "",
    ]
    for name, title in FILES.items():
        lines += [f"## `{name}.jsonl`: {title}", "", "| case | expects | what it shows |", "|---|---|---|"]
        for c in CASES:
            if c.file == name:
                codes = ", ".join(f"`{x}`" for x in sorted(c.expect)) or "valid"
                lines.append(f"| `{c.id}` | {codes} | {c.doc} |")
        lines.append("")
    lines += [
        "## `sessions/*.jsonl`: checks across the hands of a session (`check_sessions`)",
        "",
        "| case | expects | what it shows |",
        "|---|---|---|",
    ]
    for s in SESSIONS:
        codes = ", ".join(f"`{code}` on `{hand}`" for hand, code in sorted(s.expect)) or "valid"
        lines.append(f"| `{s.id}` | {codes} | {s.doc} |")
    return "\n".join(lines) + "\n"


def render() -> dict[str, str]:
    """Every corpus file (path relative to this folder → text)."""
    out = {}
    for name in FILES:
        out[f"{name}.jsonl"] = "".join(c.line + "\n" for c in CASES if c.file == name)
    for s in SESSIONS:
        out[f"sessions/{s.id}.jsonl"] = "".join(dumps(r) + "\n" for r in s.records)
    out["README.md"] = _readme()
    return out


def main() -> None:
    assert {c.file for c in CASES} <= set(FILES)
    for path, text in render().items():
        target = HERE / path
        target.parent.mkdir(exist_ok=True)
        target.write_text(text, encoding="utf-8")
    print(f"wrote {len(CASES)} cases in {len(FILES)} files and {len(SESSIONS)} sessions to {HERE}", file=sys.stderr)


if __name__ == "__main__":
    main()
