"""The site: the HTML report of a warehouse, assembled from the dashboards: what needs attention and an overview,
a player directory and a page per player, a data-quality page, the scoring audit, the collusion screen, the
information-cheat screen and the stacked-deal screen.

The report opens one DuckDB connection on the warehouse; every dashboard, the audit and the collusion screen
run on it.

Layout under ``out_dir``::

    index.html                 what needs attention (every finding, most serious first, linked to its evidence),
                               then the overview: fan, patterns, outcomes, flower pigs, deal-in and net points
    findings.json              the same findings, one object each (dashboards.findings.prep_findings)
    players.html               the player directory: every player, sortable, linked to their page
    player-<id>.html           one per player (or per selected player): their findings, tendencies beside all
                               players' (inline SVG intervals), head to head against every opponent, win and
                               deal-in rates over time (inline SVG), results against the room, audit findings
    quality.html               validator issues and rejected lines by code
    audit.html                 the audit's findings by money: by code, month and player; the top findings
    collusion.html             the pair and team screens: heat map of pair scores, teams and victims, hands replayed
    information.html           the information-cheat screen, one row per player, flagged players' hands replayed
    deals.html                 the stacked-deal screen: flagged players, seats, tables and sessions, each
                               evidence hand replayed
    charts/<page>-<chart>.png  every chart as a PNG file (the overview, quality, audit, collusion and deals pages')

Each HTML file stands alone: styles and a small script inline, charts embedded as base64 PNG or drawn as inline
SVG, no fetch of any kind (the pages link to each other and to the PNG files, nothing more). The inline script
marks every ``<img>`` with ``data-loaded="true"`` once it has decoded (``naturalWidth > 0``) and the ``<body>``
with ``data-images="loaded/total"``, so a headless browser's ``--dump-dom`` shows whether the page rendered; it
also sorts a ``table.sortable`` by the heading clicked and filters the directory by player id.

Cost: the pages with charts draw about twenty matplotlib figures in all; a player's page draws none (its
figures are computed for every player at once, its intervals are SVG strings), so thousands of players add
seconds, not minutes.

>>> build_report("warehouse", "report", players=["p001"])  # doctest: +SKIP
PosixPath('report/index.html')
"""

from __future__ import annotations

import html
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import duckdb
import polars as pl

from dashboards import ChartSpec, levels_note, overview, player, quality
from dashboards import audit as audit_dash
from dashboards import collusion as collusion_dash
from dashboards import deals as deals_dash
from dashboards import findings as found_dash
from dashboards import information as info_dash
from pipeline.analytics import queries
from pipeline.analytics.metrics import METRIC_BY_ID
from pipeline.analytics.scales import Scales, scales
from pipeline.analytics.scope import EVERYTHING, WHOLE, Scope
from pipeline.audit import scoring
from pipeline.audit.anticipation import MIN_DECISIONS, AnticipationResult, Seer
from pipeline.audit.collusion import SIGNALS, screen_levels
from pipeline.audit.information import FDR, MIN_DISCARDS, InfoResult
from pipeline.audit.teams import TeamResult
from pipeline.report import charts, svg
from pipeline.report.names import file_stem
from pipeline.report.staging import staged_folder

TITLE = "xuezhan report · 血战到底"


@dataclass(frozen=True, slots=True)
class Page:
    file: str  # file name under out_dir
    nav: str  # its name in the navigation bar
    title: str


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
) -> Path:
    """Write the report of the warehouse at ``warehouse_dir`` into ``out_dir``; return the path of index.html.

    ``players``: the players who get a page; default: every player with a replayed hand, or with
    ``top_players`` the ``top_players`` players with most replayed hands (the directory lists every player
    still, and links those with a page).
    ``min_hands``: the shared hands a pair needs to be screened for collusion; when no pair of the warehouse
    has that many, the page falls back to a smaller threshold and says which
    (:func:`dashboards.collusion.choose_min_hands`).
    ``on_step`` is called with the name of each chart before it is drawn, before each screen runs, and before
    the player pages are written (progress for the CLI). ``scope``: the hands every page covers (default: all).
    Raises ``FileNotFoundError`` without a warehouse and :class:`dashboards.player.UnknownPlayer` (a
    ``ValueError``) for a player with no replayed hands; nothing is written then.
    """
    con = queries.connect(warehouse_dir, scope=scope)  # scope: every page over the hands in it
    queries.remember_bases(con)  # the pages share the players' base counts
    try:
        selected = _select_players(con, players, top_players)
        with staged_folder(Path(out_dir)) as stage:  # every page of this run, or none (an interrupted run)
            index = _build(con, stage, selected, min_hands, on_step, scope or EVERYTHING)
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
) -> Path:
    (out / "charts").mkdir(parents=True, exist_ok=True)
    step = on_step or (lambda _name: None)
    font = charts.fonts()

    index = Page(found_dash.INDEX, "Overview", "What needs attention · overview")
    directory = Page(found_dash.PLAYERS, "Players", "Players")
    quality_page = Page(found_dash.QUALITY, "Data quality", "Data quality")
    audit_page = Page(found_dash.AUDIT, "Audit", "Scoring and rule audit")
    collusion_page = Page(found_dash.COLLUSION, "Collusion", "Collusion screen")
    info_page = Page(found_dash.INFORMATION, "Info cheats", "Information-cheat screen")
    deals_page = Page(found_dash.DEALS, "Deals", "Stacked deals")
    player_pages = _player_pages(selected)
    pages = [index, directory, quality_page, audit_page, collusion_page, info_page, deals_page]  # the navigation bar

    by_level = queries.hands_by_level(con)
    replayed = {level: c["replayed"] for level, c in by_level.items()}
    scale = scales(con)  # the scale groups (profile and base): money in one unit, players beside their group's

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
        (out / page.file).write_text(_page(page, pages, body, font, here=here, scope=scope), encoding="utf-8")

    # Data quality
    body = [_whole_note(scope)] if scope.filters else []
    body += [_table_section("The warehouse", quality.prep_summary(con), {"figure": "figure", "value": "count"})]
    issues, chart = draw("quality", quality.CHARTS[0], con, hands={k: c["stored"] for k, c in by_level.items()})
    body += [
        _figure(chart),
        _codes_table("Issues by code", issues, ("code", "severity", "issues", "hands", "share"), "issues"),
    ]
    rejects, chart = draw("quality", quality.CHARTS[1], con)
    body += [_figure(chart), _codes_table("Rejects by code", rejects, ("code", "rejects", "bytes", "share"), "rejects")]
    write(quality_page, body)

    # Audit: the findings are the audit's (pipeline.audit.scoring), computed once for every chart.
    result = scoring.audit(con)
    by_code, by_month, by_player = audit_dash.CHARTS
    body = [_audit_summary(con, result, quality_page, scale)]
    body += [_figure(draw("audit", by_code, result)[1])]
    body += [_figure(draw("audit", by_month, con, result)[1])]
    body += [_figure(draw("audit", by_player, result)[1])]
    body.append(_findings_table(audit_dash.prep_top_findings(result, limit=found_dash.AUDIT_ROWS)))
    write(audit_page, body)

    # Collusion: the screen runs once; the charts and tables arrange its result.
    step("collusion: screen")
    screen = collusion_dash.screen_pairs(con, min_hands=min_hands)
    body = [_collusion_summary(screen), _collusion_power(screen), _collusion_levels(screen_levels(replayed))]
    body += [_figure(draw("collusion", spec, screen)[1]) for spec in collusion_dash.CHARTS]
    body.append(
        _teams_section(screen, collusion_dash.prep_teams(screen), collusion_dash.prep_team_evidence(con, screen))
    )
    body.append(_victims_section(collusion_dash.prep_victims(screen), player_pages))
    body.append(_evidence_section(screen, collusion_dash.prep_evidence(screen)))
    body.append(_pairs_table(collusion_dash.prep_top_pairs(screen, limit=collusion_dash.pairs_shown(screen))))
    body.append(_collusion_method(screen))
    write(collusion_page, body)

    # Information cheats
    step("information: screen")
    seers, stale = info_dash.screen_noted(con)
    body = [_info_summary(seers, stale), _info_table(seers, player_pages)]
    evidence = info_dash.prep_evidence(con, seers), info_dash.prep_anticipation(con, seers)
    body += [_info_evidence(seers, *evidence, player_pages), _info_method()]
    write(info_page, body)

    # Stacked deals: the screen runs once; each flagged group's hands are replayed from their sources.
    step("deals: screen")
    deals = deals_dash.screen(con)
    body = [_deals_summary(deals), _deals_commitments(deals)]
    body += [_figure(draw("deals", spec, deals)[1]) for spec in deals_dash.CHARTS]
    body.append(_deals_evidence(deals_dash.prep_evidence(con, deals)))
    body += [_deals_table(deals_dash.prep_top(deals)), _deals_method()]
    write(deals_page, body)

    # What needs attention: the findings of every page above, and players' results against the room.
    step("findings")
    every = player.prep_every_player(con, scale=scale)
    unusual = found_dash.unusual_of(con, scale)  # each player beside the other players of their scale group
    found = found_dash.prep_findings(
        pairs=screen.pairs,
        pair_fdr=screen.fdr,
        teams=screen.teams,
        victims=collusion_dash.prep_victims(screen),
        info=seers,
        info_fdr=FDR,
        deals=deals.results,
        deals_fdr=deals.fdr,
        audit=result,
        counts=queries.run(con, "warehouse_counts").row(0, named=True),
        issues=issues,
        rejects=rejects,
        unusual=unusual,
        page_of=lambda pid: player_pages[pid].file if pid in player_pages else None,
    )
    flags = found_dash.prep_player_flags(found, result, unusual)
    (out / found_dash.FINDINGS_JSON).write_text(found.write_json(), encoding="utf-8")  # for scripts and the demo

    # Overview
    body = [font_notice(font), _findings_section(found, unusual, player_pages)]
    body.append(_overview_summary(con, directory, quality_page, audit_page, collusion_page, info_page, scale))
    body.append(_tables_section(overview.prep_tables(con)))
    body.append(_levels_section(by_level))
    body += [_figure(draw("overview", spec, con)[1]) for spec in overview.CHARTS]
    write(index, body)

    # The player directory, and a page per selected player (string assembly: no chart, no query per player)
    step("players")
    table = player.prep_directory(every).join(flags, on="player", how="left")
    write(directory, [_directory(table, player_pages, unusual)])
    parts = _PlayerParts.of(con, every, found, unusual, result, player_pages, scale)
    for pid, page in player_pages.items():
        write(page, parts.body(pid), here=directory)
    return out / index.file


