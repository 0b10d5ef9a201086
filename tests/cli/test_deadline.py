"""The run's deadline (--deadline / deadline=): reading stops, what was read is kept, the
summary says so and lists the sitemaps not finished; distinct from the per-sitemap timeout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sitemap_reader import SitemapReader
from sitemap_reader.discovery import Discovery, Schedule, Stop, classify
from sitemap_reader.discovery.model import Stopped
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Options
from tests.conftest_cli import SITEMAP_READER, Site, cli_env, index, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


@pytest.fixture
async def stalling(aiohttp_server: ServerFactory) -> AsyncIterator[str]:
    """An index of a sitemap that stalls mid-body, one that never answers, and one that
    answers at once."""
    release = asyncio.Event()

    async def mid_body(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        base = str(request.url.origin())
        await response.write(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
        await response.write(f"<url><loc>{base}/slow/1</loc></url>\n".encode())
        await release.wait()
        return response

    async def silent(request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(text="late")

    async def fast(request: web.Request) -> web.StreamResponse:
        body = urlset("/a", "/b", "/c").replace("{base}", str(request.url.origin()))
        return web.Response(body=body.encode(), content_type="application/xml")

    handlers = {"/mid.xml": mid_body, "/silent.xml": silent, "/fast.xml": fast}
    site = Site({"/sitemap.xml": index("/mid.xml", "/silent.xml", "/fast.xml")}, handlers=handlers)
    server = await aiohttp_server(site.app())
    yield str(server.make_url("")).rstrip("/")
    release.set()


async def test_cli_deadline_stops_and_keeps(stalling: str) -> None:
    """--deadline 1: exit 0, 'stopped at the deadline (1 s)', the two stalled sitemaps
    'not finished' (not failed, no timeout problem), every record read kept."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        SITEMAP_READER, "dump", stalling + "/sitemap.xml", "--deadline", "1", "--format", "txt",
        env=cli_env(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    text = err.decode()
    assert proc.returncode == 0, text
    assert time.monotonic() - started < 45  # far below the 120 s per-sitemap timeout
    assert text.splitlines()[0] == "stopped at the deadline (1 s)"
    assert "0 failed, 2 not finished" in text
    assert f"not finished: {stalling}/mid.xml" in text
    assert f"not finished: {stalling}/silent.xml" in text
    urls = set(out.decode().split())
    assert {stalling + p for p in ("/a", "/b", "/c", "/slow/1")} == urls


async def test_reader_deadline(stalling: str) -> None:
    """deadline= on the reader: the records read are yielded, stats.stopped says why."""
    async with SitemapReader(deadline=0.5) as reader:
        urls = {r.url async for r in reader.urls(stalling + "/sitemap.xml")}
        run = reader.last_run
    assert run is not None and run.stats.stopped == Stopped("deadline", "deadline", 0.5)
    assert urls == {stalling + p for p in ("/a", "/b", "/c", "/slow/1")}
    for node in run.nodes():
        assert all(p.code != "timeout" for p in node.problems), node


def test_cli_deadline_must_be_positive() -> None:
    """--deadline 0 is a usage error (exit 2), as is deadline=0 on the reader."""
    import subprocess

    result = subprocess.run(
        [SITEMAP_READER, "dump", "example.com", "--deadline", "0"],
        env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "--deadline" in result.stderr
    with pytest.raises(UsageError, match="deadline"):
        SitemapReader(deadline=0)


def test_core_deadline_on_the_drivers_clock() -> None:
    """The core reads the driver's clock: once the deadline passed, the next job start
    stops the run (a Stop action) and the job is skipped with the reason."""
    now = [100.0]
    core = Discovery([classify("https://example.com/sitemap.xml")], Options.of(deadline=5),
                     clock=lambda: now[0])  # fmt: skip
    assert core.remaining() == 5
    (schedule,) = [a for a in core.start() if isinstance(a, Schedule)]
    now[0] = 105.0
    assert core.remaining() == 0
    actions = core.begin(schedule.ticket)
    assert Stop(Stopped("deadline", "deadline", 5.0)) in actions
    skipped = core.run.tree[0].skipped
    assert skipped is not None and skipped.code == "stopped"
    assert core.overdue() == []  # stopped once
