"""The crawl scheduler's source: pull records, acknowledge them, resume after a crash.

Theory of operation
-------------------
A :class:`SitemapLoader` runs one :class:`~sitemap_reader.SitemapReader` discovery in a
task (the *intake*) and writes every new record into its progress file
(:mod:`sitemap_reader.store.progress`) before anyone can have it. :meth:`SitemapLoader.next`
hands out waiting records (round-robin across sites by default:
:mod:`sitemap_reader.delivery.handout`),
marking each *out*; :meth:`~SitemapLoader.ack` marks it done and commits, so an
acknowledged URL is never handed out again, not even by a loader that starts after this
process was killed; :meth:`~SitemapLoader.fail` queues it again, up to ``max_tries`` times.

Fair across sites: the reader delivers records in the order its fetches give them, and
a big site's thousands can come before a small site's first. So the intake holds what it
reads by site (:class:`~sitemap_reader.delivery.handout.SiteQueues`) and lets records
into the file, as the buffer has room, one site after the other; the window hands them
out one site after the other too. The bound: once read, the k-th waiting record of a
site is handed out within ``buffer + 2 * S * k`` hand-outs, S being the sites with
records waiting (the records already in the window come first, then each site has one
turn in S, both on the way into the file and out of the window); however many records
or subdomains the other sites have.

Backpressure: the intake stops pulling from the reader while ``buffer`` records wait in
the file and :data:`~sitemap_reader.options.limits.LOADER_READ_AHEAD` more are held
(enough to reach past the reader's output channel to the sites behind a big one), so the
reader stops reading and memory is bounded by those two, not by the site. The records
waiting are loaded from the file into the hand-out policy's *window* as they arrive (all
of them while reading: there are at most ``buffer``); a file resumed with more waiting
than that is loaded ``buffer`` at a time, again when the window is half empty.

The loader observes the run (``SitemapReader.batches(observe=...)``): when a sitemap is
read completely, a checkpoint that runs behind its records marks it done in the file,
with the children it listed, once every record held when it ran is in the file. A new
loader on the same file asks for none of those again: its observer answers for them
before any fetch (they are walked from the file, as an incremental run walks an
unchanged index), so only robots.txt and the sitemaps not
finished are read again; their records already in the file are not taken in twice.
Once a discovery ended on its own (not stopped by a deadline or a budget) with something
found for every target, the file says so and a new loader reads nothing: it only hands
out what was never acknowledged. A target that gave nothing is logged as an error and
read again by the next loader; when every target gave nothing, :meth:`~SitemapLoader.next`
raises :class:`~sitemap_reader.errors.DiscoveryError`.

Every record is in the file before anyone can have it, whatever gave it. An HTML
sitemap page is never marked done: a new loader reads the few there are again (its
records already in the file are not taken in twice), so the links the pages share are
told apart as in one run. A urlset that lists a loc read as a possible sitemap
(``follow_urlset_sitemaps``) is marked done only once that loc has its verdict, its
record in the file if it was a page, and without the pages among its children
(:class:`_Marks`). Stops leave the rest for the next loader: ``max_urls`` counts the
records new to the file (the reader itself runs without it), so each loader on a file
takes in the next ones; :attr:`SitemapLoader.stopped` says what stopped this one.

The file belongs to its targets: a loader given other targets is refused (``extend``
adds them, ``restart`` starts the file afresh), and a loader on a finished file says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import shutil
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Unpack

from aiohttp import ClientSession
from aiohttp.abc import AbstractResolver

from sitemap_reader._safe_text import printable
from sitemap_reader._words import plural, stop_phrase, verdict_phrase
from sitemap_reader.crawl import SitemapReader
from sitemap_reader.crawl.incremental import node_key
from sitemap_reader.delivery.handout import HandOut, Row, SiteQueues, make_policy
from sitemap_reader.discovery import Checkpoint, Observer, Run, SitemapNode, Watch, classify
from sitemap_reader.discovery.actions import Batch
from sitemap_reader.discovery.model import HTML_KINDS, Stats
from sitemap_reader.discovery.observer import StoredChildren
from sitemap_reader.discovery.targets import given_targets
from sitemap_reader.errors import StateError, UsageError
from sitemap_reader.options import Options
from sitemap_reader.options._keywords import LoaderKeywords
from sitemap_reader.options.declare import OptionError
from sitemap_reader.options.groups import loader_options
from sitemap_reader.options.limits import LOADER_READ_AHEAD
from sitemap_reader.records import UrlRecord
from sitemap_reader.records.outcomes import Stopped, Verdict
from sitemap_reader.store.progress import (
    DONE,
    GAVE_UP,
    OUT,
    QUEUED,
    Children,
    DoneSitemap,
    ProgressStore,
)

logger = logging.getLogger("sitemap_reader")

#: What a sitemap answered from the progress file says in the tree.
FROM_PROGRESS = "read completely by an earlier loader (progress file)"
#: The progress file of a loader without ``progress=``, in a private temporary folder.
_TEMPORARY = "progress.db"


class SitemapLoader:
    """Pull URL records one at a time; acknowledge each; resume after a crash.

    >>> async def crawl() -> None:                                  # doctest: +SKIP
    ...     async with SitemapLoader(["example.com"], progress="crawl.db") as loader:
    ...         async for record in loader:                         # next() until None
    ...             ...                                             # fetch record.url
    ...             await loader.ack(record.url)

    ``targets`` are what :meth:`SitemapReader.urls` takes. The loader's own keywords
    (:class:`~sitemap_reader.options.LoaderOptions`): ``progress`` is the SQLite progress
    file (None: a temporary file, removed on close); ``buffer`` bounds the records
    waiting unclaimed; ``order`` picks the next of them (``"sites"``: round-robin across
    sites, then their hosts; :mod:`sitemap_reader.delivery.handout`), ``best_first`` the
    best-scored first (within a host); ``max_tries``: a URL failed that often is given up
    (counted in :attr:`failed`);
    ``extend`` / ``restart``: a file made for other targets takes these too / starts afresh.
    ``options``, the other keywords, ``session`` and ``resolver`` are
    :class:`~sitemap_reader.SitemapReader`'s (scope, follow, limits, state, deadline...).

    ``async with`` opens and closes it; without it, the first :meth:`next` opens it and
    it closes itself once finished (or call :meth:`close`).
    """

    def __init__(
        self,
        targets: str | Sequence[str],
        options: Options | None = None,
        *,
        session: ClientSession | None = None,
        resolver: AbstractResolver | None = None,
        **flat: Unpack[LoaderKeywords],
    ) -> None:
        reader, own = loader_options("SitemapLoader", options, flat, ("session", "resolver"))
        #: ``max_urls`` counts the records new to the progress file, so each loader on it
        #: takes in the next ones (the reader's own budget would stop at the same first ones).
        self._budget = reader.delivery.budget
        if self._budget is not None:
            reader = reader.replace(max_urls=None)
        self.targets = given_targets("SitemapLoader", targets)
        self._keys = {classify(t).url: t for t in self.targets}  # a bad target fails here
        self.own = own
        self.buffer = own.buffer
        self.best_first = own.best_first
        self.max_tries = own.max_tries
        self._path = own.progress
        self._temporary: str | None = None
        self._reader = SitemapReader(reader, session=session, resolver=resolver)
        self._store: ProgressStore | None = None
        try:
            policy = make_policy(own.order, own.best_first)
        except ValueError as exc:
            raise OptionError("order", str(exc), "SitemapLoader") from exc
        #: Handed out and not settled yet: URL -> id in the file.
        self._out: dict[str, int] = {}
        self._counts = dict.fromkeys((QUEUED, OUT, DONE, GAVE_UP), 0)
        self._done: dict[str, DoneSitemap] = {}
        self._waiting = _Waiting(policy, self.buffer, self._counts, self._done)
        self._intake: asyncio.Task[None] | None = None
        self._reading = False
        self._error: BaseException | None = None
        self._arrived = asyncio.Event()
        self._claimed = asyncio.Event()
        #: Opened by first use (not ``async with``): it closes itself once finished.
        self._implicit = False
        self._closed = False
        #: True when the progress file was finished before this loader opened it.
        self.already_finished = False
        #: Each target that gave nothing in this loader's discovery, and why.
        self.failed_targets: dict[str, str] = {}
        #: Each target's verdict once this loader's discovery ended (see
        #: :class:`~sitemap_reader.records.outcomes.Verdict`); logged as it comes.
        self.verdicts: dict[str, Verdict] = {}
        #: Why this loader stopped reading before the discovery's end (``max_urls``
        #: reached, or the reader's own stop: a deadline), None when it did not.
        self.stopped: Stopped | None = None
        self._marks = _Marks(self._waiting, self._open)

    # -- lifetime --------------------------------------------------------------------------

    async def open(self) -> SitemapLoader:
        """Open the progress file and start reading (``async with`` and first use call it)."""
        if self._store is not None:
            return self
        if self._closed:
            raise UsageError("the loader is closed: make a new one on the same progress file")
        if self._path is None:  # a private folder: the file's -wal, -shm and -lock too
            self._temporary = tempfile.mkdtemp(prefix="sitemap-loader-")
        try:
            store = ProgressStore(self._path or os.path.join(self._temporary or "", _TEMPORARY))
        except BaseException:
            self._remove_temporary()
            raise
        try:
            own = self.own
            claimed = store.claim(self._keys, extend=own.extend, restart=own.restart)
            self.targets = tuple(claimed)
            note = store.finished_note()
            if note is not None:
                self.already_finished = True
                logger.warning("%s", note)
            self._counts.update(store.counts())
            self._done = store.done_sitemaps()
            reading = not store.all_read()
            if reading:
                await self._reader.__aenter__()
        except BaseException:
            store.close()
            self._remove_temporary()
            raise
        self._store = store
        if reading:
            self._reading = True
            self._intake = asyncio.create_task(self._take_in())
        return self

    async def close(self) -> None:
        """Stop reading, close the progress file (idempotent; ``async with`` calls it)."""
        self._closed = True
        intake, self._intake = self._intake, None
        try:
            if intake is not None:
                intake.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await intake
                await self._reader.__aexit__(None, None, None)
        finally:
            self._reading = False
            store, self._store = self._store, None
            if store is not None:
                store.close()
            self._remove_temporary()

    async def __aenter__(self) -> SitemapLoader:
        return await self.open()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- the consumer's side -----------------------------------------------------------------

    async def next(self) -> UrlRecord | None:
        """The next record to crawl; None once discovery ended and nothing is queued.

        Waits while the reader is still reading and nothing is ready. Records handed
        out but neither acknowledged nor failed are not waited for: ``fail`` puts one
        back, and ``next`` then hands it out again. Raises
        :class:`~sitemap_reader.errors.DiscoveryError` once every target failed.
        """
        if self._closed and self._implicit:
            return None  # it closed itself at the end
        store = await self._use()
        waiting = self._waiting
        while True:
            if waiting.let_in(store):
                self._arrived.set()
            waiting.load(store)
            row = waiting.take()
            if row is not None:
                row_id, record = row
                self._out[record.url] = row_id
                self._move(QUEUED, OUT)
                self._claimed.set()
                return record
            if self._error is not None:
                await self._close_if_finished()  # opened by first use: its session too
                raise self._error
            if not self._reading and self._counts[QUEUED] <= len(waiting.window):
                await self._close_if_finished()
                return None
            self._arrived.clear()
            await self._arrived.wait()

    async def __aiter__(self) -> AsyncIterator[UrlRecord]:
        """``async for record in loader``: :meth:`next` until None (each record is still
        yours to :meth:`ack` or :meth:`fail`)."""
        while (record := await self.next()) is not None:
            yield record

    async def ack(self, url: str) -> None:
        """``url`` was handled: it is never handed out again (durable when this returns)."""
        self._settle(url, ok=True)
        await self._close_if_finished()

    async def fail(self, url: str, *, again: bool = True) -> None:
        """``url`` failed: handed out again, up to ``max_tries`` (``again=False``: given up)."""
        self._settle(url, ok=False, again=again)
        await self._close_if_finished()

    @property
    def handled(self) -> int:
        """URLs acknowledged (by this loader and the earlier ones on its progress file)."""
        return self._counts[DONE]

    @property
    def pending(self) -> int:
        """URLs handed out and neither acknowledged nor failed yet."""
        return self._counts[OUT]

    @property
    def queued(self) -> int:
        """URLs taken in and waiting to be handed out."""
        return self._counts[QUEUED]

    @property
    def failed(self) -> int:
        """URLs given up after ``max_tries`` failures."""
        return self._counts[GAVE_UP]

    @property
    def total_known(self) -> int:
        """Every URL taken in so far (handled, pending, queued and given up)."""
        return sum(self._counts.values())

    @property
    def ready(self) -> bool:
        """True when :meth:`next` has a record without waiting on the reader."""
        return bool(self._counts[QUEUED] or self._waiting.held)

    @property
    def reading(self) -> bool:
        """True while the reader may still bring new records."""
        return self._reading

    @property
    def opened(self) -> bool:
        """True between :meth:`open` (or first use) and :meth:`close`."""
        return self._store is not None

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (or the loader closed itself at the end)."""
        return self._closed

    @property
    def finished(self) -> bool:
        """True once nothing more can be handed out: reading ended, nothing queued or out
        (False before the loader opened: it does not know yet)."""
        if self._store is None and not self._closed:
            return False
        return not self._reading and not self._counts[QUEUED] and not self._counts[OUT]

    @property
    def error(self) -> BaseException | None:
        """Why reading failed (a :class:`~sitemap_reader.errors.DiscoveryError` when every
        target gave nothing); :meth:`next` raises it once nothing else is left."""
        return self._error

    @property
    def run(self) -> Run | None:
        """The reader's run of this loader (its tree and stats); None when nothing was read."""
        return self._reader.last_run

    @property
    def summary(self) -> LoaderSummary:
        """What ``dump``'s summary says of this reading, as data (logged at INFO at its end)."""
        obey = self._reader.options.politeness.obey_robots
        return LoaderSummary.of(self._reader.last_run, self.stopped, obey)

    # -- internals ---------------------------------------------------------------------------

    async def _use(self) -> ProgressStore:
        """The open progress file; the first use opens the loader (closed again at the end)."""
        if self._store is None:
            if self._closed:
                raise UsageError("the loader is closed: make a new one on the same progress file")
            await self.open()
            self._implicit = True
        assert self._store is not None
        return self._store

    def _open(self) -> ProgressStore:
        if self._store is None:
            raise UsageError("the loader is not open: nothing was handed out")
        return self._store

    async def _close_if_finished(self) -> None:
        """A loader opened by first use closes itself once nothing more can come."""
        if self._implicit and self._store is not None and self.finished:
            await self.close()

    def _remove_temporary(self) -> None:
        temporary, self._temporary = self._temporary, None
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)

    def _move(self, old: int, new: int) -> None:
        self._counts[old] -= 1
        self._counts[new] += 1

    def _settle(self, url: str, *, ok: bool, again: bool = True) -> None:
        row_id = self._out.pop(url, None)
        if row_id is None:
            raise UsageError(f"not handed out (or already settled): {url}")
        store = self._open()
        if ok:
            store.ack(row_id)
            state = DONE
        else:
            state, _ = store.fail(row_id, self.max_tries if again else 1)
            self._arrived.set()
        self._move(OUT, state)
        store.commit()

    async def _take_in(self) -> None:
        """The intake: the reader's batches held by site and let into the file as the
        buffer has room; reading pauses while the buffer and the read-ahead are full."""
        store = self._open()
        reader, waiting = self._reader, self._waiting
        try:
            batches = reader.batches(self.targets, observe=self._observer)
            budget = self._budget
            async with contextlib.aclosing(batches) as source:
                async for batch in source:
                    if budget is not None:
                        batch, budget = _within(store, batch, budget)
                    waiting.held.put(batch)
                    while waiting.let_in(store) or waiting.full:
                        self._arrived.set()
                        if waiting.full:
                            self._claimed.clear()
                            await self._claimed.wait()
                    if budget == 0:  # the rest is the next loader's
                        self.stopped = Stopped("budget", "max_urls", self._budget)
                        break
            waiting.let_in(store, everything=True)
            run = reader.last_run
            if run is not None and self.stopped is None:
                self.stopped = run.stats.stopped
            # A deadline or a budget stop leaves the rest for later, a target that gave
            # nothing is tried again by the next loader.
            if run is not None and self.stopped is None and not run.failed_targets:
                store.read_done()
            store.commit()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # next() raises it in the consumer
            self._error = exc
        finally:
            _reading_ended(self, reader.last_run)
            self._reading = False
            self._arrived.set()

    def _observer(self, inner: Observer) -> Observer:
        return _ProgressObserver(inner, self)


