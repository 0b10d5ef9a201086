"""The part of the sitemap jobs (:class:`SitemapJob`), and of local files (:class:`FileJob`).

A sitemap job fetches its URL (or walks what an unchanged sitemap listed last time),
hands its body to a parser chunk by chunk (the driver's per-sitemap deadline read
between slices of bounded work, the wire bytes capped), sends each chunk's items through
the record gate, and settles at the end of the body or at a failure (a body cut by a
lost connection is fetched once more; a bare domain's https falls back to http).

The same class serves the HTML way in: built a second time with another parser choice
(:mod:`~sitemap_reader.discovery.html`), it reads HTML sitemap pages. A local file or
stdin is read through :class:`FileJob`, which only begins and fails its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sitemap_reader.discovery import evidence
from sitemap_reader.discovery.actions import Action, Fetch
from sitemap_reader.discovery.children import STOPPED, Children
from sitemap_reader.discovery.job import Job
from sitemap_reader.discovery.parsing import (
    BodyParser,
    BodySpec,
    Expired,
    ParserFactory,
    local_parser,
)
from sitemap_reader.discovery.records import RecordGate
from sitemap_reader.discovery.rules import is_robots
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.discovery.settle import Settling
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import sniff
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import Item

#: Raw bytes of a job's first parser feed while a deadline is checked: between two slices
#: the driver's clock is read, so a slow parse ends at the deadline, not after the chunk.
FEED_SLICE = 16 * 1024
#: Decompressed bytes one slice should give at most (some tens of ms of parsing). Each
#: job's slice adapts: it halves while gzip expands a slice past this (deflate expands
#: at most ~1032x), and doubles while a slice gives less than half of it.
SLICE_OUTPUT = 1 << 20
#: The smallest and the largest slice (a plain body settles at one feed per read).
MIN_SLICE = 256
MAX_SLICE = 256 * 1024
#: The largest slice of a gzip body, whatever its history: deflate expands at most
#: ~1032x, so one slice gives at most about SLICE_OUTPUT to parse before the clock is
#: read again, even where a body that expanded little so far turns into a bomb (a
#: gzipped 64 KiB read can hold 64 MiB). Measured: no cost on real gzip sitemaps.
GZIP_SLICE = SLICE_OUTPUT // 1032

#: Raw bytes per feed while a URL budget runs (``max_urls``): at most a few hundred URLs
#: of gzip are parsed past the budget (1 KiB of a repetitive gzip urlset holds ~400).
BUDGET_SLICE = 1024

#: Picks the parser of a body: (the job, its final URL, the content type, the bounds, a
#: maker of the sitemap parser) -> the parser (:mod:`~sitemap_reader.discovery.html`).
ParserChoice = Callable[[Job, str, str | None, Limits, Callable[[], BodyParser]], BodyParser]


def sitemap_parser(
    job: Job, url: str, content_type: str | None, limits: Limits, other: Callable[[], BodyParser]
) -> BodyParser:
    """The plain choice: the sitemap parser, whatever the body."""
    return other()


class SitemapJob:
    """The part of the sitemap jobs (see the module docstring)."""

    def __init__(
        self,
        state: RunState,
        scheduling: Scheduling,
        children: Children,
        gate: RecordGate,
        settling: Settling,
        parsers: ParserFactory,
        choose: ParserChoice = sitemap_parser,
    ) -> None:
        self.state = state
        self.scheduling = scheduling
        self.children = children
        self.gate = gate
        self.settling = settling
        #: Makes the parser of each body (a driver may parse elsewhere: ``parsing``).
        self.parsers = parsers
        self.choose = choose

    def begin(self, job: Job) -> list[Action]:
        """Fetch the sitemap, unless the run stopped or it is known unchanged."""
        node = job.node
        if self.state.stopped is not None:
            node.skipped = STOPPED
            return self.settling.settle(job)
        children = job.watch.plan(node)
        if children is not None:  # unchanged since the last run: walk what it listed
            actions: list[Action] = []
            self.children.walk(job, children, actions)
            return actions + self.settling.settle(job)
        return [self.fetch(job, node.url, retry_connect=job.fallback is None)]

    def spec(
        self,
        job: Job,
        url: str | None,
        content_type: str | None,
        limits: Limits,
        size: int | None = None,
    ) -> BodySpec:
        """The parse inputs of the job's body."""
        state = self.state
        strict = state.options.walk.strict
        return BodySpec(url, content_type, strict, limits, state.now, job.shaper.build, size)

    def fetch(self, job: Job, url: str, *, retry_connect: bool) -> Fetch:
        """The request of the job's URL (conditional when the state knows it)."""
        state = self.state
        return Fetch(
            job.ticket(state.token),
            url,
            request_headers=job.watch.headers(),
            max_redirects=state.limits.max_redirects,
            retry_connect=retry_connect,
            target=job.site.index,
            spacing=state.delay_for(url),
            client=job.site.client,
        )

    def follows(self, job: Job, key: str) -> bool:
        """A hop is followed unless it is robots.txt or a sitemap visited before."""
        if key in job.hops:
            return True
        visited = self.state.visited
        job.site.hops.add(key)
        if is_robots(key) or key in visited:
            return False
        visited.add(key)
        job.hops.add(key)
        return True

    def refused(self, job: Job, url: str, redirects: Sequence[str]) -> list[Action]:
        """The driver stopped at a hop :meth:`follows` refused: a loop fails, else a skip."""
        return self.settling.refused(job, url, redirects, self.failure)

    def response(
        self,
        job: Job,
        url: str,
        status: int,
        fields: Mapping[str, str],
        max_body: int | None,
    ) -> list[Action]:
        """A 2xx response gets its parser; a 304 walks the stored children; else a failure."""
        node = job.node
        node.status, node.final_url = status, url
        job.reading = False
        refusal = evidence.heard(job, status, fields)
        actions: list[Action] = []
        if status == 304:
            children = job.watch.not_modified(node, status)
            if children is not None:
                self.children.walk(job, children, actions)
                return actions
        if not 200 <= status < 300:
            node.add_problem("http-status", f"HTTP {status}", fatal=True)
            job.reading = refusal  # its body says whether bot protection answered
            return actions
        limits = self.state.limits
        if max_body is not None and 0 < max_body < limits.max_decompressed_bytes:
            limits = limits.replace(max_decompressed_bytes=max_body)
        content_type = _header(fields, "content-type")
        job.parser = self.choose(
            job,
            url,
            content_type,
            limits,
            lambda: self.parsers(self.spec(job, url, content_type, limits, _length(fields))),
        )
        node.last_modified = _header(fields, "last-modified")
        job.watch.begin(_header(fields, "etag"), node.last_modified)
        job.reading = True
        return actions

    def body(self, job: Job, chunk: bytes, expired: Expired | None = None) -> list[Action]:
        """A raw chunk: parsed (in slices under a deadline), its items through the gate."""
        state, node = self.state, job.node
        node.bytes += len(chunk)
        state.stats.bytes += len(chunk)
        parser = job.parser
        wanted = evidence.gather(job, chunk)
        if parser is None:
            job.reading = wanted
            return []
        job.watch.feed(chunk)
        if state.options.delivery.budget is not None:
            actions = self._feed_budgeted(job, parser, chunk, expired)
        else:
            items = _feed(job, parser, chunk, expired)
            actions = self.gate.emit(job, items) if items else []
        if expired is not None and not parser.done and expired():
            actions += state.overdue()  # the run's deadline may be what passed: a stop
            if state.stopped is None:
                timeout = state.options.timeouts.timeout
                node.add_problem("timeout", f"no complete answer within {timeout:g} s", fatal=True)
            job.reading = False
        elif node.bytes > parser.limits.wire_cap() and not parser.done:
            cap = parser.limits.wire_cap()
            node.add_problem(
                "limit-wire-bytes", f"more than {cap:,} bytes on the wire; rest ignored", fatal=True
            )
            job.reading = False
        elif parser.done:
            job.reading = False
        return actions

    def parsed(self, job: Job) -> list[Action]:
        """Items a parser working elsewhere has ready (between chunks, or after the last)."""
        parser = job.parser
        if parser is None:
            return []
        items = parser.feed(b"")
        actions = self.gate.emit(job, items) if items else []
        if parser.done:
            job.reading = False
        return actions

    def _feed_budgeted(
        self, job: Job, parser: BodyParser, chunk: bytes, expired: Expired | None
    ) -> list[Action]:
        """A run with a URL budget: feed and emit slice by slice, so the run stops within
        one slice of the budget instead of parsing the rest of a chunk (a 64 KiB read of
        gzip can hold 8,000 URLs)."""
        actions: list[Action] = []
        for start in range(0, len(chunk), BUDGET_SLICE):
            items = _feed(job, parser, chunk[start : start + BUDGET_SLICE], expired)
            if items:
                actions += self.gate.emit(job, items)
            if self.state.stopped is not None or parser.done or (expired is not None and expired()):
                break
        return actions

    def end(self, job: Job) -> list[Action]:
        """The body ended (or was not read): the parser flushed, the job settled."""
        job.reading = False
        actions = self._close_parser(job)
        return actions + self.settling.settle(job)

    def failure(
        self, job: Job, code: str, message: str, cannot_connect: bool, status: int | None
    ) -> list[Action]:
        """A cut body is fetched again, https falls back to http; else the job fails."""
        again = self.retried(job, code, message, cannot_connect)
        if again is not None:
            return again
        return self.failed(job, code, message, cannot_connect)

    def retried(
        self, job: Job, code: str, message: str, cannot_connect: bool
    ) -> list[Action] | None:
        """The fetch of a failure worth another try (None: none is)."""
        node, state = job.node, self.state
        job.reading = False
        if code == "body" and job.attempts < state.limits.body_retries and state.stopped is None:
            # A body cut by a lost connection: fetch it once more from its final URL. The
            # records of the cut attempt are out; the run's dedupe drops them this time.
            job.attempts += 1
            node.add_problem("body-retried", f"{message}; fetched again")
            job.parser = None
            node.urls = 0
            return [self.fetch(job, node.final_url or node.url, retry_connect=True)]
        if cannot_connect and job.fallback is not None:
            node.add_problem("https-unavailable", f"{message}; trying http")
            node.url, job.fallback = job.fallback, None
            state.visited.add(normalize_url(node.url) or node.url)
            return [self.fetch(job, node.url, retry_connect=True)]
        return None

    def failed(self, job: Job, code: str, message: str, cannot_connect: bool) -> list[Action]:
        """The job fails for good (a root that cannot connect: the site is unreachable)."""
        node = job.node
        node.add_problem(code, message, fatal=True)
        if cannot_connect and node is job.site.root:
            job.site.unreachable = message
        return self.end(job)

    def _close_parser(self, job: Job) -> list[Action]:
        """End of body (or of what arrived): flush the parser, copy its verdict to the node."""
        parser, node, state = job.parser, job.node, self.state
        if parser is None:
            return []
        job.parser = None
        # Any stop of the run (the deadline, a budget) cut the body: we stopped reading,
        # it did not break, so the parser's end-of-input errors are not the file's.
        cut = state.stopped is not None and not parser.done
        items = parser.close()
        # A budget stop drops what the parser still held; a deadline keeps what was read.
        keep = state.stopped is None or state.deadline_passed
        actions = self.gate.emit(job, items) if items and keep else []
        # A body the stop cut before its first element said what it is: no verdict
        # ("unknown" would read "not a sitemap": it is not finished, not failed).
        node.format = None if cut and parser.format == "unknown" else parser.format
        node.complete = parser.complete
        problems = [p for p in parser.problems if not p.fatal] if cut else parser.problems
        if any(p.fatal for p in node.problems):
            node.problems.extend(problems)  # the fetch failure came first: the cause
        else:
            node.problems[:0] = problems
        return actions


