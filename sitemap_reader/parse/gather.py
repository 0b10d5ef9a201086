"""Gathering Google's extensions inside an entry: ``xhtml:link`` alternates, the Atom
``link``, and the raw fields of ``image:image``, ``video:video``, ``news:news`` and
PageMap objects (turned into records later by :mod:`sitemap_reader.parse.extensions`).

An extension object is gathered as raw fields and stored on the entry only at its end
tag: a body that breaks inside one never hands out a half-read object.
"""

from __future__ import annotations

from typing import Any

from sitemap_reader.parse.entry import ALTERNATES, EXTRA, IMAGES, LINK, NEWS, VIDEOS, Sink
from sitemap_reader.parse.kinds import (
    EXT_CONTAINERS,
    MULTI,
    OTHER,
    WITH_ATTRS,
    X_IMAGE,
    X_NEWS,
    X_PAGEMAP,
)


class ExtensionGatherer:
    """The extension part of the element state machine (a base of ElementReader, which
    owns the state declared here)."""

    _sink: Sink
    _v: list[Any]  # the entry in progress (parse.entry)
    _max_ext: int
    _ext: int  # the extension object being gathered (kinds.X_*), or OTHER
    _ext_name: str
    _ext_fields: dict[str, Any]
    _last_attrs: tuple[str, dict[str, str]] | None
    _locals: dict[str, str]  # qualified name -> lower-case local name

    def _text(self) -> str:  # pragma: no cover - implemented by ElementReader
        raise NotImplementedError

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
            if local in WITH_ATTRS:  # several, each with its own attributes
                last = self._last_attrs
                attrs = last[1] if last is not None and last[0] == name else {}
                self._ext_item(local, (text, attrs))
            elif text:
                if local in MULTI:
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
            self._over_cap(f"{EXT_CONTAINERS[kind]}:{EXT_CONTAINERS[kind]}")

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
