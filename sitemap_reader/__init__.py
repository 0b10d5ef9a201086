"""sitemap-reader: discover what a website wants crawled.

The public API is what this module exports; everything else is internal.

Three front doors: :class:`SitemapReader` (async) and :func:`iter_urls` (sync) crawl a
site; :func:`parse` and :class:`SitemapParser` read bytes you already have.

>>> import sitemap_reader as sr
>>> [r.url for r in sr.parse(b"https://example.com/a\\n").urls]
['https://example.com/a']

For crawl schedulers, :class:`SitemapLoader` hands records out one at a time, takes
acknowledgements and resumes after a crash from its progress file.

The crawling names (:class:`SitemapReader`, :func:`iter_urls`, :class:`SitemapLoader`)
are resolved on first use (module ``__getattr__``), so ``import sitemap_reader`` and
``import sitemap_reader.parse`` load neither aiohttp nor asyncio: the sans-I/O layers stay
importable on their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitemap_reader._version import __version__
from sitemap_reader.delivery.frame import to_dataframe, tree_dataframe
from sitemap_reader.discovery.model import Run, SitemapNode, Stats
from sitemap_reader.errors import (
    DiscoveryError,
    FetchError,
    SitemapReaderError,
    StateError,
    UsageError,
)
from sitemap_reader.options import Options
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.parser import ParseResult, SitemapParser, parse
from sitemap_reader.parse.robots import sitemaps_from_robots
from sitemap_reader.records import (
    Alternate,
    DataObject,
    Image,
    News,
    Problem,
    SitemapRef,
    TvShow,
    UrlRecord,
    Video,
    VideoId,
    VideoPrice,
)

__all__ = [
    "Alternate",
    "DataObject",
    "DiscoveryError",
    "FetchError",
    "Image",
    "Limits",
    "News",
    "Options",
    "ParseResult",
    "Problem",
    "Run",
    "SitemapLoader",
    "SitemapNode",
    "SitemapParser",
    "SitemapReader",
    "SitemapReaderError",
    "SitemapRef",
    "StateError",
    "Stats",
    "TvShow",
    "UrlRecord",
    "UsageError",
    "Video",
    "VideoId",
    "VideoPrice",
    "__version__",
    "iter_urls",
    "parse",
    "sitemaps_from_robots",
    "to_dataframe",
    "tree_dataframe",
]

if TYPE_CHECKING:
    from sitemap_reader.crawl import SitemapReader, iter_urls
    from sitemap_reader.loader import SitemapLoader

#: Names that need the aiohttp driver, and the module that has them.
_LAZY = {
    "SitemapReader": "sitemap_reader.crawl",
    "iter_urls": "sitemap_reader.crawl",
    "SitemapLoader": "sitemap_reader.loader",
}


def __getattr__(name: str) -> Any:
    """Import the aiohttp driver when one of its names is first asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sitemap_reader' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
