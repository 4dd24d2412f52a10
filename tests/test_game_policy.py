"""The reference policy (issue 43 point 1) and the per-decision review (point 2): decision points worked out by
hand, the options exactly the legal ones (a property), determinism, and ``xuezhan replay --review``."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dashboards.pages.replay import replay_html
from pipeline.audit.replay import replay_text
from pipeline.audit.review import avoidable, efficient, review, summarize
from pipeline.game.events import Discard, Hu, Kong, Pong
from pipeline.game.policy import (
    CLEARLY_LIVE,
    FOLD_SHANTEN,
    Opponent,
    Option,
    View,
    clearly_better,
    danger_of,
    decide,
    rank_claim,
    rank_exchanges,
    rank_turn,
    rank_voids,
    wait_ways,
)
from pipeline.game.record import parse_record
from pipeline.game.start import start_hand
from pipeline.rules import load_ruleset
from pipeline.rules.tiles import counts_of, full_set, parse_tiles, tile_name
from pipeline.validate import validate

ROOT = Path(__file__).resolve().parent.parent
M, P, S = 0, 1, 2


def kind(name: str) -> int:
    return parse_tiles(name)[0]


def view(hand: str, void: int | None = S, opponents: tuple[Opponent, ...] = (), seen: str = "") -> View:
    counts = counts_of(parse_tiles(hand))
    visible = list(counts)
    for k in parse_tiles(seen) if seen else []:
        visible[k] += 1
    return View(0, tuple(counts), (), void, tuple(visible), opponents, 40)


def discards(v: View) -> list[Option]:
    return rank_turn(v, [Discard(0, k) for k in range(27) if v.counts[k]])


def names(options: list[Option]) -> list[str]:
    return [tile_name(o.tile) for o in options]


# ---------------------------------------------------------------------------------------------- hand-made points
def test_the_one_discard_that_keeps_ready_with_the_most_live_tiles_is_first() -> None:
    # 111m 456m 789m 2345p 8p: 8p leaves 2345p waiting on 2p and 5p (3 + 3 unseen); 2p or 5p leave an 8p single
    ranked = discards(view("111m456m789m2345p8p"))
    assert names(ranked[:3]) == ["8p", "2p", "5p"]
    first = ranked[0]
    assert (first.rank, first.shanten, first.live, first.danger) == (1, 0, 6, 0)
    assert [(o.shanten, o.live) for o in ranked[1:3]] == [(0, 3), (0, 3)]
    assert all(o.shanten == 1 for o in ranked[3:])


def test_live_tiles_count_only_the_copies_unseen() -> None:
    # two 2p and two 5p in the rivers: 8p's waits have 1 + 1 copies left, the 8p single wait (throwing 2p) 3
    ranked = discards(view("111m456m789m2345p8p", seen="2p2p5p5p"))
    assert [(tile_name(o.tile), o.live) for o in ranked[:3]] == [("2p", 3), ("5p", 3), ("8p", 2)]
    # every copy of the waits in view: still ready, nothing live, and the policy says so
    dead = discards(view("111m456m789m2345p8p", seen="2p2p2p5p5p5p"))
    assert [(o.shanten, o.live) for o in dead if tile_name(o.tile) == "8p"] == [(0, 0)]


def test_a_void_suit_tile_goes_first_even_at_the_same_shanten() -> None:
    # holding 9s with s declared void: discarding it or the 2p both leave shanten 0 (void tiles are left out),
    # but the 9s can never be part of a win
    ranked = discards(view("111m456m789m2345p9s"))
    assert names(ranked[:1]) == ["9s"]
    chosen = next(o for o in ranked if tile_name(o.tile) == "2p")
    assert chosen.shanten == ranked[0].shanten == 0
    assert clearly_better(ranked, chosen, S) == ranked[0]
    assert clearly_better(ranked, chosen, None) is not None  # still better: more live tiles (6 vs 0)


def test_a_tile_dead_safe_against_a_ready_opponent_ranks_safer() -> None:
    hand = "111m444m777m9m55p19p"
    calm = discards(view(hand))
    assert names(calm[:3]) == ["9m", "1p", "9p"]  # 1p and 9p alike: the lower kind first
    # an opponent with two melds (a ready signal), void in m, who let 9p go by since its last draw
    ready = Opponent(1, M, 2, 5, False, frozenset({kind("9p")}))
    wary = discards(view(hand, opponents=(ready,)))
    assert names(wary[:3]) == ["9m", "9p", "1p"]
    by_tile = {tile_name(o.tile): o for o in wary}
    assert by_tile["9p"].danger == 0 and by_tile["1p"].danger > 0  # passed since its draw: safe
    assert by_tile["9m"].danger == 0 and by_tile["7m"].danger == 0  # its void suit: safe
    assert clearly_better(wary, by_tile["1p"]) == by_tile["9m"]  # same shanten, safe vs not


def test_danger_is_zero_without_a_ready_signal_and_counts_the_ways_otherwise() -> None:
    quiet = Opponent(1, M, 1, 9, False, frozenset())
    assert danger_of(view("111m444m777m9m55p19p", opponents=(quiet,))) == [0] * 27
    won = Opponent(1, M, 3, 12, True, frozenset())  # out of the hand (血战: it has won)
    assert danger_of(view("111m444m777m9m55p19p", opponents=(won,))) == [0] * 27
    unseen = [4] * 27
    assert wait_ways(unseen, kind("1p")) == 8 + 16  # a pair/single wait on it, 23p
    assert wait_ways(unseen, kind("5p")) == 8 + 3 * 16  # 46p, 34p, 67p
    assert wait_ways([0] * 27, kind("5p")) == 0  # every copy and neighbour in view: no chance


def test_folding_far_from_ready_puts_safety_before_shanten() -> None:
    hand = "134679m2258p1s579s"  # four or more from ready, s void
    calm = discards(view(hand))
    assert names(calm[:3]) == ["1s", "5s", "7s"]  # the void suit first
    ready = Opponent(1, P, 2, 11, False, frozenset())  # void in p, two melds
    wary = discards(view(hand, opponents=(ready,)))
    assert wary[0].shanten >= FOLD_SHANTEN
    # folding: the safest first: the p tiles (its void), whatever their shanten, then by danger
    assert [tile_name(o.tile)[1] for o in wary[:3]] == ["p", "p", "p"]
    assert [o.danger for o in wary] == sorted(o.danger for o in wary)
    assert wary[0].danger == 0 and max(o.danger for o in wary) > 0


def test_a_win_is_always_first_and_passing_it_is_clearly_worse() -> None:
    v = view("111m456m789m55p77p")  # 13 tiles, waiting on 5p or 7p (a pong of either is legal too)
    five = kind("5p")
    ranked = rank_claim(v, five, [Hu(0, five, 2), Pong(0, five, 2)])
    assert [o.action for o in ranked] == ["hu", "pass", "pong"]
    assert clearly_better(ranked, ranked[1]) == ranked[0] == clearly_better(ranked, ranked[2])


def test_a_pong_is_taken_only_when_it_lowers_the_shanten() -> None:
    five = kind("5m")
    helps = rank_claim(view("55m123p789p46p19p9m"), five, [Pong(0, five, 2)])
    assert [(o.action, o.shanten) for o in helps] == [("pong", 0), ("pass", 1)]
    # ready already (55m 567m 123p 789p 46p): the pong keeps it ready, so the pass, concealed, comes first, and
    # neither is called clearly better
    ranked = rank_claim(view("55m567m123p789p46p"), five, [Pong(0, five, 2)])
    assert [(o.action, o.shanten) for o in ranked] == [("pass", 0), ("pong", 0)]
    assert clearly_better(ranked, ranked[1]) is None


def test_a_kong_that_keeps_the_shanten_comes_before_the_discards() -> None:
    v = view("1111m456m789m2345p")
    ranked = rank_turn(v, [Kong(0, kind("1m"), "concealed"), *(Discard(0, k) for k in range(27) if v.counts[k])])
    assert (ranked[0].action, ranked[0].shanten) == ("kong", 0)


def test_the_void_and_the_exchange() -> None:
    hand = parse_tiles("1234567m1129p35s")  # 13 tiles: p and s both short, s the weaker
    voids = rank_voids(hand)
    assert voids[0].tile == S
    assert voids[-1].tile == M  # never void the long suit
    ex = rank_exchanges(parse_tiles("123456m1199p359s"))
    assert [o.tile for o in ex] == [S, P, M]  # the three s tiles go, leaving s as the void
    assert ex[0].tiles == tuple(parse_tiles("359s"))
    assert ex[1].tiles == tuple(parse_tiles("119p"))  # the least connected (a pair counts double), lower kinds first
    assert ex[2].tiles == tuple(parse_tiles("126m"))
    assert [o.shanten for o in ex] == sorted(o.shanten for o in ex)
    assert [o.tile for o in rank_exchanges(parse_tiles("123456789m1199p"))] == [P, M]  # s: fewer than three


def test_an_exchange_is_reviewed_with_the_tiles_given() -> None:
    """A record of a profile with 换三张 (app): each seat's exchange is a decision, its tiles the ones given."""
    from pipeline.simulate.tables import SimConfig, simulate

    lines, _ = simulate(SimConfig(hands=2, seed=5, players=8, profile="app"))
    for line in lines:
        record = json.loads(line)
        decisions = review(parse_record(record))
        exchanges = [d for d in decisions if d.kind == "exchange"]
        assert len(exchanges) == 4
        for d, gave in zip(exchanges, record["exchange"]["given"], strict=True):
            assert d.chosen.tiles == tuple(sorted(parse_tiles(gave)))
            assert d.chosen.rank == next(o.rank for o in d.options if o.tile == d.chosen.tile)
            if d.chosen.shanten > d.options[0].shanten:
                assert d.better == d.options[0]


