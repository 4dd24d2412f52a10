"""The simulator's decision times (``simulate --timing``, and ``--inject relay=N``): the ``ms`` of every event.

The model, per event of a seat whose player has the pace ``(v, k)`` (:class:`Pace`, drawn once per player and
seed: its speed ``v`` log-normal, median 1, σ :data:`SPEED_SIGMA`; how much longer it thinks on a harder decision,
``k``, log-normal, median 1, σ :data:`SLOPE_SIGMA`: people differ in that too, some think at a nearly even pace):

- a draw takes a tap, no thought: log-normal, median ``v ×`` :data:`DRAW_MS`, σ :data:`DRAW_SIGMA`;
- a decision (a discard, a pong, a kong, a win) takes longer the harder it is: log-normal, median
  ``v × (``:data:`BASE_MS` ``+ k ×`` :data:`STEP_MS` ``× difficulty)``, σ :data:`SIGMA`, where ``difficulty`` is
  the number of options the reference policy cannot call clearly worse than its first choice, less one
  (:func:`pipeline.game.policy.difficulty`; 0 for a forced move or a win, at most 8);
- a relay (``--inject relay=N``: a person relaying a bot's moves, or a bot with a fixed delay) takes a flat
  time on every decision whatever its difficulty: median ``v ×`` :data:`RELAY_MS`, σ :data:`RELAY_SIGMA`; its
  draws are a person's;
- an engine follower (``--inject follow=N:P``) on a decision it asked its engine about (the coin said follow,
  :class:`~pipeline.simulate.bots.FollowNote`; an evasive one asked too where it then kept its own choice) takes
  the time of asking: setting the position up and reading the answer, which does not depend on how hard the
  decision was: median ``v ×`` :data:`CONSULT_MS`, σ :data:`CONSULT_SIGMA` (a person's hands, not a bot's
  delay); its other decisions are a person's. This is an assumption, not a measurement: a follower who hides the
  consultation (thinking longer where the engine's options are close) is not modelled.

The times come from their own random streams (the player's speed from ``speed-<seed>-<player>``, its slope from
``slope-<seed>-<player>``, a hand's times from ``timing-<seed>-<hand_id>``), never from the play's: a file
simulated with times holds the same hands, byte for byte but for the ``ms`` fields, as one without.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any, Final, NamedTuple

from pipeline.game.events import Draw

DRAW_MS: Final = 500
DRAW_SIGMA: Final = 0.35
BASE_MS: Final = 1200
STEP_MS: Final = 900
SIGMA: Final = 0.55
RELAY_MS: Final = 2500
RELAY_SIGMA: Final = 0.05
CONSULT_MS: Final = 3000
CONSULT_SIGMA: Final = 0.3
SPEED_SIGMA: Final = 0.25
SLOPE_SIGMA: Final = 0.5


class Pace(NamedTuple):
    """A player's pace: ``speed`` multiplies all its times, ``slope`` the extra time a harder decision takes."""

    speed: float
    slope: float


def pace(seed: int, player: str) -> Pace:
    """The player's pace, the same for a seed and a player wherever it sits."""
    return Pace(
        random.Random(f"speed-{seed}-{player}").lognormvariate(0.0, SPEED_SIGMA),
        random.Random(f"slope-{seed}-{player}").lognormvariate(0.0, SLOPE_SIGMA),
    )


def think_times(
    events: Sequence[Any],
    hard: Sequence[int | None],
    paces: Sequence[Pace],
    relays: Collection[int],
    rng: random.Random,
    consulted: Collection[tuple[int, int]] = (),
) -> list[int]:
    """The ``ms`` of each event: ``hard`` its difficulty (:func:`pipeline.game.policy.difficulties`), ``paces``
    per seat, ``relays`` the seats of relays, ``consulted`` the (event index, seat) of the decisions a follower
    asked its engine about."""
    out = []
    for i, (event, d) in enumerate(zip(events, hard, strict=True)):
        v, k = paces[event.seat]
        if isinstance(event, Draw):
            ms = v * DRAW_MS * rng.lognormvariate(0.0, DRAW_SIGMA)
        elif event.seat in relays:
            ms = v * RELAY_MS * rng.lognormvariate(0.0, RELAY_SIGMA)
        elif (i, event.seat) in consulted:
            ms = v * CONSULT_MS * rng.lognormvariate(0.0, CONSULT_SIGMA)
        else:
            ms = v * (BASE_MS + k * STEP_MS * (d or 0)) * rng.lognormvariate(0.0, SIGMA)
        out.append(round(ms))
    return out


def add_times(record: dict[str, Any], times: Sequence[int]) -> None:
    """Write ``times`` into the record's events (``ms``, each event's last key)."""
    for event, ms in zip(record["events"], times, strict=True):
        event["ms"] = ms
