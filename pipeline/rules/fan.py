"""Fan (番): every scoring pattern of docs/RULES.md §3, the best reading, points and the ready-hand value.

Convention: a plain hand (平胡) is ``fan_base`` fan and **points = base × 2^(fan−fan_base)**, capped at
``base × 2^(cap−fan_base)``. The Chinese texts count a plain hand as 1 fan ("如普通“对对胡”……就是两番（2元）",
seed 000); SBR and most engines count it as 0 ("Count 0 fans for a hand with nothing", SBR p. 26): the
same multipliers, the count shifted by one. Patterns add on top of plain: all pungs +1, flush +2,
terminals +2, seven pairs +2, 2-5-8 pungs +2 (each a switch), then one fan per root and the situational
additions. Each pattern is one :class:`Pattern` with one signature, ``count(hand, reading,
rules) -> fan``; the hand is scored under every reading (``111222333m`` as pungs or as chows) and the
best total wins.

>>> from pipeline.rules.ruleset import load_ruleset
>>> score(WinHand.of("111444789m456p7p", win_tile="7p"), load_ruleset("chengdu")).fan
1
>>> score(WinHand.of("1111m99m44p66p88p9p", win_tile="9p"), load_ruleset("chengdu")).points
8
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from pipeline.rules.hand import (
    Meld,
    Reading,
    full_counts,
    readings_of_size_checked,
    roots,
    suit_bits,
    suits_fault,
    waits,
    win_tiles,
)
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.tiles import COPIES, TILE_NAMES, TileError, counts_of, parse_tiles, rank_of, suit_index
from pipeline.rules.values import Value

CONVENTION = "plain hand = 1 fan; points = base × 2^(fan−1), capped at base × 2^(cap−1)"


def convention(rules: RuleSet) -> str:
    """How ``rules`` counts fan, in words (outputs say which count their fan are in).

    >>> from pipeline.rules.ruleset import load_ruleset
    >>> convention(load_ruleset({"profile": "chengdu", "fan_base": 0}))
    'plain hand = 0 fan; points = base × 2^fan, capped at base × 2^cap'
    """
    if rules.fan_base == 1:
        return CONVENTION
    return "plain hand = 0 fan; points = base × 2^fan, capped at base × 2^cap"


class NotAWin(ValueError):
    """The tiles do not form a winning hand under the rules (shape, suits or void)."""


class WinHand(Value):
    """Everything the fan count needs about one win.

    ``counts27`` is the concealed hand *including* the winning tile; ``melds`` the pongs and kongs.
    Situational flags: ``self_drawn`` (自摸), ``after_kong`` (on a kong replacement: 杠上花),
    ``kong_discard`` (on the discard a player made right after their kong: 杠上炮), ``rob_kong`` (抢杠),
    ``last_tile`` (海底: the last wall tile or the discard after it), ``heavenly`` (天胡), ``earthly`` (地胡).
    """

    __slots__ = ()
    _fields = (
        "counts27",
        "melds",
        "win_tile",
        "void",
        "self_drawn",
        "after_kong",
        "kong_discard",
        "rob_kong",
        "last_tile",
        "heavenly",
        "earthly",
    )

    def __init__(
        self,
        counts27: tuple[int, ...],
        melds: tuple[Meld, ...],
        win_tile: int,
        void: int | None = None,
        self_drawn: bool = False,
        after_kong: bool = False,
        kong_discard: bool = False,
        rob_kong: bool = False,
        last_tile: bool = False,
        heavenly: bool = False,
        earthly: bool = False,
    ) -> None:
        self._v = (
            counts27,
            melds,
            win_tile,
            void,
            self_drawn,
            after_kong,
            kong_discard,
            rob_kong,
            last_tile,
            heavenly,
            earthly,
        )

    @property
    def counts27(self) -> tuple[int, ...]:
        return self._v[0]

    @property
    def melds(self) -> tuple[Meld, ...]:
        return self._v[1]

    @property
    def win_tile(self) -> int:
        return self._v[2]

    @property
    def void(self) -> int | None:
        return self._v[3]

    @property
    def self_drawn(self) -> bool:
        return self._v[4]

    @property
    def after_kong(self) -> bool:
        return self._v[5]

    @property
    def kong_discard(self) -> bool:
        return self._v[6]

    @property
    def rob_kong(self) -> bool:
        return self._v[7]

    @property
    def last_tile(self) -> bool:
        return self._v[8]

    @property
    def heavenly(self) -> bool:
        return self._v[9]

    @property
    def earthly(self) -> bool:
        return self._v[10]

    @classmethod
    def of(
        cls,
        concealed: str | Sequence[str] | Sequence[int],
        *,
        win_tile: str | int,
        melds: Sequence[Meld] = (),
        que: str | None = None,
        with_win_tile: bool = False,
        **flags: bool,
    ) -> WinHand:
        """Build from notation. ``concealed`` holds the tiles *before* the winning tile unless
        ``with_win_tile`` says it already includes it.

        >>> WinHand.of("111444789m456p7p", win_tile="7p").counts27[15]
        2
        """
        if isinstance(concealed, str) or (concealed and isinstance(concealed[0], str)):
            kinds = parse_tiles(concealed)  # type: ignore[arg-type]
        else:
            kinds = list(concealed)  # type: ignore[arg-type]
        win = parse_tiles([win_tile])[0] if isinstance(win_tile, str) else win_tile
        if not with_win_tile:
            kinds.append(win)
        counts27 = counts_of(kinds)
        expected = 14 - 3 * len(melds)
        if len(kinds) != expected:
            before = expected - 1
            raise TileError(
                f"{len(kinds) - (0 if with_win_tile else 1)} concealed tiles with {len(melds)} melds: "
                f"a winning hand holds {before} before the winning tile"
            )
        if counts27[win] == 0:
            raise TileError("the winning tile is not in the hand")
        held = list(counts27)
        for meld in melds:
            held[meld.tile] = held[meld.tile] + meld.size
        for kind, n in enumerate(held):
            if n > COPIES:
                raise TileError(f"{n} copies of {TILE_NAMES[kind]} across hand and melds")
        void = suit_index(que) if que else None
        return cls(counts27=tuple(counts27), melds=tuple(melds), win_tile=win, void=void, **flags)

    @property
    def tiles_count(self) -> int:
        n = 0
        for held in self.counts27:  # a tuple walked natively; sum() from compiled code is a generic call
            n += held
        return n


@dataclass(frozen=True, slots=True)
class Pattern:
    """One scoring pattern: id, names, the fan one occurrence is worth under a rule set (``unit``: the one home
    of every pattern's value, read by the scoring of a hand and of a settlement record's declared patterns
    alike), and how many times it occurs in a hand under one reading (``occurs``: 0 or 1, or the roots)."""

    id: str
    name_zh: str
    name_en: str
    unit: Callable[[RuleSet], int] = field(repr=False)
    occurs: Callable[[WinHand, Reading, RuleSet], int] = field(repr=False)

    def count(self, hand: WinHand, reading: Reading, rules: RuleSet) -> int:
        """The fan the pattern adds to ``hand`` read as ``reading``."""
        n = self.occurs(hand, reading, rules)
        return n * self.unit(rules) if n else 0


def _one_suit(bits: int) -> bool:
    """清一色: the suits held (:func:`~pipeline.rules.hand.suit_bits`) are one."""
    return bits == 1 or bits == 2 or bits == 4


def _all_258(hand: WinHand) -> bool:
    return all(rank_of(k) in (2, 5, 8) for k, n in enumerate(hand.counts27) if n) and all(
        rank_of(m.tile) in (2, 5, 8) for m in hand.melds
    )


def _no_terminals(hand: WinHand) -> bool:
    return all(rank_of(k) not in (1, 9) for k, n in enumerate(hand.counts27) if n) and all(
        rank_of(m.tile) not in (1, 9) for m in hand.melds
    )


def _golden_wait(hand: WinHand, reading: Reading, rules: RuleSet, live: frozenset[int] | None = None) -> bool:
    """金钩钓. ``exposed_melds``: four melds, so the hand waited on one tile to pair. ``single_wait_all_pungs``:
    all pungs, concealed ones too, and the hand before the win waited on that one tile only, among the tiles
    that exist: a kind the player holds four of, in hand or melds, is no wait ("exhaustive", SBR p. 30), so
    ``8s 999s`` beside a kong of 7s waits on 8s alone. ``live``: the waits of the hand before the win, when the
    caller knows them (:func:`ready_value` scores a kong as the pong it was, whose kind would look live)."""
    if rules.jin_gou_diao == "exposed_melds":
        return len(hand.melds) == 4
    if not reading.all_pungs:
        return False
    if live is None:
        before = list(hand.counts27)
        before[hand.win_tile] = before[hand.win_tile] - 1
        return waits(before, hand.melds, hand.void) == [hand.win_tile]
    return live == frozenset((hand.win_tile,))


def _occurs(i: int, h: WinHand, r: Reading, rules: RuleSet, bits: int = -1, live: frozenset[int] | None = None) -> int:
    """How many times pattern ``i`` of :data:`PATTERNS` occurs in ``h`` read as ``r`` (its ``occurs``): one native
    function, which :func:`score` calls directly (a call of a pattern's ``occurs`` is a generic call, some 500
    instructions, for each pattern the rules value, under each reading of each win scored). ``bits``: the suits
    held (:func:`~pipeline.rules.hand.suit_bits`), when the caller knows them; ``live``: the waits before the win
    (:func:`_golden_wait`)."""
    if i == 0:  # ping_hu
        return 1
    if i == 1:  # dui_dui_hu
        return int(r.all_pungs)
    if i == 2:  # qing_yi_se
        return int(_one_suit(bits if bits >= 0 else suit_bits(h.counts27, h.melds)))
    if i == 3:  # dai_yao_jiu
        return int(r.yaojiu)
    if i == 4:  # qi_dui
        return int(r.seven_pairs)
    if i == 5:  # jiang_dui
        return int(r.all_pungs and _all_258(h))
    if i == 6:  # yi_tiao_long
        return int(r.straight)
    if i == 7:  # duan_yao
        return int(_no_terminals(h))
    if i == 8:  # men_qing
        return int(all(m.kind == "concealed" for m in h.melds))
    if i == 9:  # jin_gou_diao
        return int(bool(rules.jin_gou_diao_fan) and _golden_wait(h, r, rules, live))
    if i == 10:  # shi_ba_luo_han
        return int(sum(m.is_kong for m in h.melds) == 4)
    if i == 11:  # gen
        return roots(h.counts27, h.melds)
    if i == 12:  # gang_shang_hua
        return int(h.after_kong and h.self_drawn)
    if i == 13:  # gang_shang_pao
        return int(h.kong_discard and not h.self_drawn)
    if i == 14:  # qiang_gang
        return int(h.rob_kong)
    if i == 15:  # hai_di
        return int(h.last_tile)
    return int(h.self_drawn)  # 16: zi_mo


def _pattern(i: int, id: str, name_zh: str, name_en: str, unit: Callable[[RuleSet], int]) -> Pattern:
    """Pattern ``i`` of :data:`PATTERNS`, whose ``occurs`` is :func:`_occurs` for ``i``."""
    return Pattern(id, name_zh, name_en, unit, lambda h, r, rules: _occurs(i, h, r, rules))


# The order is the order of the breakdown (and _occurs's numbers).
PATTERNS: Final[tuple[Pattern, ...]] = (
    _pattern(0, "ping_hu", "平胡", "plain hand", lambda rules: rules.fan_base),
    _pattern(1, "dui_dui_hu", "对对胡", "all pungs", lambda rules: 1),
    _pattern(2, "qing_yi_se", "清一色", "full flush", lambda rules: 2),
    _pattern(3, "dai_yao_jiu", "带幺九", "terminals in every set", lambda rules: rules.dai_yao_jiu_fan),
    _pattern(4, "qi_dui", "七对", "seven pairs", lambda rules: 2),
    _pattern(5, "jiang_dui", "将对", "2-5-8 all pungs", lambda rules: rules.jiang_dui_fan),
    _pattern(6, "yi_tiao_long", "一条龙", "pure straight", lambda rules: rules.yi_tiao_long_fan),
    _pattern(7, "duan_yao", "断幺九", "no terminals", lambda rules: rules.duan_yao_fan),
    _pattern(8, "men_qing", "门清", "concealed hand", lambda rules: rules.men_qing_fan),
    _pattern(9, "jin_gou_diao", "金钩钓", "single wait to pair four pungs", lambda rules: rules.jin_gou_diao_fan),
    _pattern(10, "shi_ba_luo_han", "十八罗汉", "four kongs", lambda rules: rules.shi_ba_luo_han_fan),
    _pattern(11, "gen", "根", "roots", lambda rules: rules.root_fan),
    _pattern(12, "gang_shang_hua", "杠上花", "win on a kong replacement", lambda rules: rules.gang_shang_hua_fan),
    _pattern(13, "gang_shang_pao", "杠上炮", "win on the discard after a kong", lambda rules: rules.gang_shang_pao_fan),
    _pattern(14, "qiang_gang", "抢杠胡", "robbing a kong", lambda rules: rules.rob_kong_fan),
    _pattern(15, "hai_di", "海底", "last tile", lambda rules: rules.haidi_fan),
    _pattern(16, "zi_mo", "自摸", "self-drawn (as fan)", lambda rules: 1 if rules.self_draw == "fan" else 0),
)
PATTERN_BY_ID = {p.id: p for p in PATTERNS}

# The units of PATTERNS under the rule set scored last (rule sets are shared: one per distinct set of switches), so
# that a score reads each pattern's unit from the interpreted RuleSet once per rule set, not once per win.
_UNITS_OF: Final[list[RuleSet | None]] = [None]
_UNITS: Final[list[tuple[int, ...]]] = [()]


def _units(rules: RuleSet) -> tuple[int, ...]:
    """``Pattern.unit(rules)`` of every pattern, in order."""
    if _UNITS_OF[0] is not rules:
        _UNITS[0] = tuple(p.unit(rules) for p in PATTERNS)
        _UNITS_OF[0] = rules
    return _UNITS[0]


# RuleSet.points of the rule set scored last, by fan (an interpreted method: a generic call, over 1,000 instructions)
_POINTS_OF: Final[list[RuleSet | None]] = [None]
_POINTS: Final[list[dict[int, int]]] = [{}]


def _points(rules: RuleSet, fan: int) -> int:
    """``rules.points(fan)``, remembered for the rule set scored last."""
    if _POINTS_OF[0] is not rules:
        _POINTS[0] = {}
        _POINTS_OF[0] = rules
    known = _POINTS[0]
    points = known.get(fan)
    if points is None:
        points = known[fan] = rules.points(fan)
    return points


SPECIAL_NAMES: Final = {"tian_hu": ("天胡", "heavenly hand"), "di_hu": ("地胡", "earthly hand")}


class PatternHit(Value):
    """One line of a score's breakdown: a pattern and the fan it adds."""

    __slots__ = ()
    _fields = ("id", "name_zh", "name_en", "fan")

    def __init__(self, id: str, name_zh: str, name_en: str, fan: int) -> None:
        self._v = (id, name_zh, name_en, fan)

    @property
    def id(self) -> str:
        return self._v[0]

    @property
    def name_zh(self) -> str:
        return self._v[1]

    @property
    def name_en(self) -> str:
        return self._v[2]

    @property
    def fan(self) -> int:
        return self._v[3]


