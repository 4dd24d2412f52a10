"""The SQL models shipped with the package: ``<package>/sql/<name>.sql``, read once and run on DuckDB with every
value bound as a parameter.

Four packages carry models: ``pipeline.analytics`` (the ``stats`` figures), ``pipeline.audit`` (findings, pair
features and evidence), ``pipeline.ingest`` (the session checks the warehouse's ``issues`` view adds) and
``dashboards`` (the few charts the analytics have no model for).

>>> load_sql("pipeline.analytics", "warehouse_counts").lstrip().startswith("--")
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import cache
from importlib import resources
from typing import Any, Protocol

import duckdb
import polars as pl


@cache
def load_sql(package: str, name: str) -> str:
    """The text of ``<package>/sql/<name>.sql`` (cached: the files do not change while the process runs)."""
    return resources.files(package).joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")


def count_rows(con: duckdb.DuckDBPyConnection, package: str, name: str, **params: Any) -> int:
    """How many rows ``<package>/sql/<name>.sql`` gives, counted in DuckDB (none of them fetched)."""
    row = con.execute(f"SELECT count(*) FROM ({load_sql(package, name)}\n)", params).fetchone()
    return int(row[0]) if row else 0


@contextmanager
def hands_table(con: duckdb.DuckDBPyConnection, table: str, package: str, name: str, **params: Any) -> Iterator[int]:
    """The ``hand_id`` column of ``<package>/sql/<name>.sql``'s rows as the temporary table ``table`` for the
    block (the ids stay in DuckDB: a million of them as Python objects held 1 GB), which yields their number;
    dropped after."""
    con.execute(f'CREATE OR REPLACE TEMP TABLE "{table}" AS SELECT hand_id FROM ({load_sql(package, name)}\n)', params)
    try:
        row = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()
        yield int(row[0]) if row else 0
    finally:
        con.execute(f'DROP TABLE IF EXISTS "{table}"')


def run_sql(con: duckdb.DuckDBPyConnection, package: str, name: str, **params: Any) -> pl.DataFrame:
    """Run ``<package>/sql/<name>.sql`` with named parameters; the result as a Polars frame."""
    return con.sql(load_sql(package, name), params=params).pl()


class Models(Protocol):
    """Where a screen's heavy pass runs: a model of ``<package>/sql/`` (or a query) over the warehouse's tables,
    its rows as a Polars frame. :class:`DuckDBModels` on the connection's views; ``--engine spark``'s
    :class:`pipeline.analytics.spark.SparkModels` on Spark SQL over the same snapshot's Parquet files."""

    def run(self, package: str, name: str, **params: Any) -> pl.DataFrame: ...

    def query(self, text: str, **params: Any) -> pl.DataFrame: ...

    def table(self, name: str, rows: pl.DataFrame) -> AbstractContextManager[None]:
        """``rows`` (a small table of the driver's: a first pass's totals) readable as ``name`` by the models
        run in the block."""
        ...


class DuckDBModels:
    """:class:`Models` on a DuckDB connection (the analytics' :func:`pipeline.analytics.queries.connect`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def run(self, package: str, name: str, **params: Any) -> pl.DataFrame:
        return run_sql(self.con, package, name, **params)

    def query(self, text: str, **params: Any) -> pl.DataFrame:
        return self.con.sql(text, params=params).pl()

    @contextmanager
    def table(self, name: str, rows: pl.DataFrame) -> Iterator[None]:
        self.con.register(name, rows.to_arrow())
        try:
            yield
        finally:
            self.con.unregister(name)
