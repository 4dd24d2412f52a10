"""The pure step of ingest: raw lines in, Arrow tables out (validate → rows).

:func:`process_lines` knows nothing of files, workers or engines: the local process pool and Spark's
``mapInArrow`` both call it (the local pool then has :func:`encoded` turn the large tables into their Parquet
bytes, in the workers). Each line becomes either a stored record (rows in ``hands``, ``player_hands``,
``events``, ``wins``, ``payments``, ``issues``) or one row in ``rejects`` with a code and a reason. Whether a
record is new, a duplicate or a conflict is decided later, by whoever knows the warehouse.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.codes import CODES
from pipeline.game.events import Discard, Draw, Event, Hu, Kong, Pong, TurnCount
from pipeline.game.evidence import LUCK, WaitChoice
from pipeline.game.record import played_at_offset, played_at_time
from pipeline.game.start import exchange_offset, wall_after_deal
from pipeline.ingest.read import RawLine
from pipeline.ingest.warehouse import Encoded
from pipeline.rules.hand import deal_shanten
from pipeline.rules.tiles import SUITS, TILE_NAMES, counts_of
from pipeline.validate import Validation, validate_lines
from schemas.tables import REVIEW_TABLES, TABLES

RECORD_TABLES = ("hands", "player_hands", "events", "wait_choices", "wins", "payments", "issues")


class RecordKey(NamedTuple):
    """Identity of a processed record, for deduplication by the caller: ``position`` is the line's index in
    the chunk, and the ``_rec`` column of every record table row says which record it belongs to.

    A named tuple, as :class:`EncodedRows` is: the two cross from ingest's workers to its committer by pickle,
    and a frozen dataclass of a module compiled by mypyc cannot be unpickled (its ``__setstate__`` assigns
    fields, which frozen forbids)."""

    hand_id: str
    sha256: str
    position: int


@dataclass
class Rows:
    """Column lists per table for a chunk of lines."""

    columns: dict[str, dict[str, list[Any]]] = field(
        default_factory=lambda: {
            name: {f.name: [] for f in schema_of(name)} for name in TABLES if name not in REVIEW_TABLES
        }
    )
    keys: list[RecordKey] = field(default_factory=list)
    _built: dict[str, pa.Table] | None = field(default=None, repr=False)

    def add(self, table: str, **row: Any) -> None:
        """One row; a column not named is null."""
        self._built = None
        cols = self._named(table, row)
        for name, values in cols.items():
            values.append(row.get(name))

    def add_columns(self, table: str, rows: int, **columns: list[Any]) -> None:
        """``rows`` rows given column by column (each list ``rows`` long); a column not named is null."""
        self._built = None
        cols = self._named(table, columns)
        for name, values in cols.items():
            given = columns.get(name)
            if given is None:
                values.extend([None] * rows)
            elif len(given) == rows:
                values.extend(given)
            else:
                raise ValueError(f"{table}.{name}: {len(given)} values for {rows} rows")

    def _named(self, table: str, names: dict[str, Any]) -> dict[str, list[Any]]:
        cols = self.columns[table]
        if not names.keys() <= cols.keys():  # a misspelt column would otherwise be a silent null
            raise KeyError(f"{table} has no column(s) {sorted(names.keys() - cols.keys())}")
        return cols

    def extend(self, other: Rows, position: int) -> None:
        """Append ``other`` (the rows of the one line at ``position``), renumbering its records."""
        self._built = None
        offset = len(self.keys)
        for name, cols in other.columns.items():
            for column, values in cols.items():
                if column == REC.name:
                    values = [r + offset for r in values]
                self.columns[name][column].extend(values)
        self.keys.extend(RecordKey(k.hand_id, k.sha256, position) for k in other.keys)

    def mark(self) -> dict[str, int]:
        return {name: len(next(iter(cols.values()))) for name, cols in self.columns.items()}

    def rollback(self, mark: dict[str, int]) -> None:
        self._built = None
        for name, cols in self.columns.items():
            for values in cols.values():
                del values[mark[name] :]

    def tables(self) -> dict[str, pa.Table]:
        """The rows as Arrow tables, built once; one of :data:`UNSTORABLE` if a value does not fit."""
        if self._built is None:
            self._built = {
                name: pa.Table.from_pydict(cols, schema=schema_of(name)) for name, cols in self.columns.items()
            }
        return self._built


REC = pa.field("_rec", pa.int32(), nullable=False)
ENCODED_TABLES = RECORD_TABLES  # every record table: the committing process only writes bytes


class EncodedRows(NamedTuple):
    """A record table of a chunk in its stored form (Parquet bytes, without ``_rec``), with the record number
    of each row beside it in case the committer drops a record, and (``hands``) how many of its records are
    invalid, which the committer counts when it keeps them all."""

    stored: Encoded
    rec: pa.Array
    invalid: int = 0

    def table(self) -> pa.Table:
        """The rows again, ``_rec`` included."""
        return self.stored.table().append_column(REC, self.rec)


def encoded(tables: dict[str, pa.Table]) -> dict[str, pa.Table | EncodedRows]:
    """``tables`` with every record table encoded as its file will be: the local engine's workers call
    this so that the one process that commits only writes bytes."""
    out: dict[str, pa.Table | EncodedRows] = dict(tables)
    for name in ENCODED_TABLES:
        table = tables[name]
        invalid = table.num_rows - (pc.sum(table["valid"]).as_py() or 0) if name == "hands" else 0
        stored = Encoded(name, table.drop_columns([REC.name]))
        out[name] = EncodedRows(stored, table[REC.name].combine_chunks(), invalid)
    return out


def schema_of(table: str) -> pa.Schema:
    """The table's schema, with the ``_rec`` record-number column on record tables while in flight."""
    schema = TABLES[table]
    return schema.append(REC) if table in RECORD_TABLES else schema


