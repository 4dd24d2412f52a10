"""Draw luck (schemas/METRICS.md#luck): the replay's per-draw luck terms (:meth:`Evidence.before_draw`,
pipeline/game/evidence.py ``LUCK``), and what ingest stores of them (``player_hands.draw_luck_*``).

- A hand-made deal where each term is worked out by hand: a ready seat's draw (what a self-drawn win would take
  against the wall's share of its waits; the other seats' shares), a 1-shanten seat's draw (the tiles that make it
  ready), the other seats' draws of a ready seat's winning tiles.
- Mean zero, exactly: at every draw of simulated hands (pongs, kongs, wins, three rule sets), every term averaged
  over the tiles the wall held (each as likely as its copies left) is 0 — the property that lets the
  luck-adjusted net take the draws' luck out without taking any skill out.
- Ingest stores the sums per seat-hand for the records that show every hand, null for an observer's; in each hand
  the seats' ``win`` and ``paid`` add up to 0, and so do ``ready`` and ``rivals``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from test_game_edges import QUIET, deal, t

from pipeline.game.events import Draw
from pipeline.game.evidence import FED, KONG, LUCK, PAID, READY, RIVALS, WIN, Evidence
from pipeline.game.record import parse_record
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import Warehouse
from pipeline.rules import load_ruleset
from pipeline.rules.fan import WinHand, score
from pipeline.rules.tiles import counts_of, parse_tiles
from pipeline.simulate.tables import SimConfig, simulate, write
from pipeline.validate import initial_state

DEALER = "123m456m789m12p9p2s7s"  # less 2s: 123m456m789m 12p 9p 7s, one tile from ready (3p, 9p or 7s)
READY_HAND = "123m456m789m11p23p"  # ready on 1p (every copy dealt) and 4p (three in the wall)
FAR = (QUIET[0], QUIET[1])  # four and three tiles from ready: their draws are none of the terms


def _self_draw_4p() -> float:
    """What one payer pays for seat 1's self-drawn win on 4p, in bases."""
    rules = load_ruleset("chengdu")
    counts = tuple(counts_of(parse_tiles(READY_HAND + "4p")))
    hand = WinHand(counts27=counts, melds=(), win_tile=t("4p"), self_drawn=True)
    return score(hand, rules).per_payer / rules.base


def test_a_ready_seats_draw_is_what_its_win_would_take_less_the_walls_share() -> None:
    evidence = Evidence()
    state = deal(DEALER, READY_HAND, *FAR, observer=evidence)
    assert state.left == 55  # 108 tiles, 53 dealt
    state.discard(0, t("2s"))
    state.draw(1, t("4p"))  # a winning tile: 3 of the 55 in the wall were (no 1p is left)
    v = _self_draw_4p()
    assert v == 2  # chengdu: a plain hand, 1 base, and 1 more for the self-draw (自摸加底)
    luck = evidence.luck
    assert luck is not None
    assert luck[1][WIN] == pytest.approx(3 * v * (1 - 3 / 55))  # three payers
    for seat in (0, 2, 3):
        assert luck[seat][PAID] == pytest.approx(-v * (1 - 3 / 55))  # each one's share
    assert sum(luck[s][WIN] + luck[s][PAID] for s in range(4)) == pytest.approx(0)
    assert [luck[1][k] for k in (READY, RIVALS, KONG, FED)] == [0, 0, 0, 0]


