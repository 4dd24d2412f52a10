"""Winning hands, waits and shanten, answered from per-suit lookup tables built once.

Sichuan win shapes (docs/RULES.md §2):

- standard: four sets (pungs, kongs, or chows inside the concealed hand) and one pair. "任何一对牌都可以做
  将" (seed 000): any pair may be the eyes;
- seven pairs (七对): fourteen concealed tiles as seven pairs, four of a kind counting as two pairs;
- always at most two suits, none of them the declared void: "必须缺一门才能胡牌" (seed 000).

The validator asks "can this seat win on this tile?" for three seats on every discard, so nothing here
searches recursively per call. Whether a suit's tiles split into sets (and one pair) depends only on
that suit's nine counts, so every splittable nine-count vector is enumerated once, at import, into
:data:`SUIT_TABLE`, together with the reading flags the fan count needs (all pungs, terminals in every
set, the 1-9 straight). A win check is then three dictionary look-ups. :func:`is_standard_recursive`
is the plain search the table replaces: the reference for tests and the benchmark.

>>> from pipeline.rules.tiles import parse_tiles, counts_of, tile_name
>>> is_win(counts_of(parse_tiles("111444789m45677p")), [])
True
>>> sorted(tile_name(k) for k in waits(counts_of(parse_tiles("1114447m456777p")), []))
['7m']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations_with_replacement
from typing import Final, Literal

from pipeline.rules.tiles import COPIES, NUM_KINDS, SUITS, TileError, rank_of, tile_name
from pipeline.rules.values import Value

MeldKind = Literal["pong", "direct", "added", "concealed"]
MELD_KINDS: Final[tuple[str, ...]] = ("pong", "direct", "added", "concealed")
KONG_KINDS: tuple[str, ...] = ("direct", "added", "concealed")

# Reading flags of one suit's split; a whole hand's reading ANDs the first two over suits and ORs the last.
ALL_PUNGS: Final = 1  # every set of the split is a pung
YAOJIU: Final = 2  # every set and the pair hold a 1 or a 9 (带幺九)
STRAIGHT: Final = 4  # the split holds the chows 123, 456 and 789 of this suit (一条龙)

SuitKey = tuple[int, ...]


class Meld(Value):
    """An exposed (or declared concealed) set: a pong or a kong of one ``tile`` kind.

    ``kind`` is ``pong``, ``direct`` (直杠, on a discard), ``added`` (面下杠/补杠, the fourth tile on a
    pong) or ``concealed`` (暗杠). ``source`` is the seat that supplied the tile for pongs and direct
    kongs (for an added kong, the seat of the original pong), else ``None``.
    """

    __slots__ = ()
    _fields = ("kind", "tile", "source")

    def __init__(self, kind: MeldKind, tile: int, source: int | None = None) -> None:
        if kind not in MELD_KINDS:
            raise ValueError(f"unknown meld kind {kind!r} (expected one of {', '.join(MELD_KINDS)})")
        if not 0 <= tile < NUM_KINDS:
            raise TileError(f"not a tile kind: {tile!r}")
        self._v = (kind, tile, source)

    @property
    def kind(self) -> MeldKind:
        return self._v[0]

    @property
    def tile(self) -> int:
        return self._v[1]

    @property
    def source(self) -> int | None:
        return self._v[2]

    @property
    def is_kong(self) -> bool:
        return self.kind != "pong"

    @property
    def size(self) -> int:
        return 3 if self.kind == "pong" else 4

    def __str__(self) -> str:
        return f"{self.kind}:{tile_name(self.tile)}"


# A suit's vector may hold a fifth copy of a kind: no real hand does (the parser rejects it), but 查大叫
# with ``cha_jiao_fourth_tile`` values a wait on a kind held four times, e.g. 1111m waiting on "1m".
TABLE_MAX_COPIES: Final = COPIES + 1


def _build_suit_table() -> dict[SuitKey, tuple[int, ...]]:
    """Every nine-count vector of one suit that splits into 0–4 sets and at most one pair, with at most
    :data:`TABLE_MAX_COPIES` of a rank.

    Value: the reading flags achievable by its splits, distinct and sorted (a vector may split several ways:
    ``111222333`` as three pungs or three chows).
    """
    set_types: list[tuple[tuple[int, ...], bool, bool, int]] = []
    for r in range(9):  # pungs
        set_types.append(((r, r, r), True, r in (0, 8), -1))
    for r in range(7):  # chows
        set_types.append(((r, r + 1, r + 2), False, r in (0, 6), r))
    table: dict[SuitKey, set[int]] = {}
    for n_sets in range(5):
        for combo in combinations_with_replacement(range(len(set_types)), n_sets):
            base = [0] * 9
            pungs = yaojiu = True
            chow_starts = set()
            for index in combo:
                ranks, is_pung, has_terminal, chow_start = set_types[index]
                for r in ranks:
                    base[r] += 1
                pungs &= is_pung
                yaojiu &= has_terminal
                if chow_start >= 0:
                    chow_starts.add(chow_start)
            if max(base) > TABLE_MAX_COPIES:
                continue
            straight = STRAIGHT if {0, 3, 6} <= chow_starts else 0
            for pair in (None, *range(9)):
                counts = list(base)
                pair_yaojiu = True
                if pair is not None:
                    counts[pair] += 2
                    if counts[pair] > TABLE_MAX_COPIES:
                        continue
                    pair_yaojiu = pair in (0, 8)
                flags = (ALL_PUNGS if pungs else 0) | (YAOJIU if yaojiu and pair_yaojiu else 0) | straight
                table.setdefault(tuple(counts), set()).add(flags)
    # Tuples, not sets: a tuple of ints is untracked by the garbage collector, which never walks the table.
    return {key: tuple(sorted(flags)) for key, flags in table.items()}


SUIT_TABLE: Final[dict[SuitKey, tuple[int, ...]]] = _build_suit_table()
# SUIT_TABLE by suit code (suit_codes): an int is hashed at once, a key of nine counts element by element
SUIT_FLAGS: Final[dict[int, tuple[int, ...]]] = {
    sum(n << (3 * rank) for rank, n in enumerate(key)): flags for key, flags in SUIT_TABLE.items()
}
WHOLE_CODES: Final[frozenset[int]] = frozenset(SUIT_FLAGS)  # suits that split into sets and at most one pair


def is_standard(counts27: Sequence[int]) -> bool:
    """Do the concealed tiles split into sets and exactly one pair? (Melds are not passed.)"""
    return _standard_flags(counts27) is not None


def _standard_flags(counts27: Sequence[int]) -> list[tuple[int, ...]] | None:
    """The :data:`SUIT_TABLE` reading flags of each suit held, when the tiles split into sets and exactly one
    pair; ``None`` when they do not (a rank held more than :data:`TABLE_MAX_COPIES` times is in no split, and
    would not fit its three bits of a suit code)."""
    counts: list[int] = counts27 if isinstance(counts27, list) else list(counts27)  # see suit_codes
    flags: list[tuple[int, ...]] = []
    pairs = 0
    for suit in range(3):
        base = 9 * suit
        code = 0
        for rank in range(8, -1, -1):
            n = counts[base + rank]
            if n > TABLE_MAX_COPIES:
                return None
            code = (code << 3) | n
        if code == 0:
            continue
        found = SUIT_FLAGS.get(code)
        if found is None:
            return None
        if _suit_size(code) % 3 == 2:
            pairs += 1
        flags.append(found)
    return flags if pairs == 1 else None


def is_seven_pairs(counts27: Sequence[int]) -> bool:
    """Fourteen concealed tiles in pairs; four of a kind counts as two pairs (龙)."""
    total = 0
    counts: list[int] = counts27 if isinstance(counts27, list) else list(counts27)  # see suit_codes
    for n in counts:
        if n & 1:
            return False
        total += n
    return total == 14


def is_win(counts27: Sequence[int], melds: Sequence[Meld]) -> bool:
    """Is the shape a win, ignoring suits? ``counts27`` is the concealed hand with the winning tile.

    Suit rules are :func:`suits_ok`'s; tile-count errors raise.
    """
    _check_win_size(counts27, melds)
    if not melds and is_seven_pairs(counts27):
        return True
    return is_standard(counts27)


def _check_win_size(counts27: Sequence[int], melds: Sequence[Meld]) -> None:
    expected = 14 - 3 * len(melds)
    total = sum(counts27)
    if total != expected:
        raise TileError(f"{total} concealed tiles with {len(melds)} melds (a win needs {expected})")


def suit_bits(counts27: Sequence[int], melds: Iterable[Meld]) -> int:
    """The suits present in the concealed tiles and melds as bits (1 m, 2 p, 4 s): what :func:`suits_used`,
    :func:`suits_ok` and the fan count ask, answered without building a set: a suit's counts are read up to
    the first held, from a list (indexed natively; a slice of a ``Sequence`` is a generic call).

    >>> suit_bits([0] * 9 + [1] + [0] * 17, [Meld("pong", 26)])
    6
    """
    counts: list[int] = counts27 if isinstance(counts27, list) else list(counts27)  # see suit_codes
    bits = 0
    for suit in range(3):
        base = 9 * suit
        for kind in range(base, base + 9):
            if counts[kind]:
                bits |= 1 << suit
                break
    for m in melds:
        bits |= 1 << (m.tile // 9)
    return bits


def suits_used(counts27: Sequence[int], melds: Iterable[Meld]) -> set[int]:
    """The suits (0 m, 1 p, 2 s) present in the concealed tiles and melds."""
    bits = suit_bits(counts27, melds)
    return {suit for suit in range(3) if (bits >> suit) & 1}


def suits_ok(counts27: Sequence[int], melds: Iterable[Meld], void: int | None) -> bool:
    """缺一门: at most two suits across hand and melds, and none of them the void suit (if declared)."""
    bits = suit_bits(counts27, melds)
    return bits != 7 and (void is None or not (bits >> void) & 1)


def suits_fault(counts27: Sequence[int], melds: Iterable[Meld], void: int | None) -> str | None:
    """Why the suits of a hand cannot win (缺一门), in words; ``None`` when they can.

    >>> from pipeline.rules.tiles import counts_of, parse_tiles
    >>> suits_fault(counts_of(parse_tiles("111m444m567p88p789s")), (), None)
    'three suits (mps): a win holds at most two (缺一门)'
    >>> suits_fault(counts_of(parse_tiles("111m444m567p88p789p")), (), 1)
    'holds tiles of the void suit p (mp)'
    >>> suits_fault(counts_of(parse_tiles("111m444m567p88p789p")), (), 2) is None
    True
    """
    if suits_ok(counts27, melds, void):
        return None  # the common case, told by the bits alone
    used = suits_used(counts27, melds)
    suits = "".join(SUITS[s] for s in sorted(used))
    if void is not None and void in used:
        return f"holds tiles of the void suit {SUITS[void]} ({suits})"
    return f"three suits ({suits}): a win holds at most two (缺一门)"


def is_legal_win(counts27: Sequence[int], melds: Sequence[Meld], void: int | None) -> bool:
    """A win by shape and by suits."""
    return suits_ok(counts27, melds, void) and is_win(counts27, melds)


def full_counts(counts27: Sequence[int], melds: Iterable[Meld]) -> list[int]:
    """Counts of every tile a player holds, concealed and in melds (a kong counts four)."""
    out = list(counts27)
    for meld in melds:
        out[meld.tile] = out[meld.tile] + meld.size
    return out


def roots(counts27: Sequence[int], melds: Iterable[Meld]) -> int:
    """根: the number of kinds of which the player holds all four, concealed or melded.

    "胡牌时，每有一扛或一根加1分" (seed 003); a kong is one root, and so is a pong plus the fourth tile
    held concealed.
    """
    # ">=": a hypothetical fifth copy (a 查大叫 wait under cha_jiao_fourth_tile) keeps the root of the four.
    found = 0
    for n in full_counts(counts27, melds):  # a list: walked natively, where sum() of a generator is not
        if n >= COPIES:
            found += 1
    return found


class Reading(Value):
    """One way a winning hand reads: its shape and the decomposition-dependent flags."""

    __slots__ = ()
    _fields = ("seven_pairs", "all_pungs", "yaojiu", "straight")

    def __init__(self, seven_pairs: bool, all_pungs: bool, yaojiu: bool, straight: bool) -> None:
        self._v = (seven_pairs, all_pungs, yaojiu, straight)

    @property
    def seven_pairs(self) -> bool:
        return self._v[0]

    @property
    def all_pungs(self) -> bool:
        return self._v[1]

    @property
    def yaojiu(self) -> bool:
        return self._v[2]

    @property
    def straight(self) -> bool:
        return self._v[3]


def readings(counts27: Sequence[int], melds: Sequence[Meld]) -> list[Reading]:
    """Every distinct reading of a winning hand (empty when it is not a win).

    Melds are pungs and kongs: they keep ``all_pungs`` and keep ``yaojiu`` only on a 1 or a 9.
    """
    _check_win_size(counts27, melds)
    return readings_of_size_checked(counts27, melds)


def readings_of_size_checked(counts27: Sequence[int], melds: Sequence[Meld]) -> list[Reading]:
    """:func:`readings` of a hand whose caller has counted its tiles (the fan count, which counts them first)."""
    out: list[Reading] = []
    if not melds and is_seven_pairs(counts27):
        out.append(Reading(seven_pairs=True, all_pungs=False, yaojiu=False, straight=False))
    per_suit = _standard_flags(counts27)
    if per_suit is None:
        return out
    meld_yaojiu = all(rank_of(m.tile) in (1, 9) for m in melds)
    every, some = 7, 0  # the flags of all suits ANDed and ORed, when each suit splits one way (most hands)
    for options in per_suit:
        if len(options) > 1:
            break
        every &= options[0]
        some |= options[0]
    else:
        pungs, yaojiu = bool(every & ALL_PUNGS), meld_yaojiu and bool(every & YAOJIU)
        out.append(Reading(seven_pairs=False, all_pungs=pungs, yaojiu=yaojiu, straight=bool(some & STRAIGHT)))
        return out
    combos: set[tuple[bool, bool, bool]] = set()
    for chosen in _product(per_suit):
        pungs = all(f & ALL_PUNGS for f in chosen)
        yaojiu = meld_yaojiu and all(f & YAOJIU for f in chosen)
        straight = any(f & STRAIGHT for f in chosen)
        combos.add((pungs, yaojiu, straight))
    out.extend(Reading(seven_pairs=False, all_pungs=p, yaojiu=y, straight=s) for p, y, s in sorted(combos))
    return out


def _product(options: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    result: list[tuple[int, ...]] = [()]
    for choices in options:
        result = [(*prefix, flag) for prefix in result for flag in choices]
    return result


CODE_STEPS: Final[tuple[int, ...]] = tuple(1 << (3 * (kind % 9)) for kind in range(NUM_KINDS))


def code_step(kind: int) -> int:
    """What one tile of ``kind`` adds to its suit's :func:`suit_codes` (from a table: a modulo, a product and a
    shift of mypyc's tagged ints cost several times a tuple read)."""
    return CODE_STEPS[kind]


