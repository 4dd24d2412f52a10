"""The duplicate-play luck lab (tools/luck_duplicate.py): the duplicate net is a function of the hand's chance
alone (its wall, dealer and exchange direction; the same record gives the same nets, the real players' play none of
them), it is zero-sum as every hand's payments are, and the fit takes out what it predicts."""

from __future__ import annotations

import numpy as np
import orjson

from pipeline.game.record import parse_record
from pipeline.simulate.tables import SimConfig, simulate
from tools.luck_duplicate import LUCK, SHANTEN_CELLS, design, duplicate_nets, reductions


def test_the_duplicate_net_reads_the_wall_not_the_play() -> None:
    lines, _ = simulate(SimConfig(hands=3, seed=4, players=4))
    for line in lines:
        obj = orjson.loads(line)
        record = parse_record(obj)
        nets = duplicate_nets(record, plays=2)
        assert abs(nets.sum()) < 1e-9  # each play's payments are zero-sum, so is their mean
        assert np.array_equal(nets, duplicate_nets(record, plays=2))  # the same record, the same nets
        # the real players' decisions play no part: another record of the same wall, dealer and exchange direction,
        # whoever sat and whatever they did, gives the same nets
        other = dict(obj, players=["x1", "x2", "x3", "x4"], events=obj["events"][:5])
        assert np.array_equal(nets, duplicate_nets(parse_record(other), plays=2))


def test_the_fit_takes_out_what_the_duplicate_predicts() -> None:
    rng = np.random.default_rng(7)
    rooms = []
    for _ in range(3):
        n = 4000
        x = rng.normal(size=n)
        room = {
            "x": x,
            "y": 0.8 * x + rng.normal(size=n),
            "dealer": rng.integers(0, 2, size=n),
            "shanten": rng.integers(0, SHANTEN_CELLS, size=n),
        } | {k: rng.normal(size=n) for k in LUCK}
        rooms.append(room)
    assert design(rooms[0], True).shape == (4000, 2 * SHANTEN_CELLS + len(LUCK) + 2)
    plain_in, plain_out = reductions(rooms, False)
    dup_in, dup_out = reductions(rooms, True)
    assert max(plain_in + plain_out) < 0.02  # today's terms are noise here
    # y = 0.8 x + e: the duplicate takes out 0.64 / 1.64 of the variance
    assert all(abs(r - 0.64 / 1.64) < 0.03 for r in dup_in + dup_out)
