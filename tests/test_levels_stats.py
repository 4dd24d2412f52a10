"""Statistics and the collusion screen on warehouses of mixed levels (issue 20, item 4): each figure uses the
hands whose level carries what it needs (pipeline/analytics/levels.py, one table), says how many of each
level it used and which it left out; the collusion screen says which levels fed each signal.

The fixture warehouse holds 30 full hands of the sample, 5 of them again as dealt records, the sample score
sheet's 3 hands, and the same 3 sheet hands played by the first full hand's players: every count below is
taken from those records here (through the validator), not from the SQL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from test_levels import sample, sheet_records, to_dealt, to_settlement

from pipeline.analytics.levels import HAND, LEVELS, NEEDS, PUBLIC, TABLE_FIGURES, coverage, split
from pipeline.analytics.metrics import COLLUSION_FEATURES, DECISION_METRICS, METRICS
from pipeline.analytics.queries import connect, fold, player_base_levels, stats
from pipeline.audit.collusion import BORROWED, FEATURES, SIGNALS, WarehouseSource, screen_levels
from pipeline.audit.screen import screen
from pipeline.ingest.run import ingest
from pipeline.validate import validate

CLI = [sys.executable, "-c", "from cli import app; app(prog_name='xuezhan')"]


def _ingest(records: list[dict[str, Any]], root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "records.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    run = ingest([str(path)], root / "wh", workers=1)
    assert run.reconciled and run.rejects == 0 and run.records_stored == len(records)
    return root / "wh"


def _records() -> dict[str, list[dict[str, Any]]]:
    full = sample(30)
    dealt = [dict(to_dealt(r), hand_id=r["hand_id"] + "-d") for r in full[:5]]
    sheet = sheet_records()
    players = full[0]["players"]
    theirs = [dict(r, hand_id=r["hand_id"] + "-x", session_id="SX", players=players) for r in sheet]
    return {"full": full, "dealt": dealt, "settlement": [*sheet, *theirs]}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[dict[str, Any]]]]:
    records = _records()
    return _ingest(
        [r for level in ("full", "dealt", "settlement") for r in records[level]], tmp_path_factory.mktemp("m")
    ), records


@pytest.fixture(scope="module")
def answer(mixed: tuple[Path, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    with connect(mixed[0]) as con:
        return stats(con)


# ---------------------------------------------------------------------------------------------- the table
def test_every_figure_has_its_levels_and_nothing_else() -> None:
    ids = [m.id for m in (*METRICS, *DECISION_METRICS)]
    assert set(NEEDS) == {*ids, *TABLE_FIGURES, *COLLUSION_FEATURES}
    assert set(COLLUSION_FEATURES) == set(FEATURES)
    # every feature is read by a signal, or lends its rate to one (collusion.BORROWED)
    assert {f for feats in SIGNALS.values() for f in feats} | set(BORROWED.values()) == set(FEATURES)
    for needs in NEEDS.values():
        assert set(needs.levels) | set(needs.own_seat) <= set(LEVELS)
        for level in LEVELS:  # every level left out says why
            if level not in needs.levels:
                assert needs.why_not(level), (needs.id, level)
    # what the issue names: a score sheet carries wins, deal-ins, self-draws, fan, pigs and net points...
    for metric in ("win_rate", "deal_in_rate", "self_draw_share", "fan_per_win", "hua_zhu_rate"):
        assert NEEDS[metric].uses("settlement", own=False), metric
    assert NEEDS["net_points_per_hand"].uses("settlement", own=False)
    assert NEEDS["fan_distribution"].uses("settlement", own=False)
    # ... and no discards, pongs or tiles; an observer's record only its own seat's hand
    for metric in ("pongs_per_hand", "passed_wins", "compulsory_violations", "hand_length", "chosen_danger"):
        assert not NEEDS[metric].uses("settlement", own=True), metric
    assert NEEDS["passed_wins"].uses("observer", own=True) and not NEEDS["passed_wins"].uses("observer", own=False)
    assert NEEDS["pongs_per_hand"].uses("observer", own=False)


def test_what_is_left_out_is_counted_by_level() -> None:
    assert split(PUBLIC, {("full", True): 30, ("dealt", True): 5, ("settlement", False): 6}) == (
        {"full": 30, "dealt": 5},
        {"settlement": 6},
    )
    # an observer's record: the recording seat's hand is used by a figure that needs it, the others' are not
    assert split(HAND, {("observer", True): 2, ("observer", False): 6, ("full", True): 4}) == (
        {"full": 4, "observer": 2},
        {"observer": 6},
    )
    assert coverage(HAND, {("settlement", False): 3}) == {
        "n": 0,
        "levels": {},
        "excluded": {"settlement": 3},
        "needs": "hand",
    }


def test_a_metric_adds_up_only_the_rows_its_levels_allow() -> None:
    """Base rows by level and seat as player_base.sql gives them, observer rows included (built here: no
    observer record exists yet): each metric's counts are the sum of the rows it may use."""
    levels = pl.DataFrame(
        {
            "player": ["p"] * 5,
            "grp": ["all"] * 5,
            "level": ["full", "dealt", "observer", "observer", "settlement"],
            "own": [True, True, True, False, False],
            "hands": [10, 5, 2, 6, 3],
            "pongs": [4, 2, 1, 3, 0],
            "passed_wins": [1, 1, 1, 7, 0],
        }
    )
    assert fold(levels)["hands"].to_list() == [26]
    assert fold(levels, PUBLIC)[["hands", "pongs"]].row(0) == (23, 10)
    assert fold(levels, HAND)[["hands", "passed_wins"]].row(0) == (17, 3)
    nobody = fold(levels.filter(pl.col("level") == "settlement"), PUBLIC)  # a player of score sheets only
    assert nobody[["player", "hands", "pongs"]].row(0) == ("p", 0, 0)


