"""Duplicates across sitemaps: one merge rule where output is held, first-seen (in a
fixed order at concurrency 1) where it streams, the newest lastmod in the state."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemap_reader.crawl import SitemapReader
from sitemap_reader.delivery.order import RankedBuffer
from sitemap_reader.records import UrlRecord, more_informative
from sitemap_reader.store import StateStore, url_key
from tests.crawl.crawl_kit import FAST, SITEMAP_NS, Site

DAY1 = datetime(2001, 1, 1, tzinfo=UTC)
DAY2 = datetime(2001, 1, 2, tzinfo=UTC)


def _copy(**fields: object) -> UrlRecord:
    return UrlRecord("https://e.example/a", **fields)  # type: ignore[arg-type]


def test_the_merge_rule() -> None:
    """Newest lastmod, then a present priority, then a present changefreq, then sitemap URL."""
    assert more_informative(_copy(lastmod=DAY2), _copy(lastmod=DAY1, priority=1.0))
    assert more_informative(_copy(lastmod=DAY1), _copy(priority=1.0, changefreq="daily"))
    assert more_informative(_copy(priority=0.1), _copy(changefreq="daily"))
    assert more_informative(_copy(changefreq="never"), _copy())
    assert more_informative(
        _copy(sitemap="https://e.example/1.xml"), _copy(sitemap="https://e.example/2.xml")
    )
    assert not more_informative(_copy(), _copy())  # a tie keeps the copy held


@pytest.mark.parametrize("bound", [1, 100])
def test_ranked_buffer_keeps_the_most_informative_copy(bound: int) -> None:
    """In memory or spilled, copies merge by the rule whatever order they come in."""
    bare = _copy(score=0.9, sitemap="https://e.example/1.xml")
    dated = _copy(lastmod=DAY1, score=0.2, sitemap="https://e.example/2.xml")
    others = [UrlRecord(f"https://e.example/{i}", score=0.5) for i in range(5)]
    for first, second in ((bare, dated), (dated, bare)):
        buffer = RankedBuffer(bound)
        buffer.add([first, *others])
        buffer.merge([second])
        out = [r for batch in buffer.drain() for r in batch]
        buffer.close()
        assert len(out) == 6
        assert [r for r in out if r.url == bare.url] == [dated]


def _site(site: Site) -> None:
    """/dup is bare in list.txt (read first) and dated, with a priority, in pages.xml."""
    site.add(
        "/robots.txt", f"Sitemap: {site.url('/list.txt')}\nSitemap: {site.url('/pages.xml')}\n"
    )
    site.add("/list.txt", f"{site.url('/dup')}\n{site.url('/t')}\n", content_type="text/plain")
    entries = (
        f"<url><loc>{site.url('/dup')}</loc><lastmod>2001-01-02</lastmod>"
        f"<priority>0.1</priority></url><url><loc>{site.url('/p')}</loc></url>"
    )
    site.add("/pages.xml", f'<urlset xmlns="{SITEMAP_NS}">{entries}</urlset>')


@pytest.mark.parametrize("options", [{"ranked": True}, {"top": 2}, {"top": 3}])
async def test_held_output_merges_copies(site: Site, options: dict[str, object]) -> None:
    """Ranked and top=N give the dated copy of /dup, though the bare one was read first."""
    _site(site)
    async with SitemapReader(options=FAST, concurrency=1) as reader:
        records = [r async for r in reader.urls(site.base + "/", **options)]  # type: ignore[arg-type]
    by_url = {r.url: r for r in records}
    assert len(by_url) == len(records)
    if site.url("/dup") in by_url:
        dup = by_url[site.url("/dup")]
        assert (dup.lastmod, dup.priority, dup.sitemap) == (DAY2, 0.1, site.url("/pages.xml"))
    if "ranked" in options:
        assert set(by_url) == {site.url(p) for p in ("/dup", "/t", "/p")}
    if options == {"top": 2}:  # the merged copy (priority 0.1) ranks below the two others,
        assert site.url("/dup") not in by_url  # though the bare copy alone would not


async def test_streaming_keeps_the_first_copy_in_a_fixed_order(site: Site) -> None:
    """At concurrency 1 sitemaps are read in discovery order: the bare copy, every time."""
    _site(site)
    for _ in range(2):
        async with SitemapReader(options=FAST, concurrency=1) as reader:
            records = [r async for r in reader.urls(site.base + "/")]
        dup = next(r for r in records if r.url == site.url("/dup"))
        assert (dup.lastmod, dup.sitemap) == (None, site.url("/list.txt"))


async def test_state_keeps_the_newest_lastmod(site: Site, tmp_path: Path) -> None:
    """Two sitemaps give one URL two lastmods: the state keeps the newer, read in any order."""
    urlset = '<urlset xmlns="{ns}"><url><loc>{url}</loc><lastmod>{day}</lastmod></url></urlset>'
    site.add("/robots.txt", f"Sitemap: {site.url('/new.xml')}\nSitemap: {site.url('/old.xml')}\n")
    for name, day in (("new", "2001-01-02"), ("old", "2001-01-01")):
        body = urlset.format(ns=SITEMAP_NS, url=site.url("/dup"), day=day)
        site.add(f"/{name}.xml", body)
    state = tmp_path / "state.db"
    async with SitemapReader(options=FAST, concurrency=1, state=state) as reader:
        assert len([r async for r in reader.urls(site.base + "/")]) == 1
    store = StateStore(state)
    try:
        key = url_key(site.url("/dup"))
        assert store.lastmods([key]) == {key: int(DAY2.timestamp())}
    finally:
        store.close()
