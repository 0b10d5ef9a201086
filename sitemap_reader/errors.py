"""The one exception tree of sitemap-reader.

Foreign exceptions (expat, zlib, aiohttp, OSError) are translated into these at the
boundary where they happen, chained with ``from`` so the cause stays visible.
Content problems inside a sitemap are *not* exceptions: they are recorded as
:class:`~sitemap_reader.records.Problem` values and parsing goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sitemap_reader.records.outcomes import Verdict


class SitemapReaderError(Exception):
    """Root of every exception this library raises on purpose."""


class UsageError(SitemapReaderError, ValueError):
    """The caller passed something that cannot work (a bad option, a closed parser)."""


class FetchError(SitemapReaderError):
    """A network fetch failed for good (after retries)."""


class DiscoveryError(SitemapReaderError):
    """Nothing could be discovered for a target: unreachable, or no sitemap anywhere.

    ``verdicts`` holds each target's verdict with its evidence
    (:class:`~sitemap_reader.records.outcomes.Verdict`, by the target as given): why each
    gave nothing, as data (blocked, absent, unreachable, broken...)."""

    def __init__(self, message: str, verdicts: Mapping[str, Verdict] | None = None) -> None:
        super().__init__(message)
        self.verdicts: dict[str, Verdict] = dict(verdicts or {})

    def __reduce__(self) -> tuple[Any, ...]:  # pickled whole (a worker process's error)
        return (type(self), (str(self), self.verdicts))


class StateError(UsageError):
    """An incremental state file cannot be used: not a state file, a newer schema, in use
    by another run, or an I/O error."""