# ---------------------------------------------------------------------------------------------- stats
def _seat_rows(records: list[dict[str, Any]], player: str) -> list[Any]:
    rows = []
    for record in records:
        v = validate(record)
        assert v.replayed, record["hand_id"]
        rows += [s for s in v.seats if s.player == player]
    return rows


def test_the_hands_of_each_level_and_what_each_figure_used(answer: dict[str, Any]) -> None:
    assert answer["levels"] == {
        "full": {"stored": 30, "replayed": 30},
        "dealt": {"stored": 5, "replayed": 5},
        "settlement": {"stored": 6, "replayed": 6},
    }
    every = {"n": 41, "levels": {"full": 30, "dealt": 5, "settlement": 6}, "excluded": {}, "needs": "claims"}
    events = {"full": 30, "dealt": 5}
    for metric in ("hands", "win_rate", "deal_in_rate", "self_draw_share", "fan_per_win", "net_points_per_hand"):
        assert answer["metrics"][metric] == every, metric
    for figure in ("hua_zhu_rate", "fan_distribution", "money_by_reason", "issues_by_code", "winners_per_hand"):
        assert answer["metrics"][figure] == every, figure
    public = {"n": 35, "levels": events, "excluded": {"settlement": 6}, "needs": "public"}
    assert answer["metrics"]["pongs_per_hand"] == public
    assert answer["metrics"]["hand_length"] == public
    assert answer["metrics"]["passed_wins"] == dict(public, needs="hand")
    assert answer["metrics"]["compulsory_violations"] == dict(public, needs="hand")
    assert answer["metrics"]["not_ready_at_draw_rate"] == dict(every, needs="ready")  # a sheet declares it
    assert answer["table"]["hand_length"]["n"] == 35  # a sheet's events are its kongs and wins only


