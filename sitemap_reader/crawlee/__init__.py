"""Crawlee integration: a :class:`SitemapRequestLoader` on top of
:class:`~sitemap_reader.SitemapLoader` (install the ``crawlee`` extra).

>>> async def main() -> None:                                           # doctest: +SKIP
...     loader = SitemapRequestLoader(["example.com"], progress="crawl.db")
...     crawler = HttpCrawler(request_manager=await loader.to_tandem())
...     await crawler.run()   # raises DiscoveryError when no target had a sitemap
"""

from __future__ import annotations

from sitemap_reader.errors import missing_extra

try:
    import crawlee  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_extra("sitemap_reader.crawlee needs Crawlee", "crawlee") from exc

from sitemap_reader.crawlee.loader import (
    RECORD_KEY,
    SitemapRequestLoader,
    SitemapTandem,
    Transform,
    record_of,
)

__all__ = ["RECORD_KEY", "SitemapRequestLoader", "SitemapTandem", "Transform", "record_of"]
