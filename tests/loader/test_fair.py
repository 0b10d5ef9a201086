"""Point 4 of issue 32: the loader hands records out round-robin across hosts, best first
within each host when asked (the policies themselves, sitemap_reader/delivery/handout.py:
tests/delivery/test_handout.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web

import sitemap_reader as sr
from tests.crawl.crawl_kit import FAST, Handler, Site
from tests.crawl.crawl_kit import start as serve
from tests.loader.conftest import MakeSite


async def test_loader_hands_out_round_robin_across_sites(
    make_site: MakeSite, tmp_path: Path
) -> None:
    """Three sites read whole before the first hand-out: the loader turns round the
    three hosts, each site's own URLs best first (best_first=True)."""
    sites = [await make_site(1, 12) for _ in range(3)]
    async with sr.SitemapLoader(
        [s.base for s in sites], progress=tmp_path / "p.db", best_first=True, options=FAST
    ) as loader:
        assert loader._intake is not None
        await loader._intake  # everything read: the window holds the three sites
        taken = []
        while (record := await loader.next()) is not None:
            taken.append(record)
            await loader.ack(record.url)
    hosts = [r.url.split("/")[2] for r in taken]
    assert len(taken) == 36
    for start in range(0, len(hosts), 3):
        assert len(set(hosts[start : start + 3])) == 3, hosts
    for site in sites:
        scores = [r.score for r in taken if r.url.startswith(site.base)]
        assert scores == sorted(scores, reverse=True)


async def test_intake_order_keeps_the_old_behaviour(make_site: MakeSite, tmp_path: Path) -> None:
    """order="intake": records leave in the order they were read (one site after the
    other when read that way)."""
    sites = [await make_site(1, 5) for _ in range(2)]
    async with sr.SitemapLoader(
        [s.base for s in sites], progress=tmp_path / "p.db", order="intake", options=FAST
    ) as loader:
        assert loader._intake is not None
        await loader._intake
        taken = []
        while (record := await loader.next()) is not None:
            taken.append(record.url)
            await loader.ack(record.url)
    firsts = [u for u in taken if u.startswith(sites[0].base)]
    block = taken.index(firsts[0])
    assert taken[block : block + 5] == firsts


#: The small sites beside the big one, by their number of URLs.
SMALL = (12, 20, 37)


def _urlset(urls: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return (
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()
    )


async def test_small_sites_beside_a_site_of_300_subdomains_get_their_share(
    tmp_path: Path,
) -> None:
    """A site of 10,000 URLs spread over 300 subdomains, read first, and three small
    sites (12, 20 and 37 URLs) read after it, buffer=100: each small site's k-th record
    is handed out within buffer + 2 * S * k hand-outs (S = 4 sites waiting), the bound
    the loader documents; the big site is one site, not 300 (before: the small sites'
    last records came at hand-out 1,500 to 2,700 here, 3,274 to 11,276 beside a
    200,000-URL site, a turn each per 300 of the big one's)."""
    big_sent = asyncio.Event()

    async def big_sitemap(request: web.Request) -> web.StreamResponse:
        urls = [f"http://h{n % 300}.big.example/p{n}" for n in range(10_000)]
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        await response.write(_urlset(urls))
        big_sent.set()  # the small sites answer after it: their records are read later
        return response

    def small_sitemap(count: int) -> Handler:
        async def handler(request: web.Request) -> web.Response:
            await big_sent.wait()
            origin = str(request.url.origin())
            body = _urlset([f"{origin}/page/{n}" for n in range(count)])
            return web.Response(body=body, content_type="application/xml")

        return handler

    sites = [Site() for _ in range(1 + len(SMALL))]
    sites[0].add("/s.xml", big_sitemap)
    for site, count in zip(sites[1:], SMALL, strict=True):
        site.add("/s.xml", small_sitemap(count))
    servers = [await serve(site) for site in sites]
    try:
        targets = [site.url("/s.xml") for site in sites]
        async with sr.SitemapLoader(
            targets, progress=tmp_path / "p.db", buffer=100, scope="any", options=FAST
        ) as loader:
            assert loader._intake is not None
            done, _ = await asyncio.wait({loader._intake}, timeout=60)
            assert done, "the loader did not read the small sites past its buffer"
            taken = []
            while (record := await loader.next()) is not None:
                taken.append(record.url)
                await loader.ack(record.url)
    finally:
        for server in servers:
            await server.close()
    assert len(taken) == 10_000 + sum(SMALL)
    for site, count in zip(sites[1:], SMALL, strict=True):
        places = [n for n, url in enumerate(taken, 1) if url.startswith(site.base)]
        assert len(places) == count
        for k, place in enumerate(places, 1):
            assert place <= 100 + 2 * 4 * k, (site.base, k, place)
