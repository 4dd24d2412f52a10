"""The replay validator: give it a record and it proves or refutes it, event by event.

:func:`validate` never raises on bad data. It replays the record through the hand state machine
(:mod:`pipeline.game.state`), recomputes the whole settlement through the rules engine, compares it with
what the source system claimed, and returns a :class:`Validation`: the issues found (each with a stable
code from :mod:`pipeline.codes`), the computed ledger, every win's fan breakdown, and per-seat facts for
the analytics. An illegal action stops the replay of that hand (the issue names the event, the seat and a
state fingerprint); a wrong claimed fan, payment or delta is reported and the comparison goes on, so one
record yields every scoring difference it holds.

:func:`check_sessions` adds the checks that span hands: the dealer rule, gaps and repeats in ``hand_no``,
duplicate ``hand_id``.
"""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from pipeline.codes import CODES
from pipeline.game.record import (
    DIRECTIONS,
    Claimed,
    Record,
    RecordError,
    parse_json,
    parse_record,
    parse_result,
)
from pipeline.game.state import HandState, IllegalAction, WinRecord, deal_hands
from pipeline.rules.settle import Payment
from pipeline.rules.tiles import COPIES, NUM_KINDS, TILE_NAMES, counts_of, format_tiles
from pipeline.rules.values import Value


@dataclass(frozen=True, slots=True)
class Issue:
    """One finding: a stable ``code``, its severity, where (event index, seat) and what differed."""

    code: str
    message: str
    event: int | None = None
    seat: int | None = None
    expected: str | None = None
    actual: str | None = None
    money: int | None = None  # points the difference moves (scoring and settlement issues)

    @property
    def severity(self) -> str:
        return CODES[self.code].severity

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "event": self.event,
            "seat": self.seat,
            "expected": self.expected,
            "actual": self.actual,
            "money": self.money,
            "message": self.message,
        }


class SeatFacts(Value):
    """What one seat did in the hand, as the analytics need it (a :class:`~pipeline.rules.values.Value`:
    four are built per record)."""

    __slots__ = ()
    _fields = (
        "seat",
        "player",
        "dealer",
        "void",
        "won",
        "win_order",
        "how",
        "fan",
        "points",
        "deal_ins",
        "ready_at_end",
        "hua_zhu",
        "pongs",
        "kongs_direct",
        "kongs_added",
        "kongs_concealed",
        "passed_wins",
        "compulsory_passes",
        "delta",
        "claimed_delta",
    )

    def __init__(
        self,
        *,
        seat: int,
        player: str,
        dealer: bool,
        void: int | None,
        won: bool,
        win_order: int | None,
        how: str | None,
        fan: int | None,
        points: int | None,
        deal_ins: int,
        ready_at_end: bool | None,
        hua_zhu: bool,
        pongs: int,
        kongs_direct: int,
        kongs_added: int,
        kongs_concealed: int,
        passed_wins: int,
        compulsory_passes: int,
        delta: int,
        claimed_delta: int | None,
    ) -> None:
        self._v = (
            seat,
            player,
            dealer,
            void,
            won,
            win_order,
            how,
            fan,
            points,
            deal_ins,
            ready_at_end,
            hua_zhu,
            pongs,
            kongs_direct,
            kongs_added,
            kongs_concealed,
            passed_wins,
            compulsory_passes,
            delta,
            claimed_delta,
        )

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def player(self) -> str:
        return self._v[1]

    @property
    def dealer(self) -> bool:
        return self._v[2]

    @property
    def void(self) -> int | None:
        return self._v[3]

    @property
    def won(self) -> bool:
        return self._v[4]

    @property
    def win_order(self) -> int | None:
        return self._v[5]

    @property
    def how(self) -> str | None:  # discard, self_draw, rob_kong
        return self._v[6]

    @property
    def fan(self) -> int | None:
        return self._v[7]

    @property
    def points(self) -> int | None:
        return self._v[8]

    @property
    def deal_ins(self) -> int:  # wins paid by this seat as discarder (一炮多响 counts each winner)
        return self._v[9]

    @property
    def ready_at_end(self) -> bool | None:  # at an empty wall, still in: ready (下叫)? None when not applicable
        return self._v[10]

    @property
    def hua_zhu(self) -> bool:
        return self._v[11]

    @property
    def pongs(self) -> int:
        return self._v[12]

    @property
    def kongs_direct(self) -> int:
        return self._v[13]

    @property
    def kongs_added(self) -> int:
        return self._v[14]

    @property
    def kongs_concealed(self) -> int:
        return self._v[15]

    @property
    def passed_wins(self) -> int:
        return self._v[16]

    @property
    def compulsory_passes(self) -> int:
        return self._v[17]

    @property
    def delta(self) -> int:
        return self._v[18]

    @property
    def claimed_delta(self) -> int | None:
        return self._v[19]


