"""index.html: what needs attention (every finding of the report, most serious first, each linked to its
evidence), then the overview of the warehouse: its counts, its tables, its hands by level of record and the
overview's charts (:mod:`dashboards.overview`, :mod:`dashboards.findings`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import polars as pl

from dashboards import findings as found_dash
from dashboards.html import Page, esc, figure, href, link, player_link, scales_note
from pipeline.analytics.scales import Scales
from pipeline.audit import cases
from pipeline.report import charts, numbers


def body(
    *,
    font: charts.Fonts,
    found: pl.DataFrame,
    unusual: pl.DataFrame,
    reach: str | None,
    pages: dict[str, Page],
    counts: dict[str, Any],
    players: int,
    wins: int,
    links: tuple[Page, Page, Page, Page, Page, Page],
    scale: Scales,
    tables: pl.DataFrame,
    by_level: dict[str, dict[str, int]],
    figures: list[charts.Chart],
) -> list[str]:
    """The page: ``found`` (:func:`dashboards.findings.with_cases`: each finding and its case), ``unusual``
    (the unusual-result test) and ``reach`` (:func:`dashboards.findings.reach_text`: what the decision screens can
    see; None: nothing reviewed) first, players linked to their ``pages``; then ``counts`` (``warehouse_counts``), the
    number of ``players`` and ``wins``, a link to each page of ``links`` (directory, quality, health, audit,
    collusion, information), the ``tables`` (:func:`dashboards.overview.prep_tables`), the hands ``by_level`` and
    the overview's ``figures``."""
    return [
        font_notice(font),
        findings_section(found, unusual, pages, reach),
        summary(counts, players, wins, *links, scale),
        tables_section(tables),
        levels_section(by_level),
        *(figure(chart) for chart in figures),
    ]


def summary(
    counts: dict[str, Any],
    players: int,
    wins: int,
    directory: Page,
    quality_page: Page,
    health_page: Page,
    audit_page: Page,
    collusion_page: Page,
    info_page: Page,
    scale: Scales,
) -> str:
    """The overview's first lines: the warehouse's counts (``warehouse_counts``), players and wins, and a link to
    each page."""
    return (
        '<section class="summary" id="overview">'
        f"<p><b>{counts['replayed_hands']:,}</b> replayed hands ({counts['hands']:,} stored, "
        f"{counts['valid_hands']:,} valid, {counts['rejects']:,} rejected lines), "
        f"<b>{players:,}</b> players, <b>{wins:,}</b> wins. "
        "Statistics count replayed hands only; fan is the engine's total before any cap "
        "(平胡 = 1 fan).</p>"
        + scales_note(scale)
        + f'<p>Every player: <a href="{href(directory.file)}">the player directory</a>. '
        f'Data quality: <a href="{href(quality_page.file)}">issues and rejects</a>. '
        f'Ingest health: <a href="{href(health_page.file)}">the latest run against the runs before it</a>. '
        f'Audit: <a href="{href(audit_page.file)}">scoring differences and rule violations by money</a>. '
        f'Collusion: <a href="{href(collusion_page.file)}">the pair and team screens, and victims</a>. '
        f'Information cheats: <a href="{href(info_page.file)}">the single-player screen</a>.</p>'
        "</section>"
    )


SEVERITY_TEXT = {
    "high": "flagged by a cheating screen at its false discovery rate: a lead to replay, not a verdict",
    "medium": "money settled wrongly, or results far outside the room's range",
    "low": "records that could not be used",
}


STATE_TEXT = {  # a finding's standing against its case (pipeline.audit.cases.status), as the first screen says it
    "new": "no case yet",
    "reopened": "dismissed, but its evidence has grown since",
    "appealed": "a decision appealed: to review again",
    "open": "a case under review",
    "confirmed": "a case confirmed",
}


def key_text(key: str) -> str:
    """A finding's key, with the places it may wrap (after ``:``, ``+``, ``_``) marked, so that a long key never
    splits a word."""
    out = esc(key)
    for mark in (":", "+", "_"):
        out = out.replace(mark, f"{mark}<wbr>")
    return out


def state_cell(r: dict[str, Any]) -> str:
    """A finding's case state (``status``, with its case and, reopened, why), and its key to open a case with."""
    status = r.get("status") or "new"
    case = f'<br><span class="n">{key_text(r["case_id"])}</span>' if r.get("case_id") else ""
    why = f'<br><span class="why">{esc(r["why"])}</span>' if r.get("why") else ""
    return (
        f'<td class="state"><span class="state {esc(status)}" title="{esc(STATE_TEXT.get(status, status))}">'
        f'{esc(status)}</span>{why}{case}<br><code class="key">{key_text(r["key"])}</code></td>'
    )


def findings_rows(found: pl.DataFrame, pages: dict[str, Page]) -> str:
    in_bases = found["base"].drop_nulls().n_unique() > 1  # money of several bases: ranked by money ÷ base
    rows = []
    for r in found.iter_rows(named=True):
        names = r["players"] or []
        if r["kind"] in ("pair", "team", "information", "results") and names:
            who = (" &amp; " if r["kind"] == "pair" else ", ").join(player_link(p, pages) for p in names)
        else:
            who = esc(r["subject"])
        base = f" at base {r['base']:,}" if in_bases and r["base"] is not None else ""
        money = f'<br><span class="n">{r["money"]:,} points{base}</span>' if r["money"] is not None else ""
        status = r.get("status") or "new"
        rows.append(
            f'<tr class="sev-{r["severity"]} state-{esc(status)}">'
            f'<td class="num">{r["rank"]}</td>'
            f'<td><span class="sev {r["severity"]}">{r["severity"]}</span></td>'
            f"<td>{esc(r['label'])}</td><td>{who}{money}</td><td>{esc(r['detail'])}</td>"
            f"{state_cell(r)}"
            f'<td><a href="{link(r["evidence"])}">{esc(r["evidence_text"])}</a></td></tr>'
        )
    heads = ("#", "severity", "what", "who / where", "detail", "case", "evidence")
    head = "".join(f"<th>{h}</th>" for h in heads)
    return f'<table class="findings"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _standing(found: pl.DataFrame) -> pl.DataFrame:
    """``found`` with a ``status`` column (every finding new when it has none: no case was read)."""
    if "status" in found.columns:
        return found
    return found.with_columns(
        pl.lit("new").alias("status"), pl.lit(None, pl.String).alias("why"), pl.lit(None, pl.String).alias("case_id")
    )


