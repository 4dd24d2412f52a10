"""A club's score sheet (计分表) as ``settlement`` records: one CSV row per win, kong, end-of-wall state or
payment; the rows of one hand together; English or Chinese headers. The format is documented in
docs/FORMATS.md, with a sample in data/sample-sheet.csv.

Each hand becomes one ``xzlog/1`` record of level ``settlement``: its wins and kongs as events in the sheet's
order (no draws, no discards: the sheet has none), the end states (ready with its value, not ready, flower
pig) under ``end``, and what the sheet says was paid under ``result``. Only the sheet's own statements are
restated: a win's "8 each" is paid by the discarder, or by every player who had not won before it in the
sheet's order (a self-drawn win); a kong's by the discarder (直杠) or by every player still in.

>>> text = '''hand_id,players,dealer,item,seat,from,kind,patterns,fan,amount
... h1,ann/bo/cy/dee,ann,kong,ann,,concealed,,,2
... h1,,,hu,bo,cy,,清一色+根,4,8
... h2,ann/bo/cy/dee,bo,hu,bo,,,平胡,1,
... '''
>>> header, h1, h2 = read_sheet(text.splitlines(keepends=True), ruleset="chengdu")
>>> header.why, h1.lines, h1.record["events"]
('framing', 2, [{'t': 'kong', 'seat': 0, 'kind': 'concealed'}, {'t': 'hu', 'seat': 1, 'from': 2}])
>>> h1.record["result"]["deltas"]
[6, 6, -10, -2]
>>> h2.code, h2.message
('IMPORT_ROW', 'no amount on any row: a settlement record needs what was paid (amounts or totals)')
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from pipeline.formats import BadLine, Converted, Item, Reject, Skipped, bounded
from pipeline.game.record import MAX_CLAIMED_FAN
from pipeline.rules.fan import PATTERNS, SPECIAL_NAMES
from pipeline.rules.ruleset import MAX_POINTS, RuleSetError, load_ruleset

# column → its names in a header (case and surrounding spaces do not matter)
COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "hand_id": ("hand_id", "hand", "牌局", "牌局编号", "局号"),
    "session_id": ("session_id", "session", "场次"),
    "hand_no": ("hand_no", "盘", "第几盘"),
    "table_id": ("table_id", "table", "桌号"),
    "played_at": ("played_at", "time", "时间"),
    "profile": ("profile", "rules", "规则"),
    "players": ("players", "seating", "座次"),
    "dealer": ("dealer", "庄家", "庄"),
    "item": ("item", "type", "项目", "类型"),
    "seat": ("seat", "player", "who", "玩家", "谁", "付方"),
    "from": ("from", "source", "来源", "点炮"),
    "to": ("to", "payee", "收方"),
    "kind": ("kind", "杠型"),
    "tile": ("tile", "牌"),
    "patterns": ("patterns", "pattern", "番型"),
    "fan": ("fan", "番", "番数"),
    "points": ("points", "分数"),
    "amount": ("amount", "金额", "每家"),
}
# item → its names in the item column
ITEMS: Final[dict[str, tuple[str, ...]]] = {
    "hu": ("hu", "win", "胡", "胡牌"),
    "kong": ("kong", "杠", "杠牌"),
    "ready": ("ready", "听牌", "有叫"),
    "not_ready": ("not_ready", "未听牌", "没叫", "无叫"),
    "pig": ("pig", "hua_zhu_state", "花猪"),
    "cha_jiao": ("cha_jiao", "查大叫", "查叫"),
    "hua_zhu": ("hua_zhu", "查花猪"),
    "tui_shui": ("tui_shui", "退税"),
    "transfer": ("transfer", "呼叫转移"),
    "penalty": ("penalty", "罚分"),
    "total": ("total", "合计", "总计"),
}
KONG_KINDS: Final[dict[str, tuple[str, ...]]] = {
    "direct": ("direct", "直杠", "明杠", "刮风"),
    "added": ("added", "面下杠", "补杠", "弯杠"),
    "concealed": ("concealed", "暗杠", "下雨"),
}
SELF_DRAWN: Final = ("", "自摸", "self", "self_draw", "-")
PAYMENT_ITEMS: Final = ("cha_jiao", "hua_zhu", "tui_shui", "transfer", "penalty")
END_STATES: Final = ("ready", "not_ready", "pig")
_DIGITS: Final = len(str(MAX_POINTS)) + 1  # a sign or a leading zero more: longer is past 2^53 for sure
MAX_HELD: Final = 64 << 20  # characters of rows held while a hand's rows are gathered (see read_sheet)
_ROOTS = re.compile(r"^(?:根[×xX*]?(\d+)|(\d+)根|gen[×xX*](\d+))$")
_SPLIT = re.compile(r"[+＋、,，\s]+")


def _aliases(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {alias.casefold(): key for key, names in table.items() for alias in names}


_COLUMN_OF: Final = _aliases(COLUMNS)
_ITEM_OF: Final = _aliases(ITEMS)
_KIND_OF: Final = _aliases(KONG_KINDS)
PATTERN_OF: Final[dict[str, str]] = {
    **{name.casefold(): p.id for p in PATTERNS for name in (p.id, p.name_zh, p.name_en)},
    **{name.casefold(): pid for pid, names in SPECIAL_NAMES.items() for name in (pid, *names)},
    "杠上开花": "gang_shang_hua",
    "抢杠": "qiang_gang",
    "海底捞月": "hai_di",
    "天和": "tian_hu",
    "地和": "di_hu",
}


class SheetError(ValueError):
    """A row the sheet's format cannot read (the message says which column and why)."""


