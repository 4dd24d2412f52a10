"""The dashboards' data steps on a warehouse small enough to count by hand, and their plot steps.

The warehouse (written row by row with ``Warehouse.write_batch``) holds four hands:

    H1  pA pB pC pD  replayed, won_out: pA self-draws (1 fan, 1 pt, first); then pC's discard pays two
                     winners at once (一炮多响, both second): pB (2 fan, 2 pts), pD (3 fan, 4 pts).
                     deltas +3 +1 -7 +3. Two SETTLE_AMOUNT errors (so not valid) at event 41, on pC's seat
                     moving 4 points and on pD's moving 2.
    H2  pA pB pC pD  replayed, wall_empty (黄庄), one winner: pB on pA's discard (1 fan, 1 pt, first).
                     pD is a flower pig; pA ready, pC and pD not. deltas -1 +3 0 -2.
                     A SESSION_HAND_GAP warning about the whole hand (no event, no seat).
    H3  pA pB pC pE  replayed, wall_empty (黄庄), no winner: pC and pE flower pigs; pA and pB ready.
                     deltas +2 +2 -2 -2.
    H4  pA pB pC pD  stopped (not replayed, invalid: TURN_ORDER at event 3 on pB's seat): a 5-fan win by pA
                     and deltas +10 0 0 -10 that no statistic may count.

The audit prices the findings (money at stake): the two SETTLE_AMOUNT by the points they move (4, 2); the
TURN_ORDER and the SESSION_HAND_GAP by the points settled in their hand (H4: pA's +10; H2: pB's +3).

Pongs: pA one in H1 and one in H3, pB two in H2. Rejects: two SCHEMA_JSON lines (10 and 20 bytes) and one
INGEST_CONFLICT (100 bytes). One ingest run: 8 lines read = 4 stored + 3 rejects + 1 duplicate.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from pathlib import Path
from statistics import NormalDist

import matplotlib
import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from system_parts import missing_system_part

from dashboards import audit as audit_dash
from dashboards import collusion as collusion_dash
from dashboards import overview, player, quality, run_sql
from pipeline.analytics import queries
from pipeline.analytics.stats import by_qvalues, mean_interval, wilson
from pipeline.audit import collusion
from pipeline.audit.collusion import SIGNALS, PairResult
from pipeline.audit.scoring import audit
from pipeline.audit.screen import choose_min_hands
from pipeline.audit.screen import screen as collusion_screen
from pipeline.codes import CODES
from pipeline.ingest.warehouse import Warehouse
from pipeline.report import charts
from pipeline.sql import load_sql
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
        "session_id": f"s{hand_id}",  # a session per hand: no session findings beside the fixture's own
        "hand_no": 1,
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


def _issue(
    hand_id: str,
    code: str,
    severity: str = "error",
    *,
    event: int | None = 3,
    seat: int | None = 1,
    money: int | None = None,
) -> dict:
    return {
        "hand_id": hand_id,
        "code": code,
        "severity": severity,
        "event": event,
        "seat": seat,
        "expected": "x",
        "actual": "y",
        "message": f"{code} in {hand_id}",
        "money": money,
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


def tiny_warehouse(root: Path, rename: dict[str, str] | None = None) -> Path:
    """Write the four hands of the module docstring into a warehouse at ``root`` (the players renamed by
    ``rename``, e.g. to Chinese names)."""
    four = ["pA", "pB", "pC", "pD"]
    hands = [
        _hand("H1", four, winners=3, outcome="won_out", valid=False, issues=2),
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
        _issue("H1", "SETTLE_AMOUNT", event=41, seat=2, money=4),
        _issue("H1", "SETTLE_AMOUNT", event=41, seat=3, money=2),
        _issue("H4", "TURN_ORDER"),
        _issue("H2", "SESSION_HAND_GAP", "warning", event=None, seat=None),
    ]
    rejects = [
        _reject(5, "SCHEMA_JSON", 10),
        _reject(6, "SCHEMA_JSON", 20),
        _reject(7, "INGEST_CONFLICT", 100),
    ]
    if rename:
        for h in hands:
            h["players"] = [rename.get(p, p) for p in h["players"]]
        for r in (*seats, *wins):
            r["player"] = rename.get(r["player"], r["player"])
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
def tiny_root(tmp_path_factory) -> Path:
    return tiny_warehouse(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def con(tiny_root):
    return queries.connect(tiny_root)


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
    # 平胡 in every win, four times the next: stated apart, not drawn, so that the other bars are readable
    assert df["apart"].to_list() == [True, False, False]
    texts = _draw(overview.plot_pattern_frequency, df, charts.Fonts(cjk_family=None))
    assert any("plain hand (ping hu): 4 wins (100.0%), not drawn" in t for t in texts)
    assert "plain hand (ping hu)" not in texts and "roots (gen)" in texts  # no bar for it, one for the others


def test_pattern_frequency_without_a_dominant_pattern(con):
    df = overview.prep_pattern_frequency(con).with_columns(pl.Series("wins", [2, 1, 1]))
    assert not overview.prep_pattern_frequency(con).filter(pl.col("pattern") != "ping_hu")["apart"].any()
    texts = _draw(overview.plot_pattern_frequency, df.with_columns(pl.lit(False).alias("apart")), charts.Fonts(None))
    assert "plain hand (ping hu)" in texts and not any("not drawn" in t for t in texts)


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
    assert df["per_hand"].to_list() == sorted(df["per_hand"].to_list(), reverse=True)  # best per hand first
    texts = _draw(overview.plot_net_points_by_player, df, charts.Fonts(cjk_family=None))
    assert "+2.00/hand, +6 total" in texts and "-3.00/hand, -9 total" in texts
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
    assert queries.run(con, "fan_distribution", player="pA")["wins"].to_list() == [1]  # H4 is not replayed


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
    assert df["meaning"][1] == CODES["INGEST_CONFLICT"].meaning  # the ingest's codes are catalogued too
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
    assert quality.meaning("INGEST_READ") == CODES["INGEST_READ"].meaning


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
    for plot, df in (
        (player.plot_player_rates, rates),
        (player.plot_player_means, means),
        (player.plot_player_fan, fan),
    ):
        assert charts.render(plot, df).startswith(b"\x89PNG")


def test_chinese_labels_with_a_cjk_font(con):
    choice = charts.fonts()
    if not choice.cjk:
        missing_system_part("cjk", "no CJK font installed (apt-get install fonts-noto-cjk)")
    texts = _draw(overview.plot_pattern_frequency, overview.prep_pattern_frequency(con), choice)
    assert "清一色 full flush" in texts  # a bar's label
    assert any("平胡 plain hand: 4 wins (100.0%), not drawn" in t for t in texts)  # set apart, in the title
    texts = _draw(player.plot_player_rates, player.prep_player_rates(con, "pA"), choice)
    assert any(t.startswith("花猪率 flower-pig rate") for t in texts)
    charts.render(overview.plot_outcomes, overview.prep_outcomes(con), choice=choice)  # no GlyphError


def test_player_ids_the_fonts_cannot_draw_are_escaped(con):
    df = overview.prep_deal_in_by_player(con).with_columns(pl.lit("张三").alias("player"))
    texts = _draw(overview.plot_deal_in_by_player, df, charts.Fonts(cjk_family=None))
    assert any("\\u5f20\\u4e09" in t for t in texts)


def test_sql_files_are_models_with_a_header():
    for name in (
        "hua_zhu_per_hand",
        "rejects_by_code",
        "quality_summary",
        "hands_by_month",
        "players_hands_by_level",
        "players_fan_distribution",
    ):
        text = load_sql("dashboards", name)
        assert text.startswith(f"-- {name}:"), name
        assert "Check:" in text, name


def test_cjk_terms_of_the_collusion_heat_map(con):
    choice = charts.fonts()
    if not choice.cjk:
        missing_system_part("cjk", "no CJK font installed (apt-get install fonts-noto-cjk)")
    df = collusion_dash.prep_pair_matrix(_screen())
    texts = _draw(collusion_dash.plot_pair_matrix, df, choice)
    assert any("串通" in t for t in texts)
    charts.render(collusion_dash.plot_pair_matrix, df, choice=choice)  # no GlyphError


# ---------------------------------------------------------------------------------------------- audit
# The tiny warehouse's findings, most money first (module docstring):
#   H4 TURN_ORDER        pB   10   (H4's stake: pA's +10)
#   H1 SETTLE_AMOUNT     pC    4
#   H2 SESSION_HAND_GAP  –     3   (a warning about the whole hand; H2's stake: pB's +3)
#   H1 SETTLE_AMOUNT     pD    2
@pytest.fixture(scope="module")
def findings(con):
    return audit(con)


def test_audit_money_by_code(findings):
    df = audit_dash.prep_money_by_code(findings)
    assert rows(df, "code", "severity", "findings", "hands", "money", "n_findings", "n_hands") == [
        ("TURN_ORDER", "error", 1, 1, 10, 4, 3),
        ("SETTLE_AMOUNT", "error", 2, 1, 6, 4, 3),
        ("SESSION_HAND_GAP", "warning", 1, 1, 3, 4, 3),
    ]
    assert [round(x, 9) for x in df["share"]] == [round(10 / 19, 9), round(6 / 19, 9), round(3 / 19, 9)]


def test_audit_money_by_player(findings):
    df = audit_dash.prep_money_by_player(findings)
    assert rows(df, "player", "findings", "hands", "money") == [
        ("pB", 1, 1, 10),
        ("pC", 1, 1, 4),
        ("pD", 1, 1, 2),
    ]
    first = df.row(0, named=True)
    assert (first["players"], first["unattributed_findings"], first["unattributed_money"]) == (3, 1, 3)
    assert first["n_findings"] == 4
    top = audit_dash.prep_money_by_player(findings, limit=2)
    assert top["player"].to_list() == ["pB", "pC"] and top["players"][0] == 3  # still counts every player


def test_audit_top_findings(findings):
    df = audit_dash.prep_top_findings(findings)
    assert rows(df, "rank", "hand_id", "event", "code", "player", "money") == [
        (1, "H4", 3, "TURN_ORDER", "pB", 10),
        (2, "H1", 41, "SETTLE_AMOUNT", "pC", 4),
        (3, "H2", None, "SESSION_HAND_GAP", None, 3),
        (4, "H1", 41, "SETTLE_AMOUNT", "pD", 2),
    ]
    assert df["message"][0] == "TURN_ORDER in H4"
    assert df["meaning"][0] == CODES["TURN_ORDER"].meaning
    short = audit_dash.prep_top_findings(findings, limit=2)
    assert short["hand_id"].to_list() == ["H4", "H1"] and short["n_findings"].to_list() == [4, 4]


def test_audit_findings_by_month(con, findings):
    df = audit_dash.prep_findings_by_month(con, findings)
    assert rows(df, "month", "hands", "findings", "hands_with_findings", "money", "n", "n_findings") == [
        ("2026-11", 4, 4, 3, 19, 4, 4)
    ]
    assert df["share"][0] == 0.75 and (df["ci_low"][0], df["ci_high"][0]) == wilson(3, 4)


def test_audit_findings_by_month_in_utc_with_undated_hands(tmp_path):
    """A hand played at 23:30 UTC on 31 October counts in October; a hand without a date in "no date"."""
    root = tiny_warehouse(tmp_path / "w")
    october = _hand("H5", ["pA", "pB", "pC", "pD"], winners=0, outcome="stopped", replayed=False, valid=False)
    october["played_at"] = datetime(2026, 10, 31, 23, 30, tzinfo=UTC)
    undated = _hand("H6", ["pA", "pB", "pC", "pD"], winners=0, outcome="wall_empty")
    undated["played_at"] = None
    wh = Warehouse(root).open()
    wh.write_batch(
        "months",
        {
            "hands": pa.Table.from_pylist([october, undated], schema=TABLES["hands"]),
            "issues": pa.Table.from_pylist([_issue("H5", "SCORE_FAN", seat=0, money=5)], schema=TABLES["issues"]),
        },
    )
    getattr(wh, "close", lambda: None)()
    con = queries.connect(root)
    df = audit_dash.prep_findings_by_month(con, audit(con))
    assert rows(df, "month", "hands", "findings", "hands_with_findings", "money") == [
        ("2026-10", 1, 1, 1, 5),
        ("2026-11", 4, 4, 3, 19),
        (audit_dash.NO_MONTH, 1, 0, 0, 0),
    ]
    assert df["n"].unique().to_list() == [6] and df["n_findings"].unique().to_list() == [5]
    assert df["share"].to_list()[2] == 0.0
    assert run_sql(con, "hands_by_month")["hands"].sum() == 6


def test_audit_preps_without_findings(empty_con):
    nothing = audit(empty_con)
    assert audit_dash.prep_money_by_code(nothing).height == 0
    assert audit_dash.prep_money_by_player(nothing).height == 0
    assert audit_dash.prep_top_findings(nothing).height == 0
    assert audit_dash.prep_findings_by_month(empty_con, nothing).height == 0


# ---------------------------------------------------------------------------------------------- collusion
def _pair(a: str, b: str, shared: int, score: float, q: float, flagged: bool, evidence: int = 0) -> PairResult:
    signals = {
        s: {"observed": float(k + 1), "expected": 1.5, "ratio_shrunk": 1.0, "z": round(score / 2 - k, 3)}
        for k, s in enumerate(SIGNALS)
    }
    return PairResult(
        players=(a, b),
        shared_hands=shared,
        score=score,
        p=NormalDist().cdf(-score),
        q=q,
        flagged=flagged,
        signals=signals,
        seating={"observed": shared, "expected": shared / 2, "ratio": 2.0, "p": 0.01},
        evidence=[{"hand_id": f"H{k}", "event": 10 + k, "why": f"{b} won on {a}'s 5m"} for k in range(evidence)],
    )


def _screen() -> collusion_dash.Screen:
    """Six pairs among pA..pD (threshold 100): pA & pB flagged (score 4), pB & pC and pA & pC screened,
    pB & pD screened without a score (no signal varied), pA & pD and pC & pD below the threshold."""
    shared = pl.DataFrame(
        {
            "player_a": ["pA", "pA", "pB", "pB", "pA", "pC"],
            "player_b": ["pB", "pC", "pD", "pC", "pD", "pD"],
            "shared_hands": [300, 250, 150, 120, 40, 10],
        }
    )
    pairs = (
        _pair("pA", "pB", 300, 4.0, 0.001, True, evidence=2),
        _pair("pB", "pC", 120, 1.0, 0.9, False),
        _pair("pA", "pC", 250, -0.5, 1.0, False),
    )
    return collusion_dash.Screen(requested=200, min_hands=100, fdr=0.05, shared=shared, pairs=pairs)


def test_shared_hands_of_the_tiny_warehouse(con):
    df = collusion_screen(collusion.pair_features(con), evidence=0).shared
    # H1, H2, H4... H4 is not replayed: pA pB pC share H1-H3, pD sat in H1 and H2, pE in H3.
    assert rows(df, "player_a", "player_b", "shared_hands") == [
        ("pA", "pB", 3),
        ("pA", "pC", 3),
        ("pB", "pC", 3),
        ("pA", "pD", 2),
        ("pB", "pD", 2),
        ("pC", "pD", 2),
        ("pA", "pE", 1),
        ("pB", "pE", 1),
        ("pC", "pE", 1),
    ]


def test_choose_min_hands():
    assert choose_min_hands([250, 10, 10], 200) == 200  # one pair reaches it: as asked
    assert choose_min_hands([], 200) == 200
    # 1 of 5 pairs reaches 100 (less than a quarter), 2 of 5 reach 50.
    assert choose_min_hands([135, 60, 40, 30, 20], 200) == 50
    assert choose_min_hands([135, 60, 40, 30], 200) == 100  # 1 of 4 is a quarter
    assert choose_min_hands([3, 2, 1], 200) == 20  # the floor, even if nothing reaches it
    assert choose_min_hands([30, 30], 60) == 20  # only the fallbacks below the request
    assert choose_min_hands([5], 15) == 15  # asked for less than every fallback


def test_screen_of_the_tiny_warehouse_falls_back_and_screens_nothing(con):
    screen = collusion_dash.screen_pairs(con)
    assert (screen.requested, screen.min_hands, screen.pairs) == (200, 20, ())
    assert screen.shared.height == 9 and screen.reaching == 0
    note = screen.threshold_note()
    assert "200 were asked for" in note and "fell back to 20" in note and "the most is 3" in note
    assert "0 of the 9 pairs" in note
    assert collusion_dash.prep_pair_matrix(screen).height == 0
    assert collusion_dash.prep_top_pairs(screen).height == 0
    assert collusion_dash.prep_evidence(screen).height == 0


def test_threshold_note_as_asked():
    screen = collusion_dash.Screen(200, 200, 0.05, _screen().shared, ())
    assert screen.threshold_note() == (
        "Threshold: at least 200 shared hands, as asked; 2 of the 6 pairs who shared a replayed hand reach it."
    )


def test_pair_matrix():
    df = collusion_dash.prep_pair_matrix(_screen())
    assert rows(df, "player_a", "player_b", "shared_hands", "status", "score") == [
        ("pA", "pB", 300, "flagged", 4.0),
        ("pA", "pC", 250, "screened", -0.5),
        ("pA", "pD", 40, "below", None),
        ("pB", "pC", 120, "screened", 1.0),
        ("pB", "pD", 150, "no_signal", None),
        ("pC", "pD", 10, "below", None),
    ]
    first = df.row(0, named=True)
    assert (first["min_hands"], first["requested"], first["fdr"]) == (100, 200, 0.05)
    assert (first["players_shown"], first["players_total"], first["n_pairs"]) == (4, 4, 6)
    assert (first["n_screened"], first["n_flagged"], first["q"]) == (3, 1, 0.001)


def test_pair_matrix_writes_on_the_flagged_and_best_cells_only():
    every = collusion_dash.prep_pair_matrix(_screen())
    assert rows(every, "player_a", "player_b", "label") == [
        ("pA", "pB", True),
        ("pA", "pC", True),
        ("pA", "pD", False),  # below the threshold: colour only
        ("pB", "pC", True),
        ("pB", "pD", False),  # screened without a score
        ("pC", "pD", False),
    ]
    one = collusion_dash.prep_pair_matrix(_screen(), labelled=1)  # the flagged pair and the best other one
    assert one.filter(pl.col("label"))["player_b"].to_list() == ["pB", "pC"]
    assert rows(one.filter(pl.col("label")), "player_a") == [("pA",), ("pB",)]
    texts = _draw(collusion_dash.plot_pair_matrix, one, charts.Fonts(cjk_family=None))
    assert "4.0\n300" in texts and "1.0\n120" in texts and "-0.5\n250" not in texts
    assert not any(t in texts for t in ("40", "10", "150"))  # unscored cells carry no text
    assert any("the 2 flagged and best-scoring pairs written on" in t for t in texts)


def test_pair_matrix_keeps_the_players_of_the_strongest_pairs():
    df = collusion_dash.prep_pair_matrix(_screen(), limit=2)
    assert rows(df, "player_a", "player_b") == [("pA", "pB")]  # the flagged pair's players
    assert (df["players_shown"][0], df["players_total"][0]) == (2, 4)
    three = collusion_dash.prep_pair_matrix(_screen(), limit=3)
    assert set(three["player_a"]) | set(three["player_b"]) == {"pA", "pB", "pC"}  # pC: best score 1.0


def test_critical_scores_are_the_benjamini_yekutieli_step_up():
    c3 = 1 + 1 / 2 + 1 / 3
    crit = collusion_dash.critical_scores(3, 0.05)
    expected = [NormalDist().inv_cdf(1 - k * 0.05 / (3 * c3)) for k in (1, 2, 3)]
    assert all(math.isclose(c, e, rel_tol=1e-12) for c, e in zip(crit, expected, strict=True))
    assert collusion_dash.critical_scores(0, 0.05) == []
    assert collusion_dash.critical_scores(1, 1.0) == [None]  # any score would do
    # Flagged by q <= fdr (the screen's rule) is exactly: at or above a rank whose score reaches its critical.
    rng = np.random.default_rng(5)
    for _ in range(20):
        scores = np.sort(rng.normal(1.0, 1.5, size=int(rng.integers(1, 40))))[::-1]
        q = by_qvalues(np.array([NormalDist().cdf(-s) for s in scores]))
        crit = collusion_dash.critical_scores(len(scores), 0.05)
        reached = [k for k, (s, c) in enumerate(zip(scores, crit, strict=True)) if c is not None and s >= c]
        last = max(reached, default=-1)
        assert [bool(x <= 0.05) for x in q] == [k <= last for k in range(len(scores))]


def test_top_pairs():
    df = collusion_dash.prep_top_pairs(_screen())
    assert rows(df, "rank", "player_a", "player_b", "shared_hands", "score", "flagged", "evidence") == [
        (1, "pA", "pB", 300, 4.0, True, 2),
        (2, "pB", "pC", 120, 1.0, False, 0),
        (3, "pA", "pC", 250, -0.5, False, 0),
    ]
    assert df["critical"].to_list() == collusion_dash.critical_scores(3, 0.05)
    assert df["p"][0] == NormalDist().cdf(-4.0) and df["q"].to_list() == [0.001, 0.9, 1.0]
    first = df.row(0, named=True)
    assert (first["feeding_z"], first["feeding_observed"], first["feeding_expected"]) == (2.0, 1.0, 1.5)
    assert (first["channel_z"], first["channel_observed"]) == (-1.0, 4.0)
    assert (first["sit_ratio"], first["sit_p"]) == (2.0, 0.01)
    assert (first["n_screened"], first["min_hands"], first["fdr"]) == (3, 100, 0.05)
    assert collusion_dash.prep_top_pairs(_screen(), limit=1).height == 1


def test_evidence_of_flagged_pairs_only():
    df = collusion_dash.prep_evidence(_screen())
    assert rows(df, "rank", "player_a", "player_b", "hand_id", "event", "why") == [
        (1, "pA", "pB", "H0", 10, "pB won on pA's 5m"),
        (1, "pA", "pB", "H1", 11, "pB won on pA's 5m"),
    ]


def _features(hands: int, seed: int, feed: float) -> pl.DataFrame:
    """Pair features, four players a hand, A feeding B at an extra rate ``feed`` (as in test_audit)."""
    rng = np.random.default_rng(seed)
    out = []
    for h in range(hands):
        for a, pa_ in enumerate("ABCD"):
            for x, px in enumerate("ABCD"):
                if a == x:
                    continue
                exposure = int(rng.integers(8, 16))
                rate = 0.02 + (feed if {pa_, px} == {"A", "B"} else 0.0)
                win = int(rng.random() < rate * exposure / 10)
                out.append(
                    {"hand_id": f"h{h}", "player_a": pa_, "player_x": px, "seat_a": a, "seat_x": x,
                     "exposure": exposure, "feed_win": win, "feed_call": int(rng.random() < 0.05),
                     "could_feed": win, "chosen_danger": win, "soft_pass": 0, "channel": int(rng.random() < 0.03),
                     "base_feed_win": 0.002 * exposure, "base_feed_call": 0.005 * exposure,
                     "base_could_feed": 0.002 * exposure, "base_chosen_danger": 0.002 * exposure,
                     "base_soft_pass": 0.0}
                )  # fmt: skip
    return pl.DataFrame(out)


def test_screen_of_a_feeding_pair_falls_back_and_flags_it():
    screen = collusion_dash.Screen.of(collusion_screen(_features(300, 1, feed=0.08), min_hands=500, fallback=True))
    assert (screen.requested, screen.min_hands) == (500, 100)  # every pair shared 300 hands
    assert screen.shared["shared_hands"].to_list() == [300] * 6 and screen.reaching == 6
    top = collusion_dash.prep_top_pairs(screen)
    assert rows(top.head(1), "player_a", "player_b", "flagged") == [("A", "B", True)]
    assert top["score"][0] >= top["critical"][0]
    matrix = collusion_dash.prep_pair_matrix(screen)
    assert matrix.filter(pl.col("status") == "flagged")["player_a"].to_list() == ["A"]
    assert collusion_dash.prep_evidence(screen).height == 0  # no connection: no hands to list


# ---------------------------------------------------------------------------------------------- their plots
def _audit_frames(result, con) -> list:
    return [
        (audit_dash.plot_money_by_code, audit_dash.prep_money_by_code(result)),
        (audit_dash.plot_findings_by_month, audit_dash.prep_findings_by_month(con, result)),
        (audit_dash.plot_money_by_player, audit_dash.prep_money_by_player(result)),
    ]


def _collusion_frames(screen) -> list:
    return [
        (collusion_dash.plot_pair_matrix, collusion_dash.prep_pair_matrix(screen)),
        (collusion_dash.plot_top_pairs, collusion_dash.prep_top_pairs(screen)),
    ]


def test_audit_and_collusion_plots_without_a_cjk_font(con, findings):
    latin = charts.Fonts(cjk_family=None)
    for plot, df in [*_audit_frames(findings, con), *_collusion_frames(_screen())]:
        texts = _draw(plot, df, latin)
        joined = "\n".join(texts)
        assert not CJK.search(joined), (plot.__name__, CJK.findall(joined))
        assert re.search(r"n ?= ?[\d,]+", joined), f"{plot.__name__}: the sample size is shown"
        spec = next(c for c in (*audit_dash.CHARTS, *collusion_dash.CHARTS) if c.plot is plot)
        assert charts.render(plot, df, size=spec.size(df), choice=latin).startswith(b"\x89PNG")
    matrix = _draw(collusion_dash.plot_pair_matrix, collusion_dash.prep_pair_matrix(_screen()), latin)
    assert "4.0\n300" in matrix  # a cell: score above, shared hands below
    assert any("flagged (q" in t for t in matrix) and any("fewer than 100 shared hands" in t for t in matrix)
    top = _draw(collusion_dash.plot_top_pairs, collusion_dash.prep_top_pairs(_screen()), latin)
    assert "pA & pB (n=300)" in top and "p=3.2e-05, q=0.001" in top


def test_audit_and_collusion_plots_when_there_is_nothing(empty_con, con):
    nothing = audit(empty_con)
    screened_nothing = collusion_dash.screen_pairs(con)
    for plot, df in [*_audit_frames(nothing, empty_con), *_collusion_frames(screened_nothing)]:
        texts = _draw(plot, df, charts.Fonts(cjk_family=None))
        assert any(t.startswith(("no ", "no:")) for t in texts), plot.__name__  # says what there is none of
        assert charts.render(plot, df, choice=charts.Fonts(cjk_family=None)).startswith(b"\x89PNG")


def test_a_tall_chart_shows_its_scale_at_the_top_as_well() -> None:
    """Issue 40: the deals chart, 1,232 px tall, had its axis at the bottom only. A chart taller than
    AXIS_AT_TOP_IN shows the x tick labels at both ends; a short one at the bottom only."""
    from dashboards import deals

    drawn = []

    def plot(df: pl.DataFrame, ax) -> None:
        deals.plot_players(df, ax)
        drawn.append(ax)

    rows = pl.DataFrame(
        {
            "player": [f"p{k:02d}" for k in range(30)],
            "hands": [300] * 30,
            "mean": [2.0 + k / 100 for k in range(30)],
            "fair": [2.1] * 30,
            "z": [-1.0] * 30,
            "flagged": [k == 0 for k in range(30)],
        }
    )
    spec = deals.CHARTS[0]
    assert spec.size(rows)[1] > charts.AXIS_AT_TOP_IN > spec.size(rows.head(5))[1]
    for df, top in ((rows, True), (rows.head(5), False)):
        charts.render(plot, df, size=spec.size(df), choice=charts.Fonts(cjk_family=None))
        ticks = [t for t in drawn[-1].xaxis.get_major_ticks() if t.label1.get_text()]
        assert ticks and all(t.label1.get_visible() for t in ticks)
        assert all(t.label2.get_visible() == top for t in ticks), top
