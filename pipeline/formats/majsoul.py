"""Mahjong Soul 川麻 (赤羽之战) game records, as the community's paipu tools write them, read into ``xzlog/1``.

A game is a JSON object: a header (``head``: ``uuid``, ``accounts``, ``config``; all optional) and the list of
the game's actions, each ``{"name": "Record…", "data": {…}}``, under ``actions`` (or ``records``, or ``data`` →
``actions``/``records``). A file holds one game per line (JSON lines), or one pretty-printed game. What each
action means was read from the public replay editor Fat-pig-Cui/majsoul-replay-editor (``src/core/glue.ts``,
``core.ts``, ``activityFunction.ts``, ``huleOnePlayer.ts``), which builds records the game's own replay plays:

===================== =================================================== ====================================
action                fields read                                          xzlog/1
===================== =================================================== ====================================
``RecordNewRound``    ``ju`` (the dealer's seat), ``tiles0``…``tiles3``     ``dealer``, ``deal``; with
                      (the dealer's 14), ``paishan`` (the wall string),    ``paishan`` the whole ``wall``
                      ``md5``/``sha256``                                   (level ``full``), else ``dealt``
``RecordChangeTile``  ``change_tile_infos[i].out_tiles``, ``change_type``  ``exchange``: 0 ccw (逆时针), 1
                                                                           across, 2 cw (顺时针)
``RecordSelectGap``   ``gap_types`` (0 饼, 1 万, 2 条: "012 分别对应 pms")   ``que``
``RecordDealTile``    ``seat``, ``tile``                                   ``draw``
``RecordDiscardTile`` ``seat``, ``tile``                                   ``discard``
``RecordChiPengGang`` ``seat``, ``tiles``, ``froms``, ``type`` (1 碰, 2 杠)  ``pong`` / direct ``kong``
``RecordAnGangAddGang`` ``seat``, ``tiles``, ``type`` (2 加杠, 3 暗杠)        added / concealed ``kong``
``RecordGangResult``  ``gang_infos.delta_scores``                           the kong's payments
(``…End``)
``RecordHuleXueZhan`` ``hules[]`` (``seat``, ``hu_tile``, ``zimo``,         ``hu`` events (several: 一炮多响;
``Mid`` / ``End``     ``count``), ``delta_scores``                          after an added kong: 抢杠), their
                                                                           payments and claimed fan
``RecordNoTile``      ``scores[0].delta_scores`` (查大叫, 查花猪),            the wall's end: ``cha_jiao`` /
                      ``scores[0].taxes`` (退税)                             ``hua_zhu`` / ``tui_shui``
===================== =================================================== ====================================

Money comes as ``delta_scores`` vectors. A kong's or a win's has one counterparty and is itemised directly. The
wall's end merges 查大叫 and 查花猪 of every pair into one vector, and 退税 into ``taxes``: they are itemised by
the game's own rule (each player not ready pays each ready player its value, a flower pig pays every other
player still in at least a 4-fan hand; a player not ready returns each kong payment it took) and kept only if
that reproduces the vectors exactly; otherwise the hand's payments are left not itemised (its deltas are still
compared). The rules are the shipped ``majsoul`` profile. Hand ids are ``UUID-N`` (N counts rounds in the game).
What the header does not give (a game id) is the file's name and the game's line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

import orjson

from pipeline.formats import BadLine, Converted, Item, Reject, Skipped, bounded

PROFILE: Final = "majsoul"
GAP_SUIT: Final = {0: "p", 1: "m", 2: "s"}  # activityFunction.ts dingque: "注意 012 分别对应 pms"
CHANGE_DIRECTION: Final = {0: "ccw", 1: "across", 2: "cw"}  # 0: 逆时针 (to the next seat), 1: 对家, 2: 顺时针
MAX_GAME_BYTES: Final = 64 * 1024 * 1024
PIG_FLOOR: Final = 8000  # a pig pays at least a 4-fan hand (core.ts huangpai: Math.max(…, 8000))
SUITS: Final = "mps"


class MajsoulError(ValueError):
    """A game the reader cannot restate (the message says which round and why)."""


def read_majsoul(lines: Iterable[str | BadLine], *, game: str = "majsoul") -> Iterator[Item]:
    """Each game (a JSON line, or a pretty-printed object over several lines) as its rounds' records, or a
    reject. ``game`` names games without a ``head.uuid`` (``{game}-L`` for the game starting on line L)."""
    buffer: list[str] = []
    start = 0
    size = 0
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, BadLine):  # a line the caller could not read: the game it stands in goes with it
            if buffer:
                yield Reject(start, bounded("\n".join(buffer)), raw.code, raw.message, span=len(buffer) + 1)
                buffer, size = [], 0
            else:
                yield Reject(number, "", raw.code, raw.message)
            continue
        text = raw.rstrip("\r\n")
        if not buffer and not text.strip():
            yield Skipped(1, "blank")
            continue
        if not buffer:
            start = number
        buffer.append(text)
        size += len(text)
        # a game on one line, or a pretty-printed one whose closing brace stands at the start of a line
        if len(buffer) > 1 and text.rstrip() not in ("}", "]") and size <= MAX_GAME_BYTES:
            continue
        joined = "\n".join(buffer)
        try:
            obj = orjson.loads(joined)
        except orjson.JSONDecodeError as e:
            if size > MAX_GAME_BYTES or buffer[0].lstrip()[:1] not in ("{", "["):
                yield Reject(start, joined[:10000], "IMPORT_ROW", f"not JSON: {e}", span=len(buffer))
                buffer, size = [], 0
            continue
        span = len(buffer)
        buffer, size = [], 0
        try:
            records = convert_game(obj, f"{game}-{start}")
        except MajsoulError as e:
            yield Reject(start, joined[:10000], "IMPORT_ROW", str(e), span=span)
            continue
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:  # a shape no check foresaw
            yield Reject(start, joined[:10000], "IMPORT_ROW", f"cannot be read: {type(e).__name__}: {e}", span=span)
            continue
        if not records:
            yield Skipped(span, "framing")
        for i, rec in enumerate(records):
            yield Converted(rec, span if i == 0 else 0)
    if buffer:
        yield Reject(start, "\n".join(buffer)[:10000], "IMPORT_ROW", "the file ends inside a game", span=len(buffer))


def _actions(obj: Any) -> tuple[dict[str, Any], list[Any]]:
    if isinstance(obj, list):
        return {}, obj
    if not isinstance(obj, dict):
        raise MajsoulError("a game must be a JSON object (head and actions) or a list of actions")
    raw_head, raw_data = obj.get("head"), obj.get("data")
    head: dict[str, Any] = raw_head if isinstance(raw_head, dict) else {}
    inner: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
    for holder in (obj, inner):
        for key in ("actions", "records", "data"):
            found = holder.get(key)
            if isinstance(found, list):
                return head, found
    raise MajsoulError("no list of actions (actions, records or data) in the game")


def _tile(value: Any, where: str) -> str:
    if isinstance(value, str) and len(value) == 2 and value[0] in "123456789" and value[1] in SUITS:
        return value
    raise MajsoulError(f"{where}: {value!r} is not a tile of the three suits (1m-9s; 川麻 has no red fives)")


def _tiles(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value[i : i + 2] for i in range(0, len(value), 2)]
    if not isinstance(value, list):
        raise MajsoulError(f"{where}: not a list of tiles")
    return [_tile(t, where) for t in value]


def _seat(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
        return value
    raise MajsoulError(f"{where}: {value!r} is not a seat 0-3")


def _vector(value: Any, where: str) -> list[int]:
    if (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(d, int) and not isinstance(d, bool) for d in value)
    ):
        return list(value)
    raise MajsoulError(f"{where}: {value!r} is not four integer score changes")


def convert_game(obj: Any, fallback_id: str) -> list[dict[str, Any]]:
    head, actions = _actions(obj)
    game_id = str(head.get("uuid") or fallback_id)
    players = _players(head)
    records: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    for i, action in enumerate(actions):
        if (
            not isinstance(action, dict)
            or not isinstance(action.get("name"), str)
            or not isinstance(action.get("data", {}), dict)
        ):
            raise MajsoulError(f"action {i}: not {{name, data}}")
        if action["name"] == "RecordNewRound":
            if current:
                raise MajsoulError(f"action {i}: a round starts before round {len(records) + 1} ended")
            current = [action]
        elif current:
            current.append(action)
            if action["name"] in ("RecordHuleXueZhanEnd", "RecordNoTile", "RecordLiuJu"):
                n = len(records) + 1
                try:
                    records.append(_Round(current).record(f"{game_id}-{n}", game_id, n, players))
                except MajsoulError as e:
                    raise MajsoulError(f"{game_id}-{n}: {e}") from None
                current = []
        elif action["name"] != "RecordGangResultEnd":
            raise MajsoulError(f"action {i}: {action['name']} outside a round")
    if current:
        raise MajsoulError(f"{game_id}-{len(records) + 1}: the game ends inside a round")
    return records


def _players(head: dict[str, Any]) -> list[str]:
    names = [f"seat{s}" for s in range(4)]
    accounts = head.get("accounts")
    if isinstance(accounts, list):
        for a in accounts:
            if isinstance(a, dict) and isinstance(a.get("seat", 0), int) and 0 <= a.get("seat", 0) <= 3:
                ident = a.get("account_id") or a.get("nickname")
                if ident is not None:
                    names[a.get("seat", 0)] = str(ident)
    return names


class _Round:
    """One round's actions restated."""

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        start = actions[0].get("data") or {}
        self.dealer = _seat(start.get("ju"), "RecordNewRound.ju")
        self.deal = [_tiles(start.get(f"tiles{s}"), f"RecordNewRound.tiles{s}") for s in range(4)]
        if len(self.deal[self.dealer]) != 14 or any(len(self.deal[s]) != 13 for s in range(4) if s != self.dealer):
            raise MajsoulError("RecordNewRound: the dealer (seat ju) holds 14 tiles and every other seat 13")
        self.wall = self._wall(start.get("paishan"))
        self.hash = {k: start[k] for k in ("md5", "sha256") if isinstance(start.get(k), str)}
        self.exchange: dict[str, Any] | None = None
        self.que: list[str] | None = None
        self.events: list[dict[str, Any]] = []
        self.payments: list[dict[str, Any]] = []
        self.wins: list[dict[str, Any]] = []
        self.deltas = [0, 0, 0, 0]
        self.itemised = True
        self.won: list[int] = []
        self._kong_income: list[list[tuple[int, int]]] = [[] for _ in range(4)]  # seat → (payer, amount) each
        self.notes: list[str] = []
        for i, action in enumerate(actions[1:], start=1):
            self._action(action["name"], action.get("data") or {}, f"action {i} {action['name']}")

    def _wall(self, paishan: Any) -> list[str] | None:
        """The whole wall in our dealing order, when ``paishan`` is the rest of it (55 tiles) or the whole of it
        in the dealt tiles' order (108, its first 53 the dealt tiles)."""
        if not isinstance(paishan, str) or not paishan:
            return None
        rest = _tiles(paishan, "RecordNewRound.paishan")
        dealt = [t for hand in self.deal for t in hand]
        if len(rest) == 108 and sorted(rest[:53]) == sorted(dealt):
            rest = rest[53:]
        if len(rest) != 55:
            return None
        d = self.dealer
        wall = [t for k in range(4) for t in self.deal[(d + k) % 4][:13]] + [self.deal[d][13]] + rest
        if any(wall.count(f"{r}{s}") != 4 for r in range(1, 10) for s in SUITS):
            return None
        return wall

    def _action(self, name: str, data: dict[str, Any], where: str) -> None:
        if name == "RecordChangeTile":
            infos = data.get("change_tile_infos")
            if not isinstance(infos, list) or len(infos) != 4:
                raise MajsoulError(f"{where}: change_tile_infos must hold four seats")
            direction = CHANGE_DIRECTION.get(data.get("change_type"))  # type: ignore[arg-type]
            if direction is None:
                raise MajsoulError(f"{where}: change_type {data.get('change_type')!r} is not 0, 1 or 2")
            given = [_tiles((info or {}).get("out_tiles"), where) for info in infos]
            self.exchange = {"direction": direction, "given": given}
        elif name == "RecordSelectGap":
            gaps = data.get("gap_types")
            if not isinstance(gaps, list) or len(gaps) != 4 or any(g not in GAP_SUIT for g in gaps):
                raise MajsoulError(f"{where}: gap_types must be four of 0 (饼), 1 (万), 2 (条)")
            self.que = [GAP_SUIT[g] for g in gaps]
        elif name == "RecordDealTile":
            self.events.append(
                {"t": "draw", "seat": _seat(data.get("seat"), where), "tile": _tile(data.get("tile"), where)}
            )
        elif name == "RecordDiscardTile":
            self.events.append(
                {"t": "discard", "seat": _seat(data.get("seat"), where), "tile": _tile(data.get("tile"), where)}
            )
        elif name == "RecordChiPengGang":
            seat = _seat(data.get("seat"), where)
            tiles, froms = _tiles(data.get("tiles"), where), data.get("froms")
            kind = data.get("type")
            if not isinstance(froms, list) or len(froms) != len(tiles):
                raise MajsoulError(f"{where}: froms must name a seat per tile")
            taken = [(t, f) for t, f in zip(tiles, froms, strict=True) if f != seat]
            if len(taken) != 1:
                raise MajsoulError(f"{where}: one tile of the meld comes from another seat")
            tile, source = taken[0]
            if kind == 1 and len(tiles) == 3:
                self.events.append({"t": "pong", "seat": seat, "tile": tile, "from": _seat(source, where)})
            elif kind == 2 and len(tiles) == 4:
                self.events.append(
                    {"t": "kong", "seat": seat, "tile": tile, "kind": "direct", "from": _seat(source, where)}
                )
            else:
                raise MajsoulError(f"{where}: type {kind!r} with {len(tiles)} tiles is not a pong (1) or a kong (2)")
        elif name == "RecordAnGangAddGang":
            seat = _seat(data.get("seat"), where)
            tile = _tiles(data.get("tiles"), where)[0]
            kinds = {2: "added", 3: "concealed"}
            if data.get("type") not in kinds:
                raise MajsoulError(f"{where}: type {data.get('type')!r} is not 2 (加杠) or 3 (暗杠)")
            self.events.append({"t": "kong", "seat": seat, "tile": tile, "kind": kinds[data["type"]]})
        elif name in ("RecordGangResult", "RecordGangResultEnd"):
            info = data.get("gang_infos") or {}
            vector = _vector(info.get("delta_scores"), where)
            kong = next((i for i in range(len(self.events) - 1, -1, -1) if self.events[i]["t"] == "kong"), None)
            if kong is None:
                raise MajsoulError(f"{where}: kong money with no kong before it")
            seat = self.events[kong]["seat"]
            for payer, payee, amount in _one_counterparty(vector, where):
                self._pay(payer, payee, amount, "kong", kong)
                if payee == seat:
                    self._kong_income[seat].append((payer, amount))
        elif name in ("RecordHuleXueZhanMid", "RecordHuleXueZhanEnd"):
            self._hule(data, where)
        elif name == "RecordNoTile":
            self._no_tile(data, where)
        elif name == "RecordLiuJu":
            raise MajsoulError(f"{where}: an abortive draw is not a 川麻 ending")
        # anything else (RecordBaBei, riichi-only actions) has no place in 川麻
        elif name.startswith("Record"):
            raise MajsoulError(f"{where}: not a 川麻 action")

    def _pay(self, payer: int, payee: int | None, amount: int, reason: str, event: int | None) -> None:
        self.payments.append({"from": payer, "to": payee, "amount": amount, "reason": reason, "event": event})
        self.deltas[payer] -= amount
        if payee is not None:
            self.deltas[payee] += amount

    def _hule(self, data: dict[str, Any], where: str) -> None:
        hules = data.get("hules")
        if not isinstance(hules, list) or not hules:
            raise MajsoulError(f"{where}: no hules")
        vector = _vector(data.get("delta_scores"), where)
        last = self.events[-1] if self.events else None
        robbed = last is not None and last.get("kind") == "added"
        discarder = None
        if last is not None and (last["t"] == "discard" or robbed):
            discarder = last["seat"]
        at: dict[int, int] = {}
        for h in hules:
            if not isinstance(h, dict):
                raise MajsoulError(f"{where}: a hule is not an object")
            seat = _seat(h.get("seat"), where)
            tile = _tile(h.get("hu_tile"), where)
            zimo = bool(h.get("zimo"))
            event: dict[str, Any] = {"t": "hu", "seat": seat, "tile": tile, "from": None if zimo else discarder}
            if not zimo and discarder is None:
                raise MajsoulError(f"{where}: a win on a discard with no discard before it")
            if robbed and not zimo:
                event["rob_kong"] = True
            self.events.append(event)
            at[seat] = len(self.events) - 1
            self.won.append(seat)
            win: dict[str, Any] = {"seat": seat, "event": at[seat]}
            count = h.get("count")
            if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
                win["fan"] = count
            self.wins.append(win)
        gainers = [s for s in range(4) if vector[s] > 0]
        losers = [s for s in range(4) if vector[s] < 0]
        if len(gainers) == 1:
            for payer in losers:
                self._pay(payer, gainers[0], -vector[payer], "hu", at.get(gainers[0]))
        elif len(losers) == 1:
            for payee in gainers:
                self._pay(losers[0], payee, vector[payee], "hu", at.get(payee))
        elif gainers or losers:
            raise MajsoulError(f"{where}: delta_scores {vector} has several payers and several receivers")
        if sum(vector) != 0:
            raise MajsoulError(f"{where}: delta_scores {vector} does not add up")

    def _no_tile(self, data: dict[str, Any], where: str) -> None:
        scores = data.get("scores")
        if not isinstance(scores, list) or not scores or not isinstance(scores[0], dict):
            raise MajsoulError(f"{where}: no scores")
        delta = _vector(scores[0].get("delta_scores"), where)
        taxes = _vector(scores[0].get("taxes") or [0, 0, 0, 0], where)
        ting = data.get("players")
        ready = (
            [bool(p.get("tingpai")) if isinstance(p, dict) else False for p in ting] if isinstance(ting, list) else []
        )
        if len(ready) != 4:
            raise MajsoulError(f"{where}: players must give each seat's tingpai")
        still_in = [s for s in range(4) if s not in self.won]
        pigs = [s for s in still_in if self._holds_void(s)] if self.que is not None else None
        flows = _end_flows(delta, still_in, ready, pigs) if pigs is not None else None
        refunds = self._refunds(taxes, still_in, ready)
        if flows is None or refunds is None:
            self.itemised = False
            self.notes.append("the wall's end could not be itemised: the hand's payments are left not itemised")
            for s in range(4):
                self.deltas[s] += delta[s] + taxes[s]
            return
        for payer, payee, amount in flows:
            assert pigs is not None
            self._pay(payer, payee, amount, "hua_zhu" if payer in pigs else "cha_jiao", None)
        for payer, payee, amount in refunds:
            self._pay(payer, payee, amount, "tui_shui", None)

    def _refunds(self, taxes: list[int], still_in: list[int], ready: list[bool]) -> list[tuple[int, int, int]] | None:
        """退税: each player still in and not ready returns each kong payment it took; ``None`` unless that is
        ``taxes`` exactly."""
        out = [
            (seat, payer, amount) for seat in still_in if not ready[seat] for payer, amount in self._kong_income[seat]
        ]
        vector = [0, 0, 0, 0]
        for payer, payee, amount in out:
            vector[payer] -= amount
            vector[payee] += amount
        return out if vector == taxes else None

    def _holds_void(self, seat: int) -> bool:
        """Whether ``seat`` ends holding a tile of its void suit, in hand or in a meld (a flower pig)."""
        assert self.que is not None
        void = self.que[seat]
        held = list(self.deal[seat])
        if self.exchange is not None:
            given = self.exchange["given"]
            offset = {"ccw": 1, "across": 2, "cw": 3}[self.exchange["direction"]]
            for t in given[seat]:
                if t in held:  # a tile not held is the validator's finding (TILE_EXCHANGE), not the reader's
                    held.remove(t)
            held += given[(seat - offset) % 4]
        for e in self.events:
            if e["seat"] == seat and e["t"] in ("draw", "pong", "kong"):
                held.append(e["tile"])
            elif e["seat"] == seat and e["t"] == "discard" and e["tile"] in held:
                held.remove(e["tile"])
        return any(t[1] == void for t in held)

    def record(self, hand_id: str, game_id: str, n: int, players: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": "xzlog/1",
            "level": "full" if self.wall is not None else "dealt",
            "hand_id": hand_id,
            "session_id": game_id,
            "hand_no": n,
            "ruleset": PROFILE,
            "players": players,
            "dealer": self.dealer,
        }
        if self.wall is not None:
            out["wall"] = self.wall
        out["deal"] = self.deal
        if self.exchange is not None:
            out["exchange"] = self.exchange
        if self.que is not None:
            out["que"] = self.que
        out["events"] = self.events
        result: dict[str, Any] = {"deltas": self.deltas, "wins": self.wins}
        if self.itemised:
            result = {"payments": self.payments, **result}
        out["result"] = result
        out["x_majsoul"] = {"hash": self.hash, "notes": self.notes}
        return out


