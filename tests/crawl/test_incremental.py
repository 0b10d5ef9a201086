"""Incremental runs (``state=``): conditional requests, index lastmod, changed_only,
removed, failures during a later run, and a run killed half-way (issue 6)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import sys
import textwrap
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from sitemap_reader.crawl import Run, SitemapReader
from sitemap_reader.errors import StateError, UsageError
from sitemap_reader.records import UrlRecord
from sitemap_reader.store import StateStore
from tests.crawl.crawl_kit import FAST, SITEMAP_NS, Site

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def urlset(entries: Iterable[tuple[str, str | None]]) -> bytes:
    """A urlset of (url, lastmod or None)."""
    parts = []
    for url, lastmod in entries:
        stamp = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
        parts.append(f"<url><loc>{url}</loc>{stamp}</url>")
    return f'<urlset xmlns="{SITEMAP_NS}">{"".join(parts)}</urlset>'.encode()


def sitemapindex(entries: Iterable[tuple[str, str | None]]) -> bytes:
    """A sitemapindex of (url, lastmod or None)."""
    parts = []
    for url, lastmod in entries:
        stamp = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
        parts.append(f"<sitemap><loc>{url}</loc>{stamp}</sitemap>")
    return f'<sitemapindex xmlns="{SITEMAP_NS}">{"".join(parts)}</sitemapindex>'.encode()


class Versioned:
    """Documents served with validators: ``etag``, ``last-modified``, both or none.

    Each :meth:`put` of a different body makes a new version (a new ETag and a later
    Last-Modified); conditional requests that match get a 304. ``statuses`` logs
    (path, status) of every answer; paths in ``failing`` answer 500.
    """

    def __init__(self, site: Site, validators: tuple[str, ...] = ("etag",)) -> None:
        self.site = site
        self.validators = validators
        self.docs: dict[str, tuple[bytes, int]] = {}
        self.statuses: list[tuple[str, int]] = []
        self.failing: set[str] = set()

    def put(self, path: str, body: bytes) -> None:
        """Serve ``body`` at ``path`` (a new version when it differs)."""
        old = self.docs.get(path)
        if old is None or old[0] != body:
            version = 1 if old is None else old[1] + 1
            self.docs[path] = (body, version)
        self.site.add(path, self._handle)

    def _validators(self, path: str) -> dict[str, str]:
        body, version = self.docs[path]
        headers = {}
        if "etag" in self.validators:
            headers["ETag"] = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        if "last-modified" in self.validators:
            stamp = EPOCH + timedelta(days=version)
            headers["Last-Modified"] = format_datetime(stamp, usegmt=True)
        return headers

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in self.failing:
            self.statuses.append((path, 500))
            return web.Response(status=500, text="boom")
        headers = self._validators(path)
        etag, modified = headers.get("ETag"), headers.get("Last-Modified")
        fresh = (etag is not None and request.headers.get("If-None-Match") == etag) or (
            etag is None
            and modified is not None
            and request.headers.get("If-Modified-Since") == modified
        )
        if fresh:
            self.statuses.append((path, 304))
            return web.Response(status=304, headers=headers)
        self.statuses.append((path, 200))
        body = self.docs[path][0]
        return web.Response(body=body, headers=headers, content_type="application/xml")

    def taken(self) -> list[tuple[str, int]]:
        """The log so far, cleared."""
        log, self.statuses = self.statuses, []
        return log


async def crawl(target: str, state: Path, **options: Any) -> tuple[list[UrlRecord], Run]:
    """One run with ``state``; the records and the run."""
    options.setdefault("options", FAST)
    async with SitemapReader(state=state, **options) as reader:
        records = [r async for r in reader.urls(target)]
        assert reader.last_run is not None
        return records, reader.last_run


def build(
    docs: Versioned,
    children: dict[str, list[tuple[str, str | None]]],
    lastmods: dict[str, str] | None = None,
) -> str:
    """Serve an index of the given children (path -> entries); the index URL."""
    site = docs.site
    refs = []
    for path, entries in children.items():
        docs.put(path, urlset((site.url(u), m) for u, m in entries))
        refs.append((site.url(path), (lastmods or {}).get(path)))
    docs.put("/index.xml", sitemapindex(refs))
    return site.url("/index.xml")


def pages(
    prefix: str, count: int, lastmod: str | None = "2024-05-01"
) -> list[tuple[str, str | None]]:
    """``count`` entries /{prefix}{i} with one lastmod."""
    return [(f"/{prefix}{i}", lastmod) for i in range(count)]


def paths(records: Iterable[UrlRecord], site: Site) -> list[str]:
    """The records' URL paths, sorted."""
    return sorted(r.url.removeprefix(site.base) for r in records)


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("validators", [("etag",), ("last-modified",), ("etag", "last-modified")])
async def test_unchanged_second_run_is_all_304(
    site: Site, tmp_path: Path, validators: tuple[str, ...]
) -> None:
    """With ETag and/or Last-Modified, an unchanged second run gets 304s and emits nothing."""
    docs = Versioned(site, validators)
    target = build(docs, {"/a.xml": pages("a", 40), "/b.xml": pages("b", 5)})
    state = tmp_path / "state.db"
    first, _ = await crawl(target, state, changed_only=True)
    assert len(first) == 45 and {s for _, s in docs.taken()} == {200}
    second, run = await crawl(target, state, changed_only=True)
    assert second == []
    assert sorted(docs.taken()) == [("/a.xml", 304), ("/b.xml", 304), ("/index.xml", 304)]
    assert run.stats.sitemaps_unchanged == 3 and run.stats.bytes == 0
    assert all(n.unchanged == "not modified (304)" for n in run.nodes())
    assert run.error is None and run.stats.sitemaps_failed == 0


