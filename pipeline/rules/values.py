"""Immutable values of the hot path: what the replay builds by the thousand.

A frozen dataclass costs about 0.3 µs to build per handful of fields in CPython (each goes through
``object.__setattr__``), and compiled by mypyc it still runs the interpreted ``__init__``. A :class:`Value`
keeps its fields in one tuple behind read-only properties instead: assigning to a field raises in every
build, equality is the class's and the tuple's, the hash the tuple's, and compiled it is built several times
faster.

So a ``Value`` says "hot path": the events (several dozen per record), payments, melds, a hand's readings,
and the scoring values built for every win the engine considers (``WinHand``, ``PatternHit``, ``Score``:
the validator scores each seat that could win on a discard, the bots every win they weigh), and the
end-of-wall facts (``SeatEnd``, ``ReadyValue``: a few per hand, but a dataclass's interpreted ``__init__``
cost as much as the rest of their work). The record, the claim and the validation are Values too; what is
left a frozen, slotted dataclass is built rarely or off the hot path.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Value:
    """Base of the value classes. A subclass stores its fields, in the order ``_fields`` names them, as the
    tuple ``_v`` in ``__init__`` and reads each through a property."""

    __slots__ = ("_v",)
    _fields: ClassVar[tuple[str, ...]] = ()
    _v: tuple[Any, ...]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, Value) and self._v == other._v

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._v)  # values of two classes with equal fields may collide; __eq__ tells them apart

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self._v, strict=True))
        return f"{type(self).__name__}({fields})"
