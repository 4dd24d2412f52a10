"""build_report on a simulated warehouse: the files it writes, the pages' self-containment, the font choice,
and the pages opened in a real headless browser (Debian's chromium)."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import matplotlib.image
import polars as pl
import pytest
from system_parts import missing_system_part

from dashboards.pages.players import page_file
from dashboards.site import build_report
from pipeline.analytics import queries
from pipeline.audit.scoring import audit
from pipeline.codes import CODES
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import Warehouse
from pipeline.report import charts, numbers
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
OVERVIEW_CHARTS = (
    "fan_distribution",
    "pattern_frequency",
    "outcomes",
    "hua_zhu",
    "deal_in_by_player",
    "net_points_by_player",
)
PLAYER_SECTIONS = ("findings", "figures", "opponents", "over-time", "results", "fan", "scoring")  # no chart image
QUALITY_CHARTS = ("issues_by_code", "rejects_by_code")
AUDIT_CHARTS = ("money_by_code", "findings_by_month", "money_by_player")
COLLUSION_CHARTS = ("pair_matrix", "top_pairs")
FIXED_PAGES = {
    "index.html",
    "players.html",
    "quality.html",
    "health.html",
    "audit.html",
    "collusion.html",
    "information.html",
    "deals.html",
}
CHART_PAGES = {"index.html", "quality.html", "health.html", "audit.html", "collusion.html", "deals.html"}
DEALS_CHARTS = ("players",)
HEALTH_CHARTS = ("settlement_errors", "volume")
CJK_CHAR = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """100 simulated hands with injected faults, plus two lines that are not records (rejects)."""
    root = tmp_path_factory.mktemp("sim")
    games = root / "games.jsonl.gz"
    write(
        SimConfig(hands=100, seed=11, players=8, inject=InjectSpec.parse("corrupt=0.05,score_errors=0.05")),
        games,
    )
    junk = root / "junk.jsonl"
    junk.write_text('this is not json\n{"format": "xzlog/1", "hand_id": \n', encoding="utf-8")
    ingest([str(games), str(junk)], root / "wh", workers=1)
    return root / "wh"


@pytest.fixture(scope="module")
def report(warehouse, tmp_path_factory) -> Path:
    return build_report(warehouse, tmp_path_factory.mktemp("report") / "out")


def _top3(warehouse: Path) -> list[str]:
    return _everyone(warehouse)[:3]


def _everyone(warehouse: Path) -> list[str]:
    """Every player with a replayed hand, most hands first."""
    base = queries.player_base(queries.connect(warehouse))
    return base.sort(["hands", "player"], descending=[True, False])["player"].to_list()


# ---------------------------------------------------------------------------------------------- files
def test_build_report_writes_pages_and_every_chart_as_png(report, warehouse):
    out = report.parent
    assert report == out / "index.html"
    players = _everyone(warehouse)
    assert len(players) == 8  # every player gets a page by default
    pages = {*FIXED_PAGES, *(page_file(p) for p in players)}
    assert {p.name for p in out.glob("*.html")} == pages
    expected = {f"overview-{c}.png" for c in OVERVIEW_CHARTS} | {f"quality-{c}.png" for c in QUALITY_CHARTS}
    expected |= {f"audit-{c}.png" for c in AUDIT_CHARTS} | {f"collusion-{c}.png" for c in COLLUSION_CHARTS}
    expected |= {f"deals-{c}.png" for c in DEALS_CHARTS} | {f"health-{c}.png" for c in HEALTH_CHARTS}
    assert {p.name for p in (out / "charts").iterdir()} == expected
    found = json.loads((out / "findings.json").read_text(encoding="utf-8"))  # the first screen, for scripts
    assert [f["rank"] for f in found] == list(range(1, len(found) + 1)) and found
    assert report.read_text(encoding="utf-8").count('<tr class="sev-') == len(found)
    for png in (out / "charts").iterdir():
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC), png
        width, height = struct.unpack(">II", data[16:24])
        assert width >= 600 and height >= 300, png


def test_pages_are_self_contained(report):
    for page in report.parent.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        srcs = re.findall(r'\ssrc="([^"]*)"', text)
        assert all(s.startswith("data:image/png;base64,") for s in srcs), page
        assert bool(srcs) == (page.name in CHART_PAGES), page  # player pages draw inline SVG, no image
        assert "<link" not in text and "@import" not in text and "url(" not in text, page
        assert not re.search(r"https?://", text), page
        hrefs = re.findall(r'href="([^"]*)"', text)
        assert all(not h.startswith(("http", "//")) for h in hrefs), page
        assert 'data-images="pending"' in text and "naturalWidth" in text  # the marker script


def test_index_links_every_page_and_embeds_the_overview(report, warehouse):
    text = report.read_text(encoding="utf-8")
    assert text.count("<img ") == len(OVERVIEW_CHARTS)
    for page in ("players.html", "quality.html", "health.html", "audit.html", "collusion.html", "information.html"):
        assert text.count(f'href="{page}"') == 2, page  # in the navigation and in the summary
    embedded = re.findall(r'<img src="data:image/png;base64,([^"]+)"', text)
    import base64

    assert base64.b64decode(embedded[0]) == (report.parent / "charts" / "overview-fan_distribution.png").read_bytes()


def test_quality_page_shows_issues_and_rejects(report):
    text = (report.parent / "quality.html").read_text(encoding="utf-8")
    assert text.count("<img ") == len(QUALITY_CHARTS)
    assert "SCHEMA_JSON" in text  # the two junk lines
    assert "stored hands" in text and "rejected lines" in text


def test_audit_page(report, warehouse):
    text = (report.parent / "audit.html").read_text(encoding="utf-8")
    assert text.count("<img ") == len(AUDIT_CHARTS)
    with queries.connect(warehouse) as con:
        findings = audit(con).findings
    assert findings.height > 0  # the fixture injects faults
    top = findings.row(0, named=True)
    assert f"<b>{findings.height:,}</b> findings" in text and "points at stake" in text
    rows = re.findall(
        r'<tr class="(?:error|warning)" id="finding-(\d+)"><td class="num">(\d+)</td><td class="id">([^<]+)</td>', text
    )
    assert rows[0] == ("1", "1", top["hand_id"]) and len(rows) == min(30, findings.height)
    assert all(a == b for a, b, _ in rows)  # the anchor the first screen links to is the finding's rank
    assert f'<abbr title="{CODES[top["code"]].meaning}' in text  # hover a code for its meaning


def test_collusion_page_says_which_threshold_and_that_nothing_is_flagged(report):
    text = (report.parent / "collusion.html").read_text(encoding="utf-8")
    assert text.count("<img ") == len(COLLUSION_CHARTS)
    # 100 hands among 8 players: no pair shares 200, the page says so and which threshold it used.
    assert "200 were asked for, but no pair shared that many" in text
    assert "so the screen fell back to 20;" in text
    assert "<b>No pair is flagged</b> at a false discovery rate of 5%" in text
    assert "<h2>Top pairs</h2>" in text and text.count('<td class="id">') >= 1  # still shown
    # issue 37: "0 flagged" is no evidence at the power the evaluation measured, never "clean"
    assert "<h2>What the screen can see</h2>" in text and "no evidence at this power" in text
    assert "a pair feeding at 0.5 is found with probability ~" in text


def test_flagged_pairs_and_their_hands_on_the_page():
    """The flagged-pair parts of the page, from a screen whose pair pA & pB is flagged with two hands."""
    from dashboards import collusion as collusion_dash
    from dashboards.pages.collusion import evidence_section as _evidence_section
    from dashboards.pages.collusion import pairs_table as _pairs_table
    from dashboards.pages.collusion import summary as _collusion_summary
    from pipeline.audit.collusion import SIGNALS, PairResult

    signals = {s: {"observed": 3.0, "expected": 1.5, "ratio_shrunk": 1.0, "z": 2.5} for s in SIGNALS}
    seating = {"observed": 300, "expected": 150.0, "ratio": 2.0, "p": 0.01}
    evidence = [{"hand_id": "t1-s1-h07", "event": 41, "why": "pB won 3 fan (4 points) on pA's 5m"}]
    flagged = PairResult(("pA", "pB"), 300, 5.0, 2.9e-7, 0.0001, True, signals, seating, evidence)
    other = PairResult(("pA", "pC"), 250, 0.5, 0.31, 1.0, False, signals, seating, [])
    shared = pl.DataFrame({"player_a": ["pA", "pA"], "player_b": ["pB", "pC"], "shared_hands": [300, 250]})
    screen = collusion_dash.Screen(200, 200, 0.05, shared, (flagged, other))
    summary = _collusion_summary(screen)
    assert '<b class="flag">1 pair flagged</b> of 2 screened' in summary and "pA &amp; pB" in summary
    hands = _evidence_section(screen, collusion_dash.prep_evidence(screen))
    assert (
        "#1 pA &amp; pB: 300 shared hands, score 5.00" in hands and "q &lt; 0.001" in hands and "q = &lt;" not in hands
    )
    assert '<td class="id">t1-s1-h07</td><td class="num">41</td>' in hands
    assert "feeding 3 observed, 1.5 expected (z +2.5)" in hands
    table = _pairs_table(collusion_dash.prep_top_pairs(screen))
    assert table.count('<tr class="flagged">') == 1 and '<b class="flag">yes</b>' in table


def test_the_collusion_summary_names_the_reported_teams():
    """Issue 40: the summary named the flagged pairs but not the teams the group screen reported; a team whose
    pairs are each too weak to flag read as "No pair is flagged"."""
    from dashboards import collusion as collusion_dash
    from dashboards.pages.collusion import summary as _collusion_summary
    from pipeline.audit.collusion import SIGNALS, PairResult
    from pipeline.audit.teams import TeamResult

    signals = {s: {"observed": 3.0, "expected": 1.5, "ratio_shrunk": 1.0, "z": 2.5} for s in SIGNALS}
    seating = {"observed": 300, "expected": 150.0, "ratio": 2.0, "p": 0.01}
    pair = PairResult(("pA", "pB"), 300, 2.0, 0.02, 0.4, False, signals, seating, [])
    team = TeamResult(("pA", "pB", "pC"), 900, 5.2, 1e-6, 0.0031, True, {}, reported=True)
    shared = pl.DataFrame({"player_a": ["pA"], "player_b": ["pB"], "shared_hands": [300]})
    summary = _collusion_summary(collusion_dash.Screen(200, 200, 0.05, shared, (pair,), (team,)))
    assert "No pair is flagged</b>, but the group screen reports 1 team of three or more: pA, pB &amp; pC" in summary
    assert "(q 0.0031)" in summary
    flagged = PairResult(("pA", "pB"), 300, 5.0, 2.9e-7, 0.0001, True, signals, seating, [])
    summary = _collusion_summary(collusion_dash.Screen(200, 200, 0.05, shared, (flagged,), (team,)))
    assert "1 pair flagged</b> of 1 screened" in summary and "the group screen reports 1 team" in summary


def test_player_page(report, warehouse):
    first = _top3(warehouse)[0]
    text = (report.parent / page_file(first)).read_text(encoding="utf-8")
    assert "<img " not in text and text.count('<svg class="strip"') == 12  # six rates, six means
    assert f"<b>{first}</b>" in text
    assert "胡牌率" in text and "win rate" in text and "all players" in text
    for section in PLAYER_SECTIONS:
        assert f'id="{section}"' in text, section
    assert text.index('id="findings"') < text.index('id="figures"')  # the findings open the page
    assert '<a href="players.html" class="here">Players</a>' in text  # a player page is under Players


def test_chosen_players_no_players_and_min_hands(warehouse, tmp_path):
    chosen = _top3(warehouse)[2]
    index = build_report(warehouse, tmp_path / "one", players=[chosen, chosen])
    assert {p.name for p in index.parent.glob("*.html")} == {*FIXED_PAGES, page_file(chosen)}
    index = build_report(warehouse, tmp_path / "none", top_players=0, min_hands=10)
    assert {p.name for p in index.parent.glob("*.html")} == FIXED_PAGES
    directory = (index.parent / "players.html").read_text(encoding="utf-8")
    assert directory.count('<td class="id" data-v=') == 8 and "player-" not in directory  # listed, no page
    collusion = (index.parent / "collusion.html").read_text(encoding="utf-8")
    assert "Threshold: at least 10 shared hands, as asked;" in collusion
    index = build_report(warehouse, tmp_path / "two", top_players=2)
    assert {p.name for p in index.parent.glob("player-*.html")} == {page_file(p) for p in _top3(warehouse)[:2]}


def test_unknown_player_writes_nothing(warehouse, tmp_path):
    with pytest.raises(ValueError, match="'nobody'"):
        build_report(warehouse, tmp_path / "out", players=["nobody"])
    assert not (tmp_path / "out").exists()


def test_no_warehouse(tmp_path):
    with pytest.raises(FileNotFoundError, match="no warehouse"):
        build_report(tmp_path / "missing", tmp_path / "out")


def test_empty_warehouse(tmp_path):
    Warehouse(tmp_path / "wh").open().build_catalogue()
    index = build_report(tmp_path / "wh", tmp_path / "out")
    assert {p.name for p in index.parent.glob("*.html")} == FIXED_PAGES
    charts_written = len(OVERVIEW_CHARTS) + len(QUALITY_CHARTS) + len(AUDIT_CHARTS) + len(COLLUSION_CHARTS)
    charts_written += len(DEALS_CHARTS)
    assert len(list((tmp_path / "out" / "charts").glob("*.png"))) == charts_written
    assert "<b>No findings</b>" in (index.parent / "audit.html").read_text(encoding="utf-8")
    assert "<b>Nothing needs attention.</b>" in index.read_text(encoding="utf-8")
    assert "<h2>No ingest run</h2>" in (index.parent / "health.html").read_text(encoding="utf-8")
    assert "<b>Nothing was screened</b>" in (index.parent / "collusion.html").read_text(encoding="utf-8")
    assert "<b>Nothing was screened</b>" in (index.parent / "deals.html").read_text(encoding="utf-8")


def test_progress_names_every_chart(warehouse, tmp_path):
    steps: list[str] = []
    build_report(warehouse, tmp_path / "out", top_players=1, on_step=steps.append)
    charts_drawn = (
        len(OVERVIEW_CHARTS) + len(QUALITY_CHARTS) + len(AUDIT_CHARTS) + len(COLLUSION_CHARTS) + len(DEALS_CHARTS)
    ) + len(HEALTH_CHARTS)
    assert len(steps) == charts_drawn + 5  # the three screens, the findings and the player pages
    assert steps[0] == "quality: issues_by_code" and steps[-1] == "players"
    for step in ("collusion: screen", "information: screen", "deals: screen", "findings", "overview: fan_distribution"):
        assert step in steps


def test_page_file_names():
    assert page_file("p001") == "player-p001.html"
    odd = page_file("张三/../x")
    # letters of every script kept (readable), anything else "_", and a digest of the whole id
    assert re.fullmatch(r"player-张三_\.\._x-[0-9a-f]{8}\.html", odd)
    assert page_file("a/b") != page_file("a_b")


# ---------------------------------------------------------------------------------------------- fonts
def test_fallback_build_without_a_cjk_font(warehouse, tmp_path):
    with charts.forced_fonts(charts.Fonts(cjk_family=None)):
        index = build_report(warehouse, tmp_path / "out", top_players=1)
    assert "No CJK font was installed" in index.read_text(encoding="utf-8")


@pytest.fixture
def detected_font(monkeypatch):
    """Set what the font detection (:func:`charts.find_cjk_family`) finds, for the reports built in the test."""

    def detect(family: str | None) -> None:
        monkeypatch.setattr(charts, "find_cjk_family", lambda: family)
        charts._detected.cache_clear()

    yield detect
    monkeypatch.undo()
    charts._detected.cache_clear()


def _main_starts_with(text: str) -> str:
    """The first element of the page's ``<main>``: what the first screen shows first."""
    return text.split("<main>", 1)[1][:2000]