def reject_row(rows: Rows, line: RawLine, code: str, message: str, run_id: str, hand_id: str | None = None) -> None:
    rows.add(
        "rejects",
        source_file=line.source_file,
        source_line=line.source_line,
        raw=None if line.too_long else line.data,
        raw_path=line.spill,
        size=line.size,
        sha256=line.sha256,
        code=code,
        message=message,
        hand_id=hand_id,
        ingest_run=run_id,
    )


# what building Arrow columns raises on a value that does not fit its column (an int beyond int32 or int64)
UNSTORABLE = (pa.ArrowException, OverflowError, TypeError, ValueError)


def process_lines(lines: Iterable[RawLine], run_id: str, *, profile: dict[str, Any] | None = None) -> Rows:
    """Validate each line and turn it into rows; the returned rows always convert to Arrow tables.

    A record holding a value its column cannot store (``"hand_no": 4294967296`` in an int32 column, an amount
    beyond int64) would make the whole chunk fail to convert: then each line is converted on its own and such
    a record becomes a ``SCHEMA_TYPE`` reject, so one bad value never stops the batch.
    """
    lines = list(lines)
    rows = _process(lines, run_id, profile)
    try:
        rows.tables()
        return rows
    except UNSTORABLE:
        pass
    rows = Rows()
    for position, line in enumerate(lines):
        one = _process([line], run_id, profile)
        try:
            one.tables()
        except UNSTORABLE as exc:
            hand_id = one.keys[0].hand_id if one.keys else None
            one = Rows()
            reject_row(
                one,
                line,
                "SCHEMA_TYPE",
                f"a value does not fit the warehouse's column types: {exc}",
                run_id,
                hand_id=hand_id,
            )
        rows.extend(one, position)
    return rows


def _process(lines: list[RawLine], run_id: str, profile: dict[str, Any] | None) -> Rows:
    rows = Rows()
    for out in validate_lines(lines, profile=profile, evidence=True):
        v, line = out.validation, out.line
        assert isinstance(line, RawLine)
        if v.record is None or out.obj is None:
            first = v.issues[0]
            code, message = first.code, first.message
            if line.code is not None:  # a bound of the reader (INGEST_SPILL_CAP, INGEST_INPUT_CAP)
                code = line.code
                message = line.fault or f"line {line.source_line}: a line of {line.size} bytes, too long to keep"
            reject_row(rows, line, code, message, run_id, hand_id=v.hand_id)
            continue
        mark = rows.mark()
        try:
            add_record(rows, line, v, out.obj, run_id, rec=len(rows.keys))
        except Exception as exc:  # a bug of ours must not lose the line or stop the batch
            rows.rollback(mark)
            reject_row(
                rows,
                line,
                "INTERNAL",
                f"could not store the record: {type(exc).__name__}: {exc}",
                run_id,
                hand_id=v.record.hand_id,
            )
            continue
        rows.keys.append(RecordKey(v.record.hand_id, line.sha256, out.position))
    return rows


