"""The verdict benchmark (issue 42, point 4): a few hundred simulated domains on loopback,
each with a known truth, read by sitemap-reader and by its peers at their front doors.

One aiohttp server on 127.0.0.1 plays every domain (``dNNN.test``, told apart by the Host
header, its ``www.`` twin included) on one port; a TLS server with a certificate made
in-process plays the domains whose TLS fails; a bound port that never listens plays the
refused connections; names of the DNS failures resolve to nothing. sitemap-reader
resolves every name in-process (its ``resolver`` hook); the peers, which have no such
hook, send everything through the server as their HTTP proxy (absolute-form requests,
answered like the others). Nothing leaves loopback.

The behaviours follow the mix Apify measured on 500 domains (about 4 % blocked, 13 % without
sitemaps, 3 % DNS failures, a TLS and a 5xx failure each; the rest read), with at least one
domain of each kind, per 100 domains:

===================  ==  ===========  ====================================================
behaviour            n   truth        what the domain does
===================  ==  ===========  ====================================================
robots-only          22  ok           sitemaps listed only in robots.txt, at an odd path
well-known           22  ok           no Sitemap line; an index at /sitemap.xml (half),
                                      /sitemap_index.xml or /wp-sitemap.xml; a gzipped child
www-only              7  ok           the bare host has nothing; its www twin has it all
html-only             5  ok           only an HTML site map page linked from the home page
slow                  5  ok           every answer 0.3 s late
partial               3  partial      an index whose second child answers 500
empty                 2  empty        a urlset that lists nothing
absent                9  absent       404 everywhere
parked                3  absent       the same "for sale" page at every path, 200
<rule> x 10          10  blocked      every page a block page of one rule of
                                      :mod:`sitemap_reader.discovery.blocks` (Cloudflare
                                      challenge and block, Akamai, Imperva, DataDome,
                                      PerimeterX, AWS WAF, Sucuri, a CAPTCHA, a login
                                      redirect), the recorded shapes of their pages
fingerprint           3  blocked/ok   a Cloudflare challenge for clients without a browser's
                                      client hints (a stand-in, on plain HTTP, for a TLS
                                      fingerprint check), the robots-only site otherwise:
                                      ``blocked`` for aiohttp, ``ok`` for ``client=auto``
dns                   3  unreachable  the name does not resolve
tls                   1  unreachable  https with a certificate no client trusts
refused               1  unreachable  nothing listens on the port
robots-5xx            1  broken       robots.txt answers 500, every other path 404
storm-429             2  broken       every path 429 (Retry-After: 1), no block signature
bad-sitemap           1  broken       robots.txt lists a sitemap that is JSON
===================  ==  ===========  ====================================================

Sitemap bodies are shaped after ``../shared/realdata`` (the urlset files under 200 KB,
read in place, their origin rewritten to the domain's), or synthetic when that folder is
absent. ``refused`` and ``stopped`` are not simulated: the first needs our guard against a
public address (every address here is loopback, so the run allows private ones) and the
second is the run's own stop, not a site's.

Printed: per verdict, our precision and recall (``ours`` with ``client=aiohttp``, and with
``client=auto`` when the browser extra is installed), and for every reader the share of the
domains whose sitemaps a client can read (the ``ok``, ``partial`` and fingerprint-walled
domains) for which it found at least 99 % of the URLs. Each reader runs in its own process:
ours (``SitemapReader``, html="fallback"), usp (``sitemap_tree_for_homepage``), Scrapy's
``SitemapSpider`` (from each robots.txt), advertools (``sitemap_to_df`` on each
robots.txt) and Crawlee's ``SitemapRequestLoader`` (the sitemaps its ``RobotsTxtFile``
lists, else /sitemap.xml); a peer that is not installed is reported and skipped.

Run: ``.venv/bin/python benchmarks/verdicts.py [--domains 300] [--readers ours usp scrapy
advertools crawlee]``. The small version is ``tests/test_verdict_benchmark.py`` (make test).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import random
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

if __package__ in (None, ""):  # run as a script: the checkout importable, this folder not
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from tests.helpers import self_signed

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HTML = "text/html; charset=utf-8"

#: behaviour -> (domains per 100, truth with client=aiohttp, truth with client=auto).
MIX: dict[str, tuple[int, str, str]] = {
    "robots-only": (22, "ok", "ok"),
    "well-known": (22, "ok", "ok"),
    "www-only": (7, "ok", "ok"),
    "html-only": (5, "ok", "ok"),
    "slow": (5, "ok", "ok"),
    "partial": (3, "partial", "partial"),
    "empty": (2, "empty", "empty"),
    "absent": (9, "absent", "absent"),
    "parked": (3, "absent", "absent"),
    "cloudflare-challenge": (1, "blocked", "blocked"),
    "cloudflare-block": (1, "blocked", "blocked"),
    "akamai": (1, "blocked", "blocked"),
    "imperva": (1, "blocked", "blocked"),
    "datadome": (1, "blocked", "blocked"),
    "perimeterx": (1, "blocked", "blocked"),
    "aws-waf": (1, "blocked", "blocked"),
    "sucuri": (1, "blocked", "blocked"),
    "captcha": (1, "blocked", "blocked"),
    "login-redirect": (1, "blocked", "blocked"),
    "fingerprint": (3, "blocked", "ok"),
    "dns": (3, "unreachable", "unreachable"),
    "tls": (1, "unreachable", "unreachable"),
    "refused": (1, "unreachable", "unreachable"),
    "robots-5xx": (1, "broken", "broken"),
    "storm-429": (2, "broken", "broken"),
    "bad-sitemap": (1, "broken", "broken"),
}
#: Behaviours whose sitemaps some client can read (the denominator of "URLs found").
READABLE = frozenset(
    {"robots-only", "well-known", "www-only", "html-only", "slow", "partial", "fingerprint"}
)

#: A block page per rule: (status, headers, body), after each provider's own pages.
WALLS: dict[str, tuple[int, dict[str, str], str]] = {
    "cloudflare-challenge": (
        403,
        {"cf-mitigated": "challenge", "Server": "cloudflare"},
        "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
        "<script src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1'></script>",
    ),
    "cloudflare-block": (
        403,
        {"Server": "cloudflare", "Set-Cookie": "__cf_bm=abc; path=/; HttpOnly"},
        "<title>Attention Required! | Cloudflare</title><h1>Sorry, you have been blocked</h1>",
    ),
    "akamai": (
        403,
        {"Server": "AkamaiGHost"},
        "<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>"
        "You don't have permission to access this server.<P>Reference&#32;&#35;18.1a2b</BODY>",
    ),
    "imperva": (
        403,
        {"X-Iinfo": "12-3456789-0 NNNN RT(1700000000000 0)", "X-CDN": "Incapsula"},
        "<html><body><iframe src='/_Incapsula_Resource?SWUDNSAI=31'></iframe>"
        "Request unsuccessful. Incapsula incident ID: 1234-5678</body></html>",
    ),
    "datadome": (
        403,
        {"X-DataDome": "protected", "Set-Cookie": "datadome=xyz; Path=/"},
        "<html><script src='https://ct.captcha-delivery.com/c.js'></script></html>",
    ),
    "perimeterx": (
        403,
        {"Set-Cookie": "_pxhd=abc; path=/"},
        "<html><div id='px-captcha'></div><script>window._pxAppId='PXabc';</script></html>",
    ),
    "aws-waf": (
        405,
        {"x-amzn-waf-action": "captcha"},
        "<html><script src='https://x.token.awswaf.com/x/challenge.js'></script></html>",
    ),
    "sucuri": (
        403,
        {"X-Sucuri-ID": "11014", "Server": "Sucuri/Cloudproxy"},
        "<html><title>Sucuri WebSite Firewall - Access Denied</title></html>",
    ),
    "captcha": (
        429,
        {},
        "<html><body><div class='g-recaptcha' data-sitekey='k'></div>"
        "Please verify you are human</body></html>",
    ),
}


@dataclass
class Domain:
    """One simulated domain: its name, behaviour and the sitemaps' URLs (expected)."""

    name: str
    behaviour: str
    bodies: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    expected: int = 0

    def truth(self, client: str) -> str:
        _, plain, auto = MIX[self.behaviour]
        return auto if client == "auto" else plain


