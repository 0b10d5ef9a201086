"""The worker: a loop that takes a target, runs the ordinary discovery on it, writes its
output file, and settles it on the queue.

Theory of operation
-------------------
A worker is one consumer of the queue (:mod:`.queue`). It holds up to ``parallel``
targets at once; each one runs in its own task:

1. A target delivered more often than ``max_deliveries`` without being settled (its
   workers were killed or timed out) goes to the dead-letter stream; a target already
   done (a duplicate entry) is dropped.
2. The run: :func:`run_discovery` (the only place that knows the discovery engine) streams
   the target's records; each one that passes the filter is written to a temporary file
   in the output directory (and, with a records stream, published to Redis, deduplicated
   per target). With ``state``, the target's stored state becomes a temporary state file
   for the run (:mod:`.state`).
3. The file is fsynced and renamed into place; only then is the target acknowledged,
   with its summary and its new state, in one script. A failure instead records the
   error; the target is retried (by any worker) after the retry delay, up to the limit.

The heartbeat thread (:mod:`.heartbeat`) keeps every held lease alive meanwhile. When it
finds a lease lost (the worker was stalled past the lease, and another worker took the
target over), the run stops at the next record and leaves the target to its new owner.

A killed worker costs the runs it had in flight: their temporary files stay behind
(hidden ``.NAME.*.tmp`` files), and their targets are read again from the start by the
worker that takes them over once the lease lapses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from sitemap_reader.crawl import SitemapReader
from sitemap_reader.distributed.config import Keys, WorkerLimits, output_name
from sitemap_reader.distributed.heartbeat import Heartbeat
from sitemap_reader.distributed.queue import Lease, TargetQueue, consumer_name
from sitemap_reader.distributed.state import StateFile
from sitemap_reader.errors import UsageError
from sitemap_reader.records import UrlRecord
from sitemap_reader.store import url_key

log = logging.getLogger("sitemap_reader.distributed")

#: Records per ``PUBLISH`` call to the records stream.
PUBLISH_CHUNK = 500


# --------------------------------------------------------------------------- the adapter


async def run_discovery(
    target: str,
    options: Mapping[str, Any],
    stats: dict[str, Any],
    *,
    ranked: bool = False,
    top: int | None = None,
) -> AsyncGenerator[UrlRecord, None]:
    """The ordinary discovery of one target, through the reader's public API.

    This is the worker's only coupling to the discovery engine: it yields the target's
    records and fills ``stats`` with the run's counters when the run ends. Raises
    :class:`~sitemap_reader.errors.DiscoveryError` when nothing could be discovered.
    """
    async with SitemapReader(**options) as reader:
        try:
            async with contextlib.aclosing(reader.urls(target, ranked=ranked, top=top)) as recs:
                async for record in recs:
                    yield record
        finally:
            if reader.last_run is not None:
                stats.update(reader.last_run.stats.to_dict())


class Discovery(Protocol):
    """The shape of :func:`run_discovery` (another engine can be passed to a worker)."""

    def __call__(
        self,
        target: str,
        options: Mapping[str, Any],
        stats: dict[str, Any],
        *,
        ranked: bool = False,
        top: int | None = None,
    ) -> AsyncGenerator[UrlRecord, None]: ...


# --------------------------------------------------------------------------- output


class RecordWriter(Protocol):
    """Writes one record as whole lines."""

    def write(self, record: UrlRecord) -> None: ...


class JsonlWriter:
    """The default output: one JSON object a line (``UrlRecord.to_dict``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, record: UrlRecord) -> None:
        """Write the record as one JSON line."""
        self._stream.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")


@dataclass(frozen=True, slots=True)
class Output:
    """What a worker writes for each target, and where.

    ``writer`` makes a writer on a text stream (JSON Lines by default); ``fmt`` names the
    file suffix; ``keep`` filters records; ``max_urls`` caps the records per target.
    """

    directory: str
    fmt: str = "jsonl"
    writer: Callable[[IO[str]], RecordWriter] = JsonlWriter
    keep: Callable[[UrlRecord], bool] | None = None
    max_urls: int | None = None
    ranked: bool = False
    top: int | None = None

    def path(self, target: str) -> str:
        """Where the output of ``target`` goes."""
        return os.path.join(self.directory, output_name(target, self.fmt))


