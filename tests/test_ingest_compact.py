"""Compaction (issue 23): the committed batches folded into one file per table through the manifest's commit
point. A compacted warehouse holds the same rows as the uncompacted one, its runs still reconcile (also an
unfinished run's, whose counts come from the manifest), a new ingest still knows every stored record and
reject, and a kill at any step of a compaction leaves the old batches or the compacted ones, never both."""

from __future__ import annotations

import errno
import gc
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_ingest_crash import KILL_AT, assert_readers_see_whole_batches, corpus
from warehouse_compare import assert_same_warehouse

from pipeline.ingest import warehouse
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import COMPACT_AFTER, COMPACTED, MANIFEST, RUN_COUNTS, Warehouse
from schemas.tables import TABLES

XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))


def manifest(root: Path) -> list[dict]:
    return pq.read_table(root / MANIFEST).to_pylist()


def batch_files(root: Path) -> set[str]:
    """The batches that have a file in some table folder."""
    return {p.name[5:-8] for name in TABLES if name != "ingest_runs" for p in (root / name).glob("part-*.parquet")}


def files_of(root: Path, table: str) -> list[str]:
    return sorted(p.name for p in (root / table).glob("part-*.parquet"))


def assert_folders_match_manifest(root: Path) -> None:
    """Every file in a table folder belongs to a batch the manifest names, and every batch with files has its
    hands file."""
    named = {r["batch"] for r in manifest(root)}
    assert batch_files(root) <= named
    for row in manifest(root):
        if row["batch"].startswith(RUN_COUNTS):
            assert row["batch"] not in batch_files(root)  # a counts row names no files
        else:
            assert (root / "hands" / f"part-{row['batch']}.parquet").exists()


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The corpus (124 lines: 120 records, two bad lines, a conflict and a duplicate), the warehouse of one
    clean run in batches of 40 (not compacted: 4 batches) and the same input in batches of 10 (13 batches:
    fewer than ingest compacts by itself)."""
    folder = tmp_path_factory.mktemp("compact")
    path = corpus(folder, 120)
    ingest([str(path)], folder / "reference", workers=1, chunk_size=40)
    stats = ingest([str(path)], folder / "small-batches", workers=1, chunk_size=10)
    assert stats.compacted == 0 and len(files_of(folder / "small-batches", "hands")) == 14  # and the empty file
    return path, folder / "reference", folder / "small-batches"


@pytest.mark.parametrize("threads", [1, 3])
def test_a_compacted_warehouse_holds_the_same_rows_and_reconciles(
    made: tuple[Path, Path, Path], tmp_path: Path, threads: int
) -> None:
    """The same whether the tables are merged one after another or on threads (ingest: one per worker)."""
    _, reference, small = made
    root = tmp_path / "wh"
    shutil.copytree(small, root)
    before = catalogue(root)
    with Warehouse(root) as wh:
        assert wh.compact(threads=threads) == 13
    for name in TABLES:
        if name != "ingest_runs":
            data = [f for f in files_of(root, name) if "empty" not in f]
            assert len(data) <= 1 and all(f.startswith(f"part-{COMPACTED}") for f in data), (name, data)
    assert_same_warehouse(root, reference)
    assert_same_warehouse(root, small)
    assert catalogue(root) == before  # every table and ingest_runs, as DuckDB on warehouse.duckdb sees them
    assert_readers_see_whole_batches(root, reference, killed=False)
    assert_folders_match_manifest(root)
    (run,) = [r for r in manifest(root) if r["batch"].startswith(RUN_COUNTS)]
    assert (run["lines_read"], run["records_stored"], run["rejects"], run["duplicates"]) == (124, 120, 3, 1)
    with Warehouse(root) as wh:
        assert wh.compact() == 0  # one batch left: nothing to do


def catalogue(root: Path) -> dict[str, list[tuple]]:
    """Every table as DuckDB on warehouse.duckdb reads it, rows sorted."""
    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as con:
        return {name: sorted(con.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr) for name in TABLES}


def test_after_compaction_a_rerun_stores_nothing_and_a_conflict_is_still_one(
    made: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Deduplication reads the stored records and rejects from the compacted files: the same input again is
    all duplicates; a known hand_id with other content is a conflict; a new record is stored."""
    path, reference, small = made
    root = tmp_path / "wh"
    shutil.copytree(small, root)
    with Warehouse(root) as wh:
        wh.compact()
    again = ingest([str(path)], root, workers=1, chunk_size=40)
    assert (again.lines_read, again.records_stored, again.rejects, again.duplicates) == (124, 0, 0, 124)
    assert_same_warehouse(root, reference)
    with gzip.open(path) as f:
        record = json.loads(f.readline())
    edited = {**record, "x_other": 1}
    fresh = {**record, "hand_id": record["hand_id"] + "-new"}
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps(edited) + "\n" + json.dumps(fresh) + "\n")
    stats = ingest([str(more)], root, workers=1)
    assert (stats.records_stored, stats.conflicts, stats.duplicates) == (1, 1, 0)
    with Warehouse(root).connect() as con:
        (hands,) = con.execute("SELECT count(*) FROM hands").fetchone()
        (read, stored, rejects, dup) = con.execute(
            "SELECT sum(lines_read), sum(records_stored), sum(rejects), sum(duplicates) FROM ingest_runs"
        ).fetchone()
    assert hands == 121 == stored and read == stored + rejects + dup


