"""`xuezhan validate` end to end, the issue-code page, and the record reader against the JSON Schema.

The inputs are lines of the regression corpus (``tests/corpus``), picked by ``hand_id``.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from cli import app
from pipeline.codes import CODES, page
from pipeline.game.record import RecordError, parse_record, parse_result
from schemas import SCHEMA_DIR, xzlog_schema

runner = CliRunner()
CORPUS = Path(__file__).resolve().parent / "corpus"
SCHEMA = Draft202012Validator(xzlog_schema())


def _corpus_lines() -> dict[str, str]:
    """hand_id → line, for every record line of the corpus (sessions aside)."""
    out = {}
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("hand_id"), str):
                out[obj["hand_id"]] = line
    return out


LINES = _corpus_lines()
VALID = ["play-three-winners", "play-yipao-duoxiang", "kong-concealed-gang-shang-hua", "app-exchange-across"]
BROKEN = "{not json at all"


def write(path: Path, *items: str) -> Path:
    """A .jsonl file of corpus lines (by hand_id) and raw lines, compressed by its suffix."""
    data = "".join((LINES.get(item, item)) + "\n" for item in items).encode()
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    elif path.name.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def validate_cli(*args: object) -> Any:
    return runner.invoke(app, ["validate", *map(str, args)])


def json_out(result: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


# ---------------------------------------------------------------------------------------------- summary
def test_summary_of_a_mixed_file_exits_1(tmp_path: Path) -> None:
    f = write(tmp_path / "mixed.jsonl", *VALID[:2], "play-turn-order", BROKEN, "play-truncated")
    result = validate_cli(f)
    assert result.exit_code == 1, result.output
    out = result.stdout
    # the line that is not JSON is no record (ingest rejects it); the other two invalid ones are records
    assert out.startswith(
        "lines 5 = records 4 (valid 2, invalid 2) + not records 1 + repeated hand_ids 0 (0 invalid, 0 with other"
    )
    assert "issues by code:" in out
    for code in ("TURN_ORDER", "SCHEMA_JSON", "TURN_INCOMPLETE"):
        assert code in out
    assert "play-turn-order event 2: TURN_ORDER" in out  # file:line, hand, event, code, message


def test_all_valid_exits_0(tmp_path: Path) -> None:
    result = validate_cli(write(tmp_path / "good.jsonl", *VALID, ""))  # a blank line is skipped
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("lines 4 = records 4 (valid 4, invalid 0) + not records 0 + repeated hand_ids 0")
    assert "issues by code" not in result.stdout


# ---------------------------------------------------------------------------------------------- --json
def test_json_objects_in_input_order(tmp_path: Path) -> None:
    f = write(tmp_path / "mixed.jsonl", VALID[0], "play-turn-order", BROKEN, VALID[1], "settle-amount")
    result = validate_cli(f, "--format", "json")
    assert result.exit_code == 1
    objects = json_out(result)
    assert [o["hand_id"] for o in objects] == [VALID[0], "play-turn-order", None, VALID[1], "settle-amount"]
    assert [o["ok"] for o in objects] == [True, False, False, True, False]
    broken = objects[2]
    assert [i["code"] for i in broken["issues"]] == ["SCHEMA_JSON"]
    assert "line 3" in broken["issues"][0]["message"]
    assert objects[0]["deltas"] == [-6, 1, 6, -1] and objects[0]["issues"] == []
    assert {p["reason"] for p in objects[0]["payments"]} == {"hu"}
    turn = objects[1]["issues"][0]
    assert turn["code"] == "TURN_ORDER" and turn["event"] == 2 and turn["severity"] == "error"
    assert turn["expected"] == "2" and turn["actual"] == "3"
    assert {i["code"] for i in objects[4]["issues"]} == {"SETTLE_AMOUNT"}


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_compressed_inputs_read_like_plain(tmp_path: Path, suffix: str) -> None:
    items = (VALID[0], "play-turn-order", BROKEN, VALID[3])
    plain = validate_cli(write(tmp_path / "plain.jsonl", *items), "--format", "json")
    packed = validate_cli(write(tmp_path / f"packed{suffix}", *items), "--format", "json")
    assert packed.exit_code == plain.exit_code == 1
    assert json_out(packed) == json_out(plain)


def test_folder_input_reads_every_record_file_below_it(tmp_path: Path) -> None:
    write(tmp_path / "b.jsonl", VALID[1])
    write(tmp_path / "a.jsonl.gz", VALID[0])
    write(tmp_path / "deeper" / "c.jsonl.zst", VALID[2])
    (tmp_path / "notes.txt").write_text("not a record file\n")
    result = validate_cli(tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    assert [o["hand_id"] for o in json_out(result)] == [VALID[0], VALID[1], VALID[2]]  # files in sorted order


def test_the_corpus_folder_holds_invalid_records() -> None:
    result = validate_cli(CORPUS)
    assert result.exit_code == 1
    assert "SESSION_DEALER" in result.stdout  # the session checks run across the files read


# ---------------------------------------------------------------------------------------------- exit 2
def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert validate_cli(tmp_path / "missing.jsonl").exit_code == 2
    (tmp_path / "empty").mkdir()
    assert validate_cli(tmp_path / "empty").exit_code == 2
    good = write(tmp_path / "good.jsonl", VALID[0])
    assert validate_cli(good, "--rules", "beijing").exit_code == 2
    assert validate_cli(good, "--rules", '{"cpa": 4}').exit_code == 2
    assert validate_cli(good, "--rules", "{not json").exit_code == 2
    assert validate_cli(good, "--no-such-option").exit_code == 2


# ---------------------------------------------------------------------------------------------- --strict
def test_strict_stops_at_the_first_invalid_record_with_one_issue(tmp_path: Path) -> None:
    f = write(tmp_path / "mixed.jsonl", VALID[0], "app-earthly-claimed-normal", "play-turn-order", VALID[1])
    loose = json_out(validate_cli(f, "--format", "json"))
    assert len(loose) == 4 and len(loose[1]["issues"]) > 1
    result = validate_cli(f, "--format", "json", "--strict")
    assert result.exit_code == 1
    strict = json_out(result)
    assert [o["hand_id"] for o in strict] == [VALID[0], "app-earthly-claimed-normal"]
    assert len(strict[1]["issues"]) == 1
    summary = validate_cli(f, "--strict")
    assert summary.stdout.startswith("lines 2 = records 2 (valid 1, invalid 1)")


# ---------------------------------------------------------------------------------------------- --profile
def test_profile_override_switch(tmp_path: Path) -> None:
    f = write(tmp_path / "kong.jsonl", "kong-dian-gang-hua-feeder")
    assert validate_cli(f).exit_code == 0
    result = validate_cli(f, "--format", "json", "--rules", '{"dian_gang_hua": "self_draw"}')
    assert result.exit_code == 1
    (obj,) = json_out(result)
    assert {i["code"] for i in obj["issues"]} == {"SETTLE_AMOUNT", "SETTLE_MISSING"}
    assert obj["deltas"] == [-12, 17, 1, -6]  # the computed ledger under the override


def test_profile_override_replaces_the_profile(tmp_path: Path) -> None:
    chengdu = write(tmp_path / "chengdu.jsonl", VALID[0])
    app_hand = write(tmp_path / "app.jsonl", "app-exchange-across")
    (obj,) = json_out(validate_cli(chengdu, "--format", "json", "--rules", "app"))
    assert [i["code"] for i in obj["issues"]] == ["TILE_VOID"]  # the app profile requires 定缺
    (obj,) = json_out(validate_cli(app_hand, "--format", "json", "--rules", "chengdu"))
    assert [i["code"] for i in obj["issues"]] == ["TILE_EXCHANGE"]  # Chengdu plays no 换三张
    assert validate_cli(app_hand, "--rules", '{"profile": "app", "cap": 4}').exit_code == 0


# ---------------------------------------------------------------------------------------------- sessions
def test_session_errors_fail_the_run_and_warnings_do_not() -> None:
    dealer = validate_cli(CORPUS / "sessions" / "session-dealer.jsonl", "--format", "json")
    assert dealer.exit_code == 1
    sessions = [o for o in json_out(dealer) if o.get("session")]
    assert [(o["hand_id"], o["issues"][0]["code"]) for o in sessions] == [("session-dealer-h2", "SESSION_DEALER")]
    assert all(o["ok"] for o in json_out(dealer) if not o.get("session"))
    gap = validate_cli(CORPUS / "sessions" / "session-gap.jsonl")
    assert gap.exit_code == 0 and "SESSION_HAND_GAP" in gap.stdout


# ---------------------------------------------------------------------------------------------- the catalogue
def test_issue_codes_page_is_generated_from_the_catalogue() -> None:
    assert (SCHEMA_DIR / "ISSUE_CODES.md").read_text(encoding="utf-8") == page()


def test_catalogue_codes_are_well_formed() -> None:
    families = (
        "SCHEMA_",
        "RULESET_",
        "TILE_",
        "TURN_",
        "CLAIM_",
        "WIN_",
        "SCORE_",
        "SETTLE_",
        "SESSION_",
        "INTERNAL",
        "INGEST_",
        "IMPORT_",
    )
    for code, entry in CODES.items():
        assert code == entry.code and code.startswith(families)
        assert entry.severity in ("error", "warning") and entry.meaning and entry.example


# ---------------------------------------------------------------------------------------------- reader vs schema
def _variants() -> list[tuple[str, Any]]:
    """Every corpus record, and single-field breakages of a few of them."""
    out: list[tuple[str, Any]] = [(hand_id, json.loads(line)) for hand_id, line in LINES.items()]
    junk: list[Any] = [None, 5, -1, "x", "", True, [], {}, [1, 2], ["1m"] * 4, 1.5]
    for hand_id in ("play-three-winners", "app-exchange-across", "wall-valid", "claim-rob-added-kong"):
        base = json.loads(LINES[hand_id])
        for key in list(base):
            broken = copy.deepcopy(base)
            del broken[key]
            out.append((f"{hand_id} without {key}", broken))
            for value in junk:
                broken = copy.deepcopy(base)
                broken[key] = value
                out.append((f"{hand_id} {key}={value!r}", broken))
        for i, event in enumerate(base["events"][:6]):
            for key in [*event, "from", "kind", "rob_kong", "ms", "x_extra", "extra"]:
                for value in (None, 0, 3, 4, "5p", "direct", True, "x", -1):
                    broken = copy.deepcopy(base)
                    broken["events"][i][key] = value
                    out.append((f"{hand_id} event {i} {key}={value!r}", broken))
                if key in event:
                    broken = copy.deepcopy(base)
                    del broken["events"][i][key]
                    out.append((f"{hand_id} event {i} without {key}", broken))
        for path, value in (
            (("que", 0), "x"),
            (("deal", 0), ["1m"] * 12),
            (("deal", 1), ["1m"] * 15),
            (("exchange", "x_dice"), 3),
            (("exchange", "dice"), 3),
            (("exchange", "given", 0), ["1m"]),
            (("result", "x_note"), "hi"),
            (("result", "note"), "hi"),
            (("result", "payments", 0, "x_note"), 1),
            (("result", "payments", 0, "note"), 1),
            (("result", "payments", 0, "amount"), 0),
            (("result", "payments", 0, "event"), None),
            (("result", "wins", 0, "fan"), -1),
            (("result", "wins", 0, "seat"), 4),
            (("result", "deltas"), [1, 2, 3]),
            (("ruleset",), {"cap": 4}),
            (("ruleset",), {"profile": "chengdu", "cap": 1.5}),
            (("ruleset",), "Chengdu"),
        ):
            broken = copy.deepcopy(base)
            node: Any = broken
            try:
                for key in path[:-1]:
                    node = node[key]
                node[path[-1]] = value
            except (KeyError, IndexError, TypeError):
                continue
            out.append((f"{hand_id} {'.'.join(map(str, path))}={value!r}", broken))
    return out


VARIANTS = _variants()


def _parse(obj: Any) -> RecordError | None:
    try:
        record = parse_record(obj)
        if isinstance(obj, dict) and "result" in obj:
            parse_result(obj["result"], len(record.players))
    except RecordError as exc:
        return exc
    return None


def _beyond_schema(obj: Any, error: RecordError) -> bool:
    """What a JSON Schema cannot say: the ruleset's names (RULESET_UNKNOWN), the ruleset's table (a profile
    seats three or plays two suits: SCHEMA_SHAPE), and a count that must agree with another field (one delta
    per player)."""
    if error.code in ("RULESET_UNKNOWN", "SCHEMA_SHAPE"):
        return True
    deltas = obj.get("result", {}).get("deltas") if isinstance(obj.get("result"), dict) else None
    return error.code == "SCHEMA_RESULT" and isinstance(deltas, list) and len(deltas) != len(obj["players"])


def test_reader_agrees_with_the_json_schema() -> None:
    """A record valid per the schema parses (only replay, or what lies beyond a schema, can reject it); a
    record the reader rejects with a shape code is invalid per the schema."""
    assert len(VARIANTS) > 1000
    disagreements = []
    for name, obj in VARIANTS:
        schema_ok = SCHEMA.is_valid(obj)
        error = _parse(obj)
        if schema_ok and error is not None and not _beyond_schema(obj, error):
            disagreements.append(f"{name}: schema-valid, reader says {error.code}: {error}")
        if not schema_ok and error is None:
            disagreements.append(f"{name}: schema rejects ({next(SCHEMA.iter_errors(obj)).message}), reader accepts")
    assert not disagreements, "\n".join(disagreements[:20])


def test_schema_valid_corpus_records_with_known_rulesets_parse() -> None:
    for hand_id, line in LINES.items():
        obj = json.loads(line)
        if SCHEMA.is_valid(obj):
            error = _parse(obj)
            assert error is None or _beyond_schema(obj, error), (hand_id, error)


def test_deeply_nested_line_is_a_schema_json_issue_not_a_crash(tmp_path: Path) -> None:
    """The standard library's reader overflows the stack on 100,000 nested arrays; the validator must not."""
    data = tmp_path / "deep.jsonl"
    data.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    result = runner.invoke(app, ["validate", str(data), "--format", "json"])
    assert result.exit_code == 1
    out = json.loads(result.stdout.splitlines()[0])
    assert out["hand_id"] is None and out["issues"][0]["code"] == "SCHEMA_JSON"
    assert "line 1" in out["issues"][0]["message"]
