"""Hypothesis fuzzing of the parser invariant: any bytes give records and problems.

Properties, each checked by one-shot parsing *and* by feeding random chunks (the
results must be identical):

(i)   random bytes (behind interesting prefixes, or gzipped) never raise anything but
      ``SitemapReaderError``;
(ii)  random mutations (byte flips, truncation, insertion of ``&``, ``<``, ``]]>``, NUL,
      invalid UTF-8 ...) of valid sitemaps of every format, plain and gzipped, never raise
      and never emit a URL that is not a normalized http(s) URL;
(iii) a structural generator of random trees of valid and invalid tags, entities, CDATA,
      comments, declared encodings and 0-3 gzip layers;
(iv)  locs full of ``&``, written escaped, bare or in CDATA, come out exactly as meant.

Plus two example tables: ``&`` as any character reference never truncates a URL, and
every declared encoding (CJK multi-byte ones, unknown names) gives records or a problem.

Short by default (the file runs in well under 30 s); ``SITEMAP_READER_FUZZ=long`` (as
``make fuzz`` sets) runs 20,000 examples per property with no deadline.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_reader.errors import SitemapReaderError
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import SitemapParser, parse
from sitemap_reader.parse.robots import sitemaps_from_robots
from sitemap_reader.records import SitemapRef, UrlRecord

LONG = os.environ.get("SITEMAP_READER_FUZZ") == "long"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
SITEMAP_URL = "https://example.com/dir/sitemap.xml"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
FORMATS = {"urlset", "sitemapindex", "text", "rss", "atom", "unknown"}


def fuzz_settings(short: int) -> settings:
    """``short`` examples normally; 20,000 without deadline under SITEMAP_READER_FUZZ=long."""
    return settings(
        max_examples=20_000 if LONG else short,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --------------------------------------------------------------------------- oracle


@dataclass(frozen=True)
class Outcome:
    """A parse in comparable form; ``raised`` when it ended in our own error."""

    format: str
    urls: tuple[UrlRecord, ...]
    sitemaps: tuple[SitemapRef, ...]
    codes: tuple[str, ...]
    complete: bool
    raised: bool


def feed(
    body: bytes, sizes: list[int], url: str | None = SITEMAP_URL, limits: Limits | None = None
) -> Outcome:
    """Feed ``body`` in chunks of the given sizes (cycled); only our own error may escape."""
    parser = SitemapParser(url, now=NOW, limits=limits)
    items: list[UrlRecord | SitemapRef] = []
    raised = False
    try:
        pos, turn = 0, 0
        while pos < len(body):
            size = sizes[turn % len(sizes)] if sizes else len(body)
            items += parser.feed(body[pos : pos + size])
            pos, turn = pos + size, turn + 1
        items += parser.close()
    except SitemapReaderError:
        raised = True
    return Outcome(
        format=parser.format,
        urls=tuple(i for i in items if isinstance(i, UrlRecord)),
        sitemaps=tuple(i for i in items if isinstance(i, SitemapRef)),
        codes=tuple(p.code for p in parser.problems),
        complete=parser.complete,
        raised=raised,
    )


def assert_clean(outcome: Outcome) -> None:
    """Every emitted URL is a normalized absolute http(s) URL; the state is sane."""
    assert outcome.format in FORMATS
    for record in outcome.urls:
        assert record.url.startswith(("http://", "https://")), record.url
        assert normalize_url(record.url) == record.url, record.url
        for alternate in record.alternates:
            assert normalize_url(alternate.url) == alternate.url, alternate.url
        for image in record.images:
            assert normalize_url(image.loc) == image.loc, image.loc
    for ref in outcome.sitemaps:
        assert ref.url.startswith(("http://", "https://")), ref.url
        assert normalize_url(ref.url) == ref.url, ref.url
    if not outcome.complete:
        assert outcome.codes, "an incomplete parse must record why"


def check(body: bytes, sizes: list[int], limits: Limits | None = None) -> Outcome:
    """The full invariant: parse() works, and one-shot and chunked feeding agree."""
    try:
        result = parse(body, url=SITEMAP_URL, limits=limits)
    except SitemapReaderError:
        result = None
    whole = feed(body, [], limits=limits)
    chunked = feed(body, sizes, limits=limits)
    # An internal problem is a bug caught by the guard: the invariant holds, the code not.
    assert "internal" not in whole.codes and "internal" not in chunked.codes, whole.codes
    assert chunked == whole
    if result is not None:
        assert [r.url for r in result.urls] == [r.url for r in whole.urls]
        assert result.sitemaps == list(whole.sitemaps)
        assert result.format == whole.format
    assert_clean(whole)
    return whole


chunk_sizes = st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=8)


# --------------------------------------------------------------------------- (i) random bytes

PREFIXES = [
    b"",
    b"\x1f\x8b",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff",
    b'<?xml version="1.0"?>',
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xfe\xff",
    b"<urlset>",
    f'<urlset xmlns="{NS}"><url><loc>'.encode(),
    b"<rss><channel><item><link>",
    b"https://example.com/",
    b"<!DOCTYPE urlset [",
]


@fuzz_settings(200)
@given(prefix=st.sampled_from(PREFIXES), data=st.binary(max_size=2048), sizes=chunk_sizes)
def test_random_bytes_never_raise(prefix: bytes, data: bytes, sizes: list[int]) -> None:
    """(i) Random bytes behind a sniff-relevant prefix: only records and problems."""
    check(prefix + data, sizes)


@fuzz_settings(100)
@given(data=st.binary(max_size=2048), layers=st.integers(1, 3), sizes=chunk_sizes)
def test_random_bytes_gzipped_never_raise(data: bytes, layers: int, sizes: list[int]) -> None:
    """(i) Random bytes inside 1-3 valid gzip layers: only records and problems."""
    for _ in range(layers):
        data = gzip.compress(data, mtime=0)
    check(data, sizes)


# --------------------------------------------------------------------------- (ii) mutations

SEED_URLSET = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="{NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>https://example.com/dir/a?x=1&amp;y=2</loc>
    <lastmod>2024-03-05T14:30:00+00:00</lastmod>
    <changefreq>daily</changefreq>
    <priority>0.8</priority>
    <image:image><image:loc>https://example.com/i.jpg</image:loc></image:image>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/>
  </url>
  <url><loc><![CDATA[https://example.com/dir/b?q=a&l=fr]]></loc><lastmod>2024-03</lastmod></url>
  <url><loc>https://example.com/dir/%7Ec/./d/../e</loc></url>
</urlset>
""".encode()

