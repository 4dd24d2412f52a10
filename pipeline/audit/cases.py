"""Cases: what a reviewer decided about a finding, kept in the warehouse, so that a finding dismissed today does not
come back tomorrow unless its evidence has grown (``xuezhan case``, ``xuezhan findings``).

A case is opened from a finding (its key, as ``xuezhan findings`` lists it: ``pair:p003+p007``, ``scoring:H:CODE``
...), goes ``open → confirmed | dismissed``, either may be ``appealed``, an appeal ends ``confirmed`` or
``dismissed``, and a dismissed case may be opened again. Every action is a row of the case log (``DIR/cases/``,
one Parquet file per action, never changed: :data:`schemas.tables.CASES`) with the reviewer, a dated note, the
finding's figures then (its q-value, the size of its evidence ``n``: shared hands, judged decisions, dealt hands)
and, when asked, an evidence pack (the hands' dispute packs) whose content hash is recorded with it.

**When a dismissed finding comes back.** Each later run recomputes the finding; a dismissed one stays hidden
unless its evidence has grown materially since the dismissal: a q-value at least :data:`Q_FACTOR` times smaller,
or at least :data:`N_FACTOR` times the evidence (shared hands, decisions) it was dismissed on. It then shows as
``reopened``, with the reason. Re-ingesting the same records changes neither, so it never comes back for that.

**Blind review.** A masked pack (``--mask``) renames the case's players A, B, C … in the order the finding names
them, every other player O1, O2 … and every hand, session and table id, writes the records as masked (not the
source lines), and is checked: no file of it may contain a real name or id.

>>> grown(0.004, 300, 0.0003, 320)
'q 0.004 → 0.0003 (at least 10× smaller)'
>>> grown(0.004, 300, 0.003, 610), grown(0.004, 300, 0.002, 500) is None
('evidence 300 → 610 (at least 2× as much)', True)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.ingest.warehouse import fsync_dir, parquet_bytes, write_durably
from schemas.tables import CASES

if TYPE_CHECKING:
    from pipeline.audit.replay import ReplayPage

FOLDER = "cases"
STATES = ("open", "confirmed", "dismissed", "appealed")
# The order findings are listed in (``xuezhan findings`` and the report's first screen): the new ones, then the known
# ones: what came back first, then what waits for a reviewer, then what is decided; dismissed (hidden) last.
LISTED = ("new", "reopened", "appealed", "open", "confirmed", "dismissed")
# action → (the states it may be taken from, the state after it)
ACTIONS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "open": ((), "open"),  # a new case (or, from dismissed, the same case opened again: "reopen")
    "reopen": (("dismissed", "confirmed"), "open"),
    "confirm": (("open", "appealed"), "confirmed"),
    "dismiss": (("open", "appealed"), "dismissed"),
    "appeal": (("confirmed", "dismissed"), "appealed"),
    "note": (STATES, None),  # the state stays
}
Q_FACTOR = 10.0
N_FACTOR = 2.0


class CaseError(ValueError):
    """An action the case log cannot take: an unknown case or finding, a transition its state does not allow."""


@dataclass(frozen=True, slots=True)
class Action:
    """One row of the case log."""

    action_id: str
    case_id: str
    at: datetime
    action: str
    state: str
    finding: str
    kind: str | None
    subject: str | None
    players: tuple[str, ...]
    reviewer: str | None
    note: str | None
    q: float | None
    n: int | None
    detail: str | None
    pack: str | None
    pack_sha256: str | None

    def as_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in CASES.names}
        out["at"] = self.at.isoformat()
        out["players"] = list(self.players)
        return out


@dataclass(frozen=True, slots=True)
class Case:
    """A case: its actions in order; its state, figures and finding are its last action's."""

    actions: tuple[Action, ...]

    @property
    def case_id(self) -> str:
        return self.actions[0].case_id

    @property
    def finding(self) -> str:
        return self.actions[0].finding

    @property
    def state(self) -> str:
        return self.actions[-1].state

    @property
    def decided(self) -> Action:
        """The action the case's state rests on: the last that set it (a note does not)."""
        return next(a for a in reversed(self.actions) if a.action != "note")

    def as_dict(self) -> dict[str, Any]:
        first = self.actions[0]
        return {
            "case_id": self.case_id,
            "finding": self.finding,
            "kind": first.kind,
            "subject": first.subject,
            "players": list(first.players),
            "state": self.state,
            "opened_at": first.at.isoformat(),
            "actions": [a.as_dict() for a in self.actions],
        }


