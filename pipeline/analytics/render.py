"""Text renderings of the ``stats`` answer: a terminal table and a long-format CSV; and what makes any data
string safe to hand to a spreadsheet (:func:`csv_cell`, :func:`csv_frame`; safe to print:
:func:`pipeline.text.printable`)."""

from __future__ import annotations

import csv
import io
from typing import Any

import polars as pl

from pipeline.analytics.levels import NEEDS, excluded_text
from pipeline.analytics.metrics import DECISION_METRICS, METRICS, NOT_REVIEWED
from pipeline.analytics.scope import Scope
from pipeline.text import printable

# what a spreadsheet reads as a formula at the start of a cell (OWASP's CSV injection list)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet will not run: a *string* starting with ``=``, ``+``, ``-``, ``@``, tab or
    carriage return gets a leading ``'`` (as spreadsheet exporters do); numbers, ``-3`` included, stay numbers.

    >>> csv_cell("=1+2"), csv_cell("-1+2"), csv_cell("@SUM(A1)"), csv_cell(-3), csv_cell("p-1")
    ("'=1+2", "'-1+2", "'@SUM(A1)", -3, 'p-1')
    """
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value


def csv_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """:func:`csv_cell` on every string column of ``frame`` (numeric columns untouched)."""
    starts = "^[" + "".join(FORMULA_START).replace("-", "\\-") + "]"
    return frame.with_columns(
        pl.when(pl.col(name).str.contains(starts)).then(pl.lit("'") + pl.col(name)).otherwise(pl.col(name)).alias(name)
        for name, dtype in frame.schema.items()
        if dtype == pl.String
    )


TABLE_METRICS = (
    "win_rate",
    "self_draw_share",
    "deal_in_rate",
    "deal_ins_per_hand",
    "fan_per_win",
    "points_per_win",
    "net_points_per_hand",
    "luck_adjusted_net_per_hand",
    "hua_zhu_rate",
    "not_ready_at_draw_rate",
    "win_turn",
    "ready_turn",
    "deal_in_turn",
    "starting_shanten",
)


def _cell(m: dict[str, Any]) -> str:
    value = m.get("value")
    if value is None:
        return "-"
    if "den" in m or "n" in m:
        low, high = m.get("ci_low"), m.get("ci_high")
        span = f" [{low:.2f},{high:.2f}]" if low is not None and high is not None else ""
        return f"{value:.3f}{span}"
    return str(value)


def counts_line(answer: dict[str, Any]) -> str:
    """What the figures count, reconciled with ``ingest`` (``stored N (invalid M)``) and ``validate``
    (``records N (valid V, invalid M)``): the stored hands are the valid plus the invalid ones, and every
    statistic is over the hands whose replay reached the end (a stopped replay's facts are partial); issues
    are over every stored hand.

    >>> line = counts_line({"hands": 1983, "table": {"stored_hands": 2000, "valid_hands": 1949,
    ...     "replayed_hands": 1983, "rejects": 0}})
    >>> line.split("; ")[0]
    'hands 1983 (stored 2000, valid 1949, rejects 0): stored 2000 = valid 1949 + invalid 51'
    """
    t = answer["table"]
    stored, valid, replayed = t["stored_hands"], t["valid_hands"], t["replayed_hands"]
    scoped = Scope(**answer["scope"]).filters if answer.get("scope") else False
    rejects = f"{t['rejects']} in the whole warehouse" if scoped else t["rejects"]  # no hand: no scope
    return (
        f"hands {answer['hands']} (stored {stored}, valid {valid}, rejects {rejects}): "
        f"stored {stored} = valid {valid} + invalid {stored - valid}; statistics over the {replayed} replayed "
        f"to the end ({stored - replayed} stopped before it), issues over all {stored} stored"
    )


def levels_lines(answer: dict[str, Any]) -> list[str]:
    """What the figures were computed over, by level of record: the hands of each level, then every group of
    figures that left some out, with the hands it used and the ones it excluded (nothing when every figure
    used every hand).

    >>> answer = {"levels": {"full": {"stored": 30, "replayed": 30}, "settlement": {"stored": 3, "replayed": 3}},
    ...     "metrics": {"win_rate": {"n": 33, "levels": {"full": 30, "settlement": 3}, "excluded": {}},
    ...                 "pongs_per_hand": {"n": 30, "levels": {"full": 30}, "excluded": {"settlement": 3}}}}
    >>> print("\\n".join(levels_lines(answer)))
    levels of record (replayed hands): full 30, settlement 3
    every figure uses every level but:
      pongs_per_hand: n 30 (full 30); excluded: 3 settlement hands (a score sheet has no discards, pongs or draws)
    """
    levels = answer.get("levels") or {}
    if not levels:
        return []
    by_level = ", ".join(f"{k} {v['replayed']}" for k, v in levels.items())
    lines = [f"levels of record (replayed hands): {by_level}"]
    groups: dict[tuple[str, str], list[str]] = {}
    for figure, c in answer.get("metrics", {}).items():
        if c["excluded"]:
            used = ", ".join(f"{k} {v}" for k, v in c["levels"].items()) or "none"
            text = f"n {c['n']} ({used}); {excluded_text(c['excluded'], NEEDS[figure])}"
            groups.setdefault((NEEDS[figure].id, text), []).append(figure)
    if groups:
        lines.append("every figure uses every level but:")
        lines += [f"  {', '.join(figures)}: {text}" for (_, text), figures in groups.items()]
    return lines


def stats_table(answer: dict[str, Any]) -> str:
    by = answer["by"]
    names = {m.id: m for m in METRICS}
    head = ["player"] + ([by] if by != "all" else []) + ["hands"] + [f"{names[i].name_zh} {i}" for i in TABLE_METRICS]
    rows = [head]
    for p in answer["players"]:
        rows.append(
            [printable(p["player"])]
            + ([printable(p[by])] if by != "all" else [])
            + [str(p["hands"])]
            + [_cell(p["metrics"][i]) for i in TABLE_METRICS]
        )
    t = answer["table"]
    lines = ["\t".join(r) for r in rows]
    lines += [
        "",
        *decision_lines(answer),
        *scope_lines(answer.get("scope")),
        counts_line(answer),
        *levels_lines(answer),
        *_player_wins_lines(t.get("player_wins")),
        ("fan distribution (wins by total fan)" if "player_wins" not in t else "every win at their tables, by fan")
        + ": "
        + ", ".join(f"{k}: {v}" for k, v in t["fan_distribution"].items()),
        "patterns: " + ", ".join(f"{t['pattern_names'][k]} {v}" for k, v in t["pattern_frequency"].items()),
        ("winners per hand" if len(t["tables"]) <= 1 else "winners per hand (every table)")
        + ": "
        + ", ".join(f"{k}: {v}" for k, v in t["winners_per_hand"].items())
        + f"; 黄庄 rate {_cell(t['huang_zhuang_rate'])}; 一炮多响 rate {_cell(t['multi_win_rate'])}",
        *(
            f"  at {s['table']} ({s['hands']} hands): winners per hand "
            + ", ".join(f"{k}: {v}" for k, v in s["winners_per_hand"].items())
            + f"; played out {_cell(s['won_out_rate'])}; 黄庄 {_cell(s['huang_zhuang_rate'])}"
            for s in (t["tables"] if len(t["tables"]) > 1 else [])
        ),
        "money by reason: " + ", ".join(f"{k} {v}" for k, v in t["money_by_reason"].items()),
    ]
    if t["issues_by_code"]:
        lines.append("issues: " + ", ".join(f"{k} {v['issues']}" for k, v in t["issues_by_code"].items()))
    return "\n".join(lines)


def decision_lines(answer: dict[str, Any]) -> list[str]:
    """The decision metrics (schemas/METRICS.md#decisions) as a second table: per player its reviewed hands and
    each figure with its 95% interval and n, or ``not reviewed``; one line when no player was reviewed (an answer
    without ``review``: none).

    >>> print("\\n".join(decision_lines({"by": "all", "review": {"version": "1", "reviewable": 5, "reviewed": 0,
    ...     "other_version": 0}, "players": [{"player": "p1", "metrics": {}}]})))
    decisions: not reviewed (0 of 5 reviewable hands; run xuezhan review --warehouse W)
    <BLANKLINE>
    """
    review = answer.get("review")
    if review is None:
        return []
    by = answer["by"]
    done = f"{review['reviewed']} of {review['reviewable']} reviewable hands"
    if review.get("other_version"):
        done += f", {review['other_version']} more by an older review version (not read)"
    if not any(p["metrics"].get("reviewed_hands", {}).get("value") for p in answer["players"]):
        return [f"decisions: not reviewed ({done}; run xuezhan review --warehouse W)", ""]
    shown = [m for m in DECISION_METRICS if m.id != "reviewed_hands"]
    head = ["player", *([by] if by != "all" else []), "reviewed", *(f"{m.name_zh} {m.id}" for m in shown)]
    rows = [head]
    for p in answer["players"]:
        got = p["metrics"]
        first = [printable(p["player"]), *([printable(p[by])] if by != "all" else [])]
        if got["reviewed_hands"].get("status") == NOT_REVIEWED:
            rows.append([*first, NOT_REVIEWED])
            continue
        cells = []
        for m in shown:
            v = got[m.id]
            n = v.get("den", v.get("n"))
            cells.append(f"{_cell(v)} n={n}")
        rows.append([*first, str(got["reviewed_hands"]["value"]), *cells])
    title = (
        f"decisions (xuezhan review, version {review['version']}: {done}; reference policy, "
        "schemas/METRICS.md#decisions; n: non-forced discards, deal-ins, hands, win chances, hands holding a void "
        "tile)"
    )
    return [title, *("\t".join(r) for r in rows), ""]


def scope_lines(scope: dict[str, Any] | None) -> list[str]:
    """What the output covers under a filter (the ``scope`` of a JSON answer), and what a filter cannot
    apply to; nothing without one.

    >>> scope_lines({"player": "p1", "tz": None})
    ['scope: hands where p1 sat (rejected lines and ingest runs belong to no hand: not filtered)']
    >>> scope_lines({"tz": "UTC"}), scope_lines(None)
    (['dates and months in time zone UTC'], [])
    """
    if not scope:
        return []
    s = Scope(**scope)
    if not s.filters:
        return [] if s.tz is None else [f"dates and months in time zone {s.tz}"]
    return [f"scope: {s.describe()} (rejected lines and ingest runs belong to no hand: not filtered)"]


def _player_wins_lines(own: dict[str, Any] | None) -> list[str]:
    """``stats --player P``: P's own wins by fan and pattern (the lines after them are every win of the hands).

    >>> print("\\n".join(_player_wins_lines({"player": "p1", "wins": 3, "fan_distribution": {"1": 2, "3": 1},
    ...     "pattern_frequency": {"ping_hu": 3, "qing_yi_se": 1}, "pattern_names": {"ping_hu": "平胡",
    ...     "qing_yi_se": "清一色"}})))
    p1's wins by total fan (3 wins): 1: 2, 3: 1
    p1's patterns: 平胡 3, 清一色 1
    """
    if own is None:
        return []
    name = printable(own["player"])
    fans = ", ".join(f"{k}: {v}" for k, v in own["fan_distribution"].items()) or "none"
    patterns = ", ".join(f"{own['pattern_names'][k]} {v}" for k, v in own["pattern_frequency"].items()) or "none"
    wins = f"{own['wins']} win{'' if own['wins'] == 1 else 's'}"
    return [f"{name}'s wins by total fan ({wins}): {fans}", f"{name}'s patterns: {patterns}"]


def _interval(value: float | None, low: float | None, high: float | None, digits: int) -> str:
    if value is None:
        return "-"
    span = f" [{low:.{digits}f},{high:.{digits}f}]" if low is not None and high is not None else ""
    return f"{value:.{digits}f}{span}"


def head_to_head_table(answer: dict[str, Any]) -> str:
    """``stats --player P --by opponent`` as a terminal table: one row per opponent (most hands together
    first), tab-separated like ``stats``, then what the columns mean."""
    head = [
        "opponent",
        "hands",
        "won from",
        "lost to",
        "net",
        "net/hand [95%]",
        "deal-ins to",
        "deal-in rate [95%]",
        "wins from",
        "win-from rate [95%]",
    ]
    rows = [head]
    for o in answer["opponents"]:
        net = o["net_per_hand"]
        rows.append(
            [
                printable(o["opponent"]),
                str(o["hands"]),
                str(o["won_from"]),
                str(o["lost_to"]),
                f"{o['net']:+d}",
                _interval(net["value"], net["ci_low"], net["ci_high"], 2),
                str(o["deal_ins_to"]),
                _cell(o["deal_in_rate"]),
                str(o["wins_from"]),
                _cell(o["win_rate"]),
            ]
        )
    name = printable(answer["player"])
    return "\n".join(
        [
            f"{name} head to head: {answer['hands']} hands played to the end, {len(answer['opponents'])} opponents",
            *scope_lines(answer.get("scope")),
            *("\t".join(r) for r in rows),
            "",
            f"won from / lost to: points {name} received from / paid to that opponent (every payment between them);"
            " net/hand: mean over the hands together, normal 95% interval",
            f"deal-ins to: that opponent's wins on {name}'s discard; wins from: {name}'s wins on theirs; rates: "
            "share of the hands together with at least one, Wilson 95%",
        ]
    )


HEAD_TO_HEAD_CSV = (
    "player",
    "opponent",
    "hands",
    "won_from",
    "lost_to",
    "net",
    "net_per_hand",
    "net_per_hand_low",
    "net_per_hand_high",
    "deal_ins_to",
    "deal_in_hands",
    "deal_in_rate",
    "deal_in_rate_low",
    "deal_in_rate_high",
    "wins_from",
    "win_hands",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
)


def head_to_head_csv(answer: dict[str, Any]) -> str:
    """One row per opponent: :data:`HEAD_TO_HEAD_CSV`."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(HEAD_TO_HEAD_CSV)
    for o in answer["opponents"]:
        net, deal, win = o["net_per_hand"], o["deal_in_rate"], o["win_rate"]
        w.writerow(
            [
                csv_cell(answer["player"]),
                csv_cell(o["opponent"]),
                o["hands"],
                o["won_from"],
                o["lost_to"],
                o["net"],
                net["value"],
                net["ci_low"],
                net["ci_high"],
                o["deal_ins_to"],
                deal["num"],
                deal["value"],
                deal["ci_low"],
                deal["ci_high"],
                o["wins_from"],
                win["num"],
                win["value"],
                win["ci_low"],
                win["ci_high"],
            ]
        )
    return out.getvalue()


def stats_csv(answer: dict[str, Any]) -> str:
    """One row per player, group and metric: player, group, metric, value, num, den, ci_low, ci_high."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    by = answer["by"]
    w.writerow(["player", "group", "metric", "value", "num", "den", "ci_low", "ci_high"])
    for p in answer["players"]:
        group = p.get(by, "all") if by != "all" else "all"
        for mid, m in p["metrics"].items():
            w.writerow(
                [
                    csv_cell(p["player"]),
                    csv_cell(group),
                    mid,
                    m.get("value"),
                    m.get("num", m.get("sum")),
                    m.get("den", m.get("n")),
                    m.get("ci_low"),
                    m.get("ci_high"),
                ]
            )
    return out.getvalue()


_HEALTH_RUN = ("run_no", "run_id", "started_at", "finished_at", "lines_read", "stored", "invalid", "rejects")
_HEALTH_RUN_TAIL = ("duplicates", "settle_errors", "newest", "players", "new_players")


def health_table(answer: dict[str, Any]) -> str:
    """``check``'s answer (:meth:`pipeline.analytics.health.Health.as_dict`) for people: the verdict, each alert,
    then every run's figures, the checked run marked."""
    runs = answer["runs"]
    if not runs:
        return "no ingest run in this warehouse: nothing to check"
    lines = [f"run {printable(answer['run'])}: {answer['level'].upper()}"]
    for a in answer["alerts"]:
        lines.append(f"  {a['level'].upper():<5}  {a['check']:<9}  {printable(a['message'])}")
    if not answer["alerts"]:
        lines.append("  as the runs before it: no alert")
    lines += ["", "runs (settle: hands with a scoring or settlement error; new: players, issue codes)"]
    lines.append(
        f"  {'run':>4}  {'started':<16}  {'lines':>9}  {'stored':>9}  {'invalid':>7}  {'rejects':>7}  {'settle':>7}"
        f"  {'new':>5}  {'codes':>5}"
    )
    for r in runs:
        mark = "*" if r["run_id"] == answer["run"] else " "
        settle = f"{r['settle_errors'] / r['stored']:.2%}" if r["stored"] else "–"
        started = (r["started_at"] or "?")[:16].replace("T", " ")
        done = "" if r["finished_at"] is not None else "  incomplete"
        lines.append(
            f"{mark} {r['run_no']:>4}  {started:<16}  {r['lines_read']:>9,}  {r['stored']:>9,}  {r['invalid']:>7,}  "
            f"{r['rejects']:>7,}  {settle:>7}  {r['new_players']:>5,}  {len(r['new_codes']):>5}{done}"
        )
    return "\n".join(lines)


def health_csv(answer: dict[str, Any]) -> str:
    """``check``'s runs as CSV, one row per run and table (``table_id`` empty: the run's whole figures)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([*_HEALTH_RUN, *_HEALTH_RUN_TAIL, "table_id", "hands", "table_settle_errors", "checked"])
    for r in answer["runs"]:
        head = [csv_cell(r[k]) for k in _HEALTH_RUN] + [csv_cell(r[k]) for k in _HEALTH_RUN_TAIL]
        checked = r["run_id"] == answer["run"]
        w.writerow([*head, "", r["stored"], r["settle_errors"], checked])
        for t in r["tables"]:
            w.writerow([*head, csv_cell(t["table_id"] or ""), t["hands"], t["settle_errors"], checked])
    return out.getvalue()
