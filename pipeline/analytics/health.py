"""The warehouse's health across ingest runs (``xuezhan check``): each run's figures against the runs before it,
with warn and error thresholds a scheduler can act on (exit 0 ok, 1 warn, 2 error).

A room ingests its new records every day; what the operator needs first is whether that run looks like the ones
before. For the run checked (the last, by default) and every earlier run, :func:`check` reads (``sql/
run_health.sql``, ``sql/run_tables.sql``) what it read, stored, found invalid and rejected, its hands with a
scoring or settlement error (money paid other than the rules give: an error-severity ``SCORE_*`` or ``SETTLE_*``
issue), per table too, the newest hand, and the players and issue codes no earlier run had. Then:

- **rates** (invalid hands of those stored, rejected lines of those read, hands with a settlement error over the
  run and per table): the run's count against the earlier runs' together, by the exact conditional test: under
  an unchanged process, given the errors of both, the run's share of them is ``Binomial(k, n_run / n_all)``. Its
  p-value times the number of rates tested in the run (Bonferroni) below ``error_p`` (or ``warn_p``), with the
  run's rate at least ``min_ratio`` times the earlier one, is an error (a warning). A rate above ``error_above``
  (``warn_above``) is one whatever the history: the first run has none.
- **volume**: hands stored against the median of the earlier runs' (a run that stored nothing is an error: the
  feed stopped, or the same file was ingested again).
- **freshness** (off unless set): hours from the newest stored hand to the check.
- **novelty**: issue codes no earlier run had; new players above a share of the run's players.
- **the last run incomplete** (interrupted, or still running): an error.

Thresholds are data (``health.toml`` beside this module, overridden key by key by ``--thresholds FILE``).

>>> Thresholds().error_p, Thresholds().min_ratio
(0.001, 1.5)
"""

from __future__ import annotations

import statistics
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import duckdb

from pipeline import sql
from pipeline.analytics.runs import bounded
from pipeline.analytics.stats import binomial_sf

Level = Literal["ok", "warn", "error"]
LEVELS: tuple[Level, ...] = ("ok", "warn", "error")
EXIT: dict[Level, int] = {"ok": 0, "warn": 1, "error": 2}  # for cron


