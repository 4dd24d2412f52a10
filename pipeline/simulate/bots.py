"""Bots: decisions from a seat's view of the hand, shaped by the player's style and skill.

A bot acts only through the hand state's legal options (:meth:`HandState.turn_options`,
:meth:`HandState.claim_options`) and reads only what its seat may see: its own tiles, every discard and
meld, the declared void suits, how many tiles are left. Two kinds of bot see more, by design, because the
detectors must find them: a colluder sees its partner's hand, and a cheating bot sees every hand (so it knows
what the wall still holds: it waits on the tiles that will come, not on those an opponent sits on). What a
colluder does for its partners is its family's knobs (:mod:`pipeline.simulate.families`); each such act is
noted in :attr:`Bot.acts` (the labels' ``acts``).

Decisions: 换三张 and 定缺 from the hand's shape; discards by tile efficiency (shanten, then the number of
unseen tiles that improve the hand), pulled towards one suit by the ``flush`` parameter; pong and kong when
they keep the hand as close to ready; wins when allowed. Defensive players, once an opponent looks ready,
prefer tiles that are safe from the public record and fold when far from ready.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.engines import lookahead as engine
from pipeline.game.events import Discard, Event, Hu, Kong, Pong
from pipeline.game.policy import connections, passed_since_draw, wait_ways
from pipeline.game.state import HandState
from pipeline.rules.fan import WinHand, score
from pipeline.rules.hand import shanten, shanten_after_discards, suit_codes, win_mask_of_codes
from pipeline.simulate.families import FEEDING, Family
from pipeline.simulate.styles import Player

# A team walling off the outsiders watches an outsider from its sixth discard (or its first meld) on, earlier than
# an honest careful player (:meth:`Bot._threats`): it plays for the table, not for its own hand.
WARY = 6


@dataclass(frozen=True, slots=True)
class Collusion:
    """The seats of a colluder's partners at the table (one for a pair, two or more for a team) and how often
    they play for each other."""

    partners: tuple[int, ...]
    intensity: float
    family: Family = FEEDING


@dataclass(frozen=True, slots=True)
class Act:
    """One thing a colluder did for a partner: ``event`` is the index of the discard it made or answered
    (``None`` before play: the exchange and the void)."""

    event: int | None
    seat: int
    partner: int
    act: str  # feed_win, feed_pong, feed_kong, soft, decline, pass, gift, split_void, wall_off


@dataclass(frozen=True, slots=True)
class Follow:
    """An engine follower's settings (``--inject follow=N:P[:evasive]``): on a share ``share`` of its decisions
    it plays the engine's choice (:mod:`pipeline.engines.lookahead`) instead of its own; ``evasive``, it keeps its
    own where the engine's best two options are within :data:`CLOSE` points of each other."""

    share: float
    evasive: bool = False


CLOSE = 0.25  # points: an evasive follower plays its own choice where the engine's best two are this close


@dataclass(frozen=True, slots=True)
class FollowNote:
    """One decision of a follower with more than one option: ``event`` is the index the decision's event takes
    (on a claim, the index the window's next event takes); ``asked``: the coin said follow (the engine was asked);
    ``followed``: it played the engine's choice because of it (an evasive follower does not on a close one);
    ``close``: the engine's best two were within :data:`CLOSE` points; ``own``: its own style's choice;
    ``engine``: the engine's (``None`` for a pass, and when not asked)."""

    event: int
    seat: int
    asked: bool
    followed: bool
    close: bool
    own: Event | None
    engine: Event | None


