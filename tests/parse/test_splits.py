"""The same bytes give the same records, however they arrive.

A body reaches the parser in whatever pieces the network, gzip and the buffers make. Its
records, problems (code, count, message, fatal) and limit verdicts must not depend on
the cuts: every piece boundary is checked for small documents (every 2-piece split, and
one byte at a time), random splits (1-byte pieces among them) for large ones, around
the edges where state used to be carried across ``feed()`` calls: the sniffing window
(1 KiB), byte order marks, a character reference held back by the ampersand repair, the
decompressed-bytes cap, and an HTML site map page's start and its token bound.

``make test`` runs a bounded number of Hypothesis examples; ``make test-slow`` runs the
properties again with many more (marked slow).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import native
from sitemap_reader.parse.html import HtmlLinks
from sitemap_reader.parse.parser import SitemapParser
from sitemap_reader.parse.sniff import SNIFF_BYTES
from sitemap_reader.records import UrlRecord
from tests.parse.test_fuzz import documents, hostile_markup, mutated

NOW = datetime(2026, 1, 1, tzinfo=UTC)
URL = "https://e.com/sitemap.xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
BOM = b"\xef\xbb\xbf"
Outcome = tuple[Any, ...]


def parsed(pieces: Sequence[bytes], limits: Limits | None = None) -> Outcome:
    """Everything a SitemapParser says about a body fed in ``pieces``."""
    parser = SitemapParser(URL, limits=limits, now=NOW, pagemaps=True)
    items = []
    for piece in pieces:
        items.extend(parser.feed(piece))
        if parser.done:
            break
    items.extend(parser.close())
    problems = [(p.code, p.count, p.fatal, p.message) for p in parser.problems]
    return parser.format, items, problems, parser.complete, parser.lastmod


def _record(url: str, *rest: Any) -> UrlRecord:
    return UrlRecord(url, sitemap=rest[3])


def page_links(pieces: Sequence[bytes], limits: Limits | None = None) -> Outcome:
    """Everything an HTML site map page's reader says about a page fed in ``pieces``."""
    page = HtmlLinks("https://e.com/plan", None, limits=limits or Limits(), build=_record)
    items = []
    for piece in pieces:
        items.extend(page.feed(piece))
        if page.done:
            break
    items.extend(page.close())
    problems = [(p.code, p.count, p.message) for p in page.problems]
    return page.format, items, problems, page.complete, sorted(page.links)


def cuts(body: bytes, every: bool, positions: Sequence[int] = ()) -> list[list[bytes]]:
    """The ways a body is cut: into two at every byte (``every``) or at ``positions``,
    one byte at a time, and in a few odd fixed sizes around the sniffing window."""
    at = range(1, len(body)) if every else sorted({p % (len(body) + 1) for p in positions})
    ways = [[body[:i], body[i:]] for i in at]
    sizes = (1, 3, 7, SNIFF_BYTES - 1, SNIFF_BYTES + 1, 4096)
    ways.extend([body[i : i + size] for i in range(0, len(body), size)] for size in sizes)
    return ways


def same_whatever_the_cuts(
    read: Callable[[Sequence[bytes], Limits | None], Outcome],
    body: bytes,
    limits: Limits | None = None,
    positions: Sequence[int] = (),
) -> Outcome:
    """The outcome of ``body`` read whole, asserted equal for every way of cutting it."""
    whole = read([body], limits)
    for pieces in cuts(body, every=len(body) <= 1500, positions=positions):
        assert read(pieces, limits) == whole, [len(p) for p in pieces][:4]
    return whole


# --------------------------------------------------------------------------- the classes


def test_two_byte_order_marks_mean_one_whatever_the_cuts() -> None:
    """Two marks before a urlset whose body passes the sniffing window: read whole, it was
    'not a sitemap' (one mark stripped, the second taken for text); with a 10-byte first
    piece, a urlset (the held head was stripped again). Every mark and blank before the
    first real byte is stripped now: a urlset of one URL, whatever the cuts."""
    body = BOM * 2 + b"<urlset><url><loc>https://e.com/a</loc></url><!-- " + b"x" * 3000
    body += b" --></urlset>"
    fmt, items, _, complete, _ = same_whatever_the_cuts(parsed, body, positions=range(1, 40))
    assert (fmt, [i.url for i in items], complete) == ("urlset", ["https://e.com/a"], True)
    assert parsed([body[:10], body[10:]])[:2] == (fmt, items)


