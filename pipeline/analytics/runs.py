"""Reading the warehouse a run of hands at a time, each table once, in the order its files hold it.

A figure summed over many hands (the collusion screen's pair counts, the victim view's flows, the head-to-head
sums) is read a run of hands at a time, so that its memory is one run's whatever the size of the warehouse. A
run used to be a range of consecutive hand ids (``sql/hand_ranges.sql``), each read by its own query. But hand
ids interleave in the files (a platform's ids sort by table or by day, the files hold them in the order they
were ingested), so every range query read every row group whose ids overlapped its range, and the reading grew
as the square of the warehouse: the collusion screen took 16.7 s on 200,000 hands and 195 s on 1,000,000 (12×).

Here each table a run's query names is streamed once, in file order (:class:`Stream`: the columns and rows the
query needs), on a cursor of its own. Ingest writes every table of a batch in the same order of hands, commits
the batches in order and compaction keeps that order (``pipeline/ingest/warehouse.py``), so the rows of the
next hands of ``hands`` are the next rows of every other table. A run is the next ``size`` rows of the
``hands`` stream; every other stream gives it its rows while their hand is one of the run's, and stops at the
first that is not. The run's query then runs over those rows alone, on a connection of their own where each
table's name is the run's rows (the same SQL as over the warehouse, its range ``[lo, hi]`` the run's least and
greatest id: it keeps every row).

Under a scope (``--player``, ``--since``…: :func:`pipeline.analytics.queries.connect`) a table's view is the
rows of the hands in scope, ``… WHERE hand_id IN (SELECT hand_id FROM main._scope)``: a semi-join, and DuckDB
promises no order for a join (https://duckdb.org/docs/stable/sql/dialect/order_preservation: ``FROM`` one table,
``SELECT`` and ``WHERE`` keep the order, a ``JOIN`` or a subquery does not). Read through it, a stream's rows
came out of file order (``payments`` under ``--player p002``, even ``hands``), and every scoped command fell back
to the ranges below. So under a scope a stream reads the view of its table with no scope (in the schema
:data:`UNSCOPED`: one table, ``SELECT`` and ``WHERE``, in file order as without a scope) and keeps, of each
batch, the rows whose hand is in scope (:class:`_Scope`: the ids of ``main._scope`` in a set, looked up once per
hand of a batch): the rows the scoped view holds, in the order the files hold them, never a row of a hand out
of scope (``tests/test_runs.py`` gives the scoped views an order of their own). What it holds besides a run's rows
is the scope's ids (a set of them, and a Bloom filter of them that the stream's query applies first, so that
few rows out of scope cross into Arrow), a memory that grows with the scope, not with the warehouse.

Why the result is exact whatever the order: a row goes only to the run that holds its hand, so when every
stream has been read to its end, every row went to its own hand's run. A table in another order (a warehouse
written some other way, a row of a hand ``hands`` lacks) leaves a stream stuck before its end;
:func:`read_runs` raises :class:`OutOfOrder` after its last run, and :func:`each_run` reads the runs again by
ranges of ids (the old way: the same rows, slower), before any result is used.

The next run is read ahead, in a thread of its own, while the caller counts the run before: DuckDB works
without the GIL, so the reading overlaps the counting. Two runs are held at most.

A model whose every column is a count or a sum over hands (``stats``' per-player counts, its table figures, the
scale groups) is added up run by run by :func:`add_up` (:func:`added`: the rows of two runs made one by keys);
one that reads its run's range of ids (the discard choices, the head-to-head sums) by :func:`summed_runs`.
What must see every hand at once (the session checks, a fallback) runs under :func:`bounded`: DuckDB's memory
held to :data:`WHOLE_MEMORY`, spilling to disk past it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from typing import TypeVar

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import sql

T = TypeVar("T")

BATCH_ROWS = 1 << 16  # rows a stream fetches at a time
STREAM_THREADS = 1  # DuckDB's threads while the streams read (_streaming_threads)
RUN_HANDS = 10_000  # hands a run holds (a figure summed over hands): its memory, whatever the warehouse's size
# DuckDB's memory for a query over every hand at once (every SQL model of the analytics and the pages, a fallback of
# add_up, the window over the sessions): past it its joins, aggregates, sorts and windows spill to the connection's
# temporary folder (queries.connect sets it)
WHOLE_MEMORY = "128MB"  # the session checks on 5M hands: 622 MB peak at 256 MB, 496 MB at 128 (35 s, 30 s)


# Under a scope (pipeline.analytics.queries.connect): the hands in scope, a table of the connection's own database,
# and the schema of the views with no scope, which a scoped stream reads (in file order) and filters itself
SCOPE = "_scope"
UNSCOPED = "unscoped"


BITS_PER_HAND = 8  # the bits of a scope's Bloom filter a hand in scope (_Scope.prefilter)
_BITS = "xuezhan_scope_bits"


class OutOfOrder(Exception):
    """A table's rows were not in the order of ``hands``: the runs read in file order are incomplete."""


