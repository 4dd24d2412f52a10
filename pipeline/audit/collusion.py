"""Collusion screening: pairs who play for each other, found without accusing honest players. The screen is run
through its one entry point, :func:`pipeline.audit.screen.screen` (with the group screen of
:mod:`pipeline.audit.teams` over the same reading); this module is the pair screen's statistics.

The complete record is visible in our logs, so every pair of players who shared at least ``min_hands``
hands is screened on what each did for the other *while both were still in the hand*
(``sql/pair_features.sql``), against how the same players treat their other opponents in the same hands:

- ``feeding``: one discards a tile the other wins on, pongs or kongs;
- ``dangerous``: one discards a tile the other could win on (taken or not) while holding another tile
  nobody could win on that was as good for their own hand — a dangerous discard by choice (forced ones are
  not evidence);
- ``passed_wins``: one passes a win on the other's discard, per chance to win on it, against the passer's own
  rate of passing (:data:`GIVEN`, :data:`TAKER_ONLY`);
- ``avoidance``: deal-in avoidance, one throws tiles the other could win on (a deficit is the evidence: soft
  play never deals in to a partner);
- ``kong_feeding``: one direct-kongs the other's discard, or throws, at a cost to its own hand, the fourth tile of
  the other's concealed triplet (``kong_costly``: a tile the other could kong, taken or not);
- ``value_feeding``: one wins a hand of ``BIG_FAN`` fan or more on the other's tile;
- ``costly_feeding``: one wins on a tile the other gave up at a cost to its own hand (the discard left the giver
  further from ready than its best discard: ``events.cost``);
- ``exchange``: help before play: one's 换三张 tiles go to the other in a suit it collects, or one declares a void
  against its own hand, leaving that suit to the other (``gift``, ``split``);
- reported, not scored (:data:`DIRECTION`): ``soft_play``, one passes a win on the other's discard under the
  giver × taker model, and ``channel``, one pays the other 查叫 or 花猪 money at the end of the wall.

Method, per signal:

1. *Residuals.* Some players deal in to everybody, some win off everybody. Each directed count ``a → x`` in
   a hand is compared with what ``a``'s giving rate and ``x``'s taking rate predict for the chances ``a``
   had (a quasi-independence model fitted over the whole population); only the residual is evidence.
2. *Permutation null.* Under "no collusion", the partner is exchangeable with ``a``'s other opponents in the
   same hand. Relabelling the partner at random among them, hand by hand, gives the null distribution of the
   pair's summed residual. Its mean and variance are exact (a sum of independent per-hand draws), and with
   hundreds of hands it is close to normal, so p-values far smaller than a Monte-Carlo run could resolve are
   still computed — needed, since the correction below asks for them.
3. *Combination*. Each scored signal is tested one-sided in the direction fixed by what it means
   (:data:`DIRECTION`), on an empirical null per signal (:func:`_with_q`); the pair's p-value is the smallest
   with Šidák's correction over the signals it tested (:func:`combined`). The largest, not a sum of signed
   z-scores: a signal running the wrong way for a cheat (soft play lowers feeding; a pair that feeds and passes
   shows fewer passes between themselves than the model expects) cannot cancel another's evidence.
4. *False discovery rate.* Benjamini–Yekutieli across all screened pairs (pairs share players, so their
   tests are dependent); a pair is flagged when ``q ≤ fdr``.
5. *Effect sizes.* Each signal reports its raw ratio observed / expected with a 95% Poisson interval, and an
   empirical-Bayes estimate ``ratio_shrunk``: the posterior mean under a gamma prior of mean 1 whose spread is
   estimated by the method of moments across all screened pairs (:func:`prior_variance`), so that a ratio from
   few expected events is pulled towards 1 and one from many stays near its raw value. The prior is fitted once,
   over every pair's final result (:func:`_shrink`): a flagged pair re-judged alone gives no spread to estimate,
   and a prior fitted on it would read its shrunk ratios as 1.000 whatever it did.

Sitting together more often than random matchmaking would seat them is reported (observed / expected
shared hands, Poisson p) but not scored: friends sit together and play honestly.

Reading the warehouse: memory does not grow with the warehouse. :class:`WarehouseSource` reads it
:data:`CHUNK_HANDS` hands at a time (runs of hands in the order the files hold them, each table streamed once:
:mod:`pipeline.analytics.runs`): DuckDB returns one
run's offers and takes (``sql/pair_events.sql``, ``sql/pair_hands.sql``) and the features of
``sql/pair_features.sql`` are counted from them in memory (:func:`offers_of`, :func:`rows_of`; the tests hold
them to the SQL model). The baselines need the hazard of every hand, so the first pass keeps each run's offers in
a temporary file and sums the hazard and every pair's counts; each later pass reads the runs back and folds them
into per-pair sums (:class:`Moments`: the null's excess, covariance and counts, which are sums over hands), so no
per-pair frame is ever built. The null itself is unchanged — exact moments of the relabelling, nothing is drawn
at random — and the per-pair sums are the same sums in another order (equal to rounding). Every pass is such a
fold (:meth:`FeatureSource.fold`: each run folded into sums of its own, merged in the runs' order), which lets
``--engine spark`` run each run's counting and every pass in Spark tasks where the rows are kept, the driver
merging the runs' sums (:class:`pipeline.audit.collusion_spark.SparkSource`: the same result).

Nor does it grow with the players squared: every per-pair sum is held for the pairs that shared a hand only
(:class:`_SparseSums`, keys ``a × players + x``), and the null's moments for the pairs that may reach the
threshold (:func:`screened_pairs`; a flagged pair re-judged, for that pair alone). A club of 2,000 players
has 4 million pairs, of which a few percent ever sit at one table; dense arrays of every pair (by wall: × 256)
would take the screen of 2,000 players over 20k hands past 22 GB.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
import itertools
import json
import math
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import numpy as np
import polars as pl

from pipeline import sql
from pipeline.analytics.levels import LEVELS, NEEDS, coverage, excluded_text
from pipeline.analytics.runs import RUN_HANDS, Run, Stream, add_up, each_run
from pipeline.analytics.stats import by_qvalues, normal_isf, normal_sf, poisson_interval, skewed
from pipeline.memory import return_freed_memory

SIGNALS: dict[str, tuple[str, ...]] = {
    # signal → directed features summed in both directions
    "feeding": ("feed_win", "feed_call", "feed_sheet"),
    "dangerous": ("chosen_danger",),
    "soft_play": ("soft_pass",),
    "channel": ("channel",),
    "passed_wins": ("passed",),
    "avoidance": ("could_feed",),
    "kong_feeding": ("feed_kong", "kong_costly"),
    "value_feeding": ("feed_value",),
    "costly_feeding": ("feed_costly",),
    "exchange": ("gift", "split"),
    "costly_value": ("feed_costly_value",),
}
# The direction in which a signal is evidence of collusion, fixed by what it means (issue 37), never read from the
# data: +1 an excess (feeding, dangerous discards by choice, passed wins on the partner's tile given the passer's
# own passes), -1 a deficit (deal-in avoidance: fewer tiles the partner could win on thrown to it than to the
# thrower's other opponents in the same hands: soft play).
# A signal without a direction is reported, not scored: soft_play is passed wins under the giver × taker model,
# which a pair making most of a room's passes absorbs into its own rates (30 observed against 52 expected, z
# -5.4: passed_wins replaces it), and channel (查叫/花猪 money) runs negative when a fed partner wins before the
# wall runs out and drove the one honest false pair of the outside rooms.
# kong_feeding: direct kongs on the other's discard, apart from the pongs among which feed_call drowns them (a
# kong pays the konger at once: 刮风), and the discards of the fourth tile of the other's concealed triplet, taken
# or not, that cost the giver a step towards ready (kong_costly: events.could_kong, events.cost). The kongs alone
# are rare: a kong room at 0.5 whose members threw 160 such tiles showed 60 direct kongs between them and a
# kong_feeding z of 0.5 to 1.8 (0 of 5 rooms found); with every fourth tile thrown (kong_offer) it was found in 4
# of 10 rooms at 0.5 and 1 of 10 at 0.3, honest players throwing the fourth tile when it is of no use to them;
# of a kong pair's 228 such tiles to the partner, 88 cost the giver a step, and with those alone 10 of 10 and 9 of
# 10 (issue 37).
# costly_feeding: wins on a tile that cost its giver a step towards ready (feed_costly): a feeder gives the partner
# what it needs whatever the tile is worth to itself. Designed on the selective and kong families.
# value_feeding: wins of BIG_FAN fan or more on the other's tiles (a pair that feeds only valuable hands; the
# fan as a weight was tried first: its heavy tail flagged an honest pair, z 4.6, in a feeding room).
# costly_value: the two together, wins of BIG_FAN fan or more on a tile given up at a cost (feed_costly_value): a
# selective feeder's gifts are all valuable and most costly, while an honest background of either alone is
# several times larger (a selective pair at 0.3: 27 such wins against 6.4 expected, z 3.8, where costly_feeding
# read 40 against 21.9, z 1.4). Selective pairs at 0.3 were found in 3 of 10 rooms without it, 7 of 10 with it
# (0.5: 9 of 10 either way); counting them twice inside costly_feeding instead found 8 and 8. Designed on the
# selective family, so that family is not held out.
# exchange: help before play (换三张 and 定缺, the two choices the rules leave to a player before the first discard):
# a's exchange tiles went to x and were of a longest suit of x's deal (gift), and x's declared void is a suit a
# held fewer tiles of than the void a declared (split: a voided against its own hand, leaving that suit to x).
# Designed from the exchange family's description (so that family is not held out); measured on the simulator's
# exchange rooms before it was built in: 470 of 697 gifts between the partners fit (43.6% in the room), 98 split
# voids in 2,150 pair-hands (0.35% in the room).
DIRECTION: dict[str, int] = {
    "feeding": 1,
    "dangerous": 1,
    "passed_wins": 1,
    "avoidance": -1,
    "kong_feeding": 1,
    "value_feeding": 1,
    "costly_feeding": 1,
    "exchange": 1,
    "costly_value": 1,
}
BIG_FAN = 2  # a valuable win: at least double a plain hand (value_feeding)
FEATURES = (
    "feed_win",
    "feed_call",
    "chosen_danger",
    "soft_pass",
    "channel",
    "feed_sheet",
    "passed",
    "could_feed",
    "feed_kong",
    "feed_value",
    "gift",
    "split",
    "kong_offer",
    "feed_costly",
    "kong_costly",
    "feed_costly_value",
)
# counted once per hand and ordered pair (0/1, exposure 1 where the hand's level supports it), not per offer
PER_HAND = ("channel", "feed_sheet", "gift", "split")
_START = ("gift", "split")  # exposure 1 only where the hand's start facts are known (pair_hands.sql start)
# Which hands each feature may use is the levels table (pipeline/analytics/levels.py NEEDS): a score sheet has no
# discards, so its feeding is its wins on each other's tiles (feed_sheet) and it shows no dangerous discards or
# passed wins; an observer's record shows every discard and call but only its own seat's hand, so a passed
# win counts only when the passer is that seat. _OWN says whose hand a feature needs where only one is shown.
_OWN = {"soft_pass": "x", "passed": "x", "could_feed": "x"}  # x passed a win on a's tile, x could win: x's hand


@functools.cache
def _level_masks() -> tuple[np.ndarray, np.ndarray]:
    """Per feature and level of :data:`LEVELS`: may every row of such a hand be used (``every``), or only the
    rows whose seat named in :data:`_OWN` is the recording seat (``own``)?"""
    every = np.array([[NEEDS[f].uses(level, own=False) for level in LEVELS] for f in FEATURES])
    own = np.array([[NEEDS[f].uses(level, own=True) for level in LEVELS] for f in FEATURES])
    return every, own


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


# progress(stage, done, total): stage "hands" while the first pass reads the warehouse (hands read), then
# "pairs" (pairs screened, over every pass: the passes read the hands again, and the count moves as they do)
Progress = Callable[[str, int, int], None]

CHUNK_HANDS = 10_000  # hands read at a time: what the screen's memory grows with, not the warehouse
SEATS = 4  # seats a table has at most: (hand, seat, seat) keys are packed in base 4
DISCARD, ADDED_KONG, DIRECT_KONG, PONG, HU = range(5)  # pair_events.sql's kind


def pair_features(con: duckdb.DuckDBPyConnection, on_fraction: Callable[[float], None] | None = None) -> pl.DataFrame:
    """The directed features of every (hand, player, opponent) (``sql/pair_features.sql``), all in one frame;
    ``on_fraction`` hears how far DuckDB has got through the query (0 to 1), a few times a second. (The
    screen itself counts the same features a run of hands at a time: :class:`WarehouseSource`.)"""
    if on_fraction is None:
        return sql.run_sql(con, "pipeline.audit", "pair_features")
    with _query_progress(con, on_fraction):
        return sql.run_sql(con, "pipeline.audit", "pair_features")


@contextlib.contextmanager
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


# ---------------------------------------------------------------------------------------------- reading
def pair_streams(con: duckdb.DuckDBPyConnection) -> list[Stream]:
    """What ``sql/pair_events.sql`` and ``sql/pair_hands.sql`` read of each table, for the runs in file order
    (:func:`pipeline.analytics.runs.read_runs`): the columns they name, and of the rows only those they can
    use: the replayed offers and takes, the 查叫 and 花猪 payments, and the draws only where an observer's
    record makes them count (no draw is read from a warehouse without one: half of ``events``)."""
    observers = con.execute("SELECT count(*) FROM hands WHERE level = 'observer'").fetchall()[0][0]
    offers = "replayed AND (t IN ('discard', 'pong', 'hu') OR (t = 'kong' AND kind IN ('added', 'direct')))"
    return [
        Stream("hands", "hand_id, players, level, replayed"),
        Stream(
            "events",
            "hand_id, idx, seat, t, kind, could_win, could_kong, safe_alternative, cost, wall_left, replayed, tile",
            f"({offers}) OR (t = 'draw' AND tile IS NOT NULL)" if observers else offers,
        ),
        Stream("wins", "hand_id, event, fan, source, seat"),
        Stream("player_hands", "hand_id, seat, gift_fit, gave_to, void_over, void"),
        Stream(
            "payments",
            "hand_id, side, reason, payer, payee",
            "side = 'computed' AND reason IN ('cha_jiao', 'hua_zhu')",
        ),
    ]


def read_run(run: Run) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One run's events and hands (``sql/pair_events.sql``, ``sql/pair_hands.sql``)."""
    params = {"lo": run.lo, "hi": run.hi}
    return (
        sql.run_sql(run.con, "pipeline.audit", "pair_events", **params),
        sql.run_sql(run.con, "pipeline.audit", "pair_hands", **params),
    )


