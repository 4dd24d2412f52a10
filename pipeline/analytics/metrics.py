"""The metric registry: every player metric once — id, names, exact definition, unit — used by ``stats``,
the reports and the generated page ``schemas/METRICS.md`` (``python -m pipeline.analytics.metrics``).

A metric is computed from the base counts of ``sql/player_base.sql`` (or its Polars twin, the tests' oracle
``tests/oracle_frames.py``):

- a **rate** is ``num / den`` with a Wilson 95% interval;
- a **mean** is ``sum / n`` with a normal 95% interval from the sum of squares;
- a **count** is a plain total.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pipeline.analytics.levels import NEEDS, TABLE_FIGURES, levels_page
from pipeline.analytics.stats import mean_interval, poisson_interval, wilson

Kind = Literal["rate", "mean", "count"]


@dataclass(frozen=True, slots=True)
class Metric:
    id: str
    name_zh: str
    name_en: str
    kind: Kind
    num: str  # base column: numerator (rate), sum (mean), total (count)
    den: str | None  # base column: denominator (rate) or n (mean)
    sq: str | None  # base column: sum of squares (mean)
    unit: str
    definition: str

    def value(self, base: Mapping[str, Any]) -> dict[str, Any]:
        """``{"value", "num", "den", "ci_low", "ci_high"}`` (means: ``n`` instead of ``den``)."""
        num = base[self.num] or 0
        if self.kind == "count":
            return {"value": num}
        den = base[self.den] or 0  # type: ignore[index]
        if self.kind == "rate":
            low, high = wilson(num, den)
            return {"value": num / den if den else None, "num": num, "den": den, "ci_low": low, "ci_high": high}
        mean, low, high = mean_interval(num, base[self.sq] or 0, den)  # type: ignore[index]
        return {"value": mean, "sum": num, "n": den, "ci_low": low, "ci_high": high}


def _rate(id: str, zh: str, en: str, num: str, den: str, definition: str, unit: str = "share of hands") -> Metric:
    return Metric(id, zh, en, "rate", num, den, None, unit, definition)


def _mean(id: str, zh: str, en: str, total: str, n: str, definition: str, unit: str) -> Metric:
    return Metric(
        id,
        zh,
        en,
        "mean",
        total,
        n,
        total + "_sq" if not total.endswith("_sum") else total[:-4] + "_sq",
        unit,
        definition,
    )


def _count(id: str, zh: str, en: str, total: str, definition: str, unit: str = "count") -> Metric:
    return Metric(id, zh, en, "count", total, None, None, unit, definition)


METRICS: tuple[Metric, ...] = (
    _count("hands", "局数", "hands", "hands", "hands played whose replay reached the end", "hands"),
    _rate("win_rate", "胡牌率", "win rate", "wins", "hands", "hands the player won / hands played"),
    _count(
        "self_draw_wins", "自摸次数", "self-drawn wins", "self_draw_wins", "wins by self-draw (自摸, 杠上花 included)"
    ),
    _rate(
        "self_draw_share",
        "自摸占比",
        "self-draw share",
        "self_draw_wins",
        "wins",
        "self-drawn wins / wins",
        "share of wins",
    ),
    _rate(
        "first_winner_rate",
        "首胡率",
        "first-winner rate",
        "first_wins",
        "hands",
        "hands the player won first (一炮多响 on the first win: every winner of it) / hands played",
    ),
    _rate(
        "second_winner_rate",
        "二胡率",
        "second-winner rate",
        "second_wins",
        "hands",
        "hands the player was the second winner / hands played",
    ),
    _rate(
        "third_winner_rate",
        "三胡率",
        "third-winner rate",
        "third_wins",
        "hands",
        "hands the player was the third winner / hands played",
    ),
    _rate(
        "deal_in_rate",
        "点炮率",
        "deal-in rate",
        "deal_in_hands",
        "hands",
        "hands in which the player dealt in at least once (a discard or added kong someone won on) / hands played",
    ),
    _mean(
        "deal_ins_per_hand",
        "场均点炮",
        "deal-ins per hand",
        "deal_ins",
        "hands",
        "wins paid by the player as discarder / hands played (一炮多响 counts each winner)",
        "deal-ins per hand",
    ),
    _mean(
        "points_lost_per_deal_in",
        "点炮均失分",
        "points lost per deal-in",
        "points_lost",
        "deal_ins",
        "points paid for wins the player dealt in / deal-ins",
        "points",
    ),
    _mean(
        "fan_per_win",
        "平均番数",
        "fan per win",
        "fan_sum",
        "wins",
        "total fan of the player's wins (engine, before the cap; in the Chinese count, a plain hand 1 fan, "
        "whatever the hand's profile counts) / wins",
        "fan",
    ),
    _mean(
        "points_per_win",
        "平均得分",
        "points per win",
        "points_sum",
        "wins",
        "hand value of the player's wins (after the cap) / wins",
        "points",
    ),
    _mean(
        "net_points_per_hand",
        "场均净分",
        "net points per hand",
        "delta_sum",
        "hands",
        "net points computed by the engine / hands played",
        "points",
    ),
    _mean(
        "luck_adjusted_net_per_hand",
        "运气调整净分",
        "luck-adjusted net per hand",
        "luck_net_sum",
        "hands",
        "net points less the deal's and the draws' luck: each hand's net less the room's mean net of the hands "
        "dealt alike (scale group, suits, dealer or not, starting shanten) beyond its group's mean, and less each "
        "draw luck sum (`player_hands.draw_luck_*`) times its slope in the room ([luck](#luck)) / hands played",
        "points",
    ),
    _rate(
        "hua_zhu_rate",
        "花猪率",
        "flower-pig rate",
        "hua_zhu",
        "hands",
        "hands ending with the player a flower pig (three suits at an empty wall) / hands played",
    ),
    _rate(
        "not_ready_at_draw_rate",
        "查叫未听率",
        "not ready at the draw",
        "not_ready_at_draw",
        "still_in_at_draw",
        "hands the player was still in and not ready (查叫) when the wall ran out / hands the player was still in "
        "when the wall ran out",
        "share of hands still in at an empty wall",
    ),
    _mean(
        "pongs_per_hand",
        "场均碰",
        "pongs per hand",
        "pongs",
        "hands",
        "pongs standing at the end / hands played",
        "pongs per hand",
    ),
    _mean(
        "direct_kongs_per_hand",
        "场均直杠",
        "direct kongs per hand",
        "kongs_direct",
        "hands",
        "direct kongs (直杠) / hands played",
        "kongs per hand",
    ),
    _mean(
        "added_kongs_per_hand",
        "场均面下杠",
        "added kongs per hand",
        "kongs_added",
        "hands",
        "added kongs (面下杠) that stood / hands played",
        "kongs per hand",
    ),
    _mean(
        "concealed_kongs_per_hand",
        "场均暗杠",
        "concealed kongs per hand",
        "kongs_concealed",
        "hands",
        "concealed kongs (暗杠) / hands played",
        "kongs per hand",
    ),
    _rate(
        "void_m_share",
        "缺万占比",
        "void 万 share",
        "void_m",
        "void_declared",
        "hands the player declared 万 void / hands with a declared void",
        "share of hands with 定缺",
    ),
    _rate(
        "void_p_share",
        "缺筒占比",
        "void 筒 share",
        "void_p",
        "void_declared",
        "hands the player declared 筒 void / hands with a declared void",
        "share of hands with 定缺",
    ),
    _rate(
        "void_s_share",
        "缺条占比",
        "void 条 share",
        "void_s",
        "void_declared",
        "hands the player declared 条 void / hands with a declared void",
        "share of hands with 定缺",
    ),
    _mean(
        "win_turn",
        "平均胡牌巡目",
        "win turn",
        "win_turn_sum",
        "win_turn_n",
        "the player's turn (巡目: turns begun, [turns](#turns)) at its first win of the hand / wins",
        "turns",
    ),
    _mean(
        "deal_in_turn",
        "平均点炮巡目",
        "deal-in turn",
        "deal_in_turn_sum",
        "deal_in_turn_n",
        "the player's turn at each tile it dealt in with (a discard or added kong won on: once, however many won "
        "on it) / such tiles",
        "turns",
    ),
    _mean(
        "ready_turn",
        "平均听牌巡目",
        "ready turn",
        "ready_turn_sum",
        "ready_turn_n",
        "the turn in which the player's hand first stood ready (听牌: a winning tile, its void suit respected, as "
        "查叫 judges it; 0: dealt ready, not the dealer; player_hands.ready_turn) / hands it was ready in",
        "turns",
    ),
    _rate(
        "ready_rate",
        "听牌率",
        "ready rate",
        "ready_turn_n",
        "ready_judged",
        "hands in which the player's hand stood ready at some point (a winner's always did) / hands played",
    ),
    _rate(
        "ready_by_turn_6_rate",
        "六巡内听牌率",
        "ready by turn 6",
        "ready_by_turn_6",
        "ready_judged",
        "hands in which the player's hand stood ready by its sixth turn / hands played",
    ),
    _mean(
        "starting_shanten",
        "配牌向听",
        "starting shanten",
        "deal_shanten_sum",
        "deal_shanten_n",
        "向听 (steps from ready) of the tiles the player was dealt, before 换三张, the best over the void suit at a "
        "table of three suits (player_hands.deal_shanten) / hands dealt",
        "shanten",
    ),
    _count(
        "passed_wins",
        "过胡次数",
        "passed wins",
        "passed_wins",
        "wins on a discard or robbed kong the player could take and did not",
    ),
    _count(
        "compulsory_violations",
        "必胡未胡",
        "compulsory-win violations",
        "compulsory_passes",
        "passes of a compulsory win in the last four tiles (最后四张必须胡)",
    ),
)
METRIC_BY_ID = {m.id: m for m in METRICS}
# ---------------------------------------------------------------------------------------------- decisions
# The decision metrics (issue 43): from the per-player-hand tallies `xuezhan review` stores (decision_tallies,
# pipeline/audit/tallies.py), summed by sql/decision_base.sql; not among METRICS (whose counts are player_base's):
# a player with no reviewed hand has no value ("not reviewed"), never a 0. schemas/METRICS.md, Decisions.
DECISION_METRICS: tuple[Metric, ...] = (
    _count(
        "reviewed_hands",
        "已复盘局数",
        "reviewed hands",
        "reviewed_hands",
        "the player's hands replayed to the end that `xuezhan review` reviewed (its tiles known: levels full and "
        "dealt, an observer's own seat)",
        "hands",
    ),
    _rate(
        "efficiency_match_rate",
        "牌效一致率",
        "efficiency-match rate",
        "judged_efficient",
        "judged_discards",
        "non-forced discards whose tile left the best shanten and, at it, the most live tiles the reference policy "
        "found (efficiency only: danger and value aside) / non-forced discards (those whose legal discards differ "
        "in shanten or live tiles)",
        "share of non-forced discards",
    ),
    _rate(
        "avoidable_deal_in_share",
        "可避点炮占比",
        "avoidable deal-in share",
        "avoidable_deal_ins",
        "reviewed_deal_ins",
        "deal-ins (discards somebody won on) where the player held another legal discard safe by what it could see "
        "(danger 0: the policy's public safety rules) at no worse shanten / deal-ins in reviewed hands",
        "share of deal-ins",
    ),
    _mean(
        "avoidable_deal_ins_per_100",
        "百局可避点炮",
        "avoidable deal-ins per 100 hands",
        "avoidable_per100_sum",
        "reviewed_hands",
        "avoidable deal-ins (as avoidable_deal_in_share counts them) × 100 / reviewed hands (its interval: Garwood's "
        "Poisson 95% interval of the count, × 100 / reviewed hands)",
        "deal-ins per 100 hands",
    ),
    _rate(
        "missed_win_rate",
        "漏胡率",
        "missed-win rate",
        "missed_wins",
        "win_chances",
        "win chances not taken / win chances (decisions with a win among the legal options: a self-draw, a "
        "discard, a robbed kong; 一炮多响 gives each seat that could win its chance)",
        "share of win chances",
    ),
    _rate(
        "late_void_rate",
        "迟打缺门率",
        "late 定缺 rate",
        "void_kept_hands",
        "void_hands",
        "hands in which the player, holding a tile of its declared void suit (定缺), discarded a tile of another "
        "suit at least once (it played on as if its void were not settled) / hands in which it discarded while "
        "holding one; only where the rules leave the order free (not void_discard_first) at a table of three suits",
        "share of hands holding a void tile",
    ),
)
DECISION_METRIC_BY_ID = {m.id: m for m in DECISION_METRICS}
NOT_REVIEWED = "not reviewed"


def decision_values(base: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Each decision metric's value from a row of ``sql/decision_base.sql`` (:meth:`Metric.value`'s, with
    ``"status": "reviewed"``); every figure null with ``"status": "not reviewed"`` where the row is missing or
    counts no reviewed hand (nothing known: never a 0)."""
    if not base or not base.get("reviewed_hands"):
        return {m.id: {**dict.fromkeys(_value_keys(m)), "status": NOT_REVIEWED} for m in DECISION_METRICS}
    out = {m.id: {**m.value(base), "status": "reviewed"} for m in DECISION_METRICS}
    # a count of rare events per 100 hands: Garwood's Poisson interval of the count, not the normal one (which
    # runs below 0 at a few deal-ins)
    per100, hands = out["avoidable_deal_ins_per_100"], base["reviewed_hands"]
    low, high = poisson_interval(base["avoidable_deal_ins"])
    per100.update(ci_low=100 * low / hands, ci_high=100 * high / hands)
    return out


