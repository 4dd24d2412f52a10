"""A process's own peak memory, for the tests that run a command in a child and bound what it needed.

``resource.getrusage(RUSAGE_SELF).ru_maxrss`` is the wrong figure in a child of this suite: Linux carries a
process's high-water mark across ``execve`` (and a child made by vfork/fork starts from its parent's), so a
child of a pytest worker that had grown to 700 MiB reported 701 MiB for an ingest that needed 320, and a test
comparing two such children could pass for no reason (both read the worker's figure). ``VmHWM`` in
``/proc/self/status`` belongs to the process's own memory map, which ``execve`` makes new: it is the command's
peak alone. Both are read in the child, as source text (:data:`OWN_PEAK_KIB`) put before its script.
"""

from __future__ import annotations

OWN_PEAK_KIB = '''
def own_peak_kib() -> int:
    """This process's peak resident memory since it started (KiB; Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")
'''