@dataclass(frozen=True, slots=True)
class Stream:
    """What a run's query reads of one table: ``columns`` (SQL, with ``hand_id`` among them) of the rows that
    ``where`` keeps (None: every row). The rows a stream leaves out must be rows the query would leave out:
    the stream is only a narrower reading of the same table."""

    table: str
    columns: str = "*"
    where: str | None = None

    def sql(self, schema: str | None = None, also: str | None = None) -> str:
        """The stream's query, of the table's view in ``schema`` (default: the connection's search path); ``also``:
        a condition its rows must meet besides ``where``."""
        table = f'"{self.table}"' if schema is None else f'"{schema}"."{self.table}"'
        conditions = " AND ".join(f"({c})" for c in (self.where, also) if c)
        return f"SELECT {self.columns} FROM {table}" + (f" WHERE {conditions}" if conditions else "")


@dataclass(frozen=True, slots=True)
class Run:
    """One run of hands: the connection its query runs on, the range of ids ``[lo, hi]`` that holds its hands
    (every row of the connection's tables in file order; a run of consecutive ids when read by ranges), and
    how many hands it holds (read by ranges of the replayed hands: of those)."""

    con: duckdb.DuckDBPyConnection
    lo: str
    hi: str
    hands: int


# What a cursor of a connection cannot see of it: its temporary views and tables (a caller's own, shadowing the
# warehouse's views) and its search path. Where the connection has any, the runs are read on it, by ranges.
_CONNECTION_OWN = (
    "SELECT (SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal)"
    " + (SELECT count(*) FROM duckdb_tables() WHERE temporary), current_setting('search_path')"
)


def cursor_sees_all(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a cursor of ``con`` (a connection of its own to the same database) reads what ``con`` reads: not
    when ``con`` has temporary views or tables (a caller's view of the warehouse over the views
    :func:`pipeline.analytics.queries.connect` made) or another search path."""
    own, path = con.execute(_CONNECTION_OWN).fetchall()[0]
    with closing(con.cursor()) as cursor:
        return not own and path == cursor.execute(_CONNECTION_OWN).fetchall()[0][1]


def each_run(
    con: duckdb.DuckDBPyConnection,
    streams: Sequence[Stream],
    query: Callable[[Run], T],
    consume: Callable[[Iterator[tuple[Run, T]]], object],
    *,
    size: int,
    replayed: bool,
) -> None:
    """Call ``consume`` with every run's ``query`` result, in file order (:func:`read_runs`); if the tables were
    not all in one order (:class:`OutOfOrder`, raised after the last run), call it again with the runs by
    ranges of ids (:func:`range_runs`). ``consume`` must start from nothing each time it is called and keep
    nothing it was given until it returns. ``replayed``: the runs by ranges hold the replayed hands only (a
    query that reads only those), else every hand."""
    if cursor_sees_all(con):
        try:
            consume(read_runs(con, streams, query, size=size))
            return
        except OutOfOrder:
            pass
    consume(range_runs(con, query, size=size, replayed=replayed))


def summed_runs(
    con: duckdb.DuckDBPyConnection,
    streams: Sequence[Stream],
    query: Callable[[Run], T],
    add: Callable[[T, T], T],
    *,
    empty: Callable[[], T],
    size: int,
    replayed: bool,
) -> T:
    """The result of a model whose every column is a count or a sum over hands and which reads its runs' range
    of ids (``$lo``, ``$hi``): ``query`` on each run of :func:`each_run` (in file order, or by ranges of ids
    where the tables are not), the runs' results added up by ``add`` (:func:`added`) as they come, so that one
    run's result and the sum so far are held; ``empty()`` where there are no hands (the model's empty frame)."""
    total: list[T] = []

    def consume(runs: Iterator[tuple[Run, T]]) -> None:  # from nothing: each_run may give the runs twice
        total.clear()
        for _, got in runs:
            total[:] = [add(total[0], got)] if total else [got]

    each_run(con, streams, query, consume, size=size, replayed=replayed)
    return total[0] if total else empty()


def add_up(
    con: duckdb.DuckDBPyConnection,
    streams: Sequence[Stream],
    query: Callable[[duckdb.DuckDBPyConnection], T],
    add: Callable[[T, T], T],
    *,
    size: int,
) -> T:
    """The result of models whose every column is a count or a sum over hands (by keys of their own): ``query``
    run on each run's rows in file order (:func:`read_runs`; given the run's connection, whose tables are the
    run's rows) and the runs' results added up by ``add`` (the sum so far, the next run's) as they come, so that
    one run's rows and the sum are held. Where the runs cannot be read in file order (a connection of its own
    views, :func:`cursor_sees_all`; a table out of order, :class:`OutOfOrder`) or there are no hands, ``query``
    on ``con`` itself, over every hand at once: the same result, its memory held by DuckDB's spilling
    (:func:`bounded`). Unlike :func:`each_run`, the models need no range of ids: a run's connection holds only the
    run's rows."""
    if cursor_sees_all(con):
        try:
            total: list[T] = []
            for _, got in read_runs(con, streams, lambda run: query(run.con), size=size):
                total[:] = [add(total[0], got)] if total else [got]
            if total:
                return total[0]
        except OutOfOrder:
            pass
    return bounded(con, lambda: query(con))


