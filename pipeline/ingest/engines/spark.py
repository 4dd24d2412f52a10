"""The Spark engine: Spark reads the record files and validates them in parallel; the driver commits.

An adapter at the edge, like the local process pool: the work inside a task is the same
:func:`pipeline.ingest.read.read_lines` and :func:`pipeline.ingest.work.process_lines` the local engine
runs, cut into the same chunks (:func:`pipeline.ingest.chunks.read_chunks`), and what comes back goes
through the same deduplication and batch commit (:func:`pipeline.ingest.run.ingest` commits what any
engine yields), so the warehouse is the same, row for row. The plan::

    files (one row per input file, in input order)
      → mapInArrow(_read_files)    each task streams its files line by line (spilling huge lines to the
                                   warehouse's spill folder) and cuts them into chunks: one row per chunk,
                                   the chunk's lines as a zstd Arrow IPC stream
      → repartition(2 × cores)     chunks spread over every core, so even one big file is validated in
                                   parallel (a .gz file cannot be split for reading, but its chunks can be)
      → mapInArrow(_validate)      process_lines on each chunk: one row per chunk with each table's
                                   Arrow batch and the record keys as IPC bytes (no per-record Python
                                   objects cross a process boundary: only compressed Arrow buffers)
      → persist, orderBy(file, chunk), toLocalIterator
                                   the driver takes the chunks back in input order, one partition at a time

Why the driver commits: which line of a ``hand_id`` is stored and which is a duplicate or a conflict
depends on every line before it, across all files and the warehouse (first in input order wins), and a
batch is committed crash-safely by renames under one lock. Doing that on the driver, in input order, with
the commit the local engine's chunks go through makes the result identical by construction. The cost:
every chunk's tables (compressed) travel to the driver and the driver writes all the Parquet files, so
Spark speeds up validation (the expensive part, CPU-bound) but not writing; and the driver needs the
warehouse folder, which must also be visible to the executors at the same path for spilled lines (as must
the input files).

Lines whose bytes are a record already stored are counted as duplicates without being validated again, as
in the local engine; the tasks learn those digests from a broadcast set (roughly 150 bytes a stored record
in each Python worker). As in the local engine, the tasks know only what was stored before the run began:
repeats of records committed earlier in the same run are validated and then counted as duplicates by the
commit. The counts and tables are the same as if they had been skipped.

The results are persisted before the ordered read because a global sort first samples its input: without
the cache the validation would run twice. The driver holds one sorted partition at a time, not the whole
run (adaptive execution sizes them to ``spark.sql.adaptive.advisoryPartitionSizeInBytes``, 64 MB by
default), and Arrow batches into a task carry a few chunks each (``maxRecordsPerBatch``), since one row is
a whole chunk.

For data too large for one driver to write, the dedupe would move into Spark: join the run's keys with the
stored ``hands`` (hand_id, sha256) and rank the run's lines per ``hand_id`` by (file, line) to pick the
first of each, then let executors write their own Parquet files with a per-task batch name and a commit
step that publishes them (the ``hands`` file last, as the local commit does). Nothing in the validator would change.

Requirements on a cluster: the ``xuezhan`` package and its dependencies importable by the executors'
Python, the input files and the warehouse's ``spill`` folder at the same absolute paths on every node (a
shared filesystem). Standard input (``-``) cannot be read by executors: use the local engine for it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, overload

import pyarrow as pa

from pipeline.ingest.chunks import read_chunks
from pipeline.ingest.engines.base import Result
from pipeline.ingest.read import RawLine, find_files
from pipeline.ingest.work import RECORD_TABLES, RecordKey, process_lines

OUT_TABLES = (*RECORD_TABLES, "rejects")  # what process_lines produces (ingest_runs is the driver's)

# A chunk's lines, as they travel from the reading task to the validating task and back to the driver
# (the driver needs a line's bytes when its record turns out to conflict with a stored one).
LINES = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("data", pa.large_binary()),
        ("size", pa.int64()),
        ("sha256", pa.string()),
        ("spill", pa.string()),
        ("fault", pa.string()),
        ("too_long", pa.bool_()),
        ("code", pa.string()),
    ]
)
KEYS = pa.schema([("hand_id", pa.string()), ("sha256", pa.string()), ("position", pa.int32())])

# Spark rows. ``lines``: lines in the chunk; ``skipped``: lines before it counted as duplicates of stored
# records without being validated; ``bytes``: on-disk bytes read for it (progress).
FILES = pa.schema([("file", pa.int32()), ("path", pa.string())])
CHUNKS = pa.schema(
    [
        ("file", pa.int32()),
        ("chunk", pa.int32()),
        ("lines", pa.int32()),
        ("skipped", pa.int64()),
        ("bytes", pa.int64()),
        ("raw", pa.binary()),
    ]
)
RESULTS = pa.schema([*CHUNKS, ("keys", pa.binary()), *((name, pa.binary()) for name in OUT_TABLES)])

# Spark's own log: errors only, and no "Using Spark's default log4j profile" / "Setting default log level"
# banners (pyspark's JVM runs as a shell, whose level Spark takes from the logger of the class that starts
# logging, PythonGatewayServer, and announces when it differs from the root's).
LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
logger.shell.name = org.apache.spark.api.python.PythonGatewayServer
logger.shell.level = error
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


# ------------------------------------------------------------------------------------------ Arrow envelope
def pack(table: pa.Table) -> bytes:
    """A table as one zstd-compressed Arrow IPC stream (schema, field docs and all)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as out:
        out.write_table(table)
    return sink.getvalue().to_pybytes()


