"""Per-target incremental state kept in Redis, around the ordinary SQLite state file.

The incremental rules (what is unchanged, what was removed) live in
:mod:`sitemap_reader.store` on SQLite. Rather than a second implementation of them on
Redis, a worker keeps each target's state file as one compressed blob in a Redis hash:
before a run the blob becomes a temporary state file, the run uses it as ``--state FILE``
would, and after the output file is in place the file goes back into the blob, in the
same script that marks the target done. So the state of a target moves forward exactly
when its output does, whichever worker ran it; a run that dies leaves the old state, and
the next run repeats the same changes. The cost is moving the blob (about 30 bytes per
URL before compression) each run, which is small next to fetching the sitemaps.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import zlib
from types import TracebackType

from sitemap_reader.errors import StateError

#: First bytes of a stored blob: the format, so a future one can be told apart.
MAGIC = b"SRS1"


class StateFile:
    """A temporary SQLite state file made from a stored blob (or empty), in a private
    temporary directory removed on exit.

    >>> with StateFile(None) as state:
    ...     state.blob() is None          # nothing was written
    True
    """

    def __init__(self, blob: bytes | None) -> None:
        self._blob = blob
        self._dir = tempfile.TemporaryDirectory(prefix="sitemap-reader-state-")
        self.path = os.path.join(self._dir.name, "state.db")

    def __enter__(self) -> StateFile:
        if self._blob is not None:
            with open(self.path, "wb") as out:
                out.write(unpack(self._blob))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._dir.cleanup()

    def blob(self) -> bytes | None:
        """The state file as a blob, once the run has closed it (None if never made)."""
        if not os.path.exists(self.path):
            return None
        # The run closed its connection, which checkpoints the WAL into the main file;
        # checkpoint again in case a connection was left open (a file copy must be whole).
        db = sqlite3.connect(self.path)
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.close()
        with open(self.path, "rb") as src:
            return pack(src.read())


def pack(data: bytes) -> bytes:
    """A state file as a stored blob."""
    return MAGIC + zlib.compress(data, 6)


def unpack(blob: bytes) -> bytes:
    """A stored blob back to the bytes of a state file."""
    if not blob.startswith(MAGIC):
        raise StateError("the stored state of this target is not a sitemap-reader state blob")
    try:
        return zlib.decompress(blob[len(MAGIC) :])
    except zlib.error as exc:
        raise StateError(f"the stored state of this target is damaged: {exc}") from exc