def _select_players(con: duckdb.DuckDBPyConnection, players: list[str] | None, top: int | None) -> list[str]:
    if players is None:
        return player.prep_top_players(con, 10**9 if top is None else top)["player"].to_list()
    chosen = list(dict.fromkeys(players))
    known = set(player.prep_top_players(con, 10**9)["player"].to_list())
    unknown = [p for p in chosen if p not in known]
    if unknown:
        raise player.UnknownPlayer(f"no replayed hands of player {', '.join(map(repr, unknown))} in the warehouse")
    return chosen


def page_file(player_id: str, digest_chars: int = 8) -> str:
    """``player-<id>.html``, the id made a file name by :func:`pipeline.report.names.file_stem` (readable,
    safe, distinct): one path component of at most 7 + 64 + 1 + ``digest_chars`` + 5 bytes.

    >>> page_file("p001"), page_file("张三/../x"), page_file("P001")
    ('player-p001.html', 'player-张三_.._x-7975e758.html', 'player-P001-df1e4005.html')
    """
    return f"player-{file_stem(player_id, digest_chars)}.html"


def _short(text: str, limit: int = 40) -> str:
    """A data string cut for a navigation bar or a title, with a digest of the whole (the page says it whole).

    >>> _short("p001"), _short("x" * 50, 8)
    ('p001', 'xxxxxxx…#77cf')
    """
    return text if len(text) <= limit else f"{text[: limit - 1]}…#{charts.digest(text, 4)}"


def _player_pages(selected: Iterable[str]) -> dict[str, Page]:
    chosen = list(selected)
    files = {p: page_file(p) for p in chosen}
    if len(set(files.values())) < len(files):  # two digests of 32 bits alike: longer digests for every page
        files = {p: page_file(p, 40) for p in chosen}
    return {p: Page(files[p], _short(p), f"Player {_short(p)}") for p in chosen}


# ---------------------------------------------------------------------------------------------- page parts
# Control characters, bidirectional overrides (they reorder the text around them), lone surrogates: shown as
# \\uXXXX, never written into a page raw.
_UNSHOWN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _esc(value: object) -> str:
    """Text (a data string above all: a player, hand or table id) for an HTML text node or a quoted
    attribute: markup escaped, characters no page should hold raw written as ``\\uXXXX``.

    >>> _esc('<b a="1">\u202e\x07')
    '&lt;b a=&quot;1&quot;&gt;\\\\u202e\\\\u0007'
    """
    text = _UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))
    return html.escape(text, quote=True)


def _href(file: str) -> str:
    """A link to a file of the report (a name under ``out_dir``), percent-encoded and escaped."""
    return _esc(quote(file))


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height from the PNG header (IHDR)."""
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def _figure(chart: charts.Chart) -> str:
    width, height = _png_size(chart.png)
    return (
        f'<figure class="chart" id="{_esc(chart.name)}">'
        f'<img src="{chart.data_uri()}" alt="{_esc(chart.alt)}" width="{width}" height="{height}">'
        f'<figcaption>{_esc(chart.caption)} <a href="{_href(f"charts/{chart.name}.png")}">PNG</a></figcaption>'
        "</figure>"
    )


def _overview_summary(
    con: duckdb.DuckDBPyConnection,
    directory: Page,
    quality_page: Page,
    audit_page: Page,
    collusion_page: Page,
    info_page: Page,
    scale: Scales,
) -> str:
    counts = queries.run(con, "warehouse_counts").row(0, named=True)
    top = player.prep_top_players(con, 10**9)
    wins = int(overview.prep_fan_distribution(con)["wins"].sum() or 0)
    return (
        '<section class="summary" id="overview">'
        f"<p><b>{counts['replayed_hands']:,}</b> replayed hands ({counts['hands']:,} stored, "
        f"{counts['valid_hands']:,} valid, {counts['rejects']:,} rejected lines), "
        f"<b>{top.height:,}</b> players, <b>{wins:,}</b> wins. "
        "Statistics count replayed hands only; fan is the engine's total before any cap "
        "(平胡 = 1 fan).</p>"
        + _scales_note(scale)
        + f'<p>Every player: <a href="{_href(directory.file)}">the player directory</a>. '
        f'Data quality: <a href="{_href(quality_page.file)}">issues and rejects</a>. '
        f'Audit: <a href="{_href(audit_page.file)}">scoring differences and rule violations by money</a>. '
        f'Collusion: <a href="{_href(collusion_page.file)}">the pair and team screens, and victims</a>. '
        f'Information cheats: <a href="{_href(info_page.file)}">the single-player screen</a>.</p>'
        "</section>"
    )


def _link(target: str) -> str:
    """An href to ``file#anchor`` of the report: the file percent-encoded, the anchor (ours: ASCII) kept.

    >>> _link("collusion.html#pair-1"), _link("#scoring"), _link("player-张.html")
    ('collusion.html#pair-1', '#scoring', 'player-%E5%BC%A0.html')
    """
    file, _, anchor = target.partition("#")
    return (_href(file) if file else "") + (f"#{_esc(anchor)}" if anchor else "")


def _who(pid: str, pages: dict[str, Page]) -> str:
    """A player's id, linked to their page when they have one."""
    page = pages.get(pid)
    return f'<a href="{_href(page.file)}">{_esc(pid)}</a>' if page else _esc(pid)


SEVERITY_TEXT = {
    "high": "flagged by a cheating screen at its false discovery rate: a lead to replay, not a verdict",
    "medium": "money settled wrongly, or results far outside the room's range",
    "low": "records that could not be used",
}


def _findings_rows(found: pl.DataFrame, pages: dict[str, Page]) -> str:
    in_bases = found["base"].drop_nulls().n_unique() > 1  # money of several bases: ranked by money ÷ base
    rows = []
    for r in found.iter_rows(named=True):
        names = r["players"] or []
        if r["kind"] in ("pair", "team", "information", "results") and names:
            who = (" &amp; " if r["kind"] == "pair" else ", ").join(_who(p, pages) for p in names)
        else:
            who = _esc(r["subject"])
        base = f" at base {r['base']:,}" if in_bases and r["base"] is not None else ""
        money = f'<br><span class="n">{r["money"]:,} points{base}</span>' if r["money"] is not None else ""
        rows.append(
            f'<tr class="sev-{r["severity"]}"><td class="num">{r["rank"]}</td>'
            f'<td><span class="sev {r["severity"]}">{r["severity"]}</span></td>'
            f"<td>{_esc(r['label'])}</td><td>{who}{money}</td><td>{_esc(r['detail'])}</td>"
            f'<td><a href="{_link(r["evidence"])}">{_esc(r["evidence_text"])}</a></td></tr>'
        )
    head = "".join(f"<th>{h}</th>" for h in ("#", "severity", "what", "who / where", "detail", "evidence"))
    return f'<table class="findings"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _findings_section(found: pl.DataFrame, unusual: pl.DataFrame, pages: dict[str, Page]) -> str:
    """The first screen of the report: every finding, most serious first, each linking to its evidence."""
    if not found.height:
        verdict = (
            '<p class="verdict ok"><b>Nothing needs attention.</b> No pair or team is flagged by the collusion '
            "screen, no player by the information-cheat screen, the audit found no scoring error, no player's "
            "results are outside the room's range, every stored record is valid and every input line was a "
            "record.</p>"
        )
        table = ""
    else:
        counts = found["severity"].value_counts()
        by = {r["severity"]: r["count"] for r in counts.iter_rows(named=True)}
        split = ", ".join(f"{by[s]:,} {s}" for s in found_dash.SEVERITIES if s in by)
        verdict = f'<p class="verdict"><b>{_esc(found_dash.findings_text(found.height))}</b> ({split})</p>'
        table = _findings_rows(found, pages)
    legend = "; ".join(f'<span class="sev {s}">{s}</span> {_esc(t)}' for s, t in SEVERITY_TEXT.items())
    tested = int(unusual["tested"].sum()) if unusual.height else 0
    min_hands = found_dash.MIN_HANDS
    groups = unusual["group"].drop_nulls().n_unique() if unusual.height else 0
    within = (
        f" Each player is compared with the other players of their own scale group (a profile and its base: "
        f"{groups} here), so that rooms playing for different stakes are never each other's reference."
        if groups > 1
        else ""
    )
    return (
        f'<section class="findings" id="findings"><h2>What needs attention</h2>{verdict}{table}'
        f'<p class="note">Severity: {legend}. Scoring errors: the {found_dash.TOP_ERRORS} biggest by money here, '
        "every finding on the audit page. Unusual results: each player's net points per hand against the range "
        "the other players give: their average, how much players truly differ beyond chance (the spread of skill "
        "is in the reference, so a good player is not unusual), and the player's own sampling error; two-sided "
        f"p-values, Benjamini–Yekutieli q ≤ {found_dash.FDR:g} over the {tested:,} players with at least "
        f"{min_hands:,} replayed hands.{within} An unusual result is not an accusation: a far better player, a run "
        "of luck, or a player who is helped look alike.</p></section>"
    )


def _cell(value: Any, low: Any, high: Any, share: bool) -> str:
    fmt = charts.pct if share else charts.num
    if value is None:
        return "–"
    span = charts.interval(low, high, fmt)
    return f'{fmt(value)} <span class="ci">{_esc(span)}</span>' if span else fmt(value)


Lookup = dict[tuple[str, str], dict[str, Any]]  # (metric, who) -> that row of the player's metrics


def _lookup(df: pl.DataFrame) -> Lookup:
    """The rows of a player's metrics (:func:`dashboards.player.prep_player_metrics`' columns) by metric and
    side: a page reads a dozen of them, and a dictionary look-up costs nothing beside a frame filter."""
    return {(r["metric"], r["who"]): r for r in df.iter_rows(named=True)}


