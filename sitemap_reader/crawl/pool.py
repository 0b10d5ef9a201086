"""Parsing large sitemap bodies in worker processes: the pool and its remote parser.

The event loop's thread parses every body it reads, so a run over big sitemaps keeps one
core busy and leaves the others idle. A :class:`ParsePool` (one per
:class:`~sitemap_reader.crawl.SitemapReader`, ``processes`` workers) lets the driver
hand the parsing of a large body to a worker process: the driver's parser factory gives
the core a :class:`RemoteParser`, which forwards each raw chunk to the job's worker and
returns, from each ``feed``, the items that came back, each record rebuilt here with the
job's own builder (the core's shaping, dedupe, scope and policy stay in this process,
untouched). One job stays on one worker, and a worker answers a job's messages in order,
so records keep their document order.

When a body goes elsewhere (:meth:`ParsePool.parser`): only with ``processes > 0``, for
a body that announces at least :data:`REMOTE_MIN_BYTES` or once the run has read
:data:`REMOTE_AFTER_BYTES`; the first such body of a pool starts the workers (lazily:
a small run never starts one) and is parsed here meanwhile, so the first URL never waits
for a process to start. A worker is a ``python -P -c`` child running
:mod:`sitemap_reader.crawl.parse_worker` by path: it does not re-import the caller's
``__main__`` (as multiprocessing's spawn would) and loads no aiohttp.

Failures: a message a worker could not serve comes back as an error, and a worker that
dies (killed, out of memory) fails the jobs it held; either way the next ``feed`` or
``close`` raises :class:`WorkerFailed`, which the core records as that sitemap's
``internal`` problem. A dead worker is replaced on the next assignment. The deadline and
the byte caps hold as in-process: the core checks them on every chunk, the driver's
deadline covers the waits for answers, and each chunk carries its deadline so a worker
stops parsing a slow body by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from sitemap_reader.crawl import parse_worker
from sitemap_reader.discovery.parsing import BodySpec
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.parser import Item
from sitemap_reader.records import Problem, RareFields, RecordBuilder, UrlRecord

#: A body announcing at least this many bytes (Content-Length) is parsed in a worker:
#: below it, the round trip and the rebuilding of records cost about what they save.
REMOTE_MIN_BYTES = 256 * 1024
#: Once a run has read this many bytes, bodies of unknown size go to a worker too.
REMOTE_AFTER_BYTES = 4 * 1024 * 1024
#: Raw bytes sent to a worker and not yet answered, per job, before the driver stops
#: reading that response: the bound on what a slow worker makes this process hold.
MAX_IN_FLIGHT = 1024 * 1024
#: Seconds a closing pool waits for its workers to exit before killing them.
STOP_WAIT = 2.0

_BOOT = (
    "import runpy, sys; sys.path.insert(0, sys.argv[1]); "
    "runpy.run_path(sys.argv[2], run_name='__main__')"
)


def default_processes() -> int:
    """Workers by default: none, for now. Measured on a 2-core machine shared with other
    work (``benchmarks/discovery.py --processes 0 1 2``, 200k and 1M URLs), workers were
    1.15-1.5x *slower* in wall time. The split itself is sound: a worker spends about
    5.4 us per URL (parse 4.6, pack and pickle 0.8) and this process about 2.5 us per
    URL it gets back (unpickle 0.25, rebuild 2.0, then dedupe, scope, shaping), against
    7 us per URL all here; but the worker did not get a core of its own there (1.0 s of
    CPU took it 1.65 s), so the work was serialized plus the overheads. Opt in with
    ``processes=N`` on a machine with idle cores (and measure)."""
    return 0


class WorkerFailed(RuntimeError):
    """A worker process could not parse a job's body (it died, or its code raised)."""


