"""The table's shape and the hand's end (docs/RULES.md §7, switches ``players``, ``suits``, ``mode`` and
``dealer_next``): three or four players, three suits or two, 血战到底 or 普通版, and who deals next.

The hands are dealt by hand (no wall) and played through the state machine, so that every rule shows in a
few events."""

from __future__ import annotations

import copy

import pytest

from pipeline.game.record import RecordError, parse_record, record_json
from pipeline.game.start import dealt, exchange_offset, start_hand, wall_after_deal
from pipeline.game.state import HandState, IllegalAction
from pipeline.rules.ruleset import RuleSetError, load_ruleset
from pipeline.rules.tiles import full_set, kind_of, parse_tiles

# 一炮多响 on the dealer's first discard: seats 1 and 2 both wait on 5p.
DOUBLE_ON_5P = (
    "123456789m1119s5p",  # the dealer: discards 5p first
    "123p444p678p99p46p",  # waits on 5p
    "123m456m789m55p67p",  # waits on 5p and 8p
    "222s333s444s555s6s",
)


def four(mode: str = "blood_battle", dealer_next: str = "first_winner") -> HandState:
    rules = load_ruleset({"profile": "chengdu", "mode": mode, "dealer_next": dealer_next})
    return start_hand(rules, dealer=0, deal=[parse_tiles(h) for h in DOUBLE_ON_5P])


FIVE_P = kind_of("5p")


def hu_payers(state: HandState) -> list[tuple[int, int]]:
    return [(p.payer, p.payee) for p in state.facts().payments if p.reason == "hu"]


# -- players ---------------------------------------------------------------------------------------------
# Three players, two suits (三人两房): 筒 and 条, 72 tiles, 13 each and one more for the dealer.
THREE = (
    "123456789p1119s5s",  # the dealer: discards 5s
    "123s444s678s99s46s",  # waits on 5s
    "222p333p444p555p6p",  # waits on 6p (222 333 444 555 and the pair)
)


def three() -> HandState:
    rules = load_ruleset({"profile": "chengdu", "players": 3, "suits": "ps"})
    return start_hand(rules, dealer=0, deal=[parse_tiles(h) for h in THREE])


def test_three_players_deal_and_wall() -> None:
    rules = load_ruleset({"profile": "chengdu", "players": 3, "suits": "ps"})
    assert rules.tiles == 72 and dealt(3) == 40 and wall_after_deal(rules) == 32
    state = start_hand(rules, dealer=2, wall=full_set("ps"))
    assert state.left == 32 and state.n == 3 and state.turn == 2
    with pytest.raises(ValueError, match="3 hands"):
        HandState(rules, dealer=0, hands=[[], [], [], []])


def test_three_players_blood_battle_ends_when_two_have_won() -> None:
    state = three()
    state.discard(0, kind_of("5s"))
    state.hu(1, kind_of("5s"), 0)
    assert state.claim_options(2) == []  # seat 2 cannot win on 5s
    state.draw(2, kind_of("6p"))  # turn order wraps at three: after seat 1 comes seat 2
    assert not state.over
    state.hu(2, kind_of("6p"), None)  # the second winner: one player is left, the hand is over
    assert state.over
    facts = state.facts()
    assert len(facts.deltas) == 3 and sum(facts.deltas) == 0
    assert hu_payers(state) == [(0, 1), (0, 2)]  # the self-draw is paid by the one player still in
    state.check_invariants()  # 72 tiles, none of 万


def test_three_players_turn_order_wraps() -> None:
    state = three()
    state.discard(0, kind_of("5s"))
    state.draw(1, kind_of("7p"))  # nobody claims: the next seat draws
    state.discard(1, kind_of("7p"))
    state.draw(2, kind_of("8p"))
    state.discard(2, kind_of("8p"))
    with pytest.raises(IllegalAction) as wrong:
        state.draw(3, kind_of("9p"))
    assert wrong.value.code == "SCHEMA_EVENT"
    state.draw(0, kind_of("9p"))  # after seat 2 comes seat 0
    assert state.turn == 0


