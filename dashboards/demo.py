"""The main job end to end on the embedded sample (``make demo``): score the worked hands of the rules, ingest
the 2,000-hand sample into a warehouse (every line accounted for), import a club's score sheet and ingest its
settlement records beside them, review every hand's decisions beside the reference policy (``xuezhan review``:
the decision metrics of stats and the player pages), print the table statistics, the audit (the sheet's hands
with it), the collusion screen and the information-cheat screen checked against the sample's ground truth, replay one
disputed hand, build the HTML dashboard and print its first screen, what needs attention, and the head-to-head
table of a player of the flagged pair.

It runs the whole product, the report included (``python -m dashboards.demo``), so it sits with the
dashboards, at the top of the house: nothing under ``pipeline/`` imports upwards."""

from __future__ import annotations

import json
import os
import shutil
import unicodedata
from pathlib import Path
from textwrap import shorten

import orjson
import polars as pl

import pipeline
from dashboards.findings import FINDINGS_JSON, findings_text
from dashboards.pages.overview import CJK_FONT_PACKAGE
from dashboards.pages.players import page_file
from dashboards.site import build_report
from pipeline.analytics.queries import connect, head_to_head, stats
from pipeline.analytics.render import decision_lines, head_to_head_table, levels_lines
from pipeline.audit.deals import screen_deals
from pipeline.audit.information import screen_information
from pipeline.audit.replay import replay_text, stored_record
from pipeline.audit.scoring import audit
from pipeline.audit.screen import screen
from pipeline.audit.tallies import review_warehouse
from pipeline.formats import Accounting, Converted, write_lines
from pipeline.formats.sheet import read_sheet
from pipeline.ingest.run import ingest
from pipeline.report import charts
from pipeline.rules import WinHand, load_ruleset, parse_tiles, score
from pipeline.validate import validate

# The repository: the sample ships in data/, not in the package. `make demo` runs the compiled build (in
# build/compiled, away from the repository) and names the repository in XUEZHAN_REPO.
ROOT = Path(os.environ.get("XUEZHAN_REPO") or Path(__file__).resolve().parent.parent)
SAMPLE = ROOT / "data" / "sample.jsonl.gz"
SHEET = ROOT / "data" / "sample-sheet.csv"  # a club's score sheet: three hands, two with the sheet's errors
OUT = ROOT / "out" / "demo"
WORKED = (
    "111m444m789m456p77p",
    "111m444m222p999p66p",
    "123s567s234s888s99s",
    "1111m99m44p66p88p99p",
    "222m555m888m222s55s",
)