SEED_INDEX = f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="{NS}">
  <sitemap><loc>https://example.com/dir/s1.xml.gz</loc><lastmod>2024-01-01</lastmod></sitemap>
  <sitemap><loc>https://example.com/dir/s2.xml?a=1&amp;b=2</loc></sitemap>
</sitemapindex>
""".encode()

SEED_RSS = b"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>t</title><link>https://example.com/</link>
<item><title>a</title><link>https://example.com/dir/post/1</link>
<pubDate>Thu, 05 Jan 2017 12:34:50 GMT</pubDate></item>
<item><guid>https://example.com/dir/guid.html</guid></item>
</channel></rss>
"""

SEED_ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><link href="https://example.com/"/>
<entry><link href="https://example.com/dir/e1"/><link rel="edit" href="https://example.com/x"/>
<updated>2003-12-13T18:30:02Z</updated></entry>
</feed>
"""

SEED_TEXT = b"\xef\xbb\xbfhttps://example.com/dir/1\r\nhttps://example.com/dir/2?a=1&b=2\njunk\n"

SEEDS = [SEED_URLSET, SEED_INDEX, SEED_RSS, SEED_ATOM, SEED_TEXT]
SEEDS += [gzip.compress(seed, mtime=0) for seed in SEEDS]

TOKENS = [
    b"&",
    b"<",
    b">",
    b"]]>",
    b"<![CDATA[",
    b"<!--",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"&amp;",
    b"&nbsp;",
    b"&#0;",
    b"&#x110000;",
    b"\r\n",
    b"</url>",
    b"<loc>",
    b"\x1f\x8b",
    b"\xef\xbb\xbf",
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A seed sitemap with 1-5 random mutations (applied to the raw, maybe gzipped bytes)."""
    body = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "duplicate"]))
        pos = draw(st.integers(0, len(body)))
        if kind == "flip" and pos < len(body):
            body[pos] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del body[pos:]
        elif kind == "insert":
            token = draw(st.one_of(st.sampled_from(TOKENS), st.binary(min_size=1, max_size=4)))
            body[pos:pos] = token
        elif kind == "delete":
            del body[pos : pos + draw(st.integers(1, 16))]
        else:
            body[pos:pos] = body[pos : pos + draw(st.integers(1, 64))]
    return bytes(body)


