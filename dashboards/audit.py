"""The audit dashboard: what the scoring and rule audit (:mod:`pipeline.audit.scoring`) found, by money.

Charts: money at stake by issue code, findings by month (share of stored hands with a finding), players by
money involved; the page's table of the top findings is built from :func:`prep_top_findings`.

The data steps take the audit's result (an :class:`~pipeline.audit.scoring.Audit`, computed once per report)
rather than a connection: the findings and the money they put at stake are the audit's; this module only
arranges them. Money follows the audit: for a scoring or settlement difference, the points it moves, each
wrong payment counted once (the fan and points findings behind it carry 0, ``reason_of`` naming the payment's
code); for a rule violation, the points the source system settled in that hand — so a hand with two violations
counts its stake twice, once per finding. Where the findings' hands have different bases (a majsoul room at
base 1,000 beside rooms at base 1), money is added up in bases (points ÷ the hand's base) and every frame says
so (``unit``: ``points`` or ``bases``; ``bases`` beside ``money``).
"""

from __future__ import annotations

import duckdb
import polars as pl
from matplotlib.axes import Axes

from dashboards import ChartSpec, as_int, run_sql
from dashboards.quality import meaning
from pipeline.analytics.scales import amount
from pipeline.analytics.stats import wilson
from pipeline.audit.scoring import IN_BASES, Audit
from pipeline.report import charts

MAX_PLAYERS = 20  # bars of the players chart
TOP_FINDINGS = 30  # rows of the page's table
NO_MONTH = "no date"  # the month of a hand without played_at


def _totals(findings: pl.DataFrame) -> tuple[int, int]:
    """(findings, distinct hands with a finding)."""
    return findings.height, findings["hand_id"].n_unique() if findings.height else 0


def _money() -> list[pl.Expr]:
    """The money of a group of findings: ``money`` (points) and ``bases`` (each finding's points ÷ its base)."""
    return [
        pl.col("money").sum().cast(pl.Int64).alias("money"),
        IN_BASES.sum().cast(pl.Float64).alias("bases"),
    ]


def unit(result: Audit) -> str:
    """What the charts add money up in: ``points`` where the findings' hands share one base, else ``bases``."""
    return "bases" if result.mixed else "points"


def _shown(df: pl.DataFrame) -> str:
    """The column a chart of ``df`` draws: the money in its unit."""
    return "bases" if df.height and df["unit"][0] == "bases" else "money"


def _label(df: pl.DataFrame, row: dict[str, object]) -> str:
    """A bar's money, in the frame's unit: ``1,200 pts`` or ``3.5 bases``."""
    if _shown(df) == "bases":
        return f"{amount(float(row['bases'] or 0))} bases"  # type: ignore[arg-type]
    return f"{as_int(row['money']):,} pts"


def _axis(df: pl.DataFrame, what: str) -> str:
    """The money axis' label: in points, or in bases where the findings' hands have several bases."""
    if _shown(df) == "bases":
        return (
            f"money at stake in bases (points ÷ each hand's base: the hands have several), summed over {what} "
            "(label: bases, findings, hands)"
        )
    return f"points at stake, summed over {what} (label: points, findings, hands)"


# ---------------------------------------------------------------------------------------------- by code
def prep_money_by_code(result: Audit) -> pl.DataFrame:
    """Money at stake per issue code, most money first (then most findings, then code).

    Columns: ``code``, ``severity``, ``findings``, ``hands`` (distinct hands with the code), ``money``
    (points, summed over the code's findings), ``bases`` (the same in bases), ``share`` (of all money at stake,
    in bases; null when there is none), ``n_findings``, ``n_hands`` (all findings, all hands with a finding),
    ``unit`` (:func:`unit`: what the chart draws).
    """
    f = result.findings
    n_findings, n_hands = _totals(f)
    total = float(f.select(IN_BASES.sum()).item() or 0.0) if f.height else 0.0
    grouped = (
        f.group_by("code")
        .agg(
            pl.col("severity").first(),
            pl.len().cast(pl.Int64).alias("findings"),
            pl.col("hand_id").n_unique().cast(pl.Int64).alias("hands"),
            *_money(),
        )
        .sort(["bases", "money", "findings", "code"], descending=[True, True, True, False])
    )
    return grouped.select(
        pl.col("code").cast(pl.String),
        pl.col("severity").cast(pl.String),
        "findings",
        "hands",
        "money",
        "bases",
        (pl.col("bases") / total if total else pl.lit(None, dtype=pl.Float64)).alias("share"),
        pl.lit(n_findings, dtype=pl.Int64).alias("n_findings"),
        pl.lit(n_hands, dtype=pl.Int64).alias("n_hands"),
        pl.lit(unit(result), dtype=pl.String).alias("unit"),
    )