def bounded(con: duckdb.DuckDBPyConnection, query: Callable[[], T]) -> T:
    """``query()``, a query over every hand of ``con`` at once, with DuckDB's memory held to
    :data:`WHOLE_MEMORY`: past it, DuckDB spills its joins, aggregates, sorts and windows to the connection's
    temporary folder, so that the memory does not grow with the warehouse (the time does, more than linearly
    where it spills). A query DuckDB cannot spill (an aggregate that holds lists) is run again without the bound
    rather than fail, and a warning line on stderr says so (once per process: the memory is then DuckDB's own
    default, most of the machine's). Then the limit is DuckDB's default again (an analytics connection sets none
    of its own).
    Called inside another ``bounded`` of the same connection (a model run by a step that is bounded as a whole),
    ``query()`` just runs: the outer call holds the bound until its own query is done, and retries it."""
    default = _memory_limit(con)
    con.execute(f"SET memory_limit = '{WHOLE_MEMORY}'")
    if _memory_limit(con) == default:  # already bounded: an outer call's
        return query()
    try:
        try:
            return query()
        except duckdb.OutOfMemoryException as e:
            if not _UNBOUNDED:
                _UNBOUNDED.append(str(e))
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                print(
                    f"xuezhan: warning: a query over every hand did not fit in {WHOLE_MEMORY} and could not spill to "
                    f"disk ({first[:200]}); it ran again without the bound, in DuckDB's default memory limit",
                    file=sys.stderr,
                )
            con.execute("RESET memory_limit")
            return query()
    finally:
        con.execute("RESET memory_limit")


_UNBOUNDED: list[str] = []  # the first query of the process that ran again without the bound (its error)


def _memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    return str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])


def added(keys: Sequence[str], firsts: Sequence[str] = ()) -> Callable[[pl.DataFrame, pl.DataFrame], pl.DataFrame]:
    """The :func:`add_up` of a model's rows: the rows of both with the same ``keys`` made one, every column
    added up but ``firsts`` (the same for every hand of a key: the first kept); in no particular order. With
    no ``keys`` (a model of one row), every column added up. A sum of nothing but nulls stays null (SQL's)."""

    def add(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
        rows = pl.concat([a, b])
        sums = [
            pl.when(pl.col(c).is_not_null().any()).then(pl.col(c).sum()).alias(c)
            for c in rows.columns
            if c not in keys and c not in firsts
        ]
        if not keys:
            return rows.select(sums).cast(rows.schema)
        kept = [pl.col(name).first() for name in firsts]
        return rows.group_by(keys).agg(*kept, *sums).select(rows.columns).cast(rows.schema)

    return add


def read_runs(
    con: duckdb.DuckDBPyConnection, streams: Sequence[Stream], query: Callable[[Run], T], *, size: int
) -> Iterator[tuple[Run, T]]:
    """Each run of ``size`` hands in file order, with ``query``'s result over its rows: ``streams[0]`` is the
    ``hands`` stream the runs are cut from, the others the tables the query reads besides. Raises
    :class:`OutOfOrder` after the last run if a stream was not read to its end (its rows were not all given to
    their hands' runs). The next run is read and queried ahead, in a thread, while the caller uses this one.
    Every stream runs on a cursor of ``con``: call only where :func:`cursor_sees_all`. Under a scope (a table
    :data:`SCOPE` and the views of :data:`UNSCOPED`), a stream reads its table's view with no scope and keeps
    the rows of the hands in scope (:class:`_Scope`)."""
    if not streams or streams[0].table != "hands":
        raise ValueError("the first stream must be the hands one")
    scope, unscoped = _Scope.of(con), _unscoped_views(con)
    with ExitStack() as stack:
        stack.enter_context(_streaming_threads(con))
        readers = []
        for stream in streams:
            cursor = stack.enter_context(closing(con.cursor()))
            cursor.execute("SET enable_progress_bar = false")
            if scope is not None and stream.table in unscoped:  # in file order, then the rows in scope kept
                reader = cursor.sql(stream.sql(UNSCOPED, scope.prefilter(cursor))).to_arrow_reader(BATCH_ROWS)
                readers.append(_Rows(reader, scope))
            else:
                readers.append(_Rows(cursor.sql(stream.sql()).to_arrow_reader(BATCH_ROWS)))
        local = stack.enter_context(closing(duckdb.connect()))
        local.execute("SET enable_progress_bar = false")
        names = [s.table for s in streams]
        runs = _zip(readers, names, local, max(1, size))
        pool = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="xuezhan-runs"))

        def next_result() -> tuple[Run, T] | None:
            run = next(runs, None)
            return None if run is None else (run, query(run))

        ahead = pool.submit(next_result)
        while (got := ahead.result()) is not None:
            ahead = pool.submit(next_result)
            yield got
        for name, reader in zip(names, readers, strict=True):
            if not reader.done():
                raise OutOfOrder(f"{name}: rows not in the order of hands")


