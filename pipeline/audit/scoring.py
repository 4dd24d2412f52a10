"""The scoring and rule audit: every difference between the claimed and the recomputed settlement, and every
rule violation, each with the hand and event that prove it and the money involved, ranked by money at stake,
and grouped by code, table, player and month."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from pipeline import sql

FINDING_FIELDS = ("hand_id", "code", "event", "seat", "player", "expected", "actual", "money", "message", "position")
GROUPS = {"code": "code", "table": "table_id", "player": "player", "month": "month"}


@dataclass(frozen=True)
class Audit:
    findings: pl.DataFrame  # one row per finding, ranked by money

    def as_json(self) -> list[dict[str, Any]]:
        """The contract: one object per finding,
        ``[{"hand_id", "code", "event", "seat", "player", "expected", "actual", "money", "message"}]``."""
        return self.findings.select(FINDING_FIELDS).to_dicts()

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
