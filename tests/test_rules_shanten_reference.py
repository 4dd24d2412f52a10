"""Shanten (向听) checked, every value of it, against a plain recursive reference written from the definition.

:func:`pipeline.rules.hand.shanten` packs each suit's block options into ints and memoises combinations of
them. The reference here shares none of that code: it searches the whole 27-kind hand tile by tile, with
no per-suit tables, no Pareto pruning and no packing. The definition it implements is hand.py's:

- standard shape: ``8 - 2·sets - partials - pair``, the melds counting as sets, and the partial sets (搭子:
  a pair, neighbours or a gap) capped so that sets plus partials are at most four; one pair at most is the
  eyes, any further pair can only be a partial;
- seven pairs (七对), only without melds: ``6 - pairs``, four of a kind counting as two pairs (龙, as in
  :func:`~pipeline.rules.hand.is_seven_pairs`), three of a kind as one;
- the tiles of the ``void`` suit (缺一门) are left out of both counts: they must be discarded whatever
  happens. No other suit rule applies: with no void declared, three suits are counted by shape alone;
- ``-1`` is a win by shape, ``0`` ready.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pipeline.rules.hand import shanten, shanten_after_discards, shanten_of_codes, suit_codes
from pipeline.rules.tiles import NUM_KINDS, counts_of, parse_tiles

M, P, S = 0, 1, 2

# -- the reference --------------------------------------------------------------------------------------


def reference_shanten(counts27: Sequence[int], n_melds: int = 0, void: int | None = None) -> int:
    """The shanten of a concealed hand of ``14 - 3·n_melds`` or ``13 - 3·n_melds`` tiles, by plain search."""
    assert sum(counts27) in (13 - 3 * n_melds, 14 - 3 * n_melds), "not a hand size"
    hand = tuple(0 if void is not None and kind // 9 == void else n for kind, n in enumerate(counts27))
    best = reference_standard(hand, n_melds)
    if n_melds == 0:
        best = min(best, reference_seven_pairs(hand))
    return best


def reference_seven_pairs(hand: Sequence[int]) -> int:
    """Six minus the pairs held: two of a kind is one pair, three one pair and a single, four two pairs."""
    return 6 - sum(n // 2 for n in hand)


def reference_standard(hand: tuple[int, ...], n_melds: int) -> int:
    """Every way of grouping the tiles into sets, partial sets, at most one pair (the eyes) and isolated
    tiles, the best ``8 - 2·sets - min(partials, 4 - sets) - pair``, the melds counted as sets.

    Each grouping gives the lowest tile held some group (or none), and every group holding it is one of
    the six below, built upwards from it: trying all six, then recursing on what is left, meets every
    grouping. Memoised on the whole state, which changes nothing but the speed.
    """

    @cache
    def search(rest: tuple[int, ...], sets: int, partials: int, pair: int) -> int:
        low = next((kind for kind, n in enumerate(rest) if n), -1)
        if low < 0:
            return 8 - 2 * sets - min(partials, 4 - sets) - pair
        rank = low % 9

        def less(*kinds: int) -> tuple[int, ...]:
            out = list(rest)
            for kind in kinds:
                out[kind] -= 1
            return tuple(out)

        results = [search(less(low), sets, partials, pair)]  # the lowest tile left isolated
        if rest[low] >= 3:
            results.append(search(less(low, low, low), sets + 1, partials, pair))  # a pung
        if rank <= 6 and rest[low + 1] and rest[low + 2]:
            results.append(search(less(low, low + 1, low + 2), sets + 1, partials, pair))  # a chow
        if rest[low] >= 2:
            results.append(search(less(low, low), sets, partials + 1, pair))  # a pair as a partial set
            if not pair:
                results.append(search(less(low, low), sets, partials, 1))  # the pair, as the eyes
        if rank <= 7 and rest[low + 1]:
            results.append(search(less(low, low + 1), sets, partials + 1, pair))  # neighbours
        if rank <= 6 and rest[low + 2]:
            results.append(search(less(low, low + 2), sets, partials + 1, pair))  # a gap
        return min(results)

    return search(hand, n_melds, 0, 0)


def c(text: str) -> list[int]:
    """counts27 of tile text."""
    return counts_of(parse_tiles(text))


def test_reference_knows_a_win_a_ready_hand_and_seven_pairs() -> None:
    assert reference_shanten(c("111m444m789m456p77p")) == -1
    assert reference_shanten(c("23m111p456p789p99p")) == 0
    assert reference_shanten(c("1111m99m44p66p88p99p")) == -1  # seven pairs, the four as two
    assert reference_shanten(c("789m456p77p"), n_melds=2) == -1
    assert reference_shanten(c("11m22m44m66p88p"), n_melds=1) == 2  # no seven pairs beside a meld


# -- hand-checked examples ------------------------------------------------------------------------------

HAND_CHECKED = [
    # 123m 456m 789m are three sets; of 135p only one partial fits (13p or 35p, they share the 3p) and 9p has
    # no neighbour within two: 8 - 2·3 - 1 = 1. No pair, so seven pairs read 6.
    pytest.param("123m456m789m135p9p", 0, None, 1, id="three-sets-and-a-partial"),
    # Four of a kind as two pairs: 1111m, 5555p and 99s are five pairs, 6 - 5 = 1 (were a four one pair, it
    # would read 6 - 3 = 3). As sets: the pungs 111m, 555p, 999s and five lone tiles 1m 4m 7m 5p 2s (no two
    # within two ranks in a suit, no pair) give 8 - 2·3 = 2; a four split as the eyes and a pair partial
    # (11m + 11m) with two pungs also gives 8 - 2·2 - 1 - 1 = 2. Best: 1.
    pytest.param("1111m5555p999s4m7m2s", 0, None, 1, id="seven-pairs-with-two-fours"),
    # Two chows 123m 456m; 13579p hold at most two partials that share no tile (13p 57p, 13p 79p or 35p 79p,
    # one of the five left alone); 1s 5s 9s are lone: 8 - 2·2 - 2 = 2. No pair, so seven pairs read 6.
    pytest.param("123m456m1357p9p159s", 0, None, 2, id="two-chows-two-partials"),
    # A meld and the void suit s: 334s are left out (without the void, 34s would be a third partial: 2).
    # Left: partials 13m and 12p, the eyes 55p, lone 7m and 9p: 8 - 2·1 - 2 - 1 = 3.
    pytest.param("137m1255p9p334s", 1, S, 3, id="meld-void-two-partials-and-the-eyes"),
    pytest.param("137m1255p9p334s", 1, None, 2, id="the-same-without-the-void"),
    # The void suit s (159s) left out: the chow 123m (or 345m), the partial 45m (or 12m), the eyes 99m,
    # 147p three lone tiles: 8 - 2 - 1 - 1 = 4. Seven pairs: one pair, 6 - 1 = 5.
    pytest.param("12345m99m147p159s", 0, S, 4, id="chow-partial-eyes-void"),
    # A meld, the void suit s (3345s) left out; 1147m 258p: the eyes 11m, the rest lone (4m-1m and 7m-4m are
    # three ranks apart): 8 - 2·1 - 0 - 1 = 5. No seven pairs beside a meld.
    pytest.param("1147m258p3345s", 1, S, 5, id="meld-and-the-eyes-only"),
    # The void suit s (1234567s) left out: 147m 147p hold no pair and no partial. Standard 8 - 0 = 8, seven
    # pairs 6 - 0 = 6: six tile changes make six pairs, the thirteenth tile then the wait.
    pytest.param("147m147p1234567s", 0, S, 6, id="six-lone-tiles-and-the-void"),
    # A meld and a concealed hand all of the void suit: the meld and nothing else, 8 - 2·1 = 6.
    pytest.param("11123456789s", 1, S, 6, id="meld-and-only-void-tiles"),
]


@pytest.mark.parametrize(("text", "n_melds", "void", "expected"), HAND_CHECKED)
def test_hand_checked_examples(text: str, n_melds: int, void: int | None, expected: int) -> None:
    counts27 = c(text)
    assert reference_shanten(counts27, n_melds, void) == expected
    assert shanten(counts27, n_melds, void) == expected
    assert shanten_of_codes(suit_codes(counts27), n_melds, void) == expected


# -- random hands ---------------------------------------------------------------------------------------

SETS = [(kind, kind, kind) for kind in range(NUM_KINDS)] + [
    (kind, kind + 1, kind + 2) for kind in range(NUM_KINDS) if kind % 9 <= 6
]


@st.composite
def deals(draw: st.DrawFn, n_melds: int, size: int) -> tuple[list[int], int | None]:
    """A legal concealed hand of ``size`` tiles beside ``n_melds`` melds (pongs or kongs, never of the void
    suit, whose tiles are no longer free), and the void suit or ``None``.

    Four shapes, so that every shanten value comes up: tiles spread over one to three suits; a few kinds
    in many copies (up to four), within one or two suits; and a win (sets and the eyes, or seven pairs,
    melds or not) cut to size and with up to four tiles swapped for random ones (near ready, often ready or
    a win). The void suit's tiles may be in the hand: they are what a void does to shanten.
    """
    void = draw(st.sampled_from([None, M, P, S]))
    free = [4] * NUM_KINDS  # copies not in a meld
    for _ in range(n_melds):
        kind = draw(st.sampled_from([k for k in range(NUM_KINDS) if k // 9 != void and free[k] == 4]))
        free[kind] -= draw(st.sampled_from([3, 4]))
    counts27 = [0] * NUM_KINDS

    def add(kind: int, n: int = 1) -> None:
        assert counts27[kind] + n <= free[kind]
        counts27[kind] += n

    def addable(suits: Sequence[int]) -> list[int]:
        return [k for k in range(NUM_KINDS) if k // 9 in suits and counts27[k] < free[k]]

    style = draw(st.sampled_from(["spread", "heavy", "near", "pairs"]))
    suits = draw(st.lists(st.sampled_from([M, P, S]), min_size=1, max_size=3 if style == "spread" else 2, unique=True))
    if style == "spread":
        while sum(counts27) < size:
            add(draw(st.sampled_from(addable(suits) or addable([M, P, S]))))
    elif style == "heavy":
        while sum(counts27) < size:
            kind = draw(st.sampled_from(addable(suits) or addable([M, P, S])))
            room = min(free[kind] - counts27[kind], size - sum(counts27))
            add(kind, draw(st.integers(1, room)))
    else:
        if style == "near":
            for _ in range(4 - n_melds):
                fitting = [s for s in SETS if all(counts27[k] + s.count(k) <= free[k] for k in s)]
                chosen = draw(st.sampled_from([s for s in fitting if s[0] // 9 in suits] or fitting))
                for kind in chosen:
                    add(kind)
            fitting_pairs = [k for k in range(NUM_KINDS) if counts27[k] + 2 <= free[k]]
            add(draw(st.sampled_from([k for k in fitting_pairs if k // 9 in suits] or fitting_pairs)), 2)
        else:  # seven pairs, some of them perhaps fours (beside melds: pairs that are no seven pairs)
            for _ in range(7):
                fitting_pairs = [k for k in range(NUM_KINDS) if counts27[k] + 2 <= free[k]]
                add(draw(st.sampled_from([k for k in fitting_pairs if k // 9 in suits] or fitting_pairs)), 2)
        while sum(counts27) > size:
            counts27[draw(st.sampled_from([k for k in range(NUM_KINDS) if counts27[k]]))] -= 1
        for _ in range(draw(st.integers(0, 4))):  # swap a tile for a random one, of any suit
            counts27[draw(st.sampled_from([k for k in range(NUM_KINDS) if counts27[k]]))] -= 1
            add(draw(st.sampled_from(addable([M, P, S]))))
    assert sum(counts27) == size and all(counts27[k] <= free[k] for k in range(NUM_KINDS))
    return counts27, void


HAND_SIZES = [pytest.param(n_melds, full - 3 * n_melds, id=f"{n_melds}melds-{full - 3 * n_melds}tiles")
              for n_melds in range(5) for full in (14, 13)]  # fmt: skip


@pytest.mark.parametrize(("n_melds", "size"), HAND_SIZES)
@given(data=st.data())
@settings(max_examples=150, deadline=None)
def test_shanten_equals_the_reference(n_melds: int, size: int, data: st.DataObject) -> None:
    counts27, void = data.draw(deals(n_melds, size), label="hand, void")
    expected = reference_shanten(counts27, n_melds, void)
    event(f"shanten {expected}")
    assert shanten(counts27, n_melds, void) == expected
    assert shanten_of_codes(suit_codes(counts27), n_melds, void) == expected


@pytest.mark.parametrize("n_melds", range(5))
@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_shanten_after_each_discard_equals_the_reference(n_melds: int, data: st.DataObject) -> None:
    counts27, void = data.draw(deals(n_melds, 14 - 3 * n_melds), label="hand, void")

    def less(kind: int) -> list[int]:
        out = list(counts27)
        out[kind] -= 1
        return out

    expected = {kind: reference_shanten(less(kind), n_melds, void) for kind in range(NUM_KINDS) if counts27[kind]}
    for value in set(expected.values()):
        event(f"shanten after a discard {value}")
    assert shanten_after_discards(counts27, n_melds, void) == expected
