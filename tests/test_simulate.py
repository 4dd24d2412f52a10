"""The simulator: clean play validates, the same arguments give the same bytes, injections come with
ground truth that the validator confirms, and the styles play as a person would expect."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from cli import app
from pipeline.simulate.inject import CORRUPT_KINDS, SCORE_KINDS, InjectSpec, SpecError
from pipeline.simulate.tables import SimConfig, Summary, labels_path, simulate, write
from pipeline.validate import check_sessions, hand_key, validate_line

runner = CliRunner()


def _lines(config: SimConfig) -> list[str]:
    lines, _ = simulate(config)
    return list(lines)


@pytest.mark.parametrize("profile", ["chengdu", "app"])
def test_clean_simulation_validates_clean(profile: str) -> None:
    """Without injection every simulated record replays clean, sessions included (dealer rule)."""
    lines = _lines(SimConfig(hands=1000, seed=11, players=10, profile=profile))
    assert len(lines) == 1000
    keys = []
    for n, line in enumerate(lines, 1):
        v = validate_line(line, line_no=n)
        assert v.ok, (n, [i.as_dict() for i in v.issues])
        assert not v.issues
        keys.append(hand_key(v))
    assert check_sessions(keys) == []


def test_same_arguments_same_bytes(tmp_path) -> None:
    config = SimConfig(hands=40, seed=5, inject=InjectSpec.parse("score_errors=0.2,corrupt=0.1,collude=1:0.5,bot=1"))
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    write(config, a)
    write(config, b)
    assert a.read_bytes() == b.read_bytes()
    assert labels_path(a).read_text() == labels_path(b).read_text()
    assert _lines(config) != _lines(SimConfig(hands=40, seed=6, inject=config.inject))


def test_labels_path_beside_output(tmp_path) -> None:
    assert labels_path(tmp_path / "games.jsonl.gz").name == "games.labels.json"
    assert labels_path(tmp_path / "games.jsonl.zst").name == "games.labels.json"
    assert labels_path(tmp_path / "games.jsonl").name == "games.labels.json"


def test_inject_spec() -> None:
    spec = InjectSpec.parse("collude=2:0.3, score_errors=0.02,corrupt=0.01,bot=1")
    assert (spec.collude_pairs, spec.collude_intensity, spec.score_errors, spec.corrupt, spec.bots) == (
        2,
        0.3,
        0.02,
        0.01,
        1,
    )
    assert InjectSpec.parse(None) == InjectSpec()
    for bad in ("collude=x", "nonsense=1", "score_errors=2", "bot=-1", "corrupt"):
        with pytest.raises(SpecError):
            InjectSpec.parse(bad)


def test_score_errors_are_found_by_the_validator_and_nothing_else() -> None:
    """Every injected scoring error shows up as a SCORE_/SETTLE_ issue on its hand, and no other hand has one."""
    config = SimConfig(hands=250, seed=3, inject=InjectSpec.parse("score_errors=0.2"))
    lines, labels = simulate(config)
    lines = list(lines)
    faulty = {f.hand_id: f for f in labels.faults}
    assert len(faulty) >= 20
    assert {f.kind for f in labels.faults} <= set(SCORE_KINDS)
    for line in lines:
        v = validate_line(line)
        codes = {i.code for i in v.issues}
        if v.hand_id in faulty:
            assert codes, faulty[v.hand_id]
            assert all(c.startswith(("SCORE_", "SETTLE_")) for c in codes), codes
        else:
            assert not codes, (v.hand_id, codes)


def test_score_errors_under_sbr_pay_the_pot_and_never_give_a_fan_below_zero() -> None:
    """Issue 39: sbr's pot payments (``"to": null``) and its 0-fan wins crashed the injection. Every hand is
    written; a faulted one is found by the validator, a clean one has no issue."""
    config = SimConfig(hands=200, seed=0, profile="sbr", inject=InjectSpec.parse("score_errors=0.5"))
    lines, labels = simulate(config)
    lines = list(lines)
    faulty = {f.hand_id for f in labels.faults}
    assert len(lines) == 200 and len(faulty) >= 40
    for line in lines:
        record = json.loads(line)
        assert all(w["fan"] >= 0 for w in record.get("result", {}).get("wins", []))
        codes = {i.code for i in validate_line(line).issues}
        assert bool(codes) == (record["hand_id"] in faulty), (record["hand_id"], codes)


def test_corruptions_are_caught_with_their_kind() -> None:
    config = SimConfig(hands=300, seed=4, inject=InjectSpec.parse("corrupt=0.25"))
    lines, labels = simulate(config)
    lines = list(lines)
    kinds = Counter(f.kind for f in labels.faults)
    assert set(kinds) <= set(CORRUPT_KINDS)
    assert len(kinds) >= 7, kinds
    expected = {
        "out_of_turn": {
            "TURN_ORDER",
            "TILE_COUNT_SHORT",
            "TILE_COUNT_LONG",
            "TILE_NOT_HELD",
            "CLAIM_NOT_ALLOWED",
            "TURN_WON",
            "TURN_AFTER_END",
            "WIN_WRONG_TILE",
        },
        "discard_not_held": {"TILE_NOT_HELD"},
        "draw_not_wall": {"TILE_WALL_ORDER"},
        "fifth_copy": {"TILE_FIFTH_COPY"},
        "false_win": {"WIN_FALSE", "WIN_VOID_SUIT"},
        "missing_draw": {"TILE_COUNT_SHORT"},
        "truncated": {"TURN_INCOMPLETE"},
        "broken_json": {"SCHEMA_JSON"},
    }
    by_hand: dict[str, set[str]] = {}
    keys = []
    for n, line in enumerate(lines, 1):
        v = validate_line(line, line_no=n)
        keys.append(hand_key(v))
        if v.hand_id is not None:
            by_hand.setdefault(v.hand_id, set()).update(i.code for i in v.issues)
    duplicated = {s.hand_id for s in check_sessions(keys) if s.issue.code == "SESSION_DUPLICATE_HAND"}
    for fault in labels.faults:
        if fault.kind == "duplicated":
            assert fault.hand_id in duplicated
        elif fault.kind == "broken_json":
            continue  # the line has no readable hand id; counted below
        else:
            assert by_hand[fault.hand_id] & expected[fault.kind], (fault, by_hand[fault.hand_id])
    assert sum(1 for line in lines if not _is_json(line)) == kinds["broken_json"]


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _summary(profile: str, hands: int, seed: int) -> dict[str, dict[str, float]]:
    summary = Summary()
    lines, _ = simulate(
        SimConfig(
            hands=hands,
            seed=seed,
            players=16,
            profile=profile,
            styles={"balanced": 0.25, "aggressive": 0.25, "defensive": 0.25, "novice": 0.25},
        ),
        summary=summary,
    )
    for _ in lines:
        pass
    return {r["style"]: r for r in summary.rows()}


@pytest.fixture(scope="module")
def realism() -> dict[str, dict[str, float]]:
    return _summary("chengdu", 1200, seed=2026)


def test_defensive_bots_deal_in_less_than_aggressive(realism) -> None:
    assert realism["defensive"]["deal_in_rate"] < realism["aggressive"]["deal_in_rate"]


def test_aggressive_bots_win_bigger_hands(realism) -> None:
    assert realism["aggressive"]["avg_fan"] > realism["balanced"]["avg_fan"]
    assert realism["aggressive"]["avg_fan"] > realism["defensive"]["avg_fan"]


def test_novices_make_more_flower_pigs(realism) -> None:
    others = max(realism[s]["hua_zhu_rate"] for s in ("balanced", "aggressive", "defensive"))
    assert realism["novice"]["hua_zhu_rate"] > others
    assert realism["novice"]["win_rate"] < realism["balanced"]["win_rate"]


def test_cli_simulate_writes_records_labels_and_summary(tmp_path) -> None:
    out = tmp_path / "games.jsonl.gz"
    result = runner.invoke(
        app,
        [
            "simulate",
            "--hands",
            "30",
            "--seed",
            "1",
            "--out",
            str(out),
            "--summary",
            "--inject",
            "collude=1:0.3,bot=1",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "win" in result.stdout and "花猪" in result.stdout
    with gzip.open(out, "rt") as f:
        records = [json.loads(line) for line in f]
    assert len(records) == 30
    labels = json.loads((tmp_path / "games.labels.json").read_text())
    assert set(labels) == {"seed", "players", "colluders", "bots", "friends", "faults"}
    assert len(labels["colluders"]) == 1 and labels["colluders"][0]["intensity"] == 0.3
    assert len(labels["bots"]) == 1
    assert all(p["style"] in ("balanced", "aggressive", "defensive", "novice") for p in labels["players"].values())


def test_cli_simulate_rejects_bad_arguments(tmp_path) -> None:
    assert runner.invoke(app, ["simulate", "--hands", "5", "--out", str(tmp_path / "x.txt")]).exit_code == 2
    assert (
        runner.invoke(
            app, ["simulate", "--hands", "5", "--out", str(tmp_path / "x.jsonl"), "--inject", "zap=1"]
        ).exit_code
        == 2
    )
    assert (
        runner.invoke(
            app, ["simulate", "--hands", "5", "--out", str(tmp_path / "x.jsonl"), "--rules", "nope"]
        ).exit_code
        == 2
    )
