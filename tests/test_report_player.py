"""The report's player page, issue 21's last parts: the head-to-head table, the rolling rates drawn as inline
SVG (pipeline.report.svg.rolling_lines, its points checked by hand), and the scope every page states.

The hand-written room (``room_fixture.py``) gives frames whose every number is known (tests/
test_analytics_players.py works them out); the pages are built from it by build_report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import room_fixture

from dashboards import player
from pipeline.analytics import queries
from pipeline.report import svg


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return room_fixture.build(tmp_path_factory.mktemp("room"))


def _polylines(chart: str) -> list[tuple[str, str, bool]]:
    """(points, colour, dashed) of each line of a chart."""
    return [
        (m.group(1), m.group(2), m.group(3) is not None)
        for m in re.finditer(
            r'<polyline points="([^"]*)" fill="none" stroke="([^"]*)" stroke-width="1.6"( stroke-dasharray="4 3")?/>',
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
