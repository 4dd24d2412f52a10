"""The information-cheat page's evidence: for each flagged player of :mod:`pipeline.audit.information`, the hands
that show the behaviour best (safe discards made while holding a dangerous tile that was as good:
:func:`pipeline.audit.information.best_dodges`), each replayed as ``xuezhan replay`` prints it.

The screen itself runs once per report (:func:`pipeline.audit.information.screen_information`); this arranges its
flagged players' hands.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import polars as pl

from dashboards import replay_of
from pipeline.audit.information import EVIDENCE, InfoResult, best_dodges


def prep_evidence(
    con: duckdb.DuckDBPyConnection, seers: Sequence[InfoResult], *, per_player: int = EVIDENCE
) -> pl.DataFrame:
    """Up to ``per_player`` hands of each flagged player, most dodges first, each with its replay. Columns:
    ``rank`` (the player's row ``info-k`` of the page), ``player``, ``hand_id``, ``dodges`` (how many of the
    player's discards in the hand dodged a win), ``what`` (the first of them, in words), ``replay``."""
    rows = [
        {
            "rank": k,
            "player": r.player,
            "hand_id": hand_id,
            "dodges": len(found),
            "what": "; ".join(d.text() for d in found[:3]),
            "replay": replay_of(con, hand_id),
        }
        for k, r in enumerate(seers, start=1)
        if r.flagged
        for hand_id, found in best_dodges(con, r.player, limit=per_player)
    ]
    schema = {
        "rank": pl.Int64,
        "player": pl.String,
        "hand_id": pl.String,
        "dodges": pl.Int64,
        "what": pl.String,
        "replay": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
