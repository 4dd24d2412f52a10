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

import re
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Final, Protocol

from pipeline.codes import CODES, NOT_CHECKED, VOID_UNRECORDED, Fault
from pipeline.game.commitment import check as check_commitment
from pipeline.game.commitment import commitments_line as commitments_line  # the validate command's summary line
from pipeline.game.commitment import status as commitment_status
from pipeline.game.events import Hu, Kong
from pipeline.game.evidence import Evidence
from pipeline.game.record import (
    Claimed,
    Record,
    RecordError,
    parse_json,
    parse_record,
    parse_result,
    played_at_valid,
)
from pipeline.game.settlement import declared_end, declared_win, settle_declared
from pipeline.game.start import start_hand
from pipeline.game.state import HandFacts, HandState, IllegalAction, WinRecord
from pipeline.rules.fan import Score
from pipeline.rules.hand import Meld
from pipeline.rules.ruleset import Override, RuleSet
from pipeline.rules.settle import Payment, SeatEnd
from pipeline.rules.values import Value


@dataclass(frozen=True, slots=True)
class Issue:
    """One finding: a stable ``code``, its severity, where (event index, seat, the state's ``position``
    where the replay stopped) and what differed."""

    code: str
    message: str
    event: int | None = None
    seat: int | None = None
    expected: str | None = None
    actual: str | None = None
    money: int | None = None  # points the difference moves (scoring and settlement issues)
    position: str | None = None  # the state's fingerprint (HandState.fingerprint) where an illegal action stopped it

    @classmethod
    def of(cls, fault: Fault, *, event: int | None = None, position: str | None = None) -> Issue:
        """The issue a :class:`~pipeline.codes.Fault` (a record error or an illegal action) reports."""
        return cls(
            fault.code,
            str(fault),
            event=fault.event if event is None else event,
            seat=fault.seat,
            expected=_s(fault.expected),
            actual=_s(fault.actual),
            position=position,
        )

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
            "position": self.position,
        }


def _s(value: object) -> str | None:
    return None if value is None else str(value)


class SeatFacts(Value):
    """What one seat did in the hand, as the analytics need it."""

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
    """The outcome of validating one record: its issues and, when the record could be read, what the
    replay established (``hand``: the frozen :class:`~pipeline.game.state.HandFacts`)."""

    __slots__ = ()
    _fields = ("hand_id", "issues", "record", "replayed", "seats", "claimed", "hand", "not_checked", "evidence")

    def __init__(
        self,
        hand_id: str | None,
        issues: tuple[Issue, ...],
        record: Record | None = None,
        replayed: bool = False,
        seats: tuple[SeatFacts, ...] = (),
        claimed: Claimed | None = None,
        hand: HandFacts | None = None,
        not_checked: tuple[str, ...] = (),
        evidence: Evidence | None = None,
    ) -> None:
        self._v = (hand_id, issues, record, replayed, seats, claimed, hand, not_checked, evidence)

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
    def replayed(self) -> bool:  # the replay reached the end of the hand
        return self._v[3]

    @property
    def seats(self) -> tuple[SeatFacts, ...]:
        return self._v[4]

    @property
    def claimed(self) -> Claimed | None:
        return self._v[5]

    @property
    def hand(self) -> HandFacts | None:
        return self._v[6]

    @property
    def level(self) -> str | None:
        """The record's level (full, dealt, settlement: schemas/XZLOG.md); ``None`` when it could not be read."""
        return self.record.level if self.record is not None else None

    @property
    def not_checked(self) -> tuple[str, ...]:
        """What this record's level, or what it left out, could not support (in words): never passed in silence."""
        return self._v[7]

    @property
    def evidence(self) -> Evidence | None:
        """The audits' evidence the replay worked out (:class:`~pipeline.game.evidence.Evidence`: the deal as
        dealt, who could kong each discard, the costs of discards, the judged waits), when asked for
        (``evidence=True``) and the record's start could be replayed; ``None`` otherwise."""
        return self._v[8]

    @property
    def wall_commitment(self) -> str | None:
        """What the record's wall commitment proved (:data:`pipeline.game.commitment.STATUSES`: verified,
        seed_only, unrevealed, seed_mismatch, wall_mismatch); ``None`` without one (or an unreadable record)."""
        record = self.record
        if record is None or record.commitment is None:
            return None
        return commitment_status(record.commitment, (i.code for i in self.issues), has_wall=record.wall is not None)

    @property
    def payments(self) -> tuple[Payment, ...]:
        """The computed transfers."""
        return self.hand.payments if self.hand is not None else ()

    @property
    def deltas(self) -> tuple[int, ...] | None:
        """The computed net result per seat."""
        return self.hand.deltas if self.hand is not None else None

    @property
    def wins(self) -> tuple[WinRecord, ...]:
        return self.hand.wins if self.hand is not None else ()

    @property
    def next_dealer(self) -> int | None:
        """The next hand's dealer seat (:meth:`~pipeline.game.state.HandState.next_dealer`); ``None`` when the
        replay did not finish."""
        return self.hand.next_dealer if self.hand is not None and self.replayed else None

    @property
    def ok(self) -> bool:
        return not any(i.severity == "error" for i in self.issues)

    def as_dict(self) -> dict[str, Any]:
        """The ``xuezhan validate --format json`` object (computed deltas and payments)."""
        return {
            "hand_id": self.hand_id,
            "ok": self.ok,
            "issues": [i.as_dict() for i in self.issues],
            "deltas": list(self.deltas) if self.deltas is not None else None,
            "payments": [p.as_dict() for p in self.payments],
            "level": self.level,
            "not_checked": list(self.not_checked),
        }


