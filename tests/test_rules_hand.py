"""Winning shapes, suits, roots, waits and shanten (docs/RULES.md §2), checked against a plain search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.rules.hand import (
    _NEAR_SHIFT,
    SUIT_FLAGS,
    SUIT_TABLE,
    WHOLE_CODES,
    Meld,
    Reading,
    _suit_info,
    _suit_size,
    code_step,
    full_counts,
    is_legal_win,
    is_seven_pairs,
    is_standard,
    is_standard_recursive,
    is_win,
    readings,
    roots,
    shanten,
    shanten_after_discards,
    suit_bits,
    suit_codes,
    suit_index,
    suit_info,
    suits_ok,
    suits_used,
    waits,
    win_tiles,
)
from pipeline.rules.tiles import NUM_KINDS, TileError, counts_of, kind_of, parse_tiles, tile_name

M, P, S = 0, 1, 2


def c(text: str) -> list[int]:
    """counts27 of tile text."""
    return counts_of(parse_tiles(text))


def names(kinds: Sequence[int]) -> list[str]:
    return [tile_name(k) for k in kinds]


def k(name: str) -> int:
    return kind_of(name)


# -- melds ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "size", "is_kong"),
    [("pong", 3, False), ("direct", 4, True), ("added", 4, True), ("concealed", 4, True)],
)
def test_meld_sizes(kind: str, size: int, is_kong: bool) -> None:
    meld = Meld(kind, k("5p"))  # type: ignore[arg-type]
    assert (meld.size, meld.is_kong, str(meld)) == (size, is_kong, f"{kind}:5p")


def test_no_chow_meld() -> None:
    # "可碰、可杠，不能吃" (seed 003): a chow is never a meld.
    with pytest.raises(ValueError, match="unknown meld kind 'chow'"):
        Meld("chow", 0)  # type: ignore[arg-type]


@pytest.mark.parametrize("tile", [-1, 27])
def test_meld_tile_must_be_a_kind(tile: int) -> None:
    with pytest.raises(TileError, match="not a tile kind"):
        Meld("pong", tile)


def test_meld_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Meld("pong", 0).tile = 1  # type: ignore[misc]


# -- winning shapes -------------------------------------------------------------------------------------


def test_four_sets_and_a_pair_win() -> None:
    assert is_win(c("111m444m789m456p77p"), [])


def test_any_pair_may_be_the_eyes() -> None:
    # "任何一对牌都可以做“将”（不像有些地区必须是2、5、8做将）" (seed 000)
    assert is_win(c("111m444m789m456p33p"), [])


def test_chows_in_the_concealed_hand_count() -> None:
    assert is_win(c("123m456m789m123p99p"), [])


def test_not_a_win() -> None:
    assert not is_win(c("124s567s789s888s77s"), [])


def test_melds_are_sets() -> None:
    melds = [Meld("pong", k("1m")), Meld("concealed", k("4m"))]
    assert is_win(c("789m456p77p"), melds)


def test_seven_pairs_win() -> None:
    assert is_win(c("11m22m99m44p66p88p99p"), [])


def test_four_of_a_kind_is_two_pairs_in_seven_pairs() -> None:
    assert is_win(c("1111m99m44p66p88p99p"), [])


def test_seven_pairs_are_concealed_only() -> None:
    # With a meld the hand holds 11 concealed tiles: never seven pairs.
    assert not is_seven_pairs(c("11m22m99m44p66p8p"))
    assert not is_win(c("11m22m99m44p66p8p"), [Meld("pong", k("5s"))])


@pytest.mark.parametrize(("text", "n_melds"), [("111m444m789m456p7p", 0), ("111m444m789m456p77p", 1)])
def test_is_win_rejects_a_wrong_tile_count(text: str, n_melds: int) -> None:
    melds = [Meld("pong", k("5s"))] * n_melds
    with pytest.raises(TileError, match=r"concealed tiles with .* melds \(a win needs"):
        is_win(c(text), melds)


def test_is_standard_needs_exactly_one_pair() -> None:
    assert not is_standard(c("11m22m"))
    assert not is_standard([0] * NUM_KINDS)


def test_a_rank_held_more_than_five_times_is_in_no_split() -> None:
    """Six of a kind is in no SUIT_TABLE key (nor would it fit the three bits of a suit code): not standard,
    whether the hand comes as a list or a tuple (no hand holds it: the plain search, which knows no copy limit,
    reads two pungs)."""
    six = [6] + [0] * 8 + [2] + [0] * 17
    assert not is_standard(six) and not is_standard(tuple(six))
    assert is_standard(tuple(c("111m222m333m444m55p"))) and suit_codes(tuple(c("11m2p"))) == [2, 8, 0]


def test_suit_tables_by_code_and_by_counts_agree() -> None:
    assert len(SUIT_FLAGS) == len(SUIT_TABLE) == len(WHOLE_CODES)
    for key, flags in SUIT_TABLE.items():
        assert SUIT_FLAGS[suit_codes(list(key) + [0] * 18)[0]] == flags


def test_suit_bits_name_the_suits_held() -> None:
    assert suit_bits(c("1m9s"), []) == 5 and suit_bits(tuple(c("5p")), [Meld("pong", kind_of("1m"))]) == 3
    assert suit_bits([0] * NUM_KINDS, ()) == 0


def test_recursive_search_needs_a_set_count_plus_two() -> None:
    assert not is_standard_recursive(c("111m"))


def test_suit_table_holds_the_empty_suit_and_every_lone_pair() -> None:
    assert (0,) * 9 in SUIT_TABLE
    assert all(tuple(2 if r == rank else 0 for r in range(9)) in SUIT_TABLE for rank in range(9))


# -- suits: 缺一门 --------------------------------------------------------------------------------------


def test_two_suits_are_fine() -> None:
    assert suits_ok(c("111m444m789m456p77p"), [], None)


def test_three_suits_never_win() -> None:
    # "必须缺一门才能胡牌" (seed 000)
    assert not is_legal_win(c("111m444m789m456p77s"), [], None)


def test_meld_suits_count() -> None:
    assert suits_used(c("11m"), [Meld("pong", k("2p")), Meld("direct", k("3s"))]) == {M, P, S}


def test_the_void_suit_may_not_be_held() -> None:
    assert not suits_ok(c("111m444m789m456p77p"), [], P)
    assert suits_ok(c("111m444m789m456p77p"), [], S)


def test_legal_win_is_shape_and_suits() -> None:
    assert is_legal_win(c("111m444m789m456p77p"), [], S)


# -- roots: 根 ------------------------------------------------------------------------------------------


def test_no_roots() -> None:
    assert roots(c("111m444m789m456p77p"), []) == 0


def test_a_kong_is_a_root() -> None:
    # "胡牌时有杠就加番，有一杠就加一番" (seed 000)
    assert roots(c("789m456p77p"), [Meld("direct", k("1m")), Meld("pong", k("4m"))]) == 1


def test_a_pong_and_the_fourth_tile_concealed_is_a_root() -> None:
    # "胡牌时，每有一扛或一根加1分" (seed 003): a 根 need not be a kong.
    assert roots(c("1m23m789m456p77p"), [Meld("pong", k("1m"))]) == 1


def test_four_concealed_copies_are_a_root() -> None:
    assert roots(c("1111m23m789m456p77p"), []) == 1


def test_full_counts_add_melds() -> None:
    assert full_counts(c("1m"), [Meld("pong", 0), Meld("concealed", 1)])[:2] == [4, 4]


# -- readings -------------------------------------------------------------------------------------------


def test_readings_of_a_non_win_are_empty() -> None:
    assert readings(c("124s567s789s888s77s"), []) == []


def test_seven_pairs_that_are_no_standard_hand_read_one_way() -> None:
    assert readings(c("11m22m99m44p66p88p99p"), []) == [
        Reading(seven_pairs=True, all_pungs=False, yaojiu=False, straight=False)
    ]


def test_pungs_or_chows_read_both_ways() -> None:
    # docs/RULES.md §2: "When a hand reads several ways (111222333m as pungs or chows), score the best reading."
    pung_flags = {r.all_pungs for r in readings(c("111222333m444p77p"), [])}
    assert pung_flags == {True, False}


def test_a_straight_is_read() -> None:
    assert any(r.straight for r in readings(c("123456789m456p77p"), []))


def test_melds_keep_terminals_only_on_one_or_nine() -> None:
    hand = c("123m789m99m")
    assert readings(hand, [Meld("pong", k("1p")), Meld("direct", k("9p"))])[0].yaojiu
    assert not readings(hand, [Meld("pong", k("1p")), Meld("direct", k("5p"))])[0].yaojiu


# -- waits ----------------------------------------------------------------------------------------------


def test_waits_on_both_sides_of_a_run() -> None:
    assert names(waits(c("23m111p456p789p99p"), [])) == ["1m", "4m"]


def test_waits_of_a_single_tile() -> None:
    assert names(waits(c("1114447m456777p"), [])) == ["7m"]


def test_seven_pairs_wait() -> None:
    assert "7s" in names(waits(c("11m22m99m44s66s88s7s"), []))


def test_no_wait_on_a_kind_held_four_times() -> None:
    # No fifth copy exists: a kong of 1m leaves 23m waiting on 4m only.
    assert names(waits(c("23m456p789p99p"), [Meld("concealed", k("1m"))])) == ["4m"]


def test_not_ready_has_no_waits() -> None:
    assert waits(c("1357m2468p1357s9s"), []) == []


def test_three_suits_have_no_waits() -> None:
    assert waits(c("23m111p456p789s99s"), []) == []


def test_void_suit_in_hand_has_no_waits() -> None:
    assert waits(c("23m111p456p789p99p"), [], void=M) == []


def test_void_elsewhere_keeps_the_waits() -> None:
    assert names(waits(c("23m111p456p789p99p"), [], void=S)) == ["1m", "4m"]


def test_waits_need_thirteen_tiles_less_three_per_meld() -> None:
    with pytest.raises(TileError, match="a ready hand holds 10"):
        waits(c("23m111p456p789p99p"), [Meld("pong", k("5s"))])


# -- shanten --------------------------------------------------------------------------------------------


def test_shanten_of_a_win_is_minus_one() -> None:
    assert shanten(c("111m444m789m456p77p")) == -1


def test_shanten_of_a_ready_hand_is_zero() -> None:
    assert shanten(c("23m111p456p789p99p")) == 0


def test_shanten_of_six_pairs_and_a_single_is_zero() -> None:
    assert shanten(c("11m22m99m44p66p88p9s")) == 0


def test_shanten_one_away() -> None:
    assert shanten(c("23m111p456p789p9p5s")) == 1


def test_shanten_counts_melds_as_sets() -> None:
    assert shanten(c("23m456p789p99p"), n_melds=1) == 0


def test_shanten_with_melds_ignores_seven_pairs() -> None:
    # Five pairs beside a meld: two must become pungs (as seven pairs it would read one away).
    assert shanten(c("11m22m44m66p88p"), n_melds=1) == 2


def test_shanten_leaves_out_void_tiles() -> None:
    # The three void tiles must go whatever happens: the other ten are counted alone.
    hand = c("23m111p456p789p5s")  # 13 tiles, no void: one away (needs the pair)
    assert shanten(hand) == 1
    assert shanten(hand, void=P) == shanten(c("23m5s"))


# -- properties -----------------------------------------------------------------------------------------

SETS = [(kind, kind, kind) for kind in range(NUM_KINDS)] + [
    (kind, kind + 1, kind + 2) for kind in range(NUM_KINDS) if kind % 9 <= 6
]


def fits(counts27: Sequence[int], tiles: Sequence[int]) -> bool:
    need = counts_of(tiles)
    return all(counts27[x] + need[x] <= 4 for x in range(NUM_KINDS))


@st.composite
def standard_wins(draw: st.DrawFn) -> tuple[list[int], list[Meld]]:
    """Four random sets (pungs or chows) and a pair within at most two suits; some pungs become melds."""
    suits = draw(st.lists(st.sampled_from([M, P, S]), min_size=1, max_size=2, unique=True))
    counts27 = [0] * NUM_KINDS
    melds: list[Meld] = []
    for _ in range(4):
        options = [s for s in SETS if s[0] // 9 in suits and fits(full_counts(counts27, melds), s)]
        chosen = draw(st.sampled_from(options))
        meld_kind = draw(st.sampled_from([None, "pong", "direct", "added", "concealed"]))
        meld = Meld(meld_kind, chosen[0]) if meld_kind and chosen[0] == chosen[1] else None  # type: ignore[arg-type]
        if meld and full_counts(counts27, [*melds, meld])[chosen[0]] <= 4:
            melds.append(meld)
        else:
            for tile in chosen:
                counts27[tile] += 1
    held = full_counts(counts27, melds)
    pair = draw(st.sampled_from([x for x in range(NUM_KINDS) if x // 9 in suits and held[x] <= 2]))
    counts27[pair] += 2
    return counts27, melds


@st.composite
def seven_pairs_wins(draw: st.DrawFn) -> list[int]:
    suits = draw(st.lists(st.sampled_from([M, P, S]), min_size=1, max_size=2, unique=True))
    kinds = [x for x in range(NUM_KINDS) if x // 9 in suits]
    pairs = draw(
        st.lists(st.sampled_from(kinds), min_size=7, max_size=7).filter(lambda ps: all(ps.count(x) <= 2 for x in ps))
    )
    return counts_of(pairs * 2)


def remove_one(draw: Callable[..., Any], counts27: list[int]) -> list[int]:
    out = list(counts27)
    out[draw(st.sampled_from([x for x in range(NUM_KINDS) if out[x]]))] -= 1
    return out


def shape_win(counts27: Sequence[int], melds: Sequence[Meld]) -> bool:
    """The definition: sets and a pair, or (without melds) seven pairs, four of a kind as two."""
    seven = not melds and sum(counts27) == 14 and all(n % 2 == 0 for n in counts27)
    return seven or is_standard_recursive(counts27)


def brute_waits(counts27: Sequence[int], melds: Sequence[Meld], void: int | None = None) -> list[int]:
    """Every kind not already held four times that makes a win by shape and by suits."""
    held = full_counts(counts27, melds)
    return sorted(kind for kind in brute_win_tiles(counts27, melds, void) if held[kind] < 4)


@given(standard_wins())
def test_random_sets_and_a_pair_win(hand: tuple[list[int], list[Meld]]) -> None:
    counts27, melds = hand
    assert is_win(counts27, melds) and is_legal_win(counts27, melds, None)


@given(seven_pairs_wins())
def test_random_seven_pairs_win(counts27: list[int]) -> None:
    assert is_legal_win(counts27, [], None)


@given(st.data(), standard_wins(), st.sampled_from([None, M, P, S]))
@settings(deadline=None)
def test_waits_are_exactly_the_kinds_that_win_again(
    data: st.DataObject, hand: tuple[list[int], list[Meld]], void: int | None
) -> None:
    counts27, melds = hand
    ready = remove_one(data.draw, counts27)
    assert waits(ready, melds, void) == brute_waits(ready, melds, void)


@given(st.data(), seven_pairs_wins())
def test_seven_pairs_waits_are_exactly_the_kinds_that_win_again(data: st.DataObject, counts27: list[int]) -> None:
    ready = remove_one(data.draw, counts27)
    assert waits(ready, []) == brute_waits(ready, [])


def random_hand(size: int) -> st.SearchStrategy[list[int]]:
    """A random hand of ``size`` tiles, at most four of a kind, often within one or two suits."""

    @st.composite
    def build(draw: st.DrawFn) -> list[int]:
        suits = draw(st.lists(st.sampled_from([M, P, S]), min_size=1, max_size=3, unique=True))
        kinds = [x for x in range(NUM_KINDS) if x // 9 in suits]
        tiles = draw(
            st.lists(st.sampled_from(kinds), min_size=size, max_size=size).filter(
                lambda ts: all(ts.count(x) <= 4 for x in ts)
            )
        )
        return counts_of(tiles)

    return build()


@st.composite
def near_wins(draw: st.DrawFn, size: int) -> list[int]:
    """A concealed win, less 14 - size tiles, plus random ones: near ready, often ready."""
    if draw(st.booleans()):
        counts27, melds = draw(standard_wins())
        counts27 = full_counts(counts27, melds)  # melds back in the hand: a kong as four concealed
    else:
        counts27 = draw(seven_pairs_wins())
    while sum(counts27) > size:
        counts27 = remove_one(draw, counts27)
    while sum(counts27) < size:
        free = [x for x in range(NUM_KINDS) if counts27[x] < 4]
        counts27[draw(st.sampled_from(free))] += 1
    return counts27


@given(st.one_of(random_hand(14), near_wins(14)))
@settings(deadline=None)
def test_table_agrees_with_the_recursive_search(counts27: list[int]) -> None:
    assert is_standard(counts27) == is_standard_recursive(counts27)


@given(st.one_of(random_hand(14), near_wins(14)))
@settings(deadline=None)
def test_shanten_is_minus_one_exactly_for_wins(counts27: list[int]) -> None:
    assert (shanten(counts27) == -1) == shape_win(counts27, [])


@given(st.one_of(random_hand(13), near_wins(13)))
@settings(deadline=None)
def test_shanten_is_zero_exactly_when_some_kind_wins(counts27: list[int]) -> None:
    # Shape only: a wait on a fifth copy is still a ready shape.
    def wins_with(kind: int) -> bool:
        hand = list(counts27)
        hand[kind] += 1
        return shape_win(hand, [])

    assert (shanten(counts27) == 0) == any(wins_with(kind) for kind in range(NUM_KINDS))


def brute_win_tiles(counts27: Sequence[int], melds: Sequence[Meld], void: int | None) -> set[int]:
    """Every kind one more of which wins by shape and suits, a kind held four times included."""
    out = set()
    for kind in range(NUM_KINDS):
        hand = list(counts27)
        hand[kind] += 1
        if suits_ok(hand, melds, void) and shape_win(hand, melds):
            out.add(kind)
    return out


@given(st.one_of(random_hand(13), near_wins(13)), st.sampled_from([None, M, P, S]))
def test_win_tiles_equal_the_definition_without_melds(counts27: list[int], void: int | None) -> None:
    assert win_tiles(counts27, [], void) == brute_win_tiles(counts27, [], void)


@given(st.data(), standard_wins(), st.sampled_from([None, M, P, S]))
@settings(deadline=None)
def test_win_tiles_equal_the_definition_with_melds(
    data: st.DataObject, hand: tuple[list[int], list[Meld]], void: int | None
) -> None:
    counts27, melds = hand
    ready = remove_one(data.draw, counts27)
    assert win_tiles(ready, melds, void) == brute_win_tiles(ready, melds, void)


def test_win_tiles_keep_a_kind_held_four_times() -> None:
    """1111m 456p 789p 999p wins only on a fifth 1m (111m and the pair 11m): waits() has none."""
    hand = c("1111m456p789p999p")
    assert names(sorted(win_tiles(hand, []))) == ["1m"]
    assert waits(hand, []) == []


@given(st.one_of(random_hand(14), near_wins(14)), st.sampled_from([None, M, P, S]), st.sampled_from([0, 1, 2]))
def test_shanten_after_each_discard_is_shanten_of_the_smaller_hand(
    counts27: list[int], void: int | None, n_melds: int
) -> None:
    def less(kind: int) -> list[int]:
        out = list(counts27)
        out[kind] -= 1
        return out

    expected = {k: shanten(less(k), n_melds, void) for k in range(NUM_KINDS) if counts27[k]}
    assert shanten_after_discards(counts27, n_melds, void) == expected


@given(random_hand(13), st.sampled_from(range(NUM_KINDS)), st.sampled_from([M, P, S]))
def test_a_suit_code_moves_by_one_step_a_tile_and_decodes_to_the_counts(
    counts27: list[int], kind: int, suit: int
) -> None:
    grown = list(counts27)
    grown[kind] += 1
    step = code_step(kind) if kind // 9 == suit else 0
    assert suit_codes(grown)[suit] == suit_codes(counts27)[suit] + step
    code = suit_codes(counts27)[suit]
    counts = tuple(counts27[suit * 9 : suit * 9 + 9])
    assert tuple((code >> (3 * rank)) & 7 for rank in range(9)) == counts and _suit_size(code) == sum(counts)
    # the ranks that make the suit whole, by the table's definition
    near = sum(1 << r for r in range(9) if code + code_step(r) in WHOLE_CODES)
    assert _suit_info().get(code, 0) >> _NEAR_SHIFT == near


def test_shanten_after_discarding_a_suits_only_tile() -> None:
    """11123m456p789p99p + a lone 5s: throwing the 5s leaves the suit empty (and the hand ready)."""
    hand = c("11123m456p789p99p5s")
    after = shanten_after_discards(hand)
    assert after[k("5s")] == shanten(c("11123m456p789p99p")) == 0


def test_the_dense_table_of_suits_is_the_dictionary_for_every_code_of_at_most_four_a_rank() -> None:
    # every code the dictionary knows, through the dense table where it has an index; and the dense table's other
    # entries are empty (a code neither whole nor one short of whole)
    info = _suit_info()
    indexed = {suit_index(code): value for code, value in info.items() if suit_index(code) >= 0}
    assert all(suit_info(code, suit_index(code)) == value for code, value in info.items() if suit_index(code) >= 0)
    assert all(suit_info(code, -1) == value for code, value in info.items())
    every = [c for c in range(5**9) if c % 997 == 0]  # a spread of indices: outside the dictionary, empty
    for index in every:
        code = sum(((index // 5**rank) % 5) << (3 * rank) for rank in range(9))
        assert suit_index(code) == index
        assert suit_info(code, index) == indexed.get(index, 0)


@given(st.lists(st.integers(0, 7), min_size=9, max_size=9))
def test_a_suit_index_is_the_counts_in_base_five(counts: list[int]) -> None:
    code = sum(held << (3 * rank) for rank, held in enumerate(counts))
    expected = sum(held * 5**rank for rank, held in enumerate(counts)) if max(counts) <= 4 else -1
    assert suit_index(code) == expected