def unpack(data: bytes | bytearray) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def pack_lines(lines: Sequence[RawLine]) -> bytes:
    return pack(pa.Table.from_pydict({f.name: [getattr(line, f.name) for line in lines] for f in LINES}, schema=LINES))


class ChunkLines(Sequence[RawLine]):
    """A chunk's lines on the driver, kept as Arrow: a :class:`RawLine` is built only for the line asked
    for (the commit asks for the lines of conflicting records, and for the count)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __len__(self) -> int:
        return self._table.num_rows

    @overload
    def __getitem__(self, index: int) -> RawLine: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[RawLine]: ...
    def __getitem__(self, index: int | slice) -> RawLine | Sequence[RawLine]:
        if isinstance(index, slice):
            return ChunkLines(self._table.take(list(range(len(self))[index])))
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        row = self._table.slice(index % len(self), 1).to_pylist()[0]
        return RawLine(**row)


# ------------------------------------------------------------------------------------------ tasks
def _read_files(
    batches: Iterable[pa.RecordBatch], *, chunk_size: int, stored: Any, spill_dir: str
) -> Iterator[pa.RecordBatch]:
    """Task of the first stage: the files of this partition, read and cut into chunks (in order)."""
    for batch in batches:
        for file, path in zip(batch["file"].to_pylist(), batch["path"].to_pylist(), strict=True):
            rows = _read_file(file, path, chunk_size=chunk_size, stored=stored.value, spill_dir=spill_dir)
            for row in rows:
                yield pa.RecordBatch.from_pylist([row], schema=CHUNKS)


def _read_file(file: int, path: str, *, chunk_size: int, stored: set[str], spill_dir: str) -> Iterator[dict[str, Any]]:
    """One file's chunks, cut exactly as the local engine cuts them (:func:`~pipeline.ingest.chunks.chunks`:
    blank lines dropped, lines whose bytes are a stored record's counted as duplicates and not validated
    again)."""
    heard = {"skipped": 0, "bytes": 0}  # so far, from the chunker and the reader
    told = {"skipped": 0, "bytes": 0}  # so far, in the rows yielded
    number = 0

    def hear(what: str) -> Callable[[int], None]:
        def add(n: int) -> None:
            heard[what] += n

        return add

    def row(chunk: Sequence[RawLine]) -> dict[str, Any]:
        nonlocal number
        out = {
            "file": file,
            "chunk": number,
            "lines": len(chunk),
            "skipped": heard["skipped"] - told["skipped"],
            "bytes": heard["bytes"] - told["bytes"],
            "raw": pack_lines(chunk),
        }
        told.update(heard)
        number += 1
        return out

    chunks = read_chunks(
        [path], spill_dir=spill_dir, size=chunk_size, stored=stored, on_skipped=hear("skipped"), on_bytes=hear("bytes")
    )
    for chunk in chunks:
        yield row(chunk)
    if number == 0 or heard != told:
        yield row([])  # what was skipped or read after the last chunk (or a file with no chunk at all)


def _validate(
    batches: Iterable[pa.RecordBatch], *, run_id: str, profile: dict[str, Any] | None
) -> Iterator[pa.RecordBatch]:
    """Task of the second stage: each chunk through :func:`process_lines`, its tables out as IPC bytes."""
    for batch in batches:
        for chunk in batch.to_pylist():
            lines = [RawLine(**line) for line in unpack(chunk["raw"]).to_pylist()]
            rows = process_lines(lines, run_id, profile=profile)
            tables = rows.tables()
            keys = pa.Table.from_pydict(
                {
                    "hand_id": [k.hand_id for k in rows.keys],
                    "sha256": [k.sha256 for k in rows.keys],
                    "position": [k.position for k in rows.keys],
                },
                schema=KEYS,
            )
            out = {**chunk, "keys": pack(keys), **{name: pack(tables[name]) for name in OUT_TABLES}}
            yield pa.RecordBatch.from_pylist([out], schema=RESULTS)


# ------------------------------------------------------------------------------------------ the driver
def _ddl(schema: pa.Schema) -> str:
    types = {pa.int32(): "INT", pa.int64(): "BIGINT", pa.string(): "STRING", pa.binary(): "BINARY"}
    return ", ".join(f"`{f.name}` {types[f.type]}" for f in schema)


class SparkEngine:
    """The :class:`~pipeline.ingest.engines.base.Engine` of ``--engine spark``.

    A Spark session for one ingest run: started on entry and stopped on exit, unless a session is
    already active (a notebook's, or an application's that calls :func:`~pipeline.ingest.run.ingest`): that
    one is used as it is and left running.

    ``master``: a Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``); ``None`` leaves it to
    ``spark-submit`` or Spark's default (``local[*]``). ``conf``: extra Spark settings for a new session.
    ``app``: the application's name (what the cluster's UI lists; the analyses' Spark passes,
    :mod:`pipeline.analytics.spark`, start their session here too, under their command's name).
    """

    def __init__(
        self, master: str | None = None, conf: dict[str, str] | None = None, *, app: str = "xuezhan ingest"
    ) -> None:
        self.master = master
        self.conf = dict(conf or {})
        self.app = app
        self.session: Any = None
        self._owned = False
        self._log_config: str | None = None

    def __enter__(self) -> SparkEngine:
        try:
            from pyspark.sql import SparkSession
        except ImportError as exc:  # pragma: no cover - the test skips without pyspark
            raise RuntimeError("the spark engine needs pyspark: pip install 'xuezhan[spark]'") from exc
        active = SparkSession.getActiveSession()
        if active is not None:  # a notebook's or an application's session: used as it is, and left running
            self.session = active
            return self
        local = (self.master or "local").startswith("local") and "PYSPARK_GATEWAY_PORT" not in os.environ
        if local:  # a local master's Python workers run this interpreter, not whatever python3 is on PATH
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = SparkSession.builder.appName(self.app)
        if self.master is not None:
            builder = builder.master(self.master)
        settings = {
            "spark.ui.showConsoleProgress": "false",  # the command draws its own progress bar
            "spark.sql.execution.arrow.maxRecordsPerBatch": "16",  # rows are chunks of up to 500 records
            **self.conf,
        }
        if "spark.driver.extraJavaOptions" not in settings:  # applies when this process starts the JVM
            fd, self._log_config = tempfile.mkstemp(prefix="xuezhan-log4j2-", suffix=".properties")
            with os.fdopen(fd, "w") as f:
                f.write(LOG4J2)
            settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{self._log_config}"
        for key, value in settings.items():
            builder = builder.config(key, value)
        self.session = builder.getOrCreate()
        self._owned = True
        self.session.sparkContext.setLogLevel("ERROR")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._owned and self.session is not None:
            self.session.stop()
        self.session, self._owned = None, False
        if self._log_config is not None:
            Path(self._log_config).unlink(missing_ok=True)
            self._log_config = None

    @property
    def parallelism(self) -> int:
        """Cores Spark runs tasks on (``local[2]``: 2)."""
        return int(self.session.sparkContext.defaultParallelism)

    def run(
        self,
        paths: Sequence[str],
        run_id: str,
        *,
        stored: set[str],
        spill_dir: str | Path,
        chunk_size: int,
        profile: dict[str, Any] | None = None,
        on_skipped: Callable[[int], None] | None = None,
        on_bytes: Callable[[int], None] | None = None,
    ) -> Generator[tuple[Sequence[RawLine], Result]]:
        """Read and validate ``paths`` on Spark; yield ``(chunk lines, (tables, keys))`` in input order,
        like the local engine. ``stored``: sha256 of the stored records (such lines are only counted,
        through ``on_skipped``); ``on_bytes`` hears the on-disk bytes read, chunk by chunk, as the driver
        gets them.

        The inputs are checked at once (standard input is refused before Spark starts); the work starts
        when the first chunk is asked for, inside ``with engine``."""
        files = find_files(paths)
        if "-" in files:
            raise ValueError("the spark engine reads files, not standard input ('-'): use --engine local")
        return self._run(files, run_id, stored, str(spill_dir), chunk_size, profile, on_skipped, on_bytes)

    def _run(
        self,
        files: list[str],
        run_id: str,
        stored: set[str],
        spill_dir: str,
        chunk_size: int,
        profile: dict[str, Any] | None,
        on_skipped: Callable[[int], None] | None,
        on_bytes: Callable[[int], None] | None,
    ) -> Generator[tuple[Sequence[RawLine], Result]]:
        if not files:
            return
        spark = self.session
        if spark is None:
            raise RuntimeError("SparkEngine.run: use the engine inside `with engine:`")
        sc = spark.sparkContext
        digests = sc.broadcast(set(stored))
        try:
            slices = min(len(files), 8 * self.parallelism)  # in input order: file i before file i + 1
            listing = spark.createDataFrame(sc.parallelize(list(enumerate(files)), slices), _ddl(FILES))
            read = partial(_read_files, chunk_size=chunk_size, stored=digests, spill_dir=spill_dir)
            validate = partial(_validate, run_id=run_id, profile=profile)
            chunks = listing.mapInArrow(read, _ddl(CHUNKS))
            results = chunks.repartition(2 * self.parallelism).mapInArrow(validate, _ddl(RESULTS)).persist()
            try:
                for row in results.orderBy("file", "chunk").toLocalIterator(prefetchPartitions=True):
                    if on_skipped is not None and row["skipped"]:
                        on_skipped(row["skipped"])
                    if on_bytes is not None and row["bytes"]:
                        on_bytes(row["bytes"])
                    if row["lines"]:
                        yield _result(row)
            finally:
                results.unpersist()
        finally:
            digests.unpersist()


def _result(row: Any) -> tuple[ChunkLines, Result]:
    """A chunk's lines, tables and record keys from its row of results."""
    keys = unpack(row["keys"])
    columns = (keys[name].to_pylist() for name in KEYS.names)
    return ChunkLines(unpack(row["raw"])), (
        {name: unpack(row[name]) for name in OUT_TABLES},
        [RecordKey(h, s, p) for h, s, p in zip(*columns, strict=True)],
    )
