"""The engine-assistance screen (``xuezhan assist``): players who agree with the reference policy where the
room's players, at their own level of play, do not.

Every reviewable decision of the warehouse (:mod:`pipeline.audit.decisions`: one pass, streamed) has a weight
for how ambiguous it was (near-equal options and one clearly best option both weigh little) and a verdict:
did the player choose the reference policy's first choice (:func:`~pipeline.audit.decisions.agreed`)? A player
who brings an engine agrees more than people do, and most where a person could reasonably choose otherwise.

**The room's null.** Decisions are put in *cells*: the kind (a turn's discard or kong, a claim or pass, the
void or the exchange: :data:`GROUPS`) × the gap band (:data:`BANDS`). Decisions with a gap of
:data:`CLEAR_GAP` or more are *clear* (one clearly best option): they are not tested, they measure the
player's *skill* (``s``: the empirical logit of its agreement on clear decisions), for a strong honest player
agrees more on clear decisions, and a little more on the others too. Per cell, over the room's players with
enough decisions there, a weighted least-squares line ``logit P(agree) = α + β·s`` (each player's empirical
logit weighted by its inverse variance; ``β`` kept in [0, :data:`BETA_MAX`]): the chance that an honest player
of the room *of that skill* agrees on a decision of that cell. What separates an engine follower from a strong
honest player is the excess over that line on the ambiguous cells: the skill measured on the clear decisions
predicts the rest, for people.

**Per player** (of the ``n`` tested decisions ``i``, weight ``w_i``, agreement ``a_i``, the room's ``p_i``):
the weighted agreement ``T = Σ w_i a_i`` against its null, a weighted sum of independent Bernoullis (a
Poisson-binomial when the weights are equal): mean ``μ = Σ w p``, variance ``σ² = Σ w² p(1−p)``, third cumulant
``κ₃ = Σ w³ p(1−p)(1−2p)``. People differ beyond their skill (a style that chases value, one that defends), so
the room's spread is added: ``τ²``, the variance of the *other* players' excess rates ``(T − μ)/Σw`` beyond
their sampling variance (leave one out: a follower's own excess never widens the spread it is judged by; a
second follower in the room does), times ``1 + 1/m`` for ``m`` others. ``z = (T − μ)/√(σ² + τ²(Σw)²)``; ``p``
one-sided, the normal deviate refined for the Bernoullis' skew (:func:`~pipeline.analytics.stats.skewed`: exact
enough against brute force on small cases, tests/test_assist.py) and read in Student's t of ``m − 1`` degrees of
freedom, for a spread measured on few players is itself uncertain (in a room of 8, measured on simulated rooms,
the normal tail with the spread of all 8 flagged an honest player in 1 of 6 honest rooms); ``q``:
Benjamini–Yekutieli over the players tested (:data:`MIN_DECISIONS` tested
decisions, :data:`MIN_CLEAR` clear ones, a room of :data:`MIN_ROOM`). Flagged: ``q ≤ fdr``.

**Reach** (:func:`reach`): what the screen can see in this room, for the operator who finds no flag. Per
tested player the excess it needed to be flagged alone (:func:`alone_deviate`), and for a few players across
the room's skill the least share of its decisions on which it, taking the reference's own first choice, would
be flagged alone: its tallies replaced by their expectation at that share, the room judged again
(:func:`_follower_share`). No flag is no evidence at this reach, not a clean room.

**Evidence**: the player's agreed decisions that tell most, by ``w_i (1 − p_i)`` (heavy, and the room rarely
agrees there), at most one a hand, kind and band (:class:`Candidate`: a hand's heaviest agreed decision there),
each replayable: ``xuezhan replay HAND --warehouse W --review``.

**Counted once, read many times.** The screen sums per-hand counts (:func:`hand_cells`: a player's decisions of
one hand by kind and band, with its candidate): :func:`tally` counts the hands it reviews, and
:func:`stored_room` reads back the same counts ``xuezhan review`` stored (``decision_cells``), so a warehouse
reviewed once is screened by a query; the two give the same figures to the last bit: the weights are summed in
whole units (:data:`UNIT`), which add up the same in any order, and the room is judged in a fixed order of its
players and cells (tests/test_assist.py).

What it is not: proof. The yardstick is a transparent policy, not a strong AI; a player whose own style happens
to be the policy's (a careful efficiency player) agrees more than the room too. The room is the players
screened: a room of followers would flag no one, and a player is measured against the skill line of the others.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import duckdb
import numpy as np

from pipeline import sql
from pipeline.analytics.stats import by_levels, by_qvalues, normal_sf, skewed, t_isf, t_sf
from pipeline.audit.decisions import WIN_GAP, DecisionRow
from schemas.tables import TALLY_VERSION

GROUPS: Final[dict[str, str | None]] = {"turn": "turn", "claim": None, "void": "setup", "exchange": "setup"}
BANDS: Final[tuple[float, ...]] = (0.4, 0.9, 1.5)  # gap band edges below CLEAR_GAP
CLEAR_GAP: Final = 2.25  # a decision this clear (weight <= 0.15) measures skill, and is not tested
MIN_DECISIONS: Final = 100  # tested decisions a player needs
MIN_CLEAR: Final = 20  # clear decisions a player needs (its skill)
MIN_CELL: Final = 10  # a player's decisions in a cell to be part of its line
MIN_ROOM: Final = 5  # players tested: fewer, and the room's line and spread mean little
BETA_MAX: Final = 2.0
EVIDENCE: Final = 5  # decisions shown per player


def band(g: float) -> int:
    """The gap band of a non-forced decision of gap ``g`` (0 .. len(BANDS); ``len(BANDS)`` + 1: clear)."""
    if g >= CLEAR_GAP:
        return len(BANDS) + 1
    return sum(g >= edge for edge in BANDS)


FORCED: Final = -1  # the stored band of a forced decision (no gap)
WIN_FIRST: Final = len(BANDS) + 2  # ... of a decision whose first choice is a win (no judgement)


def cell(row: DecisionRow) -> tuple[str, int] | None:
    """A non-forced decision's cell, None for a forced one, a win ranked first, or a claim."""
    return cell_of(row.kind, stored_band(row))


