"""The evaluation of the cheating screens (pipeline/evaluate.py): replicates pooled per cell with Wilson
intervals, the false discovery proportion of honest populations, and both detectors end to end on small
populations."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from pipeline import evaluate
from pipeline.analytics.stats import wilson
from pipeline.audit.collusion import Group, PairResult, flagged_groups
from pipeline.evaluate import (
    Outcome,
    Population,
    cells,
    collusion_grid,
    found_groups,
    information_grid,
    run_information,
    table,
)
from pipeline.simulate.inject import InjectSpec, SpecError
from pipeline.simulate.tables import SimConfig, write

runner = CliRunner()


def outcome(name: str, planted: int, found: int, honest: int, false: int, seed: int = 0) -> Outcome:
    pop = Population(name, 100, 0.3, 1, 0, seed)
    scores = tuple([(2.0, True)] * planted + [(1.0, False)] * honest)
    return Outcome(pop, planted, found, honest, false, 50.0, scores)


def test_replicates_pool_per_cell_with_wilson_intervals() -> None:
    outs = [outcome("a", 2, 2, 20, 0, s) for s in range(9)] + [outcome("a", 2, 1, 20, 1, 9)]
    outs += [outcome("honest", 0, 0, 28, 0, s) for s in range(19)] + [outcome("honest", 0, 0, 28, 2, 19)]
    a, honest = cells(outs)
    assert (a.populations, a.planted, a.flagged_planted, a.flagged_honest, a.with_false) == (10, 20, 19, 1, 1)
    assert a.detection == 0.95 and a.detection_interval == wilson(19, 20)
    assert (honest.populations, honest.planted, honest.with_false, honest.discoveries) == (20, 0, 1, 2)
    assert honest.detection is None
    text = table(outs, 0.05)
    lo, hi = wilson(19, 20)
    assert f"| a | 100 | 10 | 19/20 = 95% [{lo:.0%}, {hi:.0%}] | 1/200 |" in text
    flo, fhi = wilson(1, 20)
    assert f"false discovery proportion 0.05, 95% CI [{flo:.2f}, {fhi:.2f}]" in text
    assert "2 false discoveries over 20 populations (560 pairs screened)" in text


def test_grids_give_every_replicate_its_own_seed() -> None:
    pops = collusion_grid(intensities=(0.3,), shared=(1000,), honest=3, replicates=5)
    assert [p.name for p in pops] == ["collude 0.3 × 1000"] * 5 + ["honest"] * 3
    assert len({p.seed for p in pops}) == 8 and all(p.pairs == 2 for p in pops[:5])
    info = information_grid(hands=500, bots=2, replicates=4, honest=4)
    assert [p.bots for p in info] == [2] * 4 + [0] * 4 and len({p.seed for p in info}) == 8
    assert {p.hands for p in info} == {1000}  # 8 players at 4 seats: each plays about half the hands
    assert info[4].styles != info[5].styles  # half the honest populations are the careful mix


def test_a_planted_information_cheat_is_flagged_and_honest_players_are_not(tmp_path) -> None:
    pop = information_grid(seed=5, hands=300, bots=1, replicates=1, honest=0)[0]
    out = run_information(pop, workdir=str(tmp_path))
    assert out.planted == 1 and out.flagged_planted == 1 and out.flagged_honest == 0 and out.honest == 7
    assert out.shared_planted > 200  # the bot's hands
    assert sorted(out.scores)[-1][1]  # the bot has the smallest p-value
    assert list(tmp_path.iterdir()) == []  # the work directory is removed


def test_eval_info_cheats_command(tmp_path) -> None:
    path = tmp_path / "e.json"
    args = ["eval-info-cheats", "--hands", "150", "--replicates", "1", "--honest", "1", "--workers", "1"]
    result = runner.invoke(app, [*args, "--out", str(path)])
    assert result.exit_code == 0, result.output
    assert "| bot × 150 | 300 | 1 |" in result.stdout and "honest × 150" in result.stdout
    data = json.loads(path.read_text())
    assert [c["name"] for c in data["cells"]] == ["bot × 150", "honest × 150"]
    assert data["cells"][0]["planted"] == 1 and len(data["populations"]) == 2


def test_a_team_of_three_plays_for_each_other(tmp_path) -> None:
    """team=3:I: three colluders who play for each other (the court case of seed 000: a group against one
    victim at an automatic table): they sit together, and win on each other's tiles far more often than on
    anyone else's."""
    spec = InjectSpec.parse("team=3:0.6", players=8)
    assert (spec.team, spec.team_intensity, spec.players_needed) == (3, 0.6, 3)
    assert InjectSpec.parse("collude=1:0.3,team=3", players=8).players_needed == 5
    with pytest.raises(SpecError, match="at least 2"):
        InjectSpec.parse("team=1:0.3")
    out = tmp_path / "team.jsonl"
    labels = write(SimConfig(hands=400, seed=3, players=8, inject=spec), out)
    (team,) = [set(c["players"]) for c in labels.colluders]
    assert len(team) == 3 and labels.colluders[0]["intensity"] == 0.6
    honest = tmp_path / "honest.jsonl"
    write(SimConfig(hands=400, seed=3, players=8), honest)
    # the same three players' wins on each other's tiles, with the team and in the same room without it
    assert _wins_among(out, team) > 2 * _wins_among(honest, team)


