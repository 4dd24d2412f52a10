"""The ``xuezhan`` command line: thin typer commands over the ``pipeline`` library.

Each command turns domain errors into one line on stderr (``xuezhan: ...``) and an exit code of the one table,
:data:`EXIT_CODES` (README.md and every ``--help`` print it): 0 done, 1 done and the input fell short (a losing
hand, an invalid record, a rejected line, filters that keep no hand), 2 could not run (a bad option, a path that
cannot be read or written, a full disk, an empty warehouse, interrupted). Never a traceback: :class:`_Guarded`
turns what a command lets through into that one line. One vocabulary: an option name several commands take has
one meaning, :data:`OPTIONS` (tests/test_cli_vocabulary.py walks every command).
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import signal
import sys
import threading

INTERRUPTED = "interrupted; run again"  # what a command stopped by Ctrl-C or SIGTERM says (exit 2)


def _stopped_early(_signum: int, _frame: object) -> None:
    """Ctrl-C or SIGTERM while the command line loads (nothing written yet): the one line, exit 2."""
    sys.stderr.write(f"xuezhan: {INTERRUPTED}\n")
    sys.stderr.flush()
    os._exit(2)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in a command like Ctrl-C (so that what it was writing is tidied the same way)."""


def _terminate(_signum: int, _frame: object) -> None:
    raise _Terminated


if "pytest" not in sys.modules:  # the imports below take a second or two (a test runner keeps its own Ctrl-C)
    signal.signal(signal.SIGINT, _stopped_early)
    signal.signal(signal.SIGTERM, _stopped_early)

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from typer._click.core import Context  # typer's own click (typer >= 0.29)
from typer._click.exceptions import ClickException, UsageError
from typer.core import TyperGroup

import pipeline
from pipeline import disputes
from pipeline.analytics import groups
from pipeline.codes import CODES
from pipeline.memory import polars_returns_freed_memory
from pipeline.rules import (
    NotAWin,
    RuleSetError,
    TileError,
    WinHand,
    convention,
    load_ruleset,
    profile_names,
    read_profile,
    score,
)
from pipeline.rules.ruleset import Override, switch_doc, switch_names
from pipeline.rules.tiles import kind_of, parse_tiles

if TYPE_CHECKING:
    from pipeline.analytics.health import Thresholds
    from pipeline.engines import Loaded
    from pipeline.formats import BadLine

# Before any command loads Polars: what it frees goes back to the system at once (the report's later pages no
# longer peak on what the earlier ones kept)
polars_returns_freed_memory()

# An output that cannot take more bytes: stdout on a full disk (ENOSPC), a closed pipe (EPIPE), ...
_OUTPUT_ERRNOS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT})


class _Guarded(TyperGroup):
    """The command group, made to keep the promise of the module: one ``xuezhan: ...`` line, never a traceback.

    A usage error (a bad option value, a missing argument) is one line instead of a usage panel; an
    ``OSError`` a command lets through (the disk is full, a folder cannot be created, stdout is closed) is
    one line and exit 2; so is Ctrl-C or SIGTERM, at any point (``interrupted; run again``). Stdout is
    flushed before the command returns, so that a full disk or a closed pipe shows up here and not as an
    error while Python shuts down."""

    def invoke(self, ctx: Context) -> Any:
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()
        except OSError as exc:
            if exc.errno == errno.EPIPE and exc.filename is None:  # `xuezhan validate ... | head -1`: the reader
                _os_message(exc)  # has what it wanted; no complaint (as any Unix filter), exit 2
                raise typer.Exit(2) from None
            raise fail(_os_message(exc)) from None
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM (_Terminated): what the command wrote is tidied by then
            raise fail(INTERRUPTED) from None
        except Exception as exc:
            if type(exc).__name__ != "InterruptException":  # DuckDB's Ctrl-C inside a query
                raise
            raise fail(INTERRUPTED) from None

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        if threading.current_thread() is threading.main_thread():  # Ctrl-C and SIGTERM unwind the command
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, _terminate)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # bare `xuezhan` or `xuezhan rules`: the help
                if exc.format_message().strip():  # (rich has printed it already)
                    exc.show()
                sys.exit(exc.exit_code)
            hint = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
            typer.echo(f"xuezhan: {exc.format_message().replace(chr(10), ' ')}{hint}", err=True)
            sys.exit(exc.exit_code)
        except ClickException as exc:
            typer.echo(f"xuezhan: {exc.format_message().replace(chr(10), ' ')}", err=True)
            sys.exit(exc.exit_code)
        except (typer.Abort, KeyboardInterrupt):  # Ctrl-C or SIGTERM while the arguments are read
            typer.echo(f"xuezhan: {INTERRUPTED}", err=True)
            sys.exit(2)
        sys.exit(code if isinstance(code, int) else 0)


def _os_message(exc: OSError) -> str:
    """One line for an ``OSError``; a broken stdout is pointed at /dev/null so that exit does not raise again."""
    what = exc.strerror or type(exc).__name__
    if exc.filename is None and exc.errno in _OUTPUT_ERRNOS:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a real file (a test runner's buffer)
            pass
        return f"cannot write the output: {what}"
    where = f"{exc.filename}: " if exc.filename is not None else ""
    return f"{where}{what}"


app = typer.Typer(
    name="xuezhan",
    cls=_Guarded,
    help="Audit and analyse Sichuan blood-battle mahjong (四川麻将·血战到底) records.",
    no_args_is_help=True,
    add_completion=False,
)
rules_app = typer.Typer(help="Rule profiles: list them, show their switches and sources.", no_args_is_help=True)
# (the exit codes' epilog, EXIT_EPILOG, is set on the groups and every command at the end of this module)
app.add_typer(rules_app, name="rules")
case_app = typer.Typer(
    help="Cases: what a reviewer decided about a finding (open, confirm, dismiss, appeal), kept in the warehouse; "
    "a dismissed finding stays hidden from `xuezhan findings` and the report until its evidence grows.",
    no_args_is_help=True,
)
app.add_typer(case_app, name="case")


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"xuezhan: {message}", err=True)
    return typer.Exit(code)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 finding``, ``2 findings``, ``0 findings``."""
    return f"{n} {_word(n, word, words)}"


def _word(n: float, word: str, words: str | None = None) -> str:
    return word if n == 1 else words or word + "s"


def _write_data(text: str) -> None:
    """Write a data format (CSV) to stdout byte for byte: ``typer.echo`` strips what looks like a terminal
    escape sequence when stdout is not a terminal, which would change the ids inside the cells."""
    sys.stdout.write(text)


def _emit(
    fmt: str, answer: dict[str, Any], *, csv: Callable[[dict[str, Any]], str], table: Callable[[dict[str, Any]], str]
) -> None:
    """Print ``answer`` as ``fmt`` asks: json as it is, csv byte for byte, a table for people."""
    if fmt == "json":
        typer.echo(json.dumps(answer, ensure_ascii=False))
    elif fmt == "csv":
        _write_data(csv(answer))
    else:
        typer.echo(table(answer))


def _write_csv(columns: Sequence[str], rows: Iterator[Sequence[object]] | list[Sequence[object]]) -> None:
    """A CSV table on stdout, byte for byte: a header row, then one row per item (none: an empty cell; a bool:
    true or false, as the JSON says it)."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else str(v).lower() if isinstance(v, bool) else v for v in row])
    _write_data(buffer.getvalue())


def _shown(value: object) -> str:
    """A value from the records (an id, a message quoting one) as the table formats print it: ``–`` for none,
    control and format characters (a terminal escape, a bidirectional override) as ``\\uXXXX``
    (:func:`pipeline.text.printable`)."""
    from pipeline.text import printable

    return "–" if value is None else printable(value)


def _version() -> str:
    """The installed package's version, else the one pyproject.toml next to this file declares."""
    from importlib import metadata

    try:
        return metadata.version("xuezhan")
    except metadata.PackageNotFoundError:
        import tomllib

        try:
            with open(Path(__file__).with_name("pyproject.toml"), "rb") as f:
                return str(tomllib.load(f)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"xuezhan {_version()} (engine: {pipeline.engine()})")
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and the engine, and exit."
        ),
    ] = False,
) -> None:
    """Audit and analyse Sichuan blood-battle mahjong (四川麻将·血战到底) records."""
    _quiet_fonts(quiet=False)
    note = pipeline.engine_note()
    if note.startswith("fallback"):  # one line per command, on stderr: the answers are the same, only slower
        typer.echo(f"warning: the replay engine runs as pure Python, several times slower ({note})", err=True)


def _quiet_fonts(*, quiet: bool) -> None:
    """Matplotlib's font look-ups log to stderr (``findfont: Failed to find font weight normal for DejaVu Sans
    Light``, ``findfont: Font family ... not found``) when the report's font check tries faces a system lacks:
    noise to a user, since the missing CJK font is reported by the report itself (and ``make demo``). Those
    lines are always dropped; with ``--quiet`` every font-manager warning is (such as the one-off "building the
    font cache")."""
    import logging

    logger = logging.getLogger("matplotlib.font_manager")
    if not any(isinstance(f, _NoFindfont) for f in logger.filters):
        logger.addFilter(_NoFindfont())
    if quiet:
        logger.setLevel(logging.ERROR)


class _NoFindfont:
    def filter(self, record: Any) -> bool:
        return not str(record.msg).startswith("findfont")


def _output_dir(path: Path, option: str, folder: Path | None = None) -> None:
    """Create the output folder ``folder`` (default ``path``, the value of ``option``), or fail with one line
    saying why it cannot be."""
    folder = path if folder is None else folder
    what = f"{option} {path}" + ("" if folder == path else f": its folder {folder}")
    if folder.exists() and not folder.is_dir():
        raise fail(f"{what} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(f"{what} cannot be created: {exc.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise fail(f"{what} is not writable")


def _output_file(path: Path, option: str) -> None:
    """Make sure the output file ``path`` can be written (its folder exists or is created, it is no folder)."""
    if path.is_dir():
        raise fail(f"{option} {path} is a folder, not a file")
    _output_dir(path, option, path.parent)


def _records_in(warehouse: Path) -> None:
    """Fail (exit 2) when there is no warehouse at ``warehouse`` or it holds no records: an analysis of
    nothing would print (or write) empty tables that look like an answer."""
    import duckdb

    from pipeline.analytics.queries import connect

    try:
        with connect(warehouse) as con:
            row = con.execute("SELECT count(*) FROM hands").fetchone()
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    except duckdb.Error as exc:
        raise fail(f"cannot read the warehouse {warehouse}: {str(exc).splitlines()[0]}") from None
    if not row or not row[0]:
        raise fail(f"no records in the warehouse {warehouse} (nothing was stored: see its rejects)")


# ---------------------------------------------------------------------------------------------- the vocabulary
# One exit-code table for every command (README.md, "Exit codes"; every --help ends with it).
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "done: every check passed, or the analysis ran (what a screen finds is its output, not a failure)"),
    (
        1,
        "done, and the input fell short: a record invalid, a line rejected or skipped, a hand that does not win, "
        "nothing stored or written, or nothing selected (filters that keep no hand, a player with no hand); "
        "check: a warning",
    ),
    (
        2,
        "could not run: a usage error (an unknown option, a value out of range such as an unknown profile name "
        "or an --fdr outside (0, 1)), a missing input file, folder, hand or warehouse, an output that cannot be "
        "written, or interrupted; check: an error (a scheduler acts on 1 and 2 alike)",
    ),
)
EXIT_EPILOG = "Exit codes:\n\n" + "\n\n".join(f"{code}  {meaning}" for code, meaning in EXIT_CODES)

CACHE_HELP = (
    "Keep each population's games and warehouse in this folder and read them from it next time instead of "
    "simulating again (a population is named by its settings and the simulator's and rules' sources: a changed "
    "simulator simulates again)."
)

# Every option name that more than one command takes, with its one meaning: each such option's help starts with
# it (tests/test_cli_vocabulary.py walks every command). Build them with _option, or the aliases below.
OPTIONS: dict[str, str] = {
    "--warehouse": "Warehouse directory",
    "--profile": "Only hands of this rule profile",
    "--rules": "The rules to judge or play by: a profile name (xuezhan rules list) or a JSON ruleset object",
    "--since": "Only hands played on or after this date or time",
    "--until": "Only hands played up to this date (the whole day) or before this time",
    "--table": "Only hands played at this table",
    "--player": "Only the hands this player sat in",
    "--tz": "Read times in this time zone (an IANA name such as Asia/Shanghai, or UTC)",
    "--format": "Output format",
    "--fdr": "False discovery rate (Benjamini–Yekutieli), in (0, 1)",
    "--top": "Only the first N",
    "--min-hands": "Screen only what has at least N hands",
    "--quiet": "No progress bar",
    "--out": "Where to write",
    "--workers": "Processes run at once",
    "--fresh": "Replay every hand now, even those `xuezhan review` stored (by default their stored counts are read "
    "back: the same figures, without the replays' cost)",
    "--seed": "Random seed",
    "--hands": "How many hands to play",
    "--replicates": "Populations per cell (seeds)",
    "--honest": "Honest populations",
    "--players": "Size of the player pool the tables are filled from",
    "--notice": "Every simulated player's chance of counting each copy in view on the table when it weighs its "
    "discards by live tiles (1: every copy, as a calculator counts; a person misses some; default: its style's, 1)",
    "--intensity": "Share of a cheat's hands it cheats in (repeat the option)",
    "--yardstick": "Measure agreement with this engine instead of the reference policy, on the turns (discards and "
    "kongs): `lookahead` (the built-in sampling look-ahead, the simulator's followers' engine), "
    "`lookahead:samples=48,horizon=6` (other settings of it: another version), or `package.module:name` (an "
    "engine of your own: a callable (state, seat, rng) returning the options best first). It finds the followers "
    "of that engine or of one much like it, not of any engine",
    "--cache": CACHE_HELP,
    "--que": "定缺, the declared void suit",
    "--reviewer": "Who takes the action (kept with it in the case log)",
    "--note": "The reviewer's note (kept with the action)",
    "--mask": "Mask the evidence pack for a blind review",
    # \\[ keeps rich's markup from taking [spark] for a style tag and printing "xuezhan"
    "--engine": "Where the heavy work runs: local (this machine: ingest's process pool, the screens' DuckDB), or "
    "spark (a Spark cluster, or Spark in local mode; needs pip install xuezhan\\[spark])",
    "--master": "Spark master URL with --engine spark (default: spark-submit's, else local[*])",
    "--pack": "Write evidence packs (each hand replayed, docs/REPLAY.md) into this folder",
    "--thresholds": "TOML file of ingest-health thresholds over the shipped ones (pipeline/analytics/health.toml: "
    "its keys and their meaning)",
}
FORMATS = ("table", "csv", "json")  # the only --format choices; a command offers those that make sense for it


def _option(name: str, detail: str = "", *aliases: str, **kwargs: Any) -> Any:
    """``typer.Option(name)`` with its registered meaning (:data:`OPTIONS`) as the start of its help."""
    return typer.Option(name, *aliases, help=OPTIONS[name] + detail, **kwargs)


def _fdr_in_range(value: float) -> float:
    """Every --fdr: in (0, 1). At 0 a screen flags nothing whatever the data (its "0 flagged" would read as
    clean), at 1 it flags every test (a q-value is never above 1): neither is a screen."""
    if not 0.0 < value < 1.0:
        raise fail(f"--fdr must be in (0, 1), got {value}")
    return value


# The filters of the analysis commands (pipeline/analytics/scope.py): one Scope, applied by the connection.
_ZONE = "each record's local time, or --tz's"
SinceOption = Annotated[
    str | None,
    _option(
        "--since",
        f" (2026-11-01, 2026-11-01T20:00, or with an offset 2026-11-01T20:00:00+08:00); a date or a time "
        f"without offset is in {_ZONE}.",
    ),
]
UntilOption = Annotated[str | None, _option("--until", "; read as --since is.")]
TableOption = Annotated[str | None, _option("--table", " (table_id).")]
ProfileOption = Annotated[str | None, _option("--profile", " (chengdu; see xuezhan rules list).")]
TzOption = Annotated[
    str | None,
    _option(
        "--tz",
        ": dates and months in this zone instead of each record's own offset (a record without one reads as UTC).",
    ),
]
PlayerFilter = Annotated[str | None, _option("--player", ".")]
RulesOption = Annotated[str | None, _option("--rules", " (default: each record's own ruleset).")]
FdrOption = Annotated[float, _option("--fdr", ".", callback=_fdr_in_range)]
QuietOption = Annotated[bool, _option("--quiet", ".")]
WarehouseIn = Annotated[Path, _option("--warehouse", " made by xuezhan ingest.")]
TableJson = Literal["table", "json"]
TableCsvJson = Literal["table", "csv", "json"]
FormatOption = Annotated[TableCsvJson, _option("--format", ": table, csv or json.")]
FormatNoCsv = Annotated[TableJson, _option("--format", ": table or json.")]
CacheOption = Annotated[Path | None, _option("--cache")]
Engine = Literal["local", "spark"]
EngineOption = Annotated[Engine, _option("--engine", ".")]
ScreenEngineOption = Annotated[
    Engine,
    _option(
        "--engine",
        ". With spark, the screen's one pass over the big tables runs on Spark, its statistics here (README, "
        "Beyond one machine).",
    ),
]
MasterOption = Annotated[str | None, _option("--master", ".")]
OutJson = Annotated[Path | None, _option("--out", ": the results as JSON, besides the table.")]
# the eval-* commands' screen level and output, one definition for all of them
EvalFdr = Annotated[float, _option("--fdr", ": the screen runs at it.", callback=_fdr_in_range)]
EvalFormat = Annotated[
    TableJson, _option("--format", ": table, or json (what --out writes) on stdout; the progress goes to stderr.")
]


