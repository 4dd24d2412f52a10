"""Which hands an analysis covers: one frozen :class:`Scope` (``--since``, ``--until``, ``--table``,
``--player``, ``--profile`` and the time zone ``--tz`` of ``stats``, ``report``, ``audit``, ``collusion``,
``info-cheats`` and ``export``), applied in one place: :func:`pipeline.analytics.queries.connect` makes every
table's view hold only the hands in scope, so no query needs to know it is filtered.

Times. ``played_at`` is stored as a UTC moment, with the offset the record wrote it with beside it
(``hands.utc_offset``). A date or month is the record's own local date (a hand played at 00:30 on 1 November
in Chengdu, ``2026-11-01T00:30:00+08:00``, is a November hand, though it was still October in UTC); with
``tz`` (an IANA name such as ``Asia/Shanghai``, or ``UTC``) every hand's date is taken in that zone instead.
A hand whose record gave no offset is read as UTC. A bound given as a date or as a time without an offset is
such a local time; a time with an offset (``2026-11-01T20:00:00+08:00``, ``…Z``) is one moment, the same
everywhere.

``--since`` is inclusive; ``--until`` a date takes in the whole of that day, ``--until`` a time stops just
before it (so ``--since 20:00 --until 22:00`` and ``--since 22:00`` do not overlap). A hand without a time
is outside any ``--since`` or ``--until``.

What a scope cannot apply to: the lines ingest rejected (``rejects``: no hand was stored, so no table, player
or time is known) and the ingest runs (``ingest_runs``: they count lines, not hands). Their views stay whole;
the commands that show their counts say so (:data:`WHOLE`).

>>> s = Scope(since="2026-11-01", until="2026-11-30", player="p001")
>>> s.filters, s.describe()
(True, "hands played from 2026-11-01 to 2026-11-30 (each record's local time), where p001 sat")
>>> Scope(since="2026-12-01", until="2026-11-30")
Traceback (most recent call last):
...
pipeline.analytics.scope.ScopeError: --since 2026-12-01 is after --until 2026-11-30
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from dataclasses import dataclass
from typing import Any

# tables whose rows no scope can select (they belong to no stored hand); their views stay whole
WHOLE = ("rejects", "ingest_runs")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$")
_EXAMPLES = "a date (2026-11-01) or an RFC 3339 time (2026-11-01T20:00, 2026-11-01T20:00:00+08:00)"


class ScopeError(ValueError):
    """A scope that cannot be applied: a date that does not parse, an unknown time zone, since after until."""


@dataclass(frozen=True, slots=True)
class Bound:
    """One end of the time range: ``at`` is a UTC moment (``local`` false) or a local wall time (naive,
    ``local`` true: compared with each hand's local time); ``day``: it was given as a bare date."""

    at: dt.datetime
    local: bool
    day: bool


def parse_bound(text: str, option: str, *, end: bool = False) -> Bound:
    """``text`` as a bound of ``option``; an ``end`` bound that is a bare date stops at the end of that day.

    >>> parse_bound("2026-11-01", "--until", end=True).at.isoformat()
    '2026-11-02T00:00:00'
    >>> b = parse_bound("2026-11-01T20:00:00+08:00", "--since")
    >>> b.at.isoformat(), b.local
    ('2026-11-01T12:00:00+00:00', False)
    >>> parse_bound("yesterday", "--since")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pipeline.analytics.scope.ScopeError: --since 'yesterday': not a date or a time: give a date (2026-11-01) or ...
    """
    text = text.strip()
    try:
        if _DATE.match(text):
            day = dt.datetime.combine(dt.date.fromisoformat(text), dt.time())
            return Bound(day + dt.timedelta(days=1) if end else day, local=True, day=True)
        if _TIME.match(text):
            moment = dt.datetime.fromisoformat(text.upper())
            if moment.tzinfo is None:
                return Bound(moment, local=True, day=False)
            return Bound(moment.astimezone(dt.UTC), local=False, day=False)
    except ValueError:
        pass
    raise ScopeError(f"{option} {text!r}: not a date or a time: give {_EXAMPLES}")


def check_zone(name: str) -> str:
    """``name`` when it is an IANA time zone (``Asia/Shanghai``) or ``UTC``; else :class:`ScopeError`.

    >>> check_zone("Asia/Shanghai")
    'Asia/Shanghai'
    >>> check_zone("Mars/Olympus")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pipeline.analytics.scope.ScopeError: --tz 'Mars/Olympus': not a known time zone (an IANA name such as ...)
    """
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ScopeError(f"--tz {name!r}: not a known time zone (an IANA name such as Asia/Shanghai, or UTC)") from None
    return name


@dataclass(frozen=True, slots=True)
class Scope:
    """The hands an analysis covers (every field ``None``: all of them) and the time zone of its dates.

    ``since`` and ``until`` as the user wrote them (:func:`parse_bound` reads them); ``table`` a
    ``hands.table_id``; ``player`` the hands that player sat in; ``profile`` a ``hands.profile``; ``tz`` the
    zone dates and months are taken in (``None``: each record's own offset). Raises :class:`ScopeError` for
    a bound that does not parse, an unknown zone, or ``since`` after ``until``."""

    since: str | None = None
    until: str | None = None
    table: str | None = None
    player: str | None = None
    profile: str | None = None
    tz: str | None = None

    def __post_init__(self) -> None:
        if self.tz is not None:
            check_zone(self.tz)
        start, stop = self.bounds()
        # comparable when both are local or both moments; a date's end bound is the next midnight (so since
        # 2026-11-30 until 2026-11-30 is that one day)
        if start is not None and stop is not None and start.local == stop.local and start.at >= stop.at:
            after = "after" if start.at > stop.at or stop.day else "the same time as"
            raise ScopeError(f"--since {self.since} is {after} --until {self.until}")

    def bounds(self) -> tuple[Bound | None, Bound | None]:
        """The parsed ``since`` and ``until`` (``None`` where not given)."""
        start = None if self.since is None else parse_bound(self.since, "--since")
        stop = None if self.until is None else parse_bound(self.until, "--until", end=True)
        return start, stop

    @property
    def filters(self) -> bool:
        """Whether it leaves any hand out (a time zone alone changes the dates, not the hands)."""
        return any(v is not None for v in (self.since, self.until, self.table, self.player, self.profile))

    def params(self) -> dict[str, Any]:
        """The bound parameters of ``sql/scope_hands.sql``."""
        start, stop = self.bounds()
        return {
            "table": self.table,
            "player": self.player,
            "profile": self.profile,
            "since_at": start.at if start is not None and not start.local else None,
            "since_local": start.at if start is not None and start.local else None,
            "until_at": stop.at if stop is not None and not stop.local else None,
            "until_local": stop.at if stop is not None and stop.local else None,
        }

    def zone_words(self) -> str:
        """How dates are read, in words: ``each record's local time`` or ``time zone Asia/Shanghai``."""
        return "each record's local time" if self.tz is None else f"time zone {self.tz}"

    def describe(self) -> str:
        """The scope in words, for the commands' first line ("" when it filters nothing).

        >>> Scope(table="t1", profile="chengdu", until="2026-11-30T20:00", tz="UTC").describe()
        'hands played before 2026-11-30T20:00 (time zone UTC), at table t1, of profile chengdu'
        """
        parts = []
        if self.since is not None and self.until is not None:
            parts.append(f"hands played from {self.since} to {self.until} ({self.zone_words()})")
        elif self.since is not None:
            parts.append(f"hands played from {self.since} on ({self.zone_words()})")
        elif self.until is not None:
            until = f"to {self.until}" if _DATE.match(self.until.strip()) else f"before {self.until}"
            parts.append(f"hands played {until} ({self.zone_words()})")
        if self.table is not None:
            parts.append(f"at table {self.table}")
        if self.player is not None:
            parts.append(f"where {self.player} sat")
        if self.profile is not None:
            parts.append(f"of profile {self.profile}")
        if parts and not parts[0].startswith("hands"):
            parts[0] = "hands " + parts[0]
        return ", ".join(parts)

    def as_dict(self) -> dict[str, str | None]:
        """The scope as the JSON outputs carry it (``"scope"``)."""
        return {
            "since": self.since,
            "until": self.until,
            "table": self.table,
            "player": self.player,
            "profile": self.profile,
            "tz": self.tz,
        }


EVERYTHING = Scope()
