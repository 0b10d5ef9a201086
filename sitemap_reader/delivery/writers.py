"""Records as text, a batch at a time: JSON Lines, CSV rows and bare URLs.

Every output of records (``dump``, the distributed workers) goes through here. The shape
is the one ``UrlRecord.to_dict()`` gives and docs/reference/record.md documents, byte for
byte: keys in their order, the optional ones only when present, ``json.dumps``'s spacing,
and every character that could break a line or drive a terminal written as a ``\\uXXXX``
escape (:func:`json_text`).

Theory of operation
-------------------
Writing a record used to cost more than reading it: a dict per record (``to_dict``), then
``json.dumps`` per record, ~15 us against ~10 us to parse it. Here a batch of plain
records (no alternates, images, videos, news or PageMaps: nearly every record of a real
site) is encoded in C by msgspec in one call: the batch's fields are taken column by
column (list comprehensions, no Python frame per record), packed into a small
``msgspec.Struct`` per record (``_Line``: its fields in JSON key order, the optional ones
omitted when at their default, exactly the keys ``to_dict`` leaves out), encoded as one
JSON array, re-spaced by ``msgspec.json.format(indent=0)`` into ``json.dumps``'s
``", "`` and ``": "`` spacing, and cut into lines where one record ends and the next
begins (``}, {"url": `` occurs nowhere else: inside a string the quotes are escaped,
and no nested object of a plain record starts with ``url``). About 1.5 us per record
instead of 15.

The fast path is taken only where it is known to give the same bytes; everything else
takes the reference path (``to_dict`` and :func:`json_text`, record by record):

- a record with an extension list or news (a nested shape: reference path, per record);
- a batch with a float msgspec writes differently from Python's ``repr`` (zero aside,
  below 1e-4 or from 1e16 in magnitude, NaN, infinities: ``1e-05`` against ``0.00001``);
- a batch with a lastmod in a time zone other than UTC (msgspec rounds an offset with
  seconds to whole minutes; isoformat does not);
- a batch msgspec refuses (a lone surrogate in a string, an unexpected type).

``tests/delivery/test_writers.py`` holds the two paths to each other on the corpus, hostile text
and Hypothesis-made records.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import select
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from itertools import repeat
from operator import attrgetter
from typing import IO, Any, Final, Protocol

import msgspec

from sitemap_reader._safe_text import FORMULA_STARTS, csv_cell
from sitemap_reader.parse import native
from sitemap_reader.records import RECORD_FIELDS, Alternate, Image, UrlRecord, format_datetime
from sitemap_reader.records.fields import Kind, names

__all__ = [
    "CSV_COLUMNS",
    "WRITERS",
    "CsvWriter",
    "DescriptorText",
    "JsonlWriter",
    "RecordWriter",
    "TxtWriter",
    "csv_row",
    "csv_text",
    "json_line",
    "json_text",
    "jsonl_text",
    "make_writer",
    "write_whole",
]

# --------------------------------------------------------------------------- JSON text

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
    return _escape_raw(json.dumps(value, ensure_ascii=False, indent=indent))


def _escape_raw(text: str) -> str:
    """``text`` with the characters of :data:`_JSON_RAW` as ``\\uXXXX`` escapes."""
    # Nearly every line is ASCII without DEL: two C-speed scans, far cheaper than a search.
    if (text.isascii() and "\x7f" not in text) or _JSON_RAW.search(text) is None:
        return text
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# --------------------------------------------------------------------------- columns


class _Line(msgspec.Struct, omit_defaults=True, gc=False):
    """The JSON object of a plain record: ``to_dict``'s keys in its order; the fields with
    a default are left out at their default, as ``to_dict`` leaves them out."""

    url: Any
    lastmod: Any
    changefreq: Any
    priority: Any
    score: Any
    sitemap: Any
    title: Any = None
    mobile: bool = False
    revisit: Any = None
    removed: bool = False
    robots: Any = None
    source: Any = None


_ENCODE: Final = msgspec.json.Encoder().encode
_FORMAT: Final = msgspec.json.format
#: Where one record's object ends and the next begins, once re-spaced (see the module doc).
_BETWEEN: Final = b'}, {"url": '


def _floats_like_repr(values: Sequence[Any]) -> bool:
    """True when msgspec writes every float of ``values`` (None and 0 aside) as ``repr``
    does: finite, and from 1e-4 to under 1e16 in magnitude (both use plain decimals
    there, shortest round trip)."""
    numbers = [v for v in values if v]
    if not numbers:
        return True
    magnitudes = list(map(abs, numbers))
    return math.isfinite(sum(magnitudes)) and min(magnitudes) >= 1e-4 and max(magnitudes) < 1e16


def _utc_only(lastmods: Sequence[datetime | None]) -> bool:
    """True when every lastmod is None or in UTC (msgspec writes those as isoformat)."""
    zones = set(map(attrgetter("tzinfo"), filter(None, lastmods)))
    return not zones or zones == {UTC}


def _columns(batch: Sequence[UrlRecord]) -> list[_Line] | None:
    """The batch's plain records as :class:`_Line` values; None: some value would not be
    written as the reference writes it."""
    lastmods = [r.lastmod for r in batch]
    priorities = [r.priority for r in batch]
    scores = list(map(round, [r.score for r in batch], repeat(4)))
    if not (_utc_only(lastmods) and _floats_like_repr(priorities) and _floats_like_repr(scores)):
        return None
    revisits = [r.revisit for r in batch]
    if revisits.count(None) != len(revisits):
        revisits = [None if v is None else round(v) for v in revisits]
    return list(
        map(
            _Line,
            [r.url for r in batch],
            lastmods,
            [r.changefreq for r in batch],
            priorities,
            scores,
            [r.sitemap for r in batch],
            [r.title for r in batch],
            [r.mobile for r in batch],
            revisits,
            [r.removed for r in batch],
            [r.robots for r in batch],
            [r.source for r in batch],
        )
    )


def _fast_jsonl(batch: Sequence[UrlRecord]) -> str | None:
    """The JSON Lines of a batch of plain records, or None (use the reference path)."""
    lines = _columns(batch)
    if lines is None:
        return None
    try:
        data = _FORMAT(_ENCODE(lines), indent=0)
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return None  # a lone surrogate (UnicodeEncodeError is a ValueError), a foreign type
    text = data[1:-1].replace(_BETWEEN, b'}\n{"url": ').decode()
    return _escape_raw(text) + "\n"


def json_line(record: UrlRecord) -> str:
    """One record as a JSON line: the reference path (``to_dict`` and :func:`json_text`)."""
    return json_text(record.to_dict()) + "\n"


def _plain_test(nested: Sequence[str]) -> Callable[[Sequence[UrlRecord]], list[bool]]:
    """A function telling, for each record of a batch, whether it is plain: none of the
    ``nested`` fields (the record's field names) has a value.

    Compiled from the names, so the test reads them off the record's description and
    still runs as the inline test written by hand did (about 40 ns a record; a call per
    record, even of an ``attrgetter``, costs three times that: 8 % of the fast path).
    """
    test = " or ".join(f"r.{name}" for name in nested)
    plain: Callable[[Sequence[UrlRecord]], list[bool]] = eval(
        f"lambda batch: [not ({test}) for r in batch]"
    )
    return plain


_plain_flags: Final = _plain_test(names(RECORD_FIELDS, Kind.NESTED))


def _runs(
    batch: Sequence[UrlRecord],
    fast: Callable[[Sequence[UrlRecord]], str | None],
    slow: Callable[[UrlRecord], str],
) -> str:
    """The text of a batch: runs of plain records by ``fast`` (its reference ``slow``
    when ``fast`` declines), extended records by ``slow``, in order."""
    if not batch:
        return ""
    flags = _plain_flags(batch)
    if all(flags):
        text = fast(batch)
        return text if text is not None else "".join(map(slow, batch))
    parts: list[str] = []
    start = 0
    for i, plain in enumerate(flags):
        if plain:
            continue
        if start < i:
            parts.append(_runs(batch[start:i], fast, slow))
        parts.append(slow(batch[i]))
        start = i + 1
    if start < len(batch):
        parts.append(_runs(batch[start:], fast, slow))
    return "".join(parts)


def jsonl_text(batch: Sequence[UrlRecord]) -> str:
    """The records as JSON Lines, one line each (``to_dict``'s shape, :func:`json_text`'s
    escapes).

    >>> jsonl_text([UrlRecord("https://example.com/a", priority=0.8, score=0.61234)])
    '{"url": "https://example.com/a", "lastmod": null, "changefreq": null, "priority": 0.8, \
"score": 0.6123, "sitemap": null}\\n'
    """
    if native.active():  # the same text, written in C (tests/parse/test_native.py)
        text: str = native.CORE.jsonl(batch, UrlRecord, Image, Alternate, json_line)
        return text
    return _runs(batch, _fast_jsonl, json_line)


# --------------------------------------------------------------------------- CSV

#: CSV columns: every field of :class:`UrlRecord`, in its order (derived, so a new field
#: is a new column); the nested fields' columns hold JSON text, and every column is
#: empty when the record has no such value.
CSV_COLUMNS: Final = names(RECORD_FIELDS)
_JSON_COLUMNS: Final = frozenset(names(RECORD_FIELDS, Kind.NESTED))
#: The columns holding text the site chose (the others are numbers, dates, booleans and
#: our own words): the cells a spreadsheet formula could hide in.
_SITE_TEXT_COLUMNS: Final = frozenset(names(RECORD_FIELDS, Kind.NESTED, Kind.SITE_TEXT))
_FORMULA_CHARS: Final = frozenset(FORMULA_STARTS)
_NO_JSON: Final = ("",) * 4


def _raw_cell(name: str, value: object) -> str:
    if value is None:
        return ""
    if name in _JSON_COLUMNS:
        return json_text(value)
    return str(value)


def _safe_cell(name: str, value: object) -> str:
    text = _raw_cell(name, value)
    return csv_cell(text) if name in _SITE_TEXT_COLUMNS else text


class _Rows:
    """CSV rows as text: the csv module's C writer on a reused buffer."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer, lineterminator="\n")

    def text(self, rows: Any) -> str:
        self.writer.writerows(rows)
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return text


def _site_cells(values: list[Any], raw: bool) -> list[Any]:
    """A column of site text, each cell that would start a formula made inert (unless
    ``raw``); the column itself when no cell needs it (one C-speed pass)."""
    if raw or not _FORMULA_CHARS.intersection([v[:1] for v in values if v]):
        return values
    return [csv_cell(v) if v else v for v in values]


def _dates(lastmods: list[datetime | None]) -> list[str | None]:
    """:func:`format_datetime` of each lastmod: in C (msgspec writes them, its decoder
    reads the strings back) when every one is in UTC, where both write the same text."""
    if _utc_only(lastmods):
        dates: list[str | None] = msgspec.json.decode(_ENCODE(lastmods))
        return dates
    return [None if m is None else format_datetime(m) for m in lastmods]


def _numbers(values: list[Any]) -> list[str]:
    """Numbers as the csv module writes them (``repr``; None as an empty cell)."""
    return ["" if v is None else repr(v) for v in values]


#: What makes the csv module quote a cell (QUOTE_MINIMAL, "," and "\n" as terminator).
_QUOTED: Final = re.compile('[,"\r\n]')


def _joined(columns: list[list[Any]], count: int) -> str | None:
    """The CSV rows of string columns joined in C, or None when a cell would need the
    csv module's quoting (a comma, a quote, a line break) or is not a string."""
    cells: list[list[str]] = []
    for column in columns:
        if column.count(None) == count:
            column = [""] * count
        elif None in column:
            column = ["" if v is None else v for v in column]
        try:
            if _QUOTED.search("".join(column)):
                return None
        except TypeError:  # not text: the csv module's str() decides
            return None
        cells.append(column)
    lines = map(",".join, zip(*cells, strict=True))
    return "\n".join(lines) + "\n"


def csv_row(record: UrlRecord, *, raw: bool = False) -> str:
    """One record as a CSV row: the reference path (``to_dict``, a cell at a time)."""
    cell = _raw_cell if raw else _safe_cell
    data = record.to_dict()
    return _Rows().text([[cell(name, data.get(name)) for name in CSV_COLUMNS]])


def csv_text(batch: Sequence[UrlRecord], *, raw: bool = False) -> str:
    """The records as CSV rows under :data:`CSV_COLUMNS` (no header): extension fields as
    JSON text, site text made inert for a spreadsheet unless ``raw`` (``--csv-raw``).

    The csv module's C writer takes a batch of plain records as columns (``str`` of a
    float is its ``repr`` in both paths, so no float needs the reference path here).
    """
    rows = _Rows()

    def slow(record: UrlRecord) -> str:
        return csv_row(record, raw=raw)

    def fast(plain: Sequence[UrlRecord]) -> str:
        count = len(plain)
        revisits = [r.revisit for r in plain]
        if revisits.count(None) != len(revisits):
            revisits = [None if v is None else round(v) for v in revisits]
        titles = [r.title for r in plain]
        named: dict[str, list[Any]] = {
            "url": _site_cells([r.url for r in plain], raw),
            "lastmod": _dates([r.lastmod for r in plain]),
            "changefreq": [r.changefreq for r in plain],
            "priority": _numbers([r.priority for r in plain]),
            "score": _numbers(list(map(round, [r.score for r in plain], repeat(4)))),
            "sitemap": _site_cells([r.sitemap for r in plain], raw),
            "title": titles if titles.count(None) == count else _site_cells(titles, raw),
            "mobile": ["True" if r.mobile else "" for r in plain],
            "revisit": _numbers(revisits),
            "removed": ["True" if r.removed else "" for r in plain],
            "robots": [r.robots for r in plain],
            "source": [r.source for r in plain],
        }
        # A plain record has no nested value: those columns are empty. (A field missing
        # from ``named`` is a KeyError, never a column left empty.)
        empty = [None] * count
        columns = [empty if name in _JSON_COLUMNS else named[name] for name in CSV_COLUMNS]
        text = _joined(columns, count)
        if text is not None:
            return text
        return rows.text(zip(*columns, strict=True))

    return _runs(batch, fast, slow)


# --------------------------------------------------------------------------- writers

# Text longer than this may not fit the buffered writer's 8 KiB buffer (4 UTF-8 bytes a
# character at most); shorter text is buffered whole and flushed by a loop that retries.
_BUFFERED_WHOLE: Final = 2048


def write_whole(stream: IO[str], text: str) -> None:
    """Write all of ``text`` to ``stream``, even when a signal interrupts the write.

    When a signal with a Python handler (the CLI's Ctrl-C, a worker's SIGTERM) interrupts
    a write to a pipe, FIFO or terminal, the kernel takes part of it and the file object
    returns that count; the text layer ignores the count, so the rest of the text is lost
    and the next write continues after a cut line (measured with ``PYTHONUNBUFFERED=1``,
    common in containers, where the text layer writes to the descriptor's file object
    directly: 69,632 of 571,890 bytes written, then the next batch). So on POSIX a long
    text goes to the descriptor here, in a loop that writes until every byte is taken;
    the text layer's own buffer is flushed first, so the order of lines holds. Short
    text, streams without a descriptor (an in-memory buffer) and Windows (whose signals
    do not interrupt writes) take the stream's own ``write``.
    """
    if isinstance(stream, io.TextIOWrapper) and len(text) > _BUFFERED_WHOLE and os.name == "posix":
        buffer = stream.buffer
        raw = buffer if isinstance(buffer, io.FileIO) else getattr(buffer, "raw", None)
        if isinstance(raw, io.FileIO):
            stream.flush()
            _send(raw.fileno(), text.encode(stream.encoding, stream.errors or "strict"))
            return
    stream.write(text)


class _Unsent(OSError):
    """A write the OS refused part of: the OSError, and the bytes that went out first."""

    def __init__(self, error: OSError, sent: int) -> None:
        super().__init__(error.errno, error.strerror)
        self.error = error
        self.sent = sent


def _send(fd: int, data: bytes) -> None:
    """Hand every byte of ``data`` to the descriptor, in a loop that writes the rest after
    a short write (a signal, a pipe) and waits while a non-blocking one is full. A
    refusal (a full disk) raises :class:`_Unsent`, which says how many bytes went out."""
    view = memoryview(data)
    sent = 0
    while sent < len(view):
        try:
            sent += os.write(fd, view[sent:])
        except BlockingIOError:
            select.select([], [fd], [])
        except OSError as exc:
            raise _Unsent(exc, sent) from exc


class DescriptorText:
    """A text stream onto a file descriptor, without a buffer: each :meth:`write` hands
    all of its text to the OS before it returns (:func:`_send`), so what a writer wrote
    is on its way and nothing waits in a buffer to fail later. When the OS refuses part
    of a write (a full disk), the OSError raised is the OS's, and :meth:`records_out`
    counts the records of that write that went out whole before it: with the writes
    that succeeded, how many whole records the output holds.

    ``stream`` is the text stream it stands for (its buffer is flushed first, and its
    encoding kept); :meth:`over` gives one, or None for a stream without a descriptor.
    """

    def __init__(self, stream: IO[str], fd: int) -> None:
        stream.flush()
        self._fd = fd
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        self._errors = getattr(stream, "errors", None) or "strict"
        #: The text of the write the OS refused, and the bytes of it that went out.
        self._cut: tuple[str, int] | None = None

    @classmethod
    def over(cls, stream: IO[str]) -> DescriptorText | None:
        """One over ``stream``'s descriptor (None: it has none, e.g. an in-memory buffer)."""
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            return None
        return cls(stream, fd)

    def write(self, text: str) -> int:
        """Write all of ``text`` (the OS's OSError when it refuses some)."""
        data = text.encode(self._encoding, self._errors)
        try:
            _send(self._fd, data)
        except _Unsent as cut:
            self._cut = (text, cut.sent)
            raise cut.error from None
        return len(text)

    def flush(self) -> None:
        """Nothing waits in a buffer: every write went out when it returned."""

    def fileno(self) -> int:
        return self._fd

    def records_out(self, fmt: str) -> int:
        """Records of the refused write that went out whole (0 when none was refused):
        a JSON line or a URL ends at each line break, a CSV row at each one outside
        quotes (a quoted cell may hold one)."""
        if self._cut is None:
            return 0
        text, sent = self._cut
        out = text.encode(self._encoding, self._errors)[:sent].decode(self._encoding, "ignore")
        if fmt == "csv":
            return sum(part.count("\n") for part in out.split('"')[::2])
        return out.count("\n")


class RecordWriter(Protocol):
    """Writes records as whole lines to a text stream, a batch in one write."""

    def write(self, record: UrlRecord) -> None: ...

    def write_batch(self, batch: Sequence[UrlRecord]) -> None: ...


class JsonlWriter:
    """One JSON object a line, keys in the record's order (``UrlRecord.to_dict``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, record: UrlRecord) -> None:
        """Write the record as one JSON line."""
        self._stream.write(json_line(record))

    def write_batch(self, batch: Sequence[UrlRecord]) -> None:
        """Write the records as JSON lines, in one write."""
        if batch:
            write_whole(self._stream, jsonl_text(batch))


class TxtWriter:
    """The URL alone, one a line: for ``xargs``, ``wget -i`` and friends."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, record: UrlRecord) -> None:
        """Write the record's URL as one line."""
        self._stream.write(record.url + "\n")

    def write_batch(self, batch: Sequence[UrlRecord]) -> None:
        """Write the records' URLs, one a line, in one write."""
        if batch:
            write_whole(self._stream, "\n".join([r.url for r in batch]) + "\n")


class CsvWriter:
    """A header row, then one row per record; extension fields as JSON text.

    Every cell of site text (URLs, titles, the JSON text of extensions) that a
    spreadsheet would read as a formula gets a leading ``'`` (:func:`csv_cell`), unless
    ``raw`` (``--csv-raw``) asks for the bytes as the site sent them.
    """

    def __init__(self, stream: IO[str], *, raw: bool = False) -> None:
        self._stream = stream
        self._raw = raw
        stream.write(",".join(CSV_COLUMNS) + "\n")

    def write(self, record: UrlRecord) -> None:
        """Write the record as one CSV row."""
        self.write_batch([record])

    def write_batch(self, batch: Sequence[UrlRecord]) -> None:
        """Write the records as CSV rows, in one write."""
        if batch:
            write_whole(self._stream, csv_text(batch, raw=self._raw))


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
