"""Injected anomalies with their ground truth: the spec, and the faults applied to written records.

Spec (``--inject``), comma-separated ``name=value`` items:

- ``collude=P:I`` — ``P`` colluding pairs at intensity ``I`` (0–1): partners see each other's hands, discard
  a tile that wins for the partner with probability ``I`` (and one the partner can pong with ``I/2``), pong
  the partner's discards more readily, and sit at the same table more often than random matchmaking would;
- ``score_errors=F`` — a fraction ``F`` of records get one scoring error in ``result`` only;
- ``corrupt=F`` — a fraction ``F`` of records get one corruption of the record itself;
- ``bot=N`` — ``N`` players see the wall and every hand: they never deal in when they can avoid it, and wait on
  the tiles the wall still holds (of their ready discards, the one whose winning tiles have most copies left in it);
- ``team=K:I`` — one team of ``K`` colluders (2 or more; 3 in the court case of seed 000) at intensity ``I``:
  each plays for every teammate at the table as a colluding pair does, and each teammate joins a table a
  member sits at with the pair's chance, so the team often holds three seats against one victim;
- ``stack=N:I`` — ``N`` players whose deals are stacked (the wall arranged for them) in a share ``I`` of their
  hands (:func:`stack_deals`: the better of two deals);
- ``friends=N`` — ``N`` honest pairs who sit at the same table as often as colluders do (hard negatives for
  the collusion screen: they play for themselves);
- ``cheat=FAMILY:N:I[:knob=value...]`` — ``N`` colluding groups of a cheat family at intensity ``I`` (the item
  may be repeated, one family each). The families and their knobs (``seat=S``: the chance a partner joins a
  table a member sits at, ``seat=0`` for partners who sit together only by chance; ``size=K``; ``fan=N``;
  ``late=L``; ``cheap=N``) are documented in :mod:`pipeline.simulate.families`: ``feeding`` (``collude=``'s
  play), ``selective`` (feeds only wins worth ``fan`` fan or more), ``late`` (feeds only in the last ``late``
  tiles of the wall), ``soft`` (never throws into a partner's wait while it has another tile, never claims a
  win off a partner), ``passing`` (feeding, and passes cheap wins off the partner), ``kong`` (throws the
  partner's kong tiles), ``exchange`` (换三张 gifts and complementary 定缺), ``team`` (three who feed each
  other and play safe against the fourth), ``ready`` (feeds only once the partner is ready). Seating: a
  member seated at a table (anywhere, not only first) brings each partner with probability ``seat``. The
  labels name each group's ``family``, ``intensity``, ``players``, ``seating`` and ``knobs``, and list every
  act a member made for a partner (``acts``: hand, event, seat, partner, act);
- ``relay=N`` — ``N`` players whose decision times are flat (a person relaying a bot's moves, or a bot with a
  fixed delay): the same time, give or take a little, for an easy and a hard decision
  (:mod:`pipeline.simulate.timing`; it turns ``--timing`` on). The labels list them (``relays``);
- ``follow=N:P`` — ``N`` players who follow an engine (:mod:`pipeline.engines.lookahead`: a sampling look-ahead
  that sees only the seat's own tiles and the table, stronger than and different from the reference policy
  the screens judge by) on a share ``P`` (0–1) of their decisions with more than one option (discards, kongs,
  pongs and passes, wins), and play their own style otherwise (the 换三张 and 定缺 stay their own);
  ``follow=N:P:evasive`` — the same, but a follower keeps its own choice where the engine's best two options
  are close (within :data:`pipeline.simulate.bots.CLOSE` points), not to look like an engine. The item may be
  repeated (evasive and not in one room). The labels list them (``followers``: ``player``, ``share``,
  ``evasive``).

Fault kinds (the ``kind`` of each entry of the labels file's ``faults``):

=========================== ===================================================================
``score_wrong_fan``         a win's claimed fan (and its points and payments) one fan off
``score_missed_root``       a win's claimed fan one fan short where the hand holds a root (根)
``score_wrong_payer``       a win's payment charged to another seat
``score_missing_base``      a self-drawn win paid without the 自摸加底 base
``score_wrong_kong``        a kong payment of the wrong amount
``score_wrong_cha_jiao``    a 查大叫 payment of the wrong amount
``out_of_turn``             a discard attributed to the wrong seat
``discard_not_held``        a discard of a tile the seat does not hold
``draw_not_wall``           a draw that is not the wall's next tile
``fifth_copy``              the record's deal holds a fifth copy of a tile
``false_win``               a hu inserted on a hand that does not win (诈胡)
``missing_draw``            a draw removed: the seat plays one tile short (小相公)
``truncated``               the record stops part-way through the hand
``duplicated``              the record is written twice
``broken_json``             the line is cut off part-way (not JSON)
=========================== ===================================================================

Score errors keep the claim self-consistent (deltas are the net of the changed payments), as a buggy
scoring system would produce them.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass
from typing import Any

from pipeline.game.start import DEAL_SIZE, deal_hands, dealt
from pipeline.rules.hand import deal_shanten
from pipeline.rules.ruleset import RuleSet
from pipeline.rules.tiles import KIND_BY_NAME, TILE_NAMES, counts_of
from pipeline.simulate.families import FAMILIES, Family
from pipeline.simulate.play import PlayedHand

SCORE_KINDS = (
    "score_wrong_fan",
    "score_missed_root",
    "score_wrong_payer",
    "score_missing_base",
    "score_wrong_kong",
    "score_wrong_cha_jiao",
)
CORRUPT_KINDS = (
    "out_of_turn",
    "discard_not_held",
    "draw_not_wall",
    "fifth_copy",
    "false_win",
    "missing_draw",
    "truncated",
    "duplicated",
    "broken_json",
)


class SpecError(ValueError):
    """An ``--inject`` spec that cannot be read."""


@dataclass(frozen=True, slots=True)
class Cheat:
    """``cheat=FAMILY:N:I[:knob=value...]``: ``groups`` colluding groups of ``family`` at ``intensity``."""

    family: Family
    groups: int
    intensity: float

    @classmethod
    def parse(cls, value: str) -> Cheat:
        """``"soft:1:0.5:seat=0"`` → the cheat; ``ValueError`` for what cannot be read."""
        name, *rest = value.split(":")
        if name not in FAMILIES:
            raise SpecError(f"unknown cheat family {name!r} (known: {', '.join(FAMILIES)})")
        if len(rest) < 2:
            raise SpecError(f"cheat={value!r}: give the groups and the intensity (cheat=FAMILY:N:I)")
        knobs: dict[str, str] = {}
        for knob in rest[2:]:
            key, sep, setting = knob.partition("=")
            if not sep:
                raise SpecError(f"cheat={value!r}: a knob is key=value, got {knob!r}")
            knobs[key] = setting
        return cls(FAMILIES[name].with_knobs(knobs), int(rest[0]), float(rest[1]))


@dataclass(frozen=True, slots=True)
class Following:
    """``follow=N:P[:evasive]``: ``players`` engine followers at share ``share``."""

    players: int
    share: float
    evasive: bool = False

    @classmethod
    def parse(cls, value: str) -> Following:
        """``"2:0.5:evasive"`` → the followers; ``ValueError`` for what cannot be read."""
        parts = value.split(":")
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "evasive"):
            raise SpecError(f"follow={value!r}: give the players and the share (follow=N:P or follow=N:P:evasive)")
        return cls(int(parts[0]), float(parts[1]), len(parts) == 3)


@dataclass(frozen=True, slots=True)
class InjectSpec:
    collude_pairs: int = 0
    collude_intensity: float = 0.0
    score_errors: float = 0.0
    corrupt: float = 0.0
    bots: int = 0
    friends: int = 0
    team: int = 0  # the size of the one colluding team (0: none)
    team_intensity: float = 0.0
    stack: int = 0  # players whose deals are stacked
    stack_intensity: float = 0.0  # the share of their hands stacked
    cheats: tuple[Cheat, ...] = ()  # groups of the cheat families (cheat=FAMILY:N:I)
    relays: int = 0  # players whose decision times are flat (relay=N)
    follows: tuple[Following, ...] = ()  # engine followers (follow=N:P[:evasive])

    @classmethod
    def parse(cls, text: str | None, *, players: int | None = None) -> InjectSpec:
        """``"collude=2:0.3,score_errors=0.02,corrupt=0.01,bot=1"`` → spec. With ``players`` (the size of the
        pool), a spec that needs more distinct players than the pool holds is refused here, with the count."""
        if not text:
            return cls()
        values: dict[str, Any] = {}
        for item in (p.strip() for p in text.split(",")):
            if not item:
                continue
            name, sep, value = item.partition("=")
            try:
                if name == "collude" and sep:
                    pairs, _, intensity = value.partition(":")
                    values["collude_pairs"], values["collude_intensity"] = int(pairs), float(intensity or 0.3)
                elif name in ("score_errors", "corrupt") and sep:
                    values[name] = float(value)
                elif name == "bot" and sep:
                    values["bots"] = int(value)
                elif name == "stack" and sep:
                    count, _, intensity = value.partition(":")
                    values["stack"], values["stack_intensity"] = int(count), float(intensity or 0.5)
                elif name == "friends" and sep:
                    values["friends"] = int(value)
                elif name == "team" and sep:
                    size, _, intensity = value.partition(":")
                    values["team"], values["team_intensity"] = int(size), float(intensity or 0.3)
                elif name == "relay" and sep:
                    values["relays"] = int(value)
                elif name == "follow" and sep:
                    values["follows"] = (*values.get("follows", ()), Following.parse(value))
                elif name == "cheat" and sep:
                    values["cheats"] = (*values.get("cheats", ()), Cheat.parse(value))
                else:
                    raise SpecError(
                        f"unknown injection {item!r} (known: collude=P:I, score_errors=F, corrupt=F, bot=N, "
                        "friends=N, team=K:I, stack=N:I, cheat=FAMILY:N:I, relay=N, follow=N:P, follow=N:P:evasive)"
                    )
            except ValueError as exc:
                if isinstance(exc, SpecError):
                    raise
                raise SpecError(f"cannot read {item!r}: {exc}") from None
        spec = cls(**values)
        for name in ("collude_intensity", "team_intensity", "stack_intensity", "score_errors", "corrupt"):
            if not 0.0 <= getattr(spec, name) <= 1.0:
                raise SpecError(f"{name} must be between 0 and 1")
        if min(spec.collude_pairs, spec.bots, spec.friends, spec.team, spec.stack, spec.relays) < 0:
            raise SpecError("counts must not be negative")
        for cheat in spec.cheats:
            if cheat.groups < 0:
                raise SpecError("counts must not be negative")
            if not 0.0 <= cheat.intensity <= 1.0:
                raise SpecError(f"the intensity of cheat={cheat.family.name} must be between 0 and 1")
        for follow in spec.follows:
            if follow.players < 0:
                raise SpecError("counts must not be negative")
            if not 0.0 <= follow.share <= 1.0:
                raise SpecError("the share of follow=N:P must be between 0 and 1")
        if spec.team == 1:
            raise SpecError("a team needs at least 2 players (team=K:I)")
        if players is not None and spec.players_needed > players:
            raise SpecError(
                f"{text!r} needs {spec.players_needed} distinct players (2 per colluding or friend pair, 1 per bot, "
                "K for a team, 1 per stacked player, the size of each cheat group, 1 per relay, 1 per follower); "
                f"the pool has {players} (raise --players)"
            )
        return spec

    @property
    def players_needed(self) -> int:
        """Distinct players the injection takes from the pool."""
        cheats = sum(c.groups * c.family.size for c in self.cheats)
        follows = sum(f.players for f in self.follows)
        return (
            2 * self.collude_pairs
            + 2 * self.friends
            + self.bots
            + self.team
            + self.stack
            + cheats
            + self.relays
            + follows
        )


@dataclass(frozen=True, slots=True)
class Fault:
    hand_id: str
    kind: str
    event: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"hand_id": self.hand_id, "kind": self.kind, "event": self.event}


# ---------------------------------------------------------------------------------------------- stacked deals
def stack_deals(
    wall: list[int], dealer: int, rng: random.Random, *, rules: RuleSet, stacked: dict[int, float]
) -> tuple[int, ...]:
    """Stack the deal of each seat of ``stacked`` (seat → the share of its hands stacked) in the shuffled
    ``wall``, in place: in that share of hands, as many tiles as the seat is dealt are taken from random places
    of the rest of the wall (the draws), and when those make a better starting hand
    (:func:`~pipeline.rules.hand.deal_shanten`), the two sets change places. The better of two deals; the seats
    whose deal was arranged so are returned (a second deal no better leaves the wall as it was, but the seat is
    still named: the labels say which hands were rigged, not which came out better).

    Why this model: the seeds' court case (seed 000) is a team at an automatic table who lifted and rubbed
    tiles (提牌, 搓牌) to give one of them better tiles. Such a team cannot choose every tile of every deal: a
    lifted tile is swapped for one already built into the wall, and a rigged machine or a hand that builds the
    wall works on some hands and not others. So the stacked hand is what a fair shuffle deals, improved by a
    choice between it and a second random hand from the same wall, in a share ``I`` of the player's hands (at a
    table of three suits the second hand is the better in 31% of stacked deals, and the stacked deal is 0.39 of
    a step of shanten better than a fair one on average: pipeline/audit/deals.py); the wall stays
    a permutation of the tiles, so the record is legal and conserves every tile (the validator passes it), and
    nothing in play changes but the tiles.

    >>> from pipeline.rules.ruleset import load_ruleset
    >>> from pipeline.rules.tiles import full_set
    >>> wall = full_set()
    >>> random.Random(3).shuffle(wall)
    >>> before = sorted(wall)
    >>> stack_deals(wall, 0, random.Random(5), rules=load_ruleset("chengdu"), stacked={2: 1.0})
    (2,)
    >>> sorted(wall) == before
    True
    """
    n = rules.players
    choose_void = len(rules.suits) == 3
    done: list[int] = []
    for seat, share in sorted(stacked.items()):
        if rng.random() >= share:
            continue
        done.append(seat)
        k = (seat - dealer) % n
        mine = list(range(DEAL_SIZE * k, DEAL_SIZE * k + DEAL_SIZE))
        if seat == dealer:
            mine.append(DEAL_SIZE * n)
        other = rng.sample(range(dealt(n), len(wall)), len(mine))
        now = deal_shanten(counts_of(wall[i] for i in mine), choose_void=choose_void)
        alternative = deal_shanten(counts_of(wall[i] for i in other), choose_void=choose_void)
        if alternative < now:
            for i, j in zip(mine, other, strict=True):
                wall[i], wall[j] = wall[j], wall[i]
    return tuple(done)


# ---------------------------------------------------------------------------------------------- scoring errors
def inject_score_error(played: PlayedHand, rng: random.Random) -> Fault | None:
    """Change the record's ``result`` in place with one scoring error of a kind that applies; ``None`` if none does."""
    record, rules = played.record, played.hand.rules
    result = record.get("result")
    if not result:
        return None
    options = [kind for kind in SCORE_KINDS if _SCORE[kind](played, rules, rng, dry=True) is not None]
    if not options:
        return None
    kind = rng.choice(options)
    event = _SCORE[kind](played, rules, rng, dry=False)
    _recompute_deltas(result)
    return Fault(record["hand_id"], kind, event)