def _player_table(rows_of: Lookup, population: str = player.POPULATION) -> str:
    """Every metric: the player's value [95%] (n) beside the population's (``population``: its words)."""
    rows = []
    for mid in dict.fromkeys(metric for metric, _ in rows_of):
        m = METRIC_BY_ID[mid]
        cells = []
        for who in (player.PLAYER, player.POPULATION):
            r = rows_of[(mid, who)]
            if m.kind == "count":
                cells.append(f"{charts.num(r['value'])}")
            else:
                n = f' <span class="n">n={int(r["den"] or 0):,}</span>'
                cells.append(_cell(r["value"], r["ci_low"], r["ci_high"], m.kind == "rate") + n)
        rows.append(
            f'<tr><td><span class="zh">{_esc(m.name_zh)}</span> {_esc(m.name_en)}</td>'
            f'<td class="num">{cells[0]}</td><td class="num">{cells[1]}</td>'
            f'<td class="def">{_esc(m.definition)} ({_esc(m.unit)})</td></tr>'
        )
    return (
        '<section><h2>Every metric</h2><table class="metrics"><thead><tr><th>metric</th><th>player</th>'
        f"<th>{_esc(population)}</th><th>definition</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        '<p class="note">Rates with 95% Wilson intervals, means with 95% normal intervals; n is the '
        "denominator (hands, wins, deal-ins …). Definitions: schemas/METRICS.md.</p></section>"
    )


# ---------------------------------------------------------------------------------------------- players
def _ci(low: Any, high: Any, share: bool) -> str:
    span = charts.interval(low, high, charts.pct if share else charts.num)
    return f' <span class="ci">{_esc(span)}</span>' if span else ""


def _badges(flags: list[str] | None, severity: str | None) -> str:
    return " ".join(f'<span class="badge {_esc(severity or "")}">{_esc(f)}</span>' for f in flags or [])


def _num_cell(value: float | int | None, text: str) -> str:
    v = "" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)
    return f'<td class="num" data-v="{v}">{text}</td>'


def _directory(table: pl.DataFrame, pages: dict[str, Page], unusual: pl.DataFrame) -> str:
    """players.html: every player with a replayed hand, one sortable row each, linked to their page; with the
    player's scale group where the players are of several (their points are in its unit)."""
    mixed = table["group"].drop_nulls().n_unique() > 1
    heads = (
        ("player", "text"),
        *((("scale group", "text"),) if mixed else ()),
        ("hands", "num"),
        ("win rate", "num"),
        ("deal-in rate", "num"),
        ("net points", "num"),
        ("per hand", "num"),
        ("vs room", "num"),
        ("audit", "num"),
        ("flags", "num"),
    )
    head = "".join(f'<th data-sort="{kind}" class="{kind}" title="sort">{_esc(h)}</th>' for h, kind in heads)
    rows = []
    for r in table.iter_rows(named=True):
        pid = r["player"]
        flags = _badges(r["flags"], r["severity"])
        z = r["z"]
        rows.append(
            f'<tr class="{"flagged" if r["severity"] == "high" else ""}">'
            f'<td class="id" data-v="{_esc(pid)}">{_who(pid, pages)}</td>'
            + (f'<td data-v="{_esc(r["group"] or "")}">{_esc(r["group"] or "–")}</td>' if mixed else "")
            + _num_cell(r["hands"], f"{r['hands']:,}")
            + _num_cell(r["win_rate"], charts.pct(r["win_rate"]) + _ci(r["win_low"], r["win_high"], True))
            + _num_cell(
                r["deal_in_rate"], charts.pct(r["deal_in_rate"]) + _ci(r["deal_in_low"], r["deal_in_high"], True)
            )
            + _num_cell(r["net"], f"{r['net']:+,}" if r["net"] is not None else "–")
            + _num_cell(
                r["per_hand"],
                (f"{r['per_hand']:+.2f}" if r["per_hand"] is not None else "–")
                + _ci(r["per_hand_low"], r["per_hand_high"], False),
            )
            + _num_cell(z, f"{z:+.1f}" if z is not None else "–")
            + _num_cell(
                r["audit_findings"],
                f"{r['audit_findings']:,} <span class=n>({r['audit_money']:,} pts)</span>"
                if r["audit_findings"]
                else "0",
            )
            + f'<td data-v="{r["rank"] * 1000 + len(r["flags"] or [])}">{flags}</td></tr>'
        )
    shown = len(pages)
    pages_note = (
        "every player has a page"
        if shown == table.height
        else f"{shown:,} of them have a page (linked); the others are listed here only"
    )
    return (
        f'<section id="directory"><h2>Every player</h2><p>{table.height:,} players with a replayed hand; '
        f"{_esc(pages_note)}. Click a column heading to sort (again to reverse); type in the box to keep the "
        'players whose id holds the text.</p><p><input type="search" id="filter" placeholder="filter by player id" '
        'aria-label="filter by player id"></p>'
        f'<div class="wide"><table class="sortable directory"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        '<p class="note">Rates: hands won and hands with a deal-in over hands played, with 95% Wilson intervals; '
        "net points: the engine's settlement, per hand with a 95% normal interval"
        + (" (in the points of the player's scale group: a profile and its base)" if mixed else "")
        + ". vs room: the unusual-result test's z (the player's net per hand against the range the other players "
        + ("of their scale group " if mixed else "")
        + "give; see What needs attention on the overview). Audit: findings on the player's seat, with their "
        "points at stake. Flags: the first screen's findings about the player.</p></section>"
    )


@dataclass(frozen=True, slots=True)
class _PlayerParts:
    """What every player page is made of, computed once for all players: a page is then string assembly."""

    mine: dict[str, Lookup]  # player -> their rows of prep_every_player
    population: dict[str | None, Lookup]  # scale group -> the rows of its players' population
    group: dict[str, str | None]  # player -> their scale group
    scale: Scales
    levels: dict[str, dict[str, int]]  # player -> replayed hands by level
    fan: dict[str, pl.DataFrame]
    fan_all: dict[str | None, pl.DataFrame]  # scale group -> its players' wins by fan
    unusual: dict[str, dict[str, Any]]
    found: dict[str, pl.DataFrame]  # player -> the first screen's rows that name them
    none: pl.DataFrame  # no row of the first screen
    audit: dict[str, pl.DataFrame]  # player -> the audit's findings on their seat
    opponents: dict[str, pl.DataFrame]  # player -> head to head (dashboards.player.prep_head_to_head)
    over_time: dict[str, str]  # player -> the over-time section (rolling rates: dashboards.player.prep_rolling)
    pages: dict[str, Page]

    @staticmethod
    def of(
        con: duckdb.DuckDBPyConnection,
        every: pl.DataFrame,
        found: pl.DataFrame,
        unusual: pl.DataFrame,
        result: scoring.Audit,
        pages: dict[str, Page],
        scale: Scales,
    ) -> _PlayerParts:
        def by_player(df: pl.DataFrame, column: str = "player") -> dict[str, pl.DataFrame]:
            return {str(k[0]): v for k, v in df.partition_by(column, as_dict=True).items() if k[0] is not None}

        def by_group(df: pl.DataFrame) -> dict[str | None, pl.DataFrame]:
            return {k[0]: v for k, v in df.partition_by("group", as_dict=True).items()}

        levels: dict[str, dict[str, int]] = {}
        for r in player.prep_every_player_levels(con).iter_rows(named=True):
            levels.setdefault(r["player"], {})[r["level"]] = r["replayed"]
        fan = player.prep_every_player_fan(con, scale)
        mine: dict[str, Lookup] = {}
        group: dict[str, str | None] = {}
        for r in every.filter(pl.col("who") == player.PLAYER).iter_rows(named=True):
            mine.setdefault(r["player"], {})[(r["metric"], r["who"])] = r
            group[r["player"]] = r["group"]
        return _PlayerParts(
            mine=mine,
            population={
                g: _lookup(rows) for g, rows in by_group(every.filter(pl.col("who") == player.POPULATION)).items()
            },
            group=group,
            scale=scale,
            levels=levels,
            fan=by_player(fan.filter(pl.col("player").is_not_null())),
            fan_all=by_group(fan.filter(pl.col("player").is_null())),
            unusual={r["player"]: r for r in unusual.iter_rows(named=True)},
            found={
                who: rows.drop("who")
                for who, rows in by_player(found.with_columns(who=pl.col("players")).explode("who"), "who").items()
            },
            none=found.head(0),
            audit=by_player(result.findings.filter(pl.col("player").is_not_null())),
            opponents=player.prep_every_head_to_head(con),
            over_time={pid: _player_over_time(frame) for pid, frame in player.iter_rolling(con)},
            pages=pages,
        )

    def body(self, pid: str) -> list[str]:
        group = self.group.get(pid)
        population = self.scale.population(group)  # "all players", or "players of GROUP" where there are several
        metrics = {**self.population.get(group, {}), **self.mine[pid]}
        seat = self.audit.get(pid, pl.DataFrame(schema=dict.fromkeys(("hand_id", "severity", "money"), pl.String)))
        findings = found_dash.prep_player_findings(self.found.get(pid, self.none), seat, pid)
        fan_all = self.fan_all.get(group, pl.DataFrame(schema={"fan": pl.Int64, "share": pl.Float64, "n": pl.Int64}))
        others = found_dash.others_of(group, self.scale.mixed)
        return [
            _player_banner(pid, findings, self.pages),
            _player_summary(pid, metrics),
            _player_figures(metrics, self.levels.get(pid, {}), population),
            _player_opponents(pid, self.opponents.get(pid), self.pages),
            self.over_time.get(pid) or _player_over_time(None),
            _player_results(self.unusual.get(pid), others),
            _player_fan(self.fan.get(pid), fan_all, population),
            _player_scoring(seat),
            _player_table(metrics, population),
        ]


def _player_banner(pid: str, findings: pl.DataFrame, pages: dict[str, Page]) -> str:
    """The top of a player's page: whether any finding concerns the player, and each one with its evidence."""
    severity = found_dash.severity_of(findings)
    if severity is None:
        return (
            f'<section class="banner ok" id="findings"><p>No finding concerns <b>{_esc(pid)}</b>: no screen flags '
            "the player, no audit finding is on their seat, and their results are within the room's range.</p>"
            "</section>"
        )
    head = (
        f"{_esc(pid)} is flagged"
        if severity == "high"
        else f"{_esc(pid)}: {_esc(found_dash.findings_text(findings.height)).lower().rstrip('.')}"
    )
    items = "".join(
        f'<li><span class="sev {r["severity"]}">{_esc(r["label"])}</span> <b>{_esc(r["subject"])}</b>: '
        f'{_esc(r["detail"])} — <a href="{_link(r["evidence"])}">{_esc(r["evidence_text"])}</a></li>'
        for r in findings.iter_rows(named=True)
    )
    caveat = " A flag is a reason to replay the hands, not a verdict." if severity == "high" else ""
    return (
        f'<section class="banner {severity}" id="findings"><h2>{head}</h2><ul>{items}</ul>'
        f'<p class="note">Every finding of the report: <a href="{_href(found_dash.INDEX)}">What needs attention</a>.'
        f"{caveat}</p></section>"
    )


