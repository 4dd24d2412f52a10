"""Read record files: paths and folders of ``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst`` (or ``-`` for stdin),
streamed line by line as bytes, so memory does not grow with the input.

Every physical line comes out as a :class:`RawLine` with its file, line number, size and sha256. A line
longer than ``max_line`` bytes is never held in memory: it comes out with ``too_long`` set and no data, and
is streamed to a side file under ``spill_dir`` (when given, named ``spill``). A file that cannot be read to
its end (missing, truncated or corrupt compression) ends with one :class:`RawLine` whose ``fault`` says why;
reading goes on with the next file.

Lines end at LF; CRs right before the LF belong to the line break (CRLF files), in memory and in a spill
file alike. A UTF-8 byte order mark at the start of a file (as Windows editors write) is not part of line 1.
A blank line holds nothing but JSON whitespace (spaces, tabs, CRs); a line of other control characters
(``\x0b``, ``\x0c``) is not blank but a line to account for (it is no JSON: a reject).

Bounds, whatever the input: a side file holds at most ``max_spill`` bytes (a longer line is hashed to its end
but kept nowhere: its :class:`RawLine` has ``code`` ``INGEST_SPILL_CAP``), and one input is read to at most
``max_input`` decompressed bytes, a compressed one to at most ``RATIO`` times its size on disk plus
``FLOOR`` (a decompression bomb): past that the file ends with one fault line of code ``INGEST_INPUT_CAP``.

Reading is not writing: an error writing a side file (a full disk) is raised as :class:`OutputError`, never
taken for a broken input file.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".ndjson")
MAX_LINE = 4 << 20  # 4 MiB: a hand record is a few KiB
PARTIAL = ".partial-"  # prefix of a spill file still being written
BOM = b"\xef\xbb\xbf"  # UTF-8 byte order mark
MAX_SPILL = 256 << 20  # bytes one side file may hold: a longer line is hashed, not kept
MAX_INPUT = 64 << 30  # decompressed bytes one input may reach
RATIO, FLOOR = 200, 1 << 30  # a compressed input: at most RATIO x its size on disk + FLOOR decompressed
BLANK = b" \t\r"  # JSON whitespace (the LF is the line break)


class OutputError(OSError):
    """Writing failed (a full disk, say) while reading: the warehouse's fault, not the input's."""


class RawLine:
    """One input line without its line break (``data``), or a spilled long line, or a read fault.

    Immutable, and compared by its fields. ``sha256`` of a line read whole is worked out when first asked for,
    from ``data`` (``RawLine.of`` does not hash): ingest's committing process reads every line but needs the
    digest only of a line it compares with stored records, or of a conflicting one; the workers hash the
    lines they validate. A line that crosses processes (pickle) carries its digest if it has one."""

    __slots__ = ("_sha256", "code", "data", "fault", "size", "source_file", "source_line", "spill", "too_long")
    source_file: str
    source_line: int  # 1-based; for a fault, the line after the last one read (0: the file would not open)
    data: bytes
    size: int
    _sha256: str | None  # None: not worked out yet (a line read whole: from data)
    spill: str | None  # side file (relative to spill_dir) holding a line too long to keep in memory
    fault: str | None
    too_long: bool  # longer than max_line: data is empty, size and sha256 are the whole line's
    code: str | None  # the reject code a bound of the reader gives the line (INGEST_*_CAP), if any

    def __init__(
        self,
        source_file: str,
        source_line: int,
        data: bytes,
        size: int,
        sha256: str | None = None,
        spill: str | None = None,
        fault: str | None = None,
        too_long: bool = False,
        code: str | None = None,
    ) -> None:
        if sha256 is None and (too_long or size != len(data)):
            raise ValueError("the sha256 of a line not held whole must be given")
        put = object.__setattr__  # immutable: __setattr__ refuses
        put(self, "source_file", source_file)
        put(self, "source_line", source_line)
        put(self, "data", data)
        put(self, "size", size)
        put(self, "_sha256", sha256)
        put(self, "spill", spill)
        put(self, "fault", fault)
        put(self, "too_long", too_long)
        put(self, "code", code)

    @classmethod
    def of(cls, source_file: str, source_line: int, data: bytes) -> RawLine:
        return cls(source_file, source_line, data, len(data))

    @classmethod
    def failed(cls, source_file: str, source_line: int, fault: str, code: str | None = None) -> RawLine:
        return cls(source_file, source_line, b"", 0, _EMPTY_SHA, fault=fault, code=code)

    @property
    def sha256(self) -> str:
        """Hex sha256 of the whole line's bytes."""
        digest = self._sha256
        if digest is None:
            digest = hashlib.sha256(self.data).hexdigest()
            object.__setattr__(self, "_sha256", digest)
        return digest

    @property
    def blank(self) -> bool:
        return self.fault is None and not self.too_long and not self.data.strip(BLANK)

    def with_spill(self, spill: str) -> RawLine:
        """The same line, its side file named ``spill``."""
        fields = self._fields()
        return RawLine(*fields[:5], spill, *fields[6:])

    def _fields(self) -> tuple[str, int, bytes, int, str | None, str | None, str | None, bool, str | None]:
        return (
            self.source_file,
            self.source_line,
            self.data,
            self.size,
            self._sha256,
            self.spill,
            self.fault,
            self.too_long,
            self.code,
        )

    def _key(self) -> tuple[object, ...]:
        return (*self._fields()[:4], self.sha256, *self._fields()[5:])

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"RawLine is immutable: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"RawLine is immutable: cannot delete {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RawLine):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        names = ("source_file", "source_line", "data", "size", "sha256", "spill", "fault", "too_long", "code")
        return f"RawLine({', '.join(f'{n}={v!r}' for n, v in zip(names, self._key(), strict=True))})"

    def __reduce__(self) -> tuple[type[RawLine], tuple[object, ...]]:
        return RawLine, self._fields()  # the digest as it is: a line not hashed yet is hashed where it is asked


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


