"""The stored review pass and the per-player decision metrics (issue 43, item 2): ``xuezhan review`` reviews each
reviewable hand once into ``decision_tallies``; ``stats`` (text, csv, json) and the player pages show the
efficiency-match rate, avoidable deal-ins, missed wins and late 定缺 with n and 95% intervals, "not reviewed"
(null, never 0) where a player has no row.

Two hand-made records (the corpus notation, tests/corpus/README.md) whose every count is worked out by hand:

- ``made-1`` (valid, three winners): the dealer (void s, holding 9s) breaks its 123m to throw 2m (the policy's
  9s keeps it ready: a non-forced discard, not matched; the void suit kept), seat 1 wins on it (a deal-in, not
  avoidable: nobody shows a ready signal, so nothing is marked dangerous); seat 2 waits on 2m/5m, passes the 2m
  (a missed win) and self-draws 5m (a win taken); seat 3 self-draws.
- ``made-2`` (stops before the end): seat 1 pongs 7m and 8m (two melds: a ready signal), then the dealer throws
  4p into its 234p 99p 56p while holding 5s and 9s, tiles of seat 1's void suit (safe against it) that cost no
  shanten: an avoidable deal-in.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from test_levels_observer import to_observer
from typer.testing import CliRunner

from cli import app
from pipeline.analytics import queries
from pipeline.analytics.metrics import DECISION_METRICS, NOT_REVIEWED, decision_values
from pipeline.analytics.render import stats_csv, stats_table
from pipeline.audit.tallies import known_seats, review_rows, review_warehouse, tally_rows, void_counted
from pipeline.formats.notation import parse_events
from pipeline.game.record import parse_record
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import Warehouse
from pipeline.validate import validate
from schemas.tables import TABLES, TALLY_VERSION

ROOT = Path(__file__).resolve().parents[1]
RUNNER = CliRunner()
COUNTS = (
    "decisions",
    "discards",
    "judged_discards",
    "judged_efficient",
    "deal_ins",
    "avoidable_deal_ins",
    "win_chances",
    "missed_wins",
    "void_held",
    "void_kept",
)


def tiles(text: str) -> list[str]:
    return [f"{r}{suit}" for ranks, suit in re.findall(r"([1-9]+)([mps])", text) for r in ranks]


def made(hand_id: str, deal: list[str], que: list[str], events: str, **extra: Any) -> dict[str, Any]:
    return {
        "format": "xzlog/1",
        "hand_id": hand_id,
        "session_id": "made",
        "table_id": "made",
        "played_at": "2026-11-20T20:00:00+08:00",
        "ruleset": "chengdu",
        "players": ["ma", "mb", "mc", "md"],
        "dealer": 0,
        "deal": [tiles(h) for h in deal],
        "que": que,
        "events": parse_events(events),
        **extra,
    }


MADE_1 = made(
    "made-1",
    ["123456789m1235p9s", "13444m555666p77p", "2255m666777888s", "123456789s1167p"],
    ["s", "s", "p", "m"],
    "0-2m 1h2m<0 2+5m 2h5m 3+8p 3h8p",
)
MADE_2 = made(
    "made-2",
    ["1234567m1188p4p59s", "7788m23499p56p12s", "8m123456777s23m9m", "23p56p777p66s888s9s"],
    ["s", "s", "p", "m"],
    "0-7m 1p7m<0 1-1s 2+4s 2-8m 1p8m<2 1-2s 2+5s 2-5s 3+1m 3-1m 0+6p 0-4p 1h4p<0",
)
# seat → (decisions, discards, judged, matched, deal-ins, avoidable, win chances, missed, void held, void kept)
EXPECTED_1 = {
    0: (2, 1, 1, 0, 1, 0, 0, 0, 1, 1),  # the void; 2m thrown from 123m (9s kept ready), dealt in, not avoidable
    1: (2, 0, 0, 0, 0, 0, 1, 0, 0, 0),  # the void; the win on 2m
    2: (3, 0, 0, 0, 0, 0, 2, 1, 0, 0),  # the void; 2m passed (missed); 5m self-drawn
    3: (2, 0, 0, 0, 0, 0, 1, 0, 0, 0),  # the void; 8p self-drawn
}


def counts(row: dict[str, Any]) -> tuple[int | None, ...]:
    return tuple(row[c] for c in COUNTS)


# ---------------------------------------------------------------------------------------------- one hand
def test_the_hand_made_record_s_tallies_are_the_ones_worked_out_by_hand() -> None:
    assert validate(MADE_1).ok
    rows = tally_rows("made-1", MADE_1)
    assert [r["seat"] for r in rows] == [0, 1, 2, 3] and [r["player"] for r in rows] == ["ma", "mb", "mc", "md"]
    assert {r["seat"]: counts(r) for r in rows} == EXPECTED_1
    assert all(r["version"] == TALLY_VERSION for r in rows)


def test_an_avoidable_deal_in_a_safe_tile_of_the_winner_s_void_at_no_loss_of_shanten() -> None:
    rows = {r["seat"]: r for r in tally_rows("made-2", MADE_2)}
    dealer = rows[0]
    assert (dealer["deal_ins"], dealer["avoidable_deal_ins"]) == (1, 1)
    assert (dealer["void_held"], dealer["void_kept"]) == (2, 2)  # 7m and 4p thrown while holding 5s and 9s
    assert rows[1]["win_chances"] == 1 and rows[1]["missed_wins"] == 0


def test_the_late_void_is_not_counted_where_the_rules_force_void_tiles_first() -> None:
    assert void_counted(parse_record(MADE_1))
    forced = dict(MADE_1, ruleset={"profile": "chengdu", "void_discard_first": True})
    assert not void_counted(parse_record(forced))
    assert all(r["void_held"] is None and r["void_kept"] is None for r in tally_rows("f", forced))
    no_que = {k: v for k, v in MADE_1.items() if k != "que"}
    assert not void_counted(parse_record(no_que))


def test_an_observer_record_tallies_its_own_seat_only() -> None:
    full = _sample(1)[0]
    seen = to_observer(full, observer=2)
    assert known_seats(parse_record(seen)) == [2]
    rows = tally_rows(full["hand_id"], seen)
    assert [r["seat"] for r in rows] == [2]
    mine = next(r for r in tally_rows(full["hand_id"], full) if r["seat"] == 2)
    # what the seat decided and how it judges is the same; danger may differ (what it could see is the same)
    assert rows[0]["decisions"] == mine["decisions"] and rows[0]["discards"] == mine["discards"]


def test_the_values_say_not_reviewed_never_0() -> None:
    empty = decision_values(None)
    assert set(empty) == {m.id for m in DECISION_METRICS}
    for v in empty.values():
        assert v["status"] == NOT_REVIEWED and v["value"] is None
        assert all(x is None for k, x in v.items() if k != "status")
    assert decision_values({"reviewed_hands": 0})["missed_win_rate"]["status"] == NOT_REVIEWED
    base = {
        "reviewed_hands": 50,
        "judged_discards": 100,
        "judged_efficient": 80,
        "reviewed_deal_ins": 4,
        "avoidable_deal_ins": 2,
        "avoidable_per100_sum": 200,
        "avoidable_per100_sq": 40000,
        "win_chances": 10,
        "missed_wins": 1,
        "void_hands": 40,
        "void_kept_hands": 4,
    }
    got = decision_values(base)
    assert got["efficiency_match_rate"]["value"] == 0.8 and got["efficiency_match_rate"]["den"] == 100
    low, high = got["efficiency_match_rate"]["ci_low"], got["efficiency_match_rate"]["ci_high"]
    assert round(low, 3) == 0.711 and round(high, 3) == 0.867  # Wilson 95%
    assert got["avoidable_deal_in_share"]["value"] == 0.5 and got["missed_win_rate"]["value"] == 0.1
    per100 = got["avoidable_deal_ins_per_100"]
    assert per100["value"] == 4.0 and 0 < per100["ci_low"] < 4.0 < per100["ci_high"]  # Poisson: never below 0
    assert got["late_void_rate"]["value"] == 0.1 and got["reviewed_hands"]["value"] == 50


# ---------------------------------------------------------------------------------------------- the pass
def _sample(n: int) -> list[dict[str, Any]]:
    out = []
    with gzip.open(ROOT / "data" / "sample.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("format") == "xzlog/1" and validate(r).ok:
                out.append(r)
            if len(out) == n:
                break
    return out


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _tallies(root: Path) -> list[tuple[Any, ...]]:
    con = Warehouse(root).connect()
    return con.execute("SELECT hand_id, seat, version FROM decision_tallies ORDER BY 1, 2, 3").fetchall()


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A warehouse of 24 sample hands, the hand-made one and an observer's record, reviewed once in batches
    of 7 hands; then 6 more sample hands ingested (not yet reviewed)."""
    tmp = tmp_path_factory.mktemp("tallies")
    hands = _sample(30)
    first = [*hands[:24], MADE_1, dict(to_observer(hands[24], 1), hand_id="obs-1")]
    run = ingest([str(_write(tmp / "a.jsonl", first))], tmp / "wh", workers=1)
    assert run.records_stored == 26 and run.rejects == 0
    done = review_warehouse(tmp / "wh", commit_hands=7)
    return {"root": tmp / "wh", "tmp": tmp, "hands": hands, "first": done}


