"""The compiled build of the replay engine (issues 8 and 23): the modules every record goes through are compiled
with mypyc — the same source, checked by mypy, built as C extensions — whenever the package is built, unless
it cannot be:

    pip install .                     # compiled where a C compiler exists (mypy comes in as a build requirement)
    XUEZHAN_COMPILE=0 pip install .   # pure Python, by choice
    XUEZHAN_COMPILE=1 pip install .   # compiled, or fail: no silent fallback (the wheel builds use this)
    make compiled                     # the default build into build/compiled (make demo and make test use it)

Without a C compiler (or without mypy, in a ``--no-build-isolation`` build), the build falls back to pure
Python: it says so in the build's output and leaves the reason in the package (``pipeline/_engine.txt``),
so that every ``xuezhan`` command warns once and ``xuezhan --version`` names the engine. An editable install
(``pip install -e .``, the development environment ``make`` creates in .venv) is never compiled: there the
sources are what runs, so that an edit takes effect and coverage can trace every line.

The project's metadata lives in pyproject.toml; this file only adds the extension modules.

How the compiled modules are written, so that mypyc keeps them native (each measured with callgrind):

- an indexed update is spelt ``x[i] = x[i] + n``: mypyc compiles ``x[i] += n`` to a generic Python
  in-place add on boxed objects, the spelt-out form to an integer add;
- a ``Sequence[int]`` argument is iterated (or sliced, then iterated), not indexed: ``counts27[k]`` on a
  Sequence is a generic ``__getitem__`` call per element, a ``for`` loop walks a list or tuple natively;
- a running total is kept in a local, not in a list slot: an int stored in a list is a Python object, and
  above 256 a new one is allocated at every store;
- only a value typed ``list`` or ``tuple`` is walked natively: a ``Sequence[int]`` loop is a generic iterator
  (``list(seq)`` once, when the loop is hot), and ``xs = seq if isinstance(seq, list) else list(seq)`` infers
  ``list[Any]`` unless annotated;
- ``for x in (0, 9, 18)`` builds and iterates a boxed tuple: loop over ``range``;
- ``sum()`` of a list and ``any(seq[a:b])`` are generic calls, several times a native loop;
- orjson's dictionaries hold their own key objects: a look-up with a string literal compares characters, a
  look-up with the dictionary's own key object is found by identity (the record reader adopts them);
- a product with a negative operand (``n * step`` with ``n = -1``) leaves the native path for a boxed multiply
  (mypyc's overflow guard is an unsigned compare): add or subtract instead;
- a call with ``**a_dictionary`` is a generic call (16k instructions to build a record): name the arguments;
- walking a dictionary's items costs about 100 instructions an item, more than looking up a few keys with the
  dictionary's own key objects (the record reader tried it for each event's three fields: 181k -> 208k
  instructions a record); a set or dictionary keyed by ints costs some 220 instructions a look-up (hash,
  probes, and a comparison of the int objects);
- a ``type(x) is dict`` test narrows ``x`` for the calls after it only where mypy narrows it: in an ``if``'s
  condition, not inside a conditional expression (``len(x) if type(x) is dict else 0`` left ``x.get`` a generic
  method call: the reader's 181k instructions a record became 251k);
- a set of a few small ints (a hand's winning tiles) is an int of bits: built, tested and kept without an
  allocation;
- state kept per seat in int lists (codes, sizes, masks) is boxed at every store and unboxed at every read:
  attributes of a compiled class (``state._Concealed``, ``state._Sums``) hold them as native ints (three sums of
  suit codes kept in a list of three cost 20k instructions a record, the values above 256: a new object a store);
- a dictionary look-up by an int computed natively boxes it first (about 350 instructions with the hash, the
  probe, the comparison and the free): a dense ``bytes`` table read at a computed index is two byte reads
  (``hand.suit_info``); and a digit-by-digit conversion costs some 80 instructions an iteration in tagged
  arithmetic, where two list reads of precomputed parts do (``hand.suit_index``);
- a ``lambda`` in a method (``max(..., key=lambda ...)``) builds a closure object on every call;
- an object built and freed for every event (the claim window of each discard: about 400 instructions) can be
  kept and reopened;
- a frozen dataclass built on the hot path keeps an interpreted ``__init__`` (~8k instructions for 5 fields):
  the engine's values are :class:`~pipeline.rules.values.Value` classes instead; and a frozen dataclass of a
  compiled module cannot be unpickled (its ``__setstate__`` assigns fields): what crosses processes is a
  named tuple.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import CCompilerError, ExecError, PlatformError

# The hot path of `validate` and of ingest: tiles, parsing, the hand state machine, scoring and settlement,
# and ingest's record-to-rows step; and the reference policy, which the review (`review`, `assist`, `replay
# --review`) asks of every decision (compiled: about 30% less CPU a hand reviewed, docs/REPLAY.md).
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
    "pipeline/game/evidence.py",
    "pipeline/game/state.py",
    "pipeline/game/start.py",
    "pipeline/game/record.py",
    "pipeline/game/settlement.py",
    "pipeline/game/policy.py",
    "pipeline/validate.py",
    "pipeline/ingest/work.py",
]

# Where a pure-Python build leaves its reason, read by pipeline.engine_note().
ENGINE_NOTE = Path("pipeline") / "_engine.txt"


def c_compiler() -> str | None:
    """The C compiler a build would call, if it can be found (``$CC``, else the interpreter's own ``CC``);
    None when there is none. On Windows the compiler is found by the build itself, so the answer is "cl"."""
    if sys.platform == "win32":
        return "cl"
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    words = shlex.split(cc)
    return shutil.which(words[0]) if words else None


def editable() -> bool:
    """Is this an editable install (PEP 660's ``editable_wheel``, or the old ``develop``)?"""
    return any(arg in ("editable_wheel", "develop") for arg in sys.argv[1:])


def builds() -> bool:
    """Does this run of setup.py build the package (a wheel, an install), rather than only read its metadata
    (``egg_info``, ``dist_info``, ``sdist``: pip's first questions, which need no C)?"""
    return any(arg in ("bdist_wheel", "build", "build_ext", "install") for arg in sys.argv[1:])


def plan(mode: str, *, is_editable: bool, compiler: str | None, has_mypyc: bool) -> tuple[bool, str]:
    """Compile or not, and the reason when not: ``mode`` is ``XUEZHAN_COMPILE`` (``1`` compile or fail, ``0``
    pure by choice, anything else the default). A reason starting with "fallback" is warned about at run time.

    >>> plan("", is_editable=False, compiler="/usr/bin/gcc", has_mypyc=True)
    (True, '')
    >>> plan("", is_editable=False, compiler=None, has_mypyc=True)[1]
    'fallback: no C compiler was found when xuezhan was built'
    >>> plan("0", is_editable=False, compiler="/usr/bin/gcc", has_mypyc=True)[1]
    'chosen: built with XUEZHAN_COMPILE=0'
    >>> plan("", is_editable=True, compiler="/usr/bin/gcc", has_mypyc=True)
    (False, 'editable')
    """
    if mode == "0":
        return False, "chosen: built with XUEZHAN_COMPILE=0"
    if mode == "1":
        if compiler is None or not has_mypyc:
            raise SystemExit("XUEZHAN_COMPILE=1 needs a C compiler and mypy (mypyc) in the build environment")
        return True, ""
    if is_editable:
        return False, "editable"
    if compiler is None:
        return False, "fallback: no C compiler was found when xuezhan was built"
    if not has_mypyc:
        return False, "fallback: mypy (mypyc) was not in the build environment"
    return True, ""


def _warn(reason: str) -> None:
    print(f"warning: xuezhan's replay engine is built as pure Python, several times slower ({reason})", file=sys.stderr)


def _write_note(build_lib: str, reason: str) -> None:
    path = Path(build_lib) / ENGINE_NOTE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(reason + "\n", encoding="utf-8")


class BuildPy(build_py):
    """Leaves the pure build's reason in the package (never in an editable install: the sources run there)."""

    def run(self) -> None:
        super().run()
        if REASON and REASON != "editable" and not self.editable_mode:
            _write_note(self.build_lib, REASON)


class OptionalBuildExt(build_ext):
    """Builds the compiled modules; in the default mode a compiler that fails (no Python headers, a broken
    toolchain) leaves a pure-Python package with the reason, instead of a failed install."""

    def run(self) -> None:
        try:
            super().run()
        except (CCompilerError, ExecError, PlatformError, OSError) as e:
            if MODE == "1":
                raise
            for ext in self.extensions:  # a half-built engine would not import: leave none of it
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            reason = f"fallback: the C build failed ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
            _warn(reason)
            build_lib = self.get_finalized_command("build_py").build_lib
            _write_note(build_lib, reason)


MODE = os.environ.get("XUEZHAN_COMPILE", "")
REASON = ""


def main() -> None:
    global REASON
    try:
        from mypyc.build import mypycify
    except ImportError:
        mypycify = None
    compile_, REASON = plan(MODE, is_editable=editable(), compiler=c_compiler(), has_mypyc=mypycify is not None)
    ext_modules = []
    if not builds():
        REASON = ""  # metadata only: nothing is built, so nothing to compile or to warn about
    elif compile_ and mypycify is not None:
        ext_modules = mypycify(COMPILED, opt_level="3")
    elif REASON.startswith("fallback"):
        _warn(REASON)
    setup(ext_modules=ext_modules, cmdclass={"build_py": BuildPy, "build_ext": OptionalBuildExt})


if __name__ == "__main__":  # how setuptools runs it; tests import it for plan() and c_compiler()
    main()
