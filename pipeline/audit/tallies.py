"""The stored review pass (``xuezhan review``): each reviewable hand reviewed once, its players' decisions counted
into the warehouse tables ``decision_tallies``, so that ``stats`` and the report show the decision metrics
(schemas/METRICS.md, Decisions) without reviewing anything, and ``decision_cells`` (per player-hand, decision
kind and gap band: :class:`pipeline.audit.assist.HandCell`), so that the engine-assistance screen (``xuezhan
assist``) sums them (:func:`pipeline.audit.assist.stored_room`) instead of reviewing every hand again each time,
and, for the records with decision times, ``decision_times`` (per player-hand, difficulty and time), so that the
think-time screen counts them (:func:`pipeline.audit.think.stored_times`) instead of replaying the hands. The
daily findings screen both from these alone (:func:`stored_screen`).

The review (:func:`pipeline.audit.review.review`: the reference policy ranking every decision's options) costs
about 11 ms a hand compiled: too much for ingest (about 1 ms a hand) or for every ``stats`` run, little once.
So the pass is separate and incremental: it reviews the hands of levels full, dealt and observer that have no row
of the current :data:`schemas.tables.TALLY_VERSION` (``sql/review_pending.sql``), read back from their sources
(:func:`pipeline.analytics.export.read_back`, the very line stored), and appends one row per player-hand whose
tiles are known (every seat of a full or dealt record, an observer record's own seat): the counts of
:class:`pipeline.audit.review.SeatSummary`; one row of ``decision_cells`` per player-hand, kind and band its
decisions fall in; and one row of ``decision_times`` per player-hand, difficulty and time of a timed record
(:func:`review_rows`: the hand reviewed once for all three; a timed one replayed once more for its times).

Commits. The rows are committed as the warehouse's other tables are (:meth:`pipeline.ingest.warehouse.Warehouse.
write_batch`: files through ``_tmp``, then one manifest rename, the commit point), a batch every
:data:`COMMIT_HANDS` hands, under the warehouse's write lock (an ingest and a review never write at once: the
second gets :class:`~pipeline.ingest.warehouse.WarehouseBusy`). A hand's rows (of every table) are in one batch,
whole. A pass killed part way keeps the batches committed; the next pass reviews what is left, so a rerun never
duplicates a row and a hand ingested later is reviewed by the next pass. At the end, many batches are compacted as
ingest does.

Versions. The rows carry :data:`TALLY_VERSION`; ``stats``, ``assist`` and ``think-time`` read the current
version's rows only, and a pass reviews again the hands whose rows are of another version (the old rows stay,
unread). Bump it whenever the policy, the counting, the ambiguity weights, the screen's bands or the difficulty
change what a hand's rows are (``tests/test_decision_tallies.py`` holds a digest of the sample's rows to remind).

A hand that cannot be read back (its file gone or changed, read from stdin) or no longer parses gets no row: it
is reported, and tried again by the next pass.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import duckdb
import pyarrow as pa

from pipeline import sql
from pipeline.analytics.export import Missing, Stored
from pipeline.analytics.queries import connect
from pipeline.analytics.scope import Scope
from pipeline.audit.assist import EVIDENCE, Assist, HandCell, Reach, hand_cells, judge, reach, stored_room
from pipeline.audit.decisions import reviewed, rows_of
from pipeline.audit.review import SeatSummary, review, summarize
from pipeline.audit.think import Reach as ThinkReach
from pipeline.audit.think import ThinkTime, record_times, stored_times
from pipeline.audit.think import judge as judge_times
from pipeline.audit.think import reach as think_reach
from pipeline.game.record import Record, parse_record
from pipeline.ingest.warehouse import Warehouse
from schemas.tables import TABLES, TALLY_VERSION

COMMIT_HANDS: Final = 2000  # hands per committed batch (a kill loses at most this much work)
BATCH_PREFIX: Final = "review-"  # the manifest's batches of the pass: review-<time>-<run>-<n>
COUNTS: Final = (
    "decisions",
    "discards",
    "judged_discards",
    "judged_efficient",
    "deal_ins",
    "avoidable_deal_ins",
    "win_chances",
    "missed_wins",
)


def known_seats(record: Record) -> list[int]:
    """The seats whose decisions a review can judge: every seat of a full or dealt record, an observer
    record's own seat, none of a score sheet."""
    if record.level in ("full", "dealt"):
        return list(range(record.rules.players))
    if record.level == "observer" and record.observer is not None:
        return [int(record.observer)]
    return []


def void_counted(record: Record) -> bool:
    """Whether keeping void-suit tiles is a choice in this hand: a declared void at a table of three suits whose
    rules do not force void-suit tiles first (``void_discard_first``)."""
    rules = record.rules
    return record.que is not None and len(rules.suits) == 3 and not rules.void_discard_first