def cell_of(kind: str, stored: int) -> tuple[str, int] | None:
    """The cell of decisions of ``kind`` in stored band ``stored`` (:func:`stored_band`), None where they are
    not screened (forced, a win ranked first, a claim or pass)."""
    group = GROUPS[kind]
    if group is None or stored in (FORCED, WIN_FIRST):
        return None
    return (group, stored)


def stored_band(row: DecisionRow) -> int:
    """The band a decision is counted in per hand (:class:`HandCell`): :data:`FORCED`, a gap band (0 ..
    ``len(BANDS)`` + 1, the last clear: :func:`band`), or :data:`WIN_FIRST`."""
    if row.gap is None:
        return FORCED
    return WIN_FIRST if row.gap >= WIN_GAP else band(row.gap)


@dataclass(frozen=True, slots=True)
class Candidate:
    """An agreed decision the screen may show as evidence: the heaviest agreed of its hand, kind and band
    (:func:`hand_cells`). Better candidates first by :attr:`key`: heavier, then by hand and event (a fixed
    order, whatever order the hands were reviewed in)."""

    weight: float
    hand_id: str
    event: int | None
    kind: str
    chosen: str
    gap: float

    @property
    def key(self) -> tuple[float, str, int]:
        return (-self.weight, self.hand_id, -1 if self.event is None else self.event)


@dataclass(frozen=True, slots=True)
class HandCell:
    """One player's decisions of one hand of one kind and band, counted: what ``xuezhan review`` stores per
    player-hand (``decision_cells``, :mod:`pipeline.audit.tallies`) and what the screen sums over hands.
    ``band``: :func:`stored_band`; ``top``: the heaviest agreed decision (None: none agreed, or all weigh 0)."""

    player: str
    hand_id: str
    kind: str
    band: int
    n: int
    agreed: int
    w: float
    wa: float
    w2: float
    w3: float
    top: Candidate | None


