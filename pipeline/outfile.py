"""A records file written compressed by its name's suffix: the one home of the choice for every command that
writes records (``simulate``, ``import``, ``export``).

``.gz``: gzip with no name and modification time 0 in its header, so the same lines give the same bytes on every
run; ``.zst``: zstd at level 6; anything else: as is.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any


@contextmanager
def compressed(raw: IO[bytes], name: str) -> Iterator[Any]:
    """A binary stream over ``raw`` (an open file) compressing what is written to it by ``name``'s suffix; its
    compressed stream is closed (its end written) on leaving, ``raw`` left open."""
    if name.endswith(".gz"):
        stream: Any = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
    elif name.endswith(".zst"):
        import zstandard

        stream = zstandard.ZstdCompressor(level=6).stream_writer(raw, closefd=False)
    else:
        yield raw
        return
    try:
        yield stream
    finally:
        if not stream.closed:
            stream.close()
