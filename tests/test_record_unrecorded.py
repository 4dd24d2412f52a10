"""Facts a source did not store (``unrecorded``) and wall commitments (``commitment``): schemas/XZLOG.md (issue 41)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.game.commitment import Commitment, check, regenerate, seed_hash
from pipeline.rules.tiles import TILE_NAMES
from pipeline.validate import validate

CORPUS = Path(__file__).parent / "corpus"
SEED, SALT = "ab" * 32, "cd" * 16


def wall_end_app() -> dict[str, Any]:
    """A clean hand of the corpus that ends at an empty wall with 查花猪, under a profile that declares 定缺."""
    for line in (CORPUS / "empty_wall.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["hand_id"] == "wall-empty-app":
            return rec
    raise AssertionError("the corpus lost wall-empty-app")


def test_a_missing_que_is_an_error_unless_unrecorded() -> None:
    rec = wall_end_app()
    assert validate(rec).ok
    del rec["que"]
    assert [i.code for i in validate(rec).issues] == ["TILE_VOID"]  # the profile declares 定缺
    rec["unrecorded"] = ["que"]
    v = validate(rec)
    assert v.ok, v.issues
    assert any("定缺 not recorded" in n for n in v.not_checked)
    assert any(n.startswith("the end of the wall: who was ready") for n in v.not_checked)
    assert any("end-of-hand payments" in n for n in v.not_checked)  # 查花猪 claimed, compared net of


def test_the_end_of_the_wall_is_not_judged_on_a_guessed_void_suit() -> None:
    """A wrong 查花猪 payment is found with the void suits, and not judged without them."""
    rec = wall_end_app()
    bad = copy.deepcopy(rec)
    pig = next(p for p in bad["result"]["payments"] if p["reason"] == "hua_zhu")
    pig["amount"] += 1
    bad["result"]["deltas"][pig["from"]] -= 1
    bad["result"]["deltas"][pig["to"]] += 1
    assert not validate(bad).ok
    del bad["que"]
    bad["unrecorded"] = ["que"]
    assert validate(bad).ok


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("unrecorded", ["time"], "SCHEMA_TYPE"),
        ("unrecorded", "que", "SCHEMA_TYPE"),
        ("commitment", [], "SCHEMA_TYPE"),
        ("commitment", {"scheme": "other", "hash": "a" * 64, "salt": "", "round": 1}, "SCHEMA_TYPE"),
        ("commitment", {"scheme": "salasasa-sha256-v1", "hash": "A" * 64, "salt": "", "round": 1}, "SCHEMA_TYPE"),
        ("commitment", {"scheme": "salasasa-sha256-v1", "hash": "a" * 64, "salt": 3, "round": 1}, "SCHEMA_TYPE"),
        (
            "commitment",
            {"scheme": "salasasa-sha256-v1", "hash": "a" * 64, "salt": "", "round": 1, "seed": "xyz"},
            "SCHEMA_TYPE",
        ),
        ("commitment", {"scheme": "salasasa-sha256-v1", "hash": "a" * 64, "salt": "", "round": 0}, "SCHEMA_TYPE"),
        ("commitment", {"scheme": "salasasa-sha256-v1", "hash": "a" * 64, "salt": "", "rnd": 1}, "SCHEMA_TYPE"),
    ],
)
def test_malformed_fields_are_schema_errors(field: str, value: Any, code: str) -> None:
    rec = wall_end_app()
    rec[field] = value
    assert [i.code for i in validate(rec).issues] == [code]


def test_que_and_unrecorded_que_contradict() -> None:
    rec = wall_end_app()
    rec["unrecorded"] = ["que"]
    assert [i.code for i in validate(rec).issues] == ["SCHEMA_FIELD"]


def committed(dealer: int) -> tuple[Commitment, dict[str, Any]]:
    """A record whose wall is the one the seed gives hand 2, with ``dealer`` dealing; the hand is cut short."""
    c = Commitment("salasasa-sha256-v1", seed_hash(SEED, SALT), SALT, SEED, 2)
    wall = [TILE_NAMES[k] for k in regenerate(c, dealer=dealer)]
    rec = {
        "format": "xzlog/1",
        "hand_id": "c1",
        "ruleset": "chengdu",
        "players": ["a", "b", "c", "d"],
        "dealer": dealer,
        "wall": wall,
        "events": [],
        "commitment": {"scheme": c.scheme, "hash": c.hash, "salt": SALT, "round": 2, "seed": SEED},
    }
    return c, rec


@pytest.mark.parametrize("dealer", [0, 3])
def test_a_wall_that_is_the_seeds_passes(dealer: int) -> None:
    _, rec = committed(dealer)
    assert not [i for i in validate(rec).issues if i.code.startswith("TILE_COMMIT")]


def test_a_changed_wall_and_a_wrong_seed_are_found() -> None:
    _, rec = committed(1)
    wall = rec["wall"]
    j = next(i for i in range(60, 108) if wall[i] != wall[59])
    wall[59], wall[j] = wall[j], wall[59]
    codes = [i.code for i in validate(rec).issues]
    assert "TILE_COMMIT_WALL" in codes
    rec["commitment"]["seed"] = "ef" * 32
    codes = [i.code for i in validate(rec).issues]
    assert "TILE_COMMIT_SEED" in codes and "TILE_COMMIT_WALL" not in codes


def test_without_a_seed_or_a_wall_nothing_is_checked() -> None:
    c, _ = committed(0)
    assert check(Commitment(c.scheme, c.hash, c.salt, None, 2), None, dealer=0) == []
    assert check(c, None, dealer=0) == []
    assert check(c, regenerate(c, dealer=2), dealer=2) == []
    assert check(c, regenerate(c, dealer=2), dealer=1)[0][0] == "TILE_COMMIT_WALL"


def test_the_parsed_record_keeps_what_was_not_recorded() -> None:
    from pipeline.game.record import parse_record

    rec = wall_end_app()
    del rec["que"]
    rec["unrecorded"] = ["que"]
    parsed = parse_record(rec)
    assert parsed.unrecorded == frozenset({"que"}) and parsed.void_unknown and parsed.commitment is None
    assert not parse_record(wall_end_app()).void_unknown


def test_without_que_a_three_suit_pig_is_still_known_and_readiness_is_not() -> None:
    """Three suits make a flower pig whatever the void suit; who was ready is not known without it."""
    rec = wall_end_app()
    full = validate(rec)
    pigs = [s.seat for s in full.seats if s.hua_zhu]
    assert pigs  # the corpus hand ends with a flower pig
    del rec["que"]
    rec["unrecorded"] = ["que"]
    blind = validate(rec)
    assert [s.seat for s in blind.seats if s.hua_zhu] == pigs
    assert all(s.ready_at_end is None for s in blind.seats)
