"""A crawl loop on a :class:`~sitemap_reader.SitemapLoader`, run as a child process.

Usage: ``python loader_child.py TARGET PROGRESS BUFFER``. For every record it prints
``out URL`` when it gets it and ``ack URL`` once :meth:`ack` returned (stdout, flushed
at once), then ``end HANDLED`` and its own peak memory (``VmHWM`` in KiB) when the
loader has nothing more. The parent kills it with SIGKILL at any line it likes.
"""

from __future__ import annotations

import asyncio
import sys

import sitemap_reader as sr


def peak_kib() -> int:
    """This process's peak resident set (VmHWM), KiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmHWM:")))


async def crawl(target: str, progress: str, buffer: int) -> None:
    """Take every record, say so, acknowledge it, say so."""
    write = sys.stdout.write
    flush = sys.stdout.flush
    async with sr.SitemapLoader(
        [target], progress=progress, buffer=buffer, allow_private=True
    ) as loader:
        while (record := await loader.next()) is not None:
            write(f"out {record.url}\n")
            flush()
            await loader.ack(record.url)
            write(f"ack {record.url}\n")
            flush()
        write(f"end {loader.handled} {peak_kib()}\n")
        flush()


if __name__ == "__main__":
    asyncio.run(crawl(sys.argv[1], sys.argv[2], int(sys.argv[3])))
