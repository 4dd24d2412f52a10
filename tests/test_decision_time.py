"""Decision time (issue 43 point 5): a record's ``ms`` is carried by the parser, stored in ``events.ms`` (null where
the record gives none), and the simulator's timing model (``--timing``; ``--inject relay=N``) writes it."""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sample_lines import sample_lines

from pipeline.analytics.stats import biweight, biweight_df, by_factor, by_qvalues, t_isf, t_sf
from pipeline.audit.think import APART_Q, ThinkTime, screen
from pipeline.game.policy import difficulties
from pipeline.game.record import RecordError, parse_record
from pipeline.game.start import start_hand
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec, SpecError
from pipeline.simulate.tables import Labels, SimConfig, simulate


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


# ------------------------------------------------------------------------------------------ the timing model
def _timed(
    hands: int = 60, seed: int = 5, relays: int = 0, timing_on: bool = True, players: int = 8
) -> tuple[list[str], Labels]:
    config = SimConfig(hands=hands, seed=seed, players=players, inject=InjectSpec(relays=relays), timing=timing_on)
    lines, labels = simulate(config)
    return list(lines), labels


def _points(lines: list[str]) -> dict[str, list[tuple[int, float]]]:
    """Per player, (difficulty, log ms) of each of its decisions (draws left out)."""
    out: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for line in lines:
        rec = parse_record(json.loads(line))
        exchange = (rec.exchange_direction, rec.exchange_given) if rec.exchange_direction else None
        start = start_hand(rec.rules, dealer=rec.dealer, wall=rec.wall, exchange=exchange, que=rec.que)  # type: ignore[arg-type]
        assert rec.ms is not None and None not in rec.ms  # every event timed
        for ev, hard, ms in zip(rec.events, difficulties(start, rec.events), rec.ms, strict=True):
            if hard is not None:
                assert ms is not None
                out[rec.players[ev.seat]].append((hard, math.log(max(ms, 1))))
    return out


def test_timing_is_deterministic_and_changes_nothing_but_ms() -> None:
    timed, _ = _timed(hands=24)
    assert timed == _timed(hands=24)[0]  # the same seed, the same bytes
    plain, _ = _timed(hands=24, timing_on=False)
    assert all('"ms"' not in line for line in plain)  # off by default: existing outputs stay as they were
    stripped = []
    for line in timed:
        obj = json.loads(line)
        assert all(isinstance(e["ms"], int) and e["ms"] >= 0 for e in obj["events"])
        for e in obj["events"]:
            del e["ms"]
        stripped.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    assert stripped == plain


def test_honest_think_time_rises_with_difficulty_and_relays_are_flat_and_labelled() -> None:
    lines, labels = _timed(hands=60, relays=1)
    assert len(labels.relays) == 1 and labels.as_dict()["relays"] == labels.relays
    relay = labels.relays[0]
    points = _points(lines)
    assert relay in points
    for player, pts in points.items():
        hard = [d for d, _ in pts]
        logs = [t for _, t in pts]
        r = statistics.correlation(hard, logs)
        if player == relay:
            assert abs(r) < 0.2 and statistics.pstdev(logs) < 0.15, (player, r)
        else:
            assert r > 0.4 and statistics.pstdev(logs) > 0.4, (player, r)
    assert "relays" not in _timed(hands=4)[1].as_dict()  # a file without relays: its labels as they were


