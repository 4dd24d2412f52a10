"""Winning-tile anticipation (issue 22 item 3's second signal): decisions judged on hand-built records whose wall
contents are counted by hand, the cheating bot's choice of wait, the screen's null and the two signals combined.
The screen on a simulated room with a planted cheat is in tests/test_information.py (its room)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from anticipation_oracle import oracle_decisions

from pipeline.analytics.queries import connect
from pipeline.audit.anticipation import (
    AnticipationResult,
    Option,
    _Tally,
    combine,
    decisions,
    screen_tally,
    tally,
)
from pipeline.audit.information import InfoResult
from pipeline.game.events import Discard
from pipeline.game.record import parse_record
from pipeline.game.start import start_hand
from pipeline.ingest.run import ingest
from pipeline.rules.ruleset import load_ruleset
from pipeline.rules.tiles import TILE_NAMES, parse_tiles
from pipeline.simulate.bots import Bot
from pipeline.simulate.styles import STYLES, Player
from pipeline.validate import initial_state

# Seat 0 deals itself 123456789m 11p 357p: throwing 3p waits on 6p (11p 57p), throwing 7p waits on 4p (11p 35p); the
# other discards leave it not ready. It sees no 4p and no 6p: 4 unseen of each either way. Seat 1 holds 444p, so
# the wall holds 1 copy of 4p and all 4 of 6p.
DEAL = ["123456789m11p357p", "444p123456789s1m", "123456789s22m88p", "123456789s99p33m"]
QUE = ["s", "m", "p", "p"]


def _record(deal: list[str], events: list[dict[str, Any]], *, dealer: int = 0, que: list[str] = QUE) -> Any:
    return parse_record(_obj(deal, events, dealer=dealer, que=que))


def _obj(
    deal: list[str], events: list[dict[str, Any]], *, dealer: int = 0, que: list[str] = QUE, hand_id: str = "a1"
) -> dict[str, Any]:
    return dict(
        {
            "format": "xzlog/1",
            "hand_id": hand_id,
            "ruleset": "chengdu",
            "players": ["a", "b", "c", "d"],
            "dealer": dealer,
            "deal": [_names(h) for h in deal],
            "que": que,
            "events": events,
        }
    )


def _names(hand: str) -> list[str]:
    return [TILE_NAMES[k] for k in parse_tiles(hand)]


def test_a_wait_on_the_tiles_the_wall_holds_is_a_hit() -> None:
    record = _record(DEAL, [{"t": "discard", "seat": 0, "tile": "3p"}])
    assert record.level == "dealt"
    (d,) = decisions(record)
    assert (d.event, d.seat) == (0, 0)
    assert d.chosen == Option("3p", ("6p",), unseen=4, wall=4)
    assert set(d.options) == {Option("3p", ("6p",), 4, 4), Option("7p", ("4p",), 4, 1)}
    assert d.hit and d.margin == 3
    assert (
        d.text()
        == "event 0: threw 3p: waits 6p, 4 unseen, 4 in the wall (instead: 7p: waits 4p, 4 unseen, 1 in the wall)"
    )


def test_a_wait_on_tiles_an_opponent_holds_is_a_miss() -> None:
    (d,) = decisions(_record(DEAL, [{"t": "discard", "seat": 0, "tile": "7p"}]))
    assert d.chosen == Option("7p", ("4p",), 4, 1) and not d.hit and d.margin == -3


def test_a_discard_that_leaves_the_hand_not_ready_is_not_judged() -> None:
    assert decisions(_record(DEAL, [{"t": "discard", "seat": 0, "tile": "5p"}])) == []


def test_waits_with_as_many_copies_in_the_wall_are_not_judged() -> None:
    # seat 1 holds 555m instead of its three 4p: both waits have all 4 copies in the wall. (This deal held six 9s
    # before, so the hand never started and the test passed without judging anything: the start is checked now.)
    deal = [DEAL[0], "555m123456789s1m", DEAL[2], DEAL[3]]
    record = _record(deal, [{"t": "discard", "seat": 0, "tile": "3p"}])
    state = initial_state(record)
    assert state.counts[0][parse_tiles("3p")[0]] == 1  # the hand starts, seat 0 holding the discard
    assert decisions(record) == []
    assert len(decisions(_record(DEAL, [{"t": "discard", "seat": 0, "tile": "3p"}]))) == 1  # with 444p: judged


# Seat 1 deals, holding one 4p; seat 0 draws its 7p on its first turn.
SEEN = ["123456789m11p35p", "4p123456789s1234m", "123456789s22m88p", "123456789s99p33m"]


def _seen_events(first: str) -> list[dict[str, Any]]:
    return [
        {"t": "discard", "seat": 1, "tile": first},
        {"t": "draw", "seat": 2, "tile": "1s"},
        {"t": "discard", "seat": 2, "tile": "8p"},
        {"t": "draw", "seat": 3, "tile": "2s"},
        {"t": "discard", "seat": 3, "tile": "9p"},
        {"t": "draw", "seat": 0, "tile": "7p"},
        {"t": "discard", "seat": 0, "tile": "3p"},
    ]


def test_waits_the_player_sees_differently_are_not_judged() -> None:
    """Seat 1 throws its 4p first: seat 0 then sees one, 3 unseen 4p against 4 unseen 6p, so what it sees could
    prefer the 6p wait; the decision is not judged. When seat 1 throws a 3m instead and keeps its 4p, seat 0 sees
    4 and 4: judged, 3 copies of 4p in the wall against 4 of 6p."""
    record = _record(SEEN, _seen_events("4p"), dealer=1, que=["s", "p", "p", "p"])
    assert decisions(record) == []
    record = _record(SEEN, _seen_events("3m"), dealer=1, que=["s", "m", "p", "p"])
    (d,) = decisions(record)
    assert (d.event, d.seat) == (6, 0)
    assert d.chosen == Option("3p", ("6p",), 4, 4) and Option("7p", ("4p",), 4, 3) in d.options and d.hit
    assert decisions(record, seat=1) == [] and decisions(record, seat=0) == [d]


SETTLEMENT = {
    "format": "xzlog/1",
    "hand_id": "w1",
    "level": "settlement",
    "ruleset": "chengdu",
    "players": ["a", "b", "c", "d"],
    "dealer": 0,
    "events": [{"t": "hu", "seat": 1, "from": 2}],
    "end": [{"seat": 0, "state": "not_ready"}, {"seat": 2, "state": "not_ready"}, {"seat": 3, "state": "not_ready"}],
    "result": {
        "payments": [{"from": 2, "to": 1, "amount": 4, "reason": "hu", "event": 0}],
        "deltas": [0, 4, -4, 0],
        "wins": [{"seat": 1, "event": 0, "patterns": ["qing_yi_se"], "fan": 3, "points": 4}],
    },
}


def test_a_record_without_every_hand_is_not_judged() -> None:
    record = parse_record(SETTLEMENT)
    assert record.level == "settlement" and decisions(record) == []


def test_the_tally_counts_hands_decisions_and_hits_per_player(tmp_path: Path) -> None:
    """Ingest judges the waits and stores them (wait_choices); the tally counts them per player: hands of levels
    full and dealt (the settlement record's are not), decisions, hits, and the widest hits (hand, then event, on
    equal margins)."""
    hit = [{"t": "discard", "seat": 0, "tile": "3p"}]
    miss = [{"t": "discard", "seat": 0, "tile": "7p"}]
    lines = [_obj(DEAL, hit, hand_id="h2"), _obj(DEAL, miss, hand_id="h1"), _obj(DEAL, hit, hand_id="h0")]
    lines.append({**SETTLEMENT, "players": ["a", "b", "c", "e"]})
    source = tmp_path / "hands.jsonl"
    source.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    ingest([str(source)], tmp_path / "wh", workers=1)
    with connect(tmp_path / "wh") as con:
        t = tally(con)
        judged = con.execute("SELECT hand_id, waits_judged FROM hands ORDER BY hand_id").fetchall()
    assert judged == [("h0", True), ("h1", True), ("h2", True), ("w1", False)]
    assert sorted(t) == ["a", "b", "c", "d"]  # e played only the settlement record
    assert (t["a"].hands, t["a"].decisions, t["a"].hits) == (3, 3, 2)
    assert (t["b"].hands, t["b"].decisions, t["b"].hits) == (3, 0, 0)
    assert [(h, d.margin) for h, d in t["a"].best] == [("h0", 3), ("h2", 3)]
    assert t["a"].best[0][1] == decisions(_record(DEAL, hit))[0]
    assert [(h, d.margin) for h, d in tally(connect(tmp_path / "wh"), keep=1)["a"].best] == [("h0", 3)]


# ---------------------------------------------------------------------------------------------- the bot
def _state(deal: list[str]) -> Any:
    rules = load_ruleset("chengdu")
    return start_hand(rules, dealer=0, deal=[parse_tiles(h) for h in deal], que=[2, 0, 1, 1])


@pytest.mark.parametrize(("holder", "expected"), [("444p123456789s1m", "3p"), ("666p123456789s1m", "7p")])
def test_the_cheating_bot_waits_on_the_tiles_the_wall_holds(holder: str, expected: str) -> None:
    player = Player("x", STYLES["balanced"], 0.99)
    for seed in range(8):
        st = _state([DEAL[0], holder, DEAL[2], DEAL[3]])
        bot = Bot(player, 0, random.Random(seed), sees_all=True)
        bot.void = 2
        choice = bot.on_turn(st)
        assert isinstance(choice, Discard) and choice.tile == parse_tiles(expected)[0]


def test_an_honest_bot_cannot_tell_the_two_waits_apart() -> None:
    """The same choice for an honest bot: 4 unseen copies each way, so it picks either, whichever wall it plays."""
    player = Player("x", STYLES["balanced"], 0.99)
    chosen = set()
    for seed in range(40):
        st = _state(DEAL)
        bot = Bot(player, 0, random.Random(seed))
        bot.void = 2
        choice = bot.on_turn(st)
        assert isinstance(choice, Discard)
        chosen.add(choice.tile)
    assert chosen == set(parse_tiles("3p7p"))


# ---------------------------------------------------------------------------------------------- the null
def _tallies(n: np.ndarray, k: np.ndarray) -> dict[str, _Tally]:
    return {f"p{i}": _Tally(hands=int(n[i]) * 10, decisions=int(n[i]), hits=int(k[i])) for i in range(len(n))}


def test_a_player_who_always_waits_on_the_wall_stands_out_and_nobody_else() -> None:
    rng = np.random.default_rng(5)
    for _ in range(5):
        n = rng.integers(60, 110, size=8)
        k = rng.binomial(n, rng.beta(50, 50, size=8))
        k[3] = n[3]
        results = screen_tally(_tallies(n, k))
        assert [r.player for r in results if r.flagged] == ["p3"]
        assert results[0].expected is not None and results[0].expected < 0.7 * n[3]


def test_honest_rooms_are_not_flagged_more_often_than_the_level_says() -> None:
    """Rooms of 8 whose hit rates spread around a half: the upper-tail p-values are not too small (their null
    share under 0.01 and 0.05 at most the level, with a margin for 400 p-values)."""
    rng = np.random.default_rng(9)
    p = []
    for _ in range(50):
        n = rng.integers(30, 120, size=8)
        k = rng.binomial(n, rng.beta(30, 30, size=8))
        p += [r.p for r in screen_tally(_tallies(n, k)) if r.p is not None]
    arr = np.array(p)
    assert len(arr) == 400
    assert (arr < 0.01).mean() <= 0.02 and (arr < 0.05).mean() <= 0.07


def test_players_with_few_decisions_are_listed_not_tested() -> None:
    results = screen_tally(_tallies(np.array([40, 40, 40, 10]), np.array([20, 22, 18, 10])))
    assert [(r.player, r.p is None) for r in results] == [("p1", False), ("p0", False), ("p2", False), ("p3", True)]
    assert all(not r.flagged for r in results)
    few = screen_tally(_tallies(np.array([40, 40, 10]), np.array([20, 22, 10])))
    assert all(r.p is None for r in few)  # fewer than 3 tested: no null


# ---------------------------------------------------------------------------------------------- both signals
def _info(player: str, p: float | None) -> InfoResult:
    return InfoResult(player, 100, 1000, 10, 50.0, p)


def _waits(player: str, p: float | None) -> AnticipationResult:
    return AnticipationResult(player, 100, 80, 60, 40.0, p)


def test_the_signals_are_combined_by_by_over_both_families() -> None:
    """Six players, 12 tests: BY's constant is 1 + 1/2 + ... + 1/12 = 3.103. x's anticipation p 1e-4 gives q
    1e-4 x 12 x 3.103 = 0.0037; y's dodges p 0.003 (second smallest) gives 0.003 x 12 / 2 x 3.103 = 0.056: over
    0.05, though it would pass BY over the dodges alone (6 tests: 0.003 x 6 x 2.45 = 0.044)."""
    players = ["x", "y", "z", "u", "v", "w"]
    dodge_p = {"x": 0.5, "y": 0.003, "z": 0.6, "u": 0.7, "v": 0.8, "w": 0.9}
    wait_p = {"x": 1e-4, "y": 0.4, "z": 0.5, "u": 0.6, "v": 0.7, "w": 0.95}
    seers = combine([_info(p, dodge_p[p]) for p in players], [_waits(p, wait_p[p]) for p in players])
    assert [(s.player, s.signals) for s in seers if s.flagged] == [("x", ("anticipation",))]
    x, y = seers[0], next(s for s in seers if s.player == "y")
    assert x.q_anticipation == pytest.approx(1e-4 * 12 * sum(1 / i for i in range(1, 13)))
    assert y.q_dodges == pytest.approx(0.003 * 6 * sum(1 / i for i in range(1, 13)))
    assert y.q_dodges is not None and y.q_dodges > 0.05
    d = x.as_dict()
    assert d["flagged"] and d["signals"] == ["anticipation"] and d["p"] == 0.5 and d["q"] == x.q_dodges
    assert d["anticipation"]["q"] == x.q_anticipation and d["anticipation"]["hits"] == 60


def test_a_player_flagged_on_both_signals_comes_first() -> None:
    seers = combine([_info("a", 1e-9), _info("b", 1e-8), _info("c", 0.5)], [_waits("b", 1e-7), _waits("c", 0.4)])
    assert [(s.player, s.signals) for s in seers] == [("b", ("dodges", "anticipation")), ("a", ("dodges",)), ("c", ())]
    assert seers[1].anticipation is None and seers[1].q_anticipation is None
    assert combine([], []) == []


# 换三张 (profile app): seat 0 is dealt 449p among its tiles and gives them to seat 1 (counter-clockwise), taking
# 789m from seat 3; it then holds 123456789m11p357p as above. It knows two 4p sit in seat 1's hand: 2 unseen 4p
# against 4 unseen 6p, so its view prefers the 6p wait and the decision is not judged. Without the exchange the
# same hand is judged (test_a_wait_on_the_tiles_the_wall_holds_is_a_hit).
EXCHANGE_DEAL = ["123456m11p357p449p", "123456789s1222m", "123456789s3335m", "123456789s6789m"]
EXCHANGE_GIVEN = [["4p", "4p", "9p"], ["2m", "2m", "2m"], ["3m", "3m", "3m"], ["7m", "8m", "9m"]]


def _exchange_record(given: list[list[str]]) -> Any:
    return parse_record(
        {
            "format": "xzlog/1",
            "hand_id": "x1",
            "ruleset": "app",
            "players": ["a", "b", "c", "d"],
            "dealer": 0,
            "deal": [_names(h) for h in EXCHANGE_DEAL],
            "exchange": {"direction": "ccw", "given": given},
            "que": ["s", "m", "p", "p"],
            "events": [{"t": "discard", "seat": 0, "tile": "3p"}],
        }
    )


def test_tiles_given_at_the_exchange_are_seen_by_the_giver() -> None:
    record = _exchange_record(EXCHANGE_GIVEN)
    assert record.level == "dealt" and decisions(record) == []


@pytest.mark.parametrize(
    "record",
    [
        _record(DEAL, [{"t": "discard", "seat": 0, "tile": "3p"}]),
        _record(DEAL, [{"t": "discard", "seat": 0, "tile": "7p"}]),
        _record(SEEN, _seen_events("4p"), dealer=1, que=["s", "p", "p", "p"]),
        _record(SEEN, _seen_events("3m"), dealer=1, que=["s", "m", "p", "p"]),
        _exchange_record(EXCHANGE_GIVEN),
    ],
)
def test_the_engine_judges_as_the_replay_did(record: Any) -> None:
    """The engine's judging (pipeline/game/evidence.py ``judge_waits``, what ingest stores) gives the decisions the
    screen's replay gave (tests/anticipation_oracle.py)."""
    assert decisions(record) == oracle_decisions(record)
