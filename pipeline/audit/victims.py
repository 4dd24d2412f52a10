"""The victim view: players who lose far more than their play predicts, and to whom.

A team plays *against* someone: the court case of seed 000 is a group that recruited one victim. The pair and
team screens find the players who play for each other; this view names the players they take the money from,
by the engine's own settlement (``sql/net_flows.sql``: per hand and ordered pair at the table, what ``a`` paid
``x`` net of what ``x`` paid ``a``).

**To whom** (every player, with or without a team found). A player's own play sets how much it loses at a
table (a novice pays everybody); a strong opponent takes from everybody. So per hand the net ``a → x`` is
compared with what ``x`` takes on average from an opponent (``x``'s strength, over every hand), and that
residual with the residuals of ``a``'s other opponents at the same table: under "no opponent plays against
``a``", which opponent it is is exchangeable, the relabelling null of the pair screen with one opponent drawn
of ``n``: the excess over the hand's mean has mean 0 and variance the residuals' variance (divisor ``n``).
Summed over the shared hands, ``z`` is close to normal; Benjamini–Yekutieli over every ordered pair screened.
A table where all of ``a``'s opponents are one team shows no contrast here: the next view sees it.

**With a team** (``teams``, the teams :func:`pipeline.audit.screen.screen` reports): each other player's net points
per hand at tables with two or more of the team against tables with none of it (a Welch difference of means, its
``z``, BY over the players): the victim's own results without the team are what its play predicts. The
tables differ in who else sits there, so this compares; it does not prove.

**Memory**: the flows are 12 rows a hand (2.4 million at 200k hands). :func:`victim_view` asks
DuckDB for one run of :data:`CHUNK_HANDS` hands at a time (the pair screen's runs: :mod:`pipeline.analytics.runs`),
keeps each run's coded rows in a temporary file, and every pass (the strengths, each pair's excess and
variance, the team lines) reads the runs one at a time into per-pair and per-player sums: what it holds grows
with the pairs that met, not with the hands. tests/victims_oracle.py computes the same view a plain way, a hand at
a time in Python from these definitions, and the tests hold this one to it: counts and nets exactly, the sums of
floats to rounding.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl

from pipeline import sql
from pipeline.analytics.runs import Run, Stream, each_run
from pipeline.analytics.stats import by_qvalues, normal_sf
from pipeline.memory import return_freed_memory


@dataclass(frozen=True, slots=True)
class Loss:
    """What a player paid one opponent over their shared hands."""

    opponent: str
    hands: int
    net: int  # points paid net of points received, over the shared hands
    excess: float  # beyond the opponent's strength and the player's other opponents at those tables
    z: float
    p: float
    q: float = 1.0
    flagged: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "opponent": self.opponent,
            "hands": self.hands,
            "net": self.net,
            "excess": round(self.excess, 2),
            "z": round(self.z, 3),
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
        }


@dataclass(frozen=True, slots=True)
class TeamLoss:
    """A player's net points per hand at tables with two or more of a team, and at tables with none of it."""

    team: tuple[str, ...]
    with_hands: int
    with_per_hand: float  # net points paid per hand (positive: lost)
    without_hands: int
    without_per_hand: float
    z: float
    p: float
    q: float = 1.0
    flagged: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "team": list(self.team),
            "with_hands": self.with_hands,
            "with_per_hand": round(self.with_per_hand, 3),
            "without_hands": self.without_hands,
            "without_per_hand": round(self.without_per_hand, 3),
            "z": round(self.z, 3),
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
        }


@dataclass(frozen=True, slots=True)
class Victim:
    """One player's line: hands, net points paid per hand, and to whom (``losses``, most excessive first; the
    team lines, ``teams``, one per team found the player is not in)."""

    player: str
    hands: int
    per_hand: float
    losses: list[Loss] = field(default_factory=list)
    teams: list[TeamLoss] = field(default_factory=list)

    @property
    def flagged(self) -> bool:
        return any(x.flagged for x in self.losses) or any(t.flagged for t in self.teams)

    def as_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "hands": self.hands,
            "per_hand": round(self.per_hand, 3),
            "flagged": self.flagged,
            "losses": [x.as_dict() for x in self.losses],
            "teams": [t.as_dict() for t in self.teams],
        }


CHUNK_HANDS = 10_000  # hands read at a time (runs in file order): what the view's memory grows with


