"""Crawl sitemap-reader's demo site with N Scrapy processes on one Redis, no internet.

    python examples/scrapy_redis/run.py --redis redis://127.0.0.1:6379/0 [-n 2]

Serves the embedded demo site on 127.0.0.1 from a thread, clears the spider's keys in that
Redis (``shop:*``: a fresh crawl), starts N ``scrapy runspider shop.py`` processes, waits
for all of them and prints how many pages each crawled and how many distinct pages in all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis
from aiohttp import web

from sitemap_reader import demo

HERE = Path(__file__).resolve().parent
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def pages(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer the demo's page URLs (a 404 in the demo app) with a small HTML page."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        if request.path not in demo.EXPECTED_PATHS:
            raise
        return web.Response(text="<html><title>demo page</title></html>", content_type="text/html")


def serve() -> tuple[str, asyncio.AbstractEventLoop]:
    """The demo site on a free port, from a daemon thread: its base URL and loop."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    base: list[str] = []

    def run() -> None:
        app = demo.make_app()
        app.middlewares.append(pages)
        runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", 0).start())
        base.append(f"http://127.0.0.1:{runner.addresses[0][1]}")
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return base[0], loop


def main() -> int:
    """Serve, clear the keys, crawl with N processes, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", required=True, help="redis://host:port/db")
    parser.add_argument("-n", type=int, default=2, help="processes (default 2)")
    args = parser.parse_args()
    client = redis.Redis.from_url(args.redis)
    stale = list(client.scan_iter("shop:*"))
    if stale:
        client.delete(*stale)
    base, loop = serve()
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp, f"pages-{i}.jsonl") for i in range(args.n)]
        command = [sys.executable, "-m", "scrapy", "runspider", str(HERE / "shop.py")]
        procs = []
        for out in outs:
            options = ["-a", f"sitemap_targets={base}/", "-s", f"REDIS_URL={args.redis}"]
            options += ["-s", "LOG_LEVEL=WARNING", "-o", str(out)]
            procs.append(subprocess.Popen([*command, *options]))
        codes = [proc.wait() for proc in procs]
        crawled = [
            [json.loads(line)["url"] for line in out.read_text().splitlines()]
            if out.exists()
            else []
            for out in outs
        ]
    loop.call_soon_threadsafe(loop.stop)
    counts = ", ".join(str(len(urls)) for urls in crawled)
    distinct = len({url for urls in crawled for url in urls})
    print(f"pages per process: {counts}; distinct pages: {distinct}")
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