class _Worker:
    """One parsing process, its writer and reader threads, and the jobs it holds."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        root = str(Path(__file__).resolve().parents[2])  # the folder of sitemap_reader/
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-c", _BOOT, root, parse_worker.__file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        #: Seconds Popen took in this process (the child's own start-up runs elsewhere).
        self.spawn_seconds = time.perf_counter() - started
        self.started = started
        self.ready_after: float | None = None
        self.jobs: dict[int, RemoteParser] = {}
        self.alive = True
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        assert self.process.stdin is not None and self.process.stdout is not None
        stdin, stdout = self.process.stdin, self.process.stdout
        threading.Thread(target=self._write, args=(stdin,), daemon=True).start()
        threading.Thread(target=self._read, args=(stdout,), daemon=True).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, message: Any) -> None:
        """Queue a message (never blocks the loop: a thread writes it)."""
        self._outbox.put(message)

    def stop(self) -> None:
        self._outbox.put(None)

    def _write(self, stdin: IO[bytes]) -> None:
        try:
            while True:
                message = self._outbox.get()
                if message is None:
                    parse_worker.write_frame(stdin, ("stop",))
                    break
                parse_worker.write_frame(stdin, message)
        except (OSError, ValueError):
            pass  # the process is gone: the reader reports it
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self, stdout: IO[bytes]) -> None:
        try:
            while True:
                message = parse_worker.read_frame(stdout)
                if message is None:
                    break
                self._call(self._dispatch, message)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            pass
        finally:
            stdout.close()
        code = self.process.wait()
        self._call(self._died, code)

    def _call(self, function: Any, *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            self.loop.call_soon_threadsafe(function, *args)

    def _dispatch(self, message: Any) -> None:
        kind = message[0]
        if kind == "ready":
            self.ready_after = time.perf_counter() - self.started
            return
        remote = self.jobs.get(message[1])
        if remote is None:
            return
        if kind in ("end", "error"):
            del self.jobs[message[1]]
        remote.arrive(message)

    def _died(self, code: int) -> None:
        self.alive = False
        jobs, self.jobs = list(self.jobs.values()), {}
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        for remote in jobs:
            remote.fail(f"the parsing process {self.pid} ended ({how})")


class ParsePool:
    """Up to ``processes`` parsing processes, started on first use (see the module doc)."""

    def __init__(
        self,
        processes: int,
        *,
        min_bytes: int = REMOTE_MIN_BYTES,
        after_bytes: int = REMOTE_AFTER_BYTES,
    ) -> None:
        self.processes = processes
        self.min_bytes = min_bytes
        self.after_bytes = after_bytes
        self.workers: list[_Worker] = []
        self.started = False
        #: Bodies handed to a worker so far, and workers that died (for reports, tests).
        self.remote_jobs = 0
        self.lost_workers = 0
        self._next_job = 0
        self._closed = False

    def wants(self, size: int | None, seen: int) -> bool:
        """Whether a body of ``size`` bytes (None: unknown), ``seen`` bytes into the run,
        is worth a worker."""
        if self.processes <= 0 or self._closed:
            return False
        return (size is not None and size >= self.min_bytes) or seen >= self.after_bytes

    def parser(self, spec: BodySpec, *, seen: int, seconds: float | None) -> RemoteParser | None:
        """A remote parser for the body, or None: parse it here. ``seconds`` is the
        per-sitemap budget a worker's parse of one chunk must end within."""
        if not self.wants(spec.size, seen):
            return None
        if not self.started:  # the first big body starts the pool and stays here
            self.started = True
            loop = asyncio.get_running_loop()
            self.workers = [_Worker(loop) for _ in range(self.processes)]
            return None
        worker = self._worker()
        self._next_job += 1
        self.remote_jobs += 1
        remote = RemoteParser(worker, self._next_job, spec.url, spec.limits, spec.build, seconds)
        worker.jobs[remote.number] = remote
        inputs = (spec.url, spec.content_type, spec.strict, spec.limits, spec.now)
        worker.send(("open", remote.number, inputs))
        return remote

    def _worker(self) -> _Worker:
        """The live worker holding the fewest jobs (a dead one is replaced first)."""
        for index, worker in enumerate(self.workers):
            if not worker.alive:
                self.lost_workers += 1
                self.workers[index] = _Worker(worker.loop)
        return min(self.workers, key=lambda w: len(w.jobs))

    def close(self) -> None:
        """Stop every worker (kill those that do not exit within :data:`STOP_WAIT`)."""
        self._closed = True
        workers, self.workers = self.workers, []
        for worker in workers:
            worker.stop()
        deadline = time.monotonic() + STOP_WAIT
        for worker in workers:
            try:
                worker.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()


