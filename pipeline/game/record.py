"""Read and write ``xzlog/1`` records (one JSON object per hand; ``schemas/XZLOG.md``).

:func:`parse_record` checks the record's shape by hand — the same rules as the normative JSON Schema
``schemas/xzlog-1.schema.json``, which a test holds it to, at a fraction of a schema validator's cost —
and returns a frozen :class:`Record` with tiles as kinds and events as frozen values. Anything wrong
raises :class:`RecordError` carrying a stable code (``SCHEMA_*``, ``TILE_NOTATION``, ``RULESET_UNKNOWN``)
and, where it applies, the event index. The claimed ``result`` is read apart
(:func:`parse_result`): a malformed claim does not stop the replay. :func:`parse_json` turns one input line
into its JSON value, the one JSON reader of the validator and of ingest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, TypeGuard

import orjson

from pipeline.codes import Fault
from pipeline.game.commitment import SCHEMES as COMMIT_SCHEMES
from pipeline.game.commitment import Commitment
from pipeline.game.events import DISCARDS, DRAWS, Discard, Draw, Event, Hu, Kong, Pong
from pipeline.game.start import DIRECTIONS
from pipeline.rules.fan import PATTERN_BY_ID, SPECIAL_NAMES
from pipeline.rules.ruleset import MAX_POINTS, Override, RuleSet, RuleSetError, load_ruleset
from pipeline.rules.settle import REASONS, Payment
from pipeline.rules.tiles import SUITS, TILE_NAMES, kind_of_name
from pipeline.rules.values import Value

FORMAT: Final = "xzlog/1"
TOP_FIELDS: Final = frozenset(
    {
        "format",
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
        "result",
        "level",
        "end",
        "observer",
        "unrecorded",
        "commitment",
    }
)
UNRECORDED: Final = ("que",)  # the facts a record may say its source did not store (schemas/XZLOG.md)
REQUIRED: Final = ("hand_id", "ruleset", "players", "dealer", "events")
EVENT_FIELDS: Final = {
    "draw": frozenset({"t", "seat", "tile", "ms"}),
    "discard": frozenset({"t", "seat", "tile", "ms"}),
    "pong": frozenset({"t", "seat", "tile", "from", "ms"}),
    "kong": frozenset({"t", "seat", "tile", "kind", "from", "ms"}),
    "hu": frozenset({"t", "seat", "tile", "from", "rob_kong", "ms"}),
}
RESULT_FIELDS: Final = frozenset({"payments", "deltas", "wins"})
PAYMENT_FIELDS: Final = frozenset({"from", "to", "amount", "reason", "event"})
WIN_FIELDS: Final = frozenset({"seat", "event", "fan", "points", "patterns"})
END_FIELDS: Final = frozenset({"seat", "state", "fan", "void"})
END_STATES: Final = ("ready", "not_ready", "pig")
LEVELS: Final = ("full", "dealt", "observer", "settlement")
UNKNOWN_TILE: Final = -1  # a settlement record's kong or win whose tile the source did not name
MAX_CLAIMED_FAN: Final = 64  # above any switch's count: a claim beyond it is not a hand (issue 24: bounded numbers)


def parse_json(data: bytes | str) -> tuple[Any, str | None]:
    """The JSON value of one line, or why it is not JSON: bad syntax, bad UTF-8, or nesting too deep (orjson
    refuses depth past 1,024 instead of overflowing the stack, as the standard library's reader would)."""
    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError as exc:
        if "not valid UTF-8" in str(exc):  # most often a GBK export
            return None, "not UTF-8 — GBK? convert with iconv -f GBK -t UTF-8"
        return None, f"not JSON: {exc}"


class RecordError(Fault):
    """A record that cannot be replayed (a :class:`~pipeline.codes.Fault`: a ``SCHEMA_*``, ``TILE_NOTATION`` or
    ``RULESET_UNKNOWN`` code, the message, the ``event`` index and ``seat`` where they apply)."""


class ClaimedWin(Value):
    """One win as the source system claimed it: who, at which event, and (if given) its fan and points, and the
    pattern ids it was scored with (a settlement record's, from which the fan is recomputed)."""

    __slots__ = ()
    _fields = ("seat", "event", "fan", "points", "patterns")

    def __init__(
        self, seat: int, event: int, fan: int | None, points: int | None, patterns: tuple[str, ...] | None = None
    ) -> None:
        self._v = (seat, event, fan, points, patterns)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def event(self) -> int:
        return self._v[1]

    @property
    def fan(self) -> int | None:
        return self._v[2]

    @property
    def points(self) -> int | None:
        return self._v[3]

    @property
    def patterns(self) -> tuple[str, ...] | None:
        return self._v[4]


class DeclaredEnd(Value):
    """A player still in at the end, as a settlement or observer record declares it (``end``): ``ready`` with the
    value ``fan`` of its ready hand for 查大叫 (when given), ``not_ready``, or ``pig`` (花猪); ``void``: it owes
    the profile's ``void_end_penalty`` (it still holds tiles of its void suit), ``False`` that it does not, ``None``
    not stated (a score sheet has no column for it)."""

    __slots__ = ()
    _fields = ("seat", "state", "fan", "void")

    def __init__(self, seat: int, state: str, fan: int | None = None, void: bool | None = None) -> None:
        self._v = (seat, state, fan, void)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def state(self) -> str:
        return self._v[1]

    @property
    def fan(self) -> int | None:
        return self._v[2]

    @property
    def void(self) -> bool | None:
        return self._v[3]


class Claimed(Value):
    """What the source system claimed: payments (``None``: not itemised), deltas, and optionally each win's fan
    and points."""

    __slots__ = ()
    _fields = ("payments", "deltas", "wins")

    def __init__(
        self, payments: tuple[Payment, ...] | None, deltas: tuple[int, ...], wins: tuple[ClaimedWin, ...]
    ) -> None:
        self._v = (payments, deltas, wins)

    @property
    def payments(self) -> tuple[Payment, ...] | None:
        return self._v[0]

    @property
    def deltas(self) -> tuple[int, ...]:
        return self._v[1]

    @property
    def wins(self) -> tuple[ClaimedWin, ...]:
        return self._v[2]


class Record(Value):
    """A parsed record: everything the replay needs, tiles as kinds, events as event values."""

    __slots__ = ()
    _fields = (
        "hand_id",
        "rules",
        "players",
        "dealer",
        "wall",
        "deal",
        "exchange_direction",
        "exchange_given",
        "que",
        "events",
        "session_id",
        "hand_no",
        "table_id",
        "played_at",
        "level",
        "ends",
        "observer",
        "shown",
        "unrecorded",
        "commitment",
        "ms",
    )

    def __init__(
        self,
        hand_id: str,
        rules: RuleSet,
        players: tuple[str, ...],
        dealer: int,
        wall: tuple[int, ...] | None,
        deal: tuple[tuple[int, ...] | None, ...] | None,
        exchange_direction: str | None,
        exchange_given: tuple[tuple[int, ...] | None, ...] | None,
        que: tuple[int | None, ...] | None,
        events: tuple[Event, ...],
        session_id: str | None = None,
        hand_no: int | None = None,
        table_id: str | None = None,
        played_at: str | None = None,
        level: str = "full",
        ends: tuple[DeclaredEnd, ...] | None = None,
        observer: int | None = None,
        shown: Mapping[int, tuple[int, ...]] | None = None,
        unrecorded: frozenset[str] = frozenset(),
        commitment: Commitment | None = None,
        ms: tuple[int | None, ...] | None = None,
    ) -> None:
        self._v = (
            hand_id,
            rules,
            players,
            dealer,
            wall,
            deal,
            exchange_direction,
            exchange_given,
            que,
            events,
            session_id,
            hand_no,
            table_id,
            played_at,
            level,
            ends,
            observer,
            shown,
            unrecorded,
            commitment,
            ms,
        )

    @property
    def hand_id(self) -> str:
        return self._v[0]

    @property
    def rules(self) -> RuleSet:
        return self._v[1]

    @property
    def players(self) -> tuple[str, ...]:
        return self._v[2]

    @property
    def dealer(self) -> int:
        return self._v[3]

    @property
    def wall(self) -> tuple[int, ...] | None:
        return self._v[4]

    @property
    def deal(self) -> tuple[tuple[int, ...] | None, ...] | None:  # None: a hand an observer did not see
        return self._v[5]

    @property
    def exchange_direction(self) -> str | None:
        return self._v[6]

    @property
    def exchange_given(self) -> tuple[tuple[int, ...] | None, ...] | None:
        return self._v[7]

    @property
    def que(self) -> tuple[int | None, ...] | None:
        return self._v[8]

    @property
    def events(self) -> tuple[Event, ...]:
        return self._v[9]

    @property
    def session_id(self) -> str | None:
        return self._v[10]

    @property
    def hand_no(self) -> int | None:
        return self._v[11]

    @property
    def table_id(self) -> str | None:
        return self._v[12]

    @property
    def played_at(self) -> str | None:
        return self._v[13]

    @property
    def level(self) -> str:  # full (a wall), dealt (a deal, no wall), observer (one seat's view), settlement
        return self._v[14]

    @property
    def ends(self) -> tuple[DeclaredEnd, ...] | None:  # the declared end states (settlement, observer records)
        return self._v[15]

    @property
    def observer(self) -> int | None:  # an observer record's seat: the one hand it sees
        return self._v[16]

    @property
    def shown(self) -> Mapping[int, tuple[int, ...]] | None:  # an observer's: event index → a winner's shown hand
        return self._v[17]

    @property
    def unrecorded(self) -> frozenset[str]:  # facts the source did not store ("que": the void suits are unknown)
        return self._v[18]

    @property
    def commitment(self) -> Commitment | None:  # the wall commitment the source published (pipeline.game.commitment)
        return self._v[19]

    @property
    def ms(self) -> tuple[int | None, ...] | None:  # per event, its decision time (ms); None: no event has one
        return self._v[20]

    @property
    def void_unknown(self) -> bool:  # 定缺 was played but not recorded: no check may rest on a void suit
        return "que" in self._v[18] and self._v[8] is None


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _unknown(obj: dict[str, Any], known: set[str] | frozenset[str]) -> list[str]:
    """The keys of ``obj`` the format does not know (``x_*`` extensions are always allowed)."""
    for k in obj:  # the common case, every key known, without building and sorting a list
        if k not in known and not k.startswith("x_"):
            return sorted(k for k in obj if k not in known and not k.startswith("x_"))
    return []


def _seat(value: Any, what: str, event: int | None = None) -> int:
    """A seat 0-3 (``type(...) is int`` also turns away booleans). ``what`` names the field in the error;
    with an ``event`` index it is that event's field."""
    if type(value) is not int or not 0 <= value <= 3:
        where = what if event is None else f"event {event} {what}"
        raise RecordError(
            "SCHEMA_TYPE" if event is None else "SCHEMA_EVENT",
            f"{where} must be a seat 0-3, got {value!r}",
            event=event,
        )
    return value


def _tile(value: Any, what: str, event: int | None = None) -> int:
    kind = kind_of_name(value)
    if kind < 0:
        where = what if event is None else f"event {event} {what}"
        raise RecordError("TILE_NOTATION", f"{where}: {value!r} is not a tile like '7p'", event=event)
    return kind


def _tiles(value: Any, what: str, size: int | tuple[int, ...] | None = None) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise RecordError("SCHEMA_TYPE", f"{what} must be a list of tiles")
    sizes = (size,) if isinstance(size, int) else size
    if sizes is not None and len(value) not in sizes:
        raise RecordError("SCHEMA_TYPE", f"{what} must hold {' or '.join(map(str, sizes))} tiles, got {len(value)}")
    items: list[Any] = value
    kinds = [0] * len(items)
    for i in range(len(items)):
        kind = kind_of_name(items[i])
        if kind < 0:
            return tuple(_tile(v, what) for v in value)  # the careful path: raises, naming the first bad tile
        kinds[i] = kind  # a small int: a store of a cached object, no append's growth
    return tuple(kinds)


def parse_ruleset(value: Any, override: Override | None = None) -> RuleSet:
    """The record's ``ruleset`` (a profile name or an object with overrides), then the caller's ``override``."""
    try:
        return override.apply(value) if override is not None else load_ruleset(value)
    except RuleSetError as exc:
        raise RecordError("RULESET_UNKNOWN", str(exc)) from None


def parse_event(obj: Any, index: int, ms: dict[int, int] | None = None) -> Event:
    """One event object → a frozen event.

    Nine events in ten are a draw or a discard of exactly ``t``, ``seat`` and ``tile``; those that are also
    well formed are answered here, with the shared values of :data:`~pipeline.game.events.DRAWS` and
    :data:`~pipeline.game.events.DISCARDS`, and so are pongs and wins (``from`` too) and concealed and added kongs
    (``kind`` too). Everything else (and every error) goes through :func:`_parse_event`, whose answer for these
    is equal. An event with a decision time (``ms``) is never one of these: :func:`_parse_event` puts its time in
    ``ms`` (event index → ms), so a record without times pays nothing for them.
    """
    if type(obj) is dict and 3 <= len(obj) <= 4:  # narrowed to a dict here: obj.get below is a native call
        keys = _EVENT_KEYS
        t, seat = obj.get(keys[0]), obj.get(keys[1])
        if type(t) is str and type(seat) is int and 0 <= seat <= 3:
            kind = kind_of_name(obj.get(keys[2]))
            if kind >= 0:
                if len(obj) == 3:
                    if t == "draw":
                        return DRAWS[seat][kind]
                    if t == "discard":
                        return DISCARDS[seat][kind]
                elif t == "pong":
                    source = obj.get(keys[3])
                    if type(source) is int and 0 <= source <= 3:
                        return Pong(seat, kind, source)
                elif t == "hu":  # t, seat, tile and from: no rob_kong
                    source = obj.get(keys[3], _ABSENT)
                    if source is None:
                        return Hu(seat, kind, None)
                    if type(source) is int and 0 <= source <= 3:
                        return Hu(seat, kind, source)
                elif t == "kong":  # t, seat, tile and kind: a kong without a source
                    how = obj.get("kind")
                    if how == "concealed" or how == "added":
                        return Kong(seat, kind, how)
    return _parse_event(obj, index, ms)


# The keys parse_event looks up: "t", "seat", "tile" and "from", as the key objects of the record being read. orjson
# hands out one str object per distinct key (its key cache), never this module's literals, and a dictionary finds a
# key given as the very object it holds by identity, where an equal literal is compared character by character.
_EVENT_KEYS: Final[list[str]] = ["t", "seat", "tile", "from"]


def _adopt_event_keys(events: list[Any]) -> None:
    """Make :data:`_EVENT_KEYS` the key objects of the first event of ``events`` (once per record: a key
    object of another reader, or of an earlier record, still finds its equal, only by comparing characters).
    ``from``, in no first event, stays the key object of the last record whose first event had one (orjson's
    key cache most often hands out the same object for it)."""
    first = events[0] if events else None
    if type(first) is dict:
        for key in first:
            at = _PLAIN_AT.get(key, -1)  # a look-up by the key's cached hash, not a comparison with each name
            if at >= 0:
                _EVENT_KEYS[at] = key


PLAIN_KEYS: Final = ("t", "seat", "tile", "from")
_PLAIN_AT: Final[dict[object, int]] = {key: at for at, key in enumerate(PLAIN_KEYS)}


def _parse_event(obj: Any, index: int, ms: dict[int, int] | None = None) -> Event:
    if not isinstance(obj, dict):
        raise RecordError("SCHEMA_EVENT", f"event {index} is not an object", event=index)
    t = obj.get("t")
    allowed = EVENT_FIELDS.get(t) if isinstance(t, str) else None
    if allowed is None:
        raise RecordError("SCHEMA_EVENT", f"event {index}: unknown type t={t!r}", event=index)
    extra = [k for k in obj if k not in allowed and not k.startswith("x_")]
    if extra:
        raise RecordError(
            "SCHEMA_EVENT", f"event {index} ({t}): unknown field(s) {', '.join(sorted(extra))}", event=index
        )
    if "seat" not in obj or "tile" not in obj:
        raise RecordError("SCHEMA_EVENT", f"event {index} ({t}) needs 'seat' and 'tile'", event=index)
    seat = _seat(obj["seat"], "seat", index)
    tile = _tile(obj["tile"], "tile", index)
    if "ms" in obj:
        if not _is_int(obj["ms"]) or obj["ms"] < 0:
            raise RecordError("SCHEMA_EVENT", f"event {index}: 'ms' must be a whole number >= 0", event=index)
        if ms is not None:
            ms[index] = obj["ms"]
    if t == "draw":
        return Draw(seat, tile)
    if t == "discard":
        return Discard(seat, tile)
    if t == "pong":
        if "from" not in obj:
            raise RecordError("SCHEMA_EVENT", f"event {index} (pong) needs 'from'", event=index)
        return Pong(seat, tile, _seat(obj["from"], "from", index))
    if t == "kong":
        kind = obj.get("kind")
        if kind not in ("direct", "added", "concealed"):
            raise RecordError(
                "SCHEMA_EVENT",
                f"event {index} (kong): kind must be direct, added or concealed, got {kind!r}",
                event=index,
            )
        if kind == "direct":
            if "from" not in obj:
                raise RecordError("SCHEMA_EVENT", f"event {index} (direct kong) needs 'from'", event=index)
            return Kong(seat, tile, "direct", _seat(obj["from"], "from", index))
        if "from" in obj:
            raise RecordError("SCHEMA_EVENT", f"event {index} ({kind} kong) takes no 'from'", event=index)
        return Kong(seat, tile, kind)
    if "from" not in obj:
        raise RecordError(
            "SCHEMA_EVENT", f"event {index} (hu) needs 'from' (a seat, or null when self-drawn)", event=index
        )
    source = obj["from"]
    rob = obj.get("rob_kong", False)
    if not isinstance(rob, bool):
        raise RecordError("SCHEMA_EVENT", f"event {index} (hu): rob_kong must be true or false", event=index)
    if source is None:
        if rob:
            raise RecordError("SCHEMA_EVENT", f"event {index} (hu): a robbed kong has a 'from' seat", event=index)
        return Hu(seat, tile, None)
    return Hu(seat, tile, _seat(source, "from", index), rob_kong=rob)


def parse_record(obj: Any, *, profile_override: Override | None = None) -> Record:
    """A record object (parsed JSON) → :class:`Record`, or :class:`RecordError`."""
    if not isinstance(obj, dict):
        raise RecordError("SCHEMA_JSON", f"a record is a JSON object, got {type(obj).__name__}")
    fmt = obj.get("format")
    if fmt != FORMAT:
        raise RecordError("SCHEMA_FORMAT", f"format {fmt!r} is not {FORMAT!r}")
    unknown = [k for k in obj if k not in TOP_FIELDS and not k.startswith("x_")]
    if unknown:
        raise RecordError("SCHEMA_FIELD", f"unknown field(s): {', '.join(sorted(unknown))}")
    if obj.get("level") is not None and obj["level"] not in LEVELS:
        raise RecordError("SCHEMA_TYPE", f"level must be one of {', '.join(LEVELS)}, got {obj['level']!r}")
    missing = [k for k in REQUIRED if k not in obj]
    if "wall" not in obj and "deal" not in obj and obj.get("level") != "settlement":
        # an observer record carries its observer's deal
        missing.append("deal (an observer's)" if "observer" in obj else "wall or deal (or level: settlement)")
    if missing:
        raise RecordError("SCHEMA_FIELD", f"missing field(s): {', '.join(missing)}")
    level = _level(obj)
    hand_id = obj["hand_id"]
    if not isinstance(hand_id, str) or not hand_id:
        raise RecordError("SCHEMA_TYPE", "hand_id must be a non-empty string")
    rules = parse_ruleset(obj["ruleset"], profile_override)
    n = rules.players
    players = obj["players"]
    if (
        not isinstance(players, list)
        or not 3 <= len(players) <= 4
        or not all(isinstance(p, str) and p for p in players)
    ):
        raise RecordError("SCHEMA_TYPE", "players must be a list of 3 or 4 non-empty strings")
    if len(players) != n:
        raise _shape(f"{len(players)} players, but the table of profile {rules.profile!r} seats {n}")
    dealer = _seat(obj["dealer"], "dealer")
    if dealer >= n:
        raise _shape(f"dealer {dealer}: the table seats {n} (0-{n - 1})")
    observer = _seat(obj["observer"], "observer") if level == "observer" else None
    if observer is not None and observer >= n:
        raise _shape(f"observer {observer}: the table seats {n} (0-{n - 1})")
    session_id = _optional_str(obj, "session_id")
    table_id = _optional_str(obj, "table_id")
    played_at = _optional_str(obj, "played_at")
    hand_no = obj.get("hand_no")
    if hand_no is not None and (not _is_int(hand_no) or hand_no < 1):
        raise RecordError("SCHEMA_TYPE", f"hand_no must be a whole number >= 1, got {hand_no!r}")
    wall = _tiles(obj["wall"], "wall", (72, 108)) if "wall" in obj else None
    if wall is not None and len(wall) != rules.tiles:
        raise _shape(f"a wall of {len(wall)} tiles, but profile {rules.profile!r} plays {rules.tiles} ({rules.suits})")
    deal = None
    if "deal" in obj:
        raw = obj["deal"]
        if not isinstance(raw, list) or not 3 <= len(raw) <= 4:
            raise RecordError("SCHEMA_TYPE", "deal must be a list of 3 or 4 hands")
        if len(raw) != n:
            raise _shape(f"deal holds {len(raw)} hands, but the table seats {n}")
        deal = tuple(
            None if hand is None and observer is not None and i != observer else _tiles(hand, f"deal[{i}]", (13, 14))
            for i, hand in enumerate(raw)
        )
    direction = given = None
    if "exchange" in obj:
        ex = obj["exchange"]
        if not isinstance(ex, dict) or _unknown(ex, {"direction", "given"}) or ex.get("direction") not in DIRECTIONS:
            raise RecordError("SCHEMA_TYPE", "exchange must be {direction: cw|ccw|across, given: 3 tiles per seat}")
        raw_given = ex.get("given")
        if not isinstance(raw_given, list) or len(raw_given) != n:
            raise RecordError("SCHEMA_TYPE", f"exchange.given must hold {n} lists of 3 tiles (one per seat)")
        direction = ex["direction"]
        # an observer did not see what a hidden hand passed: null where that hand's deal is null too
        given = tuple(
            None if g is None and deal is not None and deal[i] is None else _tiles(g, f"exchange.given[{i}]", 3)
            for i, g in enumerate(raw_given)
        )
    que = None
    if "que" in obj:
        raw_que = obj["que"]
        if not isinstance(raw_que, list) or len(raw_que) != n or any(q not in ("m", "p", "s", None) for q in raw_que):
            raise RecordError("TILE_VOID", f"que must be {n} suits m, p, s (or null), one per seat, got {raw_que!r}")
        que = tuple(None if q is None else SUITS.index(q) for q in raw_que)
    unrecorded: frozenset[str] = frozenset()
    if "unrecorded" in obj:
        raw_un = obj["unrecorded"]
        if not isinstance(raw_un, list) or any(u not in UNRECORDED for u in raw_un):
            raise RecordError("SCHEMA_TYPE", f"unrecorded must list facts of {list(UNRECORDED)}, got {raw_un!r}")
        unrecorded = frozenset(raw_un)
        if "que" in unrecorded and que is not None:
            raise RecordError("SCHEMA_FIELD", "que is given and also listed as unrecorded")
    commitment = _commitment(obj["commitment"]) if "commitment" in obj else None
    raw_events = obj["events"]
    if not isinstance(raw_events, list):
        raise RecordError("SCHEMA_TYPE", "events must be a list")
    _adopt_event_keys(raw_events)
    shown: dict[int, tuple[int, ...]] = {}  # an observer record's winners' shown hands
    times: dict[int, int] = {}  # event index → its decision time, for the events that carry one
    if level == "settlement":
        events = tuple([_settlement_event(e, i, times) for i, e in enumerate(raw_events)])
    elif observer is not None:
        events = tuple([_observer_event(e, i, observer, shown, times) for i, e in enumerate(raw_events)])
    else:
        events = tuple([parse_event(e, i, times) for i, e in enumerate(raw_events)])
    if n < 4:  # the reader knows seats 0-3; a smaller table has fewer
        for i, ev in enumerate(events):
            source = ev.source if isinstance(ev, (Pong, Kong, Hu)) else None
            if ev.seat >= n or (source is not None and source >= n):
                raise _shape(f"event {i} names seat {max(ev.seat, source or 0)}: the table seats {n}", event=i)
    return Record(
        hand_id=hand_id,
        rules=rules,
        players=tuple(players),
        dealer=dealer,
        wall=wall,
        deal=deal,
        exchange_direction=direction,
        exchange_given=given,
        que=que,
        events=events,
        hand_no=hand_no,
        level=level,
        ends=_ends(obj["end"], n) if "end" in obj else None,
        observer=observer,
        shown=shown if observer is not None else None,
        session_id=session_id,
        table_id=table_id,
        played_at=played_at,
        unrecorded=unrecorded,
        commitment=commitment,
        ms=tuple([times.get(i) for i in range(len(events))]) if times else None,
    )


_HEX: Final = frozenset("0123456789abcdef")


def _commitment(raw: Any) -> Commitment:
    """``commitment``: {scheme, hash, salt, round, seed?}, hex in lower case (schemas/XZLOG.md)."""
    if not isinstance(raw, dict) or _unknown(raw, {"scheme", "hash", "salt", "round", "seed"}):
        raise RecordError("SCHEMA_TYPE", "commitment must be {scheme, hash, salt, round, seed?}")
    scheme, digest, salt, number, seed = (raw.get(k) for k in ("scheme", "hash", "salt", "round", "seed"))
    if scheme not in COMMIT_SCHEMES:
        raise RecordError("SCHEMA_TYPE", f"commitment.scheme {scheme!r} is not one of {list(COMMIT_SCHEMES)}")
    if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX):
        raise RecordError("SCHEMA_TYPE", "commitment.hash must be 64 lower-case hex digits")
    if not isinstance(salt, str) or (
        seed is not None and not (isinstance(seed, str) and len(seed) == 64 and set(seed) <= _HEX)
    ):
        raise RecordError("SCHEMA_TYPE", "commitment.salt must be a string, commitment.seed 64 lower-case hex digits")
    if not _is_int(number) or number < 1:
        raise RecordError("SCHEMA_TYPE", "commitment.round must be a whole number >= 1")
    return Commitment(scheme, digest, salt, seed, number)


