"""One hand, readable (issue 21 item 6): ``xuezhan replay`` on record files and on a warehouse, the text checked
line by line on a hand of the regression corpus worked out by hand, and what it says when the hand cannot be
found or its source has changed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.audit.replay import HandNotFound, find_record, replay_text
from pipeline.ingest.run import ingest
from pipeline.validate import validate

ROOT = Path(__file__).resolve().parent.parent
SETTLE = ROOT / "tests" / "corpus" / "settle.jsonl"
XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))

# settle-payer (tests/corpus/README.md): seat 3 is claimed to pay for seat 1's win, which seat 0 dealt in
SETTLE_PAYER = """\
hand settle-payer · chengdu · level dealt · dealer seat 0 (p1) · 1 error
seat  player  deal               given  void
   0  p1      235669m1248p3668s  -      -
   1  p2      111444789m5678p    -      -
   2  p3      333999p1112229s    -      -
   3  p4      123456p2345789s    -      -
#     event   player  wall  what
   0  0-8p    p1      55
   1  1h8p<0  p2      55    win: 平胡 1 fan, 1 point (claimed 1 fan, 1 point)
       ! SETTLE_PAYER: hu 1 from seat 0 (p1) to seat 1 (p2) (event 1): claimed paid by seat 3 (p4)
   2  2+9s    p3      54
   3  2h9s    p3      54    win: 对对胡 2 fan, 2 points (claimed 2 fan, 2 points)
   4  3+5s    p4      53
   5  3h5s    p4      53    win: 平胡 1 fan, 1 point (claimed 1 fan, 1 point)
settlement    computed | claimed
   +  0>1=1hu@1
   =  0>2=3hu@3
   =  3>2=3hu@3
   =  0>3=2hu@5
   -  3>1=1hu@1
