"""A lab for the engine-assistance screen with an engine as its yardstick (``xuezhan assist --yardstick``): the
eval's rooms reviewed once with the engine, every decision kept, and the screen judged on them in variants, in
seconds instead of an eval's hours.

``python -m tools.yardstick_lab dump OUT [--replicates N] [--evasive N] [--honest N] [--hands H] [--players P]
[--seed K] [--spec SPEC] [--cache C] [--workers W]`` simulates the rooms ``xuezhan eval-assist`` builds with the same
arguments (:func:`pipeline.evaluate.assist_grid`: followers at P = 0.5 of seeds K.., evasive ones of K + 500..,
honest rooms of K + 1000..), reviews every hand once with the engine (:func:`pipeline.audit.review.review`, the
engine wrapped so that its ranking is kept) and writes ``OUT/<seed>.parquet``: per decision the player, the
reference policy's gap and weight and agreement, and for the turns the engine was asked the number of options it
ranked, whether the option made was its first, the gap between its best two values and the rank of the option
made. A room already written is not done again.

``python -m tools.yardstick_lab judge OUT [--variant V ...]`` judges every room of ``OUT`` with the screen
(:func:`pipeline.audit.assist.screen`) on the rows a variant makes of the dump, and prints per room the planted
player's ``z`` and rank, and per kind of room the rooms flagged (Wilson 95%), ranked first, the ranking AUC and
the honest players flagged. Variants (:data:`VARIANTS`):

- ``shipped``: the rows ``assist --yardstick`` makes (the turns the engine ranked two options or more: a test
  checks they are the same rows);
- ``counted``: the turns it ranked a single option counted too (the screen before 40cf0d1);
- ``engine-gap``: the shipped rows, each tested turn weighted by the square of its engine gap's rank among the
  room's tested turns and put in a cell by its quartile (README: where the evasive follower shows; not shipped).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pipeline.analytics.export import Found, read_back
from pipeline.analytics.queries import connect
from pipeline.analytics.stats import wilson
from pipeline.audit.assist import BANDS, CLEAR_GAP, screen
from pipeline.audit.decisions import DecisionRow, decision_hands, rows_of
from pipeline.audit.review import engine_asked, review, same_choice
from pipeline.engines import load
from pipeline.evaluate import AssistPopulation, assist_grid, auc, simulated
from pipeline.game.record import parse_record


def rooms(args: argparse.Namespace) -> list[AssistPopulation]:
    """The eval's rooms for these arguments: followers, evasive ones, honest rooms (in that order)."""
    common = {"seed": args.seed, "hands": args.hands, "players": args.players, "calculator": False}
    follow = assist_grid(replicates=args.replicates, honest=0, evasive=False, **common)
    evasive = assist_grid(replicates=args.evasive, honest=0, evasive=True, **common)[args.evasive :]
    honest = assist_grid(replicates=0, honest=args.honest, evasive=False, **common)
    out = [*follow, *evasive, *honest]
    assert all(isinstance(p, AssistPopulation) for p in out)
    return out  # type: ignore[return-value]


def dump_room(pop: AssistPopulation, out: Path, spec: str, cache: str | None) -> str:
    """One room reviewed with the engine ``spec`` and written to ``out/<seed>.parquet`` (the module docstring)."""
    path = out / f"{pop.seed}.parquet"
    if path.exists():
        return f"{pop.name} (seed {pop.seed}): written before"
    decide = load(spec).decide
    ranked: list[list[tuple[Any, float | None]]] = []

    def kept(state: Any, seat: int, rng: Any) -> Any:
        r = decide(state, seat, rng)
        ranked.append([(getattr(c, "event", None), getattr(c, "value", None)) for c in r])
        return r

    records: list[dict[str, Any]] = []
    with simulated(pop, cache=cache) as (warehouse, labels):
        with connect(warehouse) as con:
            hands = decision_hands(con)
        for got in read_back(hands):
            if isinstance(got, Found):
                records += _hand_rows(got, kept, ranked)
    planted = [f["player"] for f in labels.get("followers", [])]
    styles = {p: v["style"] for p, v in labels["players"].items()}
    frame = pl.DataFrame(records, infer_schema_length=None).with_columns(
        pl.lit(pop.name).alias("room"),
        pl.lit(pop.seed).alias("seed"),
        pl.col("player").is_in(planted).alias("planted"),
        pl.col("player").replace_strict(styles, default=None).alias("style"),
    )
    frame.write_parquet(path.with_suffix(".partial"))
    path.with_suffix(".partial").rename(path)
    return f"{pop.name} (seed {pop.seed}): {len(frame)} decisions"


