"""Rule profiles (docs/RULES.md §7): data files, a frozen keyword-only RuleSet, overrides, every switch tested."""

from __future__ import annotations

import ast
import dataclasses
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.rules import ruleset
from pipeline.rules.ruleset import (
    PROFILE_DIR,
    RuleSet,
    RuleSetError,
    load_ruleset,
    profile_names,
    read_profile,
    switch_doc,
    switch_names,
)

TESTS = Path(__file__).parent
CHENGDU_SWITCHES = load_ruleset("chengdu").switches()


def profile_file(name: str) -> dict[str, Any]:
    return tomllib.loads((PROFILE_DIR / f"{name}.toml").read_text(encoding="utf-8"))


# -- the profile files ----------------------------------------------------------------------------------


def test_the_profiles_ship() -> None:
    assert profile_names() == [
        "app",
        "chengdu",
        "chengdu_putong",
        "majsoul",
        "salasasa",
        "sanren_liangfang",
        "sbr",
        "siren_liangse",
        "xueliu",
    ]


@pytest.mark.parametrize("name", profile_names())
def test_profile_loads(name: str) -> None:
    rules = load_ruleset(name)
    assert isinstance(rules, RuleSet) and rules.profile == name


@pytest.mark.parametrize("name", profile_names())
def test_every_switch_is_set_in_the_profile_file(name: str) -> None:
    assert sorted(profile_file(name)["switches"]) == sorted(switch_names())


@pytest.mark.parametrize("name", profile_names())
def test_every_switch_quotes_its_source(name: str) -> None:
    sources = profile_file(name)["sources"]
    assert sorted(sources) == sorted(switch_names())
    assert all(isinstance(text, str) and text.strip() for text in sources.values())


@pytest.mark.parametrize("name", profile_names())
def test_profile_has_a_description(name: str) -> None:
    assert read_profile(name).description


# docs/RULES.md §7 (and §3, §4 for the amounts): switch, Chengdu text, app text.
SECTION_7 = [
    ("base", 1, 1),
    ("cap", 0, 0),
    ("self_draw", "base", "base"),
    ("root_fan", 1, 1),
    ("gang_shang_hua_fan", 1, 2),
    ("gang_shang_pao_fan", 1, 1),
    ("rob_kong_fan", 1, 1),
    ("haidi_fan", 1, 1),
    ("dian_gang_hua", "feeder", "self_draw"),
    ("direct_kong_pays", 2, 2),
    ("added_kong_pays", 1, 1),
    ("concealed_kong_pays", 2, 2),
    ("added_kong_paid", "always", "always"),
    ("gang_shang_pao_money", "stays", "stays"),
    ("hua_zhu_amount", "cap", "fixed"),
    ("hua_zhu_fixed", 10, 16),
    ("hua_zhu_pays_cha_jiao", False, False),
    ("cha_jiao_amount", "min", "max"),
    ("tui_shui", True, True),
    ("heavenly", "normal", "fixed"),
    ("earthly", "normal", "fixed"),
    ("que_declared", False, True),
    ("void_discard_first", False, True),
    ("exchange_three", False, True),
    ("must_win_last_four", True, True),
    ("pass_win_rule", True, True),
    ("false_win_fan", 1, 1),
    ("false_win_loses_kong", True, True),
    ("jin_gou_diao_fan", 0, 0),
    ("men_qing_fan", 0, 0),
    ("duan_yao_fan", 0, 0),
    ("yi_tiao_long_fan", 0, 0),
    ("shi_ba_luo_han_fan", 0, 0),
]


@pytest.mark.parametrize(("switch", "chengdu", "app"), SECTION_7)
def test_profiles_follow_rules_section_7(switch: str, chengdu: object, app: object) -> None:
    values = (getattr(load_ruleset("chengdu"), switch), getattr(load_ruleset("app"), switch))
    assert values == (chengdu, app)


def test_app_reads_heavenly_and_earthly_as_eight_fan() -> None:
    # "8分：（1）天胡……（2）地胡" (seed 003)
    rules = load_ruleset("app")
    assert (rules.heavenly_fan, rules.earthly_fan) == (8, 8)


