"""`xuezhan check` (issue 44 point 2): each ingest run against the runs before it, for a scheduler.

The history is a room of two tables, A and B, ingested in batches as a cron would: 20 honest batches of 400 hands
whose claimed settlements are wrong in 0.5% of hands (one seat's delta moved by a point to another's), then one
batch of 2,000 hands in which table B's wrong settlements rise to 2%. The hands are the sample's (data/, its
injected faults left out), renamed and re-timed per batch. After every honest batch `check` must exit 0 (at most
one warning over the 20); after the last it must exit 2 and name table B.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli import app
from pipeline.analytics.health import Health, ThresholdsError, check, load_thresholds
from pipeline.analytics.queries import connect
from pipeline.analytics.stats import binomial_sf
from pipeline.ingest.run import ingest

DATA = Path(__file__).parents[1] / "data"
START = datetime(2026, 11, 1, 12, tzinfo=UTC)
runner = CliRunner()


def _clean_hands() -> list[dict[str, Any]]:
    faults = {f["hand_id"] for f in json.loads((DATA / "sample.labels.json").read_text())["faults"]}
    out = []
    with gzip.open(DATA / "sample.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("hand_id") not in faults:
                out.append(obj)
    return out


def _batch(pool: list[dict[str, Any]], b: int, n: int, rate: dict[str, float], rng: random.Random) -> str:
    """Batch ``b``: ``n`` hands of the pool, half at each table, played on day ``b``, a share ``rate[table]``
    of them with a wrong claimed settlement."""
    lines = []
    for i in range(n):
        r = json.loads(json.dumps(pool[rng.randrange(len(pool))]))
        table = "A" if i % 2 == 0 else "B"
        r["hand_id"] = f"b{b:02d}-{i:04d}"
        r["table_id"] = table
        for key in ("session_id", "hand_no"):  # a session's dealer chain is not what this test is about
            r.pop(key, None)
        r["played_at"] = (START + timedelta(days=b, minutes=i)).isoformat()
        if rng.random() < rate[table]:
            deltas = r["result"]["deltas"]
            deltas[0] += 1
            deltas[1] -= 1
        lines.append(json.dumps(r, ensure_ascii=False))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Health], Health]:
    root = tmp_path_factory.mktemp("health")
    pool = _clean_hands()
    rng = random.Random(44)
    warehouse = root / "wh"
    honest = []
    for b in range(1, 21):
        path = root / f"batch-{b:02d}.jsonl"
        path.write_text(_batch(pool, b, 400, {"A": 0.005, "B": 0.005}, rng), encoding="utf-8")
        ingest([str(path)], warehouse, workers=1)
        with connect(warehouse) as con:
            honest.append(check(con, now=START + timedelta(days=b + 1)))
    path = root / "batch-21.jsonl"
    path.write_text(_batch(pool, 21, 2000, {"A": 0.005, "B": 0.02}, rng), encoding="utf-8")
    ingest([str(path)], warehouse, workers=1)
    with connect(warehouse) as con:
        risen = check(con, now=START + timedelta(days=22))
    return warehouse, honest, risen


def test_honest_batches_pass(history: tuple[Path, list[Health], Health]) -> None:
    _, honest, _ = history
    assert [h.exit_code for h in honest] == [0 if h.level == "ok" else 1 for h in honest]
    assert all(h.level != "error" for h in honest), [a for h in honest for a in h.alerts]
    warnings = [a for h in honest for a in h.alerts]
    assert len(warnings) <= 1, warnings
    first = honest[0].run
    assert first is not None and first.stored == 400 and first.tables.keys() == {"A", "B"}
    assert honest[-1].run is not None and honest[-1].run.run_no == 20 and len(honest[-1].runs) == 20


def test_a_table_whose_settlement_errors_rise_fails_and_is_named(history: tuple[Path, list[Health], Health]) -> None:
    _, _, risen = history
    assert risen.level == "error" and risen.exit_code == 2
    errors = {a.subject: a for a in risen.alerts if a.level == "error"}
    # table B's wrong settlements are the run's too, and invalid hands: those rates rise with it; table A's not
    assert set(errors) == {"settlement errors at table B", "settlement errors", "invalid hands"}, risen.alerts
    alert = errors["settlement errors at table B"]
    assert alert.value is not None and alert.baseline is not None and alert.value > 2.5 * alert.baseline
    assert alert.p is not None and alert.p < 0.001 and "rose from" in alert.message
    assert not any("table A" in a.subject for a in risen.alerts)


def test_the_command_exits_for_cron_and_writes_json(history: tuple[Path, list[Health], Health]) -> None:
    warehouse, _, _ = history
    done = runner.invoke(app, ["check", "--warehouse", str(warehouse)])
    assert done.exit_code == 2, done.output
    assert "ERROR" in done.output and "settlement errors at table B" in done.output
    done = runner.invoke(app, ["check", "--warehouse", str(warehouse), "--format", "json"])
    assert done.exit_code == 2
    out = json.loads(done.output)
    assert out["level"] == "error" and len(out["runs"]) == 21
    assert "settlement errors at table B" in {a["subject"] for a in out["alerts"] if a["level"] == "error"}
    first = out["runs"][0]["run_id"]
    done = runner.invoke(app, ["check", "--warehouse", str(warehouse), "--run", first, "--format", "json"])
    assert done.exit_code == 0 and json.loads(done.output)["run"] == first  # the first run: nothing to compare
    done = runner.invoke(app, ["check", "--warehouse", str(warehouse), "--run", "nosuch"])
    assert done.exit_code == 2 and "no ingest run nosuch" in done.output
    done = runner.invoke(app, ["check", "--warehouse", str(warehouse), "--format", "csv"])
    rows = done.output.splitlines()
    assert done.exit_code == 2 and rows[0].startswith("run_no,run_id,")
    assert len(rows) == 1 + 21 * 3  # each run's whole figures, then its tables A and B


def test_a_rerun_of_the_same_file_is_an_error(tmp_path: Path) -> None:
    pool = _clean_hands()
    path = tmp_path / "b.jsonl"
    path.write_text(_batch(pool, 1, 200, {"A": 0.0, "B": 0.0}, random.Random(1)), encoding="utf-8")
    ingest([str(path)], tmp_path / "wh", workers=1)
    ingest([str(path)], tmp_path / "wh", workers=1)
    with connect(tmp_path / "wh") as con:
        health = check(con, now=START)
    assert health.level == "error" and [a.check for a in health.alerts] == ["volume"]
    assert "stored no new hand" in health.alerts[0].message and "200 already stored" in health.alerts[0].message


def test_thresholds_are_data(tmp_path: Path) -> None:
    t = load_thresholds()
    assert (t.warn_p, t.error_p, t.new_codes) == (0.01, 0.001, "warn")
    mine = tmp_path / "t.toml"
    mine.write_text('[rates]\nerror_p = 0.0001\n[novelty]\nnew_codes = "off"\n', encoding="utf-8")
    t = load_thresholds(mine)
    assert (t.warn_p, t.error_p, t.new_codes) == (0.01, 0.0001, "off")
    for bad, why in (
        ("[rate]\nwarn_p = 0.1\n", "unknown section"),
        ("[rates]\nwarnp = 0.1\n", "has no key 'warnp'"),
        ("[rates]\nwarn_p = -1\n", "a number >= 0"),
        ("[rates]\nerror_p = 0.5\n", "error_p must not be above warn_p"),
        ('[novelty]\nnew_codes = "loud"\n', '"off", "warn" or "error"'),
        ("[rates\n", "t.toml"),
    ):
        mine.write_text(bad, encoding="utf-8")
        with pytest.raises(ThresholdsError, match=why):
            load_thresholds(mine)


def test_the_rate_test_is_the_exact_conditional_binomial() -> None:
    """Under an unchanged process the run's share of the errors of both is Binomial(k, n_run / n_all): its
    upper tail, summed by hand."""
    from math import comb

    k, k0, n, n0 = 20, 25, 1000, 5000
    q = n / (n + n0)
    by_hand = sum(comb(k + k0, i) * q**i * (1 - q) ** (k + k0 - i) for i in range(k, k + k0 + 1))
    assert binomial_sf(k, k + k0, q) == pytest.approx(by_hand, rel=1e-9)


# ---------------------------------------------------------------------------------------------- the page's tables
def _trend_by_hand(health: Health) -> list[dict[str, Any]]:
    """prep_table_trend's rows worked out one table at a time, as its docstring says."""
    from dashboards.health import UNTESTED, table_alerts, table_name

    checked = health.run.run_no if health.run is not None else -1
    earlier = [r for r in health.runs if r.run_no < checked and r.finished_at is not None]
    alerts = table_alerts(health)
    rows = []
    for table in {t for r in health.runs for t in r.tables}:
        now = next((r.tables[table] for r in health.runs if r.run_no == checked and table in r.tables), (0, 0))
        eh = sum(r.tables[table][0] for r in earlier if table in r.tables)
        ee = sum(r.tables[table][1] for r in earlier if table in r.tables)
        name = table_name(table)
        alert = alerts.get(name)
        level = alert.level if alert else "ok" if now[0] >= health.thresholds.min_hands else UNTESTED
        rows.append(
            {
                "table": name,
                "level": level,
                "hands": now[0],
                "settle_errors": now[1],
                "rate": now[1] / now[0] if now[0] else None,
                "earlier_hands": eh,
                "earlier_errors": ee,
                "earlier_rate": ee / eh if eh else None,
                "runs": sum(table in r.tables for r in health.runs),
            }
        )
    order = {"error": 0, "warn": 1, "ok": 2, UNTESTED: 3}
    rows.sort(key=lambda r: (order[r["level"]], -(r["rate"] or 0.0), -r["hands"], r["table"]))
    return rows


