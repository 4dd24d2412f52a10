"""The follower's engine: a sampling look-ahead AI that a cheater brings to the table (``--inject follow=N:P``),
and the built-in second yardstick of the assistance screen (``xuezhan assist --yardstick lookahead``).

It is *not* the reference policy (:mod:`pipeline.game.policy`, the screens' default yardstick) and it is stronger
than it and than the simulator's styles (measured: ``python -m tools.engine_strength``; README). Where the reference
ranks by rules (shanten, then danger, then live tiles), the engine plays the hand forward. For each candidate (the
discard kinds of the lowest shanten, at most ``width``, and the safest kind; the void suit first whenever it is
held; a kong; a pong with its best discards; a pass) it draws ``samples`` plausible worlds from what the seat can
see, the same worlds for every candidate (common random numbers: the options are compared on equal luck), plays its
own draws in each (keeping a draw that lowers its shanten, throwing the void suit first) for up to ``horizon``
rounds or until the hand is ready, and scores

    value = mean over the worlds of what the hand is worth once ready: the chance that one of the tiles it will
            still see (its draws, a ``ron`` share of the opponents' discards) completes it, from the rest of
            that world's wall, times the real fan count of each winning tile (自摸 paid by everybody still in)
            + a kong's payment now
            - the expected loss of dealing in with the tile discarded now (below)
            + 查大叫 at an empty wall (ready: paid by those who are not; not ready: pays those who are).

So it prefers live waits to dead ones, bigger hands to smaller at the same speed, and safe tiles where its own
chances are slim: judgements the one-step reference cannot make.

The worlds: the tiles the seat cannot see (every copy less its own hand, every river and every meld) are
shuffled into the opponents' concealed hands (13 − 3·melds tiles each) and the wall; an opponent that has
discarded a tile outside its declared void holds no tile of its void suit any more (Sichuan players throw the
void first), so those tiles go to the wall. The deal-in loss of a discard: per opponent still in, the chance it
is ready (from its river's length and its melds), times the share of the ways a hidden hand could wait on the
tile (:func:`pipeline.game.policy.wait_ways`, from the unseen copies; none for its void suit and for a tile passed
since its last draw), times the points of a typical win.

What the engine reads: :func:`sight` of the state, the public record and the seat's own tiles (the same as
:func:`pipeline.game.policy.view_of`, plus every river), never another seat's concealed tiles nor the wall's
order. ``width``, ``samples``, ``horizon`` and ``ron`` are its :class:`Settings`. It is deterministic given the
``rng`` it is handed (the simulator's; never the global one).

A win is always taken (paid at once and out of danger in 血战到底).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.game.events import Discard, Event, Hu, Kong, Pong
from pipeline.game.policy import passed_since_draw, wait_ways
from pipeline.game.state import HandState
from pipeline.rules.fan import WinHand, score
from pipeline.rules.hand import Meld, code_step, shanten_of_codes, suit_codes, win_mask_of_codes
from pipeline.rules.ruleset import RuleSet


@dataclass(frozen=True, slots=True)
class Settings:
    """What the engine's judgement is made of; the defaults are the simulator's followers' engine. Another
    setting is another engine of the same make (a helper's other version): ``xuezhan assist --yardstick
    lookahead:samples=48,horizon=6`` (:func:`pipeline.engines.load`)."""

    samples: int = 24  # worlds per decision, shared by its candidates
    horizon: int = 10  # rounds played ahead in each world
    width: int = 6  # discard kinds looked at (the lowest shanten first; the safest always)
    ready_waits: float = 1.7  # kinds a ready hand waits on, on average (the share of ways it waits on one)
    deal_in_fan: int = 2  # the fan of a typical win, for the deal-in loss
    ron: float = 0.6  # the share of the opponents' tiles that reach the river (they keep some, and fold)

    def __post_init__(self) -> None:
        if self.samples < 1 or self.horizon < 0 or self.width < 1:
            raise ValueError(f"samples and width must be at least 1 and horizon at least 0: {self}")
        if not (0.0 <= self.ron <= 1.0) or self.ready_waits <= 0 or self.deal_in_fan < 0:
            raise ValueError(f"ron must be in [0, 1], ready_waits above 0 and deal_in_fan at least 0: {self}")


DEFAULT: Final = Settings()


@dataclass(frozen=True, slots=True)
class Rival:
    """What the deciding seat sees of one opponent."""

    seat: int
    void: int | None
    melds: int
    discards: int
    won: bool
    passed: frozenset[int]  # kinds discarded by anybody since its last draw (safe against it)
    cleared: bool  # it has discarded a tile outside its void: it holds none of its void suit any more

    @property
    def ready_chance(self) -> float:
        """How likely its hand is ready, from its river and melds (a public read of the table's tempo)."""
        if self.won:
            return 0.0
        return min(0.9, max(0.0, (self.discards - 3) * 0.07) + 0.15 * self.melds)


@dataclass(frozen=True, slots=True)
class Sight:
    """A decision point as the deciding seat sees it: its tiles, the public record, nothing else."""

    seat: int
    counts: tuple[int, ...]
    melds: tuple[Meld, ...]
    void: int | None
    unseen: tuple[int, ...]  # copies of each kind the seat cannot see
    rivals: tuple[Rival, ...]
    left: int  # tiles in the wall
    rules: RuleSet


@dataclass(frozen=True, slots=True)
class Choice:
    """One option and the engine's value of it (points); ``event`` ``None`` is a pass."""

    event: Event | None
    value: float


def sight(state: HandState, seat: int) -> Sight:
    """What ``seat`` can see of ``state``: its own tiles, the rivers, melds, declared voids and the wall's size."""
    visible = state.visible(seat)
    rivals = []
    for other in range(state.n):
        if other == seat:
            continue
        void = state.void[other]
        river = state.rivers[other]
        rivals.append(
            Rival(
                other,
                void,
                len(state.melds[other]),
                len(river),
                state.won[other],
                frozenset(passed_since_draw(state.events, other)),
                void is not None and any(k // 9 != void for k in river),
            )
        )
    unseen = tuple(max(0, state.full[k] - visible[k]) for k in range(27))
    return Sight(
        seat,
        tuple(state.counts[seat]),
        tuple(state.melds[seat]),
        state.void[seat],
        unseen,
        tuple(rivals),
        state.left,
        state.rules,
    )


def decide(state: HandState, seat: int, rng: random.Random, cfg: Settings = DEFAULT) -> list[Choice]:
    """The engine's options at ``state`` for ``seat``, best first (a claim's pass included, as ``None``); empty
    when the seat has no decision. Reads only :func:`sight` of the state."""
    if state.phase == "discard" and seat == state.turn:
        return rank_turn(sight(state, seat), state.turn_options(seat), rng, cfg)
    if state.phase in ("claim", "rob") and state.window is not None:
        legal = state.claim_options(seat)
        if legal:
            return rank_claim(sight(state, seat), legal, rng, cfg)
    return []


# ------------------------------------------------------------------------------------------------ the worlds
def _worlds(view: Sight, rng: random.Random, samples: int) -> list[list[int]]:
    """``samples`` walls, each the unseen tiles less the opponents' concealed hands (module docstring)."""
    pool = [k for k in range(27) for _ in range(view.unseen[k])]
    live = [r for r in view.rivals if not r.won]
    sizes = [13 - 3 * r.melds for r in live]
    hidden = max(0, len(pool) - view.left)  # tiles held by the opponents (the won ones' too)
    out = []
    for _ in range(samples):
        rng.shuffle(pool)
        need = list(sizes)
        taken = 0
        wall: list[int] = []
        for k in pool:
            placed = False
            if taken < hidden:
                for i, r in enumerate(live):
                    if need[i] and not (r.cleared and k // 9 == r.void):
                        need[i] -= 1
                        taken += 1
                        placed = True
                        break
            if not placed:
                wall.append(k)
        out.append(wall[: view.left] if len(wall) > view.left else wall)
    return out


# ------------------------------------------------------------------------------------------------ play ahead
class _Hand:
    """The seat's concealed hand in a world, changed tile by tile."""

    __slots__ = ("codes", "counts", "held_void", "mask", "melds", "sh", "void")

    def __init__(self, counts: Sequence[int], melds: tuple[Meld, ...], void: int | None) -> None:
        self.counts = list(counts)
        self.codes = suit_codes(self.counts)
        self.melds = melds
        self.void = void
        self.held_void = sum(self.counts[void * 9 : void * 9 + 9]) if void is not None else 0
        self.sh = shanten_of_codes(self.codes, len(melds), void)
        self.mask = self._mask()

    def _mask(self) -> int:
        if self.sh != 0 or self.held_void:
            return 0
        return win_mask_of_codes(self.codes, self.melds, self.void)

    def add(self, k: int) -> None:
        self.counts[k] += 1
        self.codes[k // 9] += code_step(k)
        if k // 9 == self.void:
            self.held_void += 1

    def take(self, k: int) -> None:
        self.counts[k] -= 1
        self.codes[k // 9] -= code_step(k)
        if k // 9 == self.void:
            self.held_void -= 1

    def settle(self) -> None:
        self.sh = shanten_of_codes(self.codes, len(self.melds), self.void)
        self.mask = self._mask()

    def keep_or_throw(self, k: int) -> None:
        """A drawn tile ``k`` that does not win: the void suit goes first; a draw that lowers the shanten is kept
        (the least connected tile that keeps the lower shanten goes), any other is thrown."""
        void = self.void
        if void is not None and self.held_void and k // 9 != void:
            self.add(k)
            self.take(next(j for j in range(void * 9, void * 9 + 9) if self.counts[j]))
            self.settle()
            return
        if k // 9 == void:
            return
        n_melds = len(self.melds)
        self.add(k)
        after = shanten_of_codes(self.codes, n_melds, void)
        if after >= self.sh:
            self.take(k)
            return
        best: tuple[int, int, int] | None = None
        for j in range(27):
            if not self.counts[j] or j == k:
                continue
            self.take(j)
            sh = shanten_of_codes(self.codes, n_melds, void)
            self.add(j)
            if sh > after:
                continue
            key = (_links(self.counts, j), j, sh)
            if best is None or key < best:
                best = key
        if best is None:
            self.take(k)
            return
        self.take(best[1])
        self.settle()


def _links(counts: Sequence[int], k: int) -> int:
    """How connected ``k`` is in ``counts`` (pairs count double, neighbours within two ranks once)."""
    base = k - k % 9
    n = 2 * (counts[k] - 1)
    for j in range(max(base, k - 2), min(base + 9, k + 3)):
        if j != k:
            n += counts[j]
    return n


class _Scorer:
    """Win values in points, worked out once per hand shape."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.cache: dict[tuple[tuple[int, ...], tuple[Meld, ...], int, bool], int] = {}

    def value(self, hand: _Hand, tile: int, self_drawn: bool) -> int:
        counts = list(hand.counts)
        counts[tile] += 1
        key = (tuple(counts), hand.melds, tile, self_drawn)
        got = self.cache.get(key)
        if got is None:
            win = WinHand(
                counts27=tuple(counts),
                melds=hand.melds,
                win_tile=tile,
                void=hand.void,
                self_drawn=self_drawn,
                after_kong=False,
                kong_discard=False,
                rob_kong=False,
                last_tile=False,
                heavenly=False,
                earthly=False,
            )
            got = self.cache[key] = score(win, self.rules).per_payer
        return got


def _play(
    view: Sight,
    counts: Sequence[int],
    melds: tuple[Meld, ...],
    wall: list[int],
    scorer: _Scorer,
    cfg: Settings,
    *,
    draw_first: bool,
) -> float:
    """Points the hand ``counts`` + ``melds`` is worth in one world (``wall``): rounds of the opponents' discards
    (each the tile it draws) and its own draw, keeping what lowers its shanten, up to ``horizon`` rounds or
    until the hand is ready; a ready hand is then worth its chance of winning on the tiles still to come
    (:func:`_ready_value`, in expectation over the rest of the world's wall, not on one path); 查大叫 at an empty
    wall. ``draw_first``: it draws at once (a kong's replacement)."""
    hand = _Hand(counts, melds, view.void)
    others = sum(1 for r in view.rivals if not r.won)
    i = 0
    n = len(wall)
    if draw_first and n:
        k = wall[0]
        i = 1
        if (hand.mask >> k) & 1:
            return float(scorer.value(hand, k, True) * others)
        hand.keep_or_throw(k)
    rounds = 0
    while not hand.mask and rounds < cfg.horizon and i + others < n:
        rounds += 1
        i += others  # the opponents' discards: no win for a hand not ready
        k = wall[i]
        i += 1
        hand.keep_or_throw(k)
    if hand.mask:
        return _ready_value(view, hand, wall, i, others, scorer, cfg.ron)
    if i + others >= n:  # the wall ran out: 查大叫, against a guess at who else is ready
        return -view.rules.base * sum(r.ready_chance for r in view.rivals if not r.won)
    return 0.0


def _ready_value(view: Sight, hand: _Hand, wall: list[int], i: int, others: int, scorer: _Scorer, ron: float) -> float:
    """A ready hand's expected points over the rest of the world's wall (``wall[i:]``): the chance that one of
    the tiles it will see (its draws, and the opponents' discards, a ``ron`` share of them) is a winning
    one, times the mean value of its winning tiles (自摸 from every opponent still in, 点炮 from one)."""
    rest = len(wall) - i
    if rest <= 0:
        return view.rules.base * others * 0.5  # 查大叫: paid by the hands that are not ready
    counts = [0] * 27
    for k in wall[i:]:
        counts[k] += 1
    wins = [k for k in range(27) if (hand.mask >> k) & 1 and counts[k]]
    hits = sum(counts[k] for k in wins)
    if not hits:
        return view.rules.base * others * 0.25  # a dead wait: only 查大叫 is left
    t = others + 1
    own = rest // t  # its own draws to come
    seen = own * (1 + ron * others)
    miss = 1.0
    for j in range(int(seen)):
        if rest - j <= hits:
            miss = 0.0
            break
        miss *= (rest - hits - j) / (rest - j)
    self_drawn = 1.0 / (1 + ron * others)
    value = 0.0
    for k in wins:
        v = self_drawn * scorer.value(hand, k, True) * others + (1 - self_drawn) * scorer.value(hand, k, False)
        value += counts[k] * v
    return (1 - miss) * value / hits + miss * view.rules.base * others * 0.25


def _deal_in(view: Sight, cfg: Settings) -> list[float]:
    """The expected loss, in points, of discarding each kind now (module docstring)."""
    ways = [wait_ways(view.unseen, k) for k in range(27)]
    loss = view.rules.points(max(view.rules.fan_base, cfg.deal_in_fan))
    out = [0.0] * 27
    for r in view.rivals:
        chance = r.ready_chance
        if chance <= 0.0:
            continue
        open_kinds = [k for k in range(27) if k not in r.passed and (r.void is None or k // 9 != r.void)]
        total = sum(ways[k] for k in open_kinds)
        if not total:
            continue
        for k in open_kinds:
            out[k] += chance * min(1.0, cfg.ready_waits * ways[k] / total) * loss
    return out


def _mean_play(
    view: Sight,
    counts: Sequence[int],
    melds: tuple[Meld, ...],
    worlds: list[list[int]],
    scorer: _Scorer,
    cfg: Settings,
    *,
    draw_first: bool = False,
) -> float:
    return sum(_play(view, counts, melds, w, scorer, cfg, draw_first=draw_first) for w in worlds) / len(worlds)


def _discard_candidates(
    view: Sight, counts: Sequence[int], n_melds: int, kinds: Sequence[int], cfg: Settings
) -> list[int]:
    """The discard kinds worth playing ahead: those of the lowest shanten after (the least connected first), at most
    ``width``, and always the safest kind (a step back to stay safe)."""
    codes = suit_codes(counts)
    shs = []
    for k in kinds:
        codes[k // 9] -= code_step(k)
        shs.append((shanten_of_codes(codes, n_melds, view.void), _links(counts, k), k))
        codes[k // 9] += code_step(k)
    shs.sort()
    best = shs[0][0]
    out = [k for sh, _, k in shs if sh == best][: cfg.width]
    danger = _deal_in(view, cfg)
    safest = min(kinds, key=lambda k: (danger[k], k))
    if safest not in out:
        out.append(safest)
    return out


def rank_turn(view: Sight, legal: Sequence[Event], rng: random.Random, cfg: Settings = DEFAULT) -> list[Choice]:
    """The engine's ranking of a seat's options on its turn (wins, discards, kongs)."""
    wins = [Choice(ev, float("inf")) for ev in legal if isinstance(ev, Hu)]
    discards = {ev.tile: ev for ev in legal if isinstance(ev, Discard)}
    kongs = [ev for ev in legal if isinstance(ev, Kong)]
    worlds = _worlds(view, rng, cfg.samples)
    scorer = _Scorer(view.rules)
    danger = _deal_in(view, cfg)
    out: list[Choice] = []
    n_melds = len(view.melds)
    counts = list(view.counts)
    if discards:
        kinds = sorted(discards)
        if view.void is not None and any(k // 9 == view.void for k in kinds):
            kinds = [k for k in kinds if k // 9 == view.void]  # the void suit first: it can never be kept
        looked = set(_discard_candidates(view, counts, n_melds, kinds, cfg)) if len(kinds) > 1 else set(kinds)
        for k in kinds:
            if k not in looked:
                continue
            counts[k] -= 1
            value = _mean_play(view, counts, view.melds, worlds, scorer, cfg) - danger[k]
            counts[k] += 1
            out.append(Choice(discards[k], value))
    others = sum(1 for r in view.rivals if not r.won)
    base = view.rules.base
    for ev in kongs:
        after = list(counts)
        if ev.kind == "concealed":
            after[ev.tile] -= 4
            melds = (*view.melds, Meld("concealed", ev.tile))
            paid = 2 * base * others
        else:
            after[ev.tile] -= 1
            melds = tuple(Meld("added", m.tile, m.source) if m.tile == ev.tile else m for m in view.melds)
            paid = base * others
        value = paid + _mean_play(view, after, melds, worlds, scorer, cfg, draw_first=True)
        out.append(Choice(ev, value))
    out.sort(key=_order)
    return wins + out


def rank_claim(view: Sight, legal: Sequence[Event], rng: random.Random, cfg: Settings = DEFAULT) -> list[Choice]:
    """The engine's ranking of a seat's options on another's discard (or added kong): wins, pongs, kongs, a pass."""
    wins = [Choice(ev, float("inf")) for ev in legal if isinstance(ev, Hu)]
    calls = [ev for ev in legal if isinstance(ev, (Pong, Kong))]
    if not calls:
        return [*wins, Choice(None, 0.0)]
    worlds = _worlds(view, rng, cfg.samples)
    scorer = _Scorer(view.rules)
    counts = list(view.counts)
    out = [Choice(None, _mean_play(view, counts, view.melds, worlds, scorer, cfg))]
    danger = _deal_in(view, cfg)
    for ev in calls:
        assert isinstance(ev, (Pong, Kong))
        after = list(counts)
        if isinstance(ev, Pong):
            after[ev.tile] -= 2
            melds = (*view.melds, Meld("pong", ev.tile, ev.source))
            kinds = [k for k in range(27) if after[k]]
            best = float("-inf")
            for k in _discard_candidates(view, after, len(melds), kinds, cfg)[:3]:
                after[k] -= 1
                best = max(best, _mean_play(view, after, melds, worlds, scorer, cfg) - danger[k])
                after[k] += 1
            out.append(Choice(ev, best))
        else:
            after[ev.tile] -= 3
            melds = (*view.melds, Meld("direct", ev.tile, ev.source))
            paid = 2 * view.rules.base
            out.append(Choice(ev, paid + _mean_play(view, after, melds, worlds, scorer, cfg, draw_first=True)))
    out.sort(key=_order)
    return wins + out


def _order(c: Choice) -> tuple[float, int, int]:
    """Best value first; ties by the action (a pass, a kong, a pong, a discard) and the tile: nothing random."""
    ev = c.event
    action = 0 if ev is None else 1 if isinstance(ev, Kong) else 2 if isinstance(ev, Pong) else 3
    return (-c.value, action, -1 if ev is None else ev.tile)
