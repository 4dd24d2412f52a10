"""quality.html: the warehouse's counts, the validator's issues and the rejected lines by code, each with its
chart (:mod:`dashboards.quality`)."""

from __future__ import annotations

import polars as pl

from dashboards.html import esc, figure, fmt, table_section
from pipeline.analytics.scope import WHOLE, Scope
from pipeline.report import charts, numbers


def body(
    *,
    scope: Scope,
    summary: pl.DataFrame,
    issues: pl.DataFrame,
    issues_chart: charts.Chart,
    rejects: pl.DataFrame,
    rejects_chart: charts.Chart,
) -> list[str]:
    """The page: under a filter (``scope``) which figures it cannot apply to; the warehouse's ``summary``
    (:func:`dashboards.quality.prep_summary`); the ``issues`` and the ``rejects`` by code, each under its chart."""
    return [
        *([whole_note(scope)] if scope.filters else []),
        table_section("The warehouse", summary, {"figure": "figure", "value": "count"}),
        figure(issues_chart),
        codes_table("Issues by code", issues, ("code", "severity", "issues", "hands", "share"), "issues"),
        figure(rejects_chart),
        codes_table("Rejects by code", rejects, ("code", "rejects", "bytes", "share"), "rejects"),
    ]


def codes_table(title: str, df: pl.DataFrame, columns: tuple[str, ...], anchor: str) -> str:
    if not df.height:
        return f'<section id="{anchor}"><h2>{esc(title)}</h2><p class="note">None.</p></section>'
    head = "".join(f"<th>{esc(c)}</th>" for c in (*columns, "meaning"))
    rows = []
    for r in df.iter_rows(named=True):
        cells = []
        for c in columns:
            v = r[c]
            text = numbers.pct(v, 2) if c == "share" else fmt(v)
            cells.append(f'<td class="{"num" if isinstance(v, int | float) else ""}">{esc(text)}</td>')
        cells.append(f'<td class="def">{esc(r["meaning"])}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    share_of = "stored hands with the code" if "hands" in columns else "all rejected lines"
    return (
        f'<section id="{anchor}"><h2>{esc(title)}</h2><table><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table><p class="note">share: of {share_of}.</p></section>'
    )


def whole_note(scope: Scope) -> str:
    """The quality page's first words under a filter: which of its figures the filter cannot apply to."""
    return (
        '<section class="banner scope" id="scope"><p>The stored hands, their issues and the replayed hands here are '
        f"the {esc(scope.describe())}. The rejected lines, and the ingest runs with their lines read, are the "
        "whole warehouse's: a line ingest rejected stored no hand, so it has no table, player or time to filter by "
        f"({', '.join(WHOLE)}).</p></section>"
    )
