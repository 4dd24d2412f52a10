"""The warehouse tables: one Arrow schema each, declared once and used by ingest (local and Spark), the tests
and the generated documentation page ``schemas/TABLES.md`` (``python -m schemas.tables``).

Every field carries a description in its metadata; ``TABLES`` keeps the order the page shows.
"""

from __future__ import annotations

import pyarrow as pa


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


PATTERN = pa.struct([("id", pa.string()), ("name_zh", pa.string()), ("fan", pa.int16())])

HANDS = pa.schema(
    [
        _f("hand_id", pa.string(), "the record's hand_id (unique in the warehouse)", False),
        _f(
            "record_sha256",
            pa.string(),
            "sha256 of the raw input line: the same hand_id with another digest is a conflict",
            False,
        ),
        _f("source_file", pa.string(), "input file the record came from"),
        _f("source_line", pa.int64(), "1-based line number in that file"),
        _f("ingest_run", pa.string(), "ingest_runs.run_id that stored the record"),
        _f("session_id", pa.string(), "session (一场) the hand belongs to"),
        _f("hand_no", pa.int32(), "hand number within the session"),
        _f("table_id", pa.string(), "table the hand was played at"),
        _f("played_at", pa.timestamp("us", tz="UTC"), "when the hand was played (UTC)"),
        _f(
            "utc_offset",
            pa.int16(),
            "the UTC offset the record wrote played_at with, in minutes east (+08:00: 480; Z: 0): the record's own "
            "time zone, which dates and months use; null when it gave none (read as UTC) or in a warehouse made "
            "before the column",
        ),
        _f("profile", pa.string(), "rule profile name"),
        _f("ruleset", pa.string(), "the record's ruleset as JSON (profile plus overrides)"),
        _f("players", pa.list_(pa.string()), "player ids by seat (0-3, or 0-2 at a table of three)"),
        _f("seats", pa.int8(), "players at the table (the ruleset's `players`: 4 or 3)"),
        _f("suits", pa.string(), "the suits in play (the ruleset's `suits`: mps, or two of them)"),
        _f(
            "mode",
            pa.string(),
            "blood_battle (血战到底) | ordinary (普通版) | blood_flow (血流成河): the ruleset's `mode`",
        ),
        _f(
            "fan_base",
            pa.int8(),
            "the ruleset's fan count: 1 = a plain hand is 1 fan (the Chinese profiles), 0 = 0 fan (sbr); every fan "
            "column of this hand's rows is in it",
        ),
        _f(
            "base",
            pa.int64(),
            "the ruleset's base (底): the points of the unit this hand's payments are multiples of (hand values, "
            "kongs, flower pigs, penalties; not the void penalties, in points: docs/RULES.md#base), 1 in the Chinese "
            "profiles, 1,000 in majsoul; money of hands of different bases is compared in bases. In a warehouse made "
            "before the column, read from the record's ruleset (its override, else its profile's)",
        ),
        _f("pot", pa.int64(), "points paid to nobody (penalties with penalty_to = pot): the deltas sum to −pot"),
        _f("dealer", pa.int8(), "dealer seat (庄)"),
        _f("events", pa.int32(), "number of events in the record"),
        _f("winners", pa.int8(), "number of players who won (0 to seats - 1; up to seats in 血流成河)"),
        _f("wins", pa.int16(), "number of wins (a player may win several times in 血流成河)"),
        _f("first_winners", pa.list_(pa.int8()), "seats of the first win (several on 一炮多响)"),
        _f("next_dealer", pa.int8(), "the next hand's dealer by the rules (null when the replay did not finish)"),
        _f("wall_left", pa.int16(), "tiles left in the wall at the end"),
        _f(
            "outcome",
            pa.string(),
            "won_out (all but one won in blood battle; the first win in 普通版) | wall_empty (黄庄 with 2+ still "
            "in, or 1 left after the others won; always in 血流成河) | incomplete | stopped",
        ),
        _f("replayed", pa.bool_(), "the replay reached the end of the hand"),
        _f("valid", pa.bool_(), "no error-severity issue"),
        _f("issue_count", pa.int32(), "number of validator issues"),
        _f("has_result", pa.bool_(), "the record carries a claimed settlement"),
        _f(
            "level",
            pa.string(),
            "what the record carries, so what could be checked (schemas/XZLOG.md, levels): full (a wall and every "
            "event) | dealt (the deal and every event, no wall) | observer (one seat's view: the other seats' draws "
            "hidden, their tiles null in events) | settlement (wins, kongs, end states and payments)",
        ),
        _f(
            "wall_commitment",
            pa.string(),
            "what the record's wall commitment proved (schemas/XZLOG.md, commitment): verified (the wall is the one "
            "the revealed seed gives) | seed_only (the seed matches, no wall to compare) | unrevealed (no seed: "
            "nothing checked) | seed_mismatch | wall_mismatch; null: no commitment (or a warehouse ingested before "
            "the column)",
        ),
        _f(
            "not_checked",
            pa.list_(pa.string()),
            "the checks this record's level (or what it left out) could not support, in words; empty for full",
        ),
        _f(
            "waits_judged",
            pa.bool_(),
            "the discards were judged for the information screen's anticipation signal (levels full and dealt: their "
            "judged choices are in wait_choices); false at the other levels; null in a warehouse ingested before "
            "the column (re-ingest it for info-cheats and the report's information page)",
        ),
        _f(
            "ready_judged",
            pa.bool_(),
            "each seat's ready_turn was worked out by the replay (levels full and dealt): a null ready_turn of this "
            "hand means never ready; false at the other levels; null in a warehouse ingested before the column",
        ),
    ]
)

