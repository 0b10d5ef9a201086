"""The one exception tree of sitemap-reader.

Foreign exceptions (expat, zlib, aiohttp, OSError) are translated into these at the
boundary where they happen, chained with ``from`` so the cause stays visible.
Content problems inside a sitemap are *not* exceptions: they are recorded as
:class:`~sitemap_reader.records.Problem` values and parsing goes on.
"""

from __future__ import annotations


class SitemapReaderError(Exception):
    """Root of every exception this library raises on purpose."""


class UsageError(SitemapReaderError, ValueError):
    """The caller passed something that cannot work (a bad option, a closed parser)."""


class FetchError(SitemapReaderError):
    """A network fetch failed for good (after retries)."""


class DiscoveryError(SitemapReaderError):
    """Nothing could be discovered for a target: unreachable, or no sitemap anywhere."""


class StateError(UsageError):
    """An incremental state file cannot be used: not a state file, a newer schema, in use
    by another run, or an I/O error."""
