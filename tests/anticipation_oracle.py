"""Winning-tile anticipation as it was judged before ingest judged it (issue 23 item 3): the screen replayed every
hand of levels full and dealt from its source at report time, in pure Python. The tests hold the engine's
judging (pipeline/game/evidence.py ``judge_waits``, stored by ingest in ``wait_choices``) and the screen's
SQL tally (pipeline/audit/anticipation.py) to it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import duckdb

from pipeline.audit.anticipation import Decision, Option, _Tally
from pipeline.game.events import Discard
from pipeline.game.record import Record, RecordError, parse_record
from pipeline.game.start import exchange_offset, start_hand
from pipeline.game.state import HandState, IllegalAction
from pipeline.rules.hand import shanten_after_discards, suit_codes, win_mask_of_codes
from pipeline.rules.tiles import TILE_NAMES

EVIDENCE = 5


def oracle_decisions(record: Record, seat: int | None = None) -> list[Decision]:
    """The judged decisions of ``seat`` (every seat: ``None``) in ``record``, found by replaying it; none for a
    record of another level than full or dealt (a hidden hand hides the wall's contents). The replay stops at an
    illegal action."""
    if record.level not in ("full", "dealt"):
        return []
    exchange = None
    passed: dict[int, tuple[int, tuple[int, ...]]] = {}  # seat → (the seat it gave its three to, those tiles)
    if record.exchange_given is not None:
        exchange = (record.exchange_direction or "cw", record.exchange_given)
        n = len(record.players)
        try:
            offset = exchange_offset(exchange[0], n)
        except IllegalAction:
            return []
        passed = {s: ((s + offset) % n, given) for s, given in enumerate(record.exchange_given) if given is not None}
    try:
        state = start_hand(
            record.rules, dealer=record.dealer, wall=record.wall, deal=record.deal, exchange=exchange, que=record.que
        )
    except IllegalAction:
        return []
    found = []
    for index, event in enumerate(record.events):
        if isinstance(event, Discard) and (seat is None or event.seat == seat):
            decision = oracle_judge(state, index, event.seat, event.tile, passed=passed.get(event.seat))
            if decision is not None:
                found.append(decision)
        try:
            state.apply(event)
        except IllegalAction:
            break
    return found


def oracle_judge(
    state: HandState, index: int, seat: int, tile: int, *, passed: tuple[int, Sequence[int]] | None = None
) -> Decision | None:
    """``seat``'s discard of ``tile`` (kind) in ``state`` (before the discard) as a :class:`Decision`, or
    ``None`` when it is not judged: the discard does not leave the hand ready, or no other ready discard waits
    on other tiles with the same unseen count and a different count in the wall.

    What the player sees: its hand, every river and meld, and the three tiles it gave at the exchange (``passed``:
    the seat it gave them to, and the tiles), which it knows are in that seat's hand until that seat shows as many
    of the kind (a discard, a meld): an honest player who gave two 4p away knows the 4p wait is the thinner one."""
    counts, melds, void = list(state.counts[seat]), state.melds[seat], state.void[seat]
    counts[tile] -= 1  # most discards leave the hand not ready: one look-up of its winning tiles says so
    ready_after = win_mask_of_codes(suit_codes(counts), melds, void)
    counts[tile] += 1
    if not ready_after:
        return None
    after = shanten_after_discards(counts, len(melds), void)
    if after.get(tile) != 0:
        return None
    ready = [k for k, s in after.items() if s == 0 and (k == tile or state.can_discard(seat, k))]
    if len(ready) < 2:
        return None
    visible = list(counts)
    for s in range(state.n):
        for k in state.rivers[s]:
            visible[k] += 1
        for m in state.melds[s]:
            visible[m.tile] += m.size
    if passed is not None:
        receiver, given = passed
        shown = [0] * len(visible)  # copies the receiver has shown: its discards (claimed or not) and its melds
        for ev in state.events:
            if isinstance(ev, Discard) and ev.seat == receiver:
                shown[ev.tile] += 1
        for m in state.melds[receiver]:
            shown[m.tile] += m.size
        for k in set(given):
            visible[k] += max(0, given.count(k) - shown[k])
    full, seen = state.full, state.seen
    by_waits: dict[int, Option] = {}
    chosen_mask = 0
    for k in ready:
        counts[k] -= 1
        mask = win_mask_of_codes(suit_codes(counts), melds, void)
        counts[k] += 1
        if k == tile:
            chosen_mask = mask
        if mask in by_waits and k != tile:
            continue  # the same waits as an option already listed: one choice
        waits = [w for w in range(27) if (mask >> w) & 1]
        by_waits[mask] = Option(
            TILE_NAMES[k],
            tuple(TILE_NAMES[w] for w in waits),
            unseen=sum(max(0, full[w] - visible[w]) for w in waits),
            wall=sum(full[w] - seen[w] for w in waits),  # not dealt or drawn yet: still in the wall
        )
    chosen = by_waits[chosen_mask]
    options = tuple(o for o in by_waits.values() if o.unseen == chosen.unseen)
    if len(options) < 2 or len({o.wall for o in options}) < 2:
        return None
    return Decision(index, seat, chosen, options)


def oracle_tally(records: Iterable[Record], *, keep: int = EVIDENCE) -> dict[str, _Tally]:
    """Per player: hands of level full or dealt, judged decisions, hits, and the ``keep`` hits of widest margin."""
    out: dict[str, _Tally] = {}
    for record in records:
        if record.level not in ("full", "dealt"):
            continue
        for player in record.players:
            out.setdefault(player, _Tally()).hands += 1
        for d in oracle_decisions(record):
            t = out[record.players[d.seat]]
            t.decisions += 1
            if d.hit:
                t.hits += 1
                t.best.append((record.hand_id, d))
                if len(t.best) > 4 * keep:
                    t.best = _widest(t.best, keep)
    for t in out.values():
        t.best = _widest(t.best, keep)
    return out


def _widest(best: list[tuple[str, Decision]], keep: int) -> list[tuple[str, Decision]]:
    return sorted(best, key=lambda h: (-h[1].margin, h[0], h[1].event))[:keep]


def stored_records(con: duckdb.DuckDBPyConnection) -> Iterable[Record]:
    """The records of the warehouse's hands of levels full and dealt (in scope), read back from their sources;
    a hand that cannot be read back or parsed is skipped."""
    from pipeline.analytics.export import Found, read_back, selected  # reads sources: only when asked

    hands = [h for h in selected(con) if h.level in ("full", "dealt")]
    for got in read_back(hands):
        if isinstance(got, Found):
            try:
                yield parse_record(got.record)
            except RecordError:
                continue


def oracle_screen(con: duckdb.DuckDBPyConnection, **kwargs: object) -> list[object]:
    """The screen as it was: the warehouse's records replayed."""
    from pipeline.audit.anticipation import screen_tally

    return screen_tally(oracle_tally(stored_records(con)), **kwargs)  # type: ignore[arg-type]
