"""xuezhan: audit and analyse records of Sichuan blood-battle mahjong. See README.md."""

from __future__ import annotations


def compiled() -> bool:
    """Does the replay engine run as compiled modules (an ``XUEZHAN_COMPILE=1`` install, see setup.py)?"""
    from pipeline.game import state

    return not (state.__file__ or "").endswith(".py")