def _player_summary(pid: str, metrics: Lookup) -> str:
    mine = {metric: r for (metric, who), r in metrics.items() if who == player.PLAYER}
    net = mine["net_points_per_hand"]
    return (
        '<section class="summary">'
        f"<p><b>{_esc(pid)}</b>: {int(mine['hands']['value'] or 0):,} replayed hands, "
        f"won {charts.pct(mine['win_rate']['value'])} of them, "
        f"dealt in in {charts.pct(mine['deal_in_rate']['value'])}, "
        f"net {charts.num(net['value'])} points per hand{_ci(net['ci_low'], net['ci_high'], False)} "
        f"(total {int(net['num'] or 0):+,}).</p></section>"
    )


def _player_figures(metrics: Lookup, hands: dict[str, int], population: str = player.POPULATION) -> str:
    """The key rates and means beside the population's (``population``: its words; all players' in a
    warehouse of one scale group), each with its interval drawn (inline SVG)."""
    rows = []
    for mid in (*player.RATES, *player.MEANS):
        m = METRIC_BY_ID[mid]
        share = m.kind == "rate"
        if (mid, player.PLAYER) not in metrics:
            continue
        mine, everyone = metrics[(mid, player.PLAYER)], metrics[(mid, player.POPULATION)]
        fmt = charts.pct if share else charts.num
        strip = svg.interval_strip(
            (mine["value"], mine["ci_low"], mine["ci_high"]),
            (everyone["value"], everyone["ci_low"], everyone["ci_high"]),
            share=share,
        )
        word = player.DEN_WORDS.get(mine["den_of"], mine["den_of"] or "")
        rows.append(
            f'<tr><td><span class="zh">{_esc(m.name_zh)}</span> {_esc(m.name_en)}'
            f"{'' if share else f' <span class=n>[{_esc(m.unit)}]</span>'}</td>"
            f'<td class="num">{fmt(mine["value"])}{_ci(mine["ci_low"], mine["ci_high"], share)} '
            f'<span class="n">n={int(mine["den"] or 0):,} {_esc(word)}</span></td>'
            f'<td class="num">{fmt(everyone["value"])}{_ci(everyone["ci_low"], everyone["ci_high"], share)}</td>'
            f"<td>{strip}</td></tr>"
        )
    note = levels_note((*player.RATES, *player.MEANS), hands)
    who = _esc(population)
    if population == player.POPULATION:
        added = "all players: every player's counts added up"
    else:  # a warehouse of several scale groups: the player's own
        added = (
            f"{who}: the counts of every player of the player's scale group (a profile and its base) added up; "
            "the other groups play for other stakes or by other rules"
        )
    return (
        f'<section id="figures"><h2>Key figures beside {who}</h2><table class="figures"><thead><tr>'
        f"<th>figure</th><th>player [95%]</th><th>{who} [95%]</th>"
        f'<th><span class="key subject">●</span> player <span class="key population">●</span> {who}</th>'
        f'</tr></thead><tbody>{"".join(rows)}</tbody></table><p class="note">Rates with 95% Wilson intervals, '
        f"means with 95% normal intervals; {added}. Each line is drawn on "
        f"its own scale, zoomed to the two intervals. {_esc(note)}</p></section>"
    )


def _player_opponents(pid: str, df: pl.DataFrame | None, pages: dict[str, Page]) -> str:
    """Head to head: the player against every opponent they sat with, one sortable row each, linked to the
    opponent's page (:func:`dashboards.player.prep_head_to_head`)."""
    title = '<section id="opponents"><h2>Head to head</h2>'
    if df is None or not df.height:
        return f'{title}<p class="note">No opponent in a replayed hand.</p></section>'
    heads = (
        ("opponent", "text"),
        ("hands", "num"),
        ("won from", "num"),
        ("lost to", "num"),
        ("net", "num"),
        ("net per hand [95%]", "num"),
        ("deal-ins to", "num"),
        ("deal-in rate [95%]", "num"),
        ("wins from", "num"),
        ("win-from rate [95%]", "num"),
    )
    head = "".join(f'<th data-sort="{kind}" class="{kind}" title="sort">{_esc(h)}</th>' for h, kind in heads)
    rows = []
    for r in df.iter_rows(named=True):
        rows.append(
            f'<tr><td class="id" data-v="{_esc(r["opponent"])}">{_who(r["opponent"], pages)}</td>'
            + _num_cell(r["hands"], f"{r['hands']:,}")
            + _num_cell(r["won_from"], f"{r['won_from']:,}")
            + _num_cell(r["lost_to"], f"{r['lost_to']:,}")
            + _num_cell(r["net"], f"{r['net']:+,}")
            + _num_cell(
                r["net_per_hand"],
                (f"{r['net_per_hand']:+.2f}" if r["net_per_hand"] is not None else "–")
                + "<br>"
                + _ci(r["net_low"], r["net_high"], False),
            )
            + _num_cell(r["deal_ins_to"], f"{r['deal_ins_to']:,}")
            + _num_cell(
                r["deal_in_rate"],
                charts.pct(r["deal_in_rate"]) + "<br>" + _ci(r["deal_in_low"], r["deal_in_high"], True),
            )
            + _num_cell(r["wins_from"], f"{r['wins_from']:,}")
            + _num_cell(r["win_rate"], charts.pct(r["win_rate"]) + "<br>" + _ci(r["win_low"], r["win_high"], True))
            + "</tr>"
        )
    name = _esc(pid)
    return (
        f"{title}<p>{name} against each of the {df.height:,} players they sat with, most hands together first. "
        'Click a heading to sort.</p><div class="wide"><table class="sortable opponents">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="note">Over the replayed hands both played to the end. Won from / lost to: the points {name} '
        "received from / paid to that opponent (every payment between them: wins, kongs, the end-of-hand checks, "
        "penalties); net per hand: the mean over the hands together with a 95% normal interval. Deal-ins to: the "
        f"opponent's wins on {name}'s discard; wins from: {name}'s wins on the opponent's; rates: the share of the "
        "hands together with at least one, with 95% Wilson intervals. The same table as "
        "<code>xuezhan stats --player P --by opponent</code>.</p></section>"
    )


def _player_over_time(df: pl.DataFrame | None) -> str:
    """The rolling win and deal-in rates over the player's hands in order, in their Wilson bands (inline SVG
    from :func:`dashboards.player.prep_rolling`, drawn as :func:`dashboards.player.plot_rolling` draws them)."""
    title = '<section id="over-time"><h2>Over time</h2>'
    if df is None or not df.height:
        return f'{title}<p class="note">No replayed hand.</p></section>'
    window = player.ROLLING_WINDOW
    shown = df.select(pl.all().gather(svg.thinned(df.height, window)))  # the rows drawn, before they become dicts
    chart = svg.rolling_lines(shown.to_dicts(), window=window, most=shown.height)
    days = df["played_local"].drop_nulls().dt.strftime("%Y-%m-%d").to_list()
    span = f" They were played from {min(days)} to {max(days)} (local dates)." if days else ""
    return (
        f'{title}<p><span class="key subject">●</span> win rate <span class="key population">●</span> deal-in '
        f"rate, each over the player's last {window} hands, across their {df.height:,} replayed hands in the "
        f'order played.</p><figure class="rolling">{chart}</figure><p class="note">Shaded: 95% Wilson bands. '
        f"Dashed: the first {window - 1} hands, where the rates are over the hands so far (fewer than {window}); "
        f"the x axis counts the player's hands, not days.{span}</p></section>"
    )


def _player_results(row: dict[str, Any] | None, others: str = "the other players") -> str:
    """The player's net points per hand against the range the other players (``others``: of the player's scale
    group, where there are several) give (the unusual-result test)."""
    title = '<section id="results"><h2>Results against the room</h2>'
    if row is None or not row["tested"]:
        hands = 0 if row is None else row["hands"]
        return (
            f'{title}<p class="note">Not tested: {hands:,} replayed hands (at least {found_dash.MIN_HANDS:,} '
            "needed), or too few other players to give a range.</p></section>"
        )
    verdict = (
        '<b class="flag">outside the range</b> (an unusual result, not an accusation)'
        if row["flagged"]
        else "within the range"
    )
    return (
        f"{title}<p>Net <b>{row['per_hand']:+.2f}</b> points per hand over {row['hands']:,} hands "
        f"(±{found_dash.Z95 * row['se']:.2f}); {_esc(others)} give {row['expected']:+.2f} on average, players "
        f"truly differ by {row['spread']:.2f} (one standard deviation), so a result from {row['low']:+.2f} to "
        f"{row['high']:+.2f} is within the room's range. This one is {verdict}: z {row['z']:+.2f}, "
        f"p {row['p']:.2g}, q {row['q']:.2g} (Benjamini–Yekutieli over every player tested).</p></section>"
    )


def _player_fan(mine: pl.DataFrame | None, everyone: pl.DataFrame, population: str = player.POPULATION) -> str:
    title = '<section id="fan"><h2>Wins by fan</h2>'
    if mine is None or not mine.height:
        return f'{title}<p class="note">No win in a replayed hand.</p></section>'
    got = {r["fan"]: r for r in mine.iter_rows(named=True)}
    all_ = {r["fan"]: r for r in everyone.iter_rows(named=True)}
    n, n_all = int(mine["n"][0]), int(everyone["n"][0]) if everyone.height else 0
    rows = []
    for fan in range(min(1, *got), max(got) + 1):
        r, a = got.get(fan), all_.get(fan)
        share, share_all = (r["share"] if r else 0.0), (a["share"] if a else 0.0)
        rows.append(
            f'<tr><td class="num">{fan}</td><td class="num">{r["wins"] if r else 0:,} ({charts.pct(share)})</td>'
            f'<td class="num">{charts.pct(share_all)}</td><td>{svg.share_bars(share, share_all)}</td></tr>'
        )
    if population == player.POPULATION:  # a warehouse of one scale group
        head, key, beside = "all players' (share)", "all", f"all players' {n_all:,}"
    else:
        who = _esc(population)
        head, key, beside = f"wins of {who} (share)", who, f"the {n_all:,} wins of {who}"
    return (
        f'{title}<table class="fan"><thead><tr><th>fan</th><th>player\'s wins (share)</th><th>{head}</th>'
        f'<th><span class="key subject">●</span> player <span class="key population">●</span> {key}</th>'
        f'</tr></thead><tbody>{"".join(rows)}</tbody></table><p class="note">The total fan of each win (engine, '
        f"before any cap; 平胡 = 1): the player's {n:,} wins beside {beside}.</p></section>"
    )