class Score(Value):
    """The value of one win: the breakdown, total fan (before the cap), points (after it) and what each
    payer pays (points, plus one base for a self-drawn win where the profile plays 自摸加底)."""

    __slots__ = ()
    _fields = ("patterns", "fan", "points", "per_payer", "title_zh", "title_en", "capped")

    def __init__(
        self,
        patterns: tuple[PatternHit, ...],
        fan: int,
        points: int,
        per_payer: int,
        title_zh: str,
        title_en: str,
        capped: bool,
    ) -> None:
        self._v = (patterns, fan, points, per_payer, title_zh, title_en, capped)

    @property
    def patterns(self) -> tuple[PatternHit, ...]:
        return self._v[0]

    @property
    def fan(self) -> int:
        return self._v[1]

    @property
    def points(self) -> int:
        return self._v[2]

    @property
    def per_payer(self) -> int:
        return self._v[3]

    @property
    def title_zh(self) -> str:
        return self._v[4]

    @property
    def title_en(self) -> str:
        return self._v[5]

    @property
    def capped(self) -> bool:
        return self._v[6]


class NamedHand(Value):
    """One whole hand of a named-hand count (``fan_combination = named_hand``, Mahjong Soul): its names, the
    patterns that must all occur (``needs``), those whose fan make its value on top of the plain hand
    (``counts``), and the roots it takes (``roots``: 龙七对 takes one)."""

    __slots__ = ()
    _fields = ("name_zh", "name_en", "needs", "counts", "roots")

    def __init__(
        self, name_zh: str, name_en: str, needs: tuple[str, ...], counts: tuple[str, ...], roots: int = 0
    ) -> None:
        self._v = (name_zh, name_en, needs, counts, roots)

    @property
    def name_zh(self) -> str:
        return self._v[0]

    @property
    def name_en(self) -> str:
        return self._v[1]

    @property
    def needs(self) -> tuple[str, ...]:
        return self._v[2]

    @property
    def counts(self) -> tuple[str, ...]:
        return self._v[3]

    @property
    def roots(self) -> int:
        return self._v[4]


