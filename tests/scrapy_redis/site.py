"""The loopback site the scrapy-redis tests crawl, served from a thread.

``/robots.txt`` -> ``/sitemap_index.xml`` -> ``children`` urlsets of ``per_child`` pages,
plus ``/slow.xml`` (``per_child`` pages of its own). Two gates: the index waits until the
test opens it (so every process is up before there is work), and the first request for
``/slow.xml`` waits until the test opens its gate (so a process can be caught holding
that sitemap). With ``redirect_every = n`` every n-th page of a sitemap answers 302 to
its path plus ``/moved``. Every request is counted per path at the server.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections import Counter

from aiohttp import web

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SLOW = "/slow.xml"
#: Suffix of the path a redirected page moved to.
MOVED = "/moved"


class Site:
    """The site (a context manager): ``with Site(8, 40) as site: site.base``."""

    def __init__(self, children: int, per_child: int, redirect_every: int = 0) -> None:
        self.children = children
        self.per_child = per_child
        self.redirected = {
            page
            for page in self.all_pages()
            if redirect_every and int(page.rpartition("/")[2]) % redirect_every == 0
        }
        self.hits: Counter[str] = Counter()
        self.slow_reached = threading.Event()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._gates: dict[str, asyncio.Event] = {}
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    def sitemap_paths(self) -> list[str]:
        """The child sitemaps the index lists (the slow one last)."""
        return [f"/s{c}.xml" for c in range(self.children)] + [SLOW]

    def pages_of(self, sitemap: str) -> list[str]:
        """The page paths one child sitemap lists."""
        stem = sitemap.strip("/").removesuffix(".xml")
        return [f"/page/{stem}/{i}" for i in range(self.per_child)]

    def all_pages(self) -> set[str]:
        """Every page path the site lists."""
        return {page for sitemap in self.sitemap_paths() for page in self.pages_of(sitemap)}

    def final_pages(self) -> set[str]:
        """Every page path the site lists, where its redirect (if any) leads."""
        return {page + MOVED if page in self.redirected else page for page in self.all_pages()}

    def page_hits(self) -> Counter[str]:
        """Page path -> requests the server received for it."""
        return Counter({p: n for p, n in list(self.hits.items()) if p.startswith("/page/")})

    def open(self, gate: str) -> None:
        """Open a gate: ``"index"`` or ``"slow"``."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._gates[gate].set)

    def __enter__(self) -> Site:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the test site did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            for gate in self._gates.values():
                self._loop.call_soon_threadsafe(gate.set)
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._gates = {"index": asyncio.Event(), "slow": asyncio.Event()}
        self._stop = asyncio.Event()
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        await web.SockSite(runner, self._sock).start()
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.hits[path] += 1
        if path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nSitemap: {self.base}/sitemap_index.xml\n")
        if path == "/sitemap_index.xml":
            await self._gates["index"].wait()
            locs = "".join(
                f"<sitemap><loc>{self.base}{p}</loc></sitemap>" for p in self.sitemap_paths()
            )
            return _xml(f'<sitemapindex xmlns="{NS}">{locs}</sitemapindex>')
        if path in self.sitemap_paths():
            if path == SLOW and self.hits[path] == 1:
                self.slow_reached.set()
                await self._gates["slow"].wait()
            urls = "".join(f"<url><loc>{self.base}{p}</loc></url>" for p in self.pages_of(path))
            return _xml(f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">{urls}</urlset>\n')
        if path in self.redirected:
            raise web.HTTPFound(self.base + path + MOVED)
        if path.startswith("/page/"):
            return web.Response(
                text=f"<html><title>{path}</title></html>", content_type="text/html"
            )
        return web.Response(status=404)


def _xml(text: str) -> web.Response:
    return web.Response(text=text, content_type="application/xml")
