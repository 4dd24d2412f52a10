"""Honest uncertainty: Wilson intervals for rates, normal intervals for means from sums, and a bootstrap.

Most players have few hands, so a bare rate misleads; every rate comes with its numerator, denominator and
a Wilson 95% interval, every mean with ``n`` and an interval.
"""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


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
