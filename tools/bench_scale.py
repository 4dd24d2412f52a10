"""make bench-scale: the screens at 200k, 1M and 5M hands, each figure as a ratio to the 200k one.

What an online room's month and a platform's year ask of one machine (issue 45): ``stats``, ``collusion``,
``report``, ``info-cheats`` and ``deals`` run as a user runs them (default options, the default install) on
warehouses of 10, 50 and 250 renamed copies of the bench's 20,000-hand corpus (``tools/bench.py``'s
:func:`~tools.bench.scaled_corpus`: every copy's hands, sessions and tables retagged and its 24 players renamed
among themselves, so the copies are more data to the screens, not the same excesses again). Each command's wall
time, CPU time and peak memory at each size, and the ratios the issue's floors are on: time at 1M at most 5.5×
and at 5M at most 27× the 200k figure (linear with a tenth to spare), peak memory at 5M at most 1.3× the 200k's.

A separate target from ``make bench`` because the warehouses take long to make (once: cached in
``$XUEZHAN_BENCH_CACHE``) and the screens at 5M an hour. The 200k and 1M warehouses are ingested (4 and 20 minutes
on two cores); the 5M one is cloned from the 1M one (:func:`clone_warehouse`: the tables an ingest of the 250
copies stores, without the hour and a half its ingest takes). The warehouses are keyed by the corpus, the table
schemas and the libraries that write them, not by the code (``make bench`` re-ingests its 1M warehouse whenever a
source changes): the screens' cost depends on what the tables hold, and the ingest's speed is ``make bench``'s to
measure. ``--rebuild`` makes them again. The commands at one size run right after
the same at the size below; the machine is shared, so the load is printed with the figures, and the CPU time's
ratio beside the wall time's (a busy machine stretches the wall time, not the CPU time).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

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
    seatings,
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
    ingest reads, the libraries that write the files, and the layout compaction gives them (rows per row group)."""
    stat = corpus_path.stat()
    files = sorted((ROOT / "schemas").rglob("*.py")) + sorted((ROOT / "pipeline/rules/profiles").rglob("*.toml"))
    h = hashlib.sha256(f"{corpus_path.name} {stat.st_size} {stat.st_mtime_ns}\n{sys.version}\n".encode())
    h.update("\n".join(f"{n} {metadata.version(n)}" for n in KEY_LIBRARIES).encode())
    h.update(hash_files(ROOT, files).encode())
    from pipeline.ingest.warehouse import MERGE_BYTES, ROW_GROUP_ROWS

    h.update(f"row groups {ROW_GROUP_ROWS} {MERGE_BYTES}".encode())
    return h.hexdigest()[:16]


def scale_warehouse(copies: int, compiled: Path | None, rebuild: bool) -> tuple[Path, float | None]:
    """The warehouse of ``copies`` copies of the base corpus, from the cache (no seconds), or made now (the seconds
    it took): ingested with two workers, or, for a multiple of :data:`CLONED_FROM` copies above it, cloned from
    that warehouse (:func:`clone_warehouse`: the same tables an ingest of the copies stores, in minutes rather
    than the hour and a half two cores take to ingest 5M records)."""
    hands = BASE_HANDS * copies
    cloned = copies > CLONED_FROM and copies % CLONED_FROM == 0
    if cloned:
        source, _ = scale_warehouse(CLONED_FROM, compiled, rebuild)
        key = hashlib.sha256(f"{source.name} {CLONE_VERSION}".encode()).hexdigest()[:16]
        target = CACHE / f"{source.name.rsplit('-', 1)[0].replace(f'-x{CLONED_FROM}rt', f'-x{copies}rt')}-{key}"
    else:
        path = scaled_corpus(corpus(BASE_HANDS), copies)
        target = CACHE / f"scale-warehouse-{path.name.removesuffix('.jsonl.gz')}-{schema_key(path)}"
    _hold(target)
    if target.is_dir() and not rebuild:
        assert _stored_hands(target) == hands, f"{target} is not a {hands}-hand warehouse"
        return target, None
    shutil.rmtree(target, ignore_errors=True)
    tmp = CACHE / f"tmp-{target.name}-{os.getpid()}"
    _hold(tmp)
    try:
        if cloned:
            print(f"  (cloning the {label(hands)}-hand warehouse from the {label(BASE_HANDS * CLONED_FROM)} one)")
            start = time.perf_counter()
            clone_warehouse(source, CLONED_FROM, copies, tmp)
            seconds = time.perf_counter() - start
        else:
            print(f"  (ingesting the {label(hands)}-hand warehouse into {CACHE}, cached)", flush=True)
            seconds = ingest(path, tmp, 2, engines(compiled)[0], compiled, hands, timeout=TIMEOUT_S).seconds
        tmp.rename(target)
    finally:
        _release(tmp, remove=True)
    return target, seconds


