"""Information cheats: a single-player screen for players who play as if they saw the other hands.

A player who sees every hand (a confederate's signals, a hidden camera, a compromised client) never throws a
tile that completes an opponent's hand while it holds one that does not. Honest players cannot know, and now
and then do: they throw a *dangerous discard by choice* (``events.safe_alternative``: a tile some opponent
still in could win on, while the player held a tile nobody could win on whose discard left its own hand as
close to ready). The screen counts, per player, the discards the replay can judge (hands of level full or
dealt, where every hand is known) and those dangerous by choice, and asks how unlikely so few are.

The null is the room's own players. Players differ (a defensive player throws fewer dangerous tiles than a
novice), so a player's count is compared with a **beta-binomial** for the rates of every *other* player (leave
one out, so that a cheat does not pull the null towards itself): the spread of honest rates is part of the
null. The p-value is the lower tail ``P(K <= k)`` for the player's number of judged discards;
Benjamini–Yekutieli q-values control the false discovery rate over the players screened (any dependence).
Players with fewer than ``min_discards`` judged discards are listed, not tested. The screen's second signal,
waits chosen on the tiles the wall still holds, is :mod:`pipeline.audit.anticipation`, which also combines the two
(``xuezhan info-cheats`` and the report run both).

How the beta-binomial is fitted matters in a small room. With 8 players the spread of true rates is estimated
from 7 counts, and a fit that takes its point estimate (moments, or maximum likelihood) underestimates it now
and then: measured on 80 honest simulated rooms of 8 (``xuezhan eval-info-cheats --replicates 30 --honest 80
--seed 101``), 6 flagged an honest player, a false discovery proportion of 0.08 against the 0.05 promised.
The p-value is therefore the *posterior predictive* tail of a new player like the others (Gelman et al.,
*Bayesian Data Analysis*, 3rd ed., §5.3, the rat tumours): the mean rate ``mu`` and the size ``s = a + b``
(``1 / (s + 1)`` is the rates' squared coefficient of variation times ``mu / (1 - mu)``) get the book's diffuse
prior ``p(a, b) ∝ (a + b)^(-5/2)``, which leans towards wider spreads, the others' counts give the posterior on
a grid of ``(logit mu, log s)`` (:func:`posterior_grid`), and the player's tail is averaged over it
(:func:`predictive_cdf`): a spread the 7 counts cannot rule out widens the null instead of being dropped. The
cost is small where the evidence is large: a player who sees every hand makes no dangerous discard by choice
in thousands, against a couple of hundred expected, which no spread the others allow explains. Measured on the
same 110 rooms (``--cache``): 30 of 30 planted cheats flagged, no honest player flagged in the 80 honest rooms
(false discovery proportion 0, 95% upper bound 0.05).

>>> round(beta_binomial_cdf(0, 100, 1.0, 1.0), 6)  # a uniform rate: P(K = 0) = 1 / (n + 1)
0.009901
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import polars as pl

from pipeline import sql
from pipeline.analytics.runs import Stream, added, summed_runs
from pipeline.analytics.stats import by_qvalues
from pipeline.game.events import Discard
from pipeline.game.record import Record, RecordError, parse_record
from pipeline.game.state import HandState, IllegalAction
from pipeline.rules.hand import shanten
from pipeline.rules.tiles import TILE_NAMES
from pipeline.validate import initial_state

MIN_DISCARDS = 300  # about 30 hands: below this a player is listed, not tested
FDR = 0.05


@dataclass(frozen=True, slots=True)
class InfoResult:
    """One player's line of the screen."""

    player: str
    hands: int
    discards: int  # judged discards (levels full and dealt)
    dangerous_by_choice: int
    expected: float | None  # what the other players' rates give for this many discards
    p: float | None  # P(K <= dangerous_by_choice) under the others' beta-binomial; None: not tested
    q: float | None = None
    flagged: bool = False

    @property
    def rate(self) -> float | None:
        return self.dangerous_by_choice / self.discards if self.discards else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "hands": self.hands,
            "discards": self.discards,
            "dangerous_by_choice": self.dangerous_by_choice,
            "rate": self.rate,
            "expected": self.expected,
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
        }


