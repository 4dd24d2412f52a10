"""collusion.html: the pair and team screens (:mod:`dashboards.collusion`): the verdict, what the screen can
see, which levels of record fed each signal, the charts, the teams, the victims, each flagged pair's hands, the
top pairs and how the screen works."""

from __future__ import annotations

from typing import Any

import polars as pl

from dashboards import collusion as collusion_dash
from dashboards.html import Page, esc, fdr_text, figure, fmt, player_link
from pipeline.audit.collusion import SIGNALS
from pipeline.audit.teams import TeamResult
from pipeline.report import charts, numbers


def body(
    *,
    screen: collusion_dash.Screen,
    by_signal: dict[str, dict[str, Any]],
    figures: list[charts.Chart],
    teams: pl.DataFrame,
    team_evidence: pl.DataFrame,
    victims: pl.DataFrame,
    evidence: pl.DataFrame,
    top: pl.DataFrame,
    pages: dict[str, Page],
) -> list[str]:
    """The page of the ``screen``'s result: ``by_signal`` (:func:`pipeline.audit.collusion.screen_levels`), its
    ``figures``, the ``teams`` and their ``team_evidence``, the ``victims``, the flagged pairs' ``evidence`` and the
    ``top`` pairs (the frames of :mod:`dashboards.collusion`); players linked to their ``pages``."""
    return [
        summary(screen),
        power(screen),
        levels(by_signal),
        *(figure(chart) for chart in figures),
        teams_section(screen, teams, team_evidence),
        victims_section(victims, pages),
        evidence_section(screen, evidence),
        pairs_table(top),
        method(screen),
    ]


