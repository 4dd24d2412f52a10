"""Edges of the hand state machine (``pipeline.game.start`` and ``pipeline.game.state``) that whole records
reach rarely or never: the public action methods called one by one, the refusals each ``verify_*`` makes
(with the exact code, seat and expected/actual the validator reports), the options offered to a bot outside
its turn, 天胡 among the turn options, a rob-window win written without its flag, and the collusion screen's
"safe alternative" evidence.

Hands are written in tile notation, by seat; the states start from a deal without a wall (docs/RULES.md §1: the
draws are then checked only against a fifth copy), so that each scenario draws exactly the tiles it needs.
"""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.game.events import Discard, Draw, Hu, Kong, Pong
from pipeline.game.evidence import Evidence
from pipeline.game.start import start_hand
from pipeline.game.state import HandState, IllegalAction
from pipeline.rules.hand import Meld
from pipeline.rules.ruleset import RuleSet, load_ruleset
from pipeline.rules.settle import Payment
from pipeline.rules.tiles import kind_of, parse_tiles

CHENGDU = load_ruleset("chengdu")

# Three hands of seats 1-3 that wait on nothing (win_tiles empty) and hold no pair of the dealer's discards
# used below; with the dealer's hands of each test the deal never holds a fifth copy.
QUIET = ("1357m1357p2468s9s", "2468m2468p13789s", "9m9m5m3p5p7p9p6p4p2p1p7s6s")


def t(name: str) -> int:
    return kind_of(name)


def deal(*hands: str, dealer: int = 0, rules: RuleSet = CHENGDU, **options: Any) -> HandState:
    """A hand started from ``hands`` (tile notation, seat 0 first; the dealer's has 14 tiles)."""
    return start_hand(rules, dealer=dealer, deal=[parse_tiles(h) for h in hands], **options)


def refusal(verify: Any, *args: Any) -> IllegalAction:
    with pytest.raises(IllegalAction) as info:
        verify(*args)
    return info.value


# ---------------------------------------------------------------------------------------------- start
def test_a_hand_starts_from_a_wall_or_a_deal_and_nothing_else() -> None:
    with pytest.raises(ValueError, match="a hand starts from a wall or a deal"):
        start_hand(CHENGDU, dealer=0)


def test_a_hand_state_has_exactly_four_hands() -> None:
    hands = [parse_tiles("123m456m789m123p55s"), parse_tiles("1357m1357p2468s"), parse_tiles("2468m2468p1357s")]
    with pytest.raises(ValueError, match="hands, one per seat, not 3"):
        HandState(CHENGDU, dealer=0, hands=hands)


# ---------------------------------------------------------------------------------------------- seats
@pytest.mark.parametrize("seat", [4, -1, 7])
def test_a_seat_outside_0_to_3_is_a_malformed_event(seat: int) -> None:
    state = deal("123m456m789m123p55s", *QUIET)
    for verify, args in (
        (state.verify_discard, (seat, t("5s"))),
        (state.verify_draw, (seat, t("5s"))),
        (state.verify_kong, (seat, t("5s"), "concealed")),
        (state.verify_hu, (seat, t("5s"), None)),
    ):
        exc = refusal(verify, *args)
        assert (exc.code, str(exc), exc.seat) == ("SCHEMA_EVENT", f"no seat {seat}", seat)
    assert not state.can_discard(seat, t("5s"))