def beta_binomial_cdf(k: int, n: int, a: float, b: float) -> float:
    """``P(K <= k)`` for ``K ~ BetaBinomial(n, a, b)`` (``a, b > 0``), summed in log space.

    >>> round(beta_binomial_cdf(2, 10, 2.0, 8.0), 4)
    0.6672
    """
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_b_ab = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return _sum_of_logs(
        _log_choose(n, j) + math.lgamma(j + a) + math.lgamma(n - j + b) - math.lgamma(n + a + b) - log_b_ab
        for j in range(k + 1)
    )


def _log_choose(n: int, j: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)


def _sum_of_logs(log_terms: Iterable[float]) -> float:
    """``sum(exp(t))`` of probabilities given as logs, scaled by the largest so that none underflows first;
    capped at 1 (rounding)."""
    terms = list(log_terms)
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


# The posterior grid: logit of the mean rate around the pooled rate, and log of the size a + b from a spread wider
# than any room shows (s = 0.5: rates anywhere in (0, 1)) to none beyond the binomial's (s = 1e8, far more than
# 10^5 discards can tell from no spread). The posterior of the mean is narrow (its sd in logit is about the
# rates' coefficient of variation over the square root of the players, 0.05–0.2, and never below one over the
# square root of the others' count, about 0.025 for 7 players of 1,000 hands), so a half width of 1.5 (a factor
# of 4.5 either way) holds it and a step of 0.025 resolves it; that of log s is wider (sd about 0.6), step 0.15. A
# uniform grid integrates a smooth bump with a step near its sd to far better than the p-values need.
LOGIT_HALF_WIDTH = 1.5
LOGIT_STEPS = 121
LOG_SIZE = (math.log(0.5), math.log(1e8))
LOG_SIZE_STEPS = 129
_NEGLIGIBLE = 1e-12  # grid points whose posterior weight is below this share are left out of the tail
TAIL_BLOCK = 1 << 15  # terms of the tail computed at a time (predictive_cdf): its memory, whatever the count


@dataclass(frozen=True, slots=True)
class Grid:
    """A posterior over ``(a, b)`` of the beta-binomial on grid points: ``a``, ``b`` and ``log_prior`` (the
    diffuse prior in the grid's coordinates) of each point."""

    a: np.ndarray
    b: np.ndarray
    log_prior: np.ndarray


def lgamma(x: np.ndarray) -> np.ndarray:
    """``log Γ(x)`` of every element (``x > 0``): shifted up by 8 with ``Γ(x + 8) = Γ(x) x (x + 1) … (x + 7)``,
    then Stirling's series to ``z^-9``, whose error at ``z >= 8`` is below ``1e-12`` (numpy has no log gamma).

    >>> x = np.array([1e-3, 0.5, 1.0, 7.9, 10.0, 1e6])
    >>> bool(np.allclose(lgamma(x), [math.lgamma(v) for v in x], rtol=1e-14, atol=1e-12))
    True
    """
    x = np.asarray(x, dtype=float)
    shift = np.zeros_like(x)
    z = x.copy()
    for _ in range(8):
        small = z < 8.0
        if not small.any():
            break
        shift += np.where(small, np.log(np.where(small, z, 1.0)), 0.0)
        z = np.where(small, z + 1.0, z)
    inv = 1.0 / z
    inv2 = inv * inv
    series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188))))
    return (z - 0.5) * np.log(z) - z + 0.5 * math.log(2 * math.pi) + series - shift


