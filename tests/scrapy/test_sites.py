"""sitemap_reader.scrapy.sites: a target's own headers and proxy stay on its site, in real
Scrapy crawls (tests/scrapy/runner.py in a subprocess).

The target, ``http://site.test/``, is reached only through its own proxy: a loopback
server that answers the site's documents (robots.txt, an index, a redirect) and records
what it was asked with which header. The index lists a child on another host, and a
redirect hop leads there too; that host is another loopback server, named ``localhost``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.scrapy.test_scrapy import run_crawl
from tests.scrapy.testsite import ServerThread

_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
Seen = list[tuple[str, str | None]]


def _recorder(seen: Seen, documents: dict[str, str]) -> web.Application:
    """A server that records (path, X-Team) of each request and answers ``documents``
    (a redirect for a value starting with ``->``)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append((request.path, request.headers.get("X-Team")))
        body = documents.get(request.path)
        if body is None:
            return web.Response(text="<html>page</html>", content_type="text/html")
        if body.startswith("->"):
            raise web.HTTPFound(body[2:])
        return web.Response(text=body, content_type="application/xml")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


def _doc(kind: str, entry: str, *urls: str) -> str:
    items = "".join(f"<{entry}><loc>{url}</loc></{entry}>" for url in urls)
    return f'<?xml version="1.0"?>\n<{kind} {_NS}>{items}</{kind}>\n'


@pytest.fixture
def hosts() -> Iterator[tuple[str, Seen, Seen]]:
    """(the other host's base URL, what the proxy saw, what the other host saw)."""
    proxied: Seen = []
    direct: Seen = []
    other_docs = {
        "/child.xml": _doc("urlset", "url", "http://site.test/from-child"),
        "/hopped.xml": _doc("urlset", "url", "http://site.test/from-hop"),
    }
    with ServerThread(_recorder(direct, other_docs)) as other_origin:
        other = other_origin.replace("127.0.0.1", "localhost")
        site_docs = {
            "/robots.txt": "Sitemap: http://site.test/index.xml\n",
            "/index.xml": _doc(
                "sitemapindex", "sitemap", f"{other}/child.xml", "http://site.test/hop.xml"
            ),
            "/hop.xml": f"->{other}/hopped.xml",
        }
        with ServerThread(_recorder(proxied, site_docs)) as proxy:
            yield proxy, proxied, direct


@pytest.mark.parametrize("mode", ["mixin", "addon"])
def test_own_headers_and_proxy_stay_on_the_targets_site(
    mode: str, hosts: tuple[str, Seen, Seen], tmp_path: Path
) -> None:
    """SITEMAP_READER_PER_TARGET: the site's robots.txt, index and redirecting sitemap go
    through its proxy with its header; the child on another host and the redirect hop to
    it go direct, without the header."""
    proxy, proxied, direct = hosts
    own = {"http://site.test/": {"headers": {"X-Team": "first"}, "proxy": proxy}}
    options = ["--set", f"SITEMAP_READER_PER_TARGET={json.dumps(own)}"]
    options += ["--set", "SITEMAP_READER_ALLOW_PRIVATE=true", "--set", 'SITEMAP_READER_SCOPE="any"']
    crawl = run_crawl(
        mode,
        "http://site.test",
        tmp_path / "pages.jsonl",
        "--target",
        "http://site.test/",
        *options,
    )
    assert sorted(proxied) == [
        ("/hop.xml", "first"), ("/index.xml", "first"), ("/robots.txt", "first"),
    ], crawl.log[-3000:]  # fmt: skip
    sitemaps = [seen for seen in direct if seen[0].endswith(".xml")]
    assert sorted(sitemaps) == [("/child.xml", None), ("/hopped.xml", None)]


def test_a_cookie_one_targets_site_set_goes_to_no_other_target(tmp_path: Path) -> None:
    """public.example's robots.txt sets a cookie; internal.example's index lists a child on
    public.example, requested after: without that cookie (each target's sitemaps have a
    cookie jar of their own), while public.example's own sitemap carries it."""
    seen: list[tuple[str, str | None]] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append((request.path, request.headers.get("Cookie")))
        public = f"http://public.example:{request.url.port}"
        if request.path == "/robots.txt" and request.host.startswith("public.example"):
            text = f"Sitemap: {public}/own.xml\n"
            return web.Response(text=text, headers={"Set-Cookie": "sid=s3cret; Path=/"})
        docs = {
            "/own.xml": _doc("urlset", "url", f"{public}/page"),
            "/index.xml": _doc("sitemapindex", "sitemap", f"{public}/child.xml"),
            "/child.xml": _doc("urlset", "url", f"{public}/from-child"),
        }
        body = docs.get(request.path)
        if body is None:
            return web.Response(text="", status=404)
        return web.Response(text=body, content_type="application/xml")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    with ServerThread(app) as origin:
        port = origin.rsplit(":", 1)[1]
        first = f"http://public.example:{port}/"
        second = f"http://internal.example:{port}/index.xml"
        crawl = run_crawl(
            "mixin", first.rstrip("/"), tmp_path / "pages.jsonl", "--target", first,
            "--also", second, "--set", 'TWISTED_DNS_RESOLVER="tests.scrapy.fake_dns.FakeResolver"',
            "--set", "SITEMAP_READER_ALLOW_PRIVATE=true",
        )  # fmt: skip
    cookies = dict(seen)
    assert cookies["/own.xml"] == "sid=s3cret", crawl.log[-3000:]
    assert cookies["/child.xml"] is None
