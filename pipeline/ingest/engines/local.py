"""The local engine: a pool of worker processes running :func:`pipeline.ingest.work.process_lines` on chunks,
results back in input order, with a bounded number of chunks in flight so memory stays flat. The chunks are
cut by :func:`pipeline.ingest.chunks.read_chunks` in this process, the committing one, which is therefore the
serial part of a run: it reads and decompresses the input and cuts it into lines, but hashes a line only to
compare it with the records stored before the run (none, into a new warehouse); the workers hash the lines
they validate and encode the tables as Parquet, so that what the committing process does per line stays small.

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
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from pipeline.ingest.chunks import read_chunks
from pipeline.ingest.engines.base import Result
from pipeline.ingest.read import RawLine
from pipeline.ingest.work import encoded, process_lines

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _work(lines: list[RawLine], run_id: str, profile: dict[str, Any] | None) -> Result:
    rows = process_lines(lines, run_id, profile=profile)
    return encoded(rows.tables()), rows.keys  # Parquet made here, in parallel, not by the committing process


def _die_with(parent: int) -> None:
    """Worker initializer: exit when ``parent`` is gone (Linux: at once, by a signal; elsewhere: polled).
    Ctrl-C and SIGTERM are the parent's to handle (a Ctrl-C reaches the whole process group): the worker
    ignores them and dies with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
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
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_die_with, initargs=(os.getpid(),))
    try:
        pending: deque[tuple[list[RawLine], Future[Result]]] = deque()
        for chunk in chunks:
            pending.append((chunk, pool.submit(_work, chunk, run_id, profile)))
            if len(pending) >= 2 * workers:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()
    finally:  # a run that stops early (interrupted, a full disk) does not wait for the chunks still queued
        pool.shutdown(wait=True, cancel_futures=True)


class LocalEngine:
    """The :class:`~pipeline.ingest.engines.base.Engine` of ``--engine local``: ``workers`` processes here."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    @property
    def parallelism(self) -> int:
        return self.workers

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
        """Cut ``paths`` into chunks here and validate them on the pool (see
        :meth:`~pipeline.ingest.engines.base.Engine.run`). ``stored``: as the run began (a record committed
        earlier in the run that comes again is validated again and counted as a duplicate by the commit, as the
        Spark engine's are)."""
        chunks = read_chunks(
            paths,
            spill_dir=spill_dir,
            size=chunk_size,
            stored=stored,
            on_skipped=on_skipped or (lambda _n: None),
            on_bytes=on_bytes,
        )
        yield from run_chunks(chunks, run_id, workers=self.workers, profile=profile)
