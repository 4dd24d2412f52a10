"""The site: the HTML report of a warehouse, assembled from the dashboards: what needs attention and an overview,
a player directory and a page per player, a data-quality page, the scoring audit, the collusion screen, the
information-cheat screen and the stacked-deal screen.

The report opens one DuckDB connection on the warehouse; every dashboard, the audit and the screens run on it.

Layout under ``out_dir``::

    index.html                 what needs attention (every finding, most serious first, linked to its evidence),
                               then the overview: fan, patterns, outcomes, flower pigs, deal-in and net points
    findings.json              the same findings, one object each (dashboards.findings.prep_findings)
    players.html               the player directory: every player, sortable, linked to their page
    player-<id>.html           one per player (or per selected player): their findings, tendencies beside all
                               players' (inline SVG intervals), head to head against every opponent, win and
                               deal-in rates over time (inline SVG), results against the room, audit findings
    quality.html               validator issues and rejected lines by code
    health.html                the ingest runs as ``xuezhan check`` judges them: the latest run's alerts, each
                               table's settlement-error rate run by run, every run's figures
    audit.html                 the audit's findings by money: by code, month and player; the top findings
    collusion.html             the pair and team screens: heat map of pair scores, teams and victims, hands replayed
    information.html           the information-cheat screen, one row per player, flagged players' hands replayed
    deals.html                 the stacked-deal screen: flagged players, seats, tables and sessions, each
                               evidence hand replayed
    charts/<page>-<chart>.png  every chart of the pages above as a PNG file

Each HTML file stands alone: styles and a small script inline, charts embedded as base64 PNG or drawn as inline
SVG, no fetch of any kind (the pages link to each other and to the PNG files, nothing more); the script marks
the images decoded for a headless browser, sorts tables and filters the directory (:mod:`dashboards.html`).

The first screen shows each finding's case (``xuezhan case``: :mod:`pipeline.audit.cases`, read from the
warehouse's case log): the new findings apart from those already in a case, the dismissed ones that have not grown
hidden and counted. The health page is :func:`pipeline.analytics.health.check` on the whole warehouse, whatever the
report's scope (its runs are the warehouse's).

This module is the orchestration: it opens the warehouse, runs each screen once, draws the charts and writes
the pages; each page's HTML is a function of those values in :mod:`dashboards.pages` (one module per page),
written with the shared layer of :mod:`dashboards.html`.

Cost: the pages with charts draw about twenty matplotlib figures in all; a player's page draws none (its
figures are computed for every player at once, its intervals are SVG strings), so thousands of players add
seconds, not minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from dashboards import ChartSpec, levels_note, overview, player, quality
from dashboards import audit as audit_dash
from dashboards import collusion as collusion_dash
from dashboards import deals as deals_dash
from dashboards import findings as found_dash
from dashboards import health as health_dash
from dashboards import information as info_dash
from dashboards.html import Page, document
from dashboards.pages import audit as audit_html
from dashboards.pages import collusion as collusion_html
from dashboards.pages import deals as deals_html
from dashboards.pages import health as health_html
from dashboards.pages import information as info_html
from dashboards.pages import overview as overview_html
from dashboards.pages import quality as quality_html
from dashboards.pages.players import PlayerParts, player_pages
from dashboards.pages.players import directory as _directory
from pipeline.analytics import queries
from pipeline.analytics.health import Health, Thresholds
from pipeline.analytics.scales import scales
from pipeline.analytics.scope import EVERYTHING, Scope
from pipeline.audit import scoring
from pipeline.audit.cases import Case, read_cases
from pipeline.audit.collusion import screen_levels
from pipeline.audit.information import FDR
from pipeline.report import charts
from pipeline.report.staging import staged_folder

# The build calls the player directory as _directory (imported above): the name tests/test_cli_interrupt.py
# replaces to stop a run mid-build.


# ---------------------------------------------------------------------------------------------- entry point
def build_report(
    warehouse_dir: str | Path,
    out_dir: str | Path,
    *,
    players: list[str] | None = None,
    top_players: int | None = None,
    min_hands: int = 200,
    on_step: Callable[[str], None] | None = None,
    scope: Scope | None = None,
    thresholds: Thresholds | None = None,
) -> Path:
    """Write the report of the warehouse at ``warehouse_dir`` into ``out_dir``; return the path of index.html.

    ``players``: the players who get a page; default: every player with a replayed hand, or with
    ``top_players`` the ``top_players`` players with most replayed hands (the directory lists every player
    still, and links those with a page).
    ``min_hands``: the shared hands a pair needs to be screened for collusion; when no pair of the warehouse
    has that many, the page falls back to a smaller threshold and says which
    (:func:`pipeline.audit.screen.choose_min_hands`).
    ``on_step`` is called with the name of each chart before it is drawn, before each screen runs, and before
    the player pages are written (progress for the CLI). ``scope``: the hands every page covers (default: all).
    ``thresholds``: what the health page judges the last ingest run by (default: the shipped ones).
    Raises ``FileNotFoundError`` without a warehouse and :class:`dashboards.player.UnknownPlayer` (a
    ``ValueError``) for a player with no replayed hands; nothing is written then.
    """
    con = queries.connect(warehouse_dir, scope=scope)  # scope: every page over the hands in it
    queries.remember_bases(con)  # the pages share the players' base counts
    try:
        selected = player.select_players(con, players, top_players)
        health = health_dash.check_of(warehouse_dir, con, scope or EVERYTHING, thresholds)
        cases = read_cases(warehouse_dir)
        with staged_folder(Path(out_dir)) as stage:  # every page of this run, or none (an interrupted run)
            index = _build(con, stage, selected, min_hands, on_step, scope or EVERYTHING, health, cases)
        return Path(out_dir) / index.relative_to(stage)
    finally:
        con.close()


def _build(
    con: duckdb.DuckDBPyConnection,
    out: Path,
    selected: list[str],
    min_hands: int,
    on_step: Callable[[str], None] | None,
    scope: Scope,
    health: Health,
    cases: dict[str, Case],
) -> Path:
    (out / "charts").mkdir(parents=True, exist_ok=True)
    step = on_step or (lambda _name: None)
    font = charts.fonts()

    index = Page(found_dash.INDEX, "Overview", "What needs attention · overview")
    directory = Page(found_dash.PLAYERS, "Players", "Players")
    quality_page = Page(found_dash.QUALITY, "Data quality", "Data quality")
    health_page = Page(found_dash.HEALTH, "Health", "Ingest health")
    audit_page = Page(found_dash.AUDIT, "Audit", "Scoring and rule audit")
    collusion_page = Page(found_dash.COLLUSION, "Collusion", "Collusion screen")
    info_page = Page(found_dash.INFORMATION, "Info cheats", "Information-cheat screen")
    deals_page = Page(found_dash.DEALS, "Deals", "Stacked deals")
    pages_of = player_pages(selected)
    pages = [index, directory, quality_page, health_page, audit_page, collusion_page, info_page, deals_page]  # nav

    by_level = queries.hands_by_level(con)
    replayed = {level: c["replayed"] for level, c in by_level.items()}
    scale = scales(con)  # the scale groups (profile and base): money in one unit, players beside their group's
    counts = queries.run(con, "warehouse_counts").row(0, named=True)

    def draw(
        prefix: str, spec: ChartSpec, *args: Any, hands: dict[str, int] = replayed
    ) -> tuple[pl.DataFrame, charts.Chart]:
        """Prepare (``spec.prep(*args)``), render and save one chart; its caption says the hands it used by
        level of record (``hands``: the hands it was computed over, by level)."""
        step(f"{prefix}: {spec.name}")
        df = spec.prep(*args)
        png = charts.render(spec.plot, df, size=spec.size(df), choice=font)
        note = levels_note(spec.figures, hands)
        caption = f"{spec.caption} ({note})" if note else spec.caption
        chart = charts.Chart(f"{prefix}-{spec.name}", caption, caption, png)
        (out / "charts" / f"{chart.name}.png").write_bytes(png)
        return df, chart

    def write(page: Page, body: list[str], here: Page | None = None) -> None:
        (out / page.file).write_text(document(page, pages, body, font, here=here, scope=scope), encoding="utf-8")

    # Data quality
    issues, issues_chart = draw("quality", quality.CHARTS[0], con, hands={k: c["stored"] for k, c in by_level.items()})
    rejects, rejects_chart = draw("quality", quality.CHARTS[1], con)
    write(
        quality_page,
        quality_html.body(
            scope=scope,
            summary=quality.prep_summary(con),
            issues=issues,
            issues_chart=issues_chart,
            rejects=rejects,
            rejects_chart=rejects_chart,
        ),
    )

    # Health: the check of the last ingest run against the runs before it (pipeline.analytics.health), as is
    figures = [draw("health", spec, health)[1] for spec in health_dash.CHARTS] if health.run is not None else []
    write(health_page, health_html.body(health=health, figures=figures, scoped=bool(scope.filters)))

    # Audit: the findings are the audit's (pipeline.audit.scoring), computed once for every chart.
    result = scoring.audit(con)
    by_code, by_month, by_player = audit_dash.CHARTS
    figures = [draw("audit", by_code, result)[1], draw("audit", by_month, con, result)[1]]
    figures.append(draw("audit", by_player, result)[1])
    top = audit_dash.prep_top_findings(result, limit=found_dash.AUDIT_ROWS)
    stored = int(counts["hands"] or 0)
    write(
        audit_page,
        audit_html.body(result=result, stored=stored, quality_page=quality_page, scale=scale, figures=figures, top=top),
    )

    # Collusion: the screen runs once; the charts and tables arrange its result.
    step("collusion: screen")
    screen = collusion_dash.screen_pairs(con, min_hands=min_hands)
    figures = [draw("collusion", spec, screen)[1] for spec in collusion_dash.CHARTS]
    victims = collusion_dash.prep_victims(screen)
    body = collusion_html.body(
        screen=screen,
        by_signal=screen_levels(replayed),
        figures=figures,
        teams=collusion_dash.prep_teams(screen),
        team_evidence=collusion_dash.prep_team_evidence(con, screen),
        victims=victims,
        evidence=collusion_dash.prep_evidence(screen),
        top=collusion_dash.prep_top_pairs(screen, limit=collusion_dash.pairs_shown(screen)),
        pages=pages_of,
    )
    write(collusion_page, body)

    # Information cheats
    step("information: screen")
    seers, stale = info_dash.screen_noted(con)
    evidence, waits = info_dash.prep_evidence(con, seers), info_dash.prep_anticipation(con, seers)
    write(info_page, info_html.body(seers=seers, stale=stale, evidence=evidence, waits=waits, pages=pages_of))

    # Stacked deals: the screen runs once; each flagged group's hands are replayed from their sources.
    step("deals: screen")
    deals = deals_dash.screen(con)
    figures = [draw("deals", spec, deals)[1] for spec in deals_dash.CHARTS]
    evidence = deals_dash.prep_evidence(con, deals)
    write(deals_page, deals_html.body(deals=deals, figures=figures, evidence=evidence, top=deals_dash.prep_top(deals)))

    # What needs attention: the findings of every page above, and players' results against the room.
    step("findings")
    every = player.prep_every_player(con, scale=scale)
    decisions = player.prep_every_player_decisions(con, scale)  # with the engine-assistance screen's stored counts
    unusual = found_dash.unusual_of(con, scale)  # each player beside the other players of their scale group
    found = found_dash.prep_findings(
        pairs=screen.pairs,
        pair_fdr=screen.fdr,
        teams=screen.teams,
        victims=victims,
        info=seers,
        info_fdr=FDR,
        deals=deals.results,
        deals_fdr=deals.fdr,
        assist=decisions.assist,  # what `xuezhan review` stored, read: the report reviews no hand
        audit=result,
        counts=counts,
        issues=issues,
        rejects=rejects,
        unusual=unusual,
        page_of=lambda pid: pages_of[pid].file if pid in pages_of else None,
    )
    standing = found_dash.with_cases(found, cases)  # each finding's case: new, open, ..., dismissed (hidden)
    flags = found_dash.prep_player_flags(standing, result, unusual)
    (out / found_dash.FINDINGS_JSON).write_text(standing.write_json(), encoding="utf-8")  # for scripts, the demo

    # Overview
    wins = int(overview.prep_fan_distribution(con)["wins"].sum() or 0)
    tables = overview.prep_tables(con)
    figures = [draw("overview", spec, con)[1] for spec in overview.CHARTS]
    body = overview_html.body(
        font=font,
        found=standing,
        unusual=unusual,
        reach=found_dash.reach_text(decisions.assist),  # what the decision screens can see: no flag, no evidence
        pages=pages_of,
        counts=counts,
        players=player.prep_top_players(con, 10**9).height,
        wins=wins,
        links=(directory, quality_page, health_page, audit_page, collusion_page, info_page),
        scale=scale,
        tables=tables,
        by_level=by_level,
        figures=figures,
    )
    write(index, body)

    # The player directory, and a page per selected player (string assembly: no chart, no query per player)
    step("players")
    write(directory, [_directory(player.prep_directory(every).join(flags, on="player", how="left"), pages_of, unusual)])
    parts = PlayerParts.of(
        every=every,
        levels=player.prep_every_player_levels(con),
        fan=player.prep_every_player_fan(con, scale),
        opponents=player.prep_every_head_to_head(con),
        rolling=player.iter_rolling(con),
        found=found,
        unusual=unusual,
        result=result,
        pages=pages_of,
        scale=scale,
        states={r["key"]: (r["status"], r["why"], r["case_id"]) for r in standing.iter_rows(named=True) if r["key"]},
        decisions=decisions,
    )
    for pid, page in pages_of.items():
        write(page, parts.body(pid), here=directory)
    return out / index.file
