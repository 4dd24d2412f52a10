"""The screens' heavy pass on Spark (``deals``, ``info-cheats``, ``stats --engine spark``: pipeline/analytics/spark.py)
against DuckDB: the same output, byte for byte, in every format, over the whole warehouse and under a filter, on a
simulated room (a stacker, a player who sees every hand) and, for ``stats``, on a warehouse of every level of record
(full, dealt, observer, settlement) as this release and as an older one stored it (wins without their turns: the
turns counted from the events); the models' frames equal, column types included; the files a killed run left
uncommitted read by neither; a table Spark does not read refused. ``collusion --engine spark``
(pipeline/audit/collusion_spark.py), on a room with a colluding pair and a team of three and on the warehouse of
every level: the same output, byte for byte, and with runs of a few dozen hands the same runs, rows, sums and
results, float for float (under a filter whose runs the local path reads by ranges: within 1e-9).

One Spark session (``local[2]``) for the module: the commands find it running and use it as it is. Skipped, with
the reason, only where pyspark or Java 17+ is missing (tests/spark_support.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rooms import simulated_room
from spark_support import spark_missing
from test_levels import sample, sheet_records, to_dealt
from test_levels_observer import to_observer
from typer.testing import CliRunner

from cli import app
from pipeline.analytics.queries import connect
from pipeline.analytics.scope import Scope
from pipeline.analytics.spark import SparkModels, spark_text
from pipeline.audit.collusion import WarehouseSource
from pipeline.audit.collusion_spark import SparkSource
from pipeline.audit.screen import screen
from pipeline.ingest.run import ingest
from pipeline.sql import DuckDBModels

MISSING = spark_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
runner = CliRunner()
SPARK = ["--engine", "spark", "--master", "local[2]"]


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """600 hands of 8 players: two stack their deals (half their hands), one sees every hand; ingested."""
    return simulated_room(tmp_path_factory.mktemp("room"), "stack=2:0.5,bot=1", 5, 600)


@pytest.fixture(scope="module")
def session() -> Iterator[Any]:
    from pipeline.ingest.engines.spark import SparkEngine

    with SparkEngine("local[2]", {"spark.ui.enabled": "false"}, app="xuezhan tests") as engine:
        yield engine.session


@pytest.fixture(scope="module")
def levels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A warehouse of every level (30 full hands, 5 as dealt, 5 as an observer saw them, the sample's score sheet),
    and a copy whose wins lack their turns (as a warehouse made before wins.turn: player_base counts them)."""
    folder = tmp_path_factory.mktemp("levels")
    full = sample(30)
    records = [
        *full,
        *(dict(to_dealt(r), hand_id=r["hand_id"] + "-d") for r in full[:5]),
        *(dict(to_observer(r, i % 4), hand_id=r["hand_id"] + "-o") for i, r in enumerate(full[5:10])),
        *sheet_records(),
    ]
    path = folder / "records.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    run = ingest([str(path)], folder / "wh", workers=1)
    assert run.rejects == 0 and run.records_stored == len(records)
    older = folder / "older"
    shutil.copytree(folder / "wh", older)
    for file in (older / "wins").glob("part-*.parquet"):
        table = pq.read_table(file)
        pq.write_table(table.drop_columns([c for c in ("turn", "source_turn") if c in table.column_names]), file)
    return {"new": folder / "wh", "older": older}


def both(command: list[str]) -> tuple[str, str]:
    """The command's output with the local engine and with Spark (each must succeed)."""
    outputs = []
    for extra in ([], SPARK):
        done = runner.invoke(app, [*command, *extra])
        assert done.exit_code == 0, done.output
        outputs.append(done.stdout)
    return outputs[0], outputs[1]


FILTERS = {"whole": [], "player": ["--player", "{stacker}"], "table": ["--table", "t0002"]}


@pytest.mark.parametrize(
    ("fmt", "where"), [("table", "whole"), ("csv", "whole"), ("json", "whole"), ("json", "player"), ("table", "table")]
)
def test_deals_on_spark_print_what_duckdb_prints(
    room: tuple[Path, dict[str, Any]], session: Any, fmt: str, where: str
) -> None:
    warehouse, labels = room
    stacker = labels["stackers"][0]["player"]
    scope = [a.format(stacker=stacker) for a in FILTERS[where]]
    local, spark = both(["deals", "--warehouse", str(warehouse), "--format", fmt, *scope])
    assert spark == local
    if where != "table":  # the stacker is flagged, with the best-dealt hands as evidence: the whole screen ran
        assert stacker in local and (fmt != "table" or ("YES" in local and "from ready" in local))


@pytest.mark.parametrize(("fmt", "where"), [("table", "whole"), ("json", "whole"), ("json", "table")])
def test_info_cheats_on_spark_print_what_duckdb_prints(
    room: tuple[Path, dict[str, Any]], session: Any, fmt: str, where: str
) -> None:
    warehouse, labels = room
    scope = FILTERS[where]
    local, spark = both(["info-cheats", "--warehouse", str(warehouse), "--format", fmt, "--min-discards", "50", *scope])
    assert spark == local
    if where == "whole":
        assert labels["bots"] and all(bot in local for bot in labels["bots"])


