"""Structural fuzzing that adds what tests/parse/test_fuzz.py leaves out: gzip members and
bombs, entity amplification, and the "no hang, no unbounded memory" half of the invariant.

Properties:

(a) a document split into random gzip members (NUL padding between some, inside 0-1
    more layers, fed in random chunks) parses exactly like the same document in one
    member;
(b) a gzip bomb (random filler repeated far past the cap, in a random member, under 1-2
    layers) ends the parse with a problem once the cap is crossed: ``done`` is set, the
    output stays within the cap plus one piece, and it takes well under a second;
(c) random entity declarations (nested, fanned out, parameter, external) never expand,
    never fetch, and never allocate more than a few MiB;
(d) the random documents of test_fuzz stay within a memory bound proportional to their
    size (measured with tracemalloc) and a time bound.

Short by default (a few seconds); ``SITEMAP_READER_FUZZ=long`` runs 1,000 to 5,000 examples
per property. Time bounds are on the thread's CPU time (:func:`time.thread_time`): a machine
busy with other work stretches the wall clock, not the work the parser does.
"""

from __future__ import annotations

import gzip
import itertools
import time
import tracemalloc
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import sniff
from sitemap_reader.parse.gunzip import PIECE
from sitemap_reader.parse.parser import SitemapParser
from tests.hostile.hostile_site import gzip_layer, gzip_member
from tests.parse.test_fuzz import LONG, NOW, NS, SITEMAP_URL, chunk_sizes, documents, feed

#: A small decompressed-bytes cap, so a bomb is crossed in milliseconds.
SMALL_CAP = 256 * 1024


