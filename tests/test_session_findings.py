"""Session findings through ingest → audit → report → replay (issue 40 point 3).

``validate`` checks across the hands of a session (the dealer rule, gaps and repeats in ``hand_no``, the players);
ingest stored none of it, so ``audit``, ``stats``, the report and ``replay`` never said a dealer was wrong. The
warehouse's ``issues`` view now adds them, worked out from the stored hands (``pipeline/ingest/sql/session_issues
.sql``): the same findings, in the same words, as the validator prints for the same lines, and a hand ingested
later (a session's missing hand 3) changes them at once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from cli import app
from dashboards.site import build_report
from pipeline.analytics.queries import connect
from pipeline.ingest.read import read_lines
from pipeline.ingest.run import ingest
from pipeline.simulate.tables import SimConfig, write
from pipeline.validate import check_sessions, hand_key, validate_lines

RUNNER = CliRunner()


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """Two tables of six hands each (a session per table): table 1 without its hand 3 (a gap), table 2's hand 3
    with its players' seats turned one place (its dealer is not the one hand 2 made, and the players change)."""
    tmp = tmp_path_factory.mktemp("sessions")
    games = tmp / "games.jsonl"
    write(SimConfig(hands=12, seed=3, players=4, session_hands=6), games)
    records = [json.loads(line) for line in _lines(games)]
    tables = sorted({r["table_id"] for r in records})
    assert len(tables) == 2 and all(sum(r["table_id"] == t for r in records) == 6 for t in tables)
    kept, missing = [], None
    for r in records:
        if r["table_id"] == tables[0] and r["hand_no"] == 3:
            missing = r
            continue
        if r["table_id"] == tables[1] and r["hand_no"] == 3:
            r["players"] = r["players"][1:] + r["players"][:1]
        kept.append(r)
    cut = tmp / "cut.jsonl"
    cut.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
    later = tmp / "later.jsonl"
    later.write_text(json.dumps(missing, ensure_ascii=False) + "\n", encoding="utf-8")
    ingest([str(cut)], tmp / "wh", workers=1)
    return tmp, cut, later, tables


def _validator_findings(path: Path) -> set[tuple[str, str, str]]:
    keys = [hand_key(out.validation) for out in validate_lines(read_lines([str(path)]))]
    return {(s.hand_id, s.issue.code, s.issue.message) for s in check_sessions(keys)}


def _stored_findings(warehouse: Path) -> set[tuple[str, str, str]]:
    with connect(warehouse) as con:
        rows = con.execute("SELECT hand_id, code, message FROM issues WHERE code LIKE 'SESSION%'").fetchall()
    return {(h, c, m) for h, c, m in rows}


def test_the_warehouse_has_the_session_findings_the_validator_prints(sessions) -> None:
    tmp, cut, _, tables = sessions
    want = _validator_findings(cut)
    assert {code for _, code, _ in want} == {"SESSION_HAND_GAP", "SESSION_DEALER", "SESSION_PLAYERS"}
    assert _stored_findings(tmp / "wh") == want
    with duckdb.connect(str(tmp / "wh" / "warehouse.duckdb"), read_only=True) as con:  # any DuckDB client too
        rows = con.execute(
            "SELECT hand_id, code, severity, seat, expected, actual FROM issues WHERE code = 'SESSION_DEALER' "
            "ORDER BY hand_id"
        ).fetchall()
    dealt = f"{tables[1]}-s1-h03"
    assert rows and rows[0][0] == dealt and rows[0][2] == "error" and rows[0][4] != rows[0][5]