@dataclass(frozen=True, slots=True)
class _Run:
    """One run of hands' flows, players coded (rows ordered by hand, payer, payee): the payer ``a``, the payee
    ``x``, ``net``, the first row of each (hand, payer) block (``starts``) and its hand in the run (``hand``),
    the run's hands, and once every pair is known, each row's pair (``at``, an index into the pairs that met)."""

    a: np.ndarray
    x: np.ndarray
    net: np.ndarray
    starts: np.ndarray
    hand: np.ndarray
    hands: int
    at: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class _Runs:
    """The runs of a warehouse or a frame, kept in a temporary directory (``workdir``) or, for a frame already in
    memory, in memory: every pass of the view reads them again, one run at a time. ``code``: the players' codes,
    in order of appearance (:func:`_run_of` adds the new ones)."""

    def __init__(self, workdir: Path | None) -> None:
        self._dir = workdir
        self.code: dict[str, int] = {}
        self._kept: list[_Run | Path] = []

    def add(self, run: _Run) -> None:
        self._kept.append(run)
        self._put(len(self._kept) - 1, run)

    def _put(self, k: int, run: _Run) -> None:
        if self._dir is None:
            self._kept[k] = run
            return
        path = self._dir / f"flows-{k:06d}.npz"
        hands = np.array(run.hands)
        np.savez(path, a=run.a, x=run.x, net=run.net, starts=run.starts, hand=run.hand, hands=hands, at=run.at)
        self._kept[k] = path

    def recode(self, new: np.ndarray) -> np.ndarray:
        """Players' codes ``c`` become ``new[c]`` (read in order of appearance, coded in name order), and each
        row is given its pair: returns the ordered pairs that met (keys ``a × players + x``, ascending)."""
        p = len(new)
        keys = np.zeros(0, dtype=np.int64)
        for run in self:
            keys = np.union1d(keys, new[run.a].astype(np.int64) * p + new[run.x])
        for k, kept in enumerate(self._kept):
            run = self._load(kept)
            a, x = new[run.a], new[run.x]
            self._put(k, replace(run, a=a, x=x, at=np.searchsorted(keys, a.astype(np.int64) * p + x)))
        return keys

    @staticmethod
    def _load(kept: _Run | Path) -> _Run:
        if isinstance(kept, _Run):
            return kept
        with np.load(kept) as data:
            return _Run(data["a"], data["x"], data["net"], data["starts"], data["hand"], int(data["hands"]), data["at"])

    def __iter__(self) -> Iterator[_Run]:
        for kept in self._kept:
            yield self._load(kept)


def _run_of(flows: pl.DataFrame, code: dict[str, int]) -> _Run:
    """One run's flows (a frame of ``sql/net_flows.sql``), players coded by ``code`` (new players added)."""
    flows = flows.sort("hand_id", "payer", "payee")
    for name in flows["payer"].unique(maintain_order=True).to_list() + flows["payee"].unique().to_list():
        code.setdefault(name, len(code))
    hand = flows["hand_id"].rle_id().cast(pl.Int64).to_numpy()
    a = flows["payer"].replace_strict(code, return_dtype=pl.Int32).to_numpy()
    x = flows["payee"].replace_strict(code, return_dtype=pl.Int32).to_numpy()
    net = flows["net"].cast(pl.Int64).to_numpy()
    block = hand * (len(code) + 1) + a
    starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
    return _Run(a, x, net, starts, hand[starts], int(hand[-1]) + 1)


def victim_view(
    data: duckdb.DuckDBPyConnection | pl.DataFrame,
    *,
    teams: Sequence[tuple[str, ...]] = (),
    min_hands: int = 200,
    fdr: float = 0.05,
    chunk_hands: int = CHUNK_HANDS,
) -> list[Victim]:
    """The victim view of ``data``: the warehouse behind a connection (``sql/net_flows.sql``, read ``chunk_hands``
    hands at a time and kept on disk between passes), or flows in memory (``hand_id``, ``payer``, ``payee``,
    ``net``: every ordered pair at each table, cut into runs of ``chunk_hands`` hands); players flagged first,
    then by net points paid per hand, most first. See the module docstring."""
    if isinstance(data, pl.DataFrame):
        return _view(_frame_runs(data, chunk_hands), teams, min_hands, fdr)
    return_freed_memory()
    with tempfile.TemporaryDirectory(prefix="xuezhan-victims-") as tmp:
        kept: list[_Runs] = []

        def read(runs: Iterator[tuple[Run, pl.DataFrame]]) -> None:  # from nothing: the runs may come twice
            kept[:] = [_Runs(Path(tmp))]
            for _, flows in runs:
                if not flows.is_empty():
                    kept[0].add(_run_of(flows, kept[0].code))
                del flows

        each_run(data, FLOW_STREAMS, _net_flows, read, size=chunk_hands, replayed=True)
        return _view(kept[0], teams, min_hands, fdr)