# What every draw_luck_* column of player_hands is (pipeline/game/evidence.py LUCK, schemas/METRICS.md#luck).
LUCK_WORDS = (
    "the sum over those draws of what the tile drawn gave less its mean over the tiles the wall still held (a "
    "fair shuffle's chance: mean zero whatever anybody decides); null where hands.ready_judged is not true (levels "
    "observer and settlement), where the replay stopped, and in a warehouse made before the draw luck"
)

PLAYER_HANDS = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("seat", pa.int8(), "seat (0 to seats - 1)", False),
        _f("player", pa.string(), "player id", False),
        _f("profile", pa.string(), "rule profile name"),
        _f("played_at", pa.timestamp("us", tz="UTC"), "when the hand was played (UTC)"),
        _f("valid", pa.bool_(), "the hand is valid"),
        _f("replayed", pa.bool_(), "the replay reached the end of the hand (facts below are complete)"),
        _f("dealer", pa.bool_(), "this seat dealt (庄)"),
        _f("void", pa.string(), "declared void suit (定缺) m/p/s, null when not declared"),
        _f("won", pa.bool_(), "the player won (胡)"),
        _f("win_order", pa.int8(), "1 for the first win of the hand, 2, 3; winners on one discard share it"),
        _f("how", pa.string(), "discard | self_draw | rob_kong"),
        _f(
            "fan",
            pa.int16(),
            "total fan of the win, computed by the engine, before the cap (the hand's fan_base count)",
        ),
        _f("points", pa.int64(), "hand value of the win after the cap"),
        _f("deal_ins", pa.int8(), "wins this seat paid as discarder (一炮多响 counts each winner)"),
        _f("ready_at_end", pa.bool_(), "still in at an empty wall: ready (下叫)? null otherwise"),
        _f("hua_zhu", pa.bool_(), "flower pig (花猪) at an empty wall"),
        _f("pongs", pa.int8(), "pongs (碰) standing at the end"),
        _f("kongs_direct", pa.int8(), "direct kongs (直杠)"),
        _f("kongs_added", pa.int8(), "added kongs (面下杠) that stood"),
        _f("kongs_concealed", pa.int8(), "concealed kongs (暗杠)"),
        _f("passed_wins", pa.int8(), "wins on a discard or robbed kong the player could take and did not"),
        _f("compulsory_passes", pa.int8(), "passes of a compulsory win in the last four tiles (最后四张必须胡)"),
        _f("delta", pa.int64(), "net points computed by the engine"),
        _f("claimed_delta", pa.int64(), "net points the source system claimed (null without a result)"),
        _f(
            "deal_shanten",
            pa.int8(),
            "向听 of the tiles the seat was dealt (before 换三张), the best over the void suit at a table of three "
            "suits: the stacked-deal screen's score (pipeline/audit/deals.py); null unless the record has every "
            "hand (levels full and dealt) and its deal is legal",
        ),
        _f(
            "deal_suited",
            pa.int8(),
            "tiles the seat was dealt outside its shortest suit (what it keeps after declaring that suit void); "
            "null at a table of two suits and where deal_shanten is",
        ),
        _f(
            "gave_to",
            pa.int8(),
            "the seat this seat's 换三张 tiles went to; null without an exchange and where deal_shanten is",
        ),
        _f(
            "gift_fit",
            pa.bool_(),
            "were the tiles it gave in 换三张 of a longest suit of the receiving seat's deal (a gift that fits: the "
            "collusion screen's exchange signal)? null where gave_to is",
        ),
        _f(
            "void_over",
            pa.int8(),
            "the suits it held fewer tiles of, after the exchange, than the void it declared (bit 0 m, 1 p, 2 s; 0 "
            "when it declared a shortest suit): a void chosen against its hand (the exchange signal); null without "
            "定缺 and where deal_shanten is",
        ),
        _f(
            "ready_turn",
            pa.int8(),
            "the turn (巡目, schemas/METRICS.md#turns) in which the seat's hand first stood ready (听牌: a winning "
            "tile, its void suit respected, as 查叫 judges it), 0 for a seat other than the dealer dealt ready (after "
            "换三张); looked at after the deal, after each of its discards and at its wins; null when never ready, "
            "and where hands.ready_judged is not true (levels observer and settlement, older warehouses)",
        ),
        *(
            _f(f"draw_luck_{name}", pa.float64(), f"draw luck ({what}): {LUCK_WORDS}")
            for name, what in (
                ("win", "own draws while ready: what a self-drawn win on the tile would take, in bases"),
                ("paid", "the other seats' draws while ready: this seat's share of what their self-draw would take"),
                ("ready", "own draws one tile from ready: a tile that makes the hand ready"),
                ("rivals", "the other seats' draws one tile from ready, shared among the seats still in (negated)"),
                ("kong", "own draws: the fourth tile of a concealed triplet or of a pong held"),
                ("fed", "the other seats' draws while this seat is ready: a tile it wins on"),
            )
        ),
    ]
)

