"""The collusion screen's ``exchange`` signal (help before play, from player_hands' start facts) and its kong offers
(events.could_kong), issue 37.

Two choices are left to a player before the first discard, and both can help another seat without a tile
changing hands in play: which suit to give at 换三张 (each player "passes 3 tiles of one suit to another seat",
on the profiles that play it) and which suit to void ("打缺门，必须打掉其中一门", the first rules text). A partner
can be given the suit it collects, and two partners can split the suits. The facts are stored per seat
(``gave_to``, ``gift_fit``, ``void_over``) and checked here against the records themselves, computed again from
their JSON with nothing of the engine."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_rules_shanten_reference import reference_shanten

from pipeline.analytics.queries import connect
from pipeline.audit.screen import screen
from pipeline.ingest.run import ingest
from pipeline.rules.ruleset import load_ruleset
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

SUITS = "mps"
OFFSET = {"cw": -1, "ccw": 1, "across": 2}  # seat i gives to seat i + offset (docs: cw is the previous seat)


def _room(tmp: Path, spec: str, hands: int, players: int = 6, seed: int = 11) -> tuple[Path, Path, dict]:
    games = tmp / "games.jsonl.gz"
    labels = write(
        SimConfig(hands=hands, seed=seed, players=players, profile="app", inject=InjectSpec.parse(spec)), games
    )
    ingest([str(games)], tmp / "wh", workers=1)
    return games, tmp / "wh", labels.as_dict()


@pytest.fixture(scope="module")
def exchange_room(tmp_path_factory):
    """Six players on the app profile (it plays 换三张 and 定缺), one pair of the exchange family at 0.8."""
    return _room(tmp_path_factory.mktemp("exchange"), "cheat=exchange:1:0.8", hands=600)


def _facts_from_json(record: dict) -> dict[int, tuple[int, bool, int]]:
    """Per seat (gave_to, gift_fit, void_over) from the record's own fields: the deal (or the wall dealt), the
    exchange and the declared voids."""
    n, dealer = len(record["players"]), record["dealer"]
    deal = record.get("deal")
    if deal is None:
        wall = record["wall"]
        deal = [None] * n
        for k in range(n):
            deal[(dealer + k) % n] = wall[13 * k : 13 * k + 13]
        deal[dealer] = [*deal[dealer], wall[13 * n]]
    count = [[sum(1 for t in hand if t[-1] == s) for s in SUITS] for hand in deal]
    after = [list(c) for c in count]
    offset = OFFSET[record["exchange"]["direction"]] % n
    out = {}
    for seat, given in enumerate(record["exchange"]["given"]):
        to, suit = (seat + offset) % n, SUITS.index(given[0][-1])
        after[seat][suit] -= 3
        after[to][suit] += 3
        out[seat] = [to, count[to][suit] == max(count[to])]
    for seat in range(n):
        void = SUITS.index(record["que"][seat])
        out[seat].append(sum(1 << s for s in range(3) if after[seat][s] < after[seat][void]))
    return {seat: tuple(v) for seat, v in out.items()}


def test_start_facts_are_what_the_records_show(exchange_room) -> None:
    games, warehouse, _ = exchange_room
    expected = {}
    for line in gzip.decompress(games.read_bytes()).decode("utf-8").splitlines():
        record = json.loads(line)
        for seat, facts in _facts_from_json(record).items():
            expected[(record["hand_id"], seat)] = facts
    with connect(warehouse) as con:
        rows = con.execute("SELECT hand_id, seat, gave_to, gift_fit, void_over FROM player_hands").fetchall()
    stored = {(h, s): (g, f, v) for h, s, g, f, v in rows}
    assert stored == expected
    # the family shows in them: the members' gifts to each other fit more often, and they split their voids
    assert any(v for _, _, v in stored.values())


def test_an_exchange_pair_is_flagged_on_help_before_play(exchange_room) -> None:
    """A pair that gives each other the suit they collect and splits the voids is found on the exchange signal,
    the strongest of its signals (it feeds nothing in play), and no honest pair of the room is flagged."""
    _, warehouse, labels = exchange_room
    pair = tuple(sorted(labels["colluders"][0]["players"]))
    with connect(warehouse) as con:
        results = list(screen(con, min_hands=100, evidence=0).pairs)
    assert results[0].players == pair and results[0].flagged, [(r.players, r.q) for r in results[:3]]
    signals = results[0].signals
    assert max(signals, key=lambda s: signals[s]["z"]) == "exchange", signals
    assert signals["exchange"]["tested"] and signals["exchange"]["direction"] == "excess"
    assert not [r.players for r in results[1:] if r.flagged]


def test_a_room_without_the_exchange_expects_nothing_of_it(tmp_path) -> None:
    """The chengdu profile plays no 换三张, and honest bots void their shortest suit: the signal counts and
    expects nothing (never evidence by default)."""
    games = tmp_path / "games.jsonl.gz"
    write(SimConfig(hands=120, seed=3, players=5), games)
    ingest([str(games)], tmp_path / "wh", workers=1)
    with connect(tmp_path / "wh") as con:
        assert con.execute("SELECT count(gave_to), count(gift_fit) FROM player_hands").fetchone() == (0, 0)
        results = list(screen(con, min_hands=20, evidence=0).pairs)
    assert results and all(r.signals["exchange"]["observed"] == 0 for r in results)
    assert all(not r.signals["exchange"]["tested"] for r in results)


def test_a_warehouse_written_before_the_start_columns_is_screened_without_them(exchange_room, tmp_path) -> None:
    """A warehouse ingested before player_hands had gave_to, gift_fit and void_over: its views show the columns
    as nulls (every query naming them reads "unknown" instead of failing), and the screen runs, with the exchange
    signal counting and expecting nothing."""
    import shutil

    _, warehouse, _ = exchange_room
    old = tmp_path / "old"
    shutil.copytree(warehouse, old)
    for part in (old / "player_hands").glob("*.parquet"):
        table = pq.read_table(part)
        pq.write_table(table.drop_columns(["gave_to", "gift_fit", "void_over"]), part)
    with connect(old) as con:
        assert con.execute("SELECT count(*), count(gave_to), count(void_over) FROM player_hands").fetchone()[1:] == (
            0,
            0,
        )
        results = list(screen(con, min_hands=100, evidence=0).pairs)
    assert results and all(
        r.signals["exchange"]["expected"] == 0 and not r.signals["exchange"]["tested"] for r in results
    )


# ------------------------------------------------------------------------------------------ kong offers
def _held_from_json(record: dict):
    """Each event of a record with every seat's concealed tiles and melds just before it, counted from the record's
    own fields: the deal (or the wall dealt), the exchange, and every draw, discard, pong and kong."""
    n, dealer = len(record["players"]), record["dealer"]
    deal = record.get("deal")
    if deal is None:
        wall = record["wall"]
        deal = [wall[13 * k : 13 * k + 13] for k in range(n)]
        deal = [deal[(seat - dealer) % n] for seat in range(n)]
        deal[dealer] = [*deal[dealer], wall[13 * n]]
    held: list[dict[str, int]] = [{} for _ in range(n)]
    melds = [0] * n
    for seat, hand in enumerate(deal):
        for t in hand:
            held[seat][t] = held[seat].get(t, 0) + 1
    if "exchange" in record:
        offset = OFFSET[record["exchange"]["direction"]] % n
        for seat, given in enumerate(record["exchange"]["given"]):
            for t in given:
                held[seat][t] -= 1
                held[(seat + offset) % n][t] = held[(seat + offset) % n].get(t, 0) + 1
    for idx, e in enumerate(record["events"]):
        yield idx, e, held, melds
        seat, tile = e["seat"], e.get("tile")
        if e["t"] == "draw":
            held[seat][tile] = held[seat].get(tile, 0) + 1
        elif e["t"] == "discard":
            held[seat][tile] -= 1
        elif e["t"] == "pong":
            held[seat][tile] -= 2
            melds[seat] += 1
        elif e["t"] == "kong":
            held[seat][tile] -= {"direct": 3, "added": 1, "concealed": 4}[e["kind"]]
            melds[seat] += e["kind"] != "added"
        elif e["t"] == "hu" and e.get("from") is None:
            held[seat][tile] -= 1


def _kongable_from_json(record: dict) -> dict[int, list[int]]:
    """Per discard (event index), the other seats holding three of its tile concealed (:func:`_held_from_json`)."""
    n = len(record["players"])
    return {
        idx: [x for x in range(n) if x != e["seat"] and held[x].get(e["tile"], 0) == 3]
        for idx, e, held, _ in _held_from_json(record)
        if e["t"] == "discard"
    }


def _costs_from_json(record: dict, void_first: bool) -> dict[int, int]:
    """Per discard, how many steps (shanten, by the plain reference search of test_rules_shanten_reference) further
    from ready it left its discarder than the best discard it held: only the tiles of its void suit may go while
    it holds any, where ``void_first``."""
    out = {}
    for idx, e, held, melds in _held_from_json(record):
        if e["t"] != "discard":
            continue
        seat, tile = e["seat"], e["tile"]
        void = SUITS.index(record["que"][seat]) if record.get("que") else None
        counts = [0] * 27
        for t, c in held[seat].items():
            counts[SUITS.index(t[1]) * 9 + int(t[0]) - 1] += c
        kind = SUITS.index(tile[1]) * 9 + int(tile[0]) - 1
        voids = void is not None and any(counts[void * 9 : void * 9 + 9])
        choices = [k for k in range(27) if counts[k] and not (void_first and voids and k // 9 != void)]

        def after(k: int, counts: list[int] = counts, melds: int = melds[seat], void: int | None = void) -> int:
            rest = list(counts)
            rest[k] -= 1
            return reference_shanten(rest, melds, void)

        out[idx] = after(kind) - min(after(k) for k in choices)
    return out


@pytest.fixture(scope="module")
def kong_room(tmp_path_factory):
    """Six players, one pair of the kong family at 1.0: each throws the fourth tile of the other's concealed
    triplet whenever it holds one."""
    return _room(tmp_path_factory.mktemp("kong"), "cheat=kong:1:1.0", hands=500, seed=5)


def test_could_kong_is_what_the_records_show(kong_room) -> None:
    """events.could_kong, per discard, against the hands counted again from each record's JSON; and the
    discards of the fourth tile the family's labels name are among them."""
    games, warehouse, labels = kong_room
    expected = {}
    for line in gzip.decompress(games.read_bytes()).decode("utf-8").splitlines():
        record = json.loads(line)
        for idx, seats in _kongable_from_json(record).items():
            expected[(record["hand_id"], idx)] = seats
    with connect(warehouse) as con:
        rows = con.execute("SELECT hand_id, idx, could_kong FROM events WHERE t = 'discard'").fetchall()
        seat_of = dict(
            ((h, p), s) for h, s, p in con.execute("SELECT hand_id, seat, player FROM player_hands").fetchall()
        )
    assert {(h, i): sorted(c) for h, i, c in rows} == expected
    fed = [a for a in labels["acts"] if a["act"] == "feed_kong"]
    assert fed and all(seat_of[(a["hand_id"], a["partner"])] in expected[(a["hand_id"], a["event"])] for a in fed)


