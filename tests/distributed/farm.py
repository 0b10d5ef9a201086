"""A farm of loopback sites for the distributed tests and the benchmark.

Every site has its own port on 127.0.0.1 (so its own host:port, as distinct domains
would), served by one aiohttp application in a daemon thread. A site publishes
``/robots.txt`` -> ``/sitemap_index.xml`` -> ``children`` urlsets of ``per_child`` URLs
each. Kinds: ``ok``; ``broken`` (every path 404: nothing to discover, every time);
``gated`` (its last child sends half its body and then waits until the test opens the
gate, so a worker can be caught holding it). With ``hold_robots`` every robots.txt waits
for the gate too (so workers can be made to meet before any of them gets far, whatever
the machine's speed). Hits are counted per (port, path).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass

from aiohttp import web

from tests.loopback_server import LoopbackServer, listen

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@dataclass(frozen=True, slots=True)
class SiteSpec:
    """One site of the farm."""

    port: int
    kind: str = "ok"

    @property
    def target(self) -> str:
        """The target string that names the site."""
        return f"http://127.0.0.1:{self.port}/"


class Farm(LoopbackServer):
    """``count`` sites (a context manager); ``kinds`` gives the kind of some of them."""

    def __init__(
        self,
        count: int,
        *,
        children: int = 2,
        per_child: int = 50,
        kinds: dict[int, str] | None = None,
        hold_robots: bool = False,
    ) -> None:
        self.children = children
        self.hold_robots = hold_robots
        self.per_child = per_child
        self.hits: Counter[tuple[int, str]] = Counter()
        self._bodies: dict[tuple[str, int], str] = {}
        self.gate_reached = threading.Event()
        super().__init__([listen() for _ in range(count)])
        self.sites = [
            SiteSpec(s.getsockname()[1], (kinds or {}).get(i, "ok"))
            for i, s in enumerate(self._sockets)
        ]
        self._kind = {site.port: site.kind for site in self.sites}

    def expected_urls(self, site: SiteSpec) -> set[str]:
        """Every page URL the site lists."""
        base = site.target.rstrip("/")
        return {f"{base}/page/{c}/{i}" for c in range(self.children) for i in range(self.per_child)}

    def fetches_per_site(self) -> int:
        """Requests one complete read of an ``ok`` site makes: robots, index, children."""
        return 2 + self.children

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        port = request.url.port or 0
        path = request.path
        self.hits[port, path] += 1
        kind = self._kind.get(port, "broken")
        if kind == "broken":
            return web.Response(status=404)
        base = f"http://127.0.0.1:{port}"
        if path == "/robots.txt":
            if self.hold_robots:
                assert self._gate is not None
                await self._gate.wait()
            return web.Response(text=f"User-agent: *\nSitemap: {base}/sitemap_index.xml\n")
        if path == "/sitemap_index.xml":
            locs = "".join(
                f"<sitemap><loc>{base}/s{c}.xml</loc></sitemap>" for c in range(self.children)
            )
            return _xml(f'<sitemapindex xmlns="{NS}">{locs}</sitemapindex>')
        for c in range(self.children):
            if path == f"/s{c}.xml":
                body = self._urlset(base, c)
                if kind == "gated" and c == self.children - 1:
                    return await self._gated(request, body)
                return _xml(body)
        return web.Response(status=404)

    def _urlset(self, base: str, child: int) -> str:
        key = (base, child)
        if key not in self._bodies:
            self._bodies[key] = self._make_urlset(base, child)
        return self._bodies[key]

    def _make_urlset(self, base: str, child: int) -> str:
        entries = "".join(
            f"<url><loc>{base}/page/{child}/{i}</loc><lastmod>2024-01-02</lastmod></url>"
            for i in range(self.per_child)
        )
        return f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">{entries}</urlset>\n'

    async def _gated(self, request: web.Request, body: str) -> web.StreamResponse:
        data = body.encode()
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        await response.write(data[: len(data) // 2])
        self.gate_reached.set()
        assert self._gate is not None
        await self._gate.wait()
        try:
            await response.write(data[len(data) // 2 :])
            await response.write_eof()
        except ConnectionError:  # the reader was killed while it waited
            pass
        return response


def _xml(text: str) -> web.Response:
    return web.Response(text=text, content_type="application/xml")
