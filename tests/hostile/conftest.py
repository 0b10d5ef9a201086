"""Fixtures for the hostile-site tests: the site on 127.0.0.1 and a server that never answers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

# The scripted-site fixtures of the crawl tests, shared rather than written again.
from tests.crawl.conftest import make_site, site
from tests.crawl.crawl_kit import start
from tests.hostile.hostile_site import HostileSite, SilentServer

__all__ = ["hostile", "make_site", "silent", "site"]


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
