"""Test session set-up shared by every test module."""

from __future__ import annotations

from hypothesis import settings

import pipeline

# No per-example deadline: a deadline is a timed test, and these machines are noisy (a property test of the win
# tables took 290 ms against the default 200 ms under coverage on a loaded machine). Speed is the benchmarks'.
settings.register_profile("xuezhan", deadline=None)
settings.load_profile("xuezhan")


def pytest_report_header() -> str:
    engine = "compiled (mypyc)" if pipeline.compiled() else "pure Python"
    return f"xuezhan engine: {engine}, from {pipeline.__path__[0]}"
