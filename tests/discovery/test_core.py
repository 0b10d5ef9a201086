"""The discovery core driven by hand: events in, actions out, no network at all.

These tests are a third driver: they answer the core's fetches from a dict of bodies,
the way a queue worker or a test harness would, and check what it decides.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sitemap_reader.discovery import (
    Action,
    Discovery,
    Done,
    Emit,
    Fetch,
    Schedule,
    SitemapNode,
    Watch,
    classify,
)
from sitemap_reader.discovery.observer import Observer
from sitemap_reader.options import Options
from sitemap_reader.records import UrlRecord

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
BASE = "https://site.example"
Bodies = dict[str, bytes | int]


def urlset(*paths: str) -> bytes:
    """A urlset of ``BASE + path`` for each path."""
    entries = "".join(f"<url><loc>{BASE}{p}</loc></url>" for p in paths)
    return f"<urlset {NS}>{entries}</urlset>".encode()


def index(*paths: str) -> bytes:
    """A sitemapindex of ``BASE + path`` for each path."""
    entries = "".join(f"<sitemap><loc>{BASE}{p}</loc></sitemap>" for p in paths)
    return f"<sitemapindex {NS}>{entries}</sitemapindex>".encode()


class Harness:
    """A driver without I/O: bodies from a dict (an int is an HTTP status), FIFO jobs."""

    def __init__(
        self,
        core: Discovery,
        bodies: Bodies,
        *,
        chunk: int = 1 << 16,
        expired: Callable[[], bool] | None = None,
    ) -> None:
        self.core = core
        self.bodies = bodies
        self.chunk = chunk
        self.expired = expired
        self.records: list[UrlRecord] = []
        self.done: list[SitemapNode] = []
        self.fetched: list[str] = []

    def run(self) -> None:
        """Run every job to its end, then the core's finish."""
        queue = self._take(self.core.start())
        while queue:
            ticket = queue.pop(0)
            actions = self.core.begin(ticket)
            while True:
                queue += self._take(actions)
                fetch = next((a for a in actions if isinstance(a, Fetch)), None)
                if fetch is None:
                    break
                actions = self._fetch(fetch)
        self._take(self.core.finish())

    def _take(self, actions: list[Action]) -> list[dict[str, object]]:
        queue = []
        for action in actions:
            if isinstance(action, Schedule):
                queue.append(action.ticket)
            elif isinstance(action, Emit):
                self.records += action.records
            elif isinstance(action, Done):
                self.done.append(action.node)
        return queue

    def _fetch(self, fetch: Fetch) -> list[Action]:
        core, ticket = self.core, fetch.ticket
        self.fetched.append(fetch.url)
        body = self.bodies.get(fetch.url.removeprefix(BASE), 404)
        if isinstance(body, int):
            self._take(core.response(ticket, url=fetch.url, status=body))
            return core.end(ticket)
        self._take(core.response(ticket, url=fetch.url, status=200))
        for start in range(0, len(body), self.chunk):
            if not core.reading(ticket):
                break
            self._take(core.body(ticket, body[start : start + self.chunk], self.expired))
        return core.end(ticket)


def test_a_site_walked_by_hand() -> None:
    """robots.txt -> index -> two children: every record once, every node final."""
    bodies: Bodies = {
        "/robots.txt": f"Sitemap: {BASE}/index.xml\n".encode(),
        "/index.xml": index("/a.xml", "/b.xml", "/a.xml"),
        "/a.xml": urlset("/1", "/2"),
        "/b.xml": urlset("/2", "/3"),
    }
    harness = Harness(Discovery([classify(BASE + "/")]), bodies)
    harness.run()
    assert [r.url for r in harness.records] == [BASE + "/1", BASE + "/2", BASE + "/3"]
    assert harness.fetched == [
        BASE + "/robots.txt",
        BASE + "/index.xml",
        *(BASE + p for p in ("/a.xml", "/b.xml")),
    ]
    stats = harness.core.stats
    assert (stats.sitemaps_ok, stats.sitemaps_skipped, stats.urls_duplicate) == (3, 1, 1)
    assert harness.core.run.error is None


def test_an_exception_of_one_sitemap_is_its_problem_only() -> None:
    """A scorer that raises on one sitemap's records: that sitemap fails, siblings go on."""

    def score(record: UrlRecord, now: datetime) -> float:
        if "/bad/" in record.url:
            raise ZeroDivisionError("scorer broke")
        return 0.5

    bodies: Bodies = {
        "/robots.txt": f"Sitemap: {BASE}/bad.xml\nSitemap: {BASE}/good.xml\n".encode(),
        "/bad.xml": urlset("/bad/1"),
        "/good.xml": urlset("/good/1", "/good/2"),
    }
    harness = Harness(Discovery([classify(BASE + "/")], Options.of(score=score)), bodies)
    harness.run()
    assert [r.url for r in harness.records] == [BASE + "/good/1", BASE + "/good/2"]
    bad = next(n for n in harness.done if n.url.endswith("/bad.xml"))
    assert bad.failed and bad.problems[0].code == "internal"
    assert "ZeroDivisionError: scorer broke" in bad.problems[0].message
    assert harness.core.stats.sitemaps_failed == 1


class _BrokenWatch(Watch):
    __slots__ = ()

    def feed(self, chunk: bytes) -> None:
        raise OSError("disk full")


class _BrokenStore(Observer):
    """An incremental layer whose store fails while one sitemap streams."""

    def watch(self, node: SitemapNode) -> Watch:
        return _BrokenWatch() if node.url.endswith("/a.xml") else super().watch(node)


def test_an_observer_failure_fails_that_sitemap_only() -> None:
    """The state layer raising while a body streams: an internal problem, the rest goes on."""
    bodies: Bodies = {
        "/robots.txt": f"Sitemap: {BASE}/a.xml\nSitemap: {BASE}/b.xml\n".encode(),
        "/a.xml": urlset("/a"),
        "/b.xml": urlset("/b"),
    }
    harness = Harness(Discovery([classify(BASE + "/")], observer=_BrokenStore()), bodies)
    harness.run()
    assert [r.url for r in harness.records] == [BASE + "/b"]
    node = next(n for n in harness.done if n.url.endswith("/a.xml"))
    assert node.problems[0].code == "internal" and "OSError: disk full" in node.reason  # type: ignore[operator]


def test_unchanged_records_keep_their_time() -> None:
    """The core's clock is the one given: scores do not depend on when a test runs."""
    now = datetime(2024, 1, 1, tzinfo=UTC)
    core = Discovery([classify(BASE + "/s.xml")], now=now)
    harness = Harness(core, {"/s.xml": urlset("/a")})
    harness.run()
    assert harness.records[0].score == 0.44375


def test_every_node_kind_has_its_part() -> None:
    """The kind -> part table covers every node kind; each kind change stays between
    kinds whose parts read a body alike (the sitemap part and its HTML twin)."""
    from sitemap_reader.discovery.model import KIND_CHANGES, NODE_KINDS
    from sitemap_reader.discovery.sitemaps import SitemapJob

    core = Discovery([classify(BASE + "/")])
    assert set(core.parts) == set(NODE_KINDS)
    for old, new in KIND_CHANGES:
        assert isinstance(core.parts[old], SitemapJob) and isinstance(core.parts[new], SitemapJob)
