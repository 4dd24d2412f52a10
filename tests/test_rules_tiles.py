"""Tile notation: the one parser and formatter of tile text, and the kind encoding (docs/RULES.md §1)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.rules.tiles import (
    KIND_BY_NAME,
    NUM_KINDS,
    TILE_NAMES,
    TileError,
    check_copies,
    counts_of,
    format_tiles,
    full_set,
    kind_of,
    kind_of_name,
    kinds_of_counts,
    parse_tiles,
    rank_of,
    suit_index,
    tile_list,
    tile_name,
)

# -- the encoding ---------------------------------------------------------------------------------------


def test_108_tiles_three_suits_nine_ranks_four_copies() -> None:
    # "一副牌共108张，就筒、条、万，各36张" (seed 000)
    tiles = full_set()
    assert len(tiles) == 108
    assert Counter(k // 9 for k in tiles) == {0: 36, 1: 36, 2: 36}
    assert set(Counter(tiles).values()) == {4}


def test_kind_is_suit_times_nine_plus_rank_minus_one() -> None:
    assert [kind_of(t) for t in ("1m", "9m", "1p", "7p", "9s")] == [0, 8, 9, 15, 26]


def test_suit_and_rank_of_a_kind() -> None:
    assert rank_of(15) == 7


def test_tile_name_inverts_kind_of() -> None:
    assert [tile_name(kind_of(name)) for name in TILE_NAMES] == list(TILE_NAMES)
    assert KIND_BY_NAME["7p"] == 15 and len(TILE_NAMES) == NUM_KINDS


@pytest.mark.parametrize("kind", [-1, 27])
def test_tile_name_rejects_a_kind_out_of_range(kind: int) -> None:
    with pytest.raises(TileError, match=f"not a tile kind: {kind}"):
        tile_name(kind)


@pytest.mark.parametrize("text", ["0m", "7z", "77p", "p7", ""])
def test_kind_of_rejects_anything_but_one_tile(text: str) -> None:
    with pytest.raises(TileError, match=f"not a tile: {text!r}"):
        kind_of(text)


names = st.one_of(
    st.sampled_from(TILE_NAMES),
    st.text(alphabet="0123456789mpsMPSz/: \x00", max_size=3),
    st.text(max_size=3),
    st.integers(-1, 30),
    st.none(),
    st.lists(st.sampled_from(TILE_NAMES), max_size=1),
)


@given(names)
def test_kind_of_name_is_the_name_lookup(value: object) -> None:
    """The reader's decoder answers exactly what looking the name up answers, -1 for anything else."""
    assert kind_of_name(value) == (KIND_BY_NAME.get(value, -1) if isinstance(value, str) else -1)


def test_kind_of_name_reads_every_tile_name() -> None:
    assert [kind_of_name(name) for name in TILE_NAMES] == list(range(NUM_KINDS))
    assert kind_of_name("7p") == 15 and kind_of_name("0p") == -1 and kind_of_name("7P") == -1


def test_suit_letters() -> None:
    assert [suit_index(letter) for letter in "mps"] == [0, 1, 2]


@pytest.mark.parametrize("letter", ["z", "M", "mp", "", 0])
def test_suit_index_rejects_other_letters(letter: object) -> None:
    with pytest.raises(TileError, match="not a suit"):
        suit_index(letter)  # type: ignore[arg-type]


def test_counts_and_kinds_are_inverse() -> None:
    counts27 = counts_of([15, 0, 15])
    assert counts27[0] == 1 and counts27[15] == 2 and sum(counts27) == 3
    assert kinds_of_counts(counts27) == [0, 15, 15]


# -- parsing --------------------------------------------------------------------------------------------


def test_parse_compact_groups() -> None:
    assert parse_tiles("123m456p77s") == [0, 1, 2, 12, 13, 14, 24, 24]


def test_parse_spaced_tiles() -> None:
    assert parse_tiles("1m 2m 3m") == [0, 1, 2]


def test_parse_a_mix_of_groups_and_spaces_and_tabs() -> None:
    assert parse_tiles(" 12m\t3m  9s ") == [0, 1, 2, 26]


