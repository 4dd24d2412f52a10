"""The exact distribution of a fairly dealt hand's starting shanten: the null of the stacked-deal screen.

When the wall is shuffled fairly, the tiles a seat is dealt (13, the dealer 14) are a uniformly random subset
of the wall's tiles, whatever the seat, the dealer or the other hands: every one of the ``C(tiles, size)``
subsets of the wall's distinct tiles (each of the four copies of a kind counted apart) is equally likely. The
distribution of any score of the dealt hand is then a count of subsets, and depends only on the number of suits
in play (36 tiles each: 108 at a table of three suits, 72 at a table of two, whatever the number of players)
and the hand's size. This module counts them exactly, for :func:`~pipeline.rules.hand.deal_shanten` (the best
over the void suit at a table of three suits) and for the tiles outside the hand's shortest suit.

Counting every hand is out of reach (about 10^17 subsets, 10^9 distinct hands), but shanten reads each suit only
through its *shape* (:func:`~pipeline.rules.hand.suit_shape`: its block options and pairs), and the 1.5 million
nine-count vectors of one suit with at most 14 tiles fall into 645 shapes (by size). So: enumerate one suit's
count vectors once, each weighted by the subsets of tiles it stands for (``prod C(4, c)``), and total the weights
by (size, shape); then for every split of the hand's size between the suits, every combination of shapes, the
shanten of a representative hand, weighted by the product of the shapes' weights. At a table of three suits the
best over the void is the least of the three two-suit shantens, each worked out once per pair of shapes. The
counts are exact integers; ``deal_null.json`` beside this module caches them, ``python -m
pipeline.audit.deal_null`` regenerates the file (about a minute), and the tests regenerate the small hands and
check them against every hand enumerated, and the cached table against random deals.

>>> null = load()
>>> round(null.mean("3x13"), 3), round(null.mean("3x14"), 3)
(3.211, 2.817)
>>> round(float(null.pmf("3x13").sum()), 12)
1.0
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from math import comb
from pathlib import Path

import numpy as np

from pipeline.rules.hand import shanten_of_codes, suit_shape

NULL_PATH = Path(__file__).with_name("deal_null.json")
SIZES = (13, 14)  # a seat's deal; the dealer's
SUIT_COUNTS = (2, 3)  # suits in play: 36 tiles each
LOWEST = -1  # the least shanten a hand can have (a whole hand of 14)


def key(suits: int, size: int) -> str:
    """The table's name for hands of ``size`` tiles dealt from ``suits`` suits.

    >>> key(3, 14)
    '3x14'
    """
    return f"{suits}x{size}"


def suit_classes(max_size: int) -> dict[int, list[tuple[int, int]]]:
    """Per size ``s`` (0..``max_size``), the shapes of one suit of ``s`` tiles: ``(a representative code, the
    number of tile subsets of that shape)``. The weights of each size sum to ``C(36, s)``.

    >>> [sum(w for _, w in shapes) == comb(36, s) for s, shapes in suit_classes(3).items()]
    [True, True, True, True]
    """
    totals: dict[tuple[int, int], list[int]] = {}  # (size, shape) → [code, weight]

    def walk(rank: int, code: int, size: int, weight: int) -> None:
        if rank == 9:
            entry = totals.setdefault((size, suit_shape(code)), [code, 0])
            entry[1] += weight
            return
        for c in range(5):
            if size + c > max_size:
                break
            walk(rank + 1, code | (c << (3 * rank)), size + c, weight * comb(4, c))

    walk(0, 0, 0, 1)
    out: dict[int, list[tuple[int, int]]] = {s: [] for s in range(max_size + 1)}
    for (size, _), (code, weight) in sorted(totals.items()):
        out[size].append((code, weight))
    return out


def shanten_counts(suits: int, size: int, classes: dict[int, list[tuple[int, int]]]) -> dict[int, int]:
    """Tile subsets of ``size`` dealt from ``suits`` suits, by their :func:`~pipeline.rules.hand.deal_shanten`
    (the best over the void at three suits), from :func:`suit_classes` (of at least ``size``)."""
    codes = {s: [c for c, _ in shapes] for s, shapes in classes.items()}
    weights = {s: np.array([w for _, w in shapes], dtype=np.int64) for s, shapes in classes.items()}

    @cache
    def two(s1: int, s2: int) -> np.ndarray:
        """The shanten of every pair of shapes of sizes ``s1`` and ``s2``, the third suit empty (void)."""
        return np.array([[shanten_of_codes([a, b, 0]) for b in codes[s2]] for a in codes[s1]], dtype=np.int8)

    counts: dict[int, int] = {}

    def add(values: np.ndarray, w: np.ndarray) -> None:
        for v in np.unique(values).tolist():
            counts[v] = counts.get(v, 0) + int(w[values == v].sum())

    for s1 in range(size + 1):
        if suits == 2:
            add(two(s1, size - s1), np.outer(weights[s1], weights[size - s1]))
            continue
        for s2 in range(size - s1 + 1):
            s3 = size - s1 - s2
            values = np.minimum(np.minimum(two(s1, s2)[:, :, None], two(s1, s3)[:, None, :]), two(s2, s3)[None, :, :])
            w = weights[s1][:, None, None] * weights[s2][None, :, None] * weights[s3][None, None, :]
            add(values, w)
    return dict(sorted(counts.items()))


def suited_counts(size: int) -> dict[int, int]:
    """Tile subsets of ``size`` dealt from three suits, by the tiles outside their shortest suit (the suits a
    player keeps after declaring the shortest void).

    >>> suited_counts(2)  # two tiles: both kept, whatever they are
    {2: 5778}
    """
    counts: dict[int, int] = {}
    for s1 in range(size + 1):
        for s2 in range(size - s1 + 1):
            s3 = size - s1 - s2
            kept = size - min(s1, s2, s3)
            counts[kept] = counts.get(kept, 0) + comb(36, s1) * comb(36, s2) * comb(36, s3)
    return dict(sorted(counts.items()))


def generate(sizes: Sequence[int] = SIZES) -> dict[str, dict[str, dict[str, int]]]:
    """The tables of :data:`NULL_PATH`: per ``suits x size``, the counts of subsets by shanten and their total
    (and, at three suits, by suited tiles)."""
    classes = suit_classes(max(sizes))
    out: dict[str, dict[str, dict[str, int]]] = {"shanten": {}, "suited": {}}
    for suits in SUIT_COUNTS:
        for size in sizes:
            counts = shanten_counts(suits, size, classes)
            assert sum(counts.values()) == comb(36 * suits, size)
            out["shanten"][key(suits, size)] = {str(k): v for k, v in counts.items()}
            if suits == 3:
                out["suited"][key(suits, size)] = {str(k): v for k, v in suited_counts(size).items()}
    return out


@dataclass(frozen=True, eq=False)  # hashed by identity: the convolutions are memoised per table
class DealNull:
    """The cached tables: the probability of each score of a fairly dealt hand, by ``suits x size``."""

    shanten: dict[str, dict[int, int]]
    suited: dict[str, dict[int, int]]

    def pmf(self, name: str) -> np.ndarray:
        """Probabilities of shanten ``LOWEST, LOWEST + 1, ...`` for hands ``name`` (:func:`key`)."""
        counts = self.shanten[name]
        top = max(counts)
        total = sum(counts.values())
        return np.array([counts.get(v, 0) / total for v in range(LOWEST, top + 1)])

    def mean(self, name: str) -> float:
        return float(np.dot(self.pmf(name), np.arange(LOWEST, LOWEST + len(self.pmf(name)))))

    def suited_mean(self, name: str) -> float | None:
        counts = self.suited.get(name)
        if counts is None:
            return None
        return sum(k * v for k, v in counts.items()) / sum(counts.values())


@cache
def load(path: Path = NULL_PATH) -> DealNull:
    """The cached tables of ``deal_null.json``."""
    raw = json.loads(path.read_text())
    return DealNull(
        shanten={name: {int(k): v for k, v in c.items()} for name, c in raw["shanten"].items()},
        suited={name: {int(k): v for k, v in c.items()} for name, c in raw["suited"].items()},
    )


def lower_tail(null: DealNull, hands: Iterable[tuple[str, int]], observed: int) -> float:
    """``P(S <= observed)`` for ``S`` the sum of independent fair deals' shanten, ``hands`` giving how many
    of each kind (:func:`key`): the distribution of the sum is the exact convolution of the hands' (direct sums
    of positive terms, so a tail of 1e-30 keeps its digits).

    Fast for a group of tens of thousands of hands, and for tens of thousands of groups: each distribution is
    kept without the runs of zeros at its ends (probabilities below the smallest double: they add nothing to a
    sum), so a group of ``n`` hands spans about ``60·√n`` sums, not ``8·n`` (a player's 34,520 hands at 200k: 0.1
    s, where the plain convolutions did not end in 17 minutes of the report); and the cumulative distribution is
    computed once per shape of group (:func:`_cumulative`), which the many sessions of a warehouse share. (The
    values are the same to rounding: the sums are added in another order, a relative difference of about 1e-14.)

    >>> null = load()
    >>> round(lower_tail(null, [("3x13", 1)], 10), 12)
    1.0
    >>> round(lower_tail(null, [("3x13", 1)], 0), 6) == round(float(null.pmf("3x13")[:2].sum()), 6)
    True
    >>> lower_tail(null, [("3x13", 3)], -1), lower_tail(null, [("3x13", 3)], 0) > 0  # 13 tiles: at best ready
    (0.0, True)
    """
    low, tail = _cumulative(null, tuple((name, n) for name, n in hands if n))
    index = observed - low
    if index < 0:
        return 0.0
    return float(min(1.0, tail[min(index, len(tail) - 1)]))


@cache
def _cumulative(null: DealNull, hands: tuple[tuple[str, int], ...]) -> tuple[int, np.ndarray]:
    """``P(S <= low + i)`` for the sum ``S`` of ``hands`` (each kind's count, none zero), with ``low``: computed
    once per shape of group and kept (a screen of 200,000 hands tests some 90,000 groups, mostly sessions of a
    few shapes; each convolved its own distribution before). Summed from the least sum up, so a far tail keeps
    its digits."""
    low, dist = 0, np.ones(1)
    for name, n in hands:
        first, power = _power(null, name, n)
        low, dist = _convolve(low, dist, LOWEST * n + first, power)
    return low, np.cumsum(dist)


def _convolve(low_a: int, a: np.ndarray, low_b: int, b: np.ndarray) -> tuple[int, np.ndarray]:
    """The distribution of the sum of two independent ones (``x[i]``: the probability of ``low_x + i``), its
    zero ends trimmed.

    >>> _convolve(1, np.array([0.5, 0.5]), 0, np.array([0.0, 0.5, 0.5, 0.0]))
    (2, array([0.25, 0.5 , 0.25]))
    """
    return _trim(low_a + low_b, np.convolve(a, b))


def _trim(low: int, dist: np.ndarray) -> tuple[int, np.ndarray]:
    """``dist`` without its leading and trailing zeros, and the value its first entry stands for."""
    nonzero = np.flatnonzero(dist)
    if not len(nonzero):
        return low, dist[:0]
    return low + int(nonzero[0]), dist[nonzero[0] : nonzero[-1] + 1]


def _power(null: DealNull, name: str, n: int) -> tuple[int, np.ndarray]:
    """The distribution of the sum of ``n`` hands ``name``, by squaring (memoised per table), zero ends trimmed:
    the index of its first entry above ``n`` times the least shanten, and the entries."""
    return _powers(null, name)(n)


@cache
def _powers(null: DealNull, name: str):  # type: ignore[no-untyped-def]
    base = _trim(0, null.pmf(name))

    @cache
    def power(n: int) -> tuple[int, np.ndarray]:
        if n == 1:
            return base
        half = power(n // 2)
        out = _convolve(*half, *half)
        return _convolve(*out, *base) if n % 2 else out

    return power


def main(argv: Sequence[str] = ()) -> None:  # pragma: no cover - the generator, run by hand
    """Regenerate :data:`NULL_PATH` (or the path given)."""
    path = Path(argv[0]) if argv else NULL_PATH
    path.write_text(json.dumps(generate(), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