def test_clearly_better_thresholds() -> None:
    def opt(tile: str, shanten: int, live: int, danger: int = 0, rank: int = 2) -> Option:
        return Option("discard", kind(tile), Discard(0, kind(tile)), shanten, live, danger, 0, rank)

    best = opt("1m", 1, 20, rank=1)
    assert clearly_better([best], opt("2m", 2, 40)) == best  # a step back
    assert clearly_better([best], opt("2m", 1, 20 - CLEARLY_LIVE)) == best
    assert clearly_better([best], opt("2m", 1, 20 - CLEARLY_LIVE + 1)) is None  # taste
    assert clearly_better([best], opt("2m", 1, 20, danger=5)) == best  # as good, and safe
    risky = opt("1m", 0, 20, danger=9, rank=1)
    assert clearly_better([risky], opt("2m", 1, 4)) is None  # the faster one is the more dangerous


# ---------------------------------------------------------------------------------------------- legal, deterministic
def _events_of(options: list[Option]) -> set[object]:
    return {o.event for o in options if o.event is not None}


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1))
def test_the_options_are_exactly_the_legal_ones(seed: int) -> None:
    """Any state a hand can reach (random legal play): on a turn the options are the state's turn options; on a
    discard each seat's are its claim options and the pass; nobody else has any."""
    rng = random.Random(seed)
    rules = load_ruleset("chengdu")
    wall = full_set(rules.suits)
    rng.shuffle(wall)
    state = start_hand(rules, dealer=rng.randrange(4), wall=wall, que=tuple(rng.randrange(3) for _ in range(4)))
    while not state.over:
        if state.phase == "discard":
            seat = state.turn
            legal = state.turn_options(seat)
            got = decide(state, seat)
            assert _events_of(got) == set(legal) and len(got) == len(legal)
            assert [o.rank for o in got] == list(range(1, len(got) + 1))
            assert all(decide(state, s) == [] for s in range(4) if s != seat)
            state.apply(rng.choice(legal))
        elif state.phase in ("claim", "rob"):
            claims = []
            for seat in range(4):
                legal = state.claim_options(seat)
                got = decide(state, seat)
                assert _events_of(got) == set(legal)
                assert [o.action for o in got].count("pass") == (1 if legal else 0)
                claims += legal
            wins = [c for c in claims if isinstance(c, Hu)]
            if wins and rng.random() < 0.7:
                state.apply(wins[0])
            elif claims and rng.random() < 0.5:
                state.apply(rng.choice(claims))
            else:
                draw = state.next_draw()
                state.apply(draw) if draw is not None else state.close()
        else:
            draw = state.next_draw()
            state.apply(draw) if draw is not None else state.close()


