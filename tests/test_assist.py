"""The engine-assistance screen (issue 43 point 3): the decisions pass (pipeline/audit/decisions.py), its
ambiguity weights, the weighted Poisson-binomial tail against brute force, and the screen (pipeline/audit/
assist.py) on a simulated room with a crude follower (one player's decisions replaced by the reference policy's
own first choice), through ``xuezhan assist``."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import shutil
import statistics
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from pipeline.analytics.export import Missing
from pipeline.analytics.queries import connect
from pipeline.analytics.stats import normal_sf, t_sf
from pipeline.audit import assist, tallies
from pipeline.audit.assist import (
    BANDS,
    CLEAR_GAP,
    Assist,
    Reach,
    _against_the_others,
    band,
    cell,
    hand_cells,
    judge,
    moments,
    reach,
    screen,
    stored_band,
    stored_room,
    tail,
    tally,
)
from pipeline.audit.decisions import (
    PEAK_GAP,
    WIN_GAP,
    DecisionRow,
    agreed,
    decision_hands,
    decision_rows,
    gap,
    runner_up,
    weight,
)
from pipeline.audit.review import Decision
from pipeline.audit.tallies import review_warehouse, stored_screen
from pipeline.game.policy import Option
from pipeline.ingest.run import ingest
from pipeline.simulate.tables import SimConfig, write
from schemas.tables import TALLY_VERSION


def _opt(action: str, tile: int, shanten: int, live: int, danger: int = 0, value: int = 0, rank: int = 0) -> Option:
    return Option(action, tile, None, shanten, live, danger, value, rank)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ the weighted tail
def _brute(ps: np.ndarray, ws: np.ndarray, t: float) -> float:
    n = len(ps)
    bits = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(float)
    prob = np.prod(np.where(bits == 1, ps, 1 - ps), axis=1)
    return float(prob[bits @ ws >= t - 1e-12].sum())


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_tail_is_close_to_brute_force_on_small_sums(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ps, ws = rng.uniform(0.3, 0.95, 16), rng.uniform(0.05, 1.0, 16)
    mean, var, k3 = moments(ps.tolist(), ws.tolist())
    assert mean == pytest.approx(float(ps @ ws)) and var == pytest.approx(float((ws**2) @ (ps * (1 - ps))))
    for k in (0.0, 1.0, 2.0, 2.5, 3.0):
        t = mean + k * math.sqrt(var)
        exact, approx = _brute(ps, ws, t), tail(t, mean, var, k3)
        assert abs(approx - exact) <= 0.01, (k, exact, approx)
        assert approx >= 0.5 * exact  # never much lighter than the truth: a p-value not too small


def test_the_tail_of_a_long_sum_matches_the_exact_distribution() -> None:
    # 400 decisions, integer weights 1..4: the exact distribution by convolution
    rng = np.random.default_rng(7)
    ps, ws = rng.uniform(0.4, 0.9, 400), rng.integers(1, 5, 400)
    dist = np.zeros(int(ws.sum()) + 1)
    dist[0] = 1.0
    for p, w in zip(ps, ws, strict=True):
        moved = np.zeros_like(dist)
        moved[w:] = dist[:-w] * p
        dist = dist * (1 - p) + moved
    assert dist.sum() == pytest.approx(1.0)
    mean, var, k3 = moments(ps.tolist(), ws.astype(float).tolist())
    for k in (1.0, 2.0, 3.0, 4.0):
        t = math.ceil(mean + k * math.sqrt(var))
        exact = float(dist[t:].sum())
        # the lattice's half step: the refined normal tail at t - 1/2 (the sum takes whole values here)
        approx = tail(t - 0.5, mean, var, k3)
        assert approx == pytest.approx(exact, rel=0.15), (k, exact, approx)


def test_the_room_spread_widens_the_tail() -> None:
    assert tail(60.0, 50.0, 25.0, 0.0) < tail(60.0, 50.0, 25.0, 0.0, extra=25.0) < 0.5


def _figures(excess: list[float], n: float = 1000.0) -> dict[str, tuple[float, float, float, float, float, int]]:
    """A room's per-player figures (T, μ, σ², κ₃, Σw, n) of ``n`` unit-weight decisions at p = 0.8 and these
    excess rates."""
    var = n * 0.8 * 0.2
    return {f"p{i}": ((0.8 + e) * n, 0.8 * n, var, 0.0, n, int(n)) for i, e in enumerate(excess)}


def test_a_players_own_excess_never_widens_the_spread_it_is_judged_by() -> None:
    room = [0.01, -0.02, 0.015, -0.005, 0.0, 0.02, -0.01]
    z1, p1, _ = _against_the_others([f"p{i}" for i in range(8)], _figures([*room, 0.05]))["p7"]
    z2, p2, _ = _against_the_others([f"p{i}" for i in range(8)], _figures([*room, 0.10]))["p7"]
    assert z2 == pytest.approx(2 * z1) and p2 < p1  # the same spread: twice the excess, twice the z
    # while the spread all eight give (the excess among them) would have grown with it
    assert statistics.variance([*room, 0.10]) > 2 * statistics.variance([*room, 0.05])


def test_the_room_sums_give_each_player_the_spread_of_the_others_alone() -> None:
    # the leave-one-out spread from the room's sums, against the others' variance worked out player by player
    rng = np.random.default_rng(3)
    figures = _figures(rng.normal(0.0, 0.03, 30).tolist(), n=800.0)
    names = list(figures)
    judged = _against_the_others(names, figures)
    for name in names:
        others = [k for k in names if k != name]
        excess = [(figures[k][0] - figures[k][1]) / figures[k][4] for k in others]
        sampling = statistics.fmean(figures[k][2] / figures[k][4] ** 2 for k in others)
        tau2 = max(0.0, statistics.variance(excess) - sampling) * (1 + 1 / len(others))
        t_sum, mean, var, k3, w_sum, _ = figures[name]
        z = (t_sum - mean) / math.sqrt(var + tau2 * w_sum**2)
        assert judged[name][0] == pytest.approx(z, rel=1e-9, abs=1e-12)
        assert judged[name][1] == pytest.approx(tail(t_sum, mean, var, k3, tau2 * w_sum**2, df=28), rel=1e-9)
        assert judged[name][2] == pytest.approx(math.sqrt(var + tau2 * w_sum**2) / w_sum, rel=1e-9)


def test_a_spread_measured_on_few_players_gives_a_heavier_tail() -> None:
    # the others' spread measured on 4 of them: the deviate read in Student's t of 3 degrees of freedom, far
    # heavier than the normal; measured on 40, nearly the normal
    few = [0.02, -0.02, 0.02, -0.02]
    z_few, p_few, _ = _against_the_others([f"p{i}" for i in range(5)], _figures([*few, 0.06]))["p4"]
    z_many, p_many, _ = _against_the_others([f"p{i}" for i in range(41)], _figures([*few * 10, 0.06]))["p40"]
    assert z_few > 2 and p_few == pytest.approx(t_sf(z_few, 3)) and p_many == pytest.approx(t_sf(z_many, 39))
    assert p_few / normal_sf(z_few) > 2 * p_many / normal_sf(z_many) > 2
    # an honest room with no spread beyond sampling: τ² is 0, not negative, and the tail is the Bernoullis' own
    flat = _figures([0.0] * 7 + [0.0])
    assert _against_the_others(list(flat), flat)["p7"] == (0.0, pytest.approx(0.5), pytest.approx(0.4 / 1000**0.5))


# ------------------------------------------------------------------------------------------ ambiguity weights
def test_the_gap_and_the_weight_of_hand_made_option_lists() -> None:
    best = _opt("discard", 0, 1, 12, rank=1)
    # forced: one option, or several the policy tells apart only by their tile
    assert gap([best]) is None and gap([best, _opt("discard", 9, 1, 12, rank=2)]) is None
    assert weight(None) == 0.0
    # near-equal: one live tile more; the peak: three more; clear: a shanten lower
    near = gap([best, _opt("discard", 5, 1, 11)])
    peak = gap([best, _opt("discard", 5, 1, 9)])
    clear = gap([best, _opt("discard", 5, 2, 12)])
    assert (near, peak, clear) == (0.25, 0.75, 3.0) and peak == PEAK_GAP
    assert weight(peak) == 1.0 and weight(near) < 0.5 and weight(clear) < 0.05
    assert weight(clear) < weight(near) < weight(peak)
    # a trade-off (a shanten lower for 8 fewer live tiles) is less clear than the shanten alone
    assert gap([best, _opt("discard", 7, 2, 20)]) == 2.0 < clear
    # danger and value count too: 4 danger points or 2 value points are one unit
    assert gap([best, _opt("discard", 3, 1, 12, danger=2)]) == 0.5
    assert gap([best, _opt("discard", 3, 1, 12, value=-1)]) == 0.5
    # the runner-up is the first option that differs, past the ties
    tie = _opt("discard", 9, 1, 12, rank=2)
    second = _opt("discard", 4, 1, 9, rank=3)
    assert runner_up([best, tie, second]) is second and gap([best, tie, second]) == 0.75
    # a win ranked first: no judgement, no weight
    win = _opt("hu", 3, -1, 0, rank=1)
    assert gap([win, _opt("pass", 3, 0, 8)]) == WIN_GAP and weight(WIN_GAP) == 0.0
    assert band(0.25) == 0 and band(0.75) == 1 and band(1.0) == 2 and band(2.0) == 3 and band(CLEAR_GAP) == 4


def test_agreement_counts_a_tie_with_the_first_choice() -> None:
    best = _opt("discard", 0, 1, 12, rank=1)
    tie = _opt("discard", 9, 1, 12, rank=2)
    worse = _opt("discard", 4, 1, 9, rank=3)
    options = (best, tie, worse)
    assert agreed(Decision(5, 0, "turn", options, best, None))
    assert agreed(Decision(5, 0, "turn", options, tie, None))  # the same figures: the tile order is a tie-break
    assert not agreed(Decision(5, 0, "turn", options, worse, None))


# ------------------------------------------------------------------------------------------ a simulated room
@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list[DecisionRow]]:
    root = tmp_path_factory.mktemp("assist")
    games = root / "games.jsonl"
    mix = {"balanced": 0.3, "aggressive": 0.15, "defensive": 0.15, "novice": 0.1, "expert": 0.3}
    labels = write(SimConfig(hands=240, seed=5, players=8, styles=mix), games)
    ingest([str(games)], root / "wh", workers=1)
    with connect(root / "wh") as con:
        hands = decision_hands(con)
    missing: list[Missing] = []
    rows = list(decision_rows(hands, missing))
    assert missing == [] and len(hands) == 240
    return root / "wh", labels.as_dict(), rows


def _crude(rows: list[DecisionRow], player: str) -> list[DecisionRow]:
    """``player``'s decisions replaced by the reference policy's own first choice."""
    return [dataclasses.replace(r, agreed=True) if r.player == player and r.non_forced else r for r in rows]


def test_the_decisions_pass_reviews_every_hand_and_weighs_the_non_forced(room: tuple) -> None:
    _, labels, rows = room
    assert {r.player for r in rows} == set(labels["players"])
    assert {r.kind for r in rows} >= {"turn", "claim", "void"}
    forced = [r for r in rows if not r.non_forced]
    assert forced and all(r.weight == 0.0 and r.gap is None for r in forced)
    heavy = [r for r in rows if r.weight > 0.9]
    assert heavy and all(0.5 < (r.gap or 0) < 1.1 for r in heavy)
    assert all((r.rank == 1) <= r.agreed for r in rows)  # the first choice always agrees


def test_the_screen_flags_a_crude_follower_and_no_honest_player(room: tuple) -> None:
    _, labels, rows = room
    honest = screen(rows)
    assert all(a.p is not None for a in honest)  # the 8 screened
    assert not any(a.flagged for a in honest)
    follower = sorted(labels["players"])[3]
    result = screen(_crude(rows, follower))
    assert [a.player for a in result if a.flagged] == [follower]
    top = result[0]
    assert top.player == follower and top.agreement == 1.0 and top.expected is not None and top.expected < 0.95
    assert top.evidence and all(e.room_p < 1.0 and e.weight > 0 for e in top.evidence)
    # the evidence: heaviest where the room rarely agrees, first
    scores = [e.weight * (1 - e.room_p) for e in top.evidence]
    assert scores == sorted(scores, reverse=True)


def test_a_player_is_flagged_about_where_its_excess_reaches_what_it_needed(room: tuple) -> None:
    """Assist.needed: one player's ambiguous decisions turned into agreements one by one (its clear ones, its
    skill, untouched); the player is first flagged where its excess over the line reaches the excess it needed,
    within 5% (the Bernoullis' skew, which needed leaves out, and the line's own move, the player being in it:
    measured 1-2% on five players)."""
    _, labels, rows = room
    player = sorted(labels["players"])[2]
    turnable = [
        i
        for i, r in enumerate(rows)
        if r.player == player and not r.agreed and (c := cell(r)) is not None and c[1] <= len(BANDS)
    ]
    assert len(turnable) > 50

    def judged(k: int) -> Assist:
        changed = set(turnable[:k])
        out = [dataclasses.replace(r, agreed=True) if i in changed else r for i, r in enumerate(rows)]
        return next(a for a in screen(out, evidence=0) if a.player == player)

    low, high = 0, len(turnable)
    assert not judged(low).flagged and judged(high).flagged
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if judged(mid).flagged else (mid, high)
    below, at = judged(low), judged(high)
    for a in (below, at):
        assert a.needed is not None and a.agreement is not None and a.expected is not None
    assert below.agreement - below.expected < 1.05 * below.needed
    assert at.agreement - at.expected > 0.95 * at.needed
    # the room's reach: every tested player's needed, and the least share of first choices that could give it
    room = tally(rows, evidence=0)
    seen = reach(room, judge(room))
    assert seen.tested == 8 and seen.needed_min is not None and seen.needed_max is not None
    assert seen.needed_min <= (seen.needed_median or 0) <= seen.needed_max
    assert reach({}, []) == Reach(0, None, None, None)


def test_the_follower_share_of_the_reach_is_where_a_planted_player_starts_to_be_flagged(room: tuple) -> None:
    """Reach.shares: the least share of its decisions on which a player, taking the reference policy's first
    choice, would be flagged alone (found on its expected tallies). Planted for real on the rows (each non-forced
    decision turned into an agreement with that chance, five seeds), the player is flagged at the share + 0.15
    and not at the share − 0.15 (measured on all 8 players: 0 of 10 seeds below, 8–10 of 10 above)."""
    from pipeline.audit.assist import _follower_share

    _, labels, rows = room
    room_tallies = tally(rows, evidence=0)
    for player in sorted(labels["players"])[0:6:2]:
        share = _follower_share(room_tallies, player, 0.05)
        assert share is not None and 0.15 < share < 0.85

        def flags(p: float, player: str = player) -> int:
            hits = 0
            for k in range(5):
                rng = random.Random(k)
                planted = [
                    dataclasses.replace(r, agreed=True)
                    if r.player == player and r.non_forced and rng.random() < p
                    else r
                    for r in rows
                ]
                hits += next(a.flagged for a in screen(planted, evidence=0) if a.player == player)
            return hits

        assert flags(share - 0.15) == 0 and flags(share + 0.15) >= 4, player
    # the reach probes players across the room's skill, and its median is one of their shares
    seen = reach(room_tallies, judge(room_tallies))
    assert len(seen.shares) >= 3 and seen.share_median in seen.shares.values()


def test_the_screen_reads_its_rows_once_and_the_workers_give_the_same_rows(room: tuple) -> None:
    wh, _, rows = room
    with connect(wh) as con:
        hands = decision_hands(con)[:30]
    missing: list[Missing] = []
    one = Counter(decision_rows(hands, missing))
    two = Counter(decision_rows(hands, missing, workers=2))
    assert one == two and missing == []
    assert screen(iter(rows)) == screen(rows)


def test_each_hand_offers_its_heaviest_agreed_decision_of_a_kind_and_band_whatever_the_order(room: tuple) -> None:
    """The evidence a cell keeps: the best of its hands' candidates (at most one a hand, kind and band: the
    heaviest agreed, then the first), by weight, then hand, then event: the same whatever order the hands come
    in (a pool of workers returns them as they finish; the stored counts are read in another), and so are all the
    figures."""
    _, _, rows = room
    by_hand: dict[str, list[DecisionRow]] = {}
    for r in rows:
        by_hand.setdefault(r.hand_id, []).append(r)
    for hand in list(by_hand.values())[:40]:
        for c in hand_cells(hand):
            mine = [r for r in hand if (r.player, r.kind, stored_band(r)) == (c.player, c.kind, c.band)]
            assert c.n == len(mine) and c.agreed == sum(r.agreed for r in mine)
            assert math.isclose(c.wa, sum(r.weight for r in mine if r.agreed))
            agreed_ = [r for r in mine if r.agreed and r.weight > 0]
            if not agreed_:
                assert c.top is None
                continue
            heaviest = max(r.weight for r in agreed_)
            first = next(r for r in agreed_ if r.weight == heaviest)
            assert c.top is not None and (c.top.weight, c.top.event) == (heaviest, first.event)
    order = list(by_hand)
    random.Random(3).shuffle(order)
    shuffled = [r for h in order for r in by_hand[h]]
    a, b = screen(rows), screen(shuffled)
    assert a == b  # every figure and every evidence to the last bit: sums in whole units, players in a fixed order
    for x in a:  # evidence: never two of one hand in a cell
        seen = Counter((e.hand_id, e.kind, band(e.gap)) for e in x.evidence)
        assert all(k == 1 for k in seen.values())


def _same_screen(one: dict, two: dict) -> None:
    """Two `assist --format json` documents alike to the last bit (the weights summed in whole units: the same in
    any order), but for how many hands were read from the stored counts."""
    for x, y in zip(one["players"], two["players"], strict=True):
        assert x == y, [(k, x[k], y[k]) for k in x if x[k] != y[k]]
    assert {**one, "stored": 0} == {**two, "stored": 0}


def test_assist_reads_the_counts_review_stored_and_reviews_only_the_rest(room: tuple, tmp_path: Path) -> None:
    """After `xuezhan review`, assist reads each reviewed hand's counts back (decision_cells) instead of
    reviewing it, and reviews the others: the screen is the same as reviewing every hand (figures, flags,
    evidence, reach), with a review of part of the hands, of all of them, and with --per-player."""
    from cli import app

    wh = tmp_path / "wh"
    shutil.copytree(room[0], wh)
    runner = CliRunner()

    def doc(*args: str) -> dict:
        result = runner.invoke(app, ["assist", "--warehouse", str(wh), "--format", "json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    fresh, fresh_few = doc(), doc("--per-player", "40")
    since = "2000-01-01"  # a filter keeps every hand: the views are scoped, the stored counts read through them
    fresh_scoped = doc("--since", since)
    assert fresh["stored"] == 0
    one = sorted({p["player"] for p in fresh["players"]})[0]
    part = runner.invoke(app, ["review", "--warehouse", str(wh), "--player", one, "--quiet"])
    assert part.exit_code == 0, part.output
    mixed = doc()
    assert 0 < mixed["stored"] < mixed["hands"]
    _same_screen(fresh, mixed)
    assert runner.invoke(app, ["review", "--warehouse", str(wh), "--quiet"]).exit_code == 0
    stored, stored_few = doc(), doc("--per-player", "40")
    assert stored["stored"] == stored["hands"] == 240 and stored_few["stored"] == stored_few["hands"] < 240
    _same_screen(fresh, stored)
    _same_screen(fresh_few, stored_few)
    scoped = doc("--since", since)
    assert scoped["stored"] == scoped["hands"] == 240
    _same_screen(fresh_scoped, scoped)
    one = doc("--player", "p001")
    assert 0 < one["stored"] == one["hands"] < 240  # the hands p001 sat in, the others at them screened too
    assert doc("--fresh")["stored"] == 0
    with connect(wh) as con:
        assert decision_hands(con, skip_version=TALLY_VERSION) == []  # every hand stored: none left to review
        assert stored_room(con)[1] == len(decision_hands(con)) == 240
        screened = stored_screen(con)
        large = stored_screen(con, probed_room=len(screened.results) - 1)  # a room above the probed size
        cells = con.execute("SELECT sum(n), count(DISTINCT hand_id) FROM decision_cells").fetchone()
    assert (screened.reviewed, screened.reviewable) == (240, 240)
    # the daily loop's reach is assist's; in a room of more players than it probes, the excess needed only
    assert screened.reach is not None and screened.reach.as_dict() == stored["reach"]
    assert large.reach is not None and large.reach.shares == {} and large.results == screened.results
    assert large.reach.needed_median == screened.reach.needed_median
    assert [(a.player, a.p) for a in screened.results] == [(p["player"], p["p"]) for p in stored["players"]]
    assert cells == (len(room[2]), 240)  # every decision of every hand, counted once
    table = runner.invoke(app, ["assist", "--warehouse", str(wh)])
    assert "240 hands reviewed (240 of them by `xuezhan review`" in table.stdout


def test_counts_of_another_review_version_are_not_read(room: tuple, tmp_path: Path) -> None:
    """A hand the pass reviewed at another version (an older release's) is reviewed again by assist, not read:
    stored_room reads none of it, and decision_hands gives it back to review."""
    wh = tmp_path / "wh"
    shutil.copytree(room[0], wh)
    with connect(wh) as con:
        before = stored_screen(con)
    assert (before.results, before.reviewed, before.reviewable) == ([], 0, 240)  # nothing reviewed: no figures
    assert review_warehouse(wh).reviewed == 240
    with connect(wh) as con:
        assert stored_room(con)[1] == 240 and decision_hands(con, skip_version=TALLY_VERSION) == []
        assert stored_room(con, per_player=10)[1] == len(decision_hands(con, 10)) < 240
        assert stored_room(con, evidence=0)[0].keys() == {r.player for r in room[2]}
    from schemas import tables

    old = tables.TALLY_VERSION
    try:
        for module in (tables, tallies, assist):
            module.TALLY_VERSION = "0"  # type: ignore[attr-defined]
        with connect(wh) as con:
            assert stored_room(con) == ({}, 0) and len(decision_hands(con, skip_version="0")) == 240
            assert stored_screen(con).reviewable == 240
    finally:
        for module in (tables, tallies, assist):
            module.TALLY_VERSION = old  # type: ignore[attr-defined]


def test_the_review_loop_collects_less_often_and_puts_the_threshold_back(room: tuple) -> None:
    """decisions.REVIEW_GC_THRESHOLD: in force while a hand is reviewed (in the caller's process), never between
    hands (the caller's own work) nor after, nor after a record that fails; the worker processes keep it."""
    import gc

    from pipeline.audit import decisions

    wh, _, _ = room
    with connect(wh) as con:
        hands = decision_hands(con)[:3]
    seen: list[int] = []

    def each(hand_id: str, obj: dict) -> int:
        seen.append(gc.get_threshold()[0])
        if hand_id == hands[1].hand_id:
            raise decisions.RecordError("SCHEMA_FIELD", "a bad one")
        return 1

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, *before[1:])
        missing: list[Missing] = []
        between = [gc.get_threshold()[0] for _ in decisions.reviewed(hands, missing, each)]
        assert seen == [decisions.REVIEW_GC_THRESHOLD] * 3 and between == [700, 700]
        assert gc.get_threshold()[0] == 700 and [m.hand.hand_id for m in missing] == [hands[1].hand_id]
        with decisions.fewer_collections():
            with decisions.fewer_collections():  # nested: the outer's value is kept, then put back
                assert gc.get_threshold()[0] == decisions.REVIEW_GC_THRESHOLD
            assert gc.get_threshold()[0] == decisions.REVIEW_GC_THRESHOLD
        assert gc.get_threshold()[0] == 700
        decisions._review_worker()
        assert gc.get_threshold()[0] == decisions.REVIEW_GC_THRESHOLD
    finally:
        gc.set_threshold(*before)


def test_per_player_keeps_each_players_newest_hands(room: tuple) -> None:
    wh, _, _ = room
    with connect(wh) as con:
        every = decision_hands(con)
        few = decision_hands(con, 10)
        newest = con.execute(
            "SELECT player, list(hand_id ORDER BY played_at DESC, hand_id DESC)[1:10] FROM player_hands GROUP BY 1"
        ).fetchall()
    kept = {h.hand_id for h in few}
    assert 10 <= len(kept) < len(every)
    for _, ids in newest:
        assert set(ids) <= kept


# ------------------------------------------------------------------------------------------ xuezhan assist
def test_assist_formats(room: tuple) -> None:
    from cli import app

    wh, labels, _ = room
    runner = CliRunner()
    result = runner.invoke(app, ["assist", "--warehouse", str(wh), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["hands"] == 240 and doc["not_read"] == [] and doc["fdr"] == 0.05 and doc["per_player"] is None
    assert {p["player"] for p in doc["players"]} == set(labels["players"])
    assert not any(p["flagged"] for p in doc["players"]) and "not proof" in doc["meaning"]
    ev = next(e for p in doc["players"] for e in p["evidence"])
    assert ev["replay"] == f"xuezhan replay {ev['hand_id']} --warehouse {wh} --review"
    replay = runner.invoke(app, ["replay", ev["hand_id"], "--warehouse", str(wh), "--review"])
    assert replay.exit_code == 0 and "rank " in replay.stdout
    csv = runner.invoke(app, ["assist", "--warehouse", str(wh), "--format", "csv"])
    lines = csv.stdout.splitlines()
    head = "player,hands,decisions,non_forced,tested,weight,agreement,expected,clear_agreement,z,p,q,flagged,needed"
    assert lines[0] == head
    assert len(lines) == 1 + len(doc["players"]) and all(",false," in line for line in lines[1:])
    # what it can see: each tested player's needed excess, and the room's reach from them
    needed = [p["needed"] for p in doc["players"] if p["p"] is not None]
    assert needed and all(n > 0 for n in needed) and doc["reach"]["tested"] == len(needed)
    assert doc["reach"]["needed_min"] == min(needed) and doc["reach"]["needed_max"] == max(needed)
    assert all(p["needed"] is None for p in doc["players"] if p["p"] is None)
    table = runner.invoke(app, ["assist", "--warehouse", str(wh), "--per-player", "40", "--workers", "2"])
    assert table.exit_code == 0, table.output
    assert "each player's 40 newest" in table.stdout and "0 flagged at FDR 0.05" in table.stdout
    assert "a reason to look" in table.stdout
    assert "What it can see here" in table.stdout and "no evidence at this reach" in table.stdout
    scoped = runner.invoke(app, ["assist", "--warehouse", str(wh), "--table", "nosuch"])
    assert scoped.exit_code == 1  # nothing in scope


def test_the_evaluation_rooms_have_experts_and_seeds_of_their_own() -> None:
    from pipeline.evaluate import AssistPopulation, assist_grid

    pops = assist_grid(seed=1, hands=500, replicates=3, honest=4)
    assert all(isinstance(p, AssistPopulation) and p.hands == 1000 and p.players == 8 for p in pops)
    assert all(p.styles and p.styles.get("expert", 0) >= 0.3 for p in pops)  # the hard negatives, everywhere
    kinds = Counter((p.followers, p.evasive, p.calculator > 0) for p in pops)
    assert kinds == {(1, False, False): 3, (1, True, False): 3, (0, False, True): 3, (0, False, False): 4}
    assert len({p.seed for p in pops}) == len(pops)


def test_the_evaluation_rooms_can_be_larger_and_each_player_keeps_its_hands() -> None:
    from pipeline.evaluate import AssistPopulation, assist_grid

    eight = assist_grid(seed=1, hands=500, replicates=1, honest=1)
    big = assist_grid(seed=1, hands=500, replicates=1, honest=1, players=24)
    assert all(isinstance(p, AssistPopulation) and p.players == 24 and p.hands == 3000 for p in big)
    assert all("24 players" in p.name for p in big) and not any("players" in p.name for p in eight)
    assert [p.seed for p in big] == [p.seed for p in eight]  # the same rooms' seeds, other sizes
    assert {repr(p) for p in big}.isdisjoint(repr(p) for p in eight)  # so other cache keys
    with pytest.raises(ValueError, match="at least 4"):
        assist_grid(players=3)


def test_the_stored_bands_are_documented_as_the_screen_draws_them() -> None:
    """schemas/TABLES.md's decision_cells.band (written in schemas/tables.py, which imports no pipeline code)
    names the screen's band edges and its clear gap; changing them must change the words (and TALLY_VERSION)."""
    from schemas.tables import DECISION_CELLS

    doc = DECISION_CELLS.field("band").metadata[b"doc"].decode()
    assert f"edges {', '.join(str(b) for b in BANDS)}" in doc and f"{CLEAR_GAP} or more" in doc
    assert f"{len(BANDS) + 1} clear" in doc and f"{len(BANDS) + 2} a win" in doc


def test_the_daily_findings_list_a_player_the_stored_counts_flag(room: tuple, tmp_path: Path, monkeypatch) -> None:
    """The operator's loop: `xuezhan review` stores the counts (here one player's reviewed decisions turned into
    the reference's own choices, as if it had played them), `xuezhan findings` lists it as a finding without
    reviewing a hand, and a case opened on it packs its most telling hands."""
    from cli import app

    wh = tmp_path / "wh"
    shutil.copytree(room[0], wh)
    runner = CliRunner()
    follower = sorted({r.player for r in room[2]})[3]
    plain = tallies.rows_of
    monkeypatch.setattr(tallies, "rows_of", lambda *args: _crude(plain(*args), follower))
    other = sorted({r.player for r in room[2]})[0]
    part = runner.invoke(app, ["review", "--warehouse", str(wh), "--player", other, "--quiet"])
    assert part.exit_code == 0, part.output
    table = runner.invoke(app, ["findings", "--warehouse", str(wh)])
    assert "reviewable hands `xuezhan review` has reviewed: run it to screen the rest" in table.stdout
    assert 0 < review_warehouse(wh).reviewed < 240
    listed = runner.invoke(app, ["findings", "--warehouse", str(wh), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    found = next(r for r in json.loads(listed.stdout) if r["kind"] == "assist")
    assert found["key"] == f"assist:{follower}" and found["players"] == [follower] and found["status"] == "new"
    assert found["q"] <= 0.05 and "agreed with the reference policy on 1.000" in found["detail"]
    assert [r["kind"] for r in json.loads(listed.stdout)].count("assist") == 1
    table = runner.invoke(app, ["findings", "--warehouse", str(wh)])
    assert f"assist:{follower}" in table.stdout and "reviewable hands `xuezhan review` has reviewed" not in table.stdout
    # what the screen can see in this room, the line `xuezhan assist` prints: the same reach, from the same counts
    seen = json.loads(runner.invoke(app, ["assist", "--warehouse", str(wh), "--format", "json"]).stdout)["reach"]
    line = next(x for x in table.stdout.splitlines() if x.startswith("What the decision screens can see here"))
    assert f"agreement {seen['needed_median']:.3f} above" in line and f"of the {seen['tested']} tested" in line
    assert "No flag is no evidence at this reach" in line and "(xuezhan assist)" in line
    pack = tmp_path / "pack"
    opened = runner.invoke(
        app, ["case", "open", found["key"], "--warehouse", str(wh), "--reviewer", "ana", "--pack", str(pack)]
    )
    assert opened.exit_code == 0, opened.output
    assert "wrote the evidence pack" in opened.stdout and any(pack.iterdir())
    report = runner.invoke(app, ["report", "--warehouse", str(wh), "--out", str(tmp_path / "rep"), "--page", follower])
    assert report.exit_code == 0, report.output
    findings_json = json.loads((tmp_path / "rep" / "findings.json").read_text(encoding="utf-8"))
    assert [r["key"] for r in findings_json if r["kind"] == "assist"] == [f"assist:{follower}"]
    index = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert 'id="decision-reach"' in index and f"agreement {seen['needed_median']:.3f} above" in index
    page = next((tmp_path / "rep").glob(f"player-{follower}*.html")).read_text(encoding="utf-8")
    assert 'id="assist"' in page and "<b>flagged</b>: a reason to look" in page and "--review</code></li>" in page
