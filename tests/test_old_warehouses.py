"""Every command on a warehouse an earlier release wrote (issue 40 point 4).

``tests/fixtures/warehouse-2026-12-01`` was written by the release of 1 December: no manifest, no ``wait_choices``,
none of the columns added since. That release's warehouses made ``compact`` and a further ``ingest`` fail, leaving
an empty ``wait_choices/`` after which every command failed; ``info-cheats`` said "0 screened, 0 flagged" and exit
0; ``deals`` said there was no dealt hand; ``collusion`` called the hands' level ``dealt`` without a word. Now
each read command works on it and says, once, which columns an earlier release did not record and how to have
them; the commands that need those columns say so and exit 2; ``ingest`` and ``compact`` upgrade it in place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cli import app
from pipeline.analytics import queries
from pipeline.ingest.warehouse import Warehouse
from pipeline.simulate.tables import SimConfig, write

FIXTURE = Path(__file__).parent / "fixtures" / "warehouse-2026-12-01"
RUNNER = CliRunner()
WARNING = "written by an earlier release"


@pytest.fixture
def old(tmp_path) -> Path:
    """A copy of the fixture's warehouse, its hands' source_file pointed at a copy of its records."""
    records = tmp_path / "games.jsonl"
    shutil.copy(FIXTURE / "games.jsonl", records)
    warehouse = tmp_path / "wh"
    shutil.copytree(FIXTURE / "wh", warehouse)
    for part in (warehouse / "hands").glob("*.parquet"):
        table = pq.read_table(part)
        if table.num_rows:
            column = pa.array([str(records)] * table.num_rows, type=table.schema.field("source_file").type)
            table = table.set_column(table.schema.get_field_index("source_file"), "source_file", column)
            pq.write_table(table, part)
    assert not (warehouse / "_manifest.parquet").exists() and not (warehouse / "wait_choices").exists()
    return warehouse


def _run(*args: str) -> tuple[int, str, str]:
    """A command as its own process would run it: its warnings not yet given (they are given once per process)."""
    queries._WARNED.clear()
    result = RUNNER.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _hand(warehouse: Path) -> str:
    return duckdb.sql(f"SELECT min(hand_id) FROM read_parquet('{warehouse}/hands/*.parquet')").fetchall()[0][0]


def test_the_fixture_is_the_old_layout() -> None:
    hands = pq.read_schema(next((FIXTURE / "wh" / "hands").glob("part-2*.parquet")))
    assert "level" not in hands.names and "waits_judged" not in hands.names
    assert not (FIXTURE / "wh" / "_manifest.parquet").exists() and not (FIXTURE / "wh" / "wait_choices").exists()
    assert Warehouse(FIXTURE / "wh").written_before()["events"] == ["could_kong", "cost"]


def test_read_commands_work_and_say_what_an_earlier_release_did_not_record(old, tmp_path) -> None:
    for args in (
        ("stats", "--warehouse", str(old)),
        ("audit", "--warehouse", str(old), "--format", "json"),
        ("collusion", "--warehouse", str(old), "--min-hands", "3"),
        ("replay", _hand(old), "--warehouse", str(old)),
        ("export", "--to", "mjai", "--out", str(tmp_path / "out.mjson"), "--warehouse", str(old)),
        ("report", "--warehouse", str(old), "--out", str(tmp_path / "report"), "--quiet"),
    ):
        code, out, err = _run(*args)
        assert code == 0, (args, out, err)
        # one warning line naming the columns and the way to have them
        assert err.count(WARNING) == 1, (args, err)
        assert "hands.level" in err and "events.cost" in err and "ingest the records again" in err
    # the levels line of the collusion screen says the hands were read as dealt, and why
    _, out, err = _run("collusion", "--warehouse", str(old), "--min-hands", "3")
    assert "(dealt 16)" in out and "a hand's level as dealt" in err
    assert (tmp_path / "report" / "index.html").exists()
    assert json.loads(_run("audit", "--warehouse", str(old), "--format", "json")[1]) == []


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("info-cheats", "ingested before the winning-tile anticipation was judged"),
        ("deals", "made before ingest kept each deal's shanten"),
    ],
)
def test_commands_that_need_newer_columns_say_so_and_exit_2(old, command, message) -> None:
    code, out, err = _run(command, "--warehouse", str(old))
    assert code == 2, (out, err)
    assert message in err and "new warehouse" in err


def test_ingest_and_compact_upgrade_it_in_place(old, tmp_path) -> None:
    before = _run("stats", "--warehouse", str(old), "--format", "json")[1]
    code, out, err = _run("compact", "--warehouse", str(old))
    assert code == 0, (out, err)
    assert (old / "_manifest.parquet").exists() and list((old / "wait_choices").glob("*.parquet"))
    played = tmp_path / "played.jsonl"
    write(SimConfig(hands=8, seed=9, players=6, session_hands=8), played)
    more = tmp_path / "more.jsonl"  # other hands: their ids must not be the fixture's (that is a conflict)
    records = [json.loads(line) for line in played.read_text(encoding="utf-8").splitlines()]
    more.write_text(
        "".join(
            json.dumps(r | {"hand_id": "new-" + r["hand_id"], "session_id": "new-" + r["session_id"]}) + "\n"
            for r in records
        ),
        encoding="utf-8",
    )
    code, out, err = _run("ingest", str(more), "--warehouse", str(old), "--quiet")
    assert code == 0, (out, err)
    with duckdb.connect(str(old / "warehouse.duckdb"), read_only=True) as con:  # any DuckDB client
        assert con.execute("SELECT count(*), count(level) FROM hands").fetchall() == [(24, 8)]
        assert con.execute("SELECT count(*) FROM wait_choices").fetchall()[0][0] > 0
    code, out, err = _run("stats", "--warehouse", str(old), "--format", "json")
    assert code == 0 and out != before and err.count(WARNING) == 1
    assert _run("audit", "--warehouse", str(old))[0] == 0
