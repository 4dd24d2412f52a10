"""The xzlog/1 JSON Schema: well-formed, accepts the documented example, rejects each broken field."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from schemas import SCHEMA_DIR, xzlog_schema

Record = dict[str, Any]
Path = tuple[str | int, ...]


def _doc_example() -> Record:
    """The record under ``<!-- example:valid -->`` in XZLOG.md, so the page and the schema stay in step."""
    text = (SCHEMA_DIR / "XZLOG.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- example:valid -->\s*```json\n(.*?)\n```", text, re.DOTALL)
    assert match, "XZLOG.md lost its <!-- example:valid --> block"
    record: Record = json.loads(match.group(1))
    return record


EXAMPLE = _doc_example()
VALIDATOR = Draft202012Validator(xzlog_schema())


def _errors(record: Record) -> list[Any]:
    return list(VALIDATOR.iter_errors(record))


def _dealt_wall(record: Record) -> list[str]:
    """A wall that deals ``record["deal"]`` and feeds its draws by the dealing convention."""
    dealer, deal = record["dealer"], record["deal"]
    wall: list[str] = []
    for k in range(4):
        wall += deal[(dealer + k) % 4][:13]
    wall.append(deal[dealer][13])
    wall += [event["tile"] for event in record["events"] if event["t"] == "draw"]
    rest = Counter({f"{rank}{suit}": 4 for suit in "mps" for rank in range(1, 10)})
    rest.subtract(wall)
    return wall + sorted(rest.elements())


def _set(path: Path, value: Any) -> Callable[[Record], None]:
    def mutate(record: Record) -> None:
        *parents, last = path
        node: Any = record
        for key in parents:
            node = node[key]
        node[last] = value

    return mutate


def _drop(path: Path) -> Callable[[Record], None]:
    def mutate(record: Record) -> None:
        *parents, last = path
        node: Any = record
        for key in parents:
            node = node[key]
        del node[last]

    return mutate


def _all(*mutations: Callable[[Record], None]) -> Callable[[Record], None]:
    def mutate(record: Record) -> None:
        for one in mutations:
            one(record)

    return mutate


def _mutated(*mutations: Callable[[Record], None]) -> Record:
    record = copy.deepcopy(EXAMPLE)
    for mutate in mutations:
        mutate(record)
    return record


def _walk_properties(schema: Any, where: str = "#") -> Iterator[tuple[str, Any]]:
    """Every (location, subschema) a ``properties`` or ``patternProperties`` keyword declares.

    Conditions (``if``/``then``/``else``/``not``) only restate declared properties, so they are skipped.
    """
    if isinstance(schema, dict):
        for keyword, value in schema.items():
            if keyword in ("if", "then", "else", "not"):
                continue
            if keyword in ("properties", "patternProperties"):
                for name, sub in value.items():
                    yield f"{where}/{keyword}/{name}", sub
            yield from _walk_properties(value, f"{where}/{keyword}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from _walk_properties(item, f"{where}/{i}")


def _described(sub: dict[str, Any]) -> bool:
    """A description of its own, or one on the local ``$defs`` entry it only refers to."""
    if "description" in sub:
        return True
    ref = sub.get("$ref", "")
    return ref.startswith("#/$defs/") and "description" in xzlog_schema()["$defs"][ref.removeprefix("#/$defs/")]


# --- the schema itself -------------------------------------------------------------------------


def test_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(xzlog_schema())
    assert xzlog_schema()["$id"] == "https://xuezhan.dev/schemas/xzlog-1.schema.json"
    assert xzlog_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_is_loaded_once() -> None:
    assert xzlog_schema() is xzlog_schema()
    on_disk = json.loads((SCHEMA_DIR / "xzlog-1.schema.json").read_text(encoding="utf-8"))
    assert xzlog_schema() == on_disk


def test_every_property_has_a_description() -> None:
    undescribed = [where for where, sub in _walk_properties(xzlog_schema()) if not _described(sub)]
    assert undescribed == []


def test_contract_fields_are_all_declared() -> None:
    contract = {"format", "hand_id", "session_id", "hand_no", "table_id", "played_at", "ruleset"}
    contract |= {"players", "dealer", "wall", "deal", "exchange", "que", "events", "result"}
    contract |= {"level", "end"}  # issue 20: levels of record (optional: a record without them reads as before)
    contract |= {"observer"}  # issue 20: the observer level's seat
    contract |= {"unrecorded", "commitment"}  # issue 41: facts a source did not store; wall commitments
    assert set(xzlog_schema()["properties"]) == contract


# --- valid records -----------------------------------------------------------------------------


def test_documented_example_is_valid() -> None:
    assert _errors(EXAMPLE) == []


def test_documented_example_is_a_possible_deal() -> None:
    """Not the schema's job, but the page's example must not teach an impossible hand."""
    sizes = [len(hand) for hand in EXAMPLE["deal"]]
    assert sizes == [14 if seat == EXAMPLE["dealer"] else 13 for seat in range(4)]
    wall = _dealt_wall(EXAMPLE)
    assert len(wall) == 108
    assert max(Counter(wall).values()) == 4


VALID = {
    "with wall and deal": _set(("wall",), _dealt_wall(EXAMPLE)),
    "wall only": _all(_set(("wall",), _dealt_wall(EXAMPLE)), _drop(("deal",))),
    "x_ field at top level": _set(("x_foo",), {"anything": [1, 2]}),
    "x_ field on an event": _set(("events", 0, "x_source_seq"), 17),
    "x_ field in result": _set(("result", "x_currency"), "beans"),
    "ruleset object with overrides": _set(("ruleset",), {"profile": "app", "cap": 4, "exchange_three": False}),
    "ruleset object without overrides": _set(("ruleset",), {"profile": "chengdu"}),
    "que with a null seat": _set(("que",), ["s", None, "s", "p"]),
    "no que": _drop(("que",)),
    "exchange": _set(("exchange",), {"direction": "across", "given": [["9s", "8p", "8p"]] * 4}),
    "no result": _drop(("result",)),
    "result without wins": _drop(("result", "wins")),
    "payment with null event": _set(("result", "payments", 0, "event"), None),
    "payment without event": _drop(("result", "payments", 0, "event")),
    "win with points only": _drop(("result", "wins", 0, "fan")),
    "win with fan zero": _set(("result", "wins", 0, "fan"), 0),
    "ms zero": _set(("events", 1, "ms"), 0),
    "direct kong with from": _set(("events", 6), {"t": "kong", "seat": 3, "tile": "2m", "kind": "direct", "from": 2}),
    "added kong": _set(("events", 6), {"t": "kong", "seat": 3, "tile": "2m", "kind": "added"}),
    "robbed kong win": _set(("events", 8), {"t": "hu", "seat": 0, "tile": "2m", "from": 3, "rob_kong": True}),
    "rob_kong false on a self-draw": _set(("events", 8, "rob_kong"), False),
    "minimal record": _all(
        *(_drop((key,)) for key in ("session_id", "hand_no", "table_id", "played_at", "que", "result"))
    ),
    "no events yet": _set(("events",), []),
}


@pytest.mark.parametrize("mutate", VALID.values(), ids=VALID.keys())
def test_valid_variants(mutate: Callable[[Record], None]) -> None:
    assert _errors(_mutated(mutate)) == []


# --- invalid records: each names where the schema must complain and with which keyword ----------

_KONG = ("events", 6)
_HU = ("events", 8)

INVALID: dict[str, tuple[Callable[[Record], None], Path, str]] = {
    "format xzlog/2": (_set(("format",), "xzlog/2"), ("format",), "const"),
    "format missing": (_drop(("format",)), (), "required"),
    "empty hand_id": (_set(("hand_id",), ""), ("hand_id",), "minLength"),
    "hand_no 0": (_set(("hand_no",), 0), ("hand_no",), "minimum"),
    "played_at not a string": (_set(("played_at",), 1700000000), ("played_at",), "type"),
    "tile 0m in deal": (_set(("deal", 0, 0), "0m"), ("deal", 0, 0), "pattern"),
    "tile 1z in an event": (_set(("events", 0, "tile"), "1z"), ("events", 0, "tile"), "pattern"),
    "tile 77p": (_set(("deal", 1, 0), "77p"), ("deal", 1, 0), "pattern"),
    # a wall is 108 tiles, or 72 at a two-suit table; 3 or 4 players (which one is the ruleset's to say)
    "wall of 107": (_set(("wall",), _dealt_wall(EXAMPLE)[:107]), ("wall",), "anyOf"),
    "wall of 109": (_set(("wall",), [*_dealt_wall(EXAMPLE), "1m"]), ("wall",), "anyOf"),
    "wall of 71": (_set(("wall",), _dealt_wall(EXAMPLE)[:71]), ("wall",), "anyOf"),
    "deal of 2 hands": (_set(("deal",), EXAMPLE["deal"][:2]), ("deal",), "minItems"),
    "hand of 12 tiles": (_set(("deal", 1), EXAMPLE["deal"][1][:12]), ("deal", 1), "minItems"),
    "neither wall nor deal": (_drop(("deal",)), (), "anyOf"),
    "players of 2": (_set(("players",), ["a", "b"]), ("players",), "minItems"),
    "players of 5": (_set(("players",), ["a", "b", "c", "d", "e"]), ("players",), "maxItems"),
    "empty player id": (_set(("players", 1), ""), ("players", 1), "minLength"),
    "dealer 4": (_set(("dealer",), 4), ("dealer",), "maximum"),
    "dealer as text": (_set(("dealer",), "0"), ("dealer",), "type"),
    "ruleset capitalised": (_set(("ruleset",), "Chengdu"), ("ruleset",), "oneOf"),
    "ruleset without profile": (_set(("ruleset",), {"cap": 4}), ("ruleset",), "oneOf"),
    "ruleset override a list": (_set(("ruleset",), {"profile": "app", "cap": [4]}), ("ruleset",), "oneOf"),
    "que with x": (_set(("que", 0), "x"), ("que", 0), "enum"),
    "que of 2": (_set(("que",), ["s", "m"]), ("que",), "minItems"),
    "exchange direction left": (
        _set(("exchange",), {"direction": "left", "given": [["9s", "8p", "8p"]] * 4}),
        ("exchange", "direction"),
        "enum",
    ),
    "exchange of two tiles": (
        _set(("exchange",), {"direction": "cw", "given": [["9s", "8p"]] * 4}),
        ("exchange", "given", 0),
        "minItems",
    ),
    "events missing": (_drop(("events",)), (), "required"),
    "unknown event type": (_set(("events", 1, "t"), "chow"), ("events", 1, "t"), "enum"),
    "event without seat": (_drop(("events", 2, "seat")), ("events", 2), "required"),
    "event without tile": (_drop(("events", 5, "tile")), ("events", 5), "required"),
    "event seat 4": (_set(("events", 2, "seat"), 4), ("events", 2, "seat"), "maximum"),
    "unknown event field": (_set(("events", 0, "note"), "hi"), ("events", 0), "additionalProperties"),
    "from on a discard": (_set(("events", 2, "from"), 0), ("events", 2), "additionalProperties"),
    "negative ms": (_set(("events", 0, "ms"), -1), ("events", 0, "ms"), "minimum"),
    "pong without from": (_drop(("events", 1, "from")), ("events", 1), "required"),
    "kong without kind": (_drop((*_KONG, "kind")), _KONG, "required"),
    "kong kind open": (_set((*_KONG, "kind"), "open"), (*_KONG, "kind"), "enum"),
    "direct kong without from": (_set((*_KONG, "kind"), "direct"), _KONG, "required"),
    "concealed kong with from": (_set((*_KONG, "from"), 3), _KONG, "not"),
    "hu without from": (_drop((*_HU, "from")), _HU, "required"),
    "hu from 4": (_set((*_HU, "from"), 4), (*_HU, "from"), "maximum"),
    "robbed kong self-drawn": (_set((*_HU, "rob_kong"), True), (*_HU, "from"), "type"),
    "rob_kong as text": (_set((*_HU, "rob_kong"), "yes"), (*_HU, "rob_kong"), "type"),
    "rob_kong on a discard": (_set(("events", 2, "rob_kong"), True), ("events", 2), "additionalProperties"),
    "payment amount 0": (
        _set(("result", "payments", 0, "amount"), 0),
        ("result", "payments", 0, "amount"),
        "minimum",
    ),
    "payment reason tip": (
        _set(("result", "payments", 0, "reason"), "tip"),
        ("result", "payments", 0, "reason"),
        "enum",
    ),
    "payment without reason": (
        _drop(("result", "payments", 0, "reason")),
        ("result", "payments", 0),
        "required",
    ),
    "payment event -1": (
        _set(("result", "payments", 0, "event"), -1),
        ("result", "payments", 0, "event"),
        "minimum",
    ),
    "deltas of 2": (_set(("result", "deltas"), [-7, 7]), ("result", "deltas"), "minItems"),
    "fractional delta": (_set(("result", "deltas", 0), -7.5), ("result", "deltas", 0), "type"),
    "result without deltas": (_drop(("result", "deltas")), ("result",), "required"),
    "win without fan or points": (
        _all(_drop(("result", "wins", 0, "fan")), _drop(("result", "wins", 0, "points"))),
        ("result", "wins", 0),
        "anyOf",
    ),
    "negative points": (
        _set(("result", "wins", 0, "points"), -1),
        ("result", "wins", 0, "points"),
        "minimum",
    ),
    "unknown top-level field": (_set(("comment",), "nice hand"), (), "additionalProperties"),
    "unknown result field": (_set(("result", "total"), 0), ("result",), "additionalProperties"),
}


@pytest.mark.parametrize(("mutate", "path", "keyword"), INVALID.values(), ids=INVALID.keys())
def test_invalid_records(mutate: Callable[[Record], None], path: Path, keyword: str) -> None:
    errors = _errors(_mutated(mutate))
    assert errors, "the schema accepted a broken record"
    found = [(tuple(e.absolute_path), e.validator) for e in errors]
    assert (path, keyword) in found, found
