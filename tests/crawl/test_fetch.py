"""Fetching: the gzip matrix, redirects, retries, timeouts, headers, concurrency bounds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest
from aiohttp import web

from sitemap_reader.crawl.fetch import backoff_delay, retry_after_seconds
from sitemap_reader.discovery.model import Run
from sitemap_reader.options import default_user_agent
from tests.crawl.crawl_kit import FAST, Reply, Site, collect, gz, index, tree, urlset

MakeSite = Callable[[str], Awaitable[Site]]

#: Wall-clock seconds a timer-ended case may take: far over the timers (under a second),
#: whatever load the machine is under, and far under a wait that never ends.
SLACK = 20.0


def five(site: Site) -> list[str]:
    """Five page URLs on ``site``."""
    return [site.url(f"/page/{i}") for i in range(5)]


GZIP_TYPES = ["application/gzip", "application/x-gzip", "application/x-gunzip", "gzip/document"]


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize(
    ("path", "encode", "headers", "content_type"),
    [
        pytest.param("/s.xml.gz", "gz", {}, "application/x-gzip", id="gz-file"),
        pytest.param("/s.xml", "gz", {"Content-Encoding": "gzip"}, "application/xml", id="ce-gzip"),
        pytest.param(
            "/s.xml.gz", "gzgz", {"Content-Encoding": "gzip"}, "application/x-gzip", id="double"
        ),
        pytest.param("/sitemap", "gz", {}, "application/octet-stream", id="gz-no-extension"),
        pytest.param("/s.xml.gz", "plain", {}, "application/x-gzip", id="gz-name-not-gzip"),
        pytest.param("/s.xml", "plain", {}, "text/html", id="xml-as-html"),
        pytest.param("/s.xml", "plain", {}, "text/plain", id="xml-as-text"),
        pytest.param("/s.txt.gz", "gz-text", {}, "application/gzip", id="txt-gz"),
        pytest.param("/s.php?from=1&to=5", "plain", {}, "text/html", id="query-non-xml-type"),
        *(
            pytest.param("/s", "gz", {}, ct, id=f"K83-{ct}")
            for ct in GZIP_TYPES  # K83: any gzip type at a URL without extension
        ),
    ],
)
async def test_gzip_matrix(
    site: Site, path: str, encode: str, headers: dict[str, str], content_type: str
) -> None:
    """K83-K87, K90: whatever the name, encoding and type, the body is sniffed: 5 URLs."""
    plain = urlset(five(site))
    body = {
        "plain": plain,
        "gz": gz(plain),
        "gzgz": gz(gz(plain)),
        "gz-text": gz("\n".join(five(site)).encode()),
    }[encode]
    site.add(path.split("?")[0], Reply(body, headers=headers, content_type=content_type))
    records, run = await collect(site.url(path))
    assert [r.url for r in records] == five(site)
    assert run.tree[0].ok and run.tree[0].bytes == len(body)


@pytest.mark.usefixtures("client")
async def test_accept_encoding_and_user_agent(site: Site) -> None:
    """Requests carry Accept-Encoding: gzip and the default (or a custom) User-Agent."""
    site.add("/s.xml", urlset(five(site)))
    await collect(site.url("/s.xml"))
    request = site.requests[-1]
    assert request.headers["Accept-Encoding"] == "gzip"
    assert request.headers["User-Agent"] == default_user_agent()
    assert default_user_agent().startswith("sitemap-reader/")
    assert "+https://github.com/sitemap-reader/sitemap-reader" in default_user_agent()
    await collect(site.url("/s.xml"), user_agent="mybot/1.0")
    assert site.requests[-1].headers["User-Agent"] == "mybot/1.0"


@pytest.mark.usefixtures("client")
async def test_redirect_final_url_is_the_base(make_site: MakeSite) -> None:
    """K89: a sitemap redirected to another host resolves relative locs against the final URL."""
    first = await make_site("127.0.0.1")
    second = await make_site("127.0.0.2")
    first.add("/s.xml", Reply(status=301, headers={"Location": second.url("/dir/s.xml")}))
    second.add("/dir/s.xml", urlset(["/relative", "page2"]))
    records, run = await collect(first.url("/s.xml"), scope="any")
    assert [r.url for r in records] == [second.url("/relative"), second.url("/dir/page2")]
    assert {r.sitemap for r in records} == {second.url("/dir/s.xml")}
    assert run.tree[0].final_url == second.url("/dir/s.xml") and run.tree[0].status == 200


@pytest.mark.usefixtures("client")
async def test_redirect_limit_for_sitemaps(site: Site) -> None:
    """More than max_redirects hops ends the sitemap with a 'redirects' problem."""
    for i in range(4):
        site.add(f"/r{i}", Reply(status=302, headers={"Location": f"/r{i + 1}"}))
    site.add("/r4", urlset(five(site)))
    run = await tree(site.url("/r0"), options=FAST.replace(max_redirects=3))
    assert [p.code for p in run.tree[0].problems] == ["redirects"] and run.tree[0].failed
    records, _ = await collect(site.url("/r0"), options=FAST.replace(max_redirects=4))
    assert len(records) == 5


@pytest.mark.usefixtures("client")
async def test_reset_connection_is_retried(site: Site) -> None:
    """A connection dropped before the response is retried and then succeeds."""
    calls = {"n": 0}

    async def drop_first(request: web.Request) -> web.StreamResponse:
        calls["n"] += 1
        if calls["n"] == 1:
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)  # never reaches the client
        return web.Response(body=urlset(five(site)), content_type="application/xml")

    site.add("/s.xml", drop_first)
    records, run = await collect(site.url("/s.xml"))
    assert len(records) == 5 and calls["n"] == 2 and run.tree[0].ok


@pytest.mark.usefixtures("client")
async def test_body_cut_short_keeps_records(site: Site) -> None:
    """A body that ends early keeps the records before the cut; the node has the problem."""
    urls = five(site)
    head = urlset(urls)[: urlset(urls).index(b"<url><loc>" + urls[3].encode())]

    async def cut(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": str(len(head) + 500)})
        await response.prepare(request)
        await response.write(head)
        assert request.transport is not None
        request.transport.close()
        return response

    site.add("/s.xml", cut)
    records, run = await collect(site.url("/s.xml"))
    assert [r.url for r in records] == urls[:3]
    node = run.tree[0]
    assert node.failed and "body" in [p.code for p in node.problems]
    assert node.format == "urlset" and not node.complete and node.urls == 3
    assert site.hits["/s.xml"] == 2  # fetched again once (Limits.body_retries), cut again


@pytest.mark.usefixtures("client")
async def test_hung_server_bounded_by_timeout(site: Site) -> None:
    """A server that never answers: the sitemap ends at `timeout`, siblings are unaffected."""
    never = asyncio.Event()

    async def hang(request: web.Request) -> web.StreamResponse:
        await never.wait()
        return web.Response()

    site.add("/index.xml", index([site.url("/hang.xml"), site.url("/ok.xml")]))
    site.add("/hang.xml", hang)
    site.add("/ok.xml", urlset(five(site)))
    started = time.monotonic()
    records, run = await collect(site.url("/index.xml"), timeout=0.3)
    elapsed = time.monotonic() - started
    # ended by the 0.3 s timeout (its problem says so), not by the server: a margin no
    # busy machine reaches, against a wait that would never end
    assert len(records) == 5 and elapsed < SLACK
    failures = run.failures()
    assert [n.url for n in failures] == [site.url("/hang.xml")]
    assert failures[0].problems[0].code == "timeout"
    never.set()


@pytest.mark.usefixtures("client")
async def test_trickling_server_bounded_by_timeout(site: Site) -> None:
    """A body that trickles forever (each read on time) ends at `timeout`; records kept."""
    stop = asyncio.Event()
    urls = five(site)
    head = urlset(urls[:2]).replace(b"</urlset>\n", b"")

    async def trickle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        await response.write(head)
        while not stop.is_set():
            await response.write(b" ")
            await asyncio.sleep(0.02)  # the server's pace, not test synchronisation
        return response

    site.add("/s.xml", trickle)
    started = time.monotonic()
    records, run = await collect(site.url("/s.xml"), timeout=0.4)
    stop.set()
    assert time.monotonic() - started < SLACK  # the trickle alone never ends
    assert [r.url for r in records] == urls[:2]
    assert run.tree[0].problems[0].code == "timeout" and run.tree[0].failed  # the cause first


def _shape(run: Run) -> list[tuple[object, ...]]:
    """What a run found, node by node, without its timings."""
    return [
        (n.url, n.final_url, n.status, n.urls, n.complete, [p.code for p in n.problems])
        for n in run.nodes()
    ]


@pytest.mark.usefixtures("client")
async def test_allow_private_false_is_the_default(site: Site) -> None:
    """allow_private=False reads as the default and behaves exactly as unset: a loopback
    target is read, with the same records, the same run and the same requests."""
    site.add("/s.xml", urlset(five(site)))
    unset, unset_run = await collect(site.url("/s.xml"))
    hits = dict(site.hits)
    false, false_run = await collect(site.url("/s.xml"), allow_private=False)
    assert [r.url for r in unset] == five(site)
    assert false == unset
    assert _shape(false_run) == _shape(unset_run)
    assert false_run.error is unset_run.error is None
    assert dict(site.hits) == {path: 2 * count for path, count in hits.items()}


@pytest.mark.usefixtures("client")
async def test_allow_private_true_reads_loopback(site: Site) -> None:
    """allow_private=True: a loopback target is read as by default."""
    site.add("/s.xml", urlset(five(site)))
    records, run = await collect(site.url("/s.xml"), allow_private=True)
    assert [r.url for r in records] == five(site) and run.error is None


@pytest.mark.usefixtures("client")
async def test_allow_private_never_refuses_loopback(site: Site) -> None:
    """allow_private="never": a loopback target is refused without a request."""
    site.add("/s.xml", urlset(five(site)))
    run = await tree(site.url("/s.xml"), allow_private="never")
    assert run.tree[0].problems[0].code == "blocked" and site.hits["/s.xml"] == 0
    assert run.error is not None


async def test_concurrency_bounds_reached_never_exceeded(make_site: MakeSite) -> None:
    """Global and per-host bounds: in-flight requests reach both and never exceed them."""
    sites = [
        await make_site("127.0.0.1"),
        await make_site("127.0.0.2"),
        await make_site("127.0.0.3"),
    ]
    concurrency, per_host = 4, 2
    total = {"now": 0, "max": 0}
    full = asyncio.Event()

    def gated(site: Site, n: int) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handler(request: web.Request) -> web.StreamResponse:
            total["now"] += 1
            total["max"] = max(total["max"], total["now"])
            if total["now"] == concurrency:
                full.set()
            try:
                await full.wait()  # hold every request until the global bound is reached
                return web.Response(body=urlset([site.url(f"/{n}")]), content_type="text/xml")
            finally:
                total["now"] -= 1

        return handler

    targets = []
    for site in sites:
        for n in range(4):
            site.add(f"/s{n}.xml", gated(site, n))
            targets.append(site.url(f"/s{n}.xml"))
    records, run = await collect(targets, concurrency=concurrency, per_host=per_host)
    assert len(records) == 12 and run.stats.sitemaps_ok == 12
    assert total["max"] == concurrency
    assert max(s.max_in_flight for s in sites) == per_host


def test_retry_after_parsing() -> None:
    """Retry-After: delta seconds, HTTP dates (past is 0), garbage is None."""
    now = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("0") == 0.0
    assert retry_after_seconds(" 30 ") == 30.0
    assert retry_after_seconds("Mon, 01 Jan 2024 12:00:05 GMT", now) == 5.0
    assert retry_after_seconds("Mon, 01 Jan 2024 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("-5") is None
    assert retry_after_seconds("later") is None
    assert retry_after_seconds(None) is None


def test_backoff_is_full_jitter_and_capped() -> None:
    """Backoff is uniform in [0, min(cap, base * 2**attempt)]."""
    assert backoff_delay(3, 0.5, 60.0, lambda: 1.0) == 4.0
    assert backoff_delay(20, 0.5, 60.0, lambda: 1.0) == 60.0
    assert backoff_delay(3, 0.5, 60.0, lambda: 0.0) == 0.0
    assert backoff_delay(0, 0.5, 60.0, lambda: 0.5) == 0.25


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("encoding", ["gzip", "none"], ids=["content-encoding", "gz-file"])
async def test_caps_hold_on_the_body_as_sent(site: Site, encoding: str) -> None:
    """The decompressed-bytes cap and the wire cap hold whatever the client: the body
    reaches the parse core as sent (a client that inflated it itself would step around
    the cap) and is cut at the cap, the URLs before the padding kept."""
    urls = five(site)
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    padding = " " * (4 * 1024 * 1024)
    document = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}{padding}'
    body = gz(document.encode() + b"</urlset>")
    headers = {"Content-Encoding": "gzip"} if encoding == "gzip" else {}
    site.add("/s.xml.gz", Reply(body, headers=headers, content_type="application/x-gzip"))
    options = FAST.replace(max_decompressed_bytes=256 * 1024)
    records, run = await collect(site.url("/s.xml.gz"), options=options)
    assert [r.url for r in records] == urls
    problem = run.tree[0].problems[0]
    assert problem.code == "limit-bytes" and "262144" in problem.message.replace(",", "")
    wire = FAST.replace(max_wire_bytes=1024)
    _, run = await collect(site.url("/s.xml.gz"), options=wire)
    assert [p.code for p in run.tree[0].problems][:1] == ["limit-wire-bytes"]
    assert run.tree[0].bytes <= 1024 + 64 * 1024  # cut within a chunk of the cap
