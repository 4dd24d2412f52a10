"""Every decision of one hand beside the reference policy (``xuezhan replay --review``, docs/REPLAY.md).

The record is replayed through the hand state; at each decision point a seat whose tiles are known had, the
reference policy (:mod:`pipeline.game.policy`) ranks the legal options from what that seat could see, and the
option the record shows is placed among them: its rank, shanten, live tiles, danger, and the policy's choice
when that was clearly better (:func:`pipeline.game.policy.clearly_better`). Decision points:

- 换三张 and 定缺, from the deal (the exchange from the hand dealt, the void from the hand after the exchange);
- each turn: a win by self-draw, a kong, or the discard;
- each discard (or added kong) another seat could claim: its win, pong or kong, or the pass. When somebody won on
  the tile, another seat's pass of a pong or kong is not a decision anyone can see (the win came first), so only
  a pass of a win is judged then.

An observer record's hidden hands are not reviewed (their tiles are not known); the replay stops at the first
illegal action, and so does the review.

**A second yardstick** (``engine``: :mod:`pipeline.engines`, ``xuezhan assist --yardstick SPEC``): at each turn with
more than one option and no win first, the engine is asked too, on the same state, with its own randomness drawn
from the hand, the event and the seat (:func:`engine_rng`: the same answer whenever the hand is reviewed again,
and never the randomness the record's own players had), and :attr:`Decision.engine` says whether the option made
was its first choice. Where the engine ranks fewer than two options it saw no choice (the built-in engine holding
one kind of its void suit throws it and weighs nothing else: about a third of the turns it is asked), and the
decision is not judged by it (:attr:`Decision.engine` None, :attr:`Decision.engine_first` its only option): every
player agrees there (99% in simulated rooms), so such decisions only blurred the screen's figures (the eval's first
four rooms of followers, lab: their ``z`` 5.1, 6.5, 6.8 and 8.2 counting them, 6.1, 7.0, 7.3 and 15.4 not).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from pipeline.engines import Engine, first
from pipeline.game.events import Event, Hu, Kong, Pong
from pipeline.game.policy import Option, clearly_better, decide, exchange_shanten, rank_exchanges, rank_voids
from pipeline.game.record import Record, parse_record
from pipeline.game.start import deal_hands
from pipeline.game.state import HandState, IllegalAction
from pipeline.rules.ruleset import Override
from pipeline.rules.tiles import SUITS, TILE_NAMES, format_tiles
from pipeline.validate import play_state

Kind = Literal["exchange", "void", "turn", "claim"]


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision: ``event`` is the record's event that shows it (for a pass: the discard passed on; ``None``
    for the exchange and the void), ``options`` the policy's ranking, ``chosen`` the option the record shows."""

    event: int | None
    seat: int
    kind: Kind
    options: tuple[Option, ...]
    chosen: Option
    better: Option | None  # the policy's choice when clearly better than the one made
    void: int | None = None  # the seat's void suit, once declared
    dealt_in: bool = False  # a discard somebody won on
    engine: bool | None = None  # the option made was the second yardstick's first choice (None: not judged by it)
    engine_first: str | None = None  # that first choice, in a few characters (describe); None: not asked or none


def review_json(obj: Mapping[str, Any], override: Override | None = None) -> tuple[Record, list[Decision]]:
    """A record's JSON object parsed (with the ``--rules`` ``override``) and reviewed; raises
    :class:`~pipeline.game.record.RecordError` when it cannot be read."""
    record = parse_record(obj, profile_override=override)
    return record, review(record, dict(obj))


def engine_rng(hand_id: str, event: int, seat: int) -> random.Random:
    """The second yardstick's randomness at one decision: fixed by the hand, the event and the seat.

    >>> engine_rng("h1", 12, 0).random() == engine_rng("h1", 12, 0).random() != engine_rng("h1", 12, 1).random()
    True
    """
    return random.Random(f"xuezhan-engine:{hand_id}:{event}:{seat}")


