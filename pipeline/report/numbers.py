"""Numbers as labels, for the charts and the pages alike: shares as percentages (:func:`pct`), counts and
figures (:func:`num`), intervals (:func:`interval`). Plain Python: the HTML layer writes with them without
loading matplotlib (:mod:`pipeline.report.charts` draws with the same ones)."""

from __future__ import annotations

from collections.abc import Callable


def pct(x: float | None, digits: int = 1) -> str:
    """``0.1234`` → ``'12.3%'``; ``None`` → ``'–'``.

    >>> pct(0.1234), pct(None)
    ('12.3%', '–')
    """
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def num(x: float | None, digits: int = 2) -> str:
    """A number for a label: integers without decimals, ``None`` as a dash.

    >>> num(3), num(1.23456), num(-0.5, 1), num(None)
    ('3', '1.23', '-0.5', '–')
    """
    if x is None:
        return "–"
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.{digits}f}"


def interval(low: float | None, high: float | None, fmt: Callable[[float | None], str] = num) -> str:
    """``'[0.12, 0.34]'``, or ``''`` when the interval is unknown."""
    if low is None or high is None:
        return ""
    return f"[{fmt(low)}, {fmt(high)}]"
