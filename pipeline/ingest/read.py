"""Read record files: paths and folders of ``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst`` (or ``-`` for stdin),
streamed line by line as bytes, so memory does not grow with the input.

Every physical line comes out as a :class:`RawLine` with its file, line number, size and sha256. A line
longer than ``max_line`` bytes is never held in memory: it comes out with ``too_long`` set and no data, and
is streamed to a side file under ``spill_dir`` (when given, named ``spill``). A file that cannot be read to
its end (missing, truncated or corrupt compression) ends with one :class:`RawLine` whose ``fault`` says why;
reading goes on with the next file.

Lines end at LF; CRs right before the LF belong to the line break (CRLF files), in memory and in a spill
file alike. A UTF-8 byte order mark at the start of a file (as Windows editors write) is not part of line 1.
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
from typing import Any, BinaryIO

import zstandard

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".ndjson")
MAX_LINE = 4 << 20  # 4 MiB: a hand record is a few KiB
PARTIAL = ".partial-"  # prefix of a spill file still being written
BOM = b"\xef\xbb\xbf"  # UTF-8 byte order mark


@dataclass(frozen=True, slots=True)
class RawLine:
    """One input line without its line break (``data``), or a spilled long line, or a read fault."""

    source_file: str
    source_line: int  # 1-based; for a fault, the line after the last one read (0: the file would not open)
    data: bytes
    size: int
    sha256: str
    spill: str | None = None  # side file (relative to spill_dir) holding a line too long to keep in memory
    fault: str | None = None
    too_long: bool = False  # longer than max_line: data is empty, size and sha256 are the whole line's

    @classmethod
    def of(cls, source_file: str, source_line: int, data: bytes) -> RawLine:
        return cls(source_file, source_line, data, len(data), hashlib.sha256(data).hexdigest())

    @classmethod
    def failed(cls, source_file: str, source_line: int, fault: str) -> RawLine:
        return cls(source_file, source_line, b"", 0, _EMPTY_SHA, fault=fault)

    @property
    def blank(self) -> bool:
        return self.fault is None and not self.too_long and not self.data.strip()


_EMPTY_SHA = hashlib.sha256(b"").hexdigest()


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
        return io.BufferedReader(_ZstdReader(raw), buffer_size=1 << 20), raw
    return raw, raw


class _ZstdReader(io.RawIOBase):
    """Decompress a ``.zst`` stream of one or more frames; a stream that ends inside a frame raises.

    ``ZstdDecompressor().stream_reader`` reports a truncated file as a clean end of file, which would
    drop the file's tail without a trace. Compressed input is fed in small slices so that one call never
    expands into more than a few MiB, however repetitive the data (a huge line stays out of memory).
    """

    SLICE = 1 << 10  # compressed bytes per call: some tens of MiB out at most, even of run-length blocks

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._frame: Any = None  # the current frame's decompressor; None between frames
        self._input = memoryview(b"")
        self._output = b""
        self._offset = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._offset >= len(self._output):
            if not self._input:
                data = self._raw.read(1 << 16)
                if not data:
                    if self._frame is not None:
                        raise zstandard.ZstdError("truncated: the stream ends inside a zstd frame")
                    return 0
                self._input = memoryview(data)
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            piece, self._input = self._input[: self.SLICE], self._input[self.SLICE :]
            self._output, self._offset = self._frame.decompress(piece), 0
            if self._frame.eof:  # the frame ended inside this slice: what follows starts the next frame
                rest = self._frame.unused_data
                self._input = memoryview(rest + bytes(self._input)) if rest else self._input
                self._frame = None
        n = min(len(buffer), len(self._output) - self._offset)
        buffer[:n] = self._output[self._offset : self._offset + n]
        self._offset += n
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


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
            yield RawLine.failed(path, 0, f"cannot open {path}: {exc.strerror or exc}")
            continue
        position = 0
        try:
            reader = stream
            while True:
                chunk = reader.readline(max_line + 1)
                if not chunk:
                    break
                number += 1
                if number == 1 and chunk.startswith(BOM):
                    chunk = chunk[len(BOM) :]
                    if not chunk.endswith(b"\n"):  # up to max_line + 1 bytes again, as _spill expects
                        chunk += reader.readline(max_line + 1 - len(chunk))
                if len(chunk) > max_line and not chunk.endswith(b"\n"):
                    yield _spill(path, number, chunk, reader, spill_dir, max_line)
                else:
                    yield RawLine.of(path, number, chunk.rstrip(b"\r\n"))
                if on_bytes is not None and raw is not None:
                    now = raw.tell()
                    on_bytes(now - position)
                    position = now
        except (OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
            why = f"{path}: stream broken after line {number}: {type(exc).__name__}: {exc}"
            yield RawLine.failed(path, number + 1, why)
        finally:
            if path != "-":
                stream.close()
                if raw is not None:
                    raw.close()  # GzipFile leaves the file it was given open


def _spill(
    path: str, number: int, head: bytes, reader: BinaryIO, spill_dir: str | Path | None, max_line: int
) -> RawLine:
    """Stream an over-long line (``head``, ``max_line + 1`` bytes, is its first part) to a side file, or just
    hash it without ``spill_dir``; never hold it whole. The side file is named by the line's sha256.

    ``head`` may end in the CR of a CRLF break: a line that turns out to fit once its break is taken off
    comes back as an ordinary line."""
    digest = hashlib.sha256()
    size = 0
    target = out = None
    if spill_dir is not None:
        Path(spill_dir).mkdir(parents=True, exist_ok=True)
        target = Path(spill_dir) / f"{PARTIAL}{os.getpid()}-{number}"
        out = target.open("wb")
    held = b""  # trailing CRs of the last piece: part of the line break if the line ends right after them

    def emit(body: bytes) -> None:
        nonlocal size
        digest.update(body)
        size += len(body)
        if out is not None:
            out.write(body)

    try:
        piece = head
        while piece:
            if piece.endswith(b"\n"):
                body = piece.rstrip(b"\r\n")
                if body:
                    emit(held + body)
                break
            body = piece.rstrip(b"\r")
            if body:
                emit(held + body)
                held = b""
            held += piece[len(body) :]
            piece = reader.readline(1 << 20)
    finally:
        if out is not None:
            out.close()
    if size <= max_line:  # all of it is in head: the bytes past max_line were the line break
        if target is not None:
            target.unlink()
        return RawLine.of(path, number, head[:size])
    sha = digest.hexdigest()
    name = None
    if target is not None:
        name = f"{sha}.line"
        os.replace(target, Path(spill_dir) / name)  # type: ignore[arg-type]
    return RawLine(path, number, b"", size, sha, spill=name, too_long=True)
