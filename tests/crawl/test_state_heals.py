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
from tests.conftest_cli import run_cli
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
    db.create_function("zlib_bytes", 1, zlib.compress)
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


def _text(*paths: str) -> Damage:
    """URL text of its own, zlib-compressed as the store writes it, for the sitemap."""

    def damage(db: sqlite3.Connection, url: str) -> None:
        base = url.rsplit("/", 1)[0]
        text = "".join(f"{base}{path}\n" for path in paths)
        db.execute("UPDATE sitemaps SET urls = zlib_text(?) WHERE url = ?", (text, url))

    return damage


#: Damage to what names the URLs of /a.xml (three URLs, /a0 to /a2) or of /c.xml.
LOST: dict[str, tuple[str, Damage]] = {
    "not-zlib": ("/a.xml", _sql("UPDATE sitemaps SET urls = x'0badf00d' WHERE url = ?")),
    "not-utf8": ("/a.xml", _sql("UPDATE sitemaps SET urls = zlib_bytes(x'ff') WHERE url = ?")),
    "too-few-lines": ("/a.xml", _text("/a0", "/a1")),
    "garbled-url": ("/a.xml", _text("/a0", "/a1", "/aX")),
    "records-count": ("/a.xml", _sql("UPDATE sitemaps SET records = 9 WHERE url = ?")),
    "hash-integer": ("/a.xml", _sql("UPDATE sitemaps SET hash = 7 WHERE url = ?")),
    "dropped-child-not-zlib": ("/c.xml", _sql("UPDATE sitemaps SET urls = x'00' WHERE url = ?")),
}


@pytest.mark.parametrize("case", sorted(LOST))
async def test_removed_urls_are_named_or_their_loss_is_said(
    site: Site, tmp_path: Path, case: str
) -> None:
    """The state's URL text of a sitemap is damaged (it does not decode, holds too few
    lines, names a URL the site never listed...), then the sitemap drops /a2 (or its
    index drops /c.xml): with removed=True the removed URLs are named, or the run says
    that sitemap's state was lost (a state-damaged problem naming it, where it is in the
    run, and stats.sitemaps_state_lost); before, a garbled text or a dropped child's
    damaged text lost them without a word. The next run is clean."""
    where, damage = LOST[case]
    docs = Versioned(site, ("etag",))
    first_children = {"/a.xml": pages("a", 3), "/b.xml": pages("b", 2), "/c.xml": pages("c", 1)}
    target = build(docs, first_children)
    state = tmp_path / "state.db"
    await crawl(target, state, removed=True, changed_only=True)
    _damage(state, site.url(where), damage)
    target = build(docs, {"/a.xml": pages("a", 2), "/b.xml": pages("b", 2)})
    records, run = await crawl(target, state, removed=True, changed_only=True)
    expected = {"/a2", "/c0"}
    named = {r.url.removeprefix(site.base) for r in records if r.removed}
    problems = {n.url: p.message for n in run.nodes() for p in n.problems}
    if named != expected:
        assert run.stats.sitemaps_state_lost == 1, (named, problems)
        lost_at = site.url("/index.xml" if where == "/c.xml" else where)
        if where == "/c.xml":  # the index dropped it: said on the index, naming it
            assert site.url("/c.xml") in problems[lost_at]
        assert "cannot be named as removed" in problems.get(lost_at, "") or (
            "removed URLs not named" in problems.get(lost_at, "")
        ), problems
    again, clean = await crawl(target, state, removed=True, changed_only=True)
    assert again == [] and clean.stats.sitemaps_state_lost == 0
    assert [p for n in clean.nodes() for p in n.problems] == []


async def test_dump_says_the_state_of_a_sitemap_was_lost(site: Site, tmp_path: Path) -> None:
    """``dump --state S --removed --changed-only`` after the URL text of /a.xml was
    damaged and /a.xml dropped /a2: exit 0 and a line saying the removed URLs of one
    sitemap cannot be named, even with -q (before: exit 0, silence)."""
    docs = Versioned(site, ("etag",))
    target = build(docs, {"/a.xml": pages("a", 3)})
    state = tmp_path / "state.db"
    await crawl(target, state)
    _damage(state, site.url("/a.xml"), LOST["not-zlib"][1])
    target = build(docs, {"/a.xml": pages("a", 2)})
    result = await run_cli(
        "dump", target, "--state", str(state), "--removed", "--changed-only", "-q",
        "--allow-private",
    )  # fmt: skip
    assert result.code == 0 and result.out == "", result.err
    assert result.err.splitlines() == [
        "sitemap-reader: state: the state file's record of 1 sitemap was damaged: the URLs "
        "that left it cannot be named as removed (-v says which; the record is rewritten)"
    ]