# Mahjong Soul's named hands (the replay editor's calcFanChuanma: 对对和 … 清十八罗汉), the game's order: a hand shows
# the first that fits of those worth the most. Each is worth the plain hand plus its ``counts``' fan: with majsoul's
# units 对对胡 2, 清一色 3, 七对 3, 带幺九 3, 金钩钓 3, 清对 4, 将对 4, 龙七对 4, 清七对 5, 清金钩钓 5, 清幺九 5,
# 清龙七对 6, 十八罗汉 and 清十八罗汉 6 (shi_ba_luo_han_fan 5: the flush adds nothing there).
NAMED_HANDS: Final[tuple[NamedHand, ...]] = (
    NamedHand("清十八罗汉", "pure four kongs", ("shi_ba_luo_han", "qing_yi_se"), ("shi_ba_luo_han",)),
    NamedHand("十八罗汉", "four kongs", ("shi_ba_luo_han",), ("shi_ba_luo_han",)),
    NamedHand("清龙七对", "pure dragon seven pairs", ("qing_yi_se", "qi_dui", "gen"), ("qing_yi_se", "qi_dui"), 1),
    NamedHand("清幺九", "pure terminals", ("qing_yi_se", "dai_yao_jiu"), ("qing_yi_se", "dai_yao_jiu")),
    NamedHand(
        "清金钩钓",
        "pure single wait on four melds",
        ("qing_yi_se", "dui_dui_hu", "jin_gou_diao"),
        ("qing_yi_se", "dui_dui_hu", "jin_gou_diao"),
    ),
    NamedHand("清七对", "pure seven pairs", ("qing_yi_se", "qi_dui"), ("qing_yi_se", "qi_dui")),
    NamedHand("龙七对", "dragon seven pairs", ("qi_dui", "gen"), ("qi_dui",), 1),
    NamedHand("将对", "2-5-8 pungs", ("dui_dui_hu", "jiang_dui"), ("dui_dui_hu", "jiang_dui")),
    NamedHand("清对", "pure all pungs", ("qing_yi_se", "dui_dui_hu"), ("qing_yi_se", "dui_dui_hu")),
    NamedHand("金钩钓", "single wait on four melds", ("dui_dui_hu", "jin_gou_diao"), ("dui_dui_hu", "jin_gou_diao")),
    NamedHand("带幺九", "terminals", ("dai_yao_jiu",), ("dai_yao_jiu",)),
    NamedHand("七对", "seven pairs", ("qi_dui",), ("qi_dui",)),
    NamedHand("清一色", "full flush", ("qing_yi_se",), ("qing_yi_se",)),
    NamedHand("对对胡", "all pungs", ("dui_dui_hu",), ("dui_dui_hu",)),
    NamedHand("平胡", "plain hand", (), ()),
)
# The patterns that make a named hand; every other pattern (根, 杠上花, 杠上炮, 抢杠, 海底, …) is a bonus on top.
HAND_PATTERNS: Final = frozenset(
    ("ping_hu", "dui_dui_hu", "qing_yi_se", "dai_yao_jiu", "qi_dui", "jiang_dui", "jin_gou_diao", "shi_ba_luo_han")
)


def _named_hand(
    hits: Sequence[PatternHit], rules: RuleSet, special: PatternHit | None = None
) -> tuple[tuple[PatternHit, ...], int, str, str]:
    """The additive ``hits`` of one reading as a named-hand count: the best named hand (``special``, a fixed
    天胡/地胡, in its place), then the bonuses; 龙七对's shape takes one root, 十八罗汉 four, whichever hand is
    shown (calcFanChuanma). Returns the breakdown, its total and the title."""
    fan = {h.id: h.fan for h in hits}
    roots = fan.get("gen", 0) // rules.root_fan if rules.root_fan else 0
    taken = 0
    if roots and "qi_dui" in fan:
        taken = 1
    if "shi_ba_luo_han" in fan:
        taken = 4
    out: list[PatternHit] = []
    if special is not None:
        out.append(special)
        title_zh, title_en = special.name_zh, special.name_en
    else:
        best, best_fan = NAMED_HANDS[-1], -1
        for named in NAMED_HANDS:
            if all(p in fan for p in named.needs):
                value = sum(fan[p] for p in named.counts) + named.roots * rules.root_fan
                if value > best_fan:
                    best, best_fan = named, value
        title_zh, title_en = best.name_zh, best.name_en
        shown = ("ping_hu", *best.counts)
        out = [h for h in hits if h.id in shown]
        taken -= best.roots  # the roots the named hand counts in its value stay on the 根 line
    for h in hits:
        if h.id in HAND_PATTERNS:
            continue
        if h.id == "gen":
            left = (roots - taken) * rules.root_fan
            if left > 0:
                out.append(PatternHit(h.id, h.name_zh, h.name_en, left))
            continue
        out.append(h)
    total = 0
    for h in out:
        total += h.fan
    return tuple(out), total, title_zh, title_en


def score(hand: WinHand, rules: RuleSet, live: frozenset[int] | None = None) -> Score:
    """Score a win, choosing the reading worth the most fan. Raises :class:`NotAWin` otherwise. ``live``: the
    waits of the hand before the win, where the caller knows them better than the hand's melds tell
    (:func:`ready_value`)."""
    size = hand.tiles_count
    if size != 14 - 3 * len(hand.melds):
        raise NotAWin(f"{size} concealed tiles with {len(hand.melds)} melds (a win needs {14 - 3 * len(hand.melds)})")
    counts = list(hand.counts27)  # once: the helpers below walk a list natively, and copy anything else into one
    bits, void = suit_bits(counts, hand.melds), hand.void  # the suits held, asked twice below
    if bits == 7 or (void is not None and (bits >> void) & 1):  # hand.suits_ok, from the bits
        fault = suits_fault(counts, hand.melds, void)
        assert fault is not None
        raise NotAWin(fault)
    found = readings_of_size_checked(counts, hand.melds)  # none unless the shape wins
    if not found:
        raise NotAWin("the tiles do not form four sets and a pair, nor seven pairs")
    best: tuple[PatternHit, ...] = ()
    best_fan = -1
    units = _units(rules)
    special = "tian_hu" if hand.heavenly else "di_hu" if hand.earthly else None
    mode = rules.heavenly if hand.heavenly else rules.earthly if hand.earthly else "normal"
    fixed: PatternHit | None = None
    if special and mode != "normal":
        name_zh, name_en = SPECIAL_NAMES[special]
        fan = (rules.heavenly_fan if hand.heavenly else rules.earthly_fan) if mode == "fixed" else rules.cap
        fixed = PatternHit(special, name_zh, name_en, fan)
    named = rules.fan_combination == "named_hand"
    title_zh = title_en = ""
    for reading in found:
        hits: list[PatternHit] = []
        total = 0
        for i in range(len(units)):
            unit = units[i]
            if unit:  # Pattern.count, without asking a pattern the rules make worth nothing whether it occurs
                n = _occurs(i, hand, reading, rules, bits, live)
                if n:
                    p = PATTERNS[i]
                    hits.append(PatternHit(p.id, p.name_zh, p.name_en, n * unit))
                    total += n * unit
        if named:
            shown, total, zh, en = _named_hand(hits, rules, fixed)
            if total > best_fan:
                best, best_fan, title_zh, title_en = shown, total, zh, en
        elif total > best_fan:
            best, best_fan = tuple(hits), total
    if not named:
        title_zh, title_en = _title(best)
        if fixed is not None:  # additive: the fixed total replaces every pattern and root
            best, best_fan = (fixed,), fixed.fan
            title_zh, title_en = fixed.name_zh, fixed.name_en
    points = _points(rules, best_fan)
    per_payer = points + (rules.base if hand.self_drawn and rules.self_draw == "base" else 0)
    return Score(
        patterns=best,
        fan=best_fan,
        points=points,
        per_payer=per_payer,
        title_zh=title_zh,
        title_en=title_en,
        capped=bool(rules.cap) and best_fan > rules.cap,
    )


