"""The lite path's grammar: which chunks are a run of plain entries, read from end tags
alone, and where to cut the stream so that chunks start on an entry boundary.

Most of a big sitemap is runs of plain entries (``<url>`` holding bare ``<loc>``,
``<lastmod>``, ``<changefreq>``, ``<priority>``). The XML reader cuts chunks after their
last entry end (:func:`entry_boundary`); a chunk that starts on an entry boundary and
matches that grammar exactly (one regex, in C) is read with no start handler at all, from
end tags alone: half the Python callbacks, and by construction the same records and
problems as the full reading. Measured worth 13-44 % of the whole parser on plain files
(engineering notes, 5.2). The reading itself is the element machine's, in a reduced mode
(:meth:`~sitemap_reader.parse.elements.ElementMachine.read_lite`): it fills the same
entry in progress, so a break inside a run is flushed like any other.
"""

from __future__ import annotations

import re
from typing import Final

from sitemap_reader.parse.kinds import OTHER, extension_of

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


def grammar_for(fmt: str | None, default_namespace: str) -> re.Pattern[bytes] | None:
    """The lite grammar of a document of format ``fmt`` (a sitemaps.org urlset or index
    whose default namespace is not an extension's), or None: read in full."""
    if extension_of("", default_namespace) != OTHER:
        return None
    return LITE_URLS if fmt == "urlset" else (LITE_SITEMAPS if fmt == "sitemapindex" else None)
