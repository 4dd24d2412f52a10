"""What each statistic needs of a record, and so which levels of record it can use: one table,
:data:`NEEDS`, read by ``stats`` (the player metrics, the table figures), the reports and the collusion screen,
and printed in ``schemas/METRICS.md``.

A record's level says what it carries (``schemas/XZLOG.md``, levels): ``full`` and ``dealt`` every event and
every hand; ``observer`` every public action (discards, calls, wins, the settlement) but the other seats' draws,
so only the recording seat's hand; ``settlement`` a score sheet's wins (who, on whose tile, the claimed
patterns), kongs, end states and payments, with no tiles and no discards. A figure is computed over the hands
whose level carries what it needs and says how many hands of each level it used and which it left out.

>>> NEEDS["pongs_per_hand"].uses("settlement", own=False), NEEDS["win_rate"].uses("settlement", own=False)
(False, True)
>>> NEEDS["passed_wins"].uses("observer", own=True), NEEDS["passed_wins"].uses("observer", own=False)
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LEVELS = ("full", "dealt", "observer", "settlement")


@dataclass(frozen=True, slots=True)
class Needs:
    """What a figure needs of a record: ``levels`` where every seat's part can be used, ``own_seat`` where only
    the recording seat's (an observer's record: its own hand is known, the others' are not); ``lacks`` says,
    per level, why it is (or its other seats are) left out."""

    id: str
    what: str
    levels: tuple[str, ...]
    own_seat: tuple[str, ...] = ()
    lacks: tuple[tuple[str, str], ...] = ()

    def why_not(self, level: str) -> str:
        """Why hands of ``level`` are left out ("" when they are not)."""
        return dict(self.lacks).get(level, "")

    def uses(self, level: str, *, own: bool) -> bool:
        """Can a seat's row of a hand at ``level`` be used (``own``: the seat whose whole hand the record shows)?"""
        return level in self.levels or (own and level in self.own_seat)

    def usable(self) -> tuple[str, ...]:
        """The levels it can use at all, in :data:`LEVELS` order."""
        return tuple(level for level in LEVELS if level in self.levels or level in self.own_seat)

    def describe(self) -> str:
        """The levels in words, as the docs show them.

        >>> HAND.describe()
        'full, dealt; observer: its own seat only'
        """
        text = ", ".join(self.levels)
        if self.own_seat:
            text += "; " + ", ".join(self.own_seat) + ": its own seat only"
        return text


CLAIMS = Needs(
    "claims",
    "what every level states: the wins (who, on whose tile, the fan), the kongs, the end states and the payments",
    LEVELS,
)
PUBLIC = Needs(
    "public",
    "the public actions: every discard, draw count and call",
    ("full", "dealt", "observer"),
    lacks=(("settlement", "a score sheet has no discards, pongs or draws"),),
)
HAND = Needs(
    "hand",
    "the player's whole hand at every moment: what it could win on, what it held",
    ("full", "dealt"),
    ("observer",),
    lacks=(("observer", "the other seats' draws are hidden"), ("settlement", "a score sheet has no tiles")),
)
READY = Needs(
    "ready",
    "whether a player still in at an empty wall was ready: from the hand, or as a score sheet declares it",
    ("full", "dealt", "settlement"),
    ("observer",),
    lacks=(("observer", "the other seats' hands are hidden"),),
)
CHOSEN = Needs(
    "chosen",
    "every seat's hand at each discard: who could win on it, and whether the discarder held a safe tile",
    ("full", "dealt"),
    lacks=(("observer", "the other seats' hands are hidden"), ("settlement", "a score sheet has no discards")),
)
START = Needs(
    "start",
    "every seat's deal, the tiles it gave in 换三张 and the void it declared",
    ("full", "dealt"),
    lacks=(("observer", "the other seats' deals are hidden"), ("settlement", "a score sheet has no tiles")),
)
READY_TURN = Needs(
    "ready_turn",
    "every seat's hand after each of its discards, as the replay at ingest works it out (hands.ready_judged)",
    ("full", "dealt"),
    lacks=(
        ("observer", "the other seats' hands are hidden (the replay works out no evidence of a hidden hand)"),
        ("settlement", "a score sheet has no tiles"),
    ),
)
SHEET = Needs(
    "sheet",
    "each win's discarder, in a hand whose discards are not recorded (a hand with them is screened on them)",
    ("settlement",),
    lacks=(
        ("full", "its discards are screened instead (feed_win)"),
        ("dealt", "its discards are screened instead (feed_win)"),
        ("observer", "its discards are screened instead (feed_win)"),
    ),
)

