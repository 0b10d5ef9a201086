"""Gathering Google's extensions inside an entry: ``xhtml:link`` alternates and the raw
fields of ``image:image``, ``video:video``, ``news:news`` and PageMap objects (turned
into records later by :mod:`sitemap_reader.parse.extensions`).

The element machine (:mod:`~sitemap_reader.parse.elements`) owns the structure: it knows
which extension object is open and which end tag closes it, and it hands the
:class:`ExtensionGatherer` the events inside, with the kind of the object and the entry
in progress. The gatherer owns the content: the raw fields of the open object, stored on
the entry only at the object's end tag, so a body that breaks inside one never hands out
a half-read object.
"""

from __future__ import annotations

from typing import Any

from sitemap_reader.parse.chardata import TextBuffer
from sitemap_reader.parse.entry import ALTERNATES, IMAGES, NEWS, VIDEOS, PageEntry, Sink, extra_of
from sitemap_reader.parse.kinds import EXT_CONTAINERS, MULTI, WITH_ATTRS, X_IMAGE, X_NEWS, X_PAGEMAP


class ExtensionGatherer:
    """The open extension object's raw fields, and the per-URL cap on extensions.

    ``text`` holds the text of the element ending (its ``text()``: stripped; "" and a
    problem when over the text cap), ``local_names`` maps qualified names to lower-case
    local names (the classifier fills it), ``cap`` bounds the objects and repeated values
    per URL."""

    __slots__ = ("_fields", "_last_attrs", "_locals", "_sink", "_text", "cap")

    def __init__(
        self, sink: Sink, text: TextBuffer, local_names: dict[str, str], *, cap: int
    ) -> None:
        self._sink = sink
        self._text = text
        self._locals = local_names
        self.cap = cap
        self._fields: dict[str, Any] = {}  # of the open object; {} between objects
        # The last element inside the object with attributes, and them (WITH_ATTRS fields).
        self._last_attrs: tuple[str, dict[str, str]] | None = None

    def over_cap(self, what: str) -> None:
        """One more ``what`` than the per-URL cap allows was dropped."""
        self._sink.problem("limit-extensions", f"{what} past {self.cap} per URL dropped")

    def alternate(self, entry: PageEntry, attrs: dict[str, str]) -> None:
        """An ``xhtml:link`` of ``entry``."""
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
        alternates = entry[ALTERNATES]
        if alternates is None:
            alternates = entry[ALTERNATES] = []
        if len(alternates) < self.cap:
            alternates.append((lang, href))
        else:
            self.over_cap("xhtml:link")

    # -- inside an object (kind: kinds.X_*) -----------------------------------------------

    def child_attrs(self, kind: int, name: str, attrs: dict[str, str], entry: PageEntry) -> None:
        """An element with attributes started inside the open object."""
        local = self._locals.get(name) or name.rpartition(":")[2].lower()
        if kind == X_PAGEMAP:
            self._pagemap_start(local, attrs, entry)
            return
        self._last_attrs = (name, attrs)
        for key, value in attrs.items():
            self._fields[f"{local}@{key}"] = value

    def child_end(self, kind: int, name: str) -> None:
        """An element inside the open object ended: its text is one of its fields."""
        local = self._locals.get(name) or name.rpartition(":")[2].lower()
        if kind == X_PAGEMAP:
            self._pagemap_end(local)
            return
        text = self._text.text()
        if local in WITH_ATTRS:  # several, each with its own attributes
            last = self._last_attrs
            attrs = last[1] if last is not None and last[0] == name else {}
            self._item(local, (text, attrs))
        elif text:
            if local in MULTI:
                self._item(local, text)
            else:
                self._fields.setdefault(local, text)
        self._last_attrs = None

    def close(self, kind: int, entry: PageEntry) -> None:
        """The open object's end tag: store it on ``entry`` (up to the cap)."""
        fields = self._fields
        self._fields = {}
        self._last_attrs = None
        if kind == X_NEWS:
            entry[NEWS] = fields
            return
        if kind == X_PAGEMAP:
            objects = fields.get("objects")
            if objects:
                extra_of(entry).setdefault("pagemaps", []).extend(objects)
            return
        slot = IMAGES if kind == X_IMAGE else VIDEOS
        found = entry[slot]
        if found is None:
            found = entry[slot] = []
        if len(found) < self.cap:
            found.append(fields)
        else:
            self.over_cap(f"{EXT_CONTAINERS[kind]}:{EXT_CONTAINERS[kind]}")

    def _item(self, local: str, value: Any) -> None:
        """One more value of a repeatable field (tags, prices...), up to the cap."""
        values = self._fields.setdefault(local, [])
        if len(values) < self.cap:
            values.append(value)
        else:
            self.over_cap(local)

    # A PageMap is read as a list of DataObjects, each [type, id, [(name, value), ...]].

    def _pagemap_start(self, local: str, attrs: dict[str, str], entry: PageEntry) -> None:
        fields = self._fields
        if local == "dataobject":
            objects = fields.setdefault("objects", [])
            if len(objects) + len(extra_of(entry).get("pagemaps", ())) < self.cap:
                fields["current"] = [attrs.get("type"), attrs.get("id"), []]
                objects.append(fields["current"])
            else:
                self.over_cap("PageMap DataObject")
        elif local == "attribute":
            fields["attribute"] = (attrs.get("name"), attrs.get("value"))

    def _pagemap_end(self, local: str) -> None:
        fields = self._fields
        if local == "attribute":
            name, value = fields.pop("attribute", (None, None))
            # The value is the element's text; PageMaps in HTML put it in value="…",
            # which some sitemaps copy: used when there is no text.
            text = self._text.text() or value
            current = fields.get("current")
            if current is None or not name or text is None:
                self._sink.problem("pagemap-incomplete", "a PageMap Attribute without a name, "
                                   "value or DataObject ignored")  # fmt: skip
            elif len(current[2]) < self.cap:
                current[2].append((name, text.strip()))
            else:
                self.over_cap("PageMap Attribute")
        elif local == "dataobject":
            fields.pop("current", None)