def add_record(rows: Rows, line: RawLine, v: Validation, obj: dict[str, Any], run_id: str, *, rec: int) -> None:
    record = v.record
    assert record is not None
    hand = v.hand
    hand_id = record.hand_id
    players = record.players
    played_at = played_at_time(record.played_at)  # None for no time or no date-time (SCHEMA_TIME)
    valid = v.ok
    first_winners = [w.seat for w in v.wins if w.order == 1]
    if v.replayed:
        # won out: the wins ended the hand (all but one in blood battle, the first in 普通版), not the wall
        outcome = "won_out" if hand is not None and hand.won_out else "wall_empty"
    else:
        stopping = (i for i in v.issues if CODES[i.code].stops_replay)
        outcome = "stopped" if any(i.code != "TURN_INCOMPLETE" for i in stopping) else "incomplete"
    judged = record.level in ("full", "dealt")  # every hand known: the wall's contents are too
    rows.add(
        "hands",
        hand_id=hand_id,
        record_sha256=line.sha256,
        source_file=line.source_file,
        source_line=line.source_line,
        ingest_run=run_id,
        session_id=record.session_id,
        hand_no=record.hand_no,
        table_id=record.table_id,
        played_at=played_at,
        utc_offset=played_at_offset(record.played_at),
        profile=record.rules.profile,
        ruleset=json.dumps(obj.get("ruleset"), ensure_ascii=False, sort_keys=True),
        players=list(players),
        seats=len(players),
        suits=record.rules.suits,
        mode=record.rules.mode,
        fan_base=record.rules.fan_base,
        base=record.rules.base,
        pot=sum(p.amount for p in v.payments if p.payee is None) if hand is not None else None,
        dealer=record.dealer,
        events=len(record.events),
        winners=len({w.seat for w in v.wins}),
        wins=len(v.wins),
        first_winners=first_winners,
        next_dealer=v.next_dealer,
        wall_left=hand.left if hand is not None and hand.left >= 0 else None,  # -1: a settlement record's
        outcome=outcome,
        replayed=v.replayed,
        valid=valid,
        issue_count=len(v.issues),
        has_result=v.claimed is not None,
        level=record.level,
        not_checked=list(v.not_checked),
        wall_commitment=v.wall_commitment,
        waits_judged=judged,
        ready_judged=judged and v.evidence is not None,
        _rec=rec,
    )
    evidence = v.evidence  # what the replay worked out beyond the rules (validate_lines(evidence=True))
    ready = evidence.ready_turn if evidence is not None and judged else {}
    # each seat's draw luck (pipeline/game/evidence.py LUCK): only of a replay that reached the end
    luck = evidence.luck if evidence is not None and judged and v.replayed else None
    deals = _deal_scores(record, evidence.dealt if evidence is not None else None)
    for f in v.seats:
        scores = deals.get(f.seat, _NO_DEAL)
        rows.add(
            "player_hands",
            hand_id=hand_id,
            seat=f.seat,
            player=f.player,
            profile=record.rules.profile,
            played_at=played_at,
            valid=valid,
            replayed=v.replayed,
            dealer=f.dealer,
            void=None if f.void is None else SUITS[f.void],
            won=f.won,
            win_order=f.win_order,
            how=f.how,
            fan=f.fan,
            points=f.points,
            deal_ins=f.deal_ins,
            ready_at_end=f.ready_at_end,
            hua_zhu=f.hua_zhu,
            pongs=f.pongs,
            kongs_direct=f.kongs_direct,
            kongs_added=f.kongs_added,
            kongs_concealed=f.kongs_concealed,
            passed_wins=f.passed_wins,
            compulsory_passes=f.compulsory_passes,
            delta=f.delta,
            claimed_delta=f.claimed_delta,
            deal_shanten=scores.shanten,
            deal_suited=scores.suited,
            gave_to=scores.gave_to,
            gift_fit=scores.gift_fit,
            void_over=scores.void_over,
            ready_turn=ready.get(f.seat),
            **{f"draw_luck_{name}": None if luck is None else luck[f.seat][i] for i, name in enumerate(LUCK)},
            _rec=rec,
        )
    events = record.events
    n = len(events)
    replayed_upto = len(hand.events) if hand is not None else 0
    observer = record.level == "observer"  # the hidden hands' waits are not known: who could win is unknown
    could = hand.could_win_at if hand is not None and not observer else {}
    safe = evidence.safe_alternative_at if evidence is not None else {}
    cost = evidence.cost_at if evidence is not None else {}
    kongable = evidence.could_kong_at if evidence is not None else {}
    left = wall_after_deal(record.rules)
    settlement = record.level == "settlement"  # no draws, no wall to count: wall_left unknown
    wall_left: list[int | None] = []
    could_win: list[list[int] | None] = []
    for idx, ev in enumerate(events):
        if isinstance(ev, Draw):
            left -= 1
        wall_left.append(None if settlement else left)
        if idx in could:
            could_win.append(list(could[idx]))
        elif isinstance(ev, Discard) and idx < replayed_upto and not observer:
            could_win.append([])  # a replayed discard nobody could win on
        else:
            could_win.append(None)  # not a discard, or not replayed
    rows.add_columns(
        "events",
        n,
        hand_id=[hand_id] * n,
        idx=list(range(n)),
        t=[ev.t for ev in events],
        seat=[ev.seat for ev in events],
        player=[players[ev.seat] for ev in events],
        tile=[TILE_NAMES[ev.tile] if ev.tile >= 0 else None for ev in events],  # -1: a tile the record did not name
        source=[ev.source if isinstance(ev, (Pong, Kong, Hu)) else None for ev in events],
        kind=[ev.kind if isinstance(ev, Kong) else None for ev in events],
        rob_kong=[ev.rob_kong if isinstance(ev, Hu) else None for ev in events],
        wall_left=wall_left,
        could_win=could_win,
        could_kong=[kongable.get(idx) for idx in range(n)],
        safe_alternative=[safe.get(idx) for idx in range(n)],
        cost=[cost.get(idx) for idx in range(n)],
        replayed=[idx < replayed_upto for idx in range(n)],
        ms=list(record.ms) if record.ms is not None else [None] * n,  # decision times: most records have none
        _rec=[rec] * n,
    )
    if judged and evidence is not None:
        _wait_choices(rows, hand_id, players, record.events, evidence.waits_at, rec)
    claimed_wins = {w.event: w for w in v.claimed.wins} if v.claimed else {}
    count = TurnCount(record.dealer, len(players))  # each seat's turn, counted along the events to each win
    for w in sorted(v.wins, key=lambda w: w.event):
        cw = claimed_wins.get(w.event)
        turn = source_turn = None
        if not settlement:  # the turns are counted from the draws, which a score sheet does not have
            turns = count.advance(events, w.event + 1)
            turn = turns[w.seat]
            source_turn = turns[w.source] if w.source is not None else None
        rows.add(
            "wins",
            hand_id=hand_id,
            event=w.event,
            seat=w.seat,
            player=players[w.seat],
            tile=TILE_NAMES[w.tile] if w.tile >= 0 else None,
            how=w.how,
            source=w.source,
            win_order=w.order,
            fan=w.score.fan if w.score.fan >= 0 else None,
            points=w.score.points,
            per_payer=w.score.per_payer,
            title=w.score.title_zh,
            patterns=[{"id": p.id, "name_zh": p.name_zh, "fan": p.fan} for p in w.score.patterns],
            claimed_fan=cw.fan if cw else None,
            claimed_points=cw.points if cw else None,
            turn=turn,
            source_turn=source_turn,
            _rec=rec,
        )
    _payments(rows, hand_id, players, "computed", v.payments, rec)
    if v.claimed is not None and v.claimed.payments is not None:  # None: the source did not itemise them
        _payments(rows, hand_id, players, "claimed", v.claimed.payments, rec)
    for i in v.issues:
        rows.add(
            "issues",
            hand_id=hand_id,
            code=i.code,
            severity=i.severity,
            event=i.event,
            seat=i.seat,
            expected=i.expected,
            actual=i.actual,
            message=i.message,
            money=i.money,
            position=i.position,
            source_file=line.source_file,
            source_line=line.source_line,
            _rec=rec,
        )


