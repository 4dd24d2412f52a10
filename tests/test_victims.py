"""The victim view (issue 22 item 1, pipeline/audit/victims.py): who pays whom beyond what the opponent takes
from the others at the same tables, and what a player pays with a team at the table against without it."""

from __future__ import annotations

import ast
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from victims_oracle import oracle_victims_of

from pipeline.analytics.queries import connect
from pipeline.audit import victims
from pipeline.audit.victims import Victim, victim_view
from pipeline.ingest.run import ingest
from pipeline.simulate.tables import SimConfig, write


def _flows(rng: np.random.Generator, hands: int, extra: dict[tuple[str, str], float], players: int = 6) -> pl.DataFrame:
    """Four of ``players`` per hand; every ordered pair's net payment noise, antisymmetric, plus ``extra``
    points from a to x in each hand they share."""
    names = [f"p{i}" for i in range(players)]
    rows = []
    for h in range(hands):
        seated = sorted(rng.choice(names, size=4, replace=False).tolist())
        for i, a in enumerate(seated):
            for x in seated[i + 1 :]:
                net = float(rng.normal(0.0, 8.0)) + extra.get((a, x), 0.0) - extra.get((x, a), 0.0)
                rows += [(f"h{h:05d}", a, x, round(net)), (f"h{h:05d}", x, a, -round(net))]
    return pl.DataFrame(rows, schema=["hand_id", "payer", "payee", "net"], orient="row")


def test_a_player_who_pays_one_opponent_far_more_than_the_others_is_named_with_that_opponent() -> None:
    flows = _flows(np.random.default_rng(1), 1500, {("p0", "p5"): 4.0})
    victims = victim_view(flows, min_hands=200)
    flagged = [v for v in victims if v.flagged]
    assert [v.player for v in flagged] == ["p0"]
    (loss,) = [x for x in flagged[0].losses if x.flagged]
    assert loss.opponent == "p5" and loss.net > 0 and loss.z > 4 and loss.hands > 500
    # p5 takes from p0, not from everybody: its strength is not what p0 pays it
    assert all(not x.flagged for v in victims for x in v.losses if v.player != "p0")


def test_a_strong_opponent_who_takes_from_everybody_is_no_one_s_victimiser() -> None:
    extra = {(f"p{i}", "p5"): 4.0 for i in range(5)}
    victims = victim_view(_flows(np.random.default_rng(2), 1500, extra), min_hands=200)
    assert not any(v.flagged for v in victims)
    assert victims[0].player != "p5" and {v.player for v in victims if v.per_hand < 0} == {"p5"}


def test_an_honest_room_names_no_victim() -> None:
    assert not any(v.flagged for v in victim_view(_flows(np.random.default_rng(3), 1500, {}), min_hands=200))


def test_a_team_s_victim_pays_more_with_the_team_at_the_table_than_without() -> None:
    """8 players; p3 pays each of p0, p1, p2 (the team) 3 points a hand beyond the noise: with two of them at
    the table it pays 6 or 9 more a hand than at a table with none of them."""
    rng = np.random.default_rng(4)
    extra = {("p3", t): 3.0 for t in ("p0", "p1", "p2")}
    victims = victim_view(_flows(rng, 3000, extra, players=8), teams=[("p0", "p1", "p2")], min_hands=200)
    by_player = {v.player: v for v in victims}
    (line,) = by_player["p3"].teams
    assert line.flagged and line.with_per_hand > line.without_per_hand + 3 and line.with_hands > 200
    assert line.without_hands > 50
    assert not any(by_player[p].teams[0].flagged for p in ("p4", "p5", "p6", "p7"))
    assert all(not by_player[t].teams for t in ("p0", "p1", "p2"))  # a team is not its own victim
    assert victims[0].player == "p3"


def test_no_flows_no_victims() -> None:
    empty = pl.DataFrame(schema={"hand_id": pl.String, "payer": pl.String, "payee": pl.String, "net": pl.Int64})
    assert victim_view(empty) == []


