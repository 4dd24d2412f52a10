"""A warehouse that mixes point scales (issue 40 point 1): a Mahjong Soul room (``majsoul``, base 1,000) beside a
Chengdu room (base 1), each ingested alone and both together. Money is compared in bases (points ÷ the hand's
base), rankings are made within comparable groups, "all players" means the player's own room and says which
where there are several, and a warehouse that mixes scales says so: the audit's ranking, the unusual-result
screen and the player pages of the mixed warehouse agree with the rooms ingested alone.

Each room is eight players of its own (``m…``, ``c…``) at 300 simulated hands, a tenth of them with a scoring
error in their claimed settlement (``score_errors=0.1``): findings in both rooms."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cli import app
from dashboards import findings as found_dash
from dashboards import overview, player
from dashboards.site import build_report
from pipeline import evaluate
from pipeline.analytics import queries
from pipeline.analytics.scales import label, scales
from pipeline.audit.scoring import FINDING_FIELDS, audit
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import Warehouse
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

HANDS = 300
ROOMS = {"m": ("majsoul", 1000, 41), "c": ("chengdu", 1, 42)}  # prefix: profile, its base, the simulator's seed
FIXTURE = Path(__file__).parent / "fixtures" / "warehouse-2026-12-01"
RUNNER = CliRunner()


@pytest.fixture(scope="module")
def rooms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The warehouses ``m`` and ``c`` (each room alone) and ``mc`` (both)."""
    root = tmp_path_factory.mktemp("scales")
    for prefix, (profile, _, seed) in ROOMS.items():
        raw = root / f"{prefix}-raw.jsonl"
        spec = InjectSpec.parse("score_errors=0.1")
        write(SimConfig(hands=HANDS, seed=seed, players=8, profile=profile, inject=spec), raw)
        lines = []
        for line in raw.read_text(encoding="utf-8").splitlines():  # the room's own players, tables and hands
            record = json.loads(line)
            record["players"] = [f"{prefix}{p}" for p in record["players"]]
            for key in ("hand_id", "session_id", "table_id"):
                record[key] = f"{prefix}-{record[key]}"
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        (root / f"{prefix}.jsonl").write_text("".join(lines), encoding="utf-8")
    out = {}
    for name, inputs in (("m", ["m"]), ("c", ["c"]), ("mc", ["m", "c"])):
        run = ingest([str(root / f"{i}.jsonl") for i in inputs], root / f"wh-{name}", workers=1)
        assert run.reconciled and run.records_stored == HANDS * len(inputs)
        out[name] = root / f"wh-{name}"
    return out


def _audit(warehouse: Path) -> pl.DataFrame:
    with queries.connect(warehouse) as con:
        return audit(con).findings


def _room(hand_id: str) -> str:
    return hand_id.split("-", 1)[0]


# ---------------------------------------------------------------------------------------------- the audit
def test_each_rooms_findings_keep_their_order_and_the_rooms_interleave_by_money_in_bases(rooms) -> None:
    mixed = _audit(rooms["mc"])
    assert set(mixed["base"].unique().to_list()) == {1000, 1}
    for prefix, (_, base, _) in ROOMS.items():
        alone = _audit(rooms[prefix])
        assert alone.height and (alone["base"] == base).all()
        # the room's findings among the mixed ones: the same findings, in the same order as the room alone
        ours = mixed.filter(pl.col("hand_id").str.starts_with(f"{prefix}-"))
        assert ours.equals(alone)
    # the mixed order: by money ÷ base, then money, then the audit's total order, recounted here
    rows = mixed.to_dicts()
    key = [
        (
            -r["money"] / r["base"],
            -r["money"],
            r["hand_id"],
            r["event"] is not None,
            r["event"] or 0,
            r["code"],
            r["seat"] is not None,
            r["seat"] or 0,
            r["message"],
        )
        for r in rows
    ]
    assert key == sorted(key)
    # 1,000 points at majsoul's base are 1 point at chengdu's: they rank together, not 1,000 times apart
    one_base = [(_room(r["hand_id"]), r["money"]) for r in rows if r["money"] == r["base"]]
    assert ("m", 1000) in one_base and ("c", 1) in one_base
    first = next(i for i, r in enumerate(rows) if r["money"] == r["base"])
    last = max(i for i, r in enumerate(rows) if r["money"] == r["base"])
    assert all(rows[i]["money"] == rows[i]["base"] for i in range(first, last + 1))
    # both rooms among the first mistakes: points alone would have put every majsoul finding first
    with queries.connect(rooms["mc"]) as con:
        first_mistakes = audit(con).mistakes().head(10)
    assert {_room(h) for h in first_mistakes["hand_id"].to_list()} == {"m", "c"}


