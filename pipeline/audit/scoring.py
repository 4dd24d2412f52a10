"""The scoring and rule audit: every difference between the claimed and the recomputed settlement, and every
rule violation, each with the hand and event that prove it and the money involved, ranked by money at stake,
and grouped by code, table, player and month.

Each wrong payment's money is counted once: a claimed win's wrong fan or points (SCORE_FAN, SCORE_POINTS) is
the reason for the wrong payments of that win, so when a settlement finding of the same win carries the money,
the score finding carries none and names that finding in ``counted_in`` (``pipeline/audit/sql/findings.sql``).
Totals and rankings over ``money`` therefore add each wrong payment once."""

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
    "counted_in",
)
GROUPS = {"code": "code", "table": "table_id", "player": "player", "month": "month"}


@dataclass(frozen=True)
class Audit:
    findings: pl.DataFrame  # one row per finding, ranked by money

    def as_json(self) -> list[dict[str, Any]]:
        """The contract: one object per finding,
        ``[{"hand_id", "code", "event", "seat", "player", "expected", "actual", "money", "message", "position",
        "counted_in"}]`` (``counted_in``: for a wrong fan or points whose money a settlement finding of the same
        win carries, that finding's code; its own ``money`` is then 0)."""
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
