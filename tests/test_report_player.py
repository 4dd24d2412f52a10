"""The report's player page, issue 21's last parts: the head-to-head table, the rolling rates drawn as inline
SVG (pipeline.report.svg.rolling_lines, its points checked by hand), and the scope every page states.

The hand-written room (``room_fixture.py``) gives frames whose every number is known (tests/
test_analytics_players.py works them out); the pages are built from it by build_report."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import room_fixture

from dashboards import player
from dashboards.pages.players import page_file
from dashboards.site import build_report
from pipeline.analytics import queries
from pipeline.analytics.scope import Scope
from pipeline.report import svg


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return room_fixture.build(tmp_path_factory.mktemp("room"))


def _polylines(chart: str) -> list[tuple[str, str, bool]]:
    """(points, colour, dashed) of each line of a chart."""
    return [
        (m.group(1), m.group(2), m.group(3) is not None)
        for m in re.finditer(
            r'<polyline points="([^"]*)" fill="none" stroke="([^"]*)" stroke-width="2"( stroke-dasharray="4 3")?/>',
            chart,
        )
    ]


# ---------------------------------------------------------------------------------------------- the SVG
def test_rolling_lines_places_the_points_by_hand(room: Path) -> None:
    with queries.connect(room) as con:
        df = player.prep_rolling(con, "p1", window=2)
    # p1 (test_analytics_players): n 1..4, window 1 2 2 2, win rate 0 0 .5 .5, deal-in rate 1 1 1 .5; the bands
    # reach 1 (a deal-in in 1 of 1 hands), so the axis runs 0-100%.
    chart = svg.rolling_lines(df.to_dicts(), window=2)
    # x: 36 + 596 (n - 1) / 3 -> 36.0 234.7 433.3 632.0; y: 8 + 154 (1 - v) -> 0: 162.0, 0.5: 85.0, 1: 8.0
    assert _polylines(chart) == [
        ("36.0,162.0 234.7,162.0", svg.SUBJECT, True),  # win rate: hand 1 (window not full) up to hand 2
        ("234.7,162.0 433.3,85.0 632.0,85.0", svg.SUBJECT, False),
        ("36.0,8.0 234.7,8.0", svg.POPULATION, True),  # deal-in rate
        ("234.7,8.0 433.3,8.0 632.0,85.0", svg.POPULATION, False),
    ]
    # the win band: highs forward then lows back; Wilson 0 of 1 is [0, 0.7935] -> y 8 + 154 * 0.2065 = 39.8
    win_band = re.search(rf'<polygon points="([^"]*)" fill="{svg.SUBJECT}"', chart)
    assert win_band and win_band.group(1).split(" ")[0] == "36.0,39.8"
    assert win_band.group(1).split(" ")[-1] == "36.0,162.0"  # back to hand 1's low, 0
    assert len(win_band.group(1).split(" ")) == 8
    for label in (">0%<", ">50%<", ">100%<", ">1<", ">4<"):
        assert label in chart
    assert "p1" not in chart  # numbers only: no id goes into an SVG


def test_the_over_time_section_draws_the_thinned_rows_as_the_whole_series_would() -> None:
    """The player page selects the rows the chart draws before it turns them into dicts (a player of 167,000
    hands at 1M): the same chart as from every row, thinned or not."""
    import datetime as dt

    import polars as pl

    from dashboards.pages.players import over_time as _player_over_time

    w = player.ROLLING_WINDOW
    for count in (w - 3, 399, 1_234):
        df = pl.DataFrame(
            {
                "n": range(1, count + 1),
                "window": [min(n, w) for n in range(1, count + 1)],
                "win_rate": [0.1 + (n % 7) / 20 for n in range(count)],
                "win_low": [0.05 + (n % 7) / 20 for n in range(count)],
                "win_high": [0.2 + (n % 7) / 20 for n in range(count)],
                "deal_in_rate": [0.1 + (n % 5) / 30 for n in range(count)],
                "deal_in_low": [0.05] * count,
                "deal_in_high": [0.3] * count,
                "played_local": [dt.datetime(2026, 11, 1) + dt.timedelta(hours=n) for n in range(count)],
            }
        ).with_columns(
            hands=pl.lit(count),
            played_from=pl.lit(dt.datetime(2026, 11, 1)),
            played_to=pl.lit(dt.datetime(2026, 11, 1) + dt.timedelta(hours=count - 1)),
        )
        whole = svg.rolling_lines(df.to_dicts(), window=w)
        section = _player_over_time(df)
        assert whole and whole in section, count
        # the rows iter_rolling gives, thinned where they were rolled: the same section
        thinned = df.select(pl.all().gather(svg.thinned(df.height, w)))
        assert _player_over_time(thinned) == section, count
        assert f"across their {count:,} replayed hands" in section
        last = (dt.datetime(2026, 11, 1) + dt.timedelta(hours=count - 1)).date()
        assert f"They were played from 2026-11-01 to {last:%Y-%m-%d} (local dates)." in section


def test_rolling_lines_zoom_thin_and_edges() -> None:
    def row(n: int, window: int) -> dict[str, object]:
        return {
            "n": n,
            "window": min(n, window),
            "win_rate": 0.2,
            "win_low": 0.1,
            "win_high": 0.31,
            "deal_in_rate": 0.1,
            "deal_in_low": 0.05,
            "deal_in_high": 0.2,
        }

    rows = [row(n, 50) for n in range(1, 1001)]
    chart = svg.rolling_lines(rows, window=50)
    assert ">40%<" in chart and ">20%<" in chart  # the highest band end 0.31 rounded up to 0.4
    lines = _polylines(chart)
    # 1,000 rows thinned to every third (334, hand 1000 among them) and hand 50, where the window fills
    kept = {pt for points, colour, _ in lines if colour == svg.SUBJECT for pt in points.split(" ")}
    assert len(kept) == 335
    dashed = next(points for points, colour, d in lines if colour == svg.SUBJECT and d).split(" ")
    assert len(dashed) == 18  # hands 1, 4, ..., 49 (17) and 50
    assert svg.rolling_lines([], window=50) == ""
    one = svg.rolling_lines([row(1, 50)], window=50)  # one hand: a dot in the middle, on a 0-40% axis
    assert _polylines(one) == [] and f'<circle cx="334.0" cy="85.0" r="2.5" fill="{svg.SUBJECT}"/>' in one
    # x 36 + 596 / 2; y 8 + 154 (1 - 0.2 / 0.4)
    unknown = svg.rolling_lines(
        [{**row(n, 1), "win_low": None, "win_high": None, "win_rate": None} for n in (1, 2)], window=1
    )
    assert unknown.count("<polygon") == 1 and len(_polylines(unknown)) == 1  # the deal-in line only


# ---------------------------------------------------------------------------------------------- the player page
@pytest.fixture(scope="module")
def report(room: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_report(room, tmp_path_factory.mktemp("report") / "out").parent


def _section(page: str, anchor: str) -> str:
    start = page.index(f'<section id="{anchor}">')
    return page[start : page.index("</section>", start)]


def _cells(row: str) -> list[str]:
    """The text of each cell of a table row (markup dropped)."""
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]


def test_the_player_page_shows_head_to_head_by_hand(report: Path) -> None:
    page = (report / page_file("p1")).read_text(encoding="utf-8")
    assert "<img" not in page  # no chart image on a player page: their figures are strings
    order = [page.index(f'<section id="{a}">') for a in ("figures", "opponents", "over-time", "results")]
    assert order == sorted(order)
    section = _section(page, "opponents")
    assert '<table class="sortable opponents">' in section and section.count('data-sort="num"') == 9
    rows = re.findall(r"<tr><td.*?</tr>", section)
    # test_analytics_players.P1, worked out by hand from the room's payments
    assert [_cells(r)[:7] for r in rows] == [
        ["p2", "4", "2", "5", "-3", "-0.75 [-1.69, 0.19]", "2"],
        ["p3", "3", "2", "1", "+1", "+0.33 [-1.40, 2.06]", "1"],
        ["p4", "3", "0", "2", "-2", "-0.67 [-1.97, 0.64]", "0"],
        ["p5", "2", "0", "1", "-1", "-0.50 [-1.48, 0.48]", "1"],
    ]
    # deal-ins to p2 in 2 of 4 hands, Wilson [15.0%, 85.0%]; p1 won on p3's discard in 1 of 3
    assert _cells(rows[0])[7:] == ["50.0% [15.0%, 85.0%]", "0", "0.0% [0.0%, 49.0%]"]
    assert _cells(rows[1])[8:] == ["1", "33.3% [6.1%, 79.2%]"]
    for opponent, row in zip(("p2", "p3", "p4", "p5"), rows, strict=True):
        assert f'<a href="{page_file(opponent)}">{opponent}</a>' in row and (report / page_file(opponent)).exists()
    assert 'data-v="-0.75"' in rows[0]  # sorts by the number, not its text


def test_the_player_page_draws_the_rates_over_time(report: Path, room: Path) -> None:
    page = (report / page_file("p1")).read_text(encoding="utf-8")
    section = _section(page, "over-time")
    with queries.connect(room) as con:
        rolling = player.prep_rolling(con, "p1")
    assert svg.rolling_lines(rolling.to_dicts(), window=player.ROLLING_WINDOW) in section
    assert section.count("<polyline") == 2  # four hands, fewer than the window: both lines dashed only
    assert "across their 4 replayed hands" in section
    assert "played from 2026-10-31 to 2026-11-02 (local dates)" in section  # h1 local 31 Oct, h5 2 Nov (UTC)
    p5 = (report / page_file("p5")).read_text(encoding="utf-8")  # h4 has no time: the dates of the others
    assert "played from 2026-11-01 to 2026-11-02" in _section(p5, "over-time")


# ---------------------------------------------------------------------------------------------- the scope
def test_every_page_of_a_scoped_report_says_its_scope(room: Path, tmp_path: Path) -> None:
    out = build_report(room, tmp_path / "t1", scope=Scope(table="t1")).parent
    line = (
        '<p class="scope" id="scope-line">This report covers only the hands at table t1; the rejected lines are '
        "the whole warehouse&#x27;s.</p>"
    )
    pages = sorted(out.glob("*.html"))
    assert len(pages) >= 7 + 4  # the fixed pages and a page for each of p1..p4 (p5 sat at t1 in h4 too)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert text.count(line) == 1 and text.index(line) < text.index("<nav>"), page.name
    quality = (out / "quality.html").read_text(encoding="utf-8")
    note = quality.split('<section class="banner scope" id="scope"><p>', 1)[1].split("</section>", 1)[0]
    assert quality.index('id="scope"') < quality.index("<h2>The warehouse</h2>")  # the page's first words
    assert note.startswith("The stored hands, their issues and the replayed hands here are the hands at table t1.")
    assert "The rejected lines, and the ingest runs with their lines read, are the whole warehouse's" in note
    # the pages are over t1's hands only: p1 and p2 sat together in h1 and h2 there (h3 is t2's, h5 t3's)
    p1 = (out / page_file("p1")).read_text(encoding="utf-8")
    first = re.findall(r"<tr><td.*?</tr>", _section(p1, "opponents"))[0]
    assert _cells(first)[:2] == ["p2", "2"]


def test_a_report_of_every_hand_says_no_scope_and_a_zone_alone_says_the_zone(
    report: Path, room: Path, tmp_path: Path
) -> None:
    for page in report.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert 'class="scope"' not in text and 'id="scope"' not in text, page.name
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from cli import app; app(prog_name='xuezhan')",
            "report",
            "--warehouse",
            str(room),
            "--out",
            str(tmp_path / "utc"),
            "--tz",
            "UTC",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: the room has findings
    index = (tmp_path / "utc" / "index.html").read_text(encoding="utf-8")
    assert '<p class="scope" id="scope-line">Every hand; dates and months in time zone UTC.</p>' in index
    assert 'id="scope"' not in (tmp_path / "utc" / "quality.html").read_text(encoding="utf-8").replace(
        'id="scope-line"', ""
    )
