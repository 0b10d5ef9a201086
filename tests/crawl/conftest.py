"""Fixtures for the crawler tests: scriptable sites served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp.test_utils import TestServer

from tests.crawl.crawl_kit import Site, start


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """One scripted site on 127.0.0.1 (fill its routes in the test)."""
    served = Site()
    server = await start(served)
    yield served
    await server.close()


@pytest.fixture
async def make_site() -> AsyncIterator[Callable[[str], Awaitable[Site]]]:
    """A factory for more sites (``await make_site("127.0.0.2")`` is another host)."""
    servers: list[TestServer] = []

    async def make(host: str = "127.0.0.1") -> Site:
        served = Site()
        servers.append(await start(served, host))
        return served

    yield make
    for server in servers:
        await server.close()
