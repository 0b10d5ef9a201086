"""The Scrapy driver: Scrapy fetches, the discovery core decides (:class:`ScrapyDriver`).

Every rule of walking a site lives in :class:`~sitemap_reader.discovery.Discovery`, the
same core the aiohttp reader drives; this module turns its actions into Scrapy requests
and Scrapy's responses and failures into its events. What stays here is what only a
Scrapy crawl has: the callback rules, the ``sitemap_filter`` hook, hreflang alternates
as extra page requests, request priorities, log lines and crawl stats. The options come
from the settings (:mod:`sitemap_reader.scrapy.settings`).

Each robots.txt / sitemap request carries the core's ticket (a plain dict) in
``meta["sitemap_reader_sitemap"]``, so a ``JOBDIR`` crawl that resumes with requests of
an earlier process still gets them handled (the core rebuilds the job from the ticket).
Sitemap requests are ``dont_filter``: the core's "visited" rule decides (it also sees
the redirect hops Scrapy followed), and their priorities fall with discovery order, so
with one request at a time sitemaps are read first-in first-out, as the aiohttp reader
reads them at concurrency 1; first-seen duplicates then resolve the same way.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import ssl
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from scrapy import Request, signals
from scrapy.exceptions import CannotResolveHostError, CloseSpider, DownloadConnectionRefusedError
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import ConnectError, DNSLookupError
from twisted.internet.error import TimeoutError as TwistedTimeoutError

from sitemap_reader._words import stop_phrase, verdict_phrase
from sitemap_reader.discovery import (
    Action,
    Checkpoint,
    Discovery,
    Done,
    Emit,
    Fetch,
    Run,
    Schedule,
    SitemapNode,
    Stop,
    classify,
)
from sitemap_reader.discovery.targets import check_per_target
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Options
from sitemap_reader.options.doors import spelling
from sitemap_reader.records import Problem, UrlRecord
from sitemap_reader.scrapy.settings import ScrapyOptions
from sitemap_reader.scrapy.sites import TargetSites

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

logger = logging.getLogger("sitemap_reader.scrapy")
#: A Scrapy user names options by their settings.
SCRAPY = spelling("scrapy")

#: ``meta`` key of a page request: the record as a dict (its JSON shape, ``UrlRecord.to_dict``).
META_KEY: Final = "sitemap_reader"
#: ``meta`` key of a robots.txt / sitemap request: the core's ticket (a plain dict).
SITEMAP_META_KEY: Final = "sitemap_reader_sitemap"
#: ``meta`` key of a page request: the number of the target whose sitemap listed it (the
#: address guard judges a page by its own target's site, never by another's).
TARGET_META_KEY: Final = "sitemap_reader_target"
#: The finish reason of a crawl in which every target gave nothing (Scrapy's stats
#: ``finish_reason``; ``spider_closed`` handlers get it): a script can tell it from "finished".
FAILED_REASON: Final = "sitemap_reader_failed"
#: Page priority is ``int(score * PRIORITY_SCALE)``: 0 to 1000.
PRIORITY_SCALE: Final = 1000
#: Sitemaps and robots.txt outrank every page: discovery first, then pages best first.
SITEMAP_PRIORITY: Final = 2 * PRIORITY_SCALE
#: Sitemap priorities fall by one per job from SITEMAP_PRIORITY + this: first in, first out.
_SITEMAP_SPAN: Final = 1 << 30
#: Bytes per core.body() call: the core counts wire bytes and checks the deadline per call.
_CHUNK: Final = 1 << 16
#: Statuses that reach the callback, so the core sees them (3xx stay with Scrapy's
#: redirect middleware).
_STATUSES: Final = tuple(range(400, 600))
_CONNECT_ERRORS: Final = (
    ConnectError,
    ConnectionRefusedError,
    DownloadConnectionRefusedError,
    CannotResolveHostError,
)
#: The core's stats mirrored into Scrapy's, as ``sitemap_reader/<name>``.
_STATS: Final = {
    "sitemaps_ok": "sitemaps_ok",
    "sitemaps_failed": "sitemaps_failed",
    "sitemaps_skipped": "sitemaps_skipped",
    "urls_emitted": "urls",
    "urls_duplicate": "urls_duplicate",
    "urls_out_of_scope": "urls_out_of_scope",
    "bytes": "bytes",
}

Rule = tuple[re.Pattern[str], Callable[..., Any]]
RecordFilter = Callable[[Iterable[UrlRecord]], Iterable[UrlRecord]]
#: The spider's ``sitemap_request(record) -> Request | None`` hook.
RequestHook = Callable[[UrlRecord], "Request | None"]


def priority_of(score: float) -> int:
    """The Scrapy request priority of a page with this score (higher goes first).

    >>> priority_of(0.7217)
    721
    """
    return int(max(0.0, min(1.0, score)) * PRIORITY_SCALE)


def _describe(exc: BaseException) -> str:
    """A download failure in plain words, decided by its type (never its text)."""
    if isinstance(exc, HttpError):
        return f"HTTP {exc.response.status}"
    if isinstance(exc, CannotResolveHostError | DNSLookupError):
        return "cannot connect: name not found"
    if isinstance(exc, ConnectionRefusedError | DownloadConnectionRefusedError):
        return "cannot connect: connection refused"
    if _cannot_connect(exc):
        return "cannot connect: " + ("TLS handshake failed" if _tls_cause(exc) else "no connection")
    if isinstance(exc, TimeoutError | TwistedTimeoutError):
        return "timeout"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _cannot_connect(exc: BaseException) -> bool:
    """No connection at all (refused, unresolvable, TLS handshake failed): try http."""
    return _tls_cause(exc) or any(isinstance(c, _CONNECT_ERRORS) for c in _causes(exc))


def _tls_cause(exc: BaseException) -> bool:
    """A TLS handshake failed somewhere in the chain (Twisted's ResponseFailed holds its
    reasons as a list of Failures)."""
    for cause in _causes(exc):
        if _is_tls_error(cause):
            return True
        reasons = getattr(cause, "reasons", None)
        if isinstance(reasons, list) and any(_is_tls_error(r.value) for r in reasons):
            return True
    return False


def _causes(exc: BaseException) -> Iterator[BaseException]:
    cause: BaseException | None = exc
    while cause is not None:
        yield cause
        cause = cause.__cause__


def _is_tls_error(exc: object) -> bool:
    return isinstance(exc, ssl.SSLError) or type(exc).__module__.startswith("OpenSSL")


def _failure_code(exc: BaseException) -> tuple[str, bool]:
    """The core's failure code of a Scrapy download exception, and "cannot connect"."""
    if _cannot_connect(exc):
        return "connect", True
    if isinstance(exc, TimeoutError | TwistedTimeoutError):
        return "timeout", False
    return "download", False


