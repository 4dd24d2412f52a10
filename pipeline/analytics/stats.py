"""Honest uncertainty: Wilson intervals for rates, normal intervals for means from sums, a bootstrap and a
Poisson interval for counts; the normal tail and the Benjamini–Yekutieli false discovery rate of the collusion
screen and its dashboard.

Most players have few hands, so a bare rate misleads; every rate comes with its numerator, denominator and
a Wilson 95% interval, every mean with ``n`` and an interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

Z95 = 1.959963984540054  # normal_isf(0.025)


def wilson(num: int, den: int, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson score interval of ``num / den``; ``(None, None)`` when ``den`` is 0.

    >>> [round(x, 4) for x in wilson(5, 10)]
    [0.2366, 0.7634]
    """
    if den <= 0:
        return None, None
    p = num / den
    z2 = z * z
    centre = (p + z2 / (2 * den)) / (1 + z2 / den)
    half = z * math.sqrt(p * (1 - p) / den + z2 / (4 * den * den)) / (1 + z2 / den)
    return max(0.0, round(centre - half, 12)), min(1.0, round(centre + half, 12))


def mean_interval(
    total: float, total_sq: float, n: int, z: float = Z95
) -> tuple[float | None, float | None, float | None]:
    """Mean and its normal-approximation 95% interval from ``sum``, ``sum of squares`` and ``n``.

    >>> mean_interval(6, 14, 3)[0]
    2.0
    """
    if n <= 0:
        return None, None, None
    mean = total / n
    if n == 1:
        return mean, None, None
    variance = max(0.0, (total_sq - total * total / n) / (n - 1))
    half = z * math.sqrt(variance / n)
    return mean, mean - half, mean + half


def bootstrap_mean(values: np.ndarray, *, resamples: int = 2000, seed: int = 0) -> tuple[float | None, float | None]:
    """Percentile bootstrap 95% interval of the mean (for skewed values such as points per win)."""
    if len(values) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    means = rng.choice(values, size=(resamples, len(values)), replace=True).mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def poisson_interval(count: float, z: float = Z95) -> tuple[float, float]:
    """Garwood's 95% interval of a Poisson mean from one ``count``: ``χ²(2k; 2.5%)/2`` to ``χ²(2k + 2; 97.5%)/2``,
    the chi-square quantiles by Wilson–Hilferty: the upper end within 0.2% of exact, the lower within 1% from a
    count of 5 up and within 0.02 below that (exact at 0).

    >>> [round(x, 2) for x in poisson_interval(10)]  # exact: 4.80, 18.39
    [4.79, 18.39]
    >>> [round(x, 3) for x in poisson_interval(0)]
    [0.0, 3.689]
    """
    k = max(0.0, float(count))

    def chi2(dof: float, zq: float) -> float:
        c = 2.0 / (9.0 * dof)
        return dof * max(0.0, 1.0 - c + zq * math.sqrt(c)) ** 3

    low = chi2(2 * k, -z) / 2 if k > 0 else 0.0
    high = chi2(2 * k + 2, z) / 2 if k > 0 else -math.log(normal_sf(z))
    return low, high


# ---------------------------------------------------------------------------------------------- tails and FDR
def normal_sf(z: float) -> float:
    """``P(Z > z)`` for a standard normal ``Z``: ``1 − Φ(z)``, exact far into the tail (``erfc``, no ``1 − x``).

    >>> round(normal_sf(Z95), 12), f"{normal_sf(10.0):.2e}"
    (0.025, '7.62e-24')
    """
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def t_sf(t: float, df: float) -> float:
    """``P(T > t)`` for Student's ``T`` with ``df`` degrees of freedom (``df`` > 0): half the regularised
    incomplete beta ``I_x(df/2, 1/2)`` at ``x = df/(df + t²)``, by its continued fraction (:func:`_beta_inc`),
    without ``1 − x`` where the tail is small.

    >>> round(t_sf(1.0, 1), 12), round(t_sf(0.0, 7), 12)  # Cauchy: a quarter beyond 1; the middle
    (0.25, 0.5)
    >>> round(t_sf(2.0, 2), 9) == round(0.5 * (1 - 2 / math.sqrt(6)), 9)  # df 2 has a closed form
    True
    >>> abs(t_sf(3.0, 1e6) - normal_sf(3.0)) < 1e-6  # many degrees of freedom: the normal
    True
    """
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if t == 0.0:
        return 0.5
    half = 0.5 * _beta_inc(0.5 * df, 0.5, df / (df + t * t))  # P(|T| > |t|) / 2
    return half if t > 0 else 1.0 - half


