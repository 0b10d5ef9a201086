"""A Crawlee crawl (HttpCrawler) on a :class:`SitemapRequestLoader`, run as a child process.

Usage: ``python crawlee_child.py TARGET PROGRESS BUFFER`` with ``CRAWLEE_STORAGE_DIR`` set.
It prints ``out URL`` as its handler gets each page (flushed at once); Crawlee marks the
request handled after the handler returns, which acknowledges it in the progress file.
At the end it prints ``end HANDLED PEAK_KIB``. The parent kills it with SIGKILL at will.
"""

from __future__ import annotations

import asyncio
import sys

from crawlee import ConcurrencySettings
from crawlee.crawlers import HttpCrawler, HttpCrawlingContext

from sitemap_reader.crawlee import RECORD_KEY, SitemapRequestLoader

#: Pages crawled at once: what may be crawled twice after a kill.
CONCURRENCY = 4


async def crawl(target: str, progress: str, buffer: int) -> None:
    """Crawl every page the sitemaps list, printing each as it is handled."""
    async with SitemapRequestLoader(
        [target], progress=progress, buffer=buffer, allow_private=True
    ) as loader:
        crawler = HttpCrawler(
            request_manager=await loader.to_tandem(),
            concurrency_settings=ConcurrencySettings(
                min_concurrency=1, max_concurrency=CONCURRENCY, desired_concurrency=CONCURRENCY
            ),
            configure_logging=False,
        )

        @crawler.router.default_handler
        async def handler(context: HttpCrawlingContext) -> None:
            record = context.request.user_data[RECORD_KEY]
            assert isinstance(record, dict) and record["url"] == context.request.url
            sys.stdout.write(f"out {context.request.url}\n")
            sys.stdout.flush()

        await crawler.run()
        with open("/proc/self/status", encoding="ascii") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        sys.stdout.write(f"end {loader.loader.handled} {peak}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(crawl(sys.argv[1], sys.argv[2], int(sys.argv[3])))
