"""The think-time screen: players whose decision times do not follow how hard the decisions
were, against the room.

A person thinks longer on a harder decision; a relay (someone copying a bot's moves) or a bot with a fixed
delay does not. For every record that carries decision times (``ms``, xzlog/1), the hand is replayed and each
decision (every event but a draw; not a hidden hand's) gets its difficulty (:func:`pipeline.game.policy.difficulty`:
the options the reference policy cannot call clearly worse than its first choice, less one) beside its time.
Per player:

- ``decisions``, ``median_ms``;
- ``r``: the correlation of the difficulty with ``log(ms + 1)`` over its decisions (None when either does not
  vary, or under :data:`MIN_DECISIONS` decisions);
- ``room_r``: the room's r, the median over the *other* players with an ``r`` (leave one out: a relay does not
  pull down the yardstick it is measured against);
- ``z``: ``(atanh(r) − atanh(room_r)) / s``, on Fisher's scale (``atanh``: the standard error of ``atanh(r)`` is
  ``1/√(n − 3)``), ``s = √(spread² + 1/(n − 3))``, ``spread`` the other players' robust spread (1.4826 × the
  median absolute deviation of their ``atanh(r)``): how far the player's times are from following difficulty
  as the room's do, in the room's own units, its sampling error added (conservative: the spread holds the
  others' sampling error already). Negative: its times follow difficulty less than the room's;
- ``p``: one-sided, ``P(Z ≤ z)`` of a standard normal (None without :data:`MIN_ROOM` other players with an
  ``r``); ``q``: Benjamini–Yekutieli over the players tested (any dependence between them allowed);
- ``flag_r``: what the screen can see here: the ``r`` at or below which the player would be flagged, were it
  the only one (its ``p`` at Benjamini–Yekutieli's first level ``fdr / (m · c(m))`` of the ``m`` tested:
  ``tanh(atanh(room_r) − z* · s)``). A relay's times follow difficulty not at all (``r`` near 0): a room whose
  ``flag_r`` is below 0 cannot flag one, however long it plays.

Flagged: ``q ≤ fdr``. A flag is a reason to look at the player's decisions and times, not proof: a player who
thinks at an even pace, one who plays on auto-play or with a slow connection, times the client rounds, all look
flat too. The room is the players screened, so a room of relays would flag no one: the screen compares players,
it does not know how long a person takes.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

import duckdb
import numpy as np

from pipeline import sql
from pipeline.analytics.export import Missing, Stored, read_back
from pipeline.analytics.stats import by_levels, by_qvalues, normal_isf, normal_sf
from pipeline.game.policy import difficulties
from pipeline.game.record import Record, RecordError, parse_record
from pipeline.game.state import IllegalAction
from pipeline.validate import play_state

MIN_DECISIONS: Final = 30
MIN_ROOM: Final = 5  # other players with an r: fewer, and the room's median and spread mean little
MAD_SCALE: Final = 1.4826  # the median absolute deviation × this estimates a normal's standard deviation
_CLAMP: Final = 0.999999


@dataclass(frozen=True, slots=True)
class ThinkTime:
    player: str
    decisions: int
    median_ms: float
    r: float | None
    room_r: float | None
    z: float | None
    p: float | None
    q: float | None
    flagged: bool
    flag_r: float | None = None  # the r at or below which it would be flagged alone (the module docstring)

    def as_dict(self) -> dict[str, object]:
        return {
            "player": self.player,
            "decisions": self.decisions,
            "median_ms": self.median_ms,
            "r": _round(self.r),
            "room_r": _round(self.room_r),
            "z": _round(self.z),
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
            "flag_r": _round(self.flag_r),
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def decision_times(records: Iterable[Record]) -> dict[str, list[tuple[int, int]]]:
    """Per player, (difficulty, ms) of each decision of the records that carry times."""
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for record in records:
        times = record.ms
        if times is None or record.level == "settlement":
            continue
        try:
            state = play_state(record)
        except IllegalAction:
            continue
        for event, hard, ms in zip(record.events, difficulties(state, record.events), times, strict=True):
            if hard is not None and ms is not None:
                out[record.players[event.seat]].append((hard, ms))
    return out


def _fisher(r: float) -> float:
    return math.atanh(max(-_CLAMP, min(_CLAMP, r)))


def screen(records: Iterable[Record], *, fdr: float = 0.05) -> list[ThinkTime]:
    """Each player's think-time figures against the room (players with fewer than :data:`MIN_DECISIONS` timed
    decisions get no ``r`` and are no part of the room), most suspicious first (smallest ``z``; untested last)."""
    per = decision_times(records)
    rs: dict[str, float | None] = {}
    for player, pts in per.items():
        hard = [d for d, _ in pts]
        logs = [math.log(ms + 1) for _, ms in pts]
        if len(pts) < MIN_DECISIONS or len(set(hard)) < 2 or len(set(logs)) < 2:
            rs[player] = None
        else:
            rs[player] = statistics.correlation(hard, logs)
    fisher = {player: _fisher(r) for player, r in rs.items() if r is not None}
    figures: dict[str, tuple[float | None, float | None, float | None]] = {}
    scale: dict[str, tuple[float, float]] = {}  # the tested: (the room's atanh r, the s it is judged by)
    for player, pts in per.items():
        others = [f for other, f in fisher.items() if other != player]
        room = statistics.median(others) if others else None
        if player not in fisher or len(others) < MIN_ROOM or room is None:
            figures[player] = (None if room is None else math.tanh(room), None, None)
            continue
        spread = MAD_SCALE * statistics.median(abs(f - room) for f in others)
        s = math.sqrt(spread**2 + 1 / (len(pts) - 3))
        score = (fisher[player] - room) / s
        figures[player] = (math.tanh(room), score, normal_sf(-score))
        scale[player] = (room, s)
    tested = [player for player in per if figures[player][2] is not None]
    qs = dict(zip(tested, by_qvalues(np.array([figures[p][2] for p in tested], dtype=float)).tolist(), strict=True))
    alone = normal_isf(by_levels(len(tested), fdr)[0]) if tested else 0.0
    out = []
    for player, pts in per.items():
        room_r, z, p = figures[player]
        q = qs.get(player)
        median_ms = float(statistics.median(ms for _, ms in pts))
        at = scale.get(player)
        flag_r = None if at is None else math.tanh(at[0] - alone * at[1])
        out.append(
            ThinkTime(player, len(pts), median_ms, rs[player], room_r, z, p, q, q is not None and q <= fdr, flag_r)
        )
    return sorted(out, key=lambda t: (t.z is None, t.z if t.z is not None else 0.0, t.player))


def timed_hands(con: duckdb.DuckDBPyConnection) -> list[Stored]:
    """The stored hands (of the connection's scope) that carry decision times, where their records are
    (``events.ms``: nothing more is stored for the screen, no ingest cost for the records without times)."""
    return [Stored(*row) for row in con.execute(sql.load_sql("pipeline.audit", "timed_hands")).fetchall()]


def read_timed(hands: list[Stored], missing: list[Missing]) -> Iterator[Record]:
    """The records of ``hands`` read back from their sources (:func:`pipeline.analytics.export.read_back`: the
    very line stored, or not at all); each one that cannot be read back or parsed is appended to ``missing``."""
    for got in read_back(hands):
        if isinstance(got, Missing):
            missing.append(got)
            continue
        try:
            yield parse_record(got.record)
        except RecordError as exc:
            missing.append(Missing(got.hand, f"not a record any more: {exc}"))
