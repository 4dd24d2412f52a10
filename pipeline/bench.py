"""Benchmarks (``make bench``; ``make bench QUICK=1`` for a quick look, under two minutes). Not tests: these
machines are noisy, so every target is a ratio of two things measured side by side in the same run.

Prints a table and writes ``bench-results.json`` (ignored by git). The corpus is made by the simulator with
a fixed seed and cached outside the repository (``$XUEZHAN_BENCH_CACHE``, default ``~/.cache/xuezhan-bench``):
20,000 simulated hands, and a 200,000-hand corpus made of ten copies of them under new hand ids (the
validation work per record is the same; only the ids differ).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from pipeline.rules.hand import is_seven_pairs, is_standard, is_standard_recursive

CACHE = Path(os.environ.get("XUEZHAN_BENCH_CACHE", Path.home() / ".cache" / "xuezhan-bench"))
SEED = 8080


# ---------------------------------------------------------------------------------------------- corpus
def _simulate_part(args: tuple[int, int, Path]) -> Path:
    from pipeline.simulate.tables import SimConfig, write

    hands, seed, out = args
    write(SimConfig(hands=hands, seed=seed, players=24), out)
    return out


def corpus(hands: int) -> Path:
    """A cached ``.jsonl.gz`` of ``hands`` simulated hands (two halves simulated in parallel)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"sim-{hands}-{SEED}.jsonl.gz"
    if path.exists():
        return path
    half = hands // 2
    parts = [
        (half, SEED, CACHE / f"part-a-{hands}.jsonl.gz"),
        (hands - half, SEED + 1, CACHE / f"part-b-{hands}.jsonl.gz"),
    ]
    print(f"  (simulating a {hands}-hand corpus into {CACHE}, once)", flush=True)
    with ProcessPoolExecutor(max_workers=2) as pool:
        files = list(pool.map(_simulate_part, parts))
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wb", compresslevel=3) as out:
        for tag, f in zip("ab", files, strict=True):
            with gzip.open(f, "rb") as src:
                for line in src:
                    out.write(_retag(line, tag))
            f.unlink()
    tmp.replace(path)
    return path


def _retag(line: bytes, tag: str) -> bytes:
    """Give a record new hand and session ids (suffix ``tag``), so copies are distinct records."""
    obj = orjson.loads(line)
    obj["hand_id"] = f"{obj['hand_id']}-{tag}"
    if "session_id" in obj:
        obj["session_id"] = f"{obj['session_id']}-{tag}"
    return orjson.dumps(obj) + b"\n"


def scaled_corpus(base: Path, copies: int) -> Path:
    path = base.with_name(base.name.replace(".jsonl.gz", f"-x{copies}.jsonl.gz"))
    if path.exists():
        return path
    print(f"  (writing {copies} copies of {base.name}, once)", flush=True)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wb", compresslevel=3) as out:
        for k in range(copies):
            with gzip.open(base, "rb") as src:
                for line in src:
                    out.write(_retag(line, f"c{k}"))
    tmp.replace(path)
    return path


def _lines(path: Path, limit: int | None = None) -> list[bytes]:
    out = []
    with gzip.open(path, "rb") as f:
        for line in f:
            out.append(line.rstrip(b"\n"))
            if limit is not None and len(out) >= limit:
                break
    return out


# ---------------------------------------------------------------------------------------------- sections
SIDE_BY_SIDE = 250  # records a block in bench_validate


def bench_validate(quick: bool) -> dict[str, Any]:
    """Replay validation vs parse only, the same lines, one process (the engine this process imports)."""
    from pipeline.validate import validate

    lines = _lines(corpus(4_000 if quick else 20_000), 1_500 if quick else 10_000)
    parse_s = validate_s = 0.0
    bad = 0
    for first in range(0, len(lines), SIDE_BY_SIDE):  # parse a block, then validate it: a slow spell of the
        block = lines[first : first + SIDE_BY_SIDE]  # machine weighs on both sides of the ratio alike
        start = time.perf_counter()
        for line in block:
            orjson.loads(line)
        parsed = time.perf_counter()
        for line in block:
            bad += not validate(orjson.loads(line)).ok
        parse_s += parsed - start
        validate_s += time.perf_counter() - parsed
    assert bad == 0, f"{bad} simulated records did not validate"
    return {
        "validate_records": len(lines),
        "parse_records_per_s": round(len(lines) / parse_s),
        "validate_records_per_s": round(len(lines) / validate_s),
        "validate_parse_cost_ratio": round(validate_s / parse_s, 1),
    }


# A child process on the compiled build: PYTHONPATH points at it, the child runs outside the source tree
# (`python -c` puts the working directory first on sys.path) and asserts what it imported.
ASSERT_COMPILED = "import pipeline; assert pipeline.compiled(), 'not the compiled engine'; "


def _is_built(compiled: Path) -> bool:
    return (compiled / "pipeline").is_dir()


