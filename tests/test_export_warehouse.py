"""``xuezhan export --to mjai --warehouse W`` (issue 20, "for anyone training models on our warehouses"): the
warehouse keeps no deal or wall, so each stored hand is read back from the file and line it was ingested from,
checked against the sha256 stored with it, and written; a hand that cannot be read back (its file moved or
changed) is skipped with the reason, and hands selected = written + skipped.

The round trip is checked on a real ingested warehouse: warehouse → mjai → ``import --from mjai`` → the same
hands as the records ingested (less what mjai cannot carry: tests/test_formats.py's projection)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_formats import projection
from test_levels import sample, sheet_records, to_dealt

from pipeline.analytics.export import Found, Missing, read_back, selected
from pipeline.analytics.queries import connect
from pipeline.ingest.run import ingest
from pipeline.validate import validate

CLI = [sys.executable, "-c", "from cli import app; app(prog_name='xuezhan')"]


def xuezhan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300)


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def room(tmp_path: Path) -> tuple[Path, dict[str, list[dict[str, Any]]]]:
    """Two input files: 20 full hands and 3 dealt ones in one, the sample sheet's 3 settlement hands in the
    other; ingested into one warehouse."""
    full = sample(20)
    dealt = [dict(to_dealt(r), hand_id=r["hand_id"] + "-d", session_id="D") for r in full[:3]]
    sheet = sheet_records()
    records = {"full": full, "dealt": dealt, "settlement": sheet}
    a = _write(tmp_path / "a.jsonl", [*full, *dealt])
    b = _write(tmp_path / "b.jsonl", sheet)
    run = ingest([str(a), str(b)], tmp_path / "wh", workers=1)
    assert run.reconciled and run.records_stored == 26
    return tmp_path, records


def test_the_round_trip_from_a_warehouse(room: tuple[Path, dict[str, list[dict[str, Any]]]]) -> None:
    root, records = room
    out = root / "out.mjson"
    done = xuezhan("export", "--to", "mjai", "--warehouse", str(root / "wh"), "-o", str(out))
    assert done.returncode == 1, done.stderr  # the score sheets cannot be written: skipped, and said so
    lines = done.stdout.splitlines()
    assert (
        lines[1]
        == "hands selected 26 = 23 written + 3 skipped (0 not read back from their source, 0 with illegal play, "
        "3 that mjai cannot carry)"
    )
    assert lines[2].startswith(f"  skipped S1-1 ({root / 'b.jsonl'}:1): no deal and no wall")
    back = root / "back.jsonl"
    done = xuezhan("import", str(out), "--from", "mjai", "-o", str(back))
    assert done.returncode == 0 and "+ 0 rejected" in done.stdout, done.stdout
    again = {r["hand_id"]: r for r in map(json.loads, back.read_text(encoding="utf-8").splitlines())}
    written = [*records["full"], *records["dealt"]]
    assert list(again) == [r["hand_id"] for r in written]  # by file, then line
    for before in written:
        after = again[before["hand_id"]]
        assert projection(after) == projection(before), before["hand_id"]
        assert validate(after).replayed and validate(after).deltas == validate(before).deltas


def test_a_changed_or_moved_source_is_a_skipped_hand_with_its_reason(
    room: tuple[Path, dict[str, list[dict[str, Any]]]],
) -> None:
    root, records = room
    a = root / "a.jsonl"
    lines = a.read_text(encoding="utf-8").splitlines()
    changed = json.loads(lines[4])
    changed["events"][0]["ms"] = 1234  # the same hand, another line: not the one ingested
    lines[4] = json.dumps(changed, ensure_ascii=False)
    a.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # and the last line is gone
    shutil.move(root / "b.jsonl", root / "b-moved.jsonl")
    with connect(root / "wh") as con:
        hands = selected(con)
    items = list(read_back(hands))
    assert [i.hand.hand_id for i in items] == [h.hand_id for h in hands] and len(items) == 26
    missing = {i.hand.hand_id: i.reason for i in items if isinstance(i, Missing)}
    assert set(missing) == {records["full"][4]["hand_id"], records["dealt"][-1]["hand_id"], "S1-1", "S1-2", "S1-3"}
    assert "is not the line ingested" in missing[records["full"][4]["hand_id"]]
    assert "has no line 23 any more" in missing[records["dealt"][-1]["hand_id"]]
    assert "cannot open" in missing["S1-1"]
    assert sum(isinstance(i, Found) for i in items) == 21
    done = xuezhan("export", "--to", "mjai", "--warehouse", str(root / "wh"), "-o", str(root / "o.mjson"))
    assert done.returncode == 1
    out = done.stdout.splitlines()
    assert out[0].startswith("wrote 21 hands")
    assert (
        out[1] == "hands selected 26 = 21 written + 5 skipped (5 not read back from their source, 0 with illegal play, "
        "0 that mjai cannot carry)"
    )
    assert any("is not the line ingested" in line for line in out[2:])


def test_the_hands_of_a_player_or_since_a_time(room: tuple[Path, dict[str, list[dict[str, Any]]]]) -> None:
    root, records = room
    every = [r for rows in records.values() for r in rows]
    player = records["full"][0]["players"][1]
    with connect(root / "wh") as con:
        mine = selected(con, player=player)
        assert {h.hand_id for h in mine} == {r["hand_id"] for r in every if player in r["players"]}
        times = sorted(r["played_at"] for r in records["full"] if "played_at" in r)
    since = times[len(times) // 2]
    out = root / "since.mjson"
    done = xuezhan("export", "--to", "mjai", "--warehouse", str(root / "wh"), "--since", since, "-o", str(out))
    later = sum(1 for r in every if "played_at" in r and r["played_at"] >= since)
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[1].startswith(f"hands selected {later} = {later} written + 0 skipped")
    done = xuezhan("export", "--to", "mjai", "--warehouse", str(root / "wh"), "--player", "nobody", "-o", str(out))
    # a filter that keeps no hand: exit 1, as every command's filters (issue 39; README, docs/FORMATS.md)
    assert done.returncode == 1 and "hands selected 0 = 0 written + 0 skipped" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "x.jsonl", "--to", "mjai", "--warehouse", "wh", "-o", "o.mjson"], "either record files"),
        (["export", "--to", "mjai", "-o", "o.mjson"], "either record files"),
        (["export", "x.jsonl", "--to", "mjai", "--player", "p", "-o", "o.mjson"], "select the hands of a --warehouse"),
        (["export", "--to", "mjai", "--warehouse", "nowhere", "-o", "o.mjson"], "nowhere"),
        (["export", "--to", "mjai", "--warehouse", "wh", "--since", "soon", "-o", "o.mjson"], "--since 'soon'"),
    ],
)
def test_usage_errors_of_the_warehouse_export(args: list[str], message: str, room: Any) -> None:
    root, _ = room
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=root)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
