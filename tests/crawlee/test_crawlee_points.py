"""sitemap_reader.crawlee and issue 32: never silent, Crawlee's identity of a page,
record_of; real HttpCrawler crawls of loopback sites."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from crawlee import ConcurrencySettings, Request
from crawlee.crawlers import HttpCrawler, HttpCrawlingContext

import sitemap_reader as sr
from sitemap_reader import demo
from sitemap_reader.crawlee import RECORD_KEY, SitemapRequestLoader, record_of
from sitemap_reader.errors import UsageError
from sitemap_reader.records import UrlRecord
from tests.crawl.crawl_kit import FAST, Site, start, urlset
from tests.loader.conftest import MakeSite
from tests.loader.kill_kit import dead_target

#: Paths a sitemap lists that Crawlee keys as three pages (case and trailing slash;
#: query order; a utm_ parameter), and a page that always fails.
TWINS = ("/m/Page/", "/m/page", "/m/q?b=1&a=2", "/m/q?a=2&b=1", "/m/r?utm_source=x", "/m/r")
BROKEN = "/m/broken"


def crawler(manager: object, seen: list[UrlRecord], retries: int = 3) -> HttpCrawler:
    """An HttpCrawler that notes each page's typed record."""
    crawl = HttpCrawler(
        request_manager=manager,  # type: ignore[arg-type]
        concurrency_settings=ConcurrencySettings(max_concurrency=4, desired_concurrency=4),
        max_request_retries=retries,
        configure_logging=False,
    )

    @crawl.router.default_handler
    async def page(context: HttpCrawlingContext) -> None:
        seen.append(record_of(context.request))

    return crawl


@pytest.fixture
async def twins_site() -> AsyncIterator[Callable[[], Awaitable[Site]]]:
    """A site whose one sitemap lists TWINS and BROKEN; pages answer HTML (BROKEN: 500)."""
    servers: list[TestServer] = []

    async def make() -> Site:
        site = Site()
        servers.append(await start(site))
        site.add("/robots.txt", f"Sitemap: {site.url('/s.xml')}\n", content_type="text/plain")
        site.add("/s.xml", urlset(site.url(p) for p in (*TWINS, BROKEN)))

        async def page(request: web.Request) -> web.Response:
            if request.path == BROKEN:
                return web.Response(status=500, text="down")
            return web.Response(text="<html><title>p</title></html>", content_type="text/html")

        for path in {p.split("?")[0] for p in TWINS} | {BROKEN}:
            site.add(path, page)
        return site

    yield make
    for server in servers:
        await server.close()


async def test_without_async_with_the_crawl_runs_and_closes(tmp_path: Path) -> None:
    """A loader handed to HttpCrawler with no async with (as Crawlee's own is): every demo
    page crawled once, each acknowledged; the loader closes itself at the end."""
    seen: list[UrlRecord] = []
    async with demo.serve() as base:
        loader = SitemapRequestLoader(base + "/", progress=tmp_path / "p.db")
        await crawler(await loader.to_tandem(), seen).run()
    assert sorted(r.url for r in seen) == sorted(demo.expected_urls(base))
    assert loader.loader.closed and loader.loader.handled == len(seen)
    again = SitemapRequestLoader(base + "/", progress=tmp_path / "p.db")
    assert await again.fetch_next_request() is None and again.loader.already_finished


async def test_every_target_dead_fails_the_crawl_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An unreachable target: crawler.run() raises DiscoveryError naming it with its
    attempts; no 'retrying (1/3)' line is logged; with or without async with."""
    caplog.set_level(logging.INFO)
    for enter in (False, True):
        dead = dead_target()
        loader = SitemapRequestLoader(dead, progress=tmp_path / f"{enter}.db", options=FAST)
        if enter:
            await loader.__aenter__()
        with pytest.raises(sr.DiscoveryError, match=r"\(3 attempts\)") as caught:
            await crawler(await loader.to_tandem(), []).run()
        assert dead in str(caught.value)
        await loader.close()
    assert not [r for r in caplog.records if "retrying (" in r.getMessage()]


async def test_a_dead_target_beside_a_live_one_is_one_error_line(
    make_site: MakeSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A dead target beside a live site: the site's pages are crawled, the dead target
    is one error line naming it (with the attempt count), and run() returns."""
    site = await make_site(1, 6)
    dead = dead_target()
    caplog.set_level(logging.INFO)
    seen: list[UrlRecord] = []
    loader = SitemapRequestLoader([site.base, dead], progress=tmp_path / "p.db", options=FAST)
    await crawler(await loader.to_tandem(), seen).run()
    assert {r.url for r in seen} == site.page_urls()
    (line,) = [r for r in caplog.records if dead in r.getMessage() and r.levelno > logging.INFO]
    assert line.levelno == logging.ERROR and "(3 attempts)" in line.getMessage()
    assert loader.loader.verdicts[dead].kind == "unreachable"