def plot_money_by_code(df: pl.DataFrame, ax: Axes) -> None:
    n, hands = (int(df["n_findings"][0]), int(df["n_hands"][0])) if df.height else (0, 0)
    title = f"Money at stake by issue code, n = {n:,} findings in {hands:,} hands"
    if not df.height:
        charts.empty(ax, title, "no findings: every stored hand replays and settles as the rules say")
        return
    rows = df.reverse()  # most money on top
    labels = [f"{_label(df, r)} ({r['findings']:,} findings, {r['hands']:,} hands)" for r in rows.iter_rows(named=True)]
    charts.severity_bars(ax, rows, _shown(df), labels)
    ax.set_title(title)
    ax.set_xlabel(_axis(df, "the code's findings"))
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.4, y=0.02)


# ---------------------------------------------------------------------------------------------- by month
def prep_findings_by_month(con: duckdb.DuckDBPyConnection, result: Audit) -> pl.DataFrame:
    """Per month of play: the stored hands, the findings, the hands with a finding and their share of the
    month's stored hands (Wilson 95%), and the money at stake; every month with a stored hand, oldest first
    (hands without a date last, as ``"no date"``).

    Columns: ``month``, ``hands``, ``findings``, ``hands_with_findings``, ``money``, ``bases``, ``share``,
    ``ci_low``, ``ci_high``, ``n`` (all stored hands), ``n_findings``, ``unit`` (:func:`unit`).
    """
    stored = run_sql(con, "hands_by_month")
    per = (
        result.findings.group_by("month")
        .agg(
            pl.len().cast(pl.Int64).alias("findings"),
            pl.col("hand_id").n_unique().cast(pl.Int64).alias("hands_with_findings"),
            *_money(),
        )
        .with_columns(pl.col("month").cast(pl.String))
    )
    got = {m: r for m, *r in per.iter_rows()}
    months = [m for m in stored["month"].to_list()] + [m for m in got if m not in set(stored["month"])]
    hands = dict(zip(stored["month"].to_list(), stored["hands"].to_list(), strict=True))
    n = as_int(stored["hands"].sum())
    rows = []
    for month in sorted(months, key=lambda m: (m is None, m or "")):
        findings, with_findings, money, bases = got.get(month, (0, 0, 0, 0.0))
        den = int(hands.get(month, 0))
        low, high = wilson(with_findings, den)
        rows.append(
            {
                "month": NO_MONTH if month is None else month,
                "hands": den,
                "findings": findings,
                "hands_with_findings": with_findings,
                "money": money,
                "bases": bases,
                "share": with_findings / den if den else None,
                "ci_low": low,
                "ci_high": high,
            }
        )
    schema = {
        "month": pl.String,
        "hands": pl.Int64,
        "findings": pl.Int64,
        "hands_with_findings": pl.Int64,
        "money": pl.Int64,
        "bases": pl.Float64,
        "share": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema).with_columns(
        pl.lit(n, dtype=pl.Int64).alias("n"),
        pl.lit(result.findings.height, dtype=pl.Int64).alias("n_findings"),
        pl.lit(unit(result), dtype=pl.String).alias("unit"),
    )