def tally_rows(hand_id: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """One record's JSON reviewed and counted: a row of ``decision_tallies`` (without ``reviewed_at``) per known
    seat; raises :class:`~pipeline.game.record.RecordError`."""
    return review_rows(hand_id, obj)[0]


Rows = list[dict[str, Any]]


def review_rows(hand_id: str, obj: dict[str, Any]) -> tuple[Rows, Rows, Rows]:
    """One record's JSON reviewed once and counted (without ``reviewed_at``): its rows of ``decision_tallies``
    (:func:`tally_rows`), of ``decision_cells`` (its decisions by player, kind and band:
    :func:`pipeline.audit.assist.hand_cells`, what ``xuezhan assist`` reads instead of reviewing the hand) and,
    when it carries decision times, of ``decision_times`` (its timed decisions by player, difficulty and time:
    :func:`pipeline.audit.think.record_times`, what ``xuezhan think-time`` reads instead of replaying it). Raises
    :class:`~pipeline.game.record.RecordError`."""
    record = parse_record(obj)
    decisions = review(record, obj)
    seats = summarize(decisions, record.rules.players)
    counted = void_counted(record)
    tallies = [_row(hand_id, seat, record.players[seat], seats[seat], counted) for seat in known_seats(record)]
    seat_of = {p: i for i, p in enumerate(record.players)}
    cells = [_cell_row(c, seat_of[c.player]) for c in hand_cells(rows_of(hand_id, record.players, decisions))]
    times = [
        {"hand_id": hand_id, "seat": seat, "player": record.players[seat], "version": TALLY_VERSION}
        | {"difficulty": hard, "ms": ms, "n": n}
        for seat, pts in sorted(record_times(record).items())
        for (hard, ms), n in sorted(Counter(pts).items())
    ]
    return tallies, cells, times


def _cell_row(c: HandCell, seat: int) -> dict[str, Any]:
    top = c.top
    return {
        "hand_id": c.hand_id,
        "seat": seat,
        "player": c.player,
        "version": TALLY_VERSION,
        "kind": c.kind,
        "band": c.band,
        "n": c.n,
        "agreed": c.agreed,
        "w": c.w,
        "wa": c.wa,
        "w2": c.w2,
        "w3": c.w3,
        "top_weight": None if top is None else top.weight,
        "top_event": None if top is None else top.event,
        "top_chosen": None if top is None else top.chosen,
        "top_gap": None if top is None else top.gap,
    }


def _row(hand_id: str, seat: int, player: str, s: SeatSummary, void: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"hand_id": hand_id, "seat": seat, "player": player, "version": TALLY_VERSION}
    row.update({c: getattr(s, c) for c in COUNTS})
    row["void_held"] = s.void_held if void else None
    row["void_kept"] = s.void_kept if void else None
    return row


@dataclass
class ReviewRun:
    """What a pass did: the hands it found to review (``pending``), those reviewed and stored (``reviewed``), the
    rows stored, the batches committed, the hands it could not read back (``missing``), and its times."""

    pending: int = 0
    reviewed: int = 0
    rows: int = 0
    batches: int = 0
    missing: list[Missing] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's and its finished workers' CPU time

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": TALLY_VERSION,
            "pending": self.pending,
            "reviewed": self.reviewed,
            "rows": self.rows,
            "batches": self.batches,
            "not_read": [{"hand_id": m.hand.hand_id, "reason": m.reason} for m in self.missing],
            "seconds": round(self.seconds, 3),
            "cpu_seconds": round(self.cpu_seconds, 3),
        }


def pending_hands(root: str | Path, scope: Scope | None = None) -> list[Stored]:
    """The hands a pass reviews (``sql/review_pending.sql``), of those in ``scope`` (default: every hand), from
    the warehouse's committed snapshot."""
    with connect(root, scope=scope, warn=False) as con:
        rows = con.execute(sql.load_sql("pipeline.audit", "review_pending"), {"version": TALLY_VERSION})
        return [Stored(*row) for row in rows.fetchall()]


@dataclass(frozen=True)
class StoredScreen:
    """The decision screens of what review passes stored (:func:`stored_screen`): the engine-assistance screen's
    ``results`` (:func:`pipeline.audit.assist.judge`'s), the reviewable hands whose counts it read (``reviewed``)
    and the reviewable hands in all (``reviewable``: those of levels full, dealt and observer); the think-time
    screen's ``think`` (:func:`pipeline.audit.think.judge`'s), of the ``timed`` stored hands with decision times
    (``timed_all``: the hands with times in all); what each screen can see in this room, where it tested
    anybody (``reach``: :func:`pipeline.audit.assist.reach`; ``think_reach``: :func:`pipeline.audit.think.reach`),
    for the daily findings to say that no flag is no evidence at that reach."""

    results: list[Assist]
    fdr: float
    reviewed: int
    reviewable: int
    think: list[ThinkTime] = field(default_factory=list)
    timed: int = 0
    timed_all: int = 0
    reach: Reach | None = None
    think_reach: ThinkReach | None = None