@contextmanager
def _streaming_threads(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB's threads held to :data:`STREAM_THREADS` while the runs' streams read (the setting is the database's,
    every cursor's), then as they were. A stream is a scan in file order that Python reads a batch at a time: more
    threads read ahead of it and hold what they read, so the memory grew with the warehouse for no speed (``stats``
    on 5M hands: 630 MB with 2 threads, 502 MB with 1, 70 s and 73 s; on 200k hands 455 and 409 MB)."""
    (threads,) = con.execute("SELECT current_setting('threads')").fetchall()[0]
    con.execute(f"SET threads = {STREAM_THREADS}")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(threads)}")


def _zip(readers: list[_Rows], names: list[str], local: duckdb.DuckDBPyConnection, size: int) -> Iterator[Run]:
    """The runs of ``readers`` (the hands first), each registered on ``local`` under the tables' names."""
    hands, others = readers[0], readers[1:]
    while True:
        table = hands.take_rows(size)
        if table.num_rows == 0:
            return
        ids = table.column("hand_id")
        wanted = pc.unique(ids)
        parts = [table, *(reader.take_hands(wanted) for reader in others)]
        for name, part in zip(names, parts, strict=True):
            local.register(name, part)
        lo, hi = pc.min_max(ids).values()
        yield Run(local, lo.as_py(), hi.as_py(), table.num_rows)


def _unscoped_views(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The tables with a view of no scope in the schema :data:`UNSCOPED` of ``con``'s database."""
    rows = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND schema_name = ?",
        [UNSCOPED],
    ).fetchall()
    return {name for (name,) in rows}


class _Scope:
    """The hands in scope (the ids of the connection's :data:`SCOPE` table), to keep a batch's rows of them.

    A batch's hands are looked up once each (a hand's rows are consecutive) in a set of the ids built once: Arrow's
    ``is_in`` builds its hash table of the whole scope again at every call (26 ms a batch of ``events`` under a
    scope of 184,510 hands: 9.5 s over 361 batches, where reading them took 0.9 s), and a binary search in the
    sorted ids (Polars' ``search_sorted``) took 1.3 ms a batch of 1,000 hands, the set 0.27 ms. The set holds the
    scope's ids as Python strings: some 90 bytes a hand in scope (15 MB for 168,592 hands).

    Most rows out of scope never reach Python: the stream's query keeps only the rows whose id's hash has its bit
    set in a bit string of the scope (:meth:`prefilter`, :data:`BITS_PER_HAND` bits a hand in scope: a Bloom
    filter of one hash: about 12 % of the rows out of scope let through, none in scope held back). It is a condition of
    the ``WHERE``, which keeps the order, and DuckDB tests it in its own threads: under one player's scope on 1M
    hands, ``events`` read in 4.2 s where every row crossing into Arrow took 9.3 s (and the semi-join 6.9)."""

    def __init__(self, ids: Iterable[str | None]) -> None:
        self.ids = frozenset(h for h in ids if h is not None)
        self.bits = max(64, BITS_PER_HAND * len(self.ids))

    def prefilter(self, cursor: duckdb.DuckDBPyConnection) -> str:
        """The condition of a stream's query on ``cursor`` that lets through every row of a hand in scope and few
        others (its bit string set as a variable of the cursor, which has its own)."""
        cursor.execute(
            f"SET VARIABLE {_BITS} = (SELECT bitstring_agg((hash(hand_id) % {self.bits})::BIGINT, 0, {self.bits - 1})"
            f' FROM main."{SCOPE}")'
        )
        return f"get_bit(getvariable('{_BITS}'), (hash(hand_id) % {self.bits})::INTEGER) = 1"

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection) -> _Scope | None:
        """The scope of ``con``; None where it has no :data:`SCOPE` table (no scope: every hand)."""
        there = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'"
            " AND table_name = ?",
            [SCOPE],
        ).fetchall()
        if there == [(0,)]:
            return None
        return cls(con.sql(f'SELECT hand_id FROM main."{SCOPE}"').to_arrow_table().column(0).to_pylist())

    def inside(self, ids: pa.ChunkedArray) -> np.ndarray:
        """Whether each of ``ids`` is a hand in scope (null: not), as a mask."""
        starts = _segment_starts(ids)
        heads = ids.take(starts).to_pylist()
        found = np.fromiter((h in self.ids for h in heads), dtype=bool, count=len(heads))
        return np.repeat(found, np.diff(np.append(starts, len(ids))))


