"""`xuezhan ingest --engine spark` (Spark in local mode, ``local[2]``) against the local engine on the same
inputs: the same rows in every table, the same rejects with the same codes, the same spilled lines, the same
reconciled counts, a second run over the same inputs plus a new file deduplicated alike, and a DuckDB
catalogue over the result. The adapter's parts (the Arrow envelope, how a task cuts a file into chunks and
validates a chunk) are checked without Spark, against the functions the local engine uses.

The Spark tests need pyspark (``pip install 'xuezhan[spark]'``) and Java 17+; they are skipped, with the
reason, only where one of them is missing.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from spark_support import spark_missing
from warehouse_compare import contents

from pipeline.ingest.chunks import read_chunks
from pipeline.ingest.engines.spark import (
    CHUNKS,
    OUT_TABLES,
    RESULTS,
    ChunkLines,
    _read_file,
    _validate,
    pack,
    pack_lines,
    unpack,
)
from pipeline.ingest.read import MAX_LINE, RawLine, read_lines
from pipeline.ingest.run import IngestStats, ingest
from pipeline.ingest.warehouse import SPILL
from pipeline.ingest.work import process_lines
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write
from schemas.tables import TABLES

COUNTS = ("lines_read", "records_stored", "records_invalid", "rejects", "duplicates", "conflicts")
CHUNK = 16  # small chunks: several per file, so both stages of the Spark plan have several partitions' work
SPARK = {"master": "local[2]", "conf": {"spark.ui.enabled": "false"}}


MISSING = spark_missing()
needs_spark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


# ---------------------------------------------------------------------------------------------- the inputs
@dataclass
class Inputs:
    """Run 1 (``first``): a simulated file, a folder holding a file of hand-made bad lines around good ones
    and a file cut off inside a zstd frame, and a missing file. Run 2 (``second``): the same again, then a
    file with a conflict with a stored record, a duplicate of one and one new record."""

    first: list[str]
    second: list[str]


def _edited(line: bytes, **change: object) -> bytes:
    return json.dumps({**json.loads(line), **change}, ensure_ascii=False).encode()


def make_inputs(folder: Path) -> Inputs:
    sim = folder / "sim.jsonl.gz"
    labels = write(SimConfig(hands=150, seed=11, inject=InjectSpec.parse("corrupt=0.1,score_errors=0.1")), sim)
    kinds = {f.kind for f in labels.faults}
    assert {"broken_json", "duplicated", "truncated"} <= kinds and any(k.startswith("score_") for k in kinds)
    faulty = {f.hand_id for f in labels.faults}
    clean = [
        line
        for line in gzip.decompress(sim.read_bytes()).splitlines()
        if line.endswith(b"}") and json.loads(line)["hand_id"] not in faulty
    ]
    a, b, c, d = clean[:4]
    more = folder / "more"
    more.mkdir()
    bad = [
        b'{"format": "xzlog/1", "hand_id": "cut',  # not JSON
        b'\xff\xfe{"hand_id": "\xc3\x28"}',  # not UTF-8
        b"",
        b"[" * 100_000 + b"]" * 100_000,  # nested far too deep
        _edited(a, format="xzlog/2", hand_id="bad-format"),
        _edited(a, dealer="east", hand_id="bad-type"),
        _edited(a, hand_no=2**40, hand_id="bad-range"),  # beyond the int32 column: the per-line fallback
        _edited(b, x_edited=True),  # the hand_id of a record earlier in the run, other bytes: a conflict
        c,  # the bytes of a record earlier in the run: a duplicate
        d + b"\r",  # the same, with a CRLF line break
        b" \t ",
        b"x" * (MAX_LINE + 10),  # too long to hold: spilled to the warehouse
        _edited(c, hand_id="fresh-1"),
        _edited(c, hand_id="fresh-1", x_edited=True),  # a conflict inside one file
    ]
    (more / "bad.jsonl").write_bytes(b"".join(line + b"\n" for line in bad))
    whole, cut = (
        zstandard.ZstdCompressor().compress(b"".join(_edited(c, hand_id=f"cut-{i}") + b"\n" for i in part))
        for part in (range(20), range(20, 40))
    )
    (more / "cut.jsonl.zst").write_bytes(whole + cut[: len(cut) // 2])  # 20 lines, then a frame cut short
    later = folder / "later.jsonl"
    later.write_bytes(b"".join(line + b"\n" for line in [_edited(a, x_edited=True), a, _edited(a, hand_id="new-1")]))
    first = [str(sim), str(more), str(folder / "missing.jsonl")]
    return Inputs(first, [*first, str(later)])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    return make_inputs(tmp_path_factory.mktemp("in"))


# ---------------------------------------------------------------------------------------------- the runs
@dataclass
class Runs:
    """One engine's two runs into one warehouse: counts, progress heard and the tables after run 1."""

    root: Path
    stats: list[IngestStats]
    after_first: dict[str, pa.Table]
    bytes_heard: int
    lines_heard: int