def t_isf(p: float, df: float) -> float:
    """The ``t`` with ``P(T > t) = p`` for Student's ``T`` of ``df`` degrees of freedom (``0 < p < 1``):
    :func:`t_sf`'s inverse, by bisection on it (it falls as ``t`` grows), to 1e-12 of ``t``'s scale. The one
    place a t quantile is taken from, so no tool keeps a table of its own.

    >>> round(t_isf(0.025, 2), 3), round(t_isf(0.025, 10), 3), round(t_isf(0.5, 4), 12)
    (4.303, 2.228, 0.0)
    >>> round(t_isf(0.25, 1), 9)  # Cauchy: a quarter beyond 1
    1.0
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"a tail probability must be in (0, 1), got {p}")
    if p > 0.5:
        return -t_isf(1.0 - p, df)
    low, high = 0.0, max(1.0, normal_isf(p))
    while t_sf(high, df) > p:  # heavier than the normal's: widen until the tail is below p
        low, high = high, 2.0 * high
    while high - low > 1e-12 * max(1.0, high):
        mid = 0.5 * (low + high)
        if t_sf(mid, df) > p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def biweight(values: Sequence[float]) -> tuple[float, float]:
    """Tukey's biweight location and midvariance of ``values`` (at least 2): the median moved one step by the
    weights ``(1 − u²)²`` of the points within 6 MADs of it, and the midvariance of the points within 9 MADs
    (``n Σ d²(1 − u²)⁴ / (Σ (1 − u²)(1 − 5u²))²``). Near the mean and variance's efficiency on normal samples,
    and a point far out (a cheat among the others) has no weight at all; a zero MAD gives (median, 0).

    >>> loc, var = biweight([0.1, -0.2, 0.05, 0.3, -0.1, 0.0, 0.2])
    >>> round(loc, 4), round(var, 4)
    (0.05, 0.0264)
    >>> loc2, var2 = biweight([0.1, -0.2, 0.05, 0.3, -0.1, 0.0, 0.2, -9.0])  # one far out: no weight
    >>> abs(loc2 - loc) < 0.03 and abs(var2 - var) < 0.01
    True
    """
    centre = float(np.median(values))
    mad = float(np.median([abs(v - centre) for v in values]))
    if mad == 0:
        return centre, 0.0
    near = [((v - centre) / (6 * mad), v - centre) for v in values]
    weights = [(1 - u * u) ** 2 for u, _ in near if abs(u) < 1]
    location = centre + sum((1 - u * u) ** 2 * d for u, d in near if abs(u) < 1) / sum(weights)
    wide = [((v - centre) / (9 * mad), v - centre) for v in values]
    num = sum(d * d * (1 - u * u) ** 4 for u, d in wide if abs(u) < 1)
    den = sum((1 - u * u) * (1 - 5 * u * u) for u, _ in wide if abs(u) < 1)
    if den == 0:  # the points within 9 MADs cancel out (a few, far from each other): the MAD's own variance
        return location, (1.4826 * mad) ** 2
    return location, len(values) * num / den**2


def biweight_df(m: int) -> float:
    """The degrees of freedom of Student's t to read a deviate studentized by the :func:`biweight` of ``m``
    normal others in: ``(m − 1)² / (m + 12)``, at least 1, at or below what Monte Carlo finds for its tail
    quantiles at 1e-2 to 1e-4 (``python -m tools.biweight_df``: 200,000 rooms each of m = 5, 7, 10, 15, 23, 31, 63,
    at 1e-4 1.6, 2.3, 4.5, 8.7, 19, 31, 83), so conservative: fewer than the ``m − 1`` of the mean and variance,
    for its scale is noisier.

    >>> [round(biweight_df(m), 1) for m in (5, 15, 63)]
    [1.0, 7.3, 51.3]
    """
    return max(1.0, (m - 1) ** 2 / (m + 12))


def _beta_inc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta ``I_x(a, b)``: the continued fraction (modified Lentz) where it converges
    fast, ``x < (a + 1)/(a + b + 2)``, else ``1 − I_{1−x}(b, a)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _beta_inc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * f


def binomial_sf(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for ``X ~ Binomial(n, p)``, exact: the terms summed in log space from ``k`` up, until they
    no longer change the sum (past the mode they only shrink).

    >>> binomial_sf(0, 10, 0.3), round(binomial_sf(3, 3, 0.5), 6), round(binomial_sf(1, 2, 0.5), 6)
    (1.0, 0.125, 0.75)
    >>> f"{binomial_sf(20, 45, 1 / 6):.2e}"
    '1.18e-05'
    """
    if k <= 0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    lp, lq = math.log(p), math.log1p(-p)
    head = math.lgamma(n + 1)

    def term(i: int) -> float:
        return math.exp(head - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)

    mode = int((n + 1) * p)
    if k <= mode:  # the upper tail holds the mode: its complement is the shorter sum, from k - 1 down
        below = 0.0
        for i in range(k - 1, -1, -1):
            t = term(i)
            below += t
            if t < below * 1e-17:
                break
        return max(0.0, 1.0 - below)
    total = 0.0
    for i in range(k, n + 1):
        t = term(i)
        total += t
        if t < total * 1e-17:
            break
    return min(1.0, total)


