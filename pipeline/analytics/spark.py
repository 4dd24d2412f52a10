"""The screens' heavy pass on Spark (``--engine spark``): a model of ``<package>/sql/`` run by Spark SQL over the
Parquet files of the warehouse's snapshot, its rows back on the driver, where the same statistics run on them.

A screen starts with one aggregation over the big tables (``events``, ``player_hands``) into sufficient
statistics: per group of hands, counts and sums (``deals``: ``pipeline/audit/sql/deal_groups.sql``;
``info-cheats``' dodges: ``discard_choices.sql``). Everything after it (the exact null, the beta-binomial
tails, Benjamini–Yekutieli, the text and JSON) is small and runs on the driver unchanged. So ``--engine spark``
changes only who runs that one query: :class:`SparkModels` is a :class:`pipeline.sql.Models` that runs the
*same SQL text* on Spark SQL, with the same tables, over the same files. Such a model is written in the SQL
both dialects read alike (checked by ``tests/test_spark_screens.py``, which runs each screen both ways):

- ``CAST(x AS BIGINT)``, not ``x::BIGINT`` (Spark 3.5 has no ``::``); ``CAST(x AS STRING)``, not ``VARCHAR``
  (Spark wants a length for it); ``count(*) FILTER (WHERE …)``, ``||``, ``coalesce``, ``length`` and
  ``count(DISTINCT …)`` mean the same in both;
- an ``ORDER BY`` on a column that can be null says ``NULLS LAST`` (DuckDB's default; Spark's is first);
- ``/`` divides as a float in both, but DuckDB's ``sum`` of integers is a ``HUGEINT`` and Spark's a ``BIGINT``,
  ``length`` a ``BIGINT`` in DuckDB and an ``INT`` in Spark: each result column is cast to the type DuckDB gives
  it (read from DuckDB's plan of the same query, which binds it without running it), so the frame is the same;
- no list functions (DuckDB's lists count from 1, Spark's arrays from 0), ``QUALIFY``, ``REPLACE``/``EXCLUDE``
  in a select list, or macros: a model that needs them stays on DuckDB.

Parameters are DuckDB's ``$name``, passed to Spark as its named markers ``:name`` (literals only).

**The same rows.** The DuckDB connection (:func:`pipeline.analytics.queries.connect`) is opened first: its
snapshot of the manifest names the files (:meth:`pipeline.ingest.warehouse.Warehouse.files`), and its reader's
lease keeps them on disk while Spark reads them, whatever an ingest or a compaction commits meanwhile. Each table
is read with its full schema (:data:`schemas.tables.TABLES`): a column an older file lacks reads as null, as in
DuckDB's views. Under a filter (``--since``, ``--player``…) the hands in scope are the driver's (the same
``_scope`` table its views use, one ``hand_id`` a hand), sent to Spark and semi-joined with every table but
``rejects`` and ``ingest_runs``. Not read on Spark: ``issues`` (its view adds the session checks worked out when
read) and the columns DuckDB's ``hands`` view derives for an older warehouse (``hands.base``); no model run here
names them.

**The cost split.** Spark reads the big tables' files and aggregates them in its executors; what reaches the
driver is the model's result: one row per group (a player, a seat, a table, a session, by table shape), some
thousands of rows for a room of thousands of players, not one per hand. The driver keeps its DuckDB connection
for the light queries (the hands in scope, the wall commitments, a flagged group's best-dealt hands, the
anticipation counts over ``hands`` and ``wait_choices``) and the statistics. A cluster runs it with the same
recipe as ``ingest --engine spark`` (README, "Beyond one machine"): the package on the executors, the warehouse at
the same path on every node.

**Runs of hands.** The collusion screen's heavy pass is not one query: it reads a run of hands at a time and
counts it in NumPy (:mod:`pipeline.audit.collusion_spark`). :meth:`SparkModels.runs` gives it the runs the local
path reads (:func:`pipeline.analytics.runs.read_runs`: the next ``size`` hands in scope in file order), each with
its rows of the tables it names, one task a run; what the task makes of them, and what reaches the driver, is the
screen's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import duckdb
import polars as pl
import pyarrow as pa

from pipeline import sql
from pipeline.analytics.runs import Stream
from pipeline.analytics.scope import WHOLE
from pipeline.ingest.engines.spark import SparkEngine, pack, unpack
from pipeline.ingest.warehouse import Warehouse
from schemas.tables import TABLES

# The tables a model run on Spark may name: every table but those whose DuckDB view adds rows worked out when read.
SPARK_TABLES = tuple(name for name in TABLES if name not in ("issues", "ingest_runs"))

# Rows of a result go to the driver as Arrow batches of this many (ingest's 16 are for rows that are whole chunks).
# A join's side is broadcast only from the size adaptive execution measured when it ran, never from the planner's
# estimate (the compressed Parquet size: 20,000 hands' events are a few MB on disk and far more in memory, and
# player_base's first join on them broadcast that side and ran out of the driver's default 1 GB).
SETTINGS = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": "10000",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "10MB",
}

# DuckDB's functions (and macros) a model names only in a branch that Spark never takes (player_base.sql's grp of
# $by 'month', refused with --engine spark): on Spark, functions that fail if ever called, so that the text parses.
DUCKDB_ONLY = ("local_time", "strftime")

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# DuckDB's result types, as Polars types (what DuckDB's .pl() gives each)
_POLARS: dict[str, pl.DataType] = {
    "BIGINT": pl.Int64(),
    "INTEGER": pl.Int32(),
    "SMALLINT": pl.Int16(),
    "TINYINT": pl.Int8(),
    "HUGEINT": pl.Int128(),
    "DOUBLE": pl.Float64(),
    "FLOAT": pl.Float32(),
    "VARCHAR": pl.String(),
    "BOOLEAN": pl.Boolean(),
}


def spark_text(text: str, *, nulls: Collection[str] = ()) -> str:
    """A model's text for Spark SQL: DuckDB's parameters ``$name`` as Spark's named markers ``:name``, those
    named in ``nulls`` (bound to None) as the literal ``NULL``: Spark binds no null.

    >>> spark_text("SELECT * FROM t WHERE $player IS NULL OR player = $player")
    'SELECT * FROM t WHERE :player IS NULL OR player = :player'
    >>> spark_text("SELECT * FROM t WHERE $lo IS NULL OR id BETWEEN $lo AND $hi", nulls={"lo", "hi"})
    'SELECT * FROM t WHERE NULL IS NULL OR id BETWEEN NULL AND NULL'
    """
    return _PARAM.sub(lambda m: "NULL" if m.group(1) in nulls else f":{m.group(1)}", text)


class SparkModels:
    """:class:`pipeline.sql.Models` on Spark: each model's tables as Spark views over the files of ``con``'s
    snapshot (``con``: a connection of :func:`pipeline.analytics.queries.connect` on the warehouse at ``root``),
    registered as a query first names them and dropped by :meth:`close`."""

    def __init__(self, session: Any, con: duckdb.DuckDBPyConnection, root: str | Path) -> None:
        self.session = session
        self.con = con
        self.files = Warehouse(root).files(con)
        self._views: set[str] = set()
        self._scope: Any = None
        for name in DUCKDB_ONLY:
            session.udf.register(name, partial(_duckdb_only, name))
        if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_scope'").fetchall() != [(0,)]:
            hands = con.sql("SELECT hand_id FROM main._scope").to_arrow_table()
            self._scope = session.createDataFrame(hands.to_pandas())

    def run(self, package: str, name: str, **params: Any) -> pl.DataFrame:
        return self.query(sql.load_sql(package, name), **params)

    def query(self, text: str, **params: Any) -> pl.DataFrame:
        """``text`` (DuckDB's SQL, in the dialect both read alike: see the module) run by Spark; the frame DuckDB
        would give, column names and types."""
        for name in {w.lower() for w in _WORD.findall(text)} & set(TABLES):
            self._view(name)
        bound = {k: v for k, v in params.items() if v is not None}
        frame = self.session.sql(spark_text(text, nulls=set(params) - set(bound)), args=bound or None)
        out = pl.from_arrow(_to_arrow(frame))
        assert isinstance(out, pl.DataFrame)
        described = self.con.execute(f"DESCRIBE {text}", params or None).fetchall()
        names = [row[0] for row in described]
        if out.columns != names:
            raise ValueError(f"Spark's columns {out.columns} are not DuckDB's {names}")
        return out.cast({row[0]: _POLARS[row[1]] for row in described if row[1] in _POLARS})

    @contextmanager
    def table(self, name: str, rows: pl.DataFrame) -> Iterator[None]:
        """``rows`` as Spark's view ``name`` (from the rows, so that a null stays a null, not a NaN as through
        pandas), and on the DuckDB connection too (whose plan of a query gives its result's types)."""
        from pyspark.sql.pandas.types import from_arrow_schema

        arrow = rows.to_arrow(compat_level=pl.CompatLevel.oldest())  # large_string, not string_view
        frame = self.session.createDataFrame(rows.rows(), schema=from_arrow_schema(arrow.schema))
        frame.createOrReplaceTempView(name)
        self.con.register(name, arrow)
        try:
            yield
        finally:
            self.con.unregister(name)
            self.session.catalog.dropTempView(name)

    def _view(self, name: str) -> None:
        if name in self._views:
            return
        self._frame(name).createOrReplaceTempView(name)
        self._views.add(name)

    def _frame(self, name: str, *, placed: bool = False) -> Any:
        """The rows of table ``name`` in scope; ``placed``: with each row's place in its file (``file``, Spark's
        path of it, and ``row``, its index there)."""
        if name not in SPARK_TABLES:
            raise ValueError(f"table {name!r} is not read on Spark (its view adds rows worked out in DuckDB)")
        from pyspark.sql.pandas.types import from_arrow_schema

        schema = from_arrow_schema(TABLES[name])
        files = [str(f) for f in self.files[name]]
        frame = self.session.read.schema(schema).parquet(*files) if files else self.session.createDataFrame([], schema)
        if placed:
            frame = frame.selectExpr("*", "_metadata.file_path AS file", "_metadata.row_index AS row")
        if self._scope is not None and name not in WHOLE:
            frame = frame.join(self._scope, on="hand_id", how="left_semi")
        return frame

    def runs(self, streams: Sequence[Stream], size: int) -> Any:
        """The runs of ``size`` hands that :func:`pipeline.analytics.runs.read_runs` cuts (the next ``size`` hands
        in scope, in the order the files of ``hands`` hold them, the files in commit order), each with the rows of
        every stream of ``streams`` (``hands`` first, as there) whose hand is one of the run's: a Spark RDD of
        ``(run, {table: Arrow table})``, the runs numbered from 0 in that order, each in its own partition (a
        task of its own; partition ``k`` holds run ``k``). A table with no row in a run is there, empty.

        Each hand's run is its place in file order: the rows of ``hands`` in scope are counted per file (one
        row a file reaches the driver), the driver adds the counts up in the files' order into each file's
        first place, and each hand's place is its file's first place plus its rank in the file (its row index
        there). Every other table's rows are given their hand's run by a join, and each run's rows of each table
        are packed together (Arrow IPC) before a run's tables meet in one task."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F
        from pyspark.sql.pandas.types import to_arrow_schema

        if not streams or streams[0].table != "hands":
            raise ValueError("the first stream must be the hands one")
        size = max(1, size)
        hands = self._frame("hands", placed=True).select("hand_id", "file", "row")
        counted = {row["file"]: int(row["count"]) for row in hands.groupBy("file").count().collect()}
        order = {_local_path(f): k for k, f in enumerate(self.files["hands"])}
        offsets, first = [], 0
        for file in sorted(counted, key=lambda f: order[_local_path(f)]):
            offsets.append((file, first))
            first += counted[file]
        runs_total = (first + size - 1) // size
        if not runs_total:
            return self.session.sparkContext.emptyRDD()
        starts = self.session.createDataFrame(offsets, "file STRING, first BIGINT")
        place = F.col("first") + F.row_number().over(Window.partitionBy("file").orderBy("row")) - 1
        run_of = hands.join(F.broadcast(starts), "file").select(
            "hand_id", F.floor(place / size).cast("int").alias("run")
        )
        packed, schemas = [], {}
        for stream in streams:
            frame = self._frame(stream.table).selectExpr(*(c.strip() for c in stream.columns.split(",")))
            if stream.where:
                frame = frame.where(stream.where)
            schemas[stream.table] = to_arrow_schema(frame.schema)
            rows = frame.join(run_of, "hand_id")
            packed.append(rows.groupBy("run").applyInArrow(_packer(stream.table), _PACKED))
        together = packed[0]
        for more in packed[1:]:
            together = together.unionByName(more)
        return (
            together.rdd.map(lambda row: (row["run"], (row["table"], bytes(row["data"]))))
            .groupByKey(runs_total, lambda run: run)
            .mapValues(partial(_unpacked, schemas))
        )

    def close(self) -> None:
        """Drop the views and functions registered here (a session that outlives this, a notebook's, keeps none)."""
        for name in self._views:
            self.session.catalog.dropTempView(name)
        self._views.clear()
        for name in DUCKDB_ONLY:
            self.session.sql(f"DROP TEMPORARY FUNCTION IF EXISTS {name}")


# One run's rows of one table, packed (SparkModels.runs): as Spark's DDL and as Arrow
_PACKED = "run INT, table STRING, data BINARY"
_PACKED_SCHEMA = pa.schema([("run", pa.int32()), ("table", pa.string()), ("data", pa.binary())])


def _packer(table: str) -> Callable[[pa.Table], pa.Table]:
    """The task that packs one run's rows of ``table`` (a group of :meth:`SparkModels.runs`) as one row: the run,
    the table, the rows as an Arrow IPC stream. A function of its own, not a ``partial``: pyspark reads the kind of
    a grouped task from its type hints, and fails on a ``partial``'s (an ``UnboundLocalError`` in ``applyInArrow``)."""

    def packed(rows: pa.Table) -> pa.Table:
        run = rows.column("run")[0].as_py()
        data = pack(rows.drop_columns(["run"]))
        return pa.table({"run": [run], "table": [table], "data": [data]}, schema=_PACKED_SCHEMA)

    return packed


def _unpacked(schemas: dict[str, pa.Schema], parts: Iterable[tuple[str, bytes]]) -> dict[str, pa.Table]:
    """A run's packed tables, every one of ``schemas`` (a table with no row in the run: empty)."""
    tables = {name: unpack(data) for name, data in parts}
    return {name: tables.get(name, schema.empty_table()) for name, schema in schemas.items()}


def _local_path(path: str | Path) -> str:
    """A file's absolute path on this machine, from Spark's URI of it (``file:/w/x.parquet``) or a path."""
    text = str(path)
    if "://" in text or text.startswith("file:"):
        text = unquote(urlparse(text).path)
    return str(Path(text).resolve())


def _duckdb_only(name: str, *_: object) -> None:
    raise ValueError(f"{name} is DuckDB's: this model's branch that calls it runs on DuckDB only")


def _to_arrow(frame: Any) -> pa.Table:
    """A Spark DataFrame's rows as Arrow (``toArrow`` from Spark 4; its private predecessor on 3.5)."""
    if hasattr(frame, "toArrow"):
        return frame.toArrow()
    batches = frame._collect_as_arrow()
    schema = batches[0].schema if batches else None
    if schema is None:
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(frame.schema)
    return pa.Table.from_batches(batches, schema=schema)


@contextmanager
def spark_models(
    con: duckdb.DuckDBPyConnection,
    root: str | Path,
    *,
    master: str | None = None,
    conf: dict[str, str] | None = None,
    app: str = "xuezhan",
) -> Iterator[SparkModels]:
    """:class:`SparkModels` on a Spark session for the block (started and stopped here, or a running one used
    as it is: :class:`pipeline.ingest.engines.spark.SparkEngine`); ``master``: a Spark master URL (``None``:
    spark-submit's, or ``local[*]``)."""
    with SparkEngine(master, {**SETTINGS, **(conf or {})}, app=app) as engine:
        models = SparkModels(engine.session, con, root)
        try:
            yield models
        finally:
            models.close()
