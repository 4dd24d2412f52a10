"""``xuezhan report`` on hostile names (issue 24, items 2 and 8): simulated records whose player, hand, session
and table ids are rewritten to markup, SQL fragments, path pieces, control characters, mathtext, bidirectional
overrides, non-ASCII and 300+ characters, ingested and reported.

Every id is data: the pages hold it only escaped (no element, attribute or script it brings exists once the
page is parsed, or once a real browser ran it), every link resolves to a file of the report, every file name
is one bounded path component, and distinct ids keep distinct pages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from test_report import _browse, _chromium
from typer.testing import CliRunner

from cli import app
from dashboards import html
from dashboards.pages.players import page_file
from pipeline.ingest.run import ingest
from pipeline.report import charts
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

ROOT = Path(__file__).resolve().parent.parent
XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
PWN = "document.body.setAttribute('data-pwned','{}')"
PLAYERS = (
    f"<script>{PWN.format('script')}</script>",
    f'"><img src=x onerror="{PWN.format("img")}">',
    "x' OR '1'='1'; DROP TABLE hands; --",
    "../../etc/passwd",
    "a\\b/c:d*?|%2e%2e\x01\x1b[31m\x7f",
    '张三 & 李四 "quoted" ＜全角＞',
    "P" * 300 + "<b>long</b>",
    "P" * 300 + "<b>long</b>!",  # the same 300 first characters as the one before
    "$\\frac{1}{0}$ _x \u202eevil",  # mathtext for matplotlib, a right-to-left override
    "_underscore",  # matplotlib leaves legend labels starting with _ out
    "Mallory",
    "mallory",  # the same name on a case-insensitive file system
)
HAND = f'<img src=x onerror="{PWN.format("hand")}">\'; DROP TABLE hands;--/../'
HOSTILE_TEXT = re.compile(r"[<>]")  # an id holding these must never appear raw in a page
SHOWN_AS_ESCAPE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202e]")  # tab, newline, CR: whitespace
MAX_NAME_BYTES = 143  # eCryptfs' limit, the lowest of the common file systems (ext4, APFS, NTFS: 255)

TAGS = {
    *("html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "nav", "main", "footer"),
    *("section", "div", "p", "b", "a", "span", "code", "abbr", "details", "summary", "figure", "figcaption"),
    *("img", "table", "thead", "tbody", "tr", "th", "td", "script", "ul", "li", "br", "input"),
    *("svg", "line", "circle", "rect"),  # the player pages' inline intervals (numbers only)
    *("polygon", "polyline", "text"),  # their rates over time: bands, lines and the axes' numbers
    "wbr",  # the first screen's finding keys: where a long key may wrap
}
ATTRIBUTES = {"charset", "name", "content", "lang", "class", "id", "href", "src", "alt", "width", "height", "title"}
ATTRIBUTES |= {"data-images", "role", "data-v", "data-sort", "type", "placeholder", "aria-label"}
ATTRIBUTES |= {"viewbox", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "fill", "stroke", "stroke-width"}
ATTRIBUTES |= {"points", "fill-opacity", "stroke-dasharray", "text-anchor", "font-size"}


def visible(text: str) -> str:
    """How a page shows an id: control characters and the override as ``\\uXXXX``."""
    return SHOWN_AS_ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _hostile_records(source: Path, target: Path) -> None:
    """Rewrite the ids of simulated records: every player to a hostile name, every hand, session and table id
    to a hostile prefix (and every seventh hand id to 300+ characters), keeping them distinct."""
    lines = source.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    ids = sorted({p for r in records for p in r["players"]})
    assert len(ids) == len(PLAYERS)
    names = dict(zip(ids, PLAYERS, strict=True))
    out = []
    for i, r in enumerate(records):
        r["players"] = [names[p] for p in r["players"]]
        r["hand_id"] = ("H" * 300 if i % 7 == 0 else "") + HAND + r["hand_id"]
        r["session_id"] = f'../"{r["session_id"]}\x07'
        r["table_id"] = f"<t>\x07../{r['table_id']}" + "T" * 300
        out.append(json.dumps(r, ensure_ascii=False))
    target.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    games = root / "games.jsonl"
    write(
        SimConfig(hands=160, seed=5, players=len(PLAYERS), inject=InjectSpec.parse("score_errors=0.05")),
        games,
    )
    hostile = root / "hostile.jsonl"
    _hostile_records(games, hostile)
    run = ingest([str(hostile)], root / "wh", workers=1)
    assert run.rejects == 0 and run.records_stored == 160, run.text()
    return root / "wh"


@pytest.fixture(scope="module")
def report(warehouse, tmp_path_factory) -> Path:
    """``xuezhan report`` with a page for every player and the collusion screen on every pair."""
    out = tmp_path_factory.mktemp("report") / "out"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(
            app,
            ["report", "--warehouse", str(warehouse), "--out", str(out), "--top", "99", "--min-hands", "5"],
        )
    assert result.exit_code == 0, (result.output, result.exception)
    assert "Traceback" not in result.output
    drawn = [str(w.message) for w in caught if re.search(r"Glyph|constrained_layout|tight_layout", str(w.message))]
    assert not drawn, drawn[:5]  # no character a font lacks, no label so long that the chart collapses
    return out


class Page(HTMLParser):
    """Every element, attribute, script and text of a page, as a browser's parser sees them."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in_script else self.text).append(data)

    def joined(self) -> str:
        return "".join(self.text)

    def hrefs(self) -> list[str]:
        return [a["href"] or "" for tag, a in self.tags if tag == "a" and "href" in a]


