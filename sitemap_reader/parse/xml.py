"""XML sitemaps and feeds on raw pyexpat: urlset, sitemapindex, RSS 2.0/1.0, Atom 1.0/0.3,
and Google's image, video, news, hreflang, mobile and PageMap extensions; and the builders
that turn gathered extension fields into records.

Theory of operation
-------------------
Expat runs *without* namespace processing: tags arrive as qualified names (``image:loc``)
and we resolve prefixes ourselves from every ``xmlns:*`` attribute seen. That is faster,
and it survives the common undeclared-prefix sitemap that namespace-aware expat rejects.
Elements are classified once per distinct tag name (a dict lookup afterwards) into a few
integer kinds. Core fields (``loc``, ``lastmod``, ``changefreq``, ``priority``, feed
``link``/dates) count only as *direct* children of an entry and outside the extension
namespaces, so an ``image:loc`` never leaks out as a page URL. An extension object
(``image:image``, ``video:video``, ``news:news``, a PageMap) is gathered as raw fields and
stored on the entry only at its end tag: a body that breaks inside one never hands out a
half-read object (the break is counted as ``extension-cut``).

Text is always gathered (expat's ``buffer_text`` plus a list) and joined at the end tag,
because entities, CDATA and chunk boundaries split character data into pieces. A field
being captured swallows nested markup (``<loc><url>…</url></loc>`` gives the inner text).

The lite path: most of a big sitemap is runs of plain entries (``<url>`` holding bare
``<loc>``, ``<lastmod>``, ``<changefreq>``, ``<priority>``). Chunks are cut after their
last entry end; a chunk that starts on an entry boundary and matches that grammar exactly
(one regex, in C) is read with no start handler at all, from end tags alone: half the
Python callbacks, and by construction the same records and problems as the full reading.

Hardening: the handlers defusedxml installs are installed here too and raise defusedxml's
own exceptions at declaration time: entity declarations (billion laughs, quadratic blowup,
XXE, parameter entities) and external entity references are refused, so nothing is ever
expanded, read or fetched. A DOCTYPE alone is harmless and allowed, as in defusedxml.

Bounds: expat keeps every open element and every distinct name, and before 2.6 it rescans
an unfinished token on every ``Parse()``; each of these is bounded (``Limits.max_xml_*``)
and ends the document with a ``limit-*`` problem. The token and names bounds are measured
at fixed offsets of the stream (every ``max_xml_token`` bytes handed to expat: see
:meth:`XmlReader._expat`), the depth and namespace bounds in the handlers, so every
verdict depends on the document alone, never on how it was chunked.

Leniency: a bare ``&`` (``?a=1&b=2``) or an HTML entity (``&nbsp;``) makes expat give up
on the whole document. :class:`AmpFixer` escapes such ampersands in the byte stream before
expat sees them (outside CDATA sections), so the URL survives exactly as written.
"""

from __future__ import annotations

import codecs
import itertools
import pyexpat
import re
from datetime import datetime
from typing import Any, Final, NoReturn, Protocol

from defusedxml import EntitiesForbidden, ExternalReferenceForbidden

from sitemap_reader.records import DataObject, Image, News, TvShow, Video, VideoId, VideoPrice

# ---------------------------------------------------------------------------------------
# Bare-ampersand repair

# Any "&" that does not start a well-formed reference to one of XML's predefined entities
# or a character: if this finds nothing, the chunk passes through untouched.
_NOT_A_REFERENCE: Final = re.compile(rb"&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);)")
# What an "&" starts: a predefined entity, a character reference (maybe missing its ";").
_AMP: Final = re.compile(rb"&(?:(?:amp|lt|gt|quot|apos);|#([0-9]+)(;?)|#x([0-9A-Fa-f]+)(;?))?")
# An unfinished reference at the end of a chunk: held back until the next chunk.
_INCOMPLETE: Final = re.compile(rb"&(?:#[xX]?[0-9A-Fa-f]*|[A-Za-z]*)")
_CDATA_OPEN: Final = b"<![CDATA["
_CDATA_CLOSE: Final = b"]]>"
# Longest reference we wait for across a chunk boundary.
_HOLD_REFERENCE: Final = 64


def _xml_char(code: int) -> bool:
    """Is ``code`` a character XML 1.0 allows in a character reference?"""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0x10FFFF


def _repair(match: re.Match[bytes]) -> bytes | None:
    """The repair of one ``&``, or None when it is well-formed as it stands."""
    decimal, dsemi, hexa, hsemi = match.groups()
    if decimal is None and hexa is None:
        # A predefined entity stays; a bare "&" (or &nbsp;, &copy=) becomes literal text.
        return None if match.end() - match.start() > 1 else b"&amp;"
    code = int(decimal) if decimal is not None else int(hexa, 16)
    if not _xml_char(code):
        return b"&amp;" + match.group()[1:]
    # A character reference without its ";" means what HTML makes of it: the character.
    return None if (dsemi or hsemi) else match.group() + b";"


def _marker_prefix(data: bytes) -> int:
    """Length of the longest end of ``data`` that may be the start of a CDATA marker."""
    tail = data[-len(_CDATA_OPEN) :]
    if b"<" not in tail and b"]" not in tail:
        return 0
    for size in range(len(tail), 0, -1):
        end = tail[-size:]
        if _CDATA_OPEN.startswith(end) or _CDATA_CLOSE.startswith(end):
            return size if end not in (_CDATA_OPEN, _CDATA_CLOSE) else 0
    return 0