def _recompute_deltas(result: dict[str, Any]) -> None:
    deltas = [0] * len(result["deltas"])
    for p in result["payments"]:
        deltas[p["from"]] -= p["amount"]
        if p["to"] is not None:  # a payment to the pot (sbr's penalties) leaves the table
            deltas[p["to"]] += p["amount"]
    result["deltas"] = deltas


def _win_events(record: dict[str, Any]) -> list[dict[str, Any]]:
    return list(record["result"].get("wins", []))


def _rescale_win(record: dict[str, Any], rules: RuleSet, win: dict[str, Any], fan: int) -> None:
    """Set a claimed win's fan and make its points and payments agree."""
    old_points = win["points"]
    win["fan"] = fan
    win["points"] = rules.points(fan)
    for p in record["result"]["payments"]:
        if p["reason"] == "hu" and p["event"] == win["event"] and p["to"] == win["seat"]:
            p["amount"] += win["points"] - old_points


def _wrong_fan(played: PlayedHand, rules: RuleSet, rng: random.Random, *, dry: bool) -> int | None:
    record = played.record
    wins = [w for w in _win_events(record) if not rules.cap or w["fan"] < rules.cap]
    if not wins:
        return None
    if dry:
        return wins[0]["event"]
    win = rng.choice(wins)
    # up from the lowest fans (1, or 0 where a plain hand counts none: sbr), never to a fan no win has
    _rescale_win(record, rules, win, win["fan"] + (1 if win["fan"] <= 1 or rng.random() < 0.5 else -1))
    return win["event"]


