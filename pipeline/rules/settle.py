"""Settlement: who pays whom, as a ledger of integer transfers (docs/RULES.md §4–§6).

Money moves only as :class:`Payment` records, one transfer ``payer → payee`` each, so the deltas always
sum to zero, or to −pot where penalties leave the table (``penalty_to = "pot"``: a payment to nobody, SBR's
"48-point penalty that no player receives", p. 11); :meth:`Ledger.deltas` asserts it. The :class:`Ledger`
knows who is still in the hand ("已经胡牌的不算": players who have won pay and receive nothing for later
events) and which kong money each player collected, for 呼叫转移 and 退税.

The hand state calls it as the hand unfolds: :meth:`Ledger.kong` once a kong stands (an added kong only
after nobody robbed it), :meth:`Ledger.win` for each win, :meth:`Ledger.gang_shang_pao` when a win came on
the discard right after a kong, and :meth:`Ledger.end_of_wall` when the wall runs out with two or more
players still in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from pipeline.rules.fan import ReadyValue, Score
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.values import Value

Reason = Literal["hu", "kong", "hua_zhu", "cha_jiao", "tui_shui", "transfer", "penalty"]
REASONS: Final[tuple[str, ...]] = ("hu", "kong", "hua_zhu", "cha_jiao", "tui_shui", "transfer", "penalty")
KongKind = Literal["direct", "added", "concealed"]


class Payment(Value):
    """One transfer of ``amount`` points from ``payer`` to ``payee``, for ``reason``, caused by the record
    event with index ``event`` (``None`` for end-of-wall steps). ``payee`` is ``None`` for a penalty paid to
    the pot (nobody)."""

    __slots__ = ()
    _fields = ("payer", "payee", "amount", "reason", "event")

    def __init__(self, payer: int, payee: int | None, amount: int, reason: Reason, event: int | None = None) -> None:
        self._v = (payer, payee, amount, reason, event)

    @property
    def payer(self) -> int:
        return self._v[0]

    @property
    def payee(self) -> int | None:
        return self._v[1]

    @property
    def amount(self) -> int:
        return self._v[2]

    @property
    def reason(self) -> Reason:
        return self._v[3]

    @property
    def event(self) -> int | None:
        return self._v[4]

    def as_dict(self) -> dict[str, object]:
        """The record format's form: ``{"from", "to", "amount", "reason", "event"}``."""
        return {"from": self.payer, "to": self.payee, "amount": self.amount, "reason": self.reason, "event": self.event}


class SeatEnd(Value):
    """A player still in when the wall ran out: flower pig (花猪, three suits) or the ready value, and whether
    it owes ``void_end_penalty`` (it holds void-suit tiles). ``wall_end`` is false for the player left when
    three have won, checked for a flower pig only (``hua_zhu_at_three_hu``). A value, not a frozen dataclass:
    every hand that reaches an empty wall builds one per seat still in, and compiled, a dataclass still runs
    its interpreted ``__init__``."""

    __slots__ = ()
    _fields = ("seat", "pig", "ready", "void_penalty", "wall_end")

    def __init__(
        self, seat: int, pig: bool, ready: ReadyValue | None, void_penalty: bool = False, wall_end: bool = True
    ) -> None:
        self._v = (seat, pig, ready, void_penalty, wall_end)

    @property
    def seat(self) -> int:
        return self._v[0]

    @property
    def pig(self) -> bool:
        return self._v[1]

    @property
    def ready(self) -> ReadyValue | None:
        return self._v[2]

    @property
    def void_penalty(self) -> bool:
        return self._v[3]

    @property
    def wall_end(self) -> bool:
        return self._v[4]


