"""The `sbr` profile (Sichuan Bloody Rules, MIL; docs/RULES.md §7) against the book's worked examples and the
public test vectors of another SBR engine.

Book: V. Novikov, "Sichuan Mahjong? It's that simple!", part 1; "p. N" is its PDF page. Engine vectors:
the repository dcmshi/sichuan-mahjong, packages/engine/tests/scoring-cases.test.ts ("scoring-cases"),
payments.test.ts ("payments") and phase4.test.ts ("phase4"), rewritten in our notation. Its seats run the
other way round; the vectors below keep only what does not depend on seat order. Where that engine reads the
book differently (it never scores Root outside seven pairs, and gives Golden Wait to any all-pungs hand won
on its pair), the book is followed and the vector is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pipeline.game.start import start_hand
from pipeline.rules.fan import WinHand, ready_value, score
from pipeline.rules.hand import Meld
from pipeline.rules.ruleset import load_ruleset
from pipeline.rules.settle import Ledger
from pipeline.rules.tiles import counts_of, kind_of, parse_tiles

SBR = load_ruleset("sbr")


def meld(text: str) -> Meld:
    kind, tile = text.split(":")
    kinds = {"pong": "pong", "kong": "direct", "ckong": "concealed", "akong": "added"}
    return Meld(kinds[kind], kind_of(tile))  # type: ignore[arg-type]


def value(hand: str, win: str, melds: Sequence[str] = (), **flags: Any) -> tuple[int, int]:
    """(fan, points) of ``hand`` (all its tiles, the winning one included) won on ``win``."""
    s = score(WinHand.of(hand, win_tile=win, melds=[meld(m) for m in melds], with_win_tile=True, **flags), SBR)
    return s.fan, s.points


# -- the book's worked examples --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "win", "melds", "fan", "why"),
    [
        ("123s888s345p456p66p", "6p", (), 0, "nothing: 0 fans (p. 31)"),
        ("123s345p456p66p", "6p", ("kong:8s",), 1, "the same with 8888s as a kong: Kong 1 (p. 31)"),
        ("123s88s345p456p666p", "6p", (), 1, "Root: the four 6p in 456p and 666p, no kong (p. 31)"),
        (
            "99s",
            "9s",
            ("pong:1s", "pong:3s", "pong:8s", "pong:9p"),
            2,
            "four exposed pungs + 99s: Golden Wait + All Pungs",
        ),
        ("444p666p789p99p", "9p", ("kong:3p",), 3, "3333p (kong) 444p 666p 789p 99p: Full Flush + Kong (p. 34)"),
        ("333p444p66p789p999p", "6p", (), 3, "Full Flush + Root (p. 34)"),
        ("4444p66p99p11s22s33s", "3s", (), 3, "4444p as two pairs: Seven Pairs + Root (p. 34)"),
    ],
)
def test_the_books_fan_examples(hand: str, win: str, melds: Sequence[str], fan: int, why: str) -> None:
    assert value(hand, win, melds)[0] == fan, why


def test_value_is_two_to_the_fan_capped_at_three() -> None:
    # "Value = 2^fans points (1 point at 0), capped at 3 fans in MIL rules (8 points)" (Table 4-5, p. 26-27)
    assert [SBR.points(f) for f in range(6)] == [1, 2, 4, 8, 8, 8]
    assert [load_ruleset({"profile": "sbr", "cap": 4}).points(f) for f in range(6)] == [1, 2, 4, 8, 16, 16]


def test_the_books_ready_values() -> None:
    # p. 32-33: the theoretical maximum over the waits, no situational fan, no +1, the Kong fan left out.
    def tmv(concealed: str, melds: Sequence[str] = ()) -> tuple[int, int, int] | None:
        v = ready_value(counts_of(parse_tiles(concealed)), [meld(m) for m in melds], SBR)
        return None if v is None else (v.fan, v.amount, v.win_tile)

    # 333s (pung) 4444s (kong) 111m (pung) 7778m waits on 6m/8m/9m: 1 fan with 8m (All Pungs only)
    assert tmv("7778m", ("pong:3s", "kong:4s", "pong:1m")) == (1, 2, kind_of("8m"))
    # 222m (pung) 678s 999s 34m 66m waits on 2m/5m; 2m gives Root (the fourth 2m): 1 fan. (The digest we read
    # prints "666m", a tile too many for a ready hand.)
    assert tmv("678s999s34m66m", ("pong:2m",)) == (1, 2, kind_of("2m"))
    # 11p 22p 33p 55s 666s 77s: 0 fan on 5s or 7s, Seven Pairs + Root on 6s: 3 fan, 8 points
    assert tmv("11p22p33p55s666s77s") == (3, 8, kind_of("6s"))


# -- the other engine's vectors (scoring-cases, payments, phase4) --------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "win", "melds", "points", "source"),
    [
        ("123m456m234p678p99p", "1m", (), 1, "scoring-cases: a plain chow hand scores nothing and pays the base point"),
        ("111m444m222p777p99p", "1m", (), 2, "scoring-cases: all pungs alone is 1 fan"),
        ("123m456m789m234m99m", "1m", (), 4, "scoring-cases: full flush alone is 2 fan"),
        ("11m44m66m99m22p55p88p", "8p", (), 4, "scoring-cases: seven pairs alone is 2 fan"),
        ("1111m44m66m99m22p55p", "5p", (), 8, "scoring-cases: a four-of-a-kind inside seven pairs is Root"),
        ("111m333m555m777m99m", "9m", (), 8, "scoring-cases: caps at three fan, eight points is the ceiling"),
        ("111m222m333m777m99m", "7m", (), 8, "scoring-cases: the best reading of a hand that parses two ways"),
        ("11223344556677m", "7m", (), 8, "scoring-cases: the seven-pairs reading when it pays more"),
        # phase4 "All Pungs + Golden Wait, tanki on the pair" counts 4 points, but 555m is a standing pung: SBR's
        # Golden Wait needs "Four melds (pungs or kongs)" (Table 4, p. 26), a melded set holding a claimed tile
        # (p. 13): All Pungs alone, 2 points (the engine's vector is right under the override below)
        ("555m1p1p", "1p", ("pong:2m", "pong:3m", "pong:4m"), 2, "phase4 read by the book: All Pungs, no Golden Wait"),
        ("11m22m33m44m11p22p33p", "3p", (), 4, "phase4: Seven Pairs, 7 distinct pairs"),
    ],
)
def test_engine_scoring_vectors(hand: str, win: str, melds: Sequence[str], points: int, source: str) -> None:
    assert value(hand, win, melds)[1] == points, source


def test_engine_vector_golden_wait_on_a_standing_pung_is_the_override() -> None:
    # the other engine's phase4 vector, 4 points, is SBR with jin_gou_diao = single_wait_all_pungs
    standing = load_ruleset({"profile": "sbr", "jin_gou_diao": "single_wait_all_pungs"})
    melds = [Meld("pong", kind_of(t)) for t in ("2m", "3m", "4m")]
    assert score(WinHand.of("555m1p1p", win_tile="1p", with_win_tile=True, melds=melds), standing).points == 4


def test_engine_vector_seven_pairs_under_the_sea() -> None:
    # scoring-cases "adds the situational fan only when the structure allows it": Seven Pairs + Under the Sea
    assert value("11m44m66m99m22p55p88p", "8p", last_tile=True) == (3, 8)


def test_engine_vector_a_void_suit_hand_does_not_win() -> None:
    # scoring-cases "never lets the voided suit into a winning hand" (void s)
    from pipeline.rules.fan import NotAWin

    with pytest.raises(NotAWin):
        score(WinHand.of("123m456m234p678s99p", win_tile="1m", with_win_tile=True, que="s"), SBR)


def hand(concealed: str, win: str, **flags: Any) -> Any:
    return score(WinHand.of(concealed, win_tile=win, with_win_tile=True, **flags), SBR)


def test_engine_payment_vectors_self_draw() -> None:
    big = hand("111m333m555m777m99m", "9m", self_drawn=True)  # All Pungs + Full Flush: 8, +1 a payer
    ledger = Ledger(SBR)
    ledger.win(0, big, 5)
    assert ledger.deltas() == [27, -9, -9, -9]  # payments: "collects handValue + 1 from each of the other three"
    ledger = Ledger(SBR)
    ledger.win(1, hand("123m456m234p678p99p", "9p"), 3, discarder=2)
    ledger.win(0, big, 5)
    assert ledger.deltas()[0] == 18  # "worth less once someone has already won": 2 payers × 9
    plain = Ledger(SBR)
    plain.win(0, hand("123m456m234p678p99p", "9p", self_drawn=True), 5)
    assert plain.deltas() == [6, -2, -2, -2]  # "a fan-less hand still collects two from each"


def test_engine_payment_vectors_kongs_and_false_hu() -> None:
    ledger = Ledger(SBR)
    ledger.kong(0, "concealed", 1)
    assert ledger.deltas() == [6, -2, -2, -2]  # payments: "a concealed kong takes 2 from every seat still playing"
    ledger = Ledger(SBR)
    ledger.kong(0, "added", 1, fresh=True)
    assert ledger.deltas() == [3, -1, -1, -1]  # "a promoted kong takes 1 from each, not 2"
    ledger = Ledger(SBR)
    ledger.kong(0, "added", 1, fresh=False)
    assert ledger.deltas() == [0, 0, 0, 0]  # phase4: a postponed kong (a tile from the hand) is paid nothing
    ledger = Ledger(SBR)
    ledger.penalty(0, 4, everyone=False)
    assert ledger.deltas() == [-24, 8, 8, 8]  # "the false-Hu penalty is a flat 8 to each opponent still playing"
    ledger = Ledger(SBR)
    ledger.win(1, hand("123m456m234p678p99p", "9p"), 3, discarder=2)
    ledger.penalty(0, 4, everyone=False)
    assert ledger.deltas()[0] == -16  # "pays only the seats still playing": the winner is paid nothing


def test_engine_vector_a_void_suit_concealed_kong_pays_48_to_the_pot() -> None:
    # phase4 "concealed kong of voided suit emits voidMeldPenalty and deducts 48": kong money +6, penalty −48
    deal = ["1111s234m567m888m9m", "123p456p789p1m2m3m4m", "123p456p789p5m6m7m8m", "111m999m5p66p77p88p"]
    state = start_hand(SBR, dealer=0, deal=[parse_tiles(h) for h in deal], que=(2, 2, 2, 2))
    state.kong(0, kind_of("1s"), "concealed")
    facts = state.facts()
    assert facts.deltas[0] == 6 - 48 and state.ledger.pot == 48 and sum(facts.deltas) == -48


def test_dealer_rule() -> None:
    # phase4 "when two players Hu the same discard, the discarder becomes next dealer" (SBR p. 22, 30)
    assert SBR.dealer_next == "first_winner"


def test_every_sbr_value_names_its_page() -> None:
    # `xuezhan rules show sbr` prints each switch with its source: a page of the book, or why it is unused.
    import re

    from typer.testing import CliRunner

    from cli import app
    from pipeline.rules.ruleset import read_profile, switch_names

    sources = read_profile("sbr").sources
    assert all(re.search(r"p\. \d|pp\. \d", sources[n]) or sources[n].startswith("unused") for n in switch_names())
    shown = CliRunner().invoke(app, ["rules", "show", "sbr"])
    assert shown.exit_code == 0
    for name in switch_names():
        assert f"\n{name} = " in shown.stdout and sources[name] in shown.stdout


@pytest.mark.parametrize("profile", ["sbr", "majsoul"])
def test_simulated_hands_of_the_profile_validate_clean(profile: str, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from cli import app

    out = tmp_path / f"{profile}.jsonl"
    args = ["simulate", "--rules", profile, "--hands", "60", "--seed", "11", "--out", str(out)]
    made = CliRunner().invoke(app, args)
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(app, ["validate", str(out)])
    assert checked.exit_code == 0, checked.output