def test_ingest_compacts_by_itself_after_many_batches_and_a_second_run_folds_only_its_own(
    made: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    path, reference, _ = made
    root = tmp_path / "wh"
    stats = ingest([str(path)], root, workers=1, chunk_size=5)  # 25 batches: more than COMPACT_AFTER
    assert stats.compacted == 25 > COMPACT_AFTER and stats.reconciled
    assert "compacted 25 batches" in stats.text()
    assert_same_warehouse(root, reference)
    assert_readers_see_whole_batches(root, reference, killed=False, cli=False)
    first = files_of(root, "events")
    assert len(first) == 2  # the empty file and the compacted one
    extra = tmp_path / "extra.jsonl"
    extra.write_bytes(b"".join(renamed(line, i) for i, line in enumerate(records(path)[:90])))
    second = ingest([str(extra)], root, workers=1, chunk_size=5)  # 18 new batches
    assert second.compacted == 18
    assert set(first) < set(files_of(root, "events")) and len(files_of(root, "events")) == 3  # its own file
    with Warehouse(root) as wh:
        assert wh.compact() == 2  # everything: one file per table
    assert len(files_of(root, "events")) == 2
    with Warehouse(root).connect() as con:
        (hands,) = con.execute("SELECT count(*) FROM hands").fetchone()
        runs = con.execute("SELECT lines_read, records_stored, rejects, duplicates FROM ingest_runs").fetchall()
    assert hands == 120 + 90 and sum(r[1] for r in runs) == hands
    assert all(r[0] == r[1] + r[2] + r[3] for r in runs)


def records(path: Path) -> list[bytes]:
    """The lines of the corpus that are records."""
    with gzip.open(path) as f:
        return [line for line in f.read().splitlines() if line.startswith(b"{") and b"hand_id" in line]


def renamed(line: bytes, i: int) -> bytes:
    obj = json.loads(line)
    obj["hand_id"] = f"{obj['hand_id']}-again-{i}"
    return json.dumps(obj).encode() + b"\n"


def test_an_unfinished_run_still_reconciles_after_compaction_and_a_rerun_completes(
    made: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A run killed after its second batch (no finished_at: its counts come from the manifest), then compacted:
    its counts are the counts row's, readers still warn and reconcile; a rerun completes the warehouse."""
    path, reference, _ = made
    root = tmp_path / "wh"
    done = subprocess.run([sys.executable, "-c", KILL_AT, str(path), str(root), "1"], capture_output=True)
    assert done.returncode == 9, done.stderr.decode()
    kept = assert_readers_see_whole_batches(root, reference, killed=True, cli=False)
    assert kept == 40
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"not json\n[1]\n")
    ingest([str(junk)], root, workers=1, chunk_size=1)  # two batches of another run to fold (rejects only)
    with Warehouse(root) as wh:
        assert wh.compact() == 3
    counts = [r for r in manifest(root) if r["batch"].startswith(RUN_COUNTS)]
    assert [(r["records_stored"], r["rejects"]) for r in counts] == [(40, 0), (0, 2)]
    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as con:
        killed = con.execute("SELECT lines_read, records_stored FROM ingest_runs WHERE finished_at IS NULL").fetchall()
    assert killed == [(40, 40)]  # from the counts row: the killed run's batch was folded
    assert assert_readers_see_whole_batches(root, reference, killed=False, cli=False) == 40
    stats = ingest([str(path)], root, workers=1, chunk_size=40)
    assert stats.records_stored == 80 and stats.reconciled
    assert_readers_see_whole_batches(root, reference, killed=False, cli=False)


def test_a_connection_made_before_a_compaction_keeps_reading_its_snapshot(
    made: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Issue 39: a reader's snapshot survives a writer's commit. The folded files stay while a connection that
    may read them lives; the first writer that finds no reader removes them; the rows are the same throughout."""
    _, _, small = made
    root = tmp_path / "wh"
    shutil.copytree(small, root)
    con = Warehouse(root).connect()
    query = "SELECT count(*), sum(hash(hand_id)) FROM hands"
    before = con.execute(query).fetchone()
    assert before is not None and before[0] == 120
    old = set(root.glob("hands/part-*.parquet"))
    with Warehouse(root) as wh:
        assert wh.compact() > 1
    assert con.execute(query).fetchone() == before  # read after the commit: the snapshot's files, whole
    assert old <= set(root.glob("hands/part-*.parquet"))  # kept for it
    with Warehouse(root) as wh:  # a writer while the reader lives: the files stay
        pass
    assert old <= set(root.glob("hands/part-*.parquet"))
    con.close()
    del con
    gc.collect()
    with Warehouse(root).connect() as fresh:
        assert fresh.execute(query).fetchone() == before
        with Warehouse(root) as wh:  # a reader of the new snapshot does not keep the old files either
            pass
        assert old <= set(root.glob("hands/part-*.parquet"))  # (any reader holds them: it cannot say which)
    del fresh
    gc.collect()
    with Warehouse(root) as wh:
        pass
    assert len(list(root.glob("hands/part-*.parquet"))) == 2  # the empty start and the compacted batch
    with Warehouse(root).connect() as fresh:
        assert fresh.execute(query).fetchone() == before


def test_an_older_file_without_a_later_column_is_compacted_with_nulls(tmp_path: Path) -> None:
    """Schema evolution: a batch file written before a column existed reads as null in that column, compacted
    or not."""
    root = tmp_path / "wh"
    rows = [{"hand_id": f"h{i}", "record_sha256": f"{i:064x}"} for i in range(3)]
    with Warehouse(root) as wh:
        for i, row in enumerate(rows):
            wh.write_batch(f"b{i}", {"hands": pa.Table.from_pylist([row], schema=TABLES["hands"])})
        old = TABLES["hands"].remove(TABLES["hands"].get_field_index("valid"))
        pq.write_table(pa.Table.from_pylist([rows[0]], schema=old), root / "hands" / "part-b0.parquet")
        with wh.connect() as con:
            before = con.execute("SELECT hand_id, valid FROM hands ORDER BY hand_id").fetchall()
        assert wh.compact() == 3
        with wh.connect() as con:
            assert con.execute("SELECT hand_id, valid FROM hands ORDER BY hand_id").fetchall() == before
    assert before[0] == ("h0", None)


# ---------------------------------------------------------------------------------------- a kill at each step
COMPACT_KILL_AT = """
import os, sys
import pipeline.ingest.warehouse as warehouse
step, steps = int(sys.argv[2]), [0]
kinds = []
def hook(kind, real):
    def step_then(*args, **kwargs):
        steps[0] += 1
        kinds.append(kind)
        if steps[0] == step:
            os._exit(9)  # as SIGKILL: nothing more runs
        return real(*args, **kwargs)
    return step_then
wh = warehouse.Warehouse(sys.argv[1]).open()
for name in ("write_durably", "fsync_dir", "merge_files", "remove"):
    setattr(warehouse, name, hook(name, getattr(warehouse, name)))
os.replace = hook("replace", os.replace)
folded = wh.compact()
print(folded, " ".join(kinds))
"""


def test_a_kill_at_each_step_of_a_compaction_leaves_the_old_batches_or_the_new_never_both(
    made: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Each step of a compaction (each file merged, each rename, each folder fsync, the manifest; of the old
    files' removals, alike but for the file, the first and the last): the process is killed there. Readers
    then see every hand once, reconciled; the next writer's open leaves only files the manifest names; the
    same content as one clean run; a rerun stores nothing; a compaction again completes it."""
    path, reference, small = made
    dry = tmp_path / "dry"
    shutil.copytree(small, dry)
    done = subprocess.run([sys.executable, "-c", COMPACT_KILL_AT, str(dry), "0"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    folded, *kinds = done.stdout.split()
    assert int(folded) == 13
    commit = kinds.index("write_durably") + 2  # the manifest written, then renamed over the old one
    assert kinds[commit - 1] == "replace" and kinds.count("remove") > 13 * 5  # the old files' removals
    # every step up to the commit point and just after it; of the removals (each the same step, one file
    # more), the first and the last; the folders' fsyncs at the end
    removals = [i + 1 for i, kind in enumerate(kinds) if kind == "remove"]
    chosen = [*range(1, commit + 3), removals[0], removals[-1], len(kinds)]
    steps = len(kinds)
    outcomes = set()
    for step in sorted(set(chosen)):
        root = tmp_path / f"wh-{step}"
        shutil.copytree(small, root)
        done = subprocess.run([sys.executable, "-c", COMPACT_KILL_AT, str(root), str(step)], capture_output=True)
        assert done.returncode == 9, done.stderr.decode()
        assert assert_readers_see_whole_batches(root, reference, killed=False, cli=False) == 120, step
        outcomes.add(any(r["batch"].startswith(COMPACTED) for r in manifest(root)))
        Warehouse(root).open().close()
        assert_folders_match_manifest(root)
        assert_same_warehouse(root, reference)
        shutil.rmtree(root)
    assert outcomes == {False, True}  # killed before the commit point and after it
    root = tmp_path / "last"
    shutil.copytree(small, root)
    subprocess.run([sys.executable, "-c", COMPACT_KILL_AT, str(root), str(steps - 1)], capture_output=True)
    again = ingest([str(path)], root, workers=1)
    assert (again.records_stored, again.duplicates) == (0, 124)
    with Warehouse(root) as wh:
        wh.compact()
    assert_same_warehouse(root, reference)
    assert_readers_see_whole_batches(root, reference, killed=False, cli=False)


# ---------------------------------------------------------------------------------------------- the command
def test_the_compact_command(made: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, reference, small = made
    root = tmp_path / "wh"
    shutil.copytree(small, root)
    done = subprocess.run([XUEZHAN, "compact", "--warehouse", str(root)], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "compacted 13 batches\n", "")
    done = subprocess.run([XUEZHAN, "compact", "--warehouse", str(root)], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "nothing to compact\n")
    assert_same_warehouse(root, reference)
    missing = subprocess.run([XUEZHAN, "compact", "--warehouse", str(tmp_path / "no")], capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.startswith("xuezhan: no warehouse at")
    assert not (tmp_path / "no").exists()
    assert warehouse.has_files("compact-x")


@pytest.mark.parametrize(("where", "threads"), [("merge", 1), ("merge", 2), ("rename", 1), ("manifest", 1)])
def test_a_full_disk_in_a_compaction_leaves_the_old_batches_and_no_new_file(
    made: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, threads: int
) -> None:
    """ENOSPC while a compacted file is written (also while other tables are merged beside it, on threads), at a
    rename into a folder, or at the manifest: the error is raised naming the file, the old batches stay
    committed, and no file of the compacted batch is left."""
    _, reference, small = made
    root = tmp_path / "wh"
    shutil.copytree(small, root)
    before = manifest(root)
    calls = {"n": 0}

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(args[-1]))

    real_merge, real_replace = warehouse.merge_files, os.replace

    def merge(files: list[Path], schema: pa.Schema, path: Path) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            full(path)
        real_merge(files, schema, path)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        calls["n"] += 1
        if (where == "rename" and calls["n"] == 3) or (where == "manifest" and Path(dst).name == MANIFEST):
            full(dst)
        real_replace(src, dst)

    wh = Warehouse(root).open()
    if where == "merge":
        monkeypatch.setattr(warehouse, "merge_files", merge)
    else:
        monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space") as raised:
        wh.compact(threads=threads)
    monkeypatch.undo()
    wh.close()
    assert raised.value.filename
    assert manifest(root) == before
    assert not any(COMPACTED in name for name in batch_files(root))
    # of the compacted files none is left; a staged manifest may be (the next open clears _tmp, as for a batch)
    assert all(p.name.startswith("manifest-") for p in (root / "_tmp").iterdir())
    assert_same_warehouse(root, reference)
    assert_readers_see_whole_batches(root, reference, killed=False, cli=False)
    with Warehouse(root) as again:  # once there is room: compacted
        assert again.compact() == 13
    assert_same_warehouse(root, reference)


def test_a_compaction_of_large_rejected_lines_holds_a_bounded_row_group_at_a_time(tmp_path, monkeypatch) -> None:
    """Issue 39: the end-of-run compaction held every rejected line of up to 4 MiB at once (1.9 GB for 380 of
    them) until 128 Ki rows were pending. Now what is held goes out as a row group once its bytes reach
    MERGE_BYTES: every row in order, no row group much larger than the bound."""
    monkeypatch.setattr(warehouse, "MERGE_BYTES", 3 << 20)
    schema = TABLES["rejects"]
    files, raws = [], []
    for k in range(10):
        raw = bytes([65 + k]) * (1 << 20)  # 1 MiB each, one per batch file
        raws.append(raw)
        row = {"source_file": "in.jsonl", "source_line": k + 1, "raw": raw, "raw_path": None, "size": len(raw)}
        row |= {"sha256": f"{k:064x}", "code": "SCHEMA_JSON", "message": "not JSON", "hand_id": None}
        path = tmp_path / f"part-{k}.parquet"
        pq.write_table(pa.Table.from_pylist([row | {"ingest_run": "r"}], schema=schema), path)
        files.append(path)
    out = tmp_path / "merged.parquet"
    warehouse.merge_files(files, schema, out)
    merged = pq.ParquetFile(out)
    assert merged.read().column("raw").to_pylist() == raws
    groups = [merged.metadata.row_group(g).num_rows for g in range(merged.metadata.num_row_groups)]
    assert sum(groups) == 10 and max(groups) <= 3, groups  # 3 MiB held at most: three rows of 1 MiB