# ---------------------------------------------------------------------------------------------- draw / discard
def test_draw_and_discard_by_method_move_the_turn_as_the_rules_say() -> None:
    state = deal("123m456m789m123p55s", *QUIET)
    assert state.discard(0, t("5s")) == Discard(0, t("5s"))
    assert (state.phase, state.index, state.window is not None) == ("claim", 1, True)
    # "If nobody claims the tile, the next player still in draws" (docs/RULES.md §1)
    assert state.can_draw(1, t("9m"))
    assert not state.can_draw(2, t("9m"))
    exc = refusal(state.verify_draw, 2, t("9m"))
    assert (exc.code, exc.seat, exc.expected, exc.actual) == ("TURN_ORDER", 2, 1, 2)
    left = state.left
    assert state.draw(1, t("9m")) == Draw(1, t("9m"))
    assert (state.phase, state.turn, state.left, state.window) == ("discard", 1, left - 1, None)
    assert state.counts[1][t("9m")] == 1
    # without a wall the draws are checked against the copies in play: 1m is dealt twice (seats 0 and 1)
    state.discard(1, t("9m"))
    state.draw(2, t("1m"))
    state.discard(2, t("1m"))
    state.draw(3, t("1m"))
    state.discard(3, t("1m"))
    assert state.seen[t("1m")] == 4
    assert not state.can_draw(0, t("1m"))
    exc = refusal(state.verify_draw, 0, t("1m"))
    assert (exc.code, exc.seat, str(exc)) == ("TILE_FIFTH_COPY", 0, "seat 0 draws a fifth 1m")
    assert state.can_draw(0, t("2m"))


# ---------------------------------------------------------------------------------------------- pong
def test_a_pong_must_name_the_discarder() -> None:
    state = deal("123m456m789m123p55s", "55s1357m1357p249s", *QUIET[1:])
    state.discard(0, t("5s"))
    exc = refusal(state.verify_pong, 1, t("5s"), 3)
    assert exc.code == "CLAIM_NOT_ALLOWED"
    assert (exc.seat, exc.expected, exc.actual) == (1, 0, 3)
    assert "pong names seat 3 as the source, the discard was seat 0's" in str(exc)
    assert not state.can_pong(1, t("5s"), 3)
    assert state.can_pong(1, t("5s"), 0)


def test_a_pong_must_name_the_discarded_tile() -> None:
    # seat 1 holds a pair of 5s and one of 1m: a pong of 1m on the dealer's 5s is refused, naming both tiles
    state = deal("123m456m789m123p55s", "55s1357m1357p249s", *QUIET[1:])
    state.discard(0, t("5s"))
    exc = refusal(state.verify_pong, 1, t("1m"), 0)
    assert (exc.code, exc.seat, exc.expected, exc.actual) == ("CLAIM_NOT_ALLOWED", 1, "5s", "1m")
    assert "seat 1 calls pong on 1m, the discard is 5s" in str(exc)
    assert not state.can_pong(1, t("1m"), 0)


def test_pong_by_method_takes_the_discard_and_the_caller_discards_without_drawing() -> None:
    state = deal("123m456m789m123p55s", "55s1357m1357p249s", *QUIET[1:])
    state.discard(0, t("5s"))
    assert state.pong(1, t("5s"), 0) == Pong(1, t("5s"), 0)
    assert state.melds[1] == [Meld("pong", t("5s"), 0)]
    assert state.counts[1][t("5s")] == 0 and state.rivers[0] == []  # the discard left the river for the meld
    assert (state.phase, state.turn, state.window) == ("discard", 1, None)
    # "After a pong, the caller discards without drawing" (docs/RULES.md §1): a draw now is 大相公
    assert refusal(state.verify_draw, 1, t("9m")).code == "TILE_COUNT_LONG"
    assert state.can_discard(1, t("2s"))


def test_a_self_drawn_win_after_a_pong_has_no_drawn_tile() -> None:
    """The pong's caller holds a full hand but drew nothing this turn: a 自摸 needs the tile just drawn."""
    state = deal("123m456m789m123p55s", "55s123m456m789m11p", *QUIET[1:])
    state.discard(0, t("5s"))
    state.pong(1, t("5s"), 0)
    for tile in ("1p", "5s", "9m"):
        exc = refusal(state.verify_hu, 1, t(tile), None)
        assert (exc.code, exc.seat) == ("WIN_WRONG_TILE", 1)
        assert str(exc) == "seat 1 claims a self-drawn win without having drawn"
    assert not state.can_hu(1, t("1p"), None)


