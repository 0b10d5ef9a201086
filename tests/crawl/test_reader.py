"""Traversal: robots.txt, well-known paths, indexes, loops, budgets, failures, streaming."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

import sitemap_reader as sr
from sitemap_reader.crawl import SitemapReader
from sitemap_reader.discovery.model import Stopped
from sitemap_reader.errors import DiscoveryError, UsageError
from tests.crawl.crawl_kit import FAST, Reply, Site, collect, gz, index, node_by_url, tree, urlset
from tests.helpers import closed_port
from tests.hostile.test_guard import FakeResolver


def pages(site: Site, prefix: str, n: int) -> list[str]:
    """``n`` page URLs on ``site``."""
    return [site.url(f"/{prefix}/{i}") for i in range(n)]


async def test_robots_index_children_stream_all_urls(site: Site) -> None:
    """robots.txt -> index -> a plain and a gzipped child: every URL once, tree and stats."""
    a, b = pages(site, "a", 3), pages(site, "b", 2)
    site.add("/robots.txt", f"User-agent: *\nSitemap: {site.url('/index.xml')}\n")
    site.add("/index.xml", index([site.url("/a.xml"), site.url("/b.xml.gz")]))
    site.add("/a.xml", urlset(a))
    site.add("/b.xml.gz", gz(urlset(b)), content_type="application/x-gzip")
    records, run = await collect(site.base + "/")
    assert sorted(r.url for r in records) == sorted(a + b)
    assert {r.sitemap for r in records} == {site.url("/a.xml"), site.url("/b.xml.gz")}
    root = run.tree[0]
    assert (root.kind, root.format, root.status) == ("robots", "robots", 200)
    (idx,) = root.children
    assert idx.format == "sitemapindex" and [c.url for c in idx.children] == [
        site.url("/a.xml"),
        site.url("/b.xml.gz"),
    ]
    assert [c.urls for c in idx.children] == [3, 2] and all(c.ok for c in idx.children)
    stats = run.stats
    assert (stats.sitemaps_ok, stats.sitemaps_failed, stats.urls_emitted) == (3, 0, 5)
    assert stats.bytes > 0 and stats.sitemaps_queued == 0 and run.error is None
    assert run.to_dict()["stats"]["urls_emitted"] == 5


async def test_guesses_when_robots_lists_none(site: Site) -> None:
    """No Sitemap line: the well-known paths are probed; HTML soft-404s do not count."""
    site.add("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.add("/sitemap.xml", "<!doctype html><html><body>Not here</body></html>")
    site.add("/sitemap_index.xml", index([site.url("/child.xml")]))
    site.add("/child.xml", urlset(pages(site, "c", 2)))
    site.add("/sitemap.txt", site.url("/t/1") + "\n", content_type="text/plain")
    records, run = await collect(site.base + "/")
    assert sorted(r.url for r in records) == sorted([*pages(site, "c", 2), site.url("/t/1")])
    guesses = run.tree[0].children
    assert [g.url for g in guesses] == [
        site.url(p)
        for p in (
            "/sitemap.xml",
            "/sitemap_index.xml",
            "/sitemap-index.xml",
            "/sitemap.xml.gz",
            "/sitemap.txt",
            "/wp-sitemap.xml",
        )
    ]
    found = [g.url for g in guesses if g.skipped is None]
    assert found == [site.url("/sitemap_index.xml"), site.url("/sitemap.txt")]
    assert guesses[0].skipped is not None and guesses[0].skipped.code == "not-found"
    assert run.stats.sitemaps_failed == 0 and run.failures() == []


async def test_robots_404_still_guesses(site: Site) -> None:
    """robots.txt 404 means no robots: discovery goes on with the well-known paths."""
    site.add("/sitemap.xml", urlset(pages(site, "p", 1)))
    records, run = await collect(site.base + "/")
    assert [r.url for r in records] == pages(site, "p", 1)
    assert run.tree[0].status == 404 and run.tree[0].ok


async def test_robots_5xx_retried_then_absent(site: Site) -> None:
    """robots.txt 503: retried (1 + retries attempts), then treated as absent."""
    site.add("/robots.txt", Reply(b"down", status=503))
    site.add("/sitemap.xml", urlset(pages(site, "p", 1)))
    records, run = await collect(site.base + "/")
    assert site.hits["/robots.txt"] == 1 + FAST.limits.retries
    assert [r.url for r in records] == pages(site, "p", 1)
    robots = run.tree[0]
    assert robots.failed and "503" in (robots.reason or "")
    assert robots in run.failures()


async def test_robots_relative_and_uppercase_sitemap_lines(site: Site) -> None:
    """J75/J77: relative Sitemap: resolved on the robots host, HTTP:// normalized, deduped."""
    upper = site.url("/b.xml").replace("http://", "HTTP://")
    robots = (
        f"# c\nUser-agent: *\nDisallow: /x\nsitemap: /a.xml\n\nSitemap: {upper}\nSITEMAP: /a.xml\n"
    )
    site.add("/robots.txt", robots, content_type="text/plain")
    site.add("/a.xml", urlset(pages(site, "a", 1)))
    site.add("/b.xml", urlset(pages(site, "b", 1)))
    records, run = await collect(site.base + "/")
    assert [c.url for c in run.tree[0].children] == [site.url("/a.xml"), site.url("/b.xml")]
    assert sorted(r.url for r in records) == sorted(pages(site, "a", 1) + pages(site, "b", 1))
    assert site.hits["/a.xml"] == 1