def test_the_pass_stores_one_row_per_known_player_hand_in_committed_batches(room: dict[str, Any]) -> None:
    done = room["first"]
    assert done.pending == done.reviewed == 26 and not done.missing
    assert done.batches == 4 and done.rows == 25 * 4 + 1  # the observer's record: its own seat
    rows = _tallies(room["root"])
    assert len(rows) == len(set(rows)) == done.rows
    with Warehouse(room["root"]).connect() as con:
        got = con.sql("SELECT * FROM decision_tallies WHERE hand_id = 'made-1' ORDER BY seat").pl()
        assert {r["seat"]: counts(r) for r in got.iter_rows(named=True)} == EXPECTED_1
        assert con.execute("SELECT seat FROM decision_tallies WHERE hand_id = 'obs-1'").fetchall() == [(1,)]
        assert got["reviewed_at"].null_count() == 0
    manifest = Warehouse(room["root"]).connect().execute("SELECT batch FROM main._committed").fetchall()
    assert sum(b.startswith("review-") for (b,) in manifest) == 4


def test_a_second_pass_adds_nothing_and_a_later_ingest_is_reviewed_next(room: dict[str, Any]) -> None:
    root = room["root"]
    before = _tallies(root)
    again = review_warehouse(root)
    assert (again.pending, again.reviewed, again.rows, again.batches) == (0, 0, 0, 0)
    assert _tallies(root) == before
    more = _write(room["tmp"] / "b.jsonl", room["hands"][25:30])
    ingest([str(more)], root, workers=1)
    later = review_warehouse(root, workers=2)
    assert later.pending == later.reviewed == 5 and later.rows == 20
    after = _tallies(root)
    assert len(after) == len(set(after)) == len(before) + 20
    assert {h for h, _, _ in after} - {h for h, _, _ in before} == {r["hand_id"] for r in room["hands"][25:30]}


