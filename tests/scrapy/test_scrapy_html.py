"""Scrapy and the HTML way in: a real crawl (runner.py) of a site whose only sitemap is an
HTML page, with SITEMAP_READER_HTML on; the settings of the other ways in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from scrapy.settings import Settings

from sitemap_reader.scrapy import options_from_settings
from tests.scrapy.test_scrapy import run_crawl
from tests.scrapy.testsite import ServerThread

PAGES = ("/produits/p1", "/produits/p2", "/blog/bonjour")


def html_only_app() -> web.Application:
    """No robots.txt, no XML sitemap: a home page whose footer links /plan-du-site."""
    footer = (
        "<footer><a href='/contact'>Contact</a><a href='/plan-du-site'>Plan du site</a></footer>"
    )
    listing = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in PAGES)
    bodies = {
        "/": f"<!doctype html><html><body><p>Bienvenue</p>{footer}</body></html>",
        "/plan-du-site": f"<!doctype html><html><body><ul>{listing}</ul>{footer}</body></html>",
        **dict.fromkeys(PAGES, "<!doctype html><p>page</p>"),
    }

    async def handle(request: web.Request) -> web.StreamResponse:
        body = bodies.get(request.path)
        if body is None:
            return web.Response(status=404, text="not found")
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The HTML-only site, served from a thread."""
    with ServerThread(html_only_app()) as origin:
        yield origin


def test_scrapy_crawls_the_pages_of_an_html_sitemap(base: str, tmp_path: Path) -> None:
    """SITEMAP_READER_HTML=true: the pages the HTML sitemap lists are crawled, each once,
    with source "html" in meta; the footer navigation is not."""
    crawl = run_crawl(
        "middleware", base, tmp_path / "pages.jsonl", "--set", "SITEMAP_READER_HTML=true"
    )
    assert sorted(crawl.paths) == sorted(PAGES)
    assert {page["meta"]["source"] for page in crawl.pages} == {"html"}
    assert {page["meta"]["sitemap"] for page in crawl.pages} == {base + "/plan-du-site"}


def test_settings_of_the_ways_in() -> None:
    """SITEMAP_READER_HTML (bool or "always"), _PARENT, _FOLLOW_URLSET_SITEMAPS reach the core."""
    walk = options_from_settings(
        Settings({"SITEMAP_READER_HTML": "always", "SITEMAP_READER_PARENT": True})
    )[0].walk
    assert (walk.html, walk.parent, walk.follow_urlset_sitemaps) == ("always", True, False)
    walk = options_from_settings(
        Settings({"SITEMAP_READER_HTML": "1", "SITEMAP_READER_FOLLOW_URLSET_SITEMAPS": "1"})
    )[0].walk
    assert (walk.html, walk.parent, walk.follow_urlset_sitemaps) == ("fallback", False, True)
    assert options_from_settings(Settings())[0].walk.html is None
