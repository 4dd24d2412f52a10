"""Test helper: an xzlog/1 hand played by our engine under the ``majsoul`` profile, written as the list of named
actions Mahjong Soul's 川麻 replays hold (the shape of Fat-pig-Cui/majsoul-replay-editor's ``src/core/glue.ts``).

Independent of :mod:`pipeline.formats.majsoul` (which reads the other way): money is written as the game writes
it, ``delta_scores`` per kong and per win, and the wall's end merged into one 查叫/花猪 vector and one 退税
vector (``taxes``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from pipeline.validate import validate

GAP = {"p": 0, "m": 1, "s": 2}
CHANGE = {"ccw": 0, "across": 1, "cw": 2}


def vector(payments: list[dict[str, Any]]) -> list[int]:
    v = [0, 0, 0, 0]
    for p in payments:
        v[p["from"]] -= p["amount"]
        if p["to"] is not None:
            v[p["to"]] += p["amount"]
    return v


def write_round(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The actions of one round for the engine's hand ``record`` (level full, with an exchange and que)."""
    dealer, wall, events = record["dealer"], record["wall"], record["events"]
    facts = validate(record)
    fan = {w.event: w.score.fan for w in facts.hand.wins}
    deal = {(dealer + k) % 4: wall[13 * k : 13 * k + 13] for k in range(4)}
    deal[dealer] = deal[dealer] + [wall[52]]
    paishan = "".join(wall[53:])
    by_event: dict[int | None, list[dict[str, Any]]] = {}
    for p in record["result"]["payments"]:
        by_event.setdefault(p["event"], []).append(p)
    out: list[dict[str, Any]] = [
        {
            "name": "RecordNewRound",
            "data": {
                "chang": 0,
                "ju": dealer,
                "ben": 0,
                "scores": [50000] * 4,
                **{f"tiles{s}": deal[s] for s in range(4)},
                "paishan": paishan,
                "md5": hashlib.md5(paishan.encode()).hexdigest(),
                "left_tile_count": 55,
            },
        }
    ]
    ex = record["exchange"]
    offset = {"ccw": 1, "across": 2, "cw": 3}[ex["direction"]]
    out.append(
        {
            "name": "RecordChangeTile",
            "data": {
                "change_tile_infos": [
                    {"out_tiles": ex["given"][s], "in_tiles": ex["given"][(s - offset) % 4]} for s in range(4)
                ],
                "change_type": CHANGE[ex["direction"]],
            },
        }
    )
    out.append({"name": "RecordSelectGap", "data": {"gap_types": [GAP[q] for q in record["que"]]}})
    won = 0
    k = 0
    while k < len(events):
        e = events[k]
        t, seat = e["t"], e["seat"]
        if t == "draw":
            out.append({"name": "RecordDealTile", "data": {"seat": seat, "tile": e["tile"]}})
        elif t == "discard":
            out.append({"name": "RecordDiscardTile", "data": {"seat": seat, "tile": e["tile"], "moqie": False}})
        elif t == "pong":
            out.append(
                {
                    "name": "RecordChiPengGang",
                    "data": {"seat": seat, "tiles": [e["tile"]] * 3, "froms": [seat, seat, e["from"]], "type": 1},
                }
            )
        elif t == "kong":
            if e["kind"] == "direct":
                out.append(
                    {
                        "name": "RecordChiPengGang",
                        "data": {
                            "seat": seat,
                            "tiles": [e["tile"]] * 4,
                            "froms": [seat, seat, seat, e["from"]],
                            "type": 2,
                        },
                    }
                )
            else:
                out.append(
                    {
                        "name": "RecordAnGangAddGang",
                        "data": {"seat": seat, "tiles": e["tile"], "type": 2 if e["kind"] == "added" else 3},
                    }
                )
            money = [p for p in by_event.get(k, []) if p["reason"] == "kong"]
            if money:
                out.append({"name": "RecordGangResult", "data": {"gang_infos": {"delta_scores": vector(money)}}})
        else:
            group = [k]
            while (
                e["from"] is not None
                and group[-1] + 1 < len(events)
                and events[group[-1] + 1]["t"] == "hu"
                and events[group[-1] + 1]["from"] == e["from"]
            ):
                group.append(group[-1] + 1)
            won += len(group)
            hules = [
                {
                    "seat": events[g]["seat"],
                    "hu_tile": events[g]["tile"],
                    "zimo": events[g]["from"] is None,
                    "count": fan[g],
                }
                for g in group
            ]
            money = [p for g in group for p in by_event.get(g, [])]
            name = "RecordHuleXueZhanEnd" if won >= 3 else "RecordHuleXueZhanMid"
            out.append({"name": name, "data": {"hules": hules, "delta_scores": vector(money)}})
            k = group[-1]
        k += 1
    if won < 3:
        end = by_event.get(None, [])
        ready = [bool(s.ready_at_end) for s in facts.seats]
        out.append(
            {
                "name": "RecordNoTile",
                "data": {
                    "players": [{"tingpai": r} for r in ready],
                    "scores": [
                        {
                            "delta_scores": vector([p for p in end if p["reason"] in ("cha_jiao", "hua_zhu")]),
                            "taxes": vector([p for p in end if p["reason"] == "tui_shui"]),
                        }
                    ],
                },
            }
        )
    return out
