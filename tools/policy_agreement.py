"""How often the reference policy's first choice is what each simulator style chose, and what the
review costs.

``python -m tools.policy_agreement [--hands N] [--seed S]`` simulates ``N`` hands (a realistic room of 16
players: :func:`pipeline.simulate.styles.make_pool`), reviews each (:func:`pipeline.audit.review.review`) and
prints, per style and kind of decision, the decisions and the share where the player's choice was the policy's
first (with a 95% Wilson interval), then the share of discards as efficient as the best
(:func:`pipeline.audit.review.efficient`), then the review's cost. A bot decides with its own rules and some
randomness (its ``skill``): agreement well below 1 is expected, and the order of the styles is the check.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from pipeline.analytics import stats
from pipeline.analytics.stats import t_isf
from pipeline.audit.review import Decision, efficient, review_json

KINDS = ("turn", "claim", "void", "exchange")


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of ``k`` successes in ``n`` trials (:func:`pipeline.analytics.stats.wilson`;
    ``(0, 1)`` when ``n`` is 0: nothing known)."""
    low, high = stats.wilson(k, n)
    return (0.0 if low is None else low, 1.0 if high is None else high)


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``values`` and its 95% interval (Student's t of ``n − 1`` degrees of freedom,
    :func:`~pipeline.analytics.stats.t_isf`; NaN bounds for fewer than two)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan, math.nan
    half = t_isf(0.025, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


@dataclass
class Tally:
    n: int = 0
    top: int = 0


def simulated(hands: int, seed: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``hands`` simulated records (JSON objects) and each player's style."""
    from pipeline.simulate.tables import SimConfig, simulate

    lines, labels = simulate(SimConfig(hands=hands, seed=seed, players=16))
    records = [orjson.loads(line) for line in lines]
    return records, {p: str(info["style"]) for p, info in labels.players.items()}


def measure(records: list[dict[str, Any]], styles: dict[str, str]) -> dict[str, Any]:
    """Agreement per style and kind, discard efficiency per style, and the review's cost (parsing the record
    included: what ``xuezhan replay --review`` adds to a replay)."""
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    eff: dict[str, Tally] = defaultdict(Tally)
    decisions = 0
    start, wall = time.process_time(), time.perf_counter()
    reviewed: list[tuple[Any, list[Decision]]] = [review_json(r) for r in records]
    seconds, wall = time.process_time() - start, time.perf_counter() - wall
    for record, ds in reviewed:
        for d in ds:
            decisions += 1
            style = styles.get(record.players[d.seat], "?")
            t = tallies[(style, d.kind)]
            t.n += 1
            t.top += d.chosen.rank == 1
            if d.kind == "turn" and d.chosen.action == "discard":
                e = eff[style]
                e.n += 1
                e.top += efficient([o for o in d.options if o.action == "discard"], d.chosen)
    return {
        "agreement": {f"{s}/{k}": (t.top, t.n) for (s, k), t in sorted(tallies.items())},
        "efficient": {s: (t.top, t.n) for s, t in sorted(eff.items())},
        "hands": len(records),
        "decisions": decisions,
        "review_ms_per_hand": 1000 * seconds / max(1, len(records)),
        "review_ms_per_hand_wall": 1000 * wall / max(1, len(records)),
        "decisions_per_s": decisions / seconds if seconds else 0.0,  # per CPU second
    }


def _share(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k / n if n else 0:.3f} [{lo:.3f}, {hi:.3f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=400)
    parser.add_argument("--seed", type=int, default=43)
    args = parser.parse_args(argv)
    records, styles = simulated(args.hands, args.seed)
    m = measure(records, styles)
    print(f"{'style/kind':<22}{'n':>7}  policy's first choice (95% Wilson)")
    for key, (k, n) in m["agreement"].items():
        print(f"{key:<22}{n:>7}  {_share(k, n)}")
    print(f"{'style':<22}{'n':>7}  discards as efficient as the best")
    for style, (k, n) in m["efficient"].items():
        print(f"{style:<22}{n:>7}  {_share(k, n)}")
    print(
        f"{m['hands']} hands, {m['decisions']} decisions: review {m['review_ms_per_hand']:.1f} ms of CPU per hand "
        f"({m['review_ms_per_hand_wall']:.1f} wall), {m['decisions_per_s']:.0f} decisions per CPU second (this process)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
