"""Score disputed hands: one JSON request in, one JSON answer out (``xuezhan score --batch``).

Auditors check thousands of contested wins at once. A request names the tiles held before the
winning tile, the winning tile, the melds, the void suit, the situational flags and the profile::

    {"concealed": "111444789m456p", "win_tile": "7p", "melds": [], "que": "s", "self_drawn": true}

The answer says whether it is a win and, if so, the fan breakdown, total fan (before the cap), the
points (after it) and what each payer pays. A malformed request gets an answer with ``error`` set;
the batch goes on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from pipeline.rules import Meld, NotAWin, RuleSet, RuleSetError, Score, TileError, WinHand, load_ruleset, score
from pipeline.rules.hand import MELD_KINDS
from pipeline.rules.tiles import SUITS, TILE_NAMES, kind_of, parse_tiles

FLAGS = ("self_drawn", "after_kong", "rob_kong", "last_tile", "heavenly", "earthly", "kong_discard")
FIELDS = frozenset({"concealed", "win_tile", "melds", "que", "profile", *FLAGS})


class RequestError(ValueError):
    """A scoring request that cannot be read."""


def parse_melds(text: str) -> list[Meld]:
    """Meld notation of the command line: ``"pong:5m,kong:7p,ckong:3s,akong:2m"``.

    ``pong`` a pong, ``kong`` a direct (exposed) kong, ``ckong`` a concealed kong, ``akong`` an added kong.

    >>> [str(m) for m in parse_melds("pong:5m, ckong:3s")]
    ['pong:5m', 'concealed:3s']
    """
    kinds = {"pong": "pong", "kong": "direct", "ckong": "concealed", "akong": "added"}
    melds = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, tile = item.partition(":")
        if not sep or name not in kinds:
            raise TileError(f"not a meld: {item!r} (expected pong:5m, kong:7p, ckong:3s or akong:2m)")
        melds.append(Meld(kinds[name], kind_of(tile.strip())))  # type: ignore[arg-type]
    return melds


def _meld_of(obj: Any) -> Meld:
    if not isinstance(obj, Mapping) or set(obj) - {"kind", "tile"}:
        raise RequestError(f"a meld is {{'kind': ..., 'tile': ...}}, got {obj!r}")
    kind, tile = obj.get("kind"), obj.get("tile")
    if kind not in MELD_KINDS:
        raise RequestError(f"meld kind {kind!r} is not one of {', '.join(MELD_KINDS)}")
    if not isinstance(tile, str):
        raise RequestError(f"meld tile {tile!r} is not a tile like '5m'")
    return Meld(kind, kind_of(tile))


def hand_of_request(request: Mapping[str, Any], rules: RuleSet | None = None) -> WinHand:
    """The :class:`WinHand` a request describes; :class:`RequestError` / :class:`TileError` otherwise, and
    :class:`RequestError` for a hand ``rules`` (when given) cannot hold or flags they contradict."""
    unknown = set(request) - FIELDS
    if unknown:
        raise RequestError(f"unknown field(s): {', '.join(sorted(unknown))}")
    concealed = request.get("concealed")
    if isinstance(concealed, (str, list)):
        kinds = parse_tiles(concealed)
    else:
        raise RequestError("'concealed' must be tile notation or a list of tiles like '1m'")
    win_tile = request.get("win_tile")
    if not isinstance(win_tile, str):
        raise RequestError("'win_tile' must be a tile like '7p'")
    melds_obj = request.get("melds") or []
    if not isinstance(melds_obj, list):
        raise RequestError("'melds' must be a list")
    melds = [_meld_of(m) for m in melds_obj]
    que = request.get("que")
    if que is not None and que not in ("m", "p", "s"):
        raise RequestError(f"'que' must be 'm', 'p', 's' or null, got {que!r}")
    flags = {}
    for name in FLAGS:
        value = request.get(name, False)
        if not isinstance(value, bool):
            raise RequestError(f"{name!r} must be true or false, got {value!r}")
        flags[name] = value
    contradiction = flag_contradiction(flags, rules)
    if contradiction:
        raise RequestError(contradiction)
    hand = WinHand.of(kinds, win_tile=kind_of(win_tile), melds=melds, que=que, **flags)
    if rules is not None:
        fault = suit_fault(hand, rules)
        if fault:
            raise RequestError(fault)
    return hand


def flag_contradiction(flags: Mapping[str, bool], rules: RuleSet | None = None, *, cli: bool = False) -> str | None:
    """Why a set of situational flags cannot all hold under ``rules`` (when given), or None. A contradiction is
    refused, never scored: the engine would silently drop or keep a flag and answer for another hand.

    - 杠上花 (``after_kong``) is a win on the kong's replacement tile, and 天胡 (``heavenly``) the dealer's dealt
      hand: both self-drawn by definition;
    - 天胡 is the dealer's and 地胡 (``earthly``) another player's: not both;
    - under ``earthly_on = first_draw`` 地胡 is a self-drawn win on one's own first draw, so an earthly win on a
      discard is a contradiction, not an ordinary win to score.

    ``cli``: name the flags as the command line's options (``--after-kong``), not as request fields.

    >>> flag_contradiction({"after_kong": True})
    "'after_kong' (杠上花) is a self-drawn win: set 'self_drawn' too"
    >>> flag_contradiction({"heavenly": True}, cli=True)
    '--heavenly (天胡) is a self-drawn win: add --self-drawn'
    """

    def name(flag: str) -> str:
        return "--" + flag.replace("_", "-") if cli else repr(flag)

    def needs_self_draw(flag: str, what: str) -> str:
        add = f"add {name('self_drawn')}" if cli else f"set {name('self_drawn')} too"
        return f"{name(flag)} ({what}) is a self-drawn win: {add}"

    if flags.get("after_kong") and not flags.get("self_drawn"):
        return needs_self_draw("after_kong", "杠上花")
    if flags.get("heavenly") and not flags.get("self_drawn"):
        return needs_self_draw("heavenly", "天胡")
    if flags.get("heavenly") and flags.get("earthly"):
        return (
            f"{name('heavenly')} (天胡, the dealer's) and {name('earthly')} (地胡, another player's) exclude each other"
        )
    if (
        flags.get("earthly")
        and not flags.get("self_drawn")
        and rules is not None
        and rules.earthly_on == "first_draw"
        and rules.earthly != "normal"
    ):
        return (
            f"{name('earthly')} (地胡) is a self-drawn win on one's first draw under profile {rules.profile!r} "
            f"(earthly_on = first_draw): add {name('self_drawn')}, or drop {name('earthly')} for a win on a discard"
        )
    return None


def suit_fault(hand: WinHand, rules: RuleSet, *, cli: bool = False) -> str | None:
    """Why ``hand`` cannot be held at ``rules``' table, or None: a tile of a suit the table does not play
    (a two-suit table's missing suit: the validator's ``TILE_SUIT``), or a declared void suit (定缺) at a table
    of two suits, where there is none to declare (``TILE_VOID``).

    >>> from pipeline.rules import load_ruleset
    >>> suit_fault(WinHand.of("123m456p789p111s2s", win_tile="2s"), load_ruleset("siren_liangse"))
    "1m is of a suit the table does not play: profile 'siren_liangse' plays only 'ps'"
    """
    held = list(hand.counts27)
    for meld in hand.melds:
        held[meld.tile] += 1
    for kind, n in enumerate(held):
        if n and SUITS[kind // 9] not in rules.suits:
            return (
                f"{TILE_NAMES[kind]} is of a suit the table does not play: profile {rules.profile!r} plays "
                f"only {rules.suits!r}"
            )
    if hand.void is not None and len(rules.suits) < 3:
        que = "--que" if cli else "'que'"
        return f"{que}: a table of two suits ({rules.profile!r}) has no void suit to declare (定缺)"
    return None


def score_answer(result: Score | None, error: str | None = None) -> dict[str, Any]:
    """The answer object: ``win``, ``fan``, ``points``, ``per_payer``, ``patterns``, ``title``, ``error``."""
    if result is None:
        return {
            "win": False,
            "fan": None,
            "points": None,
            "per_payer": None,
            "patterns": [],
            "title": None,
            "error": error,
        }
    return {
        "win": True,
        "fan": result.fan,
        "points": result.points,
        "per_payer": result.per_payer,
        "patterns": [{"id": p.id, "name_zh": p.name_zh, "name_en": p.name_en, "fan": p.fan} for p in result.patterns],
        "title": result.title_zh,
        "error": None,
    }


def score_request(request: Any) -> tuple[dict[str, Any], bool]:
    """Answer one request. Returns the answer and whether the request was readable.

    A readable hand that is not a win answers ``win: false`` with ``error`` null and the reason in
    ``reason``, so scripts can tell bad input from hands that simply do not win.
    """
    if not isinstance(request, Mapping):
        return score_answer(None, f"a request is a JSON object, got {type(request).__name__}"), False
    try:
        rules = load_ruleset(request.get("profile", "chengdu"))
        hand = hand_of_request(request, rules)
    except (RequestError, TileError, RuleSetError, TypeError) as exc:
        return score_answer(None, str(exc)), False
    try:
        result = score(hand, rules)
    except NotAWin as exc:
        answer = score_answer(None)
        answer["reason"] = str(exc)
        return answer, True
    except TileError as exc:
        return score_answer(None, str(exc)), False
    answer = score_answer(result)
    answer["fan_base"] = rules.fan_base  # the count its fan are in: a plain hand is fan_base fan
    return answer, True


def score_lines(lines: Iterable[str], *, first: int = 1) -> Iterator[tuple[dict[str, Any], bool]]:
    """Answer each JSON line, in order (``first``: the number of the first); blank lines are skipped, unreadable
    ones answered with an error (JSON nested past 1,024 levels too: orjson's bound, not a RecursionError)."""
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        try:
            request = orjson.loads(line)
        except ValueError as exc:
            yield score_answer(None, f"line {number}: not JSON ({exc})"), False
            continue
        yield score_request(request)