def read_cases(warehouse: str | Path) -> dict[str, Case]:
    """Every case of the warehouse's log, by id, in the order they were opened (none: an empty dict)."""
    folder = Path(warehouse) / FOLDER
    files = sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []
    rows: list[dict[str, Any]] = []
    for f in files:
        rows += pq.read_table(f).to_pylist()
    rows.sort(key=lambda r: (r["at"], r["action_id"]))
    by_case: dict[str, list[Action]] = {}
    for r in rows:
        r["players"] = tuple(r["players"] or ())
        by_case.setdefault(r["case_id"], []).append(Action(**r))
    return {cid: Case(tuple(actions)) for cid, actions in by_case.items()}


def case_of_finding(cases: Mapping[str, Case], finding: str) -> Case | None:
    """The latest case opened on ``finding``, if any."""
    found = [c for c in cases.values() if c.finding == finding]
    return found[-1] if found else None


def _write(warehouse: str | Path, action: Action) -> None:
    folder = Path(warehouse) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    row = action.as_dict()
    row["at"] = action.at
    table = pa.Table.from_pylist([row], schema=CASES)
    tmp = folder / f".part-{action.action_id}.parquet.tmp"
    try:
        write_durably(tmp, parquet_bytes(table))
        os.replace(tmp, folder / f"part-{action.action_id}.parquet")
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(folder)


