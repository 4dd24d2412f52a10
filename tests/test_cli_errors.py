"""No silent wrong answers (issue 17): every usage or environment error of ``xuezhan`` ends as one ``xuezhan: ...``
line on stderr and its documented exit code (2 usage/environment, 1 the input holds something wrong), never a
Python traceback; contradictory or empty input is an error, not a quiet answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()
XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
WIN = ["111m444m789m456p7p", "--win", "7p"]


def error_line(result: object) -> str:
    """The one ``xuezhan: `` line of stderr (asserting there is exactly one, and no traceback anywhere)."""
    stderr: str = result.stderr  # type: ignore[attr-defined]
    stdout: str = result.stdout  # type: ignore[attr-defined]
    assert "Traceback" not in stderr and "Traceback" not in stdout, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("xuezhan: ")]
    assert len(lines) == 1, stderr
    return lines[0]


def invoke(*args: str) -> object:
    result = runner.invoke(app, [str(a) for a in args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([XUEZHAN, *args], capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sim") / "sim.jsonl"
    result = invoke("simulate", "--hands", "12", "--out", path, "--quiet")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    return path


@pytest.fixture(scope="module")
def warehouse(records: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wh") / "wh"
    done = run("ingest", str(records), "--warehouse", str(root), "--workers", "1", "--quiet")
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def empty_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse whose only line was rejected: no records."""
    folder = tmp_path_factory.mktemp("empty")
    (folder / "bad.jsonl").write_bytes(b"{oops\n")
    root = folder / "wh"
    done = run("ingest", str(folder / "bad.jsonl"), "--warehouse", str(root), "--workers", "1", "--quiet")
    assert done.returncode == 1, done.stderr
    return root


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "regular"
    path.write_text("not a folder\n")
    return path


# ---------------------------------------------------------------------------------------------- 1. tracebacks
def test_ingest_warehouse_at_an_existing_file(records: Path, a_file: Path) -> None:
    result = invoke("ingest", records, "--warehouse", a_file, "--quiet")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result) == f"xuezhan: --warehouse {a_file} is a file, not a folder"


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_ingest_warehouse_that_cannot_be_created(records: Path, a_file: Path, where: str) -> None:
    root = a_file / "wh" if where == "under-a-file" else Path("/proc/xuezhan-test/wh")
    result = invoke("ingest", records, "--warehouse", root, "--quiet")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result).startswith(f"xuezhan: --warehouse {root} cannot be created: ")


def test_report_out_at_an_existing_file(warehouse: Path, a_file: Path) -> None:
    result = invoke("report", "--warehouse", warehouse, "--out", a_file, "--quiet")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result) == f"xuezhan: --out {a_file} is a file, not a folder"


def test_simulate_out_in_a_folder_that_cannot_be_created(a_file: Path) -> None:
    out = a_file / "sim.jsonl"
    result = invoke("simulate", "--hands", "2", "--out", out, "--quiet")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result) == f"xuezhan: --out {out}: its folder {a_file} is a file, not a folder"


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("collude=9", "'collude=9' needs 18 distinct players"),
        ("collude=2,bot=13", "needs 17 distinct players"),
        ("collude=x", "cannot read 'collude=x'"),
        ("corrupt=2", "corrupt must be between 0 and 1"),
        ("typo=1", "unknown injection 'typo=1'"),
    ],
)
def test_simulate_bad_injection_is_one_line(tmp_path: Path, spec: str, says: str) -> None:
    result = invoke("simulate", "--hands", "2", "--out", tmp_path / "s.jsonl", "--inject", spec, "--quiet")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    line = error_line(result)
    assert line.startswith("xuezhan: --inject: ") and says in line
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "--format", "csv"],
        ["audit"],
        ["stats", "--format", "json"],
        ["collusion", "--min-hands", "1"],
    ],
    ids=" ".join,
)
def test_a_full_disk_on_stdout_is_one_line_exit_2(warehouse: Path, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [XUEZHAN, *args, "--warehouse", str(warehouse)], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300
        )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert done.stderr == "xuezhan: cannot write the output: No space left on device\n"


