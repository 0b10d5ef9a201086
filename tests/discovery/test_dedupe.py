"""sitemap_reader.discovery.dedupe: run-wide dedupe of URLs in compact memory."""

from __future__ import annotations

import tracemalloc

from sitemap_reader.discovery.dedupe import UrlSet


def test_urlset_dedupes_and_grows() -> None:
    """UrlSet answers new/seen correctly across many resizes."""
    seen = UrlSet()
    urls = [f"https://example.com/p/{i}" for i in range(20_000)]
    assert all(seen.add(u) for u in urls)
    assert not any(seen.add(u) for u in urls[::7])
    assert len(seen) == 20_000 and urls[123] in seen and "https://example.com/x" not in seen


def test_urlset_memory_per_url() -> None:
    """Well under 64 bytes per unique URL (the table stores 8-byte hashes at <= 3/4 load)."""
    urls = [f"https://example.com/page/{i}" for i in range(60_000)]
    tracemalloc.start()
    seen = UrlSet()
    for url in urls:
        seen.add(url)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert current / len(urls) < 24
    assert seen.nbytes / len(urls) < 24
