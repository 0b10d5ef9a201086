"""sitemap_reader.parse.sniff: a body's kind and codec, from its first bytes alone."""

from __future__ import annotations

import time

import pytest

from sitemap_reader.parse import sniff


def test_gzip_is_known_from_two_bytes() -> None:
    """One byte of the magic is undecided; two bytes decide either way."""
    assert sniff.is_gzip_prefix(b"\x1f") is None
    assert sniff.is_gzip_prefix(b"\x1f\x8b\x08") is True
    assert sniff.is_gzip_prefix(b"<?") is False
    assert sniff.is_gzip_prefix(b"") is False


def test_the_prolog_loses_a_bom_and_blank_space_only() -> None:
    """A UTF-8 BOM and leading ASCII blanks go; what follows is kept as it is."""
    assert sniff.strip_prolog(b"\xef\xbb\xbf\r\n \t<?xml ?>  ") == b"<?xml ?>  "
    assert sniff.strip_prolog(b"https://example.com/a\n") == b"https://example.com/a\n"


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"", sniff.EMPTY),
        (b'<?xml version="1.0"?><urlset xmlns="x"></urlset>', sniff.XML),
        (b"<rss><channel></channel></rss>", sniff.XML),
        (b'<?xml version="1.0"?>\n<!-- soft 404 -->\n<!DOCTYPE html><html></html>', sniff.HTML),
        (b"<HTML><body>Not found</body></HTML>", sniff.HTML),
        (b"https://example.com/a\nhttps://example.com/b\n", sniff.TEXT),
        (b"PK\x03\x04\x00\x00", sniff.BINARY),
        (b"\xff\xfe<\x00u\x00", sniff.XML16),
        (b"<\x00u\x00r\x00", sniff.XML16),
    ],
)
def test_the_kind_of_a_whole_body(head: bytes, kind: str) -> None:
    """At the end of the body its kind is always decided, from the bytes only."""
    assert sniff.classify(head, final=True) == kind


def test_a_short_start_waits_for_more_bytes() -> None:
    """Before the end, fewer than SNIFF_BYTES (or 4 wide bytes) are no verdict yet."""
    assert sniff.classify(b"", final=False) is None
    assert sniff.classify(b"<urlset>", final=False) is None
    assert sniff.classify(b"<\x00", final=False) is None
    assert sniff.classify(b"<urlset>" + b" " * sniff.SNIFF_BYTES, final=False) == sniff.XML


def test_a_run_of_comments_is_decided_at_once() -> None:
    """Hundreds of comments before a root that is no HTML: XML, without backtracking."""
    head = b"<!-- -->" * 400 + b"<urlset/>"
    started = time.thread_time()
    assert sniff.classify(head, final=True) == sniff.XML
    assert time.thread_time() - started < 1.0


@pytest.mark.parametrize(
    ("head", "kind", "expected"),
    [
        (b'<?xml version="1.0" encoding="UTF-8"?><urlset/>', sniff.XML, (None, None)),
        (b"<urlset/>", sniff.XML, (None, None)),
        (b'<?xml version="1.0" encoding="iso-8859-1"?><urlset/>', sniff.XML, ("iso8859-1", None)),
        (
            b'<?xml version="1.0" encoding="no-such-codec"?><urlset/>',
            sniff.XML,
            ("utf-8", "unknown encoding 'no-such-codec'; read as UTF-8"),
        ),
        (
            b'<?xml version="1.0" encoding="utf-16"?><urlset/>',
            sniff.XML,
            ("utf-8", "declared 'utf-16' does not match the bytes; read as UTF-8"),
        ),
        (b"\xff\xfe<\x00", sniff.XML16, ("utf-16", None)),
        (b"\xff\xfe\x00\x00<\x00\x00\x00", sniff.XML16, ("utf-32", None)),
        (b"\x00<\x00u", sniff.XML16, ("utf-16-be", None)),
        (b"<\x00\x00\x00u\x00\x00\x00", sniff.XML16, ("utf-32-le", None)),
    ],
)
def test_the_codec_of_an_xml_body(
    head: bytes, kind: str, expected: tuple[str | None, str | None]
) -> None:
    """The bytes have the last word over the declaration, and an overruled one says why."""
    assert sniff.xml_codec(head, kind) == expected