def _hand_rows(got: Found, engine: Callable[..., Any], ranked: list[list[tuple[Any, float | None]]]) -> list[dict]:
    """One hand's decisions with the engine's ranking of its turns beside them."""
    record = parse_record(got.record)
    ranked.clear()
    decisions = review(record, got.record, engine)
    # the engine is asked at each turn with more than one option and no win first, in order (review.py): its calls
    # are matched to those turns in order (a turn it offered nothing at says so in neither figure)
    asked = [d for d in decisions if engine_asked(d.kind, d.options)]
    assert len(asked) == len(ranked), (len(asked), len(ranked))
    engine_of: dict[tuple[int | None, int], dict[str, Any]] = {}
    for d, r in zip(asked, ranked, strict=True):
        rank = next((i + 1 for i, (e, _) in enumerate(r) if same_choice(e, d.chosen.event)), None)
        values = [v for _, v in r[:2]]
        gap = values[0] - values[1] if len(values) == 2 and None not in values else None  # type: ignore[operator]
        engine_of[(d.event, d.seat)] = {"e_n": len(r), "e_first": rank == 1, "e_gap": gap, "e_rank": rank}
    seat_of = {p: i for i, p in enumerate(record.players)}
    out = []
    for row in rows_of(record.hand_id, record.players, decisions):
        e = engine_of.get((row.event, seat_of[row.player])) if row.kind == "turn" else None
        out.append(
            {
                "player": row.player,
                "hand_id": row.hand_id,
                "event": row.event,
                "kind": row.kind,
                "non_forced": row.non_forced,
                "gap": row.gap,
                "weight": row.weight,
                "agreed": row.agreed,
                "asked": e is not None,
                **(e or {"e_n": None, "e_first": None, "e_gap": None, "e_rank": None}),
            }
        )
    return out


def _judged(frame: pl.DataFrame, least: int) -> pl.DataFrame:
    """The turns the engine was asked and ranked at least ``least`` options at, *agreed* its first choice."""
    return frame.filter(pl.col("asked") & (pl.col("e_n") >= least)).with_columns(pl.col("e_first").alias("agreed"))


def _engine_gap(frame: pl.DataFrame) -> pl.DataFrame:
    """The shipped rows, each tested turn weighted by (its engine gap's rank among the room's tested turns)² and
    put in the band of its quartile; the clear turns (the reference's, the skill) as they are."""
    frame = _judged(frame, 2)
    tested = pl.col("gap").is_not_null() & (pl.col("gap") < CLEAR_GAP)
    part = frame.filter(tested)
    gaps = part["e_gap"].fill_null(0.0).to_numpy()
    share = (np.argsort(np.argsort(gaps, kind="stable"), kind="stable") + 0.5) / max(len(gaps), 1)
    mids = np.array([0.0, *BANDS]) + np.diff(np.array([0.0, *BANDS, CLEAR_GAP])) / 2  # a gap inside each band
    quartile = np.minimum((share * 4).astype(int), 3)
    part = part.with_columns(pl.Series("gap", mids[quartile]), pl.Series("weight", share**2))
    return pl.concat([part, frame.filter(~tested)], how="vertical_relaxed")


