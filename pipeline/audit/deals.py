"""Stacked deals: a screen for players, table seats, tables and sessions dealt better hands than a fair wall deals.

A stacked deal (the seeds' court case, seed 000: a team at an automatic table lifting and rubbing tiles, 提牌
and 搓牌, to rig the wall) leaves its mark where the record keeps the wall or the deal (levels full and dealt):
the hands the favoured player is dealt start closer to ready than chance allows. The score of a dealt hand is
its starting shanten (:func:`~pipeline.rules.hand.deal_shanten`: tile changes from ready, the best over the void
suit at a table of three suits), stored at ingest as ``player_hands.deal_shanten``.

**The null is exact, not fitted.** With a fair shuffle a seat's 13 tiles (the dealer's 14) are a uniformly
random subset of the wall, whoever sits there and whatever the other hands hold; the distribution of their
shanten is a count of subsets (:mod:`pipeline.audit.deal_null`, exact integers per number of suits in play and
deal size). Unlike the collusion and information screens, no honest player's style enters it: a careful or a
reckless player is dealt the same tiles, so honest players cannot be hard negatives here, and the screen needs
no population to compare with: one player's hands are enough.

**The test.** Per group (a player; a seat of a table, for an automatic table rigged for one place; a table; a
session) the sum of its hands' starting shanten is compared with the exact distribution of the sum of as many
fair deals of the same shapes (the convolution of the per-hand distributions: hands are independent, the walls
being shuffled anew). The p-value is the lower tail ``P(S <= s)``: exact, so valid at any size, and
conservative where the sum is discrete. q-values are Benjamini–Yekutieli within each kind of group (a player's
hands are also their tables' and sessions': the tests are dependent). Groups with fewer than ``min_hands``
dealt hands are not tested.

**Power.** A fair deal's shanten has mean 3.21 and sd 0.74 (13 tiles, three suits). A deal stacked as the
simulator does it (the better of two random deals, ``simulate --inject stack=N:I``) is better in 31% of stacked
hands and 0.39 of a step better on average, so a player stacked in a share ``I`` of ``n`` hands is
``0.39·I·√n / 0.74`` standard errors below the null: at ``I = 0.4`` over 500 hands, 4.7; at 0.3, 3.5; the
number of hands needed grows as ``1 / I²``.

**Evidence.** Each flagged group lists its best-dealt hands (``xuezhan replay HAND --warehouse W`` shows each
deal) and, beside the shanten, the mean tiles outside the shortest suit against a fair deal's, as context.

>>> r = group_test([("3x13", 400), ("3x14", 100)], 1506)  # 500 hands, 60 steps of shanten better than fair
>>> round(r.expected, 1), round(r.z, 2), f"{r.p:.1e}"
(1566.1, -3.6, '1.9e-04')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import groupby
from operator import itemgetter
from typing import Any

import duckdb
import numpy as np
import polars as pl

from pipeline import sql
from pipeline.analytics.stats import by_qvalues
from pipeline.audit.deal_null import DealNull, key, load, lower_tail
from pipeline.game.commitment import STATUSES, commitments_line

KINDS = ("player", "seat", "table", "session")
MIN_HANDS = 20
FDR = 0.05
EVIDENCE = 5
Z95 = 1.959963984540054


class NoDealScores(ValueError):
    """The warehouse's tables predate the deal scores (``player_hands.deal_shanten``)."""


@dataclass(frozen=True, slots=True)
class GroupTest:
    """The test of one group's hands: the observed sum of starting shanten against fair deals."""

    hands: int
    shanten: int
    expected: float
    sd: float
    p: float

    @property
    def z(self) -> float:
        return (self.shanten - self.expected) / self.sd if self.sd else 0.0


def group_test(
    shapes: Sequence[tuple[str, int]], shanten: int, null: DealNull | None = None, *, exact: bool = True
) -> GroupTest:
    """The exact test of a group whose hands are ``shapes`` (``(key, how many)``, :func:`~pipeline.audit.
    deal_null.key`) and whose starting shanten sum to ``shanten``; ``exact=False``: the mean and sd only (a group
    too small to test), ``p`` NaN."""
    null = null or load()
    mean = var = 0.0
    for name, n in shapes:
        m, v = _moments(null, name)
        mean += n * m
        var += n * v
    p = lower_tail(null, shapes, shanten) if exact else math.nan
    return GroupTest(sum(n for _, n in shapes), shanten, mean, math.sqrt(var), p)