class Validation(Value):
    """The outcome of validating one record (a :class:`Value`: built once per record, read-only)."""

    __slots__ = ()
    _fields = ("hand_id", "issues", "record", "replayed", "payments", "deltas", "wins", "seats", "claimed", "state")

    def __init__(
        self,
        hand_id: str | None,
        issues: tuple[Issue, ...],
        record: Record | None = None,
        replayed: bool = False,  # the replay reached the end of the hand
        payments: tuple[Payment, ...] = (),
        deltas: tuple[int, ...] | None = None,
        wins: tuple[WinRecord, ...] = (),
        seats: tuple[SeatFacts, ...] = (),
        claimed: Claimed | None = None,
        state: HandState | None = None,
    ) -> None:
        self._v = (hand_id, issues, record, replayed, payments, deltas, wins, seats, claimed, state)

    @property
    def hand_id(self) -> str | None:
        return self._v[0]

    @property
    def issues(self) -> tuple[Issue, ...]:
        return self._v[1]

    @property
    def record(self) -> Record | None:
        return self._v[2]

    @property
    def replayed(self) -> bool:
        return self._v[3]

    @property
    def payments(self) -> tuple[Payment, ...]:
        return self._v[4]

    @property
    def deltas(self) -> tuple[int, ...] | None:
        return self._v[5]

    @property
    def wins(self) -> tuple[WinRecord, ...]:
        return self._v[6]

    @property
    def seats(self) -> tuple[SeatFacts, ...]:
        return self._v[7]

    @property
    def claimed(self) -> Claimed | None:
        return self._v[8]

    @property
    def state(self) -> HandState | None:  # the replayed hand, for callers that look further
        return self._v[9]

    @property
    def ok(self) -> bool:
        return not any(i.severity == "error" for i in self.issues)

    def as_dict(self) -> dict[str, Any]:
        """The ``xuezhan validate --json`` object (computed deltas and payments)."""
        return {
            "hand_id": self.hand_id,
            "ok": self.ok,
            "issues": [i.as_dict() for i in self.issues],
            "deltas": list(self.deltas) if self.deltas is not None else None,
            "payments": [p.as_dict() for p in self.payments],
        }


def _hand_id_of(obj: Any) -> str | None:
    if isinstance(obj, dict):
        value = obj.get("hand_id")
        return value if isinstance(value, str) else None
    return None


def validate_line(line: str | bytes, *, line_no: int | None = None, **options: Any) -> Validation:
    """Validate one JSON line; a line that is not a JSON object is a ``SCHEMA_JSON`` issue."""
    obj, error = parse_json(line)
    if error is not None:
        where = f"line {line_no}: " if line_no is not None else ""
        return Validation(hand_id=None, issues=(Issue("SCHEMA_JSON", f"{where}{error}"),))
    if not isinstance(obj, dict):
        where = f"line {line_no}: " if line_no is not None else ""
        return Validation(hand_id=None, issues=(Issue("SCHEMA_JSON", f"{where}not a JSON object"),))
    return validate(obj, **options)


