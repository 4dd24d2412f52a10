"""Cheat families: the ways colluders play for each other, each a set of knobs the bots read.

A *family* is a documented behaviour planted by ``simulate --inject cheat=FAMILY:N:I[:knob=value...]``
(:mod:`pipeline.simulate.inject` reads the spec); ``I`` (0–1) is the intensity, the chance that a member acts
for a partner at each opportunity the family's behaviour offers. The bots read only the knobs
(:class:`Family`), never the family's name, so a new family is a new row of :data:`FAMILIES`.

What a cheat may know: its partners' hands (partners signal to each other), and what every player sees (rivers,
melds, declared voids, the tiles left). Never the wall, never an outsider's hand: a family that "plays safe
against the victim" reads the victim's danger from the public record, as a careful honest player does.

Families (group size 2 unless said; seating: the chance a partner joins a table a member sits at):

================= ==================================================================================
``feeding``       the partner's winning tile discarded with probability I, a tile it can pong with I/2,
                  its discards ponged (and konged) more readily — ``collude=P:I``'s behaviour
``selective``     only the partner's winning tile, and only when the win is worth at least ``fan`` fan
                  (default 2: double a plain hand) to the partner; nothing else
``late``          only the partner's winning tile, and only when the wall holds at most ``late`` tiles
                  (default 20 of the 55 after the deal)
``soft``          no feeding: never throws a tile a partner still in waits on when another discard is
                  possible, and never claims a win off a partner's discard (each with probability I; a
                  pass is not made in the last four tiles, where the rules forbid it)
``passing``       feeding, and passes a cheap win (at most ``cheap`` fan, default 1: a plain hand) off a
                  partner's discard with probability I (not in the last four tiles)
``kong``          throws the fourth tile of a partner's concealed triplet (probability I) and the partner
                  kongs it more readily (the discarder pays the kong: 刮风)
``exchange``      换三张 gifts: when the exchange sends a member's three tiles to a partner, with probability
                  I it gives three tiles of the partner's longest suit, those closest to the partner's
                  tiles; 定缺: with probability I it voids a suit other than the one a partner declared
``team``          a team of three (``size``): feeding among the members, and, with probability I per
                  discard, plays safe against the outsiders at the table (the safest tile by the public
                  record against an outsider who looks ready, folding when two or more from ready)
``ready``         signals only when ready: once a partner is ready it is fed its winning tile with
                  probability I; before that the member plays honestly (no pong feeding, no eager claims)
================= ==================================================================================

Knobs in the spec (``:knob=value`` after the intensity): ``seat=S`` (0–1, the seating bias; ``seat=0``: the
partners sit together only as often as chance seats them), ``size=K`` (players in each group), ``fan=N``
(selective), ``late=L`` (late), ``cheap=N`` (passing).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Family:
    """What the members of a colluding group do for each other (each act with the group's intensity)."""

    name: str
    size: int = 2  # players in a group
    seating: float = 0.5  # chance a partner joins a table a member sits at (0: chance only)
    feed_win: bool = False  # discard a tile that wins for a partner still in
    feed_pong: bool = False  # discard a tile a partner can pong (at half the intensity)
    claim_partner: bool = False  # pong and kong a partner's discard more readily
    kong_partner: bool = False  # kong a partner's discard more readily
    min_fan: int = 0  # feed a win only when it is worth at least this many fan to the partner
    late: int = 0  # feed only when the wall holds at most this many tiles (0: any time)
    soft: bool = False  # never throw a tile a partner waits on while another discard is possible
    decline: bool = False  # never claim a win off a partner's discard
    cheap: int = 0  # pass a win off a partner's discard worth at most this many fan (0: never)
    kong_feed: bool = False  # throw the fourth tile of a partner's concealed triplet
    gifts: bool = False  # 换三张: give a partner tiles of its longest suit
    split_voids: bool = False  # 定缺: void a suit a partner did not
    wall_off: bool = False  # play safe against the outsiders at the table

    @property
    def knobs(self) -> dict[str, int | float]:
        """The knobs a spec may set, with their values (written in the labels)."""
        out: dict[str, int | float] = {"size": self.size, "seat": self.seating}
        if self.min_fan:
            out["fan"] = self.min_fan
        if self.late:
            out["late"] = self.late
        if self.cheap:
            out["cheap"] = self.cheap
        return out

    def with_knobs(self, knobs: dict[str, str]) -> Family:
        """This family with ``knobs`` (``{"seat": "0.2", "fan": "2"}``) set; ``ValueError`` for a knob it has not."""
        fields = {"seat": ("seating", float), "size": ("size", int), "fan": ("min_fan", int), "late": ("late", int)}
        fields["cheap"] = ("cheap", int)
        own = {"seat", "size"} | set(self.knobs)
        changes: dict[str, int | float] = {}
        for key, value in knobs.items():
            if key not in own:
                raise ValueError(f"family {self.name!r} has no knob {key!r} (it has: {', '.join(sorted(own))})")
            name, kind = fields[key]
            changes[name] = kind(value)
        out = replace(self, **changes)  # type: ignore[arg-type]
        if not 0.0 <= out.seating <= 1.0:
            raise ValueError("seat must be between 0 and 1")
        if out.size < 2:
            raise ValueError("a group needs at least 2 players (size)")
        if min(out.min_fan, out.late, out.cheap) < 0:
            raise ValueError("knobs must not be negative")
        return out


FEEDING = Family("feeding", feed_win=True, feed_pong=True, claim_partner=True)
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        FEEDING,
        Family("selective", feed_win=True, min_fan=2),
        Family("late", feed_win=True, late=20),
        Family("soft", soft=True, decline=True),
        Family("passing", feed_win=True, feed_pong=True, claim_partner=True, cheap=1),
        Family("kong", kong_feed=True, kong_partner=True),
        Family("exchange", gifts=True, split_voids=True),
        Family("team", size=3, feed_win=True, feed_pong=True, claim_partner=True, wall_off=True),
        Family("ready", feed_win=True),
    )
}
