"""A warehouse that mixes every table shape and mode the profiles ship: simulated, ingested, and read by
``stats``, the audit, the collusion screen and the report. Each table's figures are recomputed here from
the validator's own verdicts, independently of the SQL."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from pipeline.analytics.queries import connect, player_base, stats
from pipeline.audit.scoring import audit
from pipeline.audit.screen import screen
from pipeline.ingest.run import ingest
from pipeline.rules.ruleset import load_ruleset, profile_names
from pipeline.simulate.tables import SimConfig, write
from pipeline.validate import validate

HANDS = 48  # per profile: six sessions of eight hands


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("mixed")
    records = []
    for i, profile in enumerate(profile_names()):
        path = root / f"{profile}.jsonl.gz"
        write(SimConfig(hands=HANDS, seed=100 + i, players=9, profile=profile), path)
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:  # one room, several tables: the same players, hands named by their table
                record = json.loads(line)
                for key in ("hand_id", "session_id", "table_id"):
                    record[key] = f"{profile}-{record[key]}"
                records.append(record)
    mixed = root / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    run = ingest([str(mixed)], root / "warehouse", workers=1)
    assert run.reconciled and run.rejects == 0 and run.records_stored == HANDS * len(profile_names())
    return root / "warehouse", records


def _expected_tables(records: list[dict]) -> dict[tuple[int, str, str], Counter[str]]:
    """Per table shape, from the validator's verdicts: hands, the hands the wins played out, 黄庄 (the wall
    ran out with two or more still in) and hands by number of winners."""
    out: dict[tuple[int, str, str], Counter[str]] = {}
    for record in records:
        v = validate(record)
        assert v.ok and v.hand is not None
        rules = v.hand.rules
        shape = (rules.players, rules.suits, rules.mode)
        c = out.setdefault(shape, Counter())
        c["hands"] += 1
        winners = len({w.seat for w in v.wins})  # players who won (in 血流成河 one may win several times)
        c[f"winners_{winners}"] += 1
        still_in = rules.players - winners  # players who never won
        if v.hand.won_out:
            c["won_out"] += 1
        elif v.hand.left == 0 and still_in >= 2:
            c["huang_zhuang"] += 1
    return out


def test_every_table_is_counted_against_its_own_shape(mixed: tuple[Path, list[dict]]) -> None:
    warehouse, records = mixed
    expected = _expected_tables(records)
    assert {
        (4, "mps", "blood_battle"),
        (4, "mps", "ordinary"),
        (3, "ps", "blood_battle"),
        (4, "ps", "blood_battle"),
    } <= set(expected)
    with connect(warehouse) as con:
        answer = stats(con)
    tables = {(t["seats"], t["suits"], t["mode"]): t for t in answer["table"]["tables"]}
    assert set(tables) == set(expected)
    for shape, c in expected.items():
        t = tables[shape]
        assert t["hands"] == c["hands"], shape
        assert t["won_out_rate"]["num"] == c["won_out"] and t["won_out_rate"]["den"] == c["hands"], shape
        assert t["huang_zhuang_rate"]["num"] == c["huang_zhuang"], shape
        most = shape[0] if shape[2] == "blood_flow" else shape[0] - 1
        assert t["winners_per_hand"] == {str(k): c[f"winners_{k}"] for k in range(most + 1)}, shape
    # at three players a blood battle is played out by two winners, never three
    assert tables[(3, "ps", "blood_battle")]["winners_per_hand"].keys() == {"0", "1", "2"}
    assert expected[(3, "ps", "blood_battle")]["winners_2"] > 0
    # 普通版 ends with the first win's window: never more winners than that window took
    assert all(
        k in ("winners_0", "winners_1", "winners_2", "winners_3", "hands", "won_out", "huang_zhuang")
        for k in expected[(4, "mps", "ordinary")]
    )
    pooled = answer["table"]
    assert pooled["huang_zhuang_rate"]["den"] == sum(c["hands"] for c in expected.values())
    assert pooled["huang_zhuang_rate"]["num"] == sum(c["huang_zhuang"] for c in expected.values())


def test_player_rows_count_the_seats_of_each_table(mixed: tuple[Path, list[dict]]) -> None:
    warehouse, records = mixed
    seat_hands = Counter(p for r in records for p in r["players"])
    with connect(warehouse) as con:
        rows = dict(con.sql("SELECT player, count(*) FROM player_hands GROUP BY player").fetchall())
        shapes = con.sql("SELECT seats, count(*) FROM hands GROUP BY seats ORDER BY seats").fetchall()
    assert rows == dict(seat_hands)
    assert dict(shapes) == {3: HANDS, 4: HANDS * (len(profile_names()) - 1)}
    assert load_ruleset("sanren_liangfang").players == 3


def test_audit_collusion_and_report_run_on_the_mixed_warehouse(mixed: tuple[Path, list[dict]], tmp_path: Path) -> None:
    from dashboards.site import build_report

    warehouse, _ = mixed
    with connect(warehouse) as con:
        assert audit(con).findings.height == 0  # simulated hands claim what the engine computes
        pairs = list(screen(con, min_hands=20).pairs)
    assert pairs, "pairs of the pool share enough hands across the tables"
    assert not any(r.flagged for r in pairs)  # no colluders were injected
    assert all(0.0 <= r.p <= 1.0 for r in pairs)
    index = build_report(warehouse, tmp_path / "report", top_players=1, min_hands=20)
    page = Path(index).read_text(encoding="utf-8")
    for table in (
        "4 players, mps, 血战到底",
        "4 players, mps, 普通版",
        "3 players, ps, 血战到底",
        "4 players, mps, 血流成河",
    ):
        assert table in page  # the overview says which table each figure was computed at
    assert "The charts below pool every table." in page


def test_fan_is_read_on_one_scale_across_fan_counts(mixed: tuple[Path, list[dict]]) -> None:
    # sbr counts a plain hand 0 fan, the Chinese profiles 1: the fan metrics shift sbr's by one (fan_base)
    from pipeline.sql import run_sql

    warehouse, records = mixed
    fan_sum: Counter[str] = Counter()
    fans: Counter[int] = Counter()
    for record in records:
        v = validate(record)
        assert v.hand is not None
        shift = 1 - v.hand.rules.fan_base
        for w in v.wins:  # every win (血流成河: a player may win several times)
            fans[w.score.fan + shift] += 1
        for seat in v.seats:  # a player's row of the hand (its win's fan)
            if seat.won and seat.fan is not None:
                fan_sum[seat.player] += seat.fan + shift
    assert any(r["ruleset"] == "sbr" for r in records) and load_ruleset("sbr").fan_base == 0
    with connect(warehouse) as con:
        base = player_base(con)  # the model with the room's luck cells beside it (queries.player_base_levels)
        distribution = run_sql(con, "pipeline.analytics", "fan_distribution", player=None)
        stored = con.sql("SELECT min(fan) FROM wins JOIN hands USING (hand_id) WHERE profile = 'sbr'").fetchall()
    assert dict(zip(base["player"], base["fan_sum"], strict=True)) == {p: fan_sum[p] for p in base["player"]}
    assert dict(zip(distribution["fan"], distribution["wins"], strict=True)) == dict(fans)
    assert min(distribution["fan"]) == 1
    assert stored == [(0,)]  # the wins table keeps the profile's own count


def test_points_paid_to_the_pot_are_accounted_for(mixed: tuple[Path, list[dict]]) -> None:
    # sbr's void penalties leave the table: the players' net points sum to minus the pot
    warehouse, records = mixed
    pot = sum(p.amount for r in records for p in validate(r).payments if p.payee is None)
    with connect(warehouse) as con:
        answer = stats(con)
        net = con.sql("SELECT sum(delta) FROM player_hands WHERE replayed").fetchall()[0][0]
        stored = con.sql("SELECT sum(pot) FROM hands").fetchall()[0][0]
    assert pot > 0 and answer["table"]["pot"] == pot == stored and net == -pot
