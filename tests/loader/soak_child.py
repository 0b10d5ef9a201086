"""The soak's crawl loop (``tests/loader/soak_kit.py``), run as a child process.

Usage: ``python soak_child.py PROGRESS BUFFER TARGET...``. For every record it prints
``o URL MS`` (``MS``: how long :meth:`~sitemap_reader.SitemapLoader.next` took, in
milliseconds) and ``a URL`` once :meth:`ack` returned, then ``end HANDLED`` when the
loader has nothing more. The parent kills it with SIGKILL whenever it likes.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time

import sitemap_reader as sr


async def crawl(progress: str, buffer: int, targets: list[str]) -> None:
    """Take every record, say so with the wait, acknowledge it, say so."""
    write = sys.stdout.write
    clock = time.monotonic
    async with sr.SitemapLoader(
        targets, progress=progress, buffer=buffer, allow_private=True, retries=0
    ) as loader:
        while True:
            asked = clock()
            record = await loader.next()
            if record is None:
                break
            write(f"o {record.url} {(clock() - asked) * 1000:.1f}\n")
            await loader.ack(record.url)
            write(f"a {record.url}\n")
        write(f"end {loader.handled}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    sys.stdout.reconfigure(line_buffering=False)  # type: ignore[union-attr]
    asyncio.run(crawl(sys.argv[1], int(sys.argv[2]), sys.argv[3:]))
