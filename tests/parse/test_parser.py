"""SitemapParser on bytes: protocol-notes §3 A–F, H and I, each re-fed one byte at a time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_reader.errors import UsageError
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.parser import ParseResult, SitemapParser, parse
from sitemap_reader.records import UrlRecord
from tests.helpers import feed_chunks, gz, parse_all_ways, summary, urlset

SM = "https://example.com/sitemap.xml"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def urls(body: bytes, url: str | None = SM, **kw: object) -> list[str]:
    return [u.url for u in parse_all_ways(body, url, **kw).urls]  # type: ignore[arg-type]


def codes(body: bytes, url: str | None = SM, **kw: object) -> set[str]:
    return {p.code for p in parse_all_ways(body, url, **kw).problems}  # type: ignore[arg-type]


FIVE = urlset(*(f"<url><loc>https://example.com/p{i}</loc></url>" for i in range(5)))
TEXT = b"https://example.com/a\nhttps://example.com/b\n"


# --- A. Format detection, decoding, prolog --------------------------------------------


def test_text_body_at_xml_url_is_text() -> None:
    """A1/A2: a text body is a text sitemap whatever the URL or content type says."""
    result = parse_all_ways(TEXT, "https://example.com/sitemap.xml")
    assert result.format == "text"
    assert [u.url for u in result.urls] == ["https://example.com/a", "https://example.com/b"]


def test_bogus_text_is_not_a_sitemap() -> None:
    """A3: 'this is a bogus sitemap' gives no URL and a not-a-sitemap problem."""
    result = parse_all_ways(b"this is a bogus sitemap")
    assert result.format == "unknown"
    assert result.urls == []
    assert "not-a-sitemap" in {p.code for p in result.problems}
    assert not result.complete


@pytest.mark.parametrize("ctype", ["text/xml", "application/xml", "application/rss+xml", None])
def test_xml_any_content_type(ctype: str | None) -> None:
    """A4: an XML sitemap parses whatever content type is declared."""
    result = parse(FIVE, "https://example.com/sitemap.nonXmlExt", ctype)
    assert result.format == "urlset" and len(result.urls) == 5


def test_bom_and_whitespace_before_declaration() -> None:
    """A5: UTF-8 BOM then blank space before <?xml still parses."""
    assert len(urls(b"\xef\xbb\xbf\n \t\r\n" + FIVE)) == 5


def test_blank_line_and_comments_in_index() -> None:
    """A6: blank line before <?xml and comments between index entries: 3 sitemaps."""
    body = (
        b'\n<?xml version="1.0"?><sitemapindex xmlns="' + NS.encode() + b'">'
        b"<!-- a --><sitemap><loc>https://example.com/s1.xml</loc></sitemap><!-- b -->"
        b"<sitemap><loc>https://example.com/s2.xml</loc></sitemap>"
        b"<sitemap><loc>https://example.com/s3.xml</loc></sitemap></sitemapindex>"
    )
    result = parse_all_ways(body)
    assert result.format == "sitemapindex"
    assert [s.url for s in result.sitemaps] == [
        "https://example.com/s1.xml",
        "https://example.com/s2.xml",
        "https://example.com/s3.xml",
    ]


@pytest.mark.parametrize("prefix", [b"\xef\xbb\xbf", b" \n", b"\xef\xbb\xbf \n"])
def test_text_with_bom_or_leading_space(prefix: bytes) -> None:
    """A7: BOM and leading blanks never glue onto the first URL of a text sitemap."""
    assert urls(prefix + TEXT) == ["https://example.com/a", "https://example.com/b"]


def test_rss_starting_with_comment() -> None:
    """A8: an RSS file starting with a blank line and a comment is sniffed as XML."""
    body = b"\n<!-- feed -->\n<rss><channel><item><link>https://example.com/x</link></item></channel></rss>"
    result = parse_all_ways(body)
    assert result.format == "rss" and [u.url for u in result.urls] == ["https://example.com/x"]


def test_rss_1_0() -> None:
    """A9: RSS 1.0 (<rdf:RDF> root, items beside the channel) gives the item URL."""
    body = (
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        b"<channel><link>https://example.com/</link></channel>"
        b"<item><link>https://example.com/item</link><dc:date>2020-01-02</dc:date></item>"
        b"</rdf:RDF>"
    )
    result = parse_all_ways(body)
    assert result.format == "rss"
    assert [(u.url, u.lastmod) for u in result.urls] == [
        ("https://example.com/item", datetime(2020, 1, 2, tzinfo=UTC))
    ]


@pytest.mark.parametrize(
    "body",
    [
        b'<html xmlns="http://www.w3.org/1999/xhtml"><body>hi</body></html>',
        b"<project><modelVersion>4.0.0</modelVersion></project>",
    ],
)
def test_unknown_xml_root_is_an_error(body: bytes) -> None:
    """A10: valid XML with an unknown root: explicit not-a-sitemap, not an empty success."""
    result = parse_all_ways(body)
    assert result.format == "unknown" and not result.complete
    assert {p.code for p in result.problems} == {"not-a-sitemap"}


def test_empty_body() -> None:
    """A11: an empty body gives a problem, no exception."""
    result = parse_all_ways(b"")
    assert result.urls == [] and {p.code for p in result.problems} == {"empty"}


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html><html><head><title>Not found</title></head><body></body></html>",
        b"<html><body><a href='https://example.com/x'>x</a></body></html>",
        b"\n\n<!-- cdn --><!doctype HTML><p>soft 404",
    ],
)
def test_html_is_not_a_sitemap(body: bytes) -> None:
    """A12/L92: HTML served at a sitemap URL is reported, never mined for links."""
    result = parse_all_ways(body)
    assert result.urls == [] and not result.complete
    assert "not-a-sitemap" in {p.code for p in result.problems}


@pytest.mark.parametrize("encoding", ["ISO-8859-1", "windows-1252"])
def test_declared_single_byte_encoding(encoding: str) -> None:
    """A13: a Latin-1 declaration is honoured (é in a path is percent-encoded UTF-8)."""
    body = (
        f'<?xml version="1.0" encoding="{encoding}"?><urlset xmlns="{NS}">'
        "<url><loc>https://example.com/caf\u00e9</loc></url></urlset>"
    ).encode("latin-1")
    assert urls(body) == ["https://example.com/caf%C3%A9"]


def test_utf16_document() -> None:
    """A13: a UTF-16 document with a BOM parses."""
    body = ('<?xml version="1.0" encoding="UTF-16"?>' + FIVE.decode().split("?>", 1)[1]).encode(
        "utf-16"
    )
    assert len(urls(body)) == 5


def test_text_into_parser_never_raises() -> None:
    """A14: non-XML text bytes are handled as text, not a crash."""
    assert urls(b"https://a.example/1\n") == ["https://a.example/1"]


# --- B. XML structure leniency ---------------------------------------------------------


def test_entities_and_char_refs_joined() -> None:
    """B15: &amp; in loc decodes; &#43; in lastmod gives '+', and the date parses."""
    body = urlset(
        "<url><loc>https://example.com/?a=1&amp;b=2</loc>"
        "<lastmod>2020-01-02T10:00:00&#43;01:00</lastmod></url>"
    )
    (rec,) = parse_all_ways(body).urls
    assert rec.url == "https://example.com/?a=1&b=2"
    assert rec.lastmod == datetime(2020, 1, 2, 9, 0, tzinfo=UTC)


