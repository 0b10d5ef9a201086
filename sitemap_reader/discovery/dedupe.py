"""Run-wide URL dedupe in compact memory: an open-addressing table of 64-bit hashes.

A Python ``set`` of URL strings costs well over 100 bytes per URL, and even a set of
64-bit ints costs about 70 (a 36-byte int object plus the set's sparse slots). This table
stores only the 8-byte hash in an ``array('Q')`` kept between 3/8 and 3/4 full, so it
costs 11 to 21 bytes per unique URL (16.8 measured at 1,000,000 URLs; 25 at the peak of
a resize, when the old and the new table coexist) and never stores the URL itself.

The hash is Python's own ``hash(str)``: SipHash keyed with a random per-process secret,
so an adversarial sitemap cannot aim collisions at it (unless PYTHONHASHSEED pins the
key), and it is cached on the string object. With 64 bits, the chance that two distinct
URLs collide in a run of n URLs is about n²/2⁶⁵: 3·10⁻⁸ for a million URLs. A collision
drops one URL as a false duplicate; it can never emit a URL twice.
"""

from __future__ import annotations

from array import array
from typing import Protocol

from sitemap_reader.parse import native

_MASK = (1 << 64) - 1
_INITIAL_SLOTS = 1 << 10


class Seen(Protocol):
    """What the run asks of its dedupe table (:class:`UrlSet`, or its C twin)."""

    def add(self, url: str) -> bool: ...

    def __contains__(self, url: object) -> bool: ...

    def __len__(self) -> int: ...

    @property
    def nbytes(self) -> int: ...


def url_set() -> Seen:
    """A new run-wide dedupe table: :class:`UrlSet`, or on the parser's compiled path its
    C twin (``_expatcore.UrlSet``: the same keys in the same table, so the same answers
    and the same memory; ~15x less time per add; tests/parse/test_native.py)."""
    if native.active():
        table: Seen = native.CORE.UrlSet()
        return table
    return UrlSet()


class UrlSet:
    """A set of URL strings that only answers "seen before?" (no iteration, no removal).

    >>> seen = UrlSet()
    >>> seen.add("https://example.com/a"), seen.add("https://example.com/a")
    (True, False)
    >>> len(seen)
    1
    """

    __slots__ = ("_count", "_limit", "_mask", "_table")

    def __init__(self) -> None:
        self._table = array("Q", [0]) * _INITIAL_SLOTS
        self._mask = _INITIAL_SLOTS - 1
        self._limit = _INITIAL_SLOTS * 3 // 4
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """Memory held by the table, in bytes."""
        return self._table.itemsize * len(self._table)

    def add(self, url: str) -> bool:
        """Add ``url``; True if it was new, False if it (or a hash twin) was already in."""
        key = (hash(url) & _MASK) or 1  # 0 marks an empty slot
        table, mask = self._table, self._mask
        i = key & mask
        while True:
            slot = table[i]
            if slot == 0:
                table[i] = key
                self._count += 1
                if self._count > self._limit:
                    self._grow()
                return True
            if slot == key:
                return False
            i = (i + 1) & mask

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, str):
            return False
        key = (hash(url) & _MASK) or 1
        table, mask = self._table, self._mask
        i = key & mask
        while True:
            slot = table[i]
            if slot == 0:
                return False
            if slot == key:
                return True
            i = (i + 1) & mask

    def _grow(self) -> None:
        """Double the table and reinsert every key (amortized O(1) per add)."""
        old = self._table
        size = len(old) * 2
        table = array("Q", [0]) * size  # no temporary bytes object
        mask = size - 1
        for key in old:
            if key:
                i = key & mask
                while table[i]:
                    i = (i + 1) & mask
                table[i] = key
        self._table, self._mask, self._limit = table, mask, size * 3 // 4
