"""The benchmark harness's own parts (tools/bench.py), fast: the plan each option makes, the floors and their
table, the corpus copies and their ids, the JSON written, the cache key. No benchmark is run."""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

import orjson
import pytest

import pipeline
from tools import bench


def _plan(*argv: str) -> bench.Plan:
    return bench.plan(bench.parse_args(list(argv)))


def test_plans() -> None:
    full, quick, mid = _plan(), _plan("--quick"), _plan("--skip-1m")
    assert full.sizes() == [20_000, 200_000, 1_000_000] and not full.quick
    assert quick.quick and quick.sizes() == [4_000, 20_000] and quick.validate_records < full.validate_records
    assert mid.sizes() == [20_000, 200_000]
    assert _plan("--rebuild-1m").rebuild_1m and not full.rebuild_1m
    assert bench.parse_args(["--compiled", "build/compiled"]).compiled == Path("build/compiled")
    assert bench.parse_args(["--timeout", "60"]).timeout == 60 and bench.parse_args([]).mem_limit_mb == 0
    with pytest.raises(SystemExit):
        bench.parse_args(["--quik"])


def test_floors_name_the_sizes_and_the_default_engine() -> None:
    full = {f.key: f for f in bench.floors(_plan(), "compiled")}
    assert full["compiled_validate_parse_cost_ratio"].bound == 5
    assert full["compiled_validate_records_per_s"].op == ">=" and full["compiled_validate_records_per_s"].bound == 6_000
    assert full["compiled_ingest_worker_scaling"].bound == 1.7
    assert full["ingest_rss_ratio_200k"].bound == 1.3 and full["ingest_rss_mb_200k"].op == "<"
    assert full["collusion_rss_ratio_200k"].bound == full["report_rss_ratio_200k"].bound == 1.2
    assert full["report_s_200k"].bound == 30
    quick = {f.key for f in bench.floors(_plan("--quick"), "pure")}
    assert {"pure_validate_parse_cost_ratio", "report_s_20k", "ingest_rss_ratio_20k"} <= quick


@pytest.mark.parametrize(
    ("op", "measured", "met"),
    [
        ("<=", 5, True),
        ("<=", 5.01, False),
        ("<", 1500, False),
        ("<", 1499, True),
        (">=", 6000, True),
        (">=", 5999, False),
    ],
)
def test_floor_check(op: str, measured: float, met: bool) -> None:
    bound = {"<=": 5, "<": 1500, ">=": 6000}[op]
    assert bench.Floor("f", "k", op, bound).check({"k": measured}) == {
        "name": "f",
        "measured": measured,
        "floor": f"{op} {bound}",
        "met": met,
    }


@pytest.mark.parametrize("results", [{}, {"k": "failed: out of memory"}, {"k": None}, {"k": True}])
def test_a_missing_or_failed_figure_is_not_met(results: dict[str, object]) -> None:
    assert bench.Floor("f", "k", "<=", 5).check(results)["met"] is False


def test_floor_table_says_met_and_not_met() -> None:
    checked = [bench.Floor("fast", "a", ">=", 6000).check({"a": 7_200}), bench.Floor("slim", "b", "<=", 1.2).check({})]
    lines = bench.floor_table(checked).splitlines()
    assert lines[0].split()[-1] == "met" and "7,200" in lines[0]
    assert lines[1].endswith("NOT met") and "None" in lines[1]


def _tiny(path: Path, n: int) -> list[dict[str, object]]:
    records: list[dict[str, object]] = [
        {"hand_id": f"h{i}", "session_id": f"s{i // 2}", "events": [i]} for i in range(n - 1)
    ]
    records.append({"hand_id": f"h{n - 1}", "events": []})  # no session
    with gzip.open(path, "wb") as f:
        for r in records:
            f.write(orjson.dumps(r) + b"\n")
    return records


