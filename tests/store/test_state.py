"""Tests for sitemap_reader.store: the SQLite state of incremental runs."""

from __future__ import annotations

import os
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_reader.errors import StateError
from sitemap_reader.store import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    SitemapRead,
    StateStore,
    pack_children,
    pack_urls,
    unpack_children,
    unpack_urls,
    url_key,
    url_keys,
)

ORIGIN = "https://example.com"


def read(
    url: str,
    pages: list[str],
    *,
    children: tuple[str, ...] | list[str] = (),
    fmt: str = "urlset",
    lastmod: int | None = 1_700_000_000,
) -> SitemapRead:
    """A complete read of ``url`` listing ``pages`` (and ``children`` for an index)."""
    urls = [ORIGIN + p for p in pages]
    return SitemapRead(
        url=ORIGIN + url,
        format=fmt,
        hash=os.urandom(16),
        records=len(urls),
        keys=[url_key(u) for u in urls],
        lastmods=[lastmod] * len(urls),
        urls_blob=pack_urls(urls) if urls else None,
        children=[(ORIGIN + c, None) for c in children],
    )


def finish(store: StateStore, listed: set[str] | None = None) -> list[str]:
    """End the run; the removed URLs' paths, sorted."""
    removed = [r for batch in store.finish_run(listed or set()) for r in batch]
    store.commit()
    assert all(r.removed for r in removed)
    return sorted(r.url.removeprefix(ORIGIN) for r in removed)


@given(st.text(max_size=200))
def test_url_key_is_a_stable_signed_64_bit_integer(url: str) -> None:
    """The key fits SQLite's INTEGER and does not depend on the process."""
    key = url_key(url)
    assert -(1 << 63) <= key < (1 << 63) and key == url_key(url)


def test_url_key_known_value() -> None:
    """BLAKE2b-64 of the UTF-8 URL, big-endian, signed (pinned so state files stay valid)."""
    assert url_key("https://example.com/") == 1493557592560457051
    assert url_key("https://example.com/a") != url_key("https://example.com/b")


@given(st.lists(st.text(max_size=80), max_size=20))
def test_url_keys_match_url_key(urls: list[str]) -> None:
    """The batch form gives each URL's own key, in order."""
    assert url_keys(urls) == [url_key(u) for u in urls]


def test_pack_urls_format_is_one_url_a_line() -> None:
    """The blob is the URLs, each followed by a newline, zlib level 6 (stored format)."""
    urls = [f"{ORIGIN}/p{i}" for i in range(3)]
    text = "".join(u + "\n" for u in urls).encode()
    assert pack_urls(urls) == zlib.compress(text, 6)
    assert pack_urls(iter(urls)) == zlib.compress(text, 6)
    assert unpack_urls(pack_urls([])) == []


def test_blobs_round_trip() -> None:
    """URL and children blobs give back what went in."""
    urls = [f"{ORIGIN}/p{i}" for i in range(100)]
    assert unpack_urls(pack_urls(urls)) == urls and unpack_urls(None) == []
    children = [(ORIGIN + "/a.xml", 5), (ORIGIN + "/b.xml", None)]
    assert unpack_children(pack_children(children)) == children


def test_new_file_and_run_numbers(tmp_path: Path) -> None:
    """A missing file is created; each run gets a new number, kept across opens."""
    path = tmp_path / "state.db"
    with StateStore(path) as store:
        assert store.begin_run() == 1 and store.begin_run() == 2
    with StateStore(path) as store:
        assert store.begin_run() == 3
        assert store.counts() == {"sitemaps": 0, "urls": 0, "pending": 0, "gone": 0}


