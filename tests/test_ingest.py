"""`xuezhan ingest` end to end on a mixed corpus: the tables read back with DuckDB, Polars and Arrow in
exactly the documented schemas, every line accounted for with exact counts, a second run adds nothing, a
changed record under a stored hand_id is a conflict, one worker or two give the same tables, folders are
expanded, and the command prints only its summary unless it has a terminal to draw a progress bar on.

The corpus is simulated (``corrupt=0.2,score_errors=0.2``), so the expected counts come from the simulator's
ground truth, not from the code under test.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from sample_lines import sample_lines
from warehouse_compare import assert_same_warehouse, contents

from pipeline.codes import CODES
from pipeline.ingest.run import IngestStats, ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, simulate
from schemas.tables import REVIEW_TABLES, TABLES

XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample.jsonl.gz"
INGEST_CODES = {"INGEST_READ", "INGEST_LINE_TOO_LONG", "INGEST_CONFLICT"}


# ---------------------------------------------------------------------------------------------- the corpus
@dataclass
class Corpus:
    """Three inputs (a simulated file, a file of hand-made bad lines around good ones, a missing file) and
    what ingesting them must give, worked out from the simulator's labels and the hand-made lines."""

    folder: Path
    files: list[Path]
    lines_read: int = 0
    stored: set[tuple[str, int]] = field(default_factory=set)  # (file name, line) of each stored record
    rejects: set[tuple[str, int, str]] = field(default_factory=set)  # (file name, line, code)
    duplicates: int = 0
    invalid: set[str] = field(default_factory=set)  # hand_ids stored with valid = false


def _bad_lines(moved: list[bytes], conflict: bytes, copy: bytes, spare: bytes) -> list[tuple[bytes, str]]:
    """The lines of ``bad.jsonl``, each with what it must become: a code, stored, blank or duplicate."""
    format2 = {**json.loads(moved[3]), "format": "xzlog/2", "hand_id": "bad-format"}
    wrong_type = {**json.loads(moved[3]), "dealer": "east", "hand_id": "bad-type"}
    too_big = {**json.loads(spare), "hand_id": "bad-range", "hand_no": 2**40}
    edited = {**json.loads(conflict), "x_edited": True}
    return [
        (moved[0], "stored"),
        (b'{"format": "xzlog/1", "hand_id": "cut', "SCHEMA_JSON"),
        (moved[1], "stored"),
        (b'\xff\xfe{"hand_id": "\xc3\x28"}', "SCHEMA_JSON"),  # not UTF-8
        (b"", "blank"),
        (b"[" * 100_000 + b"]" * 100_000, "SCHEMA_JSON"),  # nested far too deep
        (moved[2], "stored"),
        (json.dumps(format2).encode(), "SCHEMA_FORMAT"),
        (json.dumps(wrong_type).encode(), "SCHEMA_TYPE"),
        (b" \t ", "blank"),
        (b"[]", "SCHEMA_JSON"),
        (json.dumps(edited).encode(), "INGEST_CONFLICT"),  # a stored hand_id with other bytes
        (moved[3], "stored"),
        (copy, "duplicate"),  # the same bytes as a line of the simulated file
        (moved[4], "stored"),
        (json.dumps(too_big).encode(), "SCHEMA_TYPE"),  # hand_no beyond the int32 column
    ]