def test_a_player_of_every_level(mixed: tuple[Path, dict[str, list[dict[str, Any]]]], answer: dict[str, Any]) -> None:
    _, records = mixed
    player = records["full"][0]["players"][0]
    n = {level: sum(player in r["players"] for r in rows) for level, rows in records.items()}
    assert n["settlement"] == 3 and n["full"] >= 1 and n["dealt"] >= 1
    entry = next(p for p in answer["players"] if p["player"] == player)
    assert entry["levels"] == n and entry["hands"] == sum(n.values())
    m = entry["metrics"]
    # every hand: the win rate over all of them, wins from the sheet's claims too
    everything = _seat_rows([r for rows in records.values() for r in rows], player)
    assert (m["win_rate"]["num"], m["win_rate"]["den"]) == (sum(s.won for s in everything), sum(n.values()))
    assert m["deal_ins_per_hand"]["sum"] == sum(s.deal_ins for s in everything)
    assert m["net_points_per_hand"]["sum"] == sum(s.delta for s in everything)
    # the events: pongs and passed wins over the full and dealt hands only, the sheets left out and named
    played = _seat_rows([*records["full"], *records["dealt"]], player)
    assert (m["pongs_per_hand"]["sum"], m["pongs_per_hand"]["n"]) == (sum(s.pongs for s in played), len(played))
    assert m["passed_wins"]["value"] == sum(s.passed_wins for s in played)
    assert entry["excluded"] == {
        metric: {"settlement": 3}
        for metric in (
            "pongs_per_hand",
            "passed_wins",
            "compulsory_violations",
            *("win_turn", "deal_in_turn", "ready_turn", "ready_rate", "ready_by_turn_6_rate", "starting_shanten"),
            "luck_adjusted_net_per_hand",
            *(d.id for d in DECISION_METRICS),  # a score sheet has no decisions to review
        )
    }


def test_a_player_of_score_sheets_only(answer: dict[str, Any]) -> None:
    entry = next(p for p in answer["players"] if p["player"] == "张三")
    assert entry["levels"] == {"settlement": 3}
    assert entry["metrics"]["win_rate"]["den"] == 3 and entry["metrics"]["win_rate"]["num"] == 2  # S1-1, S1-2
    assert entry["metrics"]["hua_zhu_rate"]["num"] == 1  # a pig in S1-3
    assert entry["metrics"]["pongs_per_hand"] == {"value": None, "sum": 0, "n": 0, "ci_low": None, "ci_high": None}
    assert entry["metrics"]["passed_wins"] == {"value": 0}
    assert entry["excluded"]["passed_wins"] == {"settlement": 3}  # not a zero: left out, and said so


def test_the_levels_table_is_what_the_code_does(
    mixed: tuple[Path, dict[str, list[dict[str, Any]]]], answer: dict[str, Any], tmp_path: Path
) -> None:
    """A metric that cannot use score sheets has, on the mixed warehouse, the value it has on a warehouse of
    the same hands without them; one that can, the value of the whole."""
    _, records = mixed
    without = _ingest([*records["full"], *records["dealt"]], tmp_path / "nosheet")
    with connect(without) as con:
        other = {p["player"]: p["metrics"] for p in stats(con)["players"]}
    compared = 0
    for entry in answer["players"]:
        if entry["player"] not in other:
            continue
        for m in METRICS:
            if not NEEDS[m.id].uses("settlement", own=False):
                assert entry["metrics"][m.id] == other[entry["player"]][m.id], (entry["player"], m.id)
                compared += 1
    assert compared >= 3 * len(answer["players"]) - 12
    player = records["full"][0]["players"][0]
    mine = next(p for p in answer["players"] if p["player"] == player)["metrics"]
    assert mine["win_rate"]["den"] == other[player]["win_rate"]["den"] + 3


def test_player_base_splits_by_level_and_seat(mixed: tuple[Path, dict[str, list[dict[str, Any]]]]) -> None:
    with connect(mixed[0]) as con:
        levels = player_base_levels(con)
    by = Counter()
    for row in levels.iter_rows(named=True):
        by[(row["level"], row["own"])] += row["hands"]
    assert by == {("full", True): 120, ("dealt", True): 20, ("settlement", False): 24}