def hand_cells(rows: Sequence[DecisionRow]) -> list[HandCell]:
    """One hand's decision rows counted by player, kind and band (in the order each first appears)."""
    acc: dict[tuple[str, str, int], list[Any]] = {}
    for row in rows:
        key = (row.player, row.kind, stored_band(row))
        a = acc.get(key)
        if a is None:
            a = acc[key] = [row.hand_id, 0, 0, 0.0, 0.0, 0.0, 0.0, None]
        w = row.weight
        a[1] += 1
        a[2] += row.agreed
        a[3] += w
        a[4] += w * row.agreed
        a[5] += w * w
        a[6] += w**3
        if row.agreed and w > 0:
            c = Candidate(w, row.hand_id, row.event, row.kind, row.chosen, row.gap or 0.0)
            if a[7] is None or c.key < a[7].key:
                a[7] = c
    return [HandCell(p, a[0], k, b, a[1], a[2], a[3], a[4], a[5], a[6], a[7]) for (p, k, b), a in acc.items()]


# The weights' sums are taken in whole units of 2^-40 (each hand's sum rounded down once): integers add up exactly,
# so a player's figures are the same whatever order its hands are summed in (a pool's batches as they finish,
# DuckDB's threads over the stored counts), to the last bit, and the same reviewed or read back. A hand's sums
# are below 2^13, so below 2^53 units; rounding moves a sum over 1M hands by less than 1e-6.
UNIT: Final = 2.0**40


def units(*weights: float) -> tuple[int, ...]:
    """Sums of weights in whole :data:`UNIT` (rounded down: ``math.floor``, as DuckDB's ``floor``)."""
    return tuple(math.floor(x * UNIT) for x in weights)


@dataclass(slots=True)
class _Tally:
    n: int = 0
    agreed: float = 0.0  # a count, but a planted player's expected one (:func:`_planted`) is not whole
    w: float = 0.0  # w, wa, w2, w3: the sums of units over UNIT (a planted player's: its expected ones)
    wa: float = 0.0
    w2: float = 0.0
    w3: float = 0.0
    best: list[Candidate] = field(default_factory=list)  # the best candidates (Candidate.key), at most EVIDENCE
    summed: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # w, wa, w2, w3 in whole UNIT, exact

    def add(self, n: int, agreed: float, u: Sequence[int]) -> None:
        """``n`` decisions, ``agreed`` of them agreeing, of weights summing to ``u`` (:func:`units`)."""
        self.n += n
        self.agreed += agreed
        s = self.summed
        for i in range(4):
            s[i] += u[i]
        self.w, self.wa, self.w2, self.w3 = s[0] / UNIT, s[1] / UNIT, s[2] / UNIT, s[3] / UNIT

    def offer(self, c: Candidate, keep: int) -> None:
        """Keep ``c`` if it is among the ``keep`` best candidates seen."""
        if len(self.best) < keep:
            self.best.append(c)
            return
        worst = max(range(len(self.best)), key=lambda i: self.best[i].key) if self.best else -1
        if worst >= 0 and c.key < self.best[worst].key:
            self.best[worst] = c


@dataclass(slots=True)
class _Player:
    hands: int = 0
    last_hand: str = ""
    decisions: int = 0
    non_forced: int = 0
    cells: dict[tuple[str, int], _Tally] = field(default_factory=dict)


Room = dict[str, _Player]  # each player's tallies by cell: what the screen keeps of the rows


@dataclass(frozen=True, slots=True)
class Evidence:
    hand_id: str
    event: int | None
    kind: str
    chosen: str
    gap: float
    weight: float
    room_p: float  # the chance an honest player of the room, of this player's skill, agrees there

    def as_dict(self) -> dict[str, object]:
        return {
            "hand_id": self.hand_id,
            "event": self.event,
            "kind": self.kind,
            "chosen": self.chosen,
            "gap": round(self.gap, 4),
            "weight": round(self.weight, 4),
            "room_p": round(self.room_p, 4),
        }


