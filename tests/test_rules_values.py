"""The immutable value classes (events, payments): equal by class and fields, hashable, readable."""

from __future__ import annotations

import pytest

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
