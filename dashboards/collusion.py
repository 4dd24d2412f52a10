"""The collusion dashboard: the pair screen of :mod:`pipeline.audit.collusion`, as a heat map of pair scores,
the top pairs against the flag threshold, and the flagged pairs with the hands a person can replay.

The screen runs once per report (:func:`screen_pairs`, the expensive step); the data steps arrange its
result, a :class:`Screen`. A pair is screened when the two players shared at least ``min_hands`` replayed
hands; when no pair of the warehouse reaches the threshold asked for, a smaller one is used
(:func:`pipeline.audit.screen.choose_min_hands`) and the page says which.

The flag threshold: the screen flags pairs by Benjamini–Yekutieli q-values, a step-up rule on the ranked
p-values, and ``p = 1 − Φ(score)``. So the pair ranked ``k`` of ``m`` is flagged when it, or a pair ranked
below it, scores at least ``Φ⁻¹(1 − k·fdr / (m·c(m)))`` with ``c(m) = 1 + 1/2 + … + 1/m``
(:func:`critical_scores`): a threshold per rank, drawn beside each bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import polars as pl
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import TwoSlopeNorm, to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from dashboards import ChartSpec, as_int, with_replays
from pipeline.analytics.stats import by_levels, normal_isf
from pipeline.audit import collusion
from pipeline.audit.collusion import SIGNALS
from pipeline.audit.screen import Screening, screen
from pipeline.audit.teams import GROUP_SIGNALS as TEAM_SIGNALS
from pipeline.audit.victims import Victim, victim_view
from pipeline.report import charts

MAX_PLAYERS = 30  # rows and columns of the heat map
TOP_PAIRS = 15  # bars of the top-pairs chart, rows of the page's pairs table
LABELLED = 8  # heat-map cells written on: the flagged pairs and this many of the best other scored pairs
EVIDENCE = 5  # hands shown per flagged pair

# Heat-map colours of the cells that carry no score.
BELOW = "#d9d9d9"  # the pair shared fewer hands than the threshold: not screened
NO_SIGNAL = "#f2e6c9"  # screened, but no signal varied enough between opponents to score
NONE = "#ffffff"  # the players never sat together (and the diagonal)

SIGNAL_NAMES = {  # signal → (name on the page, Chinese)
    "feeding": ("feeding", "喂牌"),
    "dangerous": ("dangerous discards", "放危险牌"),
    "soft_play": ("soft play", "放水"),
    "channel": ("end-of-wall payments", "查叫花猪"),
    "passed_wins": ("passed wins per chance", "让胡"),
    "avoidance": ("deal-in avoidance", "避炮"),
    "kong_feeding": ("kong feeding", "喂杠"),
    "value_feeding": ("feeding valuable wins", "喂大牌"),
    "costly_feeding": ("feeding at a cost", "拆牌喂牌"),
    "exchange": ("exchange gifts and split voids", "换三张送牌·定缺"),
    "costly_value": ("valuable wins fed at a cost", "拆牌喂大牌"),
}


@dataclass(frozen=True, slots=True)
class Screen(Screening):
    """A collusion screen as the page shows it: the screen's value (:class:`pipeline.audit.screen.Screening`:
    the threshold asked for and used, the pairs that shared a hand, the pair and group screens' results) and the
    victim view (:mod:`pipeline.audit.victims`) with the reported teams (``victims``)."""

    victims: tuple[Victim, ...] = ()

    @classmethod
    def of(cls, s: Screening, victims: Sequence[Victim] = ()) -> Screen:
        """The page's screen of the screen's value ``s`` and the victim view ``victims``."""
        return cls(s.requested, s.min_hands, s.fdr, s.shared, s.pairs, s.groups, tuple(victims))

    @property
    def reaching(self) -> int:
        """Pairs with at least ``min_hands`` shared hands (screened, whether or not a signal could score)."""
        return int((self.shared["shared_hands"] >= self.min_hands).sum()) if self.shared.height else 0

    def threshold_note(self) -> str:
        """Which threshold was used, and why, in a sentence for the page."""
        most = as_int(self.shared["shared_hands"].max())
        pairs = self.shared.height
        reach = f"{self.reaching:,} of the {pairs:,} pairs who shared a replayed hand reach it"
        if self.min_hands == self.requested:
            return f"Threshold: at least {self.min_hands:,} shared hands, as asked; {reach}."
        if not pairs:
            return f"Threshold: at least {self.min_hands:,} shared hands; no two players shared a replayed hand."
        return (
            f"Threshold: at least {self.min_hands:,} shared hands. {self.requested:,} were asked for, "
            f"but no pair shared that many (the most is {most:,}), so the screen fell back to "
            f"{self.min_hands:,}; {reach}. Fewer hands mean less power: a pair that is not flagged "
            "here is not cleared."
        )


# ---------------------------------------------------------------------------------------------- the screen
def screen_pairs(
    con: duckdb.DuckDBPyConnection,
    *,
    min_hands: int = 200,
    fdr: float = 0.05,
    evidence: int = EVIDENCE,
    teams: bool = True,
) -> Screen:
    """The collusion screen of the warehouse behind ``con``, as the page shows it: the pair screen and the group
    screen of teams over one reading of the warehouse (:func:`pipeline.audit.screen.screen`, falling back to a
    smaller threshold when no pair reaches ``min_hands``), then the victim view with the reported teams
    (``teams=False``: the pair screen alone)."""
    s = screen(con, min_hands=min_hands, fallback=True, fdr=fdr, evidence=evidence, teams=teams)
    victims = victim_view(con, teams=[t.players for t in s.teams], min_hands=s.min_hands, fdr=fdr) if teams else []
    return Screen.of(s, victims)


def critical_scores(m: int, fdr: float) -> list[float | None]:
    """The score the pair ranked ``k`` (1..m) must reach for the Benjamini–Yekutieli step-up rule at ``fdr``
    to flag it and every pair above it; None where any score would do.

    >>> [round(c, 3) for c in critical_scores(2, 0.05)]  # c(2) = 1.5: Φ⁻¹(1 − 0.05/3), Φ⁻¹(1 − 0.1/3)
    [2.128, 1.834]
    """
    return [normal_isf(alpha) if 0.0 < alpha < 1.0 else None for alpha in by_levels(m, fdr)]


# ---------------------------------------------------------------------------------------------- heat map
_MATRIX_SCHEMA = {
    "player_a": pl.String,
    "player_b": pl.String,
    "shared_hands": pl.Int64,
    "status": pl.String,  # flagged | screened | no_signal | below
    "score": pl.Float64,
    "q": pl.Float64,
    "label": pl.Boolean,
}


def _shown_players(screen: Screen, limit: int) -> list[str]:
    """Players of screened pairs, those of flagged and high-scoring pairs first, at most ``limit``."""
    best: dict[str, tuple[int, float]] = {}
    for r in screen.pairs:
        for p in r.players:
            key = (int(r.flagged), r.score)
            best[p] = max(best.get(p, key), key)
    reaching = screen.shared.filter(pl.col("shared_hands") >= screen.min_hands)
    for p in (*reaching["player_a"].to_list(), *reaching["player_b"].to_list()):
        best.setdefault(p, (0, float("-inf")))  # screened, but no signal could score
    ranked = sorted(best, key=lambda p: (-best[p][0], -best[p][1], p))
    return sorted(ranked[: max(0, limit)])


def prep_pair_matrix(screen: Screen, *, limit: int = MAX_PLAYERS, labelled: int = LABELLED) -> pl.DataFrame:
    """Every pair among the players the heat map shows (at most ``limit``: players of screened pairs, those
    of flagged and high-scoring pairs first), one row per pair that shared a replayed hand.

    Columns: ``player_a`` < ``player_b``, ``shared_hands``, ``status`` (``flagged``, ``screened``,
    ``no_signal``: screened but no signal varied enough to score, ``below``: fewer than ``min_hands`` shared
    hands), ``score`` and ``q`` (screened pairs), ``label`` (the cell is written on: a flagged pair, or one of
    the ``labelled`` best other scored pairs; every other cell is colour only, readable at any size); and for
    the whole screen: ``min_hands``, ``requested``,
    ``fdr``, ``players_shown``, ``players_total`` (players with a shared hand), ``n_pairs`` (pairs with a
    shared hand), ``n_screened`` (pairs with a score), ``n_flagged``.
    """
    shown = set(_shown_players(screen, limit))
    results = {r.players: r for r in screen.pairs}
    best = [r.players for r in screen.pairs if not r.flagged][: max(0, labelled)]
    written = {r.players for r in screen.pairs if r.flagged} | set(best)
    rows = []
    for a, b, n in screen.shared.iter_rows():
        if a not in shown or b not in shown:
            continue
        r = results.get((a, b))
        if r is not None:
            status = "flagged" if r.flagged else "screened"
        else:
            status = "no_signal" if n >= screen.min_hands else "below"
        rows.append(
            {
                "player_a": a,
                "player_b": b,
                "shared_hands": n,
                "status": status,
                "score": None if r is None else r.score,
                "q": None if r is None else r.q,
                "label": (a, b) in written,
            }
        )
    everyone = set(screen.shared["player_a"].to_list()) | set(screen.shared["player_b"].to_list())
    df = pl.DataFrame(rows, schema=_MATRIX_SCHEMA).sort(["player_a", "player_b"])
    return df.with_columns(
        pl.lit(screen.min_hands, dtype=pl.Int64).alias("min_hands"),
        pl.lit(screen.requested, dtype=pl.Int64).alias("requested"),
        pl.lit(screen.fdr, dtype=pl.Float64).alias("fdr"),
        pl.lit(len(shown), dtype=pl.Int64).alias("players_shown"),
        pl.lit(len(everyone), dtype=pl.Int64).alias("players_total"),
        pl.lit(screen.shared.height, dtype=pl.Int64).alias("n_pairs"),
        pl.lit(len(screen.pairs), dtype=pl.Int64).alias("n_screened"),
        pl.lit(len(screen.flagged), dtype=pl.Int64).alias("n_flagged"),
    )


def _fdr_text(fdr: float) -> str:
    return f"{100 * fdr:g}%"


def q_text(q: float) -> str:
    """A q-value for a label: three decimals, or ``<0.001``.

    >>> q_text(0.0371), q_text(2e-7), q_text(1.0)
    ('0.037', '<0.001', '1.000')
    """
    return "<0.001" if q < 0.0005 else f"{q:.3f}"


def q_label(q: float, *, spaced: bool = True) -> str:
    """A q-value in running text: ``q = 0.037`` or ``q < 0.001`` (never ``q = <0.001``); ``spaced=False``
    for a chart's compact label (``q=0.037``, ``q<0.001``).

    >>> q_label(0.0371), q_label(2e-7), q_label(2e-7, spaced=False)
    ('q = 0.037', 'q < 0.001', 'q<0.001')
    """
    if q < 0.0005:
        return "q < 0.001" if spaced else "q<0.001"
    return f"q = {q:.3f}" if spaced else f"q={q:.3f}"


def plot_pair_matrix(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    head = f"Pair scores ({f.term('串通', 'collusion')} screen)"
    if not df.height or not (df["status"] != "below").any():
        charts.empty(ax, head, "no pair shared enough hands to be screened")
        return
    first = df.row(0, named=True)
    screened = df.filter(pl.col("score").is_not_null())
    n = screened["shared_hands"]
    shown = (
        f"{first['players_shown']} players"
        if first["players_shown"] == first["players_total"]
        else f"the {first['players_shown']} of {first['players_total']} players with the strongest pairs"
    )
    span = f"{as_int(n.min()):,}–{as_int(n.max()):,}" if n.len() else "–"
    title = (
        f"{head}: {first['n_screened']:,} pairs scored, {first['n_flagged']:,} flagged at FDR "
        f"{_fdr_text(first['fdr'])}\n{shown}; screened: ≥ {first['min_hands']:,} shared hands, "
        f"n = {span} shared hands per scored pair"
    )
    players = sorted(set(df["player_a"].to_list()) | set(df["player_b"].to_list()))
    at = {p: i for i, p in enumerate(players)}
    size = len(players)
    scores = screened["score"].to_list()
    reach = max([3.0, *(abs(s) for s in scores)])
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-reach, vmax=reach)
    cmap = colormaps["RdBu_r"]
    grey = {"below": BELOW, "no_signal": NO_SIGNAL}
    image = np.ones((size, size, 4))
    fontsize = 7.5 if size <= 10 else 6.5 if size <= 16 else 5.5
    for r in df.iter_rows(named=True):
        i, j = at[r["player_a"]], at[r["player_b"]]
        colour = cmap(norm(r["score"])) if r["score"] is not None else to_rgba(grey[r["status"]])
        image[i, j] = image[j, i] = colour
        for y, x in ((i, j), (j, i)):
            if r["status"] == "flagged":
                ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.8))
            if r["label"]:
                text = f"{r['score']:.1f}\n{r['shared_hands']}"
                dark = r["score"] is not None and abs(norm(r["score"]) - 0.5) > 0.33
                ax.text(
                    x,
                    y,
                    text,
                    ha="center",
                    va="center",
                    fontsize=fontsize,
                    linespacing=0.95,
                    color="white" if dark else "#333333",
                )
    ax.imshow(image, interpolation="nearest", aspect="equal")
    labels = [f.safe(p) for p in players]
    ax.set_xticks(range(size), labels, rotation=90, fontsize=7 if size > 16 else 8.5)
    ax.set_yticks(range(size), labels, fontsize=7 if size > 16 else 8.5)
    ax.grid(False)
    ax.set_title(title, fontsize=10.5)
    written = int(df["label"].sum())
    ax.set_xlabel(
        f"player; the {written} flagged and best-scoring pairs written on (pair score above, n = shared hands below)"
        if written
        else "player"
    )
    ax.set_ylabel("player")
    mappable = ScalarMappable(norm=norm, cmap=cmap)
    bar = ax.get_figure().colorbar(mappable, ax=ax, shrink=0.8, pad=0.02)  # type: ignore[union-attr]
    bar.set_label("pair score (combined z); red: more help to each other than to others")
    handles = [
        Patch(facecolor="white", edgecolor="black", linewidth=1.8, label=f"flagged (q ≤ {first['fdr']:g})"),
        Patch(facecolor=BELOW, label=f"fewer than {first['min_hands']:,} shared hands: not screened"),
    ]
    if (df["status"] == "no_signal").any():
        handles.append(Patch(facecolor=NO_SIGNAL, label="screened, no signal varied enough to score"))
    handles.append(Patch(facecolor=NONE, edgecolor="#bbbbbb", label="never at one table"))
    # A figure legend "outside" the axes: constrained layout makes room for it under the x label.
    fig = ax.get_figure()
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=7.5)  # type: ignore[union-attr]
    # "compressed": constrained layout that closes the gaps a square (fixed-aspect) axes leaves.
    fig.set_layout_engine("compressed")  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------- top pairs
def prep_top_pairs(screen: Screen, *, limit: int = TOP_PAIRS) -> pl.DataFrame:
    """The ``limit`` best pairs of the screen (by p, i.e. by score), with the score each rank needs to be
    flagged.

    Columns: ``rank``, ``player_a``, ``player_b``, ``shared_hands``, ``score``, ``p``, ``q``, ``flagged``,
    ``critical`` (:func:`critical_scores` at the rank), ``<signal>_z``, ``<signal>_observed`` and
    ``<signal>_expected`` (counts over the shared hands, both directions) per signal, ``sit_ratio`` and
    ``sit_p`` (sitting together: observed/expected shared hands and its Poisson p), ``evidence`` (hands
    listed for the pair); and for the whole screen: ``n_screened``, ``min_hands``, ``fdr``.
    """
    crit = critical_scores(len(screen.pairs), screen.fdr)
    rows = []
    for k, r in enumerate(screen.pairs[: max(0, limit)], start=1):
        row = {
            "rank": k,
            "player_a": r.players[0],
            "player_b": r.players[1],
            "shared_hands": r.shared_hands,
            "score": r.score,
            "p": r.p,
            "q": r.q,
            "flagged": r.flagged,
            "critical": crit[k - 1],
        }
        for s in SIGNALS:
            row[f"{s}_z"] = r.signals[s]["z"]
            row[f"{s}_observed"] = r.signals[s]["observed"]
            row[f"{s}_expected"] = r.signals[s]["expected"]
        row["sit_ratio"] = r.seating.get("ratio")
        row["sit_p"] = r.seating.get("p")
        row["evidence"] = len(r.evidence)
        rows.append(row)
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "rank": pl.Int64,
        "player_a": pl.String,
        "player_b": pl.String,
        "shared_hands": pl.Int64,
        "score": pl.Float64,
        "p": pl.Float64,
        "q": pl.Float64,
        "flagged": pl.Boolean,
        "critical": pl.Float64,
    }
    for s in SIGNALS:
        schema[f"{s}_z"] = pl.Float64
        schema[f"{s}_observed"] = pl.Float64
        schema[f"{s}_expected"] = pl.Float64
    schema |= {"sit_ratio": pl.Float64, "sit_p": pl.Float64, "evidence": pl.Int64}
    return pl.DataFrame(rows, schema=schema).with_columns(
        pl.lit(len(screen.pairs), dtype=pl.Int64).alias("n_screened"),
        pl.lit(screen.min_hands, dtype=pl.Int64).alias("min_hands"),
        pl.lit(screen.fdr, dtype=pl.Float64).alias("fdr"),
    )


def power_lines(screen: Screen) -> list[str]:
    """The power statement of the screen, a sentence per measured cell after a first line on what "0 flagged"
    means (:func:`pipeline.audit.collusion.power_statement` over the screened pairs' shared hands)."""
    return list(collusion.power_statement([r.shared_hands for r in screen.pairs])["text"])


TOP_PAIRS_LARGE = 50  # rows of the pairs table when the heat map cannot show every player


def pairs_shown(screen: Screen) -> int:
    """Rows of the page's pairs table: :data:`TOP_PAIRS`, or :data:`TOP_PAIRS_LARGE` when the room has more
    players than the heat map shows (the table then carries what the map leaves out), and never fewer than the
    flagged pairs.

    >>> empty = Screen(200, 200, 0.05, pl.DataFrame({"player_a": ["a"], "player_b": ["b"], "shared_hands": [9]}), ())
    >>> pairs_shown(empty)
    15
    """
    players = set(screen.shared["player_a"].to_list()) | set(screen.shared["player_b"].to_list())
    rows = TOP_PAIRS_LARGE if len(players) > MAX_PLAYERS else TOP_PAIRS
    return max(rows, len(screen.flagged))


def plot_top_pairs(df: pl.DataFrame, ax: Axes) -> None:
    f = charts.fonts()
    if not df.height:
        charts.empty(ax, "Top pairs by pair score", "no pair shared enough hands to be screened")
        return
    first = df.row(0, named=True)
    m = first["n_screened"]
    flagged = int(df["flagged"].sum())
    title = (
        f"Top {df.height} of {m:,} screened pairs by pair score, "
        f"n = shared hands (≥ {first['min_hands']:,})\n"
        f"{flagged} flagged at FDR {_fdr_text(first['fdr'])} (Benjamini–Yekutieli)"
    )
    rows = df.reverse()  # best on top
    y = list(range(rows.height))
    labels = [
        f"{f.safe(a)} & {f.safe(b)} (n={n:,})"
        for a, b, n in zip(rows["player_a"], rows["player_b"], rows["shared_hands"], strict=True)
    ]
    colours = [charts.SUBJECT if flag else charts.NEUTRAL for flag in rows["flagged"].to_list()]
    ax.barh(y, rows["score"].to_list(), color=colours, height=0.65)
    for yy, score, p, q in zip(y, rows["score"], rows["p"], rows["q"], strict=True):
        # Right of the bar, or of zero for a negative score: never over the pair's name.
        ax.annotate(
            f"p={p:.1e}, {q_label(q, spaced=False)}",
            (max(score, 0.0), yy),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=7.5,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.6},
        )
    for yy, c in zip(y, rows["critical"].to_list(), strict=True):
        if c is not None:
            ax.plot([c, c], [yy - 0.42, yy + 0.42], color="#111111", linewidth=1.6, solid_capstyle="butt")
    ax.set_yticks(y, labels)
    ax.axvline(0, color="#333333", linewidth=0.8)
    handles = [
        Patch(color=charts.SUBJECT, label="flagged"),
        Patch(color=charts.NEUTRAL, label="not flagged"),
        Line2D([], [], color="#111111", linewidth=1.6, label="score the rank needs to be flagged"),
    ]
    ax.legend(handles=handles, loc="lower right", fontsize=7.5)
    ax.set_title(title, fontsize=10.5)
    ax.set_xlabel("pair score (the four signals' z-scores combined; label: p and q of the pair)")
    ax.grid(axis="y", visible=False)
    values = [*rows["score"].to_list(), *rows["critical"].drop_nulls().to_list(), 0.0]
    low, high = min(values), max(values)
    ax.set_xlim(low - 0.1 * (high - low) - 0.1, high + 0.45 * (high - low) + 0.1)
    ax.margins(y=0.02)