def review(record: Record, obj: dict[str, Any] | None = None, engine: Engine | None = None) -> list[Decision]:
    """The decisions of ``record``'s hand, in the order they were made (``obj``: the record's JSON, whose claimed
    result declares an observer record's hidden wins: :func:`~pipeline.validate.play_state`; ``engine``: a second
    yardstick asked at each turn, the module docstring)."""
    out: list[Decision] = []
    if record.level == "settlement":
        return out  # a score sheet: no tiles, no decisions
    n = record.rules.players
    dealt = _dealt(record, n)
    if record.exchange_given is not None and dealt is not None:
        for seat in range(n):
            given = record.exchange_given[seat]
            hand = dealt[seat]
            if given is None or hand is None or Counter(given) - Counter(hand):
                continue  # not known, or not tiles the seat held (the validator says so)
            options = rank_exchanges(hand)
            suit = given[0] // 9
            same = next((o for o in options if o.tile == suit), None)
            if same is None:
                continue
            # the tiles given, which may be other tiles of the suit than the policy's three: their own shanten
            give = tuple(sorted(given))
            chosen = Option("exchange", suit, None, exchange_shanten(hand, give), 0, 0, 0, same.rank, give)
            out.append(_decision(None, seat, "exchange", options, chosen))
    try:
        state = play_state(record, obj)
    except IllegalAction:
        return out
    if record.que is not None:
        for seat in range(n):
            void = record.que[seat]
            if void is None or state.hidden[seat]:
                continue
            hand = [k for k in range(27) for _ in range(state.counts[seat][k])]
            options = rank_voids(hand)
            chosen = next(o for o in options if o.tile == void)
            out.append(_decision(None, seat, "void", options, chosen, void))
    events = record.events
    judged_window = -1
    last_discard = -1
    won_on: set[int] = set()  # the discards a seat won on (dealt in)
    for index, event in enumerate(events):
        if event.t == "discard":
            last_discard = index
        elif isinstance(event, Hu) and event.source is not None and not event.rob_kong:
            won_on.add(last_discard)
        if state.phase == "discard" and event.seat == state.turn and not state.hidden[event.seat]:
            options = decide(state, event.seat)
            taken = _match(options, event)
            if taken is not None:
                d = _decision(index, event.seat, "turn", options, taken, state.void[event.seat])
                if engine is not None and engine_asked("turn", options):
                    agrees, best = _engine_agrees(engine, state, record.hand_id, index, event, options)
                    d = replace(d, engine=agrees, engine_first=best)
                out.append(d)
        elif state.phase in ("claim", "rob") and state.window is not None and state.window.event != judged_window:
            judged_window = state.window.event
            out += _claims(state, events, index)
        try:
            state.apply(event)
        except IllegalAction:
            break
    return [replace(d, dealt_in=True) if d.kind == "turn" and d.event in won_on else d for d in out]


def _claims(state: HandState, events: Sequence[Event], index: int) -> list[Decision]:
    """The claim decisions on the open window: the claims that follow at ``index`` on, else passes."""
    w = state.window
    assert w is not None
    made: dict[int, tuple[int, Event]] = {}
    for j in range(index, len(events)):
        ev = events[j]
        if not isinstance(ev, (Hu, Pong, Kong)) or (isinstance(ev, Kong) and ev.kind != "direct"):
            break
        if ev.source != w.source or ev.tile != w.tile:
            break
        made.setdefault(ev.seat, (j, ev))
    won = any(isinstance(ev, Hu) for _, ev in made.values())
    out = []
    for seat in range(state.n):
        if seat == w.source or state.won[seat] or state.hidden[seat]:
            continue
        options = decide(state, seat)
        if not options:
            continue
        if seat in made:
            j, ev = made[seat]
            chosen = _match(options, ev)
        else:
            j = w.event
            chosen = next((o for o in options if o.action == "pass"), None)
            if won and not any(o.action == "hu" for o in options):
                continue  # a pong or kong nobody could make once the tile was won on
        if chosen is not None:
            out.append(_decision(j, seat, "claim", options, chosen, state.void[seat]))
    return out


