"""A reference policy for Sichuan mahjong: every legal option of a decision, ranked by rules anyone can check.

What it is: a *yardstick*. For a decision point (a discard or a kong on one's turn, a win, pong, kong or pass on
somebody's discard, the 定缺 void and the 换三张 exchange) it lists the legal options with, per option,

- ``shanten``: 向听 of the hand after it (tiles of the void suit left out: they must go whatever happens);
- ``live``: the improving tiles still unseen by the deciding seat (ukeire: for each kind that lowers the shanten
  of the hand after the option, ``4 − copies the seat can see`` of it: its own hand, every river, every meld);
- ``danger``: a transparent estimate of dealing in, from what the seat can see (:func:`danger_of`);
- ``value``: a rough count of the fan in reach (:func:`value_of`): 根, one suit or nearly (清一色), pairs towards
  对对胡 and 七对;

and ranks them by a stated key (:func:`rank_key`), ties broken by the option's tile kind, then its kind of action
(in :data:`ACTIONS` order): the same view always gives the same ranking, and nothing is random.

What it is not: a strong player. It looks one step ahead (shanten and live tiles), it never reads a
particular opponent's hand from their discards beyond the public safety rules below, its value count is rough,
and it has no notion of score, seat order or the match. A player who departs from it may be right; a player
who departs from it *often*, in the same direction, is the thing to look at. It reads only what the deciding
seat could see (:class:`View`), never another seat's concealed tiles.

Danger, honestly. Sichuan has no 振听 (furiten): an opponent may win on a tile it discarded itself, so the
riichi reading "its own discards are safe" (现物) does not hold, nor does 筋 (suji) reasoning, which rests on it.
What does hold, for an opponent still in the hand that shows a ready signal (:data:`READY_MELDS` melds or more,
or :data:`READY_RIVER` discards or more):

- a tile of its void suit cannot complete its hand: safe (0) against it;
- a tile discarded by anybody since its last draw, which it did not win on: safe against it, certainly under
  过手胡 (``pass_win_rule``: after passing a win it may not win on a discard before its next draw), presumptively
  without (in 血战 a player nearly always takes a win);
- otherwise, the number of ways a hidden hand could wait on it, from the copies the seat cannot see (a single
  or pair wait on the tile, and the two-tile shapes of its suit that it completes, :func:`wait_ways`). A tile
  whose every neighbour and copy is in view counts 0 (壁, no chance).

The danger of an option is the sum over the opponents that show a ready signal; 0 when none does.

The ranking (:func:`rank_key`):

- a win (胡) first, always: in 血战到底 a win is paid at once and ends the seat's risk for the hand; the rare
  reasons to pass one (chasing a bigger hand early) are not modelled, so a pass of a win is always "worse";
- a discard of a void-suit tile before any other (it can never be part of a win: a 花猪 risk until gone), unless
  folding (below), where the safest tile goes first and a void-suit tile only before others as safe;
- a kong that keeps the hand's shanten (it pays at once and adds a 根) before the discards; a pong or a direct
  kong on a discard only when it lowers the shanten (the hand after the call's best discard), else pass;
- otherwise by shanten, danger, live tiles (more first), value (more first); but when the best discard leaves
  the hand :data:`FOLD_SHANTEN` or more from ready and an opponent shows a ready signal, by danger first
  (folding).

定缺 (:func:`rank_voids`): the suit whose absence leaves the hand closest to ready, then the fewest tiles of it,
then fewest pairs, then suit order (m, p, s). 换三张 (:func:`rank_exchanges`): per suit of three or more tiles, its
three least connected tiles; suits ranked by the shanten of the ten tiles left (their best void), then the
fewest tiles of the suit (it becomes the void), then suit order.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from pipeline.game.events import Discard, Event, Hu, Kong, Pong
from pipeline.game.state import HandState, IllegalAction
from pipeline.rules.hand import Meld, code_step, improving_mask, shanten_of_codes, suit_codes

Action = Literal["hu", "kong", "pong", "discard", "pass", "void", "exchange"]
ACTIONS: Final[tuple[str, ...]] = ("hu", "kong", "pong", "discard", "pass", "void", "exchange")
READY_MELDS: Final = 2  # an opponent with this many melds or more shows a ready signal
READY_RIVER: Final = 10  # ... or with this many discards or more
FOLD_SHANTEN: Final = 3  # this far from ready or further, with a ready signal at the table: safety first
FLUSH_NEAR: Final = 3  # 清一色 in reach: at most this many tiles outside the longest suit
CLEARLY_LIVE: Final = 4  # a review calls an option clearly better with this many more live tiles (same shanten)


@dataclass(frozen=True, slots=True)
class Opponent:
    """What the deciding seat sees of one opponent."""

    seat: int
    void: int | None
    melds: int
    discards: int
    won: bool
    passed: frozenset[int]  # kinds discarded by anybody since its last draw

    @property
    def signals_ready(self) -> bool:
        return not self.won and (self.melds >= READY_MELDS or self.discards >= READY_RIVER)


@dataclass(frozen=True, slots=True)
class View:
    """A decision point as the deciding seat sees it."""

    seat: int
    counts: tuple[int, ...]  # its concealed tiles, 27 counts
    melds: tuple[Meld, ...]
    void: int | None
    visible: tuple[int, ...]  # copies of each kind it can see: its hand, every river, every meld
    opponents: tuple[Opponent, ...]
    left: int  # tiles in the wall


@dataclass(frozen=True, slots=True)
class Option:
    """One legal option and its figures; ``rank`` 1 is the policy's choice."""

    action: Action
    tile: int  # the tile discarded, claimed, konged or won on; the suit for a void; -1 for an exchange
    event: Event | None  # the state's event (None for a pass, a void or an exchange)
    shanten: int
    live: int
    danger: int
    value: int
    rank: int = 0
    tiles: tuple[int, ...] = ()  # an exchange's three tiles


