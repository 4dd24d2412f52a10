"""Read record files: paths and folders of ``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst`` (or ``-`` for stdin),
streamed line by line as bytes, so memory does not grow with the input.

Every physical line comes out as a :class:`RawLine` with its file, line number, size and sha256. A line
longer than ``max_line`` bytes is never held in memory: it is streamed to a side file under ``spill_dir``
(when given) and comes out with ``spill`` set. A file that cannot be read to its end (missing, truncated or
corrupt compression) ends with one :class:`RawLine` whose ``fault`` says why; reading goes on with the
next file.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".ndjson")
MAX_LINE = 4 << 20  # 4 MiB: a hand record is a few KiB


@dataclass(frozen=True, slots=True)
class RawLine:
    """One input line without its line break (``data``), or a spilled long line, or a read fault."""

    source_file: str
    source_line: int  # 1-based; for a fault, the line after the last one read
    data: bytes
    size: int
    sha256: str
    spill: str | None = None  # side file (relative to spill_dir) holding a line too long to keep in memory
    fault: str | None = None

    @classmethod
    def of(cls, source_file: str, source_line: int, data: bytes) -> RawLine:
        return cls(source_file, source_line, data, len(data), hashlib.sha256(data).hexdigest())

    @property
    def blank(self) -> bool:
        return self.fault is None and self.spill is None and not self.data.strip()


def find_files(paths: Iterable[str]) -> list[str]:
    """Expand folders to the record files below them (sorted); keep files and ``-`` as given."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if p != "-" and path.is_dir():
            out.extend(str(f) for f in sorted(path.rglob("*")) if f.is_file() and f.name.endswith(SUFFIXES))
        else:
            out.append(p)
    return out


def input_bytes(paths: Iterable[str]) -> int:
    """Bytes on disk of the files :func:`read_lines` will read (for progress and ETA)."""
    return sum(os.path.getsize(p) for p in find_files(paths) if p != "-" and os.path.isfile(p))


def _open(path: str) -> tuple[BinaryIO, BinaryIO | None]:
    """The decompressed stream and the raw file under it (for progress in on-disk bytes)."""
    if path == "-":
        return sys.stdin.buffer, None
    raw = open(path, "rb")  # noqa: SIM115 - closed with the stream
    if path.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw), raw  # type: ignore[return-value]
    if path.endswith(".zst"):
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_size=1 << 20, closefd=True)
        return io.BufferedReader(reader, buffer_size=1 << 20), raw  # type: ignore[arg-type]
    return raw, raw


def read_lines(
    paths: Iterable[str],
    *,
    max_line: int = MAX_LINE,
    spill_dir: str | Path | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[RawLine]:
    """Every line of every file, in order. ``on_bytes`` hears how many on-disk bytes were consumed."""
    for path in find_files(paths):
        number = 0
        try:
            stream, raw = _open(path)
        except OSError as exc:
            yield RawLine(path, 1, b"", 0, hashlib.sha256(b"").hexdigest(), fault=f"cannot open {path}: {exc.strerror or exc}")
            continue
        position = 0
        try:
            reader = stream
            while True:
                chunk = reader.readline(max_line + 1)
                if not chunk:
                    break
                number += 1
                if len(chunk) > max_line and not chunk.endswith(b"\n"):
                    yield _spill(path, number, chunk, reader, spill_dir)
                else:
                    yield RawLine.of(path, number, chunk.rstrip(b"\r\n"))
                if on_bytes is not None and raw is not None:
                    now = raw.tell()
                    on_bytes(now - position)
                    position = now
        except (OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
            yield RawLine(path, number + 1, b"", 0, hashlib.sha256(b"").hexdigest(),
                          fault=f"{path}: stream broken after line {number}: {type(exc).__name__}: {exc}")
        finally:
            if path != "-":
                stream.close()


def _spill(path: str, number: int, head: bytes, reader: BinaryIO, spill_dir: str | Path | None) -> RawLine:
    """Stream the rest of an over-long line to a side file (or just hash it), never holding it whole."""
    digest = hashlib.sha256(head)
    size = len(head)
    target = None
    out = None
    if spill_dir is not None:
        Path(spill_dir).mkdir(parents=True, exist_ok=True)
        target = Path(spill_dir) / f".partial-{os.getpid()}-{number}"
        out = target.open("wb")
        out.write(head)
    try:
        while True:
            piece = reader.readline(1 << 20)
            if not piece:
                break
            body = piece.rstrip(b"\r\n") if piece.endswith(b"\n") else piece
            digest.update(body)
            size += len(body)
            if out is not None:
                out.write(body)
            if piece.endswith(b"\n"):
                break
    finally:
        if out is not None:
            out.close()
    sha = digest.hexdigest()
    name = None
    if target is not None:
        name = f"{sha}.line"
        os.replace(target, Path(spill_dir) / name)  # type: ignore[arg-type]
    return RawLine(path, number, b"", size, sha, spill=name)
