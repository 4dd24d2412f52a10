"""The Salasasa importer (issue 41) on games built by hand from the platform's stored layout: tiles 11-39, seat 0
dealt first whoever deals, ticks without an actor, money as score vectors."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from pipeline.formats import Accounting, Converted, Reject
from pipeline.formats.salasasa import SalasasaError, convert_game, read_salasasa
from pipeline.game.commitment import Commitment, regenerate, seed_hash
from pipeline.rules.tiles import TILE_NAMES
from pipeline.validate import validate

SEED = "ab" * 32
SALT = "cd" * 16


def code(tile: str) -> int:
    return {"m": 10, "p": 20, "s": 30}[tile[1]] + int(tile[0])


def rest_of(used: list[str]) -> list[str]:
    """The tiles of a 108-tile wall not in ``used``, in sorted order."""
    left = [f"{r}{s}" for s in "mps" for r in range(1, 10) for _ in range(4)]
    for t in used:
        left.remove(t)
    return left


SEAT1 = ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "1p", "2p", "3p", "5p"]  # waits on 5p
SEAT0 = ["5p", "1s", "1s", "2s", "9s", "9s", "6p", "7p", "8p", "4s", "4s", "6s", "7s", "8p"]  # the dealer: 14
SEAT2 = ["2s", "3s", "3s", "5s", "6s", "6s", "7s", "8s", "1p", "1p", "2p", "3p", "4p"]
SEAT3 = ["9p", "9p", "9p", "7p", "7p", "1m", "1m", "2m", "2m", "3m", "3m", "4m", "4m"]


def hand_ordinary(dealer_hand_14: bool = True) -> dict[str, Any]:
    """The dealer (seat 0) discards 5p; seat 1 wins on it (平和, 1 point): a room without blood battle."""
    hands = [list(SEAT0), list(SEAT1), list(SEAT2), list(SEAT3)]
    rest = rest_of([t for h in hands for t in h])
    ticks: list[list[Any]] = [
        ["c", 25, "F"],
        ["hu_first", 1, 1, ["平和"], [-1, 1, 0, 0], 25, False, 0, True],
        ["end"],
    ]
    if not dealer_hand_14:
        dealer14 = hands[0].pop()
        ticks.insert(0, ["d", code(dealer14)])
        rest.insert(0, dealer14)
    return {
        "current_round": 1,
        "round_index": 1,
        "dealer_index": 0,
        **{f"p{i}_tiles": [code(t) for t in hands[i]] for i in range(4)},
        "tiles_list": [code(t) for t in rest],
        "action_ticks": ticks,
    }


def game(*rounds: dict[str, Any], **title: Any) -> dict[str, Any]:
    head = {"rule": "sichuan", "sub_rule": "sichuan/standard", "max_round": 1}
    head.update({f"p{i}_uid": 100 + i for i in range(4)})
    head.update({f"p{i}_name": f"n{i}" for i in range(4)})
    head["start_time"] = "2026-07-01 20:15:00.000000"
    head.update(title)
    return {"game_title": head, "game_round": {f"round_index_{n}": r for n, r in enumerate(rounds, start=1)}}


def test_an_ordinary_hand_becomes_its_exact_record() -> None:
    (rec,) = convert_game("G1", game(hand_ordinary()), que={})
    assert rec["level"] == "full"
    assert rec["ruleset"] == {"profile": "salasasa", "mode": "ordinary"}  # proved: the win was paid at once
    assert rec["dealer"] == 0 and rec["players"] == ["100", "101", "102", "103"]
    assert rec["events"] == [
        {"t": "discard", "seat": 0, "tile": "5p"},
        {"t": "hu", "seat": 1, "tile": "5p", "from": 0},
    ]
    assert rec["result"] == {
        "payments": [{"from": 0, "to": 1, "amount": 1, "reason": "hu", "event": 1}],
        "deltas": [-1, 1, 0, 0],
        "wins": [{"seat": 1, "event": 1, "points": 1}],
    }
    assert rec["unrecorded"] == ["que"] and "que" not in rec  # only seat 1's void suit is proved
    assert rec["x_salasasa"]["que_from"] == {"1": "won holding two suits"}
    assert "played_at" not in rec  # no time zone: no time
    assert rec["wall"][:13] == SEAT0[:13] and rec["wall"][52] == SEAT0[13]
    v = validate(rec)
    assert v.ok, v.issues
    assert any("定缺 not recorded" in n for n in v.not_checked)


def test_older_version_dealer_from_first_draw_and_the_dealer_rule() -> None:
    first = hand_ordinary(dealer_hand_14=False)
    (rec,) = convert_game("G2", game(first), que={})
    assert rec["dealer"] == 0 and rec["x_salasasa"]["dealer_from"] == "seat 0 deals the first hand"
    assert len(rec["deal"][0]) == 14 and rec["events"][0] == {"t": "discard", "seat": 0, "tile": "5p"}
    assert validate(rec).ok


def test_a_time_zone_and_user_que_are_used_only_when_given() -> None:
    (rec,) = convert_game("G3", game(hand_ordinary()), que={"G3-1": ["m", "s", "m", "s"]}, zone=None)
    assert rec["que"] == ["m", "s", "m", "s"] and "unrecorded" not in rec
    assert rec["x_salasasa"]["que_from"] == "--que"
    from zoneinfo import ZoneInfo

    (rec,) = convert_game("G3", game(hand_ordinary()), que={}, zone=ZoneInfo("Asia/Shanghai"))
    assert rec["played_at"] == "2026-07-01T20:15:00+08:00"


def test_a_kong_replacement_from_the_back_of_the_wall_is_found() -> None:
    """Older versions drew kong replacements from the back of the wall: the record keeps the draw where it was,
    and the validator finds it (TILE_WALL_ORDER)."""
    r = hand_ordinary()
    # seat 3 holds three 9p: it konged the dealer's 9p, drew from the back, discarded it, seat 1 won the 5p later
    r["p0_tiles"][0] = code("9p")  # the dealer holds the fourth 9p instead of the 5p ...
    rest = r["tiles_list"]
    rest.remove(code("9p"))
    rest.append(code("5p"))  # ... the 5p is the wall's last tile
    back = rest[-1]
    r["action_ticks"] = [
        ["c", code("9p"), "F"],
        ["g", code("9p"), 3, code("9p"), code("9p"), code("9p"), "gs", -2, 0, 0, 2],
        ["gd", back],
        ["c", back, "T"],
        ["hu_first", 1, 1, ["平和"], [0, 1, 0, -1], back, False, 3, True],
        ["end"],
    ]
    (rec,) = convert_game("G4", game(r), que={})
    assert rec["events"][1] == {"t": "kong", "seat": 3, "tile": "9p", "kind": "direct", "from": 0}
    assert rec["events"][2] == {"t": "draw", "seat": 3, "tile": "5p"}
    assert rec["result"]["payments"][0] == {"from": 0, "to": 3, "amount": 2, "reason": "kong", "event": 1}
    codes = [i.code for i in validate(rec).issues]
    assert codes and codes[0] == "TILE_WALL_ORDER"


def test_a_hand_showing_both_modes_is_rejected() -> None:
    """A win paid at once (no blood battle) and a 查叫 panel (blood battle only) in one hand: no mode is proved."""
    r = hand_ordinary()
    r["action_ticks"] = [
        ["c", 25, "F"],
        ["hu_first", 1, 1, ["平和"], [-1, 1, 0, 0], 25, False, 0, True],
        ["liuju", "chajiao", 1, "ting", "[]", [0, 4, -4, 0], 1],
        ["end"],
    ]
    with pytest.raises(SalasasaError, match="both with and without"):
        convert_game("G5", game(r), que={})


def test_the_wall_commitment_is_checked() -> None:
    c = Commitment("salasasa-sha256-v1", seed_hash(SEED, SALT), SALT, SEED, 1)
    wall = [TILE_NAMES[k] for k in regenerate(c, dealer=0)]
    platform = wall  # dealer 0: the platform's order is ours
    r = hand_ordinary()
    for s in range(4):
        r[f"p{s}_tiles"] = [code(t) for t in platform[13 * s : 13 * s + 13]]
    r["p0_tiles"].append(code(platform[52]))
    r["tiles_list"] = [code(t) for t in platform[53:]]
    first = platform[52]
    r["action_ticks"] = [["c", code(first), "T"]]  # the hand is cut short: only the commitment is asked about
    g = game(r, commitment_hex=seed_hash(SEED, SALT), salt=SALT, master_seed_hex=SEED)
    (rec,) = convert_game("G6", g, que={}, mode="blood_battle")
    assert rec["commitment"] == {
        "scheme": "salasasa-sha256-v1",
        "hash": seed_hash(SEED, SALT),
        "salt": SALT,
        "round": 1,
        "seed": SEED,
    }
    assert not [i for i in validate(rec).issues if i.code.startswith("TILE_COMMIT_")]
    bad = copy.deepcopy(rec)
    bad["wall"][60], bad["wall"][70] = bad["wall"][70], bad["wall"][60]
    if bad["wall"][60] != bad["wall"][70]:
        assert "TILE_COMMIT_WALL" in [i.code for i in validate(bad).issues]
    bad = copy.deepcopy(rec)
    bad["commitment"]["seed"] = "ef" * 32
    assert "TILE_COMMIT_SEED" in [i.code for i in validate(bad).issues]


def test_every_line_is_imported_or_rejected() -> None:
    good = orjson.dumps({"game_id": "G7", "record": game(hand_ordinary())}).decode()
    lines = [good, "", "{not json", orjson.dumps({"game_id": "G8", "record": {"game_title": {}}}).decode()]
    acc = Accounting(lines_read=len(lines))
    items = list(read_salasasa(lines))
    for item in items:
        acc.add(item)
    assert acc.balanced and acc.records == 1 and acc.lines_rejected == 2
    assert all(isinstance(i, Reject) for i in items[2:])


def test_a_csv_copy_and_player_totals() -> None:
    record = orjson.dumps(game(hand_ordinary())).decode().replace('"', '""')
    lines = ["game_id,record", f'G9,"{record}"']
    items = list(read_salasasa(lines, totals={"G9": {0: -1, 1: 1, 2: 0, 3: 0}}))
    assert [type(i).__name__ for i in items] == ["Skipped", "Converted"]
    items = list(read_salasasa(lines, totals={"G9": {0: -1, 1: 2, 2: 0, 3: 0}}))
    assert isinstance(items[1], Reject) and "game_player_records" in items[1].message
    assert isinstance(items[0], Converted) is False
