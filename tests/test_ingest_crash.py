"""Crash safety: a real `xuezhan ingest` killed with SIGKILL at several moments, then run again, leaves the
same warehouse as one clean run; a crash between the renames of one batch is cleaned up when the warehouse
is opened; the workers of a killed run do not outlive it; a second writer is turned away while one runs."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from sample_lines import sample_lines
from warehouse_compare import assert_same_warehouse

from pipeline.ingest import warehouse
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import EMPTY_BATCH, MANIFEST, Warehouse, WarehouseBusy
from schemas.tables import TABLES

XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample.jsonl.gz"


def committed(root: Path) -> list[str]:
    """Batch files in place under hands, the empty start left out."""
    folder = root / "hands"
    return sorted(p.name for p in folder.glob("part-*.parquet") if EMPTY_BATCH not in p.name) if folder.exists() else []


def corpus(folder: Path, lines: int) -> Path:
    """The first ``lines`` records of the sample with a few bad lines among them (a reject, a conflict with an
    earlier record, a duplicate), so that every kind of outcome crosses a kill."""
    good = sample_lines(lines)  # records only: the sample's corrupted lines would be rejects of their own
    edited = json.dumps({**json.loads(good[5]), "x_edited": True}).encode()
    out = [*good[:100], b"{oops", *good[100:700], edited, *good[700:1200], b"[]", good[3], *good[1200:]]
    path = folder / "corpus.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"".join(line + b"\n" for line in out))
    return path


# ---------------------------------------------------------------------------------------------- SIGKILL
@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """1,500 sample records (distinct hand ids) and 4 more lines: a broken one, an edit of an earlier record (a
    conflict), ``[]`` and a repeat (batches of 500, 500, 500 and 4), and the warehouse of one clean run over them."""
    folder = tmp_path_factory.mktemp("crash")
    path = corpus(folder, 1500)
    stats = ingest([str(path)], folder / "reference", workers=2)
    assert (stats.lines_read, stats.records_stored, stats.rejects, stats.duplicates) == (1504, 1500, 3, 1)
    return path, folder / "reference"


def runs(root: Path) -> list[str]:
    """Run files under ingest_runs (the empty start left out): a run writes its own when it starts."""
    folder = root / "ingest_runs"
    return sorted(p.name for p in folder.glob("part-*.parquet") if EMPTY_BATCH not in p.name) if folder.exists() else []


def catalogue_runs(root: Path) -> list[dict]:
    """ingest_runs as any DuckDB client sees it on warehouse.duckdb, oldest first."""
    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as con:
        cur = con.execute("SELECT * FROM ingest_runs ORDER BY started_at")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def assert_readers_see_whole_batches(root: Path, reference: Path, *, killed: bool | None, cli: bool = True) -> int:
    """What readers see, without a writer to repair anything: plain DuckDB on warehouse.duckdb, and (``cli``)
    ``xuezhan stats`` and ``xuezhan audit``. Every stored hand has all its rows (as in ``reference``, one
    clean run) and its run's row, the runs
    reconcile with the tables, and the commands warn (one line) exactly when the last run did not finish.
    Returns the number of hands."""
    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as con:
        hands = {h for (h,) in con.execute("SELECT hand_id FROM hands").fetchall()}
        for table in ("player_hands", "events", "wins", "payments", "issues"):
            orphans = con.execute(f"SELECT count(*) FROM {table} WHERE hand_id NOT IN (SELECT hand_id FROM hands)")
            assert orphans.fetchone() == (0,), f"{table} rows without their hand"
        for table in ("player_hands", "events", "wins", "payments", "issues"):  # each stored hand whole
            # the issues view adds the session findings worked out from the hands stored (a session cut by the
            # kill has gaps): the stored rows are the others
            stored_rows = " WHERE code NOT LIKE 'SESSION\\_%' ESCAPE '\\'" if table == "issues" else ""
            (mine,) = con.execute(f"SELECT count(*) FROM {table}{stored_rows}").fetchone()
            (whole,) = con.execute(
                f"SELECT count(*) FROM read_parquet('{reference / table}/*.parquet') "
                "WHERE hand_id IN (SELECT hand_id FROM hands)"
            ).fetchone()
            assert mine == whole, f"{table}: {mine} rows for the stored hands, {whole} in one clean run"
        (read, stored, rejects, duplicates, unfinished) = con.execute(
            "SELECT sum(lines_read), sum(records_stored), sum(rejects), sum(duplicates), "
            "bool_or(finished_at IS NULL AND started_at = (SELECT max(started_at) FROM ingest_runs)) FROM ingest_runs"
        ).fetchone()
        assert stored == len(hands)  # every stored hand is counted by its run
        assert rejects == con.execute("SELECT count(*) FROM rejects").fetchone()[0]
        assert read == stored + rejects + duplicates
        runs_of_hands = con.execute(
            "SELECT count(*) FROM hands WHERE ingest_run NOT IN (SELECT run_id FROM ingest_runs)"
        )
        assert runs_of_hands.fetchone() == (0,)
        assert killed is None or unfinished == killed  # the last run is incomplete
    if cli:
        for command in (["stats", "--format", "json"], ["audit", "--format", "json"]):
            done = subprocess.run([XUEZHAN, *command, "--warehouse", str(root)], capture_output=True, text=True)
            warnings = [line for line in done.stderr.splitlines() if "warning" in line]
            assert "Traceback" not in done.stderr
            assert len(warnings) == (1 if killed else 0), done.stderr
            if killed:
                assert "incomplete" in warnings[0] and "run the ingest again" in warnings[0]
            if hands:
                assert done.returncode == 0, done.stderr
                if command[0] == "stats":
                    assert 0 < json.loads(done.stdout)["hands"] <= len(hands)  # (stats counts the hands it can)
            else:
                assert done.returncode == 2 and "no records" in done.stderr
    return len(hands)


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (the worker pool)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("batches", [0, 1, 2], ids=lambda n: f"after-{n}-batches")
def test_kill_9_then_run_again_equals_one_clean_run(big: tuple[Path, Path], tmp_path: Path, batches: int) -> None:
    """Kill the command once ``batches`` batches are committed (0: as soon as the warehouse exists), check its
    workers die with it, run it again: the tables hold exactly what one clean run stores."""
    path, reference = big
    root = tmp_path / "wh"
    proc = subprocess.Popen(
        [XUEZHAN, "ingest", str(path), "--warehouse", str(root), "--workers", "1", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        start = root / "hands" / f"part-{EMPTY_BATCH}.parquet"
        deadline = time.monotonic() + 60
        while not (start.exists() and len(runs(root)) == 1 and len(committed(root)) >= batches):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run never got that far"
            time.sleep(0.01)
        workers = children(proc.pid)
        assert workers or batches == 0  # records are validated in a worker process, not in the command
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group we started, workers too
            proc.wait()
    deadline = time.monotonic() + 10
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(w) for w in workers), "workers outlived the killed run"
    at_kill = len(committed(root))
    assert batches <= at_kill < 4, "the run was not killed part-way"
    kept = assert_readers_see_whole_batches(root, reference, killed=True)  # before any rerun

    again = subprocess.run(
        [XUEZHAN, "ingest", str(path), "--warehouse", str(root), "--workers", "2", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    summary = re.match(
        r"lines read (\d+) = stored (\d+) \(invalid \d+\) \+ rejects (\d+) \(conflicts \d+\) "
        r"\+ duplicates (\d+)\n",
        again.stdout,
    )
    assert summary, again.stdout
    # ingest exits 1 when the run rejected a line (the corpus holds one that is not JSON), else 0
    assert again.returncode == (1 if int(summary.group(3)) else 0), again.stderr
    read, stored, rejected, duplicates = map(int, summary.groups())
    assert (read, stored) == (1504, 1500 - kept)
    assert read == stored + rejected + duplicates
    assert_same_warehouse(root, reference)
    killed, rerun = catalogue_runs(root)
    assert killed["finished_at"] is None and killed["records_stored"] == kept
    assert (rerun["lines_read"], rerun["records_stored"], rerun["duplicates"]) == (read, stored, duplicates)
    assert list((root / "_tmp").iterdir()) == []
    assert assert_readers_see_whole_batches(root, reference, killed=False) == 1500


# -------------------------------------------------------------------------------------------- within a batch
class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no ``except Exception`` catches it."""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("small")
    path = corpus(folder, 120)  # 124 lines: batches of 40, 40, 40 and 4
    ingest([str(path)], folder / "reference", workers=1, chunk_size=40)
    return path, folder / "reference"