def open_input(path: str) -> tuple[BinaryIO, BinaryIO | None]:
    """The decompressed stream of ``path`` (``.gz``, ``.zst`` or plain; ``-`` for stdin) and the raw file under it
    (for progress in on-disk bytes)."""
    if path == "-":
        return sys.stdin.buffer, None
    raw = open(path, "rb")  # noqa: SIM115 - closed with the stream
    if path.endswith(".gz"):
        return io.BufferedReader(_Pieces(gzip.GzipFile(fileobj=raw)), buffer_size=1 << 20), raw
    if path.endswith(".zst"):
        return io.BufferedReader(_ZstdReader(raw), buffer_size=1 << 20), raw
    return raw, raw


class _Pieces(io.RawIOBase):
    """A ``GzipFile`` read a large piece at a time, each as it comes (``read1``): its own ``readline`` refills
    8 KiB at a time, through four Python calls each (the bench's 20k corpus, 110 MB, read line by line in
    0.22 CPU s that way, 0.16 so). A piece is what the stream gave before it broke: a truncated or corrupt
    file raises only once every byte before the break is out, as a ``GzipFile`` read line by line does."""

    def __init__(self, stream: gzip.GzipFile) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        piece = self._stream.read1(len(buffer))
        n = len(piece)
        buffer[:n] = piece
        return n

    def close(self) -> None:
        self._stream.close()
        super().close()


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
    max_spill: int | None = None,
    max_input: int | None = None,
) -> Iterator[RawLine]:
    """Every line of every file, in order. ``on_bytes`` hears how many on-disk bytes were consumed.
    ``max_spill``, ``max_input``: the bounds (default :data:`MAX_SPILL`, :data:`MAX_INPUT`, read when called)."""
    max_spill = MAX_SPILL if max_spill is None else max_spill
    max_input = MAX_INPUT if max_input is None else max_input
    for path in find_files(paths):
        number = 0
        try:
            stream, raw = open_input(path)
        except OSError as exc:
            yield RawLine.failed(path, 0, f"cannot open {path}: {exc.strerror or exc}")
            continue
        limit = max_input
        if raw is not None and path.endswith((".gz", ".zst")):
            with contextlib.suppress(OSError, AttributeError, ValueError):  # not a real file
                limit = min(limit, RATIO * os.fstat(raw.fileno()).st_size + FLOOR)
        position = 0
        decompressed = 0
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
                    line = _spill(path, number, chunk, reader, spill_dir, max_line, max_spill, limit - decompressed)
                    decompressed += line.size + 1
                else:
                    line = RawLine.of(path, number, chunk.rstrip(b"\r\n"))
                    decompressed += len(chunk)
                if decompressed > limit:
                    why = (
                        f"{path}: more than {limit} bytes decompressed by line {number} (a decompression bomb?): "
                        "the rest of the file is not read"
                    )
                    yield RawLine.failed(path, number, why, code="INGEST_INPUT_CAP")
                    break
                yield line
                if on_bytes is not None and raw is not None:
                    now = raw.tell()  # a compressed file's moves a piece at a time: heard when it moves
                    if now != position:
                        on_bytes(now - position)
                        position = now
        except OutputError:
            raise
        except (OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
            why = f"{path}: stream broken after line {number}: {type(exc).__name__}: {exc}"
            yield RawLine.failed(path, number + 1, why)
        finally:
            if path != "-":
                stream.close()
                if raw is not None:
                    raw.close()  # GzipFile leaves the file it was given open


def _spill(
    path: str,
    number: int,
    head: bytes,
    reader: BinaryIO,
    spill_dir: str | Path | None,
    max_line: int,
    max_spill: int = MAX_SPILL,
    budget: int | None = None,
) -> RawLine:
    """Stream an over-long line (``head``, ``max_line + 1`` bytes, is its first part) to a side file, or just
    hash it without ``spill_dir``; never hold it whole. The side file is named by the line's sha256, written
    durably (fsync) before it gets that name. A line longer than ``max_spill`` keeps no side file (its
    ``code`` says so); reading stops once the line passes ``budget`` bytes (what the input may still reach).

    ``head`` may end in the CR of a CRLF break: a line that turns out to fit once its break is taken off
    comes back as an ordinary line."""
    digest = hashlib.sha256()
    size = 0
    target: Path | None = None
    fd: int | None = None
    if spill_dir is not None:
        try:
            Path(spill_dir).mkdir(parents=True, exist_ok=True)
            target = Path(spill_dir) / f"{PARTIAL}{os.getpid()}-{number}"
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError as exc:
            raise _output_error(exc, target or Path(spill_dir)) from exc
    held = b""  # trailing CRs of the last piece: part of the line break if the line ends right after them

    def emit(body: bytes) -> None:
        nonlocal size, fd
        digest.update(body)
        size += len(body)
        if fd is not None and size > max_spill:  # too long to keep: hash the rest only
            os.close(fd)
            fd = None
            assert target is not None
            target.unlink()
        if fd is not None:
            assert target is not None
            try:
                view = memoryview(body)
                while view:
                    view = view[os.write(fd, view) :]
            except OSError as exc:
                raise _output_error(exc, target) from exc

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
            if budget is not None and size > budget:
                break  # the input's cap is passed: the caller ends the file here
            piece = reader.readline(1 << 20)
        if fd is not None:
            assert target is not None
            try:
                os.fsync(fd)
            except OSError as exc:
                raise _output_error(exc, target) from exc
    except BaseException:
        if target is not None:
            if fd is not None:
                os.close(fd)
                fd = None
            target.unlink(missing_ok=True)
        raise
    finally:
        if fd is not None:
            os.close(fd)
    if size <= max_line:  # all of it is in head: the bytes past max_line were the line break
        if target is not None:
            target.unlink(missing_ok=True)
        return RawLine.of(path, number, head[:size])
    sha = digest.hexdigest()
    if budget is not None and size > budget:  # cut short: the caller ends the file with INGEST_INPUT_CAP
        if target is not None:
            target.unlink(missing_ok=True)
        return RawLine(path, number, b"", size, sha, too_long=True, code="INGEST_INPUT_CAP")
    if size > max_spill:
        return RawLine(path, number, b"", size, sha, too_long=True, code="INGEST_SPILL_CAP")
    name = None
    if target is not None:
        name = f"{sha}.line"
        try:
            os.replace(target, target.with_name(name))
            fsync_dir(target.parent)
        except OSError as exc:
            raise _output_error(exc, target) from exc
    return RawLine(path, number, b"", size, sha, spill=name, too_long=True)


def _output_error(exc: OSError, where: Path) -> OutputError:
    return OutputError(exc.errno, exc.strerror or str(exc), str(exc.filename or where))


def fsync_dir(folder: str | Path) -> None:
    """Make the names in ``folder`` (files renamed or created in it) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
