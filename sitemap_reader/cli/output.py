"""Where records go: the three writers, and the atomic output file.

A writer (:mod:`sitemap_reader.delivery.writers`, re-exported here) turns a batch of
:class:`UrlRecord` values into complete lines (JSONL, CSV, or the bare URL) and writes
them with a single call, so whatever has been written is always whole lines.
:class:`AtomicFile` makes ``-o FILE`` all-or-nothing: the records go to a temporary file in
FILE's directory, which replaces FILE only when the run ends normally; a FILE that is no
regular file (a FIFO, a device) is written in place instead, and a symlink is followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Sequence
from typing import IO

from sitemap_reader._safe_text import printable
from sitemap_reader.delivery.writers import (
    CSV_COLUMNS,
    WRITERS,
    CsvWriter,
    JsonlWriter,
    RecordWriter,
    TxtWriter,
    json_text,
    make_writer,
)
from sitemap_reader.discovery.targets import classify
from sitemap_reader.errors import UsageError
from sitemap_reader.store.files import SQLITE_COMPANIONS

__all__ = [
    "CSV_COLUMNS",
    "WRITERS",
    "AtomicFile",
    "CsvWriter",
    "JsonlWriter",
    "RecordWriter",
    "TxtWriter",
    "check_not_own",
    "json_text",
    "make_writer",
]


class AtomicFile:
    """The ``-o FILE`` of every command: all-or-nothing for a file, in place for the rest.

    What FILE is decides how it is written, so that writing never destroys:

    - a regular file, or nothing yet: the data goes to a hidden temporary file beside it
      (same filesystem, so ``os.replace`` is atomic); :meth:`commit` flushes, fsyncs and
      renames it over FILE, :meth:`abort` deletes it. A process killed in between leaves
      FILE as it was (at worst a stray ``.NAME.*.tmp`` beside it).
    - a symlink (dangling or not): followed, and its target written as above in the
      target's own directory; the link stays a link.
    - anything else (a FIFO, a character device such as ``/dev/null``, ``/dev/stdout``
      on a pipe): opened and written in place, as a shell's ``>`` would (a FIFO waits
      for its reader); renaming over it would replace the node with a regular file.
      What was written stays written.

    A directory is refused here, before any work is done, and so is a node that cannot
    be opened for writing (a socket).
    """

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        real = os.path.realpath(path)
        node = _stat(path)
        if node is not None and stat.S_ISDIR(node.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        #: True when FILE is written directly (not a regular file, or a link such as
        #: /proc/self/fd/1 whose target has no name of its own to rename over).
        self.in_place = node is not None and not _same_file(node, _stat(real))
        self._target = real
        self._tmp: str | None = None
        if self.in_place:
            # O_APPEND: a regular file behind a /proc fd link keeps what it holds.
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC)
        else:
            directory, name = os.path.split(real)
            fd, self._tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        self.stream: IO[str] = open(fd, "w", encoding="utf-8", newline="")  # noqa: SIM115
        self._done = False

    def commit(self) -> None:
        """Make the written data the content of the target file (OSError: not done; call
        :meth:`abort`)."""
        self.stream.flush()
        if self._tmp is not None:
            os.fsync(self.stream.fileno())  # EINVAL on a FIFO or a device: files only
        self.stream.close()
        if self._tmp is not None:
            os.chmod(self._tmp, _file_mode(self._target))
            os.replace(self._tmp, self._target)
        self._done = True

    def abort(self) -> None:
        """Throw the written data away; the target file is untouched. A no-op after
        :meth:`commit`. The temporary file is removed even when closing fails (a full
        disk fails the final flush again), so a failed run never leaves it filling it.
        In place, what was written is out already: the file is only closed."""
        if self._done:
            return
        self._done = True
        try:
            # The data is being thrown away; the descriptor is closed even when this fails.
            with contextlib.suppress(OSError):
                self.stream.close()
        finally:
            if self._tmp is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._tmp)


def _stat(path: str) -> os.stat_result | None:
    """``os.stat`` (links followed by the kernel, /proc fd links too); None: no file."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _same_file(node: os.stat_result, real: os.stat_result | None) -> bool:
    """Whether ``node`` is a regular file that the resolved path names too."""
    if real is None or not stat.S_ISREG(node.st_mode):
        return False
    return (node.st_dev, node.st_ino) == (real.st_dev, real.st_ino)


def _file_mode(path: str) -> int:
    """The mode the target keeps (or would get from ``open``): mkstemp makes it 0600.

    A new file's mode is read off a probe created beside it the way ``open`` creates
    one (so the umask and a directory's default ACL both count), never by setting the
    process umask and back: another thread creating a file in that window would get
    mode 0666."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        pass
    directory, name = os.path.split(path)
    probe = os.path.join(directory, f".{name}.{secrets.token_hex(8)}.mode")
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        return os.fstat(fd).st_mode & 0o7777
    finally:
        os.close(fd)
        os.unlink(probe)


def check_not_own(output: str | None, targets: Sequence[str], state: str | None = None) -> None:
    """Refuse ``-o FILE`` when it is one of the run's own inputs or stores: a target that
    is a file, the state file or one of SQLite's files beside it. Writing it would destroy
    what the run reads or keeps, so this is a UsageError before anything is opened for
    writing. The same file is found whatever its spelling: a relative path, a symlink, a
    hard link.
    """
    if output is None:
        return
    own = [(t.url, "a target") for t in map(classify, targets) if t.kind == "file"]
    if state is not None:
        own += [(state + suffix, "the state") for suffix in ("", *SQLITE_COMPANIONS)]
    for path, what in own:
        if _same_path(output, path):
            raise UsageError(
                f"-o {printable(output)} is {what} of the run ({printable(path)}): "
                "writing it would destroy it; write to another file"
            )


def _same_path(one: str, other: str) -> bool:
    """Whether two paths name one file (resolved links; the same inode when both exist)."""
    if os.path.realpath(one) == os.path.realpath(other):
        return True
    first, second = _stat(one), _stat(other)
    return first is not None and second is not None and os.path.samestat(first, second)
