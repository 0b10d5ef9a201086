"""Words for humans: counts with their noun in the right number, lists in a line.

Every count the command prints next to a noun goes through :func:`plural`, so no line
says ``1 files`` or ``1 URLs`` (tests read every human line for that).
"""

from __future__ import annotations

from collections.abc import Sequence

#: Nouns whose plural is not the noun with an ``s``.
_IRREGULAR = {"child sitemap": "child sitemaps", "entry": "entries", "was": "were"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 file``, ``2 files``, ``12,345 URLs``: the count (with thousands separators)
    and the noun in the number the count asks for.

    >>> plural(1, "file"), plural(2, "file"), plural(1_000, "entry")
    ('1 file', '2 files', '1,000 entries')
    """
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {many or _IRREGULAR.get(noun) or noun + 's'}"


def listing(items: Sequence[str], shown: int = 3) -> str:
    """``a, b, c and 4 more``: the first ``shown`` items, then how many are left.

    >>> listing(["a"]), listing(["a", "b"]), listing(["a", "b", "c", "d", "e"])
    ('a', 'a and b', 'a, b, c and 2 more')
    """
    head = list(items[:shown])
    rest = len(items) - len(head)
    if rest:
        return f"{', '.join(head)} and {rest:,} more"
    if len(head) <= 1:
        return "".join(head)
    return f"{', '.join(head[:-1])} and {head[-1]}"
