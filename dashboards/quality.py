"""The data-quality dashboard: what the validator found in the stored records, and which input lines were
not stored at all (rejects), by code.
"""

from __future__ import annotations

import duckdb
import polars as pl
from matplotlib.axes import Axes

from dashboards import ChartSpec, run_sql
from pipeline.analytics import queries
from pipeline.analytics.stats import wilson
from pipeline.audit.deals import commitments
from pipeline.codes import CODES
from pipeline.report import charts, numbers


def meaning(code: str) -> str:
    """What a code means, from the issue-code catalogue (which lists the INGEST_* reject codes too), or ``''``."""
    entry = CODES.get(code)
    return entry.meaning if entry else ""


def prep_summary(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The warehouse in numbers, one row per figure: ``figure``, ``value``.

    Figures: ingest runs, lines read, stored hands, valid hands, replayed hands, hands with issues, issues,
    rejects, duplicates skipped, conflicts; where records carry wall commitments, how many, how many walls they
    proved and how many fail.
    """
    counts = queries.run(con, "warehouse_counts").row(0, named=True)
    runs = run_sql(con, "quality_summary").row(0, named=True)
    issues = queries.issues_by_code(con)
    figures = [
        ("ingest runs", runs["runs"]),
        ("lines read", runs["lines_read"]),
        ("stored hands", counts["hands"]),
        ("valid hands", counts["valid_hands"]),
        ("replayed hands (count in the statistics)", counts["replayed_hands"]),
        ("hands with an issue", runs["hands_with_issues"]),
        ("issues", int(issues["issues"].sum() or 0)),
        ("rejected lines", counts["rejects"]),
        ("duplicate lines skipped", runs["duplicates"]),
        ("conflicting hand_ids", runs["conflicts"]),
    ]
    walls = commitments(con)
    if walls.hands:  # only where some record carries a wall commitment (the stacked-deal page has the detail)
        figures += [
            ("hands with a wall commitment", walls.hands),
            ("walls proved by their commitment", walls.counts.get("verified", 0)),
            ("walls or seeds that fail their commitment", walls.failed),
        ]
    return pl.DataFrame(
        {"figure": [f for f, _ in figures], "value": [int(v or 0) for _, v in figures]},
        schema={"figure": pl.String, "value": pl.Int64},
    )


def prep_issues_by_code(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Validator findings by code, most frequent first.

    Columns: ``code``, ``severity``, ``issues``, ``hands`` (hands with the code), ``n`` (stored hands),
    ``share`` (of stored hands), ``ci_low``, ``ci_high`` (Wilson 95%), ``meaning``.
    """
    df = queries.issues_by_code(con)
    n = int(queries.run(con, "warehouse_counts")["hands"][0] or 0)
    rows = []
    for r in df.iter_rows(named=True):
        low, high = wilson(int(r["hands"]), n)
        rows.append(
            {
                "code": r["code"],
                "severity": r["severity"],
                "issues": r["issues"],
                "hands": r["hands"],
                "n": n,
                "share": r["hands"] / n if n else None,
                "ci_low": low,
                "ci_high": high,
                "meaning": meaning(r["code"]),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "code": pl.String,
            "severity": pl.String,
            "issues": pl.Int64,
            "hands": pl.Int64,
            "n": pl.Int64,
            "share": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "meaning": pl.String,
        },
    )


def plot_issues_by_code(df: pl.DataFrame, ax: Axes) -> None:
    n = int(df["n"][0]) if df.height else 0
    title = "Validator issues by code" + (f", n = {n:,} stored hands" if n else "")
    if not df.height:
        charts.empty(ax, title, "no issues: every stored record is valid")
        return
    rows = df.reverse()  # most frequent on top
    labels = [
        f"{i:,} in {h:,} hands ({numbers.pct(s, 2)})"
        for i, h, s in zip(rows["issues"], rows["hands"], rows["share"], strict=True)
    ]
    charts.severity_bars(ax, rows, "issues", labels)
    ax.set_title(title)
    ax.set_xlabel("issues (label: issues, hands with the code, share of stored hands)")
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.35, y=0.02)


def prep_rejects_by_code(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Rejected input lines by code, most frequent first.

    Columns: ``code``, ``rejects``, ``bytes``, ``n`` (all rejects), ``share`` (of rejects), ``meaning``.
    """
    df = run_sql(con, "rejects_by_code")
    n = int(df["rejects"].sum()) if df.height else 0
    return pl.DataFrame(
        {
            "code": df["code"].to_list(),
            "rejects": df["rejects"].cast(pl.Int64).to_list(),
            "bytes": df["bytes"].cast(pl.Int64).to_list(),
        },
        schema={"code": pl.String, "rejects": pl.Int64, "bytes": pl.Int64},
    ).with_columns(
        pl.lit(n, dtype=pl.Int64).alias("n"),
        (pl.col("rejects") / n if n else pl.lit(None, dtype=pl.Float64)).alias("share"),
        pl.Series("meaning", [meaning(c) for c in df["code"].to_list()], dtype=pl.String),
    )


def plot_rejects_by_code(df: pl.DataFrame, ax: Axes) -> None:
    n = int(df["n"][0]) if df.height else 0
    title = f"Rejected input lines by code, n = {n:,} lines"
    if not df.height:
        charts.empty(ax, "Rejected input lines by code", "no rejects: every input line was a record")
        return
    rows = df.reverse()
    bars = ax.barh(rows["code"].to_list(), rows["rejects"].to_list(), color=charts.SUBJECT, height=0.65)
    ax.bar_label(
        bars,
        labels=[
            f"{r:,} ({numbers.pct(s)}), {b:,} bytes"
            for r, s, b in zip(rows["rejects"], rows["share"], rows["bytes"], strict=True)
        ],
        fontsize=8,
        padding=3,
    )
    ax.set_title(title)
    ax.set_xlabel("lines not stored as records (label: lines, share of rejects, bytes)")
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.35, y=0.02)


CHARTS = (
    ChartSpec(
        "issues_by_code",
        prep_issues_by_code,
        plot_issues_by_code,
        "What the validator found in the stored records, by issue code (schemas/ISSUE_CODES.md).",
        figures=("issues_by_code",),
        tall=True,
    ),
    ChartSpec(
        "rejects_by_code",
        prep_rejects_by_code,
        plot_rejects_by_code,
        "Input lines that are not stored records, by code.",
        tall=True,
    ),
)
