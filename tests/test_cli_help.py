"""Every command, argument and option of ``xuezhan`` explains itself (as sqlite-utils checks its own): a user
reading ``--help`` never meets a bare name. Choices are typed, so ``--help`` lists them and a wrong value is a
usage error (exit 2) before any work."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def _commands() -> list[tuple[tuple[str, ...], object]]:
    """(path, click command) of every leaf command."""
    out = []

    def walk(command: object, path: tuple[str, ...]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, (*path, name))
        else:
            out.append((path, command))

    walk(typer.main.get_command(app), ())
    return out


COMMANDS = _commands()


def test_every_command_is_found() -> None:
    names = {path for path, _ in COMMANDS}
    assert {("validate",), ("ingest",), ("stats",), ("report",), ("audit",), ("rules", "show")} <= names


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_command_and_parameter_has_help(path: tuple[str, ...], command: object) -> None:
    assert (getattr(command, "help", None) or "").strip(), f"{' '.join(path)} has no help text"
    for param in command.params:  # type: ignore[attr-defined]
        if param.name == "help":
            continue
        assert (getattr(param, "help", None) or "").strip(), f"{' '.join(path)}: {param.name} has no help text"
    shown = runner.invoke(app, [*path, "--help"])
    assert shown.exit_code == 0
    for param in command.params:  # type: ignore[attr-defined]
        for flag in getattr(param, "opts", []):
            if flag.startswith("--"):
                assert flag in shown.stdout, f"{' '.join(path)} --help does not show {flag}"


@pytest.mark.parametrize(
    "args",
    [
        ["stats", "--by", "weekday"],
        ["stats", "--format", "xml"],
        ["audit", "--format", "xml"],
        ["collusion", "--format", "xml"],
        ["ingest", "x.jsonl", "--engine", "dask"],
    ],
)
def test_choices_are_refused_before_any_work(args: list[str], tmp_path: Path) -> None:
    result = runner.invoke(app, [*args, "--warehouse", str(tmp_path / "none")])
    assert result.exit_code == 2, result.output
    assert "Invalid value" in result.output
    assert not (tmp_path / "none").exists()
