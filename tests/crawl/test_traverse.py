"""The aiohttp driver keeps the core's promises on a real server: a sitemap whose handling
raises fails alone, and a body that never ends (or inflates to nothing) stops at the wire
cap, not at the timeout."""

from __future__ import annotations

import gzip
import time
from datetime import datetime

from aiohttp import web

from sitemap_reader.records import UrlRecord
from tests.crawl.crawl_kit import FAST, SITEMAP_NS, Site, collect, gz, urlset


async def test_an_exception_in_one_child_costs_only_that_child(site: Site) -> None:
    """A scorer raising on one child's records: that child fails (internal), siblings go on."""

    def score(record: UrlRecord, now: datetime) -> float:
        if "/bad/" in record.url:
            raise KeyError("no such field")
        return 0.5

    site.add("/robots.txt", f"Sitemap: {site.url('/bad.xml')}\nSitemap: {site.url('/ok.xml')}\n")
    site.add("/bad.xml", urlset([site.url("/bad/1")]))
    site.add("/ok.xml", urlset([site.url("/ok/1"), site.url("/ok/2")]))
    records, run = await collect(site.base + "/", score=score)
    assert sorted(r.url for r in records) == [site.url("/ok/1"), site.url("/ok/2")]
    bad = next(n for n in run.nodes() if n.url.endswith("/bad.xml"))
    assert bad.failed and bad.problems[0].code == "internal"
    assert "KeyError" in (bad.reason or "")
    assert run.stats.sitemaps_failed == 1 and run.stats.sitemaps_ok == 1


async def test_endless_nul_padding_stops_at_the_wire_cap(site: Site) -> None:
    """A gzip member then NUL bytes forever: read up to the wire cap, records kept, fast."""
    member = gz(urlset([site.url("/a"), site.url("/b")]))

    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/x-gzip"})
        await response.prepare(request)
        await response.write(member)
        padding = b"\0" * 65536
        while True:  # until the client goes away
            await response.write(padding)

    site.add("/s.xml.gz", endless)
    options = FAST.replace(max_decompressed_bytes=1 << 20, timeout=30.0)
    limits = options.limits
    started = time.monotonic()
    records, run = await collect(site.url("/s.xml.gz"), options=options)
    assert time.monotonic() - started < 20  # bounded by bytes, far from the 30 s timeout
    assert [r.url for r in records] == [site.url("/a"), site.url("/b")]
    node = run.tree[0]
    assert node.problems[0].code == "limit-wire-bytes"
    assert limits.wire_cap() < node.bytes <= limits.wire_cap() + (1 << 18)
    assert gzip.decompress(member)  # the member itself is fine


async def test_the_deadline_ends_a_slow_parse_inside_one_chunk(site: Site) -> None:
    """One 64 KiB read of gzip that expands to ~64 MiB of entries: parsing it takes
    seconds with no await in between, yet the 1 s budget ends it about on time."""
    entry = f"<url><loc>{site.url('/same')}</loc></url>".encode()
    head = f'<urlset xmlns="{SITEMAP_NS}">'.encode()
    body = gz(head + entry * (60 * 1024 * 1024 // len(entry)))
    assert len(body) < 64 * 1024 * 4  # a few reads at most; the first alone is seconds of work
    site.add("/s.xml.gz", body, content_type="application/x-gzip")
    started = time.thread_time()  # CPU time: the whole parse would be seconds of it
    records, run = await collect(site.url("/s.xml.gz"), timeout=1.0)
    spent = time.thread_time() - started  # a busy machine only lowers it (1 s is wall time)
    node = run.tree[0]
    assert node.problems[0].code == "timeout", node.problems
    assert spent < 4.0, f"took {spent:.1f} s of CPU time"
    assert [r.url for r in records] == [site.url("/same")]  # what came before is kept
