"""The site: the HTML report of a warehouse, assembled from the dashboards: an overview page, a page per selected
player, a data-quality page, the scoring audit, the collusion screen and the stacked-deal screen.

The report opens one DuckDB connection on the warehouse; every dashboard, the audit and the collusion screen
run on it.

Layout under ``out_dir``::

    index.html                 overview: fan, patterns, outcomes, flower pigs, deal-in and net points
    player-<id>.html           one per selected player: their tendencies beside all players'
    quality.html               validator issues and rejected lines by code
    audit.html                 the audit's findings by money: by code, month and player; the top findings
    collusion.html             the pair screen: heat map of pair scores, top pairs, flagged pairs' hands
    deals.html                 the stacked-deal screen: flagged players, seats, tables and sessions, each
                               evidence hand replayed
    charts/<page>-<chart>.png  every chart as a PNG file

Each HTML file stands alone: styles and a small script inline, charts embedded as base64 PNG, no fetch of any
kind (the pages link to each other and to the PNG files, nothing more). The inline script marks every
``<img>`` with ``data-loaded="true"`` once it has decoded (``naturalWidth > 0``) and the ``<body>`` with
``data-images="loaded/total"``, so a headless browser's ``--dump-dom`` shows whether the page rendered.

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
from pipeline.analytics import queries
from pipeline.analytics.metrics import METRIC_BY_ID
from pipeline.audit import scoring
from pipeline.audit.collusion import SIGNALS, screen_levels
from pipeline.report import charts
from pipeline.report.names import file_stem

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
    top_players: int = 3,
    min_hands: int = 200,
    on_step: Callable[[str], None] | None = None,
) -> Path:
    """Write the report of the warehouse at ``warehouse_dir`` into ``out_dir``; return the path of index.html.

    ``players``: the players who get a page (default: the ``top_players`` players with most replayed hands).
    ``min_hands``: the shared hands a pair needs to be screened for collusion; when no pair of the warehouse
    has that many, the page falls back to a smaller threshold and says which
    (:func:`dashboards.collusion.choose_min_hands`).
    ``on_step`` is called with the name of each chart before it is drawn, and before the collusion screen
    runs (progress for the CLI).
    Raises ``FileNotFoundError`` without a warehouse and :class:`dashboards.player.UnknownPlayer` (a
    ``ValueError``) for a player with no replayed hands; nothing is written then.
    """
    con = queries.connect(warehouse_dir)
    queries.remember_bases(con)  # the pages share the players' base counts
    try:
        selected = _select_players(con, players, top_players)
        return _build(con, Path(out_dir), selected, min_hands, on_step)
    finally:
        con.close()


def _build(
    con: duckdb.DuckDBPyConnection,
    out: Path,
    selected: list[str],
    min_hands: int,
    on_step: Callable[[str], None] | None,
) -> Path:
    (out / "charts").mkdir(parents=True, exist_ok=True)
    step = on_step or (lambda _name: None)
    font = charts.fonts()

    index = Page("index.html", "Overview", "Overview")
    quality_page = Page("quality.html", "Data quality", "Data quality")
    audit_page = Page("audit.html", "Audit", "Scoring and rule audit")
    collusion_page = Page("collusion.html", "Collusion", "Collusion screen")
    deals_page = Page("deals.html", "Deals", "Stacked deals")
    player_pages = _player_pages(selected)
    pages = [index, *player_pages.values(), quality_page, audit_page, collusion_page, deals_page]

    by_level = queries.hands_by_level(con)
    replayed = {level: c["replayed"] for level, c in by_level.items()}

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

    # Overview
    body = [font_notice(font), _overview_summary(con, selected, player_pages, quality_page, audit_page, collusion_page)]
    body.append(_tables_section(overview.prep_tables(con)))
    body.append(_levels_section(by_level))
    body += [_figure(draw("overview", spec, con)[1]) for spec in overview.CHARTS]
    (out / index.file).write_text(_page(index, pages, body, font), encoding="utf-8")

    # Players
    for pid, page in player_pages.items():
        body = [_player_summary(con, pid)]
        theirs = {level: c["replayed"] for level, c in queries.hands_by_level(con, pid).items()}
        body += [_figure(draw(Path(page.file).stem, spec, con, pid, hands=theirs)[1]) for spec in player.CHARTS]
        body.append(_player_table(player.prep_player_table(con, pid)))
        (out / page.file).write_text(_page(page, pages, body, font), encoding="utf-8")

    # Data quality
    body = [_table_section("The warehouse", quality.prep_summary(con), {"figure": "figure", "value": "count"})]
    issues, chart = draw("quality", quality.CHARTS[0], con, hands={k: c["stored"] for k, c in by_level.items()})
    body += [
        _figure(chart),
        _codes_table("Issues by code", issues, ("code", "severity", "issues", "hands", "share")),
    ]
    rejects, chart = draw("quality", quality.CHARTS[1], con)
    body += [_figure(chart), _codes_table("Rejects by code", rejects, ("code", "rejects", "bytes", "share"))]
    (out / quality_page.file).write_text(_page(quality_page, pages, body, font), encoding="utf-8")

    # Audit: the findings are the audit's (pipeline.audit.scoring), computed once for every chart.
    result = scoring.audit(con)
    by_code, by_month, by_player = audit_dash.CHARTS
    body = [_audit_summary(con, result, quality_page)]
    body += [_figure(draw("audit", by_code, result)[1])]
    body += [_figure(draw("audit", by_month, con, result)[1])]
    body += [_figure(draw("audit", by_player, result)[1])]
    body.append(_findings_table(audit_dash.prep_top_findings(result)))
    (out / audit_page.file).write_text(_page(audit_page, pages, body, font), encoding="utf-8")

    # Collusion: the screen runs once; the charts and tables arrange its result.
    step("collusion: screen")
    screen = collusion_dash.screen_pairs(con, min_hands=min_hands)
    body = [_collusion_summary(screen), _collusion_levels(screen_levels(replayed))]
    body += [_figure(draw("collusion", spec, screen)[1]) for spec in collusion_dash.CHARTS]
    body.append(_evidence_section(screen, collusion_dash.prep_evidence(screen)))
    body.append(_pairs_table(collusion_dash.prep_top_pairs(screen)))
    body.append(_collusion_method(screen))
    (out / collusion_page.file).write_text(_page(collusion_page, pages, body, font), encoding="utf-8")

    # Stacked deals: the screen runs once; each flagged group's hands are replayed from their sources.
    step("deals: screen")
    deals = deals_dash.screen(con)
    body = [_deals_summary(deals)]
    body += [_figure(draw("deals", spec, deals)[1]) for spec in deals_dash.CHARTS]
    body.append(_deals_evidence(deals_dash.prep_evidence(con, deals)))
    body += [_deals_table(deals_dash.prep_top(deals)), _deals_method()]
    (out / deals_page.file).write_text(_page(deals_page, pages, body, font), encoding="utf-8")
    return out / index.file


def _select_players(con: duckdb.DuckDBPyConnection, players: list[str] | None, top: int) -> list[str]:
    if players is None:
        return player.prep_top_players(con, top)["player"].to_list()
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
    selected: list[str],
    player_pages: dict[str, Page],
    quality_page: Page,
    audit_page: Page,
    collusion_page: Page,
) -> str:
    counts = queries.run(con, "warehouse_counts").row(0, named=True)
    top = player.prep_top_players(con, 10**9)
    wins = int(overview.prep_fan_distribution(con)["wins"].sum() or 0)
    links = (
        ", ".join(
            f'<a href="{_href(page.file)}">{_esc(pid)}</a> ({_hands(top, pid):,} hands)'
            for pid, page in player_pages.items()
        )
        or "none selected"
    )
    return (
        '<section class="summary">'
        f"<p><b>{counts['replayed_hands']:,}</b> replayed hands ({counts['hands']:,} stored, "
        f"{counts['valid_hands']:,} valid, {counts['rejects']:,} rejected lines), "
        f"<b>{top.height:,}</b> players, <b>{wins:,}</b> wins. "
        "Statistics count replayed hands only; fan is the engine's total before any cap "
        "(平胡 = 1 fan).</p>"
        f"<p>Player pages: {links}. "
        f'Data quality: <a href="{_href(quality_page.file)}">issues and rejects</a>. '
        f'Audit: <a href="{_href(audit_page.file)}">scoring differences and rule violations by money</a>. '
        f'Collusion: <a href="{_href(collusion_page.file)}">the pair screen</a>.</p>'
        "</section>"
    )


def _hands(top: pl.DataFrame, pid: str) -> int:
    rows = top.filter(pl.col("player") == pid)
    return int(rows["hands"][0]) if rows.height else 0


def _player_summary(con: duckdb.DuckDBPyConnection, pid: str) -> str:
    df = player.prep_player_metrics(con, pid, ("hands", "win_rate", "deal_in_rate", "net_points_per_hand"))
    mine = {r["metric"]: r for r in df.filter(pl.col("who") == player.PLAYER).iter_rows(named=True)}
    net = mine["net_points_per_hand"]
    return (
        '<section class="summary">'
        f"<p><b>{_esc(pid)}</b>: {int(mine['hands']['value'] or 0):,} replayed hands, "
        f"won {charts.pct(mine['win_rate']['value'])} of them, "
        f"dealt in in {charts.pct(mine['deal_in_rate']['value'])}, "
        f"net {charts.num(net['value'])} points per hand (total {int(net['num'] or 0):+,}). "
        "Red: the player; dark blue: all players in the warehouse (their counts added up), "
        "each with its 95% interval.</p></section>"
    )


def _cell(value: Any, low: Any, high: Any, share: bool) -> str:
    fmt = charts.pct if share else charts.num
    if value is None:
        return "–"
    span = charts.interval(low, high, fmt)
    return f'{fmt(value)} <span class="ci">{_esc(span)}</span>' if span else fmt(value)


def _player_table(df: pl.DataFrame) -> str:
    """Every metric: the player's value [95%] (n) beside all players'."""
    rows = []
    for mid in dict.fromkeys(df["metric"].to_list()):
        m = METRIC_BY_ID[mid]
        cells = []
        for who in (player.PLAYER, player.POPULATION):
            r = df.filter((pl.col("metric") == mid) & (pl.col("who") == who)).row(0, named=True)
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
        "<th>all players</th><th>definition</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        '<p class="note">Rates with 95% Wilson intervals, means with 95% normal intervals; n is the '
        "denominator (hands, wins, deal-ins …). Definitions: schemas/METRICS.md.</p></section>"
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


def _codes_table(title: str, df: pl.DataFrame, columns: tuple[str, ...]) -> str:
    if not df.height:
        return f'<section><h2>{_esc(title)}</h2><p class="note">None.</p></section>'
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
        f"<section><h2>{_esc(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
        f'</table><p class="note">share: of {share_of}.</p></section>'
    )


# ---------------------------------------------------------------------------------------------- audit
def _audit_summary(con: duckdb.DuckDBPyConnection, result: scoring.Audit, quality_page: Page) -> str:
    f = result.findings
    stored = int(queries.run(con, "warehouse_counts")["hands"][0] or 0)
    hands = f["hand_id"].n_unique() if f.height else 0
    money = int(f["money"].sum() or 0) if f.height else 0
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
            f"({charts.pct(hands / stored if stored else None)}), <b>{money:,}</b> points at stake.</p>"
        )
    return (
        '<section class="summary">'
        + found
        + "<p>Money at stake: for a scoring or settlement difference, the points it moves; for a rule "
        "violation, the points the source system settled in that hand (a hand with two violations counts it "
        "twice). Every finding names its hand and, where there is one, the event (index in the record, "
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
    rows = []
    for r in df.iter_rows(named=True):
        code = f'<abbr title="{_esc(r["meaning"])}">{_esc(r["code"])}</abbr>' if r["meaning"] else _esc(r["code"])
        rows.append(
            f'<tr class="{_esc(r["severity"])}"><td class="num">{r["rank"]}</td>'
            f'<td class="id">{_esc(r["hand_id"])}</td>'
            f'<td class="num">{_esc(_fmt(r["event"]))}</td><td>{code}</td><td>{_esc(_fmt(r["player"]))}</td>'
            f'<td class="num">{r["money"]:,}</td><td class="def">{_message(r["message"], r["position"])}</td></tr>'
        )
    shown = f"all {n:,}" if df.height == n else f"the top {df.height:,} of {n:,}"
    return (
        f"<section><h2>{_esc(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}"
        f'</tbody></table><p class="note">{_esc(shown)} findings, most money first (then hand and event). '
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
    if not screen.pairs:
        verdict = (
            f'<p class="verdict"><b>Nothing was screened</b>: no pair of players shared {screen.min_hands:,} '
            "replayed hands, too few to tell help from chance.</p>"
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
            f"flagged</b> of {len(screen.pairs):,} screened, at a false discovery rate of {rate}: {names}. "
            "A flag is a reason to replay the hands listed below, not a verdict: among flagged pairs, up to "
            f"{rate} are expected to be honest.</p>"
        )
    return (
        '<section class="summary">'
        + verdict
        + f"<p>{players:,} players; {screen.shared.height:,} pairs sat at one table for at least one "
        f"replayed hand. {_esc(screen.threshold_note())}</p></section>"
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
            f'<div class="pair"><h3>#{rank} {_pair(*r.players)}: {r.shared_hands:,} shared hands, score '
            f"{r.score:.2f}, p = {r.p:.1e}, q = {_esc(collusion_dash.q_text(r.q))}</h3>"
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
        f"<section><h2>{_esc(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
        f'</table><p class="note">The best {df.height:,} of {n:,} screened pairs. needed: the score the rank '
        f"needs to be flagged at a false discovery rate of {_fdr(float(df['fdr'][0]))}. Signal z-scores: "
        "positive when the pair does more of it for each other than for their other opponents in the same "
        "hands. sit together: shared hands / what random seating gives (reported, not scored: friends sit "
        "together and play honestly).</p></section>"
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
    for (kind, group), hands in df.group_by(["kind", "group"], maintain_order=True):
        items = "".join(
            f'<details><summary><span class="id">{_esc(h["hand_id"])}</span> seat {h["seat"]} '
            f"({_esc(h['player'])}{', dealer' if h['dealer'] else ''}): dealt {h['shanten']} from ready</summary>"
            f'<div class="replay">{_esc(h["replay"])}</div></details>'
            for h in hands.iter_rows(named=True)
        )
        parts.append(f"<div><h3>{_esc(kind)} {_esc(group)}</h3>{items}</div>")
    return (
        f'<section><h2>{_esc(title)}</h2>{"".join(parts)}<p class="note">Each hand as <code>xuezhan replay '
        "HAND --warehouse W</code> prints it, read back from the line it was ingested from.</p></section>"
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
td { overflow-wrap: anywhere; }
td.id { min-width: 9em; }
details summary { cursor: pointer; font-size: 12px; }
span.pos { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; word-break: break-all; }
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
  }
  if (document.readyState === "complete") { mark(); } else { window.addEventListener("load", mark); }
})();
"""


def _page(page: Page, pages: list[Page], body: list[str], font: charts.Fonts) -> str:
    here = ' class="here"'
    nav = "".join(f'<a href="{_href(p.file)}"{here if p.file == page.file else ""}>{_esc(p.nav)}</a>' for p in pages)
    fonts_note = (
        f"Chart labels drawn with {font.cjk_family}."
        if font.cjk
        else "No CJK font was installed when this report was built: chart labels use English or pinyin "
        "names (install fonts-noto-cjk for Chinese)."
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(page.title)} · {_esc(TITLE)}</title><style>{STYLE}</style></head>"
        '<body data-images="pending">'
        f"<header><h1>{_esc(TITLE)} — {_esc(page.title)}</h1><nav>{nav}</nav></header>"
        f"<main>{''.join(body)}</main>"
        f"<footer>Made by xuezhan from the warehouse's replayed hands. {_esc(fonts_note)}</footer>"
        f"<script>{MARKER}</script>"
        "</body></html>\n"
    )
