"""Ctrl-C and SIGTERM (issue 39): at start-up, during ``compact``, in ``simulate``: one line
(``xuezhan: interrupted; run again``), exit 2, no traceback, no half-written output, always.

Deterministic: the signal is sent from inside the child at a chosen point (a patched step), never after a sleep."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from sample_lines import sample_lines

from pipeline.ingest.run import ingest

ROOT = Path(__file__).resolve().parents[1]
LINE = "xuezhan: interrupted; run again\n"


def child(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` run before the CLI, in a child with the repository on its path."""
    program = f"import sys; sys.path.insert(0, {str(ROOT)!r}); {code}; from cli import app; app(prog_name='xuezhan')"
    return subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_a_signal_while_the_command_line_loads_is_one_line(tmp_path: Path) -> None:
    for signal in ("SIGINT", "SIGTERM"):
        program = (
            f"import os, signal, sys; sys.path.insert(0, {str(ROOT)!r}); import cli; "
            f"os.kill(os.getpid(), signal.{signal})"
        )
        done = subprocess.run(
            [sys.executable, "-c", program + "; import time; time.sleep(60)"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (done.returncode, done.stderr) == (2, LINE), signal


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("interrupt")
    path = folder / "some.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(line + b"\n" for line in sample_lines(60))))
    ingest([str(path)], folder / "wh", workers=1, chunk_size=5)
    return folder / "wh"


@pytest.mark.parametrize("signal", ["SIGINT", "SIGTERM"])
def test_a_signal_during_compact_is_one_line_and_exit_2(warehouse: Path, signal: str) -> None:
    patch = (
        "import os, signal, time, pipeline.ingest.warehouse as w; "
        f"w.Warehouse.compact = lambda self, **k: (os.kill(os.getpid(), signal.{signal}), time.sleep(60))"
    )
    done = child(patch, "compact", "--warehouse", str(warehouse), cwd=warehouse.parent)
    assert (done.returncode, done.stderr) == (2, LINE)


def test_duckdbs_interrupted_query_is_one_line_and_exit_2(warehouse: Path) -> None:
    patch = (
        "import duckdb, pipeline.ingest.warehouse as w; "
        "w.Warehouse.compact = lambda self, **k: (_ for _ in ()).throw(duckdb.InterruptException('Interrupted!'))"
    )
    done = child(patch, "compact", "--warehouse", str(warehouse), cwd=warehouse.parent)
    assert (done.returncode, done.stderr) == (2, LINE)


def test_an_interrupted_simulation_leaves_no_half_file(tmp_path: Path) -> None:
    patch = (
        "import os, signal, pipeline.simulate.tables as t; real = t.simulate\n"
        "def stopped(*a, **k):\n"
        "    lines, labels = real(*a, **k)\n"
        "    def some():\n"
        "        for n, line in enumerate(lines):\n"
        "            if n == 3: os.kill(os.getpid(), signal.SIGINT)\n"
        "            yield line\n"
        "    return some(), labels\n"
        "t.simulate = stopped"
    )
    out = tmp_path / "sim.jsonl.gz"
    done = child(patch, "simulate", "--hands", "20", "--out", str(out), "--quiet", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, LINE)
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_report_leaves_the_last_report_as_it_was(warehouse: Path, tmp_path: Path) -> None:
    """Ctrl-C once some pages are written (here: as the player directory is made, after the first screen, the
    charts and the audit): the report folder keeps the last run's pages, none of this one's, and no staging
    folder is left beside it. Run again, it is replaced page by page, and files of the user's own stay."""
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("the last report", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    patch = (
        "import os, signal, dashboards.site as s; real = s._directory\n"
        "def stopped(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(*a, **k)\n"
        "s._directory = stopped"
    )
    args = ("report", "--warehouse", str(warehouse), "--out", str(out), "--min-hands", "10", "--quiet")
    done = child(patch, *args, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, LINE)
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "notes.txt"]
    assert (out / "index.html").read_text(encoding="utf-8") == "the last report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    done = child("pass", *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (out / "index.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine" and (out / "charts").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