class FileJob:
    """The part of a local file or stdin: read at once (no request), a failure is a read
    error; the rest is a sitemap job's."""

    def __init__(self, sitemaps: SitemapJob) -> None:
        self.sitemaps = sitemaps

    def begin(self, job: Job) -> list[Action]:
        """Read the file (even in a stopped run: nothing is fetched)."""
        node, sitemaps = job.node, self.sitemaps
        job.parser = local_parser(sitemaps.spec(job, None, None, sitemaps.state.limits))
        job.reading = True
        ticket = job.ticket(sitemaps.state.token)
        return [Fetch(ticket, node.url, kind=node.kind, target=job.site.index)]

    def failure(
        self, job: Job, code: str, message: str, cannot_connect: bool, status: int | None
    ) -> list[Action]:
        """The file could not be read."""
        sitemaps = self.sitemaps
        again = sitemaps.retried(job, code, message, cannot_connect)
        if again is not None:
            return again
        message = f"cannot read {job.node.url}: {message}"
        return sitemaps.failed(job, "read", message, cannot_connect)

    def follows(self, job: Job, key: str) -> bool:
        return self.sitemaps.follows(job, key)

    def refused(self, job: Job, url: str, redirects: Sequence[str]) -> list[Action]:
        return self.sitemaps.refused(job, url, redirects)

    def response(
        self, job: Job, url: str, status: int, fields: Mapping[str, str], max_body: int | None
    ) -> list[Action]:
        return self.sitemaps.response(job, url, status, fields, max_body)

    def body(self, job: Job, chunk: bytes, expired: Expired | None = None) -> list[Action]:
        return self.sitemaps.body(job, chunk, expired)

    def parsed(self, job: Job) -> list[Action]:
        return self.sitemaps.parsed(job)

    def end(self, job: Job) -> list[Action]:
        return self.sitemaps.end(job)