# What sql/net_flows.sql reads of each table, for the runs in file order (pipeline/analytics/runs.py)
FLOW_STREAMS = (
    Stream("hands", "hand_id, replayed"),
    Stream("player_hands", "hand_id, player"),
    Stream(
        "payments",
        "hand_id, side, payer_player, payee_player, amount",
        "side = 'computed' AND payee_player IS NOT NULL",
    ),
)


def _net_flows(run: Run) -> pl.DataFrame:
    return sql.run_sql(run.con, "pipeline.audit", "net_flows", lo=run.lo, hi=run.hi)


def _flow_runs(con: duckdb.DuckDBPyConnection, chunk_hands: int = CHUNK_HANDS) -> list[pl.DataFrame]:
    """The flows of ``sql/net_flows.sql`` a run of ``chunk_hands`` hands at a time, every run's held (for the
    tests: their concatenation is every ordered pair at every table of the warehouse)."""
    frames: list[pl.DataFrame] = []

    def read(runs: Iterator[tuple[Run, pl.DataFrame]]) -> None:
        frames[:] = [flows for _, flows in runs]

    each_run(con, FLOW_STREAMS, _net_flows, read, size=chunk_hands, replayed=True)
    return frames


def _frame_runs(flows: pl.DataFrame, chunk_hands: int) -> _Runs:
    """The runs of ``flows`` (in memory), ``chunk_hands`` hands each."""
    runs = _Runs(None)
    if flows.is_empty():
        return runs
    flows = flows.sort("hand_id")
    hand = flows["hand_id"].rle_id().to_numpy()
    bounds = np.searchsorted(hand, np.arange(0, int(hand[-1]) + 1 + chunk_hands, max(1, chunk_hands)))
    for lo, hi in itertools.pairwise(np.unique(bounds)):
        runs.add(_run_of(flows.slice(int(lo), int(hi - lo)), runs.code))
    return runs


def _view(runs: _Runs, teams: Sequence[tuple[str, ...]], min_hands: int, fdr: float) -> list[Victim]:
    """The view of ``runs``: every pass reads the runs one at a time, and only per-pair and per-player sums are
    held."""
    code = runs.code
    if not code:
        return []
    players = sorted(code)
    rank = {name: i for i, name in enumerate(players)}
    # the ordered pairs that met (keys a × players + x, ascending), not every pair of players
    keys = runs.recode(np.array([rank[name] for name in code], dtype=np.int32))  # code: in order of appearance
    n_players = len(players)
    size = len(keys)
    shared = np.zeros(size, dtype=np.int64)
    total = np.zeros(size)
    hands = np.zeros(n_players, dtype=np.int64)  # each player's hands and net points paid over them
    paid = np.zeros(n_players, dtype=np.int64)
    for run in runs:
        shared += np.bincount(run.at, minlength=size)
        total += np.bincount(run.at, run.net.astype(float), minlength=size)
        hands += np.bincount(run.a[run.starts], minlength=n_players)
        paid += np.bincount(run.a[run.starts], np.add.reduceat(run.net, run.starts), minlength=n_players).astype(
            np.int64
        )
    screened = np.flatnonzero(shared >= max(1, min_hands))

    reverse = (keys % n_players) * n_players + keys // n_players

    def judge(left_out: set[int]) -> dict[int, tuple[float, float]]:
        """Each screened ordered pair's (excess, z), with the opponents' strengths (what each takes from an
        opponent in a hand, on average) fitted without the rows of the pairs ``left_out``, both ways."""
        out = np.array(sorted(left_out), dtype=np.int64)
        kept = ~(np.isin(keys, out) | np.isin(reverse, out))  # by pair
        # what each x takes: the pairs' totals are sums of integers, exact in any order
        x_of = keys % n_players
        taken = np.bincount(x_of[kept], total[kept], minlength=n_players)
        strength = taken / np.maximum(np.bincount(x_of[kept], shared[kept], minlength=n_players), 1)
        excess = np.zeros(size)
        variance = np.zeros(size)
        for run in runs:
            keep = kept[run.at]
            net = run.net.astype(float)
            sizes = np.diff(np.r_[run.starts, len(net)])
            which = np.repeat(np.arange(len(run.starts)), sizes)
            residual = np.where(keep, net - strength[run.x], 0.0)
            # the pairs left out are left out of each other's opponents too (the partner a pays is not one of
            # the opponents the others are compared with)
            n = np.add.reduceat(keep.astype(float), run.starts)
            mean = np.add.reduceat(residual, run.starts) / np.maximum(n, 1)
            centred = np.where(keep, residual - mean[which], 0.0)
            spread = np.add.reduceat(centred**2, run.starts) / np.maximum(n, 1)
            excess += np.bincount(run.at, centred, minlength=size)
            variance += np.bincount(run.at, np.where(keep, spread[which], 0.0), minlength=size)
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

    team_lines = _team_losses(runs, players, teams, fdr)
    out = []
    for i, player in enumerate(players):
        lines = sorted(judged.get(i, []), key=lambda loss: (loss.p, -loss.z, loss.opponent))
        average = float(paid[i] / hands[i]) if hands[i] else 0.0
        out.append(Victim(player, int(hands[i]), average, lines, team_lines.get(player, [])))
    return sorted(out, key=lambda v: (not v.flagged, -v.per_hand, v.player))


