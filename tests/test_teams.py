"""The team screen (issue 22 item 1, pipeline/audit/teams.py): the relabelling null's moments against brute
force, the empirical null, and the screen on simulated rooms with and without a team of three."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from rooms import simulated_room
from teams_oracle import add_group
from typer.testing import CliRunner

from cli import app
from pipeline.analytics.queries import connect
from pipeline.audit.collusion import FEATURES, SIGNALS, Fit, Rows, WarehouseSource, by_signal, expected_counts
from pipeline.audit.teams import (
    GroupMoments,
    TeamResult,
    _screen_teams,
    _with_q,
    candidate_groups,
    empirical_null,
    group_scores,
)
from pipeline.audit.victims import victim_view

K = len(SIGNALS)


def _rows(rng: np.random.Generator, hands: int, players: int = 6) -> Rows:
    """Random directed rows of ``hands`` four-seat hands among ``players``, in the screen's order."""
    parts = []
    for h in range(hands):
        seated = rng.choice(players, size=4, replace=False)
        for sa in range(4):
            for sx in range(4):
                if sa != sx:
                    parts.append((h, sa, sx, seated[sa], seated[sx]))
    arr = np.array(parts)
    n = len(arr)
    counts = rng.poisson(0.6, size=(n, len(FEATURES))).astype(float)
    exposures = rng.uniform(0.2, 1.5, size=(n, len(FEATURES)))
    return Rows(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], arr[:, 4], counts, exposures, np.zeros(n, dtype=np.int64))


def _fit(players: int, rng: np.random.Generator) -> Fit:
    f = len(FEATURES)
    return Fit(rng.uniform(0.3, 0.9, (f, players)), rng.uniform(0.3, 0.9, (f, players)), np.full(f, 0.5))


