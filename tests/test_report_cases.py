"""The report's integration of issue 44: the first screen shows each finding's case state and separates the new
findings from the known ones, a dismissed finding is hidden (and counted) unless its evidence grew; the health page
shows `xuezhan check`'s verdict and each table's trend across ingest runs; a player page opens with the player's
five largest deviations from the room. Checked in the HTML and in a real browser (chromium headless: the DOM it
builds and a screenshot).

The warehouse: 100 simulated hands with injected faults and a junk line (run 1); the reviewers then dismiss the
invalid records and the rejected lines; run 2 brings 200 more hands with more corrupt records (the invalid records'
evidence more than doubles: reopened; the rejected lines do not grow: still hidden); then a scoring error is opened
as a case, another opened and confirmed, a third dismissed and appealed.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import matplotlib.image
import polars as pl
import pytest
from test_report import _browse, _chromium

from dashboards import player
from dashboards.findings import collect
from dashboards.pages.players import deviations_section, page_file
from dashboards.site import build_report
from pipeline.analytics import queries
from pipeline.analytics.health import check, load_thresholds
from pipeline.analytics.yardsticks import MIN_HANDS, deviations
from pipeline.audit.cases import act, open_case, read_cases
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)


def _renamed(src: Path, dst: Path, prefix: str) -> None:
    """The simulated hands under new hand and session ids (a second batch of the same room, at the same tables), its
    unreadable lines left out (the rejected lines stay as the first run left them)."""
    with gzip.open(src, "rt", encoding="utf-8") as f, dst.open("w", encoding="utf-8") as out:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            for key in ("hand_id", "session_id"):
                if r.get(key) is not None:
                    r[key] = prefix + r[key]
            out.write(json.dumps(r, ensure_ascii=False) + "\n")


def _findings(wh: Path) -> dict[str, dict[str, Any]]:
    with queries.connect(wh) as con:
        return {r["key"]: r for r in collect(con).iter_rows(named=True)}


def _dismissed(wh: Path, finding: dict[str, Any], at: datetime) -> str:
    case = open_case(wh, finding, reviewer="ana", note="known", now=at)
    act(wh, case.case_id, "dismiss", reviewer="bo", note="not a concern", finding=finding, now=at + timedelta(hours=1))
    return case.case_id


@pytest.fixture(scope="module")
def casebook(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("casebook")
    first = root / "first.jsonl.gz"
    write(SimConfig(hands=100, seed=11, players=8, inject=InjectSpec.parse("corrupt=0.05,score_errors=0.05")), first)
    junk = root / "junk.jsonl"
    junk.write_text('this is not json\n{"format": "xzlog/1", "hand_id": \n', encoding="utf-8")
    wh = root / "wh"
    ingest([str(first), str(junk)], wh, workers=1)
    before = _findings(wh)
    invalid_case = _dismissed(wh, before["invalid:records"], T0)
    rejects_case = _dismissed(wh, before["rejects:lines"], T0 + timedelta(hours=2))

    second = root / "second.jsonl.gz"
    write(SimConfig(hands=200, seed=12, players=8, inject=InjectSpec.parse("corrupt=0.1,score_errors=0.1")), second)
    renamed = root / "second.jsonl"
    _renamed(second, renamed, "r2-")
    ingest([str(renamed)], wh, workers=1)

    now = _findings(wh)
    scoring = [r for r in now.values() if r["kind"] == "scoring"]
    assert len(scoring) >= 4, sorted(now)
    opened = open_case(wh, scoring[0], reviewer="ana", now=T0 + timedelta(days=1)).case_id
    confirmed = open_case(wh, scoring[1], reviewer="ana", now=T0 + timedelta(days=1)).case_id
    act(wh, confirmed, "confirm", reviewer="bo", note="paid back", now=T0 + timedelta(days=1, hours=1))
    appealed = _dismissed(wh, scoring[2], T0 + timedelta(days=1, hours=2))
    act(wh, appealed, "appeal", reviewer="cy", note="the player disputes it", now=T0 + timedelta(days=1, hours=4))

    index = build_report(wh, root / "report", top_players=2)
    return {
        "wh": wh,
        "index": index,
        "out": index.parent,
        "before": before,
        "now": now,
        "cases": {
            "invalid": invalid_case,
            "rejects": rejects_case,
            "open": opened,
            "confirmed": confirmed,
            "appealed": appealed,
        },
        "keys": {
            "open": scoring[0]["key"],
            "confirmed": scoring[1]["key"],
            "appealed": scoring[2]["key"],
            "new": [r["key"] for r in scoring[3:]],
        },
    }


def _section(html: str, start: str) -> str:
    return html.split(start, 1)[1].split("</section>", 1)[0]


def _row_of(html: str, key_fragment: str) -> str:
    rows = [r for r in re.findall(r"<tr class=\"sev-.*?</tr>", html) if key_fragment in r]
    assert len(rows) == 1, (key_fragment, len(rows))
    return rows[0]


def _wbr(key: str) -> str:
    """A key as the page writes it (wrapping places marked)."""
    out = key
    for mark in (":", "+", "_"):
        out = out.replace(mark, f"{mark}<wbr>")
    return out


# ---------------------------------------------------------------------------------------------- the first screen
def test_the_first_screen_separates_new_from_known_and_hides_the_dismissed(casebook: dict[str, Any]) -> None:
    html = casebook["index"].read_text(encoding="utf-8")
    section = _section(html, '<section class="findings" id="findings">')
    new_part = section.split('<h3 id="new">', 1)[1].split('<h3 id="known">', 1)[0]
    known_part = section.split('<h3 id="known">', 1)[1]
    keys = casebook["keys"]

    # the rejected lines did not grow since their dismissal: hidden, and counted with the reason
    assert _wbr("rejects:lines") not in section
    assert "<b>1 dismissed finding hidden</b>" in section and "evidence has not grown" in section
    assert "xuezhan findings --all" in section

    # the invalid records more than doubled: back, as reopened, with the reason, among the known
    now, before = casebook["now"], casebook["before"]
    assert now["invalid:records"]["n"] >= 2 * before["invalid:records"]["n"]
    row = _row_of(known_part, _wbr("invalid:records"))
    assert 'state-reopened"' in row
    why = f"evidence {before['invalid:records']['n']:,} → {now['invalid:records']['n']:,} (at least 2× as much)"
    assert f'<span class="why">{why}</span>' in row
    assert casebook["cases"]["invalid"] in row.replace("<wbr>", "")

    for state in ("open", "confirmed", "appealed"):
        row = _row_of(known_part, _wbr(keys[state]))
        assert f'state-{state}"' in row and casebook["cases"][state] in row.replace("<wbr>", "")
        assert _wbr(keys[state]) not in new_part
    for key in keys["new"]:
        assert 'state-new"' in _row_of(new_part, _wbr(key))
    # the known ones in the order of what needs a reviewer first: reopened, appealed, open, confirmed
    order = re.findall(r'state-(\w+)"', known_part)
    assert order == ["reopened", "appealed", "open", "confirmed"]
    assert 'state-new"' not in known_part and re.findall(r'state-(\w+)"', new_part)
    assert set(re.findall(r'state-(\w+)"', new_part)) == {"new"}

    shown = len(now) - 1  # every finding but the hidden one
    assert f"<b>{shown} findings need attention.</b>" in section
    fresh = new_part.count('state-new"')
    assert f'<b id="new-count">{fresh} new</b>, 4 known' in section

    # findings.json: every finding with its standing, the hidden one too (scripts filter it)
    found = json.loads((casebook["out"] / "findings.json").read_text(encoding="utf-8"))
    by_key = {f["key"]: f for f in found}
    assert by_key["rejects:lines"]["status"] == "dismissed" and by_key["invalid:records"]["status"] == "reopened"
    assert by_key[keys["appealed"]]["case_id"] == casebook["cases"]["appealed"]


def test_the_states_are_the_findings_commands(casebook: dict[str, Any]) -> None:
    """One rule: the page's states are the ones `xuezhan findings --all` lists."""
    from typer.testing import CliRunner

    from cli import app

    done = CliRunner().invoke(app, ["findings", "--warehouse", str(casebook["wh"]), "--all", "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.output)
    listed = {r["key"]: r["status"] for r in rows}
    found = json.loads((casebook["out"] / "findings.json").read_text(encoding="utf-8"))
    assert {f["key"]: f["status"] for f in found} == listed
    assert sorted(set(listed.values())) == ["appealed", "confirmed", "dismissed", "new", "open", "reopened"]
    # listed as the README says: the new ones first, then what came back, what waits, what is decided; rank order
    # within each state
    order = ["new", "reopened", "appealed", "open", "confirmed", "dismissed"]
    assert [r["status"] for r in rows] == sorted((r["status"] for r in rows), key=order.index)
    for state in order:
        ranks = [r["rank"] for r in rows if r["status"] == state]
        assert ranks == sorted(ranks), state
    assert len(read_cases(casebook["wh"])) == 5


# ---------------------------------------------------------------------------------------------- the health page
def test_the_health_page_shows_the_check_and_each_tables_trend(casebook: dict[str, Any]) -> None:
    out, wh = casebook["out"], casebook["wh"]
    html = (out / "health.html").read_text(encoding="utf-8")
    index = casebook["index"].read_text(encoding="utf-8")
    assert index.count('href="health.html"') == 2  # in the navigation and in the summary
    with queries.connect(wh) as con:
        health = check(con)
    assert health.run is not None and len(health.runs) == 2
    verdict = _section(html, 'id="verdict"')
    assert f'<span class="level {health.level}">{health.level}</span>' in verdict
    assert f"Run 2 ({health.run.run_id})" in verdict and "against the 1 finished run before it" in verdict
    for alert in health.alerts:  # every alert of the check, with its level and reason
        assert f'<tr class="level-{alert.level}"><td><span class="level {alert.level}">' in verdict
        assert alert.message.replace("&", "&amp;") in verdict

    trend = _section(html, '<section id="tables">')
    tables = {t for r in health.runs for t in r.tables}
    assert trend.count('<tr class="level-') == len(tables)
    assert '<th data-sort="num" class="num" title="sort">run 1</th>' in trend and ">run 2</th>" in trend
    # each table's row: its figures in each run that stored hands of it, "–" in a run that stored none
    assert any(len([r for r in health.runs if t in r.tables]) == 2 for t in tables)  # the same tables again
    for table in tables:
        row = next(r for r in re.findall(r"<tr class=\"level-.*?</tr>", trend) if f'data-v="{table}"' in r)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        per_run = cells[-2:]
        for run, cell in zip(health.runs, per_run, strict=True):
            if table in run.tables:
                hands, errors = run.tables[table]
                assert f"{errors:,}/{hands:,}" in cell, (table, run.run_no, cell)
            else:
                assert cell == "–", (table, run.run_no, cell)
        # the checked run (run 2) and the runs before it (run 1), as check() compares them
        figures = [r.tables.get(table, (0, 0)) for r in health.runs[::-1]]
        for (hands, errors), cell in zip(figures, cells[2:4], strict=True):
            assert (f"{errors:,}/{hands:,}" in cell) if hands else cell == "–", (table, cell)
    runs = _section(html, '<section id="runs">')
    for r in health.runs:
        assert f'<td class="num">{r.run_no:,}</td>' in runs and f'<td class="num">{r.stored:,}</td>' in runs
    for chart in ("settlement_errors", "volume"):
        assert (out / "charts" / f"health-{chart}.png").exists(), chart


def test_the_report_judges_the_last_run_by_the_thresholds_given(casebook: dict[str, Any], tmp_path: Path) -> None:
    """``report --thresholds FILE`` is ``check --thresholds FILE``'s judgement on the health page (a cron job
    with its own thresholds and the page it links to agree), and the page names what the file changed; a file
    that cannot be used stops the report before anything is written (exit 2, as check)."""
    wh = casebook["wh"]
    strict = tmp_path / "strict.toml"
    strict.write_text("[rates]\nmin_hands = 5\nwarn_above = 0.0001\nerror_above = 0.0002\n", encoding="utf-8")
    with queries.connect(wh) as con:
        shipped, given = check(con), check(con, load_thresholds(strict))
    assert given.level == "error" and given.alerts != shipped.alerts  # the run's invalid hands are above 0.02%
    out = tmp_path / "site"
    build_report(wh, out, top_players=0, thresholds=load_thresholds(strict))
    verdict = _section((out / "health.html").read_text(encoding="utf-8"), 'id="verdict"')
    assert '<span class="level error">error</span>' in verdict
    for alert in given.alerts:
        assert alert.message.replace("&", "&amp;") in verdict
    assert "differing from the shipped ones in: min_hands 5, warn_above 0.0001, error_above 0.0002" in verdict
    assert "shipped thresholds" in _section(casebook["out"].joinpath("health.html").read_text(), 'id="verdict"')

    bad = tmp_path / "bad.toml"
    bad.write_text("[rates]\nwarn_pp = 0.1\n", encoding="utf-8")
    done = subprocess.run(
        [XUEZHAN, "report", "--warehouse", str(wh), "--out", str(tmp_path / "never"), "--thresholds", str(bad)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--thresholds" in done.stderr and "warn_pp" in done.stderr, done.stderr
    assert not (tmp_path / "never").exists()


def test_the_health_page_of_a_warehouse_with_one_run_or_none(tmp_path: Path) -> None:
    from dashboards.pages import health as health_html
    from pipeline.analytics.health import Health, load_thresholds

    nothing = "".join(health_html.body(health=Health(None, (), (), load_thresholds()), figures=[], scoped=False))
    assert "No ingest run" in nothing and "<table" not in nothing

    games = tmp_path / "g.jsonl.gz"
    write(SimConfig(hands=30, seed=3, players=4), games)
    ingest([str(games)], tmp_path / "wh", workers=1)
    with queries.connect(tmp_path / "wh") as con:
        health = check(con)
    page = "".join(health_html.body(health=health, figures=[], scoped=True))
    assert "the first run: no earlier run to compare with" in page
    assert "whole warehouse" in page  # a scoped report's health page says its runs are every hand's
    assert page.count('<span class="level untested">') == len(health.runs[0].tables)  # 30 hands: none tested


# ---------------------------------------------------------------------------------------------- player pages
def test_a_player_page_opens_with_the_largest_deviations(casebook: dict[str, Any]) -> None:
    wh, out = casebook["wh"], casebook["out"]
    with queries.connect(wh) as con:
        answer = queries.stats(con)
        every = player.prep_every_player(con)
    # the report's yardsticks are the stats command's (one home: pipeline.analytics.yardsticks)
    mine = player.prep_yardsticks(every)
    for entry in answer["players"]:
        assert {m: y.as_dict() for m, y in mine[entry["player"]].items()} == entry["yardsticks"]
    pid = max(answer["players"], key=lambda e: (e["hands"], e["player"]))["player"]
    entry = next(e for e in answer["players"] if e["player"] == pid)
    assert entry["hands"] >= MIN_HANDS
    html = (out / page_file(pid)).read_text(encoding="utf-8")
    main = html.split("<main>", 1)[1]
    assert main.index('id="findings"') < main.index('id="deviations"') < main.index('class="summary"')
    section = _section(main, '<section id="deviations">')
    assert "compared with the other players with at least 100 replayed hands (7 players, the player left out)" in (
        section
    )
    top = deviations(mine[pid])
    assert [y.metric for y in top] == entry["deviations"] and len(top) == 5
    rows = re.findall(r"<tr><td>.*?</tr>", section)
    assert len(rows) == 5
    for y, row in zip(top, rows, strict=True):
        assert f'<b class="{"flag" if abs(y.z or 0) >= 3 else ""}">{y.z:+.1f}</b>' in row
        assert f'data-v="{y.percentile:.6g}">{y.percentile:.0f}</td>' in row
    # every metric's percentile and best-quartile band, where the page lists metrics
    metrics = _section(main, '<section id="metrics">')
    assert "<th>percentile</th><th>best quartile</th>" in metrics
    win = mine[pid]["win_rate"]
    assert win.best is not None
    low, high = f"{win.best[0] * 100:.1f}%", f"{win.best[1] * 100:.1f}%"
    band = low if low == high else f"{low} – {high}"
    row = next(r for r in re.findall(r"<tr>.*?</tr>", metrics) if "> win rate<" in r)
    assert f'{win.percentile:.0f}</td><td class="num">{band}</td>' in row
    figures = _section(main, '<section id="figures">')
    row = next(r for r in re.findall(r"<tr>.*?</tr>", figures) if "> win rate<" in r)
    assert f'<td class="num">{win.percentile:.0f}<br><span class="n">best {band}</span></td>' in row


def test_a_player_with_too_few_hands_is_not_ranked() -> None:
    metrics = {("hands", player.PLAYER): {"value": 40}}
    html = deviations_section({}, metrics, "the other players", 6)
    assert "Not ranked: 40 replayed hands" in html and "<table" not in html
    assert "among the other players with at least 100 replayed hands (6 players)" in html
    alone = deviations_section({}, metrics, "the other players", 0)
    assert "Not ranked" in alone and "no percentile either" in alone


# ---------------------------------------------------------------------------------------------- the browser
def test_the_health_page_and_the_case_states_in_a_headless_browser(casebook: dict[str, Any], tmp_path: Path) -> None:
    """Chromium builds both pages (the DOM shows the states and the health verdict), lays them out within the
    window, and draws them: screenshots that are not blank, with the state badges in their colours."""
    chromium = _chromium()
    out = casebook["out"]
    for name in ("index", "health"):
        page = (out / f"{name}.html").resolve().as_uri()
        done = _browse(chromium, tmp_path / f"profile-{name}", "--window-size=1280,900", "--dump-dom", page)
        assert done.returncode == 0, done.stderr[-2000:]
        dom = done.stdout
        layout = re.findall(r'data-(?:overflow|broken)="[^"]*"', dom)
        assert 'data-overflow="0"' in dom and 'data-broken=""' in dom, layout
        images = len(re.findall(r"<img ", dom))
        assert f'data-images="{images}/{images}"' in dom
        if name == "index":
            for state in ("new", "reopened", "appealed", "open", "confirmed"):
                assert f'<span class="state {state}"' in dom, state
            assert "1 dismissed finding hidden" in dom and '<span class="why">evidence ' in dom
        else:
            assert 'id="verdict"' in dom and '<table class="sortable trend">' in dom and ">run 2</th>" in dom

        shot = tmp_path / f"{name}.png"
        done = _browse(
            chromium, tmp_path / f"profile-shot-{name}", "--window-size=1200,1400", f"--screenshot={shot}", page
        )
        assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
        pixels = matplotlib.image.imread(str(shot))[..., :3]
        assert pixels.shape[1] == 1200 and pixels.std() > 0.05, f"the screenshot of {name} is blank"
        if name == "index":  # the first screen draws the state badges: reopened (red) and new (blue)
            new = abs(pixels - [0x1F / 255, 0x6F / 255, 0xB2 / 255]).max(axis=-1) < 0.04
            assert new.sum() > 100, "no new badge on the first screen"
        else:  # the verdict's level badge
            colour = {"ok": (0x1E, 0x7B, 0x34), "warn": (0xD4, 0x88, 0x06), "error": (0xC0, 0x39, 0x2B)}
            level = re.search(r'<span class="level (\w+)">', dom)
            assert level is not None
            badge = abs(pixels - [c / 255 for c in colour[level.group(1)]]).max(axis=-1) < 0.04
            assert badge.sum() > 100, "no level badge on the health page"


def test_a_player_pages_findings_show_their_case_state() -> None:
    """The player's banner names each finding's case, as the first screen does: a dismissed one is marked (the
    first screen hides it), a reopened one says why."""
    from dashboards import findings as found_dash
    from dashboards.pages.players import banner

    def row(key: str, subject: str) -> dict[str, Any]:
        return {
            "rank": 1,
            "severity": "high",
            "kind": "pair",
            "label": "colluding pair?",
            "players": ["p1", "p2"],
            "subject": subject,
            "detail": "d",
            "evidence": "collusion.html#pair-1",
            "evidence_text": "pair #1",
            "key": key,
        }

    found = pl.DataFrame([row("pair:p1+p2", "p1 & p2"), row("pair:p1+p3", "p1 & p3")], schema=found_dash.SCHEMA)
    states = {"pair:p1+p2": ("dismissed", None, "case-a"), "pair:p1+p3": ("reopened", "q 0.04 → 0.001", "case-b")}
    html = banner("p1", found, {}, states)
    first, second = html.split("<li>")[1:]
    assert '<span class="state dismissed">dismissed</span>' in first and "case case-a: dismissed by a reviewer" in first
    assert '<span class="state reopened">reopened</span>' in second and "case case-b: q 0.04 → 0.001" in second
    assert '<span class="state' not in banner("p1", found, {})  # no case read: no state shown
