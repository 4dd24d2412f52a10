"""The stacked-deal dashboard: the screen of :mod:`pipeline.audit.deals` (players, table seats, tables and
sessions dealt better hands than fair walls deal), its flagged groups with each evidence hand replayed, and the
top groups of each kind; one chart, each screened player's mean starting shanten against fair deals'.

The screen runs once per report (:func:`screen`); the data steps arrange its result. A warehouse made before
ingest kept the deal scores has nothing to screen, and the page says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import polars as pl
from matplotlib.axes import Axes

from dashboards import ChartSpec, run_sql, with_replays
from pipeline.audit.deals import KINDS, Commitments, DealResult, NoDealScores, commitments, deal_screen
from pipeline.report import charts

TOP = 10  # rows per kind of the page's table
PLAYERS_SHOWN = 30  # bars of the players' chart


@dataclass(frozen=True, slots=True)
class Screen:
    """The screen's result for the page, and why it is empty when it is. ``results``: the lines the page shows,
    in the screen's order (every player's; of the other kinds, the flagged and the first :data:`TOP`), not every
    group's: the sessions, tables and seats grow with the warehouse (437,524 groups on 1M simulated hands);
    ``tested``: how many groups were screened."""

    results: list[DealResult]
    fdr: float
    note: str | None = None  # why nothing was screened
    walls: Commitments = field(default_factory=lambda: Commitments({}, {}))  # committed walls, by what they proved
    tested: int = 0

    @property
    def flagged(self) -> list[DealResult]:
        return [r for r in self.results if r.flagged]


def screen(con: duckdb.DuckDBPyConnection, *, fdr: float = 0.05) -> Screen:
    """The stacked-deal screen of the warehouse behind ``con``: the lines the page shows, read back from the
    screen's store (:func:`pipeline.audit.deals.deal_screen`)."""
    walls = commitments(con)
    try:
        with deal_screen(con, fdr=fdr) as found:
            shown = [
                r
                for c in found.counts
                for r in found.results(c.kind, None if c.kind == "player" else max(TOP, c.flagged))
            ]
            return Screen(shown, fdr, walls=walls, tested=sum(c.tested for c in found.counts))
    except NoDealScores as exc:
        return Screen([], fdr, str(exc), walls)


def prep_top(s: Screen, per_kind: int = TOP) -> pl.DataFrame:
    """The best ``per_kind`` tested groups of each kind (flagged first, then by p-value), one row each
    (``per_kind`` at most :data:`TOP`: the screen holds no more)."""
    rows = []
    for kind in KINDS:
        tested = [r for r in s.results if r.kind == kind and r.p is not None]
        for r in tested[:per_kind]:
            rows.append(
                {
                    "kind": kind,
                    "group": r.group,
                    "hands": r.hands,
                    "mean": r.mean,
                    "fair": r.expected / r.hands,
                    "z": r.z,
                    "p": r.p,
                    "q": r.q,
                    "flagged": r.flagged,
                }
            )
    schema = {
        "kind": pl.String,
        "group": pl.String,
        "hands": pl.Int64,
        "mean": pl.Float64,
        "fair": pl.Float64,
        "z": pl.Float64,
        "p": pl.Float64,
        "q": pl.Float64,
        "flagged": pl.Boolean,
    }
    return pl.DataFrame(rows, schema=schema)


def prep_evidence(con: duckdb.DuckDBPyConnection, s: Screen) -> pl.DataFrame:
    """Each flagged group's best-dealt hands, each with its replay (as ``xuezhan replay HAND --warehouse W``
    prints it, read back from its source line) or the reason it cannot be read back, and what its wall's
    commitment proved (``wall_commitment``, null where the record carries none)."""
    rows = [
        {"rank": rank, "kind": r.kind, "group": r.group, **{k: e[k] for k in _EVIDENCE}}
        for rank, r in enumerate(s.flagged, start=1)  # rank: the group's anchor deal-<rank> on the page
        for e in r.evidence
    ]
    rows = with_replays(con, rows)
    proved = _wall_commitments(con, {r["hand_id"] for r in rows}) if s.walls.hands else {}
    for r in rows:
        r["wall_commitment"] = proved.get(r["hand_id"])
    schema = {
        "rank": pl.Int64,
        "kind": pl.String,
        "group": pl.String,
        **_EVIDENCE,
        "replay": pl.String,
        "wall_commitment": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def _wall_commitments(con: duckdb.DuckDBPyConnection, hand_ids: set[str]) -> dict[str, str]:
    if not hand_ids:
        return {}
    frame = run_sql(con, "evidence_commitments", hand_ids=sorted(hand_ids))
    return dict(zip(frame["hand_id"].to_list(), frame["wall_commitment"].to_list(), strict=True))


_EVIDENCE = {"hand_id": pl.String, "seat": pl.Int64, "player": pl.String, "dealer": pl.Boolean, "shanten": pl.Int64}


def prep_players(s: Screen, top: int = PLAYERS_SHOWN) -> pl.DataFrame:
    """The screened players with the lowest p-values (at most ``top``), best-dealt first: their dealt hands, mean
    starting shanten, what fair deals of the same shapes give on average, z and whether flagged."""
    tested = sorted((r for r in s.results if r.kind == "player" and r.p is not None), key=lambda r: r.z)[:top]
    return pl.DataFrame(
        [
            {
                "player": r.group,
                "hands": r.hands,
                "mean": r.mean,
                "fair": r.expected / r.hands,
                "z": r.z,
                "flagged": r.flagged,
            }
            for r in tested
        ],
        schema={
            "player": pl.String,
            "hands": pl.Int64,
            "mean": pl.Float64,
            "fair": pl.Float64,
            "z": pl.Float64,
            "flagged": pl.Boolean,
        },
    )


def plot_players(df: pl.DataFrame, ax: Axes) -> None:
    """Each player's mean starting shanten minus fair deals' (negative: dealt better than chance), flagged
    players in red, with the dealt hands beside each bar."""
    if not df.height:
        ax.text(0.5, 0.5, "no player screened", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    f = charts.fonts()
    rows = df.reverse()  # the best-dealt player at the top
    diff = (rows["mean"] - rows["fair"]).to_list()
    colours = [charts.SUBJECT if flag else charts.NEUTRAL for flag in rows["flagged"].to_list()]
    ax.barh(range(rows.height), diff, color=colours, height=0.65)
    ax.set_yticks(range(rows.height), labels=[f.safe(p) for p in rows["player"].to_list()])
    for i, (d, n) in enumerate(zip(diff, rows["hands"].to_list(), strict=True)):
        ax.text(d, i, f" n {n:,} ", va="center", ha="left" if d >= 0 else "right", fontsize=8)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("mean starting shanten − fair deals' (tile changes from ready)")
    ax.set_title("Players' deals against fair walls (red: flagged)")
    low, high = min(0.0, *diff), max(0.0, *diff)
    pad = 0.35 * (high - low) + 0.05
    ax.set_xlim(low - pad, high + pad)


CHARTS = (
    ChartSpec(
        "players",
        prep_players,
        plot_players,
        "Each screened player's mean starting shanten less what fair deals of the same shapes give (negative: "
        "dealt better hands than chance); n: the player's dealt hands.",
        tall=True,
    ),
)