def test_the_models_give_duckdbs_frames(room: tuple[Path, dict[str, Any]], session: Any) -> None:
    """Each model's frame, column types included, under a filter too; a parameter reaches Spark as DuckDB binds it;
    a key that can be null sorts last in both."""
    warehouse, labels = room
    player = labels["bots"][0]
    nulls = (
        "SELECT CAST(CASE WHEN seat = 0 THEN NULL ELSE seat END AS INTEGER) AS seat, CAST(count(*) AS BIGINT) AS n "
        "FROM player_hands WHERE player = $player GROUP BY 1 ORDER BY 1 NULLS LAST"
    )
    for scope in (None, Scope(table="t0002")):
        with connect(warehouse, scope=scope) as con:
            mine, theirs = SparkModels(session, con, warehouse), DuckDBModels(con)
            try:
                for name in ("deal_groups", "discard_choices"):  # over every hand: no range of ids
                    a, b = (
                        mine.run("pipeline.audit", name, lo=None, hi=None),
                        theirs.run("pipeline.audit", name, lo=None, hi=None),
                    )
                    assert a.height > 0 and a.schema == b.schema and a.equals(b), name
                a, b = mine.query(nulls, player=player), theirs.query(nulls, player=player)
                assert a.schema == b.schema and a.equals(b) and a["seat"][-1] is None
            finally:
                mine.close()
    assert spark_text("WHERE p = $player") == "WHERE p = :player"


def test_spark_reads_only_the_committed_files(room: tuple[Path, dict[str, Any]], session: Any, tmp_path: Path) -> None:
    """A file a killed run left in a table's folder (no manifest names it) is read by neither engine."""
    warehouse = tmp_path / "wh"
    shutil.copytree(room[0], warehouse)
    folder = warehouse / "player_hands"
    some = pq.read_table(next(folder.glob("part-*.parquet")))
    pq.write_table(pa.concat_tables([some] * 3), folder / "part-zz-killed.parquet")
    with connect(warehouse) as con:
        models = SparkModels(session, con, warehouse)
        try:
            a = models.run("pipeline.audit", "deal_groups", lo=None, hi=None)
        finally:
            models.close()
        assert a.equals(DuckDBModels(con).run("pipeline.audit", "deal_groups", lo=None, hi=None))
        assert all(".parquet" in str(f) and "killed" not in str(f) for f in models.files["player_hands"])


def test_a_table_spark_does_not_read_is_refused(room: tuple[Path, dict[str, Any]], session: Any) -> None:
    with connect(room[0]) as con:
        models = SparkModels(session, con, room[0])
        try:
            with pytest.raises(ValueError, match="not read on Spark"):
                models.query("SELECT count(*) AS n FROM issues")
            assert models.query("SELECT count(*) AS n FROM hands").equals(pl.DataFrame({"n": [600]}))
        finally:
            models.close()


@pytest.mark.parametrize(
    ("which", "args"),
    [
        ("new", ["--format", "json"]),
        ("new", ["--by", "seat", "--format", "csv"]),
        ("older", ["--format", "json"]),
        ("older", ["--by", "dealer", "--player", "{player}"]),
    ],
)
def test_stats_on_spark_print_what_duckdb_prints(
    levels: dict[str, Path], session: Any, which: str, args: list[str]
) -> None:
    """Every level of record, each metric over the levels it can use; the older warehouse's turns counted from
    its events on Spark as on DuckDB (its figures differ from the new one's in nothing but where they came from)."""
    player = sample(1)[0]["players"][0]
    local, spark = both(["stats", "--warehouse", str(levels[which]), *(a.format(player=player) for a in args)])
    assert spark == local
    if args[:2] == ["--format", "json"]:
        answer = json.loads(local)
        assert {"full", "dealt", "observer", "settlement"} <= set(answer["levels"])
        assert any(p["metrics"]["win_turn"]["n"] for p in answer["players"])


def test_stats_by_month_or_opponent_stay_local(levels: dict[str, Path]) -> None:
    for by in (["--by", "month"], ["--by", "opponent", "--player", "x"]):
        done = runner.invoke(app, ["stats", "--warehouse", str(levels["new"]), *by, *SPARK])
        assert done.exit_code == 2 and "--engine local only" in done.output


@pytest.fixture(scope="module")
def colluders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """500 hands of 8 players: a pair colluding at 0.9 and a team of three at 0.6; ingested."""
    return simulated_room(tmp_path_factory.mktemp("colluders"), "collude=1:0.9,team=3:0.6", 5, 500)


