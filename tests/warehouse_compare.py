"""Comparing warehouses table by table, for the ingest, crash-recovery and Spark tests."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from schemas.tables import TABLES

RUN_COLUMNS = {"hands": ["ingest_run"], "rejects": ["ingest_run"]}  # columns that name the run, not the data


def contents(root: Path, table: str) -> pa.Table:
    """A table's rows in a canonical order, without the columns that name the run."""
    exclude = RUN_COLUMNS.get(table)
    columns = f"* EXCLUDE ({', '.join(exclude)})" if exclude else "*"
    with duckdb.connect() as con:
        return con.sql(f"SELECT {columns} FROM read_parquet('{root / table}/*.parquet') ORDER BY ALL").to_arrow_table()


def assert_same_warehouse(a: Path, b: Path) -> None:
    """Every data table (the run log aside) holds the same rows in ``a`` as in ``b``."""
    for name in TABLES:
        if name != "ingest_runs":
            left, right = contents(a, name), contents(b, name)
            assert left.num_rows == right.num_rows, f"{name}: {left.num_rows} rows, expected {right.num_rows}"
            assert left.equals(right), f"{name} differs"