class Ledger:
    """The hand's payments so far, and who is still in."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.payments: list[Payment] = []
        self.seats = range(rules.players)
        self.in_hand = [True] * rules.players
        # Kong payments each seat has received and still holds (for 呼叫转移 and 退税).
        self._kong_income: dict[int, list[Payment]] = {seat: [] for seat in self.seats}

    # -- the one way money moves -------------------------------------------------------------------
    def _pay(self, payer: int, payee: int | None, amount: int, reason: Reason, event: int | None) -> Payment | None:
        assert payer != payee, f"a seat cannot pay itself ({payer})"
        assert amount >= 0, f"negative amount {amount}"
        assert payee is not None or reason == "penalty", "only a penalty goes to the pot"
        if amount == 0:
            return None
        payment = Payment(payer, payee, amount, reason, event)
        self.payments.append(payment)
        return payment

    def others_in(self, seat: int) -> list[int]:
        return [s for s in self.seats if s != seat and self.in_hand[s]]

    # -- during the hand -----------------------------------------------------------------------------
    def kong(self, seat: int, kind: KongKind, event: int, *, source: int | None = None, fresh: bool = True) -> None:
        """刮风下雨: a standing kong's money.

        直杠: the discarder ``source`` pays ``direct_kong_pays`` × base. 面下杠: each other player still in
        pays ``added_kong_pays`` × base (only when ``fresh``, where ``added_kong_paid = "fresh"``).
        暗杠: each other player still in pays ``concealed_kong_pays`` × base.
        """
        assert self.in_hand[seat], f"seat {seat} has won and cannot kong"
        base = self.rules.base
        if kind == "direct":
            assert source is not None and self.in_hand[source]
            payers, amount = [source], self.rules.direct_kong_pays * base
        elif kind == "added":
            paid = self.rules.added_kong_paid == "always" or fresh
            payers, amount = self.others_in(seat), (self.rules.added_kong_pays * base if paid else 0)
        else:
            payers, amount = self.others_in(seat), self.rules.concealed_kong_pays * base
        for payer in payers:
            payment = self._pay(payer, seat, amount, "kong", event)
            if payment:
                self._kong_income[seat].append(payment)

    def win(
        self,
        seat: int,
        score: Score,
        event: int,
        *,
        discarder: int | None = None,
        kong_feeder: int | None = None,
        stays: bool = False,
    ) -> None:
        """A win's money; the winner then leaves the hand (unless it ``stays``: 血流成河).

        On a discard or a robbed kong, ``discarder`` pays the hand value (点炮, 抢杠). A self-drawn win is
        paid by every other player still in, each ``score.per_payer``, except 点杠花: a self-drawn win on
        the replacement after a direct kong fed by ``kong_feeder``, which that feeder alone pays, as if
        dealing in, where the profile says ``dian_gang_hua = "feeder"`` ("算引杠者点炮", seed 000). The
        caller passes no feeder after a second kong in a row ("就算在场的还没胡牌的所有人的了").
        """
        assert self.in_hand[seat], f"seat {seat} has already won"
        if discarder is not None:
            assert self.in_hand[discarder] or discarder == seat
            self._pay(discarder, seat, score.points, "hu", event)
        elif kong_feeder is not None and self.rules.dian_gang_hua == "feeder":
            assert self.in_hand[kong_feeder]
            self._pay(kong_feeder, seat, score.points, "hu", event)
        else:
            for payer in self.others_in(seat):
                self._pay(payer, seat, score.per_payer, "hu", event)
        if not stays:
            self.in_hand[seat] = False

    def gang_shang_pao(self, kong_seat: int, kong_event: int, winners: Sequence[int], event: int) -> None:
        """杠上炮 money: per ``gang_shang_pao_money``, the kong's money stays, is transferred (呼叫转移) to
        the first winner in turn order after the kong player, or is refunded to the players who paid it."""
        mode = self.rules.gang_shang_pao_money
        if mode == "stays" or not winners:
            return
        held = [p for p in self._kong_income[kong_seat] if p.event == kong_event]
        if not held:
            return
        self._kong_income[kong_seat] = [p for p in self._kong_income[kong_seat] if p.event != kong_event]
        if mode == "transfer":
            n = len(self.seats)
            first = min(winners, key=lambda s: (s - kong_seat) % n)
            self._pay(kong_seat, first, sum(p.amount for p in held), "transfer", event)
        else:
            for p in held:
                self._pay(kong_seat, p.payer, p.amount, "tui_shui", event)

    def penalty(self, seat: int, event: int, *, everyone: bool) -> None:
        """诈胡 / 相公: the offender pays ``false_win_fan`` fan's worth to every player still in (``everyone``:
        to all three, for 相公, "对所有人都要进行赔付") and, where the profile says so, returns all kong income
        ("并不再计算其刮风下雨收益")."""
        fan = self.rules.false_win_fan
        if fan:
            amount = self.rules.points(fan)
            payees = [s for s in self.seats if s != seat] if everyone else self.others_in(seat)
            for payee in payees:
                self._pay(seat, payee, amount, "penalty", event)
        if self.rules.false_win_loses_kong:
            self._refund_kongs(seat, event)

    def void_penalty(self, seat: int, amount: int, event: int | None) -> None:
        """A void-suit penalty of ``amount`` points (a meld in the void suit, void tiles at the wall's end): out of
        the table with ``penalty_to = "pot"``, else to each other player still in."""
        if self.rules.penalty_to == "pot":
            self._pay(seat, None, amount, "penalty", event)
        else:
            for payee in self.others_in(seat):
                self._pay(seat, payee, amount, "penalty", event)

    def as_claimed(self, payment: Payment) -> None:
        """A payment a record claims and its level cannot show (a settlement record's void-suit penalty for a
        pong it does not list), taken as claimed."""
        self._pay(payment.payer, payment.payee, payment.amount, payment.reason, payment.event)

    @property
    def pot(self) -> int:
        """Points paid to nobody (penalties with ``penalty_to = "pot"``)."""
        return sum(p.amount for p in self.payments if p.payee is None)

    def _refund_kongs(self, seat: int, event: int | None) -> None:
        for p in self._kong_income[seat]:
            self._pay(seat, p.payer, p.amount, "tui_shui", event)
        self._kong_income[seat] = []

    # -- end of the wall --------------------------------------------------------------------------------
    def end_of_wall(self, ends: Sequence[SeatEnd], winners: Sequence[int] = (), *, three_hu: bool = False) -> None:
        """黄庄 with two or more players still in: 查花猪, then 查大叫, then 退税 (docs/RULES.md §5).

        ``ends`` describes every player still in who has not won; ``winners`` are those who have won and
        stayed at the table (血流成河: they take no part in 查大叫 or 退税, but a pig pays them too).
        1. each flower pig pays each of its payees (``hua_zhu_payees``: the non-pigs still in, every non-pig,
        every other player still in, or every other player) the pig amount (``hua_zhu_amount``); each player
        owing ``void_end_penalty`` pays it; 2. each player not ready (a pig only where ``hua_zhu_pays_cha_jiao``)
        pays each ready player the ready value; 3. with ``tui_shui``, each player not ready returns the kong
        money they collected.
        ``three_hu``: the hand ended with three winners and ``ends`` is the one player left, checked for a flower
        pig only (``hua_zhu_at_three_hu``).
        """
        seat_ends: list[SeatEnd] = list(ends)  # walked natively, where a Sequence takes a generic iterator
        # the seats as bits: sets of a few small ints cost several times as much to build and compare
        in_bits = covered = 0
        for s in range(len(self.in_hand)):
            if self.in_hand[s]:
                in_bits |= 1 << s
        any_pig = False
        for e in seat_ends:
            covered |= 1 << e.seat
            any_pig = any_pig or e.pig
        for s in winners:
            covered |= 1 << s
        assert covered == in_bits, "ends and winners must cover exactly the seats still in"
        rules = self.rules
        if any_pig:  # 查花猪: most hands have no flower pig
            still_in = {s for s in self.seats if self.in_hand[s]}
            pigs = {e.seat for e in seat_ends if e.pig}
            by_seat = {e.seat: e for e in seat_ends}
            for pig in sorted(pigs):
                for paid in self._pig_payees(pig, pigs, still_in):
                    self._pay(pig, paid, self._pig_amount(by_seat.get(paid)), "hua_zhu", None)
        if three_hu:
            return
        if rules.void_end_penalty:
            for e in seat_ends:
                if e.void_penalty:
                    self.void_penalty(e.seat, rules.void_end_penalty, None)
        ready = [e for e in seat_ends if e.ready is not None]
        for payer in seat_ends:
            if payer.ready is not None or (payer.pig and not rules.hua_zhu_pays_cha_jiao):
                continue
            for payee in ready:
                assert payee.ready is not None
                self._pay(payer.seat, payee.seat, payee.ready.amount, "cha_jiao", None)
        if rules.tui_shui:
            for e in seat_ends:
                if e.ready is None:
                    self._refund_kongs(e.seat, None)

    def _pig_payees(self, pig: int, pigs: set[int], still_in: set[int]) -> list[int]:
        who = self.rules.hua_zhu_payees
        if who == "still_in":
            return sorted(still_in - pigs)
        if who == "non_pigs":
            return [s for s in self.seats if s not in pigs]
        if who == "everyone":
            return [s for s in self.seats if s != pig]
        return sorted(still_in - {pig})

    def _pig_amount(self, payee: SeatEnd | None) -> int:
        """What a pig pays one payee: the cap (满庄), a fixed multiple of base, or the larger of the payee's
        查大叫 value and a hand of ``hua_zhu_min_fan`` fan (``payee`` is ``None`` for a winner)."""
        rules = self.rules
        if rules.hua_zhu_amount == "cha_jiao_or_fan":
            floor = rules.points(max(rules.hua_zhu_min_fan, rules.fan_base))
            ready = payee.ready if payee is not None else None
            return max(floor, ready.amount) if ready is not None else floor
        cap = rules.cap_points()
        return cap if rules.hua_zhu_amount == "cap" and cap is not None else rules.hua_zhu_fixed * rules.base

    # -- results --------------------------------------------------------------------------------------------
    def deltas(self) -> list[int]:
        """Net points of each seat; always sums to −pot (zero without penalties to the pot)."""
        out = [0] * len(self.in_hand)  # a list's length, not the range's (a generic len())
        pot = 0
        for p in self.payments:
            amount, payee = p.amount, p.payee
            out[p.payer] = out[p.payer] - amount
            if payee is None:
                pot += amount
            else:
                out[payee] = out[payee] + amount
        total = 0
        for net in out:  # not sum(): a generic call from compiled code
            total += net
        assert total == -pot, f"payments do not balance: {out} with {pot} in the pot"
        return out