def levels(by_signal: dict[str, dict[str, Any]]) -> str:
    """Which levels of record fed each signal of the screen, and which signals no hand could show."""
    rows = []
    for signal, entry in by_signal.items():
        used = ", ".join(f"{k} {v:,}" for k, v in entry["levels"].items()) or "–"
        left = ", ".join(f"{k} {v:,}" for k, v in entry["excluded"].items()) or "–"
        state = f"{entry['n']:,} hands" if entry["available"] else "not available"
        rows.append(f"<tr><td>{esc(signal)}</td><td>{state}</td><td>{used}</td><td>{left}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("signal", "screened on", "hands by level", "levels left out"))
    return f"<h2>Signals by level of record</h2><table><tr>{head}</tr>{''.join(rows)}</table>"


def _pair(a: str, b: str) -> str:
    return f"{esc(a)} &amp; {esc(b)}"


def summary(screen: collusion_dash.Screen) -> str:
    players = len(set(screen.shared["player_a"].to_list()) | set(screen.shared["player_b"].to_list()))
    flagged = screen.flagged
    rate = fdr_text(screen.fdr)
    teams = screen.teams
    if not screen.pairs:
        verdict = (
            f'<p class="verdict"><b>Nothing was screened</b>: no pair of players shared {screen.min_hands:,} '
            "replayed hands, too few to tell help from chance.</p>"
        )
    elif not flagged and teams:
        verdict = (
            f'<p class="verdict"><b class="flag">No pair is flagged</b>, but the group screen reports '
            f"{_team_names(teams)} at a false discovery rate of {rate}: a group that helps each other, each pair of it "
            "too little to flag alone. A report is a reason to replay the hands listed below, not a verdict.</p>"
        )
    elif not flagged:
        verdict = (
            f'<p class="verdict"><b>No pair is flagged</b> at a false discovery rate of {rate}: none of the '
            f"{len(screen.pairs):,} pairs screened helps the other more than chance allows. The top pairs "
            "are shown below for a look; their scores are not evidence of collusion.</p>"
        )
    else:
        names = ", ".join(_pair(*r.players) for r in flagged)
        verdict = (
            f'<p class="verdict"><b class="flag">{len(flagged):,} pair{"s" if len(flagged) > 1 else ""} '
            f"flagged</b> of {len(screen.pairs):,} screened, at a false discovery rate of {rate}: {names}"
            + (f"; the group screen reports {_team_names(teams)}" if teams else "")
            + ". A flag is a reason to replay the hands listed below, not a verdict: among flagged pairs, up to "
            f"{rate} are expected to be honest.</p>"
        )
    return (
        '<section class="summary">'
        + verdict
        + f"<p>{players:,} players; {screen.shared.height:,} pairs sat at one table for at least one "
        f"replayed hand. {esc(screen.threshold_note())}</p></section>"
    )


def _team_names(teams: tuple[TeamResult, ...]) -> str:
    """The reported teams in words: "1 team of three: A, B &amp; C (q 0.003)"."""
    named = "; ".join(
        f"{', '.join(esc(p) for p in t.players[:-1])} &amp; {esc(t.players[-1])} (q {t.q:.2g})" for t in teams
    )
    return f"{len(teams)} team{'s' if len(teams) > 1 else ''} of three or more: {named}"


def power(screen: collusion_dash.Screen) -> str:
    """What the screen can see at this warehouse's sizes (issue 37): the power the evaluation measured per cheat
    family (:func:`pipeline.audit.collusion.power_statement`), so that "0 flagged" reads as "no evidence at this
    power", never as "clean"."""
    lines = collusion_dash.power_lines(screen)
    items = "".join(f"<li>{esc(line)}</li>" for line in lines[1:])
    return (
        f'<section><h2>What the screen can see</h2><p class="note">{esc(lines[0])}</p>'
        + (f"<ul>{items}</ul>" if items else "")
        + "</section>"
    )


def evidence_section(screen: collusion_dash.Screen, df: pl.DataFrame) -> str:
    title = "Flagged pairs and the hands to replay"
    if not screen.flagged:
        what = "No pair is flagged" if screen.pairs else "No pair was screened"
        return (
            f'<section><h2>{esc(title)}</h2><p class="note">{what} at a false discovery rate of '
            f"{fdr_text(screen.fdr)}: no hands to show.</p></section>"
        )
    parts = []
    for rank, r in enumerate(screen.pairs, start=1):
        if not r.flagged:
            continue
        hands = df.filter(pl.col("rank") == rank)
        signals = "; ".join(
            f"{collusion_dash.SIGNAL_NAMES[s][0]} {numbers.num(r.signals[s]['observed'], 1)} observed, "
            f"{numbers.num(r.signals[s]['expected'], 1)} expected (z {r.signals[s]['z']:+.1f})"
            for s in SIGNALS
        )
        rows = "".join(
            f'<tr><td class="id">{esc(h["hand_id"])}</td><td class="num">{h["event"]}</td><td>{esc(h["why"])}</td></tr>'
            for h in hands.iter_rows(named=True)
        )
        table = (
            "<table><thead><tr><th>hand</th><th>event</th><th>what happened</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            if rows
            else '<p class="note">No win or call of one on the other\'s tile to show: the score rests on the '
            "other signals.</p>"
        )
        parts.append(
            f'<div class="pair" id="pair-{rank}"><h3>#{rank} {_pair(*r.players)}: {r.shared_hands:,} shared hands, '
            f"score {r.score:.2f}, p = {r.p:.1e}, {esc(collusion_dash.q_label(r.q))}</h3>"
            f'<p class="note">Over their shared hands, both directions: {esc(signals)}. Sitting together: '
            f"×{esc(fmt(r.seating.get('ratio')))} of what random seating gives.</p>{table}</div>"
        )
    return (
        f"<section><h2>{esc(title)}</h2>{''.join(parts)}"
        '<p class="note">Hands: wins, pongs and kongs one of the pair made on the other\'s tile while both '
        "were in, biggest win first; event is the index in the record (0-based).</p></section>"
    )


def pairs_table(df: pl.DataFrame) -> str:
    title = "Top pairs"
    if not df.height:
        return f'<section><h2>{esc(title)}</h2><p class="note">No pair was screened.</p></section>'
    signal_heads = "".join(f"<th>{esc(collusion_dash.SIGNAL_NAMES[s][0])} z</th>" for s in SIGNALS)
    head = (
        "<th>#</th><th>pair</th><th>shared hands</th><th>score</th><th>needed</th><th>p</th><th>q</th>"
        f"<th>flagged</th>{signal_heads}<th>sit together</th>"
    )
    rows = []
    for r in df.iter_rows(named=True):
        cells = [
            f'<td class="num">{r["rank"]}</td>',
            f'<td class="id">{_pair(r["player_a"], r["player_b"])}</td>',
            f'<td class="num">{r["shared_hands"]:,}</td>',
            f'<td class="num">{r["score"]:.2f}</td>',
            f'<td class="num">{esc(fmt(r["critical"]))}</td>',
            f'<td class="num">{r["p"]:.1e}</td>',
            f'<td class="num">{esc(collusion_dash.q_text(r["q"]))}</td>',
            '<td><b class="flag">yes</b></td>' if r["flagged"] else "<td>no</td>",
            *(f'<td class="num">{r[f"{s}_z"]:+.1f}</td>' for s in SIGNALS),
            f'<td class="num">×{esc(fmt(r["sit_ratio"]))}</td>',
        ]
        rows.append(f'<tr class="{"flagged" if r["flagged"] else ""}">{"".join(cells)}</tr>')
    n = int(df["n_screened"][0])
    return (
        f'<section><h2>{esc(title)}</h2><div class="wide"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="note">The best {df.height:,} of {n:,} screened pairs. needed: the score the rank '
        f"needs to be flagged at a false discovery rate of {fdr_text(float(df['fdr'][0]))}. Signal z-scores: "
        "positive when the pair does more of it for each other than for their other opponents in the same "
        "hands. sit together: shared hands / what random seating gives (reported, not scored: friends sit "
        "together and play honestly).</p></section>"
    )


def teams_section(screen: collusion_dash.Screen, teams: pl.DataFrame, evidence: pl.DataFrame) -> str:
    """The teams the group screen reports (:func:`dashboards.collusion.prep_teams`), each with its hands replayed
    (anchors ``team-k``, as the findings link them)."""
    title = "Teams: groups of three screened as groups"
    if not teams.height:
        return (
            f'<section id="teams"><h2>{esc(title)}</h2><p class="note">No team is reported at a false discovery '
            f"rate of {fdr_text(screen.fdr)}.</p></section>"
        )
    parts = []
    for t in teams.iter_rows(named=True):
        k = t["rank"]
        signals = "; ".join(
            f"{collusion_dash.SIGNAL_NAMES[s][0]} z {t[f'{s}_z']:+.1f}" for s in collusion_dash.TEAM_SIGNALS
        )
        items = "".join(
            f'<details><summary><span class="id">{esc(h["hand_id"])}</span> event {h["event"]}: {esc(h["why"])}'
            f'</summary><div class="replay">{esc(h["replay"])}</div></details>'
            for h in evidence.filter(pl.col("rank") == k).iter_rows(named=True)
        )
        parts.append(
            f'<div class="team" id="team-{k}"><h3>Team #{k}: {", ".join(esc(p) for p in t["players"])}</h3>'
            f'<p class="note">{t["hands"]:,} hands with two or more of them at one table; score {t["score"]:.2f} '
            f"(z {t['z']:.2f} on the empirical null), p = {t['p']:.1e}, {esc(collusion_dash.q_label(t['q']))}. "
            f"Signals toward each other against their other opponents: {esc(signals)}.</p>"
            + (items or '<p class="note">No win or call of one on another\'s tile to replay.</p>')
            + "</div>"
        )
    return (
        f'<section id="teams"><h2>{esc(title)}</h2>{"".join(parts)}<p class="note">Every group of three who sat '
        "together pairwise is screened as a group: what each member does for the others against what it does for "
        "its other opponents at the same tables (an exact relabelling null), on rates fitted without the teams "
        "already found; Benjamini–Yekutieli over the groups. Hands: wins and calls one member made on another's "
        "tile, each as <code>xuezhan replay HAND --warehouse W</code> prints it. Details: pipeline/audit/teams.py."
        "</p></section>"
    )


def victims_section(df: pl.DataFrame, pages: dict[str, Page]) -> str:
    """The victim view's flagged lines (:func:`dashboards.collusion.prep_victims`), anchors ``victim-k``, each
    player linked to their page."""
    title = "Victims: who pays whom beyond what that opponent takes from others"
    if not df.height:
        return f'<section id="victims"><h2>{esc(title)}</h2><p class="note">No player is flagged.</p></section>'
    rows = []
    for r in df.iter_rows(named=True):
        to = ", ".join(player_link(p, pages) for p in r["to"])
        if r["kind"] == "team":
            what = (
                f"pays {r['with_per_hand']:+.1f} a hand with two or more of the team at the table ({r['hands']:,} "
                f"hands), {r['without_per_hand']:+.1f} with none of it ({r['without_hands']:,} hands)"
            )
        else:
            what = (
                f"paid {r['net']:+,} net over {r['hands']:,} shared hands, {r['excess']:+,.0f} beyond what that "
                "opponent takes from the others at those tables"
            )
        rows.append(
            f'<tr id="victim-{r["rank"]}"><td class="num">{r["rank"]}</td>'
            f'<td class="id">{player_link(r["player"], pages)}</td><td class="id">{to}</td><td>{esc(what)}</td>'
            f'<td class="num">{r["z"]:.1f}</td><td class="num">{esc(collusion_dash.q_text(r["q"]))}</td></tr>'
        )
    return (
        f'<section id="victims"><h2>{esc(title)}</h2><table><thead><tr><th>#</th><th>player</th><th>loses to</th>'
        f"<th>what</th><th>z</th><th>q</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        '<p class="note">Per hand, what a player pays an opponent (the engine\'s settlement) less what that '
        "opponent takes from an opponent on average, against the player's other opponents at the same table; with "
        "a reported team, the player's points per hand with two or more of it at the table against with none "
        "(the tables differ in who else sits there: this compares, it does not prove). Benjamini–Yekutieli. "
        "Details: pipeline/audit/victims.py.</p></section>"
    )


def method(screen: collusion_dash.Screen) -> str:
    names = "; ".join(
        f'<b>{esc(en)}</b> <span class="zh">{esc(zh)}</span>' for en, zh in collusion_dash.SIGNAL_NAMES.values()
    )
    return (
        '<section><h2>How the screen works</h2><p class="note">'
        f"Signals, each counted while both players were still in the hand: {names} — one discards a tile the "
        "other wins on or calls; one discards a tile the other could win on; one passes a win on the other's "
        "discard; one pays the other 查叫 or 花猪 money at the end of the wall. Each count is compared with "
        "what the two players' own rates with everyone else predict, and with the same players' other "
        "opponents in the same hands (an exact permutation null). The signals' z-scores combine into the "
        f"pair score, p = 1 − Φ(score); pairs are flagged by Benjamini–Yekutieli q ≤ {fdr_text(screen.fdr)} "
        "(valid when pairs share players). Pairs with fewer shared hands than the threshold are not "
        "screened. Details: pipeline/audit/collusion.py.</p></section>"
    )