@pytest.mark.usefixtures("client")
async def test_conditional_headers_are_sent(site: Site, tmp_path: Path) -> None:
    """The second run sends the stored ETag and Last-Modified back."""
    docs = Versioned(site, ("etag", "last-modified"))
    site.add("/s.xml", b"")
    docs.put("/s.xml", urlset([(site.url("/x"), None)]))
    state = tmp_path / "state.db"
    await crawl(site.url("/s.xml"), state)
    await crawl(site.url("/s.xml"), state)
    first, second = site.requests[0], site.requests[1]
    assert "If-None-Match" not in first.headers
    assert second.headers["If-None-Match"].startswith('"')
    assert second.headers["If-Modified-Since"].endswith("GMT")


async def test_without_validators_the_hash_finds_it_unchanged(site: Site, tmp_path: Path) -> None:
    """A server with no validators is read again; the same hash marks it unchanged."""
    docs = Versioned(site, ())
    target = build(docs, {"/a.xml": pages("a", 10)})
    state = tmp_path / "state.db"
    await crawl(target, state, changed_only=True)
    records, run = await crawl(target, state, changed_only=True)
    assert records == [] and run.stats.urls_unchanged == 10
    assert sorted(docs.taken()) == [("/a.xml", 200)] * 2 + [("/index.xml", 200)] * 2
    assert {n.unchanged for n in run.nodes()} == {"same content"}


async def test_without_changed_only_changed_sitemaps_are_emitted_whole(
    site: Site, tmp_path: Path
) -> None:
    """Without changed_only, a changed sitemap's records all go out; unchanged ones none."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": pages("a", 5), "/b.xml": pages("b", 5)})
    state = tmp_path / "state.db"
    await crawl(target, state)
    docs.put("/b.xml", urlset([(site.url(f"/b{i}"), "2024-06-01") for i in range(5)]))
    records, _ = await crawl(target, state)
    assert paths(records, site) == [f"/b{i}" for i in range(5)]


async def test_index_lastmod_not_newer_skips_the_child(site: Site, tmp_path: Path) -> None:
    """A child whose index lastmod did not move is not requested; a newer one is."""
    docs = Versioned(site, ())
    children = {"/a.xml": pages("a", 5), "/b.xml": pages("b", 5)}
    lastmods = {"/a.xml": "2024-05-01", "/b.xml": "2024-05-01"}
    target = build(docs, children, lastmods)
    state = tmp_path / "state.db"
    await crawl(target, state, changed_only=True)
    docs.taken()
    children["/b.xml"] = [("/b0", "2024-06-01"), *pages("b", 5)[1:]]
    target = build(docs, children, {**lastmods, "/b.xml": "2024-06-02"})
    records, run = await crawl(target, state, changed_only=True)
    assert sorted(docs.taken()) == [("/b.xml", 200), ("/index.xml", 200)]
    assert paths(records, site) == ["/b0"]
    skipped = [n for n in run.nodes() if n.unchanged == "index lastmod not newer"]
    assert [n.url for n in skipped] == [site.url("/a.xml")] and skipped[0].ok


async def test_index_lastmod_can_be_ignored(site: Site, tmp_path: Path) -> None:
    """trust_index_lastmod=False fetches every child (conditionally) anyway."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": pages("a", 5)}, {"/a.xml": "2024-05-01"})
    state = tmp_path / "state.db"
    await crawl(target, state)
    docs.taken()
    await crawl(target, state, trust_index_lastmod=False)
    assert sorted(docs.taken()) == [("/a.xml", 304), ("/index.xml", 304)]


