"""The record reader and writer at their edges (``pipeline.game.record``): every shape error of a record and
of its claimed ``result`` that the corpus does not spell out, with its exact code and message, and the
writer's optional parts (a deal without a wall, a result without wins, no result at all) read back as
written. The rules are those of ``schemas/XZLOG.md`` and its JSON Schema."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pipeline.game.events import Discard, Kong
from pipeline.game.record import ClaimedWin, RecordError, parse_record, parse_result, record_json
from pipeline.rules.settle import Payment
from pipeline.rules.tiles import parse_tiles
from schemas import xzlog_schema

SCHEMA = Draft202012Validator(xzlog_schema())
DEAL = ("123m456m789m123p55s", "1357m1357p2468s9s", "2468m2468p13789s", "99m5m3p5p7p9p6p4p2p1p7s6s")


def minimal(**fields: Any) -> dict[str, Any]:
    """A record object the reader accepts (a deal, no events), with ``fields`` set on top."""
    obj = record_json(
        hand_id="edge-1",
        ruleset="chengdu",
        players=["a", "b", "c", "d"],
        dealer=0,
        events=[],
        deal=[parse_tiles(h) for h in DEAL],
    )
    obj.update(fields)
    return obj


def record_error(obj: Any) -> RecordError:
    with pytest.raises(RecordError) as info:
        parse_record(obj)
    return info.value


def result_error(obj: Any) -> RecordError:
    with pytest.raises(RecordError) as info:
        parse_result(obj)
    assert info.value.code == "SCHEMA_RESULT"
    return info.value


# ---------------------------------------------------------------------------------------------- writer
def test_a_record_with_a_deal_and_no_wall_is_written_and_read_back() -> None:
    obj = minimal()
    assert "wall" not in obj and "result" not in obj  # no wall, no payments: neither is written
    assert obj["deal"][0] == ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "1p", "2p", "3p", "5s", "5s"]
    assert not list(SCHEMA.iter_errors(obj))
    record = parse_record(obj)
    assert record.wall is None
    assert record.deal == tuple(tuple(parse_tiles(h)) for h in DEAL)


def test_a_result_without_claimed_wins_is_written_without_wins_and_read_as_none_claimed() -> None:
    pay = [Payment(0, 1, 1, "hu", 1)]
    base = {
        "hand_id": "edge-2",
        "ruleset": "chengdu",
        "players": ["a", "b", "c", "d"],
        "dealer": 0,
        "events": [Discard(0, 22)],
        "deal": [parse_tiles(h) for h in DEAL],
    }
    obj = record_json(**base, payments=pay, deltas=[-1, 1, 0, 0])
    assert obj["result"] == {
        "payments": [{"from": 0, "to": 1, "amount": 1, "reason": "hu", "event": 1}],
        "deltas": [-1, 1, 0, 0],
    }
    assert not list(SCHEMA.iter_errors(obj))
    claimed = parse_result(obj["result"])
    assert (claimed.payments, claimed.deltas, claimed.wins) == (tuple(pay), (-1, 1, 0, 0), ())
    # deltas without payments are not a result the writer writes (both or neither)
    assert "result" not in record_json(**base, deltas=[0, 0, 0, 0])
    assert "result" not in record_json(**base, payments=pay)
    # with wins, they are written too
    with_wins = record_json(**base, payments=pay, deltas=[-1, 1, 0, 0], wins=[ClaimedWin(1, 1, 0, 1)])
    assert with_wins["result"]["wins"] == [{"seat": 1, "event": 1, "fan": 0, "points": 1}]
    assert parse_result(with_wins["result"]).wins == (ClaimedWin(1, 1, 0, 1),)


# ---------------------------------------------------------------------------------------------- record shape
@pytest.mark.parametrize("obj", [[], ["format", "xzlog/1"], "xzlog/1", 7, None])
def test_a_record_is_a_json_object(obj: Any) -> None:
    exc = record_error(obj)
    assert exc.code == "SCHEMA_JSON"
    assert str(exc) == f"a record is a JSON object, got {type(obj).__name__}"


@pytest.mark.parametrize("name", ["session_id", "table_id", "played_at"])
@pytest.mark.parametrize("value", [5, ["s1"], {"id": "s1"}, True])
def test_optional_labels_are_strings(name: str, value: Any) -> None:
    obj = minimal(**{name: value})
    assert list(SCHEMA.iter_errors(obj))  # the schema refuses it too
    exc = record_error(obj)
    assert (exc.code, str(exc)) == ("SCHEMA_TYPE", f"{name} must be a string")


@pytest.mark.parametrize("name", ["session_id", "table_id", "played_at"])
def test_optional_labels_may_be_null_or_a_string(name: str) -> None:
    assert getattr(parse_record(minimal(**{name: None})), name) is None
    assert getattr(parse_record(minimal(**{name: "x-1"})), name) == "x-1"


GIVEN = [["1m", "2m", "3m"], ["1p", "3p", "5p"], ["2m", "4m", "6m"], ["2p", "4p", "6p"]]


@pytest.mark.parametrize(
    "exchange",
    [
        {"direction": "cw"},  # no given
        {"direction": "cw", "given": GIVEN[:3]},  # three seats, at a table of four
        {"direction": "cw", "given": [*GIVEN, GIVEN[0]]},  # five
        {"direction": "cw", "given": "1m2m3m"},
        {"direction": "cw", "given": {"0": GIVEN[0]}},
    ],
)
def test_an_exchange_at_a_table_of_four_gives_four_lists_of_three_tiles(exchange: dict[str, Any]) -> None:
    obj = minimal(ruleset="app", que=["s", "s", "s", "s"], exchange=exchange)
    exc = record_error(obj)
    assert exc.code == "SCHEMA_TYPE"
    assert str(exc).startswith("exchange.given must hold 4 lists of 3 tiles")


def test_an_exchange_of_four_lists_of_three_is_read() -> None:
    record = parse_record(
        minimal(ruleset="app", que=["s", "s", "s", "s"], exchange={"direction": "ccw", "given": GIVEN})
    )
    assert record.exchange_direction == "ccw"
    assert record.exchange_given == tuple(tuple(parse_tiles("".join(g))) for g in GIVEN)


@pytest.mark.parametrize("kind", ["hidden", "Direct", None, 3, ["added"]])
def test_a_kong_kind_is_direct_added_or_concealed(kind: Any) -> None:
    kong: dict[str, Any] = {"t": "kong", "seat": 0, "tile": "5s"}
    if kind is not None:
        kong["kind"] = kind
    obj = minimal(events=[{"t": "discard", "seat": 0, "tile": "1m"}, kong])
    assert list(SCHEMA.iter_errors(obj))
    exc = record_error(obj)
    assert (exc.code, exc.event) == ("SCHEMA_EVENT", 1)
    assert str(exc) == f"event 1 (kong): kind must be direct, added or concealed, got {kind!r}"


@pytest.mark.parametrize("kind", ["added", "concealed"])
def test_added_and_concealed_kongs_are_read(kind: str) -> None:
    record = parse_record(minimal(events=[{"t": "kong", "seat": 0, "tile": "5s", "kind": kind}]))
    assert record.events == (Kong(0, parse_tiles("5s")[0], kind),)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- result shape
RESULT = {
    "payments": [{"from": 0, "to": 1, "amount": 2, "reason": "hu", "event": 3}],
    "deltas": [-2, 2, 0, 0],
    "wins": [{"seat": 1, "event": 3, "fan": 1, "points": 2}],
}


def with_result(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """:data:`RESULT` with the item at ``path`` replaced by ``value``."""
    out = copy.deepcopy(RESULT)
    target: Any = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


def test_the_reference_result_is_read() -> None:
    claimed = parse_result(RESULT)
    assert claimed.payments == (Payment(0, 1, 2, "hu", 3),)
    assert claimed.deltas == (-2, 2, 0, 0)
    assert claimed.wins == (ClaimedWin(1, 3, 1, 2),)


@pytest.mark.parametrize("payment", [[0, 1, 2, "hu"], "0>1=2hu", 2, None])
def test_a_claimed_payment_is_an_object(payment: Any) -> None:
    exc = result_error(with_result(("payments", 0), payment))
    assert str(exc) == "result: payment 0 is not an object"


@pytest.mark.parametrize(
    ("field", "value"),
    [("from", 4), ("from", -1), ("from", True), ("from", "0"), ("from", None), ("to", 4), ("to", 1.0), ("to", False)],
)
def test_a_claimed_payment_is_between_seats(field: str, value: Any) -> None:
    exc = result_error(with_result(("payments", 0, field), value))
    assert str(exc) == "result: payment 0: from and to must be seats 0-3 (to: null for a penalty to the pot)"


def test_only_a_penalty_may_go_to_the_pot() -> None:
    # "to": null is a penalty that leaves the table (penalty_to = "pot"); a win or a kong is always paid to a seat
    exc = result_error(with_result(("payments", 0, "to"), None))
    assert "to: null for a penalty to the pot" in str(exc)
    obj = with_result(("payments", 0, "to"), None)
    obj["payments"][0]["reason"] = "penalty"
    claimed = parse_result(obj)
    assert claimed.payments[0].payee is None and claimed.payments[0].reason == "penalty"


@pytest.mark.parametrize("event", [-1, "3", 3.0, True, [3]])
def test_a_claimed_payment_names_an_event_index_or_null(event: Any) -> None:
    exc = result_error(with_result(("payments", 0, "event"), event))
    assert str(exc) == "result: payment 0: event must be an event index or null"


def test_a_claimed_payment_without_an_event_is_read() -> None:
    assert parse_result(with_result(("payments", 0, "event"), None)).payments == (Payment(0, 1, 2, "hu", None),)
    no_key = copy.deepcopy(RESULT)
    del no_key["payments"][0]["event"]
    assert parse_result(no_key).payments == (Payment(0, 1, 2, "hu", None),)


@pytest.mark.parametrize("wins", [{"seat": 1, "event": 3, "fan": 1}, "1@3:1f2p", 1, None])
def test_claimed_wins_are_a_list(wins: Any) -> None:
    exc = result_error(with_result(("wins",), wins))
    assert str(exc) == "result: wins must be a list"


@pytest.mark.parametrize(
    "win",
    [
        {"event": 3, "fan": 1},  # no seat
        {"seat": 1, "fan": 1},  # no event
        {"seat": "1", "event": 3, "fan": 1},
        {"seat": True, "event": 3, "fan": 1},  # a boolean is no seat
        {"seat": 1, "event": 3.0, "fan": 1},
        [1, 3, 1, 2],  # not an object
        "1@3",
    ],
)
def test_a_claimed_win_names_a_seat_and_an_event(win: Any) -> None:
    exc = result_error(with_result(("wins", 0), win))
    assert str(exc) == "result: win 0 needs a seat and an event index"


def test_played_at_valid_answers_as_the_date_time_reading_does() -> None:
    """played_at_valid's character-by-character check of the usual shape says yes only where the reading by the
    regular expression and ``datetime`` does (leap days, month ends, hours, offsets, a character off), and every
    other string is answered by that reading."""
    import random

    from pipeline.game.record import _moment, _plain_moment, played_at_valid

    rng = random.Random(23)
    texts = [
        "2024-02-29T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "1900-02-29T12:00:00+08:00",
        "2000-02-29T12:00:00-08:00",
        "0000-01-01T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "2026-04-31T10:00:00Z",
        "2026-12-31T23:59:59+23:59",
        "2026-12-31T23:59:60Z",
        "2026-12-31T24:00:00Z",
        "2026-12-31T23:59:59+24:00",
        "2026-12-31T23:59:59+08:60",
        "2026-12-31t23:59:59z",
        "2026-12-31 23:59:59Z",
        "2026-11-01T19:04:00+0800",
        "2026-11-01T19:04:00.5+08:00",
        "2026-11-01T19:04+08:00",
        "2026-11-01T19:04:00+08:00x",
        "２026-11-01T19:04:00+08:00",
    ]
    for _ in range(3000):
        year, month, day = rng.randint(0, 2400), rng.randint(0, 13), rng.randint(0, 32)
        hour, minute, second = rng.randint(0, 25), rng.randint(0, 61), rng.randint(0, 61)
        zone = rng.choice(["Z", "z", f"+{rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}", "-05:30", "+0800", ""])
        text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{zone}"
        if rng.random() < 0.3:
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice("0123456789-:T+Zx ") + text[at + 1 :]
        texts.append(text)
    plain = 0
    for text in texts:
        read = _moment(text) is not None
        if _plain_moment(text):
            plain += 1
            assert read, text
        assert played_at_valid(text) == read, text
    assert plain > 500  # the character-by-character check answered many of them
