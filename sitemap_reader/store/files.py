"""The files the package creates, opened so that a link or another user's file in their
place is refused.

Theory of operation
-------------------
A file we make beside the user's (a lock, SQLite's ``-wal`` and ``-shm``, a temporary
file, a done marker) has a name that anyone who may write to its folder can predict. A
symbolic link planted there would make us create or write the file it points to (a
dangling link to ``~/.bashrc``, to ``/etc/cron.d/x`` for a crawler run as root), and a file
of another user planted there would be locked, read or written as ours. So:

* a file that must be new is created with ``O_CREAT | O_EXCL | O_NOFOLLOW``
  (:func:`create_new`): whatever is in its place, a link included, is refused;
* a file that may be there already (a lock, a state or progress file) is opened with
  ``O_NOFOLLOW`` and checked on its descriptor (:func:`open_own`): a regular file of this
  process's user, or it is refused;
* SQLite opens its files by name, the database and its ``-wal``, ``-shm`` and ``-journal``
  companions: :func:`claim_database` refuses a link or another user's file at any of those
  names, and creates the database itself (so SQLite never creates one through a link).

A refusal is a :class:`NotOurs` (an ``OSError``) naming the path and why. The user's own
``-o FILE`` is not one of ours: a link there is followed and a FIFO written in place, as
they chose (docs/security.md); the temporary file beside it is ours.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Final

#: The files SQLite keeps beside a database (write-ahead log, its index, rollback journal).
SQLITE_COMPANIONS: Final = ("-wal", "-shm", "-journal")
#: Flags of every open here: never through a link, never inherited by a child process.
_SAFE: Final = os.O_NOFOLLOW | os.O_CLOEXEC


class NotOurs(OSError):
    """A link, or a file that is not a regular file of this user, where we make ours."""


def create_new(path: str, mode: int = 0o666) -> int:
    """A new file at ``path``, open for writing (its descriptor); :class:`NotOurs` when
    anything is in its place already, a link included (never followed)."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _SAFE, mode)
    except FileExistsError:
        raise NotOurs(errno.EEXIST, f"{path} exists already: refused", path) from None


def open_own(path: str, flags: int, mode: int = 0o644) -> int:
    """``path`` opened with ``flags`` (``O_CREAT``: made when missing), never through a
    link, and only when it is a regular file of this process's user (:class:`NotOurs`)."""
    try:
        fd = os.open(path, flags | _SAFE, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise NotOurs(errno.ELOOP, f"{path} is a symbolic link: refused", path) from None
        raise
    try:
        _check(os.fstat(fd), path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_own(path: str) -> None:
    """:class:`NotOurs` when ``path`` is a link, or anything but a regular file of this
    process's user; nothing there is fine."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    _check(found, path)


def claim_database(path: str) -> None:
    """Make ``path`` a database only SQLite's files of ours stand for: each companion
    name holds no link and no other user's file, and the database is a regular file of
    ours, created here (empty) when missing."""
    for suffix in SQLITE_COMPANIONS:
        check_own(path + suffix)
    os.close(open_own(path, os.O_RDONLY | os.O_CREAT))


def _check(found: os.stat_result, path: str) -> None:
    if stat.S_ISLNK(found.st_mode):
        raise NotOurs(errno.ELOOP, f"{path} is a symbolic link: refused", path)
    if not stat.S_ISREG(found.st_mode):
        raise NotOurs(errno.EINVAL, f"{path} is not a regular file: refused", path)
    if hasattr(os, "geteuid") and found.st_uid != os.geteuid():
        raise NotOurs(errno.EPERM, f"{path} belongs to another user: refused", path)
