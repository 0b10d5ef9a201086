"""The scanner: runs of plain ``<url>`` entries read by one regex, with no per-element
Python callback at all.

Theory of operation
-------------------
Most of a big urlset is entries of the one shape
``<url><loc>…</loc>[<lastmod>…</lastmod>][<changefreq>…</changefreq>][<priority>…</priority>]</url>``
(fields in protocol order, no attributes, comments, CDATA or prefixes). At the start of a
chunk that sits on an entry boundary (the XML reader cuts chunks after their last entry
end), :data:`RUN` matches the longest prefix made only of such entries; it stops at the
first entry that does not match (nothing is validated before trying), and the rest of
the chunk goes to the lite path or to expat as before.

The run's bytes are validated by construction: the text class excludes ``<``, C0
controls and every ``&`` but the five predefined entities (so never ``&#``, never an
entity expat would have to refuse); ``]]>``, U+FFFE/U+FFFF and invalid UTF-8 (a strict
decode) make the scanner give up on the chunk, so expat sees those bytes and reports
them. Values are then read as expat would hand them over: predefined entities replaced,
line breaks (CRLF, CR) normalized to LF, stripped. A run is read only where expat is at
rest (no tag, comment or PI open, no CDATA section open): the XML reader cuts chunks by
searching bytes, which may have found an entry end inside a comment.

Expat must still end up exactly where it would have been: the run is replaced by a
*blank* of the same bytes (every byte but CR and LF turned into a space) and fed to it.
That is character data inside the root, which expat consumes whole with no open token,
so the same line, the same byte offsets (the fixed-offset token and name checks of
:mod:`~sitemap_reader.parse.bounds` see every offset as before) and, when the run's last
line is ASCII, the same column (expat counts characters: a run whose last line is not
ASCII is not scanned). Guard conditions keep every bound's verdict unchanged: the root
is open (``depth >= 1``), two more levels fit under the depth cap, the run's tag names
are already interned (so the names count cannot change) and no name awaits its count
at a grid offset inside the run.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from sitemap_reader.parse.bounds import BoundedExpat
from sitemap_reader.parse.chardata import TextBuffer
from sitemap_reader.parse.entry import Sink
from sitemap_reader.parse.gather import ExtensionGatherer
from sitemap_reader.parse.kinds import X_IMAGE, extension_of
from sitemap_reader.parse.names import TagNames

#: Turn scanning off (tests compare it with the element handlers' reading).
ENABLED = True

_WS: Final = rb"[ \t\r\n]{0,1024}+"
# Field text: no markup, no C0 control, only predefined entities (an unrolled loop: an
# alternation per character is four times slower).
_CHAR: Final = rb"[^<&\x00-\x08\x0b\x0c\x0e-\x1f]"
_TEXT: Final = _CHAR + rb"*+(?:&(?:amp|lt|gt|quot|apos);" + _CHAR + rb"*+)*+"
_FIELDS: Final = (
    rb"(?:" + _WS + rb"<url>" + _WS + rb"<loc>" + _TEXT + rb"</loc>" + _WS
    + rb"(?:<lastmod>" + _TEXT + rb"</lastmod>" + _WS + rb")?"
    + rb"(?:<changefreq>" + _TEXT + rb"</changefreq>" + _WS + rb")?"
    + rb"(?:<priority>" + _TEXT + rb"</priority>" + _WS + rb")?"
)  # fmt: skip
#: A run of plain entries (the prefix of a chunk).
RUN: Final = re.compile(_FIELDS + rb"</url>)*+")
#: The same with images (the fat path): ``image:image`` blocks after the fields, each a
#: location, then maybe a title, then maybe a caption (used where the ``image`` prefix
#: names Google's image namespace).
RUN_IMAGES: Final = re.compile(
    _FIELDS
    + rb"(?:<image:image>" + _WS + rb"<image:loc>" + _TEXT + rb"</image:loc>" + _WS
    + rb"(?:<image:title>" + _TEXT + rb"</image:title>" + _WS + rb")?"
    + rb"(?:<image:caption>" + _TEXT + rb"</image:caption>" + _WS + rb")?"
    + rb"</image:image>" + _WS + rb")*+"
    + rb"</url>)*+"
)  # fmt: skip
# One entry of a validated run, over its decoded text (its images as one block).
_ENTRY: Final = re.compile(
    r"<url>\s*<loc>([^<]*)</loc>\s*(?:<lastmod>([^<]*)</lastmod>\s*)?"
    r"(?:<changefreq>([^<]*)</changefreq>\s*)?(?:<priority>([^<]*)</priority>\s*)?"
    r"((?:<image:image>.*?</image:image>\s*)*)</url>",
    re.DOTALL,
)
_IMAGE: Final = re.compile(
    r"<image:image>\s*<image:loc>([^<]*)</image:loc>\s*"
    r"(?:<image:title>([^<]*)</image:title>\s*)?"
    r"(?:<image:caption>([^<]*)</image:caption>\s*)?</image:image>"
)
# The lite path joins a field's text with the blank space before it (up to two runs of
# _WS): a value this much under the text cap is under it on every path.
_TEXT_SLACK: Final = 2 * 1024
_NAMES: Final = (("url", b"<url>"), ("loc", b"<loc>"), ("lastmod", b"<lastmod>"),
                 ("changefreq", b"<changefreq>"), ("priority", b"<priority>"),
                 ("image:image", b"<image:image>"), ("image:loc", b"<image:loc>"),
                 ("image:title", b"<image:title>"),
                 ("image:caption", b"<image:caption>"))  # fmt: skip
_NONCHARS: Final = (b"\xef\xbf\xbe", b"\xef\xbf\xbf", b"]]>")
_SHORTEST: Final = 32  # a run shorter than this is left to the other paths


@functools.cache
def _stretch(size: int) -> re.Pattern[bytes]:
    """Finds ``size`` bytes without markup: bytes bound characters, so a run without
    one holds no field text over ``size`` characters."""
    return re.compile(b"[^<]{%d}" % size)


def _unescape(text: str) -> str:
    return (
        text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&apos;", "'")
        .replace("&amp;", "&")
    )


class PlainScanner:
    """Reads the run of plain entries at the start of a chunk (see the module docstring).

    Its collaborators: ``bounded`` (the expat it keeps in step, and its bounds), ``names``
    (is ``image`` Google's image prefix here?), ``text`` (the text cap, and the buffer the
    blank lands in) and ``gatherer`` (the per-URL cap on images, counted as it counts
    them). ``depth_cap`` is the nesting bound a run must fit under. Entries go to ``sink``.
    """

    __slots__ = ("_bounded", "_depth_cap", "_gatherer", "_in_cdata", "_names", "_sink", "_text")

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
        self._text = text
        self._gatherer = gatherer
        self._depth_cap = depth_cap
        self._in_cdata = False  # a CDATA section is open (expat consumes its text as it goes)
        bounded.parser.StartCdataSectionHandler = self._cdata_start
        bounded.parser.EndCdataSectionHandler = self._cdata_end

    def _cdata_start(self) -> None:
        self._in_cdata = True

    def _cdata_end(self) -> None:
        self._in_cdata = False

    def scan(self, data: bytes, depth: int) -> int:
        """Read the run of plain entries at the start of ``data``, which starts between
        two entries of a sitemaps.org urlset with ``depth`` elements open; return the
        run's length in bytes (0: nothing was read, the caller parses all of ``data``)."""
        images = extension_of("image", self._names.namespace("image")) == X_IMAGE
        end = (RUN_IMAGES if images else RUN).match(data).end()  # type: ignore[union-attr]
        if end < _SHORTEST or depth < 1 or depth + 3 > self._depth_cap:
            return 0
        if self._in_cdata or not self._bounded.at_rest():
            return 0  # the run's bytes would be inside a CDATA section, comment or tag
        run = data[:end] if end < len(data) else data
        if any(bad in run for bad in _NONCHARS):
            return 0
        line = max(run.rfind(b"\n"), run.rfind(b"\r"))
        if not run[line + 1 :].isascii():
            return 0  # the column would not be the same
        if not self._bounded.names_settled([n for n, tag in _NAMES if tag in run], end):
            return 0
        try:
            text = run.decode()
        except UnicodeDecodeError:
            return 0
        if "\r" in text:
            breaks = run.count(b"\n") + run.count(b"\r") - run.count(b"\r\n")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        else:
            breaks = run.count(b"\n")
        limit = self._text.limit - _TEXT_SLACK
        if end > limit and (limit < 1 or _stretch(limit).search(run)):
            return 0  # a field may be over the text cap: expat decides
        found = _ENTRY.findall(text)
        # Expat reads a blank of the same line breaks and last-line length instead.
        self._bounded.skip(end, b"\n" * breaks + b" " * (len(run) - line - 1))
        self._text.pieces.clear()
        self._emit_run(found, "&" in text)
        return end

    def _emit_run(self, found: list[tuple[str, str, str, str, str]], entities: bool) -> None:
        sink = self._sink
        pending = sink.pending
        batch = sink.batch
        for loc, lastmod, changefreq, priority, images in found:
            if entities:  # rare but for the location (a query's "&amp;")
                if "&" in loc:
                    loc = _unescape(loc)
                if "&" in lastmod or "&" in changefreq or "&" in priority:
                    lastmod, changefreq, priority = map(_unescape, (lastmod, changefreq, priority))
            gathered = self._images(images, entities) if images else None
            loc = loc.strip()
            if not loc:
                sink.problem("missing-loc", "an entry without a location was skipped")
                continue
            # findall gives "" for an absent field, a present empty one is "" too: the
            # emitter treats both as no value. The slots are parse.entry's, in order
            # (a list display: the cheapest way to build one).
            pending.append(
                [loc, lastmod.strip(), changefreq.strip(), priority.strip(),
                 None, None, None, None, None, gathered, None, None, None]
            )  # fmt: skip
            if len(pending) >= batch:
                sink.drain()

    def _images(self, block: str, entities: bool) -> list[dict[str, str]]:
        """One entry's images as the element handlers gather them: the non-empty fields
        of each, up to the per-URL cap (each one past it counted)."""
        found: list[dict[str, str]] = []
        cap = self._gatherer.cap
        for parts in _IMAGE.findall(block):
            if entities:
                parts = tuple(map(_unescape, parts))
            fields = {}
            for name, value in zip(("loc", "title", "caption"), parts, strict=True):
                value = value.strip()
                if value:
                    fields[name] = value
            if len(found) < cap:
                found.append(fields)
            else:
                self._gatherer.over_cap("image:image")
        return found