def _pages(out: Path) -> dict[str, tuple[str, Page]]:
    return {p.name: (text, Page(text)) for p in sorted(out.glob("*.html")) for text in [p.read_text("utf-8")]}


# ---------------------------------------------------------------------------------------------- the report
def test_every_player_gets_a_page_of_a_bounded_distinct_name(report):
    names = {p.name for p in report.glob("player-*.html")}
    assert names == {page_file(p) for p in PLAYERS}
    assert len(names) == len(PLAYERS)
    assert len({n.casefold() for n in names}) == len(PLAYERS)  # also on a case-insensitive file system
    assert page_file('张三 & 李四 "quoted" ＜全角＞').startswith("player-张三_李四_quoted_全角_-")  # readable
    for path in report.rglob("*"):
        assert len(path.name.encode("utf-8")) <= MAX_NAME_BYTES, path.name
        assert re.fullmatch(r"[\w.-]+", path.name), path.name  # letters, digits, _ . - only: no / \ : * ? < >
        assert path.resolve().is_relative_to(report.resolve())


def test_no_id_brings_an_element_an_attribute_or_a_script(report):
    pages = _pages(report)
    assert len(pages) == 8 + len(
        PLAYERS
    )  # index, players, quality, health, audit, collusion, information, deals and the players
    for name, (text, page) in pages.items():
        for tag, attrs in page.tags:
            assert tag in TAGS, (name, tag)
            assert set(attrs) <= ATTRIBUTES, (name, tag, attrs)
            assert all(not (v or "").lstrip().lower().startswith("javascript:") for v in attrs.values()), name
            if tag == "img":
                assert (attrs["src"] or "").startswith("data:image/png;base64,"), name
        for label in re.findall(r"<text [^>]*>(.*?)</text>", text):  # an SVG's words are the axes' numbers
            assert re.fullmatch(r"[\d,]+%?", label), (name, label)
        assert page.scripts == [html.SCRIPT], name  # the page's own script, nothing else
        assert "data-pwned" not in {a for _, attrs in page.tags for a in attrs}
        for pid in PLAYERS:
            if HOSTILE_TEXT.search(pid):
                assert pid not in text, (name, pid)  # never raw
        assert HAND not in text and "<t>" not in text
        assert not SHOWN_AS_ESCAPE.search(text), name  # control characters shown, never written raw


def test_every_id_is_shown_escaped(report):
    pages = _pages(report)
    for pid in PLAYERS:
        _, page = pages[page_file(pid)]
        assert visible(pid) in page.joined(), pid  # the player's page names them whole
        _, directory = pages["players.html"]
        assert visible(pid) in directory.joined(), pid  # and the directory links it
    audit_text = pages["audit.html"][1].joined()
    assert audit_text.count(HAND) >= 1 and ("H" * 300 + HAND) in audit_text  # hand ids in the findings
    collusion = pages["collusion.html"][1].joined()
    assert "x' OR '1'='1'; DROP TABLE hands; -- & " in collusion or " & x' OR '1'='1'; DROP TABLE hands; --" in (
        collusion
    )


def test_every_link_resolves_to_a_file_of_the_report(report):
    """Every link names a file of the report, and an anchor (#...) only one that its page holds: an element id
    of the report's own making (ASCII, no id from the data)."""
    pages = _pages(report)
    linked = set()
    for name, (_, page) in pages.items():
        hrefs = page.hrefs()
        assert hrefs, name
        for href in hrefs:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc and not parts.query, (name, href)
            target = (report / unquote(parts.path)).resolve() if parts.path else (report / name).resolve()
            assert target.is_relative_to(report.resolve()) and target.is_file(), (name, href)
            if parts.fragment:
                assert re.fullmatch(r"[a-z]+(-\d+)?", parts.fragment), (name, href)
                ids = {a.get("id") for _, a in pages[target.name][1].tags}
                assert parts.fragment in ids, (name, href)
            linked.add(target.name)
    assert {page_file(p) for p in PLAYERS} <= linked


