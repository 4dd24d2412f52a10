"""The shape of the code: which module may import which, read from the source with ``ast`` (nothing is imported).

Every module under ``pipeline/`` and ``dashboards/`` and ``cli.py`` is parsed; every ``import`` and ``from …
import`` statement counts, at module level or inside a function (a lazy import is still a dependency), and so
does ``module._name`` on a module bound by an import. The rules:

- no import cycle between modules;
- the layers, rules → game → validate → ingest → analytics / audit → dashboards → cli: what a package must not
  import (:data:`FORBIDDEN`) or the only packages it may (:data:`ONLY`); nothing under ``pipeline/`` imports
  the dashboards or the command line;
- a private (underscore) name is imported only within its own package (not even from a subpackage or the
  parent package).

A known violation whose fix lies outside this change is listed in :data:`ALLOWED`, with the reason, so that
the rule keeps holding for everything else; an entry that is no longer needed fails the test.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (*sorted((ROOT / "pipeline").rglob("*.py")), *sorted((ROOT / "dashboards").rglob("*.py")), ROOT / "cli.py")

# package → packages (or modules) it must never import, itself or through any of its modules
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "pipeline.rules": (
        "pipeline.game",
        "pipeline.validate",
        "pipeline.ingest",
        "pipeline.analytics",
        "pipeline.audit",
        "pipeline.report",
        "pipeline.simulate",
        "dashboards",
    ),
    "pipeline.validate": ("pipeline.ingest", "pipeline.analytics", "pipeline.audit", "pipeline.simulate", "dashboards"),
    "pipeline.ingest": ("pipeline.analytics", "pipeline.audit", "pipeline.simulate", "dashboards"),
    # other formats to and from records: beside the validator, before the warehouse (records are written,
    # then validated or ingested like any other)
    "pipeline.formats": (
        "pipeline.validate",
        "pipeline.ingest",
        "pipeline.analytics",
        "pipeline.audit",
        "pipeline.simulate",
        "dashboards",
    ),
    "pipeline.analytics": ("pipeline.simulate", "dashboards"),
    "pipeline.audit": ("pipeline.simulate", "dashboards"),
    # the chart helpers are a library of the dashboards, not the other way round
    "pipeline.report": ("pipeline.ingest", "pipeline.analytics", "pipeline.audit", "pipeline.simulate", "dashboards"),
    "pipeline": ("dashboards", "cli"),
}
# package → the only packages (or modules) of this project it may import
ONLY: dict[str, tuple[str, ...]] = {
    "pipeline.game": ("pipeline.game", "pipeline.rules", "pipeline.codes"),  # values: pipeline.rules.values
}
# (importing module, imported module) → why it is allowed for now. Keep this list short and explained.
ALLOWED: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in SOURCES}


@dataclass(frozen=True, slots=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module of this project
    name: str | None  # the name taken from it (``from target import name``, ``target.name``), None for the module
    line: int

    def where(self) -> str:
        taken = f" ({self.name})" if self.name else ""
        return f"{MODULES[self.source].relative_to(ROOT)}:{self.line}: {self.source} → {self.target}{taken}"


def package_of(module: str) -> str:
    """The package a module belongs to: itself for a package (``__init__.py``), else its parent."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _internal(module: str) -> str | None:
    """``module`` if it is one of ours, else the deepest of its parents that is (or None: another project's)."""
    while module:
        if module in MODULES:
            return module
        module = module.rpartition(".")[0]
    return None


def _imports_of(module: str) -> Iterator[Import]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"), filename=str(MODULES[module]))
    package = package_of(module)
    bound: dict[str, str] = {}  # local name → one of our modules, for module._name
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _internal(alias.name)
                if target is None:
                    continue
                yield Import(module, target, None, node.lineno)
                if alias.asname:
                    bound[alias.asname] = target
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:  # from package import module
                    yield Import(module, f"{base}.{alias.name}", None, node.lineno)
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif (target := _internal(base)) is not None:
                    yield Import(module, target, alias.name, node.lineno)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            yield Import(module, bound[node.value.id], node.attr, node.lineno)


@cache
def imports() -> tuple[Import, ...]:
    return tuple(i for m in MODULES for i in _imports_of(m))


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


# ---------------------------------------------------------------------------------------------- the parser
def test_the_parser_sees_the_imports() -> None:
    """A parser that found nothing would pass every rule: it finds the edges this project is known to have."""
    edges = {(i.source, i.target) for i in imports()}
    assert {"pipeline.rules", "pipeline.game.state", "dashboards.site", "cli"} <= set(MODULES)
    assert ("cli", "pipeline.rules") in edges
    assert ("pipeline.game.state", "pipeline.rules.fan") in edges
    assert ("dashboards.site", "dashboards.overview") in edges  # from dashboards import overview
    assert ("pipeline.ingest.run", "pipeline.ingest.engines.local") in edges  # inside a function
    assert ("pipeline.ingest.engines.spark", "pipeline.ingest.chunks") in edges
    assert any(i.name == "ChartSpec" for i in imports() if i.source == "dashboards.site")  # from dashboards import


# ---------------------------------------------------------------------------------------------- the rules
def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in imports():
        if i.target != i.source:
            graph[i.source].add(i.target)
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        pytest.fail(f"import cycle: {' → '.join(exc.args[1])}")


def _violations() -> Iterator[tuple[Import, str]]:
    for i in imports():
        for package, banned in FORBIDDEN.items():
            if within(i.source, package):
                for b in banned:
                    if within(i.target, b):
                        yield i, f"{package} must not import {b}"
        for package, allowed in ONLY.items():
            if within(i.source, package) and not any(within(i.target, a) for a in allowed):
                yield i, f"{package} imports only {', '.join(allowed)}"


def test_layers() -> None:
    found = [(i, why) for i, why in _violations() if (i.source, i.target) not in ALLOWED]
    assert not found, "imports against the layers:\n" + "\n".join(f"  {i.where()}: {why}" for i, why in found)


def test_the_allowed_exceptions_are_still_needed() -> None:
    used = {(i.source, i.target) for i, _ in _violations()}
    assert not set(ALLOWED) - used, f"no longer needed, remove from ALLOWED: {sorted(set(ALLOWED) - used)}"


def test_private_names_stay_in_their_package() -> None:
    found = [
        i
        for i in imports()
        if package_of(i.source) != package_of(i.target)
        and (private(i.name or "") or any(private(part) for part in i.target.split(".")))
    ]
    assert not found, "private names imported from another package:\n" + "\n".join(f"  {i.where()}" for i in found)