def test_the_stake_is_said_in_bases_when_the_bases_differ(rooms) -> None:
    points = {prefix: int(_audit(rooms[prefix])["money"].sum()) for prefix in ROOMS}
    assert points["m"] % 1000 == 0 and points["c"] > 0  # majsoul pays in thousands: whole bases
    with queries.connect(rooms["m"]) as con:
        assert audit(con).stake_text() == f"{points['m']:,} points at stake"  # one base: as before
    with queries.connect(rooms["mc"]) as con:
        result = audit(con)
    bases = points["m"] // 1000 + points["c"]
    assert result.mixed and result.stake_text() == (
        f"{bases:,} bases at stake (points ÷ each hand's base): {points['m']:,} points at base 1,000, "
        f"{points['c']:,} at base 1"
    )
    grouped = result.grouped("code")
    assert math.isclose(grouped["bases"].sum(), bases) and grouped["money"].sum() == points["m"] + points["c"]
    assert grouped["bases"].to_list() == sorted(grouped["bases"].to_list(), reverse=True)


def test_audit_command_says_the_warehouse_mixes_scales(rooms) -> None:
    out = RUNNER.invoke(app, ["audit", "--warehouse", str(rooms["mc"]), "--top", "5"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0].startswith("This warehouse mixes scales") and f"chengdu at base 1, {HANDS} hands" in lines[0]
    assert f"majsoul at base 1,000, {HANDS} hands" in lines[0]
    assert "bases at stake (points ÷ each hand's base)" in lines[1]
    assert "top 5 by money in bases" in out.stdout and " at base 1,000 " in out.stdout
    alone = RUNNER.invoke(app, ["audit", "--warehouse", str(rooms["c"])])
    assert "mixes scales" not in alone.stdout and "bases" not in alone.stdout
    assert re.match(r"\d+ findings in \d+ hands, [\d,]+ points at stake$", alone.stdout.splitlines()[0])
    rows = json.loads(RUNNER.invoke(app, ["audit", "--warehouse", str(rooms["mc"]), "--format", "json"]).stdout)
    assert all(tuple(r) == FINDING_FIELDS for r in rows)
    assert {(_room(r["hand_id"]), r["base"]) for r in rows} == {("m", 1000), ("c", 1)}
    csv = RUNNER.invoke(app, ["audit", "--warehouse", str(rooms["mc"]), "--format", "csv"]).stdout
    assert ",base," in csv.splitlines()[0]


# ---------------------------------------------------------------------------------------------- scale groups
def test_the_scale_groups(rooms) -> None:
    with queries.connect(rooms["mc"]) as con:
        s = scales(con)
    assert s.groups.select("group", "profile", "base", "hands").rows() == [
        ("chengdu", "chengdu", 1, HANDS),
        ("majsoul (base 1,000)", "majsoul", 1000, HANDS),
    ]
    assert s.mixed and s.bases == [1000, 1] and label("majsoul", 1000) == "majsoul (base 1,000)"
    assert {(p[0], g) for p, g in s.players.rows()} == {("m", "majsoul (base 1,000)"), ("c", "chengdu")}
    assert s.population("chengdu") == "players of chengdu"
    with queries.connect(rooms["m"]) as con:
        alone = scales(con)
    assert not alone.mixed and alone.line() is None and alone.population("majsoul (base 1,000)") == "all players"


def test_a_players_group_is_that_of_most_of_their_hands_ties_to_the_smallest_label() -> None:
    with duckdb.connect() as con:
        con.execute(
            "CREATE TABLE hands AS SELECT * FROM (VALUES ('h1', 'chengdu', 1), ('h2', 'majsoul', 1000), "
            "('h3', 'sbr', 1), ('h4', 'sbr', 1)) AS t(hand_id, profile, base)"
        )
        con.execute(
            "CREATE TABLE player_hands AS SELECT * FROM (VALUES ('h1', 'a'), ('h2', 'a'), ('h2', 'b'), ('h3', 'b'), "
            "('h2', 'c'), ('h3', 'c'), ('h4', 'c')) AS t(hand_id, player)"
        )
        s = scales(con)
    assert dict(s.players.rows()) == {"a": "chengdu", "b": "majsoul (base 1,000)", "c": "sbr"}
    assert s.groups.rows() == [
        ("sbr", "sbr", 1, 2),
        ("chengdu", "chengdu", 1, 1),
        ("majsoul (base 1,000)", "majsoul", 1000, 1),
    ]
    assert s.line() == (
        "This warehouse mixes scales (a profile and its base, 底): sbr at base 1, 2 hands; chengdu at base 1, 1 hand; "
        "majsoul at base 1,000, 1 hand. Money is compared in bases (points ÷ each hand's base), and each player with "
        "the players of their own group."
    )


# ---------------------------------------------------------------------------------------------- unusual results
def _unusual(warehouse: Path) -> pl.DataFrame:
    with queries.connect(warehouse) as con:
        return found_dash.unusual_of(con)


def test_unusual_results_compare_each_player_with_their_own_room(rooms) -> None:
    mixed = _unusual(rooms["mc"])
    assert mixed["tested"].sum() == 16  # every player has more than 100 hands
    same = ["group", "hands", "net", "per_hand", "se", "expected", "spread", "low", "high", "z", "p", "tested"]
    for prefix in ROOMS:
        alone = _unusual(rooms[prefix]).sort("player")
        ours = mixed.filter(pl.col("player").str.starts_with(prefix)).sort("player")
        assert ours["player"].to_list() == alone["player"].to_list()
        for a, b in zip(ours.select("player", *same).rows(), alone.select("player", *same).rows(), strict=True):
            assert a[:4] == b[:4]  # player, group, hands, net
            assert all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) for x, y in zip(a[4:-1], b[4:-1], strict=True))
            assert a[-1] == b[-1]
        # q: Benjamini–Yekutieli over every player tested, of both rooms (so it differs); the order of p holds
        assert ours.sort("p")["player"].to_list() == alone.sort("p")["player"].to_list()
    # the rooms are never each other's reference: a majsoul player's range is in thousands, a chengdu one's not
    expected = dict(mixed.select("player", "expected").rows())
    spread = dict(mixed.select("player", "spread").rows())
    assert all(abs(expected[p]) + spread[p] < 100 for p in expected if p.startswith("c"))
    assert max(spread[p] for p in spread if p.startswith("m")) > 100


