"""The prototype's Python side: the compiled core plugged into the existing parser, for
measurement and differential tests only (nothing in ``sitemap_reader`` imports this).

- :class:`NativeXmlReader` is an :class:`~sitemap_reader.parse.xml.XmlReader` whose
  bounded expat, element machine and text buffer are the C ``Core``; it keeps the
  reference's decoder and ampersand repair in front, and the reference's names,
  extension gatherer and bounds objects behind (called on rare branches). A body with an
  internal DTD subset is handed over, from its first byte, to the reference reader.
- :class:`NativeEmitter` is the parser's ``_Emitter`` with ``drain`` in C (``Drainer``),
  each step switchable (``flags``).
- :class:`NativeSitemapParser` is ``SitemapParser`` with both.

The extension is loaded from ``benchmarks/native/build/<variant>`` (``build.py``);
``SITEMAP_NATIVE_BUILD`` names another variant (``debug``, ``sanitize``).
"""

from __future__ import annotations

import codecs
import importlib.util
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import entry as entry_shape
from sitemap_reader.parse import extensions, kinds, normalize, parser, sniff
from sitemap_reader.parse.amp import AmpFixer
from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.chardata import TextBuffer
from sitemap_reader.parse.entry import LASTMOD, LINK, LOC, Sink, StopParsing, extra_of
from sitemap_reader.parse.gather import ExtensionGatherer
from sitemap_reader.parse.lite import MAX_CARRY
from sitemap_reader.parse.lite import entry_boundary as reference_boundary
from sitemap_reader.parse.names import TagNames
from sitemap_reader.parse.scope import in_location
from sitemap_reader.parse.text import TextReader
from sitemap_reader.parse.xml import XmlReader
from sitemap_reader.records import Alternate, Image, RecordBuilder, UrlRecord

HERE: Final = Path(__file__).resolve().parent


def load() -> Any:
    """The built extension module (``build.py`` first)."""
    variant = os.environ.get("SITEMAP_NATIVE_BUILD", "release")
    folder = HERE / "build" / variant
    found = sorted(folder.glob("_expatcore*.so")) + sorted(folder.glob("_expatcore*.pyd"))
    if not found:
        raise ImportError(f"no _expatcore in {folder}: run benchmarks/native/build.py")
    spec = importlib.util.spec_from_file_location("_expatcore", found[0])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


core: Any = load()
ALL: Final[int] = core.N_LOC | core.N_DATE | core.N_FIELDS | core.N_RECORD
#: Bytes read before the root element that are kept for a handover; past this the body
#: goes to the reference reader at once (a prolog this long is no real sitemap's).
MAX_PROLOG: Final = 1 << 20

# The C side hard-codes the kinds and entry slots: check they are still these.
assert (kinds.E_URL, kinds.E_SITEMAP, kinds.E_ITEM, kinds.F_LOC, kinds.F_TITLE) == (1, 2, 3, 10, 17)
assert (kinds.F_FEED_DATE, kinds.X_IMAGE, kinds.X_PAGEMAP, kinds.X_XHTML) == (-2, 20, 23, 24)
assert (kinds.X_MOBILE, entry_shape.ENTRY_SIZE, entry_shape.EXTRA) == (25, core.ENTRY_SIZE, 12)


def entry_boundary(data: bytes) -> int:
    """``lite.entry_boundary(data)``, with "</sitemap>" sought after the last "</url>" only
    (the same answer: the later of the two ends wins; ``reference_boundary`` is checked
    against it at import)."""
    url_end = data.rfind(b"</url>")
    sitemap_end = data.rfind(b"</sitemap>", max(url_end, 0))
    end = max(url_end + 6 if url_end >= 0 else 0, sitemap_end + 10 if sitemap_end >= 0 else 0)
    return len(data) if len(data) - end > MAX_CARRY else end


_SAMPLES = (b"", b"</url>", b"a</sitemap>b</url>c", b"</url></sitemap>", b"x" * 20_000,
            b"</sitemap>" + b"y" * 17_000, b"</url" + b"</sitemap>", b"</url>" * 3)  # fmt: skip
assert all(entry_boundary(x) == reference_boundary(x) for x in _SAMPLES)


class _Fixer(AmpFixer):
    """AmpFixer with its common case (nothing to repair) checked in C."""

    __slots__ = ()

    def _fix(self, data: bytes) -> bytes:
        if not self._in_cdata and core.amp_clean(data):
            return data
        return super()._fix(data)


