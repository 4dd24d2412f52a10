"""Collusion screening: pairs who play for each other, found without accusing honest players.

The complete record is visible in our logs, so every pair of players who shared at least ``min_hands``
hands is screened on what each did for the other *while both were still in the hand*
(``sql/pair_features.sql``), against how the same players treat their other opponents in the same hands:

- ``feeding``: one discards a tile the other wins on, pongs or kongs;
- ``dangerous``: one discards a tile the other could win on (taken or not) while holding another tile
  nobody could win on that was as good for their own hand — a dangerous discard by choice (forced ones are
  not evidence);
- ``soft_play``: one passes a win on the other's discard;
- ``channel``: one pays the other 查叫 or 花猪 money at the end of the wall.

Method, per signal:

1. *Residuals.* Some players deal in to everybody, some win off everybody. Each directed count ``a → x`` in
   a hand is compared with what ``a``'s giving rate and ``x``'s taking rate predict for the chances ``a``
   had (a quasi-independence model fitted over the whole population); only the residual is evidence.
2. *Permutation null.* Under "no collusion", the partner is exchangeable with ``a``'s other opponents in the
   same hand. Relabelling the partner at random among them, hand by hand, gives the null distribution of the
   pair's summed residual. Its mean and variance are exact (a sum of independent per-hand draws), and with
   hundreds of hands it is close to normal, so p-values far smaller than a Monte-Carlo run could resolve are
   still computed — needed, since the correction below asks for them.
3. *Combination.* The signals' z-scores are summed and scaled by the null correlation between them (also
   exact), one pair score ``T``; ``p = 1 − Φ(T)``.
4. *False discovery rate.* Benjamini–Yekutieli across all screened pairs (pairs share players, so their
   tests are dependent); a pair is flagged when ``q ≤ fdr``.
5. *Effect sizes.* Each signal reports its raw ratio observed / expected with a 95% Poisson interval, and an
   empirical-Bayes estimate ``ratio_shrunk``: the posterior mean under a gamma prior of mean 1 whose spread is
   estimated by the method of moments across all screened pairs (:func:`prior_variance`), so that a ratio from
   few expected events is pulled towards 1 and one from many stays near its raw value. (The prior was once
   fitted per pass, and the re-judged flagged pairs, screened one at a time, fell back to an infinitely strong
   prior: their shrunk ratios read 1.000 whatever they did.)

Sitting together more often than random matchmaking would seat them is reported (observed / expected
shared hands, Poisson p) but not scored: friends sit together and play honestly.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import numpy as np
import polars as pl

from pipeline import sql
from pipeline.analytics.stats import by_qvalues, normal_sf, poisson_interval

SIGNALS: dict[str, tuple[str, ...]] = {
    # signal → directed features summed in both directions
    "feeding": ("feed_win", "feed_call"),
    "dangerous": ("chosen_danger",),
    "soft_play": ("soft_pass",),
    "channel": ("channel",),
}
FEATURES = ("feed_win", "feed_call", "chosen_danger", "soft_pass", "channel")


@dataclass(frozen=True, slots=True)
class PairResult:
    players: tuple[str, str]
    shared_hands: int
    score: float
    p: float
    q: float
    flagged: bool
    signals: dict[str, dict[str, Any]]
    seating: dict[str, float]
    evidence: list[dict[str, Any]]
    z: float = 0.0  # the score on the empirical null (see _with_q)

    def as_dict(self) -> dict[str, Any]:
        return {
            "players": list(self.players),
            "shared_hands": self.shared_hands,
            "score": round(self.score, 4),
            "z": round(self.z, 4),
            "p": self.p,
            "q": self.q,
            "flagged": self.flagged,
            "signals": self.signals,
            "sitting_together": self.seating,
            "evidence": self.evidence,
        }


# progress(stage, done, total): stage "hands" while the pair features are read (done: about how many of the
# warehouse's hands, from DuckDB's query progress), then "pairs" (pairs screened, over every pass)
Progress = Callable[[str, int, int], None]


def pair_features(con: duckdb.DuckDBPyConnection, on_fraction: Callable[[float], None] | None = None) -> pl.DataFrame:
    """The directed features of every (hand, player, opponent) (``sql/pair_features.sql``); ``on_fraction``
    hears how far DuckDB has got through the query (0 to 1), a few times a second."""
    if on_fraction is None:
        return sql.run_sql(con, "pipeline.audit", "pair_features")
    with _query_progress(con, on_fraction):
        return sql.run_sql(con, "pipeline.audit", "pair_features")


@contextmanager
def _query_progress(con: duckdb.DuckDBPyConnection, on_fraction: Callable[[float], None]) -> Iterator[None]:
    """Poll ``con.query_progress()`` (DuckDB's own estimate, meant to be read from another thread) while the
    block runs."""
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.1):
            percent = con.query_progress()
            if percent >= 0:
                on_fraction(min(1.0, percent / 100))

    poller = threading.Thread(target=poll, name="xuezhan-query-progress", daemon=True)
    poller.start()
    try:
        yield
    finally:
        done.set()
        poller.join()
        con.execute("SET enable_progress_bar = false")


def _rates(frame: pl.DataFrame, who: str, count: str, exposure: str, name: str) -> pl.DataFrame:
    """Each player's rate over all their opponents: counts / baseline."""
    return frame.group_by(who).agg((pl.col(count).sum() / pl.col(exposure).sum()).fill_nan(0.0).alias(name))


def _residuals(df: pl.DataFrame, exclude: frozenset[tuple[str, str]] = frozenset()) -> pl.DataFrame:
    """Each directed count minus ``baseline × giving rate(a) × taking rate(x) / overall rate``: the baseline is
    what the population's rate at each point of the hand predicts for a's offers while x was in; the rates
    are each player's over all their opponents.

    The rates include the pair's own counts, which makes the test a little conservative: a pair that plays
    for each other raises both players' rates and so part of its own expectation. Leaving every pair (or
    each player's top partner) out of its own rates was tried and measured: it flags more colluders at small
    samples but breaks the false discovery rate, since the permutation null does not carry the noise of rates
    fitted without the pair. What ``exclude`` leaves out instead are the pairs a first pass flagged: a
    colluding pair inflates both players' rates towards everybody, which makes their other opponents look
    clean and the pairs *those* opponents form look guilty; refitting without the flagged pairs removes that
    (see :func:`screen_frame`).
    """
    out = df.with_columns(pl.lit(1.0).alias("one"))
    pair = pl.concat_str(
        pl.min_horizontal("player_a", "player_x"), pl.lit("\x00"), pl.max_horizontal("player_a", "player_x")
    )
    excluded = [f"{a}\x00{b}" for a, b in exclude]
    for f in FEATURES:
        exposure = f"base_{f}" if f != "channel" else "one"
        fit = out.filter(~pair.is_in(excluded)) if excluded else out
        overall = float(fit[f].sum()) / max(1e-12, float(fit[exposure].sum()))
        give = _rates(fit, "player_a", f, exposure, "give")
        take = _rates(fit, "player_x", f, exposure, "take")
        frame = out.join(give, on="player_a", how="left").join(take, on="player_x", how="left")
        rate = (
            (pl.col("give").fill_null(overall) * pl.col("take").fill_null(overall) / overall)
            if overall > 0
            else pl.lit(0.0)
        )
        out = frame.with_columns((pl.col(exposure) * rate).fill_nan(0.0).alias(f"{f}_exp")).drop("give", "take")
        out = out.with_columns((pl.col(f) - pl.col(f"{f}_exp")).alias(f"{f}_res"))
    return out.drop("one")


def _poisson_sf(observed: int, expected: float) -> float:
    """P(X >= observed) for X ~ Poisson(expected)."""
    if observed <= 0:
        return 1.0
    if expected <= 0:
        return 0.0
    # Sum the lower tail in log space, which is stable for the sizes seen here.
    log_term = -expected
    total = math.exp(log_term)
    for k in range(1, observed):
        log_term += math.log(expected) - math.log(k)
        total += math.exp(log_term)
    return max(0.0, 1.0 - total)


def screen(
    con: duckdb.DuckDBPyConnection,
    *,
    min_hands: int = 200,
    fdr: float = 0.05,
    evidence: int = 5,
    progress: Progress | None = None,
) -> list[PairResult]:
    """Screen every pair of the warehouse behind ``con`` with at least ``min_hands`` shared hands; results best
    first, with up to ``evidence`` hands to replay for each flagged pair (and the best one). ``progress``: see
    :data:`Progress`."""
    on_fraction = None
    if progress is not None:
        row = con.execute("SELECT count(*) FROM hands").fetchone()
        hands = int(row[0]) if row else 0
        progress("hands", 0, hands)

        def on_fraction(fraction: float) -> None:
            progress("hands", round(fraction * hands), hands)

    features = pair_features(con, on_fraction)
    return screen_frame(features, con, min_hands=min_hands, fdr=fdr, evidence=evidence, progress=progress)


def screen_frame(
    features: pl.DataFrame,
    con: duckdb.DuckDBPyConnection | None = None,
    *,
    min_hands: int = 200,
    fdr: float = 0.05,
    evidence: int = 5,
    progress: Progress | None = None,
) -> list[PairResult]:
    """Screen the pairs of ``features`` (:func:`pair_features`); ``progress`` hears ``("pairs", done, total)``
    pair by pair, the total growing by the second pass's pairs when the first flags any.

    A first pass flags pairs; a second refits the giving and taking rates without the flagged pairs, so that
    a colluding pair no longer sets the baseline for its players' other opponents. Each flagged pair is
    re-judged with the rates refitted without the *other* flagged pairs only (leaving a pair out of its own
    baseline would favour flagging it), and the q-values are recomputed over all pairs.
    """
    if features.is_empty():
        return []
    done, total = 0, 0

    def tick(pairs: int) -> None:  # one more pair screened, of ``pairs`` in the first pass
        nonlocal done, total
        done, total = done + 1, max(total, pairs)
        if progress is not None:
            progress("pairs", done, total)

    results = _screen_once(features, min_hands=min_hands, exclude=frozenset(), tick=tick)
    flagged = frozenset(r.players for r in _with_q(results, fdr) if r.flagged)
    if flagged:
        total = 2 * done + len(flagged)  # the second pass screens the same pairs, then each flagged one again
        refit = {r.players: r for r in _screen_once(features, min_hands=min_hands, exclude=flagged, tick=tick)}
        for pair in flagged:
            again = _screen_once(features, min_hands=min_hands, exclude=flagged - {pair}, only=pair, tick=tick)
            refit[pair] = again[0]
        results = list(refit.values())
    results = _with_q(_shrink(results), fdr)
    if con is not None and evidence:
        for r in results:
            if r.flagged or r is results[0]:
                r.evidence.extend(pair_evidence(con, r.players, limit=evidence))
    return results


EMPIRICAL_NULL_PAIRS = 20


def _with_q(results: list[PairResult], fdr: float) -> list[PairResult]:
    """The results with p-values on the empirical null, Benjamini–Yekutieli q-values and flags, best first.

    The permutation null is exact only if honest opponents are exchangeable; real play has interactions the
    rate model does not absorb (a strong player and a loose one, say), and with thousands of hands they become
    "significant". With enough pairs screened (at least 20), most of them honest, the spread of their scores
    shows it: scores are put on an empirical null (Efron) — centre the median (never below 0), scale
    1.4826 × MAD (never below 1) — so the correction can only make the screen more cautious.
    """
    if not results:
        return results
    scores = np.array([r.score for r in results])
    centre, scale = 0.0, 1.0
    if len(results) >= EMPIRICAL_NULL_PAIRS:
        centre = max(0.0, float(np.median(scores)))
        scale = max(1.0, 1.4826 * float(np.median(np.abs(scores - np.median(scores)))))
    z = (scores - centre) / scale
    pvals = np.array([normal_sf(float(v)) for v in z])
    qvals = by_qvalues(pvals)
    out = [
        replace(r, z=float(zi), p=float(pi), q=float(qi), flagged=bool(qi <= fdr))
        for r, zi, pi, qi in zip(results, z, pvals, qvals, strict=True)
    ]
    out.sort(key=lambda r: (r.p, -r.score))
    return out


def _candidates(rows: pl.DataFrame, g_cols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The null's candidates of each row (hand, a): the signal ``a`` shows towards each of its opponents in
    that hand, as an (n, C, K) array padded with NaN where a hand had fewer opponents than the widest (a
    table of three among tables of four), and the number of opponents of each row."""
    lists = [rows[f"cand_{c}"].to_list() for c in g_cols]
    opponents = np.array([len(x) for x in lists[0]], dtype=float)
    width = int(opponents.max()) if len(opponents) else 0
    if len(opponents) and (opponents == width).all():  # one table shape: no padding
        return np.stack([np.array(x, dtype=float) for x in lists], axis=-1), opponents
    out = np.full((len(opponents), width, len(g_cols)), np.nan)
    for k, column in enumerate(lists):
        for i, values in enumerate(column):
            out[i, : len(values), k] = values
    return out, opponents


def _screen_once(
    features: pl.DataFrame,
    *,
    min_hands: int,
    exclude: frozenset[tuple[str, str]],
    only: tuple[str, str] | None = None,
    tick: Callable[[int], None] | None = None,
) -> list[PairResult]:
    """Every pair's statistic and p-value under rates fitted without the ``exclude`` pairs (q set later);
    ``tick(pairs)`` after each pair, ``pairs`` being how many this pass screens."""
    res = _residuals(features, exclude)
    signal_names = list(SIGNALS)
    # Directed residual and raw counts per signal, keyed by (hand, a, x).
    sig_cols = []
    for name, feats in SIGNALS.items():
        sig_cols.append(pl.sum_horizontal([pl.col(f"{f}_res") for f in feats]).alias(f"{name}_res"))
        sig_cols.append(pl.sum_horizontal([pl.col(f) for f in feats]).alias(f"{name}_raw"))
        sig_cols.append(pl.sum_horizontal([pl.col(f"{f}_exp") for f in feats]).alias(f"{name}_exp"))
    directed = res.select("hand_id", "player_a", "player_x", *sig_cols)
    reverse = directed.rename(
        {"player_a": "player_x", "player_x": "player_a"}
        | {c: c + "_rev" for c in directed.columns if c.endswith(("_res", "_raw", "_exp"))}
    )
    sym = directed.join(reverse, on=["hand_id", "player_a", "player_x"])
    sym = sym.with_columns(
        [(pl.col(f"{s}_res") + pl.col(f"{s}_res_rev")).alias(f"g_{s}") for s in signal_names]
        + [(pl.col(f"{s}_raw") + pl.col(f"{s}_raw_rev")).alias(f"raw_{s}") for s in signal_names]
        + [(pl.col(f"{s}_exp") + pl.col(f"{s}_exp_rev")).alias(f"exp_{s}") for s in signal_names]
    ).select(
        "hand_id",
        "player_a",
        "player_x",
        *[f"g_{s}" for s in signal_names],
        *[f"raw_{s}" for s in signal_names],
        *[f"exp_{s}" for s in signal_names],
    )

    # Per (hand, a): the null moments over a's opponents (three at a table of four, two at three).
    g_cols = [f"g_{s}" for s in signal_names]
    per_hand_a = sym.group_by("hand_id", "player_a").agg(
        [pl.col(c).alias(f"cand_{c}") for c in g_cols]
        + [(pl.col(f"raw_{s}").n_unique() > 1).alias(f"varies_{s}") for s in signal_names]
    )
    hands_of = sym.group_by("player_a").agg(pl.col("hand_id").unique().alias("hands"))
    hands_count = {r["player_a"]: len(r["hands"]) for r in hands_of.iter_rows(named=True)}
    # the seats next to each player over its hands (3 a hand at four players, 2 at three): what a random
    # seating would share with the others
    opponent_slots = {r["player_a"]: r["len"] for r in sym.group_by("player_a").len().iter_rows(named=True)}
    pairs_shared = (
        sym.filter(pl.col("player_a") < pl.col("player_x"))
        .group_by("player_a", "player_x")
        .agg(pl.len().alias("shared"))
        .filter(pl.col("shared") >= min_hands)
    )
    if only is not None:
        pairs_shared = pairs_shared.filter((pl.col("player_a") == only[0]) & (pl.col("player_x") == only[1]))
    if pairs_shared.is_empty():
        return []
    sym_index = sym.join(per_hand_a, on=["hand_id", "player_a"])
    total_seat_hands = sum(hands_count.values())

    results: list[tuple[Any, ...]] = []
    wanted = pairs_shared.select("player_a", "player_x")
    by_pair = sym_index.join(wanted, on=["player_a", "player_x"]).partition_by(
        ["player_a", "player_x"], as_dict=True, maintain_order=True
    )
    for row in pairs_shared.iter_rows(named=True):
        if tick is not None:
            tick(pairs_shared.height)
        a, b, shared = row["player_a"], row["player_x"], row["shared"]
        rows = by_pair[(a, b)]
        observed = rows.select(g_cols).to_numpy()  # (n, K)
        candidates, opponents = _candidates(rows, g_cols)  # (n, C, K), padded with NaN; (n,) opponents each
        mu = np.nanmean(candidates, axis=1)
        centred = np.nan_to_num(candidates - mu[:, None, :])
        cov = np.einsum("nck,ncl->kl", centred, centred / opponents[:, None, None])
        excess = (observed - mu).sum(axis=0)
        sd = np.sqrt(np.clip(np.diag(cov), 1e-12, None))
        z = excess / sd
        # A signal is evidence only where the opponents' raw counts differ in enough hands: otherwise its
        # "variance" is rounding in the fitted expectations.
        varies = rows.select([f"varies_{s}" for s in signal_names]).sum().row(0)
        live = (np.array(varies) >= 5) & (np.diag(cov) > 1e-9)
        z = np.where(live, z, 0.0)
        if not live.any():
            continue
        corr = cov[np.ix_(live, live)] / np.outer(sd[live], sd[live])
        score = float(z[live].sum() / math.sqrt(max(corr.sum(), 1e-12)))
        p = normal_sf(score)
        raw = rows.select([f"raw_{s}" for s in signal_names]).sum().row(0)
        exp = rows.select([f"exp_{s}" for s in signal_names]).sum().row(0)
        expected_shared = opponent_slots[a] * hands_count[b] / max(1, total_seat_hands - hands_count[a])
        results.append((a, b, shared, score, p, z, raw, exp, expected_shared))

    out = []
    for a, b, shared, score, p, z, raw, exp, expected_shared in results:
        signals = {s: _signal(float(raw[k]), float(exp[k]), float(z[k])) for k, s in enumerate(signal_names)}
        seating = {
            "observed": shared,
            "expected": round(expected_shared, 2),
            "ratio": round(shared / expected_shared, 3) if expected_shared else None,
            "p": _poisson_sf(shared, expected_shared),
        }
        out.append(PairResult((a, b), shared, score, p, 1.0, False, signals, seating, []))  # type: ignore[arg-type]
    return out


def _signal(observed: float, expected: float, z: float) -> dict[str, Any]:
    """One signal of a pair: the counts, the raw ratio observed / expected with its 95% interval (Garwood's
    Poisson interval of the count over the expectation; none without an expectation) and the z-score.
    ``ratio_shrunk`` and ``prior_sd`` are set across all pairs by :func:`_shrink`."""
    ratio = low = high = None
    if expected > 0:
        lo, hi = poisson_interval(observed)
        ratio, low, high = round(observed / expected, 4), round(lo / expected, 4), round(hi / expected, 4)
    return {
        "observed": observed,
        "expected": round(expected, 3),
        "ratio": ratio,
        "ratio_low": low,
        "ratio_high": high,
        "ratio_shrunk": None,
        "prior_sd": None,
        "z": round(z, 3),
    }


PRIOR_PAIRS = 3  # pairs with an expectation needed to estimate a signal's prior


def prior_variance(observed: Sequence[float], expected: Sequence[float]) -> float | None:
    """The variance ``1/α`` of the gamma prior (mean 1) of a signal's true ratio across pairs, by the method of
    moments: a pair's ``observed / expected`` has variance ``1/α`` from the prior plus about ``1/expected``
    from chance (Poisson), so ``1/α = mean((ratio − 1)²) − mean(1/expected)``, never below 0 (no variation
    beyond chance: every ratio shrinks to 1). ``None`` with fewer than :data:`PRIOR_PAIRS` pairs that have an
    expectation.

    >>> prior_variance([100, 100, 100], [100, 100, 100])
    0.0
    >>> round(prior_variance([150, 100, 50], [100, 100, 100]), 4)  # ratios 1.5, 1, 0.5: 1/6 − 1/100
    0.1567
    """
    pairs = [(o, e) for o, e in zip(observed, expected, strict=True) if e > 0]
    if len(pairs) < PRIOR_PAIRS:
        return None
    spread = sum((o / e - 1.0) ** 2 for o, e in pairs) / len(pairs)
    chance = sum(1.0 / e for _, e in pairs) / len(pairs)
    return max(0.0, spread - chance)


def _shrink(results: list[PairResult]) -> list[PairResult]:
    """Each signal's ``ratio_shrunk``: the posterior mean ``(observed + α) / (expected + α)`` of the pair's true
    ratio under a gamma(α, α) prior whose strength ``α`` is estimated across every screened pair
    (:func:`prior_variance`), so that a ratio moves away from 1 as its evidence (its expected count) grows, and
    a population whose pairs vary no more than chance says 1. ``prior_sd`` is the prior's ``√(1/α)``. Fitted
    once over the final results of the screen, the refitted flagged pairs among them. A signal without an
    expectation says 1 (nothing could be seen); with fewer than :data:`PRIOR_PAIRS` pairs to fit the prior
    on, ``ratio_shrunk`` and ``prior_sd`` are ``None`` (the raw ratio and its interval still stand)."""
    out = [replace(r, signals={k: dict(v) for k, v in r.signals.items()}) for r in results]
    for s in SIGNALS:
        rows = [r.signals[s] for r in out if s in r.signals]
        variance = prior_variance([v["observed"] for v in rows], [v["expected"] for v in rows])
        for v in rows:
            v["prior_sd"] = None if variance is None else round(math.sqrt(variance), 4)
            if v["expected"] <= 0:  # no chance to show it: the prior's mean, whatever the prior
                v["ratio_shrunk"] = 1.0
            elif variance is None:  # too few pairs to tell how much to shrink: no estimate
                v["ratio_shrunk"] = None
            elif variance == 0.0:
                v["ratio_shrunk"] = 1.0
            else:
                alpha = 1.0 / variance
                v["ratio_shrunk"] = round((v["observed"] + alpha) / (v["expected"] + alpha), 4)
    return out


def pair_evidence(con: duckdb.DuckDBPyConnection, players: Sequence[str], *, limit: int = 5) -> list[dict[str, Any]]:
    """The strongest hands of a pair to replay: wins and calls one made on the other's tile, biggest first."""
    rows = con.execute(
        sql.load_sql("pipeline.audit", "pair_evidence"), {"a": players[0], "b": players[1], "limit": limit}
    ).fetchall()
    return [{"hand_id": h, "event": e, "why": why} for h, e, why in rows]
