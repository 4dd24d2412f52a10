"""How ``xuezhan stats --by`` splits each player's figures: the one list of the groups, for the command line
(which imports this module alone, before any heavy library), the SQL model's ``$by``
(``sql/player_base.sql``) and the tests.

>>> choices()
'seat, dealer, profile or month'
"""

from __future__ import annotations

from typing import Literal, get_args

Group = Literal["all", "seat", "dealer", "profile", "month"]  # "all": not split (the default)
GROUPS: tuple[str, ...] = get_args(Group)


def choices() -> str:
    """The groups one asks for, in words (``all`` is the default, not a split)."""
    *first, last = GROUPS[1:]
    return f"{', '.join(first)} or {last}"


def check_group(by: str) -> str:
    """``by`` when it is one of :data:`GROUPS`; else ``ValueError``."""
    if by not in GROUPS:
        raise ValueError(f"--by takes {choices()}, got {by!r}")
    return by
