"""Run one Scrapy crawl of the test site; the Scrapy tests start it in a subprocess.

``python tests/scrapy/runner.py MODE BASE OUT [--jobdir DIR] [--stop-after N] [--alternates]
[--run-json FILE] [--also TARGET]... [--hook] [--links]``

MODE is ``mixin`` (a SitemapReaderMixin spider), ``middleware`` (a plain spider with
SitemapStartMiddleware) or ``addon`` (a plain spider with the Addon). Every page callback
appends one JSON line to OUT: the URL, the request priority, ``meta["sitemap_reader"]``.
With ``--stop-after N`` the spider closes itself after N pages, with ``--pagecount N``
Scrapy closes it after N responses of any kind (an interrupted job, for ``--jobdir``).
The last line on stderr is ``runner: finish_reason=REASON`` (Scrapy's stats).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import CloseSpider
from scrapy.http import Response

from sitemap_reader.records import UrlRecord
from sitemap_reader.scrapy import META_KEY, SitemapReaderMixin

MAXSIZE = 256 * 1024  # testsite.MAXSIZE (this script runs without the tests package)


class Recorder:
    """Appends one JSON line per page; raises CloseSpider after ``stop_after`` pages."""

    out: str = ""
    run_json: str = ""
    stop_after: int = 0
    pages: int = 0
    links: bool = False

    def record(self, response: Response) -> Iterator[Request]:
        line = {
            "url": response.url,
            "priority": response.request.priority if response.request else None,
            "meta": response.meta.get(META_KEY),
            "depth": response.meta.get("depth"),
            "hooked": response.meta.get("hooked"),
        }
        with open(self.out, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(line) + "\n")
        self.pages += 1
        if self.stop_after and self.pages >= self.stop_after:
            raise CloseSpider("paused")
        if self.links and META_KEY in response.meta:  # a sitemap page leads on
            return iter(
                [
                    response.follow("/extra/plain", callback=self.record),
                    response.follow(
                        "/extra/asked", self.record, meta={"sitemap_reader_link": True}
                    ),
                ]
            )
        return iter(())


class MixinSpider(Recorder, SitemapReaderMixin, Spider):
    """The mixin path: the targets are a class attribute."""

    name = "mixin"

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        return self.record(response)

    def closed(self, reason: str) -> None:
        """With ``--run-json``: write the run (tree and stats) the driver built."""
        if self.run_json:
            with open(self.run_json, "w", encoding="utf-8") as stream:
                json.dump(self._sitemap_reader().run.to_dict(), stream)


class PlainSpider(Recorder, Spider):
    """A spider that knows nothing about sitemaps (middleware and add-on paths)."""

    name = "plain"

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        return self.record(response)


def hooked(record: UrlRecord, request: Request | None) -> Request | None:
    """The ``--hook`` spiders' ``sitemap_request``: /p/a dropped, /p/b raises, the others
    marked in their meta."""
    if record.url.endswith("/p/a"):
        return None
    if record.url.endswith("/p/b"):
        raise LookupError("no request for /p/b")
    assert request is not None
    return request.replace(meta={**request.meta, "hooked": True})


class HookedMixinSpider(MixinSpider):
    """The mixin with a ``sitemap_request`` hook over the default request."""

    def sitemap_request(self, record: UrlRecord) -> Request | None:
        return hooked(record, super().sitemap_request(record))


class HookedPlainSpider(PlainSpider):
    """A plain spider (middleware, add-on) whose hook builds the request itself."""

    def sitemap_request(self, record: UrlRecord) -> Request | None:
        return hooked(record, Request(record.url, callback=self.parse))


def main() -> None:
    """Parse the arguments, configure, crawl."""
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["mixin", "middleware", "addon"])
    parser.add_argument("base")
    parser.add_argument("out")
    parser.add_argument("--jobdir")
    parser.add_argument("--stop-after", type=int, default=0)
    parser.add_argument("--pagecount", type=int, default=0, help="CLOSESPIDER_PAGECOUNT")
    parser.add_argument("--alternates", action="store_true")
    parser.add_argument("--target", help="crawl this target instead of BASE/")
    parser.add_argument("--also", action="append", default=[], help="one more target")
    parser.add_argument("--hook", action="store_true", help="a sitemap_request hook")
    parser.add_argument("--links", action="store_true", help="each page yields two links")
    parser.add_argument("--set", action="append", default=[], help="NAME=JSON, a setting")
    parser.add_argument("--run-json", default="", help="mixin: write the run's tree here")
    args = parser.parse_args()
    settings: dict[str, Any] = {
        "LOG_LEVEL": "INFO",
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "CONCURRENT_REQUESTS": 1,
        # No download while a callback's output is still being scheduled: with one request
        # at a time the crawl order is then exactly the scheduler's priority order.
        "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 1,
        "DOWNLOAD_MAXSIZE": MAXSIZE,
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "RETRY_ENABLED": False,
        "SITEMAP_READER_ALTERNATES": args.alternates,
    }
    if args.jobdir:
        settings["JOBDIR"] = args.jobdir
    for pair in args.set:
        name, _, value = pair.partition("=")
        settings[name] = json.loads(value)
    if args.pagecount:
        settings["CLOSESPIDER_PAGECOUNT"] = args.pagecount
    spider: type[Spider] = HookedMixinSpider if args.hook else MixinSpider
    targets = [args.target or args.base + "/", *args.also]
    if args.mode == "mixin":
        MixinSpider.sitemap_targets = targets
    else:
        spider = HookedPlainSpider if args.hook else PlainSpider
        settings["SITEMAP_READER_TARGETS"] = targets
    if args.mode == "middleware":
        settings["SPIDER_MIDDLEWARES"] = {"sitemap_reader.scrapy.SitemapStartMiddleware": 950}
    elif args.mode == "addon":
        settings["ADDONS"] = {"sitemap_reader.scrapy.Addon": 0}
    Recorder.out, Recorder.stop_after = args.out, args.stop_after
    Recorder.run_json = args.run_json
    Recorder.links = args.links
    process = CrawlerProcess(settings)
    process.crawl(spider)
    (crawler,) = process.crawlers  # taken before the crawl: it leaves the set when done
    process.start()
    stats = crawler.stats
    reason = stats.get_value("finish_reason") if stats is not None else None
    print(f"runner: finish_reason={reason}", file=sys.stderr)


if __name__ == "__main__":
    main()