# ---------------------------------------------------------------------------------------------- player pages
FIGURES = ["metric", "who", "value", "num", "den", "den_of", "ci_low", "ci_high", "player"]


def test_a_players_population_is_their_room(rooms) -> None:
    with queries.connect(rooms["mc"]) as con:
        every = player.prep_every_player(con)
        fan = player.prep_every_player_fan(con)
        single = {p: player.prep_player_table(con, p) for p in ("mp001", "cp001")}
        single_fan = player.prep_player_fan(con, "mp001")
    populations = every.filter(pl.col("who") == player.POPULATION)
    assert sorted(populations["group"].unique().to_list()) == ["chengdu", "majsoul (base 1,000)"]
    for pid, prefix in (("mp001", "m"), ("cp001", "c")):
        with queries.connect(rooms[prefix]) as con:
            alone = player.prep_player_table(con, pid)
            alone_fan = player.prep_every_player_fan(con)
        mine = player.metrics_of(every, pid)
        assert mine.equals(single[pid])  # every player at once is each player alone
        assert mine.select(FIGURES).equals(alone.select(FIGURES)), pid  # the room alone: the same figures
        group = "majsoul (base 1,000)" if prefix == "m" else "chengdu"
        assert set(mine["population"]) == {f"players of {group}"} and set(alone["population"]) == {"all players"}
        ours = fan.filter(pl.col("player").is_null() & (pl.col("group") == group)).select("fan", "wins", "share", "n")
        assert ours.equals(alone_fan.filter(pl.col("player").is_null()).select("fan", "wins", "share", "n"))
    # one player's fan chart: the population is their room's wins
    room = single_fan.filter(pl.col("who") == player.POPULATION)
    majsoul = fan.filter(pl.col("player").is_null() & (pl.col("group") == "majsoul (base 1,000)"))
    assert room.filter(pl.col("wins") > 0).select("fan", "wins").rows() == majsoul.select("fan", "wins").rows()


