"""Lab: duplicate play as a luck term (issue 43, point 6): does the wall itself say how a seat's hand will go?

Duplicate bridge takes luck out by dealing the same cards to every table. A record holds its whole wall, so the
same can be tried after the fact: play the hand's wall again (its dealer and its exchange direction, both chance)
with four identical simulated players of one style, ``--plays`` times with other random streams, and take each
seat's mean net ``x`` (in bases). ``x`` is a function of the wall alone, not of anything the real players decided,
so ``x`` less its room mean (per dealer flag) has mean zero for every player whatever they do: a fair control
variate. Its fitted multiple is added to today's terms (the deal's cells, dealer × starting shanten, and the six
draw-luck sums, as ``player_base.sql`` uses them, here fitted jointly by least squares), and the reduction of the
per-seat-hand variance of the net is measured in the room (fitted on the room measured) and out of it (fitted on
the other rooms), with a 95% interval over the rooms (Student's t).

``python -m tools.luck_duplicate [--seeds 1 2 3 4 5 6] [--hands 2000] [--plays 8] [--style balanced] [--skill 0.99]``
simulates one room per seed (the default styles, 16 players, chengdu), ingests it, plays every wall again and
prints the figures. Cost: ``--plays`` simulations of every hand (4 ms a play compiled).

Findings (2026-12-07, compiled, the defaults: seeds 1–6, 2,000 hands each, 48,000 seat-hands; 95% intervals over
the six rooms):

==========================================  ====================  ====================
terms                                       in the room           other rooms
==========================================  ====================  ====================
today's (cells + the six sums)              11.7% (9.2–14.1%)     11.4% (8.8–14.0%)
+ duplicate net, 1 play, expert             12.0% (9.6–14.5%)     11.7% (9.1–14.3%)
+ duplicate net, 8 plays, balanced          13.3% (10.7–15.9%)    13.0% (10.3–15.7%)
==========================================  ====================  ====================

The duplicate net correlates with the real one 0.05–0.08 with one play and 0.14–0.18 with eight; from the two,
with the wall's own expectation (infinitely many plays) about 0.2: at most 4–5% of the variance, part of it what
today's terms take out already. The wall decides little because the course of a hand does not follow from it: the
exchange, the void and every pong move the draws from one seat to another, so a seat's tiles in the replay are not
the tiles it drew. Not worth eight simulations a hand at ingest (a gain of 1.6 points): the pipeline is unchanged.
"""

from __future__ import annotations

import argparse
import gzip
import random
import tempfile
import zlib
from pathlib import Path

import duckdb
import numpy as np
import orjson

from pipeline.game.evidence import LUCK  # the six draw-luck sums: player_hands.draw_luck_*
from pipeline.game.record import Record, parse_record
from pipeline.game.start import deal_hands, exchange_offset, exchanged, start_hand
from pipeline.ingest.run import ingest
from pipeline.simulate.bots import Bot
from pipeline.simulate.play import run_hand
from pipeline.simulate.styles import STYLES, Player
from pipeline.simulate.tables import SimConfig, write
from tools.policy_agreement import t_interval

SHANTEN_CELLS = 7  # starting shanten 0–6 (6: 6 or more), per dealer flag


def duplicate_nets(record: Record, *, plays: int, style: str = "balanced", skill: float = 0.99) -> np.ndarray:
    """Each seat's mean net (points) over ``plays`` plays of the record's wall by four players of ``style`` and
    ``skill``: the
    record's dealer and exchange direction, the players' own exchange, void and play; each play's random stream is
    seeded by the hand id and the play's number, so the same record always gives the same nets."""
    rules, n = record.rules, record.rules.players
    if record.wall is None:
        raise ValueError(f"hand {record.hand_id}: no wall to play again")
    wall = list(record.wall)
    total = np.zeros(n)
    for k in range(plays):
        rng = random.Random(zlib.crc32(f"{record.hand_id}/{k}".encode()))
        bots = [Bot(Player(f"d{s}", STYLES[style], skill), s, rng) for s in range(n)]
        hands = deal_hands(wall, record.dealer, n)
        exchange = None
        if rules.exchange_three:
            direction = record.exchange_direction or "cw"
            offset = exchange_offset(direction, n)
            given = [bots[s].choose_exchange(hands[s], (s + offset) % n, hands[(s + offset) % n]) for s in range(n)]
            exchange = (direction, given)
            hands = exchanged(hands, direction, given)
        que = tuple(bots[s].choose_void(hands[s]) for s in range(n)) if len(rules.suits) == 3 else None
        state = start_hand(rules, dealer=record.dealer, wall=wall, exchange=exchange, que=que)
        run_hand(state, bots)
        total += np.array(state.facts().deltas, dtype=float)
    return total / plays