def _brute(
    rows: Rows, fit: Fit, team: tuple[int, ...], partners: set[tuple[int, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """The relabelling null by enumeration: per (hand, member a), every way of choosing which m of a's opponents
    are the members, equally likely; the observed sum less the mean of those sums, and their variance."""
    residual = by_signal(rows.counts) - by_signal(expected_counts(rows, fit))
    excess, cov = np.zeros(K), np.zeros((K, K))
    for h in np.unique(rows.hand):
        for a in team:
            at = np.flatnonzero((rows.hand == h) & (rows.a == a))
            at = [i for i in at if (a, int(rows.x[i])) not in partners or rows.x[i] in team]
            if not at:
                continue
            members = [i for i in at if rows.x[i] in team]
            m, n = len(members), len(at)
            if m == 0 or m == n:
                continue
            sums = np.array([residual[list(c)].sum(axis=0) for c in combinations(at, m)])
            excess += residual[members].sum(axis=0) - sums.mean(axis=0)
            centred = sums - sums.mean(axis=0)
            cov += centred.T @ centred / len(sums)
    return excess, cov


@pytest.mark.parametrize("team", [(0, 1), (0, 1, 2), (1, 3, 5)])
def test_the_group_null_is_the_relabelling_s_exact_mean_and_variance(team: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(team) + sum(team))
    rows, fit = _rows(rng, 40), _fit(6, rng)
    moments = GroupMoments.zeros([team])
    moments.add(rows, fit, 6)
    excess, cov = _brute(rows, fit, team, set())
    assert np.allclose(moments.excess[0], excess) and np.allclose(moments.var[0], np.diag(cov))


def _mixed_rows(rng: np.random.Generator, hands: int, players: int = 6, tables: list[list[int]] | None = None) -> Rows:
    """Like :func:`_rows`, but at tables of two, three and four seats: blocks of one, two and three opponents
    (``tables``: the players of each hand, instead of drawn)."""
    parts = []
    for h in range(hands if tables is None else len(tables)):
        seated = rng.choice(players, size=int(rng.integers(2, 5)), replace=False) if tables is None else tables[h]
        parts += [
            (h, sa, sx, seated[sa], seated[sx]) for sa in range(len(seated)) for sx in range(len(seated)) if sa != sx
        ]
    arr = np.array(parts)
    n = len(arr)
    counts = rng.poisson(0.6, size=(n, len(FEATURES))).astype(float)
    exposures = rng.uniform(0.2, 1.5, size=(n, len(FEATURES)))
    return Rows(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], arr[:, 4], counts, exposures, np.zeros(n, dtype=np.int64))


def _per_group(rows: Rows, fit: Fit, groups: list[tuple[int, ...]], players: int) -> GroupMoments:
    """The moments group by group, each (hand, member) block computed for the group (the loop the screen ran
    before it summed groups of two and three from per-pair sums): the reference."""
    out = GroupMoments.zeros(groups)
    raw = by_signal(rows.counts)
    expected = by_signal(expected_counts(rows, fit))
    member = np.zeros(players, dtype=bool)
    for g, team in enumerate(groups):
        add_group(out, g, team, rows, raw - expected, raw, expected, member, None)
    return out


def test_groups_summed_from_pair_sums_equal_the_group_by_group_loop_at_every_table_size() -> None:
    """Groups of two, three (from the per-pair and per-(member, two opponents) sums) and four (the incidence
    batches) against the reference loop, over runs read one at a time: tables of two seats make blocks where
    every opponent is a member (m = n, no contrast), and a run where a group has no live block adds nothing."""
    rng = np.random.default_rng(23)
    players = 6
    fit = _fit(players, rng)
    groups = [g for size in (2, 3, 4) for g in combinations(range(players), size)]
    fast, reference = GroupMoments.zeros(groups), GroupMoments.zeros(groups)
    # a run of two hands, (0, 1) alone and (2, 3, 4) alone: their groups' rows are all members (no live block),
    # and add nothing, not even their hands; (2, 3) has a live block there
    for hands, tables in ((50, None), (2, [[0, 1], [2, 3, 4]]), (30, None)):
        rows = _mixed_rows(rng, hands, players, tables)
        fast.add(rows, fit, players)
        ref = _per_group(rows, fit, groups, players)
        for name in ("excess", "var", "draws", "raw", "expected", "hands"):
            getattr(reference, name)[...] += getattr(ref, name)
    for name in ("excess", "var", "draws", "raw", "expected", "hands"):
        assert np.allclose(getattr(fast, name), getattr(reference, name), rtol=1e-12, atol=1e-12), name
    assert fast.hands.min() > 0 and np.array_equal(fast.draws, reference.draws)


def test_the_group_null_holds_at_tables_of_three_seats() -> None:
    rng = np.random.default_rng(5)
    rows, fit = _mixed_rows(rng, 60), _fit(6, rng)
    for team in [(0, 1), (0, 1, 2)]:
        moments = GroupMoments.zeros([team])
        moments.add(rows, fit, 6)
        excess, cov = _brute(rows, fit, team, set())
        assert np.allclose(moments.excess[0], excess) and np.allclose(moments.var[0], np.diag(cov))


def test_a_found_team_s_partners_are_left_out_of_a_member_s_opponents() -> None:
    """Player 0 is in a team found with 4 and 5: in the group (0, 1, 2) its draws are over its opponents but
    4 and 5; player 1's are over all of its own."""
    rng = np.random.default_rng(9)
    rows, fit = _rows(rng, 60), _fit(6, rng)
    partners = np.array(sorted(a * 6 + b for a in (0, 4, 5) for b in (0, 4, 5)))  # the team's pairs, as keys
    moments = GroupMoments.zeros([(0, 1, 2)])
    moments.add(rows, fit, 6, partners)
    excess, cov = _brute(rows, fit, (0, 1, 2), {(a, b) for a in (0, 4, 5) for b in (0, 4, 5)})
    assert np.allclose(moments.excess[0], excess) and np.allclose(moments.var[0], np.diag(cov))
    plain = GroupMoments.zeros([(0, 1, 2)])
    plain.add(rows, fit, 6)
    assert not np.allclose(plain.excess[0], excess)


def test_groups_leaving_out_found_teams_partners_equal_the_group_by_group_loop() -> None:
    """With two teams found ((0, 4, 5) and the pair (2, 6)), every group of two, three and four of seven players
    (those leaving out the same (member, partner) rows taken together on the run without them) against the
    reference loop leaving each group's own rows out, at tables of two to four seats, over runs read one at a
    time."""
    rng = np.random.default_rng(31)
    players = 7
    fit = _fit(players, rng)
    teams = [(0, 4, 5), (2, 6)]
    partners = np.array(sorted(a * players + b for t in teams for a in t for b in t if a != b))
    groups = [g for size in (2, 3, 4) for g in combinations(range(players), size)]
    fast, reference, plain = (GroupMoments.zeros(groups) for _ in range(3))
    for hands in (60, 1, 40):
        rows = _mixed_rows(rng, hands, players)
        fast.add(rows, fit, players, partners)
        plain.add(rows, fit, players)
        raw = by_signal(rows.counts)
        expected = by_signal(expected_counts(rows, fit))
        linked = np.isin(rows.a * players + rows.x, partners)
        for g, team in enumerate(groups):
            add_group(reference, g, team, rows, raw - expected, raw, expected, np.zeros(players, dtype=bool), linked)
    for name in ("excess", "var", "draws", "raw", "expected", "hands"):
        assert np.allclose(getattr(fast, name), getattr(reference, name), rtol=1e-12, atol=1e-12), name
    assert np.array_equal(fast.draws, reference.draws) and np.array_equal(fast.hands, reference.hands)
    # the groups holding part of a team leave rows out (their moments differ from the plain run's); the others
    # (no member of a team, or a whole team with nobody else partnered) are the plain run's
    parted = [any(0 < len(set(team) & set(t)) < len(t) for t in teams) for team in groups]
    assert sum(parted) > 50
    for g, part in enumerate(groups):
        same = np.allclose(fast.var[g], plain.var[g], rtol=1e-12, atol=1e-12)
        assert same != parted[g], part


def _as_fitted(rows: Rows, fit: Fit, rng: np.random.Generator) -> Rows:
    """``rows`` with counts drawn from what ``fit`` expects of them: the null holds for every group."""
    counts = rng.poisson(expected_counts(rows, fit)).astype(float)
    return Rows(**{**{f: getattr(rows, f) for f in Rows.__slots__}, "counts": counts})


def test_a_group_whose_members_feed_each_other_scores_high_and_a_random_one_does_not() -> None:
    rng = np.random.default_rng(4)
    fit = _fit(6, rng)
    rows = _as_fitted(_rows(rng, 400), fit, rng)
    team = np.isin(rows.a, [0, 1, 2]) & np.isin(rows.x, [0, 1, 2])
    fed = rows.counts.copy()
    fed[team, FEATURES.index("feed_win")] += rng.poisson(0.8, size=int(team.sum()))
    moments = GroupMoments.zeros([(0, 1, 2), (3, 4, 5)])
    moments.add(Rows(**{**{f: getattr(rows, f) for f in Rows.__slots__}, "counts": fed}), fit, 6)
    team_score, other = group_scores(moments)
    assert team_score > 5 and abs(other) < 3


def test_a_signal_running_the_wrong_way_does_not_cancel_the_feeding() -> None:
    """Issue 37: a team that feeds its members but otherwise keeps clear of them (no dangerous discard by choice
    toward a member) is scored on its feeding. Summed with their signs, the dangerous discards' deficit took the
    feeding's evidence away; the group's score is the largest one-sided z, Šidák-corrected."""
    rng = np.random.default_rng(4)
    fit = _fit(6, rng)
    rows = _as_fitted(_rows(rng, 400), fit, rng)
    team = np.isin(rows.a, [0, 1, 2]) & np.isin(rows.x, [0, 1, 2])
    fed = rows.counts.copy()
    fed[team, FEATURES.index("feed_win")] += rng.poisson(0.5, size=int(team.sum()))
    fed[team, FEATURES.index("chosen_danger")] = 0
    moments = GroupMoments.zeros([(0, 1, 2)])
    moments.add(Rows(**{**{f: getattr(rows, f) for f in Rows.__slots__}, "counts": fed}), fit, 6)
    feeding, dangerous = (list(SIGNALS).index(s) for s in ("feeding", "dangerous"))
    z = moments.excess[0] / np.sqrt(moments.var[0])
    assert z[feeding] > 5 and z[dangerous] < -3  # the deficit is there, and large
    assert group_scores(moments)[0] > 4.5


def test_a_colluding_pair_with_an_honest_third_is_the_pair_not_a_team() -> None:
    rng = np.random.default_rng(6)
    fit = _fit(6, rng)
    rows = _as_fitted(_rows(rng, 600), fit, rng)
    pair = np.isin(rows.a, [0, 1]) & np.isin(rows.x, [0, 1])
    fed = rows.counts.copy()
    fed[pair, FEATURES.index("feed_win")] += rng.poisson(0.8, size=int(pair.sum()))
    groups = [(0, 1), (0, 1, 2), (0, 1, 3), (2, 3, 4)]
    moments = GroupMoments.zeros(groups)
    moments.add(Rows(**{**{f: getattr(rows, f) for f in Rows.__slots__}, "counts": fed}), fit, 6)
    scores = group_scores(moments)
    assert scores[0] > 5 and scores[0] > max(scores[1], scores[2])
    names = [tuple(f"p{i}" for i in g) for g in groups]
    results = [TeamResult(n, 100, float(v), 1.0, 1.0, False, {}) for n, v in zip(names, scores, strict=True)]
    assert [r.players for r in _with_q(results, 0.05) if r.reported] == [("p0", "p1")]


def test_end_of_the_wall_money_alone_does_not_make_a_team() -> None:
    """The 查叫 / 花猪 money among three players is reported, not scored (GROUP_SIGNALS: three novices pay each
    other far more than the rates say, honestly)."""
    rng = np.random.default_rng(5)
    fit = _fit(6, rng)
    rows = _as_fitted(_rows(rng, 400), fit, rng)
    team = np.isin(rows.a, [0, 1, 2]) & np.isin(rows.x, [0, 1, 2])
    paid = rows.counts.copy()
    paid[team, FEATURES.index("channel")] += rng.poisson(0.8, size=int(team.sum()))
    moments = GroupMoments.zeros([(0, 1, 2)])
    moments.add(Rows(**{**{f: getattr(rows, f) for f in Rows.__slots__}, "counts": paid}), fit, 6)
    channel = list(SIGNALS).index("channel")
    assert moments.excess[0, channel] / np.sqrt(moments.var[0, channel]) > 5
    assert abs(group_scores(moments)[0]) < 3


def test_the_empirical_null_only_makes_the_screen_more_cautious() -> None:
    assert empirical_null(np.zeros(30)) == (0.0, 1.0)  # no spread: the theoretical null
    assert empirical_null(np.full(30, -3.0)) == (0.0, 1.0)  # never centred below 0
    centre, scale = empirical_null(np.random.default_rng(1).normal(1.0, 2.0, 400))
    assert centre == pytest.approx(1.0, abs=0.3) and scale == pytest.approx(2.0, abs=0.3)
    assert empirical_null(np.arange(19.0)) == (0.0, 1.0)  # too few groups


def test_a_group_sharing_a_pair_with_a_better_one_is_not_reported() -> None:
    def r(players: tuple[str, ...], score: float) -> TeamResult:
        return TeamResult(players, 100, score, 1.0, 1.0, False, {})

    out = _with_q(
        [r(("a", "b", "c"), 9.0), r(("a", "b", "d"), 8.0), r(("a", "e", "f"), 7.0), r(("e", "f", "g"), 0.1)], 0.05
    )
    assert [(t.players, t.flagged, t.reported) for t in out] == [
        (("a", "b", "c"), True, True),
        (("a", "b", "d"), True, False),
        (("a", "e", "f"), True, True),
        (("e", "f", "g"), False, False),
    ]


def test_a_team_of_three_is_reported_as_a_team(team_room: tuple[Path, dict[str, object]]) -> None:
    warehouse, labels = team_room
    (planted,) = [tuple(sorted(c["players"])) for c in labels["colluders"]]  # type: ignore[union-attr]
    with connect(warehouse) as con, WarehouseSource(con) as source:
        read = source.chunks
        passes = []

        def counted() -> object:
            passes.append(1)
            return read()

        source.chunks = counted  # type: ignore[method-assign]
        results = _screen_teams(source, min_hands=150)
        groups = candidate_groups(source.sums, 3, 150)
    assert len(groups) == 56 and len(candidate_groups(source.sums, 2, 150)) == 28  # all sat together enough
    # issue 45: a pass a round of the forward selection, the teams' own judgements in it (a pass a team before)
    assert len(passes) == 2
    reported = [r for r in results if r.reported]
    assert [r.players for r in reported] == [planted]  # not one of its pairs: the three score better
    team = reported[0]
    assert team.q <= 0.05 and team.signals["feeding"]["z"] > 3
    assert team.signals["feeding"]["observed"] > team.signals["feeding"]["expected"]
    # a group sharing a pair with the team is explained by it: not tested again
    assert all(len(set(r.players) & set(planted)) < 2 for r in results if r is not team)
    threes = [r for r in results if len(r.players) == 3]
    assert len(threes) == 1 + 10 + 3 * 10  # the team, the groups of honest players, those with one teammate
    assert len(results) - len(threes) == 28 - 3  # the pairs but the team's own


def test_an_honest_room_reports_no_team(tmp_path: Path) -> None:
    warehouse, _ = simulated_room(tmp_path, "friends=1", 7, 900)
    with connect(warehouse) as con, WarehouseSource(con) as source:
        results = _screen_teams(source, min_hands=150)
    assert len(results) > 30 and not any(r.flagged or r.reported for r in results)


def test_the_collusion_command_prints_the_team_its_evidence_and_the_victim_view(
    team_room: tuple[Path, dict[str, object]],
) -> None:
    warehouse, labels = team_room
    (planted,) = [sorted(c["players"]) for c in labels["colluders"]]  # type: ignore[union-attr]
    out = CliRunner().invoke(app, ["collusion", "--warehouse", str(warehouse), "--min-hands", "150", "--quiet"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert any(line.startswith("groups of three screened as groups: ") and "1 team reported" in line for line in lines)
    (team,) = [i for i, line in enumerate(lines) if line.startswith(f"team: {' & '.join(planted)}  ")]
    assert "won" in lines[team + 1] and lines[team + 1].startswith("      ")  # a hand to replay
    # the team is named once: its flagged pairs join it too, but the group screen's line already says so
    named = " & ".join(planted)
    assert [line for line in lines if named in line and not line.startswith("victim")] == [lines[team]]
    assert any(line.startswith("victims (") for line in lines)
    with connect(warehouse) as con:
        victims = victim_view(con, teams=[tuple(planted)], min_hands=150)
    # every player outside the team has its line with the team, and none of the team has one
    assert {v.player for v in victims if v.teams} == set(labels["players"]) - set(planted)  # type: ignore[arg-type]