def _flagged(judged: dict[int, tuple[float, float]], fdr: float) -> set[int]:
    keys = list(judged)
    q = by_qvalues(np.array([normal_sf(judged[k][1]) for k in keys])) if keys else np.zeros(0)
    return {k for k, qi in zip(keys, q, strict=True) if qi <= fdr}


def _team_losses(
    runs: _Runs, players: Sequence[str], teams: Sequence[tuple[str, ...]], fdr: float
) -> dict[str, list[TeamLoss]]:
    """Per player outside each team: net paid per hand with two or more of it at the table, and with none (the
    count, sum and sum of squares of each player's hands of each kind, exact integers, summed run by run)."""
    if not teams:
        return {}
    rank = {name: i for i, name in enumerate(players)}
    n_players = len(players)
    lines: list[tuple[str, TeamLoss]] = []
    for team in teams:
        member = np.zeros(n_players, dtype=bool)
        member[[rank[p] for p in team if p in rank]] = True
        sums = np.zeros((2, 3, n_players), dtype=np.int64)  # near / away × hands, sum, sum of squares
        for run in runs:
            who = run.a[run.starts]
            net = np.add.reduceat(run.net, run.starts)
            members = np.bincount(run.hand, member[who], minlength=run.hands)[run.hand]
            outside = ~member[who]
            for side, mask in enumerate((outside & (members >= 2), outside & (members == 0))):
                for m, values in enumerate((np.ones_like(net), net, net * net)):
                    # float sums of integers below 2**53: exact
                    sums[side, m] += np.bincount(who[mask], values[mask], minlength=n_players).astype(np.int64)
        for i in np.flatnonzero(~member).tolist():
            (n_near, s_near, q_near), (n_away, s_away, q_away) = (
                (int(sums[side, 0, i]), int(sums[side, 1, i]), int(sums[side, 2, i])) for side in (0, 1)
            )
            if n_near < 2 or n_away < 2:
                continue
            near_mean, away_mean = s_near / n_near, s_away / n_away
            near_var = (n_near * q_near - s_near * s_near) / (n_near * (n_near - 1))
            away_var = (n_away * q_away - s_away * s_away) / (n_away * (n_away - 1))
            se = math.sqrt(near_var / n_near + away_var / n_away)
            z = float((near_mean - away_mean) / se) if se > 0 else 0.0
            lines.append((players[i], TeamLoss(tuple(team), n_near, near_mean, n_away, away_mean, z, normal_sf(z))))
    q = by_qvalues(np.array([t.p for _, t in lines])) if lines else np.zeros(0)
    out: dict[str, list[TeamLoss]] = {}
    for (player, t), qi in zip(lines, q, strict=True):
        out.setdefault(player, []).append(replace(t, q=float(qi), flagged=bool(qi <= fdr)))
    return out
