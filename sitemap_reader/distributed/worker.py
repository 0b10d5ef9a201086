"""The worker: a loop that takes a target, runs the ordinary discovery on it, writes its
output file, and settles it on the queue.

Theory of operation
-------------------
A worker is one consumer of the queue (:mod:`.queue`). It holds up to ``parallel``
targets at once; each one runs in its own task:

1. The target is input from whoever can write to the queue: only http(s) URLs and
   domains are run, and private or loopback ones only with ``allow_private``; anything
   else is dead-lettered at once, unread. A target already done is dropped; one whose
   failures reached the limit (it killed its workers) is dead-lettered. A suspect (its
   worker died while it ran beside others) runs alone, so the next death tells.
2. The run: :func:`run_discovery` (the only place that knows the discovery engine) streams
   the target's records into a file named after the attempt (``.NAME.ID.ATTEMPT.tmp``;
   with a records stream, each chunk is also published, fenced by the attempt). With
   ``state``, the target's stored state becomes a temporary state file for the run.
3. The file is fsynced; the fenced commit (``FINISH``) marks the target done with its new
   state, and only when it won is the file renamed to its name. A crash between the two
   leaves a commit marker and the hidden file; the repair renames it into place: every
   worker runs it when it starts, when a drain ends (so a worker that was running when
   another died still leaves no target done without its file), and when it finds nothing
   to take, at most once per :data:`REPAIR_EVERY` leases. Files of dead attempts are
   removed by whoever takes the target next (or by the repair). A failure records the
   error; the target is retried after the retry delay.

The heartbeat thread (:mod:`.heartbeat`) keeps every held lease alive meanwhile. When it
finds a lease lost (the worker was stalled past the lease, and another worker took the
target over), the run stops at the next record and leaves the target to its new owner;
had it gone on, every write of it would be refused anyway.

Redis going away is ridden out for ``redis_wait`` seconds (each call retried); then, or
when the queue vanished, the worker stops: the runs in flight are cancelled and awaited,
and the error is raised from :meth:`Worker.run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import IO, Any, Final, Protocol

from aiohttp.abc import AbstractResolver

from sitemap_reader._safe_text import printable
from sitemap_reader.crawl import SitemapReader
from sitemap_reader.delivery.writers import JsonlWriter, RecordWriter
from sitemap_reader.discovery.addresses import PRIVATE_DATA, data_refusal, from_data
from sitemap_reader.distributed.config import Keys, WorkerLimits, check_redis_url, output_name
from sitemap_reader.distributed.heartbeat import Heartbeat
from sitemap_reader.distributed.queue import (
    Lease,
    QueueGone,
    RedisUnavailable,
    TargetQueue,
    consumer_name,
    raise_if_cancelling,
)
from sitemap_reader.distributed.target_state import StateFile
from sitemap_reader.errors import DiscoveryError, UsageError, error_line
from sitemap_reader.options import Options
from sitemap_reader.records import UrlRecord
from sitemap_reader.store import url_key
from sitemap_reader.store.files import create_new

log = logging.getLogger("sitemap_reader.distributed")

#: Records per ``PUBLISH`` call to the records stream.
PUBLISH_CHUNK = 500
#: Records a writer gets at a time (it encodes a batch in one go).
WRITE_BATCH = 1024
#: An idle worker repairs its output directory at most once per this many leases (a scan
#: of the directory: cheap next to the lease, costly if run at every idle poll).
REPAIR_EVERY: Final = 10
#: The name of an attempt's file: ``.NAME.ENTRYID.ATTEMPT.tmp``.
ATTEMPT_FILE = re.compile(r"\.(?P<name>.+)\.(?P<id>\d+-\d+)\.(?P<attempt>\d+)\.tmp")
#: What ends a worker rather than one target.
FATAL = (QueueGone, RedisUnavailable)


# --------------------------------------------------------------------------- the adapter


async def run_discovery(
    target: str,
    options: Options,
    stats: dict[str, Any],
    *,
    resolver: AbstractResolver | None = None,
) -> AsyncGenerator[UrlRecord, None]:
    """The ordinary discovery of one target, through the reader's public API.

    This is the worker's only coupling to the discovery engine: it yields the target's
    records (what ``options.delivery`` asks for: the order, the filters, the records
    budget, per target) and fills ``stats`` with the run's counters when the run ends. Raises
    :class:`~sitemap_reader.errors.DiscoveryError` when nothing could be discovered.
    ``resolver`` is the reader's (a worker with one: ``functools.partial``).
    """
    async with SitemapReader(options, resolver=resolver) as reader:
        reader.one_of_many = True  # one target of the queue's: per_target names others too
        try:
            async with contextlib.aclosing(reader.urls(target)) as recs:
                async for record in recs:
                    yield record
        finally:
            if reader.last_run is not None:
                stats.update(reader.last_run.stats.to_dict())
                stats["verdicts"] = [v.to_dict() for v in reader.last_run.verdicts.values()]


class TargetRunner(Protocol):
    """The shape of :func:`run_discovery` (another engine can be passed to a worker)."""

    def __call__(
        self, target: str, options: Options, stats: dict[str, Any]
    ) -> AsyncGenerator[UrlRecord, None]: ...


# --------------------------------------------------------------------------- output


@dataclass(frozen=True, slots=True)
class Output:
    """Where a worker writes each target's records, and how.

    ``writer`` makes a writer on a text stream (JSON Lines by default); ``fmt`` names the
    file suffix. Which records, how many and in what order is the options' delivery.
    """

    directory: str
    fmt: str = "jsonl"
    writer: Callable[[IO[str]], RecordWriter] = JsonlWriter

    def path(self, target: str) -> str:
        """Where the output of ``target`` goes."""
        return os.path.join(self.directory, output_name(target, self.fmt))


def attempt_path(path: str, lease: Lease) -> str:
    """The hidden file of one attempt at ``path``, beside it (the rename stays atomic)."""
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.{lease.id}.{lease.attempt}.tmp")


class AttemptOutput:
    """The file of one attempt: written whole, made visible by :meth:`reveal` only after
    the attempt's commit won. Its mode honours the umask, as any file a program makes.
    It is new (``O_EXCL | O_NOFOLLOW``): a link or any file already at its name is
    refused, never written through (the attempt fails and is retried under a new name)."""

    def __init__(self, path: str, lease: Lease) -> None:
        self.path = path
        self.tmp = attempt_path(path, lease)
        fd = create_new(self.tmp)
        self.stream: IO[str] = open(fd, "w", encoding="utf-8", newline="")  # noqa: SIM115

    def seal(self) -> None:
        """Flush, fsync and close: the file is whole on disk, ready for the commit."""
        self.stream.flush()
        os.fsync(self.stream.fileno())
        self.stream.close()

    def reveal(self) -> None:
        """Rename over the target's name (after the commit won). A file gone already was
        renamed by another worker's repair."""
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.tmp, self.path)

    def abort(self) -> None:
        """Drop the file (a no-op once renamed)."""
        self.stream.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


