"""A test needing a system part (a CJK font, chromium) skips where the part is missing, and fails where the run
expects it (tests/system_parts.py: `make test` says which parts it found after installing them)."""

from __future__ import annotations

import pytest
import system_parts


def test_a_missing_part_skips_unless_the_run_expects_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system_parts, "EXPECTED", frozenset())
    with pytest.raises(pytest.skip.Exception, match="no CJK font"):
        system_parts.missing_system_part("cjk", "no CJK font installed")
    monkeypatch.setattr(system_parts, "EXPECTED", frozenset({"cjk"}))
    with pytest.raises(pytest.fail.Exception, match="though this run expects it installed"):
        system_parts.missing_system_part("cjk", "no CJK font installed")
    with pytest.raises(pytest.skip.Exception):
        system_parts.missing_system_part("chromium", "chromium is not installed")


def test_make_test_says_what_it_found() -> None:
    """The Makefile's test runs set XUEZHAN_EXPECT from what fontconfig and the PATH show."""
    from pathlib import Path

    makefile = (Path(__file__).parents[1] / "Makefile").read_text(encoding="utf-8")
    assert makefile.count("$(EXPECT) ") == 2 and "fc-list :lang=zh" in makefile.split("EXPECT :=")[1]