@cache
def _moments(null: DealNull, name: str) -> tuple[float, float]:
    """The mean and variance of one fair deal's starting shanten, of shape ``name``."""
    pmf = null.pmf(name)
    values = np.arange(len(pmf)) - 1
    m = float(np.dot(pmf, values))
    return m, float(np.dot(pmf, values**2)) - m * m


@dataclass(frozen=True, slots=True)
class DealResult:
    """One group's line of the screen."""

    kind: str  # player | seat | table | session
    group: str
    hands: int
    shanten: int  # the sum of its hands' starting shanten
    expected: float  # what fair deals of the same shapes give, on average
    z: float
    p: float | None  # None: fewer than min_hands hands, not tested
    suited: float | None  # mean tiles outside the shortest suit (tables of three suits)
    suited_expected: float | None
    q: float | None = None
    flagged: bool = False
    evidence: list[dict[str, Any]] = field(default_factory=list)
    sd: float = 0.0  # of the sum under fair deals of the same shapes (exact)

    @property
    def mean(self) -> float:
        return self.shanten / self.hands if self.hands else 0.0

    def deal_luck(self) -> tuple[float, float, float] | None:
        """The group's deal luck: steps of starting shanten per hand better than fair deals of the same shapes
        give on average (positive: dealt closer to ready than chance), with a 95% interval from the fair
        deals' exact spread (None: no hand).

        >>> r = DealResult("player", "p1", 100, 300, 321.1, -2.8, 0.003, None, None, sd=7.4)
        >>> [round(v, 3) for v in r.deal_luck()]
        [0.211, 0.066, 0.356]
        """
        if not self.hands:
            return None
        luck = (self.expected - self.shanten) / self.hands
        half = Z95 * self.sd / self.hands
        return luck, luck - half, luck + half

    def as_dict(self) -> dict[str, Any]:
        luck = self.deal_luck()
        return {
            "kind": self.kind,
            "group": self.group,
            "hands": self.hands,
            "shanten": self.shanten,
            "mean_shanten": self.mean,
            "expected_mean": self.expected / self.hands if self.hands else None,
            "deal_luck": luck[0] if luck else None,
            "deal_luck_low": luck[1] if luck else None,
            "deal_luck_high": luck[2] if luck else None,
            "z": self.z,
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
            "suited": self.suited,
            "suited_expected": self.suited_expected,
            "evidence": self.evidence,
        }


@dataclass(frozen=True, slots=True)
class Commitments:
    """The hands whose wall was committed before play (hands.wall_commitment), by what the commitment proved
    (:data:`pipeline.game.commitment.STATUSES`): where a seed was revealed, a stacked wall is proved or ruled out
    hand by hand, with no statistics; ``faulty`` lists the first hands of each failed status."""

    counts: dict[str, int]
    faulty: dict[str, list[str]]

    @property
    def hands(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        return sum(n for status, n in self.counts.items() if status.endswith("_mismatch"))

    def line(self) -> str:
        return commitments_line(self.counts)

    def rows(self) -> list[tuple[str, int, str, list[str]]]:
        """(status, hands, what it means, the first failed hands) for each status present, in
        :data:`~pipeline.game.commitment.STATUSES` order."""
        return [
            (k, self.counts[k], meaning, self.faulty.get(k, [])) for k, meaning in STATUSES.items() if k in self.counts
        ]

    def as_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "faulty": self.faulty}


def commitments(con: duckdb.DuckDBPyConnection, *, limit: int = EVIDENCE) -> Commitments:
    """The wall commitments of the warehouse behind ``con`` (none in one ingested before hands.wall_commitment)."""
    columns = {row[0] for row in con.sql("DESCRIBE hands").fetchall()}
    if "wall_commitment" not in columns:
        return Commitments({}, {})
    frame = sql.run_sql(con, "pipeline.audit", "wall_commitments", limit=limit)
    counts = {r["status"]: int(r["hands"]) for r in frame.iter_rows(named=True)}
    faulty = {
        r["status"]: list(r["first_hands"]) for r in frame.iter_rows(named=True) if r["status"].endswith("_mismatch")
    }
    return Commitments(counts, faulty)


