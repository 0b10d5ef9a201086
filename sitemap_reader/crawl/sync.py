"""The synchronous front door: :func:`iter_urls`.

How it works, and why it is safe everywhere: the async crawler always runs on a private
event loop in a worker thread. Records cross to the caller's thread in batches through a
bounded ``queue.Queue``, so a slow caller slows the crawl (backpressure) instead of
growing memory. Because the caller's thread never runs that loop, ``iter_urls`` works
the same from a plain script, from a thread of your own, and from code running inside
an event loop's thread (a Jupyter cell, a callback of an async framework): there it
blocks that thread while it waits for records, but it cannot deadlock, since the work
happens on the other loop. In async code, prefer ``async for`` over
:meth:`SitemapReader.urls`, which does not block the loop.

Leaving the loop early (``break``, an exception, closing the generator) cancels the crawl
and waits briefly for the worker thread to close its connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Generator, Sequence
from typing import Any, Unpack

from sitemap_reader.crawl.reader import SitemapReader
from sitemap_reader.discovery.targets import given_targets
from sitemap_reader.options import Options
from sitemap_reader.options._keywords import ReaderKeywords
from sitemap_reader.options.groups import options_of
from sitemap_reader.records import UrlRecord

#: Batches in flight between the worker thread and the caller.
HANDOFF_BATCHES = 8
#: How often a blocked hand-off re-checks whether the caller went away, in seconds.
_POLL_SECONDS = 0.05
#: How long closing the iterator waits for the worker thread to wind down.
_JOIN_SECONDS = 10.0

_Message = tuple[str, Any]


class _Worker:
    """The worker thread's side: a private loop running one reader."""

    def __init__(self, target: str | Sequence[str], options: Options):
        self.target = target
        self.options = options
        self.handoff: queue.Queue[_Message] = queue.Queue(maxsize=HANDOFF_BATCHES)
        self.stop = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.thread = threading.Thread(target=self._main, name="sitemap-reader", daemon=True)

    def _main(self) -> None:
        asyncio.run(self._pump())

    async def _pump(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        message: _Message = ("end", None)
        try:
            async with (
                SitemapReader(self.options) as reader,
                contextlib.aclosing(reader.batches(self.target)) as batches,
            ):
                async for batch in batches:
                    if not await self._offer(("batch", batch)):
                        return
        except asyncio.CancelledError:
            return
        except Exception as exc:  # handed to the caller's thread and raised there
            message = ("error", exc)
        await self._offer(message)

    async def _offer(self, message: _Message) -> bool:
        try:
            self.handoff.put_nowait(message)
            return True
        except queue.Full:
            return await asyncio.to_thread(self._put_blocking, message)

    def _put_blocking(self, message: _Message) -> bool:
        while not self.stop.is_set():
            try:
                self.handoff.put(message, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def cancel(self) -> None:
        """Called from the caller's thread: stop the crawl and let the thread end."""
        self.stop.set()
        loop, task = self.loop, self.task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(task.cancel)
        self.thread.join(_JOIN_SECONDS)


def iter_urls(
    target: str | Sequence[str],
    options: Options | None = None,
    **flat: Unpack[ReaderKeywords],
) -> Generator[UrlRecord, None, None]:
    """Yield the URL records of ``target`` synchronously (see the module docstring).

    ``options`` and the flat keywords are :class:`SitemapReader`'s, what is delivered
    among them (``ranked``, ``top``, ``sample``, ``include``, ``max_urls``... as in
    :meth:`SitemapReader.urls`). Raises what :meth:`SitemapReader.urls` raises
    (``DiscoveryError`` when nothing was found, ``UsageError`` for bad options), in the
    caller's thread.

    >>> for record in iter_urls("example.com", concurrency=8):   # doctest: +SKIP
    ...     print(record.url)
    """
    chosen = options_of("iter_urls", options, flat, ("target", "options"))
    worker = _Worker(given_targets("iter_urls", target), chosen)
    worker.thread.start()
    try:
        while True:
            kind, payload = worker.handoff.get()
            if kind == "batch":
                yield from payload
            elif kind == "error":
                raise payload
            else:
                return
    finally:
        worker.cancel()
