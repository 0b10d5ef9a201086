"""SitemapParser: one incremental parser for every sitemap body, gzipped or not.

Theory of operation
-------------------
Bytes go through three stages, each decided from the bytes themselves:

1. **gzip layers.** If a stage's first two bytes are the gzip magic, a capped streaming
   :class:`~sitemap_reader.parse.gunzip.Gunzip` is put in front of the next stage. This
   repeats up to ``Limits.max_gzip_layers`` (double gzip is real; a third layer is not).
2. **body sniffing.** The decompressed body's start (BOM and blank space stripped) says
   XML, HTML, plain text or binary (:mod:`sitemap_reader.parse.sniff`).
3. **reading.** XML goes to :class:`~sitemap_reader.parse.xml.XmlReader` (pyexpat with
   defusedxml's protections), text to :class:`~sitemap_reader.parse.text.TextReader`.
   Both report raw strings to :class:`_Emitter`, the one place where entries become
   normalized, scored :class:`UrlRecord` / :class:`SitemapRef` values.

Nothing raises on content. Everything wrong becomes a :class:`Problem` (aggregated per
code); a *fatal* problem (broken XML, a limit, not a sitemap) ends the body: ``done``
turns true so the caller can stop downloading, ``complete`` turns false, and every record
produced before the break has already been handed out. Even an exception nobody foresaw
(a bug) ends only this body, as a fatal ``internal`` problem naming it.

A break from outside the document (a gzip error, the byte cap) first lets the reader
parse the bytes it holds back, so whichever break comes first *in the stream* is the
one reported, however the body was chunked.
"""

from __future__ import annotations

import pyexpat
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from defusedxml import DefusedXmlException

from sitemap_reader.errors import UsageError
from sitemap_reader.options.limits import PROTOCOL_MAX_URLS, Limits
from sitemap_reader.parse import native, sniff
from sitemap_reader.parse.entry import ALTERNATES, PageEntry, Sink, SitemapEntry, StopParsing
from sitemap_reader.parse.extensions import (
    build_image,
    build_news,
    build_pagemaps,
    build_video,
    human_text,
    image_at,
)
from sitemap_reader.parse.gunzip import GunzipError, GzipLayers
from sitemap_reader.parse.kinds import ROOTS, SITEMAP_NS
from sitemap_reader.parse.normalize import (
    CHANGEFREQS,
    fast_url_match,
    normalize_url,
    parse_changefreq,
    parse_lastmod,
    parse_priority,
)
from sitemap_reader.parse.scope import in_location
from sitemap_reader.parse.text import TextReader, schemeless_host
from sitemap_reader.parse.xml import XmlReader, expat_message
from sitemap_reader.records import (
    Alternate,
    Image,
    Problem,
    RareFields,
    RecordBuilder,
    SitemapRef,
    UrlRecord,
    Video,
    make_alternate,
    make_image,
)
from sitemap_reader.records.scoring import plain_builder

Item = UrlRecord | SitemapRef
#: Every value of SitemapParser.format.
FORMATS: Final = ("urlset", "sitemapindex", "text", "rss", "atom", "unknown")
_CHUNK: Final = 65536
_ABSOLUTE: Final = re.compile(r"\s*https?://", re.IGNORECASE)
_MISS: Final[Any] = object()
_CACHE_SIZE: Final = 4096  # distinct field values memoized per sitemap
# The values almost every sitemap writes, already parsed (each exactly what the parse
# function gives for it): a dict lookup instead of a call on the hot path.
_FREQS: Final = {word: word for word in CHANGEFREQS}
_PRIORITIES: Final = {
    text: parse_priority(text) for text in [f"{tenth / 10:.1f}" for tenth in range(11)] + ["0", "1"]
}
# Limits is frozen, so one default instance serves every parser (building one costs about
# as much as the rest of a parser's set-up; see benchmarks/small_files.py).
_DEFAULT_LIMITS: Final = Limits()


class _Fatal(Exception):
    """Internal: a problem that ends this body."""


