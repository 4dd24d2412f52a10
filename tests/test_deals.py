"""Stacked deals (issue 22 item 2): the exact null of a fair deal's starting shanten against every hand
enumerated and against random deals, the exact tail of a sum, the injection (``simulate --inject stack=N:I``)
keeping records valid, the ingest's columns, and the screen on a simulated room with a planted stacker."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest
from run_orders import out_of_order, shuffled_warehouse
from typer.testing import CliRunner

from cli import app
from pipeline.analytics.queries import connect
from pipeline.audit.deal_null import (
    LOWEST,
    generate,
    key,
    load,
    lower_tail,
    shanten_counts,
    suit_classes,
    suited_counts,
)
from pipeline.audit.deals import DealResult, NoDealScores, deal_screen, group_test, screen_deals
from pipeline.evaluate import DealOutcome, deals_grid, run_deals
from pipeline.game.start import deal_hands
from pipeline.ingest.run import ingest
from pipeline.rules.hand import deal_shanten
from pipeline.rules.ruleset import load_ruleset
from pipeline.rules.tiles import KIND_BY_NAME, counts_of, full_set, parse_tiles
from pipeline.simulate.inject import InjectSpec, SpecError, stack_deals
from pipeline.simulate.tables import SimConfig, write
from pipeline.sql import DuckDBModels
from pipeline.validate import validate

runner = CliRunner()


# ---------------------------------------------------------------------------------------------- the null
def _brute_force(suits: int, size: int) -> dict[int, int]:
    """Every hand of ``size`` tiles from ``suits`` suits, weighted by the tile subsets it stands for."""
    out: dict[int, int] = {}
    first = 0 if suits == 3 else 9  # two suits: p and s
    for combo in itertools.combinations_with_replacement(range(first, 27), size):
        counts = [0] * 27
        for k in combo:
            counts[k] += 1
        if max(counts) > 4:
            continue
        weight = 1
        for c in counts:
            weight *= comb(4, c)
        value = deal_shanten(counts, choose_void=suits == 3)
        out[value] = out.get(value, 0) + weight
    return dict(sorted(out.items()))


@pytest.mark.parametrize(("suits", "size"), [(2, 4), (2, 5), (3, 4), (3, 5)])
def test_the_counts_by_shape_equal_every_hand_enumerated(suits: int, size: int) -> None:
    counts = shanten_counts(suits, size, suit_classes(size))
    assert counts == _brute_force(suits, size)
    assert sum(counts.values()) == comb(36 * suits, size)


def test_the_generator_regenerates_part_of_the_cached_tables() -> None:
    """The generator run on small hands gives what the enumeration does, and its suited tables are the cache's."""
    small = generate(sizes=(5,))
    assert small["shanten"]["3x5"] == {str(k): v for k, v in _brute_force(3, 5).items()}
    cached = load()
    for size in (13, 14):
        assert cached.suited[key(3, size)] == suited_counts(size)
        for suits in (2, 3):
            assert sum(cached.shanten[key(suits, size)].values()) == comb(36 * suits, size)


