"""Where records go: the record filter, the three writers, and the atomic output file.

A writer turns a :class:`UrlRecord` into one complete line (JSONL, CSV, or the bare URL)
and writes it with a single call, so whatever has been written is always whole lines.
:class:`AtomicFile` makes ``-o FILE`` all-or-nothing: the records go to a temporary file in
FILE's directory, which replaces FILE only when the run ends normally.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Final, Protocol

from sitemap_reader.records import UrlRecord

#: CSV columns, in JSONL key order; the extension columns hold JSON text, and every
#: column is empty when the record has no such value.
CSV_COLUMNS: Final = (
    "url",
    "lastmod",
    "changefreq",
    "priority",
    "score",
    "sitemap",
    "alternates",
    "images",
    "videos",
    "news",
    "revisit",
    "removed",
)
_JSON_COLUMNS: Final = frozenset(("alternates", "images", "videos", "news"))


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """``--since``, ``--include`` and ``--exclude``, applied to each record in turn.

    A record without a lastmod passes ``--since``: nothing says it is old, and a crawler
    that drops it could miss a changed page. ``--include`` keeps a URL when any pattern
    matches; ``--exclude`` drops it when any pattern matches (exclude wins).
    """

    since: datetime | None = None
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    def keep(self, record: UrlRecord) -> bool:
        """True when the record goes to the output."""
        if self.since is not None and record.lastmod is not None and record.lastmod < self.since:
            return False
        url = record.url
        if self.include and not any(p.search(url) for p in self.include):
            return False
        return not any(p.search(url) for p in self.exclude)


class RecordWriter(Protocol):
    """Writes records as whole lines to a text stream."""

    def write(self, record: UrlRecord) -> None: ...


class JsonlWriter:
    """One JSON object a line, keys in DESIGN.md order (``UrlRecord.to_dict``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, record: UrlRecord) -> None:
        """Write the record as one JSON line."""
        line = json.dumps(record.to_dict(), ensure_ascii=False)
        self._stream.write(line + "\n")


class TxtWriter:
    """The URL alone, one a line: for ``xargs``, ``wget -i`` and friends."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, record: UrlRecord) -> None:
        """Write the record's URL as one line."""
        self._stream.write(record.url + "\n")


class CsvWriter:
    """A header row, then one row per record; extension fields as JSON text."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._buffer = io.StringIO()
        self._csv = csv.writer(self._buffer, lineterminator="\n")
        self._emit(CSV_COLUMNS)

    def write(self, record: UrlRecord) -> None:
        """Write the record as one CSV row."""
        data = record.to_dict()
        self._emit(_csv_cell(name, data.get(name)) for name in CSV_COLUMNS)

    def _emit(self, row: object) -> None:
        # Format into a buffer first, so the stream gets each row in one write.
        self._csv.writerow(row)  # type: ignore[arg-type]
        self._stream.write(self._buffer.getvalue())
        self._buffer.seek(0)
        self._buffer.truncate()


def _csv_cell(name: str, value: object) -> str:
    if value is None:
        return ""
    if name in _JSON_COLUMNS:
        return json.dumps(value, ensure_ascii=False)
    return str(value)


WRITERS: Final[dict[str, type[JsonlWriter] | type[CsvWriter] | type[TxtWriter]]] = {
    "jsonl": JsonlWriter,
    "csv": CsvWriter,
    "txt": TxtWriter,
}


def make_writer(fmt: str, stream: IO[str]) -> RecordWriter:
    """The writer for ``--format`` (jsonl, csv or txt) on ``stream``."""
    return WRITERS[fmt](stream)


class AtomicFile:
    """A text file that appears under its name only when :meth:`commit` is called.

    The data goes to a hidden temporary file in the same directory (same filesystem, so
    ``os.replace`` is atomic); :meth:`commit` flushes, fsyncs and renames it over the
    target; :meth:`abort` deletes it. A process killed in between leaves the target as
    it was (at worst a stray ``.NAME.*.tmp`` file beside it). A target that is a
    directory is refused here, before any work is done (``os.replace`` would only fail
    at the end).
    """

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        if os.path.isdir(self.path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        directory, name = os.path.split(self.path)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        self.stream: IO[str] = open(fd, "w", encoding="utf-8", newline="")  # noqa: SIM115
        self._done = False

    def commit(self) -> None:
        """Make the written data the content of the target file (OSError: not done; call
        :meth:`abort`)."""
        self.stream.flush()
        os.fsync(self.stream.fileno())
        self.stream.close()
        os.chmod(self._tmp, _file_mode(self.path))
        os.replace(self._tmp, self.path)
        self._done = True

    def abort(self) -> None:
        """Throw the written data away; the target file is untouched. A no-op after
        :meth:`commit`. The temporary file is removed even when closing fails (a full
        disk fails the final flush again), so a failed run never leaves it filling it."""
        if self._done:
            return
        self._done = True
        try:
            # The data is being thrown away; the descriptor is closed even when this fails.
            with contextlib.suppress(OSError):
                self.stream.close()
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._tmp)


def _file_mode(path: str) -> int:
    """The mode the target keeps (or would get from ``open``): mkstemp makes it 0600."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
