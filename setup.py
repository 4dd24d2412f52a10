"""Optional compiled build of the replay engine (issue 8): ``XUEZHAN_COMPILE=1`` compiles the modules every
record goes through with mypyc — the same source, checked by mypy, built as C extensions. Without the
variable (the default, and every editable install) nothing is compiled and the package is pure Python.

    XUEZHAN_COMPILE=1 pip install --no-build-isolation .     # needs mypy and a C compiler
    make compiled                                             # the same into build/compiled, for bench and tests

The project's metadata lives in pyproject.toml; this file only adds the extension modules.

How the compiled modules are written, so that mypyc keeps them native (each measured with callgrind):

- an indexed update is spelt ``x[i] = x[i] + n``: mypyc compiles ``x[i] += n`` to a generic Python
  in-place add on boxed objects, the spelt-out form to an integer add;
- a ``Sequence[int]`` argument is iterated (or sliced, then iterated), not indexed: ``counts27[k]`` on a
  Sequence is a generic ``__getitem__`` call per element, a ``for`` loop walks a list or tuple natively;
- a running total is kept in a local, not in a list slot: an int stored in a list is a Python object, and
  above 256 a new one is allocated at every store.
"""

from __future__ import annotations

import os

from setuptools import setup

# The hot path of `validate` and of ingest: tiles, parsing, the hand state machine, scoring and settlement.
# ruleset.py stays interpreted: the rule profiles read their switch types from the dataclass annotations,
# which compiled classes do not keep (and a RuleSet is built once per distinct set of switches).
COMPILED = [
    "pipeline/codes.py",
    "pipeline/rules/tiles.py",
    "pipeline/rules/values.py",
    "pipeline/rules/hand.py",
    "pipeline/rules/fan.py",
    "pipeline/rules/settle.py",
    "pipeline/game/events.py",
    "pipeline/game/state.py",
    "pipeline/game/start.py",
    "pipeline/game/record.py",
    "pipeline/validate.py",
]

ext_modules = []
if os.environ.get("XUEZHAN_COMPILE") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED, opt_level="3")

setup(ext_modules=ext_modules)
