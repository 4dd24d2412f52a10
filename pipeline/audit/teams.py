"""Teams: colluders screened as groups (whom they play against: :mod:`pipeline.audit.victims`), run with the pair
screen by :func:`pipeline.audit.screen.screen` (``teams=True``).

A team of three at a four-seat table (the court case of seed 000: a group recruited one victim to an
automatic table) hides from the pair screen (:mod:`pipeline.audit.collusion`), although its pairs rank at the
top. Measured on simulated rooms of 8 with one team of three at intensity 0.3: every teammate's feeding lifts
its own fitted giving and taking rates, so an honest player's expected feeding toward a teammate is too high,
its residuals toward teammates negative, and toward the other honest players (by contrast, after the per-hand
centring) positive: honest pairs score about +2, a teammate's pairs with honest players about −3, and the
pair screen's empirical null (median and 1.48 × MAD over all pairs, most of which touch the team) widens to
a scale of 3.6, inside which the team's scores of 5–8 sink.

**The statistic.** For a candidate group ``G`` (every pair and every group of three players who sat together
pairwise in at least ``min_hands`` hands: a pair is a candidate so that a colluding pair with an honest third is
the pair, not a team), per hand and member ``a`` at the table with ``m`` of its ``n`` opponents in ``G`` (``0 < m <
n``): the sum of ``a``'s *directed* residuals (count − expectation of the fitted rates, per signal: feeding,
dangerous discards by choice, passed wins per chance; :data:`GROUP_SIGNALS` says why not the 查叫/花猪 money)
toward its ``m`` fellow members, less ``m`` times their mean over all ``n`` opponents. The group's statistic
sums this over hands and members; the group's score is its largest one-sided signal z, Šidák-corrected over the
signals tested and read back as a normal quantile, as a pair's is (:func:`group_scores`: a signal running the wrong
way cannot cancel another's evidence).

**Its null.** ``H0(G)``: no member of ``G`` treats the other members differently from its other opponents,
given the rates. Then, in each hand, which ``m`` of ``a``'s opponents are the members is exchangeable: a draw
of ``m`` of the ``n`` residuals without replacement, whose sum has an exact mean (``m`` × their mean: the
statistic's term is centred on it) and an exact covariance (``m (n − m) / (n − 1)`` × their covariance with
divisor ``n``). Summed over thousands of independent hands it is close to normal, so ``p = 1 − Φ(score)``. A
hand where every opponent of ``a`` is a member (``m = n``) carries no contrast and adds nothing, however
often it happens: the null never compares a team with itself. (The draws of two members in one hand are
treated as independent, as the pair screen treats its two directions; the honest rooms below are the check.)

**Is the null valid under the alternative?** Not for the groups *next to* a team, with rates fitted on every
pair: that is the contamination above. Three steps make it hold, in a forward selection:

1. *Rates without the teams found.* A round screens every group with the giving and taking rates refitted
   without the pairs inside the teams found so far (:func:`~pipeline.audit.collusion.fit_rates`' exclude), so
   that a teammate's rates toward honest players are its rates toward honest players. The best group the
   round reports (BY at ``fdr`` on the theoretical null) that shares at most one player with each team found
   joins them; rounds stop when none is left (at most :data:`MAX_TEAMS`). A team is itself judged on rates
   refitted without the *other* teams only, never without its own pairs: leaving a group out of its own
   baseline would favour flagging it (the pair screen measured that).
2. *Suspected partners out of the opponents.* A teammate of a team found sits in many groups with honest
   players; its draws there compare the honest members with its partners, whose feeding makes every honest
   opponent look shunned (such groups scored about −2.5). Its partners not in the group are left out of its
   opponents (:class:`GroupMoments`' ``partners``): the relabelling is over the opponents it is not known to
   play for. Measured: those groups then centre on 0.
3. *The empirical null on groups whose null holds.* The scores are put on an empirical null (median, never
   below 0; 1.4826 × MAD, never below 1: it can only make the screen more cautious) fitted on the groups that
   share at most one player with every team found, which the team cannot inflate; a group that shares a pair
   with a team found is explained by it and not tested again. Benjamini–Yekutieli over the groups tested.

Measured (``xuezhan eval-collusion --team 3 --replicates 20 --honest 24``, rooms of 8; the README has the
table): the team of three at intensity 0.3 over about 1,000 shared hands is reported in 20 of 20 rooms (95% CI
84–100%), no group of three whose null holds is reported there (0 of 788) nor in 24 honest rooms (0 of 1,344;
rooms with a false discovery 0 of 24, CI 0–14%). In the honest rooms the groups' scores have mean −0.01 and sd
0.86 (12 rooms); the 8 first teams score 8.9–12.0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

import numpy as np

from pipeline.analytics.stats import by_qvalues, normal_isf, normal_sf
from pipeline.audit.collusion import (
    SEATS,
    SIGNALS,
    FeatureSource,
    Fit,
    PairSums,
    Rows,
    by_signal,
    combined,
    expected_counts,
    fit_rates,
)

K = len(SIGNALS)
BATCH_ROWS = 1 << 19  # (group, row) incidences the group screen takes at once: its memory, not the groups'


@dataclass(slots=True)
class GroupMoments:
    """Per candidate group (codes of players), summed over the hands and members: the excess of the signals
    toward the group's other members over the relabelling null's mean (``excess``, (groups, K)), its null
    variance (``var``, (groups, K): each signal's own; the score reads no covariance between signals, so none is
    kept: a K × K matrix a group was most of the screen's memory), the (hand, member) draws that could vary
    (``draws``), the raw counts and expectations toward the other members (``raw``, ``expected``), and the hands
    with two members or more at the table (``hands``)."""

    groups: list[tuple[int, ...]]
    excess: np.ndarray
    var: np.ndarray
    draws: np.ndarray
    raw: np.ndarray
    expected: np.ndarray
    hands: np.ndarray
    _keys: tuple[int, np.ndarray, np.ndarray] | None = None  # (players, keys, group): see _inside
    _members: np.ndarray | None = None  # see _small
    _is_small: np.ndarray | None = None

    @staticmethod
    def zeros(groups: list[tuple[int, ...]]) -> GroupMoments:
        g = len(groups)
        return GroupMoments(
            groups,
            np.zeros((g, K)),
            np.zeros((g, K)),
            np.zeros((g, K)),
            np.zeros((g, K)),
            np.zeros((g, K)),
            np.zeros(g),
        )

    def merge(self, other: GroupMoments) -> None:
        """Add ``other``'s sums (the same groups', over other hands) to these."""
        for name in ("excess", "var", "draws", "raw", "expected", "hands"):
            values = getattr(self, name)
            values += getattr(other, name)

    def add(self, rows: Rows, fit: Fit, players: int, partners: np.ndarray | None = None) -> None:
        """Fold in the hands of ``rows``, their directed residuals under ``fit``.

        Per hand and member ``a`` of a group with ``m`` of its ``n`` opponents in the group, the null relabels
        which ``m`` opponents are members: a uniform draw of ``m`` of the ``n`` directed residuals ``a → x``,
        without replacement, whose sum has mean ``m × mean`` and covariance ``m (n − m) / (n − 1) × S`` (``S``
        the residuals' covariance over the ``n`` opponents, divisor ``n``). ``partners`` (the keys ``a ×
        players + x`` of the ordered pairs inside the teams already found, not a players × players table)
        marks those teams: a member's partner in such a team who is not in the group is left out of its
        opponents (its feeding would make every other opponent look shunned).

        Each group's sums are added to once a call (a group is in one set of ``leaving``, one batch; ``hands`` are
        counts), never twice: a run folded into zeros and merged adds the floats it adds here
        (:meth:`~pipeline.audit.collusion.FeatureSource.fold`, which Spark's tasks rely on)."""
        if not len(rows.hand):
            return
        expected = by_signal(expected_counts(rows, fit))
        raw = by_signal(rows.counts)
        residual = raw - expected
        # Each group whose members have partners outside it leaves those (member, partner) rows out of its
        # members' blocks; the groups leaving out the same rows are taken together on the run without them
        # (a team found leaves few such sets: its members one or two at a time), the others on the whole run.
        partner_of: dict[int, list[int]] = {}
        for k in () if partners is None else partners.tolist():
            partner_of.setdefault(k // players, []).append(k % players)
        plain: list[int] = []
        leaving: dict[tuple[int, ...], list[int]] = {}
        for g, team in enumerate(self.groups):
            left = tuple(sorted(a * players + x for a in team for x in partner_of.get(a, ()) if x not in team))
            (leaving.setdefault(left, []) if left else plain).append(g)
        self._add_plain(plain, rows, residual, raw, expected, players)
        for left, groups in leaving.items():
            keep = np.flatnonzero(~np.isin(rows.a * players + rows.x, np.array(left, dtype=np.int64)))
            self._add_plain(groups, rows.take(keep), residual[keep], raw[keep], expected[keep], players)

    def _add_plain(
        self,
        groups: list[int],
        rows: Rows,
        residual: np.ndarray,
        raw: np.ndarray,
        expected: np.ndarray,
        players: int,
    ) -> None:
        """The groups ``groups`` whose members' opponents are all their opponents in ``rows``: the run's
        (hand, a) blocks computed once for all of them."""
        if not groups or not len(rows.hand):
            return
        blocks = _Blocks.of(rows, residual, raw, players)
        chosen = np.array(groups, dtype=np.int64)
        small = self._small(players)
        self._add_small(chosen[small[chosen]], rows, blocks, raw, expected, players)
        if not small[chosen].all():  # groups of four or more: each (group, row) incidence
            self._add_blocks(chosen[~small[chosen]], rows, blocks, raw, expected)

    def _small(self, players: int) -> np.ndarray:
        """Which groups have two or three members (:meth:`_add_small` takes them); their members as an array
        (groups, 3), a pair's third -1: built once, the groups do not change."""
        if self._members is None:
            members = np.full((len(self.groups), 3), -1, dtype=np.int64)
            for g, team in enumerate(self.groups):
                if 2 <= len(team) <= 3:
                    members[g, : len(team)] = team
            self._members = members
            self._is_small = np.array([2 <= len(t) <= 3 for t in self.groups], dtype=bool)
        assert self._is_small is not None
        return self._is_small

    def _add_small(
        self, chosen: np.ndarray, rows: Rows, b: _Blocks, raw: np.ndarray, expected: np.ndarray, players: int
    ) -> None:
        """The groups ``chosen`` of two or three members whose opponents are all their opponents, from sums per
        ordered pair and per (member, two opponents at its table), not per (group, row): the work is the run's
        rows, whatever the number of groups.

        A member ``a``'s (hand, a) block of ``n`` opponents holds ``m`` of the group's other members. For a pair
        ``m`` = 1; for a group of three, a block holding one other member counts as in a pair, and a block
        holding both (``m`` = 2) counts twice in the pairs' sums, which the sums per (a, {x, y}) correct:
        a live block (``m < n``) adds the drawn residuals (``excess``), ``m (n − m) / (n − 1)`` × its spread
        (``var``) and its varying signals (``draws``); the rows between members add their raw counts and
        expectations, and the hands with two members or more at the table count once (inclusion–exclusion
        over the pairs' shared hands and the hands of all three) — those three only for a group with a live
        block in the run, as the loop per group did."""
        if not len(chosen):
            return
        p = max(1, players)
        nb = b.n[b.which]
        one = (nb > 1).astype(float)  # a row's block is live for a group holding its pair only
        pair_key = rows.a * p + rows.x
        keys, inv = np.unique(pair_key, return_inverse=True)
        inv = inv.reshape(-1)
        q = len(keys)

        def per_pair(values: np.ndarray) -> np.ndarray:
            flat = values.reshape(len(values), math.prod(values.shape[1:]))  # -1 fails on no rows
            out = np.stack([np.bincount(inv, flat[:, j], minlength=q) for j in range(flat.shape[1])], axis=1)
            return out.reshape((q, *values.shape[1:]))

        spread = b.spread[b.which]
        varies = b.varies[b.which].astype(float)
        pair_sums = {
            "excess": per_pair(b.centred * one[:, None]),
            "var": per_pair(spread * one[:, None]),
            "draws": per_pair(varies * one[:, None]),
            "live": np.bincount(inv, one, minlength=q),
            "raw": per_pair(raw),
            "expected": per_pair(expected),
            "hands": np.bincount(inv, minlength=q).astype(float),
        }
        # every two rows of one (hand, a) block: a member a with two others x < y at its table
        first: list[np.ndarray] = []
        second: list[np.ndarray] = []
        for d in (1, 2):
            i = np.flatnonzero(b.which[d:] == b.which[:-d]) if len(b.which) > d else np.zeros(0, np.int64)
            first.append(i)
            second.append(i + d)
        i, j = np.concatenate(first), np.concatenate(second)
        lo, hi = np.minimum(rows.x[i], rows.x[j]), np.maximum(rows.x[i], rows.x[j])
        three_key = (rows.a[i] * p + lo) * p + hi
        tkeys, tinv = np.unique(three_key, return_inverse=True)
        tinv = tinv.reshape(-1)
        t = len(tkeys)
        n = nb[i]
        # a block holding both: counted as m = 2 (live where n > 2), not twice as m = 1 (live where n > 1)
        two, once = (n > 2).astype(float), (n > 1).astype(float)
        w_excess = two - once
        w_var = np.where(n > 2, 2 * (n - 2) / np.maximum(n - 1, 1), 0.0) - 2 * once
        w_count = two - 2 * once

        def per_three(values: np.ndarray) -> np.ndarray:
            flat = values.reshape(len(values), math.prod(values.shape[1:]))  # -1 fails on no rows
            out = np.stack([np.bincount(tinv, flat[:, k], minlength=t) for k in range(flat.shape[1])], axis=1)
            return out.reshape((t, *values.shape[1:]))

        three_sums = {
            "excess": per_three((b.centred[i] + b.centred[j]) * w_excess[:, None]),
            "var": per_three(spread[i] * w_var[:, None]),
            "draws": per_three(varies[i] * w_count[:, None]),
            "live": np.bincount(tinv, w_count, minlength=t),
            "hands": np.bincount(tinv, minlength=t).astype(float),
        }

        def look(table: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            at = np.minimum(np.searchsorted(table, wanted), max(0, len(table) - 1))
            found = (table[at] == wanted) if len(table) else np.zeros(len(wanted), dtype=bool)
            return at, found

        assert self._members is not None
        members = self._members[chosen]
        is_three = members[:, 2] >= 0
        total = {name: np.zeros((len(chosen), *values.shape[1:])) for name, values in pair_sums.items()}
        for u, v in ((0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)):
            use = (members[:, u] >= 0) & (members[:, v] >= 0)
            at, found = look(keys, members[:, u] * p + members[:, v])
            found &= use
            for name, values in pair_sums.items():
                if name == "hands" and u > v:
                    continue  # a pair's shared hands once, not once per direction
                total[name][found] += values[at[found]]
        shared_by_three = np.zeros(len(chosen))
        for u, v, w in ((0, 1, 2), (1, 0, 2), (2, 0, 1)):
            at, found = look(tkeys, (members[:, u] * p + members[:, v]) * p + members[:, w])
            found &= is_three
            for name, values in three_sums.items():
                if name == "hands":
                    if u == 0:  # the hands of all three, from the first member's blocks
                        shared_by_three[found] = values[at[found]]
                    continue
                total[name][found] += values[at[found]]
        total["hands"] -= 2 * shared_by_three  # a hand of all three is in each of its three pairs' hands
        live = total["live"] > 0
        g = chosen[live]
        self.excess[g] += total["excess"][live]
        self.var[g] += total["var"][live]
        self.draws[g] += total["draws"][live]
        self.raw[g] += total["raw"][live]
        self.expected[g] += total["expected"][live]
        self.hands[g] += total["hands"][live]

    def _inside(self, players: int) -> tuple[np.ndarray, np.ndarray]:
        """The keys ``a × players + x`` of the ordered pairs inside every group, and each key's group (ascending):
        built once, the groups do not change."""
        if self._keys is None or self._keys[0] != players:
            keys = [_keys_inside(team, players) for team in self.groups]
            group = np.repeat(np.arange(len(keys), dtype=np.int64), [len(k) for k in keys])
            self._keys = (players, np.concatenate([*keys, np.zeros(0, np.int64)]), group)
        return self._keys[1], self._keys[2]

    def _add_blocks(self, plain: np.ndarray, rows: Rows, b: _Blocks, raw: np.ndarray, expected: np.ndarray) -> None:
        """The groups ``plain`` (indices, ascending), whose members' opponents are all their opponents: every
        (hand, member) block is the whole (hand, a) block of the run, computed once for every group
        (:class:`_Blocks`); a group's own work is over the rows between its members only (the rows of the pairs
        inside it, found by pair key). The groups are taken together, in batches of about :data:`BATCH_ROWS`
        (group, row) incidences: a loop in Python per group and run was most of the team screen at 200k hands."""
        keys, group = self._inside(b.players)
        take = np.zeros(len(self.groups), dtype=bool)
        take[plain] = True
        keys, group = keys[take[group]], group[take[group]]
        at = np.minimum(np.searchsorted(b.pairs, keys), max(0, len(b.pairs) - 1))
        found = (b.pairs[at] == keys) if len(b.pairs) else np.zeros(len(keys), dtype=bool)
        group, lo = group[found], b.lo[at[found]]
        if not len(group):  # no two members of any of them sat together in the run
            return
        size = b.hi[at[found]] - lo
        # batches of whole groups, each about BATCH_ROWS incidences at most (one group may be more on its own)
        ends = np.cumsum(size)
        last = np.flatnonzero(np.r_[group[1:] != group[:-1], True])  # each group's last key
        cut = np.unique(
            np.searchsorted(
                ends[last], np.arange(1, (int(ends[-1]) if len(ends) else 0) // BATCH_ROWS + 1) * BATCH_ROWS
            )
        )
        start = 0
        for stop in [*(last[c] + 1 for c in cut.tolist() if c < len(last)), len(group)]:
            if stop > start:
                self._add_batch(group[start:stop], lo[start:stop], size[start:stop], rows, b, raw, expected)
            start = stop

    def _add_batch(
        self,
        group: np.ndarray,
        lo: np.ndarray,
        size: np.ndarray,
        rows: Rows,
        b: _Blocks,
        raw: np.ndarray,
        expected: np.ndarray,
    ) -> None:
        """Groups whose pairs' rows are ``b.order[lo : lo + size]``, one entry per pair (``group`` ascending)."""
        total = int(size.sum())
        if not total:
            return
        g = np.repeat(group, size)
        row = b.order[np.arange(total) - np.repeat(np.cumsum(size) - size, size) + np.repeat(lo, size)]
        order = np.lexsort((row, g))  # each group's rows in the run's order: by (hand, a), then x
        g, row = g[order], row[order]
        block = b.which[row]
        new_group = np.r_[True, g[1:] != g[:-1]]
        first = np.flatnonzero(new_group | np.r_[True, block[1:] != block[:-1]])  # each (group, block)
        owner, used = g[first], block[first]
        m = np.diff(np.r_[first, total]).astype(float)
        n = b.n[used]
        live = m < n
        drawn = np.add.reduceat(b.centred[row], first, axis=0)
        factor = m * (n - m) / np.maximum(n - 1, 1)
        # per group: its live blocks, then its rows (each sum in the order the group's own loop summed it)
        alive = np.flatnonzero(live)
        if len(alive):
            keep = owner[alive]
            starts = np.flatnonzero(np.r_[True, keep[1:] != keep[:-1]])
            which = keep[starts]
            self.excess[which] += np.add.reduceat(drawn[alive], starts, axis=0)
            self.var[which] += np.add.reduceat(factor[alive, None] * b.spread[used[alive]], starts, axis=0)
            self.draws[which] += np.add.reduceat(b.varies[used[alive]].astype(float), starts, axis=0)
            # a group with no live block adds nothing at all (as its loop returned early)
            has = np.zeros(len(self.groups), dtype=bool)
            has[which] = True
            mine = has[g]
            g_in, row_in = g[mine], row[mine]
            starts = np.flatnonzero(np.r_[True, g_in[1:] != g_in[:-1]])
            which = g_in[starts]
            self.raw[which] += np.add.reduceat(raw[row_in], starts, axis=0)
            self.expected[which] += np.add.reduceat(expected[row_in], starts, axis=0)
            hand = rows.hand[row_in]
            fresh = np.r_[True, (g_in[1:] != g_in[:-1]) | (hand[1:] != hand[:-1])]
            self.hands += np.bincount(g_in[fresh], minlength=len(self.groups))


def _keys_inside(team: tuple[int, ...], players: int) -> np.ndarray:
    """The keys ``a × players + x`` of the ordered pairs inside ``team``."""
    return np.array([a * players + x for a in team for x in team if a != x], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class _Blocks:
    """A run's (hand, a) blocks, for every group at once: each row's block (``which``), each block's size
    (``n``), the residuals centred on their block's mean (``centred``), each signal's variance in the block
    (``spread``, divisor ``n``) and which signals' raw counts differ in it (``varies``); and the rows by ordered pair
    (``order``, the pair keys ``pairs`` ascending, each one's rows ``order[lo:hi]``)."""

    which: np.ndarray
    n: np.ndarray
    centred: np.ndarray
    spread: np.ndarray
    varies: np.ndarray
    order: np.ndarray
    pairs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    players: int

    @staticmethod
    def of(rows: Rows, residual: np.ndarray, raw: np.ndarray, players: int) -> _Blocks:
        key = rows.hand * SEATS + rows.seat_a  # (hand, a): rows are ordered by it
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        sizes = np.diff(np.r_[starts, len(key)])
        which = np.repeat(np.arange(len(starts)), sizes)
        n = sizes.astype(float)
        mean = np.add.reduceat(residual, starts, axis=0) / n[:, None]
        centred = residual - mean[which]
        spread = np.add.reduceat(centred * centred, starts, axis=0) / n[:, None]
        varies = np.maximum.reduceat(raw, starts, axis=0) != np.minimum.reduceat(raw, starts, axis=0)
        pair = rows.a * players + rows.x
        order = np.argsort(pair, kind="stable")
        pairs, lo = np.unique(pair[order], return_index=True)
        hi = np.r_[lo[1:], len(order)]
        return _Blocks(which, n, centred, spread, varies, order, pairs, lo, hi, players)


def moments_of(
    source: FeatureSource, asked: Sequence[tuple[Fit, list[tuple[int, ...]], Sequence[tuple[int, ...]]]]
) -> list[GroupMoments]:
    """:class:`GroupMoments` of each ``(fit, groups, teams)`` of ``asked`` over every hand of ``source``, the
    partners of ``teams`` (codes) left out of each other's opponents where they are not in the group; in one
    fold of ``source`` (:meth:`~pipeline.audit.collusion.FeatureSource.fold`): a round of the forward selection and
    every team's own judgement cost one pass over the hands, however many teams were found."""
    p = len(source.sums.players)
    partners = [
        np.unique(np.array([a * p + x for t in teams for a in t for x in t], dtype=np.int64)) if teams else None
        for _, _, teams in asked
    ]
    fits = [fit for fit, _, _ in asked]

    def zero() -> list[GroupMoments]:
        return [GroupMoments.zeros(groups) for _, groups, _ in asked]

    def add(part: list[GroupMoments], rows: Rows) -> None:
        for fit, moments, left_out in zip(fits, part, partners, strict=True):
            moments.add(rows, fit, p, left_out)

    def merge(total: list[GroupMoments], part: list[GroupMoments]) -> None:
        for moments, more in zip(total, part, strict=True):
            moments.merge(more)

    return source.fold(zero, add, merge)


# The signals a group's score combines: what a member does in play for another (feeding, dangerous discards by
# choice, passed wins), not the end of the wall's 查叫 / 花猪 money (``channel``), which the pair screen keeps.
# Who pays whom there is decided by who is ready and who is a flower pig at the end, a joint state the
# multiplicative rates do not model: three novices at one table pay each other far more than their rates say
# (measured on the honest rooms of ``xuezhan eval-collusion --team 3``: channel z up to 6.4 for groups of three
# novices, the top group of 2 rooms in 12), while a team that feeds itself ends its hands early and shows a
# channel z of -2 to -3 (every one of 8 team rooms). It is reported with the others, not scored.
# Passes are scored per chance to pass (passed_wins, as the pair screen does), not under the giver × taker model
# (soft_play), under which a group that makes most of a room's passes reads fewer between its members than
# expected (issue 37).
GROUP_SIGNALS = ("feeding", "dangerous", "passed_wins")
_SCORED = np.array([name in GROUP_SIGNALS for name in SIGNALS])


def group_scores(moments: GroupMoments) -> np.ndarray:
    """Each group's score: the largest one-sided z of :data:`GROUP_SIGNALS` (every one an excess of help), its
    p-value corrected by Šidák over the signals tested and given back as a normal quantile, so that it reads on
    the scale the empirical null expects (as a pair's, :func:`~pipeline.audit.collusion.combined`). A maximum, so
    that a signal running the wrong way for some team cannot subtract from another's evidence, as the sum of
    signed z-scores did (issue 37)."""
    out = np.zeros(len(moments.groups))
    for g in range(len(moments.groups)):
        var = moments.var[g]
        # as a pair's: a signal is evidence only where the raw counts differ among the opponents in enough draws
        live = _SCORED & (var > 1e-9) & (moments.draws[g] >= 5)
        if not live.any():
            continue
        z = moments.excess[g][live] / np.sqrt(var[live])
        _, p = combined(z)
        out[g] = normal_isf(min(max(p, 1e-300), 1.0 - 1e-16))
    return out


def candidate_groups(sums: PairSums, size: int, min_hands: int) -> list[tuple[int, ...]]:
    """Every group of ``size`` players (codes into ``sums.players``) each pair of whom shared at least
    ``min_hands`` hands."""
    keep = (sums.a < sums.x) & (sums.hands >= min_hands)
    linked: dict[int, set[int]] = {}
    for a, x in zip(sums.a[keep].tolist(), sums.x[keep].tolist(), strict=True):
        linked.setdefault(a, set()).add(x)
        linked.setdefault(x, set()).add(a)
    # grown a member at a time from the common neighbours above the last (every group once, in the order of
    # combinations(sorted(players), size)): trying every combination of the linked players was a billion
    # groups of three for 2,000 players
    out: list[tuple[int, ...]] = []

    def grow(team: tuple[int, ...], common: list[int]) -> None:
        if len(team) == size:
            out.append(team)
            return
        among = set(common)
        for c in common:
            grow((*team, c), [d for d in sorted(linked[c]) if d > c and d in among])

    grow((), sorted(linked))
    return out


def internal_pairs(groups: Iterable[tuple[str, ...]]) -> frozenset[tuple[str, str]]:
    """The pairs inside each of ``groups``, each as (lower id, higher id)."""
    return frozenset(tuple(sorted(pair)) for g in groups for pair in combinations(g, 2))  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class TeamResult:
    """One candidate group of the team screen."""

    players: tuple[str, ...]
    hands: int  # hands where two or more of them sat at one table
    score: float
    p: float
    q: float
    flagged: bool
    signals: dict[str, dict[str, Any]]
    reported: bool = False  # flagged, and not explained by a better flagged group it shares a pair with
    z: float = 0.0  # the score on the empirical null
    evidence: list[dict[str, Any]] = field(default_factory=list)  # hands to replay (reported teams)

    def as_dict(self) -> dict[str, Any]:
        return {
            "players": list(self.players),
            "hands": self.hands,
            "score": round(self.score, 4),
            "z": round(self.z, 4),
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
            "reported": self.reported,
            "signals": self.signals,
            "evidence": self.evidence,
        }


def _results(moments: GroupMoments, players: Sequence[str], only: set[int] | None = None) -> dict[int, TeamResult]:
    scores = group_scores(moments)
    out = {}
    for g, team in enumerate(moments.groups):
        if only is not None and g not in only:
            continue
        sd = np.sqrt(np.clip(moments.var[g], 1e-12, None))
        signals = {
            name: {
                "observed": float(moments.raw[g, k]),
                "expected": round(float(moments.expected[g, k]), 3),
                "z": round(float(moments.excess[g, k] / sd[k]) if moments.draws[g, k] >= 5 else 0.0, 3),
            }
            for k, name in enumerate(SIGNALS)
        }
        score = float(scores[g])
        out[g] = TeamResult(
            tuple(players[i] for i in team), int(moments.hands[g]), score, normal_sf(score), 1.0, False, signals
        )
    return out


EMPIRICAL_NULL_GROUPS = 20  # groups needed to put the scores on an empirical null


def empirical_null(scores: np.ndarray) -> tuple[float, float]:
    """``(centre, scale)`` of the scores of groups whose null is taken to hold: the median, never below 0,
    and 1.4826 × the median absolute deviation, never below 1 (so that it can only make the screen more
    cautious); ``(0, 1)`` with fewer than :data:`EMPIRICAL_NULL_GROUPS`.

    >>> empirical_null(np.arange(-10.0, 11.0))  # median 0, median absolute deviation 5
    (0.0, 7.413)
    >>> empirical_null(np.zeros(5))
    (0.0, 1.0)
    """
    if len(scores) < EMPIRICAL_NULL_GROUPS:
        return 0.0, 1.0
    centre = float(np.median(scores))
    scale = 1.4826 * float(np.median(np.abs(scores - centre)))
    return max(0.0, centre), round(max(1.0, scale), 6)


def _with_q(results: list[TeamResult], fdr: float, teams: Sequence[tuple[str, ...]] | None = None) -> list[TeamResult]:
    """Benjamini–Yekutieli q-values over every candidate group, flags, and which flagged groups are reported:
    best first, a flagged group sharing two or more players with a better reported one is not (its pair is
    the better group's). With ``teams`` (the teams found), the p-values are on the empirical null of the groups
    sharing at most one player with each of them, the teams themselves left out (:func:`empirical_null`);
    without, on the theoretical one."""
    if not results:
        return results
    scores = np.array([r.score for r in results])
    centre, scale = 0.0, 1.0
    if teams is not None:
        clear = [r.players not in teams and _clear(r.players, teams) for r in results]
        centre, scale = empirical_null(scores[np.array(clear, dtype=bool)])
    z = (scores - centre) / scale
    p = np.array([normal_sf(float(v)) for v in z])
    q = by_qvalues(p)
    out = sorted(
        (
            replace(r, z=float(zi), p=float(pi), q=float(qi), flagged=bool(qi <= fdr))
            for r, zi, pi, qi in zip(results, z, p, q, strict=True)
        ),
        key=lambda r: (r.p, -r.score, r.players),
    )
    reported: list[set[str]] = []
    for i, r in enumerate(out):
        if r.flagged and all(len(set(r.players) & other) < 2 for other in reported):
            reported.append(set(r.players))
            out[i] = replace(r, reported=True)
    return out


def _clear(players: tuple[str, ...], teams: Iterable[tuple[str, ...]]) -> bool:
    """Does the group share at most one player with each of ``teams``?"""
    return all(len(set(players) & set(t)) < 2 for t in teams)


MAX_TEAMS = 5  # rounds of the forward selection: teams found in one room, at most


def _screen_teams(
    source: FeatureSource, *, sizes: Sequence[int] = (2, 3), min_hands: int = 200, fdr: float = 0.05
) -> list[TeamResult]:
    """Screen every group of each of ``sizes`` players who all shared at least ``min_hands`` hands pairwise;
    results best first. Pairs are candidates too, scored the same way, so that a colluding pair and an honest
    third player are not reported as a team: the pair scores better (the third player's links add nothing but
    noise), and a group sharing two players with a better reported one is not reported.

    A forward selection (see the module's docstring): each round refits the rates without the pairs inside
    the teams found so far and screens every group again; the best reported group that is not one of them
    joins them, judged on rates refitted without the *other* teams only; it stops when none is left."""
    sums = source.sums
    players = sums.players
    groups = [g for size in sizes for g in candidate_groups(sums, size, min_hands)]
    if not groups:
        return []
    index = {tuple(players[i] for i in team): g for g, team in enumerate(groups)}
    teams: list[tuple[str, ...]] = []
    while True:
        # one pass: every group screened without the teams found so far, and each team judged without the
        # other teams' pairs only (the teams' own judgements change as the others' pairs leave their rates)
        codes = [groups[index[t]] for t in teams]
        asked = [(fit_rates(sums, internal_pairs(teams)), groups, codes)]
        for t in teams:
            rest = [u for u in teams if u != t]
            asked.append((fit_rates(sums, internal_pairs(rest)), [groups[index[t]]], [groups[index[u]] for u in rest]))
        every, *alone = moments_of(source, asked)
        results = _results(every, players)
        own = {index[t]: _results(m, players)[0] for t, m in zip(teams, alone, strict=True)}
        results.update(own)
        ranked = _with_q(list(results.values()), fdr)
        new = next((r for r in ranked if r.reported and r.players not in teams and _clear(r.players, teams)), None)
        if new is None or len(teams) >= MAX_TEAMS:
            # a group sharing a pair with a team found is explained by it: not tested again
            final = [r for r in results.values() if r.players in teams or _clear(r.players, teams)]
            return _with_q(final, fdr, teams)
        teams.append(new.players)
