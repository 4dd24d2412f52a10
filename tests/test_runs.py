"""pipeline/analytics/runs.py: the warehouse read a run of hands at a time, every table once in file order, and
by ranges of ids where the tables are not in one order. Each reading is held to a plain computation over the
whole tables; the orders a warehouse can hold (ids interleaved in the files, a table in another order, a row of
a hand ``hands`` lacks, a connection a cursor cannot see) each get their test."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import duckdb
import polars as pl
import pytest

from pipeline.analytics import runs
from pipeline.analytics.runs import OutOfOrder, Run, Stream, each_run, read_runs

STREAMS = (Stream("hands", "hand_id, replayed"), Stream("events", "hand_id, v", "v >= 0"))


def per_hand(run: Run) -> pl.DataFrame:
    """What a run's query gives: per replayed hand of the run's range, its events' sum and count (the same SQL
    over the warehouse and over a run's rows)."""
    return run.con.sql(
        "SELECT h.hand_id, sum(e.v)::BIGINT AS total, count(e.v) AS n FROM hands AS h "
        "LEFT JOIN events AS e ON e.hand_id = h.hand_id AND e.v >= 0 "
        "WHERE h.replayed AND h.hand_id BETWEEN $lo AND $hi GROUP BY h.hand_id",
        params={"lo": run.lo, "hi": run.hi},
    ).pl()


def room(order: list[str], *, events_order: list[str] | None = None, orphan: bool = False) -> duckdb.DuckDBPyConnection:
    """``hands`` in ``order`` (every seventh not replayed), ``events`` in ``events_order`` (default the same):
    0 to 3 rows a hand, one with a negative value the stream leaves out; ``orphan``: a row of a hand not in
    ``hands``."""
    con = duckdb.connect()
    con.execute("CREATE TABLE hands (hand_id VARCHAR, replayed BOOLEAN)")
    if order:
        con.executemany("INSERT INTO hands VALUES (?, ?)", [(h, k % 7 != 3) for k, h in enumerate(order)])
    rows = []
    for h in events_order or order:
        k = int(h.split("-")[1])
        rows += [(h, k * 10 + j) for j in range(k % 4)] + ([(h, -1)] if k % 5 == 0 else [])
        if orphan and k == 50:
            rows.append(("nobody", 1))
    con.execute("CREATE TABLE events (hand_id VARCHAR, v BIGINT)")
    if rows:
        con.executemany("INSERT INTO events VALUES (?, ?)", rows)
    return con


