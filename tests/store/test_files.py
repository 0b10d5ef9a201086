"""sitemap_reader.store.files: the files we create are never reached through a link, and
never another user's file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sitemap_reader.store.files import NotOurs, check_own, claim_database, create_new, open_own

#: Tests that hand a file to another user need root to do it.
needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root"
)


def test_create_new_refuses_a_dangling_link(tmp_path: Path) -> None:
    """A new file's name holding a dangling link: refused, the link's target not created."""
    (tmp_path / "new.tmp").symlink_to(tmp_path / "victim")
    with pytest.raises(NotOurs, match="exists already"):
        create_new(str(tmp_path / "new.tmp"))
    assert not (tmp_path / "victim").exists()
    os.close(create_new(str(tmp_path / "fresh.tmp")))
    assert (tmp_path / "fresh.tmp").is_file()


def test_open_own_refuses_links_and_nodes(tmp_path: Path) -> None:
    """open_own: a link (dangling or to a file of ours) or a FIFO is refused; a missing
    file is made, a file of ours opened."""
    (tmp_path / "lock").symlink_to(tmp_path / "victim")
    with pytest.raises(NotOurs, match="symbolic link"):
        open_own(str(tmp_path / "lock"), os.O_RDWR | os.O_CREAT)
    assert not (tmp_path / "victim").exists()
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotOurs, match="not a regular file"):
        open_own(str(tmp_path / "fifo"), os.O_RDWR)
    os.close(open_own(str(tmp_path / "mine"), os.O_RDWR | os.O_CREAT))
    os.close(open_own(str(tmp_path / "mine"), os.O_RDWR))


def test_claim_database_refuses_a_link_at_a_companion(tmp_path: Path) -> None:
    """A link at the database's -wal, -shm or -journal name is refused before SQLite
    could follow it; the database itself is made ours when missing."""
    for suffix in ("-wal", "-shm", "-journal"):
        link = tmp_path / f"s.db{suffix}"
        link.symlink_to(tmp_path / "victim")
        with pytest.raises(NotOurs, match=f"s.db{suffix} is a symbolic link"):
            claim_database(str(tmp_path / "s.db"))
        link.unlink()
    claim_database(str(tmp_path / "s.db"))
    assert (tmp_path / "s.db").is_file() and not (tmp_path / "victim").exists()


@needs_root
def test_another_users_file_is_refused(tmp_path: Path) -> None:
    """A regular file of another user where ours goes: refused by every door here."""
    theirs = tmp_path / "theirs"
    theirs.write_bytes(b"")
    os.chown(theirs, 65534, 65534)
    with pytest.raises(NotOurs, match="another user"):
        check_own(str(theirs))
    with pytest.raises(NotOurs, match="another user"):
        open_own(str(theirs), os.O_RDWR)