def _read(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rb") as f:
        return [orjson.loads(line) for line in f]


def test_scaled_corpus_retags_every_copy_and_renames_its_players(tmp_path: Path) -> None:
    base = tmp_path / "sim-5-1.jsonl.gz"
    records = _tiny(base, 5)
    seated = ["p1", "p2", "p3", "p4"]
    for i, r in enumerate(records[:-1]):  # the last has no players and no table
        r["players"] = seated[i % 4 :] + seated[: i % 4]
        r["table_id"] = f"t{i % 2}"
    with gzip.open(base, "wb") as f:
        f.write(b"".join(orjson.dumps(r) + b"\n" for r in records))
    scaled = bench.scaled_corpus(base, 3)
    assert scaled.name == "sim-5-1-x3rt.jsonl.gz"
    out = _read(scaled)
    assert len(out) == 15 and len({r["hand_id"] for r in out}) == 15
    assert out[:5] == [{**r, "hand_id": f"{r['hand_id']}-c0", **_session(r, 0)} for r in records]  # copy 0: as it is
    assert out[-1] == {"hand_id": "h4-c2", "events": []}
    renames = []
    for k in (1, 2):
        copy = out[5 * k : 5 * k + 5]
        assert [{x: v for x, v in r.items() if x != "players"} for r in copy] == [
            {**{x: v for x, v in r.items() if x != "players"}, "hand_id": f"{r['hand_id']}-c{k}", **_session(r, k)}
            for r in records
        ]
        pairs = {
            (a, b)
            for r, c in zip(records[:-1], copy[:-1], strict=True)
            for a, b in zip(cast(list[str], r["players"]), cast(list[str], c["players"]), strict=True)
        }
        rename = dict(pairs)
        assert len(pairs) == 4 and sorted(rename) == sorted(rename.values()) == seated  # one renaming per copy
        renames.append(rename)
    assert renames[0] != renames[1] and renames[0] != dict(zip(seated, seated, strict=True))
    scaled.write_bytes(b"cached")  # made once
    assert bench.scaled_corpus(base, 3).read_bytes() == b"cached"


def _session(record: dict[str, object], k: int) -> dict[str, object]:
    """The ids copy ``k`` retags besides the hand's: its session's and its table's."""
    out: dict[str, object] = {}
    for field in ("session_id", "table_id"):
        if field in record:
            out[field] = f"{record[field]}-c{k}"
    return out


def test_head_corpus(tmp_path: Path) -> None:
    base = tmp_path / "sim-5-1.jsonl.gz"
    records = _tiny(base, 5)
    head = bench.head_corpus(base, 2)
    assert head.name == "sim-5-1-head2.jsonl.gz" and _read(head) == records[:2]


def test_tier_corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "CACHE", tmp_path)
    monkeypatch.setattr(bench, "BASE_HANDS", 6)
    base = tmp_path / "sim-6-8080.jsonl.gz"
    _tiny(base, 6)
    full = bench.Plan(quick=False, base=6, copies=(1, 10), validate_records=6)
    quick = bench.Plan(quick=True, base=3, copies=(1, 10), validate_records=3)
    assert bench.tier_corpus(full, 1) == base
    assert len(_read(bench.tier_corpus(full, 10))) == 60
    assert bench.tier_corpus(quick, 1).name == "sim-6-8080-head3.jsonl.gz"
    assert len(_read(bench.tier_corpus(quick, 10))) == 30


def test_the_cached_warehouse_is_shared_between_benches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Benches of other worktrees (other sources: other keys) share the cache: a stale warehouse another bench
    holds stays, an unheld one and a killed run's unfinished one go; the new one is ingested into this
    process's own directory, renamed into place and then read from the cache."""
    monkeypatch.setattr(bench, "CACHE", tmp_path)
    monkeypatch.setattr(bench, "_HELD", {})
    corpus = tmp_path / "sim-6-8080-x50.jsonl.gz"
    monkeypatch.setattr(bench, "tier_corpus", lambda p, copies: corpus)
    monkeypatch.setattr(bench, "warehouse_key", lambda path: "new")
    monkeypatch.setattr(bench, "_stored_hands", lambda d: 300)
    made: list[Path] = []

    def ingest(path: Path, warehouse: Path, *args: object, **kwargs: object) -> bench.Run:
        (warehouse / "hands").mkdir(parents=True)
        made.append(warehouse)
        return bench.Run(1.0, 1.0, 1.0)

    monkeypatch.setattr(bench, "ingest", ingest)
    held, stale, killed = (
        tmp_path / f"{n}-sim-6-8080-x50-{k}"
        for n, k in [("warehouse", "a"), ("warehouse", "b"), ("tmp-warehouse", "c-1")]
    )
    for d in (held, stale, killed):
        d.mkdir()
    other = os.open(tmp_path / f"{held.name}.lock", os.O_RDWR | os.O_CREAT)  # another bench reading it
    fcntl.flock(other, fcntl.LOCK_SH)
    p = bench.Plan(quick=False, base=6, copies=(1, 10, 50), validate_records=6)
    target, run = bench.cached_warehouse(p, 50, None)
    assert target == tmp_path / "warehouse-sim-6-8080-x50-new" and (target / "hands").is_dir() and run is not None
    assert made[0].name == f"tmp-{target.name}-{os.getpid()}" and not made[0].exists()
    assert held.is_dir() and not stale.exists() and not killed.exists()
    assert bench.cached_warehouse(p, 50, None) == (target, None)
    os.close(other)
    assert bench._remove_unused(held) and not held.exists()
    assert not bench._remove_unused(target) and target.is_dir()  # this bench holds it until it exits
    bench._release(target)
    assert bench._remove_unused(target) and not target.exists()