# ---------------------------------------------------------------------------------------------- lines
class Line(Protocol):
    """What :func:`validate_lines` reads of an input line (:class:`pipeline.ingest.read.RawLine` is one)."""

    @property
    def data(self) -> bytes: ...
    @property
    def size(self) -> int: ...
    @property
    def fault(self) -> str | None: ...
    @property
    def too_long(self) -> bool: ...
    @property
    def blank(self) -> bool: ...
    @property
    def source_line(self) -> int: ...


class Outcome(Value):
    """One input line's outcome: its ``position`` among the lines given, the line, the record object it
    holds (``None`` when it holds none) and the validation. A line that could not be read, was too long
    or held no JSON object has a validation without a record and one ``INGEST_*``/``SCHEMA_JSON`` issue."""

    __slots__ = ()
    _fields = ("position", "line", "obj", "validation")

    def __init__(self, position: int, line: Line, obj: dict[str, Any] | None, validation: Validation) -> None:
        self._v = (position, line, obj, validation)

    @property
    def position(self) -> int:
        return self._v[0]

    @property
    def line(self) -> Line:
        return self._v[1]

    @property
    def obj(self) -> dict[str, Any] | None:
        return self._v[2]

    @property
    def validation(self) -> Validation:
        return self._v[3]


PLAY_FAMILIES = ("TILE_", "TURN_", "CLAIM_", "WIN_")  # findings about the play itself, not the claimed money


def play_faults(v: Validation) -> tuple[str, ...]:
    """The codes of ``v``'s errors in the play itself (a tile that cannot exist, a turn out of order, an illegal
    call, a false win) and of any finding that stopped the replay: what makes a record unfit to learn play
    from (``export``), unlike a wrong claimed score, whose plays are still legal. Empty for a legal hand."""
    codes = [i.code for i in v.issues if CODES[i.code].severity == "error"]
    return tuple(dict.fromkeys(c for c in codes if CODES[c].stops_replay or c.startswith(PLAY_FAMILIES)))


def validate_lines(
    lines: Iterable[Line],
    *,
    profile: str | Mapping[str, Any] | Override | None = None,
    strict: bool = False,
    evidence: bool = False,
) -> Iterator[Outcome]:
    """Every non-blank line's :class:`Outcome`, in order: the one way from an input line to a verdict, used
    by ``xuezhan validate`` and by ingest. ``profile`` overrides every record's ruleset
    (:class:`~pipeline.rules.ruleset.Override`; a bad one raises
    :class:`~pipeline.rules.ruleset.RuleSetError` before any line is read); ``strict`` and ``evidence`` as in
    :func:`validate`."""
    override = Override.parse(profile)
    for position, line in enumerate(lines):
        if line.blank:
            continue
        if line.fault is not None:
            yield Outcome(position, line, None, _unread("INGEST_READ", line.fault))
            continue
        where = f"line {line.source_line}: "
        if line.too_long:
            why = f"{where}a line of {line.size} bytes cannot be a hand record"
            yield Outcome(position, line, None, _unread("INGEST_LINE_TOO_LONG", why))
        else:
            obj, v = _validate_data(line.data, override, strict, evidence, where=where)
            yield Outcome(position, line, obj, v)