PLAYER_FINDINGS = 20  # audit rows on a player's page


def _player_scoring(seat: pl.DataFrame) -> str:
    """The audit's findings on the player's seat, most money first."""
    title = '<section id="scoring"><h2>Audit findings on the player\'s seat</h2>'
    if not seat.height:
        return f'{title}<p class="note">None.</p></section>'
    rows = "".join(
        f'<tr class="{_esc(r["severity"])}"><td class="id">{_esc(r["hand_id"])}</td>'
        f'<td class="num">{_esc(_fmt(r["event"]))}</td><td class="code">{_esc(r["code"])}</td>'
        f'<td class="num">{r["money"]:,}</td><td class="def">{_message(r["message"], r["position"])}</td></tr>'
        for r in seat.head(PLAYER_FINDINGS).iter_rows(named=True)
    )
    shown = "all" if seat.height <= PLAYER_FINDINGS else f"the {PLAYER_FINDINGS} with most money of"
    return (
        f"{title}<table><thead><tr><th>hand</th><th>event</th><th>code</th><th>money (points)</th><th>message</th>"
        f'</tr></thead><tbody>{rows}</tbody></table><p class="note">{_esc(shown)} {seat.height:,} findings, '
        f"{_esc(scoring.Audit(seat).stake_text())}. The replay of a hand: <code>xuezhan replay HAND --warehouse "
        "WH</code>; every finding: <code>xuezhan audit --warehouse WH --format csv</code>.</p></section>"
    )


def _table_section(title: str, df: pl.DataFrame, headers: dict[str, str]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers.values())
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if isinstance(v, int | float) else ""}">{_esc(_fmt(v))}</td>'
            for v in (row[c] for c in headers)
        )
        + "</tr>"
        for row in df.iter_rows(named=True)
    )
    return (
        f"<section><h2>{_esc(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>"
    )


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return charts.num(value)
    if isinstance(value, int):
        return f"{value:,}"
    return "–" if value is None else str(value)


def _levels_section(by_level: dict[str, dict[str, int]]) -> str:
    """The hands by level of record (what each record carries); a figure that cannot use some says so under
    its chart. Nothing for a warehouse of one level."""
    if len(by_level) <= 1:
        return ""
    counts = ", ".join(f"{_esc(level)} {c['replayed']:,}" for level, c in by_level.items())
    return (
        f"<p>Hands by level of record (schemas/XZLOG.md, levels): {counts}. Each chart uses the hands whose "
        "level carries what it shows and says so under it: a score sheet has wins, kongs and payments but no "
        "discards or tiles (schemas/METRICS.md lists every figure's levels).</p>"
    )


