"""Every record stored with its origin before it is handed out (issue 41, classes 1-4):
HTML sitemap pages and listed pages across loaders, a budget that leaves the rest for
the next loader, and the HTML pages of an incremental state."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

from aiohttp import web

import sitemap_reader as sr
from sitemap_reader.crawl import SitemapReader
from sitemap_reader.discovery import Checkpoint, Observer, SitemapNode, Watch
from sitemap_reader.discovery.actions import Batch
from tests.crawl.crawl_kit import FAST, Site, collect, urlset

HTML = "text/html"
MENU = "<div class='menu'><a href='/about'>About</a><a href='/jobs'>Jobs</a></div>"


def page(links: list[str]) -> str:
    """An HTML page of the site: its menu, then a list of links."""
    items = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in links)
    return f"<!doctype html><html><body>{MENU}<main><ul>{items}</ul></main></body></html>"


class Gate:
    """A path that answers only once the test opens it (the request is seen at once)."""

    def __init__(self, body: str, content_type: str = HTML) -> None:
        self.body = body
        self.content_type = content_type
        self.asked = asyncio.Event()
        self.open = asyncio.Event()

    async def __call__(self, request: web.Request) -> web.Response:
        self.asked.set()
        await self.open.wait()
        return web.Response(text=self.body, content_type=self.content_type)


def html_site(site: Site, slow: Gate | None = None) -> set[str]:
    """Only an HTML site map at a usual path: /sitemap.html and two section pages of 30
    links each (the second behind ``slow``, if given); the page URLs they list."""
    site.add("/", "<html><body><p>home, no site map link</p></body></html>", content_type=HTML)
    site.add("/sitemap.html", page(["/sitemap/a", "/sitemap/b", "/top"]), content_type=HTML)
    first = [f"/a/{n}" for n in range(30)]
    second = [f"/b/{n}" for n in range(30)]
    site.add("/sitemap/a", page(first), content_type=HTML)
    if slow is None:
        site.add("/sitemap/b", page(second), content_type=HTML)
    else:
        slow.body = page(second)
        site.add("/sitemap/b", slow)
    return {site.url(p) for p in ["/top", *first, *second]}


async def drain(loader: sr.SitemapLoader) -> list[str]:
    """Take and acknowledge every record; their URLs."""
    taken = []
    while (record := await loader.next()) is not None:
        taken.append(record.url)
        await loader.ack(record.url)
    return taken


def misread(run: sr.Run | None) -> list[str]:
    """Nodes of a run that failed as "not a sitemap" (a page read as another kind)."""
    assert run is not None
    return [f"{n.kind} {n.url}" for n in run.nodes() if n.reason == "not a sitemap"]


async def test_a_resumed_loader_reads_html_pages_as_pages(site: Site, tmp_path: Path) -> None:
    """A site with only an HTML site map; the first loader stops at its deadline while a
    section page is slow: the second reads no finished page as an XML sitemap and hands
    out the slow section's links (before: none of them, "not a sitemap")."""
    slow = Gate("")
    expected = html_site(site, slow)
    progress = tmp_path / "p.db"
    options = {"html": True, "allow_private": True, "options": FAST, "progress": progress}
    async with sr.SitemapLoader(site.base, deadline=2.0, **options) as loader:  # type: ignore[arg-type]
        first = await drain(loader)
    assert slow.asked.is_set()
    slow.open.set()
    async with sr.SitemapLoader(site.base, **options) as loader:  # type: ignore[arg-type]
        second = await drain(loader)
        assert misread(loader.run) == []
    assert sorted(first + second) == sorted(expected)


async def test_an_html_page_is_written_behind_its_records(site: Site) -> None:
    """The checkpoint of an HTML sitemap page runs only after its records reached the
    consumer (they are held until the site is idle): a loader killed meanwhile never has
    the page marked read without its links (before: marked first, its 30 links lost)."""
    slow = Gate("")
    html_site(site, slow)
    seen: list[str] = []
    observer = _Marking(seen)
    async with SitemapReader(FAST, html=True, allow_private=True) as reader:
        source = reader.batches(site.base, observe=observer.wrap)

        async def consume() -> None:
            async for batch in source:
                seen.extend(f"record {r.url}" for r in batch)

        task = asyncio.create_task(consume())
        await slow.asked.wait()
        slow.open.set()
        await task
    section = site.url("/sitemap/a")
    done = seen.index(f"done {section}")
    records = [i for i, line in enumerate(seen) if line.startswith(f"record {site.url('/a/')}")]
    assert len(records) == 30
    assert max(records) < done, seen


