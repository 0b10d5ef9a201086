"""The ``demo`` spider: SitemapReaderMixin finds the pages, ``parse`` reads each one.

Run it against any site: ``scrapy crawl demo -a sitemap_targets=https://example.com/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from sitemap_reader.scrapy import SitemapReaderMixin


class DemoSpider(SitemapReaderMixin, scrapy.Spider):
    """Every page the site's sitemaps list, best first, with its sitemap record."""

    name = "demo"
    sitemap_alternates = True  # hreflang alternates too (each page once)
    sitemap_rules = ((r"/news/", "parse_news"), ("", "parse"))

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """One item per page: what the page says and what its sitemap said about it."""
        record = response.meta["sitemap_reader"]
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "score": record["score"],
            "priority": record["priority"],
            "lastmod": record["lastmod"],
            "sitemap": record["sitemap"],
        }

    def parse_news(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """News pages (a sitemap_rules match) also carry their Google News entry."""
        for item in self.parse(response):
            item["news"] = response.meta["sitemap_reader"].get("news")
            yield item
