"""Test helper: an xzlog/1 hand played by our engine, written as the Salasasa platform stores a hand (newer
versions: the dealer dealt 14 tiles, 血战 money settled at the end in win order, one 查叫 panel per player still in).

Independent of :mod:`pipeline.formats.salasasa` (which reads the other way): what the platform writes is
restated from its stored layout (tiles 11-39, seat 0 dealt first, ticks without an actor, score vectors), so that
reading a written hand back must give the engine's record. Only what a real record would carry is written.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.validate import validate

NAME_OF = {
    "ping_hu": "平和",
    "dui_dui_hu": "大对子",
    "qing_yi_se": "清一色",
    "qi_dui": "七对",
    "jin_gou_diao": "金钩钓",
    "gang_shang_hua": "杠上花",
    "gang_shang_pao": "杠上炮",
    "qiang_gang": "抢杠",
    "hai_di": "海底",
}


def code(tile: str) -> int:
    return {"m": 10, "p": 20, "s": 30}[tile[1]] + int(tile[0])


def vector(payments: list[dict[str, Any]]) -> list[int]:
    v = [0, 0, 0, 0]
    for p in payments:
        v[p["from"]] -= p["amount"]
        if p["to"] is not None:
            v[p["to"]] += p["amount"]
    return v


def fan_names(record: dict[str, Any], win_event: int) -> list[str]:
    """The platform's names for a win: 杠 for each of the winner's kongs, 根 for the other roots."""
    v = validate(record)
    win = next(w for w in v.hand.wins if w.event == win_event)
    seat = win.seat
    kongs = sum(1 for e in record["events"][:win_event] if e["t"] == "kong" and e["seat"] == seat)
    names: list[str] = []
    roots = 0
    for p in win.score.patterns:
        if p.id == "gen":
            roots += p.fan  # one pattern for all the roots, 1 fan each in the salasasa profile
        elif p.id in NAME_OF:
            names.append(NAME_OF[p.id])
        elif p.id != "zi_mo":
            raise AssertionError(f"no platform name for {p.id}")
    # the engine's 根 counts each kong as one root; the platform writes 杠 for those
    kongs = min(kongs, roots)
    names += ["杠"] * kongs + ["根"] * (roots - kongs)
    if names != ["平和"] and "平和" in names:
        names.remove("平和")
    return names or ["平和"]


def write_round(record: dict[str, Any], n: int) -> dict[str, Any]:
    """The platform's ``round_index_N`` entry for the engine's hand ``record`` (level full, with que)."""
    dealer, wall, events = record["dealer"], record["wall"], record["events"]
    payments = record["result"]["payments"]
    hands = {(dealer + k) % 4: wall[13 * k : 13 * k + 13] for k in range(4)}
    hands[dealer] = hands[dealer] + [wall[52]]
    by_event: dict[int | None, list[dict[str, Any]]] = {}
    for p in payments:
        by_event.setdefault(p["event"], []).append(p)
    ticks: list[list[Any]] = []
    won: list[int] = []
    wins: list[tuple[int, str, int]] = []  # (event, hu class, seat)
    points = {w["event"]: w["points"] for w in record["result"]["wins"]}
    last_draw: dict[int, str] = {}
    k = 0
    while k < len(events):
        e = events[k]
        t, seat = e["t"], e["seat"]
        prev = events[k - 1] if k else None
        if t == "draw":
            kind = "gd" if prev is not None and prev["t"] == "kong" and prev["seat"] == seat else "d"
            ticks.append([kind, code(e["tile"])])
            last_draw[seat] = e["tile"]
        elif t == "discard":
            fresh = prev is not None and prev["t"] == "draw" and prev["seat"] == seat and prev["tile"] == e["tile"]
            ticks.append(["c", code(e["tile"]), "T" if fresh else "F"])
        elif t == "pong":
            ticks.append(["p", code(e["tile"]), seat, code(e["tile"]), code(e["tile"])])
        elif t == "kong":
            c = code(e["tile"])
            fresh = prev is not None and prev["t"] == "draw" and prev["seat"] == seat and prev["tile"] == e["tile"]
            money = vector(by_event.get(k, []))
            robbed = k + 1 < len(events) and events[k + 1].get("rob_kong")
            if e["kind"] == "direct":
                ticks.append(["g", c, seat, c, c, c, "gs", *money])
            elif e["kind"] == "concealed":
                ticks.append(["ag", c, "T" if fresh else "F", c, c, c, c, "gs", *money])
            elif robbed and fresh:  # the platform pays the fresh added kong, then refunds it when robbed
                still_in = [s for s in range(4) if s != seat and s not in won]
                money = [0, 0, 0, 0]
                for s in still_in:
                    money[s] = -1
                money[seat] = len(still_in)
                ticks.append(["jg", c, "T", "gs", *money])
                ticks.append(["gr", "gs", *[-m for m in money]])
            elif any(money):
                ticks.append(["jg", c, "T" if fresh else "F", "gs", *money])
            else:
                ticks.append(["jg", c, "T" if fresh else "F"])
        elif t == "hu" and e["from"] is None:
            ticks.append(["hu_self", seat, points[k], fan_names(record, k), [0, 0, 0, 0], code(e["tile"])])
            won.append(seat)
            wins.append((k, "hu_self", seat))
        else:  # wins on one discard (or robbed kong), with any 杠上炮 refund before them
            group = [k]
            while group[-1] + 1 < len(events) and events[group[-1] + 1]["t"] == "hu":
                nxt = events[group[-1] + 1]
                if nxt["from"] != e["from"] or nxt["from"] is None:
                    break
                group.append(group[-1] + 1)
            refunds = [p for g in group for p in by_event.get(g, []) if p["reason"] == "tui_shui"]
            if refunds:
                ticks.append(["gr", "gs", *vector(refunds)])
            for order, g in enumerate(group):
                w = events[g]
                cls = ("hu_first", "hu_second", "hu_third")[order]
                ticks.append(
                    [
                        cls,
                        w["seat"],
                        points[g],
                        fan_names(record, g),
                        [0, 0, 0, 0],
                        code(w["tile"]),
                        len(group) > 1,
                        w["from"],
                        order == len(group) - 1,
                    ]
                )
                won.append(w["seat"])
                wins.append((g, cls, w["seat"]))
            k = group[-1]
        k += 1
    # the end of the hand: every hand shown, each win's money in win order, a 查叫 panel per player still in
    ticks.append(["liuju", "reveal_hu", json.dumps({})])
    still_in = [s for s in range(4) if s not in won]
    panels = [] if len(won) >= 3 else _panel_order(still_in, won)
    for i, (event, cls, seat) in enumerate(wins):
        hu_money = [p for p in by_event.get(event, []) if p["reason"] == "hu"]
        final = int(i == len(wins) - 1 and not panels)
        ticks.append(
            ["liuju", "settle_hu", cls, seat, points[event], fan_names(record, event), vector(hu_money), final]
        )
    end = by_event.get(None, [])
    facts = validate(record).seats
    for i, seat in enumerate(panels):
        mine = [p for p in end if p["to"] == seat and p["reason"] == "cha_jiao"]
        mine += [p for p in end if p["from"] == seat and p["reason"] in ("tui_shui", "penalty")]
        ready = facts[seat].ready_at_end
        status = "ting" if ready else ("hua_zhu_active" if any(p["reason"] == "penalty" for p in mine) else "no_ting")
        ticks.append(["liuju", "chajiao", seat, status, "[]", vector(mine), int(i == len(panels) - 1)])
    ticks.append(["end"])
    return {
        "current_round": n,
        "round_index": n,
        "dealer_index": 0,
        "start_player_index": 0,
        **{f"p{s}_tiles": [code(t) for t in hands[s]] for s in range(4)},
        "tiles_list": [code(t) for t in wall[53:]],
        "action_ticks": ticks,
    }


def _panel_order(still_in: list[int], won: list[int]) -> list[int]:
    """The platform's order of the 查叫 panels: from the seat after the last winner, in turn order."""
    if not won:
        return sorted(still_in)
    start = (won[-1] + 1) % 4
    return [s for s in ((start + i) % 4 for i in range(4)) if s in still_in]