class _Helpers:
    """The element machine's rare branches, as the reference writes them."""

    def __init__(self, sink: Sink, names: TagNames) -> None:
        self._sink = sink
        self._names = names

    def root_of(self, name: str) -> str:
        prefix, _, local = name.rpartition(":")
        fmt = self._sink.root(local.lower(), self._names.namespace(prefix))
        if fmt is None:
            raise StopParsing
        return fmt

    @staticmethod
    def atom_link(entry: list[Any], attrs: dict[str, str]) -> None:
        rel = attrs.get("rel", "alternate").strip().lower()
        if rel == "alternate" and entry[LINK] is None:
            entry[LINK] = attrs["href"]

    @staticmethod
    def set_mobile(entry: list[Any]) -> None:
        extra_of(entry)["mobile"] = True

    @staticmethod
    def finish_item(entry: list[Any]) -> None:
        entry[LOC] = entry[LINK] or entry[entry_shape.GUID]
        entry[LASTMOD] = entry[LASTMOD] or entry[entry_shape.PUBLISHED]
        if entry[entry_shape.TITLE]:
            extra_of(entry)["title"] = entry[entry_shape.TITLE]


class NativeXmlReader(XmlReader):
    """An XmlReader whose expat, element machine and text buffer are the C core."""

    #: Readers made, and handed over to the reference (for the differential runs).
    made = 0
    handed_over = 0

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
        self._options: dict[str, Any] = {
            "max_text": max_text, "max_extensions": max_extensions, "codec": codec,
            "pagemaps": pagemaps, "max_token": max_token, "depth_cap": depth_cap,
            "max_names": max_names, "max_name_chars": max_name_chars,
            "max_namespaces": max_namespaces,
        }  # fmt: skip
        self._sink = sink
        # The reference's objects for the rare branches (their pyexpat parser is unused).
        bounded = BoundedExpat(
            sink,
            max_token=max_token,
            max_names=max_names,
            max_name_chars=max_name_chars,
            max_namespaces=max_namespaces,
        )
        text = TextBuffer(sink, bounded, max_text=max_text)
        names = TagNames(bounded, pagemaps=pagemaps)
        gatherer = ExtensionGatherer(sink, text, names.locals, cap=max_extensions)
        self._core = core.Core(
            sink, names, gatherer, text, bounded, _Helpers(sink, names),
            max_text=max_text, max_token=max_token, depth_cap=depth_cap,
            max_names=max_names, max_name_chars=max_name_chars,
        )  # fmt: skip
        self._decoder = (
            codecs.getincrementaldecoder(codec)(errors="replace") if codec is not None else None
        )
        self._fixer = _Fixer()
        self._prolog: list[bytes] | None = []  # raw bytes until the root started
        self._prolog_size = 0
        self._carry = b""  # bytes after the last entry end, parsed with the next chunk
        self._reference: XmlReader | None = None
        NativeXmlReader.made += 1

    def _hand_over(self) -> XmlReader:
        """Read the body again from its first byte with the reference reader."""
        assert self._prolog is not None
        NativeXmlReader.handed_over += 1
        reference = XmlReader(self._sink, **self._options)
        self._reference = reference
        prolog, self._prolog = self._prolog, None
        reference.feed(b"".join(prolog))
        return reference

    def feed(self, data: bytes) -> None:
        if self._reference is not None:
            self._reference.feed(data)
            return
        if self._prolog is not None:
            self._prolog.append(data)
            self._prolog_size += len(data)
            if self._prolog_size > MAX_PROLOG:
                self._hand_over()
                return
        raw = data
        if self._decoder is not None:
            raw = self._decoder.decode(raw).encode()
        fixed = self._fixer.feed(raw)
        # Expat is handed the very slices the reference hands it (cut after the last entry
        # end, the rest carried): after the root's end tag, expat's verdict on junk depends
        # on where its input was cut (a name at a slice end is "junk after document
        # element", the same name whole "invalid token"), so identical problems need
        # identical slices. See NOTES.md (the epilog).
        if self._carry:
            fixed = self._carry + fixed
        end = entry_boundary(fixed)
        self._carry = fixed[end:]
        try:
            if end:
                self._core.parse(memoryview(fixed)[:end] if end < len(fixed) else fixed)
        except core.NeedsReference:
            self._hand_over()
            return
        if self._prolog is not None and self._core.root_started:
            self._prolog = None

    def flush(self) -> None:
        if self._reference is not None:
            self._reference.flush()
            return
        carry, self._carry = self._carry, b""
        try:
            if carry:
                self._core.parse(carry)
        except core.NeedsReference:
            self._hand_over()

    def flush_open_entry(self) -> None:
        if self._reference is not None:
            self._reference.flush_open_entry()
        else:
            self._core.flush_open_entry()

    def close(self) -> None:
        if self._reference is not None:
            self._reference.close()
            return
        fixer = self._fixer
        tail = fixer.feed(self._decoder.decode(b"", True).encode()) if self._decoder else b""
        try:
            self._core.parse(self._carry + tail + fixer.flush())
            self._carry = b""
            self._core.finish()
        except core.NeedsReference:
            self._hand_over().close()
            return
        for _ in range(fixer.repairs):
            self._sink.problem("xml-repaired", "a stray '&' or a broken reference kept as text")