# The daily loop's reach probes the follower share (45 judgements of the room) in rooms of at most this many players;
# in larger ones it gives the excess agreement needed only, and `xuezhan assist` probes on demand
PROBED_ROOM: Final = 2000


def stored_screen(
    con: duckdb.DuckDBPyConnection, *, fdr: float = 0.05, evidence: int = EVIDENCE, probed_room: int = PROBED_ROOM
) -> StoredScreen:
    """The engine-assistance and think-time screens over the hands of ``con``'s scope that a review pass stored,
    reviewing and replaying none: what the daily findings (``xuezhan findings``, the report's first screen) list,
    a query however large the warehouse, and what each screen can see here (its reach; the engine-assistance
    screen's follower share judges the room again 45 times with one player planted, linear in the players: 0.1 s
    for 24 players, about 4 s for 2,000 interpreted, so it is probed in rooms of at most ``probed_room`` players
    only). Hands not reviewed yet are left out (``reviewed`` < ``reviewable``: run ``xuezhan
    review``); ``xuezhan assist`` and ``think-time`` review and replay them themselves."""
    room, stored = stored_room(con, evidence=evidence)
    rest = {"skip_version": TALLY_VERSION, "only_version": None}  # counted, not fetched: the report runs this
    pending = sql.count_rows(con, "pipeline.audit", "decision_hands", per_player=None, **rest)
    per, timed = stored_times(con)
    untimed = sql.count_rows(con, "pipeline.audit", "timed_hands", **rest)
    think = judge_times(per, fdr=fdr)
    results = judge(room, fdr=fdr, evidence=evidence)
    seen = reach(room, results, fdr=fdr, probe=len(room) <= probed_room)
    seen_times = think_reach(think)
    return StoredScreen(
        results,
        fdr,
        stored,
        stored + pending,
        think,
        timed,
        timed + untimed,
        seen if seen.tested else None,
        seen_times if seen_times.tested else None,
    )


def review_warehouse(
    root: str | Path,
    *,
    workers: int = 1,
    scope: Scope | None = None,
    commit_hands: int = COMMIT_HANDS,
    on_hands: Callable[[int], None] | None = None,
    on_pending: Callable[[int], None] | None = None,
) -> ReviewRun:
    """Review the hands of the warehouse at ``root`` that have no tallies of :data:`TALLY_VERSION` and commit their
    rows, a batch every ``commit_hands`` hands (the module docstring); with ``scope``
    (:class:`~pipeline.analytics.scope.Scope`), only those of the hands in it (the rest wait for a later pass:
    a room's newest month first, say). ``on_pending``: told the hands to review
    once found; ``on_hands``: told the hands done (reviewed or not read) as they are. Raises
    :class:`~pipeline.ingest.warehouse.WarehouseBusy` while another process writes to the warehouse."""
    if not (Path(root) / "hands").is_dir():
        raise FileNotFoundError(f"no warehouse at {root} (run xuezhan ingest first)")
    wall, cpu = time.perf_counter(), _cpu()
    run = ReviewRun()
    stamp = f"{BATCH_PREFIX}{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    with Warehouse(root) as wh:
        hands = pending_hands(root, scope)
        run.pending = len(hands)
        if on_pending is not None:
            on_pending(len(hands))
        held: Rows = []
        held_cells: Rows = []
        held_times: Rows = []
        in_batch = 0

        def commit() -> None:
            nonlocal held, held_cells, held_times, in_batch
            if in_batch:
                at = datetime.now(UTC)
                named = (("decision_tallies", held), ("decision_cells", held_cells), ("decision_times", held_times))
                tables = {
                    name: pa.Table.from_pylist([{**r, "reviewed_at": at} for r in rows], schema=TABLES[name])
                    for name, rows in named
                }
                run.batches += 1
                wh.write_batch(f"{stamp}-{run.batches:06d}", tables)
                run.reviewed += in_batch
                run.rows += len(held)
            held, held_cells, held_times, in_batch = [], [], [], 0

        done_missing = 0
        for _, (rows, cells, times) in reviewed(hands, run.missing, review_rows, workers=workers):
            held += rows
            held_cells += cells
            held_times += times
            in_batch += 1
            if on_hands is not None:
                on_hands(1 + len(run.missing) - done_missing)
                done_missing = len(run.missing)
            if in_batch >= commit_hands:
                commit()
        commit()
        if on_hands is not None and len(run.missing) > done_missing:
            on_hands(len(run.missing) - done_missing)
        if run.batches:
            wh.compact_if_many(threads=workers)
    run.seconds = time.perf_counter() - wall
    run.cpu_seconds = _cpu() - cpu
    return run


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the pool's workers, once shut down)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
