"""Lab: which further zero-mean chance terms take out more of the net's variance (issue 43, point 6).

``python -m tools.luck_lab collect ROOM.jsonl ... --out DIR`` replays simulated rooms with :class:`LabEvidence`
(the ingest's evidence plus candidate draw terms) and keeps one row per seat-hand (its net in bases and its parts
by the payments' reasons, its deal's features, today's six draw-luck sums, the candidates' sums) as
``DIR/<room>.npz``; ``python -m tools.luck_lab measure DIR [--less hua_zhu]`` fits each idea's adjustment and
prints its reduction of the per-seat-hand variance with a 95% interval over the rooms (Student's t), and its gain
over today's method paired room by room: in-sample ("in": fitted on the room measured, as tools/luck_variance.py
does), fitted on the other rooms ("rooms-out"), and fitted on one half of a room's hands and measured on the
other ("half-out", both ways, averaged). Every candidate term is ``g(tile) − its mean over the tiles the wall
held`` for a ``g`` fixed before the draw, so its mean is 0 whatever anybody decides (tests/test_luck_lab.py
checks each by enumerating the wall at every draw of simulated hands).

Findings (session 26): 8 rooms of 2,000 hands, seeds 1–8, the default styles, chengdu (``pipeline.simulate``
``write(SimConfig(hands=2000, seed=s), ...)``), 64,000 seat-hands; collect took 3 min of CPU in pure Python. The
lab's "today" reproduces tools/luck_variance.py: 12.1% (9.2–14.9%) in-sample on seeds 1–5, 12.4% on 1–8.
"in": the reduction; rooms-out and half-out: today's reduction, then each idea's gain over it in points (95% interval):

=========================================================  ======  =============  =============
idea (terms)                                                in      rooms-out      half-out
=========================================================  ======  =============  =============
today: cells (dealer, shanten) + the six sums alone (6)     12.4%   12.1%          11.6%
the six fitted jointly (6)                                  12.4%   +0.0           +0.0
deal linear in dealer and shanten (6)                       12.4%   +0.0           +0.1
richer deal (+ longest suit, its square and excess over 9,  13.4%   +0.9 (0.6–1.2) +0.8 (0.5–1.2)
shortest suit, pairs, pairs², triplets; linear) (6)
finer deal cells (+ two longest suits / longest / + pairs)  ≤12.8%  −0.1 to +0.1   −0.7 to −0.3
fedv/danger: a ready rival's ron value of the tile drawn    13.0%   +0.2 (−0.3–0.6) +0.2 (−0.6–0.9)
2-shanten improving tiles, own and rivals' share (8)        12.9%   +0.4 (0.2–0.7) +0.5 (0.3–0.7)
suit/void/pair/triplet draws by shanten, own and rivals'    14.1%   +1.3 (1.0–1.7) +0.9 (0.4–1.4)
(38)
1-shanten draws valued: live waits, top win, live × value   12.8%   +0.3 (0.1–0.5) +0.2 (−0.1–0.4)
(12)
flush distance and all-pongs potential draws (22)           13.5%   +0.9 (0.7–1.2) +0.8 (0.5–1.1)
1-shanten draws by the wall's stage (查叫 near the end)     13.0%   +0.2 (0.0–0.4) −0.4 (−0.9–0.2)
(22)
everything with the richer deal (80)                        16.7%   +2.9 (2.0–3.7) +1.2 (0.4–2.0)
=========================================================  ======  =============  =============

The 2-shanten term alone, own draws only and fitted alone as the pipeline fits: +0.35 points in-sample (0.18–0.51),
+0.32 out of the room (0.15–0.50): more than the 0.04% noted in pipeline/game/evidence.py, still small for a third
more ingest time. Nothing reaches 25%, nor comes near it out of sample (best: 14.9%, 80 terms, overfitted on half a
room). Why: the net's variance by the payments' reasons (each part's covariance with the net) is self-drawn wins
31%, 花猪 27.7%, 查叫 19%, kongs 10%, wins on discards 9%, 退税 3%. Today's terms take out 11.9 of the self-drawn
wins' 31 points and 1.5 of the kongs' 10, all the candidates 13.2 and 2.7; of 花猪 and 查叫 none. The 花猪 money is
the simulator's novice style forgetting its void for a whole hand (``forget_void``, 12% of its hands): a mistake,
skill that no luck term may take out. Measured on the net less the 花猪 money (``--less hua_zhu``), today's method
takes out 17.9% (in) / 17.6% (rooms-out), everything 23.9% / 21.8% (half-out 19.3%): still short of 25%. On 8
rooms of a pool without novices (``styles={"balanced": 0.5, "aggressive": 0.25, "defensive": 0.25}``, seeds 1–8:
花猪 is then 0.8% of the variance, 查叫 26%, self-drawn wins 44%) today's method takes out 19.0% in-sample
(14.2–23.8%) and 17.7% fitted on the other rooms; everything 26.9% in-sample (24.2–29.7%), but 22.1% (16.9–27.2%)
fitted on the other rooms and 19.2% on half a room: 25% only in-sample, with 80 fitted slopes.

Is a richer deal model unbiased? Its features are of the deal as dealt, before the exchange and the void (both
choices). Over fair deals they do not depend on who sits where, so a term ``β·(f − the room's mean of f)`` has a
player's expectation 0 but for the estimated β and mean, a bias of order 1/n as for any control variate whose
multiple is fitted on the data it adjusts (today's cell means are the same kind). The dealer is not chance: under
chengdu's ``dealer_next = "first_winner"`` the winner of a hand deals the next, so a dealer term (today's cells
have one) gives back to the room some of a good player's edge, of a size unmeasured here (the dealers' mean net is
0.39 bases a hand, the others' −0.13). With rooms-out gains of about one point, no richer deal model, and no
draw term here, is worth new player_hands columns: the pipeline is unchanged.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import orjson

import pipeline
from pipeline.game.evidence import LUCK, Evidence
from pipeline.game.record import Record, parse_record
from pipeline.game.state import HandFacts, HandState
from pipeline.rules.fan import WinHand, score
from pipeline.rules.hand import code_step, deal_shanten, improving_mask, shanten_of_codes, win_mask_of_codes
from pipeline.rules.tiles import counts_of
from pipeline.validate import initial_state
from tools.policy_agreement import t_interval

# Candidate draw features, each a 0/1 function g of the kind drawn given the hand before the draw; its term is
# g(tile) − Σ_k wall_k g(k) / left (mean 0 over the wall). Bucketed by the drawer's shanten (0, 1, 2, 3+).
KINDS = ("main", "void", "pair", "trip", "imp2", "flush", "pongs")
BUCKETS = 4
OWN = [f"{k}_{b}" for k in KINDS for b in range(BUCKETS)]
VALUE = ("fedv", "danger")  # value-weighted: a ready rival's win on the tile (ron value, bases)
# One tile from ready (1-shanten) own draws, valued: of the ready hands the tile allows (its best discard), the
# live winning tiles, the largest self-drawn win (bases per payer), and their product; the rivals' shares negated.
READYV = ("rv_live", "rv_max", "rv_ev")
# The same by the stage of the wall (tiles left: over 40, 25–40, 10–24, under 10): near its end a ready hand is
# worth its 查叫 money, a 1-shanten one pays it.
STAGES = (40, 24, 9)
STAGED = tuple(f"{name}_s{b}" for name in ("rdy", "rvmax") for b in range(len(STAGES) + 1))
NAMES = (
    [f"own_{n}" for n in OWN]
    + [f"riv_{n}" for n in OWN]
    + list(VALUE)
    + list(READYV)
    + [f"riv_{n}" for n in READYV]
    + list(STAGED)
    + [f"riv_{n}" for n in STAGED]
)


class LabEvidence(Evidence):
    """The ingest's evidence plus the candidate terms (:data:`NAMES`), per seat."""

    def __init__(self) -> None:
        super().__init__()
        self.extra: list[dict[str, float]] = []  # per seat, the candidates' sums (empty: none yet)
        self._ron: dict[tuple[int, int, int, int, int, bool], dict[int, float]] = {}

    def before_draw(self, state: HandState, seat: int, tile: int, index: int) -> None:
        super().before_draw(state, seat, tile, index)
        if not self.extra:
            self.extra = [dict.fromkeys(NAMES, 0.0) for _ in range(state.n)]
        extra = self.extra
        left = state.left
        wall = [state.full[k] - state.seen[k] for k in range(27)]
        others = [o for o in range(state.n) if o != seat and not state.won[o]]

        def add(name: str, f: Sequence[float]) -> None:
            """The drawer's term ``f(tile) − mean over the wall``, and each rival's share of it negated."""
            d = f[tile] - sum(w * x for w, x in zip(wall, f, strict=True)) / left
            extra[seat][name] += d
            rivals = "riv_" + name.removeprefix("own_")
            for o in others:
                extra[o][rivals] -= d / len(others)

        h = state._hands[seat]
        melds, void = state.melds[seat], state.void[seat]
        counts = state.counts[seat]
        sh = 0 if state.win_mask(seat) else min(shanten_of_codes([h.m, h.p, h.s], len(melds), void), BUCKETS - 1)
        totals = [sum(counts[s * 9 : s * 9 + 9]) for s in range(3)]
        for meld in melds:
            totals[meld.tile // 9] += 3
        main = max((s for s in range(3) if s != void), key=lambda s: totals[s])
        g: dict[str, list[float]] = {
            "main": [1.0 if k // 9 == main else 0.0 for k in range(27)],
            "void": [1.0 if k // 9 == void else 0.0 for k in range(27)],
            "pair": [1.0 if counts[k] == 1 and k // 9 != void else 0.0 for k in range(27)],
            "trip": [1.0 if counts[k] == 2 and k // 9 != void else 0.0 for k in range(27)],
        }
        if sh == 2:
            mask = improving_mask(h.m, h.p, h.s, len(melds), void)
            g["imp2"] = [float((mask >> k) & 1) for k in range(27)]
        for name, f in g.items():
            add(f"own_{name}_{sh}", f)
        # flush distance: the tiles outside the main suit (void included), if no meld is outside it (else no flush)
        if all(meld.tile // 9 == main for meld in melds):
            off = sum(totals) - totals[main]
            add(f"own_flush_{min(off // 2, BUCKETS - 1)}", g["main"])  # 0–1, 2–3, 4–5, 6+ tiles off the suit
        # all-pongs potential by the pairs and triplets held (melds count as triplets): ≤2, 3, 4, 5+
        pp = min(max(sum(1 for c in counts if c >= 2) + len(melds) - 2, 0), BUCKETS - 1)
        add(f"own_pongs_{pp}", [max(a, b) for a, b in zip(g["pair"], g["trip"], strict=True)])
        if sh == 1:
            valued = self._ready_values(state, seat, wall)
            for name, f in valued.items():
                add(name, f)
            stage = sum(1 for edge in STAGES if left <= edge)
            add(f"rdy_s{stage}", [1.0 if x > 0 else 0.0 for x in valued["rv_live"]])
            add(f"rvmax_s{stage}", valued["rv_max"])
        # value-weighted: each ready rival o's win on the tile drawn (it is the drawer's to keep or give)
        for o in others:
            mo = state.win_mask(o)
            if not mo:
                continue
            values = self._ron_values(state, o, mo)
            d = values.get(tile, 0.0) - sum(wall[k] * v for k, v in values.items()) / left
            extra[o]["fedv"] += d
            extra[seat]["danger"] -= d

    def _ready_values(self, state: HandState, seat: int, wall: list[int]) -> dict[str, list[float]]:
        """Per kind drawn by ``seat``'s 1-shanten hand: the best ready hand it allows (most live winning tiles), as
        (live winning tiles, its largest self-drawn win per payer, live × mean value)."""
        h = state._hands[seat]
        melds, void = tuple(state.melds[seat]), state.void[seat]
        key = (h.m, h.p, h.s, melds, void)
        shapes = _READY.get(key)
        if shapes is None:  # per kind drawn: the waits (mask) of each ready discard, and each winning tile's value
            shapes = {}
            counts = list(state.counts[seat])
            codes = [h.m, h.p, h.s]
            better = improving_mask(h.m, h.p, h.s, len(melds), void)
            for t in range(27):
                if not (better >> t) & 1:
                    continue
                codes[t // 9] += code_step(t)
                counts[t] += 1
                found = []
                for d in range(27):
                    if not counts[d] or d == t:
                        continue
                    codes[d // 9] -= code_step(d)
                    counts[d] -= 1
                    mask = win_mask_of_codes(codes, melds, void)
                    if mask:
                        values = {}
                        for k in range(27):
                            if (mask >> k) & 1:
                                counts[k] += 1
                                win = WinHand(
                                    counts27=tuple(counts), melds=melds, win_tile=k, void=void, self_drawn=True
                                )
                                values[k] = score(win, state.rules).per_payer / state.rules.base
                                counts[k] -= 1
                        found.append(values)
                    codes[d // 9] += code_step(d)
                    counts[d] += 1
                codes[t // 9] -= code_step(t)
                counts[t] -= 1
                shapes[t] = found
            _READY[key] = shapes
        live = [0.0] * 27
        top = [0.0] * 27
        ev = [0.0] * 27
        for t, found in shapes.items():
            for values in found:
                n_live = sum(wall[k] - (k == t) for k in values)
                if n_live > live[t]:
                    live[t] = n_live
                    top[t] = max(values.values())
                    ev[t] = sum((wall[k] - (k == t)) * v for k, v in values.items())
        return {"rv_live": live, "rv_max": top, "rv_ev": ev}

    def _ron_values(self, state: HandState, seat: int, mask: int) -> dict[int, float]:
        h = state._hands[seat]
        key = (seat, h.m, h.p, h.s, len(state.melds[seat]), state.left == 1)
        values = self._ron.get(key)
        if values is None:
            values = {}
            counts = list(state.counts[seat])
            for k in range(27):
                if (mask >> k) & 1 and state.full[k] > state.seen[k]:
                    counts[k] += 1
                    win = WinHand(
                        counts27=tuple(counts),
                        melds=tuple(state.melds[seat]),
                        win_tile=k,
                        void=state.void[seat],
                        self_drawn=False,
                        last_tile=state.left == 1,
                    )
                    values[k] = score(win, state.rules).per_payer / state.rules.base
                    counts[k] -= 1
            self._ron[key] = values
        return values


_READY: dict = {}  # 1-shanten hand → per kind drawn, its ready hands' winning values (every room alike)

# the net's parts by the payments' reasons (a win's by how it was won)
PARTS = ("self_draw", "ron", "kong", "hua_zhu", "cha_jiao", "tui_shui", "other")
DEAL = ("dealer", "shanten", "longest", "shortest", "pairs", "trips")


def deal_features(tiles: list[int], dealer: bool) -> list[float]:
    counts = counts_of(list(tiles))
    suits = sorted(sum(counts[s * 9 : s * 9 + 9]) for s in range(3))
    return [
        float(dealer),
        float(deal_shanten(counts, choose_void=True)),
        float(suits[2]),
        float(suits[0]),
        float(sum(1 for c in counts if c == 2)),
        float(sum(1 for c in counts if c >= 3)),
    ]


def replay(record: Record) -> tuple[HandFacts, LabEvidence]:
    """A simulated hand replayed to its end with the lab's evidence (every hand known: the simulator's records are
    of level full)."""
    evidence = LabEvidence()
    state = initial_state(record, evidence)  # the one place a record's start is built
    for event in record.events:
        state.apply(event)
    state.close()
    return state.facts(), evidence


def collect(path: Path, out: Path) -> None:
    """Replay one room's records with the lab's evidence; keep one row per seat-hand."""
    rows = []
    with path.open("rb") as lines:
        for hand_no, line in enumerate(lines):
            record = parse_record(orjson.loads(line))
            hand, ev = replay(record)
            assert ev.luck is not None and ev.dealt is not None
            base = record.rules.base
            n = len(hand.deltas)
            how: dict[int | None, str] = {w.event: w.how for w in hand.wins}
            money = [dict.fromkeys(PARTS, 0.0) for _ in range(n)]  # each seat's net by the payments' reasons
            for p in hand.payments:
                part: str = p.reason
                if part == "hu":
                    part = "self_draw" if how.get(p.event) == "self_draw" else "ron"
                elif part not in PARTS:
                    part = "other"
                money[p.payer][part] -= p.amount / base
                if p.payee is not None:
                    money[p.payee][part] += p.amount / base
            for seat in range(n):
                row = [float(hand_no), hand.deltas[seat] / base, *(money[seat][part] for part in PARTS)]
                row += deal_features(ev.dealt[seat], seat == record.dealer)
                row += ev.luck[seat]
                row += [ev.extra[seat][n] for n in NAMES]
                rows.append(row)
    columns = ["hand", "net", *(f"money_{p}" for p in PARTS), *DEAL, *LUCK, *NAMES]
    np.savez(out, rows=np.array(rows), columns=np.array(columns))


# ------------------------------------------------------------------------------------------- measuring
def load(directory: Path) -> list[dict[str, np.ndarray]]:
    rooms = []
    for f in sorted(directory.glob("*.npz")):
        z = np.load(f)
        rows, cols = z["rows"], list(z["columns"])
        rooms.append({c: rows[:, i] for i, c in enumerate(cols)})
        assert len(rooms[-1]) == len(cols), "a column name twice"
    return rooms


CELLS = {  # the deal's cells: today's (dealer, starting shanten), and finer ones
    "cells": ("dealer", "shanten"),
    "suited": ("dealer", "shanten", "suited"),
    "longest": ("dealer", "shanten", "longest"),
    "longest_pairs": ("dealer", "shanten", "longest", "pairs"),
}


def deal_cells(train: dict, test: dict, keys: tuple[str, ...] = CELLS["cells"]) -> np.ndarray:
    """The deal's luck by cells: the cell's mean beyond the mean (0 under 30 seat-hands)."""
    mean = train["net"].mean()
    out = np.zeros(len(test["net"]))
    code_tr = sum(train[k] * 100**i for i, k in enumerate(keys))
    code_te = sum(test[k] * 100**i for i, k in enumerate(keys))
    for c in np.unique(code_tr):
        cell = code_tr == c
        if cell.sum() >= 30:
            out[code_te == c] = train["net"][cell].mean() - mean
    return out


def deal_design(room: dict, rich: bool) -> np.ndarray:
    cols = [room["dealer"]] + [(room["shanten"] == s).astype(float) for s in range(1, 7)]
    if rich:
        longest, pairs, trips = room["longest"], room["pairs"], room["trips"]
        cols += [longest, longest**2, np.maximum(longest - 9, 0), room["shortest"], pairs, trips, pairs**2]
    return np.column_stack(cols)


def deal_linear(train: dict, test: dict, rich: bool) -> np.ndarray:
    """E[net | deal features] − E[net], fitted by least squares on ``train`` (features centred on its means)."""
    xtr, xte = deal_design(train, rich), deal_design(test, rich)
    mu = xtr.mean(axis=0)
    beta, *_ = np.linalg.lstsq(xtr - mu, train["net"] - train["net"].mean(), rcond=None)
    return (xte - mu) @ beta


def draw_fit(train: dict, test: dict, names: list[str], resid_tr: np.ndarray, joint: bool) -> np.ndarray:
    """The draw terms' adjustment on ``test``: slopes through 0 on ``train``'s deal-adjusted net (each alone, or
    jointly)."""
    if not names:
        return np.zeros(len(test["net"]))
    xtr = np.column_stack([train[n] for n in names])
    xte = np.column_stack([test[n] for n in names])
    if joint:
        beta, *_ = np.linalg.lstsq(xtr, resid_tr, rcond=None)
    else:
        beta = (xtr * resid_tr[:, None]).sum(axis=0) / np.maximum((xtr**2).sum(axis=0), 1e-12)
    return xte @ beta


def reduction(train: dict, test: dict, deal: str, names: list[str], joint: bool) -> float:
    if deal in CELLS:
        dtr, dte = deal_cells(train, train, CELLS[deal]), deal_cells(train, test, CELLS[deal])
    else:
        dtr, dte = deal_linear(train, train, deal == "rich"), deal_linear(train, test, deal == "rich")
    resid_tr = train["net"] - train["net"].mean() - dtr
    adjusted = test["net"] - dte - draw_fit(train, test, names, resid_tr, joint)
    return 1 - adjusted.var() / test["net"].var()


def adjustment(train: dict, test: dict, deal: str, names: list[str], joint: bool) -> np.ndarray:
    if deal in CELLS:
        dtr, dte = deal_cells(train, train, CELLS[deal]), deal_cells(train, test, CELLS[deal])
    else:
        dtr, dte = deal_linear(train, train, deal == "rich"), deal_linear(train, test, deal == "rich")
    resid_tr = train["net"] - train["net"].mean() - dtr
    return dte + draw_fit(train, test, names, resid_tr, joint)


def parts(every: dict, ideas: list) -> None:
    """Where the net's variance is, by the payments' reasons (each part's covariance with the net, a share of its
    variance), and how much of each part each idea's adjustment takes out (in-sample, every room together)."""
    net = every["net"] - every["net"].mean()
    total = (net**2).mean()
    print("part          share " + " ".join(f"{label[:14]:>14s}" for label, *_ in ideas))
    adjs = [adjustment(every, every, deal, names, joint) for _, deal, names, joint in ideas]
    for part in PARTS:
        x = every[f"money_{part}"] - every[f"money_{part}"].mean()
        # adjusting the net by a takes out 2·cov(x, a) − (share of a's variance) ... per part: cov(x, a) / var(net)
        print(
            f"{part:12s} {100 * (x * net).mean() / total:5.1f}% "
            + " ".join(f"{100 * (x * a).mean() / total:13.1f}%" for a in adjs)
        )


def merge(rooms: list[dict]) -> dict:
    return {k: np.concatenate([r[k] for r in rooms]) for k in rooms[0]}


def measure(directory: Path, less: list[str]) -> None:
    rooms = load(directory)
    for r in rooms:
        r["suited"] = 13 + r["dealer"] - r["shortest"]  # the tiles of the two longest suits (player_hands.deal_suited)
    for r in rooms:  # the net less some of its parts (e.g. the 花猪 money, which the simulator's styles plant)
        for part in less:
            r["net"] = r["net"] - r[f"money_{part}"]
    luck6 = list(LUCK)
    value = list(VALUE)
    own = [f"own_{n}" for n in OWN]
    riv = [f"riv_{n}" for n in OWN]
    readyv = list(READYV) + [f"riv_{n}" for n in READYV]
    staged = list(STAGED) + [f"riv_{n}" for n in STAGED]
    imp = [n for n in own + riv if "imp2" in n]
    shape = [n for n in own + riv if "flush" in n or "pongs" in n]
    no_imp = [n for n in own + riv if "imp2" not in n and n not in shape]
    ideas = [
        ("today: cells + 6 alone", "cells", luck6, False),
        ("cells + 6 joint", "cells", luck6, True),
        ("linear deal + 6 joint", "linear", luck6, True),
        ("rich deal + 6 joint", "rich", luck6, True),
        ("rich deal only", "rich", [], True),
        ("cells + 6 + fedv/danger joint", "cells", luck6 + value, True),
        ("cells + 6 + imp2 joint", "cells", luck6 + imp, True),
        ("cells + 6 + suit/pair/trip joint", "cells", luck6 + no_imp, True),
        ("cells + 6 + readyv joint", "cells", luck6 + readyv, True),
        ("cells + 6 + flush/pongs joint", "cells", luck6 + shape, True),
        ("cells + 6 + staged ready joint", "cells", luck6 + staged, True),
        ("suited cells + 6 alone", "suited", luck6, False),
        ("longest cells + 6 alone", "longest", luck6, False),
        ("longest/pairs cells + 6 alone", "longest_pairs", luck6, False),
        ("rich + all joint", "rich", luck6 + value + own + riv + readyv + staged, True),
    ]
    # drop all-zero columns (a bucket nobody reaches)
    every = merge(rooms)
    print(f"{len(rooms)} rooms, {len(every['net']):,} seat-hands")
    ideas = [(label, deal, [n for n in names if np.any(every[n] != 0)], joint) for label, deal, names, joint in ideas]
    parts(every, [ideas[0], ideas[-1]])
    base: dict[str, list[float]] = {}
    for label, deal, names, joint in ideas:
        names = [n for n in names if np.any(every[n] != 0)]
        runs = {
            "in": [reduction(r, r, deal, names, joint) for r in rooms],
            "rooms-out": [
                reduction(merge(rooms[:i] + rooms[i + 1 :]), r, deal, names, joint) for i, r in enumerate(rooms)
            ],
            "half-out": [],
        }
        for r in rooms:  # fitted on the even hands, measured on the odd ones, and the other way round
            even = {k: v[r["hand"] % 2 == 0] for k, v in r.items()}
            odd = {k: v[r["hand"] % 2 == 1] for k, v in r.items()}
            runs["half-out"].append(
                (reduction(even, odd, deal, names, joint) + reduction(odd, even, deal, names, joint)) / 2
            )
        base = base or runs  # the first idea is today's method: the others' gains are paired with it room by room
        cells = []
        for tag, xs in runs.items():
            m, lo, hi = t_interval(xs)
            g, glo, ghi = t_interval([x - b for x, b in zip(xs, base[tag], strict=True)])
            gain = f"{100 * g:+.1f} ({100 * glo:+.1f}…{100 * ghi:+.1f})"
            cells.append(f"{tag} {100 * m:4.1f}% ({100 * lo:.1f}–{100 * hi:.1f}) {gain}")
        print(f"{label:32s} {len(names):2d}  " + "  ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("rooms", nargs="+", type=Path)
    c.add_argument("--out", type=Path, required=True)
    m = sub.add_parser("measure")
    m.add_argument("directory", type=Path)
    m.add_argument("--less", nargs="*", default=[], help="measure the net less these parts (hua_zhu, cha_jiao)")
    args = parser.parse_args(argv)
    if args.cmd == "collect" and pipeline.compiled():
        parser.error("collect subclasses the engine's Evidence: run it on the pure build (PYTHONPATH=the repository)")
    if args.cmd == "collect":
        args.out.mkdir(parents=True, exist_ok=True)
        for room in args.rooms:
            collect(room, args.out / f"{room.parent.name}.npz")
            print(room, file=sys.stderr, flush=True)
    else:
        measure(args.directory, args.less)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