def _wait_choices(
    rows: Rows,
    hand_id: str,
    players: Sequence[str],
    events: Sequence[Event],
    waits_at: Mapping[int, WaitChoice],
    rec: int,
) -> None:
    """The replay's judged choices of waits (the information screen's anticipation evidence), one row each."""
    for idx, (chosen, options) in sorted(waits_at.items()):
        walls = [o[3] for o in options]
        best_other = max(w for i, w in enumerate(walls) if i != chosen)
        seat = events[idx].seat
        rows.add(
            "wait_choices",
            hand_id=hand_id,
            idx=idx,
            seat=seat,
            player=players[seat],
            hit=walls[chosen] == max(walls),
            margin=walls[chosen] - best_other,
            chosen=chosen,
            options=[
                {
                    "tile": TILE_NAMES[kind],
                    "waits": [TILE_NAMES[w] for w in range(27) if (mask >> w) & 1],
                    "unseen": unseen,
                    "wall": wall,
                }
                for kind, mask, unseen, wall in options
            ],
            _rec=rec,
        )


class DealFacts(NamedTuple):
    """What a seat's start shows (player_hands): its deal's 向听 and the tiles outside its shortest suit (the
    stacked-deal screen), and what it did for the others before play (the collusion screen's ``exchange``
    signal): the seat its 换三张 tiles went to, whether they were of a longest suit of that seat's deal (a gift
    that fits), and the suits it held fewer tiles of than the void it declared (bit s for suit s of
    ``mps``; 0 when it declared a shortest suit)."""

    shanten: int | None = None
    suited: int | None = None
    gave_to: int | None = None
    gift_fit: bool | None = None
    void_over: int | None = None


