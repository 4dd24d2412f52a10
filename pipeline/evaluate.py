"""Evaluate the cheating screens on simulated populations whose ground truth we know, with replicates.

Each *cell* of an evaluation is one kind of population (an intensity × shared hands of colluding pairs, one team of
colluders, planted information cheats, or honest players only), simulated ``replicates`` times with different
seeds. For each population: simulate, ingest, screen, and compare what was flagged with the labels. Per cell the
table gives the planted cheats flagged over every replicate with a Wilson 95% interval, and the honest players (or
pairs) flagged. Over the honest populations it gives the *false discovery proportion*: with no cheat planted every
discovery is false, so a population's FDP is 1 when it flags anyone and 0 otherwise, and the share of honest
populations with any flag (with its Wilson interval, the upper bound is the one to read) estimates the false
discovery rate the screen runs at. Hard negatives are part of the honest populations: reckless (aggressive) and
novice players, careful (defensive) ones, and honest friends who share a table as often as colluders do.

Cheat families (``eval-collusion --family F``): rooms like the outside ones, 12 players, one planted group of a
family of :mod:`pipeline.simulate.families` (a pair, or a team of three) seated so that its pairs share about the
target hands (``together``: a partner joins a member's table with probability 0.7, a pair shares ~1,000 of ~2,900
hands; ``chance``: no seating bias, a pair shares ~9% of the hands, so the room is longer), and honest rooms of
3,000 hands of every style mix (:data:`HONEST_MIXES`), half with honest friends who sit together, a third on the
app profile. A room is *found* when the planted pair is flagged, or for a team when the team screen reports it or
one of its pairs is flagged; the honest false discovery rate is the share of honest rooms with any false
discovery, with its Wilson interval. The held-out protocol: the screen's thresholds and weights are chosen on
:data:`TUNING` (feeding, soft, team, and the families a signal was designed from: selective, kong, exchange) only;
:data:`HELD_OUT` (late, passing, ready) are reported apart, labelled, as power on cheats the screen was not tuned on.

The power table (``--power-table PATH``; the committed one is ``pipeline/audit/collusion_power.json``, which
the collusion screen quotes: "with N shared hands, a pair feeding at 0.3 is found with probability ~X")::

    {"command": the command line, "date": "YYYY-MM-DD", "fdr": 0.05, "players": 12,
     "tuning": ["feeding", "soft", "team", ...], "held_out_families": [...],
     "rows": [{"family", "held_out": bool, "intensity", "shared" (target shared hands),
               "seating": "together" | "chance", "rooms", "found", "low", "high" (Wilson 95% of found/rooms),
               "ranked_first", "honest_pairs_flagged", "honest_pairs", "rooms_with_false", "mean_shared"}],
     "honest": {"rooms", "with_false", "low", "high"}}

Think time (``eval-think-time``): rooms of 16 players with decision times (``simulate --timing``), ``relay=N``
planted (or ``follow=1:P``, an engine follower whose consulted decisions take the time of asking, and an evasive
one), or none; each ingested and screened as ``xuezhan think-time`` screens a warehouse (the timed records read
back from their files). A relay (a follower) is found when it is flagged; the honest rooms' false flags are counted
as above. The times are the simulator's own model (:mod:`pipeline.simulate.timing`), not people's.

It runs the simulator, the ingest and the audit together, so it sits above all three (``xuezhan
eval-collusion``, ``xuezhan eval-info-cheats``), not inside the audit: the audit never imports the simulator.

>>> c = Cell("x", hands=100, populations=20, planted=40, flagged_planted=38, honest=500, flagged_honest=1,
...          with_false=1, discoveries=39)
>>> c.detection, [round(x, 3) for x in c.detection_interval]
(0.95, [0.835, 0.986])
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from pipeline.analytics.queries import connect
from pipeline.analytics.stats import wilson
from pipeline.audit.collusion import PairResult, flagged_groups
from pipeline.audit.information import screen_information
from pipeline.audit.screen import screen
from pipeline.audit.teams import TeamResult
from pipeline.ingest.run import ingest
from pipeline.ingest.warehouse import Warehouse
from pipeline.simulate.inject import Following, InjectSpec
from pipeline.simulate.tables import SimConfig, labels_path, write

INTENSITIES = (0.1, 0.2, 0.3, 0.5)
SHARED = (200, 500, 1000, 3000)
PLAYERS = 8
PAIRS = 2
# With 8 players and 2 colluding pairs who join each other's table half the time, a colluding pair plays
# together in about 0.28 of all hands (measured: 575 of 2,174).
SHARE = 0.28
# With 8 players at 4-seat tables each player sits in about half the hands.
SEATED = 0.5
HONEST_MIX = {"balanced": 0.2, "aggressive": 0.4, "defensive": 0.1, "novice": 0.3}
# The hard negatives of the information screen: careful players who rarely throw a dangerous tile.
CAREFUL_MIX = {"balanced": 0.2, "aggressive": 0.2, "defensive": 0.4, "novice": 0.2}


@dataclass(frozen=True, slots=True)
class Population:
    name: str  # the cell: replicates share it
    hands: int
    intensity: float
    pairs: int
    friends: int
    seed: int
    styles: dict[str, float] | None = None
    bots: int = 0
    team: int = 0  # the size of a colluding team (pairs = 0 then)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One population screened: the planted cheats (pairs or players) and the honest ones, flagged or not."""

    population: Population
    planted: int
    flagged_planted: int
    honest: int
    flagged_honest: int
    shared_planted: float  # mean hands of the planted pairs together (of the planted players, for bots)
    scores: tuple[tuple[float, bool], ...]  # (score, is planted) of every one screened
    honest_groups: int = 0  # groups of the team screen whose null holds (at most one player of each planted group)
    flagged_honest_groups: int = 0  # of them, reported as teams

    @property
    def discoveries(self) -> int:
        return self.flagged_planted + self.flagged_honest + self.flagged_honest_groups

    @property
    def false(self) -> int:
        """False discoveries: honest pairs (players) flagged, and honest groups reported as teams."""
        return self.flagged_honest + self.flagged_honest_groups


@dataclass(frozen=True, slots=True)
class Cell:
    """The replicates of one cell, pooled."""

    name: str
    hands: int
    populations: int
    planted: int
    flagged_planted: int
    honest: int
    flagged_honest: int
    with_false: int  # populations with at least one false discovery
    discoveries: int
    honest_groups: int = 0
    flagged_honest_groups: int = 0

    @property
    def detection(self) -> float | None:
        return self.flagged_planted / self.planted if self.planted else None

    @property
    def detection_interval(self) -> tuple[float | None, float | None]:
        return wilson(self.flagged_planted, self.planted)