def test_ingest_workers_take_turns_and_the_better_run_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default install's 1- and 2-worker ingests alternate (1, 2, 2, 1) and each rate is the better of its
    two runs; the other engine runs once; the warehouse kept for the analytics is the last 2-worker run's, and
    its memory is the base size's figure; a failed run is recorded without losing its turn's partner."""
    monkeypatch.setattr(bench, "tier_corpus", lambda p, copies: tmp_path / f"x{copies}.jsonl.gz")
    seconds = iter([4.0, 3.0, 2.0, 1.5, 2.5, 9.0])  # pure 1w; compiled 1w, 2w, 2w, 1w; the 10x corpus
    runs: list[tuple[str, int, str]] = []

    def ingest(path: Path, warehouse: Path, workers: int, engine: str, *args: object, **kw: object) -> bench.Run:
        warehouse.mkdir(parents=True)
        runs.append((engine, workers, warehouse.name))
        s = next(seconds)
        if s == 2.5:
            raise RuntimeError("timed out after 1 s")
        return bench.Run(s, s, 100.0 * len(runs))

    monkeypatch.setattr(bench, "ingest", ingest)
    monkeypatch.setattr(bench, "engines", lambda compiled: ["compiled", "pure"])
    p = bench.Plan(quick=False, base=600, copies=(1, 10, 50), validate_records=6)
    out = bench.bench_ingest(p, None, tmp_path)
    assert [(e, w) for e, w, _ in runs] == [
        ("pure", 1),
        ("compiled", 1),
        ("compiled", 2),
        ("compiled", 2),
        ("compiled", 1),
        ("compiled", 2),
    ]
    assert out["compiled_ingest_records_per_s_1w_runs"] == [200]  # the second 1-worker run timed out
    assert out["compiled_ingest_records_per_s_2w_runs"] == [300, 400]
    assert out["compiled_ingest_records_per_s_2w"] == 400 and out["compiled_ingest_records_per_s_1w"] == 200
    assert out["compiled_ingest_worker_scaling"] == 2.0 and out["compiled_vs_pure_ingest_1w"] == 1.33
    assert runs[3][2] == "wh-600" and out["ingest_rss_mb_600"] == 400  # the last 2-worker run's warehouse
    assert (tmp_path / "wh-600").is_dir() and not (tmp_path / "wh-compiled-2w").exists()
    assert out["ingest_rss_mb_6k"] == 600 and out["ingest_rss_ratio_6k"] == 1.5


def test_results_json(tmp_path: Path) -> None:
    out = tmp_path / "bench-results.json"
    checked = [f.check({"report_s_200k": 12.5}) for f in bench.floors(_plan(), "compiled")]
    bench.write_results(out, {"quick": False, "report_s_200k": 12.5}, checked)
    data = json.loads(out.read_text())
    assert data["report_s_200k"] == 12.5
    assert all(set(f) == {"name", "measured", "floor", "met"} for f in data["floors"])
    report = next(f for f in data["floors"] if f["name"] == "report on 200k hands, s")
    assert report == {"name": "report on 200k hands, s", "measured": 12.5, "floor": "<= 30", "met": True}
    assert sum(f["met"] for f in data["floors"]) == 1


def test_engines_and_their_environment(tmp_path: Path) -> None:
    assert bench.engines(None) == ["pure"] and bench.engines(tmp_path) == ["pure"]  # not built
    game = tmp_path / "pipeline" / "game"
    game.mkdir(parents=True)
    (game / "state.py").touch()  # a build that fell back to pure Python
    assert bench.engines(tmp_path) == ["pure"]
    (game / f"state{bench.EXTENSION_SUFFIXES[0]}").touch()
    assert bench.engines(tmp_path) == ["compiled", "pure"]
    assert bench.engine_env("compiled", tmp_path)["PYTHONPATH"] == str(tmp_path.resolve())
    assert bench.engine_env("pure", tmp_path)["PYTHONPATH"] == str(bench.ROOT)
    cmd = bench.cli_cmd("pure", "stats", "--warehouse", "w")
    assert cmd[1] == "-P" and "compiled() is False" in cmd[3] and cmd[4:] == ["stats", "--warehouse", "w"]


def test_a_build_older_than_the_sources_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A compiled build made before the sources changed would measure other code (a run did: the morning's build
    took 159 s and 1.6 GB for the report, the evening's sources 40 s and 0.8 GB): the bench says so and stops."""
    source, build = tmp_path / "src", tmp_path / "build"
    for tree in (source, build):
        (tree / "pipeline" / "game").mkdir(parents=True)
        (tree / "pipeline" / "sql").mkdir()
        (tree / "cli.py").write_text("app = None\n")
        (tree / "pipeline" / "game" / "state.py").write_text("x = 1\n")
        (tree / "pipeline" / "sql" / "q.sql").write_text("SELECT 1\n")
    (build / "pipeline" / "game" / f"state{bench.EXTENSION_SUFFIXES[0]}").touch()
    assert bench.stale_files(build, source) == []
    (source / "pipeline" / "sql" / "q.sql").write_text("SELECT 2\n")
    (source / "pipeline" / "new.py").write_text("y = 2\n")
    assert bench.stale_files(build, source) == ["pipeline/new.py", "pipeline/sql/q.sql"]
    monkeypatch.setattr(bench, "ROOT", source)
    ran: list[str] = []
    monkeypatch.setattr(bench, "sections", lambda *_args: ran.append("sections") or [])
    assert bench.main(["--compiled", str(build), "--out", str(tmp_path / "r.json")]) == 2
    assert not ran and not (tmp_path / "r.json").exists()
    err = capsys.readouterr().err
    assert "older than the sources (pipeline/new.py, pipeline/sql/q.sql)" in err and "make compiled" in err