def test_a_one_shanten_draw_and_the_ready_seats_tiles_others_draw() -> None:
    evidence = Evidence()
    state = deal(DEALER, READY_HAND, *FAR, observer=evidence)
    state.discard(0, t("2s"))
    state.draw(1, t("9s"))  # not a winning tile
    state.discard(1, t("9s"))
    state.draw(2, t("5s"))
    state.discard(2, t("5s"))
    state.draw(3, t("3s"))
    state.discard(3, t("3s"))
    state.draw(0, t("9p"))  # 1-shanten: 3p (2 left), 9p (3), 7s (2) make it ready, 7 of the 52 in the wall
    luck = evidence.luck
    assert luck is not None
    v = _self_draw_4p()
    assert luck[1][WIN] == pytest.approx(3 * (0 - 3 * v / 55))
    assert luck[0][PAID] == luck[2][PAID] == luck[3][PAID] == pytest.approx(3 * v / 55)
    assert luck[0][READY] == pytest.approx(1 - 7 / 52)
    for seat in (1, 2, 3):
        assert luck[seat][RIVALS] == pytest.approx(-(1 - 7 / 52) / 3)
    # seat 1 is ready on 4p (three in the wall): seats 2, 3 and 0 drew other tiles
    assert luck[1][FED] == pytest.approx(-3 / 54 - 3 / 53 - 3 / 52)
    assert luck[2][READY] == luck[3][READY] == luck[0][FED] == 0  # far from ready; not ready


def test_the_fourth_tile_of_a_triplet() -> None:
    evidence = Evidence()
    # seat 1 holds 999p concealed; the fourth 9p is in the wall
    deal_ = ("123m456m789m55p8p2s7s", "999p456m789m23s5s9s", *FAR)
    state = deal(*deal_, observer=evidence)
    state.discard(0, t("2s"))
    state.draw(1, t("9p"))
    luck = evidence.luck
    assert luck is not None
    assert luck[1][KONG] == pytest.approx(1 - 1 / 55)


def _records(config: SimConfig) -> list[Any]:
    """The records of a simulated room, parsed."""
    lines, _ = simulate(config)
    return [parse_record(orjson.loads(line)) for line in lines]


@pytest.mark.parametrize("profile", ["chengdu", "app", "sanren_liangfang"])
def test_every_term_has_mean_zero_over_the_tiles_the_wall_held(profile: str) -> None:
    """At every draw, each seat's every term averaged over the wall's tiles (exact enumeration) is 0."""
    checked = 0
    for record in _records(SimConfig(hands=12, seed=11, players=8, profile=profile)):
        state = initial_state(record)
        probe = Evidence()  # one for every tile tried (its caches kept), its sums reset for each
        for event in record.events:
            if isinstance(event, Draw):
                total = [[0.0] * len(LUCK) for _ in range(state.n)]
                wall = 0
                for k in range(27):
                    copies = state.full[k] - state.seen[k]
                    if copies:
                        wall += copies
                        probe.luck = None  # its sums start again (as for a state it did not see start)
                        probe.before_draw(state, event.seat, k, len(state.events))
                        assert probe.luck is not None
                        for s in range(state.n):
                            for i in range(len(LUCK)):
                                total[s][i] += copies * probe.luck[s][i]
                assert wall == state.left
                for s in range(state.n):
                    for i in range(len(LUCK)):
                        assert total[s][i] / wall == pytest.approx(0, abs=1e-9), (LUCK[i], s)
                checked += 1
            state.apply(event)
    assert checked > 200


def test_ingest_stores_each_seats_draw_luck(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    write(SimConfig(hands=40, seed=2, players=8), games)
    ingest([str(games)], tmp_path / "wh", workers=1)
    with Warehouse(tmp_path / "wh").connect() as con:
        names = ", ".join(f"draw_luck_{n}" for n in LUCK)
        rows = con.sql(f"SELECT hand_id, {names} FROM player_hands WHERE replayed ORDER BY hand_id, seat").fetchall()
    assert len(rows) == 160 and all(v is not None for r in rows for v in r[1:])
    by_hand: dict[str, list[tuple[float, ...]]] = {}
    for r in rows:
        by_hand.setdefault(r[0], []).append(r[1:])
    for seats in by_hand.values():
        assert sum(s[WIN] + s[PAID] for s in seats) == pytest.approx(0, abs=1e-9)
        assert sum(s[READY] + s[RIVALS] for s in seats) == pytest.approx(0, abs=1e-9)
    assert any(s[WIN] for seats in by_hand.values() for s in seats)
