"""The mjai event stream of Sichuan (血战) engines, read into ``dealt`` records and written from ours.

The dialect is the one Mortal-style Sichuan engines speak (the ``libblood`` crate's ``mjai/event.rs`` of
mahjong-xpro/blood-grp): one JSON event per line, ``type`` naming it; no chi, riichi or dora.

=============== ========================================================= =====================================
mjai ``type``   fields                                                    xzlog/1
=============== ========================================================= =====================================
``start_game``  ``names`` (4)                                             ``players`` of each hand that follows
``start_kyoku`` ``kyoku`` (1-4), ``oya``, ``scores``, ``tehais`` (4 × 13) ``dealer``, ``deal`` (the dealer's
                                                                          first ``tsumo`` is its 14th tile)
``ding_que``    ``actor``, ``suit`` (``man``, ``pin``, ``sou``)           ``que``
``tsumo``       ``actor``, ``pai``                                        ``draw``
``dahai``       ``actor``, ``pai``, ``tsumogiri``                         ``discard``
``pon``         ``actor``, ``target``, ``pai``, ``consumed`` (2)          ``pong`` from ``target``
``daiminkan``   ``actor``, ``target``, ``pai``, ``consumed`` (3)          ``kong`` direct from ``target``
``kakan``       ``actor``, ``pai``, ``consumed`` (3)                      ``kong`` added
``ankan``       ``actor``, ``consumed`` (4)                               ``kong`` concealed
``hora``        ``actor``, ``target`` (= ``actor``: self-drawn), ``deltas`` ``hu``; the deltas add up to the
                                                                          hand's claimed ``deltas``
``ryukyoku``    ``deltas``                                                (the wall ran out) deltas as above
``end_kyoku``                                                             the end of the hand's record
``end_game``                                                              the end of the game
=============== ========================================================= =====================================

What mjai cannot carry (docs/FORMATS.md lists it): the wall (a record read from mjai is ``dealt``: every
drawn tile is known, their order in the wall is not), the itemised payments (only deltas; the record's
``payments`` are absent: "not itemised"), the claimed fan and points of each win, the exchange of three
(``tehais`` are the hands after it), decision times, three-player tables (``names`` has four). Our writer
keeps the rest in an ``x_xuezhan`` field of ``start_kyoku`` (hand and session ids, rules, the exchange,
the time played), which other readers ignore, so that xzlog → mjai → xzlog gives the same hand. A hand's
kong money and end-of-wall payments have no event of their own in mjai: the writer adds them to the deltas
of the hand's last ``hora``, or its ``ryukyoku``.

>>> lines = [
...     '{"type":"start_game","names":["a","b","c","d"]}',
...     '{"type":"start_kyoku","kyoku":1,"oya":0,"scores":[0,0,0,0],"tehais":[' + ",".join(
...         ['["1m","1m","1m","2m","2m","2m","3m","3m","3m","4m","4m","4m","5m"]'] * 4) + ']}',
...     '{"type":"tsumo","actor":0,"pai":"5m"}',
...     '{"type":"hora","actor":0,"target":0,"deltas":[3,-1,-1,-1]}',
...     '{"type":"end_kyoku"}',
...     '{"type":"end_game"}',
... ]
>>> items = list(read_mjai(lines, game="g1"))
>>> [type(i).__name__ for i in items]
['Skipped', 'Converted', 'Skipped']
>>> hand = items[1].record
>>> hand["hand_id"], hand["deal"][0][-1], hand["events"], hand["result"]
('g1-1', '5m', [{'t': 'hu', 'seat': 0, 'tile': '5m', 'from': None}], {'deltas': [3, -1, -1, -1]})
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

import orjson

from pipeline.formats import BadLine, Converted, Item, Reject, Skipped, bounded
from pipeline.game.start import deal_hands, exchange_offset, exchanged
from pipeline.game.state import IllegalAction
from pipeline.rules.ruleset import MAX_POINTS, RuleSetError, load_ruleset
from pipeline.rules.tiles import TILE_NAMES, TileError, parse_tiles

SUIT_OF: Final = {"man": "m", "pin": "p", "sou": "s"}
SUIT_NAME: Final = {v: k for k, v in SUIT_OF.items()}
DEFAULT_RULESET: Final[dict[str, Any]] = {"profile": "app", "exchange_three": False}
_TILE = re.compile(r"^[1-9][mps]$")


class MjaiError(ValueError):
    """An event the dialect does not allow where it stands (the message says which and why)."""


# ------------------------------------------------------------------------------------------------ reading
def read_mjai(
    lines: Iterable[str | bytes | BadLine],
    *,
    game: str = "mjai",
    ruleset: str | dict[str, Any] | None = None,
    max_bytes: int | None = None,
) -> Iterator[Item]:
    """Each kyoku of the stream as a record (``start_kyoku`` to ``end_kyoku``, with the ``start_game`` names),
    the lines outside any kyoku as framing or rejects. ``game`` prefixes the hand ids (``{game}-{n}``, n
    counting kyoku over the stream; the writer's own ids come back from ``x_xuezhan``); ``ruleset`` is the
    rules of a hand that does not name its own (default: the app profile with no exchange of three, since
    mjai carries none); ``max_bytes`` the most text a kyoku may have (the caller's bound on a record, ingest's
    line bound; none when not given): a longer kyoku is rejected and its events are not held. A line the caller
    could not read (a :class:`BadLine`) rejects the kyoku it stands in, or itself outside one."""
    names: list[str] | None = None
    size = 0  # characters of the kyoku's lines so far
    spilled = 0  # lines of a kyoku past max_bytes, counted, not held
    games = 0
    kyoku: list[tuple[int, dict[str, Any]]] = []
    kyoku_raw: list[str] = []
    count = 0
    for number, raw_line in enumerate(lines, start=1):
        code = "IMPORT_ROW"
        if isinstance(raw_line, BadLine):
            raw, event, fault, code = "", None, raw_line.message, raw_line.code
        else:
            raw = raw_line.decode("utf-8", "replace") if isinstance(raw_line, bytes) else raw_line
            raw = raw.rstrip("\r\n")
            if number == 1:
                raw = raw.removeprefix("\ufeff")  # a byte-order mark, as ingest skips it
            if not raw.strip():
                yield Skipped(1, "blank")
                continue
            event, fault = _event(raw)
        if fault or event is None:
            if kyoku:  # a broken line inside a kyoku spoils the kyoku: rejected whole, with this line's reason
                kyoku.append((number, {}))
                kyoku_raw.append(raw)
                yield _kyoku_reject(kyoku, kyoku_raw, f"line {number}: {fault}", spilled, code)
                kyoku, kyoku_raw, size, spilled = [], [], 0, 0
            else:
                yield Reject(number, bounded(raw), code, fault)
            continue
        kind = event["type"]
        if kind == "start_kyoku":
            if kyoku:
                message = f"line {number}: a kyoku starts before the last one ended"
                yield _kyoku_reject(kyoku, kyoku_raw, message, spilled)
            kyoku, kyoku_raw, size, spilled = [(number, event)], [raw], len(raw), 0
        elif kyoku:
            size += len(raw)
            if max_bytes is not None and size > max_bytes:  # more than a record may hold: count, do not keep
                spilled += 1
            else:
                kyoku.append((number, event))
                kyoku_raw.append(raw)
            if kind == "end_kyoku":
                count += 1
                if spilled:
                    message = f"the kyoku's lines pass {max_bytes} bytes, more than a record may hold"
                    yield _kyoku_reject(kyoku, kyoku_raw, message, spilled)
                else:
                    try:
                        record = _record(kyoku, names, f"{game}-{count}", games, ruleset)
                    except MjaiError as e:
                        yield _kyoku_reject(kyoku, kyoku_raw, str(e))
                    else:
                        yield Converted(record, len(kyoku))
                kyoku, kyoku_raw, size, spilled = [], [], 0, 0
        elif kind == "start_game":
            given = event.get("names")
            if given is not None and not (
                isinstance(given, list) and len(given) == 4 and all(isinstance(n, str) and n for n in given)
            ):
                yield Reject(number, raw, "IMPORT_ROW", "start_game: names must be four non-empty strings")
                names = None
                continue
            names, games = given, games + 1
            yield Skipped(1, "framing")
        elif kind in ("end_game", "none"):
            yield Skipped(1, "framing")
        else:
            yield Reject(number, bounded(raw), "IMPORT_ROW", f"{kind} outside a kyoku (no start_kyoku before it)")
    if kyoku:
        yield _kyoku_reject(kyoku, kyoku_raw, "the stream ends inside a kyoku (no end_kyoku)", spilled)


def _event(raw: str) -> tuple[dict[str, Any] | None, str]:
    """The event of one line, or why it is none (bad JSON, nesting past orjson's 1,024 levels, no type)."""
    try:
        event = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        return None, f"not JSON: {e}"
    if not (isinstance(event, dict) and isinstance(event.get("type"), str)):
        return None, "not an mjai event"
    return event, ""


# our writer's x_xuezhan fields → the check of each (another producer's object is read only if it passes)
_OURS: Final[dict[str, Callable[[Any], bool]]] = {
    "hand_id": lambda v: isinstance(v, str) and bool(v),
    "session_id": lambda v: isinstance(v, str),
    "table_id": lambda v: isinstance(v, str),
    "played_at": lambda v: isinstance(v, str),
    "hand_no": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_POINTS,
    "players": lambda v: isinstance(v, list) and len(v) == 4 and all(isinstance(n, str) and n for n in v),
    "ruleset": lambda v: isinstance(v, str | dict),
    "exchange": lambda v: (
        isinstance(v, dict) and isinstance(v.get("direction"), str) and isinstance(v.get("given"), list)
    ),
}


def _check_ours(ours: dict[str, Any], line: int) -> None:
    for key, fits in _OURS.items():
        if key in ours and ours[key] is not None and not fits(ours[key]):
            raise MjaiError(f"line {line}: start_kyoku: x_xuezhan.{key} {bounded(repr(ours[key]))[:60]} is not one")


def _kyoku_reject(
    kyoku: list[tuple[int, dict[str, Any]]], raws: list[str], message: str, spilled: int = 0, code: str = "IMPORT_ROW"
) -> Reject:
    """The kyoku rejected whole: every line held, and the ``spilled`` ones counted past the bound."""
    return Reject(kyoku[0][0], bounded("\n".join(raws)), code, message, span=len(kyoku) + spilled)


def _actor(event: dict[str, Any], key: str, line: int) -> int:
    value = event.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 3:
        raise MjaiError(f"line {line}: {event.get('type')}: {key} must be a seat 0-3, not {value!r}")
    return value


def _pai(value: Any, line: int, what: str = "pai") -> str:
    if not isinstance(value, str) or not _TILE.match(value):
        raise MjaiError(f"line {line}: {what} {value!r} is not a tile of the three suits (1m-9m, 1p-9p, 1s-9s)")
    return value


def _deltas(value: Any, line: int) -> list[int] | None:
    if value is None:
        return None
    if not (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(d, int) and not isinstance(d, bool) and abs(d) <= MAX_POINTS for d in value)
    ):
        raise MjaiError(f"line {line}: deltas must be four integers of at most 2^53 either way")
    return value


def _record(
    kyoku: list[tuple[int, dict[str, Any]]],
    names: list[str] | None,
    hand_id: str,
    game_no: int,
    ruleset: str | dict[str, Any] | None,
) -> dict[str, Any]:
    line, start = kyoku[0]
    extension = start.get("x_xuezhan")
    ours: dict[str, Any] = extension if isinstance(extension, dict) else {}
    _check_ours(ours, line)
    dealer = _actor(start, "oya", line)
    tehais = start.get("tehais")
    if not (
        isinstance(tehais, list) and len(tehais) == 4 and all(isinstance(h, list) and len(h) == 13 for h in tehais)
    ):
        raise MjaiError(f"line {line}: start_kyoku: tehais must be four hands of 13 tiles")
    deal = [[_pai(t, line, "tehais tile") for t in hand] for hand in tehais]
    players = ours.get("players") or names
    if not players:
        raise MjaiError(f"line {line}: no start_game names before this kyoku: the players are unknown")
    spec = ours.get("ruleset") or ruleset or DEFAULT_RULESET
    try:
        load_ruleset(spec)
    except RuleSetError as e:
        raise MjaiError(f"line {line}: rules {spec!r}: {e}") from None
    que: list[str | None] = [None] * 4
    events: list[dict[str, Any]] = []
    deltas: list[int] | None = None
    first = True  # the dealer's first tsumo completes its 14-tile deal
    last_draw: dict[int, str] = {}
    bare: list[int] = []  # lines of the hora without deltas (a kyoku of our writer's with no claimed result)
    for number, event in kyoku[1:-1]:
        kind = event.get("type")
        if kind == "ding_que":
            seat = _actor(event, "actor", number)
            given = event.get("suit")
            suit = SUIT_OF.get(given) if isinstance(given, str) else None
            if suit is None:
                raise MjaiError(f"line {number}: ding_que: suit must be man, pin or sou")
            que[seat] = suit
        elif kind == "tsumo":
            seat, tile = _actor(event, "actor", number), _pai(event.get("pai"), number)
            if first and seat == dealer and not events:
                deal[dealer].append(tile)
            else:
                events.append({"t": "draw", "seat": seat, "tile": tile})
            last_draw[seat] = tile
            first = False
        elif kind == "dahai":
            events.append(
                {"t": "discard", "seat": _actor(event, "actor", number), "tile": _pai(event.get("pai"), number)}
            )
            first = False
        elif kind in ("pon", "daiminkan"):
            seat, source = _actor(event, "actor", number), _actor(event, "target", number)
            tile = _pai(event.get("pai"), number)
            if kind == "pon":
                events.append({"t": "pong", "seat": seat, "tile": tile, "from": source})
            else:
                events.append({"t": "kong", "seat": seat, "tile": tile, "kind": "direct", "from": source})
        elif kind == "kakan":
            events.append(
                {
                    "t": "kong",
                    "seat": _actor(event, "actor", number),
                    "tile": _pai(event.get("pai"), number),
                    "kind": "added",
                }
            )
        elif kind == "ankan":
            consumed = event.get("consumed")
            if not isinstance(consumed, list) or len(consumed) != 4:
                raise MjaiError(f"line {number}: ankan: consumed must be four tiles")
            tile = _pai(consumed[0], number, "consumed tile")
            events.append({"t": "kong", "seat": _actor(event, "actor", number), "tile": tile, "kind": "concealed"})
        elif kind == "hora":
            seat, target = _actor(event, "actor", number), _actor(event, "target", number)
            events.append(_hu(events, seat, target, deal, dealer, number))
            if event.get("deltas") is None:
                bare.append(number)
            deltas = _add(deltas, _deltas(event.get("deltas"), number), number)
        elif kind == "ryukyoku":
            deltas = _add(deltas, _deltas(event.get("deltas"), number), number)
        else:
            raise MjaiError(f"line {number}: {kind!r} is not an event of the dialect inside a kyoku")
    if bare and deltas is not None:  # read as zeros, a paid win would look unpaid beside the others
        raise MjaiError(f"line {bare[0]}: hora: no deltas, where the kyoku's other results have theirs")
    record: dict[str, Any] = {"format": "xzlog/1", "level": "dealt", "hand_id": ours.get("hand_id") or hand_id}
    if ours:  # our own writer's: the ids and times as they were
        record |= {k: ours[k] for k in ("session_id", "hand_no", "table_id", "played_at") if k in ours}
    else:
        record["session_id"] = f"{hand_id.rsplit('-', 1)[0]}-g{game_no}"
    record |= {"ruleset": spec, "players": list(players), "dealer": dealer, "deal": deal}
    exchange = ours.get("exchange")
    if exchange:
        record["deal"] = _before_exchange(deal, exchange)
        record["exchange"] = exchange
    if any(q is not None for q in que):
        record["que"] = que
    record["events"] = events
    if deltas is not None:
        record["result"] = {"deltas": deltas}
    return record


def _hu(
    events: list[dict[str, Any]], seat: int, target: int, deal: list[list[str]], dealer: int, line: int
) -> dict[str, Any]:
    """The ``hu`` of a hora, whose tile mjai does not name: the winner's last draw (self-drawn, ``target`` =
    ``actor``; the dealer's 14th tile before any), else the last discard or added kong (robbed when it was the
    target's). Whether the win was legal there is the validator's question, not the reader's."""
    if target == seat:
        drawn = next((e["tile"] for e in reversed(events) if e["t"] == "draw" and e["seat"] == seat), None)
        if drawn is None and seat == dealer:
            drawn = deal[dealer][-1]
        if drawn is None:
            raise MjaiError(f"line {line}: hora: a self-drawn win by seat {seat}, who has drawn no tile")
        return {"t": "hu", "seat": seat, "tile": drawn, "from": None}
    last = next((e for e in reversed(events) if e["t"] in ("discard", "kong") and e.get("kind") != "concealed"), None)
    if last is None:
        raise MjaiError(f"line {line}: hora: a win on target {target}'s tile before any discard")
    if last["t"] == "kong" and last["kind"] == "added" and last["seat"] == target:
        return {"t": "hu", "seat": seat, "tile": last["tile"], "from": target, "rob_kong": True}
    tile = last["tile"] if last["t"] == "discard" else next(e["tile"] for e in reversed(events) if e["t"] == "discard")
    return {"t": "hu", "seat": seat, "tile": tile, "from": target}


def _add(total: list[int] | None, deltas: list[int] | None, line: int) -> list[int] | None:
    if deltas is None:
        return total
    out = deltas if total is None else [a + b for a, b in zip(total, deltas, strict=True)]
    if any(abs(d) > MAX_POINTS for d in out):
        raise MjaiError(f"line {line}: the kyoku's deltas add up past 2^53, more than any hand pays")
    return out


BACK: Final = {"cw": "ccw", "ccw": "cw", "across": "across"}  # the exchange that undoes one


def _before_exchange(after: list[list[str]], exchange: dict[str, Any]) -> list[list[str]]:
    """The deal before 换三张, from the hands after it and what each seat gave: every receiver gives the tiles
    back, the other way round."""
    given, n = exchange["given"], len(after)
    try:
        offset = exchange_offset(exchange["direction"], n)
        back = [given[(receiver - offset) % n] for receiver in range(n)]
        return _names(exchanged(_kinds(after), BACK[exchange["direction"]], _kinds(back)))
    except (IllegalAction, TileError, KeyError, TypeError, IndexError) as exc:
        raise MjaiError(f"x_xuezhan exchange does not fit the hands: {exc}") from None


def _kinds(hands: Iterable[Iterable[str]]) -> list[list[int]]:
    return [parse_tiles(" ".join(h)) for h in hands]


def _names(hands: Iterable[Iterable[int]]) -> list[list[str]]:
    return [[TILE_NAMES[k] for k in h] for h in hands]


# ------------------------------------------------------------------------------------------------ writing
class NotWritable(ValueError):
    """A record mjai cannot carry (three players, no deal) or that does not parse."""


def write_mjai(
    records: Iterable[dict[str, Any]], *, on_skip: Callable[[dict[str, Any], NotWritable], None] | None = None
) -> Iterator[dict[str, Any]]:
    """The mjai events of ``records`` (xzlog/1 objects, each with a wall or a deal and events), a game per run
    of consecutive records with the same session and players. Records of a session must be written in order.
    A record mjai cannot carry (or that does not parse) raises :class:`NotWritable`, or, given ``on_skip``, is
    handed to it with the reason and left out; ``on_skip`` is called before the next record is read, so a
    caller streaming ``records`` knows which input it was."""
    session: tuple[Any, ...] | None = None
    for record in records:
        try:
            events = mjai_events(record)
        except NotWritable as exc:
            if on_skip is None:
                raise
            on_skip(record, exc)
            continue
        key = (record.get("session_id"), tuple(record["players"]))
        if key != session:
            if session is not None:
                yield {"type": "end_game"}
            yield {"type": "start_game", "names": list(record["players"])}
            session = key
        yield from events
    if session is not None:
        yield {"type": "end_game"}


def mjai_events(record: dict[str, Any]) -> list[dict[str, Any]]:
    """One record's kyoku: ``start_kyoku`` … ``end_kyoku`` (no start_game). :class:`NotWritable` for a record
    mjai cannot carry, or one that does not parse (a field missing or of the wrong type, a tile that is none)."""
    try:
        return _kyoku(record)
    except NotWritable:
        raise
    except (KeyError, TypeError, ValueError, IllegalAction) as exc:
        raise NotWritable(f"not a record mjai can be written from: {type(exc).__name__}: {exc}") from None


def _kyoku(record: dict[str, Any]) -> list[dict[str, Any]]:
    players = record.get("players")
    if not isinstance(players, list) or len(players) != 4:
        raise NotWritable("mjai carries four players (start_game names): a table of three cannot be written")
    dealer = record["dealer"]
    if record.get("deal") is not None:
        deal = [list(h) for h in record["deal"]]
    elif record.get("wall") is not None:
        wall = (
            parse_tiles(" ".join(record["wall"])) if isinstance(record["wall"], list) else parse_tiles(record["wall"])
        )
        deal = [[TILE_NAMES[k] for k in hand] for hand in deal_hands(wall, dealer, 4)]
    else:
        raise NotWritable(
            "no deal and no wall: mjai starts a kyoku with the dealt hands (a settlement record has none)"
        )
    exchange = record.get("exchange")
    if exchange:  # mjai's tehais are the hands after 换三张
        deal = _names(exchanged(_kinds(deal), exchange["direction"], _kinds(exchange["given"])))
    fourteenth = deal[dealer].pop()
    ours: dict[str, Any] = {
        k: record[k]
        for k in ("hand_id", "session_id", "hand_no", "table_id", "played_at", "ruleset", "exchange")
        if k in record
    }
    ours["players"] = list(players)
    kyoku = ((record.get("hand_no") or 1) - 1) % 4 + 1
    out: list[dict[str, Any]] = [
        {
            "type": "start_kyoku",
            "kyoku": kyoku,
            "oya": dealer,
            "scores": [0, 0, 0, 0],
            "tehais": deal,
            "x_xuezhan": ours,
        }
    ]
    for seat, suit in enumerate(record.get("que") or []):
        if suit is not None:
            out.append({"type": "ding_que", "actor": seat, "suit": SUIT_NAME[suit]})
    out.append({"type": "tsumo", "actor": dealer, "pai": fourteenth})
    hora_at: list[int] = []
    drawn: dict[int, str | None] = {dealer: fourteenth}
    for event in record["events"]:
        t, seat, tile = event["t"], event["seat"], event.get("tile")
        if t == "draw":
            out.append({"type": "tsumo", "actor": seat, "pai": tile})
            drawn[seat] = tile
            continue
        if t == "discard":
            out.append({"type": "dahai", "actor": seat, "pai": tile, "tsumogiri": drawn.get(seat) == tile})
        elif t == "pong":
            out.append({"type": "pon", "actor": seat, "target": event["from"], "pai": tile, "consumed": [tile, tile]})
        elif t == "kong":
            kind = event["kind"]
            if kind == "direct":
                out.append(
                    {"type": "daiminkan", "actor": seat, "target": event["from"], "pai": tile, "consumed": [tile] * 3}
                )
            elif kind == "added":
                out.append({"type": "kakan", "actor": seat, "pai": tile, "consumed": [tile] * 3})
            else:
                out.append({"type": "ankan", "actor": seat, "consumed": [tile] * 4})
        elif t == "hu":
            source = event.get("from")
            hora_at.append(len(out))
            out.append({"type": "hora", "actor": seat, "target": seat if source is None else source})
        drawn[seat] = None
    _write_deltas(record, out, hora_at)
    out.append({"type": "end_kyoku"})
    return out


def _wall_ran_out(record: dict[str, Any], hora_at: list[int], out: list[dict[str, Any]]) -> bool:
    """Did the hand end with the wall (流局/黄庄 for those still in) rather than with its last win?"""
    try:
        mode = load_ruleset(record["ruleset"]).mode
    except (RuleSetError, KeyError, TypeError):
        mode = "blood_battle"
    winners = {out[at]["actor"] for at in hora_at}
    if mode == "blood_flow":
        return True
    if mode == "ordinary":
        return not winners
    return len(winners) < len(record["players"]) - 1


def _write_deltas(record: dict[str, Any], out: list[dict[str, Any]], hora_at: list[int]) -> None:
    """Each hora's deltas are its win's payments (what the record claims at that hu); everything else (kongs,
    the end of the wall, penalties) goes on the last hora, or on a ryukyoku when the wall ran out. Without
    itemised payments the hand's deltas go on the last hora or the ryukyoku whole."""
    result = record.get("result")
    if not isinstance(result, dict) or result.get("deltas") is None:
        if not hora_at:
            out.append({"type": "ryukyoku"})
        return
    total = list(result["deltas"])
    hu_events = [i for i, e in enumerate(record["events"]) if e["t"] == "hu"]
    per_hora: list[list[int]] = [[0, 0, 0, 0] for _ in hora_at]
    payments = result.get("payments")
    if payments:
        for p in payments:
            if p.get("reason") in ("hu", "transfer") and p.get("event") in hu_events:
                k = hu_events.index(p["event"])
                per_hora[k][p["from"]] -= p["amount"]
                if p.get("to") is not None:
                    per_hora[k][p["to"]] += p["amount"]
    rest = [d - sum(h[s] for h in per_hora) for s, d in enumerate(total)]
    ended_by_wall = _wall_ran_out(record, hora_at, out)
    for k, at in enumerate(hora_at):
        out[at]["deltas"] = per_hora[k]
    if ended_by_wall or not hora_at:
        out.append({"type": "ryukyoku", "deltas": rest})
    else:
        out[hora_at[-1]]["deltas"] = [a + b for a, b in zip(per_hora[-1], rest, strict=True)]