def _reading_ended(loader: SitemapLoader, run: Run | None) -> None:
    """The loader's outcomes of its run kept, its summary and verdicts logged (INFO)."""
    if run is None:
        return
    loader.failed_targets = dict(run.failed_targets)
    loader.verdicts = dict(run.verdicts)
    for line in loader.summary.lines():
        logger.info("%s", line)
    for verdict in loader.verdicts.values():  # a target that gave nothing has its error
        # line besides (the reader's)
        logger.info("verdict: %s", verdict_phrase(verdict, named=True))


@dataclass(frozen=True, slots=True)
class LoaderSummary:
    """What a loader's reading found that ``dump``'s summary names, as data (the core's
    typed outcomes; :meth:`lines` puts it in words, as the loader logs it at INFO).

    ``stopped``: what ended the reading before the discovery's end (the rest is for the
    next loader); ``broken``: the sitemaps that failed (each node has its ``reason`` and
    its problems), not those a stop only cut; ``older``: child sitemaps not fetched
    because their index lastmod is older than ``since`` (their URLs may be newer), with
    ``older_nodes`` the ones the tree keeps; ``disallowed``: URLs the sitemaps list that
    robots.txt disallows for us, handed out (their records say ``robots="disallowed"``)
    unless ``obey_robots`` dropped them.
    """

    stopped: Stopped | None = None
    broken: tuple[SitemapNode, ...] = ()
    older: int = 0
    older_nodes: tuple[SitemapNode, ...] = ()
    disallowed: int = 0
    obey_robots: bool = False

    @classmethod
    def of(cls, run: Run | None, stopped: Stopped | None, obey_robots: bool) -> LoaderSummary:
        """The summary of a loader's run (an empty one before any reading)."""
        if run is None:
            return cls(stopped, obey_robots=obey_robots)
        nodes = list(run.nodes())
        stats: Stats = run.stats
        cut = stopped is not None or stats.stopped is not None
        broken = [n for n in nodes if n.failed and not (cut and n.cut_short)]
        older = [n for n in nodes if n.skipped is not None and n.skipped.code == "older"]
        return cls(
            stopped, tuple(broken), stats.sitemaps_older, tuple(older),
            stats.urls_disallowed, obey_robots,
        )  # fmt: skip

    @property
    def disallowed_handed_out(self) -> int:
        """The robots-disallowed URLs handed out (0 when ``obey_robots`` dropped them)."""
        return 0 if self.obey_robots else self.disallowed

    def lines(self) -> list[str]:
        """The summary in words, with the options spelled as Python keywords."""
        lines = []
        if self.stopped is not None:
            lines.append(f"{stop_phrase(self.stopped)}; the rest is for the next loader")
        lines += [
            f"sitemap failed: {printable(n.final_url or n.url)} ({printable(n.reason or '')})"
            for n in self.broken
        ]
        if self.older:
            lines.append(
                f"not fetched: {plural(self.older, 'child sitemap')} whose index lastmod is "
                "older than since (their URLs may be newer: trust_index_lastmod=False reads "
                "them)"
            )
        if self.disallowed:
            fate = "dropped (obey_robots)" if self.obey_robots else (
                'handed out, their records say robots="disallowed" (obey_robots=True drops them)'
            )  # fmt: skip
            lines.append(
                f"robots.txt: disallows {plural(self.disallowed, 'URL')} the sitemaps list; {fate}"
            )
        return lines


