"""The protocol checker (sitemap_reader.parse.checker); the ``check`` command that shows its
findings is tested in tests/cli/test_audit.py.

Time bounds on the checker are on the thread's CPU time (:func:`time.thread_time`): a
machine busy with other work stretches the wall clock, not the checker's work.
"""

from __future__ import annotations

import gzip
import time
from datetime import UTC, datetime

import pytest

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.checker import (
    BodyChecker,
    Finding,
    SiteCheck,
    check_robots,
    w3c_datetime,
)

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
BASE = "https://example.com/sitemap.xml"
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def findings(body: bytes, url: str = BASE, step: int | None = None) -> list[Finding]:
    """Check a body whole (or fed ``step`` bytes at a time)."""
    checker = BodyChecker(url, now=NOW)
    if step is None:
        checker.feed(body)
    else:
        for start in range(0, len(body), step):
            checker.feed(body[start : start + step])
    return checker.close()


def codes(found: list[Finding]) -> list[tuple[str, int | None, int]]:
    return [(f.code, f.line, f.count) for f in found]


def doc(*entries: str, root: str = "urlset", ns: str = NS) -> bytes:
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<{root} xmlns="{ns}">' if ns else f"<{root}>",
        *entries,
        f"</{root}>",
    ]
    return "\n".join(lines).encode()


CASES = [
    (doc("<url><loc>https://example.com/a</loc></url>"), []),
    (doc("<url><loc>https://example.com/a</loc></url>", ns="http://wrong/"), [("namespace", 2, 1)]),
    (doc("<url><loc>https://example.com/a</loc></url>", ns=""), [("namespace", 2, 1)]),
    (doc("<url><loc>https://other.org/a</loc></url>"), [("other-host", 3, 1)]),
    (doc(f"<url><loc>https://example.com/{'x' * 2100}</loc></url>"), [("url-too-long", 3, 1)]),
    (doc("<url><loc>/relative</loc></url>"), [("url-not-absolute", 3, 1)]),
    (doc("<url><loc>https://example.com/a b</loc></url>"), [("url-not-encoded", 3, 1)]),
    (doc("<url><loc>https://example.com/é</loc></url>"), [("url-not-encoded", 3, 1)]),
    (doc("<url><loc>https://example.com/?a='1'</loc></url>"), [("not-escaped", 3, 1)]),
    (doc("<url><loc>https://example.com/?a=&apos;1&apos;</loc></url>"), []),
    (doc("<url><loc>https://example.com/?a=1&b=2</loc></url>"), [("xml-syntax", 3, 1)]),
    (
        doc(
            "<url><loc>https://example.com/a</loc><lastmod>2024-1-5</lastmod></url>",
            "<url><loc>https://example.com/b</loc><lastmod>2024-01-05 10:00</lastmod></url>",
            "<url><loc>https://example.com/c</loc><lastmod>2024-02-30</lastmod></url>",
        ),
        [("bad-date", 3, 3)],
    ),
    (
        doc(
            "<url><loc>https://example.com/a</loc><lastmod>2024</lastmod></url>",
            "<url><loc>https://example.com/b</loc><lastmod>2024-05</lastmod></url>",
            "<url><loc>https://example.com/c</loc><lastmod>2024-05-06T10:30Z</lastmod></url>",
            "<url><loc>https://example.com/d</loc>"
            "<lastmod>2024-05-06T10:30:15.5+02:00</lastmod></url>",
        ),
        [],
    ),
    (
        doc("<url><loc>https://example.com/a</loc><lastmod>2027-01-01</lastmod></url>"),
        [("future-lastmod", 3, 1)],
    ),
    (
        doc("<url><loc>https://example.com/a</loc><changefreq>Daily</changefreq></url>"),
        [("bad-changefreq", 3, 1)],
    ),
    (
        doc(
            "<url><loc>https://example.com/a</loc><priority>1.5</priority></url>",
            "<url><loc>https://example.com/b</loc><priority>high</priority></url>",
            "<url><loc>https://example.com/c</loc><priority>0.8</priority></url>",
        ),
        [("bad-priority", 3, 2)],
    ),
    (doc("<url><lastmod>2024-01-01</lastmod></url>"), [("missing-loc", 3, 1)]),
    (doc("<sitemap><loc>https://example.com/s.xml</loc></sitemap>"), [("wrong-entry", 3, 1)]),
    (doc(), [("no-entries", None, 1)]),
    (doc("<url><loc>https://example.com/a</loc>", "</urlset>"), [("xml-syntax", 4, 1)]),
    (b"<html><body>hi</body></html>", [("not-a-sitemap", 1, 1)]),
    (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        f'<urlset xmlns="{NS}"><url><loc>https://example.com/\xe9</loc></url></urlset>'.encode(
            "latin-1"
        ),
        [("not-utf8", 1, 2), ("url-not-encoded", 2, 1)],
    ),
    (
        doc("<sitemap><loc>https://other.org/s.xml</loc></sitemap>", root="sitemapindex"),
        [("other-host", 3, 1)],
    ),
    (
        b"https://example.com/a\n\nhttps://example.com/b c\n/rel\n",
        [("url-not-encoded", 3, 1), ("url-not-absolute", 4, 1)],
    ),
]


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_rules_with_lines(body: bytes, expected: list[tuple[str, int | None, int]]) -> None:
    """Each rule is reported once per file with the line of its first case and a count."""
    found = codes(findings(body))
    # "not-utf8" can be reported by the declaration and by the bytes: compare as sets.
    assert sorted(found, key=str) == sorted(expected, key=str)


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_rules_byte_at_a_time(body: bytes, expected: list[tuple[str, int | None, int]]) -> None:
    """Fed one byte at a time, a body gives the same findings as fed whole."""
    assert findings(body, step=1) == findings(body)