def cells(outcomes: Iterable[Outcome]) -> list[Cell]:
    """Pool the outcomes by cell, in the order the cells first appear."""
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.population.name, []).append(o)
    return [
        Cell(
            name=name,
            hands=group[0].population.hands,
            populations=len(group),
            planted=sum(o.planted for o in group),
            flagged_planted=sum(o.flagged_planted for o in group),
            honest=sum(o.honest for o in group),
            flagged_honest=sum(o.flagged_honest for o in group),
            with_false=sum(1 for o in group if o.false),
            discoveries=sum(o.discoveries for o in group),
            honest_groups=sum(o.honest_groups for o in group),
            flagged_honest_groups=sum(o.flagged_honest_groups for o in group),
        )
        for name, group in groups.items()
    ]


def collusion_grid(
    *,
    seed: int = 1,
    intensities: Iterable[float] = INTENSITIES,
    shared: Iterable[int] = SHARED,
    honest: int = 4,
    honest_hands: int = 3000,
    replicates: int = 1,
) -> list[Population]:
    """Per intensity × target shared hands, ``replicates`` populations with 2 colluding pairs; ``honest``
    populations with honest friend pairs and the hard-negative style mix."""
    out: list[Population] = []
    for s in shared:
        for i in intensities:
            for _ in range(replicates):
                out.append(Population(f"collude {i} × {s}", round(s / SHARE), i, PAIRS, 0, seed + len(out)))
    for k in range(honest):
        out.append(Population("honest", honest_hands, 0.0, 0, 2, seed + 1000 + k, HONEST_MIX))
    return out


def team_grid(
    *, seed: int = 1, size: int = 3, intensity: float = 0.3, hands: int = 1000, replicates: int = 10
) -> list[Population]:
    """``replicates`` populations of 8 players with one colluding team of ``size``, long enough that the team's
    pairs share about ``hands`` hands."""
    total = round(hands / SHARE)
    return [
        Population(f"team of {size} {intensity} × {hands}", total, intensity, 0, 0, seed + k, team=size)
        for k in range(replicates)
    ]


def information_grid(
    *, seed: int = 1, hands: int = 1000, bots: int = 1, replicates: int = 10, honest: int = 10
) -> list[Population]:
    """``replicates`` populations with ``bots`` planted information cheats who each play about ``hands``
    hands, and ``honest`` populations of the same size, half with the careful style mix (hard negatives)."""
    total = round(hands / SEATED)
    out = [Population(f"bot × {hands}", total, 0.0, 0, 0, seed + k, HONEST_MIX, bots) for k in range(replicates)]
    for k in range(honest):
        mix = CAREFUL_MIX if k % 2 else HONEST_MIX
        out.append(Population(f"honest × {hands}", total, 0.0, 0, 1, seed + 1000 + k, mix))
    return out


def _simulate(pop: Population, root: Path) -> dict[str, Any]:
    """Simulate ``pop`` into ``root`` and ingest it into ``root / "wh"``; the labels (as
    ``OUT.labels.json`` holds them). A ``root`` that already holds both (a cache) is read, not simulated again."""
    games = root / "games.jsonl.gz"
    if (root / "wh").is_dir() and labels_path(games).is_file():
        if _written_before(root / "wh"):  # ingested before a column the screens read: ingest its games again
            _ingest_again(root)
        return dict(json.loads(labels_path(games).read_text(encoding="utf-8")))
    shutil.rmtree(root / "wh-partial", ignore_errors=True)
    stack = pop.stack if isinstance(pop, StackedPopulation) else 0
    think = pop if isinstance(pop, ThinkPopulation) else None  # a think-time room: its size, times, relays
    assist = pop if isinstance(pop, AssistPopulation) else None  # an engine-assistance room: its followers
    follows: tuple[Following, ...] = ()
    if assist and assist.followers:
        follows = (Following(assist.followers, assist.share, assist.evasive),)
    elif think and think.follow:
        follows = (Following(1, think.follow, think.evasive),)
    spec = InjectSpec(
        collude_pairs=pop.pairs,
        collude_intensity=pop.intensity if pop.pairs else 0.0,
        friends=pop.friends,
        bots=pop.bots,
        team=pop.team,
        team_intensity=pop.intensity if pop.team else 0.0,
        stack=stack,
        stack_intensity=pop.intensity if stack else 0.0,
        relays=think.relays if think else 0,
        follows=follows,
    )
    players = think.players if think else assist.players if assist else PLAYERS
    timing = think is not None
    notice = assist.notice if assist else None
    config = SimConfig(
        hands=pop.hands, seed=pop.seed, players=players, inject=spec, styles=pop.styles, timing=timing, notice=notice
    )
    labels = write(config, games)
    ingest([str(games)], root / "wh-partial", workers=1)
    (root / "wh-partial").rename(root / "wh")  # a cached warehouse is whole or absent
    return labels.as_dict()


def _written_before(warehouse: Path) -> bool:
    """Does a cached warehouse lack a column of :data:`~schemas.tables.TABLES` (it was ingested before the column
    was added, e.g. player_hands' start facts)? What :meth:`~pipeline.ingest.warehouse.Warehouse.written_before`
    says of its files (a column the views derive, hands.base, is not missing)."""
    return bool(Warehouse(warehouse).written_before())


def _ingest_again(root: Path) -> None:
    """Replace the warehouse of ``root`` (a cache's population) by a new ingest of its games."""
    shutil.rmtree(root / "wh-partial", ignore_errors=True)
    ingest([str(root / "games.jsonl.gz")], root / "wh-partial", workers=1)
    shutil.rmtree(root / "wh")
    (root / "wh-partial").rename(root / "wh")


# What decides the games a population's seed simulates: the simulator, the hand state it plays on and the rules
# (their sources and the profiles' data). A cached population is named by them too, so that a changed simulator
# simulates again instead of screening games an older one played (measured figures went stale that way once).
SIMULATOR_PACKAGES = ("simulate", "engines", "game", "rules")  # of pipeline/


def simulator_version() -> str:
    """A digest of :data:`SIMULATOR_PACKAGES`' files (:func:`sources_digest`)."""
    here = Path(__file__).parent
    return sources_digest(tuple(here / name for name in SIMULATOR_PACKAGES))


@functools.cache
def sources_digest(roots: tuple[Path, ...]) -> str:
    """A digest of the files of the folders ``roots``, sources and data (``.py``, ``.toml``, ``.json``: paths
    relative to the folders' parent, and contents)."""
    h = hashlib.sha256()
    for root in roots:
        for f in sorted(root.rglob("*")):
            if f.is_file() and f.suffix in (".py", ".toml", ".json"):
                name = f.relative_to(root.parent).as_posix()
                h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@contextmanager