def _feed(job: Job, parser: BodyParser, chunk: bytes, expired: Expired | None) -> list[Item]:
    """Feed a chunk; with a deadline, in slices of bounded work, the clock read between."""
    if expired is None:
        return parser.feed(chunk)
    items, job.slice = feed_in_slices(parser, chunk, job.slice, feed_size(job, chunk), expired)
    return items


def feed_size(job: Job, chunk: bytes) -> int:
    """The most raw bytes of the body to parse at once (see :data:`GZIP_SLICE`): decided
    at the body's first bytes (``chunk``), :data:`GZIP_SLICE` for gzip, else
    :data:`MAX_SLICE`. A driver that hands the core a wire chunk in parts of this size,
    and lets its other work run between two, keeps other sitemaps' deadlines honest
    while one chunk inflates to megabytes."""
    if job.slice_cap is None:
        gzip = sniff.is_gzip_prefix(chunk) is not False  # gzip, or still maybe
        job.slice_cap = GZIP_SLICE if gzip else MAX_SLICE
    return job.slice_cap


def feed_in_slices(
    parser: BodyParser, chunk: bytes, step: int, cap: int, expired: Expired
) -> tuple[list[Item], int]:
    """Feed ``chunk`` in slices of ``step`` raw bytes (at most ``cap``), reading the clock
    (``expired``) between two; the items, and the step for the next chunk.

    The step adapts to the output: it shrinks while a slice gives more than
    :data:`SLICE_OUTPUT` and doubles while one gives less than half of it. Used by the
    core and by the parse workers."""
    items: list[Item] = []
    start = 0
    step = min(step, cap)
    while start < len(chunk):
        before = parser.bytes_out
        items += parser.feed(chunk[start : start + step])
        start += step
        grown = parser.bytes_out - before
        if grown > SLICE_OUTPUT:  # gzip that expands a lot: smaller slices
            step = max(MIN_SLICE, step * SLICE_OUTPUT // grown)
        elif grown < SLICE_OUTPUT // 2:
            step = min(cap, step * 2)
        if parser.done or expired():
            break
    return items, step


def _header(fields: Mapping[str, str], name: str) -> str | None:
    """A header by lower-case name from a mapping that may use any case."""
    value = fields.get(name)
    if value is None:
        for key, found in fields.items():
            if key.lower() == name:
                return found
    return value


def _length(fields: Mapping[str, str]) -> int | None:
    """The Content-Length a response announced (None: absent or not a number)."""
    value = _header(fields, "content-length")
    if value is None or not value.strip().isdigit():
        return None
    return int(value)
