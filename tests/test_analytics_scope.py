"""Filters and time zones (issue 21 item 4): one :class:`~pipeline.analytics.scope.Scope`, applied by the
connection, so that stats, the audit, the collusion screen, info-cheats, export and the report all keep the
same hands; dates and months in each record's own local time (``hands.utc_offset``) or ``--tz``.

On the hand-written room of ``room_fixture.py`` (times at +08:00 around midnight: ``h2`` is 1 November in
Chengdu and 31 October in UTC; ``h4`` has no time; ``h5`` is written in UTC) every expected set and count
below is read off its docstring by hand. On a simulated room, a scoped connection to the whole warehouse
gives what a warehouse ingested from only the hands in scope gives: the same statistics, the same findings,
the same collusion screen.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import room_fixture

from dashboards import run_sql
from pipeline.analytics import queries
from pipeline.analytics.scope import Scope, ScopeError, parse_bound
from pipeline.audit.information import screen_information
from pipeline.audit.scoring import audit
from pipeline.audit.screen import screen
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

CLI = [sys.executable, "-c", "from cli import app; app(prog_name='xuezhan')"]


def xuezhan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return room_fixture.build(tmp_path_factory.mktemp("room"))


def hand_ids(warehouse: Path, scope: Scope | None = None, table: str = "hands") -> list[str]:
    with queries.connect(warehouse, scope=scope) as con:
        return [h for (h,) in con.execute(f"SELECT DISTINCT hand_id FROM {table} ORDER BY hand_id").fetchall()]


# -------------------------------------------------------------------------------- the record's own offset
def test_ingest_keeps_the_offset_each_record_wrote(room: Path) -> None:
    with queries.connect(room) as con:
        rows = dict(con.execute("SELECT hand_id, utc_offset FROM hands").fetchall())
    # +08:00 is 480 minutes east; h4 has no time; h5 wrote Z (an offset of 0, said so: not null)
    assert rows == {"h1": 480, "h2": 480, "h3": 480, "h4": None, "h5": 0}


# -------------------------------------------------------------------------------- which hands
@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ({}, ["h1", "h2", "h3", "h4", "h5"]),
        # a date is the record's local date: h2 (00:30 on 1 November at +08:00) is in November; h4 has no time
        ({"since": "2026-11-01"}, ["h2", "h3", "h5"]),
        ({"since": "2026-11-01", "tz": "UTC"}, ["h3", "h5"]),  # in UTC h2 was 16:30 on 31 October
        ({"since": "2026-11-01", "tz": "Asia/Shanghai"}, ["h2", "h3", "h5"]),
        ({"until": "2026-10-31"}, ["h1"]),  # until a date: the whole of that day
        ({"until": "2026-10-31", "tz": "UTC"}, ["h1", "h2"]),
        ({"since": "2026-11-01", "until": "2026-11-01"}, ["h2", "h3"]),  # one day
        ({"since": "2026-10-31T16:00:00Z"}, ["h2", "h3", "h5"]),  # a moment: 16:30Z, 04:00Z, 09:00Z are after
        ({"since": "2026-11-01T00:00"}, ["h2", "h3", "h5"]),  # a time without offset is local
        ({"until": "2026-11-01T00:30"}, ["h1"]),  # until a time stops just before it: h2 is at 00:30
        ({"since": "2026-11-01T00:30", "until": "2026-11-01T12:00"}, ["h2"]),
        ({"table": "t2"}, ["h3"]),
        ({"player": "p5"}, ["h3", "h4", "h5"]),
        ({"profile": "siren_liangse"}, ["h5"]),
        ({"table": "t1", "player": "p1"}, ["h1", "h2"]),
        ({"table": "t1", "player": "p1", "since": "2026-11-01"}, ["h2"]),
        ({"table": "nowhere"}, []),
    ],
)
def test_the_hands_in_scope(room: Path, scope: dict[str, str], expected: list[str]) -> None:
    assert hand_ids(room, Scope(**scope)) == expected


def test_every_table_keeps_the_rows_of_the_hands_in_scope(room: Path) -> None:
    scope = Scope(player="p5")  # h3, h4, h5
    with queries.connect(room, scope=scope) as con:

        def count(sql: str) -> int:
            (row,) = con.execute(sql).fetchall()
            return int(row[0])

        assert count("SELECT count(*) FROM player_hands") == 12  # three hands of four
        assert count("SELECT count(*) FROM wins") == 5  # h3 3, h4 1, h5 1
        assert count("SELECT count(*) FROM payments WHERE side = 'computed'") == 9  # h3 3, h4 5, h5 1
        assert count("SELECT count(*) FROM events") == 5  # a score sheet's events: its wins and kongs
        assert count("SELECT count(*) FROM issues") == 1  # h4's SETTLE_UNBALANCED (h2's two are out)
        # what belongs to no hand stays whole
        assert count("SELECT count(*) FROM rejects") == 1
        assert count("SELECT count(*) FROM ingest_runs") == 1
        # the unfiltered views are there too, under stored
        assert count("SELECT count(*) FROM stored.hands") == 5
    for table in ("player_hands", "wins", "payments", "events", "issues"):
        assert set(hand_ids(room, scope, table)) <= {"h3", "h4", "h5"}


# -------------------------------------------------------------------------------- months
def _months(con: Any, player: str) -> dict[str, int]:
    base = queries.player_base(con, by="month", player=player)
    return dict(zip(base["grp"].to_list(), base["hands"].to_list(), strict=True))


def test_months_are_the_records_local_months_or_the_zone_asked_for(room: Path) -> None:
    with queries.connect(room) as con:
        assert _months(con, "p1") == {"2026-10": 1, "2026-11": 3}  # h1 | h2, h3, h5
        found = audit(con).findings
        assert set(found.filter(found["hand_id"] == "h2")["month"].to_list()) == {"2026-11"}
        by_month = run_sql(con, "hands_by_month")  # the audit page's denominators (h4: no date)
        assert dict(by_month.iter_rows()) == {"2026-10": 1, "2026-11": 3, None: 1}
    with queries.connect(room, scope=Scope(tz="UTC")) as con:
        assert _months(con, "p1") == {"2026-10": 2, "2026-11": 2}  # h1, h2 | h3, h5
        found = audit(con).findings
        assert set(found.filter(found["hand_id"] == "h2")["month"].to_list()) == {"2026-10"}
        assert dict(run_sql(con, "hands_by_month").iter_rows()) == {"2026-10": 2, "2026-11": 2, None: 1}
    with queries.connect(room, scope=Scope(tz="America/New_York")) as con:
        # 15:30Z and 16:30Z on 31 October are 11:30 and 12:30 in New York (EDT, -04:00); 04:00Z on
        # 1 November is 00:00 there; 09:00Z on 2 November 04:00 (EST since 01:00)
        assert _months(con, "p1") == {"2026-10": 2, "2026-11": 2}
        rows = con.execute("SELECT hand_id, local_time(played_at, utc_offset) FROM hands ORDER BY hand_id")
        local = {h: t.isoformat() if t else None for h, t in rows.fetchall()}
    assert local == {
        "h1": "2026-10-31T11:30:00",
        "h2": "2026-10-31T12:30:00",
        "h3": "2026-11-01T00:00:00",
        "h4": None,
        "h5": "2026-11-02T04:00:00",
    }


def test_a_warehouse_from_before_the_offset_reads_as_utc(room: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(room, old)
    for f in (old / "hands").glob("*.parquet"):  # as written before the columns existed (a list one too)
        table = pq.read_table(f)
        pq.write_table(table.drop_columns(["utc_offset", "not_checked"]), f)
    with queries.connect(old) as con:
        assert {o for (o,) in con.execute("SELECT utc_offset FROM hands").fetchall()} == {None}
        types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE hands)").fetchall())
        assert (types["utc_offset"], types["not_checked"]) == ("SMALLINT", "VARCHAR[]")  # nulls of their type
        assert _months(con, "p1") == {"2026-10": 2, "2026-11": 2}
    assert hand_ids(old, Scope(since="2026-11-01")) == ["h3", "h5"]


# -------------------------------------------------------------------------------- the Scope value
@pytest.mark.parametrize(
    ("scope", "message"),
    [
        ({"since": "yesterday"}, "--since 'yesterday': not a date or a time"),
        ({"until": "2026-02-30"}, "--until '2026-02-30': not a date or a time"),
        ({"since": "2026-11-01T25:00"}, "--since '2026-11-01T25:00'"),
        ({"tz": "Mars/Olympus"}, "--tz 'Mars/Olympus': not a known time zone"),
        ({"tz": "../../etc/passwd"}, "not a known time zone"),
        ({"since": "2026-12-01", "until": "2026-11-30"}, "--since 2026-12-01 is after --until 2026-11-30"),
        ({"since": "2026-11-01T20:00", "until": "2026-11-01T20:00"}, "is the same time as --until"),
    ],
)
def test_a_scope_that_cannot_be_applied(scope: dict[str, str], message: str) -> None:
    with pytest.raises(ScopeError, match=message.replace("(", r"\(")):
        Scope(**scope)


def test_bounds() -> None:
    assert parse_bound("2026-11-01", "--since").at.isoformat() == "2026-11-01T00:00:00"
    assert parse_bound("2026-11-01T20:00:00-03:00", "--until", end=True).at.isoformat() == "2026-11-01T23:00:00+00:00"
    assert parse_bound("2026-11-01t20:00z", "--since").local is False  # RFC 3339 allows lower case
    assert Scope(tz="UTC").filters is False and Scope(profile="x").filters is True
    # a local bound and a moment cannot be ordered without the hands' offsets: both are applied as given
    assert Scope(since="2026-11-02", until="2026-11-01T00:00:00Z").params()["until_at"] is not None


# -------------------------------------------------------------------------------- the commands
@pytest.mark.parametrize(
    "args",
    [
        ["stats", "--since", "yesterday"],
        ["stats", "--tz", "Mars/Olympus"],
        ["stats", "--since", "2026-12-01", "--until", "2026-11-30"],
        ["report", "--out", "OUT", "--until", "soon"],
        ["audit", "--until", "2026-13-01"],
        ["collusion", "--tz", "Nowhere/Town"],
        ["info-cheats", "--since", "2026-11-02", "--until", "2026-11-01"],
        ["export", "--to", "mjai", "-o", "OUT/x.mjson", "--since", "soon"],
    ],
)
def test_bad_filters_are_one_line_and_exit_2(room: Path, tmp_path: Path, args: list[str]) -> None:
    args = [a.replace("OUT", str(tmp_path / "out")) for a in args]
    done = xuezhan(*args, "--warehouse", str(room))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xuezhan: --"), done.stderr
    assert not (tmp_path / "out").exists()  # nothing written


def test_a_scope_with_no_hand_is_exit_1(room: Path) -> None:
    done = xuezhan("stats", "--warehouse", str(room), "--table", "nowhere")
    assert done.returncode == 1
    assert done.stderr.strip() == f"xuezhan: no stored hand of {room} is in scope (hands at table nowhere)"
    done = xuezhan("audit", "--warehouse", str(room), "--player", "nobody")
    assert done.returncode == 1 and done.stderr.strip() == f"xuezhan: no hands of player 'nobody' in {room}"


def test_stats_under_a_scope(room: Path) -> None:
    done = xuezhan("stats", "--warehouse", str(room), "--since", "2026-11-01", "--format", "json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["scope"] == {
        "since": "2026-11-01",
        "until": None,
        "table": None,
        "player": None,
        "profile": None,
        "tz": None,
    }
    t = answer["table"]
    assert (answer["hands"], t["stored_hands"], t["valid_hands"]) == (3, 3, 2)  # h2 h3 h5; h2 is invalid
    assert t["rejects"] == 1  # the whole warehouse's: a reject has no time
    assert {p["player"]: p["hands"] for p in answer["players"]} == {"p1": 3, "p2": 3, "p3": 2, "p4": 2, "p5": 2}
    assert t["fan_distribution"] == {"1": 3, "2": 1, "3": 1}  # h2 清一色 3, h3 1 1 2, h5 1
    text = xuezhan("stats", "--warehouse", str(room), "--since", "2026-11-01").stdout.splitlines()
    assert text[0].startswith("player\thands")  # the header stays first (scripts read it)
    scope_line = "scope: hands played from 2026-11-01 on (each record's local time)"
    assert any(line.startswith(scope_line) and "not filtered" in line for line in text)
    assert any(line.startswith("hands 3 (stored 3, valid 2, rejects 1 in the whole warehouse)") for line in text)


def test_audit_under_a_scope(room: Path) -> None:
    def findings(*args: str) -> list[tuple[str, str]]:
        done = xuezhan("audit", "--warehouse", str(room), "--format", "json", *args)
        assert done.returncode == 0, done.stderr
        return sorted((f["hand_id"], f["code"]) for f in json.loads(done.stdout))

    every = [("h2", "SETTLE_DELTA"), ("h2", "SETTLE_DELTA"), ("h4", "SETTLE_UNBALANCED")]
    assert findings() == every
    assert findings("--player", "p5") == [("h4", "SETTLE_UNBALANCED")]  # p5 did not sit in h2
    assert findings("--table", "t1") == every
    assert findings("--since", "2026-11-01") == every[:2]  # h4 has no time
    assert findings("--since", "2026-11-01", "--tz", "UTC") == []  # h2 was still October in UTC
    done = xuezhan("audit", "--warehouse", str(room), "--format", "csv", "--tz", "UTC")
    months = {line.split(",")[0]: line.rsplit(",", 1)[1] for line in done.stdout.splitlines()[1:]}
    assert months == {"h2": "2026-10", "h4": ""}
    text = xuezhan("audit", "--warehouse", str(room), "--profile", "chengdu").stdout.splitlines()
    assert text[0].startswith("scope: hands of profile chengdu")
    # h2: the 2 points one seat paid too few and the other got too few, counted once (the receiver's
    # SETTLE_DELTA is the payer's reason); h4: the 1 point by which its claimed deltas do not add up
    assert text[1] == "3 findings in 2 hands, 3 points at stake"


def test_info_cheats_and_export_under_a_scope(room: Path, tmp_path: Path) -> None:
    done = xuezhan("info-cheats", "--warehouse", str(room), "--table", "t2", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []  # score sheets have no discards to judge (the simulated room's test)
    out = str(tmp_path / "x")
    done = xuezhan("export", "--to", "mjai", "--warehouse", str(room), "--since", "2026-11-01", "-o", out)
    # the three hands in scope are selected; mjai cannot carry a score sheet (no deal), so each is skipped
    assert "hands selected 3 = 0 written + 3 skipped" in done.stdout, done.stdout + done.stderr


def test_the_report_under_a_scope(room: Path, tmp_path: Path) -> None:
    done = xuezhan("report", "--warehouse", str(room), "--out", str(tmp_path / "r"), "--table", "t2", "--quiet")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r" / "index.html").is_file()


# -------------------------------------------------------------------------------- a simulated room
CONFIG = SimConfig(hands=160, seed=11, players=8, session_hands=20, inject=InjectSpec.parse("score_errors=0.05"))


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    root = tmp_path_factory.mktemp("sim")
    games = root / "games.jsonl"
    write(CONFIG, games)
    ingest([str(games)], root / "wh", workers=1)
    records = [json.loads(line) for line in games.read_text(encoding="utf-8").splitlines() if line.strip()]
    return root, records


def _only(root: Path, name: str, records: list[dict[str, Any]]) -> Path:
    path = root / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    ingest([str(path)], root / name, workers=1)
    return root / name


def test_a_scope_is_the_warehouse_of_just_those_hands(simulated: tuple[Path, list[dict[str, Any]]]) -> None:
    """Stats, findings, the collusion screen and info-cheats of a scoped connection are those of a warehouse
    ingested from the hands in scope alone: the filter keeps exactly those hands, in every table."""
    root, records = simulated
    player = records[0]["players"][0]
    times = sorted(r["played_at"] for r in records)
    since = times[len(times) // 3][:10]  # a date: the records' own local date (they are written at +08:00)
    assert all(t.endswith("+08:00") for t in times)
    kept = [r for r in records if player in r["players"] and r["played_at"][:10] >= since]
    assert 20 < len(kept) < len(records) // 2
    alone = _only(root, "alone", kept)
    scope = Scope(player=player, since=since)
    with queries.connect(root / "wh", scope=scope) as scoped, queries.connect(alone) as single:
        assert [h for (h,) in scoped.execute("SELECT hand_id FROM hands ORDER BY 1").fetchall()] == sorted(
            r["hand_id"] for r in kept
        )
        a, b = queries.stats(scoped, by="month"), queries.stats(single, by="month")
        a["table"].pop("rejects"), b["table"].pop("rejects")
        assert a == b
        assert audit(scoped).findings.equals(audit(single).findings)
        judged = [r.as_dict() for r in screen_information(scoped, min_discards=50)]
        assert judged and judged == [r.as_dict() for r in screen_information(single, min_discards=50)]
        pairs = [r.as_dict() for r in screen(scoped, min_hands=5).pairs]
        assert pairs and pairs == [r.as_dict() for r in screen(single, min_hands=5).pairs]
        # the player's pairs shared only the hands in scope
        shared = {tuple(p["players"]): p["shared_hands"] for p in pairs}
        for (x, y), n in shared.items():
            assert n <= sum(1 for r in kept if x in r["players"] and y in r["players"])


# -------------------------------------------------------------------------------- the runs of a scope, in file order
@pytest.fixture(scope="module")
def interleaved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 simulated hands of 6 players at 38 tables, a pair colluding, ingested in a shuffled order: the files
    hold the hand ids interleaved, not sorted (as a platform's files hold them)."""
    import gzip
    import random

    folder = tmp_path_factory.mktemp("interleaved")
    records = folder / "games.jsonl.gz"
    write(SimConfig(hands=300, seed=5, players=6, inject=InjectSpec.parse("collude=1:0.5")), records)
    lines = gzip.decompress(records.read_bytes()).splitlines(keepends=True)
    random.Random(2).shuffle(lines)
    (folder / "shuffled.jsonl").write_bytes(b"".join(lines))
    ingest([str(folder / "shuffled.jsonl")], folder / "wh", workers=1)
    return folder / "wh"