def _value_keys(m: Metric) -> tuple[str, ...]:
    if m.kind == "count":
        return ("value",)
    if m.kind == "rate":
        return ("value", "num", "den", "ci_low", "ci_high")
    return ("value", "sum", "n", "ci_low", "ci_high")


def decisions_page() -> list[str]:
    """schemas/METRICS.md's Decisions section (:func:`page`)."""
    return [
        "",
        "## Decisions",
        "",
        "The decision metrics judge the player's choices beside the reference policy (`pipeline/game/policy.py`, a",
        "transparent yardstick, not a strong player: its docstring says what it is). Reviewing a hand costs about",
        "11 ms compiled, so it is not part of `ingest` or of each `stats`: `xuezhan review --warehouse W` reviews",
        "every hand not yet reviewed and stores one row per player-hand in `decision_tallies`",
        "([TABLES.md](TABLES.md#decision_tallies)); `stats` (text, csv, json: each player's `metrics`) and the",
        "report's player pages sum them. A player with no reviewed hand (none whose tiles are known, or the pass not",
        'yet run on them) shows every figure null with `"status": "not reviewed"`, never 0; `review` in `stats',
        "--format json` says how many of the reviewable hands in scope were reviewed. Rows of another review",
        "version (`TALLY_VERSION`, changed with the policy) are not read: run the pass again.",
        "",
        "| id | 中文 | name | kind | definition | unit | levels |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| `{m.id}` | {m.name_zh} | {m.name_en} | {m.kind} | {m.definition} | {m.unit} | "
            f"{NEEDS[m.id].describe()} |"
            for m in DECISION_METRICS
        ),
        "",
        "What each counts (`pipeline/audit/review.py`, `summarize`), per decision of the seat's the replay reaches:",
        "",
        "- **non-forced discard**: a discard on the seat's turn where its legal discards differ in efficiency (some",
        "  leaves a higher shanten, or the same shanten with fewer live tiles, than the best). Shanten leaves the void",
        "  suit out; live tiles are the improving tiles the seat could not see (its hand, every river, every meld).",
        "  The chosen tile *matches* when it has the best shanten and no fewer live tiles than any discard of it.",
        "- **deal-in**: a discard somebody won on (once however many won; an added kong robbed is not counted).",
        "  *Avoidable* when another legal discard had danger 0 (safe by the public record: a tile of a ready",
        "  opponent's void suit, or one discarded since its last draw that it did not win on; with no ready signal",
        "  at the table every tile is 0) at no worse shanten, and the tile it threw had not (a deal-in on a tile",
        "  nothing marked dangerous is never avoidable). Safety is judged from what the seat could see, not as",
        "  the collusion screen's `safe_alternative`, which knows every hand.",
        "- **win chance**: a decision with a win among the options (a self-draw on the seat's turn, a win on a",
        "  discard or robbed kong); *missed* when it did not win then. In 血战 a win is nearly always taken; passing",
        "  one to chase a bigger hand (过手胡 then bars a win on a discard until the next draw) is a choice, rare and",
        "  worth a look. The compulsory passes of the last four tiles are `compulsory_violations` too.",
        "- **late 定缺**: a hand counts when the seat discarded at least once while holding a tile of its declared",
        "  void suit (a void tile dealt, or drawn later); it is *late* when one of those discards was of another",
        "  suit: the void suit kept (a 花猪 risk at an empty wall, and a hand that cannot win meanwhile). Where the",
        "  rules force void tiles first (`void_discard_first`, the app profile) or at a table of two suits there is",
        "  no such choice: those hands count in neither.",
        "",
        "Record levels: levels full and dealt show every seat's tiles (every seat reviewed); an observer's record",
        "only its own seat's (only that seat reviewed); a score sheet (settlement) has no decisions. A hand whose",
        "replay stopped (an illegal action) counts in none, as for every other metric.",
    ]