def validate_line(line: str | bytes, *, line_no: int | None = None, **options: Any) -> Validation:
    """Validate one JSON line (see :func:`validate_lines`); a line that is not a JSON object is a
    ``SCHEMA_JSON`` issue.

    >>> validate_line('{"format": "xzlog/1",', line_no=7).issues[0].message[:25]
    'line 7: not JSON: unexpec'
    """
    override = Override.parse(options.pop("profile", None))
    where = f"line {line_no}: " if line_no is not None else ""
    return _validate_data(line, override, **options, where=where)[1]


def _unread(code: str, message: str) -> Validation:
    return Validation(hand_id=None, issues=(Issue(code, message),))


def _validate_data(
    data: str | bytes, override: Override | None, strict: bool = False, evidence: bool = False, *, where: str = ""
) -> tuple[dict[str, Any] | None, Validation]:
    obj, error = parse_json(data)
    if error is not None:
        return None, _unread("SCHEMA_JSON", f"{where}{error}")
    if not isinstance(obj, dict):
        return None, _unread("SCHEMA_JSON", f"{where}not a JSON object but {type(obj).__name__}")
    return obj, validate(obj, profile=override, strict=strict, evidence=evidence)


# ---------------------------------------------------------------------------------------------- one record
def validate(
    obj: Any,
    *,
    profile: str | Mapping[str, Any] | Override | None = None,
    strict: bool = False,
    evidence: bool = False,
) -> Validation:
    """Validate one record object. ``profile`` overrides switches of the record's ruleset, or with a
    ``profile`` entry the profile itself (:class:`~pipeline.rules.ruleset.Override`); ``strict`` stops at the
    first issue; ``evidence`` works out the audits' evidence as the hand is replayed
    (:attr:`Validation.evidence`). A bad ``profile`` raises
    :class:`~pipeline.rules.ruleset.RuleSetError` (no fault of the record's)."""
    override = Override.parse(profile)  # the caller's mistake, not the record's: raises RuleSetError
    try:
        return _validate(obj, override, strict, evidence)
    except Exception as exc:  # a bug of ours must not stop a batch: report it as data
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"engine failure {type(exc).__name__}: {exc} at {where.filename}:{where.lineno}"
        return Validation(hand_id=_hand_id_of(obj), issues=(Issue("INTERNAL", message),))


def _hand_id_of(obj: Any) -> str | None:
    if isinstance(obj, dict):
        value = obj.get("hand_id")
        return value if isinstance(value, str) else None
    return None