class ThresholdsError(ValueError):
    """A thresholds file that cannot be read, or a key or value it must not have."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    """What a run is compared with (the defaults are ``health.toml``'s; see its comments)."""

    warn_p: float = 0.01
    error_p: float = 0.001
    min_ratio: float = 1.5
    min_hands: int = 100
    warn_above: float = 0.05
    error_above: float = 0.25
    warn_below: float = 0.5
    error_below: float = 0.1
    warn_hours: float = 0.0
    error_hours: float = 0.0
    new_codes: str = "warn"
    new_players_share: float = 0.5


_SECTIONS = {
    "rates": ("warn_p", "error_p", "min_ratio", "min_hands", "warn_above", "error_above"),
    "volume": ("warn_below", "error_below"),
    "freshness": ("warn_hours", "error_hours"),
    "novelty": ("new_codes", "new_players_share"),
}


def load_thresholds(path: str | Path | None = None) -> Thresholds:
    """The shipped thresholds, with the keys of the TOML file at ``path`` (sections as in ``health.toml``) over them."""
    shipped = resources.files("pipeline.analytics").joinpath("health.toml").read_text(encoding="utf-8")
    out = _apply(Thresholds(), tomllib.loads(shipped), "health.toml")
    if path is None:
        return out
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ThresholdsError(f"{path}: {exc}") from None
    return _apply(out, data, str(path))


def changed(t: Thresholds) -> dict[str, Any]:
    """The keys of ``t`` whose values are not the shipped ones (what a ``--thresholds`` file changed), in the
    order of :class:`Thresholds`.

    >>> changed(load_thresholds()), changed(replace(load_thresholds(), min_hands=500))
    ({}, {'min_hands': 500})
    """
    shipped = load_thresholds()
    return {f.name: getattr(t, f.name) for f in fields(Thresholds) if getattr(t, f.name) != getattr(shipped, f.name)}


def _apply(base: Thresholds, data: Mapping[str, Any], where: str) -> Thresholds:
    types = {f.name: f.type for f in fields(Thresholds)}
    changes: dict[str, Any] = {}
    for section, values in data.items():
        if section not in _SECTIONS or not isinstance(values, dict):
            raise ThresholdsError(f"{where}: unknown section [{section}] (known: {', '.join(_SECTIONS)})")
        for key, value in values.items():
            if key not in _SECTIONS[section]:
                raise ThresholdsError(
                    f"{where}: [{section}] has no key {key!r} (known: {', '.join(_SECTIONS[section])})"
                )
            kind = types[key]
            if kind == "str":
                if value not in ("off", "warn", "error"):
                    raise ThresholdsError(f'{where}: [{section}] {key} must be "off", "warn" or "error"')
            elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ThresholdsError(f"{where}: [{section}] {key} must be a number >= 0, not {value!r}")
            elif kind == "int":
                value = int(value)
            else:
                value = float(value)
            changes[key] = value
    out = replace(base, **changes)
    for low, high in (("error_p", "warn_p"), ("error_below", "warn_below")):
        if getattr(out, low) > getattr(out, high):
            raise ThresholdsError(f"{where}: {low} must not be above {high}")
    return out


@dataclass(frozen=True, slots=True)
class Alert:
    """One thing the run does not do as the runs before it did."""

    level: Level
    check: str  # rate | volume | freshness | novelty | run
    subject: str  # what: "invalid hands", "settlement errors at table T", ...
    message: str
    value: float | None = None  # the run's figure
    baseline: float | None = None  # the earlier runs' figure
    p: float | None = None  # the adjusted p-value of a rate test

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "check": self.check,
            "subject": self.subject,
            "message": self.message,
            "value": self.value,
            "baseline": self.baseline,
            "p": self.p,
        }


@dataclass(frozen=True, slots=True)
class RunFigures:
    """One ingest run's figures (a row of ``sql/run_health.sql``) and its tables' (``sql/run_tables.sql``)."""

    run_no: int
    run_id: str
    started_at: datetime | None
    finished_at: datetime | None
    lines_read: int
    rejects: int
    duplicates: int
    stored: int
    invalid: int
    settle_errors: int
    newest: datetime | None
    players: int
    new_players: int
    codes: tuple[str, ...]
    new_codes: tuple[str, ...]
    tables: dict[str | None, tuple[int, int]] = field(default_factory=dict)  # table → (hands, settle errors)

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "tables"}
        for key in ("started_at", "finished_at", "newest"):
            out[key] = out[key].isoformat() if out[key] is not None else None
        out["codes"], out["new_codes"] = list(self.codes), list(self.new_codes)
        out["tables"] = [{"table_id": t, "hands": h, "settle_errors": e} for t, (h, e) in self.tables.items()]
        return out


@dataclass(frozen=True, slots=True)
class Health:
    """The check of one run: its alerts and every run's figures (for the trend)."""

    run: RunFigures | None  # None: the warehouse has no ingest run
    runs: tuple[RunFigures, ...]
    alerts: tuple[Alert, ...]
    thresholds: Thresholds

    @property
    def level(self) -> Level:
        worst: Level = "ok"
        for a in self.alerts:
            worst = a.level if LEVELS.index(a.level) > LEVELS.index(worst) else worst
        return worst

    @property
    def exit_code(self) -> int:
        return EXIT[self.level]

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.run_id if self.run is not None else None,
            "level": self.level,
            "alerts": [a.as_dict() for a in self.alerts],
            "runs": [r.as_dict() for r in self.runs],
        }


