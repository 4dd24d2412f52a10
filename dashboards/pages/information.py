"""information.html: the information-cheat screen (:mod:`dashboards.information`): the verdict, one row per
player, each flagged player's hands replayed, and how the screen works."""

from __future__ import annotations

import polars as pl

from dashboards import collusion as collusion_dash
from dashboards.html import Page, esc, fdr_text, num_cell, player_link, sortable_head
from pipeline.audit.anticipation import MIN_DECISIONS, AnticipationResult, Seer
from pipeline.audit.information import FDR, MIN_DISCARDS, InfoResult


def body(
    *, seers: list[Seer], stale: str | None, evidence: pl.DataFrame, waits: pl.DataFrame, pages: dict[str, Page]
) -> list[str]:
    """The page of the screen's ``seers`` (and the ``stale`` note of :func:`dashboards.information.screen_noted`),
    with the flagged players' ``evidence`` and ``waits`` (:func:`dashboards.information.prep_evidence`,
    :func:`dashboards.information.prep_anticipation`); players linked to their ``pages``."""
    return [summary(seers, stale), table(seers, pages), evidence_section(seers, evidence, waits, pages), method()]


def summary(seers: list[Seer], stale: str | None = None) -> str:
    tested = [s for s in seers if any(r is not None and r.p is not None for r in (s.dodges, s.anticipation))]
    flagged = [s for s in seers if s.flagged]
    if not tested:
        verdict = (
            f'<p class="verdict"><b>Nothing was screened</b>: no player has {MIN_DISCARDS:,} discards or '
            f"{MIN_DECISIONS:,} waits the replay can judge (hands of level full or dealt).</p>"
        )
    elif not flagged:
        verdict = (
            f'<p class="verdict"><b>No player is flagged</b> at a false discovery rate of {fdr_text(FDR)}: none of the '
            f"{len(tested):,} players screened throws dangerous tiles less often, or waits on the tiles the wall "
            "holds more often, than the room's spread allows.</p>"
        )
    else:
        names = ", ".join(f"{esc(s.player)} ({esc(', '.join(s.signals))})" for s in flagged)
        verdict = (
            f'<p class="verdict"><b class="flag">{len(flagged):,} player{"s" if len(flagged) > 1 else ""} '
            f"flagged</b> of {len(tested):,} screened, at a false discovery rate of {fdr_text(FDR)} over both signals: "
            f"{names}. A flag is a reason to replay their hands, not a verdict.</p>"
        )
    return (
        f'<section class="summary">{verdict}<p>{len(seers):,} players; a signal is tested for a player with at '
        f"least {MIN_DISCARDS:,} judged discards (dangerous discards by choice) or {MIN_DECISIONS:,} judged waits "
        "(winning-tile anticipation). Measured on simulated rooms of 8 players: see the README's evaluation for "
        "the planted cheats found and the honest rooms' false discovery proportion, per signal and together.</p>"
        + (f'<p class="verdict"><b>{esc(stale)}</b></p>' if stale else "")
        + "</section>"
    )


def table(seers: list[Seer], pages: dict[str, Page]) -> str:
    if not seers:
        return '<section><h2>Players</h2><p class="note">No player has a judged discard.</p></section>'
    heads = (
        "#",
        "player",
        "hands",
        "judged discards",
        "dangerous by choice",
        "expected",
        "p",
        "q",
        "judged waits",
        "on the wall",
        "expected",
        "p",
        "q",
        "flag",
    )
    kinds = ("num", "text", *("num",) * 12)
    head = sortable_head(zip(heads, kinds, strict=True))
    rows = []
    for k, s in enumerate(seers, start=1):
        d, a = s.dodges, s.anticipation
        hands = max((r.hands for r in (d, a) if r is not None), default=0)
        flag = f'<a href="#info-{k}-hands"><b class="flag">yes</b></a> ({esc(", ".join(s.signals))})'
        rows.append(
            f'<tr id="info-{k}" class="{"flagged" if s.flagged else ""}">'
            + num_cell(k, str(k))
            + f'<td class="id" data-v="{esc(s.player)}">{player_link(s.player, pages)}</td>'
            + num_cell(hands, f"{hands:,}")
            + _count_cells(None if d is None else d.discards, None if d is None else d.dangerous_by_choice)
            + _tail_cells(d, s.q_dodges)
            + _count_cells(None if a is None else a.decisions, None if a is None else a.hits)
            + _tail_cells(a, s.q_anticipation)
            + num_cell(int(s.flagged), flag if s.flagged else "no")
            + "</tr>"
        )
    return (
        f'<section id="players"><h2>Players</h2><table class="sortable info"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table><p class="note">Flagged first, then by the smaller p. Judged waits: '
        "discards into a ready hand when another would have waited on other tiles the player saw as many copies "
        "of; on the wall: those whose wait had the most copies left in the wall. Click a heading to sort.</p>"
        "</section>"
    )