def _validate(obj: Any, override: Override | None, strict: bool, evidence: bool) -> Validation:
    hand_id = _hand_id_of(obj)
    try:
        record = parse_record(obj, profile_override=override)
    except RecordError as bad:
        return Validation(hand_id=hand_id, issues=(Issue.of(bad),))
    issues: list[Issue] = []
    if record.played_at is not None and not played_at_valid(record.played_at):
        issues.append(
            Issue("SCHEMA_TIME", f"played_at {record.played_at!r} is not an RFC 3339 date-time: stored as unknown")
        )
    if record.commitment is not None:
        for code, message in check_commitment(record.commitment, record.wall, dealer=record.dealer):
            issues.append(Issue(code, message))
    if record.level == "settlement":
        return _validate_settlement(obj, record, issues, strict)
    unseen = _Unseen(obj, record) if record.level == "observer" else None
    observer = Evidence() if evidence and unseen is None else None
    try:
        state = initial_state(record, observer, unseen)
    except IllegalAction as exc:
        return Validation(
            hand_id=hand_id, issues=(Issue.of(exc),), record=record, not_checked=NOT_CHECKED[record.level]
        )
    stopped = False
    for index, event in enumerate(record.events):
        try:
            state.apply(event)
        except IllegalAction as exc:
            issues.append(Issue.of(exc, event=index, position=state.fingerprint()))
            _penalize(state, exc, index)
            stopped = True
            break
    if not stopped:
        state.close()
        if not state.over:
            issues.append(
                Issue(
                    "TURN_INCOMPLETE",
                    "the record ends before the hand is over",
                    event=len(record.events),
                    position=state.fingerprint(),
                )
            )
            stopped = True
    state.check_invariants()
    hand = state.facts()
    not_checked = NOT_CHECKED[record.level]
    if record.void_unknown:
        not_checked += VOID_UNRECORDED + tuple(state.unchecked if unseen is None else ())
    if unseen is not None:
        not_checked += unseen.notes(state)
        if state.end_fault is not None:
            issues.append(Issue("SETTLE_END", state.end_fault))
    for seat, at in hand.compulsory_passes:
        issues.append(
            Issue(
                "CLAIM_COMPULSORY_PASS",
                f"最后四张能胡必须胡: seat {seat} could win on event {at} with the wall nearly empty, and passed",
                event=at,
                seat=seat,
            )
        )
    claimed = None
    if not (strict and issues):
        if unseen is not None:
            claimed = unseen.claimed  # read before the replay: a hidden hand's win is valued by its claim
            issues.extend(unseen.issues)
        else:
            claimed = _claimed(obj, record, issues)
        if claimed is not None and not stopped:
            issues.extend(compare_claims(hand, claimed))
    if strict and issues:
        issues = issues[:1]
    return Validation(
        hand_id=hand_id,
        issues=named(issues, record.players),
        record=record,
        replayed=not stopped,
        seats=tuple(_seat_facts(record, hand, claimed)),
        claimed=claimed,
        hand=hand,
        not_checked=not_checked + end_notes(hand, claimed),
        evidence=observer,
    )


_SEAT = re.compile(r"\bseat ([0-3])\b")


def named(issues: Sequence[Issue], players: Sequence[str]) -> tuple[Issue, ...]:
    """``issues`` with each ``seat N`` of their messages followed by the player's name, ``seat 0 (张三)``: the
    engine speaks in seats, a reader in players (issue 40). The seat stays, to be found in the record.

    >>> named([Issue("SETTLE_AMOUNT", "hu 3 from seat 0 to seat 2")], ["张三", "李四", "王五", "赵六"])[0].message
    'hu 3 from seat 0 (张三) to seat 2 (王五)'
    """

    def name(match: re.Match[str]) -> str:
        seat = int(match.group(1))
        return f"{match.group(0)} ({players[seat]})" if seat < len(players) else match.group(0)

    return tuple(replace(i, message=_SEAT.sub(name, i.message)) if "seat " in i.message else i for i in issues)


class _Unseen:
    """What an observer record declares of the hands it did not see (schemas/XZLOG.md, levels): each win's
    value from its claim, the end states, and what taking them leaves unchecked."""

    def __init__(self, obj: dict[str, Any], record: Record) -> None:
        self.issues: list[Issue] = []
        self.claimed = _claimed(obj, record, self.issues)
        rules = record.rules
        claims = {w.event: w for w in self.claimed.wins} if self.claimed is not None else {}
        paid = self.claimed.payments if self.claimed is not None else None
        self.wins: dict[int, Score] = {}
        self.win_notes: dict[int, list[str]] = {}
        for index, event in enumerate(record.events):
            if isinstance(event, Hu):  # the observer's too: what it received in an exchange may be unseen
                notes = [f"the fan of seat {event.seat}'s win at event {index} from its tiles (its hand is hidden)"]
                self.wins[index] = declared_win(
                    claims.get(index),
                    rules,
                    self_drawn=event.source is None,
                    index=index,
                    seat=event.seat,
                    claimed=paid,
                    unchecked=notes,
                )
                self.win_notes[index] = notes
        self.kongs = (
            None if paid is None else frozenset(p.event for p in paid if p.reason == "kong" and p.event is not None)
        )
        self.end_notes: list[str] = []
        self.ends: dict[int, SeatEnd] | None = None
        if record.ends is not None:
            self.ends = {e.seat: declared_end(rules, e, paid, self.end_notes) for e in record.ends}

    def notes(self, state: HandState) -> tuple[str, ...]:
        """What was not checked: the wins and end states valued by the record's declarations."""
        out: list[str] = []
        for w in state.wins:
            out.extend(self.win_notes.get(w.event, ()) if w.score is self.wins.get(w.event) else ())
        if state.ends and self.ends:
            out.extend(self.end_notes)
        return (*out, *state.unchecked)