VARIANTS: dict[str, Callable[[pl.DataFrame], pl.DataFrame]] = {
    "shipped": lambda f: _judged(f, 2),
    "counted": lambda f: _judged(f, 1),
    "engine-gap": _engine_gap,
}


def frame_rows(frame: pl.DataFrame) -> list[DecisionRow]:
    """A variant's rows as the screen reads them (hand by hand, in the hands' and events' order)."""
    ordered = frame.sort("hand_id", "event", nulls_last=False, maintain_order=True)
    return [
        DecisionRow(
            r["player"],
            r["hand_id"],
            r["event"],
            r["kind"],
            0,
            r["non_forced"],
            0,
            bool(r["agreed"]),
            r["gap"],
            r["weight"],
            "",
            "",
        )
        for r in ordered.iter_rows(named=True)
    ]


def judge(out: Path, variants: Iterable[str]) -> list[str]:
    """Every room of ``out`` judged in each variant: the lines :func:`main` prints."""
    lines = []
    totals: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(out.glob("*.parquet"), key=lambda p: int(p.stem)):
        frame = pl.read_parquet(path)
        room = str(frame["room"][0])
        kind = "honest" if room.startswith("honest") else "evasive" if "evasive" in room else "followers"
        planted = set(frame.filter(pl.col("planted"))["player"].unique())
        line = f"{room} (seed {frame['seed'][0]})"
        for v in variants:
            tested = [a for a in screen(frame_rows(VARIANTS[v](frame)), evidence=0) if a.p is not None]
            t = totals.setdefault(
                (v, kind), {"rooms": 0, "hit": 0, "first": 0, "false": 0, "honest": 0, "wrong": 0, "scores": []}
            )
            t["rooms"] += 1
            t["hit"] += any(a.flagged and a.player in planted for a in tested)
            t["first"] += bool(tested) and tested[0].player in planted
            t["false"] += any(a.flagged and a.player not in planted for a in tested)
            t["honest"] += sum(a.player not in planted for a in tested)
            t["wrong"] += sum(a.flagged and a.player not in planted for a in tested)
            t["scores"] += [(a.z, a.player in planted) for a in tested]
            zs = [f"{a.z:.2f}" for a in tested if a.player in planted]
            flagged = [a.player for a in tested if a.flagged]
            line += f" | {v}: planted z {', '.join(zs) or '-'}, flagged {', '.join(flagged) or 'none'}"
        lines.append(line)
    for (v, kind), t in totals.items():
        n, x = t["rooms"], (t["false"] if kind == "honest" else t["hit"])
        lo, hi = wilson(x, n)
        what = "rooms with a false flag" if kind == "honest" else "rooms flagged"
        a = auc(t["scores"])
        lines.append(
            f"{v} · {kind}: {what} {x}/{n} [{lo or 0:.0%}, {hi or 0:.0%}], planted ranked first {t['first']}, "
            f"AUC {'-' if a is None else f'{a:.2f}'}, honest players flagged {t['wrong']}/{t['honest']}"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.yardstick_lab", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--replicates", type=int, default=20)
    d.add_argument("--evasive", type=int, default=8)
    d.add_argument("--honest", type=int, default=12)
    d.add_argument("--hands", type=int, default=1000)
    d.add_argument("--players", type=int, default=8)
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--spec", default="lookahead")
    d.add_argument("--cache")
    d.add_argument("--workers", type=int, default=2)
    j = sub.add_parser("judge")
    j.add_argument("out", type=Path)
    j.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    args = parser.parse_args(argv)
    if args.command == "dump":
        args.out.mkdir(parents=True, exist_ok=True)
        pops = rooms(args)
        with ProcessPoolExecutor(args.workers) as pool:
            for line in pool.map(partial(dump_room, out=args.out, spec=args.spec, cache=args.cache), pops):
                print(line, flush=True)
        return
    for line in judge(args.out, args.variant or list(VARIANTS)):
        print(line)


if __name__ == "__main__":
    main()