# ---------------------------------------------------------------------------------------------- kong
def test_a_direct_kong_must_name_the_discarder() -> None:
    state = deal("123m456m789m1234p5s", "555s1357m1357p26s", *QUIET[1:])
    state.discard(0, t("5s"))
    exc = refusal(state.verify_kong, 1, t("5s"), "direct", 2)
    assert (exc.code, exc.seat, exc.expected, exc.actual) == ("CLAIM_NOT_ALLOWED", 1, 0, 2)
    assert "direct kong names seat 2, the discard was seat 0's" in str(exc)
    assert not state.can_kong(1, t("5s"), "direct", None)
    assert state.can_kong(1, t("5s"), "direct", 0)


def test_kong_by_method_direct_then_the_replacement_draw() -> None:
    state = deal("123m456m789m1234p5s", "555s1357m1357p26s", *QUIET[1:])
    state.discard(0, t("5s"))
    assert state.kong(1, t("5s"), "direct", 0) == Kong(1, t("5s"), "direct", 0)
    assert state.melds[1] == [Meld("direct", t("5s"), 0)]
    assert (state.phase, state.turn) == ("draw", 1)  # "After a kong, they draw a replacement tile"
    assert state.ledger.payments == [Payment(0, 1, 2, "kong", 1)]  # direct_kong_pays = 2, by the discarder
    assert refusal(state.verify_discard, 1, t("2s")).code == "TILE_COUNT_SHORT"  # 小相公: no replacement drawn


def test_kong_by_method_a_concealed_kong_names_no_source() -> None:
    state = deal("5555s123m456m789m1p", *QUIET)
    event = state.kong(0, t("5s"), "concealed", 3)  # a source given for a concealed kong is not recorded
    assert event == Kong(0, t("5s"), "concealed") and event.source is None
    assert state.melds[0] == [Meld("concealed", t("5s"))]
    # concealed_kong_pays = 2 from every other player still in
    assert len(state.ledger.payments) == 3
    assert set(state.ledger.payments) == {Payment(s, 0, 2, "kong", 0) for s in (1, 2, 3)}


def test_an_added_kong_needs_a_pong_of_that_tile() -> None:
    state = deal("123m456m789m123p55s", *QUIET)
    exc = refusal(state.verify_kong, 0, t("5s"), "added")
    assert (exc.code, exc.seat) == ("CLAIM_NOT_ALLOWED", 0)
    assert str(exc) == "seat 0 adds to a pong of 5s it does not have"
    assert not state.can_kong(0, t("5s"), "added")


@pytest.mark.parametrize("kind", ["concealed", "added"])
def test_a_kong_of_ones_own_is_declared_on_ones_own_turn(kind: str) -> None:
    # seat 1 holds four 5s but the dealer is to discard; then, in the claim window, nobody's turn has begun
    state = deal("123m456m789m1234p5p", "5555s123m456m789m", *QUIET[1:])
    exc = refusal(state.verify_kong, 1, t("5s"), kind)
    assert (exc.code, exc.seat, exc.expected, exc.actual) == ("TURN_ORDER", 1, 0, 1)
    assert str(exc) == f"seat 1 declares a {kind} kong out of turn"
    state.discard(0, t("5p"))
    assert refusal(state.verify_kong, 1, t("5s"), kind).code == "TURN_ORDER"
    assert not state.can_kong(1, t("5s"), kind)
    state.draw(1, t("8p"))
    assert state.can_kong(1, t("5s"), "concealed")


@pytest.mark.parametrize("kind", ["hidden", "", "DIRECT"])
def test_an_unknown_kong_kind_is_a_malformed_event(kind: str) -> None:
    state = deal("5555s123m456m789m1p", *QUIET)
    exc = refusal(state.verify_kong, 0, t("5s"), kind)
    assert (exc.code, exc.seat, str(exc)) == ("SCHEMA_EVENT", 0, f"unknown kong kind {kind!r}")