def test_gzipped_body_is_checked_and_sized() -> None:
    """A gzipped sitemap is checked after gunzip; the uncompressed size is counted."""
    body = doc("<url><loc>https://example.com/a</loc><priority>9</priority></url>")
    checker = BodyChecker(BASE, now=NOW)
    checker.feed(gzip.compress(body))
    assert codes(checker.close()) == [("bad-priority", 3, 1)]
    assert checker.bytes_out == len(body)


@pytest.mark.parametrize("step", [None, 1, 7])
def test_a_gzip_file_sent_gzip_encoded_is_checked_as_the_reader_reads_it(
    step: int | None,
) -> None:
    """A .xml.gz sent with Content-Encoding: gzip arrives gzipped twice: both layers come
    off, as the reader takes them off, and the findings are the document's own (the
    checker used to see the inner gzip bytes: not-a-sitemap, not-utf8)."""
    body = doc("<url><loc>https://example.com/a</loc><priority>9</priority></url>")
    twice = gzip.compress(gzip.compress(body))
    assert codes(findings(twice, step=step)) == [("bad-priority", 3, 1)]


def test_a_third_gzip_layer_is_a_limit() -> None:
    """Three layers are more than the reader takes off: a check-limit finding, as the
    reader's limit-gzip-layers."""
    body = doc("<url><loc>https://example.com/a</loc></url>")
    found = findings(gzip.compress(gzip.compress(gzip.compress(body))))
    assert [f.code for f in found] == ["check-limit"]
    assert "gzip layers" in found[0].message


def test_over_50000_urls_and_line_of_the_first_extra() -> None:
    """The 50,001st entry is named with its line."""
    entries = [f"<url><loc>https://example.com/{i}</loc></url>" for i in range(50_002)]
    assert codes(findings(doc(*entries))) == [("too-many-urls", 50_003, 1)]


def test_over_50_mb_uncompressed() -> None:
    """More than 52,428,800 bytes uncompressed is a finding (gzip makes it cheap to send)."""
    pad = " " * 1_000_000  # character data: no markup bound applies
    entries = [pad] * 53 + ["<url><loc>https://example.com/a</loc></url>"]
    checker = BodyChecker(BASE, now=NOW)
    checker.feed(gzip.compress(doc(*entries), compresslevel=1))
    assert [f.code for f in checker.close()] == ["too-large"]


def test_entity_declarations_are_refused_fast() -> None:
    """A billion-laughs body is refused at its first declaration, in well under a second."""
    lol = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + b"".join(
            f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">'.encode() for i in range(1, 10)
        ).replace(b"&lol0;", b"&lol;")
        + b']><urlset xmlns="'
        + NS.encode()
        + b'"><url><loc>https://example.com/&lol9;</loc></url></urlset>'
    )
    started = time.thread_time()
    found = findings(lol)
    assert time.thread_time() - started < 1.0
    assert [f.code for f in found] == ["xml-forbidden"]


def test_deep_nesting_is_bounded() -> None:
    """A million nested elements stop at the nesting bound with one finding."""
    body = doc("<a>" * 1_000_000)
    started = time.thread_time()
    found = findings(body)
    assert time.thread_time() - started < 5.0
    depth = Limits().max_xml_depth
    assert [(f.code, f.message) for f in found] == [
        ("check-limit", f"elements nested more than {depth} deep; the rest was not checked")
    ]


def test_feeds_are_not_held_to_the_sitemap_rules() -> None:
    """An RSS feed is a valid sitemap form: no findings about it."""
    body = b'<rss version="2.0"><channel><item><link>x</link></item></channel></rss>'
    checker = BodyChecker(BASE, now=NOW)
    checker.feed(body)
    assert checker.close() == [] and checker.format == "rss"