def engine_asked(kind: str, options: Sequence[Option]) -> bool:
    """Is the second yardstick asked at a decision of ``kind`` whose options the policy ranked so: a turn with more
    than one option and no win first (a win is taken)."""
    return kind == "turn" and len(options) > 1 and options[0].action != "hu"


def same_choice(a: Event | None, b: Event | None) -> bool:
    """Are two events the same choice: equal, or both a win (a self-drawn win's tile says nothing of the choice)."""
    return bool(a == b or (isinstance(a, Hu) and isinstance(b, Hu)))


def _engine_agrees(
    engine: Engine, state: HandState, hand_id: str, index: int, event: Event, options: Sequence[Option]
) -> tuple[bool | None, str | None]:
    """Was ``event`` (a turn's) the engine's first choice at ``state`` (None: it ranked fewer than two options, a
    decision it saw no choice in, not judged by it); that choice described (None: it offered none; ``?``: not one
    of the legal ``options``)?"""
    offered, best = first(engine, state, event.seat, engine_rng(hand_id, index, event.seat))
    if not offered:
        return None, None
    same = next((o for o in options if o.event == best or (o.action == "hu" and isinstance(best, Hu))), None)
    shown = describe(same) if same is not None else "?"
    if offered < 2:
        return None, shown
    return same_choice(best, event), shown


def _match(options: Sequence[Option], event: Event) -> Option | None:
    for o in options:
        if o.event is not None and o.event == event:
            return o
    if isinstance(event, Hu):  # a self-drawn win's tile: any win option
        return next((o for o in options if o.action == "hu"), None)
    return None


def _decision(
    index: int | None, seat: int, kind: Kind, options: Sequence[Option], chosen: Option, void: int | None = None
) -> Decision:
    return Decision(index, seat, kind, tuple(options), chosen, clearly_better(options, chosen, void), void)


def _dealt(record: Record, n: int) -> Sequence[Sequence[int] | None] | None:
    if record.deal is not None:
        return record.deal
    if record.wall is not None:
        return deal_hands(record.wall, record.dealer, n)
    return None


# ------------------------------------------------------------------------------------------------ text
def describe(option: Option) -> str:
    """An option in a few characters: ``8p``, ``pong 5s``, ``hu``, ``pass``, ``void p``, ``give 149m``."""
    if option.action == "discard":
        return TILE_NAMES[option.tile]
    if option.action == "void":
        return f"void {SUITS[option.tile]}"
    if option.action == "exchange":
        return f"give {format_tiles(option.tiles)}"
    if option.action in ("pass", "hu"):
        return option.action
    return f"{option.action} {TILE_NAMES[option.tile]}"


def note(d: Decision) -> str:
    """One decision as the replay's review column shows it: ``rank 2/9 · 8p · sh 1 · live 12 · danger 0 · better:
    3m (sh 1, live 20, danger 0)``."""
    c = d.chosen
    text = f"rank {c.rank}/{len(d.options)} · {describe(c)}{_figures(c)}"
    if d.better is not None:
        text += f" · better: {describe(d.better)} ({_figures(d.better).lstrip(' ·').replace(' · ', ', ')})"
    if d.engine is not None:
        text += " · engine: the same" if d.engine else f" · engine: {d.engine_first}"
    elif d.engine_first is not None:
        text += f" · engine: only {d.engine_first} (not judged)"
    return text


