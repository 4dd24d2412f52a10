"""The victim view as it was before it read the flows a run of hands at a time (issue 23 item 3): one frame of
every ordered pair at every table, every pass over it at once. The tests hold the streamed view
(pipeline/audit/victims.py) to it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from pipeline.analytics.stats import by_qvalues, normal_sf
from pipeline.audit.victims import Loss, TeamLoss, Victim


def oracle_victims_of(
    flows: pl.DataFrame, *, teams: Sequence[tuple[str, ...]] = (), min_hands: int = 200, fdr: float = 0.05
) -> list[Victim]:
    """The victim view of ``flows`` (``hand_id``, ``payer``, ``payee``, ``net``: every ordered pair at each
    table): players flagged first, then by net points paid per hand, most first."""
    if flows.is_empty():
        return []
    flows = flows.sort("hand_id", "payer", "payee")
    players = sorted(set(flows["payer"].to_list()))
    code = {p: i for i, p in enumerate(players)}
    n_players = len(players)
    hand = flows["hand_id"].rle_id().cast(pl.Int64).to_numpy()
    a = flows["payer"].replace_strict(code, return_dtype=pl.Int64).to_numpy()
    x = flows["payee"].replace_strict(code, return_dtype=pl.Int64).to_numpy()
    net = flows["net"].cast(pl.Float64).to_numpy()

    key = hand * n_players + a  # (hand, a): rows are ordered by it
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sizes = np.diff(np.r_[starts, len(key)])
    which = np.repeat(np.arange(len(starts)), sizes)
    pair = a * n_players + x
    # the ordered pairs that met (keys a × players + x, ascending), not every pair of players
    keys, inverse = np.unique(pair, return_inverse=True)
    inverse = inverse.reshape(-1)
    size = len(keys)
    shared = np.bincount(inverse, minlength=size)
    total = np.bincount(inverse, net, minlength=size)
    screened = np.flatnonzero(shared >= max(1, min_hands))

    def judge(left_out: set[int]) -> dict[int, tuple[float, float]]:
        """Each screened ordered pair's (excess, z), with the opponents' strengths (what each takes from an
        opponent in a hand, on average) fitted without the rows of the pairs ``left_out``, both ways."""
        keep = ~(np.isin(pair, list(left_out)) | np.isin(x * n_players + a, list(left_out)))
        strength = np.bincount(x[keep], net[keep], minlength=n_players) / np.maximum(
            np.bincount(x[keep], minlength=n_players), 1
        )
        residual = np.where(keep, net - strength[x], 0.0)
        # the pairs left out are left out of each other's opponents too (the partner a pays is not one of the
        # opponents the others are compared with)
        n = np.add.reduceat(keep.astype(float), starts)
        centred = np.where(keep, residual - (np.add.reduceat(residual, starts) / np.maximum(n, 1))[which], 0.0)
        spread = np.add.reduceat(centred**2, starts) / np.maximum(n, 1)
        excess = np.bincount(inverse, centred, minlength=size)
        variance = np.bincount(inverse, np.where(keep, spread[which], 0.0), minlength=size)
        return {
            int(keys[k]): (float(excess[k]), float(excess[k] / math.sqrt(variance[k])))
            for k in screened
            if variance[k] > 0
        }

    # As the pair screen: a first pass flags; a pair that pays one opponent far more lifts that opponent's
    # strength and so makes everyone else's payments to it look small, and theirs to their other opponents
    # large: the second pass fits the strengths without the flagged pairs, each of which is judged without the
    # others only.
    first = judge(set())
    flagged = _flagged(first, fdr)
    judged_z = judge(flagged) if flagged else first
    for k in flagged:
        i, j = divmod(k, n_players)
        judged_z[k] = judge(flagged - {k, j * n_players + i}).get(k, first[k])
    q = by_qvalues(np.array([normal_sf(z) for _, z in judged_z.values()])) if judged_z else np.zeros(0)
    judged: dict[int, list[Loss]] = {}
    for (k, (excess_k, z)), qi in zip(judged_z.items(), q, strict=True):
        i, j = divmod(k, n_players)
        at = int(np.searchsorted(keys, k))
        loss = Loss(players[j], int(shared[at]), int(total[at]), excess_k, z, normal_sf(z), float(qi), bool(qi <= fdr))
        judged.setdefault(i, []).append(loss)

    per_hand = flows.group_by("hand_id", "payer").agg(pl.col("net").sum()).rename({"payer": "player"})
    team_lines = _team_losses(flows, per_hand, teams, fdr)
    # each player's hands in one pass (a filter per player read every row once per player)
    nets = {
        player: np.asarray(net, dtype=float)
        for player, net in per_hand.group_by("player").agg(pl.col("net").cast(pl.Float64)).iter_rows()
    }
    out = []
    for i, player in enumerate(players):
        mine = nets.get(player, np.zeros(0))
        lines = sorted(judged.get(i, []), key=lambda loss: (loss.p, -loss.z, loss.opponent))
        average = float(mine.mean()) if len(mine) else 0.0
        out.append(Victim(player, len(mine), average, lines, team_lines.get(player, [])))
    return sorted(out, key=lambda v: (not v.flagged, -v.per_hand, v.player))


def _flagged(judged: dict[int, tuple[float, float]], fdr: float) -> set[int]:
    keys = list(judged)
    q = by_qvalues(np.array([normal_sf(judged[k][1]) for k in keys])) if keys else np.zeros(0)
    return {k for k, qi in zip(keys, q, strict=True) if qi <= fdr}


def _team_losses(
    flows: pl.DataFrame, per_hand: pl.DataFrame, teams: Sequence[tuple[str, ...]], fdr: float
) -> dict[str, list[TeamLoss]]:
    """Per player outside each team: net paid per hand with two or more of it at the table, and with none."""
    if not teams:
        return {}
    seated = flows.select("hand_id", pl.col("payer").alias("player")).unique()
    lines: list[tuple[str, TeamLoss]] = []
    for team in teams:
        count = seated.group_by("hand_id").agg(pl.col("player").is_in(list(team)).sum().alias("members"))
        rows = per_hand.join(count, on="hand_id").filter(~pl.col("player").is_in(list(team)))
        net = pl.col("net").cast(pl.Float64)
        split = (
            rows.group_by("player")
            .agg(near=net.filter(pl.col("members") >= 2), away=net.filter(pl.col("members") == 0))
            .sort("player")
        )
        for player, near_list, away_list in split.iter_rows():
            near, away = np.asarray(near_list, dtype=float), np.asarray(away_list, dtype=float)
            if len(near) < 2 or len(away) < 2:
                continue
            se = math.sqrt(near.var(ddof=1) / len(near) + away.var(ddof=1) / len(away))
            z = float((near.mean() - away.mean()) / se) if se > 0 else 0.0
            lines.append(
                (
                    player,
                    TeamLoss(
                        tuple(team), len(near), float(near.mean()), len(away), float(away.mean()), z, normal_sf(z)
                    ),
                )
            )
    q = by_qvalues(np.array([t.p for _, t in lines])) if lines else np.zeros(0)
    out: dict[str, list[TeamLoss]] = {}
    for (player, t), qi in zip(lines, q, strict=True):
        out.setdefault(player, []).append(replace(t, q=float(qi), flagged=bool(qi <= fdr)))
    return out
