"""Plain-text sitemaps: one absolute URL per line, anything else skipped and counted.

Lines end at LF, CRLF or CR, are decoded as UTF-8 with
replacement, and stripped of surrounding blank space. A line longer than the URL length
limit is skipped without ever being held whole: memory stays bounded by that limit.
"""

from __future__ import annotations

import re
from typing import Final

from sitemap_reader.parse.xml import ENTRY_SIZE, Sink

_NO_FIELDS: Final = [None] * (ENTRY_SIZE - 1)
_LINE: Final = re.compile(rb"[^\s][^\r\n]*")
_ABSOLUTE: Final = re.compile(r"https?://", re.IGNORECASE)
_SPACE: Final = " \t\r\n\f\v\u00a0\u3000\ufeff" + "".join(map(chr, range(0x2000, 0x200C)))


class TextReader:
    """Splits a text body into lines and reports each absolute URL to the sink."""

    def __init__(self, sink: Sink, *, max_line: int) -> None:
        self._sink = sink
        self._max_line = max_line
        self._partial = b""
        self._skipping = False  # inside an over-long line: drop bytes until its end
        self._started = False

    def feed(self, data: bytes) -> None:
        if self._partial:
            data = self._partial + data
        end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if end == -1:
            self._partial = data
        else:
            self._partial = data[end + 1 :]
            start = 0
            if self._skipping:  # the rest of an over-long line runs up to the first break
                start = min(i for i in (data.find(b"\n"), data.find(b"\r")) if i != -1)
                self._skipping = False
            # Blank lines are skipped inside the regex engine: a body of 60 MB of line
            # breaks costs no Python-level work per line.
            for match in _LINE.finditer(data, start, end):
                self._line(match.group())
        if len(self._partial) > self._max_line * 4:
            self._partial = b""
            if not self._skipping:
                self._skipping = True
                self._too_long()

    def close(self) -> None:
        if self._partial and not self._skipping:
            self._line(self._partial)
        self._partial = b""

    def _too_long(self) -> None:
        self._sink.problem("line-too-long", f"a line longer than {self._max_line} chars skipped")

    def _line(self, raw: bytes) -> None:
        if len(raw) > self._max_line * 4:  # the same verdict however the body was chunked
            self._too_long()
            return
        text = raw.decode("utf-8", "replace").strip(_SPACE)
        if not text:
            return
        if _ABSOLUTE.match(text) and "\ufffd" not in text:
            if not self._started:
                self._started = True
                self._sink.text_started()
            pending = self._sink.pending
            pending.append([text, *_NO_FIELDS])
            if len(pending) >= self._sink.batch:
                self._sink.drain()
        else:
            self._sink.problem("junk-line", f"not an absolute URL: {text[:100]!r}")
