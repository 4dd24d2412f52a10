"""Yardsticks (issue 44 point 3): each player's figures against the room's, from the `stats` answer: the
percentile, the room's pooled figure, the best quartile's band and z, checked against the definitions worked by
hand on a simulated room; and 2,000 players in well under the 10 s the issue allows (a count, not a timing: the
work is one pass over the players' figures per player, so it is checked on the shape, not the clock)."""

from __future__ import annotations

import math

import pytest

from pipeline.analytics.metrics import METRICS
from pipeline.analytics.queries import warehouse_stats
from pipeline.analytics.yardsticks import MIN_HANDS, NET, deviations, yardsticks
from pipeline.ingest.run import ingest
from pipeline.simulate.tables import SimConfig, write


@pytest.fixture(scope="module")
def answer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("yardsticks")
    write(SimConfig(hands=1200, seed=12, players=12), root / "g.jsonl")
    ingest([str(root / "g.jsonl")], root / "wh", workers=1)
    return warehouse_stats(root / "wh")


def test_the_stats_answer_carries_each_players_yardsticks(answer: dict[str, object]) -> None:
    players = answer["players"]
    assert isinstance(players, list) and len(players) == 12
    reference = [p for p in players if p["hands"] >= MIN_HANDS]
    assert len(reference) >= 10
    rate = next(m.id for m in METRICS if m.kind == "rate" and m.id == "deal_in_rate")
    for p in players:
        y = p["yardsticks"][rate]
        others = [q for q in reference if q["player"] != p["player"]]
        values = [q["metrics"][rate]["value"] for q in others]
        mine = p["metrics"][rate]["value"]
        assert y["percentile"] == pytest.approx(
            100 * (sum(v < mine for v in values) + 0.5 * sum(v == mine for v in values)) / len(values)
        )
        room = sum(q["metrics"][rate]["num"] for q in others) / sum(q["metrics"][rate]["den"] for q in others)
        assert y["room"] == pytest.approx(room)
        n = p["metrics"][rate]["den"]
        assert y["z"] == pytest.approx((mine - room) / math.sqrt(room * (1 - room) / n))
        nets = sorted(others, key=lambda q: q["metrics"][NET]["value"])
        best = nets[-max(1, len(nets) // 4) :]
        band = [q["metrics"][rate]["value"] for q in best]
        assert (y["best_low"], y["best_high"]) == (min(band), max(band))
        assert len(p["deviations"]) == 5
        zs = [abs(p["yardsticks"][m]["z"]) for m in p["deviations"]]
        assert zs == sorted(zs, reverse=True)
        rest = [abs(v["z"]) for m, v in p["yardsticks"].items() if v["z"] is not None and m not in p["deviations"]]
        assert not rest or min(zs) >= max(rest)


def test_two_thousand_players() -> None:
    """2,000 players of 200 hands each: every player's yardsticks, each against the 1,999 others."""
    players = [
        {
            "player": f"p{i:04d}",
            "hands": 200,
            "metrics": {
                "win_rate": {"value": (i % 50 + 1) / 200, "num": i % 50 + 1, "den": 200},
                NET: {
                    "value": i % 7 - 3.0,
                    "sum": 200.0 * (i % 7 - 3),
                    "n": 200,
                    "ci_low": i % 7 - 4.0,
                    "ci_high": i % 7 - 2.0,
                },
            },
        }
        for i in range(2000)
    ]
    ys = yardsticks({"players": players})
    assert len(ys) == 2000 and ys["p0049"]["win_rate"].percentile == pytest.approx(100 * (1960 + 0.5 * 39) / 1999)
    assert [y.metric for y in deviations(ys["p0000"])] == [NET, "win_rate"]  # z −5.9 and −5.2
    # p0006 is one of the 285 players of net 3: the best quartile of the 1,999 others is 499 players, 284 of
    # net 3 and 215 of net 2; 1,715 others below it, 284 tied
    top = ys["p0006"][NET]
    assert top.best == (2.0, 3.0) and top.percentile == pytest.approx(100 * (1715 + 0.5 * 284) / 1999)
