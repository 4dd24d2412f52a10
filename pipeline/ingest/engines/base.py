"""What an ingest run asks of an engine: the lines of the input files validated into tables, chunk by chunk,
in input order. :func:`pipeline.ingest.run.ingest` picks one by name (``local``: a process pool, ``spark``) and
commits what it yields; how the work is spread is the engine's business.

An engine is used as a context manager around one run: the Spark engine starts its session on entry and stops
it on exit; the local engine starts its pool when the first chunk is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any, Protocol, Self

import pyarrow as pa

from pipeline.ingest.read import RawLine
from pipeline.ingest.work import EncodedRows, RecordKey

# A processed chunk: its tables (``process_lines``'s, the large ones possibly already encoded as Parquet by
# a worker) and the key of each record in it.
Result = tuple[dict[str, pa.Table | EncodedRows], list[RecordKey]]


class Engine(Protocol):
    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...

    @property
    def parallelism(self) -> int:
        """How many chunks are validated at once (inside ``with engine``), for the run's record."""
        ...

    def run(
        self,
        paths: Sequence[str],
        run_id: str,
        *,
        stored: set[str],
        spill_dir: str | Path,
        chunk_size: int,
        profile: dict[str, Any] | None = None,
        on_skipped: Callable[[int], None] | None = None,
        on_bytes: Callable[[int], None] | None = None,
    ) -> Generator[tuple[Sequence[RawLine], Result]]:
        """Read and validate ``paths`` (files, absolute); yield ``(chunk lines, (tables, keys))`` in input order,
        the chunks cut by :func:`pipeline.ingest.chunks.chunks`. ``stored``: sha256 of the records stored before
        the run (such lines are only counted, through ``on_skipped``; the set does not change during the run);
        ``on_bytes`` hears the on-disk bytes read.

        The inputs may be checked at once (a ``ValueError`` before anything starts); the work starts when the
        first chunk is asked for, inside ``with engine``."""
        ...
