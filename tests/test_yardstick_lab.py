"""tools/yardstick_lab.py: the eval's rooms reviewed once with an engine and judged in variants. Its ``shipped``
variant must be the rows ``xuezhan assist --yardstick`` makes, or its figures (README) say nothing of the screen."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from pipeline.analytics.queries import connect
from pipeline.audit.decisions import decision_hands, decision_rows
from pipeline.evaluate import assist_grid, simulated
from tools import yardstick_lab


def test_the_lab_dumps_a_room_and_its_shipped_rows_are_the_screens(tmp_path: Path) -> None:
    (pop,) = assist_grid(seed=3, hands=16, replicates=1, honest=0, evasive=False, calculator=False)
    cache = str(tmp_path / "cache")
    out = tmp_path / "rooms"
    out.mkdir()
    assert "decisions" in yardstick_lab.dump_room(pop, out=out, spec="lookahead", cache=cache)
    assert "written before" in yardstick_lab.dump_room(pop, out=out, spec="lookahead", cache=cache)
    frame = pl.read_parquet(out / f"{pop.seed}.parquet")
    assert frame.filter(pl.col("planted"))["player"].n_unique() == 1
    with simulated(pop, cache=cache) as (warehouse, _):
        with connect(warehouse) as con:
            hands = decision_hands(con)
        screen_rows = list(decision_rows(hands, [], engine="lookahead"))

    def key(rows):  # type: ignore[no-untyped-def]
        return sorted((r.hand_id, r.event or -1, r.player, r.agreed, round(r.weight, 9)) for r in rows)

    shipped = yardstick_lab.frame_rows(yardstick_lab.VARIANTS["shipped"](frame))
    assert screen_rows and key(shipped) == key(screen_rows)
    counted = yardstick_lab.frame_rows(yardstick_lab.VARIANTS["counted"](frame))
    assert len(counted) > len(shipped)  # the turns the engine saw no choice in
    weighted = yardstick_lab.frame_rows(yardstick_lab.VARIANTS["engine-gap"](frame))
    assert len(weighted) == len(shipped) and {r.weight for r in weighted} != {r.weight for r in shipped}
    lines = yardstick_lab.judge(out, ["shipped", "counted"])
    assert len(lines) == 3 and lines[1].startswith("shipped · followers: rooms flagged ")