def test_huge_token_ends_at_the_parsers_token_bound() -> None:
    """A 4 MiB attribute fed in 64 KiB chunks ends at max_xml_token, as in the parser."""
    body = doc(f'<url a="{"x" * (4 << 20)}"><loc>https://example.com/a</loc></url>')
    started = time.thread_time()
    found = findings(body, step=65536)
    assert time.thread_time() - started < 5.0
    assert [(f.code, f.line) for f in found] == [("check-limit", 3)]
    assert "longer than 65536 bytes" in found[0].message


def test_w3c_datetime() -> None:
    """W3C Datetime forms parse to UTC; other ISO-ish forms do not."""
    assert w3c_datetime("2024-05-06T10:30+02:00") == datetime(2024, 5, 6, 8, 30, tzinfo=UTC)
    assert w3c_datetime("2024") == datetime(2024, 1, 1, tzinfo=UTC)
    for bad in ("2024-05-06T10:30", "20240506", "2024-05-06T25:00Z", "May 6, 2024"):
        assert w3c_datetime(bad) is None, bad


def test_robots_sitemap_lines_must_be_absolute() -> None:
    """Relative Sitemap: lines in robots.txt are findings with their line."""
    body = b"User-agent: *\nSitemap: https://example.com/s.xml\nsitemap: /a.xml\nSitemap: b.xml\n"
    assert codes(check_robots(body, "r")) == [("robots-relative-sitemap", 3, 2)]


def test_duplicates_across_files_name_the_first() -> None:
    """A URL listed again in a later file is a duplicate there, naming the first file."""
    site = SiteCheck(now=NOW)
    first = site.checker("https://example.com/one.xml")
    first.feed(doc("<url><loc>https://example.com/a</loc></url>"))
    first.close()
    second = site.checker("https://example.com/two.xml")
    second.feed(doc("<url><loc>https://example.com/b</loc></url>",
                    "<url><loc>https://example.com/a</loc></url>"))  # fmt: skip
    second.close()
    assert site.duplicates("https://example.com/one.xml") == []
    (dupe,) = site.duplicates("https://example.com/two.xml")
    assert (dupe.code, dupe.line) == ("duplicate-url", 4)
    assert "first in https://example.com/one.xml" in dupe.message


def test_gzip_bombs_are_bounded() -> None:
    """Zeros stop at once as binary; a urlset of 80 MiB of blanks stops at the 64 MiB cap."""
    import zlib

    for head, expected in ((b"", ["not-a-sitemap"]), (doc()[:-10], ["check-limit", "too-large"])):
        packer = zlib.compressobj(1, zlib.DEFLATED, 31)
        filler = (b"\0" if not head else b" ") * (1 << 20)
        bomb = packer.compress(head) + b"".join(packer.compress(filler) for _ in range(80))
        bomb += packer.flush()
        assert len(bomb) < 1_000_000
        started = time.thread_time()
        checker = BodyChecker(BASE, now=NOW)
        for start in range(0, len(bomb), 65536):
            checker.feed(bomb[start : start + 65536])
        found = checker.close()
        assert time.thread_time() - started < 10.0
        assert [f.code for f in found] == expected
        assert checker.bytes_out <= 64 * 1024 * 1024 + 256 * 1024


def test_every_rule_has_a_severity() -> None:
    """Each rule names one of the three severities and a meaning."""
    from sitemap_reader.parse.checker import RULES, SEVERITIES

    assert all(rule.severity in SEVERITIES and rule.meaning for rule in RULES.values())


def test_messages_in_plain_words() -> None:
    """An unescaped & says so; a raw quote in <loc> is quoted as text, not a bytes repr."""
    (amp,) = findings(doc("<url><loc>https://example.com/?a=1&b=2</loc></url>"))
    assert amp.message.startswith("an unescaped & (write it as &amp;)")
    (quote,) = findings(doc("<url><loc>https://example.com/?a='1'</loc></url>"))
    assert (
        quote.message == "https://example.com/?a='1' has ' \" or > not written &apos; &quot; &gt;"
    )


def test_examples_keep_the_earliest_occurrences() -> None:
    """With examples=N a rule keeps its N earliest lines and the full count, however fed."""
    dates = [
        f"<url><loc>https://example.com/{i}</loc><lastmod>x{i}</lastmod></url>" for i in range(5)
    ]
    body = doc(*dates)
    whole, bytewise = BodyChecker(BASE, now=NOW, examples=3), BodyChecker(BASE, now=NOW, examples=3)
    whole.feed(body)
    for start in range(len(body)):
        bytewise.feed(body[start : start + 1])
    (found,) = whole.close()
    assert bytewise.close() == [found]
    assert found.count == 5 and [line for line, _ in found.examples] == [3, 4, 5]
    assert [text for _, text in found.examples] == [
        f"'x{i}' is not a W3C Datetime" for i in range(3)
    ]
