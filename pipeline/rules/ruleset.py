"""Rule profiles: every point where the rules texts disagree is a switch of a frozen :class:`RuleSet`.

Profiles are data, one TOML file each in ``profiles/``: a ``[switches]`` table that sets every switch
and a ``[sources]`` table that quotes the rules text each value comes from. A record (or a caller) names
a profile and may override single switches, ``{"profile": "chengdu", "cap": 4}``; an unknown switch
name, a value of the wrong type or outside its choices is a :class:`RuleSetError`, never ignored.

>>> load_ruleset({"profile": "chengdu", "cap": 4}).cap
4
>>> load_ruleset({"profile": "chengdu", "cpa": 4})
Traceback (most recent call last):
...
pipeline.rules.ruleset.RuleSetError: unknown switch 'cpa' (known: added_kong_paid, added_kong_pays, ...)
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from pipeline.rules.tiles import SUITS

PROFILE_DIR = Path(__file__).with_name("profiles")


# Every amount the engine computes stays below 2^53: exact in a float, in JSON readers and in int64 columns.
MAX_POINTS = 2**53


class RuleSetError(ValueError):
    """An unknown profile, an unknown switch, or a switch value it does not accept."""


def _switch(doc: str, *, minimum: int | None = None, maximum: int | None = None) -> Any:
    return field(metadata={"doc": doc, "minimum": minimum, "maximum": maximum})


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleSet:
    """One rule profile with every switch set. Build with :func:`load_ruleset`."""

    profile: str = field(metadata={"doc": "profile name"})
    # -- the table: who plays, with which tiles, and when the hand ends
    players: int = _switch("the players at the table (seats 0 .. players−1)", minimum=3, maximum=4)
    suits: Literal["mps", "ps", "ms", "mp"] = _switch(
        "the suits in play, of m (万) p (筒) s (条): all three, or two (两房/两色 tables drop one, most often 万); "
        "36 tiles a suit"
    )
    mode: Literal["blood_battle", "ordinary", "blood_flow"] = _switch(
        "血战到底 'blood_battle': a winner leaves and play goes on until one player is left or the wall is empty; "
        "普通版 'ordinary': the hand ends with the first win (with every win on that discard, 一炮多响); "
        "血流成河 'blood_flow': winners stay in and may win again until the wall is empty"
    )
    after_win_discard: Literal["drawn_only", "free"] = _switch(
        "血流成河: a player who has won discards only the tile it just drew ('drawn_only', the hand is locked) "
        "or any tile ('free')"
    )
    after_win_pong: bool = _switch("血流成河: a player who has won may still pong or direct-kong a discard")
    after_win_kong: Literal["none", "added_drawn", "same_waits", "keeps_won_tiles"] = _switch(
        "血流成河: which kongs of its own a player who has won may declare: 'none'; 'added_drawn' (an added kong "
        "of the tile just drawn); 'same_waits' (the waits stay exactly the same); 'keeps_won_tiles' (every tile "
        "it has won on is still a wait)"
    )
    dealer_next: Literal["first_winner", "nearest_winner", "dealt_in"] = _switch(
        "the next hand's dealer: the 'first_winner' (the discarder when several won on that first discard), the "
        "'nearest_winner' (when several won on it, the one nearest after the discarder in turn order), or the "
        "player who 'dealt_in' to the first win (a self-draw winner deals); with no win the dealer stays"
    )
    fan_base: int = _switch(
        "the fan convention: 1 = a plain hand is 1 fan and points = base × 2^(fan−1) (the Chinese texts); "
        "0 = a plain hand is 0 fan and points = base × 2^fan (SBR and most engines). Every fan this profile "
        "states (cap, fixed fans, claimed fan in its records) is counted in it",
        minimum=0,
        maximum=1,
    )
    base: int = _switch("底: the unit of every payment, in points", minimum=1, maximum=1_000_000)
    cap: int = _switch(
        "封顶: the fan cap, in the profile's count; points never exceed base × 2^(cap−fan_base). 0 = no cap",
        minimum=0,
        maximum=64,
    )
    self_draw: Literal["base", "fan", "none"] = _switch(
        "自摸: 'base' = each payer pays the hand value plus one base (自摸加底); 'fan' = +1 fan; 'none'"
    )
    root_fan: int = _switch("根: fan added for each kind held four times (a kong is one)", minimum=0, maximum=16)
    gang_shang_hua_fan: int = _switch("杠上花: fan added for a win on a kong replacement tile", minimum=0, maximum=16)
    gang_shang_pao_fan: int = _switch(
        "杠上炮: fan added for a win on the discard right after a kong", minimum=0, maximum=16
    )
    rob_kong: bool = _switch("抢杠胡: an added kong may be robbed (won on by a player waiting on its tile)")
    rob_kong_fan: int = _switch("抢杠胡: fan added for robbing an added kong", minimum=0, maximum=16)
    haidi_fan: int = _switch(
        "海底: fan added for a win on the last wall tile or the discard after it", minimum=0, maximum=16
    )
    dian_gang_hua: Literal["feeder", "self_draw"] = _switch(
        "点杠花: a win on the replacement after a direct kong is paid by the player who fed the kong "
        "('feeder', as if dealing in) or by everybody still in ('self_draw')"
    )
    direct_kong_pays: int = _switch("直杠 (刮风): the discarder pays this many × base", minimum=0, maximum=1000)
    added_kong_pays: int = _switch(
        "面下杠 (刮风): each other player still in pays this many × base", minimum=0, maximum=1000
    )
    concealed_kong_pays: int = _switch(
        "暗杠 (下雨): each other player still in pays this many × base", minimum=0, maximum=1000
    )
    added_kong_paid: Literal["always", "fresh"] = _switch(
        "面下杠 is paid 'always', or only when the fourth tile was 'fresh'ly drawn that turn"
    )
    gang_shang_pao_money: Literal["stays", "transfer", "refund"] = _switch(
        "杠上炮: the kong's money 'stays' with the kong player, is 'transfer'red to the winner "
        "(呼叫转移), or 'refund'ed to the players who paid it"
    )
    hua_zhu_amount: Literal["cap", "fixed", "cha_jiao_or_fan"] = _switch(
        "查花猪: a flower pig pays each payee the 'cap' value (hua_zhu_fixed × base when uncapped), always "
        "'fixed' hua_zhu_fixed × base (0: no flower-pig payment), or 'cha_jiao_or_fan': the larger of that "
        "payee's 查大叫 value and a hand of hua_zhu_min_fan fan"
    )
    hua_zhu_fixed: int = _switch(
        "查花猪: the multiple of base a pig pays (see hua_zhu_amount)", minimum=0, maximum=100_000
    )
    hua_zhu_min_fan: int = _switch(
        "查花猪: with hua_zhu_amount = 'cha_jiao_or_fan', a pig pays at least a hand of this many fan",
        minimum=0,
        maximum=64,
    )
    hua_zhu_payees: Literal["still_in", "non_pigs", "all_others", "everyone"] = _switch(
        "查花猪: whom a flower pig pays: the non-pigs 'still_in' the hand, every 'non_pigs' player (winners too), "
        "'all_others' still in (other pigs too, winners not), or 'everyone' else (winners and other pigs alike)"
    )
    hua_zhu_at_three_hu: bool = _switch(
        "查花猪 also when the hand ends with three winners: the player left pays as a pig (payees per hua_zhu_payees)"
    )
    hua_zhu_pays_cha_jiao: bool = _switch("查大叫: a flower pig also pays the ready players")
    cha_jiao_amount: Literal["min", "max"] = _switch(
        "查大叫: a player not ready pays each ready player the 'min' or 'max' value over their waits"
    )
    cha_jiao_self_draw: bool = _switch("查大叫: the ready value counts 自摸 (as a self-drawn win)")
    cha_jiao_kong_fan: bool = _switch(
        "查大叫: declared kongs count in the ready hand's value (根 of a kong); false = only the tiles' shape"
    )
    cha_jiao_fourth_tile: bool | Literal["xu_ting"] = _switch(
        "查大叫: a wait on a kind the player already holds four of still makes the hand ready (true: valued as if a "
        "fifth copy existed; 'xu_ting' (虚听): valued so, with no 根 for the four held)"
    )
    tui_shui: bool = _switch("退税: a player not ready at the end returns all kong money collected")
    heavenly: Literal["normal", "fixed", "cap"] = _switch(
        "天胡 (the dealer's first 14 tiles win): scored as a 'normal' hand, a 'fixed' fan, or the 'cap'"
    )
    heavenly_fan: int = _switch("天胡: the total fan when heavenly = 'fixed'", minimum=0, maximum=64)
    heavenly_after_kong: bool = _switch(
        "天胡 also when the dealer wins on the replacement after concealed kongs of its first turn"
    )
    earthly: Literal["normal", "fixed", "cap"] = _switch(
        "地胡 (a win on the first discard or first draw): 'normal', 'fixed' fan or the 'cap'"
    )
    earthly_fan: int = _switch("地胡: the total fan when earthly = 'fixed'", minimum=0, maximum=64)
    earthly_on: Literal["first_draw_or_discard", "first_draw"] = _switch(
        "地胡: a non-dealer's win on the dealer's first discard or on its own first draw "
        "('first_draw_or_discard'), or only a self-drawn win on its first draw ('first_draw'); any pong or kong "
        "before it, a concealed kong too, blocks it"
    )
    que_declared: bool = _switch("定缺: records must declare each seat's void suit")
    void_discard_first: bool = _switch("定缺: a player holding void-suit tiles must discard them first")
    void_meld: Literal["forbid", "penalty"] = _switch(
        "定缺: a pong or kong of one's void suit is illegal ('forbid') or legal at void_meld_penalty ('penalty')"
    )
    void_meld_penalty: int = _switch(
        "定缺: the points a pong or kong in one's void suit costs", minimum=0, maximum=1_000_000_000
    )
    void_end_penalty: int = _switch(
        "定缺: the points a player still in pays at an empty wall while holding void-suit tiles (waived when every "
        "tile it discarded was of its void suit); without a declared void suit, holding three suits",
        minimum=0,
        maximum=1_000_000_000,
    )
    void_win_penalty: int = _switch(
        "定缺: the points a Hu declared while holding a tile of one's void suit costs, on top of the 诈胡 penalty "
        "(without a declared void suit, a Hu holding three suits)",
        minimum=0,
        maximum=1_000_000_000,
    )
    penalty_to: Literal["players", "pot"] = _switch(
        "where the void penalties go: to each other player still in ('players'), or out of the table ('pot': "
        "a payment to nobody, and the deltas sum to −pot)"
    )
    exchange_three: bool = _switch("换三张: the exchange of three tiles is played")
    must_win_last_four: bool = _switch("最后四张能胡必须胡: in the last four wall tiles a possible win is compulsory")
    call_on_last_discard: Literal["none", "pong_and_hu"] = _switch(
        "the discard after the last wall tile: only wins on it ('none'), or wins and pongs ('pong_and_hu'); the "
        "ponger's discard is again the last one, open to both (no kong: there is no replacement)"
    )
    pass_win_rule: bool = _switch(
        "过手胡/弃先胡后: after passing a win on a discard, no win on another discard until the "
        "player's next draw unless it is worth more fan"
    )
    false_win_fan: int = _switch(
        "诈胡/相公: the offender pays every player still in this many fan's worth", minimum=0, maximum=64
    )
    false_win_loses_kong: bool = _switch("诈胡/相公: the offender also returns all kong income")
    jin_gou_diao: Literal["exposed_melds", "single_wait_all_pungs"] = _switch(
        "金钩钓: a single wait with four melds of any kind, concealed kongs too ('exposed_melds'), or SBR's Golden "
        "Wait ('single_wait_all_pungs'): four pungs or kongs, concealed ones too, waiting on one tile only, to pair"
    )
    jin_gou_diao_fan: int = _switch("金钩钓: fan added; 0 = off", minimum=0, maximum=16)
    dai_yao_jiu_fan: int = _switch(
        "带幺九 (a 1 or 9 in every set and the pair): fan added; 0 = off", minimum=0, maximum=16
    )
    jiang_dui_fan: int = _switch("将对 (all pungs of 2, 5 and 8, pair too): fan added; 0 = off", minimum=0, maximum=16)
    men_qing_fan: int = _switch("门清 (no pong or exposed kong): fan added; 0 = off", minimum=0, maximum=16)
    duan_yao_fan: int = _switch("中张/断幺九 (no 1 or 9 anywhere): fan added; 0 = off", minimum=0, maximum=16)
    yi_tiao_long_fan: int = _switch("一条龙 (123 456 789 of one suit): fan added; 0 = off", minimum=0, maximum=16)
    shi_ba_luo_han_fan: int = _switch("十八罗汉 (four kongs): fan added; 0 = off", minimum=0, maximum=16)
    fan_combination: Literal["additive", "named_hand"] = _switch(
        "how patterns combine: 'additive' (every pattern that fits adds its fan), or 'named_hand' (Mahjong Soul: "
        "the hand scores its best named hand, 对对胡 … 清十八罗汉 or a fixed 天胡/地胡, plus the bonuses 根, 杠上花, "
        "杠上炮, 抢杠 and 海底)"
    )

    def __post_init__(self) -> None:
        if len(self.suits) < 3 and (self.que_declared or self.void_discard_first):
            # with two suits in play no hand can hold a third: there is no void suit to declare or play first
            raise RuleSetError(f"定缺 needs three suits in play, profile {self.profile!r} plays {self.suits!r}")
        for name in ("heavenly", "earthly"):
            if getattr(self, name) == "cap" and self.cap == 0:
                raise RuleSetError(f"{name} = 'cap' needs a fan cap (cap > 0) in profile {self.profile!r}")
            # A win is worth at least a plain hand: caught here, not when the first such hand is scored.
            if getattr(self, name) == "fixed" and getattr(self, f"{name}_fan") < self.fan_base:
                raise RuleSetError(
                    f"{name} = 'fixed' needs {name}_fan of at least {self.fan_base} in profile {self.profile!r}"
                )
        if self.cap_points_max() > MAX_POINTS:
            raise RuleSetError(
                f"profile {self.profile!r}: a hand could be worth {self.cap_points_max()} points, more than "
                f"{MAX_POINTS} (2^53): set a cap or lower base and the fans"
            )

    @property
    def tiles(self) -> int:
        """Tiles in the wall: 36 a suit (four of each of nine ranks)."""
        return 36 * len(self.suits)

    @property
    def suit_indexes(self) -> tuple[int, ...]:
        """The suits in play as indexes (0 m, 1 p, 2 s)."""
        return tuple(SUITS.index(s) for s in self.suits)

    def max_fan(self) -> int:
        """The most fan any hand can count under these switches (before the cap): every pattern at once, four
        roots, the situational additions, or the largest fixed total. A bound, not a hand that exists."""
        patterns = (
            self.fan_base
            + 1  # all pungs
            + 2  # full flush
            + 2  # seven pairs
            + self.dai_yao_jiu_fan
            + self.jiang_dui_fan
            + self.yi_tiao_long_fan
            + self.duan_yao_fan
            + self.men_qing_fan
            + self.jin_gou_diao_fan
            + self.shi_ba_luo_han_fan
            + 4 * self.root_fan
            + self.gang_shang_hua_fan
            + self.gang_shang_pao_fan
            + self.rob_kong_fan
            + self.haidi_fan
            + 1  # 自摸 as a fan
        )
        # a named hand's fixed 天胡/地胡 keeps the bonuses (roots and the situational additions)
        bonuses = 4 * self.root_fan + self.gang_shang_hua_fan + self.gang_shang_pao_fan + self.rob_kong_fan
        fixed = max(self.heavenly_fan, self.earthly_fan)
        if self.fan_combination == "named_hand":
            fixed += bonuses + self.haidi_fan + self.men_qing_fan + self.duan_yao_fan + self.yi_tiao_long_fan + 1
        return max(patterns, fixed, self.false_win_fan, self.hua_zhu_min_fan)

    def cap_points_max(self) -> int:
        """The most a payer can pay for one hand: the value of the cap (or of :meth:`max_fan`) plus 自摸加底."""
        fan = min(self.max_fan(), self.cap) if self.cap else self.max_fan()
        return self.base * 2 ** max(fan - self.fan_base, 0) + self.base

    def cap_points(self) -> int | None:
        """满庄: the most one hand can be worth, or ``None`` without a cap."""
        return self.base * 2 ** (self.cap - self.fan_base) if self.cap else None

    def points(self, fan: int) -> int:
        """Hand value of ``fan`` fan in the profile's count: ``base × 2^(fan−fan_base)``, capped; a plain hand
        (``fan_base`` fan) is worth one base.

        >>> load_ruleset("chengdu").points(3), load_ruleset({"profile": "chengdu", "fan_base": 0}).points(3)
        (4, 8)
        """
        if fan < self.fan_base:
            raise ValueError(f"a win has at least {self.fan_base} fan, got {fan}")
        if self.cap:
            fan = min(fan, self.cap)
        return self.base * 2 ** (fan - self.fan_base)

    def switches(self) -> dict[str, Any]:
        """The switch values by name (without ``profile``)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "profile"}


