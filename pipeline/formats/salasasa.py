"""The Salasasa platform's 四川 血战 game records, read into ``xzlog/1`` records.

The platform (open-source, MIT) stores each finished game as a row of ``game_records``: ``game_id`` and ``record``,
a JSON object with ``game_title`` (the room) and ``game_round`` (one entry ``round_index_N`` per hand: the dealt
hands ``p0_tiles`` … ``p3_tiles``, the rest of the wall ``tiles_list`` and the hand's ``action_ticks``). A
PostgreSQL export gives the rows as JSON lines (``{"game_id": ..., "record": {...}}``) or as a ``COPY`` in CSV or
TSV (``game_id`` then ``record``, the record as JSON text). Each game becomes one session of records, one per hand:

- level ``full`` when the dealt hands and ``tiles_list`` make the whole wall (108 tiles, four of each), else
  ``dealt``. The platform deals seat 0 first whoever deals; ``wall`` is restated in our dealing convention
  (the dealer first), the same tiles in the same order within each seat's block;
- the dealer is the seat dealt 14 tiles; in versions that dealt 13 to everyone (the dealer's 14th is its first
  draw tick) it follows from the previous hand by the platform's dealer rule, seat 0 for the first hand. The
  header's ``dealer_index`` is never read: the platform writes 0 in every hand;
- the actor of a draw or discard, which ticks do not name, follows from the turn: a draw goes to the next seat
  still in after the last to act, a kong replacement (``gd``) to the kong's player, a discard to the seat that
  just drew or ponged;
- every money vector (kong ``gs``, refund ``gr``, ``settle_hu``, ``chajiao``) becomes itemised payments: a
  vector has one receiver (paid by each loser) or one payer (paying each gainer); what leaves the table goes to
  nobody. A robbed added kong's money and its refund are left out (the kong did not stand);
- the platform stores no 定缺: a record says ``"unrecorded": ["que"]`` unless ``que`` is given (``--que``) or
  the record proves every seat's void suit (:func:`proven_que`);
- the room's blood-battle flag is not stored either; every hand proves it (:func:`proven_mode`), else it is
  rejected unless ``--mode`` says;
- times carry no zone: ``played_at`` is written only with ``--tz``; the game's start is kept in ``x_salasasa``;
- what the record shows of the platform's version (``x_salasasa.features``) is written down, never used to
  repair a hand: a kong replacement drawn from the back of the wall stays where it was drawn, and the
  validator reports it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from pipeline.formats import BadLine, Converted, Item, Reject, Skipped

PROFILE: Final = "salasasa"
SUIT_OF: Final = {1: "m", 2: "p", 3: "s"}
SUITS: Final = "mps"
HU_CLASSES: Final = ("hu_first", "hu_second", "hu_third")
# The platform's fan names and what each adds, in the salasasa profile's count (平和 alone: 0 fan, 1 point)
FAN_OF: Final = {
    "平和": 0,
    "杠": 1,
    "根": 1,
    "大对子": 1,
    "金钩钓": 1,
    "清一色": 2,
    "七对": 2,
    "杠上花": 1,
    "杠上炮": 1,
    "抢杠": 1,
    "海底": 1,
}
COMMITMENT_SCHEME: Final = "salasasa-sha256-v1"


class SalasasaError(ValueError):
    """A game the reader cannot restate (the message says which hand and why)."""


# ------------------------------------------------------------------------------------------------ rows
def read_salasasa(
    lines: Iterable[str | BadLine],
    *,
    que: Mapping[str, list[str | None]] | None = None,
    mode: str | None = None,
    tz: str | None = None,
    totals: Mapping[str, dict[int, int]] | None = None,
) -> Iterator[Item]:
    """Each row (a JSON line, or a CSV/TSV ``COPY`` line) as the records of its game's hands, or a reject.

    ``que``: hand id → the four void suits, from the user; ``mode``: the room's mode when a hand does not prove
    it; ``tz``: the server's time zone (IANA name); ``totals``: game id → seat → the game's total from
    ``game_player_records``, which the hands' claimed deltas must add up to (else the game is rejected)."""
    zone = None
    if tz is not None:
        try:
            zone = ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise SalasasaError(f"--tz {tz!r} is not a time zone name") from None
    dialect: str | None = None
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, BadLine):  # a line the caller could not read (too long, a broken stream): its game
            yield Reject(number, "", raw.code, raw.message)
            continue
        text = raw.rstrip("\r\n")
        if not text.strip():
            yield Skipped(1, "blank")
            continue
        if dialect is None:
            dialect = "json" if text.lstrip().startswith("{") else ("tsv" if "\t" in text else "csv")
            if dialect != "json" and text.split("\t" if dialect == "tsv" else ",")[0].strip('"') == "game_id":
                yield Skipped(1, "framing")  # the COPY's header
                continue
        try:
            game_id, record = _row(text, dialect)
            hands = convert_game(game_id, record, que=que or {}, mode=mode, zone=zone)
            if totals is not None and game_id in totals:
                _reconcile(game_id, hands, totals[game_id])
        except SalasasaError as e:
            yield Reject(number, text, "IMPORT_ROW", str(e))
            continue
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:  # a shape no check foresaw
            yield Reject(number, text, "IMPORT_ROW", f"cannot be read: {type(e).__name__}: {e}")
            continue
        for i, hand in enumerate(hands):
            yield Converted(hand, 1 if i == 0 else 0)


