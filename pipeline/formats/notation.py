"""The compact hand notation: a record's events, payments and claimed wins as short tokens, read and written.

It is how the regression corpus is written (``tests/corpus/build.py``) and how ``xuezhan replay`` prints a
hand, so a person can read a hand at a glance and type one into a test. Tiles are in the tile notation of
:mod:`pipeline.rules.tiles` (``7p``, ``111m45p``). Seats are 0 to 3.

======================  ==============================================  =====================
token                   what it is                                      example
======================  ==============================================  =====================
``<seat>+<tile>``       a draw (``2+`` when the tile is hidden or not   ``2+9s``, ``2+``
                        known: an observer's record, a score sheet)
``<seat>-<tile>``       a discard                                       ``0-8p``
``<seat>p<tile><<from>``  a pong of seat ``from``'s discard             ``3p9s<0``
``<seat>k<tile><<from>``  a direct kong (直杠)                          ``2k4m<1``
``<seat>a<tile>``       an added kong (面下杠)                          ``0a7p``
``<seat>c<tile>``       a concealed kong (暗杠)                         ``3c2m``
``<seat>h<tile>[<<from>][!]``  a win: on seat ``from``'s discard, a     ``1h8p<0``, ``2h9s``,
                        self-draw without ``<``, ``!`` robbing a kong   ``1h7p<0!``
``<f>><t>=<n><reason>[@<e>]``  a payment of ``n`` points from seat      ``0>1=1hu@1``,
                        ``f`` to seat ``t`` (``pot``: to nobody) for    ``2>0=10hua_zhu``,
                        ``reason``, caused by event ``e``               ``0>pot=48penalty``
``<seat>@<e>:<fan>f<points>p[=<pattern>+…]``  a claimed win at event    ``1@1:1f1p``,
                        ``e``, with its fan, points and patterns        ``1@0:3f4p=qing_yi_se``
======================  ==============================================  =====================

Every parser has a formatter, and ``parse(format(x)) == x``: the round trip is tested. Input that is not
the notation raises :class:`NotationError` naming the token and its place, never a guess.

>>> parse_events("0-8p 1h8p<0")
[{'t': 'discard', 'seat': 0, 'tile': '8p'}, {'t': 'hu', 'seat': 1, 'tile': '8p', 'from': 0}]
>>> format_events([{"t": "kong", "seat": 2, "tile": "4m", "kind": "direct", "from": 1}])
'2k4m<1'
>>> format_payments(parse_payments("0>1=1hu@1 0>pot=48penalty"))
'0>1=1hu@1 0>pot=48penalty'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

_TILE = r"[1-9][mps]"
_EVENT = re.compile(rf"^(?P<seat>[0-3])(?P<op>[-+hpkac])(?P<tile>{_TILE})?(?:<(?P<src>[0-3]))?(?P<rob>!)?$")
_OPS = {"+": "draw", "-": "discard", "h": "hu", "p": "pong", "k": "kong", "a": "kong", "c": "kong"}
_KONG_OPS = {"direct": "k", "added": "a", "concealed": "c"}
_PAYMENT = re.compile(r"^(?P<payer>[0-3])>(?P<payee>[0-3]|pot)=(?P<amount>\d+)(?P<reason>[a-z_]+)(?:@(?P<event>\d+))?$")
_WIN = re.compile(
    r"^(?P<seat>[0-3])@(?P<event>\d+):(?P<fan>\d+)f(?P<points>\d+)p(?:=(?P<patterns>[a-z_]+(?:\+[a-z_]+)*))?$"
)

Event = dict[str, Any]


class NotationError(ValueError):
    """Text that is not the hand notation, or an object the notation cannot write; names the token."""


def _tokens(text: str) -> Iterable[tuple[int, str]]:
    return enumerate(text.split(), start=1)


# ------------------------------------------------------------------------------------------------ events
def parse_event(token: str, place: int = 1) -> Event:
    """One event token → the event object of an ``xzlog/1`` record.

    >>> parse_event("1h7p<0!")
    {'t': 'hu', 'seat': 1, 'tile': '7p', 'from': 0, 'rob_kong': True}
    >>> parse_event("2h9s")
    {'t': 'hu', 'seat': 2, 'tile': '9s', 'from': None}
    >>> parse_event("3p9s")
    Traceback (most recent call last):
    ...
    pipeline.formats.notation.NotationError: event 1 '3p9s': a pong names its discarder (<seat)
    """
    m = _EVENT.match(token)
    if m is None:
        raise NotationError(f"event {place} {token!r}: not <seat><op><tile>[<from>][!] (op one of + - p k a c h)")
    op, source = m["op"], m["src"]
    what = {"p": "a pong", "k": "a direct kong"}.get(op)
    if what is not None and source is None:
        raise NotationError(f"event {place} {token!r}: {what} names its discarder (<seat)")
    if op not in "pkh" and source is not None:
        raise NotationError(f"event {place} {token!r}: only a pong, a direct kong or a win names a discarder")
    if m["rob"] and (op != "h" or source is None):
        raise NotationError(f"event {place} {token!r}: only a win on another's kong robs it (h<tile><<seat>!)")
    event: Event = {"t": _OPS[op], "seat": int(m["seat"])}
    if m["tile"] is not None:
        event["tile"] = m["tile"]
    if op in _KONG_OPS.values():
        event["kind"] = next(kind for kind, letter in _KONG_OPS.items() if letter == op)
    if op in "pkh":
        event["from"] = int(source) if source is not None else None
    if m["rob"]:
        event["rob_kong"] = True
    return event


def parse_events(text: str) -> list[Event]:
    """Space-separated event tokens → event objects."""
    return [parse_event(token, place) for place, token in _tokens(text)]


_EVENT_FIELDS = {
    "draw": {"t", "seat", "tile"},
    "discard": {"t", "seat", "tile"},
    "pong": {"t", "seat", "tile", "from"},
    "kong": {"t", "seat", "tile", "kind", "from"},
    "hu": {"t", "seat", "tile", "from", "rob_kong"},
}


def format_event(event: Mapping[str, Any]) -> str:
    """An event object → its token: the fields the notation has (no ``x_`` extensions); ``rob_kong: false``
    is written as no robbing.

    >>> format_event({"t": "draw", "seat": 2})
    '2+'
    """
    given = {k: v for k, v in event.items() if not (k == "rob_kong" and v is False)}
    t, kind, tile, source = given.get("t"), given.get("kind"), given.get("tile"), given.get("from")
    op = {"draw": "+", "discard": "-", "pong": "p", "hu": "h"}.get(t) if isinstance(t, str) else None
    if t == "kong" and isinstance(kind, str):
        op = _KONG_OPS.get(kind)
    token = None
    if (
        op is not None
        and set(given) <= _EVENT_FIELDS[str(t)]
        and _is_seat(given.get("seat"))
        and (tile is None or (isinstance(tile, str) and re.fullmatch(_TILE, tile)))
        and (source is None or _is_seat(source))
    ):
        token = f"{given['seat']}{op}{tile or ''}" + (f"<{source}" if source is not None else "")
        token += "!" if given.get("rob_kong") is True else ""
    # a field out of place (a discarder on a concealed kong, a robbed self-draw) does not read back the same
    return _read_back(token, lambda t: parse_event(t) == given, f"the event {dict(event)!r}")


def format_events(events: Iterable[Mapping[str, Any]]) -> str:
    return " ".join(format_event(e) for e in events)


def _read_back(token: str | None, same: Callable[[str], bool], what: str) -> str:
    """``token`` when it reads back as the object it was written from (``same``), which is how every formatter
    checks that the notation can carry the object; else :class:`NotationError` naming ``what``."""
    try:
        if token is not None and same(token):
            return token
    except NotationError:
        pass
    raise NotationError(f"{what} cannot be written in the notation")


def _is_seat(value: object) -> bool:
    return type(value) is int and 0 <= value <= 3


# ------------------------------------------------------------------------------------------------ payments
def parse_payments(text: str) -> list[dict[str, Any]]:
    """Payment tokens → the ``payments`` of a record's claimed ``result``.

    >>> parse_payments("2>0=10hua_zhu")
    [{'from': 2, 'to': 0, 'amount': 10, 'reason': 'hua_zhu', 'event': None}]
    """
    out = []
    for place, token in _tokens(text):
        m = _PAYMENT.match(token)
        if m is None:
            raise NotationError(f"payment {place} {token!r}: not <from>><to>=<amount><reason>[@<event>]")
        out.append(
            {
                "from": int(m["payer"]),
                "to": None if m["payee"] == "pot" else int(m["payee"]),
                "amount": int(m["amount"]),
                "reason": m["reason"],
                "event": int(m["event"]) if m["event"] is not None else None,
            }
        )
    return out


def format_payment(payment: Mapping[str, Any]) -> str:
    """A claimed payment object → its token."""
    payee = payment.get("to")
    token = f"{payment.get('from')}>{'pot' if payee is None else payee}={payment.get('amount')}{payment.get('reason')}"
    if payment.get("event") is not None:
        token += f"@{payment['event']}"
    return _read_back(token, lambda t: parse_payments(t) == [dict(payment)], f"the payment {dict(payment)!r}")


def format_payments(payments: Iterable[Mapping[str, Any]]) -> str:
    return " ".join(format_payment(p) for p in payments)


# ------------------------------------------------------------------------------------------------ claimed wins
def parse_wins(text: str) -> list[dict[str, Any]]:
    """Claimed-win tokens → the ``wins`` of a claimed ``result`` (``patterns`` only where written).

    >>> parse_wins("1@0:3f4p=qing_yi_se+gen")
    [{'seat': 1, 'event': 0, 'fan': 3, 'points': 4, 'patterns': ['qing_yi_se', 'gen']}]
    """
    out = []
    for place, token in _tokens(text):
        m = _WIN.match(token)
        if m is None:
            raise NotationError(f"win {place} {token!r}: not <seat>@<event>:<fan>f<points>p[=<pattern>+...]")
        win: dict[str, Any] = {k: int(m[k]) for k in ("seat", "event", "fan", "points")}
        if m["patterns"] is not None:
            win["patterns"] = m["patterns"].split("+")
        out.append(win)
    return out


def format_win(win: Mapping[str, Any]) -> str:
    token = f"{win.get('seat')}@{win.get('event')}:{win.get('fan')}f{win.get('points')}p"
    patterns = win.get("patterns")
    if isinstance(patterns, Sequence) and not isinstance(patterns, str):
        token += "=" + "+".join(str(p) for p in patterns)
    return _read_back(token, lambda t: parse_wins(t) == [dict(win)], f"the claimed win {dict(win)!r}")


def format_wins(wins: Iterable[Mapping[str, Any]]) -> str:
    return " ".join(format_win(w) for w in wins)
