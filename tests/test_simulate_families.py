"""The cheat families of the simulator (simulate --inject cheat=FAMILY:N:I): the spec, the labels, and each
family's behaviour measured in the records it writes (replayed through the hand state machine)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from pipeline.game.events import Discard, Event
from pipeline.game.record import parse_record
from pipeline.game.start import exchange_offset
from pipeline.game.state import HandState
from pipeline.simulate.families import FAMILIES
from pipeline.simulate.inject import InjectSpec, SpecError
from pipeline.simulate.tables import Labels, SimConfig, simulate
from pipeline.validate import initial_state, validate_line


@cache
def room(spec: str, hands: int = 240, seed: int = 7, profile: str = "chengdu") -> tuple[tuple[str, ...], Labels]:
    """A small room of 6 players (partners share many hands) with ``spec`` planted."""
    lines, labels = simulate(
        SimConfig(hands=hands, seed=seed, players=6, profile=profile, inject=InjectSpec.parse(spec))
    )
    return tuple(lines), labels


def replay(line: str) -> Iterator[tuple[HandState, int, Event]]:
    """Each event of a record with the state just before it and its index."""
    record = parse_record(json.loads(line))
    state = initial_state(record)
    for i, event in enumerate(record.events):
        yield state, i, event
        state.apply(event)


def acts(labels: Labels, kind: str) -> dict[tuple[str, int | None], dict[str, Any]]:
    return {(a["hand_id"], a["event"]): a for a in labels.acts if a["act"] == kind}


def by_hand(lines: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    return {json.loads(line)["hand_id"]: json.loads(line) for line in lines}


def test_the_spec_reads_families_and_their_knobs() -> None:
    spec = InjectSpec.parse("collude=1:0.3,cheat=soft:2:0.5:seat=0,cheat=team:1:0.3:size=4", players=16)
    soft, team = spec.cheats
    assert (soft.family.name, soft.groups, soft.intensity, soft.family.seating) == ("soft", 2, 0.5, 0.0)
    assert (team.family.size, team.family.wall_off) == (4, True)
    assert spec.players_needed == 2 + 4 + 4
    assert InjectSpec.parse("cheat=selective:1:0.5:fan=3").cheats[0].family.min_fan == 3
    for bad, message in (
        ("cheat=nonsense:1:0.5", "unknown cheat family"),
        ("cheat=soft:1", "the groups and the intensity"),
        ("cheat=soft:1:2", "between 0 and 1"),
        ("cheat=soft:1:0.5:fan=2", "no knob 'fan'"),
        ("cheat=soft:1:0.5:seat", "key=value"),
        ("cheat=soft:1:0.5:seat=2", "seat must be"),
        ("cheat=team:1:0.5:size=1", "at least 2"),
        ("cheat=soft:-1:0.5", "negative"),
        ("cheat=late:1:0.5:late=-3", "negative"),
    ):
        with pytest.raises(SpecError, match=message):
            InjectSpec.parse(bad)
    with pytest.raises(SpecError, match="the size of each cheat group"):
        InjectSpec.parse("cheat=team:2:0.5", players=5)


def test_labels_name_family_intensity_members_seating_and_acts() -> None:
    _, labels = room("cheat=feeding:1:0.5:seat=0,collude=1:0.2", hands=60)
    legacy, planted = labels.colluders
    assert "family" not in legacy  # collude= reads as it always did
    assert planted["family"] == "feeding" and planted["intensity"] == 0.5 and len(planted["players"]) == 2
    assert (planted["seating"], planted["knobs"]) == ("chance", {"size": 2, "seat": 0.0})
    assert labels.acts and {a["player"] for a in labels.acts} <= set(planted["players"])
    assert "acts" in labels.as_dict() and "acts" not in room("collude=1:0.2", hands=20)[1].as_dict()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_plays_legal_hands_with_the_same_bytes_for_a_seed(family: str) -> None:
    spec = f"cheat={family}:1:0.6"
    profile = "app" if family == "exchange" else "chengdu"
    lines, labels = room(spec, hands=60, profile=profile)
    assert all(validate_line(line).ok for line in lines)
    again, labels_again = simulate(
        SimConfig(hands=60, seed=7, players=6, profile=profile, inject=InjectSpec.parse(spec))
    )
    assert list(again) == list(lines) and labels_again.as_dict() == labels.as_dict()
    assert labels.acts, f"{family} did nothing for its partner in 60 hands"


def test_a_soft_player_never_deals_into_its_ready_partner_while_it_had_another_tile() -> None:
    lines, labels = room("cheat=soft:1:1.0")
    pair = set(labels.colluders[0]["players"])
    judged = shared = 0
    for line in lines:
        players = json.loads(line)["players"]
        seats = [s for s, p in enumerate(players) if p in pair]
        if len(seats) < 2:
            continue
        shared += 1
        for state, _, event in replay(line):
            if not isinstance(event, Discard) or event.seat not in seats:
                continue
            partner = next(s for s in seats if s != event.seat)
            if state.won[partner] or not state.can_win_with(partner, event.tile):
                continue
            judged += 1
            # it threw a tile its partner waits on: only when every tile it could throw was one
            options = {o.tile for o in state.turn_options(event.seat) if isinstance(o, Discard)}
            assert all(state.can_win_with(partner, k) for k in options), (state.fingerprint(), event)
    assert shared > 50 and labels.acts
    wins = Counter(a["act"] for a in labels.acts)
    assert wins["soft"] > 20, wins
    assert judged < wins["soft"] / 5


def test_a_soft_player_never_claims_a_win_off_its_partner() -> None:
    lines, labels = room("cheat=soft:1:1.0")
    pair = set(labels.colluders[0]["players"])
    for line in lines:
        record = json.loads(line)
        players = record["players"]
        for state, _, event in replay(line):
            if event.t == "hu" and event.source is not None and {players[event.seat], players[event.source]} <= pair:
                assert state.left <= 3  # a pass is forbidden in the last four tiles


def test_a_selective_feeder_feeds_only_wins_of_at_least_n_fan() -> None:
    lines, labels = room("cheat=selective:1:1.0:fan=2")
    records = by_hand(lines)
    fed = acts(labels, "feed_win")
    assert len(fed) >= 5 and set(Counter(a["act"] for a in labels.acts)) == {"feed_win"}
    for (hand_id, event), act in fed.items():
        record = records[hand_id]
        seat = record["players"].index(act["partner"])
        win = next(w for w in record["result"]["wins"] if w["seat"] == seat and w["event"] == (event or 0) + 1)
        assert win["fan"] >= 2, (hand_id, event, win)


def test_a_late_feeder_feeds_only_late_in_the_wall() -> None:
    lines, labels = room("cheat=late:1:1.0:late=15")
    fed = acts(labels, "feed_win")
    assert len(fed) >= 5
    for line in lines:
        hand_id = json.loads(line)["hand_id"]
        for state, i, event in replay(line):
            if (hand_id, i) in fed:
                assert isinstance(event, Discard) and state.left <= 15


def test_passing_lets_cheap_wins_off_the_partner_go() -> None:
    lines, labels = room("cheat=passing:1:1.0")
    records = by_hand(lines)
    passed = acts(labels, "pass")
    assert len(passed) >= 3 and acts(labels, "feed_win")
    for (hand_id, event), act in passed.items():
        record = records[hand_id]
        seat = record["players"].index(act["player"])
        assert not any(w["seat"] == seat and w["event"] == (event or 0) + 1 for w in record["result"]["wins"])
        assert record["events"][event]["t"] == "discard"
        assert record["players"][record["events"][event]["seat"]] == act["partner"]


def test_a_kong_feeder_throws_the_tile_its_partner_holds_three_of() -> None:
    lines, labels = room("cheat=kong:1:1.0")
    fed = acts(labels, "feed_kong")
    assert len(fed) >= 5 and set(Counter(a["act"] for a in labels.acts)) == {"feed_kong"}
    konged = 0
    for line in lines:
        record = json.loads(line)
        for state, i, event in replay(line):
            act = fed.get((record["hand_id"], i))
            if act is not None:
                partner = record["players"].index(act["partner"])
                assert isinstance(event, Discard) and state.counts[partner][event.tile] == 3
                after = record["events"][i + 1]
                konged += after["t"] == "kong" and after["seat"] == partner
    assert konged >= len(fed) / 3


def test_exchange_gifts_go_to_the_partner_in_its_longest_suit_and_voids_split() -> None:
    lines, labels = room("cheat=exchange:1:1.0", profile="app")
    records = by_hand(lines)
    gifts = acts(labels, "gift")
    assert len(gifts) >= 10
    for (hand_id, _), act in gifts.items():
        record = records[hand_id]
        seat, partner = record["players"].index(act["player"]), record["players"].index(act["partner"])
        offset = exchange_offset(record["exchange"]["direction"], len(record["players"]))
        assert (seat + offset) % len(record["players"]) == partner
    pair = set(labels.colluders[0]["players"])
    same = together = 0
    for record in records.values():
        seats = [s for s, p in enumerate(record["players"]) if p in pair]
        if len(seats) == 2:
            together += 1
            same += record["que"][seats[0]] == record["que"][seats[1]]
    assert together > 50 and same == 0  # at intensity 1 the partners never void the same suit


def test_a_team_walls_off_the_outsiders() -> None:
    """A discard a team member makes to wall off the outsiders is dealt in to an outsider less often than its
    other discards (the outsiders' hands are unknown to it: safer, not safe)."""
    lines, labels = room("cheat=team:1:1.0")
    team = set(labels.colluders[0]["players"])
    walls = set(acts(labels, "wall_off"))
    walled, other = [0, 0], [0, 0]
    for line in lines:
        record = json.loads(line)
        events = record["events"]
        members = {s for s, p in enumerate(record["players"]) if p in team}
        for i, e in enumerate(events):
            if e["t"] == "discard" and e["seat"] in members:
                dealt_in = i + 1 < len(events) and events[i + 1]["t"] == "hu" and events[i + 1]["seat"] not in members
                box = walled if (record["hand_id"], i) in walls else other
                box[0] += 1
                box[1] += dealt_in
    assert walled[0] > 100
    assert walled[1] / walled[0] < other[1] / other[0], (walled, other)


def test_a_ready_signaller_feeds_only_wins() -> None:
    lines, labels = room("cheat=ready:1:1.0")
    records = by_hand(lines)
    fed = acts(labels, "feed_win")
    assert len(fed) >= 5 and set(Counter(a["act"] for a in labels.acts)) == {"feed_win"}
    for (hand_id, event), act in fed.items():
        record = records[hand_id]
        seat = record["players"].index(act["partner"])
        assert any(w["seat"] == seat and w["event"] == (event or 0) + 1 for w in record["result"]["wins"])


def _shared(spec: str) -> float:
    lines, labels = room(spec, hands=400, seed=3)
    pair = set(labels.colluders[0]["players"])
    return sum(pair <= set(json.loads(line)["players"]) for line in lines) / len(lines)


def test_seating_bias_is_a_knob_and_zero_means_chance() -> None:
    """In a room of 6 any two players share a table in 2/5 of the hands by chance; seat=0 keeps the partners
    there, seat=1 seats them together whenever one sits (and a seat is left)."""
    chance = _shared("cheat=soft:1:0.5:seat=0")
    assert 0.3 < chance < 0.5
    assert _shared("cheat=soft:1:0.5:seat=1") > chance + 0.25