def _optional_str(obj: dict[str, Any], name: str) -> str | None:
    """An optional string field (named in the call to :class:`Record`, not passed as ``**`` a dictionary: that
    call is generic, several times the cost of building the record)."""
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise RecordError("SCHEMA_TYPE", f"{name} must be a string")
    return value


def _level(obj: dict[str, Any]) -> str:
    """The record's level: declared (and agreeing with what it carries), or inferred from it."""
    if "wall" in obj:
        inferred = "full"
    elif "observer" in obj:
        inferred = "observer"
    else:
        inferred = "dealt" if "deal" in obj else "settlement"
    if "observer" in obj and inferred != "observer":
        raise RecordError("SCHEMA_FIELD", "observer names the seat of an observer record, which has no wall")
    declared = obj.get("level")
    if declared is not None and declared != inferred:
        has = _CARRIES[inferred]
        raise RecordError("SCHEMA_FIELD", f"level {declared!r} does not fit a record with {has} ({inferred!r})")
    if inferred not in ("settlement", "observer") and "end" in obj:
        raise RecordError(
            "SCHEMA_FIELD",
            "end states are declared by settlement records only (and by observer records, of the hands they do not "
            "see): the others are replayed",
        )
    return inferred


_CARRIES: Final = {
    "full": "a wall",
    "dealt": "a deal, no wall and no observer",
    "observer": "an observer and no wall",
    "settlement": "no wall and no deal",
}