EVENTS = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("idx", pa.int32(), "event index in the record (0-based)", False),
        _f("t", pa.string(), "draw | discard | pong | kong | hu", False),
        _f("seat", pa.int8(), "acting seat", False),
        _f("player", pa.string(), "acting player"),
        _f("tile", pa.string(), "tile, e.g. 7p; null where the record does not name it (an observer's hidden draw)"),
        _f("source", pa.int8(), "seat that supplied the tile (pong, direct kong, hu on a discard or robbed kong)"),
        _f("kind", pa.string(), "kong kind: direct | added | concealed"),
        _f("rob_kong", pa.bool_(), "a win robbing an added kong"),
        _f("wall_left", pa.int16(), "tiles left in the wall after the event"),
        _f(
            "could_win",
            pa.list_(pa.int8()),
            "for a discard or added kong: seats that could have won on that tile (null at level observer: the hidden "
            "hands' waits are not known)",
        ),
        _f(
            "could_kong",
            pa.list_(pa.int8()),
            "for a discard: the other seats holding three of its tile concealed, who could kong it (the fourth tile of "
            "their triplet: the collusion screen's kong feeding); null where not every hand is known (levels observer "
            "and settlement) and after the replay stopped",
        ),
        _f(
            "safe_alternative",
            pa.bool_(),
            "for a discard someone could win on: the discarder held a tile nobody could "
            "win on whose discard kept its own hand as close to ready (false: a forced discard); null otherwise",
        ),
        _f(
            "cost",
            pa.int8(),
            "for a discard someone could win on or kong: how many steps (shanten) further from ready it left the "
            "discarder's hand than the best discard it held (0: one of the best; more: a tile given up at a cost to "
            "its own hand, the collusion screen's costly offers); null otherwise",
        ),
        _f("replayed", pa.bool_(), "the event was replayed (false after an illegal action stopped the replay)"),
        _f(
            "ms",
            pa.int32(),
            "the decision time the record gives for the event, in milliseconds (its `ms`); null where it gives none",
        ),
    ]
)

