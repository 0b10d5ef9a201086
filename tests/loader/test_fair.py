"""Point 4 of issue 32: records are handed out round-robin across hosts, best first
within each host when asked (sitemap_reader/delivery/handout.py and the loader's window)."""

from __future__ import annotations

from pathlib import Path

import sitemap_reader as sr
from sitemap_reader.delivery.handout import ByHost, HandOut, InOrder, Row, make_policy
from sitemap_reader.records import UrlRecord
from tests.crawl.crawl_kit import FAST
from tests.loader.conftest import MakeSite


def _rows(hosts: str, per_host: int) -> list[Row]:
    """Rows read host by host (all of a's, then all of b's...), scores rising."""
    urls = [f"http://{h}/{n}" for h in hosts for n in range(per_host)]
    return [(i, UrlRecord(u, score=(i % per_host) / per_host)) for i, u in enumerate(urls)]


def _taken(policy: HandOut, rows: list[Row]) -> list[UrlRecord]:
    for row in rows:
        policy.put(row)
    out = []
    while (taken := policy.take()) is not None:
        out.append(taken[1])
    assert len(policy) == 0
    return out


def test_by_host_turns_round_and_keeps_each_host_in_order() -> None:
    """ByHost: a, b, c, a, b, c...; within a host, oldest first."""
    taken = _taken(ByHost(best_first=False), _rows("abc", 4))
    hosts = [r.url.split("/")[2] for r in taken]
    assert hosts == list("abc") * 4
    assert [r.url for r in taken if "//a/" in r.url] == [f"http://a/{n}" for n in range(4)]


def test_by_host_best_first_within_each_host() -> None:
    """ByHost(best_first=True): still one host after the other, each best first."""
    taken = _taken(ByHost(best_first=True), _rows("ab", 5))
    assert [r.url.split("/")[2] for r in taken] == list("ab") * 5
    for host in "ab":
        scores = [r.score for r in taken if f"//{host}/" in r.url]
        assert scores == sorted(scores, reverse=True)


def test_in_order_and_a_policy_of_ones_own() -> None:
    """order="intake" is the reading order; order=function builds any HandOut."""
    rows = _rows("ab", 3)
    assert [r.url for r in _taken(InOrder(False), rows)] == [r.url for _, r in rows]
    best = [r.score for r in _taken(make_policy("intake", True), rows)]
    assert best == sorted(best, reverse=True)
    built: list[bool] = []

    def mine(best_first: bool) -> HandOut:
        built.append(best_first)
        return InOrder(best_first)

    assert isinstance(make_policy(mine, True), InOrder) and built == [True]


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
