"""The shape of the code: which module may import which, read from the source with ``ast`` (nothing is imported).

Every module under ``pipeline/``, ``dashboards/`` and ``schemas/`` and ``cli.py`` is parsed; every ``import`` and
``from … import`` statement counts, at module level or inside a function (a lazy import is still a dependency), and
so does ``module._name`` on a module bound by an import, and ``importlib.import_module("…")`` or ``__import__("…")``
of a name written out. The rules, deny by default (issue 42: five broken layer rules once passed a test that only
listed what was forbidden):

- each *unit* (a subpackage of ``pipeline``, a top-level module of it, ``schemas``, ``dashboards``, ``cli``) imports
  only the units :data:`ARROWS` lists for it: a new arrow is a decision, written down there;
- no import cycle between modules, nor between units;
- no import of a computed name (``import_module(name)``), except where :data:`DYNAMIC` says why;
- a private (underscore) name is imported only within its own package (not even from a subpackage or the
  parent package).

A known violation whose fix lies outside this change is listed in :data:`ALLOWED`, with the reason, so that
the rule keeps holding for everything else; an entry that is no longer needed fails the test. The last tests plant
each kind of violation in a copy of the tree and see it caught.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    *sorted((ROOT / "pipeline").rglob("*.py")),
    *sorted((ROOT / "dashboards").rglob("*.py")),
    *sorted((ROOT / "schemas").rglob("*.py")),
    *sorted((ROOT / "tools").rglob("*.py")),
    ROOT / "cli.py",
)

# unit → the units it may import (besides itself). The layers: rules → game → validate → ingest → analytics →
# audit → dashboards → cli, with the side libraries each may use; anything not written here is refused.
_BASE = ("pipeline.codes", "pipeline.sql", "pipeline.memory", "pipeline.signals", "pipeline.text", "schemas")  # leaves
ARROWS: dict[str, tuple[str, ...]] = {
    # leaves: the rule books, the issue codes, SQL loading, memory and signal handling, the table schemas
    "pipeline.rules": (),
    "pipeline.codes": (),
    "pipeline.sql": (),
    "pipeline.memory": (),
    "pipeline.signals": (),
    "pipeline.text": (),
    # a records file compressed by its suffix (simulate, import, export write records)
    "pipeline.outfile": (),
    "schemas": (),
    # the state machine that replays a hand, shared by validator, simulator and audits
    "pipeline.game": ("pipeline.rules", "pipeline.codes"),
    # the package itself: pipeline.engine() says which build of the state machine runs
    "pipeline": ("pipeline.game",),
    "pipeline.validate": ("pipeline.rules", "pipeline.game", "pipeline.codes"),
    # other formats to and from records: beside the validator, before the warehouse
    "pipeline.formats": ("pipeline.rules", "pipeline.game", "pipeline.codes", "pipeline.outfile"),
    "pipeline.disputes": ("pipeline.rules", "pipeline.codes"),
    # strong policies that play from what a seat sees: the simulator's followers play them, the assistance screen
    # measures agreement with them
    "pipeline.engines": ("pipeline.rules", "pipeline.game"),
    # the simulator plays through the state machine; it never validates (its output is validated like any input)
    "pipeline.simulate": ("pipeline.rules", "pipeline.game", "pipeline.engines", "pipeline.codes", "pipeline.outfile"),
    "pipeline.ingest": ("pipeline.rules", "pipeline.game", "pipeline.validate", *_BASE),
    "pipeline.analytics": ("pipeline.rules", "pipeline.ingest", *_BASE),
    # the chart helpers: a library of the dashboards, knowing nothing of the data's origin
    "pipeline.report": ("pipeline.signals",),
    "pipeline.audit": (
        "pipeline.rules",
        "pipeline.game",
        "pipeline.engines",
        "pipeline.validate",
        "pipeline.formats",
        "pipeline.ingest",
        "pipeline.analytics",
        "pipeline.report",
        *_BASE,
    ),
    # above the simulator, the ingest and the audit together: they run populations and measure the screens
    "pipeline.evaluate": ("pipeline.simulate", "pipeline.ingest", "pipeline.analytics", "pipeline.audit", *_BASE),
    # developer tools, outside the installed package: the benchmark harness; the reference policy's agreement with
    # the simulator's styles and its cost (tools/policy_agreement.py) review simulated hands, as the replay does; the
    # followers' engine is measured against the reference policy it must beat (tools/engine_strength.py: game.policy)
    # tools/luck_variance.py reads the luck-adjusted net of simulated rooms (pipeline.analytics' player_base.sql);
    # tools/luck_lab.py replays records from validate.initial_state (the one place a record's start is built) and
    # asks the package root whether it runs compiled (pipeline.compiled); tools/yardstick_lab.py measures the
    # engine-assistance screen on the eval's own rooms (pipeline.evaluate: assist_grid, simulated)
    "tools": (
        *("pipeline", "pipeline.rules", "pipeline.game", "pipeline.validate", "pipeline.simulate", "pipeline.ingest"),
        "pipeline.engines",
        *("pipeline.audit", "pipeline.analytics", "pipeline.evaluate", *_BASE),
    ),
    "dashboards": (
        "pipeline",
        "pipeline.rules",
        "pipeline.validate",
        "pipeline.formats",
        "pipeline.ingest",
        "pipeline.analytics",
        "pipeline.audit",
        "pipeline.report",
        *_BASE,
    ),
    "cli": (
        "pipeline",
        "pipeline.rules",
        "pipeline.validate",
        "pipeline.formats",
        "pipeline.disputes",
        "pipeline.simulate",
        "pipeline.engines",
        "pipeline.ingest",
        "pipeline.analytics",
        "pipeline.audit",
        "pipeline.evaluate",
        "dashboards",
        *_BASE,
    ),
}
# modules that import a computed name, and why
DYNAMIC: dict[str, str] = {
    "tools.bench": "the versions of the third-party libraries its cache key names (KEY_LIBRARIES)",
    "pipeline.engines": "an operator's own engine, named on the command line (assist --engine package.module:name)",
}
# (importing module, imported module) → why it is allowed for now. Keep this list short and explained.
ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True, slots=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module of this project ("?" for a computed name)
    name: str | None  # the name taken from it (``from target import name``, ``target.name``), None for the module
    line: int
    path: str = ""  # the importing file, relative to the tree

    def where(self) -> str:
        taken = f" ({self.name})" if self.name else ""
        return f"{self.path}:{self.line}: {self.source} → {self.target}{taken}"


@dataclass
class Tree:
    """Modules by dotted name: whether each is a package (``__init__.py``) and its source text."""

    modules: dict[str, tuple[bool, str]]
    paths: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def read(files: tuple[Path, ...] = SOURCES) -> Tree:
        modules, paths = {}, {}
        for path in files:
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            package = parts[-1] == "__init__"
            if package:
                parts.pop()
            name = ".".join(parts)
            modules[name] = (package, path.read_text(encoding="utf-8"))
            paths[name] = str(path.relative_to(ROOT))
        return Tree(modules, paths)

    def planted(self, module: str, line: str) -> Tree:
        """A copy with ``line`` added at the end of ``module`` (a new module when there is none)."""
        package, text = self.modules.get(module, (False, ""))
        return Tree({**self.modules, module: (package, text + "\n" + line + "\n")}, self.paths)

    def package_of(self, module: str) -> str:
        """The package a module belongs to: itself for a package (``__init__.py``), else its parent."""
        return module if self.modules[module][0] else module.rpartition(".")[0]

    def internal(self, module: str) -> str | None:
        """``module`` if it is one of ours, else the deepest of its parents that is (or None: another project's)."""
        while module:
            if module in self.modules:
                return module
            module = module.rpartition(".")[0]
        return None

    def imports_of(self, module: str) -> Iterator[Import]:
        path = self.paths.get(module, module)
        tree = ast.parse(self.modules[module][1], filename=path)
        package = self.package_of(module)
        bound: dict[str, str] = {}  # local name → one of our modules, for module._name
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = self.internal(alias.name)
                    if target is None:
                        continue
                    yield Import(module, target, None, node.lineno, path)
                    if alias.asname:
                        bound[alias.asname] = target
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    if f"{base}.{alias.name}" in self.modules:  # from package import module
                        yield Import(module, f"{base}.{alias.name}", None, node.lineno, path)
                        bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                    elif (target := self.internal(base)) is not None:
                        yield Import(module, target, alias.name, node.lineno, path)
            elif isinstance(node, ast.Call) and _dynamic(node):
                arg = node.args[0] if node.args else None
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    if (target := self.internal(arg.value)) is not None:
                        yield Import(module, target, None, node.lineno, path)
                else:
                    yield Import(module, "?", None, node.lineno, path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
                yield Import(module, bound[node.value.id], node.attr, node.lineno, path)

    def imports(self) -> tuple[Import, ...]:
        return tuple(i for m in self.modules for i in self.imports_of(m))


def _dynamic(node: ast.Call) -> bool:
    """``importlib.import_module(…)``, ``import_module(…)`` or ``__import__(…)``."""
    f = node.func
    return (isinstance(f, ast.Name) and f.id in ("__import__", "import_module")) or (
        isinstance(f, ast.Attribute) and f.attr == "import_module"
    )


def unit_of(module: str) -> str:
    """The unit a module belongs to: ``pipeline.X`` for anything under pipeline/X (or pipeline/X.py), else its
    top-level package or module (``pipeline``, ``schemas``, ``dashboards``, ``cli``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "pipeline" and len(parts) > 1 else parts[0]


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def arrow_violations(found: tuple[Import, ...]) -> Iterator[tuple[Import, str]]:
    """Each import of a unit not in its :data:`ARROWS` (a unit missing from the table may import nothing)."""
    for i in found:
        if i.target == "?":
            continue
        a, b = unit_of(i.source), unit_of(i.target)
        if a != b and b not in ARROWS.get(a, ()):
            yield i, f"{a} may not import {b} (not in ARROWS)"


def unit_cycle(found: tuple[Import, ...]) -> list[str] | None:
    graph: dict[str, set[str]] = {}
    for i in found:
        if i.target != "?":
            graph.setdefault(unit_of(i.source), set())
            if unit_of(i.target) != unit_of(i.source):
                graph[unit_of(i.source)].add(unit_of(i.target))
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return None


def module_cycle(tree: Tree, found: tuple[Import, ...]) -> list[str] | None:
    graph: dict[str, set[str]] = {m: set() for m in tree.modules}
    for i in found:
        if i.target not in (i.source, "?"):
            graph[i.source].add(i.target)
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return None


def computed(found: tuple[Import, ...]) -> list[Import]:
    return [i for i in found if i.target == "?" and i.source not in DYNAMIC]


@cache
def tree() -> Tree:
    return Tree.read()


@cache
def imports() -> tuple[Import, ...]:
    return tree().imports()


# ---------------------------------------------------------------------------------------------- the parser
def test_the_parser_sees_the_imports() -> None:
    """A parser that found nothing would pass every rule: it finds the edges this project is known to have."""
    edges = {(i.source, i.target) for i in imports()}
    assert {"pipeline.rules", "pipeline.game.state", "dashboards.site", "cli", "schemas.tables"} <= set(tree().modules)
    assert ("cli", "pipeline.rules") in edges
    assert ("pipeline.game.state", "pipeline.rules.fan") in edges
    assert ("dashboards.site", "dashboards.overview") in edges  # from dashboards import overview
    assert ("pipeline.ingest.run", "pipeline.ingest.engines.local") in edges  # inside a function
    assert ("pipeline.ingest.engines.spark", "pipeline.ingest.chunks") in edges
    assert ("pipeline.ingest.warehouse", "schemas.tables") in edges
    assert any(i.name == "ChartSpec" for i in imports() if i.source == "dashboards.site")  # from dashboards import
    assert {i.source for i in imports() if i.target == "?"} == set(DYNAMIC)  # bench's __import__(name)


def test_every_unit_is_in_the_table() -> None:
    units = {unit_of(m) for m in tree().modules}
    assert units == set(ARROWS), (sorted(units - set(ARROWS)), sorted(set(ARROWS) - units))


# ---------------------------------------------------------------------------------------------- the rules
def test_no_import_cycle() -> None:
    cycle = module_cycle(tree(), imports())
    assert cycle is None, f"import cycle: {' → '.join(cycle or [])}"
    cycle = unit_cycle(imports())
    assert cycle is None, f"cycle between units: {' → '.join(cycle or [])}"


def test_layers() -> None:
    found = [(i, why) for i, why in arrow_violations(imports()) if (i.source, i.target) not in ALLOWED]
    assert not found, "imports against the layers:\n" + "\n".join(f"  {i.where()}: {why}" for i, why in found)


def test_no_import_of_a_computed_name() -> None:
    found = computed(imports())
    assert not found, "imports of a computed name:\n" + "\n".join(f"  {i.where()}" for i in found)


def test_the_allowed_exceptions_are_still_needed() -> None:
    used = {(i.source, i.target) for i, _ in arrow_violations(imports())}
    assert not set(ALLOWED) - used, f"no longer needed, remove from ALLOWED: {sorted(set(ALLOWED) - used)}"
    arrows = {(unit_of(i.source), unit_of(i.target)) for i in imports() if i.target != "?"}
    unused = sorted((a, b) for a, bs in ARROWS.items() for b in bs if (a, b) not in arrows and b not in _BASE)
    assert not unused, f"arrows nothing takes, remove from ARROWS: {unused}"


def test_private_names_stay_in_their_package() -> None:
    t = tree()
    found = [
        i
        for i in imports()
        if i.target != "?"
        and t.package_of(i.source) != t.package_of(i.target)
        and (private(i.name or "") or any(private(part) for part in i.target.split(".")))
    ]
    assert not found, "private names imported from another package:\n" + "\n".join(f"  {i.where()}" for i in found)


# ---------------------------------------------------------------------------------------------- planted
# The five broken rules a review found passing the old test, each planted in a copy of the tree: each is caught.
PLANTED = [
    ("pipeline.rules.fan", "from pipeline.formats import sheet", "pipeline.rules may not import pipeline.formats"),
    ("pipeline.simulate.bots", "from pipeline.validate import validate", "pipeline.simulate may not import"),
    (
        "pipeline.report.svg",
        "from pipeline.game.state import HandState",
        "pipeline.report may not import pipeline.game",
    ),
    ("pipeline.rules.tiles", "import schemas.tables", "pipeline.rules may not import schemas"),
]


@pytest.mark.parametrize(("module", "line", "why"), PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_arrow_is_caught(module: str, line: str, why: str) -> None:
    planted = tree().planted(module, line)
    found = [text for i, text in arrow_violations(planted.imports()) if i.source == module]
    assert any(why in text for text in found), found


def test_a_planted_cycle_between_units_is_caught() -> None:
    """analytics → audit while audit → analytics: no module imports itself back, but the units do."""
    planted = tree().planted("pipeline.analytics.stats", "from pipeline.audit import scoring")
    assert module_cycle(planted, planted.imports()) is None  # no cycle of modules: only the units' one
    cycle = unit_cycle(planted.imports())
    assert cycle is not None and {"pipeline.analytics", "pipeline.audit"} <= set(cycle), cycle


def test_a_planted_dynamic_import_is_caught() -> None:
    """importlib.import_module of a name written out is an import like any other (analytics → dashboards); of a
    computed name, a violation of its own."""
    planted = tree().planted(
        "pipeline.analytics.stats", 'import importlib\nsite = importlib.import_module("dashboards.site")'
    )
    found = [text for i, text in arrow_violations(planted.imports()) if i.source == "pipeline.analytics.stats"]
    assert any("pipeline.analytics may not import dashboards" in text for text in found), found
    planted = tree().planted("pipeline.analytics.stats", "name = 'dash' + 'boards'\nmodule = __import__(name)")
    assert [i.source for i in computed(planted.imports())] == ["pipeline.analytics.stats"]


def test_a_planted_private_name_is_caught() -> None:
    planted = tree().planted("dashboards.site", "from pipeline.audit.collusion import _results")
    t = planted
    found = [
        i
        for i in planted.imports()
        if i.target != "?" and t.package_of(i.source) != t.package_of(i.target) and private(i.name or "")
    ]
    assert [(i.source, i.name) for i in found] == [("dashboards.site", "_results")]


def test_the_site_is_orchestration_and_each_page_has_its_module() -> None:
    """Issue 42: dashboards/site.py runs each screen once and writes the pages, under 300 lines; a page's HTML is
    its own module of dashboards/pages (every page the site writes is imported from there)."""
    site = ROOT / "dashboards" / "site.py"
    assert len(site.read_text(encoding="utf-8").splitlines()) < 300
    pages = {p.stem for p in (ROOT / "dashboards" / "pages").glob("*.py")} - {"__init__"}
    imported = {i.target.rsplit(".", 1)[-1] for i in tree().imports() if i.source == "dashboards.site"}
    assert pages <= imported | {"replay"}, pages - imported  # replay.py: the replay page, written by xuezhan replay
