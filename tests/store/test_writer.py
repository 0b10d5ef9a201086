"""The state's writer thread: deferred saves run in order, errors come back, close flushes."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from sitemap_reader.errors import StateError
from sitemap_reader.store import SitemapRead, StateStore, pack_urls, url_key
from sitemap_reader.store.state import WRITE_CHUNK

ORIGIN = "https://example.com"


def read(url: str, count: int, lastmod: int = 1_700_000_000) -> SitemapRead:
    """A complete read of ``url`` listing ``count`` pages."""
    urls = [f"{ORIGIN}{url}/{n}" for n in range(count)]
    return SitemapRead(
        url=ORIGIN + url,
        format="urlset",
        hash=os.urandom(16),
        records=count,
        keys=[url_key(u) for u in urls],
        lastmods=[lastmod] * count,
        urls_blob=pack_urls(urls),
        children=[],
    )


def test_deferred_writes_run_in_order_off_the_caller(tmp_path: Path) -> None:
    """Saves and commits deferred in background mode run on another thread, in order."""
    store = StateStore(tmp_path / "s.db", background=True)
    store.begin_run()
    assert store.empty_at_start
    threads: list[str] = []
    big = read("/big.xml", 3 * WRITE_CHUNK + 5)  # saved in parts, one transaction
    store.defer(lambda: threads.append(threading.current_thread().name))
    store.defer(lambda: store.save_read(big))
    store.defer(store.commit)
    store.defer(lambda: store.save_read(read("/big.xml", 10, lastmod=1_800_000_000)))
    store.flush()
    assert threads == ["sitemap-state"]
    assert store.lastmods(big.keys[:1]) == {big.keys[0]: 1_800_000_000}  # the later save won
    store.close()  # the second save was never committed: rolled back
    with StateStore(tmp_path / "s.db") as again:
        assert again.lastmods(big.keys[-1:]) == {big.keys[-1]: 1_700_000_000}
        assert again.counts()["urls"] == len(big.keys)


def test_failed_deferred_write_is_reported(tmp_path: Path) -> None:
    """A deferred write that raises comes back as its error from flush, once."""

    def broken() -> None:
        raise StateError("disk on fire")

    store = StateStore(tmp_path / "s.db", background=True)
    store.begin_run()
    store.defer(broken)
    with pytest.raises(StateError, match="disk on fire"):
        store.flush()
    store.defer(lambda: store.save_read(read("/a.xml", 2)))
    store.flush()  # the error was reported: later writes run again
    assert store.counts()["urls"] == 2
    store.close()


def test_close_runs_queued_commits(tmp_path: Path) -> None:
    """close() lets the writer finish what is queued (a queued commit is kept)."""
    store = StateStore(tmp_path / "s.db", background=True)
    store.begin_run()
    store.defer(lambda: store.save_read(read("/a.xml", 3)))
    store.defer(store.commit)
    store.close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT count(*) FROM urls").fetchone() == (3,)