def switch_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(RuleSet) if f.name != "profile")


def switch_doc(name: str) -> str:
    return _FIELDS[name].metadata["doc"]


_FIELDS = {f.name: f for f in dataclasses.fields(RuleSet)}
_HINTS = get_type_hints(RuleSet)


def _check_value(name: str, value: Any) -> Any:
    if name not in _FIELDS or name == "profile":
        known = ", ".join(sorted(switch_names()))
        raise RuleSetError(f"unknown switch {name!r} (known: {known})")
    hint = _HINTS[name]
    if get_origin(hint) in (Union, UnionType):  # true or false, or one of its words (cha_jiao_fourth_tile)
        words = next(get_args(arg) for arg in get_args(hint) if get_origin(arg) is Literal)
        if isinstance(value, bool) or (isinstance(value, str) and value in words):
            return value
        raise RuleSetError(f"switch {name!r} takes true, false or one of {', '.join(map(repr, words))}, got {value!r}")
    if get_origin(hint) is Literal:
        choices = get_args(hint)
        if value not in choices or not isinstance(value, str):
            raise RuleSetError(f"switch {name!r} takes one of {', '.join(map(repr, choices))}, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise RuleSetError(f"switch {name!r} takes true or false, got {value!r}")
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuleSetError(f"switch {name!r} takes a whole number, got {value!r}")
    minimum, maximum = _FIELDS[name].metadata["minimum"], _FIELDS[name].metadata["maximum"]
    if minimum is not None and value < minimum:
        raise RuleSetError(f"switch {name!r} must be at least {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise RuleSetError(f"switch {name!r} must be at most {maximum}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Profile:
    """A profile file as written: its switches, the source quoted for each, and its description."""

    name: str
    description: str
    switches: Mapping[str, Any]
    sources: Mapping[str, str]


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))