def main() -> int:
    print(f"== engine: {pipeline.engine()}")
    rules = load_ruleset("chengdu")
    print("\n== scoring the worked hands of docs/RULES.md §3 (chengdu, base 1; plain hand = 1 fan)")
    for text in WORKED:
        kinds = parse_tiles(text)
        s = score(WinHand.of(kinds, win_tile=kinds[-1], with_win_tile=True), rules)
        parts = " + ".join(f"{p.name_zh} {p.fan}" for p in s.patterns)
        print(f"  {text:<24} {s.title_zh:<6} {parts} = {s.fan} fan, {s.points} points")

    if OUT.exists():
        shutil.rmtree(OUT)
    warehouse = OUT / "warehouse"
    print(f"\n== ingesting {SAMPLE.relative_to(ROOT)} into {warehouse.relative_to(ROOT)}")
    run = ingest([str(SAMPLE)], warehouse)
    print("  " + run.text().replace("\n", "\n  "))

    print(f"\n== importing the score sheet {SHEET.relative_to(ROOT)} (settlement records, docs/FORMATS.md)")
    sheet_records = OUT / "sheet.jsonl"
    counted = Accounting(lines_read=len(SHEET.read_text(encoding="utf-8-sig").splitlines()))
    with SHEET.open(encoding="utf-8-sig") as f:
        items = list(read_sheet(f))
    for item in items:
        counted.add(item)
    write_lines(sheet_records, (orjson.dumps(i.record) for i in items if isinstance(i, Converted)))
    print(f"  {counted.text()} -> {sheet_records.relative_to(ROOT)}; ingested beside the full records:")
    run = ingest([str(sheet_records)], warehouse)
    print("  " + run.text().replace("\n", "\n  "))

    workers = min(2, os.cpu_count() or 1)
    print(f"\n== reviewing each hand's decisions beside the reference policy (xuezhan review, {workers} workers)")
    reviewed = review_warehouse(warehouse, workers=workers)
    print(
        f"  {reviewed.reviewed} hands reviewed, {reviewed.rows} player-hands stored in decision_tallies "
        f"({reviewed.seconds:.1f} s; a score sheet has no decisions)"
    )

    con = connect(warehouse)  # one connection for the statistics, the audit and the screen
    figures = stats(con)
    table = figures["table"]
    print(f"\n== statistics over {figures['hands']} replayed hands")
    for line in levels_lines(figures):  # what each figure could use of the sheet's hands
        print("  " + line)
    decided = [line for line in decision_lines(figures) if line]  # as stats prints them: the first players
    for line in _aligned("\n".join(decided[:8])).splitlines():
        print("  " + line)
    if len(decided) > 8:
        print(f"  … {len(decided) - 8} more players (xuezhan stats --warehouse {warehouse})")
    print("  fan distribution: " + ", ".join(f"{k} fan {v}" for k, v in table["fan_distribution"].items()))
    print(
        "  patterns: "
        + ", ".join(f"{table['pattern_names'][k]} {v}" for k, v in list(table["pattern_frequency"].items())[:8])
    )
    hz = table["huang_zhuang_rate"]
    print(
        f"  winners per hand: {table['winners_per_hand']}; "
        f"黄庄 {hz['value']:.1%} [{hz['ci_low']:.1%}, {hz['ci_high']:.1%}]"
    )

    labels = json.loads(SAMPLE.with_name("sample.labels.json").read_text(encoding="utf-8"))
    findings = audit(con)
    found = set(findings.findings["hand_id"].to_list())
    injected = {f["hand_id"] for f in labels["faults"]}
    print(f"\n== audit: {findings.findings.height} findings in {len(found)} hands, {findings.stake_text()}")
    print(
        f"  injected faults in {len(injected)} hands; stored and found: {len(injected & found)}; "
        f"found without an injected fault: {len(found - injected)} (duplicates and broken lines are not stored hands)"
    )
    for row in findings.mistakes().head(5).iter_rows(named=True):
        print(f"  {row['money']:>5} points  {row['hand_id']} event {row['event']}: {row['code']} {row['message'][:90]}")
    levels = figures["levels"]
    print("  hands by level of record: " + ", ".join(f"{level} {c['stored']}" for level, c in levels.items()))
    sheet_ids = {str(i.record["hand_id"]) for i in items if isinstance(i, Converted)}
    print("  the score sheet's hands (what a sheet supports is checked; the rest is listed as not checked):")
    for row in findings.findings.filter(pl.col("hand_id").is_in(sorted(sheet_ids))).iter_rows(named=True):
        print(f"  {row['money']:>5} points  {row['hand_id']} {row['code']} {row['message'][:100]}")
    clean = sheet_ids - set(findings.findings["hand_id"].to_list())
    print(f"  clean: {', '.join(sorted(clean)) or 'none'}")
    disputed = sorted(sheet_ids - clean)
    if disputed:  # one hand replayed, as `xuezhan replay HAND --warehouse W` prints it (docs/REPLAY.md)
        stored = stored_record(con, disputed[0])
        print(f"\n== one disputed hand, replayed (xuezhan replay {disputed[0]} --warehouse {warehouse}):")
        print("\n".join("  " + line for line in replay_text(stored.record, validate(stored.record)).splitlines()))

    pairs = screen(con, min_hands=50).pairs
    seers = screen_information(con)
    dealt = [r for r in screen_deals(con) if r.kind == "player" and r.p is not None]
    con.close()
    flagged = [r for r in pairs if r.flagged]
    truth = [sorted(c["players"]) for c in labels["colluders"]]
    missed = [pair for pair in truth if pair not in [sorted(r.players) for r in flagged]]
    why = (
        " (at 0.3 intensity and this few shared hands the screen often misses a pair: see the README's evaluation"
        " table)"
        if missed
        else ""
    )
    print(
        f"\n== collusion screen: {len(pairs)} pairs with 50+ shared hands; flagged at FDR 0.05: "
        f"{[list(r.players) for r in flagged]}; injected colluders: {truth}{why}"
    )
    for r in pairs[:3]:
        print(f"  {' & '.join(r.players)}: {r.shared_hands} hands, score {r.score:.2f}, p {r.p:.2e}, q {r.q:.3f}")

    seen = [seer.player for seer in seers if seer.flagged]
    print(
        f"\n== information cheats: {sum(seer.p is not None for seer in seers)} players screened; flagged at FDR 0.05: "
        f"{seen}; planted players who see every hand: {labels['bots']}"
    )
    for seer in seers[:3]:
        if seer.expected is None or seer.p is None or seer.q is None:  # too few judged discards: not tested
            continue
        print(
            f"  {seer.player}: {seer.dangerous_by_choice} dangerous discards by choice in {seer.discards} judged "
            f"(expected {seer.expected:.1f}), p {seer.p:.2e}, q {seer.q:.3f}"
        )

    best = min(dealt, key=lambda r: r.p or 1.0, default=None)
    print(
        f"\n== stacked deals: {len(dealt)} players screened (starting shanten against fair walls); flagged at FDR "
        f"0.05: {[r.group for r in dealt if r.flagged]}; planted stackers: {labels.get('stackers', [])}"
    )
    if best is not None:
        print(
            f"  best dealt: {best.group}: {best.hands} hands, mean {best.mean:.2f} steps from ready, fair deals "
            f"{best.expected / best.hands:.2f}, p {best.p:.2e}, q {best.q:.3f}"
        )

    index = build_report(warehouse, OUT / "report")
    print(f"\n== dashboard: {index}")
    found = json.loads((index.parent / FINDINGS_JSON).read_text(encoding="utf-8"))
    print(f"\n== what needs attention (the report's first screen): {findings_text(len(found))}")
    for f in found:
        print(f"  {f['rank']:>2} {f['severity']:<6} {f['label']:<17} {f['subject']}: {shorten(f['detail'], 100)}")
        print(f"     evidence: {index.parent / f['evidence']}")
    suspects = sorted({p for f in found if f["severity"] == "high" for p in f["players"]})
    if suspects:
        print(f"  a flagged player's page opens with their findings: {index.parent / page_file(suspects[0])}")
    print(f"  every player: {index.parent / 'players.html'}")
    pair = next((f["players"] for f in found if f["kind"] == "pair"), None)
    if pair:  # the head-to-head table of a flagged player's page, as `xuezhan stats --by opponent` prints it
        who, partner = pair
        with connect(warehouse) as con:
            h2h = head_to_head(con, who)
        print(f"\n== head to head of {who}, flagged with {partner} (xuezhan stats --player {who} --by opponent):")
        for line in _aligned(head_to_head_table(h2h)).splitlines():
            print(f"  {line}{'   <- the flagged partner' if line.split(' ', 1)[0] == partner else ''}".rstrip())
    if not charts.fonts().cjk:
        print(
            "  no CJK font was found: the charts use English or pinyin labels, and the report says so at the top; "
            f"for Chinese labels: sudo apt-get install {CJK_FONT_PACKAGE}, then make demo again"
        )
    return 0


def _aligned(text: str) -> str:
    """The tab-separated rows of a terminal table padded into columns (by display width: a Chinese id takes
    two cells), the other lines as they are.

    >>> print(_aligned("a\\tbb\\n张三\\tc\\nnote"))
    a     bb
    张三  c
    note
    """
    rows = [line.split("\t") for line in text.splitlines()]
    widths: dict[int, int] = {}
    for cells in rows:
        if len(cells) > 1:
            for i, cell in enumerate(cells):
                widths[i] = max(widths.get(i, 0), _width(cell))
    return "\n".join(
        "  ".join(cell + " " * (widths[i] - _width(cell)) for i, cell in enumerate(cells)).rstrip()
        if len(cells) > 1
        else cells[0]
        for cells in rows
    )


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


if __name__ == "__main__":
    raise SystemExit(main())
