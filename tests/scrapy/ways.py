"""A mixin spider started each documented way (tests/scrapy/test_spider.py).

* ``python ways.py class``: ``CrawlerProcess.crawl(Spider)``;
* ``python ways.py crawler``: ``process.crawl(process.create_crawler(Spider))``, Scrapy's
  way to reach a crawler's stats and signals before it starts;
* ``scrapy runspider ways.py``;
* ``scrapy crawl ways`` in a project whose ``SPIDER_MODULES`` names this module.

The target is ``$WAYS_TARGET``. Each page the spider gets is one line of ``$WAYS_OUT``, and
each page yields a link to ``/extra``, which sitemap-only mode must drop. ``$WAYS_LINKS``
says how that mode is asked for: ``class`` (the class attribute ``sitemap_links = False``,
the default), ``arg`` (the spider argument, ``-a sitemap_links=False``) or ``setting``
(``-s SITEMAP_READER_LINKS=False``). The spider sets only sitemap-reader's options and the
test resolver, so every middleware it runs with comes from how it was started.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response

from sitemap_reader.scrapy import SitemapReaderMixin

#: The settings of every way (a project's settings module copies them).
SETTINGS: dict[str, Any] = {
    "LOG_LEVEL": "INFO",
    "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    "TWISTED_DNS_RESOLVER": "tests.scrapy.fake_dns.FakeResolver",
    "TELNETCONSOLE_ENABLED": False,
    "ROBOTSTXT_OBEY": True,
    "RETRY_ENABLED": False,
}


class WaysSpider(SitemapReaderMixin, Spider):
    """Discovery of ``$WAYS_TARGET`` in sitemap-only mode, scope ``any``."""

    name = "ways"
    sitemap_targets = (os.environ.get("WAYS_TARGET", ""),)
    if os.environ.get("WAYS_LINKS", "class") == "class":
        sitemap_links = False
    sitemap_scope = "any"

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        with open(os.environ["WAYS_OUT"], "a", encoding="utf-8") as out:
            out.write(response.url + "\n")
        yield response.follow("/extra", callback=self.parse)


def main() -> None:
    """``python ways.py class|crawler``."""
    links = os.environ.get("WAYS_LINKS", "class")
    settings = {**SETTINGS, "SITEMAP_READER_LINKS": False} if links == "setting" else SETTINGS
    arguments = {"sitemap_links": "False"} if links == "arg" else {}
    process = CrawlerProcess(settings)
    if sys.argv[1] == "crawler":
        process.crawl(process.create_crawler(WaysSpider), **arguments)
    else:
        process.crawl(WaysSpider, **arguments)
    process.start()


if __name__ == "__main__":
    main()