def make_corpus(folder: Path, hands: int = 60, seed: int = 7) -> Corpus:
    lines_, labels = simulate(
        SimConfig(hands=hands, seed=seed, inject=InjectSpec.parse("corrupt=0.2,score_errors=0.2"))
    )
    lines = [line.encode() for line in lines_]
    kinds = {f.kind for f in labels.faults}
    assert {"broken_json", "duplicated", "truncated"} <= kinds and any(k.startswith("score_") for k in kinds), kinds
    faulty = {f.hand_id for f in labels.faults}
    broken = {f.hand_id for f in labels.faults if f.kind == "broken_json"}

    def hand_id(line: bytes) -> str | None:
        try:
            return json.loads(line)["hand_id"]
        except ValueError:
            return None

    clean = [line for line in lines if hand_id(line) not in faulty | {None}]
    moved, conflict, copy, spare = clean[:5], clean[10], clean[11], clean[12]
    sim = [line for line in lines if line not in moved]
    c = Corpus(folder, [folder / "sim.jsonl.gz", folder / "bad.jsonl", folder / "missing.jsonl"])
    with gzip.open(c.files[0], "wb") as out:
        out.write(b"".join(line + b"\n" for line in sim))
    seen: set[bytes] = set()
    for number, line in enumerate(sim, start=1):
        c.lines_read += 1
        if hand_id(line) is None:
            c.rejects.add(("sim.jsonl.gz", number, "SCHEMA_JSON"))
        elif line in seen:
            c.duplicates += 1
        else:
            c.stored.add(("sim.jsonl.gz", number))
        seen.add(line)
    bad = _bad_lines(moved, conflict, copy, spare)
    c.files[1].write_bytes(b"".join(line + b"\n" for line, _ in bad))
    for number, (_, fate) in enumerate(bad, start=1):
        if fate == "blank":
            continue
        c.lines_read += 1
        if fate == "stored":
            c.stored.add(("bad.jsonl", number))
        elif fate == "duplicate":
            c.duplicates += 1
        else:
            c.rejects.add(("bad.jsonl", number, fate))
    c.lines_read += 1
    c.rejects.add(("missing.jsonl", 0, "INGEST_READ"))
    c.invalid = {f.hand_id for f in labels.faults if f.kind not in ("duplicated", "broken_json")} - broken
    return c


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return make_corpus(tmp_path_factory.mktemp("mixed"))


@pytest.fixture(scope="module")
def mixed(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IngestStats]:
    """The corpus ingested by two workers in small chunks (so several batches are in flight)."""
    root = tmp_path_factory.mktemp("wh") / "wh"
    return root, ingest([str(p) for p in corpus.files], root, workers=2, chunk_size=16)


# ---------------------------------------------------------------------------------------------- helpers
def counts(root: Path) -> dict[str, int]:
    with duckdb.connect() as con:
        return {
            name: con.execute("SELECT count(*) FROM read_parquet(?)", [str(root / name / "*.parquet")]).fetchone()[0]
            for name in TABLES
        }


def run_cli(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [XUEZHAN, "ingest", *args],
        input=input.decode() if input else None,
        capture_output=True,
        text=True,
        timeout=120,
    )


def summary_line(c: Corpus, *, with_missing: bool = True) -> str:
    missing = 0 if with_missing else 1
    conflicts = sum(code == "INGEST_CONFLICT" for *_, code in c.rejects)
    return (
        f"lines read {c.lines_read - missing} = stored {len(c.stored)} (invalid {len(c.invalid)}) "
        f"+ rejects {len(c.rejects) - missing} (conflicts {conflicts}) + duplicates {c.duplicates}"
    )


# ---------------------------------------------------------------------------------------------- schemas
DUCK_TYPES = {
    pa.string(): "VARCHAR",
    pa.int8(): "TINYINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
    pa.large_binary(): "BLOB",
    pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE",
}


def duck_type(t: pa.DataType) -> str:
    """The DuckDB type a declared Arrow type must read back as."""
    if pa.types.is_list(t):
        return duck_type(t.value_type) + "[]"
    if pa.types.is_struct(t):
        return "STRUCT(" + ", ".join(f"{f.name} {duck_type(f.type)}" for f in t) + ")"
    return DUCK_TYPES[t]


