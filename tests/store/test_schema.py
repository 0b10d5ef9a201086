"""sitemap_reader.store.schema: a state file is ours before anything is written to it.

A file of another program, of another version or of no SQLite at all is refused and left
exactly as it was (bytes, mtime, no -wal or -shm beside it); a new, empty or unmarked
state of this schema is marked and used."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sitemap_reader.errors import StateError
from sitemap_reader.store import APPLICATION_ID, SCHEMA_VERSION, StateStore
from tests.store.store_kit import ORIGIN, read, snapshot, sqlite_file


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


@pytest.mark.parametrize("name", ["state.db", "state.db-wal", "state.db-shm"])
def test_a_link_at_the_state_or_its_companions_is_refused(tmp_path: Path, name: str) -> None:
    """--state, or SQLite's -wal or -shm beside it, planted as a dangling link: refused
    (a StateError naming it), and the file the link points to is not created."""
    (tmp_path / name).symlink_to(tmp_path / "victim")
    with pytest.raises(StateError, match="symbolic link"):
        StateStore(tmp_path / "state.db")
    assert not (tmp_path / "victim").exists()
