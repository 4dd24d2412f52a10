"""File names made from ids that come from the records (players, hands): readable where they can be, always
one safe path component, distinct for distinct ids. The report's player pages and the audit's dispute packs
are named so."""

from __future__ import annotations

import hashlib
import re
import unicodedata

SLUG_BYTES = 64  # at most this many UTF-8 bytes of an id in a file name: names stay under 143 bytes
_PLAIN_ID = re.compile(r"[a-z0-9_][a-z0-9_.-]*")  # ids that are their own file name (when short enough)
_DIGEST_END = re.compile(r"-[0-9a-f]{8,}$")  # how a digested name ends: no plain id may end so


def digest(text: str, chars: int = 8) -> str:
    """A short hex digest of ``text`` (SHA-256): keeps distinct strings distinct once they are cut or made
    safe."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:chars]


def file_stem(identifier: str, digest_chars: int = 8) -> str:
    """The id itself when it is plain (lower-case ASCII letters, digits, ``_.-``, at most :data:`SLUG_BYTES`),
    otherwise a readable slug of it and a digest of the whole id.

    The slug keeps letters and digits of every script (NFC), and ``-`` and ``.``; anything else (markup,
    quotes, ``/``, ``\\``, control characters, spaces) becomes ``_``; it is cut at :data:`SLUG_BYTES`. The
    digest (SHA-256, ``digest_chars`` hex digits) keeps distinct ids in distinct files, also ids that differ
    only in case on a case-insensitive file system; a plain id never ends like a digest, so never meets a
    digested name. A stem is at most 64 + 1 + ``digest_chars`` bytes.

    >>> file_stem("p001"), file_stem("张三/../x"), file_stem("P001")
    ('p001', '张三_.._x-7975e758', 'P001-df1e4005')
    """
    if _PLAIN_ID.fullmatch(identifier) and len(identifier) <= SLUG_BYTES and not _DIGEST_END.search(identifier):
        return identifier
    text = unicodedata.normalize("NFC", identifier)
    slug = re.sub(r"_+", "_", "".join(c if c.isalnum() or c in "-." else "_" for c in text))
    while len(slug.encode("utf-8")) > SLUG_BYTES:
        slug = slug[:-1]
    return f"{slug}-{digest(identifier, digest_chars)}"
