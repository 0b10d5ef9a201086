"""sitemap_reader.crawlee: real Crawlee crawls (HttpCrawler) on loopback pages."""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Literal, cast

import pytest
from crawlee import ConcurrencySettings, RequestOptions
from crawlee.crawlers import HttpCrawler, HttpCrawlingContext
from crawlee.request_loaders import RequestLoader, RequestManagerTandem

from sitemap_reader import demo
from sitemap_reader.crawlee import RECORD_KEY, SitemapRequestLoader
from sitemap_reader.errors import install_line
from sitemap_reader.records import UrlRecord
from tests.loader.conftest import MakeSite
from tests.loader.kill_kit import Audit, run_child

CHILD = str(Path(__file__).with_name("crawlee_child.py"))
CONCURRENCY = 4  # as in crawlee_child.py


def crawler_for(
    manager: RequestManagerTandem, seen: list[tuple[str, dict[str, object]]]
) -> HttpCrawler:
    """An HttpCrawler that notes each page's URL and sitemap record."""
    crawler = HttpCrawler(
        request_manager=manager,
        concurrency_settings=ConcurrencySettings(
            max_concurrency=CONCURRENCY, desired_concurrency=CONCURRENCY
        ),
        configure_logging=False,
    )

    @crawler.router.default_handler
    async def handler(context: HttpCrawlingContext) -> None:
        record = context.request.user_data[RECORD_KEY]
        assert isinstance(record, dict)
        seen.append((context.request.url, record))

    return crawler


async def test_demo_site_every_page_once(tmp_path: Path) -> None:
    """An HttpCrawler on the demo site crawls every page once, each with its record as
    user_data["sitemap_reader"]; every request is acknowledged."""
    seen: list[tuple[str, dict[str, object]]] = []
    async with (
        demo.serve() as base,
        SitemapRequestLoader(base + "/", progress=tmp_path / "p.db") as loader,
    ):
        assert isinstance(loader, RequestLoader)
        crawler = crawler_for(await loader.to_tandem(), seen)
        await crawler.run()
        assert await loader.is_finished()
        assert (await loader.get_handled_count(), await loader.get_total_count()) == (17, 17)
    urls = [url for url, _ in seen]
    assert len(urls) == len(set(urls)) and set(urls) == demo.expected_urls(base)
    home = next(record for url, record in seen if url == base + "/")
    assert home["priority"] == 1.0 and home["changefreq"] == "daily"


async def test_transform_changes_and_skips(make_site: MakeSite, tmp_path: Path) -> None:
    """transform= labels requests from the record and skips some; skipped ones are
    acknowledged without a request."""

    def transform(
        record: UrlRecord, options: RequestOptions
    ) -> RequestOptions | Literal["skip", "unchanged"]:
        if record.url.endswith("/0"):
            return "skip"
        return {**options, "label": "low" if (record.priority or 0) < 0.5 else "high"}

    site = await make_site(2, 10)
    labels: list[str | None] = []
    async with SitemapRequestLoader(
        site.base,
        progress=tmp_path / "p.db",
        transform=transform,
        allow_private=True,
    ) as loader:
        crawler = HttpCrawler(request_manager=await loader.to_tandem(), configure_logging=False)

        @crawler.router.default_handler
        async def handler(context: HttpCrawlingContext) -> None:
            labels.append(context.request.label)

        await crawler.run()
        assert loader.loader.handled == 20
    assert len(labels) == 18 and set(labels) == {"low", "high"}
    assert site.page_hits()["/p/0/0"] == 0


