"""``per_target`` and ``follow`` as a function at the loader's doors (issue 41, left from
last round): a one-target run checks its ``per_target`` entries; the loader and the
Crawlee loader carry both."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aiohttp import web

import sitemap_reader as sr
from sitemap_reader.errors import UsageError
from tests.crawl.crawl_kit import FAST, Site, index, urlset


async def test_a_one_target_run_checks_its_per_target_entries(site: Site) -> None:
    """A misspelt per_target entry of a one-target run is a UsageError naming it, at the
    reader and at the loader (before: silently ignored, the headers never sent)."""
    wrong = {"http://127.0.0.9:1/": {"headers": {"X-Key": "1"}}}
    async with sr.SitemapReader(FAST, per_target=wrong, allow_private=True) as reader:
        with pytest.raises(UsageError, match=re.escape("per_target names 'http://127.0.0.9:1/'")):
            await reader.tree(site.base)
    loader = sr.SitemapLoader(site.base, per_target=wrong, allow_private=True, options=FAST)
    with pytest.raises(UsageError, match="per_target names"):
        await loader.next()


def keyed_site(site: Site) -> list[str]:
    """robots.txt -> an index of /keep.xml and /skip.xml, each answering only with the
    target's own header (X-Key: 1); the pages /keep.xml lists."""
    pages = [site.url(f"/k/{n}") for n in range(3)]

    def guarded(body: bytes) -> object:
        async def handler(request: web.Request) -> web.Response:
            if request.headers.get("X-Key") != "1":
                return web.Response(status=403, text="no key")
            return web.Response(body=body, content_type="application/xml")

        return handler

    site.add("/robots.txt", "Sitemap: /index.xml\n", content_type="text/plain")
    site.add("/index.xml", guarded(index([site.url("/keep.xml"), site.url("/skip.xml")])))  # type: ignore[arg-type]
    site.add("/keep.xml", guarded(urlset(pages)))  # type: ignore[arg-type]
    site.add("/skip.xml", guarded(urlset([site.url("/s/0")])))  # type: ignore[arg-type]
    return pages


async def test_the_loader_carries_per_target_and_a_follow_function(
    site: Site, tmp_path: Path
) -> None:
    """The target's own header reaches its sitemaps and a follow function picks the
    child: only /keep.xml's pages, /skip.xml never fetched."""
    pages = keyed_site(site)
    async with sr.SitemapLoader(
        site.base, progress=tmp_path / "p.db", allow_private=True, options=FAST,
        per_target={site.base: {"headers": {"X-Key": "1"}}},
        follow=lambda url: url.endswith("/keep.xml"),
    ) as loader:  # fmt: skip
        urls = []
        async for record in loader:
            urls.append(record.url)
            await loader.ack(record.url)
    assert sorted(urls) == pages
    assert site.hits["/skip.xml"] == 0
