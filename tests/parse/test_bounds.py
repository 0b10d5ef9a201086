"""Hostile markup at the parse layer (issue 10): declared encodings, one huge token, deep
nesting, name floods, and the catch-all guard. Every case is parsed whole, in 7-byte
chunks and one byte at a time (``parse_all_ways``), with results required identical.

The markup bounds are measured at fixed offsets of the stream (every ``max_xml_token``
bytes), so small limits are used here to keep byte-by-byte feeding quick; the default
limits are exercised at full size in ``tests/hostile/test_hostile_markup.py``.
"""

from __future__ import annotations

import codecs

import pytest

import sitemap_reader as sr
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import sniff
from sitemap_reader.parse.parser import SitemapParser, parse
from tests.crawl.crawl_kit import gz
from tests.helpers import parse_all_ways

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
GOOD = ["https://example.com/a", "https://example.com/b"]
HEAD = (
    f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">'
    + "".join(f"<url><loc>{u}</loc></url>" for u in GOOD)
).encode()
TAIL = b"<url><loc>https://example.com/after</loc></url></urlset>"
#: Small markup bounds: each is crossed by a body of a few KiB.
SMALL = Limits(
    max_xml_token=256,
    max_xml_depth=8,
    max_xml_names=30,
    max_xml_name_chars=600,
    max_xml_namespaces=5,
)


def fatal(result: sr.ParseResult) -> str:
    """The code of the fatal problem (the first one listed)."""
    assert result.problems and result.problems[0].fatal, result.problems
    return result.problems[0].code


def urls(result: sr.ParseResult) -> list[str]:
    return [u.url for u in result.urls]


# --------------------------------------------------------------------------- encodings

DOC = f'<urlset xmlns="{NS}"><url><loc>https://example.com/a</loc></url></urlset>'
NOT_TEXT = ["zlib", "base64", "hex", "bz2", "uu", "quopri", "rot13", "zip", "base_64"]
MISMATCHED = ["undefined", "idna", "utf-16", "UTF-32", "utf-16-le", "utf_32_be", "cp037"]


@pytest.mark.parametrize("name", NOT_TEXT)
def test_bytes_codec_declared_is_read_as_utf8(name: str) -> None:
    """encoding="zlib" (base64, hex, rot13...): not a text encoding, read as UTF-8."""
    assert not codecs.lookup(name)._is_text_encoding
    result = parse_all_ways(f'<?xml version="1.0" encoding="{name}"?>{DOC}'.encode())
    assert urls(result) == ["https://example.com/a"] and result.complete
    problem = next(p for p in result.problems if p.code == "unknown-encoding")
    assert "not a text encoding" in problem.message and not problem.fatal


@pytest.mark.parametrize("name", MISMATCHED)
def test_codec_that_cannot_read_the_ascii_bytes_is_ignored(name: str) -> None:
    """UTF-16/32 (BOM-less), undefined, idna, EBCDIC declared on ASCII bytes: UTF-8."""
    result = parse_all_ways(f'<?xml version="1.0" encoding="{name}"?>{DOC}'.encode())
    assert urls(result) == ["https://example.com/a"] and result.complete
    assert "unknown-encoding" in {p.code for p in result.problems}


@pytest.mark.parametrize("length", [8, 40, 300, 3000])
def test_unknown_encoding_name_of_any_length(length: int) -> None:
    """encoding="UTF-AAAA...8" of any length: a problem, never expat's LookupError."""
    name = "UTF-" + "A" * length + "8"
    result = parse_all_ways(f'<?xml version="1.0" encoding="{name}"?>{DOC}'.encode())
    assert urls(result) == ["https://example.com/a"]
    assert "unknown-encoding" in {p.code for p in result.problems}


@pytest.mark.parametrize("name", ["", " ", "utf-8\x00x", "\u00e9t\u00e9", "<", "utf 8"])
def test_junk_encoding_names(name: str) -> None:
    """Empty, NUL-bearing, non-ASCII or spaced names: records and problems only."""
    body = f'<?xml version="1.0" encoding="{name}"?>{DOC}'.encode("utf-8", "replace")
    result = parse_all_ways(body)
    assert urls(result) == ["https://example.com/a"] or result.problems


@pytest.mark.parametrize(
    "codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]
)
def test_wide_bodies_are_read(codec: str) -> None:
    """Real UTF-16/UTF-32 bodies, with a BOM or BOM-less: read from how "<" is written."""
    label = codec.split("-")[0] + "-" + codec.split("-")[1]
    body = f'<?xml version="1.0" encoding="{label}"?>{DOC}'.encode(codec)
    result = parse_all_ways(body)
    assert urls(result) == ["https://example.com/a"] and result.complete, result.problems


def test_declared_latin1_is_still_transcoded() -> None:
    """A real single-byte encoding keeps working: ISO-8859-1 bytes decoded as declared."""
    body = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>'
        f'<urlset xmlns="{NS}"><url><loc>https://example.com/caf\u00e9</loc></url></urlset>'
    ).encode("latin-1")
    assert urls(parse_all_ways(body)) == ["https://example.com/caf%C3%A9"]