def test_readers_see_whole_batches_at_every_step_of_a_commit(
    small: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At every step of every batch's commit (each file written, each rename, each folder fsync, the
    manifest), the run is stopped in its tracks and readers look: plain DuckDB on warehouse.duckdb sees each
    batch whole or not at all, with runs that reconcile. That is the state a kill at that step leaves."""
    path, reference = small
    root = tmp_path / "wh"
    seen: list[int] = []
    real_write, real_replace, real_fsync_dir = warehouse.write_durably, os.replace, warehouse.fsync_dir

    def look() -> None:
        if (root / MANIFEST).exists() and (root / "warehouse.duckdb").exists() and runs(root):
            seen.append(assert_readers_see_whole_batches(root, reference, killed=None, cli=False))

    def write(p: Path, data: bytes) -> None:
        look()
        real_write(p, data)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        look()
        real_replace(src, dst)

    def fsync_dir(folder: str | os.PathLike[str]) -> None:
        look()
        real_fsync_dir(folder)

    monkeypatch.setattr(warehouse, "write_durably", write)
    monkeypatch.setattr(warehouse, "fsync_dir", fsync_dir)
    monkeypatch.setattr(os, "replace", replace)
    ingest([str(path)], root, workers=1, chunk_size=40)
    monkeypatch.undo()
    assert len(seen) > 60 and len(set(seen)) == 5 and seen[-1] == 120  # the start, then each of the 4 batches
    assert seen == sorted(seen)  # and the hands only ever grew, a batch at a time
    assert assert_readers_see_whole_batches(root, reference, killed=False, cli=False) == 120


KILL_AT = """
import os, sys
from pathlib import Path
import pipeline.ingest.warehouse as warehouse
from pipeline.ingest.run import ingest
step, steps = int(sys.argv[3]), [0]
real = {"write": warehouse.write_durably, "replace": os.replace, "fsync_dir": warehouse.fsync_dir}
def hook(kind):
    def step_then(*args):
        if any("-000002" in str(a) for a in args) or (steps[0] and steps[0] < 100):
            steps[0] += 1  # the steps of batch 2's commit, the manifest's included
            if steps[0] == step:
                os._exit(9)  # as SIGKILL: nothing more runs
        return real[kind](*args)
    return step_then
