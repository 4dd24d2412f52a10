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

import pyarrow.parquet as pq
import pytest
from warehouse_compare import assert_same_warehouse

from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import EMPTY_BATCH, Warehouse, WarehouseBusy
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
    with gzip.open(SAMPLE) as f:
        good = [next(f).rstrip(b"\n") for _ in range(lines)]
    edited = json.dumps({**json.loads(good[5]), "x_edited": True}).encode()
    out = [*good[:100], b"{oops", *good[100:700], edited, *good[700:1200], b"[]", good[3], *good[1200:]]
    path = folder / "corpus.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"".join(line + b"\n" for line in out))
    return path


# ---------------------------------------------------------------------------------------------- SIGKILL
@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """1,500 sample lines (one a duplicate of its neighbour) and 4 more (batches of 500, 500, 500 and 4), and
    the warehouse of one clean run over them."""
    folder = tmp_path_factory.mktemp("crash")
    path = corpus(folder, 1500)
    stats = ingest([str(path)], folder / "reference", workers=2)
    assert (stats.lines_read, stats.records_stored, stats.rejects, stats.duplicates) == (1504, 1499, 3, 2)
    return path, folder / "reference"


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
        while not (start.exists() and len(committed(root)) >= batches):
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
    assert [p.name for p in (root / "ingest_runs").iterdir()] == [f"part-{EMPTY_BATCH}.parquet"]
    kept = pq.read_table(root / "hands").num_rows

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
    assert (read, stored) == (1504, 1499 - kept)
    assert read == stored + rejected + duplicates
    assert_same_warehouse(root, reference)
    (run,) = pq.read_table(root / "ingest_runs").to_pylist()
    assert (run["lines_read"], run["records_stored"], run["duplicates"]) == (read, stored, duplicates)
    assert list((root / "_tmp").iterdir()) == []


# -------------------------------------------------------------------------------------------- within a batch
class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no ``except Exception`` catches it."""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("small")
    path = corpus(folder, 120)  # 124 lines: batches of 40, 40, 40 and 4
    ingest([str(path)], folder / "reference", workers=1, chunk_size=40)
    return path, folder / "reference"


@pytest.mark.parametrize("nth", [1, 3, "hands"], ids=lambda n: f"rename-{n}")
def test_a_crash_between_the_renames_of_a_batch_is_undone_when_the_warehouse_opens(
    small: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nth: int | str
) -> None:
    """The second batch dies at one of its renames into place: its files already moved have no hands file,
    so the next open deletes them, and a new run stores that batch whole."""
    path, reference = small
    root = tmp_path / "wh"
    real_replace = os.replace
    moved: list[str] = []

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        target = Path(dst)
        if target.name.endswith("-000002.parquet"):
            if (nth == "hands" and target.parent.name == "hands") or len(moved) + 1 == nth:
                raise Killed
            moved.append(target.parent.name)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(Killed):
        ingest([str(path)], root, workers=1, chunk_size=40)
    monkeypatch.undo()
    leftovers = [p for name in TABLES for p in (root / name).glob("*-000002.parquet")]
    assert sorted(p.parent.name for p in leftovers) == sorted(moved) and "hands" not in moved
    assert len(moved) == (len(leftovers) if nth == "hands" else nth - 1)
    (root / "_tmp" / "junk").mkdir(exist_ok=True)
    (root / "_tmp" / "junk" / "half.parquet").write_bytes(b"PAR1 half written")
    (root / "spill" / ".partial-12345-7").write_bytes(b"x" * 100)

    Warehouse(root).open().close()
    assert [p for name in TABLES for p in (root / name).glob("*-000002.parquet")] == []
    assert list((root / "_tmp").iterdir()) == []
    assert list((root / "spill").iterdir()) == []
    assert pq.read_table(root / "hands").num_rows == 40
    stats = ingest([str(path)], root, workers=1, chunk_size=40)
    assert (stats.records_stored, stats.duplicates) == (80, 41)
    assert_same_warehouse(root, reference)


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