def _wins_among(path: Path, team: set[str]) -> int:
    wins = 0
    for line in path.read_text().splitlines():
        record = json.loads(line)
        players = record["players"]
        for e in record["events"]:
            if e["t"] == "hu" and e.get("from") is not None:
                wins += players[e["seat"]] in team and players[e["from"]] in team
    return wins


def test_flagged_pairs_join_into_teams() -> None:
    r = lambda a, b, f: PairResult((a, b), 100, 1.0, 0.0, 0.0, f, {}, {}, [])  # noqa: E731
    groups = flagged_groups([r("a", "b", True), r("c", "b", True), r("d", "c", True), r("e", "f", True)])
    assert groups == [Group(("a", "b", "c", "d"), 3)] and groups[0].pairs == 6
    assert flagged_groups([r("a", "b", True), r("b", "c", False)]) == []
    found = found_groups([("a", "b", "c"), ("e", "f")], [r("a", "b", True), r("c", "b", True), r("e", "f", False)])
    assert found == [("a", "b", "c")]


def test_a_cache_keeps_each_population_and_reads_it_again(tmp_path, monkeypatch) -> None:
    """--cache: a population simulated once is screened again from its folder, not simulated; another seed is
    another population."""
    pop = information_grid(seed=5, hands=150, bots=1, replicates=1, honest=0)[0]
    first = run_information(pop, cache=str(tmp_path))
    (folder,) = tmp_path.iterdir()
    assert (folder / "wh").is_dir() and (folder / "games.labels.json").is_file()

    def no_simulation(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated again")

    monkeypatch.setattr(evaluate, "write", no_simulation)
    assert run_information(pop, cache=str(tmp_path)) == first
    with pytest.raises(AssertionError, match="simulated again"):
        run_information(replace(pop, seed=6), cache=str(tmp_path))
    assert len(list(tmp_path.iterdir())) == 2 and not (tmp_path / "wh-partial").exists()


def test_a_cached_population_is_simulated_again_when_the_simulator_changed(tmp_path, monkeypatch) -> None:
    """The cache's folder names carry the simulator's version (its, the hand state's and the rules' sources): the
    figures of a changed simulator are never read from the games an older one played."""
    pop = information_grid(seed=5, hands=150, bots=1, replicates=1, honest=0)[0]
    assert evaluate.simulator_version() == evaluate.simulator_version() and len(evaluate.simulator_version()) == 16
    with evaluate._population_dir(pop, None, str(tmp_path)) as first:
        pass
    monkeypatch.setattr(evaluate, "simulator_version", lambda: "another version")
    with evaluate._population_dir(pop, None, str(tmp_path)) as second:
        pass
    assert first != second and first.name.startswith("seed5-") and second.name.startswith("seed5-")


def test_the_simulator_version_reads_the_sources_that_decide_the_games(tmp_path) -> None:
    """A package's digest changes with any of its sources or data files, and only with them."""
    package = tmp_path / "fakesim"
    (package / "profiles").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "bots.py").write_text("SKILL = 0.9\n")
    (package / "profiles" / "a.toml").write_text("cap = 3\n")
    (package / "notes.txt").write_text("not read")
    digest = evaluate.sources_digest.__wrapped__
    before = digest((package,))
    (package / "notes.txt").write_text("changed, not read")
    assert digest((package,)) == before
    for f, text in ((package / "bots.py", "SKILL = 0.95\n"), (package / "profiles" / "a.toml", "cap = 4\n")):
        old = f.read_text()
        f.write_text(text)
        assert digest((package,)) != before
        f.write_text(old)
        assert digest((package,)) == before
    # the followers' engine (pipeline/engines) decides the games of follow= rooms
    assert set(evaluate.SIMULATOR_PACKAGES) == {"simulate", "engines", "game", "rules"}
    assert all(
        (Path(evaluate.__file__).parent / name / "__init__.py").is_file() for name in evaluate.SIMULATOR_PACKAGES
    )
