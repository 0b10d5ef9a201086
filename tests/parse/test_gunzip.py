"""Tests for sitemap_reader.parse.gunzip: streaming, capped, multi-member gunzip."""

from __future__ import annotations

import gzip
import struct
import time
import tracemalloc
import zlib
from collections.abc import Iterable, Iterator
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_reader.errors import SitemapReaderError
from sitemap_reader.parse.gunzip import GZIP_MAGIC, PIECE, Gunzip, GunzipError
from tests.helpers import gz, parse_all_ways, urlset

TEXT = b"".join(b"https://example.com/page/%d\n" % i for i in range(5000))


def run(chunks: Iterable[bytes], max_output: int = 1 << 30, max_members: int = 64) -> bytes:
    """Feed every chunk, close, and return the joined output."""
    g = Gunzip(max_output, max_members)
    out = [piece for chunk in chunks for piece in g.feed(chunk)]
    g.close()
    assert g.output_bytes == sum(map(len, out))
    return b"".join(out)


def bytewise(data: bytes) -> Iterator[bytes]:
    """The data as one-byte chunks."""
    return (data[i : i + 1] for i in range(len(data)))


def error_code(chunks: Iterable[bytes], **kwargs: int) -> str:
    """The GunzipError code that feeding and closing raises."""
    with pytest.raises(GunzipError) as info:
        run(chunks, **kwargs)
    return info.value.code


def test_single_member() -> None:
    """One member, fed whole, decodes to the original."""
    assert run([gzip.compress(TEXT)]) == TEXT


def test_magic_constant() -> None:
    """GZIP_MAGIC is the two-byte gzip signature."""
    assert gzip.compress(b"x").startswith(GZIP_MAGIC)


def test_one_byte_at_a_time_is_identical() -> None:
    """Feeding one byte at a time gives the same output (members and padding included)."""
    data = gzip.compress(TEXT[:3000]) + gzip.compress(b"tail") + b"\0\0\0"
    assert run(bytewise(data)) == TEXT[:3000] + b"tail"


MULTI = gzip.compress(TEXT[:2000]) + gzip.compress(b"") + gzip.compress(TEXT[-500:]) + b"\0\0"


@settings(max_examples=100)
@given(st.lists(st.integers(0, len(MULTI)), max_size=8))
def test_any_chunking_gives_identical_output(cuts: list[int]) -> None:
    """However the input is split into chunks, the output is the same."""
    bounds = [0, *sorted(cuts), len(MULTI)]
    chunks = [MULTI[a:b] for a, b in pairwise(bounds)]
    assert run(chunks) == TEXT[:2000] + TEXT[-500:]


def test_pieces_are_bounded() -> None:
    """No yielded piece is larger than PIECE, even for highly compressible input."""
    g = Gunzip(1 << 30)
    sizes = [len(piece) for piece in g.feed(gzip.compress(b"a" * (5 * PIECE + 7)))]
    g.close()
    assert max(sizes) <= PIECE
    assert sum(sizes) == 5 * PIECE + 7


def test_multi_member() -> None:
    """Concatenated members all decode (a single decompressobj would stop after the first)."""
    data = gzip.compress(b"abc") + gzip.compress(b"defg") + gzip.compress(b"")
    assert run([data]) == b"abcdefg"


def test_member_boundary_split_inside_magic() -> None:
    """A chunk boundary between the two magic bytes of the next member is handled."""
    first, second = gzip.compress(b"one"), gzip.compress(b"two")
    data = first + second
    cut = len(first) + 1
    assert run([data[:cut], data[cut:]]) == b"onetwo"


def test_nul_padding_after_last_member_ignored() -> None:
    """NUL bytes after the last member (tape-style padding) are ignored."""
    assert run([gzip.compress(b"abc") + b"\0" * 100]) == b"abc"


def trailing_run(chunks: Iterable[bytes]) -> tuple[bytes, int]:
    """Feed and close; the output and the bytes counted as trailing."""
    g = Gunzip(1 << 30)
    out = b"".join(piece for chunk in chunks for piece in g.feed(chunk))
    g.close()
    return out, g.trailing