def _missed_root(played: PlayedHand, rules: RuleSet, rng: random.Random, *, dry: bool) -> int | None:
    record = played.record
    rooted = {w.event for w in played.hand.wins if any(p.id == "gen" for p in w.score.patterns)}
    wins = [
        w
        for w in _win_events(record)
        if w["event"] in rooted and w["fan"] > 1 and (not rules.cap or w["fan"] <= rules.cap)
    ]
    if not wins:
        return None
    if dry:
        return wins[0]["event"]
    win = rng.choice(wins)
    _rescale_win(record, rules, win, win["fan"] - 1)
    return win["event"]


def _wrong_payer(played: PlayedHand, rules: RuleSet, rng: random.Random, *, dry: bool) -> int | None:
    record = played.record
    pays = [p for p in record["result"]["payments"] if p["reason"] == "hu"]
    if not pays:
        return None
    if dry:
        return pays[0]["event"]
    p = rng.choice(pays)
    seats = len(record["players"])
    p["from"] = rng.choice([s for s in range(seats) if s not in (p["from"], p["to"])])
    return p["event"]


def _missing_base(played: PlayedHand, rules: RuleSet, rng: random.Random, *, dry: bool) -> int | None:
    record = played.record
    if rules.self_draw != "base":
        return None
    self_wins = [e for e, ev in enumerate(record["events"]) if ev["t"] == "hu" and ev["from"] is None]
    pays = [
        p
        for p in record["result"]["payments"]
        if p["reason"] == "hu" and p["event"] in self_wins and p["amount"] > rules.base
    ]
    if not pays:
        return None
    if dry:
        return pays[0]["event"]
    event = rng.choice(pays)["event"]
    for p in record["result"]["payments"]:
        if p["reason"] == "hu" and p["event"] == event:
            p["amount"] -= rules.base
    return event


