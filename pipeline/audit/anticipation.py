"""Winning-tile anticipation: the information screen's second signal, for players who wait on the tiles the wall
still holds.

A player who discards into a ready hand often has a choice of waits: throw this tile and wait on 3p-6p, throw that
one and wait on 4s-7s. What it can see (its own hand, every river and meld, the tiles it gave at the exchange)
says how many copies of each wait are *unseen*; whether those copies are still in the wall, or sit in an
opponent's concealed hand where they will never come, it cannot know: for an honest player, given what it sees,
which option has more copies left in the wall is chance. A player who sees every hand knows, and waits on the
tiles that will come.

Ingest's replay judges the discards of the hands whose every tile is known (levels full and dealt: the wall's
contents are then the table's tiles less those dealt and drawn; ``evidence.judge_waits``, stored in the table
``wait_choices``), and the screen counts them in DuckDB. A player's discard is judged when it left the hand ready
and another discard would have too, with a different wait of **the same unseen count** (what the player could
see is equal, so its view cannot prefer either), the options' copies left in the wall differing. Per player: ``n``
judged decisions, ``k`` those where the wait chosen has the most copies left in the wall among those options (ties for
the most count as hits). An honest player hits at a rate set by how many options it had and how it breaks such
ties (a style: some prefer edge waits on terminals, which opponents hold less often); a player who sees the wall
hits nearly always.

The null is the room's, as for the dodges (:mod:`pipeline.audit.information`): each player's ``k`` against the
posterior predictive beta-binomial of every *other* player's counts, the upper tail this time (computed as the
lower tail of the misses, ``n - k``, with the same functions); Benjamini–Yekutieli q-values.

:func:`combine` joins the two signals: a player is flagged when either of its two p-values survives BY over
both families together (2 tests per player; BY holds under any dependence between them), and the result says
which signal did it.

Measured (2026-12-03, ``xuezhan eval-info-cheats --replicates 30 --honest 80 --seed 101 --cache``, 8 players and
2,000 hands a room, the planted cheat seated in about 1,000): alone, this signal flags 30 of 30 planted cheats
([89%, 100%]; their p-values 2.6e-6 to 4.4e-4, median 6.1e-5, from about 90 judged waits each, nearly all hits)
and no honest player in 80 honest rooms (false discovery proportion 0, 95% upper bound 0.05; 8 of 625 honest
p-values below 0.05, none below 0.01); with the dodges, BY over both, 30 of 30 and 0 of 80.

>>> o = Option("1p", ("3p", "6p"), unseen=6, wall=5)
>>> o.text()
'1p: waits 3p 6p, 6 unseen, 5 in the wall'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from pipeline.analytics.stats import by_qvalues
from pipeline.audit.information import FDR, InfoResult, screen_tails
from pipeline.game.evidence import Evidence, WaitChoice
from pipeline.game.record import Record
from pipeline.game.state import IllegalAction
from pipeline.rules.tiles import TILE_NAMES
from pipeline.sql import load_sql, run_sql
from pipeline.validate import initial_state

MIN_DECISIONS = 30  # judged decisions a player needs to be tested
EVIDENCE = 5  # decisions shown per flagged player


@dataclass(frozen=True, slots=True)
class Option:
    """One discard that leaves the hand ready: the tile thrown, its waits, their copies the player cannot see
    (``unseen``: four less those in its hand, the rivers and the melds) and those still in the wall."""

    discard: str
    waits: tuple[str, ...]
    unseen: int
    wall: int

    def text(self) -> str:
        return f"{self.discard}: waits {' '.join(self.waits)}, {self.unseen} unseen, {self.wall} in the wall"


@dataclass(frozen=True, slots=True)
class Decision:
    """A judged discard: ``seat`` threw ``chosen.discard`` at event ``event`` while ``options`` (the chosen one
    among them) would have left it ready on other waits with the same unseen count; ``hit`` when the chosen wait
    has the most copies left in the wall."""

    event: int
    seat: int
    chosen: Option
    options: tuple[Option, ...]

    @property
    def hit(self) -> bool:
        return self.chosen.wall == max(o.wall for o in self.options)

    @property
    def margin(self) -> int:
        """Copies in the wall the chosen wait has beyond the best other option (negative: a miss)."""
        return self.chosen.wall - max(o.wall for o in self.options if o is not self.chosen)

    def text(self) -> str:
        others = "; ".join(o.text() for o in self.options if o is not self.chosen)
        return f"event {self.event}: threw {self.chosen.text()} (instead: {others})"


def decisions(record: Record, seat: int | None = None) -> list[Decision]:
    """The judged decisions of ``seat`` (every seat: ``None``) in ``record``, as the engine judges them while it
    replays (:func:`pipeline.game.evidence.judge_waits`, which ingest runs and stores in
    ``wait_choices``); none for a record of another level than full or dealt (a hidden hand hides the wall's
    contents). The replay stops at an illegal action."""
    if record.level not in ("full", "dealt"):
        return []
    try:
        evidence = Evidence()
        state = initial_state(record, evidence)
    except IllegalAction:
        return []
    for event in record.events:
        try:
            state.apply(event)
        except IllegalAction:
            break
    found = [decision(index, record.events[index].seat, choice) for index, choice in sorted(evidence.waits_at.items())]
    return [d for d in found if seat is None or d.seat == seat]


def decision(index: int, seat: int, choice: WaitChoice) -> Decision:
    """The engine's judged choice of waits (:data:`pipeline.game.evidence.WaitChoice`) at event ``index`` as a
    :class:`Decision`."""
    chosen, options = choice
    made = tuple(
        Option(TILE_NAMES[kind], tuple(TILE_NAMES[w] for w in range(27) if (mask >> w) & 1), unseen, wall)
        for kind, mask, unseen, wall in options
    )
    return Decision(index, seat, made[chosen], made)


def _stored_decision(idx: int, seat: int, chosen: int, options: list[dict[str, Any]]) -> Decision:
    """A row of ``wait_choices`` as a :class:`Decision`."""
    made = tuple(Option(o["tile"], tuple(o["waits"]), o["unseen"], o["wall"]) for o in options)
    return Decision(idx, seat, made[chosen], made)


# ---------------------------------------------------------------------------------------------- the screen
@dataclass(frozen=True, slots=True)
class AnticipationResult:
    """One player's line of the screen: ``decisions`` judged, ``hits`` among them, what the others' rates give
    (``expected``), the upper-tail p-value (``None``: not tested), and the player's best decisions as
    ``(hand_id, Decision)``, widest margin first."""

    player: str
    hands: int
    decisions: int
    hits: int
    expected: float | None
    p: float | None
    q: float | None = None
    flagged: bool = False
    best: tuple[tuple[str, Decision], ...] = field(default=(), compare=False)

    @property
    def rate(self) -> float | None:
        return self.hits / self.decisions if self.decisions else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "hands": self.hands,
            "decisions": self.decisions,
            "hits": self.hits,
            "rate": self.rate,
            "expected": self.expected,
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
        }


@dataclass
class _Tally:
    hands: int = 0
    decisions: int = 0
    hits: int = 0
    best: list[tuple[str, Decision]] = field(default_factory=list)


class WaitsNotJudged(ValueError):
    """The warehouse holds hands of levels full or dealt that ingest did not judge (ingested by a version
    before the anticipation evidence was stored): the screen would undercount them."""


def tally(con: duckdb.DuckDBPyConnection, *, keep: int = EVIDENCE) -> dict[str, _Tally]:
    """Per player of the warehouse behind ``con``: hands of level full or dealt, judged decisions, hits, and the
    ``keep`` hits of widest margin (``anticipation_tally.sql``, ``anticipation_best.sql``: ingest judged every
    discard, so this only counts). Raises :class:`WaitsNotJudged` when some of those hands were ingested before
    the judging."""
    rows = run_sql(con, "pipeline.audit", "anticipation_tally")
    unjudged = int(rows["unjudged"].sum()) if rows.height else 0
    if unjudged:
        raise WaitsNotJudged(
            f"the warehouse holds hands of levels full and dealt ingested before the winning-tile anticipation was "
            f"judged at ingest ({unjudged:,} player-hands): ingest the records again into a new warehouse "
            "(xuezhan ingest FILES --warehouse NEW) to screen them"
        )
    out = {
        player: _Tally(hands, decisions, hits)
        for player, hands, decisions, hits in rows.select("player", "hands", "decisions", "hits").iter_rows()
    }
    if keep <= 0:
        return out
    for player, best in con.execute(load_sql("pipeline.audit", "anticipation_best"), {"keep": keep}).fetchall():
        for b in best:
            out[player].best.append((b["hand_id"], _stored_decision(b["idx"], b["seat"], b["chosen"], b["options"])))
    return out


def screen_anticipation(
    con: duckdb.DuckDBPyConnection, *, fdr: float = FDR, min_decisions: int = MIN_DECISIONS
) -> list[AnticipationResult]:
    """The screen of the warehouse behind ``con``: one line per player, flagged first, then by p-value. Raises
    :class:`WaitsNotJudged` for a warehouse ingested before the judging."""
    return screen_tally(tally(con), fdr=fdr, min_decisions=min_decisions)


def screen_tally(
    tallies: dict[str, _Tally], *, fdr: float = FDR, min_decisions: int = MIN_DECISIONS
) -> list[AnticipationResult]:
    """The screen of per-player tallies: the players with at least ``min_decisions`` judged decisions are
    tested against the others tested (:func:`~pipeline.audit.information.screen_tails` of the misses:
    its lower tail of ``n - k`` is the upper tail of the hits ``k``)."""
    players = sorted(tallies)
    n = np.array([tallies[p].decisions for p in players], dtype=np.int64)
    k = np.array([tallies[p].hits for p in players], dtype=np.int64)
    out = []
    for i, (player, (misses, p, q, flagged)) in enumerate(
        zip(players, screen_tails(n, n - k, min_n=min_decisions, fdr=fdr), strict=True)
    ):
        t = tallies[player]
        expected = None if misses is None else float(n[i]) - misses  # the hits the others' rates give
        out.append(AnticipationResult(player, t.hands, t.decisions, t.hits, expected, p, q, flagged, tuple(t.best)))
    return sorted(out, key=lambda r: (not r.flagged, r.p if r.p is not None else 2.0, r.player))


# ---------------------------------------------------------------------------------------------- both signals
@dataclass(frozen=True, slots=True)
class Seer:
    """A player of the information screen with both signals: the dodges' line (``None``: no judged discard) and
    the anticipation's (``None``: no hand of level full or dealt), q-values by BY over both families together,
    and the signals that flag it."""

    player: str
    dodges: InfoResult | None
    anticipation: AnticipationResult | None
    q_dodges: float | None
    q_anticipation: float | None
    signals: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return bool(self.signals)

    def as_dict(self) -> dict[str, Any]:
        """The dodges' line (:meth:`InfoResult.as_dict`, its ``q`` over both families) with the combined flag, the
        signals that flag the player and the anticipation's line (``None``: no hand to judge)."""
        dodges: dict[str, Any] = {"player": self.player}
        if self.dodges is not None:
            dodges = {**self.dodges.as_dict(), "q": self.q_dodges}
        waits = None if self.anticipation is None else {**self.anticipation.as_dict(), "q": self.q_anticipation}
        return {**dodges, "flagged": self.flagged, "signals": list(self.signals), "anticipation": waits}


