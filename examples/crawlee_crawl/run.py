"""Crawl a site's sitemap pages with Crawlee, fed (and resumed) by sitemap-reader.

    python examples/crawlee_crawl/run.py                         # the embedded demo site
    python examples/crawlee_crawl/run.py http://127.0.0.1:8080/  # `sitemap-reader demo serve`
    python examples/crawlee_crawl/run.py example.com --progress crawl.db

Without a target it serves the embedded demo site (:mod:`sitemap_reader.demo`: sitemaps and a
small HTML page for every URL they list) on 127.0.0.1 in this process. An ``HttpCrawler``
(no browser) takes its requests from a :class:`~sitemap_reader.crawlee.SitemapRequestLoader`
and prints one JSON line per page: its URL, its ``<title>`` and the sitemap record's score.
With ``--progress FILE``, a crawl that was killed (even with kill -9) and started again
crawls only the pages not handled yet. Crawlee's own storage goes to a temporary folder.
Needs the ``crawlee`` extra: ``python -m pip install '.[crawlee]'`` from the checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import tempfile
from collections.abc import AsyncIterator

os.environ.setdefault("CRAWLEE_STORAGE_DIR", tempfile.mkdtemp(prefix="crawlee-storage-"))

from crawlee.crawlers import HttpCrawler, HttpCrawlingContext

from sitemap_reader import demo
from sitemap_reader.crawlee import RECORD_KEY, SitemapRequestLoader

TITLE = re.compile(rb"<title>(.*?)</title>", re.S | re.I)


@contextlib.asynccontextmanager
async def target_or_demo(target: str | None) -> AsyncIterator[str]:
    """The target given, or the demo site served here for the length of the crawl."""
    if target is not None:
        yield target
        return
    async with demo.serve() as base:
        print(f"demo site running at {base}/", file=sys.stderr)
        yield base + "/"


async def crawl(target: str | None, progress: str | None) -> None:
    """Crawl every page the target's sitemaps list, best first within the buffer."""
    async with (
        target_or_demo(target) as site,
        SitemapRequestLoader(site, progress=progress, best_first=True) as loader,
    ):
        crawler = HttpCrawler(request_manager=await loader.to_tandem(), configure_logging=False)

        @crawler.router.default_handler
        async def page(context: HttpCrawlingContext) -> None:
            body = await context.http_response.read()
            title = TITLE.search(body)
            record = context.request.user_data[RECORD_KEY]
            score = record.get("score") if isinstance(record, dict) else None
            line = {
                "url": context.request.url,
                "title": title.group(1).decode("utf-8", "replace") if title else None,
                "score": score,
            }
            print(json.dumps(line, ensure_ascii=False), flush=True)

        await crawler.run()
        print(f"{loader.loader.handled} pages handled", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description="Crawlee on sitemap-reader's loader.")
    parser.add_argument("target", nargs="?", help="a domain, site, robots.txt or sitemap URL")
    parser.add_argument("--progress", help="the loader's progress file (resume after a crash)")
    args = parser.parse_args()
    asyncio.run(crawl(args.target, args.progress))
    return 0


if __name__ == "__main__":
    sys.exit(main())
