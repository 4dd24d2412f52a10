"""The player dashboard: one player's tendencies beside the population's (every player in the warehouse).

Every figure comes from the metric registry (:mod:`pipeline.analytics.metrics`) applied to the base counts
of ``player_base``. Base counts are sums, so the population's are the players' counts added up, and the
same metric definitions give its rates (Wilson 95%) and means (normal 95%).
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl
from matplotlib.axes import Axes

from dashboards import ChartSpec, as_int, population_base, run_sql
from pipeline.analytics import queries
from pipeline.analytics.levels import NEEDS
from pipeline.analytics.metrics import METRIC_BY_ID, METRICS
from pipeline.report import charts

RATES = (
    "win_rate",
    "self_draw_share",
    "first_winner_rate",
    "deal_in_rate",
    "hua_zhu_rate",
    "not_ready_at_draw_rate",
)
MEANS = ("fan_per_win", "points_per_win", "points_lost_per_deal_in", "net_points_per_hand", "pongs_per_hand")
PLAYER, POPULATION = "player", "all players"
# Denominator words for the sample sizes in labels, by the metric's denominator column.
DEN_WORDS = {
    "hands": "hands",
    "wins": "wins",
    "deal_ins": "deal-ins",
    "still_in_at_draw": "hands still in",
    "void_declared": "hands",
}

_SCHEMA = {
    "metric": pl.String,
    "name_zh": pl.String,
    "name_en": pl.String,
    "unit": pl.String,
    "who": pl.String,
    "value": pl.Float64,
    "num": pl.Float64,
    "den": pl.Int64,
    "den_of": pl.String,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
}


class UnknownPlayer(ValueError):
    """A player with no replayed hand in the warehouse."""


def _base(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return queries.player_base(con)


def player_row(base: pl.DataFrame, player: str) -> dict[str, Any]:
    rows = base.filter(pl.col("player") == player)
    if not rows.height:
        raise UnknownPlayer(f"no replayed hands of player {player!r} in the warehouse")
    return rows.row(0, named=True)


# ---------------------------------------------------------------------------------------------- selection
def prep_top_players(con: duckdb.DuckDBPyConnection, n: int) -> pl.DataFrame:
    """The ``n`` players with most replayed hands (ties by id). Columns: ``player``, ``hands``."""
    base = _base(con)
    return (
        base.select("player", pl.col("hands").cast(pl.Int64))
        .sort(["hands", "player"], descending=[True, False])
        .head(max(0, n))
    )


# ---------------------------------------------------------------------------------------------- metrics
def prep_player_metrics(con: duckdb.DuckDBPyConnection, player: str, metrics: tuple[str, ...] = RATES) -> pl.DataFrame:
    """The player's and the population's value of each metric, in the order given: two rows per metric.

    Columns: ``metric``, ``name_zh``, ``name_en``, ``unit``, ``who`` (``player`` or ``all players``),
    ``value``, ``num`` (numerator, or the sum of a mean), ``den`` (denominator, or n of a mean), ``den_of``
    (what ``den`` counts), ``ci_low``, ``ci_high``, ``player`` (the player's id). Each metric over the hands
    whose level of record carries what it needs (:data:`pipeline.analytics.levels.NEEDS`: a score sheet's
    hands have no pongs to count).
    Raises :class:`UnknownPlayer`.
    """
    levels = queries.player_base_levels(con)
    player_row(queries.fold(levels), player)  # raises for a player with no replayed hand
    bases = {needs.id: queries.fold(levels, needs) for needs in {NEEDS[mid] for mid in metrics}}
    rows = []
    for mid in metrics:
        m = METRIC_BY_ID[mid]
        base = bases[NEEDS[mid].id]  # the hands whose level carries what the metric needs
        for who, counts in ((PLAYER, player_row(base, player)), (POPULATION, population_base(base))):
            v = m.value(counts)
            rows.append(
                {
                    "metric": m.id,
                    "name_zh": m.name_zh,
                    "name_en": m.name_en,
                    "unit": m.unit,
                    "who": who,
                    "value": v["value"],
                    "num": v.get("num", v.get("sum")),
                    "den": v.get("den", v.get("n")),
                    "den_of": m.den,
                    "ci_low": v.get("ci_low"),
                    "ci_high": v.get("ci_high"),
                }
            )
    return pl.DataFrame(rows, schema=_SCHEMA).with_columns(pl.lit(player, dtype=pl.String).alias("player"))


def prep_player_rates(con: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """:func:`prep_player_metrics` of the rates: win, self-draw share, first win, deal-in, flower pig,
    not ready at the draw (查叫)."""
    return prep_player_metrics(con, player, RATES)


def prep_player_means(con: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """:func:`prep_player_metrics` of the means: fan and points per win, points lost per deal-in, net points
    and pongs per hand."""
    return prep_player_metrics(con, player, MEANS)


def prep_player_table(con: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """Every metric of the registry for the player and the population (the page's table)."""
    return prep_player_metrics(con, player, tuple(m.id for m in METRICS))


def _comparison(df: pl.DataFrame, ax: Axes, *, title: str, xlabel: str, share: bool) -> None:
    """Dot-and-whisker: per metric, the player above the population, with their intervals."""
    f = charts.fonts()
    metrics = list(dict.fromkeys(df["metric"].to_list()))
    player = df.filter(pl.col("who") == PLAYER)
    everyone = df.filter(pl.col("who") == POPULATION)
    fmt = charts.pct if share else charts.num
    k = len(metrics)
    ys = list(range(k - 1, -1, -1))  # first metric on top
    name = f.safe(str(df["player"][0]))
    for rows, offset, colour, who in (
        (player, 0.17, charts.SUBJECT, name),
        (everyone, -0.17, charts.POPULATION, POPULATION),
    ):
        values = rows["value"]
        shown = [v if v is not None else float("nan") for v in values.to_list()]
        ax.errorbar(
            shown,
            [y + offset for y in ys],
            xerr=charts.whiskers(values, rows["ci_low"], rows["ci_high"]),
            fmt="o",
            color=colour,
            ecolor=colour,
            elinewidth=1.4,
            capsize=3,
            markersize=5,
            label=charts.legend_label(who),
        )
        for x, y, v in zip(shown, ys, values.to_list(), strict=True):
            if v is not None:
                ax.annotate(
                    fmt(v),
                    (x, y + offset),
                    textcoords="offset points",
                    xytext=(0, 5),
                    ha="center",
                    fontsize=7.5,
                    color=colour,
                )
    labels = []
    for mid in metrics:
        p = player.filter(pl.col("metric") == mid).row(0, named=True)
        den_word = DEN_WORDS.get(p["den_of"], p["den_of"])
        unit = "" if share else f" [{p['unit']}]"
        labels.append(f"{f.both(p['name_zh'], p['name_en'])}{unit}\n(n={p['den'] or 0:,} {den_word})")
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.7, k - 0.3)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    if share:
        charts.percent_axis(ax, "x")
        ax.set_xlim(left=0)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="best")