# ---------------------------------------------------------------------------------------------- evidence
def prep_evidence(screen: Screen) -> pl.DataFrame:
    """The hands to replay of every flagged pair, the pairs best first: wins and calls one made on the
    other's tile while both were in, biggest win first.

    Columns: ``rank`` (the pair's rank in the screen), ``player_a``, ``player_b``, ``shared_hands``,
    ``score``, ``q``, ``hand_id``, ``event`` (index in the record, 0-based), ``why``.
    """
    rows = []
    for k, r in enumerate(screen.pairs, start=1):
        if not r.flagged:
            continue
        for e in r.evidence:
            rows.append(
                {
                    "rank": k,
                    "player_a": r.players[0],
                    "player_b": r.players[1],
                    "shared_hands": r.shared_hands,
                    "score": r.score,
                    "q": r.q,
                    "hand_id": e["hand_id"],
                    "event": e["event"],
                    "why": e["why"],
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "rank": pl.Int64,
            "player_a": pl.String,
            "player_b": pl.String,
            "shared_hands": pl.Int64,
            "score": pl.Float64,
            "q": pl.Float64,
            "hand_id": pl.String,
            "event": pl.Int64,
            "why": pl.String,
        },
    )


@dataclass(frozen=True, slots=True)
class SquareChart(ChartSpec):
    """The heat map: square, growing with the players it shows rather than with its rows (pairs)."""

    def size(self, df: pl.DataFrame) -> tuple[float, float]:
        players = int(df["players_shown"][0]) if df.height else 0
        return (8.5, max(6.0, min(10.0, 2.6 + 0.26 * players)))