def test_every_table_is_in_the_catalogue_with_its_documented_columns(mixed: tuple[Path, IngestStats]) -> None:
    """Any DuckDB client opening DIR/warehouse.duckdb read-only sees the eight tables, column for column."""
    root, stats = mixed
    con = duckdb.connect(str(root / "warehouse.duckdb"), read_only=True)
    try:
        views = {name for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        assert views == set(TABLES)
        for name, schema in TABLES.items():
            described = [(c, t) for c, t, *_ in con.execute(f'DESCRIBE "{name}"').fetchall()]
            assert described == [(f.name, duck_type(f.type)) for f in schema], name
            if name in REVIEW_TABLES:  # xuezhan review writes them, never ingest (tests/test_decision_tallies.py)
                assert con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == 0, name
                continue
            assert con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] > 0, (
                f"{name} is empty: the check proves little"
            )
        assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == stats.records_stored
    finally:
        con.close()


def test_polars_reads_every_table_folder_in_its_schema(mixed: tuple[Path, IngestStats]) -> None:
    root, _ = mixed
    for name, schema in TABLES.items():
        frame = pl.read_parquet(root / name)
        assert frame.schema == pl.from_arrow(schema.empty_table()).schema, name
        assert frame.height == counts(root)[name]


def test_every_parquet_file_carries_the_declared_schema(mixed: tuple[Path, IngestStats]) -> None:
    """Types, nullability and each column's documentation, in every batch file (no drift between batches)."""
    root, _ = mixed
    assert {p.name for p in root.iterdir() if p.is_dir()} == set(TABLES) | {"spill", "_tmp"}
    for name, schema in TABLES.items():
        files = sorted((root / name).glob("*.parquet"))
        if name in REVIEW_TABLES:  # the empty start only: xuezhan review writes the rows
            assert len(files) == 1, name
        else:
            assert len(files) == 2 if name == "ingest_runs" else len(files) >= 2  # the empty start, then data
        for f in files:
            read = pq.read_schema(f)
            assert read.equals(schema), f"{f}: {read}"
            assert [fl.metadata for fl in read] == [fl.metadata for fl in schema], f


# ---------------------------------------------------------------------------------------------- nothing lost
def test_counts_reconcile_exactly(corpus: Corpus, mixed: tuple[Path, IngestStats]) -> None:
    """lines read = records stored + rejects + duplicates, each term as the ground truth says."""
    _, stats = mixed
    assert stats.lines_read == corpus.lines_read
    assert stats.records_stored == len(corpus.stored)
    assert stats.rejects == len(corpus.rejects)
    assert stats.duplicates == corpus.duplicates
    assert stats.records_invalid == len(corpus.invalid)
    assert stats.conflicts == 1
    assert stats.reconciled and stats.lines_read == stats.records_stored + stats.rejects + stats.duplicates
    by_code: dict[str, int] = {}
    for *_, code in corpus.rejects:
        by_code[code] = by_code.get(code, 0) + 1
    assert stats.rejects_by_code == by_code


def test_every_line_lands_where_it_should(corpus: Corpus, mixed: tuple[Path, IngestStats]) -> None:
    """Line by line: the stored records and the rejects (with their codes) are exactly the expected ones, and
    the good lines around the bad ones are stored."""
    root, _ = mixed
    with duckdb.connect() as con:
        stored = con.execute(
            "SELECT source_file, source_line FROM read_parquet(?)", [str(root / "hands/*.parquet")]
        ).fetchall()
        rejects = con.execute(
            "SELECT source_file, source_line, code FROM read_parquet(?)", [str(root / "rejects/*.parquet")]
        ).fetchall()
    assert len(stored) == len(set(stored))
    assert {(Path(f).name, n) for f, n in stored} == corpus.stored
    assert {(Path(f).name, n, code) for f, n, code in rejects} == corpus.rejects
    assert {f for f, *_ in stored + rejects} <= {str(p.resolve()) for p in corpus.files}


