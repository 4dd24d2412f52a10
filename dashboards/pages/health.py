"""health.html: the warehouse's ingest runs as ``xuezhan check`` judges them (:mod:`pipeline.analytics.health`):
the checked run's verdict and each alert with its level and reason, each table's settlement-error rate run by run,
the trend charts, and every run's figures (:mod:`dashboards.health`)."""

from __future__ import annotations

from typing import Any

import polars as pl

from dashboards import health as health_dash
from dashboards.html import esc, figure, num_cell, sortable_head
from pipeline.analytics.health import Health, Thresholds, changed
from pipeline.report import charts, numbers

LEVEL_TEXT = {
    "ok": "as the runs before it: no alert",
    "warn": "a warning (xuezhan check exits 1)",
    "error": "an error (xuezhan check exits 2)",
}


def body(*, health: Health, figures: list[charts.Chart], scoped: bool) -> list[str]:
    """The page: ``health`` (:func:`pipeline.analytics.health.check`'s value, the last run against every run
    before it), the trend ``figures`` (:data:`dashboards.health.CHARTS`); ``scoped``: the report covers part of
    the hands (the page still covers every run's, and says so)."""
    if health.run is None:
        return [
            '<section class="banner" id="verdict"><h2>No ingest run</h2><p>This warehouse has no ingest run to '
            "check (it was written before runs were recorded, or nothing was ingested): "
            "<code>xuezhan ingest FILES --warehouse W</code> records one per call.</p></section>"
        ]
    return [
        verdict_section(health, scoped),
        tables_section(health),
        *(figure(chart) for chart in figures),
        runs_section(health),
    ]


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value is not None else "?"


def level_badge(level: str) -> str:
    return f'<span class="level {esc(level)}">{esc(level)}</span>'


def verdict_section(health: Health, scoped: bool) -> str:
    """The checked run's level, and each alert: its level, check, subject and reason."""
    run = health.run
    assert run is not None
    level = health.level
    earlier = sum(1 for r in health.runs if r.run_no < run.run_no and r.finished_at is not None)
    t = health.thresholds
    history = (
        f"against the {earlier:,} finished run{'s' if earlier != 1 else ''} before it"
        if earlier
        else (
            "the first run: no earlier run to compare with, so its rates are judged by the ceilings only "
            f"(a warning above {t.warn_above:.0%}, an error above {t.error_above:.0%})"
        )
    )
    rows = "".join(
        f'<tr class="level-{esc(a.level)}"><td>{level_badge(a.level)}</td><td>{esc(a.check)}</td>'
        f"<td>{esc(a.subject)}</td><td>{esc(a.message)}</td></tr>"
        for a in health.alerts
    )
    alerts = (
        '<table class="alerts"><thead><tr><th>level</th><th>check</th><th>what</th><th>reason</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if rows
        else '<p class="verdict ok">No alert: volume, invalid and reject rates, every table\'s settlement errors, '
        "new issue codes and new players are as the runs before.</p>"
    )
    whole = " The runs are the whole warehouse's, whatever hands the rest of the report covers." if scoped else ""
    return (
        f'<section class="banner {"high" if level == "error" else "medium" if level == "warn" else "ok"}" '
        f'id="verdict"><h2>Run {run.run_no:,} ({esc(run.run_id)}): {level_badge(level)} '
        f"{esc(LEVEL_TEXT[level])}</h2><p>The latest ingest run, started {esc(_when(run.started_at))}, "
        f"{esc(history)}: {run.lines_read:,} lines read, {run.stored:,} hands stored.</p>{alerts}"
        f'<p class="note">The same check as <code>xuezhan check --warehouse W</code> {_by(t)}: a rate is an '
        "alert when it rose significantly (exact binomial test "
        f"against the earlier runs pooled, Bonferroni over the rates tested; warn p &lt; {t.warn_p:g}, error "
        f"p &lt; {t.error_p:g}, and at least {t.min_ratio:g}× the earlier rate) or when it is above a ceiling; a "
        f"table or run with fewer than {t.min_hands:,} hands is not tested.{esc(whole)}</p></section>"
    )


def _by(t: Thresholds) -> str:
    """Which thresholds judged the run: the shipped ones, or those of a ``--thresholds`` file, named key by key."""
    diff = changed(t)
    if not diff:
        return "with the shipped thresholds (pipeline/analytics/health.toml)"
    keys = ", ".join(f"{esc(k)} {esc(v)}" for k, v in diff.items())
    return f"with the thresholds given by <code>--thresholds</code> (differing from the shipped ones in: {keys})"


def _rate_cell(k: int, n: int) -> str:
    if not n:
        return '<td class="num" data-v="">–</td>'
    rate = k / n
    return num_cell(rate, f'{numbers.pct(rate, 2)}<br><span class="n">{k:,}/{n:,}</span>')