def tables(root: Path) -> dict[str, pa.Table]:
    return {name: contents(root, name) for name in TABLES if name != "ingest_runs"}


def run_twice(engine: str, inputs: Inputs, root: Path) -> Runs:
    heard = {"bytes": 0, "lines": 0}

    def on_bytes(n: int) -> None:
        heard["bytes"] += n

    def on_lines(n: int) -> None:
        heard["lines"] += n

    options = SPARK if engine == "spark" else None
    first = ingest(
        inputs.first,
        root,
        workers=2,
        engine=engine,
        chunk_size=CHUNK,
        on_bytes=on_bytes,
        on_lines=on_lines,
        engine_options=options,
    )
    after_first = tables(root)
    second = ingest(inputs.second, root, workers=2, engine=engine, chunk_size=CHUNK, engine_options=options)
    return Runs(root, [first, second], after_first, heard["bytes"], heard["lines"])


@pytest.fixture(scope="module")
def local(inputs: Inputs, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return run_twice("local", inputs, tmp_path_factory.mktemp("local") / "wh")


@pytest.fixture(scope="module")
def spark(inputs: Inputs, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    if MISSING is not None:
        pytest.skip(MISSING)
    return run_twice("spark", inputs, tmp_path_factory.mktemp("spark") / "wh")


def assert_same(a: dict[str, pa.Table], b: dict[str, pa.Table]) -> None:
    for name in a:
        assert a[name].num_rows == b[name].num_rows, f"{name}: {a[name].num_rows} rows, expected {b[name].num_rows}"
        assert a[name].equals(b[name]), f"{name} differs"


# ---------------------------------------------------------------------------------------------- Spark = local
@needs_spark
def test_spark_stores_exactly_what_the_local_engine_stores(local: Runs, spark: Runs) -> None:
    """Every table, row for row and value for value (order aside), after the first run and the second."""
    for name in ("hands", "events", "wins", "payments", "issues", "rejects"):
        assert spark.after_first[name].num_rows > 0, f"{name} is empty: the comparison would prove little"
    assert_same(spark.after_first, local.after_first)
    assert_same(tables(spark.root), tables(local.root))


@needs_spark
def test_rejects_issues_and_counts_are_those_of_local_mode(local: Runs, spark: Runs) -> None:
    for mine, theirs in zip(spark.stats, local.stats, strict=True):
        assert [getattr(mine, k) for k in COUNTS] == [getattr(theirs, k) for k in COUNTS]
        assert mine.rejects_by_code == theirs.rejects_by_code
        assert mine.reconciled
    first, second = spark.stats
    assert {
        "INGEST_READ",
        "INGEST_LINE_TOO_LONG",
        "INGEST_CONFLICT",
        "SCHEMA_JSON",
        "SCHEMA_TYPE",
        "SCHEMA_FORMAT",
    } <= first.rejects_by_code.keys()
    assert first.rejects_by_code["INGEST_CONFLICT"] == 2 and first.duplicates >= 3
    # run 2: only the new file's lines are new: one record, one conflict with a stored record, one duplicate
    assert (second.records_stored, second.conflicts, second.rejects) == (1, 1, 1)
    assert second.duplicates == second.lines_read - 2


@needs_spark
def test_ingest_runs_records_the_same_counts_with_engine_spark(local: Runs, spark: Runs) -> None:
    def rows(root: Path) -> list[dict[str, object]]:
        return sorted(pq.read_table(root / "ingest_runs").to_pylist(), key=lambda r: str(r["started_at"]))

    mine, theirs = rows(spark.root), rows(local.root)
    assert len(mine) == len(theirs) == 2
    for m, t, stats in zip(mine, theirs, spark.stats, strict=True):
        assert [m[k] for k in COUNTS] == [t[k] for k in COUNTS] == [getattr(stats, k) for k in COUNTS]
        assert (m["engine"], m["workers"], m["inputs"]) == ("spark", 2, t["inputs"])
        assert m["run_id"] == stats.run_id


@needs_spark
def test_spilled_lines_land_in_the_warehouse_alike(local: Runs, spark: Runs) -> None:
    def spill(root: Path) -> dict[str, int]:
        return {p.name: p.stat().st_size for p in (root / SPILL).iterdir()}

    assert spill(spark.root) == spill(local.root) and len(spill(spark.root)) == 1
    (raw_path,) = [p for p in spark.after_first["rejects"]["raw_path"].to_pylist() if p]
    assert (spark.root / raw_path).stat().st_size == MAX_LINE + 10


@needs_spark
def test_progress_is_heard_alike(local: Runs, spark: Runs) -> None:
    """The progress bar hears the same bytes. The lines sent to validation may differ: a line repeating a
    record stored earlier in the same run is skipped by the local engine when that record's batch was
    committed before the line was read, while Spark skips only what was stored before the run (both count
    it as a duplicate)."""
    assert spark.bytes_heard == local.bytes_heard > 0
    assert spark.lines_heard == spark.stats[0].lines_read >= local.lines_heard


@needs_spark
def test_the_duckdb_catalogue_reads_the_spark_warehouse(local: Runs, spark: Runs) -> None:
    def counts(root: Path) -> dict[str, int]:
        con = duckdb.connect(str(root / "warehouse.duckdb"), read_only=True)
        try:
            return {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in TABLES}
        finally:
            con.close()

    assert counts(spark.root) == counts(local.root)
    assert counts(spark.root)["hands"] == sum(s.records_stored for s in spark.stats)


@needs_spark
def test_the_spark_session_is_stopped_after_the_run(spark: Runs) -> None:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    assert SparkSession.getActiveSession() is None
    assert SparkContext._active_spark_context is None


def test_standard_input_is_refused_before_spark_starts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="standard input"):
        ingest(["-"], tmp_path / "wh", engine="spark", engine_options=SPARK)
    assert pq.read_table(tmp_path / "wh" / "ingest_runs").num_rows == 0
    assert "pyspark" not in sys.modules or _no_context()


def _no_context() -> bool:
    from pyspark import SparkContext

    return SparkContext._active_spark_context is None


# ---------------------------------------------------------------------------------------------- the parts
def test_the_validator_knows_no_engine() -> None:
    """Validating lines into tables loads neither Spark nor any engine."""
    code = (
        "import sys\n"
        "from pipeline.ingest.read import RawLine\n"
        "from pipeline.ingest.work import process_lines\n"
        "process_lines([RawLine.of('f', 1, b'{}')], 'run')\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j') or 'ingest.engines' in m]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _lines(inputs: Inputs) -> list[RawLine]:
    path = Path(inputs.first[1]) / "bad.jsonl"
    return [line for line in read_lines([str(path)]) if not line.blank and not line.too_long]


def test_the_arrow_envelope_keeps_tables_whole(inputs: Inputs) -> None:
    """Every table of a processed chunk comes out of its IPC bytes equal, schema and column docs included."""
    sim = list(read_lines([inputs.first[0]]))[:30]
    made = process_lines(sim + _lines(inputs), "run").tables()
    for name, table in made.items():
        back = unpack(pack(table))
        assert back.equals(table) and back.schema.equals(table.schema, check_metadata=True), name
        assert [f.metadata for f in back.schema] == [f.metadata for f in table.schema], name
    assert made["wins"].num_rows and made["rejects"].num_rows


def test_chunk_lines_give_back_the_raw_lines(inputs: Inputs, tmp_path: Path) -> None:
    lines = list(read_lines([*inputs.first[1:], str(tmp_path / "none.jsonl")], spill_dir=tmp_path))
    assert any(line.too_long for line in lines) and any(line.fault for line in lines)
    chunk = ChunkLines(unpack(pack_lines(lines)))
    assert len(chunk) == len(lines) and list(chunk) == lines
    assert chunk[-1] == lines[-1] and list(chunk[2:5]) == lines[2:5]
    with pytest.raises(IndexError):
        chunk[len(lines)]


def _cut(path: str, stored: set[str], spill: Path) -> tuple[list[dict[str, Any]], list[list[RawLine]], int, int]:
    """A file cut by the Spark task and by the local engine's chunker, and the bytes read_lines reported."""
    rows = list(_read_file(3, path, chunk_size=CHUNK, stored=stored, spill_dir=str(spill)))
    heard = [0]

    def count(n: int) -> None:
        heard[0] += n

    skipped = [0]

    def skip(n: int) -> None:
        skipped[0] += n

    local = list(read_chunks([path], spill_dir=spill, size=CHUNK, stored=stored, on_skipped=skip, on_bytes=count))
    return rows, local, skipped[0], heard[0]


@pytest.mark.parametrize("which", ["sim", "bad", "cut", "missing"])
def test_a_task_cuts_a_file_as_the_local_engine_does(inputs: Inputs, tmp_path: Path, which: str) -> None:
    """Same chunks, same lines (spill names relative to the warehouse), the skipped stored records counted
    and every byte reported; a file that yields no chunk still reports itself in one empty row."""
    more = Path(inputs.first[1])
    path = {
        "sim": inputs.first[0],
        "bad": str(more / "bad.jsonl"),
        "cut": str(more / "cut.jsonl.zst"),
        "missing": inputs.first[2],
    }[which]
    every = [line for line in read_lines([path]) if not line.blank]
    stored = {line.sha256 for line in every[::3]}  # as if a third of the lines were stored records
    rows, local, skipped, heard = _cut(path, stored, tmp_path)
    assert [r["chunk"] for r in rows] == list(range(len(rows))) and {r["file"] for r in rows} == {3}
    assert [list(ChunkLines(unpack(r["raw"]))) for r in rows if r["lines"]] == local
    assert [r["lines"] for r in rows if r["lines"]] == [len(c) for c in local]
    assert sum(r["skipped"] for r in rows) == skipped and (skipped > 0) == (which in ("sim", "bad", "cut"))
    assert sum(r["bytes"] for r in rows) == heard
    assert pa.Table.from_pylist(rows, schema=CHUNKS).num_rows == len(rows)


def test_an_empty_file_is_one_empty_row(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n \n")
    (row,) = _read_file(0, str(empty), chunk_size=CHUNK, stored=set(), spill_dir=str(tmp_path))
    assert (row["lines"], row["skipped"], row["bytes"]) == (0, 0, 3)


def test_a_task_validates_a_chunk_as_process_lines_does(inputs: Inputs, tmp_path: Path) -> None:
    """The second stage's output: process_lines' tables and keys, carried with the chunk's own columns."""
    rows = list(
        _read_file(
            0,
            str(Path(inputs.first[1]) / "bad.jsonl"),
            chunk_size=CHUNK,
            stored=set(),
            spill_dir=str(tmp_path),
        )
    )
    assert len(rows) == 1
    (out,) = _validate([pa.RecordBatch.from_pylist(rows, schema=CHUNKS)], run_id="run", profile=None)
    assert out.schema.equals(RESULTS)
    (result,) = out.to_pylist()
    chunk = list(ChunkLines(unpack(result["raw"])))
    expected = process_lines(chunk, "run")
    for name in OUT_TABLES:
        assert unpack(result[name]).equals(expected.tables()[name]), name
    keys = unpack(result["keys"]).to_pylist()
    assert [(k["hand_id"], k["sha256"], k["position"]) for k in keys] == [
        (k.hand_id, k.sha256, k.position) for k in expected.keys
    ]
    assert {k: result[k] for k in ("file", "chunk", "lines", "skipped", "bytes")} == {
        k: rows[0][k] for k in ("file", "chunk", "lines", "skipped", "bytes")
    }
