"""Read record files: paths and folders of ``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst`` (or ``-`` for stdin),
streamed line by line as bytes, so memory does not grow with the input.

Every physical line comes out with its file and line number. A broken compressed stream ends its file
with one :class:`ReadFault` instead of stopping the batch.
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json", ".ndjson")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of input, without its line break."""

    path: str
    number: int  # 1-based
    data: bytes


@dataclass(frozen=True, slots=True)
class ReadFault:
    """A file that could not be read to its end (missing, truncated or corrupt compression)."""

    path: str
    number: int  # the last line read before the fault (0 when none)
    message: str


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


def _open(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    raw = open(path, "rb")  # noqa: SIM115 - closed by the caller through the wrapper
    if path.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if path.endswith(".zst"):
        return zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)  # type: ignore[return-value]
    return raw


def read_lines(paths: Iterable[str]) -> Iterator[Line | ReadFault]:
    """Every line of every file, in order; a file that fails yields a :class:`ReadFault` and reading goes on."""
    for path in find_files(paths):
        number = 0
        try:
            handle = _open(path)
        except OSError as exc:
            yield ReadFault(path, 0, f"cannot open: {exc.strerror or exc}")
            continue
        try:
            reader = io.BufferedReader(handle, buffer_size=1 << 20) if path != "-" else handle  # type: ignore[arg-type]
            for raw in reader:
                number += 1
                yield Line(path, number, raw.rstrip(b"\r\n"))
        except (OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
            yield ReadFault(path, number, f"stream broken after line {number}: {type(exc).__name__}: {exc}")
        finally:
            if path != "-":
                handle.close()
