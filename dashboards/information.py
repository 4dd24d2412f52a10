"""The information-cheat page's screen and evidence: both signals of the single-player screen per player
(:func:`screen`: the dangerous discards by choice of :mod:`pipeline.audit.information` and the winning-tile
anticipation of :mod:`pipeline.audit.anticipation`, flagged on either with BY over both), and for each flagged
player the hands that show the behaviour best, each replayed as ``xuezhan replay`` prints it: the hands with most
safe discards made while holding a dangerous tile that was as good
(:func:`pipeline.audit.information.best_dodges`), and the waits chosen on the tiles the wall held, widest margin
first (:attr:`pipeline.audit.anticipation.AnticipationResult.best`), each with its options' unseen and wall
counts.

The screen runs once per report; this arranges its flagged players' hands.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import polars as pl

from dashboards import with_replays
from pipeline.audit.anticipation import Seer, WaitsNotJudged, combine, screen_anticipation
from pipeline.audit.information import EVIDENCE, FDR, best_dodges, screen_information


def screen(con: duckdb.DuckDBPyConnection, *, fdr: float = FDR) -> list[Seer]:
    """Both signals of every player of the warehouse behind ``con``, combined (flagged first)."""
    return screen_noted(con, fdr=fdr)[0]


def screen_noted(con: duckdb.DuckDBPyConnection, *, fdr: float = FDR) -> tuple[list[Seer], str | None]:
    """:func:`screen`, and what the page must say when the second signal could not run: on a warehouse ingested
    before ingest judged the waits (:class:`~pipeline.audit.anticipation.WaitsNotJudged`), the dodges alone
    and the message that says to ingest again."""
    dodges = screen_information(con, fdr=fdr)
    try:
        waits = screen_anticipation(con, fdr=fdr)
    except WaitsNotJudged as exc:
        return combine(dodges, [], fdr=fdr), f"Winning-tile anticipation was not screened: {exc}."
    return combine(dodges, waits, fdr=fdr), None


def prep_evidence(con: duckdb.DuckDBPyConnection, seers: Sequence[Seer], *, per_player: int = EVIDENCE) -> pl.DataFrame:
    """Up to ``per_player`` hands of each flagged player, most dodges first, each with its replay. Columns:
    ``rank`` (the player's row ``info-k`` of the page), ``player``, ``hand_id``, ``dodges`` (how many of the
    player's discards in the hand dodged a win), ``what`` (the first of them, in words), ``replay``."""
    rows = [
        {
            "rank": k,
            "player": s.player,
            "hand_id": hand_id,
            "dodges": len(found),
            "what": "; ".join(d.text() for d in found[:3]),
        }
        for k, s in enumerate(seers, start=1)
        if s.flagged and s.dodges is not None
        for hand_id, found in best_dodges(con, s.player, limit=per_player)
    ]
    rows = with_replays(con, rows)
    schema = {
        "rank": pl.Int64,
        "player": pl.String,
        "hand_id": pl.String,
        "dodges": pl.Int64,
        "what": pl.String,
        "replay": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def prep_anticipation(
    con: duckdb.DuckDBPyConnection, seers: Sequence[Seer], *, per_player: int = EVIDENCE
) -> pl.DataFrame:
    """Up to ``per_player`` of each flagged player's waits chosen on the tiles the wall held, widest margin first,
    each hand replayed. Columns: ``rank`` (the player's row), ``player``, ``hand_id``, ``event``, ``margin``
    (copies in the wall beyond the best other option), ``what`` (the options with their unseen and wall
    counts, in words), ``replay``."""
    rows = [
        {
            "rank": k,
            "player": s.player,
            "hand_id": hand_id,
            "event": d.event,
            "margin": d.margin,
            "what": d.text(),
        }
        for k, s in enumerate(seers, start=1)
        if s.flagged and s.anticipation is not None
        for hand_id, d in s.anticipation.best[:per_player]
    ]
    rows = with_replays(con, rows)
    schema = {
        "rank": pl.Int64,
        "player": pl.String,
        "hand_id": pl.String,
        "event": pl.Int64,
        "margin": pl.Int64,
        "what": pl.String,
        "replay": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