def suit_codes(counts27: Sequence[int]) -> list[int]:
    """Each suit's nine counts as one number, three bits a rank (``codes[suit]``, the suit's *code*): a hand
    that changes a tile at a time keeps them up to date with :func:`code_step` and looks its suits up by them.

    >>> suit_codes([2, 1] + [0] * 25)
    [10, 0, 0]
    """
    # A list is indexed natively (a Sequence item by a generic call); the annotation keeps its items ints for
    # mypyc, which otherwise infers list[Any] here and ORs boxed objects. range(3), not a tuple literal: a for
    # loop over (0, 9, 18) builds the tuple and iterates it generically.
    counts: list[int] = counts27 if isinstance(counts27, list) else list(counts27)
    codes: list[int] = []
    for suit in range(3):
        base = 9 * suit
        code = 0
        for rank in range(9):
            held = counts[base + rank]
            if held:  # most kinds are not held: no shift
                code |= held << (3 * rank)
        codes.append(code)
    return codes


_SUIT_INFO: Final[dict[int, int]] = {}  # filled on first use by _suit_info
_WHOLE: Final = 4  # a _suit_info bit: the code is whole
_NEAR_SHIFT: Final = 3  # _suit_info's bits from this one up: the near-whole ranks


def _suit_info() -> dict[int, int]:
    """Suit code → what a hand's winning tiles need to know of that suit, in one int: its size modulo 3 (bits
    0–1), whether it is whole (bit 2, :data:`WHOLE_CODES`), and the ranks (0–8) one more tile of which makes it
    whole, as bits from bit 3 (``1 << rank``): every whole code and every code one tile short of one (about
    100,000 of them), worked out once on first use. A code that is neither is not here (0): not whole, and no
    tile makes it whole. One look-up a suit held answers :func:`win_mask_of_suits`, with no set built."""
    if not _SUIT_INFO:
        for whole in WHOLE_CODES:
            _SUIT_INFO[whole] = _SUIT_INFO.get(whole, 0) | _WHOLE | _suit_size(whole) % 3
            for rank in range(9):
                if (whole >> (3 * rank)) & 7:
                    code = whole - (1 << (3 * rank))
                    _SUIT_INFO[code] = _SUIT_INFO.get(code, 0) | (1 << (rank + _NEAR_SHIFT)) | _suit_size(code) % 3
    return _SUIT_INFO


