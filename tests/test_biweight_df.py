"""tools/biweight_df.py: the biweight-studentized deviate of normal rooms, and the degrees of freedom the
think-time screen reads it in (stats.biweight_df) at or below what its tails need."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.analytics.stats import biweight, t_isf
from tools.biweight_df import deviates, fitted_df, table


def test_the_vectorised_deviates_are_stats_biweight() -> None:
    rng = np.random.default_rng(5)
    got = deviates(9, 4, rng)
    rng = np.random.default_rng(5)
    others = rng.standard_normal((4, 9))
    player = rng.standard_normal(4)
    for row, x, d in zip(others, player, got, strict=True):
        location, variance = biweight(list(row))
        assert d == pytest.approx((x - location) / math.sqrt(variance * (1 + 1 / 9)), rel=1e-9)


def test_fitted_df_inverts_t() -> None:
    for df in (2.0, 7.5, 40.0):
        assert fitted_df(-t_isf(1e-3, df), 1e-3) == pytest.approx(df, rel=1e-6)


def test_biweight_df_is_conservative_where_the_screen_reads_it() -> None:
    """Fewer degrees of freedom than the deviate's own tails need, for rooms of 8 and 16 (m 7 and 15), at 1e-2
    and 1e-3 (20,000 rooms: the 1e-4 tail needs the tool's 200,000)."""
    for m, tail, _, df, ours in table([7, 15], 20_000, seed=3):
        if tail >= 1e-3:
            assert ours <= df, (m, tail, df, ours)


@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=2, max_size=40))
def test_biweight_never_fails_and_stays_among_the_values(values: list[float]) -> None:
    """Any sample: a location between its least and greatest value, a variance that is finite and not negative;
    the same values shifted give the location shifted."""
    location, variance = biweight(values)
    assert min(values) - 1e-9 <= location <= max(values) + 1e-9
    assert math.isfinite(variance) and variance >= 0
    moved, again = biweight([v + 3.0 for v in values])
    assert moved == pytest.approx(location + 3.0, abs=1e-6) and again == pytest.approx(variance, rel=1e-6, abs=1e-9)
