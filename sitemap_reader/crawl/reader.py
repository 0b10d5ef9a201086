"""The traversal: from targets to a stream of records, with the run's tree and stats.

Theory of operation
-------------------
A run turns each target into a root node and a first job: fetch the site's robots.txt
(then the sitemaps it lists, or the well-known paths when it lists none), fetch the
sitemap given as the target, or read a local file / stdin. Every job goes through one
:class:`~sitemap_reader.crawl.schedule.HostScheduler`, which bounds the work globally and
per host. A sitemap job streams its body chunk by chunk into a
:class:`~sitemap_reader.parse.SitemapParser` built once the response headers are in
(its base URL is the final URL after redirects). Each chunk's items are handled at once:

* a :class:`~sitemap_reader.records.SitemapRef` becomes a child node and, unless it is
  skipped (already visited, robots.txt, too deep, over the sitemap budget), a new job;
* a :class:`~sitemap_reader.records.UrlRecord` passes the scope filter and the run-wide
  dedupe (:class:`~sitemap_reader.discovery.dedupe.UrlSet`), and joins the chunk's batch.

A batch goes into a bounded :class:`~sitemap_reader.crawl.schedule.Channel` right away,
so the first records reach the consumer while the rest of the site is still being
fetched, and a slow consumer holds producers (and their connections) instead of letting
memory grow. The per-sitemap deadline is paused while a producer waits on the channel.

"Visited" holds the normalized URL of every sitemap scheduled and of every redirect hop
followed, so each sitemap is fetched at most once per run; a redirect into a visited URL
is refused before it is requested. Failures never leave a job: they become problems on
the job's node, and the node counts as failed in the stats. Only when nothing at all
could be discovered does :meth:`SitemapReader.urls` raise
:class:`~sitemap_reader.errors.DiscoveryError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from types import TracebackType
from typing import Unpack

import aiohttp
from aiohttp.abc import AbstractResolver

from sitemap_reader.crawl import browser
from sitemap_reader.crawl.budget import RedisPacer, pacer_for
from sitemap_reader.crawl.fetch import AiohttpClient, Fetcher, build_session, check_session
from sitemap_reader.crawl.incremental import IncrementalRun, Item, unpack
from sitemap_reader.crawl.pool import ParsePool, default_processes
from sitemap_reader.crawl.resolver import PublicOnlyResolver
from sitemap_reader.crawl.schedule import Channel, HostScheduler
from sitemap_reader.crawl.traverse import Repeats, Traversal
from sitemap_reader.delivery.order import cut, make_sink
from sitemap_reader.discovery.addresses import AddressPolicy, site_trust
from sitemap_reader.discovery.model import Run, Stats
from sitemap_reader.discovery.observer import NULL_OBSERVER, Observer
from sitemap_reader.discovery.targets import (
    Target,
    check_per_target,
    classify,
    given_targets,
    options_for,
)
from sitemap_reader.errors import DiscoveryError, UsageError
from sitemap_reader.options import Delivery, Options
from sitemap_reader.options._keywords import DeliveryKeywords, ReaderKeywords
from sitemap_reader.options.groups import options_of
from sitemap_reader.options.keywords import make_group, split
from sitemap_reader.options.limits import Limits
from sitemap_reader.records import UrlRecord
from sitemap_reader.store import StateStore

#: Batches buffered between the traversal and the consumer (a batch is the new records of
#: one 64 KiB chunk, at most 2,048): enough to keep the consumer busy, small enough to
#: bound memory.
CHANNEL_BATCHES = 8

logger = logging.getLogger("sitemap_reader")


def report_failed_targets(run: Run) -> None:
    """One error line per target that gave nothing, when others did (when none did, the
    caller raises :class:`~sitemap_reader.errors.DiscoveryError` naming each instead)."""
    if run.error is not None:
        return
    for target, why in run.failed_targets.items():
        logger.error("nothing discovered for %s: %s", target, why)


class SitemapReader:
    """Discover and stream the URLs a site publishes in its sitemaps.

    >>> async def main() -> None:                      # doctest: +SKIP
    ...     async with SitemapReader(concurrency=16, per_host=4) as reader:
    ...         async for record in reader.urls("example.com"):
    ...             print(record.url, record.lastmod)
    ...         print(reader.last_run.stats.to_dict())

    The options are an :class:`~sitemap_reader.options.Options` value, or its flat
    keywords (``SitemapReader(deadline=60, scope="host")``; over ``options`` when both are
    given): every one of them, with its meaning and default, is in the option table
    (docs/reference/options.md) and in :mod:`sitemap_reader.options`. A bad value or an
    unknown keyword is a :class:`~sitemap_reader.errors.UsageError` at once, naming the
    option.

    Two arguments are live objects, not options. ``resolver`` replaces aiohttp's DNS
    resolver (for tests: map made-up names to 127.0.0.1). ``session`` is your own
    ``aiohttp.ClientSession``: its connector, cookies, proxy settings and timeouts are
    then yours (it is not closed), and we still apply our caps, retries, deadlines and
    the guard's checks of IP literals on every request and redirect hop. Host names are
    checked when resolved only by a connector built with
    :class:`~sitemap_reader.crawl.resolver.PublicOnlyResolver`; give your connector one (see
    docs/security.md) or keep ``session`` to trusted targets. A ``session`` whose own default
    headers hold ``Authorization`` or ``Cookie`` (aiohttp would send them to every host)
    is refused unless ``header_hosts="any"``: pass them as ``headers``.

    The address guard (``allow_private``, :mod:`~sitemap_reader.crawl.resolver`): by default
    a public target's sitemaps, indexes and redirects may not reach loopback, private,
    link-local or other non-public addresses (checked on the resolved address), while a
    target that is itself such an address (or ``localhost``, or a file) may. True allows
    everything; ``"never"`` refuses non-public addresses even for the targets (for a
    service that fetches targets its users submit).

    ``processes`` parse large bodies in worker processes
    (:mod:`~sitemap_reader.crawl.pool`): they start only once a run meets a large body
    and stop when the reader closes; records and their order are the same either way.
    ``deadline`` bounds a whole run in seconds (``timeout`` bounds one sitemap): when it
    passes, reading stops, the records read so far are kept, the sitemaps in flight end
    as "not finished" and ``stats.stopped`` says ``at the deadline (S s)``.
    """

    def __init__(
        self,
        options: Options | None = None,
        *,
        session: aiohttp.ClientSession | None = None,
        resolver: AbstractResolver | None = None,
        **flat: Unpack[ReaderKeywords],
    ) -> None:
        self.options = options_of("SitemapReader", options, flat, ("session", "resolver"))
        check_session(session, self.options.network.header_hosts)
        if self.options.network.client != "aiohttp":
            browser.require()
            if session is not None and self.options.network.client == "browser":
                raise UsageError(
                    "session= is an aiohttp session: it cannot send with client='browser' "
                    "(use client='auto' to keep it for the first attempts)"
                )
        processes = self.options.parallelism.processes
        self.processes = default_processes() if processes is None else processes
        self._user_session = session
        self._pacer = pacer_for(self.options)
        self.last_run: Run | None = None
        #: Each run is one target of a longer list (the engines, the Redis workers): a
        #: ``per_target`` entry naming another target is not an error then.
        self.one_of_many = False
        self._pool: ParsePool | None = None
        self._given_resolver = resolver
        self._resolver: AbstractResolver | None = None
        self._policy = AddressPolicy()  # the guarded session's: it trusts no name
        self._sessions: dict[bool, aiohttp.ClientSession] = {}  # ours, by "guarded"
        self._fetcher: Fetcher | None = None
        self._browser: browser.BrowserClient | None = None

    @property
    def limits(self) -> Limits:
        """The run's bounds (``options.limits``)."""
        return self.options.limits

    async def __aenter__(self) -> SitemapReader:
        self._resolver = self._given_resolver or aiohttp.DefaultResolver()
        self._fetcher = Fetcher(
            AiohttpClient(self._session(guarded=True), self._session(guarded=False)),
            self.options,
            policy=self._policy,
            pacer=self._pacer,
            jar=None if self._user_session is not None else aiohttp.CookieJar(),
        )
        if self.options.network.client != "aiohttp":
            guard = PublicOnlyResolver(self._resolver, self._policy)
            self._browser = browser.BrowserClient(self.options, self._resolver, guard)
        self._pool = ParsePool(self.processes) if self.processes > 0 else None
        return self

    def _session(self, *, guarded: bool) -> aiohttp.ClientSession:
        """The reader's open session (any address) or its guarded one (public addresses
        only: its resolver trusts no name), or the user's own session for both.

        The two never share a connection pool or a DNS cache, and a guarded target sends
        through the open one only what its own site may reach (its typed name, its
        proxy: :meth:`Fetcher.for_target`), so nothing one target resolved or connected
        to on trust is ever reused by another.
        """
        if self._user_session is not None:
            return self._user_session
        session = self._sessions.get(guarded)
        if session is None:
            assert self._resolver is not None
            resolver = PublicOnlyResolver(self._resolver, self._policy) if guarded else None
            session = build_session(self.options, resolver or self._resolver)
            self._sessions[guarded] = session
        return session

    def _fetcher_for(self, target: Target) -> Fetcher:
        """The fetcher for the site of ``target``: what that site may reach (its own
        trust, never another target's), with the target's own headers and proxy when
        ``per_target`` gives it some."""
        assert self._fetcher is not None
        trust = site_trust(target, self.options.network.allow_private)
        return self._fetcher.for_target(options_for(target, self.options), trust)

    def _browser_for(self, target: Target) -> Fetcher | None:
        """The same over the browser client (None: the run does not use it)."""
        if self._browser is None:
            return None
        assert self._fetcher is not None
        trust = site_trust(target, self.options.network.allow_private)
        return self._fetcher.on(self._browser, options_for(target, self.options), trust)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pool, self._pool = self._pool, None
        if pool is not None and pool.started:
            await asyncio.to_thread(pool.close)
        client, self._browser = self._browser, None
        if client is not None:
            await client.close()
        for session in self._sessions.values():
            await session.close()
        if self._resolver is not None and self._resolver is not self._given_resolver:
            await self._resolver.close()
        self._resolver = None
        self._sessions.clear()
        self._fetcher = None
        if isinstance(self._pacer, RedisPacer):
            await self._pacer.close()

    @property
    def stats(self) -> Stats | None:
        """The live :class:`~sitemap_reader.discovery.model.Stats` of the current (or last) run."""
        return None if self.last_run is None else self.last_run.stats

    async def urls(
        self, target: str | Sequence[str], **delivery: Unpack[DeliveryKeywords]
    ) -> AsyncGenerator[UrlRecord, None]:
        """Stream the URL records of one target (or several, deduped together).

        What is delivered is the reader's ``delivery`` options, with ``delivery``
        keywords of this call on top (:class:`~sitemap_reader.options.groups.Delivery`:
        ``ranked``, ``top``, ``sample``, ``seed``, ``include``, ``exclude``,
        ``max_urls``). In discovery order by default; ``ranked=True`` yields best first
        (by score, then URL) once the whole run is done, holding
        ``Limits.max_ranked_in_memory`` records in memory and spilling the rest to a
        temporary SQLite file; ``top=N`` yields only the N best (memory proportional to
        N); ``sample=N`` a uniform random sample of N of the distinct URLs once the run
        is done, the same sample for the same ``seed``. The run's tree and stats are in
        :attr:`last_run` (live while it goes). Raises
        :class:`~sitemap_reader.errors.DiscoveryError` at the end when nothing could be
        discovered for any target (unreachable, or no sitemap anywhere); when only some
        targets gave nothing, each is logged as an error (logger ``sitemap_reader``) and
        listed in ``last_run.failed_targets``.
        """
        async with contextlib.aclosing(self.batches(target, **delivery)) as batches:
            async for batch in batches:
                for record in batch:
                    yield record

    async def batches(
        self,
        target: str | Sequence[str],
        *,
        observe: Callable[[Observer], Observer] | None = None,
        **delivery: Unpack[DeliveryKeywords],
    ) -> AsyncGenerator[list[UrlRecord], None]:
        """Like :meth:`urls`, in lists (per parsed chunk, at most 2,048): less overhead.

        ``observe`` wraps the run's observer (the incremental state's, or the null one):
        a layer above the reader (:class:`~sitemap_reader.SitemapLoader`) sees each
        sitemap begin and settle, its checkpoints run behind the records before them.
        """
        options = self._with_delivery("SitemapReader.urls", delivery)
        run, targets = self._new_run(target)
        channel: Channel[Item] = Channel(CHANNEL_BATCHES)
        sink = make_sink(options.delivery, options.limits)
        state = self._open_state(run, commit_each=sink is None)
        observer = state if observe is None else observe(state or NULL_OBSERVER)
        traversal = self._traversal(
            run, targets, channel, observer, options, merge=sink is not None
        )
        task = asyncio.create_task(traversal.run())
        try:
            async with contextlib.aclosing(unpack(channel)) as source:
                async for batch in source:
                    if sink is None:
                        yield batch
                    elif type(batch) is Repeats:
                        sink.merge(batch)
                    else:
                        sink.add(batch)
            if sink is not None:
                for batch in cut(sink.drain(), options.delivery.max_urls, run.stats):
                    yield batch
            await task
            if state is not None:
                state.commit()  # the consumer took every record: the run is saved
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if sink is not None:
                sink.close()
            if state is not None:
                state.close()
        if run.error is not None:
            raise DiscoveryError(run.error, run.verdicts, run.failed_targets)
        report_failed_targets(run)

    def _with_delivery(self, door: str, delivery: Mapping[str, object]) -> Options:
        """The reader's options with a call's ``delivery`` keywords on top (only those:
        the rest of a reader's options are set when it is made)."""
        if not delivery:
            return self.options
        given = split(door, delivery, {"delivery": Delivery}).get("delivery", {})
        own = make_group(door, "delivery", Delivery, self.options.delivery, given)
        return dataclasses.replace(self.options, delivery=own)

    async def tree(self, target: str | Sequence[str], *, observer: Observer | None = None) -> Run:
        """Walk every sitemap of the target(s) without keeping the records.

        Returns the :class:`~sitemap_reader.discovery.model.Run`: ``run.tree`` (a root node per
        target, with every robots.txt, sitemap and probe under it) and ``run.stats``.
        Nothing is raised when nothing was found: ``run.error`` says why instead.
        ``observer`` watches every job of the walk (``check`` and ``report`` ride on it);
        it cannot be combined with ``state``.
        """
        if observer is not None and self.options.incremental.state is not None:
            raise UsageError("tree(observer=...) cannot be combined with state")
        run, targets = self._new_run(target)
        state = self._open_state(run, commit_each=True)
        traversal = self._traversal(run, targets, None, state or observer, self.options)
        try:
            await traversal.run()
            if state is not None:
                state.commit()
        finally:
            if state is not None:
                state.close()
        return run

    def _traversal(
        self,
        run: Run,
        targets: Sequence[Target],
        channel: Channel[Item] | None,
        state: Observer | None,
        options: Options,
        *,
        merge: bool = False,
    ) -> Traversal:
        """The aiohttp driver of one run, over the core with the run's options."""
        fetchers = [self._fetcher_for(t) for t in targets]
        browsers = [self._browser_for(t) for t in targets] if self._browser else None
        scheduler = HostScheduler(options.parallelism)
        return Traversal(
            options, run, targets, fetchers, scheduler, channel, state, self._pool, merge, browsers
        )

    @property
    def pool(self) -> ParsePool | None:
        """The reader's parsing processes (None with ``processes=0``, or outside ``async with``)."""
        return self._pool

    def _open_state(self, run: Run, *, commit_each: bool) -> IncrementalRun | None:
        """The incremental state of a run (None without ``state``)."""
        state = self.options.incremental
        if state.state is None:
            return None
        store = StateStore(state.state, background=True)  # writes off the loop
        try:
            each = commit_each and state.state_commit == "sitemap"
            return IncrementalRun(store, run.stats, self.options, commit_each=each)
        except BaseException:
            store.close()
            raise

    def _new_run(self, target: str | Sequence[str]) -> tuple[Run, list[Target]]:
        if self._fetcher is None:
            raise UsageError("use the reader inside `async with SitemapReader() as reader:`")
        targets = given_targets("SitemapReader", target)
        classified = [classify(t) for t in targets]  # a UsageError before anything starts
        if len(classified) > 1 or not self.one_of_many:  # an engine's, a worker's one-target
            check_per_target(classified, self.options)  # runs take their own entry only
        run = Run(targets=targets)
        self.last_run = run
        return run, classified