def _observer_event(
    obj: Any, index: int, observer: int, shown: dict[int, tuple[int, ...]], ms: dict[int, int] | None = None
) -> Event:
    """An observer record's event: the draws of the other seats may be hidden (no ``tile``:
    :data:`UNKNOWN_TILE`), the observer's own are seen; a win may show the winner's ``hand`` (its concealed
    tiles with the winning tile, into ``shown``)."""
    if type(obj) is dict and obj.get("t") == "hu" and "hand" in obj:
        shown[index] = _tiles(obj["hand"], f"event {index} hand", (2, 5, 8, 11, 14))
        obj = {k: v for k, v in obj.items() if k != "hand"}
    if type(obj) is dict and obj.get("t") == "draw" and "tile" not in obj:
        event = _parse_event({**obj, "tile": "1m"}, index, ms)
        if event.seat == observer:
            raise RecordError(
                "SCHEMA_EVENT", f"event {index}: the observer's own draw (seat {observer}) names its tile", event=index
            )
        return Draw(event.seat, UNKNOWN_TILE)
    return parse_event(obj, index, ms)


def _settlement_event(obj: Any, index: int, ms: dict[int, int] | None = None) -> Event:
    """A settlement record's event: a kong or a win, its tile optional (:data:`UNKNOWN_TILE` when not given)."""
    if isinstance(obj, dict) and obj.get("t") not in ("kong", "hu"):
        raise RecordError(
            "SCHEMA_EVENT",
            f"event {index}: a settlement record holds kongs and wins only, not {obj.get('t')!r}",
            event=index,
        )
    if isinstance(obj, dict) and "tile" not in obj:
        event = _parse_event({**obj, "tile": "1m"}, index, ms)
        if isinstance(event, Kong):
            return Kong(event.seat, UNKNOWN_TILE, event.kind, event.source)
        assert isinstance(event, Hu)
        return Hu(event.seat, UNKNOWN_TILE, event.source, event.rob_kong)
    return _parse_event(obj, index, ms)


