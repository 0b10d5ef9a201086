"""Point 2 of issue 32: a progress file belongs to the targets it was made for, and a
finished one says so (attribute, log line) with the way to start again."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import sitemap_reader as sr
from tests.crawl.crawl_kit import FAST
from tests.loader.conftest import MakeSite
from tests.loader.test_loader import drain


async def test_other_targets_are_refused(make_site: MakeSite, tmp_path: Path) -> None:
    """A file made for one site, opened for another: a StateError naming both sites and
    the ways out, before anything is read; the first site's progress is intact."""
    first, second = await make_site(1, 4), await make_site(1, 3)
    progress = tmp_path / "crawl.db"
    async with sr.SitemapLoader(first.base, progress=progress, options=FAST) as loader:
        record = await loader.next()
        assert record is not None
        await loader.ack(record.url)
    requests = len(second.requests)
    loader = sr.SitemapLoader(second.base, progress=progress, options=FAST)
    with pytest.raises(sr.StateError) as caught:
        await loader.open()
    message = str(caught.value)
    for text in (str(progress), first.base, second.base, "extend=True", "restart=True"):
        assert text in message
    assert len(second.requests) == requests
    async with sr.SitemapLoader(first.base, progress=progress, options=FAST) as loader:
        assert len(await drain(loader)) == 3 and loader.handled == 4


async def test_spellings_of_one_target_are_one(make_site: MakeSite, tmp_path: Path) -> None:
    """The site URL and its robots.txt URL are one target: the file is accepted."""
    site = await make_site(1, 4)
    progress = tmp_path / "crawl.db"
    async with sr.SitemapLoader(site.base + "/", progress=progress, options=FAST) as loader:
        assert len(await drain(loader)) == 4
    robots = site.url("/robots.txt")
    async with sr.SitemapLoader(robots, progress=progress, options=FAST) as loader:
        assert await loader.next() is None and loader.handled == 4


async def test_extend_adds_targets(make_site: MakeSite, tmp_path: Path) -> None:
    """extend=True: the file takes the new site too; its URLs are handed out, the first
    site's acknowledged URLs are not, and the loader's targets are both."""
    first, second = await make_site(1, 4), await make_site(1, 3)
    progress = tmp_path / "crawl.db"
    async with sr.SitemapLoader(first.base, progress=progress, options=FAST) as loader:
        assert len(await drain(loader)) == 4
    async with sr.SitemapLoader(
        second.base, progress=progress, extend=True, options=FAST
    ) as loader:
        assert set(loader.targets) == {first.base, second.base}
        taken = {r.url for r in await drain(loader)}
    assert taken == second.page_urls()
    async with sr.SitemapLoader(
        [second.base, first.base], progress=progress, options=FAST
    ) as loader:
        assert loader.already_finished and loader.handled == 7


async def test_finished_file_says_so_and_restart_starts_again(
    make_site: MakeSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A finished file: already_finished, one warning naming the file, its counts and the
    way to start again, nothing fetched; restart=True hands every URL out again."""
    site = await make_site(2, 3)
    progress = tmp_path / "crawl.db"
    async with sr.SitemapLoader(site.base, progress=progress, options=FAST) as loader:
        assert not loader.already_finished
        assert len(await drain(loader)) == 6
    requests = len(site.requests)
    caplog.set_level(logging.INFO, logger="sitemap_reader")
    async with sr.SitemapLoader(site.base, progress=progress, options=FAST) as loader:
        assert loader.already_finished and loader.finished
        assert await loader.next() is None
    assert len(site.requests) == requests
    (warning,) = [r for r in caplog.records if "is finished" in r.getMessage()]
    assert warning.levelno == logging.WARNING
    text = warning.getMessage()
    assert str(progress) in text and "6 URLs handled" in text and "restart=True" in text
    async with sr.SitemapLoader(site.base, progress=progress, restart=True, options=FAST) as loader:
        assert not loader.already_finished
        assert {r.url for r in await drain(loader)} == site.page_urls()


async def test_restart_takes_another_target(make_site: MakeSite, tmp_path: Path) -> None:
    """restart=True on a file made for another site: it becomes this site's file."""
    first, second = await make_site(1, 2), await make_site(1, 3)
    progress = tmp_path / "crawl.db"
    async with sr.SitemapLoader(first.base, progress=progress, options=FAST) as loader:
        await drain(loader)
    async with sr.SitemapLoader(
        second.base, progress=progress, restart=True, options=FAST
    ) as loader:
        assert {r.url for r in await drain(loader)} == second.page_urls()
        assert loader.handled == 3