def test_rows_of_another_version_are_not_read_and_their_hands_are_reviewed_again(tmp_path: Path) -> None:
    records = _sample(3)
    ingest([str(_write(tmp_path / "a.jsonl", records))], tmp_path / "wh", workers=1)
    stale = [
        {
            "hand_id": records[0]["hand_id"],
            "seat": s,
            "player": records[0]["players"][s],
            "version": "0",
            "decisions": 1,
        }
        for s in range(4)
    ]
    with Warehouse(tmp_path / "wh") as wh:
        wh.write_batch(
            "review-old", {"decision_tallies": pa.Table.from_pylist(stale, schema=TABLES["decision_tallies"])}
        )
    with queries.connect(tmp_path / "wh") as con:
        assert queries.review_coverage(con) == {
            "version": TALLY_VERSION,
            "reviewable": 3,
            "reviewed": 0,
            "other_version": 1,
        }
        assert all(p["metrics"]["reviewed_hands"]["status"] == NOT_REVIEWED for p in queries.stats(con)["players"])
    done = review_warehouse(tmp_path / "wh")
    assert done.reviewed == 3  # the stale hand too
    with queries.connect(tmp_path / "wh") as con:
        assert queries.review_coverage(con)["reviewed"] == 3
        decided = sum(p["metrics"]["reviewed_hands"]["value"] or 0 for p in queries.stats(con)["players"])
    assert decided == 12  # the stale rows not counted beside the new ones