@dataclass(frozen=True, slots=True)
class Offers:
    """The offers of one run of hands (discards and added kongs), one entry each: the hand (``hno``), the
    offering seat ``a``, the tiles left in the wall, and as seat bits (seat s: ``1 << s``) who could have won on
    it, who won on it, who called it (pong, direct kong), who direct-konged it, and who was still in; the fan
    of each seat's win on it (``fan``, (offers, 4));
    ``safe``: a held a tile nobody could win on that was as good. Plus each hand's seats, players (codes, -1
    past the seats), channel payments (bit ``4 × payer + payee``), wins on another's tile (``feed``, bit
    ``4 × discarder + winner``), its level (an index into :data:`LEVELS`) and the seats whose whole hand its
    record shows (``seen``, seat bits)."""

    hno: np.ndarray
    a: np.ndarray
    wall: np.ndarray
    could: np.ndarray
    won: np.ndarray
    called: np.ndarray
    konged: np.ndarray
    fan: np.ndarray
    still_in: np.ndarray
    safe: np.ndarray
    seats: np.ndarray
    players: np.ndarray
    channel: np.ndarray
    feed: np.ndarray
    level: np.ndarray
    seen: np.ndarray
    gift: np.ndarray | None = None
    split: np.ndarray | None = None
    start: np.ndarray | None = None
    kongable: np.ndarray | None = None  # per offer, the seats holding three of its tile concealed (bits)
    costly: np.ndarray | None = None  # per offer, whether it left its discarder further from ready (events.cost > 0)


def offers_of(events: pl.DataFrame, hands: pl.DataFrame, code: dict[str, int]) -> Offers:
    """The offers of one run of hands from its events (``sql/pair_events.sql``) and hands
    (``sql/pair_hands.sql``), ``code`` numbering the players: what ``sql/pair_features.sql`` counts, offer by
    offer. x took a's offer when x won on it, ponged or direct-konged it as the next event, or after a run of
    wins on it (一炮多响): the offer is the last event before the take that is not a win."""
    order = np.lexsort((events["idx"].to_numpy(), events["hno"].to_numpy()))
    hno = events["hno"].to_numpy()[order].astype(np.int64)
    idx = events["idx"].to_numpy()[order].astype(np.int64)
    seat = events["seat"].to_numpy()[order].astype(np.int64)
    kind = events["kind"].to_numpy()[order]
    n_hands = hands.height
    span = int(idx.max()) + 2 if len(idx) else 2
    key = hno * span + idx

    # Each win's run of consecutive wins, and its first: a take answers the event before its run.
    hu = np.flatnonzero(kind == HU)
    hu_key = key[hu]
    new_run = np.r_[True, hu_key[1:] != hu_key[:-1] + 1] if len(hu) else np.zeros(0, dtype=bool)
    run_first = idx[hu][np.flatnonzero(new_run)][np.cumsum(new_run) - 1] if len(hu) else np.zeros(0, np.int64)
    takes = np.flatnonzero((kind == HU) | (kind == PONG) | (kind == DIRECT_KONG))
    before = key[takes] - 1
    at = np.minimum(np.searchsorted(hu_key, before), max(0, len(hu_key) - 1))
    after_win = (hu_key[at] == before) if len(hu_key) else np.zeros(len(takes), dtype=bool)
    target = np.where(after_win, run_first[at] if len(hu) else 0, idx[takes]) - 1
    take_key = hno[takes] * span + target
    bit = np.left_shift(1, seat[takes])
    by_key = np.argsort(take_key, kind="stable")
    sorted_keys = take_key[by_key]
    first = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) if len(takes) else np.zeros(0, np.int64)
    uniq = sorted_keys[first]
    is_hu = kind[takes][by_key] == HU
    won_by = np.bitwise_or.reduceat(np.where(is_hu, bit[by_key], 0), first) if len(first) else first
    called_by = np.bitwise_or.reduceat(np.where(is_hu, 0, bit[by_key]), first) if len(first) else first
    is_kong = kind[takes][by_key] == DIRECT_KONG
    konged_by = np.bitwise_or.reduceat(np.where(is_kong, bit[by_key], 0), first) if len(first) else first
    # the fan of each seat's win on each offer taken (a win the engine did not value: 0)
    group = np.cumsum(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) - 1 if len(takes) else np.zeros(0, np.int64)
    fan_by_key = np.zeros((len(first), SEATS))
    taken_fan = events["fan"].to_numpy()[order][takes][by_key].astype(float) if "fan" in events.columns else None
    if taken_fan is not None and len(first):
        np.add.at(fan_by_key, (group[is_hu], seat[takes][by_key][is_hu]), taken_fan[is_hu])

    # When each seat won first (it is out of the hand from then on): wins are in order within a hand.
    won_at = np.full((n_hands, SEATS), np.iinfo(np.int64).max)
    _, earliest = np.unique(hno[hu] * SEATS + seat[hu], return_index=True)
    won_at[hno[hu][earliest], seat[hu][earliest]] = idx[hu][earliest]

    offer = np.flatnonzero(((kind == DISCARD) | (kind == ADDED_KONG)) & (events["wall_left"].to_numpy()[order] >= 0))
    okey = key[offer]
    found = np.minimum(np.searchsorted(uniq, okey), max(0, len(uniq) - 1))
    hit = (uniq[found] == okey) if len(uniq) else np.zeros(len(offer), dtype=bool)
    still_in = np.zeros(len(offer), dtype=np.int64)
    for s in range(SEATS):
        still_in |= np.where(won_at[hno[offer], s] > idx[offer], 1 << s, 0)

    seats = hands["players"].list.len().cast(pl.Int64).to_numpy()
    players = np.full((n_hands, SEATS), -1, dtype=np.int64)
    flat = hands["players"].explode().replace_strict(code, return_dtype=pl.Int64).to_numpy()
    players[np.repeat(np.arange(n_hands), seats), np.arange(len(flat)) - np.repeat(np.cumsum(seats) - seats, seats)] = (
        flat
    )
    could = events["could"].to_numpy()[order][offer].astype(np.int64)
    kongable = (
        events["kongable"].to_numpy()[order][offer].astype(np.int64)
        if "kongable" in events.columns
        else np.zeros(len(offer), np.int64)
    )
    return Offers(
        hno=hno[offer],
        a=seat[offer],
        wall=events["wall_left"].to_numpy()[order][offer].astype(np.int64),
        could=could,
        won=np.where(hit, won_by[found] if len(uniq) else 0, 0),
        called=np.where(hit, called_by[found] if len(uniq) else 0, 0),
        konged=np.where(hit, konged_by[found] if len(uniq) else 0, 0),
        fan=np.where(hit[:, None], fan_by_key[found] if len(uniq) else 0.0, 0.0),
        still_in=still_in,
        safe=events["safe"].to_numpy()[order][offer].astype(bool),
        seats=seats,
        players=players,
        channel=hands["channel"].to_numpy().astype(np.int64),
        feed=hands["feed"].to_numpy().astype(np.int64),
        level=np.array([LEVELS.index(v) for v in hands["level"].to_list()], dtype=np.int64),
        seen=hands["seen"].to_numpy().astype(np.int64),
        kongable=kongable,
        costly=events["costly"].to_numpy()[order][offer].astype(bool) if "costly" in events.columns else None,
        **{
            name: hands[name].to_numpy().astype(np.int64) if name in hands.columns else np.zeros(n_hands, np.int64)
            for name in ("gift", "split", "start")
        },
    )