def test_rejects_keep_the_raw_line_and_why(corpus: Corpus, mixed: tuple[Path, IngestStats]) -> None:
    root, _ = mixed
    bad = corpus.files[1].read_bytes().split(b"\n")
    with duckdb.connect() as con:
        rows = con.execute(
            "SELECT source_file, source_line, raw, raw_path, size, sha256, code, message, hand_id FROM read_parquet(?)",
            [str(root / "rejects/*.parquet")],
        ).fetchall()
    for source_file, line, raw, raw_path, size, sha, code, message, hand_id in rows:
        assert message and raw_path is None
        assert hashlib.sha256(raw).hexdigest() == sha and len(raw) == size
        if source_file.endswith("bad.jsonl"):
            assert raw == bad[line - 1]
        if code == "INGEST_CONFLICT":
            assert hand_id == json.loads(raw)["hand_id"] and "already stored with other content" in message
        if code == "INGEST_READ":
            assert (line, raw, "missing.jsonl" in message) == (0, b"", True)
    assert {h for *_, code, _, h in rows if code in ("SCHEMA_FORMAT", "SCHEMA_TYPE")} >= {
        "bad-format",
        "bad-range",
    }


def test_invalid_records_are_stored_flagged_with_their_issues(corpus: Corpus, mixed: tuple[Path, IngestStats]) -> None:
    """A record that fails validation is a row of hands with valid = false, its issues beside it."""
    root, _ = mixed
    with duckdb.connect() as con:
        con.execute(f"CREATE VIEW hands AS SELECT * FROM read_parquet('{root}/hands/*.parquet')")
        con.execute(f"CREATE VIEW issues AS SELECT * FROM read_parquet('{root}/issues/*.parquet')")
        invalid = {h for (h,) in con.execute("SELECT hand_id FROM hands WHERE NOT valid").fetchall()}
        mismatched = con.execute("""
            SELECT h.hand_id, h.issue_count, count(i.code) AS n,
                   count(i.code) FILTER (i.severity = 'error') AS errors
            FROM hands h LEFT JOIN issues i USING (hand_id)
            GROUP BY ALL HAVING n <> h.issue_count OR (errors > 0) = h.valid""").fetchall()
        orphans = con.execute(
            "SELECT count(*) FROM issues WHERE hand_id NOT IN (SELECT hand_id FROM hands)"
        ).fetchone()[0]
    assert invalid == corpus.invalid
    assert mismatched == []
    assert orphans == 0


def test_the_run_is_recorded_in_ingest_runs(corpus: Corpus, mixed: tuple[Path, IngestStats]) -> None:
    root, stats = mixed
    (row,) = pq.read_table(root / "ingest_runs").to_pylist()
    assert row["run_id"] == stats.run_id and row["engine"] == "local" and row["workers"] == 2
    assert row["inputs"] == [str(p) for p in corpus.files]
    assert [
        row[k] for k in ("lines_read", "records_stored", "records_invalid", "rejects", "duplicates", "conflicts")
    ] == [
        stats.lines_read,
        stats.records_stored,
        stats.records_invalid,
        stats.rejects,
        stats.duplicates,
        stats.conflicts,
    ]
    assert row["lines_read"] == row["records_stored"] + row["rejects"] + row["duplicates"]
    assert row["started_at"] <= row["finished_at"]


def test_every_reject_code_is_in_the_catalogue(mixed: tuple[Path, IngestStats]) -> None:
    root, _ = mixed
    codes = set(pq.read_table(root / "rejects", columns=["code"])["code"].to_pylist())
    assert codes <= CODES.keys() | INGEST_CODES
    assert INGEST_CODES.issubset(CODES)


# ---------------------------------------------------------------------------------------------- idempotence
def test_ingesting_again_adds_nothing(corpus: Corpus, mixed: tuple[Path, IngestStats], tmp_path: Path) -> None:
    root = tmp_path / "again"
    shutil.copytree(mixed[0], root)
    before = counts(root)
    stats = ingest([str(p) for p in corpus.files], root, workers=2, chunk_size=16)
    after = counts(root)
    assert after == {**before, "ingest_runs": before["ingest_runs"] + 1}
    assert (stats.lines_read, stats.records_stored, stats.rejects, stats.duplicates) == (
        corpus.lines_read,
        0,
        0,
        corpus.lines_read,
    )
    assert_same_warehouse(root, mixed[0])