# ---------------------------------------------------------------------------------------------- hu
def test_a_win_on_a_discard_needs_an_open_discard() -> None:
    # seat 1 is ready on 1p/4p (123m456m789m23p99p), but the dealer has not discarded yet
    state = deal("123m456m789m123p55s", "123m456m789m23p99p", *QUIET[1:])
    exc = refusal(state.verify_hu, 1, t("1p"), 0)
    assert (exc.code, exc.seat) == ("WIN_WRONG_TILE", 1)
    assert str(exc) == "seat 1 wins on a discard, but no discard is open"
    # nor once the window has closed and the next seat is to draw
    state.discard(0, t("5s"))
    state.draw(1, t("6p"))
    state.discard(1, t("6p"))
    state.draw(2, t("9s"))
    assert (state.phase, state.turn) == ("discard", 2)
    exc = refusal(state.verify_hu, 1, t("6p"), 1)
    assert (exc.code, str(exc)) == ("WIN_WRONG_TILE", "seat 1 wins on a discard, but no discard is open")


def test_a_self_drawn_win_cannot_rob_a_kong() -> None:
    state = deal("123m456m789m11s234s", *QUIET)  # the dealer's dealt hand wins: 天胡 is possible
    assert state.can_hu(0, t("1m"), None)
    exc = refusal(state.verify_hu, 0, t("1m"), None, True)
    assert (exc.code, exc.seat, str(exc)) == ("SCHEMA_EVENT", 0, "seat 0: a self-drawn win cannot rob a kong")
    assert not state.can_hu(0, t("1m"), None, True)


def test_a_self_drawn_win_is_declared_on_ones_own_turn() -> None:
    # seat 1 is ready (on 1s or 2s), but it is the dealer's turn, then a claim window on the dealer's 5p
    state = deal("123m456m789m1234p5p", "123m456m789m11s22s", *QUIET[1:])
    for _ in range(2):
        exc = refusal(state.verify_hu, 1, t("2s"), None)
        assert (exc.code, exc.seat, str(exc)) == ("TURN_ORDER", 1, "seat 1 claims a self-drawn win out of turn")
        if state.phase == "discard":
            state.discard(0, t("5p"))
    # the discarder cannot turn its own window into a self-draw either
    assert refusal(state.verify_hu, 0, t("5p"), None).code == "TURN_ORDER"


def test_a_heavenly_win_names_a_tile_of_the_dealt_hand() -> None:
    state = deal("123m456m789m11s234s", *QUIET)
    exc = refusal(state.verify_hu, 0, t("5p"), None)
    assert (exc.code, exc.seat) == ("WIN_WRONG_TILE", 0)
    assert str(exc) == "seat 0 wins on 5p, which it does not hold"
    assert all(state.can_hu(0, k, None) for k in parse_tiles("123m456m789m11s234s"))


def test_heavenly_win_is_among_the_dealers_first_turn_options() -> None:
    """天胡 (docs/RULES.md §3): the dealer's dealt hand wins; the options offer it on a tile of that hand."""
    state = deal("123m456m789m11s234s", *QUIET)
    options = state.turn_options(0)
    wins = [o for o in options if isinstance(o, Hu)]
    assert wins == [Hu(0, t("1m"), None)]  # the first held tile the win can be declared on
    assert Discard(0, t("1m")) in options  # a discard stays possible
    state.apply(wins[0])
    assert state.won[0] and state.wins[0].how == "self_draw"
    assert (state.phase, state.turn) == ("draw", 1)
    # a dealt hand that does not win offers no 天胡
    other = deal("123m456m789m11s249s", *QUIET)
    assert not [o for o in other.turn_options(0) if isinstance(o, Hu)]


def test_hu_by_method_a_self_drawn_win_takes_the_winner_out() -> None:
    state = deal("123m456m789m123p55s", "123m456m789m23p99p", *QUIET[1:])
    state.discard(0, t("5s"))
    state.draw(1, t("4p"))
    assert state.hu(1, t("4p"), None) == Hu(1, t("4p"), None)
    assert state.won == [False, True, False, False]
    assert (state.phase, state.turn) == ("draw", 2)  # the next player still in after the winner draws
    assert state.wins[0].how == "self_draw" and state.wins[0].order == 1
    exc = refusal(state.verify_draw, 1, t("9s"))
    assert (exc.code, exc.seat) == ("TURN_WON", 1)


