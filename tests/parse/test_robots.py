"""Tests for sitemap_reader.parse.robots: sitemap discovery and rules from robots.txt."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_reader.parse.robots import RobotsTxt, parse_robots, sitemaps_from_robots
from tests.shared_data import CORPUS, require

#: crawler-commons' robots.txt test files, read in place (never copied into the repo).
DATA = CORPUS / "crawler-commons" / "robots"
ROBOTS = "https://www.example.com/robots.txt"


def read(name: str) -> bytes:
    """A robots.txt test file's bytes (the test skips when ../shared is absent)."""
    return (require(DATA) / name).read_bytes()


def test_case_75_scrapy_mixed_file() -> None:
    """Case 75: lines between groups, upper-case scheme normalized, relative resolved."""
    body = b"""User-agent: *
Disallow: /aff/
Disallow: /wl/

# Search and shopping refining
Disallow: /s*/*facet
Disallow: /s*/*tags

# Sitemap files
Sitemap: http://example.com/sitemap.xml
Sitemap: http://example.com/sitemap-product-index.xml
Sitemap: HTTP://example.com/sitemap-uppercase.xml
Sitemap: /sitemap-relative-url.xml

# Forums
Disallow: /forum/search/
Disallow: /forum/active/
"""
    assert sitemaps_from_robots(body, "http://www.example.com/robots.txt") == [
        "http://example.com/sitemap.xml",
        "http://example.com/sitemap-product-index.xml",
        "http://example.com/sitemap-uppercase.xml",
        "http://www.example.com/sitemap-relative-url.xml",
    ]


def test_case_76_invalid_utf8_line_skipped() -> None:
    """Case 76: a Sitemap line with invalid UTF-8 bytes is skipped, the others kept."""
    body = (
        b"Sitemap: https://example.com/good-1.xml\n"
        b"Sitemap: https://example.com/bad-\xff\xfe.xml\n"
        b"Sitemap: https://example.com/good-2.xml\n"
    )
    assert sitemaps_from_robots(body, ROBOTS) == [
        "https://example.com/good-1.xml",
        "https://example.com/good-2.xml",
    ]


def test_case_77_dedup_file() -> None:
    """Case 77: 'sitemap:' and a duplicate 'Sitemap:' line give one URL."""
    assert sitemaps_from_robots(read("sitemap-robots-dedup.txt"), ROBOTS) == [
        "http://example.org/sitemap.xml"
    ]


def test_case_77_and_80_sitemap_robots_file() -> None:
    """Cases 77/80: anywhere in the file, mixed case kept, bare URL line accepted (last)."""
    assert sitemaps_from_robots(read("sitemap-robots.txt"), ROBOTS) == [
        "http://domain.com/sitemap.xml",
        "http://domain.com/dir/MixedCased-sitemap.xml",
        "http://domain.com/dir/my-sitemap.xml",
    ]


def test_case_77_invalid_base_absolute_sitemap_kept() -> None:
    """Case 77: an unusable robots URL does not matter for an absolute sitemap."""
    body = "Sitemap: https://example.com/s.xml\nSitemap: /relative.xml\n"
    assert sitemaps_from_robots(body, "not a url") == ["https://example.com/s.xml"]


@pytest.mark.parametrize(
    "name",
    ["robots-with-utf8-bom.txt", "robots-with-utf16le-bom.txt", "robots-with-utf16be-bom.txt"],
)
def test_case_78_bom_files(name: str) -> None:
    """Case 78: behind a UTF-8/16 BOM the first User-agent line works and the Sitemap is found."""
    robots = parse_robots(read(name), "http://www.newsweek.com/robots.txt")
    assert robots.sitemaps == ("http://www.newsweek.com/sitemap_index.xml",)
    assert not robots.can_fetch("http://www.newsweek.com/login.aspx", "anybot")
    assert robots.can_fetch("http://www.newsweek.com/news", "anybot")


def test_case_79_bom_before_sitemap_on_first_line() -> None:
    """Case 79: protego alone loses '\\ufeffSitemap: …'; we find it (bytes and str)."""
    text = "\ufeffSitemap: https://example.com/s.xml\n"
    assert sitemaps_from_robots(text.encode(), ROBOTS) == ["https://example.com/s.xml"]
    assert sitemaps_from_robots(text, ROBOTS) == ["https://example.com/s.xml"]


def test_case_79_protego_variants() -> None:
    """Case 79: Site-map alias, CRLF, indentation, trailing comment, inside a group, empty."""
    body = (
        b"User-agent: *\r\n"
        b"  Sitemap: https://example.com/a.xml # comment\r\n"
        b"Site-map: https://example.com/b.xml\r\n"
        b"SITEMAP: https://example.com/c.xml\r\n"
        b"Sitemap:\r\n"
        b"Disallow: /x\r\n"
    )
    assert sitemaps_from_robots(body, ROBOTS) == [
        "https://example.com/a.xml",
        "https://example.com/b.xml",
        "https://example.com/c.xml",
    ]


def test_relative_sitemap_file() -> None:
    """A relative Sitemap value resolves against the robots.txt URL's host."""
    assert sitemaps_from_robots(read("relative-sitemap-robots.txt"), ROBOTS) == [
        "https://www.example.com/sitemap.xml"
    ]


def test_format_errors_file() -> None:
    """'sitemap : /sitemap.xml' (space before the colon) still counts."""
    assert sitemaps_from_robots(read("format-errors-robots.txt"), ROBOTS) == [
        "https://www.example.com/sitemap.xml"
    ]


