"""The actions of a hand as immutable values, in the record's vocabulary (``t`` = draw, discard, pong, kong,
hu).

The hand state returns one of these from every action it applies; the record reader builds them from
JSON and the writer turns them back into JSON, so a record round-trips through them exactly. They are
:class:`~pipeline.rules.values.Value` classes, not frozen dataclasses: one is built per event, and
``t`` is a property, not a field.
"""

from __future__ import annotations

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
