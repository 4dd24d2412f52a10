"""Run the SQL models of ``sql/`` on a warehouse with DuckDB (values always bound as parameters), and
assemble the ``stats`` answer: per-player metrics and the table-level figures."""

from __future__ import annotations

import itertools
import os
import re
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline import sql
from pipeline.analytics.groups import check_group
from pipeline.analytics.levels import LEVELS, NEEDS, TABLE_FIGURES, Needs, coverage, split
from pipeline.analytics.metrics import DECISION_METRICS, METRICS, decision_values
from pipeline.analytics.runs import RUN_HANDS, SCOPE, UNSCOPED, Stream, add_up, added, bounded, summed_runs
from pipeline.analytics.scales import scales
from pipeline.analytics.scope import EVERYTHING, WHOLE, Scope, ScopeError
from pipeline.analytics.stats import mean_interval, wilson
from pipeline.analytics.yardsticks import deviations, yardsticks
from pipeline.ingest.warehouse import Warehouse
from pipeline.rules.ruleset import profile_names, read_profile
from schemas.tables import TABLES, TALLY_VERSION

_SPILLS = itertools.count()  # the connections' spill folders, numbered
_WARNED: set[str] = set()  # incomplete runs, and warehouses written by an earlier release, this process has warned of
# Connections whose player_base_levels answers are kept (see remember_bases), with the results by (by, player)
_BASES: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, dict[tuple[str, str | None], pl.DataFrame]] = (
    weakref.WeakKeyDictionary()
)


