"""Test kit for the crawler: a scriptable site on 127.0.0.1, sitemap builders, fast limits.

A :class:`Site` is a real aiohttp application. Each path gets a :class:`Reply` (body,
status, headers) or a handler of its own; the site counts hits per path and tracks how
many requests are in flight at once (overall and per server), which the concurrency
tests assert on. :class:`ThreadedServer` runs a site on its own loop in a thread, for the
synchronous ``iter_urls`` tests, whose caller must not be the loop serving the requests.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from sitemap_reader.crawl import Run, SitemapReader
from sitemap_reader.options import Options
from sitemap_reader.records import UrlRecord

#: Small limits and timeouts so failure paths finish in milliseconds.
FAST = Options.of(
    backoff_base=0.01,
    retries=2,
    connect_timeout=2.0,
    read_timeout=5.0,
    timeout=10.0,
    max_retry_after=2.0,
)

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"

#: The HTTP clients a reader may send with (the ``client`` option): the ``client``
#: fixture (tests/conftest.py) runs a test once with each.
CLIENTS = ("aiohttp", "browser")


@dataclass(slots=True)
class Kit:
    """What the kit's readers use unless a test says otherwise."""

    client: str = "aiohttp"


#: Set by the ``client`` fixture for the test it parametrizes.
KIT = Kit()
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def gz(data: bytes) -> bytes:
    """gzip with a fixed mtime."""
    return gzip.compress(data, mtime=0)


def urlset(urls: Iterable[str]) -> bytes:
    """A urlset document listing ``urls``."""
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return f'<?xml version="1.0"?>\n<urlset xmlns="{SITEMAP_NS}">{entries}</urlset>\n'.encode()


def index(children: Iterable[str]) -> bytes:
    """A sitemapindex listing ``children``."""
    entries = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in children)
    return (
        f'<?xml version="1.0"?>\n<sitemapindex xmlns="{SITEMAP_NS}">{entries}</sitemapindex>\n'
    ).encode()


@dataclass(slots=True)
class Reply:
    """A canned response."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "application/xml"


class Site:
    """A scripted aiohttp site. Unknown paths answer 404 (or the route added at ``*``)."""

    def __init__(self) -> None:
        self.routes: dict[str, Reply | Handler] = {}
        self.hits: Counter[str] = Counter()
        self.requests: list[web.Request] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.app = web.Application()
        self.app.router.add_route("GET", "/{tail:.*}", self._handle)
        self.base = ""

    def add(self, path: str, reply: Reply | Handler | bytes | str, **kwargs: Any) -> None:
        """Serve ``reply`` (a Reply, a handler, or a body plus Reply fields) at ``path``."""
        if isinstance(reply, str):
            reply = reply.encode()
        if isinstance(reply, bytes):
            reply = Reply(reply, **kwargs)
        self.routes[path] = reply

    def url(self, path: str) -> str:
        """Absolute URL of ``path`` on this site."""
        return self.base + path

    @property
    def host(self) -> str:
        """``host:port`` of this site."""
        return self.base.split("//", 1)[1]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        key = request.path_qs
        self.hits[key] += 1
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            route = self.routes.get(key, self.routes.get(request.path, self.routes.get("*")))
            if route is None:
                return web.Response(status=404, text="not found", content_type="text/html")
            if isinstance(route, Reply):
                response = web.Response(body=route.body, status=route.status, headers=route.headers)
                if route.content_type is not None and "Content-Type" not in route.headers:
                    response.content_type = route.content_type
                return response
            return await route(request)
        finally:
            self.in_flight -= 1


async def start(site: Site, host: str = "127.0.0.1") -> TestServer:
    """Serve ``site`` on ``host`` at a free port; sets ``site.base``."""
    server = TestServer(site.app, host=host)
    await server.start_server()
    site.base = str(server.make_url("")).rstrip("/")
    return server


async def collect(target: str | list[str], **options: Any) -> tuple[list[UrlRecord], Run]:
    """Run ``reader.urls(target)`` to the end; the records and the run."""
    options.setdefault("options", FAST)
    options.setdefault("client", KIT.client)
    async with SitemapReader(**options) as reader:
        records = [r async for r in reader.urls(target)]
        assert reader.last_run is not None
        return records, reader.last_run


async def tree(target: str | list[str], **options: Any) -> Run:
    """Run ``reader.tree(target)``."""
    options.setdefault("options", FAST)
    options.setdefault("client", KIT.client)
    async with SitemapReader(**options) as reader:
        return await reader.tree(target)


def node_by_url(run: Run, url: str) -> Any:
    """The node requested as ``url`` (the first, in tree order)."""
    for node in run.nodes():
        if node.url == url:
            return node
    raise AssertionError(f"no node for {url}: {[n.url for n in run.nodes()]}")


class ThreadedServer:
    """Serve a :class:`Site` from a private loop in a daemon thread (context manager)."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)

    def __enter__(self) -> Site:
        self._thread.start()
        self._ready.wait(10)
        return self.site

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await start(self.site)
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await server.close()