class AtomicOutput:
    """A file that appears under its name, complete, only on :meth:`commit`."""

    def __init__(self, path: str) -> None:
        self.path = path
        directory, name = os.path.split(path)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        self.stream: IO[str] = open(fd, "w", encoding="utf-8", newline="")  # noqa: SIM115

    def commit(self) -> None:
        """fsync, then rename over the target name (atomic on one filesystem)."""
        self.stream.flush()
        os.fsync(self.stream.fileno())
        self.stream.close()
        os.chmod(self._tmp, 0o644)
        os.replace(self._tmp, self.path)

    def abort(self) -> None:
        """Drop the temporary file (a no-op after commit)."""
        self.stream.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._tmp)


@dataclass(frozen=True, slots=True)
class StateOptions:
    """Incremental runs per target, with the state kept in Redis (``--state``)."""

    changed_only: bool = False
    removed: bool = False
    trust_index_lastmod: bool = True


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
    """The heartbeat found that another worker took this target over."""


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
        *,
        namespace: str | None = None,
        limits: WorkerLimits | None = None,
        reader_options: Mapping[str, Any] | None = None,
        parallel: int = 1,
        state: StateOptions | None = None,
        records_stream: bool = False,
        discovery: Discovery = run_discovery,
    ) -> None:
        if parallel < 1:
            raise UsageError("parallel must be at least 1")
        if not os.path.isdir(output.directory):
            raise UsageError(f"output directory {output.directory} does not exist")
        self.url = url
        self.output = output
        self.keys = Keys(namespace) if namespace else Keys()
        self.limits = limits or WorkerLimits()
        self.reader_options = dict(reader_options or {})
        self.parallel = parallel
        self.state = state
        self.records_stream = records_stream
        self.discovery = discovery
        self.consumer = consumer_name()
        self.report = WorkerReport()
        self.queue = TargetQueue.from_url(url, namespace)
        self._heartbeat: Heartbeat | None = None

    async def run(self, *, drain: bool = False) -> WorkerReport:
        """Work until cancelled, or with ``drain`` until nothing is queued or in flight
        anywhere. Cancelling gives the targets in flight back to the queue at once."""
        running: set[asyncio.Task[None]] = set()
        try:
            await self.queue.ensure_group()
            with Heartbeat(self.url, self.keys, self.consumer, self.limits) as heartbeat:
                self._heartbeat = heartbeat
                try:
                    await self._loop(running, drain)
                except asyncio.CancelledError:
                    await _cancel_all(running)  # each run gives its target back
                    raise
        finally:
            with contextlib.suppress(Exception):  # Redis gone: nothing left to tidy
                await self.queue.leave(self.consumer)
            await self.queue.close()
        return self.report

    async def _loop(self, running: set[asyncio.Task[None]], drain: bool) -> None:
        while True:
            if len(running) >= self.parallel:
                await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                continue
            if drain and not running and await self.queue.empty():
                return  # checked before blocking on the stream: no idle poll at the end
            lease = await self.queue.take(self.consumer, self.limits)
            if lease is None:
                continue
            task = asyncio.create_task(self._process(lease))
            running.add(task)
            task.add_done_callback(running.discard)

    async def _process(self, lease: Lease) -> None:
        heartbeat = self._heartbeat
        assert heartbeat is not None
        heartbeat.hold(lease)
        try:
            await self._settle(lease)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self.queue.release(self.consumer, lease, self.limits)
            raise
        finally:
            heartbeat.drop(lease)

    async def _settle(self, lease: Lease) -> None:
        queue, limits = self.queue, self.limits
        if lease.deliveries > limits.max_deliveries:
            error = await queue.last_error(lease.target) or (
                f"delivered {lease.deliveries} times without finishing "
                "(its workers were killed or timed out)"
            )
            await self._failed(lease, error)
            return
        if await queue.is_done(lease.target):
            await queue.discard(self.consumer, lease.id)
            self.report.duplicates += 1
            return
        try:
            async with asyncio.timeout(limits.target_timeout):
                summary, state = await self._run(lease)
        except LeaseLost:
            self.report.lost += 1
            return
        except Exception as exc:  # any failure of one target is that target's problem
            await self._failed(lease, describe(exc))
            return
        if await queue.finish(
            self.consumer, lease, summary, state=state, records_end=self.records_stream
        ):
            self.report.done += 1
            self.report.urls += int(summary["urls"])
        else:
            self.report.lost += 1
            log.warning("%s was taken over by another worker; its output stays", lease.target)

    async def _failed(self, lease: Lease, error: str) -> None:
        outcome = await self.queue.fail(self.consumer, lease, error, self.limits)
        if outcome == 2:
            self.report.dead += 1
            self.report.errors.append(f"{lease.target}: {error}")
            log.warning("%s sent to the dead-letter stream: %s", lease.target, error)
        elif outcome == 1:
            self.report.failed_tries += 1
            log.info(
                "%s failed (delivery %d), will be retried: %s",
                lease.target,
                lease.deliveries,
                error,
            )
        else:
            self.report.lost += 1

    async def _run(self, lease: Lease) -> tuple[dict[str, Any], bytes | None]:
        """One run of a target: its output file in place; (summary, new state blob)."""
        started = time.monotonic()
        blob = await self.queue.state(lease.target) if self.state is not None else None
        state_file = StateFile(blob) if self.state is not None else None
        with state_file or contextlib.nullcontext():
            options = dict(self.reader_options)
            if state_file is not None and self.state is not None:
                options.update(
                    state=state_file.path,
                    changed_only=self.state.changed_only,
                    removed=self.state.removed,
                    trust_index_lastmod=self.state.trust_index_lastmod,
                    state_commit="run",
                )
            stats: dict[str, Any] = {}
            written = await self._write(lease, options, stats)
            new_state = state_file.blob() if state_file is not None else None
        summary = {
            "file": os.path.basename(self.output.path(lease.target)),
            "urls": written,
            "worker": self.consumer,
            "deliveries": lease.deliveries,
            "seconds": round(time.monotonic() - started, 3),
            "finished": round(time.time(), 3),
            "stats": stats,
        }
        return summary, new_state

    async def _write(self, lease: Lease, options: dict[str, Any], stats: dict[str, Any]) -> int:
        out = self.output
        sink = AtomicOutput(out.path(lease.target))
        written = 0
        pairs: list[tuple[str, str]] = []
        try:
            writer = out.writer(sink.stream)
            records = self.discovery(lease.target, options, stats, ranked=out.ranked, top=out.top)
            async with contextlib.aclosing(records):
                async for record in records:
                    if lease.lost:
                        raise LeaseLost(lease.target)
                    if out.keep is not None and not out.keep(record):
                        continue
                    writer.write(record)
                    written += 1
                    if self.records_stream:
                        pairs.append((_key(record), json.dumps(record.to_dict())))
                        if len(pairs) >= PUBLISH_CHUNK:
                            await self.queue.publish(lease.target, pairs)
                            pairs.clear()
                    if out.max_urls is not None and written >= out.max_urls:
                        break
            if pairs:
                await self.queue.publish(lease.target, pairs)
            if lease.lost:
                raise LeaseLost(lease.target)
            sink.commit()
        finally:
            sink.abort()
        return written


def _key(record: UrlRecord) -> str:
    return format(url_key(record.url) & 0xFFFFFFFFFFFFFFFF, "016x")


def describe(exc: BaseException) -> str:
    """One line for an error: its message, with the type when it is not ours."""
    from sitemap_reader.errors import SitemapReaderError

    message = str(exc) or type(exc).__name__
    if isinstance(exc, TimeoutError):
        return "the target ran past its time budget"
    if isinstance(exc, SitemapReaderError):
        return message
    return f"{type(exc).__name__}: {message}"


async def _cancel_all(running: set[asyncio.Task[None]]) -> None:
    """Cancel the runs in flight and wait until each has given its target back."""
    tasks = list(running)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
