"""The report's dashboards, one module each: ``overview``, ``player``, ``quality``, ``audit``, ``collusion``,
``deals``.

Every chart is two steps:

- ``prep_*(con or result, ...) -> polars.DataFrame``: the data, aggregated by DuckDB on the warehouse, or taken
  from the audit's or the collusion screen's result, computed once per report (the SQL models
  of ``pipeline/analytics/sql`` through :func:`pipeline.analytics.queries.run`, or the few of
  ``dashboards/sql`` the analytics layer has no model for, through :func:`run_sql`). No raw rows come into
  Python, so a report on 100,000 hands builds in seconds. Tested against hand-counted warehouses.
- ``plot_*(df, ax)``: draws the frame on one matplotlib axes, with title, axis labels, units and sample
  sizes; Chinese terms go through :func:`pipeline.report.charts.fonts` so that they fall back to English
  where no CJK font is installed.

Each module lists its charts in ``CHARTS`` for :mod:`dashboards.site`, which runs each screen once, draws the
charts and writes the pages; each page's HTML is in :mod:`dashboards.pages` (one module per page), written with
the one HTML layer of :mod:`dashboards.html`. The dashboards depend on ``pipeline`` (the analytics, the audit, the
chart helpers of ``pipeline.report``), never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from pipeline import sql
from pipeline.analytics.export import Missing, read_back, selected
from pipeline.analytics.levels import NEEDS, coverage, excluded_text
from pipeline.analytics.runs import bounded
from pipeline.audit.replay import HandNotFound, replay_text
from pipeline.validate import validate

if TYPE_CHECKING:  # no matplotlib at import: only the dashboards that draw load it (the replay page draws nothing)
    from matplotlib.axes import Axes


def run_sql(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> pl.DataFrame:
    """Run ``dashboards/sql/NAME.sql`` with bound parameters; the result as a Polars frame, its memory held as the
    analytics' models' (:func:`pipeline.analytics.queries.run`: a page's query reads every hand at once)."""
    return bounded(con, lambda: sql.run_sql(con, "dashboards", name, **params))


def as_int(value: Any) -> int:
    """A count from a frame (``Series.sum()``, ``.max()``, a cell) as an int; null as 0."""
    return 0 if value is None else int(value)


def population_base(base: pl.DataFrame) -> dict[str, int]:
    """Every player's base counts (``player_base``) added up: the population as if it were one player.

    Base counts are sums (of hands, wins, fan, squares …), so the metric registry's definitions apply to the
    total as they do to one player.
    """
    return {c: as_int(base[c].sum()) for c, t in base.schema.items() if t.is_numeric()}


@dataclass(frozen=True, slots=True)
class ChartSpec:
    """One chart of a dashboard: its file name, how to get its frame, how to draw it, and its caption."""

    name: str
    prep: Callable[..., pl.DataFrame]
    plot: Callable[[pl.DataFrame, Axes], None]
    caption: str
    tall: bool = False  # one row per frame row (players, codes, metrics): the height grows with the rows
    figures: tuple[str, ...] = ()  # what it shows, as pipeline/analytics/levels.py names it (the page says n)

    def size(self, df: pl.DataFrame) -> tuple[float, float]:
        from pipeline.report.charts import height_for

        return (8.5, height_for(df.height)) if self.tall else (8.0, 4.2)


def levels_note(figures: Iterable[str], hands: Mapping[str, int]) -> str:
    """What a chart of ``figures`` was computed over, by level of record, from ``hands`` (replayed hands by
    level): ``n = 35 hands (full 30, dealt 5); excluded: 6 settlement hands (why)``, one clause per kind of
    figure when they differ; empty without figures.

    >>> levels_note(["win_rate"], {"full": 30, "settlement": 3})
    'n = 33 hands (full 30, settlement 3)'
    >>> levels_note(["pongs_per_hand"], {"full": 30, "settlement": 3})
    'n = 30 hands (full 30); excluded: 3 settlement hands (a score sheet has no discards, pongs or draws)'
    """
    keyed = {(level, True): n for level, n in hands.items()}
    clauses: dict[str, list[str]] = {}
    for figure in figures:
        needs = NEEDS[figure]
        c = coverage(needs, keyed)
        used = ", ".join(f"{k} {v}" for k, v in c["levels"].items()) or "none"
        text = f"n = {c['n']:,} hands ({used})"
        if c["excluded"]:
            text += "; " + excluded_text(c["excluded"], needs)
        clauses.setdefault(text, []).append(figure)
    if len(clauses) <= 1:
        return next(iter(clauses), "")
    return "; ".join(f"{', '.join(names)}: {text}" for text, names in clauses.items())


def with_replays(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each of ``rows`` (evidence, with a ``hand_id``) with its ``replay`` (:func:`replays_of`, one pass a file)."""
    replays = replays_of(con, (str(row["hand_id"]) for row in rows))
    return [{**row, "replay": replays[str(row["hand_id"])]} for row in rows]


def replays_of(con: duckdb.DuckDBPyConnection, hand_ids: Iterable[str]) -> dict[str, str]:
    """Each of ``hand_ids`` as ``xuezhan replay HAND --warehouse W`` prints it, or the reason it cannot be read back
    (every page's evidence hands), read back from their source files in one pass over each file: hand by hand,
    a compressed file was read from its start for every hand (a report on 200,000 hands spent over 10 minutes on
    its stacked-deal evidence)."""
    ids = list(dict.fromkeys(hand_ids))
    out = {hand_id: str(HandNotFound(f"hand {hand_id!r} is not in the warehouse")) for hand_id in ids}
    stored = [h for hand_id in ids for h in selected(con, hand_id=hand_id)[:1]]
    stored.sort(key=lambda h: (h.source_file is None, h.source_file or "", h.source_line or 0))
    for got in read_back(stored):
        hand_id = got.hand.hand_id
        if isinstance(got, Missing):
            out[hand_id] = f"hand {hand_id!r} cannot be read back: {got.reason}; give its record file instead"
        else:
            out[hand_id] = replay_text(got.record, validate(got.record))
    return out