WAIT_OPTION = pa.struct(
    [("tile", pa.string()), ("waits", pa.list_(pa.string())), ("unseen", pa.int8()), ("wall", pa.int8())]
)

WAIT_CHOICES = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("idx", pa.int32(), "the discard's event index", False),
        _f("seat", pa.int8(), "discarding seat", False),
        _f("player", pa.string(), "discarding player"),
        _f(
            "hit",
            pa.bool_(),
            "the wait chosen has the most copies left in the wall among the options (ties for the most count)",
            False,
        ),
        _f(
            "margin",
            pa.int8(),
            "copies in the wall the chosen wait has beyond the best other option (negative: a miss)",
            False,
        ),
        _f("chosen", pa.int8(), "the position in options of the discard made (0-based)", False),
        _f(
            "options",
            pa.list_(WAIT_OPTION),
            "the discards that leave the hand ready on waits with the chosen one's unseen count: the tile thrown, "
            "its winning tiles, their copies the discarder could not see (its hand, the rivers, the melds and the "
            "tiles it gave at 换三张 are seen) and those still in the wall",
            False,
        ),
    ]
)

WINS = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("event", pa.int32(), "index of the hu event", False),
        _f("seat", pa.int8(), "winner seat", False),
        _f("player", pa.string(), "winner"),
        _f("tile", pa.string(), "winning tile"),
        _f("how", pa.string(), "discard | self_draw | rob_kong"),
        _f("source", pa.int8(), "discarder (null for a self-drawn win)"),
        _f("win_order", pa.int8(), "1, 2, 3"),
        _f("fan", pa.int16(), "total fan computed by the engine (before the cap; the hand's fan_base count)"),
        _f("points", pa.int64(), "hand value after the cap"),
        _f("per_payer", pa.int64(), "what each payer pays (points, plus the self-draw base where played)"),
        _f("title", pa.string(), "the hand's name (平胡, 清一色, 龙七对, ...)"),
        _f("patterns", pa.list_(PATTERN), "fan breakdown"),
        _f("claimed_fan", pa.int16(), "fan the source system claimed (read in the hand's fan_base count)"),
        _f("claimed_points", pa.int64(), "points the source system claimed"),
        _f(
            "turn",
            pa.int8(),
            "the winner's turn (巡目, schemas/METRICS.md#turns) at the win; null at level settlement (no draws) and in "
            "a warehouse ingested before the column (the analytics count it from the events there)",
        ),
        _f(
            "source_turn",
            pa.int8(),
            "the discarder's turn at the tile won on (its discard, or its robbed added kong): the deal-in's turn; null "
            "for a self-drawn win and where turn is",
        ),
    ]
)

PAYMENTS = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("side", pa.string(), "computed (by the engine) | claimed (by the source system)", False),
        _f("payer", pa.int8(), "paying seat", False),
        _f("payee", pa.int8(), "receiving seat; null for a penalty to the pot (penalty_to = pot: it leaves the table)"),
        _f("payer_player", pa.string(), "paying player"),
        _f("payee_player", pa.string(), "receiving player (null for the pot)"),
        _f("amount", pa.int64(), "points", False),
        _f("reason", pa.string(), "hu | kong | hua_zhu | cha_jiao | tui_shui | transfer | penalty", False),
        _f("event", pa.int32(), "event that caused it (null for end-of-wall steps)"),
    ]
)