class AmpFixer:
    """Streaming filter that repairs stray ampersands outside CDATA sections.

    Well-formed XML passes through unchanged. A bare ``&`` becomes ``&amp;`` (so
    ``?a=1&b=2`` survives exactly), a character reference missing its ``;`` gets one, and
    a reference to a character XML forbids becomes literal text. An unfinished reference
    or CDATA marker at a chunk's end is held back until the next chunk.
    """

    __slots__ = ("_carry", "_in_cdata", "repairs")

    def __init__(self) -> None:
        self._carry = b""
        self._in_cdata = False
        self.repairs = 0  # ampersands changed so far

    def _fix_segment(self, data: bytes) -> bytes:
        # Character references are checked one by one (&#0; is well-formed yet fatal).
        if b"&#" not in data and not _NOT_A_REFERENCE.search(data):
            return data
        return _AMP.sub(self._replace, data)

    def _replace(self, match: re.Match[bytes]) -> bytes:
        fixed = _repair(match)
        if fixed is None:
            return match.group()
        self.repairs += 1
        return fixed

    def feed(self, data: bytes) -> bytes:
        if self._carry:
            data = self._carry + data
        size = cut = len(data) - _marker_prefix(data)
        amp = data.rfind(b"&", max(0, size - _HOLD_REFERENCE), size)
        if amp != -1 and _INCOMPLETE.fullmatch(data, amp, size):
            cut = amp
        self._carry = data[cut:]
        return self._fix(data[:cut] if cut < len(data) else data)

    def flush(self) -> bytes:
        data, self._carry = self._carry, b""
        return self._fix(data)

    def _fix(self, data: bytes) -> bytes:
        if not self._in_cdata and _CDATA_OPEN not in data:
            return self._fix_segment(data) if b"&" in data else data
        out: list[bytes] = []
        pos = 0
        while pos < len(data):
            if self._in_cdata:
                end = data.find(_CDATA_CLOSE, pos)
                if end == -1:
                    out.append(data[pos:])
                    break
                end += len(_CDATA_CLOSE)
                out.append(data[pos:end])
                self._in_cdata = False
            else:
                end = data.find(_CDATA_OPEN, pos)
                if end == -1:
                    out.append(self._fix_segment(data[pos:]))
                    break
                end += len(_CDATA_OPEN)
                out.append(self._fix_segment(data[pos:end]))
                self._in_cdata = True
            pos = end
        return b"".join(out)


# ---------------------------------------------------------------------------------------
# The lite path: a run of plain entries is read from end tags alone

#: A run of complete entries made only of bare fields (no attributes, prefixes, comments,
#: CDATA or markup in text, text runs bounded): what most of every big sitemap is.
_LITE_URLS: Final = re.compile(
    rb"(?:\s*+<url>(?:\s*+<(loc|lastmod|changefreq|priority)>[^<]{0,8192}+</\1>)*+\s*+</url>)*+\s*+"
)
_LITE_SITEMAPS: Final = re.compile(
    rb"(?:\s*+<sitemap>(?:\s*+<(loc|lastmod)>[^<]{0,8192}+</\1>)*+\s*+</sitemap>)*+\s*+"
)
#: Bytes held back after the last entry end so that the next chunk starts on an entry
#: boundary; past this, the bytes go to expat at once (no lite path for that stretch).
_MAX_CARRY: Final = 16 * 1024


# ---------------------------------------------------------------------------------------
# Element kinds

OTHER: Final = 0
# entries
E_URL: Final = 1
E_SITEMAP: Final = 2
E_ITEM: Final = 3  # RSS <item>, Atom <entry>
# core fields (direct children of an entry)
F_LOC: Final = 10
F_LASTMOD: Final = 11  # sitemap lastmod, RSS pubDate, Atom updated/modified, dc:date
F_CHANGEFREQ: Final = 12
F_PRIORITY: Final = 13
F_LINK: Final = 14
F_GUID: Final = 15
F_PUBLISHED: Final = 16  # Atom published/issued: a fallback date
F_TITLE: Final = 17  # an RSS/Atom item's title (kept for feed items only)
F_FEED_DATE: Final = -2  # a feed's own date (channel/feed level, outside the items)
# An entry in progress is a list indexed by field kind - F_LOC (plus extension slots):
# cheaper to reset and fill than a dozen attributes. The Sink receives this list.
LOC: Final = 0
LASTMOD: Final = 1
CHANGEFREQ: Final = 2
PRIORITY: Final = 3
LINK: Final = 4
GUID: Final = 5
PUBLISHED: Final = 6
TITLE: Final = 7
ALTERNATES: Final = 8
IMAGES: Final = 9
VIDEOS: Final = 10
NEWS: Final = 11
#: The rare per-entry data (feed title, mobile flag, PageMaps) in one dict, None when
#: there is none: a plain entry costs one ``is None`` test for all of them.
EXTRA: Final = 12
ENTRY_SIZE: Final = 13
# extensions (the containers first: X_IMAGE..X_PAGEMAP)
X_IMAGE: Final = 20
X_VIDEO: Final = 21
X_NEWS: Final = 22
X_PAGEMAP: Final = 23  # a PageMap, read only when asked for (else ignored)
X_XHTML: Final = 24  # xhtml:link (hreflang alternates)
X_MOBILE: Final = 25  # <mobile:mobile/>, a flag
X_IGNORED: Final = 26  # another extension element (geo, a PageMap when not asked...)

_ENTRIES: Final = {"url": E_URL, "sitemap": E_SITEMAP, "item": E_ITEM, "entry": E_ITEM}
_FIELDS: Final = {
    "loc": F_LOC,
    "lastmod": F_LASTMOD,
    "pubdate": F_LASTMOD,
    "updated": F_LASTMOD,
    "modified": F_LASTMOD,
    "date": F_LASTMOD,
    "changefreq": F_CHANGEFREQ,
    "priority": F_PRIORITY,
    "link": F_LINK,
    "guid": F_GUID,
    "published": F_PUBLISHED,
    "issued": F_PUBLISHED,
    "lastbuilddate": F_LASTMOD,  # RSS channel only, in practice: the feed's own date
    "title": F_TITLE,
}
# Extension namespaces recognised by a fragment of their URI, or by the usual prefix
# when the document forgot to declare it.
_EXT_BY_NS: Final = (
    ("sitemap-image", X_IMAGE),
    ("sitemap-video", X_VIDEO),
    ("sitemap-news", X_NEWS),
    ("/xhtml", X_XHTML),
    ("sitemap-mobile", X_MOBILE),
    ("sitemap-pagemap", X_PAGEMAP),
)
_EXT_BY_PREFIX: Final = {
    "image": X_IMAGE,
    "video": X_VIDEO,
    "news": X_NEWS,
    "xhtml": X_XHTML,
    "mobile": X_MOBILE,
    "pagemap": X_PAGEMAP,
}
_EXT_CONTAINERS: Final = {X_IMAGE: "image", X_VIDEO: "video", X_NEWS: "news", X_PAGEMAP: "pagemap"}