def test_a_character_reference_cut_by_a_piece_boundary() -> None:
    """``&#x`` + 2,000 zeros + ``41;``: read whole it was ``A``, cut at byte 1,024 a bare
    ``&`` repaired (the repair held a reference back only 64 bytes). A reference has at
    most 60 digits now, the same verdict either way: past them its ``&`` is text."""
    long = f"<urlset {NS}><url><loc>https://e.com/&#x{'0' * 2000}41;</loc></url></urlset>"
    _, items, problems, _, _ = same_whatever_the_cuts(
        parsed, long.encode(), positions=range(1000, 1100)
    )
    assert [i.url for i in items] == ["https://e.com/&"]  # the "#" starts a fragment
    assert [p[0] for p in problems] == ["xml-repaired"]
    short = f"<urlset {NS}><url><loc>https://e.com/&#x{'0' * 56}41;</loc></url></urlset>"
    assert [i.url for i in same_whatever_the_cuts(parsed, short.encode())[1]] == ["https://e.com/A"]


def test_the_byte_cap_cuts_at_the_same_byte() -> None:
    """max_decompressed_bytes: the piece that crossed the cap was dropped whole, so what
    was read depended on where the pieces ended (whole: nothing). The bytes before the
    cap are read now, then the body ends, however it came."""
    urls = "".join(f"<url><loc>https://e.com/{i}</loc></url>" for i in range(80))
    body = f"<urlset {NS}>{urls}</urlset>".encode()
    limits = Limits(max_decompressed_bytes=1500)
    fmt, items, problems, complete, _ = same_whatever_the_cuts(
        parsed, body, limits, range(0, 3100, 7)
    )
    assert fmt == "urlset" and not complete and len(items) == 38  # the 38 before the cap
    assert problems[0][:3] == ("limit-bytes", 1, True)
    text = b"".join(b"https://e.com/%d\n" % i for i in range(200))
    assert len(same_whatever_the_cuts(parsed, text, limits, range(0, 3000, 11))[1]) > 0


def test_an_html_page_after_a_long_blank_start() -> None:
    """An HTML site map page after 1,500 blank bytes: whole, its links; from the second
    piece on, 'not an HTML page' (the first 1,024 raw bytes were all blank)."""
    body = b" " * 1500 + b"<html><a href='/a'>A</a></html>"
    fmt, items, _, complete, _ = same_whatever_the_cuts(page_links, body)
    assert (fmt, [i.url for i in items], complete) == ("html", ["https://e.com/a"], True)


def test_an_html_pages_token_bound_does_not_follow_the_pieces() -> None:
    """max_html_token: a comment longer than the bound passed whole (html.parser had it
    complete) and tripped the bound when cut (it sat unfinished between two pieces). The
    page's text goes to html.parser in fixed blocks now: the same verdict either way."""
    body = b"<html><!--" + b"c" * 1500 + b"--><a href='/a'>A</a></html>"
    limits = Limits(max_html_token=100)
    outcome = same_whatever_the_cuts(page_links, body, limits)
    again = same_whatever_the_cuts(page_links, body)
    assert [i.url for i in again[1]] == ["https://e.com/a"] and again[3]
    assert outcome[0] == "html"


def test_junk_after_the_root_is_said_the_same_way() -> None:
    """20,000 bytes of junk after the root: read whole, expat said "invalid token at
    column 20106"; in 7-byte pieces "junk after document element at column 106" (its
    words follow how much of a token one Parse() saw). Junk after the root is said at
    the root's end tag now, whatever the pieces."""
    body = f"<urlset {NS}><url><loc>https://e.com/a</loc></url></urlset>".encode()
    body += b"x" * 20_000 + b"/y"
    _, items, problems, complete, _ = same_whatever_the_cuts(parsed, body, positions=[97, 4096])
    assert [i.url for i in items] == ["https://e.com/a"] and not complete
    assert problems == [
        (
            "xml-syntax",
            1,
            True,
            "junk after document element, whose end tag is at line 1, column 97",
        )
    ]


def test_a_field_at_the_text_cap_after_blanks() -> None:
    """A location exactly at the text cap, its entry indented: when the lite path (end
    tags only) read its entry, the blanks before its start tags counted toward the cap
    and it was dropped as too long; read by the full handlers (or the compiled path) it
    was kept, so the verdict followed the chunking (found by the compiled path's
    differential fuzzing). The field's own text is measured on every path now."""
    limits = Limits(max_text_length=64)
    at_cap = "https://e.com/" + "a" * 50
    entries = "".join(f"<url>\n  <loc>https://e.com/{i}</loc>\n</url>\n" for i in range(30))
    body = f"<urlset {NS}>\n{entries}<url>\n  <loc>{at_cap}</loc>\n</url>\n</urlset>".encode()
    last = body.rfind(b"<url>")  # a piece starting here is a run the lite path reads
    for path in ("native", "pure") if native.CORE is not None else ("pure",):
        with native.using("native" if path == "native" else "pure"):
            _, items, problems, complete, _ = same_whatever_the_cuts(
                parsed, body, limits, positions=[last - 1, last, *range(0, len(body), 17)]
            )
        assert [i.url for i in items][-1] == at_cap and complete and problems == [], path


