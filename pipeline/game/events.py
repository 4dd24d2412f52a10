"""The actions of a hand as immutable values, in the record's vocabulary (``t`` = draw, discard, pong, kong,
hu).

The hand state returns one of these from every action it applies; the record reader builds them from
JSON and the writer turns them back into JSON, so a record round-trips through them exactly. They are
:class:`~pipeline.rules.values.Value` classes, not frozen dataclasses: one is built per event, and
``t`` is a property, not a field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

from pipeline.rules.tiles import TILE_NAMES
from pipeline.rules.values import Value

KongKind = Literal["direct", "added", "concealed"]


class Draw(Value):
    """A draw from the front of the wall (kong replacements included)."""

    __slots__ = ()
    _fields = ("seat", "tile")

    def __init__(self, seat: int, tile: int) -> None:
        self._v = (seat, tile)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def tile(self) -> int:
        return self._v[1]

    @property
    def t(self) -> Literal["draw"]:
        return "draw"

    def to_json(self) -> dict[str, Any]:
        if self.tile < 0:  # an observer record's hidden draw
            return {"t": "draw", "seat": self.seat}
        return {"t": "draw", "seat": self.seat, "tile": TILE_NAMES[self.tile]}


class Discard(Value):
    __slots__ = ()
    _fields = ("seat", "tile")

    def __init__(self, seat: int, tile: int) -> None:
        self._v = (seat, tile)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def tile(self) -> int:
        return self._v[1]

    @property
    def t(self) -> Literal["discard"]:
        return "discard"

    def to_json(self) -> dict[str, Any]:
        return {"t": "discard", "seat": self.seat, "tile": TILE_NAMES[self.tile]}


class Pong(Value):
    """碰 the tile ``source`` just discarded."""

    __slots__ = ()
    _fields = ("seat", "tile", "source")

    def __init__(self, seat: int, tile: int, source: int) -> None:
        self._v = (seat, tile, source)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def tile(self) -> int:
        return self._v[1]

    @property
    def source(self) -> int:
        return self._v[2]

    @property
    def t(self) -> Literal["pong"]:
        return "pong"

    def to_json(self) -> dict[str, Any]:
        return {"t": "pong", "seat": self.seat, "tile": TILE_NAMES[self.tile], "from": self.source}


class Kong(Value):
    """杠: ``direct`` on ``source``'s discard, ``added`` to an own pong, ``concealed`` from the hand."""

    __slots__ = ()
    _fields = ("seat", "tile", "kind", "source")

    def __init__(self, seat: int, tile: int, kind: KongKind, source: int | None = None) -> None:
        self._v = (seat, tile, kind, source)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def tile(self) -> int:
        return self._v[1]

    @property
    def kind(self) -> KongKind:
        return self._v[2]

    @property
    def source(self) -> int | None:
        return self._v[3]

    @property
    def t(self) -> Literal["kong"]:
        return "kong"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": "kong", "seat": self.seat, "tile": TILE_NAMES[self.tile], "kind": self.kind}
        if self.tile < 0:  # a settlement record's kong, its tile not named
            del out["tile"]
        if self.kind == "direct":
            out["from"] = self.source
        return out


class Hu(Value):
    """胡 on ``tile``: from ``source``'s discard (or robbed added kong), or self-drawn (``source`` None)."""

    __slots__ = ()
    _fields = ("seat", "tile", "source", "rob_kong")

    def __init__(self, seat: int, tile: int, source: int | None, rob_kong: bool = False) -> None:
        self._v = (seat, tile, source, rob_kong)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def tile(self) -> int:
        return self._v[1]

    @property
    def source(self) -> int | None:
        return self._v[2]

    @property
    def rob_kong(self) -> bool:
        return self._v[3]

    @property
    def t(self) -> Literal["hu"]:
        return "hu"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": "hu", "seat": self.seat, "tile": TILE_NAMES[self.tile], "from": self.source}
        if self.tile < 0:  # a settlement record's win, its tile not named
            del out["tile"]
        if self.rob_kong:
            out["rob_kong"] = True
        return out


Event = Draw | Discard | Pong | Kong | Hu

# Nine events in ten are a draw or a discard, and there are only 4 × 27 of each: being immutable, one of each
# serves every record (the reader hands these out instead of building a new value per event).
DRAWS: Final[tuple[tuple[Draw, ...], ...]] = tuple(tuple(Draw(seat, kind) for kind in range(27)) for seat in range(4))
DISCARDS: Final[tuple[tuple[Discard, ...], ...]] = tuple(
    tuple(Discard(seat, kind) for kind in range(27)) for seat in range(4)
)


class TurnCount:
    """Each seat's turn (巡目, schemas/METRICS.md#turns), the turns it has begun, counted along a hand's events:
    the dealer's first begins with the deal (its fourteenth tile); every other with a draw from the wall or a claim
    that gives the seat the move instead (a pong, a direct kong). A kong's replacement draw (a draw straight after
    the seat's own kong) goes on with the turn it was made in. The one home of the count: ingest's win and deal-in
    turns (``wins.turn``, ``wins.source_turn``, :func:`turns_begun`) and the replay's ready turns
    (:mod:`pipeline.game.evidence`, which advances one count as the hand is played) use it; ``player_base.sql``
    counts the same from the events of a hand stored without them.

    >>> events = [DISCARDS[0][0], DRAWS[1][0], DISCARDS[1][0], Pong(2, 0, 1), DISCARDS[2][5], DRAWS[3][1]]
    >>> count = TurnCount(dealer=0, seats=4)
    >>> count.advance(events)
    [1, 1, 1, 1]
    >>> events += [DISCARDS[3][1], DRAWS[0][3], Kong(0, 3, "concealed"), DRAWS[0][4]]  # the hand goes on
    >>> count.advance(events)
    [2, 1, 1, 1]
    """

    def __init__(self, dealer: int, seats: int) -> None:
        self.turns = [1 if seat == dealer else 0 for seat in range(seats)]
        self.seen = 0  # events counted
        self._previous: Event | None = None

    def advance(self, events: Sequence[Event], upto: int | None = None) -> list[int]:
        """Count ``events[self.seen:upto]``, the events of the same hand not counted yet (up to ``upto``: the
        events the count was advanced along before are the first of ``events``); the turns so far."""
        end = len(events) if upto is None else upto
        previous = self._previous
        for i in range(self.seen, end):
            ev = events[i]
            seat = ev.seat
            if isinstance(ev, Draw):
                if not (isinstance(previous, Kong) and previous.seat == seat):
                    self.turns[seat] = self.turns[seat] + 1
            elif isinstance(ev, Pong) or (isinstance(ev, Kong) and ev.kind == "direct"):
                self.turns[seat] = self.turns[seat] + 1
            previous = ev
        self._previous = previous
        self.seen = max(self.seen, end)
        return self.turns


def turns_begun(events: Sequence[Event], dealer: int, seat: int, upto: int | None = None) -> int:
    """``seat``'s turn after ``events[:upto]`` (every event: ``None``): :class:`TurnCount`.

    >>> turns_begun([DISCARDS[0][3], DRAWS[1][0], Kong(1, 0, "concealed"), DRAWS[1][4]], dealer=0, seat=1)
    1
    """
    return TurnCount(dealer, max(4, seat + 1)).advance(events, upto)[seat]
