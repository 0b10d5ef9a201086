"""SitemapStartMiddleware and the Addon: sitemap pages for spiders that cannot change;
RobotsTxtShare, so robots.txt is fetched once when Scrapy's RobotsTxtMiddleware reads it too."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import load_object

from sitemap_reader.errors import UsageError
from sitemap_reader.options.limits import MAX_SHARED_ROBOTS
from sitemap_reader.scrapy import addresses, bodies, sites
from sitemap_reader.scrapy.driver import META_KEY, SITEMAP_META_KEY, ScrapyDriver
from sitemap_reader.scrapy.settings import (
    default_settings,
    options_from_settings,
    spider_overrides,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

#: Place in SPIDER_MIDDLEWARES: near the spider, so the built-in middlewares (depth, URL
#: length, referer, start-request marking) see the requests it adds.
MIDDLEWARE_ORDER: Final = 950
#: Place of :class:`RobotsTxtShare` in DOWNLOADER_MIDDLEWARES: after RobotsTxtMiddleware
#: (100), whose own robots.txt request then passes it first, and before retries and
#: redirects (550, 600), so it sees only final responses.
SHARE_ORDER: Final = 120
#: Place of :class:`SitemapOnly` in SPIDER_MIDDLEWARES: next to the spider, so it drops a
#: link before the others count it.
ONLY_ORDER: Final = 960
#: ``meta`` key of a request a sitemap page's callback yields: True lets it go in
#: sitemap-only mode.
LINK_META_KEY: Final = "sitemap_reader_link"
#: The flag of a robots.txt response handed to its second party (never kept again).
SHARED_FLAG: Final = "sitemap-reader: shared robots.txt"
#: The add-on's defaults, at "addon" priority (project and spider settings win): every
#: option's default, derived from the declarations.
DEFAULT_SETTINGS: Final[dict[str, Any]] = default_settings()


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
        self.options, self.scrapy = options_from_settings(crawler.settings)
        if not self.scrapy.targets:
            raise NotConfigured("SITEMAP_READER_TARGETS is empty")
        addresses.warn_if_disabled(crawler)
        credentials = sites.SiteCredentialsMiddleware
        if self.options.network.per_target and not _enabled(
            crawler, credentials, "DOWNLOADER_MIDDLEWARES"
        ):
            raise UsageError(
                "SITEMAP_READER_PER_TARGET needs sitemap_reader.scrapy.sites."
                "SiteCredentialsMiddleware in DOWNLOADER_MIDDLEWARES (the add-on enables it): "
                "without it a redirect would carry a target's own headers to another host"
            )
        if not self.scrapy.links and not _enabled(crawler, SitemapOnly):
            raise UsageError(
                "SITEMAP_READER_LINKS = False needs sitemap_reader.scrapy.middleware.SitemapOnly "
                "in SPIDER_MIDDLEWARES (the add-on enables it)"
            )
        self.callback_name = self.scrapy.callback
        self.driver: ScrapyDriver | None = None

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
            self.scrapy,
            self.crawler,
            [(re.compile(""), callback)],
            record_filter=getattr(spider, "sitemap_filter", None),
            request_hook=getattr(spider, "sitemap_request", None),
        )
        self.driver = discovery  # kept: its spider_idle handler is a weak reference
        pending = deque(discovery.start_requests())
        pages: list[Request] = []
        while pending:
            for request in await self._fetch(discovery, pending.popleft()):
                if SITEMAP_META_KEY in request.meta:
                    pending.append(request)
                else:
                    pages.append(request)
        discovery.finish()
        # Best first, as the mixin's pages leave Scrapy's scheduler: start requests go out
        # in about the order they are yielded (lazily, as the engine has room), so they
        # are yielded by priority once every sitemap is read (ties: discovery order).
        pages.sort(key=lambda request: -request.priority)
        pages.reverse()
        while pages:
            await self._pace()
            yield pages.pop()

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


class SitemapOnly(BaseSpiderMiddleware):
    """A spider middleware: with ``SITEMAP_READER_LINKS = False`` (``sitemap_links = False``
    on a mixin spider), the requests a sitemap page's callback yields are dropped, so only
    the sitemaps' pages are crawled; a request whose meta has ``sitemap_reader_link=True``
    still goes. Items pass, and so does the output of responses that are not sitemap pages
    (the spider's own start URLs). The mixin and the add-on enable it."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.links: bool | None = None

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        """The request, or None when it is a link of a sitemap page in sitemap-only mode."""
        if response is None or META_KEY not in response.meta or request.meta.get(LINK_META_KEY):
            return request
        if self._links():
            return request
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("sitemap_reader/links_dropped")
        return None

    def _links(self) -> bool:
        if self.links is None:
            spider = self.crawler.spider
            overrides = spider_overrides(spider) if spider is not None else {}
            self.links = options_from_settings(self.crawler.settings, overrides)[1].links
        return self.links


class RobotsTxtShare:
    """A downloader middleware: one download per robots.txt URL when two parties want it.

    With ``ROBOTSTXT_OBEY``, Scrapy's RobotsTxtMiddleware fetches each host's robots.txt
    for its rules, and discovery fetches it for its sitemaps and its audit. The first
    final response of a robots.txt URL (any status, after retries and redirects) is kept
    until a second request of that URL asks for it, which gets it instead of a download
    (and it is then forgotten): robots.txt is fetched once per crawl. Only the paths
    ``/robots.txt`` at the root are concerned; at most
    :data:`~sitemap_reader.options.limits.MAX_SHARED_ROBOTS` are kept (the most recent).
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._kept: dict[str, Response] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Scrapy's constructor hook."""
        return cls(crawler)

    def process_request(self, request: Request, spider: Any = None) -> Response | None:
        """A robots.txt already downloaded for the other party: its response, once."""
        kept = self._kept.pop(request.url, None) if _is_robots(request.url) else None
        if kept is None:
            return None
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("sitemap_reader/robots_shared")
        return kept.replace(request=request, flags=[*kept.flags, SHARED_FLAG])

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        """Keep a robots.txt response for the other party (under every URL it answered)."""
        if _is_robots(request.url) and SHARED_FLAG not in response.flags:
            urls = [*request.meta.get("redirect_urls", ()), request.url]
            for url in dict.fromkeys(urls):
                if len(self._kept) >= MAX_SHARED_ROBOTS:
                    self._kept.pop(next(iter(self._kept)))
                self._kept[url] = response
        return response


def _enabled(crawler: Crawler, component: type, setting: str = "SPIDER_MIDDLEWARES") -> bool:
    """Whether ``component`` is in the crawl's ``setting`` (by class or path)."""
    enabled = crawler.settings.getwithbase(setting)
    return any(
        (load_object(name) if isinstance(name, str) else name) is component
        for name, order in enabled.items()
        if order is not None
    )


def _is_robots(url: str) -> bool:
    """True for ``scheme://host/robots.txt`` (no query)."""
    parts = urlsplit(url)
    return parts.path == "/robots.txt" and not parts.query


class Addon:
    """Scrapy add-on: ``ADDONS = {"sitemap_reader.scrapy.Addon": 0}``.

    Enables :class:`SitemapStartMiddleware` (order 950), :class:`RobotsTxtShare`, the
    private-address guard (:mod:`~sitemap_reader.scrapy.addresses`) and the per-target
    credentials kept on their site (:mod:`~sitemap_reader.scrapy.sites`), and sets the
    ``SITEMAP_READER_*`` defaults at add-on priority, so project and spider settings
    still override them.
    ``SITEMAP_READER_TARGETS`` must be set; without it the middleware stays disabled.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        """Scrapy's add-on hook."""
        settings.setdefault_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", SitemapStartMiddleware, MIDDLEWARE_ORDER
        )
        enable_sharing(settings)
        enable_sitemap_only(settings)
        addresses.enable(settings)
        sites.enable(settings)
        bodies.enable(settings)
        for name, value in DEFAULT_SETTINGS.items():
            settings.set(name, value, priority="addon")


def enable_sharing(settings: BaseSettings) -> None:
    """Add :class:`RobotsTxtShare` to ``DOWNLOADER_MIDDLEWARES`` (an order given is kept)."""
    settings.setdefault_in_component_priority_dict(
        "DOWNLOADER_MIDDLEWARES", RobotsTxtShare, SHARE_ORDER
    )


def enable_sitemap_only(settings: BaseSettings) -> None:
    """Add :class:`SitemapOnly` to ``SPIDER_MIDDLEWARES`` (an order given is kept); it does
    nothing unless ``SITEMAP_READER_LINKS`` (or ``sitemap_links``) is off."""
    settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", SitemapOnly, ONLY_ORDER)