def _figures(o: Option) -> str:
    """Shanten (``sh``), live tiles and danger, where they apply: a win has none, a void or an exchange only its
    shanten, a call or a pass no danger (nothing is discarded yet)."""
    if o.action == "hu":
        return ""
    if o.action in ("void", "exchange"):
        return f" · sh {o.shanten}"
    if o.action != "discard":
        return f" · sh {o.shanten} · live {o.live}"
    return f" · sh {o.shanten} · live {o.live} · danger {o.danger}"


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One seat's decisions in a hand, counted (what ``xuezhan review`` stores per player-hand in
    ``decision_tallies`` and ``stats`` sums per player: schemas/METRICS.md, Decisions)."""

    discards: int = 0
    efficient: int = 0  # discards as efficient as the best (same shanten, no fewer live tiles)
    top: int = 0  # decisions where the policy's first choice was made
    decisions: int = 0
    clearly_worse: int = 0
    missed_wins: int = 0  # a win passed (on a discard, a robbed kong, or by self-draw)
    void_kept: int = 0  # a tile outside the void discarded while holding one of the void suit
    deal_ins: int = 0  # discards somebody won on
    avoidable_deal_ins: int = 0  # ... while a discard of danger 0 at no worse shanten was there (avoidable)
    judged_discards: int = 0  # discards whose options differ in efficiency (not every one is as efficient)
    judged_efficient: int = 0  # ... whose chosen tile was as efficient as the best (efficient)
    win_chances: int = 0  # decisions where a win was among the options (taken or not)
    void_held: int = 0  # discards made while holding a tile of the declared void suit (void_kept: of them)


SUMMARY_FIELDS: Final = (
    "decisions",
    "top",
    "discards",
    "efficient",
    "clearly_worse",
    "missed_wins",
    "void_kept",
    "deal_ins",
    "avoidable_deal_ins",
    "judged_discards",
    "judged_efficient",
    "win_chances",
    "void_held",
)


def summarize(decisions: Sequence[Decision], seats: int) -> list[SeatSummary]:
    """Per seat: the counts of :class:`SeatSummary`."""
    rows = [dict.fromkeys(SUMMARY_FIELDS, 0) for _ in range(seats)]
    for d in decisions:
        r = rows[d.seat]
        r["decisions"] += 1
        r["top"] += d.chosen.rank == 1
        r["clearly_worse"] += d.better is not None
        if any(o.action == "hu" for o in d.options):
            r["win_chances"] += 1
            r["missed_wins"] += d.chosen.action != "hu"
        if d.kind == "turn" and d.chosen.action == "discard":
            discards = [o for o in d.options if o.action == "discard"]
            r["discards"] += 1
            matched = efficient(discards, d.chosen)
            r["efficient"] += matched
            if not all(efficient(discards, o) for o in discards):
                r["judged_discards"] += 1
                r["judged_efficient"] += matched
            if d.void is not None and any(o.tile // 9 == d.void for o in discards):
                r["void_held"] += 1
                r["void_kept"] += d.chosen.tile // 9 != d.void
            if d.dealt_in:
                r["deal_ins"] += 1
                r["avoidable_deal_ins"] += avoidable(discards, d.chosen)
    return [SeatSummary(**r) for r in rows]


def avoidable(discards: Sequence[Option], chosen: Option) -> bool:
    """Was a deal-in on ``chosen`` avoidable from what the seat could see: another discard of danger 0 (safe by
    the public record, :func:`pipeline.game.policy.danger_of`) at no worse shanten? Not the collusion screen's
    safe alternative (:class:`~pipeline.game.evidence.Evidence`), which knows every hand."""
    return chosen.danger > 0 and any(o.danger == 0 and o.shanten <= chosen.shanten for o in discards)


def efficient(discards: Sequence[Option], chosen: Option) -> bool:
    """Is ``chosen`` as efficient as the best discard: the lowest shanten, and no fewer live tiles than any
    discard of that shanten? (Danger and value left out: hand efficiency alone.)"""
    best = min(o.shanten for o in discards)
    most = max(o.live for o in discards if o.shanten == best)
    return chosen.shanten == best and chosen.live >= most
