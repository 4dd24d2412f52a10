"""What the engine-assistance screen can see of an engine follower: at the very decision points where a follower
was asked, how often its engine's choice and its own style's choice agree with the screen's yardstick (the
reference policy, :func:`pipeline.audit.decisions.agreed`), per kind of decision and gap band
(:func:`pipeline.audit.assist.band`).

``python -m tools.follower_separation [--hands N] [--styles S,S] [--seed K]`` plays, per style, ``N`` hands at a
table of four: seat 0 a player of that style who asks the engine (:mod:`pipeline.engines.lookahead`) at every
decision with more than one option and plays it (``follow`` at P = 1), the others the realistic room mix. At
each asked decision the record holds both answers (:class:`pipeline.simulate.bots.FollowNote`: ``own`` and
``engine``), so the two are compared on the same states. For each style, kind and band it prints the decisions
and the share that agree with the yardstick, engine and own (95% Wilson intervals), and their difference: what a
follower at share P adds to its agreement there is P times it. A screen of agreement cannot find a follower
whose engine adds less there than the honest styles differ from one another.

The decisions the screen tests are the non-forced ones that are not wins (a win is taken); a pass or a claim
chosen among a claim's options is a ``claim``; the gap bands are the screen's (band 4: clear, gap >= 2.25).
Within a hand the follower's choices steer the states that follow, so its states are a follower's, not an honest
player's: what is compared is the two answers at each, not the two players' games.
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict
from collections.abc import Sequence

from pipeline.audit.assist import band
from pipeline.audit.decisions import agreed, gap, weight
from pipeline.audit.review import Decision
from pipeline.game import policy
from pipeline.game.events import Event
from pipeline.game.state import HandState
from pipeline.rules.ruleset import load_ruleset
from pipeline.simulate.bots import Follow
from pipeline.simulate.play import Seating, play_hand
from pipeline.simulate.styles import STYLES, Player, make_pool
from tools.policy_agreement import wilson

Key = tuple[str, str, int]  # style, kind, band


def _agrees(options: Sequence[policy.Option], event: Event | None, kind: str, void: int | None) -> bool | None:
    """Does ``event`` (None: a pass) agree with the yardstick's first choice (None: not among the options)?"""
    chosen = next((o for o in options if (o.event == event if event is not None else o.action == "pass")), None)
    if chosen is None:
        return None
    better = policy.clearly_better(options, chosen, void)
    return agreed(Decision(None, 0, kind, tuple(options), chosen, better, void))  # type: ignore[arg-type]


def measure(style: str, hands: int, seed: int, profile: str = "chengdu") -> dict[Key, list[float]]:
    """Per (style, kind, band): [decisions, the engine's agreeing, the own choice's agreeing, and the same three
    weighted by the screen's ambiguity weight (:func:`pipeline.audit.decisions.weight`)]."""
    rules = load_ruleset(profile)
    out: dict[Key, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0, 0.0, 0.0])
    for hand in range(hands):
        others = make_pool(3, random.Random(f"separation-{seed}-{hand}"))
        players = (Player("follower", STYLES[style], STYLES[style].skill), *others)
        seating = Seating(players, {}, frozenset(), {0: Follow(1.0)})
        played = play_hand(
            rules, profile, seating, hand % rules.players, random.Random(f"hand-{seed}-{hand}"), hand_id=f"h{hand}"
        )
        events = played.hand.events
        state: HandState = played.fresh_state()
        done = 0
        for note in sorted((n for n in played.follows if n.asked), key=lambda n: n.event):
            while done < note.event:
                state.apply(events[done])
                done += 1
            options = policy.decide(state, note.seat)
            g = gap(options)
            if g is None or options[0].action == "hu":
                continue  # forced, or a win: not tested
            kind = "claim" if any(o.action == "pass" for o in options) else "turn"
            void = state.void[note.seat]
            eng, own = _agrees(options, note.engine, kind, void), _agrees(options, note.own, kind, void)
            if eng is None or own is None:
                continue
            t = out[(style, kind, band(g))]
            w = weight(g)
            for i, x in enumerate((1, eng, own, w, w * eng, w * own)):
                t[i] += x
    return out


def _share(k: float, n: float) -> str:
    lo, hi = wilson(int(k), int(n))
    return f"{k / n if n else 0:.3f} [{lo:.2f},{hi:.2f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--styles", default="expert,balanced,defensive,aggressive,novice")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"{'style':<11}{'kind':<6}{'band':>5}{'n':>7}  {'engine agrees':<22}{'own agrees':<22}{'difference':>10}")
    for style in args.styles.split(","):
        got = measure(style, args.hands, args.seed)
        for key in sorted(got):
            n, e, o = got[key][:3]
            head = f"{key[0]:<11}{key[1]:<6}{key[2]:>5}{n:>7.0f}"
            print(f"{head}  {_share(e, n):<22}{_share(o, n):<22}{(e - o) / n:>+10.3f}")
        tested = [v for (_, kind, b), v in got.items() if kind == "turn" and b <= 3]  # what the screen tests
        w, we, wo = (sum(v[i] for v in tested) for i in (3, 4, 5))
        if w:
            rates = f"engine {we / w:.3f}, own {wo / w:.3f}, difference {(we - wo) / w:+.3f}"
            print(f"{style:<11}tested turns (bands 0-3), weighted: {rates}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
