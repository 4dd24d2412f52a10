"""How the process gives back the memory it frees: what keeps the analytics' peak flat as the warehouse grows.

Three allocators share an analytics process: the C library's (Python objects, NumPy), Polars' own jemalloc
and DuckDB's. Each keeps what is freed for reuse unless told otherwise, and what one keeps the next page of a
report cannot use: the peaks of the later pages would rise with the size of the warehouse, not because they hold
more, but because the earlier ones have not given theirs back.

- :func:`return_freed_memory`: glibc's threshold for mapping a block by itself, fixed (the collusion screen's
  runs, the victims view);
- :func:`polars_returns_freed_memory`: Polars' jemalloc purges at once what it frees (the command line sets it
  before Polars is loaded).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20  # bytes: a larger block is mapped for itself and unmapped when freed

# Polars' jemalloc reads its options from this variable when Polars is imported: Polars writes its own
# ("dirty_decay_ms:500,muzzy_decay_ms:1000": freed pages kept for reuse up to half a second, then handed back
# lazily) with what the variable held appended, which wins. The report's pages come one after the other, each
# freeing its frames as the next builds its own: with Polars' timing they overlapped in resident memory. 0 and
# 0: freed pages go back at once. On the report of 200k hands: peak 537-543 -> 493-513 MB, about 0.5 s more
# of 28 s; on 20k hands no change (455-488 MB either way).
POLARS_MALLOC_ENV = "_RJEM_MALLOC_CONF"
POLARS_MALLOC_CONF = "dirty_decay_ms:0,muzzy_decay_ms:0"


def return_freed_memory() -> None:
    """Fix the C allocator's threshold for mapping a block by itself at :data:`MMAP_THRESHOLD` (glibc; elsewhere
    nothing happens), trim the heap above twice that, and trim it now, for the rest of the process.

    glibc's threshold moves: each time a large mapped block is freed it rises to that block's size (up to
    32 MB), and the runs' arrays (tens of MB, of sizes that vary from run to run) then came from a heap that
    fragmented and kept what it held: the screen's peak grew with the number of runs (the first pass over the
    20 runs of 200k hands: 715 MB after 2 runs, 812 MB after 20). A fixed threshold keeps it flat. It was
    fixed at 128 KiB at first, which mapped every array above that afresh: each first touch of a page is a
    page fault, 3.9 million of them on 200k hands, a third of the screen's time (9 of 26 s, system time).
    At 32 MB the blocks of one run's size are reused from the heap: 0.2 million faults, 19.6 s, and the peak
    is still flat (469 MB on the 20k hands, 527 MB on the 200k)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):  # not glibc (macOS: no mallopt; Windows: no
        # CDLL(None)): nothing to do
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        libc.mallopt(_M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD)
        libc.malloc_trim(0)


def polars_returns_freed_memory() -> bool:
    """Have Polars' allocator give back what it frees at once (:data:`POLARS_MALLOC_CONF`), unless the
    environment already says how (:data:`POLARS_MALLOC_ENV`: the user's choice stands). Only a process that has
    not loaded Polars yet can be told; returns whether this one could (False once ``polars`` is imported)."""
    if "polars" in sys.modules:
        return False
    os.environ.setdefault(POLARS_MALLOC_ENV, POLARS_MALLOC_CONF)
    return True
