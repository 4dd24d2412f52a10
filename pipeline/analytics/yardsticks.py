"""Yardsticks: each player's figures against the room's, as a leak finder shows them: where a
player stands among the room's players (percentile), the band the room's best earners keep, and how far the
player is from the room's average in standard errors.

The reference is the players with at least ``min_hands`` hands (of the player's scale group where the room mixes
stakes: :mod:`pipeline.analytics.scales`), the player left out of their own reference. For each rate and mean of
the metric registry (:mod:`pipeline.analytics.metrics`):

- ``percentile``: the share of the reference whose figure is below the player's (ties count half), in percent;
- ``room``: the reference's pooled figure (all its numerators over all its denominators);
- ``best``: the lowest and highest figure among the reference's best quartile by net points per hand (at least
  one player): what the room's winners do;
- ``z``: the player's distance from ``room`` in standard errors of the player's own figure (a rate's from the
  room's rate, ``sqrt(p(1-p)/n)``; a mean's from its interval): it grows with the player's hands, so the
  largest ``|z|`` are the player's most certain deviations (:func:`deviations`).

>>> answer = {"players": [
...     {"player": p, "hands": 200, "metrics": {
...         "win_rate": {"value": w / 200, "num": w, "den": 200},
...         "net_points_per_hand": {"value": net, "sum": net * 200, "n": 200, "ci_low": net - 1, "ci_high": net + 1}}}
...     for p, w, net in (("a", 20, -2.0), ("b", 40, 0.0), ("c", 60, 1.0), ("d", 80, 3.0))]}
>>> y = yardsticks(answer)
>>> y["d"]["win_rate"].percentile, round(y["d"]["win_rate"].room, 3), y["d"]["win_rate"].best
(100.0, 0.2, (0.3, 0.3))
>>> [(m.metric, round(m.z, 1)) for m in deviations(y["a"])]
[('net_points_per_hand', -6.5), ('win_rate', -6.2)]
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.analytics.metrics import METRICS

MIN_HANDS = 100
NET = "net_points_per_hand"
Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Yardstick:
    metric: str
    value: float
    n: int
    percentile: float | None  # None: no reference player
    room: float | None
    best: tuple[float, float] | None
    z: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "n": self.n,
            "percentile": self.percentile,
            "room": self.room,
            "best_low": self.best[0] if self.best else None,
            "best_high": self.best[1] if self.best else None,
            "z": self.z,
        }


def _figure(m: Mapping[str, Any]) -> tuple[float, float, int] | None:
    """(value, numerator or sum, denominator or n) of a metric's answer, or None where it has no value."""
    if m.get("value") is None:
        return None
    if "den" in m:
        return float(m["value"]), float(m["num"]), int(m["den"])
    if "n" in m:
        return float(m["value"]), float(m["sum"]), int(m["n"])
    return None


def yardsticks(
    answer: Mapping[str, Any], *, min_hands: int = MIN_HANDS, group_of: Mapping[str, str] | None = None
) -> dict[str, dict[str, Yardstick]]:
    """Each player's yardsticks (player → metric id → :class:`Yardstick`) from a ``stats --format json`` answer
    (:func:`pipeline.analytics.queries.stats`, ``by="all"``). ``group_of``: each player's scale group (players
    are compared within their group); default one group.

    Per group and metric the reference's figures are sorted once: a player's percentile is two bisections, the
    room's figure the reference's sums less the player's own, and the best quartile the same players for everyone
    outside it, and for a player inside it the same band less their own figure (2,000 players: a fraction of
    a second)."""
    players = list(answer["players"])
    groups = group_of or {}
    by_group: dict[str | None, list[Mapping[str, Any]]] = {}
    for p in players:
        by_group.setdefault(groups.get(p["player"]), []).append(p)
    out: dict[str, dict[str, Yardstick]] = {p["player"]: {} for p in players}
    for members in by_group.values():
        _group(members, min_hands, out)
    return out


