"""The embedded demo site: a small, realistic website served by aiohttp on 127.0.0.1.

``sitemap-reader demo`` starts it on a free port and runs ``dump`` (or ``tree``) against it,
so the first minutes with the tool need no internet. It shows what the library handles:

- ``/robots.txt`` with two ``Sitemap:`` lines, one absolute and one relative;
- ``/sitemap_index.xml``, an index naming a gzipped child (``.xml.gz``), a media sitemap
  (images, a video), a nested index and one broken child (cut off mid-document);
- the nested index names a Google News sitemap and an RSS 2.0 feed;
- a plain-text sitemap (the relative robots.txt line);
- hreflang alternates, a URL listed twice (emitted once) and a URL on a foreign host
  (dropped by the default ``site`` scope).

Every page URL the site lists answers with a small HTML page (its title and a few links
to other pages), so a crawler pointed at the demo (the Scrapy and Crawlee examples, a
first spider) has pages to fetch. ``sitemap-reader demo serve`` keeps the site running
until Ctrl-C; :func:`serve_in_thread` runs it beside synchronous code.

The documents are templates: ``{base}`` becomes the origin the request arrived on, so the
site works on whatever port it gets. :data:`EXPECTED_PATHS` is the exact set of page paths a
default ``dump`` of the site emits; tests compare against it.
"""

from __future__ import annotations

import asyncio
import gzip
import html
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Final

from aiohttp import web

#: The page paths a default ``dump`` emits, each exactly once (``/about`` is listed twice).
EXPECTED_PATHS: Final[frozenset[str]] = frozenset(
    {
        "/",
        "/about",
        "/de/",
        "/de/ueber-uns",
        "/pricing",
        "/contact",
        "/gallery/spring",
        "/videos/intro",
        "/news/2026/launch",
        "/news/2026/release-notes",
        "/blog/hello-world",
        "/blog/streaming-parsers",
        "/blog/ranking-urls",
        "/docs/getting-started",
        "/docs/api",
        "/archive/2025/a",
        "/archive/2025/b",
    }
)
#: Listed in the gzipped child; another host, so the default ``site`` scope drops it.
FOREIGN_URL: Final = "https://partner.example.net/landing"
#: The child that breaks: a urlset cut off in the middle of its third entry.
BROKEN_PATH: Final = "/sitemaps/broken.xml"
#: Every sitemap the demo site publishes (robots.txt excluded), by path.
SITEMAP_PATHS: Final[tuple[str, ...]] = (
    "/sitemap_index.xml",
    "/sitemap.txt",
    "/sitemaps/pages.xml.gz",
    "/sitemaps/media.xml",
    "/sitemaps/archive-index.xml",
    BROKEN_PATH,
    "/sitemaps/news.xml",
    "/feeds/blog.rss",
)


def expected_urls(base: str) -> frozenset[str]:
    """The URLs a default ``dump`` of the demo site served at ``base`` emits.

    >>> sorted(expected_urls("http://127.0.0.1:8080"))[0]
    'http://127.0.0.1:8080/'
    """
    origin = base.rstrip("/")
    return frozenset(origin + path for path in EXPECTED_PATHS)


_URLSET_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
    '        xmlns:xhtml="http://www.w3.org/1999/xhtml"\n'
    '        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"\n'
    '        xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"\n'
    '        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">\n'
)

_ROBOTS = """\
# The demo site's robots.txt: one absolute and one relative Sitemap line.
User-agent: *
Disallow: /private/

Sitemap: {base}/sitemap_index.xml
Sitemap: /sitemap.txt
"""

_INDEX = """\
<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>{base}/sitemaps/pages.xml.gz</loc><lastmod>2026-11-20</lastmod></sitemap>
  <sitemap><loc>{base}/sitemaps/media.xml</loc><lastmod>2026-10-02</lastmod></sitemap>
  <sitemap><loc>{base}/sitemaps/archive-index.xml</loc></sitemap>
  <sitemap><loc>{base}/sitemaps/broken.xml</loc></sitemap>
</sitemapindex>
"""

_NESTED_INDEX = """\
<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>{base}/sitemaps/news.xml</loc></sitemap>
  <sitemap><loc>{base}/feeds/blog.rss</loc></sitemap>
</sitemapindex>
"""