@fuzz_settings(200)
@given(body=mutated(), sizes=chunk_sizes)
def test_mutated_sitemaps_never_raise_nor_corrupt(body: bytes, sizes: list[int]) -> None:
    """(ii) Mutated valid sitemaps (every format, plain and gzipped): clean URLs only."""
    check(body, sizes)


@fuzz_settings(100)
@given(body=mutated(), sizes=chunk_sizes)
def test_mutated_then_gzipped(body: bytes, sizes: list[int]) -> None:
    """(ii) A mutated sitemap gzipped afterwards: the damage reaches the XML reader."""
    check(gzip.compress(body, mtime=0), sizes)


def test_seeds_are_valid() -> None:
    """The mutation seeds parse completely, so mutations start from real sitemaps."""
    for seed in SEEDS:
        outcome = check(seed, [7])
        assert outcome.complete, outcome.codes
        assert outcome.urls or outcome.sitemaps


# --------------------------------------------------------------------------- (iii) structure

NAMESPACES = {
    "": NS,
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "xhtml": "http://www.w3.org/1999/xhtml",
}
ROOTS = ["urlset", "sitemapindex", "rss", "feed", "rdf:RDF", "html", "products", "sit:urlset"]
TAGS = [
    "url",
    "sitemap",
    "loc",
    "lastmod",
    "changefreq",
    "priority",
    "image:image",
    "image:loc",
    "image:title",
    "video:video",
    "video:title",
    "video:thumbnail_loc",
    "video:content_loc",
    "video:player_loc",
    "video:duration",
    "video:rating",
    "news:news",
    "news:publication",
    "news:name",
    "news:language",
    "news:publication_date",
    "news:title",
    "xhtml:link",
    "channel",
    "item",
    "entry",
    "link",
    "guid",
    "pubDate",
    "updated",
    "unknown",
    "x:y",
    "sit:loc",
]
VALUES = [
    "https://example.com/dir/page",
    "http://EXAMPLE.com:80/dir/./a/../b?x=1&y=2#frag",
    "https://bücher.example/straße",
    "/relative/path",
    "relative",
    "//example.com/proto-relative",
    "mailto:a@example.com",
    "javascript:alert(1)",
    "https://ex ample.com/",
    "http://[::1]/v6",
    "https://example.com/" + "a" * 9000,
    "2024-03-05",
    "2024-03-05T14:30:00Z",
    "2024-13-45T99:99",
    "Thu, 05 Jan 2017 12:34:50 GMT",
    "daily",
    "WEEKLY",
    "sometimes",
    "0.5",
    "1.7",
    "NaN",
    "-0",
    "yes",
    "",
    " \t\n ",
]
ENTITIES = [
    "&amp;",
    "&lt;",
    "&gt;",
    "&quot;",
    "&apos;",
    "&#38;",
    "&#x2F;",
    "&#xA0;",
    "&nbsp;",
    "&undefined;",
    "&",
    "&#0;",
    "&#xD800;",
]

free_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)


def leaf() -> st.SearchStrategy[str]:
    """Character-level content: values, escaped text, entities, CDATA, comments, PIs."""
    return st.one_of(
        st.sampled_from(VALUES).map(escape),
        free_text.map(escape),
        st.sampled_from(ENTITIES),
        free_text.filter(lambda t: "]]>" not in t).map(lambda t: f"<![CDATA[{t}]]>"),
        free_text.filter(lambda t: "--" not in t and not t.endswith("-")).map(
            lambda t: f"<!--{t}-->"
        ),
        st.just("<?pi some data?>"),
    )


@st.composite
def attributes(draw: st.DrawFn, tag: str) -> str:
    """Attributes for a tag; hreflang links get rel/hreflang/href most of the time."""
    attrs: dict[str, str] = {}
    if tag in ("xhtml:link", "link") and draw(st.booleans()):
        attrs["rel"] = draw(st.sampled_from(["alternate", "self", "edit", ""]))
        attrs["hreflang"] = draw(st.sampled_from(["de", "en-GB", "x-default", ""]))
        attrs["href"] = draw(st.sampled_from(VALUES))
    if draw(st.integers(0, 9)) == 0:
        attrs[draw(st.sampled_from(["xmlns", "xmlns:image", "type", "a"]))] = draw(
            st.sampled_from([*NAMESPACES.values(), "urn:other", ""])
        )
    return "".join(f" {name}={quoteattr(value)}" for name, value in attrs.items())