def _scope(
    *,
    since: str | None = None,
    until: str | None = None,
    table: str | None = None,
    player: str | None = None,
    profile: str | None = None,
    tz: str | None = None,
) -> Any:
    """The :class:`~pipeline.analytics.scope.Scope` of the options, or one line and exit 2 when they cannot be
    read (a date that does not parse, an unknown time zone, --since after --until, a profile no record can
    name: as every command's --profile, a usage error)."""
    from pipeline.analytics.scope import Scope, ScopeError

    if profile is not None and profile not in profile_names():
        raise fail(f"--profile {profile!r}: unknown profile (known: {', '.join(profile_names())})")
    try:
        return Scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    except ScopeError as exc:
        raise fail(str(exc)) from None


def _hands_in_scope(warehouse: Path, scope: Any) -> int:
    """The stored hands in ``scope`` (after :func:`_records_in`): none is one line and exit 1 (the filters
    left nothing to analyse); an unknown time zone one line and exit 2."""
    from dataclasses import replace

    from pipeline.analytics.queries import connect
    from pipeline.analytics.scope import ScopeError

    try:
        with connect(warehouse, scope=scope, warn=False) as con:
            row = con.execute("SELECT count(*) FROM hands").fetchone()
    except ScopeError as exc:
        raise fail(str(exc)) from None
    hands = int(row[0]) if row else 0
    if not hands:
        if scope.player is not None and not replace(scope, player=None).filters:
            raise fail(f"no hands of player {scope.player!r} in {warehouse}", code=1)
        raise fail(f"no stored hand of {warehouse} is in scope ({scope.describe()})", code=1)
    return hands


def _spark_master(engine: Engine, master: str | None) -> None:
    """``--master`` means something with ``--engine spark`` only: given without it, a usage error (it would be
    ignored, and the work would run here while the user thinks it runs on the cluster)."""
    if master is not None and engine != "spark":
        raise fail(f"--master {master}: a Spark master, for --engine spark only (--engine is {engine})")


@contextmanager
def _heavy_pass(con: Any, warehouse: Path, engine: Engine, master: str | None, command: str) -> Iterator[Any]:
    """Where a screen's heavy pass runs (:class:`pipeline.sql.Models`): ``None`` (on ``con``, DuckDB) for local,
    Spark SQL over the snapshot of ``con`` for spark (:mod:`pipeline.analytics.spark`); pyspark or Java
    missing is one line and exit 2."""
    if engine == "local":
        yield None
        return
    from contextlib import ExitStack

    from pipeline.analytics.spark import spark_models

    with ExitStack() as stack:
        try:
            models = stack.enter_context(spark_models(con, warehouse, master=master, app=f"xuezhan {command}"))
        except RuntimeError as exc:  # no pyspark (SparkEngine's message), or Spark could not start (no Java)
            raise fail(f"--engine spark: {exc}") from None
        yield models


def _scope_line(scope: Any) -> list[str]:
    """The text outputs' first line under a filter (:func:`pipeline.analytics.render.scope_lines`)."""
    from pipeline.analytics.render import scope_lines

    return scope_lines(scope.as_dict())


@app.command("score")
def score_command(
    hand: Annotated[str | None, typer.Argument(help="Concealed tiles before the win, e.g. 11144478m45677p.")] = None,
    win: Annotated[str | None, typer.Option("--win", help="The winning tile, e.g. 7p.")] = None,
    que: Annotated[str | None, _option("--que", ": m, p or s.")] = None,
    melds: Annotated[
        str, typer.Option("--melds", help="Melds: pong:5m, kong:7p (direct), ckong:3s (concealed), akong:2m (added).")
    ] = "",
    self_drawn: Annotated[bool, typer.Option("--self-drawn", help="自摸: self-drawn win.")] = False,
    after_kong: Annotated[bool, typer.Option("--after-kong", help="杠上花: win on a kong replacement.")] = False,
    kong_discard: Annotated[
        bool, typer.Option("--kong-discard", help="杠上炮: win on the discard after a kong.")
    ] = False,
    rob_kong: Annotated[bool, typer.Option("--rob-kong", help="抢杠: win robbing an added kong.")] = False,
    last_tile: Annotated[bool, typer.Option("--last-tile", help="海底: win on the last tile.")] = False,
    heavenly: Annotated[bool, typer.Option("--heavenly", help="天胡: the dealer's dealt hand wins.")] = False,
    earthly: Annotated[bool, typer.Option("--earthly", help="地胡: win on the first discard or draw.")] = False,
    rules_: Annotated[str, _option("--rules", ".")] = "chengdu",
    cap: Annotated[int | None, typer.Option("--cap", help="Fan cap (封顶) override; 0 = none.")] = None,
    fmt: FormatNoCsv = "table",
    batch: Annotated[
        str | None, typer.Option("--batch", help="Score one JSON request per line of FILE ('-' = stdin).")
    ] = None,
) -> None:
    """Score one winning hand, or a batch of disputed hands.

    Exit 0 when the hand wins (in a batch, JSON lines whatever --format: every line was readable), 1 when it
    does not (a batch line was unreadable), 2 on a usage error.
    """
    as_json = fmt == "json"
    if batch is not None:
        raise typer.Exit(_score_batch(batch))
    if hand is None or win is None:
        raise fail("give the concealed tiles and --win TILE, or --batch FILE")
    flags = {"self_drawn": self_drawn, "after_kong": after_kong, "heavenly": heavenly, "earthly": earthly}
    spec = _rules_option(rules_) or {"profile": rules_}  # a name or the JSON object docs/RULES.md shows
    try:
        rules = load_ruleset(
            spec if len(spec) > 1 else str(spec["profile"]), **({"cap": cap} if cap is not None else {})
        )
        contradiction = disputes.flag_contradiction(flags, rules, cli=True)
        if contradiction:
            raise fail(contradiction)
        win_hand = WinHand.of(
            parse_tiles(hand),
            win_tile=kind_of(win),
            melds=disputes.parse_melds(melds),
            que=que,
            self_drawn=self_drawn,
            after_kong=after_kong,
            kong_discard=kong_discard,
            rob_kong=rob_kong,
            last_tile=last_tile,
            heavenly=heavenly,
            earthly=earthly,
        )
    except (TileError, RuleSetError) as exc:
        raise fail(str(exc)) from None
    fault = disputes.suit_fault(win_hand, rules, cli=True)
    if fault:
        raise fail(fault)
    try:
        result = score(win_hand, rules)
    except NotAWin as exc:
        if as_json:
            answer = disputes.score_answer(None)
            answer["reason"] = str(exc)
            typer.echo(json.dumps(answer, ensure_ascii=False))
        else:
            typer.echo(f"not a win: {exc}")
        raise typer.Exit(1) from None
    except TileError as exc:
        raise fail(str(exc)) from None
    if as_json:
        answer = disputes.score_answer(result)
        answer["profile"] = rules.profile
        answer["convention"] = convention(rules)
        answer["fan_base"] = rules.fan_base
        typer.echo(json.dumps(answer, ensure_ascii=False))
        return
    typer.echo(f"win: {result.title_zh} ({result.title_en})")
    for p in result.patterns:
        typer.echo(f"  {p.fan:>+3} fan  {p.name_zh} ({p.name_en})")
    capped = f", capped at {rules.cap}" if result.capped else ""
    typer.echo(f"  total {result.fan} fan{capped} → {result.points} points")
    if result.per_payer != result.points:
        typer.echo(f"  each payer pays {result.per_payer} (自摸加底: points + {rules.base} base)")
    typer.echo(f"  profile {rules.profile}; {convention(rules)}")


def _score_batch(path: str) -> int:
    """Answer each line of ``path``, read as ingest reads (lines bounded by its line cap, never held whole)."""
    from pipeline.ingest.read import MAX_LINE, read_lines

    if path != "-" and not Path(path).is_file():
        raise fail(f"cannot read {path}: no such file")
    code = 0
    for line in read_lines([path]):
        if line.fault is not None or line.too_long:
            why = line.fault or _too_long(line.size, MAX_LINE)
            answers = [(disputes.score_answer(None, f"line {line.source_line}: {why}"), False)]
        else:
            answers = list(disputes.score_lines([line.data.decode("utf-8", "replace")], first=line.source_line))
        for answer, readable in answers:
            typer.echo(json.dumps(answer, ensure_ascii=False))
            if not readable:
                code = 1
    return code


def _rules_option(value: str | None) -> dict[str, object] | None:
    """``--rules NAME`` or ``--rules '{"profile": "app", "cap": 4}'``, checked before any record is read
    (:class:`~pipeline.rules.ruleset.Override`): a typo is a usage error, not a run of rejects."""
    if value is None:
        return None
    obj: object = {"profile": value}
    if value.lstrip().startswith("{"):
        import orjson

        try:  # orjson: nesting past 1,024 levels is an error, not a RecursionError
            obj = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise fail(f"--rules is not a JSON object: {exc}") from None
        if not isinstance(obj, dict):
            raise fail("--rules must be a name or a JSON object")
    try:
        Override.parse(obj)  # type: ignore[arg-type]
    except RuleSetError as exc:
        raise fail(f"--rules: {exc}") from None
    return obj  # type: ignore[return-value]


@app.command("validate")
def validate_command(
    paths: Annotated[
        list[str], typer.Argument(help="Files or folders of .jsonl, .jsonl.gz, .jsonl.zst; '-' for stdin.")
    ],
    fmt: Annotated[
        TableJson, _option("--format", ": table (a summary), or json (one JSON object per record, in input order).")
    ] = "table",
    rules_: RulesOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Stop at the first issue (per record, and the whole run).")
    ] = False,
    show: Annotated[int, typer.Option("--show", help="How many issues the summary lists.")] = 20,
    quiet: QuietOption = False,
) -> None:
    """Replay every record through the rules and report every difference.

    The summary's first line accounts for every line as ingest would store it: records (the first line of each
    hand_id), lines that are not a record (ingest's rejects), and repeated hand_ids (ingest's duplicates, or a
    conflict reject when the content differs). Exit 0 when every record is valid, 1 when any is not, 2 on a
    usage error.
    """
    from pipeline.ingest.read import RawLine, find_files, input_bytes, read_lines
    from pipeline.validate import check_sessions, commitments_line, hand_key, validate_lines

    as_json = fmt == "json"
    override = _rules_option(rules_)
    missing = [p for p in paths if p != "-" and not Path(p).exists()]
    if missing:
        raise fail(f"no such file or folder: {', '.join(missing)}")
    if not find_files(paths):
        raise fail("no record files (.jsonl, .jsonl.gz, .jsonl.zst) under the given paths")
    tally = _LineTally()
    by_code: Counter[str] = Counter()
    by_level: Counter[str] = Counter()
    unchecked: Counter[str] = Counter()
    walls: Counter[str] = Counter()  # wall commitments: proved by their revealed seed, or only stored
    first: list[str] = []
    keys = []
    with _progress("validating", quiet, size=input_bytes(paths) or None) as bar:
        for out in validate_lines(read_lines(paths, on_bytes=bar.read), profile=override, strict=strict):
            bar.count(1)
            v, item = out.validation, out.line
            assert isinstance(item, RawLine)
            unread = item.fault is not None or item.too_long or v.record is None or out.obj is None
            tally.add(None if unread else v.hand_id, item.sha256, v.ok)
            keys.append(hand_key(v))
            if v.level is not None:
                by_level[v.level] += 1
                unchecked.update(v.not_checked)
            if v.wall_commitment is not None:
                walls[v.wall_commitment] += 1
            for issue in v.issues:
                by_code[issue.code] += 1
                if len(first) < show:
                    where = f" event {issue.event}" if issue.event is not None else ""
                    first.append(
                        f"{_shown(item.source_file)}:{item.source_line} {_shown(v.hand_id)}{where}: {issue.code} "
                        f"{_shown(issue.message)}"
                    )
            if as_json:
                typer.echo(json.dumps(v.as_dict(), ensure_ascii=False))
            if strict and not v.ok:
                break
    for s in check_sessions(keys):
        by_code[s.issue.code] += 1
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "hand_id": s.hand_id,
                        "ok": s.issue.severity != "error",
                        "session": True,
                        "issues": [s.issue.as_dict()],
                    },
                    ensure_ascii=False,
                )
            )
        elif len(first) < show:
            first.append(f"{_shown(s.hand_id)}: {s.issue.code} {_shown(s.issue.message)}")
    if not as_json:
        typer.echo(tally.text())
        if walls:  # a stacked deal proved hand by hand, not only inferred from statistics
            typer.echo(commitments_line(walls))
        if unchecked or set(by_level) - {"full"}:  # what the records could not support, never passed in silence
            typer.echo("levels of record: " + ", ".join(f"{level} {n}" for level, n in sorted(by_level.items())))
            typer.echo("not checked (records):")
            for what, n in unchecked.most_common():
                typer.echo(f"  {n:>6}  {what}")
        if by_code:
            typer.echo("issues by code:")
            for code, n in by_code.most_common():
                typer.echo(f"  {code:<24} {n}")
            typer.echo("first issues:")
            for line in first:
                typer.echo(f"  {line}")
    session_errors = any(CODES[c].severity == "error" for c in by_code if c.startswith("SESSION_"))
    if not tally.lines:
        raise fail("no records in the given files (only blank lines, or empty)", code=1)
    raise typer.Exit(1 if tally.bad or session_errors else 0)


class _LineTally:
    """``validate``'s count of its input lines, in ingest's terms (:class:`pipeline.ingest.run.IngestStats`):
    ``lines = records + not records + repeats``, records split into valid and invalid."""

    def __init__(self) -> None:
        self.lines = self.valid = self.invalid = self.not_records = 0
        self.repeats = self.repeats_invalid = self.repeats_other = 0
        self._seen: dict[str, str] = {}  # hand_id → the digest of its first line

    def add(self, hand_id: str | None, digest: str, ok: bool) -> None:
        """One line: ``hand_id`` None when it is not a record (unreadable, not JSON, not an xzlog/1 record)."""
        self.lines += 1
        if hand_id is None:
            self.not_records += 1
        elif hand_id in self._seen:
            self.repeats += 1
            self.repeats_invalid += not ok
            self.repeats_other += self._seen[hand_id] != digest
        else:
            self._seen[hand_id] = digest
            self.valid += ok
            self.invalid += not ok

    @property
    def records(self) -> int:
        return self.valid + self.invalid

    @property
    def bad(self) -> bool:
        return bool(self.invalid or self.not_records or self.repeats_invalid)

    def text(self) -> str:
        """``lines 2002 = records 2000 (valid 1949, invalid 51) + not records 0 + repeated hand_ids 2 (1 invalid,
        0 with other content)``: ingest of the same lines stores the records, rejects the lines that are not
        records and those with other content, and counts the other repeats as duplicates."""
        return (
            f"lines {self.lines} = records {self.records} (valid {self.valid}, invalid {self.invalid}) "
            f"+ not records {self.not_records} + repeated hand_ids {self.repeats} "
            f"({self.repeats_invalid} invalid, {self.repeats_other} with other content)"
        )


