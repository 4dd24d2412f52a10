"""One command-line vocabulary (issue 42), checked by walking every command of the real app: an option name has
one meaning (the registry ``cli.OPTIONS``: every option several commands take is in it, and each such option's
help starts with its meaning), no command has ``--json``, every ``--format`` offers choices from table, csv and
json only (default table), every ``--help`` ends with the one exit-code table (``cli.EXIT_CODES``), which the
README's table repeats word for word; and a bad option value, a missing input file and a missing warehouse exit
2 on every command that takes them. The walker is run on small fake apps too, to show each check can fail."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import typer
import typer.main
from typer.testing import CliRunner

import cli
from cli import EXIT_CODES, EXIT_EPILOG, FORMATS, OPTIONS, app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SECTION = "## Command line: options, formats, exit codes"
runner = CliRunner()


# ---------------------------------------------------------------------------------------------- the walker
def leaf_commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, click command) of every command of a click group, the groups' own sub-groups walked."""
    for name, child in getattr(group, "commands", {}).items():
        if getattr(child, "commands", None):
            yield from leaf_commands(child, (*path, name))
        else:
            yield (*path, name), child


def long_names(param: Any) -> list[str]:
    return [o for o in (*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])) if o.startswith("--")]


def flat(text: str | None) -> str:
    return " ".join((text or "").split())


def vocabulary_faults(
    group: Any, options: Mapping[str, str], exit_codes: Sequence[tuple[int, str]], formats: Sequence[str]
) -> list[str]:
    """Everything in ``group`` (a click group) that breaks the one vocabulary, each fault one line."""
    faults: list[str] = []
    used: dict[str, set[str]] = defaultdict(set)
    for path, command in leaf_commands(group):
        where = " ".join(path)
        epilog = flat(command.epilog)
        for code, meaning in exit_codes:
            if flat(f"{code} {meaning}") not in epilog:
                faults.append(f"{where}: its help lacks exit code {code} ({meaning[:30]}...)")
        for param in command.params:
            if param.param_type_name != "option":
                continue
            for name in long_names(param):
                if name == "--help":
                    continue
                used[name].add(where)
                if name == "--json":
                    faults.append(f"{where}: --json (output is chosen by --format)")
                if name in options and not flat(param.help).startswith(flat(options[name])):
                    faults.append(f"{where}: {name} means {flat(param.help)!r}, not {options[name]!r}")
                if name == "--format":
                    desc = getattr(param, "type_descriptor", None)  # typer's own types (typer >= 0.29)
                    choices = list(desc.choices or ()) if desc is not None and desc.is_choice else []
                    if not choices or set(choices) - set(formats):
                        faults.append(f"{where}: --format offers {choices}, not a choice of {list(formats)}")
                    if param.default != "table":
                        faults.append(f"{where}: --format's default is {param.default!r}, not table")
    for name, where_used in sorted(used.items()):
        if len(where_used) > 1 and name not in options:
            faults.append(f"{name} is taken by {', '.join(sorted(where_used))} with no registered meaning")
    for name in options:
        if name not in used:
            faults.append(f"{name} is registered but no command takes it")
    return faults