class ScrapyDriver:
    """The core behind the mixin and the middleware; Scrapy does the fetching.

    ``start_requests()`` gives the robots.txt / sitemap requests of the targets; every
    response of those goes to ``on_response()``, every failure to ``on_exception()``; both
    yield further sitemap requests (``SITEMAP_META_KEY`` in their meta) and page requests.

    Never silent: once discovery is over (the middleware read every sitemap, or Scrapy went
    idle), :meth:`finish` logs an error naming each target that gave nothing; when none
    gave anything the spider closes with :data:`FAILED_REASON` instead of ``"finished"``.
    """

    def __init__(
        self,
        options: Options,
        scrapy: ScrapyOptions,
        crawler: Crawler,
        rules: Sequence[Rule],
        *,
        record_filter: RecordFilter | None = None,
        request_hook: RequestHook | None = None,
        callback: Callable[..., Any] | None = None,
        errback: Callable[..., Any] | None = None,
        verdict: bool = True,
    ) -> None:
        targets = [classify(text) for text in scrapy.targets]
        for target in targets:
            if target.kind in ("file", "stdin"):
                raise UsageError(f"a Scrapy crawl needs http(s) targets, not {target.text!r}")
        check_per_target(targets, options)
        self.options = options
        self.scrapy = scrapy
        self.core = Discovery(targets, options)
        #: Each target's own headers and proxy (``per_target``), kept on its site.
        self.sites = TargetSites(targets, options)
        self.seconds = options.timeouts.timeout
        self.crawler = crawler
        self.rules = rules
        self.record_filter = record_filter
        self.request_hook = request_hook
        self.callback = callback
        self.errback = errback
        self.maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self.finished = False
        if verdict:  # off where this process sees only part of the discovery (Redis)
            crawler.signals.connect(self._on_idle, signal=signals.spider_idle)

    @property
    def run(self) -> Run:
        """The run's tree and stats (live), as :attr:`SitemapReader.last_run` has them."""
        return self.core.run

    # -- events --------------------------------------------------------------------------

    def start_requests(self) -> Iterator[Request]:
        """One robots.txt or sitemap request per target (a site means its robots.txt)."""
        return self._perform(self.core.start())

    def on_response(self, response: Response) -> Iterator[Request]:
        """Requests discovered in a robots.txt or sitemap response."""
        ticket = response.meta.get(SITEMAP_META_KEY)
        if ticket is None:
            return iter(())
        core = self.core
        hops = list(response.meta.get("redirect_urls") or ())
        fields = {  # a repeated header (Set-Cookie) with all its values
            key.decode("latin-1").lower(): b", ".join(response.headers.getlist(key)).decode(
                "latin-1"
            )
            for key in response.headers
        }
        maxsize = int(response.meta.get("download_maxsize", self.maxsize) or 0)
        actions = core.response(
            ticket,
            url=response.url,
            status=response.status,
            response_headers=fields,
            redirects=[*hops[1:], response.url] if hops else (),
            max_body=maxsize or None,
        )
        target = ticket.get("target")
        deadline = time.monotonic() + self.seconds
        body = response.body
        for start in range(0, len(body), _CHUNK):
            if not core.reading(ticket):
                break
            piece = body[start : start + _CHUNK]
            actions += core.body(ticket, piece, lambda: time.monotonic() >= deadline)
        return self._perform([*actions, *core.end(ticket)], target)

    def on_exception(self, request: Request, exc: BaseException) -> Iterator[Request]:
        """Requests to try after a failed robots.txt / sitemap fetch (a fallback, guesses)."""
        ticket = request.meta.get(SITEMAP_META_KEY)
        if ticket is None:
            return iter(())
        code, cannot_connect = _failure_code(exc)
        logger.info("sitemap-reader: %s: %s", request.url, _describe(exc))
        actions = self.core.failure(ticket, code, _describe(exc), cannot_connect=cannot_connect)
        return self._perform(actions, ticket.get("target"))

    def on_failure(self, failure: Failure) -> Iterator[Request]:
        """:meth:`on_exception` for a Scrapy errback's failure."""
        request = getattr(failure, "request", None)
        if request is None or failure.value is None:
            return iter(())
        return self.on_exception(request, failure.value)

    def finish(self) -> None:
        """Discovery is over: the run's verdict (once), an error line per target that gave
        nothing, and the run's error when none gave anything."""
        if self.finished:
            return
        self.finished = True
        for _ in self._perform(self.core.finish()):  # a checkpoint at most: no requests
            pass
        run = self.core.run
        for verdict in run.verdicts.values():  # each target's, in the stats and the log (one
            # that gave nothing has its error line below)
            self._count(f"verdict/{verdict.kind}")
            logger.info("sitemap-reader: verdict: %s", verdict_phrase(verdict, named=True))
        for target, why in run.failed_targets.items():
            self._count("failed_targets")
            logger.error("sitemap-reader: nothing discovered for %s: %s", target, why)
        if run.error is not None:
            logger.error("sitemap-reader: no target gave anything; closing as %s", FAILED_REASON)

    def _on_idle(self) -> None:
        """Scrapy's ``spider_idle``: no request is left, so neither is any sitemap."""
        self.finish()
        if self.core.run.error is not None:
            raise CloseSpider(FAILED_REASON)

    # -- actions -------------------------------------------------------------------------

    def _perform(self, actions: list[Action], target: object = None) -> Iterator[Request]:
        """The requests of the core's actions; ``target`` is the number of the target
        whose response or failure they answer (its pages carry it)."""
        core = self.core
        for action in actions:
            if isinstance(action, Schedule):
                yield from self._perform(core.begin(action.ticket), target)
            elif isinstance(action, Fetch):
                yield self._request(action)
            elif isinstance(action, Emit):
                yield from self._pages(action.records, target)
            elif isinstance(action, Done):
                self._report(action.node)
            elif isinstance(action, Checkpoint):  # no state in a Scrapy run: nothing comes
                for _ in action.run():
                    pass
            elif isinstance(action, Stop):  # the sitemap responses still to come are ignored
                self._count(f"stopped/{action.stopped.kind}")
                logger.info("sitemap-reader: %s", stop_phrase(action.stopped, SCRAPY))
        self._sync_stats()

    def _request(self, fetch: Fetch) -> Request:
        ticket = fetch.ticket
        meta: dict[str, Any] = {
            SITEMAP_META_KEY: ticket,
            "depth_reset": True,
            "handle_httpstatus_list": list(_STATUSES),
            # CookiesMiddleware's jar of this target's sitemaps: a cookie one target's
            # site set never goes with another target's request to that site.
            "cookiejar": f"sitemap_reader:{fetch.target}",
        }
        sequence = int(ticket.get("job") or 0)
        request = Request(
            fetch.url,
            callback=self.callback,
            errback=self.errback,
            headers=dict(fetch.request_headers or {}) or None,
            priority=SITEMAP_PRIORITY + max(0, _SITEMAP_SPAN - sequence),
            meta=meta,
            dont_filter=True,
        )
        self.sites.apply(request, fetch.target)  # the target's own values, on its site only
        return request

    def _pages(self, records: list[UrlRecord], target: object) -> Iterator[Request]:
        """The filter hook, then one request per record (alternates last)."""
        kept: Iterable[UrlRecord] = records
        if self.record_filter is not None:
            try:
                kept = list(self.record_filter(records))
            except Exception as exc:  # the spider's hook: its failure costs these records only
                self._count("problems/sitemap-filter")
                logger.error("sitemap-reader: sitemap_filter failed: %s", _describe(exc))
                kept = []
            self._count("urls_filtered", len(records) - len(kept))
        for record in kept:
            yield from self._page(record, target)
        if self.scrapy.alternates:
            core = self.core
            for record in kept:
                for alternate in record.alternates:
                    if core.in_scope(alternate.url, record.sitemap) and core.seen.add(
                        alternate.url
                    ):
                        alternate_record = dataclasses.replace(record, url=alternate.url)
                        yield from self._page(alternate_record, target)

    def _page(self, record: UrlRecord, target: object) -> Iterator[Request]:
        """The page request of ``record``: the spider's ``sitemap_request`` hook's, else
        :meth:`page_request`'s. None drops the record; a hook that raises or returns
        something else costs that record only, with an error line naming it."""
        hook = self.request_hook
        if hook is None:
            request = self.page_request(record)
        else:
            try:
                request = hook(record)
                if request is not None and not isinstance(request, Request):
                    raise TypeError(f"returned {type(request).__name__}, not a Request or None")
            except Exception as exc:  # the spider's hook: its failure costs this record only
                self._count("problems/sitemap-request")
                logger.error(
                    "sitemap-reader: sitemap_request failed for %s: %s", record.url, _describe(exc)
                )
                return
            if request is None:
                self._count("urls_dropped_by_hook")
        if request is not None:
            if META_KEY in request.meta:  # discovery's page: the guard judges it by its target
                request.meta[TARGET_META_KEY] = target
            yield request

    def page_request(self, record: UrlRecord) -> Request | None:
        """The default request of a page: the callback of the first rule matching its URL
        (None when none does), its priority from the score, the record in its meta."""
        callback = next((cb for pattern, cb in self.rules if pattern.search(record.url)), None)
        if callback is None:
            self._count("urls_no_rule")
            return None
        # Sitemaps are bookkeeping, not link hops: a page starts at depth 0 (DEPTH_LIMIT
        # counts from it, as from a start URL; Scrapy >= 2.18 honours depth_reset).
        meta = {META_KEY: record.to_dict(), "depth_reset": True}
        return Request(record.url, callback=callback, priority=priority_of(record.score), meta=meta)

    # -- logs and stats ------------------------------------------------------------------

    def _report(self, node: SitemapNode) -> None:
        """A finished node: its problems and its verdict as log lines and stats."""
        url = node.final_url or node.url
        if node.kind == "guess" and node.skipped is not None:
            self._count("guesses_missed")
            logger.debug("sitemap-reader: no sitemap at %s (%s)", url, node.skipped)
            return
        if node.skipped is not None:
            logger.info("sitemap-reader: skipped %s: %s", node.url, node.skipped)
            return
        for problem in node.problems:
            self._count(f"problems/{problem.code}")
            level = logging.WARNING if problem.fatal else logging.INFO
            logger.log(level, "sitemap-reader: %s: %s", url, _problem_text(problem))
        if node.failed:
            logger.warning("sitemap-reader: %s failed: %s", url, node.reason)
        if node.kind == "robots":
            self._count("robots")
            if any(child.kind == "guess" for child in node.children):
                logger.info("sitemap-reader: %s lists no sitemap; trying well-known paths", url)

    def _count(self, key: str, count: int = 1) -> None:
        if count and self.crawler.stats is not None:
            self.crawler.stats.inc_value(f"sitemap_reader/{key}", count)

    def _sync_stats(self) -> None:
        stats = self.crawler.stats
        if stats is None:
            return
        mine = self.core.stats
        for field, name in _STATS.items():
            value = getattr(mine, field)
            if value:
                stats.set_value(f"sitemap_reader/{name}", value)


def _problem_text(problem: Problem) -> str:
    times = f" ({problem.count} times)" if problem.count > 1 else ""
    return f"{problem.code}: {problem.message}{times}"
