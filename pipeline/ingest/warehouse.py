"""The warehouse on disk: Parquet folders, one per table, and a DuckDB catalogue over them.

Layout under the warehouse directory ``DIR``::

    DIR/hands/part-<batch>.parquet      one file per table per committed batch
    DIR/<table>/...                     player_hands, events, wins, payments, issues, rejects, ingest_runs
    DIR/spill/<sha256>.line             raw lines too long to keep inline in ``rejects``
    DIR/_tmp/                           files being written (never read)
    DIR/warehouse.duckdb                views over the folders, for any DuckDB client
    DIR/.lock                           held by the one run writing to the warehouse

Crash safety: a batch's files are written under ``_tmp`` and moved into place with an atomic rename,
``hands`` last. The ``hands`` file is the batch's commit mark: at the start of every run, files of a batch
with no ``hands`` file (a run killed part-way through a commit) are deleted, and ``_tmp`` and half-written
spill files are removed. Since a record counts as stored only once its ``hands`` row is in place, running
again after ``kill -9`` stores exactly what the killed run did not.

One run at a time: :meth:`Warehouse.open` takes a POSIX lock on ``DIR/.lock`` (released by the kernel when
the process dies, so a killed run never leaves it stuck) and a writer in another process gets
:class:`WarehouseBusy` instead of deleting the first one's files in flight as "uncommitted". (POSIX locks
belong to a process: two ``Warehouse`` objects in one process do not exclude each other.)
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.ingest.read import PARTIAL
from schemas.tables import TABLES

EMPTY_BATCH = "0-empty"
SPILL = "spill"
_BATCH = re.compile(r"^part-(.+)\.parquet$")
COMPRESSION = "zstd"


class Encoded:
    """A table already in its stored form: the Parquet bytes of its file (cast to the table's schema), so that
    the process that commits it only has to write them. Built where the rows are made: the local engine's
    workers encode the large record tables, which keeps that work off the one process that writes."""

    __slots__ = ("num_rows", "parquet")

    def __init__(self, name: str, table: pa.Table) -> None:
        sink = pa.BufferOutputStream()
        pq.write_table(table.cast(TABLES[name]), sink, compression=COMPRESSION)
        self.num_rows: int = table.num_rows
        self.parquet: bytes = sink.getvalue().to_pybytes()

    def table(self) -> pa.Table:
        return pq.read_table(pa.BufferReader(self.parquet))


class WarehouseBusy(RuntimeError):
    """Another process is writing to the warehouse."""


class Warehouse:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.tmp = self.root / "_tmp"
        self.spill = self.root / SPILL
        self.catalogue_path = self.root / "warehouse.duckdb"
        self._lock: int | None = None

    # ------------------------------------------------------------------------------------ setup
    def open(self) -> Warehouse:
        """Lock the warehouse for writing, create the folders (with an empty file per table, so every view
        has a file to read) and remove what a killed run left half-written."""
        self.root.mkdir(parents=True, exist_ok=True)
        if self._lock is None:
            self._take_lock()
        for name in TABLES:
            (self.root / name).mkdir(exist_ok=True)
        self.spill.mkdir(exist_ok=True)
        for partial in self.spill.glob(f"{PARTIAL}*"):
            partial.unlink()
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir()
        self._drop_uncommitted()
        if not (self.root / "hands" / f"part-{EMPTY_BATCH}.parquet").exists():
            self.write_batch(EMPTY_BATCH, {name: schema.empty_table() for name, schema in TABLES.items()})
        else:
            self._upgrade_empty_files()
        return self

    def _upgrade_empty_files(self) -> None:
        """Schema evolution: a column added to a table after a warehouse was made appears in its views as
        null for the old rows, because every view reads with ``union_by_name`` and the table's empty file is
        rewritten here with the current schema."""
        for name, schema in TABLES.items():
            path = self.root / name / f"part-{EMPTY_BATCH}.parquet"
            if path.exists() and not pq.read_schema(path).remove_metadata().equals(schema.remove_metadata()):
                staged = self.tmp / f"{name}-empty.parquet"
                pq.write_table(schema.empty_table(), staged)
                os.replace(staged, path)

    def close(self) -> None:
        """Release the write lock."""
        fd = getattr(self, "_lock", None)  # getattr: __del__ may see a half-built object
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the POSIX lock
            self._lock = None

    def __enter__(self) -> Warehouse:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # ``Warehouse(d).open().build_catalogue()`` must not keep the lock
        self.close()

    def _take_lock(self) -> None:
        # lockf (POSIX record lock), not flock: the worker processes forked later inherit the descriptor
        # but not the lock, so an orphaned worker of a killed run cannot keep the warehouse locked.
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise WarehouseBusy(f"{self.root} is being written by another ingest run") from None
        self._lock = fd

    def _drop_uncommitted(self) -> None:
        committed = {m.group(1) for f in (self.root / "hands").iterdir() if (m := _BATCH.match(f.name))}
        for name in TABLES:
            if name in ("hands", "ingest_runs"):
                continue
            for f in (self.root / name).iterdir():
                m = _BATCH.match(f.name)
                if m and m.group(1) not in committed:
                    f.unlink()

    # ------------------------------------------------------------------------------------ writing
    def write_batch(self, batch: str, tables: dict[str, pa.Table | Encoded]) -> None:
        """Write one batch: every table's file into ``_tmp``, then into place, ``hands`` last (the commit).

        ``ingest_runs`` is written only with the empty batch that starts a warehouse; a run's own row is
        :meth:`write_run`."""
        staged = []
        for name in TABLES:
            if name == "ingest_runs" and batch != EMPTY_BATCH:
                continue
            table = tables.get(name, TABLES[name].empty_table())
            if name != "hands" and table.num_rows == 0 and batch != EMPTY_BATCH:
                continue
            path = self.tmp / f"{name}-part-{batch}.parquet"
            if isinstance(table, Encoded):
                path.write_bytes(table.parquet)
            else:
                pq.write_table(table.cast(TABLES[name]), path, compression=COMPRESSION)
            staged.append((path, self.root / name / f"part-{batch}.parquet"))
        for src, dst in sorted(staged, key=lambda p: p[1].parent.name == "hands"):
            os.replace(src, dst)

    def write_run(self, run_id: str, row: dict[str, object]) -> None:
        table = pa.Table.from_pylist([row], schema=TABLES["ingest_runs"])
        path = self.tmp / f"run-{run_id}.parquet"
        pq.write_table(table, path)
        os.replace(path, self.root / "ingest_runs" / f"part-{run_id}.parquet")

    # ------------------------------------------------------------------------------------ reading
    def glob(self, table: str) -> str:
        return str(self.root / table / "*.parquet")

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with every table as a view over its Parquet folder."""
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")  # our commands draw their own progress
        for name in TABLES:
            con.execute(self._view_sql(name))
        return con

    def _view_sql(self, name: str) -> str:
        path = self.glob(name).replace("'", "''")  # a literal: DuckDB views take no bound parameters
        return f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{path}', union_by_name = true)"

    def known_hands(self) -> dict[str, str]:
        """hand_id → record_sha256 of every stored record."""
        with duckdb.connect() as con:  # closed at once: the worker processes are forked after this
            rows = con.execute("SELECT hand_id, record_sha256 FROM read_parquet(?)", [self.glob("hands")]).fetchall()
        return dict(rows)

    def known_rejects(self) -> set[tuple[str, int, str]]:
        """(source_file, source_line, sha256) of every stored reject."""
        with duckdb.connect() as con:
            rows = con.execute(
                "SELECT source_file, source_line, sha256 FROM read_parquet(?)", [self.glob("rejects")]
            ).fetchall()
        return {(f, n, s) for f, n, s in rows}

    def build_catalogue(self) -> None:
        """(Re)create ``warehouse.duckdb``: one view per table over its folder (absolute paths)."""
        tmp = self.tmp / f"catalogue-{uuid.uuid4().hex}.duckdb"
        con = duckdb.connect(str(tmp))
        try:
            for name in TABLES:
                con.execute(self._view_sql(name))
        finally:
            con.close()
        os.replace(tmp, self.catalogue_path)
        wal = tmp.with_name(tmp.name + ".wal")
        if wal.exists():
            wal.unlink()
