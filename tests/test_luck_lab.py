"""The luck lab's candidate draw terms (tools/luck_lab.py): each has mean zero over the tiles the wall held, at
every draw of simulated hands, as a control variate must (it then takes luck out of the net and no skill); and its
replay keeps the evidence's own six terms as ingest computes them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import pipeline
from pipeline.game.events import Draw
from pipeline.game.evidence import Evidence
from pipeline.game.record import parse_record
from pipeline.simulate.tables import SimConfig, simulate
from pipeline.validate import initial_state
from tools.luck_lab import NAMES, LabEvidence, replay

# The lab subclasses the engine's Evidence, which the compiled build makes a native class that an interpreted class
# cannot inherit from (TypeError): the lab runs on the pure build (tools/luck_lab.py says so), and is tested there.
pytestmark = pytest.mark.skipif(pipeline.compiled(), reason="the lab subclasses Evidence: it runs on the pure build")


def _records(config: SimConfig) -> list[Any]:
    lines, _ = simulate(config)
    return [parse_record(orjson.loads(line)) for line in lines]


def test_every_candidate_term_has_mean_zero_over_the_tiles_the_wall_held() -> None:
    checked = 0
    reached: set[str] = set()
    for record in _records(SimConfig(hands=6, seed=5, players=4)):
        state = initial_state(record)
        probe = LabEvidence()  # one for every tile tried (its caches kept), its sums reset for each
        for event in record.events:
            if isinstance(event, Draw):
                total = [dict.fromkeys(NAMES, 0.0) for _ in range(state.n)]
                wall = 0
                for k in range(27):
                    copies = state.full[k] - state.seen[k]
                    if copies:
                        wall += copies
                        probe.luck, probe.extra = None, []
                        probe.before_draw(state, event.seat, k, len(state.events))
                        for s in range(state.n):
                            for name in NAMES:
                                total[s][name] += copies * probe.extra[s][name]
                                if probe.extra[s][name]:
                                    reached.add(name)
                assert wall == state.left
                for s in range(state.n):
                    for name in NAMES:
                        assert total[s][name] / wall == pytest.approx(0, abs=1e-9), (name, s)
                checked += 1
            state.apply(event)
    assert checked > 100
    assert {"own_main_1", "riv_pair_2", "rv_ev", "riv_rvmax_s1", "fedv", "own_flush_3"} <= reached


def test_the_labs_replay_keeps_the_evidences_own_terms() -> None:
    for record in _records(SimConfig(hands=4, seed=3, players=4)):
        _, lab = replay(record)
        plain = Evidence()
        state = initial_state(record, plain)
        for event in record.events:
            state.apply(event)
        assert lab.luck == plain.luck