def test_cdata_split_loc_and_cdata_lastmod() -> None:
    """B16: a loc split into text plus CDATA is one URL; a CDATA lastmod parses."""
    body = urlset(
        "<url><loc>https://example.com/dynsitemap<![CDATA[?date=lastyear&all=false]]></loc>"
        "<lastmod><![CDATA[2021-03-04]]></lastmod></url>"
    )
    (rec,) = parse_all_ways(body).urls
    assert rec.url == "https://example.com/dynsitemap?date=lastyear&all=false"
    assert rec.lastmod == datetime(2021, 3, 4, tzinfo=UTC)


def test_loc_padding_trimmed_including_unicode_spaces() -> None:
    """B17: newlines, tabs, NBSP and U+2000 around a loc are trimmed."""
    body = urlset(
        "<url><loc>\n\t https://example.com/a \n</loc></url>",
        "<url><loc><![CDATA[\u00a0https://example.com/b\u2000]]></loc></url>",
    )
    assert urls(body) == ["https://example.com/a", "https://example.com/b"]


def test_index_entries_as_bare_text() -> None:
    """B18: <sitemap> holding the URL as bare text (with &amp;) gives the child."""
    body = (
        f'<sitemapindex xmlns="{NS}"><sitemap>\nhttps://example.com/s.jss?a=1&amp;l=en\n'
        "</sitemap><sitemap>https://example.com/t.xml</sitemap></sitemapindex>"
    ).encode()
    result = parse_all_ways(body)
    assert [s.url for s in result.sitemaps] == [
        "https://example.com/s.jss?a=1&l=en",
        "https://example.com/t.xml",
    ]


def test_several_locs_in_one_sitemap_entry() -> None:
    """B19: each <loc> of one <sitemap> is a child; a lastmod after loc1 is loc1's only."""
    body = (
        b"<sitemapindex><sitemap><loc>https://example.com/1.xml</loc>"
        b"<lastmod>2020-01-01</lastmod><loc>https://example.com/2.xml</loc>"
        b"</sitemap></sitemapindex>"
    )
    result = parse_all_ways(body)
    assert [(s.url, s.lastmod) for s in result.sitemaps] == [
        ("https://example.com/1.xml", datetime(2020, 1, 1, tzinfo=UTC)),
        ("https://example.com/2.xml", None),
    ]


