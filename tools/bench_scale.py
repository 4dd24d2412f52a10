"""make bench-scale: the screens at 200k, 1M and 5M hands, each figure as a ratio to the 200k one.

What an online room's month and a platform's year ask of one machine (issue 45): ``stats``, ``collusion``,
``report``, ``info-cheats`` and ``deals`` run as a user runs them (default options, the default install) on
warehouses of 10, 50 and 250 renamed copies of the bench's 20,000-hand corpus (``tools/bench.py``'s
:func:`~tools.bench.scaled_corpus`: every copy's hands, sessions and tables retagged and its 24 players renamed
among themselves, so the copies are more data to the screens, not the same excesses again). Each command's wall
time, CPU time and peak memory at each size, and the ratios the issue's floors are on: time at 1M at most 5.5×
and at 5M at most 27× the 200k figure (linear with a tenth to spare), peak memory at 5M at most 1.3× the 200k's.

A separate target from ``make bench`` because the 5M warehouse alone takes half an hour to ingest on two cores
(once: cached in ``$XUEZHAN_BENCH_CACHE``) and the screens at 5M another hour. The warehouses are keyed by the
corpus, the table schemas and the libraries that write them, not by the code (``make bench`` re-ingests its
1M warehouse whenever a source changes): the screens' cost depends on what the tables hold, and the ingest's
speed is ``make bench``'s to measure. ``--rebuild`` makes them again. The commands at one size run right after
the same at the size below; the machine is shared, so the load is printed with the figures, and the CPU time's
ratio beside the wall time's (a busy machine stretches the wall time, not the CPU time).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from tools.bench import (
    BASE_HANDS,
    CACHE,
    KEY_LIBRARIES,
    ROOT,
    _hold,
    _release,
    _stored_hands,
    analytics_cmds,
    cli_cmd,
    corpus,
    engine_env,
    engines,
    hash_files,
    ingest,
    label,
    measure,
    ratio,
    scaled_corpus,
)

COPIES = (10, 50, 250)  # 200k, 1M, 5M hands
COMMANDS = ("stats", "collusion", "report", "info-cheats", "deals")
TIME_FLOORS = {50: 5.5, 250: 27.0}  # the time at a size, at most this many times the smallest size's
MEMORY_FLOOR = 1.3  # the peak memory at the largest size, at most this many times the smallest size's
TIMEOUT_S = 3 * 3600.0  # a command at 5M on a busy machine


def command(name: str, warehouse: Path, out: Path) -> list[str]:
    """``name`` as a user runs it (default options): ``make bench``'s commands, and the two screens it does not
    run."""
    w = ["--warehouse", str(warehouse)]
    return {**analytics_cmds(warehouse, out), "info-cheats": ["info-cheats", *w], "deals": ["deals", *w]}[name]


def schema_key(corpus_path: Path) -> str:
    """What a scale warehouse of ``corpus_path`` depends on: the corpus, the table schemas and the profiles
    ingest reads, and the libraries that write the files."""
    stat = corpus_path.stat()
    files = sorted((ROOT / "schemas").rglob("*.py")) + sorted((ROOT / "pipeline/rules/profiles").rglob("*.toml"))
    h = hashlib.sha256(f"{corpus_path.name} {stat.st_size} {stat.st_mtime_ns}\n{sys.version}\n".encode())
    h.update("\n".join(f"{n} {metadata.version(n)}" for n in KEY_LIBRARIES).encode())
    h.update(hash_files(ROOT, files).encode())
    return h.hexdigest()[:16]


def scale_warehouse(copies: int, compiled: Path | None, rebuild: bool) -> tuple[Path, float | None]:
    """The warehouse of ``copies`` copies of the base corpus, from the cache (no seconds) or ingested now with two
    workers (the seconds it took)."""
    path = scaled_corpus(corpus(BASE_HANDS), copies)
    hands = BASE_HANDS * copies
    target = CACHE / f"scale-warehouse-{path.name.removesuffix('.jsonl.gz')}-{schema_key(path)}"
    _hold(target)
    if target.is_dir() and not rebuild:
        assert _stored_hands(target) == hands, f"{target} is not a {hands}-hand warehouse"
        return target, None
    shutil.rmtree(target, ignore_errors=True)
    print(f"  (ingesting the {label(hands)}-hand warehouse into {CACHE}, cached)", flush=True)
    tmp = CACHE / f"tmp-{target.name}-{os.getpid()}"
    _hold(tmp)
    try:
        run = ingest(path, tmp, 2, engines(compiled)[0], compiled, hands, timeout=TIMEOUT_S)
        tmp.rename(target)
    finally:
        _release(tmp, remove=True)
    return target, run.seconds


def floors(
    results: dict[str, Any], sizes: list[str], commands: Sequence[str] = COMMANDS
) -> list[tuple[str, Any, str, bool | None]]:
    """Each floor of ``commands``: (what, figure, limit, met; None: not measured).

    >>> r = {"collusion_s_ratio_1M": 5.0, "collusion_s_ratio_5M": 30.1, "collusion_rss_ratio_5M": 1.2}
    >>> [(w, m) for w, _, _, m in floors(r, ["200k", "1M", "5M"]) if w.startswith("collusion")]
    [('collusion time 1M / 200k', True), ('collusion time 5M / 200k', False), ('collusion peak memory 5M / 200k', True)]
    """
    out: list[tuple[str, Any, str, bool | None]] = []
    for name in commands:
        for copies, size in zip(COPIES[1:], sizes[1:], strict=False):
            got = results.get(f"{name}_s_ratio_{size}")
            limit = TIME_FLOORS[copies]
            met = got <= limit if isinstance(got, int | float) else None
            out.append((f"{name} time {size} / {sizes[0]}", got, f"<= {limit}x", met))
        if len(sizes) == len(COPIES):
            got = results.get(f"{name}_rss_ratio_{sizes[-1]}")
            met = got <= MEMORY_FLOOR if isinstance(got, int | float) else None
            out.append((f"{name} peak memory {sizes[-1]} / {sizes[0]}", got, f"<= {MEMORY_FLOOR}x", met))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--compiled", type=Path, help="the compiled build (make compiled): the default install")
    parser.add_argument("--copies", default=",".join(map(str, COPIES)), help="the sizes, as copies of 20k hands")
    parser.add_argument("--commands", default=",".join(COMMANDS), help=f"of {','.join(COMMANDS)}")
    parser.add_argument("--rebuild", action="store_true", help="ingest the warehouses again even if cached")
    parser.add_argument("--out", type=Path, default=Path("bench-scale-results.json"))
    args = parser.parse_args(argv)
    copies = [int(c) for c in args.copies.split(",")]
    chosen = [c for c in args.commands.split(",") if c]
    if any(c not in COMMANDS for c in chosen):
        parser.error(f"--commands: choose from {','.join(COMMANDS)}")
    default = engines(args.compiled)[0]
    env = engine_env(default, args.compiled)
    start = time.perf_counter()
    results: dict[str, Any] = {"engine": default, "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    print(f"bench-scale: {', '.join(label(BASE_HANDS * c) for c in copies)}; default install: {default}", flush=True)
    warehouses: dict[str, Path] = {}
    for c in copies:
        size = label(BASE_HANDS * c)
        warehouses[size], seconds = scale_warehouse(c, args.compiled, args.rebuild)
        results[f"warehouse_{size}"] = "cached" if seconds is None else f"ingested now in {seconds:.0f} s"
        print(f"  warehouse {size}: {results[f'warehouse_{size}']}", flush=True)
    sizes = list(warehouses)
    with tempfile.TemporaryDirectory(prefix="xz-bench-scale-") as tmp:
        for name in chosen:
            for size in sizes:
                out = Path(tmp) / f"report-{size}"
                try:
                    run = measure(cli_cmd(default, *command(name, warehouses[size], out)), env, TIMEOUT_S)
                except RuntimeError as exc:
                    results[f"{name}_s_{size}"] = str(exc)
                    print(f"  {name} {size}: {exc}", flush=True)
                    continue
                finally:
                    shutil.rmtree(out, ignore_errors=True)
                results[f"{name}_s_{size}"] = round(run.seconds, 2)
                results[f"{name}_cpu_s_{size}"] = round(run.cpu_s, 2)
                results[f"{name}_rss_mb_{size}"] = round(run.rss_mb)
                load = round(os.getloadavg()[0], 2)
                results[f"{name}_load_{size}"] = load
                line = f"{run.seconds:.1f} s, {run.cpu_s:.1f} CPU s, {run.rss_mb:.0f} MB (load {load})"
                if size != sizes[0]:
                    for kind, figure in (("s", "s"), ("cpu_s", "cpu_s"), ("rss", "rss_mb")):
                        got = ratio(results[f"{name}_{figure}_{size}"], results.get(f"{name}_{figure}_{sizes[0]}"))
                        results[f"{name}_{kind}_ratio_{size}"] = got
                    line += (
                        f"; x{results[f'{name}_s_ratio_{size}']} time, x{results[f'{name}_cpu_s_ratio_{size}']} CPU, "
                        f"x{results[f'{name}_rss_ratio_{size}']} memory"
                    )
                print(f"  {name:<12} {size:>5}: {line}", flush=True)
    checked = floors(results, sizes, chosen)
    print("== floors")
    for what, got, limit, met in checked:
        verdict = "not measured" if met is None else ("met" if met else "NOT met")
        print(f"  {what:<40} {got!s:>8}  {limit:<8} {verdict}")
    results["floors"] = [{"what": w, "figure": g, "limit": lim, "met": m} for w, g, lim, m in checked]
    results["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    results["seconds"] = round(time.perf_counter() - start)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"load average {results['loadavg_start']} -> {results['loadavg_end']}; {results['seconds']} s")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
