"""I/O on aiohttp: fetch robots.txt and sitemaps, walk indexes, stream records.

The public names are :class:`SitemapReader` (async), :func:`iter_urls` (sync), and the
run description :class:`Run`, :class:`SitemapNode`, :class:`Stats`.
"""

from __future__ import annotations

from sitemap_reader.crawl.reader import SitemapReader
from sitemap_reader.crawl.sync import iter_urls
from sitemap_reader.discovery.model import Run, SitemapNode, Stats
from sitemap_reader.discovery.targets import WELL_KNOWN_PATHS

__all__ = ["WELL_KNOWN_PATHS", "Run", "SitemapNode", "SitemapReader", "Stats", "iter_urls"]