def _group(members: list[Mapping[str, Any]], min_hands: int, out: dict[str, dict[str, Yardstick]]) -> None:
    kinds = {m.id: m.kind for m in METRICS if m.kind in ("rate", "mean")}
    reference = [p for p in members if p["hands"] >= min_hands]
    in_reference = {p["player"] for p in reference}
    ranked = sorted(
        ((f[0], p["player"]) for p in reference if (f := _figure(p["metrics"].get(NET, {}))) is not None), reverse=True
    )
    order = [name for _, name in ranked]  # the reference by net per hand, best first
    for metric, kind in kinds.items():
        figures = {p["player"]: f for p in reference if (f := _figure(p["metrics"].get(metric, {}))) is not None}
        values = sorted(f[0] for f in figures.values())
        total_num = sum(f[1] for f in figures.values())
        total_den = sum(f[2] for f in figures.values())

        # the best quartile of the others: the same players for everyone outside the reference's top k + 1
        k_in = max(1, (len(order) - 1) // 4)
        k_out = max(1, len(order) // 4)
        common_out, common_in = _band(figures, order[:k_out]), _band(figures, order[:k_in])
        top = set(order[: k_in + 1])
        top_values = sorted(figures[o][0] for o in order[: k_in + 1] if o in figures)  # a top player's band: less own
        for p in members:
            name = p["player"]
            fig = _figure(p["metrics"].get(metric, {}))
            if fig is None:
                continue
            value, _, n = fig
            own = name in figures
            count = len(values) - own
            if count <= 0 or n == 0:
                out[name][metric] = Yardstick(metric, value, n, None, None, None, None)
                continue
            below = bisect_left(values, value)
            ties = bisect_right(values, value) - below - own
            den = total_den - (figures[name][2] if own else 0)
            room = (total_num - (figures[name][1] if own else 0)) / den if den else None
            if name not in in_reference:
                best = common_out
            elif name in top:
                best = _band_less(top_values, figures[name][0] if own else None)
            else:
                best = common_in
            z = _z(kind, value, n, room, p["metrics"][metric])
            out[name][metric] = Yardstick(metric, value, n, 100.0 * (below + 0.5 * ties) / count, room, best, z)


def _band(figures: Mapping[str, tuple[float, float, int]], names: list[str]) -> tuple[float, float] | None:
    """The lowest and highest figure of ``names`` (those that have one)."""
    got = [figures[n][0] for n in names if n in figures]
    return (min(got), max(got)) if got else None


def _band_less(values: list[float], own: float | None) -> tuple[float, float] | None:
    """The lowest and highest of the sorted ``values`` less one copy of ``own`` (None: nothing left out): the best
    quartile of the others, for a player inside it, at once (not a pass over the room per player).

    >>> _band_less([1.0, 2.0, 5.0], 1.0), _band_less([1.0, 2.0, 5.0], 5.0), _band_less([2.0, 2.0], 2.0)
    ((2.0, 5.0), (1.0, 2.0), (2.0, 2.0))
    >>> _band_less([3.0], 3.0), _band_less([3.0], None)
    (None, (3.0, 3.0))
    """
    if own is None:
        return (values[0], values[-1]) if values else None
    if len(values) <= 1:
        return None
    low = values[1] if values[0] == own else values[0]
    high = values[-2] if values[-1] == own else values[-1]
    return low, high


def _z(kind: str, value: float, n: int, room: float | None, m: Mapping[str, Any]) -> float | None:
    if room is None:
        return None
    if kind == "rate":
        spread = math.sqrt(room * (1 - room) / n) if 0 < room < 1 else 0.0
    else:  # a mean: the standard error its 95% interval says
        low, high = m.get("ci_low"), m.get("ci_high")
        spread = (high - low) / (2 * Z95) if low is not None and high is not None else 0.0
    return (value - room) / spread if spread > 0 else None


def deviations(ys: Mapping[str, Yardstick], top: int = 5) -> list[Yardstick]:
    """A player's ``top`` largest deviations from the room, by ``|z|`` (the most certain first)."""
    scored = [y for y in ys.values() if y.z is not None]
    return sorted(scored, key=lambda y: (-abs(y.z or 0.0), y.metric))[:top]