def test_players_differ_in_how_much_longer_they_think_and_a_follower_takes_the_time_of_asking() -> None:
    """timing.pace: each player's slope, its own and the same wherever it sits; a follower at share 1 asks its
    engine on every decision with a choice, each taking the time of asking (CONSULT_MS, whatever the
    difficulty), and thinks as a person on the forced ones; a follower's times are what it would have without
    them, but on those decisions."""
    from pipeline.simulate import timing

    slopes = [timing.pace(5, f"p{i:03d}").slope for i in range(1, 201)]
    assert timing.pace(5, "p001") == timing.pace(5, "p001") and timing.pace(6, "p001") != timing.pace(5, "p001")
    assert 0.35 < statistics.pstdev(math.log(k) for k in slopes) < 0.65  # SLOPE_SIGMA 0.5
    config = SimConfig(hands=40, seed=5, players=8, inject=InjectSpec.parse("follow=1:1.0"), timing=True)
    lines, labels = simulate(config)
    lines = list(lines)
    follower = labels.followers[0]["player"]
    pts = _points(lines)[follower]
    chosen = [t for d, t in pts if d > 0]  # a decision with a choice: asked of the engine
    assert len(chosen) > 100
    asking = math.log(timing.pace(5, follower).speed * timing.CONSULT_MS)
    assert abs(statistics.median(chosen) - asking) < 0.1
    band = sum(abs(t - asking) < 3 * timing.CONSULT_SIGMA for t in chosen)
    assert band >= 0.97 * len(chosen) and statistics.pstdev(chosen) < 0.4  # the time of asking (a person's: σ 0.55)
    hard = [d for d, _ in pts if d > 0]
    assert abs(statistics.correlation(hard, chosen)) < 0.3  # flat in difficulty (n > 100: r's error about 0.09)
    others = [p for player, p in _points(lines).items() if player != follower]
    assert min(statistics.correlation([d for d, _ in p], [t for _, t in p]) for p in others) > 0.3
    plain, _ = simulate(SimConfig(hands=40, seed=5, players=8, inject=InjectSpec.parse("follow=1:1.0")))
    assert [json.loads(x)["events"] for x in plain] == [
        [{k: v for k, v in e.items() if k != "ms"} for e in json.loads(x)["events"]] for x in lines
    ]  # the same hands, but for the times


def test_relay_turns_timing_on_and_is_counted_among_the_players_needed() -> None:
    spec = InjectSpec.parse("relay=2,bot=1")
    assert (spec.relays, spec.players_needed) == (2, 3)
    with pytest.raises(SpecError, match="relay"):
        InjectSpec.parse("relay=5", players=4)
    lines, _ = _timed(hands=4, relays=1, timing_on=False)
    assert all('"ms"' in line for line in lines)


# --------------------------------------------------------------------------------------- the think-time screen
def test_the_screen_flags_the_relay_and_no_honest_player() -> None:
    lines, labels = _timed(hands=120, seed=11, relays=1, players=16)
    rows = screen(parse_record(json.loads(line)) for line in lines)
    flagged = {t.player for t in rows if t.flagged}
    assert flagged == set(labels.relays)
    assert rows[0].player == labels.relays[0]  # most suspicious first
    # the null worked out again from the rows (module docstring): first the biweight test over all the others;
    # then the others it did not flag: their mean atanh r, their spread beyond sampling, Student's t of m - 1;
    # flag_r against the room of the others not flagged, at BY's first level
    tested = [t for t in rows if t.p is not None]
    first = 0.05 / (len(tested) * by_factor(len(tested)))

    def robust_p(t: ThinkTime) -> float:
        others = [o for o in tested if o is not t]
        loc, var = biweight([math.atanh(o.r or 0.0) for o in others])
        noise = statistics.median(1 / (o.decisions - 3) for o in others)
        tau2 = max(0.0, var - noise)
        s = math.sqrt(tau2 + 1 / (t.decisions - 3) + (tau2 + noise) / len(others))
        return t_sf((loc - math.atanh(t.r or 0.0)) / s, biweight_df(len(others)))

    robust_q = by_qvalues(np.array([robust_p(t) for t in tested]))
    apart = {t.player for t, q in zip(tested, robust_q, strict=True) if q <= APART_Q}
    assert apart <= set(labels.relays)

    def room(t: ThinkTime, others: list[ThinkTime]) -> tuple[float, float, int]:
        f = [math.atanh(o.r) for o in others if o.r is not None]
        noise = statistics.fmean(1 / (o.decisions - 3) for o in others)
        tau2 = max(0.0, statistics.variance(f) - noise)
        return statistics.fmean(f), math.sqrt(tau2 + 1 / (t.decisions - 3) + (tau2 + noise) / len(f)), len(f)

    for t in tested:
        assert t.flag_r is not None and t.r is not None and t.room_r is not None and t.z is not None
        mean, s, m = room(t, [o for o in tested if o is not t and o.player not in apart])
        assert t.room_r == pytest.approx(math.tanh(mean), rel=1e-12)
        assert t.z == pytest.approx((math.atanh(t.r) - mean) / s, rel=1e-9)
        assert t.p == pytest.approx(t_sf(-t.z, m - 1), rel=1e-9)
        mean, s, m = room(t, [o for o in tested if o is not t and not o.flagged])
        assert t.flag_r == pytest.approx(math.tanh(mean - t_isf(first, m - 1) * s), rel=1e-9)
        assert (t.r <= t.flag_r) == t.flagged  # one relay in the room: flagged alone, where r reaches flag_r


