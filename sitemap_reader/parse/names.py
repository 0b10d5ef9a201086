"""What a tag name means where it stands: the namespace prefixes in scope, and the kind
(:mod:`~sitemap_reader.parse.kinds`) and lower-case local name of every qualified name.

Expat runs without namespace processing (see :mod:`~sitemap_reader.parse.elements`):
tags arrive as qualified names (``image:loc``) and :class:`TagNames` resolves their
prefixes from the ``xmlns`` attributes the element machine hands it. Declarations on the
root hold for the whole document. One on a nested element (PageMap's ``xmlns="…"`` on
every ``<PageMap>``) holds until that element ends: it is recorded with the depth of the
element that made it, and undone when the machine reports an element of that depth
closed (:meth:`TagNames.close`). Only while such a declaration is open does the machine
report ends at all, so the common document pays nothing for it.

A name is classified once: the kind goes to :attr:`TagNames.kinds`, which the element
handlers read directly (a dict lookup per element), and the cache is emptied whenever a
declaration changes what a prefix means.
"""

from __future__ import annotations

from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.kinds import (
    ENTRIES,
    EXT_CONTAINERS,
    FIELDS,
    OTHER,
    X_IGNORED,
    X_MOBILE,
    X_PAGEMAP,
    X_XHTML,
    extension_of,
)

_XML_NS = "http://www.w3.org/XML/1998/namespace"


class TagNames:
    """The prefixes in scope and the classification of tag names (see the module
    docstring); declarations are counted against the namespace bound of ``bounded``."""

    __slots__ = ("_bounded", "_pagemaps", "_prefixes", "_scopes", "kinds", "locals")

    def __init__(self, bounded: BoundedExpat, *, pagemaps: bool) -> None:
        self._bounded = bounded
        self._pagemaps = pagemaps  # PageMap objects are gathered (else ignored)
        self._prefixes: dict[str, str] = {"xml": _XML_NS}
        # The nested declarations open: (depth of the declaring element, prefix, the
        # namespace it had before, None when it had none).
        self._scopes: list[tuple[int, str, str | None]] = []
        #: Qualified name -> kind, for the names classified since the last declaration.
        self.kinds: dict[str, int] = {}
        #: Qualified name -> lower-case local name (``image:Loc`` -> ``loc``).
        self.locals: dict[str, str] = {}

    def namespace(self, prefix: str) -> str:
        """The namespace ``prefix`` names here ("" when undeclared; "" is the default)."""
        return self._prefixes.get(prefix, "")

    @property
    def scoped(self) -> bool:
        """Is a declaration made on a nested element still open?"""
        return bool(self._scopes)

    def classify(self, name: str) -> int:
        """The kind of the qualified ``name`` here (cached in :attr:`kinds`)."""
        prefix, _, local = name.rpartition(":")
        local = local.lower()
        self.locals[name] = local
        ext = extension_of(prefix, self._prefixes.get(prefix, ""))
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
        self.kinds[name] = kind
        return kind

    def declare(self, attrs: dict[str, str], depth: int) -> bool:
        """Take the namespace declarations among the attributes of an element at
        ``depth`` (1: the root). True when this opened the first nested declaration:
        the caller reports element ends to :meth:`close` from then on."""
        opened = False
        for key, value in attrs.items():
            if key.startswith("xmlns"):
                prefix = key[6:]
                old = self._prefixes.get(prefix)
                if old == value:
                    continue
                self._bounded.new_namespace(prefix, value)
                if depth > 1:  # not the root: holds until this element ends
                    opened = opened or not self._scopes
                    self._scopes.append((depth, prefix, old))
                self._prefixes[prefix] = value
                self.kinds.clear()
        return opened

    def close(self, depth: int) -> bool:
        """An element at ``depth`` ended: undo the declarations it made. True when no
        nested declaration is open any more (ends need not be reported)."""
        scopes = self._scopes
        while scopes and scopes[-1][0] == depth:
            _, prefix, old = scopes.pop()
            if old is None:
                del self._prefixes[prefix]
            else:
                self._prefixes[prefix] = old
            self.kinds.clear()
        return not scopes