def _records(n: int) -> list[bytes]:
    return sample_lines(n)


def test_the_same_hand_id_with_other_content_is_a_conflict_never_an_overwrite(tmp_path: Path) -> None:
    a, b, c = _records(3)
    edited_a = json.dumps({**json.loads(a), "x_edited": True}).encode()
    edited_c = json.dumps({**json.loads(c), "played_at": "2026-11-02T20:00:00+08:00"}).encode()
    first, second, third = tmp_path / "first.jsonl", tmp_path / "second.jsonl", tmp_path / "third.jsonl"
    first.write_bytes(a + b"\n" + b + b"\n")
    second.write_bytes(edited_a + b"\n" + b + b"\n")
    third.write_bytes(c + b"\n" + edited_c + b"\n")  # a conflict inside one run: the first line wins
    root = tmp_path / "wh"
    ingest([str(first)], root, workers=1)
    hands_before = contents(root, "hands")
    stats = ingest([str(second), str(third)], root, workers=1)
    assert (stats.records_stored, stats.rejects, stats.conflicts, stats.duplicates) == (1, 2, 2, 1)
    assert contents(root, "hands").filter(pc.field("source_file") == str(first)).equals(hands_before)
    hands = {r["hand_id"]: r for r in pq.read_table(root / "hands").to_pylist()}
    assert hands[json.loads(a)["hand_id"]]["record_sha256"] == hashlib.sha256(a).hexdigest()
    assert hands[json.loads(c)["hand_id"]]["record_sha256"] == hashlib.sha256(c).hexdigest()
    rejects = pq.read_table(root / "rejects").to_pylist()
    assert sorted((Path(r["source_file"]).name, r["source_line"], r["code"], r["raw"]) for r in rejects) == [
        ("second.jsonl", 1, "INGEST_CONFLICT", edited_a),
        ("third.jsonl", 2, "INGEST_CONFLICT", edited_c),
    ]
    again = ingest([str(second), str(third)], root, workers=1)  # a conflict already reported is not reported twice
    assert (again.records_stored, again.rejects, again.duplicates) == (0, 0, 4)


def test_the_committing_process_hashes_only_the_lines_it_compares(tmp_path: Path, monkeypatch) -> None:
    """Into a warehouse with no record, the process that reads the input and commits hashes no line but a
    conflicting one (its reject carries the sha256): the workers hash what they validate. A repeat within the
    run is still a duplicate, and the stored digests are the lines' own. Into a warehouse with records, it
    hashes each line once, to skip the stored ones without sending them to a worker."""
    from pipeline.ingest.read import RawLine

    hashed: list[tuple[str, int]] = []  # (file, line) of every line this process hashed
    digest = RawLine.sha256

    def counted(line: RawLine) -> str:
        if line._sha256 is None:
            hashed.append((Path(line.source_file).name, line.source_line))
        return digest.fget(line)  # type: ignore[attr-defined]

    monkeypatch.setattr(RawLine, "sha256", property(counted))
    a, b, c, d = _records(4)
    edited_a = json.dumps({**json.loads(a), "x_edited": True}).encode()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(b"\n".join([a, b, b"", a, edited_a, c]) + b"\n")
    root = tmp_path / "wh"
    stats = ingest([str(first)], root, workers=1, chunk_size=1)  # a's batch is committed before its repeat
    assert (stats.records_stored, stats.duplicates, stats.conflicts, stats.lines_read) == (3, 1, 1, 5)
    assert hashed == [("first.jsonl", 5)]
    hands = pq.read_table(root / "hands", columns=["source_line", "record_sha256"]).to_pylist()
    assert [(h["source_line"], h["record_sha256"]) for h in hands] == [
        (n, hashlib.sha256(line).hexdigest()) for n, line in ((1, a), (2, b), (6, c))
    ]
    (reject,) = pq.read_table(root / "rejects").to_pylist()
    assert (reject["source_line"], reject["sha256"]) == (5, hashlib.sha256(edited_a).hexdigest())
    hashed.clear()
    second.write_bytes(b"\n".join([b, d, b""]) + b"\n")
    again = ingest([str(second)], root, workers=1)
    assert (again.records_stored, again.duplicates, again.lines_read) == (1, 1, 2)
    assert hashed == [("second.jsonl", 1), ("second.jsonl", 2)]


