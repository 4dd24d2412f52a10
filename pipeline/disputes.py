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

from pipeline.rules import Meld, NotAWin, RuleSetError, Score, TileError, WinHand, load_ruleset, score
from pipeline.rules.hand import MELD_KINDS
from pipeline.rules.tiles import kind_of, parse_tiles

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


def hand_of_request(request: Mapping[str, Any]) -> WinHand:
    """The :class:`WinHand` a request describes; :class:`RequestError` / :class:`TileError` otherwise."""
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
    contradiction = flag_contradiction(flags)
    if contradiction:
        raise RequestError(contradiction)
    return WinHand.of(kinds, win_tile=kind_of(win_tile), melds=melds, que=que, **flags)


def flag_contradiction(flags: Mapping[str, bool]) -> str | None:
    """Why a set of situational flags cannot all hold, or None: 杠上花 (``after_kong``) is a win on the
    kong's replacement tile, self-drawn by definition; asked without ``self_drawn`` it would be scored as a
    plain discard win, a silently wrong answer."""
    if flags.get("after_kong") and not flags.get("self_drawn"):
        return "'after_kong' (杠上花) is a self-drawn win: set 'self_drawn' too"
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
        hand = hand_of_request(request)
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