@dataclass
class World:
    """Every domain, and the ports that play them."""

    domains: list[Domain]
    port: int = 0
    tls_port: int = 0
    closed_port: int = 0

    def target(self, domain: Domain) -> str:
        if domain.behaviour == "tls":
            return f"https://{domain.name}:{self.tls_port}/"
        if domain.behaviour == "refused":
            return f"http://{domain.name}:{self.closed_port}/"
        return f"http://{domain.name}:{self.port}/"

    def home(self, domain: Domain) -> str:
        return self.target(domain)

    @property
    def missing(self) -> frozenset[str]:
        """The names that resolve to nothing."""
        return frozenset(d.name for d in self.domains if d.behaviour == "dns")


# --------------------------------------------------------------------------- the domains


def real_shapes(limit: int = 200_000) -> list[bytes]:
    """The realdata urlsets under ``limit`` bytes (read in place; none without the folder)."""
    manifest = REALDATA / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    shapes = []
    for line in manifest.read_text().splitlines()[1:]:
        name, *_, size, kind, _count, _notes = line.split("\t")
        if kind == "urlset" and int(size) < limit and not name.endswith(".gz"):
            shapes.append((REALDATA / "files" / name).read_bytes())
    return shapes


_ORIGIN = re.compile(rb"<loc>\s*(?:<!\[CDATA\[)?\s*(https?://[^/<\s\]]+)")
_LOC = re.compile(rb"<loc>\s*(?:<!\[CDATA\[)?\s*([^<\s\]]+)")