async def test_a_transform_that_raises_costs_its_record_only(
    make_site: MakeSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A transform that raises on some records: each of those is failed (handed out again,
    given up after max_tries) with an error line naming its URL, and the crawl goes on
    with every other page (the record used to stay handed out, uncrawled)."""

    def transform(
        record: UrlRecord, options: RequestOptions
    ) -> RequestOptions | Literal["skip", "unchanged"]:
        if record.url.endswith("/3"):
            raise ValueError("no label for this one")
        return "unchanged"

    site = await make_site(2, 10)
    crawled: list[str] = []
    caplog.set_level(logging.ERROR, logger="sitemap_reader")
    async with SitemapRequestLoader(
        site.base, progress=tmp_path / "p.db", transform=transform, allow_private=True
    ) as loader:
        crawler = HttpCrawler(request_manager=await loader.to_tandem(), configure_logging=False)

        @crawler.router.default_handler
        async def handler(context: HttpCrawlingContext) -> None:
            crawled.append(context.request.url)

        await crawler.run()
        assert (loader.loader.handled, loader.loader.failed) == (18, 2)
    bad = {url for url in site.page_urls() if url.endswith("/3")}
    assert set(crawled) == site.page_urls() - bad and len(crawled) == 18
    for url in bad:
        lines = [r.getMessage() for r in caplog.records if url in r.getMessage()]
        assert lines and all("no label for this one" in line for line in lines)


@pytest.mark.slow
async def test_restart_after_sigkill(make_site: MakeSite, tmp_path: Path) -> None:
    """A Crawlee crawl killed with SIGKILL at a random page and restarted on the same
    progress file crawls the rest: every page handled, none crawled twice beyond the
    pages in flight at the kill."""
    site = await make_site(4, 60)
    expected = site.page_urls()
    for trial in range(2):
        progress = str(tmp_path / f"p{trial}.db")
        storage = {"CRAWLEE_STORAGE_DIR": str(tmp_path / f"storage{trial}")}
        kill_at = random.Random(trial).randrange(10, len(expected) - 20)
        before = site.page_hits()
        audit = Audit()
        killed = await run_child(
            site.base, progress, buffer=32, kill_after=kill_at, script=CHILD, env=storage
        )
        assert killed.killed
        audit.add(killed)
        audit.add(
            await run_child(
                site.base, progress, buffer=32, kill_after=None, script=CHILD, env=storage
            )
        )
        assert audit.lost(expected, progress) == set()
        crawled = site.page_hits() - before
        assert set(crawled) == {u.removeprefix(site.base) for u in expected}
        twice = [page for page, n in crawled.items() if n > 1]
        assert len(twice) <= CONCURRENCY, twice
        assert len(audit.redelivered()) <= CONCURRENCY


def test_missing_crawlee_names_the_extra() -> None:
    """Without Crawlee, importing sitemap_reader.crawlee names the extra to install."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['crawlee'] = None\n"
        "try:\n    import sitemap_reader.crawlee\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert install_line("crawlee") in out.stdout


async def test_bad_transform_is_a_clear_error(make_site: MakeSite, tmp_path: Path) -> None:
    """A transform that returns options Crawlee cannot build a request from is a clear error."""
    from sitemap_reader.errors import UsageError

    def bad(record: UrlRecord, options: RequestOptions) -> RequestOptions:
        return cast(RequestOptions, {"url": 5})

    site = await make_site(1, 2)
    async with SitemapRequestLoader(
        site.base, progress=tmp_path / "p.db", transform=bad, allow_private=True
    ) as loader:
        with pytest.raises(UsageError, match="transform"):
            await loader.fetch_next_request()


def test_example_crawls_the_demo_site(tmp_path: Path) -> None:
    """examples/crawlee_crawl/run.py crawls every page of the demo site once, in one command."""
    import json
    import os
    import subprocess
    import sys

    script = Path(__file__).parents[2] / "examples" / "crawlee_crawl" / "run.py"
    env = {**os.environ, "CRAWLEE_STORAGE_DIR": str(tmp_path / "storage")}
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env,
        cwd=tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    pages = [json.loads(line) for line in result.stdout.splitlines()]
    base = pages[0]["url"].split("/", 3)[:3]
    assert sorted(p["url"] for p in pages) == sorted(demo.expected_urls("/".join(base)))
    assert all(p["title"].endswith("sitemap-reader demo") for p in pages)
    assert "17 pages handled" in result.stderr
    assert sorted(os.listdir(tmp_path)) in ([], ["storage"])  # nothing written in the cwd