@pytest.mark.parametrize(("suits", "size"), [(3, 13), (3, 14), (2, 13), (2, 14)])
def test_the_cached_null_matches_random_deals(suits: int, size: int) -> None:
    """4,000 random deals of each table shape against the exact table: every value within 4.5 standard errors."""
    rng = random.Random(suits * 100 + size)
    wall = full_set("mps" if suits == 3 else "ps")
    n = 4000
    seen: dict[int, int] = {}
    for _ in range(n):
        v = deal_shanten(counts_of(rng.sample(wall, size)), choose_void=suits == 3)
        seen[v] = seen.get(v, 0) + 1
    pmf = load().pmf(key(suits, size))
    assert set(seen) <= set(range(LOWEST, LOWEST + len(pmf)))
    for i, p in enumerate(pmf):
        observed = seen.get(i + LOWEST, 0) / n
        assert abs(observed - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-9, (i + LOWEST, observed, p)


def test_the_tail_of_a_sum_is_the_explicit_convolution() -> None:
    null = load()
    p13, p14 = null.pmf("3x13"), null.pmf("3x14")
    values = np.arange(len(p13)) + LOWEST
    # two hands of 13 and one of 14, summed by brute force
    dist: dict[int, float] = {}
    for (a, pa), (b, pb), (c, pc) in itertools.product(
        zip(values, p13, strict=True),
        zip(values, p13, strict=True),
        zip(np.arange(len(p14)) + LOWEST, p14, strict=True),
    ):
        dist[int(a + b + c)] = dist.get(int(a + b + c), 0.0) + pa * pb * pc
    for s in range(-3, 18):
        expected = sum(p for v, p in dist.items() if v <= s)
        assert lower_tail(null, [("3x13", 2), ("3x14", 1)], s) == pytest.approx(expected, abs=1e-12)
    assert lower_tail(null, [("3x13", 2)], -3) == 0.0


@pytest.mark.parametrize("hands", [[("3x13", 5), ("3x14", 3)], [("3x14", 3), ("3x13", 5)], [("2x13", 4), ("2x14", 2)]])
def test_the_tail_is_exact_far_out_whatever_the_order_of_the_kinds(hands: list[tuple[str, int]]) -> None:
    """Against exact fractions, relative to the tail itself (a tail of 1e-24 must keep its digits): the cuts of
    the sums above the observed one must leave every sum the later kinds can still bring down to it."""
    null = load()
    dist = {0: Fraction(1)}
    for name, n in hands:
        counts = null.shanten[name]
        total = sum(counts.values())
        for _ in range(n):
            step: dict[int, Fraction] = {}
            for a, pa in dist.items():
                for b, c in counts.items():
                    step[a + b] = step.get(a + b, Fraction(0)) + pa * Fraction(c, total)
            dist = step
    for s in range(min(dist) - 1, 3 * sum(n for _, n in hands)):
        expected = float(sum((p for v, p in dist.items() if v <= s), Fraction(0)))
        assert lower_tail(null, hands, s) == pytest.approx(expected, rel=1e-12, abs=0), s


def test_a_large_group_s_tail_is_the_plain_convolution_s() -> None:
    """A group of a player's thousands of hands (the cuts make it fast) against the plain convolution of every
    hand, one at a time, with nothing cut."""
    null = load()
    n13, n14 = 1_500, 400
    plain = np.ones(1)
    for name, n in (("3x13", n13), ("3x14", n14)):
        for _ in range(n):
            plain = np.convolve(plain, null.pmf(name))
    low = LOWEST * (n13 + n14)
    mean = n13 * null.mean("3x13") + n14 * null.mean("3x14")
    for sd in (-12, -6, -3, 0, 2):
        s = int(mean + sd * 0.74 * (n13 + n14) ** 0.5)
        expected = float(plain[: s - low + 1].sum())
        assert lower_tail(null, [("3x13", n13), ("3x14", n14)], s) == pytest.approx(expected, rel=1e-9), sd


def test_the_test_is_valid_under_the_null() -> None:
    """Sums of fair deals drawn from the tables: P(p <= alpha) stays at or below alpha (exact and discrete, so
    conservative), and the 500-hand test's z is centred."""
    null = load()
    rng = np.random.default_rng(3)
    p13 = null.pmf("3x13")
    values = np.arange(len(p13)) + LOWEST
    sums = rng.choice(values, size=(4000, 60), p=p13).sum(axis=1)
    ps = np.array([group_test([("3x13", 60)], int(s), null).p for s in sums])
    for alpha in (0.01, 0.05, 0.2):
        assert (ps <= alpha).mean() <= alpha + 2.6 * np.sqrt(alpha * (1 - alpha) / len(ps))
    assert (ps <= 0.05).mean() > 0.02  # and not uselessly conservative


# ---------------------------------------------------------------------------------------------- the injection
def test_the_spec_reads_stack() -> None:
    spec = InjectSpec.parse("stack=2:0.3")
    assert (spec.stack, spec.stack_intensity, spec.players_needed) == (2, 0.3, 2)
    assert InjectSpec.parse("stack=1").stack_intensity == 0.5
    with pytest.raises(SpecError, match="stack_intensity"):
        InjectSpec.parse("stack=1:1.5")
    with pytest.raises(SpecError, match="negative"):
        InjectSpec.parse("stack=-1:0.5")
    with pytest.raises(SpecError, match="1 per stacked player"):
        InjectSpec.parse("stack=5:0.5,bot=1", players=5)


def test_stacking_keeps_the_wall_and_improves_the_deal() -> None:
    rules = load_ruleset("chengdu")
    better = 0
    for seed in range(300):
        wall = full_set()
        random.Random(seed).shuffle(wall)
        before = list(wall)
        done = stack_deals(wall, seed % 4, random.Random(seed), rules=rules, stacked={1: 1.0})
        assert done == (1,) and sorted(wall) == sorted(before)
        old, new = (deal_hands(w, seed % 4)[1] for w in (before, wall))
        a, b = (deal_shanten(counts_of(h), choose_void=True) for h in (old, new))
        assert b <= a and (b < a) == (wall != before)
        for seat in (0, 2, 3):  # the other seats' deals are untouched
            assert deal_hands(wall, seed % 4)[seat] == deal_hands(before, seed % 4)[seat]
        better += b < a
    assert 0.2 < better / 300 < 0.45  # the better of two: about 31% of stacked deals (the exact tables say)
    wall = full_set("ps")
    random.Random(1).shuffle(wall)
    assert stack_deals(wall, 0, random.Random(2), rules=load_ruleset("sanren_liangfang"), stacked={2: 0.0}) == ()


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, object]]:
    """240 simulated hands, 8 players, one of whom is dealt the better of two deals in every hand; ingested."""
    folder = tmp_path_factory.mktemp("stacked")
    out = folder / "sim.jsonl"
    write(SimConfig(hands=240, seed=21, players=8, inject=InjectSpec.parse("stack=1:1")), out)
    ingest([str(out)], folder / "wh", workers=1)
    return folder / "wh", out, json.loads((folder / "sim.labels.json").read_text())


