"""Protocol validation: the sitemaps.org rules to the letter, as findings with file and line.

Sans-I/O, like the rest of ``parse/``. :class:`BodyChecker` is fed one sitemap body (raw
bytes, gzipped or not, exactly as the reader fetched them) and reports :class:`Finding`
values; :func:`check_robots` does the same for a robots.txt; :class:`SiteCheck` ties the
files of one run together (duplicate URLs across sitemaps, index nesting). The crawler's
:class:`~sitemap_reader.SitemapParser` is lenient by design and aggregates problems
without positions, so validation is a separate, light pass over the same bytes: ``check``
and ``report`` feed it from the reader's own walk (a :class:`~sitemap_reader.discovery.
observer.Watch`), never from a second download.

Theory of operation
-------------------
A body has its gzip layers taken off as the reader takes them off
(:class:`~sitemap_reader.parse.gunzip.GzipLayers`: a ``.xml.gz`` sent with
``Content-Encoding: gzip`` arrives gzipped twice), then three checks run on the
decompressed bytes side by side: a byte count (the 50 MB rule, and the reader's
decompressed cap), an incremental strict UTF-8 decoder (the encoding rule, with the line
of the first bad byte; past it expat is given the body with bad bytes replaced, so the
rest is still checked), and the parser's own hardened, bounded expat
(:class:`~sitemap_reader.parse.bounds.BoundedExpat`: entity declarations and external
references refused; one markup token, distinct names, namespace declarations and nesting
bounded by ``Limits.max_xml_*``), so a hostile body costs the checker what it costs the
reader. Its handlers collect the text of ``loc``, ``lastmod``, ``changefreq`` and
``priority`` per entry, with the line where each starts, and check every value when the
entry closes. Expat runs without namespace processing, as in the parser: prefixes are
resolved here from the ``xmlns`` attributes in scope. For the escaping rule the raw bytes
of each ``<loc>`` are kept (a small window, only while a ``<loc>`` is open) and looked at
for the characters the protocol wants entity-escaped.

Findings aggregate per (file, code): the first line, the first example, and a count, so a
file with a million bad dates costs one finding.
"""

from __future__ import annotations

import bisect
import codecs
import hashlib
import pyexpat
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from defusedxml import DefusedXmlException

from sitemap_reader.options.limits import (
    CHECK_FUTURE_SLACK,
    CHECK_MAX_RAW_LOC,
    CHECK_MAX_TRACKED_URLS,
    PROTOCOL_MAX_BYTES,
    PROTOCOL_MAX_URL_LENGTH,
    PROTOCOL_MAX_URLS,
    Limits,
)
from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.entry import Sink, StopParsing
from sitemap_reader.parse.gunzip import GunzipError, GzipLayers
from sitemap_reader.parse.scope import host_of, in_location
from sitemap_reader.parse.xml import SITEMAP_NS

