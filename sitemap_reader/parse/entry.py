"""The reader-to-emitter contract: the shape of an entry, and the :class:`Sink` readers
report to.

A reader (XML or text) gathers each entry as raw strings and hands it to the emitter
(``SitemapParser``'s, in :mod:`sitemap_reader.parse.parser`), which alone normalizes,
parses, scores and builds records. Two shapes cross that boundary:

- a **page entry**: a list of :data:`ENTRY_SIZE` slots, indexed by the constants below
  (``entry[LOC]``, ``entry[LASTMOD]``...), every slot None when absent:

  ======================  =====================================================
  ``LOC``                 the location as written (stripped), a str
  ``LASTMOD``             raw lastmod (RSS pubDate, Atom updated...), a str
  ``CHANGEFREQ``          raw changefreq, a str
  ``PRIORITY``            raw priority, a str
  ``LINK``, ``GUID``      a feed item's link and guid (LOC is set from them)
  ``PUBLISHED``           a feed item's fallback date
  ``TITLE``               a feed item's title (moved into EXTRA)
  ``ALTERNATES``          ``[(hreflang, href), ...]`` from ``xhtml:link``
  ``IMAGES``, ``VIDEOS``  ``[fields, ...]``: one dict of raw fields per object
  ``NEWS``                a dict of raw ``news:news`` fields
  ``EXTRA``               a dict of the rare data (``title``, ``mobile``,
                          ``pagemaps``): a plain entry costs one ``is None`` test
  ======================  =====================================================

- a **child sitemap**: a ``(loc, lastmod)`` tuple of raw strings (lastmod maybe None).

Why a list and not a slotted class: the element handlers fill slots by arithmetic on
the element kind (``entry[kind - F_LOC]``) and the emitter unpacks all thirteen in one
statement, the hottest code of the library; a class would cost attribute stores and
loads on both sides for nothing the list does not already say through these names.
"""

from __future__ import annotations

from typing import Any, Final

LOC: Final = 0
LASTMOD: Final = 1
CHANGEFREQ: Final = 2
PRIORITY: Final = 3
LINK: Final = 4
GUID: Final = 5
PUBLISHED: Final = 6
TITLE: Final = 7
ALTERNATES: Final = 8
IMAGES: Final = 9
VIDEOS: Final = 10
NEWS: Final = 11
EXTRA: Final = 12
ENTRY_SIZE: Final = 13

#: A page entry (see the table above) and a child sitemap entry.
PageEntry = list[Any]
SitemapEntry = tuple[str, str | None]

_EMPTY: Final[tuple[Any, ...]] = (None,) * ENTRY_SIZE


def new_entry() -> PageEntry:
    """A page entry with every slot absent."""
    return list(_EMPTY)


def loc_entry(loc: str) -> PageEntry:
    """A page entry holding a location only (a text sitemap's line)."""
    entry: PageEntry = list(_EMPTY)
    entry[LOC] = loc
    return entry


def extra_of(entry: PageEntry) -> dict[str, Any]:
    """The entry's dict of rare data (``entry[EXTRA]``), created on first use."""
    extra = entry[EXTRA]
    if extra is None:
        extra = entry[EXTRA] = {}
    return extra  # type: ignore[no-any-return]


class StopParsing(Exception):
    """Raised inside a reader to end the document (unknown root, limit reached)."""


class Sink:
    """What the readers report to (implemented by the SitemapParser's emitter).

    Entries are not reported one call each: readers append them to ``pending`` and call
    :meth:`drain` once that holds ``batch`` entries (the parser drains after every fed
    chunk too), so turning them into records runs in one tight loop.
    """

    pending: list[PageEntry | SitemapEntry]
    #: Entries held before a drain; 1 when a count limit must stop the body exactly.
    batch: int

    def drain(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def root(self, local: str, namespace: str) -> str | None:  # pragma: no cover - interface
        """A root element was seen; return the format, or None to stop."""
        raise NotImplementedError

    def text_started(self) -> None:  # pragma: no cover - interface
        """The body is a plain-text sitemap (its first URL was found)."""
        raise NotImplementedError

    def problem(
        self, code: str, message: str, fatal: bool = False
    ) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def feed_date(self, text: str) -> None:  # pragma: no cover - interface
        """A date of the feed itself (RSS channel, Atom feed), outside its items."""
        raise NotImplementedError
