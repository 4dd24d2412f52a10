"""What a user sees besides the answer (issue 17): progress bars in human units on a terminal and nothing
otherwise, no matplotlib font noise, help text printed whole, and counts of validate, ingest and stats that
reconcile line by line."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()
XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.jsonl.gz"
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([XUEZHAN, *args], capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload, no-any-return]


def on_terminal(*args: str) -> tuple[int, list[str], str]:
    """Run ``xuezhan ARGS`` with stderr on a pseudo-terminal 200 columns wide and stdout piped: the exit code,
    the frames drawn on the terminal (escapes removed) and stdout."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [XUEZHAN, *args],
        stdin=subprocess.DEVNULL,
        stderr=slave,
        stdout=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(slave)
    screen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # the other end closed
                data = b""
            if not data:
                break
            screen += data
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    code = proc.wait(timeout=300)
    frames = [ESCAPE.sub("", f).strip() for f in re.split(r"\r|\n|\x1b\[2K|\x1b\[1A", screen.decode(errors="replace"))]
    return code, [f for f in frames if f], out


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sim") / "sim.jsonl"
    done = run("simulate", "--hands", "40", "--players", "6", "--seed", "3", "--out", str(path), "--quiet")
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def warehouse(records: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wh") / "wh"
    done = run("ingest", str(records), "--warehouse", str(root), "--workers", "1", "--quiet")
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def sample_warehouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("sample") / "wh"
    done = run("ingest", str(SAMPLE), "--warehouse", str(root), "--workers", "1", "--quiet")
    assert done.returncode == 1, done.stderr  # the sample's two corrupted lines are rejects
    return root, done.stdout


# ---------------------------------------------------------------------------------------------- progress bars
RAW_NUMBER = re.compile(r"\d+\.\d{3,}|\d{5,}")  # a raw float, or a byte count without thousands separators


def _bar_frames(frames: list[str], label: str) -> list[str]:
    bars = [f for f in frames if f.startswith(label)]
    assert bars, frames
    for frame in bars:
        assert not RAW_NUMBER.search(frame), frame
    return bars


def test_validate_shows_a_bar_in_hands_and_megabytes(records: Path) -> None:
    code, frames, out = on_terminal("validate", str(records))
    assert code == 0, frames
    bars = _bar_frames(frames, "validating")
    assert any(re.search(r" 40 hands [\d,–]+ hands/s [\d.]+ MB of [\d.]+ MB ", f) for f in bars), bars
    assert out.startswith("lines 40 = records 40 (valid 40, invalid 0)")


def test_ingest_bar_counts_hands_and_megabytes_not_bytes(records: Path, tmp_path: Path) -> None:
    code, frames, out = on_terminal("ingest", str(records), "--warehouse", str(tmp_path / "wh"), "--workers", "1")
    assert code == 0, frames
    bars = _bar_frames(frames, "ingesting")
    assert any(re.search(r" 40 hands [\d,–]+ hands/s [\d.]+ MB of [\d.]+ MB ", f) for f in bars), bars
    assert out.startswith("lines read 40 = stored 40")


def test_collusion_shows_a_bar_of_the_hands_then_the_pairs(warehouse: Path) -> None:
    code, frames, out = on_terminal("collusion", "--warehouse", str(warehouse), "--min-hands", "5")
    assert code == 0, frames
    bars = _bar_frames(frames, "collusion: ")
    assert any(re.search(r"^collusion: reading the hands .* [\d,]+/40 hands ", f) for f in bars), bars
    assert any(re.search(r"^collusion: screening pairs .* (\d+)/\1 pairs [\d,–]+ pairs/s", f) for f in bars), bars
    assert out.startswith("15 pairs with at least 5 shared hands screened")
    # the groups and the victim view have bars of their own, not the pairs' bar sitting full (issue 39)
    assert any(f.startswith("collusion: the victim view") for f in bars), bars


def test_simulate_bar_counts_hands_of_the_total(tmp_path: Path) -> None:
    code, frames, _ = on_terminal("simulate", "--hands", "6", "--out", str(tmp_path / "s.jsonl"))
    assert code == 0, frames
    assert any(re.search(r" 6/6 hands [\d,–]+ hands/s", f) for f in _bar_frames(frames, "simulating"))


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "{records}", "--quiet"],
        ["ingest", "{records}", "--warehouse", "{tmp}/wh", "--workers", "1", "--quiet"],
        ["collusion", "--warehouse", "{warehouse}", "--min-hands", "5", "--quiet"],
        ["simulate", "--hands", "3", "--out", "{tmp}/s.jsonl", "--quiet"],
    ],
    ids=lambda a: a[0],
)
def test_quiet_draws_no_bar_on_a_terminal(args: list[str], records: Path, warehouse: Path, tmp_path: Path) -> None:
    filled = [a.format(records=records, warehouse=warehouse, tmp=tmp_path) for a in args]
    code, frames, _ = on_terminal(*filled)
    assert code == 0, frames
    assert not [f for f in frames if f.startswith(("validating", "ingesting", "collusion: ", "simulating"))]