@st.composite
def element(draw: st.DrawFn, depth: int) -> str:
    """A random element: valid most of the time, sometimes mis-closed or unclosed."""
    tag = draw(st.sampled_from(TAGS))
    attrs = draw(attributes(tag))
    if depth <= 0 or draw(st.integers(0, 5)) == 0:
        children = [draw(leaf()) for _ in range(draw(st.integers(0, 2)))]
    else:
        kids = st.one_of(leaf(), element(depth - 1))
        children = [draw(kids) for _ in range(draw(st.integers(0, 4)))]
    inner = "".join(children)
    if not inner and draw(st.booleans()):
        return f"<{tag}{attrs}/>"
    shape = draw(st.integers(0, 30))
    if shape == 0:
        return f"<{tag}{attrs}>{inner}</{draw(st.sampled_from(TAGS))}>"  # maybe mis-closed
    if shape == 1:
        return f"<{tag}{attrs}>{inner}"  # unclosed
    return f"<{tag}{attrs}>{inner}</{tag}>"


def root_attributes(root: str, declare: list[str]) -> str:
    """Namespace declarations on the root for the chosen prefixes."""
    out = []
    for prefix in declare:
        if prefix == "sit":
            out.append(f' xmlns:sit="{NS}"')
        elif prefix == "atom":
            out.append(' xmlns="http://www.w3.org/2005/Atom"')
        elif prefix:
            out.append(f' xmlns:{prefix}="{NAMESPACES[prefix]}"')
        elif root not in ("rss", "feed"):
            out.append(f' xmlns="{NS}"')
    return "".join(out)


ENCODINGS = [
    ("utf-8", "UTF-8"),
    ("utf-8", None),
    ("utf-16", "UTF-16"),
    ("utf-16-le", "UTF-16"),
    ("latin-1", "ISO-8859-1"),
    ("cp1252", "windows-1252"),
    ("ascii", "US-ASCII"),
    ("shift_jis", "Shift_JIS"),
    ("euc-jp", "EUC-JP"),
    ("gb2312", "GB2312"),
    ("big5", "Big5"),
    ("koi8-r", "KOI8-R"),
    ("utf-8", "x-no-such-charset"),
    # Hostile declarations (issue 10): codecs that are no text encoding, codecs that
    # cannot read the ASCII bytes they are declared on, names expat cannot look up.
    ("utf-8", "zlib"),
    ("utf-8", "base64"),
    ("utf-8", "hex"),
    ("utf-8", "bz2"),
    ("utf-8", "uu"),
    ("utf-8", "quopri"),
    ("utf-8", "rot13"),
    ("utf-8", "undefined"),
    ("utf-8", "idna"),
    ("utf-8", "UTF-16"),
    ("utf-8", "UTF-32"),
    ("utf-8", "cp037"),
    ("utf-8", "UTF-" + "A" * 120 + "8"),
    ("utf-32", "UTF-32"),
    ("utf-32-le", "UTF-32"),
    ("utf-32-be", "UTF-32"),
    ("utf-16-be", "UTF-16"),
]


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """A random XML document, encoded as declared, inside 0-3 gzip layers."""
    root = draw(st.sampled_from(ROOTS))
    declare = draw(st.lists(st.sampled_from(["", "image", "video", "news", "xhtml", "sit"])))
    body = "".join(draw(st.lists(element(3), max_size=6)))
    text = f"<{root}{root_attributes(root, declare)}>{body}</{root}>"
    codec, declared = draw(st.sampled_from(ENCODINGS))
    if declared is not None:
        text = f'<?xml version="1.0" encoding="{declared}"?>\n{text}'
    if draw(st.booleans()):
        text = draw(st.sampled_from(["\ufeff", " \n", "<!-- lead -->", "\n\t"])) + text
    data = text.encode(codec, "xmlcharrefreplace")
    for _ in range(draw(st.integers(0, 3))):
        data = gzip.compress(data, mtime=0)
    return data


@fuzz_settings(150)
@given(body=documents(), sizes=chunk_sizes)
def test_structured_documents(body: bytes, sizes: list[int]) -> None:
    """(iii) Random trees, entities, CDATA, encodings, gzip layers: chunking never matters."""
    check(body, sizes)


