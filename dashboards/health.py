"""The health dashboard: the warehouse's ingest runs as ``xuezhan check`` sees them, arranged for
the report's health page: every run's figures, each table's settlement-error rate run by run, and two charts of the
trend.

The figures and the alerts are :func:`pipeline.analytics.health.check`'s (its :class:`~pipeline.analytics.health.
Health` value, computed once by :mod:`dashboards.site`): nothing here counts or tests anything again, it only lays
the runs out as frames (``prep_*(health)``) and draws them (``plot_*``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from dashboards import ChartSpec
from pipeline.analytics import queries
from pipeline.analytics.health import Alert, Health, Thresholds, check, table_subject
from pipeline.analytics.scope import Scope
from pipeline.report import charts

RUNS_SHOWN = 30  # the runs of the page's table, the latest first (every run: xuezhan check --format csv)
RUN_COLUMNS = 6  # the latest runs each table's row shows one by one (the chart draws every run)
TABLE_LINES = 6  # the tables the chart draws a line for (the highest rates in the checked run), beside the whole
NO_TABLE = "(no table)"  # the hands whose record names no table
UNTESTED = "untested"  # a table with fewer hands in the checked run than the check tests (Thresholds.min_hands)

_RUNS_SCHEMA: dict[str, Any] = {
    "run_no": pl.Int64,
    "run_id": pl.String,
    "started_at": pl.Datetime(time_zone="UTC"),
    "complete": pl.Boolean,
    "checked": pl.Boolean,
    "lines_read": pl.Int64,
    "stored": pl.Int64,
    "invalid": pl.Int64,
    "invalid_rate": pl.Float64,
    "rejects": pl.Int64,
    "reject_rate": pl.Float64,
    "settle_errors": pl.Int64,
    "settle_rate": pl.Float64,
    "new_players": pl.Int64,
    "new_codes": pl.List(pl.String),
}
_TABLES_SCHEMA: dict[str, Any] = {
    "table": pl.String,
    "run_no": pl.Int64,
    "hands": pl.Int64,
    "settle_errors": pl.Int64,
    "rate": pl.Float64,
}


def check_of(
    warehouse_dir: str | Path, con: duckdb.DuckDBPyConnection, scope: Scope, thresholds: Thresholds | None
) -> Health:
    """``xuezhan check`` of the warehouse's last ingest run (by ``thresholds``, default the shipped ones): on the
    report's connection ``con``, or, where the report's ``scope`` leaves hands out, on one of the whole warehouse
    (a run's figures are all its hands')."""
    if not scope.filters:
        return check(con, thresholds)
    with queries.connect(warehouse_dir, warn=False) as whole:
        return check(whole, thresholds)


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def prep_runs(health: Health) -> pl.DataFrame:
    """Every ingest run's figures (:class:`~pipeline.analytics.health.RunFigures`), in the order they started, with
    their rates: invalid hands of those stored, rejected lines of those read, hands with a scoring or settlement
    error of those stored. ``checked``: the run the alerts are about; ``complete``: the run finished.

    Columns: ``run_no``, ``run_id``, ``started_at``, ``complete``, ``checked``, ``lines_read``, ``stored``,
    ``invalid``, ``invalid_rate``, ``rejects``, ``reject_rate``, ``settle_errors``, ``settle_rate``,
    ``new_players``, ``new_codes``."""
    checked = health.run.run_id if health.run is not None else None
    rows = [
        {
            "run_no": r.run_no,
            "run_id": r.run_id,
            "started_at": r.started_at,
            "complete": r.finished_at is not None,
            "checked": r.run_id == checked,
            "lines_read": r.lines_read,
            "stored": r.stored,
            "invalid": r.invalid,
            "invalid_rate": _share(r.invalid, r.stored),
            "rejects": r.rejects,
            "reject_rate": _share(r.rejects, r.lines_read),
            "settle_errors": r.settle_errors,
            "settle_rate": _share(r.settle_errors, r.stored),
            "new_players": r.new_players,
            "new_codes": list(r.new_codes),
        }
        for r in health.runs
    ]
    return pl.DataFrame(rows, schema=_RUNS_SCHEMA)


def table_name(table: str | None) -> str:
    return NO_TABLE if table is None else table


def prep_tables(health: Health) -> pl.DataFrame:
    """Each table's hands and hands with a scoring or settlement error, run by run (a table a run stored no hand
    of has no row for it): the rate :func:`~pipeline.analytics.health.check` tests per table.

    Columns: ``table`` (:data:`NO_TABLE` for the hands without one), ``run_no``, ``hands``, ``settle_errors``,
    ``rate``; by table, then run."""
    rows = [
        {"table": table_name(t), "run_no": r.run_no, "hands": h, "settle_errors": e, "rate": _share(e, h)}
        for r in health.runs
        for t, (h, e) in r.tables.items()
    ]
    return pl.DataFrame(rows, schema=_TABLES_SCHEMA).sort("table", "run_no")


def table_alerts(health: Health) -> dict[str, Alert]:
    """Each table's alert in the checked run (by :func:`table_name`), where it has one."""
    tables = health.run.tables if health.run is not None else {}
    by_subject = {a.subject: a for a in health.alerts if a.check == "rate"}
    return {table_name(t): by_subject[table_subject(t)] for t in tables if table_subject(t) in by_subject}


