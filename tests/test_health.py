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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
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
