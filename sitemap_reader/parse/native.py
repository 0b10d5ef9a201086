"""The compiled hot path of the parser, and which path is active.

The pure-Python parser (:mod:`~sitemap_reader.parse.xml`, :mod:`~sitemap_reader.parse.text`
and ``_Emitter.drain`` in :mod:`~sitemap_reader.parse.parser`) is the reference. When the
extension ``sitemap_reader.parse._native._expatcore`` was built (``pip install`` builds it
where it finds a compiler: ``hatch_build.py``) and ``SITEMAP_READER_NO_EXTENSIONS`` is not
set, :class:`~sitemap_reader.parse.parser.SitemapParser` reads with the parts here instead:

- :class:`NativeXmlReader`: an :class:`~sitemap_reader.parse.xml.XmlReader` whose bounded
  expat, element machine and text buffer are the C ``Core``. The C drives the very expat
  pyexpat uses (through pyexpat's C API capsule), so both paths see the same events. The
  reference's decoder, ampersand repair and entry-boundary carry stay in front (expat is
  handed the very slices the reference hands it), and the reference's names, extension
  gatherer and bounds objects behind, called from C on rare branches. A body with an
  internal DTD subset is read again from its first byte by the reference reader.
- :class:`NativeTextReader`: the text reader with its line loop in C.
- :func:`drainer`: ``_Emitter.drain`` in C, which hands every value off its fast paths to
  the reference's own functions.

Both paths give the same records, problems, limit verdicts and grouping per ``feed()``:
``tests/parse/test_native.py`` holds them to it. :func:`describe` names the active path
(``sitemap-reader --version``); :func:`using` switches it for tests and benchmarks.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from types import SimpleNamespace
from typing import Any, Final, Literal

from sitemap_reader.parse import entry as entry_shape
from sitemap_reader.parse import extensions, kinds, normalize
from sitemap_reader.parse.amp import AmpFixer
from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.chardata import TextBuffer
from sitemap_reader.parse.entry import LASTMOD, LINK, LOC, Sink, StopParsing, extra_of
from sitemap_reader.parse.gather import ExtensionGatherer
from sitemap_reader.parse.lite import MAX_CARRY
from sitemap_reader.parse.names import TagNames
from sitemap_reader.parse.scope import in_location
from sitemap_reader.parse.text import TextReader
from sitemap_reader.parse.xml import XmlReader
from sitemap_reader.records import Alternate, Image, RecordBuilder, UrlRecord

#: Set (to anything but the empty string) at run time: the pure-Python path; at build
#: time: no extension is compiled (the aiohttp/yarl convention).
ENV: Final = "SITEMAP_READER_NO_EXTENSIONS"
#: Bytes read before the root element that are kept for a handover; past this the body
#: goes to the reference reader at once (a prolog this long is no real sitemap's).
MAX_PROLOG: Final = 1 << 20


def _load() -> tuple[Any, str]:
    """The extension module (or None) and the words for the path."""
    if os.environ.get(ENV):
        return None, f"pure Python (forced: {ENV}={os.environ[ENV]})"
    try:
        from sitemap_reader.parse._native import _expatcore as core  # type: ignore[attr-defined]
    except ImportError as exc:  # not built (no compiler at install), or unloadable
        missing = isinstance(exc, ModuleNotFoundError) or "cannot import name" in str(exc)
        why = "not built at install" if missing else " ".join(str(exc).split())[:60]
        return None, f"pure Python (no compiled extension: {why})"
    # The C side hard-codes the kinds and entry slots: a mismatch leaves it unused.
    constants = (
        kinds.E_URL, kinds.E_SITEMAP, kinds.E_ITEM, kinds.F_LOC, kinds.F_TITLE,
        kinds.F_FEED_DATE, kinds.X_IMAGE, kinds.X_PAGEMAP, kinds.X_XHTML, kinds.X_MOBILE,
        entry_shape.ENTRY_SIZE, entry_shape.EXTRA,
    )  # fmt: skip
    if constants != (1, 2, 3, 10, 17, -2, 20, 23, 24, 25, core.ENTRY_SIZE, 12):
        return None, "pure Python (the compiled extension is out of date: reinstall)"
    expat = f"{core.EXPAT_MAJOR}.{core.EXPAT_MINOR}"
    return core, f"native (compiled, expat {expat} through pyexpat)"


_CORE, _WORDS = _load()
#: The extension module when it is built and usable, else None (whatever is active).
CORE: Final[Any] = _CORE
_active = CORE is not None


def active() -> bool:
    """Is the compiled path the one new parsers use?"""
    return _active


def describe() -> str:
    """The active path in words: starts with ``native`` or ``pure Python``."""
    if _active or CORE is None:
        return str(_WORDS)
    return "pure Python (switched by sitemap_reader.parse.native.using)"


@contextmanager
def using(path: Literal["native", "pure"]) -> Iterator[None]:
    """Parsers made inside read with this path (tests and benchmarks compare the two).
    Asking for ``native`` where the extension is absent raises RuntimeError."""
    global _active
    if path == "native" and CORE is None:
        raise RuntimeError(f"the compiled path is not available: {_WORDS}")
    before, _active = _active, path == "native"
    try:
        yield
    finally:
        _active = before


# --- the XML reader ------------------------------------------------------------------------


def entry_boundary(data: bytes) -> int:
    """``lite.entry_boundary(data)`` with "</sitemap>" sought after the last "</url>" only
    (the same answer: the later of the two ends wins; the test suite holds them equal)."""
    url_end = data.rfind(b"</url>")
    sitemap_end = data.rfind(b"</sitemap>", max(url_end, 0))
    end = max(url_end + 6 if url_end >= 0 else 0, sitemap_end + 10 if sitemap_end >= 0 else 0)
    return len(data) if len(data) - end > MAX_CARRY else end


class _Fixer(AmpFixer):
    """AmpFixer with its common case (nothing to repair) checked in C."""

    __slots__ = ()

    def _fix(self, data: bytes) -> bytes:
        if not self._in_cdata and CORE.amp_clean(data):
            return data
        return super()._fix(data)


class _Helpers:
    """The element machine's rare branches, as the reference writes them (called from C)."""

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
    """An XmlReader whose expat, element machine and text buffer are the C core (it keeps
    XmlReader's interface; none of XmlReader's own parts are built)."""

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
        self._core = CORE.Core(
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

    def _hand_over(self) -> XmlReader:
        """Read the body again from its first byte with the reference reader."""
        assert self._prolog is not None
        reference = XmlReader(self._sink, **self._options)
        self._reference = reference
        prolog, self._prolog = self._prolog, None
        reference.feed(b"".join(prolog))
        return reference

    @property
    def handed_over(self) -> bool:
        """Is the reference reader reading this body (an internal DTD subset)?"""
        return self._reference is not None

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
        # end, the rest carried), so every event and position is the reference's.
        if self._carry:
            fixed = self._carry + fixed
        end = entry_boundary(fixed)
        self._carry = fixed[end:]
        try:
            if end:
                self._core.parse(memoryview(fixed)[:end] if end < len(fixed) else fixed)
        except CORE.NeedsReference:
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
        except CORE.NeedsReference:
            self._hand_over()

    @property
    def root_end(self) -> tuple[int, int] | None:
        if self._reference is not None:
            return self._reference.root_end
        end: tuple[int, int] | None = self._core.root_end
        return end

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
        except CORE.NeedsReference:
            self._hand_over().close()
            return
        for _ in range(fixer.repairs):
            self._sink.problem("xml-repaired", "a stray '&' or a broken reference kept as text")


# --- the text reader ------------------------------------------------------------------------


class NativeTextReader(TextReader):
    """TextReader with its line loop in C; lines off the loop's fast path (junk, scheme-less
    hosts, long or non-ASCII lines) go to the reference's ``_line``."""

    def _lines(self, data: bytes, start: int, end: int) -> None:
        sink = self._sink
        started = CORE.text_lines(
            self._line, sink.text_started, sink.pending, sink.batch, sink.drain,
            data, start, end, self._started, self._max_line,
        )  # fmt: skip
        self._started = self._started or started  # (_line may have started it)


# --- the drain --------------------------------------------------------------------------------

_FUNCS: SimpleNamespace | None = None


def drainer(
    emitter: Sink,
    build: RecordBuilder | None,
    now: datetime,
    freqs: dict[str, str],
    prios: dict[str, float | None],
) -> Callable[[], None]:
    """``_Emitter.drain`` in C for this emitter. With the plain builder (``build`` None) the
    C makes the records itself (the same default score, the same float operations);
    otherwise it calls ``build`` for each."""
    global _FUNCS
    if _FUNCS is None:  # the reference's functions the C falls back to
        _FUNCS = SimpleNamespace(
            fast_url_match=normalize.fast_url_match,
            parse_lastmod=normalize.parse_lastmod,
            parse_changefreq=normalize.parse_changefreq,
            parse_priority=normalize.parse_priority,
            in_location=in_location,
            isoformat=datetime.fromisoformat,
            freqs=freqs,
            prios=prios,
            image_at=extensions.image_at,
            build_image=extensions.build_image,
        )
    record = None
    if build is None:
        record = (UrlRecord, now.timestamp(), None, False, None, None, Image, Alternate)
    flags = CORE.N_LOC | CORE.N_DATE | CORE.N_FIELDS | CORE.N_RECORD
    drain: Callable[[], None] = CORE.Drainer(emitter, _FUNCS, flags, record).drain
    return drain
