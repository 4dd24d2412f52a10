"""Simulated rooms ingested into a warehouse, for the tests of the screens and of the report's evidence."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.ingest.run import ingest
from pipeline.simulate.inject import InjectSpec
from pipeline.simulate.tables import SimConfig, write


def simulated_room(folder: Path, spec: str, seed: int, hands: int) -> tuple[Path, dict[str, object]]:
    """``hands`` hands of 8 players simulated with the anomalies of ``spec`` (``simulate --inject``) and ingested:
    the warehouse and the simulator's labels."""
    out = folder / "games.jsonl.gz"
    write(SimConfig(hands=hands, seed=seed, players=8, inject=InjectSpec.parse(spec)), out)
    ingest([str(out)], folder / "wh", workers=1)
    return folder / "wh", json.loads((folder / "games.labels.json").read_text())