def pattern_fan(pattern: str, rules: RuleSet) -> int:
    """The fan one occurrence of ``pattern`` (an id of :data:`PATTERNS`, or ``tian_hu``/``di_hu``) is worth
    under ``rules``; :class:`KeyError` for an id that is neither.

    >>> from pipeline.rules.ruleset import load_ruleset
    >>> chengdu = load_ruleset("chengdu")
    >>> pattern_fan("qing_yi_se", chengdu), pattern_fan("gen", chengdu), pattern_fan("zi_mo", chengdu)
    (2, 1, 0)
    """
    if pattern in SPECIAL_NAMES:
        heavenly = pattern == "tian_hu"
        mode = rules.heavenly if heavenly else rules.earthly
        if mode == "fixed":
            return rules.heavenly_fan if heavenly else rules.earthly_fan
        return rules.cap if mode == "cap" else 0
    return PATTERN_BY_ID[pattern].unit(rules)


def declared_score(
    patterns: Sequence[str],
    rules: RuleSet,
    *,
    self_drawn: bool,
    fan: int | None = None,
    points: int | None = None,
) -> Score:
    """The value of a win as a settlement record declares it: its ``patterns`` (ids, a root once per root; the
    plain hand's count is always in, written or not), scored as :func:`score` scores a hand's, 天胡/地胡 by
    the profile's ``heavenly``/``earthly``. Without patterns, the claimed ``fan`` or else ``points`` stands for
    the value (a claim taken, not checked). Raises :class:`KeyError` for an unknown pattern id.

    >>> from pipeline.rules.ruleset import load_ruleset
    >>> s = declared_score(["qing_yi_se", "gen"], load_ruleset("chengdu"), self_drawn=True)
    >>> s.fan, s.points, s.per_payer, s.title_zh
    (4, 8, 9, '清一色')
    """
    if not patterns and fan is None and points is not None:
        per_payer = points + (rules.base if self_drawn and rules.self_draw == "base" else 0)
        return Score(patterns=(), fan=-1, points=points, per_payer=per_payer, title_zh="", title_en="", capped=False)
    hits: list[PatternHit] = []
    title_zh = title_en = ""
    if patterns or fan is None:
        special = next((p for p in patterns if p in SPECIAL_NAMES), None)
        mode = (rules.heavenly if special == "tian_hu" else rules.earthly) if special else "normal"
        fixed: PatternHit | None = None
        if special and mode != "normal":
            name_zh, name_en = SPECIAL_NAMES[special]
            fixed = PatternHit(special, name_zh, name_en, pattern_fan(special, rules))
        named = rules.fan_combination == "named_hand"
        if fixed is not None and not named:
            hits = [fixed]
        else:
            counts = {pid: 0 for pid in PATTERN_BY_ID}
            for pid in patterns:
                if pid not in SPECIAL_NAMES:
                    counts[PATTERN_BY_ID[pid].id] += 1
            counts["ping_hu"] = 1
            for p in PATTERNS:
                n = counts[p.id] * p.unit(rules)
                if n:
                    hits.append(PatternHit(p.id, p.name_zh, p.name_en, n))
        if named:  # the declared patterns as the game counts them: the best named hand and the bonuses
            shown, total, title_zh, title_en = _named_hand(hits, rules, fixed)
            hits = list(shown)
        else:
            total = sum(h.fan for h in hits)
            title_zh, title_en = _title(tuple(hits))
    else:
        total = fan
    value = rules.points(total) if total >= rules.fan_base else 0
    per_payer = value + (rules.base if self_drawn and rules.self_draw == "base" else 0)
    return Score(
        patterns=tuple(hits),
        fan=total,
        points=value,
        per_payer=per_payer,
        title_zh=title_zh,
        title_en=title_en,
        capped=bool(rules.cap) and total > rules.cap,
    )


