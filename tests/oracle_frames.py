"""A test oracle: the core metrics computed a second way, in Polars straight from the Parquet folders, so that
a test can hold the SQL models (``pipeline/analytics/sql``) and these frames to the same answer (and to
hand-computed fixtures). Not part of the product: only the tests use it."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from pipeline.analytics.groups import GROUPS, check_group


def scan(warehouse_dir: str | Path, table: str) -> pl.LazyFrame:
    return pl.scan_parquet(Path(warehouse_dir) / table / "*.parquet")


def _group(by: str) -> pl.Expr:
    """The ``grp`` column of ``sql/player_base.sql`` for ``$by``, written again (the groups' names are
    :data:`~pipeline.analytics.groups.GROUPS`)."""
    groups = {
        "all": pl.lit("all"),
        "seat": pl.col("seat").cast(pl.String),
        "dealer": pl.when(pl.col("dealer")).then(pl.lit("dealer")).otherwise(pl.lit("not dealer")),
        "profile": pl.col("profile"),
        # the hand's local month: UTC plus the offset its record wrote (hands.utc_offset, null: UTC)
        "month": (
            pl.col("played_at").dt.convert_time_zone("UTC").dt.replace_time_zone(None)
            + pl.duration(minutes=pl.col("utc_offset").fill_null(0))
        ).dt.strftime("%Y-%m"),
    }
    assert tuple(groups) == GROUPS, "a group of stats --by is missing here"
    return groups[check_group(by)].alias("grp")


def player_base(warehouse_dir: str | Path, *, by: str = "all", player: str | None = None) -> pl.DataFrame:
    """The same base counts as ``sql/player_base.sql``, one row per player and group, in the same order."""
    offsets = scan(warehouse_dir, "hands").select("hand_id", "utc_offset")
    ph = (
        scan(warehouse_dir, "player_hands")
        .filter(pl.col("replayed"))
        .join(offsets, on="hand_id", how="left")
        .with_columns(_group(by))
        .drop("utc_offset")
    )
    if player is not None:
        ph = ph.filter(pl.col("player") == player)
    deal_in = (
        scan(warehouse_dir, "wins")
        .filter(pl.col("how").is_in(["discard", "rob_kong"]))
        .group_by("hand_id", pl.col("source").alias("seat"))
        .agg(
            pl.col("points").sum().alias("points_lost"),
            (pl.col("points") * pl.col("points")).sum().alias("points_lost_sq"),
        )
    )
    win_turn, deal_in_turn = _turns(warehouse_dir)
    judged = scan(warehouse_dir, "hands").select(
        "hand_id",
        pl.col("ready_judged").fill_null(False)
        if _has(warehouse_dir, "hands", "ready_judged")
        else pl.lit(False).alias("ready_judged"),
    )
    luck = _deal_luck(warehouse_dir)
    joined = (
        ph.join(deal_in, on=["hand_id", "seat"], how="left")
        .join(luck, on=["hand_id", "seat"], how="left")
        .join(win_turn, on=["hand_id", "seat"], how="left")
        .join(deal_in_turn, on=["hand_id", "seat"], how="left")
        .join(judged, on="hand_id", how="left")
        .with_columns(
            pl.col("points_lost").fill_null(0),
            pl.col("points_lost_sq").fill_null(0),
            pl.when(pl.col("won")).then(pl.col("win_turn")).alias("win_turn"),
            pl.col("deal_in_turn_sum", "deal_in_turn_sq", "deal_in_turn_n").fill_null(0),
            pl.when(pl.col("ready_judged")).then(_column(warehouse_dir, "ready_turn")).cast(pl.Int64).alias("ready"),
            _column(warehouse_dir, "deal_shanten").cast(pl.Int64).alias("deal_shanten"),
        )
    )
    won = pl.col("won")

    def sq(name: str) -> pl.Expr:
        return (pl.col(name).cast(pl.Int64) * pl.col(name).cast(pl.Int64)).sum()

    out = joined.group_by("player", "grp").agg(
        pl.len().alias("hands"),
        won.sum().alias("wins"),
        (pl.col("how") == "self_draw").sum().alias("self_draw_wins"),
        (pl.col("win_order") == 1).sum().alias("first_wins"),
        (pl.col("win_order") == 2).sum().alias("second_wins"),
        (pl.col("win_order") == 3).sum().alias("third_wins"),
        (pl.col("deal_ins") > 0).sum().alias("deal_in_hands"),
        pl.col("deal_ins").cast(pl.Int64).sum().alias("deal_ins"),
        sq("deal_ins").alias("deal_ins_sq"),
        pl.col("points_lost").sum().alias("points_lost"),
        pl.col("points_lost_sq").sum().alias("points_lost_sq"),
        pl.col("fan").filter(won).cast(pl.Int64).sum().alias("fan_sum"),
        (pl.col("fan").cast(pl.Int64) ** 2).filter(won).sum().alias("fan_sq"),
        pl.col("points").filter(won).sum().alias("points_sum"),
        (pl.col("points") * pl.col("points")).filter(won).sum().alias("points_sq"),
        pl.col("delta").sum().alias("delta_sum"),
        (pl.col("delta") * pl.col("delta")).sum().alias("delta_sq"),
        pl.col("luck_net").sum().round(6).alias("luck_net_sum"),
        (pl.col("luck_net") * pl.col("luck_net")).sum().round(6).alias("luck_net_sq"),
        pl.col("hua_zhu").sum().alias("hua_zhu"),
        pl.col("ready_at_end").is_not_null().sum().alias("still_in_at_draw"),
        (pl.col("ready_at_end") == False).sum().alias("not_ready_at_draw"),  # noqa: E712 - a null-aware compare
        pl.col("pongs").cast(pl.Int64).sum().alias("pongs"),
        sq("pongs").alias("pongs_sq"),
        pl.col("kongs_direct").cast(pl.Int64).sum().alias("kongs_direct"),
        sq("kongs_direct").alias("kongs_direct_sq"),
        pl.col("kongs_added").cast(pl.Int64).sum().alias("kongs_added"),
        sq("kongs_added").alias("kongs_added_sq"),
        pl.col("kongs_concealed").cast(pl.Int64).sum().alias("kongs_concealed"),
        sq("kongs_concealed").alias("kongs_concealed_sq"),
        pl.col("void").is_not_null().sum().alias("void_declared"),
        (pl.col("void") == "m").sum().alias("void_m"),
        (pl.col("void") == "p").sum().alias("void_p"),
        (pl.col("void") == "s").sum().alias("void_s"),
        pl.col("passed_wins").cast(pl.Int64).sum().alias("passed_wins"),
        pl.col("compulsory_passes").cast(pl.Int64).sum().alias("compulsory_passes"),
        pl.col("win_turn").sum().alias("win_turn_sum"),
        (pl.col("win_turn") ** 2).sum().alias("win_turn_sq"),
        pl.col("win_turn").count().alias("win_turn_n"),
        pl.col("deal_in_turn_sum").sum().alias("deal_in_turn_sum"),
        pl.col("deal_in_turn_sq").sum().alias("deal_in_turn_sq"),
        pl.col("deal_in_turn_n").sum().alias("deal_in_turn_n"),
        pl.col("ready_judged").sum().alias("ready_judged"),
        pl.col("ready").sum().alias("ready_turn_sum"),
        (pl.col("ready") ** 2).sum().alias("ready_turn_sq"),
        pl.col("ready").count().alias("ready_turn_n"),
        (pl.col("ready") <= 6).sum().alias("ready_by_turn_6"),
        pl.col("deal_shanten").sum().alias("deal_shanten_sum"),
        (pl.col("deal_shanten") ** 2).sum().alias("deal_shanten_sq"),
        pl.col("deal_shanten").count().alias("deal_shanten_n"),
    )
    return out.sort("player", "grp", nulls_last=True).collect()


LUCK_CELL = 30  # a cell of fewer seat-hands is not fitted (schemas/METRICS.md#luck)


DRAW_LUCK = ("win", "paid", "ready", "rivals", "kong", "fed")  # player_hands.draw_luck_* (pipeline/game/evidence.py)


def _deal_luck(warehouse_dir: str | Path) -> pl.LazyFrame:
    """Per replayed (hand, seat): ``luck_net``, its net less the deal's luck and the draws' (schemas/METRICS.md#luck),
    written again: the mean net in bases of each cell (profile, base, suits, dealer, deal shanten) less its group's
    (profile, base), times the hand's base; raw where the deal is unknown or the cell small. Then each draw luck
    feature times its slope in the group: the net less the group's mean and the cell's luck, regressed through 0 on
    the feature alone over the seat-hands that have it (a group of 30 or more), rounded to 1e-9."""
    hands = scan(warehouse_dir, "hands").select("hand_id", "base", "suits")
    features = [f"draw_luck_{name}" for name in DRAW_LUCK]
    seats = (
        scan(warehouse_dir, "player_hands")
        .filter(pl.col("replayed"))
        .join(hands, on="hand_id", how="left")
        .with_columns(
            _column(warehouse_dir, "deal_shanten").alias("shanten"),
            pl.col("base").fill_null(1),
            *(_float_column(warehouse_dir, f) for f in features),
        )
        .with_columns(net=pl.col("delta") / pl.col("base"))
    )
    group = ["profile", "base"]
    cell = [*group, "suits", "dealer", "shanten"]
    known = seats.filter(pl.col("shanten").is_not_null()).with_columns(room=pl.col("net").mean().over(group))
    means = known.group_by(cell).agg(
        luck=pl.when(pl.len() >= LUCK_CELL).then(pl.col("net").mean() - pl.col("room").first()).otherwise(0.0)
    )
    drawn = (
        known.join(means, on=cell, how="left", nulls_equal=True)
        .filter(pl.col("draw_luck_win").is_not_null())
        .with_columns(rest=pl.col("net") - pl.col("room") - pl.col("luck"))
    )
    slopes = drawn.group_by(group).agg(
        *(
            pl.when((pl.len() >= LUCK_CELL) & ((pl.col(f) ** 2).sum() > 0))
            .then(((pl.col("rest") * pl.col(f)).sum() / (pl.col(f) ** 2).sum()).round(9))
            .otherwise(0.0)
            .alias(f"b_{f}")
            for f in features
        )
    )
    draw = sum((pl.col(f"b_{f}").fill_null(0.0) * pl.col(f)).fill_null(0.0) for f in features)
    return (
        seats.join(means, on=cell, how="left", nulls_equal=True)
        .join(slopes, on=group, how="left", nulls_equal=True)
        .select(
            "hand_id",
            "seat",
            luck_net=pl.col("delta") - (pl.col("luck").fill_null(0.0) + draw) * pl.col("base"),
        )
    )


def _float_column(warehouse_dir: str | Path, column: str) -> pl.Expr:
    """A player_hands float column, null where the warehouse was written before it."""
    if _has(warehouse_dir, "player_hands", column):
        return pl.col(column)
    return pl.lit(None, dtype=pl.Float64).alias(column)


def _has(warehouse_dir: str | Path, table: str, column: str) -> bool:
    return column in scan(warehouse_dir, table).collect_schema().names()


def _column(warehouse_dir: str | Path, column: str) -> pl.Expr:
    """A player_hands column, null where the warehouse was written before it."""
    return pl.col(column) if _has(warehouse_dir, "player_hands", column) else pl.lit(None, dtype=pl.Int64)


def _turns(warehouse_dir: str | Path) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per (hand, seat): the turn of its first win (``win_turn``), and the sum, sum of squares and count of the
    turns of the tiles it dealt in with; written again from the definition (schemas/METRICS.md#turns) another
    way than the SQL: a running count per seat of the turns it began, and each deal-in found as its discarder's
    last event before the win (an as-of join)."""
    hands = scan(warehouse_dir, "hands").filter(
        pl.col("replayed") & pl.col("level").fill_null("dealt").is_in(["full", "dealt", "observer"])
    )
    ev = (
        scan(warehouse_dir, "events")
        .join(hands.select("hand_id", "dealer"), on="hand_id")
        .sort("hand_id", "idx")
        .with_columns(
            prev_t=pl.col("t").shift(1).over("hand_id"),
            prev_seat=pl.col("seat").shift(1).over("hand_id"),
        )
        .with_columns(
            begins=(pl.col("t") == "pong")
            | ((pl.col("t") == "kong") & (pl.col("kind") == "direct"))
            | (
                (pl.col("t") == "draw")
                & ~((pl.col("prev_t") == "kong") & (pl.col("prev_seat") == pl.col("seat"))).fill_null(False)
            )
        )
        .with_columns(
            turn=pl.col("begins").cast(pl.Int64).cum_sum().over("hand_id", "seat")
            + (pl.col("dealer") == pl.col("seat")).cast(pl.Int64)
        )
    )
    hu = ev.filter(pl.col("t") == "hu")
    win_turn = hu.group_by("hand_id", "seat").agg(pl.col("turn").min().alias("win_turn"))
    fed = (
        hu.filter(pl.col("source").is_not_null())
        .select("hand_id", pl.col("source").alias("seat"), pl.col("idx").alias("hu_idx"))
        .sort("hu_idx")
        .join_asof(
            ev.select("hand_id", "seat", "idx", pl.col("turn").alias("fed_turn")).sort("idx"),
            left_on="hu_idx",
            right_on="idx",
            by=["hand_id", "seat"],
            strategy="backward",
            allow_exact_matches=False,
            check_sortedness=False,  # sorted by idx within each hand and seat (the by groups)
        )
        .unique(["hand_id", "seat", "idx"])  # one tile, however many won on it
    )
    deal_in_turn = fed.group_by("hand_id", "seat").agg(
        pl.col("fed_turn").sum().alias("deal_in_turn_sum"),
        (pl.col("fed_turn") ** 2).sum().alias("deal_in_turn_sq"),
        pl.len().alias("deal_in_turn_n"),
    )
    return win_turn, deal_in_turn


def fan_distribution(warehouse_dir: str | Path) -> pl.DataFrame:
    hands = scan(warehouse_dir, "hands").filter(pl.col("replayed")).select("hand_id")
    wins = scan(warehouse_dir, "wins").join(hands, on="hand_id")
    return wins.group_by("fan").agg(pl.len().alias("wins")).sort("fan").collect()
