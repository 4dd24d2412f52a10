"""The actions of a hand as frozen values, in the record's vocabulary (``t`` = draw, discard, pong, kong, hu).

The hand state returns one of these from every action it applies; the record reader builds them from
JSON and the writer turns them back into JSON, so a record round-trips through them exactly. ``t`` is a
property, not a field: the replay builds one of these per event, and each field of a frozen value costs
its construction time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pipeline.rules.tiles import TILE_NAMES

KongKind = Literal["direct", "added", "concealed"]


@dataclass(frozen=True, slots=True)
class Draw:
    """A draw from the front of the wall (kong replacements included)."""

    seat: int
    tile: int

    @property
    def t(self) -> Literal["draw"]:
        return "draw"

    def to_json(self) -> dict[str, Any]:
        return {"t": "draw", "seat": self.seat, "tile": TILE_NAMES[self.tile]}


@dataclass(frozen=True, slots=True)
class Discard:
    seat: int
    tile: int

    @property
    def t(self) -> Literal["discard"]:
        return "discard"

    def to_json(self) -> dict[str, Any]:
        return {"t": "discard", "seat": self.seat, "tile": TILE_NAMES[self.tile]}


@dataclass(frozen=True, slots=True)
class Pong:
    """碰 the tile ``source`` just discarded."""

    seat: int
    tile: int
    source: int

    @property
    def t(self) -> Literal["pong"]:
        return "pong"

    def to_json(self) -> dict[str, Any]:
        return {"t": "pong", "seat": self.seat, "tile": TILE_NAMES[self.tile], "from": self.source}


@dataclass(frozen=True, slots=True)
class Kong:
    """杠: ``direct`` on ``source``'s discard, ``added`` to an own pong, ``concealed`` from the hand."""

    seat: int
    tile: int
    kind: KongKind
    source: int | None = None

    @property
    def t(self) -> Literal["kong"]:
        return "kong"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": "kong", "seat": self.seat, "tile": TILE_NAMES[self.tile], "kind": self.kind}
        if self.kind == "direct":
            out["from"] = self.source
        return out


@dataclass(frozen=True, slots=True)
class Hu:
    """胡 on ``tile``: from ``source``'s discard (or robbed added kong), or self-drawn (``source`` None)."""

    seat: int
    tile: int
    source: int | None
    rob_kong: bool = False

    @property
    def t(self) -> Literal["hu"]:
        return "hu"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": "hu", "seat": self.seat, "tile": TILE_NAMES[self.tile], "from": self.source}
        if self.rob_kong:
            out["rob_kong"] = True
        return out


Event = Draw | Discard | Pong | Kong | Hu
