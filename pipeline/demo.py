"""The main job end to end on the embedded sample (``make demo``): score the worked hands of the rules,
then validate the 2,000-hand sample and compare what the validator found with the injected ground truth."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pipeline.ingest.read import read_lines
from pipeline.rules import WinHand, load_ruleset, parse_tiles, score
from pipeline.validate import check_sessions, hand_key, validate_line

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample.jsonl.gz"
WORKED = ("111m444m789m456p77p", "111m444m222p999p66p", "123s567s234s888s99s", "1111m99m44p66p88p99p", "222m555m888m222s55s")


def main() -> int:
    rules = load_ruleset("chengdu")
    print("== scoring the worked hands of RULES.md §3 (chengdu, base 1)")
    for text in WORKED:
        kinds = parse_tiles(text)
        s = score(WinHand.of(kinds, win_tile=kinds[-1], with_win_tile=True), rules)
        parts = " + ".join(f"{p.name_zh} {p.fan}" for p in s.patterns)
        print(f"  {text:<24} {s.title_zh:<6} {parts} = {s.fan} fan, {s.points} points")
    print(f"\n== validating {SAMPLE.relative_to(Path.cwd()) if SAMPLE.is_relative_to(Path.cwd()) else SAMPLE}")
    codes: Counter[str] = Counter()
    read = invalid = 0
    keys = []
    faulty_found = set()
    for item in read_lines([str(SAMPLE)]):
        if item.blank:
            continue
        read += 1
        v = validate_line(item.data, line_no=item.source_line)
        keys.append(hand_key(v))
        invalid += not v.ok
        for issue in v.issues:
            codes[issue.code] += 1
        if v.issues and v.hand_id:
            faulty_found.add(v.hand_id)
    for s in check_sessions(keys):
        codes[s.issue.code] += 1
        faulty_found.add(s.hand_id)
    print(f"  lines {read}, invalid {invalid}")
    for code, n in codes.most_common():
        print(f"  {code:<24} {n}")
    labels = json.loads(SAMPLE.with_name("sample.labels.json").read_text())
    injected = {f["hand_id"] for f in labels["faults"]}
    print(f"  injected faults: {len(labels['faults'])} in {len(injected)} hands; hands flagged: {len(faulty_found)}; "
          f"injected and flagged: {len(injected & faulty_found)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
