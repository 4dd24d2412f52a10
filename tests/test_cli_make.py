"""The set-up targets (issue 17): ``make demo`` installs no pyspark, ``make test`` adds the spark extra once, and
the system packages come without recommends. Run on a copy of the Makefile with a stand-in ``.venv/bin/python``
that only records what it is asked to do."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKE_PYTHON = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../../calls"
case "$*" in *--target*) mkdir -p build/compiled/pipeline/game && touch build/compiled/pipeline/game/state.py;; esac
"""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    tools = tmp_path / "tools"  # what system-deps looks for, present: it installs nothing
    tools.mkdir()
    for name, script in {"chromium": "", "java": "", "fc-list": "echo 'Noto Sans CJK SC'"}.items():
        (tools / name).write_text(f"#!/bin/sh\n{script}\n")
        (tools / name).chmod(0o755)
    return tmp_path


def installs(clone: Path, target: str) -> list[str]:
    """The ``pip install`` of the venv that ``make target`` asked for (the compiled build's left out)."""
    calls = clone / "calls"
    calls.write_text("")
    done = subprocess.run(
        ["make", "--no-print-directory", target],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": f"{clone / 'tools'}:{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [c for c in calls.read_text().splitlines() if "pip install" in c and "--target" not in c]


def test_demo_installs_no_spark_and_test_adds_it_once(clone: Path) -> None:
    assert installs(clone, "demo") == ["-m pip install --quiet --upgrade pip", "-m pip install --quiet -e .[dev]"]
    assert installs(clone, "test") == ["-m pip install --quiet -e .[dev,spark]"]
    assert installs(clone, "test") == []  # twice: nothing reinstalled
    assert installs(clone, "demo") == []
    time.sleep(1.1)
    (clone / "pyproject.toml").touch()  # a new pyproject: the venv and then its spark extra again
    assert installs(clone, "test") == [
        "-m pip install --quiet --upgrade pip",
        "-m pip install --quiet -e .[dev]",
        "-m pip install --quiet -e .[dev,spark]",
    ]


def test_system_packages_come_without_recommends_and_no_full_jdk() -> None:
    recipe = subprocess.run(
        ["make", "-n", "-B", "system-deps"], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    assert "apt-get install -y -q --no-install-recommends" in recipe
    packages = (ROOT / "Makefile").read_text().split("SYSTEM_PACKAGES := ")[1].splitlines()[0].split()
    assert packages == ["chromium", "fonts-noto-cjk", "fontconfig", "openjdk-17-jre-headless"]
    readme = (ROOT / "README.md").read_text()
    for package in packages:
        assert f"`{package}`" in readme
    # the README says how long `make test` takes (the figure is measured, and changes with the suite)
    assert re.search(r"The whole `make test` takes about \d+ minutes", readme)


def test_demo_and_test_run_on_the_default_build(clone: Path) -> None:
    """Issue 23: `make demo` builds the package as a user's `pip install .` does (compiled where a C compiler
    exists) into build/compiled and runs the demo there; `make test`'s second run uses the same build."""
    installs(clone, "demo")
    calls = (clone / "calls").read_text().splitlines()
    assert any("pip install" in c and "--no-build-isolation --no-deps --target build/compiled ." in c for c in calls)
    assert "-m dashboards.demo" in calls[-1]
    recipe = subprocess.run(
        ["make", "-n", "--no-print-directory", "demo", "test-compiled"], cwd=clone, capture_output=True, text=True
    ).stdout
    on_compiled = f"PYTHONPATH={clone}/build/compiled PYTHONSAFEPATH=1"
    assert f"XUEZHAN_REPO={clone} {on_compiled} .venv/bin/python -m dashboards.demo" in recipe
    assert f"XUEZHAN_EXPECT_COMPILED=1 {on_compiled}" in recipe
    assert "XUEZHAN_COMPILE" not in (clone / "Makefile").read_text()  # the default build, not a forced one


def test_the_compiled_run_is_the_whole_tests_folder_and_both_runs_use_the_cores(clone: Path) -> None:
    """No test file can be left out of `make test` (the regression corpus once was): the compiled run is given
    the folder itself; the coverage run holds the corpus; both spread over the cores unless JOBS=1."""

    def recipe(*args: str) -> str:
        done = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=clone, capture_output=True, text=True)
        return done.stdout

    compiled = [line for line in recipe("test-compiled").splitlines() if "-m pytest" in line]
    assert len(compiled) == 1 and compiled[0].split()[-1] == "tests" and " -n auto " in compiled[0]
    assert " -n " not in recipe("test-compiled", "JOBS=1")
    assert (
        "tests/corpus"
        in re.search(r"^COVERAGE_TESTS :=(.*?)(?<!\\)$", (clone / "Makefile").read_text(), re.M | re.S)[1]
    )