@fuzz_settings(50)
@given(body=documents())
def test_structured_documents_byte_by_byte(body: bytes) -> None:
    """(iii) The same documents fed one byte at a time give the one-shot result."""
    assert feed(body, [1]) == feed(body, [])


# --------------------------------------------------------------------------- (iv) exact URLs

query_text = st.text(alphabet="ab01=&%/?-._~", max_size=24)


@st.composite
def url_lists(draw: st.DrawFn) -> list[str]:
    """Absolute URLs whose queries are full of ``&`` (never followed by ``name;``)."""
    paths = st.text(alphabet="abcxyz019-._~/", max_size=12)
    return [
        f"https://example.com/dir/{draw(paths)}?{draw(query_text)}"
        for _ in range(draw(st.integers(1, 6)))
    ]


@fuzz_settings(150)
@given(
    locs=url_lists(),
    raw=st.lists(st.booleans(), min_size=6, max_size=6),
    cdata=st.lists(st.booleans(), min_size=6, max_size=6),
    sizes=chunk_sizes,
)
def test_ampersands_never_corrupt_urls(
    locs: list[str], raw: list[bool], cdata: list[bool], sizes: list[int]
) -> None:
    """(iv) Locs written escaped, raw (bare ``&``) or in CDATA come out exactly as meant."""
    entries = []
    for loc, bare, wrapped in zip(locs, raw, cdata, strict=False):
        text = f"<![CDATA[{loc}]]>" if wrapped else (loc if bare else escape(loc))
        entries.append(f"<url><loc>{text}</loc></url>")
    body = f'<urlset xmlns="{NS}">{"".join(entries)}</urlset>'.encode()
    outcome = check(body, sizes)
    expected = [u for u in (normalize_url(loc) for loc in locs) if u is not None]
    assert [r.url for r in outcome.urls] == expected
    text_outcome = check("\n".join(locs).encode(), sizes)
    assert [r.url for r in text_outcome.urls] == expected


# --------------------------------------------------------------------------- character references

CHAR_REFS = [
    "&#38;",
    "&#x26;",
    "&#00000038;",
    "&#000000038;",
    "&#x0000000026;",
    "&#38",
    "&#x26",
    "&amp",
    "&amp;amp;",
]


def test_character_references_never_truncate_urls() -> None:
    """An ``&`` written as any character reference, well-formed or not, never cuts the URL.

    Each loc means ``?x=1&y=2``: the URL must come out exactly so, or be dropped with a
    problem, but never as ``?x=1&`` (a ``#`` turned into a fragment) or another prefix.
    """
    wrong = {}
    for ref in CHAR_REFS:
        loc = f"https://example.com/a?x=1{ref}y=2"
        body = f'<urlset xmlns="{NS}"><url><loc>{loc}</loc></url></urlset>'.encode()
        outcome = check(body, [3])
        got = [r.url for r in outcome.urls]
        literal = {"&amp;amp;": "&amp;", "&amp": "&amp"}.get(ref)  # the text as written
        ok = got == ["https://example.com/a?x=1&y=2"] or (
            literal is not None and got == [f"https://example.com/a?x=1{literal}y=2"]
        )
        if not ok and not (got == [] and outcome.codes):
            wrong[ref] = got
    assert wrong == {}


@pytest.mark.parametrize(("codec", "declared"), ENCODINGS)
def test_declared_encodings_never_raise(codec: str, declared: str | None) -> None:
    """Every declared encoding (multi-byte CJK ones, unknown names): records or a problem."""
    body = (
        f'<?xml version="1.0" encoding="{declared or "UTF-8"}"?>\n<urlset xmlns="{NS}">'
        "<url><loc>https://example.com/dir/a</loc></url></urlset>"
    ).encode(codec)
    outcome = check(body, [5])
    assert [r.url for r in outcome.urls] == ["https://example.com/dir/a"] or outcome.codes


# --------------------------------------------------------------------------- (v) hostile markup

#: Small markup bounds so that random documents of a few KiB cross them.
SMALL = Limits(
    max_xml_token=128,
    max_xml_depth=6,
    max_xml_names=20,
    max_xml_name_chars=300,
    max_xml_namespaces=4,
)
#: Markup bound codes: one of them, or another problem, ends a hostile document.
BOUND_CODES = {"limit-token", "limit-nesting", "limit-names", "limit-namespaces"}