def runs_of(con: duckdb.DuckDBPyConnection) -> list[RunFigures]:
    """Every ingest run's figures, in the order they started. Both queries read the ``issues`` view, whose session
    checks are a window over every hand of the warehouse: they run :func:`bounded` (on 5M hands, 2.1 GB peak
    unbounded, 0.37 GB bounded, and 11 s against 39 s: the window spills)."""
    tables: dict[str, dict[str | None, tuple[int, int]]] = {}
    for run_id, table_id, hands, errors in bounded(
        con, lambda: sql.run_sql(con, "pipeline.analytics", "run_tables")
    ).iter_rows():
        tables.setdefault(run_id, {})[table_id] = (int(hands), int(errors))
    out = []
    for r in bounded(con, lambda: sql.run_sql(con, "pipeline.analytics", "run_health")).iter_rows(named=True):
        r = dict(r)
        r["codes"], r["new_codes"] = tuple(r["codes"] or ()), tuple(r["new_codes"] or ())
        out.append(RunFigures(**r, tables=tables.get(r["run_id"], {})))
    return out


def check(
    con: duckdb.DuckDBPyConnection,
    thresholds: Thresholds | None = None,
    *,
    run: str | None = None,
    now: datetime | None = None,
) -> Health:
    """The health of run ``run`` (default: the last that started) against every run before it, from the warehouse
    behind ``con`` (an unfiltered connection: :func:`pipeline.analytics.queries.connect`). ``now``: the time the
    freshness is measured at (default: the clock). Raises ``KeyError`` for a run the warehouse does not have."""
    t = thresholds or load_thresholds()
    runs = runs_of(con)
    if not runs:
        return Health(None, (), (), t)
    if run is None:
        this = runs[-1]
    else:
        matches = [r for r in runs if r.run_id == run]
        if not matches:
            raise KeyError(run)
        this = matches[0]
    earlier = [r for r in runs if r.run_no < this.run_no and r.finished_at is not None]
    alerts: list[Alert] = []
    if this.finished_at is None:
        alerts.append(
            Alert(
                "error",
                "run",
                "incomplete run",
                f"ingest run {this.run_id} did not finish (interrupted, or still running): run it again",
            )
        )
    alerts += _rates(this, earlier, t)
    alerts += _volume(this, earlier, t)
    alerts += _freshness(runs, t, now or datetime.now(UTC))
    alerts += _novelty(this, earlier, t)
    order = {level: i for i, level in enumerate(reversed(LEVELS))}
    alerts.sort(key=lambda a: (order[a.level], a.check, a.subject))
    return Health(this, tuple(runs), tuple(alerts), t)


def table_subject(table: str | None) -> str:
    """The subject of a table's settlement-error alert (the report's health page finds each table's by it).

    >>> table_subject("A"), table_subject(None)
    ('settlement errors at table A', 'settlement errors at hands without a table')
    """
    return f"settlement errors at {f'table {table}' if table is not None else 'hands without a table'}"