def view_of(state: HandState, seat: int) -> View:
    """What ``seat`` can see of ``state``: the public record and its own tiles, nothing else."""
    opponents = []
    for other in range(state.n):
        if other == seat:
            continue
        opponents.append(
            Opponent(
                other,
                state.void[other],
                len(state.melds[other]),
                len(state.rivers[other]),
                state.won[other],
                frozenset(passed_since_draw(state.events, other)),
            )
        )
    return View(
        seat,
        tuple(state.counts[seat]),
        tuple(state.melds[seat]),
        state.void[seat],
        tuple(state.visible(seat)),
        tuple(opponents),
        state.left,
    )


def passed_since_draw(events: Sequence[Event], opp: int) -> list[int]:
    """The tiles discarded by anybody since ``opp``'s last draw, latest first (safe against ``opp``: it did not win
    on them, and under 过手胡 may not win on any discard before it draws; the simulator's careful bots read it too)."""
    out = []
    for ev in reversed(events):
        if ev.t == "draw" and ev.seat == opp:
            break
        if ev.t == "discard":
            out.append(ev.tile)
    return out


# ------------------------------------------------------------------------------------------------ the figures
def wait_ways(unseen: Sequence[int], k: int) -> int:
    """Ways a hand hidden among the ``unseen`` copies could wait on ``k``: a single or pair wait on it (its
    unseen copies, twice), and each two-tile shape of its suit that it completes (products of unseen copies)."""
    rank = k % 9
    ways = unseen[k] * 2
    if 1 <= rank <= 7:
        ways += unseen[k - 1] * unseen[k + 1]
    if rank >= 2:
        ways += unseen[k - 2] * unseen[k - 1]
    if rank <= 6:
        ways += unseen[k + 1] * unseen[k + 2]
    return ways