def _wrong_kong(played: PlayedHand, rules: RuleSet, rng: random.Random, *, dry: bool) -> int | None:
    record = played.record
    pays = [p for p in record["result"]["payments"] if p["reason"] == "kong"]
    if not pays:
        return None
    if dry:
        return pays[0]["event"]
    p = rng.choice(pays)
    p["amount"] += rules.base
    return p["event"]


def _wrong_cha_jiao(played: PlayedHand, rules: RuleSet, rng: random.Random, *, dry: bool) -> int | None:
    record = played.record
    pays = [p for p in record["result"]["payments"] if p["reason"] == "cha_jiao"]
    if not pays:
        return None
    if dry:
        return -1
    p = rng.choice(pays)
    p["amount"] = p["amount"] * 2
    return None


_SCORE = {
    "score_wrong_fan": _wrong_fan,
    "score_missed_root": _missed_root,
    "score_wrong_payer": _wrong_payer,
    "score_missing_base": _missing_base,
    "score_wrong_kong": _wrong_kong,
    "score_wrong_cha_jiao": _wrong_cha_jiao,
}


# ---------------------------------------------------------------------------------------------- corruption
def corrupt_record(played: PlayedHand, rng: random.Random) -> tuple[list[str], Fault]:
    """One corruption of the record: the lines to write instead of the record's one line, and its fault."""
    kind = rng.choice(CORRUPT_KINDS)
    rec = copy.deepcopy(played.record)
    hand_id = rec["hand_id"]
    events = rec["events"]
    event: int | None = None
    if kind == "duplicated":
        line = json.dumps(rec, ensure_ascii=False)
        return [line, line], Fault(hand_id, kind, None)
    if kind == "broken_json":
        line = json.dumps(rec, ensure_ascii=False)
        return [line[: rng.randrange(10, len(line) - 1)]], Fault(hand_id, kind, None)
    if kind == "truncated":
        event = rng.randrange(1, max(2, len(events) - 1))
        del events[event:]
        rec.pop("result", None)
    elif kind == "fifth_copy":
        wall = [KIND_BY_NAME[t] for t in rec.pop("wall")]
        seats = len(rec["players"])
        hands = deal_hands(wall, rec["dealer"], seats)
        counts = [0] * 27
        for h in hands:
            for k in h:
                counts[k] += 1
        kind_most = max(range(27), key=lambda k: counts[k])
        victim = (rec["dealer"] + 1) % seats
        replace = [i for i, k in enumerate(hands[victim]) if k != kind_most][: 5 - counts[kind_most]]
        for i in replace:
            hands[victim][i] = kind_most
        rec["deal"] = [[TILE_NAMES[k] for k in h] for h in hands]
    else:
        event = _corrupt_event(played, rec, kind, rng)
        if event is None:  # nothing of that kind to corrupt here: draw another kind
            return corrupt_record(played, rng)
    return [json.dumps(rec, ensure_ascii=False)], Fault(hand_id, kind, event)


