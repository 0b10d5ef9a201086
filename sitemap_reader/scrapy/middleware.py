"""SitemapStartMiddleware and the Addon: sitemap pages for spiders that cannot change."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Final, Self

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from sitemap_reader.errors import UsageError
from sitemap_reader.limits import Limits
from sitemap_reader.scrapy import guard
from sitemap_reader.scrapy.driver import SITEMAP_META_KEY, Options, ScrapyDriver

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

#: Place in SPIDER_MIDDLEWARES: near the spider, so the built-in middlewares (depth, URL
#: length, referer, start-request marking) see the requests it adds.
MIDDLEWARE_ORDER: Final = 950
_LIMITS = Limits()
#: The add-on's defaults, at "addon" priority (project and spider settings win).
DEFAULT_SETTINGS: Final[dict[str, Any]] = {
    "SITEMAP_READER_CALLBACK": "parse",
    "SITEMAP_READER_SCOPE": "site",
    "SITEMAP_READER_GUESS": True,
    "SITEMAP_READER_ALTERNATES": False,
    "SITEMAP_READER_MAX_DEPTH": _LIMITS.max_depth,
    "SITEMAP_READER_MAX_SITEMAPS": _LIMITS.max_sitemaps,
    "SITEMAP_READER_MAX_DECOMPRESSED_BYTES": _LIMITS.max_decompressed_bytes,
    guard.SETTING: None,  # None: trust the typed targets; every other host must be public
}


class SitemapStartMiddleware:
    """A spider middleware adding sitemap-discovered pages to any spider's start requests.

    Enable it (or the :class:`Addon`) and name the targets::

        SPIDER_MIDDLEWARES = {"sitemap_reader.scrapy.SitemapStartMiddleware": 950}
        SITEMAP_READER_TARGETS = ["example.com"]
        SITEMAP_READER_CALLBACK = "parse"   # the spider method that gets the pages

    The spider's own start requests pass through first; then sitemaps are fetched one at a
    time with ``crawler.engine.download_async`` (downloader middlewares apply: throttling,
    retries, cache, ``DOWNLOAD_MAXSIZE``) and their pages are yielded, waiting for the
    scheduler to drain whenever the engine asks to back out. The pages are *start requests*
    to Scrapy: at equal priority other requests go first. A resumed ``JOBDIR`` crawl fetches
    the sitemaps again; the persisted dupefilter drops the pages already requested.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.options = Options.from_settings(crawler.settings)
        if not self.options.targets:
            raise NotConfigured("SITEMAP_READER_TARGETS is empty")
        guard.warn_if_disabled(crawler)
        self.callback_name = crawler.settings.get("SITEMAP_READER_CALLBACK") or "parse"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Scrapy's constructor hook."""
        return cls(crawler)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """The spider's start items and requests, then the discovered page requests."""
        async for item in start:
            yield item
        async for request in self._discover():
            yield request

    async def _discover(self) -> AsyncIterator[Request]:
        spider = self.crawler.spider
        callback = getattr(spider, self.callback_name, None)
        if not callable(callback):
            raise UsageError(f"SITEMAP_READER_CALLBACK: the spider has no {self.callback_name}()")
        discovery = ScrapyDriver(
            self.options,
            self.crawler,
            [(re.compile(""), callback)],
            record_filter=getattr(spider, "sitemap_filter", None),
        )
        pending = deque(discovery.start_requests())
        while pending:
            for request in await self._fetch(discovery, pending.popleft()):
                if SITEMAP_META_KEY in request.meta:
                    pending.append(request)
                    continue
                await self._pace()
                yield request

    async def _fetch(self, discovery: ScrapyDriver, request: Request) -> Iterator[Request]:
        engine = self.crawler.engine
        assert engine is not None
        try:
            if hasattr(engine, "download_async"):  # Scrapy >= 2.14
                response = await engine.download_async(request)
            else:  # pragma: no cover - Scrapy 2.13
                response = await maybe_deferred_to_future(engine.download(request))
        except Exception as exc:  # any download failure is this sitemap's problem only
            return discovery.on_exception(request, exc)
        return discovery.on_response(response)

    async def _pace(self) -> None:
        """Scrapy's documented lazy start: wait while the engine cannot take more."""
        engine = self.crawler.engine
        if engine is not None and engine.needs_backout():
            await self.crawler.signals.wait_for(signals.scheduler_empty)


class Addon:
    """Scrapy add-on: ``ADDONS = {"sitemap_reader.scrapy.Addon": 0}``.

    Enables :class:`SitemapStartMiddleware` (order 950) and the private-address guard
    (:mod:`~sitemap_reader.scrapy.guard`), and sets the ``SITEMAP_READER_*`` defaults at
    add-on priority, so project and spider settings still override them.
    ``SITEMAP_READER_TARGETS`` must be set; without it the middleware stays disabled.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        """Scrapy's add-on hook."""
        settings.setdefault_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", SitemapStartMiddleware, MIDDLEWARE_ORDER
        )
        guard.enable(settings)
        for name, value in DEFAULT_SETTINGS.items():
            settings.set(name, value, priority="addon")