async def test_robots_gzip_encoded_and_bom(site: Site) -> None:
    """A robots.txt sent with Content-Encoding: gzip and a BOM is still read."""
    body = gz(f"\ufeffSitemap: {site.url('/s.xml')}\n".encode())
    site.add("/robots.txt", Reply(body, headers={"Content-Encoding": "gzip"}, content_type=None))
    site.add("/s.xml", urlset(pages(site, "s", 2)))
    records, _ = await collect(site.base + "/")
    assert len(records) == 2


async def test_robots_size_cap(site: Site) -> None:
    """A Sitemap line past Limits.max_robots_bytes is not read (RFC 9309 cap)."""
    filler = "# " + "x" * 2000 + "\n"
    body = (
        f"Sitemap: {site.url('/early.xml')}\n" + filler * 3 + f"Sitemap: {site.url('/late.xml')}\n"
    )
    site.add("/robots.txt", body, content_type="text/plain")
    site.add("/early.xml", urlset(pages(site, "e", 1)))
    site.add("/late.xml", urlset(pages(site, "l", 1)))
    run = await tree(site.base + "/", options=FAST.replace(max_robots_bytes=1024))
    assert [c.url for c in run.tree[0].children] == [site.url("/early.xml")]
    assert site.hits["/late.xml"] == 0


async def test_robots_redirect_limit(site: Site) -> None:
    """robots.txt follows 5 redirects (RFC 9309) but not 6."""
    for i in range(6):
        site.add(f"/r{i}", Reply(status=301, headers={"Location": f"/r{i + 1}"}))
    site.add("/r6", f"Sitemap: {site.url('/s.xml')}\n", content_type="text/plain")
    site.add("/s.xml", urlset(pages(site, "s", 1)))
    site.add("/robots.txt", Reply(status=301, headers={"Location": "/r1"}))
    run = await tree(site.base + "/")  # robots -> r1..r6: 6 redirects
    assert any(p.code == "redirects" for p in run.tree[0].problems)
    site.add("/robots.txt", Reply(status=301, headers={"Location": "/r2"}))
    run = await tree(site.base + "/")  # robots -> r2..r6: 5 redirects
    assert run.tree[0].final_url == site.url("/r6")
    assert [c.url for c in run.tree[0].children] == [site.url("/s.xml")]