def combine(
    dodges: Sequence[InfoResult], anticipation: Sequence[AnticipationResult], *, fdr: float = FDR
) -> list[Seer]:
    """Both signals per player: BY q-values over every tested p-value of both screens (one family of up to two
    tests a player), a signal flagging the player when its q is at most ``fdr``; flagged players first (both
    signals, then one), then by the smaller p-value.

    >>> a = [InfoResult("x", 9, 900, 0, 60.0, 1e-9), InfoResult("y", 9, 900, 50, 60.0, 0.3)]
    >>> b = [AnticipationResult("x", 9, 80, 70, 45.0, 0.2), AnticipationResult("y", 9, 80, 40, 45.0, 0.8)]
    >>> [(s.player, s.signals) for s in combine(a, b)]
    [('x', ('dodges',)), ('y', ())]
    """
    by_dodge = {r.player: r for r in dodges}
    by_anticipation = {r.player: r for r in anticipation}
    players = sorted(set(by_dodge) | set(by_anticipation))
    tests = [(p, "dodges", by_dodge[p].p) for p in players if p in by_dodge and by_dodge[p].p is not None]
    tests += [
        (p, "anticipation", by_anticipation[p].p)
        for p in players
        if p in by_anticipation and by_anticipation[p].p is not None
    ]
    q_values = by_qvalues(np.array([float(p or 0.0) for _, _, p in tests])).tolist() if tests else []
    q = {(player, signal): value for (player, signal, _), value in zip(tests, q_values, strict=True)}
    out = []
    for p in players:
        qd, qa = q.get((p, "dodges")), q.get((p, "anticipation"))
        signals = tuple(s for s, v in (("dodges", qd), ("anticipation", qa)) if v is not None and v <= fdr)
        out.append(Seer(p, by_dodge.get(p), by_anticipation.get(p), qd, qa, signals))

    def smallest(s: Seer) -> float:
        ps = [r.p for r in (s.dodges, s.anticipation) if r is not None and r.p is not None]
        return min(ps) if ps else 2.0

    return sorted(out, key=lambda s: (-len(s.signals), smallest(s), s.player))
