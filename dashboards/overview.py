"""The overview dashboard: how hands are won and end, and how players compare on dealing in and money.

Charts: fan distribution, pattern frequency, outcomes (winners per hand, 黄庄, 一炮多响), flower pigs per
hand, deal-in rate by player with Wilson whiskers, net points by player.
"""

from __future__ import annotations

import duckdb
import polars as pl
from matplotlib.axes import Axes

from dashboards import ChartSpec, as_int, population_base, run_sql
from pipeline.analytics import queries
from pipeline.analytics.metrics import METRIC_BY_ID
from pipeline.analytics.runs import RUN_HANDS, Stream, add_up, added
from pipeline.analytics.scales import scales
from pipeline.analytics.stats import wilson
from pipeline.report import charts, numbers
from pipeline.rules.fan import PATTERN_BY_ID, SPECIAL_NAMES

MAX_PLAYERS = 40  # bars per player chart; beyond that, the players with most hands


# ---------------------------------------------------------------------------------------------- helpers
def _share_rows(
    counts: list[tuple[str, int]], n: int
) -> tuple[list[float | None], list[float | None], list[float | None]]:
    shares, lows, highs = [], [], []
    for _, k in counts:
        low, high = wilson(k, n)
        shares.append(k / n if n else None)
        lows.append(low)
        highs.append(high)
    return shares, lows, highs


def pattern_names(pattern: str) -> tuple[str, str]:
    """``(name_zh, name_en)`` of a pattern id; an unknown id stands for itself."""
    if pattern in PATTERN_BY_ID:
        p = PATTERN_BY_ID[pattern]
        return p.name_zh, p.name_en
    if pattern in SPECIAL_NAMES:
        return SPECIAL_NAMES[pattern]
    return pattern, pattern


def _pinyin(pattern: str) -> str:
    return pattern.replace("_", " ")


