"""Benchmarks (``make bench``; ``make bench QUICK=1`` for a quick look). Not tests: these machines are
noisy, so every figure is a ratio of two things measured side by side in the same run.

Prints a table and writes ``bench-results.json`` (ignored by git).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.rules.hand import is_seven_pairs, is_standard, is_standard_recursive


def _random_hands(n: int, seed: int) -> list[list[int]]:
    """Half winning hands (sets + a pair in at most two suits), half random 14-tile hands."""
    rng = random.Random(seed)
    hands = []
    while len(hands) < n:
        counts = [0] * 27
        suits = rng.sample(range(3), 2)
        if len(hands) % 2 == 0:
            ok = True
            for _ in range(4):
                suit = rng.choice(suits)
                if rng.random() < 0.5:
                    r = rng.randrange(7)
                    for k in range(3):
                        counts[suit * 9 + r + k] += 1
                else:
                    counts[suit * 9 + rng.randrange(9)] += 3
            counts[rng.choice(suits) * 9 + rng.randrange(9)] += 2
            ok = max(counts) <= 4
            if not ok:
                continue
        else:
            pool = [s * 9 + r for s in suits for r in range(9) for _ in range(4)]
            for k in rng.sample(pool, 14):
                counts[k] += 1
        hands.append(counts)
    return hands


def _rate(fn: Callable[[list[int]], bool], hands: list[list[int]], repeat: int) -> tuple[float, int]:
    best = float("inf")
    wins = 0
    for _ in range(repeat):
        start = time.perf_counter()
        wins = sum(1 for h in hands if fn(h))
        best = min(best, time.perf_counter() - start)
    return len(hands) / best, wins


def bench_win_check(quick: bool) -> dict[str, Any]:
    hands = _random_hands(4_000 if quick else 40_000, seed=7)

    def table(h: list[int]) -> bool:
        return is_seven_pairs(h) or is_standard(h)

    def recursive(h: list[int]) -> bool:
        return is_seven_pairs(h) or is_standard_recursive(h)

    table_rate, table_wins = _rate(table, hands, 3)
    rec_rate, rec_wins = _rate(recursive, hands, 3)
    assert table_wins == rec_wins, "the two methods disagree"
    return {
        "win_check_hands": len(hands),
        "win_checks_per_s_table": round(table_rate),
        "win_checks_per_s_recursive": round(rec_rate),
        "win_check_speedup": round(table_rate / rec_rate, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smaller run, for a quick look")
    parser.add_argument("--out", default="bench-results.json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"quick": args.quick}
    sections = [("win check: table vs recursive search", bench_win_check)]
    for title, fn in sections:
        print(f"== {title}")
        figures = fn(args.quick)
        for key, value in figures.items():
            print(f"  {key:<32} {value}")
        results.update(figures)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