def test_stray_end_tag_keeps_earlier_urls() -> None:
    """B20: fatal syntax: URLs before the error are kept, the problem says where."""
    body = urlset(
        "<url><loc>https://example.com/a</loc></url></url>",
        "<url><loc>https://example.com/b</loc></url>",
    )
    result = parse_all_ways(body)
    assert [u.url for u in result.urls] == ["https://example.com/a"]
    assert not result.complete
    (problem,) = result.problems
    assert problem.code == "xml-syntax" and "line" in problem.message and problem.fatal


def test_truncated_urlset_keeps_complete_entries() -> None:
    """B21: a body cut inside an end tag after a complete loc keeps that URL."""
    body = f'<urlset xmlns="{NS}"><url><loc>http://www.example.com/</loc></url><url><loc>http://www.example.com/2</loc></ur'
    result = parse_all_ways(body.encode())
    assert [u.url for u in result.urls] == ["http://www.example.com/", "http://www.example.com/2"]
    assert not result.complete and result.problems[0].code == "xml-syntax"


def test_truncated_inside_loc_never_emits_half_a_url() -> None:
    """B21: a loc cut in the middle of its text is not emitted (it may be cut short)."""
    body = f'<urlset xmlns="{NS}"><url><loc>http://www.example.com/a</loc></url><url><loc>http://www.exa'
    assert [u.url for u in parse_all_ways(body.encode()).urls] == ["http://www.example.com/a"]


def test_truncated_index() -> None:
    """B22: a sitemapindex cut after a loc keeps that child."""
    body = f'<sitemapindex xmlns="{NS}"><sitemap><loc>https://example.com/1.xml</loc><las'
    result = parse_all_ways(body.encode())
    assert [s.url for s in result.sitemaps] == ["https://example.com/1.xml"]
    assert not result.complete


def test_nested_element_inside_loc() -> None:
    """B23: <loc><url><![CDATA[...]]></url></loc> takes the descendant text."""
    body = urlset("<url><loc><url><![CDATA[http://jobs.example.com/1]]></url></loc></url>")
    assert urls(body) == ["http://jobs.example.com/1"]


def test_url_without_loc_and_empty_loc_skipped() -> None:
    """B24/B25: entries without a loc or with an empty one are skipped, the rest kept."""
    body = urlset(
        "<url><!-- nothing --></url>",
        "<url><lastmod>2020-01-01</lastmod></url>",
        "<url><loc></loc></url>",
        "<url><loc>https://example.com/ok</loc></url>",
    )
    result = parse_all_ways(body)
    assert [u.url for u in result.urls] == ["https://example.com/ok"]
    assert result.complete and "missing-loc" in {p.code for p in result.problems}


def test_empty_lastmod_and_comment_in_url() -> None:
    """B26/B27: <lastmod/> is absent; a comment inside <url> is ignored."""
    body = urlset("<url><loc>https://example.com/a</loc><!-- c --><lastmod /></url>")
    (rec,) = parse_all_ways(body).urls
    assert rec.lastmod is None


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ("https://example.com/?x=1&y=2", "https://example.com/?x=1&y=2"),
        ("https://example.com/?a=1&copy=2", "https://example.com/?a=1&copy=2"),
        ("https://example.com/a&nbsp;b", "https://example.com/a&nbsp;b"),
    ],
)
def test_unescaped_ampersand_survives_exactly(loc: str, expected: str) -> None:
    """B28: a bare & (or an HTML entity) never corrupts a URL and never kills the file."""
    body = urlset(f"<url><loc>{loc}</loc></url>", "<url><loc>https://example.com/z</loc></url>")
    result = parse_all_ways(body)
    assert [u.url for u in result.urls] == [expected, "https://example.com/z"]
    assert result.complete


def test_bare_ampersand_inside_cdata_untouched() -> None:
    """B28: inside CDATA a & is literal and stays a single &."""
    body = urlset("<url><loc><![CDATA[https://example.com/?a=1&amp=2]]></loc></url>")
    assert urls(body) == ["https://example.com/?a=1&amp=2"]


def test_duplicate_children_are_all_reported() -> None:
    """B29: the parser reports duplicates; the crawler dedupes (2 unique of 3)."""
    body = b"<sitemapindex>" + b"<sitemap><loc>https://example.com/1.xml</loc></sitemap>" * 2
    body += b"<sitemap><loc>https://example.com/2.xml</loc></sitemap></sitemapindex>"
    refs = [s.url for s in parse_all_ways(body).sitemaps]
    assert len(refs) == 3 and len(set(refs)) == 2


# --- C. Namespaces -------------------------------------------------------------------


def test_prefixed_sitemap_namespace() -> None:
    """C30: <sit:urlset xmlns:sit=…> with prefixed children parses, even strictly."""
    body = (
        f'<sit:urlset xmlns:sit="{NS}"><sit:url><sit:loc>https://example.com/a</sit:loc>'
        "<sit:changefreq>daily</sit:changefreq></sit:url></sit:urlset>"
    ).encode()
    for strict in (False, True):
        result = parse_all_ways(body, "https://example.com/sitemap.xml", strict=strict)
        assert [(u.url, u.changefreq) for u in result.urls] == [("https://example.com/a", "daily")]


