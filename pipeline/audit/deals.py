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

**Memory.** The groups grow with the warehouse (a session, a table, four seats: 437,524 groups on 1M simulated
hands), so nothing holds them all: the sums are read a run of hands at a time (:func:`deal_screen`), each run's
rows go to a DuckDB store of the screen's own in a temporary folder (:class:`DealScreen`, spilling to disk past
:data:`STORE_MEMORY`), come back sorted a group at a time to be tested, and the lines are read back in the
screen's order a few at a time; only each kind's p-values are held (for the q-values), 8 bytes a group.

>>> r = group_test([("3x13", 400), ("3x14", 100)], 1506)  # 500 hands, 60 steps of shanten better than fair
>>> round(r.expected, 1), round(r.z, 2), f"{r.p:.1e}"
(1566.1, -3.6, '1.9e-04')
"""

from __future__ import annotations

import math
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from functools import cache
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from pipeline import sql
from pipeline.analytics.runs import Run, Stream, each_run
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


CHUNK_HANDS = 10_000  # hands a run of the deal sums reads at a time: what the pass's memory grows with
STORE_MEMORY = "64MB"  # what the store of the groups' sums and lines holds in memory before it spills to its folder
LINES_AT_ONCE = 20_000  # groups' lines written to the store at a time

# What sql/deal_groups.sql, sql/deal_evidence.sql and the check that the deals were scored read of each table, for
# the runs in file order (pipeline/analytics/runs.py)
DEAL_STREAMS = (
    Stream("hands", "hand_id, level, table_id, session_id, suits"),
    Stream("player_hands", "hand_id, seat, player, dealer, deal_shanten, deal_suited"),
)

# The dealt hands (a hand stored before levels were recorded: dealt) and those of them whose deal was scored.
_SCORED = (
    "SELECT count(*) AS dealt, count(p.deal_shanten) AS scored FROM player_hands AS p "
    "JOIN hands AS h ON h.hand_id = p.hand_id WHERE coalesce(h.level, 'dealt') IN ('full', 'dealt') "
    "AND ($lo IS NULL OR p.hand_id BETWEEN $lo AND $hi)"
)

_PARTS = (
    "CREATE OR REPLACE TABLE parts (kind VARCHAR, grp VARCHAR, suits INTEGER, size INTEGER, hands BIGINT, "
    "shanten BIGINT, suited BIGINT, suited_hands BIGINT)"
)
_LINES = (
    "CREATE OR REPLACE TABLE lines (kind VARCHAR, line BIGINT, grp VARCHAR, hands BIGINT, shanten BIGINT, "
    "expected DOUBLE, z DOUBLE, p DOUBLE, suited DOUBLE, suited_expected DOUBLE, sd DOUBLE)"
)
_FLAGS = "CREATE OR REPLACE TABLE flags (kind VARCHAR, line BIGINT, q DOUBLE, flagged BOOLEAN)"
# A kind's rows of every run, in deal_groups.sql's order (a group's rows of one shape, one a run that held it,
# are added up as they are read: a sort spills to the store's folder where an aggregate of every group may not fit)
_GROUPS = (
    "SELECT grp, suits, size, hands, shanten, suited, suited_hands FROM parts WHERE kind = $kind "
    "ORDER BY grp NULLS LAST, suits NULLS LAST, size"
)
# A kind's lines in the screen's order: flagged first, then by p-value (untested last), then by name
_ORDERED = (
    "SELECT l.grp, l.hands, l.shanten, l.expected, l.z, l.p, l.suited, l.suited_expected, f.q, "
    "coalesce(f.flagged, false), l.sd FROM lines AS l LEFT JOIN flags AS f ON f.kind = l.kind AND f.line = l.line "
    "WHERE l.kind = $kind ORDER BY coalesce(f.flagged, false) DESC, coalesce(l.p, 2.0), l.grp"
)


@dataclass(frozen=True, slots=True)
class KindCount:
    """How many groups of a kind the screen lists, tests (``min_hands`` dealt hands) and flags."""

    kind: str
    groups: int
    tested: int
    flagged: int


class DealScreen:
    """The screen's lines, kept in a store of its own (a DuckDB database in a temporary folder, spilling to it
    beyond :data:`STORE_MEMORY`) rather than as a Python object a group: a warehouse of 1M simulated hands has
    437,524 groups (every session, table and seat), which held 0.6 GB. :meth:`results` reads them back a few at
    a time, in the screen's order; :attr:`counts` says how many of each kind were listed, tested and flagged."""

    def __init__(
        self,
        store: duckdb.DuckDBPyConnection,
        counts: list[KindCount],
        evidence: dict[tuple[str, str], list[dict[str, Any]]],
    ) -> None:
        self._store = store
        self.counts = counts
        self._evidence = evidence

    def results(self, kind: str | None = None, top: int | None = None) -> Iterator[DealResult]:
        """The lines of ``kind`` (every kind, in the screen's order of kinds: ``None``), flagged first, then by
        p-value, the untested last; ``top``: the first ``top`` of each kind only."""
        for count in self.counts:
            if kind is not None and count.kind != kind:
                continue
            text = _ORDERED + ("" if top is None else f" LIMIT {int(top)}")
            with closing(self._store.cursor()) as cursor:  # a result of its own: another may be read meanwhile
                yield from self._lines(count.kind, cursor.sql(text, params={"kind": count.kind}))

    def _lines(self, kind: str, rows: duckdb.DuckDBPyRelation) -> Iterator[DealResult]:
        for batch in rows.to_arrow_reader(LINES_AT_ONCE):
            for row in zip(*(c.to_pylist() for c in batch.columns), strict=True):
                grp, hands, shanten, expected, z, p, suited, suited_expected, q, flagged, sd = row
                evidence = self._evidence.get((kind, grp), [])
                yield DealResult(
                    kind, grp, hands, shanten, expected, z, p, suited, suited_expected, q, flagged, evidence, sd
                )


