"""What the store tests share: a complete sitemap read, and SQLite files made by others."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sitemap_reader.store import SitemapRead, pack_urls, url_key

ORIGIN = "https://example.com"


def read(
    url: str,
    pages: list[str],
    *,
    children: tuple[str, ...] | list[str] = (),
    fmt: str = "urlset",
    lastmod: int | None = 1_700_000_000,
) -> SitemapRead:
    """A complete read of ``url`` listing ``pages`` (and ``children`` for an index)."""
    urls = [ORIGIN + p for p in pages]
    return SitemapRead(
        url=ORIGIN + url,
        format=fmt,
        hash=os.urandom(16),
        records=len(urls),
        keys=[url_key(u) for u in urls],
        lastmods=[lastmod] * len(urls),
        urls_blob=pack_urls(urls) if urls else None,
        children=[(ORIGIN + c, None) for c in children],
    )


def snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    """A file's bytes, its mtime in ns, and the names beside it (no -wal/-shm appears)."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(path.parent))


def sqlite_file(path: Path, *statements: str) -> Path:
    """A SQLite database made by another program (rollback journal, as most are)."""
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path