def test_stacked_records_are_valid_and_labelled(room: tuple[Path, Path, dict[str, object]]) -> None:
    _, out, labels = room
    checked = [validate(json.loads(line)) for line in out.read_text().splitlines()]
    assert len(checked) == 240 and all(v.ok for v in checked)  # a stacked wall is a legal, conserved wall
    stackers = labels["stackers"]
    assert isinstance(stackers, list) and [s["intensity"] for s in stackers] == [1.0]
    stacker = stackers[0]["player"]
    records = {json.loads(line)["hand_id"]: json.loads(line) for line in out.read_text().splitlines()}
    stacked = labels["stacked"]
    assert isinstance(stacked, list)
    sat = {h for h, r in records.items() if stacker in r["players"]}
    assert {s["hand_id"] for s in stacked} == sat  # intensity 1: every hand the stacker plays
    assert all(records[s["hand_id"]]["players"][s["seat"]] == stacker for s in stacked)


def test_a_table_of_three_with_two_suits_is_stacked_and_scored(tmp_path: Path) -> None:
    """sanren_liangfang: three players, 筒 and 条 only. Stacked records validate; the deal scores use the two-suit
    tables (no void to choose, no suited count)."""
    out = tmp_path / "three.jsonl"
    write(SimConfig(hands=24, seed=4, players=6, profile="sanren_liangfang", inject=InjectSpec.parse("stack=1:1")), out)
    assert all(validate(json.loads(line)).ok for line in out.read_text().splitlines())
    ingest([str(out)], tmp_path / "wh", workers=1)
    with connect(tmp_path / "wh") as con:
        rows = con.sql("SELECT count(*), count(deal_shanten), count(deal_suited) FROM player_hands").fetchall()
        assert rows == [(72, 72, 0)]
        every = {"lo": None, "hi": None}  # every hand: no range of ids
        shapes = con.sql(f"SELECT DISTINCT suits, size FROM ({_deal_groups()}) ORDER BY size", params=every).fetchall()
        assert shapes == [(2, 13), (2, 14)]
        assert {r.kind for r in screen_deals(con)} == {"player", "seat", "table", "session"}


