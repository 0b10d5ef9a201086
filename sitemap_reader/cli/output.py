"""Where records go: the record filter, the three writers, and the atomic output file.

A writer turns a :class:`UrlRecord` into one complete line (JSONL, CSV, or the bare URL)
and writes it with a single call, so whatever has been written is always whole lines.
:class:`AtomicFile` makes ``-o FILE`` all-or-nothing: the records go to a temporary file in
FILE's directory, which replaces FILE only when the run ends normally; a FILE that is no
regular file (a FIFO, a device) is written in place instead, and a symlink is followed.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from typing import IO, Final, Protocol

from sitemap_reader.records import UrlRecord
from sitemap_reader.safe_text import csv_cell

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
    "title",
    "mobile",
    "pagemaps",
    "revisit",
    "removed",
)
_JSON_COLUMNS: Final = frozenset(("alternates", "images", "videos", "news", "pagemaps"))
#: The columns holding text the site chose (the others are numbers, dates, booleans and
#: the changefreq keyword): the cells a spreadsheet formula could hide in.
_SITE_TEXT_COLUMNS: Final = _JSON_COLUMNS | {"url", "sitemap", "title"}


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """``--include`` and ``--exclude``, applied to each record in turn: ``--include``
    keeps a URL when any pattern matches; ``--exclude`` drops it when any pattern
    matches (exclude wins). (``--since`` is the reader's own option: the records older
    than it never leave the reader.)
    """

    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    def keep(self, record: UrlRecord) -> bool:
        """True when the record goes to the output."""
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
        self._stream.write(json_text(record.to_dict()) + "\n")


# What json.dumps(ensure_ascii=False) leaves raw but must not reach a reader raw: DEL and
# the C1 controls (U+0085 NEL is a line break for str.splitlines(), U+009B a terminal CSI),
# the two Unicode line separators, and lone surrogates (a file name that is not UTF-8),
# which cannot be encoded as UTF-8. The C0 controls are escaped by json itself.
_JSON_RAW: Final = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def json_text(value: object, *, indent: int | None = None) -> str:
    r"""``value`` as JSON (UTF-8 text) in which no character breaks a line for
    ``str.splitlines()`` or drives a terminal: those are written as ``\uXXXX`` escapes,
    which decode to the same value. One line unless ``indent`` is given.

    >>> json_text({"title": "a\u2028b\x85c"})
    '{"title": "a\\u2028b\\u0085c"}'
    """
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    # Nearly every line is ASCII without DEL: two C-speed scans, far cheaper than a search.
    if (text.isascii() and "\x7f" not in text) or _JSON_RAW.search(text) is None:
        return text
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class TxtWriter:
    """The URL alone, one a line: for ``xargs``, ``wget -i`` and friends."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, record: UrlRecord) -> None:
        """Write the record's URL as one line."""
        self._stream.write(record.url + "\n")


class CsvWriter:
    """A header row, then one row per record; extension fields as JSON text.

    Every cell of site text (URLs, titles, the JSON text of extensions) that a
    spreadsheet would read as a formula gets a leading ``'`` (:func:`csv_cell`), unless
    ``raw`` (``--csv-raw``) asks for the bytes as the site sent them.
    """

    def __init__(self, stream: IO[str], *, raw: bool = False) -> None:
        self._stream = stream
        self._buffer = io.StringIO()
        self._csv = csv.writer(self._buffer, lineterminator="\n")
        self._cell = _raw_cell if raw else _safe_cell
        self._emit(CSV_COLUMNS)

    def write(self, record: UrlRecord) -> None:
        """Write the record as one CSV row."""
        data = record.to_dict()
        cell = self._cell
        self._emit(cell(name, data.get(name)) for name in CSV_COLUMNS)

    def _emit(self, row: object) -> None:
        # Format into a buffer first, so the stream gets each row in one write.
        self._csv.writerow(row)  # type: ignore[arg-type]
        self._stream.write(self._buffer.getvalue())
        self._buffer.seek(0)
        self._buffer.truncate()


def _raw_cell(name: str, value: object) -> str:
    if value is None:
        return ""
    if name in _JSON_COLUMNS:
        return json_text(value)
    return str(value)


def _safe_cell(name: str, value: object) -> str:
    text = _raw_cell(name, value)
    return csv_cell(text) if name in _SITE_TEXT_COLUMNS else text


WRITERS: Final[dict[str, type[JsonlWriter] | type[CsvWriter] | type[TxtWriter]]] = {
    "jsonl": JsonlWriter,
    "csv": CsvWriter,
    "txt": TxtWriter,
}


def make_writer(fmt: str, stream: IO[str], *, csv_raw: bool = False) -> RecordWriter:
    """The writer for ``--format`` (jsonl, csv or txt) on ``stream``; ``csv_raw``: CSV
    cells as the site wrote them (``--csv-raw``), formulas included."""
    if fmt == "csv":
        return CsvWriter(stream, raw=csv_raw)
    return WRITERS[fmt](stream)


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
    """The mode the target keeps (or would get from ``open``): mkstemp makes it 0600."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
