"""`make demo` (dashboards/demo.py) on the committed sample: issue 21's acceptance asks that it show the report's
first screen (what needs attention), one head-to-head table and one replayed hand; the screens' lines name what
the sample plants (data/sample.labels.json). Run as `make demo` runs it, in a process of its own, on a copy of
the repository's data folder (the demo writes out/demo beside it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from dashboards.pages.players import page_file

REPO = Path(__file__).resolve().parents[1]
LABELS = json.loads((REPO / "data" / "sample.labels.json").read_text())
(PAIR,) = [c["players"] for c in LABELS["colluders"]]  # the planted pair, and the planted cheat
(BOT,) = LABELS["bots"]


def test_the_demo_shows_the_findings_a_head_to_head_table_and_a_replayed_hand(tmp_path: Path) -> None:
    shutil.copytree(REPO / "data", tmp_path / "data")
    env = {**os.environ, "XUEZHAN_REPO": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "dashboards.demo"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    sections = [line for line in out.splitlines() if line.startswith("== ")]
    order = ("== ingesting", "== one disputed hand, replayed", "== collusion screen", "== information cheats")
    order += ("== stacked deals", "== dashboard", "== what needs attention", f"== head to head of {PAIR[0]}")
    starts = [next(i for i, s in enumerate(sections) if s.startswith(o)) for o in order]
    assert starts == sorted(starts), sections
    findings = out.split("== what needs attention")[1].split("\n== ")[0]
    assert f"colluding pair?   {PAIR[0]} & {PAIR[1]}" in findings and f"sees other hands? {BOT}" in findings
    assert (tmp_path / "out" / "demo" / "report" / "players.html").is_file()
    head_to_head = out.split(f"== head to head of {PAIR[0]}")[1]
    assert PAIR[1] in head_to_head.splitlines()[3] and "<- the flagged partner" in head_to_head
    # the stored review pass ran: stats prints the decision metrics, a player's page shows them
    reviewed = out.split("== reviewing each hand's decisions")[1].split("\n== ")[0]
    assert "2000 hands reviewed" in reviewed or "hands reviewed, " in reviewed
    assert "decisions (xuezhan review, version" in out and "missed_win_rate" in out
    page = (tmp_path / "out" / "demo" / "report" / page_file(PAIR[0])).read_text(encoding="utf-8")
    assert '<section id="decisions">' in page and "efficiency-match rate" in page and "Not reviewed" not in page
    replayed = out.split("== one disputed hand, replayed")[1].split("\n== ")[0]
    assert "! SCORE_POINTS" in replayed and "settlement    computed | claimed" in replayed
    assert "flagged at FDR 0.05: []; planted stackers: []" in out  # the sample plants no stacked deal
