"""The local engine: a pool of worker processes running :func:`pipeline.ingest.work.process_lines` on chunks,
results back in input order, with a bounded number of chunks in flight so memory stays flat.

Workers die with the process that started them: after a ``kill -9`` of ``xuezhan ingest`` they would
otherwise wait forever for work on a queue nobody writes to any more.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import pyarrow as pa

from pipeline.ingest.read import RawLine
from pipeline.ingest.work import EncodedRows, RecordKey, encoded, process_lines

Result = tuple[dict[str, pa.Table | EncodedRows], list[RecordKey]]
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _work(lines: list[RawLine], run_id: str, profile: dict[str, Any] | None) -> Result:
    rows = process_lines(lines, run_id, profile=profile)
    return encoded(rows.tables()), rows.keys  # Parquet made here, in parallel, not by the committing process


def _die_with(parent: int) -> None:
    """Worker initializer: exit when ``parent`` is gone (Linux: at once, by a signal; elsewhere: polled)."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            armed = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) == 0
        except (OSError, AttributeError):  # pragma: no cover - no prctl in this libc
            armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:  # pragma: no cover - not Linux

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def run_chunks(
    chunks: Iterable[list[RawLine]], run_id: str, *, workers: int, profile: dict[str, Any] | None = None
) -> Iterator[tuple[list[RawLine], Result]]:
    """Process chunks on ``workers`` processes; yield ``(chunk, result)`` in input order."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_die_with, initargs=(os.getpid(),)
    ) as pool:
        pending: deque[tuple[list[RawLine], Future[Result]]] = deque()
        for chunk in chunks:
            pending.append((chunk, pool.submit(_work, chunk, run_id, profile)))
            if len(pending) >= 2 * workers:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()
