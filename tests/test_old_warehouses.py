"""Every command on a warehouse an earlier release wrote (issue 40 point 4), one of each layout.

``tests/fixtures/warehouse-2026-12-01`` was written by the release of 1 December: no manifest, no ``wait_choices``,
none of the columns added since. That release's warehouses made ``compact`` and a further ``ingest`` fail, leaving
an empty ``wait_choices/`` after which every command failed; ``info-cheats`` said "0 screened, 0 flagged" and exit
0; ``deals`` said there was no dealt hand; ``collusion`` called the hands' level ``dealt`` without a word. Now
each read command works on it and says, once, which columns an earlier release did not record and how to have
them; the commands that need those columns say so and exit 2; ``ingest`` and ``compact`` upgrade it in place.
``warehouse-2026-12-02`` (a manifest, no ``wait_choices``, no deal scores) and ``warehouse-2026-12-03``
(``wait_choices``, no exchange facts, no kong offers or costs) are the layouts of the next two days' releases
(their READMEs say how each was made)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
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

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass(frozen=True)
class Layout:
    """One earlier release's warehouse and what today's commands must say of it."""

    name: str  # its folder under tests/fixtures
    lacking: dict[str, list[str]]  # Warehouse.written_before(): the columns its files lack, by table
    level: str  # what collusion's levels line calls its 16 hands
    exit_2: tuple[str, ...]  # the commands that need what it lacks: they say so and exit 2

    @property
    def path(self) -> Path:
        return FIXTURES / self.name


EXCHANGE = ["gave_to", "gift_fit", "void_over"]
# every layout's: the turns came later
READY = {"hands": ["ready_judged"], "player_hands": ["ready_turn"], "wins": ["turn", "source_turn"]}
# every layout's: the draw luck came later still (pipeline/game/evidence.py LUCK)
DRAW_LUCK = [f"draw_luck_{name}" for name in ("win", "paid", "ready", "rivals", "kong", "fed")]
LAYOUTS = (
    Layout(
        "warehouse-2026-12-01",
        {
            "hands": [
                *("utc_offset", "seats", "suits", "mode", "fan_base", "pot", "wins"),
                *("level", "wall_commitment", "not_checked", "waits_judged", *READY["hands"]),
            ],
            "player_hands": ["deal_shanten", "deal_suited", *EXCHANGE, *READY["player_hands"], *DRAW_LUCK],
            "events": ["could_kong", "cost", "ms"],
            "wins": READY["wins"],
        },
        "dealt",
        ("info-cheats", "deals", "think-time"),
    ),
    Layout(
        "warehouse-2026-12-02",
        {
            "hands": ["utc_offset", "wall_commitment", "waits_judged", *READY["hands"]],
            "player_hands": ["deal_shanten", "deal_suited", *EXCHANGE, *READY["player_hands"], *DRAW_LUCK],
            "events": ["could_kong", "cost", "ms"],
            "wins": READY["wins"],
        },
        "full",
        ("info-cheats", "deals", "think-time"),
    ),
    Layout(
        "warehouse-2026-12-03",
        {
            "hands": ["wall_commitment", *READY["hands"]],
            "player_hands": [*EXCHANGE, *READY["player_hands"], *DRAW_LUCK],
            "events": ["could_kong", "cost", "ms"],
            "wins": READY["wins"],
        },
        "full",
        ("think-time",),
    ),
)
RUNNER = CliRunner()
WARNING = "written by an earlier release"


@pytest.fixture(params=LAYOUTS, ids=[layout.name for layout in LAYOUTS])
def layout(request: pytest.FixtureRequest) -> Layout:
    return request.param


@pytest.fixture
def old(tmp_path, layout: Layout) -> Path:
    """A copy of the layout's warehouse, its hands' source_file pointed at a copy of its records."""
    records = tmp_path / "games.jsonl"
    shutil.copy(layout.path / "games.jsonl", records)
    warehouse = tmp_path / "wh"
    shutil.copytree(layout.path / "wh", warehouse)
    for part in (warehouse / "hands").glob("*.parquet"):
        table = pq.read_table(part)
        if table.num_rows:
            column = pa.array([str(records)] * table.num_rows, type=table.schema.field("source_file").type)
            table = table.set_column(table.schema.get_field_index("source_file"), "source_file", column)
            pq.write_table(table, part)
    return warehouse


def _run(*args: str) -> tuple[int, str, str]:
    """A command as its own process would run it: its warnings not yet given (they are given once per process)."""
    queries._WARNED.clear()
    result = RUNNER.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _hand(warehouse: Path) -> str:
    return duckdb.sql(f"SELECT min(hand_id) FROM read_parquet('{warehouse}/hands/*.parquet')").fetchall()[0][0]


def test_each_fixture_is_its_release_s_layout(layout: Layout) -> None:
    root = layout.path / "wh"
    assert (root / "_manifest.parquet").exists() == (layout.name != "warehouse-2026-12-01")
    assert (root / "wait_choices").exists() == (layout.name == "warehouse-2026-12-03")
    assert Warehouse(root).written_before() == layout.lacking


def test_read_commands_work_and_say_what_an_earlier_release_did_not_record(old, layout, tmp_path) -> None:
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
        named = [f"{table}.{column}" for table, columns in layout.lacking.items() for column in columns]
        assert all(column in err for column in named) and "ingest the records again" in err, (args, err)
    # the levels line of the collusion screen says what the hands were read as (dealt where no level was kept)
    _, out, err = _run("collusion", "--warehouse", str(old), "--min-hands", "3")
    assert f"({layout.level} 16)" in out
    assert (tmp_path / "report" / "index.html").exists()
    assert json.loads(_run("audit", "--warehouse", str(old), "--format", "json")[1]) == []


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("info-cheats", "ingested before the winning-tile anticipation was judged"),
        ("deals", "made before ingest kept each deal's shanten"),
        ("think-time", "an earlier release that did not keep decision times (events.ms)"),
    ],
)
def test_commands_that_need_newer_columns_say_so_and_exit_2(old, layout, command, message) -> None:
    code, out, err = _run(command, "--warehouse", str(old))
    if command not in layout.exit_2:  # the layout has what the command needs
        assert code == 0, (out, err)
        return
    assert code == 2, (out, err)
    assert message in err and "new warehouse" in err


def test_ingest_and_compact_upgrade_it_in_place(old, layout, tmp_path) -> None:
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
        leveled = 8 if "level" in layout.lacking.get("hands", []) else 24  # the old hands' level: null if not kept
        assert con.execute("SELECT count(*), count(level) FROM hands").fetchall() == [(24, leveled)]
        assert con.execute("SELECT count(*) FROM wait_choices").fetchall()[0][0] > 0
    code, out, err = _run("stats", "--warehouse", str(old), "--format", "json")
    assert code == 0 and out != before and err.count(WARNING) == 1
    assert _run("audit", "--warehouse", str(old))[0] == 0


def test_turn_metrics_of_an_older_warehouse(old, layout) -> None:
    """Its events give the win and deal-in turns (counted by the SQL from the events it holds: it has no wins.turn);
    its ready turns were never
    worked out (hands.ready_judged null), so the ready figures have no hands, rather than reading "never ready";
    its starting shanten is there when its release kept the deals' shanten."""
    code, out, err = _run("stats", "--warehouse", str(old), "--format", "json")
    assert code == 0, err
    answer = json.loads(out)
    metrics = [p["metrics"] for p in answer["players"]]
    assert sum(m["win_turn"]["n"] for m in metrics) == sum(m["win_rate"]["num"] for m in metrics) > 0
    assert sum(m["deal_in_turn"]["n"] for m in metrics) > 0
    for m in metrics:
        assert m["ready_turn"] == {"value": None, "sum": 0, "n": 0, "ci_low": None, "ci_high": None}
        assert m["ready_rate"]["den"] == m["ready_by_turn_6_rate"]["den"] == 0 and m["ready_rate"]["value"] is None
    shanten = sum(m["starting_shanten"]["n"] for m in metrics)
    assert (shanten == 0) == ("deal_shanten" in layout.lacking.get("player_hands", []))


def test_an_older_warehouse_s_base_counts_run_by_run_equal_one_query(old, monkeypatch) -> None:
    """Its wins lack their turns, so the runs read every event beside the hands (the SQL counts the turns from
    them): the players' base counts added up run by run are the model's over every hand at once."""
    from polars.testing import assert_frame_equal

    from pipeline.analytics import runs

    with queries.connect(old, warn=False) as con:
        assert any(s.table == "events" and s.where is None for s in queries.base_streams(con))
        with monkeypatch.context() as m:
            m.setattr(runs, "cursor_sees_all", lambda con: False)
            whole = queries.player_base_levels(con)
        monkeypatch.setattr(queries, "RUN_HANDS", 3)
        assert_frame_equal(queries.player_base_levels(con), whole, rel_tol=1e-9, abs_tol=1e-6)
    assert whole["win_turn_n"].sum() > 0
