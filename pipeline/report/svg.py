"""Small inline SVG figures for the report's HTML tables: cheap enough for a page per player among thousands
(matplotlib takes a few hundred milliseconds a chart; these are a string each), crisp at any zoom, and they
need no fetch. They draw numbers only: no data string (an id) ever goes into one.

>>> strip = interval_strip((0.4, 0.35, 0.45), (0.3, 0.29, 0.31), share=True)
>>> strip.startswith('<svg class="strip" width="220" height="22"') and strip.count("<circle") == 2
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

SUBJECT = "#c0392b"  # the player (pipeline.report.charts.SUBJECT)
POPULATION = "#34495e"  # everyone (charts.POPULATION)
Interval = tuple[float | None, float | None, float | None]  # value, low, high


def _num(x: float) -> str:
    return f"{x:.1f}"


def domain(intervals: Sequence[Interval], *, share: bool) -> tuple[float, float]:
    """The axis range that holds every value and interval end, padded by 10% on each side (shares: kept within
    0 and 1); a single point gets a range around it.

    >>> [round(x, 3) for x in domain([(0.4, 0.3, 0.5)], share=True)]
    [0.28, 0.52]
    >>> domain([(-1.0, -2.0, 0.5), (2.0, 1.0, 3.0)], share=False)
    (-2.5, 3.5)
    """
    points = [p for iv in intervals for p in iv if p is not None and math.isfinite(p)]
    low, high = (min(points), max(points)) if points else (0.0, 1.0)
    if low == high:
        low, high = low - (0.01 if share else 1.0), high + (0.01 if share else 1.0)
    pad = 0.1 * (high - low)
    low, high = low - pad, high + pad
    return (max(0.0, low), min(1.0, high)) if share else (low, high)


def interval_strip(
    subject: Interval,
    reference: Interval,
    *,
    share: bool,
    width: int = 220,
    height: int = 22,
    span: tuple[float, float] | None = None,
) -> str:
    """The subject's value and 95% interval (red, above) beside the reference's (dark, below) on one axis, with
    a tick at zero where the axis crosses it; ``span`` fixes the axis (default :func:`domain` of the two)."""
    low, high = span if span is not None else domain([subject, reference], share=share)
    scale = (width - 8) / (high - low) if high > low else 0.0

    def x(v: float) -> float:
        return 4 + (min(max(v, low), high) - low) * scale

    parts = [
        f'<svg class="strip" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="interval">'
    ]
    if low < 0 < high:
        parts.append(f'<line x1="{_num(x(0))}" y1="1" x2="{_num(x(0))}" y2="{height - 1}" stroke="#999999"/>')
    for (value, lo, hi), y, colour in ((subject, 7, SUBJECT), (reference, 15, POPULATION)):
        if lo is not None and hi is not None:
            parts.append(
                f'<line x1="{_num(x(lo))}" y1="{y}" x2="{_num(x(hi))}" y2="{y}" stroke="{colour}" stroke-width="2"/>'
            )
        if value is not None:
            parts.append(f'<circle cx="{_num(x(value))}" cy="{y}" r="3.2" fill="{colour}"/>')
    parts.append("</svg>")
    return "".join(parts)


def share_bars(subject: float | None, reference: float | None, *, width: int = 160, height: int = 18) -> str:
    """Two shares (0–1) as bars of the cell's width: the subject's (red, above) and the reference's (dark).

    >>> share_bars(0.5, 0.25, width=100).count('width="50.0"'), share_bars(None, 1.0, width=100).count("<rect")
    (1, 1)
    """
    parts = [
        f'<svg class="bars" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="shares">'
    ]
    half = height / 2
    for v, y, colour in ((subject, 1.0, SUBJECT), (reference, half, POPULATION)):
        if v is not None and math.isfinite(v):
            w = max(0.0, min(1.0, v)) * width
            parts.append(f'<rect x="0" y="{_num(y)}" width="{_num(w)}" height="{_num(half - 1.5)}" fill="{colour}"/>')
    parts.append("</svg>")
    return "".join(parts)


Band = tuple[str, str, str, str]  # the columns of a rate, its low and its high, and the colour it is drawn in
ROLLING_BANDS: tuple[Band, ...] = (
    ("win_rate", "win_low", "win_high", SUBJECT),
    ("deal_in_rate", "deal_in_low", "deal_in_high", POPULATION),
)


MOST_POINTS = 400  # the points a rolling chart draws at most (a player of 100,000 hands: about 400)


def thinned(count: int, window: int, most: int = MOST_POINTS) -> list[int]:
    """The rows :func:`rolling_lines` draws of ``count`` rows (``n`` = 1, 2, …): all of them up to ``most``, else
    every k-th, the first full window's (``n == window``) and the last; a caller can select them before it
    builds the rows (a player of 100,000 hands needs about 400).

    >>> thinned(5, 3, most=10)
    [0, 1, 2, 3, 4]
    >>> thinned(10, 4, most=4)
    [0, 3, 6, 9]
    >>> thinned(11, 2, most=4)
    [0, 1, 3, 6, 9, 10]
    """
    if count <= most:
        return list(range(count))
    step = math.ceil(count / most)
    return [i for i in range(count) if i % step == 0 or i == count - 1 or i == window - 1]


def rolling_lines(
    rows: Sequence[dict[str, Any]],
    *,
    window: int,
    bands: Sequence[Band] = ROLLING_BANDS,
    width: int = 640,
    height: int = 180,
    most: int = MOST_POINTS,
) -> str:
    """Rates over a player's hands in order (``dashboards.player.prep_rolling``'s rows: ``n`` and, for each of
    ``bands``, a rate with its 95% band), as :func:`dashboards.player.plot_rolling` draws them: each rate a line
    in its shaded band, dashed where the window is not yet full (``row["window"] < window``, up to the first
    full one, so the two parts join), solid after (one hand: a dot). The y axis runs from 0 to the highest band
    end rounded up to a tenth (at most 1), with a grid line and label at 0, half and the top; the x axis from
    hand 1 to the last.
    More than ``most`` rows are thinned to every k-th (the first full window's row and the last kept), so a
    player of 100,000 hands costs a few kilobytes. ``""`` without rows.

    >>> rows = [{"n": 1, "window": 1, "r": 0.0, "lo": 0.0, "hi": 0.5}, {"n": 2, "window": 2, "r": 0.5, "lo": 0.25,
    ...         "hi": 0.75}]
    >>> chart = rolling_lines(rows, window=2, bands=[("r", "lo", "hi", "#000")], width=100, height=60)
    >>> 'points="36.0,42.0 92.0,20.8" fill="none" stroke="#000" stroke-width="2" stroke-dasharray' in chart
    True
    """
    if not rows:
        return ""
    if len(rows) > most:
        rows = [rows[i] for i in thinned(len(rows), window, most)]
    kept = list(rows)
    left, right, top, bottom = 36, 8, 8, 18
    first, last = kept[0]["n"], kept[-1]["n"]
    ends = [r[c] for r in kept for _, low, high, _ in bands for c in (low, high) if r[c] is not None]
    ceiling = min(1.0, max(0.1, math.ceil(round(max(ends, default=0.0) * 10, 9)) / 10))

    def x(n: int) -> float:
        return left + (width - left - right) * ((n - first) / (last - first) if last > first else 0.5)

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - v / ceiling)

    def points(pairs: Sequence[tuple[int, float]]) -> str:
        return " ".join(f"{_num(x(n))},{_num(y(v))}" for n, v in pairs)

    parts = [
        f'<svg class="rolling" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="rates over time">'
    ]
    for v in (0.0, ceiling / 2, ceiling):
        parts.append(
            f'<line x1="{left}" y1="{_num(y(v))}" x2="{width - right}" y2="{_num(y(v))}" stroke="#dddddd"/>'
            f'<text x="{left - 4}" y="{_num(y(v) + 3.5)}" text-anchor="end" font-size="10" fill="#666666">'
            f"{round(v * 100):d}%</text>"
        )
    for n, anchor in ((first, "start"), (last, "end")):
        parts.append(
            f'<text x="{_num(x(n))}" y="{height - 4}" text-anchor="{anchor}" font-size="10" fill="#666666">{n:,}</text>'
        )
    for rate, low, high, colour in bands:
        edge = [r for r in kept if r[low] is not None and r[high] is not None]
        if edge:
            ring = points([(r["n"], r[high]) for r in edge] + [(r["n"], r[low]) for r in reversed(edge)])
            parts.append(f'<polygon points="{ring}" fill="{colour}" fill-opacity="0.18" stroke="none"/>')
        start = [(r["n"], r[rate]) for r in kept if (r["window"] < window or r["n"] == window) and r[rate] is not None]
        full = [(r["n"], r[rate]) for r in kept if r["window"] >= window and r[rate] is not None]
        for line, dash in ((start, ' stroke-dasharray="4 3"'), (full, "")):
            if len(line) > 1:
                parts.append(
                    f'<polyline points="{points(line)}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
                )
        if len(kept) == 1 and kept[0][rate] is not None:  # one hand: a dot, as no line can be drawn
            parts.append(f'<circle cx="{_num(x(first))}" cy="{_num(y(kept[0][rate]))}" r="2.5" fill="{colour}"/>')
    parts.append("</svg>")
    return "".join(parts)