def _rates(this: RunFigures, earlier: list[RunFigures], t: Thresholds) -> list[Alert]:
    # (subject, the run's count, its total, the earlier runs' count, their total)
    tests: list[tuple[str, int, int, int, int]] = [
        ("invalid hands", this.invalid, this.stored, sum(r.invalid for r in earlier), sum(r.stored for r in earlier)),
        (
            "rejected lines",
            this.rejects,
            this.lines_read,
            sum(r.rejects for r in earlier),
            sum(r.lines_read for r in earlier),
        ),
        (
            "settlement errors",
            this.settle_errors,
            this.stored,
            sum(r.settle_errors for r in earlier),
            sum(r.stored for r in earlier),
        ),
    ]
    for table, (hands, errors) in sorted(this.tables.items(), key=lambda kv: (kv[0] is None, kv[0] or "")):
        before = [r.tables[table] for r in earlier if table in r.tables]
        tests.append((table_subject(table), errors, hands, sum(e for _, e in before), sum(h for h, _ in before)))
    tested = [x for x in tests if x[2] >= t.min_hands]
    m = sum(1 for x in tested if x[4] >= t.min_hands)  # the rates compared with a history
    out = []
    for subject, k, n, k0, n0 in tested:
        rate = k / n
        level: Level = "ok"
        why = ""
        p_adj: float | None = None
        base = k0 / n0 if n0 else None
        if n0 >= t.min_hands and base is not None and k and rate >= t.min_ratio * base:
            p_adj = min(1.0, m * binomial_sf(k, k + k0, n / (n + n0)))
            if p_adj < t.error_p:
                level = "error"
            elif p_adj < t.warn_p:
                level = "warn"
            if level != "ok":
                why = f"rose from {base:.2%} to {rate:.2%} ({k} of {n:,}; p = {p_adj:.1e}, {m} rates tested)"
        ceiling: Level = "ok"
        if t.error_above and rate > t.error_above:
            ceiling = "error"
        elif t.warn_above and rate > t.warn_above:
            ceiling = "warn"
        if LEVELS.index(ceiling) > LEVELS.index(level):
            level = ceiling
            limit = t.error_above if ceiling == "error" else t.warn_above
            why = f"{rate:.2%} ({k} of {n:,}), above {limit:.0%}"
        if level != "ok":
            out.append(Alert(level, "rate", subject, f"{subject}: {why}", rate, base, p_adj))
    return out


def _volume(this: RunFigures, earlier: list[RunFigures], t: Thresholds) -> list[Alert]:
    if this.finished_at is not None and this.stored == 0:
        read = f"{this.lines_read:,} lines read, {this.duplicates:,} already stored, {this.rejects:,} rejected"
        return [Alert("error", "volume", "hands stored", f"the run stored no new hand ({read})", 0.0, None)]
    stored = [r.stored for r in earlier if r.stored]
    if not stored:
        return []
    median = statistics.median(stored)
    share = this.stored / median
    limits: tuple[tuple[Level, float], ...] = (("error", t.error_below), ("warn", t.warn_below))
    for level, limit in limits:
        if share < limit:
            return [
                Alert(
                    level,
                    "volume",
                    "hands stored",
                    f"the run stored {this.stored:,} hands, {share:.0%} of the earlier runs' median ({median:,.0f})",
                    float(this.stored),
                    float(median),
                )
            ]
    return []


def _freshness(runs: list[RunFigures], t: Thresholds, now: datetime) -> list[Alert]:
    newest = max((r.newest for r in runs if r.newest is not None), default=None)
    if newest is None or not (t.warn_hours or t.error_hours):
        return []
    hours = (now - newest).total_seconds() / 3600
    limits: tuple[tuple[Level, float], ...] = (("error", t.error_hours), ("warn", t.warn_hours))
    for level, limit in limits:
        if limit and hours > limit:
            return [
                Alert(
                    level,
                    "freshness",
                    "newest hand",
                    f"the newest hand was played {hours:,.0f} hours before the check ({newest.isoformat()})",
                    hours,
                    limit,
                )
            ]
    return []


def _novelty(this: RunFigures, earlier: list[RunFigures], t: Thresholds) -> list[Alert]:
    if not earlier:  # everything is new in the first run
        return []
    out = []
    if this.new_codes and t.new_codes != "off":
        level: Level = "error" if t.new_codes == "error" else "warn"
        out.append(
            Alert(level, "novelty", "issue codes", f"issue codes no earlier run had: {', '.join(this.new_codes)}")
        )
    if t.new_players_share and this.players and this.new_players / this.players > t.new_players_share:
        share = this.new_players / this.players
        out.append(
            Alert(
                "warn",
                "novelty",
                "new players",
                f"{this.new_players:,} of the run's {this.players:,} players ({share:.0%}) are new",
                share,
                t.new_players_share,
            )
        )
    return out
