"""Compiled by default (issue 23): a plain build compiles the engine where a C compiler exists, falls back to pure
Python with one clear warning where not, never compiles an editable install, and says which engine runs.

`make test` runs this file on the compiled build (build/compiled, the default build of setup.py, with
XUEZHAN_EXPECT_COMPILED=1): there the compiled modules are what `import pipeline` gives (tests/test_engine_build.py
checks every one of them). The fallback is built for real, in a copy of the sources with no compiler to be found.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import pipeline

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = os.environ.get("XUEZHAN_EXPECT_COMPILED") == "1"


@pytest.fixture(scope="module")
def setup_module_() -> ModuleType:
    """setup.py as a module: its functions without running setup() (it runs only as ``__main__``)."""
    spec = importlib.util.spec_from_file_location("xuezhan_setup", ROOT / "setup.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_plan_doctests(setup_module_: ModuleType) -> None:
    result = doctest.testmod(setup_module_)
    assert result.attempted >= 4 and result.failed == 0


def test_the_build_plan(setup_module_: ModuleType) -> None:
    plan = setup_module_.plan
    gcc = "/usr/bin/gcc"
    assert plan("", is_editable=False, compiler=gcc, has_mypyc=True) == (True, "")
    assert plan("", is_editable=False, compiler=gcc, has_mypyc=False)[1].startswith("fallback: mypy")
    assert plan("", is_editable=False, compiler=None, has_mypyc=False)[1].startswith("fallback: no C compiler")
    assert plan("0", is_editable=False, compiler=gcc, has_mypyc=True) == (False, "chosen: built with XUEZHAN_COMPILE=0")
    assert plan("1", is_editable=True, compiler=gcc, has_mypyc=True) == (True, "")  # asked for: even editable
    with pytest.raises(SystemExit, match="needs a C compiler"):
        plan("1", is_editable=False, compiler=None, has_mypyc=True)
    # an editable install runs its sources: never compiled, and no warning
    assert plan("", is_editable=True, compiler=gcc, has_mypyc=True) == (False, "editable")


def test_editable_builds_are_recognised(setup_module_: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    for argv, expected in (
        (["setup.py", "editable_wheel", "--dist-info-dir", "x"], True),
        (["setup.py", "develop"], True),
        (["setup.py", "bdist_wheel"], False),
        (["setup.py", "egg_info"], False),
    ):
        monkeypatch.setattr(sys, "argv", argv)
        assert setup_module_.editable() is expected


def test_the_compiler_is_looked_for_where_the_build_would(
    setup_module_: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc -O2")
    assert setup_module_.c_compiler() is None
    monkeypatch.setenv("CC", f"{sys.executable} -O2")  # any program that exists stands for one
    assert setup_module_.c_compiler() == sys.executable


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler: nothing to compare")
def test_the_tests_run_on_the_engine_make_built() -> None:
    """`make test` sets XUEZHAN_EXPECT_COMPILED=1 for its second run, on build/compiled; here a compiler exists,
    so that run must be compiled (the first run, under coverage, is the sources)."""
    assert pipeline.compiled() is EXPECTED
    assert pipeline.engine() == ("compiled" if EXPECTED else "pure Python")
    assert pipeline.engine_note() == ""


@pytest.mark.skipif(not EXPECTED, reason="the compiled build's own command is checked on the compiled run")
def test_the_compiled_build_has_its_own_command() -> None:
    command = ROOT / "build" / "compiled" / "bin" / "xuezhan"
    done = subprocess.run([str(command), "--version"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "(engine: compiled)" in done.stdout and done.stderr == ""


def _copy_sources(dest: Path) -> Path:
    dest.mkdir()
    for name in ("pyproject.toml", "setup.py", "cli.py", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    for package in ("pipeline", "schemas", "dashboards"):
        shutil.copytree(
            ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.so", "_engine.txt")
        )
    return dest


def _install(src: Path, target: Path, env: dict[str, str]) -> None:
    """A real ``pip install --target`` of ``src`` (no build isolation, no dependencies) under ``env``."""
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-build-isolation",
            "--no-deps",
            "--target",
            str(target),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=src.parent,
    )
    assert build.returncode == 0, build.stdout + build.stderr


def test_without_a_compiler_the_build_falls_back_with_one_warning(tmp_path: Path) -> None:
    """A real build (pip, setup.py, the wheel) where no C compiler can be found: the package installs, pure
    Python, and keeps the reason; every command then says so once on stderr, and --version names it."""
    src = _copy_sources(tmp_path / "src")
    target = tmp_path / "site"
    env = {**os.environ, "CC": "/nonexistent/cc"}
    env.pop("XUEZHAN_COMPILE", None)
    _install(src, target, env)
    assert not list(target.rglob("*.so")), "nothing compiled"
    note = (target / "pipeline" / "_engine.txt").read_text(encoding="utf-8").strip()
    assert note == "fallback: no C compiler was found when xuezhan was built"

    run_env = {**os.environ, "PYTHONPATH": str(target), "PYTHONSAFEPATH": "1"}

    def xuezhan(*args: str) -> subprocess.CompletedProcess[str]:
        code = "from cli import app; app(prog_name='xuezhan')"
        return subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=run_env, cwd=tmp_path
        )

    version = xuezhan("--version")
    assert version.returncode == 0, version.stderr
    assert f"(engine: pure Python ({note}))" in version.stdout
    listed = xuezhan("rules", "list")
    assert listed.returncode == 0, listed.stderr
    warnings = [line for line in listed.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: the replay engine runs as pure Python, several times slower ({note})"]
    assert "chengdu" in listed.stdout  # the answers are the same: only slower


def test_chosen_pure_builds_do_not_warn(tmp_path: Path) -> None:
    """XUEZHAN_COMPILE=0 is a choice: the package says so for --version, and commands do not warn."""
    src = _copy_sources(tmp_path / "src")
    target = tmp_path / "site"
    env = {**os.environ, "XUEZHAN_COMPILE": "0"}
    _install(src, target, env)
    assert (target / "pipeline" / "_engine.txt").read_text(
        encoding="utf-8"
    ).strip() == "chosen: built with XUEZHAN_COMPILE=0"
    run_env = {**os.environ, "PYTHONPATH": str(target), "PYTHONSAFEPATH": "1"}
    listed = subprocess.run(
        [sys.executable, "-c", "from cli import app; app(prog_name='xuezhan')", "rules", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        env=run_env,
        cwd=tmp_path,
    )
    assert listed.returncode == 0 and "warning:" not in listed.stderr, listed.stderr


def test_the_wheels_are_compiled_or_not_built() -> None:
    """The wheel build configuration (pyproject.toml, run by .github/workflows/wheels.yml) forces the compiled
    build and tests each wheel's engine, so no platform ships a silently pure wheel."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheels = config["tool"]["cibuildwheel"]
    assert wheels["environment"] == {"XUEZHAN_COMPILE": "1"}
    assert "pipeline.compiled()" in wheels["test-command"]
    assert set(wheels["build"].split()) >= {"cp311-*", "cp312-*"}
    assert "mypy==" in " ".join(config["build-system"]["requires"])  # mypyc, in every isolated build
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    assert "pypa/cibuildwheel" in workflow
    for runner in ("ubuntu-latest", "macos-14", "windows-latest"):
        assert runner in workflow