def _to_the_added_kong(rules: RuleSet = CHENGDU) -> HandState:
    """Seat 1 pongs the dealer's 5s; seat 2 gets ready on 5s; seat 1 draws the last 5s and adds it."""
    state = deal(
        "5s2468m2468p13s79s9p",
        "55s1357m1357p238s",
        "123m456m789m4s11s9p",  # after drawing 6s and shedding 9p: 123m456m789m46s11s, waiting on 5s
        "9m9m5m3p5p7p9p6p4p2p1p7s6s",
        rules=rules,
    )
    for event in (
        Discard(0, t("5s")),
        Pong(1, t("5s"), 0),
        Discard(1, t("8s")),
        Draw(2, t("6s")),
        Discard(2, t("9p")),
        Draw(3, t("8m")),
        Discard(3, t("8m")),
        Draw(0, t("8m")),
        Discard(0, t("8m")),
        Draw(1, t("5s")),
        Kong(1, t("5s"), "added"),
    ):
        state.apply(event)
    assert state.phase == "rob" and state.claim_options(2) == [Hu(2, t("5s"), 1, rob_kong=True)]
    return state


@pytest.mark.parametrize("flagged", [False, True])
def test_a_win_in_the_rob_window_robs_the_kong_flagged_or_not(flagged: bool) -> None:
    """抢杠 (docs/RULES.md §1): a win on the added tile robs the kong whether or not the record flags it; the kong
    player pays as a discarder, the kong is paid nothing and the pong stays a pong."""
    state = _to_the_added_kong()
    event = state.hu(2, t("5s"), 1, rob_kong=flagged)
    assert event == Hu(2, t("5s"), 1, rob_kong=True)
    assert state.events[-1] == event
    win = state.wins[-1]
    assert (win.seat, win.how, win.source, win.event) == (2, "rob_kong", 1, 11)
    assert "qiang_gang" in {p.id for p in win.score.patterns}
    state.draw(3, t("1m"))  # the window closes: play goes on after the winner
    assert state.melds[1] == [Meld("pong", t("5s"), 0)]
    assert state.ledger.payments == [Payment(1, 2, win.score.points, "hu", 11)]


def test_tile_conservation_counts_the_added_tile_while_the_kong_can_be_robbed() -> None:
    """docs/RULES.md §8: the tiles in hands, melds, rivers, taken by winners and in the wall are always all 108.
    In the rob window the added tile is in none of them (it is on its way to the meld or to a robber)."""
    state = _to_the_added_kong()
    assert sum(state.counts[1]) + sum(m.size for m in state.melds[1]) == 13  # 10 held, the pong; the 5s in flight
    state.check_invariants()
    state.counts[3][t("9m")] = state.counts[3][t("9m")] + 1  # a tile from nowhere
    with pytest.raises(AssertionError, match=r"tiles: 58 in play \+ 51 in the wall"):
        state.check_invariants()
    state.counts[3][t("9m")] = state.counts[3][t("9m")] - 1
    state.hu(2, t("5s"), 1)
    state.check_invariants()  # the robbed tile went with the winner
    state.draw(3, t("1m"))
    state.check_invariants()


def test_the_invariants_catch_a_hand_whose_kept_codes_or_size_went_stale() -> None:
    """check_invariants recomputes each seat's suit codes and hand size from its counts (in the walk that counts the
    tiles) and names the first seat whose kept ones differ, codes before size."""
    state = _to_the_added_kong()
    state.check_invariants()
    h2, h3 = state._hands[2], state._hands[3]
    h3.p = h3.p + 1
    with pytest.raises(AssertionError, match=r"^seat 3: codes$"):
        state.check_invariants()
    h2.size = h2.size + 1
    with pytest.raises(AssertionError, match=r"^seat 2: hand size$"):
        state.check_invariants()
    h3.p, h2.size = h3.p - 1, h2.size - 1
    h3.size = h3.size - 1
    with pytest.raises(AssertionError, match=r"^seat 3: hand size$"):
        state.check_invariants()
    h3.size = h3.size + 1
    state.check_invariants()


