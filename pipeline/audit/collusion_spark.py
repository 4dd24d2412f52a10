"""The collusion screen on Spark (``xuezhan collusion --engine spark``): :class:`SparkSource`, the pair features of
a warehouse counted in Spark tasks and kept on the executors, every pass of the screen a Spark job.

The screen is not one SQL aggregate, as the other screens' heavy pass is (:mod:`pipeline.analytics.spark`): the
local path (:class:`~pipeline.audit.collusion.WarehouseSource`) reads a run of hands at a time, counts it into
per-hand pair rows in NumPy, sums the hazard and every pair's counts over the runs, then gives every run's rows
their baselines and reads them again on every later pass, each pass a sum over the runs
(:meth:`~pipeline.audit.collusion.FeatureSource.fold`). Here the same steps run where the rows are:

1. **The runs, in tasks.** :meth:`~pipeline.analytics.spark.SparkModels.runs` cuts the hands in scope into the runs
   the local path reads (``chunk_hands`` hands in file order) and brings each run's rows of the tables
   :func:`~pipeline.audit.collusion.pair_streams` names into one task, where they are registered in a DuckDB of the
   task's own and read by the same ``sql/pair_events.sql`` and ``sql/pair_hands.sql``
   (:func:`~pipeline.audit.collusion.read_run`) and counted by the same
   :func:`~pipeline.audit.collusion.first_of_run`. The driver receives each run's hazard tallies and pair sums
   (one row a pair that sat together in the run, never a row a hand) and adds them up, in the runs' order.
2. **The baselines, on the executors.** The hazard (walls × outcomes) and the screened pairs' keys are broadcast;
   each task gives its run's rows their baselines (:func:`~pipeline.audit.collusion._with_baselines`) and the rows
   stay on the executors (persisted), each run's pairs' exposures sent to the driver
   (:func:`~pipeline.audit.collusion.exposure_part`) and added there in the runs' order.
3. **Every later pass a job.** :meth:`SparkSource.fold` sends the pass's fold (the null's moments under a fit, the
   refit without the flagged pairs and each flagged pair's own judgement, each round of the team screen) to the
   executors; each task folds its run into sums of the pass's own (per screened pair, per candidate group) and the
   driver merges them in the runs' order.

The same runs, each counted by the same code, every pass's runs added in the same order; and a pass adds to each
of its sums at most once a run (:meth:`~pipeline.audit.collusion.FeatureSource.fold`), so a run folded into zeros
and merged adds the number it adds folded into the total on one machine: the same floats added in the same order,
and the screen's output is the local path's, byte for byte
(``tests/test_spark_screens.py``), under a filter too (the local path reads the hands in scope in file order as
well: :func:`pipeline.analytics.runs.read_runs`). Where the local path cannot read the runs in file order (a table
truly out of the order of ``hands``: :func:`pipeline.analytics.runs.each_run` falls back to ranges of ids) its
runs differ past one run, and the sums agree to rounding.

What the driver keeps: its DuckDB connection for the light queries (the hands and players in scope, the hands by
level, the evidence of the flagged pairs and teams: ``sql/pair_evidence.sql``) and the victim view
(:func:`pipeline.audit.victims.victim_view`, ``sql/net_flows.sql`` over ``payments`` and ``player_hands``), which
is not a fold of the pair rows and runs on DuckDB a run at a time, as locally; and the statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.analytics.runs import Run
from pipeline.analytics.spark import SparkModels
from pipeline.audit.collusion import (
    CHUNK_HANDS,
    OUTCOMES,
    WALLS,
    FeatureSource,
    FirstRun,
    Rows,
    S,
    _SparseSums,
    _with_baselines,
    add_exposures,
    exposure_part,
    first_of_run,
    hazard_rates,
    pair_streams,
    read_run,
    replayed_players,
)


class SparkSource(FeatureSource):
    """The pair features of the warehouse behind ``models`` (:class:`~pipeline.analytics.spark.SparkModels` over
    the snapshot of ``con``, the driver's connection), ``chunk_hands`` hands a run, counted and kept on Spark's
    executors (see the module); ``on_hands(done, total)`` hears the hands counted once the first pass is in.
    :meth:`close` drops the rows kept."""

    def __init__(
        self,
        models: SparkModels,
        con: duckdb.DuckDBPyConnection,
        chunk_hands: int = CHUNK_HANDS,
        on_hands: Callable[[int, int], None] | None = None,
    ) -> None:
        self.hands, players = replayed_players(con)
        code = {name: k for k, name in enumerate(players)}
        context = models.session.sparkContext
        if on_hands is not None:
            on_hands(0, self.hands)
        first = models.runs(pair_streams(con), chunk_hands).mapValues(partial(_first_of, code)).persist()
        self._kept: list[Any] = [first]
        try:
            hazard, chances = np.zeros((WALLS, len(OUTCOMES))), np.zeros((WALLS, len(OUTCOMES)))
            total, done = _SparseSums(), 0
            for _, (run_hazard, run_chances, part, hands) in _in_order(first.mapValues(_tallies)):
                hazard += run_hazard
                chances += run_chances
                total.add(part)
                done += hands
            rate = hazard_rates(hazard, chances)
            pairs = total.total["key"] if total.total else np.zeros(0, dtype=np.int64)
            shared = context.broadcast((rate, pairs, len(players)))
            self._kept.append(shared)
            rows = first.mapValues(partial(_baselined, shared)).filter(lambda run: len(run[1].hand) > 0).persist()
            self._kept.append(rows)
            for _, (used, sums) in _in_order(rows.mapValues(partial(_exposures, shared))):
                add_exposures(total, used, sums)
        except BaseException:
            self.close()
            raise
        first.unpersist()  # the rows with their baselines are kept, and were made from it
        self._rows = rows
        self.hazard = rate
        self.sums = total.pair_sums(players)
        if on_hands is not None:
            on_hands(done, self.hands)

    def chunks(self) -> Iterator[Rows]:
        """Each run's rows, brought to the driver one run at a time (for the tests: the passes fold them where
        they are kept)."""
        for _, rows in self._rows.toLocalIterator():
            yield rows

    def fold(
        self,
        zero: Callable[[], S],
        add: Callable[[S, Rows], None],
        merge: Callable[[S, S], None],
        on_share: Callable[[float], None] | None = None,
    ) -> S:
        """:meth:`FeatureSource.fold` on Spark: ``zero`` and ``add`` sent to the executors, each run folded into
        zeros in its task, every run at once; the runs' sums brought to the driver one partition at a time and
        merged into the total in the runs' order: the floats of the local fold, which adds to each sum at most once
        a run. ``on_share`` hears 1 once all are in."""
        total = zero()
        for _, part in _in_order(self._rows.mapValues(partial(_folded, zero, add))):
            merge(total, part)
        if on_share is not None:
            on_share(1.0)
        return total

    def close(self) -> None:
        for kept in self._kept:
            kept.unpersist()
        self._kept = []

    def __enter__(self) -> SparkSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _in_order(rdd: Any) -> Iterator[tuple[int, Any]]:
    """The values of an RDD of :meth:`SparkModels.runs`' runs, every run computed at once (in parallel) and then
    brought to the driver one partition at a time, in the runs' order (partition ``k`` holds run ``k``)."""
    kept = rdd.persist()
    try:
        kept.count()
        yield from kept.toLocalIterator()
    finally:
        kept.unpersist()


