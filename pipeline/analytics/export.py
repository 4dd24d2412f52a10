"""The records of a warehouse, read back from their sources (``xuezhan export --warehouse``).

The warehouse keeps what the statistics need, not the records: no deal, no wall (the decision times only as
``events.ms``). What it keeps of each hand is where it came from (``hands.source_file``, ``source_line``) and
the sha256 of that input line (``record_sha256``), so a record is read back from its file and shown to be the
one stored before it is written out. Nothing is lost: every hand selected is read back, or is a
:class:`Missing` with the reason (the file is gone, shorter, changed, or was read from stdin), never passed over
in silence.

Files are read one at a time, by path, each once and only as far as the last line
wanted, so memory holds one record at a time whatever the size of the warehouse.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import duckdb
import orjson

from pipeline import sql
from pipeline.ingest.read import read_lines


@dataclass(frozen=True, slots=True)
class Stored:
    """A hand and where its record is: its id, the file and line it was read from, the sha256 of that line, and
    its level (as a warehouse stored it; None for a record found in a file by :func:`pipeline.audit.replay.
    find_record`)."""

    hand_id: str
    source_file: str | None
    source_line: int | None
    sha256: str
    level: str | None

    def where(self) -> str:
        return f"{self.source_file}:{self.source_line}"


@dataclass(frozen=True, slots=True)
class Found:
    """A hand's record as found: where it is (``hand``), its object, and its line's bytes as the file holds them
    (a stored hand read back: the line whose sha256 is the one stored). The one home of the concept: the export,
    the replay and the dispute and case packs take it."""

    hand: Stored
    record: dict[str, Any]
    data: bytes


@dataclass(frozen=True, slots=True)
class Missing:
    """A stored hand that could not be read back, and why."""

    hand: Stored
    reason: str


def selected(
    con: duckdb.DuckDBPyConnection,
    *,
    player: str | None = None,
    since: dt.datetime | None = None,
    hand_id: str | None = None,
) -> list[Stored]:
    """The stored hands ``export_hands.sql`` selects, by source file (its path), then line."""
    params = {"player": player, "since": since, "hand_id": hand_id}
    rows = con.execute(sql.load_sql("pipeline.analytics", "export_hands"), params)
    return [Stored(*row) for row in rows.fetchall()]


def read_back(hands: list[Stored]) -> Iterator[Found | Missing]:
    """Each of ``hands`` (:func:`selected`'s order: by file, then line) read back from its source, in order."""
    for source, group in groupby(hands, key=lambda h: h.source_file):
        yield from _read_file(source, list(group))


def _read_file(source: str | None, hands: list[Stored]) -> Iterator[Found | Missing]:
    if source is None or source == "-":
        for hand in hands:
            yield Missing(hand, "it was read from stdin: there is no file to read it back from")
        return
    wanted: dict[int | None, list[Stored]] = {}
    for hand in hands:
        wanted.setdefault(hand.source_line, []).append(hand)
    last = max(line for line in wanted if line is not None) if any(k is not None for k in wanted) else 0
    fault = ""
    for line in read_lines([source]):
        if line.fault is not None:
            fault = line.fault
            break
        for hand in wanted.pop(line.source_line, []):
            yield _check(hand, line.data, line.sha256, line.too_long)
        if line.source_line >= last:
            break
    for line_no in sorted(wanted, key=lambda n: -1 if n is None else n):  # what the file no longer holds
        for hand in wanted[line_no]:
            why = fault or f"{source} has no line {line_no} any more (it has changed since it was ingested)"
            yield Missing(hand, why)


def _check(hand: Stored, data: bytes, sha256: str, too_long: bool) -> Found | Missing:
    if sha256 != hand.sha256:
        return Missing(
            hand,
            f"line {hand.source_line} of {hand.source_file} is not the line ingested (sha256 {sha256[:12]}…, "
            f"stored {hand.sha256[:12]}…): the file has changed since",
        )
    if too_long:
        return Missing(hand, f"line {hand.source_line} of {hand.source_file} is too long to read back whole")
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:  # the line ingest stored as this hand was a record: it cannot be
        return Missing(hand, f"line {hand.source_line} of {hand.source_file} is not JSON: {exc}")
    if not isinstance(record, dict) or record.get("hand_id") != hand.hand_id:
        return Missing(hand, f"line {hand.source_line} of {hand.source_file} is not the record of {hand.hand_id}")
    return Found(hand, record, data)