def _new_id(now: datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"


def open_case(
    warehouse: str | Path,
    finding: Mapping[str, Any],
    *,
    reviewer: str | None = None,
    note: str | None = None,
    pack: tuple[str, str] | None = None,
    now: datetime | None = None,
) -> Case:
    """Open a case on ``finding`` (a row of :func:`dashboards.findings.prep_findings`: ``key``, ``kind``,
    ``subject``, ``players``, ``q``, ``n``, ``detail``); from a dismissed or confirmed case of the same finding,
    that case is opened again (``reopen``). ``pack``: (folder, sha256) of an evidence pack written for it."""
    cases = read_cases(warehouse)
    key = str(finding["key"])
    existing = case_of_finding(cases, key)
    if existing is not None and existing.state in ("open", "appealed"):
        raise CaseError(f"finding {key} already has case {existing.case_id} ({existing.state})")
    at = now or datetime.now(UTC)
    case_id = existing.case_id if existing is not None else f"case-{_new_id(at)}"
    action = Action(
        action_id=_new_id(at),
        case_id=case_id,
        at=at,
        action="open" if existing is None else "reopen",
        state="open",
        finding=key,
        kind=finding.get("kind"),
        subject=finding.get("subject"),
        players=tuple(finding.get("players") or ()),
        reviewer=reviewer,
        note=note,
        q=finding.get("q"),
        n=finding.get("n"),
        detail=finding.get("detail"),
        pack=pack[0] if pack else None,
        pack_sha256=pack[1] if pack else None,
    )
    _write(warehouse, action)
    return read_cases(warehouse)[case_id]


def act(
    warehouse: str | Path,
    case_id: str,
    action: str,
    *,
    reviewer: str | None = None,
    note: str | None = None,
    finding: Mapping[str, Any] | None = None,
    pack: tuple[str, str] | None = None,
    now: datetime | None = None,
) -> Case:
    """Take ``action`` (confirm, dismiss, appeal, reopen, note) on case ``case_id``. ``finding``: the finding as it
    stands now (its figures are recorded with the decision: a dismissal is judged against them later)."""
    if action not in ACTIONS or action == "open":
        raise CaseError(f"unknown action {action!r} (known: {', '.join(a for a in ACTIONS if a != 'open')})")
    cases = read_cases(warehouse)
    case = cases.get(case_id)
    if case is None:
        raise CaseError(f"no case {case_id}")
    allowed, after = ACTIONS[action]
    if case.state not in allowed:
        raise CaseError(f"case {case_id} is {case.state}: it cannot be {action}ed (from {', '.join(allowed)} only)")
    last = case.actions[-1]
    at = now or datetime.now(UTC)
    if at <= last.at:  # the log's order is its times: an action is never before the one it follows
        at = last.at + timedelta(microseconds=1)
    fig = finding or {}
    row = Action(
        action_id=_new_id(at),
        case_id=case_id,
        at=at,
        action=action,
        state=after or case.state,
        finding=case.finding,
        kind=last.kind,
        subject=last.subject,
        players=last.players,
        reviewer=reviewer,
        note=note,
        q=fig.get("q", last.q) if finding is not None else last.q,
        n=fig.get("n", last.n) if finding is not None else last.n,
        detail=fig.get("detail", last.detail) if finding is not None else last.detail,
        pack=pack[0] if pack else None,
        pack_sha256=pack[1] if pack else None,
    )
    _write(warehouse, row)
    return read_cases(warehouse)[case_id]


def grown(q_then: float | None, n_then: int | None, q_now: float | None, n_now: int | None) -> str | None:
    """Why a finding dismissed with (``q_then``, ``n_then``) has grown materially at (``q_now``, ``n_now``), or
    ``None``: q at least :data:`Q_FACTOR` times smaller, or at least :data:`N_FACTOR` times the evidence."""
    if q_then is not None and q_now is not None and q_then > 0 and q_now * Q_FACTOR <= q_then:
        return f"q {q_then:.2g} → {q_now:.2g} (at least {Q_FACTOR:g}× smaller)"
    if n_then is not None and n_now is not None and n_then > 0 and n_now >= N_FACTOR * n_then:
        return f"evidence {n_then:,} → {n_now:,} (at least {N_FACTOR:g}× as much)"
    return None


def status(finding: Mapping[str, Any], case: Case | None) -> tuple[str, str | None]:
    """A current finding's standing against its case: ``new`` (no case), ``open``, ``confirmed``, ``appealed``,
    ``dismissed`` (hidden: nothing has grown), or ``reopened`` (dismissed, and its evidence has grown: the
    reason is the second item)."""
    if case is None:
        return "new", None
    if case.state != "dismissed":
        return case.state, None
    d = case.decided
    why = grown(d.q, d.n, finding.get("q"), finding.get("n"))
    return ("reopened", why) if why is not None else ("dismissed", None)


def with_status(findings: Iterable[Mapping[str, Any]], cases: Mapping[str, Case]) -> list[dict[str, Any]]:
    """Each of ``findings`` (rows of :func:`dashboards.findings.prep_findings`) as a dict with its standing: its
    latest case (``case_id``: None without one) and ``status``/``why`` (:func:`status`): what ``xuezhan findings``
    lists and the report's first screen shows, one rule for both."""
    out = []
    for row in findings:
        case = case_of_finding(cases, str(row["key"]))
        st, why = status(row, case)
        out.append({**row, "status": st, "why": why, "case_id": case.case_id if case is not None else None})
    return out


def listed(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``rows`` (:func:`with_status`) in the order they are listed (:data:`LISTED`), each state's in their own order."""
    return sorted(rows, key=lambda r: LISTED.index(r["status"]))


# ---------------------------------------------------------------------------------------------- evidence packs
def pack_hash(folder: Path) -> str:
    """sha256 over a pack's files: each file's path (relative, POSIX) and contents, in path order."""
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix().encode()
        h.update(len(rel).to_bytes(8, "big") + rel)
        data = f.read_bytes()
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


class Masker:
    """Consistent pseudonyms for a blind review: the case's players A, B, C …, every other player O1, O2 …, hands
    H1, H2 …, sessions S1 …, tables T1 …; :meth:`record` masks a record, :meth:`leaks` finds a real name left."""

    def __init__(self, players: Sequence[str]) -> None:
        letters = [chr(ord("A") + i) for i in range(26)]
        self.names: dict[str, str] = {p: letters[i] if i < 26 else f"A{i}" for i, p in enumerate(players)}
        self._others = 0
        self.ids: dict[str, str] = {}
        self._counts = {"H": 0, "S": 0, "T": 0}

    def player(self, name: str) -> str:
        if name not in self.names:
            self._others += 1
            self.names[name] = f"O{self._others}"
        return self.names[name]

    def _id(self, prefix: str, value: str) -> str:
        key = f"{prefix}:{value}"
        if key not in self.ids:
            self._counts[prefix] += 1
            self.ids[key] = f"{prefix}{self._counts[prefix]}"
        return self.ids[key]

    def record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """The record with its players and ids masked, its time of play and producer extensions left out."""
        out = {k: v for k, v in record.items() if not k.startswith("x_")}
        out["players"] = [self.player(str(p)) for p in record.get("players") or []]
        out["hand_id"] = self._id("H", str(record.get("hand_id")))
        for key, prefix in (("session_id", "S"), ("table_id", "T")):
            if record.get(key) is not None:
                out[key] = self._id(prefix, str(record[key]))
        out.pop("played_at", None)  # a time of play can name a table's session as well as its id does
        return out

    def real(self) -> list[str]:
        """Every real name and id the masker has replaced."""
        return [*self.names, *(k.split(":", 1)[1] for k in self.ids)]

    def leaks(self, folder: Path) -> list[tuple[str, str]]:
        """(file, real name) for every real name or id found in a file of ``folder``, as a whole word."""
        found = []
        names = sorted(set(self.real()), key=len, reverse=True)
        pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])" for n in names)) if names else None
        for f in sorted(p for p in folder.rglob("*") if p.is_file()):
            text = f.read_bytes().decode("utf-8", errors="replace")
            if pattern is not None:
                found += [(f.name, m.group(0)) for m in pattern.finditer(text)]
        return found