def readme_exit_codes(text: str) -> list[tuple[int, str]]:
    """The rows of the exit-code table in the README's command-line section."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^\| (\d) \| (.+?) \|$", section, re.MULTILINE)]


# ---------------------------------------------------------------------------------------------- the real app
COMMAND = typer.main.get_command(app)
COMMANDS = dict(leaf_commands(COMMAND))
# the commands whose --profile, --since, ... filter the hands they read (README: one meaning per option name)
FILTERED = {"stats", "report", "audit", "collusion", "info-cheats", "think-time", "assist", "review", "deals", "export"}


def test_the_walker_finds_every_command() -> None:
    assert len(COMMANDS) >= 19
    assert {("score",), ("validate",), ("stats",), ("eval-deals",), ("rules", "list"), ("rules", "show")} <= set(
        COMMANDS
    )


def test_the_app_speaks_one_vocabulary() -> None:
    assert vocabulary_faults(COMMAND, OPTIONS, EXIT_CODES, FORMATS) == []


def test_the_profile_filter_and_the_rules_are_two_names() -> None:
    def taking(name: str) -> set[str]:
        return {" ".join(p) for p, c in COMMANDS.items() for q in c.params if name in long_names(q)}

    takes = {name: taking(name) for name in ("--profile", "--rules")}
    assert takes["--profile"] == FILTERED
    assert takes["--rules"] == {"score", "validate", "ingest", "replay", "simulate", "import"}


@pytest.mark.parametrize("path", [(), ("rules",), *COMMANDS], ids=lambda p: " ".join(p) or "xuezhan")
def test_every_help_ends_with_the_exit_code_table(path: tuple[str, ...]) -> None:
    shown = runner.invoke(app, [*path, "--help"])
    assert shown.exit_code == 0, shown.output
    text = flat(shown.stdout)
    assert flat(EXIT_EPILOG) in text, f"{' '.join(path)} --help lacks the exit-code table"
    assert text.index("Exit codes:") > text.index("--help")  # after the options: the end of the help


def test_the_readme_table_is_the_registry() -> None:
    assert readme_exit_codes(README.read_text(encoding="utf-8")) == list(EXIT_CODES)


# ---------------------------------------------------------------------------------------------- the walker can fail
def fake_app(*, json_flag: bool = False, bad_format: bool = False, other_profile: bool = False) -> Any:
    """A two-command app built as cli.py builds its own, with one planted fault when asked."""
    fake = typer.Typer()

    @fake.command("one", epilog=EXIT_EPILOG)
    def one(
        profile: Annotated[str | None, cli._option("--profile")] = None,
        fmt: Annotated[Literal["table", "json"], typer.Option("--format", help="Output format.")] = "table",
    ) -> None:
        """One."""

    if json_flag:

        @fake.command("two", epilog=EXIT_EPILOG)
        def two(as_json: Annotated[bool, typer.Option("--json", help="JSON.")] = False) -> None:
            """Two."""

    elif bad_format:

        @fake.command("two", epilog=EXIT_EPILOG)
        def two_format(
            fmt: Annotated[Literal["table", "xml"], typer.Option("--format", help="Output format: xml.")] = "table",
        ) -> None:
            """Two."""

    elif other_profile:

        @fake.command("two")  # no epilog either
        def two_profile(
            profile: Annotated[str, typer.Option("--profile", help="Rule profile to score by.")] = "chengdu",
        ) -> None:
            """Two."""

    else:

        @fake.command("two", epilog=EXIT_EPILOG)
        def two_plain(profile: cli.ProfileOption = None) -> None:
            """Two."""

    return typer.main.get_command(fake)


FAKE_OPTIONS = {"--profile": OPTIONS["--profile"], "--format": "Output format"}


def test_a_clean_fake_app_passes() -> None:
    assert vocabulary_faults(fake_app(), FAKE_OPTIONS, EXIT_CODES, FORMATS) == []


def test_the_walker_finds_a_json_flag() -> None:
    faults = vocabulary_faults(fake_app(json_flag=True), FAKE_OPTIONS, EXIT_CODES, FORMATS)
    assert "two: --json (output is chosen by --format)" in faults


def test_the_walker_finds_a_format_outside_the_three() -> None:
    faults = vocabulary_faults(fake_app(bad_format=True), FAKE_OPTIONS, EXIT_CODES, FORMATS)
    assert faults == ["two: --format offers ['table', 'xml'], not a choice of ['table', 'csv', 'json']"]


def test_the_walker_finds_a_second_meaning_and_a_missing_exit_table() -> None:
    faults = vocabulary_faults(fake_app(other_profile=True), FAKE_OPTIONS, EXIT_CODES, FORMATS)
    assert any(f.startswith("two: --profile means 'Rule profile to score by.'") for f in faults), faults
    assert any(f.startswith("two: its help lacks exit code 2") for f in faults), faults
    unregistered = vocabulary_faults(fake_app(), {"--format": "Output format"}, EXIT_CODES, FORMATS)
    assert "--profile is taken by one, two with no registered meaning" in unregistered
    stale = vocabulary_faults(fake_app(), {**FAKE_OPTIONS, "--nothing": "x"}, EXIT_CODES, FORMATS)
    assert "--nothing is registered but no command takes it" in stale


def test_the_readme_check_finds_a_changed_row() -> None:
    text = README.read_text(encoding="utf-8")
    code, meaning = EXIT_CODES[1]
    changed = text.replace(f"| {code} | {meaning} |", f"| {code} | something else |")
    assert readme_exit_codes(changed) != list(EXIT_CODES)
    assert readme_exit_codes(text.replace(f"| {code} | {meaning} |\n", "")) != list(EXIT_CODES)


# ---------------------------------------------------------------------------------------------- exit 2, everywhere
# What each command needs besides the option under test ({tmp}: a folder; {file}: a regular file, {wh}: a
# warehouse path that does not exist). A command added to the app without a line here fails the test below.
NEEDS: dict[str, list[str]] = {
    "score": ["111m444m789m456p7p", "--win", "7p"],
    "validate": ["{file}"],
    "ingest": ["{file}", "--warehouse", "{tmp}/wh"],
    "compact": ["--warehouse", "{wh}"],
    "stats": ["--warehouse", "{wh}"],
    "report": ["--warehouse", "{wh}", "--out", "{tmp}/site"],
    "audit": ["--warehouse", "{wh}"],
    "collusion": ["--warehouse", "{wh}"],
    "info-cheats": ["--warehouse", "{wh}"],
    "think-time": ["--warehouse", "{wh}"],
    "assist": ["--warehouse", "{wh}"],
    "review": ["--warehouse", "{wh}"],
    "deals": ["--warehouse", "{wh}"],
    "eval-collusion": ["--quick"],
    "eval-info-cheats": [],
    "eval-deals": [],
    "eval-think-time": [],
    "eval-assist": [],
    "simulate": ["--hands", "1", "--out", "{tmp}/s.jsonl"],
    "import": ["{file}", "--from", "salasasa", "-o", "{tmp}/o.jsonl"],
    "replay": ["h1", "{file}"],
    "export": ["--to", "mjai", "-o", "{tmp}/o.mjson", "--warehouse", "{wh}"],
    "rules list": [],
    "rules show": ["chengdu"],
    "check": ["--warehouse", "{wh}"],
    "findings": ["--warehouse", "{wh}"],
    "case open": ["pair:a+b", "--warehouse", "{wh}", "--reviewer", "r"],
    "case confirm": ["case-x", "--warehouse", "{wh}", "--reviewer", "r"],
    "case dismiss": ["case-x", "--warehouse", "{wh}", "--reviewer", "r"],
    "case appeal": ["case-x", "--warehouse", "{wh}", "--reviewer", "r"],
    "case reopen": ["case-x", "--warehouse", "{wh}", "--reviewer", "r"],
    "case note": ["case-x", "--warehouse", "{wh}", "--reviewer", "r", "--note", "n"],
    "case pack": ["case-x", "--warehouse", "{wh}", "--reviewer", "r", "--out", "{tmp}/pack"],
    "case list": ["--warehouse", "{wh}"],
}
# A value every command taking the option must refuse with exit 2 (a usage error, before any work).
BAD_VALUES = {
    "--format": "xml",
    "--profile": "nosuch",
    "--rules": "nosuch",
    "--fdr": "0",
    "--tz": "Mars/Olympus",
    "--since": "yesterday",
    "--until": "2026-13-45",
    "--top": "-1",
    "--min-hands": "0",
    "--workers": "0",
    "--engine": "nosuch",
    "--master": "local[2]",  # without --engine spark
}


def test_every_command_is_in_the_table_of_needs() -> None:
    assert set(NEEDS) == {" ".join(p) for p in COMMANDS}


def filled(args: list[str], tmp_path: Path) -> list[str]:
    (tmp_path / "file.jsonl").write_text("{}\n")
    values = {"tmp": str(tmp_path), "file": str(tmp_path / "file.jsonl"), "wh": str(tmp_path / "no-warehouse")}
    return [a.format(**values) for a in args]


def refused(args: list[str]) -> tuple[int, str, str]:
    result = runner.invoke(app, args)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("xuezhan: ")]
    return result.exit_code, result.stdout, lines[0] if len(lines) == 1 else result.stderr


BAD = [
    (command, option, value)
    for command, cmd in sorted((" ".join(p), c) for p, c in COMMANDS.items())
    for option, value in BAD_VALUES.items()
    if any(option in long_names(param) for param in cmd.params)
]


@pytest.mark.parametrize(("command", "option", "value"), BAD, ids=[f"{c} {o} {v}" for c, o, v in BAD])
def test_a_bad_option_value_exits_2(command: str, option: str, value: str, tmp_path: Path) -> None:
    code, stdout, line = refused([*command.split(), *filled(NEEDS[command], tmp_path), option, value])
    assert code == 2, line
    assert stdout == ""
    assert option in line or "Invalid value" in line, line  # the line names what was wrong, not something else
    assert not (tmp_path / "wh").exists() and not (tmp_path / "site").exists()


def test_the_bad_values_reach_every_command_that_takes_them() -> None:
    commands = {c for c, o, _ in BAD if o == "--profile"}
    assert commands == FILTERED
    assert {c for c, o, _ in BAD if o == "--fdr"} == {
        "collusion",
        "info-cheats",
        "think-time",
        "deals",
        "eval-collusion",
        "eval-info-cheats",
        "eval-deals",
        "eval-think-time",
        "assist",
        "eval-assist",
    }


@pytest.mark.parametrize("fdr", ["0", "1", "-0.5", "1.5"])
@pytest.mark.parametrize("command", ["collusion", "eval-deals"])
def test_fdr_has_the_same_bounds_everywhere(command: str, fdr: str, tmp_path: Path) -> None:
    code, _, line = refused([command, *filled(NEEDS[command], tmp_path), "--fdr", fdr])
    assert (code, line) == (2, f"xuezhan: --fdr must be in (0, 1), got {float(fdr)}")


WAREHOUSE_COMMANDS = sorted(
    " ".join(p) for p, c in COMMANDS.items() if any("--warehouse" in long_names(q) for q in c.params)
)


@pytest.mark.parametrize("command", [c for c in WAREHOUSE_COMMANDS if c != "ingest"])  # ingest creates it
def test_a_missing_warehouse_exits_2(command: str, tmp_path: Path) -> None:
    args = filled(NEEDS[command], tmp_path)
    if command == "replay":
        args = ["h1", "--warehouse", str(tmp_path / "no-warehouse")]
    assert "--warehouse" in args
    code, stdout, line = refused([*command.split(), *args])
    assert code == 2, line
    assert stdout == "" and "no-warehouse" in line, line


MISSING_INPUT = {
    "validate": ["{tmp}/missing.jsonl"],
    "ingest": ["{tmp}/missing.jsonl", "--warehouse", "{tmp}/wh"],
    "import": ["{tmp}/missing.csv", "--from", "sheet", "-o", "{tmp}/o.jsonl"],
    "replay": ["h1", "{tmp}/missing.jsonl"],
    "export": ["{tmp}/missing.jsonl", "--to", "mjai", "-o", "{tmp}/o.mjson"],
    "score": ["--batch", "{tmp}/missing.jsonl"],
}


def test_every_command_reading_files_is_checked() -> None:
    def reads_files(command: Any) -> bool:
        return any(q.param_type_name == "argument" and q.name in ("paths", "path") for q in command.params)

    takes_paths = {" ".join(p) for p, c in COMMANDS.items() if reads_files(c)}
    assert takes_paths | {"score"} == set(MISSING_INPUT)


@pytest.mark.parametrize("command", sorted(MISSING_INPUT))
def test_a_missing_input_file_exits_2(command: str, tmp_path: Path) -> None:
    code, stdout, line = refused([command, *filled(MISSING_INPUT[command], tmp_path)])
    assert code == 2, line
    assert stdout == "" and "missing" in line, line
    assert not (tmp_path / "wh").exists()


# ---------------------------------------------------------------------------------------------- csv and json agree
@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("vocabulary")
    for args in (
        ["simulate", "--hands", "120", "--players", "6", "--seed", "5", "--out", str(root / "r.jsonl"), "--quiet"],
        ["ingest", str(root / "r.jsonl"), "--warehouse", str(root / "wh"), "--workers", "1", "--quiet"],
    ):
        done = subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return root / "wh"


# command: (its options to screen a small warehouse, the JSON's items, an item's key, the csv columns of the key)
SCREENS: dict[str, tuple[list[str], Any, Any, list[str]]] = {
    "collusion": (["--min-hands", "1"], lambda doc: doc["pairs"], lambda i: i["players"], ["player_a", "player_b"]),
    "info-cheats": (["--min-discards", "1", "--min-waits", "1"], lambda doc: doc, lambda i: [i["player"]], ["player"]),
    "deals": (["--min-hands", "1"], lambda doc: doc, lambda i: [i["kind"], i["group"]], ["kind", "group"]),
}


@pytest.mark.parametrize("command", sorted(SCREENS))
def test_a_screens_csv_is_its_json_one_row_each(command: str, warehouse: Path) -> None:
    import csv
    import io
    import json

    options, items, key, columns = SCREENS[command]
    args = [command, "--warehouse", str(warehouse), *options]
    as_json = runner.invoke(app, [*args, "--format", "json"])
    as_csv = runner.invoke(app, [*args, "--format", "csv"])
    assert as_json.exit_code == as_csv.exit_code == 0, as_csv.output
    expected = items(json.loads(as_json.stdout))
    header = next(csv.reader(io.StringIO(as_csv.stdout)))
    assert len(header) == len(set(header)) and set(columns) <= set(header)  # a header row of distinct names
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert expected and len(rows) == len(expected)
    for row, item in zip(rows, expected, strict=True):
        assert [row[c] for c in columns] == key(item)
        assert row["flagged"] == str(item["flagged"]).lower()