ISSUES = pa.schema(
    [
        _f("hand_id", pa.string(), "hand (null for a line that is not a record)"),
        _f("code", pa.string(), "issue code (schemas/ISSUE_CODES.md)", False),
        _f("severity", pa.string(), "error | warning", False),
        _f("event", pa.int32(), "event index"),
        _f("seat", pa.int8(), "seat concerned"),
        _f("expected", pa.string(), "what the rules give"),
        _f("actual", pa.string(), "what the record says"),
        _f("message", pa.string(), "one-line explanation"),
        _f("money", pa.int64(), "points the difference moves (scoring and settlement issues), else null"),
        _f("position", pa.string(), "the replay's state where an illegal action stopped it (HandState.fingerprint)"),
        _f("source_file", pa.string(), "input file"),
        _f("source_line", pa.int64(), "line number"),
    ]
)

REJECTS = pa.schema(
    [
        _f("source_file", pa.string(), "input file", False),
        _f("source_line", pa.int64(), "1-based line number (0: the file itself)", False),
        _f("raw", pa.large_binary(), "the raw line, whole (null when spilled to raw_path)"),
        _f("raw_path", pa.string(), "side file holding a huge raw line, relative to the warehouse"),
        _f("size", pa.int64(), "bytes in the raw line", False),
        _f("sha256", pa.string(), "sha256 of the raw line", False),
        _f("code", pa.string(), "why it is not a stored record (an issue code, or INGEST_*)", False),
        _f("message", pa.string(), "explanation"),
        _f("hand_id", pa.string(), "hand_id when one could be read"),
        _f("ingest_run", pa.string(), "ingest_runs.run_id"),
    ]
)

INGEST_RUNS = pa.schema(
    [
        _f("run_id", pa.string(), "run identifier", False),
        _f("started_at", pa.timestamp("us", tz="UTC"), "start"),
        _f(
            "finished_at",
            pa.timestamp("us", tz="UTC"),
            "end; null while the run is incomplete (running, or stopped early)",
        ),
        _f("inputs", pa.list_(pa.string()), "paths given"),
        _f("engine", pa.string(), "local | spark"),
        _f("workers", pa.int32(), "worker processes"),
        _f("lines_read", pa.int64(), "non-blank input lines (plus one per unreadable file)"),
        _f("records_stored", pa.int64(), "records stored in hands (valid or not)"),
        _f("records_invalid", pa.int64(), "stored records with an error-severity issue"),
        _f("rejects", pa.int64(), "lines stored in rejects (not records, or conflicts)"),
        _f("duplicates", pa.int64(), "lines skipped: the same record already stored (same hand_id, same bytes)"),
        _f("conflicts", pa.int64(), "rejects that reuse a stored hand_id with other content"),
        _f("seconds", pa.float64(), "wall time"),
        _f("version", pa.string(), "xuezhan version"),
    ]
)