CHARTS = (
    SquareChart(
        "pair_matrix",
        prep_pair_matrix,
        plot_pair_matrix,
        "Pair score of every pair of players (red: more help to each other than to their other opponents; "
        "blue: less). Framed cells are flagged pairs; grey cells shared too few hands to be screened.",
    ),
    ChartSpec(
        "top_pairs",
        prep_top_pairs,
        plot_top_pairs,
        "The best-scoring pairs; the black tick on each bar is the score its rank needs to be flagged.",
        tall=True,
    ),
)


# ---------------------------------------------------------------------------------------------- teams and victims
def prep_teams(screen: Screen) -> pl.DataFrame:
    """The teams the group screen reports, best first (``rank``: team ``k`` of the page): members, hands with two
    or more of them at one table, score, its z on the empirical null, p, q and each signal's z."""
    rows = [
        {
            "rank": k,
            "players": list(t.players),
            "hands": t.hands,
            "score": t.score,
            "z": t.z,
            "p": t.p,
            "q": t.q,
            **{f"{s}_z": float(t.signals.get(s, {}).get("z", float("nan"))) for s in TEAM_SIGNALS},
        }
        for k, t in enumerate(screen.teams, start=1)
    ]
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "rank": pl.Int64,
        "players": pl.List(pl.String),
        "hands": pl.Int64,
        "score": pl.Float64,
        "z": pl.Float64,
        "p": pl.Float64,
        "q": pl.Float64,
        **{f"{s}_z": pl.Float64 for s in TEAM_SIGNALS},
    }
    return pl.DataFrame(rows, schema=schema)


