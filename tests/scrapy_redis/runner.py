"""One Scrapy process of a scrapy-redis crawl of the test site (started by the tests).

``python tests/scrapy_redis/runner.py BASE REDIS_URL NAME OUT [--set NAME=JSON]...``

The spider (named NAME, so its Redis keys are the test's own) is a RedisSitemapMixin spider
on sitemap_reader's scrapy-redis Scheduler; each page callback appends its URL to OUT as
its last act, so a line in OUT is a callback that ran to its end. Two settings shape the
callback: ``TEST_PAGE_DELAY`` (seconds it awaits first, an async callback doing work) and
``TEST_FOLLOW`` (a page ``P`` also yields an item and a request for ``P/more``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response

from sitemap_reader.scrapy.redis import RedisSitemapMixin

#: Suffix of the page a ``TEST_FOLLOW`` callback asks for.
MORE = "/more"


class PagesSpider(RedisSitemapMixin, Spider):
    """Records every page it gets."""

    name = "pages"
    out = ""

    async def parse(self, response: Response, **kwargs: Any) -> AsyncIterator[Any]:
        delay = self.settings.getfloat("TEST_PAGE_DELAY")
        if delay:
            await asyncio.sleep(delay)  # the callback's own work, not a synchronisation
        if self.settings.getbool("TEST_FOLLOW") and not response.url.endswith(MORE):
            yield Request(response.url + MORE, callback=self.parse)
            yield {"url": response.url}
        with open(self.out, "a", encoding="utf-8") as stream:
            stream.write(response.url + "\n")


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
        # Short leases and quick polls, so a test sees a takeover in seconds; not shorter: on
        # a loaded machine a live process's reactor was seen blocked for 2.7 s, and a lease
        # that lapses under a live process is a page crawled twice.
        "SITEMAP_READER_REDIS_LEASE": 5.0,
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