@pytest.mark.parametrize(
    "tail",
    [b"\n", b"\r\n", b" \t\n", b"\0" * 100, b"<html>junk</html>", b"\x1f\x00", b"\0\0\n\x1f\x8b"],
    ids=["newline", "crlf", "blanks", "nul-padding", "html", "magic-lookalike", "nul-then-junk"],
)
@pytest.mark.parametrize("size", [3, 200_000], ids=["tiny", "large"])
def test_bytes_after_last_member_are_counted_not_fatal(tail: bytes, size: int) -> None:
    """Bytes after the last complete member that start no member (a newline a CMS appends,
    NUL padding, junk) cost nothing decompressed and are counted; bytewise the same."""
    body = (TEXT * (1 + size // len(TEXT)))[:size]
    data = gzip.compress(body) + tail
    assert trailing_run([data]) == (body, len(tail))
    assert trailing_run(bytewise(data)) == (body, len(tail))


def test_junk_then_a_member_is_not_read() -> None:
    """Once junk follows the last member, a later gzip magic is junk too (never decoded)."""
    data = gzip.compress(b"abc") + b"\n" + gzip.compress(b"hidden")
    out, trailing = trailing_run([data])
    assert (out, trailing) == (b"abc", len(data) - len(gzip.compress(b"abc")))
    assert trailing_run(bytewise(data)) == (out, trailing)


def test_padding_between_members_is_not_trailing() -> None:
    """NUL padding followed by another member is padding, not trailing bytes."""
    data = gzip.compress(b"one") + b"\0" * 8 + gzip.compress(b"two")
    assert trailing_run([data]) == (b"onetwo", 0)
    assert trailing_run(bytewise(data)) == (b"onetwo", 0)


def test_lone_magic_byte_at_end_is_truncated() -> None:
    """A single 0x1f after the last member could be a cut member: truncated."""
    assert error_code([gzip.compress(b"abc") + b"\x1f"]) == "gzip-truncated"


def test_truncated() -> None:
    """A stream cut inside a member raises gzip-truncated at close, after yielding what it had."""
    data = gzip.compress(TEXT)
    g = Gunzip(1 << 30)
    out = b"".join(g.feed(data[: len(data) // 2]))
    with pytest.raises(GunzipError) as info:
        g.close()
    assert info.value.code == "gzip-truncated"
    assert out and TEXT.startswith(out)


def test_empty_stream_is_truncated() -> None:
    """No input at all is not a gzip stream."""
    assert error_code([]) == "gzip-truncated"


def test_corrupt_crc() -> None:
    """A wrong CRC32 in the trailer raises gzip-corrupt."""
    data = bytearray(gzip.compress(TEXT))
    crc = struct.unpack("<I", data[-8:-4])[0]
    data[-8:-4] = struct.pack("<I", crc ^ 1)
    assert error_code([bytes(data)]) == "gzip-corrupt"


def test_not_gzip() -> None:
    """A body that is not gzip at all raises gzip-corrupt (bad header)."""
    assert error_code([b"<?xml version='1.0'?><urlset/>"]) == "gzip-corrupt"


def test_corrupt_deflate_data() -> None:
    """Damaged compressed bytes raise gzip-corrupt, chained from zlib.error."""
    data = bytearray(gzip.compress(TEXT))
    data[20:40] = b"\xff" * 20
    with pytest.raises(GunzipError) as info:
        run([bytes(data)])
    assert info.value.code == "gzip-corrupt"
    assert isinstance(info.value.__cause__, zlib.error)


def test_members_cap() -> None:
    """More members than max_members raises limit-gzip-members; the cap itself is fine."""
    member = gzip.compress(b"x")
    assert run([member * 3], max_members=3) == b"xxx"
    assert error_code([member * 4], max_members=3) == "limit-gzip-members"


def test_output_cap_exact_is_allowed() -> None:
    """Output exactly at max_output is fine; one byte more is limit-bytes."""
    assert run([gzip.compress(b"a" * 100)], max_output=100) == b"a" * 100
    assert error_code([gzip.compress(b"a" * 101)], max_output=100) == "limit-bytes"


def test_output_up_to_cap_is_yielded_then_error_sticks() -> None:
    """At the cap, output up to the cap was yielded; later calls raise the same error."""
    g = Gunzip(max_output=1000)
    out: list[bytes] = []
    with pytest.raises(GunzipError) as info:
        out.extend(g.feed(gzip.compress(b"b" * 5000)))
    assert info.value.code == "limit-bytes"
    assert b"".join(out) == b"b" * 1000
    assert g.output_bytes == 1000
    with pytest.raises(GunzipError):
        list(g.feed(b"more"))
    with pytest.raises(GunzipError):
        g.close()


def test_error_is_a_sitemap_reader_error() -> None:
    """GunzipError belongs to the library's exception tree and carries a code."""
    err = GunzipError("gzip-corrupt", "bad")
    assert isinstance(err, SitemapReaderError)
    assert (err.code, str(err)) == ("gzip-corrupt", "bad")


def _zero_bomb(mebibytes: int) -> bytes:
    """A valid gzip of ``mebibytes`` MiB of zeros, about 1 KiB per MiB, built in milliseconds.

    After a full flush the compressor forgets its history, so every further MiB of zeros
    compresses to the same bytes: compress two blocks, repeat the second, fix the trailer.
    """
    block = bytes(1 << 20)
    enc = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = enc.compress(block) + enc.flush(zlib.Z_FULL_FLUSH)
    repeat = enc.compress(block) + enc.flush(zlib.Z_FULL_FLUSH)
    end = enc.flush()[:-8]
    crc = 0
    for _ in range(mebibytes):
        crc = zlib.crc32(block, crc)
    trailer = struct.pack("<II", crc, (mebibytes << 20) & 0xFFFFFFFF)
    return first + repeat * (mebibytes - 1) + end + trailer


def test_zero_bomb_helper_is_valid_gzip() -> None:
    """The bomb builder makes a correct gzip stream (checked on a small one)."""
    assert gzip.decompress(_zero_bomb(3)) == bytes(3 << 20)


def test_gigabyte_bomb_stops_at_cap_fast() -> None:
    """1 GiB of zeros (about 1 MB of gzip) stops at a 64 MiB cap quickly, in small pieces."""
    bomb = _zero_bomb(1024)
    assert len(bomb) < 2 << 20
    cap = 64 << 20
    g = Gunzip(max_output=cap)
    largest = 0
    tracemalloc.start()
    started = time.thread_time()  # CPU time: a busy machine does not stretch it
    with pytest.raises(GunzipError) as info:
        for start in range(0, len(bomb), 65536):
            for piece in g.feed(bomb[start : start + 65536]):
                largest = max(largest, len(piece))
    elapsed = time.thread_time() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert info.value.code == "limit-bytes"
    assert g.output_bytes == cap
    assert largest <= PIECE
    assert peak < 4 << 20
    assert elapsed < 2.0


@pytest.mark.parametrize("count", [2, 5000], ids=["tiny", "large"])
@pytest.mark.parametrize(
    "tail", [b"\n", b"\0" * 64, b"<html>oops</html>\n"], ids=["newline", "nul", "junk"]
)
def test_parser_keeps_every_url_before_trailing_bytes(count: int, tail: bytes) -> None:
    """A gzipped urlset plus stray bytes: every URL kept, complete, one non-fatal counted
    problem (whole, in chunks and byte by byte)."""
    body = urlset(*(f"<url><loc>https://example.com/p/{i}</loc></url>" for i in range(count)))
    data = gz(body) + tail
    result = parse_all_ways(data, "https://example.com/s.xml.gz")
    assert (result.format, len(result.urls), result.complete) == ("urlset", count, True)
    assert [(p.code, p.fatal) for p in result.problems] == [("gzip-trailing-bytes", False)]
    assert f"{len(tail)} byte(s)" in result.problems[0].message