def test_a_kong_feeding_pair_leads_on_kong_feeding(kong_room) -> None:
    """The pair that throws each other the fourth tile of their triplets is the top pair, on kong_feeding (the
    offers counted, taken or not, with the direct kongs)."""
    _, warehouse, labels = kong_room
    pair = tuple(sorted(labels["colluders"][0]["players"]))
    with connect(warehouse) as con:
        results = list(screen(con, min_hands=100, evidence=0).pairs)
    assert results[0].players == pair, [(r.players, r.score) for r in results[:3]]
    signals = results[0].signals
    assert max(signals, key=lambda s: signals[s]["z"]) == "kong_feeding", signals


def test_the_cost_of_each_offer_is_what_the_records_show(kong_room) -> None:
    """events.cost, for every discard somebody could win on or kong, against the hands counted again from each
    record's JSON and a shanten search that shares no code with the engine; and every fourth tile the family's
    labels name carries one. Its premise: a kong-feeding partner gives up more of them at a cost than anyone
    else gives anyone (the costly offers of kong_feeding)."""
    games, warehouse, labels = kong_room
    records = [json.loads(line) for line in gzip.decompress(games.read_bytes()).decode("utf-8").splitlines()]
    with connect(warehouse) as con:
        stored = {
            (h, i): c
            for h, i, c in con.execute(
                "SELECT hand_id, idx, cost FROM events WHERE t = 'discard' AND replayed AND cost IS NOT NULL"
            ).fetchall()
        }
        offered = {
            (h, i)
            for (h, i) in con.execute(
                "SELECT hand_id, idx FROM events WHERE t = 'discard' AND replayed"
                " AND (len(could_win) > 0 OR len(could_kong) > 0)"
            ).fetchall()
        }
    assert stored and set(stored) <= offered
    checked = 0
    for record in records[:120]:
        void_first = load_ruleset(record["ruleset"]).void_discard_first
        costs = _costs_from_json(record, void_first)
        for (h, i), cost in stored.items():
            if h == record["hand_id"]:
                assert cost == costs[i], (h, i, cost, costs[i])
                checked += 1
    assert checked >= 100 and any(stored[k] > 0 for k in stored)
    fed = [a for a in labels["acts"] if a["act"] == "feed_kong"]
    assert fed and all((a["hand_id"], a["event"]) in stored for a in fed)
    costly_to_partner = sum(1 for a in fed if stored[(a["hand_id"], a["event"])] > 0)
    assert costly_to_partner >= 10, costly_to_partner