def test_the_text_output_shows_what_was_left_out(mixed: tuple[Path, dict[str, list[dict[str, Any]]]]) -> None:
    done = subprocess.run([*CLI, "stats", "--warehouse", str(mixed[0])], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "levels of record (replayed hands): full 30, dealt 5, settlement 6" in lines
    assert (
        "  pongs_per_hand, win_turn, deal_in_turn, hand_length: n 35 (full 30, dealt 5); excluded: 6 settlement hands "
        "(a score sheet has no discards, pongs or draws)"
    ) in lines
    assert (
        "  ready_turn, ready_rate, ready_by_turn_6_rate: n 35 (full 30, dealt 5); excluded: 6 settlement hands "
        "(a score sheet has no tiles)"
    ) in lines
    assert (
        "  passed_wins, compulsory_violations: n 35 (full 30, dealt 5); excluded: 6 settlement hands "
        "(a score sheet has no tiles)"
    ) in lines
    js = subprocess.run(
        [*CLI, "stats", "--warehouse", str(mixed[0]), "--format", "json"], capture_output=True, text=True, timeout=300
    )
    out = json.loads(js.stdout)
    assert out["metrics"]["pongs_per_hand"]["n"] == 35 and out["metrics"]["pongs_per_hand"]["levels"] == {
        "full": 30,
        "dealt": 5,
    }


# ---------------------------------------------------------------------------------------------- collusion
def test_the_screen_says_which_levels_fed_each_signal(mixed: tuple[Path, dict[str, list[dict[str, Any]]]]) -> None:
    with connect(mixed[0]) as con:
        results = list(screen(con, min_hands=3, evidence=0).pairs)
    assert results
    for r in results:
        for name, signal in r.signals.items():
            assert sum(signal["levels"].values()) + sum(signal["excluded"].values()) == r.shared_hands, (r, name)
            assert signal["n"] == sum(signal["levels"].values())
        assert "settlement" not in r.signals["dangerous"]["levels"]
        assert r.signals["feeding"]["excluded"] == {}  # a sheet's wins on each other's tiles feed it
    summary = screen_levels({"full": 30, "dealt": 5, "settlement": 6})
    assert summary["feeding"]["levels"] == {"full": 30, "dealt": 5, "settlement": 6}
    assert summary["feeding"]["features"]["feed_sheet"]["levels"] == {"settlement": 6}
    assert summary["dangerous"]["excluded"] == {"settlement": 6} and summary["dangerous"]["available"]


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same 200 hands of the sample as full records and as the score sheets they would make."""
    root = tmp_path_factory.mktemp("sheets")
    full = list({r["hand_id"]: r for r in sample(220)}.values())[:200]  # the sample repeats hands: once here
    assert len(full) == 200
    return _ingest(full, root / "full"), _ingest([to_settlement(r) for r in full], root / "sheet")


def test_a_warehouse_of_score_sheets_still_screens_feeding(sheets: tuple[Path, Path]) -> None:
    full, sheet = sheets
    with connect(full) as con, WarehouseSource(con) as source:
        fed_full = dict(zip(zip(source.sums.a, source.sums.x, strict=True), source.sums.counts[:, 0], strict=True))
        players = source.sums.players
    with connect(sheet) as con, WarehouseSource(con) as source:
        assert source.sums.players == players
        k = FEATURES.index("feed_sheet")
        fed_sheet = dict(zip(zip(source.sums.a, source.sums.x, strict=True), source.sums.counts[:, k], strict=True))
        offers = source.sums.counts[:, [FEATURES.index(f) for f in ("feed_win", "chosen_danger", "soft_pass")]]
        assert offers.sum() == 0  # no discards: nothing to count them on
        results = list(screen(con, min_hands=20, evidence=0).pairs)
    # each pair's wins on the other's tile, as the sheets say them, are the full records' feeding wins
    assert sum(fed_full.values()) > 50
    assert {k: v for k, v in fed_sheet.items() if v} == {k: v for k, v in fed_full.items() if v}
    assert results
    for r in results:
        assert r.signals["feeding"]["levels"] == {"settlement": r.shared_hands}
        assert r.signals["dangerous"]["n"] == 0 and r.signals["dangerous"]["excluded"] == {"settlement": r.shared_hands}
        assert r.signals["dangerous"]["observed"] == 0 and r.signals["soft_play"]["observed"] == 0
    assert any(r.signals["feeding"]["observed"] > 0 for r in results)


def test_the_collusion_command_says_what_was_not_available(sheets: tuple[Path, Path]) -> None:
    _, sheet = sheets
    done = subprocess.run(
        [*CLI, "collusion", "--warehouse", str(sheet), "--min-hands", "20", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "  feeding: n 200 (settlement 200)" in lines
    assert "  dangerous: not available (excluded: 200 settlement hands (a score sheet has no discards))" in lines
    assert "  soft_play: not available (excluded: 200 settlement hands (a score sheet has no tiles))" in lines
    js = subprocess.run(
        [*CLI, "collusion", "--warehouse", str(sheet), "--min-hands", "20", "--format", "json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    pairs = json.loads(js.stdout)["pairs"]
    assert pairs and all(p["signals"]["soft_play"]["levels"] == {} for p in pairs)


# ---------------------------------------------------------------------------------------------- the report
def test_the_player_page_uses_the_levels_of_each_metric(
    mixed: tuple[Path, dict[str, list[dict[str, Any]]]], answer: dict[str, Any]
) -> None:
    from dashboards.player import prep_player_metrics

    _, records = mixed
    player = records["full"][0]["players"][0]
    with connect(mixed[0]) as con:
        df = prep_player_metrics(con, player, ("win_rate", "pongs_per_hand"))
    mine = {r["metric"]: r for r in df.filter(pl.col("who") == "player").iter_rows(named=True)}
    everyone = {r["metric"]: r for r in df.filter(pl.col("who") == "all players").iter_rows(named=True)}
    expected = next(p for p in answer["players"] if p["player"] == player)["metrics"]
    assert mine["pongs_per_hand"]["den"] == expected["pongs_per_hand"]["n"]  # the sheets left out
    assert mine["win_rate"]["den"] == expected["win_rate"]["den"]  # the sheets in
    assert everyone["pongs_per_hand"]["den"] == 35 * 4 and everyone["win_rate"]["den"] == 41 * 4  # seat-hands


def test_the_report_says_the_hands_by_level_beside_each_chart(
    mixed: tuple[Path, dict[str, list[dict[str, Any]]]], tmp_path: Path
) -> None:
    from dashboards import levels_note
    from dashboards.site import build_report

    hands = {"full": 30, "dealt": 5, "settlement": 6}
    assert levels_note(["hand_length"], hands) == (
        "n = 35 hands (full 30, dealt 5); excluded: 6 settlement hands (a score sheet has no discards, pongs or draws)"
    )
    assert levels_note(["win_rate", "pongs_per_hand"], hands).startswith(
        "win_rate: n = 41 hands (full 30, dealt 5, settlement 6); pongs_per_hand: n = 35 hands"
    )
    index = build_report(mixed[0], tmp_path / "report", top_players=1, min_hands=3)
    page = index.read_text(encoding="utf-8")
    assert "Hands by level of record (schemas/XZLOG.md, levels): full 30, dealt 5, settlement 6." in page
    assert (
        "Wins by total fan, as computed by the engine before any cap. (n = 41 hands (full 30, dealt 5, settlement 6))"
        in page
    )
    collusion = (index.parent / "collusion.html").read_text(encoding="utf-8")
    assert "<tr><td>dangerous</td><td>35 hands</td><td>full 30, dealt 5</td><td>settlement 6</td></tr>" in collusion


# ---------------------------------------------------------------------------------------------- observer
def _as_observer(con: Any, seat: int = 0) -> None:
    """The warehouse seen as if every hand were an observer's record of ``seat``: the other seats' draws hidden
    (no observer record can be ingested yet: the level is another change's; this is how its hands would read)."""
    con.execute("CREATE TEMP VIEW hands AS SELECT * REPLACE ('observer' AS level) FROM memory.main.hands")
    con.execute(
        "CREATE TEMP VIEW events AS SELECT * REPLACE "
        f"(CASE WHEN t = 'draw' AND seat <> {seat} THEN NULL ELSE tile END AS tile) FROM memory.main.events"
    )


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """Enough hands of the sample that some seat passes a win (the views below hide the passes of three seats):
    the first 600 distinct ones, ingested as full records."""
    full = list({r["hand_id"]: r for r in sample(620)}.values())[:600]
    return _ingest(full, tmp_path_factory.mktemp("observed")), len(full)


def test_an_observers_hands_show_only_its_own_seats_hand(observed: tuple[Path, int]) -> None:
    from pipeline.audit.collusion import chunked_features

    full, n = observed
    with connect(full) as con, WarehouseSource(con) as source:
        whole = chunked_features(source)
    passes = whole.group_by("seat_x").agg(pl.col("soft_pass").sum()).sort("soft_pass", "seat_x")
    observer = int(passes["seat_x"][0])  # the seat that passed fewest wins: the others' passes are hidden
    with connect(full) as con:
        _as_observer(con, observer)
        with WarehouseSource(con) as source:
            seen = chunked_features(source)
        answer = stats(con)
    assert seen.select("hand", "seat_a", "seat_x").equals(whole.select("hand", "seat_a", "seat_x"))
    mine = pl.col("seat_x") == observer
    # the public actions: every discard, win and call, as the full records show them
    assert seen["feed_win"].equals(whole["feed_win"]) and seen["feed_call"].equals(whole["feed_call"])
    # who could win on a discard needs every hand: nothing; a passed win needs the passer's: the observer's only
    assert seen["chosen_danger"].sum() == 0 and seen["base_chosen_danger"].sum() == 0
    assert seen.filter(~mine)["soft_pass"].sum() == 0 and seen.filter(~mine)["base_soft_pass"].sum() == 0
    assert seen.filter(mine)["soft_pass"].equals(whole.filter(mine)["soft_pass"])
    assert whole.filter(~mine)["soft_pass"].sum() > 0  # there was something to hide
    # the hazard is the rate over the offers it could be seen on: what it expects adds up to what was seen
    assert seen["base_soft_pass"].sum() == pytest.approx(seen["soft_pass"].sum())
    assert whole["base_soft_pass"].sum() == pytest.approx(whole["soft_pass"].sum())
    # stats: a passed win counts for the observer's seat only, pongs for every seat
    assert answer["metrics"]["passed_wins"]["levels"] == {"observer": n}  # each hand, its own seat
    assert answer["metrics"]["pongs_per_hand"]["levels"] == {"observer": n}
    seat_hands = sum(p["hands"] for p in answer["players"])
    excluded = sum(p["excluded"].get("passed_wins", {}).get("observer", 0) for p in answer["players"])
    assert (seat_hands, excluded) == (4 * n, 3 * n)  # three hidden seats a hand


def test_base_counts_of_every_level_run_by_run_equal_one_query(
    mixed: tuple[Path, dict[str, list[dict[str, Any]]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An observer's record shows one seat's draws: the runs read the draws beside the hands, and the players'
    base counts of every level added up run by run are the model's over every hand at once."""
    from polars.testing import assert_frame_equal
    from test_levels_observer import to_observer

    from pipeline.analytics import queries, runs

    records = mixed[1]
    seen = [dict(to_observer(r, i % 4), hand_id=r["hand_id"] + "-o") for i, r in enumerate(records["full"][5:15])]
    root = _ingest([r for level in ("full", "dealt", "settlement") for r in records[level]] + seen, tmp_path)
    with connect(root) as con:
        streams = {s.table: s for s in queries.base_streams(con)}
        assert streams["events"].where == "t = 'draw' AND tile IS NOT NULL"
        with monkeypatch.context() as m:
            m.setattr(runs, "cursor_sees_all", lambda con: False)
            whole = player_base_levels(con)
        monkeypatch.setattr(queries, "RUN_HANDS", 4)
        assert_frame_equal(player_base_levels(con), whole, rel_tol=1e-9, abs_tol=1e-6)
    observed = whole.filter(pl.col("level") == "observer")
    assert set(whole["level"]) >= {"observer", "settlement"}
    assert observed.filter(pl.col("own"))["hands"].sum() == len(seen)  # the observer's own seat, a hand each
