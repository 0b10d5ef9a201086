"""The core's sitemap and local-file jobs: begin, response, body, end, failure, settle.

Mixed into :class:`~sitemap_reader.discovery.Discovery` (see its theory of operation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from sitemap_reader.discovery.actions import Action, Done, Fetch
from sitemap_reader.discovery.children import ChildRules
from sitemap_reader.discovery.job import Job
from sitemap_reader.discovery.model import SitemapNode
from sitemap_reader.discovery.parsing import BodyParser, BodySpec, ParserFactory, local_parser
from sitemap_reader.discovery.rules import is_robots
from sitemap_reader.discovery.ways import PROBE_KINDS
from sitemap_reader.limits import Limits
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

Expired = Callable[[], bool]


class SitemapRules(ChildRules):
    """The events of a sitemap (or local file) job."""

    if TYPE_CHECKING:
        now: datetime
        parsers: ParserFactory

        def delay_for(self, url: str) -> float: ...

        deadline_passed: bool

        def overdue(self) -> list[Action]: ...

    def _begin(self, job: Job) -> list[Action]:
        node = job.node
        if node.kind == "robots":
            return self._robots_begin(job)
        if node.kind in ("file", "stdin"):
            job.parser = local_parser(self._spec(job, None, None, self.limits))
            job.reading = True
            return [Fetch(job.ticket(self.token), node.url, kind=node.kind, target=job.site.index)]
        if self.stopped is not None:
            node.skipped = self.stopped
            return self._settle(job)
        children = job.watch.plan(node)
        if children is not None:  # unchanged since the last run: walk what it listed
            actions: list[Action] = []
            self._walk(job, children, actions)
            return actions + self._settle(job)
        return [self._fetch(job, node.url, retry_connect=job.fallback is None)]

    def _spec(
        self,
        job: Job,
        url: str | None,
        content_type: str | None,
        limits: Limits,
        size: int | None = None,
    ) -> BodySpec:
        strict = self.options.walk.strict
        return BodySpec(url, content_type, strict, limits, self.now, job.shaper.build, size)

    def _fetch(self, job: Job, url: str, *, retry_connect: bool) -> Fetch:
        return Fetch(
            job.ticket(self.token),
            url,
            request_headers=job.watch.headers(),
            max_redirects=self.limits.max_redirects,
            retry_connect=retry_connect,
            target=job.site.index,
            spacing=self.delay_for(url),
        )

    def _refused(self, job: Job, url: str, redirects: Sequence[str]) -> list[Action]:
        node = job.node
        refused = normalize_url(url) or url
        own = [node.url, *redirects[:-1]]
        if refused in {normalize_url(u) or u for u in own}:  # back into its own chain
            chain = " -> ".join([node.url, *redirects])
            return self._failure(job, "redirects", f"redirect loop: {chain}", False, None)
        what = "robots.txt" if is_robots(url) else "an already visited sitemap"
        node.skipped = f"redirects to {what}: {url}"
        job.reading = False
        return self._settle(job)

    def _response(
        self,
        job: Job,
        url: str,
        status: int,
        fields: Mapping[str, str],
        max_body: int | None,
    ) -> list[Action]:
        node = job.node
        if node.kind == "robots":
            return self._robots_response(job, url, status)
        node.status, node.final_url = status, url
        job.reading = False
        actions: list[Action] = []
        if status == 304:
            children = job.watch.not_modified(node, status)
            if children is not None:
                self._walk(job, children, actions)
                return actions
        if not 200 <= status < 300:
            node.add_problem("http-status", f"HTTP {status}", fatal=True)
            return actions
        limits = self.limits
        if max_body is not None and 0 < max_body < limits.max_decompressed_bytes:
            limits = limits.replace(max_decompressed_bytes=max_body)
        content_type = _header(fields, "content-type")
        job.parser = self._html_parser(
            job,
            url,
            content_type,
            limits,
            lambda: self.parsers(self._spec(job, url, content_type, limits, _length(fields))),
        )
        job.node.last_modified = _header(fields, "last-modified")
        job.watch.begin(_header(fields, "etag"), job.node.last_modified)
        job.reading = True
        return actions

    def _body(self, job: Job, chunk: bytes, expired: Expired | None) -> list[Action]:
        node = job.node
        node.bytes += len(chunk)
        self.stats.bytes += len(chunk)
        if job.robots_body is not None:
            return self._robots_chunk(job, chunk)
        parser = job.parser
        if parser is None:
            job.reading = False
            return []
        job.watch.feed(chunk)
        if self.limits.max_urls is not None:
            actions = self._feed_budgeted(job, parser, chunk, expired)
        else:
            items = _feed(job, parser, chunk, expired)
            actions = self._emit(job, items) if items else []
        if expired is not None and not parser.done and expired():
            actions += self.overdue()  # the run's deadline may be what passed: a stop
            if self.stopped is None:
                timeout = self.options.timeouts.timeout
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

    def _parsed(self, job: Job) -> list[Action]:
        """Items a parser working elsewhere has ready (between chunks, or after the last)."""
        parser = job.parser
        if parser is None:
            return []
        items = parser.feed(b"")
        actions = self._emit(job, items) if items else []
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
                actions += self._emit(job, items)
            if self.stopped is not None or parser.done or (expired is not None and expired()):
                break
        return actions

    def _end(self, job: Job) -> list[Action]:
        if job.node.kind == "robots":
            return self._robots_end(job)
        job.reading = False
        actions = self._close_parser(job)
        return actions + self._settle(job)

    def _failure(
        self, job: Job, code: str, message: str, cannot_connect: bool, status: int | None
    ) -> list[Action]:
        node = job.node
        if node.kind == "robots":
            return self._robots_failure(job, code, message, cannot_connect)
        job.reading = False
        if code == "body" and job.attempts < self.limits.body_retries and self.stopped is None:
            # A body cut by a lost connection: fetch it once more from its final URL. The
            # records of the cut attempt are out; the run's dedupe drops them this time.
            job.attempts += 1
            node.add_problem("body-retried", f"{message}; fetched again")
            job.parser = None
            node.urls = 0
            return [self._fetch(job, node.final_url or node.url, retry_connect=True)]
        if cannot_connect and job.fallback is not None:
            node.add_problem("https-unavailable", f"{message}; trying http")
            node.url, job.fallback = job.fallback, None
            self.visited.add(normalize_url(node.url) or node.url)
            return [self._fetch(job, node.url, retry_connect=True)]
        if node.kind in ("file", "stdin"):
            code, message = "read", f"cannot read {node.url}: {message}"
        node.add_problem(code, message, fatal=True)
        if cannot_connect and node is job.site.root:
            job.site.unreachable = message
        return self._end(job)

    def _close_parser(self, job: Job) -> list[Action]:
        """End of body (or of what arrived): flush the parser, copy its verdict to the node."""
        parser, node = job.parser, job.node
        if parser is None:
            return []
        job.parser = None
        cut = self.deadline_passed and not parser.done  # we stopped reading, it did not break
        items = parser.close()
        # A budget stop drops what the parser still held; a deadline keeps what was read.
        keep = self.stopped is None or self.deadline_passed
        actions = self._emit(job, items) if items and keep else []
        node.format = parser.format
        node.complete = parser.complete
        problems = [p for p in parser.problems if not p.fatal] if cut else parser.problems
        if any(p.fatal for p in node.problems):
            node.problems.extend(problems)  # the fetch failure came first: the cause
        else:
            node.problems[:0] = problems
        return actions

    def _settle(self, job: Job) -> list[Action]:
        """The job ended: held records go out, the stats count it, the state is written."""
        node = job.node
        actions: list[Action] = []
        rest = job.shaper.release(node)
        if rest and not self._held(job, rest, actions):
            self._send(rest, actions)
        self._count(node)
        status_ok = node.unchanged is not None or 200 <= (node.status or 0) < 300
        complete = node.ok and status_ok and self.stopped is None
        checkpoint = job.watch.settle(node, complete)
        if checkpoint is not None:
            actions.append(checkpoint)
        job.finished = True
        self.jobs.pop(job.id, None)
        actions.append(Done(node, job.ticket(self.token)))
        actions += self._listed_settled(job)  # robots.txt may have led nowhere
        return actions

    def _count(self, node: SitemapNode) -> None:
        stats = self.stats
        stats.sitemaps_queued -= 1
        if node.kind in PROBE_KINDS and node.skipped is None and node.format in (None, "unknown"):
            node.skipped = f"not found ({node.reason})"  # a probe that missed: no failure
            return
        if node.skipped is not None:
            stats.sitemaps_skipped += 1
        elif node.ok:
            stats.sitemaps_ok += 1
        else:
            stats.sitemaps_failed += 1


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
