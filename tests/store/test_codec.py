"""sitemap_reader.store.codec: the URL key and the stored blobs, pinned so that state files
written by one version stay readable by the next."""

from __future__ import annotations

import zlib

from hypothesis import given
from hypothesis import strategies as st

from sitemap_reader.store import (
    pack_children,
    pack_urls,
    unpack_children,
    unpack_urls,
    url_key,
    url_keys,
)
from tests.store.store_kit import ORIGIN


@given(st.text(max_size=200))
def test_url_key_is_a_stable_signed_64_bit_integer(url: str) -> None:
    """The key fits SQLite's INTEGER and does not depend on the process."""
    key = url_key(url)
    assert -(1 << 63) <= key < (1 << 63) and key == url_key(url)


def test_url_key_known_value() -> None:
    """BLAKE2b-64 of the UTF-8 URL, big-endian, signed (pinned so state files stay valid)."""
    assert url_key("https://example.com/") == 1493557592560457051
    assert url_key("https://example.com/a") != url_key("https://example.com/b")


@given(st.lists(st.text(max_size=80), max_size=20))
def test_url_keys_match_url_key(urls: list[str]) -> None:
    """The batch form gives each URL's own key, in order."""
    assert url_keys(urls) == [url_key(u) for u in urls]


def test_pack_urls_format_is_one_url_a_line() -> None:
    """The blob is the URLs, each followed by a newline, zlib level 6 (stored format)."""
    urls = [f"{ORIGIN}/p{i}" for i in range(3)]
    text = "".join(u + "\n" for u in urls).encode()
    assert pack_urls(urls) == zlib.compress(text, 6)
    assert pack_urls(iter(urls)) == zlib.compress(text, 6)
    assert unpack_urls(pack_urls([])) == []


def test_blobs_round_trip() -> None:
    """URL and children blobs give back what went in."""
    urls = [f"{ORIGIN}/p{i}" for i in range(100)]
    assert unpack_urls(pack_urls(urls)) == urls and unpack_urls(None) == []
    children = [(ORIGIN + "/a.xml", 5), (ORIGIN + "/b.xml", None)]
    assert unpack_children(pack_children(children)) == children
