"""Ids are data, in every output format (issue 24, item 8): CSV cells a spreadsheet would run as a formula are
prefixed with ``'`` (strings only: ``-3`` stays a number), and the table formats never print a record's control
characters raw to the terminal (an escape sequence, a bidirectional override), but as ``\\uXXXX``."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
PLAYERS = (
    '=HYPERLINK("http://evil.example/","click")',
    "+1+2",
    "-3",
    "@SUM(A1:A9)",
    "\tTAB",
    "red\x1b[31m\x1b]0;title\x07\x9b",
)
FORMULA = ("=", "+", "-", "@", "\t", "\r")
RAW_CONTROL = ("\x1b", "\x07", "\x9b", "\u202e")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([XUEZHAN, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """40 simulated hands with scoring errors, their six players and hand ids rewritten; ingested."""
    root = tmp_path_factory.mktemp("hostile")
    games = root / "games.jsonl"
    made = run("simulate", "--hands", "40", "--players", "6", "--seed", "8", "--inject", "score_errors=0.3",
               "--out", str(games), "--quiet")  # fmt: skip
    assert made.returncode == 0, made.stderr
    records = [json.loads(line) for line in games.read_text().splitlines()]
    ids = sorted({p for r in records for p in r["players"]})
    names = dict(zip(ids, PLAYERS, strict=True))
    for r in records:
        r["players"] = [names[p] for p in r["players"]]
        r["hand_id"] = "=1+2\x1b[2J\u202e" + r["hand_id"]
    data = root / "hostile.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    done = run("ingest", str(data), "--warehouse", str(root / "wh"), "--workers", "1", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    return data, root / "wh"


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _no_formula(rows: list[dict[str, str]]) -> None:
    for row in rows:
        for column, cell in row.items():
            assert not cell.startswith(FORMULA) or _number(cell), (column, cell)


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_audit_csv_prefixes_formula_strings_and_keeps_numbers(hostile: tuple[Path, Path]) -> None:
    done = run("audit", "--warehouse", str(hostile[1]), "--format", "csv")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = _rows(done.stdout)
    assert rows
    _no_formula(rows)
    assert all(r["hand_id"].startswith("'=1+2") for r in rows)
    assert {r["player"] for r in rows if r["player"]} <= {"'" + p if p.startswith(FORMULA) else p for p in PLAYERS}
    assert all(_number(r["money"]) for r in rows)  # numbers are written as numbers


def test_stats_csv_prefixes_formula_strings_and_keeps_negative_numbers(hostile: tuple[Path, Path]) -> None:
    done = run("stats", "--warehouse", str(hostile[1]), "--format", "csv")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = _rows(done.stdout)
    _no_formula(rows)
    assert {r["player"] for r in rows} == {"'" + p if p.startswith(FORMULA) else p for p in PLAYERS}
    negative = [r["value"] for r in rows if r["metric"] == "net_points_per_hand" and r["value"].startswith("-")]
    assert negative and all(_number(v) for v in negative)  # -3.25 stays a number, unprefixed


@pytest.mark.parametrize(
    "args",
    [
        ["stats", "--warehouse", "{wh}"],
        ["stats", "--warehouse", "{wh}", "--by", "seat"],
        ["audit", "--warehouse", "{wh}", "--top", "99"],
        ["collusion", "--warehouse", "{wh}", "--min-hands", "1", "--top", "99"],
        ["validate", "{data}", "--show", "99"],
    ],
    ids=lambda a: " ".join(a[:3:2]),
)
def test_table_formats_print_control_characters_escaped(args: list[str], hostile: tuple[Path, Path]) -> None:
    data, wh = hostile
    done = run(*[a.format(wh=wh, data=data) for a in args])
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    for raw in RAW_CONTROL:
        assert raw not in done.stdout, (raw, done.stdout[:2000])
    assert "\\u001b[" in done.stdout  # shown, escaped
    if args[0] != "stats":  # the hand ids: findings, evidence, issues
        assert "=1+2\\u001b[2J\\u202e" in done.stdout
