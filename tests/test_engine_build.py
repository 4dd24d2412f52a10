"""Which engine the tests run against: `make test-compiled` runs the engine tests again on the mypyc build
(XUEZHAN_EXPECT_COMPILED=1), and this makes sure they did not quietly pick up the pure-Python sources."""

from __future__ import annotations

import os

import pipeline


def test_the_expected_engine_is_the_one_imported() -> None:
    expected = os.environ.get("XUEZHAN_EXPECT_COMPILED") == "1"
    assert pipeline.compiled() is expected, f"pipeline from {pipeline.__path__[0]}"


def test_compiled_and_pure_modules_are_told_apart() -> None:
    from pipeline.game import state
    from pipeline.rules import ruleset  # never compiled (setup.py)

    assert (ruleset.__file__ or "").endswith(".py")
    assert pipeline.compiled() is not (state.__file__ or "").endswith(".py")