def _title(hits: tuple[PatternHit, ...]) -> tuple[str, str]:
    """The name players give the whole hand: 清七对, 龙七对, 清对, 将对, 清幺九, …"""
    # one walk over the hits, flags in locals (a set of the ids and a generator cost several times as much)
    gen = flush = qi_dui = jiang_dui = dui_dui_hu = dai_yao_jiu = False
    for h in hits:
        hid = h.id
        if hid == "gen":
            gen = bool(h.fan)  # a breakdown holds one line of roots (score and declared_score: one hit a pattern)
        elif hid == "qing_yi_se":
            flush = True
        elif hid == "qi_dui":
            qi_dui = True
        elif hid == "jiang_dui":
            jiang_dui = True
        elif hid == "dui_dui_hu":
            dui_dui_hu = True
        elif hid == "dai_yao_jiu":
            dai_yao_jiu = True
    if qi_dui:
        if gen:
            return ("清龙七对" if flush else "龙七对"), ("pure dragon seven pairs" if flush else "dragon seven pairs")
        return ("清七对", "pure seven pairs") if flush else ("七对", "seven pairs")
    if jiang_dui:
        return ("清将对", "pure 2-5-8 pungs") if flush else ("将对", "2-5-8 pungs")
    if dui_dui_hu:
        return ("清对", "pure all pungs") if flush else ("对对胡", "all pungs")
    if dai_yao_jiu:
        return ("清幺九", "pure terminals") if flush else ("带幺九", "terminals")
    if flush:
        return "清一色", "full flush"
    return "平胡", "plain hand"