def findings_section(
    found: pl.DataFrame, unusual: pl.DataFrame, pages: dict[str, Page], reach: str | None = None
) -> str:
    """The first screen of the report: every finding, most serious first, each linking to its evidence; the new
    ones (no case yet) apart from the known ones (in a case: reopened, appealed, open, confirmed); the dismissed
    ones whose evidence has not grown hidden, and counted (``found``: :func:`dashboards.findings.with_cases`); what
    the decision screens can see here (``reach``), under the findings."""
    found = _standing(found)
    hidden = found.filter(pl.col("status") == "dismissed")
    shown = found.filter(pl.col("status") != "dismissed")
    fresh = shown.filter(pl.col("status") == "new")
    order = {s: i for i, s in enumerate(found_dash.STATES)}
    known = (
        shown.filter(pl.col("status") != "new")
        .with_columns(pl.col("status").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_o"))
        .sort("_o", "rank")
        .drop("_o")
    )
    if not shown.height and not hidden.height:
        verdict = (
            '<p class="verdict ok"><b>Nothing needs attention.</b> No pair or team is flagged by the collusion '
            "screen, no player by the information-cheat screen, the audit found no scoring error, no player's "
            "results are outside the room's range, every stored record is valid and every input line was a "
            "record.</p>"
        )
        tables = ""
    elif not shown.height:
        verdict = (
            '<p class="verdict ok"><b>Nothing needs attention.</b> Every finding of the screens was dismissed by a '
            "reviewer and none has grown since (below).</p>"
        )
        tables = ""
    else:
        counts = shown["severity"].value_counts()
        by = {r["severity"]: r["count"] for r in counts.iter_rows(named=True)}
        split = ", ".join(f"{by[s]:,} {s}" for s in found_dash.SEVERITIES if s in by)
        states = Counter(known["status"].to_list())
        known_split = ", ".join(f"{states[s]:,} {s}" for s in found_dash.STATES if states[s])
        verdict = (
            f'<p class="verdict"><b>{esc(found_dash.findings_text(shown.height))}</b> ({split}): '
            f'<b id="new-count">{fresh.height:,} new</b>, {known.height:,} known'
            + (f" ({known_split})" if known.height else "")
            + ".</p>"
        )
        new_part = (
            findings_rows(fresh, pages)
            if fresh.height
            else '<p class="note">None: every finding shown is already in a case.</p>'
        )
        known_part = (
            findings_rows(known, pages)
            if known.height
            else '<p class="note">No finding is in a case yet. A reviewer opens one on a finding\'s key: '
            "<code>xuezhan case open KEY --warehouse W --reviewer NAME</code>.</p>"
        )
        tables = (
            f'<h3 id="new">New: no case yet ({fresh.height:,})</h3>{new_part}'
            f'<h3 id="known">Known: in a case ({known.height:,})</h3>{known_part}'
        )
    hidden_note = (
        f'<p class="note" id="hidden"><b>{hidden.height:,} dismissed finding{"s" if hidden.height != 1 else ""} '
        f"hidden</b>: a reviewer dismissed {'them' if hidden.height != 1 else 'it'} and the evidence has not grown "
        f"since (a q-value {cases.Q_FACTOR:g}× smaller, or {cases.N_FACTOR:g}× the shared hands, decisions or "
        "hands, brings a finding back as reopened). <code>xuezhan findings --all --warehouse W</code> lists "
        f"{'them' if hidden.height != 1 else 'it'}.</p>"
        if hidden.height
        else ""
    )
    legend = "; ".join(f'<span class="sev {s}">{s}</span> {esc(t)}' for s, t in SEVERITY_TEXT.items())
    states_legend = "; ".join(f'<span class="state {s}">{s}</span> {esc(t)}' for s, t in STATE_TEXT.items())
    tested = int(unusual["tested"].sum()) if unusual.height else 0
    min_hands = found_dash.MIN_HANDS
    groups = unusual["group"].drop_nulls().n_unique() if unusual.height else 0
    reach_note = f'<p class="note" id="decision-reach">{esc(reach)}</p>' if reach else ""
    within = (
        f" Each player is compared with the other players of their own scale group (a profile and its base: "
        f"{groups} here), so that rooms playing for different stakes are never each other's reference."
        if groups > 1
        else ""
    )
    return (
        f'<section class="findings" id="findings"><h2>What needs attention</h2>{verdict}{tables}{hidden_note}'
        f"{reach_note}"
        f'<p class="note">Severity: {legend}. Case: {states_legend} (<code>xuezhan findings</code> lists the same '
        "states; <code>xuezhan case</code> opens, confirms, dismisses and appeals). "
        f"Scoring errors: the {found_dash.TOP_ERRORS} biggest by money here, "
        "every finding on the audit page. Unusual results: each player's net points per hand, less the deal's "
        "and the draws' luck where the record shows every hand (each hand's net less the room's mean net of the "
        "hands dealt alike, by starting shanten, and less each draw's luck against the tiles the wall held: "
        "<code>luck_adjusted_net_per_hand</code>; raw where the deal is not known), "
        "against the range the other players give: their average, how much players truly differ beyond chance "
        "(the spread of skill is in the reference, so a good player is not unusual), and the player's own "
        "sampling error; two-sided "
        f"p-values, Benjamini–Yekutieli q ≤ {found_dash.FDR:g} over the {tested:,} players with at least "
        f"{min_hands:,} replayed hands.{within} An unusual result is not an accusation: a far better player, a run "
        "of luck, or a player who is helped look alike.</p></section>"
    )


def levels_section(by_level: dict[str, dict[str, int]]) -> str:
    """The hands by level of record (what each record carries); a figure that cannot use some says so under
    its chart. Nothing for a warehouse of one level."""
    if len(by_level) <= 1:
        return ""
    counts = ", ".join(f"{esc(level)} {c['replayed']:,}" for level, c in by_level.items())
    return (
        f"<p>Hands by level of record (schemas/XZLOG.md, levels): {counts}. Each chart uses the hands whose "
        "level carries what it shows and says so under it: a score sheet has wins, kongs and payments but no "
        "discards or tiles (schemas/METRICS.md lists every figure's levels).</p>"
    )


def tables_section(df: pl.DataFrame) -> str:
    """How hands end at each table shape; the charts below pool them (one row: one table, nothing pooled)."""
    head = "".join(
        f"<th>{h}</th>" for h in ("table", "hands", "hands by players who won", "played out", "黄庄", "一炮多响")
    )
    rows = "".join(
        f'<tr><td>{esc(r["table"])}</td><td class="num">{r["hands"]:,}</td><td>{esc(r["winners"])}</td>'
        + "".join(
            f'<td class="num">{esc(numbers.pct(r[c], 1) if r[c] is not None else "–")}</td>'
            for c in ("played_out", "huang_zhuang", "multi_win")
        )
        + "</tr>"
        for r in df.iter_rows(named=True)
    )
    pooled = "The charts below pool every table." if df.height > 1 else "Every hand was played at this table."
    return (
        f"<section><h2>Tables</h2><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        f'<p class="note">Played out: the wins ended the hand (all but one won in 血战到底, the first win in 普通版; '
        f"never in 血流成河, where only the wall ends it). 黄庄: the wall ran out with two or more players who "
        f"never won. {pooled}</p></section>"
    )


CJK_FONT_PACKAGE = "fonts-noto-cjk"


def font_notice(font: charts.Fonts) -> str:
    """What the first screen of index.html says when no CJK font was found (:func:`charts.fonts`: no font of
    matplotlib's font manager covers the Chinese labels); nothing when one was. In English only: without the
    font, Chinese would show as boxes."""
    if font.cjk:
        return ""
    return (
        '<section class="notice" id="font-notice" role="note"><p><b>No CJK font was found</b> when this report '
        "was built: the charts name fan patterns, flower pigs and drawn games in English or pinyin instead of "
        "Chinese, and the Chinese words of these pages may show as empty boxes on this machine. Install the font "
        f"package <code>{CJK_FONT_PACKAGE}</code> (<code>sudo apt-get install {CJK_FONT_PACKAGE}</code>) and build "
        "the report again (<code>make demo</code> or <code>xuezhan report</code>).</p></section>"
    )
