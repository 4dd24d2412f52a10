"""Intervals: Wilson for rates, normal for means from sums, the bootstrap; and how a metric reads a row of
base counts (nulls included). Known values are quoted to 4 places."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.analytics import stats
from pipeline.analytics.metrics import METRIC_BY_ID, METRICS
from pipeline.analytics.stats import (
    Z95,
    bootstrap_mean,
    by_factor,
    by_levels,
    by_qvalues,
    mean_interval,
    normal_isf,
    normal_sf,
    t_sf,
    wilson,
)


def bounds(num: int, den: int) -> tuple[float, float]:
    """The Wilson bounds of a rate with a denominator (never None there)."""
    low, high = wilson(num, den)
    assert low is not None and high is not None
    return low, high


def r4(pair: tuple[float | None, ...]) -> tuple[float | None, ...]:
    return tuple(None if x is None else round(x, 4) for x in pair)


@pytest.mark.parametrize(
    ("num", "den", "expected"),
    [
        (5, 10, (0.2366, 0.7634)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (1, 2, (0.0945, 0.9055)),
        (2, 3, (0.2077, 0.9385)),
        (1, 1, (0.2065, 1.0)),
        (0, 1, (0.0, 0.7935)),
        (81, 263, (0.2553, 0.3662)),
    ],
)
def test_wilson_known_values(num: int, den: int, expected: tuple[float, float]) -> None:
    assert r4(wilson(num, den)) == expected


def test_wilson_edges_are_exact() -> None:
    """0/n starts at exactly 0 and n/n ends at exactly 1 (no -1e-17 from rounding); 0/0 has no interval."""
    for n in (1, 2, 3, 7, 100, 10_000):
        low, high = bounds(0, n)
        assert low == 0.0 and 0 < high < 1
        low, high = bounds(n, n)
        assert high == 1.0 and 0 < low < 1
    assert wilson(0, 0) == (None, None)
    assert wilson(3, -1) == (None, None)


def test_wilson_against_the_quadratic_root() -> None:
    """The bounds are the roots of (p̂ - p)² = z² p (1 - p) / n, computed another way."""
    z = 1.959963984540054
    for num, den in [(1, 7), (3, 11), (40, 97), (333, 812), (811, 812)]:
        p = num / den
        a, b, c = 1 + z * z / den, -(2 * p + z * z / den), p * p
        d = math.sqrt(b * b - 4 * a * c)
        low, high = bounds(num, den)
        assert low == pytest.approx((-b - d) / (2 * a), abs=1e-11)
        assert high == pytest.approx((-b + d) / (2 * a), abs=1e-11)


def test_wilson_symmetric_and_contains_the_rate() -> None:
    for num, den in [(0, 5), (1, 5), (2, 5), (3, 9), (50, 51)]:
        low, high = bounds(num, den)
        mirror_low, mirror_high = bounds(den - num, den)
        assert low == pytest.approx(1 - mirror_high, abs=1e-11)
        assert high == pytest.approx(1 - mirror_low, abs=1e-11)
        assert low <= num / den <= high


def test_wilson_narrows_with_more_data() -> None:
    widths = [bounds(n // 2, n)[1] - bounds(n // 2, n)[0] for n in (10, 100, 1000)]
    assert widths[0] > widths[1] > widths[2]


def test_mean_interval() -> None:
    # 1, 2, 3: mean 2, sample variance 1, half-width 1.96/√3.
    assert r4(mean_interval(6, 14, 3)) == (2.0, 0.8684, 3.1316)
    assert mean_interval(0, 0, 0) == (None, None, None)
    assert mean_interval(5, 25, 1) == (5.0, None, None)  # one value: no spread to speak of
    assert mean_interval(12, 36, 4) == (3.0, 3.0, 3.0)  # all equal: a zero-width interval
    # Sums in float error below zero variance are clamped, not a math domain error.
    assert mean_interval(0.3, 0.03, 3) == (pytest.approx(0.1), pytest.approx(0.1), pytest.approx(0.1))


def test_mean_interval_matches_numpy() -> None:
    values = np.array([3, 0, -7, 12, 5, 5, 1, -2], dtype=float)
    mean, low, high = mean_interval(values.sum(), (values**2).sum(), len(values))
    half = 1.959963984540054 * values.std(ddof=1) / math.sqrt(len(values))
    assert mean == pytest.approx(values.mean())
    assert (low, high) == (pytest.approx(values.mean() - half), pytest.approx(values.mean() + half))


def test_bootstrap_mean() -> None:
    values = np.array([1, 1, 2, 2, 2, 4, 8, 16, 32, 1], dtype=float)
    low, high = bootstrap_mean(values, resamples=500, seed=3)
    assert low < values.mean() < high
    assert bootstrap_mean(values, resamples=500, seed=3) == (low, high)  # seeded: repeatable
    assert bootstrap_mean(np.array([4.0])) == (None, None)
    assert bootstrap_mean(np.array([])) == (None, None)


# -------------------------------------------------------------------------------- Metric.value
# ---------------------------------------------------------------------------------------------- tails and FDR
def test_normal_tail_and_its_inverse() -> None:
    assert math.isclose(normal_sf(Z95), 0.025, rel_tol=1e-12) and normal_sf(0.0) == 0.5
    assert math.isclose(normal_sf(-Z95), 0.975, rel_tol=1e-12)
    assert math.isclose(normal_isf(0.025), Z95, rel_tol=1e-12)
    for z in (-3.0, 0.5, 4.0, 8.0, 12.0):  # far into the tail, where 1 - cdf would be 0
        assert math.isclose(normal_isf(normal_sf(z)), z, rel_tol=1e-9)
    assert normal_sf(12.0) > 0


@pytest.mark.parametrize("t", [-30.0, -2.0, -0.4, 0.0, 0.25, 1.0, 2.5, 7.0, 40.0, 1e4])
def test_student_t_tail_against_the_closed_forms(t: float) -> None:
    # one and two degrees of freedom have closed forms; the tails are compared to 12 significant places
    cauchy = 0.5 - math.atan(t) / math.pi
    two = 0.5 * (1 - t / math.sqrt(t * t + 2))
    if t > 0:  # the same without 1 − x, exact far out
        cauchy = math.atan(1 / t) / math.pi
        two = 1 / (math.sqrt(t * t + 2) * (math.sqrt(t * t + 2) + t))
    assert t_sf(t, 1) == pytest.approx(cauchy, rel=1e-12)
    assert t_sf(t, 2) == pytest.approx(two, rel=1e-12)
    assert t_sf(t, 5) + t_sf(-t, 5) == pytest.approx(1.0, abs=1e-14)


def test_student_t_tail_is_heavier_with_fewer_degrees_of_freedom_and_tends_to_the_normal() -> None:
    for z in (1.0, 2.0, 3.0, 5.0):
        tails = [t_sf(z, df) for df in (1, 2, 3, 6, 10, 30, 100, 1000)]
        assert tails == sorted(tails, reverse=True) and tails[-1] > normal_sf(z)
        assert t_sf(z, 1e7) == pytest.approx(normal_sf(z), rel=1e-4)
    # known quantiles: t(0.975; 6) = 2.446912, t(0.995; 3) = 5.840909
    assert t_sf(2.446912, 6) == pytest.approx(0.025, abs=1e-7)
    assert t_sf(5.840909, 3) == pytest.approx(0.005, abs=1e-7)
    with pytest.raises(ValueError):
        t_sf(1.0, 0)


def test_benjamini_yekutieli_levels_and_q_values_agree() -> None:
    assert by_factor(1) == 1.0 and math.isclose(by_factor(4), 1 + 1 / 2 + 1 / 3 + 1 / 4)
    assert by_levels(0, 0.05) == []
    assert by_levels(3, 0.05) == pytest.approx([k * 0.05 / (3 * by_factor(3)) for k in (1, 2, 3)])
    # A test is rejected at the FDR exactly when it, or a test ranked below it, is under its level.
    rng = np.random.default_rng(7)
    for _ in range(50):
        p = rng.uniform(0, 0.05, size=int(rng.integers(1, 30))) ** rng.uniform(0.5, 2)
        q = by_qvalues(p)
        ranked = np.sort(p)
        under = [k for k, (pk, level) in enumerate(zip(ranked, by_levels(len(p), 0.05), strict=True)) if pk <= level]
        cut = ranked[max(under)] if under else -1.0
        assert ((q <= 0.05) == (p <= cut)).all()


def test_rate_value() -> None:
    m = METRIC_BY_ID["win_rate"]
    assert r4(tuple(m.value({"wins": 5, "hands": 10}).values())) == (0.5, 5, 10, 0.2366, 0.7634)
    empty = {"value": None, "num": 0, "den": 0, "ci_low": None, "ci_high": None}
    assert m.value({"wins": 0, "hands": 0}) == empty


def test_mean_value() -> None:
    m = METRIC_BY_ID["fan_per_win"]
    assert m.sq == "fan_sq"
    got = m.value({"fan_sum": 6, "fan_sq": 14, "wins": 3})
    assert (got["value"], got["sum"], got["n"]) == (2.0, 6, 3)
    assert (round(got["ci_low"], 4), round(got["ci_high"], 4)) == (0.8684, 3.1316)


def test_square_column_names() -> None:
    """Each mean reads the sum of squares of its own total."""
    assert {m.id: m.sq for m in METRICS if m.kind == "mean"} == {
        "deal_ins_per_hand": "deal_ins_sq",
        "points_lost_per_deal_in": "points_lost_sq",
        "fan_per_win": "fan_sq",
        "points_per_win": "points_sq",
        "net_points_per_hand": "delta_sq",
        "luck_adjusted_net_per_hand": "luck_net_sq",
        "pongs_per_hand": "pongs_sq",
        "direct_kongs_per_hand": "kongs_direct_sq",
        "added_kongs_per_hand": "kongs_added_sq",
        "concealed_kongs_per_hand": "kongs_concealed_sq",
        "win_turn": "win_turn_sq",
        "deal_in_turn": "deal_in_turn_sq",
        "ready_turn": "ready_turn_sq",
        "starting_shanten": "deal_shanten_sq",
    }


def test_null_base_counts_read_as_zero() -> None:
    """A SQL SUM over no rows is NULL: every metric of an all-null row is a zero count or an empty value."""
    columns = {c for m in METRICS for c in (m.num, m.den, m.sq) if c}
    got = {m.id: m.value(dict.fromkeys(columns)) for m in METRICS}
    for m in METRICS:
        if m.kind == "count":
            assert got[m.id] == {"value": 0}, m.id
        else:
            assert got[m.id]["value"] is None and got[m.id]["ci_low"] is None, m.id


@pytest.mark.parametrize("df", [1, 2, 3, 7, 30, 1000])
@pytest.mark.parametrize("p", [1e-9, 0.001, 0.025, 0.2, 0.5, 0.9])
def test_t_isf_inverts_t_sf(p: float, df: int) -> None:
    t = stats.t_isf(p, df)
    assert stats.t_sf(t, df) == pytest.approx(p, rel=1e-9, abs=1e-15)
    assert t >= stats.normal_isf(p) if p < 0.5 else t <= stats.normal_isf(p) + 1e-12  # heavier tails than Z


def test_t_isf_known_quantiles_and_bounds() -> None:
    assert stats.t_isf(0.025, 1) == pytest.approx(12.7062047, rel=1e-7)  # tan(π(0.475))
    assert stats.t_isf(0.025, 4) == pytest.approx(2.7764451, rel=1e-7)
    assert stats.t_isf(0.025, 10**6) == pytest.approx(stats.normal_isf(0.025), rel=1e-5)
    for bad in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="tail probability"):
            stats.t_isf(bad, 3)
