"""One loader a progress file (issue 33, class 'two processes on one progress file'):
two loaders on one file handed the same URLs out twice and then broke on ``UNIQUE
constraint failed``; the second is refused now, in the same process and in another, and a
loader killed with SIGKILL leaves the file free for the next one."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

import sitemap_reader as sr
from sitemap_reader.errors import StateError
from sitemap_reader.store.progress import DONE, ProgressStore
from tests.crawl.crawl_kit import FAST
from tests.loader.conftest import MakeSite
from tests.loader.kill_kit import CHILD
from tests.loader.test_loader import drain

BUSY = "is in use by another loader"


async def test_a_second_loader_in_one_process_is_refused(
    make_site: MakeSite, tmp_path: Path
) -> None:
    """While one loader holds the file, another is refused at open with a line naming the
    file; once the first closes, the next one opens and finds the work done."""
    site = await make_site(2, 20)
    progress = tmp_path / "p.db"
    async with sr.SitemapLoader(site.base, progress=progress, options=FAST) as first:
        taken = await first.next()
        assert taken is not None
        await first.ack(taken.url)
        second = sr.SitemapLoader(site.base, progress=progress, options=FAST)
        with pytest.raises(StateError, match=BUSY) as refused:
            await second.open()
        assert str(progress) in str(refused.value)
        await second.close()
        first_urls = [r.url for r in await drain(first)]
    async with sr.SitemapLoader(site.base, progress=progress, options=FAST) as third:
        assert await third.next() is None
    assert len(first_urls) + 1 == len(site.page_urls())


async def test_another_process_holding_the_file_then_killed(
    make_site: MakeSite, tmp_path: Path
) -> None:
    """A loader in a child process holds the file (stopped with SIGSTOP mid-crawl): this
        process is refused; after SIGKILL the file is free, and the next loader hands out every
        URL the child did not acknowledge (the file says which it did: a kill may fall between
    an acknowledgement and its line): none lost, none acknowledged twice."""
    site = await make_site(4, 50)
    progress = str(tmp_path / "p.db")
    path = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
    child = await asyncio.create_subprocess_exec(
        sys.executable, CHILD, site.base, progress, "20",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    assert child.stdout is not None
    acked: list[str] = []
    try:
        while len(acked) < 30:
            line = (await asyncio.wait_for(child.stdout.readline(), 60)).decode()
            assert line, "the child ended before it acknowledged 30 records"
            kind, _, url = line.rstrip("\n").partition(" ")
            if kind == "ack":
                acked.append(url)
        child.send_signal(signal.SIGSTOP)
        with pytest.raises(StateError, match=BUSY):
            await sr.SitemapLoader(site.base, progress=progress, options=FAST).open()
    finally:
        child.kill()
        await child.wait()
    store = ProgressStore(progress)  # what the child acknowledged, printed or not
    done = set(store.urls_in([DONE]))
    store.close()
    assert set(acked) <= done
    async with sr.SitemapLoader(site.base, progress=progress, options=FAST) as after:
        rest = [r.url for r in await drain(after)]
    assert not done & set(rest)
    assert done | set(rest) == site.page_urls()


def _copy_with_log(source: Path, target: Path) -> None:
    """Copy a database and its write-ahead log while its connection is open (as a crash
    would leave them: the data in the log, not yet in the main file)."""
    target.write_bytes(source.read_bytes())
    Path(str(target) + "-wal").write_bytes(Path(str(source) + "-wal").read_bytes())


async def test_another_programs_database_with_its_data_in_the_log_is_refused(
    tmp_path: Path,
) -> None:
    """Another program's SQLite database whose data is still in its ``-wal`` (the main file
    is one empty page): refused as another program's, both files byte for byte as they
    were (our tables used to be written into it)."""
    original = tmp_path / "theirs.db"
    db = sqlite3.connect(original)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("PRAGMA application_id = 1234")
    db.execute("CREATE TABLE notes (text)")
    db.execute("INSERT INTO notes VALUES ('precious')")
    db.commit()
    copy = tmp_path / "p.db"
    _copy_with_log(original, copy)
    db.close()
    before = copy.read_bytes(), Path(str(copy) + "-wal").read_bytes()
    with pytest.raises(StateError, match="another program"):
        await sr.SitemapLoader("http://127.0.0.1:9/", progress=copy).open()
    assert (copy.read_bytes(), Path(str(copy) + "-wal").read_bytes()) == before


async def test_our_file_with_its_data_in_the_log_resumes(
    make_site: MakeSite, tmp_path: Path
) -> None:
    """Our own progress file left with its data in the log (a crash before a checkpoint)
    is ours: the next loader opens it and hands out only what was not acknowledged."""
    site = await make_site(1, 10)
    original = tmp_path / "ours.db"
    async with sr.SitemapLoader(site.base, progress=original, options=FAST) as first:
        taken = await first.next()
        assert taken is not None
        await first.ack(taken.url)
        copy = tmp_path / "p.db"
        _copy_with_log(original, copy)
    async with sr.SitemapLoader(site.base, progress=copy, options=FAST) as after:
        rest = [r.url for r in await drain(after)]
    assert taken.url not in rest and {taken.url, *rest} == site.page_urls()


async def test_a_progress_path_that_is_a_device_is_refused(tmp_path: Path) -> None:
    """A progress path that is a symlink to a device: refused before SQLite touches it, no
    stray journal beside the link or the device."""
    link = tmp_path / "p.db"
    link.symlink_to(os.devnull)
    before = set(os.listdir(os.path.dirname(os.devnull)))
    with pytest.raises(StateError, match="not a regular file"):
        await sr.SitemapLoader("http://127.0.0.1:9/", progress=link).open()
    assert [p.name for p in tmp_path.iterdir()] == ["p.db"]
    assert set(os.listdir(os.path.dirname(os.devnull))) == before


async def test_a_damaged_row_costs_its_url_only(
    make_site: MakeSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One queued row whose stored record is damaged (its bytes overwritten): the next
    loader gives that URL up with one warning naming the file and the URL, and hands out
    every other URL (one bad row used to stop the whole loader)."""
    site = await make_site(2, 20)
    progress = tmp_path / "p.db"
    async with sr.SitemapLoader(site.base, progress=progress, buffer=5, options=FAST) as first:
        taken = await first.next()
        assert taken is not None
        await first.ack(taken.url)
    db = sqlite3.connect(progress)
    row = db.execute("SELECT id, url FROM urls WHERE state = 0 ORDER BY id LIMIT 1 OFFSET 3")
    row_id, damaged = row.fetchone()
    db.execute("UPDATE urls SET record = x'ff00ff' WHERE id = ?", (row_id,))
    db.commit()
    db.close()
    caplog.set_level(logging.WARNING, logger="sitemap_reader")
    async with sr.SitemapLoader(site.base, progress=progress, buffer=5, options=FAST) as after:
        rest = [r.url for r in await drain(after)]
        assert after.failed == 1
    assert damaged not in rest and {taken.url, damaged, *rest} == site.page_urls()
    lines = [r.getMessage() for r in caplog.records if damaged in r.getMessage()]
    assert len(lines) == 1 and str(progress) in lines[0] and "given up" in lines[0]
