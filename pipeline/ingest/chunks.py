"""Lines into chunks, the unit of work of every ingest engine, cut the same way by all of them.

:func:`read_chunks` reads files (:func:`pipeline.ingest.read.read_lines`), names spilled lines relative to the
warehouse and cuts the non-blank lines into chunks; a line whose bytes are a record stored before the run began
is not sent to be validated again but counted as a duplicate (``on_skipped``). The local engine cuts its whole
input this way, the Spark engine each file in its own task: the same chunks, so the same warehouse.

Only that comparison needs a line's sha256 here: into a warehouse that holds no record yet, no line is hashed
while the chunks are cut (:class:`~pipeline.ingest.read.RawLine` hashes when asked), so the process that reads
the input, ingest's committing process in the local engine, leaves the hashing to the workers. A line that
repeats a record stored earlier in the same run is validated again and counted as a duplicate by the commit
(:func:`pipeline.ingest.run._commit`): the counts and tables are the same as if it had been skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pipeline.ingest.read import RawLine, read_lines
from pipeline.ingest.warehouse import SPILL

CHUNK = 500  # lines per chunk, unless the run asks for another size
CHUNK_BYTES = 8 << 20  # line bytes per chunk: a chunk ends at CHUNK lines or once it holds this many bytes


def chunks(
    lines: Iterable[RawLine],
    size: int,
    stored: set[str],
    on_skipped: Callable[[int], None],
    max_bytes: int | None = None,
) -> Iterator[list[RawLine]]:
    """Non-blank lines in chunks of ``size`` lines, cut sooner once a chunk holds ``max_bytes`` bytes of lines
    (lines of up to :data:`~pipeline.ingest.read.MAX_LINE` bytes, so a chunk holds at most
    ``max_bytes + MAX_LINE``, whatever the input: memory does not grow with the lines' length). A line whose
    bytes are a stored record's (``stored``: their sha256, as the run began) is reported to ``on_skipped`` (one
    line at a time) and not put in a chunk: after a crash, or on a second run over the same input, only what is
    new gets validated again. With nothing stored, no line is hashed."""
    limit = CHUNK_BYTES if max_bytes is None else max_bytes  # read when called: a test may lower it
    chunk: list[RawLine] = []
    held = 0
    for line in lines:
        if line.blank:
            continue
        if stored and line.fault is None and not line.too_long and line.sha256 in stored:
            on_skipped(1)
            continue
        chunk.append(line)
        held += len(line.data)
        if len(chunk) >= size or held >= limit:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def in_warehouse(lines: Iterable[RawLine], folder: str = SPILL) -> Iterator[RawLine]:
    """Spill file names relative to the warehouse (``spill/<sha256>.line``), as ``rejects.raw_path`` says."""
    for line in lines:
        yield line.with_spill(f"{folder}/{line.spill}") if line.spill is not None else line


def read_chunks(
    paths: Iterable[str],
    *,
    spill_dir: str | Path,
    size: int,
    stored: set[str],
    on_skipped: Callable[[int], None],
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[list[RawLine]]:
    """The lines of ``paths`` (huge ones spilled to ``spill_dir``, the warehouse's spill folder) in chunks of
    ``size``, the stored ones skipped (:func:`chunks`); ``on_bytes`` hears the on-disk bytes read."""
    lines = read_lines(paths, spill_dir=spill_dir, on_bytes=on_bytes)
    return chunks(in_warehouse(lines), size, stored, on_skipped)
