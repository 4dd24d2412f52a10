"""The hand state machine: one mutable :class:`HandState` that every action goes through.

Each action has three methods, as in pokerkit: ``verify_x`` raises :class:`IllegalAction` with a stable
code and a precise reason, ``can_x`` answers with a bool, ``x`` verifies, applies and returns the frozen
event. The validator replays records through them; the simulator's bots choose among
:meth:`HandState.turn_options`, :meth:`HandState.claim_options` and
:meth:`HandState.next_draw` and play through the same methods.

The phases of a hand:

- ``discard``: ``turn`` holds a full hand and must discard, kong (concealed or added) or win by self-draw;
- ``claim``: a tile was discarded; other seats may win on it (several may: 一炮多响), else pong or kong it.
  The window closes with the next non-win action, and whoever could have won and did not has passed;
- ``rob``: an added kong was declared; other seats may rob it (抢杠). Unrobbed, the kong stands;
- ``draw``: ``turn`` draws from the front of the wall (kong replacements too: "杠牌要顺着拿牌");
- ``end``: three players have won, or the wall is empty and the last discard's window closed.

Money is settled as the hand goes, in :class:`~pipeline.rules.settle.Ledger`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

from pipeline.codes import Fault
from pipeline.game.events import Discard, Draw, Event, Hu, Kong, Pong, turns_begun
from pipeline.rules.fan import Score, WinHand, ready_value, score
from pipeline.rules.hand import (
    CODE_STEPS,
    Meld,
    could_win,
    is_win,
    suits_fault,
    suits_ok,
    suits_used,
    tiles_of_mask,
    win_mask_of_suits,
    win_tiles,
)
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.settle import Ledger, Payment, SeatEnd
from pipeline.rules.tiles import COPIES, SUITS, TILE_NAMES, counts_of, format_tiles, full_counts, kinds_of_counts
from pipeline.rules.values import Value

HIDDEN: Final = -1  # an observer record's draw of a tile it did not see (the reader's UNKNOWN_TILE)

Phase = Literal["discard", "claim", "rob", "draw", "end"]
WinHow = Literal["discard", "self_draw", "rob_kong"]


class IllegalAction(Fault):
    """An action the rules or the state do not allow (a :class:`~pipeline.codes.Fault`: code, message, seat,
    expected, actual; the validator adds the event index and the position)."""


class WinRecord(Value):
    """One win as the engine scored it."""

    __slots__ = ()
    _fields = ("seat", "event", "tile", "how", "source", "score", "order")

    def __init__(
        self, seat: int, event: int, tile: int, how: WinHow, source: int | None, score: Score, order: int
    ) -> None:
        self._v = (seat, event, tile, how, source, score, order)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def event(self) -> int:
        return self._v[1]

    @property
    def tile(self) -> int:
        return self._v[2]

    @property
    def how(self) -> WinHow:
        return self._v[3]

    @property
    def source(self) -> int | None:
        return self._v[4]

    @property
    def score(self) -> Score:
        return self._v[5]

    @property
    def order(self) -> int:  # 1 for the first winner of the hand; winners on one discard share an order
        return self._v[6]


class _Window:
    """An open claim (after a discard) or rob (after an added kong) window. One per discard: a plain class,
    as cheap to build as a tuple."""

    __slots__ = ("could_win", "event", "fresh", "kong_discard", "kong_event", "source", "tile", "winners")

    def __init__(self, source: int, tile: int, event: int, *, kong_event: int | None = None, fresh: bool = False):
        self.source = source
        self.tile = tile
        self.event = event
        # seat → score, computed on demand; None while nobody could win (most discards: no dictionary built)
        self.could_win: dict[int, Score | None] | None = None
        self.winners: tuple[int, ...] = ()  # a tuple: most windows have none, and () is never allocated
        self.kong_discard = kong_event is not None  # the discard came right after its player's kong (杠上炮)
        self.kong_event = kong_event  # that kong's event, for 呼叫转移
        self.fresh = fresh  # rob window: the added tile was drawn this turn

    def reopen(self, source: int, tile: int, event: int, kong_event: int | None) -> None:
        """This window, closed, opened again on a discard (as ``__init__`` would): a hand state keeps one for its
        discards, which are most of its events, instead of allocating and freeing one for each."""
        self.source = source
        self.tile = tile
        self.event = event
        self.could_win = None
        self.winners = ()
        self.kong_discard = kong_event is not None
        self.kong_event = kong_event
        self.fresh = False


class _Concealed:
    """One seat's concealed tiles in native numbers, kept up to date tile by tile by :meth:`HandState._add` and
    :meth:`HandState._meld`: each suit's code (``m``, ``p``, ``s``: hand.suit_codes), the tiles held (``size``,
    hidden ones too), the suits of the melds as bits, and the winning tiles as bits (``mask``:
    hand.win_mask_of_suits; -1: not known since the hand last changed). Attributes of a compiled class, not list
    items: an int in a list is an object, allocated anew at every store above 256, and read back unboxed."""

    def __init__(self, codes: list[int], size: int) -> None:
        self.m = codes[0]
        self.p = codes[1]
        self.s = codes[2]
        self.size = size
        self.meld_suits = 0
        self.mask = -1

    def code(self, suit: int) -> int:
        return self.m if suit == 0 else self.p if suit == 1 else self.s

    def codes(self) -> list[int]:
        return [self.m, self.p, self.s]


class HandFacts(Value):
    """What a replayed hand leaves behind, frozen (:meth:`HandState.facts`): everything the validator,
    ingest and the simulator's tables read once play has stopped, so that nothing outside this package
    reads the live state."""

    __slots__ = ()
    _fields = (
        "rules",
        "dealer",
        "events",
        "over",
        "left",
        "wins",
        "payments",
        "deltas",
        "void",
        "melds",
        "ends",
        "passed_wins",
        "compulsory_passes",
        "could_win_at",
        "next_dealer",
        "unchecked",
        "end_open",
    )

    def __init__(
        self,
        rules: RuleSet,
        dealer: int,
        events: tuple[Event, ...],
        over: bool,
        left: int,
        wins: tuple[WinRecord, ...],
        payments: tuple[Payment, ...],
        deltas: tuple[int, ...],
        void: tuple[int | None, ...],
        melds: tuple[tuple[Meld, ...], ...],
        ends: Mapping[int, SeatEnd],
        passed_wins: tuple[tuple[int, int], ...],
        compulsory_passes: tuple[tuple[int, int], ...],
        could_win_at: Mapping[int, tuple[int, ...]],
        next_dealer: int,
        unchecked: tuple[str, ...] = (),
        end_open: bool = False,
    ) -> None:
        self._v = (
            rules,
            dealer,
            events,
            over,
            left,
            wins,
            payments,
            deltas,
            void,
            melds,
            ends,
            passed_wins,
            compulsory_passes,
            could_win_at,
            next_dealer,
            unchecked,
            end_open,
        )

    @property
    def rules(self) -> RuleSet:
        return self._v[0]

    @property
    def dealer(self) -> int:
        return self._v[1]

    @property
    def events(self) -> tuple[Event, ...]:  # the events replayed (all of them, unless the replay stopped)
        return self._v[2]

    @property
    def over(self) -> bool:  # the hand reached its end
        return self._v[3]

    @property
    def left(self) -> int:  # tiles still in the wall
        return self._v[4]

    @property
    def wins(self) -> tuple[WinRecord, ...]:
        return self._v[5]

    @property
    def payments(self) -> tuple[Payment, ...]:
        return self._v[6]

    @property
    def deltas(self) -> tuple[int, ...]:
        return self._v[7]

    @property
    def void(self) -> tuple[int | None, ...]:
        return self._v[8]

    @property
    def melds(self) -> tuple[tuple[Meld, ...], ...]:
        return self._v[9]

    @property
    def ends(self) -> Mapping[int, SeatEnd]:  # 查花猪/查大叫 facts of the seats still in at an empty wall
        return self._v[10]

    @property
    def passed_wins(self) -> tuple[tuple[int, int], ...]:  # (seat, event) of every pass of a possible win
        return self._v[11]

    @property
    def compulsory_passes(self) -> tuple[tuple[int, int], ...]:  # (seat, event) of passes the last four tiles forbid
        return self._v[12]

    @property
    def could_win_at(self) -> Mapping[int, tuple[int, ...]]:  # event → seats that could win on its tile
        return self._v[13]

    @property
    def next_dealer(self) -> int:  # the next hand's dealer, if this hand is over
        return self._v[14]

    @property
    def unchecked(self) -> tuple[str, ...]:  # what the hidden hands of an observer record kept from being checked
        return self._v[15]

    @property
    def end_open(self) -> bool:
        """The hand's end is owed but unknown: hidden hands (or a settlement record) without declared end states,
        so 查花猪/查大叫/退税 and the end's void penalties are not computed, and claims of them cannot be judged."""
        return self._v[16]

    @property
    def won_out(self) -> bool:
        """The wins ended the hand (all but one won in blood battle; the first win, with every win on its
        tile, in 普通版), not the wall."""
        mode = self.rules.mode
        if mode == "blood_flow":
            return False  # 血流成河: only the wall ends the hand
        to_end = len(self.deltas) - 1 if mode == "blood_battle" else 1
        return self.over and len(self.wins) >= to_end