def _ends(raw: Any, n: int) -> tuple[DeclaredEnd, ...]:
    if not isinstance(raw, list):
        raise RecordError("SCHEMA_TYPE", "end must be a list of {seat, state, fan}")
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict) or _unknown(e, END_FIELDS):
            raise RecordError("SCHEMA_TYPE", f"end[{i}] must be {{seat, state, fan}}")
        seat, state, fan = e.get("seat"), e.get("state"), e.get("fan")
        if not _is_int(seat) or not 0 <= seat < n:
            raise RecordError("SCHEMA_TYPE", f"end[{i}]: seat must be 0-{n - 1}")
        if state not in END_STATES:
            raise RecordError("SCHEMA_TYPE", f"end[{i}]: state must be ready, not_ready or pig, got {state!r}")
        if fan is not None and (not _is_int(fan) or not 0 <= fan <= MAX_CLAIMED_FAN or state != "ready"):
            raise RecordError("SCHEMA_TYPE", f"end[{i}]: fan is a ready player's value, 0-{MAX_CLAIMED_FAN}")
        void = e.get("void")
        if void is not None and not isinstance(void, bool):
            raise RecordError("SCHEMA_TYPE", f"end[{i}]: void must be true or false")
        out.append(DeclaredEnd(seat, state, fan, void))
    return tuple(out)


