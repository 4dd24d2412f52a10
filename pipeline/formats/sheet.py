"""A club's score sheet (计分表) as ``settlement`` records: one CSV row per win, kong, end-of-wall state or
payment; the rows of one hand together; English or Chinese headers. The format is documented in
docs/SHEETS.md, with a sample in data/sample-sheet.csv.

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
from dataclasses import dataclass
from typing import Any, Final

from pipeline.formats import Converted, Item, Reject, Skipped
from pipeline.rules.fan import PATTERNS, SPECIAL_NAMES
from pipeline.rules.ruleset import RuleSetError, load_ruleset

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
            out.extend(["gen"] * int(next(g for g in roots.groups() if g)))
        elif token.casefold() in PATTERN_OF:
            out.append(PATTERN_OF[token.casefold()])
        else:
            raise SheetError(f"unknown pattern {token!r} (names: docs/SHEETS.md)")
    return out


@dataclass(slots=True)
class _Row:
    line: int  # first physical line
    span: int  # physical lines (a quoted cell may hold a line break)
    raw: str
    cells: dict[str, str]

    def get(self, column: str) -> str:
        return self.cells.get(column, "").strip()


def read_sheet(lines: Iterable[str], *, ruleset: str | dict[str, Any] = "chengdu") -> Iterator[Item]:
    """The sheet's hands as records, the rows that make none as rejects, the header as framing and blank rows
    as blank: every physical line is in exactly one. ``ruleset`` (a profile name or a ruleset object) is the rules
    of a hand whose rows name no profile."""
    hand: list[_Row] = []
    seen: set[str] = set()
    for row in _rows(iter(lines)):
        if not isinstance(row, _Row):
            yield row
            continue
        hand_id = row.get("hand_id")
        if hand and hand_id != hand[0].get("hand_id"):
            yield _hand(hand, ruleset)
            seen.add(hand[0].get("hand_id"))
            hand = []
        if not hand_id:
            yield _reject([row], "IMPORT_ROW", "no hand_id (牌局) on the row")
        elif hand_id in seen:
            yield _reject(
                [row], "IMPORT_ROW", f"hand {hand_id}'s rows are not together: this one comes after another hand"
            )
        else:
            hand.append(row)
    if hand:
        yield _hand(hand, ruleset)


def _rows(lines: Iterator[str]) -> Iterator[_Row | Item]:
    """The header (framing), then each data row with the physical lines it spans; blank rows as blank."""
    reader = csv.reader(lines)
    columns: list[str | None] | None = None
    header_fault = ""
    done = 0
    for cells in reader:
        first, span, done = done + 1, reader.line_num - done, reader.line_num
        raw = ",".join(cells)
        if not any(c.strip() for c in cells):
            yield Skipped(span, "blank")
        elif columns is None and not header_fault:
            names = [_COLUMN_OF.get(c.strip().lstrip("\ufeff").casefold()) for c in cells]
            missing = [c for c in ("hand_id", "item", "seat") if c not in names]
            if missing:
                header_fault = f"the header (line {first}) lacks the column(s) {', '.join(missing)}"
                yield Reject(first, raw, "IMPORT_HEADER", header_fault, span=span)
            else:
                columns = names
                yield Skipped(span, "framing")
        elif columns is None:
            yield Reject(first, raw, "IMPORT_HEADER", header_fault, span=span)
        elif len(cells) > len(columns):
            yield Reject(first, raw, "IMPORT_ROW", f"{len(cells)} cells for {len(columns)} columns", span=span)
        else:
            yield _Row(first, span, raw, {c: v for c, v in zip(columns, cells, strict=False) if c is not None})


def _reject(rows: list[_Row], code: str, message: str) -> Reject:
    first = rows[0]
    raw = "\n".join(r.raw for r in rows)
    return Reject(first.line, raw, code, message, first.get("hand_id") or None, span=sum(r.span for r in rows))


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
    try:
        value = int(text.replace(",", ""))
    except ValueError:
        raise SheetError(f"line {line}: {what} {text!r} is not a whole number") from None
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
            raise SheetError(f"line {line}: unknown item {row.get('item')!r} (items: docs/SHEETS.md)")
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