def test_wildcards_file_keeps_order_and_gz_names() -> None:
    """A real file with eight Sitemap lines yields all eight, in file order."""
    sitemaps = sitemaps_from_robots(read("wildcards.txt"), ROBOTS)
    assert len(sitemaps) == 8
    assert sitemaps[0] == "http://www.amazon.com/sitemap-manual-index.xml"
    assert sitemaps[-1].endswith(".SitemapIndex_0.xml.gz")


def test_non_http_and_junk_values_dropped() -> None:
    """ftp:, javascript: and hostless values are dropped."""
    body = "Sitemap: ftp://example.com/s.xml\nSitemap: javascript:x\nSitemap: http:///s.xml\n"
    assert sitemaps_from_robots(body, ROBOTS) == []


def test_fragment_dropped_and_dedup_after_normalization() -> None:
    """Values equal after normalization are deduplicated, the first one kept."""
    body = "Sitemap: https://Example.com:443/s.xml#x\nSitemap: https://example.com/s.xml\n"
    assert sitemaps_from_robots(body, ROBOTS) == ["https://example.com/s.xml"]


def test_only_first_max_bytes_parsed() -> None:
    """Only complete lines within max_bytes count (RFC 9309 §2.5)."""
    first = b"Sitemap: https://example.com/first.xml\n"
    body = first + b"# padding\n" * 20 + b"Sitemap: https://example.com/late.xml\n"
    assert sitemaps_from_robots(body, ROBOTS, max_bytes=len(first) + 5) == [
        "https://example.com/first.xml"
    ]
    cut_inside = len(first) + len(b"# padding\n") * 20 + 30
    assert sitemaps_from_robots(body, ROBOTS, max_bytes=cut_inside) == [
        "https://example.com/first.xml"
    ]
    assert len(sitemaps_from_robots(body, ROBOTS, max_bytes=len(body))) == 2


def test_max_bytes_applies_to_str_and_utf16() -> None:
    """The byte bound holds for str bodies and UTF-16 bodies too."""
    text = "Sitemap: https://example.com/a.xml\n" + "#" * 1000 + "\nSitemap: https://e.com/b.xml\n"
    assert sitemaps_from_robots(text, ROBOTS, max_bytes=100) == ["https://example.com/a.xml"]
    utf16 = b"\xff\xfe" + text.encode("utf-16-le")
    assert sitemaps_from_robots(utf16, ROBOTS, max_bytes=200) == ["https://example.com/a.xml"]


def test_rules_and_crawl_delay() -> None:
    """can_fetch and crawl_delay follow the groups; UA matching is case-insensitive."""
    body = b"User-agent: mybot\nDisallow: /private/\nCrawl-delay: 2.5\n\nUser-agent: *\nAllow: /\n"
    robots = parse_robots(body, ROBOTS)
    assert not robots.can_fetch("https://www.example.com/private/x", "MyBot/1.0")
    assert robots.can_fetch("https://www.example.com/private/x", "otherbot")
    assert robots.crawl_delay("mybot") == 2.5
    assert robots.crawl_delay("otherbot") is None


def test_crawl_delay_files() -> None:
    """Real files: amazon's Crawl-delay is read; twitter's rules parse."""
    assert parse_robots(read("astore.amazon.com-robots.txt"), ROBOTS).crawl_delay("bot") == 5.0
    assert parse_robots(read("twitter.com-robots.txt"), ROBOTS).sitemaps == ()


def test_value_semantics() -> None:
    """RobotsTxt compares and prints by its sitemaps only; it is frozen."""
    a = parse_robots(b"Sitemap: https://example.com/s.xml\nDisallow: /", ROBOTS)
    b = parse_robots(b"Sitemap: https://example.com/s.xml\n", ROBOTS)
    assert a == b
    assert repr(a) == "RobotsTxt(sitemaps=('https://example.com/s.xml',))"
    with pytest.raises(AttributeError):
        a.sitemaps = ()  # type: ignore[misc]
    assert isinstance(a, RobotsTxt)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<!DOCTYPE html><html><body>Sitemap: nope</body></html>",
        bytes(range(256)) * 4,
        b"\xfe\xff\x00",
        b"\xff\xfe\x00",
        b"Sitemap: \x00\x00\x00",
        b"Sitemap: https://exa mple.com/s.xml",
    ],
)
def test_garbage_never_raises(body: bytes) -> None:
    """HTML, binary, odd BOMs and broken values give no sitemaps and no exception."""
    robots = parse_robots(body, ROBOTS)
    assert robots.sitemaps == ()
    assert robots.can_fetch("https://www.example.com/", "bot")


def test_every_corpus_file_parses() -> None:
    """Every robots.txt in the corpus parses without an exception to absolute http(s) URLs."""
    files = [*sorted(require(DATA).iterdir()), CORPUS / "advertools" / "robots.txt"]
    assert len(files) >= 25
    for path in files:
        for url in parse_robots(path.read_bytes(), ROBOTS).sitemaps:
            assert url.startswith(("http://", "https://")), (path.name, url)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    """Arbitrary bytes give a RobotsTxt whose sitemaps are normalized http(s) URLs."""
    robots = parse_robots(body, ROBOTS)
    assert all(url.startswith(("http://", "https://")) for url in robots.sitemaps)