ReadyWhich = Literal["min", "max"]


class ReadyValue(Value):
    """The value of a ready hand over its waits: the extreme ``amount`` one payer pays, and on which tile (a
    value, as :class:`~pipeline.rules.settle.SeatEnd` is, for the same reason)."""

    __slots__ = ()
    _fields = ("amount", "fan", "win_tile", "waits")

    def __init__(self, amount: int, fan: int, win_tile: int, waits: tuple[int, ...]) -> None:
        self._v = (amount, fan, win_tile, waits)

    @property
    def amount(self) -> int:
        return self._v[0]

    @property
    def fan(self) -> int:
        return self._v[1]

    @property
    def win_tile(self) -> int:
        return self._v[2]

    @property
    def waits(self) -> tuple[int, ...]:
        return self._v[3]


def ready_value(
    counts27: Sequence[int],
    melds: Sequence[Meld],
    rules: RuleSet,
    *,
    void: int | None = None,
    which: ReadyWhich | None = None,
    mask: int | None = None,
) -> ReadyValue | None:
    """查大叫: the minimum or maximum (``which``, default the profile's ``cha_jiao_amount``) value of a
    ready hand of ``13 − 3·melds`` concealed tiles over its waits; ``None`` when it is not ready.

    Situational additions never count; 自摸 counts where ``cha_jiao_self_draw`` says so, declared kongs where
    ``cha_jiao_kong_fan`` does. With ``cha_jiao_fourth_tile`` a wait on a kind the player holds four of still
    counts, valued as if a fifth copy existed; under ``"xu_ting"`` (虚听) the four held make no 根 then.
    ``mask``: the hand's winning tiles as bits, when the caller keeps them (:func:`~pipeline.rules.hand.waits`).
    """
    which = which or rules.cha_jiao_amount
    tiles = waits(counts27, melds, void, mask=mask)
    if rules.cha_jiao_fourth_tile:
        tiles = sorted(win_tiles(counts27, melds, void))  # waits on a kind held four times too
    if not tiles:
        return None
    values = []
    live = frozenset(tiles)  # the waits of the hand as it is: a kong valued as a pong below stays a dead kind
    # cha_jiao_kong_fan false: a declared kong is valued as the pong it was ("Kong needs a declaration", SBR p. 32)
    valued = tuple(melds) if rules.cha_jiao_kong_fan else tuple(Meld("pong", m.tile, m.source) for m in melds)
    held = full_counts(counts27, melds) if rules.cha_jiao_fourth_tile == "xu_ting" else None
    for kind in tiles:
        hand = list(counts27)
        hand[kind] = hand[kind] + 1
        win = WinHand(counts27=tuple(hand), melds=valued, win_tile=kind, void=void, self_drawn=rules.cha_jiao_self_draw)
        s = score(win, rules, live)
        if held is not None and held[kind] >= COPIES:
            # 虚听: valued as if a fifth copy existed, the four held making no 根
            fan = s.fan - rules.root_fan
            extra = s.per_payer - s.points
            values.append((_points(rules, fan) + extra, fan, kind))
            continue
        values.append((s.per_payer, s.fan, kind))
    amount, fan, kind = min(values) if which == "min" else max(values)
    return ReadyValue(amount=amount, fan=fan, win_tile=kind, waits=tuple(tiles))