def validate(obj: Any, *, profile: Mapping[str, Any] | None = None, strict: bool = False) -> Validation:
    """Validate one record object. ``profile`` overrides switches of the record's ruleset (a
    ``{"profile": name}`` entry replaces the profile itself); ``strict`` stops at the first issue."""
    try:
        return _validate(obj, profile, strict)
    except Exception as exc:  # a bug of ours must not stop a batch: report it as data
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"engine failure {type(exc).__name__}: {exc} at {where.filename}:{where.lineno}"
        return Validation(hand_id=_hand_id_of(obj), issues=(Issue("INTERNAL", message),))


def _validate(obj: Any, override: Mapping[str, Any] | None, strict: bool) -> Validation:
    hand_id = _hand_id_of(obj)
    if override and "profile" in override and isinstance(obj, dict):
        obj = {**obj, "ruleset": {"profile": override["profile"]}}
        override = {k: v for k, v in override.items() if k != "profile"}
    try:
        record = parse_record(obj, profile_override=override)
    except RecordError as bad:
        return Validation(hand_id=hand_id, issues=(Issue(bad.code, str(bad), event=bad.event, seat=bad.seat),))
    issues: list[Issue] = []
    try:
        state = _initial_state(record)
    except IllegalAction as exc:
        issue = Issue(exc.code, str(exc), seat=exc.seat, expected=_s(exc.expected), actual=_s(exc.actual))
        return Validation(hand_id=hand_id, issues=(issue,), record=record)
    stopped = False
    for index, event in enumerate(record.events):
        try:
            state.apply(event)
        except IllegalAction as exc:
            message = f"event {index}: {exc} [{state.fingerprint()}]"
            issues.append(
                Issue(exc.code, message, event=index, seat=exc.seat, expected=_s(exc.expected), actual=_s(exc.actual))
            )
            _penalize(state, exc, index)
            stopped = True
            break
    if not stopped:
        state.close()
        if not state.over:
            issues.append(
                Issue(
                    "TURN_INCOMPLETE",
                    f"the record ends before the hand is over [{state.fingerprint()}]",
                    event=len(record.events),
                )
            )
            stopped = True
    for seat, at in state.compulsory_passes:
        issues.append(
            Issue(
                "CLAIM_COMPULSORY_PASS",
                f"最后四张能胡必须胡: seat {seat} could win on event {at} with the wall nearly empty, and passed",
                event=at,
                seat=seat,
            )
        )
    state.check_invariants()
    claimed = None
    if "result" in obj and not (strict and issues):
        try:
            claimed = parse_result(obj["result"])
        except RecordError as bad_result:
            issues.append(Issue(bad_result.code, str(bad_result)))
        if claimed is not None and not stopped:
            issues.extend(compare_claims(state, claimed))
    if strict and issues:
        issues = issues[:1]
    deltas = state.ledger.deltas()
    return Validation(
        hand_id=hand_id,
        issues=tuple(issues),
        record=record,
        replayed=not stopped,
        payments=tuple(state.ledger.payments),
        deltas=tuple(deltas),
        wins=tuple(state.wins),
        seats=tuple(_seat_facts(record, state, deltas, claimed)),
        claimed=claimed,
        state=state,
    )


def _s(value: object) -> str | None:
    return None if value is None else str(value)


def _penalize(state: HandState, exc: IllegalAction, index: int) -> None:
    """诈胡 and 相公 are mistakes with a price (RULES.md §6): put it in the computed ledger."""
    if exc.seat is None or state.won[exc.seat]:
        return
    if exc.code in ("WIN_FALSE", "WIN_VOID_SUIT"):
        state.ledger.penalty(exc.seat, index, everyone=False)
    elif exc.code in ("TILE_COUNT_SHORT", "TILE_COUNT_LONG"):
        state.ledger.penalty(exc.seat, index, everyone=True)


