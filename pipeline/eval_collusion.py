"""Evaluate the collusion screen on simulated populations whose ground truth we know.

A grid of populations with injected colluding pairs (intensity × shared hands) and populations with no
colluders at all — including hard negatives: reckless (aggressive) and novice players, and honest friends
who share a table as often as colluders do. For each population: simulate, ingest, screen, and compare the
flagged pairs with the labels. The table reports, per grid cell, the share of colluding pairs flagged at the
chosen FDR, the honest pairs flagged (false discoveries), and the ranking AUC (the chance a colluding pair
scores above an honest one).

It runs the simulator, the ingest and the audit together, so it sits above all three (``xuezhan
eval-collusion``), not inside the audit: the audit never imports the simulator.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.analytics.queries import connect
from pipeline.audit.collusion import screen
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

INTENSITIES = (0.1, 0.2, 0.3, 0.5)
SHARED = (200, 500, 1000, 3000)
PLAYERS = 8
PAIRS = 2
# With 8 players and 2 colluding pairs who join each other's table half the time, a colluding pair plays
# together in about 0.28 of all hands (measured: 575 of 2,174).
SHARE = 0.28
HONEST_MIX = {"balanced": 0.2, "aggressive": 0.4, "defensive": 0.1, "novice": 0.3}


@dataclass(frozen=True, slots=True)
class Population:
    name: str
    hands: int
    intensity: float
    pairs: int
    friends: int
    seed: int
    styles: dict[str, float] | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    population: Population
    colluding: int
    flagged_colluding: int
    honest_pairs: int
    flagged_honest: int
    shared_colluding: float  # mean shared hands of the colluding pairs
    scores: tuple[tuple[float, bool], ...]  # (score, is colluding) of every screened pair


def grid(
    *,
    seed: int = 1,
    intensities: Iterable[float] = INTENSITIES,
    shared: Iterable[int] = SHARED,
    honest: int = 4,
    honest_hands: int = 3000,
) -> list[Population]:
    out: list[Population] = []
    for s in shared:
        for i in intensities:
            out.append(Population(f"collude {i} × {s}", round(s / SHARE), i, PAIRS, 0, seed + len(out)))
    for k in range(honest):
        out.append(Population(f"honest #{k + 1}", honest_hands, 0.0, 0, 2, seed + 1000 + k, HONEST_MIX))
    return out


def run_population(
    pop: Population, *, fdr: float = 0.05, min_hands: int | None = None, workdir: str | None = None
) -> Outcome:
    root = Path(tempfile.mkdtemp(prefix="xz-eval-", dir=workdir))
    try:
        spec = InjectSpec(collude_pairs=pop.pairs, collude_intensity=pop.intensity, friends=pop.friends)
        labels = write(
            SimConfig(hands=pop.hands, seed=pop.seed, players=PLAYERS, inject=spec, styles=pop.styles),
            root / "games.jsonl.gz",
        )
        ingest([str(root / "games.jsonl.gz")], root / "wh", workers=1)
        threshold = min_hands if min_hands is not None else min(200, max(50, pop.hands // 10))
        with connect(root / "wh") as con:
            results = screen(con, min_hands=threshold, fdr=fdr, evidence=0)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    colluding = {tuple(sorted(c["players"])) for c in labels.colluders}
    flagged = {r.players for r in results if r.flagged}
    shared = [r.shared_hands for r in results if r.players in colluding]
    return Outcome(
        population=pop,
        colluding=len(colluding),
        flagged_colluding=len(flagged & colluding),
        honest_pairs=sum(1 for r in results if r.players not in colluding),
        flagged_honest=len(flagged - colluding),
        shared_colluding=sum(shared) / len(shared) if shared else 0.0,
        scores=tuple((r.score, r.players in colluding) for r in results),
    )


def _run(args: tuple[Population, float]) -> Outcome:
    pop, fdr = args
    return run_population(pop, fdr=fdr)


def auc(scores: Iterable[tuple[float, bool]]) -> float | None:
    """Probability that a random colluding pair outscores a random honest pair (ties count half)."""
    pos = [s for s, c in scores if c]
    neg = [s for s, c in scores if not c]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def evaluate(
    populations: list[Population],
    *,
    fdr: float = 0.05,
    workers: int = 1,
    progress: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    if workers <= 1:
        for pop in populations:
            outcomes.append(run_population(pop, fdr=fdr))
            if progress:
                progress(outcomes[-1])
        return outcomes
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for outcome in pool.map(_run, [(pop, fdr) for pop in populations]):
            outcomes.append(outcome)
            if progress:
                progress(outcome)
    return outcomes


def table(outcomes: list[Outcome], fdr: float) -> str:
    """The Markdown table of the README."""
    lines = [
        f"| population | hands | colluding pairs (mean shared hands) | flagged at FDR {fdr} "
        "| honest pairs flagged | AUC |",
        "|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        a = auc(o.scores)
        detect = f"{o.flagged_colluding}/{o.colluding}" if o.colluding else "-"
        lines.append(
            f"| {o.population.name} | {o.population.hands} | {o.colluding} ({o.shared_colluding:.0f}) | {detect} | "
            f"{o.flagged_honest}/{o.honest_pairs} | {'-' if a is None else f'{a:.3f}'} |"
        )
    honest = [o for o in outcomes if o.colluding == 0]
    if honest:
        flagged = sum(o.flagged_honest for o in honest)
        lines.append(
            f"\nHonest populations: {flagged} false discoveries over {len(honest)} populations "
            f"({sum(o.honest_pairs for o in honest)} pairs screened)."
        )
    all_scores = [s for o in outcomes for s in o.scores]
    overall = auc(all_scores)
    if overall is not None:
        lines.append(f"Pooled ranking AUC over every screened pair: {overall:.3f}.")
    return "\n".join(lines)


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    return {
        "populations": [
            {
                "name": o.population.name,
                "hands": o.population.hands,
                "intensity": o.population.intensity,
                "colluding": o.colluding,
                "flagged_colluding": o.flagged_colluding,
                "honest_pairs": o.honest_pairs,
                "flagged_honest": o.flagged_honest,
                "shared_colluding": o.shared_colluding,
                "auc": auc(o.scores),
            }
            for o in outcomes
        ]
    }
