"""Cases that remember (issue 44 point 1): a flagged pair is opened as a case and dismissed; ingesting the same
records again does not raise it again; ingesting more hands of the pair until its evidence has doubled brings it
back as reopened, with the reason; a masked evidence pack holds no real name or id in any file, its HTML included.
"""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from pipeline.audit.cases import CaseError, Masker, act, grown, open_case, pack_hash, read_cases, status
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write

runner = CliRunner()


def _renamed(src: Path, dst: Path, prefix: str) -> None:
    """The same hands again under new ids: more hands of the same players (the pair among them)."""
    with gzip.open(src, "rt", encoding="utf-8") as f, dst.open("w", encoding="utf-8") as out:
        for line in f:
            r = json.loads(line)
            for key in ("hand_id", "session_id", "table_id"):
                if r.get(key) is not None:
                    r[key] = prefix + r[key]
            out.write(json.dumps(r, ensure_ascii=False) + "\n")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("cases")
    games = root / "games.jsonl.gz"
    write(SimConfig(hands=1200, seed=4401, players=8, inject=InjectSpec.parse("collude=1:0.6")), games)
    labels = json.loads((root / "games.labels.json").read_text())
    pair = sorted(labels["colluders"][0]["players"])
    ingest([str(games)], root / "wh", workers=1)
    return {"root": root, "games": games, "wh": root / "wh", "key": f"pair:{'+'.join(pair)}", "pair": pair}


def _findings(wh: Path, *extra: str) -> tuple[int, list[dict[str, object]]]:
    done = runner.invoke(app, ["findings", "--warehouse", str(wh), "--format", "json", *extra])
    assert done.exit_code == 0, done.output  # a screen's findings are its output (the exit-code table)
    return done.exit_code, json.loads(done.output)


def test_a_dismissed_pair_stays_dismissed_until_its_evidence_grows(room: dict[str, object]) -> None:
    wh, key = room["wh"], room["key"]
    assert isinstance(wh, Path) and isinstance(key, str)
    _, rows = _findings(wh)
    pair = next(r for r in rows if r["key"] == key)
    assert pair["status"] == "new" and pair["n"] > 0

    done = runner.invoke(app, ["case", "open", key, "--warehouse", str(wh), "--reviewer", "ana", "--note", "look"])
    assert done.exit_code == 0, done.output
    (case,) = read_cases(wh).values()
    assert case.state == "open" and case.finding == key and case.actions[0].reviewer == "ana"
    _, rows = _findings(wh)
    assert next(r for r in rows if r["key"] == key)["status"] == "open"

    done = runner.invoke(
        app, ["case", "dismiss", case.case_id, "--warehouse", str(wh), "--reviewer", "bo", "--note", "friends"]
    )
    assert done.exit_code == 0, done.output
    _, rows = _findings(wh)
    assert key not in [r["key"] for r in rows]  # hidden
    _, every = _findings(wh, "--all")
    assert next(r for r in every if r["key"] == key)["status"] == "dismissed"

    ingest([str(room["games"])], wh, workers=1)  # the same records again: nothing stored, nothing re-raised
    _, rows = _findings(wh)
    assert key not in [r["key"] for r in rows]

    more = Path(str(room["root"])) / "more.jsonl"
    _renamed(Path(str(room["games"])), more, "m-")
    ingest([str(more)], wh, workers=1)
    _, rows = _findings(wh)
    back = next(r for r in rows if r["key"] == key)
    assert back["status"] == "reopened" and back["case_id"] == case.case_id
    assert back["n"] >= 2 * pair["n"]  # the same hands twice: twice the shared hands
    assert "as much" in str(back["why"]) or "smaller" in str(back["why"])
    table = runner.invoke(app, ["findings", "--warehouse", str(wh)]).output
    assert "REOPENED" in table and f"reopened: {back['why']}" in table

    done = runner.invoke(app, ["case", "reopen", case.case_id, "--warehouse", str(wh), "--reviewer", "ana"])
    assert done.exit_code == 0, done.output
    assert read_cases(wh)[case.case_id].state == "open"
    listed = runner.invoke(app, ["case", "list", "--warehouse", str(wh), "--format", "json"])
    (c,) = json.loads(listed.output)
    assert [a["action"] for a in c["actions"]] == ["open", "dismiss", "reopen"]
    assert [a["reviewer"] for a in c["actions"]] == ["ana", "bo", "ana"]


def test_a_masked_pack_names_no_one(room: dict[str, object], tmp_path: Path) -> None:
    wh, key = room["wh"], room["key"]
    assert isinstance(wh, Path) and isinstance(key, str)
    if not read_cases(wh):
        runner.invoke(app, ["case", "open", key, "--warehouse", str(wh), "--reviewer", "ana"])
    case_id = next(iter(read_cases(wh)))
    out = tmp_path / "blind"
    done = runner.invoke(
        app, ["case", "pack", case_id, "--warehouse", str(wh), "--out", str(out), "--reviewer", "ana", "--mask"]
    )
    assert done.exit_code == 0, done.output
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert any(p.suffix == ".html" for p in files) and any(p.name.endswith(".record.jsonl") for p in files)
    real = {p for h in _players(wh) for p in h} | set(_hand_ids(wh))
    pattern = re.compile("|".join(re.escape(n) for n in sorted(real, key=len, reverse=True)))
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert not pattern.search(text), (f.name, pattern.search(text))
    text = (out / "case.json").read_text(encoding="utf-8")
    assert '"A"' in text and '"B"' in text
    last = read_cases(wh)[case_id].actions[-1]
    assert last.pack == str(out) and last.pack_sha256 == pack_hash(out)
    unmasked = tmp_path / "plain"
    runner.invoke(app, ["case", "pack", case_id, "--warehouse", str(wh), "--out", str(unmasked), "--reviewer", "ana"])
    pair = room["pair"]
    assert isinstance(pair, list)
    assert any(pair[0] in f.read_text(encoding="utf-8") for f in unmasked.rglob("*.txt"))


def _players(wh: Path) -> list[list[str]]:
    import duckdb

    with duckdb.connect() as con:
        return [r[0] for r in con.sql(f"SELECT players FROM read_parquet('{wh}/hands/*.parquet')").fetchall()]


def _hand_ids(wh: Path) -> list[str]:
    import duckdb

    with duckdb.connect() as con:
        return [r[0] for r in con.sql(f"SELECT hand_id FROM read_parquet('{wh}/hands/*.parquet')").fetchall()]


def test_transitions_and_the_reopen_rule(tmp_path: Path) -> None:
    (tmp_path / "hands").mkdir()
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    finding = {"key": "pair:a+b", "kind": "pair", "subject": "a & b", "players": ["a", "b"], "q": 0.01, "n": 300}
    case = open_case(tmp_path, finding, reviewer="r", now=t0)
    with pytest.raises(CaseError, match="already has case"):
        open_case(tmp_path, finding, reviewer="r", now=t0)
    with pytest.raises(CaseError, match="cannot be appealed"):
        act(tmp_path, case.case_id, "appeal", reviewer="r", now=t0 + timedelta(hours=1))
    case = act(tmp_path, case.case_id, "dismiss", reviewer="r", finding=finding, now=t0 + timedelta(hours=1))
    assert status({**finding, "n": 599}, case) == ("dismissed", None)
    assert status({**finding, "n": 600}, case)[0] == "reopened"
    assert status({**finding, "q": 0.001}, case) == ("reopened", "q 0.01 → 0.001 (at least 10× smaller)")
    case = act(tmp_path, case.case_id, "appeal", reviewer="s", note="unfair", now=t0 + timedelta(hours=2))
    case = act(tmp_path, case.case_id, "confirm", reviewer="t", now=t0)  # a clock behind: still after the appeal
    assert [a.state for a in case.actions] == ["open", "dismissed", "appealed", "confirmed"]
    assert case.actions[-1].at > case.actions[-2].at and status(finding, case) == ("confirmed", None)
    with pytest.raises(CaseError, match="no case"):
        act(tmp_path, "case-nosuch", "note", reviewer="r", note="x")
    assert grown(None, None, 0.001, 10) is None and grown(0.0, 0, 0.0, 0) is None


def test_the_masker_is_consistent_and_finds_leaks(tmp_path: Path) -> None:
    m = Masker(["p007", "p003"])
    r = m.record(
        {"hand_id": "t1-h1", "session_id": "t1", "table_id": "t1", "players": ["p001", "p003", "p007", "p002"]}
    )
    assert r["players"] == ["O1", "B", "A", "O2"] and r["hand_id"] == "H1" and r["table_id"] == "T1"
    assert m.record({"hand_id": "t1-h2", "players": ["p002"]})["players"] == ["O2"]
    (tmp_path / "a.txt").write_text("seat 1 p003 won; hand t1-h1x is not t1-h1", encoding="utf-8")
    assert m.leaks(tmp_path) == [("a.txt", "p003"), ("a.txt", "t1-h1")]
