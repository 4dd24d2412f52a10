"""The victim view (issue 22 item 1, pipeline/audit/victims.py): who pays whom beyond what the opponent takes
from the others at the same tables, and what a player pays with a team at the table against without it."""

from __future__ import annotations

import numpy as np
import polars as pl

from pipeline.audit.victims import victims_of


def _flows(rng: np.random.Generator, hands: int, extra: dict[tuple[str, str], float], players: int = 6) -> pl.DataFrame:
    """Four of ``players`` per hand; every ordered pair's net payment noise, antisymmetric, plus ``extra``
    points from a to x in each hand they share."""
    names = [f"p{i}" for i in range(players)]
    rows = []
    for h in range(hands):
        seated = sorted(rng.choice(names, size=4, replace=False).tolist())
        for i, a in enumerate(seated):
            for x in seated[i + 1 :]:
                net = float(rng.normal(0.0, 8.0)) + extra.get((a, x), 0.0) - extra.get((x, a), 0.0)
                rows += [(f"h{h:05d}", a, x, round(net)), (f"h{h:05d}", x, a, -round(net))]
    return pl.DataFrame(rows, schema=["hand_id", "payer", "payee", "net"], orient="row")


def test_a_player_who_pays_one_opponent_far_more_than_the_others_is_named_with_that_opponent() -> None:
    flows = _flows(np.random.default_rng(1), 1500, {("p0", "p5"): 4.0})
    victims = victims_of(flows, min_hands=200)
    flagged = [v for v in victims if v.flagged]
    assert [v.player for v in flagged] == ["p0"]
    (loss,) = [x for x in flagged[0].losses if x.flagged]
    assert loss.opponent == "p5" and loss.net > 0 and loss.z > 4 and loss.hands > 500
    # p5 takes from p0, not from everybody: its strength is not what p0 pays it
    assert all(not x.flagged for v in victims for x in v.losses if v.player != "p0")


def test_a_strong_opponent_who_takes_from_everybody_is_no_one_s_victimiser() -> None:
    extra = {(f"p{i}", "p5"): 4.0 for i in range(5)}
    victims = victims_of(_flows(np.random.default_rng(2), 1500, extra), min_hands=200)
    assert not any(v.flagged for v in victims)
    assert victims[0].player != "p5" and {v.player for v in victims if v.per_hand < 0} == {"p5"}


def test_an_honest_room_names_no_victim() -> None:
    assert not any(v.flagged for v in victims_of(_flows(np.random.default_rng(3), 1500, {}), min_hands=200))


def test_a_team_s_victim_pays_more_with_the_team_at_the_table_than_without() -> None:
    """8 players; p3 pays each of p0, p1, p2 (the team) 3 points a hand beyond the noise: with two of them at
    the table it pays 6 or 9 more a hand than at a table with none of them."""
    rng = np.random.default_rng(4)
    extra = {("p3", t): 3.0 for t in ("p0", "p1", "p2")}
    victims = victims_of(_flows(rng, 3000, extra, players=8), teams=[("p0", "p1", "p2")], min_hands=200)
    by_player = {v.player: v for v in victims}
    (line,) = by_player["p3"].teams
    assert line.flagged and line.with_per_hand > line.without_per_hand + 3 and line.with_hands > 200
    assert line.without_hands > 50
    assert not any(by_player[p].teams[0].flagged for p in ("p4", "p5", "p6", "p7"))
    assert all(not by_player[t].teams for t in ("p0", "p1", "p2"))  # a team is not its own victim
    assert victims[0].player == "p3"


def test_no_flows_no_victims() -> None:
    empty = pl.DataFrame(schema={"hand_id": pl.String, "payer": pl.String, "payee": pl.String, "net": pl.Int64})
    assert victims_of(empty) == []
