"""Retries counted once: one attempt of ours is one request on the wire.

The servers here are raw asyncio TCP servers on 127.0.0.1 that count connections and
request heads, so what the client sends is seen without any HTTP library in between.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from tests.crawl.crawl_kit import FAST, collect, tree, urlset
from tests.helpers import closed_port

#: A complete keep-alive answer: the connection stays open for the next request.
OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n"


@dataclass
class Counting:
    """A raw server: ``answer(n)`` is called for the n-th request head (from 1) and
    returns the bytes to send, or None to drop the connection without a word."""

    answer: Callable[[int], bytes | None]
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    port: int = 0

    def url(self, path: str) -> str:
        """Absolute URL of ``path`` on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read request heads one after the other on one connection; answer or drop."""
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.requests.append(head)
                reply = self.answer(len(self.requests))
                if reply is None:
                    return
                writer.write(reply)
                await writer.drain()
        finally:
            writer.close()


MakeServer = Callable[[Callable[[int], bytes | None]], Awaitable[Counting]]


@pytest.fixture
async def counting() -> AsyncIterator[MakeServer]:
    """A factory of counting raw servers on 127.0.0.1 (closed at the end)."""
    servers: list[asyncio.Server] = []

    async def make(answer: Callable[[int], bytes | None]) -> Counting:
        state = Counting(answer)
        server = await asyncio.start_server(state.serve, "127.0.0.1", 0)
        state.port = server.sockets[0].getsockname()[1]
        servers.append(server)
        return state

    yield make
    for server in servers:
        server.close()
        await server.wait_closed()


def ok(body: bytes) -> bytes:
    """A complete keep-alive 200 answer carrying ``body``."""
    return OK_HEAD % len(body) + body


@pytest.mark.usefixtures("client")
async def test_dropping_server_gets_one_request_per_attempt(counting: MakeServer) -> None:
    """retries=2 against a server that drops every connection: exactly 3 requests."""
    server = await counting(lambda n: None)
    run = await tree(server.url("/s.xml"))
    assert FAST.limits.retries == 2
    assert len(server.requests) == 3 and server.connections == 3
    assert run.tree[0].failed and [p.code for p in run.tree[0].problems] == ["reset"]


@pytest.mark.usefixtures("client")
async def test_drop_on_a_reused_connection_is_not_resent(counting: MakeServer) -> None:
    """A keep-alive connection dropped at the second request: no silent resend by aiohttp.

    The first sitemap is answered on a connection that stays open; the second request
    reuses it and is dropped, and so is every later one: the second sitemap costs three
    requests (1 + retries), not six."""
    first = urlset([])

    def answer(n: int) -> bytes | None:
        return ok(first) if n == 1 else None

    server = await counting(answer)
    run = await tree([server.url("/a.xml"), server.url("/b.xml")], concurrency=1)
    assert len(server.requests) == 1 + 3
    b = next(node for node in run.tree if node.url.endswith("/b.xml"))
    assert b.failed and [p.code for p in b.problems] == ["reset"]


@pytest.mark.usefixtures("client")
async def test_one_drop_then_an_answer_is_one_retry(counting: MakeServer) -> None:
    """A drop then an answer: two requests, the records kept, the node ok."""
    body = urlset(["http://127.0.0.1/a", "http://127.0.0.1/b"])
    server = await counting(lambda n: None if n == 1 else ok(body))
    records, run = await collect(server.url("/s.xml"), scope="any")
    assert len(records) == 2 and run.tree[0].ok
    assert len(server.requests) == 2


@pytest.mark.usefixtures("client")
async def test_a_refused_connection_stays_a_connect_failure() -> None:
    """No connection at all is not a drop: the problem stays 'connect' (the https ->
    http fallback and retry_connect depend on it)."""
    with closed_port() as port:
        run = await tree(f"http://127.0.0.1:{port}/s.xml")
    assert [p.code for p in run.tree[0].problems] == ["connect"]


@pytest.mark.usefixtures("client")
async def test_retry_after_counts_against_the_timeout(counting: MakeServer) -> None:
    """Retry-After: 100 on every answer with timeout=20: one request, given up at once
    (the wait would outlast the budget), not three waits of 100 s."""
    busy = b"HTTP/1.1 503 Busy\r\nRetry-After: 100\r\nContent-Length: 0\r\n\r\n"
    server = await counting(lambda n: busy)
    started = asyncio.get_running_loop().time()
    run = await tree(server.url("/s.xml"), timeout=20, options=FAST.replace(max_retry_after=600))
    assert asyncio.get_running_loop().time() - started < 20
    assert len(server.requests) == 1
    problem = run.tree[0].problems[0]
    assert problem.code == "retry-after" and "time left of the sitemap's budget" in problem.message


@pytest.mark.usefixtures("client")
async def test_a_retry_after_within_the_budget_is_honoured(counting: MakeServer) -> None:
    """Retry-After: 1 with timeout=5: waited, the next attempt gets the sitemap."""
    busy = b"HTTP/1.1 503 Busy\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"
    body = urlset(["http://127.0.0.1/a"])
    server = await counting(lambda n: busy if n == 1 else ok(body))
    records, run = await collect(server.url("/s.xml"), timeout=5, scope="any")
    assert len(records) == 1 and run.tree[0].ok and len(server.requests) == 2