warehouse.write_durably, os.replace, warehouse.fsync_dir = hook("write"), hook("replace"), hook("fsync_dir")
ingest([sys.argv[1]], sys.argv[2], workers=1, chunk_size=40)
"""


@pytest.mark.parametrize("step", [1, 4, 7, 9, 12, 14, 16, 18, 19, 20], ids=lambda n: f"step-{n}")
def test_a_kill_at_a_step_of_a_commit_then_readers_then_a_rerun(
    small: tuple[Path, Path], tmp_path: Path, step: int
) -> None:
    """A process killed (``os._exit``) at a step of batch 2's commit: before any rerun, DuckDB, ``xuezhan
    stats`` and ``xuezhan audit`` see batch 1 (and batch 2 whole, once its manifest is in place), reconciled,
    with one warning line; a rerun completes the warehouse, equal to one clean run, and the warning goes."""
    path, reference = small
    root = tmp_path / "wh"
    done = subprocess.run([sys.executable, "-c", KILL_AT, str(path), str(root), str(step)], capture_output=True)
    assert done.returncode == 9, done.stderr.decode()
    assert assert_readers_see_whole_batches(root, reference, killed=True) in (40, 80)
    stats = ingest([str(path)], root, workers=1, chunk_size=40)
    assert stats.reconciled
    assert_same_warehouse(root, reference)
    assert assert_readers_see_whole_batches(root, reference, killed=False) == 120
    assert list((root / "_tmp").iterdir()) == []
    committed = {r["batch"] for r in pq.read_table(root / MANIFEST).to_pylist()}
    in_folders = {
        p.name[5:-8] for name in TABLES if name != "ingest_runs" for p in (root / name).glob("part-*.parquet")
    }
    assert in_folders == committed  # the killed batch's files are gone, nothing else was


def test_open_removes_a_part_file_without_its_hands_file_and_junk_in_tmp(
    small: tuple[Path, Path], tmp_path: Path
) -> None:
    """The same, laid out by hand: player_hands and events files of a batch whose hands file never landed."""
    _, reference = small
    root = tmp_path / "wh"
    shutil.copytree(reference, root)
    some = sorted((root / "player_hands").glob("part-2*.parquet"))[0]
    shutil.copy(some, root / "player_hands" / "part-20990101T000000-deadbeef-000001.parquet")
    shutil.copy(sorted((root / "events").glob("part-2*.parquet"))[0], root / "events" / "part-x-000009.parquet")
    (root / "_tmp" / "hands-part-x.parquet").write_bytes(b"half")
    before = {name: pq.read_table(reference / name).num_rows for name in TABLES}
    assert pq.read_table(root / "player_hands").num_rows > before["player_hands"]

    Warehouse(root).open().close()
    assert {name: pq.read_table(root / name).num_rows for name in TABLES} == before
    assert list((root / "_tmp").iterdir()) == []
    assert_same_warehouse(root, reference)


# ---------------------------------------------------------------------------------------------- one writer
HOLD = """
import sys, time
from pipeline.ingest.warehouse import Warehouse
wh = Warehouse(sys.argv[1]).open()
(wh.tmp / "in-flight.parquet").write_bytes(b"being written")
print("open", flush=True)
time.sleep(60)
"""


def test_a_second_writer_is_turned_away_and_a_killed_one_leaves_no_lock(
    small: tuple[Path, Path], tmp_path: Path
) -> None:
    path, _ = small
    root = tmp_path / "wh"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(WarehouseBusy, match="another ingest run"):
            ingest([str(path)], root, workers=1)
        assert (root / "_tmp" / "in-flight.parquet").exists()  # the running writer's files were left alone
    finally:
        holder.kill()
        holder.wait()
    stats = ingest([str(path)], root, workers=1)
    assert stats.records_stored == 120