#: Root element (local name) → format reported by the parser.
ROOTS: Final = {
    "urlset": "urlset",
    "sitemapindex": "sitemapindex",
    "rss": "rss",
    "rdf": "rss",  # RSS 1.0: <rdf:RDF>
    "feed": "atom",
}
SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"

# Which entry kinds each root admits: a feed's channel <image><url> is not a page.
_ENTRIES_FOR_ROOT: Final = {
    "urlset": (E_URL, E_SITEMAP),
    "sitemapindex": (E_URL, E_SITEMAP),
    "rss": (E_ITEM,),
    "atom": (E_ITEM,),
}
# Multi-valued extension fields, collected as lists.
_MULTI: Final = frozenset({"tag", "keywords"})
# Repeatable extension fields whose attributes belong to each value: (text, attrs) lists.
_WITH_ATTRS: Final = frozenset({"price", "id"})
_FEEDS: Final = frozenset({"rss", "atom"})


def _forbid_entity(name: str, *args: Any) -> NoReturn:
    raise EntitiesForbidden(name, None, None, None, None, None)


def _forbid_unparsed(name: str, *args: Any) -> NoReturn:
    raise EntitiesForbidden(name, None, None, None, None, None)


def _forbid_external(
    context: str, base: str | None, sysid: str | None, pubid: str | None
) -> NoReturn:
    raise ExternalReferenceForbidden(context, base, sysid, pubid)


def _ignore(*args: Any) -> None:
    pass


class StopParsing(Exception):
    """Raised inside a handler to end the document (unknown root, limit reached)."""