@pytest.mark.parametrize(
    "ns",
    [
        'xmlns="http://www.google.com/schemas/sitemap/0.84"',
        'xmlns="https://www.sitemaps.org/schemas/sitemap/0.9"',
        'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9/"',
        'xmlns="//www.sitemaps.org/schemas/sitemap/0.9"',
        "",
    ],
)
def test_other_namespaces_lenient_and_strict(ns: str) -> None:
    """C31/C32: odd or missing namespaces parse leniently and are refused strictly."""
    body = urlset("<url><loc>https://example.com/a</loc></url>", ns=ns)
    assert urls(body) == ["https://example.com/a"]
    strict = parse_all_ways(body, strict=True)
    assert strict.urls == [] and "namespace" in {p.code for p in strict.problems}


def test_url_with_empty_default_namespace() -> None:
    """C31: <url xmlns=""> inside a namespaced urlset still counts."""
    body = urlset('<url xmlns=""><loc>https://example.com/a</loc></url>')
    assert urls(body) == ["https://example.com/a"]


def test_extension_locs_never_leak() -> None:
    """C33: image:loc and video:*_loc are never page URLs, even undeclared prefixes."""
    body = (
        f'<urlset xmlns="{NS}"><url><loc>https://example.com/page</loc>'
        "<image:image><image:loc>https://example.com/i.jpg</image:loc></image:image>"
        "<video:video><video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
        "<video:title>T</video:title><video:content_loc>https://example.com/v.mp4</video:content_loc>"
        "</video:video></url></urlset>"
    ).encode()
    result = parse_all_ways(body)
    assert [u.url for u in result.urls] == ["https://example.com/page"]
    (rec,) = result.urls
    assert [i.loc for i in rec.images] == ["https://example.com/i.jpg"]
    assert rec.videos[0].content_loc == "https://example.com/v.mp4"


# --- D. Security (see test_attacks.py for the full attack corpus) ----------------------


def test_xxe_rejected_and_nothing_read(tmp_path: object) -> None:
    """D34: a DOCTYPE declaring a file entity is refused; no URL carries its content."""
    body = (
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>https://example.com/&xxe;</loc></url></urlset>"
    )
    result = parse_all_ways(body)
    assert result.urls == [] and not result.complete
    assert {p.code for p in result.problems} == {"xml-entities-forbidden"}


def test_plain_doctype_is_harmless() -> None:
    """D36: a DOCTYPE without entity declarations parses."""
    body = b"<!DOCTYPE urlset><urlset><url><loc>https://example.com/a</loc></url></urlset>"
    assert urls(body) == ["https://example.com/a"]


def test_xinclude_not_processed() -> None:
    """D37: xi:include inside a loc is not processed."""
    body = urlset(
        '<url><loc>https://example.com/a<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" '
        'href="file:///etc/passwd"/></loc></url>'
    )
    assert urls(body) == ["https://example.com/a"]


def test_undeclared_entity_garbage() -> None:
    """D38: <url>&k; (undeclared entity) never crashes."""
    body = urlset("<url>&k;<loc>https://example.com/a</loc></url>")
    result = parse_all_ways(body)
    assert [u.url for u in result.urls] == ["https://example.com/a"]


