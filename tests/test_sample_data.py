"""The committed sample is what the simulator makes: its first hands regenerate byte for byte."""

from __future__ import annotations

import gzip
from itertools import islice
from pathlib import Path

from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, simulate

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample.jsonl.gz"
# The command in data/README.md.
CONFIG = SimConfig(
    hands=2000, seed=20261129, players=16, inject=InjectSpec.parse("collude=1:0.3,score_errors=0.02,corrupt=0.01,bot=1")
)


def test_sample_regenerates() -> None:
    lines, _ = simulate(CONFIG)
    fresh = list(islice(lines, 120))
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        committed = [line.rstrip("\n") for line in islice(f, len(fresh))]
    assert fresh == committed, "data/sample.jsonl.gz is stale: regenerate it with the command in data/README.md"
