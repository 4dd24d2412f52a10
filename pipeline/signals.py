"""Ctrl-C and SIGTERM held back while a step that must not be split runs: a warehouse's commit point and its
bookkeeping (:mod:`pipeline.ingest.warehouse`), a report's pages moved into place (:mod:`pipeline.report.staging`)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HELD = (signal.SIGINT, signal.SIGTERM)  # what a run turns into exceptions (Ctrl-C, SIGTERM)


@contextmanager
def signals_held() -> Iterator[None]:
    """Delay SIGINT and SIGTERM until the block ends: they are noted, then raised again as they came, so the
    handlers they had run then.

    A commit's rename and the note that it happened must not be split by an exception raised from a
    signal handler: the failure path would then remove the files of a batch the manifest names (the kill
    comes exactly there when a watcher reacts to the new manifest). Blocking the signals with a thread's
    mask is not enough: a signal sent to the process goes to any thread not blocking it (DuckDB's, Arrow's),
    and Python then runs the handler in the main thread all the same. Handlers can only be replaced from the
    main thread; elsewhere, and should anything slip through, the caller's failure path must check what is on
    disk."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def note(signum: int, _frame: object) -> None:
        caught.append(signum)

    previous = {held: signal.signal(held, note) for held in HELD}
    try:
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler if handler is not None else signal.SIG_DFL)
        for signum in caught:
            signal.raise_signal(signum)
