"""Text renderings of the ``stats`` answer: a terminal table and a long-format CSV; and what makes any data
string safe to print (:func:`printable`) or to hand to a spreadsheet (:func:`csv_cell`, :func:`csv_frame`)."""

from __future__ import annotations

import csv
import io
import unicodedata
from typing import Any

import polars as pl

from pipeline.analytics.levels import NEEDS, excluded_text
from pipeline.analytics.metrics import METRICS

# what a spreadsheet reads as a formula at the start of a cell (OWASP's CSV injection list)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def printable(value: object) -> str:
    r"""``value`` as text a terminal can print as it is: every control character (the escape that starts a
    terminal sequence, BEL, tab, newline, DEL, C1), format character (a bidirectional override, a zero-width
    joiner), line or paragraph separator and unassigned code point is written as ``\uXXXX``, as the report
    writes them. Ids come from the records: they are data, never instructions to the terminal.

    >>> print(printable("p1\x1b[31mred\u202e"))
    p1\u001b[31mred\u202e
    >>> printable("张三 & 李四"), printable(None)
    ('张三 & 李四', 'None')
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _UNPRINTABLE else c for c in text)


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
    "hua_zhu_rate",
    "not_ready_at_draw_rate",
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
    return (
        f"hands {answer['hands']} (stored {stored}, valid {valid}, rejects {t['rejects']}): "
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
        counts_line(answer),
        *levels_lines(answer),
        "fan distribution (wins by total fan): " + ", ".join(f"{k}: {v}" for k, v in t["fan_distribution"].items()),
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