def shaped(base: str, shape: bytes | None, index: int) -> tuple[bytes, int]:
    """A urlset on ``base``: a real one with its origin rewritten, or synthetic; and how
    many distinct page URLs it lists on ``base``."""
    if shape is not None:
        found = _ORIGIN.search(shape)
        if found is not None:
            body = shape.replace(found.group(1), base.encode())
            locs = {m for m in _LOC.findall(body) if m.startswith(base.encode())}
            if locs:
                return body, len(locs)
    urls = [f"{base}/page/{index}/{i}" for i in range(20)]
    entries = "".join(f"<url><loc>{u}</loc><lastmod>2026-01-01</lastmod></url>" for u in urls)
    return f'<?xml version="1.0"?><urlset xmlns="{NS}">{entries}</urlset>'.encode(), len(urls)


def plan(count: int, seed: int = 42, *, port: int = 0) -> list[Domain]:
    """``count`` domains in the mix (at least one of each behaviour), in a shuffled order.
    ``port`` is the server's (the bodies name it)."""
    scale = count / 100
    kinds = [b for b, (n, _, _) in MIX.items() for _ in range(max(1, round(n * scale)))]
    rng = random.Random(seed)
    rng.shuffle(kinds)
    shapes = real_shapes()
    domains = []
    for number, behaviour in enumerate(kinds):
        domain = Domain(f"d{number:04d}.test", behaviour)
        shape = shapes[number % len(shapes)] if shapes else None
        fill(domain, port, shape, number)
        domains.append(domain)
    return domains