_PAGES = (
    _URLSET_OPEN
    + """\
  <url>
    <loc>{base}/</loc><lastmod>2026-11-20T08:00:00Z</lastmod>
    <changefreq>daily</changefreq><priority>1.0</priority>
    <xhtml:link rel="alternate" hreflang="en" href="{base}/"/>
    <xhtml:link rel="alternate" hreflang="de" href="{base}/de/"/>
    <xhtml:link rel="alternate" hreflang="x-default" href="{base}/"/>
  </url>
  <url>
    <loc>{base}/de/</loc><lastmod>2026-11-20T08:00:00Z</lastmod>
    <changefreq>daily</changefreq><priority>0.9</priority>
    <xhtml:link rel="alternate" hreflang="en" href="{base}/"/>
    <xhtml:link rel="alternate" hreflang="de" href="{base}/de/"/>
  </url>
  <url>
    <loc>{base}/about</loc><lastmod>2026-03-01</lastmod>
    <changefreq>monthly</changefreq><priority>0.5</priority>
    <xhtml:link rel="alternate" hreflang="en" href="{base}/about"/>
    <xhtml:link rel="alternate" hreflang="de" href="{base}/de/ueber-uns"/>
  </url>
  <url>
    <loc>{base}/de/ueber-uns</loc><lastmod>2026-03-01</lastmod>
    <changefreq>monthly</changefreq><priority>0.4</priority>
  </url>
  <url>
    <loc>{base}/pricing</loc><lastmod>2026-11-02T12:30:00+01:00</lastmod>
    <changefreq>weekly</changefreq><priority>0.8</priority>
  </url>
  <url><loc>{base}/contact</loc><changefreq>yearly</changefreq><priority>0.3</priority></url>
  <url><loc>https://partner.example.net/landing</loc><priority>0.9</priority></url>
</urlset>
"""
)

_MEDIA = (
    _URLSET_OPEN
    + """\
  <url>
    <loc>{base}/gallery/spring</loc><lastmod>2026-04-12</lastmod>
    <image:image><image:loc>{base}/img/spring-1.jpg</image:loc></image:image>
    <image:image><image:loc>{base}/img/spring-2.jpg</image:loc></image:image>
  </url>
  <url>
    <loc>{base}/videos/intro</loc><lastmod>2026-10-02</lastmod>
    <video:video>
      <video:thumbnail_loc>{base}/img/intro-thumb.jpg</video:thumbnail_loc>
      <video:title>A two-minute tour of sitemap-reader</video:title>
      <video:description>From a domain name to ranked URL records.</video:description>
      <video:content_loc>{base}/media/intro.mp4</video:content_loc>
      <video:duration>125</video:duration>
      <video:family_friendly>yes</video:family_friendly>
    </video:video>
  </url>
</urlset>
"""
)

_NEWS = (
    _URLSET_OPEN
    + """\
  <url>
    <loc>{base}/news/2026/launch</loc><lastmod>2026-11-27T09:00:00Z</lastmod>
    <news:news>
      <news:publication><news:name>The Demo Times</news:name>
        <news:language>en</news:language></news:publication>
      <news:publication_date>2026-11-27T09:00:00Z</news:publication_date>
      <news:title>sitemap-reader 0.1 is out</news:title>
    </news:news>
  </url>
  <url>
    <loc>{base}/news/2026/release-notes</loc><lastmod>2026-11-28</lastmod>
    <news:news>
      <news:publication><news:name>The Demo Times</news:name>
        <news:language>en</news:language></news:publication>
      <news:publication_date>2026-11-28</news:publication_date>
      <news:title>What is new: ranked output and a demo site</news:title>
    </news:news>
  </url>
</urlset>
"""
)

_RSS = """\
<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>The sitemap-reader blog</title>
    <link>{base}/blog/</link>
    <description>Notes on reading sitemaps at scale.</description>
    <item><title>Hello, world</title><link>{base}/blog/hello-world</link>
      <pubDate>Mon, 05 Jan 2026 10:00:00 GMT</pubDate></item>
    <item><title>Parsing sitemaps while they stream</title>
      <link>{base}/blog/streaming-parsers</link>
      <pubDate>Tue, 10 Feb 2026 09:30:00 +0100</pubDate></item>
    <item><title>Which URLs to crawl first</title><link>{base}/blog/ranking-urls</link>
      <pubDate>Fri, 20 Nov 2026 16:45:00 GMT</pubDate></item>
  </channel>
</rss>
"""

_TEXT = """\
{base}/docs/getting-started
{base}/docs/api
{base}/about
"""

# Two complete entries, then the body stops inside the third opening tag, the way a
# server that times out mid-response leaves it. The first two entries are still good.
_BROKEN = (
    _URLSET_OPEN
    + """\
  <url><loc>{base}/archive/2025/a</loc><lastmod>2025-06-01</lastmod></url>
  <url><loc>{base}/archive/2025/b</loc><lastmod>2025-07-01</lastmod></url>
  <url><lo"""
)


