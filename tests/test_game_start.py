"""The start of a hand (pipeline/game/start.py) and the first turn: the deal from a wall, 换三张, 定缺, and
地胡 on the dealer's first discard."""

from __future__ import annotations

import pytest

from pipeline.game.start import deal_hands, dealt, exchanged, start_hand, wall_after_deal
from pipeline.game.state import IllegalAction
from pipeline.rules import load_ruleset
from pipeline.rules.tiles import full_set, kind_of, parse_tiles


def test_the_deal_is_thirteen_each_and_one_more_for_the_dealer() -> None:
    # "庄家十四张，先出牌，闲家每人十三张牌" (seed 003)
    wall = full_set()
    for dealer in range(4):
        hands = deal_hands(wall, dealer)
        assert [len(h) for h in hands] == [14 if s == dealer else 13 for s in range(4)]
        assert sorted(k for h in hands for k in h) == sorted(wall[: dealt(4)])
        assert hands[dealer][-1] == wall[52]
    assert dealt(4) == 53 and wall_after_deal(load_ruleset("chengdu")) == 55


def test_start_hand_draws_from_the_wall_after_the_deal() -> None:
    wall = full_set()
    state = start_hand(load_ruleset("chengdu"), dealer=2, wall=wall, que=(0, 1, 2, 0))
    assert state.left == 55 and state.turn == 2 and state.phase == "discard"
    assert state.wall == wall[53:]


def test_a_deal_that_disagrees_with_the_wall_is_refused() -> None:
    wall = full_set()
    deal = deal_hands(wall, 0)
    deal[1][0], deal[2][0] = deal[2][0], deal[1][0]
    with pytest.raises(IllegalAction) as refused:
        start_hand(load_ruleset("chengdu"), dealer=0, wall=wall, deal=deal, que=(0, 1, 2, 0))
    assert refused.value.code == "TILE_DEAL" and refused.value.seat == 1


def test_exchange_of_three_moves_three_tiles_of_one_suit() -> None:
    hands = [parse_tiles("123m5p"), parse_tiles("456m5p"), parse_tiles("789m5p"), parse_tiles("111p5p")]
    given = [parse_tiles(t) for t in ("123m", "456m", "789m", "111p")]
    assert exchanged(hands, "cw", given)[3] == parse_tiles("5p123m")  # clockwise: seat i gives to i + 3
    with pytest.raises(IllegalAction) as mixed:
        exchanged(hands, "cw", [parse_tiles("12m5p"), *given[1:]])
    assert mixed.value.code == "TILE_EXCHANGE" and mixed.value.seat == 0
    with pytest.raises(IllegalAction) as absent:
        exchanged(hands, "cw", [parse_tiles("456m"), *given[1:]])
    assert absent.value.code == "TILE_NOT_HELD"


def test_every_seat_declares_a_void_where_the_profile_requires_it() -> None:
    start_hand(load_ruleset("chengdu"), dealer=0, wall=full_set(), que=(0, None, 2, 0))  # chengdu: not required
    with pytest.raises(IllegalAction) as missing:
        start_hand(load_ruleset("app"), dealer=0, wall=full_set(), que=(0, None, 2, 0))
    assert missing.value.code == "TILE_VOID"


def test_both_winners_on_the_dealers_first_discard_have_earthly_hands() -> None:
    """地胡 is a non-dealer's win on the dealer's first discard ("（2）地胡", 8 fan in seed 003's app rules); with
    一炮多响 every seat that wins on that discard wins on the dealer's first discard."""
    rules = load_ruleset("app")
    deal = [
        parse_tiles("123456789m1119s5p"),  # the dealer, void p: discards 5p first
        parse_tiles("123p444p678p99p46p"),  # waits on 5p
        parse_tiles("123m456m789m55p67p"),  # waits on 5p and 8p
        parse_tiles("222s333s444s555s6s"),
    ]
    state = start_hand(rules, dealer=0, deal=deal, que=(1, 0, 2, 0))
    five = kind_of("5p")
    state.discard(0, five)
    state.hu(1, five, 0)
    state.hu(2, five, 0)
    wins = state.facts().wins
    assert [w.seat for w in wins] == [1, 2]
    for win in wins:
        assert "地胡" in {p.name_zh for p in win.score.patterns}, win


def test_the_wall_check_by_suit_codes_agrees_with_counting_every_kind() -> None:
    """start._full_set (each suit's tiles added up as its code) says a wall is full exactly when counting its kinds
    does: shuffled full walls, one tile swapped, and walls whose codes carry (twelve of one rank for four of it and
    one of the next: equal codes, more tiles) with tiles taken elsewhere to keep the size."""
    import random

    from pipeline.game.start import _full_set
    from pipeline.rules.tiles import counts_of, full_counts, full_set

    rng = random.Random(8)
    cases: list[tuple[list[int], str]] = []
    for suits in ("mps", "ps", "ms"):
        full = full_set(suits)
        cases.append((full, suits))
        for _ in range(300):
            wall = list(full)
            rng.shuffle(wall)
            if rng.random() < 0.5:
                wall[rng.randrange(len(wall))] = rng.randrange(27)
            cases.append((wall, suits))
        # 1m x12, 2m x3 has the code of 1m x4, 2m x4 (12 + 3*8 == 4 + 4*8) with 7 more tiles: take 7 of another suit
        carried = [k for k in full if k not in (0, 1)] + [0] * 12 + [1] * 3
        cases.append((list(carried), suits))  # codes all equal, 115 tiles
        other = [k for k in carried if k >= 9][:7]
        for k in other:
            carried.remove(k)
        cases.append((carried, suits))
        cases.append(([*full[:-1], -1], suits))
    for wall, suits in cases:
        assert _full_set(wall, suits) == (
            counts_of([k for k in wall if 0 <= k < 27]) == full_counts(suits) and all(0 <= k < 27 for k in wall)
        ), (suits, sorted(wall))