class _Rows:
    """A stream's batches, taken a run at a time: by rows (``hands``) or by hands (the others); with ``scope``,
    only the rows of the hands in it."""

    def __init__(self, reader: pa.RecordBatchReader, scope: _Scope | None = None) -> None:
        self.reader = reader
        self.schema = reader.schema
        self.scope = scope
        self.pending: pa.Table | None = None
        self.ended = False

    def _more(self) -> bool:
        while not self.ended:
            try:
                batch = self.reader.read_next_batch()
            except StopIteration:
                self.ended = True
                break
            if self.scope is not None:
                batch = batch.filter(pa.array(self.scope.inside(pa.chunked_array([batch.column("hand_id")]))))
            if batch.num_rows == 0:
                continue
            more = pa.Table.from_batches([batch], schema=self.schema)
            self.pending = more if self.pending is None else pa.concat_tables([self.pending, more])
            return True
        return False

    def _pending_rows(self) -> int:
        return 0 if self.pending is None else self.pending.num_rows

    def take_rows(self, n: int) -> pa.Table:
        while self._pending_rows() < n and self._more():
            pass
        return self._split(min(n, self._pending_rows()))

    def take_hands(self, wanted: pa.Array) -> pa.Table:
        """The rows from here up to the first whose hand is not in ``wanted``."""
        taken = 0
        while True:
            if self._pending_rows() == taken and not self._more():
                break
            assert self.pending is not None
            ids = self.pending.column("hand_id").slice(taken)
            starts = _segment_starts(ids)
            inside = pc.is_in(ids.take(starts), value_set=wanted).to_numpy(zero_copy_only=False)
            if not inside.all():
                taken += int(starts[int(np.argmin(inside))])
                break
            taken = self.pending.num_rows
        return self._split(taken)

    def _split(self, n: int) -> pa.Table:
        if self.pending is None:
            return self.schema.empty_table()
        head, self.pending = self.pending.slice(0, n), self.pending.slice(n)
        return head

    def done(self) -> bool:
        return self._pending_rows() == 0 and not self._more()


def _segment_starts(ids: pa.ChunkedArray) -> np.ndarray:
    """Where each run of equal ids starts in ``ids``."""
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    changed = pc.not_equal(ids.slice(1), ids.slice(0, len(ids) - 1)).to_numpy()
    return np.concatenate([[0], np.flatnonzero(changed) + 1])


def range_runs(
    con: duckdb.DuckDBPyConnection, query: Callable[[Run], T], *, size: int, replayed: bool
) -> Iterator[tuple[Run, T]]:
    """The runs of ``size`` consecutive hand ids (``sql/hand_ranges.sql``; ``replayed``: of the replayed hands
    only), each queried on ``con`` itself over its range: what :func:`read_runs` falls back on. Each range
    reads every row group whose ids overlap it: the whole warehouse's, where ids interleave in the files."""
    rows = con.execute(
        sql.load_sql("pipeline.analytics", "hand_ranges"), {"size": max(1, size), "replayed": replayed}
    ).fetchall()
    for _, lo, hi, n in rows:
        run = Run(con, lo, hi, int(n))
        yield run, query(run)
