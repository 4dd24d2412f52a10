"""What needs attention: the report's first screen, one row per finding, most serious first, each with the
page and place that holds its evidence.

The findings come from the screens and the audit the report runs anyway (computed once, passed in):

- **high**: the collusion screen's flagged pairs, and the teams they join (:func:`pipeline.audit.collusion.
  flagged_groups`); the information-cheat screen's flagged players (:mod:`pipeline.audit.information`); the
  stacked-deal screen's groups; the engine-assistance and think-time screens' flagged players, read from the
  counts ``xuezhan review`` stored (:func:`pipeline.audit.tallies.stored_screen`: no hand reviewed here). Each
  is a discovery at the screen's false discovery rate: a lead to replay, not a verdict.
- **medium**: the victim view's players who lose to a player or a team beyond what their play predicts
  (:mod:`pipeline.audit.victims`); the audit's biggest errors by money (:mod:`pipeline.audit.scoring`: scoring
  and settlement errors, the points they move; rule violations, the points settled in their hand), and players
  whose results are far outside the room's range (:func:`prep_unusual_results`).
- **low**: data quality: stored records that are invalid (by code), input lines that were rejected (by code).

Unusual results are defined so that skill is not a finding, nor luck as far as it is measured. Each player's
luck-adjusted net points per hand (the metric ``luck_adjusted_net_per_hand``, schemas/METRICS.md#luck: each
hand's net less the room's mean net of the hands dealt alike, by starting shanten, and less each draw's luck
against the tiles the wall held; a hand whose deal the record does not show, an observer's or a score sheet's,
keeps its raw net) is compared with every *other* player's
(leave one out, so that the player does not pull the reference): their average, and how much players truly
differ beyond chance (the between-player variance ``τ²``, fitted by the method of moments of DerSimonian and
Laird on the others' means and standard errors). The player's result is then
expected within ``μ ± 1.96 √(τ² + se² + se(μ)²)``: the room's spread of players, the player's own sampling
error (``se``, from the per-hand sum of squares) and the reference's. ``z`` is the distance in those units,
``p`` two-sided, ``q`` Benjamini–Yekutieli over the players tested (results in one room are dependent: the
points one wins, others lose). An unusual result is not an accusation: a far better player than the room, a
long run of luck on few hands, or a player who is helped, all look alike here. "The other players" are those of
the player's scale group (:mod:`pipeline.analytics.scales`: a profile and its base), so that a room playing for
1,000 points a base is never the reference of one playing for 1 (a warehouse of one group: every other player).

>>> findings_text(0)
'Nothing needs attention.'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
import polars as pl

from dashboards import as_int
from pipeline.analytics import queries
from pipeline.analytics.levels import NEEDS
from pipeline.analytics.scales import Scales, scales
from pipeline.analytics.stats import by_qvalues, normal_sf
from pipeline.audit.anticipation import Seer
from pipeline.audit.cases import LISTED, Case, with_status
from pipeline.audit.collusion import PairResult, flagged_groups
from pipeline.audit.deals import DealResult
from pipeline.audit.scoring import Audit
from pipeline.audit.tallies import StoredScreen, stored_screen
from pipeline.audit.teams import TeamResult

# The pages the findings link to (dashboards.site writes them under these names).
INDEX = "index.html"
PLAYERS = "players.html"
QUALITY = "quality.html"
AUDIT = "audit.html"
COLLUSION = "collusion.html"
INFORMATION = "information.html"
DEALS = "deals.html"
HEALTH = "health.html"
FINDINGS_JSON = "findings.json"  # the first screen's frame, beside index.html

TOP_ERRORS = 5  # scoring errors listed one by one on the first screen
AUDIT_ROWS = 30  # rows of the audit page's table, each with an anchor finding-<rank>
MIN_HANDS = 100  # a player with fewer replayed hands is not tested for an unusual result
FDR = 0.05
Z95 = 1.959963984540054

SEVERITIES = ("high", "medium", "low")
KINDS = {  # kind → (severity, order within the severity, what the kind is called on the page)
    "team": ("high", 0, "team"),
    "pair": ("high", 1, "colluding pair?"),
    "information": ("high", 2, "sees other hands?"),
    "deals": ("high", 3, "stacked deals?"),
    "assist": ("high", 4, "follows an engine?"),
    "think": ("high", 5, "relays or asks a bot?"),
    "scoring": ("medium", 6, "scoring error"),
    "victim": ("medium", 7, "loses to a player or team"),
    "results": ("medium", 8, "unusual result"),
    "invalid": ("low", 9, "invalid records"),
    "rejects": ("low", 10, "rejected lines"),
}

SCHEMA: dict[str, Any] = {
    "rank": pl.Int64,
    "severity": pl.String,
    "kind": pl.String,
    "label": pl.String,  # the kind as the page names it
    "players": pl.List(pl.String),
    "subject": pl.String,
    "detail": pl.String,
    "money": pl.Int64,
    "base": pl.Int64,  # the base (底) of the money's hands (null: none, or several): ranked by money ÷ base
    "q": pl.Float64,
    "evidence": pl.String,  # a file of the report with an anchor: where the evidence is
    "evidence_text": pl.String,
    "key": pl.String,  # the finding's stable name (kind:subject): what a case is opened on (pipeline.audit.cases)
    "n": pl.Int64,  # the size of its evidence: shared hands, judged decisions, dealt hands (null: none)
    "hands": pl.List(pl.String),  # hands to replay (a case's evidence pack), where the finding names them
}


# The known findings' standings against their cases (pipeline.audit.cases.status), in the order they are listed
# (cases.LISTED: the new ones before them, the dismissed ones hidden).
STATES = tuple(s for s in LISTED if s not in ("new", "dismissed"))
STATE_SCHEMA: dict[str, Any] = {"status": pl.String, "why": pl.String, "case_id": pl.String}


def with_cases(found: pl.DataFrame, cases: Mapping[str, Case]) -> pl.DataFrame:
    """``found`` (:func:`prep_findings`) with each finding's standing against the warehouse's ``cases``
    (:func:`pipeline.audit.cases.read_cases`), as ``xuezhan findings`` lists it (:func:`pipeline.audit.cases.
    with_status`: one rule): ``status`` (new, open, confirmed, appealed, reopened, dismissed), ``why`` (a reopened
    finding's reason), ``case_id``."""
    rows = with_status(found.iter_rows(named=True), cases)
    return pl.DataFrame(rows, schema={**found.schema, **STATE_SCHEMA})


def findings_text(n: int) -> str:
    """The first line of the findings section."""
    if not n:
        return "Nothing needs attention."
    return f"{n:,} finding{'s' if n != 1 else ''} need{'s' if n == 1 else ''} attention."


# ---------------------------------------------------------------------------------------------- unusual results
_UNUSUAL_SCHEMA: dict[str, Any] = {
    "player": pl.String,
    "group": pl.String,
    "hands": pl.Int64,
    "net": pl.Int64,  # raw net points over the hands
    "per_hand": pl.Float64,  # what is tested: the luck-adjusted net per hand where the base has it, else the raw
    "raw_per_hand": pl.Float64,
    "adjusted": pl.Int64,  # hands whose deal is known (their net luck-adjusted); 0: raw nets only
    "se": pl.Float64,
    "expected": pl.Float64,
    "spread": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
    "z": pl.Float64,
    "p": pl.Float64,
    "q": pl.Float64,
    "tested": pl.Boolean,
    "flagged": pl.Boolean,
}


def random_effects(means: np.ndarray, variances: np.ndarray) -> tuple[float, float, float]:
    """DerSimonian–Laird: ``(μ, τ², var(μ))`` of players' mean results ``means`` with sampling variances
    ``variances``: ``τ²`` the variance of the players' true means beyond chance (method of moments, at least 0),
    ``μ`` their random-effects average.

    >>> random_effects(np.array([-3.0, -1.0, 1.0, 3.0]), np.ones(4))  # Q = 20 on 3 df: τ² = 17/3, var(μ) = (1 + τ²)/4
    (0.0, 5.666666666666667, 1.6666666666666667)
    """
    w = 1.0 / variances
    fixed = float(np.sum(w * means) / np.sum(w))
    q = float(np.sum(w * (means - fixed) ** 2))
    scale = float(np.sum(w) - np.sum(w**2) / np.sum(w))
    tau2 = max(0.0, (q - (len(means) - 1)) / scale) if scale > 0 else 0.0
    w_star = 1.0 / (variances + tau2)
    return float(np.sum(w_star * means) / np.sum(w_star)), tau2, float(1.0 / np.sum(w_star))


def prep_unusual_results(base: pl.DataFrame, *, min_hands: int = MIN_HANDS, fdr: float = FDR) -> pl.DataFrame:
    """Each player's net points per hand against the range the other players give (module docstring).

    ``base``: one row per player with ``player``, ``hands``, ``delta_sum``, ``delta_sq`` (the ``player_base``
    counts over the hands whose level carries the net points), optionally ``luck_net_sum``, ``luck_net_sq`` and
    ``deal_shanten_n`` (the luck-adjusted nets, tested instead of the raw ones, and the hands with a known deal),
    and the player's scale ``group``
    (:meth:`pipeline.analytics.scales.Scales.with_group`; without the column, every player is of one group).
    Each player is compared with the other tested players of their group only. Players with fewer than
    ``min_hands`` hands, or whose deltas never varied, are listed but not tested; a test needs three other tested
    players of the group.

    Columns: ``player``, ``group``, ``hands``, ``net`` (raw), ``per_hand`` (the net tested: luck-adjusted where
    the base has it), ``raw_per_hand``, ``adjusted`` (hands luck-adjusted), ``se`` (of the per-hand mean), ``expected``
    (μ of the others), ``spread`` (√τ² of the others), ``low``/``high`` (the 95% range the player's per-hand
    result is expected in), ``z``, ``p`` (two-sided), ``q`` (Benjamini–Yekutieli over every player tested, of
    every group), ``tested``, ``flagged`` (``q ≤ fdr``); flagged first, then by p, then by player.
    """
    players = base["player"].to_list()
    groups = base["group"].to_list() if "group" in base.columns else [None] * len(players)
    known = {g: k for k, g in enumerate(dict.fromkeys(groups))}
    codes = np.array([known[g] for g in groups], dtype=np.int64)
    n = base["hands"].cast(pl.Float64).fill_null(0).to_numpy()
    raw = base["delta_sum"].cast(pl.Float64).fill_null(0).to_numpy()
    luck = "luck_net_sum" in base.columns
    tested_net = "luck_net_sum" if luck else "delta_sum"
    total = base[tested_net].cast(pl.Float64).fill_null(0).to_numpy()
    squares = base[tested_net[:-4] + "_sq"].cast(pl.Float64).fill_null(0).to_numpy()
    adjusted = base["deal_shanten_n"].fill_null(0).to_list() if luck and "deal_shanten_n" in base.columns else None
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
        raw_mean = np.where(n > 0, raw / np.maximum(n, 1), np.nan)
        var = np.where(n > 1, (squares - n * mean**2) / np.maximum(n - 1, 1), np.nan)
        v = var / n  # the variance of the player's per-hand mean
    tested = (n >= max(min_hands, 2)) & (v > 0)
    rows = []
    for i, pid in enumerate(players):
        others = tested & (codes == codes[i])  # the other players of the group
        others[i] = False
        row: dict[str, Any] = {
            "player": pid,
            "group": groups[i],
            "hands": int(n[i]),
            "net": int(raw[i]),
            "per_hand": None if math.isnan(mean[i]) else float(mean[i]),
            "raw_per_hand": None if math.isnan(raw_mean[i]) else float(raw_mean[i]),
            "adjusted": int(adjusted[i]) if adjusted is not None else 0,
            "se": float(math.sqrt(v[i])) if v[i] > 0 else None,
            "tested": False,
        }
        if tested[i] and others.sum() >= 3:
            mu, tau2, var_mu = random_effects(mean[others], v[others])
            scale = math.sqrt(tau2 + float(v[i]) + var_mu)
            z = (float(mean[i]) - mu) / scale
            row |= {
                "expected": mu,
                "spread": math.sqrt(tau2),
                "low": mu - Z95 * scale,
                "high": mu + Z95 * scale,
                "z": z,
                "p": min(1.0, 2.0 * normal_sf(abs(z))),
                "tested": True,
            }
        rows.append(row)
    df = pl.DataFrame(rows, schema={k: t for k, t in _UNUSUAL_SCHEMA.items() if k not in ("q", "flagged")})
    p = df["p"].to_numpy()
    q = np.full(len(p), np.nan)
    mask = df["tested"].to_numpy()
    if mask.any():
        q[mask] = by_qvalues(p[mask].astype(float))
    df = df.with_columns(pl.Series("q", q, dtype=pl.Float64).fill_nan(None))
    df = df.with_columns((pl.col("q") <= fdr).fill_null(False).alias("flagged"))
    return (
        df.select(list(_UNUSUAL_SCHEMA))
        .sort(["flagged", "p", "player"], descending=[True, False, False], nulls_last=True)
        .with_columns(pl.lit(min_hands, dtype=pl.Int64).alias("min_hands"), pl.lit(fdr).alias("fdr"))
    )


def unusual_of(con: duckdb.DuckDBPyConnection, scale: Scales | None = None) -> pl.DataFrame:
    """:func:`prep_unusual_results` of the warehouse behind ``con``: every player's luck-adjusted net points
    (raw where the deal is not known) over the hands whose level carries the net, each beside the players of
    their scale group (``scale``: the warehouse's :class:`~pipeline.analytics.scales.Scales`, default read from
    ``con``)."""
    net = queries.fold(queries.player_base_levels(con), NEEDS["net_points_per_hand"])
    return prep_unusual_results((scale if scale is not None else scales(con)).with_group(net))


# ---------------------------------------------------------------------------------------------- findings
def _hands_of(evidence: Iterable[dict[str, Any]]) -> list[str]:
    """The hands of a screen's evidence rows, once each, in its order."""
    return list(dict.fromkeys(str(e["hand_id"]) for e in evidence if e.get("hand_id") is not None))


def _q(q: float | None) -> str:
    return "–" if q is None else ("< 0.001" if q < 0.0005 else f"{q:.3f}")


def _pairs(pairs: Sequence[PairResult], fdr: float) -> list[dict[str, Any]]:
    rows = []
    for rank, r in enumerate(pairs, start=1):
        if not r.flagged:
            continue
        a, b = r.players
        rows.append(
            {
                "kind": "pair",
                "key": f"pair:{'+'.join(sorted((a, b)))}",
                "n": r.shared_hands,
                "hands": _hands_of(r.evidence),
                "players": [a, b],
                "subject": f"{a} & {b}",
                "detail": (
                    f"the collusion screen flags the pair over {r.shared_hands:,} shared hands: score {r.score:.1f}, "
                    f"q {_q(r.q)} (false discovery rate {100 * fdr:g}%)"
                ),
                "q": r.q,
                "evidence": f"{COLLUSION}#pair-{rank}",
                "evidence_text": f"pair #{rank}: signals and hands to replay",
            }
        )
    return rows


def _group_teams(teams: Sequence[TeamResult]) -> list[dict[str, Any]]:
    """The teams the group screen reports (three players or more), team ``k`` of the collusion page."""
    rows = []
    for k, t in enumerate((t for t in teams if t.reported and len(t.players) >= 3), start=1):
        rows.append(
            {
                "kind": "team",
                "key": f"team:{'+'.join(sorted(t.players))}",
                "n": t.hands,
                "hands": _hands_of(t.evidence),
                "players": list(t.players),
                "subject": ", ".join(t.players),
                "detail": (
                    f"the group screen reports {len(t.players)} players as a team over {t.hands:,} hands with two or "
                    f"more of them at one table: score {t.score:.1f}, q {_q(t.q)}"
                ),
                "q": t.q,
                "evidence": f"{COLLUSION}#team-{k}",
                "evidence_text": f"team #{k}: signals and hands to replay",
            }
        )
    return rows


def _victims(victims: pl.DataFrame) -> list[dict[str, Any]]:
    """The victim view's flagged lines (:func:`dashboards.collusion.prep_victims`), line ``k`` anchored
    ``victim-k`` on the collusion page."""
    rows = []
    for r in victims.iter_rows(named=True):
        if r["kind"] == "team":
            detail = (
                f"pays {r['with_per_hand']:+.1f} points a hand with two or more of the team at the table "
                f"({r['hands']:,} hands), {r['without_per_hand']:+.1f} with none of it"
            )
        else:
            detail = (
                f"paid {r['net']:+,} points over {r['hands']:,} shared hands, {r['excess']:+,.0f} beyond what that "
                "opponent takes from the others at those tables"
            )
        rows.append(
            {
                "kind": "victim",
                "key": f"victim:{r['player']}>{'+'.join(sorted(r['to']))}",
                "n": r["hands"],
                "players": [r["player"], *r["to"]],
                "subject": f"{r['player']} loses to {', '.join(r['to'])}",
                "detail": f"{detail}: z {r['z']:.1f}, q {_q(r['q'])}",
                "q": r["q"],
                "evidence": f"{COLLUSION}#victim-{r['rank']}",
                "evidence_text": f"victim line #{r['rank']} of the collusion page",
            }
        )
    return rows


def _teams(pairs: Sequence[PairResult]) -> list[dict[str, Any]]:
    rows = []
    for k, g in enumerate(flagged_groups(pairs), start=1):
        rows.append(
            {
                "kind": "team",
                "key": f"team:{'+'.join(sorted(g.players))}",
                "players": list(g.players),
                "subject": ", ".join(g.players),
                "detail": (
                    f"{len(g.players)} players joined by {g.flagged_pairs} of their {g.pairs} pairs flagged by the "
                    "collusion screen: a team, not only a pair"
                ),
                "q": min((r.q for r in pairs if r.flagged and set(r.players) <= set(g.players)), default=None),
                "evidence": f"{COLLUSION}#team-{k}",
                "evidence_text": f"team #{k} and its pairs",
            }
        )
    return rows


def _information(info: Sequence[Seer], fdr: float) -> list[dict[str, Any]]:
    """The information screen's flagged players (both signals, :func:`dashboards.information.screen`), each with
    the signals that flag it."""
    rows = []
    for rank, s in enumerate(info, start=1):
        if not s.flagged:
            continue
        parts, qs = [], []
        d, a = s.dodges, s.anticipation
        if d is not None and "dodges" in s.signals:
            expected = "–" if d.expected is None else f"{d.expected:,.1f}"
            parts.append(
                f"{d.dangerous_by_choice:,} dangerous discards by choice in {d.discards:,} judged, {expected} "
                f"expected from the other players: p {d.p:.1e}, q {_q(s.q_dodges)}"
            )
            qs.append(s.q_dodges)
        if a is not None and "anticipation" in s.signals:
            expected = "–" if a.expected is None else f"{a.expected:,.1f}"
            parts.append(
                f"waited on the tiles the wall held in {a.hits:,} of {a.decisions:,} judged waits, {expected} "
                f"expected from the other players: p {a.p:.1e}, q {_q(s.q_anticipation)}"
            )
            qs.append(s.q_anticipation)
        rows.append(
            {
                "kind": "information",
                "key": f"information:{s.player}",
                "n": (d.discards if d is not None else 0) + (a.decisions if a is not None else 0),
                "players": [s.player],
                "subject": s.player,
                "detail": "; ".join(parts) + f" (false discovery rate {100 * fdr:g}% over both signals)",
                "q": min(q for q in qs if q is not None),
                "evidence": f"{INFORMATION}#info-{rank}-hands",
                "evidence_text": f"player #{rank} of the information-cheat screen: hands to replay",
            }
        )
    return rows


def _deals(deals: Sequence[DealResult], fdr: float) -> list[dict[str, Any]]:
    rows = []
    for rank, r in enumerate((r for r in deals if r.flagged), start=1):
        rows.append(
            {
                "kind": "deals",
                "key": f"deals:{r.kind}:{r.group}",
                "n": r.hands,
                "hands": _hands_of(r.evidence),
                "players": [r.group] if r.kind == "player" else [],
                "subject": f"{r.kind} {r.group}",
                "detail": (
                    f"dealt {r.mean:.2f} steps from ready on average over {r.hands:,} hands, fair deals "
                    f"{r.expected / r.hands:.2f}: z {r.z:+.1f}, q {_q(r.q)} (false discovery rate {100 * fdr:g}%)"
                ),
                "q": r.q,
                "evidence": f"{DEALS}#deal-{rank}",
                "evidence_text": f"flagged group #{rank} of the stacked-deal screen, its best deals replayed",
            }
        )
    return rows


def _scoring(result: Audit, top: int) -> list[dict[str, Any]]:
    f = result.findings.with_row_index("audit_rank", offset=1)
    errors = f.filter(pl.col("severity") == "error").head(max(0, top))
    rows = []
    for r in errors.iter_rows(named=True):
        where = f" at event {r['event']}" if r["event"] is not None else ""
        seat = f" ({r['player']}'s seat)" if r["player"] is not None else ""
        rank = int(r["audit_rank"])
        money_code = r["code"].startswith(("SCORE_", "SETTLE_"))
        rows.append(
            {
                "kind": "scoring",
                "key": f"scoring:{r['hand_id']}:{r['code']}" + (f":{r['event']}" if r["event"] is not None else ""),
                "hands": [r["hand_id"]],
                "label": "scoring error" if money_code else "rule violation",
                "players": [r["player"]] if r["player"] is not None else [],
                "subject": f"hand {r['hand_id']}",
                "detail": f"{r['code']}{where}{seat}: {r['message']}",
                "money": int(r["money"]),
                "base": int(r["base"]),
                "evidence": f"{AUDIT}#finding-{rank}" if rank <= AUDIT_ROWS else AUDIT,
                "evidence_text": f"finding #{rank} of the audit" if rank <= AUDIT_ROWS else "the audit",
            }
        )
    return rows


def others_of(group: str | None, mixed: bool) -> str:
    """Whom a player of scale ``group`` was compared with, in words: ``the other players``, or where the players
    are of several groups (``mixed``), ``the other players of GROUP``.

    >>> others_of("chengdu", False), others_of("majsoul (base 1,000)", True)
    ('the other players', 'the other players of majsoul (base 1,000)')
    """
    return f"the other players of {group}" if mixed and group is not None else "the other players"


def net_words(row: Mapping[str, Any]) -> str:
    """What an unusual-result row's ``per_hand`` is, in words: the luck-adjusted net (and the raw beside it)
    where some of the player's hands were adjusted, else the raw net.

    >>> net_words({"adjusted": 0}), net_words({"adjusted": 300, "hands": 300, "raw_per_hand": 2.5})
    ('net', 'luck-adjusted net (raw +2.50)')
    >>> net_words({"adjusted": 100, "hands": 300, "raw_per_hand": -1.0})
    'luck-adjusted net (raw -1.00; 100 of the hands adjusted)'
    """
    if not row.get("adjusted"):
        return "net"
    part = "" if row["adjusted"] == row["hands"] else f"; {row['adjusted']:,} of the hands adjusted"
    return f"luck-adjusted net (raw {row['raw_per_hand']:+.2f}{part})"


def _on_page(page: str | None, section: str) -> dict[str, str]:
    """A player finding's evidence: the ``section`` of its page, or the directory where it has no page."""
    if not page:
        return {"evidence": PLAYERS, "evidence_text": "the player directory"}
    return {"evidence": f"{page}#{section}", "evidence_text": f"the player's {section}"}


def _assist(screen: StoredScreen | None, page_of: Callable[[str], str | None]) -> list[dict[str, Any]]:
    """The engine-assistance screen's flagged players (of the hands ``xuezhan review`` stored), each with its
    figures, its most telling decisions' hands (a case's pack replays them) and its page's decisions."""
    if screen is None:
        return []
    rows = []
    part = (
        f"; {screen.reviewed:,} of the {screen.reviewable:,} reviewable hands reviewed (xuezhan review)"
        if screen.reviewed < screen.reviewable
        else ""
    )
    for a in screen.results:
        if not a.flagged or a.agreement is None or a.expected is None or a.p is None:
            continue
        page = page_of(a.player)
        clear = "–" if a.clear is None else f"{a.clear:.3f}"
        told = ", ".join(f"{e.hand_id} ({e.chosen})" for e in a.evidence[:3])
        rows.append(
            {
                "kind": "assist",
                "key": f"assist:{a.player}",
                "n": a.tested,
                "hands": list(dict.fromkeys(e.hand_id for e in a.evidence)),
                "players": [a.player],
                "subject": a.player,
                "detail": (
                    f"agreed with the reference policy on {a.agreement:.3f} of its weighted ambiguous decisions "
                    f"({a.tested:,} in {a.hands:,} hands) where the room's players of its skill (clear decisions "
                    f"{clear}) agree on {a.expected:.3f}: z {a.z or 0.0:.1f}, p {a.p:.1e}, q {_q(a.q)} (false "
                    f"discovery rate {100 * screen.fdr:g}%){part}; most telling: {told or '–'} (xuezhan replay HAND "
                    "--review); a reason to look, not proof"
                ),
                "q": a.q,
                **_on_page(page, "decisions"),
            }
        )
    return rows


def reach_text(screen: StoredScreen | None) -> str | None:
    """What the decision screens can see in this room (:attr:`StoredScreen.reach`, ``think_reach``), in one
    paragraph for the findings and the report's first screen; None where neither tested anybody. No flag from them
    is no evidence at this reach: the sentence says so.

    >>> from pipeline.audit.assist import Reach
    >>> from pipeline.audit.think import Reach as ThinkReach
    >>> screen = StoredScreen([], 0.05, 900, 1000, reach=Reach(8, 0.041, 0.03, 0.06, {"a": 0.4, "b": 0.6, "c": None}))
    >>> print(reach_text(screen))  # doctest: +NORMALIZE_WHITESPACE
    What the decision screens can see here (of the 900 reviewed hands): engine assistance flags a player alone at
    an agreement 0.041 above the one expected of its skill (the median of the 8 tested), and a player taking the
    reference policy's own first choice on 60% of its decisions (the median of 3 probed); an engine of its own
    gains less on each decision. No flag is no evidence at this reach, not a clean room (xuezhan assist).
    >>> print(reach_text(StoredScreen([], 0.05, 900, 1000, reach=Reach(9000, 0.01, 0.008, 0.02))))
    ... # doctest: +NORMALIZE_WHITESPACE
    What the decision screens can see here (of the 900 reviewed hands): engine assistance flags a player alone at
    an agreement 0.010 above the one expected of its skill (the median of the 9,000 tested; in a room this large
    the share of its decisions a follower would need is left to xuezhan assist). No flag is no evidence at this
    reach, not a clean room (xuezhan assist).
    >>> print(reach_text(StoredScreen([], 0.05, 0, 0, think_reach=ThinkReach(7, -0.05, -0.2, 0.1))))
    ... # doctest: +NORMALIZE_WHITESPACE
    What the decision screens can see here: think time flags a player whose times follow the decisions'
    difficulty at r -0.05 or less (the median of the 7 tested): not a relay, whose times follow it not at all (r
    near 0). No flag is no evidence at this reach, not a clean room (xuezhan think-time).
    >>> print(reach_text(StoredScreen([], 0.05, 0, 0, think_reach=ThinkReach(9, 0.2, 0.1, 0.3, 0.81, 0.4))))
    ... # doctest: +NORMALIZE_WHITESPACE
    What the decision screens can see here: think time flags a player whose times follow the decisions'
    difficulty at r 0.20 or less (the median of the 9 tested): a relay, whose times follow it not at all (r near
    0), among them, and a player asking a bot on 81% of its decisions or more (chosen without regard to their
    difficulty) however long the asking takes. No flag is no evidence at this reach, not a clean room (xuezhan
    think-time).
    """
    if screen is None or (screen.reach is None and screen.think_reach is None):
        return None
    parts = []
    commands = []
    seen = screen.reach
    if seen is not None and seen.needed_median is not None:
        share = seen.share_median
        taking = (
            f"a player taking the reference policy's own first choice on {100 * share:.0f}% of its decisions"
            if share is not None
            else "not even a player taking the reference policy's own first choice on every decision"
        )
        probed = (
            f"), and {taking} (the median of {len(seen.shares)} probed); an engine of its own gains less on each "
            "decision"
            if seen.shares
            else "; in a room this large the share of its decisions a follower would need is left to xuezhan assist)"
        )
        parts.append(
            f"engine assistance flags a player alone at an agreement {seen.needed_median:.3f} above the one expected "
            f"of its skill (the median of the {seen.tested:,} tested{probed}"
        )
        commands.append("xuezhan assist")
    times = screen.think_reach
    if times is not None and times.flag_r_median is not None:
        relay = (
            "a relay, whose times follow it not at all (r near 0), among them"
            if times.flags_relay
            else "not a relay, whose times follow it not at all (r near 0)"
        )
        asking = (
            f", and a player asking a bot on {100 * times.ask_share_median:.0f}% of its decisions or more (chosen "
            "without regard to their difficulty) however long the asking takes"
            if times.ask_share_median is not None
            else ""
        )
        parts.append(
            f"think time flags a player whose times follow the decisions' difficulty at r {times.flag_r_median:.2f} "
            f"or less (the median of the {times.tested:,} tested): {relay}{asking}"
        )
        commands.append("xuezhan think-time")
    of = f" (of the {screen.reviewed:,} reviewed hands)" if seen is not None else ""
    return (
        f"What the decision screens can see here{of}: "
        + "; ".join(parts)
        + f". No flag is no evidence at this reach, not a clean room ({', '.join(commands)})."
    )


def _think(screen: StoredScreen | None, page_of: Callable[[str], str | None]) -> list[dict[str, Any]]:
    """The think-time screen's flagged players (of the timed hands ``xuezhan review`` stored), each with its
    figures and its page."""
    if screen is None:
        return []
    part = (
        f"; {screen.timed:,} of the {screen.timed_all:,} hands with times reviewed (xuezhan review)"
        if screen.timed < screen.timed_all
        else ""
    )
    rows = []
    for t in screen.think:
        if not t.flagged or t.r is None or t.room_r is None or t.p is None:
            continue
        page = page_of(t.player)
        rows.append(
            {
                "kind": "think",
                "key": f"think:{t.player}",
                "n": t.decisions,
                "players": [t.player],
                "subject": t.player,
                "detail": (
                    f"its think times follow the decisions' difficulty at r {t.r:.2f} over {t.decisions:,} timed "
                    f"decisions (median {t.median_ms:,.0f} ms), where the room's players do at {t.room_r:.2f}: z "
                    f"{t.z or 0.0:.1f}, p {t.p:.1e}, q {_q(t.q)} (false discovery rate {100 * screen.fdr:g}%){part}; "
                    "a relay of a bot's moves looks so, and a player who asks an engine on part of its decisions "
                    "(each asked in the time it takes, however hard), and so do an even-paced player, auto-play or a "
                    "slow connection: a reason to look, not proof (xuezhan think-time)"
                ),
                "q": t.q,
                **_on_page(page, "decisions"),
            }
        )
    return rows


def _results(unusual: pl.DataFrame, page_of: Callable[[str], str | None]) -> list[dict[str, Any]]:
    rows = []
    mixed = "group" in unusual.columns and unusual["group"].drop_nulls().n_unique() > 1
    for r in unusual.filter(pl.col("flagged")).iter_rows(named=True):
        page = page_of(r["player"])
        rows.append(
            {
                "kind": "results",
                "key": f"results:{r['player']}",
                "n": r["hands"],
                "players": [r["player"]],
                "subject": r["player"],
                "detail": (
                    f"{net_words(r)} {r['per_hand']:+.2f} points per hand over {r['hands']:,} hands, outside the "
                    f"{r['low']:+.2f} to {r['high']:+.2f} range {others_of(r.get('group'), mixed)} give "
                    f"(z {r['z']:+.1f}, q {_q(r['q'])}); unusual, not an accusation"
                ),
                "q": r["q"],
                **_on_page(page, "results"),
            }
        )
    return rows


def _codes(df: pl.DataFrame, count: str, limit: int = 4) -> str:
    parts = [f"{c} {n:,}" for c, n in df.select("code", count).head(limit).iter_rows()]
    more = df.height - limit
    return ", ".join(parts) + (f" and {more} more code{'s' if more > 1 else ''}" if more > 0 else "")


def _quality(counts: dict[str, int], issues: pl.DataFrame, rejects: pl.DataFrame) -> list[dict[str, Any]]:
    rows = []
    stored, valid, replayed = counts["hands"], counts["valid_hands"], counts["replayed_hands"]
    invalid = stored - valid
    if invalid > 0:
        errors = issues.filter(pl.col("severity") == "error")
        stopped = stored - replayed
        left_out = f"; {stopped:,} stopped before the end and are left out of the statistics" if stopped > 0 else ""
        rows.append(
            {
                "kind": "invalid",
                "key": "invalid:records",
                "n": invalid,
                "players": [],
                "subject": f"{invalid:,} of {stored:,} stored records",
                "detail": (
                    f"invalid ({100 * invalid / stored:.1f}%){left_out}. Errors by code: {_codes(errors, 'issues')}"
                ),
                "evidence": f"{QUALITY}#issues",
                "evidence_text": "issues by code",
            }
        )
    rejected = as_int(rejects["rejects"].sum()) if rejects.height else 0
    if rejected > 0:
        rows.append(
            {
                "kind": "rejects",
                "key": "rejects:lines",
                "n": rejected,
                "players": [],
                "subject": f"{rejected:,} input line{'s' if rejected > 1 else ''}",
                "detail": f"not stored: no readable xzlog/1 record, or a conflicting hand_id. By code: "
                f"{_codes(rejects, 'rejects')}",
                "evidence": f"{QUALITY}#rejects",
                "evidence_text": "rejects by code",
            }
        )
    return rows


def _frame(rows: Iterable[dict[str, Any]]) -> pl.DataFrame:
    def key(r: dict[str, Any]) -> tuple[int, float, float, str]:
        order = KINDS[r["kind"]][1]
        if r.get("money") is None:
            return (order, r.get("q") or 0.0, 0.0, r["subject"])
        # money in bases where the hands' bases differ (a majsoul room beside base-1 rooms), then in points
        return (order, -float(r["money"]) / (r.get("base") or 1), -float(r["money"]), r["subject"])

    ordered = sorted(rows, key=key)
    full = [
        {
            "rank": k,
            "severity": KINDS[r["kind"]][0],
            "label": KINDS[r["kind"]][2],  # unless the row names itself (a rule violation among the audit's)
            "money": None,
            "base": None,
            "q": None,
            "n": None,
            "hands": [],
            **r,
        }
        for k, r in enumerate(ordered, start=1)
    ]
    return pl.DataFrame(full, schema=SCHEMA)


def prep_findings(
    *,
    pairs: Sequence[PairResult],
    pair_fdr: float,
    teams: Sequence[TeamResult] | None = None,
    victims: pl.DataFrame | None = None,
    info: Sequence[Seer],
    info_fdr: float,
    deals: Sequence[DealResult] = (),
    deals_fdr: float = 0.05,
    assist: StoredScreen | None = None,
    audit: Audit,
    counts: dict[str, int],
    issues: pl.DataFrame,
    rejects: pl.DataFrame,
    unusual: pl.DataFrame,
    page_of: Callable[[str], str | None],
    top_errors: int = TOP_ERRORS,
) -> pl.DataFrame:
    """Every finding of the first screen, most serious first (severity, then kind in the order of
    :data:`KINDS`, then most money or smallest q), one row each.

    ``pairs``: the collusion screen's results, best first (rank k has the anchor ``pair-k`` on the collusion
    page); ``teams``: the group screen's results (:mod:`pipeline.audit.teams`; its reported teams of three or more,
    ``team-k``; None: the teams the flagged pairs join instead); ``victims``: :func:`dashboards.collusion.
    prep_victims` (``victim-k``); ``info``: the information-cheat screen's, in its order (``info-k``);
    ``deals``: the stacked-deal screen's, in its order (the k-th flagged group has the anchor ``deal-k`` on the
    deals page); ``assist``: the decision screens of the stored review counts
    (:func:`pipeline.audit.tallies.stored_screen`: the engine-assistance and think-time screens' flagged players,
    each linked to its page's decisions; None: not run); ``audit``: the audit (``finding-k`` for its first
    :data:`AUDIT_ROWS` rows); ``counts``: the ``warehouse_counts`` row (``hands``, ``valid_hands``,
    ``replayed_hands``); ``issues`` and ``rejects``: :func:`dashboards.quality.prep_issues_by_code` and
    ``prep_rejects_by_code``; ``unusual``: :func:`prep_unusual_results`; ``page_of``: the page of a player
    (None: the player has none).

    Columns: ``rank``, ``severity`` (high, medium, low), ``kind`` (a key of :data:`KINDS`), ``label``,
    ``players`` (whom it concerns), ``subject``, ``detail``, ``money`` (scoring errors), ``q`` (the screens'),
    ``evidence`` (page and anchor), ``evidence_text``.
    """
    rows = [
        *(_teams(pairs) if teams is None else _group_teams(teams)),
        *_pairs(pairs, pair_fdr),
        *([] if victims is None else _victims(victims)),
        *_information(info, info_fdr),
        *_deals(deals, deals_fdr),
        *_assist(assist, page_of),
        *_think(assist, page_of),
        *_scoring(audit, top_errors),
        *_results(unusual, page_of),
        *_quality(counts, issues, rejects),
    ]
    return _frame(rows)


def prep_player_findings(findings: pl.DataFrame, audit_of_player: pl.DataFrame, player: str) -> pl.DataFrame:
    """One player's findings, for the top of their page: the first screen's rows that concern the player
    (pairs, teams, the information screen, an unusual result; scoring errors are counted whole below) and one
    row for all the audit findings on the player's seat (``audit_of_player``: those rows of the audit), whose
    evidence is the page's own table (``#scoring``). Same columns as :func:`prep_findings`, ranked anew."""
    mine = (  # most players have none: an empty frame skips the filter (a page among thousands)
        findings.filter(pl.col("players").list.contains(player) & (pl.col("kind") != "scoring"))
        if findings.height
        else findings
    )
    rows = [{k: v for k, v in r.items() if k not in ("rank", "severity", "label")} for r in mine.to_dicts()]
    if audit_of_player.height:
        errors = int((audit_of_player["severity"] == "error").sum())
        money = as_int(audit_of_player["money"].sum())
        hands = audit_of_player["hand_id"].n_unique()
        seat = Audit(audit_of_player)
        rows.append(
            {
                "kind": "scoring",
                "label": "audit findings",
                "players": [player],
                "subject": f"{audit_of_player.height:,} audit finding{'s' if audit_of_player.height > 1 else ''}",
                "detail": (
                    f"on the player's seat in {hands:,} hand{'s' if hands > 1 else ''} ({errors:,} errors), "
                    f"{seat.stake_text()}"
                ),
                "money": money,
                "base": None if seat.mixed else next(iter(seat.bases), None),
                "evidence": "#scoring",
                "evidence_text": "the findings below",
            }
        )
    return _frame(rows)


def severity_of(findings: pl.DataFrame) -> str | None:
    """The most serious severity among ``findings``; None when there is none."""
    shown = set(findings["severity"].to_list())
    return next((s for s in SEVERITIES if s in shown), None)


def prep_player_flags(standing: pl.DataFrame, audit: Audit, unusual: pl.DataFrame) -> pl.DataFrame:
    """Per player, what the directory shows of the findings ``standing`` (:func:`with_cases`: a dismissed
    finding is not shown, as on the first screen): one row for every player of ``unusual`` (every player with a
    replayed hand).

    Columns: ``player``, ``flags`` (the labels of the first screen's findings about the player, most serious
    first, each once), ``severity`` (the most serious, null for none), ``rank`` (3 high, 2 medium, 1 low, 0
    none: a sort key), ``audit_findings`` and ``audit_money`` (findings on the player's seat and their
    points), ``z`` and ``q`` (the unusual-result test; null when not tested).
    """
    shown = standing.filter(pl.col("status") != "dismissed")
    concerned = shown.filter(pl.col("kind") != "scoring").explode("players").drop_nulls("players")
    flags = concerned.group_by("players").agg(
        pl.col("label").unique(maintain_order=True).alias("flags"),
        pl.col("severity").sort_by(pl.col("rank")).first().alias("severity"),
    )
    seated = (
        audit.findings.filter(pl.col("player").is_not_null())
        .group_by("player")
        .agg(
            pl.len().cast(pl.Int64).alias("audit_findings"),
            pl.col("money").sum().cast(pl.Int64).alias("audit_money"),
        )
        .with_columns(pl.col("player").cast(pl.String))
    )
    out = (
        unusual.select("player", "z", "q")
        .join(flags.rename({"players": "player"}), on="player", how="left")
        .join(seated, on="player", how="left")
        .with_columns(
            pl.col("flags").fill_null(pl.lit([], dtype=pl.List(pl.String))),
            pl.col("audit_findings").fill_null(0),
            pl.col("audit_money").fill_null(0),
        )
    )
    weight = pl.col("severity").replace_strict({"high": 3, "medium": 2, "low": 1}, default=0, return_dtype=pl.Int64)
    return (
        out.with_columns(weight.alias("rank"))
        .select("player", "flags", "severity", "rank", "audit_findings", "audit_money", "z", "q")
        .sort("player")
    )


def collect(
    con: duckdb.DuckDBPyConnection, *, min_hands: int = 200, assist: StoredScreen | None = None
) -> pl.DataFrame:
    """Every finding of the warehouse behind ``con``, as :func:`prep_findings` makes them for the report's first
    screen: each screen and the audit run once here (``xuezhan findings`` and ``xuezhan case``; the report runs
    them for its pages and passes them to :func:`prep_findings` itself). ``min_hands``: the collusion screen's;
    ``assist``: the decision screens' :func:`~pipeline.audit.tallies.stored_screen` of ``con``, if the caller has
    it already (else worked out here)."""
    from dashboards import collusion as collusion_dash
    from dashboards import deals as deals_dash
    from dashboards import information as info_dash
    from dashboards import quality
    from pipeline.audit import scoring
    from pipeline.audit.information import FDR as INFO_FDR

    screen = collusion_dash.screen_pairs(con, min_hands=min_hands)
    seers, _ = info_dash.screen_noted(con)
    deals = deals_dash.screen(con)
    assist = stored_screen(con) if assist is None else assist
    return prep_findings(
        pairs=screen.pairs,
        pair_fdr=screen.fdr,
        teams=screen.teams,
        victims=collusion_dash.prep_victims(screen),
        info=seers,
        info_fdr=INFO_FDR,
        deals=deals.results,
        deals_fdr=deals.fdr,
        assist=assist,
        audit=scoring.audit(con),
        counts=queries.run(con, "warehouse_counts").row(0, named=True),
        issues=quality.prep_issues_by_code(con),
        rejects=quality.prep_rejects_by_code(con),
        unusual=unusual_of(con, scales(con)),
        page_of=lambda _pid: None,
    )
