"""Normative schemas of xuezhan's data: the ``xzlog/1`` record (JSON Schema) and its field guide.

``xzlog-1.schema.json`` checks the shape of one record; ``XZLOG.md`` explains every field. Whether
the hand is legal (tile counts, turn order, payments) is for replay to decide, not the schema.

>>> xzlog_schema()["$id"]
'https://xuezhan.dev/schemas/xzlog-1.schema.json'
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

SCHEMA_DIR: Path = Path(__file__).resolve().parent

XZLOG_SCHEMA_FILE = "xzlog-1.schema.json"


@functools.cache
def xzlog_schema() -> dict[str, Any]:
    """The JSON Schema of one ``xzlog/1`` record, loaded once; callers must not mutate it."""
    with (SCHEMA_DIR / XZLOG_SCHEMA_FILE).open(encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema
