"""deals.html: the stacked-deal screen (:mod:`dashboards.deals`): the verdict, the wall commitments, the
charts, each flagged group's best deals replayed, the top groups of each kind and how the screen works."""

from __future__ import annotations

import polars as pl

from dashboards import deals as deals_dash
from dashboards.html import esc, fdr_text, figure
from pipeline.report import charts


def body(
    *, deals: deals_dash.Screen, figures: list[charts.Chart], evidence: pl.DataFrame, top: pl.DataFrame
) -> list[str]:
    """The page of the screen's result ``deals``: its ``figures``, the flagged groups' ``evidence``
    (:func:`dashboards.deals.prep_evidence`) and the ``top`` groups (:func:`dashboards.deals.prep_top`)."""
    return [
        summary(deals),
        commitments(deals),
        *(figure(chart) for chart in figures),
        evidence_section(evidence),
        table(top),
        method(),
    ]


def summary(s: deals_dash.Screen) -> str:
    rate = fdr_text(s.fdr)
    tested = s.tested
    if not tested:
        why = s.note or (
            "no player, seat, table or session has enough hands whose deal is known (levels full and dealt)"
        )
        verdict = f'<p class="verdict"><b>Nothing was screened</b>: {esc(why)}.</p>'
    elif not s.flagged:
        verdict = (
            f'<p class="verdict"><b>Nothing is flagged</b> at a false discovery rate of {rate}: no player, seat, '
            f"table or session of the {tested:,} screened was dealt better hands than fair walls deal.</p>"
        )
    else:
        names = ", ".join(f"{esc(r.kind)} {esc(r.group)}" for r in s.flagged)
        verdict = (
            f'<p class="verdict"><b class="flag">{len(s.flagged):,} flagged</b> of {tested:,} screened, at '
            f"a false discovery rate of {rate} per kind: {names}. A flag is a reason to replay the hands below, "
            "not a verdict.</p>"
        )
    return f'<section class="summary">{verdict}</section>'


def evidence_section(df: pl.DataFrame) -> str:
    title = "Flagged groups and their best deals, replayed"
    if not df.height:
        return f'<section><h2>{esc(title)}</h2><p class="note">Nothing flagged: no hands to show.</p></section>'
    parts = []
    for (k, kind, group), hands in df.group_by(["rank", "kind", "group"], maintain_order=True):
        items = "".join(
            f'<details><summary><span class="id">{esc(h["hand_id"])}</span> seat {h["seat"]} '
            f"({esc(h['player'])}{', dealer' if h['dealer'] else ''}): dealt {h['shanten']} from ready"
            f"{_EVIDENCE_WALL.get(h['wall_commitment'], '')}</summary>"
            f'<div class="replay">{esc(h["replay"])}</div></details>'
            for h in hands.iter_rows(named=True)
        )
        parts.append(f'<div id="deal-{k}"><h3>{esc(kind)} {esc(group)}</h3>{items}</div>')
    return (
        f'<section><h2>{esc(title)}</h2>{"".join(parts)}<p class="note">Each hand as <code>xuezhan replay '
        "HAND --warehouse W</code> prints it, read back from the line it was ingested from.</p></section>"
    )


# what a flagged hand's wall commitment proved, beside its deal
_EVIDENCE_WALL = {
    "verified": "; its wall is the one committed before play (a deal of chance, not a changed wall)",
    "seed_mismatch": '; <b class="flag">its revealed seed is not the committed one</b>',
    "wall_mismatch": '; <b class="flag">its wall is not the committed one</b>',
}


def commitments(s: deals_dash.Screen) -> str:
    """The walls committed before play: proved or disproved hand by hand (no statistics), the failed ones
    named; nothing where no record carries a commitment."""
    walls = s.walls
    if not walls.hands:
        return ""
    faulty = walls.failed
    head = (
        f'<p class="verdict"><b class="flag">{faulty:,} {"hand" if faulty == 1 else "hands"} whose wall is not the '
        "one committed before play</b>: the platform's own proof fails for these hands. Replay them.</p>"
        if faulty
        else ""
    )
    rows = "".join(
        f'<tr><td>{esc(status)}</td><td class="num">{n:,}</td><td>{esc(meaning)}</td>'
        f'<td class="id">{esc(", ".join(first))}</td></tr>'
        for status, n, meaning, first in walls.rows()
    )
    return (
        f"<section><h2>Wall commitments</h2>{head}<p>{esc(walls.line())}.</p><table><thead><tr><th>status</th>"
        f"<th>hands</th><th>meaning</th><th>first hands</th></tr></thead><tbody>{rows}</tbody></table>"
        '<p class="note">A platform that publishes a hash of its shuffle seed before play and reveals the seed '
        "after lets each wall be regenerated: a verified wall was not rearranged after the commitment, whoever "
        "was dealt what; a mismatch is a wall (or seed) that is not the committed one. A verified wall does not "
        "show that the platform chose its seed fairly, and a stacked deal by other means (a seat given tiles "
        "outside the wall) would show in the validator's tile checks. Hands with no seed revealed rest on the "
        "statistical screen alone.</p></section>"
    )


def table(df: pl.DataFrame) -> str:
    title = "Top groups of each kind"
    if not df.height:
        return ""
    rows = "".join(
        f'<tr><td>{esc(r["kind"])}</td><td class="id">{esc(r["group"])}</td><td class="num">{r["hands"]:,}</td>'
        f'<td class="num">{r["mean"]:.2f}</td><td class="num">{r["fair"]:.2f}</td><td class="num">{r["z"]:+.1f}</td>'
        f'<td class="num">{r["p"]:.1e}</td><td class="num">{r["q"]:.3f}</td><td>{"YES" if r["flagged"] else ""}</td>'
        "</tr>"
        for r in df.iter_rows(named=True)
    )
    return (
        f"<section><h2>{esc(title)}</h2><table><thead><tr><th>kind</th><th>group</th><th>dealt hands</th>"
        "<th>mean shanten</th><th>fair</th><th>z</th><th>p</th><th>q</th><th>flag</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def method() -> str:
    return (
        '<section><h2>How the screen works</h2><p class="note">Each dealt hand is scored by its starting shanten '
        "(tile changes from ready; at a table of three suits the best over the suit to declare void). With a fair "
        "shuffle a seat's 13 tiles (the dealer's 14) are a random subset of the wall, so the distribution of that "
        "score is known exactly, whoever plays; a group's sum is compared with the exact distribution of the sum "
        "of as many fair deals (lower tail), and groups are flagged by Benjamini–Yekutieli q within each kind. "
        "Only hands of level full or dealt carry their deal. Details: pipeline/audit/deals.py.</p></section>"
    )