def _shape(message: str, event: int | None = None) -> RecordError:
    """The record's table (players, seats, wall, hands) is not the table of its ruleset."""
    return RecordError("SCHEMA_SHAPE", message, event=event)


_ABSENT: Final = object()  # a field a payment does not have (parse_result)


def _any_absent(*values: object) -> bool:
    """Is any of ``values`` :data:`_ABSENT`? (By identity: ``in`` would compare each value with it.)"""
    return any(v is _ABSENT for v in values)


def _or_none(value: Any) -> Any:
    return None if value is _ABSENT else value


def parse_result(obj: Any, players: int = 4) -> Claimed:
    """The claimed ``result`` object of a hand at a table of ``players`` → :class:`Claimed`; :class:`RecordError`
    (``SCHEMA_RESULT``) otherwise."""

    def bad(message: str) -> RecordError:
        return RecordError("SCHEMA_RESULT", f"result: {message}")

    if not isinstance(obj, dict):
        raise bad("must be an object")
    if _unknown(obj, RESULT_FIELDS):
        raise bad(f"unknown field(s) {', '.join(_unknown(obj, RESULT_FIELDS))}")
    payments = obj.get("payments")
    if payments is not None and not isinstance(payments, list):
        raise bad("payments must be a list, or absent (or null) when not itemised")
    out: list[Payment] = []
    for i, p in enumerate(payments or ()):
        if not isinstance(p, dict):
            raise bad(f"payment {i} is not an object")
        payer, payee, amount = p.get("from", _ABSENT), p.get("to", _ABSENT), p.get("amount", _ABSENT)
        reason, event = p.get("reason", _ABSENT), p.get("event", _ABSENT)
        if len(p) != len(PAYMENT_FIELDS) or _any_absent(payer, payee, amount, reason, event):
            # not exactly the five fields (most payments are): another one is an error, a missing one reads as null
            if _unknown(p, PAYMENT_FIELDS):
                raise bad(f"payment {i}: unknown field(s) {', '.join(_unknown(p, PAYMENT_FIELDS))}")
            payer, payee, amount = _or_none(payer), _or_none(payee), _or_none(amount)
            reason, event = _or_none(reason), _or_none(event)
        to_pot = payee is None and reason == "penalty"  # a penalty that leaves the table (penalty_to = "pot")
        if not (_is_int(payer) and 0 <= payer < players and (to_pot or (_is_int(payee) and 0 <= payee < players))):
            raise bad(f"payment {i}: from and to must be seats 0-{players - 1} (to: null for a penalty to the pot)")
        if not _is_int(amount) or not 1 <= amount <= MAX_POINTS:
            raise bad(f"payment {i}: amount must be a whole number from 1 to 2^53")
        if reason not in REASONS:
            raise bad(f"payment {i}: unknown reason {reason!r}")
        if event is not None and (not _is_int(event) or event < 0):
            raise bad(f"payment {i}: event must be an event index or null")
        out.append(Payment(payer, payee, amount, reason, event))
    deltas = obj.get("deltas")
    if not isinstance(deltas, list) or len(deltas) != players or not all(_is_int(d) for d in deltas):
        raise bad(f"deltas must be {players} whole numbers, one per seat")
    if any(abs(d) > MAX_POINTS for d in deltas):
        raise bad("deltas must lie within ±2^53")
    wins: list[ClaimedWin] = []
    raw_wins = obj.get("wins", [])
    if not isinstance(raw_wins, list):
        raise bad("wins must be a list")
    for i, w in enumerate(raw_wins):
        if not isinstance(w, dict) or not _is_int(w.get("seat")) or not _is_int(w.get("event")):
            raise bad(f"win {i} needs a seat and an event index")
        if _unknown(w, WIN_FIELDS):
            raise bad(f"win {i}: unknown field(s) {', '.join(_unknown(w, WIN_FIELDS))}")
        if not 0 <= w["seat"] < players or w["event"] < 0:
            raise bad(f"win {i}: seat must be 0-{players - 1} and event an event index")
        fan, points = w.get("fan"), w.get("points")
        if any(v is not None and (not _is_int(v) or v < 0) for v in (fan, points)):
            raise bad(f"win {i}: fan and points must be whole numbers >= 0")
        if (fan is not None and fan > MAX_CLAIMED_FAN) or (points is not None and points > MAX_POINTS):
            raise bad(f"win {i}: fan must be at most {MAX_CLAIMED_FAN} and points at most 2^53")
        patterns = w.get("patterns")
        if patterns is not None and (
            not isinstance(patterns, list)
            or len(patterns) > MAX_CLAIMED_FAN
            or not all(isinstance(x, str) and (x in PATTERN_BY_ID or x in SPECIAL_NAMES) for x in patterns)
        ):
            raise bad(f"win {i}: patterns must be pattern ids (docs/RULES.md §3), got {patterns!r}")
        if fan is None and points is None and patterns is None:
            raise bad(f"win {i} needs fan, points or patterns")
        wins.append(ClaimedWin(w["seat"], w["event"], fan, points, None if patterns is None else tuple(patterns)))
    return Claimed(payments=None if payments is None else tuple(out), deltas=tuple(deltas), wins=tuple(wins))