# ------------------------------------------------------------------------------------------ workers, folders
def test_one_worker_or_two_give_identical_tables(
    corpus: Corpus, mixed: tuple[Path, IngestStats], tmp_path: Path
) -> None:
    root = tmp_path / "one"
    stats = ingest([str(p) for p in corpus.files], root, workers=1, chunk_size=16)
    assert (stats.lines_read, stats.records_stored, stats.rejects, stats.duplicates) == (
        mixed[1].lines_read,
        mixed[1].records_stored,
        mixed[1].rejects,
        mixed[1].duplicates,
    )
    assert len(list((root / "hands").iterdir())) == len(list((mixed[0] / "hands").iterdir()))
    assert_same_warehouse(root, mixed[0])


def test_a_folder_is_read_recursively_in_name_order_record_files_only(tmp_path: Path) -> None:
    import zstandard

    lines = _records(6)
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    (folder / "b.jsonl").write_bytes(b"\n".join(lines[:2]) + b"\n")
    with gzip.open(folder / "a.jsonl.gz", "wb") as f:
        f.write(b"\n".join(lines[2:4]) + b"\n")
    (folder / "sub" / "c.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(b"\n".join(lines[4:]) + b"\n"))
    (folder / "notes.txt").write_text("not records\n")
    (folder / "sub" / "table.csv").write_text("a,b\n")
    by_folder = ingest([str(folder)], tmp_path / "w1", workers=1)
    files = [folder / "a.jsonl.gz", folder / "b.jsonl", folder / "sub" / "c.jsonl.zst"]
    by_files = ingest([str(f) for f in files], tmp_path / "w2", workers=1)
    assert (by_folder.lines_read, by_folder.records_stored, by_folder.rejects) == (6, 6, 0)
    assert by_files.records_stored == 6
    assert_same_warehouse(tmp_path / "w1", tmp_path / "w2")
    order = pq.read_table(tmp_path / "w1" / "hands").to_pylist()
    assert [(Path(r["source_file"]).name, r["source_line"]) for r in order] == [
        ("a.jsonl.gz", 1),
        ("a.jsonl.gz", 2),
        ("b.jsonl", 1),
        ("b.jsonl", 2),
        ("c.jsonl.zst", 1),
        ("c.jsonl.zst", 2),
    ]


# ---------------------------------------------------------------------------------------------- the command
SUMMARY = re.compile(
    r"(?P<counts>lines read .*)\n"
    r"\d+\.\d s, \d+ lines/s, run \d{8}T\d{6}-[0-9a-f]{8}\n"
    r"rejects by code: (?P<codes>.*)\n"
    r"warehouse: (?P<where>.*)\n"
)


@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "no-tty"])
def test_the_command_prints_only_the_summary_without_a_terminal(corpus: Corpus, tmp_path: Path, quiet: bool) -> None:
    """Piped (as in a script or CI), with or without --quiet: no progress bar, just the reconciled counts.
    The missing file is left out: the command refuses a path that does not exist before it starts."""
    root = tmp_path / "wh"
    files = [str(p) for p in corpus.files[:2]]
    done = run_cli(*files, "--warehouse", str(root), "--workers", "2", *(["--quiet"] if quiet else []))
    assert done.returncode == 1, done.stderr  # the corpus holds lines that are rejected: exit 1 says so
    assert done.stderr == ""
    m = SUMMARY.fullmatch(done.stdout)
    assert m, done.stdout
    assert m["counts"] == summary_line(corpus, with_missing=False)
    assert m["codes"].startswith("INGEST_CONFLICT 1, SCHEMA_FORMAT 1, SCHEMA_JSON ")
    assert m["where"] == str(root / "warehouse.duckdb")
    (row,) = pq.read_table(root / "ingest_runs").to_pylist()
    assert (row["lines_read"], row["records_stored"]) == (corpus.lines_read - 1, len(corpus.stored))