# Switches the game (pipeline/game) acts on; the rules engine only carries them. Their effect on play
# belongs in the game's tests: here, that an override turns each one over (the profile values are in
# SECTION_7 above).
GAME_SWITCHES = [
    "que_declared",
    "void_discard_first",
    "exchange_three",
    "must_win_last_four",
    "pass_win_rule",
]


@pytest.mark.parametrize("switch", GAME_SWITCHES)
def test_game_switches_override(switch: str) -> None:
    chengdu = getattr(load_ruleset("chengdu"), switch)
    assert getattr(load_ruleset("chengdu", **{switch: not chengdu}), switch) is (not chengdu)


# -- every switch has a test showing that its settings differ where they should --------------------------

SWITCH_TESTS = {
    "players": "test_rules_table.py::test_three_players_blood_battle_ends_when_two_have_won",
    "suits": "test_rules_table.py::test_a_tile_of_a_suit_not_in_play_is_refused",
    "mode": "test_rules_table.py::test_ordinary_hand_ends_with_every_win_on_the_first_winning_discard",
    "dealer_next": "test_rules_variants.py::test_dealer_next_nearest_winner_after_a_double_win",
    "after_win_discard": "test_rules_table.py::test_a_winner_discards_what_it_draws",
    "after_win_pong": "test_rules_table.py::test_a_winner_does_not_pong",
    "after_win_kong": "test_rules_table.py::test_kongs_after_a_win",
    "base": "test_rules_settle.py::test_base_scales_hand_and_kong_money",
    "cap": "test_rules_fan.py::test_cap_limits_points_not_fan",
    "self_draw": "test_rules_fan.py::test_self_draw_adds_base_or_fan_or_nothing",
    "root_fan": "test_rules_fan.py::test_root_fan_switch",
    "gang_shang_hua_fan": "test_rules_fan.py::test_gang_shang_hua_adds_one_fan_chengdu_two_app",
    "gang_shang_pao_fan": "test_rules_fan.py::test_gang_shang_pao_adds_one_fan",
    "rob_kong_fan": "test_rules_fan.py::test_robbing_a_kong_adds_one_fan",
    "haidi_fan": "test_rules_fan.py::test_haidi_adds_one_fan",
    "dian_gang_hua": "test_rules_settle.py::test_dian_gang_hua_feeder_pays_or_everyone_pays",
    "direct_kong_pays": "test_rules_settle.py::test_direct_kong_pays_switch",
    "added_kong_pays": "test_rules_settle.py::test_added_kong_pays_switch",
    "concealed_kong_pays": "test_rules_settle.py::test_concealed_kong_pays_switch",
    "added_kong_paid": "test_rules_settle.py::test_added_kong_paid_always_or_only_when_fresh",
    "gang_shang_pao_money": "test_rules_settle.py::test_gang_shang_pao_money",
    "hua_zhu_amount": "test_rules_settle.py::test_hua_zhu_amount_cap_or_fixed",
    "hua_zhu_fixed": "test_rules_settle.py::test_hua_zhu_fixed_amount",
    "hua_zhu_pays_cha_jiao": "test_rules_settle.py::test_pig_pays_cha_jiao_switch",
    "cha_jiao_amount": "test_rules_settle.py::test_cha_jiao_min_in_chengdu_max_in_app",
    "cha_jiao_self_draw": "test_rules_fan.py::test_cha_jiao_self_draw_switch",
    "cha_jiao_fourth_tile": "test_rules_fan.py::test_cha_jiao_fourth_tile_switch",
    "tui_shui": "test_rules_settle.py::test_tui_shui_switch",
    "heavenly": "test_rules_fan.py::test_heavenly_and_earthly_modes",
    "heavenly_fan": "test_rules_fan.py::test_fixed_heavenly_fan_is_a_switch",
    "earthly": "test_rules_fan.py::test_heavenly_and_earthly_modes",
    "earthly_fan": "test_rules_fan.py::test_fixed_heavenly_fan_is_a_switch",
    "que_declared": "test_rules_ruleset.py::test_game_switches_override",
    "void_discard_first": "test_rules_ruleset.py::test_game_switches_override",
    "exchange_three": "test_rules_ruleset.py::test_game_switches_override",
    "must_win_last_four": "test_rules_ruleset.py::test_game_switches_override",
    "pass_win_rule": "test_rules_ruleset.py::test_game_switches_override",
    "false_win_fan": "test_rules_settle.py::test_false_win_fan_switch",
    "false_win_loses_kong": "test_rules_settle.py::test_false_win_loses_kong_switch",
    "jin_gou_diao_fan": "test_rules_fan.py::test_extras_add_their_fan_when_enabled",
    "men_qing_fan": "test_rules_fan.py::test_extras_add_their_fan_when_enabled",
    "duan_yao_fan": "test_rules_fan.py::test_extras_add_their_fan_when_enabled",
    "yi_tiao_long_fan": "test_rules_fan.py::test_extras_add_their_fan_when_enabled",
    "shi_ba_luo_han_fan": "test_rules_fan.py::test_extras_add_their_fan_when_enabled",
    "fan_base": "test_rules_variants.py::test_fan_base_counts_a_plain_hand_as_one_or_zero_fan_with_the_same_points",
    "rob_kong": "test_rules_variants.py::test_rob_kong_allows_robbing_an_added_kong_or_lets_it_stand",
    "hua_zhu_min_fan": "test_rules_variants.py::test_hua_zhu_cha_jiao_or_min_fan",
    "hua_zhu_payees": "test_rules_variants.py::test_hua_zhu_payees",
    "hua_zhu_at_three_hu": "test_rules_variants.py::test_hua_zhu_at_three_hu_checks_the_player_left",
    "cha_jiao_kong_fan": "test_rules_variants.py::test_cha_jiao_kong_fan_counts_or_leaves_out_declared_kongs",
    "heavenly_after_kong": "test_rules_variants.py::test_heavenly_after_kong",
    "earthly_on": "test_rules_variants.py::test_earthly_on_the_dealers_first_discard_or_only_on_ones_first_draw",
    "void_meld": "test_rules_variants.py::test_void_meld_forbid_or_penalty_and_where_the_penalty_goes",
    "void_meld_penalty": "test_rules_variants.py::test_void_meld_forbid_or_penalty_and_where_the_penalty_goes",
    "void_end_penalty": "test_rules_variants.py::test_void_end_penalty_and_its_waiver",
    "void_win_penalty": "test_rules_variants.py::test_void_win_penalty_on_top_of_the_false_hu_penalty",
    "penalty_to": "test_rules_variants.py::test_penalty_to_players_or_pot_at_the_walls_end",
    "call_on_last_discard": "test_rules_variants.py::test_call_on_last_discard_none_or_pong_and_hu",
    "jin_gou_diao": "test_rules_variants.py::test_jin_gou_diao_exposed_melds_or_a_single_wait_on_four_pungs",
    "dai_yao_jiu_fan": "test_rules_variants.py::test_dai_yao_jiu_and_jiang_dui_fan_are_switches",
    "jiang_dui_fan": "test_rules_variants.py::test_dai_yao_jiu_and_jiang_dui_fan_are_switches",
    "fan_combination": "test_rules_variants.py::test_fan_combination_additive_or_named_hand",
}


