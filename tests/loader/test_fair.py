"""Point 4 of issue 32: the loader hands records out round-robin across hosts, best first
within each host when asked (the policies themselves, sitemap_reader/delivery/handout.py:
tests/delivery/test_handout.py)."""

from __future__ import annotations

from pathlib import Path

import sitemap_reader as sr
from tests.crawl.crawl_kit import FAST
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
