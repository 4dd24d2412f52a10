"""Money (docs/RULES.md §4–§6): every row, as transfers on a Ledger, and zero-sum over random legal hands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.rules.fan import ReadyValue, Score, WinHand, ready_value, score
from pipeline.rules.hand import Meld
from pipeline.rules.ruleset import RuleSet, load_ruleset
from pipeline.rules.settle import KongKind, Ledger, Payment, SeatEnd
from pipeline.rules.tiles import counts_of, kind_of, parse_tiles

CHENGDU = load_ruleset("chengdu")
APP = load_ruleset("app")


def win_score(concealed: str, tile: str, rules: RuleSet = CHENGDU, melds: Sequence[Meld] = (), **flags: Any) -> Score:
    return score(WinHand.of(concealed, win_tile=tile, melds=melds, **flags), rules)


def plain(rules: RuleSet = CHENGDU, **flags: Any) -> Score:
    """平胡: 1 fan, 1 point at base 1."""
    return win_score("111m444m789m456p7p", "7p", rules, **flags)


def flush(rules: RuleSet = CHENGDU, **flags: Any) -> Score:
    """清一色: 3 fan, 4 points at base 1."""
    return win_score("123s567s234s888s9s", "9s", rules, **flags)


def moves(ledger: Ledger) -> list[tuple[int, int, int, str]]:
    return [(p.payer, p.payee, p.amount, p.reason) for p in ledger.payments]


def ready(amount: int) -> ReadyValue:
    return ReadyValue(amount=amount, fan=1, win_tile=0, waits=(0,))


# Seats still in at the end of the wall.
def pig(seat: int) -> SeatEnd:
    return SeatEnd(seat=seat, pig=True, ready=None)


def not_ready(seat: int) -> SeatEnd:
    return SeatEnd(seat=seat, pig=False, ready=None)


def ready_seat(seat: int, amount: int = 1) -> SeatEnd:
    return SeatEnd(seat=seat, pig=False, ready=ready(amount))


def leave(ledger: Ledger, still_in: Sequence[int]) -> Ledger:
    """Let every seat not in ``still_in`` win (on a discard by the first seat still in)."""
    for seat in range(4):
        if seat not in still_in:
            ledger.win(seat, plain(ledger.rules), 90 + seat, discarder=still_in[0])
    return ledger


def end_moves(ledger: Ledger) -> list[tuple[int, int, int, str]]:
    """The end-of-wall transfers (those caused by no event)."""
    return [(p.payer, p.payee, p.amount, p.reason) for p in ledger.payments if p.event is None]


# -- wins -----------------------------------------------------------------------------------------------


def test_win_on_a_discard_the_discarder_pays_the_hand_value() -> None:
    # "谁点炮谁负责，好汉做事好汉当" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.win(2, flush(), 5, discarder=0)
    assert moves(ledger) == [(0, 2, 4, "hu")]


def test_self_draw_every_other_player_pays_value_plus_base() -> None:
    # "自摸、杠上花，另外三家输" and "现在流行自摸加底" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.win(0, plain(self_drawn=True), 5)
    assert ledger.deltas() == [6, -2, -2, -2]


def test_self_draw_is_paid_only_by_players_still_in() -> None:
    ledger = Ledger(CHENGDU)
    ledger.win(1, plain(), 5, discarder=0)
    ledger.win(2, plain(self_drawn=True), 9)
    assert [(p.payer, p.payee) for p in ledger.payments[1:]] == [(0, 2), (3, 2)]


def test_one_discard_several_winners_each_paid_by_the_discarder() -> None:
    # "一炮点两家以上，还是点炮的输钱" (seed 000): 一炮多响, two wins on one discard.
    ledger = Ledger(CHENGDU)
    ledger.win(1, plain(), 7, discarder=0)
    ledger.win(3, flush(), 7, discarder=0)
    assert moves(ledger) == [(0, 1, 1, "hu"), (0, 3, 4, "hu")]


def test_a_winner_leaves_the_hand() -> None:
    ledger = Ledger(CHENGDU)
    ledger.win(1, plain(), 7, discarder=0)
    assert ledger.in_hand == [True, False, True, True] and ledger.others_in(0) == [2, 3]


def test_robbing_a_kong_the_kong_player_pays_and_the_kong_earns_nothing() -> None:
    # "玩家面下杠时，他家可以抢杠而胡，刮风下雨无效" (seed 003): the robbed kong never stands, so
    # Ledger.kong is not called; the player adding the kong pays as the discarder.
    ledger = Ledger(CHENGDU)
    ledger.win(2, plain(rob_kong=True), 8, discarder=1)
    assert moves(ledger) == [(1, 2, 2, "hu")]


def test_chengdu_seventy_yuan_example() -> None:
    # "清对8元，带三杠，再翻3番……64元，再加上三个直杠共6元，共计70元了" (seed 000): three direct kongs
    # fed by one player, who then deals in.
    ledger = Ledger(CHENGDU)
    kongs = [Meld("direct", kind_of(t), source=0) for t in ("1m", "4m", "2m")]
    for event in range(len(kongs)):
        ledger.kong(1, "direct", event, source=0)
    ledger.win(1, win_score("999m6m", "6m", melds=kongs), 9, discarder=0)
    assert ledger.deltas() == [-70, 70, 0, 0]


# -- kongs: 刮风下雨 -------------------------------------------------------------------------------------


def test_direct_kong_the_discarder_pays_two_base() -> None:
    # "直杠，立刻收取引杠者2倍点数，即2元" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.kong(1, "direct", 3, source=3)
    assert moves(ledger) == [(3, 1, 2, "kong")]


def test_added_kong_every_other_player_still_in_pays_one_base() -> None:
    # "面下杠，收取其他未胡者1倍点数，即1元（如果4家都在场，那么就一共能收到3元。）" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.kong(1, "added", 3)
    assert ledger.deltas() == [-1, 3, -1, -1]


def test_concealed_kong_every_other_player_still_in_pays_two_base() -> None:
    # "下雨立刻收取其他未胡者每人2倍点数，即2元" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.kong(1, "concealed", 3)
    assert ledger.deltas() == [-2, 6, -2, -2]


def test_kongs_are_paid_only_by_players_still_in() -> None:
    ledger = Ledger(CHENGDU)
    ledger.win(0, plain(), 2, discarder=3)
    ledger.kong(1, "concealed", 3)
    assert [p.payer for p in ledger.payments[1:]] == [2, 3]


def test_direct_kong_pays_switch() -> None:
    # The app text says both: "直杠，立刻收取引杠者1倍点数" and "引杠时引杠者给杠牌者加2分" (seed 003).
    paid = {}
    for n in (1, 2):
        ledger = Ledger(load_ruleset("app", direct_kong_pays=n))
        ledger.kong(1, "direct", 3, source=0)
        paid[n] = ledger.deltas()[1]
    assert paid == {1: 1, 2: 2}


def test_added_kong_pays_switch() -> None:
    ledger = Ledger(load_ruleset("chengdu", added_kong_pays=2))
    ledger.kong(1, "added", 3)
    assert ledger.deltas() == [-2, 6, -2, -2]


def test_concealed_kong_pays_switch() -> None:
    ledger = Ledger(load_ruleset("chengdu", concealed_kong_pays=1))
    ledger.kong(1, "concealed", 3)
    assert ledger.deltas() == [-1, 3, -1, -1]


@pytest.mark.parametrize(
    ("mode", "fresh", "income"),
    [("always", True, 3), ("always", False, 3), ("fresh", True, 3), ("fresh", False, 0)],
)
def test_added_kong_paid_always_or_only_when_fresh(mode: str, fresh: bool, income: int) -> None:
    # Many apps pay 面下杠 only when the fourth tile was just drawn (docs/RULES.md §4).
    ledger = Ledger(load_ruleset("chengdu", added_kong_paid=mode))
    ledger.kong(1, "added", 3, fresh=fresh)
    assert ledger.deltas()[1] == income


def test_base_scales_hand_and_kong_money() -> None:
    def money(rules: RuleSet) -> list[int]:
        ledger = Ledger(rules)
        ledger.kong(1, "direct", 0, source=0)
        ledger.win(2, flush(rules), 1, discarder=0)
        return ledger.deltas()

    assert money(load_ruleset("chengdu", base=3)) == [3 * d for d in money(CHENGDU)] == [-18, 6, 12, 0]


# -- 点杠花 and kongs in a row ---------------------------------------------------------------------------

# Seat 1 kongs 9p on seat 3's discard and wins on the replacement: plain, a root and 杠上花.
ON_KONG = ("111m444m789m7p", "7p", [Meld("direct", kind_of("9p"), source=3)])


def kong_flower(rules: RuleSet) -> Score:
    concealed, tile, melds = ON_KONG
    return win_score(concealed, tile, rules, melds, self_drawn=True, after_kong=True)


@pytest.mark.parametrize(
    ("mode", "deltas"),
    [("feeder", [0, 4, 0, -4]), ("self_draw", [-5, 15, -5, -5])],
)
def test_dian_gang_hua_feeder_pays_or_everyone_pays(mode: str, deltas: list[int]) -> None:
    # "再杠上花（即杠开），算引杠者点炮" (seed 000); "别人打牌，引杠，再杠上番，算自摸" (seed 003).
    # 3 fan = 4 points: the feeder pays them as a discarder would; as a self-draw each pays 4 + 1 base.
    rules = load_ruleset("chengdu", dian_gang_hua=mode)
    ledger = Ledger(rules)
    ledger.win(1, kong_flower(rules), 9, kong_feeder=3)
    assert ledger.deltas() == deltas


def test_app_dian_gang_hua_is_a_self_draw_with_two_fan() -> None:
    ledger = Ledger(APP)
    ledger.win(1, kong_flower(APP), 9, kong_feeder=3)  # 4 fan = 8 points, + 1 base each
    assert ledger.deltas() == [-9, 27, -9, -9]


def test_second_kong_in_a_row_then_gang_shang_hua_everyone_pays() -> None:
    # "如果第一次某人引杠，对方没有杠开，但是杠起来的牌又可连续开杠（自杠），这次如果杠开了，
    # 就算在场的还没胡牌的所有人的了" (seed 000): the caller names no feeder.
    ledger = Ledger(CHENGDU)
    ledger.win(1, kong_flower(CHENGDU), 9)
    assert ledger.deltas() == [-5, 15, -5, -5]


# -- 杠上炮 and the kong's money ------------------------------------------------------------------------


def gang_shang_pao_hand(mode: str, winners: Sequence[int] = (2,)) -> Ledger:
    """Seat 0 makes a concealed kong (event 1; 2 from each), discards, and ``winners`` win on it (event 3)."""
    rules = load_ruleset("chengdu", gang_shang_pao_money=mode)
    ledger = Ledger(rules)
    ledger.kong(0, "concealed", 1)
    for seat in winners:
        ledger.win(seat, plain(rules, kong_discard=True), 3, discarder=0)
    ledger.gang_shang_pao(0, 1, winners, 3)
    return ledger


@pytest.mark.parametrize(
    ("mode", "after"),
    [
        ("stays", []),
        ("transfer", [(0, 2, 6, "transfer")]),
        ("refund", [(0, 1, 2, "tui_shui"), (0, 2, 2, "tui_shui"), (0, 3, 2, "tui_shui")]),
    ],
)
def test_gang_shang_pao_money(mode: str, after: list[tuple[int, int, int, str]]) -> None:
    # 杠上炮 "+1 fan; some apps move that kong's money to the winner (呼叫转移)" (docs/RULES.md §4)
    ledger = gang_shang_pao_hand(mode)
    kong_and_win = [(1, 0, 2, "kong"), (2, 0, 2, "kong"), (3, 0, 2, "kong"), (0, 2, 2, "hu")]
    assert moves(ledger) == kong_and_win + after


def test_transfer_goes_to_the_first_winner_after_the_kong_player() -> None:
    ledger = gang_shang_pao_hand("transfer", winners=(3, 1))
    assert moves(ledger)[-1] == (0, 1, 6, "transfer")


def test_transfer_moves_only_that_kongs_money() -> None:
    ledger = Ledger(load_ruleset("chengdu", gang_shang_pao_money="transfer"))
    ledger.kong(0, "direct", 0, source=3)
    ledger.kong(0, "concealed", 1)
    ledger.win(2, plain(kong_discard=True), 3, discarder=0)
    ledger.gang_shang_pao(0, 1, [2], 3)
    assert moves(ledger)[-1] == (0, 2, 6, "transfer")


def test_a_kong_that_earned_nothing_transfers_nothing() -> None:
    ledger = Ledger(load_ruleset("chengdu", gang_shang_pao_money="transfer", added_kong_paid="fresh"))
    ledger.kong(0, "added", 1, fresh=False)
    ledger.win(2, plain(kong_discard=True), 3, discarder=0)
    ledger.gang_shang_pao(0, 1, [2], 3)
    assert moves(ledger) == [(0, 2, 2, "hu")]


def test_no_winner_moves_no_kong_money() -> None:
    ledger = Ledger(load_ruleset("chengdu", gang_shang_pao_money="refund"))
    ledger.kong(0, "concealed", 1)
    ledger.gang_shang_pao(0, 1, [], 3)
    assert ledger.deltas() == [6, -2, -2, -2]


def test_transferred_kong_money_is_not_refunded_again() -> None:
    ledger = gang_shang_pao_hand("transfer")
    ledger.end_of_wall([not_ready(0), ready_seat(1), ready_seat(3)])
    assert [m for m in moves(ledger) if m[3] == "tui_shui"] == []


# -- end of the wall: 查花猪 -----------------------------------------------------------------------------


def test_flower_pig_pays_the_cap_to_each_non_pig() -> None:
    # "花猪无条件包还在场的麻友满庄" (seed 000): with a cap of 4, 满庄 is 8.
    ledger = Ledger(load_ruleset("chengdu", cap=4))
    ledger.end_of_wall([pig(0), ready_seat(1), not_ready(2), ready_seat(3)])
    assert [m for m in moves(ledger) if m[3] == "hua_zhu"] == [
        (0, 1, 8, "hua_zhu"),
        (0, 2, 8, "hua_zhu"),
        (0, 3, 8, "hua_zhu"),
    ]


def test_uncapped_flower_pig_pays_ten_base() -> None:
    # "如果是打不封顶，可以事前规定一个数额，比如起步价的10倍等" (seed 000)
    ledger = leave(Ledger(load_ruleset("chengdu", base=2)), [0, 1])
    ledger.end_of_wall([pig(0), not_ready(1)])
    assert end_moves(ledger) == [(0, 1, 20, "hua_zhu")]


@pytest.mark.parametrize("cap", [0, 3])
def test_app_flower_pig_pays_sixteen_base(cap: int) -> None:
    # "花猪赔给非花猪玩家16倍点数" (seed 003), capped or not.
    ledger = leave(Ledger(load_ruleset("app", cap=cap)), [0, 1])
    ledger.end_of_wall([pig(0), not_ready(1)])
    assert end_moves(ledger) == [(0, 1, 16, "hua_zhu")]


def test_hua_zhu_amount_cap_or_fixed() -> None:
    amounts = {}
    for mode in ("cap", "fixed"):
        ledger = leave(Ledger(load_ruleset("chengdu", cap=3, hua_zhu_amount=mode)), [0, 1])
        ledger.end_of_wall([pig(0), not_ready(1)])
        amounts[mode] = end_moves(ledger)[0][2]
    assert amounts == {"cap": 4, "fixed": 10}


def test_hua_zhu_fixed_amount() -> None:
    ledger = leave(Ledger(load_ruleset("chengdu", hua_zhu_fixed=20)), [0, 1])
    ledger.end_of_wall([pig(0), not_ready(1)])
    assert end_moves(ledger) == [(0, 1, 20, "hua_zhu")]


def test_flower_pig_pays_only_players_still_in() -> None:
    # "包还在场的麻友" (seed 000): a player who has won is not paid.
    ledger = Ledger(CHENGDU)
    ledger.win(3, plain(), 1, discarder=2)
    ledger.end_of_wall([pig(0), not_ready(1), not_ready(2)])
    assert [(p.payer, p.payee) for p in ledger.payments if p.reason == "hua_zhu"] == [(0, 1), (0, 2)]


def test_flower_pigs_do_not_pay_each_other() -> None:
    ledger = leave(Ledger(CHENGDU), [0, 1, 2])
    ledger.end_of_wall([pig(0), pig(1), not_ready(2)])
    assert end_moves(ledger) == [(0, 2, 10, "hua_zhu"), (1, 2, 10, "hua_zhu")]


# -- end of the wall: 查大叫 -----------------------------------------------------------------------------

# Ready on 1m, 4m, 3p, 6p and 9p: 1 point at the least (4m, 3p, 6p), 2 at the most (1m, 9p: a root).
READY = counts_of(parse_tiles("111m23m456p789p99p"))


@pytest.mark.parametrize(("rules", "amount"), [(CHENGDU, 1), (APP, 2)])
def test_cha_jiao_min_in_chengdu_max_in_app(rules: RuleSet, amount: int) -> None:
    # "没有停牌的人赔给所有已经停牌者……最小规格的钱数" (seed 000); "最大的可能番（大叫）" (seed 003)
    ledger = leave(Ledger(rules), [0, 1])
    ledger.end_of_wall([SeatEnd(seat=0, pig=False, ready=ready_value(READY, [], rules)), not_ready(1)])
    assert end_moves(ledger) == [(1, 0, amount, "cha_jiao")]


def test_each_player_not_ready_pays_each_ready_player() -> None:
    # "如：A、B无听牌，C、D听牌，A赔C、D；B赔C、D" (seed 003)
    ledger = Ledger(CHENGDU)
    ledger.end_of_wall([not_ready(0), not_ready(1), ready_seat(2, 4), ready_seat(3, 1)])
    assert moves(ledger) == [
        (0, 2, 4, "cha_jiao"),
        (0, 3, 1, "cha_jiao"),
        (1, 2, 4, "cha_jiao"),
        (1, 3, 1, "cha_jiao"),
    ]


def test_ready_players_pay_each_other_nothing() -> None:
    ledger = leave(Ledger(CHENGDU), [0, 1])
    ledger.end_of_wall([ready_seat(0, 4), ready_seat(1, 2)])
    assert end_moves(ledger) == []


def test_winners_take_no_part_in_cha_jiao() -> None:
    # "没有停牌的人赔给所有已经停牌者（已经胡牌的不算）" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.win(2, plain(), 1, discarder=0)
    ledger.end_of_wall([not_ready(0), ready_seat(1), not_ready(3)])
    assert [(p.payer, p.payee) for p in ledger.payments[1:]] == [(0, 1), (3, 1)]


@pytest.mark.parametrize(
    ("pays", "after"),
    [(False, [(0, 1, 10, "hua_zhu")]), (True, [(0, 1, 10, "hua_zhu"), (0, 1, 3, "cha_jiao")])],
)
def test_pig_pays_cha_jiao_switch(pays: bool, after: list[tuple[int, int, int, str]]) -> None:
    # "查大叫没听牌的玩家（花猪不用）赔给听牌的玩家" (seed 003): by default a pig pays only as a pig.
    ledger = leave(Ledger(load_ruleset("chengdu", hua_zhu_pays_cha_jiao=pays)), [0, 1])
    ledger.end_of_wall([pig(0), ready_seat(1, 3)])
    assert end_moves(ledger) == after


def test_end_of_wall_covers_exactly_the_players_still_in() -> None:
    ledger = Ledger(CHENGDU)
    ledger.win(2, plain(), 1, discarder=0)
    with pytest.raises(AssertionError, match="ends and winners must cover exactly the seats still in"):
        ledger.end_of_wall([not_ready(0), not_ready(1), not_ready(2), not_ready(3)])


def test_blood_flow_a_pig_pays_the_winners_still_at_the_table_too() -> None:
    # 血流成河: seat 2 won and stayed; a pig pays every non-pig at the table, but 查大叫 runs among those who
    # never won (seat 2 neither pays nor collects it)
    ledger = Ledger(load_ruleset("xueliu"))
    ledger.win(2, plain(), 1, discarder=0, stays=True)
    ledger.end_of_wall([pig(0), ready_seat(1), not_ready(3)], winners=[2])
    assert end_moves(ledger) == [
        (0, 1, 10, "hua_zhu"),
        (0, 2, 10, "hua_zhu"),
        (0, 3, 10, "hua_zhu"),
        (3, 1, 1, "cha_jiao"),
    ]


# -- end of the wall: 退税 -------------------------------------------------------------------------------


def test_tui_shui_a_player_not_ready_returns_all_kong_money() -> None:
    # "如果黄庄了，有杠牌的玩家还没有下窖，则必须退回全部刮风下雨所得" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.kong(1, "direct", 0, source=0)
    ledger.kong(1, "concealed", 1)
    ledger.end_of_wall([not_ready(0), not_ready(1), not_ready(2), not_ready(3)])
    assert ledger.deltas() == [0, 0, 0, 0]
    assert [m for m in moves(ledger) if m[3] == "tui_shui"] == [
        (1, 0, 2, "tui_shui"),
        (1, 0, 2, "tui_shui"),
        (1, 2, 2, "tui_shui"),
        (1, 3, 2, "tui_shui"),
    ]


def test_tui_shui_a_ready_player_keeps_kong_money() -> None:
    ledger = Ledger(CHENGDU)
    ledger.kong(1, "concealed", 1)
    ledger.end_of_wall([not_ready(0), ready_seat(1), not_ready(2), not_ready(3)])
    assert ledger.deltas()[1] == 6 + 3


def test_tui_shui_a_flower_pig_returns_kong_money() -> None:
    ledger = Ledger(CHENGDU)
    ledger.kong(1, "concealed", 1)
    leave(ledger, [0, 1])
    ledger.end_of_wall([ready_seat(0), pig(1)])
    assert (1, 0, 2, "tui_shui") in end_moves(ledger)


def test_tui_shui_returns_kong_money_also_to_players_who_have_since_won() -> None:
    # "必须退回全部刮风下雨所得" (seed 000): all of it, to whoever paid it, though they won meanwhile.
    ledger = Ledger(CHENGDU)
    ledger.kong(1, "concealed", 1)
    leave(ledger, [0, 1])
    ledger.end_of_wall([not_ready(0), not_ready(1)])
    assert [m for m in end_moves(ledger) if m[3] == "tui_shui"] == [
        (1, 0, 2, "tui_shui"),
        (1, 2, 2, "tui_shui"),
        (1, 3, 2, "tui_shui"),
    ]


@pytest.mark.parametrize(("refund", "kong_holder"), [(True, 0), (False, 6)])
def test_tui_shui_switch(refund: bool, kong_holder: int) -> None:
    ledger = Ledger(load_ruleset("chengdu", tui_shui=refund))
    ledger.kong(1, "concealed", 1)
    ledger.end_of_wall([not_ready(0), not_ready(1), not_ready(2), not_ready(3)])
    assert ledger.deltas()[1] == kong_holder


def test_winners_neither_pay_nor_receive_later() -> None:
    # "Players who have won no longer ... pay or get paid for later events" (docs/RULES.md §1, §8).
    ledger = Ledger(CHENGDU)
    ledger.win(0, plain(), 1, discarder=3)
    won = ledger.deltas()[0]
    ledger.kong(1, "concealed", 2)
    ledger.kong(2, "added", 3)
    ledger.kong(1, "direct", 4, source=3)
    ledger.win(2, flush(self_drawn=True), 5)
    ledger.end_of_wall([pig(1), not_ready(3)])
    assert ledger.deltas()[0] == won


# -- mistakes at the table: 诈胡 and 相公 -----------------------------------------------------------------


def test_false_win_pays_one_fan_to_each_player_still_in() -> None:
    # "一般是赔场上所有人的1番……对于先于麻胡者胡牌的玩家，就不再赔了" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.win(3, plain(), 1, discarder=2)
    ledger.penalty(0, 2, everyone=False)
    assert [m for m in moves(ledger) if m[3] == "penalty"] == [(0, 1, 1, "penalty"), (0, 2, 1, "penalty")]


def test_xiang_gong_pays_everyone() -> None:
    # "对相公的处罚，可参照对麻胡的惩罚，但对所有人都要进行赔付" (seed 000)
    ledger = Ledger(CHENGDU)
    ledger.win(3, plain(), 1, discarder=2)
    ledger.penalty(0, 2, everyone=True)
    assert [p.payee for p in ledger.payments if p.reason == "penalty"] == [1, 2, 3]


@pytest.mark.parametrize(("fan", "each"), [(0, 0), (1, 1), (3, 4)])
def test_false_win_fan_switch(fan: int, each: int) -> None:
    ledger = Ledger(load_ruleset("chengdu", false_win_fan=fan))
    ledger.penalty(0, 2, everyone=False)
    assert ledger.deltas() == [-3 * each, each, each, each]


def test_false_win_penalty_respects_the_cap() -> None:
    ledger = Ledger(load_ruleset("chengdu", false_win_fan=6, cap=3))
    ledger.penalty(0, 2, everyone=False)
    assert ledger.deltas()[1] == 4


@pytest.mark.parametrize(("loses", "offender"), [(True, -3), (False, 3)])
def test_false_win_loses_kong_switch(loses: bool, offender: int) -> None:
    # "并不再计算其刮风下雨收益" (seed 000): the concealed kong's 6 go back, then 1 to each of three.
    ledger = Ledger(load_ruleset("chengdu", false_win_loses_kong=loses))
    ledger.kong(0, "concealed", 1)
    ledger.penalty(0, 2, everyone=False)
    assert ledger.deltas()[0] == offender


def test_kong_money_returned_once_is_not_returned_again() -> None:
    ledger = Ledger(CHENGDU)
    ledger.kong(0, "concealed", 1)
    ledger.penalty(0, 2, everyone=False)
    ledger.end_of_wall([not_ready(0), not_ready(1), not_ready(2), not_ready(3)])
    assert ledger.deltas() == [-3, 1, 1, 1]


# -- the ledger itself ----------------------------------------------------------------------------------


def test_payment_in_the_record_format() -> None:
    payment = Payment(payer=1, payee=2, amount=4, reason="hu", event=7)
    assert payment.as_dict() == {"from": 1, "to": 2, "amount": 4, "reason": "hu", "event": 7}


def test_payment_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Payment(1, 2, 4, "hu").amount = 5  # type: ignore[misc]


def test_end_of_wall_payments_have_no_event() -> None:
    ledger = leave(Ledger(CHENGDU), [0, 1])
    ledger.end_of_wall([pig(0), not_ready(1)])
    assert ledger.payments[-1].reason == "hua_zhu" and ledger.payments[-1].event is None


def test_a_player_who_has_won_cannot_win_again() -> None:
    ledger = Ledger(CHENGDU)
    ledger.win(1, plain(), 1, discarder=0)
    with pytest.raises(AssertionError, match="seat 1 has already won"):
        ledger.win(1, plain(), 2, discarder=0)


# -- zero sum over random legal hands -------------------------------------------------------------------

RULE_VARIANTS = [
    CHENGDU,
    APP,
    load_ruleset("chengdu", cap=4, gang_shang_pao_money="transfer", hua_zhu_pays_cha_jiao=True),
    load_ruleset("app", cap=3, gang_shang_pao_money="refund", added_kong_paid="fresh", tui_shui=False),
    load_ruleset("chengdu", base=2, self_draw="fan", dian_gang_hua="self_draw", false_win_loses_kong=False),
]
KONG_KINDS: tuple[KongKind, ...] = ("direct", "added", "concealed")
HANDS = [("111m444m789m456p7p", "7p"), ("123s567s234s888s9s", "9s"), ("1111m99m44p66p88p9p", "9p")]


@given(st.data(), st.sampled_from(RULE_VARIANTS))
@settings(deadline=None)
def test_settlement_is_zero_sum_and_leaves_winners_alone(data: st.DataObject, rules: RuleSet) -> None:
    ledger = Ledger(rules)
    won_at: dict[int, int] = {}
    event = 0
    for _ in range(data.draw(st.integers(0, 10))):
        still_in = [s for s in range(4) if ledger.in_hand[s]]
        if len(still_in) < 2:
            break
        event += 1
        seat = data.draw(st.sampled_from(still_in))
        others = [s for s in still_in if s != seat]
        action = data.draw(st.sampled_from(["kong", "win", "kong_then_pao", "penalty"]))
        text, tile = data.draw(st.sampled_from(HANDS))
        if action == "kong":
            kind: KongKind = data.draw(st.sampled_from(KONG_KINDS))
            source = data.draw(st.sampled_from(others)) if kind == "direct" else None
            ledger.kong(seat, kind, event, source=source, fresh=data.draw(st.booleans()))
        elif action == "win":
            how = data.draw(st.sampled_from(["discard", "self", "feeder"]))
            payer = data.draw(st.sampled_from(others))
            value = win_score(text, tile, rules, self_drawn=how != "discard")
            ledger.win(
                seat,
                value,
                event,
                discarder=payer if how == "discard" else None,
                kong_feeder=payer if how == "feeder" else None,
            )
            won_at[seat] = event
        elif action == "kong_then_pao":
            ledger.kong(seat, "concealed", event)
            winners = data.draw(st.lists(st.sampled_from(others), min_size=1, max_size=len(others), unique=True))
            for winner in winners:
                ledger.win(winner, win_score(text, tile, rules, kong_discard=True), event + 1, discarder=seat)
                won_at[winner] = event + 1
            ledger.gang_shang_pao(seat, event, winners, event + 1)
            event += 1
        else:
            ledger.penalty(seat, event, everyone=data.draw(st.booleans()))
    still_in = [s for s in range(4) if ledger.in_hand[s]]
    if len(still_in) >= 2:
        ends = []
        for s in still_in:
            is_pig = data.draw(st.booleans())
            amount = data.draw(st.none() | st.integers(1, 64))
            ends.append(SeatEnd(s, is_pig, None if is_pig or amount is None else ready(amount)))
        ledger.end_of_wall(ends)

    assert sum(ledger.deltas()) == 0
    assert all(isinstance(p.amount, int) and p.amount > 0 and p.payer != p.payee for p in ledger.payments)
    # docs/RULES.md §8: nobody who has won pays or is paid for a later hand event (refunds of earlier kong money
    # and the 相公 penalty, paid to everyone by the seed text, aside).
    later = [
        p
        for p in ledger.payments
        if p.reason in ("hu", "kong", "hua_zhu", "cha_jiao", "transfer")
        for seat in (p.payer, p.payee)
        if seat in won_at and (p.event is None or p.event > won_at[seat])
    ]
    assert later == []
