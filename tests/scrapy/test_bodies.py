"""A plain sitemap named and served like a gzip (issue 35.4c), crawled by Scrapy and by the
command: a ``.gz`` name, a gzip type, ``Content-Encoding: gzip`` over plain bytes (the way
go-sitemap-parser's test server serves its files). Every reader reads it as text."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.conftest_cli import run_cli
from tests.scrapy.test_scrapy import run_crawl
from tests.scrapy.testsite import ServerThread

_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
_GZIP_TYPE = {"Content-Type": "application/x-gzip"}
_LABELLED = {**_GZIP_TYPE, "Content-Encoding": "gzip"}
#: path -> (body template, headers, gzipped): the plain ones are labelled gzip all the same.
DOCS: dict[str, tuple[str, dict[str, str], bool]] = {
    "/robots.txt": (
        "Sitemap: {base}/plain.xml.gz\nSitemap: {base}/plain.txt.gz\n"
        "Sitemap: {base}/typed.xml.gz\nSitemap: {base}/real.xml.gz\n",
        {"Content-Type": "text/plain"},
        False,
    ),
    "/plain.xml.gz": (
        f'<?xml version="1.0"?><urlset {_NS}><url><loc>{{base}}/p/xml</loc></url></urlset>',
        _LABELLED,
        False,
    ),
    "/plain.txt.gz": ("{base}/p/txt\n", _LABELLED, False),
    "/typed.xml.gz": (
        f"<urlset {_NS}><url><loc>{{base}}/p/typed</loc></url></urlset>",
        _GZIP_TYPE,
        False,
    ),
    "/real.xml.gz": (
        f"<urlset {_NS}><url><loc>{{base}}/p/real</loc></url></urlset>",
        _LABELLED,
        True,
    ),
}
PAGES = {"/p/xml", "/p/txt", "/p/typed", "/p/real"}


async def _handle(request: web.Request) -> web.Response:
    doc = DOCS.get(request.path)
    if doc is None:
        return web.Response(text="a page", content_type="text/html")
    template, headers, gzipped = doc
    body = template.replace("{base}", str(request.url.origin())).encode()
    return web.Response(body=gzip.compress(body, mtime=0) if gzipped else body, headers=headers)


def _app() -> web.Application:
    app = web.Application()
    app.router.add_get("/{tail:.*}", _handle)
    return app


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The site, served from a thread."""
    with ServerThread(_app()) as origin:
        yield origin


@pytest.mark.parametrize("mode", ["mixin", "addon"])
def test_scrapy_reads_a_plain_body_labelled_gzip(mode: str, base: str, tmp_path: Path) -> None:
    """Scrapy: the plain bodies with Content-Encoding: gzip give their pages (they failed
    with BadGzipFile in HttpCompressionMiddleware before), the real gzip one still does."""
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl")
    assert set(crawl.paths) == PAGES, crawl.log[-2000:]
    assert "BadGzipFile" not in crawl.log


async def test_command_reads_a_plain_body_labelled_gzip(base: str) -> None:
    """The command (aiohttp engine) reads the same site the same way."""
    result = await run_cli("dump", base + "/", "--format", "txt")
    assert result.code == 0, result.err
    assert {url.removeprefix(base) for url in result.out.split()} == PAGES