def whole(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return per_hand(Run(con, "", "\uffff", 0)).sort("hand_id")


def interleaved(n: int = 120) -> list[str]:
    """Ids in the order a platform's files might hold them: copies interleaved, not sorted."""
    order = [f"h-{k:03d}-c{k % 3}" for k in range(n)]
    random.Random(4).shuffle(order)
    return order


def collect(con: duckdb.DuckDBPyConnection, size: int) -> tuple[pl.DataFrame, int]:
    """each_run's result over ``con`` and how many times it consumed the runs."""
    calls: list[pl.DataFrame | None] = []

    def consume(got: Iterator[tuple[Run, pl.DataFrame]]) -> None:
        calls.append(None)
        frames = [frame for _, frame in got]
        calls[-1] = pl.concat(frames) if frames else pl.DataFrame()

    each_run(con, STREAMS, per_hand, consume, size=size, replayed=True)
    last = calls[-1]
    assert last is not None
    return last.sort("hand_id"), len(calls)


def test_runs_in_file_order_cut_the_hands_as_the_files_hold_them_and_give_every_row_to_its_run() -> None:
    order = interleaved()
    con = room(order)
    got = list(read_runs(con, STREAMS, lambda run: run, size=25))
    assert [r.hands for r, _ in got] == [25, 25, 25, 25, 20]
    for k, (run, _) in enumerate(got):  # read_runs's runs: the next 25 of the file order, not 25 consecutive ids
        assert (run.lo, run.hi) == (min(order[25 * k : 25 * k + 25]), max(order[25 * k : 25 * k + 25]))
    replayed = read_runs(
        con, STREAMS, lambda run: run.con.execute("SELECT count(*) FROM hands WHERE replayed").fetchall()[0][0], size=25
    )
    assert sum(n for _, n in replayed) == sum(1 for k in range(len(order)) if k % 7 != 3)
    result, calls = collect(con, 25)
    assert calls == 1 and result.equals(whole(con)) and result.height > 90
    assert (
        result["n"].sum()
        == con.execute(
            "SELECT count(*) FROM events e JOIN hands h USING (hand_id) WHERE h.replayed AND v >= 0"
        ).fetchall()[0][0]
    )


def test_a_table_in_another_order_is_found_after_the_last_run_and_read_again_by_ranges() -> None:
    order = interleaved()
    con = room(order, events_order=sorted(order))
    with pytest.raises(OutOfOrder, match="events"):
        list(read_runs(con, STREAMS, per_hand, size=25))
    result, calls = collect(con, 25)
    assert calls == 2 and result.equals(whole(con))


def test_a_row_of_a_hand_the_hands_lack_sends_the_reading_to_ranges() -> None:
    con = room(interleaved(), orphan=True)
    with pytest.raises(OutOfOrder):
        list(read_runs(con, STREAMS, per_hand, size=25))
    result, calls = collect(con, 25)
    assert calls == 2 and result.equals(whole(con))


def test_one_run_of_every_hand_and_no_hand_at_all() -> None:
    con = room(interleaved(40))
    result, calls = collect(con, 10**6)
    assert calls == 1 and result.equals(whole(con))
    empty = room([])
    seen: list[int] = []
    each_run(empty, STREAMS, per_hand, lambda got: seen.append(len(list(got))), size=10, replayed=True)
    assert seen == [0]


def by_parity(run: Run) -> pl.DataFrame:
    """A model of sums over hands in its run's range: per parity of the hand's number, its events' sum and count."""
    return run.con.sql(
        "SELECT CAST(h.hand_id[3:5] AS INTEGER) % 2 AS parity, sum(e.v)::BIGINT AS total, count(e.v) AS n "
        "FROM hands AS h JOIN events AS e ON e.hand_id = h.hand_id AND e.v >= 0 "
        "WHERE h.replayed AND h.hand_id BETWEEN $lo AND $hi GROUP BY parity",
        params={"lo": run.lo, "hi": run.hi},
    ).pl()


@pytest.mark.parametrize("events_order", [None, "sorted"])
def test_summed_runs_add_up_each_runs_sums_in_file_order_or_by_ranges_and_give_the_empty_model_on_no_hands(
    events_order: str | None,
) -> None:
    """The runs' sums made one by keys equal the model over every hand, whether the runs came in file order or
    (a table out of order) again by ranges: the second reading starts from nothing, nothing counted twice."""
    order = interleaved()
    con = room(order, events_order=sorted(order) if events_order else None)
    got = runs.summed_runs(
        con,
        STREAMS,
        by_parity,
        runs.added(["parity"]),
        empty=lambda: pl.DataFrame(),
        size=25,
        replayed=True,
    ).sort("parity")
    assert got.equals(by_parity(Run(con, "", "\uffff", 0)).sort("parity")) and got["n"].sum() > 90
    empty = runs.summed_runs(
        room([]),
        STREAMS,
        by_parity,
        runs.added(["parity"]),
        empty=lambda: pl.DataFrame({"none": [0]}),
        size=5,
        replayed=True,
    )
    assert empty.columns == ["none"]


def test_a_connection_a_cursor_cannot_see_is_read_on_itself_by_ranges() -> None:
    """A temporary view of the caller's (here: the events without the large values) is the connection's alone:
    the runs are read on it, by ranges, and see its rows, never the table's."""
    con = room(interleaved())
    con.execute("CREATE TEMP VIEW events AS SELECT * FROM memory.main.events WHERE v < 500")
    assert not runs.cursor_sees_all(con)
    result, calls = collect(con, 25)
    assert calls == 1 and result.equals(whole(con)) and result["total"].max() < 3 * 500


def test_a_reader_stopped_half_way_leaves_no_thread_behind() -> None:
    con = room(interleaved())
    reader = read_runs(con, STREAMS, per_hand, size=25)
    next(reader)
    reader.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("xuezhan-runs")]


