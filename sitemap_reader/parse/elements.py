"""The element state machine: expat's start and end events turned into entries.

Theory of operation
-------------------
Expat runs *without* namespace processing: tags arrive as qualified names (``image:loc``)
and their prefixes are resolved by :class:`~sitemap_reader.parse.names.TagNames` from
every ``xmlns:*`` attribute seen. That is faster, and it survives the common
undeclared-prefix sitemap that namespace-aware expat rejects. Elements are classified
once per distinct tag name (a dict lookup afterwards) into the integer kinds of
:mod:`sitemap_reader.parse.kinds`. Core fields (``loc``, ``lastmod``, ``changefreq``,
``priority``, feed ``link``/dates) count only as *direct* children of an entry and outside
the extension namespaces, so an ``image:loc`` never leaks out as a page URL.

:class:`ElementMachine` owns the structure (the root's format; which entry, field or
extension object is open, and the end tag that closes it) and the entry in progress.
Extension objects are handed event by event to the
:class:`~sitemap_reader.parse.gather.ExtensionGatherer`, which stores each on the entry
only at its end tag (a break inside one is ``extension-cut``). The lite path
(:mod:`~sitemap_reader.parse.lite`) is this machine too, in a reduced mode: a run of plain
entries is read from end events alone, into the same entry in progress.

Text is always gathered (expat's ``buffer_text`` plus a list:
:class:`~sitemap_reader.parse.chardata.TextBuffer`) and joined at the end tag, because
entities, CDATA and chunk boundaries split character data into pieces. A field being
captured swallows nested markup (``<loc><url>…</url></loc>`` gives the inner text).
Entries leave as :mod:`sitemap_reader.parse.entry` shapes, appended to the sink's
``pending`` list.

The handlers hold the containers they use on every element as attributes of their own
(the kinds dict, the text list), looked up once: pyexpat calls them for every element,
and each attribute hop costs.
"""

from __future__ import annotations

import pyexpat
import re
from typing import NoReturn

from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.chardata import TextBuffer
from sitemap_reader.parse.entry import (
    ENTRY_SIZE,
    GUID,
    LASTMOD,
    LINK,
    LOC,
    PUBLISHED,
    TITLE,
    PageEntry,
    Sink,
    StopParsing,
    extra_of,
)
from sitemap_reader.parse.gather import ExtensionGatherer
from sitemap_reader.parse.kinds import (
    E_ITEM,
    E_SITEMAP,
    E_URL,
    ENTRIES_FOR_ROOT,
    F_FEED_DATE,
    F_LASTMOD,
    F_LINK,
    F_LOC,
    F_TITLE,
    FEEDS,
    OTHER,
    X_MOBILE,
    X_PAGEMAP,
    X_XHTML,
)
from sitemap_reader.parse.lite import grammar_for
from sitemap_reader.parse.names import TagNames