def parse_patterns(text: str) -> list[str]:
    """Pattern names as a sheet writes them (Chinese, English or ids; ``+``, ``、`` or spaces between; roots as
    ``根×2``, ``2根`` or ``gen×2``) to pattern ids, one per fan-bearing occurrence.

    >>> parse_patterns("清一色+根×2")
    ['qing_yi_se', 'gen', 'gen']
    >>> parse_patterns("dui_dui_hu 杠上开花")
    ['dui_dui_hu', 'gang_shang_hua']
    """
    out: list[str] = []
    for token in _SPLIT.split(text.strip()):
        if not token:
            continue
        roots = _ROOTS.match(token)
        if roots:
            count = next(g for g in roots.groups() if g)
            if len(count) > 2 or int(count) > MAX_CLAIMED_FAN:
                raise SheetError(f"{token[:40]!r}: more roots than a hand has (at most {MAX_CLAIMED_FAN})")
            out.extend(["gen"] * int(count))
        elif token.casefold() in PATTERN_OF:
            out.append(PATTERN_OF[token.casefold()])
        else:
            raise SheetError(f"unknown pattern {token!r} (names: docs/FORMATS.md)")
    return out


@dataclass(slots=True)
class _Row:
    line: int  # first physical line
    span: int  # physical lines (a quoted cell may hold a line break)
    raw: str
    cells: dict[str, str]
    size: int = 0  # characters of the row's text
    fault: str = ""  # why the row cannot be read, if it cannot: its hand is rejected whole
    code: str = "IMPORT_ROW"  # the reject code of the fault

    def get(self, column: str) -> str:
        return self.cells.get(column, "").strip()


