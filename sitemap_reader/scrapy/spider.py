"""SitemapReaderMixin: sitemap discovery for a spider class (``JOBDIR``-safe callbacks)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, Self

from scrapy import Request, Spider
from scrapy.http import Response

from sitemap_reader.errors import UsageError
from sitemap_reader.options.declare import patterns
from sitemap_reader.records import UrlRecord
from sitemap_reader.records.scoring import ScoreFunc
from sitemap_reader.scrapy import addresses, bodies, sites
from sitemap_reader.scrapy.driver import Rule, ScrapyDriver
from sitemap_reader.scrapy.middleware import enable_sharing, enable_sitemap_only
from sitemap_reader.scrapy.settings import options_from_settings, spider_overrides

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure


def protect(settings: BaseSettings) -> None:
    """Enable every middleware a mixin spider's crawl needs (an order given is kept);
    settings already frozen without them refuse the crawl (a UsageError), never run it
    unguarded."""
    target = settings
    if settings.frozen:
        target = settings.copy()
        target.frozen = False
    for enable in _ENABLES:
        enable(target)
    missing = [name for name in _COMPONENTS if target.getdict(name) != settings.getdict(name)]
    if missing:
        raise UsageError(
            f"sitemap-reader: the crawl's {' and '.join(missing)} lack its middlewares and "
            "are frozen already; start the spider with process.crawl(Spider) or "
            "process.crawl(process.create_crawler(Spider))"
        )


#: What :func:`protect` enables, and the settings it changes.
_ENABLES: Final = (
    addresses.enable,
    sites.enable,
    bodies.enable,
    enable_sharing,
    enable_sitemap_only,
)
_COMPONENTS: Final = ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES")


class SitemapReaderMixin(Spider):
    """Sitemap discovery for a spider: ``class MySpider(SitemapReaderMixin, scrapy.Spider)``.

    Class attributes (or spider arguments) configure it: ``sitemap_<option>`` for any
    option that is a Scrapy setting (``sitemap_follow``, ``sitemap_scope``,
    ``sitemap_since``, ``sitemap_limits``...; :mod:`sitemap_reader.scrapy.settings`); unset
    ones fall back to the ``SITEMAP_READER_*`` settings, then to the library defaults::

        class Shop(SitemapReaderMixin, scrapy.Spider):
            name = "shop"
            sitemap_targets = ["example.com"]              # domain, site, robots.txt or sitemap
            sitemap_follow = [r"/sitemap-products"]        # child sitemaps to follow (all if empty)
            sitemap_rules = [(r"/product/", "parse_product"), ("", "parse")]

            def parse_product(self, response):
                record = response.meta["sitemap_reader"]   # url, lastmod, priority, score, ...

    ``sitemap_filter(records)`` may drop or reorder the records of each sitemap. A spider
    that defines its own ``start()`` keeps discovery by iterating ``super().start()``.
    """

    #: Domains, site URLs, robots.txt URLs or sitemap URLs (a string splits on commas).
    sitemap_targets: Sequence[str] | str = ()
    #: (regex, callback name) pairs; the first regex found in a page URL picks its callback.
    sitemap_rules: Sequence[tuple[str | re.Pattern[str], str | Callable[..., Any]]] = (
        ("", "parse"),
    )
    #: Replaces the default score (and so the page priority): ``(record, now) -> float``.
    sitemap_score: ScoreFunc | None = None
    #: Whether this process judges the run (error lines, the ``sitemap_reader_failed``
    #: finish reason): not where each process reads only part of the sitemaps.
    _sitemap_reader_verdict: bool = True

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """Scrapy's hook: the spider's settings, plus the private-address guard, the
        per-target credentials kept on their site, the robots.txt sharing (one download
        when RobotsTxtMiddleware reads it too) and the sitemap-only filter
        (``sitemap_links = False``)."""
        super().update_settings(settings)
        protect(settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        """Scrapy's constructor hook: the middlewares are put in again first. A crawler
        made before the crawl (``process.crawl(process.create_crawler(Spider))``, to reach
        its stats and signals) has its settings replaced by the runner's since
        :meth:`update_settings` ran; the spider is made just before they are frozen."""
        protect(crawler.settings)
        return super().from_crawler(crawler, *args, **kwargs)

    def sitemap_filter(self, records: Iterable[UrlRecord]) -> Iterable[UrlRecord]:
        """Hook: the records of one sitemap, in scope; return those to crawl."""
        return records

    def sitemap_request(self, record: UrlRecord) -> Request | None:
        """Hook: the request of one page, or None to skip it. The default follows
        ``sitemap_rules`` (None when no rule matches); an override may change it::

            def sitemap_request(self, record):
                if "/archive/" in record.url:
                    return None                            # not crawled
                request = super().sitemap_request(record)
                return request and request.replace(headers={"X-Section": "shop"})

        Its requests are made per record, so they may carry anything (headers, cookies,
        meta, another callback); an exception it raises costs that record only (an error
        line naming the URL).
        """
        return self._sitemap_reader().page_request(record)

    async def start(self) -> AsyncIterator[Any]:
        """The robots.txt / sitemap requests of ``sitemap_targets``, then ``super().start()``."""
        for request in self._sitemap_reader().start_requests():
            yield request
        async for item in super().start():
            yield item

    def _sitemap_reader_parse(self, response: Response) -> Iterator[Request]:
        """Callback of robots.txt and sitemap requests (a spider method: JOBDIR-safe)."""
        return self._sitemap_reader().on_response(response)

    def _sitemap_reader_failed(self, failure: Failure) -> Iterator[Request]:
        """Errback of robots.txt and sitemap requests: log, fall back, go on."""
        return self._sitemap_reader().on_failure(failure)

    def _sitemap_reader(self) -> ScrapyDriver:
        discovery = self.__dict__.get("_sitemap_reader_discovery")
        if discovery is None:
            discovery = self.__dict__["_sitemap_reader_discovery"] = self._make_discovery()
        assert isinstance(discovery, ScrapyDriver)
        return discovery

    def _make_discovery(self) -> ScrapyDriver:
        options, scrapy = options_from_settings(self.crawler.settings, spider_overrides(self))
        return ScrapyDriver(
            options,
            scrapy,
            self.crawler,
            self._rules(),
            record_filter=self.sitemap_filter,
            request_hook=self.sitemap_request,
            callback=self._sitemap_reader_parse,
            errback=self._sitemap_reader_failed,
            verdict=self._sitemap_reader_verdict,
        )

    def _rules(self) -> list[Rule]:
        rules: list[Rule] = []
        for pattern, callback in self.sitemap_rules:
            method = getattr(self, callback) if isinstance(callback, str) else callback
            try:
                rules.append((patterns(pattern)[0], method))
            except ValueError as exc:
                raise UsageError(f"sitemap_rules: {exc}") from None
        return rules