def _population_dir(pop: Population, workdir: str | None, cache: str | None) -> Iterator[Path]:
    """Where ``pop`` is simulated: a folder of ``cache`` named by the population (kept, so that a screen can be
    measured again on the same populations without simulating them), or a temporary one of ``workdir``."""
    if cache is not None:
        key = hashlib.sha256(f"{pop!r} {simulator_version()}".encode()).hexdigest()[:16]
        root = Path(cache) / f"seed{pop.seed}-{key}"
        root.mkdir(parents=True, exist_ok=True)
        yield root
        return
    root = Path(tempfile.mkdtemp(prefix="xz-eval-", dir=workdir))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def simulated(
    pop: Population, *, workdir: str | None = None, cache: str | None = None
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """``pop`` simulated and ingested (or read from ``cache``, as the eval commands keep it): its warehouse's folder
    and its labels, while the context lasts (a temporary folder of ``workdir`` is removed after it). What a lab
    that measures a screen on the eval's own rooms starts from (``tools/yardstick_lab.py``)."""
    with _population_dir(pop, workdir, cache) as root:
        labels = _simulate(pop, root)
        yield root / "wh", labels


def run_population(
    pop: Population,
    *,
    fdr: float = 0.05,
    min_hands: int | None = None,
    workdir: str | None = None,
    cache: str | None = None,
) -> Outcome:
    """Simulate, ingest and run the collusion screen, pairs and teams of three (``xuezhan collusion``), on one
    population. The planted ones are the colluding groups: a pair is found when it is flagged, a team when the
    team screen reports it or its flagged pairs join all of it (:func:`found_groups`); the honest ones are the
    pairs outside every group, and the groups of three whose null holds (at most one player of each planted
    group: a group with two colluders in it is one whose null is false)."""
    with _population_dir(pop, workdir, cache) as root:
        labels = _simulate(pop, root)
        threshold = min_hands if min_hands is not None else min(200, max(50, pop.hands // 10))
        with connect(root / "wh") as con:
            screened = screen(con, min_hands=threshold, fdr=fdr, evidence=0, teams=True)
        results, teams = list(screened.pairs), list(screened.groups)
    groups = [tuple(sorted(c["players"])) for c in labels["colluders"]]
    inside = {pair for g in groups for pair in combinations(g, 2)}
    flagged = {r.players for r in results if r.flagged}
    found = len(found_groups(groups, results, teams))
    shared = [r.shared_hands for r in results if r.players in inside]
    # groups of three (the team screen's pairs only explain groups: the pair screen judges pairs)
    null_holds = [t for t in teams if len(t.players) >= 3 and all(len(set(t.players) & set(g)) < 2 for g in groups)]
    return Outcome(
        population=pop,
        planted=len(groups),
        flagged_planted=found,
        honest=sum(1 for r in results if r.players not in inside),
        flagged_honest=len(flagged - inside),
        shared_planted=sum(shared) / len(shared) if shared else 0.0,
        scores=tuple((r.score, r.players in inside) for r in results),
        honest_groups=len(null_holds),
        flagged_honest_groups=sum(1 for t in null_holds if t.reported),
    )


def found_groups(
    groups: Iterable[tuple[str, ...]], results: Iterable[PairResult], teams: Iterable[TeamResult] = ()
) -> list[tuple[str, ...]]:
    """The colluding groups the screen found: a pair when it is flagged, a team when the team screen reports
    exactly its players (``teams``) or the flagged pairs join all of them
    (:func:`~pipeline.audit.collusion.flagged_groups`).

    >>> r = lambda a, b: PairResult((a, b), 100, 1.0, 0.0, 0.0, True, {}, {}, [])
    >>> found_groups([("a", "b"), ("c", "d"), ("e", "f", "g")], [r("a", "b"), r("e", "f"), r("f", "g")])
    [('a', 'b'), ('e', 'f', 'g')]
    >>> t = TeamResult(("c", "d", "h"), 100, 9.0, 0.0, 0.0, True, {}, reported=True)
    >>> found_groups([("c", "d", "h"), ("e", "f", "g")], [], [t])
    [('c', 'd', 'h')]
    """
    results = list(results)
    flagged = {r.players for r in results if r.flagged}
    joined = [set(g.players) for g in flagged_groups(results)]
    reported = {tuple(sorted(t.players)) for t in teams if t.reported}
    return [
        g
        for g in groups
        if (g in flagged if len(g) == 2 else tuple(sorted(g)) in reported or any(set(g) <= t for t in joined))
    ]


@dataclass(frozen=True, slots=True)
class InfoOutcome(Outcome):
    """A population screened for information cheats: both signals together in :class:`Outcome`'s fields (a player
    flagged on either, BY over both families: :func:`~pipeline.audit.anticipation.combine`), and each signal
    alone (its own BY over the players it tests)."""

    dodges: Outcome | None = None
    anticipation: Outcome | None = None


def _info_outcome(pop: Population, bots: set[str], tested: list[tuple[str, float, int, bool]]) -> Outcome:
    """An :class:`Outcome` of ``tested`` players: ``(player, p, hands, flagged)``."""
    flagged = {player for player, _, _, f in tested if f}
    hands = [h for player, _, h, _ in tested if player in bots]
    return Outcome(
        population=pop,
        planted=len(bots),
        flagged_planted=len(flagged & bots),
        honest=sum(1 for player, *_ in tested if player not in bots),
        flagged_honest=len(flagged - bots),
        shared_planted=sum(hands) / len(hands) if hands else 0.0,
        scores=tuple((-p, player in bots) for player, p, _, _ in tested),
    )


def run_information(
    pop: Population, *, fdr: float = 0.05, workdir: str | None = None, cache: str | None = None
) -> Outcome:
    """Simulate, ingest and run the information screen (``xuezhan info-cheats``) on one population: both signals,
    the dangerous discards by choice (:mod:`pipeline.audit.information`) and winning-tile anticipation
    (:mod:`pipeline.audit.anticipation`), together and each alone (:class:`InfoOutcome`)."""
    from pipeline.audit.anticipation import WaitsNotJudged, combine, screen_anticipation

    with _population_dir(pop, workdir, cache) as root:
        labels = _simulate(pop, root)
        try:
            with connect(root / "wh") as con:
                waits = screen_anticipation(con, fdr=fdr)
        except WaitsNotJudged:  # a cached warehouse ingested before ingest judged the waits: ingest its games again
            _ingest_again(root)
            with connect(root / "wh") as con:
                waits = screen_anticipation(con, fdr=fdr)
        with connect(root / "wh") as con:
            dodges = screen_information(con, fdr=fdr)
    bots = set(labels["bots"])
    both = combine(dodges, waits, fdr=fdr)
    alone_d = [(r.player, r.p, r.hands, r.flagged) for r in dodges if r.p is not None]
    alone_a = [(r.player, r.p, r.hands, r.flagged) for r in waits if r.p is not None]
    together = []
    for s in both:
        ps = [r.p for r in (s.dodges, s.anticipation) if r is not None and r.p is not None]
        if ps:
            hands = max(r.hands for r in (s.dodges, s.anticipation) if r is not None)
            together.append((s.player, min(ps), hands, s.flagged))
    combined = _info_outcome(pop, bots, together)
    return InfoOutcome(
        **{f: getattr(combined, f) for f in Outcome.__dataclass_fields__},
        dodges=_info_outcome(pop, bots, alone_d),
        anticipation=_info_outcome(pop, bots, alone_a),
    )


RUNNERS: dict[str, Callable[..., Outcome]] = {"collusion": run_population, "information": run_information}


def _run(args: tuple[str, Population, float, str | None]) -> Outcome:
    detector, pop, fdr, cache = args
    return RUNNERS[detector](pop, fdr=fdr, cache=cache)


def auc(scores: Iterable[tuple[float, bool]]) -> float | None:
    """Probability that a random planted one outscores a random honest one (ties count half)."""
    pos = [s for s, c in scores if c]
    neg = [s for s, c in scores if not c]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def evaluate(
    populations: list[Population],
    *,
    detector: str = "collusion",
    fdr: float = 0.05,
    workers: int = 1,
    progress: Callable[[Outcome], None] | None = None,
    cache: str | None = None,
) -> list[Outcome]:
    """Run ``detector`` (a key of :data:`RUNNERS`) on every population, ``workers`` at a time; with ``cache``
    (a folder) each population's simulated games and warehouse are kept there and read again by a later run
    instead of simulated (a population is named by all its fields, seed included, and by
    :func:`simulator_version`: a changed simulator or rule set simulates again)."""
    jobs = [(detector, pop, fdr, cache) for pop in populations]
    outcomes: list[Outcome] = []
    if workers <= 1:
        results: Iterable[Outcome] = map(_run, jobs)
        for outcome in results:
            outcomes.append(outcome)
            if progress:
                progress(outcome)
        return outcomes
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for outcome in pool.map(_run, jobs):
            outcomes.append(outcome)
            if progress:
                progress(outcome)
    return outcomes


def _rate(num: int, den: int) -> str:
    if not den:
        return "-"
    lo, hi = wilson(num, den)
    assert lo is not None and hi is not None
    return f"{num}/{den} = {num / den:.0%} [{lo:.0%}, {hi:.0%}]"


def table(outcomes: list[Outcome], fdr: float, *, unit: str = "pairs") -> str:
    """The Markdown table of the README: per cell, detection with its Wilson 95% interval, the honest ones
    flagged, the share of populations with a false discovery, and the ranking AUC."""
    groups = any(o.honest_groups for o in outcomes)
    lines = [
        f"| cell | hands | populations | planted {unit} flagged at FDR {fdr} [95% CI] | honest {unit} flagged "
        + ("| honest groups of three reported as teams " if groups else "")
        + "| populations with a false discovery [95% CI] | AUC |",
        "|---|---|---|---|---|---|---|" + ("---|" if groups else ""),
    ]
    by_cell: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_cell.setdefault(o.population.name, []).append(o)
    for c in cells(outcomes):
        a = auc([s for o in by_cell[c.name] for s in o.scores])
        lines.append(
            f"| {c.name} | {c.hands} | {c.populations} | {_rate(c.flagged_planted, c.planted)} | "
            f"{c.flagged_honest}/{c.honest} | "
            + (f"{c.flagged_honest_groups}/{c.honest_groups} | " if groups else "")
            + f"{_rate(c.with_false, c.populations)} | "
            f"{'-' if a is None else f'{a:.3f}'} |"
        )
    honest = [o for o in outcomes if o.planted == 0]
    if honest:
        with_false = sum(1 for o in honest if o.false)
        lo, hi = wilson(with_false, len(honest))
        screened = f"{sum(o.honest for o in honest)} {unit}" + (
            f" and {sum(o.honest_groups for o in honest)} groups of three" if groups else ""
        )
        lines.append(
            f"\nHonest populations: {sum(o.false for o in honest)} false discoveries over {len(honest)} "
            f"populations ({screened} screened); false discovery proportion "
            f"{with_false / len(honest):.2f}, 95% CI [{lo:.2f}, {hi:.2f}]."
        )
    overall = auc([s for o in outcomes for s in o.scores])
    if overall is not None:
        lines.append(f"Pooled ranking AUC over every one screened: {overall:.3f}.")
    return "\n".join(lines)


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """The outcomes and their cells as JSON."""
    return {
        "populations": [
            {
                "name": o.population.name,
                "seed": o.population.seed,
                "hands": o.population.hands,
                "intensity": o.population.intensity,
                "planted": o.planted,
                "flagged_planted": o.flagged_planted,
                "honest": o.honest,
                "flagged_honest": o.flagged_honest,
                "honest_groups": o.honest_groups,
                "flagged_honest_groups": o.flagged_honest_groups,
                "shared_planted": o.shared_planted,
                "auc": auc(o.scores),
            }
            for o in outcomes
        ],
        "cells": [
            {
                "name": c.name,
                "populations": c.populations,
                "planted": c.planted,
                "flagged_planted": c.flagged_planted,
                "detection": c.detection,
                "detection_interval": list(c.detection_interval),
                "honest": c.honest,
                "flagged_honest": c.flagged_honest,
                "honest_groups": c.honest_groups,
                "flagged_honest_groups": c.flagged_honest_groups,
                "populations_with_false": c.with_false,
                "false_interval": list(wilson(c.with_false, c.populations)),
            }
            for c in cells(outcomes)
        ],
    }


# ---------------------------------------------------------------------------------------------- stacked deals
@dataclass(frozen=True, slots=True)
class StackedPopulation(Population):
    """A population with ``stack`` players whose deals are stacked in a share ``intensity`` of their hands
    (``simulate --inject stack=N:I``)."""

    stack: int = 0


@dataclass(frozen=True, slots=True)
class DealOutcome(Outcome):
    """A population screened for stacked deals: the players (in :class:`Outcome`'s fields) and its sessions
    (a session is planted when a deal of it was stacked)."""

    sessions_planted: int = 0
    sessions_planted_flagged: int = 0
    sessions_honest: int = 0
    sessions_honest_flagged: int = 0


def deals_grid(
    *,
    seed: int = 1,
    hands: int = 500,
    intensities: Iterable[float] = (0.4,),
    stackers: int = 1,
    replicates: int = 25,
    honest: int = 25,
) -> list[Population]:
    """Per intensity, ``replicates`` populations of 8 players in which ``stackers`` players, each seated for about
    ``hands`` hands, have their deals stacked; ``honest`` populations of the same size with none, half of them
    with the careful style mix and honest friends (the deal screen's null does not depend on style: they are
    there to show it)."""
    total = round(hands / SEATED)
    out: list[Population] = []
    for i in intensities:
        for _ in range(replicates):
            out.append(
                StackedPopulation(f"stack {i} × {hands}", total, i, 0, 0, seed + len(out), HONEST_MIX, stack=stackers)
            )
    for k in range(honest):
        mix = CAREFUL_MIX if k % 2 else HONEST_MIX
        out.append(StackedPopulation(f"honest × {hands}", total, 0.0, 0, k % 2, seed + 1000 + k, mix))
    return out


def run_deals(pop: Population, *, fdr: float = 0.05, workdir: str | None = None, cache: str | None = None) -> Outcome:
    """Simulate, ingest and run the stacked-deal screen (``xuezhan deals``) on one population: the planted
    players are the stackers, the planted sessions those with a stacked deal."""

    from pipeline.audit.deals import screen_deals

    with _population_dir(pop, workdir, cache) as root:
        labels = _simulate(pop, root)
        with connect(root / "wh") as con:
            results = screen_deals(con, fdr=fdr, kinds=("player", "session"), evidence=0)
    stackers = {s["player"] for s in labels.get("stackers", [])}
    rigged = {h["hand_id"].rsplit("-h", 1)[0] for h in labels.get("stacked", [])}
    players = [r for r in results if r.kind == "player" and r.p is not None]
    sessions = [r for r in results if r.kind == "session" and r.p is not None]
    hands = [r.hands for r in players if r.group in stackers]
    return DealOutcome(
        population=pop,
        planted=len(stackers),
        flagged_planted=sum(r.flagged for r in players if r.group in stackers),
        honest=sum(r.group not in stackers for r in players),
        flagged_honest=sum(r.flagged for r in players if r.group not in stackers),
        shared_planted=sum(hands) / len(hands) if hands else 0.0,
        scores=tuple((-math.log10(max(r.p or 1.0, 1e-300)), r.group in stackers) for r in players),
        sessions_planted=sum(r.group in rigged for r in sessions),
        sessions_planted_flagged=sum(r.flagged for r in sessions if r.group in rigged),
        sessions_honest=sum(r.group not in rigged for r in sessions),
        sessions_honest_flagged=sum(r.flagged for r in sessions if r.group not in rigged),
    )


RUNNERS["deals"] = run_deals


def session_lines(outcomes: Iterable[Outcome]) -> str:
    """The sessions the stacked-deal screen flagged, per cell: those with a stacked deal, and the others (each
    an 8-hand session of 32 dealt hands: a weak test, listed because a rigged table is found by its sessions)."""
    lines = ["| cell | sessions with a stacked deal flagged | other sessions flagged |", "|---|---|---|"]
    by_cell: dict[str, list[DealOutcome]] = {}
    for o in outcomes:
        if isinstance(o, DealOutcome):
            by_cell.setdefault(o.population.name, []).append(o)
    for name, group in by_cell.items():
        planted = sum(o.sessions_planted for o in group)
        found = sum(o.sessions_planted_flagged for o in group)
        honest = sum(o.sessions_honest for o in group)
        false = sum(o.sessions_honest_flagged for o in group)
        lines.append(f"| {name} | {_rate(found, planted)} | {false}/{honest} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- cheat families
# The held-out protocol: thresholds and weights of the collusion screen are chosen on the TUNING families only;
# the HELD_OUT families are reported separately, labelled, as the screen's power on cheats it was not tuned on.
# A family a signal was designed from (avoidance from soft's description, value_feeding from selective's,
# kong_feeding from kong's, exchange from exchange's) is a tuning family, whatever data the design saw.
TUNING = ("feeding", "soft", "team", "selective", "kong", "exchange")
HELD_OUT = ("late", "passing", "ready")
ROOM_PLAYERS = 12  # rooms like the outside ones: 12 players, an honest pair sharing about 270 of 3,000 hands
FAMILY_INTENSITIES = (0.3, 0.5)
FAMILY_SHARED = (1000,)
# seating bias of the planted group: "together" (a partner joins a table a member sits at with probability 0.7:
# a pair shares about 1,000 of 3,000 hands, as the outside rooms' cheating pairs did) or "chance" (no more often
# than any two players)
SEATING = {"together": 0.7, "chance": 0.0}
# share of a room's hands a planted pair (a team's pair) plays together, 12 players (measured on 20,000 tables of
# tables._seat_table)
GROUP_SHARE = {(2, "together"): 0.343, (3, "together"): 0.469, (2, "chance"): 0.093, (3, "chance"): 0.093}
HONEST_HANDS = 3000
# honest rooms cycle through these style mixes (the room's realistic mix, reckless, careful, strong and weak
# players), every other one with 2 pairs of honest friends who sit together, every third on the app profile
STRONG_WEAK_MIX = {"balanced": 0.3, "defensive": 0.2, "novice": 0.5}
HONEST_MIXES: tuple[tuple[str, dict[str, float] | None], ...] = (
    ("realistic", None),
    ("reckless", HONEST_MIX),
    ("careful", CAREFUL_MIX),
    ("strong and weak", STRONG_WEAK_MIX),
)
# 换三张 is played by the app profile (chengdu plays no exchange): the exchange family is simulated there
FAMILY_PROFILE = {"exchange": "app"}


@dataclass(frozen=True, slots=True)
class FamilyPopulation(Population):
    """A room of :data:`ROOM_PLAYERS` players with one colluding group of a cheat family (``simulate --inject
    cheat=FAMILY:1:I:seat=S``), or an honest room (``family`` empty)."""

    family: str = ""
    seating: str = "together"
    shared: int = 0  # the target hands the planted pair shares
    profile: str = "chengdu"
    players: int = ROOM_PLAYERS
    mix: str = "realistic"  # the style mix's name (HONEST_MIXES; the planted rooms: the realistic mix)


@dataclass(frozen=True, slots=True)
class FamilyOutcome(Outcome):
    """A room screened: the planted group found or not (:class:`Outcome`'s ``flagged_planted``, 0 or 1) and
    whether one of its pairs has the room's highest pair score."""

    ranked_first: bool = False


def family_grid(
    families: Iterable[str],
    *,
    seed: int = 1,
    intensities: Iterable[float] = FAMILY_INTENSITIES,
    shared: Iterable[int] = FAMILY_SHARED,
    seatings: Iterable[str] = ("together",),
    replicates: int = 5,
    honest: int = 8,
    honest_hands: int = HONEST_HANDS,
) -> list[Population]:
    """Per family × intensity × shared hands × seating, ``replicates`` rooms of 12 players with one planted group
    (a pair, or three for ``team``), long enough that its pairs share about ``shared`` hands; and ``honest``
    honest rooms of ``honest_hands`` hands cycling through :data:`HONEST_MIXES`, every other one with 2 pairs of
    honest friends who sit together, every third on the app profile (the exchange family's). A room's seed is
    ``seed`` + its cell's number (from the cell's name) + its replicate, so that a cell's rooms are the same in any
    grid (a cache simulated for one grid serves another, and more replicates add rooms)."""
    from pipeline.simulate.families import FAMILIES

    out: list[Population] = []
    for family in families:
        size = FAMILIES[family].size
        for seating in seatings:
            for s in shared:
                for i in intensities:
                    name = f"{family} {i} × {s} ({seating})"
                    hands = round(s / GROUP_SHARE[(size if size >= 3 else 2, seating)])
                    cell = int(hashlib.sha256(name.encode()).hexdigest()[:6], 16) * 100
                    for k in range(replicates):
                        out.append(
                            FamilyPopulation(
                                name,
                                hands,
                                i,
                                0,
                                0,
                                seed + cell + k,
                                family=family,
                                seating=seating,
                                shared=s,
                                profile=FAMILY_PROFILE.get(family, "chengdu"),
                            )
                        )
    for k in range(honest):
        mix_name, mix = HONEST_MIXES[k % len(HONEST_MIXES)]
        friends = 2 if k % 2 else 0
        profile = "app" if k % 3 == 2 else "chengdu"
        out.append(
            FamilyPopulation(
                "honest",
                honest_hands,
                0.0,
                0,
                friends,
                seed + 2000 + k,
                mix,
                family="",
                mix=mix_name,
                profile=profile,
            )
        )
    return out


def _family_spec(pop: FamilyPopulation) -> InjectSpec:
    """The ``--inject`` spec of a family room."""
    text = f"friends={pop.friends}" if pop.friends else ""
    if pop.family:
        cheat = f"cheat={pop.family}:1:{pop.intensity}:seat={SEATING[pop.seating]}"
        text = f"{text},{cheat}" if text else cheat
    return InjectSpec.parse(text)


def run_family(
    pop: Population,
    *,
    fdr: float = 0.05,
    min_hands: int | None = None,
    workdir: str | None = None,
    cache: str | None = None,
) -> Outcome:
    """Simulate, ingest and run the collusion screen (pairs and teams, ``xuezhan collusion``) on one room of
    :func:`family_grid`. The room is found when the planted pair is flagged, or for a group of three, when the
    team screen reports it or one of its pairs is flagged (the outside rooms' rule); the honest ones are the
    pairs outside the group and the groups of three with at most one member of it."""
    assert isinstance(pop, FamilyPopulation)
    with _population_dir(pop, workdir, cache) as root:
        games = root / "games.jsonl.gz"
        if (root / "wh").is_dir() and labels_path(games).is_file():
            if _written_before(root / "wh"):
                _ingest_again(root)
            labels = dict(json.loads(labels_path(games).read_text(encoding="utf-8")))
        else:
            shutil.rmtree(root / "wh-partial", ignore_errors=True)
            config = SimConfig(
                hands=pop.hands,
                seed=pop.seed,
                players=pop.players,
                profile=pop.profile,
                inject=_family_spec(pop),
                styles=pop.styles,
            )
            labels = write(config, games).as_dict()
            ingest([str(games)], root / "wh-partial", workers=1)
            (root / "wh-partial").rename(root / "wh")
        threshold = min_hands if min_hands is not None else min(200, max(50, pop.hands // 10))
        with connect(root / "wh") as con:
            screened = screen(con, min_hands=threshold, fdr=fdr, evidence=0, teams=True)
        results, teams = list(screened.pairs), list(screened.groups)
    groups = [tuple(sorted(c["players"])) for c in labels["colluders"]]
    inside = {pair for g in groups for pair in combinations(g, 2)}
    flagged = {r.players for r in results if r.flagged}
    reported = {tuple(sorted(t.players)) for t in teams if t.reported}
    found = sum(1 for g in groups if (inside & flagged & set(combinations(g, 2))) or g in reported)
    top = max(results, key=lambda r: r.score, default=None)
    shared = [r.shared_hands for r in results if r.players in inside]
    null_holds = [t for t in teams if len(t.players) >= 3 and all(len(set(t.players) & set(g)) < 2 for g in groups)]
    return FamilyOutcome(
        population=pop,
        planted=len(groups),
        flagged_planted=found,
        honest=sum(1 for r in results if r.players not in inside),
        flagged_honest=len(flagged - inside),
        shared_planted=sum(shared) / len(shared) if shared else 0.0,
        scores=tuple((r.score, r.players in inside) for r in results),
        honest_groups=len(null_holds),
        flagged_honest_groups=sum(1 for t in null_holds if t.reported),
        ranked_first=top is not None and top.players in inside,
    )


RUNNERS["family"] = run_family


@dataclass(frozen=True, slots=True)
class PowerRow:
    """One family × intensity × shared hands × seating: rooms found, with the Wilson 95% interval."""

    family: str
    held_out: bool
    intensity: float
    shared: int
    seating: str
    rooms: int
    found: int
    ranked_first: int
    honest_flagged: int  # honest pairs flagged in these rooms
    honest_pairs: int
    rooms_with_false: int  # rooms with any false discovery
    mean_shared: float  # the planted pairs' mean shared hands, measured

    @property
    def interval(self) -> tuple[float | None, float | None]:
        return wilson(self.found, self.rooms)

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "family": self.family,
            "held_out": self.held_out,
            "intensity": self.intensity,
            "shared": self.shared,
            "seating": self.seating,
            "rooms": self.rooms,
            "found": self.found,
            "low": None if low is None else round(low, 4),
            "high": None if high is None else round(high, 4),
            "ranked_first": self.ranked_first,
            "honest_pairs_flagged": self.honest_flagged,
            "honest_pairs": self.honest_pairs,
            "rooms_with_false": self.rooms_with_false,
            "mean_shared": round(self.mean_shared, 1),
        }


def power_rows(outcomes: Iterable[Outcome]) -> list[PowerRow]:
    """The family rooms of ``outcomes`` pooled per family × intensity × shared hands × seating (in the order
    they first appear)."""
    groups: dict[tuple[str, float, int, str], list[Outcome]] = {}
    for o in outcomes:
        pop = o.population
        if isinstance(pop, FamilyPopulation) and pop.family:
            groups.setdefault((pop.family, pop.intensity, pop.shared, pop.seating), []).append(o)
    return [
        PowerRow(
            family=family,
            held_out=family not in TUNING,
            intensity=intensity,
            shared=shared,
            seating=seating,
            rooms=len(group),
            found=sum(1 for o in group if o.flagged_planted),
            ranked_first=sum(1 for o in group if isinstance(o, FamilyOutcome) and o.ranked_first),
            honest_flagged=sum(o.flagged_honest for o in group),
            honest_pairs=sum(o.honest for o in group),
            rooms_with_false=sum(1 for o in group if o.false),
            mean_shared=sum(o.shared_planted for o in group) / len(group),
        )
        for (family, intensity, shared, seating), group in groups.items()
    ]


def family_table(outcomes: list[Outcome], fdr: float) -> str:
    """The Markdown tables of ``eval-collusion --family``: the tuning families, then the held-out ones
    (labelled), per family × intensity × shared hands × seating the rooms found with the Wilson 95% interval,
    the planted pair ranked first, the honest pairs flagged and the rooms with a false discovery; then the honest
    rooms' false discovery rate with its interval."""
    rows = power_rows(outcomes)
    lines: list[str] = []
    for held_out, title in ((False, "tuning families"), (True, "HELD-OUT families (not used to tune the screen)")):
        part = [r for r in rows if r.held_out == held_out]
        if not part:
            continue
        lines += [
            f"{title}:",
            f"| family | intensity | shared hands (measured) | seating | rooms found at FDR {fdr} [95% CI] "
            "| planted pair ranked first | honest pairs flagged | rooms with a false discovery |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in part:
            lines.append(
                f"| {r.family} | {r.intensity} | {r.shared} ({r.mean_shared:.0f}) | {r.seating} | "
                f"{_rate(r.found, r.rooms)} | {r.ranked_first}/{r.rooms} | {r.honest_flagged}/{r.honest_pairs} | "
                f"{r.rooms_with_false}/{r.rooms} |"
            )
        lines.append("")
    honest = [o for o in outcomes if o.planted == 0]
    if honest:
        lines.append(honest_line(honest))
    return "\n".join(lines).rstrip("\n")


def honest_line(honest: list[Outcome]) -> str:
    """The honest rooms' false discovery rate: rooms with any false discovery, with the Wilson 95% interval."""
    with_false = sum(1 for o in honest if o.false)
    pairs = sum(o.honest for o in honest)
    groups = sum(o.honest_groups for o in honest)
    mixes = sorted({o.population.mix for o in honest if isinstance(o.population, FamilyPopulation)})
    return (
        f"Honest rooms ({', '.join(mixes) or 'mixed'} style mixes, half with honest friends who sit together): "
        f"{_rate(with_false, len(honest))} with any false discovery "
        f"({sum(o.flagged_honest for o in honest)} of {pairs} pairs flagged, "
        f"{sum(o.flagged_honest_groups for o in honest)} of {groups} groups of three reported)."
    )


def power_table(outcomes: list[Outcome], *, command: str, date: str, fdr: float) -> dict[str, Any]:
    """The power table the collusion screen quotes (``pipeline/audit/collusion_power.json``; its shape is in the
    module's docstring)."""
    honest = [o for o in outcomes if o.planted == 0]
    with_false = sum(1 for o in honest if o.false)
    low, high = wilson(with_false, len(honest))
    return {
        "command": command,
        "date": date,
        "fdr": fdr,
        "players": ROOM_PLAYERS,
        "tuning": list(TUNING),
        "held_out_families": list(HELD_OUT),
        "rows": [r.as_dict() for r in power_rows(outcomes)],
        "honest": {
            "rooms": len(honest),
            "with_false": with_false,
            "low": None if low is None else round(low, 4),
            "high": None if high is None else round(high, 4),
        },
    }


# ---------------------------------------------------------------------------------------------- think time
THINK_PLAYERS = 16  # a room like the outside ones


@dataclass(frozen=True, slots=True)
class ThinkPopulation(Population):
    """A room of :data:`THINK_PLAYERS` players with decision times (``simulate --timing``) and ``relays``
    players whose times are flat (``--inject relay=N``), or ``follow`` > 0: one engine follower at that share
    (``--inject follow=1:P[:evasive]``: its consulted decisions take the time of asking), or neither (an honest
    room)."""

    relays: int = 0
    players: int = THINK_PLAYERS
    follow: float = 0.0
    evasive: bool = False


def think_grid(
    *,
    seed: int = 1,
    hands: int = 500,
    relays: int = 1,
    replicates: int = 10,
    honest: int = 10,
    follow: float | None = None,
) -> list[Population]:
    """``replicates`` rooms of ``hands`` hands with ``relays`` relays (``follow``: one engine follower at that
    share, and as many rooms with an evasive one), and ``honest`` rooms of the same size with times and no relay;
    the honest rooms cycle through the realistic, reckless and careful style mixes."""

    def room(name: str, room_seed: int, styles: dict[str, float] | None = None, **planted: Any) -> ThinkPopulation:
        return ThinkPopulation(f"{name} × {hands}", hands, 0.0, 0, 0, room_seed, styles, **planted)

    if follow is None:
        kind = "relay" if relays == 1 else f"{relays} relays"
        out: list[Population] = [room(kind, seed + k, relays=relays) for k in range(replicates)]
    else:
        out = [room(f"follow {follow:g}", seed + k, follow=follow) for k in range(replicates)]
        out += [
            room(f"follow {follow:g} evasive", seed + 500 + k, follow=follow, evasive=True) for k in range(replicates)
        ]
    mixes = (None, HONEST_MIX, CAREFUL_MIX)
    out += [room("honest", seed + 1000 + k, mixes[k % 3]) for k in range(honest)]
    return out


def run_think(pop: Population, *, fdr: float = 0.05, workdir: str | None = None, cache: str | None = None) -> Outcome:
    """Simulate with times, ingest and run the think-time screen (``xuezhan think-time``: the timed records read
    back from the warehouse) on one room; the planted players are the relays (the follower)."""

    from pipeline.audit.think import read_timed, screen, timed_hands

    assert isinstance(pop, ThinkPopulation)
    with _population_dir(pop, workdir, cache) as root:
        labels = _simulate(pop, root)
        with connect(root / "wh") as con:
            hands = timed_hands(con)
        missing: list[Any] = []
        rows = screen(read_timed(hands, missing), fdr=fdr)
    planted = set(labels.get("relays", [])) | {f["player"] for f in labels.get("followers", [])}
    return players_outcome(pop, [t for t in rows if t.p is not None], planted, lambda t: t.decisions)


def players_outcome(pop: Population, tested: Sequence[Any], planted: set[str], size: Callable[[Any], int]) -> Outcome:
    """The outcome of a screen of players (``tested``: each result with ``player``, ``flagged`` and ``p``) against
    the ``planted`` players; ``shared_planted``: the planted players' mean ``size`` (decisions, hands)."""
    sizes = [size(t) for t in tested if t.player in planted]
    return Outcome(
        population=pop,
        planted=len(planted),
        flagged_planted=sum(t.flagged for t in tested if t.player in planted),
        honest=sum(t.player not in planted for t in tested),
        flagged_honest=sum(t.flagged for t in tested if t.player not in planted),
        shared_planted=sum(sizes) / len(sizes) if sizes else 0.0,
        scores=tuple((-math.log10(max(t.p or 1.0, 1e-300)), t.player in planted) for t in tested),
    )


RUNNERS["think"] = run_think


# ---------------------------------------------------------------------------------------------- engine assistance
ASSIST_PLAYERS = 8  # each sits in about half the hands
# Rooms with strong honest players (the hard negatives: the expert style), beside the usual ones.
EXPERT_MIX = {"balanced": 0.3, "aggressive": 0.15, "defensive": 0.15, "novice": 0.1, "expert": 0.3}
EXPERTS_MIX = {"balanced": 0.3, "defensive": 0.2, "expert": 0.5}


@dataclass(frozen=True, slots=True)
class AssistPopulation(Population):
    """A room of :data:`ASSIST_PLAYERS` players with ``followers`` engine followers at ``share`` (``--inject
    follow=N:P[:evasive]``), or with one *calculator* (``calculator`` > 0: an honest player whose reviewed
    decisions are replaced, after the simulation, by the reference policy's own first choice on that share of
    its non-forced decisions: a follower of an efficiency calculator like the yardstick; the hand's course is
    not changed), or neither (an honest room)."""

    followers: int = 0
    share: float = 0.0
    evasive: bool = False
    calculator: float = 0.0
    players: int = ASSIST_PLAYERS
    notice: float | None = None  # every player's Style.notice (simulate --notice); None: the styles' own (1)
    # the screen's yardstick (assist --yardstick; None: the reference policy): not the room's, so not in its name or
    # its cache key (the same rooms are screened by either)
    engine: str | None = field(default=None, repr=False, compare=False)


def assist_grid(
    *,
    seed: int = 1,
    hands: int = 1000,
    share: float = 0.5,
    replicates: int = 10,
    honest: int = 10,
    evasive: bool = True,
    calculator: bool = True,
    players: int = ASSIST_PLAYERS,
    notice: float | None = None,
    engine: str | None = None,
) -> list[Population]:
    """``replicates`` rooms of ``players`` players with one follower at ``share`` whose hands number about
    ``hands`` (every player sits in about 4/``players`` of the room's hands: the room of 8 plays twice
    ``hands``), as many with an evasive follower and (``calculator``) with a calculator, and ``honest`` rooms;
    every room has expert players (:data:`EXPERT_MIX`; the honest rooms alternate it with :data:`EXPERTS_MIX`).
    Rooms of other sizes than :data:`ASSIST_PLAYERS` are named by it (their cache keys differ by it too), and so
    are rooms whose players count the tiles in view with ``notice`` (:attr:`~pipeline.simulate.styles.Style.notice`).
    ``engine``: the screen's yardstick is that engine (``assist --yardstick``), and there are no calculator rooms."""
    if players < 4:
        raise ValueError(f"a room needs at least 4 players, got {players}")
    total = round(hands * players / 4)
    size = "" if players == ASSIST_PLAYERS else f" · {players} players"
    size += "" if notice is None else f" · notice {notice:g}"

    def room(kind: str, room_seed: int, styles: dict[str, float], **planted: Any) -> AssistPopulation:
        return AssistPopulation(
            f"{kind} × {hands}{size}",
            total,
            0.0,
            0,
            0,
            room_seed,
            styles,
            players=players,
            notice=notice,
            engine=engine,
            **planted,
        )

    out: list[Population] = [
        room(f"follow {share}", seed + k, EXPERT_MIX, followers=1, share=share) for k in range(replicates)
    ]
    if evasive:
        out += [
            room(f"follow {share} evasive", seed + 500 + k, EXPERT_MIX, followers=1, share=share, evasive=True)
            for k in range(replicates)
        ]
    if calculator and engine is None:
        out += [room(f"calculator {share}", seed + 700 + k, EXPERT_MIX, calculator=share) for k in range(replicates)]
    mixes = (EXPERT_MIX, EXPERTS_MIX)
    out += [room("honest", seed + 1000 + k, mixes[k % 2]) for k in range(honest)]
    return out


def run_assist(pop: Population, *, fdr: float = 0.05, workdir: str | None = None, cache: str | None = None) -> Outcome:
    """Simulate, ingest and run the engine-assistance screen (``xuezhan assist``: every reviewable hand read
    back and reviewed) on one room; the planted players are the followers (or the calculator)."""
    import dataclasses
    import random

    from pipeline.audit.assist import screen as screen_assist
    from pipeline.audit.decisions import DecisionRow, decision_hands, decision_rows

    assert isinstance(pop, AssistPopulation)
    with simulated(pop, workdir=workdir, cache=cache) as (warehouse, labels):
        with connect(warehouse) as con:
            hands = decision_hands(con)
        missing: list[Any] = []
        rows: Iterable[DecisionRow] = decision_rows(hands, missing, engine=pop.engine)
        planted = {f["player"] for f in labels.get("followers", [])}
        if pop.calculator > 0:
            styles = labels["players"]
            chosen = min(p for p in styles if styles[p]["style"] != "novice")
            planted = {chosen}
            rng = random.Random(pop.seed)
            rows = (
                dataclasses.replace(r, agreed=True)
                if r.player == chosen and r.non_forced and rng.random() < pop.calculator
                else r
                for r in rows
            )
        result = screen_assist(rows, fdr=fdr, evidence=0)
    return players_outcome(pop, [a for a in result if a.p is not None], planted, lambda a: a.hands)


RUNNERS["assist"] = run_assist
