"""Which engine the tests run against: `make test-compiled` runs the engine tests again on the mypyc build
(XUEZHAN_EXPECT_COMPILED=1), and this makes sure they did not quietly pick up the pure-Python sources.

Whether a module is compiled is read off its file, independently of :func:`pipeline.compiled`: a compiled
module is an extension module, whose file name ends in one of the interpreter's extension suffixes
(``.cpython-311-x86_64-linux-gnu.so`` and the like); a pure one ends in ``.py``."""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import re
from pathlib import Path

import pytest

import pipeline

SETUP = Path(__file__).resolve().parents[1] / "setup.py"
COMPILED_MODULES = [
    path.removesuffix(".py").replace("/", ".") for path in re.findall(r'"(pipeline/[\w/]+\.py)"', SETUP.read_text())
]
EXPECTED = os.environ.get("XUEZHAN_EXPECT_COMPILED") == "1"


def _is_extension(module: object) -> bool:
    name = getattr(module, "__file__", None) or ""
    return any(name.endswith(suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def test_setup_lists_the_engine_modules() -> None:
    assert {"pipeline.game.state", "pipeline.validate", "pipeline.rules.hand"} <= set(COMPILED_MODULES)


@pytest.mark.parametrize("name", COMPILED_MODULES)
def test_every_engine_module_is_built_as_expected(name: str) -> None:
    module = importlib.import_module(name)
    assert _is_extension(module) is EXPECTED, f"{name} from {module.__file__}"
    assert (module.__file__ or "").endswith(".py") is not EXPECTED


def test_pipeline_compiled_agrees_with_the_module_files() -> None:
    from pipeline.game import state

    assert pipeline.compiled() is _is_extension(state) is EXPECTED, f"pipeline from {pipeline.__path__[0]}"


def test_modules_left_out_of_the_build_stay_python() -> None:
    from pipeline.rules import ruleset  # never compiled (setup.py: the profiles read dataclass annotations)

    assert not _is_extension(ruleset) and (ruleset.__file__ or "").endswith(".py")