def fill(domain: Domain, port: int, shape: bytes | None, number: int) -> None:
    """The paths the domain answers (the rest: 404, or its behaviour's own answer)."""
    behaviour, bodies = domain.behaviour, domain.bodies
    host = f"www.{domain.name}" if behaviour == "www-only" else domain.name
    base = f"http://{host}:{port}"
    xml, text = "application/xml", "text/plain"
    if behaviour in ("robots-only", "slow", "fingerprint", "www-only"):
        body, domain.expected = shaped(base, shape, number)
        bodies[f"{host}/feeds/map-a.xml"] = (200, xml, body)
        robots = f"User-agent: *\nDisallow: /cart\nSitemap: {base}/feeds/map-a.xml\n"
        bodies[f"{host}/robots.txt"] = (200, text, robots.encode())
    elif behaviour == "well-known":
        body, domain.expected = shaped(base, shape, number)
        import gzip

        # Where the index lives: /sitemap.xml mostly, then Yoast's and WordPress core's.
        path = ("/sitemap.xml", "/sitemap.xml", "/sitemap_index.xml", "/wp-sitemap.xml")
        index = f'<sitemapindex xmlns="{NS}"><sitemap><loc>{base}/s1.xml.gz</loc></sitemap>'
        where = f"{host}{path[number % len(path)]}"
        bodies[where] = (200, xml, (index + "</sitemapindex>").encode())
        bodies[f"{host}/s1.xml.gz"] = (200, "application/gzip", gzip.compress(body, mtime=0))
        bodies[f"{host}/robots.txt"] = (200, text, b"User-agent: *\nDisallow:\n")
    elif behaviour == "html-only":
        links = [f"/guide/{number}/{i}" for i in range(12)]
        items = "".join(f"<li><a href='{p}'>Guide {i}</a></li>" for i, p in enumerate(links))
        nav = "<nav><a href='/'>Home</a><a href='/about'>About</a></nav>"
        home = f"<html><body>{nav}<main>Hi</main><footer><a href='/site-map'>Site map</a>"
        bodies[f"{host}/"] = (200, HTML, (home + "</footer></body></html>").encode())
        page = f"<html><body>{nav}<main><h1>Site map</h1><ul>{items}</ul></main></body></html>"
        bodies[f"{host}/site-map"] = (200, HTML, page.encode())
        domain.expected = len(links)
    elif behaviour in ("partial", "empty", "bad-sitemap"):
        robots = f"User-agent: *\nSitemap: {base}/sitemap.xml\n"
        bodies[f"{host}/robots.txt"] = (200, text, robots.encode())
        if behaviour == "partial":
            body, domain.expected = shaped(base, shape, number)
            children = "".join(f"<sitemap><loc>{base}/part-{i}.xml</loc></sitemap>" for i in (1, 2))
            index = f'<sitemapindex xmlns="{NS}">{children}</sitemapindex>'
            bodies[f"{host}/sitemap.xml"] = (200, xml, index.encode())
            bodies[f"{host}/part-1.xml"] = (200, xml, body)
            bodies[f"{host}/part-2.xml"] = (500, "text/html", b"<h1>Internal Server Error</h1>")
        elif behaviour == "empty":
            bodies[f"{host}/sitemap.xml"] = (200, xml, f'<urlset xmlns="{NS}"></urlset>'.encode())
        else:
            bodies[f"{host}/sitemap.xml"] = (200, xml, b'{"error": "not here"}')
    elif behaviour == "robots-5xx":
        bodies[f"{host}/robots.txt"] = (500, "text/html", b"<h1>500 Internal Server Error</h1>")


# --------------------------------------------------------------------------- the server


def application(world: World) -> web.Application:
    """One app for every domain: by Host header, then the behaviour's rule."""
    by_host = {}
    for domain in world.domains:
        by_host[domain.name] = domain
        by_host[f"www.{domain.name}"] = domain

    async def handle(request: web.Request) -> web.StreamResponse:
        host = (request.headers.get("Host") or "").rsplit(":", 1)[0].lower()
        domain = by_host.get(host)
        if domain is None:
            return web.Response(status=502, text="no such site")
        behaviour = domain.behaviour
        if behaviour == "slow":
            await asyncio.sleep(0.3)
        wall = behaviour if behaviour in WALLS else None
        if behaviour == "fingerprint" and "sec-ch-ua" not in request.headers:
            wall = "cloudflare-challenge"
        if wall is not None:
            status, headers, page = WALLS[wall]
            return web.Response(status=status, headers=headers, text=page, content_type="text/html")
        if behaviour == "login-redirect" and request.path != "/login":
            where = f"/login?next={request.path}"
            return web.Response(status=302, headers={"Location": where})
        if behaviour == "login-redirect":
            form = "<form method=post><input name=user><input type=password name=pw></form>"
            return web.Response(text=form, content_type="text/html")
        if behaviour == "storm-429":
            return web.Response(status=429, headers={"Retry-After": "1"}, text="Too Many Requests")
        if behaviour == "parked":
            page = f"<html><title>{host} is for sale</title><h1>This domain is parked</h1></html>"
            return web.Response(text=page, content_type="text/html")
        found = domain.bodies.get(f"{host}{request.path}")
        if found is None:
            return web.Response(status=404, text="Not Found", content_type="text/html")
        status, kind, body = found
        return web.Response(status=status, body=body, headers={"Content-Type": kind})

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app