_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$")


def played_at_time(text: str | None) -> datetime | None:
    """``played_at`` as a UTC moment: an RFC 3339 date-time (a time without an offset is read as UTC); ``None``
    when there is none or it is not one (the validator reports ``SCHEMA_TIME``).

    >>> played_at_time("2026-11-01T20:15:00+08:00").isoformat()
    '2026-11-01T12:15:00+00:00'
    >>> played_at_time("2026-11-01 20:15").isoformat()  # no offset: UTC
    '2026-11-01T20:15:00+00:00'
    >>> played_at_time("2026-13-01T20:15:00Z") is None, played_at_time("yesterday") is None
    (True, True)
    """
    moment = _moment(text)
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def played_at_offset(text: str | None) -> int | None:
    """The UTC offset ``played_at`` was written with, in minutes east of UTC (``+08:00`` is 480, ``Z`` 0): the
    record's own time zone, which :func:`played_at_time` folds away. ``None`` when the time has no offset (it is
    read as UTC, but the record did not say so) or is no date-time.

    >>> played_at_offset("2026-11-01T20:15:00+08:00"), played_at_offset("2026-11-01T20:15:00-03:30")
    (480, -210)
    >>> played_at_offset("2026-11-01T20:15:00Z"), played_at_offset("2026-11-01 20:15"), played_at_offset(None)
    (0, None, None)
    """
    moment = _moment(text)
    offset = None if moment is None else moment.utcoffset()
    return None if offset is None else int(offset.total_seconds()) // 60