def refusal(text: str, private_ok: bool) -> str | None:
    """Why a queued target is not run (None: it is run). The queue is input from anyone
    who can write to it: a local path or a private address is not theirs to ask for (the
    guard's rule for targets from data:
    :func:`~sitemap_reader.discovery.addresses.data_refusal`).

    >>> refusal("/etc/passwd", False)
    'refused: not an http(s) URL or a domain'
    >>> refusal("http://127.0.0.1:8080/", False)
    'refused: a private or loopback target needs a worker started with --allow-private'
    >>> refusal("http://127.0.0.1:8080/", True) is None
    True
    """
    reason = data_refusal(text, private_ok)
    if reason == PRIVATE_DATA:
        return f"{reason} needs a worker started with --allow-private"
    return reason


# --------------------------------------------------------------------------- the worker


@dataclass(slots=True)
class WorkerReport:
    """What one worker did (``worker`` prints it when it ends)."""

    done: int = 0
    failed_tries: int = 0
    dead: int = 0
    duplicates: int = 0
    lost: int = 0
    urls: int = 0
    errors: list[str] = field(default_factory=list)


class LeaseLost(Exception):
    """Another attempt owns this target now (the heartbeat or a fenced write found it)."""


class Worker:
    """Takes targets from a queue until stopped (or, with ``drain``, until it is empty).

    >>> async def main() -> None:                                   # doctest: +SKIP
    ...     worker = Worker("redis://127.0.0.1:6379/0", Output("out/"))
    ...     report = await worker.run(drain=True)
    ...     print(report.done, "targets written to out/")
    """

    def __init__(
        self,
        url: str,
        output: Output,
        options: Options | None = None,
        *,
        namespace: str | None = None,
        limits: WorkerLimits | None = None,
        parallel: int = 1,
        records_stream: bool = False,
        discovery: TargetRunner = run_discovery,
    ) -> None:
        if parallel < 1:
            raise UsageError("parallel must be at least 1")
        if not os.path.isdir(output.directory):
            raise UsageError(f"output directory {printable(output.directory)} does not exist")
        self.url = check_redis_url(url)
        self.output = output
        self.keys = Keys(namespace) if namespace else Keys()
        self.limits = limits or WorkerLimits()
        options = options or Options()
        # The queue is input from anyone who can write to it: its targets reach private
        # addresses only when this worker allows every address (allow_private=True).
        self.private_ok = options.network.allow_private is True
        self.options = options.replace(allow_private=from_data(options.network.allow_private))
        #: Incremental runs, the state of each target kept in Redis (``state`` set).
        self.incremental = options.incremental.state is not None
        self.parallel = parallel
        self.records_stream = records_stream
        self.discovery = discovery
        self.consumer = consumer_name()
        self.report = WorkerReport()
        self.queue = TargetQueue.from_url(url, namespace, self.limits)
        self._heartbeat: Heartbeat | None = None
        self._repaired = time.monotonic()

    async def run(self, *, drain: bool = False) -> WorkerReport:
        """Work until cancelled, or with ``drain`` until nothing is queued or in flight
        anywhere. Cancelling gives the targets in flight back to the queue at once; a
        queue that vanished or a Redis away past ``redis_wait`` raises (after the runs in
        flight ended)."""
        running: dict[asyncio.Task[None], Lease] = {}
        stopped: float | None = None
        try:
            queue_id = await self.queue.open()
            assert queue_id is not None
            await self._repair()
            heartbeat = Heartbeat(self.url, self.keys, queue_id, self.consumer, self.limits)
            with heartbeat:
                self._heartbeat = heartbeat
                ticker = asyncio.create_task(self._tick(heartbeat))
                try:
                    await self._loop(running, drain)
                finally:
                    stopped = time.monotonic()
                    ticker.cancel()
                    await _cancel_all([ticker, *running])  # each run gives its target back
        finally:
            # Redis gone: nothing left to tidy. Bounded: a worker told to stop waits for an
            # unreachable Redis one socket timeout in all (its give-backs, tried once each
            # and side by side, and this), not one per call.
            budget = self.limits.socket_timeout
            if stopped is not None:
                budget -= time.monotonic() - stopped
            with contextlib.suppress(Exception):
                async with asyncio.timeout(max(0.0, budget)):
                    await self.queue.leave(self.consumer)
            await self.queue.close()
        return self.report

    async def _tick(self, heartbeat: Heartbeat) -> None:
        while True:  # tells the heartbeat (and so ``status``) the loop is not blocked
            heartbeat.tick()
            await asyncio.sleep(self.limits.heartbeat / 2)

    async def _loop(self, running: dict[asyncio.Task[None], Lease], drain: bool) -> None:
        while True:
            raise_if_cancelling()  # a stop request caught on its way still stops the loop
            for task in [t for t in running if t.done()]:
                del running[task]
                error = None if task.cancelled() else task.exception()
                if error is not None:  # the queue vanished, or Redis is away for good
                    raise error
            alone = any(lease.solo for lease in running.values())
            if running and (alone or len(running) >= self.parallel):
                await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                continue
            if drain and not running and await self.queue.empty():
                await self._repair()  # a worker that died meanwhile may have left a file
                return  # checked before blocking on the stream: no idle poll at the end
            lease = await self.queue.take(self.consumer, self.limits)
            if lease is None:
                if time.monotonic() - self._repaired > REPAIR_EVERY * self.limits.lease:
                    await self._repair()
                continue
            after = list(running) if lease.solo else []  # a suspect runs alone
            running[asyncio.create_task(self._process(lease, after))] = lease

    async def _process(self, lease: Lease, after: list[asyncio.Task[None]]) -> None:
        heartbeat = self._heartbeat
        assert heartbeat is not None
        heartbeat.hold(lease)
        try:
            if after:  # held (and refreshed) until the runs beside it ended
                await asyncio.wait(after)
            await self._settle(lease)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self.queue.release(self.consumer, lease)
            raise
        finally:
            heartbeat.drop(lease)

    async def _settle(self, lease: Lease) -> None:
        queue, limits = self.queue, self.limits
        path = self.output.path(lease.target)
        for earlier in range(1, lease.attempt):  # files of dead attempts at this entry
            with contextlib.suppress(FileNotFoundError):
                os.unlink(attempt_path(path, Lease(lease.id, lease.target, earlier)))
        refused = refusal(lease.target, self.private_ok)
        if refused is not None:
            await self._failed(lease, refused, count=limits.max_deliveries)
            return
        if lease.failures >= limits.max_deliveries:
            error = await queue.last_error(lease.target) or (
                f"its worker died {lease.failures} times while it ran alone"
            )
            await self._failed(lease, error, count=0)
            return
        if await queue.is_done(lease.target):
            await queue.discard(self.consumer, lease)
            self.report.duplicates += 1
            return
        try:
            async with asyncio.timeout(limits.target_timeout):
                await self._run(lease, path)
        except LeaseLost:
            self.report.lost += 1
            log.warning("%s was taken over by another worker", printable(lease.target))
        except FATAL:
            raise
        except Exception as exc:  # any failure of one target is that target's problem
            await self._failed(lease, describe(exc, lease.target))

    async def _failed(self, lease: Lease, error: str, *, count: int = 1) -> None:
        outcome = await self.queue.fail(self.consumer, lease, error, self.limits, count=count)
        shown = printable(lease.target)
        if outcome == 2:
            self.report.dead += 1
            self.report.errors.append(f"{shown}: {printable(error)}")
            log.warning("%s sent to the dead-letter stream: %s", shown, printable(error))
        elif outcome == 1:
            self.report.failed_tries += 1
            log.info("%s failed (attempt %d), will be retried: %s", shown, lease.attempt, error)
        else:
            self.report.lost += 1

    async def _run(self, lease: Lease, path: str) -> None:
        """One run of a target, its file committed and in place (or LeaseLost)."""
        started = time.monotonic()
        blob = await self.queue.state(lease.target) if self.incremental else None
        state_file = StateFile(blob) if self.incremental else None
        sink = AttemptOutput(path, lease)
        keep_file = False
        try:
            with state_file or contextlib.nullcontext():
                options = self.options
                if state_file is not None:
                    options = options.replace(state=state_file.path, state_commit="run")
                stats: dict[str, Any] = {}
                written = await self._write(lease, sink, options, stats)
                new_state = state_file.blob() if state_file is not None else None
            summary = {
                "file": os.path.basename(path),
                "urls": written,
                "worker": self.consumer,
                "attempt": lease.attempt,
                "seconds": round(time.monotonic() - started, 3),
                "finished": round(time.time(), 3),
                "stats": stats,
            }
            sink.seal()
            try:
                won = await self.queue.finish(
                    self.consumer, lease, summary, state=new_state, records_end=self.records_stream
                )
            except RedisUnavailable:
                keep_file = True  # the commit may have won: the next start's repair decides
                raise
            if not won:
                raise LeaseLost(lease.target)
            sink.reveal()
            self.report.done += 1
            self.report.urls += written
        finally:
            if not keep_file:
                sink.abort()
        await self.queue.renamed(lease.token)

    async def _write(
        self, lease: Lease, sink: AttemptOutput, options: Options, stats: dict[str, Any]
    ) -> int:
        out = self.output
        written = 0
        pairs: list[tuple[str, str]] = []
        writer = out.writer(sink.stream)
        held: list[UrlRecord] = []  # written a batch at a time (the writers encode batches)
        records = self.discovery(lease.target, options, stats)
        async with contextlib.aclosing(records):
            async for record in records:
                if lease.lost:
                    raise LeaseLost(lease.target)
                held.append(record)
                if len(held) >= WRITE_BATCH:
                    writer.write_batch(held)
                    held.clear()
                written += 1
                if self.records_stream:
                    pairs.append((_key(record), json.dumps(record.to_dict())))
                    if len(pairs) >= PUBLISH_CHUNK:
                        await self._publish(lease, pairs)
        writer.write_batch(held)
        await self._publish(lease, pairs)
        if lease.lost:
            raise LeaseLost(lease.target)
        return written

    async def _publish(self, lease: Lease, pairs: list[tuple[str, str]]) -> None:
        if pairs and await self.queue.publish(self.consumer, lease, pairs) < 0:
            raise LeaseLost(lease.target)
        pairs.clear()

    async def _repair(self) -> None:
        """Finish what crashed attempts left in the output directory: rename the file of
        an attempt whose commit won, remove the files of attempts that are dead."""
        self._repaired = time.monotonic()
        with os.scandir(self.output.directory) as entries:
            found = [(e.path, ATTEMPT_FILE.fullmatch(e.name)) for e in entries]
        for tmp, match in found:
            if match is None:
                continue
            # Live first: the commit and the end of the claim are one step (FINISH), so an
            # attempt found not live has committed already or never will; asked the other
            # way round, a commit landing between the two questions had its file removed.
            if await self.queue.live(match["id"], int(match["attempt"])):
                continue  # its worker is at it
            token = f"{match['id']}.{match['attempt']}"
            if await self.queue.committed(token):
                final = os.path.join(self.output.directory, match["name"])
                with contextlib.suppress(FileNotFoundError):
                    os.replace(tmp, final)
                await self.queue.renamed(token)
                log.warning("renamed %s into place (its worker stopped before)", final)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)


def _key(record: UrlRecord) -> str:
    return format(url_key(record.url) & 0xFFFFFFFFFFFFFFFF, "016x")


def describe(exc: BaseException, target: str) -> str:
    """One line for a target's error (shown beside the target, so without it): the
    verdict's kind first (blocked, absent...) and the reason."""
    if isinstance(exc, TimeoutError):
        return "the target ran past its time budget"
    if isinstance(exc, DiscoveryError):
        kinds = "/".join(sorted({v.kind for v in exc.verdicts.values()}))
        return f"{kinds}: {exc.reason(target)}" if kinds else exc.reason(target)
    return error_line(exc)


async def _cancel_all(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel tasks and wait until each has ended (a run gives its target back)."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