# ------------------------------------------------------------------------------------ the 5M warehouse, cloned
CLONED_FROM = 50  # the 5M warehouse is the 1M one's hands five times over, renamed as copies 50-249 would be
CLONE_VERSION = "1"  # of clone_warehouse's output: a new one makes the cached clones again
_COPY = re.compile(r"^(.*)-c(\d+)$")  # an id retagged by scaled_corpus: copy k's ends in -c<k>
CLONED = {  # the columns clone_warehouse rewrites; every other column is the same in each copy of a record
    "hand_id": "id",
    "session_id": "id",
    "table_id": "id",
    "player": "player",
    "payer_player": "player",
    "payee_player": "player",
    "players": "players",
    "source_file": "file",
    "source_line": "line",
    "record_sha256": "digest",
    "ingest_run": "run",
}
_LOOKS_LIKE_AN_ID = re.compile(r"player|_id$|source|sha|run")  # a column of these not in CLONED: refused


def clone_warehouse(source: Path, source_copies: int, copies: int, target: Path) -> None:
    """Write at ``target`` the warehouse an ingest of ``scaled_corpus(base, copies)`` makes, from ``source``, the
    warehouse of ``scaled_corpus(base, source_copies)``: every table's rows ``copies // source_copies`` times over,
    pass ``j`` standing for the corpus's copies ``source_copies * j + k`` (``k`` the source copy each row's
    ``hand_id`` names), with those copies' ids and players. Each pass reads the source's files in their order and
    writes one file per table, in row groups of the warehouse's compacted size, committed as one batch of a run of
    its own.

    The same rows an ingest stores (tests/test_bench.py compares them): :func:`~tools.bench.seatings` of the copies
    begins with the source's, so copy ``c``'s player is ``seatings[c]`` of the base player whom ``seatings[k]``
    renamed; a record's line number in the bigger corpus is ``source_hands * j`` on; and its file is the bigger
    corpus. Only ``record_sha256`` (the digest of a line this does not write: the source's digest and the copy,
    hashed) and the run's id and times differ. A warehouse with rejects or validator issues is refused (their
    texts may name players), as is one with a column that looks like an id and is not in :data:`CLONED`.

    What the copies cost the screens is what the ingested copies would: the same tables, schemas and row groups,
    in the order an ingest of one worker would commit them (copy by copy)."""
    from pipeline.ingest.warehouse import COMPACTED, COMPRESSION, COUNTS, Encoded, Warehouse, conform, write_row_groups
    from schemas.tables import TABLES

    if copies % source_copies:
        raise ValueError(f"{copies} copies are not a multiple of {source_copies}")
    passes = copies // source_copies
    wh = Warehouse(source)
    con = wh.connect()
    try:
        files = wh.files(con)
        hands = int(con.execute("SELECT count(*) FROM hands").fetchone()[0])  # type: ignore[index]
        bad = con.execute("SELECT (SELECT count(*) FROM rejects), (SELECT count(*) FROM issues)").fetchone()
        if bad != (0, 0):
            raise ValueError(f"{source}: {bad[0]} rejects and {bad[1]} issues; a warehouse with either is not cloned")  # type: ignore[index]
        players = sorted(
            {p for (p,) in con.execute("SELECT DISTINCT unnest(players) FROM hands").fetchall() if p is not None}
        )
        inputs = sorted({i for (i,) in con.execute("SELECT DISTINCT unnest(inputs) FROM ingest_runs").fetchall()})
    finally:
        con.close()
    for name, schema in TABLES.items():
        odd = [f.name for f in schema if _LOOKS_LIKE_AN_ID.search(f.name) and f.name not in CLONED and _text(f.type)]
        if name not in ("ingest_runs", "rejects", "issues") and odd:  # the last two are empty (above)
            raise ValueError(f"{name}: columns {odd} look like ids that clone_warehouse does not rewrite")
    renames = seatings(players, copies)
    index = {p: i for i, p in enumerate(players)}
    unnamed = [{v: b for b, v in r.items()} for r in renames[:source_copies]]  # source copy k's name -> base's
    # pass j's new name of source copy k's player p, at [k * len(players) + index[p]]
    names = [
        pa.array([renames[source_copies * j + kk][unnamed[kk][p]] for kk in range(source_copies) for p in players])
        for j in range(passes)
    ]
    run_id = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    started = datetime.now(UTC)

    def clone(name: str) -> Encoded:
        def rows() -> Iterator[pa.Table]:
            for j in range(passes):
                for f in files[name]:
                    with pq.ParquetFile(f) as parquet:
                        for g in range(parquet.num_row_groups):
                            yield _clone_rows(
                                conform(parquet.read_row_group(g, use_threads=False), TABLES[name]),
                                j,
                                source_copies,
                                hands,
                                copies,
                                names[j],
                                len(players),
                                index,
                                run_id,
                            )

        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(sink, TABLES[name], compression=COMPRESSION) as writer:
            written = write_row_groups(writer, rows())
        return Encoded.of_file(written, sink.getvalue().to_pybytes())

    order = sorted((n for n in TABLES if n != "ingest_runs"), key=lambda n: -sum(f.stat().st_size for f in files[n]))
    with ThreadPoolExecutor(max_workers=2) as pool:  # pyarrow decodes, encodes and compresses off the GIL
        tables = dict(zip(order, pool.map(clone, order), strict=True))
    stored = hands * passes
    with Warehouse(target).open() as out:
        out.write_batch(f"{COMPACTED}{run_id}", dict(tables))
        counts = {**dict.fromkeys(COUNTS, 0), "lines_read": stored, "records_stored": stored}
        out.write_run(
            run_id,
            {
                "run_id": run_id,
                "started_at": started,
                "finished_at": datetime.now(UTC),
                "inputs": [_bigger(i, source_copies, copies) for i in inputs],
                "engine": "clone",
                "workers": 2,
                **counts,
                "seconds": (datetime.now(UTC) - started).total_seconds(),
                "version": "clone " + CLONE_VERSION,
            },
        )


