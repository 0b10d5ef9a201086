"""Crawl sitemap-reader's demo site with Scrapy, in one command, without internet.

    python examples/scrapy_project/run.py            # the mixin spider (``demo``)
    python examples/scrapy_project/run.py plain      # a plain spider with the add-on

It serves the embedded demo site (:mod:`sitemap_reader.demo`) on 127.0.0.1 and a free port
from a thread, then runs the spider against it: one JSON line per page on stdout (best
first), Scrapy's log with sitemap-reader's problems (the demo has a broken child) on stderr.
The demo site only serves sitemaps; here it also answers every page URL with a tiny HTML
page, so the callbacks have something to read.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the demo_crawl package, wherever this is run from
os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "demo_crawl.settings")

from scrapy.crawler import CrawlerProcess  # noqa: E402
from scrapy.utils.project import get_project_settings  # noqa: E402

from sitemap_reader import demo  # noqa: E402

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def pages(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer the demo's page URLs (a 404 in the demo app) with a small HTML page."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        if request.path not in demo.EXPECTED_PATHS:
            raise
        html = f"<html><head><title>Demo page {request.path}</title></head><body></body></html>"
        return web.Response(text=html, content_type="text/html")


class DemoSite(threading.Thread):
    """The demo app on 127.0.0.1 in a thread of its own; ``base`` once ``ready`` is set."""

    def __init__(self) -> None:
        super().__init__(name="demo-site", daemon=True)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.base = ""

    def run(self) -> None:
        app = demo.make_app()
        app.middlewares.append(pages)
        runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        port = runner.addresses[0][1]
        self.base = f"http://127.0.0.1:{port}"
        self.ready.set()
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(runner.cleanup())
            self.loop.close()

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.join(10)


def main() -> int:
    """Serve the demo site, crawl it with the chosen spider, stop the site."""
    spider = sys.argv[1] if len(sys.argv) > 1 else "demo"
    if spider not in ("demo", "plain"):
        print("usage: run.py [demo|plain]", file=sys.stderr)
        return 2
    site = DemoSite()
    site.start()
    site.ready.wait(10)
    print(f"demo site running at {site.base}/", file=sys.stderr)
    settings = get_project_settings()
    target = site.base + "/"
    if spider == "plain":
        settings.set("SITEMAP_READER_TARGETS", [target], priority="cmdline")
    try:
        process = CrawlerProcess(settings)
        if spider == "demo":
            process.crawl(spider, sitemap_targets=target)
        else:
            process.crawl(spider)
        process.start()
    finally:
        site.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
