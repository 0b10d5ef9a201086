"""A spider that crawls a site's sitemap pages from N processes sharing one Redis.

Run the same command in as many processes (or on as many machines) as you like::

    scrapy runspider shop.py -a sitemap_targets=https://example.com/ \\
        -s REDIS_URL=redis://127.0.0.1:6379/0 -o pages-$$.jsonl

Each page is fetched by one process; all processes end together once nothing is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from sitemap_reader.scrapy.redis import RedisSitemapMixin


class ShopSpider(RedisSitemapMixin, scrapy.Spider):
    """Every page the sitemaps list, with its sitemap record."""

    name = "shop"
    custom_settings = {  # noqa: RUF012 - Scrapy's own class attribute
        "SCHEDULER": "sitemap_reader.scrapy.redis.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,  # required: the queue outlives each process
        "REDIS_URL": "redis://127.0.0.1:6379/0",  # -s REDIS_URL=... on the command line wins
        "SITEMAP_READER_REDIS_POLL": 0.5,
        "TELNETCONSOLE_ENABLED": False,
    }

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        record = response.meta["sitemap_reader"]
        yield {"url": response.url, "status": response.status, "lastmod": record["lastmod"]}