def screen_deals(
    con: duckdb.DuckDBPyConnection,
    *,
    fdr: float = FDR,
    min_hands: int = MIN_HANDS,
    evidence: int = EVIDENCE,
    kinds: Iterable[str] = KINDS,
    models: sql.Models | None = None,
) -> list[DealResult]:
    """The screen of the warehouse behind ``con`` (:func:`deal_screen`) as a list: per kind of group (in
    :data:`KINDS` order), flagged first, then by p-value; the untested groups last. Each flagged group carries its
    ``evidence`` best-dealt hands. Holds every group's line: ``xuezhan deals`` reads them from the screen's store
    instead."""
    with deal_screen(con, fdr=fdr, min_hands=min_hands, evidence=evidence, kinds=kinds, models=models) as screen:
        return list(screen.results())


@contextmanager
def deal_screen(
    con: duckdb.DuckDBPyConnection,
    *,
    fdr: float = FDR,
    min_hands: int = MIN_HANDS,
    evidence: int = EVIDENCE,
    kinds: Iterable[str] = KINDS,
    models: sql.Models | None = None,
    chunk_hands: int = CHUNK_HANDS,
) -> Iterator[DealScreen]:
    """The screen of the warehouse behind ``con``, its lines in a store that lasts while the context does
    (:class:`DealScreen`). Raises :class:`NoDealScores` for a warehouse whose deals were not scored.

    ``models``: where the pass over ``player_hands`` runs (the check that the deals were scored, and
    ``sql/deal_groups.sql``): by default on ``con``, a run of ``chunk_hands`` hands at a time
    (:func:`pipeline.analytics.runs.each_run`: every table read once, in file order; the runs' sums added up in
    the store), so that it holds one run's hands and not a hash table of every hand; ``--engine spark``'s
    :class:`pipeline.analytics.spark.SparkModels` over every hand at once. The tests run here, a group at a time
    as the store gives them back; the evidence is read a run at a time on ``con``."""
    null = load()
    kinds = tuple(dict.fromkeys(kinds))  # each kind once
    # A warehouse made before ingest kept the scores shows the column as nulls (its views add the columns its files
    # lack): its dealt hands have none, where every dealt hand of a newer one has them. A bare connection whose
    # player_hands has no such column at all is older still.
    columns = {row[0] for row in con.sql("DESCRIBE player_hands").fetchall()}
    if "deal_shanten" not in columns:
        raise NoDealScores(_NO_SCORES)
    with _store() as store:
        if models is None:
            dealt, scored = _sum_runs(con, store, chunk_hands)
        else:
            dealt, scored = models.query(_SCORED, lo=None, hi=None).row(0)
            store.execute(_PARTS)
            _insert(store, "parts", models.run("pipeline.audit", "deal_groups", lo=None, hi=None).to_arrow())
        if dealt and not scored:
            raise NoDealScores(_NO_SCORES)
        store.execute(_LINES)
        store.execute(_FLAGS)
        counts = [_kind_lines(store, kind, null, min_hands, fdr) for kind in kinds]
        flagged = {c.kind: _flagged(store, c.kind) for c in counts if c.flagged}
        shown = _evidence(con, flagged, evidence, chunk_hands) if flagged and evidence else {}
        yield DealScreen(store, counts, shown)


