"""audit.html: the scoring and rule audit's findings by money: in numbers, by code, month and player (the
charts of :mod:`dashboards.audit`), then the top findings."""

from __future__ import annotations

import polars as pl

from dashboards.html import Page, esc, figure, finding_message, fmt, href, scales_note
from pipeline.analytics.scales import Scales
from pipeline.audit import scoring
from pipeline.report import charts, numbers


def body(
    *,
    result: scoring.Audit,
    stored: int,
    quality_page: Page,
    scale: Scales,
    figures: list[charts.Chart],
    top: pl.DataFrame,
) -> list[str]:
    """The page: the audit's ``result`` over the ``stored`` hands, its ``figures``, and the ``top`` findings
    (:func:`dashboards.audit.prep_top_findings`)."""
    return [summary(result, stored, quality_page, scale), *(figure(chart) for chart in figures), findings_table(top)]


def summary(result: scoring.Audit, stored: int, quality_page: Page, scale: Scales) -> str:
    """The audit in numbers (findings, codes, hands of the ``stored`` hands, money at stake) and what its money
    means."""
    f = result.findings
    hands = f["hand_id"].n_unique() if f.height else 0
    errors = int((f["severity"] == "error").sum()) if f.height else 0
    codes = f["code"].n_unique() if f.height else 0
    if not f.height:
        found = (
            f"<p><b>No findings</b>: every one of the {stored:,} stored hands replays and settles as the rules say.</p>"
        )
    else:
        found = (
            f"<p><b>{f.height:,}</b> findings ({errors:,} errors, {f.height - errors:,} warnings, {codes:,} "
            f"codes) in <b>{hands:,}</b> of {stored:,} stored hands "
            f"({numbers.pct(hands / stored if stored else None)}), <b>{esc(result.stake_text())}</b>.</p>"
        )
    in_bases = (
        " Where the hands have different bases (底), money is ranked and added up in bases: points ÷ the hand's base."
        if result.mixed
        else ""
    )
    return (
        '<section class="summary">'
        + found
        + scales_note(scale)
        + "<p>Money at stake: for a scoring or settlement difference, the points it moves; for a rule "
        "violation, the points the source system settled in that hand (a hand with two violations counts it "
        f"twice).{in_bases} Every finding names its hand and, where there is one, the event (index in the record, "
        f'0-based) and seat. The validator\'s issues by count: <a href="{href(quality_page.file)}">data '
        "quality</a>.</p></section>"
    )


def findings_table(df: pl.DataFrame) -> str:
    title = "Top findings by money"
    if not df.height:
        return f'<section><h2>{esc(title)}</h2><p class="note">No findings.</p></section>'
    n = int(df["n_findings"][0])
    head = "".join(f"<th>{h}</th>" for h in ("#", "hand", "event", "code", "player", "money (points)", "message"))
    in_bases = df["unit"][0] == "bases"  # the hands have several bases: ranked by money ÷ base
    rows = []
    for r in df.iter_rows(named=True):
        base = f'<br><span class="n">at base {r["base"]:,}</span>' if in_bases else ""
        code = f'<abbr title="{esc(r["meaning"])}">{esc(r["code"])}</abbr>' if r["meaning"] else esc(r["code"])
        rows.append(
            f'<tr class="{esc(r["severity"])}" id="finding-{r["rank"]}"><td class="num">{r["rank"]}</td>'
            f'<td class="id">{esc(r["hand_id"])}</td>'
            f'<td class="num">{esc(fmt(r["event"]))}</td><td>{code}</td><td>{esc(fmt(r["player"]))}</td>'
            f'<td class="num">{r["money"]:,}{base}</td><td class="def">{finding_message(r["message"], r["position"])}'
            + (f" (reasons: {esc(r['reasons'])})" if r["reasons"] else "")
            + "</td></tr>"
        )
    k = int(df["n_mistakes"][0])
    shown = f"all {k:,}" if df.height == k else f"the top {df.height:,} of {k:,}"
    behind = f" ({n - k:,} more findings are the fan or points behind a wrong payment, named as its reasons)"
    behind = behind if n > k else ""
    return (
        f"<section><h2>{esc(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}"
        f'</tbody></table><p class="note">{esc(shown)} mistakes{esc(behind)}, each wrong payment once, most money '
        + ("in bases (points ÷ the hand's base) " if in_bases else "")
        + "first (then hand and event). "
        "Hover a code for its meaning (schemas/ISSUE_CODES.md); warnings in grey. Every finding: "
        "<code>xuezhan audit --warehouse WH --format csv</code>.</p></section>"
    )