@pytest.mark.parametrize(
    "pid", [PLAYERS[0], PLAYERS[4], PLAYERS[6], PLAYERS[8]], ids=["script", "ctrl", "long", "math"]
)
def test_report_player_with_a_hostile_id(warehouse, tmp_path, pid):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", "--warehouse", str(warehouse), "--out", str(out), "--page", pid])
    assert result.exit_code == 0, (result.output, result.exception)
    assert {p.name for p in out.glob("player-*.html")} == {page_file(pid)}
    text = (out / page_file(pid)).read_text(encoding="utf-8")
    assert visible(pid) in Page(text).joined()
    assert not HOSTILE_TEXT.search(pid) or pid not in text


def test_report_player_in_a_real_process(warehouse, tmp_path):
    """The id through argv, as a shell user passes it: exit 0, no traceback, one line naming the index."""
    pid = PLAYERS[4]
    done = subprocess.run(
        [XUEZHAN, "report", "--warehouse", str(warehouse), "--out", str(tmp_path / "o"), "--page", pid, "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == f"wrote {tmp_path / 'o' / 'index.html'}"
    assert (tmp_path / "o" / page_file(pid)).is_file()


def test_an_unknown_hostile_player_is_one_line(warehouse, tmp_path):
    result = CliRunner().invoke(
        app, ["report", "--warehouse", str(warehouse), "--out", str(tmp_path / "o"), "--page", "<x>\x1b[2J"]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "\x1b" not in result.output  # the id is shown as repr() shows it
    assert not (tmp_path / "o" / "index.html").exists()


def test_pages_of_hostile_ids_in_a_headless_browser(report, tmp_path):
    """A real browser runs the pages: no hostile script or handler ran (the marker script did)."""
    chromium = _chromium()
    for name in ("index.html", page_file(PLAYERS[1]), "audit.html"):
        done = _browse(chromium, tmp_path / f"profile-{len(name)}", "--dump-dom", (report / name).as_uri())
        assert done.returncode == 0, done.stderr[-2000:]
        dom = Page(done.stdout)
        body = next(attrs for tag, attrs in dom.tags if tag == "body")
        assert "data-pwned" not in body, (name, body)
        assert re.fullmatch(r"(\d+)/\1", body.get("data-images") or ""), (name, body)  # the page's own script ran
        assert not [t for t, _ in dom.tags if t not in TAGS], name


# ---------------------------------------------------------------------------------------------- units
def test_page_file_is_bounded_distinct_and_one_component():
    ids = [
        *PLAYERS,
        "p001",
        "P001",
        "a/b",
        "a_b",
        "a\\b",
        ".hidden",
        "..",
        "a-12345678",
        "x" * 64,
        "x" * 65,
        "张" * 200,
        "😀" * 100,
        "e\u0301",
        "\u00e9",
        "",
    ]
    files = [page_file(i) for i in ids]
    assert len(set(files)) == len(ids) and len({f.casefold() for f in files}) == len(ids)
    for f in files:
        assert len(f.encode("utf-8")) <= MAX_NAME_BYTES - len("-rates.png") + len(".html"), f
        assert "/" not in f and "\\" not in f and "\x00" not in f and not f.startswith(".")
    assert page_file("p001") == "player-p001.html" and page_file("a_b.c-d") == "player-a_b.c-d.html"
    assert page_file("a-12345678") != "player-a-12345678.html"  # a plain id never looks like a digested one
    assert page_file("张三") == f"player-张三-{charts.digest('张三')}.html"


def test_chart_labels_of_hostile_ids_draw():
    """A mathtext id, control characters and a 300-character id as chart labels: drawn, bounded, distinct."""
    import polars as pl

    latin = charts.Fonts(cjk_family=None)
    labels = [latin.safe(p) for p in PLAYERS]
    assert len(set(labels)) == len(labels)
    assert all(len(x) <= charts.LABEL_CHARS + len("…#0000") for x in labels)  # escaped, then cut
    assert latin.safe("$x$") == "\\$x\\$" and latin.safe("a\x07") == "a\\u0007"

    def plot(df, ax):
        ax.barh(list(range(len(labels))), [1] * len(labels), label=charts.legend_label(labels[9]))
        ax.set_yticks(range(len(labels)), labels)
        ax.set_title(" & ".join(labels[8:10]))
        ax.legend()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a glyph warning, a collapsed layout
        png = charts.render(plot, pl.DataFrame(), size=(8.5, 6.0), choice=latin)
    assert png.startswith(b"\x89PNG")


def test_esc_shows_control_characters_and_overrides():
    assert html.esc("<a href='x'>\x1b\u202e") == "&lt;a href=&#x27;x&#x27;&gt;\\u001b\\u202e"
    assert html.href("player-张三-00000000.html") == "player-%E5%BC%A0%E4%B8%89-00000000.html"
