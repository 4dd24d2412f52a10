"""How strong the followers' engine is (pipeline/engines/lookahead.py), how often it agrees with the reference
policy, and what it costs.

``python -m tools.engine_strength [--hands N] [--replicates R] [--style S] [--share P]`` plays, per replicate,
``N`` hands at a table of four: seat 0 is a player of style ``S`` who follows the engine on a share ``P`` of its
decisions, the others are drawn from the realistic room mix. Each hand is played twice from the same seed, once
with the follower at ``P`` and once at ``P = 0`` (the same player, its own style throughout): the same deal and
wall, so the difference of seat 0's points is the engine's doing. It prints, per replicate and pooled, seat 0's
net points per hand both ways, the paired difference with a 95% interval (the replicates' t interval), the win
and deal-in rates, the share of the engine's choices that are the reference policy's first choice
(:func:`pipeline.game.policy.decide`) and that are the follower's own style's choice (with Wilson intervals), and
the engine's milliseconds per decision. ``--baseline reference``: the hand's second play follows the reference
policy at the same share instead of the player's own style (is the engine stronger than the yardstick?).
``--engine reference``: the follower follows the reference policy's first choice instead.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

from pipeline.engines import lookahead as engine
from pipeline.game import policy
from pipeline.game.state import HandState
from pipeline.rules.ruleset import load_ruleset
from pipeline.simulate.bots import Follow
from pipeline.simulate.play import PlayedHand, Seating, play_hand
from pipeline.simulate.styles import STYLES, Player, make_pool
from tools.policy_agreement import t_interval, wilson


def _table(style: str, replicate: int, hand: int) -> tuple[Player, ...]:
    others = make_pool(3, random.Random(f"others-{replicate}-{hand}"))
    return (Player("follower", STYLES[style], STYLES[style].skill), *others)


def _agreement(played: PlayedHand) -> tuple[int, int, int]:
    """(decisions the engine was asked, of them the reference policy's first choice, of them the own choice)."""
    events = played.hand.events
    state = played.fresh_state()
    asked = [n for n in played.follows if n.asked]
    done = 0
    n = same_ref = same_own = 0
    for note in sorted(asked, key=lambda x: x.event):
        while done < note.event:
            state.apply(events[done])
            done += 1
        ranked = policy.decide(state, note.seat)
        if not ranked:
            continue
        n += 1
        same_ref += ranked[0].event == note.engine
        same_own += note.own == note.engine
    return n, same_ref, same_own


def _reference(state: HandState, seat: int, rng: random.Random) -> list[engine.Choice]:
    """The reference policy's ranking as the engine's (best first; a pass is ``None``)."""
    ranked = policy.decide(state, seat)
    return [engine.Choice(o.event if o.action != "pass" else None, float(-o.rank)) for o in ranked]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=5)
    parser.add_argument("--style", default="balanced", choices=sorted(STYLES))
    parser.add_argument("--share", type=float, default=1.0)
    parser.add_argument("--profile", default="chengdu")
    parser.add_argument(
        "--engine",
        default="engine",
        choices=("engine", "reference"),
        help="what the follower follows: the engine, or (for comparison) the reference policy's first choice",
    )
    parser.add_argument(
        "--baseline",
        default="own",
        choices=("own", "reference"),
        help="what it is compared with, hand by hand: the same player on its own style (P = 0), or following the "
        "reference policy at the same share",
    )
    args = parser.parse_args(argv)
    rules = load_ruleset(args.profile)
    calls = [0, 0.0]
    decide = engine.decide if args.engine == "engine" else _reference

    def timed(*a: object, **k: object) -> list[engine.Choice]:
        t = time.perf_counter()
        out = decide(*a, **k)  # type: ignore[arg-type]
        calls[0] += 1
        calls[1] += time.perf_counter() - t
        return out

    diffs: list[float] = []
    tally = {"n": 0, "ref": 0, "own": 0}
    rates = {True: [0, 0, 0], False: [0, 0, 0]}  # hands, wins, deal-ins
    print(
        f"{args.engine}: style {args.style}, share {args.share}, {args.hands} hands x {args.replicates} replicates "
        f"({args.profile})"
    )
    print(f"{'rep':>4}{'net followed':>14}{'net ' + args.baseline:>14}{'diff':>8}")
    for rep in range(args.replicates):
        net = {True: 0, False: 0}
        for hand in range(args.hands):
            players = _table(args.style, rep, hand)
            dealer = hand % rules.players
            for follows in (True, False):
                against = args.baseline == "reference" and not follows
                engine.decide = timed if follows else _reference  # type: ignore[assignment]
                share = args.share if follows or against else 0.0
                seating = Seating(players, {}, frozenset(), {0: Follow(share)})
                played = play_hand(
                    rules, args.profile, seating, dealer, random.Random(f"hand-{rep}-{hand}"), hand_id=f"h{hand}"
                )
                net[follows] += played.hand.deltas[0]
                r = rates[follows]
                r[0] += 1
                r[1] += any(w.seat == 0 for w in played.hand.wins)
                r[2] += any(w.source == 0 and w.how != "self_draw" for w in played.hand.wins)
                if follows:
                    n, ref, own = _agreement(played)
                    tally["n"] += n
                    tally["ref"] += ref
                    tally["own"] += own
        a, b = net[True] / args.hands, net[False] / args.hands
        diffs.append(a - b)
        print(f"{rep:>4}{a:>14.3f}{b:>14.3f}{a - b:>8.3f}")
    mean, lo, hi = t_interval(diffs)
    print(f"net points per hand, followed - {args.baseline}: {mean:+.3f} (95% t interval {lo:+.3f} .. {hi:+.3f})")
    for follows in (True, False):
        h, w, d = rates[follows]
        name = "followed" if follows else args.baseline
        print(f"{name:>9}: win rate {w / h:.3f}, deal-in rate {d / h:.3f} ({h} hands)")
    n = tally["n"]
    for key, what in (("ref", "the reference policy's first choice"), ("own", "the follower's own style's choice")):
        lo_, hi_ = wilson(tally[key], n)
        print(f"engine's choice = {what}: {tally[key] / max(1, n):.3f} ({lo_:.3f}..{hi_:.3f}) of {n} decisions")
    if calls[0]:
        print(f"engine: {1000 * calls[1] / calls[0]:.1f} ms per decision ({calls[0]} decisions)")


if __name__ == "__main__":
    main()
