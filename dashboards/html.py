"""The report's one HTML layer: what every page of :mod:`dashboards.site` is written with.

- text and links: :func:`esc` (every data string: ids are data, never markup), :func:`href` and :func:`link`
  (a file of the report, percent-encoded), :func:`who` (a player, linked to their page when they have one);
- cells and tables: :func:`fmt`, :func:`cell`, :func:`ci`, :func:`num_cell` (a sortable number),
  :func:`table_section` (a titled table of a frame's columns);
- figures: :func:`figure` (a chart embedded as base64 PNG, linked to its file);
- shared sentences: :func:`scales_note`, :func:`scope_text`, :func:`finding_message`, :func:`fdr_text`;
- the page shell: :func:`document` (head, title, navigation bar, the hands covered, footer) with the one
  stylesheet (:data:`STYLE`) and the one script (:data:`SCRIPT`) of every page, inline: each HTML file stands
  alone.

The stylesheet and the script are files of ``dashboards/static`` (package data, read once at import by
:func:`static_text` with :mod:`importlib.resources`, so that an installed or compiled build finds them as the
sources do):

- ``report.css``: every page's styles;
- ``marker.js``: marks each ``<img>`` with ``data-loaded`` once decoded, and the ``<body>`` with
  ``data-images="loaded/total"``, ``data-overflow`` (pixels wider than the window) and ``data-broken`` (the words
  of table cells the layout splits over two lines): a headless browser's ``--dump-dom`` shows whether the page
  rendered;
- ``replay.css``: the replay page's styles (:mod:`dashboards.pages.replay`, a page of its own, not of the
  report);
- ``sorter.js``: sorts a ``table.sortable`` by the heading clicked (numbers by their ``data-v``, biggest first on
  the first click; text in order), empty cells last either way; and keeps the directory's rows whose player id
  holds the filter's text.
"""

from __future__ import annotations

import html
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import polars as pl

from pipeline.analytics.scales import Scales
from pipeline.analytics.scope import EVERYTHING, Scope
from pipeline.report import numbers

if TYPE_CHECKING:  # the charts' types only: the layer itself never loads matplotlib (the replay page uses it)
    from pipeline.report import charts


def static_text(name: str) -> str:
    """A file of ``dashboards/static`` as text."""
    return files("dashboards").joinpath("static", name).read_text(encoding="utf-8")


STYLE = "\n" + static_text("report.css")  # the one stylesheet of every page
SCRIPT = "\n" + static_text("marker.js") + "\n" + static_text("sorter.js")  # the one script of every page

TITLE = "xuezhan report · 血战到底"


@dataclass(frozen=True, slots=True)
class Page:
    file: str  # file name under out_dir
    nav: str  # its name in the navigation bar
    title: str


# Control characters, bidirectional overrides (they reorder the text around them), lone surrogates: shown as
# \\uXXXX, never written into a page raw.
_UNSHOWN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def esc(value: object) -> str:
    """Text (a data string above all: a player, hand or table id) for an HTML text node or a quoted
    attribute: markup escaped, characters no page should hold raw written as ``\\uXXXX``.

    >>> esc('<b a="1">\u202e\x07')
    '&lt;b a=&quot;1&quot;&gt;\\\\u202e\\\\u0007'
    """
    text = _UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))
    return html.escape(text, quote=True)


