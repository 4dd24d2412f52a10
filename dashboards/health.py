"""The health dashboard: the warehouse's ingest runs as ``xuezhan check`` sees them, arranged for
the report's health page: every run's figures, each table's settlement-error rate run by run, and two charts of the
trend.

The figures and the alerts are :func:`pipeline.analytics.health.check`'s (its :class:`~pipeline.analytics.health.
Health` value, computed once by :mod:`dashboards.site`): nothing here counts or tests anything again, it only lays
the runs out as frames (``prep_*(health)``) and draws them (``plot_*``).
"""

from __future__ import annotations

from collections.abc import Callable
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
TABLE_ROWS = 100  # the page's table lists these first tables of prep_table_trend, and every table with an alert
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


# The last check's frames, by the check they were built from (the health page asks for each twice: its table and
# its chart; a frame is never changed in place, so sharing it is safe). One check held at a time.
_LAST: dict[str, tuple[Health, pl.DataFrame]] = {}


def _once(name: str, health: Health, build: Callable[[Health], pl.DataFrame]) -> pl.DataFrame:
    """``build(health)``, built once per check: asked again for the same ``health`` object, the same frame."""
    held = _LAST.get(name)
    if held is not None and held[0] is health:
        return held[1]
    frame = build(health)
    _LAST[name] = (health, frame)
    return frame


def prep_tables(health: Health) -> pl.DataFrame:
    """Each table's hands and hands with a scoring or settlement error, run by run (a table a run stored no hand
    of has no row for it): the rate :func:`~pipeline.analytics.health.check` tests per table.

    Columns: ``table`` (:data:`NO_TABLE` for the hands without one), ``run_no``, ``hands``, ``settle_errors``,
    ``rate``; by table, then run. Built column by column: a warehouse can hold hundreds of thousands of tables;
    once per check (:func:`_once`)."""
    return _once("tables", health, _tables)


def _tables(health: Health) -> pl.DataFrame:
    table: list[str] = []
    run_no: list[int] = []
    hands: list[int] = []
    errors: list[int] = []
    for r in health.runs:
        table.extend(table_name(t) for t in r.tables)
        run_no.extend([r.run_no] * len(r.tables))
        hands.extend(h for h, _ in r.tables.values())
        errors.extend(e for _, e in r.tables.values())
    columns = {"table": table, "run_no": run_no, "hands": hands, "settle_errors": errors}
    schema = {k: v for k, v in _TABLES_SCHEMA.items() if k != "rate"}
    return (
        pl.DataFrame(columns, schema=schema)
        .with_columns(_rate("settle_errors", "hands").alias("rate"))
        .select(list(_TABLES_SCHEMA))
        .sort("table", "run_no")
    )


def _rate(errors: str, hands: str) -> pl.Expr:
    """``errors / hands``, null where ``hands`` is 0 (as :func:`_share`)."""
    return pl.when(pl.col(hands) > 0).then(pl.col(errors) / pl.col(hands)).otherwise(None).cast(pl.Float64)


def table_alerts(health: Health) -> dict[str, Alert]:
    """Each table's alert in the checked run (by :func:`table_name`), where it has one."""
    tables = health.run.tables if health.run is not None else {}
    by_subject = {a.subject: a for a in health.alerts if a.check == "rate"}
    return {table_name(t): by_subject[table_subject(t)] for t in tables if table_subject(t) in by_subject}


_LEVEL_ORDER = {"error": 0, "warn": 1, "ok": 2, UNTESTED: 3}  # the order of prep_table_trend's rows


def prep_table_trend(health: Health) -> pl.DataFrame:
    """One row per table that any run stored hands of: its figures in the checked run, its pooled rate over the
    runs before it, and its alert (``level``: ok, warn, error; :data:`UNTESTED` where the checked run stored fewer
    hands of it than the check tests). The tables with an alert first, then by the checked run's rate, highest
    first, then by its hands, most first, then by name.

    Columns: ``table``, ``level``, ``hands`` (in the checked run), ``settle_errors``, ``rate``, ``earlier_hands``,
    ``earlier_errors``, ``earlier_rate`` (the finished runs before the checked one, pooled), ``runs`` (runs with
    hands of the table). One vectorised pass over :func:`prep_tables` (no loop per table), once per check."""
    return _once("trend", health, _table_trend)


def _table_trend(health: Health) -> pl.DataFrame:
    this = health.run
    checked = this.run_no if this is not None else -1
    earlier = [r.run_no for r in health.runs if r.run_no < checked and r.finished_at is not None]  # as check()'s
    now, before = pl.col("run_no") == checked, pl.col("run_no").is_in(earlier)
    alerts = pl.DataFrame(
        [(name, a.level) for name, a in table_alerts(health).items()],
        schema={"table": pl.String, "alert": pl.String},
        orient="row",
    )
    level = (
        pl.when(pl.col("alert").is_not_null())
        .then(pl.col("alert"))
        .when(pl.col("hands") >= health.thresholds.min_hands)
        .then(pl.lit("ok"))
        .otherwise(pl.lit(UNTESTED))
    )
    trend = (
        prep_tables(health)
        .group_by("table")
        .agg(
            pl.col("hands").filter(now).sum().alias("hands"),
            pl.col("settle_errors").filter(now).sum().alias("settle_errors"),
            pl.col("hands").filter(before).sum().alias("earlier_hands"),
            pl.col("settle_errors").filter(before).sum().alias("earlier_errors"),
            pl.len().cast(pl.Int64).alias("runs"),
        )
        .join(alerts, on="table", how="left")
        .with_columns(
            level.alias("level"),
            _rate("settle_errors", "hands").alias("rate"),
            _rate("earlier_errors", "earlier_hands").alias("earlier_rate"),
        )
    )
    return trend.sort(
        pl.col("level").replace_strict(_LEVEL_ORDER, return_dtype=pl.Int8),
        pl.col("rate").fill_null(0.0),
        "hands",
        "table",
        descending=[False, True, True, False],
    ).select(
        pl.col("table").cast(pl.String),
        pl.col("level").cast(pl.String),
        *(pl.col(c).cast(pl.Int64) for c in ("hands", "settle_errors")),
        "rate",
        *(pl.col(c).cast(pl.Int64) for c in ("earlier_hands", "earlier_errors")),
        "earlier_rate",
        "runs",
    )


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
