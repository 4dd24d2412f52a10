"""The audits' evidence, worked out while a hand is replayed: an observer the hand state calls at a few hooks.

:class:`Evidence` is what ingest asks the validator for (``validate(..., evidence=True)``) and stores beside the
replay's rows; the ``validate`` command and the simulator never build one, and a hand state without one plays by
the same rules at the same cost. It reads the state it is handed and never changes it:

- ``dealt``: each seat's deal before any exchange (the stacked-deal screen and the exchange signals), as
  :func:`~pipeline.game.start.start_hand` dealt it;
- ``could_kong_at``: per discard, the other seats holding three of its tile concealed (events.could_kong);
- ``safe_alternative_at`` and ``cost_at``: per discard another seat could win on (or kong), whether the
  discarder held a safe, as-good choice and how many steps (shanten) further from ready the discard left it
  (the collusion screen's evidence);
- ``waits_at``: per discard that leaves the hand ready with another choice of waits, the judged choice (the
  information screen's anticipation evidence, pipeline/audit/anticipation.py);
- ``ready_turn``: per seat, the turn (:class:`~pipeline.game.events.TurnCount`, 巡目) in which its
  hand first stood ready (听牌: a winning tile, its void suit and the two-suit rule respected, as 查叫 judges
  it): looked at as it rests, at the start of play (a seat other than the dealer: turn 0) and after each of its
  discards, and at each of its wins (a win the hand was not seen ready before: 天胡, or ready only between a
  kong and its replacement draw, is ready in the turn of the win). The turn metrics (schemas/METRICS.md).
- ``luck``: per seat, its draw luck (:data:`LUCK`): at each draw from the wall, what the tile drawn gave less its
  mean over the tiles the wall held (the luck-adjusted net, schemas/METRICS.md#luck).

The hooks: :meth:`Evidence.deal` once the deal is dealt (before the exchange), :meth:`Evidence.start` once play
starts, :meth:`Evidence.before_draw` once a draw is verified (not yet applied), :meth:`Evidence.before_discard`
once a discard is verified (the hand still holds the tile), :meth:`Evidence.after_discard` once it is applied (its
claim window open), :meth:`Evidence.win` at each win. An observer record (hidden hands) has none: the evidence
needs every hand, and its counts are those of the hands as the state knows them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.game.events import Discard, TurnCount
from pipeline.game.state import HandState, Observer
from pipeline.rules.fan import WinHand, score
from pipeline.rules.hand import (
    code_step,
    improving_mask,
    shanten_after_discards,
    shanten_of_codes,
    win_mask_of_suits,
)

# A judged choice of waits (:meth:`Evidence.before_discard`): the position of the wait chosen among the options, and
# each option as (the kind discarded, its winning kinds as bits, the copies of them the discarder could not see, the
# copies still in the wall).
WaitOption = tuple[int, int, int, int]
WaitChoice = tuple[int, tuple[WaitOption, ...]]

# Draw luck (:meth:`Evidence.before_draw`, schemas/METRICS.md#luck): per seat, sums over the draws from the wall of
# ``got − expected``: a function of the tile drawn less its mean over the tiles the wall still held, which a fair
# shuffle draws alike. Every term has mean zero given everything before it, whatever anybody decides, so that a
# multiple of each sum can be taken from the net without taking any skill out (a control variate).
LUCK = (
    "win",  # own draws while ready: what a self-drawn win on the tile would take (per payer × payers), in bases
    "paid",  # the other seats' draws while ready: this seat's share of what their self-drawn win would take
    "ready",  # own draws one tile from ready (1-shanten): 1 for a tile that makes the hand ready
    "rivals",  # the other seats' draws one tile from ready: this seat's share (÷ seats still in) of their "ready"
    "kong",  # own draws: 1 for the fourth tile of a concealed triplet or of a pong held
    "fed",  # the other seats' draws while this seat is ready: 1 for a tile it wins on (theirs to discard or keep)
)
WIN, PAID, READY, RIVALS, KONG, FED = range(len(LUCK))
# Draws further from ready (a tile that lowers a shanten of 2 or more) are not looked at: a 2-shanten seat's own draws
# are worth 0.3% of the net's variance on simulated rooms (tools/luck_lab.py), for a third more ingest time (finding
# the tiles that help takes ~20 shanten each).


class Evidence(Observer):
    """What the audits need of one replayed hand beyond its rules (see the module): filled in by the hooks the
    hand state calls (:class:`~pipeline.game.state.Observer`), read once play has stopped."""

    def __init__(self) -> None:
        self.dealt: list[list[int]] | None = None  # each seat's deal, before any exchange
        self.gave: dict[int, tuple[int, tuple[int, ...]]] = {}  # seat → (receiver, the kinds it gave at 换三张)
        self.could_kong_at: dict[int, list[int]] = {}  # discard → the other seats holding three of its tile
        self.safe_alternative_at: dict[int, bool] = {}  # dangerous discard → was a safe, as-good choice held
        # discard somebody could win on or kong → how many steps (shanten) further from ready it left its discarder
        # than its best discard
        self.cost_at: dict[int, int] = {}
        self.waits_at: dict[int, WaitChoice] = {}  # discard → its judged choice of waits
        self.ready_turn: dict[int, int] = {}  # seat → the turn its hand first stood ready (never ready: absent)
        self._turns: TurnCount | None = None  # each seat's turns, counted along the events as play goes on
        # per seat, its draw luck (:data:`LUCK`, in its order): None until play starts
        self.luck: list[list[float]] | None = None
        self._values: dict[tuple[int, int, int, int, int, bool, bool], dict[int, float]] = {}
        self._improving: dict[tuple[int, int, int, int, int | None], int] = {}  # 1-shanten hand → its improving tiles

    # ------------------------------------------------------------------------------------ hooks
    def deal(self, hands: Sequence[Sequence[int]], given: Sequence[Sequence[int] | None] | None, offset: int) -> None:
        """The deal as dealt (``hands``, before the exchange), and the exchange: ``given[seat]`` went to seat
        ``(seat + offset) % n`` (``given``: ``None`` without one)."""
        self.dealt = [list(h) for h in hands]
        if given is not None:
            n = len(hands)
            self.gave = {s: ((s + offset) % n, tuple(t)) for s, t in enumerate(given) if t is not None}

    def start(self, state: HandState) -> None:
        """Play starts: a seat whose hand is dealt ready (after the exchange) is ready at turn 0 (the dealer, holding
        fourteen tiles, is not at rest until its first discard)."""
        self._turns = TurnCount(state.dealer, state.n)
        for seat in range(state.n):
            if seat != state.dealer and state.win_mask(seat):
                self.ready_turn[seat] = 0
        self.luck = [[0.0] * len(LUCK) for _ in range(state.n)]

    def before_draw(self, state: HandState, seat: int, tile: int, index: int) -> None:
        """``seat`` draws ``tile`` from the wall: each seat's draw luck (:data:`LUCK`) against the tiles the wall
        held, the tiles nobody has been dealt or drawn (every hand is known: an observer record has no evidence)."""
        luck = self.luck
        if luck is None:  # a state started without start_hand's hooks
            luck = self.luck = [[0.0] * len(LUCK) for _ in range(state.n)]
        left, full, seen = state.left, state.full, state.seen  # full − seen: the tiles still in the wall
        n, won = state.n, state.won
        masks = [0 if won[o] else state.win_mask(o) for o in range(n)]
        others = [o for o in range(n) if o != seat and not won[o]]
        mine = masks[seat]
        if mine:
            values = self._self_draw_values(state, seat, mine)
            expected = 0.0
            for k, v in values.items():
                expected += (full[k] - seen[k]) * v
            d = len(others) * (values.get(tile, 0.0) - expected / left)
            luck[seat][WIN] += d
            for o in others:
                luck[o][PAID] -= d / len(others)
        h = state._hands[seat]
        if not mine:
            n_melds, void = len(state.melds[seat]), state.void[seat]
            if shanten_of_codes([h.m, h.p, h.s], n_melds, void) == 1:  # further from ready: not looked at (see LUCK)
                key = (h.m, h.p, h.s, n_melds, void)
                better = self._improving.get(key)
                if better is None:
                    better = self._improving[key] = improving_mask(h.m, h.p, h.s, n_melds, void)
                d = ((better >> tile) & 1) - _share(better, full, seen) / left
                luck[seat][READY] += d
                for o in others:
                    luck[o][RIVALS] -= d / len(others)
        kongs = _triplets(h.m) | _triplets(h.p) << 9 | _triplets(h.s) << 18
        for meld in state.melds[seat]:
            if meld.kind == "pong":
                kongs |= 1 << meld.tile
        if kongs:
            luck[seat][KONG] += ((kongs >> tile) & 1) - _share(kongs, full, seen) / left
        for o in others:
            if masks[o]:
                luck[o][FED] += ((masks[o] >> tile) & 1) - _share(masks[o], full, seen) / left

    def _self_draw_values(self, state: HandState, seat: int, mask: int) -> dict[int, float]:
        """Per winning tile of ``seat``'s ready hand (``mask``) still in the wall, what one payer would pay for a
        self-drawn win on it, in bases (the situational 天胡 and 地胡 left out): kept for the hand, which often stays
        as it is (a kind gone from the wall never comes back to it)."""
        h = state._hands[seat]
        after_kong, last = bool(state.kong_chain), state.left == 1
        key = (seat, h.m, h.p, h.s, len(state.melds[seat]), after_kong, last)
        values = self._values.get(key)
        if values is None:
            values = {}
            counts = list(state.counts[seat])
            melds, void, rules = tuple(state.melds[seat]), state.void[seat], state.rules
            full, seen = state.full, state.seen
            for k in range(27):
                if (mask >> k) & 1 and full[k] > seen[k]:  # a kind still in the wall (else it cannot be drawn)
                    counts[k] = counts[k] + 1
                    win = WinHand(
                        counts27=tuple(counts),
                        melds=melds,
                        win_tile=k,
                        void=void,
                        self_drawn=True,
                        after_kong=after_kong,
                        last_tile=last,
                    )
                    values[k] = score(win, rules).per_payer / rules.base
                    counts[k] = counts[k] - 1
            self._values[key] = values
        return values

    def win(self, state: HandState, seat: int, index: int) -> None:
        """A win: a hand not seen ready before was ready in the turn of its win."""
        if seat not in self.ready_turn:
            self.ready_turn[seat] = self._turn(state, seat)

    def _turn(self, state: HandState, seat: int) -> int:
        """``seat``'s turn now: the count advanced along the events played since it was last asked."""
        if self._turns is None:  # a state started without start_hand's hooks
            self._turns = TurnCount(state.dealer, state.n)
        return self._turns.advance(state.events)[seat]

    def before_discard(self, state: HandState, seat: int, tile: int, index: int) -> None:
        """``seat``'s discard of ``tile`` at event ``index`` is verified, not yet applied: judge its waits."""
        choice = judge_waits(state, seat, tile, self.gave.get(seat))
        if choice is not None:
            self.waits_at[index] = choice

    def after_discard(self, state: HandState, seat: int, tile: int, index: int, could_win: bool) -> None:
        """``seat`` has discarded ``tile`` at event ``index`` (``could_win``: another seat can win on it): who
        could kong it, and what it cost."""
        if seat not in self.ready_turn and state.win_mask(seat):  # the hand at rest: ready?
            self.ready_turn[seat] = self._turn(state, seat)
        counts = state.counts
        kong: list[int] = []
        kongable = False  # a seat still in could kong it
        for o in range(state.n):
            if o != seat and counts[o][tile] == 3:
                kong.append(o)
                kongable = kongable or not state.won[o]
        self.could_kong_at[index] = kong
        if could_win or kongable:
            safe, cost = choice_cost(state, seat, tile)
            if could_win:
                self.safe_alternative_at[index] = safe
            self.cost_at[index] = cost


