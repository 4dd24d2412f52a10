"""One hand, readable: a record replayed turn by turn, for settling an argument (``xuezhan replay``).

The text shows, in this order:

1. the hand's header: id, profile, level, dealer, and whether it is valid;
2. per seat: the player, the deal (tile notation), the exchange (换三张) given and the void suit (定缺);
3. every event, one a line, in the hand notation of :mod:`pipeline.formats.notation` (``0-8p``,
   ``1h8p<0``), with the player's name, the wall left after it where the replay knows it, each win's value
   as the engine computed it (title, fan, points) beside the fan and points the record claimed, and the
   issues raised at that event right under it (``!`` marks an error, ``?`` a warning);
4. the settlement: each payment the engine computed beside the claim, marked ``=`` when the record claims
   the same transfer, ``+`` when only the engine computes it (missing from the claim) and ``-`` when only
   the record claims it; then the deltas both ways;
5. the issues of no event, and what the record's level could not support (not checked).

The same text as a page of its own (``--html``, and in the dispute and case packs) is written by the presentation
layer, :mod:`dashboards.pages.replay`, which the caller hands to :func:`write_pack`.

>>> from pipeline.validate import validate
>>> record = {"format": "xzlog/1", "hand_id": "w1", "level": "settlement", "ruleset": "chengdu",
...     "players": ["a", "b", "c", "d"], "dealer": 0, "events": [{"t": "hu", "seat": 1, "from": 2}],
...     "end": [{"seat": 0, "state": "not_ready"}, {"seat": 2, "state": "not_ready"},
...             {"seat": 3, "state": "not_ready"}],
...     "result": {"payments": [{"from": 2, "to": 1, "amount": 4, "reason": "hu", "event": 0}],
...                "deltas": [0, 4, -4, 0],
...                "wins": [{"seat": 1, "event": 0, "patterns": ["qing_yi_se"], "fan": 3, "points": 4}]}}
>>> print(replay_text(record, validate(record)))  # doctest: +NORMALIZE_WHITESPACE
hand w1 · chengdu · level settlement · dealer seat 0 (a) · valid
seat  player  deal  given  void
   0  a       -     -      -
   1  b       -     -      -
   2  c       -     -      -
   3  d       -     -      -
   #  event   player  wall  what
   0  1h<2    b             win: 清一色 3 fan, 4 points (claimed 3 fan, 4 points)
settlement    computed | claimed
   =  2>1=4hu@0
deltas  0 4 -4 0 | 0 4 -4 0
not checked: the draw order (no wall); ...
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import orjson
import polars as pl

from pipeline.analytics.export import Found, Missing, Stored, read_back, selected
from pipeline.analytics.render import csv_frame
from pipeline.audit.review import Decision, note, summarize
from pipeline.audit.review import review as review_hand
from pipeline.engines import Engine
from pipeline.formats.notation import NotationError, format_event, format_payment
from pipeline.game.start import DEAL_SIZE, deal_hands, wall_after_deal
from pipeline.ingest.read import read_lines
from pipeline.ingest.warehouse import session_checks_of
from pipeline.report.names import file_stem
from pipeline.rules.tiles import format_tiles, parse_tiles
from pipeline.sql import run_sql
from pipeline.text import printable
from pipeline.validate import Issue, Validation


def replay_text(
    record: Mapping[str, Any], validation: Validation, *, review: bool = False, yardstick: Engine | None = None
) -> str:
    """The hand ``record`` (its JSON object) as text, with what ``validation`` (its :func:`validate`) found.
    Control characters of the record's strings (ids, names) are written as escapes: the text goes to
    terminals. ``review``: each decision beside the reference policy (:mod:`pipeline.audit.review`), under the
    event that shows it (``»``; ``»!`` where the policy's choice was clearly better), and a summary per seat;
    with ``yardstick`` (an engine, ``assist --yardstick``) each turn's line says too whether the option made was
    its first choice (``engine: the same``) or what that was (``engine: only ... (not judged)``: it saw no choice)."""
    decisions = _reviewed(validation, yardstick) if review else None
    return "\n".join(printable(line) for line in _replay_text(record, validation, decisions).split("\n"))


def _reviewed(validation: Validation, yardstick: Engine | None = None) -> list[Decision]:
    r = validation.record
    if r is None or r.level == "settlement":
        return []
    return review_hand(r, engine=yardstick)


def _replay_text(record: Mapping[str, Any], validation: Validation, decisions: list[Decision] | None = None) -> str:
    lines = [_header(record, validation), *_seats(record)]
    if decisions is not None:
        lines += _review_start(record, decisions)
    lines += _events(record, validation, decisions or [])
    lines += _settlement(validation)
    if decisions is not None:
        lines += _review_summary(record, validation, decisions)
    loose = [i for i in validation.issues if i.event is None or not _is_event(record, i.event)]
    if loose:
        lines.append("issues")
        lines += [f"  {_issue(i)}" for i in loose]
    if validation.not_checked:
        lines.append("not checked: " + "; ".join(validation.not_checked))
    return "\n".join(lines)


def _header(record: Mapping[str, Any], v: Validation) -> str:
    players = _players(record)
    dealer = record.get("dealer")
    who = f" ({players[dealer]})" if isinstance(dealer, int) and 0 <= dealer < len(players) else ""
    ruleset = record.get("ruleset")
    profile = ruleset.get("profile") if isinstance(ruleset, Mapping) else ruleset
    errors = sum(i.severity == "error" for i in v.issues)
    verdict = "valid" if v.ok else f"{errors} error{'s' if errors != 1 else ''}"
    parts = [f"hand {v.hand_id or record.get('hand_id')}", str(profile), f"level {v.level or '?'}"]
    return " · ".join([*parts, f"dealer seat {dealer}{who}", verdict])


def _players(record: Mapping[str, Any]) -> list[str]:
    players = record.get("players")
    return [str(p) for p in players] if isinstance(players, list) else []


def _tiles(value: object) -> str:
    try:
        return format_tiles(parse_tiles(value)) if isinstance(value, list) and value else "-"  # type: ignore[arg-type]
    except ValueError:
        return " ".join(str(t) for t in value) if isinstance(value, list) else "-"


def _dealt(record: Mapping[str, Any], seats: int) -> object:
    """The record's deal, or, for a record with a wall and no deal (level full), the hands the wall deals (as
    :func:`~pipeline.game.start.deal_hands` deals them: the stacked-deal screen's evidence is the deal)."""
    deal, wall, dealer = record.get("deal"), record.get("wall"), record.get("dealer")
    if deal is not None or not isinstance(wall, list) or not isinstance(dealer, int) or not 0 <= dealer < seats:
        return deal
    if len(wall) <= DEAL_SIZE * seats:  # too short to deal from: the validator says so
        return None
    return deal_hands(wall, dealer, seats)  # slices of the wall's tile names


def _seats(record: Mapping[str, Any]) -> list[str]:
    players = _players(record)
    deal, que = _dealt(record, len(players)), record.get("que")
    exchange = record.get("exchange")
    given = exchange.get("given") if isinstance(exchange, Mapping) else None
    rows = [("seat", "player", "deal", "given", "void")]
    for seat, player in enumerate(players):
        rows.append(
            (
                f"{seat:>4}",
                player,
                _tiles(_at(deal, seat)),
                _tiles(_at(given, seat)),
                str(_at(que, seat) or "-"),
            )
        )
    return _table(rows)


def _at(value: object, i: int) -> Any:
    return value[i] if isinstance(value, list) and i < len(value) else None


def _is_event(record: Mapping[str, Any], index: int) -> bool:
    events = record.get("events")
    return isinstance(events, list) and 0 <= index < len(events)


def _review_line(record: Mapping[str, Any], d: Decision) -> str:
    players = _players(record)
    who = players[d.seat] if d.seat < len(players) else "?"
    mark = "»!" if d.better is not None else "» "
    return f"       {mark} {d.kind} {who}: {note(d)}"


def _review_start(record: Mapping[str, Any], decisions: list[Decision]) -> list[str]:
    lines = [d for d in decisions if d.event is None]
    head = f"review (reference policy, docs/REPLAY.md): {len(decisions)} decisions"
    if not decisions:
        head += " (none: no seat's tiles are known, or a settlement record)"
    return [head, *(_review_line(record, d) for d in lines)]


def _review_summary(record: Mapping[str, Any], v: Validation, decisions: list[Decision]) -> list[str]:
    players = _players(record)
    seats = v.record.rules.players if v.record is not None else len(players)
    rows = [
        (
            "review",
            "player",
            "decisions",
            "top",
            "efficient",
            "clearly worse",
            "missed wins",
            "void kept",
            "deal-ins (avoidable)",
        )
    ]
    for seat, s in enumerate(summarize(decisions, seats)):
        who = players[seat] if seat < len(players) else "?"
        rows.append(
            (
                f"{seat:>6}",
                who,
                str(s.decisions),
                str(s.top),
                f"{s.efficient}/{s.discards}",
                str(s.clearly_worse),
                str(s.missed_wins),
                str(s.void_kept),
                f"{s.deal_ins} ({s.avoidable_deal_ins})",
            )
        )
    return _table(rows)


def _events(record: Mapping[str, Any], v: Validation, decisions: Sequence[Decision] = ()) -> list[str]:
    events = record.get("events")
    if not isinstance(events, list):
        return []
    players = _players(record)
    at: dict[int, list[Issue]] = {}
    for issue in v.issues:
        if issue.event is not None:
            at.setdefault(issue.event, []).append(issue)
    computed = {w.event: w for w in v.wins}
    claimed = {w.event: w for w in v.claimed.wins} if v.claimed is not None else {}
    walls: dict[int, int] = {}  # the wall left after each event: the draws counted (unknown on a score sheet)
    if v.record is not None and v.level != "settlement":
        left = wall_after_deal(v.record.rules)
        for index, event in enumerate(events):
            left -= isinstance(event, Mapping) and event.get("t") == "draw"
            walls[index] = left
    rows: list[tuple[str, ...]] = [("#", "event", "player", "wall", "what")]
    notes: dict[int, list[str]] = {}
    judged: dict[int, list[str]] = {}
    for d in decisions:
        if d.event is not None:
            judged.setdefault(d.event, []).append(_review_line(record, d))
    for index, event in enumerate(events):
        shown = event.get("hand") if isinstance(event, Mapping) and event.get("t") == "hu" else None
        try:  # a win that shows the winner's hand (an observer's record): the hand goes to the note
            token = format_event({k: v for k, v in event.items() if k != "hand"} if shown is not None else event)
        except (NotationError, AttributeError):
            token = repr(event)
        seat = event.get("seat") if isinstance(event, Mapping) else None
        player = players[seat] if isinstance(seat, int) and 0 <= seat < len(players) else "?"
        what = ""
        win = computed.get(index)
        if win is not None:
            what = f"win: {win.score.title_zh} {win.score.fan} fan, {_points(win.score.points)}"
        said = claimed.get(index)
        if said is not None and (said.fan is not None or said.points is not None):
            claim = f"claimed {said.fan} fan, {_points(said.points)}"
            what += f" ({claim})" if what else claim
        if shown is not None:
            what = f"{what}; shows {_tiles(shown)}" if what else f"shows {_tiles(shown)}"
        rows.append((f"{index:>4}", token, player, str(walls.get(index, "")), what.strip()))
        notes[len(rows) - 1] = [f"       {_issue(i)}" for i in at.get(index, [])] + judged.get(index, [])
    out = []
    for n, line in enumerate(_table(rows)):
        out.append(line)
        out += notes.get(n, [])
    return out


def _points(n: int | None) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


def _issue(issue: Issue) -> str:
    mark = "!" if issue.severity == "error" else "?"
    return f"{mark} {issue.code}: {issue.message}"


def _settlement(v: Validation) -> list[str]:
    computed = Counter(format_payment(p.as_dict()) for p in v.payments)
    claimed_payments = v.claimed.payments if v.claimed is not None else None
    claimed = Counter(format_payment(p.as_dict()) for p in claimed_payments or ())
    lines = ["settlement    computed | claimed"]
    order = [*computed, *(t for t in claimed if t not in computed)]
    for token in order:
        both = min(computed[token], claimed[token]) if claimed_payments is not None else 0
        lines += [f"   =  {token}"] * both
        lines += [f"   +  {token}"] * (computed[token] - both) if claimed_payments is not None else []
        lines += [f"      {token}"] * computed[token] if claimed_payments is None else []
        lines += [f"   -  {token}"] * (claimed[token] - both)
    if claimed_payments is None and v.claimed is not None:
        lines.append("      (the claim does not itemise its payments)")
    lines.append(f"deltas  {_deltas(v.deltas)} | {_deltas(v.claimed.deltas if v.claimed is not None else None)}")
    return lines


def _deltas(deltas: Sequence[int] | None) -> str:
    return " ".join(str(d) for d in deltas) if deltas is not None else "-"


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal: wide characters (汉字) take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell + " " * (w - _width(cell)) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


# ------------------------------------------------------------------------------------------------ finding the hand
class HandNotFound(LookupError):
    """The hand is not where it was looked for, or its record has changed since it was stored (one line)."""


def find_record(paths: Sequence[str], hand_id: str) -> Found:
    """The record of ``hand_id`` in the record files under ``paths``; the first one when a hand_id repeats (as
    ingest keeps it)."""
    needle = json.dumps(hand_id)[1:-1].encode() if hand_id.isascii() else b""  # cheap: most lines are skipped
    for line in read_lines(list(paths)):
        if line.fault is not None or needle not in line.data:
            continue
        try:
            obj = orjson.loads(line.data)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("hand_id") == hand_id:
            return Found(Stored(hand_id, line.source_file, line.source_line, line.sha256, None), obj, line.data)
    raise HandNotFound(f"no record of hand {hand_id!r} under {', '.join(paths)}")


def stored_record(con: duckdb.DuckDBPyConnection, hand_id: str) -> Found:
    """The record a warehouse stored for ``hand_id``, read back from its source file and line, which must
    still hold the very bytes stored (:func:`pipeline.analytics.export.read_back`): a moved or edited source
    is said, never replayed."""
    hands = selected(con, hand_id=hand_id)
    if not hands:
        raise HandNotFound(f"hand {hand_id!r} is not in the warehouse")
    got = next(read_back(hands[:1]))
    if isinstance(got, Missing):
        raise HandNotFound(f"hand {hand_id!r} cannot be read back: {got.reason}; give its record file instead")
    return got


def hand_issues(con: duckdb.DuckDBPyConnection, hand_id: str) -> pl.DataFrame:
    """Every issue row the warehouse holds for one hand (``sql/hand_issues.sql``): replay's findings in it, stored,
    and its session checks, worked out from its own session's hands only
    (:func:`~pipeline.ingest.warehouse.session_checks_of`), not from a window over every hand."""
    with session_checks_of(con, [hand_id]):
        return run_sql(con, "pipeline.audit", "hand_issues", hand_id=hand_id)


def session_findings(issues: pl.DataFrame) -> list[tuple[str, str, str]]:
    """The session checks among a hand's issue rows (:func:`hand_issues`), as the replay shows them: (code,
    severity, message), by severity, code and message."""
    found = issues.filter(pl.col("code").str.starts_with("SESSION_")).sort("severity", "code", "message")
    return list(found.select("code", "severity", "message").iter_rows())


# ------------------------------------------------------------------------------------------------ packs
# The replay as a page: (record, validation, session findings) → the HTML file. The page is written by the
# presentation layer (dashboards.pages.replay.replay_html), which the caller hands over: nothing here writes HTML.
ReplayPage = Callable[[Mapping[str, Any], Validation, Sequence[tuple[str, str, str]]], str]


def session_line(code: str, severity: str, message: str) -> str:
    """One session finding of a hand (a check across the hands of its session) as the replay shows it, in its
    text, its page and its dispute pack alike; the message's control characters shown as escapes.

    >>> session_line("SESSION_DEALER", "error", "dealer 2, expected 1")
    'session: SESSION_DEALER (error) dealer 2, expected 1'
    """
    return f"session: {code} ({severity}) {printable(message)}"


def write_pack(
    folder: Path, found: Found, validation: Validation, issues: pl.DataFrame, page: ReplayPage
) -> list[Path]:
    """A dispute pack for one hand in ``folder``: the replay as text and as a page (``page``), the record's line
    exactly as its source holds it, and the issue rows the warehouse stored for it (CSV). Returns the files
    written."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"hand-{file_stem(str(validation.hand_id or found.record.get('hand_id')))}"
    session = [
        (str(r["code"]), str(r["severity"]), str(r["message"]))
        for r in issues.iter_rows(named=True)
        if str(r["code"]).startswith("SESSION_")
    ]
    text = replay_text(found.record, validation) + "\n"
    text += "".join(session_line(*finding) + "\n" for finding in session)
    files = {
        stem.with_name(stem.name + ".txt"): text.encode(),
        stem.with_name(stem.name + ".html"): page(found.record, validation, session).encode(),
        stem.with_name(stem.name + ".record.jsonl"): found.data + b"\n",
        stem.with_name(stem.name + ".issues.csv"): csv_frame(issues).write_csv().encode(),
    }
    for path, data in files.items():
        path.write_bytes(data)
    return list(files)
