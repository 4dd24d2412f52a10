"""The information-cheat screen (issue 22 item 3): its statistics checked against exact sums, and the screen on a
simulated room with a planted player who sees every hand (``simulate --inject bot=1``)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from anticipation_oracle import oracle_tally, stored_records
from run_orders import out_of_order, shuffled_warehouse

from dashboards import information as info_dash
from pipeline.analytics.queries import connect
from pipeline.audit.anticipation import WaitsNotJudged, combine, decisions, screen_anticipation, screen_tally, tally
from pipeline.audit.information import (
    Grid,
    beta_binomial_cdf,
    discard_counts,
    lgamma,
    log_beta_binomial,
    predictive_cdf,
    predictive_pvalues,
    screen_counts,
    screen_information,
)
from pipeline.audit.replay import stored_record
from pipeline.game.record import parse_record
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write
from pipeline.sql import DuckDBModels, load_sql

XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample.jsonl.gz"


def _exact_beta_binomial_cdf(k: int, n: int, a: int, b: int) -> Fraction:
    def beta(x: int, y: int) -> Fraction:  # B(x, y) for positive integers: (x-1)!(y-1)!/(x+y-1)!
        return Fraction(_fact(x - 1) * _fact(y - 1), _fact(x + y - 1))

    return sum((comb(n, j) * beta(j + a, n - j + b) / beta(a, b) for j in range(k + 1)), Fraction(0))


def _fact(n: int) -> int:
    out = 1
    for i in range(2, n + 1):
        out *= i
    return out


@pytest.mark.parametrize(
    ("k", "n", "a", "b"), [(0, 1, 1, 1), (0, 30, 2, 50), (3, 30, 2, 50), (7, 40, 3, 4), (39, 40, 3, 4)]
)
def test_the_beta_binomial_tail_is_the_exact_sum(k: int, n: int, a: int, b: int) -> None:
    assert beta_binomial_cdf(k, n, a, b) == pytest.approx(float(_exact_beta_binomial_cdf(k, n, a, b)), rel=1e-9)


def test_the_edges_of_the_tail() -> None:
    assert beta_binomial_cdf(-1, 5, 1.0, 1.0) == 0.0 and beta_binomial_cdf(5, 5, 1.0, 1.0) == 1.0
    g = Grid(np.array([2.0]), np.array([50.0]), np.zeros(1))
    assert predictive_cdf(-1, 30, g, np.zeros(1)) == 0.0 and predictive_cdf(30, 30, g, np.zeros(1)) == 1.0


def test_the_vectorised_log_gamma_is_the_library_s() -> None:
    x = np.concatenate([np.geomspace(1e-4, 1e7, 200), np.arange(1, 40) + 0.5])
    assert np.allclose(lgamma(x), [math.lgamma(v) for v in x], rtol=1e-14, atol=1e-11)


@pytest.mark.parametrize(("k", "n", "a", "b"), [(0, 30, 2, 50), (3, 30, 2, 50), (7, 40, 3, 4), (39, 40, 3, 4)])
def test_the_predictive_tail_on_one_point_is_the_beta_binomial_s(k: int, n: int, a: int, b: int) -> None:
    """The running sums of logs give the exact tail; a grid of one point is that beta-binomial, and the pmf
    is its exact term."""
    g = Grid(np.array([float(a)]), np.array([float(b)]), np.zeros(1))
    exact = float(_exact_beta_binomial_cdf(k, n, a, b))
    assert predictive_cdf(k, n, g, np.zeros(1)) == pytest.approx(exact, rel=1e-9)
    term = exact - float(_exact_beta_binomial_cdf(k - 1, n, a, b)) if k else exact
    assert math.exp(log_beta_binomial(k, n, np.array([float(a)]), np.array([float(b)]))[0]) == pytest.approx(term)


def test_the_predictive_tail_averages_over_the_posterior() -> None:
    g = Grid(np.array([1.0, 2.0]), np.array([1.0, 8.0]), np.zeros(2))
    both = predictive_cdf(2, 10, g, np.log(np.array([1.0, 3.0])))  # weights 1/4 and 3/4
    assert both == pytest.approx(0.25 * beta_binomial_cdf(2, 10, 1, 1) + 0.75 * beta_binomial_cdf(2, 10, 2, 8))


def _rooms(
    rng: np.random.Generator, rooms: int, size: float, discards: tuple[int, int] = (1_500, 2_500)
) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for _ in range(rooms):
        n = rng.integers(*discards, size=8)
        out.append((n, rng.binomial(n, rng.beta(0.017 * size, 0.983 * size, size=8))))
    return out


def test_honest_rooms_of_eight_are_not_flagged_more_often_than_the_level_says() -> None:
    """Rooms of 8 whose rates vary as a beta (from wide, a + b = 60, to almost none): the leave-one-out
    posterior predictive p-values are no smaller than uniform ones (the moment fit they replace, given 7
    counts, gave too many small p-values: 6 of 80 simulated honest rooms flagged a player at FDR 0.05)."""
    rng = np.random.default_rng(22)
    p = np.array(
        [pv for size in (60.0, 300.0, 3_000.0) for n, k in _rooms(rng, 12, size) for _, pv in predictive_pvalues(n, k)]
    )
    assert len(p) == 288
    assert (p < 0.01).mean() <= 0.02 and (p < 0.05).mean() <= 0.06 and (p < 0.2).mean() <= 0.22


def test_a_player_who_never_throws_a_dangerous_tile_stands_out_of_a_room_of_different_players() -> None:
    """Rates spread with a coefficient of variation of about 0.45 (a + b = 300: three times the spread of the
    simulated rooms' styles), about 1,000 hands each (14,000 judged discards): one who never throws a
    dangerous tile by choice is flagged, and nobody else."""
    rng = np.random.default_rng(23)
    for n, k in _rooms(rng, 3, 300.0, (12_000, 16_000)):
        k[0] = 0
        results = screen_counts([f"p{i}" for i in range(8)], n // 14, n, k)
        assert [r.player for r in results if r.flagged] == ["p0"]
        assert results[0].p is not None and results[0].p < 1e-3
        assert results[0].expected is not None and results[0].expected > 150


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """900 simulated hands, 8 players, one of whom sees every hand; ingested."""
    folder = tmp_path_factory.mktemp("room")
    out = folder / "sim.jsonl"
    write(SimConfig(hands=900, seed=11, players=8, inject=InjectSpec.parse("bot=1")), out)
    ingest([str(out)], folder / "wh", workers=1)
    return folder / "wh", json.loads((folder / "sim.labels.json").read_text())


def test_the_player_who_sees_every_hand_is_flagged_and_nobody_else(room: tuple[Path, dict[str, object]]) -> None:
    warehouse, labels = room
    with connect(warehouse) as con:
        results = screen_information(con)
    flagged = [r.player for r in results if r.flagged]
    assert flagged == labels["bots"]
    bot = results[0]
    assert bot.dangerous_by_choice == 0 and bot.expected is not None and bot.expected > 50  # the simulator's promise
    honest = [r for r in results if not r.flagged]
    assert all(r.dangerous_by_choice > 0 and r.q is not None and r.q > 0.05 for r in honest)
    assert all(r.p is not None and r.p > 0.001 for r in honest)


def test_few_discards_are_listed_not_tested(room: tuple[Path, dict[str, object]]) -> None:
    warehouse, _ = room
    with connect(warehouse) as con:
        results = screen_information(con, min_discards=10**9)
    assert all(r.p is None and r.q is None and not r.flagged for r in results) and len(results) == 8


def test_the_anticipation_screen_on_the_room(room: tuple[Path, dict[str, object]]) -> None:
    """The planted player waits on the tiles the wall holds: it hits in nearly every judged wait, more than any
    honest player, whose rates sit near the room's; its best waits are hits, widest margin first, and replay to
    the same decisions."""
    warehouse, labels = room
    (bot,) = labels["bots"]  # type: ignore[misc]
    with connect(warehouse) as con:
        results = screen_anticipation(con)
        mine = next(r for r in results if r.player == bot)
        assert mine.decisions >= 30 and mine.hits >= 0.85 * mine.decisions  # a miss: every other wait was dangerous
        assert mine.p is not None and mine.p == min(r.p for r in results if r.p is not None)
        honest = [r for r in results if r.player != bot and r.p is not None]
        assert all(r.rate is not None and 0.3 < r.rate < 0.8 and not r.flagged for r in honest)
        margins = [d.margin for _, d in mine.best]
        assert len(mine.best) == 5 and margins == sorted(margins, reverse=True) and margins[-1] > 0
        for hand_id, d in mine.best:
            record = parse_record(stored_record(con, hand_id).record)
            assert d in decisions(record, record.players.index(bot))
        seers = combine(screen_information(con), results)
    assert [s.player for s in seers if s.flagged] == [bot] and seers[0].signals[0] == "dodges"


def test_the_command(room: tuple[Path, dict[str, object]]) -> None:
    warehouse, labels = room
    (bot,) = labels["bots"]  # type: ignore[misc]
    done = subprocess.run([XUEZHAN, "info-cheats", "--warehouse", str(warehouse)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("8 players with at least 300 judged discards screened") and "1 flagged" in lines[0]
    assert re.fullmatch(r"anticipation: \d players with at least 30 judged waits screened .*, BY over both", lines[1])
    assert lines[2].split() == [
        *("player", "hands", "discards", "by", "choice", "expected", "p", "q"),
        *("waits", "hits", "expected", "p", "q", "flag"),
    ]
    assert lines[3].startswith(f"{bot:<16}") and lines[3].endswith("YES (dodges)")
    done = subprocess.run(
        [XUEZHAN, "info-cheats", "--warehouse", str(warehouse), "--format", "json"], capture_output=True, text=True
    )
    rows = json.loads(done.stdout)
    assert [r["player"] for r in rows if r["flagged"]] == labels["bots"] and set(rows[0]) >= {"p", "q", "expected"}
    assert rows[0]["signals"] == ["dodges"] and rows[0]["anticipation"]["hits"] > 30
    done = subprocess.run(
        [XUEZHAN, "info-cheats", "--warehouse", str(warehouse), "--min-waits", "100000"], capture_output=True, text=True
    )
    lines = done.stdout.splitlines()
    assert lines[1].startswith("anticipation: 0 players with at least 100000 judged waits screened (8 with fewer")
    assert lines[3].endswith("YES (dodges)") and "–" in lines[3]


# ---------------------------------------------------------------------------------------------- decided at ingest
def _same_as_the_replay(warehouse: Path) -> None:
    """The anticipation screen counted from the warehouse (wait_choices) against the replay of every stored hand
    (tests/anticipation_oracle.py): per player the same hands, decisions, hits and evidence, and ``info-cheats
    --format json`` the same as the replay's screen combined with the dodges."""
    with connect(warehouse) as con:
        mine, theirs = tally(con), oracle_tally(stored_records(con))
        assert sorted(mine) == sorted(theirs) and mine
        for player, t in theirs.items():
            m = mine[player]
            assert (m.hands, m.decisions, m.hits, m.best) == (t.hands, t.decisions, t.hits, t.best), player
        dodges = screen_information(con)
        expected = [s.as_dict() for s in combine(dodges, screen_tally(theirs))]
    done = subprocess.run(
        [XUEZHAN, "info-cheats", "--warehouse", str(warehouse), "--format", "json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(expected))


def test_the_room_s_waits_decided_at_ingest_are_the_replay_s(room: tuple[Path, dict[str, object]]) -> None:
    _same_as_the_replay(room[0])


def test_the_sample_s_waits_decided_at_ingest_are_the_replay_s(tmp_path: Path) -> None:
    ingest([str(SAMPLE)], tmp_path / "wh", workers=1)
    _same_as_the_replay(tmp_path / "wh")


def test_a_warehouse_ingested_before_the_waits_were_judged(
    room: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    """A warehouse made before wait_choices and hands.waits_judged: it still opens, the dodges still run, and the
    anticipation screen says to ingest again instead of counting nothing (info-cheats exits 2 saying so; the
    report's page says so and shows the dodges)."""
    old = tmp_path / "old"
    shutil.copytree(room[0], old)
    shutil.rmtree(old / "wait_choices")
    for part in (old / "hands").glob("*.parquet"):
        table = pq.read_table(part)
        pq.write_table(table.drop_columns(["waits_judged"]), part)
    with connect(old) as con:
        assert con.execute("SELECT count(*) FROM wait_choices").fetchall() == [(0,)]
        with pytest.raises(WaitsNotJudged, match="ingest the records again"):
            screen_anticipation(con)
        seers, note = info_dash.screen_noted(con)
    assert note is not None and "xuezhan ingest" in note
    assert [s.player for s in seers if s.flagged] == room[1]["bots"] and all(s.anticipation is None for s in seers)
    done = subprocess.run([XUEZHAN, "info-cheats", "--warehouse", str(old)], capture_output=True, text=True)
    assert done.returncode == 2 and "ingest the records again" in done.stderr and done.stdout == ""


# ---------------------------------------------------------------------------------------------- a run at a time
@pytest.fixture(scope="module")
def shuffled_room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 simulated hands, 6 players, one who sees every hand, ingested in a shuffled order (ids interleaved)."""
    config = SimConfig(hands=300, seed=13, players=6, inject=InjectSpec.parse("bot=1"))
    return shuffled_warehouse(tmp_path_factory.mktemp("shuffled"), config)


def _judged_model(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """sql/discard_choices.sql over every hand at once (what --engine spark runs)."""
    return DuckDBModels(con).run("pipeline.audit", "discard_choices", lo=None, hi=None)


def test_the_judged_discards_summed_a_run_at_a_time_are_the_model_over_every_hand(shuffled_room: Path) -> None:
    """Issue 45: the dodges' counts are summed over runs of hands in file order (37 hands: 9 runs; one run), never
    by ranges when the tables are in one order, and are the model's over every hand, types included: a hand's
    discards in one run only, so its players' distinct hands add up."""
    from pipeline.analytics import runs

    def no_ranges(*args: object, **kwargs: object) -> None:
        raise AssertionError("read by ranges")

    with connect(shuffled_room) as con:
        ids = [h for (h,) in con.execute("SELECT hand_id FROM hands").fetchall()]
        assert ids != sorted(ids)
        want = _judged_model(con)
        assert want.height == 6 and want["hands"].max() > 37 and want["dangerous_by_choice"].sum() > 0
        with pytest.MonkeyPatch.context() as m:
            m.setattr(runs, "range_runs", no_ranges)
            for size in (37, 10**6):
                got = discard_counts(con, chunk_hands=size)
                assert got.schema == want.schema and got.equals(want), size
        with pytest.MonkeyPatch.context() as m:
            m.setattr(runs, "cursor_sees_all", lambda con: False)
            assert discard_counts(con, chunk_hands=37).equals(want)


def test_events_in_another_order_than_the_hands_are_counted_again_by_ranges(shuffled_room: Path) -> None:
    """A table whose rows are not in the order of ``hands`` (here the events, sorted at random) leaves the runs in
    file order incomplete: they are read again by ranges of ids, and the counts are still the model's."""
    from pipeline.analytics import runs

    ranges = []
    real = runs.range_runs

    def counted(*args: Any, **kwargs: Any) -> Any:
        ranges.append(1)
        return real(*args, **kwargs)

    con = out_of_order(shuffled_room, ("hands", "events"), "events")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(runs, "range_runs", counted)
        got = discard_counts(con, chunk_hands=37)
    assert ranges == [1] and got.equals(_judged_model(con)) and got.height == 6


def test_a_player_s_best_waits_are_the_window_s(room: tuple[Path, dict[str, object]]) -> None:
    """anticipation_best.sql keeps each player's widest hits as the rows stream by (arg_min's n smallest keys):
    the same rows in the same order as ranking every hit by margin, hand and event."""
    ranked = """
        SELECT player, hand_id, idx, seat, chosen, options FROM (
            SELECT *, row_number() OVER (PARTITION BY player ORDER BY margin DESC, hand_id, idx) AS rank
            FROM wait_choices WHERE hit
        ) WHERE rank <= $keep ORDER BY player, rank
    """
    with connect(room[0]) as con:
        for keep in (1, 5, 10**4):
            want = con.execute(ranked, {"keep": keep}).fetchall()
            got = [
                (player, b["hand_id"], b["idx"], b["seat"], b["chosen"], b["options"])
                for player, best in con.execute(
                    load_sql("pipeline.audit", "anticipation_best"), {"keep": keep}
                ).fetchall()
                for b in best
            ]
            assert got == want and len(want) >= min(keep, 3) * 8, keep
        assert all(not t.best for t in tally(con, keep=0).values())


@pytest.mark.parametrize("block", [1, 2, 7, 64, 1 << 15])
def test_the_predictive_tail_a_block_of_terms_at_a_time_is_the_tail_of_every_term(block, monkeypatch) -> None:
    """predictive_cdf adds the tail's terms a block at a time (its memory a block's, whatever the count: on 5M
    hands a player's count made the screen's peak grow): the same tail as every term at once, to a float's
    rounding over a thousand blocks, and the very same where one block holds them all."""
    from pipeline.audit import information

    grid = information.Grid(np.array([1.0, 2.0, 5.0, 40.0]), np.array([1.0, 8.0, 3.0, 400.0]), np.zeros(4))
    posterior = np.array([0.0, -1.0, -0.5, -2.0])
    cases = [(0, 1), (2, 10), (50, 200), (300, 1000), (999, 5000), (120, 100_000)]
    whole = {case: information.predictive_cdf(*case, grid, posterior) for case in cases}
    monkeypatch.setattr(information, "TAIL_BLOCK", block)
    for (k, n), p in whole.items():
        got = information.predictive_cdf(k, n, grid, posterior)
        assert got == pytest.approx(p, rel=1e-10, abs=1e-300)
        if k + 1 <= block:
            assert got == p
    assert 0 < whole[(999, 5000)] < 1 and whole[(0, 1)] > 0
