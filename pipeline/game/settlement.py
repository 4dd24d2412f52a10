"""A hand as its settlement declares it (level ``settlement``: a score sheet's wins, kongs and end states, no
tiles): the money that follows from the claims, through the same ledger as a replayed hand.

A replay proves a hand from its tiles; a settlement record has none, so what can be checked is everything
that follows from what it declares (schemas/XZLOG.md, levels): each win's fan from its claimed patterns
(:func:`~pipeline.rules.fan.declared_score`), its points from the fan and the cap, each payment from the
points and the profile (who pays a self-drawn win, 点杠花, 杠上炮's kong money, 刮风下雨), 查花猪, 查大叫 and
退税 from the declared end states, the zero sum, and who deals next. The order of the items is the hand's:
a player who has won pays nothing for what follows ("已经胡牌的不算").

Where the record does not declare something a payment needs — a win with neither patterns nor fan nor
points, a ready player with no value — the claim cannot be checked; it is listed in ``unchecked`` and the
money follows the claimed payments for it, so the rest of the hand is still checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipeline.codes import Fault
from pipeline.game.events import Event, Hu, Kong
from pipeline.game.record import UNKNOWN_TILE, ClaimedWin, DeclaredEnd
from pipeline.game.state import HandFacts, WinRecord, next_dealer
from pipeline.rules.fan import ReadyValue, Score, declared_score
from pipeline.rules.hand import Meld
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.settle import Ledger, Payment, SeatEnd


class SettlementFault(Fault):
    """A declared item the hand cannot have (a winner who acts again, ends that are not the players left)."""


def settle_declared(
    rules: RuleSet,
    dealer: int,
    events: Sequence[Event],
    wins: Mapping[int, ClaimedWin],
    ends: Sequence[DeclaredEnd] | None,
    void: Sequence[int | None],
    claimed_payments: Sequence[Payment] | None = None,
) -> tuple[HandFacts, list[SettlementFault], list[str]]:
    """The hand's settlement from its declared ``events`` (kongs and wins, in order), each win's declared value
    (``wins`` by event index), and the end states. Returns the facts (wins, payments, deltas, next dealer), the
    faults found in the declarations themselves, and what could not be checked."""
    n = rules.players
    ledger = Ledger(rules)
    faults: list[SettlementFault] = []
    unchecked: list[str] = []
    records: list[WinRecord] = []
    stays = rules.mode == "blood_flow"
    order = 0
    melds: list[list[Meld]] = [[] for _ in range(n)]  # the kongs (a settlement record's only melds)
    last_kong: dict[int, tuple[int, Kong]] = {}  # seat → its latest kong (index, event)
    previous: Event | None = None
    group: list[int] = []  # winners on the current discard (一炮多响), for 杠上炮's kong money
    group_kong: tuple[int, int] | None = None
    over = False
    fresh_noted = False
    for index, event in enumerate(events):
        if over:
            faults.append(
                SettlementFault(
                    "TURN_AFTER_END",
                    f"event {index}: the hand was over (普通版: the first win ends it)",
                    seat=event.seat,
                    event=index,
                )
            )
            break
        if group and not (
            isinstance(event, Hu)
            and isinstance(previous, Hu)
            and event.source == previous.source
            and event.source is not None
        ):
            _close_group(ledger, group, group_kong, records)
            group, group_kong = [], None
        if not ledger.in_hand[event.seat]:
            faults.append(
                SettlementFault(
                    "TURN_WON",
                    f"event {index}: seat {event.seat} has already won and acts again",
                    seat=event.seat,
                    event=index,
                )
            )
            break
        if isinstance(event, Kong):
            if event.kind == "direct" and (event.source is None or not ledger.in_hand[event.source]):
                faults.append(
                    SettlementFault(
                        "TURN_WON",
                        f"event {index}: the kong's discarder {event.source} has already won",
                        seat=event.source,
                        event=index,
                    )
                )
                break
            robbed = (
                event.kind == "added"
                and index + 1 < len(events)
                and isinstance(events[index + 1], Hu)
                and events[index + 1].rob_kong  # type: ignore[union-attr]
            )
            if not robbed:  # a robbed kong does not stand: no money (抢杠胡 takes its tile)
                fresh = True
                if event.kind == "added" and rules.added_kong_paid == "fresh":
                    # the record shows no draws: whether the fourth tile was just drawn (SBR's Promoted Kong, paid)
                    # or held since (a Postponed Kong, paid nothing) is the claimed payments' to say
                    if claimed_payments is not None:
                        fresh = any(p.reason == "kong" and p.event == index for p in claimed_payments)
                    if not fresh_noted:
                        unchecked.append(
                            "whether an added kong's fourth tile was just drawn ("
                            + ("as the claimed kong payments say)" if claimed_payments is not None else "taken as so)")
                        )
                        fresh_noted = True
                ledger.kong(event.seat, event.kind, index, source=event.source, fresh=fresh)
            last_kong[event.seat] = (index, event)
            if event.tile >= 0:  # a kong whose tile the record names (the others are counted from the events)
                melds[event.seat].append(Meld(event.kind, event.tile, event.source))
        else:
            assert isinstance(event, Hu)  # a settlement record holds kongs and wins only (the reader sees to it)
            source = event.source
            if source is not None and (source == event.seat or not ledger.in_hand[source]):
                faults.append(
                    SettlementFault(
                        "TURN_WON",
                        f"event {index}: the win's discarder {source} cannot pay it",
                        seat=source,
                        event=index,
                    )
                )
                break
            declared = wins.get(index)
            score = declared_win(
                declared,
                rules,
                self_drawn=source is None,
                index=index,
                seat=event.seat,
                claimed=claimed_payments,
                unchecked=unchecked,
            )
            ids = {p.id for p in score.patterns}
            feeder = None
            if source is None and "gang_shang_hua" in ids and event.seat in last_kong:
                kong = last_kong[event.seat][1]
                feeder = kong.source if kong.kind == "direct" else None
            same_discard = isinstance(previous, Hu) and source is not None and previous.source == source
            if not same_discard:
                order += 1
            ledger.win(event.seat, score, index, discarder=source, kong_feeder=feeder, stays=stays)
            how = "self_draw" if source is None else "rob_kong" if event.rob_kong else "discard"
            records.append(WinRecord(event.seat, index, event.tile, how, source, score, order))  # type: ignore[arg-type]
            if source is not None:
                if not group and "gang_shang_pao" in ids and source in last_kong:
                    group_kong = (source, last_kong[source][0])
                group.append(event.seat)
            over = rules.mode == "ordinary"
        previous = event
    if group:
        _close_group(ledger, group, group_kong, records)
    still_in = [s for s in range(n) if ledger.in_hand[s]]
    ends_by_seat: dict[int, SeatEnd] = {}
    end_open = False
    if not faults:
        if ends is None:
            if len(still_in) >= 2 and not over:
                unchecked.append("the end of the wall (the record declares no end states)")
                end_open = True
        else:
            ends_by_seat = _end(ledger, rules, ends, still_in, records, faults, claimed_payments, unchecked)
    if not faults and claimed_payments is not None:
        stated = {e.seat: e.void for e in ends or ()}
        _unshown_penalties(ledger, rules, claimed_payments, unchecked, end_open=end_open, void_stated=stated)
    facts = HandFacts(
        rules=rules,
        dealer=dealer,
        events=tuple(events),
        over=not faults,
        left=-1,
        wins=tuple(records),
        payments=tuple(ledger.payments),
        deltas=tuple(ledger.deltas()),
        void=tuple(void),
        melds=tuple(tuple(m) for m in melds),
        ends=ends_by_seat,
        passed_wins=(),
        compulsory_passes=(),
        could_win_at={},
        next_dealer=next_dealer(rules, dealer, records, n),
        end_open=end_open,
    )
    return facts, faults, unchecked


def _unshown_penalties(
    ledger: Ledger,
    rules: RuleSet,
    claimed: Sequence[Payment],
    unchecked: list[str],
    *,
    end_open: bool,
    void_stated: Mapping[int, bool | None],
) -> None:
    """The claimed void-suit penalties a settlement record cannot show, taken as claimed: a pong in one's void
    suit (the record has no pongs), a kong in it where the record names no tile, void tiles held at the wall's end
    where the end state does not say (``void_stated``: each end state's ``void``; ``False`` says the player held
    none, and its wall-end penalty is judged), a Hu with a void tile. Each such claim is a penalty of one of the
    profile's void amounts, paid where ``penalty_to`` sends it, that the declared items do not already give; what
    is taken is listed as not checked, so a finding rests only on what the record shows. With the end unknown
    (``end_open``) a claimed wall-end penalty is not judged at all (:func:`pipeline.validate._judged_payments`)."""
    amounts = {rules.void_meld_penalty, rules.void_end_penalty, rules.void_win_penalty} - {0}
    if not amounts:
        return
    due: dict[tuple[int, int | None, int], int] = {}  # (payer, payee, amount) → how many the declared items give
    for p in ledger.payments:
        if p.reason == "penalty":
            due[(p.payer, p.payee, p.amount)] = due.get((p.payer, p.payee, p.amount), 0) + 1
    taken = 0
    for p in claimed:
        if p.reason != "penalty" or p.amount not in amounts or (p.payee is None) != (rules.penalty_to == "pot"):
            continue
        if p.payer == p.payee:
            continue  # a seat paying itself: no money moves, the claim's own fault
        if end_open and p.event is None and rules.void_end_penalty:
            continue  # an end-of-wall payment of an unknown end: left out of the comparison
        if void_stated.get(p.payer) is False and p.amount not in (rules.void_meld_penalty, rules.void_win_penalty):
            continue  # the record says the player held no void tile at the end: judged
        key = (p.payer, p.payee, p.amount)
        if due.get(key, 0):
            due[key] -= 1
            continue
        ledger.as_claimed(p)
        taken += 1
    if taken:
        unchecked.append(
            f"{taken} claimed void-suit {'penalty' if taken == 1 else 'penalties'} (a settlement record shows no "
            "pongs and no tiles: taken as claimed)"
        )


def _close_group(ledger: Ledger, group: list[int], kong: tuple[int, int] | None, records: list[WinRecord]) -> None:
    if kong is not None:
        ledger.gang_shang_pao(kong[0], kong[1], group, records[-1].event)


def declared_win(
    declared: ClaimedWin | None,
    rules: RuleSet,
    *,
    self_drawn: bool,
    index: int,
    seat: int,
    claimed: Sequence[Payment] | None,
    unchecked: list[str],
) -> Score:
    """The win's value from its declared patterns; without them from its claimed fan, then its claimed points,
    then (last) what the claimed payments say it was paid — each of those a claim taken, not checked."""
    if declared is not None and declared.patterns is not None:
        return declared_score(declared.patterns, rules, self_drawn=self_drawn)
    if declared is not None and declared.fan is not None:
        unchecked.append(f"the fan of seat {seat}'s win at event {index} (no patterns declared)")
        return declared_score((), rules, self_drawn=self_drawn, fan=declared.fan)
    paid = [p.amount for p in claimed or () if p.event == index and p.reason == "hu"]
    points = declared.points if declared is not None and declared.points is not None else None
    unchecked.append(f"the value of seat {seat}'s win at event {index} (no patterns and no fan declared)")
    if points is None and paid:
        points = max(paid) - (rules.base if self_drawn and rules.self_draw == "base" else 0)
    return declared_score((), rules, self_drawn=self_drawn, points=points or 0)


def _end(
    ledger: Ledger,
    rules: RuleSet,
    ends: Sequence[DeclaredEnd],
    still_in: list[int],
    records: list[WinRecord],
    faults: list[SettlementFault],
    claimed: Sequence[Payment] | None,
    unchecked: list[str],
) -> dict[int, SeatEnd]:
    """查花猪, 查大叫 and 退税 from the declared end states (the players still in, exactly)."""
    declared = {e.seat for e in ends}
    winners_staying = [w.seat for w in records if ledger.in_hand[w.seat]] if rules.mode == "blood_flow" else []
    expected = set(still_in) - set(winners_staying)
    three_hu = len(still_in) == 1
    if declared != expected or len(declared) != len(ends):
        faults.append(
            SettlementFault(
                "SETTLE_END",
                f"the end states name seats {sorted(declared)}, the players still in are {sorted(expected)}",
                expected=str(sorted(expected)),
                actual=str(sorted(declared)),
            )
        )
        return {}
    out = {e.seat: declared_end(rules, e, claimed, unchecked, wall_end=not three_hu) for e in ends}
    if three_hu and not rules.hua_zhu_at_three_hu:
        return out
    ledger.end_of_wall(list(out.values()), winners_staying, three_hu=three_hu)
    return out


def declared_end(
    rules: RuleSet,
    end: DeclaredEnd,
    claimed: Sequence[Payment] | None,
    unchecked: list[str],
    *,
    wall_end: bool = True,
) -> SeatEnd:
    """A declared end state as the ledger settles it: a ready player's value from its declared fan (without one,
    from what the claimed 查大叫 payments say it was paid: a claim taken, noted in ``unchecked``)."""
    ready = None
    if end.state == "ready":
        fan = end.fan
        if fan is None:
            paid = [p.amount for p in claimed or () if p.payee == end.seat and p.reason == "cha_jiao"]
            unchecked.append(f"the ready value of seat {end.seat} (no fan declared)")
            amount = max(paid) if paid else 0
            ready = ReadyValue(amount=amount, fan=-1, win_tile=UNKNOWN_TILE, waits=())
        else:
            ready = ReadyValue(amount=rules.points(fan), fan=fan, win_tile=UNKNOWN_TILE, waits=())
    return SeatEnd(seat=end.seat, pig=end.state == "pig", ready=ready, void_penalty=end.void is True, wall_end=wall_end)
