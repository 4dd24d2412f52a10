"""The engine-assistance screen with a second yardstick (``xuezhan assist --yardstick SPEC``, issue 43): engines
named by a spec (pipeline/engines), the review asking one at every turn (pipeline/audit/review.py), and the
screen finding a follower of that engine in a simulated room."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.analytics.export import Missing
from pipeline.analytics.queries import connect
from pipeline.audit.assist import screen
from pipeline.audit.decisions import decision_hands, decision_rows, rows_of
from pipeline.audit.review import engine_rng, note, review
from pipeline.engines import BUILT_IN, EngineSpecError, first, load, lookahead
from pipeline.game.record import parse_record
from pipeline.game.state import HandState
from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write
from pipeline.validate import play_state


def test_a_spec_names_the_built_in_engine_its_settings_or_an_engine_of_ones_own() -> None:
    assert load("lookahead").name == BUILT_IN and load(" lookahead: ").decide is lookahead.decide
    other = load("lookahead:horizon=6, samples=48,ron=0.5")
    assert other.name == "lookahead:samples=48,horizon=6,ron=0.5"  # the settings' order, the defaults left out
    assert load("lookahead:samples=24").name == "lookahead"  # the defaults are the built-in itself
    own = load("pipeline.engines.lookahead:decide")
    assert own.name == "pipeline.engines.lookahead:decide" and own.decide is lookahead.decide
    bad = {
        "lookahead:depth=3": "no setting 'depth'",
        "lookahead:samples": "has no value",
        "lookahead:samples=many": "not a number",
        "lookahead:samples=1.5": "not a number",
        "lookahead:samples=0": "at least 1",
        "lookahead:ron=2": "ron must be in",
        "stockfish": "neither",
        "pipeline.engines:": "neither",
        ":decide": "neither",
        "no_such_module_here:decide": "cannot import",
        "pipeline.engines.lookahead:DEFAULT": "no callable",
        "pipeline.engines.lookahead:nothing": "no callable",
    }
    for spec, why in bad.items():
        with pytest.raises(EngineSpecError, match=why):
            load(spec)


def test_other_settings_are_another_engine() -> None:
    config = SimConfig(hands=6, seed=3, players=4)
    hands = _hands(config)
    quick = load("lookahead:samples=2,horizon=1,width=1").decide
    differ = total = 0
    for obj in hands:
        record = parse_record(obj)
        for a, b in zip(review(record, obj, lookahead.decide), review(record, obj, quick), strict=True):
            if a.engine is not None:
                total += 1
                differ += a.engine != b.engine
    assert total > 100 and differ > 0


def _hands(config: SimConfig) -> list[dict]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "games.jsonl"
        write(config, path)
        return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_review_asks_the_engine_at_each_turn_with_a_choice_and_the_same_answer_each_time() -> None:
    hands = _hands(SimConfig(hands=8, seed=7, players=4))
    asked: list[tuple[int, int]] = []

    def mirror(state: HandState, seat: int, rng: random.Random) -> list:
        """An engine that always chose what the record shows next (it peeks, as no engine may: a test's), before a
        pass (a second option: an engine that ranks one saw no choice)."""
        asked.append((state.turn, seat))
        return [lookahead.Choice(_next[0], 0.0), lookahead.Choice(None, -1.0)]

    for obj in hands:
        record = parse_record(obj)
        plain = review(record, obj)
        _next: list = [None]
        decisions = []
        for d in review(record, obj, _peeking(record, mirror, _next)):
            decisions.append(d)
        assert [(d.event, d.seat, d.kind) for d in decisions] == [(d.event, d.seat, d.kind) for d in plain]
        for d in decisions:
            wanted = d.kind == "turn" and len(d.options) > 1 and d.options[0].action != "hu"
            assert (d.engine is not None) == wanted
            assert d.engine in (None, True)  # the mirror always agrees
        engine_rows = rows_of(record.hand_id, record.players, decisions, engine=True)
        assert len(engine_rows) == sum(d.engine is not None for d in decisions) and all(r.agreed for r in engine_rows)
        assert all(r.kind == "turn" for r in engine_rows)
    assert asked and all(turn == seat for turn, seat in asked)  # asked on its own turn only

    def silent(state: HandState, seat: int, rng: random.Random) -> list:
        return []

    obj = hands[0]
    record = parse_record(obj)
    assert all(d.engine in (None, False) for d in review(record, obj, silent))
    again = [d.engine for d in review(record, obj, lookahead.decide)]
    assert again == [d.engine for d in review(record, obj, lookahead.decide)] and True in again


def _state_at(record, obj: dict, index: int | None) -> HandState:  # type: ignore[no-untyped-def]
    """The hand's state just before its event ``index`` (as the review has it there)."""
    assert index is not None
    state = play_state(record, obj)
    for event in record.events[:index]:
        state.apply(event)
    return state


def _peeking(record, engine, slot: list):  # type: ignore[no-untyped-def]
    """``engine`` told, before each call, the event the record shows at the state's point (by the events applied)."""

    def ask(state: HandState, seat: int, rng: random.Random) -> list:
        slot[0] = record.events[len(state.events)]
        return engine(state, seat, rng)

    return ask


def test_the_engines_randomness_is_the_decisions_own() -> None:
    a, b = engine_rng("h", 3, 1), engine_rng("h", 3, 1)
    assert [a.random() for _ in range(3)] == [b.random() for _ in range(3)]
    assert engine_rng("h", 3, 1).random() not in (engine_rng("h", 4, 1).random(), engine_rng("g", 3, 1).random())
    ranked = first(lambda s, seat, rng: [], None, 0, a)  # type: ignore[arg-type]
    assert ranked == (0, None)
    pair = [lookahead.Choice(None, 1.0), lookahead.Choice(None, 0.0)]
    assert first(lambda s, seat, rng: pair, None, 0, a) == (2, None)  # type: ignore[arg-type]


def test_a_turn_the_engine_saw_no_choice_in_is_not_judged_by_it() -> None:
    """An engine that ranks one option (the built-in one holding a single kind of its void suit throws it and weighs
    nothing else) saw no choice: the decision is not judged by it (engine None), its only option is shown, and the
    screen's rows leave it out; one that ranks two judges. The built-in engine's single options are such turns."""
    hands = _hands(SimConfig(hands=8, seed=7, players=4))

    def only(state: HandState, seat: int, rng: random.Random) -> list:
        return lookahead.decide(state, seat, rng)[:1]

    singles = judged = 0
    for obj in hands:
        record = parse_record(obj)
        alone = review(record, obj, only)
        assert all(d.engine is None for d in alone)
        assert rows_of(record.hand_id, record.players, alone, engine=True) == []
        shown = [d for d in alone if d.engine_first is not None]
        assert shown and all("(not judged)" in note(d) and "engine: only " in note(d) for d in shown)
        for d in review(record, obj, lookahead.decide):
            if d.kind != "turn" or len(d.options) < 2 or d.options[0].action == "hu":
                continue
            ranked = lookahead.decide(
                _state_at(record, obj, d.event), d.seat, engine_rng(record.hand_id, d.event, d.seat)
            )
            assert (d.engine is None) == (len(ranked) < 2)
            singles += len(ranked) < 2
            judged += len(ranked) >= 2
    assert singles > 0 and judged > singles


@pytest.fixture(scope="module")
def follower_room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("yardstick")
    games = root / "games.jsonl"
    mix = {"balanced": 0.3, "aggressive": 0.15, "defensive": 0.15, "novice": 0.1, "expert": 0.3}
    config = SimConfig(hands=160, seed=11, players=8, styles=mix, inject=InjectSpec.parse("follow=1:1.0"))
    labels = write(config, games)
    ingest([str(games)], root / "wh", workers=1)
    return root / "wh", labels.as_dict()


def test_the_screen_with_the_followers_engine_flags_the_follower_alone(follower_room: tuple) -> None:
    wh, labels = follower_room
    (follower,) = [f["player"] for f in labels["followers"]]
    with connect(wh) as con:
        hands = decision_hands(con)
    missing: list[Missing] = []
    rows = list(decision_rows(hands, missing, engine="lookahead"))
    assert missing == [] and rows and {r.kind for r in rows} == {"turn"}
    result = screen(rows)
    # a small room (each player about 80 hands): the follower stands first and far out (z 3.4; its q 0.15 in a room
    # of 8, where the spread is measured on 7), no honest player near it; rooms of 2,000 hands flag it (README)
    assert result[0].player == follower and result[0].z is not None and result[0].z > 2.5
    assert all(a.z is not None and a.z < 1.5 and not a.flagged for a in result[1:])
    rates = {a.player: a.agreement for a in result}
    assert rates[follower] == max(rates.values())
    plain = screen(list(decision_rows(hands, missing)))  # the reference as the yardstick: nobody stands out so far
    assert max(a.z for a in plain if a.z is not None) < result[0].z - 1.0


def test_assist_takes_a_yardstick_and_says_so(follower_room: tuple) -> None:
    from cli import app

    wh, labels = follower_room
    (follower,) = [f["player"] for f in labels["followers"]]
    runner = CliRunner()
    result = runner.invoke(app, ["assist", "--warehouse", str(wh), "--yardstick", "lookahead", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["yardstick"] == "lookahead" and doc["stored"] == 0 and "this engine" in doc["meaning"]
    assert doc["players"][0]["player"] == follower and not any(p["flagged"] for p in doc["players"][1:])
    ev = doc["players"][0]["evidence"][0]  # the follower's most telling decision, replayed beside the engine
    assert ev["replay"] == f"xuezhan replay {ev['hand_id']} --warehouse {wh} --review --yardstick lookahead"
    args = ["replay", ev["hand_id"], "--warehouse", str(wh)]
    shown = runner.invoke(app, [*args, "--review", "--yardstick", "lookahead"])
    assert shown.exit_code == 0, shown.output
    assert "engine: the same" in shown.stdout and "engine: the same" not in _replay(runner, ev["hand_id"], wh)
    alone = runner.invoke(app, [*args, "--yardstick", "lookahead"])
    assert alone.exit_code == 2 and "--yardstick goes with --review" in alone.output
    plain = json.loads(runner.invoke(app, ["assist", "--warehouse", str(wh), "--format", "json"]).stdout)
    assert plain["yardstick"] == "reference" and "reference policy" in plain["meaning"]
    spread = runner.invoke(
        app, ["assist", "--warehouse", str(wh), "--yardstick", "lookahead", "--format", "json", "--workers", "2"]
    )
    assert spread.exit_code == 0 and json.loads(spread.stdout) == doc  # the engine's answers the same in any process
    table = runner.invoke(app, ["assist", "--warehouse", str(wh), "--yardstick", "lookahead:samples=24,horizon=10"])
    assert table.exit_code == 0, table.output
    assert "agreement with the engine lookahead on the turns" in table.stdout
    assert "taking the engine lookahead's own first choice" in table.stdout
    bad = runner.invoke(app, ["assist", "--warehouse", str(wh), "--yardstick", "lookahead:depth=2"])
    assert bad.exit_code == 2 and "--yardstick: lookahead has no setting 'depth'" in bad.output


def test_the_evaluation_screens_the_same_rooms_by_another_yardstick() -> None:
    from pipeline.evaluate import assist_grid

    plain = assist_grid(seed=1, hands=500, replicates=2, honest=2)
    other = assist_grid(seed=1, hands=500, replicates=2, honest=2, engine="lookahead")
    assert all(p.engine == "lookahead" for p in other) and all(p.engine is None for p in plain)  # type: ignore[attr-defined]
    assert not any(p.calculator for p in other)  # type: ignore[attr-defined]  # a calculator follows the reference
    kept = [p for p in plain if not p.calculator]  # type: ignore[attr-defined]
    assert [repr(p) for p in other] == [repr(p) for p in kept]  # the same rooms, so the same cache keys


def _replay(runner: CliRunner, hand_id: str, wh: Path) -> str:
    from cli import app

    result = runner.invoke(app, ["replay", hand_id, "--warehouse", str(wh), "--review"])
    assert result.exit_code == 0, result.output
    return result.stdout
