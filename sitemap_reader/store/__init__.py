"""The SQLite files a run keeps: the incremental state, and the loader's progress.

The state file (:class:`StateStore`) holds what earlier runs saw, so a later run does only
new work. One state file can serve any number of targets: sitemaps are keyed by their
normalized URL, page URLs by an 8-byte key. Its parts, one concern each:

* :mod:`~sitemap_reader.store.schema`: the tables, and the checks that a file is ours
  before anything is written;
* :mod:`~sitemap_reader.store.codec`: the stored values (URL keys, lastmod seconds, the
  compressed URL text and children) and the detection of damaged ones;
* :mod:`~sitemap_reader.store.state`: :class:`StateStore`, its transactions, lookups and
  saves;
* :mod:`~sitemap_reader.store.removals`: which URLs left the sitemaps since the last run;
* :mod:`~sitemap_reader.store.writer`: the thread that runs deferred writes in order.

The loader's progress file is :mod:`~sitemap_reader.store.progress` (imported on its own:
only :class:`~sitemap_reader.SitemapLoader` needs it).
"""

from __future__ import annotations

from sitemap_reader.store.codec import (
    BLOB_ERRORS,
    SitemapRead,
    StoredSitemap,
    from_seconds,
    pack_children,
    pack_urls,
    to_seconds,
    unpack_children,
    unpack_urls,
    url_key,
    url_keys,
)
from sitemap_reader.store.schema import APPLICATION_ID, SCHEMA_VERSION
from sitemap_reader.store.state import StateStore

__all__ = [
    "APPLICATION_ID",
    "BLOB_ERRORS",
    "SCHEMA_VERSION",
    "SitemapRead",
    "StateStore",
    "StoredSitemap",
    "from_seconds",
    "pack_children",
    "pack_urls",
    "to_seconds",
    "unpack_children",
    "unpack_urls",
    "url_key",
    "url_keys",
]
