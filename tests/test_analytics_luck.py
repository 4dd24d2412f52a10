"""Luck apart from skill (schemas/METRICS.md#luck): the luck-adjusted net of ``player_base.sql`` on a hand-made
warehouse whose every figure is worked out by hand, and the unusual-result screen on it.

The warehouse (DuckDB tables of the warehouse's schemas, the rows written here):

- 40 hands of majsoul (base 1,000, three suits, level full), seats: D dealer dealt 3 shanten, L dealt 1, A and
  B dealt 3. Even hands D +2, L +4, A -1, B -5 bases; odd hands D -2, L +8, A -5, B -1. The cells' mean nets in
  bases: (dealer, 3) 0, (not dealer, 1) +6, (not dealer, 3) -3 (80 seat-hands); the group's mean 0. So each
  seat-hand's adjusted net is ±2 bases (L: 4 - 6 = -2, 8 - 6 = +2; A and B: -1 + 3 = +2, -5 + 3 = -2): every
  player's adjusted net is 0 over the 40 hands, where L's raw net is +6 a hand and A's and B's -3.
- 2 hands of the same group whose deal is not known (level observer, no deal_shanten): L +9, the others -3
  bases each: raw nets, and outside the fit.
- 5 hands of chengdu (base 1): every cell of 5 seat-hands, under 30: not fitted, raw nets (L +3, the others -1).

None of these hands has draw luck (``player_hands.draw_luck_*`` null, as in a warehouse made before it): their
figures are the deal's adjustment alone. A second warehouse (:func:`_drawn_room`) has draw luck and no deal luck:
its slope is worked out by hand and the adjusted nets are the seats' skill alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from dashboards import findings
from pipeline import sql
from pipeline.analytics import queries
from pipeline.analytics.metrics import METRIC_BY_ID
from pipeline.ingest.run import ingest
from pipeline.simulate.tables import SimConfig, write
from schemas.tables import TABLES
from tools import luck_variance

BASE = 1000


def _hand(hand_id: str, profile: str, base: int, level: str) -> dict[str, Any]:
    return {
        "hand_id": hand_id,
        "table_id": "t1",
        "profile": profile,
        "suits": "mps",
        "base": base,
        "fan_base": 1,
        "level": level,
        "dealer": 0,
        "replayed": True,
        "ready_judged": True,
    }


def _seat(hand_id: str, seat: int, player: str, profile: str, delta: int, shanten: int | None) -> dict[str, Any]:
    return {
        "hand_id": hand_id,
        "seat": seat,
        "player": player,
        "profile": profile,
        "dealer": seat == 0,
        "delta": delta,
        "deal_shanten": shanten,
        "replayed": True,
        "won": False,
        "fan": 0,
        "deal_ins": 0,
        "pongs": 0,
        "kongs_direct": 0,
        "kongs_added": 0,
        "kongs_concealed": 0,
        "passed_wins": 0,
        "compulsory_passes": 0,
        "hua_zhu": False,
    }


def rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    hands, seats = [], []
    for k in range(40):
        h = f"m{k:02d}"
        hands.append(_hand(h, "majsoul", BASE, "full"))
        nets = (2, 4, -1, -5) if k % 2 == 0 else (-2, 8, -5, -1)
        for seat, (player, shanten) in enumerate((("D", 3), ("L", 1), ("A", 3), ("B", 3))):
            seats.append(_seat(h, seat, player, "majsoul", nets[seat] * BASE, shanten))
    for k in range(2):
        h = f"o{k}"
        hands.append(_hand(h, "majsoul", BASE, "observer"))
        for seat, (player, net) in enumerate((("D", -3), ("L", 9), ("A", -3), ("B", -3))):
            seats.append(_seat(h, seat, player, "majsoul", net * BASE, None))
    for k in range(5):
        h = f"c{k}"
        hands.append(_hand(h, "chengdu", 1, "full"))
        for seat, (player, net, shanten) in enumerate((("D", -1, 2), ("L", 3, 0), ("A", -1, 3), ("B", -1, 3))):
            seats.append(_seat(h, seat, player, "chengdu", net, shanten))
    return hands, seats


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    hands, seats = rows()
    con = duckdb.connect()
    con.execute("SET VARIABLE xuezhan_tz = NULL")  # the macro every date goes through, as connect() sets it
    con.execute(sql.load_sql("pipeline.analytics", "local_time"))
    given = {"hands": hands, "player_hands": seats}
    for name, schema in TABLES.items():
        table = pa.Table.from_pylist(given.get(name, []), schema=schema)
        con.register(f"_{name}", table)
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "_{name}"')
    return con


def test_the_luck_adjusted_net_by_hand(con: duckdb.DuckDBPyConnection) -> None:
    base = queries.player_base(con)
    got = {r["player"]: r for r in base.iter_rows(named=True)}
    # L: 40 hands adjusted to ±2,000 (sum 0), 2 unknown deals at +9,000, 5 unfitted chengdu hands at +3
    assert got["L"]["delta_sum"] == 40 * 6 * BASE + 2 * 9 * BASE + 5 * 3
    assert got["L"]["luck_net_sum"] == pytest.approx(2 * 9 * BASE + 5 * 3)
    assert got["L"]["luck_net_sq"] == pytest.approx(40 * (2 * BASE) ** 2 + 2 * (9 * BASE) ** 2 + 5 * 9)
    # A: raw 20·(-1) + 20·(-5) bases, adjusted ±2 (sum 0); -3 twice unknown; -1 five times unfitted
    assert got["A"]["delta_sum"] == -120 * BASE - 6 * BASE - 5
    assert got["A"]["luck_net_sum"] == pytest.approx(-6 * BASE - 5)
    # the dealer's cell is its own: D's ±2 stay ±2
    assert got["D"]["luck_net_sum"] == pytest.approx(got["D"]["delta_sum"])
    assert got["D"]["luck_net_sq"] == pytest.approx(got["D"]["delta_sq"])
    # the room's adjusted nets add up to its raw nets (every fitted cell's departures cancel)
    assert base["luck_net_sum"].sum() == pytest.approx(base["delta_sum"].sum())


def test_the_fit_is_the_rooms_whatever_player_is_shown(con: duckdb.DuckDBPyConnection) -> None:
    # --player L: L's rows alone, fitted on every player's hands all the same
    alone = queries.player_base(con, player="L")
    assert alone["luck_net_sum"].to_list() == pytest.approx([2 * 9 * BASE + 5 * 3])


def test_the_metric_counts_only_hands_with_every_deal(con: duckdb.DuckDBPyConnection) -> None:
    # the metric's levels (full, dealt): the observer's hands left out; its mean over L's 45 such hands
    answer = queries.stats(con, player="L")
    m = answer["players"][0]["metrics"]["luck_adjusted_net_per_hand"]
    assert m["n"] == 45 and m["sum"] == pytest.approx(15)
    assert m["ci_low"] < m["value"] < m["ci_high"]
    assert answer["players"][0]["excluded"]["luck_adjusted_net_per_hand"] == {"observer": 2}
    raw = answer["players"][0]["metrics"]["net_points_per_hand"]
    assert raw["n"] == 47 and raw["sum"] == 258015
    assert METRIC_BY_ID["luck_adjusted_net_per_hand"].sq == "luck_net_sq"


def test_the_unusual_result_screen_reads_the_adjusted_net(con: duckdb.DuckDBPyConnection) -> None:
    unusual = findings.unusual_of(con)
    got = {r["player"]: r for r in unusual.iter_rows(named=True)}
    # every level carries the net: L's 47 hands, 45 with a known deal, the observer's at their raw net
    assert got["L"]["hands"] == 47 and got["L"]["adjusted"] == 45
    assert got["L"]["per_hand"] == pytest.approx((2 * 9 * BASE + 5 * 3) / 47)
    assert got["L"]["raw_per_hand"] == pytest.approx(258015 / 47)
    assert got["L"]["net"] == 258015


def _room(lucky_raw: float, lucky_adjusted: float, n: int = 400, players: int = 12) -> pl.DataFrame:
    """A room of ``players`` whose adjusted nets are near 0 (sd 10 a hand), the last one ``lucky``: its raw
    mean ``lucky_raw``, its adjusted ``lucky_adjusted``; every other player's raw net its adjusted."""
    rng = np.random.default_rng(7)
    out = []
    for i in range(players):
        last = i == players - 1
        adjusted = rng.normal(lucky_adjusted if last else 0.0, 10.0, n)
        raw = adjusted + (lucky_raw - lucky_adjusted if last else 0.0)
        out.append(
            {
                "player": f"p{i:02d}",
                "hands": n,
                "delta_sum": round(float(raw.sum())),
                "delta_sq": round(float((raw**2).sum())),
                "luck_net_sum": float(adjusted.sum()),
                "luck_net_sq": float((adjusted**2).sum()),
                "deal_shanten_n": n,
            }
        )
    return pl.DataFrame(out)