def read_sheet(
    lines: Iterable[str | BadLine], *, ruleset: str | dict[str, Any] = "chengdu", max_bytes: int | None = None
) -> Iterator[Item]:
    """The sheet's hands as records, the rows that make none as rejects, the header as framing and blank rows
    as blank: every physical line is in exactly one. ``ruleset`` (a profile name or a ruleset object) is the rules
    of a hand whose rows name no profile; ``max_bytes`` the most text a hand's rows may have (the caller's bound
    on a record, ingest's line bound; none when not given): a longer hand is rejected, its rows not held.

    A hand's rows are gathered wherever they stand in the sheet (a forgotten 查大叫 appended at the bottom
    belongs to its hand), in the sheet's order; a row that cannot be read (a cell too many, a broken quote, a
    line over the reader's bound) rejects its whole hand. A line the caller could not read at all (past its
    bound, a broken stream) names no hand: it rejects the hands of the rows on either side of it (a broken
    stream: the hand it cut). Hands are held until the sheet ends, up to
    :data:`MAX_HELD` bytes of rows: past that the oldest hands are settled, and a row of theirs that still
    comes is rejected on its own."""
    hands: dict[str, _Hand] = {}  # in the order of their first row
    settled: set[str] = set()
    held = 0
    last = ""  # the hand of the last row
    orphan: _Row | None = None  # an unreadable line before any hand's row
    for row in _rows(iter(lines)):
        if not isinstance(row, _Row):
            yield row
            continue
        hand_id = row.get("hand_id")
        if not hand_id and row.code != "IMPORT_ROW":  # a line the caller could not read: whose it was is unknown,
            orphan = row  # so it spoils the hands of the rows on either side (a broken stream: the hand it cut)
            if last not in hands:
                continue
            hand_id = last
        elif orphan is not None and hand_id and hand_id not in settled:
            neighbour = hands.setdefault(hand_id, _Hand(hand_id, max_bytes))
            if last in hands:  # counted in the hand before it: this one only takes its reason
                neighbour.fault = neighbour.fault or orphan
            else:
                neighbour.add(orphan)
            orphan = None
        if not hand_id:
            yield _reject([row], "IMPORT_ROW", row.fault or "no hand_id (牌局) on the row", row.code)
            continue
        if hand_id in settled:
            yield _reject(
                [row],
                "IMPORT_ROW",
                f"hand {hand_id}'s rows are too far apart: this one comes after "
                f"more than {MAX_HELD >> 20} MiB of other hands' rows",
                row.code,
            )
            continue
        last = hand_id
        hand = hands.setdefault(hand_id, _Hand(hand_id, max_bytes))
        hand.add(row)
        held += row.size
        while held > MAX_HELD and hands:
            first_id = next(iter(hands))
            done = hands.pop(first_id)
            settled.add(first_id)
            held -= done.size
            yield done.item(ruleset)
    for hand in hands.values():
        yield hand.item(ruleset)
    if orphan is not None and last not in hands and not hands:
        yield _reject([orphan], "IMPORT_ROW", orphan.fault, orphan.code)


@dataclass(slots=True)
class _Hand:
    """The rows of one hand so far; past ``max_bytes`` characters (more than its record may hold) only how many
    lines they spanned, and the first fault."""

    hand_id: str
    max_bytes: int | None
    rows: list[_Row] = field(default_factory=list)
    size: int = 0
    lines: int = 0
    first: _Row | None = None
    fault: _Row | None = None

    def add(self, row: _Row) -> None:
        self.first = self.first or row
        self.lines += row.span
        if row.fault and self.fault is None:
            self.fault = row
        if self.max_bytes is not None and self.size + row.size > self.max_bytes:
            self.rows = [self.first]  # the first row, to show which hand it was
            self.size = self.max_bytes + 1
        else:
            self.rows.append(row)
            self.size += row.size

    def item(self, ruleset: str | dict[str, Any]) -> Converted | Reject:
        assert self.first is not None
        if self.fault is not None:
            why, code = f"line {self.fault.line}: {self.fault.fault}", self.fault.code
        elif self.max_bytes is not None and self.size > self.max_bytes:
            why, code = f"the hand's rows pass {self.max_bytes} bytes, more than a record may hold", "IMPORT_ROW"
        else:
            return _hand(self.rows, ruleset)
        raw = bounded("\n".join(r.raw for r in self.rows))
        return Reject(self.first.line, raw, code, why, self.hand_id, span=self.lines)


class _Feed:
    """The lines handed to the CSV reader, with what the current record took of them; a line the caller could
    not read (a :class:`BadLine`) goes in as a blank line and is noted, so that its row is rejected."""

    def __init__(self, lines: Iterator[str | BadLine]) -> None:
        self._lines = lines
        self.taken: list[str] = []
        self.bad: BadLine | None = None

    def __iter__(self) -> Iterator[str]:
        for line in self._lines:
            if isinstance(line, BadLine):
                self.bad = self.bad or line
                line = "\n"
            self.taken.append(line)
            yield line

    def take(self) -> tuple[str, BadLine | None]:
        raw, bad = bounded("".join(self.taken).rstrip("\r\n")), self.bad
        self.taken, self.bad = [], None
        return raw, bad


