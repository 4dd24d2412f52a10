"""The simulator's decision times (``simulate --timing``, and ``--inject relay=N``): the ``ms`` of every event.

The model, per event of a seat whose player has speed ``v`` (log-normal, median 1, σ :data:`SPEED_SIGMA`, drawn
once per player and seed):

- a draw takes a tap, no thought: log-normal, median ``v ×`` :data:`DRAW_MS`, σ :data:`DRAW_SIGMA`;
- a decision (a discard, a pong, a kong, a win) takes longer the harder it is: log-normal, median
  ``v × (``:data:`BASE_MS` ``+`` :data:`STEP_MS` ``× difficulty)``, σ :data:`SIGMA`, where ``difficulty`` is the
  number of options the reference policy cannot call clearly worse than its first choice, less one
  (:func:`pipeline.game.policy.difficulty`; 0 for a forced move or a win, at most 8);
- a relay (``--inject relay=N``: a person relaying a bot's moves, or a bot with a fixed delay) takes a flat
  time on every decision whatever its difficulty: median ``v ×`` :data:`RELAY_MS`, σ :data:`RELAY_SIGMA`; its
  draws are a person's.

The times come from their own random streams (the player's speed from ``speed-<seed>-<player>``, a hand's times
from ``timing-<seed>-<hand_id>``), never from the play's: a file simulated with times holds the same hands,
byte for byte but for the ``ms`` fields, as one without.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any, Final

from pipeline.game.events import Draw

DRAW_MS: Final = 500
DRAW_SIGMA: Final = 0.35
BASE_MS: Final = 1200
STEP_MS: Final = 900
SIGMA: Final = 0.55
RELAY_MS: Final = 2500
RELAY_SIGMA: Final = 0.05
SPEED_SIGMA: Final = 0.25


def speed(seed: int, player: str) -> float:
    """The player's speed factor (its times' multiplier), the same for a seed and a player wherever it sits."""
    return random.Random(f"speed-{seed}-{player}").lognormvariate(0.0, SPEED_SIGMA)


def think_times(
    events: Sequence[Any],
    hard: Sequence[int | None],
    speeds: Sequence[float],
    relays: Collection[int],
    rng: random.Random,
) -> list[int]:
    """The ``ms`` of each event: ``hard`` its difficulty (:func:`pipeline.game.policy.difficulties`), ``speeds``
    per seat, ``relays`` the seats of relays."""
    out = []
    for event, d in zip(events, hard, strict=True):
        v = speeds[event.seat]
        if isinstance(event, Draw):
            ms = v * DRAW_MS * rng.lognormvariate(0.0, DRAW_SIGMA)
        elif event.seat in relays:
            ms = v * RELAY_MS * rng.lognormvariate(0.0, RELAY_SIGMA)
        else:
            ms = v * (BASE_MS + STEP_MS * (d or 0)) * rng.lognormvariate(0.0, SIGMA)
        out.append(round(ms))
    return out


def add_times(record: dict[str, Any], times: Sequence[int]) -> None:
    """Write ``times`` into the record's events (``ms``, each event's last key)."""
    for event, ms in zip(record["events"], times, strict=True):
        event["ms"] = ms