def test_the_first_stream_must_be_the_hands() -> None:
    with pytest.raises(ValueError, match="hands"):
        list(read_runs(room(["h-001-c1"]), STREAMS[::-1], per_hand, size=5))


def test_a_query_over_every_hand_spills_past_its_bound_and_never_fails(tmp_path, monkeypatch, capsys) -> None:
    """runs.bounded: DuckDB's memory held to the bound, a query bigger than it spills to the connection's folder
    (made when first needed, removed when the connection closes) and gives the whole answer; a query DuckDB
    cannot spill (an aggregate holding one string of everything) runs again without the bound, and says so on
    stderr, once per process; DuckDB's default limit is back after either."""
    monkeypatch.setattr(runs, "WHOLE_MEMORY", "64MB")
    monkeypatch.setattr(runs, "_UNBOUNDED", [])
    spill = tmp_path / "spill"
    con = duckdb.connect()
    con.execute("SET temp_directory = ?", [str(spill)])
    limit = con.execute("SELECT current_setting('memory_limit')").fetchall()
    distinct = "SELECT count(*), sum(k) FROM (SELECT DISTINCT i AS k, repeat('x', 40) || i FROM range(2000000) t(i))"
    assert runs.bounded(con, lambda: con.execute(distinct).fetchall()) == [(2_000_000, 1_999_999_000_000)]
    assert spill.is_dir() and con.execute("SELECT current_setting('memory_limit')").fetchall() == limit
    assert capsys.readouterr().err == ""  # it spilled: nothing to say
    whole = "SELECT length(string_agg(repeat('x', 100), '')) FROM range(1000000)"
    with pytest.raises(duckdb.OutOfMemoryException):  # what the bound alone does to it
        con.execute("SET memory_limit = '64MB'")
        con.execute(whole).fetchall()
    con.execute(f"SET memory_limit = '{limit[0][0]}'")
    assert runs.bounded(con, lambda: con.execute(whole).fetchall()) == [(100_000_000,)]
    assert con.execute("SELECT current_setting('memory_limit')").fetchall() == limit
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "did not fit in 64MB" in said and "without the bound" in said
    assert runs.bounded(con, lambda: con.execute(whole).fetchall()) == [(100_000_000,)]
    assert capsys.readouterr().err == ""  # once per process
    con.close()
    assert not spill.exists()


def test_an_analytics_connection_spills_to_a_folder_of_its_own(tmp_path) -> None:
    """queries.connect's temporary folder: under the system's, one per connection, not DuckDB's .tmp in the
    working directory."""
    import tempfile

    from pipeline.analytics import queries
    from pipeline.ingest.warehouse import Warehouse

    Warehouse(tmp_path / "wh").open().close()
    with queries.connect(tmp_path / "wh") as a, queries.connect(tmp_path / "wh") as b:
        folders = [c.execute("SELECT current_setting('temp_directory')").fetchall()[0][0] for c in (a, b)]
    assert folders[0] != folders[1] and all(f.startswith(tempfile.gettempdir()) for f in folders)


