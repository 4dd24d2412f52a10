"""Wall commitments carried into the warehouse and the report (issue 41 point 4): each hand's commitment is
judged at ingest (hands.wall_commitment), and `deals`, the stacked-deal page and the data-quality page say which
walls are proved by the platform's revealed seed, which fail it (named), and which could not be checked.

The records are the Salasasa fixtures' (tests/fixtures/salasasa: the second game's ten walls, two hands, are
regenerated from its committed seed; the first game's eight are committed with no seed revealed), and two copies
of a proved hand broken on purpose: one with two tiles of its wall swapped, one with a seed that is not the
committed one.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from cli import app
from pipeline.analytics.queries import connect
from pipeline.audit.deals import commitments
from pipeline.game.commitment import STATUSES, Commitment, check, regenerate, seed_hash, status
from pipeline.ingest.run import ingest
from pipeline.validate import validate

FIXTURES = Path(__file__).parent / "fixtures" / "salasasa"
runner = CliRunner()


def _records() -> list[dict[str, object]]:
    lines = (FIXTURES / "expected.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def _broken(records: list[dict[str, object]]) -> list[dict[str, object]]:
    """Two copies of the first proved hand: its wall's last two different tiles swapped (tiles nobody drew), and
    its seed replaced by another."""
    proved = next(r for r in records if "seed" in r["commitment"])  # type: ignore[operator]
    swapped = copy.deepcopy(proved)
    wall = swapped["wall"]
    assert isinstance(wall, list)
    j = next(j for j in range(len(wall) - 2, 0, -1) if wall[j] != wall[-1])
    wall[j], wall[-1] = wall[-1], wall[j]
    swapped["hand_id"] = f"{proved['hand_id']}-swapped"
    reseeded = copy.deepcopy(proved)
    reseeded["commitment"]["seed"] = "ab" * 32  # type: ignore[index]
    reseeded["hand_id"] = f"{proved['hand_id']}-reseeded"
    return [swapped, reseeded]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("commitments")
    records = _records()
    src = root / "hands.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records + _broken(records)), "utf-8")
    stats = ingest([str(src)], root / "wh", workers=1)
    assert stats.records_stored == len(records) + 2 and stats.reconciled
    return root / "wh"


def test_each_status_is_what_the_validator_found() -> None:
    records = _records()
    assert {status_of(r) for r in records} == {"verified", "unrevealed"}
    swapped, reseeded = _broken(records)
    assert status_of(swapped) == "wall_mismatch" and status_of(reseeded) == "seed_mismatch"
    proved = validate(next(r for r in records if "seed" in r["commitment"])).record  # type: ignore[operator]
    assert proved is not None and proved.commitment is not None
    assert status(proved.commitment, [], has_wall=False) == "seed_only"  # a level below full: no wall to compare
    assert set(STATUSES) == {"verified", "seed_only", "unrevealed", "seed_mismatch", "wall_mismatch"}


def status_of(record: dict[str, object]) -> str:
    v = validate(record)
    assert v.record is not None and v.record.commitment is not None
    return status(v.record.commitment, [i.code for i in v.issues], has_wall=v.record.wall is not None)


def test_a_wall_regenerated_for_another_dealer_fails_its_commitment() -> None:
    seed, salt = "5a" * 32, "0f" * 16
    c = Commitment("salasasa-sha256-v1", seed_hash(seed, salt), salt, seed, 3)
    assert check(c, regenerate(c, dealer=2), dealer=2) == []
    assert [code for code, _ in check(c, regenerate(c, dealer=1), dealer=2)] == ["TILE_COMMIT_WALL"]
    other = Commitment(c.scheme, c.hash, c.salt, seed, 4)  # the next hand's wall is not this one's
    assert [code for code, _ in check(other, regenerate(c, dealer=2), dealer=2)] == ["TILE_COMMIT_WALL"]


def test_the_warehouse_keeps_what_each_commitment_proved(warehouse: Path) -> None:
    with duckdb.connect() as con:
        rows = con.sql(
            f"SELECT hand_id, wall_commitment FROM read_parquet('{warehouse}/hands/*.parquet') ORDER BY hand_id"
        ).fetchall()
    got = dict(rows)
    assert sum(v == "verified" for v in got.values()) == 2
    assert sum(v == "unrevealed" for v in got.values()) == 8
    assert [k for k, v in got.items() if v == "wall_mismatch"] == ["SL00000002-1-swapped"]
    assert [k for k, v in got.items() if v == "seed_mismatch"] == ["SL00000002-1-reseeded"]
    with connect(warehouse) as con:
        walls = commitments(con)
    assert walls.counts == {"verified": 2, "unrevealed": 8, "wall_mismatch": 1, "seed_mismatch": 1}
    assert walls.failed == 2 and walls.faulty == {
        "seed_mismatch": ["SL00000002-1-reseeded"],
        "wall_mismatch": ["SL00000002-1-swapped"],
    }


def test_deals_names_the_walls_that_fail_their_commitment(warehouse: Path) -> None:
    done = runner.invoke(app, ["deals", "--warehouse", str(warehouse)])
    assert done.exit_code == 0, done.output
    assert (
        "wall commitments: 2 walls proved by their revealed seed, 2 that do not match it, 8 committed with no seed "
        "revealed (not checked)" in done.output
    )
    assert "wall_mismatch (1): SL00000002-1-swapped" in done.output
    assert "seed_mismatch (1): SL00000002-1-reseeded" in done.output


def test_the_report_shows_proved_and_failed_walls(warehouse: Path, tmp_path: Path) -> None:
    from dashboards.site import build_report

    index = build_report(warehouse, tmp_path / "report", players=[])
    deals = (index.parent / "deals.html").read_text(encoding="utf-8")
    section = deals.split("<h2>Wall commitments</h2>")[1].split("</section>")[0]
    assert "2 hands whose wall is not the one committed before play" in section
    assert "2 walls proved by their revealed seed" in section
    assert '<td>verified</td><td class="num">2</td>' in section
    assert "SL00000002-1-swapped" in section and "SL00000002-1-reseeded" in section
    quality = (index.parent / "quality.html").read_text(encoding="utf-8")
    assert "walls proved by their commitment" in quality and "walls or seeds that fail their commitment" in quality


def test_a_warehouse_without_commitments_shows_no_section(tmp_path: Path) -> None:
    from dashboards.site import build_report

    records = [r for r in _records() if "seed" not in r["commitment"]]  # type: ignore[operator]
    for r in records:
        del r["commitment"]
    src = tmp_path / "plain.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    ingest([str(src)], tmp_path / "wh", workers=1)
    with connect(tmp_path / "wh") as con:
        assert commitments(con).hands == 0
    index = build_report(tmp_path / "wh", tmp_path / "report", players=[])
    assert "Wall commitments" not in (index.parent / "deals.html").read_text(encoding="utf-8")
    assert "wall commitment" not in (index.parent / "quality.html").read_text(encoding="utf-8")