def test_parse_keeps_the_written_order() -> None:
    assert parse_tiles("9s1m") == [26, 0]


def test_parse_a_list_of_tile_names() -> None:
    assert parse_tiles(["1m", "9s", "7p"]) == [0, 26, 15]


def test_parse_any_iterable_of_names() -> None:
    assert parse_tiles(name for name in ("2m", "2m")) == [1, 1]


def test_four_copies_are_fine() -> None:
    assert parse_tiles("1111m") == [0, 0, 0, 0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("123x", "unknown suit letter 'x' in '123x'"),
        ("1M", "unknown suit letter 'M' in '1M'"),  # rejected, never coerced to 1m
        ("102m", "rank 0 in '102m' of '102m'"),
        ("11111m", "5 copies of 1m in '11111m'"),
        ("1111m 1m", "5 copies of 1m in '1111m 1m'"),
        ("123", "ranks '123' with no suit letter in '123'"),
        ("12m 34", "ranks '34' with no suit letter in '12m 34'"),
        ("m", "suit 'm' with no ranks in 'm'"),
        ("123mp", "suit 'p' with no ranks in '123mp'"),
        ("", "empty text"),
        ("  \n", "empty text"),
        ("1m,2m", "unreadable tile text ',' in '1m,2m'"),
        ("12-3m", "unreadable tile text '12-' in '12-3m'"),
    ],
)
def test_parse_errors_name_the_offending_text(text: str, message: str) -> None:
    with pytest.raises(TileError) as caught:
        parse_tiles(text)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["1m", "x"], "not a tile: 'x'"),
        (["0m"], "not a tile: '0m'"),
        (["123m"], "not a tile: '123m'"),
        (["1m", 15], "not a tile: 15"),
        (["1m"] * 5, "5 copies of 1m in '1m 1m 1m 1m 1m'"),
    ],
)
def test_list_errors_name_the_offending_item(items: list[object], message: str) -> None:
    with pytest.raises(TileError) as caught:
        parse_tiles(items)  # type: ignore[arg-type]
    assert message in str(caught.value)


def test_tile_error_is_a_value_error() -> None:
    assert issubclass(TileError, ValueError)


def test_max_copies_is_a_parameter() -> None:
    with pytest.raises(TileError, match="2 copies of 5p in '55p' \\(at most 1 exist\\)"):
        parse_tiles("55p", max_copies=1)


def test_check_copies_without_context() -> None:
    with pytest.raises(TileError, match=r"^5 copies of 9s \(at most 4 exist\)$"):
        check_copies([26] * 5)


# -- formatting -----------------------------------------------------------------------------------------


def test_format_sorts_by_suit_then_rank() -> None:
    assert format_tiles([24, 0, 13, 2]) == "13m5p7s"


def test_format_of_nothing_is_empty() -> None:
    assert format_tiles([]) == ""


def test_tile_list_keeps_the_order() -> None:
    assert tile_list([24, 0]) == ["7s", "1m"]


# -- round trips ----------------------------------------------------------------------------------------

# Random multisets of kinds with at most four copies of each.
multisets = st.lists(st.integers(0, NUM_KINDS - 1), min_size=1, max_size=40).filter(
    lambda kinds: max(Counter(kinds).values()) <= 4
)


@given(multisets)
def test_format_then_parse_gives_the_sorted_kinds(kinds: list[int]) -> None:
    assert parse_tiles(format_tiles(kinds)) == sorted(kinds)


@given(multisets)
def test_tile_list_then_parse_gives_the_same_order(kinds: list[int]) -> None:
    assert parse_tiles(tile_list(kinds)) == kinds


@given(multisets)
def test_spaced_tile_list_parses_as_text(kinds: list[int]) -> None:
    assert parse_tiles(" ".join(tile_list(kinds))) == kinds


@given(multisets)
def test_counts_round_trip(kinds: list[int]) -> None:
    assert kinds_of_counts(counts_of(kinds)) == sorted(kinds)