@pytest.mark.parametrize("command", ["validate", "collusion"])
def test_no_bar_when_stderr_is_not_a_terminal(command: str, records: Path, warehouse: Path) -> None:
    """Piped, as in scripts and these tests: stderr stays empty, so one-line error checks hold."""
    args = [str(records)] if command == "validate" else ["--warehouse", str(warehouse), "--min-hands", "5"]
    done = run(command, *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


# ---------------------------------------------------------------------------------------------- font noise
def test_report_quiet_prints_no_findfont_lines_without_a_cjk_font(warehouse: Path, tmp_path: Path) -> None:
    """A matplotlib font cache without any CJK face (as on a machine without fonts-noto-cjk): the report's font
    check looks through the faces there are, and matplotlib logs ``findfont: ...`` lines for them."""
    config = tmp_path / "mpl"
    config.mkdir()
    env = {**os.environ, "MPLCONFIGDIR": str(config)}
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True, env=env, timeout=300)
    (cache,) = config.glob("fontlist-*.json")
    fonts = json.loads(cache.read_text())
    fonts["ttflist"] = [f for f in fonts["ttflist"] if "cjk" not in (f["name"] + f["fname"]).lower()]
    cache.write_text(json.dumps(fonts))
    done = run("report", "--warehouse", str(warehouse), "--out", str(tmp_path / "report"), "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    assert "findfont" not in done.stderr
    assert done.stderr == ""
    assert done.stdout == f"wrote {tmp_path / 'report' / 'index.html'}\n"


# ---------------------------------------------------------------------------------------------- help text
def test_ingest_help_shows_the_spark_extra_whole() -> None:
    """rich's markup would take [spark] for a style tag; the help shows it whole (read across the panel's line
    breaks: the shared --engine text wraps even at 200 columns)."""
    shown = runner.invoke(app, ["ingest", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    text = " ".join(shown.stdout.replace("│", " ").split())
    assert "pip install xuezhan[spark])" in text
    assert "\\[" not in shown.stdout
    assert "local[*]" in text


# ---------------------------------------------------------------------------------------------- reconciling counts
def test_validate_ingest_and_stats_counts_reconcile_on_the_sample(sample_warehouse: tuple[Path, str]) -> None:
    """The sample's 2,005 lines: 5 repeat an earlier hand_id with the same bytes (ingest's duplicates), 3 are no
    record (corrupted: ingest's rejects), 53 of the 1,997 records are invalid, 9 of those stop before the end of
    the hand (what stats leaves out). Each figure is the ground truth's count (data/sample.labels.json): 5
    duplicated, 3 broken_json, 44 scoring faults and 9 illegal or cut-short hands (draw_not_wall 2, out_of_turn 2,
    discard_not_held 2, false_win, truncated, fifth_copy)."""
    root, ingested = sample_warehouse
    checked = run("validate", str(SAMPLE))
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    line = checked.stdout.splitlines()[0]
    m = re.fullmatch(
        r"lines (\d+) = records (\d+) \(valid (\d+), invalid (\d+)\) \+ not records (\d+) "
        r"\+ repeated hand_ids (\d+) \((\d+) invalid, (\d+) with other content\)",
        line,
    )
    assert m, line
    lines, records, valid, invalid, not_records, repeats, _, other = map(int, m.groups())
    assert lines == records + not_records + repeats and records == valid + invalid
    assert (lines, records, valid, invalid, not_records, repeats) == (2005, 1997, 1944, 53, 3, 5)

    i = re.match(
        r"lines read (\d+) = stored (\d+) \(invalid (\d+)\) \+ rejects (\d+) \(conflicts (\d+)\) \+ duplicates (\d+)",
        ingested,
    )
    assert i, ingested
    read, stored, stored_invalid, rejects, conflicts, duplicates = map(int, i.groups())
    assert (read, stored, stored_invalid) == (lines, records, invalid)
    assert rejects == not_records + other and conflicts == other and duplicates == repeats - other

    stats = run("stats", "--warehouse", str(root))
    assert stats.returncode == 0, stats.stderr
    (counts,) = [x for x in stats.stdout.splitlines() if x.startswith("hands ")]
    s = re.fullmatch(
        r"hands (\d+) \(stored (\d+), valid (\d+), rejects (\d+)\): stored \2 = valid \3 \+ invalid (\d+); "
        r"statistics over the \1 replayed to the end \((\d+) stopped before it\), issues over all \2 stored",
        counts,
    )
    assert s, counts
    replayed, s_stored, s_valid, s_rejects, s_invalid, stopped = map(int, s.groups())
    assert (s_stored, s_valid, s_invalid, s_rejects) == (stored, valid, invalid, rejects)
    assert replayed + stopped == stored and (replayed, stopped) == (1988, 9)
    assert json.loads(run("stats", "--warehouse", str(root), "--format", "json").stdout)["hands"] == replayed


def test_validate_counts_repeats_and_non_records_as_ingest_does(records: Path, tmp_path: Path) -> None:
    """A repeated line (ingest: a duplicate), the same hand_id with other content (ingest: a conflict reject)
    and a line that is not JSON (ingest: a reject)."""
    lines = records.read_bytes().splitlines()
    other = json.loads(lines[1])
    other["played_at"] = "2026-11-02T20:00:00+08:00"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b"\n".join([*lines[:3], lines[0], json.dumps(other).encode(), b"{oops"]) + b"\n")
    checked = run("validate", str(mixed))
    assert checked.returncode == 1 and checked.stderr == ""
    assert checked.stdout.splitlines()[0] == (
        "lines 6 = records 3 (valid 3, invalid 0) + not records 1 "
        "+ repeated hand_ids 2 (0 invalid, 1 with other content)"
    )
    done = run("ingest", str(mixed), "--warehouse", str(tmp_path / "wh"), "--workers", "1", "--quiet")
    assert done.returncode == 1
    assert done.stdout.startswith("lines read 6 = stored 3 (invalid 0) + rejects 2 (conflicts 1) + duplicates 1")
