"""One pass over a warehouse's decisions: every reviewable hand read back and reviewed, one row per decision.

The hands whose deciding seats' tiles are known (levels full, dealt and observer: an observer record's own seat
only; :func:`decision_hands`) are read back from their sources (:func:`pipeline.analytics.export.read_back`: the
very line stored) and reviewed (:func:`pipeline.audit.review.review`: the reference policy's ranking of each
decision's legal options). Each decision becomes a :class:`DecisionRow`: the player, the hand, the event, the
kind, whether it was non-forced, the chosen option's rank, whether it *agreed* with the policy's first choice,
and its *ambiguity*: the gap between the first choice and the runner-up and the weight that gap earns.

**Agreement.** The chosen option agrees when it is the first choice or has the first choice's figures (the same
kind of action, shanten, live tiles, danger and value: options the policy cannot tell apart but by their tile,
whose order is a tie-break, not a judgement). An exchange agrees when its suit is the first choice's and its
tiles do no worse (:func:`pipeline.game.policy.clearly_better`'s test).

**Forced.** A decision is forced when its legal options all have the first choice's figures (one option, or
several the policy cannot tell apart): there is nothing to agree with. The rest are non-forced.

**The gap** (:func:`gap`) between the first choice and the *runner-up* (the best-ranked option whose figures
differ), in units where one unit is about what :func:`~pipeline.game.policy.clearly_better` calls clearly
better: per figure the difference in the first choice's favour, divided by its unit (shanten
:data:`SHANTEN_UNIT` per step (3: a lower shanten is clearly better, three units), live tiles
:data:`~pipeline.game.policy.CLEARLY_LIVE` (4), danger :data:`DANGER_UNIT`, value :data:`VALUE_UNIT`). The
figures where the first choice is better add up (``pos``); those where the runner-up is better (a trade-off: a
lower shanten for more danger) take half their sum off (``neg``): ``gap = max(pos − neg/2, MIN_GAP)``. A first
choice that is a win: :data:`WIN_GAP` (a win is taken; passing one is no matter of judgement).

**The weight** (:func:`weight`) of a non-forced decision, from its gap ``g``: ``x² · e^{2(1 − x)}`` with
``x = g / PEAK_GAP`` (:data:`PEAK_GAP` 0.75): 1 at the peak (a first choice better, but not obviously: 3 live
tiles more at the same shanten), little for near-equal options (0.42 at one live tile: 0.25), little for one
clearly best option (0.25 at a gap of 2, 0.04 at 3: a shanten lower), 0 for a win. A player who agrees on
the high-weight decisions agrees where a person could reasonably have chosen otherwise: Regan's point, in
mahjong's terms.

**Cost.** The review costs about 11 ms a hand on the compiled engine (19 ms interpreted): a warehouse of 1M
hands is about 3 CPU-hours. :func:`decision_hands` takes ``per_player`` (each player's newest hands, the
others at their tables included) and :func:`decision_rows` ``workers`` (the reviews run in that many processes,
the records read and sent to them in batches; at most two batches per worker in flight): the rows stream, and
nothing but the batches in flight is held. The cost is paid once per hand: ``xuezhan review`` stores what the
screens need of each review (:mod:`pipeline.audit.tallies`), and ``xuezhan assist`` reviews only the hands not
stored yet.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import duckdb

from pipeline import sql
from pipeline.analytics.export import Missing, Stored, read_back
from pipeline.audit.review import Decision, describe, review
from pipeline.engines import Engine, load
from pipeline.game.policy import CLEARLY_LIVE, Option
from pipeline.game.record import RecordError, parse_record

SHANTEN_UNIT: Final = 3.0  # gap units per shanten step
DANGER_UNIT: Final = 4.0  # danger points per gap unit
VALUE_UNIT: Final = 2.0  # value points per gap unit
PEAK_GAP: Final = 0.75  # the gap of the heaviest decisions
MIN_GAP: Final = 0.05  # a non-forced decision's gap is at least this (options that differ, in a trade-off)
WIN_GAP: Final = 99.0  # a win ranked first: no judgement
BATCH: Final = 200  # records per batch sent to a worker
# The collector's first threshold while hands are reviewed (Python's default: 700 allocations). The review makes
# and drops many small containers (options, hands, memo keys) and holds none of them in a cycle, so the collector
# finds nothing to free but costs time: with 10,000 the review is about 1.15x faster (compiled, 500 hands of the
# bench corpus in fresh processes, twice each: 13.5 and 12.4 -> 11.4 and 10.7 ms a hand; in an interleaved A/B in
# one process 1.2x; 100,000 and 1,000,000 no better). Set in the review's worker processes for their life, and in
# the caller's process only while a hand is reviewed (then put back).
REVIEW_GC_THRESHOLD: Final = 10_000
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class DecisionRow:
    """One decision of a player (:mod:`pipeline.audit.decisions`): ``event`` as
    :class:`~pipeline.audit.review.Decision`'s (None for the exchange and the void), ``options`` the legal
    options, ``rank`` the chosen option's, ``gap`` and ``weight`` None when forced."""

    player: str
    hand_id: str
    event: int | None
    kind: str
    options: int
    non_forced: bool
    rank: int
    agreed: bool
    gap: float | None
    weight: float
    chosen: str  # the option made, in a few characters (describe)
    first: str  # the policy's first choice

    def as_dict(self) -> dict[str, object]:
        return {
            "player": self.player,
            "hand_id": self.hand_id,
            "event": self.event,
            "kind": self.kind,
            "options": self.options,
            "non_forced": self.non_forced,
            "rank": self.rank,
            "agreed": self.agreed,
            "gap": None if self.gap is None else round(self.gap, 4),
            "weight": round(self.weight, 4),
            "chosen": self.chosen,
            "first": self.first,
        }