class NativeTextReader(TextReader):
    """TextReader with its line loop in C (``text_lines``); the rest is the reference's."""

    def feed(self, data: bytes) -> None:
        # TextReader.feed, with the finditer loop handed to C
        if self._partial:
            data = self._partial + data
        end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if end == -1:
            self._partial = data
        else:
            self._partial = data[end + 1 :]
            start = 0
            if self._skipping:
                start = min(i for i in (data.find(b"\n"), data.find(b"\r")) if i != -1)
                self._skipping = False
            sink = self._sink
            started = core.text_lines(
                self._line, sink.text_started, sink.pending, sink.batch, sink.drain,
                data, start, end, self._started, self._max_line,
            )  # fmt: skip
            self._started = self._started or started  # (_line may have started it)
        if len(self._partial) > self._max_line * 4:
            self._partial = b""
            if not self._skipping:
                self._skipping = True
                self._too_long()


class _Funcs:
    """The reference's functions the C drain falls back to."""

    fast_url_match = staticmethod(normalize.fast_url_match)
    parse_lastmod = staticmethod(normalize.parse_lastmod)
    parse_changefreq = staticmethod(normalize.parse_changefreq)
    parse_priority = staticmethod(normalize.parse_priority)
    in_location = staticmethod(in_location)
    isoformat = staticmethod(datetime.fromisoformat)
    freqs = parser._FREQS
    prios = parser._PRIORITIES
    image_at = staticmethod(extensions.image_at)
    build_image = staticmethod(extensions.build_image)


class NativeEmitter(parser._Emitter):
    """The parser's emitter with ``drain`` in C; ``flags`` says which steps run in C."""

    def __init__(
        self,
        url: str | None,
        to_the_letter: bool,
        limits: Limits,
        now: datetime,
        build: RecordBuilder | None = None,
        *,
        flags: int = ALL,
    ) -> None:
        super().__init__(url, to_the_letter, limits, now, build)
        record = None
        if build is None:  # the plain builder: the same record, made in C
            record = (UrlRecord, now.timestamp(), None, False, None, None, Image, Alternate)
        self._drainer = core.Drainer(self, _Funcs, flags, record)

    def drain(self) -> None:
        self._drainer.drain()


class NativeSitemapParser(parser.SitemapParser):
    """SitemapParser with the C reader (``reader=True``) and the C drain (``flags``)."""

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
        reader: bool = True,
        flags: int | None = ALL,
    ) -> None:
        now = now or datetime.now(UTC)
        super().__init__(
            url, content_type, strict=strict, limits=limits, now=now, pagemaps=pagemaps,
            build=build,
        )  # fmt: skip
        self._native_reader = reader
        if flags is not None:
            self._emit = NativeEmitter(url, strict, self.limits, now, build, flags=flags)

    def _start_reader(self, kind: str, head: bytes) -> None:
        super()._start_reader(kind, head)
        if self._native_reader and type(self._reader) is TextReader:
            self._reader = NativeTextReader(self._emit, max_line=self.limits.max_url_length)
        if self._native_reader and type(self._reader) is XmlReader:
            limits = self.limits
            codec, _ = sniff.xml_codec(head, kind)
            self._reader = NativeXmlReader(
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
