"""Tiles: the notation, the two encodings, and the only parser and formatter of tile text.

Sichuan mahjong uses 108 tiles: three suits × ranks 1–9 × four copies, "就筒、条、万，各36张"
(seed 000). No honours, no flowers.

Two integer encodings, named in every variable that holds them:

- ``kind`` (0–26): ``suit * 9 + rank - 1`` with suits ``m`` (万) = 0, ``p`` (筒) = 1, ``s`` (条) = 2.
  ``counts27`` is a list of 27 counts indexed by kind.
- ``tile_id`` (0–107): ``kind * 4 + copy``, for the rare places where physical copies matter.

The engine works on kinds; text appears only at the boundary, here.

>>> parse_tiles("123m 77p")
[0, 1, 2, 15, 15]
>>> format_tiles([0, 1, 2, 15, 15])
'123m77p'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

SUITS: Final = "mps"
NUM_KINDS: Final = 27
COPIES: Final = 4

_GROUP: Final = re.compile(r"([0-9]+)([a-zA-Z])")


class TileError(ValueError):
    """Tile text that is not valid notation, or a tile multiset that cannot exist."""


def kind_of(text: str) -> int:
    """The kind of one tile written ``"7p"``.

    >>> kind_of("7p")
    15
    """
    if len(text) != 2 or text[1] not in SUITS or not ("1" <= text[0] <= "9"):
        raise TileError(f"not a tile: {text!r} (expected a rank 1-9 and a suit m, p or s, like '7p')")
    return SUITS.index(text[1]) * 9 + int(text[0]) - 1


def tile_name(kind: int) -> str:
    """The notation of one kind: ``tile_name(15) == "7p"``."""
    if not 0 <= kind < NUM_KINDS:
        raise TileError(f"not a tile kind: {kind!r} (expected 0-26)")
    return f"{kind % 9 + 1}{SUITS[kind // 9]}"


TILE_NAMES: Final[tuple[str, ...]] = tuple(tile_name(k) for k in range(NUM_KINDS))
KIND_BY_NAME: Final[dict[str, int]] = {name: k for k, name in enumerate(TILE_NAMES)}


def kind_of_name(value: object) -> int:
    """The kind of a tile name such as ``"7p"``, or -1 for anything else: ``KIND_BY_NAME.get(value, -1)``,
    worked out from the two characters. The record reader decodes some 230 tile names per record, each a
    new string: looking one up would first hash it.

    >>> kind_of_name("7p"), kind_of_name("0p"), kind_of_name(7)
    (15, -1, -1)
    """
    if type(value) is not str or len(value) != 2:
        return -1
    rank = ord(value[0]) - 49  # "1" → 0
    if not 0 <= rank <= 8:
        return -1
    suit = ord(value[1])
    if suit == 109:  # m
        return rank
    if suit == 112:  # p
        return rank + 9
    if suit == 115:  # s
        return rank + 18
    return -1


def rank_of(kind: int) -> int:
    """1–9."""
    return kind % 9 + 1


def suit_index(letter: object) -> int:
    """``"m"`` → 0, ``"p"`` → 1, ``"s"`` → 2; anything else is a :class:`TileError`."""
    if not isinstance(letter, str) or len(letter) != 1 or letter not in SUITS:
        raise TileError(f"not a suit: {letter!r} (expected m, p or s)")
    return SUITS.index(letter)


def parse_tiles(text: str | Iterable[str], *, max_copies: int = COPIES) -> list[int]:
    """Kinds of the tiles written in ``text``, in the order written.

    Accepts compact groups ``"123m456p77s"``, spaced tiles ``"1m 2m 3m"``, a mix of both, or a list
    of ``"1m"`` strings. Rejects, naming the offending text: unknown suit letters, rank 0, a digit run
    with no suit (``"123"``), a suit with no digits (``"m"``), stray characters and more than
    ``max_copies`` copies of a kind. Unlike parsers that silently read ``11111m`` as something else,
    a fifth copy is an error.

    >>> parse_tiles(["1m", "9s"])
    [0, 26]
    >>> parse_tiles("11111m")
    Traceback (most recent call last):
    ...
    pipeline.rules.tiles.TileError: 5 copies of 1m in '11111m' (at most 4 exist)
    """
    if isinstance(text, str):
        kinds = _parse_notation(text)
        shown = text
    else:
        items: list[object] = list(text)  # checked one by one: a caller may hand over anything
        kinds = []
        for item in items:
            if not isinstance(item, str):
                raise TileError(f"not a tile: {item!r} (expected a string like '7p')")
            kinds.append(kind_of(item))
        shown = " ".join(str(i) for i in items)
    check_copies(kinds, max_copies=max_copies, context=shown)
    return kinds


def _parse_notation(text: str) -> list[int]:
    kinds: list[int] = []
    pos = 0
    stripped = text.strip()
    if not stripped:
        raise TileError("no tiles: empty text")
    for token in stripped.split():
        pos = 0
        for match in _GROUP.finditer(token):
            if match.start() != pos:
                raise TileError(f"unreadable tile text {token[pos : match.start()]!r} in {text!r}")
            digits, letter = match.groups()
            if letter not in SUITS:
                raise TileError(f"unknown suit letter {letter!r} in {text!r} (expected m, p or s)")
            if "0" in digits:
                raise TileError(f"rank 0 in {digits + letter!r} of {text!r} (ranks are 1-9)")
            base = SUITS.index(letter) * 9 - 1
            kinds.extend(base + int(d) for d in digits)
            pos = match.end()
        if pos != len(token):
            rest = token[pos:]
            if rest.isalpha():
                raise TileError(f"suit {rest!r} with no ranks in {text!r}")
            raise TileError(f"ranks {rest!r} with no suit letter in {text!r}")
    return kinds


def check_copies(kinds: Iterable[int], *, max_copies: int = COPIES, context: str = "") -> None:
    """Raise :class:`TileError` when any kind occurs more than ``max_copies`` times."""
    counts = counts_of(kinds)
    for kind, n in enumerate(counts):
        if n > max_copies:
            where = f" in {context!r}" if context else ""
            raise TileError(f"{n} copies of {tile_name(kind)}{where} (at most {max_copies} exist)")


def format_tiles(kinds: Iterable[int]) -> str:
    """Compact notation, sorted by suit then rank: ``[0, 1, 2, 15, 15]`` → ``"123m77p"``."""
    ordered = sorted(kinds)
    out: list[str] = []
    for suit, letter in enumerate(SUITS):
        ranks = "".join(str(k % 9 + 1) for k in ordered if k // 9 == suit)
        if ranks:
            out.append(ranks + letter)
    return "".join(out)


def tile_list(kinds: Iterable[int]) -> list[str]:
    """``["1m", "2m", ...]`` in the given order: the record format's representation."""
    return [TILE_NAMES[k] for k in kinds]