def _deal_groups() -> str:
    from pipeline.sql import load_sql

    return load_sql("pipeline.audit", "deal_groups")


def test_a_run_without_stacking_labels_as_before(tmp_path: Path) -> None:
    write(SimConfig(hands=3, seed=1, players=8), tmp_path / "x.jsonl")
    assert "stackers" not in json.loads((tmp_path / "x.labels.json").read_text())


# ---------------------------------------------------------------------------------------------- ingest and screen
def test_ingest_stores_each_seats_deal_scores(room: tuple[Path, Path, dict[str, object]]) -> None:
    warehouse, out, _ = room
    first = json.loads(out.read_text().splitlines()[0])
    hands = deal_hands([KIND_BY_NAME[t] for t in first["wall"]], first["dealer"], 4)
    with connect(warehouse) as con:
        rows = con.sql(
            "SELECT seat, deal_shanten, deal_suited FROM player_hands WHERE hand_id = ? ORDER BY seat",
            params=[first["hand_id"]],
        ).fetchall()
        nulls = con.sql("SELECT count(*) FROM player_hands WHERE deal_shanten IS NULL").fetchall()[0][0]
    assert nulls == 0
    for seat, shanten, suited in rows:
        counts = counts_of(hands[seat])
        assert shanten == deal_shanten(counts, choose_void=True)
        assert suited == len(hands[seat]) - min(sum(counts[9 * s : 9 * s + 9]) for s in range(3))


def test_the_stacker_is_flagged_with_hands_to_replay(room: tuple[Path, Path, dict[str, object]]) -> None:
    warehouse, _, labels = room
    stacker = labels["stackers"][0]["player"]  # type: ignore[index]
    with connect(warehouse) as con:
        results = screen_deals(con)
    players = [r for r in results if r.kind == "player"]
    assert [r.group for r in players if r.flagged] == [stacker]
    top = players[0]
    assert top.z < -3 and top.p is not None and top.p < 1e-3 and len(top.evidence) == 5
    assert all(e["player"] == stacker for e in top.evidence)
    assert [e["shanten"] for e in top.evidence] == sorted(e["shanten"] for e in top.evidence)
    assert all(r.p is not None and r.p > 1e-3 for r in players[1:])
    assert {r.kind for r in results} == {"player", "seat", "table", "session"}
    seats = [r for r in results if r.kind == "seat"]
    assert all(r.p is None for r in seats)  # 8 hands a seat of a simulated table: below min_hands, not tested
    # the evidence replays: the flagged hand's deal is the record's
    hand = top.evidence[0]["hand_id"]
    done = runner.invoke(app, ["replay", hand, "--warehouse", str(warehouse)])
    assert done.exit_code in (0, 1), done.output
    assert hand in done.stdout


def test_each_flagged_groups_evidence_is_its_own_best_deals(room: tuple[Path, Path, dict[str, object]]) -> None:
    """The evidence of every flagged group of a kind comes from one query; each group's hands are its own best
    deals, as a query of that group alone lists them (everything flagged here: fdr 1, every group tested)."""
    warehouse, _, _ = room
    with connect(warehouse) as con:
        results = screen_deals(con, fdr=1.0, min_hands=1, evidence=3)
        dealt = con.sql(
            "SELECT ph.hand_id, ph.seat, ph.player, ph.dealer, ph.deal_shanten::INTEGER AS shanten, "
            "ph.deal_suited::INTEGER AS suited, h.table_id, h.session_id "
            "FROM player_hands ph JOIN hands h USING (hand_id) WHERE ph.deal_shanten IS NOT NULL"
        ).fetchall()
    group_of = {
        "player": lambda r: r[2],
        "seat": lambda r: f"{r[6]} seat {r[1]}",
        "table": lambda r: r[6],
        "session": lambda r: r[7],
    }
    assert all(r.flagged for r in results) and {r.kind for r in results} == set(group_of)
    for r in results:
        mine = sorted(
            (row for row in dealt if group_of[r.kind](row) == r.group), key=lambda row: (row[4], row[0], row[1])
        )
        expected = [
            dict(zip(("hand_id", "seat", "player", "dealer", "shanten", "suited"), row[:6], strict=True))
            for row in mine[:3]
        ]
        assert r.evidence == expected, (r.kind, r.group)


