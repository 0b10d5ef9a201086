"""A worker's own bounds on hostile sites: what the reader promises for one process
(``dump``), the worker keeps for the targets it takes from the queue."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.crawl.crawl_kit import start
from tests.distributed.proc_kit import CLI, outputs, run_cli
from tests.distributed.redis_kit import RedisServer
from tests.hostile import hostile_site as hs

WRAPPER = str(Path(__file__).parents[1] / "hostile" / "rss_wrapper.py")
#: The peak the README gives the reader on a hostile site (MiB).
MIB = 400


async def test_gzip_bombs_in_queued_targets_stay_in_the_readers_memory(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Three queued targets whose index lists a gzip bomb (1 GiB of zeros, of whitespace,
    and of whitespace in a second gzip layer) beside good URLs: the worker's own peak RSS
    stays under the reader's bound, every good URL is written, each target is done."""
    site = hs.HostileSite()
    zeros = hs.add_bomb_zeros(site)
    spaces, kept_spaces = hs.add_bomb_spaces(site)
    layer2, kept_layer2 = hs.add_bomb_layer2(site)
    server = await start(site)
    try:
        targets = [site.url(zeros), site.url(spaces), site.url(layer2)]
        base = ("--redis", redis_server.url, "--namespace", namespace)
        queued = await asyncio.to_thread(run_cli, "enqueue", *base, *targets)
        assert queued.returncode == 0, queued.stderr
        out = tmp_path / "out"
        out.mkdir()
        peak_file = tmp_path / "peak"
        worker = await asyncio.create_subprocess_exec(
            sys.executable, WRAPPER, str(peak_file), *CLI, "worker", *base, "-o", str(out),
            "--allow-private", "--drain", "--no-progress",
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(worker.communicate(), 120)
    finally:
        await server.close()
    assert worker.returncode == 0, err.decode()[-2000:]
    peak_kib = int(peak_file.read_text().split()[0])
    assert peak_kib < MIB * 1024, f"worker peak {peak_kib / 1024:.0f} MiB"
    written = {url for urls in outputs(out).values() for url in urls}
    assert {site.url(u) for u in [*kept_spaces, *kept_layer2]} <= written
    assert set(hs.good_urls(site, "bomb")) <= written
    assert "3 targets done" in err.decode()
