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