def test_gzip_bomb_capped() -> None:
    """D39: a gzip body past the decompressed cap ends with limit-bytes, records kept."""
    inner = urlset(*(f"<url><loc>https://example.com/{i}</loc></url>" for i in range(2000)))
    limits = Limits(max_decompressed_bytes=len(inner) // 2)
    result = parse(gz(inner), SM, limits=limits)
    assert 0 < len(result.urls) < 2000 and not result.complete
    assert "limit-bytes" in {p.code for p in result.problems}


# --- E. URL validity and location -----------------------------------------------------


def test_strict_location_rule() -> None:
    """E43: strictly, only URLs under the sitemap's directory on the same scheme/host."""
    body = urlset(
        "<url><loc>http://example.com/catalog/show?item=233&amp;user=3453</loc></url>",
        "<url><loc>http://example.com/image/show?item=1</loc></url>",
        "<url><loc>https://example.com/catalog/page1.php</loc></url>",
    )
    sitemap = "http://example.com/catalog/sitemap.xml"
    assert urls(body, sitemap, strict=True) == [
        "http://example.com/catalog/show?item=233&user=3453"
    ]
    assert len(urls(body, sitemap)) == 3


def test_strict_location_ignores_query_slashes() -> None:
    """E44: the base of index.php?route=path/sitemap is the site root."""
    body = urlset("<url><loc>https://example.com/catalog/page1.php</loc></url>")
    assert urls(body, "https://example.com/index.php?route=path/sitemap", strict=True) == [
        "https://example.com/catalog/page1.php"
    ]


def test_relative_loc_lenient_and_strict() -> None:
    """E48: relative locs resolve against the sitemap URL (flagged), dropped strictly."""
    body = urlset("<url><loc>/a/b</loc></url>", "<url><loc>c</loc></url>")
    result = parse_all_ways(body, "https://example.com/dir/sitemap.xml")
    assert [u.url for u in result.urls] == ["https://example.com/a/b", "https://example.com/dir/c"]
    assert "relative-url" in {p.code for p in result.problems}
    assert urls(body, "https://example.com/dir/sitemap.xml", strict=True) == []


def test_relative_loc_without_base_dropped() -> None:
    """E48: with no sitemap URL (a local file), relative locs are dropped and counted."""
    body = urlset("<url><loc>/a</loc></url>", "<url><loc>https://example.com/b</loc></url>")
    result = parse_all_ways(body, None)
    assert [u.url for u in result.urls] == ["https://example.com/b"]
    assert "bad-url" in {p.code for p in result.problems}


def test_invalid_and_non_http_urls_dropped() -> None:
    """E50: INVALID_URL, mailto: and javascript: are dropped without an exception."""
    body = urlset(
        "<url><loc>INVALID URL</loc></url>",
        "<url><loc>mailto:a@example.com</loc></url>",
        "<url><loc>javascript:alert(1)</loc></url>",
        "<url><loc>https://ex ample.com/</loc></url>",
        "<url><loc>https://example.com/ok</loc></url>",
    )
    assert urls(body, None) == ["https://example.com/ok"]


def test_normalization_applied() -> None:
    """Normalization: case, default port, dot segments, fragment, root slash."""
    body = urlset(
        "<url><loc>HTTP://WWW.Example.COM:80/a/./b/../c#frag</loc></url>",
        "<url><loc>https://example.com</loc></url>",
        "<url><loc>https://b\u00fccher.example/x</loc></url>",
    )
    assert urls(body) == [
        "http://www.example.com/a/c",
        "https://example.com/",
        "https://xn--bcher-kva.example/x",
    ]


def test_strict_url_cap() -> None:
    """Strict mode applies the protocol's 50,000 URL limit (a smaller cap shown here)."""
    body = urlset(*(f"<url><loc>https://example.com/{i}</loc></url>" for i in range(10)))
    result = parse(body, SM, limits=Limits(max_urls_per_sitemap=4))
    assert len(result.urls) == 4 and not result.complete
    assert "limit-urls" in {p.code for p in result.problems}


# --- F. Field parsing -----------------------------------------------------------------


def test_fields_parsed_and_bad_values_counted() -> None:
    """F51–F57: dates, changefreq, priority coerced; bad values None and counted."""
    body = urlset(
        "<url><loc>https://example.com/a</loc><lastmod>2014-06</lastmod>"
        "<changefreq>\n Daily \n</changefreq><priority>0.6</priority></url>",
        "<url><loc>https://example.com/b</loc><lastmod>blah</lastmod>"
        "<changefreq>sometimes</changefreq><priority>1.1</priority></url>",
        "<url><loc>https://example.com/c</loc><lastmod>2004-12-23T18:00:15</lastmod>"
        "<priority>NaN</priority></url>",
    )
    result = parse_all_ways(body)
    a, b, c = result.urls
    assert (a.lastmod, a.changefreq, a.priority) == (datetime(2014, 6, 1, tzinfo=UTC), "daily", 0.6)
    assert (b.lastmod, b.changefreq, b.priority) == (None, None, None)
    assert c.lastmod == datetime(2004, 12, 23, 18, 0, 15, tzinfo=UTC) and c.priority is None
    problems = {p.code: p.count for p in result.problems}
    assert problems == {"bad-date": 1, "bad-changefreq": 1, "bad-priority": 2}


def test_scores_follow_priority() -> None:
    """Records carry a default score; higher priority scores higher."""
    body = urlset(
        "<url><loc>https://example.com/lo</loc><priority>0.1</priority></url>",
        "<url><loc>https://example.com/hi</loc><priority>0.9</priority></url>",
    )
    lo, hi = parse(body, SM).urls
    assert 0.0 <= lo.score < hi.score <= 1.0


# --- H. Feeds -------------------------------------------------------------------------


def test_atom_link_choice_and_updated() -> None:
    """H66: Atom: the link without rel wins; feed-level links are not emitted."""
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://example.org/"/>'
        b'<entry><link href="http://example.org/a"/><link rel="alternate" href="http://example.org/a.html"/>'
        b'<link rel="edit" href="http://example.org/a/edit"/><updated>2003-12-13T18:30:02Z</updated>'
        b"</entry></feed>"
    )
    result = parse_all_ways(body)
    assert result.format == "atom"
    assert [(u.url, u.lastmod) for u in result.urls] == [
        ("http://example.org/a", datetime(2003, 12, 13, 18, 30, 2, tzinfo=UTC))
    ]


