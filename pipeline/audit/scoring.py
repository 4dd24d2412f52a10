"""The scoring and rule audit: every difference between the claimed and the recomputed settlement, and every
rule violation, each with the hand and event that prove it and the money involved, ranked by money at stake,
and grouped by code, table, player and month.

Money is in points, and every finding carries its hand's ``base`` (底, :mod:`pipeline.analytics.scales`): where
hands of different bases meet (a majsoul room at base 1,000 beside Chinese rooms at base 1), money is ranked,
added up and compared in bases (points ÷ base), and the totals say so (:meth:`Audit.stake_text`). A warehouse of
one base ranks and adds up points as it always did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from pipeline import sql
from pipeline.analytics.runs import bounded
from pipeline.analytics.scales import amount

FINDING_FIELDS = (
    "hand_id",
    "code",
    "event",
    "seat",
    "player",
    "expected",
    "actual",
    "money",
    "base",
    "message",
    "position",
    "reason_of",
)
GROUPS = {"code": "code", "table": "table_id", "player": "player", "month": "month"}


# A finding's money in bases (底): its points over its hand's base, the one unit of hands of different bases.
IN_BASES = pl.col("money") / pl.col("base")


@dataclass(frozen=True)
class Audit:
    """The findings, one row per finding ranked by money in bases (``money`` ÷ ``base``; then by money: in a
    warehouse of one base, by money). A wrong payment's money is counted once, on the finding that carries it
    (SETTLE_* at the win's event, else SCORE_POINTS, else SCORE_FAN); the fan and points findings behind it
    have money 0 and ``reason_of`` naming the carrier's code."""

    findings: pl.DataFrame

    def as_json(self) -> list[dict[str, Any]]:
        """The contract: one object per finding, ``[{"hand_id", "code", "event", "seat", "player", "expected",
        "actual", "money", "base", "message", "position", "reason_of"}]``."""
        return self.findings.select(FINDING_FIELDS).to_dicts()

    @property
    def bases(self) -> list[int]:
        """The distinct bases of the findings' hands, largest first."""
        return sorted({int(b) for b in self.findings["base"].drop_nulls().to_list()}, reverse=True)

    @property
    def mixed(self) -> bool:
        """Do the findings' hands have more than one base? Then their money is added up in bases."""
        return len(self.bases) > 1

    def stake_text(self) -> str:
        """The money at stake, in words, for every page and output that gives the total: ``N points at stake``
        where the findings' hands share one base; else the total in bases and the points at each base.

        >>> frame = pl.DataFrame({"money": [1000, 2000, 1, 0], "base": [1000, 1000, 1, 1]})
        >>> Audit(frame).stake_text()
        "4 bases at stake (points ÷ each hand's base): 3,000 points at base 1,000, 1 at base 1"
        >>> Audit(frame.tail(2)).stake_text(), Audit(frame.head(0)).stake_text()
        ('1 point at stake', '0 points at stake')
        """
        f = self.findings
        points = int(f["money"].sum() or 0)
        if not self.mixed:
            return f"{amount(points)} point{'' if points == 1 else 's'} at stake"
        per = f.group_by("base").agg(pl.col("money").sum()).sort("base", descending=True)
        bases = sum(int(m or 0) / int(b) for b, m in per.iter_rows())  # each base's points divided once
        parts = [f"{amount(int(m or 0))} at base {int(b):,}" for b, m in per.iter_rows()]
        parts[0] = parts[0].replace(" at base", " points at base", 1)
        word = "base" if bases == 1 else "bases"
        return f"{amount(bases)} {word} at stake (points ÷ each hand's base): {', '.join(parts)}"

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
        """Findings and money per code, table, player or month: ``findings``, ``hands``, ``money`` (points) and
        ``bases`` (the money in bases: each finding's points ÷ its hand's base), most money in bases first (then
        in points: in a warehouse of one base, most money first)."""
        column = GROUPS[by]
        return (
            self.findings.group_by(column)
            .agg(
                pl.len().alias("findings"),
                pl.col("hand_id").n_unique().alias("hands"),
                pl.col("money").sum().alias("money"),
                IN_BASES.sum().alias("bases"),
            )
            .sort(["bases", "money", "findings", column], descending=[True, True, True, False], nulls_last=True)
        )


def audit(con: duckdb.DuckDBPyConnection) -> Audit:
    """The audit of the warehouse behind ``con`` (:func:`pipeline.analytics.queries.connect`). Its findings are
    the ``issues`` view's, whose session checks are a window over every hand: :func:`bounded` holds its memory."""
    return Audit(bounded(con, lambda: sql.run_sql(con, "pipeline.audit", "findings")))
