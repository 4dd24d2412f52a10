"""The turn metrics (issue 44 point 3; schemas/METRICS.md#turns): win turn, deal-in turn, ready turn, starting
shanten.

- On simulated rooms of several rule sets (blood battle, the exchange of three, blood flow, a table of three), the
  warehouse's ready turns (``player_hands.ready_turn``, worked out by the replay at ingest) and every player's base
  counts of the turn metrics (``player_base.sql``) equal a plain replay of the records' JSON
  (``tests/turns_oracle.py``: its own tile counting and winning-hand search).
- Hand-made hands with known turns: the hand state's count (``HandState.turns_begun``) through draws, a pong, each
  kind of kong and their replacement draws, and the replay's ready turn (``Evidence.ready_turn``) at the deal,
  after a discard, at a 天胡; and the SQL's turns on hand-written events (a replacement draw, a pong, a direct
  kong, a robbed kong, a 一炮多响 counted once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from test_analytics import table_rows
from test_game_edges import QUIET, deal, t
from turns_oracle import replay_turns

from pipeline.analytics import queries
from pipeline.game.evidence import Evidence
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import Warehouse
from pipeline.simulate.tables import SimConfig, write
from schemas.tables import TABLES

ROOMS = (
    SimConfig(hands=120, seed=3, players=8, profile="chengdu"),
    SimConfig(hands=100, seed=4, players=8, profile="app"),  # 换三张 and 定缺
    SimConfig(hands=80, seed=5, players=8, profile="xueliu"),  # blood flow: winners stay and win again
    SimConfig(hands=80, seed=6, players=6, profile="sanren_liangfang"),  # three seats, two suits
)


@pytest.fixture(scope="module", params=ROOMS, ids=[c.profile for c in ROOMS])
def room(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("turns")
    games = root / "games.jsonl"
    write(request.param, games)
    ingest([str(games)], root / "wh", workers=1)
    return root / "wh", [json.loads(line) for line in games.read_text().splitlines() if line.strip()]


def test_ready_turns_equal_a_plain_replay(room) -> None:
    warehouse, records = room
    with queries.connect(warehouse) as con:
        stored = {
            (h, s): (r, judged)
            for h, s, r, judged in con.execute(
                "SELECT hand_id, seat, ready_turn, ready_judged FROM player_hands JOIN hands USING (hand_id) "
                "WHERE hands.replayed"
            ).fetchall()
        }
    checked = ready = 0
    for obj in records:
        if (obj["hand_id"], 0) not in stored:
            continue  # a replay that stopped: its facts are partial
        for seat, facts in replay_turns(obj).items():
            turn, judged = stored[(obj["hand_id"], seat)]
            assert judged is True
            assert turn == facts["ready_turn"], (obj["hand_id"], seat)
            checked += 1
            ready += turn is not None
    assert checked > 200 and 0 < ready < checked


def test_base_counts_equal_a_plain_replay(room) -> None:
    """Every player's win, deal-in and ready turn counts (sum, sum of squares, n) as the plain replay gives them."""
    warehouse, records = room
    with queries.connect(warehouse) as con:
        replayed = {h for (h,) in con.execute("SELECT hand_id FROM hands WHERE replayed").fetchall()}
        base = {r["player"]: r for r in queries.player_base(con).iter_rows(named=True)}
    expected: dict[str, dict[str, int]] = {}
    for obj in records:
        if obj["hand_id"] not in replayed:
            continue
        for seat, facts in replay_turns(obj).items():
            e = expected.setdefault(obj["players"][seat], dict.fromkeys(COLUMNS, 0))
            if facts["win_turn"] is not None:
                e["win_turn_sum"] += facts["win_turn"]
                e["win_turn_sq"] += facts["win_turn"] ** 2
                e["win_turn_n"] += 1
            for turn in facts["deal_in_turns"]:
                e["deal_in_turn_sum"] += turn
                e["deal_in_turn_sq"] += turn * turn
                e["deal_in_turn_n"] += 1
            e["ready_judged"] += 1
            if facts["ready_turn"] is not None:
                e["ready_turn_sum"] += facts["ready_turn"]
                e["ready_turn_sq"] += facts["ready_turn"] ** 2
                e["ready_turn_n"] += 1
                e["ready_by_turn_6"] += facts["ready_turn"] <= 6
    assert {p: {c: base[p][c] for c in COLUMNS} for p in base} == expected
    assert sum(e["win_turn_n"] for e in expected.values()) > 20
    assert sum(e["deal_in_turn_n"] for e in expected.values()) > 10


