"""A small room of hand-written score-sheet records (level ``settlement``: the wins, who paid them, the kongs
and the end states, as a club's sheet gives them), ingested for real, whose every figure is worked out by hand
in the tests that use it (``test_analytics_scope.py``, ``test_analytics_players.py``).

Five players at three tables; the times are written in Chengdu's offset (+08:00) close to midnight, so that a
hand's local date and its UTC date differ. Payments are the engine's (profile chengdu: 1 fan = 1 point, a
self-draw adds the base point, 清一色 is 3 fan = 4 points, 对对胡 2 fan = 2 points, a direct kong 2 from the
discarder, 查大叫 the ready value from a player not ready).

- ``h1`` table t1, 2026-10-31T23:30+08:00 (15:30 UTC, 31 October either way). p1 p2 p3 p4, dealer p1.
  p2 wins on p1's discard (1), p3 on p1's (1), p4 self-draws (p1, the only one still in, pays 1 + 1).
  Deltas -4 1 1 2.
- ``h2`` table t1, 2026-11-01T00:30+08:00: 1 November in Chengdu, still 31 October (16:30) in UTC. p1 p2 p3
  p4, dealer p2. p1 makes a direct kong on p2's discard (p2 pays 2), p2 wins 清一色 on p1's discard (p1 pays 4);
  the wall runs out with p1, p3, p4 ready (nothing more paid). Deltas -2 2 0 0; the sheet claims 0 0 0 0
  (two SETTLE_DELTA findings).
- ``h3`` table t2, 2026-11-01T12:00+08:00 (04:00 UTC). p1 p3 p5 p2, dealer p1. p5 wins on p1's discard (1),
  p2 on p3's (1), p1 对对胡 on p3's (2). Deltas 1 -3 1 1.
- ``h4`` table t1, no time. p2 p3 p4 p5. p2 self-draws (p3, p4, p5 pay 2 each); at the wall p3 and p5 are
  ready (1 fan), p4 not: p4 pays each 1 (查大叫). Deltas 6 -1 -4 -1; the sheet claims 6 -1 -4 0, which do not
  add up (one SETTLE_UNBALANCED finding).
- ``h5`` table t3, profile siren_liangse (Chengdu's rules, two suits), 2026-11-02T09:00:00Z (offset 0). p1 p2 p4
  p5. p4 wins on p2's discard (1); the wall runs out with the others ready. Deltas 0 -1 1 0.
- and one line that is no record (a reject: no hand, no table, no time).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.ingest.run import ingest


def _record(
    hand_id: str,
    players: list[str],
    events: list[dict[str, Any]],
    wins: list[dict[str, Any]],
    deltas: list[int],
    *,
    table: str,
    played_at: str | None,
    dealer: int = 0,
    ends: list[dict[str, Any]] | None = None,
    ruleset: str = "chengdu",
) -> dict[str, Any]:
    r: dict[str, Any] = {
        "format": "xzlog/1",
        "level": "settlement",
        "hand_id": hand_id,
        "session_id": f"s-{hand_id}",
        "hand_no": 1,
        "table_id": table,
        "ruleset": ruleset,
        "players": players,
        "dealer": dealer,
        "events": events,
    }
    if played_at is not None:
        r["played_at"] = played_at
    if ends is not None:
        r["end"] = ends
    r["result"] = {"deltas": deltas, "wins": wins}
    return r


def _ready(*seats: int) -> list[dict[str, Any]]:
    return [{"seat": s, "state": "ready", "fan": 1} for s in seats]


def _win(seat: int, event: int, *patterns: str) -> dict[str, Any]:
    return {"seat": seat, "event": event, "patterns": list(patterns)}


RECORDS: list[dict[str, Any]] = [
    _record(
        "h1",
        ["p1", "p2", "p3", "p4"],
        [{"t": "hu", "seat": 1, "from": 0}, {"t": "hu", "seat": 2, "from": 0}, {"t": "hu", "seat": 3, "from": None}],
        [_win(1, 0, "ping_hu"), _win(2, 1, "ping_hu"), _win(3, 2, "ping_hu")],
        [-4, 1, 1, 2],
        table="t1",
        played_at="2026-10-31T23:30:00+08:00",
    ),
    _record(
        "h2",
        ["p1", "p2", "p3", "p4"],
        [{"t": "kong", "seat": 0, "kind": "direct", "from": 1}, {"t": "hu", "seat": 1, "from": 0}],
        [_win(1, 1, "qing_yi_se")],
        [0, 0, 0, 0],  # wrong: the rules give -2 2 0 0
        table="t1",
        played_at="2026-11-01T00:30:00+08:00",
        dealer=1,
        ends=_ready(0, 2, 3),
    ),
    _record(
        "h3",
        ["p1", "p3", "p5", "p2"],
        [{"t": "hu", "seat": 2, "from": 0}, {"t": "hu", "seat": 3, "from": 1}, {"t": "hu", "seat": 0, "from": 1}],
        [_win(2, 0, "ping_hu"), _win(3, 1, "ping_hu"), _win(0, 2, "dui_dui_hu")],
        [1, -3, 1, 1],
        table="t2",
        played_at="2026-11-01T12:00:00+08:00",
    ),
    _record(
        "h4",
        ["p2", "p3", "p4", "p5"],
        [{"t": "hu", "seat": 0, "from": None}],
        [_win(0, 0, "ping_hu")],
        [6, -1, -4, 0],  # wrong: p5's is -1
        table="t1",
        played_at=None,
        ends=[*_ready(1, 3), {"seat": 2, "state": "not_ready"}],
    ),
    _record(
        "h5",
        ["p1", "p2", "p4", "p5"],
        [{"t": "hu", "seat": 2, "from": 1}],
        [_win(2, 0, "ping_hu")],
        [0, -1, 1, 0],
        table="t3",
        played_at="2026-11-02T09:00:00Z",
        ends=_ready(0, 1, 3),
        ruleset="siren_liangse",
    ),
]


def build(root: Path) -> Path:
    """Ingest :data:`RECORDS` and one line that is no record into a warehouse under ``root``; its path."""
    path = root / "room.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in RECORDS]
    path.write_text("\n".join([*lines[:2], "this line is no record", *lines[2:]]) + "\n", encoding="utf-8")
    ingest([str(path)], root / "wh", workers=1)
    return root / "wh"