@pytest.mark.parametrize(("fmt", "where"), [("json", "whole"), ("table", "whole"), ("json", "player")])
def test_collusion_on_spark_prints_what_duckdb_prints(
    colluders: tuple[Path, dict[str, Any]], session: Any, fmt: str, where: str
) -> None:
    """Byte for byte: the runs are the local path's, each counted and folded by the same code, and the driver
    merges the runs' sums in their order (on 500 hands, one run). Whole, the screen's every pass runs: the
    pair flagged (so the refit without it and its own judgement), the team reported (the team screen's rounds)."""
    warehouse, labels = colluders
    pair, team = (sorted(c["players"]) for c in labels["colluders"])
    scope = ["--player", pair[0]] if where == "player" else []
    local, spark = both(["collusion", "--warehouse", str(warehouse), "--min-hands", "50", "--format", fmt, *scope])
    assert spark == local
    if where == "player":  # the hands the pair's first player sat in: fewer shared by every pair
        whole = json.loads(
            runner.invoke(
                app, ["collusion", "--warehouse", str(warehouse), "--min-hands", "50", "--format", "json"]
            ).stdout
        )
        answer = json.loads(local)
        assert answer["pairs"] and answer["signals"]["feeding"]["n"] < whole["signals"]["feeding"]["n"]
    elif fmt == "json":
        answer = json.loads(local)
        assert [p["players"] for p in answer["pairs"] if p["flagged"]] == [pair]
        assert [t["players"] for t in answer["teams"] if t["reported"]] == [team]
    else:
        assert "YES" in local and "team: " + " & ".join(team) in local


def test_collusion_runs_on_spark_are_the_local_runs(colluders: tuple[Path, dict[str, Any]], session: Any) -> None:
    """With runs of 64 hands (8 runs): Spark cuts the hands into the local path's runs (in file order), each
    run's rows are the local run's, array for array, the pairs' sums and the hazard are the same floats, and the
    screen (pairs, teams) is the same result, float for float: each pass's runs merged in their order."""
    warehouse, _ = colluders
    with connect(warehouse) as con:
        models = SparkModels(session, con, warehouse)
        try:
            with WarehouseSource(con, chunk_hands=64) as local, SparkSource(models, con, chunk_hands=64) as spark:
                runs = list(zip(local.chunks(), spark.chunks(), strict=True))
                assert len(runs) == 8
                for mine, theirs in runs:
                    for name in mine.__slots__:
                        assert np.array_equal(getattr(mine, name), getattr(theirs, name)), name
                for name in ("a", "x", "rows", "hands", "counts", "exposures"):
                    assert np.array_equal(getattr(local.sums, name), getattr(spark.sums, name)), name
                assert np.array_equal(local.hazard, spark.hazard)
                assert spark.sums.players == local.sums.players and spark.hands == local.hands == 500
            one, other = (screen(con, min_hands=50, teams=True, chunk_hands=64, models=m) for m in (None, models))
        finally:
            models.close()
    assert one.flagged and one.teams
    assert (one.pairs, one.groups, one.min_hands) == (other.pairs, other.groups, other.min_hands)
    assert one.shared.equals(other.shared)


def test_collusion_on_spark_under_a_filter_of_many_runs(colluders: tuple[Path, dict[str, Any]], session: Any) -> None:
    """Under ``--player``, with runs of 64 hands: the local path reads the runs in scope in file order (a stream
    reads its table without the scope and keeps the rows in scope itself: runs.read_runs; it never falls back to
    ranges here) and Spark cuts the same runs (the next 64 hands in scope in file order), so the same rows are
    summed in the same groupings: the same pairs, flags, teams and counts, every float the same."""
    from pipeline.analytics import runs

    def no_ranges(*args: object, **kwargs: object) -> None:
        raise AssertionError("read by ranges")

    warehouse, labels = colluders
    player = sorted(labels["colluders"][0]["players"])[0]
    with connect(warehouse, scope=Scope(player=player)) as con, pytest.MonkeyPatch.context() as patch:
        patch.setattr(runs, "range_runs", no_ranges)
        models = SparkModels(session, con, warehouse)
        try:
            one, other = (screen(con, min_hands=50, teams=True, chunk_hands=64, models=m) for m in (None, models))
        finally:
            models.close()
    assert one.pairs and [r.players for r in one.flagged] == [r.players for r in other.flagged]
    assert one.shared.equals(other.shared)
    for mine, theirs in ((one.pairs, other.pairs), (one.groups, other.groups)):
        assert [r.as_dict() for r in theirs] == [r.as_dict() for r in mine]


def test_collusion_on_spark_reads_every_level_as_duckdb_does(levels: dict[str, Path], session: Any) -> None:
    """A warehouse of every level: the observer's records make the screen read the draws too (pair_streams), the
    score sheets have no events, only wins and payments; Spark's tasks get the same rows, the output byte for
    byte."""
    local, spark = both(["collusion", "--warehouse", str(levels["new"]), "--min-hands", "1", "--format", "json"])
    assert spark == local
    answer = json.loads(local)
    assert answer["pairs"] and {"full", "dealt", "observer", "settlement"} <= set(
        answer["signals"]["feeding"]["levels"]
    )
