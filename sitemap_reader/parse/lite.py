"""The lite path: a run of plain entries read from end tags alone.

Most of a big sitemap is runs of plain entries (``<url>`` holding bare ``<loc>``,
``<lastmod>``, ``<changefreq>``, ``<priority>``). The XML reader cuts chunks after their
last entry end; a chunk that starts on an entry boundary and matches that grammar exactly
(one regex, in C) is read with no start handler at all, from end tags alone: half the
Python callbacks, and by construction the same records and problems as the full reading.
Measured worth 13-44 % of the whole parser on plain files (engineering notes, 5.2).
"""

from __future__ import annotations

import re
from typing import Final

from sitemap_reader.parse.elements import ElementReader
from sitemap_reader.parse.entry import LOC
from sitemap_reader.parse.kinds import E_SITEMAP, E_URL, F_LOC, OTHER, extension_of

#: A run of complete entries made only of bare fields (no attributes, prefixes, comments,
#: CDATA or markup in text, text runs bounded): what most of every big sitemap is.
LITE_URLS: Final = re.compile(
    rb"(?:\s*+<url>(?:\s*+<(loc|lastmod|changefreq|priority)>[^<]{0,8192}+</\1>)*+\s*+</url>)*+\s*+"
)
LITE_SITEMAPS: Final = re.compile(
    rb"(?:\s*+<sitemap>(?:\s*+<(loc|lastmod)>[^<]{0,8192}+</\1>)*+\s*+</sitemap>)*+\s*+"
)
#: Bytes held back after the last entry end so that the next chunk starts on an entry
#: boundary; past this, the bytes go to expat at once (no lite path for that stretch).
MAX_CARRY: Final = 16 * 1024


def entry_boundary(data: bytes) -> int:
    """Where to cut ``data`` so that the rest starts on an entry boundary: just after its
    last ``</url>`` or ``</sitemap>``, the whole length when that leaves too much."""
    # (rfind gives -1 when absent: -1 + 6 would cut after the chunk's fifth byte.)
    url_end, sitemap_end = data.rfind(b"</url>"), data.rfind(b"</sitemap>")
    end = max(url_end + 6 if url_end >= 0 else 0, sitemap_end + 10 if sitemap_end >= 0 else 0)
    return len(data) if len(data) - end > MAX_CARRY else end


class LiteReader(ElementReader):
    """The element reader with the lite path (see the module docstring)."""

    def _lite_pattern(self) -> re.Pattern[bytes] | None:
        """The lite grammar for where the document stands, or None (read in full)."""
        if self._entry or self._field or self._ext or self._scopes:
            return None
        if extension_of("", self._prefixes.get("", "")) != OTHER:
            return None
        return (
            LITE_URLS
            if self._format == "urlset"
            else (LITE_SITEMAPS if self._format == "sitemapindex" else None)
        )

    def _parse_lite(self, data: bytes) -> None:
        """Read a run of plain entries with end-tag events only (half the callbacks).

        ``data`` matched the lite grammar, so every start tag it holds is a bare entry or
        field tag and every text is whitespace or a field's value: the end handler alone
        reconstructs exactly what the full handlers would. The entry in progress is
        presumed open throughout, so a break inside the run is flushed as it would be.
        """
        parser = self._parser
        self._entry = E_SITEMAP if self._format == "sitemapindex" else E_URL
        self._entry_name = "sitemap" if self._entry == E_SITEMAP else "url"
        parser.StartElementHandler = None
        parser.EndElementHandler = self._end_lite
        try:
            self._bounded.parse(data)
        finally:
            parser.StartElementHandler = self._start
            parser.EndElementHandler = self._end
        self._entry = OTHER

    def _end_lite(self, name: str) -> None:
        # The field branch repeats _end's on purpose: a shared helper would cost a call
        # per field on the hottest path. The grammar leaves no bare text to an entry.
        if name == self._entry_name:
            self._finish_entry()
        else:
            text = "".join(self._buf)
            text = self._text() if len(text) > self._max_text else text.strip()
            kind = self._kinds.get(name)
            if kind is None:
                kind = self._classify(name)
            entry = self._v
            index = kind - F_LOC
            if entry[index] is None:
                entry[index] = text
            elif index == LOC:
                self._another_loc(text)
        self._clear()
