"""sitemap_reader.store.state: StateStore, the SQLite state of incremental runs (its checks
that a file is ours: test_schema.py; its stored values: test_codec.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sitemap_reader.errors import StateError
from sitemap_reader.store import StateStore, url_key
from tests.store.store_kit import ORIGIN, read, sqlite_file


def finish(store: StateStore, listed: set[str] | None = None) -> list[str]:
    """End the run; the removed URLs' paths, sorted."""
    removed = [r for batch in store.finish_run(listed or set()) for r in batch]
    store.commit()
    assert all(r.removed for r in removed)
    return sorted(r.url.removeprefix(ORIGIN) for r in removed)


def test_new_file_and_run_numbers(tmp_path: Path) -> None:
    """A missing file is created; each run gets a new number, kept across opens."""
    path = tmp_path / "state.db"
    with StateStore(path) as store:
        assert store.begin_run() == 1 and store.begin_run() == 2
    with StateStore(path) as store:
        assert store.begin_run() == 3
        assert store.counts() == {"sitemaps": 0, "urls": 0, "pending": 0, "gone": 0}


def test_save_and_look_up(tmp_path: Path) -> None:
    """A saved read gives its lastmods back by key; unknown keys are absent."""
    with StateStore(tmp_path / "s.db") as store:
        store.begin_run()
        store.save_read(read("/s.xml", ["/a", "/b"]))
        store.commit()
        keys = [url_key(ORIGIN + "/a"), url_key(ORIGIN + "/zzz")]
        assert store.lastmods(keys) == {keys[0]: 1_700_000_000}
        stored = store.sitemap(ORIGIN + "/s.xml")
        assert stored is not None and stored.records == 2 and stored.format == "urlset"


def test_uncommitted_writes_roll_back(tmp_path: Path) -> None:
    """Closing without commit forgets the writes (a killed run)."""
    path = tmp_path / "s.db"
    with StateStore(path) as store:
        store.begin_run()
        store.save_read(read("/s.xml", ["/a"]))
    with StateStore(path) as store:
        assert store.counts()["urls"] == 0 and store.sitemap(ORIGIN + "/s.xml") is None


def test_dropped_urls_are_removed_once(tmp_path: Path) -> None:
    """A URL a re-read sitemap no longer lists is reported removed, then forgotten."""
    with StateStore(tmp_path / "s.db") as store:
        store.begin_run()
        store.save_read(read("/s.xml", ["/a", "/b", "/c"]))
        assert finish(store) == []
        store.begin_run()
        store.save_read(read("/s.xml", ["/a"]))
        assert finish(store) == ["/b", "/c"]
        store.begin_run()
        store.save_read(read("/s.xml", ["/a"]))
        assert finish(store) == []
        assert store.counts() == {"sitemaps": 1, "urls": 1, "pending": 0, "gone": 0}


def test_move_in_the_same_run_is_not_a_removal(tmp_path: Path) -> None:
    """A URL dropped by one sitemap and listed by another in the same run stays."""
    with StateStore(tmp_path / "s.db") as store:
        store.begin_run()
        store.save_read(read("/a.xml", ["/x", "/m"]))
        store.save_read(read("/b.xml", ["/y"]))
        finish(store)
        store.begin_run()
        store.save_read(read("/a.xml", ["/x"]))  # drops /m first ...
        store.save_read(read("/b.xml", ["/y", "/m"]))  # ... which moved here
        assert finish(store) == []
        store.begin_run()
        store.save_read(read("/b.xml", ["/y"]))  # now b (its owner) drops it: removed
        assert finish(store) == ["/m"]


def test_url_listed_twice_is_never_removed(tmp_path: Path) -> None:
    """A URL seen in two sitemaps at once is not reported when only one drops it."""
    with StateStore(tmp_path / "s.db") as store:
        store.begin_run()
        store.save_read(read("/a.xml", ["/s"]))
        store.save_read(read("/b.xml", ["/s"]))
        finish(store)
        store.begin_run()
        store.save_read(read("/b.xml", []))  # a was not re-read: it may still list /s
        assert finish(store) == []