def plot_findings_by_month(df: pl.DataFrame, ax: Axes) -> None:
    n = int(df["n"][0]) if df.height else 0
    title = f"Audit findings by month: share of stored hands with a finding, n = {n:,} stored hands"
    if not df.height or not n:
        charts.empty(ax, title, "no stored hands")
        return
    x = list(range(df.height))
    bars = ax.bar(
        x,
        df["share"].fill_null(0.0).to_list(),
        color=charts.SUBJECT,
        width=0.6,
        yerr=charts.whiskers(df["share"], df["ci_low"], df["ci_high"]),
        error_kw=charts.WHISKERS,
    )
    ax.bar_label(
        bars,
        labels=[
            f"{r['findings']:,} findings\n{r['hands_with_findings']:,} hands, {_label(df, r)}"
            for r in df.iter_rows(named=True)
        ],
        fontsize=7.5,
        padding=3,
    )
    ax.set_xticks(x, [f"{m}\nn={h:,}" for m, h in zip(df["month"], df["hands"], strict=True)])
    if df.height > 8:
        ax.tick_params(axis="x", labelsize=7, labelrotation=90)
    ax.set_title(title)
    money = " (money in bases: the hands have several)" if _shown(df) == "bases" else ""
    ax.set_xlabel(f"month of play (local time); n = stored hands that month; whiskers: 95% Wilson{money}")
    ax.set_ylabel("share of the month's stored hands")
    charts.percent_axis(ax, "y")
    top = max([0.0, *df["ci_high"].drop_nulls().to_list(), *df["share"].drop_nulls().to_list()])
    ax.set_ylim(0, min(1.0, top * 1.35 + 0.01))
    pad = max(0.0, (4 - df.height) / 2)  # a month or two: narrow bars, not a wall of colour
    ax.set_xlim(-0.5 - pad, df.height - 0.5 + pad)


# ---------------------------------------------------------------------------------------------- by player
def prep_money_by_player(result: Audit, *, limit: int = MAX_PLAYERS) -> pl.DataFrame:
    """The ``limit`` players with most money at stake in findings on their seat (then most findings, then id).

    Columns: ``player``, ``findings``, ``hands``, ``money``, ``bases`` (the money in bases), ``players``
    (players with any finding), ``unattributed_findings``, ``unattributed_money`` and ``unattributed_bases``
    (findings about the whole hand, with no seat), ``n_findings`` (all findings), ``unit`` (:func:`unit`);
    most money in bases first (in a warehouse of one base, most money).
    """
    f = result.findings
    seated = f.filter(pl.col("player").is_not_null())
    loose = f.filter(pl.col("player").is_null())
    grouped = (
        seated.group_by("player")
        .agg(
            pl.len().cast(pl.Int64).alias("findings"),
            pl.col("hand_id").n_unique().cast(pl.Int64).alias("hands"),
            *_money(),
        )
        .with_columns(pl.col("player").cast(pl.String))
        .sort(["bases", "money", "findings", "player"], descending=[True, True, True, False])
    )
    loose_bases = float(loose.select(IN_BASES.sum()).item() or 0.0) if loose.height else 0.0
    return grouped.head(max(0, limit)).with_columns(
        pl.lit(grouped.height, dtype=pl.Int64).alias("players"),
        pl.lit(loose.height, dtype=pl.Int64).alias("unattributed_findings"),
        pl.lit(as_int(loose["money"].sum()), dtype=pl.Int64).alias("unattributed_money"),
        pl.lit(loose_bases, dtype=pl.Float64).alias("unattributed_bases"),
        pl.lit(f.height, dtype=pl.Int64).alias("n_findings"),
        pl.lit(f.filter(pl.col("reason_of").is_null()).height, dtype=pl.Int64).alias("n_mistakes"),
        pl.lit(unit(result), dtype=pl.String).alias("unit"),
    )