# Written by `xuezhan review` (pipeline/audit/tallies.py), not by ingest: one row per player-hand reviewed.
# TALLY_VERSION: the review's version (the reference policy and the counting): bump it whenever a hand's tallies
# would change; `stats` reads the rows of this version only and `xuezhan review` reviews the others' hands again
# (tests/test_decision_tallies.py holds a digest of the sample's tallies, to remind).
# 2: decision_cells and decision_times added (the hands reviewed at 1 have none: they are reviewed again).
TALLY_VERSION = "2"
DECISION_TALLIES = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("seat", pa.int8(), "seat (0 to seats - 1)", False),
        _f("player", pa.string(), "player id", False),
        _f(
            "version",
            pa.string(),
            "the review's version (pipeline/audit/tallies.py TALLY_VERSION): stats reads the current version's rows "
            "only, and `xuezhan review` reviews again the hands reviewed by another",
            False,
        ),
        _f("reviewed_at", pa.timestamp("us", tz="UTC"), "when the review pass stored the row"),
        _f(
            "decisions",
            pa.int32(),
            "the seat's decisions the reference policy ranked (换三张, 定缺, each turn, each claim or pass)",
        ),
        _f("discards", pa.int32(), "its discards (on its turn, a discard chosen)"),
        _f(
            "judged_discards",
            pa.int32(),
            "its non-forced discards: those whose legal discards differ in efficiency (some discard leaves a higher "
            "shanten, or the same shanten with fewer live tiles, than the best)",
        ),
        _f(
            "judged_efficient",
            pa.int32(),
            "of judged_discards, those whose tile had the best shanten and live-tile count the policy found",
        ),
        _f("deal_ins", pa.int32(), "its discards somebody won on (an added kong robbed is not counted)"),
        _f(
            "avoidable_deal_ins",
            pa.int32(),
            "of deal_ins, those where it held another legal discard of danger 0 (safe by what it could see) at no "
            "worse shanten",
        ),
        _f("win_chances", pa.int32(), "decisions with a win among its options (a self-draw, a discard, a robbed kong)"),
        _f("missed_wins", pa.int32(), "of win_chances, those it did not win on"),
        _f(
            "void_held",
            pa.int32(),
            "its discards made while holding a tile of its declared void suit (定缺); null where the rules force "
            "void-suit tiles first (void_discard_first), at a table of two suits, or without a declared void",
        ),
        _f(
            "void_kept",
            pa.int32(),
            "of void_held, those of a tile of another suit (the void suit's tile kept); null where void_held is",
        ),
    ]
)

# Written by `xuezhan review` with decision_tallies, in the same batch: one row per player-hand, decision kind and
# band (pipeline/audit/assist.py HandCell), what the engine-assistance screen (`xuezhan assist`) sums instead of
# reviewing the hand again. The bands are assist.py's (BANDS, CLEAR_GAP): changing them, or the weights, changes
# these rows, so TALLY_VERSION is bumped with them too.
DECISION_CELLS = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("seat", pa.int8(), "seat (0 to seats - 1)", False),
        _f("player", pa.string(), "player id", False),
        _f("version", pa.string(), "the review's version, as decision_tallies.version", False),
        _f("reviewed_at", pa.timestamp("us", tz="UTC"), "when the review pass stored the row"),
        _f("kind", pa.string(), "the decisions' kind: turn, claim, void or exchange", False),
        _f(
            "band",
            pa.int8(),
            "their band: -1 forced (the policy cannot tell the options apart), 0-3 the gap between the policy's "
            "first choice and its runner-up (edges 0.4, 0.9, 1.5), 4 clear (a gap of 2.25 or more), 5 a win "
            "ranked first",
            False,
        ),
        _f("n", pa.int32(), "decisions", False),
        _f("agreed", pa.int32(), "of n, those agreeing with the policy's first choice", False),
        _f("w", pa.float64(), "their summed ambiguity weight (pipeline/audit/decisions.py weight)", False),
        _f("wa", pa.float64(), "the summed weight of the agreed ones", False),
        _f("w2", pa.float64(), "the summed squared weights", False),
        _f("w3", pa.float64(), "the summed cubed weights", False),
        _f(
            "top_weight",
            pa.float64(),
            "the weight of the heaviest agreed decision (the one assist may show as evidence); null: none agreed",
        ),
        _f("top_event", pa.int32(), "its event (null for the void and the exchange, or none agreed)"),
        _f("top_chosen", pa.string(), "its chosen option, as the review describes it"),
        _f("top_gap", pa.float64(), "its gap"),
    ]
)