class _Emitter(Sink):
    """Turns raw entry strings into records; aggregates problems."""

    def __init__(
        self,
        url: str | None,
        to_the_letter: bool,
        limits: Limits,
        now: datetime,
        build: RecordBuilder | None = None,
    ) -> None:
        self.base = url
        # Scheme-less locations take the sitemap's own scheme (https without one).
        self.scheme = "http" if url is not None and url[:5].lower() == "http:" else "https"
        self.lastmod: datetime | None = None  # a feed's own date
        self.strict = to_the_letter
        self.max_url_length = limits.max_url_length
        self.now = now
        self.build = build or plain_builder(now)
        self.out: list[Item] = []
        self.problems: dict[str, list[Any]] = {}
        self.format = "unknown"
        self.urls = 0  # entries emitted: URLs and child sitemaps
        cap = limits.max_urls_per_sitemap
        if to_the_letter:
            cap = PROTOCOL_MAX_URLS if cap is None else min(cap, PROTOCOL_MAX_URLS)
        self.max_entries = -1 if cap is None else cap
        self.pending: list[PageEntry | SitemapEntry] = []
        # With a count limit, entries are drained one by one so that the body stops at
        # exactly the limit however it was chunked; otherwise in batches (faster).
        self.batch = 1 if cap is not None else 256
        # Real sitemaps repeat lastmods a lot (often one for all), so drain() memoizes
        # their parses per sitemap. changefreq and priority parse in about a dict
        # lookup's time: their memos (and two more copies of this block) measured as
        # nothing, so they are gone.
        self._dates: dict[str, datetime | None] = {}

    # -- problems ------------------------------------------------------------------------

    def problem(self, code: str, message: str, fatal: bool = False) -> None:
        entry = self.problems.get(code)
        if entry is None:
            self.problems[code] = [message, 1, fatal]
        else:
            entry[1] += 1
            entry[2] = entry[2] or fatal

    def fatal(self, code: str, message: str) -> _Fatal:
        self.problem(code, message, fatal=True)
        return _Fatal(code)

    # -- Sink ----------------------------------------------------------------------------

    def root(self, local: str, namespace: str) -> str | None:
        fmt = ROOTS.get(local)
        if fmt is None:
            what = "an HTML page" if local == "html" else f"root element <{local}>"
            self.problem("not-a-sitemap", f"{what} is not a sitemap or feed", fatal=True)
            return None
        if fmt in ("urlset", "sitemapindex") and namespace != SITEMAP_NS:
            message = f"namespace {namespace or '(none)'!r} is not {SITEMAP_NS!r}"
            if self.strict:
                self.problem("namespace", message, fatal=True)
                return None
            self.problem("namespace", message)
        self.format = fmt
        return fmt

    def drain(self) -> None:
        """Turn the pending entries into records (the hot loop of the whole library).

        Everything the loop needs is bound to a local first; helpers run only on the
        rare branches (a cache miss, a bad value, an extension, a child sitemap).
        """
        pending = self.pending
        if not pending:
            return
        out = self.out.append
        fast, max_length, base = fast_url_match, self.max_url_length, self.base
        strict, cap, build = self.strict, self.max_entries, self.build
        dates = self._dates
        problem = self.problem
        isoformat, freqs, prios = datetime.fromisoformat, _FREQS.get, _PRIORITIES.get
        count = self.urls
        try:
            for entry in pending:
                if isinstance(entry, tuple):
                    self.urls = count
                    self._sitemap(*entry)
                    count = self.urls
                    continue
                (loc, lastmod, changefreq, priority, _, _, _, _, alts, imgs, vids, news, extra) = (
                    entry
                )
                if fast(loc) is not None and "/." not in loc and len(loc) <= max_length:
                    url: str = loc  # normalize_url's own fast path, inlined
                else:
                    fixed = self._location(loc, "location")
                    if fixed is None:
                        continue
                    url = fixed
                if strict and base is not None and not in_location(url, base):
                    problem("out-of-location", f"{url} is outside the sitemap's location")
                    continue
                if count == cap:
                    raise self.fatal("limit-urls", f"more than {cap} entries; rest ignored")
                count += 1
                modified = freq = prio = None
                if lastmod:
                    modified = dates.get(lastmod, _MISS)
                    if modified is _MISS:
                        # parse_lastmod's own first step, inlined: a full date-time
                        # fromisoformat reads as UTC is returned as it is (anything else,
                        # an error included, takes the whole function).
                        modified = None
                        if len(lastmod) > 10 and lastmod[4] == "-" and lastmod[7] == "-":
                            try:
                                modified = isoformat(lastmod)
                            except ValueError:  # (contextlib.suppress costs more)
                                modified = None
                        if modified is None or modified.tzinfo is not UTC:
                            modified = parse_lastmod(lastmod)
                        if len(dates) < _CACHE_SIZE:  # the first distinct values win
                            dates[lastmod] = modified
                    if modified is None:
                        problem("bad-date", f"date {lastmod[:60]!r} not understood")
                if changefreq:
                    freq = freqs(changefreq)  # the exact protocol words: no call
                    if freq is None:
                        freq = parse_changefreq(changefreq)
                        if freq is None:
                            problem("bad-changefreq", f"changefreq {changefreq[:40]!r} ignored")
                if priority:
                    prio = prios(priority)  # "0.0" .. "1.0": no call
                    if prio is None:
                        prio = parse_priority(priority)
                        if prio is None:
                            problem("bad-priority", f"priority {priority[:40]!r} ignored")
                if (
                    alts is None
                    and imgs is None
                    and vids is None
                    and news is None
                    and extra is None
                ):
                    out(build(url, modified, freq, prio, base, (), (), (), None, None))
                else:
                    out(self._record(url, modified, freq, prio, entry))
        finally:
            self.urls = count
            pending.clear()

    def _record(
        self,
        url: str,
        modified: datetime | None,
        freq: str | None,
        prio: float | None,
        entry: list[Any],
    ) -> UrlRecord:
        """A record with extensions (the slower path of :meth:`drain`)."""
        alternates, images, videos, news, extra = entry[ALTERNATES:]
        rare = None
        if extra is not None:
            pagemaps = extra.get("pagemaps")
            rare = RareFields(
                human_text(extra.get("title")),
                bool(extra.get("mobile")),
                build_pagemaps(pagemaps) if pagemaps else (),
            )
        return self.build(
            url,
            modified,
            freq,
            prio,
            self.base,
            self._alternates(alternates) if alternates else (),
            self._images(images) if images else (),
            self._videos(videos) if videos else (),
            build_news(news, self) if news is not None else None,
            rare,
        )

    def text_started(self) -> None:
        self.format = "text"

    def feed_date(self, text: str) -> None:
        value = self._date(text)
        if value is not None and (self.lastmod is None or value > self.lastmod):
            self.lastmod = value  # the newest of the feed's own dates

    def _sitemap(self, loc: str, lastmod: str | None) -> None:
        url = self._location(loc, "child sitemap location")
        if url is None:
            return
        if self.urls == self.max_entries:
            raise self.fatal("limit-urls", f"more than {self.max_entries} entries; rest ignored")
        self.urls += 1
        self.out.append(SitemapRef(url, self._date(lastmod) if lastmod else None, self.base))

    # -- helpers -------------------------------------------------------------------------

    def _location(self, loc: str, what: str) -> str | None:
        """A page or child-sitemap location off the fast path: normalized, resolved when
        relative, read with a scheme when it starts with a host name; problems counted."""
        if not _ABSOLUTE.match(loc):
            if not self.strict and schemeless_host(loc):
                url = self._with_scheme(loc)
                if url is not None:
                    return url
            else:
                url = normalize_url(
                    loc, self.base, absolute_only=self.strict, max_length=self.max_url_length
                )
                if url is not None:
                    self.problem("relative-url", f"relative {what} {loc[:200]!r} resolved")
                    return url
        else:
            url = normalize_url(
                loc, None, absolute_only=self.strict, max_length=self.max_url_length
            )
            if url is not None:
                return url
        self.problem("bad-url", f"{what} {loc[:200]!r} dropped")
        return None

    def _with_scheme(self, loc: str) -> str | None:
        url = normalize_url(f"{self.scheme}://{loc.strip()}", max_length=self.max_url_length)
        if url is not None:
            self.problem("schemeless-url", f"location {loc[:200]!r} without a scheme read as {url}")
        return url

    # -- ExtensionContext (for the builders in parse.extensions) ----------------------

    def ext_url(self, raw: str, what: str) -> str | None:
        """Extension URLs (images, videos, alternates) must be absolute: no resolution,
        so a placeholder such as ``None`` never becomes ``https://site/None``. One that
        starts with a host name but no scheme is read like such a location."""
        url = normalize_url(raw, None, max_length=self.max_url_length)
        if url is None and not self.strict and schemeless_host(raw):
            url = self._with_scheme(raw)
        if url is None:
            self.problem("bad-extension-url", f"{what} {raw[:200]!r} dropped")
        return url

    def ext_date(self, text: str) -> datetime | None:
        return self._date(text)

    def _date(self, text: str) -> datetime | None:
        """A date outside the hot path (index entries, extensions), problem counted."""
        value = parse_lastmod(text)
        if value is None:
            self.problem("bad-date", f"date {text[:60]!r} not understood")
        return value

    def _alternates(self, pairs: list[tuple[str, str]]) -> tuple[Alternate, ...]:
        # A URL already in normal form is kept as it is: ext_url's own first step inlined
        # (a fat sitemap has several alternates and images per entry).
        fast, max_length = fast_url_match, self.max_url_length
        found = []
        for lang, href in pairs:
            if fast(href) is not None and "/." not in href and len(href) <= max_length:
                found.append(make_alternate(lang, href))
                continue
            url = self.ext_url(href, "xhtml:link href")
            if url is not None:
                found.append(make_alternate(lang, url))
        return tuple(found)

    def _images(self, items: list[dict[str, Any]]) -> tuple[Image, ...]:
        fast, max_length = fast_url_match, self.max_url_length
        found = []
        for fields in items:
            loc = fields.get("loc")  # build_image's first steps inlined
            if (
                isinstance(loc, str)
                and fast(loc) is not None
                and "/." not in loc
                and len(loc) <= max_length
            ):
                found.append(make_image(loc) if len(fields) == 1 else image_at(loc, fields))
                continue
            image = build_image(fields, self)
            if image is not None:
                found.append(image)
        return tuple(found)

    def _videos(self, items: list[dict[str, Any]]) -> tuple[Video, ...]:
        built = (build_video(fields, self) for fields in items)
        return tuple(video for video in built if video is not None)