def test_audit_lists_them_and_counts_a_hands_stake_once(sessions) -> None:
    tmp, _, _, tables = sessions
    result = RUNNER.invoke(app, ["audit", "--warehouse", str(tmp / "wh"), "--format", "json"])
    assert result.exit_code == 0, result.output
    findings = json.loads(result.output)
    session = [f for f in findings if f["code"].startswith("SESSION_")]
    assert {(f["hand_id"], f["code"], f["message"]) for f in session} == _stored_findings(tmp / "wh")
    dealt = f"{tables[1]}-s1-h03"
    in_hand = {f["code"]: f for f in session if f["hand_id"] == dealt}
    # two verdicts on one hand: the error carries the hand's stake, the warning points at it
    assert in_hand["SESSION_DEALER"]["money"] > 0 and in_hand["SESSION_DEALER"]["reason_of"] is None
    assert in_hand["SESSION_PLAYERS"]["money"] == 0 and in_hand["SESSION_PLAYERS"]["reason_of"] == "SESSION_DEALER"
    with connect(tmp / "wh") as con:
        stakes = dict(
            con.execute(
                "SELECT hand_id, sum(greatest(coalesce(claimed_delta, delta), 0)) FROM player_hands GROUP BY hand_id"
            ).fetchall()
        )
    hands = {f["hand_id"] for f in session}
    assert sum(f["money"] for f in session) == sum(stakes[h] for h in hands)


def test_replay_shows_them_and_a_session_error_fails(sessions) -> None:
    tmp, _, _, tables = sessions
    dealt = f"{tables[1]}-s1-h03"
    result = RUNNER.invoke(app, ["replay", dealt, "--warehouse", str(tmp / "wh")])
    assert result.exit_code == 1, result.output
    assert "session: SESSION_DEALER (error)" in result.output and "session: SESSION_PLAYERS (warning)" in result.output
    gap = f"{tables[0]}-s1-h04"
    result = RUNNER.invoke(app, ["replay", gap, "--warehouse", str(tmp / "wh")])
    assert result.exit_code == 0, result.output  # a gap is a warning: the hand itself is valid
    assert "session: SESSION_HAND_GAP (warning) session" in result.output
    page = tmp / "gap.html"
    assert RUNNER.invoke(app, ["replay", gap, "--warehouse", str(tmp / "wh"), "--html", str(page)]).exit_code == 0
    assert "SESSION_HAND_GAP" in page.read_text(encoding="utf-8")


def test_the_report_shows_them(sessions) -> None:
    tmp, _, _, tables = sessions
    out = tmp / "report"
    build_report(tmp / "wh", out, top_players=0, min_hands=3)
    pages = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*.html"))
    assert "SESSION_DEALER" in pages and "SESSION_HAND_GAP" in pages
    assert f"{tables[1]}-s1-h03" in pages


def test_a_hand_stored_later_closes_the_gap(sessions, tmp_path) -> None:
    tmp, cut, later, _ = sessions

    warehouse = tmp_path / "wh"
    shutil.copytree(tmp / "wh", warehouse)
    ingest([str(later)], warehouse, workers=1)
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(_lines(cut) + _lines(later)) + "\n", encoding="utf-8")
    found = _stored_findings(warehouse)
    assert found == _validator_findings(both)
    assert not any(code == "SESSION_HAND_GAP" for _, code, _ in found)
    assert any(code == "SESSION_DEALER" for _, code, _ in found)


def _fail_unbounded(con: duckdb.DuckDBPyConnection, view: str) -> str:
    """Make ``view`` of ``con`` fail when read under any memory limit but runs.bounded's; returns that limit as
    DuckDB shows it."""
    from pipeline.analytics import runs

    con.execute(f"SET memory_limit = '{runs.WHOLE_MEMORY}'")
    bound = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    con.execute("RESET memory_limit")
    con.execute(
        f'CREATE OR REPLACE VIEW {view} AS SELECT * FROM "stored"."{view}" WHERE CASE WHEN '
        f"current_setting('memory_limit') = '{bound}' THEN true ELSE error('{view} read unbounded') END"
    )
    with pytest.raises(duckdb.Error, match="unbounded"):  # the guard holds
        con.execute(f"SELECT count(*) FROM {view}").fetchall()
    return str(bound)