def write_case_pack(
    folder: Path,
    case: Mapping[str, Any],
    stored: Iterable[tuple[Any, Any, Any]],
    *,
    page: ReplayPage,
    mask: bool = False,
) -> tuple[list[Path], str]:
    """The evidence pack of a case in ``folder``: ``case.json`` (the finding and its figures) and, for each stored
    hand (``(found, validation, issues)`` as :func:`pipeline.audit.replay.write_pack` takes them), its dispute
    pack, its page written by ``page`` (the caller's: :func:`dashboards.pages.replay.replay_html`); masked for a
    blind review when ``mask`` (the records masked and validated again, no source line, the issue rows the masked
    record gives). Returns the files and the pack's hash (:func:`pack_hash`).

    Raises :class:`CaseError` when a masked pack would still hold a real name or id (nothing is left behind)."""
    from pipeline.analytics.export import Found, Stored
    from pipeline.audit.replay import write_pack
    from pipeline.validate import validate

    folder.mkdir(parents=True, exist_ok=True)
    masker = Masker(list(case.get("players") or [])) if mask else None
    files: list[Path] = []
    for found, validation, issues in stored:
        if masker is None:
            files += write_pack(folder, found, validation, issues, page)
            continue
        record = masker.record(found.record)
        masked = validate(record)
        data = json.dumps(record, ensure_ascii=False, sort_keys=True).encode()
        rows = issues.clear() if not masked.issues else _issue_rows(masked, issues)
        where = Stored(str(record.get("hand_id")), "masked", 0, hashlib.sha256(data).hexdigest(), None)
        files += write_pack(folder, Found(where, record, data), masked, rows, page)
    summary = dict(case)
    if masker is not None:
        summary = {
            "finding": "masked",
            "kind": case.get("kind"),
            "players": [masker.names[p] for p in case.get("players") or []],
            "q": case.get("q"),
            "n": case.get("n"),
        }
    (folder / "case.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1, default=str) + "\n")
    files.append(folder / "case.json")
    if masker is not None:
        leaks = masker.leaks(folder)
        if leaks:
            for f in files:
                f.unlink(missing_ok=True)
            shown = ", ".join(f"{name} in {f}" for f, name in leaks[:5])
            raise CaseError(f"the masked pack would still show real names or ids ({shown}): nothing written")
    return files, pack_hash(folder)


def _issue_rows(validation: Any, like: Any) -> Any:
    """The masked record's own issues as rows of the stored issues' columns (the stored rows quote real names)."""
    import polars as pl

    rows = [
        {**dict.fromkeys(like.columns), **{k: v for k, v in i.as_dict().items() if k in like.columns}}
        for i in validation.issues
    ]
    return pl.DataFrame(rows, schema=like.schema)
