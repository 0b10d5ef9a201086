"""Parsing in worker processes: same records, tree and counts as in-process; failures contained."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web

from sitemap_reader.crawl import SitemapReader
from sitemap_reader.crawl.pool import ParsePool, WorkerFailed
from sitemap_reader.discovery.parsing import BodySpec
from sitemap_reader.errors import UsageError
from sitemap_reader.options.limits import Limits
from sitemap_reader.records import UrlRecord
from sitemap_reader.records.scoring import plain_builder
from tests.crawl.crawl_kit import FAST, SITEMAP_NS, Site, gz, index

FREQS = ("daily", "weekly", "monthly", "yearly", "bogus")
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
XHTML_NS = "http://www.w3.org/1999/xhtml"


def big_urlset(site: Site, child: int, count: int) -> bytes:
    """``count`` entries with every plain field, some images, alternates, bad values and
    repeats (a few percent of the entries), so both wire forms and problems are crossed."""
    parts = [
        f'<?xml version="1.0"?>\n<urlset xmlns="{SITEMAP_NS}" '
        f'xmlns:image="{IMAGE_NS}" xmlns:xhtml="{XHTML_NS}">'
    ]
    for n in range(count):
        url = site.url(f"/c{child}/p{n % (count - 50)}.html")  # the last 50 repeat earlier ones
        day = 1 + n % 28
        lastmod = f"2024-0{1 + n % 9}-{day:02d}" if n % 7 else "not a date"
        extra = ""
        if n % 97 == 0:
            extra += f"<image:image><image:loc>{site.url(f'/i/{n}.jpg')}</image:loc></image:image>"
        if n % 131 == 0:
            alt = site.url(f"/de/c{child}/p{n}.html")
            extra += f'<xhtml:link rel="alternate" hreflang="de" href="{alt}"/>'
        parts.append(
            f"<url><loc>{url}</loc><lastmod>{lastmod}</lastmod>"
            f"<changefreq>{FREQS[n % 5]}</changefreq><priority>{(n % 11) / 10}</priority>"
            f"{extra}</url>"
        )
    parts.append("</urlset>\n")
    return "".join(parts).encode()


def serve_site(site: Site, children: int = 4, count: int = 6000) -> None:
    """robots.txt -> index -> ``children`` big children, every other one gzipped."""
    names = [f"/c{i}.xml.gz" if i % 2 else f"/c{i}.xml" for i in range(children)]
    site.add("/robots.txt", f"User-agent: *\nSitemap: {site.url('/index.xml')}\n")
    site.add("/index.xml", index([site.url(n) for n in names]))
    for i, name in enumerate(names):
        body = big_urlset(site, i, count)
        if name.endswith(".gz"):
            site.add(name, gz(body), content_type="application/x-gzip")
        else:
            site.add(name, body)


async def crawl(site: Site, processes: int, **options: Any) -> tuple[list[UrlRecord], Any, Any]:
    """Every record, the run, and the pool's counters (remote jobs, lost workers)."""
    options.setdefault("options", FAST)
    async with SitemapReader(processes=processes, **options) as reader:
        pool = reader.pool
        if pool is not None:  # small test bodies count as large here
            pool.min_bytes, pool.after_bytes = 1024, 1 << 40
        records = [r async for r in reader.urls(site.base + "/")]
        run = reader.last_run
        counters = (pool.remote_jobs, pool.lost_workers) if pool is not None else (0, 0)
    return records, run, counters


def by_sitemap(records: list[UrlRecord]) -> dict[str | None, list[dict[str, Any]]]:
    """Records per sitemap, in the order they came (the order guarantee)."""
    out: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        out[record.sitemap].append(record.to_dict())
    return dict(out)


def shape(run: Any) -> dict[str, Any]:
    """The run as JSON without its wall time and the nodes' download times."""
    data: dict[str, Any] = run.to_dict()
    data["stats"].pop("seconds")

    def untimed(nodes: list[dict[str, Any]]) -> None:
        for node in nodes:
            node.pop("seconds", None)
            untimed(node["children"])

    untimed(data["tree"])
    return data


async def test_two_processes_give_what_one_gives(site: Site) -> None:
    """Same site, processes=0 vs processes=2: identical records (in order), tree and counts."""
    serve_site(site)
    here, run_here, _ = await crawl(site, 0)
    there, run_there, (remote, lost) = await crawl(site, 2)
    assert remote >= 2 and lost == 0  # the first big body stays here, the others went out
    assert len(here) == 4 * 5950 and len(there) == len(here)
    assert by_sitemap(there) == by_sitemap(here)
    assert [r.score for r in there] != [] and {r.url for r in there} == {r.url for r in here}
    assert shape(run_there) == shape(run_here)
    child = run_here.tree[0].children[0].children[1]
    assert {p.code for p in child.problems} >= {"bad-date", "bad-changefreq"}


