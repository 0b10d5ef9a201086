"""The element state machine: expat's start and end events turned into entries.

Theory of operation
-------------------
Expat runs *without* namespace processing: tags arrive as qualified names (``image:loc``)
and prefixes are resolved here from every ``xmlns:*`` attribute seen. That is faster, and
it survives the common undeclared-prefix sitemap that namespace-aware expat rejects.
Elements are classified once per distinct tag name (a dict lookup afterwards) into the
integer kinds of :mod:`sitemap_reader.parse.kinds`. Core fields (``loc``, ``lastmod``,
``changefreq``, ``priority``, feed ``link``/dates) count only as *direct* children of an
entry and outside the extension namespaces, so an ``image:loc`` never leaks out as a page
URL. Extension objects are gathered by :class:`~sitemap_reader.parse.gather.ExtensionGatherer`
and stored on the entry only at their end tag (a break inside one is ``extension-cut``).

Text is always gathered (expat's ``buffer_text`` plus a list) and joined at the end tag,
because entities, CDATA and chunk boundaries split character data into pieces. A field
being captured swallows nested markup (``<loc><url>…</url></loc>`` gives the inner text).
Entries leave as :mod:`sitemap_reader.parse.entry` shapes, appended to the sink's
``pending`` list.
"""

from __future__ import annotations

from typing import NoReturn

from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.entry import (
    ENTRY_SIZE,
    EXTRA,
    GUID,
    LASTMOD,
    LINK,
    LOC,
    PUBLISHED,
    TITLE,
    Sink,
    StopParsing,
)
from sitemap_reader.parse.gather import ExtensionGatherer
from sitemap_reader.parse.kinds import (
    E_ITEM,
    E_SITEMAP,
    ENTRIES,
    ENTRIES_FOR_ROOT,
    EXT_CONTAINERS,
    F_FEED_DATE,
    F_LASTMOD,
    F_LINK,
    F_LOC,
    F_TITLE,
    FEEDS,
    FIELDS,
    OTHER,
    X_IGNORED,
    X_MOBILE,
    X_PAGEMAP,
    X_XHTML,
    extension_of,
)


class ElementReader(ExtensionGatherer):
    """Expat's element handlers and the entry in progress; reports to a :class:`Sink`."""

    def __init__(
        self,
        sink: Sink,
        *,
        max_text: int,
        max_extensions: int,
        pagemaps: bool,
        max_token: int,
        max_depth: int,
        max_names: int,
        max_name_chars: int,
        max_namespaces: int,
    ) -> None:
        self._sink = sink
        self._pagemaps = pagemaps
        self._feed = False  # the root is an RSS or Atom feed
        self._last_attrs = None
        self._max_text = max_text
        self._overflow = "x" * (max_text + 1)
        self._max_ext = max_extensions
        self._buf: list[str] = []
        self._kinds: dict[str, int] = {}
        self._locals = {}
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
        self._ext_fields = {}
        self._v = [None] * ENTRY_SIZE
        # Looked up once: the handlers below use them for every element.
        self._clear = self._buf.clear
        self._pending = sink.pending
        self._scopes: list[tuple[int, str, str | None]] = []
        self._max_depth = max_depth
        self._depth = 0  # elements open (full handlers; a lite run is depth-neutral)
        self._bounded = BoundedExpat(
            sink,
            max_token=max_token,
            max_names=max_names,
            max_name_chars=max_name_chars,
            max_namespaces=max_namespaces,
        )
        self._parser = p = self._bounded.parser
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._buf.append

    @property
    def format(self) -> str | None:
        return self._format

    def flush_open_entry(self) -> None:
        """After a break, keep the entry in progress if a location of it was complete
        (a location being read when the body broke may be cut short: never emitted)."""
        entry = self._v
        if self._entry != OTHER and (entry[LOC] or entry[LINK] or entry[GUID]):
            if self._ext:  # never a half-read extension object: the URL goes without it
                self._sink.problem("extension-cut", "an extension object cut by the break dropped")
            self._finish_entry()
        self._entry = OTHER

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
        ext = extension_of(prefix, namespace)
        if ext == OTHER:
            kind = ENTRIES.get(local) or FIELDS.get(local, OTHER)
        elif ext == X_XHTML:
            kind = X_XHTML if local == "link" else OTHER
        elif ext == X_MOBILE:
            kind = X_MOBILE if local == "mobile" else X_IGNORED
        elif ext == X_PAGEMAP:
            kind = X_PAGEMAP if local == "pagemap" and self._pagemaps else X_IGNORED
        elif ext == X_IGNORED:
            kind = X_IGNORED
        else:
            kind = ext if local == EXT_CONTAINERS[ext] else OTHER
        self._kinds[name] = kind
        return kind

    def _too_deep(self) -> NoReturn:
        self._bounded.limit("limit-nesting", f"elements nested more than {self._max_depth} deep")

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
                self._bounded.new_namespace(prefix, value)
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
        self._feed = fmt in FEEDS
        self._entry_kinds = ENTRIES_FOR_ROOT[fmt]

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