async def test_index_listing_itself_and_robots(site: Site) -> None:
    """G59: an index listing itself and robots.txt: each fetched once, robots never parsed."""
    site.add(
        "/robots.txt", f"Sitemap: {site.url('/index.xml')}\nSitemap: {site.url('/robots.txt')}\n"
    )
    site.add(
        "/index.xml",
        index([site.url("/index.xml"), site.url("/robots.txt"), site.url("/a.xml")]),
    )
    site.add("/a.xml", urlset(pages(site, "a", 2)))
    records, run = await collect(site.base + "/")
    assert len(records) == 2
    assert site.hits["/index.xml"] == 1 and site.hits["/robots.txt"] == 1
    reasons = {n.url: str(n.skipped) for n in run.nodes() if n.skipped}
    assert reasons[site.url("/robots.txt")] == "robots.txt is not a sitemap"
    assert reasons[site.url("/index.xml")] == "already visited"
    assert run.stats.sitemaps_skipped == 3


async def test_cycles_and_redirect_to_visited(site: Site) -> None:
    """G60: A->B->A, one child under two indexes, a redirect into a visited sitemap: once each."""
    site.add("/robots.txt", f"Sitemap: {site.url('/a.xml')}\nSitemap: {site.url('/b2.xml')}\n")
    site.add("/a.xml", index([site.url("/b.xml"), site.url("/leaf.xml"), site.url("/moved.xml")]))
    site.add("/b.xml", index([site.url("/a.xml"), site.url("/leaf.xml")]))
    site.add("/b2.xml", index([site.url("/leaf.xml")]))
    site.add("/moved.xml", Reply(status=301, headers={"Location": site.url("/leaf.xml")}))
    site.add("/leaf.xml", urlset(pages(site, "l", 3)))
    records, run = await collect(site.base + "/")
    assert len(records) == 3
    assert all(site.hits[p] == 1 for p in ("/a.xml", "/b.xml", "/b2.xml", "/leaf.xml"))
    moved = node_by_url(run, site.url("/moved.xml"))
    assert moved.skipped is not None and moved.skipped.code == "redirect"
    assert moved.status == 301 and not moved.failed


async def test_depth_limit(site: Site) -> None:
    """G60: nested indexes deeper than max_depth are skipped with a reason."""
    for level in range(4):
        site.add(f"/i{level}.xml", index([site.url(f"/i{level + 1}.xml")]))
    site.add("/i4.xml", urlset(pages(site, "deep", 1)))
    run = await tree(site.url("/i0.xml"), options=FAST.replace(max_depth=2))
    skipped = node_by_url(run, site.url("/i3.xml"))
    assert str(skipped.skipped) == "deeper than max_depth=2" and skipped.depth == 3
    assert site.hits["/i3.xml"] == 0 and site.hits["/i2.xml"] == 1


async def test_sitemap_budget(site: Site) -> None:
    """G60: max_sitemaps bounds the sitemaps fetched per target."""
    children = [site.url(f"/c{i}.xml") for i in range(10)]
    site.add("/index.xml", index(children))
    for i in range(10):
        site.add(f"/c{i}.xml", urlset(pages(site, f"c{i}", 1)))
    records, run = await collect(site.url("/index.xml"), options=FAST.replace(max_sitemaps=4))
    assert len(records) == 3 and run.stats.sitemaps_ok == 4
    assert run.stats.sitemaps_skipped == 7
    assert sum(site.hits[f"/c{i}.xml"] for i in range(10)) == 3


async def test_url_budget_stops_run(site: Site) -> None:
    """max_urls ends the run: exactly that many records; the reason is in the stats."""
    site.add("/index.xml", index([site.url(f"/c{i}.xml") for i in range(5)]))
    for i in range(5):
        site.add(f"/c{i}.xml", urlset(pages(site, f"c{i}", 10)))
    records, run = await collect(
        site.url("/index.xml"), concurrency=1, options=FAST.replace(max_urls=15)
    )
    assert len(records) == 15 and run.stats.urls_emitted == 15
    assert run.stats.stopped == Stopped("budget", "max_urls", 15)
    assert sum(site.hits[f"/c{i}.xml"] for i in range(5)) < 5