def _count_cells(n: int | None, k: int | None) -> str:
    if n is None or k is None:
        return num_cell(None, "–") + num_cell(None, "–")
    return num_cell(n, f"{n:,}") + num_cell(k, f"{k:,}")


def _tail_cells(r: InfoResult | AnticipationResult | None, q: float | None) -> str:
    if r is None:
        return num_cell(None, "–") * 3
    return (
        num_cell(r.expected, "–" if r.expected is None else f"{r.expected:,.1f}")
        + num_cell(r.p, "not tested" if r.p is None else f"{r.p:.2e}")
        + num_cell(q, "–" if q is None else collusion_dash.q_text(q))
    )


def evidence_section(seers: list[Seer], df: pl.DataFrame, waits: pl.DataFrame, pages: dict[str, Page]) -> str:
    """Each flagged player's hands to replay (:func:`dashboards.information.prep_evidence`) and waits
    (:func:`dashboards.information.prep_anticipation`), anchors ``info-k-hands`` (``info-k``: the player's row)."""
    title = "Flagged players and the hands to replay"
    flagged = [(k, s) for k, s in enumerate(seers, start=1) if s.flagged]
    if not flagged:
        note = '<p class="note">No player is flagged: no hands to show.</p>'
        return f'<section id="hands"><h2>{esc(title)}</h2>{note}</section>'
    parts = []
    for k, s in flagged:
        hands = df.filter(pl.col("rank") == k)
        items = "".join(
            f'<details><summary><span class="id">{esc(h["hand_id"])}</span>: {h["dodges"]} discard'
            f"{'s' if h['dodges'] != 1 else ''} dodged a win ({esc(h['what'])})</summary>"
            f'<div class="replay">{esc(h["replay"])}</div></details>'
            for h in hands.iter_rows(named=True)
        )
        waited = "".join(
            f'<details class="wait"><summary><span class="id">{esc(h["hand_id"])}</span>: waited on the wall '
            f"({esc(h['what'])})</summary>"
            f'<div class="replay">{esc(h["replay"])}</div></details>'
            for h in waits.filter(pl.col("rank") == k).iter_rows(named=True)
        )
        parts.append(
            f'<div id="info-{k}-hands"><h3><a href="#info-{k}">#{k}</a> {player_link(s.player, pages)}</h3>'
            + (items or '<p class="note">No hand read back shows a dodged win.</p>')
            + (f"<h4>Waits on the tiles the wall held</h4>{waited}" if waited else "")
            + "</div>"
        )
    return (
        f'<section id="hands"><h2>{esc(title)}</h2>{"".join(parts)}<p class="note">Dodged wins: hands where the '
        "player threw a tile nobody could win on while holding one an opponent still in could win on whose "
        "discard would have left its hand as close to ready: the choice a player who sees the hands always makes, "
        "and the screen counts the absence of the other; most such discards first. Waits: discards into a ready "
        "hand whose wait had more copies left in the wall than another wait the player saw as many copies of "
        "(unseen: not in its hand, a river or a meld; in the wall: not dealt or drawn yet), widest margin first. "
        "Each hand as <code>xuezhan replay HAND --warehouse W</code> prints it; seats count from 0.</p></section>"
    )


def method() -> str:
    return (
        '<section><h2>How the screen works</h2><p class="note">Two signals of play that sees the other hands. '
        "<b>Dangerous discards by choice</b>: a player who sees the other hands never throws a tile that completes "
        "an opponent's hand while holding one that completes none; honest players cannot know, and now and then "
        "do. <b>Winning-tile anticipation</b>: choosing between waits it sees as many copies of, an honest player "
        "cannot know which has more left in the wall (the rest sit in opponents' hands and will never come); one "
        "who sees the hands picks the wall's. Per player and signal: the choices the replay can judge (hands of "
        "level full or dealt) and the count, compared with a beta-binomial for every other player's counts (leave "
        "one out; the spread of honest players' rates is in the null), the posterior predictive tail (a diffuse "
        "prior on the spread); q-values are Benjamini–Yekutieli over both signals' tests together, and a player is "
        "flagged on either. Details: pipeline/audit/information.py, pipeline/audit/anticipation.py.</p></section>"
    )
