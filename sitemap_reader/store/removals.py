"""Which URLs left the site's sitemaps: the removal candidates of a state file.

Theory of operation
-------------------
A complete read of a sitemap that the state knew notes two kinds of candidates, in the
same transaction as the read's own rows: the URLs the previous read listed and this one
does not (table ``pending``: :func:`note_missing_urls`), and, for an index, the children
it listed last time and not now (table ``gone``: :func:`note_dropped_children`). They are
resolved at the end of a run, not at once, because a URL may have moved to a sitemap read
later in the same run; a run killed before that leaves them for the next one, so no
removal is ever lost.

A URL is reported removed only when the sitemap that last listed it was read again
completely and no longer lists it (or its index dropped that sitemap), no sitemap
listed it again in the same run, and it was never seen in two sitemaps at once (for a
URL listed by several sitemaps, keys alone cannot show that every one of them dropped
it, so it is never reported rather than reported wrongly).

Every function here runs inside the caller's write transaction, under its lock.
"""

from __future__ import annotations

import sqlite3
from itertools import repeat
from typing import Any

from sitemap_reader.records import UrlRecord
from sitemap_reader.store.codec import (
    SitemapRead,
    StoredSitemap,
    from_seconds,
    in_range,
    unpack_children,
    url_keys,
    urls_or_none,
)

#: Removal candidates resolved per round trip at the end of a run.
RESOLVE_CHUNK = 1024
#: Where :func:`candidates` starts: below every (key, sitemap) pair.
FIRST: tuple[int, int] = (-(1 << 63), -1)

_RESOLVE = """
SELECT p.key, p.sitemap, p.url, u.sitemap, u.shared, u.lastmod, s.url
FROM pending AS p
LEFT JOIN urls AS u ON u.key = p.key
LEFT JOIN sitemaps AS s ON s.id = p.sitemap
WHERE (p.key, p.sitemap) > (?, ?)
ORDER BY p.key, p.sitemap
LIMIT ?
"""


def note_dropped_children(db: sqlite3.Connection, old: StoredSitemap, read: SitemapRead) -> None:
    """Children the index listed last time and not now: candidates for ``gone``."""
    listed = {u for u, _ in read.children}
    for url, _ in unpack_children(old.children):
        if url not in listed:
            db.execute("INSERT OR IGNORE INTO gone SELECT id FROM sitemaps WHERE url = ?", (url,))


def note_missing_urls(
    db: sqlite3.Connection, sitemap_id: int, old_urls: bytes | None, keys: list[int]
) -> None:
    """URLs the previous read listed and this one does not: removal candidates.

    A damaged blob gives none: which URLs left cannot be known (the new read
    replaces it)."""
    texts = urls_or_none(old_urls)
    if not texts:
        return
    now = set(keys)
    missing = [
        (key, sitemap_id, text)
        for key, text in zip(url_keys(texts), texts, strict=True)
        if key not in now
    ]
    db.executemany("INSERT OR IGNORE INTO pending VALUES (?, ?, ?)", missing)


def expand_gone(db: sqlite3.Connection, listed: set[str]) -> None:
    """Every URL of a child no index lists any more becomes a candidate (a child that
    ``listed``, the sitemaps listed anywhere this run, still holds is not gone)."""
    rows = db.execute(
        "SELECT s.id, s.url, s.urls FROM gone AS g JOIN sitemaps AS s ON s.id = g.sitemap"
    ).fetchall()
    for sitemap_id, url, blob in rows:
        if url in listed:
            db.execute("DELETE FROM gone WHERE sitemap = ?", (sitemap_id,))
            continue
        texts = urls_or_none(blob) or []  # damaged: its URLs cannot be named
        db.executemany(
            "INSERT OR IGNORE INTO pending VALUES (?, ?, ?)",
            zip(url_keys(texts), repeat(sitemap_id), texts),
        )


def candidates(db: sqlite3.Connection, after: tuple[int, int]) -> list[Any]:
    """The next :data:`RESOLVE_CHUNK` candidates after ``after`` (a (key, sitemap) pair;
    :data:`FIRST` to begin), with what :func:`resolve` needs to judge them."""
    return db.execute(_RESOLVE, (after[0], after[1], RESOLVE_CHUNK)).fetchall()


def resolve(db: sqlite3.Connection, rows: list[Any]) -> list[UrlRecord]:
    """The removed URLs among ``rows`` (from :func:`candidates`), as records; their rows
    leave ``urls``."""
    removed: list[UrlRecord] = []
    keys: list[tuple[int]] = []
    for key, sitemap_id, text, owner, shared, lastmod, sitemap_url in rows:
        if owner != sitemap_id or shared:
            continue  # moved to another sitemap, listed elsewhere too, or already gone
        if not isinstance(text, str) or not isinstance(sitemap_url, str | None):
            continue  # a damaged candidate: it cannot be named
        if lastmod is not None and not in_range(lastmod):
            lastmod = None
        keys.append((key,))
        removed.append(UrlRecord(text, from_seconds(lastmod), sitemap=sitemap_url, removed=True))
    db.executemany("DELETE FROM urls WHERE key = ?", keys)
    return removed


def clear(db: sqlite3.Connection) -> None:
    """Forget the resolved candidates, and the sitemaps that are gone for good."""
    db.execute("DELETE FROM pending")
    db.execute("DELETE FROM sitemaps WHERE id IN (SELECT sitemap FROM gone)")
    db.execute("DELETE FROM gone")
