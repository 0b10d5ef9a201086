"""The hardened pyexpat parser and the markup bounds measured on it.

Hardening: the handlers defusedxml installs are installed here too and raise defusedxml's
own exceptions at declaration time: entity declarations (billion laughs, quadratic blowup,
XXE, parameter entities) and external entity references are refused, so nothing is ever
expanded, read or fetched. A DOCTYPE alone is harmless and allowed, as in defusedxml.

Bounds: expat keeps every open element and every distinct name, and before 2.6 it rescans
an unfinished token on every ``Parse()``; each of these is bounded (``Limits.max_xml_*``)
and ends the document with a ``limit-*`` problem. The token and names bounds are measured
at fixed offsets of the stream (every ``max_xml_token`` bytes handed to expat: see
:meth:`BoundedExpat.parse`), the depth and namespace bounds in the element handlers, so
every verdict depends on the document alone, never on how it was chunked.
"""

from __future__ import annotations

import itertools
import pyexpat
from typing import Any, NoReturn

from defusedxml import EntitiesForbidden, ExternalReferenceForbidden

from sitemap_reader.parse.entry import Sink, StopParsing


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


class BoundedExpat:
    """One pyexpat parser, hardened, fed through :meth:`parse` so that the token and
    names bounds are measured at fixed offsets; the element handlers are the reader's."""

    __slots__ = (
        "_fed",
        "_grid",
        "_max_names",
        "_max_namespaces",
        "_max_token",
        "_name_chars",
        "_names",
        "_names_seen",
        "_namespaces",
        "_sink",
        "_skew",
        "parser",
    )

    def __init__(
        self,
        sink: Sink,
        *,
        max_token: int,
        max_names: int,
        max_name_chars: int,
        max_namespaces: int,
    ) -> None:
        self._sink = sink
        self._max_token = max_token
        self._max_names = max_names
        self._name_chars = max_name_chars  # budget left for new distinct names
        self._max_namespaces = max_namespaces
        # pyexpat interns every element and attribute name it hands out (DTD names too,
        # with the declaration handlers set) in this dict: its size is the count of
        # distinct names, measured at no cost to the handlers.
        self._names: dict[str, str] = {}
        self._names_seen = 0  # len(self._names) at the last measure
        self._namespaces: set[int] = set()  # hashes of (prefix, URI) declared
        self._fed = 0  # bytes handed to expat so far
        self._grid = max_token  # next offset at which the open token is measured
        # Document bytes not handed to expat (stood for by a shorter blank, see skip()):
        # expat's byte index plus this is the document offset.
        self._skew = 0
        self.parser = self._make_parser()

    def _make_parser(self) -> Any:
        # Expat is told the bytes are UTF-8 whatever the prolog declares: they are, either
        # as sent (sniff found UTF-8 or ASCII) or transcoded by the reader. Left to read
        # the declaration itself, expat would look up any name it finds there and raise a
        # LookupError (through pyexpat) on an unknown one.
        p = pyexpat.ParserCreate("utf-8", intern=self._names)
        # Expat 2.6 (CPython 3.12.3+) defers reparsing an unfinished token until enough
        # bytes came: when a token is complete would then follow the chunking, and with
        # it the bounds measured at fixed offsets. The fixed-offset grid already bounds
        # the rescans deferral exists to prevent.
        if hasattr(p, "SetReparseDeferralEnabled"):
            p.SetReparseDeferralEnabled(False)
        p.buffer_text = True
        p.buffer_size = 65536
        p.EntityDeclHandler = _forbid_entity
        p.UnparsedEntityDeclHandler = _forbid_unparsed
        p.ExternalEntityRefHandler = _forbid_external
        # Names declared in a DTD live in expat's tables too: with a handler set, pyexpat
        # interns them, so they are counted like tag names.
        p.ElementDeclHandler = _ignore
        p.AttlistDeclHandler = _ignore
        return p

    def parse(self, data: bytes | memoryview) -> None:
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
            self.parser.Parse(data, False)
            self._fed = end
            return
        view = memoryview(data)
        while self._fed + len(view) >= self._grid:
            cut = self._grid - self._fed
            self.parser.Parse(view[:cut], False)
            self._fed = self._grid
            self._grid += self._max_token
            view = view[cut:]
            self._measure()
        if view:
            self.parser.Parse(view, False)
            self._fed += len(view)

    @property
    def fed(self) -> int:
        """Document bytes handed to expat so far (the offset where the next ones start)."""
        return self._fed

    def event_offset(self) -> int:
        """The document offset of the event being handled (call it from a handler)."""
        index: int = self.parser.CurrentByteIndex
        return index + self._skew

    def at_rest(self) -> bool:
        """Has expat consumed everything handed to it (no tag, comment, PI open)?"""
        index: int = self.parser.CurrentByteIndex
        return index + self._skew == self._fed

    def skip(self, size: int, blank: bytes) -> None:
        """``size`` bytes of the document were read elsewhere (the scanner): expat gets
        ``blank``, character data of the same line breaks and last-line length. The
        caller has checked (:meth:`names_settled`) that no verdict can fall due at a
        grid offset inside them: no token is open there, no name awaits its count."""
        self.parser.Parse(blank, False)
        self._skew += size - len(blank)
        self._fed += size
        while self._grid <= self._fed:
            self._grid += self._max_token

    def finish(self) -> None:
        """End of input: raises ExpatError if the document is unfinished."""
        self.parser.Parse(b"", True)

    def _measure(self) -> None:
        """The bounds checked at each grid offset: the open token, distinct names."""
        if len(self._names) != self._names_seen:
            self._count_names()
        parser = self.parser
        start = parser.CurrentByteIndex
        if start >= 0 and self._fed - (start + self._skew) > self._max_token:
            where = f"line {parser.CurrentLineNumber}, column {parser.CurrentColumnNumber}"
            self.limit(
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
            self.limit(
                "limit-names",
                f"more than {self._max_names} distinct element and attribute names "
                "(or more than their characters' budget) in one document",
            )

    def names_settled(self, names: list[str], ahead: int) -> bool:
        """Would the next ``ahead`` bytes, holding only these (tag) names, leave every
        names verdict as it is? Each must be interned already; then the count due at a
        grid offset within them is known now (no name can arrive before it): done here
        when it passes, refused (False) when it would end the document there."""
        known = self._names
        if not all(name in known for name in names):
            return False
        if len(known) != self._names_seen and self._fed + ahead >= self._grid:
            fresh = len(known) - self._names_seen
            chars = sum(map(len, itertools.islice(reversed(known), fresh)))
            if len(known) > self._max_names or self._name_chars - chars < 0:
                return False
            self._count_names()
        return True

    def new_namespace(self, prefix: str, uri: str) -> None:
        """A namespace declaration: counted, up to the cap (distinct pairs only)."""
        key = hash((prefix, uri))  # a hash, not the URI: the set stays small
        if key not in self._namespaces:
            if len(self._namespaces) >= self._max_namespaces:
                self.limit(
                    "limit-namespaces",
                    f"more than {self._max_namespaces} namespace declarations in one document",
                )
            self._namespaces.add(key)

    def limit(self, code: str, message: str) -> NoReturn:
        """A markup bound was crossed: the document ends here."""
        self._sink.problem(code, message, fatal=True)
        raise StopParsing(code)