def room_rows(warehouse: Path, games: Path, *, plays: int, style: str, skill: float) -> dict[str, np.ndarray]:
    """Per seat-hand of a simulated room: its net ``y`` and duplicate net ``x`` in bases, its deal cell, its
    dealer flag, and the six draw-luck sums."""
    xs: dict[str, np.ndarray] = {}
    with gzip.open(games) as f:
        for line in f:
            record = parse_record(orjson.loads(line))
            xs[record.hand_id] = duplicate_nets(record, plays=plays, style=style, skill=skill)
    con = duckdb.connect(str(warehouse / "warehouse.duckdb"), read_only=True)
    luck = ", ".join(f"coalesce(ph.draw_luck_{k}, 0) AS {k}" for k in LUCK)
    frame = con.sql(
        f"""SELECT ph.hand_id, ph.seat, ph.delta / h.base AS y, h.base, CAST(ph.dealer AS INT) AS dealer,
        least(ph.deal_shanten, {SHANTEN_CELLS - 1}) AS shanten, {luck}
        FROM player_hands AS ph JOIN hands AS h USING (hand_id)
        WHERE ph.replayed AND ph.deal_shanten IS NOT NULL ORDER BY ph.hand_id, ph.seat"""
    ).fetchnumpy()
    con.close()
    x = np.array([xs[h][s] for h, s in zip(frame["hand_id"], frame["seat"], strict=True)]) / frame["base"]
    return {"y": frame["y"], "x": x, "dealer": frame["dealer"], "shanten": frame["shanten"]} | {
        k: frame[k] for k in LUCK
    }


def design(room: dict[str, np.ndarray], duplicate: bool) -> np.ndarray:
    """Today's terms (a column per deal cell, the six sums), and with ``duplicate`` the duplicate net per dealer
    flag (the cells' columns centre it)."""
    cells = [
        ((room["dealer"] == d) & (room["shanten"] == s)).astype(float) for d in (0, 1) for s in range(SHANTEN_CELLS)
    ]
    columns = cells + [room[k] for k in LUCK]
    if duplicate:
        columns += [room["x"] * (room["dealer"] == d) for d in (0, 1)]
    return np.column_stack(columns)


def reductions(rooms: list[dict[str, np.ndarray]], duplicate: bool) -> tuple[list[float], list[float]]:
    """Per room, ``1 − var(y − fit) / var(y)``: fitted on the room (in) and on the other rooms (out)."""
    inside, outside = [], []
    for i, room in enumerate(rooms):
        y, x = room["y"], design(room, duplicate)
        beta, *_ = np.linalg.lstsq(x, y, rcond=None)
        inside.append(1 - float(np.var(y - x @ beta) / np.var(y)))
        others = [r for j, r in enumerate(rooms) if j != i]
        xo = np.vstack([design(r, duplicate) for r in others])
        yo = np.concatenate([r["y"] for r in others])
        beta, *_ = np.linalg.lstsq(xo, yo, rcond=None)
        outside.append(1 - float(np.var(y - x @ beta) / np.var(y)))
    return inside, outside


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands per room (default 2000)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6], help="one room per seed")
    parser.add_argument("--plays", type=int, default=8, help="plays of each wall (default 8)")
    parser.add_argument("--style", default="balanced", choices=sorted(STYLES), help="the players' style")
    parser.add_argument("--skill", type=float, default=0.99, help="the players' skill (default 0.99: few slips)")
    args = parser.parse_args(argv)
    if len(args.seeds) < 2:
        parser.error("give at least two seeds: the out-of-room fit needs other rooms")
    rooms = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            games = Path(tmp) / f"room{seed}" / "games.jsonl.gz"
            write(SimConfig(hands=args.hands, seed=seed), games)
            ingest([str(games)], games.parent / "wh", workers=1)
            rooms.append(room_rows(games.parent / "wh", games, plays=args.plays, style=args.style, skill=args.skill))
            r = np.corrcoef(rooms[-1]["y"], rooms[-1]["x"])[0, 1]
            print(
                f"seed {seed}: {len(rooms[-1]['y']):,} seat-hands; correlation of the net with the duplicate's {r:.3f}"
            )
    for duplicate in (False, True):
        name = f"+ duplicate net ({args.plays} plays, {args.style})" if duplicate else "today's terms"
        parts = []
        for label, values in zip(("in the room", "other rooms"), reductions(rooms, duplicate), strict=True):
            mean, low, high = t_interval(values)
            parts.append(f"{label} {100 * mean:.1f}% ({100 * low:.1f}–{100 * high:.1f}%)")
        print(f"{name}: " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
