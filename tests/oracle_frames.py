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
    joined = ph.join(deal_in, on=["hand_id", "seat"], how="left").with_columns(
        pl.col("points_lost").fill_null(0), pl.col("points_lost_sq").fill_null(0)
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
    )
    return out.sort("player", "grp", nulls_last=True).collect()


def fan_distribution(warehouse_dir: str | Path) -> pl.DataFrame:
    hands = scan(warehouse_dir, "hands").filter(pl.col("replayed")).select("hand_id")
    wins = scan(warehouse_dir, "wins").join(hands, on="hand_id")
    return wins.group_by("fan").agg(pl.len().alias("wins")).sort("fan").collect()
