"""Readers survive a writer's commit (issue 39): ``stats`` and ``report``, connected to a warehouse, go on
reading the snapshot they opened while an ingest ends in a compaction that folds the very files they read,
and finish with whole answers (the same as before the ingest); the folded files go once no reader holds them.

Deterministic: the reader, a child process, says when it has connected (a FIFO) and waits for the test's word
(another FIFO) before it runs a single query; the ingest runs in between."""

from __future__ import annotations

import gc
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sample_lines import sample_lines

from pipeline.ingest import warehouse
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import Warehouse

ROOT = Path(__file__).resolve().parents[1]


def records(folder: Path, name: str, lines: list[bytes]) -> Path:
    path = folder / name
    path.write_bytes(gzip.compress(b"".join(line + b"\n" for line in lines)))
    return path


def reader(folder: Path, *args: str) -> tuple[subprocess.Popen[str], Path, Path]:
    """The CLI in a child whose third warehouse connection (the command's own, after the checks that the
    warehouse holds records and how many are in scope), once made, writes to FIFO ``connected`` and then waits
    to read FIFO ``go``."""
    connected, go = folder / "connected", folder / "go"
    for fifo in (connected, go):
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
    program = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "import pipeline.analytics.queries as q\n"
        "real, calls = q.connect, []\n"
        "def connect(*a, **k):\n"
        "    con = real(*a, **k)\n"
        "    calls.append(con)\n"
        "    if len(calls) == 3:\n"
        f"        open({str(connected)!r}, 'w').close(); open({str(go)!r}).read()\n"
        "    return con\n"
        "q.connect = connect\n"
        "from cli import app; app(prog_name='xuezhan')"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", program, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return child, connected, go


@pytest.mark.parametrize(
    "command", [["stats", "--format", "json"], ["report", "--out", "REPORT", "--quiet"]], ids=["stats", "report"]
)
def test_a_reader_finishes_whole_while_an_ingest_compacts_the_files_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setattr(warehouse, "COMPACT_AFTER", 1)  # every run compacts, the second one everything
    lines = sample_lines(240)
    root = tmp_path / "wh"
    ingest([str(records(tmp_path, "a.jsonl.gz", lines[:120]))], root, workers=1, chunk_size=40)
    args = [a.replace("REPORT", str(tmp_path / "before")) for a in command]
    before = subprocess.run(
        [sys.executable, "-c", "from cli import app; app(prog_name='xuezhan')", *args, "--warehouse", str(root)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert before.returncode == 0, before.stderr
    snapshot = set(root.glob("*/part-*.parquet"))

    args = [a.replace("REPORT", str(tmp_path / "during")) for a in command]
    child, connected, go = reader(tmp_path, *args, "--warehouse", str(root))
    try:
        with open(connected) as said:  # the reader has its snapshot
            said.read()
        stats = ingest([str(records(tmp_path, "b.jsonl.gz", lines[120:]))], root, workers=1, chunk_size=40)
        assert stats.compacted >= 4  # the earlier compacted batch folded too: the files the reader will read
        assert snapshot <= set(root.glob("*/part-*.parquet"))  # kept while the reader holds them
        with open(go, "w") as word:
            word.write("go")
        out, err = child.communicate(timeout=600)
    finally:
        child.kill()
    assert child.returncode == 0 and "Traceback" not in err, err
    if command[0] == "stats":
        assert json.loads(out) == json.loads(before.stdout)  # the snapshot's answer, whole
    else:
        for page in (tmp_path / "before").rglob("*.md"):
            assert (tmp_path / "during" / page.relative_to(tmp_path / "before")).read_text() == page.read_text()
    gc.collect()
    with Warehouse(root):  # no reader now: the next writer removes the folded files
        pass
    folded = {p for p in snapshot if p.parent.name != "ingest_runs" and "0-empty" not in p.name}
    assert folded and not folded & set(root.glob("*/part-*.parquet"))
