"""The scoring and rule audit: every difference between the claimed and the recomputed settlement, and every
rule violation, each with the hand and event that prove it and the money involved, ranked by money at stake,
and grouped by code, table, player and month."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from pipeline import sql

FINDING_FIELDS = (
    "hand_id",
    "code",
    "event",
    "seat",
    "player",
    "expected",
    "actual",
    "money",
    "message",
    "position",
    "reason_of",
)
GROUPS = {"code": "code", "table": "table_id", "player": "player", "month": "month"}


@dataclass(frozen=True)
class Audit:
    """The findings, one row per finding ranked by money. A wrong payment's money is counted once, on the
    finding that carries it (SETTLE_* at the win's event, else SCORE_POINTS, else SCORE_FAN); the fan and
    points findings behind it have money 0 and ``reason_of`` naming the carrier's code."""

    findings: pl.DataFrame

    def as_json(self) -> list[dict[str, Any]]:
        """The contract: one object per finding, ``[{"hand_id", "code", "event", "seat", "player", "expected",
        "actual", "money", "message", "position", "reason_of"}]``."""
        return self.findings.select(FINDING_FIELDS).to_dicts()

    def mistakes(self) -> pl.DataFrame:
        """Each mistake once, in the audit's order: the findings that are no other finding's reason, with
        ``reasons`` (the codes of the findings behind it — same hand and code it names, same event where the
        carrier has one — joined by ", "; null when there are none)."""
        f = self.findings
        carriers = f.filter(pl.col("reason_of").is_null()).with_row_index("_order")
        behind = f.filter(pl.col("reason_of").is_not_null()).select(
            "hand_id", pl.col("reason_of").alias("code"), pl.col("event").alias("_event"), pl.col("code").alias("_by")
        )
        reasons = (
            carriers.select("_order", "hand_id", "code", "event")
            .join(behind, on=["hand_id", "code"])
            .filter(pl.col("event").is_null() | (pl.col("event") == pl.col("_event")))
            .filter(pl.col("_by") != pl.col("code"))
            .group_by("_order")
            .agg(pl.col("_by").unique().sort().str.join(", ").alias("reasons"))
        )
        return carriers.join(reasons, on="_order", how="left").sort("_order").drop("_order")

    def grouped(self, by: str) -> pl.DataFrame:
        """Findings and money per code, table, player or month, most money first."""
        column = GROUPS[by]
        return (
            self.findings.group_by(column)
            .agg(
                pl.len().alias("findings"),
                pl.col("hand_id").n_unique().alias("hands"),
                pl.col("money").sum().alias("money"),
            )
            .sort(["money", "findings", column], descending=[True, True, False], nulls_last=True)
        )


def audit(con: duckdb.DuckDBPyConnection) -> Audit:
    """The audit of the warehouse behind ``con`` (:func:`pipeline.analytics.queries.connect`)."""
    return Audit(sql.run_sql(con, "pipeline.audit", "findings"))
