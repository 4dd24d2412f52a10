"""Engines: strong policies that choose among a seat's legal options from what the seat can see, as a cheat's AI
does. Two uses, one home:

- the simulator's engine followers (``simulate --inject follow=N:P``) play the built-in engine's choices;
- the engine-assistance screen takes one as a second yardstick (``xuezhan assist --yardstick SPEC``): a player's
  agreement with an engine the operator suspects the cheats use, beside the reference policy's (the transparent
  yardstick, :mod:`pipeline.game.policy`).

An engine is a callable ``engine(state, seat, rng)`` (:data:`Engine`) returning the seat's options best first,
each an object with an ``event`` (the :mod:`pipeline.game.events` event, ``None`` for a pass), as
:class:`~pipeline.engines.lookahead.Choice` has. It must read only what the seat can see (its own tiles and the
public record: :func:`pipeline.engines.lookahead.sight`), never another seat's concealed tiles or the wall, and
draw its randomness from ``rng`` alone, so that the same decision asked twice gets the same answer. It ranks every
option it weighed (at least its best two): where it offers a single option (the built-in engine, holding one kind
of its void suit, throws it and looks at nothing else) it saw no choice, and the screen does not judge a player's
decision by it there (:func:`pipeline.audit.review.review`); an engine that returns only its best never judges.

``SPEC`` (:func:`load`):

- ``lookahead``: the built-in sampling look-ahead (:mod:`pipeline.engines.lookahead`), the simulator's
  followers' engine at its defaults;
- ``lookahead:samples=48,horizon=6``: the same make with other :class:`~pipeline.engines.lookahead.Settings`
  (another version of a helper);
- ``package.module:name``: an engine of the operator's own, imported from the Python path.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from functools import partial
from typing import Any, Final

from pipeline.engines import lookahead
from pipeline.game.state import HandState

Engine = Callable[[HandState, int, random.Random], Sequence[Any]]
BUILT_IN: Final = "lookahead"


class EngineSpecError(ValueError):
    """An engine ``SPEC`` that names no engine (the message says why)."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """An engine loaded from its ``spec``: ``name`` as the screen's output names it (the spec, normalized)."""

    name: str
    decide: Engine


def load(spec: str) -> Loaded:
    """The engine ``spec`` names (the module docstring); raises :class:`EngineSpecError`.

    >>> load("lookahead").name, load("lookahead:horizon=6,samples=48").name
    ('lookahead', 'lookahead:samples=48,horizon=6')
    >>> load("stockfish")
    Traceback (most recent call last):
    ...
    pipeline.engines.EngineSpecError: 'stockfish' is neither lookahead[:setting=value,...] nor package.module:name
    """
    spec = spec.strip()
    head, _, tail = spec.partition(":")
    if head == BUILT_IN:
        cfg = _settings(tail)
        if cfg == lookahead.DEFAULT:
            return Loaded(BUILT_IN, lookahead.decide)
        changed = [f"{f.name}={getattr(cfg, f.name)}" for f in fields(cfg) if getattr(cfg, f.name) != f.default]
        return Loaded(f"{BUILT_IN}:{','.join(changed)}", partial(lookahead.decide, cfg=cfg))
    if not tail or not head or "=" in tail:
        raise EngineSpecError(f"{spec!r} is neither {BUILT_IN}[:setting=value,...] nor package.module:name")
    try:
        module = importlib.import_module(head)
    except ImportError as e:
        raise EngineSpecError(f"cannot import {head!r} for the engine {spec!r}: {e}") from e
    found: Any = module
    for part in tail.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise EngineSpecError(f"{spec!r}: {head} has no callable {tail!r}")
    return Loaded(spec, found)


def _settings(text: str) -> lookahead.Settings:
    """``samples=48,horizon=6`` as :class:`~pipeline.engines.lookahead.Settings` (the rest at their defaults)."""
    kinds = {f.name: f.type for f in fields(lookahead.Settings)}
    given: dict[str, Any] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if key not in kinds:
            raise EngineSpecError(f"{BUILT_IN} has no setting {key!r} (its settings: {', '.join(kinds)})")
        if not eq:
            raise EngineSpecError(f"{BUILT_IN}'s setting {key!r} has no value ({key}=...)")
        try:
            given[key] = int(value) if kinds[key] in ("int", int) else float(value)
        except ValueError as e:
            raise EngineSpecError(f"{BUILT_IN}'s setting {key}={value!r} is not a number of its kind") from e
    try:
        return lookahead.Settings(**given)
    except ValueError as e:
        raise EngineSpecError(str(e)) from e


def first(engine: Engine, state: HandState, seat: int, rng: random.Random) -> tuple[int, Any]:
    """How many options the engine ranks at ``state`` for ``seat``, and its first choice's event (``None``: a pass,
    or no option): ``(0, None)`` where it offers none."""
    ranked = engine(state, seat, rng)
    if not ranked:
        return (0, None)
    return (len(ranked), getattr(ranked[0], "event", None))