@app.command("ingest")
def ingest_command(
    paths: Annotated[
        list[str], typer.Argument(help="Files or folders of .jsonl, .jsonl.gz, .jsonl.zst; '-' for stdin.")
    ],
    warehouse: Annotated[Path, _option("--warehouse", " (created when missing).")],
    workers: Annotated[int | None, _option("--workers", " (default: all cores).", min=1)] = None,
    engine: EngineOption = "local",
    master: MasterOption = None,
    rules_: RulesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Validate records and store them in a Parquet + DuckDB warehouse; every line is accounted for.

    Exit 0 when every line was stored, 1 when some lines were rejected (or there were no records),
    2 on a usage error (a missing input, a warehouse that cannot be created or written).
    """
    from pipeline.ingest.read import find_files, input_bytes
    from pipeline.ingest.run import ingest
    from pipeline.ingest.warehouse import WarehouseBusy

    _spark_master(engine, master)
    override = _rules_option(rules_)
    if all(p != "-" and not Path(p).exists() for p in paths):
        raise fail(f"no such file or folder: {', '.join(paths)}")
    if not find_files(paths):
        raise fail("no record files (.jsonl, .jsonl.gz, .jsonl.zst) under the given paths")
    # A missing path among others becomes an INGEST_READ reject: the run still accounts for it.
    _output_dir(warehouse, "--warehouse")
    options = {"master": master} if master else {}
    try:
        with _progress("ingesting", quiet, size=input_bytes(paths) or None) as bar:
            stats = ingest(
                paths,
                warehouse,
                workers=workers,
                engine=engine,
                profile=override,
                on_lines=bar.count,
                on_bytes=bar.read,
                engine_options=options,
            )
    except (WarehouseBusy, ValueError) as exc:
        raise fail(str(exc)) from None
    typer.echo(stats.text())
    typer.echo(f"warehouse: {warehouse / 'warehouse.duckdb'}")
    if not stats.lines_read:
        raise fail("no records in the given files (only blank lines, or empty)", code=1)
    if not stats.records_stored and not stats.duplicates:
        raise fail("no records stored: every line was rejected (see rejects by code)", code=1)
    if stats.rejects:
        raise typer.Exit(1)


@app.command("compact")
def compact_command(
    warehouse: WarehouseIn,
) -> None:
    """Rewrite a warehouse's committed batches into one file per table, so that queries open a few large files
    instead of hundreds of small ones. Crash-safe (a kill leaves the old batches or the compacted ones, never
    both); the contents, the run counts and what a new ingest takes as already stored stay the same. Ingest
    does this by itself at the end of a run with many batches; this is for older warehouses.

    Exit 0 when done (also when there was nothing to compact), 2 on a usage error (no warehouse, another
    ingest writing to it).
    """
    from pipeline.ingest.warehouse import Warehouse, WarehouseBusy

    if not (warehouse / "hands").is_dir() or not any((warehouse / "hands").glob("part-*.parquet")):
        raise fail(f"no warehouse at {warehouse} (run xuezhan ingest first)")
    try:
        with Warehouse(warehouse) as wh:  # an older layout is upgraded in place (manifest, new tables' files)
            folded = wh.compact(threads=os.cpu_count() or 1)
    except WarehouseBusy as exc:
        raise fail(str(exc)) from None
    typer.echo(f"compacted {plural(folded, 'batch', 'batches')}" if folded else "nothing to compact")


@app.command("stats")
def stats_command(
    warehouse: WarehouseIn,
    player: Annotated[
        str | None,
        _option("--player", ": their figures, their own wins by fan and pattern (the table figures too)."),
    ] = None,
    by: Annotated[
        groups.Split,
        typer.Option(
            "--by",
            help=f"Split each player's figures by {groups.choices()} (opponent, with --player: head to head, one "
            "row per opponent).",
        ),
    ] = "all",
    fmt: FormatOption = "table",
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
    engine: Annotated[
        Engine,
        _option(
            "--engine",
            ". With spark, the per-player counts (the one pass over player_hands, wins and events) run on Spark, "
            "the rest here (README, Beyond one machine); not with --by month or opponent.",
        ),
    ] = "local",
    master: MasterOption = None,
) -> None:
    """Player and table statistics with sample sizes and 95% intervals (definitions: schemas/METRICS.md).
    --by opponent --player P: P's head-to-head table, one row per opponent."""
    from pipeline.analytics import queries
    from pipeline.analytics.render import head_to_head_csv, head_to_head_table, stats_csv, stats_table

    _spark_master(engine, master)
    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    if by == "opponent" and player is None:
        raise fail("--by opponent needs --player (whose opponents)")
    if engine == "spark" and by in ("month", "opponent"):
        raise fail(f"--by {by} runs on --engine local only (README, Beyond one machine)")
    _records_in(warehouse)
    _hands_in_scope(warehouse, scope)
    try:
        if by == "opponent":
            assert player is not None
            with queries.connect(warehouse, scope=scope) as con:
                h2h = {"scope": scope.as_dict(), **queries.head_to_head(con, player)}
        else:
            with (
                queries.connect(warehouse, scope=scope) as con,
                _heavy_pass(con, warehouse, engine, master, "stats") as m,
            ):
                answer = {"scope": scope.as_dict(), **queries.stats(con, by=by, player=player, models=m)}
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    if by == "opponent":
        _emit(fmt, h2h, csv=head_to_head_csv, table=head_to_head_table)
        return
    if player is not None and not answer["players"]:
        raise fail(f"no hands of player {player!r} in {warehouse}", code=1)
    _emit(fmt, answer, csv=stats_csv, table=stats_table)


ThresholdsOption = Annotated[Path | None, _option("--thresholds", ".")]


def _thresholds(path: Path | None) -> Thresholds:
    """The health thresholds of ``--thresholds`` (the shipped ones without it); exit 2 on a file that cannot be
    read or has a key or value it must not have."""
    from pipeline.analytics.health import ThresholdsError, load_thresholds

    try:
        return load_thresholds(path)
    except ThresholdsError as exc:
        raise fail(f"--thresholds: {exc}") from None


@app.command("check")
def check_command(
    warehouse: WarehouseIn,
    thresholds: ThresholdsOption = None,
    run: Annotated[str | None, typer.Option("--run", help="Check this ingest run (default: the last).")] = None,
    fmt: Annotated[TableCsvJson, _option("--format", ": table, csv (the runs per table) or json.")] = "table",
) -> None:
    """The health of an ingest run against the runs before it, for a scheduler: volume, invalid and reject
    rates, each table's rate of wrong settlements, new issue codes and players, freshness. Exit 0 ok, 1 a
    warning, 2 an error (or the check could not run)."""
    from pipeline.analytics.health import check
    from pipeline.analytics.queries import connect
    from pipeline.analytics.render import health_csv, health_table

    limits = _thresholds(thresholds)
    if not (warehouse / "hands").is_dir():
        raise fail(f"no warehouse at {warehouse} (run xuezhan ingest first)")
    with connect(warehouse) as con:
        try:
            health = check(con, limits, run=run)
        except KeyError:
            raise fail(f"no ingest run {run} in {warehouse} (xuezhan check --format json lists them)") from None
    _emit(fmt, health.as_dict(), csv=health_csv, table=health_table)
    raise typer.Exit(health.exit_code)


@app.command("report")
def report_command(
    warehouse: WarehouseIn,
    out: Annotated[
        Path, _option("--out", ": the output directory (index.html, player and quality pages, charts/*.png).")
    ],
    player: Annotated[
        list[str] | None,
        typer.Option("--page", help="A player to give a page (repeatable); default: every player."),
    ] = None,
    top: Annotated[
        int | None,
        _option(
            "--top",
            " players by hands get a page (without --page); the directory lists every player.",
            min=0,
        ),
    ] = None,
    min_hands: Annotated[int, _option("--min-hands", " (collusion page: pairs' shared hands).", min=1)] = 200,
    quiet: Annotated[bool, _option("--quiet", ", no step lines, no font warnings.")] = False,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
    thresholds: Annotated[
        Path | None, _option("--thresholds", " (the health page judges the last run by them).")
    ] = None,
) -> None:
    """HTML dashboards: what needs attention first (each finding with its case state), the player directory and a
    page per player, data quality, the ingest health (xuezhan check and each table's trend across runs), the audit,
    the collusion and information-cheat screens; every chart also as a PNG. --since, --until, --table
    and --profile restrict every page to those hands (--page names the players who get a page: to look at the
    hands one player sat in, see stats --player)."""
    from dashboards.site import build_report

    _quiet_fonts(quiet=quiet)
    scope = _scope(since=since, until=until, table=table, profile=profile, tz=tz)
    limits = _thresholds(thresholds)
    _records_in(warehouse)  # before any page is written
    _hands_in_scope(warehouse, scope)
    _output_dir(out, "--out")
    try:
        index = build_report(
            warehouse,
            out,
            players=player or None,
            top_players=top,
            min_hands=min_hands,
            on_step=None if quiet else (lambda step: typer.echo(step, err=True)),
            scope=scope,
            thresholds=limits,
        )
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    except ValueError as exc:
        raise fail(str(exc), code=1) from None
    typer.echo(f"wrote {index}")


@app.command("audit")
def audit_command(
    warehouse: WarehouseIn,
    fmt: FormatOption = "table",
    top: Annotated[int, _option("--top", " findings in the table (json and csv list all).", min=0)] = 30,
    hands: Annotated[
        list[str] | None, typer.Option("--hand", help="Only this hand's findings (repeat for several).")
    ] = None,
    pack: Annotated[
        Path | None,
        _option("--pack", ": with --hand, each of those hands' dispute pack."),
    ] = None,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    player: PlayerFilter = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
) -> None:
    """Every scoring difference and rule violation, with the hand and event that prove it, ranked by money.
    With --hand and --pack: a dispute pack per hand (the replay as text and HTML, the record's line as its
    source holds it, the issue rows), for settling an argument."""
    from pipeline.analytics.queries import connect
    from pipeline.analytics.scales import amount, scales
    from pipeline.audit.scoring import FINDING_FIELDS, GROUPS, Audit, audit

    if pack is not None and not hands:
        raise fail("--pack needs --hand (the hands to pack)")
    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    _records_in(warehouse)
    if pack is not None:
        assert hands is not None
        _dispute_packs(warehouse, hands, pack)
        return
    _hands_in_scope(warehouse, scope)
    try:
        with connect(warehouse, scope=scope) as con:
            result = audit(con)
            mixes = scales(con).line()
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    if hands:
        import polars as pl

        result = Audit(result.findings.filter(pl.col("hand_id").is_in(hands)))
    if fmt == "json":
        typer.echo(json.dumps(result.as_json(), ensure_ascii=False))
        return
    if fmt == "csv":
        from pipeline.analytics.render import csv_frame

        _write_data(csv_frame(result.findings.select(*FINDING_FIELDS, "table_id", "month")).write_csv())
        return
    findings = result.findings
    for line in _scope_line(scope):
        typer.echo(line)
    if mixes is not None:
        typer.echo(mixes)
    typer.echo(
        f"{plural(findings.height, 'finding')} in {plural(findings['hand_id'].n_unique(), 'hand')}, "
        f"{result.stake_text()}"
    )
    in_bases = result.mixed  # money of several bases: added up and ranked in bases
    for by in GROUPS:
        typer.echo(f"\nby {by}:")
        for row in result.grouped(by).head(10).iter_rows(named=True):
            name = row[GROUPS[by]]
            money = (
                f"{amount(row['bases']):>8} {_word(row['bases'], 'base')}"
                if in_bases
                else f"{row['money']:>8} {_word(row['money'], 'point')}"
            )
            typer.echo(
                f"  {_shown(name):<24} {row['findings']:>6} {_word(row['findings'], 'finding')}"
                f" {row['hands']:>6} {_word(row['hands'], 'hand')} {money}"
            )
    mistakes = result.mistakes()  # each wrong payment once, its fan/points findings as its reasons
    typer.echo(f"\ntop {min(top, mistakes.height)} by money{' in bases' if in_bases else ''} (each mistake once):")
    for row in mistakes.head(top).iter_rows(named=True):
        where = f" event {row['event']}" if row["event"] is not None else ""
        who = f" {_shown(row['player'])}" if row["player"] else ""
        why = f" (reasons: {row['reasons']})" if row["reasons"] else ""
        money = f"{row['money']:>6}" + (f" at base {row['base']:,}".ljust(15) if in_bases else "")
        typer.echo(
            f"  {money}  {_shown(row['hand_id'])}{where}{who}: {_shown(row['code'])} {_shown(row['message'])}{why}"
        )


def _dispute_packs(warehouse: Path, hands: list[str], folder: Path) -> None:
    from dashboards.pages.replay import replay_html
    from pipeline.analytics.queries import connect
    from pipeline.audit.replay import HandNotFound, hand_issues, stored_record, write_pack
    from pipeline.validate import validate

    _output_dir(folder, "--pack")
    with connect(warehouse) as con:
        for hand_id in hands:
            try:
                found = stored_record(con, hand_id)
            except HandNotFound as exc:
                raise fail(str(exc)) from None
            issues = hand_issues(con, hand_id)
            files = write_pack(folder, found, validate(found.record), issues, replay_html)
            typer.echo(f"{_shown(hand_id)}: {plural(len(issues), 'issue row')}; wrote {', '.join(map(str, files))}")


@app.command("collusion")
def collusion_command(
    warehouse: WarehouseIn,
    min_hands: Annotated[int, _option("--min-hands", " (pairs: shared hands).", min=1)] = 200,
    fdr: FdrOption = 0.05,
    fmt: Annotated[
        TableCsvJson,
        _option("--format", ": table, csv (the pairs, one row each) or json (pairs, teams, victims, signals, power)."),
    ] = "table",
    top: Annotated[int, _option("--top", " pairs in the table (csv and json list all).", min=0)] = 20,
    quiet: QuietOption = False,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    player: PlayerFilter = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
    engine: Annotated[
        Engine,
        _option(
            "--engine",
            ". With spark, the hands are read and counted in Spark tasks, a run of hands each, and every pass of "
            "the screen (the null's moments, the refit, the teams' rounds) runs there, its sums added here; the "
            "victim view and the statistics run here (README, Beyond one machine).",
        ),
    ] = "local",
    master: MasterOption = None,
) -> None:
    """Screen every pair of players for collusion, and every group of three as a group (teams); flagged pairs
    and reported teams come with the hands that prove it, then the victim view: who pays whom beyond what the
    opponent takes from the others at those tables, and what each player pays with a reported team at the
    table against without it (the table's lines), and what the screen can see at this warehouse's sizes (the
    power the evaluation measured: "0 flagged" is no evidence at that power, not "clean"). --format json:
    pairs, teams, victims, the signals and the power in one object. With a filter, the screen (its
    population rates too) is over the hands in scope only."""
    from pipeline.analytics.queries import connect, hands_by_level
    from pipeline.audit.collusion import levels_lines, screen_levels
    from pipeline.audit.screen import screen
    from pipeline.audit.victims import victim_view

    _spark_master(engine, master)
    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    _records_in(warehouse)
    _hands_in_scope(warehouse, scope)
    try:
        with (
            connect(warehouse, scope=scope) as con,
            _heavy_pass(con, warehouse, engine, master, "collusion") as models,
            _progress("collusion: reading the hands", quiet) as bar,
        ):
            fed = screen_levels({level: c["replayed"] for level, c in hands_by_level(con).items()})
            stage = ""

            def progress(step: str, done: int, total: int) -> None:
                nonlocal stage
                if step != stage:  # the pairs' hands (DuckDB's estimate), then the pairs
                    stage = step
                    label = "collusion: reading the hands" if step == "hands" else "collusion: screening pairs"
                    bar.stage(label, total=total, unit=step)
                bar.set(done, total)
                if step == "pairs" and 0 < total <= done:  # the groups of three come next: a bar with no end
                    stage = "groups"
                    bar.stage("collusion: screening groups of three", unit="groups")

            screened = screen(
                con, min_hands=min_hands, fdr=fdr, teams=True, progress=progress if bar.active else None, models=models
            )
            results = list(screened.pairs)
            teams = [t for t in screened.groups if len(t.players) >= 3]  # the pairs: the pair screen's lines above
            bar.stage("collusion: the victim view", unit="players")
            victims = victim_view(con, teams=[t.players for t in teams if t.reported], min_hands=min_hands, fdr=fdr)
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    from pipeline.audit.collusion import DIRECTION, flagged_groups, power_statement

    power = power_statement([r.shared_hands for r in results])
    if fmt == "csv":  # the pairs, as the table lists them (the signals' z each a column)
        names = sorted({k for r in results for k in r.signals})
        _write_csv(
            ["player_a", "player_b", "shared_hands", "score", "z", "p", "q", "flagged", "sitting_together_ratio"]
            + [f"z_{k}" for k in names],
            [
                [
                    *r.players,
                    r.shared_hands,
                    round(r.score, 4),
                    round(r.z, 4),
                    r.p,
                    r.q,
                    r.flagged,
                    r.seating.get("ratio"),
                    *(r.signals[k]["z"] if k in r.signals else None for k in names),
                ]
                for r in results
            ],
        )
        return
    if fmt == "json":
        reported_players = [t.players for t in teams if t.reported]
        doc = {
            "fdr": fdr,
            "min_hands": min_hands,
            "pairs": [r.as_dict() for r in results],
            "joined_by_flagged_pairs": [
                {"players": list(g.players), "flagged_pairs": g.flagged_pairs, "pairs": g.pairs}
                for g in flagged_groups(results, reported=reported_players)
            ],
            "teams": [t.as_dict() for t in teams],
            "victims": [v.as_dict() for v in victims],
            "signals": {
                name: {"direction": {1: "excess", -1: "deficit"}.get(DIRECTION.get(name, 0)), **entry}
                for name, entry in fed.items()
            },
            "power": power,
        }
        typer.echo(json.dumps(doc, ensure_ascii=False))
        return
    flagged = sum(r.flagged for r in results)
    for line in _scope_line(scope):
        typer.echo(line)
    typer.echo(
        f"{plural(len(results), 'pair')} with at least {plural(min_hands, 'shared hand')} screened; "
        f"{flagged} flagged at FDR {fdr}"
    )
    for line in levels_lines(fed):
        typer.echo(line)
    scored = ", ".join(f"{k} ({'excess' if v > 0 else 'deficit'})" for k, v in DIRECTION.items())
    typer.echo(f"scored, each one-sided, the largest with Šidák's correction: {scored}; the others reported")
    typer.echo(f"{'pair':<20}{'hands':>7}{'score':>8}{'p':>11}{'q':>9}  flag  signals (z)")
    for r in results[:top]:
        z = " ".join(f"{k}={v['z']:+.1f}" for k, v in r.signals.items())
        pair = " & ".join(_shown(p) for p in r.players)
        typer.echo(
            f"{pair:<20}{r.shared_hands:>7}{r.score:>8.2f}{r.p:>11.2e}{r.q:>9.3f}  "
            f"{'YES ' if r.flagged else '    '}  {z}  sit-together ×{r.seating['ratio']}"
        )
        for e in r.evidence:
            typer.echo(f"      {_shown(e.get('hand_id'))} event {_shown(e.get('event'))}: {_shown(e['why'])}")
    reported = [t for t in teams if t.reported]
    for g in flagged_groups(results, reported=[t.players for t in reported]):
        team = " & ".join(_shown(p) for p in g.players)
        typer.echo(f"joined by flagged pairs: {team} ({g.flagged_pairs} of their {g.pairs} pairs flagged)")
    typer.echo(
        f"groups of three screened as groups: {len(teams)}; {plural(len(reported), 'team')} reported at FDR {fdr}"
    )
    for t in reported:
        z = " ".join(f"{k}={v['z']:+.1f}" for k, v in t.signals.items())
        team = " & ".join(_shown(p) for p in t.players)
        typer.echo(f"team: {team}  {t.hands} hands  score {t.score:.2f}  p {t.p:.2e}  q {t.q:.3f}  {z}")
        for e in t.evidence:
            typer.echo(f"      {_shown(e.get('hand_id'))} event {_shown(e.get('event'))}: {_shown(e['why'])}")
    flagged_victims = [v for v in victims if v.flagged]
    typer.echo(f"victims (lose far more to someone than their other opponents take): {len(flagged_victims)}")
    for v in flagged_victims:
        for loss in v.losses:
            if loss.flagged:
                typer.echo(
                    f"victim: {_shown(v.player)} paid {_shown(loss.opponent)} {loss.net:+d} net over "
                    f"{plural(loss.hands, 'shared hand')}, {loss.excess:+.0f} beyond what that opponent takes "
                    f"from the others at those tables (z {loss.z:.1f}, q {loss.q:.3f})"
                )
        for tl in v.teams:
            if tl.flagged:
                team = " & ".join(_shown(p) for p in tl.team)
                typer.echo(
                    f"victim: {_shown(v.player)} pays {tl.with_per_hand:+.1f} per hand with two or more of {team} "
                    f"at the table ({tl.with_hands} hands), {tl.without_per_hand:+.1f} with none "
                    f"({tl.without_hands} hands) (z {tl.z:.1f}, q {tl.q:.3f})"
                )
    for line in power["text"]:
        typer.echo(line)


@app.command("info-cheats")
def info_cheats_command(
    warehouse: WarehouseIn,
    fdr: FdrOption = 0.05,
    min_discards: Annotated[
        int, typer.Option("--min-discards", min=1, help="Test players with at least N judged discards.")
    ] = 300,
    min_waits: Annotated[
        int, typer.Option("--min-waits", min=1, help="Test the waits of players with at least N judged waits.")
    ] = 30,
    fmt: FormatOption = "table",
    top: Annotated[int, _option("--top", " players in the table (csv and json list all).", min=0)] = 20,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    player: PlayerFilter = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
    engine: ScreenEngineOption = "local",
    master: MasterOption = None,
) -> None:
    """Screen every player for play that sees the other hands, on two signals: too few dangerous discards by
    choice (a tile an opponent could win on, thrown while a tile nobody could win on was as good), and waits
    chosen on the tiles the wall still holds (of ready discards whose waits the player sees as many copies of,
    the one with most copies left in the wall); each against the other players' spread (beta-binomial, leave
    one out), a player flagged on either (Benjamini–Yekutieli over both); hands of level full and dealt only.
    With a filter, over the hands in scope only."""
    from pipeline.analytics.queries import connect
    from pipeline.audit.anticipation import WaitsNotJudged, combine, screen_anticipation
    from pipeline.audit.information import screen_information

    _spark_master(engine, master)
    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    _records_in(warehouse)
    _hands_in_scope(warehouse, scope)
    with connect(warehouse, scope=scope) as con:
        try:
            waits = screen_anticipation(con, fdr=fdr, min_decisions=min_waits)
        except WaitsNotJudged as exc:
            raise fail(str(exc)) from None
        with _heavy_pass(con, warehouse, engine, master, "info-cheats") as models:
            dodges = screen_information(con, fdr=fdr, min_discards=min_discards, models=models)
    seers = combine(dodges, waits, fdr=fdr)
    if fmt == "csv":  # one row a player: the dodges' columns, then the waits' (wait_...)
        tail = ("expected", "p", "q")
        _write_csv(
            ["player", "flagged", "signals", "hands", "discards", "dangerous_by_choice", *tail]
            + [f"wait_{c}" for c in ("hands", "decisions", "hits", *tail)],
            [[s.player, s.flagged, " ".join(s.signals), *_seer_cells(s)] for s in seers],
        )
        return
    if fmt == "json":
        typer.echo(json.dumps([s.as_dict() for s in seers], ensure_ascii=False))
        return
    tested = sum(1 for r in dodges if r.p is not None)
    tested_waits = sum(1 for r in waits if r.p is not None)
    flagged = sum(s.flagged for s in seers)
    for line in _scope_line(scope):
        typer.echo(line)
    typer.echo(
        f"{plural(tested, 'player')} with at least {plural(min_discards, 'judged discard')} screened "
        f"({len(dodges) - tested} with fewer listed, not tested); {flagged} flagged at FDR {fdr}"
    )
    typer.echo(
        f"anticipation: {plural(tested_waits, 'player')} with at least {plural(min_waits, 'judged wait')} screened "
        f"({len(waits) - tested_waits} with fewer listed, not tested); a flag on either signal, BY over both"
    )
    typer.echo(
        f"{'player':<16}{'hands':>7}{'discards':>9}{'by choice':>10}{'expected':>10}{'p':>11}{'q':>9}"
        f"{'waits':>7}{'hits':>6}{'expected':>10}{'p':>11}{'q':>9}  flag"
    )
    for s in seers[:top]:
        d, a = s.dodges, s.anticipation
        hands = max((r.hands for r in (d, a) if r is not None), default=0)
        line = f"{_shown(s.player):<16}{hands:>7}"
        if d is None:
            line += f"{'–':>9}{'–':>10}{'–':>10}{'–':>11}{'–':>9}"
        else:
            line += f"{d.discards:>9}{d.dangerous_by_choice:>10}" + _tail(d.expected, d.p, s.q_dodges)
        if a is None:
            line += f"{'–':>7}{'–':>6}{'–':>10}{'–':>11}{'–':>9}"
        else:
            line += f"{a.decisions:>7}{a.hits:>6}" + _tail(a.expected, a.p, s.q_anticipation)
        typer.echo(f"{line}  YES ({', '.join(s.signals)})" if s.flagged else line)


THINK_MEANING = (
    "a flag: the player's think times follow the decisions' difficulty far less than the other players' do "
    "(a relay of a bot's moves, a bot with a fixed delay, a player who asks an engine on part of its decisions) — "
    "a reason to look at its decisions and times, not "
    "proof: an even-paced player, auto-play, a slow connection or a client that rounds times look flat too"
)


@app.command("think-time")
def think_time_command(
    warehouse: WarehouseIn,
    fdr: FdrOption = 0.05,
    fmt: FormatOption = "table",
    top: Annotated[int, _option("--top", " players in the table (csv and json list all).", min=0)] = 20,
    fresh: Annotated[bool, _option("--fresh", ".")] = False,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    player: PlayerFilter = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
) -> None:
    """Screen every player's decision times (the records' ms) against how hard each decision was: per player
    the correlation of the difficulty (the options the reference policy cannot call clearly worse than its first
    choice) with log(ms + 1), against the other players' (Fisher's z; a robust test first, then the mean and
    spread of the others it did not set apart, leave one out), one-sided p, Benjamini–Yekutieli over the players;
    a player with too few timed decisions (30) or a room of fewer than 6 is listed, not tested. What it can see
    here: each player's `flag r`, the r at or below which it would be flagged alone, and `ask`, the share of its
    decisions on which it could ask a bot and be flagged however long the asking took. The records that carry ms
    are read back from their sources and replayed, but for those `xuezhan review` stored (their timed decisions
    are read back: the same figures, a query). A flag is a reason to look, not proof. With a filter, over the
    hands in scope only. Exit 1 when no record carries decision times, or one could not be read back; 2 when the
    warehouse was written before decision times were kept."""

    from pipeline.analytics.export import Missing
    from pipeline.analytics.queries import connect
    from pipeline.audit.think import (
        MIN_DECISIONS,
        Times,
        decision_times,
        judge,
        reach,
        read_timed,
        stored_times,
        timed_hands,
    )
    from pipeline.ingest.warehouse import Warehouse
    from schemas.tables import TALLY_VERSION

    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    _records_in(warehouse)
    _hands_in_scope(warehouse, scope)
    with connect(warehouse, scope=scope) as con:
        counted, stored = stored_times(con) if not fresh else ({}, 0)
        hands = timed_hands(con, skip_version=None if fresh else TALLY_VERSION)  # the rest, replayed
    if not hands and not stored:
        if "ms" in Warehouse(warehouse).written_before().get("events", []):  # its records' times were not kept
            raise fail(
                f"nothing to screen: {warehouse} was written by an earlier release that did not keep decision times "
                "(events.ms): ingest the records again into a new warehouse to screen their times (xuezhan ingest "
                "FILES --warehouse NEW)",
                code=2,
            )
        where = " in scope" if scope.filters else f" in {warehouse}"
        raise fail(f"nothing to screen: no record{where} carries decision times (ms)", code=1)
    missing: list[Missing] = []
    times: Times = decision_times(read_timed(hands, missing), into=dict(counted))
    rows = judge(times, fdr=fdr)
    seen = reach(rows)
    for m in missing[:5]:
        typer.echo(f"warning: hand {_shown(m.hand.hand_id)} not screened: {_shown(m.reason)}", err=True)
    if len(missing) > 5:
        typer.echo(f"warning: {len(missing) - 5} more hands not screened", err=True)
    columns = ("player", "decisions", "median_ms", "r", "room_r", "z", "p", "q", "flagged", "flag_r", "ask_share")
    if fmt == "csv":
        _write_csv(columns, [[t.as_dict()[c] for c in columns] for t in rows])
    elif fmt == "json":
        doc = {
            "fdr": fdr,
            "hands": stored + len(hands),
            "stored": stored,
            "not_read": [{"hand_id": m.hand.hand_id, "reason": m.reason} for m in missing],
            "players": [t.as_dict() for t in rows],
            "reach": seen.as_dict(),
            "meaning": THINK_MEANING,
        }
        typer.echo(json.dumps(doc, ensure_ascii=False))
    else:
        tested = [t for t in rows if t.p is not None]
        for line in _scope_line(scope):
            typer.echo(line)
        typer.echo(
            f"{plural(stored + len(hands) - len(missing), 'hand')} with decision times replayed"
            + (f" ({stored} of them by `xuezhan review`, their stored times read)" if stored else "")
            + (f" ({len(missing)} could not be read back)" if missing else "")
            + f"; {plural(len(tested), 'player')} with at least {MIN_DECISIONS} timed decisions screened "
            f"({len(rows) - len(tested)} listed, not tested); {sum(t.flagged for t in rows)} flagged at FDR {fdr}"
        )
        typer.echo(
            f"{'player':<16}{'decisions':>10}{'median ms':>10}{'r':>7}{'room r':>8}{'z':>7}{'p':>11}{'q':>9}"
            f"{'flag r':>8}{'ask':>6}  flag"
        )
        for t in rows[:top]:
            line = f"{_shown(t.player):<16}{t.decisions:>10}{t.median_ms:>10.0f}"
            line += f"{t.r:>7.2f}" if t.r is not None else f"{'–':>7}"
            line += f"{t.room_r:>8.2f}" if t.room_r is not None else f"{'–':>8}"
            line += f"{t.z:>7.1f}" if t.z is not None else f"{'–':>7}"
            line += f"{t.p:>11.2e}" if t.p is not None else f"{'–':>11}"
            line += f"{t.q:>9.3f}" if t.q is not None else f"{'–':>9}"
            line += f"{t.flag_r:>8.2f}" if t.flag_r is not None else f"{'–':>8}"
            line += f"{t.ask_share:>6.0%}" if t.ask_share is not None else f"{'–':>6}"
            typer.echo(f"{line}  YES" if t.flagged else line)
        if seen.tested:
            if seen.ask_share_median is not None and seen.ask_share_min is not None:
                asking = (
                    f"; a player asking a bot (or a relay) on {seen.ask_share_median:.0%} of its decisions or more, "
                    "chosen without regard to their difficulty, would be flagged however long the asking took (`ask`: "
                    f"the median of those not flagged; {seen.ask_share_min:.0%} the least), on fewer mostly where the "
                    "asking takes a time unlike its own; one who asks on its hard decisions and takes longer over them "
                    "is not bounded by it"
                )
            elif seen.ask_of:
                asking = (
                    "; not half the players not flagged would be flagged however long the asking took, even asking "
                    "on every decision (`ask` –)"
                )
            else:
                asking = ""
            typer.echo(
                f"What it can see here: a player is flagged alone when the correlation of its times with the "
                f"decisions' difficulty is at or below `flag r` ({seen.flag_r_median:.2f}, the median of the "
                f"{seen.tested} tested; {seen.flag_r_min:.2f} to {seen.flag_r_max:.2f}); a relay's times follow "
                "difficulty not at all (r "
                + ("near 0: this room would flag one" if seen.flags_relay else "near 0: this room could not flag one")
                + f"){asking}. No flag is no evidence at this reach, not a clean room."
            )
        typer.echo(THINK_MEANING)
    if missing:
        raise typer.Exit(1)


def _yardstick(spec: str) -> Loaded:
    """The engine ``--yardstick`` names (:func:`pipeline.engines.load`: its ``name`` and ``decide``), or exit 2
    saying why."""
    from pipeline.engines import EngineSpecError, load

    try:
        return load(spec)
    except EngineSpecError as err:
        raise fail(f"--yardstick: {err}") from None


ASSIST_MEANING = (
    "a flag: the player agrees with the reference policy's first choice on ambiguous decisions far more than "
    "the room's players of its skill do (an engine followed) — a reason to look at its decisions, not proof: a "
    "player whose own style happens to be the policy's agrees more too"
)
ASSIST_ENGINE_MEANING = (
    "a flag: the player agrees with the engine's first choice on ambiguous turns far more than the room's players "
    "of its skill do (that engine, or one much like it, followed) — a reason to look at its decisions, not proof: "
    "it finds a follower of this engine, not of any engine; a player whose own style happens to be the engine's "
    "agrees more too"
)


@app.command("assist")
def assist_command(
    warehouse: WarehouseIn,
    fdr: FdrOption = 0.05,
    fmt: FormatOption = "table",
    top: Annotated[int, _option("--top", " players in the table (csv and json list all).", min=0)] = 20,
    per_player: Annotated[
        int | None,
        typer.Option(
            "--per-player",
            min=1,
            help="Review only each player's N newest hands (the others at their tables included): the review "
            "costs about 11 ms a hand compiled, 19 ms interpreted (1M hands: about 3 CPU-hours). Default: all.",
        ),
    ] = None,
    evidence: Annotated[
        int, typer.Option("--evidence", min=0, help="Telling decisions shown per flagged player (json: per player).")
    ] = 5,
    workers: Annotated[int, _option("--workers", ": reviews run at once.", min=1)] = 1,
    fresh: Annotated[bool, _option("--fresh", ".")] = False,
    engine: Annotated[
        str | None,
        _option(
            "--yardstick",
            ". Every hand is reviewed now (nothing stored is read): about 2 ms a decision asked of the built-in, "
            "about 0.12 s a hand (a room of 2,000 hands: 4 CPU-minutes).",
        ),
    ] = None,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    player: PlayerFilter = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
) -> None:
    """Screen every player for engine assistance: each hand with known tiles is read back and reviewed
    (the reference policy ranks every decision's options), each non-forced decision weighted by how ambiguous it
    was (near-equal options and one clearly best option weigh little); per player the weighted agreement with
    the policy's first choice on discards, the void and the exchange, against the room's players of the same
    skill (their agreement on the clear decisions), a one-sided p (the Bernoullis' sum, the other players'
    spread added, leave one out, read in Student's t), Benjamini–Yekutieli over the players. Evidence: the
    flagged players' most telling decisions, each replayable with `xuezhan replay HAND --warehouse W --review`.
    What it can see here: each player's `need` (the excess agreement at which it would be flagged alone) and
    the least share of the reference's own choices at which players of the room would be (json: `reach`).
    Cost: the hands `xuezhan review` stored are read back (a query); each other hand is reviewed now (about 11 ms
    compiled; --per-player and the filters bound it, --workers spreads it). A flag is a reason to look, not
    proof. Exit 1 when no hand has known tiles, or one could not be read back."""
    from pipeline.analytics.export import Missing
    from pipeline.analytics.queries import connect
    from pipeline.audit.assist import COLUMNS, MIN_CLEAR, MIN_DECISIONS, judge, reach, stored_room, tally
    from pipeline.audit.decisions import decision_hands, decision_rows
    from schemas.tables import TALLY_VERSION

    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    yardstick = "the reference policy"
    if engine is not None:
        engine = _yardstick(engine).name
        yardstick = f"the engine {engine}"
        fresh = True  # the stored counts are the reference's
    _records_in(warehouse)
    _hands_in_scope(warehouse, scope)
    with connect(warehouse, scope=scope) as con:
        room, stored = stored_room(con, per_player=per_player, evidence=evidence) if not fresh else ({}, 0)
        hands = decision_hands(con, per_player, skip_version=None if fresh else TALLY_VERSION)  # the rest
    if not hands and not stored:
        where = " in scope" if scope.filters else f" in {warehouse}"
        raise fail(f"nothing to screen: no hand{where} has known tiles (levels full, dealt, observer)", code=1)
    missing: list[Missing] = []
    room = tally(decision_rows(hands, missing, workers=workers, engine=engine), evidence=evidence, room=room)
    meaning = ASSIST_MEANING if engine is None else ASSIST_ENGINE_MEANING
    rows = judge(room, fdr=fdr, evidence=evidence)
    seen = reach(room, rows, fdr=fdr)
    for m in missing[:5]:
        typer.echo(f"warning: hand {_shown(m.hand.hand_id)} not screened: {_shown(m.reason)}", err=True)
    if len(missing) > 5:
        typer.echo(f"warning: {len(missing) - 5} more hands not screened", err=True)

    def replay(hand_id: str) -> str:
        also = "" if engine is None else f" --yardstick {shlex.quote(engine)}"
        return f"xuezhan replay {shlex.quote(hand_id)} --warehouse {shlex.quote(str(warehouse))} --review{also}"

    if fmt == "csv":
        _write_csv(COLUMNS, [[a.as_dict()[c] for c in COLUMNS] for a in rows])
    elif fmt == "json":
        doc = {
            "fdr": fdr,
            "yardstick": engine or "reference",
            "hands": stored + len(hands),
            "stored": stored,
            "per_player": per_player,
            "not_read": [{"hand_id": m.hand.hand_id, "reason": m.reason} for m in missing],
            "players": [
                {**a.as_dict(), "evidence": [{**e.as_dict(), "replay": replay(e.hand_id)} for e in a.evidence]}
                for a in rows
            ],
            "reach": seen.as_dict(),
            "meaning": meaning,
        }
        typer.echo(json.dumps(doc, ensure_ascii=False))
    else:
        tested = [a for a in rows if a.p is not None]
        for line in _scope_line(scope):
            typer.echo(line)
        typer.echo(
            f"{plural(stored + len(hands) - len(missing), 'hand')} reviewed"
            + (f" ({stored} of them by `xuezhan review`, their stored counts read)" if stored else "")
            + (f" ({len(missing)} could not be read back)" if missing else "")
            + (f" (each player's {per_player} newest)" if per_player else "")
            + f"; {plural(len(tested), 'player')} with at least {MIN_DECISIONS} tested and {MIN_CLEAR} clear "
            f"decisions screened ({len(rows) - len(tested)} listed, not tested); "
            f"{sum(a.flagged for a in rows)} flagged at FDR {fdr}; agreement with {yardstick}"
            + (" on the turns" if engine else "")
        )
        typer.echo(
            f"{'player':<16}{'hands':>7}{'tested':>8}{'weight':>8}{'agree':>7}{'expect':>8}{'clear':>7}{'z':>7}"
            f"{'p':>11}{'q':>9}{'need':>7}  flag"
        )
        for a in rows[:top]:
            line = f"{_shown(a.player):<16}{a.hands:>7}{a.tested:>8}{a.weight:>8.0f}"
            for x, width in ((a.agreement, 7), (a.expected, 8), (a.clear, 7)):
                line += f"{x:>{width}.3f}" if x is not None else f"{'–':>{width}}"
            line += f"{a.z:>7.1f}" if a.z is not None else f"{'–':>7}"
            line += f"{a.p:>11.2e}" if a.p is not None else f"{'–':>11}"
            line += f"{a.q:>9.3f}" if a.q is not None else f"{'–':>9}"
            line += f"{a.needed:>7.3f}" if a.needed is not None else f"{'–':>7}"
            typer.echo(f"{line}  YES" if a.flagged else line)
        if seen.tested:
            share = seen.share_median
            found = sorted(v for v in seen.shares.values() if v is not None)
            probes = [f"{100 * v:.0f}%" for v in found] + ["never"] * (len(seen.shares) - len(found))
            typer.echo(
                f"What it can see here: a player is flagged alone when its agreement exceeds its expected agreement "
                f"by `need` ({seen.needed_median:.3f}, the median of the {seen.tested} tested; "
                f"{seen.needed_min:.3f}–{seen.needed_max:.3f}). A player taking {yardstick}'s own first "
                + (
                    f"choice on {100 * share:.0f}% of its decisions would be flagged"
                    if share is not None
                    else "choice on every decision would not be flagged"
                )
                + f" (the median of {len(seen.shares)} of the room's players, each planted in turn: "
                + ", ".join(probes)
                + ("); an engine of its own gains less on each decision" if engine is None else ")")
                + ". No flag is no evidence at this reach, not a clean room."
            )
        for a in rows:
            if a.flagged and a.evidence:
                typer.echo(f"\n{_shown(a.player)}: the most telling agreed decisions (weight, the room's chance)")
                for e in a.evidence:
                    at = "the deal" if e.event is None else f"event {e.event}"
                    typer.echo(
                        f"  {_shown(e.hand_id)} {at} ({e.kind}): {e.chosen}, weight {e.weight:.2f}, "
                        f"room {e.room_p:.2f} — {replay(e.hand_id)}"
                    )
        typer.echo(meaning)
    if missing:
        raise typer.Exit(1)


@app.command("review")
def review_command(
    warehouse: WarehouseIn,
    workers: Annotated[int, _option("--workers", ": reviews run at once.", min=1)] = 1,
    fmt: FormatNoCsv = "table",
    quiet: QuietOption = False,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    player: PlayerFilter = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
) -> None:
    """Review every stored hand not yet reviewed (of those the filters keep) and store its players' decision
    tallies in the warehouse (decision_tallies), for stats and the report's player pages: efficiency-match rate,
    avoidable deal-ins, missed wins, late 定缺 (schemas/METRICS.md#decisions); and the engine-assistance screen's
    counts (decision_cells), which `xuezhan assist`, `findings` and the report read instead of reviewing the hand
    again; and each timed record's decisions by difficulty and time (decision_times), which `xuezhan think-time`
    reads instead of replaying it. Each hand whose tiles are known (levels full, dealt; an observer's own seat) is
    read back from its source and reviewed by the reference policy, once: a second run reviews only the hands
    ingested since (or reviewed by an older review version). Cost: about 11 ms a hand compiled, 19 ms
    interpreted, per worker.
    Committed as ingest commits (a kill keeps what was committed; run it again to finish). Exit 1 when some hand
    could not be read back (it is tried again next time), or no stored hand has known tiles; 2 when another
    process is writing to the warehouse."""
    from pipeline.audit.tallies import review_warehouse
    from pipeline.ingest.warehouse import WarehouseBusy

    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    _records_in(warehouse)
    _hands_in_scope(warehouse, scope)
    try:
        with _progress("reviewing", quiet) as bar:

            def found(n: int) -> None:
                bar.stage("reviewing", total=n)

            run = review_warehouse(warehouse, workers=workers, scope=scope, on_hands=bar.count, on_pending=found)
    except WarehouseBusy as exc:
        raise fail(str(exc)) from None
    from pipeline.analytics.queries import connect, review_coverage

    with connect(warehouse, scope=scope, warn=False) as con:
        covered = review_coverage(con)
    if fmt == "json":
        typer.echo(json.dumps({**run.as_dict(), "warehouse": covered}, ensure_ascii=False))
    else:
        per = f" ({1000 * run.cpu_seconds / run.reviewed:.1f} CPU ms a hand)" if run.reviewed else ""
        typer.echo(
            f"reviewed {plural(run.reviewed, 'hand')} of {run.pending} pending: {plural(run.rows, 'player-hand')} "
            f"stored in {plural(run.batches, 'batch', 'batches')}, {run.seconds:.1f} s, "
            f"{run.cpu_seconds:.1f} CPU s{per}"
        )
        for line in _scope_line(scope):
            typer.echo(line)
        typer.echo(
            f"{'in scope' if scope.filters else 'warehouse'}: {covered['reviewed']} of {covered['reviewable']} "
            f"reviewable hands replayed to the end are reviewed (version {covered['version']})"
            + (f"; {covered['other_version']} by an older version only" if covered["other_version"] else "")
        )
        for m in run.missing[:5]:
            typer.echo(f"warning: hand {_shown(m.hand.hand_id)} not reviewed: {_shown(m.reason)}", err=True)
        if len(run.missing) > 5:
            typer.echo(f"warning: {len(run.missing) - 5} more hands not reviewed", err=True)
    if run.missing:
        raise typer.Exit(1)
    if not covered["reviewable"]:
        where = "in scope" if scope.filters else f"in {warehouse}"
        raise fail(f"nothing to review: no hand {where} has known tiles (levels full, dealt, observer)", code=1)


def _seer_cells(s: Any) -> list[object]:
    """A player's info-cheats csv cells after the flag: the dodges' six, then the waits' six (empty: no line)."""
    d, a = s.dodges, s.anticipation
    cells: list[object] = [None] * 6 if d is None else [d.hands, d.discards, d.dangerous_by_choice]
    if d is not None:
        cells += [d.expected, d.p, s.q_dodges]
    cells += [None] * 6 if a is None else [a.hands, a.decisions, a.hits, a.expected, a.p, s.q_anticipation]
    return cells


def _tail(expected: float | None, p: float | None, q: float | None) -> str:
    """A screen's expected count, p and q as the info-cheats table prints them (– when not tested)."""
    return (
        (f"{expected:>10.1f}" if expected is not None else f"{'–':>10}")
        + (f"{p:>11.2e}" if p is not None else f"{'–':>11}")
        + (f"{q:>9.3f}" if q is not None else f"{'–':>9}")
    )


@app.command("deals")
def deals_command(
    warehouse: WarehouseIn,
    fdr: Annotated[float, _option("--fdr", " (per kind).", callback=_fdr_in_range)] = 0.05,
    min_hands: Annotated[int, _option("--min-hands", " (groups: dealt hands).", min=1)] = 20,
    kind: Annotated[
        list[str] | None,
        typer.Option("--kind", help="Only these kinds of group: player, seat, table, session (repeat the option)."),
    ] = None,
    fmt: FormatOption = "table",
    top: Annotated[int, _option("--top", " groups per kind in the table (csv and json list all).", min=0)] = 10,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    player: PlayerFilter = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
    engine: ScreenEngineOption = "local",
    master: MasterOption = None,
) -> None:
    """Screen players, table seats, tables and sessions for stacked deals: starting hands closer to ready than a
    fair wall deals (the sum of the deals' shanten against its exact distribution under fair shuffles); hands of
    level full and dealt only. With a filter, over the hands in scope only."""
    from contextlib import ExitStack

    from pipeline.analytics.queries import connect
    from pipeline.audit.deals import KINDS, NoDealScores, commitments, deal_screen

    _spark_master(engine, master)
    kinds = tuple(dict.fromkeys(kind or KINDS))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise fail(f"--kind: unknown {', '.join(unknown)} (known: {', '.join(KINDS)})")
    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    _records_in(warehouse)
    _hands_in_scope(warehouse, scope)
    with ExitStack() as stack:  # the screen's lines stay in its store: read back a few at a time
        con = stack.enter_context(connect(warehouse, scope=scope))
        models = stack.enter_context(_heavy_pass(con, warehouse, engine, master, "deals"))
        walls = commitments(con)
        try:
            screen = stack.enter_context(deal_screen(con, fdr=fdr, min_hands=min_hands, kinds=kinds, models=models))
        except NoDealScores as exc:
            raise fail(str(exc)) from None
        if fmt == "json":  # json.dumps of the list, written a line at a time
            first = True
            typer.echo("[", nl=False)
            for r in screen.results():
                typer.echo(("" if first else ", ") + json.dumps(r.as_dict(), ensure_ascii=False), nl=False)
                first = False
            typer.echo("]")
            return
        if fmt == "csv":  # one row a group, as the JSON's (its evidence hands left to json)
            columns = ["kind", "group", "hands", "shanten", "mean_shanten", "expected_mean", "z", "p", "q", "flagged"]
            columns += ["suited", "suited_expected"]
            _write_csv(columns, ([r.as_dict()[c] for c in columns] for r in screen.results()))
            return
        _deals_table(screen, walls, scope, fdr, min_hands, top)


def _deals_table(screen: Any, walls: Any, scope: Any, fdr: float, min_hands: int, top: int) -> None:
    """``deals``' table: the committed walls, then per kind how many groups were screened and flagged and its
    ``top`` lines (:class:`pipeline.audit.deals.DealScreen`), each flagged one with its best deals."""
    for line in _scope_line(scope):
        typer.echo(line)
    if walls.hands:  # walls committed before play: proved or disproved hand by hand, before any statistics
        typer.echo(walls.line())
        for status, hands in walls.faulty.items():
            typer.echo(f"  {status} ({walls.counts[status]}): {', '.join(_shown(h) for h in hands)}")
    if not any(c.groups for c in screen.counts):
        typer.echo(
            "no dealt hand to screen: deals are known in hands of level full and dealt only (and hands stored "
            "before ingest kept their deals' shanten have none: ingest their sources into a new warehouse)"
        )
        return
    typer.echo(
        "deals: one player's starting tiles in one hand; a player's and a seat's groups count one a hand, a "
        "table's and a session's one per seat (four a hand at a table of four)"
    )
    for c in screen.counts:
        typer.echo(
            f"{c.kind}: {c.tested} with at least {plural(min_hands, 'deal')} screened "
            f"({c.groups - c.tested} with fewer not tested); {c.flagged} flagged at FDR {fdr}"
        )
        if not c.groups:
            continue
        head = f"  {'group':<22}{'deals':>7}{'shanten':>9}{'fair':>7}{'z':>7}{'p':>11}{'q':>9}"
        typer.echo(f"{head}{'suited':>8}{'fair':>7}  flag")
        for r in screen.results(c.kind, top):
            p = f"{r.p:>11.2e}" if r.p is not None else f"{'–':>11}"
            q = f"{r.q:>9.3f}" if r.q is not None else f"{'–':>9}"
            suited = f"{r.suited:>8.2f}{r.suited_expected:>7.2f}" if r.suited is not None else f"{'–':>8}{'–':>7}"
            fair = r.expected / r.hands
            line = f"  {_shown(r.group):<22}{r.hands:>7}{r.mean:>9.2f}{fair:>7.2f}{r.z:>7.1f}{p}{q}{suited}"
            typer.echo(f"{line}  YES" if r.flagged else line)
            for e in r.evidence:
                typer.echo(
                    f"      {_shown(e['hand_id'])} seat {e['seat']} ({_shown(e['player'])}"
                    f"{', dealer' if e['dealer'] else ''}): dealt {e['shanten']} from ready"
                )


@app.command("eval-collusion")
def eval_collusion_command(
    fdr: EvalFdr = 0.05,
    quick: Annotated[
        bool, typer.Option("--quick", help="A small grid (one intensity, small samples) for a look.")
    ] = False,
    workers: Annotated[int, _option("--workers", ": populations simulated at once.", min=1)] = 2,
    seed: Annotated[int, _option("--seed", " of the first population.")] = 1,
    replicates: Annotated[int, _option("--replicates", ", for the Wilson intervals.", min=1)] = 1,
    intensity: Annotated[list[float] | None, _option("--intensity", ": only these intensities.")] = None,
    shared: Annotated[
        list[int] | None, typer.Option("--shared", help="Only these target shared hands (repeat the option).")
    ] = None,
    honest: Annotated[int, _option("--honest", " (3,000 hands each).", min=0)] = 4,
    team: Annotated[
        int | None,
        typer.Option(
            "--team", min=2, help="Cells of one colluding team of this size instead of 2 pairs (simulate team=K:I)."
        ),
    ] = None,
    family: Annotated[
        list[str] | None,
        typer.Option(
            "--family",
            help="Rooms of 12 with one group of this cheat family (repeat; 'tuning', 'held-out' or 'all' for a "
            "set): simulate cheat=FAMILY:1:I.",
        ),
    ] = None,
    seating: Annotated[
        list[str] | None,
        typer.Option("--seating", help="--family: 'together' (default: partners seek each other's table) or 'chance'."),
    ] = None,
    power_table: Annotated[
        Path | None,
        typer.Option("--power-table", help="--family: write the power table the screen quotes (JSON) here."),
    ] = None,
    out: OutJson = None,
    cache: CacheOption = None,
    fmt: EvalFormat = "table",
) -> None:
    """Simulate populations with and without colluding pairs (or teams); per cell the pairs (teams) flagged
    with a Wilson 95% interval over the replicates, the honest pairs flagged, the false discovery proportion
    and the AUC. A team counts as found when its flagged pairs join all of it.

    With --family: rooms of 12 players with one group of each cheat family (pipeline/simulate/families.py),
    per family × intensity (default 0.3, 0.5) × shared hands (default 1,000) × seating, the rooms found (the
    pair flagged, or the team reported or one of its pairs flagged) with a Wilson 95% interval, the tuning
    families and the held-out ones apart; and --honest honest rooms of
    3,000 hands cycling through the style mixes, half with honest friends who sit together."""
    from pipeline.evaluate import INTENSITIES, SHARED, collusion_grid, team_grid

    if family:
        _eval_families(
            family, seating, intensity, shared, replicates, honest, seed, fdr, workers, out, power_table, cache, fmt
        )
        return
    if power_table is not None or seating:
        raise fail("--power-table and --seating go with --family")
    if team is not None:
        pops = [
            pop
            for s in shared or (1000,)
            for i in intensity or (0.3,)
            for pop in team_grid(seed=seed, size=team, intensity=i, hands=s, replicates=replicates)
        ]
        pops += collusion_grid(seed=seed, shared=(), honest=honest)
    elif quick:
        pops = collusion_grid(seed=seed, intensities=(0.5,), shared=(200,), honest=1, honest_hands=500)
    else:
        pops = collusion_grid(
            seed=seed,
            intensities=intensity or INTENSITIES,
            shared=shared or SHARED,
            honest=honest,
            replicates=replicates,
        )
    _evaluate("collusion", pops, fdr, workers, out, "pairs", cache, fmt)


def _eval_families(
    names: list[str],
    seating: list[str] | None,
    intensity: list[float] | None,
    shared: list[int] | None,
    replicates: int,
    honest: int,
    seed: int,
    fdr: float,
    workers: int,
    out: Path | None,
    power_table: Path | None,
    cache: Path | None,
    fmt: str = "table",
) -> None:
    """eval-collusion --family: the cheat families' rooms, the tables, the JSON and the power table."""
    import datetime
    import sys

    from pipeline.evaluate import (
        FAMILY_INTENSITIES,
        FAMILY_SHARED,
        HELD_OUT,
        SEATING,
        TUNING,
        evaluate,
        family_grid,
        family_table,
        summary,
    )
    from pipeline.evaluate import (
        power_table as make_power_table,
    )
    from pipeline.simulate.families import FAMILIES

    sets = {"tuning": TUNING, "held-out": HELD_OUT, "all": tuple(FAMILIES)}
    families: list[str] = []
    for name in names:
        for f in sets.get(name, (name,)):
            if f not in FAMILIES:
                raise fail(f"--family {f!r}: known families are {', '.join(FAMILIES)} (or tuning, held-out, all)")
            if f not in families:
                families.append(f)
    for s in seating or ():
        if s not in SEATING:
            raise fail(f"--seating {s!r}: 'together' or 'chance'")
    for i in intensity or ():
        if not 0.0 < i <= 1.0:
            raise fail(f"--intensity must be in (0, 1], got {i}")
    for path, what in ((out, "--out"), (power_table, "--power-table")):
        if path is not None:
            _output_file(path, what)
    pops = family_grid(
        families,
        seed=seed,
        intensities=intensity or FAMILY_INTENSITIES,
        shared=shared or FAMILY_SHARED,
        seatings=seating or ("together",),
        replicates=replicates,
        honest=honest,
    )
    outcomes = evaluate(
        pops,
        detector="family",
        fdr=fdr,
        workers=workers,
        progress=lambda o: typer.echo(f"  done: {o.population.name} (seed {o.population.seed})", err=True),
        cache=None if cache is None else str(cache),
    )
    typer.echo(json.dumps(summary(outcomes), ensure_ascii=False) if fmt == "json" else family_table(outcomes, fdr))
    if out is not None:
        out.write_text(json.dumps(summary(outcomes), indent=1) + "\n")
    if power_table is not None:
        command = "xuezhan " + " ".join(sys.argv[1:]) if sys.argv[1:] else "xuezhan eval-collusion"
        table = make_power_table(outcomes, command=command, date=datetime.date.today().isoformat(), fdr=fdr)
        power_table.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@app.command("eval-info-cheats")
def eval_info_cheats_command(
    fdr: EvalFdr = 0.05,
    hands: Annotated[int, _option("--hands", ": each planted cheat's (about).", min=50)] = 1000,
    bots: Annotated[int, typer.Option("--bots", min=1, help="Information cheats planted per population.")] = 1,
    replicates: Annotated[int, _option("--replicates", ": populations with planted cheats.", min=1)] = 10,
    honest: Annotated[int, _option("--honest", " of the same size.", min=0)] = 10,
    workers: Annotated[int, _option("--workers", ": populations simulated at once.", min=1)] = 2,
    seed: Annotated[int, _option("--seed", " of the first population.")] = 1,
    out: OutJson = None,
    cache: CacheOption = None,
    fmt: EvalFormat = "table",
) -> None:
    """Simulate populations with planted information cheats (simulate --inject bot=N) and honest ones (half
    with many careful players); report the cheats `info-cheats` flags (either signal, BY over both), with a
    Wilson 95% interval, and the false discovery proportion of the honest populations; then each signal alone
    (dangerous discards by choice; winning-tile anticipation)."""
    from pipeline.evaluate import InfoOutcome, information_grid, summary, table

    pops = information_grid(seed=seed, hands=hands, bots=bots, replicates=replicates, honest=honest)
    if out is not None:
        _output_file(out, "--out")
    if fmt == "table":
        typer.echo("both signals (a player flagged on either, BY over both families):")
    outcomes = _evaluate("information", pops, fdr, workers, None, "players", cache, fmt, show=fmt == "table")
    signals = {"dodges": "dangerous discards by choice", "anticipation": "winning-tile anticipation"}
    alone: dict[str, list[Any]] = {name: [] for name in signals}
    for o in outcomes:
        if isinstance(o, InfoOutcome):
            for name in signals:
                one = getattr(o, name)
                if one is not None:
                    alone[name].append(one)
    for name, title in signals.items():
        if alone[name] and fmt == "table":
            typer.echo(f"\n{title} alone (its own BY over the players it tests):")
            typer.echo(table(alone[name], fdr, unit="players"))
    data = {**summary(outcomes), **{name: summary(group) for name, group in alone.items()}}
    if fmt == "json":
        typer.echo(json.dumps(data, ensure_ascii=False))
    if out is not None:
        out.write_text(json.dumps(data, indent=1) + "\n")


@app.command("eval-think-time")
def eval_think_time_command(
    fdr: EvalFdr = 0.05,
    hands: Annotated[int, _option("--hands", ": each room's.", min=50)] = 500,
    relays: Annotated[int, typer.Option("--relays", min=1, help="Relays planted per room (simulate relay=N).")] = 1,
    follow: Annotated[
        float | None,
        typer.Option(
            "--follow",
            min=0.01,
            max=1.0,
            help="Plant one engine follower at this share instead of relays (follow=1:P; and rooms with an evasive "
            "one): its consulted decisions take the time of asking.",
        ),
    ] = None,
    replicates: Annotated[int, _option("--replicates", ": rooms with relays (of each follower kind).", min=1)] = 10,
    honest: Annotated[int, _option("--honest", " rooms of the same size.", min=0)] = 10,
    workers: Annotated[int, _option("--workers", ": rooms simulated at once.", min=1)] = 2,
    seed: Annotated[int, _option("--seed", " of the first room.")] = 1,
    out: OutJson = None,
    cache: CacheOption = None,
    fmt: EvalFormat = "table",
) -> None:
    """Simulate rooms of 16 players with decision times (simulate --timing) and planted relays (--inject
    relay=N: flat times whatever the difficulty), and honest rooms with times; ingest each and run `think-time`
    on it; report the relays flagged with a Wilson 95% interval and the honest rooms with a false flag. Measured
    on the simulator's own timing model (its players differ in how much longer they think on a harder decision),
    not people's. `--follow P`: engine followers instead (follow=1:P, and evasive ones), whose decisions asked of
    the engine take the time of asking whatever their difficulty."""
    from pipeline.evaluate import think_grid

    pops = think_grid(seed=seed, hands=hands, relays=relays, replicates=replicates, honest=honest, follow=follow)
    _evaluate("think", pops, fdr, workers, out, "players", cache, fmt)


@app.command("eval-assist")
def eval_assist_command(
    fdr: EvalFdr = 0.05,
    hands: Annotated[
        int, _option("--hands", ": each follower's (about; the room of 8 plays twice that).", min=50)
    ] = 1000,
    share: Annotated[
        float,
        typer.Option("--share", min=0.0, max=1.0, help="Share of its decisions a follower takes from the engine."),
    ] = 0.5,
    replicates: Annotated[int, _option("--replicates", ": rooms of each planted kind.", min=1)] = 10,
    honest: Annotated[int, _option("--honest", " rooms of the same size.", min=0)] = 10,
    players: Annotated[
        int,
        _option(
            "--players", ": each room's (the room's spread is measured on the others, so its size matters).", min=4
        ),
    ] = 8,
    notice: Annotated[
        float | None,
        _option("--notice", ": of every room's players, the follower's own choices too.", min=0.0, max=1.0),
    ] = None,
    engine: Annotated[
        str | None,
        _option(
            "--yardstick",
            ". The followers' engine is `lookahead`: other settings measure a screen holding a version of the "
            "cheat's engine other than the cheat's. No calculator rooms (a calculator follows the reference).",
        ),
    ] = None,
    evasive: Annotated[
        bool,
        typer.Option("--evasive/--no-evasive", help="Rooms with an evasive follower too (as many as --replicates)."),
    ] = True,
    workers: Annotated[int, _option("--workers", ": rooms simulated at once.", min=1)] = 2,
    seed: Annotated[int, _option("--seed", " of the first room.")] = 1,
    out: OutJson = None,
    cache: CacheOption = None,
    fmt: EvalFormat = "table",
) -> None:
    """Simulate rooms of 8 players (`--players`) with expert players (the strong honest style, the hard
    negatives) and one engine follower (simulate --inject follow=1:P; its engine a sampling look-ahead, not the
    screen's yardstick), one evasive follower (follow=1:P:evasive), or one calculator (an honest player's reviewed
    decisions replaced by the reference policy's own first choice on a share P: a follower of an efficiency
    calculator, the hand's course unchanged), and honest rooms; ingest each and run `assist` on it; report the
    planted players flagged with a Wilson 95% interval and the honest rooms with a false flag. Each room is
    reviewed whole: about 2,000 hands in a room of 8 (each player sits in about 4/N of a room's hands), a few
    CPU-minutes a room. `--notice Q`: the honest players count the tiles in view as people do, missing some
    (the screen's power depends on it: the calculators and the engine count every one)."""
    from pipeline.evaluate import assist_grid

    if engine is not None:
        engine = _yardstick(engine).name
    pops = assist_grid(
        seed=seed,
        hands=hands,
        share=share,
        replicates=replicates,
        honest=honest,
        players=players,
        notice=notice,
        engine=engine,
        evasive=evasive,
    )
    if engine is not None:
        typer.echo(
            f"eval-assist: the screen's yardstick is the engine {engine} (the followers' is lookahead)", err=True
        )
    _evaluate("assist", pops, fdr, workers, out, "players", cache, fmt)


@app.command("eval-deals")
def eval_deals_command(
    fdr: EvalFdr = 0.05,
    hands: Annotated[int, _option("--hands", ": each stacked player's (about).", min=50)] = 500,
    intensity: Annotated[list[float] | None, _option("--intensity", " (default 0.4).")] = None,
    stackers: Annotated[int, typer.Option("--stackers", min=1, help="Stacked players per population.")] = 1,
    replicates: Annotated[int, _option("--replicates", ": populations per intensity.", min=1)] = 25,
    honest: Annotated[int, _option("--honest", " of the same size.", min=0)] = 25,
    workers: Annotated[int, _option("--workers", ": populations simulated at once.", min=1)] = 1,
    seed: Annotated[int, _option("--seed", " of the first population.")] = 1,
    cache: CacheOption = None,
    out: OutJson = None,
    fmt: EvalFormat = "table",
) -> None:
    """Simulate populations with stacked deals (simulate --inject stack=N:I) and honest ones; report the
    stacked players `deals` flags, with a Wilson 95% interval, the honest players flagged and the false
    discovery proportion of the honest populations, and the sessions flagged."""
    from pipeline.evaluate import deals_grid, evaluate, session_lines, summary, table

    if out is not None:
        _output_file(out, "--out")
    for i in intensity or ():
        if not 0.0 < i <= 1.0:
            raise fail(f"--intensity must be in (0, 1], got {i}")
    pops = deals_grid(
        seed=seed,
        hands=hands,
        intensities=intensity or (0.4,),
        stackers=stackers,
        replicates=replicates,
        honest=honest,
    )
    # _evaluate's steps, with the sessions' table after the players' (and in the JSON)
    outcomes = evaluate(
        pops,
        detector="deals",
        cache=None if cache is None else str(cache),
        fdr=fdr,
        workers=workers,
        progress=lambda o: typer.echo(f"  done: {o.population.name} (seed {o.population.seed})", err=True),
    )
    data = summary(outcomes) | {"sessions": session_lines(outcomes)}
    if fmt == "json":
        typer.echo(json.dumps(data, ensure_ascii=False))
    else:
        typer.echo(table(outcomes, fdr, unit="players"))
        typer.echo("")
        typer.echo(session_lines(outcomes))
    if out is not None:
        out.write_text(json.dumps(data, indent=1) + "\n")


def _evaluate(
    detector: str,
    pops: list[Any],
    fdr: float,
    workers: int,
    out: Path | None,
    unit: str,
    cache: Path | None = None,
    fmt: str = "table",
    *,
    show: bool = True,
) -> list[Any]:
    """Run the grid; print its table (``fmt`` json: what ``out`` gets) unless ``show`` is off, write ``out``."""
    from pipeline.evaluate import evaluate, summary, table

    if out is not None:
        _output_file(out, "--out")
    outcomes = evaluate(
        pops,
        detector=detector,
        fdr=fdr,
        workers=workers,
        progress=lambda o: typer.echo(f"  done: {o.population.name} (seed {o.population.seed})", err=True),
        cache=None if cache is None else str(cache),
    )
    if show:
        typer.echo(
            json.dumps(summary(outcomes), ensure_ascii=False) if fmt == "json" else table(outcomes, fdr, unit=unit)
        )
    if out is not None:
        out.write_text(json.dumps(summary(outcomes), indent=1) + "\n")
    return outcomes


@app.command("simulate")
def simulate_command(
    hands: Annotated[int, _option("--hands", ".", min=1)],
    out: Annotated[Path, _option("--out", ": the records, .jsonl, .jsonl.gz or .jsonl.zst.")],
    seed: Annotated[int, _option("--seed", ": the same arguments give the same bytes.")] = 0,
    players: Annotated[int, _option("--players", ".", min=4)] = 16,
    rules_: Annotated[str, _option("--rules", ": the tables play it (a profile name only).")] = "chengdu",
    inject: Annotated[
        str | None,
        typer.Option("--inject", help="Anomalies, e.g. collude=2:0.3,score_errors=0.02,corrupt=0.01,bot=1."),
    ] = None,
    session_hands: Annotated[int, typer.Option("--session-hands", min=1, help="Hands per table session.")] = 8,
    styles: Annotated[
        str | None,
        typer.Option(
            "--styles",
            help="Style mix of the player pool as weights, e.g. balanced=0.4,expert=0.6 (pipeline/simulate/"
            "styles.py; default: balanced=0.4,aggressive=0.2,defensive=0.2,novice=0.2).",
        ),
    ] = None,
    notice: Annotated[float | None, _option("--notice", ".", min=0.0, max=1.0)] = None,
    summary: Annotated[bool, typer.Option("--summary", help="Print the realism report per style.")] = False,
    timing: Annotated[
        bool,
        typer.Option(
            "--timing",
            help="Write each event's decision time (ms): longer for harder decisions, per player speed "
            "(pipeline/simulate/timing.py); on with --inject relay=N.",
        ),
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Play realistic hands with bots of several styles; write records and OUT.labels.json (ground truth)."""
    from pipeline.simulate.inject import InjectSpec, SpecError
    from pipeline.simulate.styles import parse_mix
    from pipeline.simulate.tables import SimConfig, Summary, labels_path, write

    try:
        mix = parse_mix(styles) if styles is not None else None
    except ValueError as exc:
        raise fail(f"--styles: {exc}") from None
    try:
        spec = InjectSpec.parse(inject, players=players)
        if rules_.lstrip().startswith("{"):
            raise fail("--rules: simulate plays a profile by name (xuezhan rules list), not a JSON object")
        load_ruleset(rules_)
    except SpecError as exc:
        raise fail(f"--inject: {exc}") from None
    except RuleSetError as exc:
        raise fail(f"--rules: {exc}") from None
    if not out.name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
        raise fail("--out must end in .jsonl, .jsonl.gz or .jsonl.zst")
    _output_file(out, "--out")
    config = SimConfig(
        hands=hands,
        seed=seed,
        players=players,
        profile=rules_,
        inject=spec,
        session_hands=session_hands,
        styles=mix,
        timing=timing,
        notice=notice,
    )
    report = Summary() if summary else None
    with _progress("simulating", quiet, total=hands) as bar:
        labels = write(config, out, progress=bar.count, summary=report)
    typer.echo(
        f"wrote {hands} hands to {out} and ground truth to {labels_path(out)} ({len(labels.faults)} injected faults)",
        err=True,
    )
    if report is not None:
        typer.echo(report.text())


FORMATS_IN = ("sheet", "mjai", "salasasa", "majsoul")


class _BadText(ValueError):
    """An input line that is not in the file's encoding: the import stops before writing anything."""


@app.command("import")
def import_command(
    path: Annotated[
        str,
        typer.Argument(
            help="The file: .csv for a sheet, .json/.jsonl/.mjson for mjai (.gz, .zst compressed); '-' for stdin."
        ),
    ],
    source: Annotated[
        str,
        typer.Option("--from", help="Its format: sheet (a score sheet), mjai, salasasa or majsoul (docs/FORMATS.md)."),
    ],
    out: Annotated[Path, _option("--out", ": the xzlog/1 records, .jsonl, .jsonl.gz or .jsonl.zst.", "-o")],
    rules_: Annotated[
        str | None,
        _option("--rules", ", for a hand that names none (default chengdu; mjai: app, no exchange)."),
    ] = None,
    game: Annotated[
        str | None,
        typer.Option("--game", help="mjai, majsoul: the hand ids' prefix (default: the file's name)."),
    ] = None,
    encoding: Annotated[
        str, typer.Option("--encoding", help="sheet: the text encoding (gbk for many Chinese exports).")
    ] = "utf-8-sig",
    players_file: Annotated[
        Path | None,
        typer.Option(
            "--player-records", help="salasasa: game_player_records (JSON lines or CSV/TSV) to reconcile totals."
        ),
    ] = None,
    que_file: Annotated[
        Path | None,
        _option("--que", ' (salasasa): a JSON object, hand id → the four void suits, e.g. ["m","s","p","m"].'),
    ] = None,
    mode: Annotated[
        str | None, typer.Option("--mode", help="salasasa: the room's mode where a hand does not show it.")
    ] = None,
    tz: Annotated[str | None, _option("--tz", ": salasasa, the server's (a game's start_time has no offset).")] = None,
    quiet: QuietOption = False,
) -> None:
    """Read another format into xzlog/1 records: a score sheet into settlement records, mjai into dealt records.

    Every input line ends in a written record, a reject (OUT's name + .rejects.jsonl, with the line, the reason
    and the text), the framing that belongs to no single record (a header, a game's start) or is blank; the
    last line says how they add up. Validate or ingest the records next. Exit 0 when nothing was rejected, 1
    when some lines were, 2 on a usage error.
    """
    import codecs
    import tempfile

    import orjson

    from pipeline.formats import Accounting, BadLine, Converted, Reject
    from pipeline.formats import write_lines as write_out
    from pipeline.ingest.read import MAX_LINE, read_lines

    if source not in FORMATS_IN:
        raise fail(f"--from {source!r}: not a format xuezhan reads (formats: {', '.join(FORMATS_IN)})")
    if path != "-" and not Path(path).is_file():
        raise fail(f"no such file: {path}")
    if not out.name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
        raise fail("--out must end in .jsonl, .jsonl.gz or .jsonl.zst")
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise fail(f"--encoding {encoding!r}: not a text encoding Python knows") from None
    _output_file(out, "--out")
    rejects_path = out.with_name(out.name.split(".jsonl")[0] + ".rejects.jsonl")
    _not_the_input([path], out, rejects_path)
    spec = _rules_option(rules_)
    acc = Accounting(keep=10)
    games = [0]  # salasasa, majsoul: the games read (each game's first record carries its lines)
    size = os.path.getsize(path) if path != "-" and not path.endswith((".gz", ".zst")) else None
    cut: list[str] = []  # where a broken stream stopped
    with (
        _progress(f"importing ({source})", quiet, size=size) as bar,
        tempfile.TemporaryFile() as kept,  # the rejects as they come (each text bounded): never all in memory
    ):

        def lines() -> Iterator[str | BadLine]:
            for line in read_lines([path], on_bytes=bar.read):
                acc.lines_read += 1
                if line.fault is not None:  # the stream broke (a truncated .gz): what came before is read
                    cut.append(line.fault)
                    yield BadLine(line.code or "INGEST_READ", line.fault)
                elif line.too_long:
                    yield BadLine(line.code or "INGEST_LINE_TOO_LONG", _too_long(line.size, MAX_LINE))
                else:
                    try:  # a sheet's line with its break again: a quoted cell may hold one
                        yield line.data.decode(encoding) + "\n" if source == "sheet" else line.data.decode()
                    except UnicodeDecodeError:
                        if source != "sheet":
                            yield BadLine("IMPORT_ROW", "not UTF-8")
                            continue
                        hint = "; try --encoding gbk" if encoding != "gbk" else ""
                        raise _BadText(f"line {acc.lines_read} of {path} is not {encoding}{hint}") from None

        if source == "sheet":
            from pipeline.formats.sheet import read_sheet

            default: str | dict[str, Any] = "chengdu"
            if spec:  # a bare profile name stays a name in the records; overrides make a ruleset object
                default = spec if len(spec) > 1 else str(spec["profile"])
            items = read_sheet(lines(), ruleset=default, max_bytes=MAX_LINE)
        elif source == "salasasa":
            items = _salasasa_items(lines(), players_file, que_file, mode, tz)
        elif source == "majsoul":
            from pipeline.formats.majsoul import read_majsoul

            items = read_majsoul(lines(), game=game or Path(path).name.split(".")[0] or "majsoul")
        else:
            from pipeline.formats.mjai import read_mjai

            prefix = game or Path(path).name.split(".")[0] or "mjai"
            items = read_mjai(lines(), game=prefix, ruleset=spec, max_bytes=MAX_LINE)

        def records() -> Iterator[bytes]:
            for item in items:
                acc.add(item)
                if isinstance(item, Converted):
                    bar.count(1)
                    games[0] += item.lines > 0
                    yield orjson.dumps(item.record)
                elif isinstance(item, Reject):
                    kept.write(orjson.dumps(item.as_dict()) + b"\n")

        try:
            written = write_out(out, records())
        except _BadText as exc:
            raise fail(f"{exc}: nothing written") from None
        if acc.rejected:
            kept.seek(0)
            write_out(rejects_path, (line.rstrip(b"\n") for line in kept))
    typer.echo(f"wrote {plural(written, 'record')} to {out}" + (f", rejects to {rejects_path}" if acc.rejected else ""))
    typer.echo(acc.text())
    if source in ("salasasa", "majsoul"):  # a row is a whole game: games read = the hands written from them
        typer.echo(f"games {games[0]} read into {acc.records} hands ({source}); {acc.rejected} games rejected")
    for r in acc.rejects:
        typer.echo(f"  line {r.line}: {r.code} {_shown(r.message)}")
    if acc.rejected > len(acc.rejects):
        typer.echo(f"  ... {acc.rejected - len(acc.rejects)} more in {rejects_path}")
    for fault in cut:
        typer.echo(f"xuezhan: {_shown(fault)}: the lines before it are imported", err=True)
    assert acc.balanced, acc.text()
    raise typer.Exit(1 if acc.rejected or not written else 0)


def _too_long(size: int, bound: int) -> str:
    """Why a line longer than the reader's bound is no record (``export``, ``import``)."""
    return f"a line of {size} bytes, longer than any record may be ({bound} bytes): not read"


def _not_the_input(inputs: list[str], *outputs: Path) -> None:
    """Refuse an output that is one of the inputs: writing it would replace what is being read."""
    for given in inputs:
        if given == "-" or not Path(given).exists():
            continue
        for output in outputs:
            if output.exists() and Path(given).resolve() == output.resolve():
                raise fail(f"{output} is also an input: writing it would replace what is read; give another name")


def _salasasa_items(
    lines: Iterator[str | BadLine], players_file: Path | None, que_file: Path | None, mode: str | None, tz: str | None
) -> Iterator[Any]:
    """The Salasasa reader with the facts the user supplies (docs/FORMATS.md); a bad option is a usage error."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    import orjson

    from pipeline.formats.salasasa import SalasasaError, read_players, read_salasasa

    if mode not in (None, "blood_battle", "ordinary"):
        raise fail(f"--mode {mode!r}: blood_battle or ordinary")
    if tz is not None:
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise fail(f"--tz {tz!r}: not a time zone name") from None
    try:
        totals = read_players(players_file.read_text(encoding="utf-8").splitlines()) if players_file else None
        que = orjson.loads(que_file.read_bytes()) if que_file else None
        if que is not None and not isinstance(que, dict):
            raise fail("--que: a JSON object, hand id → four suits")
        return read_salasasa(lines, que=que, mode=mode, tz=tz, totals=totals)
    except (OSError, orjson.JSONDecodeError, SalasasaError) as e:
        raise fail(str(e)) from None


FORMATS_OUT = ("mjai",)


@app.command("replay")
def replay_command(
    hand_id: Annotated[str, typer.Argument(help="The hand_id of the hand to show.")],
    paths: Annotated[
        list[str] | None, typer.Argument(help="Record files or folders to find it in (or --warehouse).")
    ] = None,
    warehouse: Annotated[
        Path | None,
        _option("--warehouse", ": find the hand in it and read it from its source.", "-w"),
    ] = None,
    rules_: RulesOption = None,
    html: Annotated[Path | None, typer.Option("--html", help="Write the replay as an HTML page here instead.")] = None,
    review: Annotated[
        bool,
        typer.Option(
            "--review",
            help="Annotate each decision with its rank among the reference policy's options, its live tiles and "
            "danger, and the clearly better option where there was one (docs/REPLAY.md).",
        ),
    ] = False,
    yardstick: Annotated[
        str | None,
        _option("--yardstick", ". With --review: each turn beside that engine's first choice too."),
    ] = None,
) -> None:
    """Print one hand turn by turn: the deal, every event in the hand notation with the issues raised at it,
    each win's value computed beside the claim, and the settlement computed beside the claimed one
    (docs/REPLAY.md). With --warehouse, the hand's session findings too (the checks across the hands of its
    session: dealer, hand numbers, players). With --review, every decision beside the reference policy's ranking of
    the options, and a summary per seat. Exit 0 when the hand is valid, 1 when it is not (or a session
    finding is an error), 2 when it cannot be found."""
    from dashboards.pages.replay import replay_html
    from pipeline.audit.replay import (
        HandNotFound,
        find_record,
        hand_issues,
        replay_text,
        session_findings,
        session_line,
        stored_record,
    )
    from pipeline.validate import validate

    override = _rules_option(rules_)
    if bool(paths) == (warehouse is not None):
        raise fail("give the record files or --warehouse (one of them)")
    engine = None
    if yardstick is not None:
        if not review:
            raise fail("--yardstick goes with --review")
        engine = _yardstick(yardstick).decide
    across: list[tuple[str, str, str]] = []  # the warehouse's session findings of the hand: (code, severity, message)
    try:
        if warehouse is not None:
            _records_in(warehouse)
            from pipeline.analytics.queries import connect

            with connect(warehouse) as con:
                found = stored_record(con, hand_id)
                across = session_findings(hand_issues(con, hand_id))
        else:
            assert paths is not None
            missing = [p for p in paths if p != "-" and not Path(p).exists()]
            if missing:
                raise fail(f"no such file or folder: {', '.join(missing)}")
            found = find_record(paths, hand_id)
    except HandNotFound as exc:
        raise fail(str(exc)) from None
    validation = validate(found.record, profile=override)
    if html is not None:
        _output_file(html, "--html")
        page = replay_html(found.record, validation, across, review=review, yardstick=engine)
        html.write_text(page, encoding="utf-8")
        typer.echo(f"wrote {html}")
    else:
        session = "".join(session_line(*finding) + "\n" for finding in across)
        where = f"{_shown(found.hand.source_file)}:{found.hand.source_line}"
        text = replay_text(found.record, validation, review=review, yardstick=engine)
        _write_data(f"{where}\n{text}\n{session}")
    raise typer.Exit(0 if validation.ok and all(severity != "error" for _, severity, _ in across) else 1)


@app.command("export")
def export_command(
    to: Annotated[str, typer.Option("--to", help="The format to write: mjai.")],
    out: Annotated[Path, _option("--out", ": .jsonl (.mjson), .gz or .zst compressed.", "-o")],
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Files or folders of xzlog/1 records (.jsonl, .jsonl.gz, .jsonl.zst); or --warehouse."),
    ] = None,
    warehouse: Annotated[
        Path | None,
        _option("--warehouse", ": export its hands, read back from their sources (sha256 checked)."),
    ] = None,
    player: PlayerFilter = None,
    since: SinceOption = None,
    until: UntilOption = None,
    table: TableOption = None,
    profile: ProfileOption = None,
    tz: TzOption = None,
    keep_invalid: Annotated[
        bool,
        typer.Option(
            "--keep-invalid",
            help="Also write hands whose play the validator finds illegal (illegal plays, false wins), each marked "
            "(start_kyoku's x_xuezhan_invalid: the codes).",
        ),
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Write records in another format: mjai, one event per line, a game per session (docs/FORMATS.md says what
    mjai cannot carry). A record it cannot carry (a table of three, a settlement record with no deal, a line
    that is not a record) is skipped and listed; the last line accounts for every input line.

    Each record is validated first: a hand whose play is illegal (a tile that cannot exist, a turn out of order,
    an illegal call, a false win: data to train a model on must not hold them) is left out and counted, or with
    --keep-invalid written with the codes in start_kyoku's x_xuezhan_invalid. A wrong claimed score is no fault
    of the play: such hands are written.

    With --warehouse, the warehouse's hands (or those the filters keep: --player, --since, --until, --table,
    --profile) are read back from the files they were ingested from, each checked against the sha256 stored
    with it: a file moved or changed since is a skipped hand with the reason, and the last line accounts for
    every hand selected."""
    import orjson

    from pipeline.formats import write_lines as write_out
    from pipeline.formats.mjai import NotWritable, write_mjai
    from pipeline.validate import play_faults, validate

    if to not in FORMATS_OUT:
        raise fail(f"--to {to!r}: not a format xuezhan writes (formats: {', '.join(FORMATS_OUT)})")
    if (warehouse is None) == (not paths):
        raise fail("give either record files or folders, or --warehouse (one of the two)")
    filters = {"--player": player, "--since": since, "--until": until, "--table": table, "--profile": profile}
    if warehouse is None and any(v is not None for v in [*filters.values(), tz]):
        raise fail(f"{', '.join([*filters, '--tz'])} select the hands of a --warehouse")
    scope = _scope(since=since, until=until, table=table, player=player, profile=profile, tz=tz)
    counts = Counter[str]()
    skipped: list[str] = []
    where = [""]  # the input of the record write_mjai is on (it calls on_skip before reading the next)

    def skip(why: object) -> None:
        counts["skipped"] += 1
        if len(skipped) < 10:
            skipped.append(f"{where[0]}: {_shown(why)}")

    marks: list[tuple[str, ...]] = []  # per record handed to write_mjai and not yet written or skipped: its faults

    def on_skip(record: dict[str, Any], exc: NotWritable) -> None:
        marks.pop(0)
        skip(exc)

    def legal(records: Iterator[dict[str, Any]], bar: _Bar) -> Iterator[dict[str, Any]]:
        for record in records:
            faults = play_faults(validate(record))
            if faults and not keep_invalid:
                counts["invalid"] += 1
                skip(f"illegal play ({', '.join(faults)}): left out (--keep-invalid writes it, marked)")
                bar.count(1)
                continue
            marks.append(faults)
            yield record

    def stream(records: Iterator[dict[str, Any]], bar: _Bar) -> Iterator[bytes]:
        for event in write_mjai(legal(records, bar), on_skip=on_skip):
            if event["type"] == "start_kyoku":
                counts["written"] += 1
                faults = marks.pop(0)
                if faults:
                    counts["marked"] += 1
                    event = {**event, "x_xuezhan_invalid": list(faults)}
                bar.count(1)
            yield orjson.dumps(event)

    def invalid_said() -> str:
        if keep_invalid:
            return f"; {plural(counts['marked'], 'hand')} with illegal play written, marked"
        return f"; {counts['invalid']} of the skipped with illegal play (--keep-invalid writes them, marked)"

    if warehouse is not None:
        _export_warehouse(warehouse, out, scope, quiet, stream, skip, where, counts)
        typer.echo(f"wrote {plural(counts['written'], 'hand')} ({plural(counts['events'], 'event')}) to {out}")
        typer.echo(
            f"hands selected {counts['selected']} = {counts['written']} written + {counts['skipped']} skipped"
            f" ({counts['unread']} not read back from their source, {counts['invalid']} with illegal play,"
            f" {counts['skipped'] - counts['unread'] - counts['invalid']} that mjai cannot carry)"
            + (invalid_said() if keep_invalid else "")
        )
    else:
        from pipeline.ingest.read import MAX_LINE, find_files, input_bytes, read_lines

        missing = [p for p in paths or [] if p != "-" and not Path(p).exists()]
        if missing:
            raise fail(f"no such file or folder: {', '.join(missing)}")
        if not find_files(paths or []):
            raise fail("no record files (.jsonl, .jsonl.gz, .jsonl.zst) under the given paths")
        _output_file(out, "--out")
        _not_the_input(find_files(paths or []), out)

        def records(bar: _Bar) -> Iterator[dict[str, Any]]:
            for line in read_lines(paths or [], on_bytes=bar.read):
                counts["lines"] += 1
                where[0] = f"{_shown(line.source_file)}:{line.source_line}"
                if line.too_long:
                    skip(_too_long(line.size, MAX_LINE))
                    continue
                try:
                    record = orjson.loads(line.data) if line.fault is None else None
                except orjson.JSONDecodeError as exc:
                    skip(exc)
                    continue
                if not isinstance(record, dict) or record.get("format") != "xzlog/1":
                    skip(line.fault or "not an xzlog/1 record")
                    continue
                yield record

        with _progress("exporting (mjai)", quiet, size=input_bytes(paths or []) or None) as bar:
            n = write_out(out, stream(records(bar), bar))
        typer.echo(f"wrote {plural(counts['written'], 'hand')} ({plural(n, 'event')}) to {out}")
        typer.echo(
            f"lines {counts['lines']} = {counts['written']} written + {counts['skipped']} skipped{invalid_said()}"
        )
    for line in skipped:
        typer.echo(f"  skipped {line}")
    assert counts["written"] + counts["skipped"] == counts["selected" if warehouse is not None else "lines"]
    raise typer.Exit(1 if counts["skipped"] or not counts["written"] else 0)  # nothing written: 1 as well


def _export_warehouse(
    warehouse: Path,
    out: Path,
    scope: Any,
    quiet: bool,
    stream: Callable[[Iterator[dict[str, Any]], _Bar], Iterator[bytes]],
    skip: Callable[[object], None],
    where: list[str],
    counts: Counter[str],
) -> None:
    """``export --warehouse``: the selected hands read back from their sources (pipeline/analytics/export.py)."""
    from pipeline.analytics.export import Found, read_back, selected
    from pipeline.analytics.queries import connect
    from pipeline.analytics.scope import ScopeError
    from pipeline.formats import write_lines as write_out

    _records_in(warehouse)
    _output_file(out, "--out")
    try:
        with connect(warehouse, scope=scope) as con:
            hands = selected(con)
    except (FileNotFoundError, ScopeError) as exc:
        raise fail(str(exc)) from None
    counts["selected"] = len(hands)

    def records(bar: _Bar) -> Iterator[dict[str, Any]]:
        for item in read_back(hands):
            where[0] = f"{_shown(item.hand.hand_id)} ({_shown(item.hand.where())})"
            if isinstance(item, Found):
                yield item.record
            else:
                counts["unread"] += 1
                skip(item.reason)
                bar.count(1)

    with _progress("exporting (mjai)", quiet, total=len(hands)) as bar:
        counts["events"] = write_out(out, stream(records(bar), bar))


class _Bar:
    """What a command tells its progress bar: ``count(n)`` more hands (or pairs) done, ``read(n)`` more input
    bytes read (then the bar and its ETA follow the bytes), ``stage(...)`` a new bar for the next step. Without
    a terminal (or with ``--quiet``) every call does nothing."""

    def __init__(self, progress: Any = None) -> None:
        self._progress = progress
        self._task: Any = None
        self._count = 0
        self._by_bytes = False

    def stage(self, label: str, *, total: int | None = None, unit: str = "hands", size: int | None = None) -> None:
        """A bar ``label`` counting ``unit`` (of ``total`` when known); driven by ``size`` input bytes if given."""
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.refresh()  # the last stage as it ended (a full bar), before the next one
            self._progress.remove_task(self._task)
        self._count, self._by_bytes = 0, size is not None
        self._task = self._progress.add_task(
            label, total=size if size is not None else total, count=0, count_total=total, unit=unit, size=size
        )

    @property
    def active(self) -> bool:
        return self._progress is not None

    def count(self, n: int) -> None:
        if self._task is not None:
            self._count += n
            self._progress.update(self._task, count=self._count, advance=0 if self._by_bytes else n)

    def set(self, done: int, total: int | None = None) -> None:
        """``done`` of ``total`` (for a step that reports where it is rather than how much more)."""
        if self._task is not None:
            self._count = done
            fields: dict[str, Any] = {"count": done} if total is None else {"count": done, "count_total": total}
            if not self._by_bytes:
                fields["completed"] = done
                if total is not None:
                    fields["total"] = total
            self._progress.update(self._task, **fields)

    def read(self, n: int) -> None:
        if self._task is not None and self._by_bytes:
            self._progress.update(self._task, advance=n)


def _megabytes(n: float) -> str:
    """``0.4 MB``, ``12.3 MB``, ``1,234 MB``."""
    mb = n / 1e6
    return f"{mb:,.0f} MB" if mb >= 100 else f"{mb:.1f} MB"


@contextmanager
def _progress(
    label: str, quiet: bool, *, total: int | None = None, unit: str = "hands", size: int | None = None
) -> Iterator[_Bar]:
    """A progress bar on stderr in human units, ``validating ━━━━━━ 12,345 hands  1,520 hands/s  3.2 MB of 8.1 MB
    0:00:05`` (the ETA follows the ``size`` input bytes when given, else the count of ``total``); nothing in
    scripts (stderr not a terminal) or with ``--quiet``. Transient: the bar is gone when the command ends."""
    if quiet or not sys.stderr.isatty():
        yield _Bar()
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
    from rich.text import Text

    class Count(ProgressColumn):
        def render(self, task: Task) -> Text:
            count, of, unit = task.fields["count"], task.fields["count_total"], task.fields["unit"]
            return Text(f"{count:,}/{of:,} {unit}" if of is not None else f"{count:,} {unit}")

    class Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            elapsed = task.elapsed or 0.0
            rate = task.fields["count"] / elapsed if elapsed > 0.5 else None
            return Text(f"{rate:,.0f} {task.fields['unit']}/s" if rate is not None else f"– {task.fields['unit']}/s")

    class Read(ProgressColumn):
        def render(self, task: Task) -> Text:
            size = task.fields["size"]
            return Text(f"{_megabytes(task.completed)} of {_megabytes(size)}" if size is not None else "")

    columns = (TextColumn("{task.description}"), BarColumn(), Count(), Rate(), Read(), TimeRemainingColumn())
    with Progress(*columns, transient=True, console=Console(stderr=True)) as progress:
        bar = _Bar(progress)
        bar.stage(label, total=total, unit=unit, size=size)
        yield bar


@rules_app.command("list")
def rules_list(fmt: Annotated[TableJson, _option("--format", ": table or json.")] = "table") -> None:
    """List the rule profiles."""
    if fmt == "json":
        found = [{"name": name, "description": read_profile(name).description} for name in profile_names()]
        typer.echo(json.dumps(found, ensure_ascii=False))
        return
    for name in profile_names():
        typer.echo(f"{name:<10} {read_profile(name).description}")


@rules_app.command("show")
def rules_show(
    profile: Annotated[str, typer.Argument(help="Profile name, e.g. chengdu.")],
    fmt: Annotated[TableJson, _option("--format", ": table or json.")] = "table",
) -> None:
    """Show a profile's switches, what each means and the rules-text line it comes from."""
    try:
        data = read_profile(profile)
    except RuleSetError as exc:
        raise fail(str(exc)) from None
    if fmt == "json":
        switches = {
            name: {"value": data.switches[name], "doc": switch_doc(name), "source": data.sources.get(name)}
            for name in switch_names()
        }
        doc = {"name": data.name, "description": data.description, "switches": switches}
        typer.echo(json.dumps(doc, ensure_ascii=False))
        return
    typer.echo(f"{data.name}: {data.description}")
    for name in switch_names():
        typer.echo(f"\n{name} = {json.dumps(data.switches[name], ensure_ascii=False)}")
        typer.echo(f"    {switch_doc(name)}")
        source = data.sources.get(name)
        if source:
            typer.echo(f"    source: {source}")


# ---------------------------------------------------------------------------------------------- findings and cases
MinHandsOption = Annotated[int, _option("--min-hands", ": the collusion screen's shared hands of a pair.", min=1)]
ReviewerOption = Annotated[str, _option("--reviewer", ".")]
NoteOption = Annotated[str | None, _option("--note", ".")]
MaskOption = Annotated[bool, _option("--mask", ": the case's players A, B, …, everyone else O1, O2, …, ids masked.")]


def _current_findings(warehouse: Path, min_hands: int) -> tuple[Any, Any]:
    """The warehouse's findings now (every screen and the audit, as the report's first screen has them), and the
    decision screens' stored screen they list from (:func:`pipeline.audit.tallies.stored_screen`: what they can
    see here)."""
    from dashboards.findings import collect
    from pipeline.analytics.queries import connect
    from pipeline.audit.tallies import stored_screen

    _records_in(warehouse)
    with connect(warehouse) as con:
        decisions = stored_screen(con)
        return collect(con, min_hands=min_hands, assist=decisions), decisions


def _with_cases(found: Any, warehouse: Path) -> list[dict[str, Any]]:
    """Each finding as a dict with its case (``case_id``) and ``status``/``why``
    (:func:`pipeline.audit.cases.with_status`)."""
    from pipeline.audit.cases import listed, read_cases, with_status

    return [dict(r) for r in listed(with_status(found.iter_rows(named=True), read_cases(warehouse)))]


@app.command("findings")
def findings_command(
    warehouse: WarehouseIn,
    min_hands: MinHandsOption = 200,
    show_all: Annotated[
        bool, typer.Option("--all", help="List dismissed findings too (hidden while their evidence has not grown).")
    ] = False,
    fmt: Annotated[TableJson, _option("--format", ": table or json.")] = "table",
) -> None:
    """What needs attention, as the report's first screen has it, each finding with its key and its case: new,
    open, confirmed, appealed, reopened (dismissed, and its evidence has grown since: why) or dismissed (hidden
    unless --all); the new ones first, then reopened, appealed, open, confirmed, each in rank order. The
    engine-assistance and think-time screens read the hands `xuezhan review` has reviewed (a line says when some
    are not)."""
    from dashboards.findings import reach_text

    found, decisions = _current_findings(warehouse, min_hands)
    rows = _with_cases(found, warehouse)
    shown = [r for r in rows if show_all or r["status"] != "dismissed"]
    if fmt == "json":
        keys = ("rank", "severity", "kind", "key", "status", "why", "case_id", "subject", "players", "q", "n")
        typer.echo(json.dumps([{k: r[k] for k in (*keys, "money", "detail")} for r in shown], ensure_ascii=False))
    else:
        counts = Counter(r["status"] for r in rows)
        typer.echo(
            f"{plural(len(rows), 'finding')}: {counts['new']} new, {counts['reopened']} reopened, "
            f"{counts['open'] + counts['appealed']} under review, {counts['confirmed']} confirmed, "
            f"{counts['dismissed']} dismissed{'' if show_all else ' (hidden: --all lists them)'}"
        )
        for r in shown:
            case = f" [{r['case_id']}]" if r["case_id"] else ""
            typer.echo(f"{r['severity']:<6} {r['status'].upper():<9} {_shown(r['key'])}{case}")
            typer.echo(f"       {_shown(r['subject'])}: {_shown(r['detail'])}")
            if r["why"]:
                typer.echo(f"       reopened: {r['why']}")
        from pipeline.analytics.queries import connect, review_coverage

        with connect(warehouse, warn=False) as con:
            covered = review_coverage(con)
        if covered["reviewed"] < covered["reviewable"]:
            typer.echo(
                f"The engine-assistance and think-time screens read the {covered['reviewed']:,} of "
                f"{covered['reviewable']:,} reviewable hands `xuezhan review` has reviewed: run it to screen the rest."
            )
        seen = reach_text(decisions)
        if seen is not None:
            typer.echo(seen)


def _finding(warehouse: Path, key: str, min_hands: int) -> dict[str, Any] | None:
    found, _ = _current_findings(warehouse, min_hands)
    rows = [r for r in found.iter_rows(named=True) if r["key"] == key]
    return rows[0] if rows else None


def _write_case_pack(warehouse: Path, finding: dict[str, Any], folder: Path, mask: bool) -> tuple[str, str]:
    from dashboards.pages.replay import replay_html
    from pipeline.analytics.queries import connect
    from pipeline.audit.cases import CaseError, write_case_pack
    from pipeline.audit.replay import HandNotFound, hand_issues, stored_record
    from pipeline.validate import validate

    _output_dir(folder, "--pack")
    stored = []
    with connect(warehouse) as con:
        for hand_id in finding.get("hands") or []:
            try:
                found = stored_record(con, hand_id)
            except HandNotFound as exc:
                raise fail(str(exc)) from None
            stored.append((found, validate(found.record), hand_issues(con, hand_id)))
    summary = {k: finding.get(k) for k in ("key", "kind", "subject", "players", "q", "n", "detail")}
    try:
        files, digest = write_case_pack(folder, summary, stored, page=replay_html, mask=mask)
    except CaseError as exc:
        raise fail(str(exc)) from None
    typer.echo(f"wrote the evidence pack {folder} ({plural(len(stored), 'hand')}, {len(files)} files), sha256 {digest}")
    return str(folder), digest


def _case_lines(case: Any) -> list[str]:
    first = case.actions[0]
    lines = [f"{case.case_id}  {case.state.upper()}  {_shown(case.finding)}  ({_shown(first.subject)})"]
    for a in case.actions:
        figures = ", ".join(
            part
            for part in (f"q {a.q:.2g}" if a.q is not None else "", f"n {a.n:,}" if a.n is not None else "")
            if part
        )
        pack = f"; pack {a.pack} sha256 {a.pack_sha256}" if a.pack else ""
        lines.append(
            f"  {a.at.strftime('%Y-%m-%d %H:%M')}  {a.action:<8} {_shown(a.reviewer)}: {_shown(a.note or '')}"
            f"{' (' + figures + ')' if figures else ''}{pack}"
        )
    return lines


@case_app.command("open")
def case_open_command(
    finding: Annotated[str, typer.Argument(help="The finding's key, as `xuezhan findings` lists it.")],
    warehouse: WarehouseIn,
    reviewer: ReviewerOption,
    note: NoteOption = None,
    pack: Annotated[
        Path | None, _option("--pack", ": the finding's hands (the pack's sha256 kept in the case).")
    ] = None,
    mask: MaskOption = False,
    min_hands: MinHandsOption = 200,
) -> None:
    """Open a case on a current finding (or open again a dismissed or confirmed case of the same finding)."""
    from pipeline.audit.cases import CaseError, open_case

    row = _finding(warehouse, finding, min_hands)
    if row is None:
        raise fail(f"no current finding {finding} in {warehouse} (xuezhan findings --all lists them)")
    written = _write_case_pack(warehouse, row, pack, mask) if pack is not None else None
    try:
        case = open_case(warehouse, row, reviewer=reviewer, note=note, pack=written)
    except CaseError as exc:
        raise fail(str(exc)) from None
    for line in _case_lines(case):
        typer.echo(line)


def _decide(action: str, case_id: str, warehouse: Path, reviewer: str, note: str | None, min_hands: int) -> None:
    from pipeline.audit.cases import CaseError, act, read_cases

    case = read_cases(warehouse).get(case_id)
    if case is None:
        raise fail(f"no case {case_id} in {warehouse} (xuezhan case list)")
    # a decision keeps the finding's figures as they are now: a dismissal is judged against them later
    row = _finding(warehouse, case.finding, min_hands) if action in ("confirm", "dismiss", "reopen") else None
    try:
        case = act(warehouse, case_id, action, reviewer=reviewer, note=note, finding=row)
    except CaseError as exc:
        raise fail(str(exc)) from None
    for line in _case_lines(case):
        typer.echo(line)


CaseArgument = Annotated[str, typer.Argument(help="The case's id (xuezhan case list).")]
CaseWarehouse = WarehouseIn


@case_app.command("confirm")
def case_confirm_command(
    case_id: CaseArgument,
    warehouse: CaseWarehouse,
    reviewer: ReviewerOption,
    note: NoteOption = None,
    min_hands: MinHandsOption = 200,
) -> None:
    """Confirm a case (open or appealed)."""
    _decide("confirm", case_id, warehouse, reviewer, note, min_hands)


@case_app.command("dismiss")
def case_dismiss_command(
    case_id: CaseArgument,
    warehouse: CaseWarehouse,
    reviewer: ReviewerOption,
    note: NoteOption = None,
    min_hands: MinHandsOption = 200,
) -> None:
    """Dismiss a case (open or appealed): its finding stays hidden until its evidence grows materially (a q-value
    10× smaller, or twice the evidence it was dismissed on)."""
    _decide("dismiss", case_id, warehouse, reviewer, note, min_hands)


@case_app.command("appeal")
def case_appeal_command(
    case_id: CaseArgument, warehouse: CaseWarehouse, reviewer: ReviewerOption, note: NoteOption = None
) -> None:
    """Appeal a confirmed or dismissed case."""
    _decide("appeal", case_id, warehouse, reviewer, note, 200)


@case_app.command("reopen")
def case_reopen_command(
    case_id: CaseArgument,
    warehouse: CaseWarehouse,
    reviewer: ReviewerOption,
    note: NoteOption = None,
    min_hands: MinHandsOption = 200,
) -> None:
    """Open a dismissed or confirmed case again."""
    _decide("reopen", case_id, warehouse, reviewer, note, min_hands)


@case_app.command("note")
def case_note_command(
    case_id: CaseArgument,
    warehouse: CaseWarehouse,
    reviewer: ReviewerOption,
    note: Annotated[str, _option("--note", ".")],
) -> None:
    """Add a dated note to a case (its state stays)."""
    _decide("note", case_id, warehouse, reviewer, note, 200)


@case_app.command("pack")
def case_pack_command(
    case_id: CaseArgument,
    warehouse: CaseWarehouse,
    out: Annotated[Path, _option("--out", ": the folder of the evidence pack.")],
    reviewer: ReviewerOption,
    mask: MaskOption = False,
    min_hands: MinHandsOption = 200,
) -> None:
    """Write a case's evidence pack (the finding's hands, replayed) and record its hash in the case."""
    from pipeline.audit.cases import act, read_cases

    case = read_cases(warehouse).get(case_id)
    if case is None:
        raise fail(f"no case {case_id} in {warehouse} (xuezhan case list)")
    row = _finding(warehouse, case.finding, min_hands)
    if row is None:
        raise fail(f"the finding {case.finding} of case {case_id} is not among the current findings: no hands to pack")
    written = _write_case_pack(warehouse, row, out, mask)
    note = f"{'masked ' if mask else ''}evidence pack written"
    act(warehouse, case_id, "note", reviewer=reviewer, note=note, pack=written)


@case_app.command("list")
def case_list_command(
    warehouse: CaseWarehouse,
    state: Annotated[str | None, typer.Option("--state", help="Only cases in this state.")] = None,
    fmt: Annotated[TableJson, _option("--format", ": table or json.")] = "table",
) -> None:
    """Every case of the warehouse, with its actions."""
    from pipeline.audit.cases import STATES, read_cases

    if state is not None and state not in STATES:
        raise fail(f"--state: unknown {state} (known: {', '.join(STATES)})")
    if not (warehouse / "hands").is_dir():
        raise fail(f"no warehouse at {warehouse} (run xuezhan ingest first)")
    cases = [c for c in read_cases(warehouse).values() if state is None or c.state == state]
    if fmt == "json":
        typer.echo(json.dumps([c.as_dict() for c in cases], ensure_ascii=False))
        return
    if not cases:
        typer.echo("no case")
    for c in cases:
        for line in _case_lines(c):
            typer.echo(line)


# Every --help ends with the exit-code table (tests/test_cli_vocabulary.py checks each command's).
for _info in (*app.registered_commands, *rules_app.registered_commands, *case_app.registered_commands):
    _info.epilog = EXIT_EPILOG
app.info.epilog = rules_app.info.epilog = case_app.info.epilog = EXIT_EPILOG


if __name__ == "__main__":  # pragma: no cover
    app()
