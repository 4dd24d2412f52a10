"""Other record formats, to and from ``xzlog/1``: a club's score sheet (:mod:`pipeline.formats.sheet`,
read into ``settlement`` records) and the mjai event stream of Sichuan engines (:mod:`pipeline.formats.mjai`,
read into ``dealt`` records, and written from any record with a deal or a wall).

A reader never drops an input: every physical line ends in a written record, a reject with its reason, or
the framing that belongs to no single record (a sheet's header, an mjai ``start_game``), or is blank; the
caller counts the lines it read and :class:`Accounting` checks that the four add up. The conversion only
restates what the source says; whether it is right is the validator's question, at the record's level.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Reject:
    """Input lines that are not part of any written record: where they start, their text, and why."""

    line: int  # 1-based first line
    raw: str
    code: str  # IMPORT_* (schemas/ISSUE_CODES.md)
    message: str
    hand_id: str | None = None
    span: int = 1  # physical lines (a hand's rows, a kyoku's events, a quoted cell over several lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "lines": self.span,
            "code": self.code,
            "message": self.message,
            "hand_id": self.hand_id,
            "raw": self.raw,
        }


REJECT_TEXT = 1 << 16  # characters of its input a reject keeps: enough to see what it was, never a whole huge line


def bounded(raw: str) -> str:
    """A reject's text, at most :data:`REJECT_TEXT` characters (how many more there were is said, not kept)."""
    if len(raw) <= REJECT_TEXT:
        return raw
    return raw[:REJECT_TEXT] + f"… ({len(raw) - REJECT_TEXT} more characters not kept)"


@dataclass(frozen=True, slots=True)
class BadLine:
    """An input line the caller could not hand over as text (longer than its bound, a stream broken before
    it): the reader rejects it, and the hand or kyoku it may belong to, with this code and reason."""

    code: str  # the bound's reject code (INGEST_LINE_TOO_LONG, INGEST_READ, ...; schemas/ISSUE_CODES.md)
    message: str


@dataclass(frozen=True, slots=True)
class Converted:
    """One record read from another format, with the physical input lines it was made of."""

    record: dict[str, Any]
    lines: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """Lines that carry no record of their own: blank, or framing (a header, a game's start or end)."""

    lines: int
    why: Literal["blank", "framing"]


Item = Converted | Reject | Skipped


@dataclass(slots=True)
class Accounting:
    """Lines read = lines in written records + lines rejected + framing + blank.

    >>> acc = Accounting(lines_read=6)
    >>> for item in (Skipped(1, "framing"), Converted({}, 3), Reject(5, "x", "IMPORT_ROW", "bad"), Skipped(1, "blank")):
    ...     acc.add(item)
    >>> acc.balanced, acc.text("rows")
    (True, 'rows 6 = 3 in 1 records + 1 rejected + 1 framing + 1 blank')
    """

    lines_read: int = 0
    lines_used: int = 0
    records: int = 0
    lines_rejected: int = 0
    framing: int = 0
    blank: int = 0
    rejects: list[Reject] = field(default_factory=list)  # the first ``keep`` of them (all when keep is None)
    rejected: int = 0
    keep: int | None = None

    def add(self, item: Item) -> None:
        if isinstance(item, Reject):
            if self.keep is None or len(self.rejects) < self.keep:
                self.rejects.append(item)
            self.rejected += 1
            self.lines_rejected += item.span
        elif isinstance(item, Converted):
            self.records += 1
            self.lines_used += item.lines
        elif item.why == "blank":
            self.blank += item.lines
        else:
            self.framing += item.lines

    @property
    def balanced(self) -> bool:
        return self.lines_read == self.lines_used + self.lines_rejected + self.framing + self.blank

    def text(self, unit: str = "lines") -> str:
        """The reconciling line, e.g. ``lines 14 = 12 in 3 records + 2 rejected + 0 framing + 0 blank``."""
        return (
            f"{unit} {self.lines_read} = {self.lines_used} in {self.records} records + {self.lines_rejected} rejected"
            f" + {self.framing} framing + {self.blank} blank"
        )


def write_lines(path: str | Path, lines: Iterable[bytes]) -> int:
    """Write ``lines`` (each without its newline) to ``path``, compressed by its suffix (``.gz``, ``.zst``, else
    plain), deterministically (no time stamp in a gzip header); written to a temporary name and renamed, so a
    stopped run leaves no half file under the name. Returns the number of lines."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.part")
    n = 0
    try:
        n = _write(tmp, target.name, lines)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(target)
    return n


def _write(tmp: Path, name: str, lines: Iterable[bytes]) -> int:
    import os

    from pipeline.outfile import compressed

    n = 0
    with tmp.open("wb") as raw:
        with compressed(raw, name) as stream:
            for line in lines:
                stream.write(line)
                stream.write(b"\n")
                n += 1
        raw.flush()
        os.fsync(raw.fileno())
    return n
