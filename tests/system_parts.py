"""What the tests need from the system beyond Python packages: a CJK font, chromium.

`make test` finds them installed or installs them (its system-deps step), then says which it found in
``XUEZHAN_EXPECT`` (comma-separated: ``cjk``, ``chromium``). A test that needs one skips where it is missing,
unless the run expects it: then its absence is a failure, not a check that silently disappears (two CJK-font tests
once skipped in a run whose machine had the font, because the process could not see it).
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

EXPECTED = frozenset(filter(None, os.environ.get("XUEZHAN_EXPECT", "").split(",")))


def missing_system_part(part: str, reason: str) -> NoReturn:
    """Skip the test for want of ``part`` (``cjk``, ``chromium``), or fail it where this run expects it."""
    if part in EXPECTED:
        pytest.fail(f"{reason}, though this run expects it installed (XUEZHAN_EXPECT={','.join(sorted(EXPECTED))})")
    pytest.skip(reason)
