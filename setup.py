"""Optional compiled build of the replay engine (issue 8): ``XUEZHAN_COMPILE=1`` compiles the modules every
record goes through with mypyc — the same source, checked by mypy, built as C extensions. Without the
variable (the default, and every editable install) nothing is compiled and the package is pure Python.

    XUEZHAN_COMPILE=1 pip install --no-build-isolation .     # needs mypy and a C compiler
    make compiled                                             # the same into build/compiled, for bench and tests

The project's metadata lives in pyproject.toml; this file only adds the extension modules.
"""

from __future__ import annotations

import os

from setuptools import setup

# The hot path of `validate` and of ingest: tiles, parsing, the hand state machine, scoring and settlement.
# ruleset.py stays interpreted: the rule profiles read their switch types from the dataclass annotations,
# which compiled classes do not keep (and a RuleSet is built once per distinct set of switches).
COMPILED = [
    "pipeline/rules/tiles.py",
    "pipeline/rules/values.py",
    "pipeline/rules/hand.py",
    "pipeline/rules/fan.py",
    "pipeline/rules/settle.py",
    "pipeline/game/events.py",
    "pipeline/game/state.py",
    "pipeline/game/record.py",
    "pipeline/validate.py",
]

ext_modules = []
if os.environ.get("XUEZHAN_COMPILE") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED, opt_level="3")

setup(ext_modules=ext_modules)