#: How much a finding weighs, worst first. ``error``: search engines drop the file or its
#: URLs; ``warning``: it breaks the protocol, engines tolerate it; ``notice``: advice.
SEVERITIES: Final = ("error", "warning", "notice")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the checker: its severity and what a finding of it means."""

    severity: str
    meaning: str


#: Every finding code, with its severity and meaning (the report and docs/reference/audit.md
#: list them).
RULES: Final = {
    "namespace": Rule("warning", "the root element is not in the sitemap namespace " + SITEMAP_NS),
    "not-a-sitemap": Rule("error", "the body is not a <urlset>, <sitemapindex> or text sitemap"),
    "too-many-urls": Rule("error", f"more than {PROTOCOL_MAX_URLS:,} entries in one file"),
    "too-large": Rule("error", f"more than {PROTOCOL_MAX_BYTES:,} bytes uncompressed"),
    "out-of-location": Rule(
        "warning",
        "a URL outside the directory of its sitemap, which no robots.txt lists (the location rule)",
    ),
    "other-host": Rule(
        "error",
        "a URL or child sitemap on another host than its sitemap's "
        "(and than the host whose robots.txt lists the sitemap)",
    ),
    "url-too-long": Rule("warning", f"a URL longer than {PROTOCOL_MAX_URL_LENGTH:,} characters"),
    "url-not-absolute": Rule("error", "a location that is not an absolute http(s) URL"),
    "url-not-encoded": Rule(
        "warning", "a URL with characters that must be percent-encoded (space, non-ASCII)"
    ),
    "not-escaped": Rule("warning", "a location with ' \" or > not written as an entity"),
    "bad-date": Rule("warning", "a lastmod that is not a W3C Datetime"),
    "future-lastmod": Rule("notice", "a lastmod in the future"),
    "bad-changefreq": Rule("warning", "a changefreq that is not one of the protocol's values"),
    "bad-priority": Rule("warning", "a priority that is not a number from 0.0 to 1.0"),
    "missing-loc": Rule("error", "an entry without a <loc>"),
    "wrong-entry": Rule("warning", "a <sitemap> in a urlset or a <url> in an index"),
    "no-entries": Rule("warning", "a sitemap with no entries"),
    "not-utf8": Rule("error", "the body is not UTF-8"),
    "xml-syntax": Rule("error", "the XML is not well-formed"),
    "xml-forbidden": Rule("error", "entity declarations or external references (refused)"),
    "gzip": Rule("error", "the gzip stream is corrupt or truncated"),
    "nested-index": Rule("warning", "a sitemap index listed by another sitemap index"),
    "duplicate-url": Rule("notice", "a URL listed more than once (in this file or an earlier one)"),
    "robots-relative-sitemap": Rule(
        "warning", "a robots.txt Sitemap: line that is not an absolute URL"
    ),
    "fetch-failed": Rule("error", "the file could not be fetched or read"),
    "no-sitemap": Rule("error", "no sitemap was found for the target"),
    "check-limit": Rule("error", "a bound of the checker was reached; the rest was not checked"),
}

CHANGEFREQS: Final = frozenset(
    ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
)
# W3C Datetime (https://www.w3.org/TR/NOTE-datetime): YYYY, YYYY-MM, YYYY-MM-DD, or a
# date with hh:mm[:ss[.s+]] and a time zone designator (Z or +hh:mm / -hh:mm).
_W3C: Final = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?"
)
_PRIORITY: Final = re.compile(r"(?:0(?:\.\d+)?|1(?:\.0+)?|\.\d+)")
_UNENCODED: Final = re.compile(r"[^\x21-\x7e]|[\"<>\\^`{|}]")
_FIELDS: Final = frozenset(("loc", "lastmod", "changefreq", "priority"))
_ENTRY_OF: Final = {"urlset": "url", "sitemapindex": "sitemap"}
_FEEDS: Final = frozenset(("rss", "RDF", "feed"))
_BLANK: Final = b"\xef\xbb\xbf \t\r\n"
_XML_NS: Final = "http://www.w3.org/XML/1998/namespace"
_ENTITY_NAME: Final = re.compile(rb"#?[\w.-]*")
_INVALID_TOKEN: Final = pyexpat.errors.codes[pyexpat.errors.XML_ERROR_INVALID_TOKEN]
_NO_LINE: Final = 1 << 62  # the sort key of a finding without a line: after every line


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken rule in one file: where it first happens, an example, how often."""

    code: str
    file: str
    line: int | None
    message: str
    count: int = 1
    #: The earliest occurrences kept, (line, message), the first being ``line``/``message``.
    examples: tuple[tuple[int | None, str], ...] = ()

    @property
    def severity(self) -> str:
        """``error``, ``warning`` or ``notice`` (see :data:`RULES`)."""
        return RULES[self.code].severity

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``sitemap-reader check --json``."""
        return {
            "code": self.code,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "count": self.count,
            "message": self.message,
            "examples": [{"line": line, "message": text} for line, text in self.examples],
        }


class Findings:
    """Findings of one file, aggregated per code: a count and the ``examples`` earliest
    occurrences (line and message), whatever order the passes report in, so a body gives
    the same findings however it was chunked."""

    def __init__(self, file: str, examples: int = 1) -> None:
        self.file = file
        self.examples = examples
        self._by_code: dict[str, tuple[list[int], list[tuple[int, str]]]] = {}

    def add(self, code: str, line: int | None, message: str) -> None:
        """Count one occurrence of ``code``."""
        entry = self._by_code.get(code)
        if entry is None:
            entry = self._by_code[code] = ([0], [])
        entry[0][0] += 1
        kept = entry[1]
        key = (_NO_LINE if line is None else line, message)  # a line says more: first
        if len(kept) < self.examples or key < kept[-1]:
            bisect.insort(kept, key)
            del kept[self.examples :]

    def __bool__(self) -> bool:
        return bool(self._by_code)

    def items(self) -> list[Finding]:
        """The findings, by first line (file-level ones first), then code."""
        found = []
        for code, ((count,), kept) in self._by_code.items():
            examples = tuple((None if n == _NO_LINE else n, text) for n, text in kept)
            line, message = examples[0]
            found.append(Finding(code, self.file, line, message, count, examples))
        return sorted(found, key=lambda f: (f.line or 0, f.code))


def w3c_datetime(text: str) -> datetime | None:
    """A W3C Datetime as an aware UTC datetime; None when the text is not one.

    >>> w3c_datetime("2024-03-05T14:30:00+02:00").isoformat()
    '2024-03-05T12:30:00+00:00'
    >>> w3c_datetime("2024-03-05 14:30") is None
    True
    """
    match = _W3C.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        moment = datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
            int(second or 0), tzinfo=UTC,
        )  # fmt: skip
    except ValueError:
        return None
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        moment -= sign * timedelta(hours=hours, minutes=minutes)
    return moment


class _Stop(Exception):
    """Internal: the body cannot be checked further."""


class _LimitSink(Sink):
    """Where the bounded expat reports a bound it hit: a ``check-limit`` finding."""

    def __init__(self, owner: BodyChecker) -> None:
        self.owner = owner
        self.parser: Any = None  # the expat parser, for the line of the bound

    def problem(self, code: str, message: str, fatal: bool = False) -> None:
        line = self.parser.CurrentLineNumber
        self.owner.findings.add("check-limit", line, f"{message}; the rest was not checked")


class BodyChecker:
    """Checks one sitemap body against the protocol; feed raw chunks, then :meth:`close`.

    >>> c = BodyChecker("https://example.com/sitemap.xml")
    >>> c.feed(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...        b'<url><loc>https://example.com/a</loc><priority>2</priority></url></urlset>')
    >>> [(f.code, f.line) for f in c.close()]
    [('bad-priority', 1)]

    ``on_url(url, line)`` is called for every page or child location (for the site-wide
    duplicate check); ``now`` is the reference for lastmods in the future; ``limits``
    are the reader's (the decompressed cap, gzip members, the markup bounds);
    ``vouched_host`` is the host whose robots.txt lists this sitemap (or the index that
    lists it): its URLs are in location wherever they are on that host.
    """

    def __init__(
        self,
        file: str,
        *,
        base: str | None = None,
        now: datetime | None = None,
        on_url: Any = None,
        limits: Limits | None = None,
        vouched_host: str | None = None,
        examples: int = 1,
    ) -> None:
        self.file = file
        self.vouched_host = vouched_host
        self.base = base if base is not None else (file if "://" in file else None)
        self.now = now or datetime.now(UTC)
        self.limits = limits = limits or Limits()
        self.findings = Findings(file, examples)
        self.format: str | None = None
        self.entries = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self._on_url = on_url
        self._cap = limits.max_decompressed_bytes
        self._layers = GzipLayers(self._cap, limits.max_gzip_members, limits.max_gzip_layers)
        self._utf8: Any = codecs.getincrementaldecoder("utf-8")("strict")
        self._lossy: Any = None  # after a bad byte: the decoder that replaces them
        self._lines = 1  # newlines seen so far + 1 (for the line of a UTF-8 error)
        self._head = b""  # leading bytes until they say XML, text or binary
        self._pass: _XmlPass | _TextLines | None = None
        self._stopped = False

    def feed(self, data: bytes) -> None:
        """Check the next chunk of the raw body."""
        if self._stopped or not data:
            return
        self.bytes_in += len(data)
        try:
            for piece in self._layers.feed(data):
                self._body(piece)
        except GunzipError as exc:
            self._stop_with("gzip" if not exc.code.startswith("limit") else "check-limit", str(exc))
        except _Stop:
            self._stopped = True

    def close(self, *, complete: bool = True) -> list[Finding]:
        """End of the body: the last checks; every finding of this file.

        ``complete=False``: the reader stopped reading early (a bound, a deadline, a lost
        connection) and said so; the end-of-document rules are then not applied."""
        if not self._stopped and complete:
            try:
                for head in self._layers.held():
                    self._body(head)
                self._layers.close()
                self._route(b"", final=True)
                if self._lossy is None:
                    try:
                        self._utf8.decode(b"", True)
                    except UnicodeDecodeError:
                        self.findings.add(
                            "not-utf8", self._lines, "the body ends inside a character"
                        )
            except GunzipError as exc:
                self.findings.add("gzip", None, str(exc))
            except _Stop:
                pass
        self._stopped = True
        if self.format is None and not self.findings and complete:
            self.findings.add("not-a-sitemap", None, "the body is empty")
        elif self.format in ("urlset", "sitemapindex", "text") and not self.entries and complete:
            self._no_entries()
        return self.findings.items()

    def _no_entries(self) -> None:
        # With other findings, what is wrong with its entries says more.
        if not self.findings:
            self.findings.add("no-entries", None, f"the {self.format} lists nothing")

    # -- stages --------------------------------------------------------------------------

    def _stop_with(self, code: str, message: str, line: int | None = None) -> None:
        self.findings.add(code, line, message)
        self._stopped = True

    def _body(self, data: bytes) -> None:
        self.bytes_out += len(data)
        if self.bytes_out > PROTOCOL_MAX_BYTES and self.bytes_out - len(data) <= PROTOCOL_MAX_BYTES:
            self.findings.add("too-large", None, f"over {PROTOCOL_MAX_BYTES:,} bytes uncompressed")
        if self.bytes_out > self._cap:
            self._stop_with("check-limit", f"stopped after {self._cap:,} bytes uncompressed")
            raise _Stop
        lines = self._lines
        self._lines += data.count(b"\n")
        if self._lossy is None:
            # Expat gets whole characters only: a character split across chunks is held
            # back until its end arrives, or replaced with the rest if it never does.
            held = self._utf8.getstate()[0]
            whole = held + data if held else data
            try:
                self._utf8.decode(data)
            except UnicodeDecodeError as exc:
                line = lines + data.count(b"\n", 0, max(exc.start - len(held), 0))
                self.findings.add("not-utf8", line, "bytes that are not UTF-8")
                self._lossy = codecs.getincrementaldecoder("utf-8")("replace")
                data = whole
            else:
                rest = len(self._utf8.getstate()[0])
                data = whole[: len(whole) - rest] if rest else whole
        if self._lossy is not None:  # expat is told UTF-8: give it UTF-8, bad bytes replaced
            data = self._lossy.decode(data).encode("utf-8")
        self._route(data, final=False)

    def _route(self, data: bytes, *, final: bool) -> None:
        """The decompressed body to its pass; the first non-blank bytes choose it."""
        if self._pass is None:
            self._head += data
            start = self._head.lstrip(_BLANK)
            if not start and (final or len(self._head) <= self.limits.max_xml_token):
                return  # blanks so far (an empty body when final)
            if not start or start[:1] == b"<" or start[:2] in (b"\xff\xfe", b"\xfe\xff"):
                self._pass = _XmlPass(self)
            elif b"\x00" in start[:512]:
                self.format = "unknown"
                self._stop_with("not-a-sitemap", "binary content", 1)
                raise _Stop
            else:
                self._pass = _TextLines(self)
                self.format = "text"
            data, self._head = self._head, b""
        self._pass.feed(data, final)

    # -- entries (called by the passes) ----------------------------------------------------

    def page(self, loc: str | None, raw: bytes | None, line: int, child: bool) -> None:
        """Check one location (a page of a urlset or text file, or a child of an index)."""
        if loc is None:
            self.findings.add("missing-loc", line, "an entry without <loc>")
            return
        self.entries += 1
        if self.entries == PROTOCOL_MAX_URLS + 1:
            self.findings.add("too-many-urls", line, f"entry {self.entries:,} of one file")
        loc = loc.strip()
        if raw is not None and any(c in raw for c in (b"'", b'"', b">")):
            text = raw[:80].decode("utf-8", "replace")
            self.findings.add(
                "not-escaped", line, f"{text} has ' \" or > not written &apos; &quot; &gt;"
            )
        if not re.match(r"https?://[^/?#\s]", loc, re.IGNORECASE):
            self.findings.add("url-not-absolute", line, f"{loc[:200]!r}")
            return
        if len(loc) > PROTOCOL_MAX_URL_LENGTH:
            self.findings.add("url-too-long", line, f"{len(loc):,} characters: {loc[:80]}...")
        if _UNENCODED.search(loc):
            self.findings.add("url-not-encoded", line, f"{loc[:200]!r}")
        if self.base is not None:
            self._location(loc, line, self.base)
        if self._on_url is not None:
            self._on_url(loc, line)

    def _location(self, loc: str, line: int, base: str) -> None:
        """The location rule as engines apply it (sitemaps.org, "Sitemaps & Cross
        Submits"): a sitemap that a robots.txt lists (or an index it lists) may list any
        URL of that robots.txt's host; otherwise its own host, under its own directory."""
        host, own = host_of(loc), host_of(base)
        if host is not None and host == self.vouched_host:
            return
        if host != own:
            hosts = " or ".join(dict.fromkeys(h for h in (own, self.vouched_host) if h))
            self.findings.add("other-host", line, f"{loc[:200]} is not on {hosts}")
        elif self.format != "sitemapindex" and not in_location(loc, base):
            directory = base.split("?", 1)[0].rsplit("/", 1)[0] + "/"
            self.findings.add("out-of-location", line, f"{loc[:200]} is not under {directory}")

    def field(self, name: str, value: str, line: int) -> None:
        """Check one lastmod, changefreq or priority value."""
        value = value.strip()
        if name == "lastmod":
            moment = w3c_datetime(value)
            if moment is None:
                self.findings.add("bad-date", line, f"{value[:60]!r} is not a W3C Datetime")
            elif moment > self.now + timedelta(seconds=CHECK_FUTURE_SLACK):
                self.findings.add("future-lastmod", line, f"{value} is in the future")
        elif name == "changefreq":
            if value not in CHANGEFREQS:
                self.findings.add("bad-changefreq", line, f"{value[:40]!r}")
        elif name == "priority" and (
            _PRIORITY.fullmatch(value) is None or not 0.0 <= float(value) <= 1.0
        ):
            self.findings.add("bad-priority", line, f"{value[:40]!r}")


class _TextLines:
    """A text sitemap: one URL a line (blank lines allowed)."""

    def __init__(self, owner: BodyChecker) -> None:
        self.owner = owner
        self.rest = b""
        self.line = 0
        self.max_line = owner.limits.max_text_length

    def feed(self, data: bytes, final: bool) -> None:
        data = self.rest + data
        lines = data.split(b"\n")
        self.rest = b"" if final else lines.pop()
        if len(self.rest) > self.max_line:
            what = f"a line of over {self.max_line:,} bytes"
            self.owner.findings.add("url-too-long", self.line + 1, what)
            self.rest = b""
        for raw in lines:
            self.line += 1
            text = raw.decode("utf-8", "replace").strip().lstrip("\ufeff")
            if text:
                self.owner.page(text, None, self.line, child=False)


class _XmlPass:
    """The expat side of :class:`BodyChecker`: elements, fields, lines, raw locations."""

    def __init__(self, owner: BodyChecker) -> None:
        self.owner = owner
        limits = owner.limits
        sink = _LimitSink(owner)
        self.bounded = BoundedExpat(
            sink,
            max_token=limits.max_xml_token,
            max_names=limits.max_xml_names,
            max_name_chars=limits.max_xml_name_chars,
            max_namespaces=limits.max_xml_namespaces,
        )
        self.parser = sink.parser = parser = self.bounded.parser
        parser.XmlDeclHandler = self._declaration
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        self.max_depth = limits.max_xml_depth
        self.max_text = limits.max_text_length
        self.depth = 0
        # Prefixes in scope (expat runs without namespace processing, as in the parser),
        # and what each declaration replaced: (depth of its element, prefix, old URI).
        self.prefixes: dict[str, str] = {"xml": _XML_NS}
        self.scopes: list[tuple[int, str, str | None]] = []
        self.root: str | None = None
        self.ns = SITEMAP_NS
        self.entry_line = 0
        self.loc: str | None = None
        self.loc_raw: bytes | None = None
        self.field: str | None = None
        self.field_line = 0
        self.parts: list[str] = []
        self.size = 0
        # The raw bytes of an open <loc>: a window of the input from its start tag on.
        self.window = bytearray()
        self.window_start = 0
        self.loc_start: int | None = None

    def feed(self, data: bytes, final: bool) -> None:
        owner = self.owner
        self.window += data
        try:
            self.bounded.parse(data)
            if final:
                self.bounded.finish()
        except pyexpat.ExpatError as exc:
            text = pyexpat.ErrorString(exc.code) if exc.code else str(exc)
            invalid = exc.code == _INVALID_TOKEN
            if invalid and self._unescaped_ampersand(
                self.parser.ErrorByteIndex - self.window_start
            ):
                text = "an unescaped & (write it as &amp;)"
            owner.findings.add("xml-syntax", exc.lineno, f"{text} (column {exc.offset})")
            raise _Stop from None
        except DefusedXmlException:
            line = self.parser.CurrentLineNumber
            owner.findings.add("xml-forbidden", line, "a DTD entity or external reference")
            raise _Stop from None
        except StopParsing:
            raise _Stop from None
        self._trim()

    def _unescaped_ampersand(self, at: int) -> bool:
        """Does expat's error at window offset ``at`` follow a ``&`` that starts no entity
        (``?a=1&b=2``: expat stops at the ``=`` after the would-be entity name ``b``)?"""
        if not 0 <= at <= len(self.window):
            return False
        start = self.window.rfind(b"&", max(0, at - 64), at + 1)
        return start >= 0 and _ENTITY_NAME.fullmatch(self.window[start + 1 : at]) is not None

    def _trim(self) -> None:
        """Drop the window's bytes that no open <loc> needs."""
        consumed = self.window_start + len(self.window)
        keep_from = self.loc_start
        if keep_from is None:  # keep the token expat has not consumed: maybe a <loc> tag
            pending = self.parser.CurrentByteIndex
            keep_from = pending if 0 <= pending < consumed else consumed
        if keep_from - self.window_start > 0:
            del self.window[: keep_from - self.window_start]
            self.window_start = keep_from
        if len(self.window) > CHECK_MAX_RAW_LOC:  # a giant <loc>: forget its raw bytes
            self.loc_start = None
            self.window.clear()
            self.window_start = consumed

    def _declaration(self, version: str, encoding: str | None, standalone: int) -> None:
        if encoding and encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            line = self.parser.CurrentLineNumber
            self.owner.findings.add("not-utf8", line, f"declared encoding {encoding!r}")

    def _declare(self, attrs: dict[str, str], depth: int) -> None:
        """The ``xmlns`` attributes of an element: in scope until it ends."""
        for key, value in attrs.items():
            if key == "xmlns" or key.startswith("xmlns:"):
                prefix = key[6:]
                self.bounded.new_namespace(prefix, value)
                self.scopes.append((depth, prefix, self.prefixes.get(prefix)))
                self.prefixes[prefix] = value

    def _resolve(self, name: str, line: int) -> tuple[str, str]:
        """(namespace, local name) of a qualified name; an undeclared prefix is a finding."""
        prefix, _, local = name.rpartition(":")
        namespace = self.prefixes.get(prefix)
        if namespace is None:
            if prefix:
                self.owner.findings.add("xml-syntax", line, f"unbound prefix {prefix!r}")
            namespace = ""
        return namespace, local

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        self.depth = depth = self.depth + 1
        if depth > self.max_depth:
            self.bounded.limit("limit-nesting", f"elements nested more than {self.max_depth} deep")
        if attrs:
            self._declare(attrs, depth)
        line = self.parser.CurrentLineNumber
        namespace, local = self._resolve(name, line)
        if depth == 1:
            self._root(namespace, local, line)
            return
        if self.root is None:
            return
        if depth == 2:
            if local in ("url", "sitemap") and namespace == self.ns:
                if local != _ENTRY_OF[self.root]:
                    what = f"<{local}> inside <{self.root}>"
                    self.owner.findings.add("wrong-entry", line, what + " is ignored")
                    self.entry_line = -1
                    return
                self.entry_line = line
                self.loc = None
                self.loc_raw = None
            return
        if depth == 3 and self.entry_line > 0 and namespace == self.ns and local in _FIELDS:
            self.field = local
            self.field_line = line
            self.parts = []
            self.size = 0
            if local == "loc":
                self.loc_start = self.parser.CurrentByteIndex

    def _root(self, namespace: str, local: str, line: int) -> None:
        owner = self.owner
        if local in _ENTRY_OF:
            self.root = local
            self.ns = namespace  # a wrong namespace is one finding; entries are read in it
            owner.format = local
            if namespace != SITEMAP_NS:
                owner.findings.add("namespace", line, f"namespace {namespace or '(none)'!r}")
        elif local in _FEEDS:
            # A feed: the protocol accepts it, and its rules are RSS's or Atom's; only its
            # well-formedness is checked (self.root stays None).
            owner.format = "atom" if local == "feed" else "rss"
        else:
            owner.format = "unknown"
            owner.findings.add("not-a-sitemap", line, f"root element <{local}>")
            raise StopParsing("not-a-sitemap")

    def _text(self, data: str) -> None:
        if self.field is not None and self.size < self.max_text:
            self.parts.append(data)
            self.size += len(data)

    def _end(self, name: str) -> None:
        depth = self.depth
        self.depth -= 1
        scopes = self.scopes
        while scopes and scopes[-1][0] == depth:
            _, prefix, old = scopes.pop()
            if old is None:
                del self.prefixes[prefix]
            else:
                self.prefixes[prefix] = old
        if self.root is None or self.entry_line <= 0:
            if depth == 2:
                self.entry_line = 0
            return
        if depth == 3 and self.field is not None:
            value = "".join(self.parts)
            if self.field == "loc":
                if self.loc is None:
                    self.loc = value
                    self.loc_raw = self._raw_loc()
                self.loc_start = None
            else:
                self.owner.field(self.field, value, self.field_line)
            self.field = None
        elif depth == 2:
            child = self.root == "sitemapindex"
            self.owner.page(self.loc, self.loc_raw, self.entry_line, child)
            self.entry_line = 0

    def _raw_loc(self) -> bytes | None:
        """The raw bytes between ``<loc ...>`` and ``</loc>``, when still in the window."""
        if self.loc_start is None or self.loc_start < self.window_start:
            return None
        end = self.parser.CurrentByteIndex - self.window_start
        raw = bytes(self.window[self.loc_start - self.window_start : end])
        close = raw.find(b">")
        return raw[close + 1 :] if close >= 0 else None


def check_robots(body: bytes, file: str, examples: int = 1) -> list[Finding]:
    """Findings of a robots.txt: every ``Sitemap:`` line must hold an absolute URL.

    >>> [f.line for f in check_robots(b"User-agent: *\\nSitemap: /s.xml\\n", "r")]
    [2]
    """
    findings = Findings(file, examples)
    text = body.decode("utf-8", "replace")
    for number, line in enumerate(text.splitlines(), start=1):
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == "sitemap":
            url = value.split("#", 1)[0].strip()
            if not re.match(r"https?://[^/?#\s]", url, re.IGNORECASE):
                findings.add("robots-relative-sitemap", number, f"Sitemap: {url[:200]}")
    return findings.items()


@dataclass(slots=True)
class SiteCheck:
    """The site-wide rules over the files of one run: duplicates and index nesting.

    Make one :meth:`checker` per sitemap, in discovery order; :meth:`findings` adds the
    duplicate and nesting findings to every file's own.
    """

    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: Occurrences kept per rule and file (``check --examples N``).
    examples: int = 1
    _seen: dict[bytes, str] = field(default_factory=dict)
    _duplicates: dict[str, Findings] = field(default_factory=dict)
    _files: list[BodyChecker] = field(default_factory=list)
    _full: bool = False

    def checker(
        self,
        file: str,
        *,
        base: str | None = None,
        limits: Limits | None = None,
        vouched_host: str | None = None,
    ) -> BodyChecker:
        """A :class:`BodyChecker` for one file whose URLs join the duplicate check."""
        dupes = self._duplicates.setdefault(file, Findings(file, self.examples))

        def on_url(url: str, line: int) -> None:
            key = hashlib.blake2b(url.encode("utf-8", "replace"), digest_size=8).digest()
            first = self._seen.get(key)
            if first is not None:
                where = "earlier in this file" if first == file else f"first in {first}"
                dupes.add("duplicate-url", line, f"{url[:200]} ({where})")
            elif len(self._seen) < CHECK_MAX_TRACKED_URLS:
                self._seen[key] = file
            elif not self._full:
                self._full = True
                dupes.add(
                    "check-limit",
                    line,
                    f"over {CHECK_MAX_TRACKED_URLS:,} URLs: no more duplicate checks",
                )

        checker = BodyChecker(
            file,
            base=base,
            now=self.now,
            on_url=on_url,
            limits=limits,
            vouched_host=vouched_host,
            examples=self.examples,
        )
        self._files.append(checker)
        return checker

    def nesting(self, parents: Iterable[tuple[str, str]]) -> list[Finding]:
        """``nested-index`` for each (parent index, child) pair whose child is an index."""
        indexes = {c.file for c in self._files if c.format == "sitemapindex"}
        return [
            Finding("nested-index", child, None, f"listed by the index {parent}")
            for parent, child in parents
            if parent in indexes and child in indexes
        ]

    def duplicates(self, file: str) -> list[Finding]:
        """The duplicate findings of one file."""
        dupes = self._duplicates.get(file)
        return dupes.items() if dupes is not None else []
