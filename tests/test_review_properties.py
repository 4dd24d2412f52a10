"""Property tests and fuzzing of the per-decision review (pipeline/audit/review.py, issue 43 point 2).

The hands are :func:`test_validate_properties.play`'s: random legal play through :class:`HandState` under every
profile (three and four players, two and three suits, the exchange and the declared void), written as full
records. On such a record the review judges every decision the record shows, each exactly once: every
discard and every kong or self-drawn win of the seat whose turn it is, every claim made, and a pass for each
seat that could have claimed and did not. Changed records (a tile, a seat, an event dropped or doubled, a
field removed) are reviewed or refused with the reader's error, never another exception, and the review
stops where the replay stops.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_validate_properties import hands, play

from pipeline.audit.review import Decision, review_json
from pipeline.game.record import RecordError
from pipeline.rules.tiles import TILE_NAMES
from pipeline.validate import validate

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _well_formed(decisions: list[Decision], n_events: int) -> None:
    """What every decision of any review holds: the options ranked 1..n, the chosen one among them, the better
    one ranked above it, an event index inside the record (none for the exchange and the void)."""
    for d in decisions:
        assert [o.rank for o in d.options] == list(range(1, len(d.options) + 1)), d
        assert d.chosen in d.options or d.kind == "exchange", d  # the tiles given may be others of the suit
        # the better option ranks above; for the exchange, the chosen option is the suit's (its rank) and the
        # better one may be other tiles of the same suit at a lower shanten
        assert (
            d.better is None
            or d.better.rank < d.chosen.rank
            or (d.kind == "exchange" and d.better.tile == d.chosen.tile and d.better.shanten < d.chosen.shanten)
        ), d
        if d.kind in ("exchange", "void"):
            assert d.event is None
        else:
            assert d.event is not None and 0 <= d.event < n_events, d
        assert not d.dealt_in or d.kind == "turn"


@SETTINGS
@given(hands)
def test_every_decision_of_a_legal_hand_is_judged_once(hand: tuple[int, str]) -> None:
    record = play(*hand)
    events = record["events"]
    parsed, decisions = review_json(record)
    _well_formed(decisions, len(events))
    assert review_json(json.loads(json.dumps(record)))[1] == decisions  # deterministic, reads only the record

    turns = [d for d in decisions if d.kind == "turn"]
    claims = [d for d in decisions if d.kind == "claim"]
    # each turn decision is the event it names, by the seat that made it, judged once
    assert len({d.event for d in turns}) == len(turns)
    for d in turns:
        assert events[d.event]["seat"] == d.seat and events[d.event]["t"] in ("discard", "kong", "hu")
    # every discard is a turn decision; so is every self-drawn win and every kong from the hand
    acted = {i for i, e in enumerate(events) if e["t"] == "discard" or (e["t"] in ("hu", "kong") and "from" not in e)}
    assert acted <= {d.event for d in turns}, sorted(acted - {d.event for d in turns})
    # every claim made from a discard is a claim decision of its seat, at its event, chosen as made
    made = {(i, e["seat"]) for i, e in enumerate(events) if e["t"] in ("pong", "hu") and e.get("from") is not None}
    made |= {(i, e["seat"]) for i, e in enumerate(events) if e["t"] == "kong" and e.get("kind") == "direct"}
    judged = {(d.event, d.seat) for d in claims if d.chosen.action != "pass"}
    robbed = {(i, e["seat"]) for i, e in enumerate(events) if e["t"] == "hu" and e.get("rob_kong")}
    assert made - robbed <= judged | robbed, sorted(made - judged)
    for d in claims:
        if d.chosen.action == "pass":  # a pass names the discard passed on, by another seat
            assert events[d.event]["t"] == "discard" and events[d.event]["seat"] != d.seat
    # a seat is judged at most once per discard
    per_window = [(d.seat, d.event) for d in claims if d.chosen.action == "pass"]
    assert len(per_window) == len(set(per_window))
    # dealt in: exactly the discards somebody then won on (not a robbed kong)
    won_on = set()
    last = -1
    for i, e in enumerate(events):
        if e["t"] == "discard":
            last = i
        elif e["t"] == "hu" and e.get("from") is not None and not e.get("rob_kong"):
            won_on.add(last)
    assert {d.event for d in turns if d.dealt_in} == won_on & {d.event for d in turns}
    # one void decision per seat where the record declares it, one exchange per seat that gave tiles
    if parsed.que is not None:
        assert sorted(d.seat for d in decisions if d.kind == "void") == [
            s for s, q in enumerate(parsed.que) if q is not None
        ]


def _mutated(record: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(record)
    events = out["events"]
    what = rnd.randrange(5)
    i = rnd.randrange(len(events))
    if what == 0:
        events[i]["tile"] = rnd.choice(TILE_NAMES)
    elif what == 1:
        events[i]["seat"] = rnd.randrange(len(out["players"]) + 1)  # sometimes no such seat
    elif what == 2:
        del events[i]
    elif what == 3:
        events.insert(i, copy.deepcopy(events[i]))
    else:
        key = rnd.choice(sorted(out))
        del out[key]
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands, st.randoms(use_true_random=False))
def test_a_changed_record_is_reviewed_up_to_the_replays_stop_or_refused(hand: tuple[int, str], rnd) -> None:
    record = _mutated(play(*hand), rnd)
    try:
        _, decisions = review_json(record)
    except RecordError:
        return  # what the reader says of it, as the replay does
    _well_formed(decisions, len(record["events"]))
    v = validate(record)
    stop = v.issues[0].event if not v.replayed and v.issues and v.issues[0].event is not None else None
    if stop is not None:  # nothing judged past the event where the replay stopped; at it, only a self-drawn
        # win written with another tile (the review matches any win option to it: the seat did choose to win)
        assert all(
            d.event is None or d.event < stop or (d.event == stop and d.chosen.action == "hu") for d in decisions
        ), (stop, [d.event for d in decisions])
