"""The SQL models and their Polars twins on a simulated warehouse (play → xzlog → ingest), held to the same
answer column by column, and to the checks written beside the SQL."""

from __future__ import annotations

import json
from pathlib import Path

import oracle_frames as frames
import polars as pl
import pytest
from typer.testing import CliRunner

from cli import app
from pipeline.analytics import queries
from pipeline.analytics.groups import GROUPS
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

# Score errors and corruptions make some hands invalid and some replays stop, so the replayed filter matters;
# a small pool and long sessions give each player many hands.
CONFIG = SimConfig(
    hands=150, seed=7, players=8, session_hands=40, inject=InjectSpec.parse("score_errors=0.05,corrupt=0.08")
)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sim")
    games = root / "games.jsonl"
    write(CONFIG, games)
    ingest([str(games)], root / "wh", workers=1)
    return root / "wh"


@pytest.fixture(scope="module")
def con(warehouse: Path):
    return queries.connect(warehouse)


def one(con, sql: str) -> int:
    (row,) = con.execute(sql).fetchall()  # fetchall: this DuckDB wants every result finished
    return row[0]


def same_frames(sql: pl.DataFrame, polars: pl.DataFrame) -> None:
    assert sql.columns == polars.columns
    assert sql.height == polars.height
    for column in sql.columns:
        assert sql[column].to_list() == polars[column].to_list(), column


def test_the_simulation_has_what_the_metrics_need(con) -> None:
    """Guard against a quiet simulator: stopped hands, 黄庄, every win kind but 抢杠, kongs of each kind."""
    outcomes = dict(con.execute("SELECT outcome, count(*) FROM hands GROUP BY outcome").fetchall())
    assert outcomes.get("stopped", 0) + outcomes.get("incomplete", 0) > 0
    assert outcomes["wall_empty"] > 0 and outcomes["won_out"] > 0
    hows = {h for (h,) in con.execute("SELECT DISTINCT how FROM wins").fetchall()}
    assert {"discard", "self_draw"} <= hows
    (kongs,) = con.execute(
        "SELECT sum(kongs_direct), sum(kongs_added), sum(kongs_concealed), "
        "sum(hua_zhu::INT) FROM player_hands WHERE replayed"
    ).fetchall()
    assert all(k > 0 for k in kongs)


@pytest.mark.parametrize("by", GROUPS)
def test_engines_agree(con, warehouse: Path, by: str) -> None:
    same_frames(queries.player_base(con, by=by), frames.player_base(warehouse, by=by))


def test_engines_agree_for_one_player(con, warehouse: Path) -> None:
    player = queries.player_base(con)["player"][0]
    for by in ("all", "seat"):
        same_frames(queries.player_base(con, by=by, player=player), frames.player_base(warehouse, by=by, player=player))


def test_fan_distribution_agrees(con, warehouse: Path) -> None:
    sql = queries.run(con, "fan_distribution", player=None)
    polars = frames.fan_distribution(warehouse)
    assert sql["fan"].to_list() == polars["fan"].to_list()
    assert sql["wins"].to_list() == polars["wins"].to_list()


@pytest.mark.parametrize("by", GROUPS[1:])
def test_groups_sum_back_to_all(con, by: str) -> None:
    whole = queries.player_base(con).drop("grp")
    split = queries.player_base(con, by=by)
    columns = [c for c in whole.columns if c != "player"]
    summed = split.group_by("player").agg(pl.col(c).sum() for c in columns).sort("player")
    fractions = [c for c in columns if whole[c].dtype.is_float()]  # the luck-adjusted nets: sums of fractions
    assert fractions == ["luck_net_sum", "luck_net_sq"]
    assert summed.drop(fractions).to_dicts() == whole.drop(fractions).to_dicts()
    for c in fractions:  # each group's sum rounded to 1e-6, so the groups' sum within 1e-6 a group of the whole
        assert summed[c].to_list() == pytest.approx(whole[c].to_list(), abs=1e-5)


def test_checks_beside_the_sql(con) -> None:
    """The checks each .sql file states, on real (simulated) play."""
    base = queries.player_base(con)
    for r in base.iter_rows(named=True):
        assert r["hands"] >= r["wins"] >= r["self_draw_wins"], r["player"]
        assert r["hands"] >= r["deal_in_hands"] and r["deal_ins"] >= r["deal_in_hands"], r["player"]
        assert r["wins"] == r["first_wins"] + r["second_wins"] + r["third_wins"], r["player"]
        assert r["still_in_at_draw"] >= r["not_ready_at_draw"] >= r["hua_zhu"], r["player"]
        assert r["void_declared"] == r["void_m"] + r["void_p"] + r["void_s"], r["player"]
        assert r["compulsory_passes"] <= r["passed_wins"], r["player"]
        # the turns: every hand is simulated at level full, so every win has its turn and every hand its ready turn
        assert r["win_turn_n"] == r["wins"] and r["win_turn_sum"] >= r["wins"], r["player"]
        assert r["deal_in_hands"] <= r["deal_in_turn_n"] <= r["deal_ins"], r["player"]
        assert r["ready_judged"] == r["hands"] == r["deal_shanten_n"], r["player"]
        assert r["ready_judged"] >= r["ready_turn_n"] >= max(r["wins"], r["ready_by_turn_6"]), r["player"]
    outcomes = queries.run(con, "outcomes").row(0, named=True)
    replayed = one(con, "SELECT count(*) FROM hands WHERE replayed")
    assert outcomes["hands"] == replayed
    assert sum(outcomes[f"winners_{k}"] for k in range(4)) == replayed
    assert base["hands"].sum() == 4 * replayed  # a seat-row per replayed hand, stopped ones left out
    assert base["delta_sum"].sum() == 0  # money is conserved
    wins = one(con, "SELECT count(*) FROM wins JOIN hands USING (hand_id) WHERE replayed")
    assert base["wins"].sum() == wins
    assert queries.run(con, "fan_distribution", player=None)["wins"].sum() == wins
    patterns = dict(queries.run(con, "pattern_frequency", player=None).select("pattern", "wins").iter_rows())
    assert patterns["ping_hu"] <= wins
    discard_wins = one(
        con, "SELECT count(*) FROM wins JOIN hands USING (hand_id) WHERE replayed AND how IN ('discard', 'rob_kong')"
    )
    assert base["deal_ins"].sum() == discard_wins
    money = queries.run(con, "money_by_reason")
    computed = one(
        con, "SELECT sum(amount) FROM payments JOIN hands USING (hand_id) WHERE replayed AND side = 'computed'"
    )
    assert money["points"].sum() == computed and (money["points"] > 0).all()
    stored = one(con, "SELECT count(*) FROM hands")
    assert (queries.run(con, "issues_by_code")["hands"] <= stored).all()


def test_first_wins_match_the_hands_table(con) -> None:
    first = one(con, "SELECT sum(len(first_winners)) FROM hands WHERE replayed")
    assert queries.player_base(con)["first_wins"].sum() == first


def test_stats_answer_is_json(warehouse: Path) -> None:
    args = ["stats", "--warehouse", str(warehouse), "--format", "json", "--by", "dealer"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["hands"] == sum(answer["table"]["winners_per_hand"].values())
    assert {p["dealer"] for p in answer["players"]} == {"dealer", "not dealer"}
    wins = sum(answer["table"]["fan_distribution"].values())
    assert wins == sum(p["metrics"]["win_rate"]["num"] for p in answer["players"])