def test_only_a_build_compiles(setup_module_: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip asks for the build's requirements and metadata first (egg_info, dist_info): those runs compile
    nothing, or every install would generate the C twice."""
    for argv, expected in (
        (["setup.py", "bdist_wheel", "--dist-dir", "x"], True),
        (["setup.py", "build_ext"], True),
        (["setup.py", "egg_info"], False),
        (["setup.py", "dist_info", "--output-dir", "x"], False),
        (["setup.py", "sdist"], False),
        (["setup.py", "editable_wheel"], False),
    ):
        monkeypatch.setattr(sys, "argv", argv)
        assert setup_module_.builds() is expected


def test_what_ingest_workers_send_back_survives_pickle() -> None:
    """Ingest's workers send each chunk's tables and record keys to the committing process by pickle: with
    the record-to-rows step compiled (pipeline/ingest/work.py), its values must still make the trip (a frozen
    dataclass of a compiled module does not: its unpickling assigns fields)."""
    import itertools
    import pickle

    from pipeline.ingest.read import read_lines
    from pipeline.ingest.work import encoded, process_lines

    lines = list(itertools.islice(read_lines([str(ROOT / "data" / "sample.jsonl.gz")]), 12))
    rows = process_lines(lines, "run-1")
    result = (encoded(rows.tables()), rows.keys)
    tables, keys = pickle.loads(pickle.dumps(result))
    assert keys == rows.keys and len(keys) == 12 and keys[3].position == 3
    for name, table in result[0].items():
        again = tables[name]
        assert (again.table() if hasattr(again, "table") else again).equals(
            table.table() if hasattr(table, "table") else table
        ), name
