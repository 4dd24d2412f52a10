"""Information cheats: a single-player screen for players who play as if they saw the other hands.

A player who sees every hand (a confederate's signals, a hidden camera, a compromised client) never throws a
tile that completes an opponent's hand while it holds one that does not. Honest players cannot know, and now
and then do: they throw a *dangerous discard by choice* (``events.safe_alternative``: a tile some opponent
still in could win on, while the player held a tile nobody could win on whose discard left its own hand as
close to ready). The screen counts, per player, the discards the replay can judge (hands of level full or
dealt, where every hand is known) and those dangerous by choice, and asks how unlikely so few are.

The null is the room's own players. Players differ (a defensive player throws fewer dangerous tiles than a
novice), so a player's count is compared with a **beta-binomial** fitted, by the method of moments, to every
*other* player's counts (leave one out, so that a cheat does not pull the null towards itself): the spread
of honest rates is part of the null. The p-value is the lower tail ``P(K <= k)`` for the player's number of
judged discards; Benjamini–Yekutieli q-values control the false discovery rate over the players screened
(any dependence). Players with fewer than ``min_discards`` judged discards are listed, not tested.

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

from pipeline import sql
from pipeline.analytics.stats import by_qvalues

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


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(K <= k)`` for ``K ~ Binomial(n, p)``: the limit of no spread between players."""
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return _sum_of_logs(_log_choose(n, j) + j * math.log(p) + (n - j) * math.log1p(-p) for j in range(k + 1))


def _log_choose(n: int, j: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)


def _sum_of_logs(log_terms: Iterable[float]) -> float:
    """``sum(exp(t))`` of probabilities given as logs, scaled by the largest so that none underflows first;
    capped at 1 (rounding)."""
    terms = list(log_terms)
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def fit_beta_binomial(discards: np.ndarray, counts: np.ndarray) -> tuple[float, float | None]:
    """The pooled rate and the spread of the players' true rates, by the method of moments: ``(mean, a + b)``,
    ``a + b`` None when the observed spread is no more than binomial noise (then the null is binomial).

    >>> mean, size = fit_beta_binomial(np.array([1000, 1000, 1000]), np.array([10, 20, 30]))
    >>> round(mean, 3), round(size, 1)
    (0.02, 415.4)
    """
    n = discards.astype(float)
    mean = float(counts.sum() / n.sum())
    rates = counts / n
    weights = n / n.sum()
    observed = float(np.sum(weights * (rates - mean) ** 2))
    noise = float(np.sum(weights * mean * (1 - mean) / n))
    between = observed - noise
    if between <= 0 or mean <= 0 or mean >= 1:
        return mean, None
    return mean, max(mean * (1 - mean) / between - 1, 1e-6)


def screen_information(
    con: duckdb.DuckDBPyConnection, *, fdr: float = FDR, min_discards: int = MIN_DISCARDS
) -> list[InfoResult]:
    """The screen of the warehouse behind ``con``: one line per player, flagged first, then by p-value."""
    frame = sql.run_sql(con, "pipeline.audit", "discard_choices")
    players = frame["player"].to_list()
    hands = frame["hands"].to_numpy()
    discards = frame["discards"].to_numpy()
    counts = frame["dangerous_by_choice"].to_numpy()
    tested = discards >= min_discards
    results = []
    for i, player in enumerate(players):
        others = tested.copy()
        others[i] = False
        expected = p = None
        if tested[i] and others.sum() >= 2 and discards[others].sum() > 0:
            mean, size = fit_beta_binomial(discards[others], counts[others])
            expected = mean * float(discards[i])
            if size is None:
                p = binomial_cdf(int(counts[i]), int(discards[i]), mean)
            else:
                p = beta_binomial_cdf(int(counts[i]), int(discards[i]), mean * size, (1 - mean) * size)
        results.append(InfoResult(player, int(hands[i]), int(discards[i]), int(counts[i]), expected, p))
    tested_p = np.array([r.p for r in results if r.p is not None])
    q_values = iter(by_qvalues(tested_p).tolist()) if len(tested_p) else iter(())
    out = []
    for r in results:
        if r.p is None:
            out.append(r)
            continue
        q = next(q_values)
        out.append(InfoResult(r.player, r.hands, r.discards, r.dangerous_by_choice, r.expected, r.p, q, q <= fdr))
    return sorted(out, key=lambda r: (not r.flagged, r.p if r.p is not None else 2.0, r.player))
