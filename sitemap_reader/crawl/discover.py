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
import os
import re
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from sitemap_reader.crawl.best_first import make_sink
from sitemap_reader.crawl.fetch import (
    Fetcher,
    Pacer,
    build_session,
    check_header_hosts,
    check_headers,
    check_proxy,
    default_user_agent,
)
from sitemap_reader.crawl.guard import PublicOnlyResolver
from sitemap_reader.crawl.incremental import COMMIT_MODES, Incremental, Item, unpack
from sitemap_reader.crawl.pool import ParsePool, default_processes
from sitemap_reader.crawl.schedule import Channel, HostScheduler
from sitemap_reader.crawl.traverse import Repeats, Traversal
from sitemap_reader.discovery.config import Config, compile_patterns, html_mode
from sitemap_reader.discovery.model import Run, Stats
from sitemap_reader.discovery.observer import NULL_OBSERVER, Observer
from sitemap_reader.discovery.targets import Target, classify
from sitemap_reader.errors import DiscoveryError, UsageError
from sitemap_reader.guard import AddressPolicy, private_allowed, private_mode
from sitemap_reader.limits import Limits
from sitemap_reader.parse.scope import SCOPE_MODES
from sitemap_reader.records import UrlRecord
from sitemap_reader.scoring import ScoreFunc
from sitemap_reader.store import StateStore

#: Batches buffered between the traversal and the consumer (a batch is the new records of
#: one 64 KiB chunk, at most 2,048): enough to keep the consumer busy, small enough to
#: bound memory.
CHANNEL_BATCHES = 8