class _Marking(Observer):
    """An observer that notes, as each checkpoint runs, the page it was for."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen
        self.inner: Observer = Observer()

    def wrap(self, inner: Observer) -> Observer:
        self.inner = inner
        return self

    def watch(self, node: SitemapNode) -> Watch:
        return _MarkingWatch(self.seen)


class _MarkingWatch(Watch):
    __slots__ = ("seen",)

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def settle(self, node: SitemapNode, complete: bool) -> Checkpoint | None:
        if not complete:
            return None
        seen, url = self.seen, node.url

        def write() -> Iterator[Batch]:
            seen.append(f"done {url}")
            return iter(())

        return Checkpoint(write)


def listed_site(site: Site, slow: Gate) -> list[str]:
    """robots.txt -> /s.xml: a page and /page.xml, a loc read as a possible sitemap
    (``follow_urlset_sitemaps``) that is an HTML page, slow to answer."""
    site.add("/robots.txt", "Sitemap: /s.xml\n", content_type="text/plain")
    site.add("/s.xml", urlset([site.url("/a"), site.url("/page.xml")]))
    slow.body = "<html><body><a href='/x'>x</a></body></html>"
    site.add("/page.xml", slow)
    return [site.url("/a"), site.url("/page.xml")]


async def test_a_listed_page_cut_by_a_stop_comes_from_the_next_loader(
    site: Site, tmp_path: Path
) -> None:
    """A listed loc (a .xml that is a page) still unanswered when the first loader is
    closed: the next loader hands it out, as a page, once (before: never; its urlset was
    marked read, and the next loader read the page as a sitemap)."""
    slow = Gate("")
    expected = listed_site(site, slow)
    options = {
        "follow_urlset_sitemaps": True, "allow_private": True, "options": FAST,
        "progress": tmp_path / "p.db",
    }  # fmt: skip
    async with sr.SitemapLoader(site.base, **options) as loader:  # type: ignore[arg-type]
        record = await loader.next()
        assert record is not None and record.url == expected[0]
        await loader.ack(record.url)
        await slow.asked.wait()
    slow.open.set()
    async with sr.SitemapLoader(site.base, **options) as loader:  # type: ignore[arg-type]
        rest = await drain(loader)
        assert misread(loader.run) == []
    assert rest == expected[1:]


async def test_a_budget_leaves_the_rest_for_the_next_loader(site: Site, tmp_path: Path) -> None:
    """max_urls=10 on a 50-URL sitemap: five loaders in turn hand out five different tens,
    every URL once; a sixth has nothing (before: the same first ten, over and over)."""
    urls = [site.url(f"/p/{n}") for n in range(50)]
    site.add("/robots.txt", "Sitemap: /s.xml\n", content_type="text/plain")
    site.add("/s.xml", urlset(urls))
    progress = tmp_path / "p.db"
    taken: list[list[str]] = []
    for _ in range(6):
        async with sr.SitemapLoader(
            site.base, progress=progress, max_urls=10, allow_private=True, options=FAST
        ) as loader:
            taken.append(await drain(loader))
    assert [len(t) for t in taken] == [10, 10, 10, 10, 10, 0]
    assert sorted(url for part in taken for url in part) == sorted(urls)


async def test_deadline_keeps_a_listed_page_as_timeout_does(site: Site) -> None:
    """A listed loc that is a page and does not answer in time: its record is kept when
    the run's deadline comes as when the sitemap's timeout does (before: the deadline
    dropped it)."""
    slow = Gate("")
    expected = listed_site(site, slow)
    kept = {}
    for name in ("deadline", "timeout"):
        records, _ = await collect(
            site.base,
            follow_urlset_sitemaps=True,
            allow_private=True,
            options=FAST.replace(**{name: 1.5}),
        )
        kept[name] = [r.url for r in records]
    slow.open.set()
    assert kept == {"deadline": expected, "timeout": expected}


async def test_state_reads_a_changed_html_section_page_as_a_page(
    site: Site, tmp_path: Path
) -> None:
    """--html --state: the site map page answers 304 on the second run; its section page,
    changed, is read as an HTML page and gives its new link (before: read as a sitemap,
    "not a sitemap", nothing)."""
    html_site(site)
    etag = '"v1"'

    async def top(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304)
        body = page(["/sitemap/a", "/sitemap/b", "/top"])
        return web.Response(text=body, content_type=HTML, headers={"ETag": etag})

    site.add("/sitemap.html", top)
    state = tmp_path / "state.db"
    first, _ = await collect(site.base, html=True, allow_private=True, state=state)
    assert site.url("/a/0") in {r.url for r in first}
    site.add("/sitemap/a", page([f"/a/{n}" for n in range(30)] + ["/a/new"]), content_type=HTML)
    again, run = await collect(
        site.base, html=True, allow_private=True, state=state, changed_only=True
    )
    assert misread(run) == []
    assert site.url("/a/new") in {r.url for r in again}
