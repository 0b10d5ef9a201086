"""A large loopback site for the report's render check and for the CLI tests of issue 34.

``BigSite(urls=24_507)`` serves, on whatever origin a request arrives on:

- ``/robots.txt``: ``Disallow: /private/`` and one ``Sitemap:`` line, the index;
- ``/sitemap_index.xml``: children of at most :data:`PER_FILE` URLs each, and one broken
  child (``/sitemaps/broken.xml``, cut off in the middle of an entry);
- every child: lastmods spread over the last eight years (a share undated), a
  changefreq and priority per section, some URLs under ``/private/`` (disallowed by
  robots.txt), a few on another host (out of scope), hreflang alternates (en/de/fr,
  one language not reciprocated).

Everything is computed from the URL number, so two runs see the same site.
:class:`LongUrlSite` is the report's other hard case: URL paths of 1,500 letters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Final

from aiohttp import web

#: URLs per child sitemap (the protocol allows 50,000; real sites split far earlier).
PER_FILE: Final = 2_500
#: The day the newest lastmod is on (fixed, so the charts do not move with the clock).
NEWEST: Final = date(2026, 11, 20)
#: One URL in this many has no lastmod; one in PRIVATE_EVERY is under /private/.
UNDATED_EVERY: Final = 7
PRIVATE_EVERY: Final = 6
FOREIGN_EVERY: Final = 997
FOREIGN_HOST: Final = "https://partner.example.net"
BROKEN: Final = "/sitemaps/broken.xml"
_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
)


class _Served:
    """A site served by one handler of every path."""

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._serve)
        return app

    async def _serve(self, request: web.Request) -> web.Response:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class BigSite(_Served):
    """The site (see the module docstring); ``urls`` counts the entries of the children."""

    urls: int = 24_507

    def files(self) -> int:
        """How many complete children the index lists (the broken one aside)."""
        return -(-self.urls // PER_FILE)

    def robots(self, base: str) -> str:
        """The robots.txt body."""
        return f"User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n"

    def index(self, base: str) -> str:
        """The index: every child with a lastmod, then the broken one."""
        rows = [
            f"<sitemap><loc>{base}/sitemaps/part-{n}.xml</loc>"
            f"<lastmod>{NEWEST - timedelta(days=n * 90)}</lastmod></sitemap>"
            for n in range(self.files())
        ]
        rows.append(f"<sitemap><loc>{base}{BROKEN}</loc></sitemap>")
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + "\n".join(rows)
            + "\n</sitemapindex>\n"
        )

    def part(self, base: str, n: int) -> str:
        """Child ``n``: URLs ``n * PER_FILE`` up to the next child's first."""
        first = n * PER_FILE
        last = min(self.urls, first + PER_FILE)
        return _OPEN + "".join(entry(base, i) for i in range(first, last)) + "</urlset>\n"

    def broken(self, base: str) -> str:
        """A urlset cut off in its third entry."""
        return _OPEN + entry(base, 0) + entry(base, 1) + f"<url><loc>{base}/cut"

    async def _serve(self, request: web.Request) -> web.Response:
        base = str(request.url.origin())
        path = request.path
        if path == "/robots.txt":
            return web.Response(text=self.robots(base), content_type="text/plain")
        if path == "/sitemap_index.xml":
            return _xml(self.index(base))
        if path == BROKEN:
            return _xml(self.broken(base))
        if path.startswith("/sitemaps/part-") and path.endswith(".xml"):
            number = path.removeprefix("/sitemaps/part-").removesuffix(".xml")
            if number.isdigit() and int(number) < self.files():
                return _xml(self.part(base, int(number)))
        return web.Response(status=404, text="not found")


def entry(base: str, i: int) -> str:
    """The ``<url>`` of URL number ``i``."""
    section = ("blog", "docs", "shop", "news")[i % 4]
    origin = FOREIGN_HOST if i % FOREIGN_EVERY == FOREIGN_EVERY - 1 else base
    folder = "private" if i % PRIVATE_EVERY == PRIVATE_EVERY - 1 else section
    loc = f"{origin}/{folder}/page-{i}"
    lastmod = ""
    if i % UNDATED_EVERY:
        day = NEWEST - timedelta(days=(i * 37) % 2900)
        lastmod = f"<lastmod>{day}</lastmod>"
    freq = {"blog": "weekly", "docs": "monthly", "shop": "daily", "news": "daily"}[section]
    prio = {"blog": "0.6", "docs": "0.5", "shop": "0.8", "news": "0.7"}[section]
    links = ""
    if section == "docs":
        links = "".join(
            f'<xhtml:link rel="alternate" hreflang="{lang}" href="{base}/{lang}/page-{i}"/>'
            for lang in ("en", "de", "fr")
        )
    return (
        f"<url><loc>{loc}</loc>{lastmod}<changefreq>{freq}</changefreq>"
        f"<priority>{prio}</priority>{links}</url>\n"
    )


def _xml(text: str) -> web.Response:
    return web.Response(text=text, content_type="application/xml")


class LongUrlSite(_Served):
    """A small site whose URL paths are ``letters`` long, on every place a report shows a
    URL: the sitemap's own URL (the tree, the findings, the freshness table), pages with
    lastmods and hreflang alternates, one listed again, one on another host, one that
    robots.txt disallows (the blocked examples)."""

    def __init__(self, letters: int = 1_500) -> None:
        self.path = "/" + "a" * letters

    def robots(self, base: str) -> str:
        """Disallow /private/; the one sitemap."""
        return f"User-agent: *\nDisallow: /private/\nSitemap: {base}{self.path}.xml\n"

    def sitemap(self, base: str) -> str:
        """The urlset (see the class docstring)."""
        long = base + self.path
        entries = [
            f"<url><loc>{long}{n}</loc><lastmod>2024-01-0{n + 1}</lastmod>"
            f'<xhtml:link rel="alternate" hreflang="de" href="{base}/de{self.path}{n}"/></url>'
            for n in range(3)
        ]
        entries.append(f"<url><loc>{long}0</loc></url>")
        entries.append(f"<url><loc>{FOREIGN_HOST}{self.path}</loc></url>")
        entries.append(f"<url><loc>{base}/private{self.path}</loc></url>")
        return _OPEN + "".join(entries) + "</urlset>\n"

    async def _serve(self, request: web.Request) -> web.Response:
        base = str(request.url.origin())
        if request.path == "/robots.txt":
            return web.Response(text=self.robots(base), content_type="text/plain")
        if request.path == self.path + ".xml":
            return _xml(self.sitemap(base))
        return web.Response(status=404)


@asynccontextmanager
async def serve(site: BigSite | LongUrlSite, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve ``site`` on a free port of ``host``; yields its origin."""
    runner = web.AppRunner(site.app())
    await runner.setup()
    tcp = web.TCPSite(runner, host, 0)
    await tcp.start()
    try:
        port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


if __name__ == "__main__":  # serve it by hand: python tests/big_site.py [URLS]
    import asyncio
    import sys

    async def _main() -> None:
        count = int(sys.argv[1]) if len(sys.argv) > 1 else 24_507
        async with serve(BigSite(count)) as base:
            print(base, flush=True)
            await asyncio.Event().wait()

    asyncio.run(_main())