def test_every_reader_of_the_whole_issues_view_holds_its_memory(sessions) -> None:
    """The session checks are a window over every hand of the warehouse (on 5M hands the ``issues`` view took
    2.1 GB read whole): the health check, the audit, the quality summary and the issues by code read it under
    :func:`pipeline.analytics.runs.bounded`. Here the view fails when it is read under any other memory limit."""
    from dashboards import quality
    from pipeline.analytics import health, queries
    from pipeline.audit import scoring

    with connect(sessions[0] / "wh") as con:
        _fail_unbounded(con, "issues")
        assert health.check(con).run is not None
        assert scoring.audit(con).findings["code"].str.starts_with("SESSION_").any()
        assert dict(quality.prep_summary(con).iter_rows())["hands with an issue"] >= 2
        assert queries.issues_by_code(con).height


def test_the_analytics_and_dashboards_models_read_the_warehouse_bounded(sessions) -> None:
    """Every SQL model of the analytics (``queries.run``) and of the dashboards (``dashboards.run_sql``) reads every
    hand at once, so it runs under :func:`pipeline.analytics.runs.bounded` (on 5M hands the overview's aggregates
    took up to 1 GB unbounded): here ``hands`` fails when read under any other memory limit."""
    from dashboards import run_sql
    from pipeline.analytics import queries

    with connect(sessions[0] / "wh") as con:
        bound = _fail_unbounded(con, "hands")
        assert queries.run(con, "warehouse_counts").row(0, named=True)["hands"] == 11
        assert run_sql(con, "hua_zhu_per_hand").height >= 0
        assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] != bound  # as it was after


def test_one_hands_issues_judge_its_own_session_only(sessions, monkeypatch) -> None:
    """The readers of one hand's issues (replay --warehouse, the dispute pack, the case evidence) get its rows of
    the ``issues`` view, the session checks too, without the window over every hand the view computes (2.9 s and
    1.4 GB for one hand on 5M hands): :func:`pipeline.ingest.warehouse.session_checks_of` names the hand's
    session, the view judges only that one meanwhile, and every session again after."""
    from pipeline.audit import replay
    from pipeline.ingest.warehouse import session_checks_of

    tmp, _, _, tables = sessions
    with connect(tmp / "wh") as con:
        every = con.sql("SELECT * FROM issues").pl()
        hands = [h for (h,) in con.execute("SELECT hand_id FROM hands ORDER BY hand_id").fetchall()]
        named: list[list[str]] = []
        real = replay.session_checks_of

        def spy(con, hand_ids):
            named.append(list(hand_ids))
            return real(con, hand_ids)

        monkeypatch.setattr(replay, "session_checks_of", spy)
        for hand_id in hands:
            got = replay.hand_issues(con, hand_id)
            want = every.filter(every["hand_id"] == hand_id)
            assert sorted(got.rows()) == sorted(want.select(got.columns).rows()), hand_id
        assert named == [[h] for h in hands]
        dealt, gap = f"{tables[1]}-s1-h03", f"{tables[0]}-s1-h04"
        assert {c for c, _, _ in replay.session_findings(replay.hand_issues(con, dealt))} == {
            "SESSION_DEALER",
            "SESSION_PLAYERS",
        }
        with session_checks_of(con, [dealt]):  # table 2's session only: table 1's gap is not worked out
            judged = {h for (h,) in con.execute("SELECT hand_id FROM issues WHERE code LIKE 'SESSION%'").fetchall()}
            assert dealt in judged and all(h.startswith(f"{tables[1]}-") for h in judged), judged
            assert judged == set(every.filter(every["code"].str.starts_with("SESSION_"))["hand_id"]) - {gap}
        with session_checks_of(con, ["no such hand"]):
            assert not con.execute("SELECT count(*) FROM issues WHERE code LIKE 'SESSION%'").fetchone()[0]
        assert every.sort(every.columns).equals(con.sql("SELECT * FROM issues").pl().sort(every.columns))
        assert gap in set(every.filter(every["code"] == "SESSION_HAND_GAP")["hand_id"])