class SitemapReader:
    """Discover and stream the URLs a site publishes in its sitemaps.

    >>> async def main() -> None:                      # doctest: +SKIP
    ...     async with SitemapReader(concurrency=16, per_host=4) as reader:
    ...         async for record in reader.urls("example.com"):
    ...             print(record.url, record.lastmod)
    ...         print(reader.last_run.stats.to_dict())

    ``timeout`` is the time budget of one sitemap (request to last byte, per attempt;
    ``Limits.sitemap_timeout`` by default). ``strict`` applies the protocol to the letter.
    ``scope`` is ``site`` (the target's hosts, their www twins and subdomains, and hosts
    that cross-submit in robots.txt), ``host`` (each sitemap's own host) or ``any``.
    ``robots=False`` skips robots.txt; ``guess=False`` never probes the well-known paths.
    ``score`` replaces the default ranking score.

    ``allow_private`` is the SSRF guard (:mod:`~sitemap_reader.crawl.guard`). By default
    (None) a public target's sitemaps, indexes and redirects may not reach loopback,
    private, link-local or other non-public addresses (checked on the resolved address);
    a target that is itself such an address (or ``localhost``, or a file) may. True
    allows everything; False refuses non-public addresses even for the targets (for a
    service that fetches targets its users submit). ``resolver`` replaces aiohttp's DNS
    resolver (for tests: map made-up names to 127.0.0.1).

    ``processes`` is how many worker processes parse large bodies (0: every body is
    parsed in this process; None: the default, 0 for now, see
    :func:`~sitemap_reader.crawl.pool.default_processes`). Workers start only once a run
    meets a large body (:mod:`~sitemap_reader.crawl.pool`) and stop when the reader
    closes; records and their order are the same either way.
    Network: ``headers`` go with every request to the target's own site
    (``{"Cookie": "session=..."}`` for cookies; they override the User-Agent and
    Accept-Encoding we send): its host, its www twin and their subdomains, never a host
    that only robots.txt cross-submits; requests and redirect hops to other hosts go
    without them unless ``header_hosts="any"``. A ``session`` whose own default headers
    hold ``Authorization`` or ``Cookie`` (aiohttp would send them to every host) is
    refused unless ``header_hosts="any"``: pass them as ``headers``. ``proxy`` is an
    HTTP proxy URL for every request; ``trust_env=True`` lets aiohttp take
    ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` from the environment. ``session`` is
    your own ``aiohttp.ClientSession``: its connector, cookies, proxy settings and
    timeouts are then yours (it is not closed), and we still apply our caps, retries,
    deadlines and the guard's checks of IP literals on every request and redirect hop.
    Host names are checked when resolved only by a connector built with
    :class:`~sitemap_reader.crawl.guard.PublicOnlyResolver`; give your connector one
    (see the README) or keep ``session`` to trusted targets. Behind a proxy, names are
    resolved by the proxy: only the literal checks hold.

    Politeness and robots.txt: ``delay`` is the least time in seconds between two
    requests to one host; a robots.txt ``Crawl-delay`` or ``Request-rate`` is honoured
    for its host (capped at ``Limits.max_crawl_delay``) unless ``crawl_delay=False``.
    Every record on the origin of the robots.txt read says ``robots="allowed"`` or
    ``"disallowed"`` for ``user_agent``; ``obey_robots=True`` drops the disallowed ones.

    Choosing what to read: ``follow`` are regexes (strings or compiled) a sitemap
    listed by robots.txt or an index must match to be fetched (any one; empty: all);
    ``guess_paths`` replaces the well-known paths probed when robots.txt lists no
    sitemap (``["/sitemap.php"]``); ``read_depth=N`` reads N levels of index nesting and
    lists the children below as "not read" in the tree (``read_depth=0`` lists an
    index's children without reading them).

    More ways in: ``html=True`` reads HTML sitemap pages (found from the home page's
    links or the usual paths) when no XML or text sitemap was found, ``html="always"``
    beside them, and a target URL that is an HTML sitemap page is read as one;
    ``parent=True`` reads a subdomain's parent domain's sitemaps when it has none,
    keeping the URLs under the subdomain; ``since`` (an aware datetime) leaves unfetched
    the index children whose lastmod is older; ``follow_urlset_sitemaps=True`` reads a
    urlset ``<loc>`` ending in ``.xml`` / ``.xml.gz`` as a sitemap when its body is one.
    ``deadline`` bounds a whole run in seconds (``timeout`` bounds one sitemap): when it
    passes, reading stops, the records read so far are kept, the sitemaps in flight end
    as "not finished" and ``stats.stopped`` says ``at the deadline (S s)``.
    """

    def __init__(
        self,
        *,
        concurrency: int = 16,
        per_host: int = 4,
        timeout: float | None = None,
        strict: bool = False,
        scope: str = "site",
        robots: bool = True,
        guess: bool = True,
        user_agent: str | None = None,
        limits: Limits | None = None,
        score: ScoreFunc | None = None,
        allow_private: bool | None = None,
        resolver: AbstractResolver | None = None,
        state: str | os.PathLike[str] | None = None,
        changed_only: bool = False,
        removed: bool = False,
        trust_index_lastmod: bool = True,
        state_commit: str = "sitemap",
        processes: int | None = None,
        headers: Mapping[str, str] | None = None,
        header_hosts: str = "site",
        proxy: str | None = None,
        trust_env: bool = False,
        session: aiohttp.ClientSession | None = None,
        delay: float = 0.0,
        crawl_delay: bool = True,
        obey_robots: bool = False,
        follow: Sequence[str | re.Pattern[str]] = (),
        guess_paths: Sequence[str] | None = None,
        read_depth: int | None = None,
        html: bool | str | None = None,
        parent: bool = False,
        since: datetime | None = None,
        follow_urlset_sitemaps: bool = False,
        deadline: float | None = None,
    ) -> None:
        if concurrency < 1 or per_host < 1:
            raise UsageError("concurrency and per_host must be at least 1")
        if state is None and (changed_only or removed):
            raise UsageError("changed_only and removed need a state file (state=PATH)")
        if state_commit not in COMMIT_MODES:
            raise UsageError(f"state_commit must be one of {', '.join(COMMIT_MODES)}")
        if scope not in SCOPE_MODES:
            raise UsageError(f"scope must be one of {', '.join(SCOPE_MODES)}, not {scope!r}")
        if timeout is not None and timeout <= 0:
            raise UsageError("timeout must be positive")
        if processes is not None and processes < 0:
            raise UsageError("processes must be 0 (parse here) or more")
        self.limits = limits or Limits()
        self.concurrency = concurrency
        self.per_host = min(per_host, concurrency)
        self.timeout = self.limits.sitemap_timeout if timeout is None else timeout
        self.strict = strict
        self.scope = scope
        self.robots = robots
        self.guess = guess
        self.user_agent = user_agent or default_user_agent()
        self.score = score
        self.allow_private = allow_private
        self.state = state
        self.changed_only = changed_only
        self.removed = removed
        self.trust_index_lastmod = trust_index_lastmod
        self.state_commit = state_commit
        self.processes = default_processes() if processes is None else processes
        self.headers = check_headers(headers or {})
        self.header_hosts = check_header_hosts(header_hosts, session)
        self.proxy = check_proxy(proxy)
        self.trust_env = trust_env
        self.delay = delay
        self.crawl_delay = crawl_delay
        self.obey_robots = obey_robots
        self.follow = compile_patterns(follow)  # a bad pattern: UsageError, here
        self.guess_paths = None if guess_paths is None else tuple(guess_paths)
        self.read_depth = read_depth
        self.html = html_mode(html)
        self.parent = parent
        self.since = since
        self.follow_urlset_sitemaps = follow_urlset_sitemaps
        self.deadline = deadline
        self._config(merge=False)  # a bad delay, path or depth fails here, not in a run
        self._user_session = session
        self._pacer = Pacer()
        self.last_run: Run | None = None
        self._pool: ParsePool | None = None
        self._given_resolver = resolver
        self._resolver: AbstractResolver | None = None
        self._policy = AddressPolicy()
        self._sessions: list[aiohttp.ClientSession] = []
        self._fetchers: dict[bool, Fetcher] = {}  # by "private addresses allowed"
        self._fetcher: Fetcher | None = None

    async def __aenter__(self) -> SitemapReader:
        self._resolver = self._given_resolver or aiohttp.DefaultResolver()
        if self.proxy is not None:  # we connect to the proxy, the proxy resolves the rest
            self._policy.trust(URL(self.proxy).host or "")
        self._fetcher = self._new_fetcher(private=self.allow_private is True)
        self._pool = ParsePool(self.processes) if self.processes > 0 else None
        return self

    def _new_fetcher(self, *, private: bool) -> Fetcher:
        """A session and its fetcher: open (any address) or guarded (public only).

        The two never share a connection pool or a DNS cache, so nothing a trusted site
        resolved or connected to can be reused by a guarded one.
        """
        fetcher = self._fetchers.get(private)
        if fetcher is None:
            session = self._user_session
            if session is None:
                assert self._resolver is not None
                resolver = (
                    self._resolver if private else PublicOnlyResolver(self._resolver, self._policy)
                )
                session = build_session(
                    concurrency=self.concurrency,
                    per_host=self.per_host,
                    user_agent=self.user_agent,
                    limits=self.limits,
                    resolver=resolver,
                    trust_env=self.trust_env,
                )
                self._sessions.append(session)
            fetcher = Fetcher(
                session,
                self.limits,
                policy=None if private else self._policy,
                headers=self.headers,
                proxy=self.proxy,
                pacer=self._pacer,
                header_hosts=self.header_hosts,
            )
            self._fetchers[private] = fetcher
        return fetcher

    def fetcher_for(self, target: Target) -> Fetcher:
        """The fetcher for the site of ``target``: guarded unless private is allowed."""
        private = private_allowed(target, self.allow_private)
        if not private and private_mode(self.allow_private) == "typed" and target.host:
            self._policy.trust(target.host)  # the user typed this name: it may be anywhere
        return self._new_fetcher(private=private)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pool, self._pool = self._pool, None
        if pool is not None and pool.started:
            await asyncio.to_thread(pool.close)
        for session in self._sessions:
            await session.close()
        if self._resolver is not None and self._resolver is not self._given_resolver:
            await self._resolver.close()
        self._resolver = None
        self._sessions.clear()
        self._fetchers.clear()
        self._fetcher = None

    @property
    def stats(self) -> Stats | None:
        """The live :class:`~sitemap_reader.discovery.model.Stats` of the current (or last) run."""
        return None if self.last_run is None else self.last_run.stats

    async def urls(
        self, target: str | Sequence[str], *, ranked: bool = False, top: int | None = None
    ) -> AsyncGenerator[UrlRecord, None]:
        """Stream the URL records of one target (or several, deduped together).

        In discovery order by default; ``ranked=True`` yields best first (by score, then
        URL) once the whole run is done. The run's tree and stats are in
        :attr:`last_run` (live while it goes). Raises
        :class:`~sitemap_reader.errors.DiscoveryError` at the end when nothing could be
        discovered for any target (unreachable, or no sitemap anywhere).

        Ranked output holds ``Limits.max_ranked_in_memory`` records in memory and spills
        the rest to a temporary SQLite file; ``top=N`` yields only the N best (implies
        ``ranked``; memory proportional to N).
        """
        async with contextlib.aclosing(self.batches(target, ranked=ranked, top=top)) as batches:
            async for batch in batches:
                for record in batch:
                    yield record

    async def batches(
        self,
        target: str | Sequence[str],
        *,
        ranked: bool = False,
        top: int | None = None,
        observe: Callable[[Observer], Observer] | None = None,
    ) -> AsyncGenerator[list[UrlRecord], None]:
        """Like :meth:`urls`, in lists (per parsed chunk, at most 2,048): less overhead.

        ``observe`` wraps the run's observer (the incremental state's, or the null one):
        a layer above the reader (:class:`~sitemap_reader.SitemapLoader`) sees each
        sitemap begin and settle, its checkpoints run behind the records before them.
        """
        if top is not None and top < 1:
            raise UsageError("top must be at least 1")
        run, targets = self._new_run(target)
        channel: Channel[Item] = Channel(CHANNEL_BATCHES)
        sink = make_sink(ranked, top, self.limits)
        state = self._open_state(run, commit_each=sink is None)
        observer = state if observe is None else observe(state or NULL_OBSERVER)
        traversal = self._traversal(run, targets, channel, observer, merge=sink is not None)
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
                for batch in sink.drain():
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
            raise DiscoveryError(run.error)

    async def tree(self, target: str | Sequence[str], *, observer: Observer | None = None) -> Run:
        """Walk every sitemap of the target(s) without keeping the records.

        Returns the :class:`~sitemap_reader.discovery.model.Run`: ``run.tree`` (a root node per
        target, with every robots.txt, sitemap and probe under it) and ``run.stats``.
        Nothing is raised when nothing was found: ``run.error`` says why instead.
        ``observer`` watches every job of the walk (``check`` and ``report`` ride on it);
        it cannot be combined with ``state``.
        """
        if observer is not None and self.state is not None:
            raise UsageError("tree(observer=...) cannot be combined with state")
        run, targets = self._new_run(target)
        state = self._open_state(run, commit_each=True)
        traversal = self._traversal(run, targets, None, state or observer)
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
        *,
        merge: bool = False,
    ) -> Traversal:
        """The aiohttp driver of one run, over the core with this reader's policy."""
        config = self._config(merge=merge)
        fetchers = [self.fetcher_for(t) for t in targets]
        scheduler = HostScheduler(self.concurrency, self.per_host)
        return Traversal(config, run, targets, fetchers, scheduler, channel, state, self._pool)

    def _config(self, *, merge: bool) -> Config:
        """The core's policy for a run of this reader."""
        return Config(
            limits=self.limits,
            strict=self.strict,
            scope=self.scope,
            robots=self.robots,
            guess=self.guess,
            timeout=self.timeout,
            score=self.score,
            follow=self.follow,
            merge_duplicates=merge,
            user_agent=self.user_agent,
            obey_robots=self.obey_robots,
            delay=self.delay,
            crawl_delay=self.crawl_delay,
            guess_paths=self.guess_paths,
            read_depth=self.read_depth,
            html=self.html,
            parent=self.parent,
            since=self.since,
            follow_urlset=self.follow_urlset_sitemaps,
            deadline=self.deadline,
        )

    @property
    def pool(self) -> ParsePool | None:
        """The reader's parsing processes (None with ``processes=0``, or outside ``async with``)."""
        return self._pool

    def _open_state(self, run: Run, *, commit_each: bool) -> Incremental | None:
        """The incremental state of a run (None without ``state``)."""
        if self.state is None:
            return None
        store = StateStore(self.state, background=True)  # writes off the loop
        try:
            return Incremental(
                store,
                run.stats,
                changed_only=self.changed_only,
                removed=self.removed,
                trust_index_lastmod=self.trust_index_lastmod,
                commit_each=commit_each and self.state_commit == "sitemap",
            )
        except BaseException:
            store.close()
            raise

    def _new_run(self, target: str | Sequence[str]) -> tuple[Run, list[Target]]:
        if self._fetcher is None:
            raise UsageError("use the reader inside `async with SitemapReader() as reader:`")
        targets = (target,) if isinstance(target, str) else tuple(target)
        if not targets:
            raise UsageError("no target given")
        classified = [classify(t) for t in targets]  # a UsageError before anything starts
        run = Run(targets=targets)
        self.last_run = run
        return run, classified

    @property
    def fetcher(self) -> Fetcher:
        """The reader's fetcher (only inside ``async with``)."""
        if self._fetcher is None:
            raise UsageError("use the reader inside `async with SitemapReader() as reader:`")
        return self._fetcher