def test_players_is_three_or_four() -> None:
    for bad in (2, 5):
        with pytest.raises(RuleSetError):
            load_ruleset({"profile": "chengdu", "players": bad})


# -- suits -----------------------------------------------------------------------------------------------
def test_two_suits_play_72_tiles_and_no_other() -> None:
    rules = load_ruleset({"profile": "chengdu", "suits": "ps"})
    assert rules.tiles == 72 and rules.suit_indexes == (1, 2)
    start_hand(rules, dealer=0, wall=full_set("ps"))
    with pytest.raises(IllegalAction) as mixed:
        start_hand(rules, dealer=0, wall=full_set("ms"))
    assert mixed.value.code == "TILE_WALL"


def test_a_tile_of_a_suit_not_in_play_is_refused() -> None:
    rules = load_ruleset({"profile": "chengdu", "players": 3, "suits": "ps"})
    with pytest.raises(IllegalAction) as dealt_man:
        start_hand(rules, dealer=0, deal=[parse_tiles("123456789p1119s5m"), *(parse_tiles(h) for h in THREE[1:])])
    assert dealt_man.value.code == "TILE_SUIT" and dealt_man.value.seat == 0
    state = three()
    state.discard(0, kind_of("5s"))
    with pytest.raises(IllegalAction) as drawn_man:
        state.draw(1, kind_of("5m"))
    assert drawn_man.value.code == "TILE_SUIT"


def test_no_void_suit_at_a_two_suit_table() -> None:
    # 定缺 picks one of three suits to shed; with two in play no hand can ever hold a third
    with pytest.raises(RuleSetError, match="定缺"):
        load_ruleset({"profile": "app", "suits": "ps"})
    rules = load_ruleset({"profile": "chengdu", "players": 3, "suits": "ps"})
    with pytest.raises(IllegalAction) as declared:
        start_hand(rules, dealer=0, deal=[parse_tiles(h) for h in THREE], que=(1, 2, 1))
    assert declared.value.code == "TILE_VOID"


# -- mode ------------------------------------------------------------------------------------------------
def test_blood_battle_goes_on_after_a_win() -> None:
    state = four()
    state.discard(0, FIVE_P)
    state.hu(1, FIVE_P, 0)
    state.hu(2, FIVE_P, 0)
    state.draw(3, kind_of("7s"))  # 血战到底: the two players left play on
    assert not state.over


def test_ordinary_hand_ends_with_every_win_on_the_first_winning_discard() -> None:
    # 普通版: the hand ends with the first win; 一炮多响 ("则均可胡牌", seed 003) ends it with both winners
    state = four(mode="ordinary")
    state.discard(0, FIVE_P)
    state.hu(1, FIVE_P, 0)
    state.hu(2, FIVE_P, 0)
    with pytest.raises(IllegalAction) as after:
        state.draw(3, kind_of("7s"))
    assert after.value.code == "TURN_AFTER_END"
    state.close()
    assert state.over and hu_payers(state) == [(0, 1), (0, 2)]
    assert state.facts().ends == {}  # not 流局: 查花猪/查大叫 only when nobody has won


def test_ordinary_hand_ends_with_a_self_draw() -> None:
    state = four(mode="ordinary")
    state.discard(0, FIVE_P)
    state.draw(1, FIVE_P)  # seats 1 and 2 let the 5p go; seat 1 draws the fourth
    state.hu(1, FIVE_P, None)
    assert state.over
    assert sorted(payer for payer, payee in hu_payers(state)) == [0, 2, 3]