def test_the_invariants_count_kind_by_kind_when_the_sums_cannot_tell() -> None:
    """check_invariants first adds the tiles up as suit codes (three bits a rank) and counts them; with no count below
    zero, the full set's codes and size mean four of each. Counts of +8, -1, -8 and +1 over four ranks keep a hand's
    codes, its size and those sums, so a count below zero sends the check to the count kind by kind, which finds
    them."""
    from pipeline.rules.tiles import full_set

    state = start_hand(load_ruleset("chengdu"), dealer=0, wall=full_set(), que=(0, 1, 2, 0))  # a wall: the sums
    state.check_invariants()
    counts = state.counts[3]
    for rank, change in enumerate((8, -1, -8, 1)):
        counts[rank] = counts[rank] + change  # 1m-4m
    assert any(n < 0 for n in counts)
    with pytest.raises(AssertionError, match=r"a fifth copy|not the full set"):
        state.check_invariants()
    for rank, change in enumerate((8, -1, -8, 1)):
        counts[rank] = counts[rank] - change
    state.check_invariants()
    assert state.wall is not None
    kept = state.wall[-1]
    state.wall[-1] = (kept + 1) % 27  # a wall tile changed: the hands hold no fifth copy, the wall makes one
    with pytest.raises(AssertionError, match="not the full set"):
        state.check_invariants()
    state.wall[-1] = kept
    state.check_invariants()


# ---------------------------------------------------------------------------------------------- options
def test_turn_options_are_empty_outside_the_seats_turn() -> None:
    state = deal("123m456m789m123p55s", "55s1357m1357p249s", *QUIET[1:])
    assert state.turn_options(1) == [] and state.turn_options(3) == []  # the dealer is to discard
    assert state.turn_options(0)
    state.discard(0, t("5s"))
    assert [state.turn_options(s) for s in range(4)] == [[], [], [], []]  # claim window: nobody's turn
    state.draw(1, t("9s"))
    assert state.turn_options(0) == [] and state.turn_options(1)


def test_next_draw_is_none_while_a_seat_must_act_on_its_full_hand() -> None:
    wall = list(range(27)) * 4
    state = start_hand(CHENGDU, dealer=0, wall=wall)
    assert state.phase == "discard" and state.next_draw() is None  # the dealer discards first: no draw comes
    first = state.turn_options(0)[0]
    assert isinstance(first, Discard)
    state.apply(first)
    assert state.next_draw() == Draw(1, wall[53])  # nobody claims: seat 1 draws the wall's next tile


# ---------------------------------------------------------------------------------------------- 相公 at a win
@pytest.mark.parametrize(
    ("hand", "code", "actual"),
    [
        ("123m456m789m11s5p", "TILE_COUNT_SHORT", 13),  # 12 tiles held: with the discard, 13 of 14
        ("123m456m789m11s55p5s", "TILE_COUNT_LONG", 15),  # 14 tiles held: with the discard, 15 of 14
    ],
)
def test_a_win_with_the_wrong_tile_count_is_xiang_gong(hand: str, code: str, actual: int) -> None:
    """docs/RULES.md §2: "A winning hand has exactly 14 − 3 × melds concealed tiles, counting the winning tile. A
    wrong count is 相公". A deal checked by start_hand never gets there (it refuses a wrong count up front), so
    the count is given to HandState directly."""
    hands = [parse_tiles(h) for h in ("123m456m789m12p5p55s", hand, *QUIET[1:])]
    state = HandState(CHENGDU, dealer=0, hands=hands)
    state.discard(0, t("5p"))
    exc = refusal(state.verify_hu, 1, t("5p"), 0)
    assert (exc.code, exc.seat, exc.expected, exc.actual) == (code, 1, 14, actual)
    assert f"相公: seat 1 holds {actual} tiles at its win, a win needs 14" == str(exc)


# ---------------------------------------------------------------------------------------------- evidence
# Seat 1 waits on 2p, 3p, 5p, 6p, 8p and 9p; seats 2 and 3 wait on nothing. The dealer discards 5p.
WAITER = "111p234p678p999s5p"
FILLERS = ("13579m13579p246s", "2468m2468p1357s9s")