def _share(mask: int, full: Sequence[int], seen: Sequence[int]) -> int:
    """The tiles of the kinds in ``mask`` (bits) still in the wall: ``full`` less ``seen`` (copies per kind)."""
    total = 0
    while mask:
        low = mask & -mask
        k = low.bit_length() - 1
        total += full[k] - seen[k]
        mask ^= low
    return total


def _triplets(code: int) -> int:
    """The ranks a suit code (:func:`~pipeline.rules.hand.code_step`) holds three of, as bits (``1 << rank``).

    >>> from pipeline.rules.hand import suit_codes
    >>> from pipeline.rules.tiles import counts_of, parse_tiles
    >>> bin(_triplets(suit_codes(counts_of(parse_tiles("1112223333m")))[0]))
    '0b11'
    """
    threes = code & (code >> 1) & ~(code >> 2) & 0o111111111  # a field of 3 (0b011): its low bit
    if not threes:
        return 0  # most suits of most hands
    out = 0
    for rank in range(9):
        if (threes >> (3 * rank)) & 1:
            out |= 1 << rank
    return out


def judge_waits(
    state: HandState, seat: int, tile: int, passed: tuple[int, tuple[int, ...]] | None
) -> WaitChoice | None:
    """The information screen's anticipation evidence (pipeline/audit/anticipation.py), before ``seat`` discards
    ``tile``: when the discard leaves the hand ready and another legal discard would too, on other waits with the
    same count of copies the seat cannot see but a different count still in the wall, the options (else ``None``).

    What the seat sees: :meth:`~pipeline.game.state.HandState.visible`, and the tiles it gave at the exchange
    (``passed``: the receiver and the kinds), which it knows are in the receiver's hand until the receiver shows as
    many of the kind (a discard, a meld)."""
    h = state._hands[seat]
    void, melded, meld_suits = state.void[seat], len(state.melds[seat]) > 0, h.meld_suits
    m, p, s = h.m, h.p, h.s  # native ints (a list would box them): this runs on every discard
    suit, step = tile // 9, code_step(tile)
    if suit == 0:
        m = m - step
    elif suit == 1:
        p = p - step
    else:
        s = s - step
    if not win_mask_of_suits(m, p, s, meld_suits, melded, void):
        return None  # most discards leave the hand not ready: one look-up of its winning tiles says so
    counts = state.counts[seat]
    codes = [h.m, h.p, h.s]  # the hand before the discard
    masks: dict[int, int] = {}  # ready discard → its winning tiles as bits
    if codes[suit] == step and not (meld_suits >> suit) & 1:
        # The discard is the last tile of its suit, so every other discard keeps that suit (a void suit, or
        # a third): such a hand has no winning tile, yet may be one tile from a win by shape, which is what
        # ready means here; the shanten of each discard says so.
        for k, sh in shanten_after_discards(counts, len(state.melds[seat]), void).items():
            if sh == 0 and (k == tile or state.can_discard(seat, k)):
                ks, kstep = k // 9, code_step(k)
                codes[ks] = codes[ks] - kstep
                masks[k] = win_mask_of_suits(codes[0], codes[1], codes[2], meld_suits, melded, void)
                codes[ks] = codes[ks] + kstep
    else:
        # Otherwise a discard leaves the hand one tile from a win exactly when it has a winning tile (its
        # suits are those of the hand the discard of ``tile`` leaves, which has): a look-up each.
        for k in range(27):
            if counts[k]:
                m, p, s, kstep = h.m, h.p, h.s, code_step(k)
                if k < 9:
                    m = m - kstep
                elif k < 18:
                    p = p - kstep
                else:
                    s = s - kstep
                mask = win_mask_of_suits(m, p, s, meld_suits, melded, void)
                if mask and (k == tile or state.can_discard(seat, k)):
                    masks[k] = mask
    if len(masks) < 2 or tile not in masks:
        return None
    visible = state.visible(seat)
    if passed is not None:
        receiver, given = passed
        shown = [0] * len(visible)  # copies the receiver has shown: its discards (claimed or not) and its melds
        for ev in state.events:
            if isinstance(ev, Discard) and ev.seat == receiver:
                shown[ev.tile] = shown[ev.tile] + 1
        for meld in state.melds[receiver]:
            shown[meld.tile] = shown[meld.tile] + meld.size
        for k in set(given):
            visible[k] = visible[k] + max(0, given.count(k) - shown[k])
    full, seen = state.full, state.seen
    by_waits: dict[int, WaitOption] = {}
    chosen_mask = 0
    for k, mask in masks.items():
        if k == tile:
            chosen_mask = mask
        if mask in by_waits and k != tile:
            continue  # the same waits as an option already listed: one choice
        unseen = wall = 0
        for w in range(27):
            if (mask >> w) & 1:
                unseen = unseen + max(0, full[w] - visible[w])
                wall = wall + full[w] - seen[w]  # not dealt or drawn yet: still in the wall
        by_waits[mask] = (k, mask, unseen, wall)
    chosen = by_waits[chosen_mask]
    options = tuple(o for o in by_waits.values() if o[2] == chosen[2])
    if len(options) < 2 or len({o[3] for o in options}) < 2:
        return None
    return (options.index(chosen), options)