def tls_context() -> ssl.SSLContext:
    """A server context with a self-signed certificate made here (no client trusts it)."""
    return self_signed(Path(tempfile.mkdtemp(prefix="verdicts-tls-")))


@contextlib.contextmanager
def served(count: int, seed: int = 42) -> Iterator[World]:
    """The world's servers on 127.0.0.1, from a thread of their own (a context manager)."""
    plain = socket.create_server(("127.0.0.1", 0))
    secure = socket.create_server(("127.0.0.1", 0))
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    world = World(plan(count, seed, port=plain.getsockname()[1]))
    world.port, world.tls_port = plain.getsockname()[1], secure.getsockname()[1]
    world.closed_port = closed.getsockname()[1]
    ready, stop = threading.Event(), threading.Event()
    box: dict[str, Any] = {}

    async def serve() -> None:
        runner = web.AppRunner(application(world), access_log=None)
        await runner.setup()
        await web.SockSite(runner, plain).start()
        await web.SockSite(runner, secure, ssl_context=tls_context()).start()
        box["loop"] = asyncio.get_running_loop()
        box["done"] = asyncio.Event()
        ready.set()
        try:
            await box["done"].wait()
        finally:
            await runner.cleanup()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    ready.wait(30)
    try:
        yield world
    finally:
        stop.set()
        box["loop"].call_soon_threadsafe(box["done"].set)
        thread.join(30)
        closed.close()


class WorldResolver(AbstractResolver):
    """Every name to 127.0.0.1 (the port as asked), but the DNS failures' to nothing."""

    def __init__(self, missing: frozenset[str]) -> None:
        self.missing = missing

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        name = host.lower().removeprefix("www.")
        if name in self.missing:
            raise OSError(socket.EAI_NONAME, f"{host}: name not known")
        return [
            {
                "hostname": host,
                "host": "127.0.0.1",
                "port": port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": 0,
            }
        ]

    async def close(self) -> None:
        return None


# --------------------------------------------------------------------------- the readers


def host_counts(urls: list[str]) -> dict[str, int]:
    """Distinct URLs per domain (a www twin's counted with its domain)."""
    seen: dict[str, set[str]] = {}
    for url in urls:
        host = url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0].lower()
        seen.setdefault(host.removeprefix("www."), set()).add(url)
    return {host: len(found) for host, found in seen.items()}


async def read_ours(
    world: World, client: Literal["aiohttp", "browser", "auto"]
) -> tuple[dict[str, str], dict[str, int]]:
    """sitemap-reader over every domain in one run: each target's verdict (by domain) and
    the URLs it found per domain."""
    from sitemap_reader import SitemapReader
    from sitemap_reader.errors import DiscoveryError

    targets = {world.target(d): d.name for d in world.domains}
    urls: list[str] = []
    reader = SitemapReader(
        resolver=WorldResolver(world.missing),
        allow_private=True,
        html="fallback",
        client=client,
        retries=1,
        backoff_base=0.05,
        max_retry_after=2.0,
        connect_timeout=3.0,
        read_timeout=10.0,
        timeout=20.0,
        scope="site",
    )
    async with reader:
        with contextlib.suppress(DiscoveryError):
            async for batch in reader.batches(list(targets)):
                urls.extend(r.url for r in batch)
        run = reader.last_run
    assert run is not None
    verdicts: dict[str, str] = {targets[t]: v.kind for t, v in run.verdicts.items()}
    return verdicts, host_counts(urls)


def read_usp(world: World) -> dict[str, int]:
    import logging

    from usp.tree import sitemap_tree_for_homepage

    logging.disable(logging.CRITICAL)
    urls: list[str] = []
    for domain in world.domains:
        with contextlib.suppress(Exception):
            tree = sitemap_tree_for_homepage(world.home(domain))
            urls.extend(page.url for page in tree.all_pages())
    return host_counts(urls)


