"""Bad input never stops a batch: each kind of broken line or file becomes a reject with a code, and the good
lines around it (and the files after it) are stored. Also the reader on its own: spilling a huge line without
holding it, compressed streams cut short, CRLF, blank lines, and stdin."""

from __future__ import annotations

import gzip
import hashlib
import json
import pickle
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard
from own_peak import OWN_PEAK_KIB
from sample_lines import sample_lines

from pipeline.ingest.read import RawLine, find_files, read_lines
from pipeline.ingest.run import IngestStats, ingest
from pipeline.ingest.work import Rows, process_lines

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample.jsonl.gz"
XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
GOOD = sample_lines(60)  # valid records, distinct hand_ids


def hand_id(line: bytes) -> str:
    return json.loads(line)["hand_id"]


def edited(line: bytes, **changes: object) -> bytes:
    return json.dumps({**json.loads(line), **changes}).encode()


def jsonl(*lines: bytes) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def cut(data: bytes) -> bytes:
    """A compressed stream cut off part-way, as by a full disk or an interrupted copy."""
    return data[: len(data) * 2 // 3]


def run(tmp_path: Path, *files: Path, workers: int = 1) -> tuple[IngestStats, list[dict], list[dict]]:
    root = tmp_path / "wh"
    stats = ingest([str(f) for f in files], root, workers=workers)
    hands = pq.read_table(root / "hands", columns=["hand_id", "source_file", "source_line"]).to_pylist()
    rejects = pq.read_table(root / "rejects").to_pylist()
    assert stats.reconciled
    return stats, hands, rejects


# ---------------------------------------------------------------------------------------------- one case each
# name → (file suffix, file bytes, the lines that must be stored, the (line, code) rejects)
Case = tuple[str, Callable[[], bytes], list[int], list[tuple[int, str]]]
CASES: dict[str, Case] = {
    "malformed-json": (
        "jsonl",
        lambda: jsonl(GOOD[0], b'{"format": "xzlog/1", "hand_id": "t9', b"\x00\x00", b"{}}", GOOD[1]),
        [1, 5],
        [(2, "SCHEMA_JSON"), (3, "SCHEMA_JSON"), (4, "SCHEMA_JSON")],
    ),
    "not-utf8": (
        "jsonl",
        lambda: jsonl(GOOD[0], b'{"hand_id": "\xff\xfe\xc3\x28"}', GOOD[1].replace(b'"t0', b'"\xe9t0'), GOOD[2]),
        [1, 4],
        [(2, "SCHEMA_JSON"), (3, "SCHEMA_JSON")],
    ),
    "deep-nesting": (
        "jsonl",
        lambda: jsonl(
            GOOD[0],
            b"[" * 100_000 + b"]" * 100_000,
            b'{"format": "xzlog/1", "x": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001,
            GOOD[1],
        ),
        [1, 4],
        [(2, "SCHEMA_JSON"), (3, "SCHEMA_JSON")],
    ),
    "wrong-types": (
        "jsonl",
        lambda: jsonl(
            GOOD[0],
            edited(GOOD[1], dealer="east"),
            edited(GOOD[2], players="abcd"),
            edited(GOOD[3], hand_no="1"),
            edited(GOOD[4], dealer=True),
            GOOD[5],
        ),
        [1, 6],
        [(2, "SCHEMA_TYPE"), (3, "SCHEMA_TYPE"), (4, "SCHEMA_TYPE"), (5, "SCHEMA_TYPE")],
    ),
    "unknown-format-version": (
        "jsonl",
        lambda: jsonl(GOOD[0], edited(GOOD[1], format="xzlog/2"), edited(GOOD[2], format=None), GOOD[3]),
        [1, 4],
        [(2, "SCHEMA_FORMAT"), (3, "SCHEMA_FORMAT")],
    ),
    "not-an-object": (
        "jsonl",
        lambda: jsonl(GOOD[0], b"[]", b"42", b'"xzlog/1"', b"null", GOOD[1]),
        [1, 6],
        [(2, "SCHEMA_JSON"), (3, "SCHEMA_JSON"), (4, "SCHEMA_JSON"), (5, "SCHEMA_JSON")],
    ),
    "beyond-the-column-types": (
        "jsonl",
        lambda: jsonl(GOOD[0], edited(GOOD[1], hand_no=2**40), GOOD[2]),
        [1, 3],
        [(2, "SCHEMA_TYPE")],
    ),
    "gzip-not-gzip": ("jsonl.gz", lambda: jsonl(GOOD[0]), [], [(1, "INGEST_READ")]),
    "zstd-garbage-after-the-frame": (
        "jsonl.zst",
        lambda: zstandard.ZstdCompressor().compress(jsonl(GOOD[0], GOOD[1])) + b"junk",
        [1, 2],
        [(3, "INGEST_READ")],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_line_or_file_is_a_reject_and_the_good_lines_around_it_are_stored(tmp_path: Path, name: str) -> None:
    suffix, content, stored, rejected = CASES[name]
    case = tmp_path / f"case.{suffix}"
    case.write_bytes(content())
    after = tmp_path / "after.jsonl"
    after.write_bytes(jsonl(GOOD[50]))
    stats, hands, rejects = run(tmp_path, case, after)
    assert [(Path(h["source_file"]).name, h["source_line"]) for h in hands] == [
        *(("case." + suffix, n) for n in stored),
        ("after.jsonl", 1),
    ]
    assert sorted((r["source_line"], r["code"]) for r in rejects) == rejected
    assert all(r["message"] and Path(r["source_file"]).name == case.name for r in rejects)
    assert (stats.lines_read, stats.rejects, stats.duplicates) == (
        len(stored) + len(rejected) + 1,
        len(rejected),
        0,
    )


def test_a_value_beyond_its_column_rejects_only_its_own_record() -> None:
    """The chunk is converted line by line then: the records around keep their rows and record numbers."""
    data = [GOOD[0], edited(GOOD[1], hand_no=2**40), GOOD[2], edited(GOOD[3], x_pay=1), GOOD[4]]
    rows = process_lines([RawLine.of("f", n, d) for n, d in enumerate(data, start=1)], "run")
    tables = rows.tables()
    assert [(k.hand_id, k.position) for k in rows.keys] == [
        (hand_id(GOOD[0]), 0),
        (hand_id(GOOD[2]), 2),
        (hand_id(GOOD[3]), 3),
        (hand_id(GOOD[4]), 4),
    ]
    for name in ("hands", "player_hands", "events", "payments"):
        pairs = set(zip(tables[name]["_rec"].to_pylist(), tables[name]["hand_id"].to_pylist(), strict=True))
        assert pairs == {(i, k.hand_id) for i, k in enumerate(rows.keys)}, name
    (reject,) = tables["rejects"].to_pylist()
    assert (reject["source_line"], reject["code"], reject["hand_id"]) == (2, "SCHEMA_TYPE", hand_id(GOOD[1]))
    assert "does not fit" in reject["message"]


def test_a_row_with_a_column_the_table_does_not_have_is_an_error() -> None:
    with pytest.raises(KeyError, match="hand_idd"):
        Rows().add("hands", hand_idd="x")


@pytest.mark.parametrize(
    "suffix,compress",
    [
        ("jsonl.gz", lambda d: gzip.compress(d, mtime=0)),
        ("jsonl.zst", lambda d: zstandard.ZstdCompressor().compress(d)),
    ],
)
def test_a_compressed_stream_cut_short_ends_its_file_with_a_reject(tmp_path: Path, suffix: str, compress) -> None:
    """Everything before the cut is stored, then one INGEST_READ on the line after the last one read; the next
    file is read as usual. (zstd's own stream reader takes a cut stream for a clean end: ours does not.)"""
    case = tmp_path / f"case.{suffix}"
    case.write_bytes(cut(compress(jsonl(*GOOD[:40]))))
    after = tmp_path / "after.jsonl"
    after.write_bytes(jsonl(GOOD[50]))
    stats, hands, rejects = run(tmp_path, case, after)
    lines = sorted(h["source_line"] for h in hands if h["source_file"] == str(case))
    assert lines == list(range(1, len(lines) + 1)) and 10 <= len(lines) < 40
    assert [h["hand_id"] for h in hands if h["source_file"] == str(case)] == [hand_id(g) for g in GOOD[: len(lines)]]
    (reject,) = rejects
    assert (reject["source_line"], reject["code"], reject["raw"], reject["size"]) == (
        len(lines) + 1,
        "INGEST_READ",
        b"",
        0,
    )
    assert f"stream broken after line {len(lines)}" in reject["message"]
    assert any(h["source_file"] == str(after) for h in hands)
    assert stats.lines_read == len(lines) + 2


def test_a_gzip_stream_cut_short_gives_every_line_before_the_cut(tmp_path: Path) -> None:
    """The gzip reader takes the stream a large piece at a time: cut anywhere in a file of several pieces
    (above 1 MiB), it still gives every whole line the stream held before the cut, then the fault."""
    lines = [g for _ in range(12) for g in GOOD]  # about 3.7 MiB: several pieces
    whole = gzip.compress(jsonl(*lines), mtime=0)
    path = tmp_path / "cut.jsonl.gz"
    for at in (len(whole) // 7, len(whole) // 2, len(whole) - 20):
        path.write_bytes(whole[:at])
        held = zlib.decompressobj(31).decompress(whole[:at])  # every byte the cut stream holds
        complete = held.count(b"\n")
        got = list(read_lines([str(path)]))
        assert [line.data for line in got[:-1]] == lines[:complete] and complete > 10
        assert (got[-1].source_line, got[-1].fault is not None) == (complete + 1, True)
        assert f"stream broken after line {complete}" in str(got[-1].fault)


def test_a_raw_line_hashes_when_asked_and_crosses_processes_with_what_it_has() -> None:
    line = RawLine.of("f.jsonl", 3, GOOD[0])
    assert line._sha256 is None  # read, not hashed
    copy = pickle.loads(pickle.dumps(line))
    assert copy._sha256 is None and copy == line
    assert line.sha256 == hashlib.sha256(GOOD[0]).hexdigest() and line._sha256 == line.sha256
    assert pickle.loads(pickle.dumps(line))._sha256 == line.sha256  # hashed once, carried
    assert line == RawLine("f.jsonl", 3, GOOD[0], len(GOOD[0]), line.sha256) == copy  # equal hashed or not
    assert hash(line) == hash(copy) and line != RawLine.of("f.jsonl", 4, GOOD[0])
    assert line.with_spill("spill/x.line").spill == "spill/x.line" and line.spill is None
    with pytest.raises(AttributeError):
        line.data = b"{}"  # type: ignore[misc]
    with pytest.raises(ValueError, match="sha256"):
        RawLine("f.jsonl", 1, b"", 50, too_long=True)  # a line not held whole cannot be hashed later


def test_a_missing_file_among_several_is_a_reject_and_the_others_are_read(tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(jsonl(GOOD[0]))
    second.write_bytes(jsonl(GOOD[1]))
    stats, hands, rejects = run(tmp_path, first, tmp_path / "gone.jsonl", second)
    assert [h["hand_id"] for h in hands] == [hand_id(GOOD[0]), hand_id(GOOD[1])]
    (reject,) = rejects
    assert (Path(reject["source_file"]).name, reject["source_line"], reject["code"]) == (
        "gone.jsonl",
        0,
        "INGEST_READ",
    )
    assert "No such file" in reject["message"]
    assert (stats.lines_read, stats.records_stored, stats.rejects) == (3, 2, 1)
    again = ingest([str(first), str(tmp_path / "gone.jsonl"), str(second)], tmp_path / "wh", workers=1)
    assert (again.rejects, again.duplicates) == (0, 3)  # the same missing file is not reported twice


def test_multi_frame_zstd_and_multi_member_gzip_are_read_whole(tmp_path: Path) -> None:
    zst, gz = tmp_path / "a.jsonl.zst", tmp_path / "b.jsonl.gz"
    c = zstandard.ZstdCompressor()
    zst.write_bytes(c.compress(jsonl(*GOOD[:3])) + c.compress(jsonl(*GOOD[3:5])))
    gz.write_bytes(gzip.compress(jsonl(*GOOD[5:7])) + gzip.compress(jsonl(*GOOD[7:9])))
    _, hands, rejects = run(tmp_path, zst, gz)
    assert [h["hand_id"] for h in hands] == [hand_id(g) for g in GOOD[:9]] and rejects == []


def test_blank_lines_are_not_records_and_crlf_is_a_line_break(tmp_path: Path) -> None:
    lf, crlf = tmp_path / "lf.jsonl", tmp_path / "crlf.jsonl"
    lf.write_bytes(jsonl(GOOD[0], GOOD[1]))
    crlf.write_bytes(b"\r\n" + GOOD[0] + b"\r\n  \r\n\r\n" + GOOD[2] + b"\r\n")
    stats, _, _ = run(tmp_path, lf, crlf)
    assert (stats.lines_read, stats.records_stored, stats.duplicates, stats.rejects) == (4, 3, 1, 0)
    root = tmp_path / "wh"
    stored = pq.read_table(root / "hands", columns=["source_file", "source_line", "record_sha256"]).to_pylist()
    assert [(Path(r["source_file"]).name, r["source_line"]) for r in stored] == [
        ("lf.jsonl", 1),
        ("lf.jsonl", 2),
        ("crlf.jsonl", 5),
    ]
    assert stored[2]["record_sha256"] == hashlib.sha256(GOOD[2]).hexdigest()


# ---------------------------------------------------------------------------------------------- huge lines
LONG = 100 << 20  # bytes in the huge line
MEASURE = (
    OWN_PEAK_KIB
    + """
import sys
from pipeline.ingest.run import ingest
stats = ingest([sys.argv[1]], sys.argv[2], workers=1)
peak = own_peak_kib()  # KiB
print(stats.lines_read, stats.records_stored, stats.rejects, peak)
"""
)


def _measure(path: Path, root: Path) -> list[int]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), str(root)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [int(x) for x in done.stdout.split()]


def test_a_100_mb_line_is_spilled_to_a_side_file_without_being_held_in_memory(tmp_path: Path) -> None:
    """The line ends in rejects with raw_path set; the side file holds exactly the line (same size and
    sha256); the good lines around it are stored; and the run's peak memory is as without that line."""
    body = b'{"format": "xzlog/1", "hand_id": "huge", "x_pad": "' + b"x" * (LONG - 52) + b'"}'
    digest = hashlib.sha256(body).hexdigest()
    huge, small = tmp_path / "huge.jsonl", tmp_path / "small.jsonl"
    with huge.open("wb") as f:
        f.write(jsonl(GOOD[0]))
        f.write(body + b"\n")
        f.write(jsonl(GOOD[1]))
    small.write_bytes(jsonl(GOOD[0], GOOD[1]))
    *_, baseline_kib = _measure(small, tmp_path / "small")
    read, stored, rejected, peak_kib = _measure(huge, tmp_path / "wh")
    assert (read, stored, rejected) == (3, 2, 1)
    assert peak_kib - baseline_kib < 48 << 10, f"peak {peak_kib >> 10} MiB vs {baseline_kib >> 10} MiB without the line"
    (reject,) = pq.read_table(tmp_path / "wh" / "rejects").to_pylist()
    assert (reject["source_line"], reject["code"], reject["raw"]) == (2, "INGEST_LINE_TOO_LONG", None)
    assert (reject["size"], reject["sha256"], reject["raw_path"]) == (
        len(body),
        digest,
        f"spill/{digest}.line",
    )
    side = tmp_path / "wh" / reject["raw_path"]
    assert side.stat().st_size == len(body)
    h = hashlib.sha256()
    with side.open("rb") as f:
        while piece := f.read(1 << 20):
            h.update(piece)
    assert h.hexdigest() == digest
    hands = pq.read_table(tmp_path / "wh" / "hands", columns=["hand_id", "source_line"]).to_pylist()
    assert hands == [
        {"hand_id": hand_id(GOOD[0]), "source_line": 1},
        {"hand_id": hand_id(GOOD[1]), "source_line": 3},
    ]
    assert [p.name for p in (tmp_path / "wh" / "spill").iterdir()] == [f"{digest}.line"]


@pytest.mark.parametrize(
    "suffix,compress",
    [
        ("jsonl", bytes),
        ("jsonl.gz", lambda d: gzip.compress(d, mtime=0)),
        ("jsonl.zst", lambda d: zstandard.ZstdCompressor().compress(d)),
    ],
)
@pytest.mark.parametrize("ending", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_the_reader_spills_exactly_the_line_in_every_format(
    tmp_path: Path, suffix: str, compress, ending: bytes
) -> None:
    """With a small max_line: a line of max_line bytes stays in memory, one byte more is spilled, and the side
    file holds the line without its break, whatever the compression and the line ending."""
    limit = 1000
    fits, over = b"a" * limit, b"b" * 700 + b"\r" + b"c" * 3000 + b"\r"  # inner CRs belong to the line
    last = b"d" * 5000  # the last line, with no line break at all
    path = tmp_path / f"in.{suffix}"
    path.write_bytes(compress(fits + ending + over + ending + b"short" + ending + last))
    lines = list(read_lines([str(path)], max_line=limit, spill_dir=tmp_path / "spill"))
    assert [(x.source_line, x.data, x.too_long, x.fault) for x in lines] == [
        (1, fits, False, None),
        (2, b"", True, None),
        (3, b"short", False, None),
        (4, b"", True, None),
    ]
    expect_over = over.rstrip(b"\r")  # CRs right before the LF are part of the break, as for a short line
    for line, body in ((lines[1], expect_over), (lines[3], last)):
        assert (line.size, line.sha256) == (len(body), hashlib.sha256(body).hexdigest())
        assert (tmp_path / "spill" / line.spill).read_bytes() == body
    assert sorted(p.name for p in (tmp_path / "spill").iterdir()) == sorted(x.spill for x in (lines[1], lines[3]))


def test_a_too_long_line_is_a_reject_even_without_a_spill_folder() -> None:
    """Without spill_dir the line is only hashed, never mistaken for a blank line, and still rejected."""
    (line,) = read_lines_from(b"x" * 50 + b"\n", max_line=10)
    assert (line.too_long, line.blank, line.spill, line.size) == (True, False, None, 50)
    rows = process_lines([line], "run").tables()
    (reject,) = rows["rejects"].to_pylist()
    assert (reject["code"], reject["raw"], reject["raw_path"], reject["size"]) == (
        "INGEST_LINE_TOO_LONG",
        None,
        None,
        50,
    )


def read_lines_from(data: bytes, **options: object) -> list[RawLine]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.jsonl"
        path.write_bytes(data)
        return list(read_lines([str(path)], **options))  # type: ignore[arg-type]


def test_find_files_expands_folders_and_keeps_files_and_stdin_as_given(tmp_path: Path) -> None:
    (tmp_path / "d" / "e").mkdir(parents=True)
    for name in ("d/b.jsonl", "d/a.jsonl.zst", "d/e/c.jsonl.gz", "d/e/notes.md", "d/x.json"):
        (tmp_path / name).write_bytes(b"")
    given = tmp_path / "given.txt"
    assert find_files([str(tmp_path / "d"), "-", str(given)]) == [
        str(tmp_path / "d/a.jsonl.zst"),
        str(tmp_path / "d/b.jsonl"),
        str(tmp_path / "d/e/c.jsonl.gz"),
        "-",
        str(given),
    ]


# ---------------------------------------------------------------------------------------------- stdin
def test_stdin_is_an_input(tmp_path: Path) -> None:
    data = jsonl(GOOD[0], b"{oops", GOOD[1])
    root = tmp_path / "wh"
    done = subprocess.run(
        [XUEZHAN, "ingest", "-", "--warehouse", str(root), "--workers", "1", "--quiet"],
        input=data,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # one line was rejected
    assert done.stdout.decode().startswith(
        "lines read 3 = stored 2 (invalid 0) + rejects 1 (conflicts 0) + duplicates 0\n"
    )
    hands = pq.read_table(root / "hands", columns=["hand_id", "source_file", "source_line"]).to_pylist()
    assert hands == [
        {"hand_id": hand_id(GOOD[0]), "source_file": "-", "source_line": 1},
        {"hand_id": hand_id(GOOD[1]), "source_file": "-", "source_line": 3},
    ]
    (reject,) = pq.read_table(root / "rejects").to_pylist()
    assert (reject["source_file"], reject["source_line"], reject["code"], reject["raw"]) == (
        "-",
        2,
        "SCHEMA_JSON",
        b"{oops",
    )