def test_a_full_disk_on_stdout_of_validate_and_rules(records: Path) -> None:
    for args in (["validate", str(records), "--format", "json"], ["rules", "list"], ["score", *WIN]):
        with open("/dev/full", "w") as full:
            done = subprocess.run([XUEZHAN, *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
        assert (done.returncode, done.stderr) == (2, "xuezhan: cannot write the output: No space left on device\n")


def test_a_closed_pipe_on_stdout_is_exit_2_without_a_complaint(warehouse: Path) -> None:
    """Issue 39: `xuezhan validate ... | head -1` ends quietly, as any Unix filter whose reader has gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [XUEZHAN, "audit", "--warehouse", str(warehouse)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (2, "")
    sample = Path(__file__).resolve().parents[1] / "data" / "sample.jsonl.gz"
    head = subprocess.run(
        f"{XUEZHAN} validate {sample} | head -1", shell=True, capture_output=True, text=True, timeout=300
    )
    assert head.stdout.startswith("lines 2005 = ") and head.stderr == ""


# ---------------------------------------------------------------------------------------------- 2. 杠上花
def test_score_after_kong_without_self_drawn_is_a_usage_error() -> None:
    result = invoke("score", *WIN, "--after-kong")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result) == "xuezhan: --after-kong (杠上花) is a self-drawn win: add --self-drawn"
    assert invoke("score", *WIN, "--after-kong", "--self-drawn").exit_code == 0  # type: ignore[attr-defined]


def test_score_batch_after_kong_without_self_drawn_is_an_error_on_that_line(tmp_path: Path) -> None:
    request = {"concealed": "111m444m789m456p7p", "win_tile": "7p", "after_kong": True}
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(json.dumps(r) for r in (request, {**request, "self_drawn": True})) + "\n")
    result = invoke("score", "--batch", batch)
    assert result.exit_code == 1  # type: ignore[attr-defined]
    bad, good = (json.loads(line) for line in result.stdout.splitlines())  # type: ignore[attr-defined]
    assert bad["win"] is False and bad["error"] == "'after_kong' (杠上花) is a self-drawn win: set 'self_drawn' too"
    assert good["win"] is True and good["error"] is None
    assert any(p["id"] == "gang_shang_hua" for p in good["patterns"])


# Contradictory flags and tiles a table does not hold (issue 38): each refused, beside its one-fact twin that scores.
PLAIN = ("123m456m789m111p2p", "--win", "2p", "--que", "s")  # a plain hand of 万 and 筒
TWO_SUITS = ("123p456p789p111s2s", "--win", "2s", "--rules", "siren_liangse")  # 筒 and 条 only


def test_score_earthly_on_a_discard_under_a_first_draw_profile_is_refused() -> None:
    """majsoul.toml: "地和 needs a self-draw on the first turn (calcFan.ts: yifa and zimo)", earthly_on = first_draw:
    a win flagged earthly but not self-drawn is a contradiction, not 地和 (6 fan) and not silently a plain win.
    Twins: the same flags self-drawn (地和, 6 fan), and under app, whose 地胡 also counts a win on the dealer's
    first discard ("地胡，即刚打第一张牌就成胡", seed 003)."""
    result = invoke("score", *PLAIN, "--rules", "majsoul", "--earthly")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result) == (
        "xuezhan: --earthly (地胡) is a self-drawn win on one's first draw under profile 'majsoul' "
        "(earthly_on = first_draw): add --self-drawn, or drop --earthly for a win on a discard"
    )
    drawn = invoke("score", *PLAIN, "--rules", "majsoul", "--earthly", "--self-drawn", "--format", "json")
    assert drawn.exit_code == 0 and json.loads(drawn.stdout)["fan"] == 6  # type: ignore[attr-defined]
    app_discard = invoke("score", *PLAIN, "--rules", "app", "--earthly", "--format", "json")
    assert app_discard.exit_code == 0 and json.loads(app_discard.stdout)["fan"] == 8  # type: ignore[attr-defined]


def test_score_heavenly_without_self_drawn_is_refused() -> None:
    """天胡 "即刚码好牌就自然成胡" (seed 003): the dealer's dealt hand, self-drawn by definition. Twin: self-drawn,
    app's fixed 8 fan."""
    result = invoke("score", *PLAIN, "--rules", "app", "--heavenly")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result) == "xuezhan: --heavenly (天胡) is a self-drawn win: add --self-drawn"
    drawn = invoke("score", *PLAIN, "--rules", "app", "--heavenly", "--self-drawn", "--format", "json")
    assert drawn.exit_code == 0 and json.loads(drawn.stdout)["fan"] == 8  # type: ignore[attr-defined]
    both = invoke("score", *PLAIN, "--heavenly", "--earthly", "--self-drawn")
    assert both.exit_code == 2  # type: ignore[attr-defined]
    assert "exclude each other" in error_line(both)


def test_score_a_tile_of_a_suit_the_table_does_not_play_is_refused() -> None:
    """siren_liangse.toml plays 筒 and 条 ("只有筒、条两种牌共72张，没有万"): a 万 tile cannot be held there (the
    validator's TILE_SUIT), in the hand, as the winning tile or in a meld; nor is there a void suit to declare.
    Twin: the same hand with 条 for 万 wins, a plain hand."""
    assert invoke("score", *TWO_SUITS).exit_code == 0  # type: ignore[attr-defined]
    for args in (
        ("123m456p789p111s2s", "--win", "2s"),
        ("123p456p789p111s2m", "--win", "2m"),
        ("456p2s", "--win", "2s", "--melds", "pong:1s,pong:7p,pong:5m"),
    ):
        result = invoke("score", *args, "--rules", "siren_liangse")
        assert result.exit_code == 2, args  # type: ignore[attr-defined]
        assert "of a suit the table does not play: profile 'siren_liangse' plays only 'ps'" in error_line(result)
    result = invoke("score", *TWO_SUITS, "--que", "m")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "has no void suit to declare" in error_line(result)


def test_score_batch_refuses_the_same_contradictions_line_by_line(tmp_path: Path) -> None:
    """score --batch answers each contradiction as an unreadable line (exit 1), its twin as a win."""
    plain = {"concealed": "123m456m789m111p2p", "win_tile": "2p", "que": "s"}
    requests = [
        {**plain, "profile": "majsoul", "earthly": True},
        {**plain, "profile": "majsoul", "earthly": True, "self_drawn": True},
        {**plain, "profile": "app", "heavenly": True},
        {**plain, "profile": "app", "heavenly": True, "self_drawn": True},
        {"concealed": "123m456p789p111s2s", "win_tile": "2s", "profile": "sanren_liangfang"},
        {"concealed": "123p456p789p111s2s", "win_tile": "2s", "profile": "sanren_liangfang"},
    ]
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(json.dumps(r) for r in requests) + "\n")
    result = invoke("score", "--batch", batch)
    assert result.exit_code == 1  # type: ignore[attr-defined]
    answers = [json.loads(line) for line in result.stdout.splitlines()]  # type: ignore[attr-defined]
    assert [a["win"] for a in answers] == [False, True, False, True, False, True]
    assert [a["fan"] for a in answers[1::2]] == [6, 8, 1]
    assert "earthly_on = first_draw" in answers[0]["error"]
    assert answers[2]["error"] == "'heavenly' (天胡) is a self-drawn win: set 'self_drawn' too"
    assert answers[4]["error"] == "1m is of a suit the table does not play: profile 'sanren_liangfang' plays only 'ps'"