def test_xml_codec_reports_the_reason() -> None:
    """sniff.xml_codec names why a declaration was overruled."""
    codec, problem = sniff.xml_codec(b'<?xml version="1.0" encoding="utf-32"?><a/>', sniff.XML)
    assert codec == "utf-8" and problem is not None and "does not match" in problem


# --------------------------------------------------------------------------- the guard


def test_unexpected_exception_becomes_internal_problem() -> None:
    """A step that fails unexpectedly (here: a str fed instead of bytes) ends the body
    with an 'internal' problem naming the exception, never the exception itself."""
    parser = SitemapParser("https://example.com/sitemap.xml")
    assert parser.feed("<urlset>") == []  # type: ignore[arg-type]
    parser.close()
    assert parser.done and not parser.complete
    problem = parser.problems[0]
    assert problem.code == "internal" and problem.fatal
    assert "TypeError" in problem.message


# --------------------------------------------------------------------------- one huge token

CONSTRUCTS = {
    "attribute": (b'<url a="', b'"/>'),
    "attribute-with-gt": (b'<url a=">', b'"/>'),
    "comment": (b"<!--", b"-->"),
    "comment-with-gt": (b"<!-- >", b"-->"),
    "tag-name": (b"<a", b"/>"),
    "pi": (b"<?pi ", b"?>"),
    "end-tag": (b"</a", b">"),
}


@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_huge_token_ends_the_sitemap(construct: str) -> None:
    """One attribute, comment, tag name, PI or end tag far over max_xml_token:
    limit-token, the URLs before it kept, in every chunking."""
    start, end = CONSTRUCTS[construct]
    body = HEAD + start + b"x" * 2000 + end + TAIL
    result = parse_all_ways(body, limits=SMALL)
    assert fatal(result) == "limit-token"
    assert urls(result) == GOOD and not result.complete


def test_huge_doctype_ends_the_document() -> None:
    """A DOCTYPE whose public identifier is far over the cap: limit-token."""
    body = b'<?xml version="1.0"?><!DOCTYPE urlset PUBLIC "' + b"x" * 2000 + b'" "a.dtd">' + HEAD
    assert fatal(parse_all_ways(body, limits=SMALL)) == "limit-token"


def test_huge_dtd_declaration_ends_the_document() -> None:
    """One ATTLIST declaration with a huge default value inside the internal subset."""
    decl = b'<!ATTLIST urlset a CDATA "' + b"x" * 2000 + b'">'
    body = b'<?xml version="1.0"?><!DOCTYPE urlset [' + decl + b"]>" + HEAD[22:]
    assert fatal(parse_all_ways(body, limits=SMALL)) == "limit-token"


def test_tokens_under_the_cap_are_fine() -> None:
    """Attributes and comments just under the cap, many of them: nothing refused."""
    filler = b"".join(b'<!--%s--><x a="%s"/>' % (b"c" * 240, b"v" * 240) for _ in range(40))
    result = parse_all_ways(HEAD + filler + TAIL, limits=SMALL)
    assert result.complete and urls(result) == [*GOOD, "https://example.com/after"]


def test_long_text_and_cdata_are_not_tokens() -> None:
    """Character data and CDATA far over the token cap are text (their own cap applies)."""
    body = HEAD + b"<x>" + b"t" * 5000 + b"<![CDATA[" + b"c" * 5000 + b"]]></x>" + TAIL
    result = parse_all_ways(body, limits=SMALL)
    assert result.complete and "limit-token" not in {p.code for p in result.problems}


@pytest.mark.parametrize("size", range(200, 800, 37))
def test_token_verdict_never_depends_on_chunking(size: int) -> None:
    """Tokens around the cap (refused or not) give one result in every chunking."""
    parse_all_ways(HEAD + b'<url a="' + b"x" * size + b'"/>' + TAIL, limits=SMALL)


def test_huge_token_stops_within_two_caps() -> None:
    """With the default cap, a 60 MiB attribute fed in 64 KiB pieces ends the body
    within three pieces of its start: expat never rescans more than that."""
    parser = SitemapParser("https://example.com/sitemap.xml")
    parser.feed(HEAD + b'<url a="')
    fed = 0
    piece = b"x" * 65536
    while not parser.done and fed < 60 * 2**20:
        parser.feed(piece)
        fed += len(piece)
    assert parser.done and fed <= 3 * 65536
    assert parser.problems[0].code == "limit-token"


# --------------------------------------------------------------------------- nesting


def test_nesting_at_the_cap_is_fine() -> None:
    """urlset + 7 levels = 8 open elements (the cap): parsed completely."""
    body = HEAD + b"<a>" * 7 + b"</a>" * 7 + TAIL
    result = parse_all_ways(body, limits=SMALL)
    assert result.complete and len(result.urls) == 3


