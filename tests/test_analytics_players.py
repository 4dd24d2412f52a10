"""One player's view (issue 21 items 3 and 5): head to head against each opponent (``stats --player P --by
opponent``, :func:`dashboards.player.prep_head_to_head`), the player's own wins by fan and pattern
(``stats --player``), and the rolling win and deal-in rates over their hands (:func:`dashboards.player.
prep_rolling`).

Every number on the hand-written room (``room_fixture.py``) is worked out by hand below from its docstring's
payments; on a simulated room the head-to-head tables must mirror each other (what p paid q is what q received
from p) and add up to each player's own figures.
"""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import room_fixture

from dashboards.player import HEAD_TO_HEAD_CHART, ROLLING_CHART, ROLLING_WINDOW, prep_head_to_head, prep_rolling
from pipeline.analytics import queries, runs
from pipeline.analytics.render import HEAD_TO_HEAD_CSV
from pipeline.analytics.scales import scales as scales_of
from pipeline.analytics.scope import Scope
from pipeline.analytics.stats import Z95, wilson
from pipeline.ingest.run import ingest
from pipeline.report import charts
from pipeline.simulate.tables import SimConfig, write

CLI = [sys.executable, "-c", "from cli import app; app(prog_name='xuezhan')"]


def xuezhan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return room_fixture.build(tmp_path_factory.mktemp("room"))


def mean_ci(values: list[int]) -> tuple[float, float, float]:
    """The mean of ``values`` and its normal 95% interval, written out (sample variance, n - 1)."""
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = Z95 * math.sqrt(var / n)
    return mean, mean - half, mean + half


# p1 against each opponent, from the payments of room_fixture's docstring (h4: p1 did not sit):
#   p2  h1 h2 h3 h5  p1 paid p2 1 (h1) + 4 (h2); p2 paid p1 2 (h2, the kong); per hand -1 -2 0 0; p2 won on
#                    p1's discard in h1 and h2
#   p3  h1 h2 h3     p1 paid p3 1 (h1); p3 paid p1 2 (h3, 对对胡 on p3's discard); per hand -1 0 +2; p3 won on
#                    p1's discard in h1, p1 on p3's in h3
#   p4  h1 h2 h5     p1 paid p4 2 (h1, p4's self-draw: 1 + the base); per hand -2 0 0
#   p5  h3 h5        p1 paid p5 1 (h3, on p1's discard); per hand -1 0
P1 = {
    "p2": {"hands": 4, "won_from": 2, "lost_to": 5, "per_hand": [-1, -2, 0, 0], "deal_ins_to": 2, "wins_from": 0},
    "p3": {"hands": 3, "won_from": 2, "lost_to": 1, "per_hand": [-1, 0, 2], "deal_ins_to": 1, "wins_from": 1},
    "p4": {"hands": 3, "won_from": 0, "lost_to": 2, "per_hand": [-2, 0, 0], "deal_ins_to": 0, "wins_from": 0},
    "p5": {"hands": 2, "won_from": 0, "lost_to": 1, "per_hand": [-1, 0], "deal_ins_to": 1, "wins_from": 0},
}


def test_head_to_head_by_hand(room: Path) -> None:
    with queries.connect(room) as con:
        df = prep_head_to_head(con, "p1")
    assert df["opponent"].to_list() == ["p2", "p3", "p4", "p5"]  # most hands together first, then by id
    assert set(df["player"].to_list()) == {"p1"}
    for row in df.iter_rows(named=True):
        want = P1[row["opponent"]]
        hands = want["hands"]
        assert (row["hands"], row["won_from"], row["lost_to"]) == (hands, want["won_from"], want["lost_to"])
        assert row["net"] == want["won_from"] - want["lost_to"] == sum(want["per_hand"])
        mean, low, high = mean_ci(want["per_hand"])
        assert row["net_per_hand"] == pytest.approx(mean)
        assert (row["net_low"], row["net_high"]) == (pytest.approx(low), pytest.approx(high))
        assert row["deal_ins_to"] == row["deal_in_hands"] == want["deal_ins_to"]
        assert row["deal_in_rate"] == pytest.approx(want["deal_ins_to"] / hands)
        assert (row["deal_in_low"], row["deal_in_high"]) == wilson(want["deal_ins_to"], hands)
        assert row["wins_from"] == row["win_hands"] == want["wins_from"]
        assert (row["win_low"], row["win_high"]) == wilson(want["wins_from"], hands)
    p2 = df.row(0, named=True)  # mean -0.75, s² = (0.0625 + 1.5625 + 0.5625 + 0.5625) / 3 = 0.9167
    assert (round(p2["net_low"], 4), round(p2["net_high"], 4)) == (-1.6883, 0.1883)