_NO_DEAL = DealFacts()


def _deal_scores(record: Any, hands: list[Any] | None) -> dict[int, DealFacts]:
    """Per seat, the facts of its start (:class:`DealFacts`), where the record has every hand (levels full and
    dealt) and its start replayed.

    换三张 and 定缺 are the only choices made before the first discard, and both leave a suit to the player: the
    exchange passes "3 tiles of one suit to another seat" (RULES.md; the profiles that play it), and the void is
    any one suit ("打缺门，必须打掉其中一门", the first rules text). So a partner can be given the suit it collects,
    and two partners can split the suits. The screen compares these with what the same player does to its other
    opponents (pipeline/audit/collusion.py). ``hands``: the deal as the replay dealt it, before the exchange
    (:attr:`~pipeline.game.evidence.Evidence.dealt`)."""
    if hands is None:
        return {}
    rules = record.rules
    n = rules.players
    three = len(rules.suits) == 3
    suits = [[sum(1 for k in tiles if k // 9 == s) for s in range(3)] for tiles in hands]
    gave_to: list[int | None] = [None] * n
    fits: list[bool | None] = [None] * n
    after = [list(suit) for suit in suits]
    given = record.exchange_given
    if given is not None and record.exchange_direction is not None and all(g for g in given):
        offset = exchange_offset(record.exchange_direction, n)
        for seat, tiles in enumerate(given):
            to, suit = (seat + offset) % n, tiles[0] // 9
            gave_to[seat] = to
            fits[seat] = suits[to][suit] == max(suits[to])
            after[seat][suit] -= 3
            after[to][suit] += 3
    que = record.que
    out: dict[int, DealFacts] = {}
    for seat in range(n):
        tiles = hands[seat]
        counts = counts_of(list(tiles))
        suited = len(tiles) - min(suits[seat]) if three else None
        void = que[seat] if que is not None and three else None
        over = None if void is None else sum(1 << s for s in range(3) if after[seat][s] < after[seat][void])
        out[seat] = DealFacts(deal_shanten(counts, choose_void=three), suited, gave_to[seat], fits[seat], over)
    return out


def _payments(rows: Rows, hand_id: str, players: Sequence[str], side: str, payments: Iterable[Any], rec: int) -> None:
    paid = list(payments)
    n = len(paid)
    rows.add_columns(
        "payments",
        n,
        hand_id=[hand_id] * n,
        side=[side] * n,
        payer=[p.payer for p in paid],
        payee=[p.payee for p in paid],
        payer_player=[players[p.payer] for p in paid],
        payee_player=[players[p.payee] if p.payee is not None else None for p in paid],  # None: to the pot
        amount=[p.amount for p in paid],
        reason=[p.reason for p in paid],
        event=[p.event for p in paid],
        _rec=[rec] * n,
    )