def test_dropped_child_sitemap(tmp_path: Path) -> None:
    """A child an index stops listing: its URLs are removed, unless listed elsewhere."""
    with StateStore(tmp_path / "s.db") as store:
        store.begin_run()
        store.save_read(read("/index.xml", [], children=["/a.xml", "/b.xml"], fmt="sitemapindex"))
        store.save_read(read("/a.xml", ["/a1"]))
        store.save_read(read("/b.xml", ["/b1", "/b2"]))
        finish(store)
        store.begin_run()
        store.save_read(read("/index.xml", [], children=["/a.xml"], fmt="sitemapindex"))
        assert finish(store) == ["/b1", "/b2"]
        assert store.sitemap(ORIGIN + "/b.xml") is None
        store.begin_run()
        store.save_read(read("/index.xml", [], children=[], fmt="sitemapindex"))
        assert finish(store, {ORIGIN + "/a.xml"}) == []  # robots.txt lists it now
        assert store.sitemap(ORIGIN + "/a.xml") is not None


def test_unchanged_keeps_urls_and_refreshes_validators(tmp_path: Path) -> None:
    """save_unchanged keeps the URLs and updates ETag and index lastmod (never backwards)."""
    with StateStore(tmp_path / "s.db") as store:
        store.begin_run()
        store.save_read(read("/s.xml", ["/a"]))
        store.save_unchanged(ORIGIN + "/s.xml", etag='"v2"', index_lastmod=100)
        store.save_unchanged(ORIGIN + "/s.xml", index_lastmod=50)
        store.commit()
        stored = store.sitemap(ORIGIN + "/s.xml")
        assert stored is not None and stored.etag == '"v2"' and stored.index_lastmod == 100
        assert store.counts()["urls"] == 1


def test_bytes_per_url(tmp_path: Path) -> None:
    """The state stays compact: well under 64 bytes per URL (measured: about 40)."""
    path = tmp_path / "s.db"
    count = 20_000
    with StateStore(path) as store:
        store.begin_run()
        for part in range(4):
            pages = [f"/section-{part}/page-{i}.html" for i in range(count // 4)]
            store.save_read(read(f"/s{part}.xml", pages))
        store.commit()
    for extra in ("-wal", "-shm"):
        assert not Path(str(path) + extra).exists()  # checkpointed on close
    assert os.path.getsize(path) / count < 64


@pytest.mark.parametrize(
    ("table", "call"),
    [
        ("sitemaps", lambda s: s.sitemap(ORIGIN + "/s.xml")),
        ("urls", lambda s: s.lastmods([url_key(ORIGIN + "/a")])),
        ("sitemaps", lambda s: s.urls_blob(ORIGIN + "/s.xml")),
        ("urls", lambda s: s.save_read(read("/s.xml", ["/a"]))),
        ("sitemaps", lambda s: s.counts()),
    ],
)
def test_sqlite_errors_on_reads_become_state_errors(
    tmp_path: Path, table: str, call: Callable[[StateStore], object]
) -> None:
    """A table dropped under a running store (another process): every read or write
    raises StateError naming the file, never a bare sqlite3 error."""
    path = tmp_path / "state.db"
    with StateStore(path) as store:
        store.begin_run()
        sqlite_file(path, f"DROP TABLE {table}")
        with pytest.raises(StateError, match=r"state file .*state\.db"):
            call(store)


def test_sqlite_errors_on_rollback_and_begin_become_state_errors(tmp_path: Path) -> None:
    """rollback() and begin_run() on a connection that is gone raise StateError too."""
    store = StateStore(tmp_path / "state.db")
    store._db.close()  # the connection lost under the store
    with pytest.raises(StateError):
        store.rollback()
    with pytest.raises(StateError):
        store.begin_run()
    with pytest.raises(StateError):
        store.close()