# --------------------------------------------------------------------------- the property

#: Starts that move a document across the sniffing window or around a mark.
STARTS = [
    b"",
    BOM,
    BOM * 2,
    BOM + b" \n" + BOM,
    b" " * (SNIFF_BYTES + 100),
    b"<!--" + b"y" * (SNIFF_BYTES + 100) + b"-->",
]
#: What may follow a document: nothing, a comment, junk short and long.
TAILS = [b"", b"\n<!-- after -->\n", b"junk", b"x" * 20_000 + b"/y", b"<later/>"]
#: Limits small enough to be hit by generated documents, each a verdict to keep.
LIMITS = [
    None,
    Limits(max_decompressed_bytes=1500),
    Limits(max_text_length=64, max_url_length=80),
    Limits(max_xml_token=200),
    Limits(max_urls_per_sitemap=3),
    Limits(max_xml_depth=6, max_xml_names=12),
]
positions = st.lists(st.integers(0, 10**6), min_size=3, max_size=10)


@st.composite
def text_sitemaps(draw: st.DrawFn) -> bytes:
    """Lines of URLs, junk, long lines and blank ones, in LF, CRLF or CR."""
    lines = draw(
        st.lists(
            st.one_of(
                st.integers(0, 999).map(lambda n: f"https://e.com/{n}"),
                st.sampled_from(["", "  ", "not a url", "https://e.com/" + "a" * 120, "#"]),
            ),
            max_size=30,
        )
    )
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return end.join(lines).encode()


@st.composite
def html_pages(draw: st.DrawFn) -> bytes:
    """An HTML site map page: links in and out of navigation, script, comments, entities."""
    parts = draw(
        st.lists(
            st.one_of(
                st.integers(0, 99).map(lambda n: f"<a href='/p/{n}'>page {n} &amp; more</a>"),
                st.integers(0, 9).map(lambda n: f"<nav><a href='/n/{n}'>n</a></nav>"),
                st.integers(0, 3000).map(lambda n: f"<!--{'c' * n}-->"),
                st.integers(0, 3000).map(lambda n: f"<script>{'s' * n}</script>"),
                st.sampled_from(["<p>&nbsp;&#65;&#x42</p>", "<base href='/sub/'>", "<br>"]),
            ),
            max_size=12,
        )
    )
    start = draw(st.sampled_from(["", " " * 1200, "<!doctype html>"]))
    return f"{start}<html><body>{''.join(parts)}</body></html>".encode()


def _profile(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _properties(examples: int) -> list[Callable[..., None]]:
    """The properties, at a number of examples (make test: few; make test-slow: many)."""
    run = _profile(examples)

    @run
    @given(
        body=st.one_of(documents(), mutated(), hostile_markup(), text_sitemaps()),
        start=st.sampled_from(STARTS),
        limits=st.sampled_from(LIMITS),
        where=positions,
        layers=st.integers(0, 2),
        tail=st.sampled_from(TAILS),
    )
    def sitemaps(
        body: bytes,
        start: bytes,
        limits: Limits | None,
        where: list[int],
        layers: int,
        tail: bytes,
    ) -> None:
        whole = start + body + tail if body[:2] != b"\x1f\x8b" else body
        for _ in range(layers):
            whole = gzip.compress(whole, mtime=0)
        outcome = same_whatever_the_cuts(parsed, whole, limits, where)
        if native.CORE is not None:  # and the other parser path says the same
            with native.using("pure" if native.active() else "native"):
                assert parsed([whole], limits) == outcome

    @run
    @given(
        body=html_pages(),
        limits=st.sampled_from([None, Limits(max_html_token=300), Limits(max_html_bytes=900)]),
        where=positions,
    )
    def pages(body: bytes, limits: Limits | None, where: list[int]) -> None:
        same_whatever_the_cuts(page_links, body, limits, where)

    return [sitemaps, pages]


@pytest.mark.parametrize("prop", _properties(25), ids=["sitemaps", "pages"])
def test_every_kind_is_the_same_whatever_the_cuts(prop: Callable[[], None]) -> None:
    """Generated bodies of every kind (XML of every root, encoding and extension, mutated
    and hostile markup, text sitemaps, HTML pages; behind marks and long starts; inside
    gzip layers; under small limits): whole or cut anywhere, the same outcome; where the
    compiled parser is built, the same on both paths (tests/parse/test_native.py)."""
    prop()


@pytest.mark.slow
@pytest.mark.parametrize("prop", _properties(1500), ids=["sitemaps", "pages"])
def test_every_kind_is_the_same_whatever_the_cuts_long(prop: Callable[[], None]) -> None:
    """The same property with many more examples (make test-slow)."""
    prop()