def _within(store: ProgressStore, batch: Batch, budget: int) -> tuple[Batch, int]:
    """``batch`` cut where the records new to the file reach ``budget``; the budget left
    (the records already in the file, taken in by an earlier loader, are free)."""
    known = store.known([r.url for r in batch])
    for end, record in enumerate(batch):
        if record.url not in known:
            budget -= 1
            if budget == 0:
                return batch[: end + 1], 0
    return batch, budget


class _Marks:
    """The done marks of sitemaps read completely, as their checkpoints run, and the
    locs of urlsets read as possible sitemaps (``follow_urlset_sitemaps``, node kind
    ``listed``) with their verdicts: ``sitemap``, ``page`` (its record went out before
    the verdict), or None when the run's stop cut it first. A urlset listing one is
    marked done only once each has a verdict, without the pages among its children
    (their records are in the file; a new loader never reads one as a sitemap); one cut
    first leaves its urlset not done, for the next loader to read again."""

    def __init__(self, waiting: _Waiting, store: Callable[[], ProgressStore]) -> None:
        self._waiting = waiting
        self._store = store
        #: Listed locs being read by this loader's run (keys; the producer's side).
        self.open: set[str] = set()
        #: Verdicts, as their checkpoints run (the consumer's side).
        self.verdicts: dict[str, str | None] = {}
        #: Urlsets read completely, waiting on verdicts: key -> (done, listed, pending).
        self.waiting: dict[str, tuple[DoneSitemap, Sequence[str], set[str]]] = {}

    def sitemap_done(self, key: str, done: DoneSitemap, listed: Sequence[str]) -> None:
        """A complete sitemap's checkpoint, behind its records: marked done once they
        are all in the file, and each loc it ``listed`` has its verdict (now, later in
        :meth:`settled`, or never in this loader when the stop cut one)."""
        verdicts = self.verdicts
        if any(k in verdicts and verdicts[k] is None for k in listed):
            return
        pending = {k for k in listed if k not in verdicts}
        if pending:
            self.waiting[key] = (done, listed, pending)
        else:
            self._waiting.sitemap_done(self._store(), key, self._without_pages(done, listed))

    def settled(self, key: str, verdict: str | None) -> None:
        """A listed loc's verdict (behind its page record, if it was one)."""
        self.verdicts[key] = verdict
        for parent, (done, listed, pending) in list(self.waiting.items()):
            if key not in pending:
                continue
            if verdict is None:
                del self.waiting[parent]
                continue
            pending.discard(key)
            if not pending:
                del self.waiting[parent]
                ready = self._without_pages(done, listed)
                self._waiting.sitemap_done(self._store(), parent, ready)

    def _without_pages(self, done: DoneSitemap, listed: Sequence[str]) -> DoneSitemap:
        pages = {k for k in listed if self.verdicts.get(k) == "page"}
        if not pages:
            return done
        children = [c for c in done.children if node_key(c[0]) not in pages]
        return dataclasses.replace(done, children=children)