class Observer:
    """What a hand tells as it is played, to an observer that reads the state and never changes it: the deal as dealt
    (:func:`~pipeline.game.start.start_hand`, before any exchange), every draw once verified, every discard once
    verified and once applied.
    The hooks do nothing here; :class:`~pipeline.game.evidence.Evidence` works out the audits' evidence in them,
    and the start of play and every win."""

    def deal(self, hands: Sequence[Sequence[int]], given: Sequence[Sequence[int] | None] | None, offset: int) -> None:
        """The deal (``hands``, before the exchange); ``given[seat]`` went to seat ``(seat + offset) % n`` at the
        exchange (``given``: ``None`` without one)."""

    def before_discard(self, state: HandState, seat: int, tile: int, index: int) -> None:
        """``seat``'s discard of ``tile`` at event ``index`` is verified, not yet applied."""

    def after_discard(self, state: HandState, seat: int, tile: int, index: int, could_win: bool) -> None:
        """``seat`` has discarded ``tile`` at event ``index``; ``could_win``: another seat can win on it."""

    def start(self, state: HandState) -> None:
        """Play starts: the hands are dealt, exchanged and their void suits declared; no event yet."""

    def before_draw(self, state: HandState, seat: int, tile: int, index: int) -> None:
        """``seat`` draws ``tile`` from the wall at event ``index``: verified, not yet applied (the drawer's hand and
        the wall as they were before it)."""

    def win(self, state: HandState, seat: int, index: int) -> None:
        """``seat`` has won at event ``index`` (recorded in ``state.wins``; a self-draw's tile still in its hand)."""