async def test_changed_only_new_and_moved_forward(site: Site, tmp_path: Path) -> None:
    """changed_only emits new URLs and lastmods that moved forward, nothing that went back."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": [("/x", "2024-05-01"), ("/y", "2024-05-01"), ("/z", None)]})
    state = tmp_path / "state.db"
    await crawl(target, state, changed_only=True)
    entries = [("/x", "2024-05-11"), ("/y", "2024-04-01"), ("/z", None), ("/new", None)]
    target = build(docs, {"/a.xml": entries})
    records, run = await crawl(target, state, changed_only=True)
    assert paths(records, site) == ["/new", "/x"]
    moved = next(r for r in records if r.url.endswith("/x"))
    assert moved.revisit == 10 * 86400  # the observed interval between the two lastmods
    assert run.stats.urls_unchanged == 2


async def test_removed_urls_and_dropped_children(site: Site, tmp_path: Path) -> None:
    """removed=True lists URLs that left a re-read sitemap and all URLs of a dropped child."""
    docs = Versioned(site)
    children = {"/a.xml": pages("a", 3), "/b.xml": pages("b", 2), "/c.xml": pages("c", 2)}
    target = build(docs, children)
    state = tmp_path / "state.db"
    await crawl(target, state, changed_only=True, removed=True)
    target = build(docs, {"/a.xml": pages("a", 2), "/b.xml": pages("b", 2)})
    records, run = await crawl(target, state, changed_only=True, removed=True)
    assert all(r.removed for r in records)
    assert paths(records, site) == ["/a2", "/c0", "/c1"]
    assert records[0].to_dict()["removed"] is True and records[0].lastmod is not None
    assert run.stats.urls_removed == 3
    again, _ = await crawl(target, state, changed_only=True, removed=True)
    assert again == []  # reported once
    with StateStore(state) as store:
        assert store.counts() == {"sitemaps": 3, "urls": 4, "pending": 0, "gone": 0}


async def test_moved_and_shared_urls_are_not_removed(site: Site, tmp_path: Path) -> None:
    """A URL that moves to another sitemap, or that another sitemap still lists, stays."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": [("/m", None), ("/s", None)], "/b.xml": [("/s", None)]})
    state = tmp_path / "state.db"
    await crawl(target, state, removed=True, concurrency=1)
    target = build(docs, {"/a.xml": [("/a", None)], "/b.xml": [("/s", None), ("/m", None)]})
    records, run = await crawl(target, state, removed=True, concurrency=1)
    assert not any(r.removed for r in records) and run.stats.urls_removed == 0