async def test_failing_children_beside_good_ones(site: Site) -> None:
    """G62: 404, 500, 503+Retry-After and 429 children fail alone; siblings' URLs all arrive."""
    good = [site.url(f"/good{i}.xml") for i in range(3)]
    bad = {
        "/missing.xml": Reply(b"", status=404),
        "/error.xml": Reply(b"", status=500),
        "/busy.xml": Reply(b"", status=503, headers={"Retry-After": "0"}),
        "/limited.xml": Reply(b"", status=429, headers={"Retry-After": "3600"}),
    }
    site.add("/index.xml", index([good[0], *(site.url(p) for p in bad), *good[1:]]))
    for path, reply in bad.items():
        site.add(path, reply)
    expected = []
    for i, url in enumerate(good):
        urls = pages(site, f"g{i}", 4)
        expected += urls
        site.add(url.removeprefix(site.base), urlset(urls))
    records, run = await collect(site.url("/index.xml"))
    assert sorted(r.url for r in records) == sorted(expected)
    failed = {n.url.removeprefix(site.base): n.reason for n in run.failures()}
    assert set(failed) == set(bad)
    assert failed["/missing.xml"] == "HTTP 404" and failed["/busy.xml"] == "HTTP 503"
    assert "3600" in (failed["/limited.xml"] or "")
    limited = node_by_url(run, site.url("/limited.xml"))
    assert [p.code for p in limited.problems] == ["retry-after"]
    assert site.hits["/missing.xml"] == 1 and site.hits["/limited.xml"] == 1
    assert site.hits["/error.xml"] == site.hits["/busy.xml"] == 1 + FAST.limits.retries
    assert (run.stats.sitemaps_ok, run.stats.sitemaps_failed) == (4, 4)


async def test_retry_after_is_honoured(site: Site) -> None:
    """503 with Retry-After: 1 waits about a second (not the tiny backoff), then succeeds."""
    state = {"calls": 0}

    async def flaky(request: web.Request) -> web.StreamResponse:
        state["calls"] += 1
        if state["calls"] == 1:
            return web.Response(status=503, headers={"Retry-After": "1"})
        return web.Response(body=urlset(pages(site, "p", 2)), content_type="application/xml")

    site.add("/s.xml", flaky)
    started = time.monotonic()
    records, run = await collect(site.url("/s.xml"))
    assert len(records) == 2 and state["calls"] == 2
    assert time.monotonic() - started >= 0.9
    assert run.tree[0].ok


