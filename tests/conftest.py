"""Test session set-up shared by every test module."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings
from rooms import simulated_room
from system_parts import EXPECTED

import pipeline

# The developer tools (tools/: the benchmark harness) are not installed with the package: the tests of the
# compiled build find them in the source tree, after everything else (so that the build's pipeline stays first).
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

# No per-example deadline: a deadline is a timed test, and these machines are noisy (a property test of the win
# tables took 290 ms against the default 200 ms under coverage on a loaded machine). Speed is the benchmarks'.
settings.register_profile("xuezhan", deadline=None)
settings.load_profile("xuezhan")


def pytest_report_header() -> str:
    engine = "compiled (mypyc)" if pipeline.compiled() else "pure Python"
    expected = ", ".join(sorted(EXPECTED)) or "none"  # tests/system_parts.py
    return f"xuezhan engine: {engine}, from {pipeline.__path__[0]}; system parts expected: {expected}"


@pytest.fixture(scope="session")
def team_room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """1,400 hands of 8 players with one team of three at intensity 0.5 (the team screen's and the report's
    tests): the warehouse and the labels. Read only: a test that writes makes its own."""
    return simulated_room(tmp_path_factory.mktemp("team"), "team=3:0.5", 7, 1400)
