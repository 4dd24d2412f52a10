"""The hand notation (pipeline/formats/notation.py, issue 21 item 6): every token of its grammar, the errors
that name what is wrong, and the round trip both ways — over generated tokens, over the regression corpus
and over simulated records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sample_lines import sample_lines

from pipeline.formats.notation import (
    NotationError,
    format_event,
    format_events,
    format_payment,
    format_payments,
    format_win,
    format_wins,
    parse_event,
    parse_events,
    parse_payments,
    parse_wins,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


@pytest.mark.parametrize(
    ("token", "event"),
    [
        ("2+9s", {"t": "draw", "seat": 2, "tile": "9s"}),
        ("2+", {"t": "draw", "seat": 2}),  # a hidden draw (observer level)
        ("0-8p", {"t": "discard", "seat": 0, "tile": "8p"}),
        ("3p9s<0", {"t": "pong", "seat": 3, "tile": "9s", "from": 0}),
        ("2k4m<1", {"t": "kong", "seat": 2, "tile": "4m", "kind": "direct", "from": 1}),
        ("0a7p", {"t": "kong", "seat": 0, "tile": "7p", "kind": "added"}),
        ("3c2m", {"t": "kong", "seat": 3, "tile": "2m", "kind": "concealed"}),
        ("3c", {"t": "kong", "seat": 3, "kind": "concealed"}),  # a score sheet's kong: no tile
        ("1h8p<0", {"t": "hu", "seat": 1, "tile": "8p", "from": 0}),
        ("2h9s", {"t": "hu", "seat": 2, "tile": "9s", "from": None}),
        ("1h7p<0!", {"t": "hu", "seat": 1, "tile": "7p", "from": 0, "rob_kong": True}),
        ("1h<2", {"t": "hu", "seat": 1, "from": 2}),  # a score sheet's win: the tile not known
    ],
)
def test_each_event_token(token: str, event: dict[str, object]) -> None:
    assert parse_event(token) == event
    assert format_event(event) == token


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0-8p 4-1m", "event 2 '4-1m': not <seat><op><tile>"),  # seat 4
        ("0x8p", "event 1 '0x8p': not"),
        ("0-0p", "event 1 '0-0p': not"),  # rank 0
        ("0-8z", "event 1 '0-8z': not"),  # no honours in Sichuan mahjong
        ("0-8p8p", "event 1 '0-8p8p': not"),
        ("3p9s", "a pong names its discarder"),
        ("2k4m", "a direct kong names its discarder"),
        ("0a7p<1", "only a pong, a direct kong or a win names a discarder"),
        ("0-7p<1", "only a pong, a direct kong or a win names a discarder"),
        ("2h9s!", "only a win on another's kong robs it"),
        ("3p9s<0!", "only a win on another's kong robs it"),
    ],
)
def test_what_is_not_an_event_is_an_error_naming_it(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message.replace("(", r"\(").replace("+", r"\+")):
        parse_events(text)


@pytest.mark.parametrize(
    "event",
    [
        {"t": "draw", "seat": 2, "tile": "9s", "x_ms": 120},  # an extension
        {"t": "pong", "seat": 3, "tile": "9s"},  # no discarder
        {"t": "kong", "seat": 0, "tile": "7p", "kind": "added", "from": 1},
        {"t": "kong", "seat": 0, "tile": "7p", "kind": "sideways"},
        {"t": "kong", "seat": 0, "tile": "7p", "kind": ["added"]},
        {"t": "hu", "seat": 1, "tile": "8p"},  # hu always says from (null: a self-draw)
        {"t": "hu", "seat": 1, "tile": "8p", "from": None, "rob_kong": True},
        {"t": "hu", "seat": 1, "tile": "8p", "from": 0, "rob_kong": "yes"},
        {"t": "discard", "seat": 4, "tile": "8p"},
        {"t": "discard", "seat": True, "tile": "8p"},
        {"t": "discard", "seat": 0, "tile": "8z"},
        {"t": "discard", "seat": 0, "tile": 8},
        {"t": "pong", "seat": 0, "tile": "8p", "from": 7},
        {"t": "chi", "seat": 0, "tile": "8p"},
        {"t": ["draw"], "seat": 0, "tile": "8p"},
        {"seat": 0, "tile": "8p"},
    ],
)
def test_what_the_notation_cannot_write_is_an_error(event: dict[str, object]) -> None:
    with pytest.raises(NotationError, match="cannot be written in the notation"):
        format_event(event)


def test_not_robbing_written_out_is_no_robbing() -> None:
    assert format_event({"t": "hu", "seat": 1, "tile": "8p", "from": 0, "rob_kong": False}) == "1h8p<0"


def test_payments_and_wins() -> None:
    text = "0>1=1hu@1 2>0=10hua_zhu 0>pot=48penalty 3>2=2cha_jiao"
    payments = parse_payments(text)
    assert payments[2] == {"from": 0, "to": None, "amount": 48, "reason": "penalty", "event": None}
    assert format_payments(payments) == text
    wins = "1@1:1f1p 2@3:2f2p=qing_yi_se+gen"
    assert parse_wins(wins)[0] == {"seat": 1, "event": 1, "fan": 1, "points": 1}
    assert format_wins(parse_wins(wins)) == wins
    with pytest.raises(NotationError, match=r"payment 2 '1>2=-1hu': not"):
        parse_payments("0>1=1hu 1>2=-1hu")
    with pytest.raises(NotationError, match=r"win 1 '1@1:1f': not"):
        parse_wins("1@1:1f")
    for bad in (
        {"from": 0, "to": 1, "amount": 1, "reason": "hu"},
        {"from": 0, "to": 1, "amount": 1.5, "reason": "hu", "event": None},
    ):
        with pytest.raises(NotationError, match="cannot be written"):
            format_payment(bad)
    with pytest.raises(NotationError, match="cannot be written"):
        format_win({"seat": 1, "event": 1, "fan": 1})
    with pytest.raises(NotationError, match="cannot be written"):
        format_win({"seat": 1, "event": 1, "fan": 1, "points": 1, "patterns": ["Qing Yi Se"]})


# ------------------------------------------------------------------------------------------------ round trips
SEATS = st.integers(0, 3)
TILES = st.builds(lambda r, s: f"{r}{s}", st.integers(1, 9), st.sampled_from("mps"))
OPTIONAL_TILES = st.one_of(st.none(), TILES)


def _with_tile(event: dict[str, object], tile: str | None) -> dict[str, object]:
    return {**event, "tile": tile} if tile is not None else event


EVENTS = st.one_of(
    st.builds(lambda s, t: _with_tile({"t": "draw", "seat": s}, t), SEATS, OPTIONAL_TILES),
    st.builds(lambda s, t: {"t": "discard", "seat": s, "tile": t}, SEATS, TILES),
    st.builds(lambda s, t, f: _with_tile({"t": "pong", "seat": s}, t) | {"from": f}, SEATS, OPTIONAL_TILES, SEATS),
    st.builds(
        lambda s, t, f: _with_tile({"t": "kong", "seat": s}, t) | {"kind": "direct", "from": f},
        SEATS,
        OPTIONAL_TILES,
        SEATS,
    ),
    st.builds(
        lambda s, t, k: _with_tile({"t": "kong", "seat": s}, t) | {"kind": k},
        SEATS,
        OPTIONAL_TILES,
        st.sampled_from(["added", "concealed"]),
    ),
    st.builds(
        lambda s, t, f, rob: _with_tile({"t": "hu", "seat": s}, t) | {"from": f} | ({"rob_kong": True} if rob else {}),
        SEATS,
        OPTIONAL_TILES,
        st.one_of(st.none(), SEATS),
        st.booleans(),
    ).filter(lambda e: not (e.get("rob_kong") and e["from"] is None)),
)


@given(st.lists(EVENTS, max_size=30))
def test_events_round_trip_from_objects(events: list[dict[str, object]]) -> None:
    assert parse_events(format_events(events)) == events


@given(st.lists(EVENTS, max_size=30))
def test_events_round_trip_from_text(events: list[dict[str, object]]) -> None:
    text = format_events(events)
    assert format_events(parse_events(text)) == text


PAYMENTS = st.fixed_dictionaries(
    {
        "from": SEATS,
        "to": st.one_of(st.none(), SEATS),
        "amount": st.integers(0, 10**6),
        "reason": st.sampled_from(["hu", "zi_mo", "gang", "hua_zhu", "cha_jiao", "tui_shui", "penalty"]),
        "event": st.one_of(st.none(), st.integers(0, 200)),
    }
)
WINS = st.builds(
    lambda seat, event, fan, points, patterns: (
        {"seat": seat, "event": event, "fan": fan, "points": points}
        | ({"patterns": patterns} if patterns is not None else {})
    ),
    SEATS,
    st.integers(0, 200),
    st.integers(0, 30),
    st.integers(0, 10**6),
    st.one_of(st.none(), st.lists(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), min_size=1, max_size=4)),
)


@given(st.lists(PAYMENTS, max_size=12), st.lists(WINS, max_size=4))
def test_payments_and_wins_round_trip(payments: list[dict[str, object]], wins: list[dict[str, object]]) -> None:
    assert parse_payments(format_payments(payments)) == payments
    assert parse_wins(format_wins(wins)) == wins


def _corpus_records() -> list[dict[str, object]]:
    out = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("events"), list):
                out.append(record)
    return out


def _writable(event: object) -> bool:
    try:
        format_event(event)  # type: ignore[arg-type]
    except (NotationError, TypeError, AttributeError):
        return False
    return True


def test_every_corpus_record_that_the_notation_can_write_round_trips() -> None:
    """The regression corpus is written in the notation: its records (bar the deliberately broken events)
    come back whole, and so do their claimed payments and wins."""
    records = _corpus_records()
    written = 0
    for record in records:
        events = record["events"]
        assert isinstance(events, list)
        if all(_writable(e) for e in events):
            assert parse_events(format_events(events)) == events
            written += 1
        result = record.get("result")
        if isinstance(result, dict) and isinstance(result.get("payments"), list):
            try:
                text = format_payments(result["payments"])
            except NotationError:
                continue  # a case of a malformed claim
            assert parse_payments(text) == result["payments"]
    assert written >= 0.9 * len(records) and written > 150


def test_simulated_records_round_trip() -> None:
    records = [json.loads(line) for line in sample_lines(200)]
    for record in records:
        assert parse_events(format_events(record["events"])) == record["events"], record["hand_id"]
        assert parse_payments(format_payments(record["result"]["payments"])) == record["result"]["payments"]
