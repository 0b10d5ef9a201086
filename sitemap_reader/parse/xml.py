"""XML sitemaps and feeds on raw pyexpat: urlset, sitemapindex, RSS 2.0/1.0, Atom 1.0/0.3,
and Google's image, video, news, hreflang, mobile and PageMap extensions.

:class:`XmlReader` is the driver: it decodes a non-UTF-8 body, repairs stray ampersands
(:mod:`~sitemap_reader.parse.amp`), cuts chunks on entry boundaries and hands each to
the scanner (:mod:`~sitemap_reader.parse.scan`: a run of plain entries read by regex,
no callbacks), then what is left to the lite path (:mod:`~sitemap_reader.parse.lite`:
end-tag callbacks only) or to the full element state machine
(:mod:`~sitemap_reader.parse.elements`, with tag names resolved by
:mod:`~sitemap_reader.parse.names` and extension gathering in
:mod:`~sitemap_reader.parse.gather`), through the hardened, bounded expat parser of
:mod:`~sitemap_reader.parse.bounds`. The reader owns these parts side by side (none
inherits from another; each gets the others it needs in its constructor). Entries go to
a :class:`~sitemap_reader.parse.entry.Sink` in the shapes :mod:`~sitemap_reader.parse.entry`
names; the extension records are built by :mod:`~sitemap_reader.parse.extensions`.
"""

from __future__ import annotations

import codecs
import pyexpat

from sitemap_reader.parse import scan
from sitemap_reader.parse.amp import AmpFixer
from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.chardata import TextBuffer
from sitemap_reader.parse.elements import ElementMachine
from sitemap_reader.parse.entry import Sink
from sitemap_reader.parse.gather import ExtensionGatherer
from sitemap_reader.parse.kinds import ROOTS, SITEMAP_NS
from sitemap_reader.parse.lite import LITE_URLS, entry_boundary
from sitemap_reader.parse.names import TagNames
from sitemap_reader.parse.scan import PlainScanner

__all__ = ["ROOTS", "SITEMAP_NS", "XmlReader", "expat_message"]


class XmlReader:
    """Drives pyexpat over a byte stream and reports entries to a :class:`Sink`.

    It builds its parts and hands each its collaborators: the bounded expat, the text
    buffer, the tag names, the extension gatherer, the element machine and (unless
    :data:`scan.ENABLED` is off) the scanner. Each installs its own expat handlers; the
    reader itself handles no event, it only decides which part reads each chunk.
    """

    def __init__(
        self,
        sink: Sink,
        *,
        max_text: int,
        max_extensions: int,
        codec: str | None = None,
        pagemaps: bool = False,
        max_token: int = 64 * 1024,
        depth_cap: int = 100,
        max_names: int = 2_000,
        max_name_chars: int = 64 * 1024,
        max_namespaces: int = 1_000,
    ) -> None:
        self._sink = sink
        self._bounded = bounded = BoundedExpat(
            sink,
            max_token=max_token,
            max_names=max_names,
            max_name_chars=max_name_chars,
            max_namespaces=max_namespaces,
        )
        self._text = text = TextBuffer(sink, bounded, max_text=max_text)
        names = TagNames(bounded, pagemaps=pagemaps)
        gatherer = ExtensionGatherer(sink, text, names.locals, cap=max_extensions)
        self._elements = ElementMachine(sink, bounded, names, text, gatherer, depth_cap=depth_cap)
        self._scanner = (
            PlainScanner(sink, bounded, names, text, gatherer, depth_cap=depth_cap)
            if scan.ENABLED
            else None
        )
        # Non-UTF-8 bodies are decoded here and handed to expat as UTF-8 (see sniff).
        self._decoder = (
            codecs.getincrementaldecoder(codec)(errors="replace") if codec is not None else None
        )
        self._fixer = AmpFixer()
        self._carry = b""  # bytes after the last entry end, parsed with the next chunk

    def feed(self, data: bytes) -> None:
        """Parse a chunk. Raises ExpatError, defusedxml errors or StopParsing."""
        if self._decoder is not None:
            data = self._decoder.decode(data).encode()
        data = self._fixer.feed(data)
        if self._carry:
            data = self._carry + data
        elif self._elements.format is None and self._scanner is not None:
            # Before the root: the prolog, the root tag and the first entry (whose tag
            # names the scanner needs interned) go to expat alone, so that the entries
            # after them can be scanned (most real sitemaps are a chunk or two).
            first = data.find(b"</url>")
            if first > 0:
                self._parse(data[: first + 6])
                data = data[first + 6 :]
        # Cut after the last entry end: the next chunk then starts on an entry boundary,
        # where the lite path can take over.
        end = entry_boundary(data)
        self._carry = data[end:]
        if end:
            self._parse(data[:end] if end < len(data) else data)

    def _parse(self, data: bytes) -> None:
        # Between two entries of a urlset the scanner reads the run of plain entries the
        # chunk starts with; the lite path reads the rest if it is all plain entries,
        # expat with the full handlers anything else.
        elements = self._elements
        lite = elements.lite_grammar()
        if lite is LITE_URLS and self._scanner is not None:
            done = self._scanner.scan(data, elements.depth)
            if done:
                if done == len(data):
                    return
                data = data[done:]
        if lite is not None and lite.fullmatch(data):
            elements.read_lite(data)
        else:
            self._bounded.parse(data)
        self._text.bound()

    def flush(self) -> None:
        """Parse the bytes held back for the lite path (not the end of input).

        Called before a break that comes from outside the document (a gzip error, the
        byte cap): what was decoded before it is read first, in stream order, so the
        result is the same however the body was chunked."""
        carry, self._carry = self._carry, b""
        if carry:
            self._parse(carry)

    @property
    def root_end(self) -> tuple[int, int] | None:
        """Where the document's root element ends (line, column), once it did."""
        return self._elements.root_end

    def flush_open_entry(self) -> None:
        """After a break, keep the entry in progress if a location of it was complete."""
        self._elements.flush_open_entry()

    def close(self) -> None:
        """End of input: raises ExpatError if the document is unfinished."""
        fixer = self._fixer
        tail = fixer.feed(self._decoder.decode(b"", True).encode()) if self._decoder else b""
        self._bounded.parse(self._carry + tail + fixer.flush())
        self._carry = b""
        self._bounded.finish()
        # Reported only for a document read to its end: how far a broken one got before
        # it broke depends on chunk boundaries, and its fatal problem says enough.
        for _ in range(fixer.repairs):
            self._sink.problem("xml-repaired", "a stray '&' or a broken reference kept as text")


def expat_message(error: pyexpat.ExpatError) -> str:
    """``not well-formed (invalid token) at line 3, column 10``."""
    text = pyexpat.ErrorString(error.code) if error.code else str(error)
    return f"{text} at line {error.lineno}, column {error.offset}"