def test_index_says_on_its_first_screen_that_no_cjk_font_was_found(warehouse, tmp_path, detected_font):
    detected_font(None)
    index = build_report(warehouse, tmp_path / "out", top_players=1)
    text = index.read_text(encoding="utf-8")
    first = _main_starts_with(text)
    assert first.startswith('<section class="notice" id="font-notice" role="note">')
    notice = first.split("</section>", 1)[0]
    assert "No CJK font was found" in notice and "sudo apt-get install fonts-noto-cjk" in notice
    assert not CJK_CHAR.search(notice)  # the notice itself shows without the font
    assert text.index('id="font-notice"') < text.index("<figure")  # above the summary and every chart
    for other in ("quality.html", "audit.html", "collusion.html"):  # the overview says it, once
        assert 'id="font-notice"' not in (index.parent / other).read_text(encoding="utf-8")


def test_no_font_notice_when_a_cjk_font_exists(warehouse, tmp_path, detected_font):
    family = charts._detected.__wrapped__().cjk_family  # what this machine really has
    if family is None:
        missing_system_part("cjk", "no CJK font installed: a report with Chinese labels cannot be drawn here")
    detected_font(family)
    index = build_report(warehouse, tmp_path / "out", top_players=1)
    text = index.read_text(encoding="utf-8")
    assert 'id="font-notice"' not in text and "fonts-noto-cjk" not in text
    assert _main_starts_with(text).startswith('<section class="findings" id="findings">')
    assert f"Chart labels drawn with {family}." in text