def _text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or (pa.types.is_list(t) and pa.types.is_string(t.value_type))


def _bigger(name: str, source_copies: int, copies: int) -> str:
    """The bigger corpus's file name for the source's (``…-x50rt.jsonl.gz`` → ``…-x250rt.jsonl.gz``)."""
    return name.replace(f"-x{source_copies}rt.jsonl.gz", f"-x{copies}rt.jsonl.gz")


def _clone_rows(
    rows: pa.Table,
    j: int,
    source_copies: int,
    source_hands: int,
    copies: int,
    names: pa.Array,
    players: int,
    index: dict[str, int],
    run_id: str,
) -> pa.Table:
    """Pass ``j``'s copy of ``rows`` (one row group of a source table): see :func:`clone_warehouse`."""
    shift = source_copies * j
    ids = pc.dictionary_encode(rows.column("hand_id").combine_chunks())
    split = [_COPY.match(h) for h in ids.dictionary.to_pylist()]
    if any(m is None for m in split):
        raise ValueError("a hand_id without a copy's tag -c<k>: not a warehouse of scaled_corpus's copies")
    k_of_id = np.array([int(m[2]) for m in split if m], dtype=np.int64)
    k = k_of_id[ids.indices.to_numpy(zero_copy_only=False)]  # each row's source copy

    def retag(column: pa.Array) -> pa.Array:
        enc = pc.dictionary_encode(column)
        out = []
        for v in enc.dictionary.to_pylist():
            m = _COPY.match(v)
            if m is None:
                raise ValueError(f"an id without a copy's tag -c<k>: {v!r}")
            out.append(f"{m[1]}-c{int(m[2]) + shift}")
        return pa.array(out, pa.string()).take(enc.indices)

    def rename(column: pa.Array, copy: np.ndarray) -> pa.Array:
        enc = pc.dictionary_encode(column)
        at = np.array([index[p] for p in enc.dictionary.to_pylist()] or [0], dtype=np.int64)
        valid = enc.indices.is_valid().to_numpy(zero_copy_only=False)
        code = copy * players + at[enc.indices.fill_null(0).to_numpy(zero_copy_only=False)]
        return names.take(pa.array(code, mask=~valid))

    def mapped(field: pa.Field, column: pa.Array) -> pa.Array:
        kind = CLONED.get(field.name)
        if kind is None or (kind == "run" and column.null_count == len(column)):
            return column
        if kind == "id":
            return retag(column)
        if kind == "player":
            return rename(column, k)
        if kind == "players":
            values = pc.list_flatten(column)
            within = k[pc.list_parent_indices(column).to_numpy()]
            offsets = np.asarray(pc.list_value_length(column).fill_null(0)).cumsum()
            return pa.ListArray.from_arrays(
                pa.array(np.concatenate([[0], offsets]), pa.int32()), rename(values, within), mask=column.is_null()
            ).cast(field.type)
        if kind == "file":
            return pc.replace_substring(column, f"-x{source_copies}rt.jsonl.gz", f"-x{copies}rt.jsonl.gz")
        if kind == "line":
            return pc.add(column, pa.scalar(source_hands * j, column.type))
        if kind == "digest":  # pass 0's copies are the same lines in the bigger corpus, with the same digests
            if shift == 0:
                return column
            return pa.array(
                [
                    hashlib.sha256(f"{d} c{shift + kk}".encode()).hexdigest()
                    for d, kk in zip(column.to_pylist(), k, strict=True)
                ],
                pa.string(),
            )
        return pa.array([run_id] * len(column), pa.string())  # run

    columns = [mapped(field, rows.column(field.name).combine_chunks()) for field in rows.schema]
    return pa.Table.from_arrays(columns, schema=rows.schema)


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