async def test_failed_sitemap_loses_nothing(site: Site, tmp_path: Path) -> None:
    """A sitemap failing in the second run is neither removed nor marked seen."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": pages("a", 3), "/b.xml": pages("b", 3)})
    state = tmp_path / "state.db"
    await crawl(target, state, changed_only=True, removed=True)
    docs.put("/b.xml", urlset([(site.url("/b0"), "2024-07-01"), (site.url("/b9"), None)]))
    docs.failing.add("/b.xml")
    records, run = await crawl(target, state, changed_only=True, removed=True)
    assert records == [] and run.stats.sitemaps_failed == 1 and run.stats.urls_removed == 0
    docs.failing.clear()
    records, _ = await crawl(target, state, changed_only=True, removed=True)
    assert sorted((r.url.removeprefix(site.base), r.removed) for r in records) == [
        ("/b0", False),
        ("/b1", True),
        ("/b2", True),
        ("/b9", False),
    ]


async def test_cut_body_saves_only_what_went_out(site: Site, tmp_path: Path) -> None:
    """A body cut short keeps its records and saves them as seen, nothing else: the next
    run reads it again in full and hands out only the URLs the cut one never reached."""
    state = tmp_path / "state.db"
    body = urlset((site.url(f"/p{i}"), None) for i in range(40))

    async def cut(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        await response.write(body[: len(body) // 2])
        return response

    site.add("/s.xml", cut)
    first, run = await crawl(site.url("/s.xml"), state, changed_only=True)
    assert first and run.stats.sitemaps_failed == 1
    site.add("/s.xml", body)
    second, run = await crawl(site.url("/s.xml"), state, changed_only=True)
    assert {r.url for r in first}.isdisjoint(r.url for r in second)
    assert len(first) + len(second) == 40 and run.stats.sitemaps_unchanged == 0
    third, _ = await crawl(site.url("/s.xml"), state, changed_only=True)
    assert third == []


async def test_early_break_saves_only_what_was_taken(site: Site, tmp_path: Path) -> None:
    """A consumer that stops early leaves unconsumed sitemaps unsaved (sitemap commits)."""
    docs = Versioned(site)
    target = build(docs, {f"/{c}.xml": pages(c, 40) for c in "abc"})
    state = tmp_path / "state.db"
    reader = SitemapReader(state=state, changed_only=True, options=FAST, concurrency=1)
    async with reader, contextlib.aclosing(reader.urls(target)) as stream:
        async for record in stream:
            assert record.url
            break
    records, _ = await crawl(target, state, changed_only=True)
    assert len(records) == 120  # nothing was lost: every record comes again


async def test_run_commit_mode_is_all_or_nothing(site: Site, tmp_path: Path) -> None:
    """state_commit="run" saves nothing unless the consumer reads to the end."""
    docs = Versioned(site)
    target = build(docs, {f"/{c}.xml": pages(c, 40) for c in "ab"})
    state = tmp_path / "state.db"
    reader = SitemapReader(state=state, state_commit="run", options=FAST)
    async with reader, contextlib.aclosing(reader.batches(target)) as batches:
        async for batch in batches:
            assert batch
            break
    with StateStore(state) as store:
        assert store.counts()["sitemaps"] == 0
    await crawl(target, state, state_commit="run")
    with StateStore(state) as store:
        assert store.counts() == {"sitemaps": 3, "urls": 80, "pending": 0, "gone": 0}


async def test_ranked_incremental_run(site: Site, tmp_path: Path) -> None:
    """Ranked output with a state: removed records come too, the state is saved at the end."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": pages("a", 3)})
    state = tmp_path / "state.db"
    await crawl(target, state)
    target = build(docs, {"/a.xml": [*pages("a", 2), ("/n", "2024-09-01")]})
    async with SitemapReader(state=state, changed_only=True, removed=True, options=FAST) as r:
        records = [x async for x in r.urls(target, ranked=True)]
    assert [r.url.removeprefix(site.base) for r in records] == ["/n", "/a2"]
    assert records[-1].removed


async def test_tree_with_state(site: Site, tmp_path: Path) -> None:
    """tree() uses and updates the state too."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": pages("a", 3)})
    state = tmp_path / "state.db"
    async with SitemapReader(state=state, options=FAST) as reader:
        await reader.tree(target)
        run = await reader.tree(target)
    assert run.stats.sitemaps_unchanged == 2
    assert run.tree[0].to_dict()["unchanged"] == "not modified (304)"


async def test_options_need_a_state(tmp_path: Path) -> None:
    """changed_only / removed without state, or a bad state file, are usage errors."""
    with pytest.raises(UsageError):
        SitemapReader(changed_only=True)
    with pytest.raises(UsageError):
        SitemapReader(state=tmp_path / "s.db", state_commit="never")  # type: ignore[arg-type]
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    async with SitemapReader(state=junk, options=FAST) as reader:
        with pytest.raises(StateError):
            await reader.tree("https://127.0.0.1:9/sitemap.xml")


KILLED_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from sitemap_reader.crawl import SitemapReader

    async def main():
        async with SitemapReader(state=sys.argv[2], changed_only=True, retries=0,
                                 read_timeout=60, timeout=60, concurrency=1) as reader:
            async for record in reader.urls(sys.argv[1]):
                print(record.url, flush=True)

    asyncio.run(main())
    """
)