# Written by `xuezhan review` with decision_tallies, in the same batch, for the hands whose records carry decision
# times (ms): one row per player-hand, difficulty and time, what the think-time screen (`xuezhan think-time`) counts
# instead of replaying the hand again (pipeline/audit/think.py record_times).
DECISION_TIMES = pa.schema(
    [
        _f("hand_id", pa.string(), "hand", False),
        _f("seat", pa.int8(), "seat (0 to seats - 1)", False),
        _f("player", pa.string(), "player id", False),
        _f("version", pa.string(), "the review's version, as decision_tallies.version", False),
        _f("reviewed_at", pa.timestamp("us", tz="UTC"), "when the review pass stored the row"),
        _f(
            "difficulty",
            pa.int8(),
            "the decisions' difficulty: the options the reference policy cannot call clearly worse than its first "
            "choice, less one (pipeline/game/policy.py difficulty)",
            False,
        ),
        _f("ms", pa.int32(), "their decision time as the record gives it, in milliseconds", False),
        _f("n", pa.int32(), "the player's timed decisions of the hand of that difficulty and time", False),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "hands": HANDS,
    "player_hands": PLAYER_HANDS,
    "events": EVENTS,
    "wait_choices": WAIT_CHOICES,
    "wins": WINS,
    "payments": PAYMENTS,
    "issues": ISSUES,
    "rejects": REJECTS,
    "ingest_runs": INGEST_RUNS,
    "decision_tallies": DECISION_TALLIES,
    "decision_cells": DECISION_CELLS,
    "decision_times": DECISION_TIMES,
}

# The tables `xuezhan review` writes (pipeline/audit/tallies.py), never ingest: ingest's rows hold none of them.
REVIEW_TABLES = ("decision_tallies", "decision_cells", "decision_times")

# The case log (``xuezhan case``, :mod:`pipeline.audit.cases`): not written by ingest, so not among TABLES (no
# batch, no manifest, no compaction). One file per action under DIR/cases/, never changed once written; a case's
# state is its last action's.
CASES = pa.schema(
    [
        _f("action_id", pa.string(), "the action (a file of its own: cases/part-<action_id>.parquet)", False),
        _f("case_id", pa.string(), "the case", False),
        _f("at", pa.timestamp("us", tz="UTC"), "when the action was taken", False),
        _f("action", pa.string(), "open | confirm | dismiss | appeal | reopen | note", False),
        _f("state", pa.string(), "the case's state after it: open | confirmed | dismissed | appealed", False),
        _f("finding", pa.string(), "the finding's key (kind:subject, as `xuezhan findings` lists it)", False),
        _f("kind", pa.string(), "the finding's kind (team, pair, information, deals, scoring, victim, results, ...)"),
        _f("subject", pa.string(), "what the finding is about, in words"),
        _f("players", pa.list_(pa.string()), "whom it concerns"),
        _f("reviewer", pa.string(), "who took the action"),
        _f("note", pa.string(), "the reviewer's note"),
        _f("q", pa.float64(), "the finding's q-value when the action was taken (null: none)"),
        _f("n", pa.int64(), "the size of its evidence then: shared hands, judged decisions, dealt hands (null: none)"),
        _f("detail", pa.string(), "the finding's figures then, in words"),
        _f("pack", pa.string(), "the evidence pack written with the action (a folder), if any"),
        _f("pack_sha256", pa.string(), "sha256 over the pack's files (names and contents, in name order)"),
    ]
)

# Columns a warehouse written before them lacks that the analytics' views derive from what it holds
# (pipeline.analytics.queries): such a warehouse has them, so they are not listed as missing (no warning, no
# reason to ingest again).
DERIVED: dict[str, tuple[str, ...]] = {"hands": ("base",)}


def page() -> str:
    lines = [
        "# Warehouse tables",
        "",
        "Parquet folders under the warehouse directory, one per table, registered as views in",
        "`warehouse.duckdb`. Generated from `schemas/tables.py` by `python -m schemas.tables`.",
    ]
    for name, schema in {**TABLES, "cases": CASES}.items():
        lines += ["", f"## `{name}`", ""]
        if name == "cases":
            lines += ["The case log of `xuezhan case` (not written by ingest): one row per action.", ""]
        lines += ["| column | type | meaning |", "|---|---|---|"]
        for field in schema:
            doc = (field.metadata or {}).get(b"doc", b"").decode()
            lines.append(f"| `{field.name}` | `{field.type}`{'' if field.nullable else ' not null'} | {doc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(page(), end="")
