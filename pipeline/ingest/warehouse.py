"""The warehouse on disk: Parquet folders, one per table, a manifest of the committed batches, and a DuckDB
catalogue over them. (``docs/WAREHOUSE.md`` says the same for users, with what each guarantee is tested by.)

Layout under the warehouse directory ``DIR``::

    DIR/hands/part-<batch>.parquet      one file per table per batch (a table with no rows in a batch: none)
    DIR/<table>/...                     player_hands, events, wins, payments, issues, rejects
    DIR/ingest_runs/part-<run>.parquet  one row per run, written when the run starts and again when it ends
    DIR/_manifest.parquet               the committed batches: one row each (batch id, run, its line counts);
                                        rows ``counts-<run>``: the counts of a run's compacted batches
    DIR/spill/<sha256>.line             raw lines too long to keep inline in ``rejects``
    DIR/_tmp/                           files being written (never read)
    DIR/warehouse.duckdb                views over the folders, for any DuckDB client
    DIR/.lock                           held by the one run writing to the warehouse
    DIR/.readers                        a shared lock per reader's snapshot: superseded files stay while held

The commit protocol. A batch's files are written into ``_tmp``, fsynced, and renamed into their folders
(whose entries are then fsynced); then the manifest, the list of committed batches with this one added, is
written into ``_tmp``, fsynced and renamed over ``_manifest.parquet``, and ``DIR`` is fsynced. That one
rename is the commit point: a batch is committed if and only if the manifest names it. A file in a table
folder that the manifest does not name (its batch was being committed when the run died) is part of
nothing: every view reads only the files of committed batches, so readers see each batch whole or not at
all whatever moment a run is killed, and never need a writer to repair anything. (The next writer's
:meth:`Warehouse.open` deletes such files, and ``_tmp`` and half-written spill files, as housekeeping.)

The views. Each table's view reads its folder (``read_parquet`` of ``<folder>/*.parquet`` with
``union_by_name``, so a column added later reads as null in old files) and keeps the rows of files the
manifest names::

    SELECT * EXCLUDE (_file) FROM read_parquet('DIR/hands/*.parquet', union_by_name = true, filename = '_file')
    WHERE parse_filename(_file) IN (SELECT 'part-' || batch || '.parquet' FROM read_parquet('DIR/_manifest.parquet'))

plain SQL that any DuckDB client runs on ``warehouse.duckdb``, which is written once per run (atomically)
and never changes with the data: the manifest is read when a query runs. ``ingest_runs`` is the run files,
except that a run with no ``finished_at`` (still running, or killed) has the counts of its committed batches
from the manifest, so that ``lines_read = records_stored + rejects + duplicates`` holds for every run and
every stored hand has its run's row, whenever a run stops. :meth:`Warehouse.connect` (what the commands use)
reads the manifest once, when it connects: one snapshot for every query on that connection, even while an
ingest commits. (A plain DuckDB client reads the manifest per table in a query, so a query running while a
batch commits may see it in one table and not yet in another; after a kill there is no such moment.)

Compaction (:meth:`Warehouse.compact`). A batch holds at most 500 lines, so a big warehouse has hundreds of
small files per table, each opened by every query. At the end of a run that left more than
:data:`COMPACT_AFTER` batches not compacted yet, ingest folds them into one batch ``compact-<time>-<id>``, one
file per table, the rows in commit order; ``xuezhan compact`` folds everything. It is committed like a batch:
files through ``_tmp`` into their folders, then one manifest rename that drops the folded batches, names the
compacted one, and keeps each folded run's counts as a row ``counts-<run id>`` that names no files (so the
``ingest_runs`` view still sums an unfinished run's lines from the manifest); then the folded files are
removed (a kill first: they are named by nothing, and the next :meth:`Warehouse.open` removes them). So a
kill leaves the old batches or the compacted one, never both counted. :meth:`Warehouse.connect` lists its
snapshot's files in the views (rather than reading the folders).

Readers keep their snapshot. A connection holds a shared ``flock`` on ``DIR/.readers`` from before it reads
the manifest until it is garbage-collected (its process ends, at the latest); a writer removes files that no
manifest names (a compaction's folded batches, a killed run's half batch) only while it can take that lock
exclusively, for a moment, without waiting. So a report that opened its snapshot before a compaction committed
reads the folded files to its end; they are removed by the next compaction, ingest or ``compact`` that finds
no reader. (``flock``, not ``lockf``: a lock per open file, so that a reader and a writer in one process, or
two readers, do not share or release each other's.)

Paths: a warehouse path holding glob characters (``[``, ``*``, ``?``) is escaped in every pattern.

What survives a power cut: every batch whose manifest rename had returned (its files, their names, the
manifest and its name were fsynced first), and the side files its rejects name (fsynced before they get
their name); a batch being committed is lost whole, like one killed.

One run at a time: :meth:`Warehouse.open` takes a POSIX lock on ``DIR/.lock`` (released by the kernel when
the process dies, so a killed run never leaves it stuck) and a writer in another process gets
:class:`WarehouseBusy` instead of deleting the first one's files in flight as "uncommitted". (POSIX locks
belong to a process: two ``Warehouse`` objects in one process do not exclude each other.)
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import uuid
import weakref
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import sql
from pipeline.ingest.read import PARTIAL, fsync_dir
from pipeline.signals import signals_held
from schemas.tables import DERIVED, TABLES

EMPTY_BATCH = "0-empty"
SPILL = "spill"
MANIFEST = "_manifest.parquet"
READERS = ".readers"  # what a reader holds a shared lock on while it reads a snapshot (see _reader_lease)
_BATCH = re.compile(r"^part-(.+)\.parquet$")
COMPRESSION = "zstd"
COUNTS = ("lines_read", "records_stored", "records_invalid", "rejects", "duplicates", "conflicts")
MANIFEST_SCHEMA = pa.schema(
    [pa.field("batch", pa.string(), nullable=False), ("run_id", pa.string()), *((c, pa.int64()) for c in COUNTS)]
)
COMPACTED = "compact-"  # a batch made by compaction: its files hold the rows of many batches, of several runs
RUN_COUNTS = "counts-"  # a manifest row naming no files: the counts of a run's batches that were compacted
COMPACT_AFTER = 16  # ingest compacts at the end of a run when more batches than this are not compacted yet
# Rows per row group of a compacted file (or fewer, where their bytes reach MERGE_BYTES first). Every reader parses
# each file's footer, one entry per row group and column: at 131,072 rows, 4,505 row groups of `events` on 5M hands
# held 120 MB more from connect on than the 200k warehouse's (then 83 MB more parsed again by `written_before`); at
# 1,048,576, 19 MB more. DuckDB still reads the row groups of a big file in parallel.
ROW_GROUP_ROWS = 1024 * 1024
MERGE_BYTES = 64 << 20  # bytes of rows a compaction holds before it writes them (a smaller row group)


class Encoded:
    """A table already in its stored form: the Parquet bytes of its file (cast to the table's schema), so that
    the process that commits it only has to write them. Built where the rows are made: the local engine's
    workers encode every record table, which keeps that work off the one process that writes."""

    __slots__ = ("num_rows", "parquet")

    def __init__(self, name: str, table: pa.Table) -> None:
        self.num_rows: int = table.num_rows
        self.parquet: bytes = parquet_bytes(table.cast(TABLES[name]))

    @classmethod
    def of_file(cls, num_rows: int, parquet: bytes) -> Encoded:
        """A table whose file was written elsewhere, row group by row group (a table too big to hold as rows)."""
        out = cls.__new__(cls)
        out.num_rows, out.parquet = num_rows, parquet
        return out

    def table(self) -> pa.Table:
        return read_parquet(pa.BufferReader(self.parquet))


def read_parquet(source: str | Path | pa.NativeFile) -> pa.Table:
    """One Parquet file, whole, decoded on this thread: the reads of ingest are a small file each (a batch, the
    manifest), or one of many files merged on threads of their own (:func:`_merge_all`), where Arrow's pool
    would only add threads that wait on each other (the same wall time for twice the CPU, measured on the events
    of 20,000 hands). Not ``pq.read_table``, which makes a ``pyarrow.dataset`` of each file."""
    with pq.ParquetFile(source) as parquet:
        return parquet.read(use_threads=False)


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=COMPRESSION)
    return sink.getvalue().to_pybytes()


class WarehouseBusy(RuntimeError):
    """Another process is writing to the warehouse."""


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path`` and fsync it (the caller renames it into place)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise
    finally:
        os.close(fd)


def glob_escape(path: str) -> str:
    """``path`` as a DuckDB glob pattern matching just itself (``[`` → ``[[]``, ``*`` → ``[*]``, ``?`` → ``[?]``)."""
    return "".join(f"[{c}]" if c in "[*?" else c for c in path)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"  # DuckDB views take no bound parameters


def has_files(batch: str) -> bool:
    """Whether a manifest row's batch has files (every batch but the empty start and the run counts rows).

    >>> has_files("20261202T174600-fd9904d9-000001"), has_files(EMPTY_BATCH), has_files("counts-r1")
    (True, False, False)
    """
    return batch != EMPTY_BATCH and not batch.startswith(RUN_COUNTS)


def is_run_counts(row: dict[str, object]) -> bool:
    return str(row["batch"]).startswith(RUN_COUNTS)


def fold_counts(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """The manifest rows' counts summed per run, as ``counts-<run_id>`` rows (runs in the order they first
    appear; rows without a run or without counts, such as a compacted batch's, add nothing).

    >>> r = dict.fromkeys(COUNTS[1:], 0)
    >>> fold_counts([{"batch": "b1", "run_id": "r", "lines_read": 2, **r}, {"batch": "b2", "run_id": "r",
    ...     "lines_read": 3, **r}, {"batch": "c", "run_id": None, **dict.fromkeys(COUNTS)}])[0]["lines_read"]
    5
    """
    sums: dict[str, dict[str, object]] = {}
    for row in rows:
        run = row["run_id"]
        if run is None or all(row[c] is None for c in COUNTS):
            continue
        into = sums.setdefault(str(run), {"batch": f"{RUN_COUNTS}{run}", "run_id": run, **dict.fromkeys(COUNTS)})
        for c in COUNTS:
            if row[c] is not None:
                into[c] = int(into[c] or 0) + int(row[c])  # type: ignore[call-overload]
    return list(sums.values())


def merge_files(files: list[Path], schema: pa.Schema, path: Path) -> None:
    """Write the rows of ``files`` (in order, each conformed to ``schema``: a column it lacks reads as null)
    into one new Parquet file ``path``, fsynced; row groups of :data:`ROW_GROUP_ROWS` rows, or fewer where
    their bytes reach :data:`MERGE_BYTES` first (the rejects' raw lines: 380 rejected lines of 4 MiB were held
    at once, 1.9 GB, issue 39). At most one row group's worth of rows, and one input file, is held at a time."""
    try:
        with pq.ParquetWriter(path, schema, compression=COMPRESSION) as writer:
            if files:
                write_row_groups(writer, (conform(read_parquet(f), schema) for f in files))
            else:
                writer.write_table(schema.empty_table())
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(path)
        raise


def write_row_groups(writer: pq.ParquetWriter, tables: Iterable[pa.Table]) -> int:
    """Write ``tables``' rows, in order, to ``writer`` in row groups of :data:`ROW_GROUP_ROWS` rows, or fewer where
    their bytes reach :data:`MERGE_BYTES` first; at most one row group's worth of rows, and one table, held at a
    time. Returns the rows written."""
    pending: list[pa.Table] = []
    held = size = written = 0
    for table in tables:
        pending.append(table)
        held += table.num_rows
        size += table.nbytes
        if size >= MERGE_BYTES:  # large rows: what is held goes out as it is
            writer.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP_ROWS)
            written += held
            pending, held, size = [], 0, 0
        elif held >= ROW_GROUP_ROWS:
            rows = pa.concat_tables(pending)
            whole = rows.num_rows - rows.num_rows % ROW_GROUP_ROWS
            writer.write_table(rows.slice(0, whole), row_group_size=ROW_GROUP_ROWS)
            written += whole
            pending, held = [rows.slice(whole)], rows.num_rows - whole
            size = pending[0].nbytes
    if held:
        writer.write_table(pa.concat_tables(pending))
        written += held
    return written


def _merge_all(merges: list[tuple[list[Path], pa.Schema, Path]], threads: int) -> None:
    """:func:`merge_files` of each of ``merges``, on up to ``threads`` threads, the largest inputs first; the
    first error is raised once the merges under way have ended (those not begun are cancelled)."""
    if threads <= 1 or len(merges) < 2:
        for merge in merges:
            merge_files(*merge)
        return
    largest = sorted(merges, key=lambda m: -sum(f.stat().st_size for f in m[0]))
    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [pool.submit(merge_files, *merge) for merge in largest]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns in its order and types (a column missing from an older file: nulls)."""
    columns = [
        table.column(field.name).cast(field.type)
        if field.name in table.column_names
        else pa.nulls(len(table), field.type)
        for field in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def remove(path: Path) -> None:
    """Remove a file that no manifest names any more (its own function: the crash tests stop a run here)."""
    path.unlink(missing_ok=True)


def _reader_lease(root: Path) -> int | None:
    """Hold a shared lock on ``root/.readers`` (waiting while a writer removes superseded files): the descriptor,
    or None where the lock file cannot be made (a warehouse on read-only media, where no writer removes
    anything either)."""
    try:
        fd = os.open(root / READERS, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        return None
    return fd


@contextmanager
def _no_readers(root: Path) -> Iterator[bool]:
    """Whether no reader holds a snapshot (the exclusive lock on ``root/.readers`` taken without waiting), held
    for the block: a reader arriving meanwhile waits, then reads the manifest as it is after the block."""
    fd = os.open(root / READERS, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing the descriptor drops the lock


def _with_missing(con: duckdb.DuckDBPyConnection, name: str, body: str) -> str:
    """``body`` (a query of table ``name``'s files) with every column of :data:`TABLES` its files lack added as
    nulls of the column's type (the files' own columns as they are)."""
    have = {row[0] for row in con.execute(f"DESCRIBE {body}").fetchall()}
    missing = [field for field in TABLES[name] if field.name not in have]
    if not missing:
        return body
    kinds = con.from_arrow(pa.schema(missing).empty_table()).types
    extra = ", ".join(f'CAST(NULL AS {kind}) AS "{f.name}"' for f, kind in zip(missing, map(str, kinds), strict=True))
    return f"SELECT *, {extra} FROM ({body})"


def _with_sessions(name: str, body: str, schema: str | None) -> str:
    """``body`` (the query of table ``name``'s files); for ``issues``, with the session checks of the stored hands
    added (``sql/session_issues.sql``, read from the ``hands`` view of ``schema``): findings that span hands,
    worked out when read, so that a hand stored later changes them (issue 40)."""
    if name != "issues":
        return body
    hands = '"hands"' if schema is None else f'"{schema}"."hands"'
    sessions = sql.load_sql("pipeline.ingest", "session_issues").replace("{hands}", hands)
    sessions = sessions.replace("{sessions}", SESSIONS_VARIABLE)
    return f"SELECT * FROM ({body}) UNION ALL BY NAME ({sessions})"


SESSIONS_VARIABLE = "xuezhan_sessions"  # sql/session_issues.sql's sessions, where a reader names them


@contextmanager
def session_checks_of(con: duckdb.DuckDBPyConnection, hand_ids: Sequence[str]) -> Iterator[None]:
    """While open, the ``issues`` view of ``con`` works out the session checks of the sessions of ``hand_ids`` only
    (the hands of ``con``'s ``hands`` view): for a reader of a few hands' issues, which the view would otherwise
    find after a window over every hand of the warehouse (one hand of the 5M bench warehouse: 2.9 s and 1.4 GB,
    against 0.14 s and 262 MB). The rows of
    ``hand_ids`` are the same either way (each session's checks read only its own hands); the other hands' session
    checks are missing meanwhile. Then every session again."""
    sessions = con.execute(
        "SELECT DISTINCT session_id FROM hands WHERE hand_id IN (SELECT unnest(CAST(? AS VARCHAR[]))) "
        "AND session_id IS NOT NULL",
        [list(hand_ids)],
    ).fetchall()
    con.execute(f"SET VARIABLE {SESSIONS_VARIABLE} = CAST(? AS VARCHAR[])", [[s for (s,) in sessions]])
    try:
        yield
    finally:
        con.execute(f"RESET VARIABLE {SESSIONS_VARIABLE}")


class Warehouse:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.tmp = self.root / "_tmp"
        self.spill = self.root / SPILL
        self.catalogue_path = self.root / "warehouse.duckdb"
        self.manifest_path = self.root / MANIFEST
        self._lock: int | None = None
        self._committed: list[dict[str, object]] = []  # the manifest's rows, while open for writing

    # ------------------------------------------------------------------------------------ setup
    def open(self) -> Warehouse:
        """Lock the warehouse for writing, create the folders (with an empty file per table, so every view
        has a file to read), remove what a killed run left half-written, and write the catalogue."""
        self.root.mkdir(parents=True, exist_ok=True)
        if self._lock is None:
            self._take_lock()
        for name in TABLES:
            (self.root / name).mkdir(exist_ok=True)
        self.spill.mkdir(exist_ok=True)
        self.clean()
        self._committed = self._read_manifest()
        self._drop_uncommitted()
        if not any(row["batch"] == EMPTY_BATCH for row in self._committed):
            self.write_batch(EMPTY_BATCH, {name: schema.empty_table() for name, schema in TABLES.items()})
        else:
            self._upgrade_empty_files()
        self.build_catalogue()
        return self

    def clean(self) -> None:
        """Remove ``_tmp`` and half-written spill files (what a run that failed or was killed leaves)."""
        for partial in self.spill.glob(f"{PARTIAL}*"):
            partial.unlink(missing_ok=True)
        if self.tmp.exists():
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir(exist_ok=True)

    def _read_manifest(self) -> list[dict[str, object]]:
        """The committed batches. A warehouse made before the manifest (whose commit mark was a batch's hands
        file, renamed last) gets one: its batches with a hands file, counts unknown."""
        if self.manifest_path.exists():
            return read_parquet(self.manifest_path).to_pylist()
        rows = self._read_manifest_of_old()
        if rows:
            self._write_manifest(rows)
        return rows

    def _write_manifest(self, rows: list[dict[str, object]]) -> None:
        staged = self.tmp / f"manifest-{uuid.uuid4().hex}.parquet"
        write_durably(staged, parquet_bytes(pa.Table.from_pylist(rows, schema=MANIFEST_SCHEMA)))
        os.replace(staged, self.manifest_path)  # the commit point
        fsync_dir(self.root)

    def _upgrade_empty_files(self) -> None:
        """Schema evolution: a column added to a table after a warehouse was made appears in its views as
        null for the old rows, because every view reads with ``union_by_name`` and the table's empty file is
        rewritten here with the current schema; a table added after it was made (``wait_choices``, which a
        warehouse of 1 December lacks) gets its empty file here, so that its view has a file to read (issue 40:
        without it the catalogue failed, and every command after it)."""
        for name, schema in TABLES.items():
            path = self.root / name / f"part-{EMPTY_BATCH}.parquet"
            if not path.exists() or not pq.read_schema(path).remove_metadata().equals(schema.remove_metadata()):
                staged = self.tmp / f"{name}-empty.parquet"
                write_durably(staged, parquet_bytes(schema.empty_table()))
                os.replace(staged, path)
                fsync_dir(path.parent)

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
        """Remove the files no manifest names (a killed run's half batch, a compaction's folded batches), unless
        a reader holds a snapshot that may name them: then they stay for a later writer."""
        committed = {row["batch"] for row in self._committed}
        with _no_readers(self.root) as free:
            if not free:
                return
            for name in TABLES:
                if name == "ingest_runs":
                    continue
                for f in (self.root / name).iterdir():
                    m = _BATCH.match(f.name)
                    if m and m.group(1) not in committed:
                        f.unlink()

    # ------------------------------------------------------------------------------------ writing
    def write_batch(
        self, batch: str, tables: dict[str, pa.Table | Encoded], counts: dict[str, object] | None = None
    ) -> None:
        """Commit one batch: every table's file into ``_tmp`` (fsynced), into place (folders fsynced), then
        the manifest naming it (the commit point, see the module). ``counts``: its lines, for ``ingest_runs``.

        Should anything fail before the manifest is in place, the batch's files are removed again and the
        error raised: the batch is not committed. ``ingest_runs`` is written only with the empty batch that
        starts a warehouse; a run's own row is :meth:`write_run`."""
        staged: list[tuple[Path, Path]] = []
        placed: list[Path] = []
        committed = False
        try:
            for name in TABLES:
                if name == "ingest_runs" and batch != EMPTY_BATCH:
                    continue
                table = tables[name] if name in tables else TABLES[name].empty_table()
                if name != "hands" and table.num_rows == 0 and batch != EMPTY_BATCH:
                    continue
                path = self.tmp / f"{name}-part-{batch}.parquet"
                staged.append((path, self.root / name / f"part-{batch}.parquet"))
                write_durably(
                    path, table.parquet if isinstance(table, Encoded) else parquet_bytes(table.cast(TABLES[name]))
                )
            for src, dst in staged:
                os.replace(src, dst)
                placed.append(dst)
            for folder in sorted({dst.parent for _, dst in staged}):
                fsync_dir(folder)
            row = {"batch": batch, "run_id": None, **dict.fromkeys(COUNTS), **(counts or {})}
            with signals_held():
                self._write_manifest([*self._committed, row])
                committed = True
                self._committed.append(row)
        except BaseException:
            if not committed and not self._names(batch):
                for path in placed + [src for src, _ in staged]:
                    path.unlink(missing_ok=True)
            raise

    def _names(self, batch: str) -> bool:
        """Whether the manifest on disk names ``batch`` (the truth of "committed", for the failure path)."""
        try:
            return self.manifest_path.exists() and batch in read_parquet(self.manifest_path)["batch"].to_pylist()
        except Exception:  # an unreadable manifest names nothing; the original error is the one to raise
            return False

    # ------------------------------------------------------------------------------------ compaction
    def compact_if_many(self, *, threads: int = 1) -> int:
        """What ingest does at the end of a run (after :meth:`open`): compact when more than
        :data:`COMPACT_AFTER` committed batches are not compacted yet, folding just those, or everything once
        the compactions of earlier runs number :data:`COMPACT_AFTER` too, on ``threads`` threads (the run's
        workers: :meth:`compact`). Returns the batches folded."""
        fresh = len(self._foldable(everything=False))
        if fresh <= COMPACT_AFTER:
            return 0
        everything = len(self._foldable(everything=True)) - fresh >= COMPACT_AFTER
        return self.compact(everything=everything, threads=threads)

    def _foldable(self, *, everything: bool) -> list[dict[str, object]]:
        """The manifest rows of the batches a compaction folds: every batch with files but the empty start;
        the compacted ones too when ``everything``."""
        return [
            row
            for row in self._committed
            if has_files(str(row["batch"])) and (everything or not str(row["batch"]).startswith(COMPACTED))
        ]

    def compact(self, *, everything: bool = True, threads: int = 1) -> int:
        """Rewrite the committed batches into one compacted batch: per table one file, the rows in the
        batches' order (the order they were committed), in row groups of :data:`ROW_GROUP_ROWS`. Returns the
        number of batches folded (0: fewer than two, nothing to do). Call after :meth:`open` (the lock held).

        ``everything``: fold the batches of earlier compactions too (one file per table in the end); else only
        the batches committed since (what ingest does at the end of a run: the old rows are not rewritten
        every run).

        The same commit protocol as a batch: the new files are written into ``_tmp``, fsynced and renamed into
        their folders (named by no manifest yet, so no view reads them); then one manifest rename drops the
        folded batches and names the compacted one (the commit point); only then are the folded batches'
        files removed. A kill before the rename leaves the old batches (and files of a batch named by
        nothing, removed by the next :meth:`open`); after it, the compacted batch (and the old files, named by
        nothing now, removed by the next :meth:`open` if not here): never both. The run counts of the folded
        batches stay in the manifest, one row per run named ``counts-<run_id>`` that names no files, so
        ``ingest_runs`` of an unfinished run still sums its lines from the manifest.

        ``threads``: the tables are merged on that many threads at once, the largest first (pyarrow reads,
        encodes and writes without holding the GIL): the events, most of the bytes, beside all the others.

        A file whose columns are not all in the table's current schema (a column since removed) is left
        alone: nothing is compacted then (the rows would lose that column)."""
        folded = self._foldable(everything=everything)
        if len(folded) < 2:
            return 0
        sources = {
            name: [f for row in folded if (f := self.root / name / f"part-{row['batch']}.parquet").exists()]
            for name in TABLES
            if name != "ingest_runs"
        }
        for name, files in sources.items():
            known = set(TABLES[name].names)
            if any(not set(pq.read_schema(f).names) <= known for f in files):
                return 0
        batch = f"{COMPACTED}{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        staged: list[tuple[Path, Path]] = []
        placed: list[Path] = []
        committed = False
        try:
            merges: list[tuple[list[Path], pa.Schema, Path]] = []
            for name, files in sources.items():
                if not files and name != "hands":
                    continue
                path = self.tmp / f"{name}-part-{batch}.parquet"
                staged.append((path, self.root / name / f"part-{batch}.parquet"))
                merges.append((files, TABLES[name], path))
            _merge_all(merges, threads)
            for src, dst in staged:
                os.replace(src, dst)
                placed.append(dst)
            for folder in sorted({dst.parent for _, dst in staged}):
                fsync_dir(folder)
            gone = {str(row["batch"]) for row in folded}
            kept = [row for row in self._committed if row["batch"] not in gone and not is_run_counts(row)]
            runs = fold_counts([row for row in self._committed if row["batch"] in gone or is_run_counts(row)])
            rows = [*kept, *runs, {"batch": batch, "run_id": None, **dict.fromkeys(COUNTS)}]
            with signals_held():
                self._write_manifest(rows)
                committed = True
                self._committed = rows
        except BaseException:
            if not committed and not self._names(batch):
                for path in placed + [src for src, _ in staged]:
                    path.unlink(missing_ok=True)
            raise
        with _no_readers(self.root) as free:  # committed: the folded files are part of nothing now, but a
            if free:  # reader's older snapshot may still read them (then a later writer removes them)
                for files in sources.values():
                    for f in files:
                        remove(f)
                for name in sources:
                    fsync_dir(self.root / name)
        return len(folded)

    def write_run(self, run_id: str, row: dict[str, object]) -> None:
        """Write (or replace) the run's row of ``ingest_runs``, durably."""
        table = pa.Table.from_pylist([row], schema=TABLES["ingest_runs"])
        path = self.tmp / f"run-{run_id}.parquet"
        try:
            write_durably(path, parquet_bytes(table))
            os.replace(path, self.root / "ingest_runs" / f"part-{run_id}.parquet")
        finally:
            path.unlink(missing_ok=True)
        fsync_dir(self.root / "ingest_runs")

    # ------------------------------------------------------------------------------------ reading
    def glob(self, table: str) -> str:
        """The DuckDB pattern of a table's files (the warehouse path escaped)."""
        return glob_escape(str(self.root / table)) + "/*.parquet"

    def connect(self, *, schema: str | None = None) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with every table as a view over its committed files, the manifest
        read once (a snapshot for the connection's life: its files stay until the connection is garbage-collected,
        whatever a writer commits meanwhile). ``schema``: create the views in that (new) schema
        instead of the default one (the analytics put filtered views of the same names in front of them).

        What the views read is in the connection's own database, not in its temporary schema, so that a cursor of
        the connection (``con.cursor()``, another thread's) reads the same tables."""
        lease = _reader_lease(self.root)  # before the manifest is read: the files it names stay while held
        con = duckdb.connect()
        if lease is not None:
            weakref.finalize(con, os.close, lease)
        if schema is not None:
            con.execute(f'CREATE SCHEMA "{schema}"')
        con.execute("SET enable_progress_bar = false")  # our commands draw their own progress
        # Every query (and every view's bind, which reads the files' schemas) reads the footers of the Parquet files
        # of the tables it names; committed files never change (each batch has its own), so they are parsed once
        # per connection, not once per bind and query: set before the views, whose binds parsed the 5M-hand
        # warehouse's footers (4,500 row groups of events) afresh each time, 308 MB after connect where 247 MB now.
        con.execute("SET parquet_metadata_cache = true")
        if self.manifest_path.exists():
            con.execute(f"CREATE TABLE _committed AS SELECT * FROM {self._manifest_sql()}")
        else:  # a warehouse made before the manifest: its commit mark was the hands file
            con.register("_old_manifest", pa.Table.from_pylist(self._read_manifest_of_old(), schema=MANIFEST_SCHEMA))
            con.execute("CREATE TABLE _committed AS SELECT * FROM _old_manifest")
            con.unregister("_old_manifest")
        snapshot = self.files(con)
        for name in TABLES:
            files = snapshot[name]
            if not files and name != "ingest_runs":
                # a table added after the warehouse was made (no folder, or the empty folder a failed run of an
                # older release left): no rows until an ingest writes it
                con.execute(self._empty_view_sql(con, name, schema=schema))
                continue
            listed = files if name != "ingest_runs" and files else None
            con.execute(self._view_sql(name, "main._committed", listed, schema=schema, con=con))
        return con

    def files(self, con: duckdb.DuckDBPyConnection) -> dict[str, list[Path]]:
        """Each table's files in the snapshot of ``con`` (a connection of :meth:`connect`): those of the batches its
        manifest named, in commit order (what its views read, and what another engine reading the warehouse
        must read to see the same rows; they stay while ``con`` holds its reader's lease)."""
        batches = [b for (b,) in con.execute("SELECT batch FROM main._committed").fetchall()]
        return {name: [f for b in batches if (f := self.root / name / f"part-{b}.parquet").exists()] for name in TABLES}

    @staticmethod
    def _empty_view_sql(con: duckdb.DuckDBPyConnection, name: str, *, schema: str | None = None) -> str:
        """The view of a table the warehouse has no folder for: no rows, the table's columns and types."""
        view = f'"{name}"' if schema is None else f'"{schema}"."{name}"'
        empty = con.from_arrow(TABLES[name].empty_table())  # DuckDB's names for the Arrow types
        columns = ", ".join(
            f'CAST(NULL AS {kind}) AS "{column}"'
            for column, kind in zip(empty.columns, map(str, empty.types), strict=True)
        )
        return f"CREATE VIEW {view} AS SELECT {columns} WHERE false"

    def _read_manifest_of_old(self) -> list[dict[str, object]]:
        folder = self.root / "hands"
        batches = sorted(m.group(1) for f in folder.iterdir() if (m := _BATCH.match(f.name))) if folder.is_dir() else []
        return [{"batch": b, "run_id": None, **dict.fromkeys(COUNTS)} for b in batches]

    def _manifest_sql(self) -> str:
        return f"read_parquet({_literal(glob_escape(str(self.manifest_path)))})"

    def _view_sql(
        self,
        name: str,
        committed: str,
        files_of: list[Path] | None = None,
        *,
        schema: str | None = None,
        con: duckdb.DuckDBPyConnection | None = None,
    ) -> str:
        """The view of table ``name``: its files of the batches in ``committed`` (SQL naming the manifest's
        rows); ``ingest_runs`` with the counts of an unfinished run from its committed batches.

        ``files_of``: the committed files themselves, listed (what :meth:`connect` reads from its snapshot):
        the view reads just those, and a file removed since (a compaction that committed after the connection
        was made removes the batches it folded) is an error, never rows silently missing. ``schema``: the
        schema the view is created in (default: the connection's).

        ``con``: the connection the view is for; a column of the table that none of its files has (a warehouse
        written before the column was added) is then in the view as nulls of its type, so that a query naming
        it reads "unknown" instead of failing on an older warehouse (issue 40)."""
        view = f'"{name}"' if schema is None else f'"{schema}"."{name}"'
        if files_of:
            listed = ", ".join(_literal(glob_escape(str(f))) for f in files_of)
            body = f"SELECT * FROM read_parquet([{listed}], union_by_name = true)"
            body = body if con is None else _with_missing(con, name, body)
            return f"CREATE VIEW {view} AS {_with_sessions(name, body, schema)}"
        files = f"read_parquet({_literal(self.glob(name))}, union_by_name = true"
        if name == "ingest_runs":
            sums = ", ".join(f"CAST(sum({c}) AS BIGINT) AS {c}" for c in COUNTS)
            replace = ", ".join(f"if(r.finished_at IS NULL, coalesce(b.{c}, 0), r.{c}) AS {c}" for c in COUNTS)
            return (
                f"CREATE VIEW {view} AS SELECT r.* REPLACE ({replace}) FROM {files}) AS r "
                f"LEFT JOIN (SELECT run_id, {sums} FROM {committed} GROUP BY run_id) AS b ON r.run_id = b.run_id"
            )
        body = (
            f"SELECT * EXCLUDE (_file) FROM {files}, filename = '_file') "
            f"WHERE parse_filename(_file) IN (SELECT 'part-' || batch || '.parquet' FROM {committed})"
        )
        body = body if con is None else _with_missing(con, name, body)
        return f"CREATE VIEW {view} AS {_with_sessions(name, body, schema)}"

    def written_before(self) -> dict[str, list[str]]:
        """Per table, the columns of :data:`TABLES` that some committed file holding rows lacks: rows an earlier
        release wrote before the column existed, which every view reads as nulls (issue 40); not those the views
        derive from the other columns (:data:`schemas.tables.DERIVED`). Empty for a warehouse written by this
        release alone. Reads the files' footers only."""
        if self.manifest_path.exists():
            batches = [str(b) for b in read_parquet(self.manifest_path).column("batch").to_pylist()]
        else:
            batches = [str(row["batch"]) for row in self._read_manifest_of_old()]
        out: dict[str, list[str]] = {}
        for name, schema in TABLES.items():
            if name == "ingest_runs":
                continue
            lacking: set[str] = set()
            for batch in batches:
                path = self.root / name / f"part-{batch}.parquet"
                if batch == EMPTY_BATCH or not path.exists():
                    continue
                meta = pq.read_metadata(path)
                if meta.num_rows:
                    lacking |= set(schema.names) - set(meta.schema.to_arrow_schema().names)
            lacking -= set(DERIVED.get(name, ()))  # the views derive them
            if lacking:
                out[name] = [c for c in schema.names if c in lacking]
        return out

    def last_run(self) -> tuple[str, bool] | None:
        """The id of the last run that started and whether it finished, from ``ingest_runs`` (None: no run)."""
        folder = self.root / "ingest_runs"
        if not folder.is_dir():
            return None
        with duckdb.connect() as con:
            row = con.execute(
                "SELECT run_id, finished_at IS NOT NULL FROM read_parquet(?, union_by_name = true) "
                "ORDER BY started_at DESC NULLS LAST, run_id DESC LIMIT 1",
                [self.glob("ingest_runs")],
            ).fetchone()
        return (str(row[0]), bool(row[1])) if row else None

    def known_hands(self) -> dict[str, str]:
        """hand_id → record_sha256 of every stored record (call after :meth:`open`: then every file is
        committed)."""
        with duckdb.connect() as con:  # closed at once: the worker processes are forked after this
            rows = con.execute("SELECT hand_id, record_sha256 FROM read_parquet(?)", [self._files("hands")]).fetchall()
        return dict(rows)

    def known_rejects(self) -> set[tuple[str, int, str]]:
        """(source_file, source_line, sha256) of every stored reject (after :meth:`open`)."""
        with duckdb.connect() as con:
            rows = con.execute(
                "SELECT source_file, source_line, sha256 FROM read_parquet(?)", [self._files("rejects")]
            ).fetchall()
        return {(f, n, s) for f, n, s in rows}

    def _files(self, table: str) -> list[str]:
        """The files of ``table`` the manifest names (after :meth:`open`; the folder may also hold files named
        by nothing that a reader's snapshot keeps)."""
        folder = self.root / table
        return [
            glob_escape(str(f)) for row in self._committed if (f := folder / f"part-{row['batch']}.parquet").exists()
        ]

    def build_catalogue(self) -> None:
        """(Re)create ``warehouse.duckdb`` atomically: one view per table over its committed files (absolute
        paths; the manifest is read when a query runs)."""
        tmp = self.tmp / f"catalogue-{uuid.uuid4().hex}.duckdb"
        wal = tmp.with_name(tmp.name + ".wal")
        try:
            con = duckdb.connect(str(tmp))
            try:
                for name in TABLES:
                    con.execute(self._view_sql(name, self._manifest_sql()))
                con.execute("CHECKPOINT")
            finally:
                con.close()
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(tmp, self.catalogue_path)
            fsync_dir(self.root)
        except duckdb.Error as exc:  # DuckDB's own I/O: a full disk is a duckdb.IOException
            raise OSError(errno.EIO, f"cannot write the catalogue: {str(exc).splitlines()[0]}", str(tmp)) from exc
        finally:
            tmp.unlink(missing_ok=True)
            wal.unlink(missing_ok=True)