@dataclass(frozen=True, slots=True)
class Assist:
    """One player's figures (:mod:`pipeline.audit.assist`)."""

    player: str
    hands: int
    decisions: int
    non_forced: int
    tested: int  # non-forced decisions in the tested cells
    weight: float  # their summed weight
    agreement: float | None  # weighted agreement on them
    expected: float | None  # ... under the room's null, at the player's skill
    clear: float | None  # agreement on the clear decisions (the skill)
    z: float | None
    p: float | None
    q: float | None
    flagged: bool
    evidence: tuple[Evidence, ...] = ()
    # the excess agreement (``agreement − expected``) at which it would be flagged, were it the only one: the
    # screen's reach for this player (:func:`alone_deviate` × its sd); None where not tested
    needed: float | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "player": self.player,
            "hands": self.hands,
            "decisions": self.decisions,
            "non_forced": self.non_forced,
            "tested": self.tested,
            "weight": round(self.weight, 2),
            "agreement": _round(self.agreement),
            "expected": _round(self.expected),
            "clear_agreement": _round(self.clear),
            "z": _round(self.z),
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
            "needed": _round(self.needed),
        }


COLUMNS: Final = (
    "player",
    "hands",
    "decisions",
    "non_forced",
    "tested",
    "weight",
    "agreement",
    "expected",
    "clear_agreement",
    "z",
    "p",
    "q",
    "flagged",
    "needed",
)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _logit(a: float, n: float) -> float:
    return math.log((a + 0.5) / (n - a + 0.5))


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def moments(ps: Sequence[float], ws: Sequence[float]) -> tuple[float, float, float]:
    """Mean, variance and third cumulant of ``Σ w_i B_i``, ``B_i ~ Bernoulli(p_i)`` independent."""
    mean = sum(w * p for p, w in zip(ps, ws, strict=True))
    var = sum(w * w * p * (1 - p) for p, w in zip(ps, ws, strict=True))
    k3 = sum(w**3 * p * (1 - p) * (1 - 2 * p) for p, w in zip(ps, ws, strict=True))
    return mean, var, k3


def tail(t: float, mean: float, var: float, k3: float, extra: float = 0.0, df: float | None = None) -> float:
    """``P(T ≥ t)`` for a weighted sum of Bernoullis of these moments, the normal tail refined for its skew
    (:func:`~pipeline.analytics.stats.skewed`); ``extra``: a variance added (the room's spread, symmetric); ``df``:
    that spread is estimated from ``df`` + 1 players, so the refined deviate is read in Student's t of ``df``
    degrees of freedom rather than the normal (a heavier tail: a spread measured on few players may be too small).

    >>> round(tail(5.0, 5.0, 2.5, 0.0), 3)
    0.5
    >>> tail(9.0, 5.0, 2.0, 0.0, 2.0) < tail(9.0, 5.0, 2.0, 0.0, 2.0, df=6)
    True
    """
    total = var + extra
    if total <= 0:
        return 1.0 if t <= mean else 0.0
    z = skewed((t - mean) / math.sqrt(total), k3 / total**1.5)
    return normal_sf(z) if df is None else t_sf(z, df)


def alone_deviate(tested: int, fdr: float) -> float:
    """The deviate, in units of the standard deviation a player is judged by (:func:`_against_the_others`), at
    which it is flagged as the only one of ``tested`` players: its p at Benjamini–Yekutieli's first level
    (:func:`~pipeline.analytics.stats.by_levels`), the tail read in Student's t of the ``tested − 2`` degrees of
    freedom the leave-one-out spread has. A player's excess needed (:attr:`Assist.needed`) is this times its
    ``sd``. The Bernoullis' skew is left out (it moves the figure by a few percent where a player has some
    hundreds of tested decisions, tests/test_assist.py). With others flagged beside it a player needs less (the
    step-up's later levels are higher).

    >>> round(alone_deviate(8, 0.05), 2)  # 8 tested: p ≤ 0.05 / (8 · 2.718) = 0.0023, t of 6 df
    4.39
    """
    return t_isf(by_levels(tested, fdr)[0], tested - 2)


PROBES: Final = (0.1, 0.3, 0.5, 0.7, 0.9)  # the tested players probed, by their place in the room's skill
SHARE_STEPS: Final = 7  # bisection steps of a probe's share: to 1/128


