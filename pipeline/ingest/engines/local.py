"""The local engine: a pool of worker processes running :func:`pipeline.ingest.work.process_lines` on chunks,
results back in input order, with a bounded number of chunks in flight so memory stays flat."""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import pyarrow as pa

from pipeline.ingest.read import RawLine
from pipeline.ingest.work import RecordKey, process_lines

Result = tuple[dict[str, pa.Table], list[RecordKey]]


def _work(lines: list[RawLine], run_id: str, profile: dict[str, Any] | None) -> Result:
    rows = process_lines(lines, run_id, profile=profile)
    return rows.tables(), rows.keys


def run_chunks(
    chunks: Iterable[list[RawLine]], run_id: str, *, workers: int, profile: dict[str, Any] | None = None
) -> Iterator[tuple[list[RawLine], Result]]:
    """Process chunks on ``workers`` processes; yield ``(chunk, result)`` in input order."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[tuple[list[RawLine], Future[Result]]] = deque()
        for chunk in chunks:
            pending.append((chunk, pool.submit(_work, chunk, run_id, profile)))
            if len(pending) >= 2 * workers:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()
