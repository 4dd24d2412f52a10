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
- ``z``: ``(atanh(r) − room) × √(decisions − 3)``, ``room`` the median ``atanh(r)`` of the room's players
  (Fisher's transform: the standard error of ``atanh(r)`` is ``1/√(n − 3)``); negative: its times follow
  difficulty less than the room's.

Flagged: ``z ≤ −``:data:`Z_FLAG` (beyond chance) and ``r`` at most half the room's (a large effect, not a
slightly slower reader of the table). The room is the players screened, so a room of relays would flag no one:
the screen compares players, it does not know how long a person takes.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from pipeline.game.policy import difficulties
from pipeline.game.record import Record
from pipeline.game.state import IllegalAction
from pipeline.validate import play_state

MIN_DECISIONS: Final = 30
Z_FLAG: Final = 3.5


@dataclass(frozen=True, slots=True)
class ThinkTime:
    player: str
    decisions: int
    median_ms: float
    r: float | None
    z: float | None
    flagged: bool


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


def screen(records: Iterable[Record]) -> list[ThinkTime]:
    """Each player's think-time figures against the room (players with fewer than :data:`MIN_DECISIONS` timed
    decisions get no ``r`` and are no part of the room), most suspicious first."""
    per = decision_times(records)
    rs: dict[str, float | None] = {}
    for player, pts in per.items():
        hard = [d for d, _ in pts]
        logs = [math.log(ms + 1) for _, ms in pts]
        if len(pts) < MIN_DECISIONS or len(set(hard)) < 2 or len(set(logs)) < 2:
            rs[player] = None
        else:
            rs[player] = statistics.correlation(hard, logs)
    fisher = [math.atanh(max(-0.999999, min(0.999999, r))) for r in rs.values() if r is not None]
    room = statistics.median(fisher) if fisher else None
    out = []
    for player, pts in per.items():
        r = rs[player]
        z = None
        if r is not None and room is not None:
            z = (math.atanh(max(-0.999999, min(0.999999, r))) - room) * math.sqrt(len(pts) - 3)
        flagged = z is not None and r is not None and room is not None and z <= -Z_FLAG and r <= math.tanh(room) / 2
        out.append(ThinkTime(player, len(pts), statistics.median(ms for _, ms in pts), r, z, flagged))
    return sorted(out, key=lambda t: (t.z is None, t.z if t.z is not None else 0.0, t.player))