# The same facts in a dense table, for the codes of suits holding at most four of a rank (every hand's): two bytes
# (low, high) at twice the code's base-5 index (:func:`suit_index`): a look-up is the index worked out (a few
# shifts) and two byte reads, where a dictionary keyed by ints costs some 350 instructions (the code boxed, hashed,
# found and compared, the box freed).
_DENSE: Final[list[bytes]] = []  # filled on first use by _dense


def _index_part(ranks: int, scale: int) -> list[int]:
    """The base-5 index (times ``scale``) of every ``ranks`` 3-bit counts, or :data:`_NO_INDEX` if one is above 4."""
    out: list[int] = []
    for bits in range(8**ranks):
        index = 0
        for rank in range(ranks - 1, -1, -1):
            held = (bits >> (3 * rank)) & 7
            index = index * 5 + held if index >= 0 and held <= COPIES else _NO_INDEX
        out.append(index * scale if index >= 0 else _NO_INDEX)
    return out


_NO_INDEX: Final = -(5**9)  # below any sum of a valid part and another part: the sum stays negative
# A suit code's index in two list reads, ranks 1-5 (the low 15 bits) and 6-9, instead of nine digits converted
_INDEX_LOW: Final[list[int]] = _index_part(5, 1)
_INDEX_HIGH: Final[list[int]] = _index_part(4, 5**5)