def _validate_settlement(obj: dict[str, Any], record: Record, issues: list[Issue], strict: bool) -> Validation:
    """A settlement record: no replay (it has no tiles), the money that follows from what it declares
    (:func:`~pipeline.game.settlement.settle_declared`), compared with what it claims."""
    claimed = _claimed(obj, record, issues)
    wins = {w.event: w for w in claimed.wins} if claimed is not None else {}
    void = record.que if record.que is not None else (None,) * record.rules.players
    hand, faults, unchecked = settle_declared(
        record.rules,
        record.dealer,
        record.events,
        wins,
        record.ends,
        void,
        claimed.payments if claimed is not None else None,
    )
    issues.extend(Issue.of(f, event=f.event) for f in faults)
    if claimed is not None and not faults:
        issues.extend(compare_claims(hand, claimed))
    if strict and issues:
        issues = issues[:1]
    return Validation(
        hand_id=record.hand_id,
        issues=named(issues, record.players),
        record=record,
        replayed=not faults,
        seats=tuple(_seat_facts(record, hand, claimed)),
        claimed=claimed,
        hand=hand,
        not_checked=NOT_CHECKED["settlement"] + tuple(unchecked) + end_notes(hand, claimed),
    )


def _claimed(obj: dict[str, Any], record: Record, issues: list[Issue]) -> Claimed | None:
    """The record's claimed ``result``, read apart from the record (a malformed claim is an issue, not a stop);
    ``None`` when it has none or it does not parse."""
    if "result" not in obj:
        return None
    try:
        return parse_result(obj["result"], record.rules.players)
    except RecordError as bad_result:
        issues.append(Issue.of(bad_result))
        return None


def _penalize(state: HandState, exc: IllegalAction, index: int) -> None:
    """诈胡 and 相公 are mistakes with a price (docs/RULES.md §6): put it in the computed ledger."""
    if exc.seat is None or state.won[exc.seat]:
        return
    if exc.code in ("WIN_FALSE", "WIN_VOID_SUIT"):
        state.ledger.penalty(exc.seat, index, everyone=False)
        if exc.code == "WIN_VOID_SUIT" and state.rules.void_win_penalty:
            # SBR p. 31: a Hu with a void-suit tile costs 48 on top of the false-Hu penalty
            state.ledger.void_penalty(exc.seat, state.rules.void_win_penalty, index)
    elif exc.code in ("TILE_COUNT_SHORT", "TILE_COUNT_LONG"):
        state.ledger.penalty(exc.seat, index, everyone=True)


def initial_state(record: Record, observer: Evidence | None = None, unseen: _Unseen | None = None) -> HandState:
    """The record's deal, exchange and void suits, checked (:func:`~pipeline.game.start.start_hand`): the one place
    a record's start is built. ``observer``: the audits' evidence, worked out as the hand is replayed (not for an
    observer record: it needs every hand); ``unseen``: an observer record's declarations of the hands it did not
    see."""
    exchange = None
    if record.exchange_given is not None:
        exchange = (record.exchange_direction or "cw", record.exchange_given)
    return start_hand(
        record.rules,
        dealer=record.dealer,
        wall=record.wall,
        deal=record.deal,
        exchange=exchange,
        que=record.que,
        observer=observer if unseen is None else None,
        declared_wins=unseen.wins if unseen is not None else None,
        declared_ends=unseen.ends if unseen is not None else None,
        declared_kongs=unseen.kongs if unseen is not None else None,
        shown=record.shown,
        void_unknown=record.void_unknown,
    )


def play_state(record: Record, obj: dict[str, Any] | None = None) -> HandState:
    """The record's start, to replay its play outside validation (the review of decisions, their difficulty): as
    :func:`initial_state`, an observer record's hidden wins and ends declared from its claimed ``result`` (``obj``,
    the record's JSON; without it, or without a result, they are taken as not known and play goes on)."""
    unseen = _Unseen(obj if obj is not None else {}, record) if record.level == "observer" else None
    return initial_state(record, None, unseen)