def _saved_sitemaps(state: Path) -> set[str]:
    """The sitemaps a state file holds now, read without writing (empty while locked)."""
    try:
        check = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
        try:
            return {u for (u,) in check.execute("SELECT url FROM sitemaps")}
        finally:
            check.close()
    except sqlite3.OperationalError:  # not created yet, or a write holds the lock
        return set()


async def test_killed_run_leaves_consistent_state(site: Site, tmp_path: Path) -> None:
    """SIGKILL mid-run: sitemaps whose records were taken are saved (once the writer thread
    caught up), the one being read is not, and the next run emits what the killed one did
    not finish."""
    docs = Versioned(site)
    target = build(docs, {"/a.xml": pages("a", 40), "/b.xml": pages("b", 40)})
    body = urlset((site.url(f"/c{i}"), None) for i in range(400))
    hang = asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        await response.write(body[: len(body) // 2])
        await hang.wait()  # never set: the child is killed while it waits here
        return response

    docs.put(
        "/index.xml", sitemapindex((site.url(p), None) for p in ("/a.xml", "/b.xml", "/c.xml"))
    )
    site.add("/c.xml", slow)
    script = tmp_path / "child.py"
    script.write_text(KILLED_CHILD)
    state = tmp_path / "state.db"
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(script), target, str(state), stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    printed: list[str] = []
    while not (printed and "/c" in printed[-1]):  # a record of c: a and b were taken
        line = await asyncio.wait_for(child.stdout.readline(), 30)
        assert line, "child ended early"
        printed.append(line.decode().strip())
    # The state is written on a thread that runs behind the records: wait (bounded) until
    # it has committed a and b, then kill the child while c is still being read.
    wanted = {site.url("/a.xml"), site.url("/b.xml")}
    deadline = time.monotonic() + 30
    while not wanted <= _saved_sitemaps(state):
        assert time.monotonic() < deadline, "the state never caught up with the records"
        await asyncio.sleep(0.02)  # the poll interval of a bounded wait
    child.kill()
    await child.wait()
    check = sqlite3.connect(state)
    assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    saved = sorted(u for (u,) in check.execute("SELECT url FROM sitemaps"))
    check.close()
    assert saved == [site.url(p) for p in ("/a.xml", "/b.xml", "/index.xml")]  # not c
    site.add("/c.xml", body)
    records, run = await crawl(target, state, changed_only=True)
    assert paths(records, site) == sorted(f"/c{i}" for i in range(400))
    assert run.stats.sitemaps_unchanged == 3  # the index, a and b


def test_tracker_read_lastmods_and_url_text() -> None:
    """A finished read keeps every URL's key, lastmod (None or seconds) and text, in order."""
    from sitemap_reader.crawl.incremental import Tracker
    from sitemap_reader.discovery.model import SitemapNode
    from sitemap_reader.store import unpack_urls, url_key

    when = datetime(2024, 5, 1, 12, 30, 15, tzinfo=UTC)
    dated = [UrlRecord(f"https://e.com/{i}", when + timedelta(seconds=i)) for i in range(3)]
    mixed = [UrlRecord("https://e.com/x", None), UrlRecord("https://e.com/y", when)]
    for batches in ([dated], [dated, mixed]):
        tracker = Tracker("etag", None)
        for batch in batches:
            tracker.add(batch)
        node = SitemapNode("https://e.com/s.xml", format="urlset")
        saved = tracker.read("https://e.com/s.xml", node, b"h")
        records = [r for batch in batches for r in batch]
        assert saved.keys == [url_key(r.url) for r in records]
        assert saved.lastmods == [
            None if r.lastmod is None else int(r.lastmod.timestamp()) for r in records
        ]
        assert unpack_urls(saved.urls_blob) == [r.url for r in records]
        assert saved.records == len(records) and saved.etag == "etag"
    empty = Tracker(None, None).read("https://e.com/s.xml", SitemapNode("https://e.com/s.xml"), b"")
    assert empty.keys == [] and empty.lastmods == [] and empty.urls_blob is None