def test_a_lucky_player_is_not_unusual_once_the_luck_is_taken_out() -> None:
    room = _room(lucky_raw=5.0, lucky_adjusted=0.2)
    raw = findings.prep_unusual_results(room.drop("luck_net_sum", "luck_net_sq", "deal_shanten_n"))
    assert raw.filter(pl.col("player") == "p11")["flagged"].to_list() == [True]  # on its raw net: unusual
    adjusted = findings.prep_unusual_results(room)
    lucky = adjusted.filter(pl.col("player") == "p11").row(0, named=True)
    assert not lucky["flagged"] and lucky["adjusted"] == 400
    assert lucky["raw_per_hand"] == pytest.approx(room["delta_sum"][-1] / 400)
    # and a player who wins beyond the deal's luck still is
    skilled = findings.prep_unusual_results(_room(lucky_raw=5.0, lucky_adjusted=5.0))
    assert skilled.filter(pl.col("player") == "p11")["flagged"].to_list() == [True]
    finding = findings._results(skilled, lambda p: None)[0]
    assert finding["detail"].startswith("luck-adjusted net (raw +")


def _drawn_room() -> duckdb.DuckDBPyConnection:
    """40 hands of majsoul (base 1,000, level full), every seat dealt 3 shanten, with draw luck: the seats'
    ``draw_luck_win`` f is +1, -1, +1, -1 on even hands (D, L, A, B) and the opposite on odd ones, the other draw
    luck 0; each net in bases is 2·f plus the seat's skill (L +1, A -1, D and B 0). The cells' and the group's
    means are 0 (no deal luck); the slope of the net on f is exactly 2 (Σ 2f² / Σ f², the skills' Σ skill·f being
    0): each adjusted net is the seat's skill alone."""
    hands, seats = [], []
    skill = (0, 1, -1, 0)
    for k in range(40):
        h = f"d{k:02d}"
        hands.append(_hand(h, "majsoul", BASE, "full"))
        for seat, player in enumerate("DLAB"):
            f = (1 if seat % 2 == 0 else -1) * (1 if k % 2 == 0 else -1)
            row = _seat(h, seat, player, "majsoul", (2 * f + skill[seat]) * BASE, 3)
            row |= {f"draw_luck_{name}": 0.0 for name in ("paid", "ready", "rivals", "kong", "fed")}
            seats.append(row | {"draw_luck_win": float(f)})
    con = duckdb.connect()
    con.execute("SET VARIABLE xuezhan_tz = NULL")
    con.execute(sql.load_sql("pipeline.analytics", "local_time"))
    given = {"hands": hands, "player_hands": seats}
    for name, schema in TABLES.items():
        con.register(f"_{name}", pa.Table.from_pylist(given.get(name, []), schema=schema))
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "_{name}"')
    return con


