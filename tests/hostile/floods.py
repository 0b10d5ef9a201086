"""Markup floods for ``check`` (issue 18.4), shared by its hostile tests and benchmark.

Each yields the body between a urlset's good head and its end, in pieces of 10,000
constructs, lazily: a server streams only what the client reads before it stops.
"""

from __future__ import annotations

from collections.abc import Iterator

#: Constructs per yielded piece.
PIECE = 10_000


def attributes(count: int = 5_000_000) -> Iterator[bytes]:
    """One start tag with ``count`` distinct attributes (about 50 MiB for 5 M)."""
    yield b'<url a="1"'
    for start in range(0, count, PIECE):
        yield b"".join(b' a%d="1"' % n for n in range(start, start + PIECE))
    yield b"/>"


def element_names(count: int = 5_600_000) -> Iterator[bytes]:
    """``count`` distinct element names, one empty element each."""
    for start in range(0, count, PIECE):
        yield b"".join(b"<t%d/>" % n for n in range(start, start + PIECE))
