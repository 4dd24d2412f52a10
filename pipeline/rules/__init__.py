"""The rules engine: tiles, winning hands, fan, settlement and rule profiles. Knows nothing of records,
files or tables (see the README's Design section)."""

from pipeline.rules.fan import (
    CONVENTION,
    PATTERNS,
    NotAWin,
    ReadyValue,
    Score,
    WinHand,
    convention,
    ready_value,
    score,
)
from pipeline.rules.hand import Meld, is_legal_win, is_win, roots, shanten, suits_ok, waits
from pipeline.rules.ruleset import RuleSet, RuleSetError, load_ruleset, profile_names, read_profile
from pipeline.rules.settle import Ledger, Payment, SeatEnd
from pipeline.rules.tiles import (
    TileError,
    counts_of,
    format_tiles,
    kind_of,
    parse_tiles,
    tile_list,
    tile_name,
)

__all__ = [
    "CONVENTION",
    "PATTERNS",
    "Ledger",
    "Meld",
    "NotAWin",
    "Payment",
    "ReadyValue",
    "RuleSet",
    "RuleSetError",
    "Score",
    "SeatEnd",
    "TileError",
    "WinHand",
    "convention",
    "counts_of",
    "format_tiles",
    "is_legal_win",
    "is_win",
    "kind_of",
    "load_ruleset",
    "parse_tiles",
    "profile_names",
    "read_profile",
    "ready_value",
    "roots",
    "score",
    "shanten",
    "suits_ok",
    "tile_list",
    "tile_name",
    "waits",
]
