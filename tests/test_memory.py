"""How the process gives back what it frees (:mod:`pipeline.memory`): the command line has Polars' allocator
return freed pages at once, and leaves a user's own setting alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import memory

ROOT = Path(__file__).resolve().parent.parent

# In a fresh process: import the command line (as `xuezhan` does), then let Polars free a large frame and report
# the resident memory before and after (MB), and the variable Polars read.
_PROBE = """
import os
import cli  # noqa: F401 - sets Polars' allocator up, as the command does
import polars as pl

def rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmRSS:"))

frame = pl.DataFrame({"x": pl.arange(0, 20_000_000, eager=True)}).with_columns(y=pl.col("x") * 2)
held = rss()
del frame
print(held, rss(), os.environ.get("_RJEM_MALLOC_CONF"))
"""


def _probe(env: dict[str, str]) -> tuple[int, int, str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[0]), int(out[1]), out[2]


def _env_without_setting() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != memory.POLARS_MALLOC_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_command_line_has_polars_give_back_a_freed_frame_at_once() -> None:
    held, after, conf = _probe(_env_without_setting())
    assert conf.endswith("," + memory.POLARS_MALLOC_CONF)  # Polars' own options, then ours: the last one wins
    assert held - after > 250, (held, after)  # the frame's 320 MB, back to the system once it is freed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_users_own_allocator_setting_stands() -> None:
    env = _env_without_setting()
    env[memory.POLARS_MALLOC_ENV] = "dirty_decay_ms:10000"  # keep what is freed for ten seconds
    held, after, conf = _probe(env)
    assert conf.endswith(",dirty_decay_ms:10000")
    assert held - after < 50, (held, after)  # kept: the user's setting is the one Polars read


def test_polars_is_told_only_before_it_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.POLARS_MALLOC_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "polars", sys.modules.get("polars") or object())
    assert memory.polars_returns_freed_memory() is False  # loaded: its allocator read its options already
    assert memory.POLARS_MALLOC_ENV not in os.environ
    monkeypatch.delitem(sys.modules, "polars")
    assert memory.polars_returns_freed_memory() is True
    assert os.environ[memory.POLARS_MALLOC_ENV] == memory.POLARS_MALLOC_CONF
    monkeypatch.setenv(memory.POLARS_MALLOC_ENV, "dirty_decay_ms:1000")
    assert memory.polars_returns_freed_memory() is True
    assert os.environ[memory.POLARS_MALLOC_ENV] == "dirty_decay_ms:1000"  # the user's, kept


def test_return_freed_memory_runs_anywhere() -> None:
    memory.return_freed_memory()  # glibc: the threshold fixed; elsewhere nothing happens, and nothing raises