def suit_index(code: int) -> int:
    """The base-5 index of a suit code (rank ``r`` held ``n`` times adds ``n·5**r``), or -1 if a rank is held more
    than four times: the suit's place in the dense table of :func:`suit_info`.

    >>> suit_index(0o21), suit_index(0o5), suit_index(0o500000000), suit_index(0), suit_index(1 << 27)
    (11, -1, -1, 0, -1)
    """
    if code >> 27:
        return -1  # more than seven of the ninth rank
    index = _INDEX_LOW[code & 0o77777] + _INDEX_HIGH[code >> 15]
    return index if index >= 0 else -1


def _dense() -> bytes:
    """:func:`_suit_info` as the dense table (indexed by :func:`suit_index`), worked out once on first use."""
    if not _DENSE:
        table = bytearray(2 * 5**9)
        for whole in WHOLE_CODES:  # the table's codes (some hold five of a rank, for a code one short of them)
            index = suit_index(whole)
            if index >= 0:
                _or_info(table, index, _WHOLE | _suit_size(whole) % 3)
            for rank in range(9):
                if (whole >> (3 * rank)) & 7:  # one of this rank fewer is near whole
                    code = whole - (1 << (3 * rank))
                    near = index - 5**rank if index >= 0 else suit_index(code)
                    if near >= 0:
                        _or_info(table, near, (1 << (rank + _NEAR_SHIFT)) | _suit_size(code) % 3)
        _DENSE.append(bytes(table))
    return _DENSE[0]


def _or_info(table: bytearray, index: int, info: int) -> None:
    table[2 * index] |= info & 255
    table[2 * index + 1] |= info >> 8


def suit_info(code: int, index: int) -> int:
    """:func:`_suit_info` of the suit code ``code`` whose :func:`suit_index` is ``index`` (from the dense table,
    unless ``index`` is -1).

    >>> suit_info(0o111, suit_index(0o111)) == _suit_info()[0o111]
    True
    """
    if index >= 0:
        table = _dense()
        return table[2 * index] | table[2 * index + 1] << 8
    return _suit_info().get(code, 0)


def _suit_size(code: int) -> int:
    """The number of tiles in a suit of code ``code`` (:func:`suit_codes`), its nine 3-bit counts summed
    without a loop: the even and the odd ranks are masked into 6-bit slots and added (a slot holds at most
    14), and one multiplication sums the five slots into bits 24–29 (a suit holds at most 63 tiles, and no
    lower slot sum reaches 64 to carry into them).

    >>> _suit_size(0o444444444), _suit_size(0o700000001)
    (36, 8)
    """
    slots = (code & 0o707070707) + ((code >> 3) & 0o707070707)
    return ((slots * 0o101010101) >> 24) & 0o77


def win_tiles(counts27: Sequence[int], melds: Sequence[Meld], void: int | None = None) -> frozenset[int]:
    """The kinds one more of which makes a win, by shape and by suits, of a hand of ``13 - 3·melds`` concealed
    tiles (the caller counts). Unlike :func:`waits`, kinds held four times are kept.

    The validator asks this once per change of a seat's hand and then answers "can this seat win on that
    discard?" with a set look-up. The winning tile joins one suit, and the others must already be whole
    with the pair among them or not: a suit of ``3k + 1`` tiles completes with its pair (the others are sets
    only), a suit of ``3k + 2`` with a set (another suit holds the pair). Seven pairs wait on the one kind
    held an odd number of times.
    """
    return win_tiles_of_codes(suit_codes(counts27), melds, void)


