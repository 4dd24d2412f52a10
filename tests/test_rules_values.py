"""The immutable value classes (events, payments): equal by class and fields, hashable, readable."""

from __future__ import annotations

import pytest

import pipeline
from pipeline.game.events import Discard, Draw, Hu, Kong
from pipeline.rules.settle import Payment


def test_equal_by_class_and_fields() -> None:
    assert Draw(1, 5) == Draw(1, 5)
    assert Draw(1, 5) != Draw(1, 6)
    assert Draw(1, 5) != Discard(1, 5)  # same fields, another class
    assert Draw(1, 5) != (1, 5)
    assert Hu(0, 3, None) == Hu(0, 3, None, rob_kong=False) != Hu(0, 3, None, rob_kong=True)


def test_hashable_consistently_with_equality() -> None:
    assert len({Draw(1, 5), Draw(1, 5), Discard(1, 5), Kong(2, 7, "concealed")}) == 3
    assert hash(Payment(1, 2, 4, "hu", 7)) == hash(Payment(payer=1, payee=2, amount=4, reason="hu", event=7))


def test_repr_names_every_field() -> None:
    assert repr(Kong(2, 7, "direct", 0)) == "Kong(seat=2, tile=7, kind='direct', source=0)"
    assert repr(Payment(1, 2, 4, "hu")) == "Payment(payer=1, payee=2, amount=4, reason='hu', event=None)"


def test_values_have_no_room_for_other_attributes() -> None:
    with pytest.raises(AttributeError):
        Draw(1, 5).colour = "red"  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [Draw(1, 5), Discard(1, 5), Kong(2, 7, "added"), Hu(0, 3, 1), Payment(1, 2, 4, "hu")])
def test_fields_cannot_be_assigned(value: object) -> None:
    name = type(value)._fields[0]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        setattr(value, name, 3)


def _value_classes() -> list[type]:
    import pipeline.game.state
    import pipeline.rules.fan
    import pipeline.validate  # noqa: F401  (their Value classes register as subclasses)
    from pipeline.rules.values import Value

    found, todo = [], list(Value.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_the_value_classes_are_found() -> None:
    names = {cls.__name__ for cls in _value_classes()}
    assert {"Draw", "Hu", "Payment", "WinHand", "Score", "PatternHit", "Meld", "Reading"} <= names


@pytest.mark.skipif(pipeline.compiled(), reason="builds values bare (object.__new__), which compiled classes forbid")
@pytest.mark.parametrize("cls", _value_classes(), ids=lambda cls: cls.__name__)
def test_each_field_reads_its_own_slot(cls: type) -> None:
    """Every property returns the field ``_fields`` names at its position (hand-written, so checked)."""
    value = object.__new__(cls)
    value._v = tuple(f"field {i}" for i in range(len(cls._fields)))  # type: ignore[attr-defined]
    assert [getattr(value, name) for name in cls._fields] == list(value._v)  # type: ignore[attr-defined]
    assert set(cls._fields) <= {name for name in dir(cls) if isinstance(getattr(cls, name), property)}
