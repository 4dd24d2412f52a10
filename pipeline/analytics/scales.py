"""Scale groups: the hands whose money is in one unit, so that points can be added up and compared.

Every payment of a hand is a multiple of its ruleset's base (底, ``hands.base``): 1 point in the Chinese
profiles, 1,000 in ``majsoul``. A hand's **scale group** is its profile and its base, named by :func:`label`
(``chengdu``, ``majsoul (base 1,000)``); a player's group is the group of most of their stored hands (ties: the
smallest label). Money of different bases is compared in bases (points ÷ the hand's base: the audit's ranking,
:mod:`pipeline.audit.scoring`); players are compared with the players of their own group (the unusual-result
screen, the player pages). In a warehouse of one group a player is compared with "all players".

>>> label("chengdu", 1), label("majsoul", 1000), label(None, None)
('chengdu', 'majsoul (base 1,000)', 'unknown profile')
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import polars as pl

from pipeline import sql
from pipeline.analytics.runs import RUN_HANDS, Stream, add_up, added

POPULATION = "all players"  # the population of a warehouse of one scale group
# What sql/scale_groups.sql reads of each table, for the runs in file order (pipeline/analytics/runs.py)
SCALE_STREAMS = (Stream("hands", "hand_id, profile, base"), Stream("player_hands", "hand_id, player"))


def label(profile: str | None, base: int | None) -> str:
    """The name of the scale group of ``profile`` at ``base``: the profile alone at base 1 (or unknown)."""
    name = profile if profile is not None else "unknown profile"
    return name if base is None or base == 1 else f"{name} (base {base:,})"


def amount(value: float) -> str:
    """A number of points or bases as the pages write it: thousands separated, two decimals when not whole.

    >>> amount(1235000), amount(12.5), amount(1.0), amount(0.1234), amount(113.00000000001)
    ('1,235,000', '12.50', '1', '0.12', '113')
    """
    if isinstance(value, int):
        return f"{value:,}"
    rounded = round(float(value), 2)
    return f"{int(rounded):,}" if rounded.is_integer() else f"{rounded:,.2f}"


_GROUPS = {"group": pl.String, "profile": pl.String, "base": pl.Int64, "hands": pl.Int64}
_PLAYERS = {"player": pl.String, "group": pl.String}


@dataclass(frozen=True, slots=True)
class Scales:
    """The scale groups of a warehouse (or of the hands in a scope).

    ``groups``: one row per group, most hands first (then by label): ``group`` (:func:`label`), ``profile``,
    ``base``, ``hands`` (stored). ``players``: every player with a stored hand and their ``group``."""

    groups: pl.DataFrame
    players: pl.DataFrame

    @property
    def mixed(self) -> bool:
        """More than one scale group: populations are per group, and the pages say which."""
        return self.groups.height > 1

    @property
    def bases(self) -> list[int]:
        """The distinct bases, largest first."""
        return sorted({int(b) for b in self.groups["base"].to_list() if b is not None}, reverse=True)

    def group_of(self, player: str) -> str | None:
        """The scale group of ``player`` (None for a player with no stored hand)."""
        rows = self.players.filter(pl.col("player") == player)
        return str(rows["group"][0]) if rows.height else None

    def with_group(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` (one row per ``player``) with each player's ``group`` (null for a player with no stored hand)."""
        return frame.join(self.players, on="player", how="left", maintain_order="left")

    def population(self, group: str | None) -> str:
        """What a player of ``group`` is compared with, in words: ``all players`` in a warehouse of one group,
        else ``players of GROUP``."""
        return POPULATION if not self.mixed or group is None else f"players of {group}"

    def line(self) -> str | None:
        """One sentence for a warehouse of several groups (which, their bases, hands each); None for one.

        >>> groups = pl.DataFrame({"group": ["chengdu", "majsoul (base 1,000)"], "profile": ["chengdu", "majsoul"],
        ...     "base": [1, 1000], "hands": [300, 200]})
        >>> import textwrap
        >>> print(textwrap.fill(Scales(groups, pl.DataFrame(schema=_PLAYERS)).line() or "", 100))
        This warehouse mixes scales (a profile and its base, 底): chengdu at base 1, 300 hands; majsoul at
        base 1,000, 200 hands. Money is compared in bases (points ÷ each hand's base), and each player with
        the players of their own group.
        """
        if not self.mixed:
            return None
        parts = "; ".join(
            f"{r['profile'] if r['profile'] is not None else 'unknown profile'} at base {r['base']:,}, "
            f"{r['hands']:,} hand{'s' if r['hands'] != 1 else ''}"
            for r in self.groups.iter_rows(named=True)
        )
        money = "Money is compared in bases (points ÷ each hand's base), and each" if len(self.bases) > 1 else "Each"
        return (
            f"This warehouse mixes scales (a profile and its base, 底): {parts}. {money} player with the players of "
            "their own group."
        )


def scales(con: duckdb.DuckDBPyConnection) -> Scales:
    """The :class:`Scales` of the hands behind ``con`` (:func:`pipeline.analytics.queries.connect`)."""
    rows = add_up(  # counts of hands: a run of hands at a time, added up (each player's hands joined to every hand)
        con,
        SCALE_STREAMS,
        lambda c: sql.run_sql(c, "pipeline.analytics", "scale_groups"),
        added(["player", "profile", "base"]),
        size=RUN_HANDS,
    ).sort(["player", "profile", "base"], nulls_last=[False, True, True])
    pairs = rows.select("profile", "base").unique()
    names = pairs.with_columns(
        pl.Series("group", [label(p, b) for p, b in pairs.iter_rows()], dtype=pl.String)
    )  # a few groups: each named once
    named = rows.join(names, on=["profile", "base"], how="left", nulls_equal=True)
    groups = (
        named.filter(pl.col("player").is_null())
        .select(list(_GROUPS))
        .cast(_GROUPS)  # type: ignore[arg-type]
        .sort(["hands", "group"], descending=[True, False])
    )
    players = (
        named.filter(pl.col("player").is_not_null())
        .sort(["player", "hands", "group"], descending=[False, True, False])
        .group_by("player", maintain_order=True)
        .first()
        .select(list(_PLAYERS))
        .cast(_PLAYERS)  # type: ignore[arg-type]
    )
    return Scales(groups, players)
