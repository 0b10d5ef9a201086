"""Stops the user asked for (--max-urls, Ctrl-C) are said as such, not as failures."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.conftest_cli import SITEMAP_READER, Site, cli_env, run_cli, stalling_site, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


@pytest.fixture
async def stalled(aiohttp_server: ServerFactory) -> AsyncIterator[tuple[str, asyncio.Event]]:
    """An index of a sitemap that stalls mid-body and one that answers once it stalled."""
    async with stalling_site(aiohttp_server) as served:
        yield served


async def test_max_urls_stop_is_not_a_failure(stalled: tuple[str, asyncio.Event]) -> None:
    """--max-urls: 'stopped after N URLs', the sitemap in flight is 'not finished'."""
    base, _ = stalled
    proc = await asyncio.create_subprocess_exec(
        SITEMAP_READER, "dump", base + "/sitemap.xml", "--max-urls", "2", "--format", "txt",
        env=cli_env(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    text = err.decode()
    assert proc.returncode == 0, text
    assert len(out.decode().splitlines()) == 2
    assert text.splitlines()[0] == "stopped after 2 URLs (--max-urls)"
    assert "0 failed, 1 not finished" in text
    assert f"not finished: {base}/slow.xml" in text
    assert "failed:" not in text and "incomplete" not in text


async def test_ctrl_c_with_output_file_says_it_was_left(
    stalled: tuple[str, asyncio.Event], tmp_path: Path
) -> None:
    """Ctrl-C with -o: the summary says the records were not kept and FILE left as it was."""
    base, sent = stalled
    out = tmp_path / "urls.jsonl"
    out.write_text("old\n")
    proc = await asyncio.create_subprocess_exec(
        SITEMAP_READER, "dump", base + "/sitemap.xml", "-o", str(out), "--no-progress",
        env=cli_env(), stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    await asyncio.wait_for(sent.wait(), 20)
    proc.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    text = err.decode()
    assert proc.returncode == 130, text
    assert text.splitlines()[0] == "interrupted (Ctrl-C)"
    assert f"records not kept: {out} left as it was" in text
    assert f"not finished: {base}/slow.xml" in text and "failed:" not in text
    assert out.read_text() == "old\n"


def test_progress_text_rates_and_the_writing_phase() -> None:
    """The progress line gives URL and byte rates; after discovery, the writing phase."""
    from sitemap_reader.cli.summary import progress_text
    from sitemap_reader.discovery.model import Stats

    stats = Stats(urls_emitted=3000, bytes=4_000_000, started=100.0, finished=None)
    text = progress_text(Stats(urls_emitted=3000, bytes=4_000_000, started=0.0, finished=2.0))
    assert text == "discovery done: 3,000 URLs; writing the records"
    live = progress_text(stats)
    assert re.fullmatch(r"3,000 URLs \([\d,]+/s\), 4\.0 MB \(\d+\.\d MB/s\)", live), live


def test_progress_eta_from_the_sitemaps_known() -> None:
    """With sitemaps known from an index, the line estimates the time left at the pace of
    the finished ones; none before the first finishes or once nothing is queued."""
    from sitemap_reader.cli.summary import eta, progress_text
    from sitemap_reader.discovery.model import Stats

    def at(ok: int, queued: int) -> Stats:
        stats = Stats(sitemaps_ok=ok, sitemaps_queued=queued, started=0.0, finished=None)
        stats.started = time.monotonic() - 10.0  # ten seconds into the run
        return stats

    left = eta(at(ok=2, queued=6))
    assert left is not None and 29.0 < left < 32.0  # 10 s for 2, so ~30 s for 6 more
    assert progress_text(at(ok=2, queued=6)).endswith(" s left")
    assert eta(at(ok=0, queued=6)) is None and eta(at(ok=4, queued=0)) is None
    assert "left" not in progress_text(at(ok=4, queued=0))
    assert progress_text(at(ok=1, queued=600)).endswith(" h left")


async def test_a_site_behind_a_wall_says_blocked(aiohttp_server: ServerFactory) -> None:
    """Every answer is a Cloudflare challenge: exit 1, and the verdict says blocked, by
    what, with the signals that decided (before: 'not a sitemap', as if the site had
    none)."""

    async def challenge(request: web.Request) -> web.Response:
        return web.Response(
            status=403,
            headers={"cf-mitigated": "challenge", "Server": "cloudflare"},
            body=b"<html><title>Just a moment...</title></html>",
            content_type="text/html",
        )

    paths = ("/robots.txt", "/sitemap.xml")
    site = Site({}, handlers=dict.fromkeys(paths, challenge))
    server = await aiohttp_server(site.app())
    target = str(server.make_url("/sitemap.xml"))
    result = await run_cli("dump", target, "--no-progress")
    assert result.code == 1, result.err
    assert result.err.splitlines()[-1] == (
        f"sitemap-reader: verdict: blocked: Cloudflare challenge answered {target} "
        "(cf-mitigated: challenge, page: <title>just a moment, HTTP 403)"
    )


async def test_the_ladder_is_said_in_the_verdict(aiohttp_server: ServerFactory) -> None:
    """--client auto on a wall that turns away clients without a browser's client hints:
    exit 0, the URLs out, and the verdict line says the target was read again with the
    browser client after aiohttp was blocked, and by what."""
    from tests.conftest import NO_BROWSER, browser_extra

    if not browser_extra():
        pytest.skip(NO_BROWSER)

    async def wall(request: web.Request) -> web.Response:
        if "sec-ch-ua" in request.headers:
            body = urlset("/a", "/b").replace("{base}", base)
            return web.Response(text=body, content_type="text/xml")
        return web.Response(
            status=403,
            headers={"cf-mitigated": "challenge", "Server": "cloudflare"},
            body=b"<html><title>Just a moment...</title></html>",
            content_type="text/html",
        )

    site = Site({}, handlers={"/sitemap.xml": wall})
    server = await aiohttp_server(site.app())
    base = str(server.make_url("")).rstrip("/")
    target = f"{base}/sitemap.xml"
    result = await run_cli("dump", target, "--no-progress", "--client", "auto")
    assert result.code == 0, result.err
    assert [json.loads(line)["url"] for line in result.out.splitlines()] == [
        f"{base}/a",
        f"{base}/b",
    ]
    assert result.err.splitlines()[-1] == (
        "verdict: ok (2 URLs listed); read again with the browser client "
        f"after aiohttp was blocked: Cloudflare challenge answered {target} "
        "(cf-mitigated: challenge, page: <title>just a moment, HTTP 403)"
    )