def test_head_to_head_adds_up_to_the_players_own_figures(room: Path) -> None:
    with queries.connect(room) as con:
        df = prep_head_to_head(con, "p1")
        mine = queries.player_base(con, player="p1").row(0, named=True)
    # p1 dealt in 2 times in h1, once in h2 and in h3; net -4 - 2 + 1 + 0 (nothing went to a pot)
    assert int(df["deal_ins_to"].sum()) == mine["deal_ins"] == 4
    assert int(df["net"].sum()) == mine["delta_sum"] == -5
    assert int(df["wins_from"].sum()) == 1 and mine["wins"] == 1


def test_head_to_head_of_the_score_sheet_and_a_scope(room: Path) -> None:
    with queries.connect(room, scope=Scope(table="t1")) as con:  # h1 and h2 only (h4: p1 did not sit)
        df = prep_head_to_head(con, "p1")
    assert dict(zip(df["opponent"], df["net"], strict=True)) == {"p2": -3, "p3": -1, "p4": -2}
    with queries.connect(room) as con:
        assert prep_head_to_head(con, "nobody").height == 0


def test_the_head_to_head_command_in_three_formats(room: Path) -> None:
    done = xuezhan("stats", "--warehouse", str(room), "--player", "p1", "--by", "opponent", "--format", "json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["player"] == "p1" and answer["hands"] == 4
    assert answer["scope"]["player"] == "p1"
    p2 = answer["opponents"][0]
    assert p2["opponent"] == "p2" and (p2["won_from"], p2["lost_to"], p2["net"]) == (2, 5, -3)
    assert p2["net_per_hand"]["value"] == -0.75 and p2["net_per_hand"]["n"] == 4
    low, high = wilson(2, 4)
    assert p2["deal_in_rate"] == {"value": 0.5, "num": 2, "den": 4, "ci_low": low, "ci_high": high}
    assert p2["win_rate"]["num"] == 0 and p2["win_rate"]["ci_low"] == 0.0

    done = xuezhan("stats", "--warehouse", str(room), "--player", "p1", "--by", "opponent", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert tuple(rows[0]) == HEAD_TO_HEAD_CSV
    assert [(r["opponent"], r["hands"], r["net"], r["deal_ins_to"], r["wins_from"]) for r in rows] == [
        ("p2", "4", "-3", "2", "0"),
        ("p3", "3", "1", "1", "1"),
        ("p4", "3", "-2", "0", "0"),
        ("p5", "2", "-1", "1", "0"),
    ]

    text = xuezhan("stats", "--warehouse", str(room), "--player", "p1", "--by", "opponent").stdout.splitlines()
    assert text[0] == "p1 head to head: 4 hands played to the end, 4 opponents"
    assert text[1].startswith("scope: hands where p1 sat")
    assert text[2].split("\t")[:5] == ["opponent", "hands", "won from", "lost to", "net"]
    assert text[3].split("\t") == [
        "p2",
        "4",
        "2",
        "5",
        "-3",
        "-0.75 [-1.69,0.19]",
        "2",
        "0.500 [0.15,0.85]",
        "0",
        "0.000 [0.00,0.49]",
    ]


def test_by_opponent_needs_a_player(room: Path) -> None:
    done = xuezhan("stats", "--warehouse", str(room), "--by", "opponent")
    assert done.returncode == 2
    assert done.stderr.strip() == "xuezhan: --by opponent needs --player (whose opponents)"


# -------------------------------------------------------------------------------- own wins
def test_stats_of_a_player_show_their_own_wins(room: Path) -> None:
    done = xuezhan("stats", "--warehouse", str(room), "--player", "p2", "--format", "json")
    answer = json.loads(done.stdout)
    own = answer["table"]["player_wins"]
    # p2 won h1 (1 fan), h2 (清一色: 3 fan), h3 (1), h4 (self-draw, 1)
    assert own == {
        "player": "p2",
        "wins": 4,
        "fan_distribution": {"1": 3, "3": 1},
        "pattern_frequency": {"ping_hu": 4, "qing_yi_se": 1},
        "pattern_names": {"ping_hu": "平胡", "qing_yi_se": "清一色"},
    }
    # the rest of the table is every win of the hands p2 sat in: all five (1 1 1, 3, 1 1 2, 1, 1)
    assert answer["table"]["fan_distribution"] == {"1": 7, "2": 1, "3": 1}
    text = xuezhan("stats", "--warehouse", str(room), "--player", "p1").stdout.splitlines()
    assert "p1's wins by total fan (1 win): 2: 1" in text
    assert "p1's patterns: 对对胡 1, 平胡 1" in text  # most wins first, ties by pattern id
    # every win of p1's hands h1 h2 h3 h5: 1 1 1 | 3 | 1 1 2 | 1
    assert "every win at their tables, by fan: 1: 6, 2: 1, 3: 1" in text
    # without --player, the room's lines as before
    text = xuezhan("stats", "--warehouse", str(room)).stdout.splitlines()
    assert "fan distribution (wins by total fan): 1: 7, 2: 1, 3: 1" in text
    assert not any("'s wins by total fan" in line for line in text)


# -------------------------------------------------------------------------------- over time
def test_rolling_rates_by_hand(room: Path) -> None:
    with queries.connect(room) as con:
        df = prep_rolling(con, "p1", window=2)
    # p1's hands in time order: h1 (lost, dealt in), h2 (lost, dealt in), h3 (won, dealt in), h5 (neither)
    assert df["hand_id"].to_list() == ["h1", "h2", "h3", "h5"]
    assert df["n"].to_list() == [1, 2, 3, 4]
    assert df["window"].to_list() == [1, 2, 2, 2]
    assert df["wins"].to_list() == [0, 0, 1, 1]
    assert df["win_rate"].to_list() == [0.0, 0.0, 0.5, 0.5]
    assert df["deal_in_hands"].to_list() == [1, 2, 2, 1]
    assert df["deal_in_rate"].to_list() == [1.0, 1.0, 1.0, 0.5]
    for row in df.iter_rows(named=True):
        assert (row["win_low"], row["win_high"]) == wilson(row["wins"], row["window"])
        assert (row["deal_in_low"], row["deal_in_high"]) == wilson(row["deal_in_hands"], row["window"])
    assert round(df["win_high"][0], 4) == 0.7935  # Wilson 0 of 1
    assert df["played_local"][0].isoformat() == "2026-10-31T23:30:00"  # the record's own wall time
    assert set(df["player"].to_list()) == {"p1"}


def test_rolling_rates_order_and_edges(room: Path) -> None:
    with queries.connect(room) as con:
        # p5: h3 (won on p1's discard), h5, then h4, which has no time (last)
        df = prep_rolling(con, "p5")
        assert df["hand_id"].to_list() == ["h3", "h5", "h4"]
        assert df["window"].to_list() == [1, 2, 3]  # fewer hands than the window: the hands so far
        assert df["win_rate"].to_list() == pytest.approx([1.0, 0.5, 1 / 3])
        assert df["deal_in_rate"].to_list() == [0.0, 0.0, 0.0]
        assert prep_rolling(con, "nobody").height == 0
        with pytest.raises(ValueError, match="window must be at least 1"):
            prep_rolling(con, "p1", window=0)
    assert ROLLING_WINDOW == 50


def test_the_charts_draw(room: Path) -> None:
    with queries.connect(room) as con:
        frames = [
            (HEAD_TO_HEAD_CHART, prep_head_to_head(con, "p1")),
            (HEAD_TO_HEAD_CHART, prep_head_to_head(con, "nobody")),
            (ROLLING_CHART, prep_rolling(con, "p1", window=2)),
            (ROLLING_CHART, prep_rolling(con, "nobody")),
        ]
    for spec, frame in frames:
        png = charts.render(spec.plot, frame, size=spec.size(frame), choice=charts.fonts())
        assert png.startswith(b"\x89PNG")
    assert HEAD_TO_HEAD_CHART.prep is prep_head_to_head and ROLLING_CHART.prep is prep_rolling


# -------------------------------------------------------------------------------- a simulated room
@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sim")
    games = root / "games.jsonl"
    write(SimConfig(hands=120, seed=5, players=7, session_hands=12), games)
    ingest([str(games)], root / "wh", workers=1)
    return root / "wh"


def test_head_to_head_tables_mirror_each_other(simulated: Path) -> None:
    with queries.connect(simulated) as con:
        base = queries.player_base(con)
        tables: dict[str, dict[str, dict[str, Any]]] = {}
        for player in base["player"].to_list():
            tables[player] = {r["opponent"]: r for r in prep_head_to_head(con, player).iter_rows(named=True)}
        pot = dict(
            con.execute(
                "SELECT payer_player, sum(amount) FROM payments WHERE side = 'computed' AND payee IS NULL "
                "AND hand_id IN (SELECT hand_id FROM hands WHERE replayed) GROUP BY 1"
            ).fetchall()
        )
    for row in base.iter_rows(named=True):
        mine = tables[row["player"]]
        assert sum(o["hands"] for o in mine.values()) == 3 * row["hands"]  # three opponents a hand
        assert sum(o["deal_ins_to"] for o in mine.values()) == row["deal_ins"]
        assert sum(o["net"] for o in mine.values()) == row["delta_sum"] + pot.get(row["player"], 0)
        for opponent, o in mine.items():
            theirs = tables[opponent][row["player"]]
            assert (o["hands"], o["won_from"], o["lost_to"]) == (theirs["hands"], theirs["lost_to"], theirs["won_from"])
            assert (o["deal_ins_to"], o["wins_from"]) == (theirs["wins_from"], theirs["deal_ins_to"])
    assert any(o["deal_ins_to"] for mine in tables.values() for o in mine.values())


def test_head_to_head_summed_run_by_run_equals_one_query(simulated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The head-to-head figures are summed over runs of hands (pipeline/analytics/runs.py: the memory of one run),
    in file order or by ranges of ids: the same rows, in the same order, as the model over every hand at once,
    for every player and for one; an empty scope gives the model's empty frame."""
    from polars.testing import assert_frame_equal

    with queries.connect(simulated) as con:
        ((lo, hi),) = con.execute("SELECT min(hand_id), max(hand_id) FROM hands").fetchall()
        first = queries.player_base(con)["player"][0]
        whole = {p: queries.run(con, "head_to_head", player=p, lo=lo, hi=hi) for p in (None, first)}
        monkeypatch.setattr(queries, "RUN_HANDS", 7)
        assert con.execute("SELECT count(*) FROM hands").fetchall()[0][0] > 7 * 10  # many runs
        for p, frame in whole.items():
            assert frame.height > 5
            assert_frame_equal(queries._head_to_head_sums(con, p), frame)  # runs in file order
        with monkeypatch.context() as m:  # and by ranges of ids, where the tables are not in one order
            m.setattr(runs, "cursor_sees_all", lambda con: False)
            for p, frame in whole.items():
                assert_frame_equal(queries._head_to_head_sums(con, p), frame)
    with queries.connect(simulated, scope=Scope(player="nobody")) as con:
        empty = queries._head_to_head_sums(con, None)
    assert empty.height == 0 and empty.schema == whole[None].schema


def stats_models(con: Any, player: str) -> dict[str, pl.DataFrame]:
    """Every model ``stats`` adds up run by run (pipeline/analytics/runs.py add_up), by name."""
    out = {"luck_cells": queries.luck_cells(con)}
    for by in ("all", "seat", "month"):
        out[f"player_base by {by}"] = queries.player_base_levels(con, by=by)
    out["player_base of one"] = queries.player_base_levels(con, player=player)
    out.update(queries.table_sums(con))
    sc = scales_of(con)
    out["scale groups"], out["scale players"] = sc.groups, sc.players
    return out


def test_stats_models_added_up_run_by_run_equal_the_models_over_every_hand(
    simulated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The luck cells, the players' base counts (by every group, of one player), the table figures and the scale
    groups are added up over runs of hands in file order (the memory of one run): the same frames, rows in the
    same order, as each model over every hand at once (add_up's fallback, where the runs cannot be read in file
    order); the luck-adjusted sums, rounded to 1e-6, within a float's rounding."""
    from polars.testing import assert_frame_equal

    from pipeline.analytics import scales

    reads: list[int] = []
    read_runs = runs.read_runs

    def counted(*args: Any, **kwargs: Any) -> Any:
        for got in read_runs(*args, **kwargs):
            reads.append(1)
            yield got

    with queries.connect(simulated) as con:
        first = queries.player_base(con)["player"][0]
        with monkeypatch.context() as m:
            m.setattr(runs, "cursor_sees_all", lambda con: False)
            whole = stats_models(con, first)
        monkeypatch.setattr(queries, "RUN_HANDS", 7)
        monkeypatch.setattr(scales, "RUN_HANDS", 7)
        monkeypatch.setattr(runs, "read_runs", counted)
        assert con.execute("SELECT count(*) FROM hands").fetchall()[0][0] > 7 * 10  # many runs
        split = stats_models(con, first)
    assert len(reads) > 10 * len(whole)  # every model was read run by run
    assert whole["luck_cells"].height > 5 and whole["luck_cells"]["xx_win"].drop_nulls().len() > 0
    assert whole["player_base by month"]["grp"].n_unique() >= 1 and whole["pattern_frequency"].height > 3
    for name, frame in whole.items():
        assert frame.height > 0, name
        assert_frame_equal(split[name], frame, rel_tol=1e-9, abs_tol=1e-6), name


def test_rolling_rates_add_up_to_the_players_rates(simulated: Path) -> None:
    with queries.connect(simulated) as con:
        row = queries.player_base(con).row(0, named=True)
        df = prep_rolling(con, row["player"], window=10_000)  # one window: the whole record
    last = df.row(-1, named=True)
    assert (last["window"], last["wins"], last["deal_in_hands"]) == (row["hands"], row["wins"], row["deal_in_hands"])
    assert df.filter(pl.col("played_local").is_null()).height == 0
    assert df["played_local"].is_sorted()


def test_rolling_rates_in_batches_of_players_equal_all_at_once(
    simulated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report rolls several players' hands at a time (ROLLING_ROWS): the same frames, player by player, as
    every player rolled together and as one player at a time."""
    from polars.testing import assert_frame_equal

    from dashboards import player

    with queries.connect(simulated) as con:
        together = dict(player.iter_rolling(con, window=7))
        for rows in (1, 25):
            monkeypatch.setattr(player, "ROLLING_ROWS", rows)
            batched = list(player.iter_rolling(con, window=7))
            assert [p for p, _ in batched] == list(together)
            for p, frame in batched:
                assert_frame_equal(frame, together[p])
    assert len(together) == 7


def test_the_report_gets_the_rows_its_chart_draws_thinned_where_they_are_rolled(simulated: Path, room: Path) -> None:
    """iter_rolling rolls and thins in DuckDB (the report holds about 400 rows a player, not 800,000): the rows of
    prep_rolling's whole series that pipeline.report.svg.thinned picks, with the player's hands and time span."""
    from polars.testing import assert_frame_equal

    from dashboards import player
    from pipeline.report import svg

    for warehouse in (simulated, room):
        with queries.connect(warehouse) as con:
            for most in (3, 7, 400):
                for p, frame in player.iter_rolling(con, window=5, most=most):
                    whole = prep_rolling(con, p, window=5)
                    assert_frame_equal(frame, whole.select(pl.all().gather(svg.thinned(whole.height, 5, most))))
                    assert frame["hands"].to_list() == [whole.height] * frame.height
                    assert frame["played_from"][0] == whole["played_local"].min()
                    assert frame["played_to"][0] == whole["played_local"].max()
                    assert frame.height <= max(most + 2, whole.height if whole.height <= most else 0)


def test_the_series_sizes_are_the_rows_of_each_players_series(simulated: Path, room: Path) -> None:
    """player_series_sizes.sql (what the report cuts its batches of players by) counts the rows
    player_rolling.sql gives each player, in its order of players; a list of players reads theirs alone."""
    for warehouse in (simulated, room):
        with queries.connect(warehouse) as con:
            sizes = queries.run(con, "player_series_sizes")
            every = queries.run(con, "player_rolling", players=None, window=7, most=None)
            counted = every.group_by("player", maintain_order=True).len()
            assert sizes["player"].to_list() == counted["player"].to_list()
            assert sizes["hands"].to_list() == counted["len"].to_list()
            two = sizes["player"].to_list()[:2]
            some = queries.run(con, "player_rolling", players=two, window=7, most=None)
            assert some.equals(every.filter(pl.col("player").is_in(two)))


def test_every_players_tables_at_once_equal_each_players_alone(simulated: Path, room: Path) -> None:
    """The report's player pages take head to head and the rolling rates of every player together
    (prep_every_head_to_head, iter_rolling): the same frames as one player's, player by player."""
    from polars.testing import assert_frame_equal

    from dashboards.player import iter_rolling, prep_every_head_to_head

    for warehouse in (simulated, room):
        with queries.connect(warehouse) as con:
            players = queries.player_base(con)["player"].to_list()
            every_h2h, every_rolling = prep_every_head_to_head(con), dict(iter_rolling(con, window=7))
            assert sorted(every_h2h) == sorted(every_rolling) == sorted(players)
            for p in players:
                assert_frame_equal(every_h2h[p], prep_head_to_head(con, p).select(every_h2h[p].columns))
                assert_frame_equal(every_rolling[p], prep_rolling(con, p, window=7))
            with pytest.raises(ValueError, match="window must be at least 1"):
                dict(iter_rolling(con, window=0))
    assert every_rolling["p1"].schema == prep_rolling(queries.connect(room), "nobody").schema  # the empty one's
    assert every_rolling["p1"]["n"].to_list() == [1, 2, 3, 4]  # the room's p1: numbered from 1, player by player
