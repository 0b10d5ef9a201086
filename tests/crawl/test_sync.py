"""iter_urls: the synchronous wrapper, from plain code and from inside a running loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from sitemap_reader.crawl import iter_urls
from sitemap_reader.errors import DiscoveryError, UsageError
from tests.crawl.crawl_kit import FAST, Site, ThreadedServer, index, urlset


def fill(site: Site, children: int = 3, per_child: int = 4) -> list[str]:
    """Routes for an index of sitemaps; returns every page URL."""
    site.add("/index.xml", index([site.url(f"/c{i}.xml") for i in range(children)]))
    expected = []
    for i in range(children):
        urls = [site.url(f"/c{i}/{j}") for j in range(per_child)]
        site.add(f"/c{i}.xml", urlset(urls))
        expected += urls
    return expected


def test_iter_urls_from_plain_code() -> None:
    """A plain script: iter_urls yields every record, in the caller's thread."""
    with ThreadedServer(Site()) as site:
        expected = fill(site)
        got = [r.url for r in iter_urls(site.url("/index.xml"), options=FAST)]
    assert sorted(got) == sorted(expected)


def test_iter_urls_top() -> None:
    """top=N through the sync wrapper: the N best, best first."""
    with ThreadedServer(Site()) as site:
        fill(site)
        everything = list(iter_urls(site.url("/index.xml"), options=FAST, ranked=True))
        best = list(iter_urls(site.url("/index.xml"), options=FAST, top=3))
    assert [r.url for r in best] == [r.url for r in everything[:3]]


async def test_iter_urls_inside_a_running_loop() -> None:
    """Called from a coroutine (its thread runs a loop): no deadlock, same records."""
    assert asyncio.get_running_loop().is_running()
    with ThreadedServer(Site()) as site:
        expected = fill(site)
        got = [r.url for r in iter_urls(site.url("/index.xml"), options=FAST, ranked=True)]
    assert sorted(got) == sorted(expected)


def test_iter_urls_early_exit_stops_the_worker() -> None:
    """Breaking out of the loop cancels the crawl and ends the worker thread."""
    with ThreadedServer(Site()) as site:
        fill(site, children=30, per_child=50)
        before = {t.ident for t in threading.enumerate()}
        stream = iter_urls(site.url("/index.xml"), options=FAST, concurrency=2)
        first = next(stream)
        stream.close()
        leftover = [
            t for t in threading.enumerate() if t.ident not in before and t.name == "sitemap-reader"
        ]
    assert first.url.startswith(site.base)
    assert leftover == [] and sum(site.hits.values()) < 31


def test_iter_urls_raises_in_caller_thread() -> None:
    """DiscoveryError from the worker is raised where the caller iterates."""
    with ThreadedServer(Site()) as site, pytest.raises(DiscoveryError, match="HTTP 404"):
        list(iter_urls(site.url("/missing.xml"), options=FAST))


@pytest.mark.parametrize("target", [None, [42], 42])
def test_iter_urls_refuses_targets_that_are_not_text(target: object) -> None:
    """iter_urls(None), ([42]), (42): a UsageError naming iter_urls, in the caller's
    thread before any worker starts (before: a TypeError or AttributeError)."""
    before = threading.active_count()
    with pytest.raises(UsageError, match=r"^iter_urls: targets: expected a domain, a URL"):
        list(iter_urls(target))  # type: ignore[arg-type]
    assert threading.active_count() == before


async def test_a_path_naming_no_file_is_refused_at_the_python_doors() -> None:
    """iter_urls, the reader and the loader read targets by the CLI's rule: a relative
    path naming no file is "no such file", not a host to look up."""
    from sitemap_reader import SitemapLoader, SitemapReader

    with pytest.raises(UsageError, match=r"no such file: sitemaps/missing\.xml\.gz"):
        list(iter_urls("sitemaps/missing.xml.gz", options=FAST))
    async with SitemapReader(options=FAST) as reader:
        with pytest.raises(UsageError, match="no such file"):
            async for _ in reader.urls("sitemaps/missing.xml.gz"):
                pass
    with pytest.raises(UsageError, match="no such file"):
        SitemapLoader("sitemaps/missing.xml.gz", options=FAST)
