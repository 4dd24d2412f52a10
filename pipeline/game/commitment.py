"""Wall commitments: a platform's published hash of the seed a hand's wall was shuffled from.

A record's optional ``commitment`` (schemas/XZLOG.md) names its ``scheme``, a name and version, and carries what
that scheme needs. A revealed seed must hash to the committed value (``TILE_COMMIT_SEED``), and the wall the seed
regenerates must be the record's wall (``TILE_COMMIT_WALL``): a stacked deal is then proved hand by hand, not only
inferred from statistics. Without the seed the commitment can only be stored; that is listed as not checked.

``salasasa-sha256-v1`` (the Salasasa platform, from its public server code): ``hash`` = sha256 of the master
seed as 64 hex digits followed by the ``salt``; hand ``round`` is shuffled from the integer value of sha256(seed
hex + the round number in decimal) by Python's ``random.seed`` and ``random.shuffle`` of the 108 tiles in
sorted order (11-19 万, 21-29 饼, 31-39 条, four of each); seat 0 takes the first 13 tiles, seat 1 the next
13, …, the dealer the 53rd, and every later draw the next.

>>> from pipeline.rules.tiles import parse_tiles
>>> seed, salt = "0" * 63 + "1", "00" * 16
>>> c = Commitment("salasasa-sha256-v1", seed_hash(seed, salt), salt, seed, 1)
>>> check(c, regenerate(c, dealer=0), dealer=0)
[]
>>> check(c, regenerate(c, dealer=1), dealer=0)[0][0]
'TILE_COMMIT_WALL'
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

SCHEMES: Final = ("salasasa-sha256-v1",)
# What a hand's commitment proved (hands.wall_commitment; null: the record carries none):
STATUSES: Final = {
    "verified": "the wall is the one the revealed seed gives, and the seed hashes to the commitment",
    "seed_only": "the revealed seed hashes to the commitment; the record has no wall to compare (level below full)",
    "unrevealed": "committed, but no seed revealed: nothing could be checked",
    "seed_mismatch": "the revealed seed does not hash to the commitment (TILE_COMMIT_SEED)",
    "wall_mismatch": "the wall is not the one the committed seed gives (TILE_COMMIT_WALL)",
}
_SORTED: Final = tuple(kind for kind in range(27) for _ in range(4))  # our kinds: 0-8 m, 9-17 p, 18-26 s


@dataclass(frozen=True, slots=True)
class Commitment:
    scheme: str
    hash: str
    salt: str
    seed: str | None
    round: int


def seed_hash(seed_hex: str, salt: str) -> str:
    """The committed value of a seed: sha256 of the seed's 64 hex digits and the salt."""
    return hashlib.sha256((seed_hex + salt).encode("utf-8")).hexdigest()


def regenerate(c: Commitment, *, dealer: int) -> tuple[int, ...]:
    """The wall (tile kinds, in our dealing convention: the dealer's 13 first) that the seed gives hand
    ``c.round`` with ``dealer`` dealing."""
    assert c.seed is not None
    round_seed = int(hashlib.sha256((c.seed + str(c.round)).encode("utf-8")).hexdigest(), 16)
    tiles = list(_SORTED)
    random.Random(round_seed).shuffle(tiles)
    blocks = [tiles[13 * k : 13 * k + 13] for k in range(4)]
    return tuple(t for k in range(4) for t in blocks[(dealer + k) % 4]) + tuple(tiles[52:])


def status(c: Commitment, codes: Iterable[str], *, has_wall: bool) -> str:
    """What the commitment proved (a key of :data:`STATUSES`), from the validator's issue ``codes`` for the hand
    (:func:`check`'s findings among them) and whether the record has a wall.

    >>> hidden = Commitment("salasasa-sha256-v1", "0" * 64, "", None, 1)
    >>> shown = Commitment("salasasa-sha256-v1", "0" * 64, "", "1" * 64, 1)
    >>> status(hidden, [], has_wall=True), status(shown, ["TILE_COMMIT_WALL"], has_wall=True)
    ('unrevealed', 'wall_mismatch')
    >>> status(shown, [], has_wall=True), status(shown, [], has_wall=False)
    ('verified', 'seed_only')
    """
    codes = set(codes)
    if "TILE_COMMIT_SEED" in codes:
        return "seed_mismatch"
    if "TILE_COMMIT_WALL" in codes:
        return "wall_mismatch"
    if c.seed is None:
        return "unrevealed"
    return "verified" if has_wall else "seed_only"


def check(c: Commitment, wall: tuple[int, ...] | None, *, dealer: int) -> list[tuple[str, str]]:
    """The commitment's findings as (code, message): the seed against the hash, the wall against the seed."""
    if c.seed is None:
        return []
    if seed_hash(c.seed, c.salt) != c.hash:
        return [("TILE_COMMIT_SEED", f"sha256(seed + salt) is {seed_hash(c.seed, c.salt)}, the commitment is {c.hash}")]
    if wall is None:
        return []
    expected = regenerate(c, dealer=dealer)
    if tuple(wall) != expected:
        first = next(i for i, (a, b) in enumerate(zip(wall, expected, strict=True)) if a != b)
        return [
            (
                "TILE_COMMIT_WALL",
                f"the wall differs from the one the committed seed gives for hand {c.round} from tile {first}",
            )
        ]
    return []


def commitments_line(counts: Mapping[str, int]) -> str:
    """One line for the hands' commitments by :data:`STATUSES` key (``validate``, ``deals`` and the report say
    the same).

    >>> commitments_line({"verified": 2, "unrevealed": 8})  # doctest: +ELLIPSIS
    'wall commitments: 2 walls proved by their revealed seed, 0 that do not match it, 8 committed with no seed...'
    """
    faulty = counts.get("seed_mismatch", 0) + counts.get("wall_mismatch", 0)
    seed_only = counts.get("seed_only", 0)
    also = f", {seed_only} seeds matched with no wall to compare" if seed_only else ""
    return (
        f"wall commitments: {counts.get('verified', 0)} walls proved by their revealed seed, {faulty} that do not "
        f"match it{also}, {counts.get('unrevealed', 0)} committed with no seed revealed (not checked)"
    )
