"""The site the Scrapy tests crawl: robots.txt, an index, gzip, broken and hostile children.

Served by aiohttp from a thread (:class:`ServerThread`) so a Scrapy crawl in a subprocess can
reach it on 127.0.0.1. Every path that is not a sitemap answers 200 with a tiny HTML page.
:data:`EXPECTED_PATHS` is the exact set of pages a default crawl must request, each once.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
from collections import Counter
from types import TracebackType
from typing import Final

from aiohttp import web

#: The download size cap the crawls run with: big.xml is over it, the bomb's gzip is not.
MAXSIZE: Final = 256 * 1024

_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
_XHTML = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'


def _url(path: str, priority: str | None = None, extra: str = "") -> str:
    prio = f"<priority>{priority}</priority>" if priority else ""
    return f"<url><loc>{{base}}{path}</loc>{prio}{extra}</url>"


def _urlset(*urls: str) -> str:
    return f'<?xml version="1.0"?>\n<urlset {_NS} {_XHTML}>\n' + "\n".join(urls) + "\n</urlset>\n"


def _index(*paths: str) -> str:
    entries = "".join(f"<sitemap><loc>{{base}}{p}</loc></sitemap>\n" for p in paths)
    return f'<?xml version="1.0"?>\n<sitemapindex {_NS}>\n{entries}</sitemapindex>\n'


_ALTERNATE = '<xhtml:link rel="alternate" hreflang="de" href="{base}/de/p/a"/>'
#: Child sitemaps that must end with a logged problem, and the log text that says so.
HOSTILE: Final[dict[str, str]] = {
    "/sitemaps/broken.xml": "sitemaps/broken.xml: xml",
    "/sitemaps/bomb.xml.gz": "sitemaps/bomb.xml.gz: limit-bytes",
    "/sitemaps/xxe.xml": "sitemaps/xxe.xml: xml-entities-forbidden",
    "/sitemaps/big.xml": "sitemaps/big.xml failed",
    "/sitemaps/missing.xml": "sitemaps/missing.xml failed: HTTP 404",
}
SITEMAPS: Final[dict[str, str]] = {
    "/robots.txt": "User-agent: *\nDisallow: /private/\n"
    "Sitemap: {base}/sitemap_index.xml\nSitemap: /sitemap.txt\n",
    "/sitemap_index.xml": _index(
        "/sitemaps/pages.xml.gz",
        "/sitemaps/more.xml",
        "/sitemaps/nested.xml",
        *HOSTILE,
    ),
    "/sitemaps/pages.xml.gz": _urlset(
        _url("/p/a", "1.0", _ALTERNATE),
        _url("/p/b", "0.9"),
        _url("/p/c", "0.7"),
        _url("/p/d", "0.5"),
        _url("/p/e", "0.3"),
        _url("/p/f", "0.1"),
        "<url><loc>https://partner.example.net/landing</loc><priority>1.0</priority></url>",
    ),
    "/sitemaps/more.xml": _urlset(_url("/p/g", "0.8"), _url("/p/b", "0.9"), _url("/p/h", "0.6")),
    "/sitemaps/nested.xml": _index("/sitemaps/news.xml"),
    "/sitemaps/news.xml": _urlset(_url("/n/1", "0.4"), _url("/n/2", "0.2")),
    "/sitemap.txt": "{base}/t/1\n{base}/t/2\n{base}/p/c\n",
    # Two good entries, then the body stops inside a tag.
    "/sitemaps/broken.xml": _urlset(_url("/b/1", "0.35"), _url("/b/2", "0.25"), "<url><lo")[
        : -len("\n</urlset>\n")
    ],
    "/sitemaps/xxe.xml": '<?xml version="1.0"?>\n<!DOCTYPE urlset [\n'
    '  <!ENTITY xxe SYSTEM "file:///etc/passwd">\n]>\n'
    f"<urlset {_NS}><url><loc>{{base}}/x/&xxe;</loc></url></urlset>\n",
}
#: Page paths a default crawl requests: scope drops partner.example.net, dedupe /p/b and
#: /p/c, the limits /x/ (XXE), /big/ (over DOWNLOAD_MAXSIZE), /bomb/ (decompression cap).
EXPECTED_PATHS: Final = frozenset(
    {"/p/a", "/p/b", "/p/c", "/p/d", "/p/e", "/p/f", "/p/g", "/p/h"}
    | {"/n/1", "/n/2", "/t/1", "/t/2", "/b/1", "/b/2"}
)
#: Extra pages with ``sitemap_alternates``.
ALTERNATE_PATHS: Final = frozenset({"/de/p/a"})


def _body(path: str, base: str) -> tuple[bytes, str] | None:
    """The body and content type of a sitemap path, or None for a page."""
    if path == "/sitemaps/bomb.xml.gz":  # 4 MiB of blank space in 4 KiB of gzip
        head = f'<?xml version="1.0"?>\n<urlset {_NS}>\n'.encode()
        return gzip.compress(head + b" " * (16 * MAXSIZE), mtime=0), "application/x-gzip"
    if path == "/sitemaps/big.xml":  # a plain body bigger than DOWNLOAD_MAXSIZE
        text = _urlset(_url("/big/1", "1.0"), " " * (2 * MAXSIZE))
        return text.replace("{base}", base).encode(), "application/xml"
    template = SITEMAPS.get(path)
    if template is None:
        return None
    body = template.replace("{base}", base).encode()
    if path.endswith(".gz"):
        return gzip.compress(body, mtime=0), "application/x-gzip"
    kind = "text/plain" if path.endswith(".txt") else "application/xml"
    return body, kind


async def _handle(request: web.Request) -> web.Response:
    request.app[HITS][request.path] += 1
    request.app[TEAMS][request.path, request.headers.get("X-Team")] += 1
    if request.path == "/sitemaps/missing.xml":
        raise web.HTTPNotFound()
    if request.path == "/robots.txt" and not request.app[ROBOTS]:
        raise web.HTTPNotFound()
    found = _body(request.path, str(request.url.origin()))
    if found is None:
        html = f"<html><title>{request.path}</title><body>page</body></html>"
        return web.Response(text=html, content_type="text/html")
    body, content_type = found
    return web.Response(body=body, content_type=content_type)


ROBOTS: Final = web.AppKey("robots", bool)
#: Requests the site answered, by path (read by the tests from the server's thread).
HITS: Final = web.AppKey("hits", Counter[str])
#: Requests by path and X-Team header (None: none sent).
TEAMS: Final = web.AppKey("teams", Counter[tuple[str, str | None]])


def make_app(*, robots: bool = True) -> web.Application:
    """The test site; without ``robots`` its robots.txt is a 404 (well-known paths remain)."""
    app = web.Application()
    app[ROBOTS] = robots
    app[HITS] = Counter()
    app[TEAMS] = Counter()
    app.router.add_get("/{tail:.*}", _handle)
    return app


class ServerThread:
    """Serve an aiohttp app on 127.0.0.1 from a thread: ``with ServerThread(app) as base:``."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="test-site", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the test site did not start")
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.sock.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        runner = web.AppRunner(self.app, access_log=None)
        self.loop.run_until_complete(runner.setup())
        self.loop.run_until_complete(web.SockSite(runner, self.sock).start())
        self.ready.set()
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(runner.cleanup())
            self.loop.close()
