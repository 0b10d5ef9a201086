"""Point 1 of issue 32 at the reader and loader doors: a target that gave nothing is an
error naming it (one line, with its attempts), and a run where every target gave nothing
is an exception."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import sitemap_reader as sr
from sitemap_reader.store.progress import ProgressStore
from tests.crawl.crawl_kit import FAST
from tests.loader.conftest import MakeSite
from tests.loader.kill_kit import dead_target
from tests.loader.test_loader import drain


def _lines_naming(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    """The warning and error lines naming text (each target's verdict is an info line)."""
    return [
        r.getMessage()
        for r in caplog.records
        if text in r.getMessage() and r.levelno >= logging.WARNING
    ]


async def test_iteration_logs_the_dead_target_once(
    make_site: MakeSite, caplog: pytest.LogCaptureFixture
) -> None:
    """reader.urls over a live and a dead target: the live one's records, and one error
    line naming the dead target with its attempts; run.failed_targets says why."""
    site = await make_site(1, 5)
    dead = dead_target()
    caplog.set_level(logging.INFO, logger="sitemap_reader")
    async with sr.SitemapReader(FAST) as reader:
        records = [r async for r in reader.urls([site.base, dead])]
        run = reader.last_run
    assert len(records) == 5
    assert run is not None and list(run.failed_targets) == [dead]
    (line,) = _lines_naming(caplog, dead)
    assert "nothing discovered" in line and "(3 attempts)" in line
    assert caplog.records[-1].levelno == logging.ERROR


def test_sync_iteration_of_dead_targets_raises() -> None:
    """iter_urls over targets that all gave nothing raises DiscoveryError naming each."""
    dead = [dead_target(), dead_target()]
    with pytest.raises(sr.DiscoveryError) as caught:
        list(sr.iter_urls(dead, options=FAST))
    assert all(f"{target}: cannot connect" in str(caught.value) for target in dead)
    # plain words as data too, never the library's text (no ClientConnectorError, no
    # "Connect call failed")
    for target in dead:
        assert caught.value.reason(target).startswith("cannot connect: connection refused")
        assert "Error" not in caught.value.reason(target)
        assert "call failed" not in caught.value.reason(target)


async def test_loader_all_dead_raises_without_async_with(tmp_path: Path) -> None:
    """A loader whose only target is unreachable, used without async with: next() raises
    the DiscoveryError (naming the target, with its attempts) and the loader is closed."""
    dead = dead_target()
    loader = sr.SitemapLoader(dead, progress=tmp_path / "p.db", options=FAST)
    with pytest.raises(sr.DiscoveryError, match=r"cannot connect.*\(3 attempts\)") as caught:
        await loader.next()
    assert dead in str(caught.value)
    assert loader.error is caught.value
    await loader.close()


async def test_loader_some_dead_logs_and_tries_them_again(
    make_site: MakeSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A dead target beside a live one: the live one's URLs are handed out, the dead one
    is logged once as an error and listed in failed_targets, and the file is not marked
    read, so the next loader tries it again."""
    site = await make_site(2, 5)
    dead = dead_target()
    progress = tmp_path / "p.db"
    caplog.set_level(logging.INFO, logger="sitemap_reader")
    async with sr.SitemapLoader([site.base, dead], progress=progress, options=FAST) as loader:
        assert len(await drain(loader)) == 10
        assert list(loader.failed_targets) == [dead]
    assert len(_lines_naming(caplog, dead)) == 1
    assert loader.verdicts[dead].kind == "unreachable"
    store = ProgressStore(progress)
    assert not store.all_read()
    store.close()
    caplog.clear()
    async with sr.SitemapLoader([site.base, dead], progress=progress, options=FAST) as loader:
        assert await loader.next() is None
        assert list(loader.failed_targets) == [dead]
    assert len(_lines_naming(caplog, dead)) == 1