def danger_of(view: View) -> list[int]:
    """The danger of discarding each kind (module docstring): 0 for every kind when no opponent signals ready."""
    danger = [0] * 27
    threats = [o for o in view.opponents if o.signals_ready]
    if not threats:
        return danger
    unseen = [max(0, 4 - n) for n in view.visible]
    ways = [wait_ways(unseen, k) for k in range(27)]
    for opp in threats:
        for k in range(27):
            if k in opp.passed or (opp.void is not None and k // 9 == opp.void):
                continue
            danger[k] += ways[k]
    return danger


def value_of(counts: Sequence[int], melds: Sequence[Meld], void: int | None) -> int:
    """A rough count of the fan in reach, from the tiles held and melded outside the void: one per 根 (a kind held
    or melded four times); 清一色 +2 when they are of one suit, +1 when at most :data:`FLUSH_NEAR` are outside
    the longest suit; 对对胡 or 七对 +1 with four or more kinds held two or more times.

    >>> from pipeline.rules.tiles import counts_of, parse_tiles
    >>> value_of(counts_of(parse_tiles("1111m23455m789m1p")), [], 2)  # a 根, 清一色 one tile away
    2
    >>> value_of(counts_of(parse_tiles("11m22m33m44m5567m")), [Meld("pong", 8)], 2)  # one suit, five pairs
    3
    """
    full = list(counts)
    for m in melds:
        full[m.tile] += m.size
    roots = 0
    pairs = 0
    per_suit = [0, 0, 0]
    for k in range(27):
        n = full[k]
        if not n or k // 9 == void:
            continue
        per_suit[k // 9] += n
        roots += n == 4
        pairs += n >= 2
    total = per_suit[0] + per_suit[1] + per_suit[2]
    outside = total - max(per_suit)
    flush = 2 if total and outside == 0 else 1 if outside <= FLUSH_NEAR else 0
    return roots + flush + (1 if pairs >= 4 else 0)


def _live(codes: list[int], counts: Sequence[int], n_melds: int, void: int | None, visible: Sequence[int]) -> int:
    """Unseen copies of the kinds that lower the shanten of the hand ``codes`` (``counts``: the same hand)."""
    live = 0
    for k in _improving(codes[0], codes[1], codes[2], n_melds, void):
        n = visible[k]
        if n < 4:
            live += 4 - n
    return live


# The kinds that improve a hand depend on the hand alone (its suits' codes, melds and void), and the same hands come
# back (a drawn tile thrown at once leaves the hand of the turn before): kept, the least recently used dropped first.
@functools.lru_cache(maxsize=1 << 18)
def _improving(m: int, p: int, s: int, n_melds: int, void: int | None) -> tuple[int, ...]:
    """The kinds whose draw lowers the shanten of the hand of suit codes ``m``, ``p``, ``s``
    (:func:`~pipeline.rules.hand.improving_mask`), kept."""
    mask = improving_mask(m, p, s, n_melds, void)
    return tuple(k for k in range(27) if (mask >> k) & 1)


# ------------------------------------------------------------------------------------------------ ranking
def rank_key(option: Option, best_shanten: int, threatened: bool, void_first: bool = False) -> tuple[int, ...]:
    """The sort key of an option on a seat's turn (smaller first; the module docstring): a win; when folding,
    danger; a void-suit discard (``void_first``: the seat holds void-suit tiles); shanten; a kong before a
    discard of the same shanten; danger; live tiles (more first); value (more first); the tile; the action."""
    win = 0 if option.action == "hu" else 1
    void = 0 if void_first else 1
    fold = option.danger if threatened and best_shanten >= FOLD_SHANTEN else 0
    kong = 0 if option.action == "kong" else 1
    order = ACTIONS.index(option.action)
    return (win, fold, void, option.shanten, kong, option.danger, -option.live, -option.value, option.tile, order)


def _ranked(options: list[Option], view: View, holds_void: bool) -> list[Option]:
    threatened = any(o.signals_ready for o in view.opponents)
    best = min((o.shanten for o in options if o.action != "hu"), default=0)

    def key(o: Option) -> tuple[int, ...]:
        void_tile = holds_void and o.action == "discard" and o.tile // 9 == view.void
        return rank_key(o, best, threatened, void_tile)

    ordered = sorted(options, key=key)
    return [_with_rank(o, i + 1) for i, o in enumerate(ordered)]


def _with_rank(o: Option, rank: int) -> Option:
    return Option(o.action, o.tile, o.event, o.shanten, o.live, o.danger, o.value, rank, o.tiles)


def rank_turn(view: View, legal: Sequence[Event]) -> list[Option]:
    """The ranked options of a seat on its turn, holding a full hand: ``legal`` is what the state allows
    (:meth:`~pipeline.game.state.HandState.turn_options`): wins, discards, kongs."""
    counts = list(view.counts)
    n_melds = len(view.melds)
    void = view.void
    danger = danger_of(view)
    codes = suit_codes(counts)
    holds_void = void is not None and any(counts[void * 9 : void * 9 + 9])
    out: list[Option] = []
    for ev in legal:
        if isinstance(ev, Hu):
            out.append(Option("hu", ev.tile, ev, -1, 0, 0, value_of(counts, view.melds, void)))
        elif isinstance(ev, Discard):
            k = ev.tile
            suit, step = k // 9, code_step(k)
            codes[suit] -= step
            counts[k] -= 1
            sh = shanten_of_codes(codes, n_melds, void)
            live = _live(codes, counts, n_melds, void, view.visible)
            value = value_of(counts, view.melds, void)
            counts[k] += 1
            codes[suit] += step
            out.append(Option("discard", k, ev, sh, live, danger[k], value))
        else:  # a kong (turn_options gives wins, discards and kongs)
            assert isinstance(ev, Kong), ev
            k = ev.tile
            removed = 4 if ev.kind == "concealed" else 1
            after = list(counts)
            after[k] -= removed
            melds = list(view.melds)
            if ev.kind == "concealed":
                melds.append(Meld("concealed", k))
            else:
                melds = [Meld("added", k, m.source) if m.tile == k else m for m in melds]
            after_codes = suit_codes(after)
            sh = shanten_of_codes(after_codes, len(melds), void)
            live = _live(after_codes, after, len(melds), void, view.visible)
            # a kong draws a replacement: compare with the hand before a discard, one tile longer (shanten ≥ 0)
            out.append(Option("kong", k, ev, sh, live, 0, value_of(after, melds, void)))
    return _ranked(out, view, holds_void)


def rank_claim(view: View, tile: int, legal: Sequence[Event]) -> list[Option]:
    """The ranked options of a seat on another's discard (or added kong) of ``tile``: ``legal`` is what the
    state allows (:meth:`~pipeline.game.state.HandState.claim_options`); a pass is always an option."""
    counts = list(view.counts)
    void = view.void
    n_melds = len(view.melds)
    codes = suit_codes(counts)
    now = shanten_of_codes(codes, n_melds, void)
    value_now = value_of(counts, view.melds, void)
    out = [Option("pass", tile, None, now, _live(codes, counts, n_melds, void, view.visible), 0, value_now)]
    for ev in legal:
        if isinstance(ev, Hu):
            after = list(counts)
            after[tile] += 1
            out.append(Option("hu", tile, ev, -1, 0, 0, value_of(after, view.melds, void)))
        else:  # a pong or a direct kong (claim_options gives wins, pongs and kongs)
            assert isinstance(ev, (Pong, Kong)), ev
            need = 2 if isinstance(ev, Pong) else 3
            after = list(counts)
            after[tile] -= need
            meld = Meld("pong", tile, ev.source) if isinstance(ev, Pong) else Meld("direct", tile, ev.source)
            melds = (*view.melds, meld)
            after_codes = suit_codes(after)
            n_after = len(melds)
            if isinstance(ev, Pong):  # a pong is followed by a discard: the best one's shanten and live tiles
                best: tuple[int, int] | None = None
                for k in range(27):
                    if not after[k]:
                        continue
                    suit, step = k // 9, code_step(k)
                    after_codes[suit] -= step
                    after[k] -= 1
                    sh = shanten_of_codes(after_codes, n_after, void)
                    if best is None or sh <= best[0]:
                        got = (sh, _live(after_codes, after, n_after, void, view.visible))
                        best = got if best is None or got[0] < best[0] or got[1] > best[1] else best
                    after[k] += 1
                    after_codes[suit] += step
                sh, live = best if best is not None else (shanten_of_codes(after_codes, n_after, void), 0)
            else:  # a kong draws a replacement first: the hand as it stands, one meld more
                sh = shanten_of_codes(after_codes, n_after, void)
                live = _live(after_codes, after, n_after, void, view.visible)
            action: Action = "pong" if isinstance(ev, Pong) else "kong"
            out.append(Option(action, tile, ev, sh, live, 0, value_of(after, melds, void)))
    ordered = sorted(out, key=lambda o: _claim_key(o, now))
    return [_with_rank(o, i + 1) for i, o in enumerate(ordered)]


def _claim_key(o: Option, now: int) -> tuple[int, ...]:
    """A win; then a call that helps (a kong that keeps the shanten ``now``, a pong that lowers it), kong first;
    then the pass; then a call that does not help."""
    if o.action == "hu":
        return (0, 0, 0)
    if o.action == "pass":
        return (2, 0, 0)
    helps = o.shanten <= now if o.action == "kong" else o.shanten < now
    return (1 if helps else 3, o.shanten, ACTIONS.index(o.action))


def rank_voids(hand: Sequence[int]) -> list[Option]:
    """定缺: the three suits ranked for ``hand`` (tile kinds, 13 or 14 of them) as the void."""
    counts = [0] * 27
    for k in hand:
        counts[k] += 1
    codes = suit_codes(counts)
    out = []
    for suit in range(3):
        part = counts[suit * 9 : suit * 9 + 9]
        sh = shanten_of_codes(codes, 0, suit)
        pairs = sum(1 for n in part if n >= 2)
        out.append((sh, sum(part), pairs, suit))
    out.sort()
    return [Option("void", suit, None, sh, 0, 0, pairs, i + 1) for i, (sh, _n, pairs, suit) in enumerate(out)]


def connections(tiles: Sequence[int], kind: int) -> int:
    """How many other tiles of ``tiles`` of the suit of ``kind`` sit within two ranks of it (a pair counts
    double): the exchange's measure of how little a tile is worth keeping (the simulator's bots use it too)."""
    others = list(tiles)
    others.remove(kind)
    return sum(2 if k == kind else 1 for k in others if abs(k - kind) <= 2)


def rank_exchanges(hand: Sequence[int]) -> list[Option]:
    """换三张: per suit holding three or more tiles of ``hand``, its three least connected tiles (ties by the
    lower kind), the suits ranked (module docstring); ``tile`` is the suit."""
    rows = []
    for suit in range(3):
        tiles = sorted(k for k in hand if k // 9 == suit)
        if len(tiles) < 3:
            continue
        give = tuple(sorted(sorted(tiles, key=lambda k: (connections(tiles, k), k))[:3]))
        rows.append((exchange_shanten(hand, give), len(tiles), suit, give))
    rows.sort()
    return [Option("exchange", suit, None, sh, 0, 0, 0, i + 1, give) for i, (sh, _n, suit, give) in enumerate(rows)]


def exchange_shanten(hand: Sequence[int], give: Sequence[int]) -> int:
    """向听 of the tiles of ``hand`` left after giving ``give``, with their best void."""
    counts = [0] * 27
    for k in hand:
        counts[k] += 1
    for k in give:
        counts[k] -= 1
    codes = suit_codes(counts)
    return min(shanten_of_codes(codes, 0, v) for v in range(3))


def decide(state: HandState, seat: int) -> list[Option]:
    """The ranked options of ``seat`` at ``state``: on its turn (:func:`rank_turn`) or on a discard or added
    kong it may claim (:func:`rank_claim`); empty when it has no decision to make. The options are exactly the
    state's legal ones (plus the pass of a claim)."""
    if state.phase == "discard" and seat == state.turn:
        return rank_turn(view_of(state, seat), state.turn_options(seat))
    if state.phase in ("claim", "rob") and state.window is not None:
        legal = state.claim_options(seat)
        if legal:
            return rank_claim(view_of(state, seat), state.window.tile, legal)
    return []


def clearly_better(options: Sequence[Option], chosen: Option, void: int | None = None) -> Option | None:
    """The policy's first choice when it was clearly better than ``chosen`` (else ``None``). Clearly, by these
    thresholds and no other:

    - a win was passed (the first choice is a win, ``chosen`` is not); a pong, kong or pass is otherwise never
      called clearly worse (keeping the hand concealed, or the kong's risk, is a matter of taste);
    - a tile outside the ``void`` suit was discarded while a void-suit discard was ranked first;
    - the first choice's shanten is lower, at no more danger;
    - the same shanten at no more danger, with at least :data:`CLEARLY_LIVE` more live tiles;
    - the first choice is safe (danger 0) and ``chosen`` is not, at no worse shanten.

    Ranks alone are no verdict: options of the same shanten and nearly the same live tiles are a matter of taste.
    """
    if not options or (chosen.rank == 1 and chosen.shanten <= options[0].shanten):
        return None  # the first choice (an exchange of its suit's other tiles: only when they do no worse)
    best = options[0]
    if best.action == "hu":
        return best
    if chosen.action in ("hu", "pass", "pong", "kong") or best.action in ("pass", "pong", "kong"):
        return None  # a call or a pass, a kong or not: matters of taste (a missed win is the one said above)
    if void is not None and best.action == "discard" and best.tile // 9 == void and chosen.tile // 9 != void:
        return best
    if best.danger <= chosen.danger:
        if best.shanten < chosen.shanten:
            return best
        if best.shanten == chosen.shanten and best.live >= chosen.live + CLEARLY_LIVE:
            return best
    if best.danger == 0 < chosen.danger and best.shanten <= chosen.shanten:
        return best
    return None


DIFFICULTY_CAP: Final = 8  # difficulty() counts near-best options up to this many


def difficulty(state: HandState, seat: int) -> int:
    """How hard ``seat``'s decision at ``state`` is: the options :func:`clearly_better` cannot call clearly worse
    than the first choice, less one (0: one good option, a forced move or a win; at most
    :data:`DIFFICULTY_CAP`). The decision time's yardstick (the simulator's timing model, the think-time screen)."""
    options = decide(state, seat)  # none or one: 0 (the sum below is empty)
    void = state.void[seat]
    return min(DIFFICULTY_CAP, sum(1 for o in options[1:] if clearly_better(options, o, void) is None))


def difficulties(start: HandState, events: Sequence[Event]) -> list[int | None]:
    """Per event, the difficulty of the decision it made (None for a draw, a hidden hand's, and after an illegal
    event: the illegal event's own decision point is judged), replaying ``events`` on ``start`` (a state at the
    start of play, changed in place)."""
    out: list[int | None] = []
    for event in events:
        hidden = start.hidden[event.seat]  # an observer record's other hands: their options are not known
        out.append(None if event.t == "draw" or hidden else difficulty(start, event.seat))
        try:
            start.apply(event)
        except IllegalAction:
            out += [None] * (len(events) - len(out))
            break
    return out