def _rows(lines: Iterator[str | BadLine]) -> Iterator[_Row | Item]:
    """The header (framing), then each data row with the physical lines it spans; blank rows as blank. A row
    the CSV reader refuses (a CR inside an unquoted cell, a cell over 128 KiB), a line the caller could not
    read, and a row of more cells than the header has come as rows with a ``fault``: their hand is rejected."""
    feed = _Feed(lines)
    reader = csv.reader(feed)
    columns: list[str | None] | None = None
    header_fault = ""
    done = 0
    while True:
        fault, code = "", "IMPORT_ROW"
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            cells, fault = [], f"not a CSV row: {e}"
        first, span, done = done + 1, reader.line_num - done, reader.line_num
        raw, bad = feed.take()
        if bad is not None:
            fault, code = bad.message, bad.code
        if not fault and not any(c.strip() for c in cells):
            yield Skipped(span, "blank")
        elif columns is None and not header_fault and not fault:
            names = [_COLUMN_OF.get(c.strip().lstrip("\ufeff").casefold()) for c in cells]
            missing = [c for c in ("hand_id", "item", "seat") if c not in names]
            if missing:
                header_fault = f"the header (line {first}) lacks the column(s) {', '.join(missing)}"
                yield Reject(first, raw, "IMPORT_HEADER", header_fault, span=span)
            else:
                columns = names
                yield Skipped(span, "framing")
        elif columns is None:
            yield Reject(first, raw, "IMPORT_HEADER", header_fault or fault, span=span)
        else:
            if fault and not cells:  # the reader gave no cells: the hand is the text's, split at the commas
                cells = raw.split(",")
            elif len(cells) > len(columns):
                fault = f"{len(cells)} cells for {len(columns)} columns"
            named = {c: v for c, v in zip(columns, cells, strict=False) if c is not None}
            yield _Row(first, span, raw, named, len(raw), fault, code)


def _reject(rows: list[_Row], code: str, message: str, bound: str | None = None) -> Reject:
    """``rows`` rejected with ``message``; ``bound`` is the code of a reader's bound that refused the row (its
    line too long, say), which then stands instead of ``code``."""
    first = rows[0]
    raw = bounded("\n".join(r.raw for r in rows))
    span = sum(r.span for r in rows)
    return Reject(first.line, raw, bound or code, message, first.get("hand_id") or None, span=span)


def _hand(rows: list[_Row], ruleset: str | dict[str, Any]) -> Converted | Reject:
    try:
        return Converted(_record(rows, ruleset), sum(r.span for r in rows))
    except SheetError as e:
        return _reject(rows, "IMPORT_ROW", str(e))


def _one(rows: list[_Row], column: str) -> str:
    """The hand's value of a per-hand column: given on one row or more, the same wherever given."""
    values = {r.get(column) for r in rows} - {""}
    if len(values) > 1:
        raise SheetError(f"{column}: the rows of the hand disagree ({', '.join(sorted(values))})")
    return values.pop() if values else ""


def _int(text: str, what: str, line: int, *, signed: bool = False) -> int:
    """A whole number of the sheet, at most 2^53 either way (as a record's amounts: schemas/XZLOG.md)."""
    digits = text.replace(",", "")
    try:
        value = int(digits) if len(digits) <= _DIGITS else None
    except ValueError:
        raise SheetError(f"line {line}: {what} {text!r} is not a whole number") from None
    if value is None or abs(value) > MAX_POINTS:
        raise SheetError(f"line {line}: {what} {bounded(text)[:40]!r} is past 2^53, more than any hand pays")
    if value < 0 and not signed:
        raise SheetError(f"line {line}: {what} {value} is negative")
    return value