async def test_small_run_starts_no_process(site: Site) -> None:
    """Bodies under the threshold: no worker process is ever started."""
    site.add("/robots.txt", f"User-agent: *\nSitemap: {site.url('/s.xml')}\n")
    one = f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{site.url("/a")}</loc></url></urlset>'
    site.add("/s.xml", one)
    async with SitemapReader(processes=2, options=FAST) as reader:
        records = [r async for r in reader.urls(site.base + "/")]
        assert reader.pool is not None and not reader.pool.started
    assert [r.url for r in records] == [site.url("/a")]


async def test_killed_worker_costs_only_its_sitemap(site: Site) -> None:
    """A worker killed mid-parse: its sitemap gets an internal problem, the others finish."""
    serve_site(site, children=3, count=3000)
    release = asyncio.Event()
    body = big_urlset(site, 9, 3000)

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": str(len(body))})
        response.content_type = "application/xml"
        await response.prepare(request)
        await response.write(body[: len(body) // 2])
        await release.wait()  # the worker now holds half a body: kill it here
        await response.write(body[len(body) // 2 :])
        return response

    children = [site.url("/c0.xml"), site.url("/c1.xml"), site.url("/slow.xml")]
    site.add("/index.xml", index(children))
    site.add("/c1.xml", big_urlset(site, 1, 3000))
    site.add("/slow.xml", slow)

    async with SitemapReader(processes=1, options=FAST) as reader:
        pool = reader.pool
        assert pool is not None
        pool.min_bytes, pool.after_bytes = 1024, 1 << 40

        async def kill_when_parsing() -> None:
            while not any(w.jobs for w in pool.workers) or not site.hits["/slow.xml"]:
                await asyncio.sleep(0.01)  # polling a condition, not timing the test
            holder = next(w for w in pool.workers if w.jobs)
            os.kill(holder.pid, signal.SIGKILL)
            while holder.alive:
                await asyncio.sleep(0.01)
            release.set()

        killer = asyncio.create_task(kill_when_parsing())
        records = [r async for r in reader.urls(site.base + "/")]
        await killer
        run = reader.last_run
    assert run is not None
    nodes = {n.url: n for n in run.nodes()}
    failed = [n for n in nodes.values() if n.failed]
    assert len(failed) >= 1
    (problem,) = [p for p in failed[0].problems if p.code == "internal"]
    assert "parsing process" in problem.message and "signal 9" in problem.message
    kept = {r.sitemap for r in records}
    for node in nodes.values():
        if node.kind == "sitemap" and node.format == "urlset" and not node.failed:
            assert node.url in kept and node.urls == 3000
    assert sum(1 for n in nodes.values() if n.ok and n.format == "urlset") >= 1


async def test_worker_error_is_the_jobs_failure() -> None:
    """A message the worker cannot serve fails that job only; the worker serves the next."""
    pool = ParsePool(1, min_bytes=1)
    now = datetime(2024, 1, 1, tzinfo=UTC)
    build = plain_builder(now)
    spec = BodySpec("http://a.test/s.xml", None, False, Limits(), now, build, size=10)
    assert pool.parser(spec, seen=0, seconds=5.0) is None  # starts the pool
    try:
        broken = pool.parser(spec, seen=0, seconds=5.0)
        assert broken is not None
        broken.worker.send(("open", broken.number, ("too", "few")))  # a bad spec: ValueError
        while not broken.settled:
            await broken.arrival()
        with pytest.raises(WorkerFailed, match="ValueError"):
            broken.feed(b"")
        good = pool.parser(spec, seen=0, seconds=5.0)
        assert good is not None
        body = f'<urlset xmlns="{SITEMAP_NS}"><url><loc>http://a.test/x</loc></url></urlset>'
        items = good.feed(body.encode())
        good.end_of_body()
        while not good.settled:
            await good.arrival()
        items += good.close()
        assert [getattr(i, "url", None) for i in items] == ["http://a.test/x"]
        assert good.format == "urlset" and good.complete
    finally:
        await asyncio.to_thread(pool.close)


def test_processes_must_not_be_negative() -> None:
    """processes=-1 is a usage error."""
    with pytest.raises(UsageError, match="processes"):
        SitemapReader(processes=-1)