@pytest.fixture(scope="module")
def selective_room(tmp_path_factory):
    """Six players, one pair of the selective family at 1.0: each throws the other its winning tile whenever
    the win is worth 2 fan or more, whatever the tile is worth to its own hand."""
    return _room(tmp_path_factory.mktemp("selective"), "cheat=selective:1:1.0", hands=600, seed=7)


def test_a_pair_feeding_valuable_wins_at_a_cost_leads_on_costly_feeding(selective_room) -> None:
    """The pair that feeds only valuable wins is the top pair, flagged, and its wins on tiles that cost the giver
    (costly_feeding) stand well above what its members' rates of winning on discards expect, while no honest
    pair's do."""
    _, warehouse, labels = selective_room
    pair = tuple(sorted(labels["colluders"][0]["players"]))
    with connect(warehouse) as con:
        results = list(screen(con, min_hands=100, evidence=0).pairs)
    assert results[0].players == pair and results[0].flagged, [(r.players, r.q) for r in results[:3]]
    costly = results[0].signals["costly_feeding"]
    assert costly["tested"] and costly["observed"] > 1.5 * costly["expected"] and costly["z"] > 3.0, costly
    assert all(r.signals["costly_feeding"]["z"] < costly["z"] / 2 for r in results[1:]), [
        (r.players, r.signals["costly_feeding"]["z"]) for r in results[1:4]
    ]


def test_valuable_wins_fed_at_a_cost_stand_further_above_their_background(selective_room) -> None:
    """costly_value (issue 37): the selective pair's valuable wins on tiles that cost the giver, against the room's
    rate of such wins times the taker's relative rate of valuable wins on discards. Its background is a fraction
    of costly_feeding's (most honest costly wins are cheap), so the same gifts stand further above it: its ratio
    observed / expected beats costly_feeding's, and no honest pair comes near it."""
    _, warehouse, labels = selective_room
    pair = tuple(sorted(labels["colluders"][0]["players"]))
    with connect(warehouse) as con:
        results = list(screen(con, min_hands=100, evidence=0).pairs)
    top = results[0]
    assert top.players == pair
    value, costly = top.signals["costly_value"], top.signals["costly_feeding"]
    assert value["tested"] and value["direction"] == "excess" and value["z"] > 3.0, value
    assert 0 < value["observed"] <= costly["observed"] and value["expected"] < costly["expected"] / 2
    assert value["observed"] / value["expected"] > costly["observed"] / costly["expected"], (value, costly)
    assert all(r.signals["costly_value"]["z"] < value["z"] / 2 for r in results[1:]), [
        (r.players, r.signals["costly_value"]["z"]) for r in results[1:4]
    ]
