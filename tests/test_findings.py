"""What needs attention (dashboards/findings.py), the players' pages' data (dashboards/player.py's every-player
functions) and the inline SVG intervals, on the tiny warehouse of test_dashboards (four hands, counted by hand
in its docstring) and on base counts small enough to follow with a pencil."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import polars as pl
import pytest
from test_dashboards import tiny_warehouse

from dashboards import collusion as collusion_dash
from dashboards import findings, player, quality
from pipeline.analytics import queries
from pipeline.analytics.levels import NEEDS
from pipeline.analytics.stats import normal_sf
from pipeline.audit.anticipation import combine
from pipeline.audit.assist import Assist, Evidence
from pipeline.audit.collusion import SIGNALS, PairResult
from pipeline.audit.information import InfoResult
from pipeline.audit.scoring import audit
from pipeline.audit.tallies import StoredScreen
from pipeline.ingest.warehouse import Warehouse
from pipeline.report import svg

Z95 = 1.959963984540054


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    return queries.connect(tiny_warehouse(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(scope="module")
def empty_con(tmp_path_factory):
    root = tmp_path_factory.mktemp("empty")
    Warehouse(root).open().build_catalogue()
    return queries.connect(root)


# ---------------------------------------------------------------------------------------------- unusual results
def _base(rows: list[tuple[str, int, float, float]]) -> pl.DataFrame:
    """Base counts of players with ``n`` hands, mean ``m`` and per-hand variance ``var``: the sum of squares that
    gives them back exactly, sq = (n − 1)·var + n·m²."""
    return pl.DataFrame(
        [
            {"player": p, "hands": n, "delta_sum": round(n * m), "delta_sq": round((n - 1) * var + n * m * m)}
            for p, n, m, var in rows
        ]
    )


def test_random_effects_by_hand():
    # equal variances 1: fixed mean 0, Q = Σ m² = 2 on 3 df: no spread beyond chance
    assert findings.random_effects(np.array([-1.0, 0.0, 1.0, 0.0]), np.ones(4)) == (0.0, 0.0, 0.25)
    mu, tau2, var_mu = findings.random_effects(np.array([-3.0, -1.0, 1.0, 3.0]), np.ones(4))
    assert mu == 0.0 and math.isclose(tau2, 17 / 3) and math.isclose(var_mu, (1 + 17 / 3) / 4)


def test_unusual_results_by_hand():
    """a, b, c, d: 100 hands each, per-hand variance 100 (a mean's variance 1), means −1, 0, 1, 0; x the same
    but +5; y only 10 hands (listed, not tested).

    x against a–d: μ = 0, τ² = max(0, (2 − 3)/3) = 0, var(μ) = 1/4: z = 5 / √1.25 = 4.472, p = 7.7e-6; five
    players tested, BY: q = p·5·c(5) with c(5) = 137/60. a against b, c, d, x (means 0, 1, 0, 5): fixed mean
    1.5, Q = 17, τ² = 14/3, μ = 1.5, var(μ) = (1 + 14/3)/4: z = −2.5 / √(14/3 + 1 + 17/12)."""
    df = findings.prep_unusual_results(
        _base(
            [
                ("a", 100, -1, 100),
                ("b", 100, 0, 100),
                ("c", 100, 1, 100),
                ("d", 100, 0, 100),
                ("x", 100, 5, 100),
                ("y", 10, 3, 5),
            ]
        )
    )
    assert df["player"].to_list()[0] == "x" and df["player"].to_list()[-1] == "y"
    x = df.row(0, named=True)
    z = 5 / math.sqrt(1.25)
    assert x["tested"] and x["flagged"] and x["net"] == 500 and x["per_hand"] == 5.0 and x["se"] == 1.0
    assert x["expected"] == 0.0 and x["spread"] == 0.0 and math.isclose(x["z"], z)
    assert math.isclose(x["p"], 2 * normal_sf(z)) and math.isclose(x["q"], x["p"] * 5 * 137 / 60)
    assert math.isclose(x["low"], -Z95 * math.sqrt(1.25)) and math.isclose(x["high"], Z95 * math.sqrt(1.25))
    a = df.filter(pl.col("player") == "a").row(0, named=True)
    assert math.isclose(a["expected"], 1.5) and math.isclose(a["spread"], math.sqrt(14 / 3))
    assert math.isclose(a["z"], -2.5 / math.sqrt(14 / 3 + 1 + (1 + 14 / 3) / 4)) and not a["flagged"]
    y = df.filter(pl.col("player") == "y").row(0, named=True)
    assert not y["tested"] and y["z"] is None and y["q"] is None and not y["flagged"] and y["hands"] == 10
    assert df["min_hands"][0] == findings.MIN_HANDS


def test_skill_is_in_the_reference():
    """Players who truly differ (means −3 … +3 with tiny noise) are within each other's range: the best is
    not unusual, only one far beyond the room's spread is."""
    rows = [(f"p{i}", 1000, m, 100) for i, m in enumerate((-3, -2, -1, 0, 1, 2, 3))]
    assert not findings.prep_unusual_results(_base(rows))["flagged"].any()
    flagged = findings.prep_unusual_results(_base([*rows, ("far", 1000, 15, 100)])).filter(pl.col("flagged"))
    assert flagged["player"].to_list() == ["far"]


def test_unusual_results_need_three_other_tested_players():
    df = findings.prep_unusual_results(_base([("a", 200, 1, 10), ("b", 200, 0, 10), ("c", 200, 9, 10)]))
    assert not df["tested"].any() and df["q"].null_count() == 3


def test_unusual_results_on_the_tiny_warehouse(con):
    base = queries.fold(queries.player_base_levels(con), NEEDS["net_points_per_hand"])
    df = findings.prep_unusual_results(base, min_hands=1)
    # pA: H1 +3, H2 −1, H3 +2 (H4 stopped: not counted): variance (14 − 3·(4/3)²)/2 = 13/3, se² = 13/9.
    # pE sat one hand: no variance, not tested.
    pa = df.filter(pl.col("player") == "pA").row(0, named=True)
    assert (pa["hands"], pa["net"], pa["tested"]) == (3, 4, True) and math.isclose(pa["se"], math.sqrt(13 / 9))
    assert not df.filter(pl.col("player") == "pE")["tested"][0]


# ---------------------------------------------------------------------------------------------- findings
SIGNAL = {s: {"observed": 3.0, "expected": 1.5, "ratio_shrunk": 1.0, "z": 2.5} for s in SIGNALS}


def _pair(a: str, b: str, q: float, flagged: bool) -> PairResult:
    return PairResult((a, b), 300, 5.0 if flagged else 0.3, q / 10, q, flagged, SIGNAL, {"ratio": 1.0}, [])


def _screen() -> collusion_dash.Screen:
    """pA & pB and pB & pC flagged (a team of three); pA & pD screened, not flagged."""
    pairs = (_pair("pA", "pB", 0.0001, True), _pair("pB", "pC", 0.01, True), _pair("pA", "pD", 1.0, False))
    shared = pl.DataFrame(
        {"player_a": ["pA", "pB", "pA"], "player_b": ["pB", "pC", "pD"], "shared_hands": [300, 300, 300]}
    )
    return collusion_dash.Screen(200, 200, 0.05, shared, pairs)


INFO = combine(
    [InfoResult("pD", 300, 4000, 0, 60.0, 1e-9, 2e-8, True), InfoResult("pA", 300, 4000, 55, 60.0, 0.3, 1.0, False)],
    [],
)


def _unusual() -> pl.DataFrame:
    """pE outside the range (z +4), pA within it."""
    rows = [
        {"player": "pE", "hands": 500, "net": 2500, "per_hand": 5.0, "se": 0.5, "expected": 0.0, "spread": 0.5,
         "low": -1.6, "high": 1.6, "z": 4.0, "p": 6e-5, "q": 0.001, "tested": True, "flagged": True},
        {"player": "pA", "hands": 500, "net": 0, "per_hand": 0.0, "se": 0.5, "expected": 0.0, "spread": 0.5,
         "low": -1.6, "high": 1.6, "z": 0.0, "p": 1.0, "q": 1.0, "tested": True, "flagged": False},
    ]  # fmt: skip
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def found(con) -> pl.DataFrame:
    screen = _screen()
    return findings.prep_findings(
        pairs=screen.pairs,
        pair_fdr=screen.fdr,
        info=INFO,
        info_fdr=0.05,
        audit=audit(con),
        counts=queries.run(con, "warehouse_counts").row(0, named=True),
        issues=quality.prep_issues_by_code(con),
        rejects=quality.prep_rejects_by_code(con),
        unusual=_unusual(),
        page_of=lambda p: None if p == "pC" else f"player-{p}.html",
    )


def test_findings_of_the_tiny_warehouse_by_hand(found):
    """The team, its two pairs (best q first), the information cheat, the audit's three errors by money (the
    TURN_ORDER of H4 prices its hand's +10; the warning SESSION_HAND_GAP, the audit's third row, is not an error),
    the unusual result, 2 invalid records of 4 (H4 stopped), 3 rejected lines."""
    got = found.select("rank", "severity", "kind", "label", "subject", "money", "evidence").rows()
    assert got == [
        (1, "high", "team", "team", "pA, pB, pC", None, "collusion.html#team-1"),
        (2, "high", "pair", "colluding pair?", "pA & pB", None, "collusion.html#pair-1"),
        (3, "high", "pair", "colluding pair?", "pB & pC", None, "collusion.html#pair-2"),
        (4, "high", "information", "sees other hands?", "pD", None, "information.html#info-1-hands"),
        (5, "medium", "scoring", "rule violation", "hand H4", 10, "audit.html#finding-1"),
        (6, "medium", "scoring", "scoring error", "hand H1", 4, "audit.html#finding-2"),
        (7, "medium", "scoring", "scoring error", "hand H1", 2, "audit.html#finding-4"),
        (8, "medium", "results", "unusual result", "pE", None, "player-pE.html#results"),
        (9, "low", "invalid", "invalid records", "2 of 4 stored records", None, "quality.html#issues"),
        (10, "low", "rejects", "rejected lines", "3 input lines", None, "quality.html#rejects"),
    ]
    rows = {r["rank"]: r for r in found.iter_rows(named=True)}
    assert rows[1]["players"] == ["pA", "pB", "pC"] and rows[1]["q"] == 0.0001
    assert "2 of their 3 pairs flagged" in rows[1]["detail"]
    assert rows[2]["detail"].startswith(
        "the collusion screen flags the pair over 300 shared hands: score 5.0, q < 0.001"
    )
    assert "0 dangerous discards by choice in 4,000 judged, 60.0 expected" in rows[4]["detail"]
    assert rows[5]["players"] == ["pB"] and rows[5]["detail"].startswith("TURN_ORDER at event 3 (pB's seat): ")
    assert rows[6]["players"] == ["pC"]
    assert "net +5.00 points per hand over 500 hands, outside the -1.60 to +1.60" in rows[8]["detail"]
    assert rows[9]["detail"] == (
        "invalid (50.0%); 1 stopped before the end and are left out of the statistics. "
        "Errors by code: SETTLE_AMOUNT 2, TURN_ORDER 1"
    )
    assert rows[10]["detail"].endswith("By code: SCHEMA_JSON 2, INGEST_CONFLICT 1")


def test_a_player_without_a_page_links_the_directory(con):
    unusual = _unusual().with_columns(pl.lit("pC").alias("player"))
    rows = findings._results(unusual, lambda p: None)
    assert rows[0]["evidence"] == "players.html" and rows[1:] == []  # pA's row is not flagged


def test_scoring_rows_beyond_the_audit_table_link_the_audit(con):
    rows = findings._scoring(audit(con), top=5)
    assert [r["evidence"] for r in rows] == ["audit.html#finding-1", "audit.html#finding-2", "audit.html#finding-4"]
    assert findings._scoring(audit(con), top=0) == []


def test_nothing_needs_attention(empty_con):
    result = audit(empty_con)
    df = findings.prep_findings(
        pairs=(),
        pair_fdr=0.05,
        info=[],
        info_fdr=0.05,
        audit=result,
        counts=queries.run(empty_con, "warehouse_counts").row(0, named=True),
        issues=quality.prep_issues_by_code(empty_con),
        rejects=quality.prep_rejects_by_code(empty_con),
        unusual=findings.prep_unusual_results(queries.player_base(empty_con)),
        page_of=lambda p: None,
    )
    assert df.height == 0 and df.schema == pl.Schema(findings.SCHEMA)
    assert findings.findings_text(df.height) == "Nothing needs attention." and findings.severity_of(df) is None
    assert findings.findings_text(1) == "1 finding needs attention."
    assert findings.findings_text(3) == "3 findings need attention."


def test_a_players_findings(con, found):
    result = audit(con)
    seat = result.findings.filter(pl.col("player") == "pB")
    mine = findings.prep_player_findings(found, seat, "pB")
    assert mine.select("kind", "subject", "evidence").rows() == [
        ("team", "pA, pB, pC", "collusion.html#team-1"),
        ("pair", "pA & pB", "collusion.html#pair-1"),
        ("pair", "pB & pC", "collusion.html#pair-2"),
        ("scoring", "1 audit finding", "#scoring"),  # H4's TURN_ORDER on pB's seat, 10 points
    ]
    assert mine["detail"][3] == "on the player's seat in 1 hand (1 errors), 10 points at stake"
    assert mine["label"][3] == "audit findings" and mine["severity"].to_list() == ["high"] * 3 + ["medium"]
    assert findings.severity_of(mine) == "high"
    pe = findings.prep_player_findings(found, result.findings.filter(pl.col("player") == "pE"), "pE")
    assert pe["kind"].to_list() == ["results"] and findings.severity_of(pe) == "medium"
    nobody = findings.prep_player_findings(found, result.findings.head(0), "nobody")
    assert nobody.height == 0 and findings.severity_of(nobody) is None


def test_player_flags(con, found):
    flags = findings.prep_player_flags(findings.with_cases(found, {}), audit(con), _unusual())
    got = {r["player"]: r for r in flags.iter_rows(named=True)}
    assert set(got) == {"pA", "pE"}  # the players of the unusual frame: every player with a replayed hand
    assert got["pA"]["flags"] == ["team", "colluding pair?"] and got["pA"]["severity"] == "high"
    assert got["pA"]["rank"] == 3 and got["pA"]["audit_findings"] == 0 and got["pA"]["z"] == 0.0
    assert got["pE"]["flags"] == ["unusual result"] and got["pE"]["rank"] == 2

    # a dismissed finding gives no badge (the directory agrees with the first screen); the others stay
    standing = findings.with_cases(found, {})
    team = (pl.col("kind") == "team") & pl.col("players").list.contains("pA")
    dismissed = standing.with_columns(pl.when(team).then(pl.lit("dismissed")).otherwise("status").alias("status"))
    got = {r["player"]: r for r in findings.prep_player_flags(dismissed, audit(con), _unusual()).iter_rows(named=True)}
    assert got["pA"]["flags"] == ["colluding pair?"] and got["pA"]["severity"] == "high"
    assert got["pE"]["flags"] == ["unusual result"]


# ---------------------------------------------------------------------------------------------- every player
PLAYERS = ("pA", "pB", "pC", "pD", "pE")


def test_every_player_at_once_is_each_player_alone(con):
    every = player.prep_every_player(con)
    for pid in PLAYERS:
        alone = player.prep_player_table(con, pid)
        assert player.metrics_of(every, pid).equals(alone), pid
    with pytest.raises(player.UnknownPlayer):
        player.metrics_of(every, "nobody")


def test_every_players_levels_and_fan_at_once(con):
    levels = player.prep_every_player_levels(con)
    for pid in PLAYERS:
        mine = {
            r["level"]: {"stored": r["stored"], "replayed": r["replayed"]}
            for r in levels.filter(pl.col("player") == pid).iter_rows(named=True)
        }
        assert mine == queries.hands_by_level(con, pid), pid
    fan = player.prep_every_player_fan(con)
    for pid in PLAYERS:
        alone = player.prep_player_fan(con, pid).filter((pl.col("who") == player.PLAYER) & (pl.col("wins") > 0))
        mine = fan.filter(pl.col("player") == pid)
        assert mine.select("fan", "wins", "share", "n").rows() == alone.select("fan", "wins", "share", "n").rows()
    everyone = fan.filter(pl.col("player").is_null())
    assert everyone.select("fan", "wins").rows() == [(1, 2), (2, 1), (3, 1)] and everyone["n"][0] == 4


def test_directory_by_hand(con):
    d = player.prep_directory(player.prep_every_player(con))
    assert d["player"].to_list() == list(PLAYERS)
    pa = d.row(0, named=True)
    # pA: H1 (won, +3), H2 (dealt in, −1), H3 (+2); H4 stopped
    assert (pa["hands"], pa["wins"], pa["deal_in_hands"], pa["net"]) == (3, 1, 1, 4)
    assert math.isclose(pa["win_rate"], 1 / 3) and math.isclose(pa["per_hand"], 4 / 3)
    assert pa["win_low"] < 1 / 3 < pa["win_high"] and pa["per_hand_low"] < 4 / 3 < pa["per_hand_high"]
    pe = d.row(4, named=True)
    assert (pe["hands"], pe["net"], pe["wins"]) == (1, -2, 0)


def test_directory_with_chinese_ids(tmp_path):
    names = {"pA": "张三", "pB": "李四", "pC": "王五", "pD": "赵六", "pE": "钱七"}
    con = queries.connect(tiny_warehouse(tmp_path / "zh", rename=names))
    d = player.prep_directory(player.prep_every_player(con))
    assert set(d["player"].to_list()) == set(names.values())
    assert d.filter(pl.col("player") == "张三")["net"][0] == 4


# ---------------------------------------------------------------------------------------------- inline SVG
def test_interval_strip_places_the_points_on_one_axis():
    strip = svg.interval_strip((0.5, 0.4, 0.6), (0.3, 0.25, 0.35), share=True, width=108)
    # domain 0.25..0.6 padded by 10%: 0.215..0.635; x = 4 + (v − 0.215) · 100 / 0.42
    low, high = svg.domain([(0.5, 0.4, 0.6), (0.3, 0.25, 0.35)], share=True)
    assert math.isclose(low, 0.215) and math.isclose(high, 0.635)
    x = lambda v: f"{4 + (v - 0.215) * 100 / 0.42:.1f}"  # noqa: E731
    assert f'<circle cx="{x(0.5)}" cy="7" r="3.2" fill="{svg.SUBJECT}"/>' in strip
    assert f'<line x1="{x(0.25)}" y1="15" x2="{x(0.35)}" y2="15"' in strip
    assert "<line x1" in strip and 'stroke="#999999"' not in strip  # no zero inside the axis


def test_interval_strip_marks_zero_and_skips_what_is_unknown():
    strip = svg.interval_strip((-1.0, -2.0, 0.5), (None, None, None), share=False)
    assert 'stroke="#999999"' in strip and strip.count("<circle") == 1 and strip.count("<line") == 2
    assert svg.domain([], share=False) == (-0.1, 1.1) and svg.domain([(2.0, None, None)], share=False) == (0.8, 3.2)


def test_share_bars():
    bars = svg.share_bars(0.25, 0.5, width=200)
    assert 'width="50.0"' in bars and 'width="100.0"' in bars and bars.count("<rect") == 2
    capped = svg.share_bars(float("nan"), 2.0, width=10)  # no bar for nan, the other capped at the width
    assert capped.count("<rect") == 1 and 'width="10.0"' in capped


# ---------------------------------------------------------------------------------------------- pairs table
def test_pairs_table_grows_when_the_heat_map_cannot_show_everyone():
    ids = [f"p{i:02d}" for i in range(collusion_dash.MAX_PLAYERS + 1)]
    shared = pl.DataFrame({"player_a": ids[:-1], "player_b": ids[1:], "shared_hands": [300] * (len(ids) - 1)})
    big = collusion_dash.Screen(200, 200, 0.05, shared, ())
    assert collusion_dash.pairs_shown(big) == collusion_dash.TOP_PAIRS_LARGE
    small = collusion_dash.Screen(200, 200, 0.05, shared.head(3), ())
    assert collusion_dash.pairs_shown(small) == collusion_dash.TOP_PAIRS
    many = tuple(_pair(f"a{i}", f"b{i}", 0.001, True) for i in range(20))
    assert collusion_dash.pairs_shown(collusion_dash.Screen(200, 200, 0.05, shared.head(3), many)) == 20


def _assist_screen(reviewed: int = 300) -> StoredScreen:
    """pF flagged (two telling decisions in one hand, one in another), pA tested and not flagged."""
    ev = [
        Evidence("H7", 12, "turn", "3m", 0.75, 1.0, 0.4),
        Evidence("H7", 30, "turn", "5p", 0.8, 0.99, 0.5),
        Evidence("H9", None, "void", "void s", 0.7, 0.98, 0.5),
    ]
    flagged = Assist("pF", 300, 9000, 7000, 2500, 1400.0, 0.93, 0.81, 0.9, 4.2, 2e-6, 0.004, True, tuple(ev), 0.06)
    honest = Assist("pA", 300, 9000, 7000, 2500, 1400.0, 0.82, 0.81, 0.85, 0.3, 0.4, 1.0, False, (), 0.06)
    return StoredScreen([flagged, honest], 0.05, reviewed, 300)


def test_the_engine_assistance_screen_of_the_stored_counts_is_a_finding(con):
    """A flagged player of the engine-assistance screen (of what xuezhan review stored) is a high finding after
    the information and deal screens', before the money: its figures, its telling decisions' hands (for a case's
    pack), its page's decisions; how much of the warehouse was reviewed, when not all of it."""
    screen = _screen()
    df = findings.prep_findings(
        pairs=screen.pairs,
        pair_fdr=screen.fdr,
        info=INFO,
        info_fdr=0.05,
        assist=_assist_screen(),
        audit=audit(con),
        counts=queries.run(con, "warehouse_counts").row(0, named=True),
        issues=quality.prep_issues_by_code(con),
        rejects=quality.prep_rejects_by_code(con),
        unusual=_unusual(),
        page_of=lambda p: f"player-{p}.html",
    )
    kinds = df["kind"].to_list()
    assert kinds.count("assist") == 1 and kinds.index("assist") == kinds.index("information") + 1
    row = df.row(kinds.index("assist"), named=True)
    assert (row["severity"], row["label"], row["key"], row["players"]) == (
        "high",
        "follows an engine?",
        "assist:pF",
        ["pF"],
    )
    assert row["evidence"] == "player-pF.html#decisions" and row["hands"] == ["H7", "H9"] and row["n"] == 2500
    assert row["q"] == 0.004 and "0.930 of its weighted ambiguous decisions (2,500 in 300 hands)" in row["detail"]
    assert "agree on 0.810: z 4.2, p 2.0e-06" in row["detail"] and "not proof" in row["detail"]
    assert "reviewable hands reviewed" not in row["detail"]
    part = findings._assist(_assist_screen(reviewed=120), lambda p: None)
    assert part[0]["evidence"] == "players.html" and "120 of the 300 reviewable hands reviewed" in part[0]["detail"]
    assert findings._assist(None, lambda p: None) == []


def test_a_players_page_shows_its_engine_assistance_figures_and_a_flagged_ones_decisions():
    from dashboards.pages.players import assist_part

    screen = _assist_screen()
    flagged, honest = screen.results
    page = assist_part(flagged, screen)
    assert "of the 300 reviewed hands" in page and "agreed with the policy's first choice on 0.930" in page
    assert "<b>flagged</b>: a reason to look, not proof" in page and "z +4.2, p 2.0e-06, q 0.004" in page
    assert page.count("<li>") == 3 and "xuezhan replay H7 --warehouse WH --review" in page and "the deal (void)" in page
    plain = assist_part(honest, screen)
    assert "not flagged" in plain and "<li>" not in plain and "Alone, it would be flagged 0.060 above" in plain
    untested = dataclasses.replace(honest, p=None, z=None, q=None, needed=None)
    assert "not tested (2,500 tested decisions" in assist_part(untested, screen)
    assert assist_part(None, screen) == "" and assist_part(flagged, None) == ""


def test_the_think_time_screen_of_the_stored_times_is_a_finding():
    """A relay the think-time screen flags (of the timed hands xuezhan review stored) is a high finding after the
    engine-assistance ones: its r against the room's, linked to its page; how many timed hands were reviewed."""
    from pipeline.audit.think import ThinkTime

    relay = ThinkTime("pR", 900, 1200.0, 0.02, 0.41, -6.1, 5e-10, 1e-8, True, 0.12)
    honest = ThinkTime("pA", 900, 2500.0, 0.40, 0.41, -0.1, 0.46, 1.0, False, 0.12)
    screen = dataclasses.replace(_assist_screen(), think=[relay, honest], timed=80, timed_all=100)
    rows = findings._think(screen, lambda p: f"player-{p}.html")
    assert [(r["kind"], r["key"], r["players"], r["n"], r["q"]) for r in rows] == [
        ("think", "think:pR", ["pR"], 900, 1e-8)
    ]
    assert "r 0.02 over 900 timed decisions (median 1,200 ms), where the room's players do at 0.41" in rows[0]["detail"]
    assert "80 of the 100 hands with times reviewed" in rows[0]["detail"] and "not proof" in rows[0]["detail"]
    assert rows[0]["evidence"] == "player-pR.html#decisions" and findings._think(None, lambda p: None) == []
    df = findings._frame([*findings._assist(screen, lambda p: None), *rows])
    assert df["kind"].to_list() == ["assist", "think"] and df["label"].to_list()[1] == "relays or asks a bot?"


def test_a_players_page_shows_its_think_time_figures():
    from dashboards.pages.players import think_part
    from pipeline.audit.think import ThinkTime

    screen = dataclasses.replace(_assist_screen(), timed=80, timed_all=100)
    relay = ThinkTime("pR", 900, 1200.0, 0.02, 0.41, -6.1, 5e-10, 1e-8, True, 0.12)
    page = think_part(relay, screen)
    assert 'id="think"' in page and "of the 80 reviewed hands with times" in page
    assert "at r 0.02 over 900 timed decisions (median 1,200 ms), the room's players at 0.41" in page
    assert "z -6.1, p 5.0e-10, q 0.000: <b>flagged</b>" in page
    honest = ThinkTime("pA", 900, 2500.0, 0.40, 0.41, -0.1, 0.46, 1.0, False, 0.12, 0.91)
    assert "not flagged (it would be at r 0.12 or less, or asking a bot on 91% of its decisions or more" in think_part(
        honest, screen
    )
    there = think_part(dataclasses.replace(honest, ask_share=0.0), screen)  # at its flag_r already: no share
    assert "not flagged (it would be at r 0.12 or less)" in there and "asking" not in there
    slow = dataclasses.replace(honest, flag_r=-0.02, ask_share=None)
    assert "at r -0.02 or less; not even asking a bot on every decision would" in think_part(slow, screen)
    few = ThinkTime("pS", 12, 900.0, None, 0.41, None, None, None, False, None)
    assert "12 timed decisions (median 900 ms), not tested (a player needs 30" in think_part(few, screen)
    assert think_part(None, screen) == "" and think_part(relay, None) == ""