def log_beta_binomial(k: int, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log P(K = k)`` for ``K ~ BetaBinomial(n, a, b)`` at every ``(a, b)``.

    >>> round(math.exp(float(log_beta_binomial(0, 100, np.array([1.0]), np.array([1.0]))[0])), 6)
    0.009901
    """
    return (
        _log_choose(n, k)
        + lgamma(k + a)
        + lgamma(n - k + b)
        - lgamma(n + a + b)
        - lgamma(a)
        - lgamma(b)
        + lgamma(a + b)
    )


def prior_grid(discards: np.ndarray, counts: np.ndarray) -> Grid:
    """The grid the posterior is computed on, centred on the pooled rate of ``counts`` over ``discards``, with
    the prior ``p(a, b) ∝ (a + b)^(-5/2)`` (Gelman et al., BDA3 §5.3) in its coordinates ``(logit mu, log s)``:
    ``p ∝ mu (1 - mu) s^(-1/2)``."""
    pooled = (float(counts.sum()) + 0.5) / (float(discards.sum()) + 1.0)
    centre = math.log(pooled / (1.0 - pooled))
    logit = np.linspace(centre - LOGIT_HALF_WIDTH, centre + LOGIT_HALF_WIDTH, LOGIT_STEPS)
    log_size = np.linspace(*LOG_SIZE, LOG_SIZE_STEPS)
    logit, log_size = (v.ravel() for v in np.meshgrid(logit, log_size, indexing="ij"))
    mean = 1.0 / (1.0 + np.exp(-logit))
    size = np.exp(log_size)
    return Grid(mean * size, (1.0 - mean) * size, np.log(mean) + np.log1p(-mean) - 0.5 * log_size)


def predictive_cdf(k: int, n: int, grid: Grid, log_posterior: np.ndarray) -> float:
    """``P(K <= k)`` for a new player with ``n`` judged discards: the beta-binomial tail averaged over the
    posterior (``log_posterior``, unnormalised, one value per point of ``grid``; points of negligible weight
    left out). The terms ``j = 0 … k`` come from running sums of logs: ``log Γ(j + a) − log Γ(a)`` is the sum of
    ``log(a + t)`` for ``t < j``, and ``log Γ(n − j + b)`` is ``log Γ(n + b)`` less that of ``log(n − t + b)``
    for ``1 <= t <= j``.

    >>> g = Grid(np.array([1.0, 2.0]), np.array([1.0, 8.0]), np.zeros(2))
    >>> round(predictive_cdf(2, 10, g, np.array([0.0, -50.0])), 6)  # all the weight on a = b = 1: 3 / 11
    0.272727
    """
    if k >= n:
        return 1.0
    if k < 0:
        return 0.0
    weight = np.exp(log_posterior - log_posterior.max())
    keep = weight > _NEGLIGIBLE * weight.sum()
    weight = weight[keep] / weight[keep].sum()
    a, b = grid.a[keep][:, None], grid.b[keep][:, None]
    constant = lgamma(n + b) - lgamma(b) - lgamma(n + a + b) + lgamma(a + b)
    # The terms a block of j at a time (TAIL_BLOCK), the running sums carried from one block to the next and the
    # tail added up as a (max, sum) pair: the memory of a block, whatever k (the arrays of every j at once were
    # points x k: on 5M hands, k of a player's 10^5 dangerous discards by choice made the screen's peak grow).
    rising_a = np.zeros_like(a)  # sum of log(a + t), t < j0
    falling_b = np.zeros_like(b)  # sum of log(n - t + b), 1 <= t <= j0
    top = np.full(a.shape, -np.inf)
    total = np.zeros(a.shape)
    for j0 in range(0, k + 1, TAIL_BLOCK):
        j = np.arange(j0, min(k + 1, j0 + TAIL_BLOCK), dtype=float)
        log_choose = math.lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0)
        up = np.cumsum(np.log(a + j[None, :]), axis=1)  # through t = j: the next j's rising sum
        down = np.cumsum(np.log(n - j[None, 1:] + b), axis=1)
        rising = np.concatenate([rising_a, rising_a + up[:, :-1]], axis=1)
        falling = np.concatenate([falling_b, falling_b + down], axis=1)
        log_terms = log_choose[None, :] + rising - falling + constant
        block_top = np.maximum(top, log_terms.max(axis=1, keepdims=True))
        total = total * np.exp(top - block_top) + np.exp(log_terms - block_top).sum(axis=1, keepdims=True)
        top = block_top
        end = j0 + len(j)  # the next block's first j: its sums through it
        rising_a = rising_a + up[:, -1:]
        if down.shape[1]:
            falling_b = falling_b + down[:, -1:]
        if end <= k:
            falling_b = falling_b + np.log(n - end + b)
    tails = np.exp(top[:, 0]) * total[:, 0]
    return float(min(1.0, float(np.sum(weight * np.minimum(tails, 1.0)))))


def predictive_pvalues(discards: np.ndarray, counts: np.ndarray) -> list[tuple[float, float]]:
    """Per player, ``(expected, p)``: the others' posterior mean rate times the player's discards, and the
    posterior predictive ``P(K <= k)`` given every *other* player's counts (leave one out), on one grid
    (:func:`prior_grid` of every player). Needs 3 players or more (2 others); with fewer, every p is 1."""
    m = len(discards)
    if m < 3:
        return [(float("nan"), 1.0)] * m
    grid = prior_grid(discards, counts)
    each = np.stack([log_beta_binomial(int(counts[j]), int(discards[j]), grid.a, grid.b) for j in range(m)])
    total = each.sum(axis=0)
    rate = grid.a / (grid.a + grid.b)
    out = []
    for i in range(m):
        log_post = grid.log_prior + total - each[i]
        weight = np.exp(log_post - log_post.max())
        mean_rate = float(np.sum(weight * rate) / weight.sum())
        out.append((mean_rate * float(discards[i]), predictive_cdf(int(counts[i]), int(discards[i]), grid, log_post)))
    return out


def screen_information(
    con: duckdb.DuckDBPyConnection,
    *,
    fdr: float = FDR,
    min_discards: int = MIN_DISCARDS,
    models: sql.Models | None = None,
) -> list[InfoResult]:
    """The screen of the warehouse behind ``con``: one line per player, flagged first, then by p-value.
    ``models``: where the pass over ``events`` (``sql/discard_choices.sql``) runs: by default on ``con``, a run
    of hands at a time (:func:`discard_counts`); ``--engine spark``'s :class:`pipeline.analytics.spark.SparkModels`
    over every hand at once."""
    frame = discard_counts(con) if models is None else models.run("pipeline.audit", "discard_choices", lo=None, hi=None)
    return screen_counts(
        frame["player"].to_list(),
        frame["hands"].to_numpy(),
        frame["discards"].to_numpy(),
        frame["dangerous_by_choice"].to_numpy(),
        fdr=fdr,
        min_discards=min_discards,
    )


CHUNK_HANDS = 10_000  # hands a run of the judged discards counts at a time: what their memory grows with

# What sql/discard_choices.sql reads of each table, for the runs in file order (pipeline/analytics/runs.py)
CHOICE_STREAMS = (
    Stream("hands", "hand_id, level"),
    Stream(
        "events", "hand_id, t, replayed, player, safe_alternative", "t = 'discard' AND replayed AND player IS NOT NULL"
    ),
)


def discard_counts(con: duckdb.DuckDBPyConnection, *, chunk_hands: int = CHUNK_HANDS) -> pl.DataFrame:
    """``sql/discard_choices.sql``'s rows over every hand of ``con``, one run of ``chunk_hands`` hands at a time
    (:func:`pipeline.analytics.runs.summed_runs`: every table read once, in file order): its columns are counts
    over hands, a hand in one run only, so the runs' rows are summed. One query over every hand held a hash
    table of every hand and every player's hands (676 MB on 1M hands, 327 MB on 200k); a run's memory does not
    grow with the warehouse. In the model's order, with its column types."""
    return summed_runs(
        con,
        CHOICE_STREAMS,
        lambda run: sql.run_sql(run.con, "pipeline.audit", "discard_choices", lo=run.lo, hi=run.hi),
        added(["player"]),
        empty=lambda: sql.run_sql(con, "pipeline.audit", "discard_choices", lo=None, hi=None),
        size=chunk_hands,
        replayed=False,
    ).sort("player")


def screen_counts(
    players: list[str],
    hands: np.ndarray,
    discards: np.ndarray,
    counts: np.ndarray,
    *,
    fdr: float = FDR,
    min_discards: int = MIN_DISCARDS,
) -> list[InfoResult]:
    """The screen of per-player counts (``sql/discard_choices.sql``'s columns): the players with at least
    ``min_discards`` judged discards are tested against the others tested (:func:`screen_tails`)."""
    tails = screen_tails(discards, counts, min_n=min_discards, fdr=fdr)
    out = [
        InfoResult(player, int(hands[i]), int(discards[i]), int(counts[i]), *tails[i])
        for i, player in enumerate(players)
    ]
    return sorted(out, key=lambda r: (not r.flagged, r.p if r.p is not None else 2.0, r.player))


Tail = tuple[float | None, float | None, float | None, bool]  # expected, p, q, flagged (None: not tested)


def screen_tails(n: np.ndarray, k: np.ndarray, *, min_n: int, fdr: float) -> list[Tail]:
    """Per player, ``k`` of ``n`` against the others: the players with ``n >= min_n`` (three at least, else
    none) get the expected count and the lower-tail p-value of :func:`predictive_pvalues`, and q-values by
    Benjamini–Yekutieli over them; the others are listed, not tested. Shared by both information signals.

    >>> screen_tails(np.array([10, 10]), np.array([1, 2]), min_n=5, fdr=0.05)  # two players: none tested
    [(None, None, None, False), (None, None, None, False)]
    """
    out: list[Tail] = [(None, None, None, False)] * len(n)
    tested = np.flatnonzero(n >= min_n)
    if len(tested) >= 3:
        tails = predictive_pvalues(n[tested], k[tested])
        q_values = by_qvalues(np.array([p for _, p in tails])).tolist()
        for i, (expected, p), q in zip(tested.tolist(), tails, q_values, strict=True):
            out[i] = (expected, p, q, q <= fdr)
    return out


# ---------------------------------------------------------------------------------------------- evidence
@dataclass(frozen=True, slots=True)
class Dodge:
    """A safe discard made while holding a dangerous tile that was as good: ``seat`` threw ``thrown`` (no
    opponent still in could win on it, and not of its void suit: every player throws those first) at event
    ``event`` while it held ``held``, tiles an opponent still in (``waiting``) could win on, whose discard would
    have left its hand as close to ready. The behaviour the screen counts the absence of, seen from the other
    side: what a player who sees the hands does."""

    event: int
    seat: int
    thrown: str
    held: tuple[str, ...]
    waiting: tuple[int, ...]

    def text(self) -> str:
        seats = ", ".join(str(o) for o in self.waiting)
        return f"event {self.event}: threw {self.thrown} holding {' '.join(self.held)} (seat {seats} could win on it)"


def dodges(record: Record, seat: int) -> list[Dodge]:
    """``seat``'s :class:`Dodge` discards in ``record`` (a parsed record of level full or dealt: every hand is
    known; others have none), found by replaying it; the replay stops at an illegal action."""
    if record.level not in ("full", "dealt"):
        return []
    try:
        state = initial_state(record)
    except IllegalAction:
        return []
    found = []
    for index, event in enumerate(record.events):
        if isinstance(event, Discard) and event.seat == seat:
            dodge = _dodge(state, index, seat, event.tile)
            if dodge is not None:
                found.append(dodge)
        try:
            state.apply(event)
        except IllegalAction:
            break
    return found


def _dodge(state: HandState, index: int, seat: int, tile: int) -> Dodge | None:
    waits = {o: state.win_mask(o) for o in range(state.n) if o != seat and not state.won[o]}
    dangerous = 0
    for mask in waits.values():
        dangerous |= mask
    melds, void = len(state.melds[seat]), state.void[seat]
    if not dangerous or (dangerous >> tile) & 1 or tile // 9 == void:
        return None  # nobody is ready, the discard is itself dangerous, or of the void suit (anyone throws those)
    counts = list(state.counts[seat])

    def after(k: int) -> int:
        counts[k] -= 1
        value = shanten(counts, melds, void)
        counts[k] += 1
        return value

    actual = after(tile)
    held = [k for k in range(27) if counts[k] and (dangerous >> k) & 1 and state.can_discard(seat, k)]
    good = [k for k in held if after(k) <= actual]
    if not good:
        return None
    waiting = tuple(o for o, mask in waits.items() if any((mask >> k) & 1 for k in good))
    return Dodge(index, seat, TILE_NAMES[tile], tuple(TILE_NAMES[k] for k in good), waiting)


EVIDENCE = 5  # hands shown per flagged player
CANDIDATES = 40  # hands replayed per flagged player to choose them from


def best_dodges(
    con: duckdb.DuckDBPyConnection, player: str, *, limit: int = EVIDENCE, candidates: int = CANDIDATES
) -> list[tuple[str, list[Dodge]]]:
    """The hands that show ``player``'s avoidance best: up to ``limit`` hands (``hand_id``, its dodges), most
    dodges first. Candidates are the ``candidates`` hands with most safe discards while somebody was ready
    (``sql/info_candidates.sql``), each read back from its source and replayed (:func:`dodges`); a hand that
    cannot be read back is skipped."""
    from pipeline.audit.replay import HandNotFound, stored_record  # the replay reads sources: only when asked

    rows = sql.run_sql(con, "pipeline.audit", "info_candidates", player=player, limit=candidates)
    found = []
    for hand_id in rows["hand_id"].to_list():
        try:
            record = parse_record(stored_record(con, hand_id).record)
        except (HandNotFound, RecordError):
            continue
        if player in record.players:
            seen = dodges(record, record.players.index(player))
            if seen:
                found.append((hand_id, seen))
    return sorted(found, key=lambda h: (-len(h[1]), h[0]))[:limit]