def _corrupt_event(played: PlayedHand, rec: dict[str, Any], kind: str, rng: random.Random) -> int | None:
    events = rec["events"]
    picks = {
        "out_of_turn": [i for i, e in enumerate(events) if e["t"] == "discard"],
        "discard_not_held": [i for i, e in enumerate(events) if e["t"] == "discard"],
        "draw_not_wall": [i for i, e in enumerate(events) if e["t"] == "draw"],
        "missing_draw": [
            i
            for i, e in enumerate(events)
            if e["t"] == "draw"
            and i + 1 < len(events)
            and events[i + 1]["t"] == "discard"
            and events[i + 1]["seat"] == e["seat"]
        ],
        "false_win": [i for i, e in enumerate(events) if e["t"] == "discard"],
    }[kind]
    if not picks:
        return None
    i = rng.choice(picks)
    ev = events[i]
    if kind == "out_of_turn":
        ev["seat"] = rng.choice([s for s in range(len(rec["players"])) if s != ev["seat"]])
    elif kind == "draw_not_wall":
        ev["tile"] = rng.choice([t for t in TILE_NAMES if t != ev["tile"]])
    elif kind == "missing_draw":
        del events[i]
    else:
        state = played.fresh_state()
        for done in played.hand.events[:i]:
            state.apply(done)
        seat = ev["seat"]
        if kind == "discard_not_held":
            absent = [k for k in range(27) if state.counts[seat][k] == 0]
            ev["tile"] = TILE_NAMES[rng.choice(absent)]
        else:  # false_win: a seat that cannot win on this discard claims it
            state.apply(played.hand.events[i])
            losers = [
                s
                for s in range(state.n)
                if s != seat and not state.won[s] and not state.can_win_with(s, KIND_BY_NAME[ev["tile"]])
            ]
            if not losers:
                return None
            events.insert(i + 1, {"t": "hu", "seat": rng.choice(losers), "tile": ev["tile"], "from": seat})
            return i + 1
    return i