# -------------------------------------------------------------------------------- under a scope
def scoped_room(order: list[str], kept: list[str]) -> duckdb.DuckDBPyConnection:
    """:func:`room`'s tables laid out as :func:`pipeline.analytics.queries.connect` lays out a scope: the tables in
    the schema ``stored``, the hands of ``kept`` in ``main._scope``, the views without the scope in
    :data:`runs.UNSCOPED`, and in front the scoped views, ``… WHERE hand_id IN (SELECT hand_id FROM main._scope)``,
    here each in an order of its own (by a hash of the id and the table's name): a semi-join promises no order, and
    these are certainly not the files', nor one another's."""
    con = room(order)
    con.execute("CREATE SCHEMA stored")
    con.execute(f'CREATE SCHEMA "{runs.UNSCOPED}"')
    con.execute(f'CREATE TABLE "{runs.SCOPE}" (hand_id VARCHAR)')
    if kept:
        con.executemany(f'INSERT INTO "{runs.SCOPE}" VALUES (?)', [(h,) for h in kept])
    for table in ("hands", "events"):
        con.execute(f"CREATE TABLE stored.{table} AS SELECT * FROM main.{table}")
        con.execute(f"DROP TABLE main.{table}")
        con.execute(f'CREATE VIEW "{runs.UNSCOPED}".{table} AS SELECT * FROM stored.{table}')
        con.execute(
            f"CREATE VIEW {table} AS SELECT * FROM stored.{table} WHERE hand_id IN (SELECT hand_id FROM main._scope) "
            f"ORDER BY hash(hand_id, '{table}')"
        )
    return con


def in_file_order(con: duckdb.DuckDBPyConnection, table: str, kept: set[str]) -> list[tuple[object, ...]]:
    """The rows of ``table`` (of the stream's columns, as the stream keeps them) in the order the files hold them,
    of the hands in ``kept``."""
    stream = {s.table: s for s in STREAMS}[table]
    rows = con.execute(stream.sql("stored")).fetchall()
    return [row for row in rows if row[0] in kept]


def no_fallback(*args: object, **kwargs: object) -> None:
    raise AssertionError("fell back to ranges or to a query over every hand")


