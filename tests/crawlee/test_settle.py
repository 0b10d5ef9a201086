"""The Crawlee loader settles as Crawlee does (issue 41 class 5, issue 46 item 3): finished
only once discovery is over and every record settled, and a page Crawlee gave up on is
fetched as often as Crawlee's own loader fetches it; per_target and a follow function reach it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from crawlee import ConcurrencySettings
from crawlee.crawlers import HttpCrawler, HttpCrawlingContext
from crawlee.storages import RequestQueue

from sitemap_reader.crawlee import SitemapRequestLoader
from tests.crawl.crawl_kit import FAST, Site, start, urlset
from tests.loader.test_per_target import keyed_site


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """One scripted site on 127.0.0.1."""
    served = Site()
    server = await start(served)
    yield served
    await server.close()


def crawler_for(loader_manager: object, seen: list[str]) -> HttpCrawler:
    """An HttpCrawler of 4 tasks noting each page it handled."""
    crawler = HttpCrawler(
        request_manager=loader_manager,  # type: ignore[arg-type]
        concurrency_settings=ConcurrencySettings(max_concurrency=4, desired_concurrency=4),
        configure_logging=False,
    )

    @crawler.router.default_handler
    async def handler(context: HttpCrawlingContext) -> None:
        seen.append(context.request.url)

    return crawler


async def test_sitemaps_slower_than_the_first_page(site: Site, tmp_path: Path) -> None:
    """The crawl starts with a page of its own; the sitemap answers only once that page
    was handled: every sitemap page is still crawled, once, and run() returns normally
    (before: the loader closed itself early, and the next fetch broke the crawl)."""
    pages = [site.url(f"/p/{n}") for n in range(5)]
    handled_first = asyncio.Event()

    async def sitemap(request: web.Request) -> web.Response:
        await handled_first.wait()
        return web.Response(body=urlset(pages), content_type="application/xml")

    site.add("/robots.txt", "Sitemap: /s.xml\n", content_type="text/plain")
    site.add("/s.xml", sitemap)
    site.add("*", "<html><body>page</body></html>", content_type="text/html")
    seen: list[str] = []
    loader = SitemapRequestLoader(site.base, progress=tmp_path / "p.db", allow_private=True)
    # A queue of this test's own: Crawlee keeps its default one across event loops.
    queue = await RequestQueue.open(name=f"q{uuid.uuid4().hex}")
    crawler = crawler_for(await loader.to_tandem(queue), seen)

    @crawler.router.handler("first")
    async def first(context: HttpCrawlingContext) -> None:
        seen.append(context.request.url)
        handled_first.set()

    from crawlee import Request

    await crawler.run([Request.from_url(site.url("/first"), label="first")])
    assert sorted(seen) == sorted([site.url("/first"), *pages])
    assert loader.loader.finished and loader.loader.handled == 5
    assert await loader.is_finished() and await loader.is_empty()


async def test_a_404_page_is_fetched_once(site: Site, tmp_path: Path) -> None:
    """20 pages answer 404: Crawlee gives each up at once, and so does the loader: each is
    requested once (before: three times, handed out again until max_tries), counted as
    failed, never handed out again."""
    pages = [site.url(f"/gone/{n}") for n in range(20)] + [site.url("/ok")]
    site.add("/robots.txt", "Sitemap: /s.xml\n", content_type="text/plain")
    site.add("/s.xml", urlset(pages))
    site.add("/ok", "<html><body>ok</body></html>", content_type="text/html")
    seen: list[str] = []
    async with SitemapRequestLoader(
        site.base, progress=tmp_path / "p.db", allow_private=True
    ) as loader:
        queue = await RequestQueue.open(name=f"q{uuid.uuid4().hex}")
        await crawler_for(await loader.to_tandem(queue), seen).run()
        assert (loader.loader.handled, loader.loader.failed) == (1, 20)
    gone = {path: n for path, n in site.hits.items() if path.startswith("/gone/")}
    assert len(gone) == 20 and set(gone.values()) == {1}, gone
    assert seen == [site.url("/ok")]


async def test_the_crawlee_loader_carries_per_target_and_a_follow_function(
    site: Site, tmp_path: Path
) -> None:
    """per_target headers and a follow function through the Crawlee loader, in a real
    crawl: only /keep.xml's pages, /skip.xml never fetched."""
    pages = keyed_site(site)
    site.add("*", "<html><body>page</body></html>", content_type="text/html")
    seen: list[str] = []
    async with SitemapRequestLoader(
        site.base, progress=tmp_path / "p.db", allow_private=True, options=FAST,
        per_target={site.base: {"headers": {"X-Key": "1"}}},
        follow=lambda url: url.endswith("/keep.xml"),
    ) as loader:  # fmt: skip
        queue = await RequestQueue.open(name=f"q{uuid.uuid4().hex}")
        crawler = HttpCrawler(
            request_manager=await loader.to_tandem(queue), configure_logging=False
        )

        @crawler.router.default_handler
        async def handler(context: HttpCrawlingContext) -> None:
            seen.append(context.request.url)

        await crawler.run()
    assert sorted(seen) == pages
    assert site.hits["/skip.xml"] == 0