def played_at_valid(text: str) -> bool:
    """Is ``text`` an RFC 3339 date-time (what :func:`played_at_time` reads)? The validator's cheap question:
    the usual shape is checked character by character (:func:`_plain_moment`), anything else as
    :func:`played_at_time` reads it (the regular expression and ``datetime``: some 10,000 instructions).

    >>> played_at_valid("2026-11-01T19:04:00+08:00"), played_at_valid("2026-02-29T19:04:00Z")
    (True, False)
    """
    return _plain_moment(text) or _moment(text) is not None


_DAYS_IN_MONTH: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _digits(text: str, at: int, n: int) -> int:
    """The number the ``n`` ASCII digits of ``text`` from ``at`` spell, or -1 where one is not a digit."""
    value = 0
    for i in range(at, at + n):
        d = ord(text[i]) - 48
        if d < 0 or d > 9:
            return -1
        value = value * 10 + d
    return value


def _plain_moment(text: str) -> bool:
    """Is ``text`` a date-time of the shape records usually carry, ``YYYY-MM-DDTHH:MM:SS`` then ``Z`` or
    ``+HH:MM``/``-HH:MM``, that :func:`_moment` reads? False means only "not of that shape, or not sure": the
    caller asks :func:`_moment` then.

    >>> _plain_moment("2026-11-01T19:04:00+08:00"), _plain_moment("2024-02-29T00:00:00Z")
    (True, True)
    >>> _plain_moment("2026-11-01 19:04"), _plain_moment("2026-13-01T19:04:00Z")
    (False, False)
    """
    size = len(text)
    if size != 20 and size != 25:
        return False
    if text[4] != "-" or text[7] != "-" or text[10] != "T" or text[13] != ":" or text[16] != ":":
        return False
    year, month, day = _digits(text, 0, 4), _digits(text, 5, 2), _digits(text, 8, 2)
    if year < 1 or month < 1 or month > 12 or day < 1:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day > _DAYS_IN_MONTH[month] + (1 if month == 2 and leap else 0):
        return False
    hour, minute, second = _digits(text, 11, 2), _digits(text, 14, 2), _digits(text, 17, 2)
    if hour < 0 or hour > 23 or minute < 0 or minute > 59 or second < 0 or second > 59:
        return False
    if size == 20:
        return text[19] == "Z"
    if (text[19] != "+" and text[19] != "-") or text[22] != ":":
        return False
    off_hour, off_minute = _digits(text, 20, 2), _digits(text, 23, 2)
    return 0 <= off_hour <= 23 and 0 <= off_minute <= 59


