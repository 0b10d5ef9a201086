"""Plain-text sitemaps: one absolute URL per line, anything else skipped and counted;
and the rule for scheme-less locations (:func:`schemeless_host`), shared with XML.

Lines end at LF, CRLF or CR, are decoded as UTF-8 with
replacement, and stripped of surrounding blank space. A line longer than the URL length
limit is skipped without ever being held whole: memory stays bounded by that limit.
A line that starts with a host name but no scheme (``www.example.com/page``) is passed
on like a URL: the parser reads it by the same rule as such an XML location.
"""

from __future__ import annotations

import re
from typing import Final

from sitemap_reader.parse.entry import Sink, loc_entry

_LINE: Final = re.compile(rb"[^\s][^\r\n]*")
_ABSOLUTE: Final = re.compile(r"https?://", re.IGNORECASE)
_SPACE: Final = " \t\r\n\f\v\u00a0\u3000\ufeff" + "".join(map(chr, range(0x2000, 0x200C)))

# --- scheme-less locations -----------------------------------------------------------
#
# "www.example.com/page" in a sitemap means the page on www.example.com: resolved as a
# relative reference it would become https://site/dir/www.example.com/page, a page that
# does not exist. But "page.html", "index.php?id=3" or "dir/file.xml" are real relative
# references. So a host is recognised only when the first segment (up to "/", "?", "#"
# or the end) is dot-separated labels, optionally with a port, and either starts with
# "www." or ends in a known-looking top-level domain: a common generic one, or two
# letters (a country code) that are not also a common file extension.

_LABEL: Final = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_HOSTLIKE: Final = re.compile(
    rf"\s*(?P<www>www\.)?(?:{_LABEL}\.)+(?P<tld>{_LABEL})\.?(?::[0-9]{{1,5}})?(?:[/?#]|\s*$)",
    re.IGNORECASE,
)
_GENERIC_TLDS: Final = frozenset(
    """com net org info biz edu gov mil int name pro mobi asia tel travel jobs coop aero
    museum app dev page blog shop store online site website web tech xyz club news media
    live cloud digital agency email link click top icu vip work world life today space
    fun art design studio network systems solutions services group company center global
    academy school education university wiki guru ninja rocks social support host press
    video photo photos music games game market marketing consulting finance money bank
    health care law legal realestate travel tours hotel restaurant events camera
    """.split()  # noqa: SIM905 - a word list reads better than 100 quoted strings
)
# Two-letter endings that are file extensions far more often than hosts in sitemaps
# (.md Moldova, .py Paraguay, .do Dominican Republic, .sh St Helena, .ps Palestine...).
_FILE_EXTENSIONS_2: Final = frozenset({"js", "md", "py", "do", "sh", "rb", "gz", "ps", "cs", "pm"})


def schemeless_host(text: str) -> bool:
    """Does this location start with a host name though it has no scheme?

    >>> [schemeless_host(t) for t in ("www.example.com/a", "example.de", "page.html")]
    [True, True, False]
    >>> [schemeless_host(t) for t in ("dir/file.xml", "login.do?x=1", "/a", "https://a.b/")]
    [False, False, False, False]
    """
    match = _HOSTLIKE.match(text)
    if match is None:
        return False
    if match.group("www"):
        return True
    tld = match.group("tld").lower()
    if tld.startswith("xn--"):
        return True
    if len(tld) == 2:
        return tld.isalpha() and tld not in _FILE_EXTENSIONS_2
    return tld in _GENERIC_TLDS


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
            self._lines(data, start, end)
        if len(self._partial) > self._max_line * 4:
            self._partial = b""
            if not self._skipping:
                self._skipping = True
                self._too_long()

    def _lines(self, data: bytes, start: int, end: int) -> None:
        """Every whole line of ``data[start:end]`` to :meth:`_line`."""
        # Blank lines are skipped inside the regex engine: a body of 60 MB of line
        # breaks costs no Python-level work per line.
        for match in _LINE.finditer(data, start, end):
            self._line(match.group())

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
        if (_ABSOLUTE.match(text) or schemeless_host(text)) and "\ufffd" not in text:
            if not self._started:
                self._started = True
                self._sink.text_started()
            pending = self._sink.pending
            pending.append(loc_entry(text))
            if len(pending) >= self._sink.batch:
                self._sink.drain()
        else:
            self._sink.problem("junk-line", f"not an absolute URL: {text[:100]!r}")