def test_the_report_names_the_group_and_says_the_warehouse_mixes_scales(rooms, tmp_path) -> None:
    index = build_report(rooms["mc"], tmp_path / "mixed", players=["mp001", "cp001"], min_hands=50)
    overview = index.read_text(encoding="utf-8")
    assert "This warehouse mixes scales" in overview and "majsoul at base 1,000, 300 hands" in overview
    page = (index.parent / "player-mp001.html").read_text(encoding="utf-8")
    assert "Key figures beside players of majsoul (base 1,000)</h2>" in page
    assert "<th>players of majsoul (base 1,000)</th>" in page  # every metric
    assert "the other players of majsoul (base 1,000) give" in page and "all players" not in page
    audit_page = (index.parent / "audit.html").read_text(encoding="utf-8")
    assert "bases at stake (points ÷ each hand&#x27;s base)" in audit_page and 'id="scales"' in audit_page
    with queries.connect(rooms["mc"]) as con:
        hands = player.prep_player_table(con, "mp001")
    everyone = hands.filter((pl.col("who") == player.POPULATION) & (pl.col("metric") == "hands"))["value"][0]
    assert f'<td class="num">{int(everyone):,}</td>' in page  # the room's hands, not both rooms'
    alone = build_report(rooms["m"], tmp_path / "alone", players=["mp001"], min_hands=50)
    page = (alone.parent / "player-mp001.html").read_text(encoding="utf-8")
    assert "Key figures beside all players</h2>" in page and "mixes scales" not in alone.read_text(encoding="utf-8")


def test_the_overview_ranks_players_net_in_bases(rooms) -> None:
    with queries.connect(rooms["mc"]) as con:
        mixed = overview.prep_net_points_by_player(con)
    assert set(mixed["unit"]) == {"bases"} and mixed["per_hand"].to_list() == sorted(mixed["per_hand"], reverse=True)
    for prefix, (_, base, _) in ROOMS.items():
        with queries.connect(rooms[prefix]) as con:
            alone = overview.prep_net_points_by_player(con)
        assert set(alone["unit"]) == {"points"}
        for pid, per_hand in alone.select("player", "per_hand").rows():
            row = mixed.filter(pl.col("player") == pid).row(0, named=True)
            assert row["base"] == base and math.isclose(row["per_hand"], per_hand / base), pid


# ---------------------------------------------------------------------------------------------- old warehouses
def test_an_old_warehouse_reads_the_base_from_its_ruleset(rooms, tmp_path, capsys) -> None:
    # the fixture (written on 1 December, before hands.base): chengdu's base, and no word of a missing base
    old = tmp_path / "fixture"
    shutil.copytree(FIXTURE / "wh", old)
    assert "base" not in pq.read_schema(next((old / "hands").glob("part-2*.parquet"))).names
    queries._WARNED.clear()
    with queries.connect(old) as con:
        assert con.execute("SELECT DISTINCT profile, base FROM hands").fetchall() == [("chengdu", 1)]
    warning = capsys.readouterr().err
    assert "written by an earlier release" in warning and "hands.level" in warning and "hands.base" not in warning
    assert "base" not in Warehouse(old).written_before()["hands"]
    # a majsoul room whose files lack the column: majsoul's base, unless the record's ruleset sets its own
    room = tmp_path / "majsoul"
    shutil.copytree(rooms["m"], room)
    overridden = None
    for part in sorted((room / "hands").glob("*.parquet")):
        table = pq.read_table(part)
        if table.num_rows and overridden is None:
            overridden = table["hand_id"][0].as_py()
            rulesets = table["ruleset"].to_pylist()
            rulesets[0] = json.dumps({"profile": "majsoul", "base": 500})
            column = pa.array(rulesets, type=table.schema.field("ruleset").type)
            table = table.set_column(table.schema.get_field_index("ruleset"), "ruleset", column)
        pq.write_table(table.drop_columns(["base"]), part)
    assert overridden is not None
    assert not Warehouse(room).written_before() and not evaluate._written_before(room)  # derived: nothing missing
    with queries.connect(room, warn=False) as con:
        bases = dict(con.execute("SELECT hand_id, base FROM hands").fetchall())
        findings = audit(con).findings
    assert bases.pop(overridden) == 500 and set(bases.values()) == {1000} and len(bases) == HANDS - 1
    # the audit of the old layout is the audit of the room, but for the hand that says its own base
    assert findings.filter(pl.col("hand_id") != overridden).equals(
        _audit(rooms["m"]).filter(pl.col("hand_id") != overridden)
    )
