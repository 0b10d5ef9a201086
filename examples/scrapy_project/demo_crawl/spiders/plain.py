"""The ``plain`` spider: no sitemap code at all; the add-on feeds it the sitemap's pages.

``scrapy crawl plain -s SITEMAP_READER_TARGETS=https://example.com/``
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import scrapy
from scrapy.http import Response


class PlainSpider(scrapy.Spider):
    """A spider that cannot change its class: the add-on adds SitemapStartMiddleware."""

    name = "plain"
    custom_settings: dict[str, Any] | None = {  # noqa: RUF012  (typed so by Scrapy)
        "ADDONS": {"sitemap_reader.scrapy.Addon": 0},
        "SITEMAP_READER_CALLBACK": "parse",
    }

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """One item per page."""
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "score": response.meta["sitemap_reader"]["score"],
        }