def counts_of(kinds: Iterable[int]) -> list[int]:
    """``counts27`` of a tile sequence."""
    counts27 = [0] * NUM_KINDS
    items: list[int] = kinds if isinstance(kinds, list) else list(kinds)  # a list is walked natively, an Iterable not
    for kind in items:
        counts27[kind] = counts27[kind] + 1
    return counts27


def kinds_of_counts(counts27: Sequence[int]) -> list[int]:
    """The sorted kinds of a ``counts27`` vector (inverse of :func:`counts_of`)."""
    return [kind for kind, n in enumerate(counts27) for _ in range(n)]


_FULL_COUNTS: dict[str, list[int]] = {}


def full_counts(suits: str = SUITS) -> list[int]:
    """``counts27`` of the full set of ``suits``: four of each kind in play, none of the others. One shared
    list per suits string (the replay compares against it once per record): never change it.

    >>> full_counts("ps")[:10]
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 4]
    """
    counts = _FULL_COUNTS.get(suits)
    if counts is None:
        counts = _FULL_COUNTS[suits] = [COPIES if SUITS[kind // 9] in suits else 0 for kind in range(NUM_KINDS)]
    return counts


def full_set(suits: str = SUITS) -> list[int]:
    """The tiles of ``suits`` (all three by default: 108) as kinds, four of each, in kind order.

    >>> len(full_set()), len(full_set("ps")), full_set("ps")[0] == kind_of("1p")
    (108, 72, True)
    """
    return [kind for kind in range(NUM_KINDS) if SUITS[kind // 9] in suits for _ in range(COPIES)]