@pytest.mark.parametrize("seed", range(12))
def test_under_a_scope_the_runs_are_the_hands_in_scope_in_file_order_whatever_order_the_scoped_views_give(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45: a random subset of the hands in scope (none, all, or some), runs of a random size. The runs are
    read in file order without falling back (``range_runs`` and ``bounded`` fail here): a run's hands are the
    next ``size`` hands in scope as the files hold them, every stream gives every row of the hands in scope and
    no other, in file order; the models of each_run, summed_runs and add_up equal themselves over the scoped
    views at once. The scoped views themselves are out of file order (as the next test shows, read through them the
    runs fall back). Half the time the prefilter of the streams' queries lets most rows out of scope through."""
    rng = random.Random(seed)
    order = interleaved()
    share = [0.0, 1.0][seed] if seed < 2 else rng.random()
    kept_order = [h for h in order if rng.random() < share]
    kept = set(kept_order)
    scoped_ids = rng.sample(kept_order, len(kept_order))  # _scope in any order: a set, never a sequence
    con = scoped_room(order, scoped_ids)
    size = rng.randint(1, 40)
    if seed % 2:  # a Bloom filter of 64 bits: most rows out of scope let through to the exact filter
        monkeypatch.setattr(runs, "BITS_PER_HAND", 0)
    if len(kept) > 2:
        assert [h for (h,) in con.execute("SELECT hand_id FROM hands").fetchall()] != kept_order
    monkeypatch.setattr(runs, "range_runs", no_fallback)
    if kept:  # add_up over no hand at all is the query on the connection itself, by design
        monkeypatch.setattr(runs, "bounded", no_fallback)

    def rows(run: Run) -> dict[str, list[tuple[object, ...]]]:  # the run's rows, as each stream gave them
        return {s.table: run.con.execute(s.sql()).fetchall() for s in STREAMS}

    seen: dict[str, list[tuple[object, ...]]] = {"hands": [], "events": []}
    counts = []
    for run, got in read_runs(con, STREAMS, rows, size=size):
        counts.append(run.hands)
        for table in seen:
            seen[table] += got[table]
    assert counts == [min(size, len(kept) - k) for k in range(0, len(kept), size)]
    for table, rows in seen.items():
        assert rows == in_file_order(con, table, kept), table

    if kept:
        result, calls = collect(con, size)
        assert calls == 1 and result.equals(whole(con)) and set(result["hand_id"]) <= kept
    summed = runs.summed_runs(
        con, STREAMS, by_parity, runs.added(["parity"]), empty=pl.DataFrame, size=size, replayed=True
    )
    at_once = by_parity(Run(con, "", "\uffff", 0))
    assert summed.sort("parity").equals(at_once.sort("parity")) if kept else summed.is_empty()
    if kept:
        parity = (
            "SELECT hand_id[3:5]::INTEGER % 2 AS parity, count(*) AS n, sum(v)::BIGINT AS v FROM events WHERE v >= 0"
        )
        query = f"{parity} GROUP BY parity"
        added = runs.add_up(con, STREAMS, lambda c: c.sql(query).pl(), runs.added(["parity"]), size=size)
        assert added.sort("parity").equals(con.sql(query).pl().sort("parity"))


def test_read_through_the_scoped_views_the_runs_fall_back_and_read_without_them_they_do_not() -> None:
    """What the scoped reading is for: :func:`scoped_room`'s scoped views, read as named, give the hands and the
    events in orders that disagree (OutOfOrder: each_run would read everything again by ranges); with the views of
    no scope there, the same runs read in file order."""
    order = interleaved()
    kept = order[::2]
    through_views = scoped_room(order, kept)
    through_views.execute(f'DROP SCHEMA "{runs.UNSCOPED}" CASCADE')
    with pytest.raises(OutOfOrder):
        list(read_runs(through_views, STREAMS, per_hand, size=1))
    assert [r.hands for r, _ in read_runs(scoped_room(order, kept), STREAMS, per_hand, size=1)] == [1] * len(kept)


def test_the_streams_read_on_one_thread_and_the_setting_comes_back() -> None:
    """DuckDB's threads (a setting of the database, every cursor's) are held to runs.STREAM_THREADS while the runs
    are read (more threads read ahead of a stream and hold what they read: the memory grew with the warehouse),
    and are what they were once the runs are read, or abandoned halfway."""
    con = room(interleaved())
    con.execute("SET threads = 3")
    setting = "SELECT current_setting('threads')"
    seen = []

    def query(run: Run) -> pl.DataFrame:
        with con.cursor() as cursor:  # the database's setting, as the streams' cursors read under it
            seen.append(cursor.execute(setting).fetchall()[0][0])
        return per_hand(run)

    got = pl.concat([frame for _, frame in read_runs(con, STREAMS, query, size=7)]).sort("hand_id")
    assert got.equals(whole(con)) and set(seen) == {runs.STREAM_THREADS} and len(seen) > 10
    assert con.execute(setting).fetchall() == [(3,)]
    reader = read_runs(con, STREAMS, query, size=7)
    next(reader)
    assert con.execute(setting).fetchall() == [(runs.STREAM_THREADS,)]
    reader.close()
    assert con.execute(setting).fetchall() == [(3,)]


def test_a_bounded_query_inside_another_keeps_the_outer_bound() -> None:
    """A model that is bounded (queries.run) run by a step bounded as a whole: the inner call neither lifts the
    bound when it returns nor retries on its own; the outer one resets the limit after its whole query."""
    con = duckdb.connect()
    limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]

    def now() -> str:
        return con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]

    seen: list[str] = []

    def step() -> int:
        seen.append(now())
        runs.bounded(con, lambda: seen.append(now()))
        seen.append(now())  # after the inner call: still bounded
        return 1

    assert runs.bounded(con, step) == 1
    assert len(set(seen)) == 1 and seen[0] != limit and now() == limit
    con.close()
