"""Credentials through the CLI (issue 18, point 3): ``--header`` stays on the target's
site unless ``--header-hosts any``; a proxy password is never printed."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp.test_utils import TestServer

from tests.conftest_cli import run_cli
from tests.crawl.crawl_kit import Site, index, start, urlset

MakeSite = Callable[[str], Awaitable[Site]]
HEADERS = ("--header", "Cookie: session=s3cret", "--header", "Authorization: Bearer t0ken")


@pytest.fixture
async def make_site() -> AsyncIterator[MakeSite]:
    """Sites on given loopback addresses (127.0.0.2 is another host than 127.0.0.1)."""
    servers: list[TestServer] = []

    async def make(host: str) -> Site:
        served = Site()
        servers.append(await start(served, host))
        return served

    yield make
    for server in servers:
        await server.close()


def _carried(site: Site) -> list[bool]:
    return ["Cookie" in r.headers or "Authorization" in r.headers for r in site.requests]


@pytest.mark.parametrize(("hosts", "elsewhere"), [("site", False), ("any", True)])
async def test_header_hosts(make_site: MakeSite, hosts: str, elsewhere: bool) -> None:
    """An index on 127.0.0.1 lists a child on 127.0.0.2: the headers go there only with
    --header-hosts any; the own host gets them either way."""
    own, other = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    own.add("/index.xml", index([own.url("/a.xml"), other.url("/b.xml")]))
    own.add("/a.xml", urlset([own.url("/a")]))
    other.add("/b.xml", urlset([other.url("/b")]))
    result = await run_cli(
        "dump", own.url("/index.xml"), *HEADERS, "--header-hosts", hosts,
        "--scope", "any", "--format", "txt",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert sorted(result.out.split()) == sorted([own.url("/a"), other.url("/b")])
    assert _carried(own) == [True, True]
    assert _carried(other) == [elsewhere]


def _closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize("command", ["dump", "tree"])
async def test_a_proxy_password_is_never_printed(make_site: MakeSite, command: str) -> None:
    """A proxy that refuses connections: the error names the proxy, not its password."""
    site = await make_site("127.0.0.1")
    site.add("/s.xml", urlset([site.url("/a")]))
    proxy = f"http://crawler:pr0xyS3cret@127.0.0.1:{_closed_port()}"
    result = await run_cli(command, site.url("/s.xml"), "--proxy", proxy, "-v")
    assert site.requests == []
    assert result.code != 2, result.err
    assert "pr0xyS3cret" not in result.out + result.err
    assert result.err.strip()  # the failure is reported


async def test_a_bad_proxy_url_hides_its_password() -> None:
    """--proxy with a password but no host: a usage error that shows ***."""
    result = await run_cli("dump", "127.0.0.1", "--proxy", "ftp://crawler:pr0xyS3cret@x")
    assert result.code == 2
    assert "pr0xyS3cret" not in result.err and "***" in result.err
