"""The switches other rule sets need (docs/RULES.md §7; SBR and Mahjong Soul's 川麻): each shown to decide a
hand both ways. The hands are dealt by hand (no wall) and played through the state machine, or scored and
settled directly where the switch is a matter of fan or money only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pipeline.game.start import start_hand
from pipeline.game.state import HandState, IllegalAction
from pipeline.rules.fan import WinHand, convention, ready_value, score
from pipeline.rules.hand import Meld
from pipeline.rules.ruleset import RuleSet, RuleSetError, load_ruleset
from pipeline.rules.settle import Ledger, ReadyValue, SeatEnd
from pipeline.rules.tiles import counts_of, full_counts, kind_of, parse_tiles


def rules(**switches: Any) -> RuleSet:
    return load_ruleset({"profile": "chengdu", **switches})


def k(tile: str) -> int:
    return kind_of(tile)


def meld(kind: str, tile: str) -> Meld:
    return Meld(kind, k(tile))  # type: ignore[arg-type]


def fan(concealed: str, tile: str, ruleset: RuleSet, melds: Sequence[Meld] = (), **flags: Any) -> int:
    return score(WinHand.of(concealed, win_tile=tile, melds=melds, **flags), ruleset).fan


def deal(ruleset: RuleSet, hands: Sequence[str], que: Sequence[int | None] | None = None) -> HandState:
    return start_hand(ruleset, dealer=0, deal=[parse_tiles(h) for h in hands], que=que)


# -- fan_base ---------------------------------------------------------------------------------------------


def test_fan_base_counts_a_plain_hand_as_one_or_zero_fan_with_the_same_points() -> None:
    one, zero = rules(), rules(fan_base=0)
    for concealed, tile, fan_one, points in [
        ("111m444m789m456p7p", "7p", 1, 1),  # 平胡
        ("123s567s234s888s9s", "9s", 3, 4),  # 清一色
        ("1111m99m44p66p88p9p", "9p", 4, 8),  # 龙七对
    ]:
        a = score(WinHand.of(concealed, win_tile=tile), one)
        b = score(WinHand.of(concealed, win_tile=tile), zero)
        assert (a.fan, a.points) == (fan_one, points)
        assert (b.fan, b.points) == (fan_one - 1, points)  # the count shifts by one, the value does not
    assert "plain hand = 1 fan" in convention(one) and "plain hand = 0 fan" in convention(zero)


def test_fan_base_reads_the_cap_and_fixed_fans_in_its_own_count() -> None:
    # "capped at 3 fans in MIL rules (8 points)" (SBR p. 26): cap 3 with a 0-fan plain hand is 8 points.
    assert rules(fan_base=0, cap=3).cap_points() == 8 and rules(cap=3).cap_points() == 4
    assert rules(fan_base=0, cap=3).points(7) == 8
    with pytest.raises(ValueError, match="at least 0 fan"):
        rules(fan_base=0).points(-1)
    assert rules(fan_base=0, heavenly="fixed", heavenly_fan=0).heavenly_fan == 0  # a fixed 0-fan hand is a hand
    with pytest.raises(RuleSetError, match="heavenly_fan of at least 1"):
        rules(heavenly="fixed", heavenly_fan=0)
    with pytest.raises(RuleSetError, match="at most 1"):
        rules(fan_base=2)


# -- 带幺九, 将对, 金钩钓 -------------------------------------------------------------------------------------


def test_dai_yao_jiu_and_jiang_dui_fan_are_switches() -> None:
    # SBR has neither (Table 4, p. 26): with 0 they add nothing.
    assert fan("123m789m123s789s9m", "9m", rules()) == 3
    assert fan("123m789m123s789s9m", "9m", rules(dai_yao_jiu_fan=0)) == 1
    assert fan("222m555m888m222s5s", "5s", rules()) == 4  # 平胡 1, 对对胡 1, 将对 2
    assert fan("222m555m888m222s5s", "5s", rules(jiang_dui_fan=0)) == 2
    assert fan("222m555m888m222s5s", "5s", rules(jiang_dui_fan=3)) == 5


def test_jin_gou_diao_exposed_melds_or_a_single_wait_on_four_pungs() -> None:
    exposed = rules(jin_gou_diao_fan=1)
    golden = rules(jin_gou_diao_fan=1, jin_gou_diao="single_wait_all_pungs")
    # four exposed pungs and a lone 9s: a Golden Wait either way (SBR p. 31: 111s 333s 888s 999p + 99s = GW + AP)
    four = [meld("pong", "1s"), meld("pong", "3s"), meld("pong", "8s"), meld("pong", "9p")]
    assert fan("9s", "9s", exposed, four) == fan("9s", "9s", golden, four) == 3  # plain, all pungs, 金钩钓
    # concealed pungs count for the Golden Wait, not for "four melds exposed"
    assert fan("111m222m333m444p9p", "9p", golden) == 3
    assert fan("111m222m333m444p9p", "9p", exposed) == 2
    # all pungs but waiting on two tiles (9p or 4p): never a Golden Wait
    assert fan("111m222m333m44p99p", "9p", golden) == 2
    # a single wait on a hand that is not all pungs
    assert fan("123m456m789m111p9p", "9p", golden) == 1


def test_a_golden_wait_counts_only_the_tiles_that_exist() -> None:
    """SBR p. 30: a tile of which the player already holds all four is no wait ("exhaustive"). ``8s 999s`` beside
    a pong of 9m, a kong of 7s and a pong of 1m completes on 7s or 8s, but every 7s is in the kong: it waits on 8s
    alone, and a win on it is a Golden Wait (AP 1 + Kong 1 + GW 1 = 3 fan, 8 points in SBR's count). Twin: the
    same hand with a pong of 7s (one 7s still live) waits on two tiles: no Golden Wait."""
    golden = load_ruleset({"profile": "sbr", "jin_gou_diao": "single_wait_all_pungs"})
    kong = [meld("pong", "9m"), meld("direct", "7s"), meld("pong", "1m")]
    hand = WinHand.of("8s999s", win_tile="8s", melds=kong, que="p")
    assert (score(hand, golden).fan, score(hand, golden).points) == (3, 8)
    pong = [meld("pong", "9m"), meld("pong", "7s"), meld("pong", "1m")]
    assert score(WinHand.of("8s999s", win_tile="8s", melds=pong, que="p"), golden).fan == 1  # AP only
    # 查大叫 values a kong as the pong it was (cha_jiao_kong_fan false): its kind stays dead, the Golden Wait counts
    ready = ready_value(counts_of(parse_tiles("8s999s")), kong, golden, void=1)
    assert ready is not None and (ready.waits, ready.fan, ready.amount) == ((k("8s"),), 2, 4)


def test_sbr_counts_a_golden_wait_on_four_declared_sets() -> None:
    """SBR Table 4 p. 26: "Four melds (pungs or kongs) in hand, the winning tile completes the pair"; a melded set
    "contains a tile claimed from a discard" (p. 13): four standing pungs waiting on the pair are no Golden Wait
    (All Pungs, 1 fan); four declared sets are (2 fan), a concealed kong among them (declared, shown) too."""
    sbr = load_ruleset("sbr")
    assert sbr.jin_gou_diao == "exposed_melds"
    assert fan("111m222m333m444p9p", "9p", sbr) == 1
    four = [meld("pong", "1s"), meld("pong", "3s"), meld("pong", "8s"), meld("pong", "9p")]
    assert fan("9s", "9s", sbr, four) == 2
    with_concealed = [meld("pong", "1s"), meld("pong", "3s"), meld("concealed", "8s"), meld("pong", "9p")]
    assert fan("9s", "9s", sbr, with_concealed) == 3  # AP, GW and the Kong


# -- how patterns combine ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("concealed", "tile", "melds", "flags", "additive", "named"),
    [
        # 将对 with four melds: the game shows 将对 4, not 将对 + 金钩钓 5
        ("5s", "5s", (("pong", "2m"), ("pong", "5m"), ("pong", "8m"), ("pong", "2s")), {}, 5, 4),
        # 金钩钓 alone: 3 either way; 清金钩钓 5 either way
        ("5s", "5s", (("pong", "1m"), ("pong", "5m"), ("pong", "8m"), ("pong", "2s")), {}, 3, 3),
        ("5s", "5s", (("pong", "1s"), ("pong", "3s"), ("pong", "8s"), ("pong", "2s")), {}, 5, 5),
        # 十八罗汉 and 清十八罗汉: 6 (additive: 1 + AP 1 + 金钩钓 1 + 4 roots (+ flush 2) + shi_ba_luo_han_fan 5)
        ("2s", "2s", (("direct", "1m"), ("concealed", "3m"), ("added", "5m"), ("direct", "7s")), {}, 12, 6),
        ("2p", "2p", (("direct", "1p"), ("concealed", "3p"), ("added", "5p"), ("direct", "7p")), {}, 14, 6),
        # 龙七对 with two roots: 4 + 1 either way; 天和 on it: 6 + the root 龙七对 does not take
        ("1111m2222m44m55p7p", "7p", (), {}, 5, 5),
        ("1111m2222m44m55p7p", "7p", (), {"self_drawn": True, "heavenly": True}, 6, 7),
        # 地和 with a root (not seven pairs): 6 + 1; bonuses add to a named hand: 将对 + 海底
        ("1111m23m456m789m1p", "1p", (), {"self_drawn": True, "earthly": True}, 6, 7),
        ("5s", "5s", (("pong", "2m"), ("pong", "5m"), ("pong", "8m"), ("pong", "2s")), {"last_tile": True}, 6, 5),
    ],
)
def test_fan_combination_additive_or_named_hand(
    concealed: str,
    tile: str,
    melds: tuple[tuple[str, str], ...],
    flags: dict[str, bool],
    additive: int,
    named: int,
) -> None:
    """Mahjong Soul shows one named hand, the highest that fits (将对 4, 金钩钓 3, 清金钩钓 5, 十八罗汉 6, 清十八罗汉 6,
    天和 6, 地和 6, …), and adds only 根, 杠上花, 杠上炮, 抢杠 and 海底捞月; 龙七对 takes one 根 and 十八罗汉 four
    (the replay editor's calcFanChuanma, ans2Fan). The same hand under majsoul with the additive count is the twin."""
    soul = load_ruleset("majsoul")
    assert soul.fan_combination == "named_hand"
    hand = WinHand.of(concealed, win_tile=tile, melds=[meld(a, b) for a, b in melds], **flags)
    assert score(hand, load_ruleset("majsoul", fan_combination="additive")).fan == additive
    assert score(hand, soul).fan == named


# -- 查大叫: the kong's fan ------------------------------------------------------------------------------------


def test_cha_jiao_kong_fan_counts_or_leaves_out_declared_kongs() -> None:
    # SBR p. 32: 333s (pung) 4444s (kong) 111m (pung) 7778m waits on 6m/8m/9m; with 8m All Pungs, valued at 1 fan.
    melds = [meld("pong", "3s"), meld("direct", "4s"), meld("pong", "1m")]
    hand = counts_of(parse_tiles("7778m"))
    sbr_like = rules(fan_base=0, cha_jiao_amount="max", cha_jiao_kong_fan=False)
    without = ready_value(hand, melds, sbr_like)
    with_kongs = ready_value(hand, melds, rules(fan_base=0, cha_jiao_amount="max", cha_jiao_kong_fan=True))
    assert without is not None and with_kongs is not None
    assert set(without.waits) == {k("6m"), k("8m"), k("9m")}
    assert (without.fan, without.win_tile, without.amount) == (1, k("8m"), 2)
    assert (with_kongs.fan, with_kongs.win_tile, with_kongs.amount) == (2, k("8m"), 4)


# -- 地胡 and 天胡 ---------------------------------------------------------------------------------------------

DEALER_FIRST_5P = (
    "123456789m119s1p5p",  # the dealer: discards 5p first, left holding three suits
    "123p444p678p99p46p",  # waits on 5p
    "123m456m789m55p67p",  # waits on 5p and 8p
    "222s333s444s555s6s",  # waits on 6s (and 3s, 4s, 5s, 7s)
)


def test_earthly_on_the_dealers_first_discard_or_only_on_ones_first_draw() -> None:
    for on, expected in [("first_draw_or_discard", "di_hu"), ("first_draw", "ping_hu")]:
        state = deal(rules(earthly="fixed", earthly_fan=6, earthly_on=on), DEALER_FIRST_5P)
        state.discard(0, k("5p"))
        state.hu(1, k("5p"), 0)
        assert state.wins[0].score.patterns[0].id == expected
    # on one's own first draw it is 地胡 under both
    for on in ("first_draw_or_discard", "first_draw"):
        state = deal(rules(earthly="fixed", earthly_fan=6, earthly_on=on), DEALER_FIRST_5P)
        state.discard(0, k("5p"))
        state.draw(1, k("2p"))
        state.discard(1, k("2p"))
        state.draw(2, k("2p"))
        state.discard(2, k("2p"))
        state.draw(3, k("6s"))
        state.hu(3, k("6s"), None)
        assert state.wins[-1].score.fan == 6


def test_heavenly_after_kong() -> None:
    hands = ("1111m234m567m88p99p", "123s456s789s2p3p4p5s", "123p456p789s1s2s3s4s", "222m333m444m666p7p")
    fans = {}
    for after in (False, True):
        state = deal(rules(heavenly="fixed", heavenly_fan=6, heavenly_after_kong=after), hands)
        state.kong(0, k("1m"), "concealed")
        state.draw(0, k("9p"))
        state.hu(0, k("9p"), None)
        fans[after] = state.wins[0].score.fan
    assert fans == {False: 3, True: 6}  # plain, 根 (the kong), 杠上花; or 天胡's fixed 6


# -- 抢杠 ------------------------------------------------------------------------------------------------------

ROB = (
    "5p123s456s789s1p2p3p9p",  # the dealer: discards 5p
    "55p222m333m444m8s9s",  # pongs 5p, later adds the fourth
    "123m456m789m46p99p",  # waits on 5p
    "111s222s333s444p6p",
)


def to_added_kong(ruleset: RuleSet, que: Sequence[int | None] | None = None) -> HandState:
    state = deal(ruleset, ROB, que)
    state.discard(0, k("5p"))
    state.pong(1, k("5p"), 0)
    state.discard(1, k("9s"))
    for seat, tile in [(2, "7p"), (3, "8p"), (0, "8p")]:
        state.draw(seat, k(tile))
        state.discard(seat, k(tile))
    state.draw(1, k("5p"))
    state.kong(1, k("5p"), "added")
    return state


def test_rob_kong_allows_robbing_an_added_kong_or_lets_it_stand() -> None:
    robbed = to_added_kong(rules())
    assert robbed.phase == "rob"
    robbed.hu(2, k("5p"), 1, rob_kong=True)
    assert robbed.wins[0].how == "rob_kong" and not any(p.reason == "kong" for p in robbed.ledger.payments)
    stands = to_added_kong(rules(rob_kong=False))
    assert (stands.phase, stands.turn) == ("draw", 1)  # no rob window: the kong's player draws the replacement
    assert [m.kind for m in stands.melds[1]] == ["added"]
    assert sum(p.amount for p in stands.ledger.payments if p.reason == "kong") == 3  # paid at once, always
    with pytest.raises(IllegalAction, match="no 抢杠") as refused:
        stands.hu(2, k("5p"), 1, rob_kong=True)
    assert refused.value.code == "CLAIM_NOT_ALLOWED"


# -- a pong or kong in one's void suit ---------------------------------------------------------------------


def test_void_meld_forbid_or_penalty_and_where_the_penalty_goes() -> None:
    que = (2, 1, 2, 1)  # seat 1 declares 筒 (p) void and holds 55p
    with pytest.raises(IllegalAction, match="void suit"):
        to_added_kong(rules(que_declared=True), que)
    pot = to_added_kong(rules(que_declared=True, void_meld="penalty", void_meld_penalty=48, penalty_to="pot"), que)
    penalties = [(p.payer, p.payee, p.amount, p.event) for p in pot.ledger.payments if p.reason == "penalty"]
    assert penalties == [(1, None, 48, 1)]  # the pong (event 1) pays the pot once; the added kong does not again
    facts = pot.facts()
    assert sum(facts.deltas) == -48 and pot.ledger.pot == 48
    players = to_added_kong(rules(que_declared=True, void_meld="penalty", void_meld_penalty=48), que)
    assert [(p.payer, p.payee, p.amount) for p in players.ledger.payments if p.reason == "penalty"] == [
        (1, 0, 48),
        (1, 2, 48),
        (1, 3, 48),
    ]
    assert sum(players.facts().deltas) == 0


def test_penalty_to_players_or_pot_at_the_walls_end() -> None:
    def end(**switches: Any) -> Ledger:
        ledger = Ledger(rules(void_end_penalty=48, **switches))
        ledger.win(3, score(WinHand.of("111m444m789m456p7p", win_tile="7p"), ledger.rules), 1, discarder=2)
        ledger.end_of_wall([SeatEnd(0, pig=False, ready=None, void_penalty=True), not_ready(1), not_ready(2)])
        return ledger

    pot = end(penalty_to="pot")
    assert [(p.payer, p.payee, p.amount) for p in pot.payments if p.reason == "penalty"] == [(0, None, 48)]
    assert sum(pot.deltas()) == -48
    players = end()
    assert [(p.payer, p.payee, p.amount) for p in players.payments if p.reason == "penalty"] == [
        (0, 1, 48),
        (0, 2, 48),
    ]
    assert sum(players.deltas()) == 0


def not_ready(seat: int) -> SeatEnd:
    return SeatEnd(seat=seat, pig=False, ready=None)


def test_void_end_penalty_and_its_waiver() -> None:
    # SBR p. 11: the 48 is waived when every discard the player made was a void tile.
    state = deal(rules(que_declared=True, void_end_penalty=48), ROB, que=(2, 0, 2, 1))
    assert state.seat_end(1).void_penalty is False  # seat 1 holds 万, its void suit, and has discarded nothing
    state.discard(0, k("5p"))
    state.draw(1, k("1m"))
    state.discard(1, k("1m"))  # a void tile
    assert state.seat_end(1).void_penalty is False
    for seat, tile in [(2, "7p"), (3, "8p"), (0, "8p"), (1, "6p")]:
        state.draw(seat, k(tile))
        state.discard(seat, k(tile))
    assert state.seat_end(1).void_penalty is True  # it discarded 6p, not of its void suit: no waiver
    assert state.seat_end(2).void_penalty is False  # seat 2 (void s) holds no 条


def test_void_end_penalty_without_a_declared_void_is_holding_three_suits() -> None:
    state = deal(rules(void_end_penalty=48), ROB)
    state.discard(0, k("5p"))
    assert state.seat_end(0).void_penalty is False  # 123s456s789s1p2p3p9p: two suits
    assert state.seat_end(1).void_penalty is True  # 55p 222m333m444m 8s9s: three suits, and no waiver to earn


# -- 查花猪: whom, when and how much ------------------------------------------------------------------------------


def pig(seat: int) -> SeatEnd:
    return SeatEnd(seat=seat, pig=True, ready=None)


def ready_seat(seat: int, amount: int) -> SeatEnd:
    return SeatEnd(seat=seat, pig=False, ready=ReadyValue(amount=amount, fan=1, win_tile=0, waits=(0,)))


def pig_moves(ledger: Ledger) -> list[tuple[int, int | None, int]]:
    return [(p.payer, p.payee, p.amount) for p in ledger.payments if p.reason == "hua_zhu"]


@pytest.mark.parametrize(
    ("payees", "expected"),
    [
        ("still_in", [(0, 2, 10), (1, 2, 10)]),
        ("non_pigs", [(0, 2, 10), (0, 3, 10), (1, 2, 10), (1, 3, 10)]),
        ("all_others", [(0, 1, 10), (0, 2, 10), (1, 0, 10), (1, 2, 10)]),  # pigs pay pigs; the winner is paid nothing
        # every other player, the winner and the other pig alike
        ("everyone", [(0, 1, 10), (0, 2, 10), (0, 3, 10), (1, 0, 10), (1, 2, 10), (1, 3, 10)]),
    ],
)
def test_hua_zhu_payees(payees: str, expected: list[tuple[int, int, int]]) -> None:
    ledger = Ledger(rules(hua_zhu_payees=payees))
    ledger.win(3, score(WinHand.of("111m444m789m456p7p", win_tile="7p"), ledger.rules), 1, discarder=2)
    ledger.end_of_wall([pig(0), pig(1), not_ready(2)])
    assert pig_moves(ledger) == expected


def test_hua_zhu_cha_jiao_or_min_fan() -> None:
    ledger = Ledger(rules(hua_zhu_amount="cha_jiao_or_fan", hua_zhu_min_fan=2, hua_zhu_payees="non_pigs"))
    ledger.win(3, score(WinHand.of("111m444m789m456p7p", win_tile="7p"), ledger.rules), 1, discarder=2)
    ledger.end_of_wall([pig(0), ready_seat(1, 3), not_ready(2)])
    # seat 1 is ready for 3 (more than a 2-fan hand, 2); seat 2 is not ready, seat 3 has won: the 2-fan hand
    assert pig_moves(ledger) == [(0, 1, 3), (0, 2, 2), (0, 3, 2)]


def test_hua_zhu_at_three_hu_checks_the_player_left() -> None:
    paid = {}
    for at_three in (False, True):
        state = deal(rules(hua_zhu_at_three_hu=at_three, hua_zhu_payees="non_pigs"), DEALER_FIRST_5P)
        state.discard(0, k("5p"))
        state.hu(1, k("5p"), 0)
        state.hu(2, k("5p"), 0)
        state.draw(3, k("6s"))
        state.hu(3, k("6s"), None)
        assert state.over
        paid[at_three] = pig_moves(state.ledger)
        state.check_invariants()
    # the dealer holds 123456789m 11 9s 1p, three suits: a pig, paying every non-pig 10 × base (no cap)
    assert paid == {False: [], True: [(0, 1, 10), (0, 2, 10), (0, 3, 10)]}


# -- the last discard -----------------------------------------------------------------------------------------

LAST = (
    "123m456m789m111p7p9s",  # the dealer: discards 9s first, then waits on 7p alone
    "222m333m444m666p8s",
    "55p777m888m999m1s7p",  # holds 55p to pong the last discard, then discards 7p
    "111s222s333s444p6p",
)


def to_last_discard(ruleset: RuleSet) -> HandState:
    """Deal LAST, then every tile left is drawn and discarded at once, 7p first and a 5p last: seat 3 draws
    the last wall tile (5p) and discards it."""
    state = deal(ruleset, LAST)
    state.discard(0, k("9s"))
    pool = [kind for kind, n in enumerate(full_counts()) for _ in range(n - state.seen[kind])]
    pool.sort(key=lambda kind: (kind != k("7p"), kind == k("5p")))
    seat = 0
    for tile in pool:
        seat = state.next_in(seat)
        state.draw(seat, tile)
        state.discard(seat, tile)
    assert (state.left, seat, state.window and state.window.tile) == (0, 3, k("5p"))
    return state


def test_call_on_last_discard_none_or_pong_and_hu() -> None:
    closed = to_last_discard(rules())
    with pytest.raises(IllegalAction, match="last discard"):
        closed.pong(2, k("5p"), 3)
    open_ = to_last_discard(rules(call_on_last_discard="pong_and_hu"))
    with pytest.raises(IllegalAction, match="last discard"):  # never a kong: there is no replacement
        open_.kong(2, k("5p"), "direct", 3)
    open_.pong(2, k("5p"), 3)
    open_.discard(2, k("7p"))  # the new last discard, again open to a win (or a pong)
    open_.hu(0, k("7p"), 2)
    win = open_.wins[0]
    assert "hai_di" in {p.id for p in win.score.patterns}  # 海底: a win on the last discard of the chain
    open_.close()
    assert open_.over
    open_.check_invariants()


def test_the_pong_chain_on_the_last_discard_ends_when_nobody_claims() -> None:
    state = to_last_discard(rules(call_on_last_discard="pong_and_hu"))
    state.pong(2, k("5p"), 3)
    state.discard(2, k("1s"))
    state.close()
    assert state.over and not state.wins


def test_dealer_next_nearest_winner_after_a_double_win() -> None:
    # 一炮多响 on the dealer's first discard, seats 1 and 2: the discarder deals next, or the winner nearest it.
    dealers = {}
    for rule in ("first_winner", "nearest_winner", "dealt_in"):
        state = deal(rules(dealer_next=rule), DEALER_FIRST_5P)
        state.discard(0, k("5p"))
        state.hu(2, k("5p"), 0)  # the record may list the farther winner first
        state.hu(1, k("5p"), 0)
        dealers[rule] = state.next_dealer()
    assert dealers == {"first_winner": 0, "nearest_winner": 1, "dealt_in": 0}


# -- 定缺: a Hu with a void-suit tile ---------------------------------------------------------------------------


def test_void_win_penalty_on_top_of_the_false_hu_penalty() -> None:
    """SBR p. 31: a Hu declared with a void-suit tile is a false Hu (8 to each player still in, p. 30) and costs
    "48 on top of the false-Hu penalty", to the pot here. Seat 1 holds only 筒 and declared 筒 void: its Hu on
    the dealer's 5p pays 3 × 8 and 48. Twins: the same Hu with 万 declared void is a valid win; with
    void_win_penalty 0 the false Hu pays the 24 alone."""
    from pipeline.formats.notation import parse_events
    from pipeline.rules.tiles import TILE_NAMES
    from pipeline.validate import validate

    record = {
        "format": "xzlog/1",
        "hand_id": "void-hu",
        "ruleset": "sbr",
        "players": ["a", "b", "c", "d"],
        "dealer": 0,
        "deal": [
            [TILE_NAMES[t] for t in parse_tiles(h)]
            for h in ("123456789m1119s5p", "123p444p678p99p46p", "123m456m789m55p67p", "222s333s444s555s6s")
        ],
        "que": ["p", "p", "s", "m"],
        "events": parse_events("0-5p 1h5p<0"),
    }
    void_hu = validate(record)
    assert [i.code for i in void_hu.issues] == ["WIN_VOID_SUIT"]
    assert [(p.payer, p.payee, p.amount, p.event) for p in void_hu.payments] == [
        (1, 0, 8, 1),
        (1, 2, 8, 1),
        (1, 3, 8, 1),
        (1, None, 48, 1),
    ]
    without = validate({**record, "ruleset": {"profile": "sbr", "void_win_penalty": 0}})
    assert sorted((p.payer, p.payee, p.amount) for p in without.payments) == [(1, 0, 8), (1, 2, 8), (1, 3, 8)]
    assert [i.code for i in validate({**record, "que": ["p", "m", "s", "m"]}).issues] == ["TURN_INCOMPLETE"]  # a win


def test_declared_patterns_count_as_the_profile_combines_them() -> None:
    """A settlement record's declared patterns are counted as its profile counts a hand: Mahjong Soul's 将对 with
    four melds is 将对 4 (the twin, additive, 5); 地和 declared with a 根 is 6 + 1 there, a fixed 6 in an additive
    count."""
    from pipeline.rules.fan import declared_score

    soul, additive = load_ruleset("majsoul"), load_ruleset("majsoul", fan_combination="additive")
    pungs = ["dui_dui_hu", "jiang_dui", "jin_gou_diao"]
    assert declared_score(pungs, soul, self_drawn=False).fan == 4
    assert declared_score(pungs, additive, self_drawn=False).fan == 5
    earthly = declared_score(["di_hu", "gen"], soul, self_drawn=True)
    assert (earthly.fan, earthly.per_payer, earthly.title_zh) == (7, 33000, "地胡")
    assert declared_score(["di_hu", "gen"], additive, self_drawn=True).fan == 6


def test_cha_jiao_fourth_tile_takes_true_false_or_xu_ting() -> None:
    assert rules(cha_jiao_fourth_tile="xu_ting").cha_jiao_fourth_tile == "xu_ting"
    assert rules(cha_jiao_fourth_tile=True).cha_jiao_fourth_tile is True
    for bad in ("xuting", 1, None):
        with pytest.raises(RuleSetError, match="takes true, false or one of 'xu_ting'"):
            rules(cha_jiao_fourth_tile=bad)


def _sheet(payments: list[dict[str, Any]] | None, deltas: list[int]) -> dict[str, Any]:
    result: dict[str, Any] = {"deltas": deltas, "wins": [{"seat": 2, "event": 1, "patterns": [], "fan": 0}]}
    if payments is not None:
        result["payments"] = payments
    return {
        "format": "xzlog/1",
        "level": "settlement",
        "hand_id": "sheet",
        "ruleset": "sbr",
        "players": ["a", "b", "c", "d"],
        "dealer": 0,
        "events": [{"t": "kong", "seat": 1, "kind": "added"}, {"t": "hu", "seat": 2, "from": 3}],
        "end": [
            {"seat": 0, "state": "ready", "fan": 0},
            {"seat": 1, "state": "ready", "fan": 0},
            {"seat": 3, "state": "ready", "fan": 0},
        ],
        "result": result,
    }


def test_a_settlement_record_shows_no_freshness_and_no_void_penalties() -> None:
    """SBR pays a Promoted Kong (the tile just drawn) and not a Postponed one (p. 27-28), and charges 48 for a pong of
    the void suit (p. 31): a score sheet shows neither draws nor pongs, so its claim decides, listed as not checked.
    Without itemised payments the kong is taken as fresh; a claimed penalty a seat pays itself moves nothing."""
    from pipeline.validate import validate

    hu = {"from": 3, "to": 2, "amount": 1, "reason": "hu", "event": 1}
    postponed = validate(_sheet([hu], [0, 0, 1, -1]))
    assert postponed.issues == () and any("just drawn (as the claimed" in n for n in postponed.not_checked)
    fresh = validate(_sheet(None, [-1, 3, 0, -2]))
    assert fresh.issues == () and any("just drawn (taken as so)" in n for n in fresh.not_checked)
    assert [(p.payer, p.amount) for p in fresh.payments if p.reason == "kong"] == [(0, 1), (2, 1), (3, 1)]
    pong = {"from": 0, "to": None, "amount": 48, "reason": "penalty", "event": None}
    void = validate(_sheet([hu, pong], [-48, 0, 1, -1]))
    assert void.issues == () and any("1 claimed void-suit penalty" in n for n in void.not_checked)
    itself = {"from": 0, "to": 0, "amount": 48, "reason": "penalty", "event": None}
    players = validate({**_sheet([hu, itself], [0, 0, 1, -1]), "ruleset": {"profile": "sbr", "penalty_to": "players"}})
    assert [i.code for i in players.issues] == ["SETTLE_EXTRA"]
    # a declared void end state gives its 48: the claimed one matches it, nothing is taken as claimed
    declared = _sheet([hu, {**pong, "from": 3}], [0, 0, 1, -49])
    declared["end"][2] = {"seat": 3, "state": "ready", "fan": 0, "void": True}
    v = validate(declared)
    assert v.issues == () and not any("void-suit penalt" in n for n in v.not_checked)
    # two added kongs: one note for both
    two = _sheet(
        [hu, *({"from": s, "to": 1, "amount": 1, "reason": "kong", "event": 0} for s in (0, 2, 3))], [-1, 3, 0, -2]
    )
    two["events"] = [*two["events"], {"t": "kong", "seat": 3, "kind": "added"}]
    v = validate(two)
    assert v.issues == () and sum("just drawn" in n for n in v.not_checked) == 1