def _sample(n: int = 1) -> list[dict[str, object]]:
    with gzip.open(ROOT / "data" / "sample.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(next(f)) for _ in range(n)]


def test_the_review_is_deterministic_and_reads_only_the_record() -> None:
    record = _sample()[0]
    first = review(parse_record(record))
    again = review(parse_record(json.loads(json.dumps(record))))
    assert first == again and first


def test_the_review_of_a_sample_hand() -> None:
    record = _sample()[0]
    parsed = parse_record(record)
    decisions = review(parsed)
    turns = [e for e in parsed.events if e.t in ("discard", "kong") or (e.t == "hu" and e.source is None)]
    assert len([d for d in decisions if d.kind == "turn"]) == len(turns)
    assert len([d for d in decisions if d.kind == "void"]) == 4
    for d in decisions:
        assert d.chosen in d.options and d.options[d.chosen.rank - 1] == d.chosen  # no exchange in chengdu
        assert (d.better is None) or d.better.rank == 1
    text = replay_text(record, validate(record), review=True)
    plain = replay_text(record, validate(record))
    assert "review (reference policy" in text and "review (reference policy" not in plain
    assert text.count("\n       »") == len(decisions)
    worse = sum(d.better is not None for d in decisions)
    assert sum(line.lstrip().startswith("»!") for line in text.split("\n")) == worse
    seats = summarize(decisions, 4)
    assert sum(s.decisions for s in seats) == len(decisions)
    dealt = {e.source for e in parsed.events if e.t == "hu" and e.source is not None and not e.rob_kong}
    assert dealt and [s.deal_ins > 0 for s in seats] == [seat in dealt for seat in range(4)]
    assert all(s.avoidable_deal_ins <= s.deal_ins for s in seats)
    assert all(s.efficient <= s.discards for s in seats)
    page = replay_html(record, validate(record), review=True)
    assert 'class="review"' in page and "»" in page
    assert 'class="review"' not in replay_html(record, validate(record))


def test_an_avoidable_deal_in_had_a_safe_discard_at_no_worse_shanten() -> None:
    def opt(tile: str, shanten: int, danger: int) -> Option:
        return Option("discard", kind(tile), Discard(0, kind(tile)), shanten, 10, danger, 0, 1)

    assert avoidable([opt("1m", 1, 0), opt("5p", 1, 30)], opt("5p", 1, 30))
    assert not avoidable([opt("1m", 2, 0), opt("5p", 1, 30)], opt("5p", 1, 30))  # safety cost a step
    assert not avoidable([opt("1m", 1, 4), opt("5p", 1, 30)], opt("5p", 1, 30))  # nothing known safe
    assert not avoidable([opt("1m", 1, 0), opt("5p", 1, 0)], opt("5p", 1, 0))  # it looked safe


def test_efficient_is_shanten_then_live() -> None:
    ranked = discards(view("111m456m789m2345p8p"))
    by = {tile_name(o.tile): o for o in ranked}
    assert efficient(ranked, by["8p"]) and not efficient(ranked, by["2p"]) and not efficient(ranked, by["1m"])


def test_the_command_reviews_in_text_and_html(tmp_path: Path) -> None:
    import subprocess
    import sys

    record = _sample()[0]
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(record) + "\n")
    cli = "from cli import app; app(prog_name='xuezhan')"
    run = [sys.executable, "-c", cli, "replay", record["hand_id"], str(path)]
    text = subprocess.run([*run, "--review"], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "review (reference policy" in text.stdout and "\n       »  turn " in text.stdout
    page = tmp_path / "hand.html"
    done = subprocess.run([*run, "--review", "--html", str(page)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert 'class="review"' in page.read_text(encoding="utf-8")


def test_the_agreement_tool_counts_every_decision() -> None:
    from tools.policy_agreement import main, measure, simulated, wilson

    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(50, 100)
    assert lo < 0.5 < hi and round(lo, 3) == 0.404 and round(hi, 3) == 0.596
    records, styles = simulated(3, 1)
    m = measure(records, styles)
    assert sum(n for _, n in m["agreement"].values()) == m["decisions"] > 0
    assert set(styles.values()) >= {key.split("/")[0] for key in m["agreement"]}
    assert main(["--hands", "2"]) == 0


def test_every_record_of_the_regression_corpus_is_reviewed_or_refused_cleanly() -> None:
    """Invalid records, observers' records, score sheets: the review says what it can and never fails (a record
    that cannot be read raises the reader's RecordError, as the replay does)."""
    from pipeline.audit.review import review_json
    from pipeline.game.record import RecordError

    reviewed = 0
    for path in sorted((ROOT / "tests" / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            try:
                record, decisions = review_json(obj)
            except RecordError:
                continue
            reviewed += 1
            if record.level == "settlement":
                assert decisions == []
            for d in decisions:
                assert 1 <= d.chosen.rank <= len(d.options)
    assert reviewed > 150


def test_an_observers_record_is_reviewed_for_its_own_seat_only() -> None:
    """Level observer: only the observer's tiles are known, so only its decisions are reviewed, and exactly as in
    the full record (the policy reads only what the seat could see, which the observer's record holds)."""
    from test_levels_observer import to_observer

    full = next(r for r in _sample(10) if any(e["t"] == "hu" and e["seat"] != 0 for e in r["events"]))
    observed = review(parse_record(to_observer(full, 0, show=True)))
    assert observed and {d.seat for d in observed} == {0}
    mine = [d for d in review(parse_record(full)) if d.seat == 0]
    assert [(d.event, d.kind, d.chosen, d.options) for d in observed] == [
        (d.event, d.kind, d.chosen, d.options) for d in mine
    ]


@settings(max_examples=200)
@given(
    st.lists(st.integers(0, 26), min_size=1, max_size=14).filter(lambda ks: max(ks.count(k) for k in ks) <= 4),
    st.sampled_from([None, 0, 1, 2]),
    st.integers(0, 3),
)
def test_improving_kinds_are_exactly_the_draws_that_lower_the_shanten(
    kinds: list[int], void: int | None, melds: int
) -> None:
    """The near-tile shortcut of improving_mask loses nothing: every kind of which a copy is left is tried."""
    from pipeline.rules.hand import improving_mask, shanten, suit_codes

    counts = counts_of(kinds)
    melds = min(melds, (14 - len(kinds)) // 3)
    base = shanten(counts, melds, void)
    brute = 0
    for k in range(27):
        if counts[k] < 4 and k // 9 != void:
            counts[k] += 1
            if shanten(counts, melds, void) < base:
                brute |= 1 << k
            counts[k] -= 1
    assert improving_mask(*suit_codes(counts), melds, void) == brute


# ---------------------------------------------------------------------------------------------- difficulty
def _sample_records(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    with gzip.open(ROOT / "data" / "sample.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            try:
                obj = json.loads(line)
                if validate(obj).ok:
                    out.append(obj)
            except ValueError:
                continue  # the sample's deliberately broken lines
            if len(out) == n:
                break
    return out


def test_difficulty_of_each_decision_along_a_record() -> None:
    """A draw has none; every decision 0 (one good option, forced, a win) up to the cap; some decisions of real
    play are hard (several options the review cannot call clearly worse than the first)."""
    from pipeline.game.policy import DIFFICULTY_CAP, difficulties
    from pipeline.validate import initial_state

    seen: set[int] = set()
    for obj in _sample_records(20):
        record = parse_record(obj)
        hard = difficulties(initial_state(record), record.events)
        assert len(hard) == len(record.events)
        for event, d in zip(record.events, hard, strict=True):
            if event.t == "draw":
                assert d is None
            else:
                assert d is not None and 0 <= d <= DIFFICULTY_CAP
                seen.add(d)
    assert 0 in seen and max(seen) >= 2


def test_difficulty_of_a_hidden_hand_and_after_an_illegal_event_is_unknown() -> None:
    """An observer record's other seats' decisions have no difficulty (their options are not known); from an
    illegal event, nothing is judged."""
    from test_levels_observer import to_observer

    from pipeline.game.policy import difficulties
    from pipeline.validate import initial_state, play_state

    obj = _sample_records(1)[0]
    seen = parse_record(to_observer(obj, 0))
    hard = difficulties(play_state(seen), seen.events)
    assert all(d is None for e, d in zip(seen.events, hard, strict=True) if e.seat != 0)
    assert any(d is not None for e, d in zip(seen.events, hard, strict=True) if e.seat == 0 and e.t != "draw")

    record = parse_record(obj)
    first = record.events[0]
    held = initial_state(record).counts[first.seat]
    absent = next(k for k in range(27) if not held[k])
    bad = (Discard(first.seat, absent), *record.events)
    got = difficulties(initial_state(record), bad)
    assert got[0] is not None  # the decision point itself was legal: the discard made there was not
    assert got[1:] == [None] * (len(bad) - 1)
