"""The victim view computed a plain way, to hold pipeline/audit/victims.py to: one hand at a time in Python loops over
dictionaries, from the module's description alone. Nothing of the product's judging is shared: no array of pair
keys, no runs, and its own normal tail and Benjamini–Yekutieli q-values (written from their definitions), so that
a bug in the product's arithmetic, its bookkeeping of pairs or its statistics shows as a difference here.

The definitions (pipeline/audit/victims.py's docstring):

- per hand, every ordered pair ``(a, x)`` at the table and ``net``, what ``a`` paid ``x`` net;
- ``x``'s strength: the mean ``net`` over every row where ``x`` is paid (rows of the pairs left out excepted);
- per hand and payer ``a``: each kept opponent's residual ``net − strength[x]``, centred on their mean; the pair's
  excess is the sum of its centred residuals over the hands, its variance the sum of the hands' mean squared
  centred residual (divisor: the kept opponents); ``z = excess / √variance`` for the pairs of ``min_hands`` hands;
- a first judgement flags pairs at ``fdr`` (BY); then every pair is judged again with the flagged pairs (both
  ways) left out, and each flagged pair with the *other* flagged pairs left out;
- with a team: each player outside it, its net paid per hand at tables with two or more members against tables
  with none (Welch), BY over every player and team.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import polars as pl

from pipeline.audit.victims import Loss, TeamLoss, Victim

Pair = tuple[str, str]


def _sf(z: float) -> float:
    """``P(Z > z)``: the normal tail from the error function."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _by(p: Sequence[float]) -> list[float]:
    """Benjamini–Yekutieli q-values from the definition: the smallest ``p_k · m · c(m) / rank_k`` over the p-values
    at least as large, ``rank_k`` the number of p-values ``<= p_k``, ``c(m) = 1 + 1/2 + … + 1/m``; at most 1."""
    m = len(p)
    c = sum(1.0 / i for i in range(1, m + 1))
    rank = [sum(1 for other in p if other <= pk) for pk in p]
    return [min([1.0] + [pk * m * c / rank[k] for k, pk in enumerate(p) if pk >= pi]) for pi in p]


def oracle_victims_of(
    flows: pl.DataFrame, *, teams: Sequence[tuple[str, ...]] = (), min_hands: int = 200, fdr: float = 0.05
) -> list[Victim]:
    """The victim view of ``flows`` (``hand_id``, ``payer``, ``payee``, ``net``: every ordered pair at each
    table): players flagged first, then by net points paid per hand, most first."""
    hands: dict[object, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for hand_id, payer, payee, net in flows.select("hand_id", "payer", "payee", "net").iter_rows():
        hands[hand_id][payer][payee] = int(net)
    shared: dict[Pair, int] = defaultdict(int)
    total: dict[Pair, int] = defaultdict(int)
    for table in hands.values():
        for a, row in table.items():
            for x, net in row.items():
                shared[a, x] += 1
                total[a, x] += net
    screened = [pair for pair in sorted(shared) if shared[pair] >= max(1, min_hands)]

    def judge(left_out: set[Pair]) -> dict[Pair, tuple[float, float]]:
        def kept(a: str, x: str) -> bool:
            return (a, x) not in left_out and (x, a) not in left_out

        paid_to: dict[str, float] = defaultdict(float)
        rows_to: dict[str, int] = defaultdict(int)
        for table in hands.values():
            for a, row in table.items():
                for x, net in row.items():
                    if kept(a, x):
                        paid_to[x] += net
                        rows_to[x] += 1
        strength = {x: paid_to[x] / rows_to[x] for x in rows_to}
        excess: dict[Pair, float] = defaultdict(float)
        variance: dict[Pair, float] = defaultdict(float)
        for table in hands.values():
            for a, row in table.items():
                residual = {x: net - strength[x] for x, net in row.items() if kept(a, x)}
                if not residual:
                    continue
                mean = sum(residual.values()) / len(residual)
                centred = {x: r - mean for x, r in residual.items()}
                spread = sum(c * c for c in centred.values()) / len(centred)
                for x, c in centred.items():
                    excess[a, x] += c
                    variance[a, x] += spread
        judged = [pair for pair in screened if variance[pair] > 0]
        return {pair: (excess[pair], excess[pair] / math.sqrt(variance[pair])) for pair in judged}

    first = judge(set())
    first_q = _by([_sf(z) for _, z in first.values()])
    flagged = {pair for pair, q in zip(first, first_q, strict=True) if q <= fdr}
    judged = judge(flagged) if flagged else dict(first)
    for a, x in flagged:
        judged[a, x] = judge(flagged - {(a, x), (x, a)}).get((a, x), first[a, x])
    losses: dict[str, list[Loss]] = defaultdict(list)
    for ((a, x), (excess_ax, z)), q in zip(judged.items(), _by([_sf(z) for _, z in judged.values()]), strict=True):
        losses[a].append(Loss(x, shared[a, x], total[a, x], excess_ax, z, _sf(z), q, q <= fdr))

    paid: dict[str, list[int]] = defaultdict(list)  # each player's net paid in each of its hands
    per_hand: list[dict[str, int]] = []
    for table in hands.values():
        nets = {a: sum(row.values()) for a, row in table.items()}
        per_hand.append(nets)
        for a, net in nets.items():
            paid[a].append(net)
    lines: list[tuple[str, TeamLoss]] = []
    for team in teams:
        near: dict[str, list[int]] = defaultdict(list)
        away: dict[str, list[int]] = defaultdict(list)
        for nets in per_hand:
            members = sum(1 for p in nets if p in team)
            for p, net in nets.items():
                if p not in team and members >= 2:
                    near[p].append(net)
                elif p not in team and members == 0:
                    away[p].append(net)
        for p in sorted(paid):
            if p in team or len(near[p]) < 2 or len(away[p]) < 2:
                continue
            m1, m2 = _mean(near[p]), _mean(away[p])
            se = math.sqrt(_var(near[p]) / len(near[p]) + _var(away[p]) / len(away[p]))
            z = (m1 - m2) / se if se > 0 else 0.0
            lines.append((p, TeamLoss(tuple(team), len(near[p]), m1, len(away[p]), m2, z, _sf(z))))
    team_lines: dict[str, list[TeamLoss]] = defaultdict(list)
    for (p, line), q in zip(lines, _by([t.p for _, t in lines]), strict=True):
        team_lines[p].append(
            TeamLoss(line.team, line.with_hands, line.with_per_hand, line.without_hands, line.without_per_hand,
                     line.z, line.p, q, q <= fdr)
        )  # fmt: skip

    out = [
        Victim(
            p,
            len(paid[p]),
            _mean(paid[p]),
            sorted(losses[p], key=lambda loss: (loss.p, -loss.z, loss.opponent)),
            team_lines[p],
        )
        for p in sorted(paid)
    ]
    return sorted(out, key=lambda v: (not v.flagged, -v.per_hand, v.player))


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values)


def _var(values: Sequence[int]) -> float:
    """The sample variance (divisor ``n − 1``)."""
    m = _mean(values)
    return sum((v - m) ** 2 for v in values) / (len(values) - 1)
