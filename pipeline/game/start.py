"""The start of a hand: the deal, 换三张 and 定缺, checked, and the :class:`HandState` play starts from.

:func:`start_hand` is the one way a hand begins, for the validator replaying a record, the simulator's
tables and the tests alike, at every table the rule profiles describe (``players`` seats, ``suits`` in
play). It raises :class:`~pipeline.game.state.IllegalAction` with the codes the validator reports
(``TILE_WALL``, ``TILE_DEAL``, ``TILE_COUNT_SHORT``/``LONG``, ``TILE_FIFTH_COPY``, ``TILE_SUIT``,
``TILE_EXCHANGE``, ``TILE_NOT_HELD``, ``TILE_VOID``).

How many tiles are dealt is said here once (:data:`DEAL_SIZE`, :func:`dealt`): "庄家十四张，先出牌，闲家每人十三张牌"
(seed 003) — thirteen each, the dealer one more; every later draw takes the next tile of the wall.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypeVar

from pipeline.game.state import HandState, IllegalAction, Observer
from pipeline.rules.fan import Score
from pipeline.rules.hand import CODE_STEPS
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.settle import SeatEnd
from pipeline.rules.tiles import COPIES, NUM_KINDS, SUITS, TILE_NAMES, counts_of, format_tiles, full_counts

DEAL_SIZE: Final = 13  # tiles each seat is dealt; the dealer takes one more
DIRECTIONS: Final = ("cw", "ccw", "across")  # 换三张 (schemas/XZLOG.md)

Exchange = tuple[str, Sequence[Sequence[int]]]  # (direction, the three tiles each seat gives)
SeenExchange = tuple[str, Sequence[Sequence[int] | None]]  # an observer's: None for three tiles it did not see


def dealt(players: int) -> int:
    """Tiles dealt before the first draw: the draw pile is ``wall[dealt(players):]``.

    >>> dealt(4), dealt(3)
    (53, 40)
    """
    return players * DEAL_SIZE + 1


def wall_after_deal(rules: RuleSet) -> int:
    """Tiles left to draw when play starts.

    >>> from pipeline.rules import load_ruleset
    >>> wall_after_deal(load_ruleset("chengdu")), wall_after_deal(load_ruleset("chengdu", players=3, suits="ps"))
    (55, 32)
    """
    return rules.tiles - dealt(rules.players)


def exchange_offset(direction: str, players: int) -> int:
    """换三张: seat ``i`` gives to seat ``(i + offset) % players``: clockwise is the previous seat in turn
    order, counter-clockwise the next, across the one opposite (four players only)."""
    if direction == "cw":
        return players - 1
    if direction == "ccw":
        return 1
    if direction == "across" and players == 4:
        return 2
    raise IllegalAction("TILE_EXCHANGE", f"no exchange {direction!r} at a table of {players}")


_T = TypeVar("_T")


def deal_hands(wall: Sequence[_T], dealer: int, players: int = 4) -> list[list[_T]]:
    """The starting hands dealt from a full ``wall``, by seat: seat ``(dealer + k) % players`` receives
    ``wall[13k : 13k + 13]`` and the dealer's fourteenth tile is ``wall[13 × players]``. The wall's items are
    dealt as they are: tile ids for the engine, a record's tile names for the replay's page.

    >>> from pipeline.rules.tiles import full_set
    >>> hands = deal_hands(full_set(), dealer=1)
    >>> [len(h) for h in hands]
    [13, 14, 13, 13]
    >>> [len(h) for h in deal_hands(full_set("ps"), dealer=2, players=3)]
    [13, 13, 14]
    """
    tiles: list[_T] = wall if isinstance(wall, list) else list(wall)  # a list is sliced natively, a Sequence not
    hands: list[list[_T]] = [[] for _ in range(players)]
    for k in range(players):
        hands[(dealer + k) % players] = tiles[DEAL_SIZE * k : DEAL_SIZE * k + DEAL_SIZE]
    hands[dealer].append(tiles[players * DEAL_SIZE])
    return hands


def check_wall(wall: Sequence[int], suits: str = SUITS) -> None:
    """A wall holds every tile of the suits in play exactly four times, and nothing else (``TILE_WALL``)."""
    if _full_set(wall, suits):
        return
    counts = counts_of(wall)  # not the full set (_full_set is exact): which kinds are off
    full = full_counts(suits)
    wrong = [f"{TILE_NAMES[k]}×{n}" for k, n in enumerate(counts) if n != full[k]]
    raise IllegalAction(
        "TILE_WALL", f"the wall is not {36 * len(suits)} tiles, four of each of {suits} ({', '.join(wrong)})"
    )


_FULL_CODE: Final = sum(COPIES << (3 * rank) for rank in range(9))  # hand.suit_codes of four of each rank


def _full_set(wall: Sequence[int], suits: str) -> bool:
    """Does ``wall`` hold four of each tile of ``suits`` and nothing else? Each suit's tiles are added up as its code
    (hand.suit_codes: a count per rank in base 8, three bits a rank), in a native int, not counted into a list of
    27 (an int stored in a list is an object: some 140 instructions a tile, 15,000 a wall). Exact: a suit's sum of
    ``count × 8^rank`` equals four of each rank's only with those counts or with more tiles (a count above 7 is the
    next rank's 1 written as 8, seven tiles more), so equal codes and ``36 × suits`` tiles leave four of each.

    >>> from pipeline.rules.tiles import full_set
    >>> wall = list(full_set())
    >>> _full_set(wall, "mps"), _full_set(wall[:-1] + [wall[0]], "mps"), _full_set(wall, "ps")
    (True, False, False)
    """
    tiles: tuple[int, ...] = wall if isinstance(wall, tuple) else tuple(wall)
    if len(tiles) != 36 * len(suits):
        return False
    m = p = s = 0
    for kind in tiles:
        if kind < 0 or kind >= NUM_KINDS:
            return False
        step = CODE_STEPS[kind]
        if kind < 9:
            m += step
        elif kind < 18:
            p += step
        else:
            s += step
    return (
        m == (_FULL_CODE if "m" in suits else 0)
        and p == (_FULL_CODE if "p" in suits else 0)
        and s == (_FULL_CODE if "s" in suits else 0)
    )


def check_deal(hands: Sequence[Sequence[int] | None], dealer: int, suits: str = SUITS) -> None:
    """A deal without its wall: 13 tiles a seat, 14 for the dealer (相公 otherwise), tiles of the suits in play
    only, no fifth copy. A hand ``None`` is one an observer's record did not see."""
    for seat, hand in enumerate(hands):
        if hand is None:
            continue
        expected = DEAL_SIZE + 1 if seat == dealer else DEAL_SIZE
        if len(hand) != expected:
            code = "TILE_COUNT_SHORT" if len(hand) < expected else "TILE_COUNT_LONG"
            raise IllegalAction(
                code,
                f"相公: seat {seat} is dealt {len(hand)} tiles, not {expected}",
                seat=seat,
                expected=expected,
                actual=len(hand),
            )
        stray = [k for k in hand if SUITS[k // 9] not in suits]
        if stray:
            raise IllegalAction(
                "TILE_SUIT", f"seat {seat} is dealt {format_tiles(stray)}: the table plays {suits} only", seat=seat
            )
    _check_copies([k for hand in hands if hand is not None for k in hand], "the deal")


def _check_copies(tiles: Sequence[int], where: str) -> None:
    total = counts_of(tiles)
    for kind in range(NUM_KINDS):
        if total[kind] > COPIES:
            raise IllegalAction("TILE_FIFTH_COPY", f"{where} holds {total[kind]} copies of {TILE_NAMES[kind]}")


def exchanged(
    hands: Sequence[Sequence[int]],
    direction: str,
    given: Sequence[Sequence[int] | None],
    hidden: list[int] | None = None,
) -> list[list[int]]:
    """The hands after 换三张: each seat gives three tiles of one suit it holds to the seat ``direction``
    names. ``TILE_EXCHANGE`` for tiles of two suits, ``TILE_NOT_HELD`` for a tile the seat was not dealt.

    >>> from pipeline.rules.tiles import parse_tiles
    >>> hands = [parse_tiles("123m"), parse_tiles("456m"), parse_tiles("789m"), parse_tiles("111p")]
    >>> [format_tiles(h) for h in exchanged(hands, "across", hands)]
    ['789m', '111p', '123m', '456m']

    An observer's record (``hidden``: each seat's unseen tiles, changed in place) may not have seen what a
    hidden hand gave (``None``: three unseen tiles pass), and a hidden hand gives what it could hold:

    >>> hidden = [0, 3, 3, 3]
    >>> [format_tiles(h) for h in exchanged([hands[0], [], [], []], "ccw", [hands[0], None, [9, 9, 10], None], hidden)]
    ['', '123m', '', '112p']
    >>> hidden
    [3, 0, 3, 0]
    """
    offset = exchange_offset(direction, len(hands))
    out = [list(hand) for hand in hands]
    passed = [0] * len(hands)
    for seat, tiles in enumerate(given):
        if tiles is None:
            assert hidden is not None, "unseen tiles pass only between hidden hands"
            hidden[seat] = hidden[seat] - 3
            passed[(seat + offset) % len(hands)] = 3
            continue
        if len(tiles) != 3 or len({k // 9 for k in tiles}) != 1:
            raise IllegalAction(
                "TILE_EXCHANGE", f"seat {seat} gives {format_tiles(tiles)}: not three tiles of one suit", seat=seat
            )
        for kind in tiles:
            if kind in out[seat]:
                out[seat].remove(kind)
            elif hidden is not None and hidden[seat]:
                hidden[seat] = hidden[seat] - 1  # a tile of the hidden hand, seen as it passes
            else:
                raise IllegalAction(
                    "TILE_NOT_HELD", f"seat {seat} gives {TILE_NAMES[kind]} it was not dealt", seat=seat
                )
    for seat, tiles in enumerate(given):
        if tiles is not None:
            out[(seat + offset) % len(hands)].extend(tiles)
    if hidden is not None:
        for seat, n in enumerate(passed):
            hidden[seat] = hidden[seat] + n
        _check_copies([k for hand in out for k in hand], "the hands after the exchange")
    return out


def start_hand(
    rules: RuleSet,
    *,
    dealer: int,
    wall: Sequence[int] | None = None,
    deal: Sequence[Sequence[int] | None] | None = None,
    exchange: Exchange | SeenExchange | None = None,
    que: Sequence[int | None] | None = None,
    observer: Observer | None = None,
    declared_wins: Mapping[int, Score] | None = None,
    declared_ends: Mapping[int, SeatEnd] | None = None,
    declared_kongs: frozenset[int] | None = None,
    shown: Mapping[int, Sequence[int]] | None = None,
    void_unknown: bool = False,
) -> HandState:
    """The state at the start of play. Give the full ``wall`` (the deal is then dealt from it, and a ``deal``
    given beside it must agree), or only the ``deal``; then the exchange of three, if any, and the void suits.
    ``observer``: an :class:`~pipeline.game.state.Observer` (the audits'
    :class:`~pipeline.game.evidence.Evidence`), told of the deal as dealt (before the
    exchange) and of every discard (see :class:`~pipeline.game.state.HandState`). An observer's ``deal`` holds
    ``None`` for each hand it did not see, whose tiles play starts with hidden (``declared_wins``, ``declared_ends``,
    ``declared_kongs``, ``shown``: see :class:`~pipeline.game.state.HandState`).

    >>> from pipeline.rules import load_ruleset
    >>> from pipeline.rules.tiles import full_set
    >>> state = start_hand(load_ruleset("chengdu"), dealer=0, wall=full_set(), que=(0, 1, 2, 0))
    >>> state.left, state.turn, state.phase
    (55, 0, 'discard')
    """
    n = rules.players
    hidden: list[int] | None = None
    if wall is not None:
        check_wall(wall, rules.suits)
        hands = deal_hands(wall, dealer, n)
        if deal is not None:
            for seat in range(n):
                seen = deal[seat]
                assert seen is not None, "a record with a wall sees every hand"  # the reader sees to it
                if sorted(seen) != sorted(hands[seat]):
                    raise IllegalAction(
                        "TILE_DEAL",
                        f"seat {seat}'s deal disagrees with the wall",
                        seat=seat,
                        expected=format_tiles(hands[seat]),
                        actual=format_tiles(seen),
                    )
        pile: list[int] | None = list(wall[dealt(n) :])
    elif deal is not None:
        check_deal(deal, dealer, rules.suits)
        hands = [list(hand) if hand is not None else [] for hand in deal]
        if any(hand is None for hand in deal):
            hidden = [0 if hand is not None else DEAL_SIZE + (seat == dealer) for seat, hand in enumerate(deal)]
        pile = None
    else:
        raise ValueError("a hand starts from a wall or a deal")
    if exchange is not None:
        if not rules.exchange_three:
            raise IllegalAction("TILE_EXCHANGE", f"profile {rules.profile!r} plays no exchange of three (换三张)")
        direction, given = exchange
        if observer is not None:
            observer.deal(hands, given, exchange_offset(direction, n))
        hands = exchanged(hands, direction, given, hidden)
    elif observer is not None:
        observer.deal(hands, None, 0)
    void: Sequence[int | None] = que if que is not None else (None,) * n
    if que is not None and len(rules.suits) < 3 and any(q is not None for q in que):
        # 定缺 picks one of three suits to shed; with two in play no hand can hold a third
        raise IllegalAction("TILE_VOID", f"no void suit at a table of two suits ({rules.suits}): 定缺 needs three")
    if rules.que_declared and not void_unknown and any(q is None for q in void):
        raise IllegalAction("TILE_VOID", f"profile {rules.profile!r} requires every seat to declare a void suit (定缺)")
    state = HandState(
        rules,
        dealer=dealer,
        hands=hands,
        wall=pile,
        void=void,
        observer=observer,
        hidden=hidden,
        declared_wins=declared_wins,
        declared_ends=declared_ends,
        declared_kongs=declared_kongs,
        shown=shown,
        void_unknown=void_unknown,
    )
    if observer is not None:
        observer.start(state)
    return state


__all__ = [
    "DEAL_SIZE",
    "DIRECTIONS",
    "Exchange",
    "check_deal",
    "check_wall",
    "deal_hands",
    "dealt",
    "exchange_offset",
    "exchanged",
    "start_hand",
    "wall_after_deal",
]
