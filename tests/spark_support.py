"""Whether Spark can run here, for the Spark tests (``tests/test_spark.py``: ingest; ``tests/test_spark_screens.py``:
the screens' heavy pass): they need pyspark (``pip install 'xuezhan[spark]'``) and Java 17+, and are skipped, with
the reason, only where one of them is missing."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path


def spark_missing() -> str | None:
    """Why Spark cannot run here (no pyspark, no Java 17+), or None."""
    if any(importlib.util.find_spec(m) is None for m in ("pyspark", "pandas")):
        return "pyspark is not installed: pip install 'xuezhan[spark]'"
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home, "bin", "java")) if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={home} holds no bin/java" if home else "no java on PATH, and JAVA_HOME is not set"
        return f"Spark needs Java 17 or newer: {where}"
    said = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    m = re.search(r'version "(\d+)(?:\.(\d+))?', said)
    major = int(m[2] if m and m[1] == "1" else m[1]) if m else 0
    if major < 17:
        return f"Spark needs Java 17 or newer, {java} is {said.splitlines()[0] if said else 'unknown'}"
    return None