# per offer and opponent still in
OUTCOMES = (
    "offers",
    "won",
    "called",
    "could",
    "chosen",
    "soft",
    "passed",
    "konged",
    "valued",
    "kongable",
    "costly_won",
    "costly_kong",
    "costly_valued",
)
HAZARD_OF = {
    "feed_win": "won",
    "feed_call": "called",
    "chosen_danger": "chosen",
    "soft_pass": "soft",
    "passed": "passed",
    "could_feed": "could",
    "feed_kong": "konged",
    "feed_value": "valued",
    "kong_offer": "kongable",
    "feed_costly": "costly_won",
    "kong_costly": "costly_kong",
    "feed_costly_value": "costly_valued",
}
# Outcomes judged only on the offers where a condition holds (issue 37): their rate by wall, and so their
# baselines, are over those offers alone. ``passed``: a win passed on a tile the passer could win on (the
# chances to pass, so that a partner fed more chances is not read as passing more).
GIVEN = {"passed": "could"}
# Features whose expectation is the taker's rate alone (x's passes per chance to pass): a giver's rate of being
# passed on is made by its partner's passes, and the quasi-independence model that multiplies both rates
# absorbs a pair that makes a room's passes into its players' own rates (issue 37: 30 observed, 52 expected).
TAKER_ONLY = ("passed",)
# Features expected from the room's overall rate alone (neither player's own rate): help before play is no
# player's trait (whose exchange tiles fit whose deal, whose void a void was chosen against), and an honest
# player almost never declares a void against its own hand, so a player's own rate of doing it would be made of
# the partner's hands alone and absorb them (measured: an exchange pair at 0.5, 98 split voids against 0.35% in
# the room, read z 3.9 with both rates fitted). The permutation null (the other opponents in the same hand) is
# the test.
POOLED = ("gift", "split")
# Features whose expectation is the room's rate × the taker's relative rate of another feature, every giver at
# the room's rate: ``feed_costly`` (x won on a tile a gave up at a cost), ``kong_costly`` (x could kong it) and
# ``feed_costly_value`` (x won a valuable hand on it: x's relative rate of valuable wins on discards).
# Their own rates are made of the pair (measured: a kong pair, 42 such tiles taken against 29 expected with
# either player's own rate, z 2.1, where its 88 costly offers stood out from every other pair's); a giver's own
# rate of costly discards (weak play) is common to all its opponents in a hand, which the permutation null
# compares; a taker who wins often takes more of everything, which x's rate of wins on discards says (feed_win),
# and one often offered a fourth tile holds triplets (kong_offer).
BORROWED = {"feed_costly": "feed_win", "kong_costly": "kong_offer", "feed_costly_value": "feed_value"}


@dataclass(frozen=True, slots=True)
class Rows:
    """Pair features of some hands as arrays, ordered by hand, then seat a, then seat x: ``hand`` (a number per
    hand, increasing), ``seat_a``, ``seat_x``, ``a`` and ``x`` (player codes), ``counts`` and ``exposures``
    (shape (n, 6), the features of :data:`FEATURES` and what they are compared with: ``base_*``, or 1 for
    the per-hand ones), and the hand's ``level`` (an index into :data:`LEVELS`)."""

    hand: np.ndarray
    seat_a: np.ndarray
    seat_x: np.ndarray
    a: np.ndarray
    x: np.ndarray
    counts: np.ndarray
    exposures: np.ndarray
    level: np.ndarray

    def take(self, index: np.ndarray) -> Rows:
        return Rows(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def save(self, path: Path, **extra: np.ndarray) -> None:
        """Write the rows (and ``extra`` arrays) to ``path``: plain arrays one after another, in the order of the
        fields (a zip archive's checksums cost as much as the rows' arithmetic)."""
        _save_arrays(path, {**{f.name: getattr(self, f.name) for f in fields(self)}, **extra})

    @staticmethod
    def load(path: Path) -> tuple[Rows, dict[str, np.ndarray]]:
        """The rows :meth:`save` wrote, and its extra arrays by name."""
        data = _load_arrays(path)
        return Rows(**{f.name: data.pop(f.name) for f in fields(Rows)}), data


def _save_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with path.open("wb") as out:
        np.save(out, np.array(list(arrays), dtype=str))
        for values in arrays.values():
            np.save(out, np.asarray(values), allow_pickle=False)


def _load_arrays(path: Path) -> dict[str, np.ndarray]:
    with path.open("rb") as src:
        names = np.load(src).tolist()
        return {name: np.load(src, allow_pickle=False) for name in names}


def _expand(offers: Offers) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Every offer for every opponent x still in with a: the row key ``(hand × 4 + a) × 4 + x``, the wall and
    each outcome (True or False). Whether the hand's level lets an outcome be seen is its row's (:func:`rows_of`)."""
    x = np.arange(SEATS, dtype=np.int64)
    a = offers.a[:, None]
    seats = offers.seats[offers.hno] if len(offers.hno) else offers.hno
    still_in = offers.still_in[:, None]
    keep = (a != x) & (x < seats[:, None]) & (((still_in >> a) & (still_in >> x) & 1) == 1)
    which, opponent = np.nonzero(keep)

    def bit(of: np.ndarray) -> np.ndarray:  # whether the opponent's seat bit is set in each offer's ``of``
        return ((of[which] >> opponent) & 1).astype(bool)

    could, won, konged = bit(offers.could), bit(offers.won), bit(offers.konged)
    kongable = bit(offers.kongable if offers.kongable is not None else np.zeros_like(offers.could))
    costly = offers.costly[which] if offers.costly is not None else np.zeros(len(which), dtype=bool)
    outcome = {
        "offers": np.ones(len(which), dtype=bool),
        "won": won,
        "called": bit(offers.called),
        "konged": konged,
        "valued": offers.fan[which, opponent] >= BIG_FAN,
        "could": could,
        "chosen": could & offers.safe[which],
        "soft": could & ~won,
        "passed": could & ~won,
        "kongable": kongable,
        "costly_won": costly & won,
        "costly_kong": costly & kongable,
        "costly_valued": costly & (offers.fan[which, opponent] >= BIG_FAN),
    }
    keys = (offers.hno[which] * SEATS + offers.a[which]) * SEATS + opponent
    return keys, offers.wall[which], outcome


def tally(index: np.ndarray, outcome: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Per value of ``index`` (0 to ``n`` − 1), the outcomes where ``mask`` holds: counted when ``outcome`` is a
    bit, summed when it is a weight (``valued``: the fan of a win).

    >>> tally(np.array([0, 0, 1]), np.array([True, True, True]), np.array([True, False, True]), 2).tolist()
    [1.0, 1.0]
    >>> tally(np.array([0, 0, 1]), np.array([2.0, 3.0, 0.0]), np.array([True, True, True]), 2).tolist()
    [5.0, 0.0]
    """
    keep = mask & (outcome != 0)
    weights = None if outcome.dtype == bool else outcome[keep]
    return np.bincount(index[keep], weights=weights, minlength=n).astype(float)


def _seen(feature: str, level: np.ndarray, seen: np.ndarray, seat_a: np.ndarray, seat_x: np.ndarray) -> np.ndarray:
    """Which rows (or offers) of hands at ``level`` (indices into :data:`LEVELS`) can show ``feature``: every
    one at a level the levels table allows, and at a level allowing only the recording seat's hand, those whose
    seat named in :data:`_OWN` is one the record shows (``seen``, seat bits)."""
    every, own = _level_masks()
    k = FEATURES.index(feature)
    usable = every[k][level]
    if feature in _OWN:
        seat = seat_x if _OWN[feature] == "x" else seat_a
        usable = usable | (own[k][level] & (((seen >> seat) & 1) == 1))
    return usable


def rows_of(
    offers: Offers, hazard: np.ndarray | None
) -> tuple[Rows, np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The pair features of one run of hands (``sql/pair_features.sql``'s rows, in its order) with the baselines
    of ``hazard`` (rate of each of :data:`OUTCOMES` by wall, shape (walls, outcomes); None: zero baselines), and
    the expanded offers (each one's row, wall, outcomes, and which can be seen) the first pass sums the hazard
    from. An offer whose hand's level cannot show a feature neither counts nor expects anything for it, nor does
    one where the condition of a :data:`GIVEN` outcome does not hold."""
    n = len(offers.seats)
    a, x = np.meshgrid(np.arange(SEATS), np.arange(SEATS), indexing="ij")
    slot = (a * SEATS + x).ravel()
    valid = (
        (a != x).ravel()[None, :]
        & (a.ravel()[None, :] < offers.seats[:, None])
        & (x.ravel()[None, :] < offers.seats[:, None])
    )
    hand, which = np.nonzero(valid)
    seat_a, seat_x = slot[which] // SEATS, slot[which] % SEATS
    keys, walls, outcome = _expand(offers)
    # each expanded offer's row: its key (hand, a, x) is the row's, and the rows are in key order
    row_of_key = np.zeros(n * SEATS * SEATS, dtype=np.int64)
    row_of_key[(hand * SEATS + seat_a) * SEATS + seat_x] = np.arange(len(hand))
    offer_row = row_of_key[keys]
    del keys, row_of_key
    counts = np.zeros((len(hand), len(FEATURES)))
    exposures = np.ones((len(hand), len(FEATURES)))
    level = offers.level[hand]
    seeable: dict[str, np.ndarray] = {}  # per expanded offer: whether its row's level shows the outcome
    for k, f in enumerate(FEATURES):
        usable = _seen(f, level, offers.seen[hand], seat_a, seat_x)
        if f in PER_HAND:
            bits = _per_hand_bits(offers, f)
            if f in _START:
                usable = usable & (_per_hand_bits(offers, "start")[hand] == 1)
            counts[:, k] = ((bits[hand] >> (seat_a * SEATS + seat_x)) & 1) * usable
            exposures[:, k] = usable
            continue
        name = HAZARD_OF[f]
        seeable[name] = usable[offer_row] & outcome[GIVEN[name]] if name in GIVEN else usable[offer_row]
        counts[:, k] = tally(offer_row, outcome[name], seeable[name], len(hand))
        if hazard is None or not len(offer_row):
            exposures[:, k] = 0.0
        else:
            rate = hazard[:, OUTCOMES.index(name)]
            exposures[:, k] = np.bincount(offer_row, rate[walls] * seeable[name], minlength=len(hand))
        # a level that cannot show the feature: its rows neither count nor expect anything
        counts[:, k] *= usable
        exposures[:, k] *= usable
    rows = Rows(
        hand=hand,
        seat_a=seat_a,
        seat_x=seat_x,
        a=offers.players[hand, seat_a],
        x=offers.players[hand, seat_x],
        counts=counts,
        exposures=exposures,
        level=level,
    )
    return rows, offer_row, walls, outcome, seeable


def _per_hand_bits(offers: Offers, name: str) -> np.ndarray:
    """Per hand, the bits of a per-hand feature (``4 × a + x``), or ``start`` (0/1); zeros where not read."""
    if name == "feed_sheet":
        return offers.feed
    values = getattr(offers, name)
    return np.zeros(len(offers.seats), np.int64) if values is None else values


_HAZARD_FEATURES = tuple(f for f in FEATURES if f not in PER_HAND)  # the features whose baselines are the hazard's


def _with_baselines(rows: Rows, extra: dict[str, np.ndarray], hazard: np.ndarray) -> Rows:
    """``rows`` (counted with no hazard: :func:`rows_of`) with the baselines of ``hazard``, from the expanded
    offers' rows, walls and levels that ``extra`` keeps (the first pass's): what :func:`rows_of` with the hazard
    gives, summed in the same order."""
    exposures = rows.exposures.copy()
    offer_row, wall, usable = extra["offer_row"], extra["offer_wall"], extra["usable"]  # int32, int16: smaller files
    given = extra["given"]  # per expanded offer, whether each GIVEN outcome's condition holds
    if len(offer_row):
        for j, f in enumerate(_HAZARD_FEATURES):
            name = HAZARD_OF[f]
            rate = hazard[:, OUTCOMES.index(name)]
            chance = usable[offer_row, j]
            if name in GIVEN:
                chance = chance & given[:, list(GIVEN).index(name)]
            base = np.bincount(offer_row, rate[wall] * chance, minlength=len(rows.hand))
            exposures[:, FEATURES.index(f)] = base * usable[:, j]
    return replace(rows, exposures=exposures)


@dataclass(frozen=True, slots=True)
class PairSums:
    """What the rates are fitted on, over every hand: per ordered pair of players who sat at one table (``a`` →
    ``x``, codes into ``players``, ordered by ``a * len(players) + x``) the rows of pair features, the hands
    shared, and per feature of :data:`FEATURES` the count (``counts``, (pairs, 6)) and its exposure
    (``exposures``)."""

    players: tuple[str, ...]
    a: np.ndarray
    x: np.ndarray
    rows: np.ndarray
    hands: np.ndarray
    counts: np.ndarray
    exposures: np.ndarray

    def shared(self) -> pl.DataFrame:
        """Hands each pair shared: ``player_a < player_b``, ``shared_hands``; most first, then by ids."""
        keep = self.a < self.x
        names = np.array(self.players, dtype=object)
        return pl.DataFrame(
            {
                "player_a": pl.Series(names[self.a[keep]].tolist(), dtype=pl.String),
                "player_b": pl.Series(names[self.x[keep]].tolist(), dtype=pl.String),
                "shared_hands": pl.Series(self.hands[keep].tolist(), dtype=pl.Int64),
            }
        ).sort(["shared_hands", "player_a", "player_b"], descending=[True, False, False])


S = TypeVar("S")


class FeatureSource:
    """Where the screen reads pair features from: the sums its rates are fitted on (:class:`PairSums`), the
    number of hands, and the features themselves, a run of hands at a time (:meth:`chunks`, read again on
    every call), or folded into a pass's sums (:meth:`fold`)."""

    sums: PairSums
    hands: int

    def chunks(self) -> Iterator[Rows]:  # pragma: no cover - interface
        raise NotImplementedError

    def fold(
        self,
        zero: Callable[[], S],
        add: Callable[[S, Rows], None],
        merge: Callable[[S, S], None],
        on_share: Callable[[float], None] | None = None,
    ) -> S:
        """A pass's sums over every hand, made by ``zero`` and grown by ``add`` (sums, a run's rows), run after run
        in the runs' order; ``merge`` (total, more) adds sums made apart, where the runs are folded apart (on
        Spark: :class:`pipeline.audit.collusion_spark.SparkSource`, each run folded into zeros in a task of its
        own, the runs' sums merged on the driver in the runs' order). ``on_share`` hears the share of the hands
        folded so far.

        Every pass of the screen is such a sum, and the same floats either way: :meth:`Moments.add` and
        :meth:`pipeline.audit.teams.GroupMoments.add` only add, each of their sums at most once a run, so a run
        folded into the total adds the same number to it as the run folded into zeros and then merged (``0 + b``
        is ``b``). An ``add`` that added to one sum twice a run would agree to rounding only. ``add`` may be sent
        to other processes: it must not depend on anything but its arguments and what it closes over."""
        total = zero()
        whole, done = max(1, self.hands), 0
        for rows in self.chunks():
            add(total, rows)
            done += len(np.unique(rows.hand))
            if on_share is not None:
                on_share(min(1.0, done / whole))
        return total


_EXPOSURES = tuple(f"base_{f}" if f != "channel" else "" for f in FEATURES)  # feed_sheet: 1 where it counts


class FrameSource(FeatureSource):
    """Pair features already in memory (:func:`pair_features`, or a test's), cut into runs of ``chunk_hands``
    hands."""

    def __init__(self, features: pl.DataFrame, chunk_hands: int = CHUNK_HANDS) -> None:
        frame = features.sort("hand_id", "seat_a", "seat_x", maintain_order=True)
        players = sorted(set(frame["player_a"].to_list()) | set(frame["player_x"].to_list()))
        codes = pl.Enum(players)
        # a frame without a feature (written before it, or a test's) counts none of it and expects none
        absent = [f for f in FEATURES if f not in frame.columns]
        frame = frame.with_columns(
            [pl.lit(0.0).alias(f) for f in absent] + [pl.lit(0.0).alias(f"base_{f}") for f in absent]
        )
        counts = frame.select([pl.col(f).cast(pl.Float64) for f in FEATURES]).to_numpy()
        exposures = np.ones_like(counts)
        for k, column in enumerate(_EXPOSURES):
            if column:
                exposures[:, k] = frame[column].cast(pl.Float64).to_numpy()
        self.rows = Rows(
            hand=frame["hand_id"].rle_id().cast(pl.Int64).to_numpy(),
            seat_a=frame["seat_a"].cast(pl.Int64).to_numpy(),
            seat_x=frame["seat_x"].cast(pl.Int64).to_numpy(),
            a=frame["player_a"].cast(codes).to_physical().cast(pl.Int64).to_numpy(),
            x=frame["player_x"].cast(codes).to_physical().cast(pl.Int64).to_numpy(),
            counts=counts,
            exposures=exposures,
            level=(
                frame["level"].replace_strict(list(LEVELS), list(range(len(LEVELS)))).cast(pl.Int64).to_numpy()
                if "level" in frame.columns
                else np.zeros(frame.height, dtype=np.int64)  # a frame that does not say: full records
            ),
        )
        self.hands = int(self.rows.hand[-1]) + 1 if len(self.rows.hand) else 0
        self.chunk_hands = max(1, chunk_hands)
        self.sums = _sums_of_rows([self.rows], players)

    def chunks(self) -> Iterator[Rows]:
        bounds = np.searchsorted(self.rows.hand, np.arange(0, self.hands + self.chunk_hands, self.chunk_hands))
        for start, stop in itertools.pairwise(bounds):
            if stop > start:
                yield self.rows.take(np.arange(start, stop))


def _sums_of_rows(parts: Iterable[Rows], players: Sequence[str]) -> PairSums:
    """:class:`PairSums` of rows whose exposures are final."""
    total = _SparseSums()
    for rows in parts:
        total.add(_part_sums(rows, len(players)))
    return total.pair_sums(players)


def _part_sums(rows: Rows, p: int) -> dict[str, np.ndarray]:
    """The sums of one run's rows per ordered pair it holds (``key``: ``a * p + x``, ascending): rows, hands,
    and per feature the counts (``n0`` ...) and exposures (``e0`` ...)."""
    pair = rows.a * p + rows.x
    key, inverse = np.unique(pair, return_inverse=True)
    inverse = inverse.reshape(-1)
    hand_pair = np.unique(rows.hand * p * p + pair) % (p * p)
    n = len(key)
    return {
        "key": key,
        "rows": np.bincount(inverse, minlength=n).astype(float),
        "hands": np.bincount(np.searchsorted(key, hand_pair), minlength=n).astype(float),
        **{f"n{k}": np.bincount(inverse, rows.counts[:, k], minlength=n) for k in range(len(FEATURES))},
        **{f"e{k}": np.bincount(inverse, rows.exposures[:, k], minlength=n) for k in range(len(FEATURES))},
    }


class _SparseSums:
    """Per-pair sums added up over runs of hands, held for the pairs that shared a hand only (``key``: ``a × p +
    x``, ascending), never for every pair of players: a club of thousands of players shares hands in a small
    part of its players² pairs. Adding a run's sums gives what adding dense arrays gave, pair by pair."""

    def __init__(self) -> None:
        self.total: dict[str, np.ndarray] = {}

    def add(self, part: dict[str, np.ndarray]) -> None:
        if not self.total:
            self.total = part
            return
        key = np.union1d(self.total["key"], part["key"])
        old, new = np.searchsorted(key, self.total["key"]), np.searchsorted(key, part["key"])
        merged = {"key": key}
        for name, values in self.total.items():
            if name != "key":
                out = np.zeros(len(key))
                out[old] = values
                out[new] += part[name]
                merged[name] = out
        self.total = merged

    def pair_sums(self, players: Sequence[str]) -> PairSums:
        return _pair_sums(self.total, players)


_NONE = np.zeros((0, len(FEATURES)))


def _pair_sums(total: dict[str, np.ndarray], players: Sequence[str]) -> PairSums:
    p = len(players)
    key = total["key"] if total else np.zeros(0, dtype=np.int64)
    return PairSums(
        players=tuple(players),
        a=key // max(1, p),
        x=key % max(1, p),
        rows=total["rows"].astype(np.int64) if total else key,
        hands=total["hands"].astype(np.int64) if total else key,
        counts=np.stack([total[f"n{k}"] for k in range(len(FEATURES))], axis=1) if total else _NONE,
        exposures=np.stack([total[f"e{k}"] for k in range(len(FEATURES))], axis=1) if total else _NONE,
    )


WALLS = 256  # tiles left in the wall are below this (a wall holds at most 108 tiles)


@dataclass(frozen=True, slots=True)
class FirstRun:
    """What the first pass makes of one run of hands (:func:`first_of_run`): its rows as counted (no baselines
    yet), what their baselines are summed from once the hazard is known (``extra``: :func:`_with_baselines`),
    the run's tallies of the hazard (``hazard``: each outcome by wall; ``chances``: the offers each could be seen
    on), its pairs' sums (:func:`_part_sums`) and its replayed hands (``hands``)."""

    rows: Rows
    extra: dict[str, np.ndarray]
    hazard: np.ndarray
    chances: np.ndarray
    part: dict[str, np.ndarray]
    hands: int


def first_of_run(events: pl.DataFrame, hands: pl.DataFrame, code: dict[str, int]) -> FirstRun:
    """One run's events and hands (:func:`read_run`) counted: its rows (:func:`rows_of`, no hazard yet), the
    hazard's tallies and its pairs' sums, the same wherever the run is counted (here, or in a Spark task:
    :mod:`pipeline.audit.collusion_spark`). Every tally and sum is a count (integers in floats: exact in any
    order); the exposures of the hazard's features are 0 until the hazard is known."""
    offers = offers_of(events, hands, code)
    rows, offer_row, walls, outcome, seeable = rows_of(offers, None)
    hazard = np.zeros((WALLS, len(OUTCOMES)))
    chances = np.zeros((WALLS, len(OUTCOMES)))  # the offers each outcome could be seen on, by wall
    every = np.bincount(walls, minlength=WALLS)[:WALLS]
    for j, name in enumerate(OUTCOMES):
        can = seeable.get(name)  # None: "offers" and "could" feed no feature, every offer counts
        mask = np.ones(len(walls), dtype=bool) if can is None else can
        hazard[:, j] = every if name == "offers" else tally(walls, outcome[name], mask, WALLS)[:WALLS]
        chances[:, j] = every if can is None else np.bincount(walls[can], minlength=WALLS)[:WALLS]
    # what the rows' baselines are summed from once the hazard is known: each expanded offer's row and wall, and
    # whether each row's level shows each hazard feature (an offer's is its row's); int32, int16: smaller files
    extra: dict[str, np.ndarray] = {
        "offer_row": offer_row.astype(np.int32),
        "offer_wall": walls.astype(np.int16),
        "usable": np.stack(
            [_seen(f, rows.level, offers.seen[rows.hand], rows.seat_a, rows.seat_x) for f in _HAZARD_FEATURES], axis=1
        ),
        "given": np.stack([outcome[GIVEN[name]] for name in GIVEN], axis=1).reshape(-1, len(GIVEN)),
    }
    return FirstRun(rows, extra, hazard, chances, _part_sums(rows, len(code)), hands.height)


def hazard_rates(hazard: np.ndarray, chances: np.ndarray) -> np.ndarray:
    """The population's hazard: each outcome's rate per offer it could be seen on (every offer, where every level
    shows it), by wall; 0 where no offer could show it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = hazard / chances
    rate[~np.isfinite(rate)] = 0.0
    return rate


def exposure_part(rows: Rows, pairs: np.ndarray, players: int) -> tuple[np.ndarray, np.ndarray]:
    """A run's rows (with their baselines) summed per pair of ``pairs`` (keys ``a × players + x``, ascending): the
    positions in ``pairs`` of the run's pairs and, per position, the exposures of each hazard feature
    (:data:`_HAZARD_FEATURES`), each summed in the rows' order. Added at those positions run after run, in the
    runs' order, they make the pairs' exposures."""
    at = np.searchsorted(pairs, rows.a * players + rows.x)
    used = np.unique(at)
    sums = np.stack(
        [np.bincount(at, rows.exposures[:, FEATURES.index(f)], minlength=len(pairs))[used] for f in _HAZARD_FEATURES],
        axis=1,
    ).reshape(len(used), len(_HAZARD_FEATURES))
    return used, sums


def add_exposures(total: _SparseSums, used: np.ndarray, sums: np.ndarray) -> None:
    """One run's :func:`exposure_part` added to the pairs' sums ``total`` (whose keys its positions are of)."""
    for j, f in enumerate(_HAZARD_FEATURES):
        total.total[f"e{FEATURES.index(f)}"][used] += sums[:, j]


def replayed_players(con: duckdb.DuckDBPyConnection) -> tuple[int, list[str]]:
    """The replayed hands of ``con`` and their players, sorted: a player's code is its place here, the same on
    every path that counts the runs (:class:`WarehouseSource`, Spark's
    :class:`pipeline.audit.collusion_spark.SparkSource`), so that their rows and sums are keyed alike."""
    hands = int(con.execute("SELECT count(*) FROM hands WHERE replayed").fetchall()[0][0])
    names = con.execute("SELECT DISTINCT unnest(players) AS p FROM hands WHERE replayed ORDER BY p").fetchall()
    return hands, [n for (n,) in names]


class _FirstPass:
    """The first pass of :class:`WarehouseSource` over the runs :func:`pipeline.analytics.runs.each_run` gives:
    each run's rows counted (:func:`first_of_run`) and kept in a file of ``folder``, the hazard's tallies and
    every pair's counts summed. :meth:`read` starts from nothing each time (the runs may be given again, by
    ranges)."""

    def __init__(
        self, folder: Path, code: dict[str, int], on_hands: Callable[[int, int], None] | None, hands: int
    ) -> None:
        self.folder, self.code, self.on_hands, self.hands_total = folder, code, on_hands, hands
        self.files: list[Path] = []
        self.hazard = self.chances = np.zeros((WALLS, len(OUTCOMES)))
        self.total = _SparseSums()

    def read(self, runs: Iterator[tuple[Run, tuple[pl.DataFrame, pl.DataFrame]]]) -> None:
        for path in self.folder.glob("run-*.npy"):
            path.unlink()
        self.files = []
        hazard = np.zeros((WALLS, len(OUTCOMES)))
        chances = np.zeros((WALLS, len(OUTCOMES)))
        total = _SparseSums()
        done = 0
        if self.on_hands is not None:
            self.on_hands(0, self.hands_total)
        for k, (_, (events, hands)) in enumerate(runs):
            run = first_of_run(events, hands, self.code)
            del events, hands
            done += run.hands  # the run's replayed hands (pair_hands.sql's rows)
            path = self.folder / f"run-{k:06d}.npy"
            self.files.append(path)
            run.rows.save(path, **run.extra)
            hazard += run.hazard
            chances += run.chances
            total.add(run.part)  # the hazard features' exposures are 0 until the hazard is known
            del run
            if self.on_hands is not None:
                self.on_hands(done, self.hands_total)
        self.hazard, self.chances, self.total = hazard, chances, total


class WarehouseSource(FeatureSource):
    """The pair features of the warehouse behind ``con``, ``chunk_hands`` hands at a time (the runs of
    :func:`pipeline.analytics.runs.each_run`, every table read once in file order): DuckDB reads one run of
    hands' events and hands (``sql/pair_events.sql``, ``sql/pair_hands.sql``), the
    offers are counted in memory (:func:`offers_of`, :func:`rows_of`: the counts of ``sql/pair_features.sql``)
    and folded into sums before the next run is read, so that memory stays that of one run whatever the size
    of the warehouse.

    The baselines need the population's hazard (the rate of each outcome per offer by tiles left in the wall)
    of every hand, so the first pass (here, ``on_hands(done, total)`` after each run) counts each run's rows
    (:func:`rows_of`) and keeps them in a file of a temporary folder (``workdir``) with each expanded offer's row
    and wall, and sums the hazard and each pair's counts. Once the hazard is known, each run's rows get their
    baselines from those offers (:func:`_with_baselines`) and are kept in their place, and each pair's exposures
    are the sums of its rows'; :meth:`chunks` reads the rows back, one run at a time, on every pass.
    :meth:`close` removes the folder."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        chunk_hands: int = CHUNK_HANDS,
        on_hands: Callable[[int, int], None] | None = None,
        workdir: str | None = None,
    ) -> None:
        return_freed_memory()
        self.hands, players = replayed_players(con)
        self._dir = tempfile.TemporaryDirectory(prefix="xuezhan-collusion-", dir=workdir)
        first = _FirstPass(Path(self._dir.name), {name: k for k, name in enumerate(players)}, on_hands, self.hands)
        each_run(con, pair_streams(con), read_run, first.read, size=chunk_hands, replayed=True)
        self.files, total = first.files, first.total
        self.runs = len(self.files)  # runs read (each kept in a file)
        self.hazard = rate = hazard_rates(first.hazard, first.chances)
        # every later pass reads the same rows: each run's, counted once in the first pass, get their baselines
        # now that the hazard is known (the sums rows_of makes with the hazard, in the same order), and each
        # pair's exposures are the sums of its rows' (counted once here, not again by every pass)
        for path in self.files:
            rows, extra = Rows.load(path)
            rows = _with_baselines(rows, extra, rate)
            rows.save(path)
            if len(rows.hand):
                add_exposures(total, *exposure_part(rows, total.total["key"], len(players)))
        self.sums = total.pair_sums(players)

    def chunks(self) -> Iterator[Rows]:
        for path in self.files:
            rows, _ = Rows.load(path)
            if len(rows.hand):
                yield rows

    def close(self) -> None:
        self._dir.cleanup()

    def __enter__(self) -> WarehouseSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def chunked_features(source: WarehouseSource) -> pl.DataFrame:
    """The pair features of ``source`` as one frame in ``sql/pair_features.sql``'s columns but ``hand_id`` (the
    hand's number over the runs instead): for tests against the one-shot model."""
    frames, offset = [], 0
    for rows in source.chunks():
        data: dict[str, Any] = {
            "hand": rows.hand + offset,
            "player_a": np.array(source.sums.players, dtype=object)[rows.a].tolist(),
            "player_x": np.array(source.sums.players, dtype=object)[rows.x].tolist(),
            "seat_a": rows.seat_a,
            "seat_x": rows.seat_x,
        }
        for k, f in enumerate(FEATURES):
            data[f] = rows.counts[:, k].astype(np.int64)
            if _EXPOSURES[k]:
                data[_EXPOSURES[k]] = rows.exposures[:, k]
        frames.append(pl.DataFrame(data))
        offset += int(rows.hand.max()) + 1
    return pl.concat(frames) if frames else pl.DataFrame()


# ---------------------------------------------------------------------------------------------- the null
@dataclass(frozen=True, slots=True)
class Fit:
    """Giving and taking rates of every player per feature, fitted without the pairs ``exclude``: the expected
    count of a row is its exposure × ``give[a] × take[x] / overall``."""

    give: np.ndarray  # (5, players)
    take: np.ndarray  # (5, players)
    overall: np.ndarray  # (5,)


def fit_rates(sums: PairSums, exclude: frozenset[tuple[str, str]] = frozenset()) -> Fit:
    """Each player's rate over all their opponents, counts / exposure, leaving out the rows of the pairs
    ``exclude`` (in either direction); a player with no rows left takes the overall rate.

    The rates include the pair's own counts, which makes the test a little conservative: a pair that plays
    for each other raises both players' rates and so part of its own expectation. Leaving every pair (or
    each player's top partner) out of its own rates was tried and measured: it flags more colluders at small
    samples but breaks the false discovery rate, since the permutation null does not carry the noise of rates
    fitted without the pair. What ``exclude`` leaves out instead are the pairs a first pass flagged: a
    colluding pair inflates both players' rates towards everybody, which makes their other opponents look
    clean and the pairs *those* opponents form look guilty; refitting without the flagged pairs removes that
    (see :func:`_screen_pairs`).

    A feature of :data:`TAKER_ONLY` is expected from the taker's rate alone (every giver's rate is the overall),
    one of :data:`POOLED` from the overall rate alone.
    """
    p = len(sums.players)
    code = {name: k for k, name in enumerate(sums.players)}
    keep = np.ones(len(sums.a), dtype=bool)
    for pair in exclude:
        if pair[0] in code and pair[1] in code:
            i, j = code[pair[0]], code[pair[1]]
            keep &= ~(((sums.a == i) & (sums.x == j)) | ((sums.a == j) & (sums.x == i)))
    a, x = sums.a[keep], sums.x[keep]
    giving_rows = np.bincount(a, minlength=p) > 0
    taking_rows = np.bincount(x, minlength=p) > 0
    give, take, overall = np.zeros((len(FEATURES), p)), np.zeros((len(FEATURES), p)), np.zeros(len(FEATURES))
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(len(FEATURES)):
            counts, exposures = sums.counts[keep, k], sums.exposures[keep, k]
            overall[k] = float(counts.sum()) / max(1e-12, float(exposures.sum()))
            for out, who, present in ((give, a, giving_rows), (take, x, taking_rows)):
                rate = np.bincount(who, counts, minlength=p) / np.bincount(who, exposures, minlength=p)
                rate[np.isnan(rate)] = 0.0
                out[k] = np.where(present, rate, overall[k])
    for f in TAKER_ONLY:  # the taker's rate alone: every giver at the overall rate
        give[FEATURES.index(f)] = overall[FEATURES.index(f)]
    for f, of in BORROWED.items():  # the room's rate × the taker's relative rate of another feature
        k, j = FEATURES.index(f), FEATURES.index(of)
        give[k] = overall[k]
        take[k] = take[j] / overall[j] * overall[k] if overall[j] > 0 else overall[k]
    for f in POOLED:  # the room's rate alone
        give[FEATURES.index(f)] = take[FEATURES.index(f)] = overall[FEATURES.index(f)]
    return Fit(give, take, overall)


K = len(SIGNALS)
_SIGNAL_FEATURES = [[FEATURES.index(f) for f in feats] for feats in SIGNALS.values()]


@dataclass(slots=True)
class Moments:
    """The null of the pairs ``pairs`` (keys ``a × players + x``, ``a`` < ``x``, ascending), summed over hands:
    per pair the shared rows, the excess of the observed signals over the null means (``excess``, (pairs, K)),
    the null covariance (``cov``, (pairs, K, K)), the hands where the opponents' raw counts differ
    (``varies``), the raw counts and their expectations (``raw``, ``expected``); per player the hands played
    and the seats next to them (``hands``, ``slots``); and per pair the shared hands by level of record
    (``by_level``, (pairs, levels)). Rows of other pairs add to the players' figures only: memory follows the
    pairs screened (:func:`screened_pairs`), not players².

    >>> Moments.zeros(np.array([1, 5, 7]), 1_000_000).cov.shape
    (3, 11, 11)
    """

    pairs: np.ndarray
    shared: np.ndarray
    excess: np.ndarray
    cov: np.ndarray
    varies: np.ndarray
    raw: np.ndarray
    expected: np.ndarray
    hands: np.ndarray
    slots: np.ndarray
    by_level: np.ndarray
    third: np.ndarray  # per pair and signal, the null's third cumulant (its skew: :func:`skewed`)

    @staticmethod
    def zeros(pairs: np.ndarray, players: int) -> Moments:
        q = len(pairs)
        return Moments(
            np.asarray(pairs, dtype=np.int64),
            np.zeros(q),
            np.zeros((q, K)),
            np.zeros((q, K, K)),
            np.zeros((q, K)),
            np.zeros((q, K)),
            np.zeros((q, K)),
            np.zeros(players),
            np.zeros(players),
            np.zeros((q, len(LEVELS))),
            np.zeros((q, K)),
        )

    def merge(self, other: Moments) -> None:
        """Add ``other``'s sums (the same pairs', over other hands) to these."""
        for name in ("shared", "excess", "cov", "varies", "raw", "expected", "hands", "slots", "by_level", "third"):
            values = getattr(self, name)
            values += getattr(other, name)

    def add(self, rows: Rows, fit: Fit, players: int) -> None:
        """Fold in the hands of ``rows``, their residuals under ``fit``.

        Per hand and player a, the null relabels which of a's opponents is the partner: each opponent's
        symmetrised residual is one equally likely draw, so the null mean is their mean and the variance their
        variance (over the opponents, not the opponents less one: the draw is one of them). A pair (a, b)
        collects, over the hands they shared, b's residual less that mean and the variance of a's draws.

        Each sum is added to once a call, never twice: a run folded into zeros and merged adds the floats it adds
        here (:meth:`FeatureSource.fold`, which Spark's tasks rely on)."""
        if not len(rows.hand):
            return
        rows = _with_reverse(rows)
        if not len(rows.hand):
            return
        rev = _reverse(rows)
        expected = expected_counts(rows, fit)
        residual = rows.counts - expected
        res = np.stack([residual[:, idx].sum(axis=1) for idx in _SIGNAL_FEATURES], axis=1)
        raw = np.stack([rows.counts[:, idx].sum(axis=1) for idx in _SIGNAL_FEATURES], axis=1)
        exp = np.stack([expected[:, idx].sum(axis=1) for idx in _SIGNAL_FEATURES], axis=1)
        g, raw, exp = res + res[rev], raw + raw[rev], exp + exp[rev]

        group = rows.hand * SEATS + rows.seat_a  # (hand, a): rows are ordered by it
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        size = np.diff(np.r_[starts, len(group)]).astype(float)
        which = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(group)]))
        mean = np.add.reduceat(g, starts, axis=0) / size[:, None]
        centred = g - mean[which]
        var = np.add.reduceat(centred[:, :, None] * centred[:, None, :], starts, axis=0) / size[:, None, None]
        cube = np.add.reduceat(centred**3, starts, axis=0) / size[:, None]  # the draw's third central moment
        varies = np.maximum.reduceat(raw, starts, axis=0) != np.minimum.reduceat(raw, starts, axis=0)

        mine = rows.a < rows.x
        key = (rows.a * players + rows.x)[mine]
        q = len(self.pairs)
        at = np.minimum(np.searchsorted(self.pairs, key), max(0, q - 1))
        ours = (self.pairs[at] == key) if q else np.zeros(len(key), dtype=bool)
        mine[mine] = ours  # the rows of the pairs screened
        pair = at[ours]
        self.shared += np.bincount(pair, minlength=q)
        for j in range(len(LEVELS)):
            self.by_level[:, j] += np.bincount(pair, rows.level[mine] == j, minlength=q)
        for k in range(K):
            self.excess[:, k] += np.bincount(pair, centred[mine, k], minlength=q)
            self.varies[:, k] += np.bincount(pair, varies[which[mine], k], minlength=q)
            self.raw[:, k] += np.bincount(pair, raw[mine, k], minlength=q)
            self.expected[:, k] += np.bincount(pair, exp[mine, k], minlength=q)
            self.third[:, k] += np.bincount(pair, cube[which[mine], k], minlength=q)
            for m in range(K):
                self.cov[:, k, m] += np.bincount(pair, var[which[mine], k, m], minlength=q)
        first = rows.hand[starts] * players + rows.a[starts]
        self.hands += np.bincount(np.unique(first) % players, minlength=players)
        self.slots += np.bincount(rows.a, minlength=players)