def _health(runs: list[dict[str | None, tuple[int, int]]], checked: int, unfinished: set[int], alerted: dict) -> Health:
    from pipeline.analytics.health import Alert, RunFigures, table_subject

    figures = tuple(
        RunFigures(
            run_no=i + 1,
            run_id=f"run-{i + 1}",
            started_at=START + timedelta(hours=i),
            finished_at=None if i in unfinished else START + timedelta(hours=i, minutes=5),
            lines_read=sum(h for h, _ in tables.values()),
            rejects=0,
            duplicates=0,
            stored=sum(h for h, _ in tables.values()),
            invalid=0,
            settle_errors=sum(e for _, e in tables.values()),
            newest=None,
            players=0,
            new_players=0,
            codes=(),
            new_codes=(),
            tables=tables,
        )
        for i, tables in enumerate(runs)
    )
    run = figures[checked] if figures else None
    alerts = tuple(
        Alert(level=level, check="rate", subject=table_subject(t), message=f"table {t}")
        for t, level in alerted.items()
        if run is not None and t in run.tables
    )
    return Health(run, figures, alerts, load_thresholds())


_TABLE = st.one_of(st.none(), st.sampled_from(["A", "B", "b", "Z9", "桌1", "(a)", "table 10", "table 9"]))
_FIGURES = st.tuples(st.integers(0, 400), st.integers(0, 40)).map(lambda he: (he[0], min(he)))