_NO_SCORES = (
    "the warehouse was made before ingest kept each deal's shanten (player_hands.deal_shanten): ingest its "
    "sources into a new warehouse to screen their deals"
)


@contextmanager
def _store() -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB database of its own in a temporary folder, holding :data:`STORE_MEMORY` at most in memory (the
    rest spills to the folder); removed with the folder."""
    with (
        tempfile.TemporaryDirectory(prefix="xuezhan-deals-") as folder,
        closing(duckdb.connect(str(Path(folder) / "screen.duckdb"))) as store,
    ):
        store.execute(f"SET memory_limit = '{STORE_MEMORY}'")
        store.execute("SET threads = 1")  # a sort's memory per thread: one is enough for what the tests read
        store.execute("SET preserve_insertion_order = false")
        spill = str(Path(folder) / "spill").replace("'", "''")
        store.execute(f"SET temp_directory = '{spill}'")
        store.execute("SET enable_progress_bar = false")
        yield store


def _insert(store: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    store.register("_rows", rows)
    try:
        store.execute(f"INSERT INTO {table} SELECT * FROM _rows")
    finally:
        store.unregister("_rows")


def _sum_runs(con: duckdb.DuckDBPyConnection, store: duckdb.DuckDBPyConnection, chunk_hands: int) -> tuple[int, int]:
    """``sql/deal_groups.sql``'s rows of each run of ``chunk_hands`` hands into the store's ``parts`` (a group's
    rows of several runs are added up when read back), and the dealt and scored hands of every run summed."""
    totals = [0, 0]

    def query(run: Run) -> tuple[pa.Table, tuple[int, int]]:
        rows = run.con.sql(
            sql.load_sql("pipeline.audit", "deal_groups"), params={"lo": run.lo, "hi": run.hi}
        ).to_arrow_table()
        scored = run.con.execute(_SCORED, {"lo": run.lo, "hi": run.hi}).fetchall()[0]
        return rows, (int(scored[0]), int(scored[1]))

    def read(runs: Iterator[tuple[Run, tuple[pa.Table, tuple[int, int]]]]) -> None:  # from nothing: may come twice
        store.execute(_PARTS)
        totals[:] = [0, 0]
        for _, (rows, (dealt, scored)) in runs:
            _insert(store, "parts", rows)
            totals[0] += dealt
            totals[1] += scored

    each_run(con, DEAL_STREAMS, query, read, size=chunk_hands, replayed=False)
    return totals[0], totals[1]


def _kind_lines(store: duckdb.DuckDBPyConnection, kind: str, null: DealNull, min_hands: int, fdr: float) -> KindCount:
    """Each group of ``kind`` tested as the store gives its rows back (a group's rows are consecutive), its line
    written to the store's ``lines`` a few thousand at a time; then the Benjamini–Yekutieli q-values of the kind's
    tested groups (their p-values alone are held: 8 bytes a group) and their flags into ``flags``."""
    with closing(store.cursor()) as cursor:  # read there while the lines are written on ``store``
        reader = cursor.sql(_GROUPS, params={"kind": kind}).to_arrow_reader(LINES_AT_ONCE)
        rows = (row for batch in reader for row in zip(*(c.to_pylist() for c in batch.columns), strict=True))
        return _test_lines(store, kind, _summed(rows), null, min_hands, fdr)


def _summed(rows: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Rows of ``sql/deal_groups.sql`` of several runs, sorted by group and shape, with each group's rows of one
    shape added up: the model's rows over every hand.

    >>> list(_summed(iter([("a", 3, 13, 2, 7, 20, 2), ("a", 3, 13, 1, 4, 9, 1), ("a", 3, 14, 1, 2, 0, 0)])))
    [('a', 3, 13, 3, 11, 29, 3), ('a', 3, 14, 1, 2, 0, 0)]
    """
    for (grp, suits, size), same in groupby(rows, itemgetter(0, 1, 2)):
        hands = shanten = suited = suited_hands = 0
        for r in same:
            hands += r[3]
            shanten += r[4]
            suited += r[5]
            suited_hands += r[6]
        yield grp, suits, size, hands, shanten, suited, suited_hands


def _test_lines(
    store: duckdb.DuckDBPyConnection,
    kind: str,
    rows: Iterator[tuple[Any, ...]],
    null: DealNull,
    min_hands: int,
    fdr: float,
) -> KindCount:
    ps, tested_lines = array("d"), array("q")
    pending: list[tuple[Any, ...]] = []
    groups = 0
    for name, shapes in groupby(rows, itemgetter(0)):
        r = _line(kind, name, list(shapes), null, min_hands)
        if r.p is not None:
            ps.append(r.p)
            tested_lines.append(groups)
        pending.append(
            (kind, groups, r.group, r.hands, r.shanten, r.expected, r.z, r.p, r.suited, r.suited_expected, r.sd)
        )
        groups += 1
        if len(pending) >= LINES_AT_ONCE:
            _insert(store, "lines", _lines_table(pending))
            pending.clear()
    if pending:
        _insert(store, "lines", _lines_table(pending))
    q_values = by_qvalues(np.frombuffer(ps, dtype=float)) if len(ps) else np.zeros(0)
    flags = q_values <= fdr
    if len(ps):
        _insert(
            store,
            "flags",
            pa.table(
                {
                    "kind": pa.array([kind] * len(ps), pa.string()),
                    "line": pa.array(np.frombuffer(tested_lines, dtype=np.int64)),
                    "q": pa.array(q_values),
                    "flagged": pa.array(flags),
                }
            ),
        )
    return KindCount(kind, groups, len(ps), int(flags.sum()))


_LINE_SCHEMA = pa.schema(
    [
        ("kind", pa.string()),
        ("line", pa.int64()),
        ("grp", pa.string()),
        ("hands", pa.int64()),
        ("shanten", pa.int64()),
        *((name, pa.float64()) for name in ("expected", "z", "p", "suited", "suited_expected", "sd")),
    ]
)


def _lines_table(lines: list[tuple[Any, ...]]) -> pa.Table:
    """Lines as rows of the store's ``lines``."""
    return pa.Table.from_arrays(
        [pa.array(column, f.type) for column, f in zip(zip(*lines, strict=True), _LINE_SCHEMA, strict=True)],
        schema=_LINE_SCHEMA,
    )


def _flagged(store: duckdb.DuckDBPyConnection, kind: str) -> list[str]:
    """The names of the flagged groups of ``kind``, sorted."""
    return [
        name
        for (name,) in store.execute(
            "SELECT l.grp FROM lines AS l JOIN flags AS f ON f.kind = l.kind AND f.line = l.line "
            "WHERE l.kind = $kind AND f.flagged ORDER BY l.grp",
            {"kind": kind},
        ).fetchall()
    ]


_EVIDENCE_ORDER = ["grp", "shanten", "hand_id", "seat"]


def _evidence(
    con: duckdb.DuckDBPyConnection, flagged: dict[str, list[str]], limit: int, chunk_hands: int
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Each flagged group's ``limit`` best-dealt hands (``sql/deal_evidence.sql``, a query a kind): read a run of
    ``chunk_hands`` hands at a time, each group's best of the runs so far kept (a hand is in one run, so the best
    of the best of each run are the best of all)."""
    best: dict[str, pl.DataFrame] = {}

    def query(run: Run) -> dict[str, pl.DataFrame]:
        return {
            kind: sql.run_sql(
                run.con, "pipeline.audit", "deal_evidence", kind=kind, grps=grps, limit=limit, lo=run.lo, hi=run.hi
            )
            for kind, grps in flagged.items()
        }

    def kept(rows: pl.DataFrame) -> pl.DataFrame:
        return rows.sort(_EVIDENCE_ORDER).group_by("grp", maintain_order=True).head(limit)

    def read(runs: Iterator[tuple[Run, dict[str, pl.DataFrame]]]) -> None:  # from nothing: the runs may come twice
        best.clear()
        for _, frames in runs:
            for kind, rows in frames.items():
                best[kind] = kept(pl.concat([best[kind], rows]) if kind in best else rows)

    each_run(con, DEAL_STREAMS, query, read, size=chunk_hands, replayed=False)
    shown: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for kind, rows in best.items():
        for row in rows.iter_rows(named=True):
            shown.setdefault((kind, row.pop("grp")), []).append(row)
    return shown


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
