"""Chart helpers shared by the dashboards: font choice, labels and figure → PNG / base64 (numbers as labels:
:mod:`pipeline.report.numbers`, which the HTML layer uses without loading matplotlib).

Figures are drawn on matplotlib's Agg canvas (``FigureCanvasAgg``) without ``pyplot``: no GUI backend, no
global figure state, nothing left open between charts.

Chinese labels (平胡, 花猪, 黄庄 …) need a CJK font. :func:`fonts` picks one that really has the glyphs
(checked one by one with FreeType's ``get_char_index``), asking fontconfig for fonts that matplotlib's cache
does not know yet. Where there is none, every label falls back to English or pinyin (:meth:`Fonts.term`,
:meth:`Fonts.both`), data strings that the fonts cannot draw are escaped (:meth:`Fonts.safe`), and
:func:`render` refuses to write a chart with a character no font can draw: a chart never shows boxes.
"""

from __future__ import annotations

import base64
import io
import logging
import shutil
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import matplotlib
import polars as pl
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.ticker import PercentFormatter

from pipeline.report.names import digest

# Characters every Chinese label of the reports uses: a font missing any of them is no use here.
CJK_SAMPLE = "平胡清一色对七根杠上花炮海底抢自摸带幺九将龙断门金钩钓十八罗汉天地猪黄庄点率番局数首二三缺万筒条串通"
# Simplified-Chinese faces first (the labels are simplified), then any other CJK face that covers them.
PREFERRED_CJK = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Noto Sans SC",
    "Microsoft YaHei",
    "PingFang SC",
    "SimHei",
    "Noto Sans CJK TC",
    "Noto Sans CJK JP",
    "Droid Sans Fallback",
    "AR PL UMing CN",
)
LATIN = "DejaVu Sans"  # ships with matplotlib: always there

# Colours: the player (or the subject of a chart) and the population it is compared with.
SUBJECT = "#c0392b"
POPULATION = "#34495e"
NEUTRAL = "#5d8aa8"
WARNING = "#e6a23c"

DPI = 110
AXIS_AT_TOP_IN = 7.0  # a chart taller than this (inches: 770 px) shows its x axis at the top as well
LABEL_CHARS = 28  # a data string in a chart is cut beyond this many characters (Fonts.safe)


@dataclass(frozen=True, slots=True)
class Fonts:
    """The font chain charts are drawn with, and whether it can draw Chinese.

    >>> Fonts(cjk_family=None).term("花猪", "hua zhu")
    'hua zhu'
    >>> Fonts(cjk_family="Noto Sans CJK SC").both("花猪", "flower pig")
    '花猪 flower pig'
    """

    cjk_family: str | None

    @property
    def cjk(self) -> bool:
        return self.cjk_family is not None

    @property
    def families(self) -> tuple[str, ...]:
        """``font.sans-serif``: matplotlib falls back through them glyph by glyph."""
        return (self.cjk_family, LATIN) if self.cjk_family else (LATIN,)

    def term(self, zh: str, alt: str) -> str:
        """A Chinese term, or its English/pinyin stand-in when no font can draw it."""
        return zh if self.cjk else alt

    def both(self, zh: str, en: str) -> str:
        """``"清一色 full flush"``, or ``"full flush"`` alone without a CJK font."""
        return f"{zh} {en}" if self.cjk else en

    def safe(self, text: str, limit: int = LABEL_CHARS) -> str:
        """A data string (a player id, a code) as a chart label: every character the fonts cannot draw, and
        every control or format character, escaped as ``\\uXXXX``; ``$`` escaped (matplotlib would read
        ``$...$`` as mathematics); longer than ``limit`` characters so written, cut and given a digest of the
        whole (distinct ids keep distinct labels).

        >>> Fonts(cjk_family=None).safe("a$b$\\x07" + "z" * 40, limit=8)
        'a\\\\$b\\\\$…#fc22'
        """
        shown = [_label_char(c, self.families) for c in text]
        if sum(map(len, shown)) <= limit:
            return "".join(shown)
        kept, room = [], max(1, limit - 1)
        for piece in shown:  # cut between characters (never inside an escape), once the label is full
            if len(piece) > room:
                break
            kept.append(piece)
            room -= len(piece)
        return f"{''.join(kept)}…#{digest(text, 4)}"


def legend_label(text: str) -> str:
    """A legend entry for ``text``: matplotlib leaves out every label that starts with ``_`` (a player id may).

    >>> legend_label("_p1"), legend_label("p1")
    (' _p1', 'p1')
    """
    return f" {text}" if text.startswith("_") else text