class _NativeEmitter(_Emitter):
    """The emitter with :meth:`drain` in C (:func:`native.drainer`), which calls this
    class's helpers for every value off its fast paths."""

    def __init__(
        self,
        url: str | None,
        to_the_letter: bool,
        limits: Limits,
        now: datetime,
        build: RecordBuilder | None = None,
    ) -> None:
        super().__init__(url, to_the_letter, limits, now, build)
        self._drain = native.drainer(self, build, now, _FREQS, _PRIORITIES)

    def drain(self) -> None:
        self._drain()


class SitemapParser:
    """Incremental parser for one sitemap body: feed bytes, get records as they complete.

    >>> p = SitemapParser("https://example.com/sitemap.xml")
    >>> body = b'<urlset><url><loc>https://example.com/a</loc></url></urlset>'
    >>> [r.url for r in p.feed(body) + p.close()]
    ['https://example.com/a']
    >>> p.format, p.complete
    ('urlset', True)

    ``url`` is the sitemap's own (final) URL: relative locations resolve against it
    (lenient mode) and strict mode checks the location rule against it. Use None for a
    local file or standard input. ``content_type`` is accepted for diagnostics only:
    formats are sniffed from the bytes. ``pagemaps=True`` keeps PageMap DataObjects on
    the records (``UrlRecord.pagemaps``); they are skipped by default. ``build`` makes
    each record from its parsed fields (:data:`~sitemap_reader.records.RecordBuilder`);
    the default scores it with :func:`~sitemap_reader.records.scoring.default_score` at ``now``
    and leaves ``revisit`` None.
    """

    def __init__(
        self,
        url: str | None = None,
        content_type: str | None = None,
        *,
        strict: bool = False,
        limits: Limits | None = None,
        now: datetime | None = None,
        pagemaps: bool = False,
        build: RecordBuilder | None = None,
    ) -> None:
        self.url = url
        self.content_type = content_type
        self.strict = strict
        self.pagemaps = pagemaps
        self.limits = limits or _DEFAULT_LIMITS
        # The compiled path when it is active (parse/native.py), else the reference.
        self._native = native.active()
        emitter = _NativeEmitter if self._native else _Emitter
        self._emit = emitter(url, strict, self.limits, now or datetime.now(UTC), build)
        self._layers = GzipLayers(
            self.limits.max_decompressed_bytes,
            self.limits.max_gzip_members,
            self.limits.max_gzip_layers,
        )
        self._body_head: bytes | None = b""
        self._reader: XmlReader | TextReader | None = None
        self._closed = False
        self.done = False
        self.complete = True
        self.bytes_in = 0
        self.bytes_out = 0

    # -- public state ---------------------------------------------------------------------

    @property
    def format(self) -> str:
        """``urlset``, ``sitemapindex``, ``text``, ``rss``, ``atom`` or ``unknown``."""
        return self._emit.format

    @property
    def problems(self) -> list[Problem]:
        """What went wrong, one Problem per code: the fatal one first, then by code.

        A fixed order (not the order first seen) keeps the result independent of how the
        body was chunked."""
        found = [
            Problem(code, message, count, fatal)
            for code, (message, count, fatal) in self._emit.problems.items()
        ]
        return sorted(found, key=lambda p: (not p.fatal, p.code))

    @property
    def lastmod(self) -> datetime | None:
        """The sitemap's own date, when it gives one: a feed's newest channel or feed
        level date (RSS ``lastBuildDate``/``pubDate``, Atom ``updated``); else None."""
        return self._emit.lastmod

    @property
    def url_count(self) -> int:
        """Entries emitted so far (URLs and child sitemaps)."""
        return self._emit.urls

    # -- feeding -------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[Item]:
        """Parse the next chunk of the raw body; return the entries it completed."""
        if self._closed:
            raise UsageError("feed() after close()")
        self.bytes_in += len(data)
        if self.done or not data:
            return []
        self._guard(self._layered, data)
        self._guard(self._emit.drain)
        return self._take()

    def close(self) -> list[Item]:
        """End of the body: flush what is pending, record a break if it was cut short."""
        if self._closed:
            return []
        self._closed = True
        if not self.done:
            self._guard(self._finish)
        return self._take()

    def _take(self) -> list[Item]:
        out = self._emit.out
        self._emit.out = []
        return out

    def _guard(self, step: Any, *args: Any) -> None:
        """Run a step, turning every failure into a recorded problem."""
        try:
            step(*args)
            return
        except (_Fatal, StopParsing):
            pass  # the problem is recorded already
        except pyexpat.ExpatError as exc:
            self._emit.problem("xml-syntax", self._syntax_message(exc), fatal=True)
        except DefusedXmlException as exc:
            code = "xml-entities-forbidden"
            if type(exc).__name__ == "ExternalReferenceForbidden":
                code = "xml-external-forbidden"
            self._emit.problem(code, f"refused: {exc}", fatal=True)
        except GunzipError as exc:
            if not self._settle():
                return  # the bytes decoded before the gzip error broke first
            self._emit.problem(exc.code, str(exc), fatal=True)
        except Exception as exc:
            self._internal(exc)
        self._stop()

    def _syntax_message(self, error: pyexpat.ExpatError) -> str:
        """Expat's words for a syntax error, but for one after the root element ended: that
        is junk after the document, said at the root's end (what expat says of junk, and
        where, depends on how much of it one ``Parse()`` saw)."""
        reader = self._reader
        if isinstance(reader, XmlReader) and reader.root_end is not None:
            line, column = reader.root_end
            return f"junk after document element, whose end tag is at line {line}, column {column}"
        return expat_message(error)

    def _settle(self) -> bool:
        """Before a break from outside the document (gzip, byte cap): let the reader
        parse what it holds back; False when that broke the document (then stopped)."""
        if not isinstance(self._reader, XmlReader) or self.done:
            return not self.done
        self._guard(self._reader.flush)
        return not self.done

    def _internal(self, exc: Exception) -> None:
        # The invariant (records and problems, never a foreign exception) must hold even
        # where the code is wrong: a bug met in the field costs only this sitemap, with a
        # message naming it, never the whole run.
        detail = str(exc)[:200]
        message = f"unexpected {type(exc).__name__}" + (f": {detail}" if detail else "")
        self._emit.problem("internal", message, fatal=True)

    def _stop(self) -> None:
        try:
            if isinstance(self._reader, XmlReader):
                self._reader.flush_open_entry()
            self._emit.drain()
        except _Fatal:
            pass  # the entries may themselves hit a limit
        except Exception as exc:
            self._internal(exc)
        self.done = True
        self.complete = False

    # -- stages --------------------------------------------------------------------------

    def _layered(self, data: bytes) -> None:
        for piece in self._layers.feed(data):
            self._body(piece)

    def _body(self, data: bytes) -> None:
        """Decompressed bytes to the reader (sniffing the body's start first). The byte
        cap cuts at the same byte however the body arrived: the bytes before it are read,
        in stream order, then the body ends."""
        cap = self.limits.max_decompressed_bytes
        over = len(data) > cap - self.bytes_out
        if over:
            data = data[: max(0, cap - self.bytes_out)]
        self.bytes_out += len(data)
        if data or over:
            self._read(data, final=over)
        if over:
            if isinstance(self._reader, XmlReader):
                self._reader.flush()  # read what came before the cap first (stream order)
            raise self._emit.fatal("limit-bytes", f"body larger than {cap} bytes; rest ignored")

    def _read(self, data: bytes, *, final: bool = False) -> None:
        """Feed the reader; before there is one, gather the body's start until it says
        what the body is (``final``: no more bytes will come)."""
        if self._reader is None:
            head = sniff.strip_prolog((self._body_head or b"") + data)
            kind = sniff.classify(head, final=final and bool(head))  # a cut blank start: no kind
            if kind is None:
                self._body_head = head
                return
            self._start_reader(kind, head)
            data = head
        assert self._reader is not None
        self._reader.feed(data)

    def _start_reader(self, kind: str, head: bytes) -> None:
        self._body_head = None
        limits = self.limits
        if kind in (sniff.XML, sniff.XML16):
            codec, problem = sniff.xml_codec(head, kind)
            if problem is not None:
                self._emit.problem("unknown-encoding", problem)
            reader = native.NativeXmlReader if self._native else XmlReader
            self._reader = reader(
                self._emit,
                max_text=limits.max_text_length,
                max_extensions=limits.max_extensions_per_url,
                codec=codec,
                pagemaps=self.pagemaps,
                max_token=limits.max_xml_token,
                depth_cap=limits.max_xml_depth,
                max_names=limits.max_xml_names,
                max_name_chars=limits.max_xml_name_chars,
                max_namespaces=limits.max_xml_namespaces,
            )
        elif kind == sniff.TEXT:
            text = native.NativeTextReader if self._native else TextReader
            self._reader = text(self._emit, max_line=limits.max_url_length)
        elif kind == sniff.HTML:
            raise self._emit.fatal("not-a-sitemap", "an HTML page is not a sitemap")
        elif kind == sniff.BINARY:
            raise self._emit.fatal("not-a-sitemap", "binary content is not a sitemap")
        else:
            raise self._emit.fatal("empty", "the body is empty")

    def _finish(self) -> None:
        for head in self._layers.held():  # a lone byte that could have begun the magic
            self._body(head)
        if isinstance(self._reader, XmlReader):
            self._reader.flush()  # stream order: the document before a gzip truncation
        for trailing in self._layers.close():  # what was decompressed stands: not fatal
            self._emit.problem(
                "gzip-trailing-bytes", f"{trailing:,} byte(s) after the last gzip member ignored"
            )
        if self._reader is None:
            head = sniff.strip_prolog(self._body_head or b"")
            kind = sniff.classify(head, final=True)
            assert kind is not None
            self._start_reader(kind, head)
            assert self._reader is not None
            self._reader.feed(head)
        self._reader.close()
        self._emit.drain()
        if isinstance(self._reader, TextReader) and self._emit.urls == 0:
            self._emit.problem("not-a-sitemap", "no URL found in the text body", fatal=True)
            self.complete = False