class Sink:
    """What the readers report to (implemented by the SitemapParser's emitter).

    Entries are not reported one call each: readers append them to ``pending`` and call
    :meth:`drain` once that holds ``batch`` entries (the parser drains after every fed
    chunk too), so turning them into records runs in one tight loop. A page entry is a
    list of raw strings at LOC, LASTMOD, CHANGEFREQ, PRIORITY (or None), lists of raw
    extension data at ALTERNATES, IMAGES, VIDEOS, a dict at NEWS and a dict of the rare
    data (``title``, ``mobile``, ``pagemaps``) at EXTRA; a child sitemap is a
    ``(loc, lastmod)`` tuple.
    """

    pending: list[list[Any] | tuple[str, str | None]]
    #: Entries held before a drain; 1 when a count limit must stop the body exactly.
    batch: int

    def drain(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def root(self, local: str, namespace: str) -> str | None:  # pragma: no cover - interface
        """A root element was seen; return the format, or None to stop."""
        raise NotImplementedError

    def text_started(self) -> None:  # pragma: no cover - interface
        """The body is a plain-text sitemap (its first URL was found)."""
        raise NotImplementedError

    def problem(
        self, code: str, message: str, fatal: bool = False
    ) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def feed_date(self, text: str) -> None:  # pragma: no cover - interface
        """A date of the feed itself (RSS channel, Atom feed), outside its items."""
        raise NotImplementedError


class XmlReader:
    """Drives pyexpat over a byte stream and reports entries to a :class:`Sink`."""

    def __init__(
        self,
        sink: Sink,
        *,
        max_text: int,
        max_extensions: int,
        codec: str | None = None,
        pagemaps: bool = False,
        max_token: int = 64 * 1024,
        max_depth: int = 100,
        max_names: int = 2_000,
        max_name_chars: int = 64 * 1024,
        max_namespaces: int = 1_000,
    ) -> None:
        self._sink = sink
        self._pagemaps = pagemaps
        self._feed = False  # the root is an RSS or Atom feed
        self._last_attrs: tuple[str, dict[str, str]] | None = None
        # Non-UTF-8 bodies are decoded here and handed to expat as UTF-8 (see sniff).
        self._decoder = (
            codecs.getincrementaldecoder(codec)(errors="replace") if codec is not None else None
        )
        self._max_text = max_text
        self._overflow = "x" * (max_text + 1)
        self._max_ext = max_extensions
        self._fixer = AmpFixer()
        self._buf: list[str] = []
        self._kinds: dict[str, int] = {}
        self._locals: dict[str, str] = {}
        self._prefixes: dict[str, str] = {"xml": "http://www.w3.org/XML/1998/namespace"}
        self._format: str | None = None
        self._entry_kinds: tuple[int, ...] = ()
        self._entry = OTHER
        self._entry_name = ""
        self._field = OTHER
        self._field_name = ""
        self._ext = OTHER
        self._ext_name = ""
        self._scope_depth = 0
        self._ext_fields: dict[str, Any] = {}
        self._v: list[Any] = [None] * ENTRY_SIZE
        # Looked up once: the handlers below use them for every element.
        self._clear = self._buf.clear
        self._pending = sink.pending
        self._scopes: list[tuple[int, str, str | None]] = []
        self._carry = b""  # bytes after the last entry end, parsed with the next chunk
        # Markup bounds (see "Bounds" in the module docstring).
        self._max_token = max_token
        self._max_depth = max_depth
        self._max_names = max_names
        self._name_chars = max_name_chars  # budget left for new distinct names
        self._max_namespaces = max_namespaces
        # pyexpat interns every element and attribute name it hands out (DTD names too,
        # with the declaration handlers set) in this dict: its size is the count of
        # distinct names, measured at no cost to the handlers.
        self._names: dict[str, str] = {}
        self._names_seen = 0  # len(self._names) at the last measure
        self._depth = 0  # elements open (full handlers; a lite run is depth-neutral)
        self._namespaces: set[int] = set()  # hashes of (prefix, URI) declared
        self._fed = 0  # bytes handed to expat so far
        self._grid = max_token  # next offset at which the open token is measured
        self._parser = self._make_parser()

    # -- expat plumbing -------------------------------------------------------------------

    def _make_parser(self) -> Any:
        # Expat is told the bytes are UTF-8 whatever the prolog declares: they are, either
        # as sent (sniff found UTF-8 or ASCII) or transcoded by the decoder. Left to read
        # the declaration itself, expat would look up any name it finds there and raise a
        # LookupError (through pyexpat) on an unknown one.
        p = pyexpat.ParserCreate("utf-8", intern=self._names)
        p.buffer_text = True
        p.buffer_size = 65536
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._buf.append
        p.EntityDeclHandler = _forbid_entity
        p.UnparsedEntityDeclHandler = _forbid_unparsed
        p.ExternalEntityRefHandler = _forbid_external
        # Names declared in a DTD live in expat's tables too: with a handler set, pyexpat
        # interns them, so they are counted like tag names.
        p.ElementDeclHandler = _ignore
        p.AttlistDeclHandler = _ignore
        return p

    def feed(self, data: bytes) -> None:
        """Parse a chunk. Raises ExpatError, defusedxml errors or StopParsing."""
        if self._decoder is not None:
            data = self._decoder.decode(data).encode()
        data = self._fixer.feed(data)
        if self._carry:
            data = self._carry + data
        # Cut after the last entry end: the next chunk then starts on an entry boundary,
        # where the lite path can take over.
        # (rfind gives -1 when absent: -1 + 6 would cut after the chunk's fifth byte.)
        url_end, sitemap_end = data.rfind(b"</url>"), data.rfind(b"</sitemap>")
        end = max(url_end + 6 if url_end >= 0 else 0, sitemap_end + 10 if sitemap_end >= 0 else 0)
        if len(data) - end > _MAX_CARRY:
            end = len(data)
        self._carry = data[end:]
        if end:
            self._parse(data[:end] if end < len(data) else data)

    def _parse(self, data: bytes) -> None:
        lite = self._lite_pattern()
        if lite is not None and lite.fullmatch(data):
            self._parse_lite(data)
        else:
            self._expat(data)
        if len(self._buf) > 1:
            self._bound_text()

    def _expat(self, data: bytes) -> None:
        """Hand bytes to expat, stopping at every multiple of the token cap to measure
        the markup construct left open there.

        After ``Parse()`` returns, expat's ``CurrentByteIndex`` is where its unconsumed
        input starts: character data and CDATA are always consumed, so what is left is
        one unfinished markup token (a tag, comment, PI, DOCTYPE declaration). Measuring
        only at fixed offsets of the stream, never at chunk ends, makes the verdict a
        function of the document alone: a construct is refused iff it is still open at
        a multiple of ``max_token`` more than ``max_token`` bytes after it began,
        however the body was chunked. Between two such offsets expat rescans at most
        two caps' worth, so time stays linear; the common chunk crosses no offset and
        costs one comparison.
        """
        end = self._fed + len(data)
        if end < self._grid:
            self._parser.Parse(data, False)
            self._fed = end
            return
        view = memoryview(data)
        while self._fed + len(view) >= self._grid:
            cut = self._grid - self._fed
            self._parser.Parse(view[:cut], False)
            self._fed = self._grid
            self._grid += self._max_token
            view = view[cut:]
            self._measure()
        if view:
            self._parser.Parse(view, False)
            self._fed += len(view)

    def _measure(self) -> None:
        """The bounds checked at each grid offset: the open token, distinct names."""
        if len(self._names) != self._names_seen:
            self._count_names()
        parser = self._parser
        start = parser.CurrentByteIndex
        if start >= 0 and self._fed - start > self._max_token:
            where = f"line {parser.CurrentLineNumber}, column {parser.CurrentColumnNumber}"
            self._limit(
                "limit-token",
                f"a tag, comment or declaration longer than {self._max_token} bytes (from {where})",
            )

    def _count_names(self) -> None:
        names = self._names
        fresh = len(names) - self._names_seen
        self._names_seen = len(names)
        # Dicts keep insertion order: the names added since the last measure are last.
        self._name_chars -= sum(map(len, itertools.islice(reversed(names), fresh)))
        if len(names) > self._max_names or self._name_chars < 0:
            self._limit(
                "limit-names",
                f"more than {self._max_names} distinct element and attribute names "
                "(or more than their characters' budget) in one document",
            )

    def _limit(self, code: str, message: str) -> NoReturn:
        """A markup bound was crossed: the document ends here."""
        self._sink.problem(code, message, fatal=True)
        raise StopParsing(code)

    def _lite_pattern(self) -> re.Pattern[bytes] | None:
        """The lite grammar for where the document stands, or None (read in full)."""
        if self._entry or self._field or self._ext or self._scopes:
            return None
        if self._extension("", self._prefixes.get("", "")) != OTHER:
            return None
        return (
            _LITE_URLS
            if self._format == "urlset"
            else (_LITE_SITEMAPS if self._format == "sitemapindex" else None)
        )

    def _parse_lite(self, data: bytes) -> None:
        """Read a run of plain entries with end-tag events only (half the callbacks).

        ``data`` matched the lite grammar, so every start tag it holds is a bare entry or
        field tag and every text is whitespace or a field's value: the end handler alone
        reconstructs exactly what the full handlers would. The entry in progress is
        presumed open throughout, so a break inside the run is flushed as it would be.
        """
        parser = self._parser
        self._entry = E_SITEMAP if self._format == "sitemapindex" else E_URL
        self._entry_name = "sitemap" if self._entry == E_SITEMAP else "url"
        parser.StartElementHandler = None
        parser.EndElementHandler = self._end_lite
        try:
            self._expat(data)
        finally:
            parser.StartElementHandler = self._start
            parser.EndElementHandler = self._end
        self._entry = OTHER

    def _end_lite(self, name: str) -> None:
        # The field branch repeats _end's on purpose: a shared helper would cost a call
        # per field on the hottest path. The grammar leaves no bare text to an entry.
        if name == self._entry_name:
            self._finish_entry()
        else:
            text = "".join(self._buf)
            text = self._text() if len(text) > self._max_text else text.strip()
            kind = self._kinds.get(name)
            if kind is None:
                kind = self._classify(name)
            entry = self._v
            index = kind - F_LOC
            if entry[index] is None:
                entry[index] = text
            elif index == LOC:
                self._another_loc(text)
        self._clear()

    def flush(self) -> None:
        """Parse the bytes held back for the lite path (not the end of input).

        Called before a break that comes from outside the document (a gzip error, the
        byte cap): what was decoded before it is read first, in stream order, so the
        result is the same however the body was chunked."""
        carry, self._carry = self._carry, b""
        if carry:
            self._parse(carry)

    def close(self) -> None:
        """End of input: raises ExpatError if the document is unfinished."""
        fixer = self._fixer
        tail = fixer.feed(self._decoder.decode(b"", True).encode()) if self._decoder else b""
        self._expat(self._carry + tail + fixer.flush())
        self._carry = b""
        self._parser.Parse(b"", True)
        # Reported only for a document read to its end: how far a broken one got before
        # it broke depends on chunk boundaries, and its fatal problem says enough.
        for _ in range(fixer.repairs):
            self._sink.problem("xml-repaired", "a stray '&' or a broken reference kept as text")

    def flush_open_entry(self) -> None:
        """After a break, keep the entry in progress if a location of it was complete
        (a location being read when the body broke may be cut short: never emitted)."""
        entry = self._v
        if self._entry != OTHER and (entry[LOC] or entry[LINK] or entry[GUID]):
            if self._ext:  # never a half-read extension object: the URL goes without it
                self._sink.problem("extension-cut", "an extension object cut by the break dropped")
            self._finish_entry()
        self._entry = OTHER

    @property
    def format(self) -> str | None:
        return self._format

    @property
    def position(self) -> str:
        p = self._parser
        return f"line {p.ErrorLineNumber}, column {p.ErrorColumnNumber}"

    def _bound_text(self) -> None:
        # Called once per fed chunk, a memory guard: text past the cap is replaced by a
        # marker that is itself over the cap, so whoever joins it next rejects it exactly
        # as it would reject the whole text (however the body was chunked).
        if sum(map(len, self._buf)) > self._max_text:
            self._buf[:] = [self._overflow]

    def _text(self) -> str:
        """The gathered text, stripped; empty (and a problem) when it is over the cap.

        The cap applies to the raw text, as :meth:`_bound_text` does, so the verdict is
        the same however the body was chunked."""
        text = "".join(self._buf)
        if len(text) > self._max_text:
            self._sink.problem("text-too-long", f"text longer than {self._max_text} chars dropped")
            return ""
        return text.strip()

    # -- classification -------------------------------------------------------------------

    def _classify(self, name: str) -> int:
        prefix, _, local = name.rpartition(":")
        local = local.lower()
        self._locals[name] = local
        namespace = self._prefixes.get(prefix, "")
        ext = self._extension(prefix, namespace)
        if ext == OTHER:
            kind = _ENTRIES.get(local) or _FIELDS.get(local, OTHER)
        elif ext == X_XHTML:
            kind = X_XHTML if local == "link" else OTHER
        elif ext == X_MOBILE:
            kind = X_MOBILE if local == "mobile" else X_IGNORED
        elif ext == X_PAGEMAP:
            kind = X_PAGEMAP if local == "pagemap" and self._pagemaps else X_IGNORED
        elif ext == X_IGNORED:
            kind = X_IGNORED
        else:
            kind = ext if local == _EXT_CONTAINERS[ext] else OTHER
        self._kinds[name] = kind
        return kind

    def _new_namespace(self, prefix: str, uri: str) -> None:
        key = hash((prefix, uri))  # a hash, not the URI: the set stays small
        if key not in self._namespaces:
            if len(self._namespaces) >= self._max_namespaces:
                self._limit(
                    "limit-namespaces",
                    f"more than {self._max_namespaces} namespace declarations in one document",
                )
            self._namespaces.add(key)

    def _too_deep(self) -> NoReturn:
        self._limit("limit-nesting", f"elements nested more than {self._max_depth} deep")

    @staticmethod
    def _extension(prefix: str, namespace: str) -> int:
        if namespace:
            for fragment, kind in _EXT_BY_NS:
                if fragment in namespace:
                    return kind
            return OTHER
        return _EXT_BY_PREFIX.get(prefix, OTHER) if prefix else OTHER

    def _declare(self, attrs: dict[str, str]) -> None:
        # Declarations on the root hold for the whole document. One on a nested element
        # (PageMap's xmlns="…" on every <PageMap>) holds until that element ends: the
        # scoped handlers count depth (only while such a declaration is open) to undo it.
        for key, value in attrs.items():
            if key.startswith("xmlns"):
                prefix = key[6:]
                old = self._prefixes.get(prefix)
                if old == value:
                    continue
                self._new_namespace(prefix, value)
                if self._format is not None:  # not the root
                    if not self._scopes:
                        self._scope_depth = 1
                        self._parser.StartElementHandler = self._start_scoped
                        self._parser.EndElementHandler = self._end_scoped
                    self._scopes.append((self._scope_depth, prefix, old))
                self._prefixes[prefix] = value
                self._kinds.clear()

    def _start_scoped(self, name: str, attrs: dict[str, str]) -> None:
        self._scope_depth += 1
        self._start(name, attrs)

    def _end_scoped(self, name: str) -> None:
        depth = self._scope_depth
        self._scope_depth = depth - 1
        self._end(name)
        scopes = self._scopes
        while scopes and scopes[-1][0] == depth:
            _, prefix, old = scopes.pop()
            if old is None:
                del self._prefixes[prefix]
            else:
                self._prefixes[prefix] = old
            self._kinds.clear()
        if not scopes:
            self._parser.StartElementHandler = self._start
            self._parser.EndElementHandler = self._end

    # The two handlers below run for every element of every sitemap: they are written
    # flat on purpose (no helper calls on the common path of a plain urlset). Elements
    # are matched to their end tags by name, not by depth: a field ends at the first end
    # tag bearing its name, an entry likewise, which is all real sitemaps need.

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        depth = self._depth + 1
        if depth > self._max_depth:
            self._too_deep()
        self._depth = depth
        if self._field:
            return  # inside a field, markup is swallowed and only its text is kept
        if attrs:
            self._declare(attrs)
        kind = self._kinds.get(name)
        if kind is None:
            kind = self._classify(name)
        self._clear()
        if self._entry:
            if self._ext:
                if attrs:
                    self._ext_attrs(name, attrs)
            elif kind >= F_LOC:
                if kind <= F_TITLE:
                    if kind == F_LINK and "href" in attrs:
                        self._atom_link(attrs)
                        kind = -1  # swallow its content
                    self._field = kind
                    self._field_name = name
                elif kind == X_XHTML:
                    self._alternate(attrs)
                elif kind <= X_PAGEMAP:
                    self._ext = kind
                    self._ext_name = name
                    self._ext_fields = {}
                elif kind == X_MOBILE:
                    self._extra()["mobile"] = True
        elif kind in self._entry_kinds:
            self._entry = kind
            self._entry_name = name
        elif self._format is None:
            self._root(name)
        elif kind == F_LASTMOD and self._feed:
            self._field = F_FEED_DATE
            self._field_name = name

    def _end(self, name: str) -> None:
        self._depth -= 1
        field = self._field
        if field:
            if name != self._field_name:
                return
            self._field = OTHER
            if field > 0:
                text = "".join(self._buf)
                text = self._text() if len(text) > self._max_text else text.strip()
                entry = self._v
                index = field - F_LOC
                if entry[index] is None:
                    entry[index] = text
                elif index == LOC:
                    self._another_loc(text)
            elif field == F_FEED_DATE:
                text = self._text()
                if text:
                    self._sink.feed_date(text)
        elif self._ext:
            self._ext_end(name)
        elif self._entry and name == self._entry_name:
            if self._v[LOC] is None:
                text = self._text()
                if text:  # the location as bare text: <sitemap>https://…</sitemap>
                    self._v[LOC] = text
            self._finish_entry()
            self._entry = OTHER
        self._clear()

    def _root(self, name: str) -> None:
        prefix, _, local = name.rpartition(":")
        local = local.lower()
        namespace = self._prefixes.get(prefix, "")
        fmt = self._sink.root(local, namespace)
        if fmt is None:
            raise StopParsing
        self._format = fmt
        self._feed = fmt in _FEEDS
        self._entry_kinds = _ENTRIES_FOR_ROOT[fmt]

    # -- entries ------------------------------------------------------------------------

    def _atom_link(self, attrs: dict[str, str]) -> None:
        rel = attrs.get("rel", "alternate").strip().lower()
        if rel == "alternate" and self._v[LINK] is None:
            self._v[LINK] = attrs["href"]

    def _alternate(self, attrs: dict[str, str]) -> None:
        # Google's syntax: rel="alternate", hreflang and href, all three required.
        rel = attrs.get("rel")
        if rel != "alternate" and (rel is None or "alternate" not in rel.lower().split()):
            message = 'an xhtml:link without rel="alternate" ignored'
            self._sink.problem("link-not-alternate", message)
            return
        href = attrs.get("href")
        lang = attrs.get("hreflang", "").strip()
        if not href or not lang:
            self._sink.problem("link-incomplete", "an xhtml:link without hreflang or href ignored")
            return
        alternates = self._v[ALTERNATES]
        if alternates is None:
            alternates = self._v[ALTERNATES] = []
        if len(alternates) < self._max_ext:
            alternates.append((lang, href))
        else:
            self._over_cap("xhtml:link")

    def _over_cap(self, what: str) -> None:
        self._sink.problem("limit-extensions", f"{what} past {self._max_ext} per URL dropped")

    def _extra(self) -> dict[str, Any]:
        """The entry's dict of rare data (created on first use)."""
        extra = self._v[EXTRA]
        if extra is None:
            extra = self._v[EXTRA] = {}
        return extra  # type: ignore[no-any-return]

    def _another_loc(self, text: str) -> None:
        """Several <loc> in one entry: each is an entry of its own, and what follows the
        first belongs to it (as crawler-commons does)."""
        self._finish_entry()
        self._v[LOC] = text

    def _finish_entry(self) -> None:
        entry = self._v
        self._v = [None] * ENTRY_SIZE
        if self._entry == E_ITEM:  # feeds: the link (else the guid), the best date, the title
            entry[LOC] = entry[LINK] or entry[GUID]
            entry[LASTMOD] = entry[LASTMOD] or entry[PUBLISHED]
            if entry[TITLE]:
                extra = entry[EXTRA]
                if extra is None:
                    extra = entry[EXTRA] = {}
                extra["title"] = entry[TITLE]
        loc = entry[LOC]
        if not loc:
            self._sink.problem("missing-loc", "an entry without a location was skipped")
        else:
            pending = self._pending
            pending.append((loc, entry[LASTMOD]) if self._entry == E_SITEMAP else entry)
            if len(pending) >= self._sink.batch:
                self._sink.drain()

    # -- extensions ----------------------------------------------------------------------

    def _ext_attrs(self, name: str, attrs: dict[str, str]) -> None:
        local = self._locals.get(name) or name.rpartition(":")[2].lower()
        if self._ext == X_PAGEMAP:
            self._pagemap_start(local, attrs)
            return
        self._last_attrs = (name, attrs)
        for key, value in attrs.items():
            self._ext_fields[f"{local}@{key}"] = value

    def _ext_end(self, name: str) -> None:
        if name != self._ext_name:
            local = self._locals.get(name) or name.rpartition(":")[2].lower()
            if self._ext == X_PAGEMAP:
                self._pagemap_end(local)
                return
            text = self._text()
            if local in _WITH_ATTRS:  # several, each with its own attributes
                last = self._last_attrs
                attrs = last[1] if last is not None and last[0] == name else {}
                self._ext_item(local, (text, attrs))
            elif text:
                if local in _MULTI:
                    self._ext_item(local, text)
                else:
                    self._ext_fields.setdefault(local, text)
            self._last_attrs = None
            return
        kind, fields = self._ext, self._ext_fields
        self._ext = OTHER
        self._ext_fields = {}
        self._last_attrs = None
        if kind == X_NEWS:
            self._v[NEWS] = fields
            return
        if kind == X_PAGEMAP:
            objects = fields.get("objects")
            if objects:
                self._extra().setdefault("pagemaps", []).extend(objects)
            return
        slot = IMAGES if kind == X_IMAGE else VIDEOS
        found = self._v[slot]
        if found is None:
            found = self._v[slot] = []
        if len(found) < self._max_ext:
            found.append(fields)
        else:
            self._over_cap(f"{_EXT_CONTAINERS[kind]}:{_EXT_CONTAINERS[kind]}")

    def _ext_item(self, local: str, value: Any) -> None:
        """One more value of a repeatable field (tags, prices...), up to the cap."""
        values = self._ext_fields.setdefault(local, [])
        if len(values) < self._max_ext:
            values.append(value)
        else:
            self._over_cap(local)

    # A PageMap is read as a list of DataObjects, each [type, id, [(name, value), ...]].

    def _pagemap_start(self, local: str, attrs: dict[str, str]) -> None:
        fields = self._ext_fields
        if local == "dataobject":
            objects = fields.setdefault("objects", [])
            if len(objects) + len(self._extra().get("pagemaps", ())) < self._max_ext:
                fields["current"] = [attrs.get("type"), attrs.get("id"), []]
                objects.append(fields["current"])
            else:
                self._over_cap("PageMap DataObject")
        elif local == "attribute":
            fields["attribute"] = (attrs.get("name"), attrs.get("value"))

    def _pagemap_end(self, local: str) -> None:
        fields = self._ext_fields
        if local == "attribute":
            name, value = fields.pop("attribute", (None, None))
            # The value is the element's text; PageMaps in HTML put it in value="…",
            # which some sitemaps copy: used when there is no text.
            text = self._text() or value
            current = fields.get("current")
            if current is None or not name or text is None:
                self._sink.problem("pagemap-incomplete", "a PageMap Attribute without a name, "
                                   "value or DataObject ignored")  # fmt: skip
            elif len(current[2]) < self._max_ext:
                current[2].append((name, text.strip()))
            else:
                self._over_cap("PageMap Attribute")
        elif local == "dataobject":
            fields.pop("current", None)


# ---------------------------------------------------------------------------------------
# Extension records from the gathered fields

# Builders get an :class:`ExtensionContext` (the parser's emitter): it normalizes the
# extension URLs (absolute only: a placeholder such as ``None`` must never become
# ``https://site/None``), parses dates, and counts every value it has to drop.


class ExtensionContext(Protocol):
    """What the extension builders need from the parser."""

    def ext_url(self, raw: str, what: str) -> str | None:
        """An absolute extension URL normalized, or None (the drop counted)."""
        ...

    def ext_date(self, text: str) -> datetime | None:
        """A date, or None (counted)."""
        ...

    def problem(self, code: str, message: str) -> None: ...


# Runs of XML white space (space, tab, CR, LF) inside a human-text field: one space.
_XML_SPACE: Final = re.compile(r"[ \t\r\n]+")
_PRICE: Final = re.compile(r"\s*[0-9]+(?:\.[0-9]+)?\s*")
_PRICE_TYPES: Final = frozenset({"own", "rent"})
_RESOLUTIONS: Final = frozenset({"hd", "sd"})


def human_text(text: Any) -> str | None:
    """A human-text field (title, caption, description, name...): runs of XML white
    space collapsed to one space, ends trimmed; None when nothing is left.

    >>> human_text("Alkis shows you how\\n        to grill")
    'Alkis shows you how to grill'
    """
    if not text:
        return None
    return _XML_SPACE.sub(" ", str(text)).strip(" ") or None


def build_image(fields: dict[str, Any], ctx: ExtensionContext) -> Image | None:
    loc = fields.get("loc")
    if not isinstance(loc, str):
        ctx.problem("extension-dropped", "an image:image without image:loc dropped")
        return None
    url = ctx.ext_url(loc, "image:loc")
    if url is None or len(fields) == 1:  # most images have a loc and nothing else
        return None if url is None else Image(url)
    return Image(
        url,
        title=human_text(fields.get("title")),
        caption=human_text(fields.get("caption")),
        geo_location=human_text(fields.get("geo_location")),
        license=fields.get("license"),
    )


def _int(text: Any) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def _float(text: Any) -> float | None:
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return value if 0.0 <= value <= 5.0 else None


def _yes_no(text: Any) -> bool | None:
    value = str(text).strip().lower() if text is not None else ""
    return {"yes": True, "true": True, "no": False, "false": False}.get(value)


def _words(text: Any) -> tuple[str, ...]:
    return tuple(str(text).split()) if text else ()


def _choice(value: str | None, allowed: frozenset[str], ctx: ExtensionContext) -> str | None:
    if value is None or not value.strip():
        return None
    word = value.strip().lower()
    if word in allowed:
        return word
    ctx.problem("bad-extension-field", f"value {value[:40]!r} not one of {sorted(allowed)}")
    return None


def _prices(items: list[tuple[str, dict[str, str]]], ctx: ExtensionContext) -> tuple[Any, ...]:
    prices = []
    for text, attrs in items:
        amount = None
        if text:
            if _PRICE.fullmatch(text):  # "1,99" is not read: 199 or 1.99 is a guess
                amount = float(text)
            else:
                ctx.problem("bad-extension-field", f"video:price {text[:40]!r} not understood")
        currency = (attrs.get("currency") or "").strip().upper() or None
        kind = _choice(attrs.get("type"), _PRICE_TYPES, ctx)
        resolution = _choice(attrs.get("resolution"), _RESOLUTIONS, ctx)
        if amount is not None or currency or kind or resolution:
            prices.append(VideoPrice(amount, currency, kind, resolution))
    return tuple(prices)


_TVSHOW_FIELDS: Final = (
    "show_title",
    "video_type",
    "episode_title",
    "season_number",
    "episode_number",
    "premier_date",
)


def _tvshow(fields: dict[str, Any], ctx: ExtensionContext) -> TvShow | None:
    if not any(name in fields for name in _TVSHOW_FIELDS):
        return None
    premier = fields.get("premier_date")
    video_type = fields.get("video_type")
    return TvShow(
        show_title=human_text(fields.get("show_title")),
        video_type=video_type.strip().lower() if video_type else None,
        episode_title=human_text(fields.get("episode_title")),
        season_number=_int(fields.get("season_number")),
        episode_number=_int(fields.get("episode_number")),
        premier_date=ctx.ext_date(premier) if premier else None,
    )


def _ext_urls(fields: dict[str, Any], names: tuple[str, ...], ctx: ExtensionContext) -> Any:
    return {k: ctx.ext_url(fields[k], f"video:{k}") for k in names if k in fields}


def build_video(fields: dict[str, Any], ctx: ExtensionContext) -> Video | None:
    urls = _ext_urls(fields, ("thumbnail_loc", "content_loc", "player_loc", "gallery_loc"), ctx)
    title = human_text(fields.get("title"))
    if not title and not any(urls.get(k) for k in ("thumbnail_loc", "content_loc", "player_loc")):
        ctx.problem("extension-dropped", "a video:video with no title and no video URL dropped")
        return None
    relationship = fields.get("restriction@relationship")
    platform_rel = fields.get("platform@relationship")
    info = fields.get("uploader@info")
    date = ctx.ext_date
    return Video(
        title=title,
        description=human_text(fields.get("description")),
        thumbnail_loc=urls.get("thumbnail_loc"),
        content_loc=urls.get("content_loc"),
        player_loc=urls.get("player_loc"),
        duration=_int(fields.get("duration")),
        expiration_date=date(fields["expiration_date"]) if "expiration_date" in fields else None,
        rating=_float(fields.get("rating")),
        view_count=_int(fields.get("view_count")),
        publication_date=date(fields["publication_date"]) if "publication_date" in fields else None,
        family_friendly=_yes_no(fields.get("family_friendly")),
        requires_subscription=_yes_no(fields.get("requires_subscription")),
        live=_yes_no(fields.get("live")),
        uploader=human_text(fields.get("uploader")),
        restriction=_words(fields.get("restriction")),
        restriction_relationship=relationship.strip().lower() if relationship else None,
        platform=_words(fields.get("platform")),
        platform_relationship=platform_rel.strip().lower() if platform_rel else None,
        tags=tuple(t for t in map(human_text, fields.get("tag", ())) if t),
        uploader_info=ctx.ext_url(info, "video:uploader info") if info else None,
        category=human_text(fields.get("category")),
        gallery_loc=urls.get("gallery_loc"),
        gallery_title=human_text(fields.get("gallery_loc@title")),
        prices=_prices(fields.get("price", []), ctx),
        tvshow=_tvshow(fields, ctx),
        ids=tuple(VideoId(text, attrs.get("type")) for text, attrs in fields.get("id", []) if text),
    )


def _split_commas(values: Any) -> tuple[str, ...]:
    if not values:
        return ()
    items = values if isinstance(values, list) else [values]
    parts = (human_text(part) for item in items for part in item.split(","))
    return tuple(part for part in parts if part)


#: Google News: "up to 5 stock tickers".
MAX_STOCK_TICKERS: Final = 5


def build_news(fields: dict[str, Any], ctx: ExtensionContext) -> News:
    tickers = _split_commas(fields.get("stock_tickers"))
    if len(tickers) > MAX_STOCK_TICKERS:
        ctx.problem("limit-extensions", f"news:stock_tickers past {MAX_STOCK_TICKERS} dropped")
    date = fields.get("publication_date")
    return News(
        title=human_text(fields.get("title")),
        publication_name=human_text(fields.get("name")),
        language=fields.get("language"),
        publication_date=ctx.ext_date(date) if date else None,
        keywords=_split_commas(fields.get("keywords")),
        genres=_split_commas(fields.get("genres")),
        stock_tickers=tickers[:MAX_STOCK_TICKERS],
        access=human_text(fields.get("access")),
    )


def build_pagemaps(objects: list[list[Any]]) -> tuple[DataObject, ...]:
    """PageMap DataObjects from the reader's ``[type, id, [(name, value), ...]]`` lists."""
    return tuple(DataObject(kind, ident, tuple(attrs)) for kind, ident, attrs in objects)


def expat_message(error: pyexpat.ExpatError) -> str:
    """``not well-formed (invalid token) at line 3, column 10``."""
    text = pyexpat.ErrorString(error.code) if error.code else str(error)
    return f"{text} at line {error.lineno}, column {error.offset}"