def _label_char(c: str, families: tuple[str, ...]) -> str:
    if c == "$":
        return "\\$"
    if c != " " and (not c.isprintable() or not drawable(c, families)):
        return f"\\u{ord(c):04x}"
    return c


@cache
def _font(family: str) -> Any | None:
    """The FT2Font of a family name, or None when matplotlib knows no such family."""
    try:
        path = font_manager.fontManager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    except ValueError:
        return None
    return font_manager.get_font(path)


def covers(family: str, text: str) -> bool:
    """Whether the font ``family`` has a glyph for every non-blank character of ``text``."""
    font = _font(family)
    return font is not None and all(font.get_char_index(ord(c)) for c in text if not c.isspace())


def drawable(char: str, families: tuple[str, ...]) -> bool:
    if char.isspace() or not char.isprintable():
        return True
    return any(covers(f, char) for f in families)


def _fontconfig_cjk_files() -> list[str]:
    """Font files fontconfig lists for Chinese (``fc-list :lang=zh file``); empty without fontconfig."""
    if shutil.which("fc-list") is None:
        return []
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return sorted({line.split(":")[0].strip() for line in out.stdout.splitlines() if line.strip()})


@contextmanager
def _no_findfont_noise() -> Iterator[None]:
    """Looking at every installed family makes matplotlib log a "findfont: Failed to find font weight …" line for
    some of them: the look-up is ours, not a problem of the user's, so its noise stays off the terminal."""
    log = logging.getLogger("matplotlib.font_manager")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def find_cjk_family() -> str | None:
    """The name of an installed font family that draws every character of :data:`CJK_SAMPLE`, or None."""
    with _no_findfont_noise():
        return _find_cjk_family()


def _find_cjk_family() -> str | None:
    for attempt in range(2):
        known = {f.name for f in font_manager.fontManager.ttflist}
        ordered = [n for n in PREFERRED_CJK if n in known] + sorted(known - set(PREFERRED_CJK))
        for name in ordered:
            if covers(name, CJK_SAMPLE):
                return name
        if attempt == 0:
            # matplotlib's font cache predates fonts installed since (apt-get install fonts-noto-cjk):
            # register what fontconfig knows and look again.
            files = _fontconfig_cjk_files()
            if not files:
                break
            for path in files:
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
            _font.cache_clear()
    return None


_forced: list[Fonts] = []


@cache
def _detected() -> Fonts:
    return Fonts(cjk_family=find_cjk_family())


def fonts() -> Fonts:
    """The fonts the charts use: a CJK family when one is installed (looked up once per process)."""
    return _forced[-1] if _forced else _detected()


@contextmanager
def forced_fonts(choice: Fonts) -> Iterator[Fonts]:
    """Draw with ``choice`` inside the block (tests: the fallback without a CJK font)."""
    _forced.append(choice)
    try:
        yield choice
    finally:
        _forced.pop()


def rc(choice: Fonts) -> dict[str, Any]:
    """The house style, applied only while a chart is drawn (``matplotlib.rc_context``)."""
    return {
        "font.family": "sans-serif",
        "font.sans-serif": list(choice.families),
        "font.size": 9.5,
        "axes.titlesize": 11,
        "axes.titleweight": "bold",
        "axes.labelsize": 9.5,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "grid.linewidth": 0.6,
        "axes.axisbelow": True,
        "legend.frameon": False,
        "legend.fontsize": 8.5,
    }


def percent_axis(ax: Axes, axis: str = "x") -> None:
    """Format an axis holding shares (0–1) as percentages."""
    formatter = PercentFormatter(xmax=1.0, decimals=0)
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(formatter)


def whiskers(values: pl.Series, low: pl.Series, high: pl.Series) -> list[list[float]]:
    """Error-bar offsets ``[[below...], [above...]]`` for ``ax.errorbar``/``barh``; no interval, no
    whisker."""
    below, above = [], []
    for v, lo, hi in zip(values.to_list(), low.to_list(), high.to_list(), strict=True):
        below.append(0.0 if v is None or lo is None else max(0.0, v - lo))
        above.append(0.0 if v is None or hi is None else max(0.0, hi - v))
    return [below, above]


WHISKERS: dict[str, Any] = {"ecolor": "#222222", "capsize": 3, "elinewidth": 1}  # error_kw of interval whiskers