def _players_base(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return queries.player_base(con)


def _limit(base: pl.DataFrame, limit: int) -> pl.DataFrame:
    """The ``limit`` players with most hands (ties by id), keeping the frame's columns."""
    return base.sort(["hands", "player"], descending=[True, False]).head(limit)


# ---------------------------------------------------------------------------------------------- fan
def prep_fan_distribution(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Wins by total fan (engine, before the cap), every fan from the lowest to the highest seen.

    Columns: ``fan``, ``wins``, ``share`` (of all wins), ``n`` (wins in replayed hands).
    """
    df = queries.run(con, "fan_distribution", player=None)
    n = as_int(df["wins"].sum())
    if not df.height:
        return pl.DataFrame(schema={"fan": pl.Int64, "wins": pl.Int64, "share": pl.Float64, "n": pl.Int64})
    fans = pl.DataFrame({"fan": list(range(as_int(df["fan"].min()), as_int(df["fan"].max()) + 1))})
    out = fans.join(df.with_columns(pl.col("fan").cast(pl.Int64), pl.col("wins").cast(pl.Int64)), on="fan", how="left")
    return out.with_columns(pl.col("wins").fill_null(0)).with_columns(
        (pl.col("wins") / n).alias("share"), pl.lit(n, dtype=pl.Int64).alias("n")
    )


def plot_fan_distribution(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    n = int(df["n"][0]) if df.height else 0
    title = f"Fan per win ({f.term('番', 'fan')}): distribution, n = {n:,} wins"
    if not n:
        charts.empty(ax, title, "no wins")
        return
    bars = ax.bar(df["fan"].to_list(), df["share"].to_list(), color=charts.NEUTRAL, width=0.7)
    ax.bar_label(bars, labels=[f"{w:,}" for w in df["wins"].to_list()], fontsize=8, padding=2)
    ax.set_xticks(df["fan"].to_list())
    ax.set_title(title)
    ax.set_xlabel(
        "total fan of the win (engine, before the cap; 平胡 = 1)"
        if f.cjk
        else "total fan of the win (engine, before the cap; plain hand = 1)"
    )
    ax.set_ylabel("share of wins")
    charts.percent_axis(ax, "y")
    ax.margins(y=0.12)


# ---------------------------------------------------------------------------------------------- patterns
DOMINANT = 0.5  # a pattern in at least half the wins, and twice the next, is set apart from the bars


def prep_pattern_frequency(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Wins carrying each scoring pattern, most frequent first.

    Columns: ``pattern`` (id), ``name_zh``, ``name_en``, ``wins``, ``share`` (of all wins), ``n`` (wins),
    ``apart`` (the chart states its share instead of drawing it: a pattern in at least :data:`DOMINANT` of the
    wins and twice as many as the next, as 平胡 is, in every normal win, would squeeze every other bar flat).
    """
    n = int(queries.run(con, "fan_distribution", player=None)["wins"].sum() or 0)
    df = queries.run(con, "pattern_frequency", player=None)
    names = [pattern_names(p) for p in df["pattern"].to_list()]
    out = pl.DataFrame(
        {
            "pattern": df["pattern"].to_list(),
            "name_zh": [zh for zh, _ in names],
            "name_en": [en for _, en in names],
            "wins": df["wins"].cast(pl.Int64).to_list(),
        },
        schema={"pattern": pl.String, "name_zh": pl.String, "name_en": pl.String, "wins": pl.Int64},
    ).with_columns(
        (pl.col("wins") / n if n else pl.lit(None, dtype=pl.Float64)).alias("share"),
        pl.lit(n, dtype=pl.Int64).alias("n"),
    )
    wins = out["wins"].to_list()
    dominant = bool(n) and len(wins) > 1 and wins[0] >= DOMINANT * n and wins[0] >= 2 * wins[1]
    return out.with_columns(pl.Series("apart", [dominant and i == 0 for i in range(out.height)], dtype=pl.Boolean))


def plot_pattern_frequency(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    n = int(df["n"][0]) if df.height else 0
    title = f"Scoring patterns: share of wins carrying each, n = {n:,} wins"
    if not df.height or not n:
        charts.empty(ax, title, "no wins")
        return
    apart = df.filter(pl.col("apart"))
    if apart.height:
        a = apart.row(0, named=True)
        name = f.both(a["name_zh"], a["name_en"]) if f.cjk else f"{a['name_en']} ({_pinyin(a['pattern'])})"
        title += f"\n{name}: {a['wins']:,} wins ({numbers.pct(a['share'])}), not drawn; the others to scale"
    rows = df.filter(~pl.col("apart")).reverse()  # most frequent on top
    labels = [
        f.both(zh, en) if f.cjk else f"{en} ({_pinyin(p)})"
        for p, zh, en in zip(rows["pattern"], rows["name_zh"], rows["name_en"], strict=True)
    ]
    bars = ax.barh(labels, rows["share"].to_list(), color=charts.NEUTRAL, height=0.65)
    ax.bar_label(bars, labels=[f"{w:,}" for w in rows["wins"].to_list()], fontsize=8, padding=2)
    ax.set_title(title, fontsize=10.5 if apart.height else None)
    ax.set_xlabel(
        "share of wins (a win carries several patterns; 平胡 is in every normal win)"
        if f.cjk
        else "share of wins (a win carries several patterns; the plain hand is in every normal win)"
    )
    charts.percent_axis(ax, "x")
    ax.margins(x=0.12)
    ax.grid(axis="y", visible=False)


# ---------------------------------------------------------------------------------------------- outcomes
def prep_tables(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """How hands end at each table shape of the warehouse (the ``outcomes_by_table`` model), so that 黄庄 and
    winners per hand are read against the table they happened at.

    Columns: ``table`` (e.g. ``3 players, ps, 血战到底``), ``hands``, ``winners`` (hands by players who won,
    ``"0: 12, 1: 30, ..."``), ``played_out``, ``huang_zhuang``, ``multi_win`` (shares of the table's hands).
    """
    df = queries.run(con, "outcomes_by_table")
    rows = []
    for r in df.iter_rows(named=True):
        hands = r["hands"]
        rows.append(
            {
                "table": f"{r['seats']} players, {r['suits']}, {queries.MODE_ZH.get(r['mode'], r['mode'])}",
                "hands": hands,
                "winners": ", ".join(f"{k}: {n}" for k, n in queries.winners_per_hand(r).items()),
                "played_out": r["won_out"] / hands if hands else None,
                "huang_zhuang": r["huang_zhuang"] / hands if hands else None,
                "multi_win": r["multi_win_hands"] / hands if hands else None,
            }
        )
    schema = {
        "table": pl.String,
        "hands": pl.Int64,
        "winners": pl.String,
        "played_out": pl.Float64,
        "huang_zhuang": pl.Float64,
        "multi_win": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)


OUTCOME_ROWS = (
    ("winners_0", "winners", "无人胡", "no winner"),
    ("winners_1", "winners", "一家胡", "1 winner"),
    ("winners_2", "winners", "两家胡", "2 winners"),
    ("winners_3", "winners", "三家胡", "3 winners (played out)"),
    ("huang_zhuang", "end", "黄庄", "wall ran out, 2+ still in"),
    ("multi_win_hands", "end", "一炮多响", "one discard, several winners"),
)


def prep_outcomes(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """How replayed hands end: by number of winners, and the share ending in 黄庄 or holding a 一炮多响.

    Columns: ``key`` (the ``outcomes`` model's column), ``group`` (``winners`` or ``end``), ``label_zh``,
    ``label_en``, ``hands``, ``n`` (replayed hands), ``share``, ``ci_low``, ``ci_high`` (Wilson 95%).
    """
    row = queries.run(con, "outcomes").row(0, named=True)
    n = int(row["hands"] or 0)
    counts = [(key, int(row[key] or 0)) for key, *_ in OUTCOME_ROWS]
    shares, lows, highs = _share_rows(counts, n)
    return pl.DataFrame(
        {
            "key": [r[0] for r in OUTCOME_ROWS],
            "group": [r[1] for r in OUTCOME_ROWS],
            "label_zh": [r[2] for r in OUTCOME_ROWS],
            "label_en": [r[3] for r in OUTCOME_ROWS],
            "hands": [k for _, k in counts],
            "n": [n] * len(OUTCOME_ROWS),
            "share": shares,
            "ci_low": lows,
            "ci_high": highs,
        },
        schema={
            "key": pl.String,
            "group": pl.String,
            "label_zh": pl.String,
            "label_en": pl.String,
            "hands": pl.Int64,
            "n": pl.Int64,
            "share": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
        },
    )


def plot_outcomes(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    n = int(df["n"][0]) if df.height else 0
    title = f"How hands end: share of hands, n = {n:,} hands (95% Wilson intervals)"
    if not n:
        charts.empty(ax, title, "no replayed hands")
        return
    rows = df.reverse()
    labels = [f.both(zh, en) for zh, en in zip(rows["label_zh"], rows["label_en"], strict=True)]
    colours = [charts.NEUTRAL if g == "winners" else charts.WARNING for g in rows["group"].to_list()]
    share = rows["share"].fill_null(0.0)
    bars = ax.barh(
        labels,
        share.to_list(),
        color=colours,
        height=0.65,
        xerr=charts.whiskers(rows["share"], rows["ci_low"], rows["ci_high"]),
        error_kw=charts.WHISKERS,
    )
    ax.bar_label(
        bars,
        labels=[f"{numbers.pct(s)} ({h:,})" for s, h in zip(rows["share"], rows["hands"], strict=True)],
        fontsize=8,
        padding=4,
    )
    ax.axhline(1.5, color="#999999", linewidth=0.8, linestyle="--")  # end-of-hand events below, winners above
    ax.set_title(title)
    ax.set_xlabel("share of replayed hands")
    charts.percent_axis(ax, "x")
    top = max(float(v) for v in [*share.to_list(), *rows["ci_high"].drop_nulls().to_list()])
    ax.set_xlim(0, min(1.0, top * 1.3 + 0.02))
    ax.grid(axis="y", visible=False)


# ---------------------------------------------------------------------------------------------- flower pigs
# What sql/hua_zhu_per_hand.sql reads, for its runs of hands in file order: its count of pigs per hand is a group
# by hand over every seat-hand. On 5M hands, bounded, it took 365 MB alone but 1,043 MB in the report's sequence of
# queries (where, it seems, the bound ran out and runs.bounded ran it again without one); a run at a time, 338 MB.
HUA_ZHU_STREAMS = (Stream("hands", "hand_id, replayed, outcome, suits"), Stream("player_hands", "hand_id, hua_zhu"))


def prep_hua_zhu(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Hands that reached an empty wall, by number of flower pigs (花猪): 0 to the most seen (at least 0-2).

    Columns: ``pigs``, ``hands``, ``n`` (hands that reached an empty wall), ``share``, ``ci_low``,
    ``ci_high``.
    """
    df = add_up(con, HUA_ZHU_STREAMS, lambda run: run_sql(run, "hua_zhu_per_hand"), added(["pigs"]), size=RUN_HANDS)
    n = as_int(df["hands"].sum())
    top = max(2, as_int(df["pigs"].max()))
    got = {int(p): int(h) for p, h in df.iter_rows()}
    counts = [(str(k), got.get(k, 0)) for k in range(top + 1)]
    shares, lows, highs = _share_rows(counts, n)
    return pl.DataFrame(
        {
            "pigs": list(range(top + 1)),
            "hands": [h for _, h in counts],
            "n": [n] * (top + 1),
            "share": shares,
            "ci_low": lows,
            "ci_high": highs,
        },
        schema={
            "pigs": pl.Int64,
            "hands": pl.Int64,
            "n": pl.Int64,
            "share": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
        },
    )


def plot_hua_zhu(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    n = int(df["n"][0]) if df.height else 0
    pig = f.term("花猪", "flower pigs")
    title = f"{pig} per hand that reached an empty wall, n = {n:,} hands (95% Wilson)"
    if not n:
        charts.empty(ax, title, "no hand reached an empty wall")
        return
    bars = ax.bar(
        df["pigs"].to_list(),
        df["share"].fill_null(0.0).to_list(),
        color=charts.WARNING,
        width=0.6,
        yerr=charts.whiskers(df["share"], df["ci_low"], df["ci_high"]),
        error_kw=charts.WHISKERS,
    )
    ax.bar_label(
        bars,
        labels=[f"{numbers.pct(s)} ({h:,})" for s, h in zip(df["share"], df["hands"], strict=True)],
        fontsize=8,
        padding=3,
    )
    ax.set_xticks(df["pigs"].to_list())
    ax.set_title(title)
    ax.set_xlabel(
        f"{f.both('花猪', 'flower pigs') if f.cjk else 'flower pigs (hua zhu)'} in the hand "
        "(three suits held when the wall ran out)"
    )
    ax.set_ylabel("share of hands")
    charts.percent_axis(ax, "y")
    ax.margins(y=0.15)


# ---------------------------------------------------------------------------------------------- players
def prep_deal_in_by_player(con: duckdb.DuckDBPyConnection, *, limit: int = MAX_PLAYERS) -> pl.DataFrame:
    """Deal-in rate (点炮率: hands with at least one deal-in / hands) of the ``limit`` players with most
    hands, highest rate first, with the rate of all players.

    Columns: ``player``, ``hands``, ``deal_in_hands``, ``rate``, ``ci_low``, ``ci_high`` (Wilson 95%),
    ``all_rate``, ``all_hands`` (every player's seat-hands), ``players`` (players in the warehouse).
    """
    base = _players_base(con)
    metric = METRIC_BY_ID["deal_in_rate"]
    everyone = metric.value(population_base(base))
    rows = []
    for row in _limit(base, limit).iter_rows(named=True):
        m = metric.value(row)
        rows.append(
            {
                "player": row["player"],
                "hands": row["hands"],
                "deal_in_hands": row["deal_in_hands"],
                "rate": m["value"],
                "ci_low": m["ci_low"],
                "ci_high": m["ci_high"],
            }
        )
    schema = {
        "player": pl.String,
        "hands": pl.Int64,
        "deal_in_hands": pl.Int64,
        "rate": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
    }
    return (
        pl.DataFrame(rows, schema=schema)
        .sort(["rate", "player"], descending=[True, False])
        .with_columns(
            pl.lit(everyone["value"], dtype=pl.Float64).alias("all_rate"),
            pl.lit(everyone["den"], dtype=pl.Int64).alias("all_hands"),
            pl.lit(base.height, dtype=pl.Int64).alias("players"),
        )
    )


def _shown(df: pl.DataFrame) -> str:
    total = int(df["players"][0])
    return f"{df.height} players" if df.height == total else f"the {df.height} of {total} players with most hands"


def plot_deal_in_by_player(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    title = f"{f.both('点炮率', 'deal-in rate')} by player (95% Wilson)"
    if not df.height:
        charts.empty(ax, title, "no players")
        return
    rows = df.reverse()  # highest rate on top
    labels = [f"{f.safe(p)} (n={h:,})" for p, h in zip(rows["player"], rows["hands"], strict=True)]
    ax.barh(
        labels,
        rows["rate"].fill_null(0.0).to_list(),
        color=charts.NEUTRAL,
        height=0.65,
        xerr=charts.whiskers(rows["rate"], rows["ci_low"], rows["ci_high"]),
        error_kw={**charts.WHISKERS, "capsize": 2.5},
    )
    everyone = df["all_rate"][0]
    subtitle = _shown(df)
    if everyone is not None:
        ax.axvline(everyone, color=charts.SUBJECT, linewidth=1.2, linestyle="--")
        subtitle += f"; dashed: all players {numbers.pct(everyone)} (n={int(df['all_hands'][0]):,} seat-hands)"
    ax.set_title(f"{title}\n{subtitle}", fontsize=10.5)
    ax.set_xlabel("hands with a deal-in / hands played (n = hands played)")
    charts.percent_axis(ax, "x")
    ax.grid(axis="y", visible=False)
    ax.margins(y=0.01)


def prep_net_points_by_player(con: duckdb.DuckDBPyConnection, *, limit: int = MAX_PLAYERS) -> pl.DataFrame:
    """Net points (engine's settlement) of the ``limit`` players with most hands, best per hand first.

    Where the players' scale groups (:mod:`pipeline.analytics.scales`) have different bases (a majsoul room at
    1,000 beside rooms at 1), the per-hand figures are in bases (÷ the base of the player's group), so that the
    players are ranked in one unit; ``unit`` says which.

    Columns: ``player``, ``hands``, ``net`` (total, points), ``per_hand``, ``ci_low``, ``ci_high`` (95% of the
    mean per hand, in ``unit``), ``base`` (of the player's scale group), ``unit`` (``points`` or ``bases``),
    ``players`` (players in the warehouse), ``all_net`` (every player's total: 0 when every hand settles).
    """
    base = _players_base(con)
    scale = scales(con)
    in_bases = len(scale.bases) > 1
    bases = dict(scale.players.join(scale.groups.select("group", "base"), on="group").select("player", "base").rows())
    metric = METRIC_BY_ID["net_points_per_hand"]
    rows = []
    for row in _limit(base, limit).iter_rows(named=True):
        m = metric.value(row)
        unit = bases.get(row["player"], 1) if in_bases else 1

        def per(value: float | None, unit: int = unit) -> float | None:
            return None if value is None else value / unit

        rows.append(
            {
                "player": row["player"],
                "hands": row["hands"],
                "net": row["delta_sum"],
                "per_hand": per(m["value"]),
                "ci_low": per(m["ci_low"]),
                "ci_high": per(m["ci_high"]),
                "base": bases.get(row["player"]),
            }
        )
    schema = {
        "player": pl.String,
        "hands": pl.Int64,
        "net": pl.Int64,
        "per_hand": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "base": pl.Int64,
    }
    return (
        pl.DataFrame(rows, schema=schema)
        .sort(["per_hand", "player"], descending=[True, False], nulls_last=True)
        .with_columns(
            pl.lit("bases" if in_bases else "points", dtype=pl.String).alias("unit"),
            pl.lit(base.height, dtype=pl.Int64).alias("players"),
            pl.lit(as_int(base["delta_sum"].sum()), dtype=pl.Int64).alias("all_net"),
        )
    )


def plot_net_points_by_player(df: pl.DataFrame, ax: Axes) -> None:
    in_bases = df.height > 0 and df["unit"][0] == "bases"  # the players' groups have different bases
    title = f"Net {'bases' if in_bases else 'points'} per hand by player (engine's settlement), 95% intervals"
    if not df.height:
        charts.empty(ax, title, "no players")
        return
    f = charts.fonts()
    rows = df.reverse()  # best per hand on top
    labels = [f"{f.safe(p)} (n={h:,})" for p, h in zip(rows["player"], rows["hands"], strict=True)]
    per_hand = rows["per_hand"].fill_null(0.0).to_list()
    colours = [charts.NEUTRAL if v >= 0 else charts.SUBJECT for v in per_hand]
    y = list(range(rows.height))
    ax.errorbar(
        per_hand,
        y,
        xerr=charts.whiskers(rows["per_hand"], rows["ci_low"], rows["ci_high"]),
        fmt="none",
        ecolor="#555555",
        elinewidth=1.1,
        capsize=2.5,
    )
    ax.scatter(per_hand, y, color=colours, s=22, zorder=3)
    for yy, v, high, net, base in zip(
        y, per_hand, rows["ci_high"].to_list(), rows["net"].to_list(), rows["base"].to_list(), strict=True
    ):
        ax.annotate(
            f"{v:+.2f} bases/hand, {net:+,} points total at base {base or 1:,}"
            if in_bases
            else f"{v:+.2f}/hand, {net:+,} total",
            (high if high is not None else v, yy),
            xytext=(5, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    ax.set_yticks(y, labels)
    ax.axvline(0, color="#333333", linewidth=0.8)
    ax.set_title(f"{title}\n{_shown(df)}", fontsize=10.5)
    if in_bases:  # the players' groups have different bases: one unit
        ax.set_xlabel(
            "net bases per hand played (points ÷ the base of the player's scale group: the groups have several), "
            "95% normal interval; n = hands played"
        )
    else:
        ax.set_xlabel("net points per hand played (dot), 95% normal interval (whiskers); n = hands played")
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.3, y=0.02)


CHARTS = (
    ChartSpec(
        "fan_distribution",
        prep_fan_distribution,
        plot_fan_distribution,
        "Wins by total fan, as computed by the engine before any cap.",
        figures=("fan_distribution",),
    ),
    ChartSpec(
        "pattern_frequency",
        prep_pattern_frequency,
        plot_pattern_frequency,
        "How often each scoring pattern appears among the wins.",
        figures=("pattern_frequency",),
        tall=True,
    ),
    ChartSpec(
        "outcomes",
        prep_outcomes,
        plot_outcomes,
        "How hands end: by number of winners, 黄庄 (the wall ran out with two or more players still in) "
        "and 一炮多响 (several winners on one discard).",
        figures=("winners_per_hand", "huang_zhuang_rate", "multi_win_rate"),
        tall=True,
    ),
    ChartSpec(
        "hua_zhu",
        prep_hua_zhu,
        plot_hua_zhu,
        "Flower pigs (花猪: three suits still held when the wall runs out) per hand that reached an empty wall.",
        figures=("hua_zhu_rate",),
    ),
    ChartSpec(
        "deal_in_by_player",
        prep_deal_in_by_player,
        plot_deal_in_by_player,
        "Deal-in rate by player with 95% Wilson intervals; the dashed line is the rate of all players.",
        figures=("deal_in_rate",),
        tall=True,
    ),
    ChartSpec(
        "net_points_by_player",
        prep_net_points_by_player,
        plot_net_points_by_player,
        "Net points per hand by player with 95% intervals, and each one's total (the engine's settlement).",
        figures=("net_points_per_hand",),
        tall=True,
    ),
)