@dataclass(frozen=True, slots=True)
class Reach:
    """What the screen can see in one room (:func:`reach`): the excess agreement the tested players needed to be
    flagged alone (:attr:`Assist.needed`: median, least, most), and, for a few of them (:data:`PROBES`), the
    least share of its decisions on which that player, following the reference policy, would be flagged alone
    (``shares``: player → share, None where not even all of them would do)."""

    tested: int
    needed_median: float | None
    needed_min: float | None
    needed_max: float | None
    shares: dict[str, float | None] = field(default_factory=dict)

    @property
    def share_median(self) -> float | None:
        """The probes' median share (a probe that no share flags counts as above every other); None: none
        probed, or the median not flagged at any share."""
        if not self.shares:
            return None
        ranked = sorted(self.shares.values(), key=lambda v: math.inf if v is None else v)
        return ranked[(len(ranked) - 1) // 2]

    def as_dict(self) -> dict[str, object]:
        return {
            "tested": self.tested,
            "needed_median": _round(self.needed_median),
            "needed_min": _round(self.needed_min),
            "needed_max": _round(self.needed_max),
            "follower_share_median": _round(self.share_median),
            "follower_shares": {k: _round(v) for k, v in self.shares.items()},
        }


def reach(players: Room, result: Sequence[Assist], *, fdr: float = 0.05, probe: bool = True) -> Reach:
    """What the screen can see in this room (the room's tallies and their :func:`judge` ``result``); without
    ``probe``, ``needed`` only (no ``shares``: the probes are what costs).

    - ``needed``: each tested player's excess agreement needed to be flagged alone (:func:`alone_deviate`).
    - ``shares``: for the tested players at :data:`PROBES` of the room's skill, the least share ``P`` of its
      non-forced decisions on which the player, taking the reference policy's own first choice there (the
      eval's *calculator*), would be flagged alone: the player's tallies replaced by their expectation under
      that share (each cell's agreements ``a + P(n − a)``, its weighted ones alike: its skill, measured on the
      clear decisions, rises with it as it would) and the room judged again, ``P`` found by bisection
      (:data:`SHARE_STEPS` steps; being flagged rises with ``P``). An engine other than the reference gains
      far less per decision taken (the README's measurements): no flag is no evidence at this reach, not a
      clean room.

    Cost: at most len(PROBES) × (SHARE_STEPS + 2) judgements of the room, each linear in its players and cells
    (interpreted: a room of 16 players 0.1 s in all, of 2,000 players 4 s)."""
    tested = [a for a in result if a.needed is not None]
    if not tested:
        return Reach(0, None, None, None)
    needed = [a.needed for a in tested if a.needed is not None]
    skills = {name: s for name in (a.player for a in tested) if (s := _skill(players[name])) is not None}
    order = sorted(skills, key=lambda k: (skills[k], k))
    probed = list(dict.fromkeys(order[min(len(order) - 1, int(q * len(order)))] for q in PROBES)) if probe else []
    shares = {name: _follower_share(players, name, fdr) for name in probed}
    return Reach(len(tested), statistics.median(needed), min(needed), max(needed), shares)


def _planted(pl: _Player, share: float) -> _Player:
    """``pl``'s tallies as expected had it taken the reference's first choice on ``share`` of its non-forced
    decisions (each disagreement turned into an agreement with that chance)."""
    cells = {
        c: _Tally(t.n, t.agreed + share * (t.n - t.agreed), t.w, t.wa + share * (t.w - t.wa), t.w2, t.w3)
        for c, t in pl.cells.items()
    }
    return _Player(pl.hands, pl.last_hand, pl.decisions, pl.non_forced, cells)


def _follower_share(players: Room, name: str, fdr: float) -> float | None:
    """The least share at which ``name``, planted (:func:`_planted`), is flagged in the room; None if not at 1."""

    def flagged(share: float) -> bool:
        room = {**players, name: _planted(players[name], share)}
        return next(a.flagged for a in _judge(room, fdr, 0) if a.player == name)

    if not flagged(1.0):
        return None
    low, high = 0.0, 1.0
    if flagged(low):
        return 0.0
    for _ in range(SHARE_STEPS):
        mid = 0.5 * (low + high)
        low, high = (low, mid) if flagged(mid) else (mid, high)
    return high


def _against_the_others(
    tested: Sequence[str], figures: dict[str, tuple[float, float, float, float, float, int]]
) -> dict[str, tuple[float, float, float]]:
    """Each tested player's ``(z, p, sd)`` against the room's spread measured on the *other* tested players (leave one
    out: its own excess never widens the spread it is judged by). The spread ``τ²``: the variance of the others'
    excess rates ``(T − μ)/Σw`` (``m`` of them, ``m − 1`` degrees of freedom) less their mean sampling variance,
    at least 0, times ``1 + 1/m`` (a new player against a spread estimated from ``m``); the tail in Student's t of
    ``m − 1`` degrees of freedom, so that a room of a few players, whose spread is itself uncertain, flags only
    what stands out beyond that uncertainty. ``sd``: the standard deviation it is judged by, on the scale of its
    excess rate (``√(σ² + τ²(Σw)²) / Σw``). The room's sums are taken once and each player's own taken out of
    them: linear in the players."""
    excess = {k: (figures[k][0] - figures[k][1]) / figures[k][4] for k in tested}
    sampling = {k: figures[k][2] / figures[k][4] ** 2 for k in tested}
    centre = statistics.fmean(excess.values()) if excess else 0.0  # the sums about it, for their precision
    s1 = sum(e - centre for e in excess.values())
    s2 = sum((e - centre) ** 2 for e in excess.values())
    sv = sum(sampling.values())
    m = len(tested) - 1
    out = {}
    for name in tested:
        d = excess[name] - centre
        mean_others = (s1 - d) / m
        variance = (s2 - d * d - m * mean_others**2) / (m - 1)
        tau2 = max(0.0, variance - (sv - sampling[name]) / m) * (1 + 1 / m)
        t_sum, mean, var, k3, w_sum, _ = figures[name]
        extra = tau2 * w_sum**2
        sd = math.sqrt(var + extra)
        out[name] = ((t_sum - mean) / sd, tail(t_sum, mean, var, k3, extra, df=m - 1), sd / w_sum)
    return out


def screen(rows: Iterable[DecisionRow], *, fdr: float = 0.05, evidence: int = EVIDENCE) -> list[Assist]:
    """Each player's figures against the room (the module docstring), most suspicious first (largest ``z``;
    untested last). ``rows`` is read once (:func:`pipeline.audit.decisions.decision_rows`); memory: a tally per
    player and cell, and ``evidence`` decisions per player and cell. :func:`tally` then :func:`judge`."""
    return judge(tally(rows, evidence=evidence), fdr=fdr, evidence=evidence)


def tally(rows: Iterable[DecisionRow], *, evidence: int = EVIDENCE, room: Room | None = None) -> Room:
    """The room's tallies of ``rows``, read once, hand by hand (a hand's rows follow each other): per player and
    cell the decisions, agreements and weights, and the ``evidence`` best candidates (:class:`Candidate`: at most
    one a hand, kind and band). ``room``: tallies to add to (those read back from the warehouse,
    :func:`stored_room`), changed in place."""
    players: Room = {} if room is None else room
    hand: list[DecisionRow] = []
    for row in rows:
        if hand and row.hand_id != hand[-1].hand_id:
            add_hand(players, hand_cells(hand), evidence)
            hand = []
        hand.append(row)
    if hand:
        add_hand(players, hand_cells(hand), evidence)
    return players


def add_hand(players: Room, cells: Iterable[HandCell], evidence: int = EVIDENCE) -> None:
    """One hand's counts (:func:`hand_cells`) added to the room's tallies."""
    for hc in cells:
        pl = players.get(hc.player)
        if pl is None:
            pl = players[hc.player] = _Player()
        if hc.hand_id != pl.last_hand:
            pl.hands += 1
            pl.last_hand = hc.hand_id
        t = _count(pl, hc.kind, hc.band, hc.n, hc.agreed, units(hc.w, hc.wa, hc.w2, hc.w3))
        if hc.top is not None and evidence and t is not None:
            t.offer(hc.top, evidence)


def _count(pl: _Player, kind: str, stored: int, n: int, agreed: float, u: Sequence[int]) -> _Tally | None:
    """``n`` decisions of a player of one kind and stored band (:func:`stored_band`), of weights summing to ``u``
    (:func:`units`), counted into its tallies: every one among its decisions, the non-forced among those, and
    those of a screened cell in that cell, whose tally it gives (None: not screened)."""
    pl.decisions += n
    pl.non_forced += n if stored != FORCED else 0
    c = cell_of(kind, stored)
    if c is None:
        return None
    t = pl.cells.get(c)
    if t is None:
        t = pl.cells[c] = _Tally()
    t.add(n, agreed, u)
    return t


def stored_room(
    con: duckdb.DuckDBPyConnection, *, per_player: int | None = None, evidence: int = EVIDENCE
) -> tuple[Room, int]:
    """The room's tallies of the hands :func:`~pipeline.audit.decisions.decision_hands` selects (``per_player``)
    that a review pass stored (a ``decision_tallies`` row at :data:`~schemas.tables.TALLY_VERSION`), read back
    from their ``decision_cells`` (``sql/assist_cells.sql`` and ``sql/assist_candidates.sql``): what
    :func:`tally` makes of the same hands' reviews (the weights' sums in whole :data:`UNIT`, the same), without
    reviewing a hand; and the number of those hands. The others are ``decision_hands(con, per_player,
    skip_version=TALLY_VERSION)``, to review. The hands' ids stay in DuckDB (:func:`pipeline.sql.hands_table`):
    at 1M hands, 0.6 GB peak in all."""
    players: Room = {}
    chosen = {"per_player": per_player, "skip_version": None, "only_version": TALLY_VERSION}
    with sql.hands_table(con, "_assist_hands", "pipeline.audit", "decision_hands", **chosen) as hands:
        sums = con.execute(
            sql.load_sql("pipeline.audit", "assist_cells"), {"version": TALLY_VERSION, "unit": UNIT}
        ).fetchall()
        kinds = [k for k, g in GROUPS.items() if g is not None]
        params = {"version": TALLY_VERSION, "kinds": kinds, "last_band": len(BANDS), "evidence": evidence}
        tops = con.execute(sql.load_sql("pipeline.audit", "assist_candidates"), params).fetchall() if evidence else []
    for player, player_hands, kind, stored, n, agreed, w, wa, w2, w3 in sums:
        pl = players.get(player)
        if pl is None:
            pl = players[player] = _Player(hands=int(player_hands))
        _count(pl, kind, int(stored), int(n), float(agreed), (int(w), int(wa), int(w2), int(w3)))
    for player, kind, stored, best in tops:
        c = cell_of(kind, int(stored))
        t = None if c is None else players[player].cells.get(c)
        if t is None:
            continue
        for b in best:
            t.offer(
                Candidate(float(b["weight"]), b["hand_id"], b["event"], kind, b["chosen"], float(b["gap"])), evidence
            )
    return players, int(hands)


def judge(players: Room, *, fdr: float = 0.05, evidence: int = EVIDENCE) -> list[Assist]:
    """Each player of the room's tallies judged against the others (:func:`screen`)."""
    return _judge(players, fdr, evidence)


def _skill(pl: _Player) -> float | None:
    clear = [t for (_, b), t in pl.cells.items() if b > len(BANDS)]
    n = sum(t.n for t in clear)
    if n < MIN_CLEAR:
        return None
    return _logit(sum(t.agreed for t in clear), n)


def _lines(players: dict[str, _Player], skills: dict[str, float]) -> dict[tuple[str, int], tuple[float, float]]:
    """Per tested cell, the room's line ``(α, β)``."""
    cells = sorted({c for pl in players.values() for c in pl.cells if c[1] <= len(BANDS)})
    out = {}
    for c in cells:
        xs, ys, ws = [], [], []
        for name, s in skills.items():
            t = players[name].cells.get(c)
            if t is None or t.n < MIN_CELL:
                continue
            xs.append(s)
            ys.append(_logit(t.agreed, t.n))
            ws.append(1.0 / (1.0 / (t.agreed + 0.5) + 1.0 / (t.n - t.agreed + 0.5)))
        if not xs:
            pooled = [players[name].cells[c] for name in players if c in players[name].cells]
            out[c] = (_logit(sum(t.agreed for t in pooled), sum(t.n for t in pooled)), 0.0)
            continue
        x, y, w = np.array(xs), np.array(ys), np.array(ws)
        mx, my = np.average(x, weights=w), np.average(y, weights=w)
        vx = float(np.average((x - mx) ** 2, weights=w))
        beta = float(np.average((x - mx) * (y - my), weights=w)) / vx if len(xs) >= 3 and vx > 1e-12 else 0.0
        beta = min(BETA_MAX, max(0.0, beta))
        out[c] = (float(my - beta * mx), beta)
    return out


def _judge(players: dict[str, _Player], fdr: float, evidence: int) -> list[Assist]:
    # players and cells in a fixed order, so that every floating sum is taken in it: the figures do not depend on
    # the order the room was tallied in (hands reviewed, or stored counts read back)
    players = {name: players[name] for name in sorted(players)}
    skills = {name: s for name, pl in players.items() if (s := _skill(pl)) is not None}
    lines = _lines(players, skills)
    centre = statistics.median(skills.values()) if skills else 0.0
    figures: dict[str, tuple[float, float, float, float, float, int]] = {}  # T, μ, σ², κ₃, Σw, n
    ps: dict[str, dict[tuple[str, int], float]] = {}
    ranked = sorted(skills.values(), reverse=True)
    for name, pl in players.items():
        s = skills.get(name, centre)
        if len(ranked) >= 2:  # no further than the best of the others: the room's line is not extrapolated
            s = min(s, ranked[1] if s >= ranked[0] else ranked[0])
        t_sum = mean = var = k3 = w_sum = 0.0
        n = 0
        ps[name] = {}
        for c, t in sorted(pl.cells.items()):
            if c not in lines:
                continue
            alpha, beta = lines[c]
            p = _expit(alpha + beta * s)
            ps[name][c] = p
            t_sum += t.wa
            mean += p * t.w
            var += p * (1 - p) * t.w2
            k3 += p * (1 - p) * (1 - 2 * p) * t.w3
            w_sum += t.w
            n += t.n
        figures[name] = (t_sum, mean, var, k3, w_sum, n)
    tested = [
        name
        for name, (_, _, var, _, w_sum, n) in figures.items()
        if name in skills and n >= MIN_DECISIONS and var > 0 and w_sum > 0
    ]
    if len(tested) < MIN_ROOM:
        tested = []
    pvals = _against_the_others(tested, figures)
    alone = alone_deviate(len(tested), fdr) if tested else 0.0
    qs = dict(zip(tested, by_qvalues(np.array([pvals[k][1] for k in tested], dtype=float)).tolist(), strict=True))
    out = []
    for name, pl in players.items():
        t_sum, mean, _, _, w_sum, n = figures[name]
        clear = [t for (_, b), t in pl.cells.items() if b > len(BANDS)]
        n_clear = sum(t.n for t in clear)
        judged = pvals.get(name)
        z: float | None = None if judged is None else judged[0]
        p_one: float | None = None if judged is None else judged[1]
        needed = None if judged is None else alone * judged[2]
        q = qs.get(name)
        shown = (
            sorted(
                (
                    (cand.weight * (1 - ps[name][c]), cand, ps[name][c])
                    for c, t in pl.cells.items()
                    if c in ps[name]
                    for cand in t.best
                ),
                key=lambda e: (-e[0], e[1].hand_id, e[1].event if e[1].event is not None else -1),
            )[:evidence]
            if evidence
            else []  # the reach's judgements of a planted room ask for none
        )
        out.append(
            Assist(
                player=name,
                hands=pl.hands,
                decisions=pl.decisions,
                non_forced=pl.non_forced,
                tested=n,
                weight=w_sum,
                agreement=t_sum / w_sum if w_sum else None,
                expected=mean / w_sum if w_sum else None,
                clear=sum(t.agreed for t in clear) / n_clear if n_clear else None,
                z=z,
                p=p_one,
                q=q,
                flagged=q is not None and q <= fdr,
                needed=needed,
                evidence=tuple(
                    Evidence(r.hand_id, r.event, r.kind, r.chosen, r.gap, r.weight, rp) for _, r, rp in shown
                ),
            )
        )
    return sorted(out, key=lambda a: (a.z is None, -(a.z or 0.0), a.player))