class Bot:
    def __init__(
        self,
        player: Player,
        seat: int,
        rng: random.Random,
        *,
        collusion: Collusion | None = None,
        sees_all: bool = False,
    ) -> None:
        self.player = player
        self.style = player.style
        self.seat = seat
        self.rng = rng
        self.collusion = collusion
        self.sees_all = sees_all
        self.void: int | None = None
        self.acts: list[Act] = []
        # A novice sometimes forgets the void suit for a whole hand: a flower pig in the making.
        self.forgetting = rng.random() < player.style.forget_void

    # ------------------------------------------------------------------------------------ before play
    def choose_exchange(self, hand: Sequence[int], to: int | None = None, their: Sequence[int] = ()) -> list[int]:
        """换三张: three tiles of the suit we least want (fewest tiles among suits with at least three). A
        colluder of a gift family whose tiles go to a partner (seat ``to``, holding ``their``) gives, with its
        intensity, three tiles of the partner's longest suit, those closest to the partner's tiles."""
        by_suit = [[k for k in hand if k // 9 == s] for s in range(3)]
        c = self.collusion
        if c is not None and c.family.gifts and to in c.partners and self.rng.random() < c.intensity:
            theirs = [[k for k in their if k // 9 == s] for s in range(3)]
            fits = [s for s in range(3) if len(by_suit[s]) >= 3]
            suit = max(fits, key=lambda s: (len(theirs[s]), -s))
            tiles = sorted(by_suit[suit], key=lambda k: (-sum(1 for t in theirs[suit] if abs(t - k) <= 2), k))
            self.acts.append(Act(None, self.seat, to, "gift"))
            return tiles[:3]
        suit = min((s for s in range(3) if len(by_suit[s]) >= 3), key=lambda s: (len(by_suit[s]), self.rng.random()))
        tiles = sorted(by_suit[suit], key=lambda k: (connections(by_suit[suit], k), self.rng.random()))
        return tiles[:3]

    def choose_void(self, hand: Sequence[int], partner_voids: Sequence[int | None] = ()) -> int:
        """定缺: the suit with the fewest tiles (ties broken by fewer pairs, then at random). A colluder of a
        family that splits voids, whose choice is a void a partner declared (``partner_voids``), takes its
        next suit with its intensity."""
        counts = [0] * 27
        for k in hand:
            counts[k] += 1

        def weight(s: int) -> tuple[int, int, float]:
            part = counts[s * 9 : s * 9 + 9]
            return sum(part), sum(1 for n in part if n >= 2), self.rng.random()

        self.void = min(range(3), key=weight)
        c = self.collusion
        if c is not None and c.family.split_voids:
            taken = {v for v in partner_voids if v is not None}
            if self.void in taken and self.rng.random() < c.intensity:
                partner = next(p for p, v in zip(c.partners, partner_voids, strict=False) if v == self.void)
                self.void = min((s for s in range(3) if s not in taken), key=weight)
                self.acts.append(Act(None, self.seat, partner, "split_void"))
        return self.void

    # ------------------------------------------------------------------------------------ own turn
    def on_turn(self, st: HandState) -> Event:
        options = st.turn_options(self.seat)
        for o in options:
            if isinstance(o, Hu) and self._take_win(st, o, self_drawn=True):
                return o
        kong = self._choose_turn_kong(st, options)
        if kong is not None:
            return kong
        discards = [o for o in options if isinstance(o, Discard)]
        return self._choose_discard(st, discards)

    def _take_win(self, st: HandState, hu: Hu, *, self_drawn: bool) -> bool:
        c = self.collusion
        if c is not None and not self_drawn and hu.source in c.partners and st.left > 3:
            # soft play declines a partner's discard; passing lets a cheap one go (never in the last four tiles,
            # where the rules forbid a pass)
            family = c.family
            if family.decline and self.rng.random() < c.intensity:
                self.acts.append(Act(len(st.events) - 1, self.seat, hu.source, "decline"))
                return False
            if (
                family.cheap
                and st.win_value(self.seat, hu.tile, self_drawn=False).fan <= family.cheap
                and self.rng.random() < c.intensity
            ):
                self.acts.append(Act(len(st.events) - 1, self.seat, hu.source, "pass"))
                return False
        if st.left <= 3 or self.sees_all or self.style.take_small_win >= 1.0:
            return True
        if self.collusion and hu.source in self.collusion.partners:
            return True
        s = st.win_value(self.seat, hu.tile, self_drawn=self_drawn)
        # An aggressive player sometimes lets a plain hand go early, hoping for more.
        return s.fan > 1 or st.left < 30 or self.rng.random() < self.style.take_small_win

    def _choose_turn_kong(self, st: HandState, options: Sequence[Event]) -> Kong | None:
        counts, melds = st.counts[self.seat], st.melds[self.seat]
        for o in options:
            if not isinstance(o, Kong) or self.rng.random() >= self.style.kong:
                continue
            if o.kind == "added":
                return o
            before = shanten(counts, len(melds), self.void)
            after_counts = list(counts)
            after_counts[o.tile] -= 4
            if shanten(after_counts, len(melds) + 1, self.void) <= before:
                return o
        return None

    def _choose_discard(self, st: HandState, discards: list[Discard]) -> Discard:
        counts, melds = st.counts[self.seat], st.melds[self.seat]
        rng = self.rng
        c = self.collusion
        if c is not None and c.family.soft:
            discards = self._soft(st, discards, c)
        if c is not None and c.family.wall_off and rng.random() < c.intensity:
            safe = self._wall_off(st, discards, c)
            if safe is not None:
                return safe
        void_tiles = [d for d in discards if d.tile // 9 == self.void]
        if void_tiles and self.sees_all and not st.rules.void_discard_first:
            # it throws its void suit first, but never one that completes a hand while it holds a tile that does not
            completes = self._danger(st)
            if all(completes.get(d.tile) for d in void_tiles) and any(not completes.get(d.tile) for d in discards):
                void_tiles = []
            else:
                void_tiles = [d for d in void_tiles if not completes.get(d.tile)] or void_tiles
        if void_tiles and not self.forgetting:
            return min(void_tiles, key=lambda d: (counts[d.tile], rng.random()))
        candidates = [d for d in discards if d.tile // 9 != self.void] or discards
        feed = self._feed(st, candidates)
        if feed is not None:
            return feed
        after = shanten_after_discards(counts, len(melds), self.void)
        scored = [(after[d.tile], d) for d in candidates]
        work = list(counts)
        best = min(s for s, _ in scored)
        danger = self._danger(st) if (self.style.defense > 0 or self.sees_all) else None
        if self.sees_all and danger and any(not danger.get(d.tile) for _, d in scored):
            # it knows which tiles complete a hand: while it holds one that completes none, it never throws one
            # that does (it never deals in when it can avoid it, whatever that costs its own hand)
            scored = [(s, d) for s, d in scored if not danger.get(d.tile)]
            best = min(s for s, _ in scored)
        if danger is not None and any(danger.values()):
            folding = best >= self.style.fold_shanten
            pool = [d for s, d in scored if folding or s <= best + (1 if rng.random() < self.style.defense else 0)]
            safest = min(danger.get(d.tile, 0) for d in pool)
            if safest < min(danger.get(d.tile, 0) for s, d in scored if s == best) or folding:
                pool = [d for d in pool if danger.get(d.tile, 0) == safest]
                return min(pool, key=lambda d: (next(s for s, c in scored if c is d), rng.random()))
        if self.sees_all and best == 0:
            anticipated = self._anticipate(st, work, [d for s, d in scored if s == 0])
            if anticipated is not None:
                return anticipated
        chase = self._chase_flush(counts, scored, best)
        if chase is not None:
            return chase
        if rng.random() > self.player.skill:
            # A weaker choice: any tile that does not set the hand back by more than one step.
            return rng.choice([d for s, d in scored if s <= best + 1])
        top = [d for s, d in scored if s == best]
        if len(top) == 1:
            return top[0]
        return max(top, key=lambda d: (self._value_after(st, work, d.tile, best), rng.random()))

    def _anticipate(self, st: HandState, work: list[int], ready: list[Discard]) -> Discard | None:
        """A cheating bot's wait: among the discards that leave its hand ready, the one whose winning tiles have
        the most copies still in the wall (it sees every hand: the copies an opponent holds will not come);
        ties by the honest value. ``None`` when fewer than two ready discards differ in that count (the honest
        choice stands)."""
        if len(ready) < 2:
            return None
        melds = st.melds[self.seat]
        live = [st.full[k] - st.seen[k] for k in range(27)]  # not drawn yet: the wall's copies of each kind
        in_wall = []
        for d in ready:
            work[d.tile] -= 1
            mask = win_mask_of_codes(suit_codes(work), melds, self.void)
            work[d.tile] += 1
            in_wall.append(sum(live[k] for k in range(27) if (mask >> k) & 1))
        most = max(in_wall)
        if min(in_wall) == most:
            return None
        top = [d for d, n in zip(ready, in_wall, strict=True) if n == most]
        return max(top, key=lambda d: (self._value_after(st, work, d.tile, 0), self.rng.random()))

    def _chase_flush(self, counts: list[int], scored: list[tuple[int, Discard]], best: int) -> Discard | None:
        """清一色: with most tiles in one suit, throw the other suit first, even a step back from ready."""
        flush = self.style.flush
        if flush < 0.5 or self.rng.random() >= flush:
            return None
        per_suit = {s: sum(counts[s * 9 : s * 9 + 9]) for s in range(3) if s != self.void}
        major = max(per_suit, key=lambda s: per_suit[s])
        if per_suit[major] < 8:
            return None
        off = [(sh, d) for sh, d in scored if d.tile // 9 != major and sh <= best + 1]
        if not off:
            return None
        return min(off, key=lambda x: (x[0], counts[x[1].tile], self.rng.random()))[1]

    def _value_after(self, st: HandState, work: list[int], tile: int, best: int) -> float:
        """Unseen tiles that improve the hand after discarding ``tile``, pulled towards one suit. The copies
        in view on the table are counted as gone each with the style's ``notice`` chance (its own always)."""
        work[tile] -= 1
        n_melds = len(st.melds[self.seat])
        suits = {k // 9 for k in range(27) if work[k]} - {self.void}
        visible = st.visible(self.seat)
        notice = self.style.notice
        own = st.counts[self.seat]
        useful = 0.0
        for kind in range(27):
            if kind // 9 not in suits or (visible[kind] if notice >= 1 else own[kind]) >= 4:
                continue
            work[kind] += 1
            if shanten(work, n_melds, self.void) < best:
                if notice >= 1:
                    useful += 4 - visible[kind]
                else:  # a person: the copies on the table it noticed
                    table = visible[kind] - own[kind]
                    useful += 4 - own[kind] - sum(1 for _ in range(table) if self.rng.random() < notice)
            work[kind] -= 1
        work[tile] += 1
        flush = self.style.flush
        if flush and suits:
            per_suit = {s: sum(work[s * 9 : s * 9 + 9]) for s in suits}
            major = max(per_suit, key=lambda s: per_suit[s])
            if tile // 9 != major:
                useful += flush * 6  # keep the main suit: 清一色 is worth two fan
            pairs = sum(1 for k in range(27) if work[k] >= 2)
            if work[tile] >= 2:
                useful -= flush * pairs  # keep pairs: 对对胡
        return useful

    # ------------------------------------------------------------------------------------ claims
    def on_claim(self, st: HandState, options: Sequence[Event]) -> Event | None:
        rng = self.rng
        for o in options:
            if isinstance(o, Hu) and self._take_win(st, o, self_drawn=False):
                return o
        counts, melds = st.counts[self.seat], st.melds[self.seat]
        for o in options:
            if isinstance(o, (Pong, Kong)):
                need = 2 if isinstance(o, Pong) else 3
                eager = self.style.pong if isinstance(o, Pong) else self.style.kong
                c = self.collusion
                if c and o.source in c.partners and (c.family.claim_partner or (c.family.kong_partner and need == 3)):
                    eager = max(eager, c.intensity)
                if rng.random() >= eager:
                    continue
                before = shanten(counts, len(melds), self.void)
                after = list(counts)
                after[o.tile] -= need
                if shanten(after, len(melds) + 1, self.void) <= before:
                    return o
        return None

    # ------------------------------------------------------------------------------------ reading the table
    def _threats(self, st: HandState) -> list[int]:
        """Opponents still in who look ready: two or more melds, or a long river."""
        return [
            s
            for s in range(st.n)
            if s != self.seat and not st.won[s] and (len(st.melds[s]) >= 2 or len(st.rivers[s]) >= 10)
        ]

    def _danger(self, st: HandState) -> dict[int, float]:
        """For each kind: how many looking-ready opponents it is not known to be safe against.

        Safe from the public record: the opponent's void suit, and tiles discarded by anyone since the
        opponent's last draw (过手胡 bars a win on them until that opponent draws again). A cheating bot
        knows exactly: a tile is dangerous when it completes somebody's hand.
        """
        if self.sees_all:
            return {
                k: float(sum(1 for s in range(st.n) if s != self.seat and not st.won[s] and st.can_win_with(s, k)))
                for k in range(27)
            }
        threats = self._threats(st)
        if not threats:
            return {}
        danger = {k: 0.0 for k in range(27)}
        for opp in threats:
            safe = set(passed_since_draw(st.events, opp))
            void = st.void[opp]
            for k in range(27):
                if k in safe or (void is not None and k // 9 == void):
                    continue
                danger[k] += 1.0
        return danger

    def _feed(self, st: HandState, candidates: Sequence[Discard]) -> Discard | None:
        """A colluder discards a tile that wins for (or can be ponged by, or konged by) a partner still in, as
        its family does, partners in seat order: wins first, then pongs, then kongs."""
        c = self.collusion
        if c is None:
            return None
        family = c.family
        partners = [p for p in c.partners if not st.won[p]]
        rng = self.rng
        event = len(st.events)
        if family.feed_win and (not family.late or st.left <= family.late):
            for partner in partners:
                for d in candidates:
                    if (
                        st.can_win_with(partner, d.tile)
                        and (not family.min_fan or _fan_on(st, partner, d.tile) >= family.min_fan)
                        and rng.random() < c.intensity
                    ):
                        self.acts.append(Act(event, self.seat, partner, "feed_win"))
                        return d
        if family.feed_pong:
            for partner in partners:
                for d in candidates:
                    if st.counts[partner][d.tile] >= 2 and rng.random() < c.intensity / 2:
                        self.acts.append(Act(event, self.seat, partner, "feed_pong"))
                        return d
        if family.kong_feed:
            for partner in partners:
                for d in candidates:
                    if st.counts[partner][d.tile] == 3 and rng.random() < c.intensity:
                        self.acts.append(Act(event, self.seat, partner, "feed_kong"))
                        return d
        return None

    def _soft(self, st: HandState, discards: list[Discard], c: Collusion) -> list[Discard]:
        """Soft play: with the intensity, the discards that win for no partner still in, when there are any
        (all of them when every one wins for a partner)."""
        partners = [p for p in c.partners if not st.won[p]]
        into = {d.tile for d in discards if any(st.can_win_with(p, d.tile) for p in partners)}
        if not into or len(into) == len({d.tile for d in discards}) or self.rng.random() >= c.intensity:
            return discards
        partner = next(p for p in partners if any(st.can_win_with(p, k) for k in into))
        self.acts.append(Act(len(st.events), self.seat, partner, "soft"))
        return [d for d in discards if d.tile not in into]

    def _wall_off(self, st: HandState, discards: list[Discard], c: Collusion) -> Discard | None:
        """Playing safe against the outsiders (壁: walling off): once an outsider still in has made ``WARY``
        discards or a meld, the discard with the fewest ways to complete an outsider's hand, counted from the
        tiles no member of the group holds and nobody has shown (the group pools its hands: an outsider can
        wait on a tile only with tiles from that unseen pool), among the discards at most one step back from the
        best (any, when two or more from ready: folding); safe outright are an outsider's void suit and the
        tiles passed since its last draw (过手胡). ``None`` when no outsider is watched or the honest choice is
        as safe."""
        outsiders = [
            s
            for s in range(st.n)
            if s != self.seat and s not in c.partners and not st.won[s] and (st.melds[s] or len(st.rivers[s]) >= WARY)
        ]
        if not outsiders:
            return None
        counts, melds = st.counts[self.seat], st.melds[self.seat]
        seen = st.visible(self.seat)
        for p in c.partners:
            for k in range(27):
                seen[k] = seen[k] + st.counts[p][k]
        unseen = [max(0, st.full[k] - seen[k]) for k in range(27)]
        danger = [0] * 27
        for opp in outsiders:
            safe = set(passed_since_draw(st.events, opp))
            void = st.void[opp]
            for k in range(27):
                if k in safe or (void is not None and k // 9 == void):
                    continue
                danger[k] = danger[k] + wait_ways(unseen, k)
        after = shanten_after_discards(counts, len(melds), self.void)
        best = min(after[d.tile] for d in discards)
        pool = [d for d in discards if best >= 2 or after[d.tile] <= best + 1]
        safest = min(danger[d.tile] for d in pool)
        if safest >= min(danger[d.tile] for d in discards if after[d.tile] == best):
            return None
        self.acts.append(Act(len(st.events), self.seat, c.partners[0], "wall_off"))
        return min((d for d in pool if danger[d.tile] == safest), key=lambda d: (after[d.tile], counts[d.tile], d.tile))


def _fan_on(st: HandState, seat: int, tile: int) -> int:
    """The fan ``seat`` would win with on a discard of ``tile`` (a colluder reads its partner's hand; the
    situational fan of the moment, 海底 or 杠上炮, left out)."""
    counts = list(st.counts[seat])
    counts[tile] = counts[tile] + 1
    hand = WinHand(
        counts27=tuple(counts),
        melds=tuple(st.melds[seat]),
        win_tile=tile,
        void=st.void[seat],
        self_drawn=False,
        after_kong=False,
        kong_discard=False,
        rob_kong=False,
        last_tile=False,
        heavenly=False,
        earthly=False,
    )
    return score(hand, st.rules).fan


class Follower(Bot):
    """A player who follows an engine on a share of its decisions (:class:`Follow`) and otherwise plays its own
    style. Its own choice is always worked out first (the simulator's random stream is drawn as for the player it
    otherwise is); the coin and the engine's worlds come from ``follow_rng``, its own stream. The 换三张 and the
    定缺 stay its own. Each decision with more than one option is noted (:attr:`notes`)."""

    def __init__(
        self,
        player: Player,
        seat: int,
        rng: random.Random,
        follow: Follow,
        follow_rng: random.Random,
        *,
        collusion: Collusion | None = None,
        sees_all: bool = False,
    ) -> None:
        super().__init__(player, seat, rng, collusion=collusion, sees_all=sees_all)
        self.follow = follow
        self.follow_rng = follow_rng
        self.notes: list[FollowNote] = []

    def on_turn(self, st: HandState) -> Event:
        own = super().on_turn(st)
        if len(st.turn_options(self.seat)) < 2:
            return own
        chosen = self._engine(st, own)
        assert chosen is not None
        return chosen

    def on_claim(self, st: HandState, options: Sequence[Event]) -> Event | None:
        own = super().on_claim(st, options)
        if not options:
            return own
        return self._engine(st, own)

    def _engine(self, st: HandState, own: Event | None) -> Event | None:
        index = len(st.events)
        if self.follow_rng.random() >= self.follow.share:
            self.notes.append(FollowNote(index, self.seat, False, False, False, own, None))
            return own
        ranked = engine.decide(st, self.seat, self.follow_rng)
        top = ranked[0]
        close = len(ranked) > 1 and top.value - ranked[1].value < CLOSE
        followed = not (self.follow.evasive and close)
        self.notes.append(FollowNote(index, self.seat, True, followed, close, own, top.event))
        return top.event if followed else own