class ElementMachine:
    """Expat's element handlers and the entry in progress; reports to a :class:`Sink`.

    Its collaborators: ``bounded`` (whose parser it installs its handlers on, and whose
    bounds it reports to), ``names`` (prefixes and kinds), ``text`` (the buffer the
    character data goes to) and ``gatherer`` (extension objects). ``depth_cap`` bounds
    the elements open at once."""

    def __init__(
        self,
        sink: Sink,
        bounded: BoundedExpat,
        names: TagNames,
        text: TextBuffer,
        gatherer: ExtensionGatherer,
        *,
        depth_cap: int,
    ) -> None:
        self._sink = sink
        self._bounded = bounded
        self._names = names
        self._textbuf = text
        self._gatherer = gatherer
        self._depth_cap = depth_cap
        self._depth = 0  # elements open (full handlers; a lite run is depth-neutral)
        self._format: str | None = None
        self._feed = False  # the root is an RSS or Atom feed
        self._entry_kinds: tuple[int, ...] = ()
        self._entry = OTHER  # the kind of the open entry
        self._entry_name = ""
        self._field = OTHER  # the kind of the field being captured (-1: swallowed)
        self._field_name = ""
        self._ext = OTHER  # the kind of the open extension object
        self._ext_name = ""
        self._v: PageEntry = [None] * ENTRY_SIZE  # the entry in progress
        #: Where the root's end tag is (line, column), once it closed: an error of expat's
        #: after it is junk after the document, said at that place (expat's own words
        #: and position for junk depend on how much of it one Parse() call saw).
        self.root_end: tuple[int, int] | None = None
        self._lite: tuple[bytes, int] = (b"", 0)  # read_lite's data and its document offset
        # Looked up once: the handlers below use them for every element. Methods are
        # called through their object (self._buf.clear(), self._names.declare(...)),
        # never stored bound on self: on CPython 3.11 a call through a bound method held
        # in an attribute is the slowest way to make it (about twice a list's clear()).
        self._kinds = names.kinds
        self._buf = text.pieces
        self._max_text = text.limit
        self._pending = sink.pending
        self._parser = p = bounded.parser
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end

    @property
    def format(self) -> str | None:
        """The root's format (``urlset``...), None before the root."""
        return self._format

    @property
    def depth(self) -> int:
        """Elements open, as the full handlers count them."""
        return self._depth

    def flush_open_entry(self) -> None:
        """After a break, keep the entry in progress if a location of it was complete
        (a location being read when the body broke may be cut short: never emitted)."""
        entry = self._v
        if self._entry != OTHER and (entry[LOC] or entry[LINK] or entry[GUID]):
            if self._ext:  # never a half-read extension object: the URL goes without it
                self._sink.problem("extension-cut", "an extension object cut by the break dropped")
            self._finish_entry()
        self._entry = OTHER

    def _too_deep(self) -> NoReturn:
        self._bounded.limit("limit-nesting", f"elements nested more than {self._depth_cap} deep")

    # The handlers below run for every element of every sitemap: they are written flat
    # on purpose (no helper calls on the common path of a plain urlset). Elements are
    # matched to their end tags by name, not by depth: a field ends at the first end tag
    # bearing its name, an entry likewise, which is all real sitemaps need.

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        depth = self._depth + 1
        if depth > self._depth_cap:
            self._too_deep()
        self._depth = depth
        if self._field:
            return  # inside a field, markup is swallowed and only its text is kept
        if attrs and self._names.declare(attrs, depth):
            self._parser.EndElementHandler = self._end_scoped  # a nested declaration
        kind = self._kinds.get(name)
        if kind is None:
            kind = self._names.classify(name)
        self._buf.clear()
        if self._entry:
            if self._ext:
                if attrs:
                    self._gatherer.child_attrs(self._ext, name, attrs, self._v)
            elif kind >= F_LOC:
                if kind <= F_TITLE:
                    if kind == F_LINK and "href" in attrs:
                        self._atom_link(attrs)
                        kind = -1  # swallow its content
                    self._field = kind
                    self._field_name = name
                elif kind == X_XHTML:
                    self._gatherer.alternate(self._v, attrs)
                elif kind <= X_PAGEMAP:
                    self._ext = kind
                    self._ext_name = name
                elif kind == X_MOBILE:
                    extra_of(self._v)["mobile"] = True
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
        if not self._depth:
            parser = self._parser
            self.root_end = (parser.CurrentLineNumber, parser.CurrentColumnNumber)
        field = self._field
        if field:
            if name != self._field_name:
                return
            self._field = OTHER
            if field > 0:
                text = "".join(self._buf)
                text = self._textbuf.text() if len(text) > self._max_text else text.strip()
                entry = self._v
                index = field - F_LOC
                if entry[index] is None:
                    entry[index] = text
                elif index == LOC:
                    self._another_loc(text)
            elif field == F_FEED_DATE:
                text = self._textbuf.text()
                if text:
                    self._sink.feed_date(text)
        elif self._ext:
            if name != self._ext_name:
                self._gatherer.child_end(self._ext, name)
            else:
                kind = self._ext
                self._ext = OTHER
                self._gatherer.close(kind, self._v)
        elif self._entry and name == self._entry_name:
            if self._v[LOC] is None:
                text = self._textbuf.text()
                if text:  # the location as bare text: <sitemap>https://…</sitemap>
                    self._v[LOC] = text
            self._finish_entry()
            self._entry = OTHER
        self._buf.clear()

    def _end_scoped(self, name: str) -> None:
        # The end handler while a nested namespace declaration is open (see names).
        depth = self._depth
        self._end(name)
        if self._names.close(depth):
            self._parser.EndElementHandler = self._end

    def _root(self, name: str) -> None:
        prefix, _, local = name.rpartition(":")
        fmt = self._sink.root(local.lower(), self._names.namespace(prefix))
        if fmt is None:
            raise StopParsing
        self._format = fmt
        self._feed = fmt in FEEDS
        self._entry_kinds = ENTRIES_FOR_ROOT[fmt]

    def _atom_link(self, attrs: dict[str, str]) -> None:
        rel = attrs.get("rel", "alternate").strip().lower()
        if rel == "alternate" and self._v[LINK] is None:
            self._v[LINK] = attrs["href"]

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
                extra_of(entry)["title"] = entry[TITLE]
        loc = entry[LOC]
        if not loc:
            self._sink.problem("missing-loc", "an entry without a location was skipped")
        else:
            pending = self._pending
            pending.append((loc, entry[LASTMOD]) if self._entry == E_SITEMAP else entry)
            if len(pending) >= self._sink.batch:
                self._sink.drain()

    # -- the lite path (see parse.lite) ---------------------------------------------------

    def lite_grammar(self) -> re.Pattern[bytes] | None:
        """The lite grammar for where the document stands (between two entries of a
        sitemaps.org urlset or index, no nested declaration open), or None."""
        if self._entry or self._field or self._ext or self._names.scoped:
            return None
        return grammar_for(self._format, self._names.namespace(""))

    def read_lite(self, data: bytes) -> None:
        """Read a run of plain entries with end-tag events only (half the callbacks).

        ``data`` matched :meth:`lite_grammar`, so every start tag it holds is a bare
        entry or field tag and every text is whitespace or a field's value: the end
        handler alone reconstructs exactly what the full handlers would. The entry in
        progress is presumed open throughout, so a break inside the run is flushed as
        it would be.
        """
        parser = self._parser
        self._entry = E_SITEMAP if self._format == "sitemapindex" else E_URL
        self._entry_name = "sitemap" if self._entry == E_SITEMAP else "url"
        self._lite = (data, self._bounded.fed)
        parser.StartElementHandler = None
        parser.EndElementHandler = self._end_lite
        try:
            self._bounded.parse(data)
        finally:
            parser.StartElementHandler = self._start
            parser.EndElementHandler = self._end
            self._lite = (b"", 0)
        self._entry = OTHER

    def _lite_over_cap(self, name: str) -> str:
        """A field's text that looks over the cap on the lite path, measured as the full
        handlers measure it. With no start events, the lite path's buffer also holds the
        blank before the field's start tag (and before its entry's, for a first field),
        which the full handlers empty at those tags: whether a text at the cap was kept
        then followed the chunking (which chunks the lite path reads). The field's own
        text is read again from its bytes, by expat (rare: only here)."""
        data, base = self._lite
        end = self._bounded.event_offset() - base  # where this end tag starts in data
        start = data.rfind(b"<" + name.encode() + b">", 0, end) + len(name) + 2
        self._buf[:] = [_expat_text(data[start:end])]
        return self._textbuf.text()

    def _end_lite(self, name: str) -> None:
        # The field branch repeats _end's on purpose: a shared helper would cost a call
        # per field on the hottest path. The grammar leaves no bare text to an entry.
        if name == self._entry_name:
            self._finish_entry()
        else:
            text = "".join(self._buf)
            text = self._lite_over_cap(name) if len(text) > self._max_text else text.strip()
            kind = self._kinds.get(name)
            if kind is None:
                kind = self._names.classify(name)
            entry = self._v
            index = kind - F_LOC
            if entry[index] is None:
                entry[index] = text
            elif index == LOC:
                self._another_loc(text)
        self._buf.clear()


def _expat_text(raw: bytes) -> str:
    """The character data expat makes of ``raw`` (a field's bytes, no markup in them:
    references resolved, line breaks normalized)."""
    parser = pyexpat.ParserCreate("utf-8")
    pieces: list[str] = []
    parser.CharacterDataHandler = pieces.append
    parser.Parse(b"<v>" + raw + b"</v>", True)
    return "".join(pieces)
