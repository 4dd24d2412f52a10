"""validate.play_faults: what makes a record unfit to learn play from (``export`` leaves such hands out, issue 40)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from pipeline.validate import play_faults, validate

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.jsonl.gz"


def _good() -> dict:
    lines = gzip.decompress(SAMPLE.read_bytes()).decode().splitlines()
    return next(r for r in map(json.loads, lines[:50]) if not validate(r).issues and r.get("result"))


def test_a_legal_hand_has_none() -> None:
    assert play_faults(validate(_good())) == ()


def test_an_illegal_play_is_one() -> None:
    record = _good()
    record["events"][0]["seat"] = (record["events"][0]["seat"] + 1) % len(record["players"])
    assert play_faults(validate(record)) == ("TURN_ORDER",)


def test_a_wrong_claimed_score_is_not() -> None:
    record = _good()
    record["result"]["deltas"][0] += 1
    record["result"]["deltas"][1] -= 1
    v = validate(record)
    assert v.issues and play_faults(v) == ()


def test_a_record_that_cannot_be_replayed_is_one() -> None:
    assert play_faults(validate({"format": "xzlog/1"})) != ()
