"""The loader says what ``dump`` says (issue 46, item 2): broken sitemaps, children skipped
under ``since``, robots-disallowed URLs handed out; logged at INFO and as a typed
summary. And ``async for record in loader`` (item 9)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

import sitemap_reader as sr
from sitemap_reader.loader import LoaderSummary
from tests.crawl.crawl_kit import FAST, SITEMAP_NS, Site, urlset


def troubled_site(site: Site) -> None:
    """robots.txt disallows /private/ and lists an index of three children: one new, one
    whose index lastmod is old, one that is not XML at all."""
    site.add("/robots.txt", "User-agent: *\nDisallow: /private/\nSitemap: /index.xml\n",
             content_type="text/plain")  # fmt: skip
    entries = "".join(
        f"<sitemap><loc>{site.url(path)}</loc><lastmod>{day}</lastmod></sitemap>"
        for path, day in [("/new.xml", "2026-01-01"), ("/old.xml", "2020-01-01"),
                          ("/broken.xml", "2026-01-01")]
    )  # fmt: skip
    body = f'<?xml version="1.0"?><sitemapindex xmlns="{SITEMAP_NS}">{entries}</sitemapindex>'
    site.add("/index.xml", body)
    pages = [site.url("/a"), site.url("/private/1"), site.url("/private/2")]
    site.add("/new.xml", urlset(pages))
    site.add("/old.xml", urlset([site.url("/old")]))
    site.add("/broken.xml", "<urlset><url><loc>", content_type="application/xml")


async def test_the_loader_says_what_dump_says(
    site: Site, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken child, a child older than since, two disallowed URLs: each is an INFO line
    of the loader and a field of loader.summary (before: not a word at INFO, no summary);
    ``async for`` hands out every record."""
    troubled_site(site)
    caplog.set_level(logging.INFO, logger="sitemap_reader")
    since = datetime(2025, 1, 1, tzinfo=UTC)
    async with sr.SitemapLoader(
        site.base, progress=tmp_path / "p.db", since=since, allow_private=True, options=FAST
    ) as loader:
        urls = []
        async for record in loader:
            urls.append(record.url)
            await loader.ack(record.url)
        summary = loader.summary
    assert sorted(urls) == sorted(site.url(p) for p in ["/a", "/private/1", "/private/2"])
    assert isinstance(summary, LoaderSummary)
    assert [n.url for n in summary.broken] == [site.url("/broken.xml")]
    assert summary.older == 1 and [n.url for n in summary.older_nodes] == [site.url("/old.xml")]
    assert summary.disallowed_handed_out == 2 and summary.stopped is None
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any(line.startswith(f"sitemap failed: {site.url('/broken.xml')}") for line in said)
    assert any("1 child sitemap whose index lastmod is older than since" in s for s in said)
    assert any("disallows 2 URLs the sitemaps list; handed out" in line for line in said)


async def test_obey_robots_says_dropped(site: Site, tmp_path: Path) -> None:
    """With obey_robots the disallowed URLs are counted, none handed out, and said so."""
    troubled_site(site)
    loader = sr.SitemapLoader(site.base, obey_robots=True, allow_private=True, options=FAST)
    urls = []
    async for record in loader:
        urls.append(record.url)
        await loader.ack(record.url)
    assert urls.count(site.url("/a")) == 1 and len(urls) == 2
    summary = loader.summary
    assert (summary.disallowed, summary.disallowed_handed_out) == (2, 0)
    assert any("dropped (obey_robots)" in line for line in summary.lines())