# ---------------------------------------------------------------------------------------------- claims
def compare_claims(hand: HandFacts, claimed: Claimed) -> list[Issue]:
    """Every difference between the claimed settlement and the computed one."""
    issues: list[Issue] = []
    computed_wins = {w.event: w for w in hand.wins}
    payers: dict[int | None, int] = {}  # win event → how many players paid it
    for p in hand.payments:
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
                claimed_points = hand.rules.points(cw.fan) if cw.fan >= hand.rules.fan_base else 0
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
    # the deltas sum to −pot: the claimed payments to nobody, or (deltas alone) the computed pot
    if claimed.payments is not None:  # itemised (an empty list too: a claim that nothing was paid)
        pot = sum(p.amount for p in claimed.payments if p.payee is None)
    else:
        pot = sum(p.amount for p in hand.payments if p.payee is None)
    # an unknown end may owe void penalties to the pot that only itemised payments show
    pot_known = claimed.payments is not None or not (
        hand.end_open and hand.rules.void_end_penalty and hand.rules.penalty_to == "pot"
    )
    if pot_known and sum(claimed.deltas) != -pot:
        issues.append(
            Issue(
                "SETTLE_UNBALANCED",
                f"claimed deltas {list(claimed.deltas)} sum to {sum(claimed.deltas)}, not {-pot}"
                + (f" (−{pot} paid to the pot)" if pot else ""),
                actual=str(list(claimed.deltas)),
                money=abs(sum(claimed.deltas) + pot),
            )
        )
        unbalanced = True
    elif claimed.payments is not None:
        net = [0] * len(claimed.deltas)
        for p in claimed.payments:
            net[p.payer] = net[p.payer] - p.amount
            if p.payee is not None:
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
    judged, end_net = _judged_payments(hand, claimed)
    payment_issues = compare_payments(hand.payments, judged) if judged is not None else []
    issues.extend(payment_issues)
    if not unbalanced and not payment_issues and not (hand.end_open and judged is None):
        computed = hand.deltas
        for seat in range(len(computed)):
            if claimed.deltas[seat] - end_net[seat] != computed[seat]:
                issues.append(
                    Issue(
                        "SETTLE_DELTA",
                        f"seat {seat}: claimed delta {claimed.deltas[seat]}, the rules give "
                        f"{computed[seat] + end_net[seat]}"
                        + (f" (with the claimed end of the hand's {end_net[seat]:+d})" if end_net[seat] else ""),
                        seat=seat,
                        expected=str(computed[seat] + end_net[seat]),
                        actual=str(claimed.deltas[seat]),
                        money=abs(claimed.deltas[seat] - end_net[seat] - computed[seat]),
                    )
                )
    return issues


END_REASONS: Final[frozenset[str]] = frozenset({"hua_zhu", "cha_jiao"})


def _is_end_payment(payment: Payment, rules: RuleSet) -> bool:
    """Paid at the end of the hand: 查花猪, 查大叫, 退税 at the wall's end and a void penalty there (no event). A
    退税 with an event is kong money returned during play (杠上炮, a false win) and is judged with the play."""
    return payment.reason in END_REASONS or (
        payment.event is None
        and (payment.reason == "tui_shui" or (payment.reason == "penalty" and bool(rules.void_end_penalty)))
    )


def _judged_payments(hand: HandFacts, claimed: Claimed) -> tuple[tuple[Payment, ...] | None, list[int]]:
    """The claimed payments the replay can judge, and each seat's net of those it cannot.

    When the hand's end is owed but unknown (:attr:`HandFacts.end_open`: hidden hands or a settlement record
    without end states), the claimed end-of-hand payments are neither compared nor counted against the deltas:
    a finding must not rest on what the record could not show. They are listed as not checked instead."""
    net = [0] * len(claimed.deltas)
    if claimed.payments is None or not hand.end_open:
        return claimed.payments, net
    judged = []
    for p in claimed.payments:
        if _is_end_payment(p, hand.rules):
            net[p.payer] -= p.amount
            if p.payee is not None:
                net[p.payee] += p.amount
        else:
            judged.append(p)
    return tuple(judged), net