def test_font_notice_follows_the_detection():
    from dashboards.pages.overview import font_notice

    assert font_notice(charts.Fonts(cjk_family="Noto Sans CJK SC")) == ""
    assert "fonts-noto-cjk" in font_notice(charts.Fonts(cjk_family=None))


def test_no_cjk_font_is_detected_when_matplotlib_and_fontconfig_know_none(monkeypatch):
    """The detection itself: no font of matplotlib's font manager covers 胡, fontconfig lists none to add."""
    import copy

    from matplotlib import font_manager

    latin = copy.copy(font_manager.fontManager)
    latin.ttflist = [f for f in font_manager.fontManager.ttflist if f.name == charts.LATIN]
    monkeypatch.setattr(font_manager, "fontManager", latin)
    monkeypatch.setattr(charts, "_fontconfig_cjk_files", lambda: [])
    charts._font.cache_clear()
    try:
        assert charts.find_cjk_family() is None
    finally:
        charts._font.cache_clear()


@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")
def test_a_character_no_font_draws_is_refused():
    import polars as pl

    def plot(df, ax):
        ax.set_title("花猪")

    with pytest.raises(charts.GlyphError, match="花"):
        charts.render(plot, pl.DataFrame(), choice=charts.Fonts(cjk_family=None))


def test_fonts_helpers():
    latin = charts.Fonts(cjk_family=None)
    assert latin.families == (charts.LATIN,)
    assert latin.term("黄庄", "huang zhuang") == "huang zhuang"
    assert latin.both("清一色", "full flush") == "full flush"
    assert latin.safe("p1·张") == "p1·\\u5f20"  # DejaVu has the middle dot, not the Han character
    assert charts.covers(charts.LATIN, "abc") and not charts.covers(charts.LATIN, "胡")
    assert not charts.covers("No Such Font Family", "a")


