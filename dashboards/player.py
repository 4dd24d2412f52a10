"""The player dashboard: one player's tendencies beside the population's: the players of the player's scale
group (:mod:`pipeline.analytics.scales`: a profile and its base, so that a room playing for 1,000 points a base
is never beside one playing for 1), every player of a warehouse of one group ("all players").

Every figure comes from the metric registry (:mod:`pipeline.analytics.metrics`) applied to the base counts
of ``player_base``. Base counts are sums, so the population's are its players' counts added up, and the
same metric definitions give its rates (Wilson 95%) and means (normal 95%). Every frame says which population
(``group``, and ``population`` in words: ``all players``, or ``players of GROUP`` where there are several).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import polars as pl
from matplotlib.axes import Axes

from dashboards import ChartSpec, as_int, population_base, run_sql
from pipeline.analytics import queries, yardsticks
from pipeline.analytics.levels import NEEDS
from pipeline.analytics.metrics import METRIC_BY_ID, METRICS, Metric, decision_values
from pipeline.analytics.scales import Scales, scales
from pipeline.analytics.stats import wilson
from pipeline.analytics.yardsticks import Yardstick
from pipeline.audit.assist import Assist
from pipeline.audit.tallies import StoredScreen, stored_screen
from pipeline.audit.think import ThinkTime
from pipeline.report import charts, numbers, svg

RATES = (
    "win_rate",
    "self_draw_share",
    "first_winner_rate",
    "deal_in_rate",
    "hua_zhu_rate",
    "not_ready_at_draw_rate",
)
MEANS = (
    "fan_per_win",
    "points_per_win",
    "points_lost_per_deal_in",
    "net_points_per_hand",
    "luck_adjusted_net_per_hand",  # the net less the deal's and the draws' luck (schemas/METRICS.md#luck)
    "pongs_per_hand",
)
PLAYER, POPULATION = "player", "all players"  # the two sides' ``who``; the population's words: ``population``
# Denominator words for the sample sizes in labels, by the metric's denominator column.
DEN_WORDS = {
    "hands": "hands",
    "wins": "wins",
    "deal_ins": "deal-ins",
    "still_in_at_draw": "hands still in",
    "void_declared": "hands",
    "win_turn_n": "wins",
    "deal_in_turn_n": "tiles dealt in",
    "ready_turn_n": "hands ready",
    "ready_judged": "hands",
    "deal_shanten_n": "hands dealt",
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
    "group": pl.String,  # the player's scale group, whose players are the population
    "population": pl.String,  # the population in words (Scales.population)
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
def select_players(con: duckdb.DuckDBPyConnection, players: list[str] | None, top: int | None) -> list[str]:
    """The players who get a page: ``players`` (each once, in order; :class:`UnknownPlayer` for one with no
    replayed hand), else the ``top`` with most replayed hands, else every player with a replayed hand."""
    if players is None:
        return prep_top_players(con, 10**9 if top is None else top)["player"].to_list()
    chosen = list(dict.fromkeys(players))
    known = set(prep_top_players(con, 10**9)["player"].to_list())
    unknown = [p for p in chosen if p not in known]
    if unknown:
        raise UnknownPlayer(f"no replayed hands of player {', '.join(map(repr, unknown))} in the warehouse")
    return chosen


def prep_top_players(con: duckdb.DuckDBPyConnection, n: int) -> pl.DataFrame:
    """The ``n`` players with most replayed hands (ties by id). Columns: ``player``, ``hands``."""
    base = _base(con)
    return (
        base.select("player", pl.col("hands").cast(pl.Int64))
        .sort(["hands", "player"], descending=[True, False])
        .head(max(0, n))
    )


# ---------------------------------------------------------------------------------------------- metrics
def _value_cells(m: Metric, v: dict[str, Any]) -> dict[str, Any]:
    """A metric's value as the metric frames' cells (a rate's ``num``/``den``, a mean's ``sum``/``n``)."""
    return {
        "metric": m.id,
        "value": v["value"],
        "num": v.get("num", v.get("sum")),
        "den": v.get("den", v.get("n")),
        "den_of": m.den,
        "ci_low": v.get("ci_low"),
        "ci_high": v.get("ci_high"),
    }


def prep_player_metrics(con: duckdb.DuckDBPyConnection, player: str, metrics: tuple[str, ...] = RATES) -> pl.DataFrame:
    """The player's and the population's value of each metric, in the order given: two rows per metric.

    Columns: ``metric``, ``name_zh``, ``name_en``, ``unit``, ``who`` (``player``, or ``all players``: the
    population, the players of the player's scale group), ``value``, ``num`` (numerator, or the sum of a mean),
    ``den`` (denominator, or n of a mean), ``den_of`` (what ``den`` counts), ``ci_low``, ``ci_high``, ``group``
    (the player's scale group), ``population`` (the population in words: ``all players`` in a warehouse of one
    group), ``player`` (the player's id). Each metric over the hands whose level of record carries what it needs
    (:data:`pipeline.analytics.levels.NEEDS`: a score sheet's hands have no pongs to count).
    Raises :class:`UnknownPlayer`.
    """
    levels = queries.player_base_levels(con)
    player_row(queries.fold(levels), player)  # raises for a player with no replayed hand
    scale = scales(con)
    group = scale.group_of(player)
    bases = {needs.id: queries.fold(levels, needs) for needs in {NEEDS[mid] for mid in metrics}}
    rows = []
    for mid in metrics:
        m = METRIC_BY_ID[mid]
        base = bases[NEEDS[mid].id]  # the hands whose level carries what the metric needs
        ours = _of_group(scale, base, group)  # the population: the players of the player's group
        for who, counts in ((PLAYER, player_row(base, player)), (POPULATION, population_base(ours))):
            cells = _value_cells(m, m.value(counts))
            rows.append({**cells, "name_zh": m.name_zh, "name_en": m.name_en, "unit": m.unit, "who": who})
    return pl.DataFrame(rows, schema=_SCHEMA).with_columns(
        pl.lit(group, dtype=pl.String).alias("group"),
        pl.lit(scale.population(group), dtype=pl.String).alias("population"),
        pl.lit(player, dtype=pl.String).alias("player"),
    )


def _of_group(scale: Scales, base: pl.DataFrame, group: str | None) -> pl.DataFrame:
    """The rows of ``base`` (one per player) of the players of ``group``."""
    return scale.with_group(base).filter(pl.col("group").eq_missing(group)).drop("group")


def population_of(df: pl.DataFrame) -> str:
    """The population a frame of this module compares the player with, in words (its ``population``)."""
    return str(df["population"][0]) if df.height and "population" in df.columns else POPULATION


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
    fmt = numbers.pct if share else numbers.num
    k = len(metrics)
    ys = list(range(k - 1, -1, -1))  # first metric on top
    name = f.safe(str(df["player"][0]))
    for rows, offset, colour, who in (
        (player, 0.17, charts.SUBJECT, name),
        (everyone, -0.17, charts.POPULATION, population_of(df)),
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
    title = f"Rates: {name} beside {population_of(df)} ({hands:,} seat-hands), 95% Wilson"
    _comparison(df, ax, title=title, xlabel="share (of the n in each label: the player's)", share=True)


def plot_player_means(df: pl.DataFrame, ax: Axes) -> None:
    if not df.height:
        charts.empty(ax, "Means beside all players", "no metrics")
        return
    name = charts.fonts().safe(str(df["player"][0]))
    title = f"Means: {name} beside {population_of(df)}, 95% intervals"
    _comparison(
        df,
        ax,
        title=title,
        xlabel="mean per win, deal-in or hand (unit in brackets; n: the player's)",
        share=False,
    )
    ax.axvline(0, color="#333333", linewidth=0.8)


# ---------------------------------------------------------------------------------------------- decisions
@dataclass(frozen=True, slots=True)
class Decisions:
    """The decision metrics (schemas/METRICS.md#decisions, from ``xuezhan review``'s ``decision_tallies``) of
    every player and of each scale group's players pooled (their counts added up), each as
    :func:`pipeline.analytics.metrics.decision_values` gives it (``"status": "not reviewed"`` where there is no
    row); ``review``: :func:`pipeline.analytics.queries.review_coverage`; ``assist``: the engine-assistance screen
    of the counts the review stored (:func:`pipeline.audit.tallies.stored_screen`), each player's figures on its
    page and the flagged ones among the findings."""

    mine: dict[str, dict[str, dict[str, Any]]]  # player -> metric -> value
    population: dict[str | None, dict[str, dict[str, Any]]]  # scale group -> metric -> value
    review: dict[str, Any]
    assist: StoredScreen | None = None
    assist_by: dict[str, Assist] = field(default_factory=dict)  # the screen's results by player
    think_by: dict[str, ThinkTime] = field(default_factory=dict)  # the think-time screen's, by player

    def assist_of(self, player: str) -> Assist | None:
        """The player's engine-assistance figures (None: not screened, or not reviewed)."""
        return self.assist_by.get(player)

    def think_of(self, player: str) -> ThinkTime | None:
        """The player's think-time figures (None: no stored timed decision)."""
        return self.think_by.get(player)

    def of(self, player: str) -> dict[str, dict[str, Any]]:
        return self.mine.get(player) or decision_values(None)


def prep_every_player_decisions(con: duckdb.DuckDBPyConnection, scale: Scales | None = None) -> Decisions:
    """:class:`Decisions` of the warehouse behind ``con`` (a query of the base counts of every player, and the
    engine-assistance screen of the stored counts: at 1M hands about 6 s)."""
    scale = scale or scales(con)
    bases = queries.decision_bases(con)
    mine = {player: decision_values(row) for (player, _), row in bases.items()}
    group_of = dict(zip(scale.players["player"].to_list(), scale.players["group"].to_list(), strict=True))
    pooled: dict[str | None, dict[str, int]] = {}
    for (player, _), row in bases.items():
        into = pooled.setdefault(group_of.get(player), {})
        for column, value in row.items():
            if isinstance(value, int) and not isinstance(value, bool):
                into[column] = into.get(column, 0) + value
    population = {group: decision_values(row) for group, row in pooled.items()}
    assist = stored_screen(con)
    by = {a.player: a for a in assist.results}
    timed = {t.player: t for t in assist.think}
    return Decisions(mine, population, queries.review_coverage(con), assist, by, timed)


# ---------------------------------------------------------------------------------------------- fan
def prep_player_fan(con: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """The player's wins by fan beside the wins of the players of the player's scale group (all players' in a
    warehouse of one group), as shares of each one's wins.

    Columns: ``fan``, ``who``, ``wins``, ``share``, ``n`` (that side's wins), ``population`` (the population in
    words), ``player``. Every fan from 1 (or the lowest seen) to the highest seen appears on both sides.
    """
    scale = scales(con)
    group = scale.group_of(player)
    mine = queries.run(con, "fan_distribution", player=player)
    everyone = (
        prep_every_player_fan(con, scale)
        .filter(pl.col("player").is_null() & pl.col("group").eq_missing(group))
        .select("fan", "wins")
    )
    seen = mine["fan"].to_list() + everyone["fan"].to_list()
    schema = {
        "fan": pl.Int64,
        "who": pl.String,
        "wins": pl.Int64,
        "share": pl.Float64,
        "n": pl.Int64,
        "population": pl.String,
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
                    "population": scale.population(group),
                    "player": player,
                }
            )
    return pl.DataFrame(rows, schema=schema)


def plot_player_fan(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    if not df.height:
        charts.empty(ax, "Fan per win beside all players", "no wins")
        return
    everyone = population_of(df)
    theirs = f"{everyone}'" if everyone == POPULATION else f"the wins of {everyone}"
    title = f"Fan per win ({f.term('番', 'fan')}): {f.safe(str(df['player'][0]))}'s wins beside {theirs}"
    width = 0.4
    name = f.safe(str(df["player"][0]))
    for who, offset, colour, label in (
        (PLAYER, -width / 2, charts.SUBJECT, name),
        (POPULATION, width / 2, charts.POPULATION, everyone),
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


# ---------------------------------------------------------------------------------------------- head to head
def prep_head_to_head(con: duckdb.DuckDBPyConnection, player: str) -> pl.DataFrame:
    """The player against each opponent they sat with, one row per opponent, most hands together first: hands
    together, points won from and lost to them, the net and the net per hand (normal 95% interval), the deal-ins
    to them and the wins on their discards, each as a share of the hands together (Wilson 95%).

    Columns: :data:`pipeline.analytics.queries.HEAD_TO_HEAD` (``opponent``, ``hands``, ``won_from``,
    ``lost_to``, ``net``, ``net_per_hand``, ``net_low``, ``net_high``, ``deal_ins_to``, ``deal_in_hands``,
    ``deal_in_rate``, ``deal_in_low``, ``deal_in_high``, ``wins_from``, ``win_hands``, ``win_rate``,
    ``win_low``, ``win_high``), and ``player``. No row for a player with no replayed hand."""
    frame = queries.head_to_head_frame(con, player)
    return frame.with_columns(pl.lit(player, dtype=pl.String).alias("player"))


def prep_every_head_to_head(con: duckdb.DuckDBPyConnection) -> dict[str, pl.DataFrame]:
    """:func:`prep_head_to_head` of every player with a replayed hand at once (one query: the report's player
    pages), by player; each frame equal to ``prep_head_to_head(con, player)``."""
    every = queries.head_to_head_frame(con, None)
    return {str(k[0]): v for k, v in every.partition_by("player", as_dict=True, maintain_order=True).items()}


def plot_head_to_head(df: pl.DataFrame, ax: Axes) -> None:
    """Net points per hand against each opponent (dot) with its 95% interval (whiskers), most hands together
    on top; each label says the hands together and the deal-ins both ways."""
    f = charts.fonts()
    if not df.height:
        charts.empty(ax, "Head to head", "no opponents")
        return
    name = f.safe(str(df["player"][0]))
    k = df.height
    ys = list(range(k - 1, -1, -1))
    values = df["net_per_hand"]
    shown = [v if v is not None else float("nan") for v in values.to_list()]
    ax.errorbar(
        shown,
        ys,
        xerr=charts.whiskers(values, df["net_low"], df["net_high"]),
        fmt="o",
        color=charts.SUBJECT,
        ecolor=charts.SUBJECT,
        elinewidth=1.4,
        capsize=3,
        markersize=5,
    )
    labels = [
        f"{f.safe(str(r['opponent']))}\n(n={r['hands']:,} hands; "
        f"{r['deal_ins_to']} deal-ins to, {r['wins_from']} wins from)"
        for r in df.iter_rows(named=True)
    ]
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.7, k - 0.3)
    ax.axvline(0, color="#333333", linewidth=0.8)
    ax.set_title(f"Head to head: {name}'s net points per hand against each opponent, 95% intervals")
    ax.set_xlabel(f"points {name} won from the opponent minus points paid to them, per hand together")
    ax.grid(axis="y", visible=False)


# ---------------------------------------------------------------------------------------------- over time
ROLLING_WINDOW = 50
_ROLLING: dict[str, pl.DataType | type[pl.DataType]] = {
    "n": pl.Int64,
    "hand_id": pl.String,
    "played_local": pl.Datetime("us"),
    "won": pl.Boolean,
    "dealt_in": pl.Boolean,
    "window": pl.Int64,
    "wins": pl.Int64,
    "win_rate": pl.Float64,
    "win_low": pl.Float64,
    "win_high": pl.Float64,
    "deal_in_hands": pl.Int64,
    "deal_in_rate": pl.Float64,
    "deal_in_low": pl.Float64,
    "deal_in_high": pl.Float64,
    "hands": pl.Int64,
    "played_from": pl.Datetime("us"),
    "played_to": pl.Datetime("us"),
}


def prep_rolling(con: duckdb.DuckDBPyConnection, player: str, window: int = ROLLING_WINDOW) -> pl.DataFrame:
    """The player's win rate and deal-in rate over their hands in the order played, each over the last
    ``window`` hands (fewer at the start: the first rows are over the hands so far), with Wilson 95% bands.

    One row per replayed hand of the player (``sql/player_rolling.sql``: by time, then session and hand
    number). Columns: ``n`` (1, 2, … the hand's place), ``hand_id``, ``played_local`` (local wall time),
    ``won``, ``dealt_in`` (at least one win on the player's discard), ``window`` (the hands the rates are
    over: ``min(n, window)``), ``wins``, ``win_rate``, ``win_low``, ``win_high``, ``deal_in_hands``,
    ``deal_in_rate``, ``deal_in_low``, ``deal_in_high``, ``hands`` (the player's replayed hands),
    ``played_from`` and ``played_to`` (the earliest and latest local time of them), and ``player``.
    Raises ``ValueError`` for a window under 1."""
    if window < 1:
        raise ValueError(f"window must be at least 1 hand, got {window}")
    return _rolling(queries.run(con, "player_rolling", players=[player], window=window, most=None), window)


ROLLING_ROWS = 100_000  # hands of several players rolled at once (in DuckDB, thinned there): one query per batch


def iter_rolling(
    con: duckdb.DuckDBPyConnection, window: int = ROLLING_WINDOW, most: int = svg.MOST_POINTS
) -> Iterator[tuple[str, pl.DataFrame]]:
    """``(player, rows)`` of every player with a replayed hand: :func:`prep_rolling`'s rows that a chart of at most
    ``most`` points draws (:func:`pipeline.report.svg.thinned`'s: every k-th, the first full window's and the last;
    ``hands`` still counts them all), each player's computed when asked for. The rates are rolled and thinned in
    DuckDB a batch of players at a time, up to :data:`ROLLING_ROWS` hands (more only for one player with more), so
    Python holds about ``most`` rows a player: rolled in Polars, a 5M-hand room's players of 833,000 hands each
    took the report from 580 to 1,015 MB (every player's rows at once had been its peak at 200k hands, 959 MB)."""
    if window < 1:
        raise ValueError(f"window must be at least 1 hand, got {window}")
    for players in _batches(queries.run(con, "player_series_sizes"), ROLLING_ROWS):
        rows = queries.run(con, "player_rolling", players=players, window=window, most=most)
        rolled = _rolling(rows, window)
        for key, frame in rolled.partition_by("player", as_dict=True, maintain_order=True).items():
            yield str(key[0]), frame


def _batches(sizes: pl.DataFrame, limit: int) -> Iterator[list[str]]:
    """The players of ``sizes`` (``player``, ``hands``; in order) in runs of consecutive players holding at most
    ``limit`` hands together, or one player alone.

    >>> sizes = pl.DataFrame({"player": ["a", "b", "c", "d"], "hands": [40, 50, 150, 10]})
    >>> list(_batches(sizes, 100))
    [['a', 'b'], ['c'], ['d']]
    """
    batch: list[str] = []
    held = 0
    for player, hands in sizes.select("player", "hands").iter_rows():
        if batch and held + hands > limit:
            yield batch
            batch, held = [], 0
        batch.append(player)
        held += hands
    if batch:
        yield batch


def _rolling(rows: pl.DataFrame, window: int) -> pl.DataFrame:
    """``sql/player_rolling.sql``'s rows (the counts over each window) with the rates and their Wilson bands."""
    if not rows.height:
        return pl.DataFrame(schema={**_ROLLING, "player": pl.String})
    # a window holds at most `window` hands, so few (count, window) pairs occur: stats.wilson once for each
    pairs = pl.concat(
        [
            rows.select(pl.col("wins").alias("num"), pl.col("window").alias("den")),
            rows.select(pl.col("deal_in_hands").alias("num"), pl.col("window").alias("den")),
        ]
    ).unique()
    bands = pl.DataFrame(
        [(num, den, *wilson(num, den)) for num, den in pairs.iter_rows()],
        schema={"num": pl.Int64, "den": pl.Int64, "low": pl.Float64, "high": pl.Float64},
        orient="row",
    )
    win_band = bands.rename({"num": "wins", "den": "window", "low": "win_low", "high": "win_high"})
    deal_band = bands.rename({"num": "deal_in_hands", "den": "window", "low": "deal_in_low", "high": "deal_in_high"})
    return (
        rows.join(win_band, on=["wins", "window"], how="left", maintain_order="left")
        .join(deal_band, on=["deal_in_hands", "window"], how="left", maintain_order="left")
        .with_columns(
            (pl.col("wins") / pl.col("window")).alias("win_rate"),
            (pl.col("deal_in_hands") / pl.col("window")).alias("deal_in_rate"),
        )
        .select(*_ROLLING, "player")
        .cast(_ROLLING)  # type: ignore[arg-type]
    )


def plot_rolling(df: pl.DataFrame, ax: Axes) -> None:
    """Two lines over the player's hands in order, win rate and deal-in rate over the last hands, each in a
    Wilson 95% band; the first hands (a window not yet full) are drawn dashed."""
    f = charts.fonts()
    if not df.height:
        charts.empty(ax, "Win and deal-in rate over time", "no hands")
        return
    name = f.safe(str(df["player"][0]))
    window = as_int(df["window"].max())
    x = df["n"].to_list()
    full = [w == window for w in df["window"].to_list()]
    for rate, low, high, colour, label in (
        ("win_rate", "win_low", "win_high", charts.SUBJECT, f.both("胡牌率", "win rate")),
        ("deal_in_rate", "deal_in_low", "deal_in_high", charts.POPULATION, f.both("点炮率", "deal-in rate")),
    ):
        ax.fill_between(x, df[low].to_list(), df[high].to_list(), color=colour, alpha=0.18, linewidth=0)
        ys = df[rate].to_list()
        nan = float("nan")  # a gap in the line
        ax.plot(x, [y if ok else nan for y, ok in zip(ys, full, strict=True)], color=colour, label=label)
        # the dashed start runs up to the first full window, so the two parts join
        start = [y if not ok or n == window else nan for y, ok, n in zip(ys, full, x, strict=True)]
        ax.plot(x, start, color=colour, linestyle="--")
    ax.set_title(f"{name}: win and deal-in rate over the last {window:,} hands, 95% Wilson bands")
    ax.set_xlabel(f"the player's hands in the order played (n = {df.height:,}); dashed: fewer than {window} so far")
    ax.set_ylabel("share of the window's hands")
    charts.percent_axis(ax, "y")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")


# The two as matplotlib charts, for a PNG of one player; the report draws them cheaper on every player page (a
# table and an inline SVG: dashboards.pages.players, pipeline.report.svg.rolling_lines), so they are not in CHARTS.
HEAD_TO_HEAD_CHART = ChartSpec(
    "head-to-head",
    prep_head_to_head,
    plot_head_to_head,
    "The player's net points per hand against each opponent, with 95% intervals of the mean; deal-ins to and "
    "wins from each in the labels.",
    figures=("net_points_per_hand", "deal_in_rate"),
    tall=True,
)
ROLLING_CHART = ChartSpec(
    "rolling",
    prep_rolling,
    plot_rolling,
    f"The player's win and deal-in rates over their last {ROLLING_WINDOW} hands, in the order played, with 95% "
    "Wilson bands.",
    figures=("win_rate", "deal_in_rate"),
)

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


def prep_every_player(
    con: duckdb.DuckDBPyConnection, metrics: tuple[str, ...] | None = None, scale: Scales | None = None
) -> pl.DataFrame:
    """Every player's value of each metric (default: every metric of the registry) and the populations', as
    :func:`prep_player_metrics` gives them for one player: one row per player and metric (``who`` =
    ``player``), and one per metric and scale group for the population of that group (``who`` = ``all
    players``, ``player`` null): one per metric in a warehouse of one group. ``scale``: the warehouse's
    :class:`~pipeline.analytics.scales.Scales` (default: read from ``con``).

    Columns: ``player``, ``metric``, ``who``, ``value``, ``num``, ``den``, ``den_of``, ``ci_low``, ``ci_high``,
    ``group`` (the player's scale group; the population's), ``population`` (in words); players in id order,
    metrics in the order given, a metric's populations after its players, by group.
    """
    scale = scale if scale is not None else scales(con)
    chosen = metrics if metrics is not None else tuple(m.id for m in METRICS)
    levels = queries.player_base_levels(con)
    bases = {needs.id: queries.fold(levels, needs) for needs in {NEEDS[mid] for mid in chosen}}
    rows = []
    for mid in chosen:
        m = METRIC_BY_ID[mid]
        base = scale.with_group(bases[NEEDS[mid].id]).sort("player")
        entries = [(PLAYER, r["player"], r["group"], r) for r in base.iter_rows(named=True)]
        for group in sorted(set(base["group"].to_list()), key=lambda g: (g is None, g or "")):
            ours = base.filter(pl.col("group").eq_missing(group)).drop("group")
            entries.append((POPULATION, None, group, population_base(ours)))
        for who, pid, group, counts in entries:
            cells = _value_cells(m, m.value(counts))
            rows.append({**cells, "player": pid, "who": who, "group": group, "population": scale.population(group)})
    return pl.DataFrame(rows, schema=_EVERY_SCHEMA)


def metrics_of(every: pl.DataFrame, player: str) -> pl.DataFrame:
    """One player's rows of :func:`prep_every_player` beside the population's (the players of the player's
    group), in the shape of :func:`prep_player_metrics` (two rows per metric, the player's first). Raises
    :class:`UnknownPlayer`."""
    mine = every.filter(pl.col("player") == player)
    if not mine.height:
        raise UnknownPlayer(f"no replayed hands of player {player!r} in the warehouse")
    group = mine["group"][0]
    everyone = every.filter((pl.col("who") == POPULATION) & pl.col("group").eq_missing(group))
    return paired_metrics(mine, everyone, player)


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


def prep_every_player_fan(con: duckdb.DuckDBPyConnection, scale: Scales | None = None) -> pl.DataFrame:
    """Every player's wins by fan, and each scale group's players' (``player`` null: all players' in a warehouse
    of one group), as shares of each one's wins. ``scale``: as :func:`prep_every_player`'s.

    Columns: ``player``, ``group`` (the player's scale group; the population's), ``fan``, ``wins``, ``share``,
    ``n`` (that side's wins); by player (the populations last, by group), then fan."""
    scale = scale if scale is not None else scales(con)
    mine = scale.with_group(
        run_sql(con, "players_fan_distribution").select(
            pl.col("player").cast(pl.String), pl.col("fan").cast(pl.Int64), pl.col("wins").cast(pl.Int64)
        )
    )
    everyone = (
        mine.group_by("group", "fan")
        .agg(pl.col("wins").sum())
        .with_columns(pl.lit(None, dtype=pl.String).alias("player"))
    )
    both = pl.concat([mine, everyone.select(mine.columns)])
    return (
        both.with_columns(pl.col("wins").sum().over("player", "group").alias("n"))
        .with_columns((pl.col("wins") / pl.col("n")).alias("share"))
        .select("player", "group", "fan", "wins", "share", "n")
        .sort(["player", "group", "fan"], nulls_last=True)
    )


def prep_yardsticks(every: pl.DataFrame, min_hands: int = yardsticks.MIN_HANDS) -> dict[str, dict[str, Yardstick]]:
    """Every player's yardsticks (:func:`pipeline.analytics.yardsticks.yardsticks`: percentile among the players of
    their scale group with at least ``min_hands`` hands, the group's figure, the best quartile's band, z) from
    :func:`prep_every_player`'s rows: the same metric values ``stats --format json`` gives them, so the same
    yardsticks (player → metric id → :class:`~pipeline.analytics.yardsticks.Yardstick`)."""
    kinds = {m.id: m.kind for m in METRICS}
    players: dict[str, dict[str, Any]] = {}
    group_of: dict[str, str] = {}
    for r in every.filter(pl.col("who") == PLAYER).iter_rows(named=True):
        entry = players.setdefault(r["player"], {"player": r["player"], "hands": 0, "metrics": {}})
        kind = kinds[r["metric"]]
        if r["metric"] == "hands":
            entry["hands"] = int(r["value"] or 0)
        if kind == "rate":
            entry["metrics"][r["metric"]] = {"value": r["value"], "num": r["num"], "den": r["den"]}
        elif kind == "mean":
            entry["metrics"][r["metric"]] = {
                "value": r["value"],
                "sum": r["num"],
                "n": r["den"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
            }
        if r["group"] is not None:
            group_of[r["player"]] = r["group"]
    return yardsticks.yardsticks({"players": list(players.values())}, min_hands=min_hands, group_of=group_of)


def reference_sizes(every: pl.DataFrame, min_hands: int = yardsticks.MIN_HANDS) -> dict[str | None, int]:
    """Per scale group, its players with at least ``min_hands`` hands: the reference a player's yardsticks are
    taken against (the player left out of their own)."""
    rows = every.filter((pl.col("who") == PLAYER) & (pl.col("metric") == "hands") & (pl.col("value") >= min_hands))
    return {g: n for g, n in rows.group_by("group").len().iter_rows()}


def prep_directory(every: pl.DataFrame) -> pl.DataFrame:
    """The player directory: one row per player with the key figures, by id.

    Columns: ``player``, ``hands``, ``win_rate``, ``win_low``, ``win_high``, ``deal_in_rate``, ``deal_in_low``,
    ``deal_in_high``, ``wins``, ``deal_in_hands``, ``net`` (total net points), ``per_hand``, ``per_hand_low``,
    ``per_hand_high`` (95% of the mean per hand), ``group`` (the player's scale group: the unit of their points).
    """
    mine = every.filter(pl.col("who") == PLAYER)

    def side(metric: str, **names: str) -> pl.DataFrame:
        return mine.filter(pl.col("metric") == metric).select(
            "player", *(pl.col(src).alias(dst) for dst, src in names.items())
        )

    out = side("hands", hands="value", group="group")
    for part in (
        side("win_rate", win_rate="value", win_low="ci_low", win_high="ci_high", wins="num"),
        side("deal_in_rate", deal_in_rate="value", deal_in_low="ci_low", deal_in_high="ci_high", deal_in_hands="num"),
        side("net_points_per_hand", net="num", per_hand="value", per_hand_low="ci_low", per_hand_high="ci_high"),
    ):
        out = out.join(part, on="player", how="left")
    return (
        out.select(pl.exclude("group"), "group")
        .with_columns(
            pl.col("hands").cast(pl.Int64),
            pl.col("wins").cast(pl.Int64),
            pl.col("deal_in_hands").cast(pl.Int64),
            pl.col("net").cast(pl.Int64),
        )
        .sort("player")
    )