def _same_victims(got: list[Victim], want: list[Victim]) -> None:
    """The same players in the same order with the same lines: counts, nets and flags exactly, the sums of
    floats (excess, z, p, q, per-hand means) to rounding (the streamed view adds them in another order)."""
    assert [v.player for v in got] == [v.player for v in want]
    for g, w in zip(got, want, strict=True):
        assert (g.hands, g.flagged) == (w.hands, w.flagged) and g.per_hand == pytest.approx(w.per_hand, rel=1e-12)
        assert [(x.opponent, x.hands, x.net, x.flagged) for x in g.losses] == [
            (x.opponent, x.hands, x.net, x.flagged) for x in w.losses
        ]
        for gx, wx in zip(g.losses, w.losses, strict=True):
            assert (gx.excess, gx.z, gx.p, gx.q) == pytest.approx((wx.excess, wx.z, wx.p, wx.q), rel=1e-9, abs=1e-12)
        assert [(t.team, t.with_hands, t.without_hands, t.flagged) for t in g.teams] == [
            (t.team, t.with_hands, t.without_hands, t.flagged) for t in w.teams
        ]
        for gt, wt in zip(g.teams, w.teams, strict=True):
            assert (gt.with_per_hand, gt.without_per_hand, gt.z, gt.p, gt.q) == pytest.approx(
                (wt.with_per_hand, wt.without_per_hand, wt.z, wt.p, wt.q), rel=1e-9, abs=1e-12
            )


def test_the_oracle_shares_no_judging_code_with_the_view() -> None:
    """tests/victims_oracle.py takes nothing of the product but the result types: a judging helper shared
    between the two (the statistics, the pair bookkeeping) would hide the bug it carries from the comparison."""
    tree = ast.parse((Path(__file__).parent / "victims_oracle.py").read_text(encoding="utf-8"))
    taken = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pipeline")
        for alias in node.names
    }
    plain = [node for node in ast.walk(tree) if isinstance(node, ast.Import) and node.names[0].name == "pipeline"]
    assert taken == {("pipeline.audit.victims", name) for name in ("Loss", "TeamLoss", "Victim")} and not plain


@pytest.mark.parametrize("chunk_hands", [1, 37, 10**6])
def test_the_view_read_a_run_at_a_time_is_the_one_shot_view(chunk_hands: int) -> None:
    """Issue 23 item 3: the view judged a run of hands at a time gives what the view computed a plain way gives
    (tests/victims_oracle.py: a hand at a time, in Python), on 10 players with a victim of one opponent (flagged:
    the second pass and the re-judgements run), a strong player, and a team with its victim."""
    rng = np.random.default_rng(23)
    extra = {("p0", "p5"): 4.0, ("p7", "p1"): 8.0, ("p7", "p2"): 8.0} | {(f"p{i}", "p9"): 2.0 for i in range(9)}
    flows = _flows(rng, 2000, extra, players=10).sample(fraction=1.0, shuffle=True, seed=5)
    teams = [("p1", "p2"), ("p3", "p4", "p6")]
    want = oracle_victims_of(flows, teams=teams, min_hands=100)
    assert sum(x.flagged for v in want for x in v.losses) >= 2 and any(t.flagged for v in want for t in v.teams)
    _same_victims(victim_view(flows, teams=teams, min_hands=100, chunk_hands=chunk_hands), want)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("victims")
    records = tmp / "room.jsonl.gz"
    write(SimConfig(hands=240, seed=23, players=6), records)
    ingest([str(records)], tmp / "wh", workers=1)
    return tmp / "wh"


def test_the_warehouse_is_read_a_run_of_hands_at_a_time(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The view never holds every ordered pair at every table (12 rows a hand: 2.4 million at 200k hands): it
    asks DuckDB for one run of ``chunk_hands`` hands at a time, and its view is the one-shot view's."""
    heights: list[int] = []
    run_sql = victims.sql.run_sql

    def counted(con: duckdb.DuckDBPyConnection, package: str, name: str, **params: object) -> pl.DataFrame:
        frame = run_sql(con, package, name, **params)
        if name == "net_flows":
            heights.append(frame.height)
        return frame

    monkeypatch.setattr(victims.sql, "run_sql", counted)
    with connect(warehouse) as con:
        got = victims.victim_view(con, teams=[("p0", "p1")], min_hands=20, chunk_hands=50)
        assert len(heights) == 5 and max(heights) <= 50 * 12 and sum(heights) == 240 * 12
        whole = pl.concat(list(victims._flow_runs(con, 10**6)))
    assert whole.height == 240 * 12
    _same_victims(got, oracle_victims_of(whole, teams=[("p0", "p1")], min_hands=20))