# the collusion screen's directed features (pipeline/audit/collusion.py FEATURES, which the tests hold to this)
COLLUSION_FEATURES = (
    "feed_win",
    "feed_call",
    "feed_sheet",
    "chosen_danger",
    "soft_pass",
    "channel",
    "passed",
    "could_feed",
    "feed_kong",
    "feed_value",
    "gift",
    "split",
    "kong_offer",
    "feed_costly",
    "kong_costly",
    "feed_costly_value",
)


# The acceptance figure of issue 43 point 6, with the command that measured it (README.md says the same).
VARIANCE_MEASURED = (
    "How much it takes out: on 5 simulated rooms of 2,000 hands (seeds 1–5, the default styles, chengdu), the",
    "per-seat-hand variance of the luck-adjusted net is 12.1% lower than the raw net's (95% interval over the",
    "rooms 9.2–14.9%; 8.7% to 14.3% a room), where the deal's luck alone took out 0.5–0.8%:",
    "`python -m tools.luck_variance --hands 2000 --seeds 1 2 3 4 5`. Issue 43 asks for at least 25%, which is not",
    "reached: the draws' luck as measured here (each draw against the wall, one step ahead) leaves out most of",
    "what makes the net's spread, the value of the hands won and who pays for them, much of which is choices",
    "(which tile to discard, which suit to collect). The slopes are fitted on the room measured (in-sample).",
    "Further terms were measured on 8 such rooms by `tools/luck_lab.py` (its docstring has every figure): a richer",
    "deal model (longest suit, pairs, triplets), draws valued (a ready rival's win, a 1-shanten draw's waits), the",
    "suit, pair, flush and all-pongs draws, the 2-shanten draws: 14.9% at most fitted on the other rooms (today's",
    "terms there: 12.1%), 16.7% in-sample (12.4%); none is worth its columns. Of the net's variance 28% is",
    "花猪 money, a mistake the simulator's novice style makes (it forgets its void), which is skill, and 19% is",
    "查叫 money, which the draws' terms do not reach.",
)


