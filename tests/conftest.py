"""Test session set-up shared by every test module."""

from __future__ import annotations

import pipeline


def pytest_report_header() -> str:
    engine = "compiled (mypyc)" if pipeline.compiled() else "pure Python"
    return f"xuezhan engine: {engine}, from {pipeline.__path__[0]}"
