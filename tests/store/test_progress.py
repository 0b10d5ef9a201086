"""sitemap_reader.store.progress: the progress file and its PATH-lock are ours, never a
link's target."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitemap_reader.errors import StateError
from sitemap_reader.store.progress import LOCK_SUFFIX, ProgressStore


def test_a_planted_lock_link_creates_nothing(tmp_path: Path) -> None:
    """PATH-lock planted as a link to a file that does not exist: the loader's store is
    refused, naming the lock, and the link's target is not created."""
    path = tmp_path / "crawl.db"
    (tmp_path / f"crawl.db{LOCK_SUFFIX}").symlink_to(tmp_path / "victim")
    with pytest.raises(StateError, match=r"crawl\.db-lock is a symbolic link"):
        ProgressStore(path)
    assert not (tmp_path / "victim").exists()


@pytest.mark.parametrize("name", ["crawl.db", "crawl.db-wal", "crawl.db-shm"])
def test_a_link_at_the_file_or_its_companions_is_refused(tmp_path: Path, name: str) -> None:
    """The progress file, or SQLite's -wal or -shm beside it, planted as a dangling link:
    refused before SQLite opens anything; the link's target is not created."""
    (tmp_path / name).symlink_to(tmp_path / "victim")
    with pytest.raises(StateError, match="symbolic link"):
        ProgressStore(tmp_path / "crawl.db")
    assert not (tmp_path / "victim").exists()
