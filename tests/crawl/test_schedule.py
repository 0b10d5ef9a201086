"""Pure pieces of the crawler: targets, the dedupe table, the scheduler, the channel, nodes."""

from __future__ import annotations

import asyncio
import tracemalloc

import pytest

from sitemap_reader.crawl import WELL_KNOWN_PATHS, SitemapNode, Stats
from sitemap_reader.crawl.schedule import Channel, HostScheduler
from sitemap_reader.discovery.dedupe import UrlSet
from sitemap_reader.discovery.model import Skipped
from sitemap_reader.discovery.targets import classify, well_known_urls
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Parallelism
from sitemap_reader.records import Problem


@pytest.mark.parametrize(
    ("text", "kind", "url", "schemes"),
    [
        ("example.com", "site", "https://example.com/robots.txt", ("https", "http")),
        ("example.com:8080", "site", "https://example.com:8080/robots.txt", ("https", "http")),
        ("example.com/news.xml", "sitemap", "https://example.com/news.xml", ("https", "http")),
        ("https://example.com", "site", "https://example.com/robots.txt", ("https",)),
        ("http://example.com/", "site", "http://example.com/robots.txt", ("http",)),
        ("https://example.com/robots.txt", "robots", "https://example.com/robots.txt", ("https",)),
        ("https://example.com/?p=sitemap", "sitemap", "https://example.com/?p=sitemap", ("https",)),
        ("https://example.com/s.xml#x", "sitemap", "https://example.com/s.xml", ("https",)),
        ("-", "stdin", "-", ()),
    ],
)
def test_classify_targets(text: str, kind: str, url: str, schemes: tuple[str, ...]) -> None:
    """Each target form is classified as documented in crawl/targets.py."""
    target = classify(text)
    assert (target.kind, target.url, target.schemes) == (kind, url, schemes)


def test_classify_file_and_errors(tmp_path: object) -> None:
    """An existing path is a file; other schemes, spaces and missing .xml files are errors."""
    from pathlib import Path

    path = Path(str(tmp_path)) / "local.xml"
    path.write_bytes(b"x")
    assert classify(str(path)).kind == "file"
    for bad in ("ftp://example.com/", "missing-file.xml", "exa mple.com", "https:///x"):
        with pytest.raises(UsageError):
            classify(bad)


def test_well_known_paths_fixed_order() -> None:
    """The fallback list is the documented one, on the robots.txt's origin, in order."""
    assert WELL_KNOWN_PATHS[:3] == ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-index.xml")
    urls = well_known_urls("https://www.example.com:8443/robots.txt")
    assert urls[0] == "https://www.example.com:8443/sitemap.xml" and len(urls) == 6


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


async def test_scheduler_bounds_and_turns() -> None:
    """The scheduler keeps global and per-host bounds and lets hosts take turns."""
    scheduler = HostScheduler(Parallelism(concurrency=3, per_host=2))
    running: dict[str, int] = {}
    peak = {"all": 0, "host": 0}
    order: list[str] = []
    gate = asyncio.Event()

    def job(host: str) -> object:
        async def run() -> None:
            order.append(host)
            running[host] = running.get(host, 0) + 1
            peak["all"] = max(peak["all"], sum(running.values()))
            peak["host"] = max(peak["host"], running[host])
            if sum(running.values()) == 3:
                gate.set()
            await gate.wait()
            running[host] -= 1

        return run

    for _ in range(4):
        scheduler.push("a", job("a"))  # type: ignore[arg-type]
    for _ in range(4):
        scheduler.push("b", job("b"))  # type: ignore[arg-type]
    await scheduler.run()
    assert peak == {"all": 3, "host": 2} and len(order) == 8
    assert order[:3] in (["a", "b", "a"], ["a", "a", "b"])
    assert set(order[:3]) == {"a", "b"}


async def test_scheduler_reraises_job_errors() -> None:
    """A bug in a job surfaces as itself, not wrapped in an ExceptionGroup."""
    scheduler = HostScheduler(Parallelism(concurrency=1, per_host=1))

    async def broken() -> None:
        raise KeyError("bug")

    scheduler.push("h", broken)
    with pytest.raises(KeyError):
        await scheduler.run()


async def test_channel_bounded_and_closable() -> None:
    """put() waits when full; get() drains then returns None after close()."""
    channel: Channel[int] = Channel(2)
    await channel.put(1)
    await channel.put(2)
    assert channel.full()
    blocked = asyncio.ensure_future(channel.put(3))
    await asyncio.sleep(0)
    assert not blocked.done()
    assert await channel.get() == 1
    await blocked
    channel.close()
    assert [await channel.get(), await channel.get(), await channel.get()] == [2, 3, None]


def test_node_verdicts_and_json() -> None:
    """ok / failed / reason follow the documented rules; to_dict nests children."""
    node = SitemapNode("https://e.com/s.xml", format="urlset", complete=True, status=200)
    assert node.ok and not node.failed and node.reason is None
    node.add_problem("body", "body ended early", fatal=True)
    node.add_problem("body", "again", fatal=True)
    assert node.problems == [Problem("body", "body ended early", 2, True)]
    assert node.failed and node.reason == "body ended early"
    robots = SitemapNode("https://e.com/robots.txt", kind="robots", status=404)
    visited = Skipped("visited", "already visited")
    robots.children.append(SitemapNode("https://e.com/x.xml", skipped=visited))
    assert robots.ok and not robots.children[0].failed
    data = robots.to_dict()
    skipped = data["children"][0]["skipped"]
    assert skipped == {"code": "visited", "reason": "already visited"} and data["kind"] == "robots"
    assert [n.url for n in robots.walk()] == ["https://e.com/robots.txt", "https://e.com/x.xml"]
    stats = Stats(urls_emitted=3)
    stats.finished = stats.started + 1.5
    assert stats.to_dict()["seconds"] == 1.5 and stats.to_dict()["urls_emitted"] == 3
