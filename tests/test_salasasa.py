"""The Salasasa importer (issue 41) on games built by hand from the platform's stored layout: tiles 11-39, seat 0
dealt first whoever deals, ticks without an actor, money as score vectors."""

from __future__ import annotations

import copy
import itertools
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
        "wins": [{"seat": 1, "event": 1, "fan": 0, "points": 1}],
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
    assert rec["level"] == "full" and rec["wall"] == convert_game("G2", game(hand_ordinary()), que={})[0]["wall"]
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


# -- the fixtures: games played by the engine, stored as the platform stores them -----------------------------
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "salasasa"
ROOT = Path(__file__).resolve().parents[1]


def xuezhan(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from cli import app; app(prog_name='xuezhan')"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "games.jsonl").read_text(encoding="utf-8").splitlines()]


def expected() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "expected.jsonl").read_text(encoding="utf-8").splitlines()]


def que() -> dict[str, list[str]]:
    return json.loads((FIXTURES / "que.json").read_text(encoding="utf-8"))


def test_the_fixtures_are_what_build_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("salasasa_fixtures_build", FIXTURES / "build_salasasa.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)  # its own asserts: each row reads back as the hand the engine played
    for name, text in build.build().items():
        again = "run tests/fixtures/salasasa/build_salasasa.py"
        assert (FIXTURES / name).read_text(encoding="utf-8") == text, f"{name}: {again}"


def test_the_fixtures_hold_every_tick_and_case() -> None:
    ticks = {
        t[0] if t[0] != "liuju" else f"liuju/{t[1]}"
        for r in rows()
        for h in r["record"]["game_round"].values()
        for t in h["action_ticks"]
    }
    assert ticks >= {
        "d",
        "gd",
        "c",
        "p",
        "g",
        "ag",
        "jg",
        "gr",
        "hu_first",
        "hu_second",
        "hu_self",
        "end",
        "liuju/reveal_hu",
        "liuju/settle_hu",
        "liuju/chajiao",
    }
    hands = expected()
    events = [r["events"] for r in hands]
    assert any(e.get("rob_kong") for ev in events for e in ev)  # a robbed kong
    assert any(  # 一炮多响
        a["t"] == b["t"] == "hu" and a["from"] is not None and a["from"] == b["from"]
        for ev in events
        for a, b in itertools.pairwise(ev)
    )
    assert any(sum(e["t"] == "hu" for e in ev) == 3 for ev in events)  # a three-winner end
    reasons = {p["reason"] for r in hands for p in r["result"]["payments"]}
    assert reasons == {"hu", "kong", "cha_jiao", "tui_shui", "penalty"}  # 查叫, 退税, the active pig's 24
    assert any(p["reason"] == "tui_shui" and p["event"] is not None for r in hands for p in r["result"]["payments"])
    assert {r["dealer"] for r in hands} == {0, 2, 3}  # dealers from the 14-tile hands (the header says 0)


def test_import_writes_exactly_the_expected_records(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = xuezhan(
        "import",
        str(FIXTURES / "games.jsonl"),
        "--from",
        "salasasa",
        "--que",
        str(FIXTURES / "que.json"),
        "--player-records",
        str(FIXTURES / "players.csv"),
        "-o",
        str(out),
        "--quiet",
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "lines 2 = 2 in 10 records + 0 rejected + 0 framing + 0 blank" in done.stdout
    assert "games 2 read into 10 hands (salasasa); 0 games rejected" in done.stdout
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == expected()


def test_the_expected_records_are_clean_and_fully_checked() -> None:
    for rec in expected():
        v = validate(rec)
        assert v.ok and v.not_checked == (), (rec["hand_id"], v.issues, v.not_checked)


def test_without_que_no_finding_rests_on_a_guessed_void_suit() -> None:
    """Without --que, each hand proves every void suit (then checked in full) or says 定缺 was not recorded: the
    checks that need it are listed, never run on a guess, and no hand has a finding."""
    unrecorded = 0
    for row in rows():
        for rec in convert_game(row["game_id"], row["record"], que={}):
            v = validate(rec)
            assert v.ok, (rec["hand_id"], v.issues)
            if "unrecorded" in rec:
                unrecorded += 1
                assert any("定缺 not recorded" in n for n in v.not_checked)
            else:
                assert rec["que"] == que()[rec["hand_id"]]  # what the record proves is what was declared
    assert unrecorded


def test_without_que_the_import_writes_exactly_the_records_that_say_so(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = xuezhan("import", str(FIXTURES / "games.jsonl"), "--from", "salasasa", "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr + done.stdout
    want = [json.loads(line) for line in (FIXTURES / "expected-no-que.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == want
    assert all(r.get("unrecorded") == ["que"] and "que" not in r for r in want)


def test_a_copy_in_tsv_reads_the_same(tmp_path: Path) -> None:
    lines = ["game_id\trecord"] + [
        f"{r['game_id']}\t{json.dumps(r['record'], ensure_ascii=False)}".replace("\\", "\\\\") for r in rows()
    ]
    got = [i.record for i in read_salasasa(lines, que=que()) if isinstance(i, Converted)]
    assert got == expected()


def bug_back_of_the_wall() -> dict[str, Any]:
    """An older version's bug: the kong replacement taken from the back of the wall. The row is the hand as such
    a server stores it: the replacement tile sits at the end of tiles_list, the front is what the draws took."""
    row = copy.deepcopy(rows()[0])
    hand = row["record"]["game_round"]["round_index_1"]
    ticks = hand["action_ticks"]
    at = next(i for i, t in enumerate(ticks) if t[0] == "gd")
    drawn = sum(1 for t in ticks[:at] if t[0] in ("d", "gd"))
    rest = hand["tiles_list"]
    assert rest[drawn] == ticks[at][1]
    rest.append(rest.pop(drawn))
    return row


def test_a_replacement_from_the_back_of_the_wall_is_found() -> None:
    row = bug_back_of_the_wall()
    rec = convert_game(row["game_id"], row["record"], que=que())[0]
    v = validate(rec)
    assert [i.code for i in v.issues][:1] == ["TILE_WALL_ORDER"]


def test_a_not_ready_player_paying_every_winner_at_cha_jiao_is_found() -> None:
    """A documented bug class: at the wall's end a player not ready pays the winners too (winners take no part
    in 查叫). With the void suits known the wall's end is judged and each such payment is a finding; without
    them it is listed as not checked: a finding never rests on a guessed void suit."""
    row = copy.deepcopy(rows()[0])
    n, hand = next(
        (n, h)
        for n, h in enumerate(row["record"]["game_round"].values(), start=1)
        if any(t[:2] == ["liuju", "chajiao"] and t[3] == "no_ting" for t in h["action_ticks"])
        and any(t[0].startswith("hu_") for t in h["action_ticks"])
    )
    winners = {t[1] for t in hand["action_ticks"] if t[0].startswith("hu_")}
    panel = next(t for t in hand["action_ticks"] if t[:2] == ["liuju", "chajiao"] and t[3] == "no_ting")
    payer, vector = panel[2], panel[5]
    for w in winners:
        vector[w] += 1
        vector[payer] -= 1
    recs = convert_game(row["game_id"], row["record"], que=que())
    v = validate(recs[n - 1])
    extra = [i for i in v.issues if i.code.startswith("SETTLE_")]
    assert extra and all(i.code in ("SETTLE_EXTRA", "SETTLE_DELTA", "SETTLE_AMOUNT") for i in extra), v.issues
    blind = convert_game(row["game_id"], row["record"], que={})[n - 1]
    if "unrecorded" in blind:
        assert validate(blind).ok


def test_older_versions_read_the_same() -> None:
    """Versions before mid-2026 dealt every seat 13 (the dealer's 14th is its first draw) and settled the wins
    in seat order: the dealer then follows from the dealer rule, and the records are the same hands."""
    row = copy.deepcopy(rows()[0])
    for hand in row["record"]["game_round"].values():
        dealer = next(s for s in range(4) if len(hand[f"p{s}_tiles"]) == 14)
        fourteenth = hand[f"p{dealer}_tiles"].pop()
        hand["action_ticks"].insert(0, ["d", fourteenth])
        hand["tiles_list"].insert(0, fourteenth)  # stored after the deal, before the dealer's first draw
        settles = [t for t in hand["action_ticks"] if t[:2] == ["liuju", "settle_hu"]]
        for t in settles:
            del t[7:]
        first = hand["action_ticks"].index(settles[0]) if settles else 0
        for i, t in enumerate(sorted(settles, key=lambda t: t[3])):
            hand["action_ticks"][first + i] = t
    got = convert_game(row["game_id"], row["record"], que=que())
    want = [r for r in expected() if r["session_id"] == row["game_id"]]
    for g, w in zip(got, want, strict=True):
        assert (g["dealer"], g["deal"], g["wall"], g["events"]) == (w["dealer"], w["deal"], w["wall"], w["events"])
        assert sorted(map(str, g["result"]["payments"])) == sorted(map(str, w["result"]["payments"]))
        assert "dealer_14" not in g["x_salasasa"]["features"]
    assert any("settle_seat_order" in g["x_salasasa"]["features"] for g in got)


def test_a_revealed_seed_proves_every_wall_and_a_changed_one_is_found() -> None:
    row = copy.deepcopy(rows()[1])
    for rec in convert_game(row["game_id"], row["record"], que=que()):
        assert rec["commitment"]["seed"] == row["record"]["game_title"]["master_seed_hex"]
        assert validate(rec).ok
    hand = row["record"]["game_round"]["round_index_2"]
    rest = hand["tiles_list"]
    j = next(i for i in range(len(rest) - 2, 0, -1) if rest[i] != rest[-1])
    rest[j], rest[-1] = rest[-1], rest[j]  # two undrawn tiles swapped: the draws are the same, the wall is not
    recs = convert_game(row["game_id"], row["record"], que=que())
    assert [i.code for i in validate(recs[1]).issues] == ["TILE_COMMIT_WALL"]
    row["record"]["game_title"]["master_seed_hex"] = "11" * 32
    recs = convert_game(row["game_id"], row["record"], que=que())
    assert all("TILE_COMMIT_SEED" in [i.code for i in validate(r).issues] for r in recs)


# -- Mahjong Soul 川麻 (赤羽之战): one game built by hand from the format, as the paipu tools write it -----------
MAJSOUL = Path(__file__).parent / "fixtures" / "majsoul"


def test_the_majsoul_fixture_is_what_build_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("majsoul_fixtures_build", MAJSOUL / "build_majsoul.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)  # its own asserts: the game reads back as the hands the engine played
    for name, text in build.build().items():
        again = "run tests/fixtures/majsoul/build_majsoul.py"
        assert (MAJSOUL / name).read_text(encoding="utf-8") == text, f"{name}: {again}"


def majsoul_expected() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (MAJSOUL / "expected.jsonl").read_text(encoding="utf-8").splitlines()]


def test_majsoul_import_writes_exactly_the_expected_records(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = xuezhan("import", str(MAJSOUL / "game.json"), "--from", "majsoul", "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr + done.stdout
    lines = len((MAJSOUL / "game.json").read_text(encoding="utf-8").splitlines())
    assert f"lines {lines} = {lines} in 8 records + 0 rejected + 0 framing + 0 blank" in done.stdout
    assert "games 1 read into 8 hands (majsoul); 0 games rejected" in done.stdout
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == majsoul_expected()


def test_the_majsoul_records_are_clean_and_cover_every_case() -> None:
    hands = majsoul_expected()
    for rec in hands:
        v = validate(rec)
        assert v.ok and v.not_checked == (), (rec["hand_id"], v.issues)
        assert rec["ruleset"] == "majsoul" and rec["level"] == "full" and "exchange" in rec and "que" in rec
    events = [r["events"] for r in hands]
    assert {e.get("kind", e["t"]) for ev in events for e in ev} == {
        "draw",
        "discard",
        "pong",
        "hu",
        "direct",
        "added",
        "concealed",
    }
    assert any(e.get("rob_kong") for ev in events for e in ev)
    assert any(
        a["t"] == b["t"] == "hu" and a["from"] is not None and a["from"] == b["from"]
        for ev in events
        for a, b in itertools.pairwise(ev)
    )
    assert any(sum(e["t"] == "hu" for e in ev) == 3 for ev in events)
    assert {p["reason"] for r in hands for p in r["result"]["payments"]} == {
        "hu",
        "kong",
        "cha_jiao",
        "hua_zhu",
        "tui_shui",
    }
    game = json.loads((MAJSOUL / "game.json").read_text(encoding="utf-8"))
    names = {a["name"] for a in game["actions"]}
    assert names == {
        "RecordNewRound",
        "RecordChangeTile",
        "RecordSelectGap",
        "RecordDealTile",
        "RecordDiscardTile",
        "RecordChiPengGang",
        "RecordAnGangAddGang",
        "RecordGangResult",
        "RecordHuleXueZhanMid",
        "RecordHuleXueZhanEnd",
        "RecordNoTile",
    }


def test_majsoul_one_game_per_line_and_a_bad_game_rejected_whole() -> None:
    from pipeline.formats.majsoul import read_majsoul

    game = json.loads((MAJSOUL / "game.json").read_text(encoding="utf-8"))
    broken = copy.deepcopy(game)
    broken["actions"][5]["data"]["tile"] = "0m"  # a red five: not a 川麻 tile
    lines = [json.dumps(game), "", json.dumps(broken), "{not json"]
    items = list(read_majsoul(lines))
    acc = Accounting(lines_read=len(lines))
    for item in items:
        acc.add(item)
    assert acc.balanced and acc.records == 8 and acc.lines_rejected == 2
    rejects = [i for i in items if isinstance(i, Reject)]
    assert "no red fives" in rejects[0].message and rejects[1].message == "the file ends inside a game"


def test_majsoul_wall_end_that_the_game_rule_cannot_itemise_is_left_not_itemised() -> None:
    """A wall end whose merged vector is not what the game's rule gives (here: a payment moved between two
    players) keeps the hand's deltas but no itemised payments: the validator compares the deltas alone."""
    game = json.loads((MAJSOUL / "game.json").read_text(encoding="utf-8"))
    end = next(
        a for a in game["actions"] if a["name"] == "RecordNoTile" and any(a["data"]["scores"][0]["delta_scores"])
    )
    vector = end["data"]["scores"][0]["delta_scores"]
    loser = next(s for s in range(4) if vector[s] < 0)
    gainer = next(s for s in range(4) if vector[s] > 0)
    vector[loser] -= 1000
    vector[gainer] += 1000
    from pipeline.formats.majsoul import convert_game as convert_majsoul

    recs = convert_majsoul(game, "x")
    bad = [r for r in recs if "payments" not in r["result"]]
    assert len(bad) == 1 and bad[0]["x_majsoul"]["notes"]
    assert [i.code for i in validate(bad[0]).issues] == ["SETTLE_DELTA", "SETTLE_DELTA"]


def test_validate_says_which_walls_are_proved_and_what_was_not_checked(tmp_path: Path) -> None:
    """`validate` counts the walls proved hand by hand by their revealed seed, and lists the checks a full record
    without 定缺 could not support (a full record used to print no 'not checked' at all)."""
    blind = tmp_path / "blind.jsonl"
    recs = [rec for row in rows() for rec in convert_game(row["game_id"], row["record"], que={})]
    blind.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    done = xuezhan("validate", str(blind), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "wall commitments: 2 walls proved by their revealed seed, 0 that do not match it, 8 committed" in done.stdout
    assert "not checked (records):" in done.stdout and "定缺 not recorded" in done.stdout


def _mutate(obj: Any, rng: Any) -> None:
    """Break one place of ``obj`` at random: drop a key or an item, or put a value of another type there."""
    if isinstance(obj, dict) and obj:
        key = rng.choice(list(obj))
        roll = rng.random()
        if roll < 0.2:
            del obj[key]
        elif roll < 0.4:
            obj[key] = rng.choice([None, 0, -1, "x", [], {}, 99, True, [1, 2]])
        else:
            _mutate(obj[key], rng)
    elif isinstance(obj, list) and obj:
        i = rng.randrange(len(obj))
        roll = rng.random()
        if roll < 0.2:
            del obj[i]
        elif roll < 0.4:
            obj[i] = rng.choice([None, 0, -1, "x", [], {}, 99, True, 55, "9m", "0m"])
        else:
            _mutate(obj[i], rng)


def test_a_broken_game_is_a_reject_never_a_traceback() -> None:
    """Games broken at random places (a key dropped, a value of another type): each is read or rejected with a
    reason, and every record read validates without an engine failure."""
    import random

    from pipeline.formats.majsoul import read_majsoul

    rng = random.Random(41)
    game = json.loads((MAJSOUL / "game.json").read_text(encoding="utf-8"))
    for _ in range(150):
        row = copy.deepcopy(rng.choice(rows()))
        broken = copy.deepcopy(game)
        for _ in range(rng.randint(1, 3)):
            _mutate(row, rng)
            _mutate(broken, rng)
        items = [*read_salasasa([json.dumps(row)]), *read_majsoul([json.dumps(broken)])]
        for item in items:
            if isinstance(item, Converted):
                assert "INTERNAL" not in [i.code for i in validate(item.record).issues]
            elif isinstance(item, Reject):
                assert item.message
