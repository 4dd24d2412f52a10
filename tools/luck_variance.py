"""How much lower the per-hand variance of the luck-adjusted net is than the raw net's, on simulated rooms.

``python -m tools.luck_variance [--hands N] [--seeds S ...]`` simulates one room of ``N`` hands per seed (the
default styles, 16 players, chengdu), ingests it and reads every player's base counts (``player_base.sql``: the
luck-adjusted net takes out the deal's luck and the draws', schemas/METRICS.md#luck). Per room it prints the
variance of the net per seat-hand, raw and luck-adjusted (in bases², about the room's mean), and the reduction
``1 − adjusted ÷ raw``; then the mean reduction over the rooms with a 95% interval (Student's t over the rooms).
The acceptance point of issue 43 is a reduction of at least 25%.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from pipeline.analytics import queries
from pipeline.ingest.run import ingest
from pipeline.simulate.tables import SimConfig, write
from tools.policy_agreement import t_interval


def room_variances(warehouse: Path) -> tuple[int, float, float]:
    """(seat-hands, raw variance, luck-adjusted variance) of a warehouse's nets per seat-hand, in bases²: over
    the hands of one scale group whose every deal is known (the simulator's rooms are such)."""
    with queries.connect(warehouse, warn=False) as con:
        (base,) = con.sql("SELECT DISTINCT base FROM hands").fetchall()[0]
        rows = queries.fold(queries.player_base_levels(con))
    n = int(rows["hands"].sum())
    delta_sum, delta_sq = float(rows["delta_sum"].sum()), float(rows["delta_sq"].sum())
    luck_sum, luck_sq = float(rows["luck_net_sum"].sum()), float(rows["luck_net_sq"].sum())
    raw = (delta_sq / n - (delta_sum / n) ** 2) / base**2
    adjusted = (luck_sq / n - (luck_sum / n) ** 2) / base**2
    return n, raw, adjusted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands per room (default 2000)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5], help="one room per seed")
    args = parser.parse_args(argv)
    reductions = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            room = Path(tmp) / f"room{seed}"
            write(SimConfig(hands=args.hands, seed=seed), room / "games.jsonl")
            ingest([str(room / "games.jsonl")], room / "wh", workers=1)
            n, raw, adjusted = room_variances(room / "wh")
            reductions.append(1 - adjusted / raw)
            print(
                f"seed {seed}: {n:,} seat-hands; variance per seat-hand raw {raw:.2f}, luck-adjusted {adjusted:.2f} "
                f"(bases²): {100 * reductions[-1]:.1f}% lower"
            )
    mean, low, high = t_interval(reductions)
    ci = f"95% CI {100 * low:.1f}–{100 * high:.1f}%"
    print(f"{len(reductions)} rooms of {args.hands:,} hands: {100 * mean:.1f}% lower ({ci})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
