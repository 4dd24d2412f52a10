"""A simulated room: a player pool, random matchmaking into tables, sessions of several hands with the
dealer rule, injections, ground-truth labels and a realism summary.

:func:`simulate` yields the output lines in order; the same :class:`SimConfig` gives the same lines, byte for
byte. :func:`write` puts them in a file (``.jsonl``, ``.jsonl.gz`` or ``.jsonl.zst``) and the labels beside it.
"""

from __future__ import annotations

import functools
import io
import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pipeline.game.policy import difficulties
from pipeline.outfile import compressed
from pipeline.rules.ruleset import load_ruleset
from pipeline.simulate import timing
from pipeline.simulate.bots import Collusion, Follow
from pipeline.simulate.families import FEEDING, Family
from pipeline.simulate.inject import Fault, InjectSpec, corrupt_record, inject_score_error, stack_deals
from pipeline.simulate.play import PlayedHand, Seating, play_hand
from pipeline.simulate.styles import Player, make_pool

START = datetime(2026, 11, 1, 19, 0, tzinfo=timezone(timedelta(hours=8)))


@dataclass(frozen=True, slots=True)
class SimConfig:
    hands: int
    seed: int = 0
    players: int = 16
    profile: str = "chengdu"
    inject: InjectSpec = field(default_factory=InjectSpec)
    session_hands: int = 8  # hands per table session
    styles: dict[str, float] | None = None  # style mix of the pool (default: a realistic room)
    together: float = 0.5  # chance a colluder's partner joins a table the colluder sits at
    timing: bool = False  # write each event's decision time (ms; pipeline.simulate.timing); on with relay=N
    notice: float | None = None  # every player's Style.notice (how many copies in view it counts); None: its style's