def test_every_switch_has_a_test() -> None:
    # A new switch fails here until its test is written and named above.
    assert sorted(SWITCH_TESTS) == sorted(switch_names())


def test_every_named_switch_test_exists() -> None:
    defined = {
        (path.name, node.name)
        for path in TESTS.glob("test_rules_*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
    }
    missing = sorted(t for t in SWITCH_TESTS.values() if tuple(t.split("::")) not in defined)
    assert missing == []


def test_every_switch_is_documented() -> None:
    assert all(switch_doc(name).strip() for name in switch_names())


# -- overrides ------------------------------------------------------------------------------------------


def test_override_one_switch() -> None:
    rules = load_ruleset({"profile": "chengdu", "cap": 4})
    assert rules.cap == 4 and rules.profile == "chengdu"


def test_override_keeps_the_other_switches() -> None:
    plain, capped = (
        load_ruleset("chengdu").switches(),
        load_ruleset({"profile": "chengdu", "cap": 4}).switches(),
    )
    assert {k for k in plain if plain[k] != capped[k]} == {"cap"}


def test_keyword_overrides_apply_last() -> None:
    assert load_ruleset({"profile": "chengdu", "cap": 4}, cap=5).cap == 5


def test_override_a_ruleset() -> None:
    rules = load_ruleset(load_ruleset("app", cap=3), base=2)
    assert (rules.profile, rules.cap, rules.base, rules.gang_shang_hua_fan) == ("app", 3, 2, 2)


def test_an_overridden_ruleset_never_stands_in_for_its_profile() -> None:
    """Rule sets are kept per distinct set of switches; the plain profile name keeps the file's own."""
    for spec in ("app", {"profile": "app"}):
        ruleset._RULESETS.clear()
        load_ruleset(dataclasses.replace(load_ruleset("app"), cap=3))  # a set of switches not yet seen
        load_ruleset({"profile": "app", "cap": 3})
        assert load_ruleset(spec).cap == read_profile("app").switches["cap"]
        assert load_ruleset(spec) is load_ruleset("app")


def test_switches_rebuild_the_same_ruleset() -> None:
    rules = load_ruleset("app", cap=4)
    assert load_ruleset({"profile": "app", **rules.switches()}) == rules


def test_the_same_spec_gives_the_same_ruleset() -> None:
    assert load_ruleset({"profile": "chengdu", "cap": 4}) is load_ruleset("chengdu", cap=4)


@pytest.mark.parametrize(
    ("spec", "overrides", "message"),
    [
        ({"profile": "chengdu", "cpa": 4}, {}, "unknown switch 'cpa' (known: added_kong_paid, "),
        ("chengdu", {"profile": "app"}, "unknown switch 'profile'"),
        ("chengdu", {"cap": True}, "switch 'cap' takes a whole number, got True"),
        ("chengdu", {"cap": "4"}, "switch 'cap' takes a whole number, got '4'"),
        ("chengdu", {"cap": 4.0}, "switch 'cap' takes a whole number, got 4.0"),
        ("chengdu", {"tui_shui": 1}, "switch 'tui_shui' takes true or false, got 1"),
        ("chengdu", {"tui_shui": "yes"}, "switch 'tui_shui' takes true or false, got 'yes'"),
        (
            "chengdu",
            {"self_draw": "half"},
            "switch 'self_draw' takes one of 'base', 'fan', 'none', got 'half'",
        ),
        ("chengdu", {"self_draw": 1}, "switch 'self_draw' takes one of"),
        ("chengdu", {"base": 0}, "switch 'base' must be at least 1, got 0"),
        ("chengdu", {"cap": -1}, "switch 'cap' must be at least 0, got -1"),
        (
            "nowhere",
            {},
            "unknown profile 'nowhere' (known: app, chengdu, chengdu_putong, majsoul, salasasa, sanren_liangfang, sbr, "
            "siren_liangse, xueliu)",
        ),
        ("../profiles/chengdu", {}, "unknown profile '../profiles/chengdu'"),
        ({"cap": 4}, {}, "a ruleset object needs a 'profile' name"),
        ({"profile": 5}, {}, "a profile name is a string, got 5"),
        ({"profile": None}, {}, "a profile name is a string, got None"),
        (5, {}, "a ruleset is a profile name or an object, got int"),
        (["chengdu"], {}, "a ruleset is a profile name or an object, got list"),
        ("chengdu", {"heavenly": "cap"}, "heavenly = 'cap' needs a fan cap (cap > 0) in profile 'chengdu'"),
        ("chengdu", {"earthly": "cap"}, "earthly = 'cap' needs a fan cap"),
        ("chengdu", {"heavenly": "fixed"}, "heavenly = 'fixed' needs heavenly_fan of at least 1"),
        ("app", {"earthly_fan": 0}, "earthly = 'fixed' needs earthly_fan of at least 1"),
    ],
)
def test_bad_rulesets_are_rejected(spec: Any, overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(RuleSetError) as caught:
        load_ruleset(spec, **overrides)
    assert message in str(caught.value)


def test_cap_mode_with_a_cap_is_fine() -> None:
    assert load_ruleset("chengdu", heavenly="cap", cap=4).heavenly == "cap"


def test_rule_set_error_is_a_value_error() -> None:
    assert issubclass(RuleSetError, ValueError)


def test_read_profile_rejects_a_name_that_is_no_string() -> None:
    with pytest.raises(RuleSetError, match="unknown profile 5"):
        read_profile(5)  # type: ignore[arg-type]


# -- profile files that are wrong -----------------------------------------------------------------------


@pytest.fixture
def profile_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty profile directory in place of the shipped one."""
    monkeypatch.setattr(ruleset, "PROFILE_DIR", tmp_path)
    ruleset._PROFILES.clear()
    ruleset._RULESETS.clear()
    yield tmp_path
    ruleset._PROFILES.clear()
    ruleset._RULESETS.clear()


def write_profile(directory: Path, name: str, switches: dict[str, Any]) -> None:
    lines = [f"{key} = {value!r}".replace("True", "true").replace("False", "false") for key, value in switches.items()]
    lines = [line.replace("'", '"') for line in lines]
    (directory / f"{name}.toml").write_text("[switches]\n" + "\n".join(lines) + "\n", encoding="utf-8")


def test_a_profile_file_must_set_every_switch(profile_dir: Path) -> None:
    switches = dict(CHENGDU_SWITCHES)
    del switches["tui_shui"]
    write_profile(profile_dir, "short", switches)
    with pytest.raises(RuleSetError, match="profile 'short' does not set tui_shui"):
        read_profile("short")


def test_a_profile_file_may_not_set_unknown_switches(profile_dir: Path) -> None:
    write_profile(profile_dir, "extra", {**CHENGDU_SWITCHES, "tui_shiu": True})
    with pytest.raises(RuleSetError, match="unknown switch 'tui_shiu'"):
        read_profile("extra")


def test_a_profile_file_is_type_checked(profile_dir: Path) -> None:
    write_profile(profile_dir, "typo", {**CHENGDU_SWITCHES, "cap": "none"})
    with pytest.raises(RuleSetError, match="switch 'cap' takes a whole number"):
        load_ruleset("typo")


def test_a_profile_without_description_or_sources_loads(profile_dir: Path) -> None:
    write_profile(profile_dir, "bare", CHENGDU_SWITCHES)
    assert (read_profile("bare").description, dict(read_profile("bare").sources)) == ("", {})


# -- the RuleSet value ----------------------------------------------------------------------------------


def test_rule_set_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        load_ruleset("chengdu").cap = 4  # type: ignore[misc]


def test_rule_set_is_keyword_only() -> None:
    values = list(load_ruleset("chengdu").switches().values())
    with pytest.raises(TypeError):
        RuleSet("chengdu", *values)  # type: ignore[misc]


def test_rule_set_is_hashable() -> None:
    assert len({load_ruleset("chengdu"), load_ruleset("chengdu"), load_ruleset("app")}) == 2


@pytest.mark.parametrize(("fan", "points"), [(1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (8, 128)])
def test_points_are_base_times_two_to_fan_minus_one(fan: int, points: int) -> None:
    # "本文用打1/2/4/8元……（不封顶）的赌资规格举例" (seed 000)
    assert load_ruleset("chengdu").points(fan) == points
    assert load_ruleset("chengdu", base=3).points(fan) == 3 * points


def test_points_stop_at_the_cap() -> None:
    rules = load_ruleset("chengdu", cap=4)
    assert [rules.points(fan) for fan in (3, 4, 5, 9)] == [4, 8, 8, 8]


def test_a_win_has_at_least_one_fan() -> None:
    with pytest.raises(ValueError, match="at least 1 fan, got 0"):
        load_ruleset("chengdu").points(0)


def test_cap_points() -> None:
    # 满庄: the most one hand is worth.
    assert load_ruleset("chengdu").cap_points() is None
    assert load_ruleset("chengdu", cap=4, base=2).cap_points() == 16


def test_the_ruleset_cache_is_bounded() -> None:
    # A stream of records with distinct harmless overrides must not grow memory without bound (issue 24, item 5).
    for base in range(1, ruleset.RULESET_CACHE + 500):
        assert load_ruleset({"profile": "chengdu", "base": base}).base == base
    assert len(ruleset._RULESETS) <= ruleset.RULESET_CACHE
    assert load_ruleset("chengdu").base == 1  # evicted entries are rebuilt on demand