def screen_deals(
    con: duckdb.DuckDBPyConnection,
    *,
    fdr: float = FDR,
    min_hands: int = MIN_HANDS,
    evidence: int = EVIDENCE,
    kinds: Iterable[str] = KINDS,
    models: sql.Models | None = None,
) -> list[DealResult]:
    """The screen of the warehouse behind ``con``: per kind of group (in :data:`KINDS` order), flagged first,
    then by p-value; the untested groups last. Each flagged group carries its ``evidence`` best-dealt hands.

    ``models``: where the passes over ``player_hands`` run (the check that the deals were scored, and
    ``sql/deal_groups.sql``): on ``con`` by default; ``--engine spark``'s
    :class:`pipeline.analytics.spark.SparkModels`. The tests and the evidence run on ``con``."""
    null = load()
    models = models or sql.DuckDBModels(con)
    # A warehouse made before ingest kept the scores shows the column as nulls (its views add the columns its files
    # lack): its dealt hands have none, where every dealt hand of a newer one has them. A bare connection whose
    # player_hands has no such column at all is older still.
    columns = {row[0] for row in con.sql("DESCRIBE player_hands").fetchall()}
    dealt, scored = (
        models.query(
            "SELECT count(*) AS dealt, count(p.deal_shanten) AS scored FROM player_hands AS p "
            "JOIN hands AS h ON h.hand_id = p.hand_id WHERE coalesce(h.level, 'dealt') IN ('full', 'dealt')"
        ).row(0)
        if "deal_shanten" in columns
        else (1, 0)
    )
    if dealt and not scored:
        raise NoDealScores(
            "the warehouse was made before ingest kept each deal's shanten (player_hands.deal_shanten): ingest its "
            "sources into a new warehouse to screen their deals"
        )
    frame = models.run("pipeline.audit", "deal_groups")
    shape_columns = ["grp", "suits", "size", "hands", "shanten", "suited", "suited_hands"]
    out: list[DealResult] = []
    for kind in kinds:
        # a group's rows are consecutive (the model orders by kind, group, shape): each group is tested as it
        # is read, never every group of the warehouse held as Python objects at once (on 200k hands the screen
        # peaked at 435 MB that way, 376 MB now)
        rows = frame.filter(pl.col("kind") == kind).select(shape_columns).iter_rows()
        lines = [_line(kind, name, list(shapes), null, min_hands) for name, shapes in groupby(rows, itemgetter(0))]
        out.extend(_corrected(con, lines, fdr, evidence))
    return out


def _line(kind: str, name: str, rows: list[tuple[Any, ...]], null: DealNull, min_hands: int) -> DealResult:
    """The line of one group from its rows of ``sql/deal_groups.sql`` (one per shape: group, suits, size, hands,
    shanten, suited, suited_hands), tested exactly when it has ``min_hands`` hands."""
    shapes = [(key(suits, size), hands) for _, suits, size, hands, *_ in rows]
    shanten = sum(r[4] for r in rows)
    suited = sum(r[5] for r in rows)
    n_suited = sum(r[6] for r in rows)
    suited_exp = 0.0
    for (shape, _), r in zip(shapes, rows, strict=True):
        suited_exp += r[6] * (null.suited_mean(shape) or 0.0)
    tested = sum(n for _, n in shapes) >= min_hands
    t = group_test(shapes, shanten, null, exact=tested)
    return DealResult(
        kind=kind,
        group=name,
        hands=t.hands,
        shanten=t.shanten,
        expected=t.expected,
        z=t.z,
        p=t.p if tested else None,
        suited=suited / n_suited if n_suited else None,
        suited_expected=suited_exp / n_suited if n_suited else None,
        sd=t.sd,
    )


def _corrected(con: duckdb.DuckDBPyConnection, lines: list[DealResult], fdr: float, evidence: int) -> list[DealResult]:
    """One kind's lines with their Benjamini–Yekutieli q-values, flags and evidence, in the screen's order."""
    tested = [r for r in lines if r.p is not None]
    q_values = by_qvalues(np.array([r.p for r in tested], dtype=float)).tolist() if tested else []
    qs = {r.group: q for r, q in zip(tested, q_values, strict=True)}
    flagged = {r.group for r in tested if qs[r.group] <= fdr}
    shown: dict[str, list[dict[str, Any]]] = {}
    if flagged and evidence:
        kind = tested[0].kind
        rows = sql.run_sql(con, "pipeline.audit", "deal_evidence", kind=kind, grps=sorted(flagged), limit=evidence)
        for row in rows.iter_rows(named=True):
            shown.setdefault(row.pop("grp"), []).append(row)
    out = []
    for r in lines:
        q = qs.get(r.group)
        out.append(
            DealResult(
                r.kind,
                r.group,
                r.hands,
                r.shanten,
                r.expected,
                r.z,
                r.p,
                r.suited,
                r.suited_expected,
                q,
                r.group in flagged,
                shown.get(r.group, []),
                r.sd,
            )
        )
    return sorted(out, key=lambda r: (not r.flagged, r.p if r.p is not None else 2.0, r.group))
