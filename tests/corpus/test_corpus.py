"""The regression corpus: every committed record raises exactly its issue codes, and the files are what
``build.py`` writes. See ``README.md`` in this folder for the cases in words."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

import pipeline
from pipeline.codes import CODES
from pipeline.rules.ruleset import profile_names
from pipeline.rules.settle import Payment
from pipeline.validate import check_sessions, hand_key, validate, validate_line

HERE = Path(__file__).resolve().parent


def _load_builder():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("corpus_build", HERE / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_build"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


build = _load_builder()
CASES = {c.id: c for c in build.CASES}


def _lines(name: str) -> list[str]:
    return (HERE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()


def _file_lines() -> dict[str, str]:
    """Case id → the line committed for it (the files hold the cases of each group in order)."""
    out = {}
    for name in build.FILES:
        cases = [c for c in build.CASES if c.file == name]
        lines = _lines(name)
        assert len(lines) == len(cases), f"{name}.jsonl: {len(lines)} lines for {len(cases)} cases: rebuild the corpus"
        out.update({c.id: line for c, line in zip(cases, lines, strict=True)})
    return out


LINES = _file_lines()


def _payments(text: str) -> Counter[Payment]:
    out: Counter[Payment] = Counter()
    for p in build.claim(text, [0, 0, 0, 0], None)["payments"]:
        out[Payment(p["from"], p["to"], p["amount"], p["reason"], p["event"])] += 1
    return out


# ---------------------------------------------------------------------------------------------- the files
def test_files_are_what_the_builder_writes() -> None:
    expected = build.render()
    for path, text in expected.items():
        assert (HERE / path).read_text(encoding="utf-8") == text, f"{path} is stale: run python tests/corpus/build.py"
    on_disk = {str(p.relative_to(HERE)) for p in HERE.rglob("*.jsonl")} | {"README.md"}
    assert on_disk == set(expected), "files in tests/corpus that the builder does not write"


def test_the_builder_is_deterministic() -> None:
    assert _load_builder().render() == build.render()


def test_case_ids_are_unique_and_documented() -> None:
    assert len(CASES) == len(build.CASES)
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    for c in build.CASES:
        assert c.doc and f"`{c.id}`" in readme


# ---------------------------------------------------------------------------------------------- each case
@pytest.mark.parametrize("case_id", list(CASES))
def test_case_raises_exactly_its_codes(case_id: str) -> None:
    c = CASES[case_id]
    v = validate_line(LINES[case_id], line_no=1)
    assert {i.code for i in v.issues} == set(c.expect), [f"{i.code}: {i.message}" for i in v.issues]
    if not c.expect:
        assert v.ok and v.replayed and not v.issues
    if c.record is not None:
        assert v.hand_id == c.id
    if c.computed is not None:
        assert Counter(v.payments) == _payments(c.computed)


@pytest.mark.parametrize("case_id", [c.id for c in build.CASES if not c.expect and c.record and "result" in c.record])
def test_valid_case_claims_are_the_computed_settlement(case_id: str) -> None:
    """For a valid record the hand-computed claim is the engine's settlement, transfer by transfer."""
    c = CASES[case_id]
    v = validate(c.record)
    claimed = c.record["result"]
    assert list(v.deltas or ()) == claimed["deltas"]
    if claimed.get("payments") and all(
        p["event"] is not None or p["reason"] in ("hua_zhu", "cha_jiao", "tui_shui") for p in claimed["payments"]
    ):
        assert Counter(v.payments) == Counter(
            Payment(p["from"], p["to"], p["amount"], p["reason"], p["event"]) for p in claimed["payments"]
        )
    for w in claimed.get("wins", []):
        win = next(x for x in v.wins if x.event == w["event"])
        assert (win.seat, win.score.fan, win.score.points) == (
            w["seat"],
            w.get("fan", win.score.fan),
            w.get("points", win.score.points),
        )


@pytest.mark.parametrize("session", build.SESSIONS, ids=lambda s: s.id)
def test_session_case(session) -> None:  # type: ignore[no-untyped-def]
    lines = (HERE / "sessions" / f"{session.id}.jsonl").read_text(encoding="utf-8").splitlines()
    validations = [validate_line(line) for line in lines]
    assert all(v.ok for v in validations), "the hands of a session case are valid on their own"
    found = {(s.hand_id, s.issue.code) for s in check_sessions(hand_key(v) for v in validations)}
    assert found == set(session.expect)


# ---------------------------------------------------------------------------------------------- coverage
def test_every_code_has_a_single_code_case_and_a_valid_twin() -> None:
    valid = {c.id for c in build.CASES if not c.expect}
    missing = []
    for code in CODES:
        if code == "INTERNAL":
            continue  # a bug of ours, not a record: test_internal_failure_is_an_issue forces one
        if code.startswith(("INGEST_", "IMPORT_")):
            continue  # reject codes of the reader, the warehouse and the importers: tests/test_ingest*.py and
            # tests/test_formats.py raise each
        if code.startswith("SESSION_"):
            alone = [s for s in build.SESSIONS if {c for _, c in s.expect} == {code}]
            ok = bool(alone) and any(not s.expect for s in build.SESSIONS)
        else:
            alone = [c for c in build.CASES if c.expect == {code}]
            ok = any(c.twin in valid for c in alone)
        if not ok:
            missing.append(code)
    assert not missing, f"codes without a single-code case and a valid twin: {missing}"


def test_every_expected_code_exists() -> None:
    used = {code for c in build.CASES for code in c.expect} | {code for s in build.SESSIONS for _, code in s.expect}
    assert used <= set(CODES)


def test_every_profile_and_the_switches_are_exercised() -> None:
    rulesets = [c.record["ruleset"] for c in build.CASES if c.record and not c.expect]
    profiles = {r if isinstance(r, str) else r["profile"] for r in rulesets}
    overrides = {k for r in rulesets if isinstance(r, dict) for k in r if k != "profile"}
    assert profiles == set(profile_names())
    switches = {
        "dian_gang_hua",
        "gang_shang_pao_money",
        "added_kong_paid",
        "pass_win_rule",
        "void_discard_first",
        "cap",
    }
    assert switches <= overrides


@pytest.mark.skipif(pipeline.compiled(), reason="compiled calls are native: the monkeypatch cannot reach them")
def test_internal_failure_is_an_issue(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug inside the replay becomes an INTERNAL issue on that record; validate() never raises."""
    from pipeline.game.state import HandState

    def broken(self: HandState, seat: int, tile: int, n: int) -> None:
        raise KeyError("simulated bug")

    # _add: every discard takes its tile through it (most discards call neither verify_discard nor _take:
    # HandState._plain_discard)
    monkeypatch.setattr(HandState, "_add", broken)
    v = validate(CASES["play-three-winners"].record)
    assert [i.code for i in v.issues] == ["INTERNAL"]
    assert v.hand_id == "play-three-winners" and not v.ok
    assert "KeyError" in v.issues[0].message and "simulated bug" in v.issues[0].message
    assert CODES["INTERNAL"].severity == "error"
    monkeypatch.undo()
    assert validate(CASES["play-three-winners"].record).ok
