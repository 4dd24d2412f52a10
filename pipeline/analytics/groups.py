"""How ``xuezhan stats --by`` splits each player's figures: the one list of the groups, for the command line
(which imports this module alone, before any heavy library), the SQL model's ``$by``
(``sql/player_base.sql``) and the tests; and ``opponent``, the split of one player's figures by the player
across the table (``stats --player P --by opponent``: the head-to-head table, ``sql/head_to_head.sql``).

>>> choices()
'seat, dealer, profile, month or opponent'
"""

from __future__ import annotations

from typing import Literal, get_args

Group = Literal["all", "seat", "dealer", "profile", "month"]  # "all": not split (the default)
GROUPS: tuple[str, ...] = get_args(Group)
Split = Literal["all", "seat", "dealer", "profile", "month", "opponent"]  # what --by takes
SPLITS: tuple[str, ...] = get_args(Split)


def choices() -> str:
    """The splits one asks for, in words (``all`` is the default, not a split)."""
    *first, last = SPLITS[1:]
    return f"{', '.join(first)} or {last}"


def check_group(by: str) -> str:
    """``by`` when it is one of :data:`GROUPS` (a split of every player's base counts); else ``ValueError``."""
    if by not in GROUPS:
        raise ValueError(f"--by takes {choices()}, got {by!r}")
    return by