def _record(rows: list[_Row], default: str | dict[str, Any]) -> dict[str, Any]:
    hand_id = rows[0].get("hand_id")
    players = [p.strip() for p in re.split(r"[/|｜]", _one(rows, "players")) if p.strip()]
    if not players:
        raise SheetError("players (座次) are not given on any row of the hand")
    if len(set(players)) != len(players):
        raise SheetError(f"a player sits twice: {'/'.join(players)}")
    profile: str | dict[str, Any] = _one(rows, "profile") or default
    try:
        rules = load_ruleset(profile)
    except RuleSetError as e:
        raise SheetError(f"rules {profile!r}: {e}") from None

    def seat(text: str, what: str, line: int) -> int:
        if text.isdigit() and int(text) < len(players) and text not in players:
            return int(text)
        if text in players:
            return players.index(text)
        raise SheetError(f"line {line}: {what} {text!r} is neither a seat (0-{len(players) - 1}) nor a player")

    dealer_text = _one(rows, "dealer")
    if not dealer_text:
        raise SheetError("the dealer (庄家) is not given on any row of the hand")
    record: dict[str, Any] = {"format": "xzlog/1", "level": "settlement", "hand_id": hand_id}
    for column in ("session_id", "table_id", "played_at"):
        if value := _one(rows, column):
            record[column] = value
    if hand_no := _one(rows, "hand_no"):
        record["hand_no"] = _int(hand_no, "hand_no", rows[0].line)
    record |= {"ruleset": profile, "players": players, "dealer": seat(dealer_text, "dealer", rows[0].line)}

    events: list[dict[str, Any]] = []
    wins: list[dict[str, Any]] = []
    ends: list[dict[str, Any]] = []
    payments: list[dict[str, Any]] = []
    totals: dict[int, int] = {}
    in_hand = [True] * len(players)
    stays = rules.mode == "blood_flow"
    for row in rows:
        line = row.line
        item = _ITEM_OF.get(row.get("item").casefold())
        if item is None:
            raise SheetError(f"line {line}: unknown item {row.get('item')!r} (items: docs/FORMATS.md)")
        who = seat(row.get("seat"), "seat", line)
        amount = _int(row.get("amount"), "amount", line, signed=item == "total") if row.get("amount") else None
        tile = row.get("tile")
        if item in ("hu", "kong"):
            event: dict[str, Any] = {"t": item, "seat": who}
            if tile:
                event["tile"] = tile
            index = len(events)
            if item == "hu":
                source_text = row.get("from")
                source = None if source_text in SELF_DRAWN else seat(source_text, "from", line)
                patterns = parse_patterns(row.get("patterns")) if row.get("patterns") else None
                event["from"] = source
                if patterns and "qiang_gang" in patterns:
                    event["rob_kong"] = True
                claim: dict[str, Any] = {"seat": who, "event": index}
                if patterns is not None:
                    claim["patterns"] = patterns
                for column in ("fan", "points"):
                    if row.get(column):
                        claim[column] = _int(row.get(column), column, line)
                wins.append(claim)
                payers = [source] if source is not None else [s for s, inn in enumerate(in_hand) if inn and s != who]
                if amount:
                    payments.extend(_pay(p, who, amount, "hu", index) for p in payers)
                if not stays:
                    in_hand[who] = False
            else:
                kind = _KIND_OF.get(row.get("kind").casefold())
                if kind is None:
                    raise SheetError(f"line {line}: kong kind {row.get('kind')!r} is not direct, added or concealed")
                event["kind"] = kind
                if kind == "direct":
                    event["from"] = seat(row.get("from"), "from", line)
                    payers = [event["from"]]
                else:
                    payers = [s for s, inn in enumerate(in_hand) if inn and s != who]
                if amount:
                    payments.extend(_pay(p, who, amount, "kong", index) for p in payers)
            events.append(event)
        elif item in END_STATES:
            end: dict[str, Any] = {"seat": who, "state": item}
            if item == "ready" and row.get("fan"):
                end["fan"] = _int(row.get("fan"), "fan", line)
            ends.append(end)
        elif item in PAYMENT_ITEMS:
            to_text = row.get("to")
            payee = None if item == "penalty" and not to_text else seat(to_text, "to", line)
            if not amount:
                raise SheetError(f"line {line}: a {item} row needs an amount")
            payments.append(_pay(who, payee, amount, item, None))
        else:  # total
            if amount is None:
                raise SheetError(f"line {line}: a total row needs an amount")
            totals[who] = totals.get(who, 0) + amount
    record["events"] = events
    if ends:
        record["end"] = ends
    if not payments and not totals:
        raise SheetError("no amount on any row: a settlement record needs what was paid (amounts or totals)")
    if totals and len(totals) != len(players):
        missing = [players[s] for s in range(len(players)) if s not in totals]
        raise SheetError(f"totals (合计) are given for some players only: none for {', '.join(missing)}")
    deltas = [totals[s] for s in range(len(players))] if totals else _deltas(payments, len(players))
    result: dict[str, Any] = {"deltas": deltas}
    if payments:
        result["payments"] = payments
    if wins:
        result["wins"] = wins
    record["result"] = result
    return record


def _pay(payer: int, payee: int | None, amount: int, reason: str, event: int | None) -> dict[str, Any]:
    return {"from": payer, "to": payee, "amount": amount, "reason": reason, "event": event}


def _deltas(payments: list[dict[str, Any]], seats: int) -> list[int]:
    out = [0] * seats
    for p in payments:
        out[p["from"]] -= p["amount"]
        if p["to"] is not None:
            out[p["to"]] += p["amount"]
    return out