def test_atom_03() -> None:
    """H: Atom 0.3 uses link rel=alternate and <modified>."""
    body = (
        b'<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry>'
        b'<link rel="alternate" type="text/html" href="http://example.org/x"/>'
        b"<modified>2004-01-02T03:04:05Z</modified></entry></feed>"
    )
    result = parse_all_ways(body)
    assert result.format == "atom"
    assert [(u.url, u.lastmod) for u in result.urls] == [
        ("http://example.org/x", datetime(2004, 1, 2, 3, 4, 5, tzinfo=UTC))
    ]


def test_rss_guid_fallback_and_link_preference() -> None:
    """H67: the guid is the URL when there is no link; a link beats a UUID guid."""
    body = (
        b"<rss><channel><link>https://example.com/</link><image><url>https://example.com/logo.png</url></image>"
        b'<item><guid isPermaLink="false">https://example.com/guid.html</guid></item>'
        b'<item><link>https://example.com/post</link><guid isPermaLink="false">7bd204c6</guid>'
        b"<pubDate>Thu, 05 Jan 2017 12:34:50 GMT</pubDate></item></channel></rss>"
    )
    result = parse_all_ways(body)
    assert [u.url for u in result.urls] == [
        "https://example.com/guid.html",
        "https://example.com/post",
    ]
    assert result.urls[1].lastmod == datetime(2017, 1, 5, 12, 34, 50, tzinfo=UTC)


def test_rss_link_entity_and_cdata_tail() -> None:
    """H68: an RSS link with &amp; and a CDATA tail is decoded and joined."""
    body = b"<rss><channel><item><link>https://example.com/?a=1&amp;b=<![CDATA[2&c=3]]></link></item></channel></rss>"
    assert urls(body) == ["https://example.com/?a=1&b=2&c=3"]


def test_rss_relative_link_resolved() -> None:
    """E48: a relative RSS link resolves against the feed URL."""
    body = b"<rss><channel><item><link>/post/1</link></item></channel></rss>"
    assert urls(body, "https://example.com/feed.xml") == ["https://example.com/post/1"]


# --- I. Extensions --------------------------------------------------------------------


def test_hreflang_alternates() -> None:
    """I69: three alternates including a self-reference; a link without href ignored."""
    body = (
        f'<urlset xmlns="{NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml"><url>'
        "<loc>https://example.com/en</loc>"
        '<xhtml:link rel="alternate" hreflang="en" href="https://example.com/en"/>'
        '<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de"/>'
        '<xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/"/>'
        '<xhtml:link rel="alternate" hreflang="fr"/>'
        "</url></urlset>"
    ).encode()
    (rec,) = parse_all_ways(body).urls
    assert [(a.hreflang, a.url) for a in rec.alternates] == [
        ("en", "https://example.com/en"),
        ("de", "https://example.com/de"),
        ("x-default", "https://example.com/"),
    ]


def test_news_extension() -> None:
    """I70: news name, language, date-only publication date, keywords, tickers (max 5)."""
    body = (
        f'<urlset xmlns="{NS}" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
        "<url><loc>https://example.com/n</loc><news:news><news:publication>"
        "<news:name>The Example Times</news:name><news:language>en</news:language>"
        "</news:publication><news:genres>PressRelease, Blog</news:genres>"
        "<news:publication_date>2008-12-23</news:publication_date>"
        "<news:title>Companies A, B in Merger Talks</news:title>"
        "<news:keywords>business, merger, acquisition</news:keywords>"
        "<news:stock_tickers>A, B, C, D, E, F</news:stock_tickers>"
        "</news:news></url></urlset>"
    ).encode()
    (rec,) = parse_all_ways(body).urls
    news = rec.news
    assert news is not None and news.valid
    assert (news.publication_name, news.language, news.title) == (
        "The Example Times",
        "en",
        "Companies A, B in Merger Talks",
    )
    assert news.publication_date == datetime(2008, 12, 23, tzinfo=UTC)
    assert news.genres == ("PressRelease", "Blog")
    assert news.keywords == ("business", "merger", "acquisition")
    assert news.stock_tickers == ("A", "B", "C", "D", "E")


def test_news_with_empty_name_kept_but_invalid() -> None:
    """I70: an empty news:name keeps the record but marks the news invalid."""
    body = urlset(
        "<url><loc>https://example.com/n</loc><news:news><news:publication><news:name></news:name>"
        "<news:language>en</news:language></news:publication><news:title>T</news:title>"
        "<news:publication_date>2020-01-01</news:publication_date></news:news></url>"
    )
    (rec,) = parse_all_ways(body).urls
    assert rec.news is not None and not rec.news.valid


def test_two_images() -> None:
    """I71: two image:image in one URL give two images, with optional fields."""
    body = urlset(
        "<url><loc>https://example.com/p</loc>"
        "<image:image><image:loc>https://example.com/1.jpg</image:loc>"
        "<image:caption>One</image:caption></image:image>"
        "<image:image><image:loc>https://example.com/2.jpg</image:loc></image:image></url>"
    )
    (rec,) = parse_all_ways(body).urls
    assert [(i.loc, i.caption) for i in rec.images] == [
        ("https://example.com/1.jpg", "One"),
        ("https://example.com/2.jpg", None),
    ]