def fuzz_settings(short: int, long: int) -> settings:
    """``short`` examples normally, ``long`` under SITEMAP_READER_FUZZ=long (a bomb or a
    traced parse costs more than a plain one, so the long counts differ per property)."""
    return settings(
        max_examples=long if LONG else short,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _members(data: bytes, cuts: list[int], pad: list[bool]) -> bytes:
    """``data`` as consecutive gzip members cut at ``cuts``; NUL padding after some."""
    points = sorted({min(max(c, 0), len(data)) for c in cuts} | {0, len(data)})
    out = bytearray()
    for n, (start, stop) in enumerate(itertools.pairwise(points)):
        out += gzip.compress(data[start:stop], mtime=0)
        if pad[n % len(pad)]:
            out += b"\0" * 8
    return bytes(out)


@fuzz_settings(100, 5_000)
@given(
    body=documents(),
    cuts=st.lists(st.integers(0, 4096), max_size=10),
    pad=st.lists(st.booleans(), min_size=1, max_size=4),
    outer=st.booleans(),
    sizes=chunk_sizes,
)
def test_gzip_members_parse_like_one_member(
    body: bytes, cuts: list[int], pad: list[bool], outer: bool, sizes: list[int]
) -> None:
    """(a) Splitting into members (and padding them) changes nothing."""
    one = gzip.compress(body, mtime=0)
    many = _members(body, cuts, pad)
    if outer:
        one, many = gzip.compress(one, mtime=0), gzip.compress(many, mtime=0)
    expected = feed(one, [])
    got = feed(many, sizes)
    assert (got.format, got.urls, got.sitemaps, got.complete) == (
        expected.format,
        expected.urls,
        expected.sitemaps,
        expected.complete,
    )


FILLERS = [b" ", b"\0", b"\n\t ", b"<!-- x -->", b"<url><loc>https://example.com/a</loc></url>"]
HEADS = [
    b"",
    f'<?xml version="1.0"?><urlset xmlns="{NS}">'.encode(),
    f'<urlset xmlns="{NS}"><url><loc>https://example.com/dir/'.encode(),
    b"https://example.com/dir/one\n",
    f'<sitemapindex xmlns="{NS}"><sitemap><loc>'.encode(),
]


def _bomb(head: bytes, filler: bytes, member: int, layers: int) -> Iterable[bytes]:
    block = filler * (65_536 // len(filler) + 1)
    pieces: list[Iterable[bytes]] = [
        gzip_member(head if n == 0 else b"", b"", 0, b"") for n in range(member)
    ]
    pieces.append(gzip_member(head if member == 0 else b"", block, 1 << 14, b""))  # ~1 GiB
    stream: Iterable[bytes] = (piece for part in pieces for piece in part)
    for _ in range(layers - 1):
        stream = gzip_layer(stream)
    return stream


@pytest.mark.slow
@fuzz_settings(30, 1_000)
@given(
    head=st.sampled_from(HEADS),
    filler=st.sampled_from(FILLERS),
    member=st.integers(0, 12),
    layers=st.integers(1, 2),
)
def test_gzip_bombs_end_at_the_cap(head: bytes, filler: bytes, member: int, layers: int) -> None:
    """(b) A bomb anywhere, under 1-2 layers: stopped at the cap with a problem, quickly."""
    parser = SitemapParser(SITEMAP_URL, limits=Limits(max_decompressed_bytes=SMALL_CAP), now=NOW)
    started = time.thread_time()
    fed = 0
    for piece in _bomb(head, filler, member, layers):
        fed += len(piece)
        parser.feed(piece)
        if parser.done:
            break
        assert fed < 64 * 1024 * 1024, "fed 64 MiB of gzip without stopping"
    parser.close()
    assert parser.done and parser.problems and not parser.complete
    assert parser.bytes_out <= SMALL_CAP + PIECE
    assert time.thread_time() - started < 2.0


@st.composite
def entity_documents(draw: st.DrawFn) -> bytes:
    """A urlset whose DTD declares random (nested, external, parameter) entities."""
    count = draw(st.integers(1, 8))
    decls = []
    for n in range(count):
        kind = draw(st.sampled_from(["text", "nested", "system", "public", "param"]))
        if kind == "text":
            decls.append(f'<!ENTITY e{n} "{draw(st.text("ab&;<", max_size=20))}">')
        elif kind == "nested" and n:
            refs = "".join(
                f"&e{draw(st.integers(0, n - 1))};" for _ in range(draw(st.integers(1, 12)))
            )
            decls.append(f'<!ENTITY e{n} "{refs}">')
        elif kind == "system":
            decls.append(
                f'<!ENTITY e{n} SYSTEM "{draw(st.sampled_from(["file:///etc/passwd", "http://127.0.0.1:9/x"]))}">'
            )
        elif kind == "public":
            decls.append(f'<!ENTITY e{n} PUBLIC "-//X//Y" "http://127.0.0.1:9/dtd">')
        else:
            decls.append(f"<!ENTITY % p{n} \"<!ENTITY e{n} 'x'>\"> %p{n};")
    uses = "".join(f"&e{draw(st.integers(0, count - 1))};" for _ in range(draw(st.integers(0, 30))))
    return (
        f'<?xml version="1.0"?><!DOCTYPE urlset [{"".join(decls)}]>'
        f'<urlset xmlns="{NS}"><url><loc>https://example.com/dir/{uses}</loc></url>'
        f"<url><loc>https://example.com/dir/plain</loc></url></urlset>"
    ).encode()


def _measured(body: bytes, sizes: list[int]) -> tuple[int, float]:
    """Peak traced allocation (bytes) and seconds of one chunked parse."""
    tracemalloc.start()
    started = time.thread_time()
    try:
        outcome = feed(body, sizes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert outcome.format in {"urlset", "sitemapindex", "text", "rss", "atom", "unknown"}
    return peak, time.thread_time() - started


@fuzz_settings(60, 5_000)
@given(body=entity_documents(), sizes=chunk_sizes)
def test_entities_never_expand(body: bytes, sizes: list[int]) -> None:
    """(c) Entity declarations: refused or harmless; small memory, no expansion."""
    peak, seconds = _measured(body, sizes)
    assert peak < 4 * 1024 * 1024 and seconds < 2.0
    for record in feed(body, sizes).urls:
        assert len(record.url) < 200 + len(body), record.url


@fuzz_settings(60, 5_000)
@given(body=documents(), sizes=chunk_sizes)
def test_structured_documents_bounded(body: bytes, sizes: list[int]) -> None:
    """(d) Memory in proportion to the input, and no hang, for any random document."""
    peak, seconds = _measured(body, sizes)
    assert peak < 4 * 1024 * 1024 + 200 * len(body), (peak, len(body))
    assert seconds < 2.0


def test_corrupt_gzip_trailer_is_a_problem() -> None:
    """A member with a corrupt CRC/size trailer: a problem, the parse not complete."""
    broken = gzip.compress(b"<urlset/>", mtime=0)[:-6] + b"\xff" * 6
    outcome = feed(broken, [3])
    assert outcome.codes and not outcome.complete


def test_html_sniffer_is_linear_on_comment_floods() -> None:
    """Regression (found by (b)): thousands of comments or blank runs before the root are
    classified at once; the HTML-start regex once backtracked exponentially on them."""
    for head in (b"<!-- x -->" * 2000, b"<!-- x --> \n\t " * 2000, b"<!---->" * 5000):
        started = time.thread_time()
        assert sniff.classify(head, final=False) == sniff.XML
        assert time.thread_time() - started < 0.5


# --------------------------------------------------------------------------- (e) markup bombs

#: Hostile stretches at the default bounds, each a prefix, a filler repeated far past
#: its bound and a suffix: one huge token of each kind, deep nesting, name floods.
MARKUP = {
    "attribute": (b'<x a="', b"v", b'"/>'),
    "comment": (b"<!--", b"c", b"-->"),
    "tag-name": (b"<t", b"n", b"/>"),
    "pi": (b"<?pi ", b"p", b"?>"),
    "nesting": (b"", b"<a>", b""),
}
MARKUP_CODES = {"limit-token", "limit-nesting", "limit-names", "limit-namespaces"}


def _markup_stream(kind: str, gzipped: bool, piece: int) -> Iterable[bytes]:
    """About 64 MiB of one hostile stretch after a good entry, in ``piece``-byte pieces."""
    head = f'<?xml version="1.0"?><urlset xmlns="{NS}"><url><loc>https://example.com/dir/g'
    head += "</loc></url>"
    stream: Iterable[bytes]
    if kind in MARKUP:
        start, fill, _ = MARKUP[kind]
        block = fill * (piece // len(fill) + 1)
        stream = itertools.chain(
            [head.encode() + start], itertools.repeat(block, (64 << 20) // len(block))
        )
    else:
        template = {
            "names": "<t{n}/>",
            "attributes": '<x a{n}="1"/>',
            "namespaces": '<x xmlns:p="urn:{n}"/>',
        }[kind]
        count = (64 << 20) // len(template)
        stream = itertools.chain(
            [head.encode()], (template.format(n=n).encode() for n in range(count))
        )
    if gzipped:
        stream = gzip_layer(stream)
    return stream


@fuzz_settings(12, 200)
@given(
    kind=st.sampled_from([*MARKUP, "names", "attributes", "namespaces"]),
    gzipped=st.booleans(),
    piece=st.sampled_from([4096, 65_536, 1 << 20]),
)
def test_markup_bombs_end_on_their_bound(kind: str, gzipped: bool, piece: int) -> None:
    """(e) A huge token, deep nesting or a name flood (plain or gzipped, fed in pieces of
    4 KiB to 1 MiB) ends on its named bound at the default limits: the good entry kept,
    a few MiB traced (expat allocates through Python, so its tables are traced too), and
    long before 64 MiB was read."""
    parser = SitemapParser(SITEMAP_URL, now=NOW)
    items = []
    fed = 0
    tracemalloc.start()
    started = time.thread_time()
    try:
        for chunk in _markup_stream(kind, gzipped, piece):
            items += parser.feed(chunk)
            fed += len(chunk)
            if parser.done:
                break
        items += parser.close()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parser.done and parser.problems[0].code in MARKUP_CODES, parser.problems
    assert [i.url for i in items] == ["https://example.com/dir/g"]
    assert parser.bytes_out < 8 << 20, parser.bytes_out
    assert peak < 16 << 20, peak
    assert time.thread_time() - started < 5.0