def end_notes(hand: HandFacts, claimed: Claimed | None) -> tuple[str, ...]:
    """What an unknown end of the hand leaves unjudged in the claim (:func:`_judged_payments`)."""
    if not hand.end_open or claimed is None:
        return ()
    if claimed.payments is None:
        return ("the claimed deltas (the end of the hand is not known and the payments are not itemised)",)
    if any(_is_end_payment(p, hand.rules) for p in claimed.payments):
        return ("the claimed end-of-hand payments (查花猪/查大叫/退税: the end states are not known)",)
    return ()


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
    # the common case: the very same transfers, most often in the very same order (an equality test per pair,
    # cheaper than hashing every payment into two tallies)
    if tuple(computed) == tuple(claimed) or (len(computed) == len(claimed) and _tally(computed) == _tally(claimed)):
        return []
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
            # the same event first (a claim without one prefers a computed end-of-hand payment), then any it allows
            hit = next((i for i, p in enumerate(todo) if c.event == p.event and key_ok(c, p)), None)
            if hit is None:
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
    to = "the pot" if p.payee is None else f"seat {p.payee}"
    return f"{p.reason} {p.amount} from seat {p.payer} to {to}{where}"


# ---------------------------------------------------------------------------------------------- facts
def _seat_facts(record: Record, hand: HandFacts, claimed: Claimed | None) -> list[SeatFacts]:
    wins: dict[int, WinRecord] = {}
    for w in hand.wins:
        wins.setdefault(w.seat, w)  # a seat's first win (in 血流成河 it may win again: the wins table has each)
    n = len(record.players)
    deal_ins, passes, compulsory = [0] * n, [0] * n, [0] * n
    for w in hand.wins:
        if w.how in ("discard", "rob_kong") and w.source is not None:
            deal_ins[w.source] = deal_ins[w.source] + 1
    for seat, _ in hand.passed_wins:
        passes[seat] = passes[seat] + 1
    for seat, _ in hand.compulsory_passes:
        compulsory[seat] = compulsory[seat] + 1
    out = []
    declared = record.level == "settlement"  # its kongs may name no tile: counted from its events
    for seat in range(n):
        melds: Sequence[Meld | Kong] = (
            [e for e in record.events if isinstance(e, Kong) and e.seat == seat] if declared else hand.melds[seat]
        )
        win = wins.get(seat)
        pongs, direct, added, concealed = _meld_counts(melds)
        ready = pig = None
        end = hand.ends.get(seat)
        if end is not None:
            ready, pig = (end.ready is not None if end.wall_end else None), end.pig
        out.append(
            SeatFacts(
                seat=seat,
                player=record.players[seat],
                dealer=seat == record.dealer,
                void=hand.void[seat],
                won=win is not None,
                win_order=win.order if win else None,
                how=win.how if win else None,
                fan=win.score.fan if win and win.score.fan >= 0 else None,  # -1: a declared win of unknown fan
                points=win.score.points if win else None,
                deal_ins=deal_ins[seat],
                ready_at_end=ready,
                hua_zhu=bool(pig),
                pongs=pongs,
                kongs_direct=direct,
                kongs_added=added,
                kongs_concealed=concealed,
                passed_wins=passes[seat],
                compulsory_passes=compulsory[seat],
                delta=hand.deltas[seat],
                claimed_delta=claimed.deltas[seat] if claimed is not None else None,
            )
        )
    return out


def _meld_counts(melds: Sequence[Meld | Kong]) -> tuple[int, int, int, int]:
    """How many of ``melds`` are pongs, direct, added and concealed kongs (one walk, not four sums).

    >>> _meld_counts([Meld("pong", 0), Kong(1, 5, "concealed"), Meld("added", 9, 2)])
    (1, 0, 1, 1)
    """
    pongs = direct = added = concealed = 0
    for m in melds:
        kind = m.kind
        if kind == "pong":
            pongs += 1
        elif kind == "direct":
            direct += 1
        elif kind == "added":
            added += 1
        else:
            concealed += 1
    return pongs, direct, added, concealed


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


def hand_key(validation: Validation) -> HandKey | None:
    r = validation.record
    if r is None:
        return None
    return HandKey(r.hand_id, r.session_id, r.hand_no, r.players, r.dealer, validation.next_dealer)


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
    "Line",
    "Outcome",
    "SeatFacts",
    "SessionIssue",
    "Validation",
    "check_sessions",
    "compare_claims",
    "compare_payments",
    "hand_key",
    "validate",
    "validate_line",
    "validate_lines",
]
