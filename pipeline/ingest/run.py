"""Ingest: files → lines → workers (validate → Arrow) → deduplicate → Parquet batches → DuckDB catalogue.

Nothing is lost: every non-blank line ends up either as a stored record (valid or flagged, with its issues)
or as a row in ``rejects`` with a code and a reason, or is counted as a duplicate of a record already
stored (the same ``hand_id`` with the same bytes). The counts reconcile and are stored in ``ingest_runs``::

    lines_read == records_stored + rejects + duplicates

The same ``hand_id`` with other content is a conflict: the new line goes to ``rejects`` (code
``INGEST_CONFLICT``), the stored record stays. Running the same input again stores nothing new.

A run is recorded in ``ingest_runs`` when it starts (no ``finished_at``) and again when it ends; each batch
is committed with its counts (:mod:`pipeline.ingest.warehouse`), so a run that stops early, however it stops,
leaves a warehouse that reconciles, and readers warn that its last run is incomplete. A run interrupted by
Ctrl-C or SIGTERM removes its temporaries and raises :class:`IngestInterrupted`; one that cannot write (a
full disk) does the same and raises :class:`IngestFailed`: both are ``OSError``, one line for the command.

The work is an engine's (:class:`~pipeline.ingest.engines.base.Engine`, picked by name from :data:`ENGINES`):
it cuts the input into chunks (:mod:`pipeline.ingest.chunks`) and validates them; this module commits what it
yields, in input order, whichever engine it is.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.ingest.chunks import CHUNK
from pipeline.ingest.engines.base import Engine
from pipeline.ingest.engines.local import LocalEngine
from pipeline.ingest.engines.spark import SparkEngine
from pipeline.ingest.read import RawLine
from pipeline.ingest.warehouse import COUNTS, Encoded, Warehouse
from pipeline.ingest.work import RECORD_TABLES, EncodedRows, RecordKey, Rows, reject_row

# --engine NAME → the engine of a run, from the run's worker count and the engine's options (the local engine
# has none: a Spark --master means nothing to it)
ENGINES: dict[str, Callable[[int, dict[str, Any]], Engine]] = {
    "local": lambda workers, _options: LocalEngine(workers),
    "spark": lambda _workers, options: SparkEngine(**options),
}


@dataclass
class IngestStats:
    run_id: str
    lines_read: int = 0
    records_stored: int = 0
    records_invalid: int = 0
    rejects: int = 0
    duplicates: int = 0
    conflicts: int = 0
    seconds: float = 0.0
    compacted: int = 0  # batches folded into one file per table at the end of the run
    rejects_by_code: dict[str, int] = field(default_factory=dict)

    @property
    def reconciled(self) -> bool:
        return self.lines_read == self.records_stored + self.rejects + self.duplicates

    def text(self) -> str:
        rate = self.lines_read / self.seconds if self.seconds else 0.0
        lines = [
            f"lines read {self.lines_read} = stored {self.records_stored} (invalid {self.records_invalid}) "
            f"+ rejects {self.rejects} (conflicts {self.conflicts}) + duplicates {self.duplicates}"
            f"{'' if self.reconciled else '   *** DOES NOT RECONCILE ***'}",
            f"{self.seconds:.1f} s, {rate:.0f} lines/s, run {self.run_id}",
        ]
        if self.rejects_by_code:
            lines.append("rejects by code: " + ", ".join(f"{c} {n}" for c, n in sorted(self.rejects_by_code.items())))
        if self.compacted:
            lines.append(f"compacted {self.compacted} batches into one file per table")
        return "\n".join(lines)


class IngestInterrupted(InterruptedError):
    """The run was interrupted (Ctrl-C, SIGTERM): what it committed stays, and running it again completes it."""


class IngestFailed(OSError):
    """The run could not write (a full disk): what it committed stays (reconciled), its temporaries are
    removed, and running it again once the cause is fixed completes it. ``filename``: where writing failed."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the run like Ctrl-C."""


@contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` while the run lasts (in the main thread only: signals go there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(_signum: int, _frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def ingest(
    paths: list[str],
    warehouse_dir: str | Path,
    *,
    workers: int | None = None,
    engine: str = "local",
    profile: dict[str, Any] | None = None,
    chunk_size: int = CHUNK,
    on_lines: Callable[[int], None] | None = None,
    on_bytes: Callable[[int], None] | None = None,
    engine_options: dict[str, Any] | None = None,
) -> IngestStats:
    """Ingest ``paths`` into the warehouse at ``warehouse_dir``; return the run's counts.

    Raises :class:`~pipeline.ingest.warehouse.WarehouseBusy` when another process is ingesting into it,
    :class:`IngestInterrupted` on Ctrl-C or SIGTERM and :class:`IngestFailed` when it cannot write; after
    either, the warehouse holds the batches committed before (reconciled) and nothing else."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} ({' or '.join(ENGINES)})")
    wh = Warehouse(warehouse_dir)
    with _terminable():
        try:
            wh.open()
            return _ingest(
                wh,
                paths,
                workers=workers or os.cpu_count() or 1,
                engine=engine,
                profile=profile,
                chunk_size=chunk_size,
                on_lines=on_lines,
                on_bytes=on_bytes,
                engine_options=engine_options,
            )
        except KeyboardInterrupt:
            _tidy(wh)
            raise IngestInterrupted(errno.EINTR, "interrupted; run again to complete") from None
        except OSError as exc:
            _tidy(wh)
            if isinstance(exc, IngestFailed):
                raise
            where = exc.filename if exc.filename is not None else wh.root
            why = exc.strerror or str(exc)
            raise IngestFailed(
                exc.errno, f"{why} (the batches committed before are kept; run again once fixed)", str(where)
            ) from exc
        finally:
            wh.close()


def _tidy(wh: Warehouse) -> None:
    """After a run stopped early: remove its temporaries (best effort: the disk may still be full)."""
    try:
        if wh.tmp.exists():
            wh.clean()
    except OSError:
        pass


def _ingest(
    wh: Warehouse,
    paths: list[str],
    *,
    workers: int,
    engine: str,
    profile: dict[str, Any] | None,
    chunk_size: int,
    on_lines: Callable[[int], None] | None,
    on_bytes: Callable[[int], None] | None,
    engine_options: dict[str, Any] | None,
) -> IngestStats:
    started = datetime.now(UTC)
    clock = time.perf_counter()
    run_id = started.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    stats = IngestStats(run_id)
    known = wh.known_hands()
    stored = set(known.values())
    known_rejects = wh.known_rejects()
    absolute = [p if p == "-" else str(Path(p).resolve()) for p in paths]
    accounted: dict[str, int] = {}

    def row(finished: datetime | None) -> dict[str, object]:
        return {
            "run_id": run_id,
            "started_at": started,
            "finished_at": finished,
            "inputs": list(paths),
            "engine": engine,
            "workers": workers,
            **{c: getattr(stats, c) for c in COUNTS},
            "seconds": stats.seconds,
            "version": _version(),
        }

    def skipped(n: int) -> None:  # lines the engine did not validate: their bytes are a stored record's
        stats.lines_read += n
        stats.duplicates += n

    with ExitStack() as stack:
        worker = ENGINES[engine](workers, engine_options or {})
        results = worker.run(
            absolute,
            run_id,
            stored=stored,  # as the run begins: a record that comes again after its commit is the commit's duplicate
            spill_dir=wh.spill,
            chunk_size=chunk_size,
            profile=profile,
            on_skipped=skipped,
            on_bytes=on_bytes,
        )  # checks the inputs
        wh.write_run(run_id, row(None))  # the run marker: the warehouse is incomplete until the run ends
        stack.enter_context(worker)  # Spark: starts the session; stopped when the run ends, however it ends
        stack.enter_context(closing(results))  # closed before the session stops, should a commit fail
        workers = worker.parallelism
        for seq, (chunk, (tables, keys)) in enumerate(results, start=1):
            batch = f"{run_id}-{seq:06d}"
            _commit(wh, batch, chunk, tables, keys, known, known_rejects, stats, run_id, accounted)
            if on_lines is not None:
                on_lines(len(chunk))
    stats.seconds = time.perf_counter() - clock
    assert stats.reconciled, stats.text()
    wh.write_run(run_id, row(datetime.now(UTC)))
    # The run is complete; its many small batch files make every later query slow (each file is opened and
    # its footer read): fold them into one file per table (its own commit, crash-safe like a batch), on as many
    # threads as the run had workers.
    stats.compacted = wh.compact_if_many(threads=workers)
    return stats


def _commit(
    wh: Warehouse,
    batch: str,
    chunk: Sequence[RawLine],
    tables: dict[str, pa.Table | EncodedRows],
    keys: list[RecordKey],
    known: dict[str, str],
    known_rejects: set[tuple[str, int, str]],
    stats: IngestStats,
    run_id: str,
    accounted: dict[str, int],
) -> None:
    """Deduplicate one processed chunk against the warehouse and write it as one batch, with the lines it
    accounts for (its own, and those skipped as stored records since the last batch): ``accounted`` holds the
    run's counts as of its last committed batch."""
    stats.lines_read += len(chunk)
    keep = []
    conflicts: Rows | None = None  # made for the first conflict: most chunks have none
    for rec, key in enumerate(keys):
        stored = known.get(key.hand_id)
        if stored is None:
            known[key.hand_id] = key.sha256
            keep.append(rec)
        elif stored == key.sha256:
            stats.duplicates += 1
        else:
            line = chunk[key.position]
            if conflicts is None:
                conflicts = Rows()
            reject_row(
                conflicts,
                line,
                "INGEST_CONFLICT",
                f"hand_id {key.hand_id!r} is already stored with other content (sha256 {stored[:12]}…)",
                run_id,
                hand_id=key.hand_id,
            )
    out: dict[str, pa.Table | Encoded] = {}
    kept = pa.array(keep, pa.int32())
    for name in RECORD_TABLES:
        given = tables[name]
        if isinstance(given, EncodedRows):
            if len(keep) == len(keys):
                out[name] = given.stored  # every record kept: the file as the worker made it
                continue
            given = given.table()
        table = given
        if len(keep) != len(keys):
            table = table.filter(pc.is_in(table["_rec"], value_set=kept))
        out[name] = table.drop_columns(["_rec"])
    given_rejects = tables["rejects"]
    assert isinstance(given_rejects, pa.Table)
    hands = out["hands"]
    given_hands = tables["hands"]
    if isinstance(hands, Encoded):  # every record kept, as the worker encoded them: it counted the invalid ones
        assert isinstance(given_hands, EncodedRows)
        invalid = given_hands.invalid
    else:
        invalid = hands.num_rows - pc.sum(hands["valid"]).as_py() if hands.num_rows else 0
    rejects = given_rejects if conflicts is None else pa.concat_tables([given_rejects, conflicts.tables()["rejects"]])
    fresh = []
    for i, (f, n, s) in enumerate(
        zip(
            rejects["source_file"].to_pylist(),
            rejects["source_line"].to_pylist(),
            rejects["sha256"].to_pylist(),
            strict=True,
        )
    ):
        if (f, n, s) in known_rejects:
            stats.duplicates += 1  # this very line was rejected by an earlier run
        else:
            known_rejects.add((f, n, s))
            fresh.append(i)
    if len(fresh) != rejects.num_rows:
        rejects = rejects.take(pa.array(fresh, pa.int64()))
    out["rejects"] = rejects
    for code in rejects["code"].to_pylist():
        stats.rejects_by_code[code] = stats.rejects_by_code.get(code, 0) + 1
        stats.conflicts += code == "INGEST_CONFLICT"
    stats.rejects += rejects.num_rows
    stats.records_stored += hands.num_rows
    stats.records_invalid += invalid
    counts = {c: getattr(stats, c) - accounted.get(c, 0) for c in COUNTS}
    wh.write_batch(batch, out, {"run_id": run_id, **counts})
    accounted.update({c: getattr(stats, c) for c in COUNTS})


def _version() -> str:
    try:
        return version("xuezhan")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "unknown"
