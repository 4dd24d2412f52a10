"""xuezhan: audit and analyse records of Sichuan blood-battle mahjong. See README.md."""

from __future__ import annotations


def compiled() -> bool:
    """Does the replay engine run as compiled modules (the default build where a C compiler exists, see setup.py)?"""
    from pipeline.game import state

    return not (state.__file__ or "").endswith(".py")


def engine_note() -> str:
    """Why this install runs pure Python, as its build left it in ``pipeline/_engine.txt`` (setup.py): a reason
    starting with ``fallback:`` (no C compiler, a failed C build) or ``chosen:`` (``XUEZHAN_COMPILE=0``); empty
    for a compiled build and for the sources themselves (an editable install or a checkout)."""
    from pathlib import Path

    try:
        return Path(__file__).with_name("_engine.txt").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def engine() -> str:
    """The engine that runs, for ``xuezhan --version`` and the test header: ``compiled``, or ``pure Python``
    with the build's reason when it left one.

    >>> engine() in ("compiled", "pure Python") or engine().startswith("pure Python (")
    True
    """
    if compiled():
        return "compiled"
    note = engine_note()
    return f"pure Python ({note})" if note else "pure Python"