@given(
    runs=st.lists(st.dictionaries(_TABLE, _FIGURES, max_size=6), max_size=5),
    pick=st.integers(0, 10),
    unfinished=st.sets(st.integers(0, 4), max_size=2),
    alerted=st.dictionaries(_TABLE, st.sampled_from(["warn", "error"]), max_size=3),
)
@settings(max_examples=150, deadline=None)
def test_each_tables_trend_is_its_runs_summed_one_table_at_a_time(
    runs: list[dict[str | None, tuple[int, int]]], pick: int, unfinished: set[int], alerted: dict
) -> None:
    """The vectorised trend (one group_by over every run's tables) is the per-table loop it replaced, row for row
    and in the same order: the checked run's figures, the finished earlier runs pooled, the alert or ok/untested."""
    from dashboards.health import prep_table_trend

    health = _health(runs, pick % len(runs) if runs else 0, unfinished, alerted)
    got = prep_table_trend(health)
    assert got.columns == list(_trend_by_hand(health)[0]) if got.height else got.width == 9
    assert got.to_dicts() == _trend_by_hand(health)


def test_the_page_lists_every_alert_and_the_first_tables_and_says_where_the_rest_are() -> None:
    from dashboards import health as health_dash
    from dashboards.pages.health import tables_section

    n = health_dash.TABLE_ROWS + 50
    tables: dict[str | None, tuple[int, int]] = {f"T{i:03}": (200, i % 7) for i in range(n)}
    quiet = [f"T{i:03}" for i in range(0, n, 7)][:3]  # no error in the run: they would sort last without an alert
    health = _health([tables, tables], 1, set(), {t: "warn" for t in quiet})
    html = tables_section(health)
    rows = re.findall(r'<tr class="level-(\w+)"><td class="id" data-v="([^"]+)"', html)
    assert len(rows) == health_dash.TABLE_ROWS
    assert [t for level, t in rows[:3]] == sorted(quiet) and {level for level, _ in rows[:3]} == {"warn"}
    assert f"the first {health_dash.TABLE_ROWS:,} of {n:,} tables" in html and "xuezhan check --format csv" in html
    listed = health_dash.prep_table_trend(health)["table"].head(health_dash.TABLE_ROWS).to_list()
    assert [t for _, t in rows] == listed

    alerts = {f"T{i:03}": "error" for i in range(health_dash.TABLE_ROWS + 10)}  # more alerts than rows: all listed
    many = tables_section(_health([tables, tables], 1, set(), alerts))
    assert many.count('<tr class="level-error">') == health_dash.TABLE_ROWS + 10
    assert many.count('<tr class="level-') == health_dash.TABLE_ROWS + 10


def test_the_pages_frames_are_built_once_per_check(monkeypatch) -> None:
    """prep_tables and prep_table_trend, asked for by the page's table and by its chart, build their frame once
    per check (the same object back), and again for another check, even an equal one."""
    from dashboards import health as health_dash

    built: list[str] = []
    real = health_dash._tables
    monkeypatch.setattr(health_dash, "_tables", lambda h: built.append("tables") or real(h))
    tables: dict[str | None, tuple[int, int]] = {f"T{i}": (200, i) for i in range(5)}
    health = _health([tables, tables], 1, set(), {})
    trend = health_dash.prep_table_trend(health)
    assert health_dash.prep_table_trend(health) is trend
    chart = health_dash.prep_settle_chart(health)
    assert health_dash.prep_tables(health) is health_dash.prep_tables(health)
    assert built == ["tables"] and chart.height == 2 + 2 * min(5, health_dash.TABLE_LINES)
    other = _health([tables, tables], 1, set(), {})
    assert health_dash.prep_table_trend(other) is not trend and built == ["tables", "tables"]
    assert health_dash.prep_table_trend(other).equals(trend)