def href(file: str) -> str:
    """A link to a file of the report (a name under ``out_dir``), percent-encoded and escaped."""
    return esc(quote(file))


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from the PNG header (IHDR)."""
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def figure(chart: charts.Chart) -> str:
    width, height = png_size(chart.png)
    return (
        f'<figure class="chart" id="{esc(chart.name)}">'
        f'<img src="{chart.data_uri()}" alt="{esc(chart.alt)}" width="{width}" height="{height}">'
        f'<figcaption>{esc(chart.caption)} <a href="{href(f"charts/{chart.name}.png")}">PNG</a></figcaption>'
        "</figure>"
    )


def link(target: str) -> str:
    """An href to ``file#anchor`` of the report: the file percent-encoded, the anchor (ours: ASCII) kept.

    >>> link("collusion.html#pair-1"), link("#scoring"), link("player-张.html")
    ('collusion.html#pair-1', '#scoring', 'player-%E5%BC%A0.html')
    """
    file, _, anchor = target.partition("#")
    return (href(file) if file else "") + (f"#{esc(anchor)}" if anchor else "")


def player_link(pid: str, pages: dict[str, Page]) -> str:
    """A player's id, linked to their page when they have one."""
    page = pages.get(pid)
    return f'<a href="{href(page.file)}">{esc(pid)}</a>' if page else esc(pid)


def cell(value: Any, low: Any, high: Any, share: bool) -> str:
    fmt = numbers.pct if share else numbers.num
    if value is None:
        return "–"
    span = numbers.interval(low, high, fmt)
    return f'{fmt(value)} <span class="ci">{esc(span)}</span>' if span else fmt(value)


def ci(low: Any, high: Any, share: bool) -> str:
    span = numbers.interval(low, high, numbers.pct if share else numbers.num)
    return f' <span class="ci">{esc(span)}</span>' if span else ""


def sortable_head(heads: Iterable[tuple[str, str]]) -> str:
    """The header cells of a table the page's script sorts: (title, kind) each, kind ``num`` or ``text``."""
    return "".join(f'<th data-sort="{kind}" class="{kind}" title="sort">{esc(h)}</th>' for h, kind in heads)


def num_cell(value: float | int | None, text: str) -> str:
    v = "" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)
    return f'<td class="num" data-v="{v}">{text}</td>'


def table_section(title: str, df: pl.DataFrame, headers: dict[str, str]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers.values())
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if isinstance(v, int | float) else ""}">{esc(fmt(v))}</td>'
            for v in (row[c] for c in headers)
        )
        + "</tr>"
        for row in df.iter_rows(named=True)
    )
    return f"<section><h2>{esc(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>"


def fmt(value: Any) -> str:
    if isinstance(value, float):
        return numbers.num(value)
    if isinstance(value, int):
        return f"{value:,}"
    return "–" if value is None else str(value)


def scales_note(scale: Scales) -> str:
    """The line a warehouse of several scale groups carries (which, their bases, hands each); nothing for one."""
    line = scale.line()
    return f'<p class="note" id="scales">{esc(line)}</p>' if line else ""


def finding_message(message: str | None, position: str | None = None) -> str:
    """A finding's message, with the replay's position where a rule violation stopped it folded away
    (``<details>``, no script)."""
    if message is None:
        return "–"
    if position is None:
        return esc(message)
    return f'{esc(message)}<details><summary>position</summary><span class="pos">{esc(position)}</span></details>'


def fdr_text(fdr: float) -> str:
    return f"{100 * fdr:g}%"


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


def document(
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
    nav = "".join(f'<a href="{href(p.file)}"{mark if p.file == current else ""}>{esc(p.nav)}</a>' for p in pages)
    fonts_note = (
        f"Chart labels drawn with {font.cjk_family}."
        if font.cjk
        else "No CJK font was installed when this report was built: chart labels use English or pinyin "
        "names (install fonts-noto-cjk for Chinese)."
    )
    words = scope_text(scope)
    covers = f'<p class="scope" id="scope-line">{esc(words)}</p>' if words else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(page.title)} · {esc(TITLE)}</title><style>{STYLE}</style></head>"
        '<body data-images="pending">'
        f"<header><h1>{esc(TITLE)} — {esc(page.title)}</h1>{covers}<nav>{nav}</nav></header>"
        f"<main>{''.join(body)}</main>"
        f"<footer>Made by xuezhan from the warehouse's replayed hands. {esc(fonts_note)}</footer>"
        f"<script>{SCRIPT}</script>"
        "</body></html>\n"
    )