deltas  -6 1 6 -1 | -5 1 6 -2
not checked: the draw order (no wall)"""


def xuezhan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([XUEZHAN, *args], capture_output=True, text=True, timeout=120)


def test_a_hand_replayed_reads_as_worked_out_by_hand() -> None:
    found = find_record([str(SETTLE)], "settle-payer")
    record, source, line = found.record, str(found.hand.source_file), found.hand.source_line
    assert (Path(source).name, line) == ("settle.jsonl", 10)
    assert replay_text(record, validate(record)) == SETTLE_PAYER


def test_payments_not_itemised_and_issues_of_no_event() -> None:
    record = find_record([str(SETTLE)], "settle-delta").record
    text = replay_text(record, validate(record))
    assert "      0>1=1hu@1\n" in text and "(the claim does not itemise its payments)" in text
    assert text.endswith(
        "issues\n"
        "  ! SETTLE_DELTA: seat 0 (p1): claimed delta -5, the rules give -6\n"
        "  ! SETTLE_DELTA: seat 3 (p4): claimed delta -2, the rules give -1\n"
        "not checked: the draw order (no wall)"
    )


def test_a_hand_that_stops_and_hostile_names() -> None:
    record = json.loads(next(line for line in SETTLE.read_text().splitlines() if '"settle-payer"' in line))
    record["players"][1] = "p2\x1b[31m\u202e"
    record["events"].insert(2, {"t": "discard", "seat": 3, "tile": "1m"})  # out of turn: the replay stops
    text = replay_text(record, validate(record))
    assert "\x1b" not in text and "\u202e" not in text and "p2\\u001b[31m\\u202e" in text
    assert re.search(r"\n   2  3-1m +p4 +55\n       ! TURN_ORDER: seat 3 \(p4\) discards out of turn", text)
    assert "\n#     event" in text and text.count("\n   ") >= 8  # every event is still listed


def test_every_event_of_a_simulated_hand_is_a_line() -> None:
    import gzip

    with gzip.open(ROOT / "data" / "sample.jsonl.gz", "rt", encoding="utf-8") as f:
        record = json.loads(next(f))
    text = replay_text(record, validate(record))
    events = text.split("\n#     event")[1].split("\nsettlement")[0].strip("\n").splitlines()[1:]
    assert len([e for e in events if not e.startswith("       ")]) == len(record["events"])
    assert text.split("\n")[0].endswith("valid") and "deltas" in text


def test_the_command_on_files_and_on_a_warehouse(tmp_path: Path) -> None:
    records = tmp_path / "settle.jsonl"
    shutil.copy(SETTLE, records)
    done = xuezhan("replay", "settle-payer", str(records))
    assert done.returncode == 1 and done.stdout == f"{records}:10\n{SETTLE_PAYER}\n", done.stderr
    assert xuezhan("replay", "settle-deltas-only", str(tmp_path)).returncode == 0  # a folder; a valid hand
    ingest([str(records)], tmp_path / "wh", workers=1)
    done = xuezhan("replay", "settle-payer", "--warehouse", str(tmp_path / "wh"))
    assert done.returncode == 1 and done.stdout == f"{records}:10\n{SETTLE_PAYER}\n", done.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("none", "hand 'nobody' is not in the warehouse"),
        ("edit", "cannot be read back: line 10 of "),  # ... is not the line ingested (sha256 ...)
        ("cut", "settle.jsonl has no line 10 any more (it has changed since it was ingested)"),
        ("move", "settle.jsonl: No such file or directory; give its record file instead"),
    ],
)
def test_a_changed_source_is_said_and_never_replayed(tmp_path: Path, change: str, message: str) -> None:
    records = tmp_path / "settle.jsonl"
    shutil.copy(SETTLE, records)
    ingest([str(records)], tmp_path / "wh", workers=1)
    lines = records.read_text().splitlines(keepends=True)
    if change == "edit":
        lines[9] = lines[9].replace('"amount": 1', '"amount": 2', 1)
        records.write_text("".join(lines))
    elif change == "cut":
        records.write_text("".join(lines[:5]))
    elif change == "move":
        records.rename(tmp_path / "elsewhere.jsonl")
    done = xuezhan("replay", "nobody" if change == "none" else "settle-payer", "--warehouse", str(tmp_path / "wh"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    for args, message in [
        ((), "give the record files or --warehouse (one of them)"),
        ((str(SETTLE), "--warehouse", str(tmp_path)), "give the record files or --warehouse (one of them)"),
        ((str(tmp_path / "missing.jsonl"),), "no such file or folder"),
        ((str(SETTLE),), "no record of hand 'nobody' under"),
    ]:
        done = xuezhan("replay", "nobody", *args)
        assert done.returncode == 2 and message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    with pytest.raises(HandNotFound):
        find_record([str(SETTLE)], "张三的牌")  # a non-ASCII id is looked for in every line


def test_the_example_of_the_docs_is_what_the_command_prints() -> None:
    page = (ROOT / "docs" / "REPLAY.md").read_text(encoding="utf-8")
    block = page.split("```\n", 2)[1]
    command, printed = block.split("\n", 1)
    assert command == "$ xuezhan replay settle-payer tests/corpus/settle.jsonl"
    done = subprocess.run(
        [XUEZHAN, "replay", "settle-payer", "tests/corpus/settle.jsonl"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.stdout == printed


# ------------------------------------------------------------------------------------------------ packs and pages
@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path]:
    """settle.jsonl, with one hand of a hostile id added, ingested: (the records, the warehouse)."""
    records = tmp_path / "settle.jsonl"
    lines = SETTLE.read_text(encoding="utf-8").splitlines(keepends=True)
    hostile = json.loads(lines[9])
    hostile["hand_id"] = "../x/<b>\u202e"
    records.write_text("".join([*lines, json.dumps(hostile, ensure_ascii=False) + "\n"]), encoding="utf-8")
    ingest([str(records)], tmp_path / "wh", workers=1)
    return records, tmp_path / "wh"


def test_a_dispute_pack_holds_the_replay_the_record_and_the_issue_rows(
    stored: tuple[Path, Path], tmp_path: Path
) -> None:
    records, wh = stored
    pack = tmp_path / "pack"
    done = xuezhan(
        "audit", "--warehouse", str(wh), "--hand", "settle-payer", "--hand", "../x/<b>\u202e", "--pack", str(pack)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("settle-payer: 1 issue row; wrote ")
    names = sorted(p.name for p in pack.iterdir())
    hostile = [n for n in names if not n.startswith("hand-settle-payer.")]
    assert len(names) == 8 and all("/" not in n and n.startswith("hand-.._x_") for n in hostile), names
    assert (pack / "hand-settle-payer.txt").read_text(encoding="utf-8") == SETTLE_PAYER + "\n"
    line = records.read_bytes().splitlines(keepends=True)[9]
    assert (pack / "hand-settle-payer.record.jsonl").read_bytes() == line
    issues = (pack / "hand-settle-payer.issues.csv").read_text(encoding="utf-8").splitlines()
    assert len(issues) == 2 and issues[1].startswith("settle-payer,SETTLE_PAYER,error,1,3,")
    page = (pack / "hand-settle-payer.html").read_text(encoding="utf-8")
    assert 'data-errors="1"' in page and '<span class="error">       ! SETTLE_PAYER: hu 1 from seat 0 (p1)' in page
    assert '<span class="missing">   +  0&gt;1=1hu@1</span>' in page
    hostile_page = next(pack / n for n in hostile if n.endswith(".html")).read_text(encoding="utf-8")
    assert "<b>" not in hostile_page and "\u202e" not in hostile_page and "&lt;b&gt;\\u202e" in hostile_page


def test_audit_of_chosen_hands_and_what_a_pack_needs(stored: tuple[Path, Path], tmp_path: Path) -> None:
    _, wh = stored
    done = xuezhan("audit", "--warehouse", str(wh), "--hand", "settle-delta", "--format", "json")
    assert done.returncode == 0 and {f["hand_id"] for f in json.loads(done.stdout)} == {"settle-delta"}
    done = xuezhan("audit", "--warehouse", str(wh), "--pack", str(tmp_path / "p"))
    assert done.returncode == 2 and "--pack needs --hand" in done.stderr
    done = xuezhan("audit", "--warehouse", str(wh), "--hand", "nobody", "--pack", str(tmp_path / "p"))
    assert done.returncode == 2 and "hand 'nobody' is not in the warehouse" in done.stderr


def test_the_replay_page_in_a_headless_browser(stored: tuple[Path, Path], tmp_path: Path) -> None:
    from test_report import _browse, _chromium

    chromium = _chromium()
    records, _ = stored
    page = tmp_path / "hand.html"
    done = xuezhan("replay", "settle-payer", str(records), "--html", str(page))
    assert done.returncode == 1 and done.stdout == f"wrote {page}\n", done.stderr
    dom = _browse(chromium, tmp_path / "profile", "--dump-dom", page.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<h1>hand settle-payer</h1>" in dom.stdout and "SETTLE_PAYER" in dom.stdout
    shot = tmp_path / "hand.png"
    done = _browse(
        chromium, tmp_path / "profile-shot", "--window-size=1000,900", f"--screenshot={shot}", page.resolve().as_uri()
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))
    assert pixels.shape[1] == 1000 and pixels[..., :3].std() > 0.05, "the page is blank"
    red = (pixels[..., 0] > 0.55) & (pixels[..., 1] < 0.2) & (pixels[..., 2] < 0.25)
    assert red.sum() > 200, "the error line is not shown in red"


def test_the_replay_page_is_written_with_the_html_layer_without_matplotlib(tmp_path: Path) -> None:
    """``replay --html`` writes its page with the report's HTML layer (dashboards.pages.replay on dashboards.html)
    and loads no chart library for it: the page draws nothing, and matplotlib cost the command about 30 MB."""
    page = tmp_path / "hand.html"
    code = (
        "import sys\n"
        "from cli import app\n"
        "try:\n"
        f"    app(prog_name='xuezhan', args=['replay', 'settle-payer', {str(SETTLE)!r}, '--html', {str(page)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('dashboards.html', 'dashboards.pages.replay', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "['dashboards.html', 'dashboards.pages.replay']"
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and '<span class="error">' in text and "SETTLE_PAYER" in text


def test_an_observers_record_hidden_draws_and_a_shown_hand() -> None:
    """Level observer: the hidden seats' deals are '-', their hidden draws are '<seat>+', and a win that shows
    the winner's hand prints the hand in its note."""
    import gzip

    from test_levels_observer import to_observer

    with gzip.open(ROOT / "data" / "sample.jsonl.gz", "rt", encoding="utf-8") as f:
        full = next(r for r in map(json.loads, f) if any(e["t"] == "hu" and e["seat"] != 0 for e in r["events"]))
    record = to_observer(full, 0, show=True)
    v = validate(record)
    text = replay_text(record, v)
    assert v.ok and "level observer" in text.splitlines()[0] and text.splitlines()[0].endswith("valid")
    seats = text.splitlines()[2:6]
    assert seats[0].split()[2] != "-" and all(line.split()[2] == "-" for line in seats[1:])
    assert re.search(r"\n +\d+  [123]\+ ", text), text  # a hidden draw
    shown = [line for line in text.splitlines() if "; shows " in line]
    assert shown and len(shown) == sum(1 for e in record["events"] if e["t"] == "hu" and "hand" in e), text
    assert all(re.search(r"  \d+h[1-9][mps](<\d)?!? .*win: .*; shows [1-9]", line) for line in shown), shown


def test_wide_names_keep_the_columns_aligned() -> None:
    """汉字 take two columns in a terminal: the table pads by display width, not by characters."""
    import unicodedata

    record = find_record([str(SETTLE)], "settle-payer").record
    record["players"] = ["张三", "李四", "p3", "王五六"]
    text = replay_text(record, validate(record))

    def column(line: str, cell: str) -> int:  # the display column where ``cell`` starts
        head = line[: line.index(cell)]
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in head)

    seats = text.splitlines()[2:6]
    assert (
        len({column(line, deal) for line, deal in zip(seats, ["235669m", "111444", "333999p", "123456p"], strict=True)})
        == 1
    )