def read_advertools(world: World) -> dict[str, int]:
    import logging

    import advertools

    logging.disable(logging.CRITICAL)
    urls: list[str] = []
    for domain in world.domains:
        with contextlib.suppress(Exception):
            frame = advertools.sitemap_to_df(world.home(domain) + "robots.txt")
            if "loc" in frame:
                urls.extend(str(u) for u in frame["loc"].dropna())
    return host_counts(urls)


def read_scrapy(world: World) -> dict[str, int]:
    from collections.abc import Iterable

    from scrapy.crawler import CrawlerProcess
    from scrapy.spiders import SitemapSpider

    urls: list[str] = []

    class Counting(SitemapSpider):
        name = "verdicts"
        sitemap_urls = [world.home(d) + "robots.txt" for d in world.domains]  # noqa: RUF012

        def sitemap_filter(self, entries: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
            if getattr(entries, "type", None) != "urlset":
                yield from entries
                return
            urls.extend(entry["loc"] for entry in entries)

    settings = {
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "RETRY_TIMES": 1,
        "DOWNLOAD_TIMEOUT": 20,
    }
    process = CrawlerProcess(settings=settings)
    process.crawl(Counting)
    process.start()
    return host_counts(urls)


def read_crawlee(world: World) -> dict[str, int]:
    """Crawlee's own loader: the sitemaps robots.txt lists (its RobotsTxtFile), else
    /sitemap.xml, each site through its SitemapRequestLoader."""
    from crawlee._utils.robots import RobotsTxtFile
    from crawlee.http_clients import CurlImpersonateHttpClient
    from crawlee.proxy_configuration import ProxyInfo
    from crawlee.request_loaders import SitemapRequestLoader

    proxy = ProxyInfo(
        url=f"http://127.0.0.1:{world.port}", scheme="http", hostname="127.0.0.1", port=world.port
    )
    urls: list[str] = []

    async def one(client: Any, home: str) -> None:
        robots = await RobotsTxtFile.find(home, client, proxy_info=proxy)
        sitemaps = robots.get_sitemaps(enqueue_strategy="all") or [home + "sitemap.xml"]
        loader = SitemapRequestLoader(sitemaps, client, proxy_info=proxy, enqueue_strategy="all")
        while not await loader.is_finished():
            request = await loader.fetch_next_request()
            if request is None:
                await asyncio.sleep(0.01)
                continue
            urls.append(request.url)
            await loader.mark_request_as_handled(request)

    async def main() -> None:
        client = CurlImpersonateHttpClient()
        for domain in world.domains:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(one(client, world.home(domain)), 60)

    asyncio.run(main())
    return host_counts(urls)


PEERS = {
    "usp": ("usp", read_usp),
    "scrapy": ("scrapy", read_scrapy),
    "advertools": ("advertools", read_advertools),
    "crawlee": ("crawlee", read_crawlee),
}


# --------------------------------------------------------------------------- the scores


@dataclass
class Scores:
    """Per verdict kind: precision and recall; and the share of readable domains found."""

    precision: dict[str, float]
    recall: dict[str, float]
    support: dict[str, int]
    found: float


def score(
    world: World, client: str, verdicts: dict[str, str] | None, counts: dict[str, int]
) -> Scores:
    """Precision and recall per truth kind (when the reader gives verdicts) and the share
    of readable domains for which it found at least 99 % of the URLs."""
    precision: dict[str, float] = {}
    recall: dict[str, float] = {}
    support: Counter[str] = Counter()
    if verdicts is not None:
        pairs = [(d.truth(client), verdicts.get(d.name, "missing")) for d in world.domains]
        kinds = sorted({t for t, _ in pairs} | {v for _, v in pairs})
        for kind in kinds:
            said = sum(1 for _, v in pairs if v == kind)
            true = sum(1 for t, _ in pairs if t == kind)
            right = sum(1 for t, v in pairs if t == v == kind)
            support[kind] = true
            precision[kind] = right / said if said else 1.0
            recall[kind] = right / true if true else 1.0
    readable = [d for d in world.domains if d.behaviour in READABLE and d.expected]
    hits = sum(1 for d in readable if counts.get(d.name, 0) >= 0.99 * d.expected)
    return Scores(precision, recall, dict(support), hits / len(readable) if readable else 1.0)


def misses(world: World, client: str, verdicts: dict[str, str]) -> list[str]:
    """The domains whose verdict is not their truth (for reading the table)."""
    return [
        f"{d.name} {d.behaviour}: {verdicts.get(d.name)} (truth {d.truth(client)})"
        for d in world.domains
        if verdicts.get(d.name) != d.truth(client)
    ]


# --------------------------------------------------------------------------- the driver


def worker(reader: str, count: int, seed: int, port: int, tls: int, closed: int) -> None:
    """One reader in this process against the world served by the parent: a JSON line."""
    world = World(plan(count, seed, port=port), port, tls, closed)
    started = time.perf_counter()
    if reader.startswith("ours"):
        client = cast(Literal["aiohttp", "auto"], reader.split(":", 1)[1])
        verdicts, counts = asyncio.run(read_ours(world, client))
        out: dict[str, Any] = {"verdicts": verdicts, "counts": counts}
    else:
        out = {"verdicts": None, "counts": PEERS[reader][1](world)}
    out["seconds"] = time.perf_counter() - started
    print(json.dumps(out))


def run_reader(reader: str, world: World, count: int, seed: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--work", reader, "--domains", str(count)]
    command += ["--seed", str(seed), "--ports", str(world.port), str(world.tls_port)]
    command += [str(world.closed_port)]
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    if not reader.startswith("ours"):  # the peers resolve nothing: the server is their proxy
        proxy = f"http://127.0.0.1:{world.port}"
        for key in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
            env[key] = proxy  # https too: no made-up name ever reaches the system resolver
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=env, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        return {"error": f"exit code {done.returncode}"}
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def table(world: World, results: dict[str, dict[str, Any]]) -> str:
    """The markdown tables: verdicts (ours), then URLs found (every reader)."""
    lines = []
    for name, report in results.items():
        if not name.startswith("ours") or "error" in report:
            continue
        client = name.split(":", 1)[1]
        scores = score(world, client, report["verdicts"], report["counts"])
        lines += [
            f"**ours, client={client}** ({len(world.domains)} domains, {report['seconds']:.0f} s)",
            "",
            "| verdict | domains | precision | recall |",
            "| --- | --- | --- | --- |",
        ]
        for kind in sorted(scores.support, key=lambda k: -scores.support[k]):
            if scores.support[kind] or scores.precision[kind] < 1:
                lines.append(
                    f"| {kind} | {scores.support[kind]} | {scores.precision[kind]:.3f} "
                    f"| {scores.recall[kind]:.3f} |"
                )
        lines.append("")
    lines += [
        "| reader | readable domains whose URLs it found (>= 99 %) | seconds |",
        "| --- | --- | --- |",
    ]
    for name, report in results.items():
        if "error" in report:
            lines.append(f"| {name} | failed: {report['error']} | |")
            continue
        client = name.split(":", 1)[1] if ":" in name else "aiohttp"
        scores = score(world, client, None, report["counts"])
        lines.append(f"| {name} | {scores.found:.1%} | {report['seconds']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", type=int, default=300)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--readers", nargs="+", default=["ours", "usp", "scrapy", "advertools", "crawlee"]
    )
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--ports", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.work:
        worker(args.work, args.domains, args.seed, *args.ports)
        return
    readers = []
    for reader in args.readers:
        if reader == "ours":
            readers.append("ours:aiohttp")
            if importlib.util.find_spec("curl_cffi") is not None:
                readers.append("ours:auto")
            else:
                print("ours:auto skipped: the browser extra is not installed", file=sys.stderr)
        elif importlib.util.find_spec(PEERS[reader][0]) is None:
            print(f"{reader} skipped: not installed (pip install -e '.[bench]')", file=sys.stderr)
        else:
            readers.append(reader)
    with served(args.domains, args.seed) as world:
        results = {}
        for reader in readers:
            results[reader] = run_reader(reader, world, args.domains, args.seed)
            print(f"  {reader}: done", file=sys.stderr, flush=True)
            report = results[reader]
            if reader.startswith("ours") and "verdicts" in report:
                client = reader.split(":", 1)[1]
                for line in misses(world, client, report["verdicts"]):
                    print(f"    miss: {line}", file=sys.stderr)
    print(table(world, results))


if __name__ == "__main__":
    main()