def test_detected_font_draws_the_chinese_labels():
    choice = charts.fonts()
    if not choice.cjk:
        missing_system_part(
            "cjk", "no CJK font installed: the charts use English/pinyin (apt-get install fonts-noto-cjk)"
        )
    assert charts.covers(choice.cjk_family, charts.CJK_SAMPLE)
    assert choice.families[-1] == charts.LATIN


def test_fonts_installed_after_matplotlibs_cache_are_found(monkeypatch):
    """A font cache built before fonts-noto-cjk was installed knows no CJK font: fontconfig's are added."""
    import copy

    from matplotlib import font_manager

    zh_files = set(charts._fontconfig_cjk_files())
    if not zh_files:
        missing_system_part("cjk", "fontconfig lists no Chinese font")
    stale = copy.copy(font_manager.fontManager)
    stale.ttflist = [f for f in font_manager.fontManager.ttflist if f.fname not in zh_files]
    before = len(stale.ttflist)
    monkeypatch.setattr(font_manager, "fontManager", stale)
    charts._font.cache_clear()
    try:
        family = charts.find_cjk_family()
        assert family is not None and charts.covers(family, charts.CJK_SAMPLE)
        assert len(stale.ttflist) > before  # fontconfig's files were added
    finally:
        charts._font.cache_clear()