def test_a_hand_that_cannot_be_read_back_is_reported_and_tried_again(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", _sample(2))
    ingest([str(path)], tmp_path / "wh", workers=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(lines[0] + "\n", encoding="utf-8")  # the second line gone
    done = review_warehouse(tmp_path / "wh")
    assert done.reviewed == 1 and len(done.missing) == 1 and "no line 2" in done.missing[0].reason
    result = RUNNER.invoke(app, ["review", "--warehouse", str(tmp_path / "wh"), "--format", "json"])
    assert result.exit_code == 1, result.output
    answer = json.loads(result.stdout)
    assert answer["pending"] == 1 and answer["reviewed"] == 0 and len(answer["not_read"]) == 1


# ---------------------------------------------------------------------------------------------- stats
def test_stats_json_sums_the_rows_and_says_not_reviewed_for_a_player_without_any(room: dict[str, Any]) -> None:
    root = room["root"]
    with queries.connect(root) as con:
        answer = queries.stats(con)
        sums = dict(
            zip(
                ("hands", "judged", "matched", "deal_ins", "avoidable", "chances", "missed"),
                con.execute(
                    "SELECT count(*), sum(judged_discards), sum(judged_efficient), sum(deal_ins), "
                    "sum(avoidable_deal_ins), sum(win_chances), sum(missed_wins) FROM decision_tallies "
                    "WHERE player = 'mc'"
                ).fetchone(),
                strict=True,
            )
        )
    by = {p["player"]: p for p in answer["players"]}
    mc = by["mc"]["metrics"]  # the hand-made record's seat 2: one hand, one missed win of two chances
    assert mc["reviewed_hands"] == {"value": 1, "status": "reviewed"} and sums["hands"] == 1
    assert (mc["missed_win_rate"]["num"], mc["missed_win_rate"]["den"], mc["missed_win_rate"]["value"]) == (1, 2, 0.5)
    assert mc["missed_win_rate"]["ci_low"] < 0.5 < mc["missed_win_rate"]["ci_high"]
    assert mc["efficiency_match_rate"]["den"] == 0 and mc["efficiency_match_rate"]["value"] is None
    ma = by["ma"]["metrics"]
    assert (ma["avoidable_deal_in_share"]["num"], ma["avoidable_deal_in_share"]["den"]) == (0, 1)
    assert (ma["late_void_rate"]["num"], ma["late_void_rate"]["den"]) == (1, 1)
    assert ma["avoidable_deal_ins_per_100"]["value"] == 0.0 and ma["avoidable_deal_ins_per_100"]["n"] == 1
    # every reviewed player's figures are its rows' sums
    for p in answer["players"]:
        if p["player"].startswith("m"):
            continue
        m = p["metrics"]
        assert m["reviewed_hands"]["status"] == "reviewed" and m["reviewed_hands"]["value"] > 0
        assert 0 <= m["efficiency_match_rate"]["num"] <= m["efficiency_match_rate"]["den"]
    assert 26 <= answer["review"]["reviewed"] == answer["review"]["reviewable"]  # every hand (and the later 5)
    assert answer["metrics"]["efficiency_match_rate"]["needs"] == "reviewed"
    # csv: one row per player and metric, the decision metrics among them, empty where unknown
    csv = stats_csv(answer)
    assert "mc,all,missed_win_rate,0.5,1,2," in csv and "mc,all,efficiency_match_rate,,0,0,," in csv
    text = stats_table(answer)
    assert "decisions (xuezhan review, version" in text and "漏胡率 missed_win_rate" in text


def test_a_player_with_only_unreviewed_hands_is_not_reviewed_in_every_format(tmp_path: Path) -> None:
    records = _sample(4)
    ingest([str(_write(tmp_path / "a.jsonl", records))], tmp_path / "wh", workers=1)
    queries._WARNED.clear()
    result = RUNNER.invoke(app, ["stats", "--warehouse", str(tmp_path / "wh"), "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["review"] == {"version": TALLY_VERSION, "reviewable": 4, "reviewed": 0, "other_version": 0}
    for p in answer["players"]:
        for m in DECISION_METRICS:
            got = p["metrics"][m.id]
            assert got["status"] == NOT_REVIEWED and got["value"] is None, (p["player"], m.id)
            assert got.get("num", got.get("sum")) is None  # null, never 0
    text = RUNNER.invoke(app, ["stats", "--warehouse", str(tmp_path / "wh")]).stdout
    assert "decisions: not reviewed (0 of 4 reviewable hands; run xuezhan review --warehouse W)" in text
    done = RUNNER.invoke(app, ["review", "--warehouse", str(tmp_path / "wh")])
    assert done.exit_code == 0 and "reviewed 4 hands of 4 pending" in done.stdout, done.output
    answer = json.loads(RUNNER.invoke(app, ["stats", "--warehouse", str(tmp_path / "wh"), "--format", "json"]).stdout)
    assert answer["review"]["reviewed"] == 4
    assert all(p["metrics"]["efficiency_match_rate"]["status"] == "reviewed" for p in answer["players"])
    # --by: the groups have them too
    by_seat = json.loads(
        RUNNER.invoke(app, ["stats", "--warehouse", str(tmp_path / "wh"), "--by", "seat", "--format", "json"]).stdout
    )
    total = sum(p["metrics"]["reviewed_hands"]["value"] or 0 for p in by_seat["players"])
    assert total == 16


def test_an_older_warehouse_without_the_table(tmp_path: Path) -> None:
    """The release of 1 December's warehouse (no manifest, no decision_tallies, no level): stats says not reviewed;
    the pass upgrades it in place and reviews its 16 hands (kept without a level: read as dealt)."""
    fixture = ROOT / "tests" / "fixtures" / "warehouse-2026-12-01"
    records = tmp_path / "games.jsonl"
    shutil.copy(fixture / "games.jsonl", records)
    shutil.copytree(fixture / "wh", tmp_path / "wh")
    import pyarrow.parquet as pq

    for part in (tmp_path / "wh" / "hands").glob("*.parquet"):
        table = pq.read_table(part)
        if table.num_rows:
            column = pa.array([str(records)] * table.num_rows, type=table.schema.field("source_file").type)
            pq.write_table(table.set_column(table.schema.get_field_index("source_file"), "source_file", column), part)
    queries._WARNED.clear()
    result = RUNNER.invoke(app, ["stats", "--warehouse", str(tmp_path / "wh"), "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["review"]["reviewed"] == 0 and answer["review"]["reviewable"] == 16
    assert all(p["metrics"]["missed_win_rate"]["status"] == NOT_REVIEWED for p in answer["players"])
    done = RUNNER.invoke(app, ["review", "--warehouse", str(tmp_path / "wh"), "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["reviewed"] == 16
    answer = json.loads(RUNNER.invoke(app, ["stats", "--warehouse", str(tmp_path / "wh"), "--format", "json"]).stdout)
    assert answer["review"]["reviewed"] == 16
    assert duckdb.connect(str(tmp_path / "wh" / "warehouse.duckdb"), read_only=True).execute(
        "SELECT count(DISTINCT hand_id) FROM decision_tallies"
    ).fetchall() == [(16,)]


# ---------------------------------------------------------------------------------------------- the version
# The sample's first 40 valid hands' tallies and decision cells (the engine-assistance screen's counts: the
# weights rounded to 9 places), digested. When the policy, the counting, the screen's bands or the weights change
# them, the stored rows of earlier passes no longer mean what this release would count: bump
# schemas.tables.TALLY_VERSION (so that stats and assist stop reading them and `xuezhan review` redoes their
# hands), then update the digests here. Version 2: decision_cells added (the tallies' digest unchanged).
TALLY_DIGEST = {
    "version": "2",
    "sha256": "f3cd5bb2f9e8bc43074d32d99b08653503ea10c838d26a88d3555a658622d974",
    "cells": "a9550dbdb84692213da98384f2fe5f6239dc408a6cc496811502280c29b89928",
}


def _cells(row: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 9) if isinstance(v, float) else v for k, v in row.items()}


def test_the_tally_version_moves_with_what_a_review_counts() -> None:
    reviewed = [review_rows(rec["hand_id"], rec) for rec in _sample(40)]
    rows = [counts(r) for tallies, _, _ in reviewed for r in tallies]
    assert rows == [counts(r) for rec in _sample(40) for r in tally_rows(rec["hand_id"], rec)]
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    cells = hashlib.sha256(json.dumps([_cells(r) for _, cs, _ in reviewed for r in cs]).encode()).hexdigest()
    assert not any(
        times for _, _, times in reviewed
    )  # the sample carries no decision times (tests/test_think_stored.py)
    assert (TALLY_VERSION, digest, cells) == (TALLY_DIGEST["version"], TALLY_DIGEST["sha256"], TALLY_DIGEST["cells"]), (
        "the sample's tallies changed: bump schemas.tables.TALLY_VERSION and update TALLY_DIGEST"
    )


# ---------------------------------------------------------------------------------------------- player pages
def test_the_player_page_shows_the_decision_metrics_or_says_not_reviewed(room: dict[str, Any], tmp_path: Path) -> None:
    from dashboards import player
    from dashboards.pages.players import decisions_section
    from pipeline.analytics.scales import scales

    with queries.connect(room["root"]) as con:
        decided = player.prep_every_player_decisions(con)
        group = scales(con).group_of("mc")
        every = con.execute("SELECT sum(win_chances), sum(missed_wins) FROM decision_tallies").fetchone()
    page = decisions_section("mc", decided, group)
    assert '<section id="decisions">' in page and "Not reviewed" not in page
    assert "漏胡率" in page and "50.0%" in page and "n=2 win chances" in page  # one missed of two
    assert f"n={every[0]:,} win chances" in page  # the population: every player's chances pooled
    assert decided.of("mc")["missed_win_rate"]["num"] == 1
    # a player with no reviewed hand: said so, no figure
    unknown = decisions_section("nobody", decided, group)
    assert "Not reviewed" in unknown and "xuezhan review --warehouse WH" in unknown and "%" not in unknown
    assert decisions_section("mc", None, group) == ""
    # a warehouse not reviewed at all
    ingest([str(_write(tmp_path / "a.jsonl", _sample(2)))], tmp_path / "wh", workers=1)
    with queries.connect(tmp_path / "wh") as con:
        none = player.prep_every_player_decisions(con)
        who = con.execute("SELECT min(player) FROM player_hands").fetchone()[0]
    assert none.mine == {} and "Not reviewed" in decisions_section(who, none, None)
    assert "0 of the 2 reviewable hands are reviewed" in decisions_section(who, none, None)


def test_a_pass_that_fails_part_way_keeps_its_committed_batches_and_the_next_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass commits as ingest does: a batch is in the manifest whole or not at all. Its third commit fails
    here (a full disk, a kill): the first two batches stay, the third's files are gone, and a second pass
    reviews exactly the rest."""
    records = _sample(10)
    ingest([str(_write(tmp_path / "a.jsonl", records))], tmp_path / "wh", workers=1)
    real = Warehouse._write_manifest
    placed: list[list[str]] = []

    def failing(self: Warehouse, rows: list[dict[str, Any]]) -> None:
        batch = str(rows[-1]["batch"])
        placed.append(sorted(p.name for p in (self.root / "decision_tallies").glob("part-review-*.parquet")))
        if len(placed) == 3:  # the third batch's files are in their folder; its manifest never lands
            raise OSError(28, "No space left on device", batch)
        real(self, rows)

    monkeypatch.setattr(Warehouse, "_write_manifest", failing)
    with pytest.raises(OSError):
        review_warehouse(tmp_path / "wh", commit_hands=3)
    monkeypatch.setattr(Warehouse, "_write_manifest", real)
    assert len(placed[2]) == 3  # the failed batch's file was in place when the commit point failed
    kept = _tallies(tmp_path / "wh")
    assert len({h for h, _, _ in kept}) == 6 and len(kept) == 24  # two batches of three hands
    assert len(list((tmp_path / "wh" / "decision_tallies").glob("part-review-*.parquet"))) == 2  # removed again
    rest = review_warehouse(tmp_path / "wh")
    assert rest.pending == rest.reviewed == 4
    every = _tallies(tmp_path / "wh")
    assert len(every) == len(set(every)) == 40 and {h for h, _, _ in every} == {r["hand_id"] for r in records}


def test_a_filter_keeps_the_tallies_of_the_hands_in_scope(room: dict[str, Any]) -> None:
    from pipeline.analytics.scope import Scope

    with queries.connect(room["root"], scope=Scope(table="made")) as con:  # the hand-made record's table alone
        answer = queries.stats(con)
    assert answer["review"]["reviewable"] == answer["review"]["reviewed"] == 1
    got = {p["player"]: p["metrics"] for p in answer["players"]}
    assert set(got) == {"ma", "mb", "mc", "md"}
    assert all(m["reviewed_hands"]["value"] == 1 for m in got.values())
    assert got["mc"]["missed_win_rate"]["num"] == 1 and got["ma"]["late_void_rate"]["num"] == 1
    with queries.connect(room["root"], scope=Scope(player="mc")) as con:
        mine = next(p for p in queries.stats(con, player="mc")["players"] if p["player"] == "mc")
    assert mine["metrics"]["missed_win_rate"]["den"] == 2


def test_the_pass_can_be_bounded_by_the_filters_and_the_rest_waits(tmp_path: Path) -> None:
    ingest([str(_write(tmp_path / "a.jsonl", [*_sample(3), MADE_1]))], tmp_path / "wh", workers=1)
    wh = str(tmp_path / "wh")
    first = RUNNER.invoke(app, ["review", "--warehouse", wh, "--table", "made"])
    assert first.exit_code == 0, first.output
    assert "reviewed 1 hand of 1 pending" in first.stdout and "in scope: 1 of 1 reviewable hands" in first.stdout
    assert {h for h, _, _ in _tallies(tmp_path / "wh")} == {"made-1"}
    with queries.connect(tmp_path / "wh") as con:
        assert queries.review_coverage(con)["reviewed"] == 1 and queries.review_coverage(con)["reviewable"] == 4
    rest = RUNNER.invoke(app, ["review", "--warehouse", wh, "--format", "json"])
    assert rest.exit_code == 0 and json.loads(rest.stdout)["reviewed"] == 3, rest.output
    nothing = RUNNER.invoke(app, ["review", "--warehouse", wh, "--table", "no-such-table"])
    assert nothing.exit_code == 1  # the filters keep no hand


def test_a_player_hand_has_decision_cells_exactly_where_its_tallies_count_a_decision() -> None:
    """assist reads a player's hands from decision_tallies (rows with a decision, sql/assist_cells.sql) and its
    counts from decision_cells: the same review must write cells for exactly those player-hands, and as many
    decisions. Full records, and each seat's observer record (its own seat only)."""
    for rec in _sample(12):
        for obj in (rec, *(to_observer(rec, observer=s) for s in range(4))):
            tallies, cells, _ = review_rows(rec["hand_id"], obj)
            counted = {(r["seat"], r["player"]): r["decisions"] for r in tallies if r["decisions"] > 0}
            summed: dict[tuple[int, str], int] = {}
            for c in cells:
                summed[(c["seat"], c["player"])] = summed.get((c["seat"], c["player"]), 0) + c["n"]
            assert summed == counted
            assert all(c["version"] == TALLY_VERSION and c["n"] > 0 for c in cells)