def figures(o: Option) -> tuple[str, int, int, int, int]:
    """What the policy tells options apart by, besides their tile: the kind of action and the four figures."""
    return (o.action, o.shanten, o.live, o.danger, o.value)


def runner_up(options: Sequence[Option]) -> Option | None:
    """The best-ranked option whose figures differ from the first choice's (None: the decision is forced)."""
    if not options:
        return None
    first = figures(options[0])
    return next((o for o in options[1:] if figures(o) != first), None)


def gap(options: Sequence[Option]) -> float | None:
    """How far the first choice of ``options`` (ranked) stands ahead of the runner-up, in gap units (the module
    docstring); None when the decision is forced.

    >>> from pipeline.game.policy import Option
    >>> a = Option("discard", 0, None, 1, 12, 0, 0, 1); b = Option("discard", 5, None, 1, 9, 0, 0, 2)
    >>> gap([a, b])  # three live tiles more at the same shanten
    0.75
    >>> gap([a, Option("discard", 7, None, 2, 20, 0, 0, 2)])  # a shanten lower, 8 fewer live: 3 - 2/2
    2.0
    >>> gap([a]) is None
    True
    """
    second = runner_up(options)
    if second is None:
        return None
    first = options[0]
    if first.action == "hu":
        return WIN_GAP
    parts = (
        (second.shanten - first.shanten) * SHANTEN_UNIT,
        (first.live - second.live) / CLEARLY_LIVE,
        (second.danger - first.danger) / DANGER_UNIT,
        (first.value - second.value) / VALUE_UNIT,
    )
    pos = sum(p for p in parts if p > 0)
    neg = -sum(p for p in parts if p < 0)
    return max(pos - neg / 2, MIN_GAP)


def weight(g: float | None) -> float:
    """The ambiguity weight of a decision of gap ``g`` (None, forced: 0): ``x² e^{2(1 − x)}``, ``x = g /
    PEAK_GAP``.

    >>> [round(weight(g), 2) for g in (None, 0.25, 0.75, 1.5, 3.0, WIN_GAP)]
    [0.0, 0.42, 1.0, 0.54, 0.04, 0.0]
    """
    if g is None:
        return 0.0
    x = g / PEAK_GAP
    return x * x * math.exp(2.0 * (1.0 - x)) if x < 40 else 0.0


def agreed(d: Decision) -> bool:
    """Did ``d``'s chosen option agree with the policy's first choice (the module docstring)?"""
    first = d.options[0]
    if d.kind == "exchange":
        return d.chosen.rank == 1 and d.chosen.shanten <= first.shanten
    return d.chosen.rank == 1 or figures(d.chosen) == figures(first)


def rows_of(
    hand_id: str, players: Sequence[str], decisions: Iterable[Decision], *, engine: bool = False
) -> list[DecisionRow]:
    """The rows of one reviewed hand's ``decisions`` (``players``: the record's, by seat). ``engine``: the hand was
    reviewed with a second yardstick (:attr:`~pipeline.audit.review.Decision.engine`), and the rows are the
    decisions it judged (asked, it ranked two options or more), *agreed* meaning its first choice; the gap and
    weight stay the reference policy's (how ambiguous the decision was, as the transparent yardstick sees it), so
    the clear decisions, which measure a player's skill in the screen's null, are those the reference finds clear,
    and the skill is the agreement with the engine there. (Tried: the reference's agreement there instead, skill
    as the transparent yardstick sees it; a follower's rose as much, and the follower of the eval's first room of
    2,000 hands stood at z 4.8 against 5.2, in a lab: not kept.)"""
    out = []
    for d in decisions:
        if engine and d.engine is None:
            continue
        g = gap(d.options)
        out.append(
            DecisionRow(
                players[d.seat],
                hand_id,
                d.event,
                d.kind,
                len(d.options),
                g is not None,
                d.chosen.rank,
                bool(d.engine) if engine else agreed(d),
                g,
                weight(g),
                describe(d.chosen),
                describe(d.options[0]),
            )
        )
    return out


def review_object(hand_id: str, obj: dict[str, Any]) -> list[DecisionRow]:
    """One record's JSON reviewed into rows; raises :class:`~pipeline.game.record.RecordError`."""
    record = parse_record(obj)
    return rows_of(hand_id, record.players, review(record, obj))


