"""Play one hand with four bots through the hand state machine, and write it as an ``xzlog/1`` record."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.game.events import Hu
from pipeline.game.record import ClaimedWin, record_json
from pipeline.game.start import DIRECTIONS, Exchange, deal_hands, exchange_offset, exchanged, start_hand
from pipeline.game.state import HandFacts, HandState
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.tiles import full_set
from pipeline.simulate.bots import Act, Bot, Collusion, Follow, Follower, FollowNote
from pipeline.simulate.styles import Player


@dataclass(frozen=True, slots=True)
class PlayedHand:
    """A simulated hand: its record, what it left behind, and how it started (wall, exchange, 定缺)."""

    record: dict[str, Any]
    hand: HandFacts  # what the hand left behind
    wall: tuple[int, ...]
    exchange: Exchange | None
    que: tuple[int, ...] | None  # None at a two-suit table
    stacked: tuple[int, ...] = ()  # seats whose deal the wall was arranged for (simulate --inject stack=N:I)
    acts: tuple[Act, ...] = ()  # what colluders did for their partners (simulate --inject cheat=FAMILY:N:I)
    follows: tuple[FollowNote, ...] = ()  # the engine followers' decisions (simulate --inject follow=N:P)

    def fresh_state(self) -> HandState:
        """A new state at the start of play, to replay the record's events on."""
        hand = self.hand
        return start_hand(hand.rules, dealer=hand.dealer, wall=self.wall, exchange=self.exchange, que=self.que)


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where, and who at this table colludes or cheats."""

    players: tuple[Player, ...]
    collusion: Mapping[int, Collusion]  # seat → its partner at this table
    cheaters: frozenset[int]
    followers: Mapping[int, Follow] = field(default_factory=dict)  # seat → how it follows an engine


def play_hand(
    rules: RuleSet,
    ruleset: str | Mapping[str, Any],
    seating: Seating,
    dealer: int,
    rng: random.Random,
    *,
    hand_id: str,
    session_id: str | None = None,
    hand_no: int | None = None,
    table_id: str | None = None,
    played_at: str | None = None,
    arrange: Callable[[list[int], int, random.Random], tuple[int, ...]] | None = None,
) -> PlayedHand:
    """Shuffle, deal, exchange, declare voids, play to the end. ``arrange`` (a stacked deal,
    :func:`pipeline.simulate.inject.stack_deals`) may rearrange the shuffled wall in place before the deal,
    given the dealer, and returns the seats it arranged for; without it the random stream is the same."""
    n = rules.players
    wall = full_set(rules.suits)
    rng.shuffle(wall)
    stacked = arrange(wall, dealer, rng) if arrange is not None else ()
    bots = [
        Bot(p, seat, rng, collusion=seating.collusion.get(seat), sees_all=seat in seating.cheaters)
        if seat not in seating.followers
        # a follower's coin and engine draw from a stream of their own, seeded here from the hand's
        else Follower(
            p,
            seat,
            rng,
            seating.followers[seat],
            random.Random(rng.getrandbits(64)),
            collusion=seating.collusion.get(seat),
            sees_all=seat in seating.cheaters,
        )
        for seat, p in enumerate(seating.players)
    ]
    hands = deal_hands(wall, dealer, n)
    exchange: Exchange | None = None
    if rules.exchange_three:
        direction = rng.choice(DIRECTIONS if n == 4 else tuple(d for d in DIRECTIONS if d != "across"))
        offset = exchange_offset(direction, n)
        given = []
        for s in range(n):
            to = (s + offset) % n
            given.append(bots[s].choose_exchange(hands[s], to, hands[to]))
        exchange = (direction, given)
        hands = exchanged(hands, *exchange)
    # 定缺 where three suits are in play (with two, no hand can hold a third); a seat knows the voids its partners
    # (seated before it) declared
    que = None
    if len(rules.suits) == 3:
        que = tuple(bots[s].choose_void(hands[s], _partner_voids(bots, s)) for s in range(n))
    st = start_hand(rules, dealer=dealer, wall=wall, exchange=exchange, que=que)
    run_hand(st, bots)
    hand = st.facts()
    wins = [ClaimedWin(w.seat, w.event, w.score.fan, w.score.points) for w in hand.wins]
    record = record_json(
        hand_id=hand_id,
        session_id=session_id,
        hand_no=hand_no,
        table_id=table_id,
        played_at=played_at,
        ruleset=ruleset,
        players=[p.id for p in seating.players],
        dealer=dealer,
        wall=wall,
        exchange=exchange,
        que=que,
        events=hand.events,
        payments=hand.payments,
        deltas=hand.deltas,
        wins=wins,
    )
    acts = tuple(a for b in bots for a in b.acts)
    follows = tuple(n for b in bots if isinstance(b, Follower) for n in b.notes)
    return PlayedHand(record, hand, tuple(wall), exchange, que, stacked, acts, follows)


def _partner_voids(bots: Sequence[Bot], seat: int) -> tuple[int | None, ...]:
    """The voids the partners of ``seat`` declared so far (``None`` for one not declared yet), in the order of
    its partners."""
    c = bots[seat].collusion
    return tuple(bots[p].void for p in c.partners) if c is not None else ()


def run_hand(st: HandState, bots: Sequence[Bot]) -> None:
    """Drive the state to the end: the player to act decides; on a discard, wins first (several may take
    it), then a pong or kong in turn order, else the next draw."""
    while not st.over:
        if st.phase == "discard":
            st.apply(bots[st.turn].on_turn(st))
        elif st.phase == "draw":
            draw = st.next_draw()
            assert draw is not None
            st.apply(draw)
        else:
            assert st.window is not None
            source = st.window.source
            order = [(source + k) % st.n for k in range(1, st.n)]
            choices = {s: bots[s].on_claim(st, st.claim_options(s)) for s in order if not st.won[s]}
            wins = [c for s in order if isinstance(c := choices.get(s), Hu)]
            if wins:
                for hu in wins:
                    st.apply(hu)
                _continue(st)
                continue
            call = next((c for s in order if (c := choices.get(s)) is not None), None)
            if call is not None:
                st.apply(call)
            else:
                _continue(st)


def _continue(st: HandState) -> None:
    draw = st.next_draw()
    if draw is None:
        st.close()
    else:
        st.apply(draw)
