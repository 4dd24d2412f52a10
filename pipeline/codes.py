"""The issue-code catalogue: every finding the validator can report, with a stable code.

Codes are part of the contract (they land in the warehouse's ``issues`` table and in audit output): never
rename one, add new ones. Families: ``SCHEMA_*`` (the record's shape), ``RULESET_*``, ``TILE_*`` (tiles
that cannot exist), ``TURN_*`` (who acts when), ``CLAIM_*`` (pong, kong, robbing, passing), ``WIN_*``,
``SCORE_*`` (claimed fan and points), ``SETTLE_*`` (claimed payments and deltas), ``SESSION_*``,
``INGEST_*`` (reasons a line lands in the warehouse's ``rejects`` rather than being stored as a record), and
``IMPORT_*`` (reasons ``xuezhan import`` writes an input line to its rejects rather than into a record).
:func:`levels_of` says at which levels of record (schemas/XZLOG.md) a code can be raised, and
:data:`NOT_CHECKED` what each level cannot support.

``python -m pipeline.codes`` prints the documentation page ``schemas/ISSUE_CODES.md``; a test keeps the
page in step with this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    severity: Severity
    meaning: str
    example: str
    stops_replay: bool = False


_CODES = (
    # -- the record's shape -------------------------------------------------------------------------
    Code("SCHEMA_JSON", "error", "The line is not a JSON object.", '`{"format": "xzlog/1",` (cut off)', True),
    Code(
        "SCHEMA_FORMAT",
        "error",
        "`format` is missing or not `xzlog/1` (a later version, or not a record).",
        '`"format": "xzlog/2"`',
        True,
    ),
    Code(
        "SCHEMA_FIELD",
        "error",
        "A required field is missing, or a field is not known to the format.",
        "no `players`; a top-level `foo`",
        True,
    ),
    Code("SCHEMA_TYPE", "error", "A field has the wrong type or is out of range.", '`"dealer": 5`', True),
    Code(
        "SCHEMA_TIME",
        "warning",
        "`played_at` is not an RFC 3339 date-time; the hand is replayed and stored with no time.",
        '`"played_at": "2026-13-01 25:00"`',
    ),
    Code(
        "SCHEMA_SHAPE",
        "error",
        "The record's table (players, seats, wall size, hands) is not the table of its ruleset (`players`, `suits`).",
        "4 players under a three-player profile; a 108-tile wall at a two-suit table",
        True,
    ),
    Code(
        "SCHEMA_EVENT",
        "error",
        "An event is malformed: unknown `t`, missing or extra fields.",
        '`{"t": "chow", ...}`; a direct kong without `from`',
        True,
    ),
    Code(
        "SCHEMA_RESULT",
        "error",
        "The claimed `result` is malformed (its settlement is not compared).",
        '`"deltas": [1, 2]`',
    ),
    Code(
        "RULESET_UNKNOWN",
        "error",
        "The ruleset names an unknown profile, switch or switch value.",
        '`{"profile": "chengdu", "cpa": 4}`',
        True,
    ),
    # -- tiles ---------------------------------------------------------------------------------------------
    Code("TILE_NOTATION", "error", "A tile is not written `1m`-`9s`.", '`"0m"`, `"5z"`', True),
    Code(
        "TILE_WALL",
        "error",
        "The wall is not the table's tiles (36 a suit in play), four of each.",
        "a wall with five 3m",
        True,
    ),
    Code(
        "TILE_SUIT",
        "error",
        "A tile of a suit the table does not play (a two-suit table, `suits`).",
        "a 5m dealt or drawn at a 筒/条 table",
        True,
    ),
    Code(
        "TILE_DEAL", "error", "The deal disagrees with the wall's dealing order.", "seat 1 dealt 9s, wall says 8s", True
    ),
    Code("TILE_FIFTH_COPY", "error", "More than four copies of a tile are in play.", "a fifth 7p drawn", True),
    Code(
        "TILE_WALL_ORDER",
        "error",
        "A drawn tile is not the wall's next tile (kong replacements too).",
        "draw 5p where the wall's next tile is 2s",
        True,
    ),
    Code(
        "TILE_COMMIT_SEED",
        "error",
        "The revealed seed does not hash to the wall commitment the source published (`commitment`).",
        "sha256(seed + salt) is 3f…, the commitment is 9a…",
    ),
    Code(
        "TILE_COMMIT_WALL",
        "error",
        "The wall is not the one the committed seed gives (a wall changed after the commitment).",
        "the wall differs from the one the committed seed gives for hand 2 from tile 14",
    ),
    Code(
        "TILE_NOT_HELD",
        "error",
        "A seat discards, pongs, kongs or exchanges a tile it does not hold.",
        "discard 9s holding no 9s",
        True,
    ),
    Code(
        "TILE_COUNT_SHORT",
        "error",
        "小相公: a seat holds too few tiles (dealt short, or played without drawing).",
        "seat 2 discards without drawing",
        True,
    ),
    Code(
        "TILE_COUNT_LONG",
        "error",
        "大相公: a seat holds too many tiles (dealt long, or drew twice).",
        "seat 3 draws twice in a row",
        True,
    ),
    Code(
        "TILE_EXCHANGE",
        "error",
        "换三张 is wrong: not three tiles of one suit, or played where the profile has none.",
        "gives 2s 5s 9p",
        True,
    ),
    Code(
        "TILE_VOID",
        "error",
        "定缺 is wrong: missing where the profile requires it, or not m, p or s.",
        '`"que": ["s", null, "m", "p"]` under `app`',
        True,
    ),
    # -- turns ---------------------------------------------------------------------------------------------
    Code("TURN_ORDER", "error", "A seat acts out of turn.", "seat 3 draws after seat 1 discarded", True),
    Code("TURN_WON", "error", "A seat that has already won acts again.", "seat 1 discards after its hu", True),
    Code(
        "TURN_AFTER_WIN",
        "error",
        "血流成河: a player who has won discards another tile than the one it drew (its hand is locked, "
        "`after_win_discard`).",
        "seat 1, having won, draws 3s and discards 7p",
        True,
    ),
    Code(
        "TURN_AFTER_END",
        "error",
        "Events follow the end of the hand (three winners or an empty wall).",
        "a draw after the last wall tile",
        True,
    ),
    Code(
        "TURN_INCOMPLETE",
        "error",
        "The record stops before the hand is over (truncated).",
        "the last event is a discard with 30 tiles in the wall",
        True,
    ),
    Code(
        "TURN_VOID_FIRST",
        "error",
        "A void-suit tile is held but another tile is discarded (profile: void first).",
        "discard 5m holding 3s, void s",
        True,
    ),
    # -- claims -----------------------------------------------------------------------------------------------
    Code(
        "CLAIM_NOT_ALLOWED",
        "error",
        "A pong or kong that the hand or the moment does not allow.",
        "pong with one 7p; a kong with an empty wall; pong of an old discard",
        True,
    ),
    Code(
        "CLAIM_PRECEDENCE",
        "error",
        "A pong or kong after somebody won on the same discard (a win takes precedence).",
        "hu by seat 1 then pong by seat 2 on the same 4m",
        True,
    ),
    Code(
        "CLAIM_ROB_CONCEALED",
        "error",
        "A win robbing a concealed kong (only added kongs can be robbed).",
        "hu rob_kong after a concealed kong",
        True,
    ),
    Code(
        "CLAIM_PASSED_WIN",
        "error",
        "过手胡: a win on a discard after passing one, before the player's next draw, not worth more fan.",
        "passes 3m (1 fan), then wins on 6m (1 fan)",
        True,
    ),
    Code(
        "CLAIM_COMPULSORY_PASS",
        "error",
        "最后四张能胡必须胡: a possible win in the last four tiles was passed.",
        "seat 2 could win on the discard with 2 tiles left, and did not",
    ),
    # -- wins -----------------------------------------------------------------------------------------------------
    Code("WIN_FALSE", "error", "诈胡: a hu on a hand that does not win.", "hu on 11144478m45677p + 7p", True),
    Code(
        "WIN_VOID_SUIT",
        "error",
        "A hu while holding the declared void suit, or three suits.",
        "hu with 2s in hand, void s",
        True,
    ),
    Code(
        "WIN_WRONG_TILE",
        "error",
        "A hu on a tile other than the one just discarded, drawn or added.",
        "hu 5m after a 6m discard",
        True,
    ),
    # -- claimed scores ---------------------------------------------------------------------------------------------
    Code(
        "SCORE_FAN", "error", "A claimed win's fan differs from the engine's.", "claimed 3, computed 4 (a missed root)"
    ),
    Code("SCORE_POINTS", "error", "A claimed win's points differ from the engine's.", "claimed 4, computed 8"),
    Code(
        "SCORE_WIN_MISSING",
        "error",
        "A win in the events has no entry in the claimed `wins`, or the reverse.",
        "`wins` lists seat 2 at event 40, which is a discard",
    ),
    # -- claimed settlement ----------------------------------------------------------------------------------------
    Code(
        "SETTLE_MISSING",
        "error",
        "A payment the rules require is not among the claimed payments.",
        "no kong payment for the concealed kong at event 12",
    ),
    Code(
        "SETTLE_EXTRA", "error", "A claimed payment the rules do not allow.", "a cha_jiao payment to a player not ready"
    ),
    Code(
        "SETTLE_AMOUNT",
        "error",
        "A claimed payment has the right parties and reason but a wrong amount.",
        "self-draw paid 4, the rules say 5 (自摸加底)",
    ),
    Code("SETTLE_PAYER", "error", "A claimed payment is paid by the wrong seat.", "seat 1 pays a win seat 3 dealt in"),
    Code("SETTLE_DELTA", "error", "A claimed delta differs from the engine's.", "seat 0 claimed -9, computed -7"),
    Code(
        "SETTLE_UNBALANCED",
        "error",
        "The claimed deltas do not sum to zero (to −pot where penalties go to the pot), or disagree with the "
        "claimed payments.",
        "`deltas: [-9, 7, 4, -1]`",
    ),
    Code(
        "SETTLE_END",
        "error",
        "A record's declared end states do not name exactly the players still in at the end (a settlement "
        "record's), or the hidden hands still in (an observer record's).",
        "`end` lists seat 1, who won at event 2",
    ),
    Code(
        "INTERNAL",
        "error",
        "The engine failed on this record (a bug in xuezhan, not in the record): please report it.",
        "an assertion inside the replay",
        True,
    ),
    # -- ingest (rejects only: a line that is not stored as a record) --------------------------------------
    Code(
        "INGEST_READ",
        "error",
        "A file could not be read to its end (missing, truncated or corrupt compression); "
        "the lines before the fault are kept.",
        "a .jsonl.gz cut off in the middle",
        True,
    ),
    Code(
        "INGEST_LINE_TOO_LONG",
        "error",
        "A line far longer than any hand record; kept whole in a side file (rejects.raw_path).",
        "a 100 MB line",
        True,
    ),
    Code(
        "INGEST_SPILL_CAP",
        "error",
        "A line longer than a side file may hold (256 MiB): its size and sha256 are kept, its bytes are not "
        "(find it at source_file, source_line).",
        "a 2 GB line of zeros from a gzip bomb",
        True,
    ),
    Code(
        "INGEST_INPUT_CAP",
        "error",
        "A file decompressed past the size one input may reach (64 GiB, or 200 times its compressed size "
        "plus 1 GiB): the lines before are kept, the rest of the file is not read.",
        "a 2.6 MB .jsonl.gz of zeros",
        True,
    ),
    Code(
        "INGEST_CONFLICT",
        "error",
        "A record reuses a hand_id already stored with other content; the stored record stays.",
        "t42-s7-h3 ingested again with another settlement",
        True,
    ),
    # -- import (rejects of `xuezhan import`: input that makes no record) --------------------------------------
    Code(
        "IMPORT_HEADER",
        "error",
        "A score sheet's header lacks a required column (hand_id, item, seat): no row can be read.",
        "a header `牌局,项目` with no player column",
        True,
    ),
    Code(
        "IMPORT_ROW",
        "error",
        "An input row or event that makes no record (every row of its hand, every event of its kyoku, with it).",
        "an unknown item `杠上杠`; a kyoku with no end_kyoku",
        True,
    ),
    # -- sessions -----------------------------------------------------------------------------------------------------
    Code("SESSION_DUPLICATE_HAND", "error", "Two records share a `hand_id`.", "t42-s7-h3 twice"),
    Code("SESSION_HAND_GAP", "warning", "`hand_no` skips numbers within a session.", "hands 1, 2, 4"),
    Code("SESSION_HAND_REPEAT", "error", "`hand_no` repeats within a session.", "two hands numbered 3"),
    Code(
        "SESSION_DEALER",
        "error",
        "The dealer does not follow the previous hand (first winner; the discarder "
        "after 一炮多响; the same dealer after no win).",
        "hand 4 dealt by seat 2, hand 3's first winner was seat 1",
    ),
    Code("SESSION_PLAYERS", "warning", "The players of a session change between hands.", "p017 replaced by p233"),
)

CODES: dict[str, Code] = {c.code: c for c in _CODES}

Level = Literal["full", "dealt", "observer", "settlement"]
LEVELS: tuple[Level, ...] = ("full", "dealt", "observer", "settlement")
# The codes a settlement record (no tiles, no turns) cannot raise: they judge tiles, turns and calls.
_NEEDS_EVENTS = ("TILE_", "CLAIM_", "WIN_")
_NEEDS_EVENTS_TOO = ("TURN_ORDER", "TURN_AFTER_WIN", "TURN_INCOMPLETE", "TURN_VOID_FIRST")
# The checks each level cannot support, in words: stored with every hand (hands.not_checked), never passed
# in silence.
NOT_CHECKED: dict[str, tuple[str, ...]] = {
    "full": (),
    "dealt": ("the draw order (no wall)",),
    "observer": (
        "the draw order (no wall)",
        "the hidden hands' tiles: only that each of their actions is possible with the tiles in view (no fifth copy)",
        "a hidden winner's locked hand (血流成河): that it discards the tile it drew, that its kongs keep its waits",
        "the hidden hands' wins: possible with the tiles in view, valued by their claims",
        "the hidden hands' passed and compulsory wins (过手胡, 最后四张)",
        "the void suit (定缺) among the hidden hands' unseen tiles: discarded first, held at the end",
        "the hidden hands' end states: ready values and flower pigs as declared (end)",
        "who could have won on each discard (the hidden hands' waits)",
    ),
    "settlement": (
        "the draw order (no wall)",
        "the tiles: conservation, holding, legal discards and calls",
        "the turns: who acts when",
        "each win's shape and fan from its tiles (the claimed patterns are scored)",
        "ready values and flower pigs from the hands (the declared end states are used)",
        "passed and compulsory wins",
    ),
}

# A record whose source played 定缺 but did not store it (``"unrecorded": ["que"]``): every check that needs a
# seat's void suit, listed per hand instead of run on a guessed suit.
VOID_UNRECORDED: tuple[str, ...] = (
    "the void suits (定缺 not recorded): a win or meld in one's void suit, void tiles discarded first, and the end"
    " of the wall (查花猪/查大叫/退税, void penalties: who was ready depends on the void suit)",
)


def levels_of(code: str) -> tuple[str, ...]:
    """The levels of record at which ``code`` can be raised (schemas/XZLOG.md, levels).

    >>> levels_of("TILE_NOT_HELD"), levels_of("TILE_WALL_ORDER"), levels_of("SETTLE_AMOUNT")
    (('full', 'dealt', 'observer'), ('full',), ('full', 'dealt', 'observer', 'settlement'))
    >>> levels_of("TILE_DEAL"), levels_of("SETTLE_END"), levels_of("INGEST_CONFLICT")
    (('full', 'dealt'), ('observer', 'settlement'), ())
    """
    if code.startswith(("INGEST_", "IMPORT_")):
        return ()  # a reject, not a finding on a record
    if code in ("TILE_WALL", "TILE_WALL_ORDER", "TILE_COMMIT_WALL"):
        return ("full",)
    if code == "TILE_DEAL":
        return ("full", "dealt")  # a deal against a wall; an observer sees one hand and no wall
    if code == "SETTLE_END":
        return ("observer", "settlement")  # the declared end states (an observer's, of the hands it did not see)
    if code == "TILE_COMMIT_SEED":
        return LEVELS  # the seed against its published hash: no tile of the record is needed
    if code.startswith(_NEEDS_EVENTS) or code in _NEEDS_EVENTS_TOO:
        return ("full", "dealt", "observer")
    return LEVELS


class Fault(ValueError):
    """A finding raised where it is found, in one shape for every layer: a ``code`` of :data:`CODES`, the
    message, and where it is (``event`` index, ``seat``) and what differed (``expected``, ``actual``).
    :class:`~pipeline.game.record.RecordError` (the record's shape) and
    :class:`~pipeline.game.state.IllegalAction` (the play) are the two kinds; the validator turns either
    into an issue row the same way."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        event: int | None = None,
        seat: int | None = None,
        expected: object = None,
        actual: object = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.event = event
        self.seat = seat
        self.expected = expected
        self.actual = actual


def page() -> str:
    """The Markdown page listing every code."""
    lines = [
        "# Issue codes",
        "",
        "Every finding of `xuezhan validate` carries one of these codes (generated from `pipeline/codes.py` by",
        "`python -m pipeline.codes`; do not edit by hand). *Stops* means the replay of the hand stops there:",
        "the rest of the record cannot be judged, and its claimed settlement is not compared.",
        "",
        "*Levels* are the levels of record at which a code can be raised (`schemas/XZLOG.md`, levels): a check a",
        "record's level cannot support is listed as not checked with the hand, never passed.",
        "",
        "| code | severity | stops | levels | meaning | example |",
        "|---|---|---|---|---|---|",
    ]
    for c in _CODES:
        stops = "yes" if c.stops_replay else ""
        levels = ", ".join(levels_of(c.code)) or "(a reject)"
        lines.append(f"| `{c.code}` | {c.severity} | {stops} | {levels} | {c.meaning} | {c.example} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(page(), end="")