def connect(warehouse_dir: str | Path, *, scope: Scope | None = None, warn: bool = True) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the warehouse's tables as views (read-only on the Parquet files; the batches
    committed when it connects), for the analytics, the audit and the dashboards to share; the caller closes
    it (``with connect(d) as con:``). When the warehouse's last ingest run did not finish (interrupted,
    killed, failed, or still running), one warning line goes to stderr, once per process (``warn=False``: none).

    ``scope`` (:class:`pipeline.analytics.scope.Scope`): every table's view holds only the rows of the hands in
    scope (``rejects`` and ``ingest_runs``, which belong to no stored hand, stay whole), and the macro
    ``local_time(played_at, utc_offset)`` that every date and month goes through reads the scope's time zone
    (default: each record's own offset). The unfiltered views are in the schema ``stored``; under a scope, these
    views without it are in the schema ``unscoped`` too (:mod:`pipeline.analytics.runs` reads them in file order
    and keeps the rows in scope itself). A column a table gained after the warehouse was written
    (``hands.utc_offset``) reads as null.

    Raises ``FileNotFoundError`` when there is no warehouse at ``warehouse_dir`` and
    :class:`pipeline.analytics.scope.ScopeError` for a time zone DuckDB does not know."""
    root = Path(warehouse_dir)
    if not (root / "hands").is_dir():
        raise FileNotFoundError(f"no warehouse at {root} (run xuezhan ingest first)")
    scope = scope or EVERYTHING
    wh = Warehouse(root)
    con = wh.connect(schema=STORED)
    try:
        # Where a query over the whole warehouse spills past its memory (runs.bounded): a folder of the system's
        # temporary one that DuckDB makes when it first spills and removes when the connection closes (DuckDB's
        # default, .tmp in the working directory, may not be writable, and would be left behind)
        spill = Path(tempfile.gettempdir()) / f"xuezhan-spill-{os.getpid()}-{next(_SPILLS)}"
        con.execute("SET temp_directory = ?", [str(spill)])
        _scoped_views(con, scope)
    except BaseException:
        con.close()
        raise
    older = wh.written_before() if warn and str(root.resolve()) not in _WARNED else {}
    if older:
        _WARNED.add(str(root.resolve()))
        columns = ", ".join(f"{table}.{c}" for table, cs in older.items() for c in cs)
        print(
            f"xuezhan: warning: part of this warehouse was written by an earlier release, without {columns}: what "
            "needs them reads as unknown (a hand's level as dealt); ingest the records again into a new warehouse "
            "to have them (xuezhan ingest FILES --warehouse NEW)",
            file=sys.stderr,
        )
    last = wh.last_run() if warn else None
    if last is not None and not last[1] and last[0] not in _WARNED:
        _WARNED.add(last[0])  # once per process: a command may connect more than once
        print(
            f"xuezhan: warning: the last ingest run ({last[0]}) is incomplete (interrupted, or still running): "
            "the warehouse holds part of its input; run the ingest again to complete",
            file=sys.stderr,
        )
    return con


STORED = "stored"  # the schema of the unfiltered views (Warehouse.connect's)


def _profile_base_sql() -> str:
    """SQL of a hand's base (底) from its ruleset where the warehouse did not store it (rows written before
    ``hands.base``): the record's override (``ruleset.base``), else its profile's as the registry sets it, else 1.

    >>> "WHEN 'majsoul' THEN 1000" in _profile_base_sql()
    True
    """
    profiles = " ".join(
        f"WHEN '{name}' THEN {int(read_profile(name).switches['base'])}"
        for name in profile_names()
        if name.isidentifier()  # the registry's names are identifiers: safe in a literal
    )
    override = "CASE WHEN json_valid(ruleset) THEN TRY_CAST(json_extract_string(ruleset, '$.base') AS BIGINT) END"
    return f"CASE WHEN base IS NOT NULL THEN base ELSE coalesce({override}, CASE profile {profiles} END, 1) END"


_HANDS_BASE = _profile_base_sql()


def _scoped_views(con: duckdb.DuckDBPyConnection, scope: Scope) -> None:
    """The views the analytics read, in the default schema over ``stored``'s: the rows of the hands in scope
    (every row without a scope), with the columns of :data:`schemas.tables.TABLES` an older warehouse lacks
    as nulls, but for those derived from what it holds (:data:`schemas.tables.DERIVED`: ``hands.base``, from
    the record's ruleset, :func:`_profile_base_sql`); and the ``local_time`` macro in the scope's time zone."""
    con.execute("SET VARIABLE xuezhan_tz = ?", [scope.tz])
    con.execute(sql.load_sql("pipeline.analytics", "local_time"))
    if scope.tz is not None:
        try:  # zoneinfo knew it (Scope checks); DuckDB's own zone database must too
            con.execute("SELECT timezone(getvariable('xuezhan_tz'), TIMESTAMPTZ '2000-01-01 00:00:00+00')")
        except duckdb.Error:
            raise ScopeError(f"--tz {scope.tz!r}: not a time zone DuckDB knows") from None
    bodies = {}
    for name, schema in TABLES.items():
        have = {row[0] for row in con.execute(f'DESCRIBE "{STORED}"."{name}"').fetchall()}
        empty = con.from_arrow(schema.empty_table())  # DuckDB's names for the Arrow types
        missing = "".join(
            f', CAST(NULL AS {kind}) AS "{column}"'
            for column, kind in zip(empty.columns, map(str, empty.types), strict=True)
            if column not in have
        )
        body = f'SELECT *{missing} FROM "{STORED}"."{name}"'
        if name == "hands":
            body = f"SELECT * REPLACE ({_HANDS_BASE} AS base) FROM ({body})"
        bodies[name] = body
        con.execute(f'CREATE OR REPLACE VIEW "{name}" AS {body}')
    if scope.filters:  # the hands in scope, from the whole warehouse's; then every view keeps just those
        con.execute(f'CREATE TABLE "{SCOPE}" AS ' + sql.load_sql("pipeline.analytics", "scope_hands"), scope.params())
        # the views with no scope besides, in file order: the runs read them and keep the rows in scope themselves
        # (a semi-join keeps no order: pipeline/analytics/runs.py)
        con.execute(f'CREATE SCHEMA "{UNSCOPED}"')
        for name, body in bodies.items():
            if name not in WHOLE:
                con.execute(f'CREATE VIEW "{UNSCOPED}"."{name}" AS {body}')
                con.execute(
                    f'CREATE OR REPLACE VIEW "{name}" AS {body} WHERE hand_id IN (SELECT hand_id FROM main."{SCOPE}")'
                )


def run(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> pl.DataFrame:
    """Run ``sql/NAME.sql`` with named parameters; the result as a Polars frame. A model reads every hand of the
    warehouse at once, so it runs :func:`bounded`: DuckDB's hash aggregates and joins over 5M hands took up to
    1 GB unbounded (the overview's flower-pig chart: 1,055 MB), and spill past the bound instead."""
    return bounded(con, lambda: sql.run_sql(con, "pipeline.analytics", name, **params))


_DRAW_LUCK = "draw_luck_win, draw_luck_paid, draw_luck_ready, draw_luck_rivals, draw_luck_kong, draw_luck_fed"
# What sql/luck_cells.sql reads of each table, for the runs in file order (pipeline/analytics/runs.py)
LUCK_STREAMS = (
    Stream("hands", "hand_id, base, suits"),
    Stream(
        "player_hands",
        f"hand_id, profile, dealer, deal_shanten, delta, replayed, {_DRAW_LUCK}",
        "replayed AND deal_shanten IS NOT NULL",
    ),
)
_CELL_KEYS = ["profile", "base", "suits", "dealer", "deal_shanten"]
_BASE_KEYS = ["player", "grp", "level", "own"]
_ROUNDED = ("luck_net_sum", "luck_net_sq")  # sums of fractions: rounded (1e-6), the same whatever the runs


# The wins sql/player_base.sql counts the turns of from their events (its CTE uncounted)
_UNTIMED = (
    "SELECT count(*) FROM wins WHERE turn IS NULL AND hand_id IN (SELECT hand_id FROM hands WHERE replayed AND "
    "coalesce(level, 'dealt') IN ('full', 'dealt', 'observer'))"
)


def base_streams(con: duckdb.DuckDBPyConnection) -> tuple[Stream, ...]:
    """What ``sql/player_base.sql`` reads of each table, for the runs in file order: of ``events``, nothing
    where no hand needs them (every win stored with its turns, no observer's record), the draws where an
    observer's record shows one seat's, every event where a win was stored without its turns (an older
    warehouse's: counted from the events)."""
    observers, untimed = con.execute(
        "SELECT (SELECT count(*) FROM hands WHERE level = 'observer'), (SELECT count(*) FROM wins WHERE turn IS NULL)"
    ).fetchall()[0]
    if untimed:  # but a score sheet's wins have no turns, and need none: those of the hands the model counts
        untimed = bounded(con, lambda: con.execute(_UNTIMED).fetchall()[0][0])
    events = "false" if not observers and not untimed else None if untimed else "t = 'draw' AND tile IS NOT NULL"
    return (
        Stream("hands", "hand_id, base, suits, fan_base, played_at, utc_offset, ready_judged, level, dealer, replayed"),
        Stream(
            "player_hands",
            "hand_id, seat, player, profile, dealer, won, how, win_order, deal_ins, points, fan, delta, hua_zhu, "
            "ready_at_end, pongs, kongs_direct, kongs_added, kongs_concealed, void, passed_wins, compulsory_passes, "
            f"ready_turn, deal_shanten, replayed, {_DRAW_LUCK}",
            "replayed",
        ),
        Stream("wins", "hand_id, seat, source, turn, source_turn, how, points"),
        Stream("events", "hand_id, idx, t, seat, source, kind, tile", events),
    )


def luck_cells(con: duckdb.DuckDBPyConnection, models: sql.Models | None = None) -> pl.DataFrame:
    """The sums the room's deal and draw luck are fitted from (``sql/luck_cells.sql``), over every replayed
    seat-hand behind ``con``: a run of :data:`RUN_HANDS` hands at a time, added up
    (:func:`pipeline.analytics.runs.add_up`), or by ``models`` (``--engine spark``) at once."""
    memo = _BASES.get(con)
    if memo is not None and ("luck_cells", None) in memo:
        return memo[("luck_cells", None)]
    if models is not None:
        cells = models.run("pipeline.analytics", "luck_cells")
    else:
        cells = add_up(con, LUCK_STREAMS, lambda c: run(c, "luck_cells"), added(_CELL_KEYS), size=RUN_HANDS)
        cells = cells.sort(_CELL_KEYS, nulls_last=True)  # the model's order
    if memo is not None:
        memo[("luck_cells", None)] = cells
    return cells


def player_base_levels(
    con: duckdb.DuckDBPyConnection,
    *,
    by: str = "all",
    player: str | None = None,
    models: sql.Models | None = None,
) -> pl.DataFrame:
    """The base counts of every player (or only ``player``), one row per player, group (``grp``), ``level`` of
    record and ``own`` (the record shows the seat's whole hand); ``by`` is one of
    :data:`pipeline.analytics.groups.GROUPS`. On a connection given to :func:`remember_bases`, each answer is
    computed once. ``models``: where ``sql/player_base.sql`` runs (default: on ``con``; ``stats --engine spark``:
    :class:`pipeline.analytics.spark.SparkModels`, for every ``by`` but ``month``, whose months are DuckDB's).

    Two passes, each in the memory of a run of :data:`RUN_HANDS` hands whatever the size of the warehouse
    (:func:`pipeline.analytics.runs.add_up`; with ``models``, each at once): the room's luck cells
    (:func:`luck_cells`), then ``sql/player_base.sql`` on each run's rows with the cells' totals beside them,
    the runs' rows added up. The luck-adjusted sums are rounded (1e-6) once added up."""
    memo = _BASES.get(con)
    key = (check_group(by), player)
    if memo is not None and key in memo:
        return memo[key]
    if models is not None and key[0] == "month":
        raise ValueError("player_base by month runs on DuckDB only (its months are the local_time macro's)")
    cells = luck_cells(con, models)
    params = {"by": key[0], "player": player}
    if models is not None:
        with models.table("luck_cells", cells):
            base = models.run("pipeline.analytics", "player_base", **params)
    else:
        tz = con.execute("SELECT getvariable('xuezhan_tz')").fetchall()[0][0]

        def query(c: duckdb.DuckDBPyConnection) -> pl.DataFrame:
            if c is not con:  # a run's connection: the local_time macro the model names, in the scope's time zone
                c.execute("SET VARIABLE xuezhan_tz = ?", [tz])
                c.execute(sql.load_sql("pipeline.analytics", "local_time"))
            c.register("luck_cells", cells.to_arrow())
            try:
                return run(c, "player_base", **params)
            finally:
                c.unregister("luck_cells")

        base = add_up(con, base_streams(con), query, added(_BASE_KEYS), size=RUN_HANDS)
    base = base.with_columns(pl.col(_ROUNDED).round(6)).sort(_BASE_KEYS, nulls_last=True)
    if memo is not None:
        memo[key] = base
    return base


def remember_bases(con: duckdb.DuckDBPyConnection) -> None:
    """Keep the answers of :func:`player_base_levels` (and so :func:`player_base`) on ``con`` for its life: the
    report's pages ask for the same base counts a dozen times (0.4 s each on 200k hands). Only for a
    connection of :func:`connect`, whose data is one snapshot of the warehouse and never changes."""
    _BASES.setdefault(con, {})


_KEYS = ("player", "grp")
_SPLIT = ("level", "own")


def fold(levels: pl.DataFrame, needs: Needs | None = None, keys: pl.DataFrame | None = None) -> pl.DataFrame:
    """The rows of :func:`player_base_levels` that ``needs`` can use (all with None) added up, one row per
    player and group, in the order of ``keys`` (default: every player and group of ``levels``; one whose rows
    are all left out has zero counts)."""
    keys = levels.select(_KEYS).unique(maintain_order=True) if keys is None else keys
    values = [c for c in levels.columns if c not in _KEYS and c not in _SPLIT]
    rows = levels
    if needs is not None:
        rows = levels.filter(
            pl.col("level").is_in(list(needs.levels)) | (pl.col("own") & pl.col("level").is_in(list(needs.own_seat)))
        )
    summed = rows.group_by(_KEYS, maintain_order=True).agg(pl.col(values).sum())
    out = keys.join(summed, on=list(_KEYS), how="left", maintain_order="left")
    return out.with_columns(pl.col(values).fill_null(0)) if needs is not None else out


def player_base(con: duckdb.DuckDBPyConnection, *, by: str = "all", player: str | None = None) -> pl.DataFrame:
    """The base counts of every player (or only ``player``) over every hand, whatever its level, one row per
    player and group (``grp``); ``by`` is one of :data:`pipeline.analytics.groups.GROUPS`. A metric that a
    level cannot carry adds up only the rows it can use (:func:`fold`, :func:`stats`)."""
    return fold(player_base_levels(con, by=by, player=player))


def hands_by_level(con: duckdb.DuckDBPyConnection, player: str | None = None) -> dict[str, dict[str, int]]:
    """``{level: {"stored", "replayed"}}`` of the warehouse (or of the hands ``player`` sat in)."""
    frame = run(con, "hands_by_level", player=player)
    rows = sorted(frame.iter_rows(named=True), key=lambda r: (_rank(r["level"]), r["level"]))
    return {r["level"]: {"stored": r["stored"], "replayed": r["replayed"]} for r in rows}


def _rank(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def _by_level(counts: dict[str, dict[str, int]], key: str) -> dict[tuple[str, bool], int]:
    # hands, not seats: a hand an observer's record shows counts as used by a figure that needs its own seat
    return {(level, True): c[key] for level, c in counts.items()}


# The table figures whose every column is a count or a sum over hands, read in one pass a run of hands at a time
# (pipeline/analytics/runs.py add_up): each model's keys, its columns the same for every hand of a key (kept, not
# added), and the order its SQL gives its rows ((column, descending); DuckDB's nulls last).
TABLE_SUMS: dict[str, tuple[list[str], list[str], list[tuple[str, bool]]]] = {
    "fan_distribution": (["fan"], [], [("fan", False)]),
    "pattern_frequency": (["pattern"], ["name_zh"], [("wins", True), ("pattern", False)]),
    "outcomes": ([], [], []),
    "outcomes_by_table": (
        ["seats", "suits", "mode"],
        [],
        [("hands", True), ("seats", True), ("suits", False), ("mode", False)],
    ),
    "money_by_reason": (["reason"], [], [("reason", False)]),
}
# What they read of each table, for the runs in file order
TABLE_STREAMS = (
    Stream("hands", "hand_id, fan_base, replayed, winners, outcome, events, seats, suits, mode"),
    Stream("wins", "hand_id, fan, player, patterns, how, source, win_order"),
    Stream("payments", "hand_id, reason, amount, payee, side", "side = 'computed'"),
)


def table_sums(con: duckdb.DuckDBPyConnection) -> dict[str, pl.DataFrame]:
    """The models of :data:`TABLE_SUMS` over every hand (``player`` None), each frame as its SQL gives it: the
    runs' rows added up (:func:`pipeline.analytics.runs.add_up`), in the memory of a run of hands (each model
    over the whole warehouse at once joined every win or payment to a table of every hand)."""
    adds = {name: added(keys, firsts) for name, (keys, firsts, _) in TABLE_SUMS.items()}

    def query(c: duckdb.DuckDBPyConnection) -> dict[str, pl.DataFrame]:
        return {name: run(c, name, **({"player": None} if "player" in _params(name) else {})) for name in TABLE_SUMS}

    def add(a: dict[str, pl.DataFrame], b: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
        return {name: adds[name](a[name], b[name]) for name in TABLE_SUMS}

    got = add_up(con, TABLE_STREAMS, query, add, size=RUN_HANDS)
    out = {}
    for name, (_, _, order) in TABLE_SUMS.items():
        frame = got[name]
        if order:
            columns, descending = zip(*order, strict=True)
            frame = frame.sort(list(columns), descending=list(descending), nulls_last=True)
        out[name] = frame
    return out


def _params(name: str) -> set[str]:
    """The ``$name`` parameters of ``sql/NAME.sql``."""
    return set(re.findall(r"\$([a-z_]+)", sql.load_sql("pipeline.analytics", name)))


def issues_by_code(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """``sql/issues_by_code.sql``: the issues by code, those of the session checks too, which the ``issues``
    view works out when read, each hand against the one before it in its session (a window over every hand of
    the warehouse: its memory is bounded by DuckDB's spilling, as every model's, :func:`run`)."""
    return run(con, "issues_by_code")


def table_figures(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """The table-level part of ``stats``."""
    sums = table_sums(con)
    fan = sums["fan_distribution"]
    patterns = sums["pattern_frequency"]
    outcomes = sums["outcomes"].row(0, named=True)
    length = run(con, "hand_length", levels=list(NEEDS["hand_length"].usable())).row(0, named=True)
    by_table = sums["outcomes_by_table"]
    money = sums["money_by_reason"]
    issues = issues_by_code(con)
    counts = run(con, "warehouse_counts").row(0, named=True)
    hands = outcomes["hands"] or 0
    low, high = wilson(outcomes["huang_zhuang"] or 0, hands)
    multi_low, multi_high = wilson(outcomes["multi_win_hands"] or 0, hands)
    mean, mean_low, mean_high = mean_interval(length["events_sum"], length["events_sq"], length["hands"])
    return {
        "fan_distribution": {str(r["fan"]): r["wins"] for r in fan.iter_rows(named=True)},
        "pattern_frequency": {r["pattern"]: r["wins"] for r in patterns.iter_rows(named=True)},
        "pattern_names": {r["pattern"]: r["name_zh"] for r in patterns.iter_rows(named=True)},
        "winners_per_hand": {str(k): outcomes[f"winners_{k}"] for k in range(4)},
        "huang_zhuang_rate": {
            "value": outcomes["huang_zhuang"] / hands if hands else None,
            "num": outcomes["huang_zhuang"],
            "den": hands,
            "ci_low": low,
            "ci_high": high,
        },
        "multi_win_rate": {
            "value": outcomes["multi_win_hands"] / hands if hands else None,
            "num": outcomes["multi_win_hands"],
            "den": hands,
            "ci_low": multi_low,
            "ci_high": multi_high,
        },
        "hand_length": {
            "value": mean,
            "n": length["hands"],
            "ci_low": mean_low,
            "ci_high": mean_high,
            "unit": "events",
        },
        # the figures above pool every table of the warehouse; these split them by table shape
        "tables": [_table_outcomes(r) for r in by_table.iter_rows(named=True)],
        "money_by_reason": {r["reason"]: r["points"] for r in money.iter_rows(named=True)},
        # points paid to nobody (penalties to the pot, sbr): the players' net points sum to minus this
        "pot": sum(r["to_pot"] for r in money.iter_rows(named=True)),
        "issues_by_code": {
            r["code"]: {
                "issues": r["issues"],
                "hands": r["hands"],
                "severity": r["severity"],
                "rate": r["hands"] / counts["hands"] if counts["hands"] else None,
            }
            for r in issues.iter_rows(named=True)
        },
        "stored_hands": counts["hands"],
        "valid_hands": counts["valid_hands"],
        "replayed_hands": counts["replayed_hands"],
        "rejects": counts["rejects"],
    }


def _rate(num: int, den: int) -> dict[str, Any]:
    low, high = wilson(num, den)
    return {"value": num / den if den else None, "num": num, "den": den, "ci_low": low, "ci_high": high}


MODE_ZH = {"blood_battle": "血战到底", "ordinary": "普通版", "blood_flow": "血流成河"}


def winners_per_hand(row: dict[str, Any]) -> dict[str, int]:
    """Hands by how many players won, from a row of ``outcomes_by_table``: up to all but one in blood battle
    and the ordinary game, up to every player in 血流成河."""
    most = row["seats"] if row["mode"] == "blood_flow" else row["seats"] - 1
    return {str(k): row[f"winners_{k}"] for k in range(most + 1)}


def _table_outcomes(row: dict[str, Any]) -> dict[str, Any]:
    """One table shape's hands: how many, how they ended, with intervals (a row of ``outcomes_by_table``)."""
    seats, hands = row["seats"], row["hands"]
    mode = MODE_ZH.get(row["mode"], row["mode"])
    return {
        "table": f"{seats} players, {row['suits']}, {row['mode']}",
        "label": f"{seats}人 {row['suits']} {mode}",
        "seats": seats,
        "suits": row["suits"],
        "mode": row["mode"],
        "hands": hands,
        "winners_per_hand": winners_per_hand(row),
        "won_out_rate": _rate(row["won_out"], hands),
        "huang_zhuang_rate": _rate(row["huang_zhuang"], hands),
        "multi_win_rate": _rate(row["multi_win_hands"], hands),
    }


def stats(
    con: duckdb.DuckDBPyConnection, *, by: str = "all", player: str | None = None, models: sql.Models | None = None
) -> dict[str, Any]:
    """The ``stats --format json`` contract: ``{"hands", "by", "levels", "metrics", "players": [...],
    "table": {...}}``, over the warehouse behind ``con`` (:func:`connect`).

    Each metric is computed over the hands whose level carries what it needs (:data:`NEEDS`): a player's
    ``levels`` are the player's hands by level, and ``excluded`` names each metric that left some out, with
    their levels (``{"pongs_per_hand": {"settlement": 3}}``); ``metrics`` says per metric, over all the hands
    shown, how many it used (``n``), by level (``levels``), which it left out (``excluded``) and what it needs
    (``needs``), the table figures' too; ``levels`` counts the stored and replayed hands by level.

    With ``player``, ``table`` also holds ``player_wins`` (:func:`player_wins`): that player's own wins by fan
    and pattern (the rest of ``table`` is every hand of the connection: on a connection scoped to the
    player's hands, every win at their tables).

    ``models``: where the one heavy pass (``sql/player_base.sql``, the per-player counts over ``player_hands``,
    ``wins`` and ``events``) runs: on ``con`` by default, on Spark with ``stats --engine spark``
    (:mod:`pipeline.analytics.spark`); the table figures, the decision counts and the rest run on ``con``."""
    levels = player_base_levels(con, by=by, player=player, models=models)
    keys = levels.select(_KEYS).unique(maintain_order=True)
    every = fold(levels, None, keys)
    folded = {n.id: fold(levels, n, keys).to_dicts() for n in {NEEDS[m.id] for m in METRICS}}
    by_row: dict[tuple[str, str], dict[tuple[str, bool], int]] = {}
    for r in levels.select(*_KEYS, *_SPLIT, "hands").iter_rows():
        by_row.setdefault((r[0], r[1]), {})[(r[2], r[3])] = r[4]
    decided = decision_bases(con, by=by, player=player)
    players = []
    for i, row in enumerate(every.iter_rows(named=True)):
        seat_levels = by_row[(row["player"], row["grp"])]
        metrics: dict[str, Any] = {}
        excluded: dict[str, dict[str, int]] = {}
        for m in METRICS:
            needs = NEEDS[m.id]
            metrics[m.id] = m.value(folded[needs.id][i])
            left_out = split(needs, seat_levels)[1]
            if left_out:
                excluded[m.id] = left_out
        metrics.update(decision_values(decided.get((row["player"], row["grp"]))))
        for m in DECISION_METRICS:
            left_out = split(NEEDS[m.id], seat_levels)[1]
            if left_out:
                excluded[m.id] = left_out
        entry: dict[str, Any] = {
            "player": row["player"],
            "hands": row["hands"],
            "levels": split(NEEDS["hands"], seat_levels)[0],
            "metrics": metrics,
            "excluded": excluded,
        }
        if by != "all":
            entry[by] = row["grp"]
        players.append(entry)
    if by == "all" and player is None:  # each player against the room (yardsticks.py), the most certain first
        sc = scales(con)
        group_of = dict(zip(sc.players["player"].to_list(), sc.players["group"].to_list(), strict=True))
        for entry, (name, ys) in zip(players, yardsticks({"players": players}, group_of=group_of).items(), strict=True):
            assert entry["player"] == name
            entry["yardsticks"] = {m: y.as_dict() for m, y in ys.items()}
            entry["deviations"] = [y.metric for y in deviations(ys)]
    table = table_figures(con)
    if player is not None:
        table["player_wins"] = player_wins(con, player)
    warehouse = hands_by_level(con)
    mine = warehouse if player is None else hands_by_level(con, player)
    shown = _by_level(mine, "replayed")
    coverages = {m.id: coverage(NEEDS[m.id], shown) for m in (*METRICS, *DECISION_METRICS)}
    for figure in TABLE_FIGURES:  # the table pools the whole warehouse; the issues count every stored hand
        key = "stored" if figure == "issues_by_code" else "replayed"
        coverages[figure] = coverage(NEEDS[figure], _by_level(warehouse, key))
    return {
        "hands": table["replayed_hands"],
        "by": by,
        "levels": warehouse,
        "review": review_coverage(con),
        "metrics": coverages,
        "players": players,
        "table": table,
    }


# ---------------------------------------------------------------------------------------------- decisions
def decision_bases(
    con: duckdb.DuckDBPyConnection, *, by: str = "all", player: str | None = None
) -> dict[tuple[str, str], dict[str, Any]]:
    """The decision metrics' base counts (``sql/decision_base.sql``: the current review version's tallies) by
    ``(player, grp)``; a player with no reviewed hand has no entry (:func:`~pipeline.analytics.metrics.
    decision_values` makes that "not reviewed")."""
    frame = run(con, "decision_base", by=check_group(by), player=player, version=TALLY_VERSION)
    return {(r["player"], r["grp"]): r for r in frame.iter_rows(named=True)}


def review_coverage(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """``{"version", "reviewable", "reviewed", "other_version"}``: the replayed hands in scope whose decisions
    ``xuezhan review`` can review, those it has (at :data:`~schemas.tables.TALLY_VERSION`), and those reviewed by
    another version only (``sql/review_coverage.sql``)."""
    row = run(con, "review_coverage", version=TALLY_VERSION).row(0, named=True)
    return {"version": TALLY_VERSION, **{k: int(v or 0) for k, v in row.items()}}


def warehouse_stats(
    warehouse_dir: str | Path, *, by: str = "all", player: str | None = None, scope: Scope | None = None
) -> dict[str, Any]:
    """:func:`stats` of the warehouse at ``warehouse_dir``, on a connection opened and closed here (for a caller
    that has nothing else to run on it: the ``stats`` command, the demo, the bench), over the hands in
    ``scope`` (the answer's ``scope``: its filters, ``null`` each when not given)."""
    scope = scope or EVERYTHING
    with connect(warehouse_dir, scope=scope) as con:
        return {"scope": scope.as_dict(), **stats(con, by=by, player=player)}


def player_wins(con: duckdb.DuckDBPyConnection, player: str) -> dict[str, Any]:
    """One player's own wins: ``{"player", "wins", "fan_distribution": {fan: wins}, "pattern_frequency":
    {pattern: wins}, "pattern_names": {pattern: 中文}}`` (replayed hands; the fan in the Chinese count)."""
    fan = run(con, "fan_distribution", player=player)
    patterns = run(con, "pattern_frequency", player=player)
    return {
        "player": player,
        "wins": int(fan["wins"].sum() or 0),
        "fan_distribution": {str(r["fan"]): r["wins"] for r in fan.iter_rows(named=True)},
        "pattern_frequency": {r["pattern"]: r["wins"] for r in patterns.iter_rows(named=True)},
        "pattern_names": {r["pattern"]: r["name_zh"] for r in patterns.iter_rows(named=True)},
    }


# ---------------------------------------------------------------------------------------------- head to head
HEAD_TO_HEAD = {
    "opponent": pl.String,
    "hands": pl.Int64,
    "won_from": pl.Int64,
    "lost_to": pl.Int64,
    "net": pl.Int64,
    "net_per_hand": pl.Float64,
    "net_low": pl.Float64,
    "net_high": pl.Float64,
    "deal_ins_to": pl.Int64,
    "deal_in_hands": pl.Int64,
    "deal_in_rate": pl.Float64,
    "deal_in_low": pl.Float64,
    "deal_in_high": pl.Float64,
    "wins_from": pl.Int64,
    "win_hands": pl.Int64,
    "win_rate": pl.Float64,
    "win_low": pl.Float64,
    "win_high": pl.Float64,
}


_H2H_KEYS = ["player", "opponent"]


# What sql/head_to_head.sql reads of each table, for the runs in file order (pipeline/analytics/runs.py)
H2H_STREAMS = (
    Stream("hands", "hand_id"),
    Stream("player_hands", "hand_id, seat, player, replayed"),
    Stream("payments", "hand_id, side, payer, payee, amount", "side = 'computed'"),
    Stream("wins", "hand_id, seat, source, how"),
)


def _head_to_head_sums(con: duckdb.DuckDBPyConnection, player: str | None) -> pl.DataFrame:
    """``sql/head_to_head.sql``'s rows over every hand: its columns are sums over hands, so each run of
    :data:`RUN_HANDS` hands (:func:`pipeline.analytics.runs.summed_runs`, every table read once) is queried alone
    and the runs' rows are summed (the query over 200,000 hands at once held 0.9 GB; a run's memory does not
    grow with the warehouse). In the model's order."""
    return summed_runs(
        con,
        H2H_STREAMS,
        lambda r: run(r.con, "head_to_head", player=player, lo=r.lo, hi=r.hi),
        added(_H2H_KEYS),
        empty=lambda: run(con, "head_to_head", player=player, lo=None, hi=None),
        size=RUN_HANDS,
        replayed=False,
    ).sort(["player", "hands", "opponent"], descending=[False, True, False])


def head_to_head_frame(con: duckdb.DuckDBPyConnection, player: str | None) -> pl.DataFrame:
    """``player`` against each opponent they sat with (``sql/head_to_head.sql``), one row per opponent, most
    hands together first (``player`` ``None``: every player's rows, by player, with a ``player`` column first),
    with intervals: the net points per hand together (``net_per_hand``, normal 95%
    interval of the mean over the hands together, ``net_low``/``net_high``); the share of those hands in which
    ``player`` dealt in to the opponent (``deal_in_rate``) and won on the opponent's discard (``win_rate``),
    each with its Wilson 95% interval. Columns: :data:`HEAD_TO_HEAD`."""
    rows = []
    for r in _head_to_head_sums(con, player).iter_rows(named=True):
        hands = int(r["hands"])
        mean, low, high = mean_interval(r["net_sum"], r["net_sq"], hands)
        deal_low, deal_high = wilson(r["deal_in_hands"], hands)
        win_low, win_high = wilson(r["win_hands"], hands)
        rows.append(
            {
                "player": r["player"],
                "opponent": r["opponent"],
                "hands": hands,
                "won_from": r["won_from"],
                "lost_to": r["lost_to"],
                "net": r["net_sum"],
                "net_per_hand": mean,
                "net_low": low,
                "net_high": high,
                "deal_ins_to": r["deal_ins_to"],
                "deal_in_hands": r["deal_in_hands"],
                "deal_in_rate": r["deal_in_hands"] / hands if hands else None,
                "deal_in_low": deal_low,
                "deal_in_high": deal_high,
                "wins_from": r["wins_from"],
                "win_hands": r["win_hands"],
                "win_rate": r["win_hands"] / hands if hands else None,
                "win_low": win_low,
                "win_high": win_high,
            }
        )
    every = pl.DataFrame(rows, schema={"player": pl.String, **HEAD_TO_HEAD})
    return every if player is None else every.drop("player")


def head_to_head(con: duckdb.DuckDBPyConnection, player: str) -> dict[str, Any]:
    """The ``stats --player P --by opponent --format json`` contract: ``{"player", "hands", "opponents":
    [{"opponent", "hands", "won_from", "lost_to", "net", "net_per_hand": {"value", "n", "ci_low", "ci_high"},
    "deal_ins_to", "deal_in_rate": {"value", "num", "den", "ci_low", "ci_high"}, "wins_from", "win_rate":
    {...}}]}``: :func:`head_to_head_frame` (``hands``: the player's hands played to the end)."""
    frame = head_to_head_frame(con, player)
    mine = player_base(con, player=player)
    opponents = [
        {
            "opponent": r["opponent"],
            "hands": r["hands"],
            "won_from": r["won_from"],
            "lost_to": r["lost_to"],
            "net": r["net"],
            "net_per_hand": {
                "value": r["net_per_hand"],
                "n": r["hands"],
                "ci_low": r["net_low"],
                "ci_high": r["net_high"],
                "unit": "points",
            },
            "deal_ins_to": r["deal_ins_to"],
            "deal_in_rate": _rate(r["deal_in_hands"], r["hands"]),
            "wins_from": r["wins_from"],
            "win_rate": _rate(r["win_hands"], r["hands"]),
        }
        for r in frame.iter_rows(named=True)
    ]
    return {"player": player, "hands": int(mine["hands"].sum() or 0), "opponents": opponents}