@dataclass
class Labels:
    """Ground truth of a simulated file, written as ``OUT.labels.json``."""

    seed: int
    players: dict[str, dict[str, Any]]
    colluders: list[dict[str, Any]]
    bots: list[str]
    friends: list[list[str]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    stackers: list[dict[str, Any]] = field(default_factory=list)  # {"player", "intensity"}: stack=N:I
    stacked: list[dict[str, Any]] = field(default_factory=list)  # {"hand_id", "seat", "player"}: the rigged deals
    # what the members of cheat-family groups did for their partners: {"hand_id", "event", "seat", "player",
    # "partner", "act"} (``event`` None for the exchange and the void)
    acts: list[dict[str, Any]] = field(default_factory=list)
    relays: list[str] = field(default_factory=list)  # relay=N: the players whose decision times are flat
    # follow=N:P[:evasive]: the engine followers, {"player", "share", "evasive"}
    followers: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The labels file's content; ``stackers`` and ``stacked`` only when deals were stacked, ``acts`` only
        when cheat families were planted (so a file made without them reads as it always did)."""
        out = {
            "seed": self.seed,
            "players": self.players,
            "colluders": self.colluders,
            "bots": self.bots,
            "friends": self.friends,
            "faults": [f.as_dict() for f in self.faults],
        }
        if self.stackers:
            out |= {"stackers": self.stackers, "stacked": self.stacked}
        if any("family" in c for c in self.colluders):
            out["acts"] = self.acts
        if self.relays:
            out["relays"] = self.relays
        if self.followers:
            out["followers"] = self.followers
        return out


@dataclass
class Summary:
    """Realism figures per style (see :meth:`rows`)."""

    per_style: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    hands: int = 0
    draws: int = 0  # 黄庄: the wall ran out with two or more players still in
    events: int = 0
    winners: int = 0

    def add(self, played: PlayedHand, seating: Seating) -> None:
        st = played.hand
        self.hands += 1
        self.events += len(st.events)
        self.winners += len(st.wins)
        self.draws += bool(st.ends)
        wins = {w.seat: w for w in st.wins}
        for seat, player in enumerate(seating.players):
            c = self.per_style[player.style.name]
            c["hands"] += 1
            win = wins.get(seat)
            if win:
                c["wins"] += 1
                c["fan"] += win.score.fan
            c["deal_in_hands"] += any(w.source == seat and w.how != "self_draw" for w in st.wins)
            end = st.ends.get(seat)
            c["pigs"] += bool(end and end.pig)

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for style in sorted(self.per_style):
            c = self.per_style[style]
            hands = c["hands"] or 1
            out.append(
                {
                    "style": style,
                    "seat_hands": c["hands"],
                    "win_rate": c["wins"] / hands,
                    "deal_in_rate": c["deal_in_hands"] / hands,
                    "avg_fan": c["fan"] / c["wins"] if c["wins"] else 0.0,
                    "hua_zhu_rate": c["pigs"] / hands,
                }
            )
        return out

    def text(self) -> str:
        lines = [
            f"hands {self.hands}; 黄庄 (wall ran out, 2+ still in) per hand {self.draws / max(1, self.hands):.3f}; "
            f"winners per hand {self.winners / max(1, self.hands):.2f}; "
            f"events per hand {self.events / max(1, self.hands):.1f}",
            f"{'style':<11}{'seat-hands':>11}{'win':>8}{'deal-in':>9}{'avg fan':>9}{'花猪':>8}",
        ]
        for r in self.rows():
            lines.append(
                f"{r['style']:<11}{r['seat_hands']:>11}{r['win_rate']:>8.3f}{r['deal_in_rate']:>9.3f}"
                f"{r['avg_fan']:>9.2f}{r['hua_zhu_rate']:>8.3f}"
            )
        return "\n".join(lines)


def make_labels(
    config: SimConfig,
) -> tuple[
    list[Player],
    list[tuple[Player, ...]],
    list[tuple[Player, Player]],
    set[str],
    dict[str, float],
    dict[str, Family],
    Labels,
]:
    """The pool, the colluding groups (the pairs, then the team, then the cheat families' groups), the honest
    friend pairs, the bots, each colluder's intensity and family, and the labels that name them."""
    rng = random.Random(f"pool-{config.seed}")
    pool = make_pool(config.players, rng, config.styles, config.notice)
    spec = config.inject
    ids = [p.id for p in pool]
    wanted = spec.players_needed
    if wanted > len(ids):
        raise ValueError(f"the injection needs {wanted} distinct players; the pool has {len(ids)}")
    chosen = rng.sample(ids, wanted)
    by_id = {p.id: p for p in pool}
    groups: list[tuple[Player, ...]] = [
        (by_id[chosen[2 * i]], by_id[chosen[2 * i + 1]]) for i in range(spec.collude_pairs)
    ]
    start = 2 * spec.collude_pairs
    friends = [(by_id[chosen[start + 2 * i]], by_id[chosen[start + 2 * i + 1]]) for i in range(spec.friends)]
    start += 2 * spec.friends
    bots = set(chosen[start : start + spec.bots])
    intensity = {p.id: spec.collude_intensity for group in groups for p in group}
    start += spec.bots
    if spec.team:
        team = tuple(by_id[i] for i in chosen[start : start + spec.team])
        groups.append(team)
        intensity |= {p.id: spec.team_intensity for p in team}
    start += spec.team
    stackers = chosen[start : start + spec.stack]
    start += spec.stack
    colluders: list[dict[str, Any]] = [
        {"players": [p.id for p in group], "intensity": intensity[group[0].id]} for group in groups
    ]
    family: dict[str, Family] = {p.id: FEEDING for group in groups for p in group}
    for cheat in spec.cheats:
        size = cheat.family.size
        for _ in range(cheat.groups):
            group = tuple(by_id[i] for i in chosen[start : start + size])
            start += size
            groups.append(group)
            intensity |= {p.id: cheat.intensity for p in group}
            family |= {p.id: cheat.family for p in group}
            colluders.append(
                {
                    "players": [p.id for p in group],
                    "intensity": cheat.intensity,
                    "family": cheat.family.name,
                    "seating": "chance" if cheat.family.seating == 0 else "together",
                    "knobs": cheat.family.knobs,
                }
            )
    relays = chosen[start : start + spec.relays]
    start += spec.relays
    followers: list[dict[str, Any]] = []
    for follow in spec.follows:
        followers += [
            {"player": i, "share": follow.share, "evasive": follow.evasive}
            for i in chosen[start : start + follow.players]
        ]
        start += follow.players
    labels = Labels(
        seed=config.seed,
        players={
            p.id: {"style": p.style.name, "skill": p.skill}
            | ({"notice": config.notice} if config.notice is not None else {})
            for p in pool
        },
        colluders=colluders,
        bots=sorted(bots),
        friends=[[a.id, b.id] for a, b in friends],
        stackers=[{"player": i, "intensity": spec.stack_intensity} for i in sorted(stackers)],
        relays=sorted(relays),
        followers=sorted(followers, key=lambda f: f["player"]),
    )
    return pool, groups, friends, bots, intensity, family, labels


def simulate(
    config: SimConfig, *, progress: Callable[[int], None] | None = None, summary: Summary | None = None
) -> tuple[Iterator[str], Labels]:
    """The output lines (one record each, except where a corruption writes none or two) and the labels,
    whose ``faults`` fill as the lines are consumed."""
    rules = load_ruleset(config.profile)
    if config.players < rules.players:
        raise ValueError(f"a room needs at least {rules.players} players (a table of profile {config.profile!r})")
    pool, groups, friends, bots, intensity, family, labels = make_labels(config)
    # each colluder's partners (one in a pair, the others in a team), and each player's companions at the table:
    # collude=, team= and friends= by the first seat's companions (config.together), the cheat families by
    # their seating bias wherever a member sits (``joins``)
    mates: dict[str, tuple[str, ...]] = {}
    for group in groups:
        for p in group:
            mates[p.id] = tuple(q.id for q in group if q is not p)
    legacy = {p: m for p, m in mates.items() if family[p] is FEEDING}
    joins = {p: (m, family[p].seating) for p, m in mates.items() if family[p] is not FEEDING}
    companion = legacy | {a.id: (b.id,) for a, b in friends} | {b.id: (a.id,) for a, b in friends}
    stackers = {s["player"]: s["intensity"] for s in labels.stackers}
    timed = config.timing or bool(labels.relays)
    relays = set(labels.relays)
    paces = {p.id: timing.pace(config.seed, p.id) for p in pool} if timed else {}
    follows = {f["player"]: Follow(f["share"], f["evasive"]) for f in labels.followers}

    def lines() -> Iterator[str]:
        rng = random.Random(config.seed)
        made = 0
        table = 0
        clock = START
        while made < config.hands:
            table += 1
            players = _seat_table(pool, companion, config.together, rng, rules.players, joins)
            at_table = {q.id: seat for seat, q in enumerate(players)}
            collusion = {}
            for seat, p in enumerate(players):
                present = tuple(sorted(at_table[m] for m in mates.get(p.id, ()) if m in at_table))
                if present:
                    collusion[seat] = Collusion(present, intensity[p.id], family[p.id])
            seating = Seating(
                tuple(players),
                collusion,
                frozenset(s for s, p in enumerate(players) if p.id in bots),
                {s: follows[p.id] for s, p in enumerate(players) if p.id in follows},
            )
            stacked = {s: stackers[p.id] for s, p in enumerate(players) if p.id in stackers}
            arrange = functools.partial(stack_deals, rules=rules, stacked=stacked) if stacked else None
            session_id = f"t{table:04d}-s1"
            dealer = rng.randrange(rules.players)
            for hand_no in range(1, config.session_hands + 1):
                if made >= config.hands:
                    break
                clock += timedelta(minutes=rng.randint(3, 9))
                played = play_hand(
                    rules,
                    config.profile,
                    seating,
                    dealer,
                    rng,
                    hand_id=f"{session_id}-h{hand_no:02d}",
                    session_id=session_id,
                    hand_no=hand_no,
                    table_id=f"t{table:04d}",
                    played_at=clock.isoformat(),
                    arrange=arrange,
                )
                made += 1
                if timed:
                    hand_id = played.record["hand_id"]
                    hard = difficulties(played.fresh_state(), played.hand.events)
                    times = timing.think_times(
                        played.hand.events,
                        hard,
                        [paces[p.id] for p in players],
                        {s for s, p in enumerate(players) if p.id in relays},
                        random.Random(f"timing-{config.seed}-{hand_id}"),
                        {(n.event, n.seat) for n in played.follows if n.asked},
                    )
                    timing.add_times(played.record, times)
                for seat in played.stacked:
                    labels.stacked.append(
                        {"hand_id": played.record["hand_id"], "seat": seat, "player": players[seat].id}
                    )
                for act in sorted(played.acts, key=lambda a: (a.event is not None, a.event or 0, a.seat)):
                    if family[players[act.seat].id] is not FEEDING:
                        labels.acts.append(
                            {
                                "hand_id": played.record["hand_id"],
                                "event": act.event,
                                "seat": act.seat,
                                "player": players[act.seat].id,
                                "partner": players[act.partner].id,
                                "act": act.act,
                            }
                        )
                if summary is not None:
                    summary.add(played, seating)
                dealer = played.hand.next_dealer
                out = [json.dumps(played.record, ensure_ascii=False, separators=(",", ":"))]
                if config.inject.score_errors and rng.random() < config.inject.score_errors:
                    fault = inject_score_error(played, rng)
                    if fault is not None:
                        labels.faults.append(fault)
                        out = [json.dumps(played.record, ensure_ascii=False, separators=(",", ":"))]
                if config.inject.corrupt and rng.random() < config.inject.corrupt:
                    out, fault = corrupt_record(played, rng)
                    labels.faults.append(fault)
                yield from out
                if progress is not None:
                    progress(1)

    return lines(), labels


def _seat_table(
    pool: list[Player],
    companion: dict[str, tuple[str, ...]],
    together: float,
    rng: random.Random,
    seats: int,
    joins: dict[str, tuple[tuple[str, ...], float]] | None = None,
) -> list[Player]:
    """``seats`` players at random; each of the first player's companions (a colluder's partners of
    ``collude=``/``team=``, or a friend) joins with probability ``together``; each partner of a cheat family's
    member (``joins``: member → its partners and the family's seating bias) joins with that bias whenever the
    member takes a seat and a seat is left (a bias of 0: no more often than chance)."""
    joins = joins or {}
    by_id = {p.id: p for p in pool}
    first = rng.choice(pool)
    chosen = [first]
    for mate in companion.get(first.id, ()):
        if rng.random() < together:
            chosen.append(by_id[mate])
    _bring(first, chosen, joins, by_id, rng, seats)
    while len(chosen) < seats:
        p = rng.choice(pool)
        if p not in chosen:
            chosen.append(p)
            _bring(p, chosen, joins, by_id, rng, seats)
    rng.shuffle(chosen)
    return chosen


def _bring(
    p: Player,
    chosen: list[Player],
    joins: dict[str, tuple[tuple[str, ...], float]],
    by_id: dict[str, Player],
    rng: random.Random,
    seats: int,
) -> None:
    """Seat the partners of a cheat family's member ``p`` who join it (each with the family's seating bias)."""
    mates, bias = joins.get(p.id, ((), 0.0))
    for mate in mates:
        if bias and len(chosen) < seats and by_id[mate] not in chosen and rng.random() < bias:
            chosen.append(by_id[mate])
            _bring(by_id[mate], chosen, joins, by_id, rng, seats)


def labels_path(out: str | Path) -> Path:
    """``games.jsonl.gz`` → ``games.labels.json``."""
    path = Path(out)
    name = path.name
    for suffix in (".jsonl.gz", ".jsonl.zst", ".jsonl"):
        if name.endswith(suffix):
            return path.with_name(name[: -len(suffix)] + ".labels.json")
    return path.with_name(name + ".labels.json")


def write(
    config: SimConfig, out: str | Path, *, progress: Callable[[int], None] | None = None, summary: Summary | None = None
) -> Labels:
    """Simulate into ``out`` (compressed by its suffix, deterministically) and write the labels beside it."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines, labels = simulate(config, progress=progress, summary=summary)
    part = path.with_name(f".{path.name}.part")  # a stopped run (Ctrl-C, a crash) leaves no half file under the name
    try:
        with part.open("wb") as raw, compressed(raw, path.name) as stream:
            text = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
            for line in lines:
                text.write(line)
                text.write("\n")
            text.detach()  # flushed; the stream is closed by compressed(), the file by open()
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    part.replace(path)
    labels_path(path).write_text(json.dumps(labels.as_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return labels
