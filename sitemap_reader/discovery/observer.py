"""The incremental layer's seat in the core: an observer of every sitemap, null by default.

The core asks one :class:`Observer` per run for a :class:`Watch` per sitemap job and
calls the watch at fixed points (before the fetch, on the response, on each chunk, on
each child and batch of records, at the end). The default watch does nothing and
changes nothing, so the core never tests "is there a state?". The store-backed
implementation lives above the store layer
(:class:`sitemap_reader.crawl.incremental.Incremental`); the core only knows this shape.

The same seat is the tap of ``check`` and ``report`` (:mod:`sitemap_reader.audit.survey`):
a watch that sees each body's chunks (:meth:`Watch.feed`), each robots.txt body
(:meth:`Watch.robots`) and each sitemap's records (:meth:`Watch.observe`) as the walk
reads them, so they validate and count what was fetched once, by the one fetcher.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sitemap_reader.discovery.actions import Batch, Checkpoint
from sitemap_reader.discovery.model import SitemapNode

#: Child sitemaps an unchanged index had last time: (url, lastmod) pairs to walk again.
StoredChildren = Sequence[tuple[str, datetime | None]]


class Watch:
    """What the incremental layer does for one sitemap. This base does nothing."""

    __slots__ = ()

    #: True when :meth:`observe` wants the records other sitemaps already emitted too.
    tracks_duplicates = False

    def plan(self, node: SitemapNode) -> StoredChildren | None:
        """Before the fetch: children to walk when the sitemap is known unchanged, else None."""
        return None

    def headers(self) -> dict[str, str] | None:
        """Conditional request headers for the fetch."""
        return None

    def not_modified(self, node: SitemapNode, status: int) -> StoredChildren | None:
        """A 304 arrived: the stored children when the state knows the sitemap, else None."""
        return None

    def begin(self, etag: str | None, last_modified: str | None) -> None:
        """A body is coming (validators of the response)."""

    def feed(self, chunk: bytes) -> None:
        """A raw chunk of the body (a sitemap's or a local file's, exactly as read)."""

    def robots(self, body: bytes) -> None:
        """A robots.txt job read its body: the bytes it parses (capped, gunzipped)."""

    def child(self, url: str, lastmod: datetime | None) -> None:
        """The sitemap lists a child sitemap."""

    def observe(self, batch: Batch, duplicates: Batch, uniform: bool) -> Batch:
        """New in-scope records (and duplicates, if tracked); returns the records to emit.

        ``uniform``: the sitemap's lastmods look uniform so far (not to be trusted)."""
        return batch

    def settle(self, node: SitemapNode, complete: bool) -> Checkpoint | None:
        """The sitemap ended; the write to run behind its records, if any."""
        return None


NULL_WATCH = Watch()


class Observer:
    """The incremental layer of a run. This base observes nothing (a run without state)."""

    def watch(self, node: SitemapNode) -> Watch:
        """The watch of one sitemap job."""
        return NULL_WATCH

    def finale(self) -> Checkpoint | None:
        """The run's last write, after every sitemap ended."""
        return None


NULL_OBSERVER = Observer()
