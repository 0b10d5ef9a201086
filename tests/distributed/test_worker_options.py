"""``follow`` as a function and ``per_target`` at the Redis worker's Python door (issue 41,
left from last round): a worker given them uses them for the targets it takes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sitemap_reader.distributed.worker import Output, Worker
from sitemap_reader.options import Options
from tests.crawl.crawl_kit import Site, start
from tests.distributed.proc_kit import outputs, run_cli
from tests.distributed.redis_kit import RedisServer
from tests.loader.test_per_target import keyed_site


async def test_a_worker_carries_per_target_and_a_follow_function(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """A site whose sitemaps answer only with the target's own header: the worker's
    per_target header reaches them and its follow function picks /keep.xml; another
    queued target's entry in per_target is no error (one target a run)."""
    site = Site()
    server = await start(site)
    try:
        pages = keyed_site(site)
        base = ("--redis", redis_server.url, "--namespace", namespace)
        queued = await asyncio.to_thread(run_cli, "enqueue", *base, site.base)
        assert queued.returncode == 0, queued.stderr
        out = tmp_path / "out"
        out.mkdir()
        options = Options.of(
            allow_private=True,
            per_target={site.base: {"headers": {"X-Key": "1"}}, "other.example": {}},
            follow=lambda url: url.endswith("/keep.xml"),
        )
        worker = Worker(redis_server.url, Output(str(out)), options, namespace=namespace)
        report = await worker.run(drain=True)
    finally:
        await server.close()
    assert report.done == 1
    written = [url for urls in outputs(out).values() for url in urls]
    assert sorted(written) == pages
    assert site.hits["/skip.xml"] == 0