def test_not_a_state_file(tmp_path: Path) -> None:
    """A file that is not SQLite, or a state of another schema, is refused."""
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(StateError, match="not a sitemap-reader state"):
        StateStore(junk)
    newer = tmp_path / "newer.db"
    with StateStore(newer):
        pass
    db = sqlite3.connect(newer)
    db.execute("UPDATE meta SET value = 99 WHERE name = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(StateError, match="schema 99"):
        StateStore(newer)


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


# --------------------------------------------------------------------------- foreign files


def snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    """A file's bytes, its mtime in ns, and the names beside it (no -wal/-shm appears)."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(path.parent))


def sqlite_file(path: Path, *statements: str) -> Path:
    """A SQLite database made by another program (rollback journal, as most are)."""
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path


FOREIGN = {
    "same table names, other columns": (
        "CREATE TABLE sitemaps (loc TEXT, seen TEXT)",
        "CREATE TABLE urls (href TEXT PRIMARY KEY, title TEXT)",
        "INSERT INTO urls VALUES ('https://example.com/', 'home')",
    ),
    "another program's application_id": ("PRAGMA application_id = 1234", "CREATE TABLE t (x)"),
    "another program's WAL database": ("PRAGMA journal_mode=WAL", "CREATE TABLE t (x)"),
    "another program's user_version": ("PRAGMA user_version = 7",),
    "a newer state": (f"PRAGMA application_id = {APPLICATION_ID}", "PRAGMA user_version = 2"),
    "an older state": (f"PRAGMA application_id = {APPLICATION_ID}", "PRAGMA user_version = 0"),
}


@pytest.mark.parametrize("case", sorted(FOREIGN))
def test_foreign_file_is_refused_untouched(tmp_path: Path, case: str) -> None:
    """A SQLite file that is not a state of this schema is refused; its bytes, mtime and
    directory are exactly as before (nothing was written, not even the WAL switch, and no
    -wal or -shm file was left beside it)."""
    path = sqlite_file(tmp_path / "other.db", *FOREIGN[case])
    before = snapshot(path)
    with pytest.raises(StateError, match="not a sitemap-reader state file"):
        StateStore(path)
    assert snapshot(path) == before


def test_newer_state_names_both_versions(tmp_path: Path) -> None:
    """A state file of a newer version says so, with both schema numbers."""
    path = sqlite_file(tmp_path / "newer.db", *FOREIGN["a newer state"])
    with pytest.raises(StateError, match="state schema 2 is newer; this version reads 1"):
        StateStore(path)


def test_junk_file_is_refused_untouched(tmp_path: Path) -> None:
    """Bytes that are no SQLite database are refused and left as they were."""
    path = tmp_path / "junk.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    before = snapshot(path)
    with pytest.raises(StateError, match="not a sitemap-reader state file"):
        StateStore(path)
    assert snapshot(path) == before


def test_new_state_file_is_marked(tmp_path: Path) -> None:
    """A created state file carries our application_id and the schema as user_version."""
    path = tmp_path / "state.db"
    with StateStore(path) as store:
        store.begin_run()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_unmarked_state_of_this_schema_is_adopted(tmp_path: Path) -> None:
    """A state written before the mark existed (same tables, no mark) is used and marked;
    its data is kept."""
    path = tmp_path / "old.db"
    with StateStore(path) as store:
        store.begin_run()
        store.save_read(read("/s.xml", ["/a"]))
        store.commit()
    sqlite_file(path, "PRAGMA application_id = 0", "PRAGMA user_version = 0")
    with StateStore(path) as store:
        assert store.begin_run() == 2 and store.sitemap(ORIGIN + "/s.xml") is not None
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()


def test_empty_file_becomes_a_state(tmp_path: Path) -> None:
    """An empty file (as mktemp makes) is a new state, not a foreign one."""
    path = tmp_path / "empty.db"
    path.touch()
    with StateStore(path) as store:
        assert store.begin_run() == 1


def test_directory_is_refused(tmp_path: Path) -> None:
    """--state naming a directory is refused with a clear reason."""
    with pytest.raises(StateError, match="is a directory"):
        StateStore(tmp_path)


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