def plot_player_rates(df: pl.DataFrame, ax: Axes) -> None:
    everyone = df.filter(pl.col("who") == POPULATION)
    hands = as_int(everyone.filter(pl.col("den_of") == "hands")["den"].max())
    if not df.height:
        charts.empty(ax, "Rates beside all players", "no metrics")
        return
    name = charts.fonts().safe(str(df["player"][0]))
    title = f"Rates: {name} beside all players ({hands:,} seat-hands), 95% Wilson"
    _comparison(df, ax, title=title, xlabel="share (of the n in each label: the player's)", share=True)


def plot_player_means(df: pl.DataFrame, ax: Axes) -> None:
    if not df.height:
        charts.empty(ax, "Means beside all players", "no metrics")
        return
    name = charts.fonts().safe(str(df["player"][0]))
    title = f"Means: {name} beside all players, 95% intervals"
    _comparison(
        df,
        ax,
        title=title,
        xlabel="mean per win, deal-in or hand (unit in brackets; n: the player's)",
        share=False,
    )
    ax.axvline(0, color="#333333", linewidth=0.8)


# ---------------------------------------------------------------------------------------------- fan
def prep_player_fan(con: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """The player's wins by fan beside all players' wins, as shares of each one's wins.

    Columns: ``fan``, ``who``, ``wins``, ``share``, ``n`` (that side's wins), ``player``. Every fan from 1 (or
    the lowest seen) to the highest seen appears on both sides.
    """
    mine = run_sql(con, "player_fan_distribution", player=player)
    everyone = queries.run(con, "fan_distribution")
    seen = mine["fan"].to_list() + everyone["fan"].to_list()
    schema = {
        "fan": pl.Int64,
        "who": pl.String,
        "wins": pl.Int64,
        "share": pl.Float64,
        "n": pl.Int64,
        "player": pl.String,
    }
    if not seen:
        return pl.DataFrame(schema=schema)
    fans = range(min(1, *seen), max(seen) + 1)
    rows = []
    for who, frame in ((PLAYER, mine), (POPULATION, everyone)):
        got = {int(f): int(w) for f, w in frame.select("fan", "wins").iter_rows()}
        n = sum(got.values())
        for fan in fans:
            rows.append(
                {
                    "fan": fan,
                    "who": who,
                    "wins": got.get(fan, 0),
                    "share": got.get(fan, 0) / n if n else None,
                    "n": n,
                    "player": player,
                }
            )
    return pl.DataFrame(rows, schema=schema)


def plot_player_fan(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    if not df.height:
        charts.empty(ax, "Fan per win beside all players", "no wins")
        return
    title = f"Fan per win ({f.term('番', 'fan')}): {f.safe(str(df['player'][0]))}'s wins beside all players'"
    width = 0.4
    name = f.safe(str(df["player"][0]))
    for who, offset, colour, label in (
        (PLAYER, -width / 2, charts.SUBJECT, name),
        (POPULATION, width / 2, charts.POPULATION, POPULATION),
    ):
        rows = df.filter(pl.col("who") == who)
        n = int(rows["n"][0])
        ax.bar(
            [x + offset for x in rows["fan"].to_list()],
            rows["share"].fill_null(0.0).to_list(),
            width=width,
            color=colour,
            label=charts.legend_label(f"{label} (n={n:,} wins)"),
        )
    ax.set_xticks(sorted(set(df["fan"].to_list())))
    ax.set_title(title)
    ax.set_xlabel("total fan of the win (engine, before the cap)")
    ax.set_ylabel("share of that side's wins")
    charts.percent_axis(ax, "y")
    ax.legend()


CHARTS = (
    ChartSpec(
        "rates",
        prep_player_rates,
        plot_player_rates,
        "The player's rates beside all players' (dots), with 95% Wilson intervals (whiskers).",
        figures=RATES,
        tall=True,
    ),
    ChartSpec(
        "means",
        prep_player_means,
        plot_player_means,
        "The player's fan, points and pongs beside all players', with 95% intervals of the mean.",
        figures=MEANS,
        tall=True,
    ),
    ChartSpec(
        "fan",
        prep_player_fan,
        plot_player_fan,
        "The player's wins by total fan beside all players' wins.",
        figures=("fan_per_win",),
    ),
)


# ---------------------------------------------------------------------------------------------- every player at once
# The report gives every player a page: what the functions above compute for one player (a fold of the base
# counts per metric, a query for the fan and one for the levels), these compute once for all of them, so that a
# page costs string assembly only (thousands of players in seconds).
_EVERY_SCHEMA = {"player": pl.String, **{k: v for k, v in _SCHEMA.items() if k not in ("name_zh", "name_en", "unit")}}


def prep_every_player(con: duckdb.DuckDBPyConnection, metrics: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Every player's value of each metric (default: every metric of the registry) and the population's, as
    :func:`prep_player_metrics` gives them for one player: one row per player and metric (``who`` =
    ``player``), and one per metric for the population (``who`` = ``all players``, ``player`` null).

    Columns: ``player``, ``metric``, ``who``, ``value``, ``num``, ``den``, ``den_of``, ``ci_low``, ``ci_high``;
    players in id order, metrics in the order given.
    """
    chosen = metrics if metrics is not None else tuple(m.id for m in METRICS)
    levels = queries.player_base_levels(con)
    bases = {needs.id: queries.fold(levels, needs) for needs in {NEEDS[mid] for mid in chosen}}
    rows = []
    for mid in chosen:
        m = METRIC_BY_ID[mid]
        base = bases[NEEDS[mid].id]
        entries = [(PLAYER, r["player"], r) for r in base.sort("player").iter_rows(named=True)]
        entries.append((POPULATION, None, population_base(base)))
        for who, pid, counts in entries:
            v = m.value(counts)
            rows.append(
                {
                    "player": pid,
                    "metric": m.id,
                    "who": who,
                    "value": v["value"],
                    "num": v.get("num", v.get("sum")),
                    "den": v.get("den", v.get("n")),
                    "den_of": m.den,
                    "ci_low": v.get("ci_low"),
                    "ci_high": v.get("ci_high"),
                }
            )
    return pl.DataFrame(rows, schema=_EVERY_SCHEMA)


def metrics_of(every: pl.DataFrame, player: str) -> pl.DataFrame:
    """One player's rows of :func:`prep_every_player` beside the population's, in the shape of
    :func:`prep_player_metrics` (two rows per metric, the player's first). Raises :class:`UnknownPlayer`."""
    mine = every.filter(pl.col("player") == player)
    if not mine.height:
        raise UnknownPlayer(f"no replayed hands of player {player!r} in the warehouse")
    return paired_metrics(mine, every.filter(pl.col("who") == POPULATION), player)


def paired_metrics(mine: pl.DataFrame, everyone: pl.DataFrame, player: str) -> pl.DataFrame:
    """A player's rows of :func:`prep_every_player` (``mine``) and the population's (``everyone``) in the shape of
    :func:`prep_player_metrics`: two rows per metric, the player's first, metrics in the registry's order."""
    names = pl.DataFrame(
        {
            "metric": [m.id for m in METRICS],
            "name_zh": [m.name_zh for m in METRICS],
            "name_en": [m.name_en for m in METRICS],
            "unit": [m.unit for m in METRICS],
            "order": list(range(len(METRICS))),
        }
    )
    both = pl.concat([mine, everyone]).with_columns(pl.when(pl.col("who") == PLAYER).then(0).otherwise(1).alias("side"))
    return (
        both.join(names, on="metric", how="left")
        .sort(["order", "side"])
        .select(list(_SCHEMA))
        .with_columns(pl.lit(player, dtype=pl.String).alias("player"))
    )


def prep_every_player_levels(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every player's hands by level of record (:func:`pipeline.analytics.queries.hands_by_level` of each player,
    in one query). Columns: ``player``, ``level``, ``stored``, ``replayed``."""
    return run_sql(con, "players_hands_by_level").select(
        pl.col("player").cast(pl.String),
        pl.col("level").cast(pl.String),
        pl.col("stored").cast(pl.Int64),
        pl.col("replayed").cast(pl.Int64),
    )


def prep_every_player_fan(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every player's wins by fan, and all players' (``player`` null), as shares of each one's wins.

    Columns: ``player``, ``fan``, ``wins``, ``share``, ``n`` (that side's wins)."""
    mine = run_sql(con, "players_fan_distribution").select(
        pl.col("player").cast(pl.String), pl.col("fan").cast(pl.Int64), pl.col("wins").cast(pl.Int64)
    )
    everyone = (
        mine.group_by("fan").agg(pl.col("wins").sum()).with_columns(pl.lit(None, dtype=pl.String).alias("player"))
    )
    both = pl.concat([mine, everyone.select(mine.columns)])
    return (
        both.with_columns(pl.col("wins").sum().over("player").alias("n"))
        .with_columns((pl.col("wins") / pl.col("n")).alias("share"))
        .select("player", "fan", "wins", "share", "n")
        .sort(["player", "fan"], nulls_last=True)
    )


DIRECTORY_METRICS = ("hands", "win_rate", "deal_in_rate", "net_points_per_hand")


def prep_directory(every: pl.DataFrame) -> pl.DataFrame:
    """The player directory: one row per player with the key figures, by id.

    Columns: ``player``, ``hands``, ``win_rate``, ``win_low``, ``win_high``, ``deal_in_rate``, ``deal_in_low``,
    ``deal_in_high``, ``wins``, ``deal_in_hands``, ``net`` (total net points), ``per_hand``, ``per_hand_low``,
    ``per_hand_high`` (95% of the mean per hand).
    """
    mine = every.filter(pl.col("who") == PLAYER)

    def side(metric: str, **names: str) -> pl.DataFrame:
        return mine.filter(pl.col("metric") == metric).select(
            "player", *(pl.col(src).alias(dst) for dst, src in names.items())
        )

    out = side("hands", hands="value")
    for part in (
        side("win_rate", win_rate="value", win_low="ci_low", win_high="ci_high", wins="num"),
        side("deal_in_rate", deal_in_rate="value", deal_in_low="ci_low", deal_in_high="ci_high", deal_in_hands="num"),
        side("net_points_per_hand", net="num", per_hand="value", per_hand_low="ci_low", per_hand_high="ci_high"),
    ):
        out = out.join(part, on="player", how="left")
    return out.with_columns(
        pl.col("hands").cast(pl.Int64),
        pl.col("wins").cast(pl.Int64),
        pl.col("deal_in_hands").cast(pl.Int64),
        pl.col("net").cast(pl.Int64),
    ).sort("player")