def _scope_of(warehouse: Path, kind: str) -> Scope:
    """A scope of ``kind`` on ``warehouse``: its first hand's first player, the hands from the median time on (to a
    day later), or its first hand's table."""
    with queries.connect(warehouse) as con:
        players, table = con.execute("SELECT players, table_id FROM hands LIMIT 1").fetchall()[0]
        times = sorted(t for (t,) in con.execute("SELECT played_at FROM hands").fetchall())
    middle = times[len(times) // 2]
    return {
        "player": Scope(player=players[0]),
        "time": Scope(since=middle.isoformat(), until=(middle + (times[-1] - middle) / 2).isoformat()),
        "table": Scope(table=table),
    }[kind]


@pytest.mark.parametrize("kind", ["player", "time", "table"])
def test_under_each_kind_of_scope_the_models_read_their_runs_in_file_order_and_only_the_hands_in_scope(
    interleaved: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45: under a player, a time range or a table, the runs are read in file order (``range_runs`` and
    ``bounded`` fail here) though the ids interleave in the files; each run's rows are of hands in scope only,
    every hand in scope reaches a run; and the models (stats' player_base by add_up, the collusion screen's pair
    features by each_run, info-cheats' discard counts by summed_runs) equal themselves read over the scoped views
    (a connection whose runs cannot be read in file order: at once, or by ranges)."""
    from pipeline.analytics import runs
    from pipeline.audit.collusion import WarehouseSource, chunked_features
    from pipeline.audit.information import discard_counts

    scope = _scope_of(interleaved, kind)
    size = 3 if kind == "table" else 17
    monkeypatch.setattr(queries, "RUN_HANDS", size)
    in_scope = set(hand_ids(interleaved, scope))
    assert 8 <= len(in_scope) < 300, kind

    def features(con: Any) -> Any:
        with WarehouseSource(con, size) as source:
            frame = chunked_features(source).drop("hand")
        counts = [c for c in frame.columns if not c.startswith("base_") and not c.startswith("exp_")]
        return frame.select(counts).sort(counts)

    def models(con: Any) -> dict[str, Any]:
        base = queries.player_base(con)
        return {
            "player_base": base.sort(base.columns),
            "features": features(con),
            "discards": discard_counts(con, chunk_hands=size),
        }

    def failing(*args: object, **kwargs: object) -> None:
        raise AssertionError("fell back to ranges or to a query over every hand")

    seen: dict[str, set[str]] = {}
    real_zip = runs._zip

    def checked(readers: Any, names: list[str], local: Any, size: int) -> Any:  # each run's rows, as registered
        for run in real_zip(readers, names, local, size):
            for name in names:
                got = {h for (h,) in local.execute(f'SELECT DISTINCT hand_id FROM "{name}"').fetchall()}
                assert got <= in_scope, (name, got - in_scope)
                seen.setdefault(name, set()).update(got)
            yield run

    with queries.connect(interleaved, scope=scope) as con:
        ids = [h for (h,) in con.execute("SELECT hand_id FROM stored.hands").fetchall()]
        assert ids != sorted(ids)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(runs, "range_runs", failing)
            patch.setattr(runs, "bounded", failing)
            patch.setattr(runs, "_zip", checked)
            in_order = models(con)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(runs, "cursor_sees_all", lambda con: False)
            at_once = models(con)
    assert seen["hands"] == in_scope and {"events", "player_hands", "wins"} <= set(seen)
    for name, frame in in_order.items():
        assert frame.height > 0 and frame.equals(at_once[name]), name