class _Waiting:
    """The records waiting to be handed out (see the theory of operation): ``held`` by
    site, read and not in the file yet; queued in the file; and the ``window``, the
    hand-out policy's. ``counts`` are the loader's (by state, in the file), ``done`` its
    sitemaps marked done."""

    def __init__(
        self, window: HandOut, buffer: int, counts: dict[int, int], done: dict[str, DoneSitemap]
    ) -> None:
        self.window = window
        self.buffer = buffer
        self.counts = counts
        self.done = done
        self.held = SiteQueues()
        #: Sitemaps read completely whose records are not all in the file yet, in order:
        #: (where the held records stood, the sitemap's key, what the file keeps of it).
        self.marks: deque[tuple[dict[str, int], str, DoneSitemap]] = deque()
        #: The highest id loaded into the window (every queued row above it is not).
        self.cursor = 0

    @property
    def full(self) -> bool:
        """Whether the buffer and the read-ahead are full: reading pauses."""
        return len(self.held) + self.counts[QUEUED] >= self.buffer + LOADER_READ_AHEAD

    def take(self) -> Row | None:
        """The window's next row (a policy of the caller's that gives no row: refused)."""
        row = self.window.take()
        if row is not None and not (
            type(row) is tuple and len(row) == 2 and type(row[1]) is UrlRecord
        ):
            shown = repr(row)[:80]
            raise OptionError("order", f"the policy gave {shown}, not a row", "SitemapLoader")
        return row

    def let_in(self, store: ProgressStore, everything: bool = False) -> bool:
        """Held records into the file, round-robin across sites, as many as the buffer
        has room for (``everything``: all, at the end of reading); then the sitemaps
        whose every record is in the file are marked done. Whether any came in."""
        held = self.held
        room = len(held) if everything else self.buffer - self.counts[QUEUED]
        if room <= 0 or not held:
            return False
        self.counts[QUEUED] += store.add(held.take(room))
        while self.marks and held.passed(self.marks[0][0]):
            _, key, done = self.marks.popleft()
            store.sitemap_done(key, done)
        store.commit()
        return True

    def sitemap_done(self, store: ProgressStore, key: str, done: DoneSitemap) -> None:
        """A sitemap read completely: marked done in the file, at once when nothing is
        held, else once every record held now is in (a new loader must find them)."""
        self.done[key] = done
        if self.held:
            self.marks.append((self.held.mark(), key, done))
        else:
            store.sitemap_done(key, done)

    def load(self, store: ProgressStore) -> None:
        """Queued records into the window: every one while they fit in ``buffer``, else
        ``buffer`` at a time once the window is half empty. A damaged row is given up
        with a warning naming the file, the row and its URL; the rest go on."""
        counts = self.counts
        while True:
            window = len(self.window)
            waiting = counts[QUEUED] - window  # in the file, not in the window yet
            room = self.buffer - window
            if waiting <= 0 or (waiting > room and window > self.buffer // 2):
                return
            found = store.queued(self.cursor, min(waiting, room))
            if not found.rows and not found.damaged:
                raise StateError(f"progress file {store.path}: queued URLs are missing")
            self.cursor = found.last
            for row in found.rows:
                self.window.put(row)
            if not found.damaged:
                return
            for row_id, url, why in found.damaged:
                counts[QUEUED] -= 1
                counts[GAVE_UP] += 1
                logger.warning(
                    "progress file %s: row %d (%s) given up: %s",
                    store.path, row_id, printable(url), why,
                )  # fmt: skip
            store.commit()


class _ProgressObserver(Observer):
    """The run's observer wrapped: sitemaps done before are answered from the file."""

    def __init__(self, inner: Observer, loader: SitemapLoader) -> None:
        self.inner = inner
        self.loader = loader

    def watch(self, node: SitemapNode) -> Watch:
        key = node_key(node.url)
        listed = node.kind == "listed"
        if listed:
            self.loader._marks.open.add(key)
        return _ProgressWatch(self.inner.watch(node), self.loader, key, listed)

    def finale(self) -> Checkpoint | None:
        return self.inner.finale()


class _ProgressWatch(Watch):
    """One sitemap's watch: the inner (incremental) watch, plus the loader's bookkeeping."""

    __slots__ = ("children", "inner", "key", "listed", "loader", "tracks_duplicates")

    def __init__(self, inner: Watch, loader: SitemapLoader, key: str, listed: bool) -> None:
        self.inner = inner
        self.loader = loader
        self.key = key
        #: The node is a listed loc (a sitemap or a page: its verdict comes as it settles).
        self.listed = listed
        self.children: Children = []
        self.tracks_duplicates = inner.tracks_duplicates

    def plan(self, node: SitemapNode) -> StoredChildren | None:
        done = self.loader._done.get(self.key)
        if done is None:
            return self.inner.plan(node)
        node.unchanged = FROM_PROGRESS
        node.format, node.urls, node.complete = done.format, done.urls, True
        return done.children

    def headers(self) -> dict[str, str] | None:
        return self.inner.headers()

    def not_modified(self, node: SitemapNode, status: int) -> StoredChildren | None:
        return self.inner.not_modified(node, status)

    def begin(self, etag: str | None, last_modified: str | None) -> None:
        self.inner.begin(etag, last_modified)

    def feed(self, chunk: bytes) -> None:
        self.inner.feed(chunk)

    def child(self, url: str, lastmod: datetime | None) -> None:
        self.children.append((url, lastmod))
        self.inner.child(url, lastmod)

    def observe(self, batch: Batch, duplicates: Batch, uniform: bool) -> Batch:
        return self.inner.observe(batch, duplicates, uniform)

    def settle(self, node: SitemapNode, complete: bool) -> Checkpoint | None:
        checkpoint = self.inner.settle(node, complete)
        # HTML pages are read again by a new loader (a few, ``max_html_pages``): the
        # links they share are left out of each (``discovery.records``), and their
        # records already in the file are not taken in twice.
        done_now = complete and node.kind != "robots" and node.kind not in HTML_KINDS
        if not done_now and not self.listed:
            return checkpoint
        loader, key = self.loader, self.key
        verdict = _verdict(node)
        done = DoneSitemap(node.format, node.urls, self.children)
        marks = loader._marks
        opened = marks.open
        listed = [k for k in (node_key(u) for u, _ in self.children) if k in opened]

        def write() -> Iterator[Batch]:
            if checkpoint is not None:
                yield from checkpoint.run()
            if self.listed:
                marks.settled(key, verdict)
            if done_now:
                marks.sitemap_done(key, done, listed)

        return Checkpoint(write)


def _verdict(node: SitemapNode) -> str | None:
    """A listed loc's verdict as it settles (``discovery.settle``): a sitemap, a page, or
    None (the run's stop cut it before its body said)."""
    if node.kind == "sitemap":
        return "sitemap"
    skipped = node.skipped
    return "page" if skipped is not None and skipped.code == "page" else None