COLUMNS = (
    "win_turn_sum",
    "win_turn_sq",
    "win_turn_n",
    "deal_in_turn_sum",
    "deal_in_turn_sq",
    "deal_in_turn_n",
    "ready_judged",
    "ready_turn_sum",
    "ready_turn_sq",
    "ready_turn_n",
    "ready_by_turn_6",
)


def test_the_stats_answer_carries_the_turn_metrics(room) -> None:
    warehouse, _ = room
    with queries.connect(warehouse) as con:
        answer = queries.stats(con)
    for p in answer["players"]:
        m = p["metrics"]
        for metric in ("win_turn", "deal_in_turn", "ready_turn", "starting_shanten"):
            if m[metric]["n"]:
                assert m[metric]["ci_low"] <= m[metric]["value"] <= m[metric]["ci_high"], (p["player"], metric)
        assert m["starting_shanten"]["n"] == m["ready_rate"]["den"] == p["hands"]
        assert 0 <= m["ready_by_turn_6_rate"]["value"] <= m["ready_rate"]["value"] <= 1
        assert "win_turn" in p["yardsticks"] and "ready_turn" in p["yardsticks"]
    assert answer["metrics"]["ready_turn"]["levels"] == {"full": answer["hands"]}


# ---------------------------------------------------------------------------------------------- hand-made
def test_turns_through_draws_a_pong_and_each_kong() -> None:
    """Seat 1 draws (turn 1), discards 9p; seat 2 pongs it (turn 1: a claim), discards 6p; seat 3 kongs that
    discard (turn 1) and draws its replacement (still turn 1); the dealer draws (turn 2), declares a concealed
    kong and draws its replacement (still turn 2)."""
    state = deal("1111m2357p2468s9s5s", "9p234567m8m11s3s7s9s", "99p6p4p8p1p3s5s7s2m4m99m", "666p55m9m3m88s77p4p1s")
    assert [state.turns_begun(s) for s in range(4)] == [1, 0, 0, 0]
    state.discard(0, t("5s"))
    state.draw(1, t("1p"))
    assert state.turns_begun(1) == 1
    state.discard(1, t("9p"))
    state.pong(2, t("9p"), 1)
    assert state.turns_begun(2) == 1
    state.discard(2, t("6p"))
    state.kong(3, t("6p"), "direct", 2)
    assert state.turns_begun(3) == 1  # the claim began its turn; the replacement is still to come
    state.draw(3, t("8m"))
    assert state.turns_begun(3) == 1
    state.discard(3, t("8m"))
    state.draw(0, t("3p"))
    assert state.turns_begun(0) == 2
    state.kong(0, t("1m"), "concealed")
    assert state.turns_begun(0) == 2
    state.draw(0, t("4p"))
    assert [state.turns_begun(s) for s in range(4)] == [2, 1, 1, 1]


def test_ready_turn_after_a_discard_and_from_the_deal() -> None:
    """Seat 1 is dealt ready (turn 0); the dealer's hand becomes ready with its second discard (turn 2); seats 2
    and 3 never are."""
    evidence = Evidence()
    state = deal("123m456m789m12p9p2s7s", "123m456m789m11p23p", QUIET[1], QUIET[2], observer=evidence)
    assert evidence.ready_turn == {1: 0}
    state.discard(0, t("2s"))  # 123m456m789m 12p9p 7s: not ready
    assert evidence.ready_turn == {1: 0}
    state.draw(1, t("9s"))
    state.discard(1, t("9s"))
    state.draw(2, t("5s"))
    state.discard(2, t("5s"))
    state.draw(3, t("3s"))
    state.discard(3, t("3s"))
    state.draw(0, t("9p"))
    state.discard(0, t("7s"))  # 123m456m789m 12p 99p: ready on 3p
    assert evidence.ready_turn == {1: 0, 0: 2}


def test_a_heavenly_win_is_ready_in_its_turn() -> None:
    """天胡: the dealer's fourteen tiles win before any discard: ready (and won) in turn 1."""
    evidence = Evidence()
    state = deal("123m456m789m123p55p", *QUIET, observer=evidence)
    assert 0 not in evidence.ready_turn  # fourteen tiles: not at rest
    state.hu(0, t("5p"), None)
    assert evidence.ready_turn[0] == 1


def test_an_observer_attached_after_the_deal_counts_turns_from_the_events() -> None:
    """Evidence given a state it did not see start (no start hook): its turn count starts from the events played."""
    state = deal("123m456m789m123p55p", *QUIET)
    late = Evidence()
    late.win(state, 0, len(state.events))
    assert late.ready_turn == {0: 1}