@st.composite
def hostile_markup(draw: st.DrawFn) -> bytes:
    """A urlset with good entries around one hostile stretch: a huge token (attribute,
    comment, tag name, PI, DOCTYPE), deep nesting, or a flood of distinct names or
    namespace declarations, at random sizes around the small bounds."""
    kind = draw(
        st.sampled_from(
            [
                "attribute",
                "comment",
                "tag",
                "pi",
                "doctype",
                "nest",
                "names",
                "attributes",
                "namespaces",
                "field-names",
            ]
        )
    )
    size = draw(st.integers(0, 600))
    count = draw(st.integers(0, 40))
    good = "".join(f"<url><loc>https://example.com/dir/g{n}</loc></url>" for n in range(3))
    stretch = {
        "attribute": f'<x a="{"v" * size}"/>',
        "comment": f"<!--{'c' * size}-->",
        "tag": f"<t{'n' * size}/>",
        "pi": f"<?pi {'p' * size}?>",
        "doctype": "",
        "nest": "<a>" * count + "</a>" * draw(st.integers(0, count)),
        "names": "".join(f"<t{n}/>" for n in range(count)),
        "attributes": "".join(f'<x a{n}="1"/>' for n in range(count)),
        "namespaces": "".join(f'<x xmlns:p="urn:{n}"/>' for n in range(count)),
        "field-names": f"<url><loc>https://example.com/{''.join(f'<t{n}/>' for n in range(count))}"
        "</loc></url>",
    }[kind]
    doctype = f'<!DOCTYPE urlset PUBLIC "{"d" * size}" "x.dtd">' if kind == "doctype" else ""
    padding = " " * draw(st.integers(0, 400))  # moves the stretch across measuring offsets
    text = (
        f'<?xml version="1.0"?>{doctype}<urlset xmlns="{NS}">{padding}{good}{stretch}{good}'
        "</urlset>"
    )
    return text.encode()


@fuzz_settings(150)
@given(body=hostile_markup(), sizes=chunk_sizes)
def test_hostile_markup_never_raises(body: bytes, sizes: list[int]) -> None:
    """(v) Huge tokens, deep nesting, name floods: records and problems, chunk-independent;
    a document that ends early ends on a named problem, with the first good URLs kept."""
    outcome = check(body, sizes, SMALL)
    if not outcome.complete:
        assert outcome.codes[0] in BOUND_CODES | {"xml-syntax"}, outcome.codes
    if b"<!DOCTYPE" not in body:  # a DOCTYPE comes before the good entries
        good = [f"https://example.com/dir/g{n}" for n in range(3)]
        assert [r.url for r in outcome.urls][:3] == good


@fuzz_settings(40)
@given(body=hostile_markup())
def test_hostile_markup_byte_by_byte(body: bytes) -> None:
    """(v) The hostile documents fed one byte at a time give the one-shot result."""
    assert feed(body, [1], limits=SMALL) == feed(body, [], limits=SMALL)


@fuzz_settings(100)
@given(
    name=st.one_of(
        st.sampled_from([e for _, e in ENCODINGS if e]),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=30),
    ),
    sizes=chunk_sizes,
)
def test_any_declared_encoding_name(name: str, sizes: list[int]) -> None:
    """(v) Any text as the declared encoding name: the URL read, or a problem; no raise."""
    quoted = name.replace('"', "").replace("<", "").replace(">", "")
    body = (
        f'<?xml version="1.0" encoding="{quoted}"?>\n<urlset xmlns="{NS}">'
        "<url><loc>https://example.com/dir/a</loc></url></urlset>"
    ).encode("utf-8", "replace")
    outcome = check(body, sizes)
    assert [r.url for r in outcome.urls] == ["https://example.com/dir/a"] or outcome.codes


@fuzz_settings(150)
@given(
    body=st.one_of(
        st.binary(max_size=2048),
        st.text(max_size=500).map(lambda t: ("Sitemap: " + t).encode("utf-8", "replace")),
        st.lists(st.sampled_from(VALUES), max_size=8).map(
            lambda vs: "\n".join(f"Sitemap: {v}" for v in vs).encode()
        ),
    ),
    as_text=st.booleans(),
)
def test_sitemaps_from_robots_never_raises(body: bytes, as_text: bool) -> None:
    """(v) sitemaps_from_robots on any bytes (or text): a list of absolute URLs."""
    value: bytes | str = body.decode("utf-8", "replace") if as_text else body
    found = sitemaps_from_robots(value, "https://example.com/robots.txt")
    assert all(u.startswith(("http://", "https://")) for u in found)