def prep_table_trend(health: Health) -> pl.DataFrame:
    """One row per table that any run stored hands of: its figures in the checked run, its pooled rate over the
    runs before it, and its alert (``level``: ok, warn, error; :data:`UNTESTED` where the checked run stored fewer
    hands of it than the check tests). The tables with an alert first, then by the checked run's rate, highest
    first.

    Columns: ``table``, ``level``, ``hands`` (in the checked run), ``settle_errors``, ``rate``, ``earlier_hands``,
    ``earlier_errors``, ``earlier_rate`` (the finished runs before the checked one, pooled), ``runs`` (runs with
    hands of the table)."""
    tables = prep_tables(health)
    this = health.run
    alerts = table_alerts(health)
    checked = this.run_no if this is not None else -1
    earlier = [r.run_no for r in health.runs if r.run_no < checked and r.finished_at is not None]  # as check()'s
    rows = []
    for (name,), rows_of in tables.partition_by("table", as_dict=True, maintain_order=True).items():
        now = rows_of.filter(pl.col("run_no") == checked)
        before = rows_of.filter(pl.col("run_no").is_in(earlier))
        hands, errors = int(now["hands"].sum()), int(now["settle_errors"].sum())
        eh, ee = int(before["hands"].sum()), int(before["settle_errors"].sum())
        alert = alerts.get(str(name))
        level = alert.level if alert is not None else "ok" if hands >= health.thresholds.min_hands else UNTESTED
        rows.append(
            {
                "table": name,
                "level": level,
                "hands": hands,
                "settle_errors": errors,
                "rate": _share(errors, hands),
                "earlier_hands": eh,
                "earlier_errors": ee,
                "earlier_rate": _share(ee, eh),
                "runs": rows_of.height,
            }
        )
    order = {"error": 0, "warn": 1, "ok": 2, UNTESTED: 3}
    rows.sort(key=lambda r: (order[r["level"]], -(r["rate"] or 0.0), -r["hands"], r["table"]))
    schema = {
        "table": pl.String,
        "level": pl.String,
        "hands": pl.Int64,
        "settle_errors": pl.Int64,
        "rate": pl.Float64,
        "earlier_hands": pl.Int64,
        "earlier_errors": pl.Int64,
        "earlier_rate": pl.Float64,
        "runs": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema)


# ---------------------------------------------------------------------------------------------- charts
def prep_settle_chart(health: Health) -> pl.DataFrame:
    """The lines of the settlement-error chart: the whole run's rate (``table`` null: every table) and the
    :data:`TABLE_LINES` tables first in :func:`prep_table_trend`'s order, run by run. Columns: ``table``,
    ``run_no``, ``hands``, ``settle_errors``, ``rate``."""
    runs = prep_runs(health)
    whole = runs.select(
        pl.lit(None, dtype=pl.String).alias("table"),
        "run_no",
        pl.col("stored").alias("hands"),
        "settle_errors",
        pl.col("settle_rate").alias("rate"),
    )
    chosen = prep_table_trend(health)["table"].head(TABLE_LINES).to_list()
    tables = prep_tables(health).filter(pl.col("table").is_in(chosen))
    return pl.concat([whole, tables.select(whole.columns)])


def plot_settle_chart(df: pl.DataFrame, ax: Axes) -> None:
    title = "Hands with a scoring or settlement error, by ingest run"
    if not df.height:
        charts.empty(ax, title, "no ingest run")
        return
    f = charts.fonts()
    for (name,), rows in df.partition_by("table", as_dict=True, maintain_order=True).items():
        rows = rows.sort("run_no")
        whole = name is None
        hands = int(rows["hands"].sum())
        ax.plot(
            rows["run_no"].to_list(),
            [100 * (r or 0.0) for r in rows["rate"].to_list()],
            marker="o",
            linewidth=2.5 if whole else 1.2,
            color=charts.POPULATION if whole else None,
            label=charts.legend_label(f"{'all tables' if whole else f.safe(str(name))} (n={hands:,})"),
        )
    ax.set_title(title)
    ax.set_xlabel("ingest run (in the order they started)")
    ax.set_ylabel("hands with an error (%)")
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", fontsize=8)


def prep_volume_chart(health: Health) -> pl.DataFrame:
    """Hands stored, invalid hands and rejected lines per run. Columns: ``run_no``, ``stored``, ``invalid``,
    ``rejects``, ``checked``."""
    return prep_runs(health).select("run_no", "stored", "invalid", "rejects", "checked")


def plot_volume_chart(df: pl.DataFrame, ax: Axes) -> None:
    title = "Hands stored by each ingest run"
    if not df.height:
        charts.empty(ax, title, "no ingest run")
        return
    x = df["run_no"].to_list()
    colours = [charts.SUBJECT if c else charts.NEUTRAL for c in df["checked"].to_list()]
    ax.bar(x, df["stored"].to_list(), color=colours, label="hands stored (the checked run in red)")
    ax.plot(x, df["invalid"].to_list(), marker="o", color=charts.WARNING, label="of them invalid")
    ax.plot(x, df["rejects"].to_list(), marker="s", color=charts.POPULATION, label="lines rejected")
    ax.set_title(title)
    ax.set_xlabel("ingest run (in the order they started)")
    ax.set_ylabel("hands / lines")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", fontsize=8)


CHARTS = (
    ChartSpec(
        "settlement_errors",
        prep_settle_chart,
        plot_settle_chart,
        "The share of each run's hands with a scoring or settlement error (money paid other than the rules give): "
        f"over the whole run, and at the {TABLE_LINES} tables first in the table below (alerts, then the highest "
        "rates in the checked run).",
    ),
    ChartSpec(
        "volume",
        prep_volume_chart,
        plot_volume_chart,
        "Hands each ingest run stored, the invalid among them, and the input lines it rejected.",
    ),
)