def _compiled_env(compiled: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(compiled.resolve())}


def bench_validate_compiled(quick: bool, compiled: Path | None, pure_per_s: float | None = None) -> dict[str, Any]:
    """The same measurement in a process that imports the compiled engine (``make compiled``), beside the
    pure-Python figures of this run."""
    if compiled is None or not _is_built(compiled):
        return {"compiled": "not built (make compiled)"}
    code = ASSERT_COMPILED + (
        "import json, sys; from pipeline.bench import bench_validate; "
        "print(json.dumps(bench_validate(sys.argv[1] == '1')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "1" if quick else "0"],
        capture_output=True,
        text=True,
        env=_compiled_env(compiled),
        cwd=tempfile.gettempdir(),
    )
    if out.returncode != 0:
        return {"compiled": f"failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"}
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    result = {f"compiled_{key}": value for key, value in figures.items() if key != "validate_records"}
    if pure_per_s:
        result["compiled_speedup"] = round(figures["validate_records_per_s"] / pure_per_s, 2)
    return result


def bench_simulate(quick: bool) -> dict[str, Any]:
    """Hands simulated per second on one core (bots deciding, the hand state checking every action)."""
    from pipeline.simulate.tables import SimConfig, simulate

    hands = 200 if quick else 1_000
    lines, _ = simulate(SimConfig(hands=hands, seed=SEED + 7, players=16))
    start = time.process_time()
    made = sum(1 for _ in lines)
    seconds = time.process_time() - start
    return {"simulate_hands": made, "simulate_hands_per_s_one_core": round(made / seconds, 1)}


def _random_hands(n: int, seed: int) -> list[list[int]]:
    """Half winning hands (sets + a pair in at most two suits), half random 14-tile hands."""
    rng = random.Random(seed)
    hands: list[list[int]] = []
    while len(hands) < n:
        counts = [0] * 27
        suits = rng.sample(range(3), 2)
        if len(hands) % 2 == 0:
            for _ in range(4):
                suit = rng.choice(suits)
                if rng.random() < 0.5:
                    r = rng.randrange(7)
                    for k in range(3):
                        counts[suit * 9 + r + k] += 1
                else:
                    counts[suit * 9 + rng.randrange(9)] += 3
            counts[rng.choice(suits) * 9 + rng.randrange(9)] += 2
            if max(counts) > 4:
                continue
        else:
            pool = [s * 9 + r for s in suits for r in range(9) for _ in range(4)]
            for k in rng.sample(pool, 14):
                counts[k] += 1
        hands.append(counts)
    return hands


def _best_rates(fns: list[Callable[[list[int]], bool]], hands: list[list[int]], repeat: int) -> list[tuple[float, int]]:
    """Checks per second of each ``fn`` over ``hands`` (the best of ``repeat`` rounds, the fns taking turns
    within a round) and how many hands each found winning."""
    best = [float("inf")] * len(fns)
    wins = [0] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            wins[i] = sum(1 for h in hands if fn(h))
            best[i] = min(best[i], time.perf_counter() - start)
    return [(len(hands) / b, w) for b, w in zip(best, wins, strict=True)]


def bench_win_check(quick: bool) -> dict[str, Any]:
    hands = _random_hands(4_000 if quick else 40_000, seed=7)

    def table(h: list[int]) -> bool:
        return is_seven_pairs(h) or is_standard(h)

    def recursive(h: list[int]) -> bool:
        return is_seven_pairs(h) or is_standard_recursive(h)

    (table_rate, table_wins), (rec_rate, rec_wins) = _best_rates([table, recursive], hands, 3)
    assert table_wins == rec_wins, "the two methods disagree"
    return {
        "win_check_hands": len(hands),
        "win_checks_per_s_table": round(table_rate),
        "win_checks_per_s_recursive": round(rec_rate),
        "win_check_speedup": round(table_rate / rec_rate, 2),
    }


