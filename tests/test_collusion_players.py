"""Issue 23 item 3: the pair screen's memory follows the pairs that shared hands, not the players squared. A
club of thousands of players shares hands in a small part of its players² pairs: the per-pair sums, the null's
moments and the team and victim screens hold those pairs only, and their results are the one-shot model's."""

from __future__ import annotations

import gzip
import tracemalloc
from itertools import combinations
from pathlib import Path

import numpy as np
import orjson
import pytest
from teams_oracle import add_group
from test_audit import _oracle_screen, _same_results

from pipeline.analytics.queries import connect
from pipeline.audit.collusion import (
    FEATURES,
    SIGNALS,
    Moments,
    PairSums,
    WarehouseSource,
    pair_features,
    screened_pairs,
)
from pipeline.audit.screen import screen
from pipeline.audit.teams import candidate_groups
from pipeline.audit.victims import victim_view
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write


def _relabelled(tmp: Path, source: Path, key: str) -> Path:
    """The warehouse of ``source``'s records with every player renamed per ``key`` of the record (its hand or its
    session): a room of a few players becomes a club of many who meet at one table only."""
    out = tmp / f"by-{key}.jsonl.gz"
    with gzip.open(source, "rb") as f, gzip.open(out, "wb") as g:
        for line in f:
            obj = orjson.loads(line)
            obj["players"] = [f"{p}-{obj[key]}" for p in obj["players"]]
            g.write(orjson.dumps(obj) + b"\n")
    ingest([str(out)], tmp / f"wh-{key}", workers=1)
    return tmp / f"wh-{key}"


@pytest.fixture(scope="module")
def rooms(tmp_path_factory) -> dict[str, Path]:
    """The room of test_audit's streamed screen (6 players, 500 hands, a pair colluding at 0.5: two pairs flagged),
    and the same hands with the players renamed per session of 8 hands (252 players) and per hand (2,000
    players)."""
    tmp = tmp_path_factory.mktemp("players")
    records = tmp / "room.jsonl.gz"
    write(SimConfig(hands=500, seed=31, players=6, inject=InjectSpec.parse("collude=1:0.5")), records)
    ingest([str(records)], tmp / "wh-room", workers=1)
    return {
        "room": tmp / "wh-room",
        "session": _relabelled(tmp, records, "session_id"),
        "hand": _relabelled(tmp, records, "hand_id"),
    }


@pytest.mark.parametrize("room, min_hands", [("room", 100), ("session", 6)])
def test_the_screen_on_a_population_is_the_one_shot_model(rooms, room, min_hands) -> None:
    """The sparse screen (pairs that shared hands only) gives what the one-shot model of the whole frame gives:
    the same pairs in the same order, the same z, p, q and flags, on the room and on 252 players who meet at
    one table each (many pairs screened: the pairs that sat a session together)."""
    with connect(rooms[room]) as con:
        want = _oracle_screen(pair_features(con), min_hands=min_hands)
        assert len(want) >= (3 if room == "room" else 50)
        assert any(r.flagged for r in want) or room != "room"  # the second pass and the re-judgements run
        for size in (37, 10**6):
            _same_results(list(screen(con, min_hands=min_hands, evidence=0, chunk_hands=size).pairs), want)


def test_many_players_cost_the_pairs_they_formed_not_players_squared(rooms) -> None:
    """2,000 players, each at one hand: 3,000 pairs shared a hand of the 2 million pairs of players. The sums
    hold those (both directions: 6,000 rows), the null's moments the pairs screened, and the whole
    screen, teams and victims included, stays within a few megabytes (players² sums by wall were 2,000² × 256
    floats: 8 GB, the moments' covariances 2,000² × 16 floats: 510 MB)."""
    with connect(rooms["hand"]) as con:
        tracemalloc.start()
        try:
            with WarehouseSource(con) as source:
                sums = source.sums
                players = len(sums.players)
                assert players == 2_000
                assert len(sums.a) == 500 * 12 and sums.counts.shape == (500 * 12, len(FEATURES))
                pairs = screened_pairs(sums, 1)
                assert len(pairs) == 500 * 6
                assert Moments.zeros(pairs, players).cov.shape == (3_000, len(SIGNALS), len(SIGNALS))
                assert len(screened_pairs(sums, 2)) == 0  # no pair met twice
                screened = screen(source, con=con, min_hands=1, evidence=0, teams=True)
                results, teams = list(screened.pairs), list(screened.groups)
            victims = victim_view(con, min_hands=1)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    # one hand a pair: no signal varies in five hands, nothing to judge; every player is somebody's opponent
    assert results == [] and len(victims) == 2_000
    assert all(len(t.players) in (2, 3) for t in teams)
    assert peak < 150 * 2**20, peak / 2**20


def test_candidate_groups_are_every_linked_combination_in_order() -> None:
    """The groups grown from common neighbours are those of trying every combination of the linked players
    (what candidate_groups did, a billion groups of three for 2,000 players), in the same order."""
    rng = np.random.default_rng(23)
    players = 40
    a, x = np.triu_indices(players, 1)
    hands = rng.integers(0, 12, len(a))
    sums = PairSums(
        players=tuple(f"p{k:02d}" for k in range(players)),
        a=np.r_[a, x],
        x=np.r_[x, a],
        rows=np.r_[hands, hands],
        hands=np.r_[hands, hands],
        counts=np.zeros((2 * len(a), 6)),
        exposures=np.zeros((2 * len(a), 6)),
    )
    for min_hands in (6, 9):
        linked = {(int(i), int(j)) for i, j, h in zip(a, x, hands, strict=True) if h >= min_hands}
        nodes = sorted({k for pair in linked for k in pair})
        for size in (2, 3, 4):
            want = [t for t in combinations(nodes, size) if all(pair in linked for pair in combinations(t, 2))]
            assert candidate_groups(sums, size, min_hands) == want, (min_hands, size)
            assert len(want) > 0


def test_groups_share_the_run_s_blocks_and_get_what_each_computed_alone() -> None:
    """Every group of a run without teams found reads the (hand, a) blocks computed once for the run (the
    report's team screen spent two thirds of its time recomputing them for each of 2,300 groups of 24 players);
    each group's moments are those of its blocks computed for it alone, to rounding."""
    from itertools import combinations as groups_of

    from test_teams import _fit, _rows

    from pipeline.audit.collusion import by_signal, expected_counts
    from pipeline.audit.teams import GroupMoments

    rng = np.random.default_rng(23)
    players = 9
    rows, fit = _rows(rng, 400, players), _fit(players, rng)
    groups = [*groups_of(range(players), 2), *groups_of(range(players), 3)]
    shared = GroupMoments.zeros(groups)
    shared.add(rows, fit, players)
    alone = GroupMoments.zeros(groups)
    expected = by_signal(expected_counts(rows, fit))
    raw = by_signal(rows.counts)
    for g, team in enumerate(groups):
        add_group(alone, g, team, rows, raw - expected, raw, expected, np.zeros(players, dtype=bool), None)
    for name in ("excess", "var", "draws", "raw", "expected", "hands"):
        got, want = getattr(shared, name), getattr(alone, name)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12), name
    assert (shared.draws == alone.draws).all() and (shared.hands == alone.hands).all()
    assert (shared.raw == alone.raw).all() and np.abs(shared.excess).sum() > 0