_PROFILES: dict[str, Profile] = {}  # read once per process
# One frozen RuleSet per distinct set of switches, the most recent RULESET_CACHE of them: records may name any
# number of distinct overrides, and the cache must not grow with the input (issue 24).
RULESET_CACHE = 1024
_RULESETS: dict[tuple[str, tuple[tuple[str, Any], ...]], RuleSet] = {}


def read_profile(name: str) -> Profile:
    """The profile file ``profiles/NAME.toml``; every switch must be set."""
    known = _PROFILES.get(name) if isinstance(name, str) else None
    if known is not None:
        return known
    path = PROFILE_DIR / f"{name}.toml"
    if not isinstance(name, str) or not name.isidentifier() or not path.is_file():
        raise RuleSetError(f"unknown profile {name!r} (known: {', '.join(profile_names())})")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    switches = data.get("switches", {})
    for key, value in switches.items():
        _check_value(key, value)
    missing = sorted(set(switch_names()) - set(switches))
    if missing:
        raise RuleSetError(f"profile {name!r} does not set {', '.join(missing)}")
    profile = _PROFILES[name] = Profile(
        name=name,
        description=data.get("description", ""),
        switches=dict(switches),
        sources=dict(data.get("sources", {})),
    )
    return profile


def load_ruleset(spec: str | Mapping[str, Any] | RuleSet, **overrides: Any) -> RuleSet:
    """The :class:`RuleSet` a record's ``ruleset`` field names: a profile name, or an object with
    ``profile`` and single-switch overrides. Keyword ``overrides`` apply last.
    """
    if isinstance(spec, str) and not overrides:
        plain = _RULESETS.get((spec, ()))
        if plain is not None:
            return plain  # the common case: a record naming a profile as it is
    if isinstance(spec, RuleSet):
        extra: dict[str, Any] = {}
        base_switches, name = spec.switches(), spec.profile
    else:
        if isinstance(spec, str):
            name, extra = spec, {}
        elif isinstance(spec, Mapping):
            if "profile" not in spec:
                raise RuleSetError("a ruleset object needs a 'profile' name")
            name = spec["profile"]
            if not isinstance(name, str):
                raise RuleSetError(f"a profile name is a string, got {name!r}")
            extra = {k: v for k, v in spec.items() if k != "profile"}
        else:
            raise RuleSetError(f"a ruleset is a profile name or an object, got {type(spec).__name__}")
        base_switches = dict(read_profile(name).switches)
    merged = dict(base_switches)
    for key, value in {**extra, **overrides}.items():
        merged[key] = _check_value(key, value)
    seen = (name, tuple(sorted(merged.items())))
    rules = _RULESETS.get(seen)
    if rules is None:
        rules = _RULESETS[seen] = RuleSet(profile=name, **merged)
        if not isinstance(spec, RuleSet) and not extra and not overrides:
            _RULESETS[(name, ())] = rules  # the profile as its file sets it
        while len(_RULESETS) > RULESET_CACHE:
            del _RULESETS[next(iter(_RULESETS))]  # the oldest first: the plain profiles come back at their next use
    return rules