@dataclass(frozen=True, slots=True)
class _Document:
    """One file of the demo site: a template, its Content-Type, and whether it is gzipped."""

    template: str
    content_type: str
    gzipped: bool = False

    def render(self, base: str) -> bytes:
        """The body for a site whose origin is ``base``."""
        body = self.template.replace("{base}", base).encode("utf-8")
        return gzip.compress(body, mtime=0) if self.gzipped else body


_XML = "application/xml"
_DOCUMENTS: Final[dict[str, _Document]] = {
    "/robots.txt": _Document(_ROBOTS, "text/plain"),
    "/sitemap_index.xml": _Document(_INDEX, _XML),
    "/sitemap.txt": _Document(_TEXT, "text/plain"),
    "/sitemaps/pages.xml.gz": _Document(_PAGES, "application/x-gzip", gzipped=True),
    "/sitemaps/media.xml": _Document(_MEDIA, _XML),
    "/sitemaps/archive-index.xml": _Document(_NESTED_INDEX, _XML),
    BROKEN_PATH: _Document(_BROKEN, _XML),
    "/sitemaps/news.xml": _Document(_NEWS, _XML),
    "/feeds/blog.rss": _Document(_RSS, "application/rss+xml"),
}


#: The pages in a fixed order: each page links to home and to the two after it.
_PAGE_ORDER: Final[tuple[str, ...]] = tuple(sorted(EXPECTED_PATHS))
#: Links per page besides home.
_PAGE_LINKS: Final = 2


def page_title(path: str) -> str:
    """The title of the demo page at ``path``.

    >>> page_title("/blog/hello-world")
    'Hello world - blog - sitemap-reader demo'
    """
    parts = [p for p in path.split("/") if p]
    if not parts:
        return "Home - sitemap-reader demo"
    name = parts[-1].replace("-", " ").capitalize()
    section = f" - {parts[0]}" if len(parts) > 1 else ""
    return f"{name}{section} - sitemap-reader demo"


def render_page(path: str) -> str:
    """The HTML of the demo page at ``path``: its title, a heading and a few links."""
    at = _PAGE_ORDER.index(path)
    others = [_PAGE_ORDER[(at + step) % len(_PAGE_ORDER)] for step in range(1, _PAGE_LINKS + 1)]
    links = "".join(
        f'<li><a href="{html.escape(p)}">{html.escape(page_title(p))}</a></li>'
        for p in ["/", *others]
    )
    title = html.escape(page_title(path))
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"</head>\n<body><h1>{title}</h1><ul>{links}</ul></body></html>\n"
    )


async def _serve_document(request: web.Request) -> web.Response:
    """Render the requested document (or page) for the origin the request came in on."""
    if request.path in EXPECTED_PATHS:
        return web.Response(text=render_page(request.path), content_type="text/html")
    document = _DOCUMENTS.get(request.path)
    if document is None:
        raise web.HTTPNotFound(text="not part of the demo site\n")
    base = str(request.url.origin())
    return web.Response(body=document.render(base), content_type=document.content_type)


def make_app() -> web.Application:
    """The demo site as an aiohttp application (serve it with any aiohttp runner).

    >>> len(make_app().router.routes()) > 0
    True
    """
    app = web.Application()
    app.router.add_get("/{tail:.*}", _serve_document)
    return app


@asynccontextmanager
async def serve(host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve the demo site on ``host`` and ``port`` (0: a free one); yields its origin.

    Runs in the caller's event loop, so a crawl in the same loop can read it::

        async with serve() as base:          # base == "http://127.0.0.1:PORT"
            ...
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    port = sock.getsockname()[1]
    runner = web.AppRunner(make_app(), access_log=None)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()
        sock.close()


@contextmanager
def serve_in_thread(host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """:func:`serve` on an event loop of its own, in a thread: for synchronous callers
    (``demo check``, the Scrapy example). Yields the origin; stops the site on exit.

    >>> with serve_in_thread() as base:                  # doctest: +SKIP
    ...     print(base)                                  # http://127.0.0.1:PORT
    """
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    found: list[str | BaseException] = []
    stop = asyncio.Event()

    async def main() -> None:
        try:
            async with serve(host, port) as base:
                found.append(base)
                ready.set()
                await stop.wait()
        except OSError as exc:
            found.append(exc)
            ready.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    try:
        ready.wait()
        result = found[0]
        if isinstance(result, BaseException):
            raise result
        yield result
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join()
        loop.close()