def _one_counterparty(vector: list[int], where: str) -> list[tuple[int, int, int]]:
    gainers = [s for s in range(4) if vector[s] > 0]
    losers = [s for s in range(4) if vector[s] < 0]
    if sum(vector) != 0 or (len(gainers) > 1 and len(losers) > 1):
        raise MajsoulError(f"{where}: delta_scores {vector} is not one player's against the others")
    if len(gainers) == 1:
        return [(p, gainers[0], -vector[p]) for p in losers]
    return [(losers[0], g, vector[g]) for g in gainers] if losers else []


def _end_flows(
    delta: list[int], still_in: list[int], ready: list[bool], pigs: list[int]
) -> list[tuple[int, int, int]] | None:
    """查大叫 and 查花猪 between the players still in, by the game's rule (core.ts huangpai): a pig pays every
    other player still in the larger of that player's ready value and 8,000; a player not ready (not a pig) pays
    each ready player its value. The ready values are solved from ``delta``; ``None`` unless the flows give
    ``delta`` exactly."""
    value: dict[int, int] = {}
    not_ready = [s for s in still_in if not ready[s] and s not in pigs]
    for r in still_in:
        if not ready[r] or r in pigs:
            value[r] = 0
            continue
        n_np, n_pig = len(not_ready), len([p for p in pigs if p != r])
        got = delta[r]
        if n_np + n_pig == 0:
            value[r] = 0
        elif got >= PIG_FLOOR * (n_np + n_pig):
            value[r] = got // (n_np + n_pig)
        elif n_np:
            value[r] = (got - PIG_FLOOR * n_pig) // n_np
        else:
            return None
    flows = []
    for payer in still_in:
        for payee in still_in:
            if payee == payer:
                continue
            if payer in pigs:
                amount = max(value[payee], PIG_FLOOR)
            elif payer in not_ready and ready[payee] and payee not in pigs:
                amount = value[payee]
            else:
                continue
            if amount:
                flows.append((payer, payee, amount))
    vector = [0, 0, 0, 0]
    for payer, payee, amount in flows:
        vector[payer] -= amount
        vector[payee] += amount
    return flows if vector == delta else None
