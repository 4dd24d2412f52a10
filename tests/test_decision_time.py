"""Decision time (issue 43 point 5): a record's ``ms`` is carried by the parser, stored in ``events.ms`` (null where
the record gives none), and the simulator's timing model (``--timing``; ``--inject relay=N``) writes it."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from sample_lines import sample_lines

from pipeline.game.record import RecordError, parse_record
from pipeline.ingest.run import ingest


def _with_ms(line: bytes, every: int) -> dict:
    """The record of ``line`` with ``ms`` on every ``every``-th event (its index × 10, so each is known)."""
    obj = json.loads(line)
    for i, ev in enumerate(obj["events"]):
        if i % every == 0:
            ev["ms"] = i * 10
    return obj


def test_the_parser_carries_ms_and_none_where_absent() -> None:
    plain, timed = sample_lines(2)
    assert parse_record(json.loads(plain)).ms is None  # no time anywhere: nothing built
    obj = _with_ms(timed, 3)
    record = parse_record(obj)
    assert record.ms is not None and len(record.ms) == len(record.events)
    assert list(record.ms) == [i * 10 if i % 3 == 0 else None for i in range(len(record.events))]
    # the events themselves are the same values as without times
    bare = json.loads(timed)
    assert parse_record(bare).events == record.events
    obj["events"][1]["ms"] = -1
    with pytest.raises(RecordError, match="'ms' must be a whole number"):
        parse_record(obj)


def test_events_ms_is_stored_and_null_where_absent(tmp_path: Path) -> None:
    plain, timed = sample_lines(2)
    obj = _with_ms(timed, 2)
    path = tmp_path / "r.jsonl"
    path.write_bytes(plain + b"\n" + json.dumps(obj).encode() + b"\n")
    root = tmp_path / "wh"
    stats = ingest([str(path)], root, workers=1)
    assert stats.records_stored == 2
    con = duckdb.connect(str(root / "warehouse.duckdb"), read_only=True)
    plain_id, timed_id = json.loads(plain)["hand_id"], obj["hand_id"]
    (nulls, count) = con.execute("SELECT count(ms), count(*) FROM events WHERE hand_id = ?", [plain_id]).fetchone()  # type: ignore[misc]
    assert nulls == 0 and count == len(json.loads(plain)["events"])
    rows = con.execute("SELECT idx, ms FROM events WHERE hand_id = ? ORDER BY idx", [timed_id]).fetchall()
    assert rows == [(i, i * 10 if i % 2 == 0 else None) for i in range(len(obj["events"]))]
    assert con.execute("SELECT typeof(ms) FROM events LIMIT 1").fetchone() == ("INTEGER",)