def choice_cost(state: HandState, seat: int, tile: int) -> tuple[bool, int]:
    """Having just discarded ``tile`` (a tile somebody can win on or kong), ``(safe, cost)``: did ``seat`` hold
    another tile that no opponent still in could win on and whose discard would have left its own hand as
    close to ready (shanten)? A discard with no such choice is forced, and forced discards are no evidence of
    feeding. And how many steps further from ready (shanten) the discard left the hand than the best discard
    it held (0: it was one of the best): a tile given up at a cost to one's own hand is the collusion screen's
    ``costly_feeding`` and the costly kong offers of ``kong_feeding`` (issue 37). Computed only for such
    discards, which are a few per hand."""
    n_melds, void = len(state.melds[seat]), state.void[seat]
    codes = state._hands[seat].codes()
    actual = shanten_of_codes(codes, n_melds, void)  # the hand after the discard
    counts = list(state.counts[seat])
    counts[tile] = counts[tile] + 1  # back to the hand the choice was made from
    codes[tile // 9] = codes[tile // 9] + code_step(tile)
    void_first = state.rules.void_discard_first and void is not None and any(counts[void * 9 : void * 9 + 9])
    dangerous = 0  # the tiles an opponent still in wins on, as bits
    for o in range(state.n):
        if o != seat and not state.won[o]:
            dangerous |= state.win_mask(o)
    safe, best = False, actual
    for k in range(27):
        if k == tile or not counts[k] or (void_first and k // 9 != void):
            continue
        suit, step = k // 9, code_step(k)
        codes[suit] = codes[suit] - step
        alternative = shanten_of_codes(codes, n_melds, void)
        codes[suit] = codes[suit] + step
        best = min(best, alternative)
        if alternative <= actual and not (dangerous >> k) & 1:
            safe = True
    return safe, actual - best