def _ev(state: HandState) -> Evidence:
    """The audits' evidence the state worked out (pipeline/game/evidence.py)."""
    assert state.observer is not None
    return state.observer


def _dangerous_discard(dealer_hand: str, rules: RuleSet = CHENGDU, que: Any = None) -> HandState:
    state = deal(dealer_hand, WAITER, *FILLERS, rules=rules, observer=Evidence(), que=que)
    assert {t(k) for k in ("2p", "3p", "5p", "6p", "8p", "9p")} == state.win_tiles(1)
    assert not state.win_tiles(2) and not state.win_tiles(3)
    state.discard(0, t("5p"))
    assert state.could_win_at == {0: (1,)}
    return state


def test_evidence_a_safe_tile_as_good_was_held() -> None:
    # 5p and 7s are both isolated: shedding 7s instead leaves the hand exactly as close to ready, and nobody
    # can win on 7s
    state = _dangerous_discard("123m456m789m11s7s5p9p")
    assert _ev(state).safe_alternative_at == {0: True}


def test_evidence_every_other_discard_was_worse() -> None:
    # after 5p the hand is ready (22s33s: 2s or 3s); shedding any other tile leaves it one away
    state = _dangerous_discard("123m456m789m22s33s5p")
    assert _ev(state).safe_alternative_at == {0: False}


def test_evidence_an_as_good_tile_an_opponent_waits_on_is_not_safe() -> None:
    # 5p leaves 22s 68p (ready on 7p); 8p would leave 22s 56p, as ready, but seat 1 waits on 8p too
    state = _dangerous_discard("123m456m789m22s5p6p8p")
    assert _ev(state).safe_alternative_at == {0: False}


def test_evidence_with_void_first_only_void_tiles_were_a_choice() -> None:
    # void suit p declared, void_discard_first on: with 9p still held, 7s could not be discarded before it,
    # and 9p (the only other void tile) is a tile seat 1 waits on
    rules = load_ruleset("chengdu", void_discard_first=True)
    state = _dangerous_discard("123m456m789m11s7s5p9p", rules=rules, que=(1, None, None, None))
    assert _ev(state).safe_alternative_at == {0: False}


def test_evidence_the_cost_of_a_discard_is_how_much_further_from_ready_it_left_the_hand() -> None:
    # 5p was one of the best discards (cost 0): the hand is ready after it; 5p out of 45p instead leaves
    # 22s 4p 9m one step further from ready than shedding the isolated 9m would have (cost 1): a tile given up
    # at a cost to one's own hand, into seat 1's wait
    assert _ev(_dangerous_discard("123m456m789m22s33s5p")).cost_at == {0: 0}
    assert _ev(_dangerous_discard("123m456m789m11s7s5p9p")).cost_at == {0: 0}
    assert _ev(_dangerous_discard("123m456m789m22s45p9m")).cost_at == {0: 1}


def test_evidence_the_cost_is_worked_out_for_a_tile_another_could_kong() -> None:
    # nobody wins on 9s, but seat 1 holds 999s concealed: the dealer's 9s is a tile it could kong (events.could_kong)
    state = deal("123m456m789m22s45p9s", WAITER, "13579m13579p246s", "2468m2468p1357s8s", observer=Evidence())
    state.discard(0, t("9s"))
    assert state.could_win_at == {} and _ev(state).safe_alternative_at == {}
    assert _ev(state).could_kong_at == {0: [1]}
    assert _ev(state).cost_at == {0: 0}
    plain = deal("123m456m789m22s45p9s", WAITER, "13579m13579p246s", "2468m2468p1357s8s", observer=Evidence())
    plain.discard(0, t("2s"))  # nobody could win on or kong 2s: no cost worked out
    assert _ev(plain).cost_at == {}


def test_evidence_is_worked_out_only_on_request() -> None:
    state = deal("123m456m789m22s33s5p", WAITER, *FILLERS)
    state.discard(0, t("5p"))
    assert state.could_win_at == {0: (1,)} and state.observer is None