# ------------------------------------------------------------------------------------------ tasks
def _first_of(code: dict[str, int], tables: dict[str, pa.Table]) -> FirstRun:
    """A task's run (its rows of each table, :meth:`SparkModels.runs`) read as the local path reads a run: the
    rows registered in a DuckDB of the task's own, read by ``sql/pair_events.sql`` and ``sql/pair_hands.sql``
    over the run's range of ids (its least and greatest, which keeps every row), and counted."""
    hands = tables["hands"].column("hand_id")
    with duckdb.connect() as con:
        con.execute("SET enable_progress_bar = false")
        for name, table in tables.items():
            con.register(name, table)
        lo, hi = pc.min_max(hands).values()  # a run holds one hand at least
        events, replayed = read_run(Run(con, lo.as_py(), hi.as_py(), len(hands)))
    return first_of_run(events, replayed, code)


def _tallies(run: FirstRun) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], int]:
    """What the driver adds up of a run's first pass: the hazard's tallies, the pairs' sums, the hands."""
    return run.hazard, run.chances, run.part, run.hands


def _baselined(shared: Any, run: FirstRun) -> Rows:
    """A run's rows with the baselines of the hazard broadcast in ``shared`` (``(rate, pairs, players)``)."""
    return _with_baselines(run.rows, run.extra, shared.value[0])


def _exposures(shared: Any, rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    _, pairs, players = shared.value
    return exposure_part(rows, pairs, players)


def _folded(zero: Callable[[], S], add: Callable[[S, Rows], None], rows: Rows) -> S:
    part = zero()
    add(part, rows)
    return part
