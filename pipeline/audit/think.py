"""The think-time screen: players whose decision times do not follow how hard the decisions
were, against the room.

A person thinks longer on a harder decision; a relay (someone copying a bot's moves) or a bot with a fixed
delay does not. For every record that carries decision times (``ms``, xzlog/1), the hand is replayed and each
decision (every event but a draw; not a hidden hand's) gets its difficulty (:func:`pipeline.game.policy.difficulty`:
the options the reference policy cannot call clearly worse than its first choice, less one) beside its time.
The timed decisions are counted per player by (difficulty, ms) (:data:`Times`): from the records replayed now
(:func:`decision_times`) or from what ``xuezhan review`` stored of them (:func:`stored_times`); the figures depend
on the counts only (the correlation's sums in whole :data:`UNIT`, exact: the same either way).
Per player:

- ``decisions``, ``median_ms``;
- ``r``: the correlation of the difficulty with ``log(ms + 1)`` over its decisions (0 when its times do not vary
  at all, a fixed delay; None when they are all 0 ms, a client that did not time, when the difficulty does not
  vary, or under :data:`MIN_DECISIONS` decisions);
- ``room_r``: the room's r, the mean of the *other* players' ``atanh(r)`` (leave one out: a relay does not
  pull the yardstick it is measured against), read back through ``tanh``; the others a first, robust test
  flagged left out (below);
- ``z``: ``(atanh(r) − room) / s`` on Fisher's scale (``atanh``: the standard error of ``atanh(r)`` is
  ``1/√(n − 3)``). People differ in how much longer they think on a harder decision, so ``s`` holds the room's
  spread: ``τ²``, the variance of the others' ``atanh(r)`` beyond their sampling variance (their mean
  ``1/(n_j − 3)``), ``s² = τ² + 1/(n − 3) + (τ² + sampling)/m`` for the player's own sampling and the room
  mean's error over its ``m`` others. Negative: its times follow difficulty less than the room's;
- ``p``: one-sided, ``P(T ≤ z)`` of Student's t of ``m − 1`` degrees of freedom (a spread measured on few
  players is itself uncertain; None without :data:`MIN_ROOM` other players with an ``r``); ``q``:
  Benjamini–Yekutieli over the players tested (any dependence between them allowed);
- ``flag_r``: what the screen can see here: the ``r`` at or below which the player would be flagged, were it
  the only one (its ``p`` at Benjamini–Yekutieli's first level ``fdr / (M · c(M))`` of the ``M`` tested, against
  the room of the others not flagged: ``tanh(room − t* · s)``, ``t*`` that level's quantile of its t; a relay
  flagged widens the spread the others are judged by, not the one they would be judged by alone). A relay's
  times follow difficulty not at all (``r`` near 0): a room whose ``flag_r`` is below 0 cannot flag one, however
  long it plays;
- ``ask_share``: the share of its decisions on which the player could ask a bot (or let a relay play) and be
  flagged alone however long the asking took, were that time unrelated to the difficulty and the decisions asked
  chosen without regard to it (:func:`ask_share`: about even odds at the share, near-certain a few points above;
  0 where it is flagged or ``r`` is at ``flag_r`` already, None where ``flag_r`` is below 0: not even asking on
  every decision). Below it a player who asks is flagged mostly where its asking takes a time unlike its own;
  one who asks on its hard decisions and takes longer over them is not bounded by it at all.

Two relays in a room would hide each other from that mean and variance (each widens the other's spread), so a
first test comes before it: each player against the :func:`~pipeline.analytics.stats.biweight` location and
spread of all its others (a point far out has no weight there), read in Student's t of
:func:`~pipeline.analytics.stats.biweight_df` degrees of freedom (fewer: its scale is noisier), Benjamini–Yekutieli
over the players; those it finds at ``q ≤`` :data:`APART_Q` (leaving a player out of a room accuses no one) are no
part of anyone's room in the test above (where that leaves a player fewer than :data:`MIN_ROOM` others, it is
judged against all of them). Each room's mean and variance come from the sums of all the players less those left
out, and in a room of more than :data:`EXACT_ROOM` others the first test reads the biweight of every player (the
player's own weight in it moves it little), so a warehouse of many players is judged in time linear in
their number (``make bench``, section ``think``).

Measured on simulated rooms of 16 (500 hands) whose players differ in that slope
(:mod:`pipeline.simulate.timing`; a lab over the counts): one relay flagged in 10 of 10 rooms; two or three relays
a room hidden from the mean and variance alone (none of 12 and 18 found); with the first test leaving out at
``q ≤ 0.05``, 6 of 12 and 15 of 18, at ``q ≤ 0.2`` 12 of 12 and 15 of 18 (chosen there), and on other rooms (seeds
of their own, the rule written before they were run: at least 3 more relays found, at most 1 more room with a false
flag) 16 of 16 and 24 of 24 against 12 of 16 and 18 of 24, rooms with a false flag 4 of 48 against 3; the median
and 1.4826 × MAD of the others read in the normal tail (this screen before) flagged an honest player in 10 of 30
honest rooms of 16 and 7 of 12 of 8, these two tests in 1 of 30 and none of 12 (README: the same measured by
``xuezhan eval-think-time``).

Flagged: ``q ≤ fdr``. A flag is a reason to look at the player's decisions and times, not proof: a player who
thinks at an even pace, one who plays on auto-play or with a slow connection, times the client rounds, all look
flat too. The room is the players screened, so a room of relays would flag no one: the screen compares players,
it does not know how long a person takes.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

import duckdb
import numpy as np

from pipeline import sql
from pipeline.analytics.export import Missing, Stored, read_back
from pipeline.analytics.stats import biweight, biweight_df, by_levels, by_qvalues, t_isf, t_sf
from pipeline.game.policy import difficulties
from pipeline.game.record import Record, RecordError, parse_record
from pipeline.game.state import IllegalAction
from pipeline.validate import play_state
from schemas.tables import TALLY_VERSION

MIN_DECISIONS: Final = 30
MIN_ROOM: Final = 5  # other players with an r: fewer, and the room's mean and spread mean little
# the most others the robust first test leaves each player out of exactly (its biweight: time quadratic in the
# players); in a larger room, every player's biweight, the player's own weight in it moving it little
EXACT_ROOM: Final = 300
# the robust first test's q at or below which a player is left out of the others' rooms (no flag: that is the
# second test's); chosen on lab rooms, then checked on others (the module docstring)
APART_Q: Final = 0.2
_CLAMP: Final = 0.999999


@dataclass(frozen=True, slots=True)
class ThinkTime:
    player: str
    decisions: int
    median_ms: float
    r: float | None
    room_r: float | None
    z: float | None
    p: float | None
    q: float | None
    flagged: bool
    flag_r: float | None = None  # the r at or below which it would be flagged alone (the module docstring)
    ask_share: float | None = None  # the share of decisions asked at random that flags it, at any time (ask_share)

    def as_dict(self) -> dict[str, object]:
        return {
            "player": self.player,
            "decisions": self.decisions,
            "median_ms": self.median_ms,
            "r": _round(self.r),
            "room_r": _round(self.room_r),
            "z": _round(self.z),
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
            "flag_r": _round(self.flag_r),
            "ask_share": _round(self.ask_share),
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


Times = dict[str, Counter[tuple[int, int]]]  # per player, its timed decisions counted by (difficulty, ms)
# log(ms + 1) in whole units of 2^-40 (rounded down): the correlation's sums are integers, exact in any order, so the
# figures are the same whether the decisions were replayed now or read back from what `xuezhan review` stored
UNIT: Final = 2.0**40


def record_times(record: Record) -> dict[int, list[tuple[int, int]]]:
    """Per seat, (difficulty, ms) of each timed decision of ``record`` (every event but a draw, not a hidden
    hand's: :func:`pipeline.game.policy.difficulties`); none for a record without times, at level settlement, or
    whose play is illegal."""
    times = record.ms
    if times is None or record.level == "settlement":
        return {}
    try:
        state = play_state(record)
    except IllegalAction:
        return {}
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for event, hard, ms in zip(record.events, difficulties(state, record.events), times, strict=True):
        if hard is not None and ms is not None:
            out[event.seat].append((hard, ms))
    return out


def decision_times(records: Iterable[Record], into: Times | None = None) -> Times:
    """Per player, its timed decisions of ``records`` counted by (difficulty, ms) (:func:`record_times`); ``into``:
    counts to add to (changed in place)."""
    out: Times = defaultdict(Counter) if into is None else into
    for record in records:
        for seat, pts in record_times(record).items():
            out.setdefault(record.players[seat], Counter()).update(pts)
    return out


def _fisher(r: float) -> float:
    return math.atanh(max(-_CLAMP, min(_CLAMP, r)))


def correlation(counts: Counter[tuple[int, int]]) -> float | None:
    """Pearson's r of the difficulty with ``log(ms + 1)`` over decisions counted by (difficulty, ms), the logs in
    whole :data:`UNIT` and every sum an integer (exact: no cancellation, no order); None when the difficulty does
    not vary. Times that do not vary while the difficulty does follow it not at all: 0 (a bot with a fixed delay
    is the plainest relay, not a player the screen cannot read); but every time 0 ms is a client that wrote 0
    where it did not time: None, as no time at all.

    >>> round(correlation(Counter({(0, 100): 5, (1, 1000): 5, (2, 10000): 5})), 6)
    0.999999
    >>> correlation(Counter({(0, 1500): 20, (3, 1500): 20})), correlation(Counter({(2, 900): 5, (2, 1500): 5}))
    (0.0, None)
    >>> correlation(Counter({(0, 0): 20, (3, 0): 20})) is None
    True
    """
    n = sx = sxx = sy = syy = sxy = 0
    for (x, ms), c in counts.items():
        y = math.floor(math.log(ms + 1) * UNIT)
        n += c
        sx += c * x
        sxx += c * x * x
        sy += c * y
        syy += c * y * y
        sxy += c * x * y
    vx, vy = n * sxx - sx * sx, n * syy - sy * sy
    if vx <= 0 or sy == 0:  # the difficulty does not vary, or every time is 0 ms (log 1)
        return None
    if vy <= 0:
        return 0.0
    return max(-1.0, min(1.0, (n * sxy - sx * sy) / math.sqrt(vx) / math.sqrt(vy)))


def median_ms(counts: Counter[tuple[int, int]]) -> float:
    """The median time of decisions counted by (difficulty, ms) (the mean of the middle two of an even number)."""
    by_ms: Counter[int] = Counter()
    for (_, ms), c in counts.items():
        by_ms[ms] += c
    n = sum(by_ms.values())
    wanted = [(n - 1) // 2, n // 2]
    found: list[int] = []
    seen = 0
    for ms in sorted(by_ms):
        seen += by_ms[ms]
        while wanted and wanted[0] < seen:
            found.append(ms)
            wanted.pop(0)
    return (found[0] + found[1]) / 2


_Sums = tuple[int, float, float, float]  # of some players: how many, Σ atanh r, Σ (atanh r)², Σ 1/(n − 3)


def _plus(a: _Sums, b: _Sums, sign: int = 1) -> _Sums:
    return (a[0] + sign * b[0], a[1] + sign * b[1], a[2] + sign * b[2], a[3] + sign * b[3])


def ask_share(r: float | None, flag_r: float | None) -> float | None:
    """The least share of a player's decisions that, asked of a bot (or played by a relay) at times unrelated to
    their difficulty and on decisions chosen without regard to it (at random, say), brings the ``r`` its times
    tend to down to ``flag_r``, whatever those times are: the player's reach.

    A share ``P`` of decisions chosen so, timed ``y'`` of any mean ``c`` and variance ``v``, leaves
    ``cov(d, y) (1 − P)`` and makes the times' variance ``(1 − P) var(y) + P v + P (1 − P) (c − mean(y))²``, at
    least ``(1 − P) var(y)``; so ``r`` tends to at most ``√(1 − P) r``, and to ``flag_r`` or less from
    ``P = 1 − (flag_r / r)²`` on (equal where every asked decision takes the player's typical time, the geometric
    mean of ``ms + 1``: the hardest to see). One sample's ``r`` scatters about that (by about ``1/√n``): at the
    share the player is flagged about half the time, a few points above it nearly always. A player who asks at a
    time unlike its own is flagged at a smaller share. Not so one who asks on its hard decisions and takes longer
    over them (or on its easy ones, answered fast): its times may follow difficulty as much as before, or more,
    at any share; no share bounds that.

    0: ``r`` at ``flag_r`` already; 1: ``flag_r`` 0 (only every decision asked takes ``r`` to it); None: ``flag_r``
    below 0 (not even a relay on every decision, ``r`` near 0, is flagged), or no ``r``.

    >>> ask_share(0.5, 0.25), ask_share(0.2, 0.25), ask_share(0.5, -0.1), ask_share(None, 0.2)
    (0.75, 0.0, None, None)
    >>> ask_share(-0.3, -0.1), ask_share(0.4, 0.0)
    (0.0, 1.0)
    """
    if r is None or flag_r is None:
        return None
    if r <= flag_r:
        return 0.0
    return None if flag_r < 0 else 1 - (flag_r / r) ** 2


def screen(records: Iterable[Record], *, fdr: float = 0.05) -> list[ThinkTime]:
    """Each player's think-time figures against the room (:func:`judge` of :func:`decision_times`)."""
    return judge(decision_times(records), fdr=fdr)


def judge(per: Times, *, fdr: float = 0.05) -> list[ThinkTime]:
    """Each player's think-time figures against the room (players with fewer than :data:`MIN_DECISIONS` timed
    decisions get no ``r`` and are no part of the room), most suspicious first (smallest ``z``; untested last).
    The players are taken in name order, so that the figures depend on the counts only."""
    per = {player: per[player] for player in sorted(per) if per[player]}
    rs: dict[str, float | None] = {}
    for player, counts in per.items():
        rs[player] = correlation(counts) if counts.total() >= MIN_DECISIONS else None
    fisher = {player: _fisher(r) for player, r in rs.items() if r is not None}
    sampling = {player: 1 / (per[player].total() - 3) for player in fisher}

    # the others' sums, all the players' less those left out (and the player's own): each room in a few operations,
    # so that a warehouse of many players is judged in time linear in their number
    def sums(players: Iterable[str]) -> _Sums:
        chosen = [p for p in players if p in fisher]
        return (
            len(chosen),
            math.fsum(fisher[p] for p in chosen),
            math.fsum(fisher[p] ** 2 for p in chosen),
            math.fsum(sampling[p] for p in chosen),
        )

    everyone = sums(fisher)
    excluded: dict[frozenset[str], _Sums] = {}
    whole: list[tuple[float, float, float]] = []  # the biweight of every player, for a room over EXACT_ROOM

    def room(player: str, left_out: Collection[str] = (), *, robust: bool = False) -> tuple[float, float, float] | None:
        """The room ``player`` is judged against, its others but ``left_out``: (their centre on Fisher's scale, the
        ``s`` of the player's deviation from it, the degrees of freedom of its t), None for fewer than
        :data:`MIN_ROOM`. The centre and spread are the others' mean and variance, or (``robust``, nothing left
        out) their :func:`~pipeline.analytics.stats.biweight`, where a second relay among them has no weight (of
        more than :data:`EXACT_ROOM`, every player's: the player's own weight among them moves them little, under 2%
        in rooms of 320 with a tenth to a half of them relays, the same flags)."""
        if player not in fisher:
            return None
        if robust:
            m = len(fisher) - 1
            if m < MIN_ROOM:
                return None
            if m <= EXACT_ROOM:
                others = [fisher[o] for o in fisher if o != player]
                centre, variance = biweight(others)
                noise = statistics.median(sampling[o] for o in fisher if o != player)
            else:
                if not whole:
                    whole.append((*biweight(list(fisher.values())), statistics.median(sampling.values())))
                centre, variance, noise = whole[0]
            df = biweight_df(m)
        else:
            key = frozenset(left_out)
            if key not in excluded:
                excluded[key] = sums(key)
            gone = excluded[key] if player in key else _plus(excluded[key], sums([player]))
            m, total, squares, noises = _plus(everyone, gone, -1)
            if m < MIN_ROOM:
                return None
            centre = total / m
            variance, noise, df = max(0.0, (squares - total * centre) / (m - 1)), noises / m, m - 1
        tau2 = max(0.0, variance - noise)
        return centre, math.sqrt(tau2 + sampling[player] + (tau2 + noise) / m), df

    # first the robust test, then each player judged against the others it did not flag
    first = {}
    for player in per:
        if (judged := room(player, robust=True)) is not None:
            centre, s, df = judged
            first[player] = t_sf((centre - fisher[player]) / s, df)
    qs = dict(zip(first, by_qvalues(np.array(list(first.values()), dtype=float)).tolist(), strict=True))
    apart = {player for player, q in qs.items() if q <= APART_Q}
    figures: dict[str, tuple[float | None, float | None, float | None]] = {}  # room_r, z, p
    for player in per:
        # the others the robust test did not flag; all of them where that leaves too few to judge by
        judged = room(player, apart) or room(player)
        if judged is None:
            m, total, _, _ = everyone if player not in fisher else _plus(everyone, sums([player]), -1)
            figures[player] = (math.tanh(total / m) if m else None, None, None)
            continue
        mean, s, df = judged
        score = (fisher[player] - mean) / s
        figures[player] = (math.tanh(mean), score, t_sf(-score, df))
    tested = [player for player in per if figures[player][2] is not None]
    qs = dict(zip(tested, by_qvalues(np.array([figures[p][2] for p in tested], dtype=float)).tolist(), strict=True))
    flagged = {player for player, q in qs.items() if q <= fdr}
    level = by_levels(len(tested), fdr)[0] if tested else 0.0
    quantile = functools.cache(lambda df: t_isf(level, df))  # of the few degrees of freedom the rooms have
    out = []
    for player, counts in per.items():
        room_r, z, p = figures[player]
        # flag_r: against the room of the players not flagged, the one it would be judged by were it the only one
        alone = room(player, flagged) if p is not None else None
        flag_r = None if alone is None else math.tanh(alone[0] - quantile(alone[2]) * alone[1])
        out.append(
            ThinkTime(
                player,
                counts.total(),
                median_ms(counts),
                rs[player],
                room_r,
                z,
                p,
                qs.get(player),
                player in flagged,
                flag_r,
                0.0 if player in flagged else ask_share(rs[player], flag_r),
            )
        )
    return sorted(out, key=lambda t: (t.z is None, t.z if t.z is not None else 0.0, t.player))


@dataclass(frozen=True, slots=True)
class Reach:
    """What the screen can see in one room (:func:`reach`): the tested players' ``flag_r`` (median, least,
    most). A relay's times follow difficulty not at all (``r`` near 0): the room would flag one when the median
    ``flag_r`` is above 0. And the ``ask_share`` of those not flagged: the median and the least (None: no share
    would do)."""

    tested: int
    flag_r_median: float | None
    flag_r_min: float | None
    flag_r_max: float | None
    ask_share_median: float | None = None
    ask_share_min: float | None = None
    ask_of: int = 0  # the players those shares are of (tested, not flagged, not at their flag_r already)

    @property
    def flags_relay(self) -> bool | None:
        """Would the room flag a relay (``r`` near 0) at the median player's reach; None: nobody tested."""
        return None if self.flag_r_median is None else self.flag_r_median > 0

    def as_dict(self) -> dict[str, object]:
        return {
            "tested": self.tested,
            "flag_r_median": _round(self.flag_r_median),
            "flag_r_min": _round(self.flag_r_min),
            "flag_r_max": _round(self.flag_r_max),
            "flags_relay": self.flags_relay,
            "ask_share_median": _round(self.ask_share_median),
            "ask_share_min": _round(self.ask_share_min),
            "ask_of": self.ask_of,
        }


def reach(rows: Iterable[ThinkTime]) -> Reach:
    """What the screen can see in the room :func:`judge` gave ``rows`` for: its tested players' ``flag_r``, and
    the ``ask_share`` of those not flagged (a player with no share counts above every share: the median is None
    where half have none; one at its ``flag_r`` already, or nobody left, gives no share).

    >>> row = ThinkTime("p1", 40, 900.0, 0.4, 0.35, 0.2, 0.6, 1.0, False, 0.1, 0.9375)
    >>> reach([row, ThinkTime("p2", 3, 800.0, None, None, None, None, None, False)]).as_dict()  # doctest: +ELLIPSIS
    {'tested': 1, ..., 'flags_relay': True, 'ask_share_median': 0.9375, 'ask_share_min': 0.9375, 'ask_of': 1}
    """
    tested = [t for t in rows if t.flag_r is not None]
    if not tested:
        return Reach(0, None, None, None)
    limits = sorted(t.flag_r for t in tested if t.flag_r is not None)
    # of the players not flagged; one at its flag_r already (ask 0: judged by a room that leaves out other players
    # than the one flag_r is read against) says nothing of a share
    unflagged = [t for t in tested if not t.flagged and t.ask_share != 0.0]
    shares = sorted(math.inf if t.ask_share is None else t.ask_share for t in unflagged)
    least, median = (shares[0], statistics.median(shares)) if shares else (math.inf, math.inf)
    return Reach(
        len(limits),
        statistics.median(limits),
        limits[0],
        limits[-1],
        None if math.isinf(median) else median,
        None if math.isinf(least) else least,
        len(unflagged),
    )


def stored_times(con: duckdb.DuckDBPyConnection) -> tuple[Times, int]:
    """The timed decisions of the hands in ``con``'s scope that carry times and that a review pass stored (a
    ``decision_tallies`` row at :data:`~schemas.tables.TALLY_VERSION`), counted by player, difficulty and ms from
    their ``decision_times`` rows (``sql/think_counts.sql``), and the number of those hands; the others are
    ``timed_hands(con, skip_version=TALLY_VERSION)``, to replay. What :func:`decision_times` counts of the same
    hands replayed."""
    chosen = {"skip_version": None, "only_version": TALLY_VERSION}
    with sql.hands_table(con, "_timed_stored", "pipeline.audit", "timed_hands", **chosen) as hands:
        rows = con.execute(sql.load_sql("pipeline.audit", "think_counts"), {"version": TALLY_VERSION}).fetchall()
    per: Times = defaultdict(Counter)
    for player, hard, ms, n in rows:
        per[player][(int(hard), int(ms))] += int(n)
    return per, hands


def timed_hands(con: duckdb.DuckDBPyConnection, *, skip_version: str | None = None) -> list[Stored]:
    """The stored hands (of the connection's scope) that carry decision times, where their records are
    (``events.ms``: nothing more is stored by ingest, no ingest cost for the records without times); with
    ``skip_version``, not those a review pass stored at that version (:func:`stored_times` reads them)."""
    params = {"skip_version": skip_version, "only_version": None}
    rows = con.execute(sql.load_sql("pipeline.audit", "timed_hands"), params).fetchall()
    return [Stored(*row) for row in rows]


def read_timed(hands: list[Stored], missing: list[Missing]) -> Iterator[Record]:
    """The records of ``hands`` read back from their sources (:func:`pipeline.analytics.export.read_back`: the
    very line stored, or not at all); each one that cannot be read back or parsed is appended to ``missing``."""
    for got in read_back(hands):
        if isinstance(got, Missing):
            missing.append(got)
            continue
        try:
            yield parse_record(got.record)
        except RecordError as exc:
            missing.append(Missing(got.hand, f"not a record any more: {exc}"))