def _initial_state(record: Record) -> HandState:
    """Deal, check the deal against the wall, apply the exchange, check the void declarations."""
    rules = record.rules
    dealer = record.dealer
    if record.wall is not None:
        wall_counts = counts_of(record.wall)
        if any(n != COPIES for n in wall_counts):
            wrong = ", ".join(f"{TILE_NAMES[k]}×{n}" for k, n in enumerate(wall_counts) if n != COPIES)
            raise IllegalAction("TILE_WALL", f"the wall is not 108 tiles, four of each ({wrong})")
        hands = deal_hands(record.wall, dealer)
        if record.deal is not None:
            for seat in range(4):
                if sorted(record.deal[seat]) != sorted(hands[seat]):
                    raise IllegalAction(
                        "TILE_DEAL",
                        f"seat {seat}'s deal disagrees with the wall",
                        seat=seat,
                        expected=format_tiles(hands[seat]),
                        actual=format_tiles(record.deal[seat]),
                    )
        remaining: list[int] | None = list(record.wall[53:])
    else:
        assert record.deal is not None
        hands = [list(h) for h in record.deal]
        for seat in range(4):
            expected = 14 if seat == dealer else 13
            if len(hands[seat]) != expected:
                code = "TILE_COUNT_SHORT" if len(hands[seat]) < expected else "TILE_COUNT_LONG"
                raise IllegalAction(
                    code,
                    f"相公: seat {seat} is dealt {len(hands[seat])} tiles, not {expected}",
                    seat=seat,
                    expected=expected,
                    actual=len(hands[seat]),
                )
        total = counts_of(k for h in hands for k in h)
        for kind in range(NUM_KINDS):
            if total[kind] > COPIES:
                raise IllegalAction("TILE_FIFTH_COPY", f"the deal holds {total[kind]} copies of {TILE_NAMES[kind]}")
        remaining = None
    if record.exchange_given is not None:
        if not rules.exchange_three:
            raise IllegalAction("TILE_EXCHANGE", f"profile {rules.profile!r} plays no exchange of three (换三张)")
        offset = DIRECTIONS[record.exchange_direction or "cw"]
        for seat, given in enumerate(record.exchange_given):
            if len({k // 9 for k in given}) != 1:
                raise IllegalAction(
                    "TILE_EXCHANGE", f"seat {seat} gives {format_tiles(given)}: not three tiles of one suit", seat=seat
                )
            for kind, n in Counter(given).items():
                if hands[seat].count(kind) < n:
                    raise IllegalAction(
                        "TILE_NOT_HELD", f"seat {seat} gives {TILE_NAMES[kind]} it was not dealt", seat=seat
                    )
            for kind in given:
                hands[seat].remove(kind)
        for seat, given in enumerate(record.exchange_given):
            hands[(seat + offset) % 4].extend(given)
    void: Sequence[int | None] = (None, None, None, None)
    if record.que is not None:
        void = record.que
    if rules.que_declared and (record.que is None or any(q is None for q in record.que)):
        raise IllegalAction("TILE_VOID", f"profile {rules.profile!r} requires every seat to declare a void suit (定缺)")
    return HandState(rules, dealer=dealer, hands=hands, wall=remaining, void=void)


# ---------------------------------------------------------------------------------------------- claims
def compare_claims(state: HandState, claimed: Claimed) -> list[Issue]:
    """Every difference between the claimed settlement and the computed one."""
    issues: list[Issue] = []
    computed_wins = {w.event: w for w in state.wins}
    payers: dict[int | None, int] = {}  # win event → how many players paid it
    for p in state.ledger.payments:
        if p.reason == "hu":
            payers[p.event] = payers.get(p.event, 0) + 1
    if claimed.wins:
        seen = set()
        for cw in claimed.wins:
            win = computed_wins.get(cw.event)
            if win is None or win.seat != cw.seat:
                issues.append(
                    Issue(
                        "SCORE_WIN_MISSING",
                        f"claimed win of seat {cw.seat} at event {cw.event} is not a win in the events",
                        event=cw.event,
                        seat=cw.seat,
                    )
                )
                continue
            seen.add(cw.event)
            n_payers = payers.get(cw.event, 1)
            if cw.fan is not None and cw.fan != win.score.fan:
                claimed_points = state.rules.points(cw.fan) if cw.fan >= 1 else 0
                issues.append(
                    Issue(
                        "SCORE_FAN",
                        f"seat {cw.seat}'s win at event {cw.event}: claimed {cw.fan} fan, the rules "
                        f"give {win.score.fan} ({_breakdown(win)})",
                        event=cw.event,
                        seat=cw.seat,
                        expected=str(win.score.fan),
                        actual=str(cw.fan),
                        money=abs(claimed_points - win.score.points) * n_payers,
                    )
                )
            if cw.points is not None and cw.points != win.score.points:
                issues.append(
                    Issue(
                        "SCORE_POINTS",
                        f"seat {cw.seat}'s win at event {cw.event}: claimed {cw.points} points, "
                        f"the rules give {win.score.points}",
                        event=cw.event,
                        seat=cw.seat,
                        expected=str(win.score.points),
                        actual=str(cw.points),
                        money=abs(cw.points - win.score.points) * n_payers,
                    )
                )
        for event, win in computed_wins.items():
            if event not in seen:
                issues.append(
                    Issue(
                        "SCORE_WIN_MISSING",
                        f"seat {win.seat}'s win at event {event} is missing from the claimed wins",
                        event=event,
                        seat=win.seat,
                        money=win.score.per_payer * payers.get(event, 1),
                    )
                )
    unbalanced = False
    if sum(claimed.deltas) != 0:
        issues.append(
            Issue(
                "SETTLE_UNBALANCED",
                f"claimed deltas {list(claimed.deltas)} sum to {sum(claimed.deltas)}, not 0",
                actual=str(list(claimed.deltas)),
                money=abs(sum(claimed.deltas)),
            )
        )
        unbalanced = True
    elif claimed.payments:
        net = [0, 0, 0, 0]
        for p in claimed.payments:
            net[p.payer] = net[p.payer] - p.amount
            net[p.payee] = net[p.payee] + p.amount
        if net != list(claimed.deltas):
            issues.append(
                Issue(
                    "SETTLE_UNBALANCED",
                    f"claimed deltas {list(claimed.deltas)} are not the net of the claimed payments {net}",
                    expected=str(net),
                    actual=str(list(claimed.deltas)),
                    money=sum(abs(d - n) for d, n in zip(claimed.deltas, net, strict=True)) // 2,
                )
            )
            unbalanced = True
    payment_issues = compare_payments(state.ledger.payments, claimed.payments) if claimed.payments else []
    issues.extend(payment_issues)
    if not unbalanced and not payment_issues:
        computed = state.ledger.deltas()
        for seat in range(4):
            if claimed.deltas[seat] != computed[seat]:
                issues.append(
                    Issue(
                        "SETTLE_DELTA",
                        f"seat {seat}: claimed delta {claimed.deltas[seat]}, the rules give {computed[seat]}",
                        seat=seat,
                        expected=str(computed[seat]),
                        actual=str(claimed.deltas[seat]),
                        money=abs(claimed.deltas[seat] - computed[seat]),
                    )
                )
    return issues


def _breakdown(win: WinRecord) -> str:
    return " + ".join(f"{p.name_zh} {p.fan}" for p in win.score.patterns)


def _any_event(claimed: Payment) -> bool:
    return claimed.event is None


def _same_event(claimed: Payment, computed: Payment) -> bool:
    return claimed.event is None or claimed.event == computed.event


def compare_payments(computed: Sequence[Payment], claimed: Sequence[Payment]) -> list[Issue]:
    """Match claimed transfers to computed ones; every missing, extra or wrong transfer is its own issue.

    Passes, most specific first: exact; same parties, reason and event but another amount (SETTLE_AMOUNT);
    same payee, reason, event and amount but another payer (SETTLE_PAYER); what is left is missing or extra.
    A claimed payment without an event index matches a computed one at any event.
    """
    if len(computed) == len(claimed) and _tally(computed) == _tally(claimed):
        return []  # the common case: the very same transfers
    return _match_payments(computed, claimed)


def _tally(payments: Sequence[Payment]) -> dict[Payment, int]:
    counts: dict[Payment, int] = {}
    for p in payments:
        counts[p] = counts.get(p, 0) + 1
    return counts


def _match_payments(computed: Sequence[Payment], claimed: Sequence[Payment]) -> list[Issue]:
    todo = list(computed)
    rest = list(claimed)
    issues: list[Issue] = []

    def match(key_ok: Any, on_match: Any) -> None:
        nonlocal rest
        unmatched = []
        for c in sorted(rest, key=_any_event):  # those naming their event first: a wildcard must not take their match
            hit = next((i for i, p in enumerate(todo) if _same_event(c, p) and key_ok(c, p)), None)
            if hit is None:
                unmatched.append(c)
            else:
                on_match(c, todo.pop(hit))
        rest = unmatched

    match(
        lambda c, p: (c.payer, c.payee, c.reason, c.amount) == (p.payer, p.payee, p.reason, p.amount), lambda c, p: None
    )
    match(
        lambda c, p: (c.payer, c.payee, c.reason) == (p.payer, p.payee, p.reason),
        lambda c, p: issues.append(
            Issue(
                "SETTLE_AMOUNT",
                f"{_desc(p)}: claimed {c.amount}, the rules give {p.amount}",
                event=p.event,
                seat=p.payer,
                expected=str(p.amount),
                actual=str(c.amount),
                money=abs(c.amount - p.amount),
            )
        ),
    )
    match(
        lambda c, p: (c.payee, c.reason, c.amount) == (p.payee, p.reason, p.amount),
        lambda c, p: issues.append(
            Issue(
                "SETTLE_PAYER",
                f"{_desc(p)}: claimed paid by seat {c.payer}",
                event=p.event,
                seat=c.payer,
                expected=str(p.payer),
                actual=str(c.payer),
                money=p.amount,
            )
        ),
    )
    for p in todo:
        issues.append(
            Issue(
                "SETTLE_MISSING",
                f"{_desc(p)} is missing from the claimed payments",
                event=p.event,
                seat=p.payer,
                expected=str(p.amount),
                money=p.amount,
            )
        )
    for c in rest:
        issues.append(
            Issue(
                "SETTLE_EXTRA",
                f"claimed {_desc(c)} is not due under the rules",
                event=c.event,
                seat=c.payer,
                actual=str(c.amount),
                money=c.amount,
            )
        )
    return issues


def _desc(p: Payment) -> str:
    where = f" (event {p.event})" if p.event is not None else ""
    return f"{p.reason} {p.amount} from seat {p.payer} to seat {p.payee}{where}"


# ---------------------------------------------------------------------------------------------- facts
def _seat_facts(record: Record, state: HandState, deltas: list[int], claimed: Claimed | None) -> list[SeatFacts]:
    wins = {w.seat: w for w in state.wins}
    deal_ins, passes, compulsory = [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]
    for w in state.wins:
        if w.how in ("discard", "rob_kong") and w.source is not None:
            deal_ins[w.source] = deal_ins[w.source] + 1
    for seat, _ in state.passed_wins:
        passes[seat] = passes[seat] + 1
    for seat, _ in state.compulsory_passes:
        compulsory[seat] = compulsory[seat] + 1
    out = []
    for seat in range(4):
        melds = state.melds[seat]
        win = wins.get(seat)
        ready = pig = None
        end = state.ends.get(seat)
        if end is not None:
            ready, pig = end.ready is not None, end.pig
        out.append(
            SeatFacts(
                seat=seat,
                player=record.players[seat],
                dealer=seat == record.dealer,
                void=state.void[seat],
                won=win is not None,
                win_order=win.order if win else None,
                how=win.how if win else None,
                fan=win.score.fan if win else None,
                points=win.score.points if win else None,
                deal_ins=deal_ins[seat],
                ready_at_end=ready,
                hua_zhu=bool(pig),
                pongs=sum(1 for m in melds if m.kind == "pong"),
                kongs_direct=sum(1 for m in melds if m.kind == "direct"),
                kongs_added=sum(1 for m in melds if m.kind == "added"),
                kongs_concealed=sum(1 for m in melds if m.kind == "concealed"),
                passed_wins=passes[seat],
                compulsory_passes=compulsory[seat],
                delta=deltas[seat],
                claimed_delta=claimed.deltas[seat] if claimed is not None else None,
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- sessions
@dataclass(frozen=True, slots=True)
class SessionIssue:
    hand_id: str
    issue: Issue


@dataclass(frozen=True, slots=True)
class HandKey:
    """The little a session check needs of a hand, so that millions of hands fit in memory."""

    hand_id: str
    session_id: str | None
    hand_no: int | None
    players: tuple[str, ...]
    dealer: int
    next_dealer: int | None


def next_dealer(validation: Validation) -> int | None:
    """The next hand's dealer seat: the first winner; after 一炮多响 on the first win, the discarder;
    with no win, the same dealer. ``None`` when the replay did not finish."""
    if validation.record is None or not validation.replayed or validation.state is None:
        return None
    return validation.state.next_dealer()


def hand_key(validation: Validation) -> HandKey | None:
    r = validation.record
    if r is None:
        return None
    return HandKey(r.hand_id, r.session_id, r.hand_no, r.players, r.dealer, next_dealer(validation))


def check_sessions(hands: Iterable[HandKey | None]) -> list[SessionIssue]:
    """Checks across the hands of each ``session_id``, ordered by ``hand_no``, and duplicate ``hand_id``s."""
    out: list[SessionIssue] = []
    seen: Counter[str] = Counter()
    sessions: dict[str, list[HandKey]] = {}
    for h in hands:
        if h is None:
            continue
        seen[h.hand_id] += 1
        if seen[h.hand_id] == 2:
            out.append(
                SessionIssue(
                    h.hand_id, Issue("SESSION_DUPLICATE_HAND", f"hand_id {h.hand_id!r} appears more than once")
                )
            )
        if h.session_id is not None and h.hand_no is not None:
            sessions.setdefault(h.session_id, []).append(h)
    for session_id, keys in sessions.items():
        keys.sort(key=lambda h: h.hand_no or 0)
        for p, c in pairwise(keys):
            assert p.hand_no is not None and c.hand_no is not None
            if c.hand_no == p.hand_no:
                out.append(
                    SessionIssue(
                        c.hand_id,
                        Issue(
                            "SESSION_HAND_REPEAT",
                            f"session {session_id}: hand_no {c.hand_no} repeats ({p.hand_id}, {c.hand_id})",
                        ),
                    )
                )
                continue
            if c.hand_no != p.hand_no + 1:
                out.append(
                    SessionIssue(
                        c.hand_id,
                        Issue(
                            "SESSION_HAND_GAP", f"session {session_id}: hand_no jumps from {p.hand_no} to {c.hand_no}"
                        ),
                    )
                )
                continue
            if p.players != c.players:
                out.append(
                    SessionIssue(
                        c.hand_id,
                        Issue(
                            "SESSION_PLAYERS",
                            f"session {session_id}: players change from {list(p.players)} to {list(c.players)}",
                        ),
                    )
                )
            if p.next_dealer is None:
                continue
            expected_player = p.players[p.next_dealer]
            if c.players[c.dealer] != expected_player:
                out.append(
                    SessionIssue(
                        c.hand_id,
                        Issue(
                            "SESSION_DEALER",
                            f"session {session_id} hand {c.hand_no}: dealer is {c.players[c.dealer]}, the rules make "
                            f"{expected_player} dealer after hand {p.hand_no}",
                            seat=c.dealer,
                            expected=expected_player,
                            actual=c.players[c.dealer],
                        ),
                    )
                )
    return out


__all__ = [
    "HandKey",
    "Issue",
    "SeatFacts",
    "SessionIssue",
    "Validation",
    "check_sessions",
    "compare_claims",
    "compare_payments",
    "hand_key",
    "next_dealer",
    "validate",
    "validate_line",
]