# -- the next dealer -------------------------------------------------------------------------------------
def test_first_winner_deals_next_and_the_discarder_after_a_double_win() -> None:
    # "本盘胡牌者为下一盘的庄家"; "一炮点两家以上……点炮者为下一盘的庄家" (seed 000)
    double = four()
    double.discard(0, FIVE_P)
    double.hu(1, FIVE_P, 0)
    double.hu(2, FIVE_P, 0)
    assert double.next_dealer() == 0
    single = four()
    single.discard(0, FIVE_P)
    single.hu(2, FIVE_P, 0)
    assert single.next_dealer() == 2


def test_dealt_in_the_discarder_deals_next() -> None:
    # "坐庄非血战：第二局起 点炮者坐庄，流局则连庄" (seed 003)
    state = four(mode="ordinary", dealer_next="dealt_in")
    state.discard(0, FIVE_P)
    state.hu(2, FIVE_P, 0)
    state.close()
    assert state.next_dealer() == 0
    self_drawn = four(mode="ordinary", dealer_next="dealt_in")
    self_drawn.discard(0, FIVE_P)
    self_drawn.draw(1, FIVE_P)
    self_drawn.hu(1, FIVE_P, None)
    assert self_drawn.next_dealer() == 1  # the texts are silent on a self-draw: its winner deals


def test_with_no_win_the_dealer_stays() -> None:
    for dealer_next in ("first_winner", "dealt_in"):
        state = four(dealer_next=dealer_next)
        state.discard(0, FIVE_P)
        state.draw(1, kind_of("7s"))
        assert state.next_dealer() == 0


# -- records whose table is not their ruleset's ---------------------------------------------------------
def _three_record() -> dict:
    state = three()
    state.discard(0, kind_of("5s"))
    state.hu(1, kind_of("5s"), 0)
    return record_json(
        hand_id="three",
        ruleset="sanren_liangfang",
        players=["a", "b", "c"],
        dealer=0,
        events=state.events,
        deal=[parse_tiles(h) for h in THREE],
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(dealer=3), "dealer 3: the table seats 3"),
        (lambda r: r.update(deal=[*r["deal"], r["deal"][0]]), "deal holds 4 hands"),
        (lambda r: r["events"][1].update(seat=3), "event 1 names seat 3"),
        (lambda r: r["events"][1].update({"from": 3}), "event 1 names seat 3"),
    ],
)
def test_a_seat_the_table_does_not_have_is_a_shape_error(change: object, message: str) -> None:
    record = _three_record()
    parse_record(record)  # the record as played
    changed = copy.deepcopy(record)
    change(changed)  # type: ignore[operator]
    with pytest.raises(RecordError) as bad:
        parse_record(changed)
    assert bad.value.code == "SCHEMA_SHAPE" and message in str(bad.value)


def test_exchange_directions_at_three_and_four() -> None:
    # clockwise gives to the previous seat, counter-clockwise to the next; across exists at four only
    assert [exchange_offset(d, 4) for d in ("cw", "ccw", "across")] == [3, 1, 2]
    assert [exchange_offset(d, 3) for d in ("cw", "ccw")] == [2, 1]
    with pytest.raises(IllegalAction) as across:
        exchange_offset("across", 3)
    assert across.value.code == "TILE_EXCHANGE"


# -- 血流成河 ----------------------------------------------------------------------------------------------
# seat 1 waits on 5m alone (777s 123m 456m 789m and the single 5m): it wins on the dealer's 5m and stays in
FLOW = ("123456789p1119s5m", "777s123m456m789m5m", "111m222m333p444p9s", "555p666p777p888p9m")
FIVE_M = kind_of("5m")


def flow(**switches: object) -> HandState:
    rules = load_ruleset({"profile": "xueliu", **switches})
    state = start_hand(rules, dealer=0, deal=[parse_tiles(h) for h in FLOW])
    state.discard(0, FIVE_M)
    state.hu(1, FIVE_M, 0)
    return state


def to_seat_1(state: HandState, drawn: str) -> None:
    """Seats 2, 3 and 0 draw and discard; seat 1 draws ``drawn``."""
    for seat, tile in ((2, "9s"), (3, "9m"), (0, "2s")):
        state.draw(seat, kind_of(tile))
        state.discard(seat, kind_of(tile))
    state.draw(1, kind_of(drawn))


