"""Player styles: each a small set of parameters the bots read (no style branches in the bot code).

A player has a style and a personal ``skill`` drawn around the style's mean, so that players of one style
still differ, as at real tables.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True, kw_only=True)
class Style:
    name: str
    skill: float  # mean chance of making the best discard
    skill_spread: float  # standard deviation of skill across players of this style
    pong: float  # chance of ponging when it keeps the hand as close to ready
    kong: float  # chance of declaring a kong that does not hurt the hand
    flush: float  # pull towards one suit (清一色) and all pungs (对对胡): bigger hands, slower
    defense: float  # once an opponent looks ready, weight of safety when choosing a discard
    fold_shanten: int  # fold (discard only safe tiles) when this far or further from ready; 99 = never
    forget_void: float = 0.0  # chance of forgetting the void suit for a whole hand (花猪 risk)
    take_small_win: float = 1.0  # chance of taking a win when one is allowed (a few chase bigger hands)
    # When weighing its best discards by the unseen tiles that improve the hand, the chance it counts each copy
    # in view on the table (rivers, melds) as gone; its own tiles it always counts. 1: every copy, exactly as a
    # calculator and the reference policy count; a person misses some (simulate --notice Q sets every player's)
    notice: float = 1.0


STYLES: dict[str, Style] = {
    s.name: s
    for s in (
        Style(
            name="balanced", skill=0.85, skill_spread=0.07, pong=0.6, kong=0.8, flush=0.25, defense=0.4, fold_shanten=3
        ),
        Style(
            name="aggressive",
            skill=0.8,
            skill_spread=0.08,
            pong=0.85,
            kong=1.0,
            flush=0.75,
            defense=0.05,
            fold_shanten=99,
            take_small_win=0.9,
        ),
        Style(
            name="defensive",
            skill=0.85,
            skill_spread=0.07,
            pong=0.35,
            kong=0.6,
            flush=0.1,
            defense=0.95,
            fold_shanten=2,
        ),
        # the strongest honest style: few slips, careful against a ready table (the hard negatives of the
        # engine-assistance screen; never in the default room mix: --styles expert=W)
        Style(
            name="expert",
            skill=0.95,
            skill_spread=0.03,
            pong=0.5,
            kong=0.85,
            flush=0.3,
            defense=0.8,
            fold_shanten=3,
        ),
        Style(
            name="novice",
            skill=0.45,
            skill_spread=0.12,
            pong=0.7,
            kong=0.7,
            flush=0.3,
            defense=0.1,
            fold_shanten=99,
            forget_void=0.12,
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    style: Style
    skill: float


DEFAULT_MIX: dict[str, float] = {"balanced": 0.4, "aggressive": 0.2, "defensive": 0.2, "novice": 0.2}


def parse_mix(text: str) -> dict[str, float]:
    """``"balanced=0.4,expert=0.6"`` → the style weights of a pool (``ValueError`` naming what is wrong)."""
    mix: dict[str, float] = {}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        name, sep, weight = item.partition("=")
        if name not in STYLES:
            raise ValueError(f"unknown style {name!r} (known: {', '.join(sorted(STYLES))})")
        try:
            mix[name] = float(weight) if sep else 1.0
        except ValueError:
            raise ValueError(f"cannot read the weight of {item!r}") from None
        if mix[name] < 0:
            raise ValueError(f"the weight of {name} must not be negative")
    if not mix or not sum(mix.values()) > 0:
        raise ValueError("give at least one style with a positive weight (e.g. balanced=0.4,expert=0.6)")
    return mix


def make_pool(
    n: int, rng: random.Random, styles: dict[str, float] | None = None, notice: float | None = None
) -> list[Player]:
    """``n`` players with styles drawn by ``styles`` weights (default: a realistic room mix); ``notice``: every
    player's :attr:`Style.notice` (default: its style's)."""
    weights = styles or DEFAULT_MIX
    names = sorted(weights)
    out = []
    for i in range(n):
        style = STYLES[rng.choices(names, weights=[weights[k] for k in names])[0]]
        if notice is not None:
            style = replace(style, notice=notice)
        skill = min(0.99, max(0.05, rng.gauss(style.skill, style.skill_spread)))
        out.append(Player(id=f"p{i + 1:03d}", style=style, skill=round(skill, 3)))
    return out