# ---------------------------------------------------------------------------------------------- 3. decoding
def test_a_utf8_bom_is_skipped_by_validate_and_ingest(records: Path, tmp_path: Path) -> None:
    first = records.read_bytes().splitlines(keepends=True)[0]
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + first.replace(b"\n", b"\r\n"))
    checked = invoke("validate", bom)
    assert checked.exit_code == 0, checked.output  # type: ignore[attr-defined]
    assert checked.stdout.startswith("lines 1 = records 1 (valid 1, invalid 0) + not records 0")  # type: ignore[attr-defined]
    done = run("ingest", str(bom), "--warehouse", str(tmp_path / "wh"), "--workers", "1", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("lines read 1 = stored 1 (invalid 0) + rejects 0")


def test_gbk_input_says_how_to_convert_it(records: Path, tmp_path: Path) -> None:
    record = json.loads(records.read_text().splitlines()[0])
    text = json.dumps({"note": "血战到底", **record}, ensure_ascii=False)
    gbk = tmp_path / "gbk.jsonl"
    gbk.write_bytes(text.encode("gbk") + b"\n")
    result = invoke("validate", gbk)
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "not UTF-8 — GBK? convert with iconv -f GBK -t UTF-8" in result.stdout  # type: ignore[attr-defined]
    assert "surrogates" not in result.stdout  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------- 4. no records
@pytest.mark.parametrize("content", [b"", b"\n\n", b"\xef\xbb\xbf\r\n"], ids=["empty", "blank", "bom-only"])
@pytest.mark.parametrize("command", ["validate", "ingest"])
def test_input_without_records_exits_1_saying_so(tmp_path: Path, content: bytes, command: str) -> None:
    path = tmp_path / "nothing.jsonl"
    path.write_bytes(content)
    extra = ["--warehouse", str(tmp_path / "wh"), "--workers", "1", "--quiet"] if command == "ingest" else []
    done = run(command, str(path), *extra)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr == "xuezhan: no records in the given files (only blank lines, or empty)\n"


def test_ingest_of_only_rejected_lines_says_no_records_stored(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(b"{oops\n[1]\n")
    done = run("ingest", str(tmp_path / "bad.jsonl"), "--warehouse", str(tmp_path / "wh"), "--workers", "1")
    assert done.returncode == 1
    assert done.stdout.startswith("lines read 2 = stored 0 (invalid 0) + rejects 2")
    assert done.stderr == "xuezhan: no records stored: every line was rejected (see rejects by code)\n"


@pytest.mark.parametrize(
    "args", [["stats"], ["audit"], ["collusion"], ["stats", "--format", "csv"], ["audit", "--format", "json"]]
)
def test_analysis_of_an_empty_warehouse_exits_2_saying_no_records(empty_warehouse: Path, args: list[str]) -> None:
    result = invoke(*args, "--warehouse", empty_warehouse)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert (
        error_line(result)
        == f"xuezhan: no records in the warehouse {empty_warehouse} (nothing was stored: see its rejects)"
    )
    assert result.stdout == ""  # type: ignore[attr-defined]


def test_report_of_an_empty_warehouse_writes_no_pages(empty_warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = invoke("report", "--warehouse", empty_warehouse, "--out", out, "--quiet")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "no records in the warehouse" in error_line(result)
    assert not out.exists()


# ---------------------------------------------------------------------------------------------- 5. ingest exit codes
def test_ingest_exits_0_when_all_stored_and_1_when_any_line_was_rejected(records: Path, tmp_path: Path) -> None:
    good = run("ingest", str(records), "--warehouse", str(tmp_path / "a"), "--workers", "1", "--quiet")
    assert good.returncode == 0 and good.stderr == ""
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(records.read_bytes() + b"{oops\n")
    some = run("ingest", str(mixed), "--warehouse", str(tmp_path / "b"), "--workers", "1", "--quiet")
    assert some.returncode == 1 and some.stderr == ""
    assert "+ rejects 1 (conflicts 0)" in some.stdout.splitlines()[0]
    assert "rejects by code: SCHEMA_JSON 1" in some.stdout
    again = run("ingest", str(records), "--warehouse", str(tmp_path / "a"), "--workers", "1", "--quiet")
    assert again.returncode == 0, again.stdout  # only duplicates: nothing rejected


def test_ingest_help_documents_its_exit_codes() -> None:
    shown = invoke("ingest", "--help")
    text = " ".join(shown.stdout.split())  # type: ignore[attr-defined]
    assert "Exit 0 when every line was stored, 1 when some lines were rejected" in text
    assert "2 on a usage error" in text


def test_readme_documents_the_ingest_exit_codes() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert "0 all stored, 1 some lines rejected, 2 usage error" in readme


# ---------------------------------------------------------------------------------------------- 6. small ones
@pytest.mark.parametrize("fdr", ["3", "0", "1", "-0.1"])
def test_eval_collusion_refuses_an_fdr_outside_0_1(fdr: str) -> None:
    result = invoke("eval-collusion", "--fdr", fdr, "--quick")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result) == f"xuezhan: --fdr must be in (0, 1), got {float(fdr)}"


@pytest.mark.parametrize("command", ["audit", "collusion"])
def test_top_below_0_is_refused(warehouse: Path, command: str) -> None:
    result = invoke(command, "--warehouse", warehouse, "--top", "-1")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert error_line(result).startswith("xuezhan: Invalid value for '--top'")


def _fake_audit(rows: list[dict[str, object]]) -> SimpleNamespace:
    from pipeline.audit.scoring import Audit

    frame = pl.DataFrame(
        rows,
        schema={
            "hand_id": pl.Utf8,
            "code": pl.Utf8,
            "event": pl.Int64,
            "seat": pl.Int64,
            "player": pl.Utf8,
            "expected": pl.Utf8,
            "actual": pl.Utf8,
            "money": pl.Int64,
            "base": pl.Int64,
            "message": pl.Utf8,
            "position": pl.Int64,
            "reason_of": pl.Utf8,
            "table_id": pl.Utf8,
            "month": pl.Utf8,
        },
    )
    return Audit(frame)  # type: ignore[return-value]


def test_audit_table_prints_no_none_and_singular_counts(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.audit.scoring as scoring

    row = {"hand_id": None, "code": "SCORE_FAN", "event": None, "seat": None, "player": None, "expected": "2"}
    row |= {"actual": "3", "money": 1, "base": 1, "message": "one fan off", "position": 0, "table_id": None}
    row |= {"month": None}
    monkeypatch.setattr(scoring, "audit", lambda con: _fake_audit([row]))
    result = invoke("audit", "--warehouse", warehouse)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    out = result.stdout  # type: ignore[attr-defined]
    assert "None" not in out
    assert out.splitlines()[0] == "1 finding in 1 hand, 1 point at stake"
    assert "–" in out and "1 finding      1 hand        1 point" in out
    assert "1 findings" not in out and "1 hands" not in out


def test_collusion_table_prints_no_none_and_singular_counts(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.audit.screen as screening

    pair = SimpleNamespace(
        players=("p1", None),
        shared_hands=1,
        score=1.0,
        p=0.5,
        q=0.5,
        flagged=False,
        signals={},
        seating={"ratio": 1.0},
        evidence=[{"hand_id": None, "event": None, "why": "a look"}],
    )
    # the command reads pairs and teams in one pass (pipeline.audit.screen.screen)
    monkeypatch.setattr(screening, "screen", lambda con, **_: SimpleNamespace(pairs=(pair,), groups=()))
    result = invoke("collusion", "--warehouse", warehouse, "--min-hands", "1")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    out = result.stdout  # type: ignore[attr-defined]
    assert "None" not in out
    assert out.splitlines()[0] == "1 pair with at least 1 shared hand screened; 0 flagged at FDR 0.05"
    assert "p1 & –" in out and "– event –: a look" in out


def test_version_names_the_package_version_and_the_engine() -> None:
    from importlib import metadata

    import pipeline

    result = invoke("--version")
    assert result.exit_code == 0  # type: ignore[attr-defined]
    engine = "compiled" if pipeline.compiled() else "pure Python"
    assert result.stdout == f"xuezhan {metadata.version('xuezhan')} (engine: {engine})\n"  # type: ignore[attr-defined]


def test_version_falls_back_to_pyproject(monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib
    from importlib import metadata

    import cli

    if not Path(cli.__file__).with_name("pyproject.toml").exists():
        pytest.skip("an installed build (build/compiled): the fallback serves a checkout without metadata")

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    with open(Path(cli.__file__).with_name("pyproject.toml"), "rb") as f:
        assert cli._version() == tomllib.load(f)["project"]["version"]


# ---------------------------------------------------------------------------------------------- 7. every command
# Placeholders: {missing} a path that does not exist, {dir} a folder, {file} a regular file, {unwritable} a path
# under a regular file (cannot be created, even as root), {wh} a real warehouse, {rec} a real record file.
BAD: list[tuple[str, list[str]]] = [
    ("validate missing", ["validate", "{missing}"]),
    ("validate empty dir", ["validate", "{dir}"]),
    ("validate show", ["validate", "{rec}", "--show", "x"]),
    ("ingest missing", ["ingest", "{missing}", "--warehouse", "{dir}/wh"]),
    ("ingest dir input", ["ingest", "{dir}", "--warehouse", "{dir}/wh"]),
    ("ingest wh file", ["ingest", "{rec}", "--warehouse", "{file}"]),
    ("ingest wh unwritable", ["ingest", "{rec}", "--warehouse", "{unwritable}"]),
    ("ingest workers 0", ["ingest", "{rec}", "--warehouse", "{dir}/wh", "--workers", "0"]),
    ("stats missing", ["stats", "--warehouse", "{missing}"]),
    ("stats file", ["stats", "--warehouse", "{file}"]),
    ("stats dir", ["stats", "--warehouse", "{dir}"]),
    ("stats unknown player", ["stats", "--warehouse", "{wh}", "--player", "nobody"]),
    ("report missing", ["report", "--warehouse", "{missing}", "--out", "{dir}/site"]),
    ("report file wh", ["report", "--warehouse", "{file}", "--out", "{dir}/site"]),
    ("report out file", ["report", "--warehouse", "{wh}", "--out", "{file}"]),
    ("report out unwritable", ["report", "--warehouse", "{wh}", "--out", "{unwritable}"]),
    ("report top", ["report", "--warehouse", "{wh}", "--out", "{dir}/site", "--top", "-1"]),
    ("report min-hands", ["report", "--warehouse", "{wh}", "--out", "{dir}/site", "--min-hands", "0"]),
    ("audit missing", ["audit", "--warehouse", "{missing}"]),
    ("audit file", ["audit", "--warehouse", "{file}"]),
    ("audit top", ["audit", "--warehouse", "{wh}", "--top", "-1"]),
    ("collusion missing", ["collusion", "--warehouse", "{missing}"]),
    ("collusion dir", ["collusion", "--warehouse", "{dir}"]),
    ("collusion fdr", ["collusion", "--warehouse", "{wh}", "--fdr", "2"]),
    ("collusion min-hands", ["collusion", "--warehouse", "{wh}", "--min-hands", "0"]),
    ("eval-collusion fdr", ["eval-collusion", "--fdr", "3"]),
    ("eval-collusion workers", ["eval-collusion", "--workers", "0"]),
    ("eval-collusion out dir", ["eval-collusion", "--quick", "--out", "{dir}"]),
    ("eval-collusion out unwritable", ["eval-collusion", "--quick", "--out", "{unwritable}/e.json"]),
    ("simulate hands", ["simulate", "--hands", "0", "--out", "{dir}/s.jsonl"]),
    ("simulate out dir", ["simulate", "--hands", "1", "--out", "{dir}"]),
    ("simulate out suffix", ["simulate", "--hands", "1", "--out", "{dir}/s.txt"]),
    ("simulate out unwritable", ["simulate", "--hands", "1", "--out", "{unwritable}/s.jsonl"]),
    ("simulate players", ["simulate", "--hands", "1", "--out", "{dir}/s.jsonl", "--players", "2"]),
    ("simulate inject", ["simulate", "--hands", "1", "--out", "{dir}/s.jsonl", "--inject", "collude=9"]),
    ("simulate profile", ["simulate", "--hands", "1", "--out", "{dir}/s.jsonl", "--rules", "nope"]),
    ("score batch missing", ["score", "--batch", "{missing}"]),
    ("score batch dir", ["score", "--batch", "{dir}"]),
    ("score cap", ["score", *WIN, "--cap", "x"]),
    ("score profile", ["score", *WIN, "--rules", "nope"]),
    ("score no win", ["score", "111m"]),
    ("rules show", ["rules", "show", "nope"]),
    ("unknown command", ["nope"]),
]


@pytest.mark.parametrize(("name", "template"), BAD, ids=[name for name, _ in BAD])
def test_every_command_refuses_bad_paths_and_values_in_one_line(
    name: str, template: list[str], tmp_path: Path, warehouse: Path, records: Path
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    regular = tmp_path / "regular"
    regular.write_text("x\n")
    values = {
        "missing": str(tmp_path / "missing"),
        "dir": str(folder),
        "file": str(regular),
        "unwritable": str(regular / "below"),
        "wh": str(warehouse),
        "rec": str(records),
    }
    result = invoke(*(arg.format(**values) for arg in template))
    assert result.exit_code in (1, 2), result.output  # type: ignore[attr-defined]
    line = error_line(result)
    assert "None" not in line
    if result.exit_code == 2:  # type: ignore[attr-defined]
        assert result.stdout == ""  # type: ignore[attr-defined]
    assert sorted(p.name for p in folder.iterdir()) == []  # nothing written on the way out


@pytest.mark.parametrize("profile", ["chengdo", '{"profile": "chengdu", "cpa": 4}', "{not json"])
def test_a_profile_typo_is_refused_before_anything_is_written(records: Path, tmp_path: Path, profile: str) -> None:
    # it used to reject every record as RULESET_UNKNOWN and exit 0, leaving the rejects behind
    for command in (["ingest", str(records), "--warehouse", str(tmp_path / "wh")], ["validate", str(records)]):
        result = invoke(*command, "--rules", profile)
        assert result.exit_code == 2, (command, profile)  # type: ignore[attr-defined]
        assert error_line(result).startswith("xuezhan: --rules")
    assert not (tmp_path / "wh").exists()