async def test_first_record_before_last_sitemap(site: Site) -> None:
    """Records stream: the first arrives while a sibling sitemap is still unanswered."""
    release = asyncio.Event()

    async def gated(request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(body=urlset(pages(site, "late", 2)), content_type="application/xml")

    site.add("/index.xml", index([site.url("/early.xml"), site.url("/late.xml")]))
    site.add("/early.xml", urlset(pages(site, "early", 2)))
    site.add("/late.xml", gated)
    async with SitemapReader(options=FAST) as reader:
        stream = reader.urls(site.url("/index.xml"))
        first = await anext(stream)
        assert first.url == site.url("/early/0") and not release.is_set()
        assert reader.last_run is not None and reader.last_run.stats.sitemaps_queued == 1
        assert node_by_url(reader.last_run, site.url("/late.xml")).status is None
        release.set()
        rest = [r.url async for r in stream]
    assert sorted([first.url, *rest]) == sorted(pages(site, "early", 2) + pages(site, "late", 2))


async def test_slow_consumer_holds_producers(site: Site) -> None:
    """Backpressure: a stalled consumer stalls fetching instead of buffering the site."""
    children = [site.url(f"/c{i}.xml") for i in range(40)]
    site.add("/index.xml", index(children))
    for i in range(40):
        site.add(f"/c{i}.xml", urlset(pages(site, f"c{i}", 5)))
    async with SitemapReader(options=FAST, concurrency=2, per_host=2) as reader:
        stream = reader.urls(site.url("/index.xml"))
        await anext(stream)
        for _ in range(50):  # let the producers run as far as they can
            await asyncio.sleep(0)
        await asyncio.sleep(0.2)
        fetched = sum(site.hits[f"/c{i}.xml"] for i in range(40))
        await stream.aclose()
    assert fetched < 20


async def test_scope_filters_other_hosts(site: Site) -> None:
    """Scope site drops URLs on unrelated hosts (counted); scope any keeps them."""
    urls = [site.url("/in"), "https://elsewhere.example/out", "https://sub.127.0.0.1.nip/x"]
    site.add("/s.xml", urlset(urls))
    records, run = await collect(site.url("/s.xml"))
    assert [r.url for r in records] == [site.url("/in")]
    assert run.stats.urls_out_of_scope == 2 and run.tree[0].urls == 3
    records, _ = await collect(site.url("/s.xml"), scope="any")
    assert len(records) == 3


async def test_cross_submitted_sitemap_on_other_host(make_site: object) -> None:
    """A robots.txt on host A listing a sitemap on host B: A's URLs in it are in scope."""
    a = await make_site("127.0.0.1")  # type: ignore[operator]
    b = await make_site("127.0.0.2")  # type: ignore[operator]
    a.add("/robots.txt", f"Sitemap: {b.url('/for-a.xml')}\n")
    b.add("/for-a.xml", urlset([a.url("/page"), "https://unrelated.example/x"]))
    records, run = await collect(a.base + "/")
    assert [r.url for r in records] == [a.url("/page")]
    assert run.stats.urls_out_of_scope == 1
    records, _ = await collect(a.base + "/", scope="host")
    assert records == []


async def test_dedupe_across_sitemaps_and_targets(site: Site) -> None:
    """The same URL in two sitemaps (and two targets) is emitted once; repeats are counted."""
    site.add("/a.xml", urlset(pages(site, "p", 3)))
    site.add("/b.xml", urlset(pages(site, "p", 5)))
    records, run = await collect([site.url("/a.xml"), site.url("/b.xml"), site.url("/a.xml")])
    assert sorted(r.url for r in records) == sorted(pages(site, "p", 5))
    assert run.stats.urls_duplicate == 3 and len(run.tree) == 3
    assert str(run.tree[2].skipped) == "already visited" and site.hits["/a.xml"] == 1


async def test_unreachable_target_raises_discovery_error() -> None:
    """Nothing listening: DiscoveryError with a one-line reason; tree() reports it instead."""
    with closed_port() as port:
        with pytest.raises(DiscoveryError) as caught:
            await collect(f"http://127.0.0.1:{port}/")
        run = await tree(f"http://127.0.0.1:{port}/")
    assert "cannot connect" in str(caught.value) and "\n" not in str(caught.value)
    assert run.error is not None and run.tree[0].failed


async def test_no_sitemap_anywhere_raises(site: Site) -> None:
    """A reachable site without any sitemap: DiscoveryError naming the probes."""
    with pytest.raises(DiscoveryError, match="none of the 6 well-known paths"):
        await collect(site.base + "/")
    with pytest.raises(DiscoveryError, match="HTTP 404"):
        await collect(site.url("/nope.xml"))


async def test_bare_domain_falls_back_to_http(site: Site) -> None:
    """example.com form: https first; a plain-http server makes it fall back to http."""
    site.add("/robots.txt", f"Sitemap: {site.url('/s.xml')}\n")
    site.add("/s.xml", urlset(pages(site, "p", 2)))
    records, run = await collect(site.host)
    assert len(records) == 2
    root = run.tree[0]
    assert root.url == site.url("/robots.txt")
    assert [p.code for p in root.problems] == ["https-unavailable"] and root.ok
    site.add("/sitemap.xml", urlset(pages(site, "g", 1)))
    robots_hits = site.hits["/robots.txt"]
    records, run = await collect(site.host, robots=False)
    assert [r.url for r in records] == pages(site, "g", 1)
    assert site.hits["/robots.txt"] == robots_hits and site.hits["/"] == 0
    assert run.tree[0].children[0].url == site.url("/sitemap.xml")


async def test_robots_disabled_and_guess_disabled(site: Site) -> None:
    """robots=False never asks for robots.txt; guess=False probes nothing."""
    site.add("/robots.txt", f"Sitemap: {site.url('/listed.xml')}\n")
    site.add("/sitemap.xml", urlset(pages(site, "g", 1)))
    records, run = await collect(site.base + "/", robots=False)
    assert [r.url for r in records] == pages(site, "g", 1) and site.hits["/robots.txt"] == 0
    assert str(run.tree[0].skipped) == "robots.txt not read (robots off)"
    site.add("/robots.txt", "User-agent: *\n")
    with pytest.raises(DiscoveryError, match="probing well-known paths is off"):
        await collect(site.base + "/", guess=False)
    assert site.hits["/sitemap.xml"] == 1


async def test_local_file_index_with_remote_children(site: Site, tmp_path: object) -> None:
    """A local index file: no scope filter; its absolute children are fetched."""
    from pathlib import Path

    path = Path(str(tmp_path)) / "index.xml"
    path.write_bytes(index([site.url("/a.xml")]))
    site.add("/a.xml", urlset([*pages(site, "a", 2), "https://other.example/x"]))
    records, run = await collect(str(path))
    assert len(records) == 3 and run.tree[0].kind == "file" and run.tree[0].ok


async def test_stdin_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """'-' reads standard input in chunks (here a text sitemap)."""
    import io
    import sys

    class FakeStdin:
        buffer = io.BufferedReader(io.BytesIO(b"https://a.example/1\nhttps://a.example/2\n"))

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    records, run = await collect("-")
    assert [r.url for r in records] == ["https://a.example/1", "https://a.example/2"]
    assert run.tree[0].kind == "stdin" and run.tree[0].format == "text"


async def test_ranked_order(site: Site) -> None:
    """ranked=True yields by descending score, ties by URL."""
    body = (
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{site.url('/low')}</loc><priority>0.1</priority></url>"
        f"<url><loc>{site.url('/high')}</loc><priority>0.9</priority></url>"
        f"<url><loc>{site.url('/b')}</loc></url><url><loc>{site.url('/a')}</loc></url>"
        "</urlset>"
    )
    site.add("/s.xml", body)
    async with SitemapReader(options=FAST) as reader:
        ranked = [r.url async for r in reader.urls(site.url("/s.xml"), ranked=True)]
    assert ranked == [site.url(p) for p in ("/high", "/a", "/b", "/low")]


async def test_custom_score_function(site: Site) -> None:
    """score= replaces the default score of every emitted record."""
    site.add("/s.xml", urlset(pages(site, "p", 3)))
    records, _ = await collect(site.url("/s.xml"), score=lambda rec, now: len(rec.url) / 1000)
    assert [r.score for r in records] == [len(r.url) / 1000 for r in records]


async def test_usage_errors() -> None:
    """Bad options and use outside `async with` are UsageErrors, raised up front."""
    with pytest.raises(UsageError):
        SitemapReader(scope="planet")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        SitemapReader(concurrency=0)
    reader = SitemapReader()
    with pytest.raises(UsageError):
        await reader.tree("example.com")
    async with SitemapReader() as reader:
        with pytest.raises(UsageError):
            await reader.tree("ftp://example.com/")


async def test_slow_consumer_does_not_time_out_sitemaps(site: Site) -> None:
    """The per-sitemap deadline pauses while the consumer holds the queue full."""
    # About 12 batches: more than the channel holds (CHANNEL_BATCHES), so the reader
    # waits on the consumer.
    urls = [site.url(f"/page/{i}") for i in range(12_000)]
    site.add("/s.xml", urlset(urls))
    # The budget covers parsing too (the deadline is checked while parsing), so it is
    # far above the parse time of 12,000 URLs however loaded the machine (about 0.05 s
    # quiet; 2 s of budget was seen spent at load 8 for 20,000); the consumer is slower.
    async with SitemapReader(options=FAST, timeout=6.0) as reader:
        stream = reader.urls(site.url("/s.xml"))
        first = await anext(stream)
        await asyncio.sleep(6.5)  # a consumer slower than the whole time budget
        rest = [r.url async for r in stream]
        run = reader.last_run
    assert [first.url, *rest] == urls
    assert run is not None and run.tree[0].ok and run.tree[0].problems == []


async def test_index_entry_syntax_variants(site: Site) -> None:
    """G58: CDATA lastmod, an entity in the URL, a date-only lastmod, a CDATA-split loc."""
    body = (
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{site.url('/a.xml')}</loc>"
        f"<lastmod><![CDATA[2024-03-05T10:00:00Z]]></lastmod></sitemap>"
        f"<sitemap><loc>{site.url('/b.xml?x=1&amp;y=2')}</loc></sitemap>"
        f"<sitemap><loc>{site.url('/c.xml')}</loc><lastmod>2024-03-05</lastmod></sitemap>"
        f"<sitemap><loc>{site.url('/d')}<![CDATA[.xml]]></loc></sitemap>"
        "</sitemapindex>"
    )
    site.add("/index.xml", body)
    for name in "abcd":
        site.add(f"/{name}.xml", urlset([site.url(f"/{name}/1")]))
    records, run = await collect(site.url("/index.xml"))
    assert sorted(r.url for r in records) == [site.url(f"/{n}/1") for n in "abcd"]
    assert site.hits["/b.xml?x=1&y=2"] == 1
    assert [c.ok for c in run.tree[0].children] == [True] * 4


async def test_robots_bad_utf8_line_and_bare_url(site: Site) -> None:
    """J76/J80: a Sitemap line with invalid UTF-8 is skipped; a bare URL line counts."""
    body = (
        b"User-agent: *\nSitemap: " + site.url("/bad\xff.xml").encode("latin-1") + b"\n"
        b"Sitemap: " + site.url("/good.xml").encode() + b"\n" + site.url("/bare.xml").encode()
    )
    site.add("/robots.txt", Reply(body, content_type="text/plain"))
    site.add("/good.xml", urlset(pages(site, "g", 1)))
    site.add("/bare.xml", urlset(pages(site, "b", 1)))
    records, run = await collect(site.base + "/")
    assert [c.url for c in run.tree[0].children] == [site.url("/good.xml"), site.url("/bare.xml")]
    assert len(records) == 2


async def test_truncated_gzip_keeps_records(site: Site) -> None:
    """K88: a gzip body cut short yields the records decoded so far, and a problem."""
    urls = pages(site, "p", 2000)
    body = gz(urlset(urls))
    site.add("/s.xml.gz", Reply(body[: len(body) // 2], content_type="application/gzip"))
    records, run = await collect(site.url("/s.xml.gz"))
    node = run.tree[0]
    assert 0 < len(records) < 2000 and [r.url for r in records] == urls[: len(records)]
    assert node.failed and not node.complete and node.problems


async def test_strict_location_rule_over_http(site: Site) -> None:
    """E43 with strict=True: URLs outside the sitemap's directory are dropped."""
    site.add("/catalog/s.xml", urlset([site.url("/catalog/a"), site.url("/other/b")]))
    records, _ = await collect(site.url("/catalog/s.xml"), strict=True)
    assert [r.url for r in records] == [site.url("/catalog/a")]
    records, _ = await collect(site.url("/catalog/s.xml"))
    assert len(records) == 2


async def test_tree_nodes_carry_last_modified_and_download_time(site: Site) -> None:
    """Each fetched node keeps the response's Last-Modified as sent and its download time;
    both reach tree --json's shape and the tree DataFrame's columns."""
    stamp = "Tue, 01 Dec 2026 08:00:00 GMT"
    site.add("/a.xml", urlset(pages(site, "a", 2)), headers={"Last-Modified": stamp})
    _, run = await collect(site.url("/a.xml"))
    (node,) = run.tree
    assert node.last_modified == stamp
    assert node.seconds is not None and 0.0 <= node.seconds < 10.0
    shape = node.to_dict()
    assert shape["last_modified"] == stamp and shape["seconds"] == round(node.seconds, 4)
    frame = sr.tree_dataframe(run)
    assert frame.loc[0, "last_modified"] == stamp and frame.loc[0, "seconds"] == node.seconds


# --------------------------------------------------------------------------- trust per site


def on_name(site: Site, host: str, path: str = "") -> str:
    """``path`` on ``site``'s port under the made-up name ``host``."""
    return f"http://{host}:{site.host.rsplit(':', 1)[1]}{path}"


async def test_a_typed_private_name_is_trusted_for_its_own_target_only(site: Site) -> None:
    """Two targets of one run: intranet.test, typed, resolves to loopback and is read; the
    public target's index lists a child on intranet.test, which is refused (blocked, never
    requested), not fetched on the other target's trust."""
    site.add("/own.xml", urlset([on_name(site, "intranet.test", "/own-page")]))
    site.add("/index.xml", index([on_name(site, "intranet.test", "/secret.xml")]))
    site.add("/secret.xml", urlset([on_name(site, "intranet.test", "/secret-page")]))
    targets = [
        on_name(site, "intranet.test", "/own.xml"),
        on_name(site, "public.example", "/index.xml"),
    ]
    resolver = FakeResolver("intranet.test", "public.example")
    records, run = await collect(targets, resolver=resolver, scope="any")
    assert [r.url for r in records] == [on_name(site, "intranet.test", "/own-page")]
    assert site.hits["/secret.xml"] == 0
    node = node_by_url(run, on_name(site, "intranet.test", "/secret.xml"))
    assert node.problems[0].code == "blocked"
    assert "intranet.test resolves to 127.0.0.1" in node.problems[0].message


async def test_a_targets_proxy_host_is_no_other_targets(
    make_site: Callable[[str], Awaitable[Site]],
) -> None:
    """Target A goes through its own proxy, proxy.test (a name resolving to loopback);
    target B's index lists a child on proxy.test itself: refused, since the proxy's name is
    trusted only for the requests that go through it (A's, which the proxy answered)."""
    proxy, site = await make_site("127.0.0.1"), await make_site("127.0.0.1")
    proxy.add("/own.xml", urlset(["http://behind.test/page"]))  # the proxy answers for A
    proxy.add("/secret.xml", urlset([on_name(proxy, "proxy.test", "/secret-page")]))
    site.add("/index.xml", index([on_name(proxy, "proxy.test", "/secret.xml")]))
    own = {"http://behind.test/own.xml": {"proxy": on_name(proxy, "proxy.test")}}
    targets = ["http://behind.test/own.xml", on_name(site, "public.example", "/index.xml")]
    resolver = FakeResolver("proxy.test", "public.example")
    records, run = await collect(targets, resolver=resolver, per_target=own, scope="any")
    assert [r.url for r in records] == ["http://behind.test/page"]
    assert proxy.hits["/own.xml"] == 1 and proxy.hits["/secret.xml"] == 0
    node = node_by_url(run, on_name(proxy, "proxy.test", "/secret.xml"))
    assert node.problems[0].code == "blocked"


async def test_a_targets_own_proxy_carries_its_own_site_only(
    make_site: Callable[[str], Awaitable[Site]],
) -> None:
    """per_target proxy: the target's own sitemaps go through it; a child its index lists
    on another site goes as the run's requests do (direct), not through that proxy."""
    proxy, other = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    proxy.add("/index.xml", index([other.url("/child.xml")]))  # the proxy answers for A
    other.add("/child.xml", urlset([other.url("/page")]))
    own = {"http://behind.test/index.xml": {"proxy": proxy.base}}
    records, _ = await collect(
        "http://behind.test/index.xml", per_target=own, scope="any", allow_private=True
    )
    assert [r.url for r in records] == [other.url("/page")]
    assert proxy.hits["/index.xml"] == 1 and proxy.hits["/child.xml"] == 0
    assert other.hits["/child.xml"] == 1


@pytest.mark.parametrize("spelling", ["bücher.example", "xn--bcher-kva.example", "BÜCHER.example"])
async def test_an_idn_target_is_one_site_whatever_its_spelling(site: Site, spelling: str) -> None:
    """An IDN target typed in Unicode, as xn-- or in capitals: its --header reaches it, its
    typed name (resolving to loopback) is trusted as typed, and its URLs are in its site."""
    ascii_name = "xn--bcher-kva.example"
    site.add("/s.xml", urlset([on_name(site, "bücher.example", "/seite")]))
    resolver = FakeResolver(ascii_name)
    records, run = await collect(
        on_name(site, spelling, "/s.xml"), resolver=resolver, headers={"X-Token": "t0ken"}
    )
    assert [r.url for r in records] == [on_name(site, ascii_name, "/seite")], run.tree[0].problems
    assert [r.headers.get("X-Token") for r in site.requests] == ["t0ken"]
