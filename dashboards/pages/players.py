"""players.html and player-<id>.html: the player directory (every player with a replayed hand, sortable,
linked to their page) and one page per selected player: the findings that concern them, their five largest
deviations from the room (:mod:`pipeline.analytics.yardsticks`: percentile, the best quartile's band, z), their
key figures beside their population's (inline SVG intervals), head to head against every opponent, win and deal-in
rates over time (inline SVG), their results against the room, wins by fan, the audit's findings on their seat and
every metric with its percentile (:mod:`dashboards.player`).

A player's page draws no chart and runs no query: :class:`PlayerParts` holds what every page is made of,
computed once for all players, and a page is string assembly, so that thousands of players add seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from dashboards import findings as found_dash
from dashboards import levels_note, player
from dashboards.html import Page, cell, ci, esc, finding_message, fmt, href, link, num_cell, player_link, sortable_head
from pipeline.analytics.metrics import DECISION_METRICS, METRIC_BY_ID, NOT_REVIEWED, decision_values
from pipeline.analytics.scales import Scales
from pipeline.analytics.yardsticks import MIN_HANDS as YARD_HANDS
from pipeline.analytics.yardsticks import Yardstick, deviations
from pipeline.audit import scoring
from pipeline.audit.assist import MIN_CLEAR, MIN_DECISIONS, MIN_ROOM, Assist
from pipeline.audit.tallies import StoredScreen
from pipeline.audit.think import MIN_DECISIONS as THINK_MIN
from pipeline.audit.think import ThinkTime
from pipeline.report import charts, numbers, svg
from pipeline.report.names import file_stem


def page_file(player_id: str, digest_chars: int = 8) -> str:
    """``player-<id>.html``, the id made a file name by :func:`pipeline.report.names.file_stem` (readable,
    safe, distinct): one path component of at most 7 + 64 + 1 + ``digest_chars`` + 5 bytes.

    >>> page_file("p001"), page_file("张三/../x"), page_file("P001")
    ('player-p001.html', 'player-张三_.._x-7975e758.html', 'player-P001-df1e4005.html')
    """
    return f"player-{file_stem(player_id, digest_chars)}.html"


def short(text: str, limit: int = 40) -> str:
    """A data string cut for a navigation bar or a title, with a digest of the whole (the page says it whole).

    >>> short("p001"), short("x" * 50, 8)
    ('p001', 'xxxxxxx…#77cf')
    """
    return text if len(text) <= limit else f"{text[: limit - 1]}…#{charts.digest(text, 4)}"


def player_pages(selected: Iterable[str]) -> dict[str, Page]:
    chosen = list(selected)
    files = {p: page_file(p) for p in chosen}
    if len(set(files.values())) < len(files):  # two digests of 32 bits alike: longer digests for every page
        files = {p: page_file(p, 40) for p in chosen}
    return {p: Page(files[p], short(p), f"Player {short(p)}") for p in chosen}


Lookup = dict[tuple[str, str], dict[str, Any]]  # (metric, who) -> that row of the player's metrics


def lookup(df: pl.DataFrame) -> Lookup:
    """The rows of a player's metrics (:func:`dashboards.player.prep_player_metrics`' columns) by metric and
    side: a page reads a dozen of them, and a dictionary look-up costs nothing beside a frame filter."""
    return {(r["metric"], r["who"]): r for r in df.iter_rows(named=True)}


def _figure(mid: str, value: float | None) -> str:
    return numbers.pct(value) if METRIC_BY_ID[mid].kind == "rate" else numbers.num(value)


def band_text(y: Yardstick) -> str:
    """The best quartile's band of a metric: ``low – high``, one figure where they are one."""
    if y.best is None:
        return "–"
    low, high = (_figure(y.metric, v) for v in y.best)
    return low if low == high else f"{low} – {high}"


def yard_cells(y: Yardstick | None) -> str:
    """A metric's percentile among the room's players and the band of the room's best quartile (two cells)."""
    if y is None or y.percentile is None:
        return '<td class="num" data-v="">–</td><td class="num">–</td>'
    return num_cell(y.percentile, f"{y.percentile:.0f}") + f'<td class="num">{esc(band_text(y))}</td>'


def yard_cell(y: Yardstick | None) -> str:
    """The two in one cell (the key figures' table, whose interval strips take the width)."""
    if y is None or y.percentile is None:
        return '<td class="num">–</td>'
    return f'<td class="num">{y.percentile:.0f}<br><span class="n">best {esc(band_text(y))}</span></td>'