def review_with_engine(spec: str, hand_id: str, obj: dict[str, Any]) -> list[DecisionRow]:
    """One record's JSON reviewed with the engine ``spec`` names as the second yardstick (:func:`rows_of`'s
    ``engine``): its turns' rows. A module-level function of the spec, so that a worker process loads the engine
    itself (once: :func:`_engine`)."""
    record = parse_record(obj)
    return rows_of(hand_id, record.players, review(record, obj, _engine(spec)), engine=True)


@functools.cache
def _engine(spec: str) -> Engine:
    return load(spec).decide


def _review_worker() -> tuple[int, int, int]:
    """The collector's first threshold raised to at least :data:`REVIEW_GC_THRESHOLD`; the thresholds before.
    A review worker process's start (for its life), and :func:`fewer_collections`' entry."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], REVIEW_GC_THRESHOLD), *before[1:])
    return before


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """The collector's first threshold at least :data:`REVIEW_GC_THRESHOLD` inside, as it was after."""
    before = _review_worker()
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _each_of_batch(each: Callable[[str, dict[str, Any]], T], batch: list[tuple[str, str]]) -> list[tuple[str, T | str]]:
    """A worker's batch: ``(hand_id, the record's JSON text)`` each; per hand ``each``'s result, or why a record
    no longer parses (a ``str``)."""
    out: list[tuple[str, T | str]] = []
    for hand_id, text in batch:
        try:
            out.append((hand_id, each(hand_id, json.loads(text))))
        except RecordError as exc:
            out.append((hand_id, f"not a record any more: {exc}"))
    return out


def reviewed(
    hands: list[Stored], missing: list[Missing], each: Callable[[str, dict[str, Any]], T], *, workers: int = 1
) -> Iterator[tuple[str, T]]:
    """``(hand_id, each(hand_id, record's JSON))`` for each of ``hands`` read back from its source
    (:func:`~pipeline.analytics.export.read_back`): in their order with one worker; with ``workers`` > 1, in that
    many processes (``each`` a module-level function), batch by batch as they finish, the records read and sent
    in batches of :data:`BATCH`, at most two batches per worker in flight, so that nothing but the batches in
    flight is held. A hand that cannot be read back or parsed (``each`` raised
    :class:`~pipeline.game.record.RecordError`) is appended to ``missing`` instead. The one loop of the review's
    passes: the screen's rows (:func:`decision_rows`) and the stored tallies (:mod:`pipeline.audit.tallies`)."""
    by_id = {h.hand_id: h for h in hands}
    if workers <= 1:
        for got in read_back(hands):
            if isinstance(got, Missing):
                missing.append(got)
                continue
            try:
                with fewer_collections():  # the review's own loop only, not the caller's work between hands
                    result = each(got.hand.hand_id, got.record)
            except RecordError as exc:
                missing.append(Missing(got.hand, f"not a record any more: {exc}"))
                continue
            yield got.hand.hand_id, result
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=_review_worker) as pool:
        pending: set[Future[list[tuple[str, T | str]]]] = set()

        def drain(block: bool) -> Iterator[tuple[str, T]]:
            nonlocal pending
            while pending and (block or len(pending) >= 2 * workers):
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    for hand_id, result in future.result():
                        if isinstance(result, str):
                            missing.append(Missing(by_id[hand_id], result))
                        else:
                            yield hand_id, result

        batch: list[tuple[str, str]] = []
        for got in read_back(hands):
            if isinstance(got, Missing):
                missing.append(got)
                continue
            batch.append((got.hand.hand_id, got.data.decode("utf-8")))
            if len(batch) >= BATCH:
                pending.add(pool.submit(_each_of_batch, each, batch))
                batch = []
                yield from drain(False)
        if batch:
            pending.add(pool.submit(_each_of_batch, each, batch))
        yield from drain(True)


def decision_hands(
    con: duckdb.DuckDBPyConnection, per_player: int | None = None, *, skip_version: str | None = None
) -> list[Stored]:
    """The stored hands (of the connection's scope) whose decisions can be reviewed (``decision_hands.sql``);
    with ``per_player``, only those among each player's ``per_player`` newest; with ``skip_version``, not those a
    review pass stored at that version (:func:`pipeline.audit.assist.stored_room` reads them)."""
    params = {"per_player": per_player, "skip_version": skip_version, "only_version": None}
    rows = con.execute(sql.load_sql("pipeline.audit", "decision_hands"), params)
    return [Stored(*row) for row in rows.fetchall()]


def decision_rows(
    hands: list[Stored], missing: list[Missing], *, workers: int = 1, engine: str | None = None
) -> Iterator[DecisionRow]:
    """Every decision of ``hands`` (:func:`decision_hands`), hand by hand in their order (with ``workers`` > 1,
    batch by batch as they finish); a hand that cannot be read back or parsed is appended to ``missing``
    (:func:`reviewed`). ``engine``: the spec of a second yardstick (:func:`pipeline.engines.load`; the caller
    has loaded it once to check it), and the rows are its (:func:`review_with_engine`)."""
    each = review_object if engine is None else functools.partial(review_with_engine, engine)
    for _, rows in reviewed(hands, missing, each, workers=workers):
        yield from rows
