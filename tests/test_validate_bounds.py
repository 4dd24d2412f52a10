"""Hostile numbers in a record (issue 24, item 1): a claimed fan, amount or delta out of range, and record-level
switch overrides beyond their documented maxima, are issues on that record, never a crash of the batch or an
unbounded computation (every amount stays below 2^53, ``ruleset.MAX_POINTS``)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli import app
from pipeline.rules.ruleset import MAX_POINTS, RuleSetError, load_ruleset, profile_names, switch_names
from pipeline.validate import validate

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.jsonl.gz"


def a_record_with_a_win() -> dict[str, Any]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as lines:
        for line in lines:
            obj = json.loads(line)
            if obj.get("result", {}).get("wins") and validate(obj).ok:
                return obj
    raise AssertionError("no valid record with a claimed win in the sample")


RECORD = a_record_with_a_win()


def with_change(change: Any) -> dict[str, Any]:
    obj = copy.deepcopy(RECORD)
    change(obj)
    return obj


def set_win(field: str, value: int) -> Any:
    return lambda obj: obj["result"]["wins"][0].__setitem__(field, value)


def set_ruleset(**switches: Any) -> Any:
    def change(obj: dict[str, Any]) -> None:
        ruleset = obj["ruleset"]
        obj["ruleset"] = {**({"profile": ruleset} if isinstance(ruleset, str) else ruleset), **switches}

    return change


HOSTILE = {
    "claimed fan 15000": (set_win("fan", 15000), "SCHEMA_RESULT"),
    "claimed fan 10^30": (set_win("fan", 10**30), "SCHEMA_RESULT"),
    "claimed points 2^60": (set_win("points", 2**60), "SCHEMA_RESULT"),
    "claimed amount 2^62": (lambda o: o["result"]["payments"][0].__setitem__("amount", 2**62), "SCHEMA_RESULT"),
    "claimed delta -2^62": (lambda o: o["result"]["deltas"].__setitem__(0, -(2**62)), "SCHEMA_RESULT"),
    "base 2^62": (set_ruleset(base=4611686018427387904), "RULESET_UNKNOWN"),
    "root_fan 10^8": (set_ruleset(root_fan=100000000), "RULESET_UNKNOWN"),
    "cap 10^6": (set_ruleset(cap=10**6), "RULESET_UNKNOWN"),
    "false_win_fan 10^4": (set_ruleset(false_win_fan=10**4), "RULESET_UNKNOWN"),
    "uncapped, every fan at its maximum": (
        set_ruleset(base=1_000_000, root_fan=16, men_qing_fan=16, duan_yao_fan=16, yi_tiao_long_fan=16),
        "RULESET_UNKNOWN",
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_number_is_an_issue_on_its_record(name: str) -> None:
    change, code = HOSTILE[name]
    v = validate(with_change(change))
    assert code in {i.code for i in v.issues}, (name, [i.as_dict() for i in v.issues])


def test_validate_json_survives_every_hostile_record(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    lines = [json.dumps(RECORD)] + [json.dumps(with_change(change)) for change, _ in HOSTILE.values()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", "--format", "json", str(path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(rows) >= len(lines)  # one line per record, the valid one included


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_bounds_its_amounts(name: str) -> None:
    rules = load_ruleset(name)
    assert rules.cap_points_max() <= MAX_POINTS
    assert rules.points(rules.max_fan()) <= rules.cap_points_max()


def test_the_bound_on_a_whole_ruleset_names_the_way_out() -> None:
    with pytest.raises(RuleSetError, match="set a cap or lower base"):
        load_ruleset("chengdu", base=1_000_000, root_fan=16, men_qing_fan=16, duan_yao_fan=16)
    assert load_ruleset("chengdu", base=1_000_000, root_fan=16, men_qing_fan=16, duan_yao_fan=16, cap=8).cap == 8


HUGE = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, 1, 2**53, 2**53 + 1, 2**63, -(2**63), 15000]))
INT_SWITCHES = [n for n in switch_names() if isinstance(getattr(load_ruleset("chengdu"), n), int)]
INT_SWITCHES = [n for n in INT_SWITCHES if not isinstance(getattr(load_ruleset("chengdu"), n), bool)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    where=st.sampled_from(["fan", "points", "amount", "delta", "switch"]),
    number=HUGE,
    switch=st.sampled_from(INT_SWITCHES),
)
def test_fuzz_numbers_from_a_record_never_crash_nor_overflow(where: str, number: int, switch: str) -> None:
    obj = copy.deepcopy(RECORD)
    result = obj["result"]
    if where == "fan":
        result["wins"][0]["fan"] = number
    elif where == "points":
        result["wins"][0]["points"] = number
    elif where == "amount":
        result["payments"][0]["amount"] = number
    elif where == "delta":
        result["deltas"][0] = number
    else:
        set_ruleset(**{switch: number})(obj)
    v = validate(obj)  # never raises
    assert all(i.code != "INTERNAL" for i in v.issues), [i.as_dict() for i in v.issues]
    assert all(abs(p.amount) <= MAX_POINTS for p in v.payments)
    assert json.dumps(v.as_dict())  # the --json line can always be written