REVIEWED = Needs(
    "reviewed",
    "the seat's hand at each of its decisions, reviewed by `xuezhan review` (decision_tallies)",
    ("full", "dealt"),
    ("observer",),
    lacks=(("observer", "the other seats' hands are hidden"), ("settlement", "a score sheet has no decisions")),
)

# figure → what it needs. Player metrics (pipeline/analytics/metrics.py), table figures (stats' "table"), and
# the collusion screen's features (pipeline/audit/collusion.py). tests/test_levels_stats.py holds the code to it.
NEEDS: dict[str, Needs] = {
    # player metrics
    "hands": CLAIMS,
    "win_rate": CLAIMS,
    "self_draw_wins": CLAIMS,
    "self_draw_share": CLAIMS,
    "first_winner_rate": CLAIMS,
    "second_winner_rate": CLAIMS,
    "third_winner_rate": CLAIMS,
    "deal_in_rate": CLAIMS,  # from each win's `from`
    "deal_ins_per_hand": CLAIMS,
    "points_lost_per_deal_in": CLAIMS,
    "fan_per_win": CLAIMS,  # a score sheet's fan from its claimed patterns
    "points_per_win": CLAIMS,
    "net_points_per_hand": CLAIMS,
    "luck_adjusted_net_per_hand": START,  # the deal's shanten; hands with no known deal would be raw nets
    "hua_zhu_rate": CLAIMS,  # a score sheet declares its pigs; 查花猪 is paid in public
    "not_ready_at_draw_rate": READY,
    "pongs_per_hand": PUBLIC,  # a score sheet lists kongs, not pongs
    "direct_kongs_per_hand": CLAIMS,
    "added_kongs_per_hand": CLAIMS,
    "concealed_kongs_per_hand": CLAIMS,
    "void_m_share": CLAIMS,  # 定缺 is declared in public (hands with no declaration are not counted)
    "void_p_share": CLAIMS,
    "void_s_share": CLAIMS,
    "win_turn": PUBLIC,  # turns are counted from the draws and calls: a score sheet has no draws
    "deal_in_turn": PUBLIC,
    "ready_turn": READY_TURN,
    "ready_rate": READY_TURN,
    "ready_by_turn_6_rate": READY_TURN,
    "starting_shanten": START,  # player_hands.deal_shanten: every seat's deal
    "passed_wins": HAND,
    "compulsory_violations": HAND,
    # decision metrics (pipeline/analytics/metrics.py DECISION_METRICS: decision_tallies, xuezhan review)
    "reviewed_hands": REVIEWED,
    "efficiency_match_rate": REVIEWED,
    "avoidable_deal_in_share": REVIEWED,
    "avoidable_deal_ins_per_100": REVIEWED,
    "missed_win_rate": REVIEWED,
    "late_void_rate": REVIEWED,
    # table figures
    "fan_distribution": CLAIMS,
    "pattern_frequency": CLAIMS,
    "winners_per_hand": CLAIMS,
    "huang_zhuang_rate": CLAIMS,
    "multi_win_rate": CLAIMS,
    "hand_length": PUBLIC,  # events per hand: a score sheet's are its kongs and wins only
    "tables": CLAIMS,
    "money_by_reason": CLAIMS,
    "issues_by_code": CLAIMS,  # every stored hand, whatever its level (its level says what was checked)
    # collusion features (pipeline/audit/collusion.py)
    "feed_win": PUBLIC,  # wins on the other's discard, against the discards made while both were in
    "feed_call": PUBLIC,
    "feed_kong": PUBLIC,  # direct kongs on the other's discard
    "kong_offer": CHOSEN,  # the fourth tile of the other's concealed triplet thrown: every seat's hand
    "kong_costly": CHOSEN,  # the fourth tile of the other's triplet given up at a cost
    "feed_costly": CHOSEN,  # a tile given up at a cost: the giver's hand, and the takers' to know who could take it
    "feed_costly_value": CHOSEN,  # the same, for a win of 2 fan or more
    "feed_value": PUBLIC,  # wins of 2 fan or more on the other's discard
    "feed_sheet": SHEET,  # wins on the other's discard, per hand: what a hand with no discards shows
    "chosen_danger": CHOSEN,
    "soft_pass": HAND,  # the passer's hand (an observer's own seat)
    "passed": HAND,  # passed wins per chance to win: the passer's hand
    "could_feed": HAND,  # tiles the opponent could win on (deal-in avoidance): its hand
    "channel": CLAIMS,
    "gift": START,  # 换三张 tiles of a longest suit of the receiver's deal
    "split": START,  # a void declared against the hand, leaving the other's void suit to it
}
TABLE_FIGURES = (
    "fan_distribution",
    "pattern_frequency",
    "winners_per_hand",
    "huang_zhuang_rate",
    "multi_win_rate",
    "hand_length",
    "tables",
    "money_by_reason",
    "issues_by_code",
)