def test_a_void_suit_tile_keeps_a_hand_from_ready() -> None:
    """A hand one tile from a win by shape (123m456m789m 55s67s: 5s or 8s) is ready unless the suit of its pair is
    the void it declared (查叫 judges it so)."""
    for void, ready in ((2, False), (1, True)):
        evidence = Evidence()
        deal(QUIET[0] + "1p", "123m456m789m55s67s", QUIET[1], QUIET[2], observer=evidence, que=(2, void, 0, 1))
        assert (1 in evidence.ready_turn) is ready, void


# Hand-written events of one blood-battle hand (dealer seat 0), with each seat's turn after the event:
HAND_EVENTS = (
    ("discard", 0, None, None),  # s0 1
    ("draw", 1, None, None),  # s1 1
    ("discard", 1, None, None),
    ("pong", 2, None, 1),  # s2 1: a claim begins a turn
    ("discard", 2, None, None),
    ("kong", 3, "direct", 2),  # s3 1
    ("draw", 3, None, None),  # its replacement: s3 still 1
    ("discard", 3, None, None),
    ("draw", 0, None, None),  # s0 2
    ("kong", 0, "concealed", None),
    ("draw", 0, None, None),  # its replacement: s0 still 2
    ("discard", 0, None, None),  # won on by seats 1 and 2 (一炮多响): one deal-in, in turn 2
    ("hu", 1, None, 0),  # s1 wins in turn 1
    ("hu", 2, None, 0),  # s2 wins in turn 1
    ("draw", 3, None, None),  # s3 2
    ("discard", 3, None, None),
    ("draw", 0, None, None),  # s0 3
    ("discard", 0, None, None),
    ("draw", 3, None, None),  # s3 3
    ("kong", 3, "added", None),  # robbed by seat 0: a deal-in in turn 3
    ("hu", 0, None, 3),  # s0 wins in turn 3
)


def test_the_sql_counts_turns_from_the_events(tmp_path: Path) -> None:
    """The SQL's turns on hand-written events: replacement draws, a pong and a direct kong's claims, a 一炮多响 dealt
    in once, a robbed kong; and the tests' Polars twin (tests/oracle_frames.py) agrees."""
    import oracle_frames as frames
    from test_analytics import Hand, Seat, Win, same_frames, utc

    hand = Hand(
        "t1",
        utc(2024, 5, 1, 10),
        "chengdu",
        dealer=0,
        events=len(HAND_EVENTS),
        outcome="won_out",
        seats=(Seat("p1", "m", deal_ins=2), Seat("p2", "p", pongs=1), Seat("p3", "s"), Seat("p4", "m", deal_ins=1)),
        wins=(
            Win(12, 1, "discard", 0, 1, 1, 1, ("ping_hu",)),
            Win(13, 2, "discard", 0, 1, 1, 1, ("ping_hu",)),
            Win(20, 0, "rob_kong", 3, 2, 2, 2, ("ping_hu", "qiang_gang")),
        ),
        payments=(),
    )
    rows = table_rows((hand,))
    rows["events"] = [
        {"hand_id": "t1", "idx": i, "t": kind, "seat": seat, "player": f"p{seat + 1}", "kind": how, "source": source}
        for i, (kind, seat, how, source) in enumerate(HAND_EVENTS)
    ]
    with Warehouse(tmp_path) as wh:
        wh.write_batch("b1", {name: pa.Table.from_pylist(rows[name], schema=TABLES[name]) for name in TABLES})
    with queries.connect(tmp_path) as con:
        base = queries.player_base(con)
        same_frames(base, frames.player_base(tmp_path))
    got = {
        r["player"]: (r["win_turn_sum"], r["win_turn_n"], r["deal_in_turn_sum"], r["deal_in_turn_n"])
        for r in base.iter_rows(named=True)
    }
    assert got == {"p1": (3, 1, 2, 1), "p2": (1, 1, 0, 0), "p3": (1, 1, 0, 0), "p4": (0, 0, 3, 1)}


def test_a_warehouse_without_stored_turns_counts_them_from_its_events(room, tmp_path: Path) -> None:
    """Wins stored before wins.turn and wins.source_turn (an older ingest): player_base.sql counts the turns from the
    events instead, to the same figures."""
    import shutil

    import pyarrow.parquet as pq

    warehouse, _ = room
    copy = tmp_path / "wh"
    shutil.copytree(warehouse, copy)
    for part in (copy / "wins").glob("*.parquet"):
        pq.write_table(pq.read_table(part).drop_columns(["turn", "source_turn"]), part)
    with queries.connect(warehouse) as con:
        stored = queries.player_base(con)
    with queries.connect(copy, warn=False) as con:
        assert con.execute("SELECT count(turn) FROM wins").fetchall() == [(0,)]
        counted = queries.player_base(con)
    assert stored.to_dicts() == counted.to_dicts()