def test_formatting():
    assert numbers.pct(0.5) == "50.0%" and numbers.pct(None) == "–"
    assert numbers.num(1234) == "1,234" and numbers.num(1.5) == "1.50"
    assert numbers.interval(0.1, 0.2, numbers.pct) == "[10.0%, 20.0%]" and numbers.interval(None, 1) == ""
    assert charts.height_for(0) == 3.0 and charts.height_for(40) > 12


def test_same_input_same_png(warehouse):
    from dashboards import overview

    df = overview.prep_outcomes(queries.connect(warehouse))
    assert charts.render(overview.plot_outcomes, df) == charts.render(overview.plot_outcomes, df)


# ---------------------------------------------------------------------------------------------- browser
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--virtual-time-budget=5000",
)


def _chromium() -> str:
    """Debian's chromium; installed with apt-get when missing and possible, else the test is skipped."""
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    error = "no apt-get, or not root"
    if shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
        ):
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, check=False)
            except (OSError, subprocess.SubprocessError) as exc:
                error = str(exc)
                break
            error = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            error = error[0]
            if path := shutil.which("chromium"):
                return path
    missing_system_part(
        "chromium", f"chromium is not installed and could not be installed ({error}): apt-get install -y chromium"
    )


def _browse(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_pages_render_in_a_headless_browser(report, tmp_path):
    chromium = _chromium()
    out = report.parent
    pages = sorted(out.glob("*.html"))
    assert {p.name for p in pages} >= FIXED_PAGES  # the audit and collusion pages among them
    for page in pages:
        done = _browse(chromium, tmp_path / f"profile-{page.stem}", "--dump-dom", page.resolve().as_uri())
        assert done.returncode == 0, done.stderr[-2000:]
        dom = done.stdout
        total = page.read_text(encoding="utf-8").count("<img ")
        assert f'data-images="{total}/{total}"' in dom, (page.name, re.findall(r'data-images="[^"]*"', dom))
        assert dom.count('data-loaded="true"') == total and 'data-loaded="false"' not in dom, page.name

    # the layout at 1,280 px: nothing runs past the page's width, and no table cell splits a word over two lines
    for page in pages:
        done = _browse(
            chromium,
            tmp_path / f"profile-1280-{page.stem}",
            "--window-size=1280,900",
            "--dump-dom",
            page.resolve().as_uri(),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert 'data-overflow="0"' in done.stdout, (page.name, re.findall(r'data-overflow="[^"]*"', done.stdout))
        assert 'data-broken=""' in done.stdout, (page.name, re.findall(r'data-broken="[^"]*"', done.stdout))

    for name in ("index", "collusion"):
        shot = tmp_path / f"{name}.png"
        done = _browse(
            chromium,
            tmp_path / f"profile-shot-{name}",
            "--window-size=1200,2400",
            f"--screenshot={shot}",
            (out / f"{name}.html").resolve().as_uri(),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert shot.exists() and shot.stat().st_size > 50_000, name
        pixels = matplotlib.image.imread(str(shot))
        assert pixels.shape[1] == 1200
        assert pixels[..., :3].std() > 0.05, f"the screenshot of {name} is not a blank page"


def test_finding_messages_fold_the_position_away():
    from dashboards.html import finding_message as _message

    folded = _message("seat 0 discards <out of turn>", "ev3 discard turn=1 left=5 || 0:123m [pong:5p]")
    assert folded.startswith("seat 0 discards &lt;out of turn&gt;<details><summary>position</summary>")
    assert '<span class="pos">ev3 discard turn=1 left=5 || 0:123m [pong:5p]</span>' in folded
    assert _message("hu 2 from seat 0 to seat 3 (event 72): claimed paid by seat 2") == (
        "hu 2 from seat 0 to seat 3 (event 72): claimed paid by seat 2"
    )
    assert _message(None) == "–"


def test_the_font_search_logs_no_findfont_noise() -> None:
    # Looking for a CJK family walks every installed font; matplotlib then logs "findfont: Failed to find font
    # weight ..." for some (make demo printed three). A fresh process, so that no font cache hides it.
    import subprocess
    import sys

    code = (
        "import logging; logging.basicConfig(level=logging.INFO)\n"
        "from pipeline.report import charts\n"
        "charts.find_cjk_family()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert "findfont" not in done.stderr


def _dom_attr(dom: str, name: str) -> str:
    found = re.search(rf'{name}="([^"]*)"', dom)
    assert found, name
    return found.group(1)


def test_findings_open_the_index_in_a_headless_browser(report, warehouse, tmp_path):
    """The first screen, as Chromium builds and draws it: What needs attention comes first (after the font
    notice, where there is one), with one row per finding and its severity badges drawn in their colours."""
    from dashboards import findings, quality
    from dashboards.collusion import screen_pairs
    from dashboards.information import screen as screen_information
    from pipeline.analytics.levels import NEEDS

    chromium = _chromium()
    done = _browse(chromium, tmp_path / "profile-dom", "--dump-dom", report.resolve().as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    main = done.stdout.split("<main>", 1)[1]
    if main.startswith('<section class="notice"'):
        main = main.split("</section>", 1)[1]
    assert main.startswith('<section class="findings" id="findings"><h2>What needs attention</h2>')
    section = main.split("</section>", 1)[0]
    with queries.connect(warehouse) as con:
        screen = screen_pairs(con)
        expected = findings.prep_findings(
            pairs=screen.pairs,
            pair_fdr=screen.fdr,
            info=screen_information(con),
            info_fdr=0.05,
            audit=audit(con),
            counts=queries.run(con, "warehouse_counts").row(0, named=True),
            issues=quality.prep_issues_by_code(con),
            rejects=quality.prep_rejects_by_code(con),
            unusual=findings.prep_unusual_results(
                queries.fold(queries.player_base_levels(con), NEEDS["net_points_per_hand"])
            ),
            page_of=page_file,
        )
    assert expected.height >= 3  # scoring errors, invalid records, the two junk lines
    assert section.count('<tr class="sev-') == expected.height
    assert f"<b>{expected.height} findings need attention.</b>" in section
    assert 'href="quality.html#rejects"' in section and 'href="audit.html#finding-1"' in section

    shot = tmp_path / "first-screen.png"
    done = _browse(
        chromium, tmp_path / "profile-shot", "--window-size=1200,900", f"--screenshot={shot}", report.resolve().as_uri()
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = matplotlib.image.imread(str(shot))[..., :3]
    medium = abs(pixels - [0xD4 / 255, 0x88 / 255, 0x06 / 255]).max(axis=-1) < 0.04  # the medium badge
    low = abs(pixels - [0x7A / 255, 0x87 / 255, 0x94 / 255]).max(axis=-1) < 0.04  # the low badge
    assert medium.sum() > 200 and low.sum() > 100, "the severity badges are not on the first screen"


def test_the_directory_sorts_and_filters_in_a_headless_browser(report, warehouse, tmp_path):
    """players.html's own script, driven through the DOM in Chromium: a click on "net points" sorts the rows
    by net points, biggest first, a second click reverses them; the filter keeps the ids holding its text."""
    from dashboards import player

    chromium = _chromium()
    page = (report.parent / "players.html").read_text(encoding="utf-8")
    probe = """<script>
    (function () {
      function order() {
        return Array.prototype.map.call(document.querySelectorAll("table.directory tbody tr"), function (r) {
          return r.cells[0].getAttribute("data-v");
        }).join(" ");
      }
      var th = document.querySelectorAll("table.directory thead th")[4];
      th.click();
      document.body.setAttribute("data-down", order());
      document.body.setAttribute("data-sort-down", th.getAttribute("aria-sort"));
      th.click();
      document.body.setAttribute("data-up", order());
      var filter = document.getElementById("filter");
      filter.value = "p003";
      filter.dispatchEvent(new Event("input"));
      var shown = Array.prototype.filter.call(document.querySelectorAll("table.directory tbody tr"), function (r) {
        return r.style.display !== "none";
      });
      document.body.setAttribute("data-shown", String(shown.length));
    })();
    </script></body>"""
    driven = tmp_path / "players.html"
    driven.write_text(page.replace("</body>", probe, 1), encoding="utf-8")
    done = _browse(chromium, tmp_path / "profile-sort", "--dump-dom", driven.resolve().as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    with queries.connect(warehouse) as con:
        d = player.prep_directory(player.prep_every_player(con))
    down = d.sort(["net", "player"], descending=[True, False])["player"].to_list()
    up = d.sort(["net", "player"], descending=[False, False])["player"].to_list()
    assert _dom_attr(done.stdout, "data-down").split(" ") == down
    assert _dom_attr(done.stdout, "data-sort-down") == "descending"
    assert _dom_attr(done.stdout, "data-up").split(" ") == up
    assert _dom_attr(done.stdout, "data-shown") == "1"

    shot = tmp_path / "directory.png"
    done = _browse(
        chromium,
        tmp_path / "profile-dir",
        "--window-size=1200,900",
        f"--screenshot={shot}",
        (report.parent / "players.html").resolve().as_uri(),
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = matplotlib.image.imread(str(shot))[..., :3]
    assert pixels.shape[1] == 1200 and pixels.std() > 0.05, "the directory's screenshot is blank"


def test_directory_of_chinese_ids_links_readable_page_names(tmp_path):
    """Chinese player ids: the directory lists them as they are and links pages named readably
    (``player-张三-<digest>.html``, pipeline/report/names.py), which exist and name the player."""
    from test_dashboards import tiny_warehouse

    names = {"pA": "张三", "pB": "李四", "pC": "王五", "pD": "赵六", "pE": "钱七"}
    index = build_report(tiny_warehouse(tmp_path / "wh", rename=names), tmp_path / "out", min_hands=1)
    directory = (index.parent / "players.html").read_text(encoding="utf-8")
    for name in names.values():
        file = page_file(name)
        assert re.fullmatch(rf"player-{name}-[0-9a-f]{{8}}\.html", file)
        assert (index.parent / file).is_file()
        assert f'<a href="{site_href(file)}">{name}</a>' in directory
        assert f"<b>{name}</b>" in (index.parent / file).read_text(encoding="utf-8")


def site_href(file: str) -> str:
    from urllib.parse import quote

    return quote(file)


def test_a_flagged_players_page_says_so_first_and_links_the_evidence(warehouse, tmp_path, monkeypatch):
    """The collusion screen flags p001 & p002 (a screen stood in for the real one, which flags nobody in 100
    hands): the first screen lists the pair, p001's page opens with "p001 is flagged" and the pair's link, and
    the collusion page holds the anchor; p003's page says no finding concerns it, or lists only audit findings."""
    from dashboards import collusion as collusion_dash
    from pipeline.audit.collusion import SIGNALS, PairResult

    signals = {s: {"observed": 3.0, "expected": 1.5, "ratio_shrunk": 1.0, "z": 2.5} for s in SIGNALS}
    pair = PairResult(("p001", "p002"), 40, 5.0, 1e-6, 1e-4, True, signals, {"ratio": 1.0}, [])
    shared = pl.DataFrame({"player_a": ["p001"], "player_b": ["p002"], "shared_hands": [40]})
    screen = collusion_dash.Screen(200, 20, 0.05, shared, (pair,))
    monkeypatch.setattr(collusion_dash, "screen_pairs", lambda con, min_hands=200: screen)
    index = build_report(warehouse, tmp_path / "out")
    first = index.read_text(encoding="utf-8").split('id="findings"', 1)[1].split("</section>", 1)[0]
    assert '<td><a href="player-p001.html">p001</a> &amp; <a href="player-p002.html">p002</a></td>' in first
    assert '<a href="collusion.html#pair-1">pair #1: signals and hands to replay</a>' in first
    page = (index.parent / "player-p001.html").read_text(encoding="utf-8")
    banner = page.split("<main>", 1)[1].split("</section>", 1)[0]
    assert banner.startswith('<section class="banner high" id="findings"><h2>p001 is flagged</h2>')
    assert '<a href="collusion.html#pair-1">' in banner and "<b>p001 &amp; p002</b>" in banner
    assert 'id="pair-1"' in (index.parent / "collusion.html").read_text(encoding="utf-8")
    other = (index.parent / "player-p003.html").read_text(encoding="utf-8").split("<main>", 1)[1]
    assert "is flagged" not in other.split("</section>", 1)[0]
    directory = (index.parent / "players.html").read_text(encoding="utf-8")
    assert directory.count('<span class="badge high">colluding pair?</span>') == 2


def test_a_player_page_in_a_headless_browser(report, warehouse, tmp_path):
    """A player's page in Chromium: the head-to-head table holds a row per opponent, linked to their pages, and
    sorts by a clicked heading (the page's own script); the rates-over-time curve is laid out at its size with
    its two bands and lines; on a screenshot of those two sections the curve's lines and bands are drawn in
    their colours where the DOM puts the chart."""
    from dashboards import player
    from pipeline.report import svg

    chromium = _chromium()
    first = _top3(warehouse)[0]
    with queries.connect(warehouse) as con:
        h2h = player.prep_head_to_head(con, first)
        rolling = player.prep_rolling(con, first)
    page = (report.parent / page_file(first)).read_text(encoding="utf-8")
    # the two sections alone on the first screen, and a probe that drives and measures them
    alone = "<style>main > section:not(#opponents):not(#over-time) { display: none; }</style>"
    probe = """<script>
    (function () {
      var table = document.querySelector("#opponents table.opponents");
      function order() {
        return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
          return r.cells[0].getAttribute("data-v");
        }).join(" ");
      }
      document.body.setAttribute("data-first", order());
      document.body.setAttribute("data-links", String(table.querySelectorAll("tbody td.id a[href]").length));
      table.tHead.rows[0].cells[4].click();  // net
      document.body.setAttribute("data-by-net", order());
      var box = document.querySelector("#over-time svg.rolling").getBoundingClientRect();
      document.body.setAttribute("data-chart", [box.left, box.top, box.width, box.height].map(Math.round).join(" "));
      document.body.setAttribute("data-shapes", document.querySelectorAll("#over-time polygon").length + " " +
        document.querySelectorAll("#over-time polyline").length);
    })();
    </script></body>"""
    driven = tmp_path / "player.html"
    driven.write_text(page.replace("<main>", "<main>" + alone, 1).replace("</body>", probe, 1), encoding="utf-8")
    size = "--window-size=1200,1100"
    done = _browse(chromium, tmp_path / "profile-player", size, "--dump-dom", driven.resolve().as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert _dom_attr(dom, "data-first").split(" ") == h2h["opponent"].to_list()  # most hands together first
    assert _dom_attr(dom, "data-links") == str(h2h.height)  # every opponent has a page in this report
    by_net = h2h.sort(["net", "opponent"], descending=[True, False])["opponent"].to_list()
    assert _dom_attr(dom, "data-by-net").split(" ") == by_net
    left, top, width, height = map(int, _dom_attr(dom, "data-chart").split(" "))
    assert (width, height) == (640, 180)
    lines = svg.rolling_lines(rolling.to_dicts(), window=player.ROLLING_WINDOW).count("<polyline")
    assert _dom_attr(dom, "data-shapes") == f"2 {lines}" and lines >= 2

    shot = tmp_path / "player.png"
    done = _browse(chromium, tmp_path / "profile-shot", size, f"--screenshot={shot}", driven.resolve().as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    if os.environ.get("XUEZHAN_KEEP_SHOTS"):  # to look at it: the screenshot kept where the variable says
        shutil.copy(shot, Path(os.environ["XUEZHAN_KEEP_SHOTS"]) / "player-page.png")
    pixels = matplotlib.image.imread(str(shot))[..., :3]
    assert top + height <= pixels.shape[0], "the chart is not on the first screen"
    chart = pixels[top : top + height, left : left + width]

    def near(colour: tuple[int, int, int], tint: float = 1.0, tolerance: float = 0.1) -> int:
        rgb = [1 - tint + tint * c / 255 for c in colour]  # the colour at `tint` opacity over white
        return int((abs(chart - rgb).max(axis=-1) < tolerance).sum())

    win, deal = (0xC0, 0x39, 0x2B), (0x34, 0x49, 0x5E)
    assert near(win, tolerance=0.2) > 150 and near(deal, tolerance=0.2) > 150, "the lines are not drawn"
    assert near(win, 0.18, 0.04) > 1000 and near(deal, 0.18, 0.04) > 1000, "the bands are not drawn"
