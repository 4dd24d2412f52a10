"""The team screen's moments group by group, each (hand, member) block computed for its group: the loop
:class:`pipeline.audit.teams.GroupMoments` ran before it summed groups from per-pair sums and took the groups
leaving out the same rows together, kept as the reference its results are compared with."""

from __future__ import annotations

import numpy as np

from pipeline.audit.collusion import SEATS, Rows
from pipeline.audit.teams import GroupMoments


def add_group(
    moments: GroupMoments,
    g: int,
    team: tuple[int, ...],
    rows: Rows,
    residual: np.ndarray,
    raw: np.ndarray,
    expected: np.ndarray,
    member: np.ndarray,
    linked: np.ndarray | None,
) -> None:
    """One group, its blocks computed for it: a member's partner in a team found (``linked``: the rows of the
    teams' pairs) is left out of them. The loop the screen ran group by group before it took the groups leaving
    out the same rows together (:meth:`pipeline.audit.teams.GroupMoments.add`)."""
    member[:] = False
    member[list(team)] = True
    use = member[rows.a]
    if linked is not None:
        use &= ~(linked & ~member[rows.x])
    at = np.flatnonzero(use)
    if not len(at):
        return
    key = rows.hand[at] * SEATS + rows.seat_a[at]  # (hand, a): rows are ordered by it
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sizes = np.diff(np.r_[starts, len(at)])
    which = np.repeat(np.arange(len(starts)), sizes)
    n = sizes.astype(float)
    res, got = residual[at], raw[at]
    mean = np.add.reduceat(res, starts, axis=0) / n[:, None]
    centred = res - mean[which]
    inside = member[rows.x[at]]
    m = np.bincount(which, inside, minlength=len(starts)).astype(float)
    live = (m > 0) & (m < n)
    if not live.any():
        return
    spread = np.add.reduceat(centred * centred, starts, axis=0) / n[:, None]  # each signal's variance in the block
    varies = np.maximum.reduceat(got, starts, axis=0) != np.minimum.reduceat(got, starts, axis=0)
    drawn = np.add.reduceat(np.where(inside[:, None], centred, 0.0), starts, axis=0)
    factor = np.where(live, m * (n - m) / np.maximum(n - 1, 1), 0.0)
    moments.excess[g] += drawn[live].sum(axis=0)
    moments.var[g] += np.einsum("i,ij->j", factor, spread)
    moments.draws[g] += varies[live].sum(axis=0)
    moments.raw[g] += got[inside].sum(axis=0)
    moments.expected[g] += expected[at][inside].sum(axis=0)
    moments.hands[g] += len(np.unique(rows.hand[at][inside]))
