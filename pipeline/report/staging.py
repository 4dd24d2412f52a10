"""A report's folder written whole or not at all: the pages are written into a staging folder beside it and
moved in once every one is written, so that Ctrl-C in ``report`` never leaves a folder of half-written pages,
some of this run and some of the last, that reads as one report."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.signals import signals_held

STAGE_PREFIX = ".xuezhan-partial-"  # a staging folder's name starts so (beside the output folder)


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """A new empty folder beside ``out`` to write into. When the block ends, each file written there replaces its
    namesake in ``out`` (created when missing; other files of ``out`` are left as they are), with Ctrl-C and
    SIGTERM held back while the files move; then the staging folder is removed. When the block raises (an
    error, Ctrl-C), only the staging folder is removed: ``out`` is as it was.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with staged_folder(root / "out") as stage:
    ...     _ = (stage / "index.html").write_text("new")
    ...     (root / "out").exists()
    False
    >>> (root / "out" / "index.html").read_text(), [p.name for p in root.iterdir()]
    ('new', ['out'])
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=out.parent))
    try:
        yield stage
        with signals_held():
            out.mkdir(exist_ok=True)
            for path in sorted(stage.rglob("*")):  # a folder before what it holds
                target = out / path.relative_to(stage)
                if path.is_dir():
                    target.mkdir(exist_ok=True)
                else:
                    os.replace(path, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