def test_two_relays_do_not_hide_each_other() -> None:
    """Two relays in a room of 16: each would widen the spread the other is judged by (the mean and variance of
    the others alone found neither, in this room); the biweight test first takes them out of the rooms."""
    lines, labels = _timed(hands=500, seed=1, relays=2, players=16)
    rows = screen(parse_record(json.loads(line)) for line in lines)
    assert {t.player for t in rows if t.flagged} == set(labels.relays)
    plain, _ = _timed(hands=8, timing_on=False)
    assert screen(parse_record(json.loads(line)) for line in plain) == []  # no times, nothing screened


# ------------------------------------------------------------------------------------------ xuezhan think-time
def _warehouse(tmp_path: Path, name: str, config: SimConfig) -> tuple[Path, Labels]:
    from pipeline.simulate.tables import write

    games = tmp_path / f"{name}.jsonl"
    labels = write(config, games)
    ingest([str(games)], tmp_path / name, workers=1)
    return tmp_path / name, labels


def test_think_time_flags_the_relay_of_a_warehouse_and_no_one_else(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli import app

    config = SimConfig(hands=120, seed=11, players=16, inject=InjectSpec(relays=1), timing=True)
    wh, labels = _warehouse(tmp_path, "wh", config)
    runner = CliRunner()
    result = runner.invoke(app, ["think-time", "--warehouse", str(wh), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["hands"] == 120 and doc["not_read"] == []
    flagged = [p["player"] for p in doc["players"] if p["flagged"]]
    assert flagged == labels.relays  # the relay, and no one else
    top = doc["players"][0]
    assert top["player"] == labels.relays[0] and top["q"] <= 0.05 and top["z"] < -5
    assert all(p["p"] is not None for p in doc["players"])  # every one of the 16 screened
    assert "not proof" in doc["meaning"]
    table = runner.invoke(app, ["think-time", "--warehouse", str(wh)])
    assert table.exit_code == 0
    assert "1 flagged at FDR 0.05" in table.stdout and "a reason to look" in table.stdout
    assert [line.split()[0] for line in table.stdout.splitlines() if line.endswith("YES")] == labels.relays
    csv = runner.invoke(app, ["think-time", "--warehouse", str(wh), "--format", "csv"])
    rows = csv.stdout.splitlines()
    head = "player,decisions,median_ms,r,room_r,z,p,q,flagged,flag_r,ask_share"
    assert rows[0] == head and len(rows) == 1 + len(doc["players"])
    assert rows[1].startswith(f"{labels.relays[0]},") and ",true," in rows[1]
    assert all(p["flag_r"] is not None and p["flag_r"] < p["room_r"] for p in doc["players"])
    assert "What it can see here" in table.stdout and "this room would flag one" in table.stdout
    # the same reach in json: the tested players' flag_r, the median the table's line prints
    limits = sorted(p["flag_r"] for p in doc["players"])
    seen = doc["reach"]
    assert seen["tested"] == len(limits) and seen["flags_relay"] is True
    assert (seen["flag_r_min"], seen["flag_r_max"]) == (limits[0], limits[-1])
    assert f"({seen['flag_r_median']:.2f}, the median of the {len(limits)} tested" in table.stdout
    # and each player's ask share: 1 - (flag_r / r)^2 of its own figures, their median and least in the reach
    for p in doc["players"]:
        if p["flagged"]:
            assert p["ask_share"] == 0.0
        elif p["flag_r"] > 0:
            assert p["ask_share"] == pytest.approx(1 - (p["flag_r"] / p["r"]) ** 2, abs=2e-3)  # of rounded figures
    shares = sorted(
        math.inf if p["ask_share"] is None else p["ask_share"]
        for p in doc["players"]
        if not p["flagged"] and p["ask_share"] != 0.0
    )
    assert seen["ask_share_min"] == shares[0] > 0 and seen["ask_share_median"] == pytest.approx(
        statistics.median(shares), abs=1e-4
    )  # of the players not flagged (nor at their flag_r already)
    assert seen["ask_of"] == len(shares)
    assert f"a player asking a bot (or a relay) on {seen['ask_share_median']:.0%} of its decisions" in table.stdout
    # a filter that keeps another player's hands only: the screen is over those hands
    other = next(p["player"] for p in doc["players"] if not p["flagged"])
    scoped = runner.invoke(app, ["think-time", "--warehouse", str(wh), "--player", other, "--format", "json"])
    assert scoped.exit_code == 0 and json.loads(scoped.stdout)["hands"] < 120


def test_think_time_says_when_no_record_carries_times(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli import app

    wh, _ = _warehouse(tmp_path, "plain", SimConfig(hands=8, seed=3, players=8))
    result = CliRunner().invoke(app, ["think-time", "--warehouse", str(wh)])
    assert result.exit_code == 1  # nothing selected (EXIT_CODES)
    assert result.stdout == ""
    assert "nothing to screen: no record" in result.stderr and "carries decision times" in result.stderr


def test_think_time_reports_a_record_it_cannot_read_back(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli import app

    config = SimConfig(hands=16, seed=4, players=8, inject=InjectSpec(relays=1), timing=True)
    wh, _ = _warehouse(tmp_path, "wh", config)
    (tmp_path / "wh.jsonl").unlink()  # the source is gone: no hand can be read back
    result = CliRunner().invoke(app, ["think-time", "--warehouse", str(wh), "--format", "json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert len(doc["not_read"]) == 16 and doc["players"] == []
    assert "not screened" in result.stderr


# ------------------------------------------------------------------------------ the stored times (xuezhan review)
def test_the_exact_correlation_and_median_agree_with_the_statistics_module() -> None:
    """think.correlation sums whole units (exact, in any order): within 1e-9 of statistics.correlation of the
    same points; think.median_ms is statistics.median of the times."""
    import random
    from collections import Counter

    from pipeline.audit.think import correlation, median_ms

    rng = random.Random(7)
    for size in (2, 3, 30, 501):
        pts = [(rng.randrange(6), rng.choice([rng.randrange(50, 5000), 800])) for _ in range(size)]
        counts = Counter(pts)
        hard, logs = [d for d, _ in pts], [math.log(ms + 1) for _, ms in pts]
        if len(set(hard)) > 1 and len(set(logs)) > 1:
            assert correlation(counts) == pytest.approx(statistics.correlation(hard, logs), abs=1e-9)
        assert median_ms(counts) == statistics.median(ms for _, ms in pts)
    assert correlation(Counter({(1, 100): 40})) is None  # the difficulty does not vary: nothing to follow
    assert correlation(Counter({(1, 100): 3, (2, 100): 3})) == 0.0  # the times do not: they follow nothing


def test_think_time_reads_the_times_review_stored_and_replays_only_the_rest(tmp_path: Path) -> None:
    """After `xuezhan review`, think-time reads the timed decisions of the reviewed hands back (decision_times)
    and replays the others: the output is the same to the last bit as replaying every hand, with part of the
    hands reviewed and with all of them; the relay still flagged, and no one else."""
    from typer.testing import CliRunner

    from cli import app

    config = SimConfig(hands=120, seed=11, players=16, inject=InjectSpec(relays=1), timing=True)
    wh, labels = _warehouse(tmp_path, "wh", config)
    runner = CliRunner()

    def doc(*args: str) -> dict:
        result = runner.invoke(app, ["think-time", "--warehouse", str(wh), "--format", "json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    fresh = doc()
    assert fresh["stored"] == 0 and [p["player"] for p in fresh["players"] if p["flagged"]] == labels.relays
    part = runner.invoke(app, ["review", "--warehouse", str(wh), "--player", labels.relays[0], "--quiet"])
    assert part.exit_code == 0, part.output
    mixed = doc()
    assert 0 < mixed["stored"] < mixed["hands"] == 120
    assert {**mixed, "stored": 0} == fresh
    assert runner.invoke(app, ["review", "--warehouse", str(wh), "--quiet"]).exit_code == 0
    stored = doc()
    assert stored["stored"] == stored["hands"] == 120 and {**stored, "stored": 0} == fresh
    assert doc("--fresh") == fresh
    other = next(p["player"] for p in fresh["players"] if not p["flagged"])
    assert {**doc("--player", other), "stored": 0} == doc("--player", other, "--fresh")
    table = runner.invoke(app, ["think-time", "--warehouse", str(wh)])
    assert "120 hands with decision times replayed (120 of them by `xuezhan review`" in table.stdout
    with duckdb.connect(str(wh / "warehouse.duckdb"), read_only=True) as con:
        (n,) = con.execute("SELECT sum(n) FROM decision_times").fetchone()  # type: ignore[misc]
    assert n == sum(p["decisions"] for p in fresh["players"])
    # the daily findings list the relay from the stored times, replaying nothing
    listed = runner.invoke(app, ["findings", "--warehouse", str(wh), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    relays = [r for r in json.loads(listed.stdout) if r["kind"] == "think"]
    assert [r["key"] for r in relays] == [f"think:{labels.relays[0]}"] and relays[0]["status"] == "new"
    # and say what the think-time screen can see in this room, as think-time's own reach has it
    text = runner.invoke(app, ["findings", "--warehouse", str(wh)]).stdout
    line = next(x for x in text.splitlines() if x.startswith("What the decision screens can see here"))
    seen = doc()["reach"]
    assert f"at r {seen['flag_r_median']:.2f} or less (the median of the {seen['tested']} tested)" in line
    assert "a relay, whose times follow it not at all (r near 0), among them" in line and "xuezhan think-time" in line


def test_review_counts_a_records_timed_decisions_as_the_screen_does() -> None:
    """decision_times rows of a timed record (full, and each seat's observer record) are what the screen counts of
    the record replayed: per player, difficulty and time."""
    from collections import Counter

    from test_levels_observer import to_observer

    from pipeline.audit.tallies import review_rows
    from pipeline.audit.think import decision_times

    lines, _ = _timed(hands=6, seed=5, relays=1)
    for line in lines:
        rec = json.loads(line)
        for obj in (rec, *(to_observer(rec, observer=s) for s in range(4))):
            _, _, times = review_rows(rec["hand_id"], obj)
            stored: dict[str, Counter] = {}
            for r in times:
                stored.setdefault(r["player"], Counter())[(r["difficulty"], r["ms"])] += r["n"]
            assert stored == dict(decision_times([parse_record(obj)])) and (obj is not rec or stored)


def test_the_think_time_evaluation_plants_relays_or_followers_and_finds_the_one_planted(tmp_path: Path) -> None:
    """eval-think-time's rooms: relays by default; with follow=P a follower at that share and an evasive one,
    seeds of their own, other cache keys; run_think counts the follower as the planted player."""
    from pipeline.evaluate import ThinkPopulation, run_think, think_grid

    relays = think_grid(seed=1, hands=100, replicates=2, honest=3)
    assert Counter((p.relays, p.follow) for p in relays if isinstance(p, ThinkPopulation)) == {
        (1, 0.0): 2,
        (0, 0.0): 3,
    }
    assert relays[0].name == "relay × 100"
    assert [p.name for p in think_grid(seed=1, hands=100, relays=3, replicates=1, honest=0)] == ["3 relays × 100"]
    follow = think_grid(seed=1, hands=100, replicates=2, honest=0, follow=0.5)
    assert [(p.name, p.seed) for p in follow] == [
        ("follow 0.5 × 100", 1),
        ("follow 0.5 × 100", 2),
        ("follow 0.5 evasive × 100", 501),
        ("follow 0.5 evasive × 100", 502),
    ]
    assert all(isinstance(p, ThinkPopulation) and p.relays == 0 and p.follow == 0.5 for p in follow)
    assert [p.evasive for p in follow if isinstance(p, ThinkPopulation)] == [False, False, True, True]
    room = ThinkPopulation("follow 1 × 60", 60, 0.0, 0, 0, 3, None, follow=1.0)
    outcome = run_think(room, workdir=str(tmp_path))
    assert outcome.planted == 1 and outcome.honest >= 10 and outcome.flagged_honest == 0
    assert outcome.flagged_planted == 1  # every choice asked of the engine: its times follow nothing


def test_a_room_of_relays_the_robust_test_empties_is_judged_against_all_its_others() -> None:
    """Three relays among eight: the robust test flags them; the five players left would judge each other by
    four others, fewer than MIN_ROOM, so each is judged against all its others instead of going untested."""
    import random
    from collections import Counter

    from pipeline.audit.think import MIN_ROOM, judge

    rng = random.Random(4)
    per: dict[str, Counter[tuple[int, int]]] = {}
    for k in range(8):
        relay = k < 3
        counts: Counter[tuple[int, int]] = Counter()
        for _ in range(400):
            d = rng.randrange(6)
            log_ms = math.log(2500) if relay else math.log(1200 + 900 * d * (0.9 + 0.05 * k))
            counts[(d, round(math.exp(log_ms + rng.gauss(0, 0.05 if relay else 0.3))))] += 1
        per[f"{'r' if relay else 'h'}{k}"] = counts
    assert MIN_ROOM > 8 - 3 - 1  # the others left to each of the five
    rows = judge(per)
    assert all(t.p is not None for t in rows)  # every one tested
    assert {t.player for t in rows if t.flagged} == {"r0", "r1", "r2"}


def test_a_bot_with_a_fixed_delay_is_tested_and_flagged() -> None:
    """The plainest relay: every decision at the same ms. Its times do not vary, so their correlation with the
    difficulty is 0/0; the screen reads it as 0 (they follow difficulty not at all) and flags it, where it once
    left the player untested (r None) and so never flagged. Every time 0 ms is read as no time (a client that
    wrote 0 where it did not time)."""
    import random
    from collections import Counter

    from pipeline.audit.think import judge

    rng = random.Random(5)
    per: dict[str, Counter[tuple[int, int]]] = {}
    for k in range(12):
        counts: Counter[tuple[int, int]] = Counter()
        for _ in range(300):
            d = rng.randrange(6)
            ms = 1500 if k == 0 else round(math.exp(math.log(1200 + 700 * d * (0.8 + 0.05 * k)) + rng.gauss(0, 0.4)))
            counts[(d, ms)] += 1
        per[f"p{k:02d}"] = counts
    rows = {t.player: t for t in judge(per)}
    assert rows["p00"].r == 0.0 and rows["p00"].p is not None
    assert {p for p, t in rows.items() if t.flagged} == {"p00"}
    # every time 0 ms: a client that did not time, not a bot: no r, not tested
    per["p00"] = Counter({(d, 0): n for (d, _), n in per["p00"].items()})
    rows = {t.player: t for t in judge(per)}
    assert rows["p00"].r is None and rows["p00"].p is None and not any(t.flagged for t in rows.values())


def test_a_player_asking_a_bot_on_its_ask_share_of_decisions_is_flagged_whatever_the_asking_takes() -> None:
    """think.ask_share's promise: a player whose decisions, chosen at random on a share 0.08 above its ask_share
    (at the share itself one sample's r is flagged about half the time: it scatters about the r it tends to), take
    times unrelated to their difficulty is flagged however long the asking takes (its typical time exactly, the
    hardest to see; a fixed 3 s with its spread; its own times shuffled); on a share 0.2 below, taking its typical
    time, it is not. And the bound it rests on: at its typical time, r falls to about √(1 − P) r."""
    import random
    from collections import Counter

    from pipeline.audit.think import ask_share, correlation, judge

    rng = random.Random(8)
    per: dict[str, list[tuple[int, int]]] = {}
    for k in range(12):
        slope = 700 * (0.6 + 0.1 * k)
        points = []
        for _ in range(3000):
            d = rng.randrange(6)
            points.append((d, round(math.exp(math.log(1200 + slope * d) + rng.gauss(0, 0.5)))))
        per[f"p{k:02d}"] = points
    rows = {t.player: t for t in judge({p: Counter(x) for p, x in per.items()})}
    assert not any(t.flagged for t in rows.values())
    target = "p05"
    honest = rows[target]
    assert honest.r is not None and honest.flag_r is not None and 0 < honest.flag_r < honest.r
    share = ask_share(honest.r, honest.flag_r)
    assert share == honest.ask_share and share is not None and 0.2 < share < 0.9, share
    usual = math.exp(statistics.fmean(math.log(ms + 1) for _, ms in per[target]))

    def asking(share: float, how: str) -> bool:
        points = list(per[target])
        rng.shuffle(points)
        k = round(share * len(points))
        times = [ms for _, ms in points[:k]]
        rng.shuffle(times)
        for i, (d, _) in enumerate(points[:k]):
            if how == "usual":
                points[i] = (d, round(usual))
            elif how == "fixed":
                points[i] = (d, round(3000 * math.exp(rng.gauss(0, 0.3))))
            else:
                points[i] = (d, times[i])  # its own times, each given to another asked decision
        if how == "usual":
            assert correlation(Counter(points)) == pytest.approx(math.sqrt(1 - share) * honest.r, abs=0.04)
        judged = {t.player: t for t in judge({**{p: Counter(x) for p, x in per.items()}, target: Counter(points)})}
        return judged[target].flagged and sum(t.flagged for t in judged.values()) == 1

    for how in ("usual", "fixed", "shuffled"):
        assert asking(min(1.0, share + 0.08), how), how
    assert not asking(max(0.0, share - 0.2), "usual")


def test_a_room_of_many_players_is_judged_from_sums_and_one_biweight() -> None:
    """Over EXACT_ROOM players the robust first test reads every player's biweight (the player's own weight among
    400 moves it by about a 400th), and each room's mean and variance come from sums less the player's own: the
    figures are still the module docstring's, worked out here again; the relays are flagged and no one else."""
    from pipeline.audit.think import EXACT_ROOM, judge
    from tools.bench import think_room

    per = think_room(400, seed=12, decisions=400, relay_every=40)
    assert len(per) - 1 > EXACT_ROOM
    rows = judge(per)
    assert {t.player for t in rows if t.flagged} == {f"p{k:05d}" for k in range(0, 400, 40)}
    f = {t.player: math.atanh(t.r) for t in rows if t.r is not None}
    n = {t.player: t.decisions for t in rows}
    loc, var = biweight(list(f.values()))
    noise = statistics.median(1 / (n[p] - 3) for p in f)
    tau2 = max(0.0, var - noise)
    m = len(f) - 1
    robust = {p: t_sf((loc - f[p]) / math.sqrt(tau2 + 1 / (n[p] - 3) + (tau2 + noise) / m), biweight_df(m)) for p in f}
    apart = {p for p, q in zip(robust, by_qvalues(np.array(list(robust.values()))), strict=True) if q <= APART_Q}
    for t in rows[:3] + rows[-3:]:
        others = [o for o in f if o != t.player and o not in apart]
        mean = statistics.fmean(f[o] for o in others)
        sampling = statistics.fmean(1 / (n[o] - 3) for o in others)
        tau2 = max(0.0, statistics.variance([f[o] for o in others]) - sampling)
        s = math.sqrt(tau2 + 1 / (n[t.player] - 3) + (tau2 + sampling) / len(others))
        assert t.room_r == pytest.approx(math.tanh(mean), rel=1e-12)
        assert t.z == pytest.approx((f[t.player] - mean) / s, rel=1e-9)
        assert t.p == pytest.approx(t_sf(-(t.z or 0.0), len(others) - 1), rel=1e-9)


@st.composite
def _rooms(draw: st.DrawFn) -> dict[str, Counter[tuple[int, int]]]:
    """Rooms of 1 to 14 players, each 0 to 80 decisions of difficulty 0-5 and times 0-60,000 ms (repeated times,
    flat times, players under MIN_DECISIONS)."""
    players = draw(st.integers(1, 14))
    per: dict[str, Counter[tuple[int, int]]] = {}
    for k in range(players):
        flat = draw(st.booleans())
        n = draw(st.sampled_from([0, 5, 31, 40, 80]))
        pts = draw(
            st.lists(
                st.tuples(st.integers(0, 5), st.just(1500) if flat else st.integers(0, 60_000)), min_size=n, max_size=n
            )
        )
        per[f"p{k:02d}"] = Counter(pts)
    return per


@given(_rooms())
@settings(max_examples=150)
def test_think_time_figures_hold_their_invariants_in_any_room(per: dict[str, Counter[tuple[int, int]]]) -> None:
    """Whatever the room: one row a player with a decision; p and q in [0, 1] with q at least p; flagged exactly at
    q <= fdr; the ask share in [0, 1] (0 where flagged); players under MIN_DECISIONS untested; and the players'
    names change nothing but the names (their order reversed: the same figures, to rounding)."""
    from pipeline.audit.think import MIN_DECISIONS, judge

    rows = judge(per)
    assert sorted(t.player for t in rows) == sorted(p for p, c in per.items() if c)
    for t in rows:
        if t.p is None:
            assert t.q is None and not t.flagged and t.z is None
            continue
        assert t.decisions >= MIN_DECISIONS and t.q is not None and 0 <= t.p <= t.q <= 1
        assert t.flagged == (t.q <= 0.05)
        assert t.ask_share is None or 0 <= t.ask_share <= 1
        assert not t.flagged or t.ask_share == 0.0
    renamed = {f"q{99 - int(p[1:]):02d}": c for p, c in per.items()}
    again = {f"p{99 - int(t.player[1:]):02d}": t for t in judge(renamed)}
    for t in rows:
        u = again[t.player]
        assert (u.flagged, u.r) == (t.flagged, t.r)
        for a, b in ((t.z, u.z), (t.p, u.p), (t.flag_r, u.flag_r), (t.ask_share, u.ask_share)):
            assert (a is None) == (b is None) and (a is None or b == pytest.approx(a, rel=1e-9, abs=1e-12))