def page() -> str:
    lines = [
        "# Metrics",
        "",
        "Every player metric of `xuezhan stats` and the reports (generated from `pipeline/analytics/metrics.py` by",
        "`python -m pipeline.analytics.metrics`). Counts come from `pipeline/analytics/sql/player_base.sql` over hands",
        "whose replay reached the end. Rates carry a Wilson 95% interval; means a normal 95% interval from the sum",
        "of squares.",
        "",
        "Each metric is computed over the hands whose **level of record** carries what it needs (*levels*; the",
        "table is `NEEDS` in `pipeline/analytics/levels.py`, [levels](XZLOG.md#level-what-a-record-carries)): a",
        "score sheet (`settlement`) has wins, kongs, end states and payments but no discards, pongs or tiles, an",
        "`observer`'s record every public action but only its own seat's hand. `stats --format json` says how many",
        "hands each metric used and which it left out: per player `levels` (the player's hands by level) and",
        "`excluded` (`{metric: {level: hands}}` for each metric that left some out), and over all the hands shown",
        '`metrics` (`{metric: {"n", "levels", "excluded", "needs"}}`, the table figures too); the text output',
        "adds `excluded: N settlement hands` where a figure left hands out, and the report says it beside each chart.",
        "",
        "| id | 中文 | name | kind | definition | unit | levels |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in METRICS:
        levels = NEEDS[m.id].describe()
        lines.append(f"| `{m.id}` | {m.name_zh} | {m.name_en} | {m.kind} | {m.definition} | {m.unit} | {levels} |")
    lines += [
        "",
        "## Turns",
        "",
        "A player's **turn** (巡目) is the number of turns it has begun, counted by its own draws as riichi tools",
        "count 巡目:",
        "the dealer's first turn begins with the deal (its fourteenth tile), and every other turn with a draw from",
        "the wall or with a claim that gives the player the move instead of a draw (a pong, a direct kong). A",
        "kong's replacement draw (岭上, the draw straight after the player's own kong) goes on with the turn it was",
        "made in, as does a concealed or added kong; a robbed added kong ends the turn. The turn of an event is",
        "the count with the event: a self-drawn win in the turn of its draw, the first discard after a pong in the",
        "pong's turn; a win on another's discard or robbed kong begins no turn (the winner's count as it stands).",
        "So a non-dealer that drew 7 times and won on its eighth draw won in turn 8; had it won on a discard after",
        "its seventh discard, in turn 7. A hand's turns are those of its seats in the events, whatever the table",
        "(4 or 3 seats) and however many have won: in blood battle the players left in draw more often, so late",
        "turns (past 14) are the last players' of a long hand.",
        "",
        "The count has one home, `TurnCount` in `pipeline/game/events.py`, which ingest and the replay use;",
        "`player_base.sql` counts the same from the stored events for a hand ingested before `wins.turn`.",
        "",
        "- `win_turn`: the winner's turn at its first win of the hand (`wins.turn`);",
        "- `deal_in_turn`: the discarder's turn at each discard (or added kong) won on, once however many won",
        "  (`wins.source_turn`);",
        "- `ready_turn`: `player_hands.ready_turn`, worked out by the replay at ingest",
        "  (`pipeline/game/evidence.py`): the turn in which the hand first stood ready,",
        "  looked at as it rests: at the start of play (a non-dealer dealt ready, after 换三张: turn 0), after",
        "  each of its discards, and at each of its wins (a hand not seen ready before its win, 天胡 or ready only",
        "  between a kong and its replacement draw, was ready in the turn of the win). Ready is 查叫's: a tile",
        "  would complete the hand, with no tile of its void suit and at most two suits. The dealer, holding",
        "  fourteen tiles until its first discard, is at rest from turn 1 on. A hand ingested before the column",
        "  (`hands.ready_judged` null) has no ready turn: its hands count in neither `ready_turn` nor the rates.",
        "- `starting_shanten`: `player_hands.deal_shanten`, the dealt tiles' 向听 (0: dealt ready).",
        "",
        "Table-level figures (`table` in `stats --format json`): `fan_distribution` (wins by total fan, engine,",
        "before the cap), `pattern_frequency` (wins carrying each pattern), `winners_per_hand`, `huang_zhuang_rate`",
        "(the wall ran out with two or more players still in), `multi_win_rate` (hands with a 一炮多响),",
        "`hand_length` (events per hand), `money_by_reason` (computed points moved, by reason), `issues_by_code`.",
        "These pool every table of the warehouse (or every hand a filter keeps: `--since`, `--until`, `--table`,",
        "`--player`, `--profile`, [WAREHOUSE.md](../docs/WAREHOUSE.md#filters-and-time-zones)); `tables` splits",
        "how hands end by table shape (`seats`, `suits`, `mode`), each with its `hands`, `winners_per_hand`,",
        "`won_out_rate` (the wins ended the hand: all but one won in blood battle, the first win in 普通版),",
        "`huang_zhuang_rate` and `multi_win_rate`. Player metrics are rates per seat-hand, whatever the table.",
        "With `--player P`, the table figures are over the hands P sat in, and `player_wins` holds P's own wins:",
        "`wins`, `fan_distribution` and `pattern_frequency` as above, for P's wins only.",
        "",
        "Head to head (`stats --player P --by opponent`, `pipeline/analytics/sql/head_to_head.sql`), per opponent",
        "over the hands both played to the end, every level of record (the wins' discarders and the payments are",
        "what every level states): `hands` together; `won_from` and `lost_to`, the points P received from and",
        "paid to that opponent (the engine's payments, every reason); `net` = won_from − lost_to and",
        "`net_per_hand`, its mean over the hands together (a hand with nothing between them counts 0) with a",
        "normal 95% interval; `deal_ins_to` (the opponent's wins on P's discard or robbed kong) and `wins_from`",
        "(P's wins on theirs), with `deal_in_rate` and `win_rate`, the share of the hands together with at least",
        "one, Wilson 95%. Summed over the opponents, `deal_ins_to` is P's `deal_ins` and `net` P's net points",
        "(plus what P paid to a pot). The report's player pages show the same table for every player (the query run",
        "once with no `$player`: every player's rows), and the win and deal-in rates over the player's last 50 hands",
        "in the order played (`pipeline/analytics/sql/player_rolling.sql`), with Wilson 95% bands.",
        "",
        "The table figures' levels (the issues count every stored hand, the rest the replayed ones):",
        "",
        "| figure | levels | needs |",
        "|---|---|---|",
        *levels_page(TABLE_FIGURES),
        "",
        "The collusion screen's features (`pipeline/audit/collusion.py`; `xuezhan collusion` says which levels fed",
        "each signal):",
        "",
        "| feature | levels | needs |",
        "|---|---|---|",
        *levels_page(COLLUSION_FEATURES),
        "",
        "## Luck",
        "",
        "Luck apart from skill (`luck_adjusted_net_per_hand`): net points vary from hand to hand with the tiles",
        "dealt and drawn, which no player chooses. The metric takes out two parts of that luck, each a control",
        "variate (a quantity whose mean is known to be 0, subtracted with the multiple that best explains the net),",
        "both fitted on every replayed seat-hand in scope (every player's, whatever `--player` shows):",
        "",
        "- **Deal luck.** A seat-hand's expected net given its deal is the room's mean net per seat-hand, in bases",
        "  (points ÷ `hands.base`), of the seat-hands dealt alike: its **cell**, the scale group (profile and base),",
        "  the suits in play, dealer or not, and the starting shanten (`player_hands.deal_shanten`). The deal's luck",
        "  is the cell's mean beyond the group's mean, so that (every cell fitted) a room's deal-adjusted nets add up",
        "  to its raw nets. A cell of fewer than 30 seat-hands is not fitted (its adjustment 0).",
        "- **Draw luck.** Given everything before it, a fair shuffle's next tile is any of the tiles still in the",
        "  wall alike (the record shows every hand and draw: levels full and dealt). At each draw from the wall the",
        "  replay (ingest, `pipeline/game/evidence.py`) adds, for each seat, what the tile drawn gave less its mean",
        "  over the tiles the wall held: a term of mean exactly 0 whatever anybody decides, so that taking a",
        "  multiple of it out of the net takes out luck and no skill (the AIVAT idea). Six sums per seat-hand",
        "  (`player_hands.draw_luck_*`): `win`, its own draws while ready (听牌), what a self-drawn win on the tile",
        "  would take (per payer × the seats still in, in bases; 0 for a tile it does not win on); `paid`, the",
        "  other seats' draws while ready, its share of what their self-drawn win would take (negated); `ready`,",
        "  its own draws one tile from ready (1-shanten), 1 for a tile that makes it ready; `rivals`, the other",
        "  seats' `ready`, shared among the seats still in (negated); `kong`, its own draws, 1 for the fourth tile of",
        "  a concealed triplet or of a pong it holds; `fed`, the other seats' draws while it is ready, 1 for a tile",
        "  it wins on. Each sum's slope is the deal-adjusted net regressed on it alone through 0 (its mean is 0),",
        "  per scale group, over the seat-hands that have it (0 for a group of under 30): the sums come from",
        "  different draws and are nearly uncorrelated. Draws further from ready (a tile that lowers a shanten of",
        "  2 or more) are not counted: on 8 simulated rooms a 2-shanten seat's own draws took out 0.3% of the net's",
        "  variance (95% interval 0.15–0.5%, fitted on the other rooms; `tools/luck_lab.py`), for a third more",
        "  ingest time.",
        "",
        "The luck-adjusted net is `net − base · (E[net | cell] − E[net | group] + Σ slope · draw_luck)`. A hand",
        "whose deal is not known (levels observer and settlement, a warehouse made before `deal_shanten`) keeps its",
        "raw net; a hand without draw luck (a warehouse made before it) keeps its deal-adjusted net. The mean is",
        "per hand played, with a normal 95% interval from the per-hand sum of squares; the unusual-result screen",
        "of the findings compares players on it (`dashboards/findings.py`). The fit includes the player's own",
        "hands: on a room of a few hundred hands, a cell's mean and a slope are themselves noisy.",
        "",
        *VARIANCE_MEASURED,
    ]
    lines += decisions_page()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(page(), end="")