class HandState:
    """The state of one hand. Start one with :func:`pipeline.game.start.start_hand`, which checks the deal,
    the exchange and the void suits first."""

    def __init__(
        self,
        rules: RuleSet,
        *,
        dealer: int,
        hands: Sequence[Sequence[int]],
        wall: Sequence[int] | None = None,
        void: Sequence[int | None] | None = None,
        observer: Observer | None = None,
        hidden: Sequence[int] | None = None,
        declared_wins: Mapping[int, Score] | None = None,
        declared_ends: Mapping[int, SeatEnd] | None = None,
        declared_kongs: frozenset[int] | None = None,
        shown: Mapping[int, Sequence[int]] | None = None,
        void_unknown: bool = False,
    ) -> None:
        """``hands[seat]`` are the kinds each seat holds when play starts (after any exchange);
        ``wall`` is the draw pile still to come, front first (``None`` when the record has no wall).
        ``observer``: an :class:`Observer` the state tells of every discard: the audits'
        :class:`~pipeline.game.evidence.Evidence`, which ingest asks for and the simulator and ``validate`` do
        not (without one, nothing of the evidence is worked out).

        An observer's record (schemas/XZLOG.md, levels) sees one hand: ``hidden[seat]`` more tiles, beside the
        known ``hands[seat]``, that nobody has seen; a hidden draw adds one. An action shows what it needs of them
        (a discard, a pong, a kong, a win), as long as no fifth copy comes into view. A win of a hand still
        holding hidden tiles is checked as possible and valued by ``declared_wins`` (event index → the claimed
        score); at an empty wall such a hand's state is ``declared_ends``' (``None``: not declared). Whether a
        hidden hand's added kong after a hidden draw was of the tile drawn (``added_kong_paid = "fresh"``) is
        the claim's: ``declared_kongs`` are the events the claimed payments pay as kongs (``None``: not
        itemised, taken as fresh). A win may show the winner's hand (``shown``: event index → its concealed tiles
        with the winning tile): its hidden tiles come into view, and the win is checked and scored from them."""
        n = rules.players
        if len(hands) != n:
            raise ValueError(f"{n} hands, one per seat, not {len(hands)}")
        self.rules = rules
        self.n = n  # seats; kept here because the hot path reads it (a RuleSet attribute is an interpreted look-up)
        self._void_first = rules.void_discard_first  # the same: asked on most discards
        self.dealer = dealer
        self.observer = observer
        # the hand ends once this many have won: all but one in 血战, the first win (and its 一炮多响) in 普通版;
        # in 血流成河 only the wall ends it (winners stay in: ``won`` means out of the hand, ``has_won`` won once)
        self.flow = rules.mode == "blood_flow"
        self.wins_to_end = n - 1 if rules.mode == "blood_battle" else 1 if rules.mode == "ordinary" else 1 << 30
        self.has_won = [False] * n
        self.won_on: list[list[int]] = [[] for _ in range(n)]  # the tiles each seat has won on
        # Each seat's counts, its suits' codes and the copies in play, from one walk over each hand's tiles (counts_of,
        # hand.suit_codes and a walk over every seat's 27 counts cost three times as much).
        self.counts: list[list[int]] = []
        codes: list[list[int]] = []
        seen = [0] * 27  # copies of each kind that have come into play (dealt or drawn)
        dealt = 0
        for kinds in hands:
            tiles: list[int] = kinds if isinstance(kinds, list) else list(kinds)  # a list is walked natively
            dealt += len(tiles)
            counts = [0] * 27
            m_code = p_code = s_code = 0
            for kind in tiles:
                counts[kind] = counts[kind] + 1
                seen[kind] = seen[kind] + 1
                if kind < 9:
                    m_code += CODE_STEPS[kind]
                elif kind < 18:
                    p_code += CODE_STEPS[kind]
                else:
                    s_code += CODE_STEPS[kind]
            self.counts.append(counts)
            codes.append([m_code, p_code, s_code])
        self.hidden = list(hidden) if hidden is not None else [0] * n  # unseen concealed tiles per seat
        self.declared_wins = declared_wins if declared_wins is not None else {}
        self.declared_ends = declared_ends
        self.declared_kongs = declared_kongs
        self.shown = shown if shown is not None else {}
        self.unchecked: list[str] = []
        self.void_unknown = void_unknown  # 定缺 played, not recorded: the end of the wall cannot be judged
        self.end_fault: str | None = None  # declared ends that are not the hidden hands left (SETTLE_END)
        self.full = full_counts(rules.suits)
        self.seen = seen
        self.melds: list[list[Meld]] = [[] for _ in range(n)]
        self.rivers: list[list[int]] = [[] for _ in range(n)]
        self.void = list(void) if void is not None else [None] * n
        self.wall = list(wall) if wall is not None else None
        self.tiles = COPIES * 9 * len(rules.suits)  # not rules.tiles: a property of the interpreted RuleSet
        self.left = self.tiles - dealt - _total(self.hidden)  # sum() from compiled code is a generic call
        self.drawn = 0
        self.won = [False] * n
        self.wins: list[WinRecord] = []
        self.events: list[Event] = []
        self.phase: Phase = "discard"
        self.turn = dealer
        self.window: _Window | None = None
        self._discard_window = _Window(0, 0, 0)  # reopened on every discard (_Window.reopen), never while open
        self.ledger = Ledger(rules)
        self.taken: list[int] = []
        # The current turn: how its tiles came (for 杠上花, 杠上炮, "fresh" added kongs, 相公).
        self.last_draw: int | None = None  # the tile ``turn`` drew this turn
        self.kong_chain: list[tuple[Kong, int]] = []  # kongs since the last ordinary draw, with event index
        self.calls_made = False  # any pong or kong yet (for 地胡)
        self.discarded = [False] * n
        # discarded a tile not of its void suit (void_end_penalty's waiver); with no declared void, no waiver
        self.off_void = [v is None for v in self.void]
        self.draws = [0] * n
        # 过手胡: the most fan a seat passed on a discard since its last draw.
        self.passed_fan: list[int | None] = [None] * n
        self.compulsory_passes: list[tuple[int, int]] = []  # (seat, event) of passes in the last four
        self.passed_wins: list[tuple[int, int]] = []  # (seat, event) of every pass of a possible win
        self.ends: dict[int, SeatEnd] = {}  # 查花猪/查大叫 facts of the seats still in at an empty wall
        self.end_open = False  # an end is owed, but hidden hands without declared end states keep it unknown
        # event index → seats that could win on that tile: every added kong, and the discards someone could win on
        self.could_win_at: dict[int, tuple[int, ...]] = {}
        # Each seat's winning tiles, kept until its hand changes, the code of each of its suits and its size, kept
        # up to date tile by tile: every change goes through _add or _meld.
        self._hands = [_Concealed(codes[seat], len(kinds) + self.hidden[seat]) for seat, kinds in enumerate(hands)]

    # ------------------------------------------------------------------------------------ queries
    @property
    def index(self) -> int:
        """The event index the next action will have."""
        return len(self.events)

    def next_in(self, seat: int) -> int:
        """The next seat after ``seat`` in turn order still in the hand."""
        n = self.n
        for step in range(1, n + 1):
            s = (seat + step) % n
            if not self.won[s]:
                return s
        raise AssertionError("nobody is left in the hand")

    def next_dealer(self) -> int:
        """The next hand's dealer: :func:`next_dealer` of this hand's wins."""
        return next_dealer(self.rules, self.dealer, self.wins, self.n)

    def fingerprint(self) -> str:
        """A compact picture of the state for error messages."""
        hands = " | ".join(
            f"{s}{'*' if self.won[s] else '+' if self.has_won[s] else ''}:"
            f"{format_tiles(kinds_of_counts(self.counts[s])) or '-'}"
            + (f" ?{self.hidden[s]}" if self.hidden[s] else "")  # an observer record's unseen tiles
            + "".join(f" [{m}]" for m in self.melds[s])
            for s in range(self.n)
        )
        window = f" on {TILE_NAMES[self.window.tile]} from {self.window.source}" if self.window else ""
        return f"ev{self.index} {self.phase} turn={self.turn}{window} left={self.left} || {hands}"

    def turns_begun(self, seat: int) -> int:
        """``seat``'s turn (巡目) so far: :func:`pipeline.game.events.turns_begun` of the events replayed.

        >>> from pipeline.rules import load_ruleset
        >>> from pipeline.game.start import start_hand
        >>> from pipeline.rules.tiles import full_set
        >>> state = start_hand(load_ruleset("chengdu"), dealer=0, wall=full_set(), que=(0, 1, 2, 0))
        >>> state.turns_begun(0), state.turns_begun(1)
        (1, 0)
        """
        return turns_begun(self.events, self.dealer, seat)

    def visible(self, seat: int) -> list[int]:
        """Copies of each kind ``seat`` can see: its own hand, every river and every meld."""
        seen = list(self.counts[seat])
        for other in range(self.n):
            for k in self.rivers[other]:
                seen[k] = seen[k] + 1
            for meld in self.melds[other]:
                seen[meld.tile] = seen[meld.tile] + meld.size
        return seen

    def win_tiles(self, seat: int) -> frozenset[int]:
        """The tiles that would complete ``seat``'s hand, by shape and suits (empty unless it holds 13 − 3·melds)."""
        return tiles_of_mask(self.win_mask(seat))

    def win_mask(self, seat: int) -> int:
        """:meth:`win_tiles` as bits (``1 << kind``). Asked for three seats on every discard, so it is kept per
        seat until that seat's hand changes."""
        h = self._hands[seat]
        mask = h.mask
        if mask < 0:
            n_melds = len(self.melds[seat])
            ready_size = h.size == 13 - 3 * n_melds and not self.hidden[seat]  # hidden: not known
            mask = win_mask_of_suits(h.m, h.p, h.s, h.meld_suits, n_melds > 0, self.void[seat]) if ready_size else 0
            h.mask = mask
        return mask

    def can_win_with(self, seat: int, tile: int) -> bool:
        """Would ``tile`` complete ``seat``'s hand, by shape and suits?"""
        h = self._hands[seat]
        mask = h.mask
        if mask < 0:
            if not h.code(tile // 9):
                return False  # a lone tile of a suit not held completes nothing: no need to work the set out yet
            mask = self.win_mask(seat)
        return (mask >> tile) & 1 == 1

    def _add(self, seat: int, tile: int, n: int) -> None:
        """Change ``seat``'s concealed count of ``tile`` by ``n``: the one way a hand changes."""
        counts = self.counts[seat]
        counts[tile] = counts[tile] + n  # not ``+=``: see setup.py on indexed updates
        # one tile (a draw, a discard) without a product: mypyc multiplies a negative int on its slow, boxed path
        step = CODE_STEPS[tile]
        if n != 1:
            step = -step if n == -1 else n * step
        h, suit = self._hands[seat], tile // 9
        if suit == 0:
            h.m += step
        elif suit == 1:
            h.p += step
        else:
            h.s += step
        h.size += n
        h.mask = -1

    def _reveal(self, seat: int, tile: int, n: int) -> None:
        """``n`` of ``seat``'s hidden tiles come into view as ``tile`` (an observer record's hidden hand)."""
        self.hidden[seat] = self.hidden[seat] - n
        self._hands[seat].size -= n
        self.seen[tile] = self.seen[tile] + n
        self._add(seat, tile, n)

    def _take(self, seat: int, tile: int, n: int) -> None:
        """``n`` of ``tile`` leave ``seat``'s concealed tiles: the known ones first, then hidden ones shown."""
        held = self.counts[seat][tile]
        if held < n:
            self._reveal(seat, tile, n - held)
        self._add(seat, tile, -n)

    def _meld(self, seat: int, meld: Meld, index: int | None = None) -> None:
        """Add a meld to ``seat`` (or replace the one at ``index``)."""
        if index is None:
            self.melds[seat].append(meld)
        else:
            self.melds[seat][index] = meld
        h = self._hands[seat]
        h.meld_suits |= 1 << (meld.tile // 9)
        h.mask = -1

    def _score_win(
        self, seat: int, tile: int, *, self_drawn: bool, rob_kong: bool = False, kong_discard: bool = False
    ) -> Score:
        if self.hidden[seat]:  # a hand not seen: the claim values it (checked as possible, not as scored)
            return self._declared_win(seat)
        counts = list(self.counts[seat])
        if not self_drawn:
            counts[tile] = counts[tile] + 1
        after_kong = self_drawn and bool(self.kong_chain)
        hand = WinHand(
            counts27=tuple(counts),
            melds=tuple(self.melds[seat]),
            win_tile=tile,
            void=self.void[seat],
            self_drawn=self_drawn,
            after_kong=after_kong,
            kong_discard=kong_discard,
            rob_kong=rob_kong,
            last_tile=self.left == 0,
            heavenly=self_drawn and seat == self.dealer and self._dealers_first_turn(),
            earthly=self._earthly(seat, self_drawn),
        )
        return score(hand, self.rules)

    def _declared_win(self, seat: int) -> Score:
        declared = self.declared_wins.get(self.index)
        assert declared is not None, f"no declared value for seat {seat}'s win at event {self.index}"
        return declared

    def _dealers_first_turn(self) -> bool:
        """天胡: nothing has happened yet, or (``heavenly_after_kong``) only the dealer's concealed kongs of its first
        turn and their replacement draws."""
        if not self.events:
            return True
        return self.rules.heavenly_after_kong and all(
            e.seat == self.dealer and (isinstance(e, Draw) or (isinstance(e, Kong) and e.kind == "concealed"))
            for e in self.events
        )

    def win_value(self, seat: int, tile: int, *, self_drawn: bool) -> Score:
        """What a win of ``seat`` on ``tile`` is worth now: self-drawn (the tile it just drew), or on the tile
        of the open window. For a player deciding whether to take a win :meth:`can_hu` allows."""
        if self_drawn:
            return self._score_win(seat, tile, self_drawn=True)
        assert self.window is not None and self.window.tile == tile, "no open window on that tile"
        return self._window_score(seat)

    def facts(self) -> HandFacts:
        """The hand as it stands, frozen: call it once play has stopped."""
        return HandFacts(
            rules=self.rules,
            dealer=self.dealer,
            events=tuple(self.events),
            over=self.phase == "end",
            left=self.left,
            wins=tuple(self.wins),
            payments=tuple(self.ledger.payments),
            deltas=tuple(self.ledger.deltas()),
            void=tuple(self.void),
            melds=tuple(tuple(m) for m in self.melds),
            ends=self.ends,  # the state's own: nothing changes it once play has stopped
            passed_wins=tuple(self.passed_wins),
            compulsory_passes=tuple(self.compulsory_passes),
            could_win_at=self.could_win_at,
            next_dealer=self.next_dealer(),
            unchecked=tuple(self.unchecked),
            end_open=self.end_open,
        )

    def _earthly(self, seat: int, self_drawn: bool) -> bool:
        """地胡: a non-dealer wins on the dealer's first discard, or on their own first draw before any call.
        Every seat that wins on that discard (一炮多响) wins on the dealer's first discard: the open window is
        on event 0, whichever win on it comes first in the record."""
        if seat == self.dealer or self.calls_made or self.discarded[seat]:
            return False
        if self_drawn:
            return self.draws[seat] == 1
        if self.rules.earthly_on == "first_draw":
            return False  # 地胡 only on one's own first draw
        w = self.window
        return w is not None and w.event == 0 and isinstance(self.events[0], Discard) and w.source == self.dealer

    def _window_score(self, seat: int) -> Score:
        w = self.window
        assert w is not None
        could = w.could_win
        cached = could.get(seat) if could is not None else None
        if cached is None:
            cached = self._score_win(
                seat, w.tile, self_drawn=False, rob_kong=self.phase == "rob", kong_discard=w.kong_discard
            )
            if could is None:  # a hidden hand's win: its tiles did not say it could
                could = w.could_win = {}
            could[seat] = cached
        return cached

    # ------------------------------------------------------------------------------------ checks
    def _check_playing(self, seat: int) -> None:
        if self.phase == "end":
            raise IllegalAction("TURN_AFTER_END", f"seat {seat} acts after the hand ended", seat=seat)
        if not 0 <= seat < self.n:
            raise IllegalAction("SCHEMA_EVENT", f"no seat {seat}", seat=seat)
        if self.won[seat]:
            raise IllegalAction("TURN_WON", f"seat {seat} has already won and is out of the hand", seat=seat)

    def _after_window_turn(self) -> int | None:
        """Who draws when the open window closes with no further claim (``None``: the hand ends)."""
        w = self.window
        assert w is not None
        if len(self.wins) >= self.wins_to_end:
            return None
        if self.phase == "rob" and not w.winners:
            return w.source  # the kong stands: its player draws the replacement
        if self.left == 0:
            return None
        if w.winners:  # after the last winner in turn order from the discarder (no lambda: a closure built per call)
            n, farthest = self.n, 0
            for s in w.winners:
                farthest = max(farthest, (s - w.source) % n)
            return self.next_in((w.source + farthest) % n)
        return self.next_in(w.source)

    def _require_holds(self, seat: int, tile: int, n: int, what: str) -> None:
        held = self.counts[seat][tile]
        if held < n <= held + self.hidden[seat]:
            self._check_reveal(seat, tile, n - held, what)
        elif held < n:
            raise IllegalAction(
                "TILE_NOT_HELD" if n == 1 else "CLAIM_NOT_ALLOWED",
                f"seat {seat} cannot {what} {TILE_NAMES[tile]}: holds {held}, needs {n}",
                seat=seat,
                expected=f">= {n} x {TILE_NAMES[tile]}",
                actual=str(held),
            )

    def _check_reveal(self, seat: int, tile: int, n: int, what: str) -> None:
        """May ``n`` of ``seat``'s hidden tiles be ``tile``? Not if that would bring a fifth copy into view, or a
        tile of a suit the table does not play."""
        if SUITS[tile // 9] not in self.rules.suits:
            raise IllegalAction(
                "TILE_SUIT",
                f"seat {seat} cannot {what} {TILE_NAMES[tile]}: the table plays {self.rules.suits} only",
                seat=seat,
            )
        if self.seen[tile] + n > COPIES:
            raise IllegalAction(
                "TILE_FIFTH_COPY",
                f"seat {seat} cannot {what} {TILE_NAMES[tile]}: its hand is hidden, and {self.seen[tile]} of the four "
                f"are already in view elsewhere (it would need {n} more)",
                seat=seat,
                expected=f"<= {COPIES - self.seen[tile]} hidden x {TILE_NAMES[tile]}",
                actual=str(n),
            )

    def _check_draw_tile(self, seat: int, tile: int) -> None:
        # No record reaches an empty wall here: the draw phase needs a kong, which needs a tile left; a window
        # on the last tile has no next drawer. So it is an invariant, not a finding.
        assert self.left > 0, f"seat {seat} draws from an empty wall"
        if tile == HIDDEN:
            return  # a draw the observer did not see: only its turn can be checked
        if self.wall is not None:
            expected = self.wall[self.drawn]
            if tile != expected:
                raise IllegalAction(
                    "TILE_WALL_ORDER",
                    f"seat {seat} draws {TILE_NAMES[tile]}, the wall's next tile is {TILE_NAMES[expected]}",
                    seat=seat,
                    expected=TILE_NAMES[expected],
                    actual=TILE_NAMES[tile],
                )
        elif self.seen[tile] >= COPIES:
            raise IllegalAction("TILE_FIFTH_COPY", f"seat {seat} draws a fifth {TILE_NAMES[tile]}", seat=seat)
        elif SUITS[tile // 9] not in self.rules.suits:
            raise IllegalAction(
                "TILE_SUIT", f"seat {seat} draws {TILE_NAMES[tile]}: the table plays {self.rules.suits} only", seat=seat
            )

    # ------------------------------------------------------------------------------------ draw
    def verify_draw(self, seat: int, tile: int) -> None:
        self._check_playing(seat)
        if self.phase in ("claim", "rob"):
            expected = self._after_window_turn()
            if expected is None:
                raise IllegalAction("TURN_AFTER_END", f"seat {seat} draws after the hand ended", seat=seat)
        elif self.phase == "draw":
            expected = self.turn
        elif seat == self.turn:  # discard phase: the player to act already holds a full hand
            raise IllegalAction("TILE_COUNT_LONG", f"大相公: seat {seat} draws again without discarding", seat=seat)
        else:
            raise IllegalAction(
                "TURN_ORDER",
                f"seat {seat} draws while seat {self.turn} must discard",
                seat=seat,
                expected=self.turn,
                actual=seat,
            )
        if seat != expected:
            raise IllegalAction(
                "TURN_ORDER", f"seat {seat} draws, seat {expected} should", seat=seat, expected=expected, actual=seat
            )
        self._check_draw_tile(seat, tile)

    def _plain_draw(self, seat: int, tile: int) -> bool:
        """Is this the draw :meth:`verify_draw` passes without a doubt, and most draws are: the wall's next tile, drawn
        by the next seat still in after a discard nobody won on, with tiles left and the hand not won out? One native
        function; False sends the draw through verify_draw, which then passes it or says what is wrong."""
        w = self.window
        if self.phase != "claim" or w is None or w.winners or self.left == 0 or len(self.wins) >= self.wins_to_end:
            return False
        wall = self.wall
        return wall is not None and tile == wall[self.drawn] and seat == self.next_in(w.source)

    def can_draw(self, seat: int, tile: int) -> bool:
        return _can(self.verify_draw, seat, tile)

    def draw(self, seat: int, tile: int) -> Draw:
        return self._draw(Draw(seat, tile))

    def _draw(self, event: Draw) -> Draw:
        seat, tile = event.seat, event.tile
        if not self._plain_draw(seat, tile):
            self.verify_draw(seat, tile)
        if self.phase in ("claim", "rob"):
            self._close_window(drawer=seat)  # verify_draw worked out that this seat draws next
        observer = self.observer
        if observer is not None:
            observer.before_draw(self, seat, tile, len(self.events))
        self.events.append(event)
        if tile == HIDDEN:
            self.hidden[seat] = self.hidden[seat] + 1
            h = self._hands[seat]
            h.size += 1
            h.mask = -1
        else:
            self._add(seat, tile, 1)
            self.seen[tile] = self.seen[tile] + 1
        self.drawn += 1
        self.left -= 1
        self.draws[seat] = self.draws[seat] + 1
        self.passed_fan[seat] = None
        self.last_draw = tile  # the kong chain stays: empty, unless this draw replaces an unrobbed kong
        self.phase = "discard"
        self.turn = seat
        return event

    # ------------------------------------------------------------------------------------ discard
    def _check_hand_goes_on(self, seat: int, what: str) -> None:
        """Once the open window is the hand's last (empty wall, or three winners), only wins on its tile follow."""
        if self.phase in ("claim", "rob") and self._after_window_turn() is None:
            raise IllegalAction("TURN_AFTER_END", f"seat {seat} {what} after the hand ended", seat=seat)

    def verify_discard(self, seat: int, tile: int) -> None:
        self._check_playing(seat)
        self._check_hand_goes_on(seat, "discards")
        if (self.phase == "draw" and seat == self.turn) or (
            self.phase in ("claim", "rob") and seat == self._after_window_turn()
        ):
            raise IllegalAction("TILE_COUNT_SHORT", f"小相公: seat {seat} discards without drawing", seat=seat)
        if self.phase != "discard" or seat != self.turn:
            expected = self.turn if self.phase in ("discard", "draw") else None
            raise IllegalAction(
                "TURN_ORDER",
                f"seat {seat} discards out of turn ({self.phase} phase, turn {self.turn})",
                seat=seat,
                expected=expected,
                actual=seat,
            )
        self._require_holds(seat, tile, 1, "discard")
        if (
            self.has_won[seat]
            and tile != self.last_draw
            and self.last_draw != HIDDEN  # a hidden draw: whether it is the tile discarded is not known
            and self.rules.after_win_discard == "drawn_only"
        ):
            drew = TILE_NAMES[self.last_draw] if self.last_draw is not None else "nothing"
            raise IllegalAction(
                "TURN_AFTER_WIN",
                f"seat {seat} has won (血流成河): its hand is locked and it discards the tile it drew ({drew})",
                seat=seat,
                expected=drew,
                actual=TILE_NAMES[tile],
            )
        void = self.void[seat]
        if (
            void is not None
            and tile // 9 != void
            and self._void_first
            and any(self.counts[seat][void * 9 : void * 9 + 9])
        ):
            raise IllegalAction(
                "TURN_VOID_FIRST",
                f"seat {seat} discards {TILE_NAMES[tile]} while holding void-suit ({SUITS[void]}) tiles",
                seat=seat,
            )

    def _plain_discard(self, seat: int, tile: int) -> bool:
        """Is this the discard :meth:`verify_discard` passes without a doubt, and most discards are: in the discard
        phase, by the seat to play, of a known tile it holds, not locked by a win (血流成河) nor owing a void-suit
        tile first? Asked in one native function, without verify_discard's calls; False sends the discard through
        verify_discard, which then passes it or says what is wrong."""
        if self.phase != "discard" or seat != self.turn or self.won[seat] or self.has_won[seat]:
            return False
        if self.counts[seat][tile] < 1:
            return False
        void = self.void[seat]
        return void is None or tile // 9 == void or not self._void_first or not self._hands[seat].code(void)

    def can_discard(self, seat: int, tile: int) -> bool:
        return _can(self.verify_discard, seat, tile)

    def discard(self, seat: int, tile: int) -> Discard:
        return self._discard(Discard(seat, tile))

    def _discard(self, event: Discard) -> Discard:
        seat, tile = event.seat, event.tile
        plain = self._plain_discard(seat, tile)
        if not plain:
            self.verify_discard(seat, tile)
        index = self.index
        observer = self.observer
        if observer is not None:
            observer.before_discard(self, seat, tile, index)
        drawn = self.last_draw
        if (
            self.left <= 3
            and drawn is not None
            and self.rules.must_win_last_four
            and self._holds_a_win(seat)
            and self.can_hu(seat, drawn, None)
        ):
            # 最后四张: a drawn tile that wins must be won on ("当这张牌出现时，叫的玩家只能胡牌"); the draw is the
            # event before (last_draw is cleared by every other action).
            self.compulsory_passes.append((seat, index - 1))
        self.events.append(event)
        if plain:
            self._add(seat, tile, -1)  # _take, for a tile the seat was seen to hold
        else:
            self._take(seat, tile, 1)
        self.rivers[seat].append(tile)
        self.discarded[seat] = True
        if not self.off_void[seat] and tile // 9 != self.void[seat]:  # the bool first: a cheap test, mostly true
            self.off_void[seat] = True
        kong_event = self.kong_chain[-1][1] if self.kong_chain else None
        window = self._discard_window  # closed: a discard comes only once the last window closed
        window.reopen(seat, tile, index, kong_event)
        self.window = window
        suit = tile // 9
        for other in range(self.n):  # can_win_with, inline: three seats a discard
            if other == seat or self.won[other]:
                continue
            h = self._hands[other]
            mask = h.mask
            if mask < 0:
                if not h.code(suit):
                    continue  # a lone tile of a suit not held completes nothing
                mask = self.win_mask(other)
            if (mask >> tile) & 1:
                if window.could_win is None:
                    window.could_win = {}
                window.could_win[other] = None
        if window.could_win is not None:
            self.could_win_at[index] = tuple(window.could_win)
        if observer is not None:
            observer.after_discard(self, seat, tile, index, window.could_win is not None)
        if self.kong_chain:  # a new empty list only when there was a chain (not one per discard)
            self.kong_chain = []
        self.last_draw = None
        self.phase = "claim"
        return event

    def _holds_a_win(self, seat: int) -> bool:
        """Do ``seat``'s tiles already form a win by shape and suits? (The quick part of :meth:`can_hu` for a
        self-drawn win, asked first because a refused :meth:`can_hu` costs an exception.)"""
        counts, melds = self.counts[seat], self.melds[seat]
        if self.hidden[seat]:
            return False  # a hidden hand: whether it held a win is not known
        h = self._hands[seat]
        # hand.is_legal_win, its suit rule from the codes and melds' suits kept for the seat (suits_ok's bits)
        held, void = h.meld_suits | (1 if h.m else 0) | (2 if h.p else 0) | (4 if h.s else 0), self.void[seat]
        suits_ok = held != 7 and (void is None or not (held >> void) & 1)
        return h.size == 14 - 3 * len(melds) and suits_ok and is_win(counts, melds)

    # ------------------------------------------------------------------------------------ pong
    def _verify_call(self, seat: int, tile: int, need: int, what: str) -> None:
        self._check_playing(seat)
        w = self.window
        if self.phase != "claim" or w is None:
            raise IllegalAction("CLAIM_NOT_ALLOWED", f"seat {seat} calls {what} with no discard to call", seat=seat)
        if w.winners:
            raise IllegalAction(
                "CLAIM_PRECEDENCE", f"seat {seat} calls {what} after a win on the same discard", seat=seat
            )
        if seat == w.source:
            raise IllegalAction("CLAIM_NOT_ALLOWED", f"seat {seat} calls its own discard", seat=seat)
        if self.has_won[seat] and not self.rules.after_win_pong:
            raise IllegalAction(
                "CLAIM_NOT_ALLOWED", f"seat {seat} has won (血流成河): its hand is locked, no {what}", seat=seat
            )
        if tile != w.tile:
            raise IllegalAction(
                "CLAIM_NOT_ALLOWED",
                f"seat {seat} calls {what} on {TILE_NAMES[tile]}, the discard is {TILE_NAMES[w.tile]}",
                seat=seat,
                expected=TILE_NAMES[w.tile],
                actual=TILE_NAMES[tile],
            )
        if self.left == 0 and (what != "pong" or self.rules.call_on_last_discard == "none"):
            # a kong needs a replacement tile; a pong on the last discard only where call_on_last_discard allows it
            raise IllegalAction(
                "CLAIM_NOT_ALLOWED", f"seat {seat} calls {what} on the last discard (empty wall)", seat=seat
            )
        if self.void[seat] is not None and tile // 9 == self.void[seat] and self.rules.void_meld == "forbid":
            raise IllegalAction("CLAIM_NOT_ALLOWED", f"seat {seat} calls {what} in its void suit", seat=seat)
        self._require_holds(seat, tile, need, what)

    def verify_pong(self, seat: int, tile: int, source: int) -> None:
        self._verify_call(seat, tile, 2, "pong")
        assert self.window is not None
        if source != self.window.source:
            raise IllegalAction(
                "CLAIM_NOT_ALLOWED",
                f"pong names seat {source} as the source, the discard was seat {self.window.source}'s",
                seat=seat,
                expected=self.window.source,
                actual=source,
            )

    def can_pong(self, seat: int, tile: int, source: int) -> bool:
        return _can(self.verify_pong, seat, tile, source)

    def pong(self, seat: int, tile: int, source: int) -> Pong:
        return self._pong(Pong(seat, tile, source))

    def _pong(self, event: Pong) -> Pong:
        seat, tile, source = event.seat, event.tile, event.source
        self.verify_pong(seat, tile, source)
        self._close_window(claimed=True)
        self.events.append(event)
        self.rivers[source].pop()
        self._take(seat, tile, 2)
        self._meld(seat, Meld("pong", tile, source))
        self._void_meld(seat, tile, len(self.events) - 1)
        self.calls_made = True
        self.phase = "discard"
        self.turn = seat
        self.last_draw = None
        self.kong_chain = []
        return event

    # ------------------------------------------------------------------------------------ kong
    def verify_kong(self, seat: int, tile: int, kind: str, source: int | None = None) -> None:
        if kind == "direct":
            self._verify_call(seat, tile, 3, "kong")
            assert self.window is not None
            if source != self.window.source:
                raise IllegalAction(
                    "CLAIM_NOT_ALLOWED",
                    f"direct kong names seat {source}, the discard was seat {self.window.source}'s",
                    seat=seat,
                    expected=self.window.source,
                    actual=source,
                )
            return
        self._check_playing(seat)
        self._check_hand_goes_on(seat, f"declares a {kind} kong")
        if self.phase != "discard" or seat != self.turn:
            raise IllegalAction(
                "TURN_ORDER",
                f"seat {seat} declares a {kind} kong out of turn",
                seat=seat,
                expected=self.turn,
                actual=seat,
            )
        if self.left == 0:
            raise IllegalAction(
                "CLAIM_NOT_ALLOWED", f"seat {seat} kongs with an empty wall (no replacement)", seat=seat
            )
        if self.void[seat] is not None and tile // 9 == self.void[seat] and self.rules.void_meld == "forbid":
            raise IllegalAction("CLAIM_NOT_ALLOWED", f"seat {seat} kongs in its void suit", seat=seat)
        if kind == "concealed":
            self._require_holds(seat, tile, 4, "declare a concealed kong of")
        elif kind == "added":
            if not any(m.kind == "pong" and m.tile == tile for m in self.melds[seat]):
                raise IllegalAction(
                    "CLAIM_NOT_ALLOWED", f"seat {seat} adds to a pong of {TILE_NAMES[tile]} it does not have", seat=seat
                )
            self._require_holds(seat, tile, 1, "add")
        else:
            raise IllegalAction("SCHEMA_EVENT", f"unknown kong kind {kind!r}", seat=seat)
        if self.has_won[seat] and not self.hidden[seat]:  # a hidden locked hand: its waits are not known
            self._check_kong_after_win(seat, tile, kind)

    def _check_kong_after_win(self, seat: int, tile: int, kind: str) -> None:
        """血流成河: may a player who has won (its hand locked) declare this kong (``after_win_kong``)?"""
        rule = self.rules.after_win_kong
        ok = False
        if rule == "added_drawn":
            ok = kind == "added" and tile == self.last_draw
        elif rule != "none":
            melds, void = self.melds[seat], self.void[seat]
            locked = list(self.counts[seat])
            if self.last_draw is not None:
                locked[self.last_draw] = locked[self.last_draw] - 1
            after = list(self.counts[seat])
            if kind == "concealed":
                after[tile] = after[tile] - 4
                new_melds = [*melds, Meld("concealed", tile)]
            else:
                after[tile] = after[tile] - 1
                new_melds = [
                    Meld("added", m.tile, m.source) if m.tile == tile and m.kind == "pong" else m for m in melds
                ]
            waits = win_tiles(after, new_melds, void)
            # same_waits: exactly the waits of the locked hand; keeps_won_tiles: every tile won on still waits
            ok = waits == win_tiles(locked, melds, void) if rule == "same_waits" else set(self.won_on[seat]) <= waits
        if not ok:
            raise IllegalAction(
                "CLAIM_NOT_ALLOWED",
                f"seat {seat} has won (血流成河): a {kind} kong of {TILE_NAMES[tile]} is not allowed on its locked "
                f"hand (after_win_kong = {rule})",
                seat=seat,
            )

    def can_kong(self, seat: int, tile: int, kind: str, source: int | None = None) -> bool:
        return _can(self.verify_kong, seat, tile, kind, source)

    def kong(self, seat: int, tile: int, kind: str, source: int | None = None) -> Kong:
        return self._kong(Kong(seat, tile, kind, source if kind == "direct" else None))  # type: ignore[arg-type]

    def _kong(self, event: Kong) -> Kong:
        seat, tile, kind, source = event.seat, event.tile, event.kind, event.source
        self.verify_kong(seat, tile, kind, source)
        index = self.index
        if kind == "direct":
            assert source is not None
            self._close_window(claimed=True)
            self.events.append(event)
            self.rivers[source].pop()
            self._take(seat, tile, 3)
            self._meld(seat, Meld("direct", tile, source))
            self.ledger.kong(seat, "direct", index, source=source)
            self._void_meld(seat, tile, index)
            self.kong_chain = [(event, index)]
        elif kind == "concealed":
            self.events.append(event)
            self._take(seat, tile, 4)
            self._meld(seat, Meld("concealed", tile))
            self.ledger.kong(seat, "concealed", index)
            self._void_meld(seat, tile, index)
            self.kong_chain.append((event, index))
        else:
            self.events.append(event)
            self._take(seat, tile, 1)
            fresh = self.last_draw == tile
            if self.last_draw == HIDDEN:  # drawn unseen: was the added tile the one drawn? the claim says
                kongs = self.declared_kongs
                fresh = kongs is None or index in kongs
                if self.rules.added_kong_paid == "fresh":
                    how = "taken as so" if kongs is None else "as the claimed payments say"
                    self.unchecked.append(
                        f"whether seat {seat}'s added kong at event {index} was of the tile just drawn "
                        f"(a hidden draw: {how})"
                    )
            self.window = _Window(seat, tile, index, fresh=fresh)
            if not self.rules.rob_kong:  # nobody may rob it: the kong stands at once
                self._stand_added_kong()
                self.window = None
                self.calls_made = True
                self.phase = "draw"
                self.turn = seat
                self.last_draw = None
                return event
            self.window.could_win = {}  # every added kong is listed in could_win_at, robbed or not
            for other in range(self.n):
                if other != seat and not self.won[other] and self.can_win_with(other, tile):
                    self.window.could_win[other] = None
            self.could_win_at[index] = tuple(self.window.could_win)
            self.phase = "rob"
            self.calls_made = True
            self.last_draw = None
            return event
        self.calls_made = True
        self.phase = "draw"
        self.turn = seat
        self.last_draw = None
        return event

    def _void_meld(self, seat: int, tile: int, event: int) -> None:
        """A pong or kong of ``seat``'s void suit (legal only with ``void_meld = "penalty"``) costs
        ``void_meld_penalty`` ("a pung or kong of the void suit is declared: 48", SBR p. 31). An added kong
        completes a pong that already paid."""
        if self.void[seat] is not None and tile // 9 == self.void[seat] and self.rules.void_meld_penalty:
            self.ledger.void_penalty(seat, self.rules.void_meld_penalty, event)

    def _stand_added_kong(self) -> None:
        """Nobody robbed the added kong: it stands, is paid, and its player draws the replacement."""
        w = self.window
        assert w is not None
        seat = w.source
        melds = self.melds[seat]
        i = next(i for i, m in enumerate(melds) if m.kind == "pong" and m.tile == w.tile)
        self._meld(seat, Meld("added", w.tile, melds[i].source), i)
        self.ledger.kong(seat, "added", w.event, fresh=w.fresh)
        event = self.events[w.event]
        assert isinstance(event, Kong)
        self.kong_chain.append((event, w.event))

    # ------------------------------------------------------------------------------------ hu
    def verify_hu(self, seat: int, tile: int, source: int | None, rob_kong: bool = False) -> Score:
        """Check a win and return its score."""
        self._check_playing(seat)
        if source is None:
            return self._verify_self_draw(seat, tile, rob_kong)
        w = self.window
        if rob_kong and self.phase != "rob":
            last = self.events[-1] if self.events else None
            if isinstance(last, Kong) and last.kind == "concealed":
                raise IllegalAction("CLAIM_ROB_CONCEALED", f"seat {seat} robs a concealed kong", seat=seat)
            if isinstance(last, Kong) and last.kind == "added" and not self.rules.rob_kong:
                raise IllegalAction(
                    "CLAIM_NOT_ALLOWED", f"seat {seat} robs an added kong: the rules allow no 抢杠", seat=seat
                )
            raise IllegalAction("WIN_WRONG_TILE", f"seat {seat} robs a kong, but no added kong is open", seat=seat)
        if self.phase not in ("claim", "rob") or w is None:
            raise IllegalAction("WIN_WRONG_TILE", f"seat {seat} wins on a discard, but no discard is open", seat=seat)
        if source != w.source or tile != w.tile:
            raise IllegalAction(
                "WIN_WRONG_TILE",
                f"seat {seat} wins on {TILE_NAMES[tile]} from seat {source}; the open tile is "
                f"{TILE_NAMES[w.tile]} from seat {w.source}",
                seat=seat,
                expected=f"{TILE_NAMES[w.tile]} from {w.source}",
                actual=f"{TILE_NAMES[tile]} from {source}",
            )
        if seat == w.source or seat in w.winners:
            raise IllegalAction("WIN_WRONG_TILE", f"seat {seat} cannot win on its own tile", seat=seat)
        if self.hidden[seat] or not (self.win_mask(seat) >> tile) & 1:
            # the tiles the state keeps as winning for a seen hand are those of a right size, suits and shape: a
            # tile among them passes every check of _check_winning_hand (most wins); any other is checked there
            self._check_winning_hand(seat, tile, self_drawn=False)
        s = self._window_score(seat)
        passed = self.passed_fan[seat]
        if self.rules.pass_win_rule and passed is not None and s.fan <= passed:
            raise IllegalAction(
                "CLAIM_PASSED_WIN",
                f"过手胡: seat {seat} passed a {passed}-fan win since its last draw "
                f"and now wins {s.fan} fan on a discard",
                seat=seat,
                expected=f"> {passed} fan",
                actual=f"{s.fan} fan",
            )
        return s

    def _verify_self_draw(self, seat: int, tile: int, rob_kong: bool) -> Score:
        if rob_kong:
            raise IllegalAction("SCHEMA_EVENT", f"seat {seat}: a self-drawn win cannot rob a kong", seat=seat)
        heavenly = not self.events and seat == self.dealer
        if self.phase != "discard" or seat != self.turn:
            raise IllegalAction("TURN_ORDER", f"seat {seat} claims a self-drawn win out of turn", seat=seat)
        if not heavenly and self.last_draw is None:
            raise IllegalAction(
                "WIN_WRONG_TILE", f"seat {seat} claims a self-drawn win without having drawn", seat=seat
            )
        reveal = 0  # a hidden hand's winning tile, shown by the win
        if not heavenly and self.last_draw == HIDDEN:
            reveal = 1  # the tile drawn unseen is the one it wins on
        elif not heavenly and tile != self.last_draw:
            assert self.last_draw is not None
            raise IllegalAction(
                "WIN_WRONG_TILE",
                f"seat {seat} wins on {TILE_NAMES[tile]} but drew {TILE_NAMES[self.last_draw]}",
                seat=seat,
                expected=TILE_NAMES[self.last_draw],
                actual=TILE_NAMES[tile],
            )
        if heavenly and self.counts[seat][tile] == 0:
            if not self.hidden[seat]:
                raise IllegalAction(
                    "WIN_WRONG_TILE", f"seat {seat} wins on {TILE_NAMES[tile]}, which it does not hold", seat=seat
                )
            reveal = 1  # a hidden dealt hand: the tile must be one it could hold
        if reveal:
            self._check_reveal(seat, tile, 1, "win on")
        self._check_winning_hand(seat, tile, self_drawn=True, reveal=reveal)
        return self._score_win(seat, tile, self_drawn=True)

    def _check_winning_hand(self, seat: int, tile: int, *, self_drawn: bool, reveal: int = 0) -> None:
        """The size, the suits and the shape of a win; ``reveal``: that many of a hidden hand's tiles are the
        winning tile. A hand still holding hidden tiles must be one that could win (:func:`could_win`)."""
        counts = list(self.counts[seat])
        if not self_drawn:
            counts[tile] = counts[tile] + 1
        counts[tile] = counts[tile] + reveal
        melds = self.melds[seat]
        size = self._hands[seat].size + (0 if self_drawn else 1)  # sum(counts), kept up to date by _add
        expected = 14 - 3 * len(melds)
        if size != expected:
            code = "TILE_COUNT_SHORT" if size < expected else "TILE_COUNT_LONG"
            raise IllegalAction(
                code,
                f"相公: seat {seat} holds {size} tiles at its win, a win needs {expected}",
                seat=seat,
                expected=expected,
                actual=size,
            )
        if not suits_ok(counts, melds, self.void[seat]):
            why = suits_fault(counts, melds, self.void[seat])
            suits = "".join(SUITS[s] for s in sorted(suits_used(counts, melds)))
            raise IllegalAction("WIN_VOID_SUIT", f"seat {seat} declares a win: {why}", seat=seat, actual=suits)
        hidden = self.hidden[seat] - reveal
        if hidden:
            spare = [self.full[k] - self.seen[k] for k in range(27)]
            spare[tile] = spare[tile] - reveal
            if not could_win(counts, hidden, melds, self.void[seat], spare):
                raise IllegalAction(
                    "WIN_FALSE",
                    f"诈胡: no {hidden} unseen tiles make a win of seat {seat}'s "
                    f"{format_tiles(kinds_of_counts(counts))} (with {len(melds)} melds): its hand is hidden, "
                    "and the tiles in view leave none that could",
                    seat=seat,
                )
        elif not is_win(counts, melds):
            raise IllegalAction(
                "WIN_FALSE", f"诈胡: seat {seat}'s {format_tiles(kinds_of_counts(counts))} does not win", seat=seat
            )

    def can_hu(self, seat: int, tile: int, source: int | None, rob_kong: bool = False) -> bool:
        return _can(self.verify_hu, seat, tile, source, rob_kong)

    def hu(self, seat: int, tile: int, source: int | None, rob_kong: bool = False) -> Hu:
        return self._hu(Hu(seat, tile, source, rob_kong))

    def _hu(self, event: Hu) -> Hu:
        seat, tile, source = event.seat, event.tile, event.source
        shown = self.shown.get(self.index)
        if shown is not None and self.hidden[seat]:
            self._show(seat, tile, source is None, shown)
        s = self.verify_hu(seat, tile, source, event.rob_kong)
        index = self.index
        if source is None:
            self.events.append(event)
            feeder = None
            if len(self.kong_chain) == 1 and self.kong_chain[0][0].kind == "direct":
                feeder = self.kong_chain[0][0].source  # 点杠花
            self.ledger.win(seat, s, index, kong_feeder=feeder, stays=self.flow)
            self._record_win(seat, index, tile, "self_draw", None, s, order=len(self._win_orders()) + 1)
            self._has_won(seat, tile)
            if self.last_draw == HIDDEN:
                self._reveal(seat, tile, 1)  # the tile drawn unseen, shown by the win
            self._take(seat, tile, 1)
            self.taken.append(tile)  # the winning tile leaves the hand with the win
            self.kong_chain = []
            self.last_draw = None
            if len(self.wins) >= self.wins_to_end or self.left == 0:
                self._end()
            else:
                self.phase = "draw"
                self.turn = self.next_in(seat)
            return event
        w = self.window
        assert w is not None
        rob = self.phase == "rob"
        if event.rob_kong != rob:
            event = Hu(seat, tile, source, rob_kong=rob)  # a win in the rob window robs the kong, flagged or not
        self.events.append(event)
        first_of_window = not w.winners
        w.winners = (*w.winners, seat)
        order = len(self._win_orders()) + (1 if first_of_window else 0)
        self.ledger.win(seat, s, index, discarder=source, stays=self.flow)
        self._record_win(seat, index, tile, "rob_kong" if rob else "discard", source, s, order=order)
        self._has_won(seat, tile)
        return event

    def _show(self, seat: int, tile: int, self_drawn: bool, shown: Sequence[int]) -> None:
        """A hidden hand shown at its win (``shown``: its concealed tiles with the winning tile): every tile it is
        known to hold must be there, the rest are its hidden tiles coming into view (no fifth copy). A self-drawn
        win's unseen draw is the winning tile."""
        held = counts_of(shown)
        if self_drawn and self.last_draw == HIDDEN:
            if not held[tile]:
                raise IllegalAction(
                    "WIN_WRONG_TILE",
                    f"seat {seat} shows a hand without the tile it wins on, {TILE_NAMES[tile]}",
                    seat=seat,
                )
        else:
            held[tile] = held[tile] - (0 if self_drawn else 1)  # a discard's or a robbed kong's tile was not held
        size = self._hands[seat].size
        if sum(held) != size or any(held[k] < self.counts[seat][k] for k in range(27)):
            raise IllegalAction(
                "TILE_NOT_HELD",
                f"seat {seat} shows {format_tiles(shown)} at its win: not the {size} tiles it holds "
                f"({format_tiles(kinds_of_counts(self.counts[seat]))} and {self.hidden[seat]} unseen)",
                seat=seat,
            )
        for kind in range(27):
            extra = held[kind] - self.counts[seat][kind]
            if extra:
                self._check_reveal(seat, kind, extra, "show")
        for kind in range(27):
            extra = held[kind] - self.counts[seat][kind]
            if extra:
                self._reveal(seat, kind, extra)
        if self_drawn and self.last_draw == HIDDEN:
            self.last_draw = tile  # its unseen draw, now seen

    def _has_won(self, seat: int, tile: int) -> None:
        """A win: the winner leaves the hand, except in 血流成河, where it stays with its hand locked."""
        self.has_won[seat] = True
        self.won_on[seat].append(tile)
        if not self.flow:
            self.won[seat] = True

    def _win_orders(self) -> set[int]:
        return {w.order for w in self.wins}

    def _record_win(
        self, seat: int, index: int, tile: int, how: WinHow, source: int | None, s: Score, order: int
    ) -> None:
        self.wins.append(WinRecord(seat=seat, event=index, tile=tile, how=how, source=source, score=s, order=order))
        if self.observer is not None:
            self.observer.win(self, seat, index)

    # ------------------------------------------------------------------------------------ windows
    def _close_window(self, *, claimed: bool = False, drawer: int | None = None) -> None:
        """Close the open claim or rob window: record passes, settle what waited on it, move the turn (to
        ``drawer`` when the caller has already worked out who draws next)."""
        w = self.window
        assert w is not None
        if w.could_win is not None:  # a test, not a loop over "or ()": a generic iteration per window
            for seat in w.could_win:
                if seat in w.winners:
                    continue
                s = self._window_score(seat)
                self.passed_wins.append((seat, w.event))
                prior = self.passed_fan[seat]
                barred = self.rules.pass_win_rule and prior is not None and s.fan <= prior  # 过手胡: it may not win
                if self.rules.must_win_last_four and self.left <= 3 and not barred:
                    self.compulsory_passes.append((seat, w.event))
                self.passed_fan[seat] = s.fan if prior is None else max(prior, s.fan)
        was_rob = self.phase == "rob"
        if w.winners and w.kong_discard and w.kong_event is not None:
            kong = self.events[w.kong_event]
            self.ledger.gang_shang_pao(kong.seat, w.kong_event, w.winners, self.wins[-1].event)
        if was_rob:
            if w.winners:
                self.taken.append(w.tile)  # the robbed tile leaves with the winners; the pong stays a pong
                self.kong_chain = []
            else:
                self._stand_added_kong()
        if claimed:
            self.window = None
            return
        nxt = drawer if drawer is not None else self._after_window_turn()
        self.window = None
        if nxt is None:
            self._end()
            return
        self.phase = "draw"
        self.turn = nxt

    def close(self) -> None:
        """End of the record: close an open window, then the hand must be over."""
        if self.phase in ("claim", "rob"):
            self._close_window()

    @property
    def over(self) -> bool:
        return self.phase == "end"

    def _end(self) -> None:
        self.phase = "end"
        self.window = None
        in_hand = [s for s in range(self.n) if not self.won[s]]
        # the wall ran out with the hand still on (流局/黄庄: 2+ still in; in 普通版, nobody has won; in 血流成河
        # everybody is in, and those who never won are checked)
        never = [s for s in in_hand if not self.has_won[s]]
        if self.left == 0 and len(self.wins) < self.wins_to_end and len(in_hand) >= 2 and never and not self.ends:
            ends = self._seat_ends(never)
            if ends is not None:
                self.ends = ends
                self.ledger.end_of_wall(list(ends.values()), [s for s in in_hand if self.has_won[s]])
        elif self.rules.hua_zhu_at_three_hu and len(in_hand) == 1 and len(self.wins) >= self.wins_to_end:
            # 血战 ended by its third winner: the player left is checked for a flower pig only
            (last,) = in_hand
            ends = self._seat_ends([last])
            if ends is not None:
                pig = ends[last].pig
                self.ends = {last: SeatEnd(seat=last, pig=pig, ready=None, wall_end=False)}
                self.ledger.end_of_wall(list(self.ends.values()), [], three_hu=True)
        elif self.declared_ends:
            self.end_fault = (
                f"the record declares end states for seats {sorted(self.declared_ends)}, but no end is settled"
            )

    def _seat_ends(self, seats: list[int]) -> dict[int, SeatEnd] | None:
        """The end states of ``seats``: from the hands, and for a hand still hidden as the record declares it;
        ``None`` (noted) when the record does not declare exactly the hidden hands among them."""
        if self.void_unknown:  # who is ready or holds its void suit depends on the unrecorded 定缺
            self.unchecked.append("the end of the wall: who was ready, or held the void suit (定缺 not recorded)")
            self.end_open = True
            for s in seats:  # three suits make a flower pig whatever the void suit: that much is known
                if not self.hidden[s]:
                    h = self._hands[s]
                    pig = (h.meld_suits | (1 if h.m else 0) | (2 if h.p else 0) | (4 if h.s else 0)) == 7
                    self.ends[s] = SeatEnd(seat=s, pig=pig, ready=None, wall_end=False)
            return None
        hidden = [s for s in seats if self.hidden[s]]
        declared = self.declared_ends
        if hidden or declared:
            if declared is None:
                self.unchecked.append(
                    f"the end of the hand: seats {hidden} are hidden and the record declares no end states"
                )
                self.end_open = True
                return None
            if sorted(declared) != hidden:
                self.end_fault = f"the end states name seats {sorted(declared)}, the hidden hands left are {hidden}"
                return None
        return {s: declared[s] if declared is not None and s in declared else self.seat_end(s) for s in seats}

    def seat_end(self, seat: int) -> SeatEnd:
        """查花猪 / 查大叫 facts of a seat still in at an empty wall: a flower pig holds three suits; a void holder
        still holds tiles of its declared void suit (three suits when none was declared), unless every tile it
        discarded was of that suit (void_end_penalty's waiver, SBR p. 11)."""
        counts, melds, void = self.counts[seat], self.melds[seat], self.void[seat]
        h = self._hands[seat]  # hand.suit_bits, from the codes and the melds' suits kept for the seat
        used = h.meld_suits | (1 if h.m else 0) | (2 if h.p else 0) | (4 if h.s else 0)
        pig = used == 7
        holds_void = bool((used >> void) & 1) if void is not None else pig
        ready = None
        if not pig and h.size == 13 - 3 * len(melds):
            # the winning tiles this state keeps (a hidden hand's are not known: worked out from its counts)
            mask = None if self.hidden[seat] else self.win_mask(seat)
            ready = ready_value(counts, melds, self.rules, void=void, mask=mask)
        return SeatEnd(seat=seat, pig=pig, ready=ready, void_penalty=holds_void and self.off_void[seat])

    # ------------------------------------------------------------------------------------ moves
    def apply(self, event: Event) -> Event:
        """Apply a record's event through the matching action method."""
        if isinstance(event, Draw):
            return self._draw(event)
        if isinstance(event, Discard):
            return self._discard(event)
        if isinstance(event, Pong):
            return self._pong(event)
        if isinstance(event, Kong):
            return self._kong(event)
        return self._hu(event)

    def turn_options(self, seat: int) -> list[Event]:
        """What ``seat`` may do holding a full hand on its turn: win, discard, kong."""
        if self.phase != "discard" or seat != self.turn or self.won[seat]:
            return []
        counts = self.counts[seat]
        moves: list[Event] = []
        if self.last_draw is not None and self.can_hu(seat, self.last_draw, None):
            moves.append(Hu(seat, self.last_draw, None))
        elif not self.events and seat == self.dealer:  # 天胡: any tile of the dealt hand
            win = next((k for k in range(27) if counts[k] and self.can_hu(seat, k, None)), None)
            if win is not None:
                moves.append(Hu(seat, win, None))
        for k in range(27):
            if counts[k] and self.can_discard(seat, k):
                moves.append(Discard(seat, k))
            if counts[k] == 4 and self.can_kong(seat, k, "concealed"):
                moves.append(Kong(seat, k, "concealed"))
        for m in self.melds[seat]:
            if m.kind == "pong" and self.can_kong(seat, m.tile, "added"):
                moves.append(Kong(seat, m.tile, "added"))
        return moves

    def claim_options(self, seat: int) -> list[Event]:
        """What ``seat`` may claim in the open window: a win, a pong, a direct kong (a pass is implied)."""
        w = self.window
        if self.phase not in ("claim", "rob") or w is None or seat == w.source or self.won[seat]:
            return []
        moves: list[Event] = []
        rob = self.phase == "rob"
        if w.could_win is not None and seat in w.could_win and self.can_hu(seat, w.tile, w.source, rob):
            moves.append(Hu(seat, w.tile, w.source, rob_kong=rob))
        if not rob:
            if self.can_pong(seat, w.tile, w.source):
                moves.append(Pong(seat, w.tile, w.source))
            if self.can_kong(seat, w.tile, "direct", w.source):
                moves.append(Kong(seat, w.tile, "direct", w.source))
        return moves

    def next_draw(self) -> Draw | None:
        """The draw that comes next if nobody claims (the wall must be known); ``None`` when the hand ends."""
        assert self.wall is not None, "next_draw needs a known wall"
        if self.phase == "draw":
            seat: int | None = self.turn
        elif self.phase in ("claim", "rob"):
            seat = self._after_window_turn()
        else:
            return None
        if seat is None or self.left == 0:
            return None
        return Draw(seat, self.wall[self.drawn])

    # ------------------------------------------------------------------------------------ invariants
    def check_invariants(self) -> None:
        """Tile conservation (36 × suits tiles, none over four copies, none of a suit not in play) and zero-sum
        money."""
        # Each seat's suit codes and size, worked out from its counts and checked against those kept tile by tile; the
        # same walk adds the tiles up as codes (three bits a rank: hand.suit_codes) and counts them, and so do the
        # melds, rivers, taken tiles and the wall: four of every tile of the suits in play and nothing else is those
        # sums being the full set's codes with the full set's size (a code reached with other counts needs more tiles:
        # start._full_set). Only where they are not (or a wall is not known) are the tiles counted kind by kind, the
        # check that says what is wrong.
        stale = ""  # what the seats' kept codes and sizes got wrong
        m_all = p_all = s_all = tiles = 0
        negative = False  # a count below zero (the sums' argument holds for counts of zero and more)
        for s in range(self.n):
            counts = self.counts[s]
            size = m_code = p_code = s_code = 0
            for k in range(27):
                held = counts[k]
                if held:
                    if held < 0:
                        negative = True
                    size += held
                    if k < 9:
                        m_code += held * CODE_STEPS[k]
                    elif k < 18:
                        p_code += held * CODE_STEPS[k]
                    else:
                        s_code += held * CODE_STEPS[k]
            h = self._hands[s]
            if not stale and not (h.m == m_code and h.p == p_code and h.s == s_code):
                stale = f"seat {s}: codes"  # asserted below, after the tiles are counted (the first one found)
            if not stale and h.size != size + self.hidden[s]:
                stale = f"seat {s}: hand size"
            m_all, p_all, s_all, tiles = m_all + m_code, p_all + p_code, s_all + s_code, tiles + size
        known = self.wall is not None and not negative and not any(self.hidden)
        full_code = _full_code(self.rules.suits) if known else None
        if full_code is None or not self._whole_set(m_all, p_all, s_all, tiles, full_code):
            self._count_tiles()
        assert not stale, stale
        for seat, h in enumerate(self._hands):
            meld_suits = 0
            for m in self.melds[seat]:
                meld_suits |= 1 << (m.tile // 9)
            assert h.meld_suits == meld_suits, f"seat {seat}: the melds' suits"
            kept = h.mask
            if kept >= 0:
                h.mask = -1  # work it out afresh
                assert self.win_mask(seat) == kept, f"seat {seat}'s kept winning tiles are stale"
        assert self.ledger.in_hand == [not won for won in self.won], "the ledger and the state disagree on who is in"
        self.ledger.deltas()

    def _whole_set(self, m_all: int, p_all: int, s_all: int, tiles: int, full: tuple[int, int, int]) -> bool:
        """Do the tiles outside the hands (melds, rivers, taken, the added tile of a rob window, the wall still to
        draw), added to the hands' codes and count (``m_all``, ``p_all``, ``s_all``, ``tiles``), make the full set
        (``full``: its codes)? The sums are attributes of a compiled class (:class:`_Sums`), native ints: a code stored
        in a list is an object, allocated anew at every store above 256."""
        sums = _Sums(m_all, p_all, s_all)
        for s in range(self.n):
            for m in self.melds[s]:
                sums.add(m.tile, m.size)
                tiles += m.size
            for k in self.rivers[s]:
                sums.add(k, 1)
                tiles += 1
        for k in self.taken:
            sums.add(k, 1)
            tiles += 1
        if self.phase == "rob" and self.window is not None:
            sums.add(self.window.tile, 1)
            tiles += 1
        wall = self.wall
        assert wall is not None
        for i in range(self.drawn, len(wall)):
            sums.add(wall[i], 1)
            tiles += 1
        return tiles == self.tiles and sums.m == full[0] and sums.p == full[1] and sums.s == full[2]

    def _count_tiles(self) -> None:
        """Tile conservation kind by kind, asserting what is wrong (check_invariants' sums found something)."""
        total = [0] * 27
        for s in range(self.n):
            for k, held in enumerate(self.counts[s]):
                if held:  # most kinds are not held: no store
                    total[k] = total[k] + held
            for m in self.melds[s]:
                total[m.tile] = total[m.tile] + m.size
            for k in self.rivers[s]:
                total[k] = total[k] + 1
        for k in self.taken:
            total[k] = total[k] + 1
        if self.phase == "rob" and self.window is not None:
            added = self.window.tile  # the added tile, on its way to the meld or to a robber
            total[added] = total[added] + 1
        in_play = _total(total) + _total(self.hidden)
        assert in_play + self.left == self.tiles, f"tiles: {in_play} in play + {self.left} in the wall != {self.tiles}"
        full = full_counts(self.rules.suits)
        assert all(total[k] <= full[k] for k in range(27)), "a fifth copy, or a tile of a suit not in play"
        if self.wall is not None:
            rest = self.wall[self.drawn :]
            assert len(rest) == self.left
            for k in rest:
                total[k] = total[k] + 1
            assert total == full, "the tiles in play and in the wall are not the full set"


class _Sums:
    """Three suit codes (hand.suit_codes) being added up, in native ints (check_invariants' sums)."""

    def __init__(self, m: int, p: int, s: int) -> None:
        self.m = m
        self.p = p
        self.s = s

    def add(self, kind: int, n: int) -> None:
        """Add ``n`` tiles of ``kind``."""
        step = n * CODE_STEPS[kind]
        if kind < 9:
            self.m += step
        elif kind < 18:
            self.p += step
        else:
            self.s += step


_FULL_CODES: Final[dict[str, tuple[int, int, int]]] = {}


def _full_code(suits: str) -> tuple[int, int, int]:
    """The codes (hand.suit_codes) of the full set of ``suits``: four of each rank of a suit in play, 0 for the
    others."""
    codes = _FULL_CODES.get(suits)
    if codes is None:
        four = sum(COPIES << (3 * rank) for rank in range(9))
        codes = _FULL_CODES[suits] = (
            four if "m" in suits else 0,
            four if "p" in suits else 0,
            four if "s" in suits else 0,
        )
    return codes


def _total(counts: list[int]) -> int:
    """``sum(counts)``, walked natively (the builtin, called from compiled code, is a generic call that
    iterates boxed ints)."""
    n = 0
    for held in counts:
        n += held
    return n


def _can(verify: object, *args: object) -> bool:
    try:
        verify(*args)  # type: ignore[operator]
    except IllegalAction:
        return False
    return True


def next_dealer(rules: RuleSet, dealer: int, wins: Sequence[WinRecord], n: int) -> int:
    """The next hand's dealer (the ``dealer_next`` switch), from the hand's wins in order. ``first_winner``: the
    first winner; after 一炮多响 on the first win, the discarder ("本盘胡牌者为下一盘的庄家", "一炮点两家以上……点炮者为
    下一盘的庄家", seed 000). ``dealt_in``: the player who dealt in to the first win, a self-draw winner itself
    ("点炮者坐庄", seed 003). ``nearest_winner``: the first winner, after 一炮多响 the one nearest after the
    discarder. With no win the dealer stays ("流局则连庄"). A replayed hand and a settlement record's declared
    wins are judged by this one function."""
    first = [w for w in wins if w.order == 1]
    if not first:
        return dealer
    rule = rules.dealer_next
    if rule == "dealt_in":
        return first[0].source if first[0].source is not None else first[0].seat
    if len(first) > 1:
        source = first[0].source
        assert source is not None
        if rule == "nearest_winner":  # "每局第一位和牌的雀士" (Mahjong Soul): the winner nearest the discarder
            return min((w.seat for w in first), key=lambda s: (s - source) % n)
        return source
    return first[0].seat
