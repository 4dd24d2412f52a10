"""Event objects → events: the fast path for plain draws and discards answers as the full parser does."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.game.events import DISCARDS, DRAWS, Discard, Draw, Hu, Pong
from pipeline.game.record import _EVENT_KEYS, PLAIN_KEYS, RecordError, _adopt_event_keys, _parse_event, parse_event

values = st.one_of(
    st.sampled_from(
        ["draw", "discard", "pong", "kong", "hu", "1m", "9s", "5p", "0m", "10p", "x", "direct", "", "DRAW"]
    ),
    st.integers(-2, 5),
    st.booleans(),
    st.none(),
    st.lists(st.integers(0, 3), max_size=2),
    st.floats(allow_nan=False, min_value=-1, max_value=4),
)
keys = st.sampled_from(["t", "seat", "tile", "from", "kind", "ms", "rob_kong", "x_note", "extra"])
event_objects = st.one_of(
    st.dictionaries(keys, values, max_size=5),
    st.fixed_dictionaries({"t": st.sampled_from(["draw", "discard"]), "seat": values, "tile": values}),
    st.fixed_dictionaries({"t": values, "seat": st.integers(0, 3), "tile": st.sampled_from(["1m", "7p", "9s"])}),
    values,
)


def outcome(parse: Any, obj: Any) -> tuple[str, Any]:
    try:
        return "event", parse(obj, 7)
    except RecordError as exc:
        return "error", (exc.code, str(exc), exc.event)


@given(event_objects)
def test_the_fast_path_agrees_with_the_full_parser(obj: Any) -> None:
    assert outcome(parse_event, obj) == outcome(_parse_event, obj)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"t": "draw", "seat": 2, "tile": "5p"}, Draw(2, 13)),
        ({"t": "discard", "seat": 0, "tile": "9s"}, Discard(0, 26)),
        ({"t": "hu", "seat": 1, "tile": "1m", "from": None}, Hu(1, 0, None)),
    ],
)
def test_plain_events(obj: dict[str, Any], expected: Any) -> None:
    assert parse_event(obj, 0) == expected


def test_shared_draws_and_discards_are_the_values_they_name() -> None:
    """The reader hands out one shared value per (seat, tile) draw and discard: each equals a fresh one."""
    for seat in range(4):
        for kind in range(27):
            assert DRAWS[seat][kind] == Draw(seat, kind) and DISCARDS[seat][kind] == Discard(seat, kind)
            assert (
                parse_event({"t": "draw", "seat": seat, "tile": Draw(seat, kind).to_json()["tile"]}, 0)
                is DRAWS[seat][kind]
            )
    assert Draw(1, 2) != Discard(1, 2)


@pytest.mark.parametrize(
    ("obj", "code"),
    [
        ({"t": "draw", "seat": True, "tile": "5p"}, "SCHEMA_EVENT"),  # a boolean is no seat
        ({"t": "draw", "seat": 4, "tile": "5p"}, "SCHEMA_EVENT"),
        ({"t": "discard", "seat": 1, "tile": "0p"}, "TILE_NOTATION"),
        ({"t": "discard", "seat": 1, "tile": ["5p"]}, "TILE_NOTATION"),
        ({"t": "discard", "seat": 1, "x": "5p"}, "SCHEMA_EVENT"),
        ({"t": ["draw"], "seat": 1, "tile": "5p"}, "SCHEMA_EVENT"),
    ],
)
def test_malformed_plain_events_are_errors(obj: dict[str, Any], code: str) -> None:
    with pytest.raises(RecordError) as info:
        parse_event(obj, 3)
    assert info.value.code == code and info.value.event == 3


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["1m", "5p", "9s", "0m", "5z", "8P"]),
            st.integers(0, 9),
            st.none(),
            st.booleans(),
            st.lists(st.just("1m"), max_size=1),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_tile_list_is_read_whole_or_its_first_bad_tile_named(value: list[Any]) -> None:
    from pipeline.game.record import _tile, _tiles

    try:
        expected: Any = tuple(_tile(v, "deal[0]") for v in value)
    except RecordError as exc:
        expected = (exc.code, str(exc))
    try:
        got: Any = _tiles(value, "deal[0]")
    except RecordError as exc:
        got = (exc.code, str(exc))
    assert got == expected


def test_the_reader_looks_keys_up_with_the_record_s_own_key_objects() -> None:
    """parse_event looks up "t", "seat" and "tile" with the key objects of the record's first event (found by
    identity in every event orjson reads); a first event that is no object, or keys of its own, change nothing."""
    import orjson

    first = orjson.loads(b'{"t": "draw", "seat": 0, "tile": "1m", "ms": 3}')
    _adopt_event_keys([first])
    assert [k for k in first if k != "ms"] == _EVENT_KEYS[:3]
    assert all(any(k is mine for k in first) for mine in _EVENT_KEYS[:3])
    before = list(_EVENT_KEYS)
    _adopt_event_keys([]), _adopt_event_keys(["not an object"])
    assert _EVENT_KEYS == before == list(PLAIN_KEYS)
    assert parse_event(orjson.loads(b'{"t": "discard", "seat": 3, "tile": "9s"}'), 1) == Discard(3, 26)
    pong = orjson.loads(b'{"t": "pong", "seat": 2, "tile": "9s", "from": 3}')
    _EVENT_KEYS[3] = "".join(["fr", "om"])  # not orjson's key object: found by comparing characters
    assert parse_event(pong, 2) == Pong(2, 26, 3)


@pytest.mark.parametrize(
    "event",
    [
        {"t": "draw", "seat": 0, "tile": "1m"},
        {"t": "discard", "seat": 3, "tile": "9s"},
        {"t": "pong", "seat": 2, "tile": "9s", "from": 3},
        {"t": "pong", "seat": 2, "tile": "9s", "from": 4},
        {"t": "pong", "seat": 2, "tile": "9s", "from": None},
        {"t": "pong", "seat": 2, "tile": "9s", "ms": 1},
        {"t": "draw", "seat": 2, "tile": "9s", "ms": 1},
        {"t": "hu", "seat": 2, "tile": "9s", "from": 1},
        {"t": "hu", "seat": 2, "tile": "9s", "from": None},
        {"t": "hu", "seat": 2, "tile": "9s", "from": 4},
        {"t": "hu", "seat": 2, "tile": "9s", "from": "1"},
        {"t": "hu", "seat": 2, "tile": "9s", "rob_kong": True},
        {"t": "hu", "seat": 2, "tile": "9s", "ms": 1},
        {"t": "kong", "seat": 2, "tile": "9s", "kind": "concealed"},
        {"t": "kong", "seat": 2, "tile": "9s", "kind": "added"},
        {"t": "kong", "seat": 2, "tile": "9s", "kind": "direct"},
        {"t": "kong", "seat": 2, "tile": "9s", "kind": "other"},
        {"t": "kong", "seat": 2, "tile": "9s", "from": 1},
        {"t": "draw", "seat": 2, "from": 1},
        {"t": "draw", "seat": 5, "tile": "1m"},
        {"t": "draw", "seat": 1, "tile": "0m"},
        {"t": 3, "seat": 1, "tile": "1m"},
        {"t": "peek", "seat": 1, "tile": "1m"},
    ],
)
def test_the_fast_reading_of_an_event_is_the_careful_one(event: dict[str, Any]) -> None:
    """parse_event's fast path (draws, discards, pongs, wins, kongs without a source) answers as _parse_event
    does, or leaves it the event: with the record's own key objects, and with equal keys that are other objects
    (another reader's)."""
    from pipeline.game.record import _parse_event

    def outcome(fn: Any, obj: dict[str, Any]) -> Any:
        try:
            return fn(obj, 5)
        except RecordError as exc:
            return exc.code, str(exc)

    import orjson

    careful = outcome(_parse_event, event)
    read = orjson.loads(orjson.dumps(event))
    _adopt_event_keys([read])
    assert outcome(parse_event, read) == careful
    _adopt_event_keys([orjson.loads(b'{"t": "draw", "seat": 0, "tile": "1m", "from": 0}')])
    assert outcome(parse_event, dict(event)) == careful  # the literals' key objects: looked up
