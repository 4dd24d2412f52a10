"""The screens' heavy pass on Spark (``deals``/``info-cheats --engine spark``, :mod:`pipeline.analytics.spark`) against
DuckDB on one simulated room (a stacker, a player who sees every hand): the same output, byte for byte, in every
format, over the whole warehouse and under a filter; the models' frames equal, column types included; the files a
killed run left uncommitted read by neither; a table Spark does not read refused.

One Spark session (``local[2]``) for the module: the commands find it running and use it as it is. Skipped, with
the reason, only where pyspark or Java 17+ is missing (tests/spark_support.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rooms import simulated_room
from spark_support import spark_missing
from typer.testing import CliRunner

from cli import app
from pipeline.analytics.queries import connect
from pipeline.analytics.scope import Scope
from pipeline.analytics.spark import SparkModels, spark_text
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
                for name in ("deal_groups", "discard_choices"):
                    a, b = mine.run("pipeline.audit", name), theirs.run("pipeline.audit", name)
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
            a = models.run("pipeline.audit", "deal_groups")
        finally:
            models.close()
        assert a.equals(DuckDBModels(con).run("pipeline.audit", "deal_groups"))
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