def _on_terminal(args: list[str], *, stdout_too: bool) -> tuple[str, str]:
    """Run the command with stderr (and stdout, if ``stdout_too``) on a pseudo-terminal; return both."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [XUEZHAN, "ingest", *args],
        stdin=subprocess.DEVNULL,
        stderr=slave,
        stdout=slave if stdout_too else subprocess.PIPE,
    )
    os.close(slave)
    screen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # the other end closed
                data = b""
            if not data:
                break
            screen += data
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    assert proc.wait(timeout=60) == 0
    return screen.decode(errors="replace"), out


def test_a_progress_bar_on_a_terminal_and_none_with_quiet(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_bytes(b"\n".join(_records(40)) + b"\n")
    screen, _ = _on_terminal([str(data), "--warehouse", str(tmp_path / "a"), "--workers", "1"], stdout_too=True)
    assert "ingesting" in screen and "\x1b[" in screen  # the bar, drawn with terminal escapes
    assert "lines read 40 = stored 40" in screen
    screen, _ = _on_terminal(
        [str(data), "--warehouse", str(tmp_path / "b"), "--workers", "1", "--quiet"], stdout_too=True
    )
    assert "ingesting" not in screen
    assert "lines read 40 = stored 40" in screen


def test_stdout_holds_only_the_summary_when_only_stderr_is_a_terminal(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_bytes(b"\n".join(_records(40)) + b"\n")
    screen, out = _on_terminal([str(data), "--warehouse", str(tmp_path / "a"), "--workers", "1"], stdout_too=False)
    assert out.startswith("lines read 40 = stored 40"), repr(out[:40])
    assert "ingesting" in screen


def test_tables_encoded_by_a_worker_are_the_tables_it_made(corpus: Corpus) -> None:
    """The local engine's workers hand over every record table as its Parquet file: each decodes to the rows the
    worker made (``_rec`` kept beside it for a committer that drops a record), in the declared schema, the
    hands with the number of invalid records (what the committer counts); the rejects stay an Arrow table."""
    from pipeline.ingest.read import RawLine
    from pipeline.ingest.warehouse import Encoded
    from pipeline.ingest.work import ENCODED_TABLES, RECORD_TABLES, EncodedRows, encoded, process_lines

    data = corpus.files[0].read_bytes()
    data = gzip.decompress(data) if corpus.files[0].suffix == ".gz" else data
    lines = [RawLine.of("x", n, line) for n, line in enumerate(data.splitlines()[:40], start=1)]
    tables = process_lines(lines, "run").tables()
    out = encoded(tables)
    assert set(out) == set(tables)
    assert set(ENCODED_TABLES) == set(RECORD_TABLES) == set(tables) - {"rejects", "ingest_runs"}
    for name, table in tables.items():
        given = out[name]
        if name not in ENCODED_TABLES:
            assert given is table
            continue
        assert isinstance(given, EncodedRows) and isinstance(given.stored, Encoded)
        assert given.stored.num_rows == table.num_rows
        assert given.table().equals(table)
        assert given.stored.table().schema == TABLES[name]
        if name == "hands":
            assert given.invalid == table.filter(~pc.field("valid")).num_rows > 0