def severity_bars(ax: Axes, rows: pl.DataFrame, value: str, labels: list[str]) -> None:
    """Horizontal bars of ``rows[value]`` per ``code``, red for errors and amber for warnings (column
    ``severity``), labelled at their ends, with a legend of the severities shown."""
    colours = [SUBJECT if s == "error" else WARNING for s in rows["severity"].to_list()]
    bars = ax.barh(rows["code"].to_list(), rows[value].to_list(), color=colours, height=0.65)
    ax.bar_label(bars, labels=labels, fontsize=8, padding=3)
    shown = set(rows["severity"].to_list())
    handles = [Patch(color=c, label=s) for s, c in (("error", SUBJECT), ("warning", WARNING)) if s in shown]
    ax.legend(handles=handles, loc="lower right", title="severity")


def empty(ax: Axes, title: str, message: str) -> None:
    """An honest empty chart: the title, and what there is nothing of."""
    ax.set_title(title)
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#777777", fontsize=11)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)


# ---------------------------------------------------------------------------------------------- rendering
class GlyphError(ValueError):
    """A chart holds a character no font of the chain can draw (it would show as a box)."""


def missing_glyphs(fig: Figure, choice: Fonts) -> set[str]:
    """Characters of the figure's drawn text that no font of ``choice`` has (the figure must be drawn)."""
    missing = set()
    for text in fig.findobj(Text):
        if not text.get_visible():
            continue
        for char in text.get_text():
            if not drawable(char, choice.families):
                missing.add(char)
    return missing


@dataclass(frozen=True, slots=True)
class Chart:
    """One rendered chart: a file name (without ``.png``), its alt text and caption, the PNG bytes."""

    name: str
    alt: str
    caption: str
    png: bytes

    def data_uri(self) -> str:
        return data_uri(self.png)


def render(
    plot: Callable[[pl.DataFrame, Axes], None],
    df: pl.DataFrame,
    *,
    size: tuple[float, float] = (8.0, 4.5),
    choice: Fonts | None = None,
) -> bytes:
    """Draw ``plot(df, ax)`` on a fresh Agg figure with the house style and return PNG bytes.

    Titles and x-axis labels too wide for the figure are wrapped; a chart taller than :data:`AXIS_AT_TOP_IN`
    (a bar per player or code) repeats its x axis's tick labels at the top, so that the scale is in sight at
    either end (issue 40: a 1,232 px chart had its axis at the bottom only). Raises :class:`GlyphError` when
    any text of the chart cannot be drawn by the chosen fonts.
    """
    choice = choice or fonts()
    # The plot's labels (fonts().term / both / safe) follow the same choice as the fonts drawing them.
    with forced_fonts(choice), matplotlib.rc_context(cast(Any, rc(choice))):
        fig = Figure(figsize=size, dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        plot(df, ax)
        if size[1] > AXIS_AT_TOP_IN and ax.axison:
            ax.tick_params(axis="x", top=True, labeltop=True)
        fig.canvas.draw()  # lays out tick labels, so that every text is checked below
        if _fit_texts(fig):
            fig.canvas.draw()
        missing = missing_glyphs(fig, choice)
        if missing:
            raise GlyphError(f"no font draws {''.join(sorted(missing))!r} (fonts: {', '.join(choice.families)})")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})  # no version stamp: same bytes
    return buf.getvalue()


def _fit_texts(fig: Figure) -> bool:
    """Wrap titles and x-axis labels wider than the room they have (fonts differ in width: DejaVu Sans is
    wider than Noto Sans CJK); True when any was wrapped."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    changed = False
    for ax in fig.axes:
        for text in (ax.title, ax.xaxis.label):  # both centred on the axes
            content = text.get_text()
            box = text.get_window_extent(renderer)
            centre = (box.x0 + box.x1) / 2
            room = 2 * min(centre, fig.bbox.width - centre) * 0.97
            if not content or box.width <= room:
                continue
            lines = content.replace(", n = ", "\nn = ", 1).split("\n")  # the sample size on a line of its own
            chars = max(12, int(max(len(line) for line in lines) * room / box.width * 0.95))
            text.set_text("\n".join(textwrap.fill(line, chars) for line in lines))
            changed = True
    return changed


def data_uri(png: bytes) -> str:
    """PNG bytes as an inline ``data:`` URI for an ``<img src>``."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def height_for(rows: int, *, per_row: float = 0.32, base: float = 1.6, minimum: float = 3.0) -> float:
    """Figure height in inches for a horizontal chart of ``rows`` bars."""
    return max(minimum, base + per_row * rows)
