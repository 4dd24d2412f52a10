"""The committed sample's lines for tests that need good records: the sample (``data/sample.jsonl.gz``) carries
injected faults (``data/sample.labels.json``): broken JSON lines and duplicated records anywhere in it, where
the simulator's seed puts them. A test that wants records with distinct hand ids takes them from here, not
from the sample's first lines, so that regenerating the sample cannot change what the test feeds in."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample.jsonl.gz"


def _records() -> Iterator[bytes]:
    seen: set[str] = set()
    with gzip.open(SAMPLE) as f:
        for line in f:
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # an injected broken line
            if not isinstance(obj, dict) or obj.get("hand_id") in seen:
                continue  # an injected duplicate
            seen.add(obj["hand_id"])
            yield line.rstrip(b"\n")


def sample_lines(n: int) -> list[bytes]:
    """The sample's first ``n`` lines that parse as records, each hand id once (without their newlines)."""
    out = list(islice(_records(), n))
    assert len(out) == n, f"the sample has only {len(out)} such records"
    return out
