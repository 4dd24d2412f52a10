"""Text from the records made safe to print: ids and messages are data, never instructions to a terminal.

A leaf of the package (nothing but the standard library), so that a command printing one reject line does not
load the analytics' data-frame libraries to escape it (``import`` on a sheet with one bad row loaded Polars and
NumPy for it: 47 MB more)."""

from __future__ import annotations

import unicodedata

_UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def printable(value: object) -> str:
    r"""``value`` as text a terminal can print as it is: every control character (the escape that starts a
    terminal sequence, BEL, tab, newline, DEL, C1), format character (a bidirectional override, a zero-width
    joiner), line or paragraph separator and unassigned code point is written as ``\uXXXX``, as the report
    writes them. Ids come from the records: they are data, never instructions to the terminal.

    >>> print(printable("p1\x1b[31mred\u202e"))
    p1\u001b[31mred\u202e
    >>> printable("张三 & 李四"), printable(None)
    ('张三 & 李四', 'None')
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _UNPRINTABLE else c for c in text)
