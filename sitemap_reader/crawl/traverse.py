"""The aiohttp driver: a short loop that carries out what the discovery core decides.

The rules of walking a site live in :class:`~sitemap_reader.discovery.Discovery`; this
module only does the I/O. Every :class:`~sitemap_reader.discovery.Schedule` becomes a
job of the :class:`~sitemap_reader.crawl.schedule.HostScheduler` (bounded globally and
per host); a job asks the core what to fetch, streams the response into it chunk by
chunk under the per-sitemap :class:`~sitemap_reader.crawl.fetch.Deadline`, and carries
out the actions that come back: records and state checkpoints go into the bounded output
:class:`~sitemap_reader.crawl.schedule.Channel` (the deadline is paused while a producer
waits on a slow consumer), new jobs into the scheduler. A failure of the fetch is
reported to the core as an event; any other exception of a job is reported as a crash,
which fails that sitemap only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import IO

from sitemap_reader.crawl.fetch import CHUNK_SIZE, Deadline, Fetcher, FetchFailed
from sitemap_reader.crawl.incremental import Item
from sitemap_reader.crawl.pool import ParsePool, RemoteParser
from sitemap_reader.crawl.schedule import Channel, HostScheduler
from sitemap_reader.discovery import (
    Action,
    Checkpoint,
    Discovery,
    Emit,
    Fetch,
    Observer,
    Run,
    Schedule,
    Stop,
    Target,
    Ticket,
)
from sitemap_reader.discovery.parsing import BodyParser, BodySpec, local_parser
from sitemap_reader.options import Options
from sitemap_reader.records import UrlRecord

Batch = list[UrlRecord]


class Repeats(list[UrlRecord]):
    """A channel item of other copies of URLs already sent, for a ranked sink to merge."""


#: Records per channel item: one 64 KiB chunk of gzip can hold 8,000 records, so big
#: batches are split to keep the channel's bound (in items) a bound on memory too.
MAX_BATCH = 2048


class RunStopped(Exception):
    """A fetch was cut because the run stopped, or its deadline came (the core then stops
    the run): the sitemap is not finished, not failed."""


class Traversal:
    """One run of a :class:`~sitemap_reader.crawl.SitemapReader` over its targets.

    ``fetchers`` has one fetcher per target (guarded or open, as the reader decided);
    ``browsers`` the same over the browser client (None: the run does not use it), for
    the fetches the core asks to send with it (``Fetch.client``).
    ``channel`` is None when nobody consumes records (``tree()``).
    """

    def __init__(
        self,
        options: Options,
        run: Run,
        targets: Sequence[Target],
        fetchers: Sequence[Fetcher],
        scheduler: HostScheduler,
        channel: Channel[Item] | None,
        observer: Observer | None = None,
        pool: ParsePool | None = None,
        merge: bool = False,
        browsers: Sequence[Fetcher | None] | None = None,
    ) -> None:
        self.pool = pool
        parsers = self._parser if pool is not None and pool.processes > 0 else None
        self.core = Discovery(
            targets, options, observer=observer, run=run, parsers=parsers, merge=merge
        )
        #: Seconds for one sitemap (the per-sitemap deadline).
        self.seconds = options.timeouts.timeout
        #: The remote parser the core's last ``response`` made (claimed by that fetch).
        self._made: RemoteParser | None = None
        self.channel = channel
        self.scheduler = scheduler
        self.fetchers = list(fetchers)
        self.browsers = list(browsers or [])
        #: The host of each target: the site its user headers stay on.
        self.sites = [target.host for target in targets]
        #: The budgets of the fetches in flight: a stop of the run ends them.
        self._budgets: set[Deadline] = set()

    async def run(self) -> None:
        """Start every target, wait for all jobs; the core sets ``run.error``."""
        try:
            await self._perform(self.core.start())
            await self.scheduler.run()
            await self._perform(self.core.finish())
        finally:
            stats = self.core.stats
            if stats.finished is None:
                stats.finished = time.monotonic()
            if self.channel is not None:
                self.channel.close()

    async def _job(self, ticket: Ticket) -> None:
        """One scheduler job: begin, then fetch until the core asks for nothing more."""
        core = self.core
        try:
            fetch = await self._perform(core.begin(ticket))
            while fetch is not None:
                fetch = await self._perform(await self._fetch(fetch))
        except Exception as exc:  # a bug of ours: this sitemap fails, the run goes on
            await self._perform(core.crashed(ticket, exc))

    async def _perform(self, actions: list[Action], budget: Deadline | None = None) -> Fetch | None:
        """Carry out the core's actions; the Fetch among them (if any) is returned."""
        fetch = None
        for action in actions:
            if isinstance(action, Emit):
                if action.records:
                    await self._send(action.records, budget)
                if action.repeats and self.channel is not None:
                    await self._send(Repeats(action.repeats), budget)
            elif isinstance(action, Schedule):
                self.scheduler.push(action.host, functools.partial(self._job, action.ticket))
            elif isinstance(action, Checkpoint):
                await self._checkpoint(action)
            elif isinstance(action, Fetch):
                fetch = action
            elif isinstance(action, Stop):  # no body is wanted now: end every read at once
                for live in self._budgets:
                    live.end_now()
        return fetch

    # -- fetching ------------------------------------------------------------------------

    def _parser(self, spec: BodySpec) -> BodyParser:
        """The core's parser factory: a large body goes to a worker process (``pool``)."""
        assert self.pool is not None
        remote = self.pool.parser(spec, seen=self.core.stats.bytes, seconds=self.seconds)
        if remote is None:
            return local_parser(spec)
        self._made = remote
        return remote

    async def _fetch(self, fetch: Fetch) -> list[Action]:
        """Do one fetch for the core; its final answer (end of body, or the failure)."""
        if fetch.kind != "http":
            return await self._read_local(fetch)
        remotes: list[RemoteParser] = []
        try:
            return await self._fetch_http(fetch, remotes)
        finally:
            for remote in remotes:  # a body given up (retry, crash): the worker forgets it
                remote.drop()

    async def _fetch_http(self, fetch: Fetch, remotes: list[RemoteParser]) -> list[Action]:
        core, ticket = self.core, fetch.ticket
        started = time.monotonic()
        try:
            async with (
                self._budget() as budget,
                self._fetcher(fetch).open(
                    fetch.url,
                    max_redirects=fetch.max_redirects,
                    budget=budget,
                    accept_hop=functools.partial(core.redirect, ticket),
                    retry_connect=fetch.retry_connect,
                    request_headers=fetch.request_headers,
                    spacing=fetch.spacing,
                    site=self.sites[fetch.target],
                ) as resp,
            ):
                if resp.refused is not None:
                    return core.refused(ticket, resp.refused, resp.redirects, resp.status)
                self._made = None
                actions = core.response(
                    ticket, url=resp.url, status=resp.status, response_headers=resp.headers
                )
                remote, self._made = self._made, None
                if remote is not None:
                    remotes.append(remote)
                await self._perform(actions, budget)
                if fetch.body and core.reading(ticket):
                    await self._stream(ticket, resp.chunks(), budget, remote)
                if remote is not None:
                    await self._collect(ticket, remote, budget)
        except RunStopped:  # the run's stop cut this fetch: not finished, not failed
            return core.overdue() + core.end(ticket, seconds=time.monotonic() - started)
        except FetchFailed as exc:
            return core.failure(
                ticket,
                exc.code,
                exc.message,
                cannot_connect=exc.cannot_connect,
                status=exc.status,
            )
        return core.end(ticket, seconds=time.monotonic() - started)

    def _fetcher(self, fetch: Fetch) -> Fetcher:
        """The fetcher of the target, over the client the core asked for."""
        if fetch.client == "browser":
            found = self.browsers[fetch.target] if self.browsers else None
            assert found is not None, "the browser client was asked for but not set up"
            return found
        return self.fetchers[fetch.target]

    async def _stream(
        self,
        ticket: Ticket,
        chunks: AsyncGenerator[bytes, None],
        budget: Deadline,
        remote: RemoteParser | None = None,
    ) -> None:
        core = self.core
        expired = budget.passed
        async with contextlib.aclosing(chunks) as body:
            async for chunk in body:
                if remote is None:
                    await self._parse_here(ticket, chunk, budget)
                else:
                    await self._perform(core.body(ticket, chunk, expired), budget)
                while remote is not None and remote.backlogged:  # the worker is behind
                    await remote.arrival()
                    await self._perform(core.parsed(ticket), budget)
                if not core.reading(ticket):
                    break

    async def _parse_here(self, ticket: Ticket, chunk: bytes, budget: Deadline) -> None:
        """Parse a wire chunk on this loop in the parts the core asks for (small ones for
        gzip), letting the other jobs run between two: a chunk that inflates to tens of
        MB holds the loop for one part at a time, not for all of it, so the deadlines of
        the other sitemaps do not run out behind it."""
        core = self.core
        size = core.feed_size(ticket, chunk)
        for start in range(0, len(chunk), size):
            part = chunk[start : start + size]
            await self._perform(core.body(ticket, part, budget.passed), budget)
            if start + size < len(chunk):
                if not core.reading(ticket):
                    return
                await asyncio.sleep(0)

    async def _collect(self, ticket: Ticket, remote: RemoteParser, budget: Deadline) -> None:
        """The body is read: take the worker's answers until its last (or its failure)."""
        core = self.core
        if not core.reading(ticket) and (budget.passed() or core.stopped is not None):
            remote.drop()  # out of time, or the run stopped: its answers are not wanted
            return
        remote.end_of_body()
        while not remote.settled:
            await remote.arrival()
            await self._perform(core.parsed(ticket), budget)

    @contextlib.asynccontextmanager
    async def _budget(self) -> AsyncIterator[Deadline]:
        """The per-sitemap deadline; running out becomes ``FetchFailed("timeout")``, or
        :class:`RunStopped` when the run stopped or its deadline (the ``deadline`` option)
        came first."""
        left = self.core.remaining()
        budget = Deadline(self.seconds if left is None else min(self.seconds, left))
        self._budgets.add(budget)
        try:
            async with budget:
                yield budget
        except TimeoutError as exc:
            if not budget.expired:
                raise
            if self.core.stopped is not None or (left is not None and left <= self.seconds):
                raise RunStopped from exc
            message = f"no complete answer within {self.seconds:g} s"
            raise FetchFailed("timeout", message) from exc
        finally:
            self._budgets.discard(budget)

    async def _read_local(self, fetch: Fetch) -> list[Action]:
        """A local file or stdin, read in a thread (a pipe gives what it has)."""
        ticket = fetch.ticket
        try:
            if fetch.kind == "stdin":
                await self._pump(ticket, sys.stdin.buffer)
            else:
                stream = await asyncio.to_thread(open, fetch.url, "rb")
                try:
                    await self._pump(ticket, stream)
                finally:
                    stream.close()
        except OSError as exc:
            return self.core.failure(ticket, "read", str(exc))
        return self.core.end(ticket)

    async def _pump(self, ticket: Ticket, stream: IO[bytes]) -> None:
        core = self.core
        read = getattr(stream, "read1", stream.read)  # read1: what a pipe has, no waiting
        while core.reading(ticket):
            chunk = await asyncio.to_thread(read, CHUNK_SIZE)
            if not chunk:
                return
            await self._perform(core.body(ticket, chunk))

    # -- output --------------------------------------------------------------------------

    async def _checkpoint(self, checkpoint: Checkpoint) -> None:
        if self.channel is None:  # tree(): nobody consumes records, write now
            for _ in checkpoint.run():
                pass
        else:
            await self.channel.put(checkpoint)

    async def _send(self, batch: Batch, budget: Deadline | None) -> None:
        """Put ``batch`` in the channel in parts of at most :data:`MAX_BATCH` records."""
        channel = self.channel
        if channel is None:
            return
        kind = type(batch)
        for start in range(0, len(batch), MAX_BATCH):
            part = kind(batch[start : start + MAX_BATCH]) if len(batch) > MAX_BATCH else batch
            if budget is None or not channel.full():
                await channel.put(part)
                continue
            budget.pause()  # the consumer's time is not the server's
            try:
                await channel.put(part)
            finally:
                budget.resume()