YARD_HEADS = "<th>percentile</th><th>best quartile</th>"


def metrics_table(rows_of: Lookup, population: str = player.POPULATION, ys: dict[str, Yardstick] | None = None) -> str:
    """Every metric: the player's value [95%] (n) beside the population's (``population``: its words), with the
    player's percentile and the best quartile's band (``ys``: the player's yardsticks) where the metric has them."""
    rows = []
    ys = ys or {}
    for mid in dict.fromkeys(metric for metric, _ in rows_of):
        m = METRIC_BY_ID[mid]
        cells = []
        for who in (player.PLAYER, player.POPULATION):
            r = rows_of[(mid, who)]
            if m.kind == "count":
                cells.append(f"{numbers.num(r['value'])}")
            else:
                n = f' <span class="n">n={int(r["den"] or 0):,}</span>'
                cells.append(cell(r["value"], r["ci_low"], r["ci_high"], m.kind == "rate") + n)
        rows.append(
            f'<tr><td><span class="zh">{esc(m.name_zh)}</span> {esc(m.name_en)}</td>'
            f'<td class="num">{cells[0]}</td><td class="num">{cells[1]}</td>{yard_cells(ys.get(mid))}'
            f'<td class="def">{esc(m.definition)} ({esc(m.unit)})</td></tr>'
        )
    return (
        '<section id="metrics"><h2>Every metric</h2><table class="metrics"><thead><tr><th>metric</th><th>player</th>'
        f"<th>{esc(population)}</th>{YARD_HEADS}<th>definition</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        '<p class="note">Rates with 95% Wilson intervals, means with 95% normal intervals; n is the '
        "denominator (hands, wins, deal-ins …). Percentile and best quartile: see Largest deviations above. "
        "Definitions: schemas/METRICS.md.</p></section>"
    )


def badges(flags: list[str] | None, severity: str | None) -> str:
    return " ".join(f'<span class="badge {esc(severity or "")}">{esc(f)}</span>' for f in flags or [])


