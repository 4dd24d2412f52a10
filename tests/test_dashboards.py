"""The dashboards' data steps on a warehouse small enough to count by hand, and their plot steps.

The warehouse (written row by row with ``Warehouse.write_batch``) holds four hands:

    H1  pA pB pC pD  replayed, three_winners: pA self-draws (1 fan, 1 pt, first); then pC's discard pays two
                     winners at once (一炮多响, both second): pB (2 fan, 2 pts), pD (3 fan, 4 pts).
                     deltas +3 +1 -7 +3. Two SETTLE_AMOUNT errors (so not valid).
    H2  pA pB pC pD  replayed, wall_empty (黄庄), one winner: pB on pA's discard (1 fan, 1 pt, first).
                     pD is a flower pig; pA ready, pC and pD not. deltas -1 +3 0 -2.
                     A SESSION_HAND_GAP warning.
    H3  pA pB pC pE  replayed, wall_empty (黄庄), no winner: pC and pE flower pigs; pA and pB ready.
                     deltas +2 +2 -2 -2.
    H4  pA pB pC pD  stopped (not replayed, invalid: TURN_ORDER): a 5-fan win by pA and deltas +10 0 0 -10
                     that no statistic may count.

Pongs: pA one in H1 and one in H3, pB two in H2. Rejects: two SCHEMA_JSON lines (10 and 20 bytes) and one
INGEST_CONFLICT (100 bytes). One ingest run: 8 lines read = 4 stored + 3 rejects + 1 duplicate.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import matplotlib
import polars as pl
import pyarrow as pa
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from dashboards import overview, player, quality, run_sql, sql
from pipeline.analytics import queries
from pipeline.analytics.stats import mean_interval, wilson
from pipeline.ingest.warehouse import Warehouse
from pipeline.report import charts
from schemas.tables import TABLES

PLAYED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


# ---------------------------------------------------------------------------------------------- the warehouse
def _hand(
    hand_id: str,
    players: list[str],
    *,
    winners: int,
    outcome: str,
    replayed: bool = True,
    valid: bool = True,
    issues: int = 0,
) -> dict:
    return {
        "hand_id": hand_id,
        "record_sha256": f"sha-{hand_id}",
        "source_file": "tiny.jsonl",
        "source_line": 1,
        "session_id": "s1",
        "hand_no": int(hand_id[1:]),
        "table_id": "t1",
        "played_at": PLAYED,
        "profile": "chengdu",
        "players": players,
        "dealer": 0,
        "events": 60,
        "winners": winners,
        "outcome": outcome,
        "replayed": replayed,
        "valid": valid,
        "issue_count": issues,
        "has_result": True,
    }


def _seat(
    hand_id: str,
    seat: int,
    who: str,
    *,
    replayed: bool = True,
    delta: int = 0,
    won: bool = False,
    order: int | None = None,
    how: str | None = None,
    fan: int | None = None,
    points: int | None = None,
    deal_ins: int = 0,
    ready: bool | None = None,
    pig: bool = False,
    pongs: int = 0,
) -> dict:
    return {
        "hand_id": hand_id,
        "seat": seat,
        "player": who,
        "profile": "chengdu",
        "played_at": PLAYED,
        "valid": True,
        "replayed": replayed,
        "dealer": seat == 0,
        "void": "mps"[seat % 3],
        "won": won,
        "win_order": order,
        "how": how,
        "fan": fan,
        "points": points,
        "deal_ins": deal_ins,
        "ready_at_end": ready,
        "hua_zhu": pig,
        "pongs": pongs,
        "kongs_direct": 0,
        "kongs_added": 0,
        "kongs_concealed": 0,
        "passed_wins": 0,
        "compulsory_passes": 0,
        "delta": delta,
        "claimed_delta": delta,
    }


def _pattern(pid: str, name: str, fan: int) -> dict:
    return {"id": pid, "name_zh": name, "fan": fan}


PING_HU = _pattern("ping_hu", "平胡", 1)


def _win(
    hand_id: str,
    event: int,
    seat: int,
    who: str,
    how: str,
    source: int | None,
    order: int,
    fan: int,
    points: int,
    patterns: list[dict],
) -> dict:
    return {
        "hand_id": hand_id,
        "event": event,
        "seat": seat,
        "player": who,
        "tile": "5m",
        "how": how,
        "source": source,
        "win_order": order,
        "fan": fan,
        "points": points,
        "per_payer": points,
        "title": patterns[-1]["name_zh"],
        "patterns": patterns,
        "claimed_fan": fan,
        "claimed_points": points,
    }


def _issue(hand_id: str, code: str, severity: str = "error") -> dict:
    return {
        "hand_id": hand_id,
        "code": code,
        "severity": severity,
        "event": 3,
        "seat": 1,
        "expected": "x",
        "actual": "y",
        "message": f"{code} in {hand_id}",
        "source_file": "tiny.jsonl",
        "source_line": 1,
    }


def _reject(line: int, code: str, size: int) -> dict:
    return {
        "source_file": "tiny.jsonl",
        "source_line": line,
        "raw": b"x" * size,
        "size": size,
        "sha256": f"sha-reject-{line}",
        "code": code,
        "message": code,
    }


def tiny_warehouse(root: Path) -> Path:
    """Write the four hands of the module docstring into a warehouse at ``root``."""
    four = ["pA", "pB", "pC", "pD"]
    hands = [
        _hand("H1", four, winners=3, outcome="three_winners", valid=False, issues=2),
        _hand("H2", four, winners=1, outcome="wall_empty", issues=1),
        _hand("H3", ["pA", "pB", "pC", "pE"], winners=0, outcome="wall_empty"),
        _hand("H4", four, winners=1, outcome="stopped", replayed=False, valid=False, issues=1),
    ]
    seats = [
        _seat("H1", 0, "pA", delta=3, won=True, order=1, how="self_draw", fan=1, points=1, pongs=1),
        _seat("H1", 1, "pB", delta=1, won=True, order=2, how="discard", fan=2, points=2),
        _seat("H1", 2, "pC", delta=-7, deal_ins=2),
        _seat("H1", 3, "pD", delta=3, won=True, order=2, how="discard", fan=3, points=4),
        _seat("H2", 0, "pA", delta=-1, deal_ins=1, ready=True),
        _seat("H2", 1, "pB", delta=3, won=True, order=1, how="discard", fan=1, points=1, pongs=2),
        _seat("H2", 2, "pC", delta=0, ready=False),
        _seat("H2", 3, "pD", delta=-2, ready=False, pig=True),
        _seat("H3", 0, "pA", delta=2, ready=True, pongs=1),
        _seat("H3", 1, "pB", delta=2, ready=True),
        _seat("H3", 2, "pC", delta=-2, ready=False, pig=True),
        _seat("H3", 3, "pE", delta=-2, ready=False, pig=True),
        _seat("H4", 0, "pA", replayed=False, delta=10, won=True, order=1, how="self_draw", fan=5, points=16),
        _seat("H4", 1, "pB", replayed=False),
        _seat("H4", 2, "pC", replayed=False),
        _seat("H4", 3, "pD", replayed=False, delta=-10),
    ]
    wins = [
        _win("H1", 20, 0, "pA", "self_draw", None, 1, 1, 1, [PING_HU]),
        _win("H1", 41, 1, "pB", "discard", 2, 2, 2, 2, [PING_HU, _pattern("gen", "根", 1)]),
        _win("H1", 41, 3, "pD", "discard", 2, 2, 3, 4, [PING_HU, _pattern("qing_yi_se", "清一色", 2)]),
        _win("H2", 30, 1, "pB", "discard", 0, 1, 1, 1, [PING_HU]),
        _win(
            "H4",
            12,
            0,
            "pA",
            "self_draw",
            None,
            1,
            5,
            16,
            [PING_HU, _pattern("qing_yi_se", "清一色", 2), _pattern("gen", "根", 2)],
        ),
    ]
    issues = [
        _issue("H1", "SETTLE_AMOUNT"),
        _issue("H1", "SETTLE_AMOUNT"),
        _issue("H4", "TURN_ORDER"),
        _issue("H2", "SESSION_HAND_GAP", "warning"),
    ]
    rejects = [
        _reject(5, "SCHEMA_JSON", 10),
        _reject(6, "SCHEMA_JSON", 20),
        _reject(7, "INGEST_CONFLICT", 100),
    ]
    rows = {"hands": hands, "player_hands": seats, "wins": wins, "issues": issues, "rejects": rejects}
    wh = Warehouse(root).open()
    wh.write_batch("tiny", {name: pa.Table.from_pylist(r, schema=TABLES[name]) for name, r in rows.items()})
    wh.write_run(
        "run1",
        {
            "run_id": "run1",
            "started_at": PLAYED,
            "finished_at": PLAYED,
            "inputs": ["tiny.jsonl"],
            "engine": "local",
            "workers": 1,
            "lines_read": 8,
            "records_stored": 4,
            "records_invalid": 2,
            "rejects": 3,
            "duplicates": 1,
            "conflicts": 1,
            "seconds": 0.1,
            "version": "test",
        },
    )
    wh.build_catalogue()
    getattr(wh, "close", lambda: None)()  # the write lock, where the warehouse takes one
    return root


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    return queries.connect(tiny_warehouse(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(scope="module")
def empty_con(tmp_path_factory):
    root = tmp_path_factory.mktemp("empty")
    Warehouse(root).open().build_catalogue()
    return queries.connect(root)


def rows(df: pl.DataFrame, *columns: str) -> list[tuple]:
    return list(df.select(columns).iter_rows())


def close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) < 1e-9


# ---------------------------------------------------------------------------------------------- overview
def test_fan_distribution_counts_replayed_wins_only(con):
    df = overview.prep_fan_distribution(con)
    # H4's 5-fan win is not replayed: fans 1..3 only.
    assert rows(df, "fan", "wins", "n") == [(1, 2, 4), (2, 1, 4), (3, 1, 4)]
    assert df["share"].to_list() == [0.5, 0.25, 0.25]


def test_fan_distribution_fills_gaps(tmp_path):
    root = tiny_warehouse(tmp_path / "w")
    wh = Warehouse(root).open()
    hand = _hand("H9", ["pA", "pB", "pC", "pD"], winners=1, outcome="wall_empty")
    win = _win("H9", 5, 0, "pA", "self_draw", None, 1, 6, 32, [PING_HU, _pattern("qi_dui", "七对", 5)])
    wh.write_batch(
        "gap",
        {
            "hands": pa.Table.from_pylist([hand], schema=TABLES["hands"]),
            "wins": pa.Table.from_pylist([win], schema=TABLES["wins"]),
        },
    )
    getattr(wh, "close", lambda: None)()
    df = overview.prep_fan_distribution(queries.connect(root))
    assert rows(df, "fan", "wins") == [(1, 2), (2, 1), (3, 1), (4, 0), (5, 0), (6, 1)]
    assert df["n"].unique().to_list() == [5]


def test_pattern_frequency(con):
    df = overview.prep_pattern_frequency(con)
    assert rows(df, "pattern", "name_zh", "name_en", "wins", "share", "n") == [
        ("ping_hu", "平胡", "plain hand", 4, 1.0, 4),
        ("gen", "根", "roots", 1, 0.25, 4),
        ("qing_yi_se", "清一色", "full flush", 1, 0.25, 4),
    ]


def test_pattern_names_of_special_and_unknown_ids():
    assert overview.pattern_names("tian_hu") == ("天胡", "heavenly hand")
    assert overview.pattern_names("new_thing") == ("new_thing", "new_thing")


def test_outcomes(con):
    df = overview.prep_outcomes(con)
    assert rows(df, "key", "group", "hands", "n") == [
        ("winners_0", "winners", 1, 3),
        ("winners_1", "winners", 1, 3),
        ("winners_2", "winners", 0, 3),
        ("winners_3", "winners", 1, 3),
        ("huang_zhuang", "end", 2, 3),
        ("multi_win_hands", "end", 1, 3),
    ]
    huang = df.filter(pl.col("key") == "huang_zhuang").row(0, named=True)
    assert close(huang["share"], 2 / 3)
    assert (huang["ci_low"], huang["ci_high"]) == wilson(2, 3)
    assert df["label_zh"].to_list()[4:] == ["黄庄", "一炮多响"]


def test_hua_zhu_per_hand_at_an_empty_wall(con):
    df = overview.prep_hua_zhu(con)
    # H2 ended with one pig, H3 with two; H1 did not reach an empty wall, H4 is not replayed.
    assert rows(df, "pigs", "hands", "n", "share") == [(0, 0, 2, 0.0), (1, 1, 2, 0.5), (2, 1, 2, 0.5)]
    assert rows(df, "ci_low", "ci_high")[1] == wilson(1, 2)
    assert run_sql(con, "hua_zhu_per_hand")["hands"].sum() == 2


def test_deal_in_by_player(con):
    df = overview.prep_deal_in_by_player(con)
    # pA dealt in H2 (pB's win), pC in H1 (two winners, one hand); highest rate first, ties by id.
    assert rows(df, "player", "hands", "deal_in_hands") == [
        ("pA", 3, 1),
        ("pC", 3, 1),
        ("pB", 3, 0),
        ("pD", 2, 0),
        ("pE", 1, 0),
    ]
    assert close(df["rate"][0], 1 / 3)
    assert (df["ci_low"][0], df["ci_high"][0]) == wilson(1, 3)
    assert close(df["all_rate"][0], 2 / 12)
    assert df["all_hands"][0] == 12 and df["players"][0] == 5


def test_deal_in_by_player_keeps_the_players_with_most_hands(con):
    df = overview.prep_deal_in_by_player(con, limit=3)
    assert df["player"].to_list() == ["pA", "pC", "pB"]  # pD (2 hands) and pE (1) left out
    assert df["players"][0] == 5 and close(df["all_rate"][0], 2 / 12)  # the population is still everyone


def test_net_points_by_player(con):
    df = overview.prep_net_points_by_player(con)
    # H4 (+10 for pA, -10 for pD) is not replayed.
    assert rows(df, "player", "hands", "net") == [
        ("pB", 3, 6),
        ("pA", 3, 4),
        ("pD", 2, 1),
        ("pE", 1, -2),
        ("pC", 3, -9),
    ]
    assert df["all_net"][0] == 0
    pa_row = df.filter(pl.col("player") == "pA").row(0, named=True)
    mean, low, high = mean_interval(4, 3 * 3 + 1 + 2 * 2, 3)  # deltas +3, -1, +2
    assert close(pa_row["per_hand"], mean) and close(pa_row["ci_low"], low) and close(pa_row["ci_high"], high)


# ---------------------------------------------------------------------------------------------- player
def test_top_players(con):
    assert rows(player.prep_top_players(con, 3), "player", "hands") == [("pA", 3), ("pB", 3), ("pC", 3)]
    assert player.prep_top_players(con, 10)["player"].to_list() == ["pA", "pB", "pC", "pD", "pE"]
    assert player.prep_top_players(con, 0).height == 0


def _metric(df: pl.DataFrame, metric: str, who: str) -> dict:
    return df.filter((pl.col("metric") == metric) & (pl.col("who") == who)).row(0, named=True)


def test_player_rates_beside_the_population(con):
    df = player.prep_player_rates(con, "pA")
    assert df["metric"].unique(maintain_order=True).to_list() == list(player.RATES)
    assert df["player"].unique().to_list() == ["pA"]
    expected = {  # metric: (player num, den), (population num, den)
        "win_rate": ((1, 3), (4, 12)),
        "self_draw_share": ((1, 1), (1, 4)),
        "first_winner_rate": ((1, 3), (2, 12)),
        "deal_in_rate": ((1, 3), (2, 12)),
        "hua_zhu_rate": ((0, 3), (3, 12)),
        "not_ready_at_draw_rate": ((0, 2), (4, 7)),
    }
    for metric, sides in expected.items():
        for who, (num, den) in zip((player.PLAYER, player.POPULATION), sides, strict=True):
            r = _metric(df, metric, who)
            assert (r["num"], r["den"]) == (num, den), (metric, who)
            assert close(r["value"], num / den)
            assert (r["ci_low"], r["ci_high"]) == wilson(num, den)
    assert _metric(df, "not_ready_at_draw_rate", player.PLAYER)["den_of"] == "still_in_at_draw"


def test_player_means_beside_the_population(con):
    df = player.prep_player_means(con, "pA")
    expected = {  # metric: (player sum, n), (population sum, n)
        "fan_per_win": ((1, 1), (7, 4)),
        "points_per_win": ((1, 1), (8, 4)),
        "points_lost_per_deal_in": ((1, 1), (7, 3)),  # pC lost 2 + 4 in H1, pA 1 in H2
        "net_points_per_hand": ((4, 3), (0, 12)),
        "pongs_per_hand": ((2, 3), (4, 12)),
    }
    for metric, sides in expected.items():
        for who, (total, n) in zip((player.PLAYER, player.POPULATION), sides, strict=True):
            r = _metric(df, metric, who)
            assert (r["num"], r["den"]) == (total, n), (metric, who)
            assert close(r["value"], total / n)
    fan = _metric(df, "fan_per_win", player.POPULATION)
    assert (fan["ci_low"], fan["ci_high"]) == mean_interval(7, 1 + 4 + 9 + 1, 4)[1:]
    assert _metric(df, "fan_per_win", player.PLAYER)["ci_low"] is None  # one win: no interval


def test_player_table_has_every_metric(con):
    from pipeline.analytics.metrics import METRICS

    df = player.prep_player_table(con, "pC")
    assert df.height == 2 * len(METRICS)
    assert _metric(df, "hands", player.PLAYER)["value"] == 3
    assert _metric(df, "hands", player.POPULATION)["value"] == 12
    assert _metric(df, "deal_ins_per_hand", player.PLAYER)["num"] == 2


def test_unknown_player(con):
    with pytest.raises(player.UnknownPlayer, match="'nobody'"):
        player.prep_player_rates(con, "nobody")
    with pytest.raises(player.UnknownPlayer):
        player.prep_player_means(con, "pX")


def test_player_fan(con):
    df = player.prep_player_fan(con, "pD")
    assert rows(df, "fan", "who", "wins", "n") == [
        (1, "player", 0, 1),
        (2, "player", 0, 1),
        (3, "player", 1, 1),
        (1, "all players", 2, 4),
        (2, "all players", 1, 4),
        (3, "all players", 1, 4),
    ]
    assert df.filter(pl.col("who") == "player")["share"].to_list() == [0.0, 0.0, 1.0]
    assert run_sql(con, "player_fan_distribution", player="pA")["wins"].to_list() == [1]  # H4 is not replayed


# ---------------------------------------------------------------------------------------------- quality
def test_issues_by_code(con):
    df = quality.prep_issues_by_code(con)
    assert rows(df, "code", "severity", "issues", "hands", "n", "share") == [
        ("SETTLE_AMOUNT", "error", 2, 1, 4, 0.25),
        ("SESSION_HAND_GAP", "warning", 1, 1, 4, 0.25),
        ("TURN_ORDER", "error", 1, 1, 4, 0.25),
    ]
    assert (df["ci_low"][0], df["ci_high"][0]) == wilson(1, 4)
    assert df["meaning"][0].startswith("A claimed payment has the right parties")


def test_rejects_by_code(con):
    df = quality.prep_rejects_by_code(con)
    assert rows(df, "code", "rejects", "bytes", "n") == [
        ("SCHEMA_JSON", 2, 30, 3),
        ("INGEST_CONFLICT", 1, 100, 3),
    ]
    assert close(df["share"][0], 2 / 3)
    assert df["meaning"][1].startswith("The hand_id of a stored record")
    assert df["meaning"][0] == "The line is not a JSON object."


def test_quality_summary(con):
    df = quality.prep_summary(con)
    assert dict(df.iter_rows()) == {
        "ingest runs": 1,
        "lines read": 8,
        "stored hands": 4,
        "valid hands": 2,
        "replayed hands (count in the statistics)": 3,
        "hands with an issue": 3,
        "issues": 4,
        "rejected lines": 3,
        "duplicate lines skipped": 1,
        "conflicting hand_ids": 1,
    }


def test_meaning_of_unknown_code():
    assert quality.meaning("NOT_A_CODE") == ""
    assert quality.meaning("INGEST_READ").startswith("The file or line could not be read")


# ---------------------------------------------------------------------------------------------- empty
def test_every_prep_on_an_empty_warehouse(empty_con):
    assert overview.prep_fan_distribution(empty_con).height == 0
    assert overview.prep_pattern_frequency(empty_con).height == 0
    out = overview.prep_outcomes(empty_con)
    assert out["hands"].sum() == 0 and out["share"].null_count() == out.height
    assert rows(overview.prep_hua_zhu(empty_con), "pigs", "hands") == [(0, 0), (1, 0), (2, 0)]
    assert overview.prep_deal_in_by_player(empty_con).height == 0
    assert overview.prep_net_points_by_player(empty_con).height == 0
    assert player.prep_top_players(empty_con, 3).height == 0
    assert quality.prep_issues_by_code(empty_con).height == 0
    assert quality.prep_rejects_by_code(empty_con).height == 0
    assert dict(quality.prep_summary(empty_con).iter_rows())["stored hands"] == 0


# ---------------------------------------------------------------------------------------------- plots
PLOTS = [
    (overview.prep_fan_distribution, overview.plot_fan_distribution, ()),
    (overview.prep_pattern_frequency, overview.plot_pattern_frequency, ()),
    (overview.prep_outcomes, overview.plot_outcomes, ()),
    (overview.prep_hua_zhu, overview.plot_hua_zhu, ()),
    (overview.prep_deal_in_by_player, overview.plot_deal_in_by_player, ()),
    (overview.prep_net_points_by_player, overview.plot_net_points_by_player, ()),
    (player.prep_player_rates, player.plot_player_rates, ("pA",)),
    (player.prep_player_means, player.plot_player_means, ("pA",)),
    (player.prep_player_fan, player.plot_player_fan, ("pA",)),
    (quality.prep_issues_by_code, quality.plot_issues_by_code, ()),
    (quality.prep_rejects_by_code, quality.plot_rejects_by_code, ()),
]


def _draw(plot, df: pl.DataFrame, choice: charts.Fonts) -> list[str]:
    """Draw like charts.render does and return every text of the figure."""
    with charts.forced_fonts(choice), matplotlib.rc_context(charts.rc(choice)):
        fig = Figure(figsize=(8, 5), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        plot(df, ax)
        fig.canvas.draw()
        title = ax.get_title()
        texts = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    assert title, "every chart has a title"
    return texts


@pytest.mark.parametrize(("prep", "plot", "args"), PLOTS, ids=[p[1].__name__ for p in PLOTS])
def test_plot_titles_sizes_and_fallback_without_a_cjk_font(con, prep, plot, args):
    df = prep(con, *args)
    texts = _draw(plot, df, charts.Fonts(cjk_family=None))
    joined = "\n".join(texts)
    assert not CJK.search(joined), f"Chinese text without a CJK font: {CJK.findall(joined)}"
    assert re.search(r"n ?= ?[\d,]+", joined), "the sample size is shown"
    png = charts.render(plot, df, choice=charts.Fonts(cjk_family=None))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


WAREHOUSE_PLOTS = [(prep, plot) for prep, plot, args in PLOTS if not args]  # player plots need a player


@pytest.mark.parametrize(("prep", "plot"), WAREHOUSE_PLOTS, ids=[p[1].__name__ for p in WAREHOUSE_PLOTS])
def test_plot_on_an_empty_warehouse(empty_con, prep, plot):
    df = prep(empty_con)
    png = charts.render(plot, df, choice=charts.Fonts(cjk_family=None))
    assert png.startswith(b"\x89PNG")


def test_player_pages_of_a_player_who_never_won(con):
    rates = player.prep_player_rates(con, "pE")
    assert _metric(rates, "self_draw_share", player.PLAYER)["value"] is None  # no wins: no share
    means = player.prep_player_means(con, "pE")
    assert _metric(means, "fan_per_win", player.PLAYER)["den"] == 0
    fan = player.prep_player_fan(con, "pE")
    assert fan.filter(pl.col("who") == "player")["wins"].sum() == 0
    for plot, df in ((player.plot_player_rates, rates), (player.plot_player_means, means),
                     (player.plot_player_fan, fan)):
        assert charts.render(plot, df).startswith(b"\x89PNG")


def test_chinese_labels_with_a_cjk_font(con):
    choice = charts.fonts()
    if not choice.cjk:
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    texts = _draw(overview.plot_pattern_frequency, overview.prep_pattern_frequency(con), choice)
    assert "平胡 plain hand" in texts and "清一色 full flush" in texts
    texts = _draw(player.plot_player_rates, player.prep_player_rates(con, "pA"), choice)
    assert any(t.startswith("花猪率 flower-pig rate") for t in texts)
    charts.render(overview.plot_outcomes, overview.prep_outcomes(con), choice=choice)  # no GlyphError


def test_player_ids_the_fonts_cannot_draw_are_escaped(con):
    df = overview.prep_deal_in_by_player(con).with_columns(pl.lit("张三").alias("player"))
    texts = _draw(overview.plot_deal_in_by_player, df, charts.Fonts(cjk_family=None))
    assert any("\\u5f20\\u4e09" in t for t in texts)


def test_sql_files_are_models_with_a_header():
    for name in ("hua_zhu_per_hand", "rejects_by_code", "player_fan_distribution", "quality_summary"):
        text = sql(name)
        assert text.startswith(f"-- {name}:"), name
        assert "Check:" in text, name