def prep_team_evidence(con: duckdb.DuckDBPyConnection, screen: Screen) -> pl.DataFrame:
    """Each reported team's hands to replay (wins and calls one member made on another's tile, per pair inside
    it), each with its replay (:func:`~dashboards.replays_of`). Columns: ``rank`` (the team's), ``hand_id``, ``event``,
    ``why``, ``replay``."""
    rows = [
        {
            "rank": k,
            "hand_id": e["hand_id"],
            "event": e["event"],
            "why": e["why"],
        }
        for k, t in enumerate(screen.teams, start=1)
        for e in t.evidence
    ]
    rows = with_replays(con, rows)
    schema = {"rank": pl.Int64, "hand_id": pl.String, "event": pl.Int64, "why": pl.String, "replay": pl.String}
    return pl.DataFrame(rows, schema=schema)


def prep_victims(screen: Screen) -> pl.DataFrame:
    """The victim view's flagged lines, one row each (``rank``: the anchor ``victim-k`` of the page), most
    significant first: ``kind`` "opponent" (``player`` paid ``to`` ``net`` points over ``hands`` shared hands,
    ``excess`` beyond what that opponent takes from the player's other opponents at those tables) or "team"
    (``player`` pays ``with_per_hand`` per hand over ``hands`` hands with two or more of the team ``to`` at the
    table, ``without_per_hand`` over ``without_hands`` with none of it); ``z`` and ``q``."""
    rows: list[dict[str, Any]] = []
    for v in screen.victims:
        for x in v.losses:
            if x.flagged:
                rows.append(
                    {
                        "kind": "opponent",
                        "player": v.player,
                        "to": [x.opponent],
                        "hands": x.hands,
                        "net": x.net,
                        "excess": x.excess,
                        "with_per_hand": None,
                        "without_per_hand": None,
                        "without_hands": None,
                        "z": x.z,
                        "q": x.q,
                    }
                )
        for t in v.teams:
            if t.flagged:
                rows.append(
                    {
                        "kind": "team",
                        "player": v.player,
                        "to": list(t.team),
                        "hands": t.with_hands,
                        "net": None,
                        "excess": None,
                        "with_per_hand": t.with_per_hand,
                        "without_per_hand": t.without_per_hand,
                        "without_hands": t.without_hands,
                        "z": t.z,
                        "q": t.q,
                    }
                )
    rows.sort(key=lambda r: (r["q"], -r["z"], r["player"]))
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "rank": pl.Int64,
        "kind": pl.String,
        "player": pl.String,
        "to": pl.List(pl.String),
        "hands": pl.Int64,
        "net": pl.Int64,
        "excess": pl.Float64,
        "with_per_hand": pl.Float64,
        "without_per_hand": pl.Float64,
        "without_hands": pl.Int64,
        "z": pl.Float64,
        "q": pl.Float64,
    }
    return pl.DataFrame([{"rank": k, **r} for k, r in enumerate(rows, start=1)], schema=schema)