def _peak_rss_mb(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, float]:
    """Run ``cmd``; return (seconds, peak summed RSS in MB of the process and all its descendants)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.decode()[-2000:]}")
    return time.perf_counter() - start, peak / 1024


def _tree_rss(pid: int) -> int:
    """Summed VmRSS (kB) of ``pid`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def _ingest_cmd(path: Path, warehouse: Path, workers: int, *, compiled: bool = False) -> list[str]:
    check = ASSERT_COMPILED if compiled else ""
    return [
        sys.executable,
        "-c",
        f"{check}from cli import app; app()",
        "ingest",
        str(path),
        "--warehouse",
        str(warehouse),
        "--workers",
        str(workers),
        "--quiet",
    ]


def bench_ingest(quick: bool, compiled: Path | None = None) -> dict[str, Any]:
    """Ingest end to end with 1 and 2 workers (records/s), and peak memory at 20k vs 200k hands; with a
    compiled build, 1 worker again on the compiled engine."""
    base = corpus(4_000 if quick else 20_000)
    small = Path(tempfile.mkdtemp(prefix="xz-bench-"))
    try:
        sample = small / "sample.jsonl.gz"
        n = 4_000 if quick else 20_000
        with gzip.open(sample, "wb", compresslevel=3) as out:
            for line in _lines(base, n):
                out.write(line + b"\n")
        results: dict[str, Any] = {"ingest_records": n}
        for workers in (1, 2):
            wh = small / f"wh{workers}"
            seconds, rss = _peak_rss_mb(_ingest_cmd(sample, wh, workers))
            results[f"ingest_records_per_s_{workers}w"] = round(n / seconds)
            results[f"ingest_rss_mb_{workers}w"] = round(rss)
        results["worker_scaling"] = round(results["ingest_records_per_s_2w"] / results["ingest_records_per_s_1w"], 2)
        if compiled is not None and _is_built(compiled):
            cmd = _ingest_cmd(sample, small / "wh1c", 1, compiled=True)
            seconds, _ = _peak_rss_mb(cmd, env=_compiled_env(compiled), cwd=small)
            results["compiled_ingest_records_per_s_1w"] = round(n / seconds)
        if not quick:
            big = scaled_corpus(base, 10)
            _, rss20 = _peak_rss_mb(_ingest_cmd(base, small / "m20", 2))
            _, rss200 = _peak_rss_mb(_ingest_cmd(big, small / "m200", 2))
            results.update(
                {"rss_mb_20k": round(rss20), "rss_mb_200k": round(rss200), "rss_ratio": round(rss200 / rss20, 2)}
            )
            results["_warehouse_200k"] = str(small / "m200")
        else:
            results["_warehouse_200k"] = str(small / "wh2")
        return results
    except BaseException:
        shutil.rmtree(small, ignore_errors=True)
        raise


def bench_analytics(warehouse: str) -> dict[str, Any]:
    """The full stats suite and the report vs a bare DuckDB scan of the same tables."""
    from pipeline.analytics.groups import GROUPS
    from pipeline.analytics.queries import warehouse_stats as stats
    from pipeline.ingest.warehouse import Warehouse
    from schemas.tables import TABLES

    con = Warehouse(warehouse).connect()
    start = time.perf_counter()
    for name in TABLES:
        con.sql(
            f'SELECT count(*), count(DISTINCT hand_id) FROM "{name}"'
            if name not in ("ingest_runs", "rejects")
            else f'SELECT count(*) FROM "{name}"'
        ).fetchall()
    scan_s = time.perf_counter() - start
    start = time.perf_counter()
    stats(warehouse)
    for by in GROUPS[1:]:  # every split (GROUPS[0] is "all", done above)
        stats(warehouse, by=by)
    stats_s = time.perf_counter() - start
    out: dict[str, Any] = {
        "scan_s": round(scan_s, 3),
        "stats_s": round(stats_s, 3),
        "stats_scan_ratio": round(stats_s / scan_s, 1),
    }
    # the report as a user makes it: `xuezhan report` in its own process (the bench, under pipeline/, does
    # not import the dashboards above it)
    target = Path(tempfile.mkdtemp(prefix="xz-report-"))
    command = [sys.executable, "-c", "from cli import app; app()", "report", "--warehouse", warehouse]
    start = time.perf_counter()
    subprocess.run([*command, "--out", str(target), "--quiet"], check=True, capture_output=True)
    out["report_s"] = round(time.perf_counter() - start, 3)
    out["report_scan_ratio"] = round(out["report_s"] / scan_s, 1)
    shutil.rmtree(target, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smaller run, for a quick look")
    parser.add_argument("--out", default="bench-results.json")
    parser.add_argument("--compiled", type=Path, help="a build of the compiled engine (make compiled) to measure too")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"quick": args.quick}
    sections: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("win check: table vs recursive search", lambda: bench_win_check(args.quick)),
        ("simulator: hands per second on one core", lambda: bench_simulate(args.quick)),
        ("replay validation vs parse only (one process, pure Python)", lambda: bench_validate(args.quick)),
        (
            "the same with the compiled engine (mypyc, make compiled)",
            lambda: bench_validate_compiled(args.quick, args.compiled, results.get("validate_records_per_s")),
        ),
        (
            "ingest end to end: 1 vs 2 workers; peak memory 20k vs 200k hands",
            lambda: bench_ingest(args.quick, args.compiled),
        ),
        ("analytics: stats suite and report vs a bare scan", lambda: bench_analytics(results["_warehouse_200k"])),
    ]
    for title, fn in sections:
        print(f"== {title}", flush=True)
        figures = fn()
        for key, value in figures.items():
            if not key.startswith("_"):
                print(f"  {key:<32} {value}", flush=True)
        results.update(figures)
    warehouse = results.pop("_warehouse_200k", None)
    if warehouse:
        shutil.rmtree(Path(warehouse).parent, ignore_errors=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
