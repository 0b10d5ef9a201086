"""The plain-run scanner (parse/scan.py): the same records, problems and error positions
as the element handlers, however the body is chunked."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import native, scan
from sitemap_reader.parse.parser import SitemapParser
from sitemap_reader.records import Problem, SitemapRef, UrlRecord


@pytest.fixture(autouse=True)
def pure_path() -> Iterator[None]:
    """The scanner is part of the pure-Python reader: these tests read with it."""
    with native.using("pure"):
        yield


NOW = datetime(2026, 1, 1, tzinfo=UTC)
URL = "https://example.com/sitemap.xml"
HEAD = b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'


@dataclass(frozen=True)
class Seen:
    """A parse in comparable form."""

    items: tuple[UrlRecord | SitemapRef, ...]
    problems: tuple[Problem, ...]
    complete: bool


@contextmanager
def scanning(on: bool) -> Iterator[None]:
    """Scanner switched on or off for the parsers made inside."""
    saved = scan.ENABLED
    scan.ENABLED = on
    try:
        yield
    finally:
        scan.ENABLED = saved


def run(body: bytes, sizes: list[int], on: bool, limits: Limits | None = None) -> Seen:
    """Feed ``body`` in chunks of the given sizes (cycled), scanner on or off."""
    with scanning(on):
        parser = SitemapParser(URL, now=NOW, limits=limits)
    items: list[UrlRecord | SitemapRef] = []
    pos, turn = 0, 0
    while pos < len(body) and not parser.done:
        size = sizes[turn % len(sizes)]
        items += parser.feed(body[pos : pos + size])
        pos, turn = pos + size, turn + 1
    items += parser.close()
    return Seen(tuple(items), tuple(parser.problems), parser.complete)


def entry(loc: str, lastmod: str = "2024-03-05", sep: str = "\n  ") -> str:
    return f"<url>{sep}<loc>{loc}</loc>{sep}<lastmod>{lastmod}</lastmod>{sep}</url>\n"


def plain_body(count: int, newline: str = "\n") -> bytes:
    text = "".join(entry(f"https://example.com/p/{i}?a=1&amp;b={i}") for i in range(count))
    return (HEAD + text.encode() + b"</urlset>\n").replace(b"\n", newline.encode())


def scanned_bytes(body: bytes, sizes: list[int]) -> int:
    """Bytes the scanner read while parsing ``body``."""
    total = 0
    original = scan.PlainScanner.scan

    def counting(self: scan.PlainScanner, data: bytes, depth: int) -> int:
        nonlocal total
        done = original(self, data, depth)
        total += done
        return done

    scan.PlainScanner.scan = counting  # type: ignore[method-assign]
    try:
        run(body, sizes, on=True)
    finally:
        scan.PlainScanner.scan = original  # type: ignore[method-assign]
    return total


def test_scanner_reads_most_of_a_plain_file() -> None:
    """On a plain 2,000-URL urlset fed in 64 KiB chunks the scanner reads over 80 %."""
    body = plain_body(2000)
    assert scanned_bytes(body, [65536]) > 0.8 * len(body)
    assert run(body, [65536], on=True) == run(body, [65536], on=False)


def test_crlf_file_is_scanned_with_the_same_records() -> None:
    """A CRLF file is scanned and gives the same records and problems."""
    body = plain_body(1500, "\r\n")
    assert scanned_bytes(body, [4096]) > 0.5 * len(body)
    assert run(body, [4096], on=True) == run(body, [4096], on=False)


def test_error_after_a_scanned_run_has_the_same_position() -> None:
    """Broken markup after a scanned run reports the same line and column."""
    broken = plain_body(800).replace(
        b"</urlset>", "<url><loc>https://example.com/é</loc><x\x01".encode()
    )
    on, off = run(broken, [8192], on=True), run(broken, [8192], on=False)
    assert on == off
    assert any(p.code == "xml-syntax" and "line" in p.message for p in on.problems)


def test_byte_by_byte_matches() -> None:
    """A small plain urlset fed one byte at a time reads the same as in one piece."""
    body = plain_body(20)
    assert run(body, [1], on=True) == run(body, [len(body)], on=False)


# --------------------------------------------------------------------------- differential

_PIECES = st.sampled_from(
    [
        "https://example.com/a",
        "/rel/path",
        "www.example.org/x",
        " https://example.com/sp ace ",
        "https://example.com/?a=1&amp;b=2",
        "https://example.com/&lt;x&gt;&quot;&apos;",
        "https://example.com/bare&b",
        "https://example.com/&#38;x",
        "https://example.com/&#0;",
        "https://example.com/&nbsp;",
        "https://fa.example.com/محصولات/دسته",
        "https://example.com/\r\nwrapped",
        "https://example.com/\rcr",
        "https://example.com/\x01ctl",
        "https://example.com/\ufffe",
        "https://example.com/]]>",
        "",
        "   ",
        "https://example.com/" + "y" * 300,
    ]
)
_GOOD = st.from_regex(r"https://example\.com/[a-z0-9/\-]{0,30}", fullmatch=True)
_DATES = st.sampled_from(["2024-03-05", "2024-03-05T10:00:00+02:00", "garbage", "", " 2023 "])
_FREQS = st.sampled_from(["daily", " Weekly ", "sometimes", ""])
_PRIOS = st.sampled_from(["0.5", "1.0", "7", "", "nan"])
_SEPS = st.sampled_from(["", "\n", "\r\n", "\n    ", "\t", "\r"])
_ODD = st.sampled_from(
    [
        "<!-- a comment -->",
        "<url><loc><![CDATA[https://example.com/cdata]]></loc></url>",
        '<url><loc a="1">https://example.com/attr</loc></url>',
        "<url><priority>0.3</priority><loc>https://example.com/order</loc></url>",
        "<url><loc>https://example.com/one</loc><loc>https://example.com/two</loc></url>",
        "<url><image:image><image:loc>https://example.com/i.jpg</image:loc></image:image>"
        "<loc>https://example.com/img</loc></url>",
        "<url><lastmod>2024-01-01</lastmod></url>",
        "<url><loc>https://example.com/bad<b></loc></url>",
        "<url><loc>https://example.com/e&x;</loc></url>",
        "</urlset><url>",
        "<?pi x?>",
        "<url>",
        "<wrap><url><loc>https://example.com/deep</loc></url></wrap>",
    ]
)


@st.composite
def plain_entries(draw: st.DrawFn) -> str:
    sep = draw(_SEPS)
    loc = draw(st.one_of(_GOOD, _GOOD, _PIECES))
    parts = [f"<url>{sep}<loc>{loc}</loc>{sep}"]
    if draw(st.booleans()):
        parts.append(f"<lastmod>{draw(_DATES)}</lastmod>{sep}")
    if draw(st.booleans()):
        parts.append(f"<changefreq>{draw(_FREQS)}</changefreq>{sep}")
    if draw(st.booleans()):
        parts.append(f"<priority>{draw(_PRIOS)}</priority>{draw(_SEPS)}")
    for _ in range(draw(st.integers(0, 3))):
        image = [f"<image:image>{draw(_SEPS)}<image:loc>{draw(_PIECES)}</image:loc>"]
        if draw(st.booleans()):
            image.append(f"{draw(_SEPS)}<image:title>{draw(_PIECES)}</image:title>")
        if draw(st.booleans()):
            image.append(f"<image:caption> a &amp; b </image:caption>{draw(_SEPS)}")
        parts.append("".join(image) + "</image:image>" + draw(_SEPS))
    parts.append("</url>" + draw(_SEPS))
    return "".join(parts)


@st.composite
def urlsets(draw: st.DrawFn) -> bytes:
    """A urlset mostly of plain entries (maybe invalid), with odd markup in places."""
    items = draw(st.lists(plain_entries(), min_size=1, max_size=120))
    for odd in draw(st.lists(_ODD, max_size=3)):
        items.insert(draw(st.integers(0, len(items))), odd)
    prefix = draw(
        st.sampled_from(
            [
                'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"',
                'xmlns:image="http://example.com/not-images"',
                "",
            ]
        )
    )
    head = HEAD.replace(b"<urlset ", f"<urlset {prefix} ".encode())
    tail = draw(st.sampled_from(["</urlset>\n", "", "</urlset>\n<junk/>"]))
    return head + "".join(items).encode() + tail.encode()


_LIMITS = st.sampled_from(
    [
        None,
        Limits(max_xml_token=256),
        Limits(max_xml_depth=2),
        Limits(max_urls_per_sitemap=7),
        Limits(max_text_length=100),
        Limits(max_xml_names=6),
        Limits(max_extensions_per_url=1),
    ]
)


@pytest.mark.slow
@settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    body=urlsets(),
    sizes=st.lists(st.one_of(st.integers(1, 300), st.integers(300, 5000)), min_size=1, max_size=5),
    limits=_LIMITS,
)
def test_scanner_on_and_off_agree(body: bytes, sizes: list[int], limits: Limits | None) -> None:
    """Random plain urlsets in random chunkings: records, problems and positions equal."""
    assert run(body, sizes, on=True, limits=limits) == run(body, sizes, on=False, limits=limits)


REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"


@pytest.mark.slow
@pytest.mark.skipif(not (REALDATA / "files").is_dir(), reason="../shared/realdata is absent")
def test_real_files_read_the_same_with_and_without_the_scanner() -> None:
    """Every real XML sitemap gives the same records and problems, scanner on or off."""
    files = sorted(p for p in (REALDATA / "files").iterdir() if p.suffix == ".xml")
    assert files
    scanned = 0
    for path in files:
        body = path.read_bytes()
        assert run(body, [65536], on=True) == run(body, [65536], on=False), path.name
        scanned += scanned_bytes(body, [65536])
    assert scanned > 0


def test_the_text_cap_holds_on_the_scanner_under_two_kib() -> None:
    """max_text_length below the scanner's 2 KiB slack: the scanner read runs of entries
    whose locations were over the cap (its search pattern had a negative size), so 31
    records came out where the expat path drops 30 over-cap locations. Both agree now."""
    entries = "".join(f"<url><loc>https://e.com/{i}/{'a' * 200}</loc></url>" for i in range(30))
    body = HEAD + f"<url><loc>https://e.com/first</loc></url>{entries}</urlset>".encode()
    limits = Limits(max_text_length=100)
    scanned, expat = (run(body, [len(body)], on, limits) for on in (True, False))
    assert scanned == expat
    assert [i.url for i in scanned.items] == ["https://e.com/first"]
    assert ("text-too-long", 30) in [(p.code, p.count) for p in scanned.problems]
