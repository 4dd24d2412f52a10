"""``validate_lines`` / ``validate`` on what is not a record: a file that could not be read to its end, a line
too long to be a hand record, a JSON value that is no object, and a ``--profile`` override that is neither
a name nor an object. Lines come from the ingest reader (``read_lines``) over real files, as in
``xuezhan validate`` and ``xuezhan ingest``; records from the regression corpus."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.ingest.read import RawLine, read_lines
from pipeline.rules.ruleset import Override, RuleSetError
from pipeline.validate import validate, validate_line, validate_lines

CORPUS = Path(__file__).resolve().parent / "corpus"


def corpus_line(hand_id: str) -> bytes:
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("hand_id") == hand_id:
                return line
    raise LookupError(hand_id)


VALID = corpus_line("play-three-winners")


def test_a_line_too_long_for_a_record_is_reported_without_being_parsed(tmp_path: Path) -> None:
    max_line = len(VALID) + 16
    long_line = b'{"format": "xzlog/1", "x_pad": "' + b"x" * (3 * max_line) + b'"}'
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(VALID + b"\n\n" + long_line + b"\n" + VALID + b"\n")
    lines = list(read_lines([str(path)], max_line=max_line))
    assert [line.too_long for line in lines] == [False, False, True, False]
    outcomes = list(validate_lines(lines))
    assert [o.position for o in outcomes] == [0, 2, 3]  # the blank line has no outcome, but keeps its place
    first, too_long, last = outcomes
    assert first.validation.ok and last.validation.ok and first.obj is not None
    assert too_long.line is lines[2] and too_long.obj is None
    v = too_long.validation
    assert (v.hand_id, v.record, v.replayed, v.ok) == (None, None, False, False)
    assert [i.code for i in v.issues] == ["INGEST_LINE_TOO_LONG"]
    assert v.issues[0].message == f"line 3: a line of {len(long_line)} bytes cannot be a hand record"
    assert v.issues[0].severity == "error"


def test_a_file_that_cannot_be_read_to_its_end_is_one_read_issue(tmp_path: Path) -> None:
    whole = gzip.compress(VALID + b"\n" + VALID + b"\n")
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) - 12])  # the gzip trailer and some data gone
    missing = tmp_path / "missing.jsonl"
    lines = list(read_lines([str(cut), str(missing)]))
    faults = [line for line in lines if line.fault is not None]
    assert len(faults) == 2
    outcomes = list(validate_lines(lines))
    read_issues = [o for o in outcomes if o.line.fault is not None]
    assert [o.line for o in read_issues] == faults
    for o in read_issues:
        v = o.validation
        assert o.obj is None and v.record is None and v.hand_id is None and not v.ok
        assert [(i.code, i.message) for i in v.issues] == [("INGEST_READ", o.line.fault)]
    assert f"cannot open {missing}" in read_issues[-1].validation.issues[0].message
    # the lines read before the fault are validated as usual
    assert all(o.validation.ok for o in outcomes if o.line.fault is None)


def test_a_read_fault_is_reported_before_anything_else_about_its_line() -> None:
    line = RawLine.failed("f.jsonl.zst", 9, "truncated zstd frame")
    (outcome,) = validate_lines([line])
    assert outcome.position == 0 and not line.blank
    assert [(i.code, i.message) for i in outcome.validation.issues] == [("INGEST_READ", "truncated zstd frame")]


@pytest.mark.parametrize("value", [[1, 2], "xzlog/1", 3, None, [{"format": "xzlog/1"}]])
def test_validating_a_value_that_is_no_record_object(value: Any) -> None:
    v = validate(value)
    assert v.hand_id is None and v.record is None and not v.ok
    assert [(i.code, i.message) for i in v.issues] == [
        ("SCHEMA_JSON", f"a record is a JSON object, got {type(value).__name__}")
    ]


@pytest.mark.parametrize("hand_id", [7, None, ["h1"]])
def test_a_hand_id_that_is_no_string_is_not_reported_as_the_hand_id(hand_id: Any) -> None:
    obj = json.loads(VALID)
    obj["hand_id"] = hand_id
    v = validate(obj)
    assert v.hand_id is None
    assert [i.code for i in v.issues] == ["SCHEMA_TYPE"]


@pytest.mark.parametrize("spec", [3, ["app"], ("chengdu",), 1.5, True])
def test_a_profile_override_is_a_name_or_an_object(spec: Any) -> None:
    with pytest.raises(RuleSetError, match=f"a profile override is a name or an object, got {type(spec).__name__}"):
        Override.parse(spec)


def test_a_bad_override_stops_validate_lines_before_any_line_is_read() -> None:
    touched: list[int] = []

    def lines() -> Iterator[RawLine]:
        touched.append(1)
        yield RawLine.of("f", 1, VALID)

    with pytest.raises(RuleSetError, match="got list"):
        next(validate_lines(lines(), profile=["app"]))  # type: ignore[arg-type]
    assert touched == []
    with pytest.raises(RuleSetError, match="got int"):
        validate_line(VALID, profile=3)


@pytest.mark.parametrize("spec", [3, "chengdo", {"cpa": 4}])
def test_a_bad_override_is_refused_by_validate_as_by_validate_line(spec: Any) -> None:
    with pytest.raises(RuleSetError):
        validate_line(VALID, profile=spec)
    with pytest.raises(RuleSetError):
        validate(json.loads(VALID), profile=spec)