def _collusion_levels(summary: dict[str, dict[str, Any]]) -> str:
    """Which levels of record fed each signal of the screen, and which signals no hand could show."""
    rows = []
    for signal, entry in summary.items():
        used = ", ".join(f"{k} {v:,}" for k, v in entry["levels"].items()) or "–"
        left = ", ".join(f"{k} {v:,}" for k, v in entry["excluded"].items()) or "–"
        state = f"{entry['n']:,} hands" if entry["available"] else "not available"
        rows.append(f"<tr><td>{_esc(signal)}</td><td>{state}</td><td>{used}</td><td>{left}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("signal", "screened on", "hands by level", "levels left out"))
    return f"<h2>Signals by level of record</h2><table><tr>{head}</tr>{''.join(rows)}</table>"


def _tables_section(df: pl.DataFrame) -> str:
    """How hands end at each table shape; the charts below pool them (one row: one table, nothing pooled)."""
    head = "".join(
        f"<th>{h}</th>" for h in ("table", "hands", "hands by players who won", "played out", "黄庄", "一炮多响")
    )
    rows = "".join(
        f'<tr><td>{_esc(r["table"])}</td><td class="num">{r["hands"]:,}</td><td>{_esc(r["winners"])}</td>'
        + "".join(
            f'<td class="num">{_esc(charts.pct(r[c], 1) if r[c] is not None else "–")}</td>'
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


def _codes_table(title: str, df: pl.DataFrame, columns: tuple[str, ...], anchor: str) -> str:
    if not df.height:
        return f'<section id="{anchor}"><h2>{_esc(title)}</h2><p class="note">None.</p></section>'
    head = "".join(f"<th>{_esc(c)}</th>" for c in (*columns, "meaning"))
    rows = []
    for r in df.iter_rows(named=True):
        cells = []
        for c in columns:
            v = r[c]
            text = charts.pct(v, 2) if c == "share" else _fmt(v)
            cells.append(f'<td class="{"num" if isinstance(v, int | float) else ""}">{_esc(text)}</td>')
        cells.append(f'<td class="def">{_esc(r["meaning"])}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    share_of = "stored hands with the code" if "hands" in columns else "all rejected lines"
    return (
        f'<section id="{anchor}"><h2>{_esc(title)}</h2><table><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table><p class="note">share: of {share_of}.</p></section>'
    )


# ---------------------------------------------------------------------------------------------- audit
def _scales_note(scale: Scales) -> str:
    """The line a warehouse of several scale groups carries (which, their bases, hands each); nothing for one."""
    line = scale.line()
    return f'<p class="note" id="scales">{_esc(line)}</p>' if line else ""


def _audit_summary(con: duckdb.DuckDBPyConnection, result: scoring.Audit, quality_page: Page, scale: Scales) -> str:
    f = result.findings
    stored = int(queries.run(con, "warehouse_counts")["hands"][0] or 0)
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
            f"({charts.pct(hands / stored if stored else None)}), <b>{_esc(result.stake_text())}</b>.</p>"
        )
    in_bases = (
        " Where the hands have different bases (底), money is ranked and added up in bases: points ÷ the hand's base."
        if result.mixed
        else ""
    )
    return (
        '<section class="summary">'
        + found
        + _scales_note(scale)
        + "<p>Money at stake: for a scoring or settlement difference, the points it moves; for a rule "
        "violation, the points the source system settled in that hand (a hand with two violations counts it "
        f"twice).{in_bases} Every finding names its hand and, where there is one, the event (index in the record, "
        f'0-based) and seat. The validator\'s issues by count: <a href="{_href(quality_page.file)}">data '
        "quality</a>.</p></section>"
    )


def _message(message: str | None, position: str | None = None) -> str:
    """A finding's message, with the replay's position where a rule violation stopped it folded away
    (``<details>``, no script)."""
    if message is None:
        return "–"
    if position is None:
        return _esc(message)
    return f'{_esc(message)}<details><summary>position</summary><span class="pos">{_esc(position)}</span></details>'


def _findings_table(df: pl.DataFrame) -> str:
    title = "Top findings by money"
    if not df.height:
        return f'<section><h2>{_esc(title)}</h2><p class="note">No findings.</p></section>'
    n = int(df["n_findings"][0])
    head = "".join(f"<th>{h}</th>" for h in ("#", "hand", "event", "code", "player", "money (points)", "message"))
    in_bases = df["unit"][0] == "bases"  # the hands have several bases: ranked by money ÷ base
    rows = []
    for r in df.iter_rows(named=True):
        base = f'<br><span class="n">at base {r["base"]:,}</span>' if in_bases else ""
        code = f'<abbr title="{_esc(r["meaning"])}">{_esc(r["code"])}</abbr>' if r["meaning"] else _esc(r["code"])
        rows.append(
            f'<tr class="{_esc(r["severity"])}" id="finding-{r["rank"]}"><td class="num">{r["rank"]}</td>'
            f'<td class="id">{_esc(r["hand_id"])}</td>'
            f'<td class="num">{_esc(_fmt(r["event"]))}</td><td>{code}</td><td>{_esc(_fmt(r["player"]))}</td>'
            f'<td class="num">{r["money"]:,}{base}</td><td class="def">{_message(r["message"], r["position"])}'
            + (f" (reasons: {_esc(r['reasons'])})" if r["reasons"] else "")
            + "</td></tr>"
        )
    k = int(df["n_mistakes"][0])
    shown = f"all {k:,}" if df.height == k else f"the top {df.height:,} of {k:,}"
    behind = f" ({n - k:,} more findings are the fan or points behind a wrong payment, named as its reasons)"
    behind = behind if n > k else ""
    return (
        f"<section><h2>{_esc(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}"
        f'</tbody></table><p class="note">{_esc(shown)} mistakes{_esc(behind)}, each wrong payment once, most money '
        + ("in bases (points ÷ the hand's base) " if in_bases else "")
        + "first (then hand and event). "
        "Hover a code for its meaning (schemas/ISSUE_CODES.md); warnings in grey. Every finding: "
        "<code>xuezhan audit --warehouse WH --format csv</code>.</p></section>"
    )


# ---------------------------------------------------------------------------------------------- collusion
def _fdr(fdr: float) -> str:
    return f"{100 * fdr:g}%"


def _pair(a: str, b: str) -> str:
    return f"{_esc(a)} &amp; {_esc(b)}"


def _collusion_summary(screen: collusion_dash.Screen) -> str:
    players = len(set(screen.shared["player_a"].to_list()) | set(screen.shared["player_b"].to_list()))
    flagged = screen.flagged
    rate = _fdr(screen.fdr)
    teams = screen.teams
    if not screen.pairs:
        verdict = (
            f'<p class="verdict"><b>Nothing was screened</b>: no pair of players shared {screen.min_hands:,} '
            "replayed hands, too few to tell help from chance.</p>"
        )
    elif not flagged and teams:
        verdict = (
            f'<p class="verdict"><b class="flag">No pair is flagged</b>, but the group screen reports '
            f"{_teams(teams)} at a false discovery rate of {rate}: a group that helps each other, each pair of it "
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
            + (f"; the group screen reports {_teams(teams)}" if teams else "")
            + ". A flag is a reason to replay the hands listed below, not a verdict: among flagged pairs, up to "
            f"{rate} are expected to be honest.</p>"
        )
    return (
        '<section class="summary">'
        + verdict
        + f"<p>{players:,} players; {screen.shared.height:,} pairs sat at one table for at least one "
        f"replayed hand. {_esc(screen.threshold_note())}</p></section>"
    )


def _teams(teams: tuple[TeamResult, ...]) -> str:
    """The reported teams in words: "1 team of three: A, B &amp; C (q 0.003)"."""
    named = "; ".join(
        f"{', '.join(_esc(p) for p in t.players[:-1])} &amp; {_esc(t.players[-1])} (q {t.q:.2g})" for t in teams
    )
    return f"{len(teams)} team{'s' if len(teams) > 1 else ''} of three or more: {named}"


def _collusion_power(screen: collusion_dash.Screen) -> str:
    """What the screen can see at this warehouse's sizes (issue 37): the power the evaluation measured per cheat
    family (:func:`pipeline.audit.collusion.power_statement`), so that "0 flagged" reads as "no evidence at this
    power", never as "clean"."""
    lines = collusion_dash.power_lines(screen)
    items = "".join(f"<li>{_esc(line)}</li>" for line in lines[1:])
    return (
        f'<section><h2>What the screen can see</h2><p class="note">{_esc(lines[0])}</p>'
        + (f"<ul>{items}</ul>" if items else "")
        + "</section>"
    )


def _evidence_section(screen: collusion_dash.Screen, df: pl.DataFrame) -> str:
    title = "Flagged pairs and the hands to replay"
    if not screen.flagged:
        what = "No pair is flagged" if screen.pairs else "No pair was screened"
        return (
            f'<section><h2>{_esc(title)}</h2><p class="note">{what} at a false discovery rate of '
            f"{_fdr(screen.fdr)}: no hands to show.</p></section>"
        )
    parts = []
    for rank, r in enumerate(screen.pairs, start=1):
        if not r.flagged:
            continue
        hands = df.filter(pl.col("rank") == rank)
        signals = "; ".join(
            f"{collusion_dash.SIGNAL_NAMES[s][0]} {charts.num(r.signals[s]['observed'], 1)} observed, "
            f"{charts.num(r.signals[s]['expected'], 1)} expected (z {r.signals[s]['z']:+.1f})"
            for s in SIGNALS
        )
        rows = "".join(
            f'<tr><td class="id">{_esc(h["hand_id"])}</td><td class="num">{h["event"]}</td>'
            f"<td>{_esc(h['why'])}</td></tr>"
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
            f"score {r.score:.2f}, p = {r.p:.1e}, {_esc(collusion_dash.q_label(r.q))}</h3>"
            f'<p class="note">Over their shared hands, both directions: {_esc(signals)}. Sitting together: '
            f"×{_esc(_fmt(r.seating.get('ratio')))} of what random seating gives.</p>{table}</div>"
        )
    return (
        f"<section><h2>{_esc(title)}</h2>{''.join(parts)}"
        '<p class="note">Hands: wins, pongs and kongs one of the pair made on the other\'s tile while both '
        "were in, biggest win first; event is the index in the record (0-based).</p></section>"
    )


def _pairs_table(df: pl.DataFrame) -> str:
    title = "Top pairs"
    if not df.height:
        return f'<section><h2>{_esc(title)}</h2><p class="note">No pair was screened.</p></section>'
    signal_heads = "".join(f"<th>{_esc(collusion_dash.SIGNAL_NAMES[s][0])} z</th>" for s in SIGNALS)
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
            f'<td class="num">{_esc(_fmt(r["critical"]))}</td>',
            f'<td class="num">{r["p"]:.1e}</td>',
            f'<td class="num">{_esc(collusion_dash.q_text(r["q"]))}</td>',
            '<td><b class="flag">yes</b></td>' if r["flagged"] else "<td>no</td>",
            *(f'<td class="num">{r[f"{s}_z"]:+.1f}</td>' for s in SIGNALS),
            f'<td class="num">×{_esc(_fmt(r["sit_ratio"]))}</td>',
        ]
        rows.append(f'<tr class="{"flagged" if r["flagged"] else ""}">{"".join(cells)}</tr>')
    n = int(df["n_screened"][0])
    return (
        f'<section><h2>{_esc(title)}</h2><div class="wide"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="note">The best {df.height:,} of {n:,} screened pairs. needed: the score the rank '
        f"needs to be flagged at a false discovery rate of {_fdr(float(df['fdr'][0]))}. Signal z-scores: "
        "positive when the pair does more of it for each other than for their other opponents in the same "
        "hands. sit together: shared hands / what random seating gives (reported, not scored: friends sit "
        "together and play honestly).</p></section>"
    )


def _teams_section(screen: collusion_dash.Screen, teams: pl.DataFrame, evidence: pl.DataFrame) -> str:
    """The teams the group screen reports (:func:`dashboards.collusion.prep_teams`), each with its hands replayed
    (anchors ``team-k``, as the findings link them)."""
    title = "Teams: groups of three screened as groups"
    if not teams.height:
        return (
            f'<section id="teams"><h2>{_esc(title)}</h2><p class="note">No team is reported at a false discovery '
            f"rate of {_fdr(screen.fdr)}.</p></section>"
        )
    parts = []
    for t in teams.iter_rows(named=True):
        k = t["rank"]
        signals = "; ".join(
            f"{collusion_dash.SIGNAL_NAMES[s][0]} z {t[f'{s}_z']:+.1f}" for s in collusion_dash.TEAM_SIGNALS
        )
        items = "".join(
            f'<details><summary><span class="id">{_esc(h["hand_id"])}</span> event {h["event"]}: {_esc(h["why"])}'
            f'</summary><div class="replay">{_esc(h["replay"])}</div></details>'
            for h in evidence.filter(pl.col("rank") == k).iter_rows(named=True)
        )
        parts.append(
            f'<div class="team" id="team-{k}"><h3>Team #{k}: {", ".join(_esc(p) for p in t["players"])}</h3>'
            f'<p class="note">{t["hands"]:,} hands with two or more of them at one table; score {t["score"]:.2f} '
            f"(z {t['z']:.2f} on the empirical null), p = {t['p']:.1e}, {_esc(collusion_dash.q_label(t['q']))}. "
            f"Signals toward each other against their other opponents: {_esc(signals)}.</p>"
            + (items or '<p class="note">No win or call of one on another\'s tile to replay.</p>')
            + "</div>"
        )
    return (
        f'<section id="teams"><h2>{_esc(title)}</h2>{"".join(parts)}<p class="note">Every group of three who sat '
        "together pairwise is screened as a group: what each member does for the others against what it does for "
        "its other opponents at the same tables (an exact relabelling null), on rates fitted without the teams "
        "already found; Benjamini–Yekutieli over the groups. Hands: wins and calls one member made on another's "
        "tile, each as <code>xuezhan replay HAND --warehouse W</code> prints it. Details: pipeline/audit/teams.py."
        "</p></section>"
    )


def _victims_section(df: pl.DataFrame, pages: dict[str, Page]) -> str:
    """The victim view's flagged lines (:func:`dashboards.collusion.prep_victims`), anchors ``victim-k``, each
    player linked to their page."""
    title = "Victims: who pays whom beyond what that opponent takes from others"
    if not df.height:
        return f'<section id="victims"><h2>{_esc(title)}</h2><p class="note">No player is flagged.</p></section>'
    rows = []
    for r in df.iter_rows(named=True):
        to = ", ".join(_who(p, pages) for p in r["to"])
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
            f'<tr id="victim-{r["rank"]}"><td class="num">{r["rank"]}</td><td class="id">{_who(r["player"], pages)}'
            f'</td><td class="id">{to}</td><td>{_esc(what)}</td><td class="num">{r["z"]:.1f}</td>'
            f'<td class="num">{_esc(collusion_dash.q_text(r["q"]))}</td></tr>'
        )
    return (
        f'<section id="victims"><h2>{_esc(title)}</h2><table><thead><tr><th>#</th><th>player</th><th>loses to</th>'
        f"<th>what</th><th>z</th><th>q</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        '<p class="note">Per hand, what a player pays an opponent (the engine\'s settlement) less what that '
        "opponent takes from an opponent on average, against the player's other opponents at the same table; with "
        "a reported team, the player's points per hand with two or more of it at the table against with none "
        "(the tables differ in who else sits there: this compares, it does not prove). Benjamini–Yekutieli. "
        "Details: pipeline/audit/victims.py.</p></section>"
    )


# ---------------------------------------------------------------------------------------------- information
def _info_summary(seers: list[Seer], stale: str | None = None) -> str:
    tested = [s for s in seers if any(r is not None and r.p is not None for r in (s.dodges, s.anticipation))]
    flagged = [s for s in seers if s.flagged]
    if not tested:
        verdict = (
            f'<p class="verdict"><b>Nothing was screened</b>: no player has {MIN_DISCARDS:,} discards or '
            f"{MIN_DECISIONS:,} waits the replay can judge (hands of level full or dealt).</p>"
        )
    elif not flagged:
        verdict = (
            f'<p class="verdict"><b>No player is flagged</b> at a false discovery rate of {_fdr(FDR)}: none of the '
            f"{len(tested):,} players screened throws dangerous tiles less often, or waits on the tiles the wall "
            "holds more often, than the room's spread allows.</p>"
        )
    else:
        names = ", ".join(f"{_esc(s.player)} ({_esc(', '.join(s.signals))})" for s in flagged)
        verdict = (
            f'<p class="verdict"><b class="flag">{len(flagged):,} player{"s" if len(flagged) > 1 else ""} '
            f"flagged</b> of {len(tested):,} screened, at a false discovery rate of {_fdr(FDR)} over both signals: "
            f"{names}. A flag is a reason to replay their hands, not a verdict.</p>"
        )
    return (
        f'<section class="summary">{verdict}<p>{len(seers):,} players; a signal is tested for a player with at '
        f"least {MIN_DISCARDS:,} judged discards (dangerous discards by choice) or {MIN_DECISIONS:,} judged waits "
        "(winning-tile anticipation). Measured on simulated rooms of 8 players: see the README's evaluation for "
        "the planted cheats found and the honest rooms' false discovery proportion, per signal and together.</p>"
        + (f'<p class="verdict"><b>{_esc(stale)}</b></p>' if stale else "")
        + "</section>"
    )


def _info_table(seers: list[Seer], pages: dict[str, Page]) -> str:
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
    head = "".join(f'<th data-sort="{k}" class="{k}" title="sort">{h}</th>' for h, k in zip(heads, kinds, strict=True))
    rows = []
    for k, s in enumerate(seers, start=1):
        d, a = s.dodges, s.anticipation
        hands = max((r.hands for r in (d, a) if r is not None), default=0)
        flag = f'<a href="#info-{k}-hands"><b class="flag">yes</b></a> ({_esc(", ".join(s.signals))})'
        rows.append(
            f'<tr id="info-{k}" class="{"flagged" if s.flagged else ""}">'
            + _num_cell(k, str(k))
            + f'<td class="id" data-v="{_esc(s.player)}">{_who(s.player, pages)}</td>'
            + _num_cell(hands, f"{hands:,}")
            + _count_cells(None if d is None else d.discards, None if d is None else d.dangerous_by_choice)
            + _tail_cells(d, s.q_dodges)
            + _count_cells(None if a is None else a.decisions, None if a is None else a.hits)
            + _tail_cells(a, s.q_anticipation)
            + _num_cell(int(s.flagged), flag if s.flagged else "no")
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
        return _num_cell(None, "–") + _num_cell(None, "–")
    return _num_cell(n, f"{n:,}") + _num_cell(k, f"{k:,}")


def _tail_cells(r: InfoResult | AnticipationResult | None, q: float | None) -> str:
    if r is None:
        return _num_cell(None, "–") * 3
    return (
        _num_cell(r.expected, "–" if r.expected is None else f"{r.expected:,.1f}")
        + _num_cell(r.p, "not tested" if r.p is None else f"{r.p:.2e}")
        + _num_cell(q, "–" if q is None else collusion_dash.q_text(q))
    )


def _info_evidence(seers: list[Seer], df: pl.DataFrame, waits: pl.DataFrame, pages: dict[str, Page]) -> str:
    """Each flagged player's hands to replay (:func:`dashboards.information.prep_evidence`) and waits
    (:func:`dashboards.information.prep_anticipation`), anchors ``info-k-hands`` (``info-k``: the player's row)."""
    title = "Flagged players and the hands to replay"
    flagged = [(k, s) for k, s in enumerate(seers, start=1) if s.flagged]
    if not flagged:
        note = '<p class="note">No player is flagged: no hands to show.</p>'
        return f'<section id="hands"><h2>{_esc(title)}</h2>{note}</section>'
    parts = []
    for k, s in flagged:
        hands = df.filter(pl.col("rank") == k)
        items = "".join(
            f'<details><summary><span class="id">{_esc(h["hand_id"])}</span>: {h["dodges"]} discard'
            f"{'s' if h['dodges'] != 1 else ''} dodged a win ({_esc(h['what'])})</summary>"
            f'<div class="replay">{_esc(h["replay"])}</div></details>'
            for h in hands.iter_rows(named=True)
        )
        waited = "".join(
            f'<details class="wait"><summary><span class="id">{_esc(h["hand_id"])}</span>: waited on the wall '
            f"({_esc(h['what'])})</summary>"
            f'<div class="replay">{_esc(h["replay"])}</div></details>'
            for h in waits.filter(pl.col("rank") == k).iter_rows(named=True)
        )
        parts.append(
            f'<div id="info-{k}-hands"><h3><a href="#info-{k}">#{k}</a> {_who(s.player, pages)}</h3>'
            + (items or '<p class="note">No hand read back shows a dodged win.</p>')
            + (f"<h4>Waits on the tiles the wall held</h4>{waited}" if waited else "")
            + "</div>"
        )
    return (
        f'<section id="hands"><h2>{_esc(title)}</h2>{"".join(parts)}<p class="note">Dodged wins: hands where the '
        "player threw a tile nobody could win on while holding one an opponent still in could win on whose "
        "discard would have left its hand as close to ready: the choice a player who sees the hands always makes, "
        "and the screen counts the absence of the other; most such discards first. Waits: discards into a ready "
        "hand whose wait had more copies left in the wall than another wait the player saw as many copies of "
        "(unseen: not in its hand, a river or a meld; in the wall: not dealt or drawn yet), widest margin first. "
        "Each hand as <code>xuezhan replay HAND --warehouse W</code> prints it; seats count from 0.</p></section>"
    )


def _info_method() -> str:
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


def _collusion_method(screen: collusion_dash.Screen) -> str:
    names = "; ".join(
        f'<b>{_esc(en)}</b> <span class="zh">{_esc(zh)}</span>' for en, zh in collusion_dash.SIGNAL_NAMES.values()
    )
    return (
        '<section><h2>How the screen works</h2><p class="note">'
        f"Signals, each counted while both players were still in the hand: {names} — one discards a tile the "
        "other wins on or calls; one discards a tile the other could win on; one passes a win on the other's "
        "discard; one pays the other 查叫 or 花猪 money at the end of the wall. Each count is compared with "
        "what the two players' own rates with everyone else predict, and with the same players' other "
        "opponents in the same hands (an exact permutation null). The signals' z-scores combine into the "
        f"pair score, p = 1 − Φ(score); pairs are flagged by Benjamini–Yekutieli q ≤ {_fdr(screen.fdr)} "
        "(valid when pairs share players). Pairs with fewer shared hands than the threshold are not "
        "screened. Details: pipeline/audit/collusion.py.</p></section>"
    )


# ---------------------------------------------------------------------------------------------- stacked deals
def _deals_summary(s: deals_dash.Screen) -> str:
    rate = _fdr(s.fdr)
    tested = [r for r in s.results if r.p is not None]
    if not tested:
        why = s.note or (
            "no player, seat, table or session has enough hands whose deal is known (levels full and dealt)"
        )
        verdict = f'<p class="verdict"><b>Nothing was screened</b>: {_esc(why)}.</p>'
    elif not s.flagged:
        verdict = (
            f'<p class="verdict"><b>Nothing is flagged</b> at a false discovery rate of {rate}: no player, seat, '
            f"table or session of the {len(tested):,} screened was dealt better hands than fair walls deal.</p>"
        )
    else:
        names = ", ".join(f"{_esc(r.kind)} {_esc(r.group)}" for r in s.flagged)
        verdict = (
            f'<p class="verdict"><b class="flag">{len(s.flagged):,} flagged</b> of {len(tested):,} screened, at '
            f"a false discovery rate of {rate} per kind: {names}. A flag is a reason to replay the hands below, "
            "not a verdict.</p>"
        )
    return f'<section class="summary">{verdict}</section>'


def _deals_evidence(df: pl.DataFrame) -> str:
    title = "Flagged groups and their best deals, replayed"
    if not df.height:
        return f'<section><h2>{_esc(title)}</h2><p class="note">Nothing flagged: no hands to show.</p></section>'
    parts = []
    for (k, kind, group), hands in df.group_by(["rank", "kind", "group"], maintain_order=True):
        items = "".join(
            f'<details><summary><span class="id">{_esc(h["hand_id"])}</span> seat {h["seat"]} '
            f"({_esc(h['player'])}{', dealer' if h['dealer'] else ''}): dealt {h['shanten']} from ready"
            f"{_EVIDENCE_WALL.get(h['wall_commitment'], '')}</summary>"
            f'<div class="replay">{_esc(h["replay"])}</div></details>'
            for h in hands.iter_rows(named=True)
        )
        parts.append(f'<div id="deal-{k}"><h3>{_esc(kind)} {_esc(group)}</h3>{items}</div>')
    return (
        f'<section><h2>{_esc(title)}</h2>{"".join(parts)}<p class="note">Each hand as <code>xuezhan replay '
        "HAND --warehouse W</code> prints it, read back from the line it was ingested from.</p></section>"
    )


# what a flagged hand's wall commitment proved, beside its deal
_EVIDENCE_WALL = {
    "verified": "; its wall is the one committed before play (a deal of chance, not a changed wall)",
    "seed_mismatch": '; <b class="flag">its revealed seed is not the committed one</b>',
    "wall_mismatch": '; <b class="flag">its wall is not the committed one</b>',
}


def _deals_commitments(s: deals_dash.Screen) -> str:
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
        f'<tr><td>{_esc(status)}</td><td class="num">{n:,}</td><td>{_esc(meaning)}</td>'
        f'<td class="id">{_esc(", ".join(first))}</td></tr>'
        for status, n, meaning, first in walls.rows()
    )
    return (
        f"<section><h2>Wall commitments</h2>{head}<p>{_esc(walls.line())}.</p><table><thead><tr><th>status</th>"
        f"<th>hands</th><th>meaning</th><th>first hands</th></tr></thead><tbody>{rows}</tbody></table>"
        '<p class="note">A platform that publishes a hash of its shuffle seed before play and reveals the seed '
        "after lets each wall be regenerated: a verified wall was not rearranged after the commitment, whoever "
        "was dealt what; a mismatch is a wall (or seed) that is not the committed one. A verified wall does not "
        "show that the platform chose its seed fairly, and a stacked deal by other means (a seat given tiles "
        "outside the wall) would show in the validator's tile checks. Hands with no seed revealed rest on the "
        "statistical screen alone.</p></section>"
    )


def _deals_table(df: pl.DataFrame) -> str:
    title = "Top groups of each kind"
    if not df.height:
        return ""
    rows = "".join(
        f'<tr><td>{_esc(r["kind"])}</td><td class="id">{_esc(r["group"])}</td><td class="num">{r["hands"]:,}</td>'
        f'<td class="num">{r["mean"]:.2f}</td><td class="num">{r["fair"]:.2f}</td><td class="num">{r["z"]:+.1f}</td>'
        f'<td class="num">{r["p"]:.1e}</td><td class="num">{r["q"]:.3f}</td><td>{"YES" if r["flagged"] else ""}</td>'
        "</tr>"
        for r in df.iter_rows(named=True)
    )
    return (
        f"<section><h2>{_esc(title)}</h2><table><thead><tr><th>kind</th><th>group</th><th>dealt hands</th>"
        "<th>mean shanten</th><th>fair</th><th>z</th><th>p</th><th>q</th><th>flag</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _deals_method() -> str:
    return (
        '<section><h2>How the screen works</h2><p class="note">Each dealt hand is scored by its starting shanten '
        "(tile changes from ready; at a table of three suits the best over the suit to declare void). With a fair "
        "shuffle a seat's 13 tiles (the dealer's 14) are a random subset of the wall, so the distribution of that "
        "score is known exactly, whoever plays; a group's sum is compared with the exact distribution of the sum "
        "of as many fair deals (lower tail), and groups are flagged by Benjamini–Yekutieli q within each kind. "
        "Only hands of level full or dealt carry their deal. Details: pipeline/audit/deals.py.</p></section>"
    )


# ---------------------------------------------------------------------------------------------- the page
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


STYLE = """
:root { --ink: #1f2d3a; --muted: #667; --line: #dde3ea; --accent: #c0392b; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #f6f8fa;
       font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", "Noto Sans SC",
                    "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", "WenQuanYi Zen Hei", sans-serif;
       line-height: 1.45; }
header { background: #1f2d3a; color: #fff; padding: 14px 28px; }
header h1 { margin: 0 0 6px; font-size: 20px; }
header p.scope { margin: 0 0 6px; color: #f5d76e; font-size: 14px; }
nav a { color: #cfe3f5; margin-right: 14px; text-decoration: none; }
nav a.here { color: #fff; font-weight: bold; border-bottom: 2px solid var(--accent); }
main { max-width: 1000px; margin: 0 auto; padding: 18px 28px 40px; overflow-wrap: break-word; }
section.notice { background: #fff4e5; border: 2px solid #e6a23c; border-radius: 6px; padding: 4px 16px;
                 margin-bottom: 16px; }
section.summary { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 4px 16px; }
figure.chart { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 18px 0;
               padding: 10px; }
figure.chart img { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 6px; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #eef2f6; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.def { color: var(--muted); }
span.ci, span.n, p.note { color: var(--muted); font-size: 12px; }
footer { color: var(--muted); font-size: 12px; max-width: 1000px; margin: 0 auto; padding: 0 28px 30px; }
p.verdict { font-size: 15px; }
.flag { color: var(--accent); }
tr.warning td { color: var(--muted); }
tr.flagged td { background: #fbeeee; }
div.pair h3 { font-size: 15px; margin: 18px 0 4px; }
abbr { text-decoration: underline dotted; cursor: help; }
td { overflow-wrap: break-word; }
td.id { min-width: 9em; }
details summary { cursor: pointer; font-size: 12px; }
section.findings { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 4px 16px 8px; }
section.findings h2 { margin: 10px 0 4px; }
p.verdict.ok { color: #1e7b34; }
span.sev { display: inline-block; border-radius: 3px; padding: 0 6px; font-size: 12px; color: #fff;
           white-space: nowrap; }
table.findings td:nth-child(4) { min-width: 10em; }
td.code { white-space: nowrap; }
div.wide { overflow-x: auto; }
table.directory span.ci { display: block; }
span.sev.high { background: var(--accent); }
span.sev.medium { background: #d48806; }
span.sev.low { background: #7a8794; }
tr.sev-high td { background: #fbeeee; }
span.badge { display: inline-block; border-radius: 3px; padding: 0 5px; margin: 1px 2px 1px 0; font-size: 11px;
             border: 1px solid #7a8794; color: #445; white-space: nowrap; }
span.badge.high { border-color: var(--accent); color: var(--accent); }
span.badge.medium { border-color: #d48806; color: #9a6200; }
section.banner { border-radius: 6px; padding: 4px 16px; margin-bottom: 14px; border: 1px solid var(--line);
                 background: #fff; }
section.banner.high { border: 2px solid var(--accent); background: #fdf3f2; }
section.banner.medium { border: 2px solid #e6a23c; background: #fff8ec; }
section.banner h2 { margin: 10px 0 4px; font-size: 17px; }
section.banner.high h2 { color: var(--accent); }
section.banner ul { margin: 6px 0; padding-left: 20px; }
section.banner li { margin: 3px 0; }
table.sortable th { cursor: pointer; user-select: none; white-space: nowrap; }
table.sortable th[aria-sort="ascending"]::after { content: " ▲"; font-size: 10px; }
table.sortable th[aria-sort="descending"]::after { content: " ▼"; font-size: 10px; }
th.num { text-align: right; }
input#filter { font: inherit; padding: 4px 8px; width: 260px; border: 1px solid #b8c2cc; border-radius: 4px; }
table.figures td, table.fan td { vertical-align: middle; }
svg.strip, svg.bars { display: block; }
svg.rolling { display: block; max-width: 100%; height: auto; }
figure.rolling { margin: 8px 0; }
table.opponents th { white-space: normal; vertical-align: bottom; }
table.info { font-size: 12px; }
table.info th { white-space: normal; vertical-align: bottom; }
table.info th, table.info td { padding: 4px 5px; }
span.key.subject { color: #c0392b; }
span.key.population { color: #34495e; }
span.pos { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; overflow-wrap: anywhere; }
div.replay { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; white-space: pre;
             overflow-x: auto; margin: 4px 0 10px; }
"""

# Marks each image once decoded, and the body with loaded/total: a headless browser's --dump-dom shows it.
MARKER = """
(function () {
  function mark() {
    var imgs = document.images, ok = 0;
    for (var i = 0; i < imgs.length; i++) {
      var loaded = imgs[i].complete && imgs[i].naturalWidth > 0;
      imgs[i].setAttribute("data-loaded", loaded ? "true" : "false");
      if (loaded) { ok++; }
    }
    document.body.setAttribute("data-images", ok + "/" + imgs.length);
    var root = document.documentElement;
    document.body.setAttribute("data-overflow", String(Math.max(0, root.scrollWidth - root.clientWidth)));
    document.body.setAttribute("data-broken", broken().join("|"));
  }
  // the words of the tables' cells (letters only) that the layout splits over two lines
  function broken() {
    var out = [], cells = document.querySelectorAll("td, th");
    for (var i = 0; i < cells.length; i++) {
      var walk = document.createTreeWalker(cells[i], NodeFilter.SHOW_TEXT), node;
      while ((node = walk.nextNode())) {
        var re = /[A-Za-z]{2,}/g, m;
        while ((m = re.exec(node.data))) {
          var r = document.createRange();
          r.setStart(node, m.index);
          r.setEnd(node, m.index + m[0].length);
          var lines = {}, rects = r.getClientRects(), n = 0;
          for (var k = 0; k < rects.length; k++) {
            var top = Math.round(rects[k].top);
            if (rects[k].width > 0 && !lines[top]) { lines[top] = 1; n++; }
          }
          if (n > 1) { out.push(m[0]); }
        }
      }
    }
    return out;
  }
  if (document.readyState === "complete") { mark(); } else { window.addEventListener("load", mark); }
})();
"""


# Sorts a table.sortable by the heading clicked (numbers by their data-v, biggest first on the first click; text
# in order), empty cells last either way; and keeps the directory's rows whose player id holds the filter's text.
SORTER = """
(function () {
  function key(cell) {
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortBy(table, col, th) {
    var numeric = th.getAttribute("data-sort") === "num";
    var was = th.getAttribute("aria-sort");
    var dir = was ? (was === "descending" ? 1 : -1) : (numeric ? -1 : 1);
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", dir < 0 ? "descending" : "ascending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      if (x === "" || y === "") { return x === y ? 0 : (x === "" ? 1 : -1); }
      if (numeric) { return (parseFloat(x) - parseFloat(y)) * dir; }
      return x.localeCompare(y) * dir;
    });
    for (var r = 0; r < rows.length; r++) { body.appendChild(rows[r]); }
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () { sortBy(table, col, th); });
    });
  });
  var filter = document.getElementById("filter");
  if (filter) {
    filter.addEventListener("input", function () {
      var text = filter.value.toLowerCase();
      var rows = document.querySelectorAll("table.directory tbody tr");
      Array.prototype.forEach.call(rows, function (row) {
        row.style.display = key(row.cells[0]).toLowerCase().indexOf(text) >= 0 ? "" : "none";
      });
    });
  }
})();
"""
SCRIPT = MARKER + SORTER  # the one script of every page


def scope_text(scope: Scope) -> str:
    """What a report's every page says it covers, in its header: ``""`` for a report of every hand.

    >>> first, rest = scope_text(Scope(table="t1", tz="UTC")).split("; ")
    >>> first
    'This report covers only the hands at table t1 (dates and months in time zone UTC)'
    >>> scope_text(Scope(tz="Asia/Shanghai")), scope_text(Scope())
    ('Every hand; dates and months in time zone Asia/Shanghai.', '')
    """
    zone = f"dates and months in time zone {scope.tz}"
    if not scope.filters:
        return "" if scope.tz is None else f"Every hand; {zone}."
    words = scope.describe()
    if scope.tz is not None and scope.since is None and scope.until is None:  # describe names the zone with a time
        words += f" ({zone})"
    return f"This report covers only the {words}; the rejected lines are the whole warehouse's."


def _whole_note(scope: Scope) -> str:
    """The quality page's first words under a filter: which of its figures the filter cannot apply to."""
    return (
        '<section class="banner scope" id="scope"><p>The stored hands, their issues and the replayed hands here are '
        f"the {_esc(scope.describe())}. The rejected lines, and the ingest runs with their lines read, are the "
        "whole warehouse's: a line ingest rejected stored no hand, so it has no table, player or time to filter by "
        f"({', '.join(WHOLE)}).</p></section>"
    )


def _page(
    page: Page,
    pages: list[Page],
    body: list[str],
    font: charts.Fonts,
    *,
    here: Page | None = None,
    scope: Scope = EVERYTHING,
) -> str:
    """The whole HTML file of ``page``: ``pages`` in the navigation bar, ``here`` (default ``page``) marked, and
    under the title the hands the report covers when ``scope`` filters them or sets the time zone."""
    mark, current = ' class="here"', (here or page).file
    nav = "".join(f'<a href="{_href(p.file)}"{mark if p.file == current else ""}>{_esc(p.nav)}</a>' for p in pages)
    fonts_note = (
        f"Chart labels drawn with {font.cjk_family}."
        if font.cjk
        else "No CJK font was installed when this report was built: chart labels use English or pinyin "
        "names (install fonts-noto-cjk for Chinese)."
    )
    words = scope_text(scope)
    covers = f'<p class="scope" id="scope-line">{_esc(words)}</p>' if words else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(page.title)} · {_esc(TITLE)}</title><style>{STYLE}</style></head>"
        '<body data-images="pending">'
        f"<header><h1>{_esc(TITLE)} — {_esc(page.title)}</h1>{covers}<nav>{nav}</nav></header>"
        f"<main>{''.join(body)}</main>"
        f"<footer>Made by xuezhan from the warehouse's replayed hands. {_esc(fonts_note)}</footer>"
        f"<script>{SCRIPT}</script>"
        "</body></html>\n"
    )
