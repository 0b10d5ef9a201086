"""Fixtures for the hostile-site tests: the site on 127.0.0.1 and a server that never answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp.test_utils import TestServer

from tests.crawl.crawl_kit import Site, start
from tests.hostile.hostile_site import HostileSite, SilentServer


@pytest.fixture
async def hostile() -> AsyncIterator[HostileSite]:
    """A fresh hostile site on 127.0.0.1 (each test installs its case on it)."""
    site = HostileSite()
    server = await start(site)
    yield site
    await server.close()


@pytest.fixture
async def silent() -> AsyncIterator[SilentServer]:
    """A TCP server on 127.0.0.1 that accepts and never answers."""
    async with SilentServer() as server:
        yield server


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """A plain scripted site on 127.0.0.1 (for the guard tests)."""
    served = Site()
    server = await start(served)
    yield served
    await server.close()


@pytest.fixture
async def make_site() -> AsyncIterator[Callable[[str], Awaitable[Site]]]:
    """A factory for sites on other loopback addresses (``await make_site("127.0.0.2")``)."""
    servers: list[TestServer] = []

    async def make(host: str = "127.0.0.1") -> Site:
        served = Site()
        servers.append(await start(served, host))
        return served

    yield make
    for server in servers:
        await server.close()