def _moment(text: str | None) -> datetime | None:
    if text is None or not _DATE_TIME.match(text):
        return None
    try:  # Python ≥ 3.11 reads "Z" and the "T"; RFC 3339 allows them in lower case too
        return datetime.fromisoformat(text if text.isupper() or text.isdigit() else text.upper())
    except ValueError:
        return None


def record_json(
    *,
    hand_id: str,
    ruleset: str | Mapping[str, Any],
    players: Sequence[str],
    dealer: int,
    events: Sequence[Event],
    wall: Sequence[int] | None = None,
    deal: Sequence[Sequence[int]] | None = None,
    exchange: tuple[str, Sequence[Sequence[int]]] | None = None,
    que: Sequence[int | None] | None = None,
    payments: Sequence[Payment] | None = None,
    deltas: Sequence[int] | None = None,
    wins: Sequence[ClaimedWin] | None = None,
    session_id: str | None = None,
    hand_no: int | None = None,
    table_id: str | None = None,
    played_at: str | None = None,
) -> dict[str, Any]:
    """Write a record object (key order as in schemas/XZLOG.md; optional fields only when given)."""
    out: dict[str, Any] = {"format": FORMAT, "hand_id": hand_id}
    for name, value in (
        ("session_id", session_id),
        ("hand_no", hand_no),
        ("table_id", table_id),
        ("played_at", played_at),
    ):
        if value is not None:
            out[name] = value
    out["ruleset"] = dict(ruleset) if isinstance(ruleset, Mapping) else ruleset
    out["players"] = list(players)
    out["dealer"] = dealer
    if wall is not None:
        out["wall"] = [TILE_NAMES[k] for k in wall]
    if deal is not None:
        out["deal"] = [[TILE_NAMES[k] for k in hand] for hand in deal]
    if exchange is not None:
        out["exchange"] = {"direction": exchange[0], "given": [[TILE_NAMES[k] for k in g] for g in exchange[1]]}
    if que is not None:
        out["que"] = [None if q is None else SUITS[q] for q in que]
    out["events"] = [e.to_json() for e in events]
    if payments is not None and deltas is not None:
        result: dict[str, Any] = {"payments": [p.as_dict() for p in payments], "deltas": list(deltas)}
        if wins is not None:
            result["wins"] = [{"seat": w.seat, "event": w.event, "fan": w.fan, "points": w.points} for w in wins]
        out["result"] = result
    return out