def directory(table: pl.DataFrame, pages: dict[str, Page], unusual: pl.DataFrame) -> str:
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
    head = sortable_head(heads)
    rows = []
    for r in table.iter_rows(named=True):
        pid = r["player"]
        flags = badges(r["flags"], r["severity"])
        z = r["z"]
        rows.append(
            f'<tr class="{"flagged" if r["severity"] == "high" else ""}">'
            f'<td class="id" data-v="{esc(pid)}">{player_link(pid, pages)}</td>'
            + (f'<td data-v="{esc(r["group"] or "")}">{esc(r["group"] or "–")}</td>' if mixed else "")
            + num_cell(r["hands"], f"{r['hands']:,}")
            + num_cell(r["win_rate"], numbers.pct(r["win_rate"]) + ci(r["win_low"], r["win_high"], True))
            + num_cell(
                r["deal_in_rate"], numbers.pct(r["deal_in_rate"]) + ci(r["deal_in_low"], r["deal_in_high"], True)
            )
            + num_cell(r["net"], f"{r['net']:+,}" if r["net"] is not None else "–")
            + num_cell(
                r["per_hand"],
                (f"{r['per_hand']:+.2f}" if r["per_hand"] is not None else "–")
                + ci(r["per_hand_low"], r["per_hand_high"], False),
            )
            + num_cell(z, f"{z:+.1f}" if z is not None else "–")
            + num_cell(
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
        f"{esc(pages_note)}. Click a column heading to sort (again to reverse); type in the box to keep the "
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
class PlayerParts:
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
    yard: dict[str, dict[str, Yardstick]]  # player -> metric -> yardstick (dashboards.player.prep_yardsticks)
    reference: dict[str | None, int]  # scale group -> its players with enough hands (the yardsticks' reference)
    states: dict[str, State]  # finding key -> its case standing (dashboards.findings.with_cases)
    decisions: player.Decisions | None  # the decision metrics (xuezhan review's tallies); None: not asked for

    @staticmethod
    def of(
        *,
        every: pl.DataFrame,
        levels: pl.DataFrame,
        fan: pl.DataFrame,
        opponents: dict[str, pl.DataFrame],
        rolling: Iterable[tuple[str, pl.DataFrame]],
        found: pl.DataFrame,
        unusual: pl.DataFrame,
        result: scoring.Audit,
        pages: dict[str, Page],
        scale: Scales,
        states: Mapping[str, State] | None = None,
        decisions: player.Decisions | None = None,
    ) -> PlayerParts:
        """The parts of every player's page from the frames of every player at once (:mod:`dashboards.player`):
        ``every`` (``prep_every_player``), ``levels`` (``prep_every_player_levels``), ``fan``
        (``prep_every_player_fan``), ``opponents`` (``prep_every_head_to_head``) and ``rolling``
        (``iter_rolling``: each player's frame drawn and dropped in turn); the first screen's ``found`` and
        ``unusual`` rows, the audit's ``result``, the player ``pages`` and the ``scale`` groups; ``states``: each
        finding's case standing by key (none: every finding new)."""

        def by_player(df: pl.DataFrame, column: str = "player") -> dict[str, pl.DataFrame]:
            return {str(k[0]): v for k, v in df.partition_by(column, as_dict=True).items() if k[0] is not None}

        def by_group(df: pl.DataFrame) -> dict[str | None, pl.DataFrame]:
            return {k[0]: v for k, v in df.partition_by("group", as_dict=True).items()}

        by_level: dict[str, dict[str, int]] = {}
        for r in levels.iter_rows(named=True):
            by_level.setdefault(r["player"], {})[r["level"]] = r["replayed"]
        mine: dict[str, Lookup] = {}
        group: dict[str, str | None] = {}
        for r in every.filter(pl.col("who") == player.PLAYER).iter_rows(named=True):
            mine.setdefault(r["player"], {})[(r["metric"], r["who"])] = r
            group[r["player"]] = r["group"]
        return PlayerParts(
            mine=mine,
            population={
                g: lookup(rows) for g, rows in by_group(every.filter(pl.col("who") == player.POPULATION)).items()
            },
            group=group,
            scale=scale,
            levels=by_level,
            fan=by_player(fan.filter(pl.col("player").is_not_null())),
            fan_all=by_group(fan.filter(pl.col("player").is_null())),
            unusual={r["player"]: r for r in unusual.iter_rows(named=True)},
            found={
                pid: rows.drop("who")
                for pid, rows in by_player(found.with_columns(who=pl.col("players")).explode("who"), "who").items()
            },
            none=found.head(0),
            audit=by_player(result.findings.filter(pl.col("player").is_not_null())),
            opponents=opponents,
            over_time={pid: over_time(frame) for pid, frame in rolling},
            pages=pages,
            yard=player.prep_yardsticks(every),
            reference=player.reference_sizes(every),
            states=dict(states or {}),
            decisions=decisions,
        )

    def body(self, pid: str) -> list[str]:
        """The page of player ``pid``."""
        group = self.group.get(pid)
        population = self.scale.population(group)  # "all players", or "players of GROUP" where there are several
        metrics = {**self.population.get(group, {}), **self.mine[pid]}
        seat = self.audit.get(pid, pl.DataFrame(schema=dict.fromkeys(("hand_id", "severity", "money"), pl.String)))
        findings = found_dash.prep_player_findings(self.found.get(pid, self.none), seat, pid)
        fan_all = self.fan_all.get(group, pl.DataFrame(schema={"fan": pl.Int64, "share": pl.Float64, "n": pl.Int64}))
        others = found_dash.others_of(group, self.scale.mixed)
        ys = self.yard.get(pid, {})
        return [
            banner(pid, findings, self.pages, self.states),
            deviations_section(ys, metrics, others, self.reference.get(group, 0)),
            summary(pid, metrics),
            figures_section(metrics, self.levels.get(pid, {}), population, ys),
            decisions_section(pid, self.decisions, group, population),
            opponents_section(pid, self.opponents.get(pid), self.pages),
            self.over_time.get(pid) or over_time(None),
            results_section(self.unusual.get(pid), others),
            fan_section(self.fan.get(pid), fan_all, population),
            scoring_section(seat),
            metrics_table(metrics, population, ys),
        ]


def deviations_section(ys: dict[str, Yardstick], metrics: Lookup, others: str, reference: int) -> str:
    """The player's five largest deviations from the room (:func:`pipeline.analytics.yardsticks.deviations`): each
    metric's value beside the room's figure, the percentile, the best quartile's band and z; ``others``: whom the
    player is compared with, in words; ``reference``: the players of the group with enough hands (the player among
    them when they have enough). A player with fewer than the yardsticks' hands is not ranked."""
    title = '<section id="deviations"><h2>Largest deviations from the room</h2>'
    hands = int(metrics[("hands", player.PLAYER)]["value"] or 0)
    others_n = reference - (hands >= YARD_HANDS)
    who = f"{esc(others)} with at least {YARD_HANDS:,} replayed hands"
    if hands < YARD_HANDS:
        among = (
            f"The percentiles below still place the player among {who} ({others_n:,} players)."
            if others_n > 0
            else f"No player has that many here: {who} are none, so no percentile either."
        )
        return (
            f'{title}<p class="note">Not ranked: {hands:,} replayed hands, fewer than the {YARD_HANDS:,} a deviation '
            f"needs to mean much. {among}</p></section>"
        )
    top = deviations(ys)
    if not top or others_n <= 0:
        return (
            f'{title}<p class="note">Nothing to compare with: {who} are none but the player (or their figures '
            "have no spread to measure a distance in).</p></section>"
        )
    rows = []
    for y in top:
        m = METRIC_BY_ID[y.metric]
        z = y.z or 0.0
        rows.append(
            f'<tr><td><span class="zh">{esc(m.name_zh)}</span> {esc(m.name_en)}</td>'
            f'<td class="num">{_figure(y.metric, y.value)} <span class="n">n={y.n:,}</span></td>'
            f'<td class="num">{_figure(y.metric, y.room)}</td>{yard_cells(y)}'
            f'<td class="num"><b class="{"flag" if abs(z) >= 3 else ""}">{z:+.1f}</b></td></tr>'
        )
    return (
        f"{title}<p>The player's {len(top)} figures furthest from the room, the most certain first: compared with "
        f"{who} ({others_n:,} players, the player left out).</p>"
        '<table class="deviations"><thead><tr><th>metric</th><th>player</th><th>room</th>'
        f"{YARD_HEADS}<th>z</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        '<p class="note">Room: those players\' figure pooled (their numerators over their denominators). z: the '
        "player's distance from it in standard errors of the player's own figure; it grows as √n with the "
        "player's hands, so |z| ranks the deviations by how certain they are, not by how big. Percentile: the "
        "share of those players whose figure is below the player's (ties count half). Best quartile: the lowest "
        "and highest figure among the quarter of them with the best net points per hand: what the room's winners "
        "do. A deviation is a tendency (a leak, a style), not a finding.</p></section>"
    )


State = tuple[str, str | None, str | None]  # a finding's case standing: status, why (reopened), case id


def case_note(state: State | None) -> str:
    """A finding's case state, as the first screen shows it (nothing for a finding without a key)."""
    if state is None:
        return ""
    status, why, case_id = state
    case = f" {esc(case_id)}" if case_id else ""
    if status == "dismissed":
        text = f" (case{case}: dismissed by a reviewer; hidden from What needs attention while it has not grown)"
    elif why:
        text = f" (case{case}: {esc(why)})"
    else:
        text = f" (case{case})" if case else ""
    return f' <span class="state {esc(status)}">{esc(status)}</span><span class="n">{text}</span>'


def banner(pid: str, findings: pl.DataFrame, pages: dict[str, Page], states: Mapping[str, State] | None = None) -> str:
    """The top of a player's page: whether any finding concerns the player, and each one with its evidence and
    its case state (``states``: by finding key, :func:`dashboards.findings.with_cases`' ``status``, ``why`` and
    ``case_id``)."""
    states = states or {}
    severity = found_dash.severity_of(findings)
    if severity is None:
        return (
            f'<section class="banner ok" id="findings"><p>No finding concerns <b>{esc(pid)}</b>: no screen flags '
            "the player, no audit finding is on their seat, and their results are within the room's range.</p>"
            "</section>"
        )
    head = (
        f"{esc(pid)} is flagged"
        if severity == "high"
        else f"{esc(pid)}: {esc(found_dash.findings_text(findings.height)).lower().rstrip('.')}"
    )
    items = "".join(
        f'<li><span class="sev {r["severity"]}">{esc(r["label"])}</span> <b>{esc(r["subject"])}</b>: '
        f'{esc(r["detail"])} — <a href="{link(r["evidence"])}">{esc(r["evidence_text"])}</a>'
        f"{case_note(states.get(r['key']) if r['key'] is not None else None)}</li>"
        for r in findings.iter_rows(named=True)
    )
    caveat = " A flag is a reason to replay the hands, not a verdict." if severity == "high" else ""
    return (
        f'<section class="banner {severity}" id="findings"><h2>{head}</h2><ul>{items}</ul>'
        f'<p class="note">Every finding of the report: <a href="{href(found_dash.INDEX)}">What needs attention</a>.'
        f"{caveat}</p></section>"
    )


def summary(pid: str, metrics: Lookup) -> str:
    mine = {metric: r for (metric, who), r in metrics.items() if who == player.PLAYER}
    net = mine["net_points_per_hand"]
    return (
        '<section class="summary">'
        f"<p><b>{esc(pid)}</b>: {int(mine['hands']['value'] or 0):,} replayed hands, "
        f"won {numbers.pct(mine['win_rate']['value'])} of them, "
        f"dealt in in {numbers.pct(mine['deal_in_rate']['value'])}, "
        f"net {numbers.num(net['value'])} points per hand{ci(net['ci_low'], net['ci_high'], False)} "
        f"(total {int(net['num'] or 0):+,}).</p></section>"
    )


def figures_section(
    metrics: Lookup,
    hands: dict[str, int],
    population: str = player.POPULATION,
    ys: dict[str, Yardstick] | None = None,
) -> str:
    """The key rates and means beside the population's (``population``: its words; all players' in a
    warehouse of one scale group), each with its interval drawn (inline SVG), the player's percentile and the
    best quartile's band (``ys``: the player's yardsticks)."""
    rows = []
    ys = ys or {}
    for mid in (*player.RATES, *player.MEANS):
        m = METRIC_BY_ID[mid]
        share = m.kind == "rate"
        if (mid, player.PLAYER) not in metrics:
            continue
        mine, everyone = metrics[(mid, player.PLAYER)], metrics[(mid, player.POPULATION)]
        fmt = numbers.pct if share else numbers.num
        strip = svg.interval_strip(
            (mine["value"], mine["ci_low"], mine["ci_high"]),
            (everyone["value"], everyone["ci_low"], everyone["ci_high"]),
            share=share,
        )
        word = player.DEN_WORDS.get(mine["den_of"], mine["den_of"] or "")
        rows.append(
            f'<tr><td><span class="zh">{esc(m.name_zh)}</span> {esc(m.name_en)}'
            f"{'' if share else f' <span class=n>[{esc(m.unit)}]</span>'}</td>"
            f'<td class="num">{fmt(mine["value"])}{ci(mine["ci_low"], mine["ci_high"], share)} '
            f'<span class="n">n={int(mine["den"] or 0):,} {esc(word)}</span></td>'
            f'<td class="num">{fmt(everyone["value"])}{ci(everyone["ci_low"], everyone["ci_high"], share)}</td>'
            f"{yard_cell(ys.get(mid))}<td>{strip}</td></tr>"
        )
    note = levels_note((*player.RATES, *player.MEANS), hands)
    who = esc(population)
    if population == player.POPULATION:
        added = "all players: every player's counts added up"
    else:  # a warehouse of several scale groups: the player's own
        added = (
            f"{who}: the counts of every player of the player's scale group (a profile and its base) added up; "
            "the other groups play for other stakes or by other rules"
        )
    return (
        f'<section id="figures"><h2>Key figures beside {who}</h2><table class="figures"><thead><tr>'
        f"<th>figure</th><th>player [95%]</th><th>{who} [95%]</th><th>percentile</th>"
        f'<th><span class="key subject">●</span> player <span class="key population">●</span> {who}</th>'
        f'</tr></thead><tbody>{"".join(rows)}</tbody></table><p class="note">Rates with 95% Wilson intervals, '
        f"means with 95% normal intervals; {added}. Each line is drawn on "
        "its own scale, zoomed to the two intervals. Percentile: among the other players with at least "
        f"{YARD_HANDS:,} replayed hands{' of the scale group' if population != player.POPULATION else ''}; best: the "
        f"figure of the best quarter of them by net points per hand (Largest deviations above). {esc(note)}</p>"
        "</section>"
    )


def assist_part(a: Assist | None, screen: StoredScreen | None) -> str:
    """The player's figures of the engine-assistance screen (of the counts ``xuezhan review`` stored:
    :func:`pipeline.audit.tallies.stored_screen`), and a flagged player's most telling decisions, each with its
    replay; nothing where the screen has no figure of the player."""
    if a is None or screen is None:
        return ""
    title = '<p id="assist"><b>Engine-assistance screen</b> (<code>xuezhan assist</code>'
    if a.p is None or a.agreement is None or a.expected is None:
        return (
            f"{title}): not tested ({a.tested:,} tested decisions; a player needs {MIN_DECISIONS} of them and "
            f"{MIN_CLEAR} clear ones, in a room of at least {MIN_ROOM} players tested).</p>"
        )
    clear = "–" if a.clear is None else f"{a.clear:.3f}"
    needed = "" if a.needed is None else f" Alone, it would be flagged {a.needed:.3f} above what it is expected."
    verdict = "<b>flagged</b>: a reason to look, not proof" if a.flagged else "not flagged"
    q = "–" if a.q is None else f"{a.q:.3f}"
    text = (
        f"{title}, of the {screen.reviewed:,} reviewed hands): agreed with the policy's first choice on "
        f"{a.agreement:.3f} of its weighted ambiguous decisions ({a.tested:,} in {a.hands:,} hands), where the room's "
        f"players of its skill (clear decisions {clear}) agree on {a.expected:.3f}: z {a.z or 0.0:+.1f}, p "
        f"{a.p:.1e}, q {q} at a false discovery rate of {100 * screen.fdr:g}%: {verdict}.{needed}</p>"
    )
    if not a.flagged or not a.evidence:
        return text
    items = "".join(
        f"<li><code>{esc(e.hand_id)}</code> {'the deal' if e.event is None else f'event {e.event}'} ({esc(e.kind)}): "
        f"{esc(e.chosen)}, weight {e.weight:.2f}, the room agrees {100 * e.room_p:.0f}% — <code>xuezhan replay "
        f"{esc(e.hand_id)} --warehouse WH --review</code></li>"
        for e in a.evidence
    )
    return f"{text}<p>Its most telling agreed decisions:</p><ul>{items}</ul>"


def think_part(t: ThinkTime | None, screen: StoredScreen | None) -> str:
    """The player's figures of the think-time screen (of the timed decisions ``xuezhan review`` stored);
    nothing where it has none."""
    if t is None or screen is None:
        return ""
    title = '<p id="think"><b>Think-time screen</b> (<code>xuezhan think-time</code>'
    if t.r is None or t.p is None or t.room_r is None:
        return (
            f"{title}): {t.decisions:,} timed decisions (median {t.median_ms:,.0f} ms), not tested (a player needs "
            f"{THINK_MIN:,} whose difficulty varies, timed but not all at 0 ms, in a room of enough such players).</p>"
        )
    verdict = "<b>flagged</b>: a reason to look, not proof" if t.flagged else "not flagged"
    if not t.flagged and t.flag_r is not None:
        asking = (
            f", or asking a bot on {100 * t.ask_share:.0f}% of its decisions or more, chosen without regard to their "
            "difficulty, however long the asking took"
            if t.ask_share
            else ""
            if t.ask_share == 0.0  # at its flag_r already, against a room that leaves out other players
            else "; not even asking a bot on every decision would, however long the asking took"
        )
        verdict += f" (it would be at r {t.flag_r:.2f} or less{asking})"
    q = "–" if t.q is None else f"{t.q:.3f}"
    return (
        f"{title}, of the {screen.timed:,} reviewed hands with times): its times follow the decisions' difficulty "
        f"at r {t.r:.2f} over {t.decisions:,} timed decisions (median {t.median_ms:,.0f} ms), the room's players at "
        f"{t.room_r:.2f}: z {t.z or 0.0:+.1f}, p {t.p:.1e}, q {q}: {verdict}. A relay of a bot's moves, an "
        "even-paced player, auto-play or a slow connection look flat (r near 0); a player who asks an engine on "
        "part of its decisions, flatter than the room.</p>"
    )


def decisions_section(
    pid: str, decisions: player.Decisions | None, group: str | None, population: str = player.POPULATION
) -> str:
    """The decision metrics (schemas/METRICS.md#decisions) of the player beside its population's (the players of
    its scale group pooled), each with its 95% interval and n; "not reviewed" where ``xuezhan review`` stored no
    row of the player's hands (nothing is known: no figure, never a 0)."""
    title = '<section id="decisions"><h2>Decisions beside the reference policy</h2>'
    if decisions is None:
        return ""
    mine = decisions.of(pid)
    everyone = decisions.population.get(group) or decision_values(None)
    cover = decisions.review
    done = f"{cover['reviewed']:,} of the {cover['reviewable']:,} reviewable hands are reviewed"
    if mine["reviewed_hands"]["status"] == NOT_REVIEWED:
        return (
            f'{title}<p class="note"><b>Not reviewed</b>: no hand of {esc(pid)} has been reviewed ({esc(done)}; the '
            "hands whose tiles the record shows can be: levels full and dealt, an observer's own seat). Run "
            "<code>xuezhan review --warehouse WH</code>, then the report again.</p></section>"
        )
    rows = []
    for m in DECISION_METRICS:
        if m.id == "reviewed_hands":
            continue
        cells = []
        for v in (mine[m.id], everyone[m.id]):
            if v["status"] == NOT_REVIEWED:
                cells.append("–")
                continue
            share = m.kind == "rate"
            fmt = numbers.pct if share else numbers.num
            n = v.get("den", v.get("n")) or 0
            word = esc(m.unit.replace("share of ", "")) if share else "hands"
            cells.append(
                f'{fmt(v["value"])}{ci(v["ci_low"], v["ci_high"], share)} <span class="n">n={int(n):,} {word}</span>'
            )
        rows.append(
            f'<tr><td><span class="zh">{esc(m.name_zh)}</span> {esc(m.name_en)}</td>'
            f'<td class="num">{cells[0]}</td><td class="num">{cells[1]}</td>'
            f'<td class="def">{esc(m.definition)}</td></tr>'
        )
    hands = int(mine["reviewed_hands"]["value"] or 0)
    return (
        f"{title}<p>{esc(pid)}'s choices in {hands:,} reviewed hands, each judged beside the reference policy "
        f"(<code>xuezhan review</code>; {esc(done)}).</p>"
        f'<table class="metrics"><thead><tr><th>figure</th><th>player [95%]</th><th>{esc(population)} [95%]</th>'
        f"<th>definition</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + assist_part(decisions.assist_of(pid), decisions.assist)
        + think_part(decisions.think_of(pid), decisions.assist)
        + '<p class="note">Rates with 95% Wilson intervals; avoidable deal-ins per 100 hands with a 95% Poisson '
        "interval. The reference policy is a transparent yardstick, not a strong player: a departure from it may be "
        "right; a player who departs often, in one direction (deal-ins with a safe tile held, wins passed, the void "
        "suit kept), is what to look at. Each decision of a hand: <code>xuezhan replay HAND --warehouse WH "
        "--review</code>. Definitions: schemas/METRICS.md#decisions.</p></section>"
    )


def opponents_section(pid: str, df: pl.DataFrame | None, pages: dict[str, Page]) -> str:
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
    head = sortable_head(heads)
    rows = []
    for r in df.iter_rows(named=True):
        rows.append(
            f'<tr><td class="id" data-v="{esc(r["opponent"])}">{player_link(r["opponent"], pages)}</td>'
            + num_cell(r["hands"], f"{r['hands']:,}")
            + num_cell(r["won_from"], f"{r['won_from']:,}")
            + num_cell(r["lost_to"], f"{r['lost_to']:,}")
            + num_cell(r["net"], f"{r['net']:+,}")
            + num_cell(
                r["net_per_hand"],
                (f"{r['net_per_hand']:+.2f}" if r["net_per_hand"] is not None else "–")
                + "<br>"
                + ci(r["net_low"], r["net_high"], False),
            )
            + num_cell(r["deal_ins_to"], f"{r['deal_ins_to']:,}")
            + num_cell(
                r["deal_in_rate"],
                numbers.pct(r["deal_in_rate"]) + "<br>" + ci(r["deal_in_low"], r["deal_in_high"], True),
            )
            + num_cell(r["wins_from"], f"{r['wins_from']:,}")
            + num_cell(r["win_rate"], numbers.pct(r["win_rate"]) + "<br>" + ci(r["win_low"], r["win_high"], True))
            + "</tr>"
        )
    name = esc(pid)
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


def over_time(df: pl.DataFrame | None) -> str:
    """The rolling win and deal-in rates over the player's hands in order, in their Wilson bands (inline SVG
    from :func:`dashboards.player.prep_rolling`'s rows, or those :func:`dashboards.player.iter_rolling` thinned
    already: fewer rows than ``hands``; drawn as :func:`dashboards.player.plot_rolling` draws them)."""
    title = '<section id="over-time"><h2>Over time</h2>'
    if df is None or not df.height:
        return f'{title}<p class="note">No replayed hand.</p></section>'
    window = player.ROLLING_WINDOW
    hands = int(df["hands"][0])
    # the rows drawn, before they become dicts
    shown = df if df.height < hands else df.select(pl.all().gather(svg.thinned(df.height, window)))
    chart = svg.rolling_lines(shown.to_dicts(), window=window, most=shown.height)
    first, last = df["played_from"][0], df["played_to"][0]
    span = f" They were played from {first:%Y-%m-%d} to {last:%Y-%m-%d} (local dates)." if first is not None else ""
    return (
        f'{title}<p><span class="key subject">●</span> win rate <span class="key population">●</span> deal-in '
        f"rate, each over the player's last {window} hands, across their {hands:,} replayed hands in the "
        f'order played.</p><figure class="rolling">{chart}</figure><p class="note">Shaded: 95% Wilson bands. '
        f"Dashed: the first {window - 1} hands, where the rates are over the hands so far (fewer than {window}); "
        f"the x axis counts the player's hands, not days.{span}</p></section>"
    )


def results_section(row: dict[str, Any] | None, others: str = "the other players") -> str:
    """The player's net points per hand against the range the other players (``others``: of the player's scale
    group, where there are several) give (the unusual-result test)."""
    title = '<section id="results"><h2>Results against the room</h2>'
    if row is None or not row["tested"]:
        hands = 0 if row is None else row["hands"]
        return (
            f'{title}<p class="note">Not tested: {hands:,} replayed hands (at least {found_dash.MIN_HANDS:,} '
            "needed), or too few other players to give a range.</p></section>"
        )
    words = found_dash.net_words(row)  # luck-adjusted where the deals are known (schemas/METRICS.md#luck)
    verdict = (
        '<b class="flag">outside the range</b> (an unusual result, not an accusation)'
        if row["flagged"]
        else "within the range"
    )
    return (
        f"{title}<p>{esc(words[:1].upper() + words[1:])} <b>{row['per_hand']:+.2f}</b> points per hand over "
        f"{row['hands']:,} hands "
        f"(±{found_dash.Z95 * row['se']:.2f}); {esc(others)} give {row['expected']:+.2f} on average, players "
        f"truly differ by {row['spread']:.2f} (one standard deviation), so a result from {row['low']:+.2f} to "
        f"{row['high']:+.2f} is within the room's range. This one is {verdict}: z {row['z']:+.2f}, "
        f"p {row['p']:.2g}, q {row['q']:.2g} (Benjamini–Yekutieli over every player tested).</p></section>"
    )


def fan_section(mine: pl.DataFrame | None, everyone: pl.DataFrame, population: str = player.POPULATION) -> str:
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
            f'<tr><td class="num">{fan}</td><td class="num">{r["wins"] if r else 0:,} ({numbers.pct(share)})</td>'
            f'<td class="num">{numbers.pct(share_all)}</td><td>{svg.share_bars(share, share_all)}</td></tr>'
        )
    if population == player.POPULATION:  # a warehouse of one scale group
        head, key, beside = "all players' (share)", "all", f"all players' {n_all:,}"
    else:
        who = esc(population)
        head, key, beside = f"wins of {who} (share)", who, f"the {n_all:,} wins of {who}"
    return (
        f'{title}<table class="fan"><thead><tr><th>fan</th><th>player\'s wins (share)</th><th>{head}</th>'
        f'<th><span class="key subject">●</span> player <span class="key population">●</span> {key}</th>'
        f'</tr></thead><tbody>{"".join(rows)}</tbody></table><p class="note">The total fan of each win (engine, '
        f"before any cap; 平胡 = 1): the player's {n:,} wins beside {beside}.</p></section>"
    )


PLAYER_FINDINGS = 20  # audit rows on a player's page


def scoring_section(seat: pl.DataFrame) -> str:
    """The audit's findings on the player's seat, most money first."""
    title = '<section id="scoring"><h2>Audit findings on the player\'s seat</h2>'
    if not seat.height:
        return f'{title}<p class="note">None.</p></section>'
    rows = "".join(
        f'<tr class="{esc(r["severity"])}"><td class="id">{esc(r["hand_id"])}</td>'
        f'<td class="num">{esc(fmt(r["event"]))}</td><td class="code">{esc(r["code"])}</td>'
        f'<td class="num">{r["money"]:,}</td><td class="def">{finding_message(r["message"], r["position"])}</td></tr>'
        for r in seat.head(PLAYER_FINDINGS).iter_rows(named=True)
    )
    shown = "all" if seat.height <= PLAYER_FINDINGS else f"the {PLAYER_FINDINGS} with most money of"
    return (
        f"{title}<table><thead><tr><th>hand</th><th>event</th><th>code</th><th>money (points)</th><th>message</th>"
        f'</tr></thead><tbody>{rows}</tbody></table><p class="note">{esc(shown)} {seat.height:,} findings, '
        f"{esc(scoring.Audit(seat).stake_text())}. The replay of a hand: <code>xuezhan replay HAND --warehouse "
        "WH</code>; every finding: <code>xuezhan audit --warehouse WH --format csv</code>.</p></section>"
    )