def test_measure_reports_a_failure_and_a_peak(tmp_path: Path) -> None:
    env = dict(os.environ)
    hold = "import time; x = bytearray(64 << 20); x[::4096] = b'1' * len(x[::4096]); time.sleep(0.6)"
    run = bench.measure([bench.sys.executable, "-c", hold], env)  # held longer than a sample
    assert run.rss_mb > 60 and run.seconds > 0
    with pytest.raises(RuntimeError, match="failed: SystemExit: boom"):
        bench.measure([bench.sys.executable, "-c", "raise SystemExit('SystemExit: boom')"], env)
    with pytest.raises(RuntimeError, match="timed out"):
        bench.measure([bench.sys.executable, "-c", "import time; time.sleep(5)"], env, timeout=0.3)
    grow = "import time; x = bytearray(200 << 20); x[::4096] = b'1' * len(x[::4096]); time.sleep(5)"
    with pytest.raises(RuntimeError, match="killed above 100 MB"):
        bench.measure([bench.sys.executable, "-c", grow], env, mem_limit_mb=100)


def test_a_grown_bench_does_not_lend_its_size_to_what_it_measures() -> None:
    """A bench that grew (to 400 MB here, as writing the 1M corpus does) measures a small command as small, and
    as more than nothing: a child's ru_maxrss starts from its parent's high-water mark (Linux), which read 1,286
    MB for every command of a run after the corpus was written; the command here exits before the first /proc
    sample, so its peak is the kernel's figure, which measure() takes from a fresh launcher, not the bench."""
    script = (
        "import sys; from tools import bench\n"
        "x = bytearray(400 << 20); x[::4096] = b'1' * len(x[::4096]); del x\n"
        "print(bench.measure([sys.executable, '-c', 'pass'], dict(bench.os.environ)).rss_mb)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(bench.ROOT)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert 0 < float(out.stdout) < 200, out.stdout


def _running(pid: int) -> bool:
    """Is ``pid`` a live process? A killed command whose parent (measure's launcher) died with it is a zombie
    until PID 1 reaps it: dead, not running."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_stopped_bench_kills_the_command_it_measures(tmp_path: Path) -> None:
    """SIGTERM to the bench while measure() waits: the command (in its own session, which a terminal's Ctrl-C
    does not reach either) is killed, not left running alone."""
    pid_file = tmp_path / "pid"
    child = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    waiting = (
        "import signal, sys, os\n"
        "from tools import bench\n"
        "signal.signal(signal.SIGTERM, bench._terminated)\n"
        f"bench.measure([sys.executable, '-c', {child!r}], dict(os.environ), timeout=120, mem_limit_mb=1000)\n"
    )
    # the harness is in the source tree (tools/), after the build under test on the path
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(bench.ROOT)) if p)
    proc = subprocess.Popen([sys.executable, "-c", waiting], env={**os.environ, "PYTHONPATH": path})
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    measured = int(pid_file.read_text())
    time.sleep(0.5)  # the bench is waiting on it (as it does for hours at 1M hands)
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
        assert not _running(measured)
    finally:  # a failure leaves no sleeper behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(measured, signal.SIGKILL)


def test_hash_files_follows_contents(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("x = 1\n")
    first = bench.hash_files(tmp_path, [a])
    a.write_text("x = 2\n")
    assert bench.hash_files(tmp_path, [a]) != first


def test_sections_are_chosen_by_name_and_analytics_needs_ingest(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.parse_args([]).sections == list(bench.SECTIONS)
    assert bench.parse_args(["--sections", "ingest,analytics"]).sections == ["ingest", "analytics"]
    for wrong in ("analytics", "nope", ""):
        with pytest.raises(SystemExit):
            bench.parse_args(["--sections", wrong])
    assert "--sections" in capsys.readouterr().err
    p = bench.plan(bench.parse_args(["--quick"]))
    titles = [t for t, _ in bench.sections(p, None, Path("/nonexistent"), {}, ["win", "analytics"])]
    assert [t.split(":")[0] for t in titles] == ["win check", "analytics"]


def test_instructions_need_valgrind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench.shutil, "which", lambda name: None)
    assert bench.bench_instructions(_plan("--quick"), None) == {
        "instructions": "valgrind not found (apt-get install valgrind)"
    }


def test_callgrind_costs_are_inclusive_and_stages_add_up(tmp_path: Path) -> None:
    """The parts of a callgrind file the instructions section reads: the total, and what each function's calls cost
    (a recursive call counted once); the stages of the compiled engine and what is left."""
    out = tmp_path / "cg.out"
    out.write_text(
        "events: Ir\nfn=main\n0 10\ncfn=CPyDef_record___parse_record\ncalls=1 0\n0 40\n"
        "cfn=CPyDef_state___HandState___apply\ncalls=3 0\n0 90\n"
        "fn=CPyDef_state___HandState___apply\n0 60\ncfn=CPyDef_state___HandState___apply\ncalls=1 0\n0 30\n"
        "fn=CPyDef_record___parse_record\n0 40\ntotals: 140\n"
    )
    total, inclusive = bench.callgrind_costs(out)
    assert total == 140 and inclusive == {"CPyDef_record___parse_record": 40, "CPyDef_state___HandState___apply": 90}
    figures = bench.stage_figures("compiled", 1, 20, 160, inclusive)
    assert figures["compiled_instructions_per_record_read"] == 40
    assert figures["compiled_instructions_per_record_replay"] == 90
    assert figures["compiled_instructions_per_record_rest"] == 160 - 20 - 40 - 90
    assert figures["compiled_instructions_validate_parse_ratio"] == 8.0


def test_the_players_corpus_keeps_each_session_at_one_table_of_many_players(tmp_path: Path) -> None:
    """The many-player tier's corpus: the same records, each session's players renamed into one group (a session
    keeps its table), and the room's players spread over many groups."""
    base = tmp_path / "base.jsonl.gz"
    records = [
        {"hand_id": f"h{k}", "session_id": f"s{k // 4}", "players": ["p1", "p2", "p3", "p4"], "events": []}
        for k in range(400)
    ]
    with gzip.open(base, "wb") as f:
        f.write(b"".join(orjson.dumps(r) + b"\n" for r in records))
    path = bench.players_corpus(base, groups=84)
    assert path.name == "base-g84.jsonl.gz" and bench.players_corpus(base, groups=84) == path  # cached
    with gzip.open(path, "rb") as f:
        got = [orjson.loads(line) for line in f]
    assert [r["hand_id"] for r in got] == [r["hand_id"] for r in records]
    by_session: dict[str, set[str]] = {}
    for r in got:
        by_session.setdefault(r["session_id"], set()).update(r["players"])
        assert [name.split("-g")[0] for name in r["players"]] == ["p1", "p2", "p3", "p4"]
    assert all(len(names) == 4 for names in by_session.values())
    assert len(set().union(*by_session.values())) > 4 * 40  # 100 sessions over 84 groups


@pytest.mark.skipif(not pipeline.compiled(), reason="names the functions of the compiled build")
def test_the_instruction_stages_name_functions_of_the_compiled_build() -> None:
    """Each stage of the instruction count is a function the compiled library defines: a renamed function would
    otherwise drop out of its stage silently (callgrind reports no cost for a name it never saw)."""
    libraries = list(Path(pipeline.__file__).resolve().parents[1].glob("*__mypyc*"))
    assert libraries, "no compiled library beside the package"
    data = b"".join(lib.read_bytes() for lib in libraries)
    missing = [name for names in bench.STAGES.values() for name in names if name.encode() + b"\0" not in data]
    assert not missing


def test_a_cloned_warehouse_holds_what_an_ingest_of_the_copies_stores(tmp_path: Path) -> None:
    """bench-scale's 5M warehouse is cloned from the 1M one (``clone_warehouse``), not ingested: here a warehouse
    of 2 copies of a simulated corpus, cloned twice over, against an ingest of its 4 copies. Every table's rows are
    the same (in any order), but for what the clone cannot know: the run's id, and the digest of the lines of
    the copies it made up (copies 0 and 1 are the same lines in both corpora, so theirs are equal too)."""
    from pipeline.ingest.run import ingest
    from pipeline.ingest.warehouse import Warehouse
    from pipeline.simulate.tables import SimConfig, write
    from schemas.tables import TABLES
    from tools import bench_scale

    base = tmp_path / "sim-12-3.jsonl.gz"
    write(SimConfig(hands=12, seed=3, players=6), base)
    for copies in (2, 4):
        ingest([str(bench.scaled_corpus(base, copies))], tmp_path / f"x{copies}", workers=1)
    bench_scale.clone_warehouse(tmp_path / "x2", 2, 4, tmp_path / "cloned")

    def rows(warehouse: Path, table: str) -> list[str]:
        con = Warehouse(warehouse).connect()
        try:
            got = con.sql(f"SELECT * FROM {table}").to_arrow_table().to_pylist()
        finally:
            con.close()
        for r in got:
            r.pop("ingest_run", None)
            if table == "hands" and not r["hand_id"].endswith(("-c0", "-c1")):
                r["record_sha256"] = None
        return sorted(repr(r) for r in got)

    for table in TABLES:
        if table != "ingest_runs":
            want = rows(tmp_path / "x4", table)
            assert rows(tmp_path / "cloned", table) == want, table
            assert table not in ("hands", "events", "player_hands") or len(want) >= 48
    con = Warehouse(tmp_path / "cloned").connect()
    try:
        run = con.execute("SELECT inputs, lines_read, records_stored, rejects FROM ingest_runs").fetchall()
        digests = con.execute("SELECT count(DISTINCT record_sha256) FROM hands").fetchone()
    finally:
        con.close()
    assert run == [([str(bench.scaled_corpus(base, 4))], 48, 48, 0)] and digests == (48,)
    with pytest.raises(ValueError, match="not a multiple"):
        bench_scale.clone_warehouse(tmp_path / "x2", 2, 5, tmp_path / "other")