def test_the_report_replays_the_flagged_players_best_deals(
    room: tuple[Path, Path, dict[str, object]], tmp_path: Path
) -> None:
    from dashboards.site import build_report

    warehouse, _, labels = room
    stacker = labels["stackers"][0]["player"]  # type: ignore[index]
    page = (build_report(warehouse, tmp_path / "report", players=[]).parent / "deals.html").read_text()
    assert "1 flagged</b>" in page and f"player {stacker}" in page
    with connect(warehouse) as con:
        top = next(r for r in screen_deals(con) if r.flagged)
    for e in top.evidence:  # each hand is there, replayed from its source line
        assert f'<span class="id">{e["hand_id"]}</span>' in page
    assert page.count("<details>") == 5 and page.count('<div class="replay">') == 5 and "<img " in page
    pre = page.split('<div class="replay">')[1].split("</div>")[0]
    hand = top.evidence[0]
    row = next(line for line in pre.splitlines() if line.startswith(f"{hand['seat']:>4}  {stacker}"))
    dealt = parse_tiles(row.split()[2])  # the deal the wall gave the stacker, in tile notation
    assert len(dealt) == (14 if hand["dealer"] else 13)
    assert deal_shanten(counts_of(dealt), choose_void=True) == hand["shanten"]


def test_the_evidence_hands_are_read_back_in_one_pass_over_their_file(
    room: tuple[Path, Path, dict[str, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's evidence hands of one source file are read back in one pass over it (hand by hand, a
    compressed file was decompressed from its start for each, and a report on 200,000 hands spent over 10 minutes
    on its stacked-deal evidence); each replay is the one ``xuezhan replay`` prints, and a hand the warehouse
    does not hold says so."""
    import dashboards
    from pipeline.analytics import export

    warehouse, out, _ = room
    hands = [json.loads(line)["hand_id"] for line in out.read_text().splitlines()]
    wanted = [hands[200], hands[3], "no-such-hand", hands[120], hands[3]]
    passes: list[list[str]] = []
    real = export.read_lines

    def counted(paths: list[str], *args: object, **kwargs: object) -> object:
        passes.append(list(paths))
        return real(paths, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(export, "read_lines", counted)
    with connect(warehouse) as con:
        replays = dashboards.replays_of(con, wanted)
    assert passes == [[str(out.resolve())]] or passes == [[str(out)]]
    assert list(replays) == [hands[200], hands[3], "no-such-hand", hands[120]]
    assert replays["no-such-hand"] == "hand 'no-such-hand' is not in the warehouse"
    for hand in (hands[3], hands[120], hands[200]):
        done = runner.invoke(app, ["replay", hand, "--warehouse", str(warehouse)])
        assert done.exit_code in (0, 1), done.output
        assert done.stdout.strip().endswith(replays[hand].strip())  # after the line naming its source


def test_the_replay_of_a_record_with_a_wall_shows_what_it_deals(room: tuple[Path, Path, dict[str, object]]) -> None:
    from pipeline.audit.replay import replay_text
    from pipeline.rules.tiles import format_tiles

    _, out, _ = room
    record = json.loads(out.read_text().splitlines()[3])
    text = replay_text(record, validate(record))
    hands = deal_hands([KIND_BY_NAME[t] for t in record["wall"]], record["dealer"], 4)
    for seat, player in enumerate(record["players"]):
        assert f"{seat:>4}  {player:<6}  {format_tiles(hands[seat])}" in text
    short = dict(record, wall=record["wall"][:40])  # too short to deal from: no deal shown, the validator says why
    text = replay_text(short, validate(short))
    assert "SCHEMA_TYPE: wall must hold 72 or 108 tiles" in text
    assert f"   0  {record['players'][0]:<6}  -" in text


def test_the_deals_command(room: tuple[Path, Path, dict[str, object]]) -> None:
    warehouse, _, labels = room
    stacker = labels["stackers"][0]["player"]  # type: ignore[index]
    done = runner.invoke(app, ["deals", "--warehouse", str(warehouse), "--kind", "player", "--top", "2"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    # one unit, named (issue 40): a table's groups count a deal per seat, a player's one a hand
    assert lines[0].startswith("deals: one player's starting tiles in one hand;") and "four a hand" in lines[0]
    assert lines[1] == "player: 8 with at least 20 deals screened (0 with fewer not tested); 1 flagged at FDR 0.05"
    assert lines[2].split()[:2] == ["group", "deals"]
    assert lines[3].startswith(f"  {stacker:<22}") and lines[3].endswith("YES")
    assert "from ready" in lines[4] and "seat" not in lines[1]
    done = runner.invoke(app, ["deals", "--warehouse", str(warehouse), "--format", "json"])
    rows = json.loads(done.stdout)
    assert [r["group"] for r in rows if r["flagged"] and r["kind"] == "player"] == [stacker]
    assert set(rows[0]) >= {"kind", "group", "hands", "p", "q", "z", "evidence", "expected_mean"}
    # each group's deal luck: fair mean less its own, per hand, within an interval of the fair deals' spread
    for r in rows:
        assert r["deal_luck"] == pytest.approx(r["expected_mean"] - r["mean_shanten"])
        assert r["deal_luck_low"] < r["deal_luck"] < r["deal_luck_high"]
    lucky = max((r for r in rows if r["kind"] == "player"), key=lambda r: r["deal_luck"])
    assert lucky["group"] == stacker and lucky["deal_luck_low"] > 0  # the stacked player's deals beat chance
    done = runner.invoke(app, ["deals", "--warehouse", str(warehouse), "--kind", "room"])
    assert done.exit_code == 2 and "unknown room" in done.output
    # the filters of every screen: the hands the stacker sat in, and a table nobody played at
    whole = {r["group"]: r["hands"] for r in rows if r["kind"] == "player"}
    done = runner.invoke(app, ["deals", "--warehouse", str(warehouse), "--player", stacker, "--format", "json"])
    assert done.exit_code == 0, done.output
    mine = {r["group"]: r["hands"] for r in json.loads(done.stdout) if r["kind"] == "player"}
    assert mine[stacker] == whole[stacker]  # every hand of the stacker is in its own scope
    assert all(mine[p] <= whole[p] for p in mine) and sum(mine.values()) < sum(whole.values())
    done = runner.invoke(app, ["deals", "--warehouse", str(warehouse), "--player", stacker, "--kind", "player"])
    assert done.exit_code == 0 and done.stdout.startswith("scope: ")
    done = runner.invoke(app, ["deals", "--warehouse", str(warehouse), "--table", "no-such-table"])
    assert done.exit_code == 1 and "in scope" in done.output


def test_hands_without_a_deal_are_not_screened(tmp_path: Path) -> None:
    """A score sheet's hands (level settlement) have no deal: no score, nothing screened."""
    sheet = Path(__file__).parents[1] / "data" / "sample-sheet.csv"
    out = tmp_path / "sheet.jsonl"
    assert runner.invoke(app, ["import", str(sheet), "--from", "sheet", "-o", str(out)]).exit_code == 0
    ingest([str(out)], tmp_path / "wh", workers=1)
    with connect(tmp_path / "wh") as con:
        assert con.sql("SELECT count(deal_shanten) FROM player_hands").fetchall()[0][0] == 0
        assert screen_deals(con) == []
    done = runner.invoke(app, ["deals", "--warehouse", str(tmp_path / "wh")])
    assert done.exit_code == 0 and done.stdout.startswith("no dealt hand to screen")


def test_a_warehouse_older_than_the_deal_scores_is_said_so() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE player_hands (hand_id VARCHAR, seat TINYINT, player VARCHAR)")
    with pytest.raises(NoDealScores, match="ingest its sources into a new warehouse"):
        screen_deals(con)


# ---------------------------------------------------------------------------------------------- evaluation
def test_the_deals_grid() -> None:
    pops = deals_grid(seed=3, hands=500, intensities=(0.3, 0.5), replicates=3, honest=4)
    assert [p.name for p in pops].count("stack 0.3 × 500") == 3 and len(pops) == 10
    assert len({p.seed for p in pops}) == 10 and {p.hands for p in pops} == {1000}
    assert [p.stack for p in pops[:6]] == [1] * 6 and [p.stack for p in pops[6:]] == [0] * 4


def test_a_planted_stacker_is_found_by_the_evaluation(tmp_path: Path) -> None:
    pop = deals_grid(seed=5, hands=150, intensities=(1.0,), replicates=1, honest=0)[0]
    out = run_deals(pop, workdir=str(tmp_path))
    assert isinstance(out, DealOutcome)
    assert out.planted == 1 and out.flagged_planted == 1 and out.flagged_honest == 0 and out.honest == 7
    assert out.sessions_planted > 0 and out.sessions_honest_flagged == 0
    assert sorted(out.scores)[-1][1]  # the stacker has the smallest p-value
    assert list(tmp_path.iterdir()) == []


def test_eval_deals_command(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    args = ["eval-deals", "--hands", "60", "--replicates", "1", "--honest", "1", "--intensity", "0.5"]
    result = runner.invoke(app, [*args, "--out", str(path)])
    assert result.exit_code == 0, result.output
    assert "| stack 0.5 × 60 | 120 | 1 |" in result.stdout and "sessions with a stacked deal flagged" in result.stdout
    data = json.loads(path.read_text())
    assert [c["name"] for c in data["cells"]] == ["stack 0.5 × 60", "honest × 60"] and "sessions" in data
    assert runner.invoke(app, ["eval-deals", "--intensity", "0"]).exit_code == 2


# ---------------------------------------------------------------------------------------------- a run at a time
@pytest.fixture(scope="module")
def shuffled_room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 simulated hands, 6 players, one dealt the better of two deals in most hands, ingested in a shuffled
    order (the files' ids interleaved)."""
    config = SimConfig(hands=300, seed=23, players=6, inject=InjectSpec.parse("stack=1:0.8"))
    return shuffled_warehouse(tmp_path_factory.mktemp("shuffled"), config)


def _whole_screen(con: duckdb.DuckDBPyConnection, fdr: float, min_hands: int, evidence: int) -> list[DealResult]:
    """The screen as it ran before its runs and its store: sql/deal_groups.sql over every hand as one frame, a
    line a group, the q-values and flags per kind, the evidence of every flagged group over every hand."""
    from itertools import groupby

    from pipeline.analytics.stats import by_qvalues
    from pipeline.audit.deal_null import load
    from pipeline.audit.deals import _line
    from pipeline.sql import run_sql

    frame = run_sql(con, "pipeline.audit", "deal_groups", lo=None, hi=None)
    out = []
    for kind in ("player", "seat", "table", "session"):
        rows = frame.filter(pl.col("kind") == kind).drop("kind").iter_rows()
        lines = [_line(kind, g, list(shapes), load(), min_hands) for g, shapes in groupby(rows, lambda r: r[0])]
        tested = [r for r in lines if r.p is not None]
        qs = dict(zip([r.group for r in tested], by_qvalues(np.array([r.p for r in tested])).tolist(), strict=True))
        flagged = sorted(g for g, q in qs.items() if q <= fdr)
        shown: dict[str, list[dict[str, object]]] = {}
        if flagged and evidence:
            best = run_sql(
                con, "pipeline.audit", "deal_evidence", kind=kind, grps=flagged, limit=evidence, lo=None, hi=None
            )
            for row in best.iter_rows(named=True):
                shown.setdefault(row.pop("grp"), []).append(row)
        kept = [
            dataclasses.replace(r, q=qs.get(r.group), flagged=r.group in flagged, evidence=shown.get(r.group, []))
            for r in lines
        ]
        out += sorted(kept, key=lambda r: (not r.flagged, r.p if r.p is not None else 2.0, r.group))
    return out


def test_the_screen_summed_a_run_at_a_time_is_the_screen_over_every_hand(shuffled_room: Path) -> None:
    """Issue 45: the groups' sums read a run of hands at a time in file order (37 hands: 9 runs; one run), never by
    ranges when the tables are in one order, added up in the screen's store, give the lines, q-values, flags,
    order and evidence of the screen over every hand at once; and the first lines of a kind are its top."""
    from pipeline.analytics import runs

    def no_ranges(*args: object, **kwargs: object) -> None:
        raise AssertionError("read by ranges")

    with connect(shuffled_room) as con:
        ids = [h for (h,) in con.execute("SELECT hand_id FROM hands").fetchall()]
        assert ids != sorted(ids)
        for fdr, min_hands in ((0.05, 20), (1.0, 1)):  # the stacker alone; every group flagged, with evidence
            want = _whole_screen(con, fdr, min_hands, 3)
            assert sum(r.flagged for r in want) >= (1 if fdr < 1 else len(want)) and len(want) > 100
            with pytest.MonkeyPatch.context() as m:
                m.setattr(runs, "range_runs", no_ranges)
                for size in (37, 10**6):
                    with deal_screen(con, fdr=fdr, min_hands=min_hands, evidence=3, chunk_hands=size) as screen:
                        assert list(screen.results()) == want, (fdr, size)
                        counts = {c.kind: (c.groups, c.tested, c.flagged) for c in screen.counts}
                        for kind in counts:
                            mine = [r for r in want if r.kind == kind]
                            tested = sum(r.p is not None for r in mine)
                            assert counts[kind] == (len(mine), tested, sum(r.flagged for r in mine))
                            assert list(screen.results(kind, 4)) == mine[:4]
        assert screen_deals(con, models=DuckDBModels(con)) == _whole_screen(con, 0.05, 20, 5)  # the Spark path's


def test_player_hands_in_another_order_than_the_hands_are_screened_again_by_ranges(shuffled_room: Path) -> None:
    """A table whose rows are not in the order of ``hands`` (player_hands sorted at random) leaves the runs in
    file order incomplete: the sums and the evidence are read again by ranges of ids, and the screen is the one
    over every hand."""
    from pipeline.analytics import runs

    ranges = []
    real = runs.range_runs

    def counted(*args: Any, **kwargs: Any) -> Any:
        ranges.append(1)
        return real(*args, **kwargs)

    con = out_of_order(shuffled_room, ("hands", "player_hands"), "player_hands")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(runs, "range_runs", counted)
        with deal_screen(con, fdr=1.0, min_hands=1, evidence=3, chunk_hands=37) as screen:
            got = list(screen.results())
    assert ranges == [1, 1] and got == _whole_screen(con, 1.0, 1, 3)  # the sums' pass, the evidence's


def test_the_report_s_screen_holds_the_lines_it_shows_and_shows_what_every_line_gives(shuffled_room: Path) -> None:
    """The report's deals page reads back the lines it shows (every player's; the flagged and the first ten of
    the other kinds), not every group's: its top table, its players' chart, its flagged groups and the number
    screened are those of the screen's every line."""
    from dashboards import deals as deals_dash

    with connect(shuffled_room) as con:
        for fdr in (0.05, 1.0):  # the stacker alone; every tested group flagged, more than ten a kind
            mine = deals_dash.screen(con, fdr=fdr)
            every = screen_deals(con, fdr=fdr)
            whole = deals_dash.Screen(every, fdr, walls=mine.walls, tested=sum(r.p is not None for r in every))
            assert len(mine.results) < len(every) and mine.tested == whole.tested > 50
            assert mine.flagged == whole.flagged and len(mine.flagged) >= (1 if fdr < 1 else mine.tested)
            assert deals_dash.prep_top(mine).equals(deals_dash.prep_top(whole)) and deals_dash.prep_top(mine).height
            assert deals_dash.prep_players(mine).equals(deals_dash.prep_players(whole))
