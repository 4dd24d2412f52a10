"""Warehouses in the orders the runs of hands (pipeline/analytics/runs.py) must be exact for, for the tests of the
screens summed a run at a time: ids that interleave in the files (records ingested in an order their ids do not
sort in), and a table in another order than ``hands`` (read again by ranges of ids)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import duckdb

from pipeline.analytics.queries import connect
from pipeline.ingest.run import ingest
from pipeline.simulate.tables import SimConfig, write


def shuffled_warehouse(folder: Path, config: SimConfig, *, seed: int = 2) -> Path:
    """``config``'s simulated records ingested in a shuffled order: the files hold the hands as ingested, their
    ids unsorted."""
    records = folder / "games.jsonl.gz"
    write(config, records)
    lines = gzip.decompress(records.read_bytes()).splitlines(keepends=True)
    random.Random(seed).shuffle(lines)
    shuffled = folder / "shuffled.jsonl"
    shuffled.write_bytes(b"".join(lines))
    ingest([str(shuffled)], folder / "wh", workers=1)
    return folder / "wh"


def out_of_order(
    warehouse: Path, tables: tuple[str, ...], shuffled: str, *, seed: int = 3
) -> duckdb.DuckDBPyConnection:
    """A connection whose ``tables`` (``hands`` among them) are copies of the warehouse's, ``shuffled`` in another
    order than ``hands`` (its rows sorted at random): the runs in file order cannot give its rows to their hands'
    runs, and are read again by ranges."""
    out = duckdb.connect()
    with connect(warehouse) as con:
        for name in tables:
            frame = con.sql(f"SELECT * FROM {name}").arrow().read_all()
            if name == shuffled:
                rows = list(range(frame.num_rows))
                random.Random(seed).shuffle(rows)
                frame = frame.take(rows)
            out.register("frame", frame)
            out.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
            out.unregister("frame")
    return out