def test_video_fields() -> None:
    """I72: video numbers, flags, restriction list, tags, bad rating to None."""
    body = urlset(
        "<url><loc>https://example.com/v</loc><video:video>"
        "<video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
        "<video:title>Grilling</video:title><video:description>How to</video:description>"
        "<video:player_loc allow_embed='yes'>https://example.com/player?v=1</video:player_loc>"
        "<video:duration>600</video:duration><video:rating>4.2</video:rating>"
        "<video:view_count>12345</video:view_count><video:family_friendly>yes</video:family_friendly>"
        "<video:restriction relationship='allow'>IE GB US CA</video:restriction>"
        "<video:tag>steak</video:tag><video:tag>meat</video:tag><video:live>no</video:live>"
        "<video:publication_date>2007-11-05T19:20:30+08:00</video:publication_date>"
        "</video:video></url>"
    )
    (rec,) = parse_all_ways(body).urls
    (video,) = rec.videos
    assert video.title == "Grilling" and video.player_loc == "https://example.com/player?v=1"
    assert (video.duration, video.rating, video.view_count) == (600, 4.2, 12345)
    assert video.family_friendly is True and video.live is False
    assert (
        video.restriction == ("IE", "GB", "US", "CA") and video.restriction_relationship == "allow"
    )
    assert video.tags == ("steak", "meat")
    assert video.publication_date == datetime(2007, 11, 5, 11, 20, 30, tzinfo=UTC)


def test_mobile_and_pagemap_ignored() -> None:
    """I73: other extension elements do not disturb the record."""
    body = urlset(
        "<url><loc>https://example.com/m</loc><mobile:mobile/><pagemap:PageMap>"
        "<pagemap:DataObject><pagemap:Attribute name='loc'>https://x.example/</pagemap:Attribute>"
        "</pagemap:DataObject></pagemap:PageMap></url>"
    )
    assert urls(body) == ["https://example.com/m"]


def test_to_dict_shape() -> None:
    """The JSON shape: keys in the record's order, extensions only when present."""
    body = urlset(
        "<url><loc>https://example.com/a</loc><lastmod>2024-03-05T14:30:00Z</lastmod>"
        "<changefreq>daily</changefreq><priority>0.8</priority>"
        "<image:image><image:loc>https://example.com/a.jpg</image:loc></image:image></url>"
    )
    (rec,) = parse(body, SM).urls
    data = rec.to_dict()
    assert list(data) == ["url", "lastmod", "changefreq", "priority", "score", "sitemap", "images"]
    assert data["lastmod"] == "2024-03-05T14:30:00Z" and data["images"] == [
        {"loc": "https://example.com/a.jpg"}
    ]


# --- gzip and the parser's own contract ------------------------------------------------


def test_gzip_and_double_gzip_sniffed() -> None:
    """K83/K86: gzip and double gzip are sniffed from the bytes at any URL."""
    assert len(urls(gz(FIVE), "https://example.com/sitemap")) == 5
    assert len(urls(gz(gz(FIVE)))) == 5
    assert urls(gz(TEXT), "https://example.com/sitemap.txt.gz") == [
        "https://example.com/a",
        "https://example.com/b",
    ]


def test_triple_gzip_refused() -> None:
    """K86: a third gzip layer is an attack: refused with a clear problem."""
    result = parse_all_ways(gz(gz(gz(FIVE))))
    assert result.urls == [] and "limit-gzip-layers" in {p.code for p in result.problems}


def test_gz_name_but_plain_body() -> None:
    """K87: a .gz URL whose body is plain XML parses as XML."""
    assert len(urls(FIVE, "https://example.com/sitemap.xml.gz")) == 5


def test_truncated_gzip_keeps_records() -> None:
    """K88: truncated gzip keeps what was decompressed and says it was cut."""
    body = urlset(*(f"<url><loc>https://example.com/{i}</loc></url>" for i in range(3000)))
    cut = gz(body)[:-2000]
    result = parse(cut, SM)
    assert 0 < len(result.urls) < 3000 and not result.complete
    assert {p.code for p in result.problems} & {"gzip-truncated", "xml-syntax"}


def test_feed_after_close_is_a_usage_error() -> None:
    """Feeding a closed parser raises the library's own error."""
    parser = SitemapParser(SM)
    parser.close()
    with pytest.raises(UsageError):
        parser.feed(b"x")


def test_done_after_fatal_problem() -> None:
    """After a fatal problem the parser is done and ignores further input."""
    parser = SitemapParser(SM)
    parser.feed(b"<html><body>" + b" " * 2000)
    assert parser.done and not parser.complete
    assert parser.feed(FIVE) == []


def test_text_junk_lines_skipped() -> None:
    """L93: junk lines in a text sitemap are skipped and counted."""
    result = parse_all_ways(b"Tralala\nhttps://example.com/1\r\n\nhttps://example.com/2")
    assert [u.url for u in result.urls] == ["https://example.com/1", "https://example.com/2"]
    assert {p.code: p.count for p in result.problems} == {"junk-line": 1}


