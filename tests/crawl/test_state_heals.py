"""A damaged state file heals (issue 18, point 5): every part of a state file that does
not decode is a named ``state-damaged`` problem, the sitemap it belongs to is read as
unknown (in full), its state is written again, and the next run is clean."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from sitemap_reader.store import StateStore
from tests.crawl.crawl_kit import Site
from tests.crawl.test_incremental import Versioned, build, crawl, pages, paths, urlset

Damage = Callable[[sqlite3.Connection, str], None]


def _sql(statement: str) -> Damage:
    """A damage: ``statement`` run with the sitemap URL as its one parameter."""

    def damage(db: sqlite3.Connection, url: str) -> None:
        assert db.execute(statement, (url,)).rowcount >= 1

    return damage


DAMAGES: dict[str, tuple[str, Damage]] = {
    # where, what: (the sitemap whose row is damaged, the damage)
    "children-not-zlib": (
        "/index.xml",
        _sql("UPDATE sitemaps SET children = x'00ff' WHERE url = ?"),
    ),
    "children-not-json": (
        "/index.xml",
        _sql("UPDATE sitemaps SET children = zlib_text('{not json') WHERE url = ?"),
    ),
    "children-wrong-shape": (
        "/index.xml",
        _sql("UPDATE sitemaps SET children = zlib_text('[[1, \"x\"]]') WHERE url = ?"),
    ),
    "children-text": ("/index.xml", _sql("UPDATE sitemaps SET children = 'abc' WHERE url = ?")),
    "index-lastmod-text": (
        "/index.xml",
        _sql("UPDATE sitemaps SET index_lastmod = 'soon' WHERE url = ?"),
    ),
    "hash-integer": ("/a.xml", _sql("UPDATE sitemaps SET hash = 7 WHERE url = ?")),
    "urls-blob-not-zlib": ("/a.xml", _sql("UPDATE sitemaps SET urls = x'0badf00d' WHERE url = ?")),
    "url-lastmod-text": (
        "/a.xml",
        _sql(
            "UPDATE urls SET lastmod = 'yesterday' WHERE sitemap = "
            "(SELECT id FROM sitemaps WHERE url = ?)"
        ),
    ),
    "url-lastmod-huge": (
        "/a.xml",
        _sql(
            "UPDATE urls SET lastmod = 99999999999999 WHERE sitemap = "
            "(SELECT id FROM sitemaps WHERE url = ?)"
        ),
    ),
}


def _damage(state: Path, url: str, damage: Damage) -> None:
    """Apply ``damage`` to the state file with plain SQLite (as a disk or a tool might)."""
    db = sqlite3.connect(state)
    db.create_function("zlib_text", 1, lambda text: zlib.compress(text.encode()))
    try:
        damage(db, url)
        db.commit()
    finally:
        db.close()


@pytest.mark.parametrize("case", sorted(DAMAGES))
async def test_a_damaged_part_heals(site: Site, tmp_path: Path, case: str) -> None:
    """Each damaged part: exit clean, the sitemap read again, the state rewritten, the
    next run clean (all 304, no problem)."""
    where, damage = DAMAGES[case]
    docs = Versioned(site, ("etag",))
    target = build(docs, {"/a.xml": pages("a", 3), "/b.xml": pages("b", 2)})
    state = tmp_path / "state.db"
    first, _ = await crawl(target, state, removed=True)
    assert len(first) == 5
    docs.taken()
    _damage(state, site.url(where), damage)

    # A child changed meanwhile: a damaged index must still reach it. Damaged URL rows
    # and URL text are met only when their sitemap is read again: that one changes too.
    docs.put("/b.xml", docs_body(site, pages("b", 3)))
    if case.startswith(("url-lastmod", "urls-blob")):
        docs.put(where, docs_body(site, pages("a", 4)))
    records, run = await crawl(target, state, removed=True)
    assert run.error is None and run.stats.sitemaps_failed == 0
    problems = [(n.url, p.code) for n in run.nodes() for p in n.problems]
    assert problems == [(site.url(where), "state-damaged")]
    assert "/b2" in paths(records, site)  # the changed child was read
    statuses = dict(docs.taken())
    assert statuses[where] == 200  # the damaged sitemap was read in full

    again, clean = await crawl(target, state, removed=True)
    assert [p for n in clean.nodes() for p in n.problems] == []
    assert again == []
    assert {s for _, s in docs.taken()} == {304}
    with StateStore(state) as store:
        assert store.counts()["sitemaps"] == 3


def docs_body(site: Site, entries: list[tuple[str, str | None]]) -> bytes:
    """A urlset of ``entries`` on ``site``."""
    return urlset((site.url(u), m) for u, m in entries)