@dataclass(slots=True)
class ParseResult:
    """Everything :func:`parse` found in one body."""

    format: str
    urls: list[UrlRecord] = field(default_factory=list)
    sitemaps: list[SitemapRef] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    complete: bool = True
    lastmod: datetime | None = None  # the sitemap's own date (a feed's), see SitemapParser


def parse(
    body: bytes | Iterable[bytes],
    url: str | None = None,
    content_type: str | None = None,
    *,
    strict: bool = False,
    limits: Limits | None = None,
    pagemaps: bool = False,
) -> ParseResult:
    """Parse a whole body you already have (bytes, or an iterable of chunks).

    The options are :class:`SitemapParser`'s (``pagemaps=True`` keeps PageMaps).

    >>> r = parse(b"https://example.com/a\\nhttps://example.com/b\\n")
    >>> r.format, [u.url for u in r.urls]
    ('text', ['https://example.com/a', 'https://example.com/b'])
    """
    parser = SitemapParser(url, content_type, strict=strict, limits=limits, pagemaps=pagemaps)
    items: list[Item] = []
    chunks: Iterable[bytes]
    if isinstance(body, bytes | bytearray | memoryview):
        view = bytes(body)
        chunks = (view[i : i + _CHUNK] for i in range(0, len(view), _CHUNK))
    else:
        chunks = body
    for chunk in chunks:
        items.extend(parser.feed(chunk))
        if parser.done:
            break
    items.extend(parser.close())
    result = ParseResult(parser.format, problems=parser.problems, complete=parser.complete)
    result.lastmod = parser.lastmod
    for item in items:
        (result.urls if isinstance(item, UrlRecord) else result.sitemaps).append(item)  # type: ignore[arg-type]
    return result