def test_blood_flow_winners_stay_in_win_again_and_pay() -> None:
    state = flow()
    assert not state.over and not state.won[1] and state.has_won[1]
    assert state.ledger.in_hand == [True, True, True, True]
    to_seat_1(state, "5m")
    state.hu(1, FIVE_M, None)  # the same wait wins again
    assert [w.seat for w in state.wins] == [1, 1]
    assert sorted(p for p, q in hu_payers(state) if q == 1) == [0, 0, 2, 3]  # everybody pays, every win
    state.draw(2, kind_of("8s"))  # play goes on: only the wall ends a 血流成河 hand
    assert not state.over and not state.facts().won_out


def test_a_winner_discards_what_it_draws() -> None:
    state = flow()
    to_seat_1(state, "3s")
    with pytest.raises(IllegalAction) as locked:
        state.discard(1, kind_of("7s"))
    assert locked.value.code == "TURN_AFTER_WIN" and locked.value.expected == "3s"
    state.discard(1, kind_of("3s"))
    free = flow(after_win_discard="free")
    to_seat_1(free, "3s")
    free.discard(1, kind_of("1m"))  # a room that lets winners change their hand


def test_a_winner_does_not_pong() -> None:
    state = flow()
    state.draw(2, kind_of("7s"))
    state.discard(2, kind_of("7s"))  # seat 1 holds 777s
    assert not state.can_pong(1, kind_of("7s"), 2) and not state.can_kong(1, kind_of("7s"), "direct", 2)
    ponging = flow(after_win_pong=True)
    ponging.draw(2, kind_of("7s"))
    ponging.discard(2, kind_of("7s"))
    assert ponging.can_pong(1, kind_of("7s"), 2)


@pytest.mark.parametrize(
    ("rule", "allowed"), [("same_waits", True), ("keeps_won_tiles", True), ("none", False), ("added_drawn", False)]
)
def test_kongs_after_a_win(rule: str, allowed: bool) -> None:
    # seat 1 draws the fourth 7s: a concealed kong leaves its wait (5m) as it was
    state = flow(after_win_kong=rule)
    to_seat_1(state, "7s")
    assert state.can_kong(1, kind_of("7s"), "concealed") is allowed


def test_a_kong_that_changes_the_waits_is_refused() -> None:
    # seat 1 of the 5p double win holds 4p four times; konging them leaves it waiting on something else
    rules = load_ruleset({"profile": "xueliu"})
    state = start_hand(rules, dealer=0, deal=[parse_tiles(h) for h in DOUBLE_ON_5P])
    state.discard(0, FIVE_P)
    state.hu(1, FIVE_P, 0)
    for seat, tile in ((2, "9s"), (3, "7m"), (0, "8s")):
        state.draw(seat, kind_of(tile))
        state.discard(seat, kind_of(tile))
    state.draw(1, kind_of("7s"))
    assert state.counts[1][kind_of("4p")] == 4
    with pytest.raises(IllegalAction, match="after_win_kong = same_waits"):
        state.kong(1, kind_of("4p"), "concealed")


def test_a_winner_who_pongs_is_judged_on_the_hand_before_the_pong() -> None:
    # where winners may pong (after_win_pong), seat 1 pongs 7s and could add its fourth at once: with no tile
    # drawn, the hand the kong is judged against is the one it holds
    for rule, allowed in (("same_waits", False), ("keeps_won_tiles", True)):
        state = flow(after_win_pong=True, after_win_kong=rule)
        state.draw(2, kind_of("7s"))
        state.discard(2, kind_of("7s"))
        state.pong(1, kind_of("7s"), 2)
        assert state.last_draw is None
        assert state.can_kong(1, kind_of("7s"), "added") is allowed, rule