def skewed(z: float, gamma: float) -> float:
    """The ``z`` of a sum whose distribution is skewed (third cumulant over the variance to the power 3/2:
    ``gamma``), read as the standard normal deviate of the same upper tail: the sum taken as a shifted gamma of the
    same mean, variance and skew (Pearson type III), its tail by Wilson–Hilferty. To first order it is
    Cornish–Fisher's ``z − γ(z² − 1)/6``; unlike that it keeps the order of ``z`` at any skew. A sum of rare counts
    (a few hands of many with an event) is skewed right: its upper tail is far heavier than the normal's.
    Below the gamma's lower end (``1 + γz/2 ≤ 0``) the tail is everything: ``-inf``; a left skew (``γ < 0``)
    lightens the tail up to the gamma's upper end, past which it is ``inf``.

    >>> skewed(4.0, 0.0)
    4.0
    >>> round(skewed(4.58, 0.3), 2)  # skewed right: z 4.58 is the tail of a normal deviate of 3.86
    3.86
    >>> skewed(3.0, 0.5) < 3.0 < skewed(3.0, -0.5)
    True
    """
    if abs(gamma) < 1e-9:
        return z
    base = 1.0 + gamma * z / 2.0
    if base <= 0.0:
        return -math.inf if gamma > 0 else math.inf
    return (base ** (1.0 / 3.0) - 1.0 + gamma * gamma / 36.0) * 6.0 / gamma


def normal_isf(p: float) -> float:
    """The ``z`` with ``P(Z > z) = p`` (``0 < p < 1``): :func:`normal_sf`'s inverse, ``Φ⁻¹(1 − p)``.

    >>> round(normal_isf(0.025), 6)
    1.959964
    """
    return -NormalDist().inv_cdf(p)


def by_factor(m: int) -> float:
    """Benjamini–Yekutieli's ``c(m) = 1 + 1/2 + … + 1/m``, the price of allowing any dependence between tests."""
    return float(np.sum(1.0 / np.arange(1, m + 1)))


def by_levels(m: int, fdr: float) -> list[float]:
    """The Benjamini–Yekutieli step-up levels: the test ranked ``k`` (1..m, smallest p first) is rejected, with
    every test ranked above it, when its p-value is at most ``k · fdr / (m · c(m))``.

    >>> [round(a, 4) for a in by_levels(2, 0.05)]  # c(2) = 1.5
    [0.0167, 0.0333]
    """
    c_m = by_factor(m)
    return [k * fdr / (m * c_m) for k in range(1, m + 1)]


def by_qvalues(p: np.ndarray) -> np.ndarray:
    """Benjamini–Yekutieli q-values of the p-values ``p``, in their order (valid under any dependence between
    the tests): a test is rejected at false discovery rate ``fdr`` exactly when its q-value is ``<= fdr``."""
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p)
    ranked = p[order] * m * by_factor(m) / np.arange(1, m + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out
