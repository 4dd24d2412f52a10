"""Issue 39 point 3: ``import`` and ``score --batch`` are bounded like ingest. A 1 GiB line took 5.2 GB in
``import`` and 2.1 GB in ``score --batch``, and the 45-byte sheet cell ``根×100000000`` 1.6 GB; now each is
rejected by the same caps as ingest (line length, counts per hand) and the command's peak memory stays that of
a small input. Measured as the kernel's high-water mark of the command (``ru_maxrss`` of a fresh launcher's
child), never by time: a loaded machine cannot fail it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
XUEZHAN = str(Path(sys.executable).with_name("xuezhan"))
LONG = 100 << 20  # bytes in the huge line: 25 times ingest's line cap
SLACK_MB = 48  # what a huge input may add to the command's peak, beside the same command on a small input

# A fresh interpreter runs the command and prints its exit code and peak memory (MiB): a child forked by this
# suite's grown process would start from its high-water mark.
_LAUNCH = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10)
"""


def _peak(*args: str, cwd: Path) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCH, XUEZHAN, *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )
    code, mb = done.stdout.split()
    return int(code), int(mb)


GOOD_REQUEST = b'{"concealed": "123s567s234s888s9s", "win_tile": "9s", "self_drawn": true}\n'


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB: Linux")
def test_score_batch_rejects_a_huge_line_without_holding_it(tmp_path: Path) -> None:
    (tmp_path / "small.jsonl").write_bytes(GOOD_REQUEST)
    (tmp_path / "huge.jsonl").write_bytes(GOOD_REQUEST + b'{"concealed": "' + b"1" * LONG + b'"}\n' + GOOD_REQUEST)
    code, small = _peak("score", "--batch", "small.jsonl", cwd=tmp_path)
    assert code == 0
    code, huge = _peak("score", "--batch", "huge.jsonl", cwd=tmp_path)
    assert code == 1  # the line is unreadable: said, and the batch goes on
    assert huge - small < SLACK_MB, (small, huge)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB: Linux")
def test_import_rejects_a_huge_mjai_line_and_a_huge_sheet_count_without_holding_them(tmp_path: Path) -> None:
    sheet = (ROOT / "data" / "sample-sheet.csv").read_text(encoding="utf-8").splitlines()
    (tmp_path / "sheet.csv").write_text("\n".join(sheet) + "\n", encoding="utf-8")
    assert "清一色" in sheet[2]
    sheet[2] = sheet[2].replace("清一色", "根×100000000")  # 45 bytes asking for 10^8 roots
    (tmp_path / "roots.csv").write_text("\n".join(sheet) + "\n", encoding="utf-8")
    start = b'{"type":"start_game","names":["a","b","c","d"]}\n'
    (tmp_path / "huge.mjson").write_bytes(start + b'{"type":"dahai","actor":0,"pai":"' + b"x" * LONG + b'"}\n')
    code, small = _peak("import", "--from", "sheet", "sheet.csv", "-o", "sheet.jsonl", cwd=tmp_path)
    assert code == 0
    for args in (("sheet", "roots.csv", "roots.jsonl"), ("mjai", "huge.mjson", "huge.jsonl")):
        code, peak = _peak("import", "--from", args[0], args[1], "-o", args[2], cwd=tmp_path)
        assert code == 1, args  # rejected, with its reason beside the output
        assert peak - small < SLACK_MB, (args, small, peak)
        rejects = tmp_path / args[2].replace(".jsonl", ".rejects.jsonl")
        assert rejects.stat().st_size < 1 << 20  # the reject's bytes are bounded too