def _row(text: str, dialect: str) -> tuple[str, dict[str, Any]]:
    if dialect == "json":
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as e:
            raise SalasasaError(f"not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise SalasasaError("a row must be an object {game_id, record}")
        game_id, record = obj.get("game_id"), obj.get("record")
    else:
        cells = next(csv.reader(io.StringIO(text), delimiter="\t" if dialect == "tsv" else ","), [])
        if len(cells) != 2:
            raise SalasasaError(f"a COPY row must have two columns (game_id, record), not {len(cells)}")
        game_id, record = cells[0], cells[1].replace("\\\\", "\\") if dialect == "tsv" else cells[1]
    if isinstance(record, str):
        try:
            record = orjson.loads(record)
        except orjson.JSONDecodeError as e:
            raise SalasasaError(f"record is not JSON: {e}") from None
    if not isinstance(game_id, str) or not game_id:
        raise SalasasaError("game_id must be a non-empty string")
    if not isinstance(record, dict):
        raise SalasasaError(f"{game_id}: record must be a JSON object")
    return game_id, record


def read_players(lines: Iterable[str]) -> dict[str, dict[int, int]]:
    """``game_player_records`` (JSON lines or a CSV/TSV COPY with a header): game id → seat → total score."""
    rows: list[dict[str, Any]] = []
    buffered = [line for line in lines if line.strip()]
    if buffered and buffered[0].lstrip().startswith("{"):
        rows = [orjson.loads(line) for line in buffered]
    elif buffered:
        delimiter = "\t" if "\t" in buffered[0] else ","
        rows = list(csv.DictReader(io.StringIO("".join(buffered)), delimiter=delimiter))
    out: dict[str, dict[int, int]] = {}
    for row in rows:
        try:
            out.setdefault(str(row["game_id"]), {})[int(row["original_player_index"])] = int(row["score"])
        except (KeyError, TypeError, ValueError) as e:
            raise SalasasaError(
                f"game_player_records: a row without game_id, original_player_index, score: {e}"
            ) from None
    return out


def _reconcile(game_id: str, hands: list[dict[str, Any]], totals: dict[int, int]) -> None:
    sums = [sum(h["result"]["deltas"][s] for h in hands) for s in range(4)]
    want = [totals.get(s) for s in range(4)]
    if sums != want:
        raise SalasasaError(f"{game_id}: the hands' deltas add up to {sums}, game_player_records says {want}")


# ------------------------------------------------------------------------------------------------ a game
def _tile(value: Any, where: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value // 10 in SUIT_OF and 1 <= value % 10 <= 9:
        return f"{value % 10}{SUIT_OF[value // 10]}"
    raise SalasasaError(f"{where}: {value!r} is not a tile (11-19, 21-29, 31-39)")


def _seat(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
        return value
    raise SalasasaError(f"{where}: {value!r} is not a seat 0-3")


def _vector(value: Any, where: str) -> list[int]:
    if (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(d, int) and not isinstance(d, bool) for d in value)
    ):
        return list(value)
    raise SalasasaError(f"{where}: {value!r} is not a score vector of four integers")


def convert_game(
    game_id: str,
    record: dict[str, Any],
    *,
    que: Mapping[str, list[str | None]],
    mode: str | None = None,
    zone: ZoneInfo | None = None,
) -> list[dict[str, Any]]:
    """The game's hands as xzlog/1 records, in hand order (:class:`SalasasaError` for the first fault)."""
    title = record.get("game_title")
    rounds = record.get("game_round")
    if not isinstance(title, dict) or not isinstance(rounds, dict):
        raise SalasasaError(f"{game_id}: the record needs game_title and game_round objects")
    if title.get("rule") not in (None, "sichuan") or title.get("sub_rule") not in (None, "sichuan/standard"):
        raise SalasasaError(f"{game_id}: rule {title.get('rule')!r}/{title.get('sub_rule')!r} is not 四川 standard")
    players = []
    for i in range(4):
        uid = title.get(f"p{i}_uid")
        if uid is None:
            raise SalasasaError(f"{game_id}: game_title has no p{i}_uid")
        players.append(str(uid))
    keys = sorted(rounds, key=lambda k: int(k.rsplit("_", 1)[-1]) if k.rsplit("_", 1)[-1].isdigit() else -1)
    if [k for k in keys] != [f"round_index_{n}" for n in range(1, len(keys) + 1)]:
        raise SalasasaError(f"{game_id}: game_round keys {keys} are not round_index_1 … round_index_{len(keys)}")
    game_features = _game_features(title)
    played_at = None
    start = title.get("start_time")
    if zone is not None and isinstance(start, str):
        try:
            played_at = datetime.fromisoformat(start).replace(tzinfo=zone).isoformat()
        except ValueError:
            raise SalasasaError(f"{game_id}: start_time {start!r} is not a date and time") from None
    out: list[dict[str, Any]] = []
    previous: _Hand | None = None
    for n, key in enumerate(keys, start=1):
        hand_id = f"{game_id}-{n}"
        try:
            hand = _Hand(rounds[key], n, previous, mode)
        except SalasasaError as e:
            raise SalasasaError(f"{hand_id}: {e}") from None
        obj: dict[str, Any] = {
            "format": "xzlog/1",
            "level": "full" if hand.wall is not None else "dealt",
            "hand_id": hand_id,
            "session_id": game_id,
            "hand_no": n,
        }
        if played_at is not None:
            obj["played_at"] = played_at
        obj["ruleset"] = PROFILE if hand.mode == "blood_battle" else {"profile": PROFILE, "mode": hand.mode}
        obj["players"] = players
        obj["dealer"] = hand.dealer
        if hand.wall is not None:
            obj["wall"] = hand.wall
        obj["deal"] = hand.deal
        given = que.get(hand_id)
        proven = hand.proven_que()
        if given is not None:
            obj["que"] = given
        elif all(q is not None for q in proven):
            obj["que"] = proven
        else:
            obj["unrecorded"] = ["que"]
        obj["events"] = hand.events
        commitment = _commitment(title, n, hand.dealer)
        if commitment is not None:
            obj["commitment"] = commitment
        obj["result"] = {"payments": hand.payments, "deltas": hand.deltas, "wins": hand.wins}
        obj["x_salasasa"] = {
            "round_index": n,
            "start_time": start,
            "dealer_from": hand.dealer_from,
            "features": sorted(game_features | hand.features),
            "que_from": "--que" if given is not None else {str(s): why for s, why in hand.que_proof.items()},
            "end": hand.end_status,
        }
        out.append(obj)
        previous = hand
    return out


def _game_features(title: dict[str, Any]) -> set[str]:
    features = set()
    if "master_seed_hex" in title:
        features.add("master_seed_hex")
    if "commitment_hex" in title:
        features.add("commitment")
    if "match_tier" in title:
        features.add("match_tier")
    return features


def _commitment(title: dict[str, Any], round_index: int, dealer: int) -> dict[str, Any] | None:
    """The wall commitment of a hand (schemas/XZLOG.md, ``commitment``): the platform's committed hash and salt,
    the master seed where the record reveals it, and where this hand's wall is in the seed's sequence."""
    commit, salt = title.get("commitment_hex"), title.get("salt")
    if not isinstance(commit, str) or not isinstance(salt, str):
        return None
    out: dict[str, Any] = {"scheme": COMMITMENT_SCHEME, "hash": commit.lower(), "salt": salt, "round": round_index}
    seed = title.get("master_seed_hex")
    if isinstance(seed, str):
        out["seed"] = seed.lower()
    return out


# ------------------------------------------------------------------------------------------------ a hand
class _Hand:
    """One ``round_index_N`` restated: deal, wall, events, payments, claimed deltas and wins."""

    def __init__(self, raw: Any, n: int, previous: _Hand | None, mode: str | None) -> None:
        if not isinstance(raw, dict):
            raise SalasasaError("the hand is not an object")
        self.features: set[str] = set()
        hands = []
        for seat in range(4):
            tiles = raw.get(f"p{seat}_tiles")
            if not isinstance(tiles, list) or len(tiles) not in (13, 14):
                raise SalasasaError(f"p{seat}_tiles must hold 13 or 14 tiles")
            hands.append([_tile(t, f"p{seat}_tiles") for t in tiles])
        rest = raw.get("tiles_list")
        if not isinstance(rest, list):
            raise SalasasaError("tiles_list must be a list")
        rest_tiles = [_tile(t, "tiles_list") for t in rest]
        ticks = raw.get("action_ticks")
        if not isinstance(ticks, list) or not all(isinstance(t, list) and t and isinstance(t[0], str) for t in ticks):
            raise SalasasaError("action_ticks must be a list of ticks [name, ...]")
        fourteen = [s for s in range(4) if len(hands[s]) == 14]
        if len(fourteen) > 1:
            raise SalasasaError(f"seats {fourteen} were all dealt 14 tiles")
        ticks = list(ticks)
        if fourteen:
            self.dealer = fourteen[0]
            self.dealer_from = "14 tiles"
            self.features.add("dealer_14")
        else:  # an older version: the dealer's 14th tile is its first draw
            self.dealer = previous.next_dealer() if previous is not None else 0
            self.dealer_from = "the dealer rule" if previous is not None else "seat 0 deals the first hand"
            if not ticks or ticks[0][0] != "d" or len(ticks[0]) < 2:
                raise SalasasaError("no 14-tile hand and the first tick is not the dealer's draw")
            fourteenth = _tile(ticks[0][1], "tick 0")
            hands[self.dealer].append(fourteenth)
            ticks = ticks[1:]
            # tiles_list was stored after the deal and before that draw: it starts with the tile drawn
            if len(hands) * 13 + len(rest_tiles) == 108 and rest_tiles[:1] == [fourteenth]:
                rest_tiles = rest_tiles[1:]
        self.deal = hands
        whole = [t for h in hands for t in h[:13]] + [hands[self.dealer][13]] + rest_tiles
        self.wall: list[str] | None = None
        if len(whole) == 108 and all(whole.count(f"{r}{s}") == 4 for r in range(1, 10) for s in SUITS):
            d = self.dealer
            self.wall = [t for k in range(4) for t in hands[(d + k) % 4][:13]] + whole[52:]
        self.events: list[dict[str, Any]] = []
        self.payments: list[dict[str, Any]] = []
        self.wins: list[dict[str, Any]] = []
        self.end_status: dict[str, str] = {}
        self.que_proof: dict[int, str] = {}
        self._que: list[str | None] = [None] * 4
        self.first_win: tuple[list[int], int | None] | None = None
        self._settle_order: list[int] = []
        # seat → payer → each kong payment not yet returned (退税 returns them one by one)
        self._kong_income: list[dict[int, list[int]]] = [{} for _ in range(4)]
        self._refunds: list[dict[str, Any]] = []  # a 杠上炮 refund, written at the last win on that discard
        self.mode = self._play(ticks, mode)
        self.deltas = [0] * 4
        for p in self.payments:
            self.deltas[p["from"]] -= p["amount"]
            if p["to"] is not None:
                self.deltas[p["to"]] += p["amount"]

    # -- turn and events --------------------------------------------------------------------------------
    def _play(self, ticks: list[list[Any]], mode: str | None) -> str:
        actor = self.dealer
        still_in = [True] * 4
        last_discard: tuple[int, str] | None = None
        kong_events: dict[int, int] = {}  # event index of each kong → its payments' first index
        win_event: dict[tuple[int, int], int] = {}  # (seat, order) → hu event index
        hu_order: list[int] = []  # the winners' hu events in order
        group: list[int] = []  # the winners on the current discard
        group_robs = False
        first_open = False  # the first win's discard is still being won on (一炮多响)
        blood: bool | None = None
        discards: dict[int, list[str]] = {s: [] for s in range(4)}
        last_kong: int | None = None
        for i, tick in enumerate(ticks):
            name = tick[0]
            where = f"tick {i} {name}"
            if name != "gr" and name not in HU_CLASSES and group:
                actor = group[-1]
                group = []
                first_open = False
                self._flush_refunds()
            if name == "d":
                actor = _next_in(actor, still_in)
                self.events.append({"t": "draw", "seat": actor, "tile": _tile(_at(tick, 1, where), where)})
                last_kong = None
            elif name == "gd":
                self.events.append({"t": "draw", "seat": actor, "tile": _tile(_at(tick, 1, where), where)})
            elif name == "c":
                tile = _tile(_at(tick, 1, where), where)
                self.events.append({"t": "discard", "seat": actor, "tile": tile})
                discards[actor].append(tile)
                last_discard = (actor, tile)
                last_kong = None
            elif name == "p":
                seat = _seat(_at(tick, 2, where), where)
                if last_discard is None:
                    raise SalasasaError(f"{where}: a pong with no discard before it")
                self.events.append({"t": "pong", "seat": seat, "tile": last_discard[1], "from": last_discard[0]})
                discards[last_discard[0]].pop()
                actor = seat
            elif name in ("g", "ag", "jg"):
                tile = _tile(_at(tick, 1, where), where)
                event: dict[str, Any]
                if name == "g":
                    seat = _seat(_at(tick, 2, where), where)
                    if last_discard is None:
                        raise SalasasaError(f"{where}: a direct kong with no discard before it")
                    event = {"t": "kong", "seat": seat, "tile": tile, "kind": "direct", "from": last_discard[0]}
                    discards[last_discard[0]].pop()
                    actor = seat
                else:
                    event = {"t": "kong", "seat": actor, "tile": tile, "kind": "concealed" if name == "ag" else "added"}
                self.events.append(event)
                last_kong = len(self.events) - 1
                kong_events[last_kong] = len(self.payments)
                if "gs" in tick:
                    at = tick.index("gs")
                    vector = _vector(tick[at + 1 : at + 5], where)
                    self._vector_payments(vector, "kong", last_kong, where)
                    gainer = actor
                    for payer in range(4):
                        if vector[payer] < 0 and vector[gainer] > 0:
                            self._kong_income[gainer].setdefault(payer, []).append(-vector[payer])
            elif name == "gr":
                if "gs" not in tick:
                    raise SalasasaError(f"{where}: a refund without its score vector")
                at = tick.index("gs")
                self._refund(_vector(tick[at + 1 : at + 5], where), last_kong, kong_events, where)
            elif name in HU_CLASSES:
                seat = _seat(_at(tick, 1, where), where)
                discarder = _seat(_at(tick, 7, where), where)
                tile = _tile(_at(tick, 5, where), where)
                if not group:  # the first winner on this discard (or robbed kong)
                    previous = self.events[-1] if self.events else None
                    group_robs = bool(previous and previous.get("kind") == "added" and previous["seat"] == discarder)
                event = {"t": "hu", "seat": seat, "tile": tile, "from": discarder}
                if group_robs:
                    event["rob_kong"] = True
                self.events.append(event)
                self._win(seat, tick, where, win_event, hu_order)
                still_in[seat] = False
                if self.first_win is None:
                    self.first_win = ([seat], discarder)
                    first_open = True
                elif first_open and group:
                    self.first_win[0].append(seat)
                group.append(seat)
                if any(_vector(_at(tick, 4, where), where)):
                    blood = _shows(blood, False, where)
            elif name == "hu_self":
                seat = _seat(_at(tick, 1, where), where)
                tile = _tile(_at(tick, 5, where), where)
                self.events.append({"t": "hu", "seat": seat, "tile": tile, "from": None})
                self._win(seat, tick, where, win_event, hu_order)
                still_in[seat] = False
                actor = seat
                if self.first_win is None:
                    self.first_win = ([seat], None)
                first_open = False
                if any(_vector(_at(tick, 4, where), where)):
                    blood = _shows(blood, False, where)
            elif name == "liuju":
                if len(tick) == 1:
                    blood = _shows(blood, False, where)
                    self.features.add("liuju_marker")
                    continue
                blood = _shows(blood, True, where)
                step = tick[1]
                if step == "reveal_hu":
                    continue
                if step == "settle_hu":
                    seat = _seat(_at(tick, 3, where), where)
                    vector = _vector(_at(tick, 6, where), where)
                    if len(tick) > 7:
                        self.features.add("settle_final")
                    events = [e for (s, _), e in win_event.items() if s == seat]
                    if not events:
                        raise SalasasaError(f"{where}: settles a win of seat {seat}, who has not won")
                    self._vector_payments(vector, "hu", events[-1], where)
                    self._settle_order.append(seat)
                elif step == "chajiao":
                    seat = _seat(_at(tick, 2, where), where)
                    status = _at(tick, 3, where)
                    self.end_status[str(seat)] = str(status)
                    vector = _vector(_at(tick, 5, where), where)
                    self._panel(seat, str(status), vector, where)
                    if status == "hua_zhu_passive" and discards[seat]:
                        suits = {t[1] for t in discards[seat]}
                        if len(suits) == 1:
                            self._prove(seat, suits.pop(), "a passive flower pig: every discard of its void suit")
                    if status == "ting":
                        self._prove_from_hand(seat, _at(tick, 4, where), "ready at the end with two suits")
                else:
                    raise SalasasaError(f"{where}: unknown liuju step {step!r}")
            elif name == "ca":
                self.features.add("ca")
            elif name == "end":
                continue
            else:
                raise SalasasaError(f"{where}: unknown tick")
        self._flush_refunds()
        if hu_order and self._settle_order and self._settle_order != sorted(self._settle_order, key=hu_order.index):
            self.features.add("settle_seat_order")
        if blood is None:
            if mode is None:
                raise SalasasaError("the hand does not show whether the room played 血战 (give --mode)")
            return mode
        return "blood_battle" if blood else "ordinary"

    def _win(
        self, seat: int, tick: list[Any], where: str, win_event: dict[tuple[int, int], int], order: list[int]
    ) -> None:
        index = len(self.events) - 1
        win_event[(seat, len(order))] = index
        order.append(seat)
        points = _at(tick, 2, where)
        if not isinstance(points, int) or isinstance(points, bool) or points < 0:
            raise SalasasaError(f"{where}: hu_score {points!r} is not a whole number")
        names = _at(tick, 3, where)
        win: dict[str, Any] = {"seat": seat, "event": index}
        if isinstance(names, list) and names and all(n in FAN_OF for n in names):
            win["fan"] = sum(FAN_OF[n] for n in names)
        elif names:
            self.features.add("unknown_fan_name")
        win["points"] = points
        self.wins.append(win)
        vector = _vector(_at(tick, 4, where), where)
        if any(vector):  # a room without blood battle settles each win at once
            self._vector_payments(vector, "hu", index, where)

    def _vector_payments(self, vector: list[int], reason: str, event: int | None, where: str) -> None:
        """One receiver paid by each loser, or one payer paying each gainer; the rest to nobody."""
        gainers = [s for s in range(4) if vector[s] > 0]
        losers = [s for s in range(4) if vector[s] < 0]
        if len(gainers) > 1 and len(losers) > 1:
            raise SalasasaError(f"{where}: score vector {vector} has several payers and several receivers")
        if len(gainers) == 1:
            (to,) = gainers
            for s in losers:
                self.payments.append({"from": s, "to": to, "amount": -vector[s], "reason": reason, "event": event})
            rest = vector[to] + sum(vector[s] for s in losers)
            if rest != 0:
                raise SalasasaError(f"{where}: score vector {vector} does not add up")
        elif losers:
            (payer,) = losers
            for s in gainers:
                self.payments.append({"from": payer, "to": s, "amount": vector[s], "reason": reason, "event": event})
            pot = -vector[payer] - sum(vector[s] for s in gainers)
            if pot < 0:
                raise SalasasaError(f"{where}: score vector {vector} pays out more than it takes")
            if pot:
                self.payments.append({"from": payer, "to": None, "amount": pot, "reason": "penalty", "event": event})

    def _refund(self, vector: list[int], last_kong: int | None, kong_events: dict[int, int], where: str) -> None:
        """``gr``: a robbed added kong's money (the kong did not stand: its payments are dropped with the
        refund) or, before a 杠上炮 win, the discarder's kong money returned (退税 payments, one per kong
        payment returned, written at the last win on the discard)."""
        if last_kong is not None and last_kong == len(self.events) - 1 and self.events[last_kong]["kind"] == "added":
            first = kong_events[last_kong]
            paid = self.payments[first:]
            if sorted((p["from"], p["amount"]) for p in paid) == sorted((s, v) for s, v in enumerate(vector) if v > 0):
                del self.payments[first:]
                seat = self.events[last_kong]["seat"]
                for p in paid:
                    self._kong_income[seat][p["from"]].remove(p["amount"])
                self.features.add("robbed_kong_refund")
                return
        losers = [s for s in range(4) if vector[s] < 0]
        if len(losers) != 1 or -vector[losers[0]] != sum(v for v in vector if v > 0):
            raise SalasasaError(f"{where}: a refund {vector} must be one player's, and add up")
        (payer,) = losers
        for s in range(4):
            if vector[s] > 0:
                # kong money it collected, one payment each; anything else kept whole, for the validator
                amounts = self._returned(payer, s, vector[s], exactly=True) or [vector[s]]
                for amount in amounts:
                    self._refunds.append(
                        {"from": payer, "to": s, "amount": amount, "reason": "tui_shui", "event": None}
                    )

    def _panel(self, seat: int, status: str, vector: list[int], where: str) -> None:
        """A 查叫 panel: the ready player paid by each player not ready (cha_jiao), or a player not ready
        returning its kong money (tui_shui) and, as an active pig, 24 to nobody (penalty)."""
        if vector[seat] > 0:
            self._vector_payments(vector, "cha_jiao", None, where)
        elif vector[seat] < 0:
            gainers = [s for s in range(4) if vector[s] > 0]
            if any(vector[s] < 0 for s in range(4) if s != seat):
                raise SalasasaError(f"{where}: score vector {vector} is not its player's against the others")
            for s in gainers:  # kong money returned first (退税); anything more paid is 查叫 money
                back = 0
                for amount in self._returned(seat, s, vector[s]):
                    self.payments.append({"from": seat, "to": s, "amount": amount, "reason": "tui_shui", "event": None})
                    back += amount
                if vector[s] > back:
                    self.payments.append(
                        {"from": seat, "to": s, "amount": vector[s] - back, "reason": "cha_jiao", "event": None}
                    )
            pot = -vector[seat] - sum(vector[s] for s in gainers)
            if pot < 0:
                raise SalasasaError(f"{where}: score vector {vector} pays out more than it takes")
            if pot:
                self.payments.append({"from": seat, "to": None, "amount": pot, "reason": "penalty", "event": None})

    def _flush_refunds(self) -> None:
        """A refund (``gr``) before wins on a discard is written at the last of them (杠上炮 under 一炮多响)."""
        if not self._refunds:
            return
        at = next((i for i in range(len(self.events) - 1, -1, -1) if self.events[i]["t"] == "hu"), None)
        for p in self._refunds:
            p["event"] = at
        self.payments.extend(self._refunds)
        self._refunds = []

    def _returned(self, seat: int, payer: int, most: int, *, exactly: bool = False) -> list[int]:
        """The kong payments ``seat`` collected from ``payer`` that ``most`` points return, oldest first, each
        its own 退税 payment (schemas/XZLOG.md), taken off what ``seat`` still holds; what does not fit a whole
        payment is not taken as returned. ``exactly``: take them only if they add up to ``most``."""
        income = self._kong_income[seat].get(payer, [])
        n = 0
        while n < len(income) and sum(income[: n + 1]) <= most:
            n += 1
        if exactly and sum(income[:n]) != most:
            return []
        out = income[:n]
        del income[:n]
        return out

    def _prove(self, seat: int, suit: str, why: str) -> None:
        self._que[seat] = suit
        self.que_proof[seat] = why

    def _prove_from_hand(self, seat: int, hand_json: Any, why: str) -> None:
        try:
            tiles = orjson.loads(hand_json) if isinstance(hand_json, str) else hand_json
            suits = {_tile(t, "hand")[1] for t in tiles}
        except (orjson.JSONDecodeError, TypeError, SalasasaError):
            return
        melds = {e["tile"][1] for e in self.events if e["t"] in ("pong", "kong") and e["seat"] == seat}
        suits |= melds
        if len(suits) == 2:
            self._prove(seat, next(s for s in SUITS if s not in suits), why)

    def proven_que(self) -> list[str | None]:
        """The void suits the record proves (written down in ``x_salasasa.que_from``): a passive flower pig's
        (every discard of one suit, the platform's own test for passive), a player ready at the end holding two
        suits (the platform counts a player holding its void suit as not ready), a winner holding two suits
        (the platform lets no hand with its void suit win)."""
        for w in self.wins:
            seat = w["seat"]
            if self._que[seat] is None:
                suits = {e["tile"][1] for e in self.events if e["seat"] == seat and e["t"] in ("pong", "kong")}
                suits |= self._held_suits(seat, w["event"])
                if len(suits) == 2:
                    self._prove(seat, next(s for s in SUITS if s not in suits), "won holding two suits")
        return list(self._que)

    def _held_suits(self, seat: int, upto: int) -> set[str]:
        held = list(self.deal[seat])
        for e in self.events[: upto + 1]:
            if (e["t"] == "draw" and e["seat"] == seat) or (e["t"] == "hu" and e["seat"] == seat):
                held.append(e["tile"])
            elif e["t"] == "discard" and e["seat"] == seat and e["tile"] in held:
                held.remove(e["tile"])
            elif e["t"] in ("pong", "kong") and e["seat"] == seat:
                for _ in range({"pong": 2, "direct": 3, "added": 1, "concealed": 4}[e.get("kind", "pong")]):
                    if e["tile"] in held:
                        held.remove(e["tile"])
        return {t[1] for t in held}

    def next_dealer(self) -> int:
        """The platform's dealer rule: the first winner; the discarder when several won on the first win's
        discard; the same dealer when nobody won."""
        if self.first_win is None:
            return self.dealer
        winners, discarder = self.first_win
        if len(winners) > 1 and discarder is not None:
            return discarder
        return winners[0]


def _shows(known: bool | None, blood: bool, where: str) -> bool:
    """What a tick shows of the room's mode, against what earlier ticks showed."""
    if known is not None and known != blood:
        raise SalasasaError(f"{where}: the hand shows a room both with and without blood battle")
    return blood


def _at(tick: list[Any], i: int, where: str) -> Any:
    if len(tick) <= i:
        raise SalasasaError(f"{where}: the tick has {len(tick)} fields, not {i + 1} or more")
    return tick[i]


def _next_in(seat: int, still_in: list[bool]) -> int:
    for k in range(1, 5):
        nxt = (seat + k) % 4
        if still_in[nxt]:
            return nxt
    raise SalasasaError("a draw with nobody still in")
