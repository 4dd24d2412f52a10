"""The hand state's judging of waits (issue 23 item 3: the information screen's anticipation evidence, decided in
ingest's replay): which discards are judged, what the options hold, and the same decisions as the screen's replay
used to make (tests/anticipation_oracle.py) on a simulated room that plays the exchange (换三张)."""

from __future__ import annotations

import json
from pathlib import Path

from anticipation_oracle import oracle_decisions

from pipeline.audit.anticipation import decisions
from pipeline.game.events import Discard
from pipeline.game.evidence import Evidence
from pipeline.game.record import parse_record
from pipeline.game.start import start_hand
from pipeline.game.state import HandState
from pipeline.rules.ruleset import load_ruleset
from pipeline.rules.tiles import TILE_NAMES, parse_tiles
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

# Seat 0 deals itself 123456789m 11p 357p: throwing 3p waits on 6p, throwing 7p on 4p, 4 unseen of each.
DEAL = ["123456789m11p357p", "444p123456789s1m", "123456789s22m88p", "123456789s99p33m"]


def _state(deal: list[str], *, evidence: bool = True) -> HandState:
    return start_hand(
        load_ruleset("chengdu"),
        dealer=0,
        deal=[parse_tiles(h) for h in deal],
        que=[2, 0, 1, 1],
        observer=Evidence() if evidence else None,
    )


def _after(deal: list[str], tile: str, *, evidence: bool = True) -> Evidence:
    """The evidence worked out once seat 0 discards ``tile`` (an empty one without ``evidence``: none is kept)."""
    state = _state(deal, evidence=evidence)
    state.apply(Discard(0, parse_tiles(tile)[0]))
    return state.observer if state.observer is not None else Evidence()


def _names(hand: str) -> list[str]:
    return [TILE_NAMES[k] for k in parse_tiles(hand)]


P3, P4, P6 = (parse_tiles(t)[0] for t in ("3p", "4p", "6p"))


def test_a_ready_discard_with_another_wait_of_as_many_unseen_copies_is_judged() -> None:
    """3p: waits on 6p (4 in the wall) against 7p's 4p (seat 1 holds three: 1 in the wall); 4 unseen each."""
    assert _after(DEAL, "3p").waits_at == {0: (0, ((P3, 1 << P6, 4, 4), (parse_tiles("7p")[0], 1 << P4, 4, 1)))}
    assert _after(DEAL, "7p").waits_at == {0: (1, ((P3, 1 << P6, 4, 4), (parse_tiles("7p")[0], 1 << P4, 4, 1)))}


def test_nothing_is_judged_without_evidence_or_when_the_discard_leaves_the_hand_not_ready() -> None:
    assert _state(DEAL, evidence=False).observer is None
    assert _after(DEAL, "3p", evidence=False).waits_at == {}
    assert _after(DEAL, "1m").waits_at == {}


def test_options_with_as_many_copies_in_the_wall_are_not_judged() -> None:
    """Seat 1 holds no 4p: both waits have all 4 copies in the wall."""
    assert _after([DEAL[0], "123456789s1234m", DEAL[2], DEAL[3]], "3p").waits_at == {}


def test_discards_that_leave_the_same_waits_are_one_option() -> None:
    """123456789m 11p 234p: throwing 1p or 4p leaves the waits 1p 4p, throwing 2p leaves 2p 5p (7 unseen, the
    others 5 and 3): alone with its unseen count, not judged; the two discards of one wait are one option."""
    deal = ["123456789m11p234p", "444p123456789s1m", DEAL[2], DEAL[3]]
    assert _after(deal, "2p").waits_at == {}
    assert _after(deal, "4p").waits_at == {}


def test_the_engine_judges_a_room_with_the_exchange_as_the_replay_did(tmp_path: Path) -> None:
    """A simulated room of profile app (换三张), a planted cheat in it: every hand's decisions, the engine's and the
    replay's, the same (some judged, some hits, some shaped by the tiles given at the exchange)."""
    out = tmp_path / "sim.jsonl"
    write(SimConfig(hands=300, seed=5, players=8, profile="app", inject=InjectSpec.parse("bot=1")), out)
    found = 0
    for line in out.read_text(encoding="utf-8").splitlines():
        record = parse_record(json.loads(line))
        assert record.exchange_given is not None
        mine = decisions(record)
        assert mine == oracle_decisions(record)
        found += len(mine)
    assert found > 50


def test_the_last_tile_of_the_void_suit() -> None:
    """123456789m 2345p 1s, void s (chengdu: void tiles need not go first): throwing 1s waits on 2p 5p; throwing
    5p leaves 234p and a single 1s, one tile from a win by shape with no winning tile (the void suit): an option
    of no waits, none unseen; so the 1s is alone with its unseen count and not judged, as the replay judged it."""
    deal = ["123456789m2345p1s", DEAL[1], DEAL[2], DEAL[3]]
    assert _after(deal, "1s").waits_at == {}
    record = parse_record(
        {
            "format": "xzlog/1",
            "hand_id": "v1",
            "ruleset": "chengdu",
            "players": ["a", "b", "c", "d"],
            "dealer": 0,
            "deal": [_names(h) for h in deal],
            "que": ["s", "m", "p", "p"],
            "events": [{"t": "discard", "seat": 0, "tile": "1s"}],
        }
    )
    assert decisions(record) == oracle_decisions(record) == []
