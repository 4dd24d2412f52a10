"""The degrees of freedom a biweight-studentized deviate is read in (:func:`pipeline.analytics.stats.biweight_df`).

``python -m tools.biweight_df [--samples N] [--seed S] [--others 5 7 10 ...]`` draws ``N`` rooms of ``m`` normal
others and one more normal player, studentizes the player's deviate by the others' biweight location and spread
(:func:`pipeline.analytics.stats.biweight`, the room mean's error added as the think-time screen adds it:
``√(1 + 1/m)``), and prints for each ``m`` and lower tail 1e-2, 1e-3, 1e-4 the deviate's quantile, the degrees of
freedom of the Student's t with that quantile, and :func:`~pipeline.analytics.stats.biweight_df`'s, which is to
stay at or below them (fewer degrees of freedom: a heavier tail, fewer flags). Measured 2026-12-07 (200,000
rooms each): at 1e-4, m = 5, 7, 10, 15, 23, 31, 63: 1.6, 2.3, 4.5, 8.7, 19, 31, 83; biweight_df 1.0, 1.9, 3.7,
7.3, 13.8, 20.9, 51.3.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

import numpy as np

from pipeline.analytics.stats import biweight_df, t_isf

TAILS = (1e-2, 1e-3, 1e-4)


def deviates(m: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """``samples`` deviates of a normal player from ``m`` normal others, studentized by their biweight (vectorised
    :func:`~pipeline.analytics.stats.biweight`)."""
    others = rng.standard_normal((samples, m))
    player = rng.standard_normal(samples)
    centre = np.median(others, axis=1)
    d = others - centre[:, None]
    mad = np.median(np.abs(d), axis=1)
    u6 = d / (6 * mad[:, None])
    w6 = np.where(np.abs(u6) < 1, (1 - u6**2) ** 2, 0.0)
    location = centre + np.sum(w6 * d, axis=1) / np.sum(w6, axis=1)
    u9 = d / (9 * mad[:, None])
    inside = np.abs(u9) < 1
    num = np.sum(np.where(inside, d**2 * (1 - u9**2) ** 4, 0.0), axis=1)
    den = np.sum(np.where(inside, (1 - u9**2) * (1 - 5 * u9**2), 0.0), axis=1)
    spread = np.sqrt(m * num / den**2)
    return np.asarray((player - location) / (spread * math.sqrt(1 + 1 / m)))


def fitted_df(quantile: float, tail: float) -> float:
    """The degrees of freedom whose Student's t has ``quantile`` (negative) as its lower ``tail`` quantile
    (bisection on a log scale, 0.3 to 1000)."""
    low, high = 0.3, 1000.0
    for _ in range(60):
        mid = math.sqrt(low * high)
        if -t_isf(tail, mid) < quantile:
            low = mid
        else:
            high = mid
    return math.sqrt(low * high)


def table(others: Sequence[int], samples: int, seed: int) -> list[tuple[int, float, float, float, float]]:
    """(m, tail, the deviate's quantile, its fitted degrees of freedom, biweight_df(m)) per m and tail."""
    rng = np.random.default_rng(seed)
    out = []
    for m in others:
        t = deviates(m, samples, rng)
        for tail in TAILS:
            q = float(np.quantile(t, tail))
            out.append((m, tail, q, fitted_df(q, tail), biweight_df(m)))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--others", type=int, nargs="+", default=[5, 7, 10, 15, 23, 31, 63])
    args = parser.parse_args(argv)
    print("| others | tail | quantile | fitted df | biweight_df |\n|---|---|---|---|---|")
    for m, tail, q, df, ours in table(args.others, args.samples, args.seed):
        print(f"| {m} | {tail:g} | {q:.2f} | {df:.1f} | {ours:.1f} |")


if __name__ == "__main__":
    main()
