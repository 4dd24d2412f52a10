"""`xuezhan score`, `xuezhan score --batch`, `xuezhan rules`, and help text on every command."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from cli import app
from pipeline.disputes import parse_melds, score_lines
from pipeline.rules import TileError

runner = CliRunner()


def test_score_prints_breakdown_in_chinese_and_english() -> None:
    result = runner.invoke(app, ["score", "1111m99m44p66p88p9p", "--win", "9p"])
    assert result.exit_code == 0, result.output
    assert "龙七对" in result.stdout and "dragon seven pairs" in result.stdout
    assert "七对" in result.stdout and "seven pairs" in result.stdout
    assert "根" in result.stdout and "roots" in result.stdout
    assert "total 4 fan → 8 points" in result.stdout


def test_score_not_a_win_exits_1() -> None:
    # The issue's own example: 111m 444m 78m 456p 777p does not win on 7p.
    result = runner.invoke(app, ["score", "11144478m45677p", "--win", "7p", "--que", "s"])
    assert result.exit_code == 1
    assert result.stdout.startswith("not a win")


def test_score_bad_input_exits_2_naming_the_text() -> None:
    result = runner.invoke(app, ["score", "1114447x456777p", "--win", "7m"])
    assert result.exit_code == 2
    assert "'x'" in result.output


def test_score_json_self_drawn_base_and_cap() -> None:
    result = runner.invoke(
        app,
        [
            "score",
            "1m",
            "--win",
            "1m",
            "--melds",
            "pong:5m,kong:6m,ckong:7m,akong:8m",
            "--self-drawn",
            "--after-kong",
            "--cap",
            "4",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    # 平胡 1 + 对对胡 1 + 清一色 2 + 根 3 (three kongs) + 杠上花 1 = 8 fan, capped at 4 fan = 8 points; +1 base.
    assert answer["fan"] == 8 and answer["points"] == 8 and answer["per_payer"] == 9
    assert answer["convention"].startswith("plain hand = 1 fan")
    assert {p["id"] for p in answer["patterns"]} == {"ping_hu", "dui_dui_hu", "qing_yi_se", "gen", "gang_shang_hua"}


def test_score_void_suit_is_not_a_win() -> None:
    result = runner.invoke(app, ["score", "111m444m789m456p7p", "--win", "7p", "--que", "p", "--format", "json"])
    assert result.exit_code == 1
    assert "void" in json.loads(result.stdout)["reason"]


def test_score_flags_and_profiles() -> None:
    rob = json.loads(
        runner.invoke(app, ["score", "111m444m789m456p7p", "--win", "7p", "--rob-kong", "--format", "json"]).stdout
    )
    assert rob["fan"] == 2
    app_gsh = runner.invoke(
        app,
        [
            "score",
            "111m444m789m456p7p",
            "--win",
            "7p",
            "--self-drawn",
            "--after-kong",
            "--rules",
            "app",
            "--format",
            "json",
        ],
    )
    assert json.loads(app_gsh.stdout)["fan"] == 3  # 杠上花 +2 in the app profile
    heavenly = json.loads(
        runner.invoke(
            app,
            [
                "score",
                "111m444m789m456p7p",
                "--win",
                "7p",
                "--self-drawn",
                "--heavenly",
                "--rules",
                "app",
                "--format",
                "json",
            ],
        ).stdout
    )
    assert heavenly["fan"] == 8


def test_score_needs_hand_and_win() -> None:
    assert runner.invoke(app, ["score", "111m"]).exit_code == 2
    assert runner.invoke(app, ["score", "111m444m789m456p7p", "--win", "7p", "--rules", "nope"]).exit_code == 2


def test_batch_keeps_order_reports_errors_and_goes_on(tmp_path) -> None:
    lines = [
        {"concealed": "123s567s234s888s9s", "win_tile": "9s", "self_drawn": True},
        "not json",
        {
            "concealed": ["1m", "1m", "1m", "4m", "4m", "4m", "7m", "8m", "9m", "4p", "5p", "6p", "7p"],
            "win_tile": "7p",
            "profile": {"profile": "chengdu", "cap": 1},
        },
        {"concealed": "11144478m45677p", "win_tile": "7p", "que": "s"},
        {
            "concealed": "1m",
            "win_tile": "1m",
            "melds": [
                {"kind": "pong", "tile": "5m"},
                {"kind": "direct", "tile": "6m"},
                {"kind": "concealed", "tile": "7m"},
                {"kind": "added", "tile": "8m"},
            ],
        },
        {"concealed": "11111m", "win_tile": "1m"},
        {"concealed": "1m", "win_tile": "1m", "melds": [{"kind": "chow", "tile": "5m"}]},
        {"concealed": "123m", "win_tile": "4m", "colour": "red"},
        [1, 2],
    ]
    path = tmp_path / "disputes.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n\n")
    result = runner.invoke(app, ["score", "--batch", str(path)])
    assert result.exit_code == 1
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == 9
    assert answers[0]["win"] and answers[0]["fan"] == 3 and answers[0]["per_payer"] == 5 and answers[0]["error"] is None
    assert answers[1]["error"].startswith("line 2: not JSON")
    assert answers[2]["win"] and answers[2]["fan"] == 1 and answers[2]["points"] == 1
    assert answers[3]["win"] is False and answers[3]["error"] is None and answers[3]["reason"]
    assert answers[4]["win"] and answers[4]["fan"] == 7  # 平胡 对对胡 清一色 + 3 roots
    assert "5 copies of 1m" in answers[5]["error"]
    assert "chow" in answers[6]["error"]
    assert "colour" in answers[7]["error"]
    assert "JSON object" in answers[8]["error"]
    for answer in answers:
        assert set(answer) >= {"win", "fan", "points", "per_payer", "patterns", "error"}


def test_batch_all_readable_exits_0_and_reads_stdin() -> None:
    line = json.dumps({"concealed": "111m444m789m456p7p", "win_tile": "7p"})
    result = runner.invoke(app, ["score", "--batch", "-"], input=line + "\n")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["points"] == 1


def test_batch_missing_file_is_a_usage_error(tmp_path) -> None:
    assert runner.invoke(app, ["score", "--batch", str(tmp_path / "missing.jsonl")]).exit_code == 2


def test_score_lines_skips_blank_lines() -> None:
    assert list(score_lines(["", "  "])) == []


def test_parse_melds() -> None:
    assert [str(m) for m in parse_melds("pong:5m, kong:7p,ckong:3s,akong:2m,")] == [
        "pong:5m",
        "direct:7p",
        "concealed:3s",
        "added:2m",
    ]
    for bad in ("pong5m", "chow:1m", "pong:0m"):
        with pytest.raises(TileError):
            parse_melds(bad)


def test_rules_list_and_show_with_sources() -> None:
    listed = runner.invoke(app, ["rules", "list"])
    assert listed.exit_code == 0 and "chengdu" in listed.stdout and "app" in listed.stdout
    shown = runner.invoke(app, ["rules", "show", "chengdu"])
    assert shown.exit_code == 0
    assert 'cha_jiao_amount = "min"' in shown.stdout
    assert "最小规格" in shown.stdout  # the Chengdu text's line for it
    assert runner.invoke(app, ["rules", "show", "nope"]).exit_code == 2


def _commands(group: typer.Typer, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [(*prefix, c.name or c.callback.__name__) for c in group.registered_commands]  # type: ignore[union-attr]
    for sub in group.registered_groups:
        out.extend(_commands(sub.typer_instance, (*prefix, sub.name)))  # type: ignore[arg-type]
    return out


def test_every_command_has_help_text() -> None:
    commands = _commands(app)
    assert ("score",) in commands and ("validate",) in commands and ("rules", "show") in commands
    for command in commands:
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0, command
        assert len(result.stdout.strip().splitlines()) > 3, command


def test_score_says_which_fan_count_its_profile_uses() -> None:
    # sbr counts a plain hand 0 fan (fan_base = 0): the same hand is 0 fan there, 1 under chengdu, 1 point both
    from typer.testing import CliRunner

    from cli import app

    runner = CliRunner()
    sbr = runner.invoke(app, ["score", "123s888s345p456p6p", "--win", "6p", "--rules", "sbr", "--que", "m"])
    assert sbr.exit_code == 0 and "total 0 fan → 1 points" in sbr.stdout and "plain hand = 0 fan" in sbr.stdout
    chengdu = runner.invoke(app, ["score", "123s888s345p456p6p", "--win", "6p", "--format", "json"])
    answer = json.loads(chengdu.stdout)
    assert (answer["fan"], answer["points"], answer["fan_base"]) == (1, 1, 1) and "plain hand = 1 fan" in answer[
        "convention"
    ]
    line = json.dumps({"concealed": "123s888s345p456p6p", "win_tile": "6p", "profile": "sbr", "que": "m"})
    batch = runner.invoke(app, ["score", "--batch", "-"], input=line + "\n")
    assert json.loads(batch.stdout)["fan_base"] == 0 and json.loads(batch.stdout)["fan"] == 0
