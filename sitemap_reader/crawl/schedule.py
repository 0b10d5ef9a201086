"""Flow control for a run: the host-fair job scheduler and the bounded output channel.

:class:`HostScheduler` starts a job only when both a global slot and a slot for the job's
host are free, so a host at its limit never blocks work for other hosts (a plain worker
pool would stall on the connector), and at most ``concurrency`` tasks exist at once no
matter how many sitemaps are queued. Hosts take turns (round robin).

:class:`Channel` carries batches of records from the traversal to the consumer. It is
bounded: when the consumer is slow, producers wait in :meth:`Channel.put`, which holds
their connection and so slows fetching instead of growing memory.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from sitemap_reader.errors import UsageError
from sitemap_reader.options import Parallelism

T = TypeVar("T")
Job = Callable[[], Awaitable[None]]


class HostScheduler:
    """Run jobs with at most ``concurrency`` at once and ``per_host`` per host key.

    Jobs may push more jobs while they run; :meth:`run` returns when nothing is queued
    or running. An exception in a job cancels the others and propagates (jobs are
    expected to turn every foreign failure into a recorded problem themselves).
    """

    def __init__(self, parallelism: Parallelism) -> None:
        self._concurrency = parallelism.concurrency
        self._per_host = parallelism.per_host
        self._queues: dict[str, deque[Job]] = {}
        self._active: dict[str, int] = {}
        self._running = 0
        self._pending = 0
        self._wake = asyncio.Event()

    @property
    def pending(self) -> int:
        """Jobs queued and not started yet."""
        return self._pending

    def push(self, host: str, job: Job) -> None:
        """Queue ``job`` under ``host`` (any string that names the server)."""
        self._queues.setdefault(host, deque()).append(job)
        self._pending += 1
        self._wake.set()

    async def run(self) -> None:
        """Start jobs as slots free up until all are done.

        A job's exception is re-raised as itself (not wrapped in an ExceptionGroup).
        """
        try:
            async with asyncio.TaskGroup() as group:
                await self._loop(group)
        except BaseExceptionGroup as group_error:
            raise group_error.exceptions[0] from None

    async def _loop(self, group: asyncio.TaskGroup) -> None:
        while True:
            self._start_ready(group)
            if self._running == 0 and self._pending == 0:
                return
            self._wake.clear()
            await self._wake.wait()

    def _start_ready(self, group: asyncio.TaskGroup) -> None:
        progress = True
        while progress and self._running < self._concurrency and self._pending:
            progress = False
            for host in list(self._queues):
                if self._running >= self._concurrency:
                    return
                if self._active.get(host, 0) >= self._per_host:
                    continue
                job = self._take(host)
                group.create_task(self._guard(host, job))
                progress = True

    def _take(self, host: str) -> Job:
        queue = self._queues.pop(host)  # re-inserted at the end: hosts take turns
        job = queue.popleft()
        if queue:
            self._queues[host] = queue
        self._pending -= 1
        self._running += 1
        self._active[host] = self._active.get(host, 0) + 1
        return job

    async def _guard(self, host: str, job: Job) -> None:
        try:
            await job()
        finally:
            self._running -= 1
            left = self._active[host] - 1
            if left:
                self._active[host] = left
            else:
                del self._active[host]
            self._wake.set()


class Channel(Generic[T]):
    """A bounded FIFO between one producer side and one consumer, closable.

    ``get()`` returns None once the channel is closed and empty.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise UsageError("channel capacity must be at least 1")
        self._capacity = capacity
        self._items: deque[T] = deque()
        self._closed = False
        self._not_empty = asyncio.Event()
        self._not_full = asyncio.Event()

    def full(self) -> bool:
        """True when a put() would wait."""
        return len(self._items) >= self._capacity

    async def put(self, item: T) -> None:
        """Append ``item``, waiting while the channel is full."""
        while len(self._items) >= self._capacity and not self._closed:
            self._not_full.clear()
            await self._not_full.wait()
        self._items.append(item)
        self._not_empty.set()

    async def get(self) -> T | None:
        """The next item, or None when closed and drained."""
        while not self._items:
            if self._closed:
                return None
            self._not_empty.clear()
            await self._not_empty.wait()
        item = self._items.popleft()
        self._not_full.set()
        return item

    def close(self) -> None:
        """No more items will come; waiting getters see the end after the last item."""
        self._closed = True
        self._not_empty.set()
        self._not_full.set()