def expected_counts(rows: Rows, fit: Fit) -> np.ndarray:
    """What ``fit`` expects of each row and feature: its exposure × ``give[a] × take[x] / overall``."""
    with np.errstate(invalid="ignore"):
        rate = fit.give[:, rows.a].T * fit.take[:, rows.x].T
        rate = np.where(fit.overall > 0, rate / np.where(fit.overall > 0, fit.overall, 1.0), 0.0)
        expected = rows.exposures * rate
    expected[np.isnan(expected)] = 0.0
    return np.asarray(expected)


def by_signal(values: np.ndarray) -> np.ndarray:
    """Per row, the features of each signal of :data:`SIGNALS` summed: shape (rows, K)."""
    return np.stack([values[:, idx].sum(axis=1) for idx in _SIGNAL_FEATURES], axis=1)


def _keys(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    key = (rows.hand * SEATS + rows.seat_a) * SEATS + rows.seat_x
    back = (rows.hand * SEATS + rows.seat_x) * SEATS + rows.seat_a
    return key, back


def _with_reverse(rows: Rows) -> Rows:
    """The rows whose reverse (hand, x → a) is there too: a pair is judged on both directions."""
    key, back = _keys(rows)
    at = np.minimum(np.searchsorted(key, back), len(key) - 1)
    found = key[at] == back
    return rows if found.all() else rows.take(np.flatnonzero(found))


def _reverse(rows: Rows) -> np.ndarray:
    key, back = _keys(rows)
    return np.searchsorted(key, back)


# ---------------------------------------------------------------------------------------------- the screen
def _screen_pairs(
    source: FeatureSource,
    con: duckdb.DuckDBPyConnection | None = None,
    *,
    min_hands: int = 200,
    fdr: float = 0.05,
    evidence: int = 5,
    progress: Progress | None = None,
) -> list[PairResult]:
    """Screen the pairs of ``source``; ``progress`` hears ``("pairs", done, total)`` as the passes read the
    hands, the total growing by the second pass's pairs when the first flags any.

    A first pass flags pairs; a second refits the giving and taking rates without the flagged pairs, so that
    a colluding pair no longer sets the baseline for its players' other opponents, and leaves each flagged
    pair's members out of each other's opponents (:func:`_without`). Each flagged pair is re-judged with the
    rates refitted without the *other* flagged pairs only (leaving a pair out of its own baseline would favour
    flagging it), and those pairs' members out of each other's opponents, and the q-values are recomputed over
    all pairs. The second pass and the re-judgements read the hands once, together.
    """
    sums = source.sums
    players = len(sums.players)
    if not players:
        return []
    screened = int(((sums.a < sums.x) & (sums.rows >= min_hands)).sum())  # about: rows = hands shared
    state = {"done": 0, "total": screened}

    def moved(part: float, base: int, width: int) -> None:
        if progress is not None:
            progress("pairs", min(state["total"], base + round(part * width)), state["total"])

    pairs = screened_pairs(sums, min_hands)
    fit = fit_rates(sums)
    first = source.fold(
        lambda: Moments.zeros(pairs, players),
        lambda moments, rows: moments.add(rows, fit, players),
        Moments.merge,
        lambda part: moved(part, 0, screened),
    )
    results = _results(first, first, sums.players, min_hands)
    flagged = frozenset(r.players for r in _with_q(results, fdr) if r.flagged)
    if flagged:
        state["total"] = 2 * screened + len(flagged)
        code = {name: k for k, name in enumerate(sums.players)}
        # each flagged pair re-judged keeps its own row only
        keys = {pair: code[pair[0]] * players + code[pair[1]] for pair in flagged}
        refit = fit_rates(sums, flagged)
        suspected = np.sort([min(code[a], code[b]) * players + max(code[a], code[b]) for a, b in flagged])
        fits = {pair: fit_rates(sums, flagged - {pair}) for pair in flagged}

        def zero() -> tuple[Moments, dict[tuple[str, str], Moments]]:
            return Moments.zeros(pairs, players), {
                pair: Moments.zeros(np.array([keys[pair]]), players) for pair in flagged
            }

        def add(part: tuple[Moments, dict[tuple[str, str], Moments]], rows: Rows) -> None:
            second, again = part
            second.add(_without(rows, suspected, players), refit, players)
            for pair, moments in again.items():
                hands = _hands_of(rows, code[pair[0]], code[pair[1]])
                moments.add(_without(hands, suspected[suspected != keys[pair]], players), fits[pair], players)

        def merge(
            total: tuple[Moments, dict[tuple[str, str], Moments]], part: tuple[Moments, dict[tuple[str, str], Moments]]
        ) -> None:
            total[0].merge(part[0])
            for pair, moments in total[1].items():
                moments.merge(part[1][pair])

        second, again = source.fold(zero, add, merge, lambda part: moved(part, screened, screened + len(flagged)))
        by_pair = {r.players: r for r in _results(second, first, sums.players, min_hands, explained=flagged)}
        for pair, moments in again.items():
            judged = _results(moments, first, sums.players, min_hands, only=pair, explained=flagged - {pair})
            if judged:
                by_pair[pair] = judged[0]
            else:
                by_pair.pop(pair, None)
        results = list(by_pair.values())
    if progress is not None:
        progress("pairs", state["total"], state["total"])
    results = _with_q(_shrink(results), fdr)
    if con is not None and evidence:  # a result is built whole: the evidence is in the value made for it
        wanted = [(r.players[0], r.players[1]) for k, r in enumerate(results) if r.flagged or k == 0]
        found = pairs_evidence(con, wanted, limit=evidence)
        results = [
            replace(r, evidence=found[(r.players[0], r.players[1])]) if r.flagged or k == 0 else r
            for k, r in enumerate(results)
        ]
    return results


def screened_pairs(sums: PairSums, min_hands: int) -> np.ndarray:
    """The keys ``a × players + x`` (``a`` < ``x``, ascending) of the pairs that may reach ``min_hands`` shared
    hands: those with as many rows (a pair's rows are its hands together), the only ones the screen judges."""
    keep = (sums.a < sums.x) & (sums.rows >= max(1, min_hands))
    return sums.a[keep] * len(sums.players) + sums.x[keep]


def _without(rows: Rows, pairs: np.ndarray, players: int) -> Rows:
    """``rows`` less those between the players of ``pairs`` (keys ``a × players + x``, ``a`` < ``x``, sorted), in
    either direction: a flagged partner is left out of its partner's opponents, so that the relabelling of the
    other pairs is over the opponents it is not known to play for (:mod:`pipeline.audit.teams` does the same).
    Without it a feeding pair makes every other opponent of its members look shunned: their deal-in avoidance
    reads as soft play (issue 37)."""
    if not len(pairs) or not len(rows.hand):
        return rows
    key = np.minimum(rows.a, rows.x) * players + np.maximum(rows.a, rows.x)
    at = np.minimum(np.searchsorted(pairs, key), len(pairs) - 1)
    out = pairs[at] == key
    return rows if not out.any() else rows.take(np.flatnonzero(~out))


def _hands_of(rows: Rows, a: int, b: int) -> Rows:
    """The rows of the hands where players ``a`` and ``b`` sat together."""
    hands = np.unique(rows.hand[(rows.a == a) & (rows.x == b)])
    return rows.take(np.flatnonzero(np.isin(rows.hand, hands)))


_SIGN = np.array([DIRECTION.get(s, 0) for s in SIGNALS], dtype=float)
_SCORED = _SIGN != 0


def combined(evidence: np.ndarray) -> tuple[float, float]:
    """``(score, p)`` of a pair from its tested signals' z-scores turned to their direction (``evidence``: each
    signal's z times its :data:`DIRECTION`, large when it points at collusion): the score is the largest, its
    p-value Šidák's over the ``m`` signals, ``1 − (1 − Φ̄(max))^m``. A max-type statistic, so that a signal that
    runs the wrong way for some cheat (soft play lowers feeding; a pair that feeds makes fewer passes between
    themselves than the model expects) does not subtract from another's evidence, as the sum of signed
    z-scores did (issue 37). Šidák is exact for independent signals and conservative for positively correlated
    ones.

    >>> combined(np.array([3.0, -6.0]))[0]
    3.0
    >>> round(combined(np.array([3.0, -6.0]))[1], 6) == round(1 - (1 - 0.0013498980316301035) ** 2, 6)
    True
    """
    best = float(np.max(evidence))
    return best, sidak(normal_sf(best), len(evidence))


def sidak(p: float, m: int) -> float:
    """The smallest of ``m`` p-values ``p``, corrected: ``1 − (1 − p)^m``, exact for tiny ``p``.

    >>> sidak(0.05, 1), round(sidak(0.05, 2), 4), sidak(1e-20, 4)
    (0.05, 0.0975, 4e-20)
    """
    return float(-math.expm1(m * math.log1p(-min(p, 1.0)))) if p < 1.0 else 1.0


def _results(
    moments: Moments,
    seating: Moments,
    players: Sequence[str],
    min_hands: int,
    only: tuple[str, str] | None = None,
    explained: frozenset[tuple[str, str]] = frozenset(),
) -> list[PairResult]:
    """Every pair's statistic and p-value from its null moments (q set later), pairs by ids; the seats and
    hands of ``seating`` (the first pass, which read every hand) for sitting together.

    ``explained``: the pairs a first pass flagged. A player of one of them who plays for a partner also plays
    *against* the others (a team walls off its victims: it deals in to them less), so a deficit between such a
    player and somebody outside its flagged pairs is explained by the collusion found, not evidence of another:
    those pairs are tested on the signals of excess only (measured: a team member and an outsider flagged on
    deal-in avoidance, z -3.4, in one of five team rooms at intensity 0.5). A flagged pair re-judged (``only``)
    is given the *other* flagged pairs: tested on excess only when just one of its players is in them (a member
    and an outsider, flagged in the first pass on the deficit the team's walling-off makes: z -4.0, one of 20 team
    rooms), on every signal when both are (a team's own pairs) or neither."""
    n = len(players)
    members = {p for pair in explained for p in pair}
    total_seat_hands = float(seating.hands.sum())
    out = []
    signal_names = list(SIGNALS)
    for pair in np.flatnonzero(moments.shared >= max(1, min_hands)):
        a, b = divmod(int(moments.pairs[pair]), n)
        if only is not None and (players[a], players[b]) != only:
            continue
        shared = int(moments.shared[pair])
        cov = moments.cov[pair]
        excess = moments.excess[pair]
        sd = np.sqrt(np.clip(np.diag(cov), 1e-12, None))
        z = excess / sd
        # A signal is evidence only where the opponents' raw counts differ in enough hands: otherwise its
        # "variance" is rounding in the fitted expectations.
        live = (moments.varies[pair] >= 5) & (np.diag(cov) > 1e-9)
        z = np.where(live, _skew_corrected(z, moments.third[pair] / sd**3), 0.0)
        tested = live & _SCORED
        pair_names = (players[a], players[b])
        inside = members & set(pair_names)
        if pair_names not in explained and (len(inside) == 1 if only is not None else inside):
            tested &= _SIGN > 0
        if not tested.any():
            continue
        score, p = combined(z[tested] * _SIGN[tested])
        raw, exp = moments.raw[pair], moments.expected[pair]
        expected_shared = seating.slots[a] * seating.hands[b] / max(1.0, total_seat_hands - seating.hands[a])
        signals = {
            s: _signal(float(raw[k]), float(exp[k]), float(z[k]), DIRECTION.get(s, 0), bool(tested[k]))
            for k, s in enumerate(signal_names)
        }
        shared_by_level = {(level, True): int(moments.by_level[pair, j]) for j, level in enumerate(LEVELS)}
        for s in signal_names:
            signals[s] |= signal_coverage(s, shared_by_level)
        seat: dict[str, Any] = {
            "observed": shared,
            "expected": round(float(expected_shared), 2),
            "ratio": round(shared / float(expected_shared), 3) if expected_shared else None,
            "p": _poisson_sf(shared, float(expected_shared)),
        }
        out.append(PairResult((players[a], players[b]), shared, score, p, 1.0, False, signals, seat, []))
    return out


def _skew_corrected(z: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Each scored signal's ``z`` read on its null's skew (``gamma``: the third cumulant over sd³), in the direction
    it is evidence: :func:`~pipeline.analytics.stats.skewed`, and never more evidence than the normal reading.
    A signal of rare events (a few costly feeds in 200 shared hands) has a null skewed to the right: read as
    normal, 10 such feeds against 4.2 expected in an honest pair were z 4.6 (p 2e-6), on the skew 4.0 (what was
    still overdispersed, the empirical null's upper-side scale takes: :data:`UPPER_QUANTILE`)."""
    out = z.copy()
    for k, sign in enumerate(_SIGN):
        if sign:
            evidence = sign * z[k]
            out[k] = sign * min(evidence, skewed(float(evidence), float(sign * gamma[k])))
    return out


def signal_coverage(signal: str, hands: dict[tuple[str, bool], int]) -> dict[str, Any]:
    """``{"n", "levels", "excluded"}`` of a signal: the hands (by ``(level, own)``) whose level lets one of its
    features count (an observer's record: for the recording seat only, where a feature needs its hand), and
    those left out.

    >>> signal_coverage("feeding", {("full", True): 10, ("settlement", True): 3})
    {'n': 13, 'levels': {'full': 10, 'settlement': 3}, 'excluded': {}}
    >>> signal_coverage("soft_play", {("full", True): 10, ("settlement", True): 3})
    {'n': 10, 'levels': {'full': 10}, 'excluded': {'settlement': 3}}
    """
    used: dict[str, int] = {}
    excluded: dict[str, int] = {}
    for (level, own), n in hands.items():
        if n:
            side = used if any(NEEDS[f].uses(level, own=own) for f in SIGNALS[signal]) else excluded
            side[level] = side.get(level, 0) + n
    return {"n": sum(used.values()), "levels": used, "excluded": excluded}


def screen_levels(hands: dict[str, int]) -> dict[str, dict[str, Any]]:
    """What fed each signal of a screen over ``hands`` (replayed hands by level): the signal's hands and levels
    (:func:`signal_coverage`), whether any hand could show it (``available``), and each feature's own
    :func:`~pipeline.analytics.levels.coverage`."""
    keyed = {(level, True): n for level, n in hands.items()}
    out = {}
    for signal, features in SIGNALS.items():
        entry = signal_coverage(signal, keyed)
        entry["available"] = entry["n"] > 0
        entry["features"] = {f: coverage(NEEDS[f], keyed) for f in features}
        out[signal] = entry
    return out


def levels_lines(summary: dict[str, dict[str, Any]]) -> list[str]:
    """:func:`screen_levels` in words, a line per signal.

    >>> print("\\n".join(levels_lines(screen_levels({"settlement": 6}))))
    signals by level of record (hands screened):
      feeding: n 6 (settlement 6)
      dangerous: not available (excluded: 6 settlement hands (a score sheet has no discards))
      soft_play: not available (excluded: 6 settlement hands (a score sheet has no tiles))
      channel: n 6 (settlement 6)
      passed_wins: not available (excluded: 6 settlement hands (a score sheet has no tiles))
      avoidance: not available (excluded: 6 settlement hands (a score sheet has no tiles))
      kong_feeding: not available (excluded: 6 settlement hands (a score sheet has no discards, pongs or draws))
      value_feeding: not available (excluded: 6 settlement hands (a score sheet has no discards, pongs or draws))
      costly_feeding: not available (excluded: 6 settlement hands (a score sheet has no discards))
      exchange: not available (excluded: 6 settlement hands (a score sheet has no tiles))
      costly_value: not available (excluded: 6 settlement hands (a score sheet has no discards))
    """
    lines = ["signals by level of record (hands screened):"]
    for signal, entry in summary.items():
        excluded = "; ".join(
            excluded_text({level: n}, NEEDS[next(f for f in SIGNALS[signal] if not NEEDS[f].uses(level, own=True))])
            for level, n in entry["excluded"].items()
        )
        if entry["available"]:
            used = ", ".join(f"{k} {v}" for k, v in entry["levels"].items())
            lines.append(f"  {signal}: n {entry['n']} ({used})" + (f"; {excluded}" if excluded else ""))
        else:
            lines.append(f"  {signal}: not available" + (f" ({excluded})" if excluded else " (no hands)"))
    return lines


EMPIRICAL_NULL_PAIRS = 20
# The empirical null's scale is also read on the upper side of the bulk: the evidence's 80th percentile over the pairs
# against the normal's (0.84). A signal of rare events can be overdispersed in its tail while its centre is not:
# costly_feeding over the 2,529 honest pairs of 40 honest rooms exceeded 3 six times as often as a normal does,
# with a median absolute deviation often below 1, and flagged honest pairs in 4 of 260 rooms (issue 37). One
# planted pair among a room's pairs barely moves the 80th percentile.
UPPER_QUANTILE = 0.8


def _with_q(results: list[PairResult], fdr: float) -> list[PairResult]:
    """The results with p-values on the empirical null, Benjamini–Yekutieli q-values and flags, best first.

    The permutation null is exact only if honest opponents are exchangeable; real play has interactions the
    rate model does not absorb (a strong player and a loose one, say), and with thousands of hands they become
    "significant". With enough pairs screened (at least 20), most of them honest, the spread of their scores
    shows it: each scored signal's z-scores, turned to their :data:`DIRECTION`, are put on an empirical null
    (Efron) over the pairs that test it — centre the median (never below 0), scale the larger of 1.4826 × MAD
    and the 80th percentile's distance from the centre over the normal's (:data:`UPPER_QUANTILE`), never below 1
    — so the correction can only make the screen more cautious. Each signal's one-sided ``p`` is read on it,
    and the pair's p-value is Šidák's over its tested signals (:func:`combined`); its ``z`` is that p-value's
    normal quantile. Benjamini–Yekutieli over the pairs.
    """
    if not results:
        return results
    names = [s for s in SIGNALS if DIRECTION.get(s)]
    signals = [{s: dict(v) for s, v in r.signals.items()} for r in results]
    for s in names:
        tested = [v[s] for v in signals if v.get(s, {}).get("tested")]
        evidence = np.array([DIRECTION[s] * v["z"] for v in tested])
        centre, scale = 0.0, 1.0
        if len(tested) >= EMPIRICAL_NULL_PAIRS:
            centre = max(0.0, float(np.median(evidence)))
            scale = max(
                1.0,
                1.4826 * float(np.median(np.abs(evidence - np.median(evidence)))),
                (float(np.quantile(evidence, UPPER_QUANTILE)) - centre) / normal_isf(1.0 - UPPER_QUANTILE),
            )
        for v, e in zip(tested, evidence, strict=True):
            v["p"] = normal_sf(float((e - centre) / scale))
    pvals = np.array(
        [
            sidak(min((v[s]["p"] for s in names if v.get(s, {}).get("tested")), default=1.0), _tests(v, names))
            for v in signals
        ]
    )
    z = np.array([normal_isf(float(p)) if 0.0 < p < 1.0 else (math.inf if p <= 0.0 else -math.inf) for p in pvals])
    qvals = by_qvalues(pvals)
    out = [
        replace(r, signals=v, z=float(zi), p=float(pi), q=float(qi), flagged=bool(qi <= fdr))
        for r, v, zi, pi, qi in zip(results, signals, z, pvals, qvals, strict=True)
    ]
    out.sort(key=lambda r: (r.p, -r.score))
    return out


def _tests(signals: dict[str, dict[str, Any]], names: Sequence[str]) -> int:
    """How many of the signals ``names`` a pair's ``signals`` tested (at least 1)."""
    return max(1, sum(1 for s in names if signals.get(s, {}).get("tested")))


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


def _signal(observed: float, expected: float, z: float, direction: int = 0, tested: bool = False) -> dict[str, Any]:
    """One signal of a pair: the counts, the raw ratio observed / expected with its 95% interval (Garwood's
    Poisson interval of the count over the expectation; none without an expectation), the z-score, the
    direction in which it is evidence (``"excess"``, ``"deficit"``, or ``None``: reported, not scored), whether
    the pair's score tested it and its one-sided ``p`` in that direction (on the empirical null: set by
    :func:`_with_q`; ``None`` when not tested). ``ratio_shrunk`` and ``prior_sd`` are set across all pairs by
    :func:`_shrink`."""
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
        "direction": {1: "excess", -1: "deficit"}.get(direction),
        "tested": tested,
        "p": normal_sf(direction * z) if tested else None,
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


# what sql/pair_evidence.sql reads of each table, a run of hands at a time
EVIDENCE_STREAMS = (
    Stream("hands", "hand_id, players, replayed"),
    Stream("events", "hand_id, idx, t, player, source, tile", "source IS NOT NULL AND t IN ('hu', 'pong', 'kong')"),
    Stream("wins", "hand_id, event, points, fan"),
)


def pair_evidence(con: duckdb.DuckDBPyConnection, players: Sequence[str], *, limit: int = 5) -> list[dict[str, Any]]:
    """The strongest hands of a pair to replay: wins and calls one made on the other's tile, biggest first."""
    return pairs_evidence(con, [(players[0], players[1])], limit=limit)[(players[0], players[1])]


def pairs_evidence(
    con: duckdb.DuckDBPyConnection, pairs: Sequence[tuple[str, str]], *, limit: int = 5
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """:func:`pair_evidence` of every pair of ``pairs`` (keys as given), in one reading of the warehouse
    (``sql/pair_evidence.sql``): the flagged pairs' and the reported teams' hands cost one query, however many.
    The query runs on each run of hands in file order (:func:`pipeline.analytics.runs.add_up`) and each pair
    keeps its best ``limit`` so far: over every hand at once it held every replayed hand's players in a hash
    table, a memory that grew with the warehouse."""
    if not pairs:
        return {}
    asked = {"a": [a for a, _ in pairs], "b": [b for _, b in pairs], "limit": limit}

    def best(rows: pl.DataFrame) -> pl.DataFrame:  # each pair's first ``limit`` in the model's order
        ranked = rows.sort(
            ["lo", "hi", "won", "points", "hand_id", "event"], descending=[False, False, True, True, False, False]
        )
        return ranked.group_by(["lo", "hi"], maintain_order=True).head(limit)

    rows = add_up(
        con,
        EVIDENCE_STREAMS,
        lambda c: sql.run_sql(c, "pipeline.audit", "pair_evidence", **asked),
        lambda a, b: best(pl.concat([a, b])),
        size=RUN_HANDS,
    )
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for lo, hi, h, e, why in best(rows).select("lo", "hi", "hand_id", "event", "why").iter_rows():
        found.setdefault((lo, hi), []).append({"hand_id": h, "event": e, "why": why})
    return {(a, b): found.get((min(a, b), max(a, b)), []) for a, b in pairs}


@dataclass(frozen=True, slots=True)
class Group:
    """Players linked by flagged pairs (a connected component of three or more): a team, not only a pair."""

    players: tuple[str, ...]
    flagged_pairs: int  # of the len(players) choose 2 pairs among them

    @property
    def pairs(self) -> int:
        n = len(self.players)
        return n * (n - 1) // 2


def flagged_groups(results: Iterable[PairResult], *, reported: Iterable[Sequence[str]] = ()) -> list[Group]:
    """The teams the pair screen points at: players joined by flagged pairs, three or more, largest first;
    those the group screen ``reported`` already (the same players) left out, so that no team is named twice.

    A team of three who all feed each other shows as three flagged pairs; one that feeds along a chain shows as
    two, which still joins all three. Only flagged pairs join players, so a group is as controlled as the pairs
    it is made of (every link is a discovery at the screen's FDR).

    >>> r = lambda a, b, f: PairResult((a, b), 100, 1.0, 0.0, 0.0, f, {}, {}, [])
    >>> flagged_groups([r("a", "b", True), r("b", "c", True), r("a", "c", False), r("d", "e", True)])
    [Group(players=('a', 'b', 'c'), flagged_pairs=2)]
    >>> flagged_groups([r("a", "b", True), r("b", "c", True)], reported=[("c", "b", "a")])
    []
    """
    parent: dict[str, str] = {}

    def root(p: str) -> str:
        while parent.setdefault(p, p) != p:
            p = parent[p]
        return p

    links = [r.players for r in results if r.flagged]
    for a, b in links:
        parent[root(a)] = root(b)
    members: dict[str, list[str]] = {}
    for p in list(parent):
        members.setdefault(root(p), []).append(p)
    groups = []
    known = {frozenset(t) for t in reported}
    for team in members.values():
        if len(team) >= 3 and frozenset(team) not in known:
            inside = set(team)
            groups.append(Group(tuple(sorted(team)), sum(1 for a, b in links if a in inside and b in inside)))
    return sorted(groups, key=lambda g: (-len(g.players), g.players))


# ---------------------------------------------------------------------------------------------- power
POWER_FILE = "collusion_power.json"  # written by ``xuezhan eval-collusion --family ... --power-table``


@functools.cache
def power_table() -> dict[str, Any] | None:
    """The committed power table (``pipeline/audit/collusion_power.json``: :mod:`pipeline.evaluate` documents
    its shape), or None when the package has none."""
    try:
        text = importlib.resources.files("pipeline.audit").joinpath(POWER_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return None
    return dict(json.loads(text))


def power_statement(shared: Sequence[int], table: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the screen can see at the sizes of this warehouse (issue 37 item 5): the power table's rows
    (``table``, default :func:`power_table`: rooms of a planted family at an intensity and a number of shared
    hands, found at the table's FDR) with, per row, how many of the warehouse's pairs share at least that many
    hands (``shared``: the screened pairs' shared hands), and a sentence per row, so that "0 flagged" reads as
    "no evidence at this power", never as "clean".

    >>> t = {"command": "c", "date": "d", "fdr": 0.05, "rows": [{"family": "feeding", "held_out": False,
    ...      "intensity": 0.3, "shared": 1000, "rooms": 10, "found": 7, "low": 0.4, "high": 0.9}]}
    >>> print(power_statement([1200, 300], t)["text"][1][:79])
    with 1,000 shared hands, a pair feeding at 0.3 is found with probability ~70% [
    >>> print(power_statement([1200, 300], t)["text"][1][79:])
    40%, 90%] (7/10 rooms; 1 of this warehouse's 2 pairs share as many)
    """
    table = power_table() if table is None else table
    most = max(shared, default=0)
    head = (
        f"what the screen can see: a pair is flagged only with enough evidence; the largest number of hands a "
        f"pair of this warehouse shared is {most:,}. 0 flagged means no evidence at this power, not that nobody "
        "colludes."
    )
    if not table:
        return {"max_shared_hands": most, "rows": [], "text": [head, "no power table: the power is not known"]}
    rows, text = [], [head]
    for row in table.get("rows", []):
        rooms = int(row["rooms"])
        probability = row["found"] / rooms if rooms else None
        reached = sum(1 for n in shared if n >= row["shared"])
        group = "a team of three" if row["family"] == "team" else "a pair"
        held = ", held out of the tuning" if row.get("held_out") else ""
        rows.append(
            {
                "family": row["family"],
                "held_out": bool(row.get("held_out")),
                "intensity": row["intensity"],
                "shared": row["shared"],
                "rooms": rooms,
                "found": row["found"],
                "probability": None if probability is None else round(probability, 3),
                "low": row.get("low"),
                "high": row.get("high"),
                "pairs_with_as_many": reached,
            }
        )
        if probability is not None:
            text.append(
                f"with {row['shared']:,} shared hands, {group} {row['family']} at {row['intensity']} is found with "
                f"probability ~{probability:.0%} [{row['low']:.0%}, {row['high']:.0%}] ({row['found']}/{rooms} "
                f"rooms{held}; {reached} of this warehouse's {len(shared)} pairs share as many)"
            )
    return {
        "source": {"command": table.get("command"), "date": table.get("date"), "fdr": table.get("fdr")},
        "max_shared_hands": most,
        "rows": rows,
        "text": text,
    }
