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


#: Why the removed URLs of a sitemap cannot be named (the state's record of it is lost).
UNDECODABLE = "its stored URL list does not decode"
UNKNOWN_URLS = "its stored URL list names URLs the state does not hold"


#: Sitemaps whose removed URLs cannot be named: the sitemap's URL -> (the URL of the
#: sitemap where it is said: itself, or the index that dropped it; why).
Lost = dict[str, tuple[str, str]]


def note_dropped_children(db: sqlite3.Connection, old: StoredSitemap, read: SitemapRead) -> Lost:
    """Children the index listed last time and not now: candidates for ``gone``. Those
    whose stored URL text is damaged are returned, said on the index: their URLs cannot
    be named when they turn out gone."""
    listed = {u for u, _ in read.children}
    lost: Lost = {}
    for url, _ in unpack_children(old.children):
        if url in listed:
            continue
        row = db.execute("SELECT id, urls FROM sitemaps WHERE url = ?", (url,)).fetchone()
        if row is None:
            continue
        db.execute("INSERT OR IGNORE INTO gone VALUES (?)", (row[0],))
        if urls_or_none(row[1]) is None:
            lost[url] = (read.url, f"its dropped child {url}: {UNDECODABLE}")
    return lost


def note_missing_urls(
    db: sqlite3.Connection, sitemap_id: int, texts: list[str] | None, keys: list[int]
) -> None:
    """URLs the previous read listed (``texts``, None when damaged) and this one does
    not: removal candidates. A damaged text gives none: which URLs left cannot be known
    (the new read replaces it, and the run says so)."""
    if not texts:
        return
    now = set(keys)
    missing = [
        (key, sitemap_id, text)
        for key, text in zip(url_keys(texts), texts, strict=True)
        if key not in now
    ]
    db.executemany("INSERT OR IGNORE INTO pending VALUES (?, ?, ?)", missing)


def expand_gone(db: sqlite3.Connection, listed: set[str]) -> Lost:
    """Every URL of a child no index lists any more becomes a candidate (a child that
    ``listed``, the sitemaps listed anywhere this run, still holds is not gone). A gone
    child whose URL text is damaged is returned (its URL and why): its URLs cannot be
    named."""
    rows = db.execute(
        "SELECT s.id, s.url, s.urls FROM gone AS g JOIN sitemaps AS s ON s.id = g.sitemap"
    ).fetchall()
    lost: Lost = {}
    for sitemap_id, url, blob in rows:
        if url in listed:
            db.execute("DELETE FROM gone WHERE sitemap = ?", (sitemap_id,))
            continue
        texts = urls_or_none(blob)
        if texts is None:
            lost[url] = (url, UNDECODABLE)
            continue
        db.executemany(
            "INSERT OR IGNORE INTO pending VALUES (?, ?, ?)",
            zip(url_keys(texts), repeat(sitemap_id), texts),
        )
    return lost


def candidates(db: sqlite3.Connection, after: tuple[int, int]) -> list[Any]:
    """The next :data:`RESOLVE_CHUNK` candidates after ``after`` (a (key, sitemap) pair;
    :data:`FIRST` to begin), with what :func:`resolve` needs to judge them."""
    return db.execute(_RESOLVE, (after[0], after[1], RESOLVE_CHUNK)).fetchall()


def resolve(db: sqlite3.Connection, rows: list[Any], lost: Lost) -> list[UrlRecord]:
    """The removed URLs among ``rows`` (from :func:`candidates`), as records; their rows
    leave ``urls``. A candidate the state holds no row for came from damaged URL text
    (every URL a sound text names has one): its sitemap goes into ``lost``."""
    removed: list[UrlRecord] = []
    keys: list[tuple[int]] = []
    for key, sitemap_id, text, owner, shared, lastmod, sitemap_url in rows:
        if owner is None and isinstance(sitemap_url, str):
            lost.setdefault(sitemap_url, (sitemap_url, UNKNOWN_URLS))
            continue
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