def test_the_draws_luck_is_taken_out_by_its_slope_in_the_room() -> None:
    base = queries.player_base(_drawn_room())
    got = {r["player"]: r for r in base.iter_rows(named=True)}
    for player, skill in (("D", 0), ("L", 1), ("A", -1), ("B", 0)):
        assert got[player]["luck_net_sum"] == pytest.approx(40 * skill * BASE)
        assert got[player]["luck_net_sq"] == pytest.approx(40 * (skill * BASE) ** 2)  # no luck left
        assert got[player]["delta_sum"] == 40 * skill * BASE  # the draws' luck adds up to 0 over the 40 hands
        assert got[player]["delta_sq"] == 20 * ((2 + skill) * BASE) ** 2 + 20 * ((-2 + skill) * BASE) ** 2


def test_a_simulated_room_luck_adjusted_is_clearly_less_spread(tmp_path: Path) -> None:
    """A seeded room of 600 hands (the default styles): the luck-adjusted net's variance per seat-hand is at least
    8% below the raw net's (measured 14.5%; `python -m tools.luck_variance --hands 600 --seeds 7`), where the deal's
    luck alone took out under 1%; and the interval of the tool's figure is a Student's t over the rooms."""
    write(SimConfig(hands=600, seed=7), tmp_path / "games.jsonl")
    ingest([str(tmp_path / "games.jsonl")], tmp_path / "wh", workers=1)
    n, raw, adjusted = luck_variance.room_variances(tmp_path / "wh")
    assert n == 2400
    assert 1 - adjusted / raw >= 0.08
    mean, low, high = luck_variance.t_interval([0.1, 0.2, 0.3])
    assert mean == pytest.approx(0.2)
    assert (
        high - mean == pytest.approx(mean - low) == pytest.approx(4.3026527 * 0.1 / 3**0.5)
    )  # t, 2 df (was the table's 4.303)