class RemoteParser:
    """The core's parser of one body parsed by a worker (a
    :class:`~sitemap_reader.discovery.parsing.BodyParser`)."""

    def __init__(
        self,
        worker: _Worker,
        number: int,
        url: str | None,
        limits: Limits,
        build: RecordBuilder,
        seconds: float | None,
    ) -> None:
        self.limits = limits
        self.done = False
        self.complete = True
        self.bytes_out = 0
        self.number = number
        self.worker = worker
        #: True once the worker answered the end of body, or failed, or was dropped.
        self.settled = False
        self._url = url
        self._build = build
        self._seconds = seconds
        self._format = "unknown"
        self._problems: list[Problem] = []
        self._ready: list[list[Any]] = []
        self._sent = 0
        self._answered = 0
        self._closing = False
        self._error: str | None = None
        self._event = asyncio.Event()

    @property
    def format(self) -> str:
        return self._format

    @property
    def problems(self) -> list[Problem]:
        return list(self._problems)

    # -- the core's side ---------------------------------------------------------------

    def feed(self, data: bytes) -> list[Item]:
        """Send a chunk to the worker; the items that came back so far (rebuilt here)."""
        if data and not (self.done or self._closing or self.settled):
            when = None if self._seconds is None else time.monotonic() + self._seconds
            self.worker.send(("feed", self.number, data, when))
            self._sent += len(data)
        if not self._ready and self._error is not None:
            raise WorkerFailed(self._error)
        return self._take()

    def close(self) -> list[Item]:
        """End of the job: what came back; a job given up before its end is dropped."""
        if not self.settled:
            self.drop()
            self.complete = False
        if self._error is not None:
            self._ready.clear()
            raise WorkerFailed(self._error)
        return self._take()

    # -- the driver's side -------------------------------------------------------------

    def end_of_body(self) -> None:
        """The body ended: ask the worker for its last items."""
        if not (self._closing or self.settled):
            self._closing = True
            self.worker.send(("close", self.number))

    def drop(self) -> None:
        """Give up on the job (timeout, failure, stop): the worker forgets it."""
        if not self.settled:
            self.settled = True
            self.worker.jobs.pop(self.number, None)
            self.worker.send(("drop", self.number))
            self._event.set()

    @property
    def backlogged(self) -> bool:
        """More than :data:`MAX_IN_FLIGHT` bytes sent and not answered yet."""
        return not self.settled and self._sent - self._answered > MAX_IN_FLIGHT

    async def arrival(self) -> None:
        """Wait for the worker's next answer (returns at once once settled)."""
        if self.settled:
            return
        self._event.clear()
        await self._event.wait()

    def arrive(self, message: Any) -> None:
        """An answer of the worker (on the loop's thread)."""
        kind = message[0]
        if kind == "error":
            self.fail(message[2])
            return
        _, _, packed, (fmt, done, complete, bytes_out, problems), consumed = message
        if packed:
            self._ready.append(packed)
        self._format, self.done, self.complete = fmt, done, complete
        self.bytes_out, self._problems = bytes_out, problems
        self._answered += consumed
        if kind == "end":
            self.settled = True
        self._event.set()

    def fail(self, message: str) -> None:
        """The worker could not finish the job: the next feed (or close) raises."""
        if self._error is None:
            self._error = message
        self.settled = self.done = True
        self._event.set()

    def _take(self) -> list[Item]:
        """The answers so far, records rebuilt with the job's builder, in order."""
        ready = self._ready
        if not ready:
            return []
        self._ready = []
        build, base = self._build, self._url
        out: list[Item] = []
        add = out.append
        for packed in ready:
            for entry in packed:
                if type(entry) is tuple:
                    url, lastmod, changefreq, priority = entry
                    add(build(url, lastmod, changefreq, priority, base, (), (), (), None, None))
                elif type(entry) is UrlRecord:
                    add(_rebuilt(build, entry))
                else:
                    add(entry)
        return out


def _rebuilt(build: RecordBuilder, record: UrlRecord) -> UrlRecord:
    """A record with extensions, built again with the job's builder (its score, its robots
    verdict and its source are this process's to give)."""
    rare = None
    if record.title is not None or record.mobile or record.pagemaps:
        rare = RareFields(record.title, record.mobile, record.pagemaps)
    return build(
        record.url,
        record.lastmod,
        record.changefreq,
        record.priority,
        record.sitemap,
        record.alternates,
        record.images,
        record.videos,
        record.news,
        rare,
    )
