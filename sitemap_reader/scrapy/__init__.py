"""Scrapy integration: sitemap discovery inside a Scrapy crawl, fetched by Scrapy's downloader.

Three doors, one driver (:class:`ScrapyDriver`) over the discovery core every front door
shares (:mod:`sitemap_reader.discovery`):

* :class:`SitemapReaderMixin`, for ``class MySpider(SitemapReaderMixin, scrapy.Spider)``. Its
  ``start()`` yields robots.txt / sitemap requests whose callback is a spider method, so a
  ``JOBDIR`` crawl can pause and resume; page requests come out of that callback.
* :class:`SitemapStartMiddleware`, a spider middleware for spiders that cannot change their
  class: its ``process_start`` passes the spider's own start requests through, then fetches
  sitemaps with ``crawler.engine.download_async`` and adds the page requests it finds.
* :class:`Addon`, which enables the middleware and sets the ``SITEMAP_READER_*`` defaults.

With ``ROBOTSTXT_OBEY``, :class:`RobotsTxtShare` (enabled by the add-on and the mixin) hands
the robots.txt response Scrapy's RobotsTxtMiddleware downloaded to discovery (or the other
way round): robots.txt is fetched once per crawl.

Theory of operation
-------------------
Everything is fetched by Scrapy, so the project's settings apply (user agent, proxies,
throttling, retries, the HTTP cache, ``ROBOTSTXT_OBEY``, ``DOWNLOAD_MAXSIZE``). Bodies go to
the one :class:`~sitemap_reader.parse.parser.SitemapParser` every front door uses: gzip is
sniffed from the bytes and decompressed under ``Limits.max_decompressed_bytes``, lowered to
``DOWNLOAD_MAXSIZE`` (or the request's ``download_maxsize``) when that is smaller.

A robots.txt lists sitemaps (all read); when it lists none, or none of them can be read, the
well-known paths are probed. Each sitemap yields child sitemaps (followed while ``max_depth``
and ``max_sitemaps`` allow and, for the children of an index, ``sitemap_follow`` matches:
Scrapy's meaning; each at most once) and page records, which pass the scope filter
(``site`` by default, as in the aiohttp engine), the ``sitemap_filter`` hook, a run-wide
dedupe and the callback rules. A page request carries ``priority=int(score * 1000)`` and
``meta["sitemap_reader"]`` (the record as :meth:`UrlRecord.to_dict` gives it). Sitemap
requests get a higher priority than any page, so discovery finishes first and pages then
leave the scheduler best first (the start middleware reads every sitemap, then yields
its pages by priority). Each sitemap request carries its own traversal state in
``meta["sitemap_reader_sitemap"]`` (a plain dict), so nothing is lost when a job resumes.

Content problems never raise: each becomes a log line (WARNING when it ended the sitemap)
and a ``sitemap_reader/problems/<code>`` stat; the crawl goes on. A target that gave
nothing at all is an ERROR line naming it (and a ``sitemap_reader/failed_targets`` stat);
when no target gave anything the spider closes with the finish reason
:data:`FAILED_REASON` (``sitemap_reader_failed``), not ``finished``.
"""

from __future__ import annotations

from sitemap_reader.errors import missing_extra

try:
    import scrapy
except ImportError as exc:  # tested in a subprocess without Scrapy
    raise missing_extra("sitemap_reader.scrapy needs Scrapy >= 2.13", "scrapy") from exc

if scrapy.version_info < (2, 13):  # pragma: no cover
    raise missing_extra(
        f"sitemap_reader.scrapy needs Scrapy >= 2.13 (found {scrapy.__version__})", "scrapy"
    )

from sitemap_reader.scrapy.driver import (
    FAILED_REASON,
    META_KEY,
    SITEMAP_META_KEY,
    ScrapyDriver,
    priority_of,
)
from sitemap_reader.scrapy.middleware import (
    DEFAULT_SETTINGS,
    MIDDLEWARE_ORDER,
    Addon,
    RobotsTxtShare,
    SitemapStartMiddleware,
)
from sitemap_reader.scrapy.settings import ScrapyOptions, options_from_settings
from sitemap_reader.scrapy.spider import SitemapReaderMixin

__all__ = [
    "DEFAULT_SETTINGS",
    "FAILED_REASON",
    "META_KEY",
    "MIDDLEWARE_ORDER",
    "SITEMAP_META_KEY",
    "Addon",
    "RobotsTxtShare",
    "ScrapyDriver",
    "ScrapyOptions",
    "SitemapReaderMixin",
    "SitemapStartMiddleware",
    "options_from_settings",
    "priority_of",
]
