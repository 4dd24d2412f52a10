"""The collusion screen's one entry point, :func:`screen`: the pair screen (:mod:`pipeline.audit.collusion`) and,
asked for, the group screen of teams (:mod:`pipeline.audit.teams`) over one reading of the hands, returned whole as
one value (:class:`Screening`) with the threshold it used and the hands each pair shared.

The hands are read from a warehouse (a DuckDB connection: :class:`~pipeline.audit.collusion.WarehouseSource`, a run
of hands at a time; or Spark's tasks over its files: :class:`~pipeline.audit.collusion_spark.SparkSource`), from
pair features in memory (a frame of ``sql/pair_features.sql``), or from a source already open. ``fallback``: when
no pair reaches the threshold asked for, a smaller one is used (:func:`choose_min_hands`), and the value says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import duckdb
import polars as pl

from pipeline.audit.collusion import (
    CHUNK_HANDS,
    FeatureSource,
    FrameSource,
    PairResult,
    Progress,
    WarehouseSource,
    _screen_pairs,
    pairs_evidence,
)
from pipeline.audit.teams import TeamResult, _screen_teams

FALLBACKS = (100, 50, 20)  # thresholds tried, largest first, when no pair reaches the one asked for
_NO_PAIRS = {"player_a": pl.String, "player_b": pl.String, "shared_hands": pl.Int64}


@dataclass(frozen=True, slots=True)
class Screening:
    """A collusion screen: ``requested`` the threshold of shared hands asked for, ``min_hands`` the one used;
    ``fdr`` the false discovery rate of the flags; ``shared``: every pair that shared a hand (``player_a <
    player_b``, ``shared_hands``, most first); ``pairs``: the pair screen's results, best first, each flagged
    pair (and the best one) with its hands to replay; ``groups``: the group screen's results (pairs and groups of
    three, best first; empty unless asked for), each reported team with its pairs' hands to replay."""

    requested: int
    min_hands: int
    fdr: float
    shared: pl.DataFrame
    pairs: tuple[PairResult, ...]
    groups: tuple[TeamResult, ...] = ()

    @property
    def teams(self) -> tuple[TeamResult, ...]:
        """The teams the group screen reports (three players or more), best first."""
        return tuple(t for t in self.groups if t.reported and len(t.players) >= 3)

    @property
    def flagged(self) -> tuple[PairResult, ...]:
        return tuple(r for r in self.pairs if r.flagged)


def screen(
    data: duckdb.DuckDBPyConnection | FeatureSource | pl.DataFrame,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    min_hands: int = 200,
    fallback: bool = False,
    fdr: float = 0.05,
    evidence: int = 5,
    teams: bool = False,
    progress: Progress | None = None,
    chunk_hands: int = CHUNK_HANDS,
    models: Any = None,
) -> Screening:
    """Screen every pair of ``data`` (a warehouse's connection, pair features, or an open source) that shared at
    least ``min_hands`` hands (``fallback``: or the threshold of :func:`choose_min_hands`), and with ``teams`` every
    group of three too, over the same reading; up to ``evidence`` hands to replay per flagged pair and per pair
    inside a reported team, read from ``con`` (``data`` itself when it is a connection). ``progress``: see
    :data:`~pipeline.audit.collusion.Progress`; ``chunk_hands``: hands read at a time. ``models``: a
    :class:`~pipeline.analytics.spark.SparkModels` over the connection's snapshot, to count the hands and run
    every pass over them on Spark (:class:`~pipeline.audit.collusion_spark.SparkSource`: the same result)."""
    if isinstance(data, duckdb.DuckDBPyConnection):
        on_hands = None if progress is None else (lambda done, total: progress("hands", done, total))
        if models is not None:
            from pipeline.audit.collusion_spark import SparkSource

            with SparkSource(models, data, chunk_hands, on_hands) as spark:
                return _screen(spark, con or data, min_hands, fallback, fdr, evidence, teams, progress)
        with WarehouseSource(data, chunk_hands, on_hands) as source:
            return _screen(source, con or data, min_hands, fallback, fdr, evidence, teams, progress)
    if isinstance(data, pl.DataFrame):
        if data.is_empty():
            return Screening(min_hands, min_hands, fdr, pl.DataFrame(schema=_NO_PAIRS), ())
        data = FrameSource(data, chunk_hands)
    return _screen(data, con, min_hands, fallback, fdr, evidence, teams, progress)


def _screen(
    source: FeatureSource,
    con: duckdb.DuckDBPyConnection | None,
    requested: int,
    fallback: bool,
    fdr: float,
    evidence: int,
    teams: bool,
    progress: Progress | None,
) -> Screening:
    shared = source.sums.shared()
    used = choose_min_hands(shared["shared_hands"].to_list(), requested) if fallback else requested
    pairs = _screen_pairs(source, con, min_hands=used, fdr=fdr, evidence=evidence, progress=progress)
    groups = _screen_teams(source, min_hands=used, fdr=fdr) if teams else []
    if con is not None and evidence:  # each reported team's pairs' hands, in the value made for it (one query)
        reported = [t for t in groups if t.reported and len(t.players) >= 3]
        found = pairs_evidence(con, [(a, b) for t in reported for a, b in combinations(t.players, 2)], limit=evidence)
        groups = [
            replace(t, evidence=[e for pair in combinations(t.players, 2) for e in found[pair]])
            if t.reported and len(t.players) >= 3
            else t
            for t in groups
        ]
    return Screening(requested, used, fdr, shared, tuple(pairs), tuple(groups))


def choose_min_hands(shared: Sequence[int], requested: int) -> int:
    """The threshold the screen uses with ``fallback``.

    ``requested`` when any pair reaches it (or when no pair shared a hand at all). Otherwise the largest of
    :data:`FALLBACKS` below it that at least a quarter of the pairs reach — a screen of a pair or two says
    little about a room, and the report's heat map should colour a good part of it — and failing that the
    smallest fallback: below 20 shared hands the screen's normal approximation to its permutation null is too
    rough to trust its tail, so it does not go lower (and may then screen nothing).

    >>> choose_min_hands([135, 60, 40, 30, 20], 200), choose_min_hands([250, 10], 200)
    (50, 200)
    >>> choose_min_hands([3, 2], 200)
    20
    """
    if not shared or max(shared) >= requested:
        return requested
    steps = [f for f in FALLBACKS if f < requested]
    if not steps:
        return requested
    for step in steps:
        if 4 * sum(s >= step for s in shared) >= len(shared):
            return step
    return steps[-1]
