"""One Scrapy process of a scrapy-redis crawl of the test site (started by the tests).

``python tests/scrapy_redis/runner.py BASE REDIS_URL NAME OUT [--set NAME=JSON]...``

The spider (named NAME, so its Redis keys are the test's own) is a RedisSitemapMixin spider
on sitemap_reader's scrapy-redis Scheduler; each page callback appends its URL to OUT.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response

from sitemap_reader.scrapy.redis import RedisSitemapMixin


class PagesSpider(RedisSitemapMixin, Spider):
    """Records every page it gets."""

    name = "pages"
    out = ""

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        with open(self.out, "a", encoding="utf-8") as stream:
            stream.write(response.url + "\n")
        return iter(())


def main() -> None:
    """Parse the arguments, configure, crawl."""
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("redis_url")
    parser.add_argument("name")
    parser.add_argument("out")
    parser.add_argument("--set", action="append", default=[], help="NAME=JSON, a setting")
    args = parser.parse_args()
    settings: dict[str, Any] = {
        "LOG_LEVEL": "INFO",
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "RETRY_ENABLED": False,
        "CONCURRENT_REQUESTS": 4,
        "SCHEDULER": "sitemap_reader.scrapy.redis.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,
        "REDIS_URL": args.redis_url,
        # Short leases and quick polls, so a test sees a takeover and an end in ~1 s.
        "SITEMAP_READER_REDIS_LEASE": 1.0,
        "SITEMAP_READER_REDIS_POLL": 0.05,
    }
    for pair in args.set:
        name, _, value = pair.partition("=")
        settings[name] = json.loads(value)
    PagesSpider.name, PagesSpider.out = args.name, args.out
    PagesSpider.sitemap_targets = [args.base + "/"]
    process = CrawlerProcess(settings)
    process.crawl(PagesSpider)
    process.start()


if __name__ == "__main__":
    main()