def plot_money_by_player(df: pl.DataFrame, ax: Axes) -> None:
    title = "Players by money at stake in findings on their seat"
    if not df.height:
        charts.empty(ax, title, "no finding concerns a player's seat")
        return
    f = charts.fonts()
    total = int(df["players"][0])
    shown = f"{df.height} players" if df.height == total else f"the {df.height} of {total} players"
    loose = int(df["unattributed_findings"][0])
    loose_money = _label(df, {"money": df["unattributed_money"][0], "bases": df["unattributed_bases"][0]})
    subtitle = f"{shown} with a finding, n = {int(df['n_findings'][0]):,} findings"
    if loose:
        subtitle += f"; {loose:,} more ({loose_money}) concern the whole hand"
    rows = df.reverse()  # most money on top
    bars = ax.barh([f.safe(p) for p in rows["player"]], rows[_shown(df)].to_list(), color=charts.NEUTRAL, height=0.65)
    ax.bar_label(
        bars,
        labels=[
            f"{_label(df, r)} ({r['findings']:,} findings, {r['hands']:,} hands)" for r in rows.iter_rows(named=True)
        ],
        fontsize=8,
        padding=3,
    )
    ax.set_title(f"{title}\n{subtitle}", fontsize=10.5)
    ax.set_xlabel(_axis(df, "the player's findings"))
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.4, y=0.02)


# ---------------------------------------------------------------------------------------------- top findings
def prep_top_findings(result: Audit, *, limit: int = TOP_FINDINGS) -> pl.DataFrame:
    """The ``limit`` mistakes with most money at stake, in the audit's order (money, hand, event, code): each
    wrong payment once (:meth:`~pipeline.audit.scoring.Audit.mistakes`), the fan and points findings behind it
    named in ``reasons``.

    Columns: ``rank`` (1-based), ``hand_id``, ``event``, ``code``, ``severity``, ``player``, ``money``,
    ``base`` (the hand's: the audit ranks by money ÷ base), ``message``, ``reasons``, ``position``, ``table_id``,
    ``month``, ``meaning`` (the code's, from the catalogue), ``n_findings``, ``n_mistakes`` (findings that are
    no other's reason), ``unit`` (:func:`unit`: ``bases`` where the findings' hands have several bases).
    """
    f = result.findings
    top = result.mistakes().head(max(0, limit))  # each wrong payment once, with the findings behind it
    return top.select(
        pl.int_range(1, top.height + 1, dtype=pl.Int64).alias("rank"),
        pl.col("hand_id").cast(pl.String),
        pl.col("event").cast(pl.Int64),
        pl.col("code").cast(pl.String),
        pl.col("severity").cast(pl.String),
        pl.col("player").cast(pl.String),
        pl.col("money").cast(pl.Int64),
        pl.col("base").cast(pl.Int64),
        pl.col("message").cast(pl.String),
        pl.col("reasons").cast(pl.String),
        pl.col("position").cast(pl.String),
        pl.col("table_id").cast(pl.String),
        pl.col("month").cast(pl.String),
        pl.col("code").map_elements(meaning, return_dtype=pl.String).alias("meaning"),
        pl.lit(f.height, dtype=pl.Int64).alias("n_findings"),
        pl.lit(f.filter(pl.col("reason_of").is_null()).height, dtype=pl.Int64).alias("n_mistakes"),
        pl.lit(unit(result), dtype=pl.String).alias("unit"),
    )


CHARTS = (
    ChartSpec(
        "money_by_code",
        prep_money_by_code,
        plot_money_by_code,
        "Money at stake by issue code: the points a scoring or settlement difference moves; for a rule "
        "violation, the points settled in that hand (schemas/ISSUE_CODES.md).",
        tall=True,
    ),
    ChartSpec(
        "findings_by_month",
        prep_findings_by_month,
        plot_findings_by_month,
        "Share of each month's stored hands with at least one audit finding, with the findings and money.",
    ),
    ChartSpec(
        "money_by_player",
        prep_money_by_player,
        plot_money_by_player,
        "Players by money at stake in findings on their seat (a finding names a seat where the rules do).",
        tall=True,
    ),
)
