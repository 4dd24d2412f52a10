"""The turn metrics (schemas/METRICS.md#turns) worked out a second way, for the tests: a plain replay of a record's
JSON, with its own tile counting and its own winning-hand search, none of the engine's code. It trusts the record
(a test gives it valid records of levels full or dealt) and computes, per seat:

- its turns: the dealer starts at 1, every draw from the wall adds one unless it comes straight after the seat's own
  kong (a replacement draw), and so does every pong and direct kong;
- ``win_turn``: the turn of its first win; ``deal_in_turns``: the turns of the tiles it dealt in with (once each);
- ``ready_turn``: the turn in which its hand, at rest (a non-dealer at the start of play, any seat after each of its
  discards) first had a winning tile, or the turn of its first win if not seen ready before.

A winning hand: four sets (pongs or runs, melds included) and a pair, or seven pairs with no melds; at most two
suits counting the melds, none of them the declared void suit (缺一门)."""

from __future__ import annotations

from functools import cache
from typing import Any

SUIT_INDEX = {"m": 0, "p": 1, "s": 2}


def kind(name: str) -> int:
    return SUIT_INDEX[name[1]] * 9 + int(name[0]) - 1


@cache
def _sets(counts: tuple[int, ...], sets: int) -> bool:
    """Can ``counts`` (one suit, 9 kinds) be split into exactly ``sets`` sets (pongs or runs)?"""
    if sets == 0:
        return not any(counts)
    i = next((k for k, c in enumerate(counts) if c), None)
    if i is None:
        return False
    c = list(counts)
    if c[i] >= 3:
        c[i] -= 3
        if _sets(tuple(c), sets - 1):
            return True
        c[i] += 3
    if i <= 6 and c[i + 1] and c[i + 2]:
        c[i] -= 1
        c[i + 1] -= 1
        c[i + 2] -= 1
        if _sets(tuple(c), sets - 1):
            return True
    return False


def _standard(counts: list[int], sets: int) -> bool:
    """Four sets (``sets`` of them concealed) and a pair, brute force over the pair and the suits' shares."""
    for pair in range(27):
        if counts[pair] < 2:
            continue
        c = list(counts)
        c[pair] -= 2
        suits = [tuple(c[9 * s : 9 * s + 9]) for s in range(3)]
        sizes = [sum(x) for x in suits]
        if any(n % 3 for n in sizes) or sum(sizes) != 3 * sets:
            continue
        if all(_sets(suits[s], sizes[s] // 3) for s in range(3)):
            return True
    return False


def is_win(counts: list[int], melds: int, meld_suits: set[int], void: int | None) -> bool:
    held = {k // 9 for k in range(27) if counts[k]} | meld_suits
    if len(held) > 2 or (void is not None and void in held):
        return False
    if melds == 0 and sum(counts) == 14 and all(c in (0, 2, 4) for c in counts):
        return True
    return _standard(counts, 4 - melds)


def is_ready(counts: list[int], melds: int, meld_suits: set[int], void: int | None) -> bool:
    if sum(counts) != 13 - 3 * melds:
        return False
    for k in range(27):
        counts[k] += 1
        won = is_win(counts, melds, meld_suits, void)
        counts[k] -= 1
        if won:
            return True
    return False


def replay_turns(obj: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Per seat: ``{"win_turn", "deal_in_turns", "ready_turn"}`` of a record (a JSON object)."""
    n, dealer = len(obj["players"]), obj["dealer"]
    if obj.get("deal") is not None:
        hands = [[kind(t) for t in hand] for hand in obj["deal"]]
    else:
        wall = [kind(t) for t in obj["wall"]]
        hands = [[] for _ in range(n)]
        for k in range(n):
            hands[(dealer + k) % n] = wall[13 * k : 13 * k + 13]
        hands[dealer].append(wall[13 * n])
    exchange = obj.get("exchange")
    if exchange is not None:
        offset = {"cw": n - 1, "ccw": 1, "across": 2}[exchange["direction"]]
        given = [[kind(t) for t in g] for g in exchange["given"]]
        for seat in range(n):
            for t in given[seat]:
                hands[seat].remove(t)
        for seat in range(n):
            hands[(seat + offset) % n].extend(given[seat])
    que = obj.get("que") or [None] * n
    void = [SUIT_INDEX[q] if q is not None else None for q in que]
    counts = [[0] * 27 for _ in range(n)]
    for seat in range(n):
        for t in hands[seat]:
            counts[seat][t] += 1
    melds = [0] * n
    meld_suits: list[set[int]] = [set() for _ in range(n)]
    turns = [1 if seat == dealer else 0 for seat in range(n)]
    out: dict[int, dict[str, Any]] = {
        s: {"win_turn": None, "deal_in_turns": set(), "ready_turn": None} for s in range(n)
    }

    def rest(seat: int) -> None:
        if out[seat]["ready_turn"] is None and is_ready(counts[seat], melds[seat], meld_suits[seat], void[seat]):
            out[seat]["ready_turn"] = turns[seat]

    for seat in range(n):
        if seat != dealer:
            rest(seat)
    previous: dict[str, Any] | None = None
    for ev in obj["events"]:
        seat, t = ev["seat"], ev["t"]
        tile = kind(ev["tile"]) if ev.get("tile") else None
        if t == "draw":
            if not (previous is not None and previous["t"] == "kong" and previous["seat"] == seat):
                turns[seat] += 1
            counts[seat][tile] += 1
        elif t == "discard":
            counts[seat][tile] -= 1
            rest(seat)
        elif t == "pong":
            turns[seat] += 1
            counts[seat][tile] -= 2
            melds[seat] += 1
            meld_suits[seat].add(tile // 9)
        elif t == "kong":
            if ev["kind"] == "direct":
                turns[seat] += 1
                counts[seat][tile] -= 3
                melds[seat] += 1
            elif ev["kind"] == "concealed":
                counts[seat][tile] -= 4
                melds[seat] += 1
            else:  # added: the pong is already a meld
                counts[seat][tile] -= 1
            meld_suits[seat].add(tile // 9)
        elif t == "hu":
            mine = out[seat]
            if mine["win_turn"] is None:
                mine["win_turn"] = turns[seat]
            if mine["ready_turn"] is None:
                mine["ready_turn"] = turns[seat]
            source = ev.get("from")
            if source is None:
                counts[seat][tile] -= 1  # the self-drawn tile goes with the win
            else:
                out[source]["deal_in_turns"].add(turns[source])
        previous = ev
    return out
