"""Fan and points (docs/RULES.md §3): the worked checks, every pattern row, the best reading, the switches.

Chengdu profile, no cap, base 1 unless a test says otherwise. Points = base × 2^(fan−1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pipeline.rules.fan import CONVENTION, PATTERNS, NotAWin, ReadyValue, Score, WinHand, ready_value, score
from pipeline.rules.hand import Meld
from pipeline.rules.ruleset import RuleSet, load_ruleset
from pipeline.rules.tiles import TileError, counts_of, kind_of, parse_tiles

CHENGDU = load_ruleset("chengdu")
APP = load_ruleset("app")


def meld(kind: str, tile: str) -> Meld:
    return Meld(kind, kind_of(tile))  # type: ignore[arg-type]


def win(concealed: str, tile: str, rules: RuleSet = CHENGDU, melds: Sequence[Meld] = (), **flags: Any) -> Score:
    """Score the hand ``concealed`` (before the winning tile) winning on ``tile``."""
    return score(WinHand.of(concealed, win_tile=tile, melds=melds, **flags), rules)


def on(flag: str) -> dict[str, Any]:
    """The keyword setting one situational flag."""
    return {flag: True}


def fan_ids(s: Score) -> dict[str, int]:
    return {hit.id: hit.fan for hit in s.patterns}


# -- the worked checks of docs/RULES.md §3 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("concealed", "tile", "fan", "points", "title"),
    [
        ("111m444m789m456p7p", "7p", 1, 1, "平胡"),
        ("111m444m222p999p6p", "6p", 2, 2, "对对胡"),
        ("123s567s234s888s9s", "9s", 3, 4, "清一色"),
        ("123m789m123s789s9m", "9m", 3, 4, "带幺九"),
        ("11m22m99m44p66p88p9p", "9p", 3, 4, "七对"),
        ("1111m99m44p66p88p9p", "9p", 4, 8, "龙七对"),
        ("111m444m222m999m6m", "6m", 4, 8, "清对"),
        ("222m555m888m222s5s", "5s", 4, 8, "将对"),
    ],
)
def test_worked_check(concealed: str, tile: str, fan: int, points: int, title: str) -> None:
    s = win(concealed, tile)
    assert (s.fan, s.points, s.title_zh) == (fan, points, title)


# -- the pattern table ----------------------------------------------------------------------------------


def test_plain_hand_is_one_fan() -> None:
    # "1番：平胡（又叫屁胡），即缺一门，四坎牌加一对将，1元" (seed 000)
    assert fan_ids(win("111m444m789m456p7p", "7p")) == {"ping_hu": 1}


def test_all_pungs_counts_kongs_as_pungs() -> None:
    # "大对子（2分）+ 一杠（1分）= 3分：2222筒 111万 444万 999筒 66筒" (seed 003)
    assert win("111m444m999p6p", "6p", melds=[meld("concealed", "2p")]).fan == 3


def test_qing_dui_is_flush_and_all_pungs() -> None:
    s = win("111m444m222m999m6m", "6m")
    assert fan_ids(s) == {"ping_hu": 1, "dui_dui_hu": 1, "qing_yi_se": 2}


def test_jiang_dui_is_all_pungs_of_two_five_eight() -> None:
    s = win("222m555m888m222s5s", "5s")
    assert fan_ids(s) == {"ping_hu": 1, "dui_dui_hu": 1, "jiang_dui": 2}


def test_jiang_dui_needs_the_pair_in_two_five_eight_too() -> None:
    assert win("222m555m888m222s6s", "6s").fan == 2


def test_two_five_eight_seven_pairs_are_not_jiang_dui() -> None:
    # 将对 is "all pungs, every tile a 2, 5 or 8": seven pairs are no pungs.
    assert "jiang_dui" not in fan_ids(win("22m55m88m22p55p88p2m", "2m"))


def test_qing_qi_dui_is_five_fan() -> None:
    # "清七对（清一色的七小对）……即16元" (seed 000)
    s = win("11m22m44m55m77m88m9m", "9m")
    assert (s.fan, s.points, s.title_zh) == (5, 16, "清七对")


def test_qing_yao_jiu_is_five_fan() -> None:
    # "清幺九，清一色的幺九，如11 123 789 789 789筒……也是16元" (seed 000)
    s = win("11p123p789p789p78p", "9p")
    assert (s.fan, s.points, s.title_zh) == (5, 16, "清幺九")


def test_dragon_seven_pairs_each_further_dragon_adds_one() -> None:
    # "如果带龙七对，有几龙，再翻几番" (seed 000)
    assert win("1111m99m44p66p88p9p", "9p").fan == 4
    assert win("1111m2222m99m44p6p", "6p").fan == 5
    assert win("1111m2222m9999m4p", "4p").fan == 6


def test_pure_dragon_seven_pairs() -> None:
    s = win("1111m22m44m55m77m8m", "8m")
    assert (s.fan, s.title_zh) == (6, "清龙七对")


def test_a_kong_is_a_root() -> None:
    # "（3）屁胡牌型+一杠……2元" (seed 000);
    # "平胡(1分) + 一杠(1分) = 2分：2222筒 123万 345万 999筒 66筒" (seed 003)
    assert win("123m345m999p6p", "6p", melds=[meld("direct", "2p")]).fan == 2


def test_four_concealed_copies_are_a_root() -> None:
    # "如111万 123万 444万 999筒 对6筒，有四个1万" (seed 000): plain + one root, 2 fan
    assert win("111m123m444m999p6p", "6p").fan == 2


def test_a_pong_and_the_fourth_tile_concealed_are_a_root() -> None:
    # "胡牌时，每有一扛或一根加1分" (seed 003)
    assert win("123m789m456p7p", "7p", melds=[meld("pong", "1m")]).fan == 2


def test_every_root_adds_one() -> None:
    # "清对8元，带三杠，再翻3番：8--&16--&32--&64元" (seed 000)
    kongs = [meld("direct", "1m"), meld("direct", "4m"), meld("direct", "2m")]
    s = win("999m6m", "6m", melds=kongs)
    assert (s.fan, s.points) == (7, 64)


def test_terminals_reading_wins_over_pungs() -> None:
    # 111222333m reads as 111 222 333 or as 123 123 123; with 789m 99m only the chows hold a 1 or 9 each.
    assert win("111222333789m9m", "9m").fan == 5


def test_pungs_reading_wins_over_chows() -> None:
    assert win("111222333m444p7p", "7p").fan == 2


def test_seven_pairs_reading_wins_over_chows() -> None:
    assert win("112233m445566p7p", "7p").fan == 3


def test_dragon_seven_pairs_reading_wins_over_a_flush_with_roots() -> None:
    # 1111 2222 3333 44m: chows 123 ×4 and 44 (flush + 3 roots = 6), or seven pairs with three dragons (8).
    assert win("111122223333m4m", "4m").fan == 8


# -- the examples the rules texts get wrong: trust the definitions ---------------------------------------


def test_app_flush_with_one_root_example_holds_two_roots() -> None:
    # "清一色(3分) + 一根（1分）= 4分：123条 567条 678 条 888条 77条" (seed 003): four 7s and four 8s.
    assert fan_ids(win("123s567s678s888s7s", "7s"))["gen"] == 2


def test_app_flush_with_two_roots_example_is_no_win() -> None:
    # "清一色(3分) + 二根（2分）= 5分：124条 567条 789 条 888条 77条" (seed 003): 124 is not a set.
    with pytest.raises(NotAWin, match="four sets and a pair"):
        win("124s567s789s888s7s", "7s")


def test_jiang_dui_example_holds_three_suits() -> None:
    # "将对：即二、五、八的大对子……例: 222万 555万 888万 222条 55筒" (seeds 000 and 003)
    with pytest.raises(NotAWin, match="three suits"):
        win("222m555m888m222s5p", "5p")


def test_app_plain_with_a_root_example_holds_no_root() -> None:
    # "平胡(1分) + 带一根(1分) = 2分：123万 345万 222筒 999筒 66筒" (seed 003): no kind held four times.
    assert win("123m345m222p999p6p", "6p").fan == 1


def test_app_double_dragon_example_holds_no_dragon() -> None:
    # "暗七对(3分) + 2根（2分）= 双龙七对（5分）：11万 22万 99万 44筒 66筒 11筒 99筒" (seed 003):
    # seven plain pairs, no four of a kind.
    assert win("11m22m99m44p66p11p9p", "9p").fan == 3


# -- situational fan ------------------------------------------------------------------------------------


def test_gang_shang_hua_adds_one_fan_chengdu_two_app() -> None:
    # "杠上花：1番" (seed 000); "杠上花加2分" (seed 003)
    def added(rules: RuleSet) -> int:
        kong = [meld("concealed", "9p")]
        on_kong = win("111m444m789m7p", "7p", rules, kong, self_drawn=True, after_kong=True)
        return on_kong.fan - win("111m444m789m7p", "7p", rules, kong, self_drawn=True).fan

    assert (added(CHENGDU), added(APP)) == (1, 2)


def test_gang_shang_hua_is_a_self_drawn_win() -> None:
    assert "gang_shang_hua" not in fan_ids(win("111m444m789m456p7p", "7p", after_kong=True))


def test_gang_shang_pao_adds_one_fan() -> None:
    # "1番，玩家在杠牌时，先杠一张牌，再打掉一张牌……这种情况叫杠上炮" (seed 000)
    assert win("111m444m789m456p7p", "7p", kong_discard=True).fan == 2
    off = load_ruleset("chengdu", gang_shang_pao_fan=0)
    assert win("111m444m789m456p7p", "7p", off, kong_discard=True).fan == 1


def test_gang_shang_pao_is_a_win_on_a_discard() -> None:
    assert "gang_shang_pao" not in fan_ids(win("111m444m789m456p7p", "7p", kong_discard=True, self_drawn=True))


def test_robbing_a_kong_adds_one_fan() -> None:
    # "（2）抢杠胡，即在他人杠时抢牌胡，2元" (seed 000)
    assert win("111m444m789m456p7p", "7p", rob_kong=True).fan == 2
    off = load_ruleset("chengdu", rob_kong_fan=0)
    assert win("111m444m789m456p7p", "7p", off, rob_kong=True).fan == 1


def test_haidi_adds_one_fan() -> None:
    # "海底：最后一张牌胡牌的再加一番，不管这张牌是你自摸还是别人点炮" (seed 000)
    assert win("111m444m789m456p7p", "7p", last_tile=True).fan == 2
    off = load_ruleset("chengdu", haidi_fan=0)
    assert win("111m444m789m456p7p", "7p", off, last_tile=True).fan == 1


def test_haidi_on_a_kong_replacement_adds_both() -> None:
    # "有时候海底花多加一番（即杠上花是最后一张牌胡牌）" (seed 000)
    kong = [meld("concealed", "9p")]
    s = win("111m444m789m7p", "7p", melds=kong, self_drawn=True, after_kong=True, last_tile=True)
    assert s.fan == 4  # plain, root, 杠上花, 海底


@pytest.mark.parametrize(
    ("mode", "fan", "per_payer"),
    [("base", 1, 2), ("fan", 2, 2), ("none", 1, 1)],
)
def test_self_draw_adds_base_or_fan_or_nothing(mode: str, fan: int, per_payer: int) -> None:
    # "（4）自摸。现在流行自摸加底，底就是一倍点数，底钱" (seed 000, listed among the 2-fan items)
    s = win("111m444m789m456p7p", "7p", load_ruleset("chengdu", self_draw=mode), self_drawn=True)
    assert (s.fan, s.per_payer) == (fan, per_payer)


def test_a_discard_win_pays_the_hand_value() -> None:
    s = win("111m444m789m456p7p", "7p")
    assert s.per_payer == s.points == 1


def test_root_fan_switch() -> None:
    no_roots = load_ruleset("chengdu", root_fan=0)
    assert win("1111m99m44p66p88p9p", "9p", no_roots).fan == 3


# -- cap ------------------------------------------------------------------------------------------------


def test_cap_limits_points_not_fan() -> None:
    s = win("11m22m44m55m77m88m9m", "9m", load_ruleset("chengdu", cap=4))
    assert (s.fan, s.points, s.capped) == (5, 8, True)


def test_uncapped_hand_is_not_capped() -> None:
    s = win("11m22m44m55m77m88m9m", "9m")
    assert (s.points, s.capped) == (16, False)


def test_hand_at_the_cap_is_not_capped() -> None:
    assert not win("11m22m44m55m77m88m9m", "9m", load_ruleset("chengdu", cap=5)).capped


def test_self_draw_base_is_added_on_top_of_the_cap() -> None:
    s = win("11m22m44m55m77m88m9m", "9m", load_ruleset("chengdu", cap=3), self_drawn=True)
    assert (s.points, s.per_payer) == (4, 5)


def test_base_scales_points() -> None:
    assert win("123s567s234s888s9s", "9s", load_ruleset("chengdu", base=5)).points == 20


# -- heavenly and earthly hands -------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["heavenly", "earthly"])
def test_heavenly_and_earthly_are_normal_hands_in_chengdu(flag: str) -> None:
    # "地胡……就当正常胡牌算，该几番就几番" (seed 000)
    assert win("111m444m789m456p7p", "7p", **on(flag)).fan == 1


@pytest.mark.parametrize(("flag", "title"), [("heavenly", "天胡"), ("earthly", "地胡")])
def test_heavenly_and_earthly_are_eight_fan_in_the_app(flag: str, title: str) -> None:
    # "8分：（1）天胡……（2）地胡" (seed 003)
    s = win("111m444m789m456p7p", "7p", APP, **on(flag))
    assert (s.fan, s.points, s.title_zh, len(s.patterns)) == (8, 128, title, 1)


@pytest.mark.parametrize("flag", ["heavenly", "earthly"])
def test_heavenly_and_earthly_modes(flag: str) -> None:
    def fan(mode: str) -> int:
        rules = load_ruleset("app", cap=3, **{flag: mode})
        return win("111m444m789m456p7p", "7p", rules, **on(flag)).fan

    assert {mode: fan(mode) for mode in ("normal", "fixed", "cap")} == {"normal": 1, "fixed": 8, "cap": 3}


@pytest.mark.parametrize(("flag", "fan_switch"), [("heavenly", "heavenly_fan"), ("earthly", "earthly_fan")])
def test_fixed_heavenly_fan_is_a_switch(flag: str, fan_switch: str) -> None:
    rules = load_ruleset("app", **{fan_switch: 6})
    assert win("111m444m789m456p7p", "7p", rules, **on(flag)).fan == 6


def test_heavenly_mode_does_not_touch_ordinary_wins() -> None:
    assert win("111m444m789m456p7p", "7p", APP).fan == 1


# -- the extras, off unless a profile enables them ------------------------------------------------------

THREE_KONGS = [meld("concealed", "1m"), meld("direct", "4m"), meld("added", "2p")]
EXTRAS = {
    # switch: (a hand that has it, a like hand that has not)
    "jin_gou_diao_fan": (
        ("6p", "6p", [meld("pong", "1m"), meld("pong", "4m"), meld("pong", "2p"), meld("direct", "9p")]),
        ("123m6p", "6p", [meld("pong", "1m"), meld("pong", "2p"), meld("direct", "9p")]),
    ),
    "men_qing_fan": (
        ("111m789m456p7p", "7p", [meld("concealed", "4m")]),
        ("111m789m456p7p", "7p", [meld("pong", "4m")]),
    ),
    "duan_yao_fan": (("234m456m678m345p5p", "5p", []), ("234m456m678m345p1p", "1p", [])),
    "yi_tiao_long_fan": (("123456789m456p7p", "7p", []), ("123456m789p456p7p", "7p", [])),
    "shi_ba_luo_han_fan": (
        ("6p", "6p", [*THREE_KONGS, meld("concealed", "9p")]),
        ("6p", "6p", [*THREE_KONGS, meld("pong", "9p")]),
    ),
}


@pytest.mark.parametrize("profile", ["chengdu", "app"])
@pytest.mark.parametrize("switch", sorted(EXTRAS))
def test_extras_are_off_by_default(profile: str, switch: str) -> None:
    concealed, tile, melds = EXTRAS[switch][0]
    pattern = switch.removesuffix("_fan")
    assert pattern not in fan_ids(win(concealed, tile, load_ruleset(profile), melds))


@pytest.mark.parametrize("switch", sorted(EXTRAS))
def test_extras_add_their_fan_when_enabled(switch: str) -> None:
    # "比如增加“一条龙”，如同“幺九”……的规格处理，算3番" (seed 000): an extra is a profile's choice.
    concealed, tile, melds = EXTRAS[switch][0]
    on = load_ruleset("chengdu", **{switch: 2})
    assert win(concealed, tile, on, melds).fan - win(concealed, tile, CHENGDU, melds).fan == 2


@pytest.mark.parametrize("switch", sorted(EXTRAS))
def test_extras_need_their_shape(switch: str) -> None:
    concealed, tile, melds = EXTRAS[switch][1]
    on = load_ruleset("chengdu", **{switch: 2})
    assert win(concealed, tile, on, melds).fan == win(concealed, tile, CHENGDU, melds).fan


# -- what is not a win ----------------------------------------------------------------------------------


def test_three_suits_are_no_win() -> None:
    # "必须缺一门才能胡牌（重点强调下，川麻的第一规则就是打缺，无条件打缺！）" (seed 000)
    with pytest.raises(NotAWin, match=r"three suits \(mps\)"):
        win("111m444m789m456p7s", "7s")


def test_the_declared_void_suit_is_no_win() -> None:
    with pytest.raises(NotAWin, match="void suit p"):
        win("111m444m789m456p7p", "7p", que="p")


def test_another_void_suit_is_fine() -> None:
    assert win("111m444m789m456p7p", "7p", que="s").fan == 1


def test_a_wrong_tile_count_is_no_win() -> None:
    hand = WinHand(counts27=tuple(counts_of(parse_tiles("111m444m789m456p7p"))), melds=(), win_tile=15)
    with pytest.raises(NotAWin, match="13 concealed tiles with 0 melds"):
        score(hand, CHENGDU)


def test_not_a_win_is_a_value_error() -> None:
    assert issubclass(NotAWin, ValueError)


# -- building a WinHand ---------------------------------------------------------------------------------


def test_win_hand_adds_the_winning_tile() -> None:
    assert WinHand.of("111m444m789m456p7p", win_tile="7p").counts27[kind_of("7p")] == 2


def test_win_hand_may_already_hold_the_winning_tile() -> None:
    a = WinHand.of("111m444m789m456p77p", win_tile="7p", with_win_tile=True)
    assert a == WinHand.of("111m444m789m456p7p", win_tile="7p")


def test_win_hand_of_kinds() -> None:
    kinds = parse_tiles("111m444m789m456p7p")
    assert WinHand.of(kinds, win_tile=15) == WinHand.of("111m444m789m456p7p", win_tile="7p")


def test_win_hand_of_a_tile_list() -> None:
    assert (
        WinHand.of(
            ["1m", "1m", "1m", "4m", "4m", "4m", "7m", "8m", "9m", "4p", "5p", "6p", "7p"], win_tile="7p"
        ).tiles_count
        == 14
    )


def test_win_hand_que_names_the_void() -> None:
    assert WinHand.of("111m444m789m456p7p", win_tile="7p", que="s").void == 2


def test_win_hand_rejects_an_unknown_que() -> None:
    with pytest.raises(TileError, match="not a suit"):
        WinHand.of("111m444m789m456p7p", win_tile="7p", que="z")


def test_win_hand_needs_the_winning_tile() -> None:
    with pytest.raises(TileError, match="the winning tile is not in the hand"):
        WinHand.of("111m444m789m456p77p", win_tile="9s", with_win_tile=True)


def test_win_hand_needs_the_right_tile_count() -> None:
    with pytest.raises(TileError, match="11 concealed tiles with 1 melds: a winning hand holds 10"):
        WinHand.of("123m345m999p66p", win_tile="6p", melds=[meld("direct", "2p")])


def test_win_hand_rejects_a_fifth_copy_across_melds() -> None:
    with pytest.raises(TileError, match="5 copies of 1m across hand and melds"):
        WinHand.of("1m23m456p789p9p", win_tile="1m", melds=[meld("pong", "1m")])


# -- 查大叫: the value of a ready hand -------------------------------------------------------------------

# 111m 23m 456p 789p 99p waits on 1m and 4m, and (as 11m 123m) on 3p, 6p and 9p: 1 fan, but 2 on 1m and 9p
# (four of them: a root). The highest on the last kind in kind order.
READY = counts_of(parse_tiles("111m23m456p789p99p"))
READY_WAITS = tuple(parse_tiles("1m4m3p6p9p"))


def test_cha_jiao_amount_min_in_chengdu_max_in_app() -> None:
    # "按照现有牌面计算的最小规格的钱数" (seed 000); "赔给听牌的玩家最大的可能番（大叫）" (seed 003)
    low, high = ready_value(READY, [], CHENGDU), ready_value(READY, [], APP)
    assert (low, high) == (
        ReadyValue(amount=1, fan=1, win_tile=kind_of("4m"), waits=READY_WAITS),
        ReadyValue(amount=2, fan=2, win_tile=kind_of("9p"), waits=READY_WAITS),
    )


def test_which_overrides_the_profile() -> None:
    value = ready_value(READY, [], CHENGDU, which="max")
    assert value is not None and value.amount == 2


def test_a_hand_not_ready_has_no_value() -> None:
    assert ready_value(counts_of(parse_tiles("1357m2468p1357s9s")), [], CHENGDU) is None


def test_a_hand_holding_its_void_suit_is_not_ready() -> None:
    assert ready_value(READY, [], CHENGDU, void=0) is None


def test_ready_value_ignores_situational_fan() -> None:
    value = ready_value(READY, [], load_ruleset("chengdu", haidi_fan=5, rob_kong_fan=5))
    assert value is not None and value.fan == 1


def test_cha_jiao_self_draw_switch() -> None:
    # With 自摸加底 the self-drawn value adds one base.
    counted = ready_value(READY, [], load_ruleset("chengdu", cha_jiao_self_draw=True))
    assert counted is not None and counted.amount == 2


def test_ready_value_respects_the_cap() -> None:
    flush = counts_of(parse_tiles("1111m22m44m55m77m8m"))  # 清龙七对 on 8m: 6 fan
    value = ready_value(flush, [], load_ruleset("chengdu", cap=4))
    assert value is not None and (value.fan, value.amount) == (6, 8)


# A wait on a kind the player already holds four of: a pong of 1m and the fourth 1m in hand, waiting on 1m.
PONG_AND_FOURTH: tuple[list[int], list[Meld]] = (
    counts_of(parse_tiles("1m234p567p789p")),
    [meld("pong", "1m")],
)
# Four 1m concealed, single wait on the (nonexistent) fifth: 111m + 11m.
FOUR_CONCEALED: tuple[list[int], list[Meld]] = (counts_of(parse_tiles("1111m123p456p789p")), [])


@pytest.mark.parametrize("hand", [PONG_AND_FOURTH, FOUR_CONCEALED], ids=["pong_and_fourth", "four_concealed"])
def test_cha_jiao_fourth_tile_switch(hand: tuple[list[int], list[Meld]]) -> None:
    counts27, melds = hand
    assert ready_value(counts27, melds, CHENGDU) is None
    value = ready_value(counts27, melds, load_ruleset("chengdu", cha_jiao_fourth_tile=True))
    # Plain hand and the root of the four 1m the player holds.
    assert value is not None and (value.waits, value.fan) == ((kind_of("1m"),), 2)


@pytest.mark.parametrize("hand", [PONG_AND_FOURTH, FOUR_CONCEALED], ids=["pong_and_fourth", "four_concealed"])
def test_cha_jiao_fourth_tile_xu_ting_makes_no_root_of_the_four(hand: tuple[list[int], list[Meld]]) -> None:
    """虚听: the hand is ready on a kind held four times, valued as if a fifth copy existed, the four held making no
    根: a plain hand, 1 fan (twin: ``true``, 平胡 + 根 = 2 fan). A live wait is valued the same under both."""
    counts27, melds = hand
    value = ready_value(counts27, melds, load_ruleset("chengdu", cha_jiao_fourth_tile="xu_ting"))
    assert value is not None and (value.waits, value.fan, value.amount) == ((kind_of("1m"),), 1, 1)
    live = ready_value(READY, [], load_ruleset("chengdu", cha_jiao_fourth_tile="xu_ting"))
    assert live == ready_value(READY, [], CHENGDU)


def test_cha_jiao_fourth_tile_never_waits_on_a_kong() -> None:
    # Four 1p in a kong: a fifth would be a lone tile, no wait even with the switch.
    value = ready_value(
        counts_of(parse_tiles("23m456p789p99p")),
        [meld("concealed", "1p")],
        load_ruleset("chengdu", cha_jiao_fourth_tile=True),
    )
    assert value is not None and value.waits == (kind_of("1m"), kind_of("4m"))


def test_cha_jiao_fourth_tile_keeps_the_real_waits() -> None:
    value = ready_value(READY, [], load_ruleset("chengdu", cha_jiao_fourth_tile=True))
    assert value is not None and value.waits == READY_WAITS


# -- the convention and the pattern catalogue -----------------------------------------------------------


def test_the_convention_is_stated() -> None:
    # docs/RULES.md §3: "Output must say which convention it shows."
    assert "plain hand = 1 fan" in CONVENTION and "2^(fan−1)" in CONVENTION


def test_pattern_ids_are_unique_and_named() -> None:
    ids = [p.id for p in PATTERNS]
    assert len(ids) == len(set(ids)) and all(p.name_zh and p.name_en for p in PATTERNS)


@pytest.mark.parametrize("profile", ["chengdu", "app", "sbr", "majsoul", "xueliu"])
@pytest.mark.parametrize(
    ("concealed", "tile", "melds", "flags"),
    [
        ("111m444m789m456p7p", "7p", (), {}),
        ("123m789m123s789s9m", "9m", (), {"self_drawn": True}),
        ("11m22m99m44p66p88p9p", "9p", (), {"last_tile": True}),
        ("1111m99m44p66p88p9p", "9p", (), {"self_drawn": True, "after_kong": True}),
        ("222m555m888m5s", "5s", (("pong", "2s"),), {"kong_discard": True}),
        ("123456789m1p", "1p", (("direct", "5p"),), {"rob_kong": True}),
        ("9p", "9p", (("pong", "1m"), ("added", "9m"), ("concealed", "1p"), ("pong", "3p")), {}),
    ],
)
def test_a_score_is_each_pattern_s_count_of_its_best_reading(
    profile: str, concealed: str, tile: str, melds: tuple[tuple[str, str], ...], flags: dict[str, bool]
) -> None:
    """score() adds up what Pattern.count gives each pattern (its units read once per rule set, the patterns worth
    nothing not asked): the breakdown of the reading worth the most, in the patterns' order."""
    from pipeline.rules.hand import readings

    rules = load_ruleset(profile)
    hand = WinHand.of(concealed, win_tile=tile, melds=[meld(k, t) for k, t in melds], **flags)
    best: list[tuple[str, int]] = []
    for reading in readings(hand.counts27, hand.melds):
        counted = [(p.id, n) for p in PATTERNS if (n := p.count(hand, reading, rules))]
        if sum(n for _, n in counted) > sum(n for _, n in best) or not best:
            best = counted
    assert [(h.id, h.fan) for h in score(hand, rules).patterns] == best
    assert score(hand, CHENGDU) == score(hand, CHENGDU)  # the units of one rule set, then another's, then again
