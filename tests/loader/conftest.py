"""Fixtures of the loader tests: generated loopback sites."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp.test_utils import TestServer

from tests.crawl.crawl_kit import Site, start
from tests.loader.kill_kit import GeneratedSite

MakeSite = Callable[[int, int], Awaitable[GeneratedSite]]


@pytest.fixture
async def make_site() -> AsyncIterator[MakeSite]:
    """``await make_site(sitemaps, per_sitemap)``: a generated site on 127.0.0.1."""
    servers: list[TestServer] = []

    async def make(sitemaps: int, per_sitemap: int) -> GeneratedSite:
        site = GeneratedSite(sitemaps, per_sitemap)
        servers.append(await start(site))
        return site

    yield make
    for server in servers:
        await server.close()


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """One scripted site on 127.0.0.1 (fill its routes in the test)."""
    served = Site()
    server = await start(served)
    yield served
    await server.close()