def tables_section(health: Health) -> str:
    """One row per table, every table with an alert and the first :data:`~dashboards.health.TABLE_ROWS` in all: its
    alert, its settlement-error rate in the checked run and over the runs before it, and the rate in each of the
    latest runs (the chart below draws every run)."""
    every = health_dash.prep_table_trend(health)
    alerted = every.filter(pl.col("level").is_in(["error", "warn"])).height  # they come first
    trend = every.head(max(health_dash.TABLE_ROWS, alerted))
    per_run = health_dash.prep_tables(health).filter(pl.col("table").is_in(trend["table"].implode()))
    last = [r.run_no for r in health.runs][-health_dash.RUN_COLUMNS :]
    cells = {(r["table"], r["run_no"]): r for r in per_run.iter_rows(named=True)}
    heads = (
        ("table", "text"),
        ("alert", "text"),
        ("checked run", "num"),
        ("runs before", "num"),
        *((f"run {n:,}", "num") for n in last),
    )
    head = sortable_head(heads)
    order = {"error": 3, "warn": 2, "ok": 1, health_dash.UNTESTED: 0}
    rows = []
    for r in trend.iter_rows(named=True):
        per = "".join(
            _rate_cell(c["settle_errors"], c["hands"]) if (c := cells.get((r["table"], n))) else _rate_cell(0, 0)
            for n in last
        )
        rows.append(
            f'<tr class="level-{esc(r["level"])}">'
            f'<td class="id" data-v="{esc(r["table"])}">{esc(r["table"])}</td>'
            f'<td data-v="{order[r["level"]]}">{level_badge(r["level"])}</td>'
            + _rate_cell(r["settle_errors"], r["hands"])
            + _rate_cell(r["earlier_errors"], r["earlier_hands"])
            + per
            + "</tr>"
        )
    shown = f"the latest {len(last)} runs" if len(last) < len(health.runs) else "every run"
    listed = (
        f"the first {trend.height:,} of {every.height:,} tables (every table, run by run: "
        "<code>xuezhan check --format csv</code>)"
        if trend.height < every.height
        else f"{every.height:,} tables"
    )
    return (
        f'<section id="tables"><h2>Settlement errors per table, run by run</h2><p>{listed}; '
        f"{esc(shown)} one by one (the chart below draws every run). The tables with an alert first, then the "
        'highest rate in the checked run. Click a heading to sort.</p><div class="wide">'
        f'<table class="sortable trend"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
        '<p class="note">Each cell: the share of the table\'s hands in that run with a scoring or settlement error '
        "(an error-severity SCORE_* or SETTLE_* issue), and the hands counted; runs before: every finished run "
        f"before the checked one, pooled (what the check compares with). {esc(health_dash.NO_TABLE)}: hands whose "
        "record names no table; untested: fewer than "
        f"{health.thresholds.min_hands:,} hands in the checked run (the check does not test the table).</p></section>"
    )


def runs_section(health: Health) -> str:
    """Every run's figures, the latest first (the last :data:`dashboards.health.RUNS_SHOWN`)."""
    runs = health_dash.prep_runs(health).sort("run_no", descending=True)
    shown = runs.head(health_dash.RUNS_SHOWN)
    heads = ("run", "started", "lines read", "stored", "invalid", "rejected", "settlement errors", "new players")
    head = "".join(f"<th>{esc(h)}</th>" for h in (*heads, "new issue codes", "state"))
    rows = []
    for r in shown.iter_rows(named=True):
        state = "checked" if r["checked"] else ""
        done = "complete" if r["complete"] else '<b class="flag">incomplete</b>'
        rows.append(
            f'<tr class="{"flagged" if r["checked"] else ""}"><td class="num">{r["run_no"]:,}</td>'
            f"<td>{esc(_when(r['started_at']))}</td>"
            f'<td class="num">{r["lines_read"]:,}</td><td class="num">{r["stored"]:,}</td>'
            + _pair(r["invalid"], r["invalid_rate"])
            + _pair(r["rejects"], r["reject_rate"])
            + _pair(r["settle_errors"], r["settle_rate"])
            + f'<td class="num">{r["new_players"]:,}</td><td>{esc(", ".join(r["new_codes"]) or "–")}</td>'
            f"<td>{done}{'<br>' + esc(state) if state else ''}</td></tr>"
        )
    more = (
        f" The latest {shown.height:,} of {runs.height:,} runs; every run: <code>xuezhan check --format csv</code>."
        if shown.height < runs.height
        else ""
    )
    return (
        f'<section id="runs"><h2>Every ingest run</h2><div class="wide"><table class="runs"><thead><tr>{head}</tr>'
        f'</thead><tbody>{"".join(rows)}</tbody></table></div><p class="note">The latest run first, the checked one '
        "shaded. Invalid: of the hands stored; rejected: of the lines read; settlement errors: hands with a scoring "
        "or settlement error, of those stored; new: players and issue codes no earlier run had."
        + more
        + "</p></section>"
    )


def _pair(count: int, rate: float | None) -> str:
    share = f'<br><span class="n">{numbers.pct(rate, 2)}</span>' if rate is not None else ""
    return f'<td class="num">{count:,}{share}</td>'
