"""The repository explains itself: every relative link in its Markdown resolves inside the repository (file and
heading anchor), nothing points at the planning folder outside it, and docs/RULES.md documents every switch of
every profile as the code defines them."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from pipeline.rules.ruleset import profile_names, read_profile, switch_names

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "RULES.md"
LINKED_PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "schemas").glob("*.md")])
SKIP_DIRS = {"out", "build", "dist", "node_modules", "__pycache__"}

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, ...


def all_markdown() -> list[Path]:
    """Every Markdown file of the repository (not the virtualenv, build output or hidden folders)."""
    found = []
    for path in ROOT.rglob("*.md"):
        parts = path.relative_to(ROOT).parts[:-1]
        if any(p.startswith(".") or p in SKIP_DIRS or p.endswith(".egg-info") for p in parts):
            continue
        found.append(path)
    return sorted(found)


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped except ``-`` and ``_``, each space a
    ``-``. Letters and digits of every script stay (``换三张`` is kept)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    out = []
    for ch in text:
        if ch == " ":
            out.append("-")
        elif ch in "-_" or unicodedata.category(ch)[0] in "LNM":
            out.append(ch)
    return "".join(out)


def headings(path: Path) -> list[tuple[int, str, int]]:
    """(level, text, line index in prose_lines) of every heading of a page."""
    found = []
    for i, line in enumerate(prose_lines(path.read_text(encoding="utf-8"))):
        m = HEADING.match(line)
        if m:
            found.append((len(m.group(1)), m.group(2), i))
    return found


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a page, with GitHub's ``-1``, ``-2`` suffixes for repeated headings."""
    seen: dict[str, int] = {}
    out = set()
    for _, text, _ in headings(path):
        base = slug(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    """The targets of the page's Markdown links, outside code blocks and code spans."""
    text = "\n".join(prose_lines(path.read_text(encoding="utf-8")))
    text = INLINE_CODE.sub("code", text)  # a code span's text is not a link, but a link's text may be a code span
    return LINK.findall(text)


def test_the_pages_are_found() -> None:
    assert RULES in LINKED_PAGES and ROOT / "README.md" in LINKED_PAGES
    assert ROOT / "schemas" / "XZLOG.md" in LINKED_PAGES


def test_slug_follows_github() -> None:
    assert slug("`cap`") == "cap"
    assert slug("`self_draw`") == "self_draw"
    assert slug("7. Profiles and switches") == "7-profiles-and-switches"
    assert slug("换三张: the exchange of three") == "换三张-the-exchange-of-three"
    assert slug("6. Mistakes: 诈胡 and 相公") == "6-mistakes-诈胡-and-相公"
    assert slug("`wall`, `deal` and the dealing convention") == "wall-deal-and-the-dealing-convention"


@pytest.mark.parametrize("page", LINKED_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    broken = []
    for target in links(page):
        if EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
            continue
        if not dest.exists():
            broken.append(f"{target}: no such file")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_no_markdown_points_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in all_markdown()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "../shared" in line
    ]
    assert not offenders, f"mentions of ../shared (not in a user's clone): {offenders}"


def test_readme_links_the_rules_and_the_record_format() -> None:
    targets = links(ROOT / "README.md")
    assert any(t.startswith("docs/RULES.md") for t in targets)
    assert "schemas/XZLOG.md" in targets


def _switch_sections() -> dict[str, str]:
    """The text of each heading's section in docs/RULES.md (up to the next heading of the same or a higher
    level), by the heading's plain text."""
    lines = prose_lines(RULES.read_text(encoding="utf-8"))
    found = headings(RULES)
    sections = {}
    for k, (level, text, start) in enumerate(found):
        end = next((i for lv, _, i in found[k + 1 :] if lv <= level), len(lines))
        sections[text.strip().strip("`")] = "\n".join(lines[start + 1 : end])
    return sections


@pytest.mark.parametrize("name", switch_names())
def test_every_switch_has_its_own_section(name: str) -> None:
    sections = _switch_sections()
    assert name in sections, f"docs/RULES.md has no heading `{name}` (expected a section per switch)"
    assert name in anchors(RULES)
    for profile in profile_names():
        assert f"`{profile}`" in sections[name], f"the section on {name} does not give the {profile} default"


def _table_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def test_the_switch_table_matches_the_profiles() -> None:
    lines = prose_lines(RULES.read_text(encoding="utf-8"))
    header = next(line for line in lines if line.startswith("| switch |"))
    columns = [c.strip().strip("`") for c in header.strip("|").split("|")][1:]
    assert sorted(columns) == profile_names(), "the switch table needs one column per profile"
    row = re.compile(r"^\| \[`(\w+)`\]\(#(\w+)\) \|(.*)\|$")
    table = {}
    for line in lines:
        m = row.match(line)
        if m:
            assert m.group(1) == m.group(2), f"row {m.group(1)} links to #{m.group(2)}"
            table[m.group(1)] = [c.strip().strip("`") for c in m.group(3).split("|")]
    assert list(table) == list(switch_names()), "the switch table lists the switches in the code's order"
    for name, cells in table.items():
        expected = [_table_value(read_profile(p).switches[name]) for p in columns]
        assert cells == expected, (
            f"{name}: the table says {cells}, the profiles {dict(zip(columns, expected, strict=True))}"
        )