@dataclass(frozen=True, slots=True)
class Override:
    """What a caller changes in every record's ruleset (``--rules`` of ``validate`` and ``ingest``): with a
    ``profile``, that profile replaces the record's ruleset; the ``switches`` apply last, on top of whichever
    profile the record ends up with. :meth:`parse` checks it all at once, so that a typo is refused before
    any record is read.

    >>> Override.parse("app").apply("chengdu").profile
    'app'
    >>> Override.parse({"cap": 4}).apply({"profile": "chengdu", "cap": 2}).cap
    4
    >>> Override.parse("chengdo")
    Traceback (most recent call last):
    ...
    pipeline.rules.ruleset.RuleSetError: unknown profile 'chengdo' (known: app, chengdu, chengdu_putong, ...)
    """

    profile: str | None = None
    switches: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def parse(cls, spec: str | Mapping[str, Any] | Override | None) -> Override | None:
        """A profile name, or an object with an optional ``profile`` and single switches; ``None`` for none."""
        if spec is None or isinstance(spec, Override):
            return spec
        if isinstance(spec, str):
            spec = {"profile": spec}
        if not isinstance(spec, Mapping):
            raise RuleSetError(f"a profile override is a name or an object, got {type(spec).__name__}")
        profile = spec.get("profile")
        if profile is not None:
            read_profile(profile)
        switches = tuple(sorted((k, _check_value(k, v)) for k, v in spec.items() if k != "profile"))
        override = cls(profile=profile, switches=switches)
        if profile is not None:
            override.apply(profile)  # the switches together, on their profile
        return override

    def apply(self, ruleset: Any) -> RuleSet:
        """The :class:`RuleSet` of a record whose ``ruleset`` field is ``ruleset``, overridden."""
        return load_ruleset(self.profile if self.profile is not None else ruleset, **dict(self.switches))