def split(needs: Needs, by_level: Mapping[tuple[str, bool], int]) -> tuple[dict[str, int], dict[str, int]]:
    """Hands (or seat-hands) used and left out, by level, from counts keyed by ``(level, own)``.

    >>> split(PUBLIC, {("full", True): 30, ("settlement", False): 3})
    ({'full': 30}, {'settlement': 3})
    >>> split(HAND, {("observer", True): 2, ("observer", False): 6})
    ({'observer': 2}, {'observer': 6})
    """
    used: dict[str, int] = {}
    excluded: dict[str, int] = {}
    for (level, own), n in sorted(by_level.items(), key=lambda kv: (_order(kv[0][0]), not kv[0][1])):
        if not n:
            continue
        side = used if needs.uses(level, own=own) else excluded
        side[level] = side.get(level, 0) + n
    return used, excluded


def _order(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def coverage(needs: Needs, by_level: Mapping[tuple[str, bool], int]) -> dict[str, Any]:
    """``{"n", "levels", "excluded", "needs"}``: how many hands a figure used, by level, and which it left out.

    >>> coverage(PUBLIC, {("full", True): 30, ("dealt", True): 5, ("settlement", False): 3})["n"]
    35
    """
    used, excluded = split(needs, by_level)
    return {"n": sum(used.values()), "levels": used, "excluded": excluded, "needs": needs.id}


def excluded_text(excluded: Mapping[str, int], needs: Needs) -> str:
    """``"excluded: 3 settlement hands (why)"`` (empty when nothing was left out).

    >>> excluded_text({"settlement": 3}, PUBLIC)
    'excluded: 3 settlement hands (a score sheet has no discards, pongs or draws)'
    >>> excluded_text({"observer": 6, "settlement": 1}, HAND)
    "excluded: 6 observer hands (the other seats' draws are hidden), 1 settlement hand (a score sheet has no tiles)"
    """
    parts = []
    for level, n in excluded.items():
        why = needs.why_not(level)
        parts.append(f"{n} {level} hand{'s' if n != 1 else ''}" + (f" ({why})" if why else ""))
    return "excluded: " + ", ".join(parts) if parts else ""


def levels_page(ids: Iterable[str]) -> list[str]:
    """Markdown rows ``| id | levels | needs |`` for the docs."""
    return [f"| `{i}` | {NEEDS[i].describe()} | {NEEDS[i].what} |" for i in ids]