async def test_records_crawlee_merges_ride_on_one_request(
    twins_site: Callable[[], Awaitable[Site]], tmp_path: Path
) -> None:
    """Records Crawlee keys as one page, handed out while that page is in flight, ride on
    its request: three requests for six records, and handling them acknowledges all six."""
    site = await twins_site()
    loader = SitemapRequestLoader(site.base, progress=tmp_path / "p.db", options=FAST)
    requests: list[Request] = []
    while len(requests) < 4 and (request := await loader.fetch_next_request()) is not None:
        requests.append(request)
    assert sorted(r.unique_key.removeprefix(site.base) for r in requests) == [
        "/m/broken", "/m/page", "/m/q?a=2&b=1", "/m/r",
    ]  # fmt: skip
    for request in requests:
        await loader.mark_request_as_handled(request)
    assert await loader.fetch_next_request() is None
    assert loader.loader.handled == 7 and await loader.is_finished()


async def test_a_crawl_acknowledges_merged_records_and_fails_given_up_ones(
    twins_site: Callable[[], Awaitable[Site]], tmp_path: Path
) -> None:
    """A real crawl: the six twin records are all acknowledged, whichever request carried
    them; the page that always answers 500 is retried by Crawlee (its own retries), then
    given up in the loader when Crawlee gives up (not handled, never handed out again:
    fetched as often as Crawlee's own loader fetches it)."""
    site = await twins_site()
    seen: list[UrlRecord] = []
    loader = SitemapRequestLoader(site.base, progress=tmp_path / "p.db", max_tries=2, options=FAST)
    await crawler(await loader.to_tandem(), seen, retries=1).run()
    assert (loader.loader.handled, loader.loader.failed) == (6, 1)
    assert site.hits[BROKEN] == 2  # one hand-out: 1 + max_request_retries
    assert sum(site.hits[p.split("?")[0]] for p in TWINS) <= len(TWINS)
    assert all(r.url != site.url(BROKEN) for r in seen)


async def test_record_of_gives_the_record_back_typed(tmp_path: Path) -> None:
    """record_of(request) rebuilds the UrlRecord (dates, extensions) from user_data."""
    async with (
        demo.serve() as base,
        SitemapRequestLoader(base + "/", progress=tmp_path / "p.db") as loader,
    ):
        while (request := await loader.fetch_next_request()) is not None:
            record = record_of(request)
            assert isinstance(record, UrlRecord) and record.url == request.url
            assert record.to_dict() == request.user_data[RECORD_KEY]
            await loader.mark_request_as_handled(request)
    with pytest.raises(UsageError, match="not a request of SitemapRequestLoader"):
        record_of(Request.from_url("http://127.0.0.1/x"))


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("lastmod", 1704067200, "lastmod: the record in user_data is damaged: expected ISO 8601"),
        ("lastmod", "yesterday", "lastmod: the record in user_data is damaged: Invalid"),
        ("url", None, "url: the record in user_data is damaged: expected str, got null"),
        ("score", "high", "score: the record in user_data is damaged: expected float"),
        ("images", [{"loc": 5}], "images.loc: the record in user_data is damaged"),
        ("news", "x", "news: the record in user_data is damaged: expected an object"),
    ],
)
def test_record_of_a_damaged_record_names_the_door_and_the_field(
    field: str, value: object, said: str
) -> None:
    """record_of() of a request whose stored record has a non-text lastmod (or another
    field of the wrong kind): a UsageError naming record_of, the request and the field
    (before: an AttributeError)."""
    data = {**UrlRecord("http://127.0.0.1/x", score=0.5).to_dict(), field: value}
    request = Request.from_url("http://127.0.0.1/x", user_data={RECORD_KEY: data})
    with pytest.raises(UsageError) as caught:
        record_of(request)
    assert str(caught.value).startswith(f"record_of: http://127.0.0.1/x: {said}"), caught.value
