"""The information-cheat screen (issue 22 item 3): its statistics checked against exact sums, and the screen on a
simulated room with a planted player who sees every hand (``simulate --inject bot=1``)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest

from pipeline.analytics.queries import connect
from pipeline.audit.information import beta_binomial_cdf, binomial_cdf, fit_beta_binomial, screen_information
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))


def _exact_beta_binomial_cdf(k: int, n: int, a: int, b: int) -> Fraction:
    def beta(x: int, y: int) -> Fraction:  # B(x, y) for positive integers: (x-1)!(y-1)!/(x+y-1)!
        return Fraction(_fact(x - 1) * _fact(y - 1), _fact(x + y - 1))

    return sum((comb(n, j) * beta(j + a, n - j + b) / beta(a, b) for j in range(k + 1)), Fraction(0))


def _fact(n: int) -> int:
    out = 1
    for i in range(2, n + 1):
        out *= i
    return out


@pytest.mark.parametrize(
    ("k", "n", "a", "b"), [(0, 1, 1, 1), (0, 30, 2, 50), (3, 30, 2, 50), (7, 40, 3, 4), (39, 40, 3, 4)]
)
def test_the_beta_binomial_tail_is_the_exact_sum(k: int, n: int, a: int, b: int) -> None:
    assert beta_binomial_cdf(k, n, a, b) == pytest.approx(float(_exact_beta_binomial_cdf(k, n, a, b)), rel=1e-9)


def test_the_binomial_tail_and_the_edges() -> None:
    exact = sum(comb(50, j) * Fraction(1, 20) ** j * Fraction(19, 20) ** (50 - j) for j in range(4))
    assert binomial_cdf(3, 50, 0.05) == pytest.approx(float(exact), rel=1e-9)
    assert binomial_cdf(50, 50, 0.3) == 1.0 and binomial_cdf(2, 50, 0.0) == 1.0 and binomial_cdf(2, 50, 1.0) == 0.0
    assert beta_binomial_cdf(-1, 5, 1.0, 1.0) == 0.0 and beta_binomial_cdf(5, 5, 1.0, 1.0) == 1.0


def test_the_fit_recovers_the_spread_of_rates() -> None:
    rng = np.random.default_rng(7)
    rates = rng.beta(6.0, 394.0, size=400)  # mean 1.5%, a + b = 400
    n = rng.integers(5_000, 15_000, size=400)
    mean, size = fit_beta_binomial(n, rng.binomial(n, rates))
    assert mean == pytest.approx(0.015, rel=0.05) and size == pytest.approx(400, rel=0.25)
    same = np.full(50, 10_000)
    mean, size = fit_beta_binomial(same, rng.binomial(same, 0.015))  # no spread beyond the binomial's
    assert size is None or size > 2_000


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """900 simulated hands, 8 players, one of whom sees every hand; ingested."""
    folder = tmp_path_factory.mktemp("room")
    out = folder / "sim.jsonl"
    write(SimConfig(hands=900, seed=11, players=8, inject=InjectSpec.parse("bot=1")), out)
    ingest([str(out)], folder / "wh", workers=1)
    return folder / "wh", json.loads((folder / "sim.labels.json").read_text())


def test_the_player_who_sees_every_hand_is_flagged_and_nobody_else(room: tuple[Path, dict[str, object]]) -> None:
    warehouse, labels = room
    with connect(warehouse) as con:
        results = screen_information(con)
    flagged = [r.player for r in results if r.flagged]
    assert flagged == labels["bots"]
    bot = results[0]
    assert bot.dangerous_by_choice == 0 and bot.expected is not None and bot.expected > 50  # the simulator's promise
    honest = [r for r in results if not r.flagged]
    assert all(r.dangerous_by_choice > 0 and r.q is not None and r.q > 0.05 for r in honest)
    assert all(r.p is not None and r.p > 0.001 for r in honest)


def test_few_discards_are_listed_not_tested(room: tuple[Path, dict[str, object]]) -> None:
    warehouse, _ = room
    with connect(warehouse) as con:
        results = screen_information(con, min_discards=10**9)
    assert all(r.p is None and r.q is None and not r.flagged for r in results) and len(results) == 8


def test_the_command(room: tuple[Path, dict[str, object]]) -> None:
    warehouse, labels = room
    done = subprocess.run([XUEZHAN, "info-cheats", "--warehouse", str(warehouse)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("8 players with at least 300 judged discards screened") and "1 flagged" in lines[0]
    assert lines[2].startswith(f"{labels['bots'][0]:<16}") and lines[2].endswith("YES")  # type: ignore[index]
    done = subprocess.run(
        [XUEZHAN, "info-cheats", "--warehouse", str(warehouse), "--format", "json"], capture_output=True, text=True
    )
    rows = json.loads(done.stdout)
    assert [r["player"] for r in rows if r["flagged"]] == labels["bots"] and set(rows[0]) >= {"p", "q", "expected"}