def test_text_overlong_line_skipped() -> None:
    """An over-long line in a text sitemap is skipped without holding it whole."""
    body = b"https://example.com/" + b"a" * 100_000 + b"\nhttps://example.com/ok\n"
    result = parse_all_ways(body, limits=Limits(max_url_length=2048))
    assert [u.url for u in result.urls] == ["https://example.com/ok"]


def test_repairs_are_counted() -> None:
    """B28: each repaired ampersand of a document read to its end is counted."""
    body = urlset(
        "<url><loc>https://example.com/?a=1&b=2&c=3</loc></url>",
        "<url><loc>https://example.com/?d=4&amp;e=5</loc></url>",
    )
    problems = {p.code: p.count for p in parse_all_ways(body).problems}
    assert problems == {"xml-repaired": 2}


def test_extension_urls_must_be_absolute() -> None:
    """I72: a placeholder like 'None' in video:content_loc never becomes a site URL; the
    drops are counted (issue 12 point 6)."""
    body = urlset(
        "<url><loc>https://example.com/v</loc><video:video><video:title>T</video:title>"
        "<video:content_loc>None</video:content_loc>"
        "<video:player_loc>https://example.com/p</video:player_loc></video:video>"
        "<image:image><image:loc>/relative.jpg</image:loc></image:image></url>"
    )
    result = parse_all_ways(body)
    (rec,) = result.urls
    (video,) = rec.videos
    assert video.content_loc is None and video.player_loc == "https://example.com/p"
    assert rec.images == ()
    assert {p.code: p.count for p in result.problems} == {"bad-extension-url": 2}


_FIELD = st.sampled_from(["loc", "lastmod", "changefreq", "priority"])
_TEXT = st.sampled_from(
    ["https://example.com/a", " https://example.com/b?x=1&amp;y=2 ", "2024-03-05", "daily",
     "0.5", "", "bad", "https://example.com/" + "z" * 300, "\u00e9t\u00e9"]
)  # fmt: skip
_ENTRY = st.lists(st.tuples(_FIELD, _TEXT), max_size=5)


@settings(max_examples=150, deadline=None)
@given(
    entries=st.lists(_ENTRY, max_size=12),
    space=st.sampled_from(["", "\n", "\n  "]),
    cut=st.integers(min_value=0, max_value=400),
    sizes=st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=6),
)
def test_lite_path_matches_full_reading(
    entries: list[list[tuple[str, str]]], space: str, cut: int, sizes: list[int]
) -> None:
    """Runs of plain entries (read from end tags only) give exactly the full reading,
    whatever the chunking, including bodies cut anywhere."""
    body = urlset(
        *(
            space
            + "<url>"
            + "".join(f"{space}<{name}>{text}</{name}>" for name, text in fields)
            + f"{space}</url>"
            for fields in entries
        )
    )
    for data in (body, body[: len(body) - cut]):
        whole = feed_chunks(data, max(len(data), 1), SM)
        parser = SitemapParser(SM)
        items: list[object] = []
        position, turn = 0, 0
        while position < len(data):
            size = sizes[turn % len(sizes)]
            items.extend(parser.feed(data[position : position + size]))
            position, turn = position + size, turn + 1
        items.extend(parser.close())
        chunked = ParseResult(parser.format, problems=parser.problems, complete=parser.complete)
        chunked.urls = [i for i in items if isinstance(i, UrlRecord)]
        assert summary(chunked) == summary(whole)


@pytest.mark.parametrize(
    ("inner", "fields"),
    [
        ("", {}),
        ("<news:title>Only Title</news:title>", {"title": "Only Title"}),
        (
            "<news:publication><news:language>en</news:language></news:publication>"
            "<news:publication_date>2026-05-03T10:00:00Z</news:publication_date>",
            {"language": "en", "publication_date": "2026-05-03T10:00:00Z"},
        ),
    ],
    ids=["empty", "title-only", "no-name-no-title"],
)
def test_news_missing_required_fields_keeps_what_it_has(
    inner: str, fields: dict[str, object]
) -> None:
    """go-sitemap-parser's news cases: a news:news missing required fields (even every
    field) keeps its URL and a news entry with the fields it has, marked invalid (an empty
    one was dropped before)."""
    body = urlset(
        f"<url><loc>https://example.com/article</loc><news:news>{inner}</news:news></url>"
    )
    (rec,) = parse_all_ways(body).urls
    assert rec.url == "https://example.com/article"
    assert rec.news is not None and not rec.news.valid
    assert rec.news.to_dict() == fields
    assert rec.to_dict()["news"] == fields


def test_news_element_outside_its_namespace_is_no_news() -> None:
    """A <news> element in the sitemap namespace is not Google News: no news entry."""
    body = urlset(
        "<url><loc>https://example.com/page</loc><news><title>Ignored</title></news></url>"
    )
    (rec,) = parse_all_ways(body).urls
    assert rec.news is None