def win_tiles_of_codes(codes: list[int], melds: Sequence[Meld], void: int | None = None) -> frozenset[int]:
    """:func:`win_tiles` from the three suits' :func:`suit_codes` (a caller that keeps them up to date saves
    the counting)."""
    return tiles_of_mask(win_mask_of_codes(codes, melds, void))


def tiles_of_mask(mask: int) -> frozenset[int]:
    """The kinds whose bits (``1 << kind``) are set in ``mask``.

    >>> sorted(tiles_of_mask(0b101 << 9))
    [9, 11]
    """
    return frozenset(kind for kind in range(NUM_KINDS) if (mask >> kind) & 1)


def win_mask_of_codes(codes: list[int], melds: Sequence[Meld], void: int | None = None) -> int:
    """:func:`win_tiles_of_codes` as bits, ``1 << kind`` for each winning kind, with no set built: what
    :func:`win_mask_of_suits` answers from the codes and the melds' suits.

    >>> from pipeline.rules.tiles import counts_of, parse_tiles
    >>> bin(win_mask_of_codes(suit_codes(counts_of(parse_tiles("1114447m456777p"))), []))
    '0b1000000'
    """
    meld_suits = 0
    for meld in melds:
        meld_suits |= 1 << (meld.tile // 9)
    return win_mask_of_suits(codes[0], codes[1], codes[2], meld_suits, len(melds) > 0, void)


def win_mask_of_suits(m: int, p: int, s: int, meld_suits: int, melded: bool, void: int | None) -> int:
    """The winning tiles as bits (``1 << kind``) of a hand of ``13 - 3·melds`` concealed tiles whose suits'
    codes (:func:`suit_codes`) are ``m``, ``p`` and ``s``, with melds (``melded``) of the suits ``meld_suits``
    (bits, ``1 << suit``): what the hand state keeps per seat, in native ints, and tests a discard against.
    The suit rule and "two suits short of whole" (most hands) are told by the codes alone; otherwise one
    :func:`suit_info` look-up a suit held.

    >>> bin(win_mask_of_suits(0o1003003, 0o3111000, 0, 0, False, None))  # 1114447m 456777p
    '0b1000000'
    """
    held = meld_suits
    if m:
        held |= 1
    if p:
        held |= 2
    if s:
        held |= 4
    if held == 7 or (void is not None and (held >> void) & 1):
        return 0  # 缺一门: three suits, or the void suit, can never win
    a = suit_info(m, suit_index(m)) if m else 0
    b = suit_info(p, suit_index(p)) if p else 0
    c = suit_info(s, suit_index(s)) if s else 0
    broken = -1  # the one suit that is not whole (sets and at most one pair), if any
    if m and not a & _WHOLE:
        broken = 0
    if p and not b & _WHOLE:
        if broken >= 0:  # two suits short of whole: no sets and a pair, perhaps seven pairs
            return 0 if melded else _seven_pairs_of_suits(m, p, s)
        broken = 1
    if s and not c & _WHOLE:
        if broken >= 0:
            return 0 if melded else _seven_pairs_of_suits(m, p, s)
        broken = 2
    # A whole suit's size is 0 or 2 modulo 3: 2 holds the pair. The tile joins the broken suit if there is one,
    # else any suit: a suit of 3k + 1 tiles takes it as its pair when no other suit holds one, a suit of 3k + 2
    # as a set when another suit holds the pair.
    pairs = (a & 3 == 2 and broken != 0) + (b & 3 == 2 and broken != 1) + (c & 3 == 2 and broken != 2)
    out = 0
    if broken < 0 or broken == 0:
        out |= _takes(a, pairs)
    if broken < 0 or broken == 1:
        out |= _takes(b, pairs) << 9
    if broken < 0 or broken == 2:
        out |= _takes(c, pairs) << 18
    if not melded:
        out |= _seven_pairs_of_suits(m, p, s)
    return out


def _takes(info: int, pairs: int) -> int:
    """The ranks a suit of :func:`_suit_info` ``info`` takes to complete the hand, as bits, given the ``pairs``
    held by the whole suits (its own counted if it is one)."""
    n = info & 3
    if n == 1 and pairs == 0:
        return info >> _NEAR_SHIFT
    if n == 2 and pairs == 1 + (info & _WHOLE != 0):
        return info >> _NEAR_SHIFT
    return 0


_LOW_BITS: Final = 0o111111111  # the low bit of each rank's count in a suit code: set where a rank is held oddly


def _seven_pairs_of_suits(m: int, p: int, s: int) -> int:
    """七对: six pairs (a four counting two) and a single wait on the single's kind (as its bit): exactly one kind
    held an odd number of times, told by the codes' low bits (one suit with one such bit, ``odd & (odd - 1) ==
    0``)."""
    odd_m, odd_p, odd_s = m & _LOW_BITS, p & _LOW_BITS, s & _LOW_BITS
    if (odd_m != 0) + (odd_p != 0) + (odd_s != 0) != 1:
        assert odd_m or odd_p or odd_s, "thirteen tiles and no kind held an odd number of times"
        return 0  # two kinds held an odd number of times
    odd, base = (odd_m, 0) if odd_m else (odd_p, 9) if odd_p else (odd_s, 18)
    if odd & (odd - 1):
        return 0
    rank = 0
    while odd > 1:
        odd >>= 3
        rank += 1
    return 1 << (base + rank)


def waits(
    counts27: Sequence[int], melds: Sequence[Meld], void: int | None = None, *, mask: int | None = None
) -> list[int]:
    """听牌: the kinds that complete a ready hand of ``13 - 3·melds`` concealed tiles, in kind order.

    Excludes kinds the player already holds all four of (no fifth copy exists) and any kind that would
    break the suit rule. Empty when the hand is not ready. ``mask``: the hand's winning tiles as bits
    (:func:`win_mask_of_codes`), when the caller keeps them.
    """
    expected = 13 - 3 * len(melds)
    held = full_counts(counts27, melds)
    counts: list[int] = counts27 if isinstance(counts27, list) else list(counts27)  # see suit_codes
    total = 0
    for n in counts:  # walked natively: sum() of a Sequence is a generic call over boxed ints
        total += n
    if total != expected:
        raise TileError(f"{total} concealed tiles with {len(melds)} melds (a ready hand holds {expected})")
    if mask is None:
        mask = win_mask_of_codes(suit_codes(counts), melds, void)
    return [kind for kind in range(NUM_KINDS) if (mask >> kind) & 1 == 1 and held[kind] < COPIES]  # bools: no boxing


def is_standard_recursive(counts27: Sequence[int]) -> bool:
    """The plain recursive search :data:`SUIT_TABLE` replaces: sets and one pair, no tables.

    Kept as the reference implementation for the property tests and the win-check benchmark.
    """
    hand = list(counts27)
    if sum(hand) % 3 != 2:
        return False

    def sets_only(c: list[int]) -> bool:
        first = next((k for k, n in enumerate(c) if n), -1)
        if first < 0:
            return True
        if c[first] >= 3:
            c[first] -= 3
            ok = sets_only(c)
            c[first] += 3
            if ok:
                return True
        if first % 9 <= 6 and c[first + 1] and c[first + 2]:
            for k in (first, first + 1, first + 2):
                c[k] -= 1
            ok = sets_only(c)
            for k in (first, first + 1, first + 2):
                c[k] += 1
            if ok:
                return True
        return False

    for pair in range(NUM_KINDS):
        if hand[pair] >= 2:
            hand[pair] -= 2
            ok = sets_only(hand)
            hand[pair] += 2
            if ok:
                return True
    return False


Block = tuple[int, int, int]  # (sets, partial sets, pair) of one suit


_BLOCKS: Final[dict[int, tuple[Block, ...]]] = {}  # memo of _suit_blocks, by suit code


def _suit_blocks(code: int) -> tuple[Block, ...]:
    """Pareto-best (sets, partial sets, pair) counts the tiles of the suit with code ``code`` can be grouped
    into.

    Partial sets (搭子) are two tiles a third completes: a pair, neighbours or a gap. Recursion on the
    lowest tile present, memoised on the code of the tiles left, so each sub-vector is solved once.
    """
    known = _BLOCKS.get(code)
    if known is None:
        known = _BLOCKS[code] = _solve_blocks(code)
    return known


def _solve_blocks(code: int) -> tuple[Block, ...]:
    if not code:
        return ((0, 0, 0),)
    r = 0
    while not (code >> (3 * r)) & 7:
        r += 1  # the lowest rank held
    held = [(code >> (3 * rank)) & 7 for rank in range(9)]
    one = [1 << (3 * rank) for rank in range(9)]  # what one tile of each rank adds to the code
    options: list[tuple[Block, int]] = []  # (what a grouping of the lowest tile gains, the code left)
    if held[r] >= 3:
        options.append(((1, 0, 0), code - 3 * one[r]))  # a pung
    if r <= 6 and held[r + 1] and held[r + 2]:
        options.append(((1, 0, 0), code - one[r] - one[r + 1] - one[r + 2]))  # a chow
    if held[r] >= 2:
        options.append(((0, 0, 1), code - 2 * one[r]))  # the pair
        options.append(((0, 1, 0), code - 2 * one[r]))  # a pair as a partial set
    for gap in (1, 2):
        if r + gap <= 8 and held[r + gap]:
            options.append(((0, 1, 0), code - one[r] - one[r + gap]))  # neighbours or a gap
    options.append(((0, 0, 0), code - one[r]))  # leave the tile isolated
    found: set[Block] = set()
    for (gm, gt, gp), rest in options:
        for m, t, p in _suit_blocks(rest):
            if p + gp <= 1:
                found.add((m + gm, t + gt, p + gp))
    pareto = [b for b in found if not any(o != b and o[0] >= b[0] and o[1] >= b[1] and o[2] >= b[2] for o in found)]
    return tuple(sorted(pareto))


def shanten(counts27: Sequence[int], n_melds: int = 0, void: int | None = None) -> int:
    """向听: how many tile changes the concealed hand is from ready (0) or a win (−1).

    Tiles of the ``void`` suit are left out: they must be discarded whatever happens. Counts the
    standard shape (``8 − 2·sets − partials − pair``, sets plus partials at most four) and, without
    melds, seven pairs (``6 − pairs``, four of a kind being two pairs).
    """
    return shanten_of_codes(suit_codes(counts27), n_melds, void)


def shanten_of_codes(codes: list[int], n_melds: int = 0, void: int | None = None) -> int:
    """:func:`shanten` of the hand whose suits have the codes ``codes`` (:func:`suit_codes`: the hand state
    keeps them up to date, and a discard changes one by :func:`code_step`)."""
    entries: list[int] = []
    for suit in range(3):
        code = codes[suit]
        if suit == void or not code:
            continue
        entry = _CODE_BLOCKS.get(code)
        if entry is None:
            entry = _code_blocks(code)
        entries.append(entry)
    return _shanten_of_entries(entries, n_melds)


def _shanten_of_entries(entries: list[int], n_melds: int) -> int:
    """:func:`shanten_of_codes` of the suits counted (held, not void), by their :data:`_CODE_BLOCKS` entries."""
    key = n_melds + 1  # the melds and the suits' block options packed in one int (digits base _ID_BASE, none 0)
    pairs = 0
    for entry in entries:
        key = key * _ID_BASE + (entry >> 4) + 1
        pairs += entry & 15
    best = _COMBINED.get(key)
    if best is None:
        best = _COMBINED[key] = _combine(key)
    if n_melds == 0:
        best = min(best, 6 - min(pairs, 7))
    return best


# Shanten works on each suit's block options (_suit_blocks), which come from a small vocabulary: each distinct
# options tuple gets an id, each suit code seen its options' id and pair count, and the standard-shape shanten of
# a combination of ids (and melds) is worked out once.
_CODE_BLOCKS: Final[dict[int, int]] = {}  # suit code → options id × 16 + pairs held (at most 7)
_BLOCK_IDS: Final[dict[tuple[Block, ...], int]] = {}
_BLOCK_SETS: Final[list[tuple[Block, ...]]] = []  # options by id
_ID_BASE: Final = 1 << 16  # ids stay below it: a few hundred distinct options exist
_COMBINED: Final[dict[int, int]] = {}  # memo of _combine, by packed key


def _code_blocks(code: int) -> int:
    blocks = _suit_blocks(code)
    ident = _BLOCK_IDS.get(blocks)
    if ident is None:
        ident = _BLOCK_IDS[blocks] = len(_BLOCK_SETS)
        _BLOCK_SETS.append(blocks)
        assert ident + 1 < _ID_BASE
    pairs = 0
    for rank in range(9):
        pairs += ((code >> (3 * rank)) & 7) // 2
    assert pairs < 16, "more than fifteen pairs in one suit"
    entry = _CODE_BLOCKS[code] = ident * 16 + pairs
    return entry


def shanten_after_discards(counts27: Sequence[int], n_melds: int = 0, void: int | None = None) -> dict[int, int]:
    """向听 after each possible discard: ``{kind: shanten(counts27 less one kind)}`` for every kind held."""
    codes = suit_codes(counts27)
    out: dict[int, int] = {}
    for kind, n in enumerate(counts27):
        if n:
            suit, step = kind // 9, code_step(kind)
            codes[suit] = codes[suit] - step
            out[kind] = shanten_of_codes(codes, n_melds, void)
            codes[suit] = codes[suit] + step
    return out


def improving_mask(m: int, p: int, s: int, n_melds: int = 0, void: int | None = None) -> int:
    """The kinds whose draw lowers the :func:`shanten_of_codes` of the hand of suit codes ``m``, ``p``, ``s``, as
    bits (``1 << kind``): the live tiles of the reference policy (pipeline/game/policy.py) are their unseen
    copies. Only a kind next to a tile held (the same kind, or up to two ranks away), in a suit held outside the
    ``void``, of which fewer than four are held, can help: only those are tried.

    >>> from pipeline.rules.tiles import counts_of, parse_tiles, tile_name
    >>> codes = suit_codes(counts_of(parse_tiles("111m456m789m2345p")))
    >>> [tile_name(k) for k in range(27) if improving_mask(*codes) >> k & 1]
    ['2p', '5p']
    """
    codes = [m, p, s]
    base = shanten_of_codes(codes, n_melds, void)  # which keeps each suit's entry (_CODE_BLOCKS)
    entries: list[int] = []  # the suits counted (held, not void): only one entry changes per tile tried
    suits: list[int] = []
    for suit in range(3):
        code = codes[suit]
        if suit != void and code:
            suits.append(suit)
            entries.append(_CODE_BLOCKS[code])
    mask = 0
    for i in range(len(suits)):
        code, entry = codes[suits[i]], entries[i]
        adds = _ADDS.get(code)
        if adds is None:
            adds = _adds(code, entry)
        for after, ranks in adds:  # one shanten per distinct entry the suit can move to, not per tile
            entries[i] = after
            if _shanten_of_entries(entries, n_melds) < base:
                mask |= ranks << (9 * suits[i])
        entries[i] = entry
    return mask


_ADDS: Final[dict[int, tuple[tuple[int, int], ...]]] = {}  # memo of _adds, by suit code


def _adds(code: int, entry: int) -> tuple[tuple[int, int], ...]:
    """What one more tile does to the suit of code ``code`` (its :data:`_CODE_BLOCKS` ``entry``), for the ranks
    :func:`improving_mask` tries (next to a tile held, up to two ranks away, fewer than four held): each entry the
    suit can move to, with the ranks that move it there as bits. A rank that leaves the entry as it was cannot
    lower any hand's shanten (the shanten reads the suit through its entry alone) and is left out."""
    near = 0  # bit rank + 2 set: a tile held within two ranks of rank
    for rank in range(9):
        if (code >> (3 * rank)) & 7:
            near |= 31 << rank
    by_entry: dict[int, int] = {}
    for rank in range(9):
        if (near >> (rank + 2)) & 1 and (code >> (3 * rank)) & 7 < 4:
            more = code + (1 << (3 * rank))
            tried = _CODE_BLOCKS.get(more)
            after = _code_blocks(more) if tried is None else tried
            if after != entry:
                by_entry[after] = by_entry.get(after, 0) | (1 << rank)
    out = _ADDS[code] = tuple(by_entry.items())
    return out


def deal_shanten(counts27: Sequence[int], *, choose_void: bool) -> int:
    """向听 of a dealt hand as Sichuan plays it: a win holds at most two suits, so at a table of three suits
    (``choose_void``) the best over the suit the player will declare void (its tiles must go whatever happens);
    at a table of two suits the plain :func:`shanten`. The score the stacked-deal screen compares with random
    deals (pipeline/audit/deals.py).

    >>> from pipeline.rules.tiles import counts_of, parse_tiles
    >>> hand = counts_of(parse_tiles("123m456m789m11p12s"))
    >>> shanten(hand), deal_shanten(hand, choose_void=True)  # ready on 3s, but with three suits: the 11p or the 12s go
    (0, 1)
    >>> deal_shanten(counts_of(parse_tiles("1122334455667p")), choose_void=False)
    0
    """
    if not choose_void:
        return shanten(counts27)
    codes = suit_codes(counts27)
    return min(shanten_of_codes(codes, 0, void) for void in range(3))


def suit_shape(code: int) -> int:
    """All :func:`shanten_of_codes` reads of one suit of code ``code``: its block options (as an id of this
    process) and its pairs. Suits of one shape give every hand the same shanten, which is what lets the exact
    distribution of a random deal's shanten be summed over a few hundred shapes per suit instead of every hand
    (pipeline/audit/deal_null.py).

    >>> from pipeline.rules.tiles import counts_of, parse_tiles
    >>> [suit_codes(counts_of(parse_tiles(t)))[0] for t in ("123m", "456m", "112m")]
    [73, 37376, 10]
    >>> suit_shape(73) == suit_shape(37376) != suit_shape(10)
    True
    """
    entry = _CODE_BLOCKS.get(code)
    return entry if entry is not None else _code_blocks(code)


def _combine(key: int) -> int:
    """The standard-shape shanten of a packed key of :func:`shanten_of_codes`: the meld count, then the
    block options of each suit held."""
    parts: list[tuple[Block, ...]] = []
    while key >= _ID_BASE:
        parts.append(_BLOCK_SETS[key % _ID_BASE - 1])
        key //= _ID_BASE
    n_melds = key - 1
    combos: list[Block] = [(n_melds, 0, 0)]
    for blocks in parts:
        combos = [(m + bm, t + bt, p + bp) for m, t, p in combos for bm, bt, bp in blocks if p + bp <= 1]
    best = 8
    for m, t, p in combos:
        value = 8 - 2 * m - min(t, 4 - m) - p
        if value < best:
            best = value
    return best


# ------------------------------------------------------------------------------------ hidden hands
def could_win(
    counts27: Sequence[int], hidden: int, melds: Sequence[Meld], void: int | None, spare: Sequence[int]
) -> bool:
    """Could ``hidden`` tiles nobody has seen complete the known concealed tiles ``counts27`` (the winning tile
    included) and ``melds`` into a legal win, by shape and suits? ``spare[k]`` is how many copies of kind ``k``
    are not seen anywhere (what a hidden tile may be). The question an observer's record asks of a win by a hand
    it cannot see (schemas/XZLOG.md, levels); with nothing hidden it is :func:`is_legal_win`'s.

    >>> from pipeline.rules.tiles import counts_of, parse_tiles
    >>> known = counts_of(parse_tiles("111m444m789m5p"))
    >>> could_win(known, 4, (), None, [4] * 27)  # 46p 55p, 456p 55p, ...
    True
    >>> could_win(known, 4, (), 1, [4] * 27)  # but not with the dots declared void
    False
    >>> spare = [4] * 27
    >>> spare[9:18] = [0] * 9  # every other dot seen elsewhere: the 5p stays alone
    >>> could_win(known, 4, (), None, spare)
    False
    """
    counts: list[int] = counts27 if isinstance(counts27, list) else list(counts27)  # see suit_codes
    need = 14 - 3 * len(melds)
    if sum(counts) + hidden != need:
        return False
    bits = suit_bits(counts, melds)
    for first, second in ((0, 1), (0, 2), (1, 2)):
        allowed = (1 << first) | (1 << second)
        if (void is not None and (allowed >> void) & 1) or bits & ~allowed:
            continue
        if not melds and _seven_pairs_possible(counts, spare, (first, second)):
            return True
        options = _suit_options(counts, spare, second)
        for tiles, pairs in _suit_options(counts, spare, first):
            if (need - tiles, 1 - pairs) in options:
                return True
    return False


def _suit_options(counts: list[int], spare: Sequence[int], suit: int) -> set[tuple[int, int]]:
    """Every (tiles, pairs) a suit can hold as sets and at most one pair, holding at least its known tiles and
    at most their spare copies more: rank by rank, the chows begun at the two ranks before carry over."""
    base = 9 * suit
    states = {(0, 0, 0, 0)}  # (chows begun at the rank before, chows begun two ranks before, tiles, pairs)
    for rank in range(9):
        low = counts[base + rank]
        high = min(4, low + spare[base + rank])
        chows = 5 if rank < 7 else 1
        after: set[tuple[int, int, int, int]] = set()
        for last, before, tiles, pairs in states:
            for begun in range(chows):
                for pung in (0, 1):
                    for pair in range(2 - pairs):
                        used = last + before + begun + 3 * pung + 2 * pair
                        if low <= used <= high and tiles + used <= 14:
                            after.add((begun, last, tiles + used, pairs + pair))
        states = after
    return {(tiles, pairs) for _, _, tiles, pairs in states}


def _seven_pairs_possible(counts: list[int], spare: Sequence[int], suits: tuple[int, int]) -> bool:
    """Could the known tiles and hidden ones of the two ``suits`` make seven pairs (four of a kind is two)?"""
    low = high = 0
    for suit in suits:
        for kind in range(9 * suit, 9 * suit + 9):
            least = counts[kind] + (counts[kind] & 1)
            most = min(4, counts[kind] + spare[kind]) & ~1
            if least > most:
                return False
            low += least
            high += most
    return low <= 14 <= high