@pytest.mark.parametrize(
    ("where", "open_", "close"),
    [
        ("root", b"", b""),
        ("entry", b"<url><loc>https://example.com/c</loc>", b"</url>"),
        ("field", b"<url><loc>https://example.com/d", b"</loc></url>"),
        ("image", b'<url><loc>https://example.com/e</loc><image:image xmlns:image="x">', b""),
    ],
)
def test_deep_nesting_ends_the_sitemap(where: str, open_: bytes, close: bytes) -> None:
    """<a> nested past the cap (under the root, in an entry, in a field, in an
    extension): limit-nesting, the URLs before it kept."""
    body = HEAD + open_ + b"<a>" * 50 + b"</a>" * 50 + close + TAIL
    result = parse_all_ways(body, limits=SMALL)
    assert fatal(result) == "limit-nesting"
    assert urls(result)[:2] == GOOD and "https://example.com/after" not in urls(result)


def test_default_depth_cap_holds_a_million_levels() -> None:
    """3 MiB of <a> at the default cap: refused after 100 levels, in one pass."""
    result = parse(HEAD + b"<a>" * 2**20)
    assert fatal(result) == "limit-nesting" and urls(result) == GOOD


# --------------------------------------------------------------------------- names


def flood(template: str, count: int) -> bytes:
    return HEAD + "".join(template.format(n=n) for n in range(count)).encode() + TAIL


@pytest.mark.parametrize(
    "template",
    ["<t{n}/>", '<x a{n}="1"/>', "<url><loc>https://example.com/<t{n}/></loc></url>"],
)
def test_distinct_name_flood_ends_the_sitemap(template: str) -> None:
    """Distinct tag names, attribute names, or names hidden inside a field: limit-names."""
    result = parse_all_ways(flood(template, 200), limits=SMALL)
    assert fatal(result) == "limit-names" and urls(result)[:2] == GOOD


def test_dtd_names_are_counted() -> None:
    """Element names declared in the internal subset count like tag names."""
    decls = "".join(f"<!ELEMENT e{n} ANY>" for n in range(200)).encode()
    body = b'<?xml version="1.0"?><!DOCTYPE urlset [' + decls + b"]>" + HEAD[22:] + TAIL
    assert fatal(parse_all_ways(body, limits=SMALL)) == "limit-names"


def test_few_long_names_exhaust_the_character_budget() -> None:
    """Three distinct 250-character names: over the 600-character budget."""
    result = parse_all_ways(flood("<t{n}" + "x" * 250 + "/>", 3) + b" " * 300, limits=SMALL)
    assert fatal(result) == "limit-names"


def test_repeated_names_are_not_a_flood() -> None:
    """Thousands of elements reusing a few names never reach the names cap."""
    result = parse_all_ways(flood('<x a="1"><y b="2"/></x>', 500), limits=SMALL)
    assert result.complete and len(result.urls) == 3


def test_default_names_cap() -> None:
    """The default cap: 10,000 distinct tag names end the body with limit-names."""
    assert fatal(parse(flood("<t{n}/>", 10_000))) == "limit-names"


# --------------------------------------------------------------------------- namespaces


def test_namespace_flood_ends_the_sitemap() -> None:
    """One prefix redeclared with ever new URIs: limit-namespaces."""
    result = parse_all_ways(flood('<x xmlns:p="urn:{n}"/>', 100), limits=SMALL)
    assert fatal(result) == "limit-namespaces" and urls(result)[:2] == GOOD


def test_repeated_declaration_counts_once() -> None:
    """PageMap's xmlns on every element (the same URI each time) is one declaration."""
    entry = (
        "<url><loc>https://example.com/p{n}</loc>"
        '<PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0">'
        '<DataObject type="d"><Attribute name="a">v</Attribute></DataObject></PageMap></url>'
    )
    result = parse_all_ways(flood(entry, 300), limits=SMALL)
    assert result.complete and len(result.urls) == 303


# --------------------------------------------------------------------------- regressions


def test_regression_truncated_gzip_after_broken_xml() -> None:
    """Found by atheris: a truncated gzip of a document broken early gave gzip-truncated
    when fed whole and xml-syntax when chunked; the break first in the stream wins."""
    doc = b'<?xml version="1.0"?>\n<products a="1" b c="2">' + b"<p/>" * 1500
    body = gz(doc)[:-8]  # the trailer cut: every byte of the document decodes
    result = parse_all_ways(body)
    assert fatal(result) == "xml-syntax"


def test_regression_feed_without_entry_end_is_held_whole() -> None:
    """Found by atheris: a chunk holding no entry end was cut after its 9th byte."""
    body = b"<rss><channel><item><link>https://example.com/i</link></item></channel></rss>"
    assert urls(parse_all_ways(body)) == ["https://example.com/i"]


@pytest.mark.parametrize(
    "body",
    [
        HEAD + TAIL,
        gz(HEAD + TAIL)[:-8],
        HEAD + b'<url a="' + b"x" * 600,
        b'<?xml version="1.0" encoding="zlib"?>' + HEAD[22:] + TAIL,
    ],
)
def test_atheris_target_replays_without_atheris(body: bytes) -> None:
    """The coverage-guided target's check runs on its own (as on a replayed crash),
    under both limit profiles, whether or not atheris is installed."""
    from tests.parse import atheris_parser

    for flags in (b"\x00", b"\x01"):
        atheris_parser.one_input(flags + b"\x07" + body)
