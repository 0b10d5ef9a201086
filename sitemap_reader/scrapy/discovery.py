"""The traversal behind the Scrapy doors: :class:`Options` and :class:`Discovery`.

Scrapy fetches; this module decides what to fetch and what a response means (see the
package docstring for the theory of operation). It never does I/O itself.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import ssl
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

from scrapy import Request
from scrapy.exceptions import CannotResolveHostError, DownloadConnectionRefusedError
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import ConnectError

from sitemap_reader.crawl.dedupe import UrlSet
from sitemap_reader.crawl.targets import WELL_KNOWN_PATHS, classify
from sitemap_reader.errors import UsageError
from sitemap_reader.limits import Limits
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import Item, SitemapParser
from sitemap_reader.parse.robots import parse_robots
from sitemap_reader.parse.scope import SCOPE_MODES, Scope, host_of
from sitemap_reader.rank import ScoreFunc
from sitemap_reader.records import Problem, UrlRecord

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

logger = logging.getLogger("sitemap_reader.scrapy")

#: ``meta`` key of a page request: the record as a dict (the JSON shape of DESIGN.md).
META_KEY: Final = "sitemap_reader"
#: ``meta`` key of a robots.txt / sitemap request: its traversal state (a plain dict).
SITEMAP_META_KEY: Final = "sitemap_reader_sitemap"
#: Page priority is ``int(score * PRIORITY_SCALE)``: 0 to 1000.
PRIORITY_SCALE: Final = 1000
#: Sitemaps and robots.txt outrank every page: discovery first, then pages best first.
SITEMAP_PRIORITY: Final = 2 * PRIORITY_SCALE
#: Bytes per feed() call: a sitemap is parsed in steps, so a limit stops it early.
_CHUNK: Final = 1 << 16
#: robots.txt answers with these statuses still reach the callback (4xx: no sitemaps).
_ROBOTS_STATUSES: Final = tuple(range(400, 600))
_CONNECT_ERRORS: Final = (
    ConnectError,
    ConnectionRefusedError,
    DownloadConnectionRefusedError,
    CannotResolveHostError,
)
_LIMITS = Limits()

Rule = tuple[re.Pattern[str], Callable[..., Any]]
RecordFilter = Callable[[Iterable[UrlRecord]], Iterable[UrlRecord]]


def priority_of(score: float) -> int:
    """The Scrapy request priority of a page with this score (higher goes first).

    >>> priority_of(0.7217)
    721
    """
    return int(max(0.0, min(1.0, score)) * PRIORITY_SCALE)


def compile_patterns(values: Iterable[str | re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    """Regexes from strings (compiled ones pass through)."""
    return tuple(re.compile(v) if isinstance(v, str) else v for v in values)


def split_targets(value: str | Iterable[str]) -> tuple[str, ...]:
    """A target list; a string (a spider argument) splits on commas and blank space."""
    if isinstance(value, str):
        return tuple(t for t in re.split(r"[\s,]+", value) if t)
    return tuple(value)


@dataclasses.dataclass(frozen=True, slots=True)
class Options:
    """What to discover and how: the mixin's attributes or the ``SITEMAP_READER_*`` settings."""

    targets: tuple[str, ...] = ()
    follow: tuple[re.Pattern[str], ...] = ()
    alternates: bool = False
    scope: str = "site"
    guess: bool = True
    strict: bool = False
    limits: Limits = _LIMITS
    score: ScoreFunc | None = None

    def __post_init__(self) -> None:
        if self.scope not in SCOPE_MODES:
            raise UsageError(f"scope must be one of {', '.join(SCOPE_MODES)}, not {self.scope!r}")

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Options:
        """Options from ``SITEMAP_READER_*`` settings; absent ones keep the library defaults."""
        limits = _LIMITS.replace(
            max_depth=settings.getint("SITEMAP_READER_MAX_DEPTH", _LIMITS.max_depth),
            max_sitemaps=settings.getint("SITEMAP_READER_MAX_SITEMAPS", _LIMITS.max_sitemaps),
            max_decompressed_bytes=settings.getint(
                "SITEMAP_READER_MAX_DECOMPRESSED_BYTES", _LIMITS.max_decompressed_bytes
            ),
            max_urls=settings.getint("SITEMAP_READER_MAX_URLS", 0) or None,
        )
        return cls(
            targets=split_targets(settings.get("SITEMAP_READER_TARGETS") or ()),
            follow=compile_patterns(settings.getlist("SITEMAP_READER_FOLLOW")),
            alternates=settings.getbool("SITEMAP_READER_ALTERNATES"),
            scope=settings.get("SITEMAP_READER_SCOPE") or "site",
            guess=settings.getbool("SITEMAP_READER_GUESS", True),
            strict=settings.getbool("SITEMAP_READER_STRICT"),
            limits=limits,
        )


def _state(
    kind: str, target: int, depth: int, hosts: Iterable[str], fallback: str | None = None
) -> dict[str, Any]:
    """The traversal state a robots.txt / sitemap request carries in its meta."""
    return {
        "kind": kind,  # robots | sitemap | guess
        "target": target,  # index in the target list: the sitemap budget is per target
        "depth": depth,  # index nesting
        "hosts": sorted(set(hosts)),  # the scope's site hosts
        "fallback": fallback,  # the http:// URL to try when https cannot connect
    }


def _describe(exc: BaseException) -> str:
    if isinstance(exc, HttpError):
        return f"HTTP {exc.response.status}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _cannot_connect(exc: BaseException) -> bool:
    """No connection at all (refused, unresolvable, TLS handshake failed): try http."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, _CONNECT_ERRORS) or _is_tls_error(cause):
            return True
        reasons = getattr(cause, "reasons", None)  # Twisted's ResponseFailed: a list of Failures
        if isinstance(reasons, list) and any(_is_tls_error(r.value) for r in reasons):
            return True
        cause = cause.__cause__
    return False


def _is_tls_error(exc: object) -> bool:
    return isinstance(exc, ssl.SSLError) or type(exc).__module__.startswith("OpenSSL")


class Discovery:
    """The traversal shared by the mixin and the middleware; Scrapy does the fetching.

    ``start_requests()`` gives the robots.txt / sitemap requests of the targets; every
    response of those goes to ``on_response()``, every failure to ``on_exception()``; both
    yield further sitemap requests (``SITEMAP_META_KEY`` in their meta) and page requests.
    State that must survive a resumed job travels in the requests; what lives here (the
    dedupe sets, the budgets) only saves work, Scrapy's dupefilter has the last word.
    """

    def __init__(
        self,
        options: Options,
        crawler: Crawler,
        rules: Sequence[Rule],
        *,
        record_filter: RecordFilter | None = None,
        callback: Callable[..., Any] | None = None,
        errback: Callable[..., Any] | None = None,
    ) -> None:
        self.options = options
        self.limits = options.limits
        self.crawler = crawler
        self.rules = rules
        self.record_filter = record_filter
        self.callback = callback
        self.errback = errback
        self.maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self.now = datetime.now(UTC)
        self.visited: set[str] = set()
        self.budget: dict[int, int] = {}
        self.seen = UrlSet()
        self.emitted = 0
        self._scopes: dict[tuple[str, ...], Scope] = {}
        self._limits: dict[int, Limits] = {}

    # -- requests ------------------------------------------------------------------------

    def start_requests(self) -> Iterator[Request]:
        """One robots.txt or sitemap request per target (a site means its robots.txt)."""
        for index, text in enumerate(self.options.targets):
            target = classify(text)
            if target.kind in ("file", "stdin"):
                raise UsageError(f"a Scrapy crawl needs http(s) targets, not {text!r}")
            kind = "sitemap" if target.kind == "sitemap" else "robots"
            fallback = target.with_scheme("http") if len(target.schemes) > 1 else None
            state = _state(kind, index, 0, [target.host or ""], fallback)
            request = self._sitemap_request(target.url, state)
            if request is not None:
                yield request

    def _sitemap_request(self, url: str, state: dict[str, Any]) -> Request | None:
        key = normalize_url(url) or url
        reason = self._skip_reason(key, state)
        if reason is not None:
            self._count("sitemaps_skipped")
            logger.info("sitemap-reader: skipped %s: %s", url, reason)
            return None
        self.visited.add(key)
        if state["kind"] != "robots":
            self.budget[state["target"]] = self.budget.get(state["target"], 0) + 1
        meta: dict[str, Any] = {SITEMAP_META_KEY: state, "depth_reset": True}
        if state["kind"] == "robots":
            meta["handle_httpstatus_list"] = list(_ROBOTS_STATUSES)
        return Request(
            url,
            callback=self.callback,
            errback=self.errback,
            priority=SITEMAP_PRIORITY,
            meta=meta,
        )

    def _skip_reason(self, key: str, state: dict[str, Any]) -> str | None:
        limits = self.limits
        if key in self.visited:
            return "already requested"
        if state["depth"] > limits.max_depth:
            return f"deeper than max_depth={limits.max_depth}"
        if state["kind"] != "robots" and self.budget.get(state["target"], 0) >= limits.max_sitemaps:
            return f"over max_sitemaps={limits.max_sitemaps}"
        return None

    def _follows(self, url: str) -> bool:
        follow = self.options.follow
        if not follow or any(p.search(url) for p in follow):
            return True
        self._count("sitemaps_not_followed")
        logger.debug("sitemap-reader: not following %s (sitemap_follow)", url)
        return False

    # -- responses -----------------------------------------------------------------------

    def on_response(self, response: Response) -> Iterator[Request]:
        """Requests discovered in a robots.txt or sitemap response."""
        state = response.meta.get(SITEMAP_META_KEY)
        if state is None:
            return
        if state["kind"] == "robots":
            yield from self._on_robots(response, state)
        elif not 200 <= response.status < 300:
            yield from self._failed(response.url, state, f"HTTP {response.status}")
        else:
            yield from self._on_sitemap(response, state)

    def on_exception(self, request: Request, exc: BaseException) -> Iterator[Request]:
        """Requests to try after a failed robots.txt / sitemap fetch (a fallback, guesses)."""
        state = request.meta.get(SITEMAP_META_KEY)
        if state is None:
            return iter(())
        answered = isinstance(exc, HttpError)
        connect = not answered and _cannot_connect(exc)
        return self._failed(request.url, state, _describe(exc), connect, answered=answered)

    def on_failure(self, failure: Failure) -> Iterator[Request]:
        """:meth:`on_exception` for a Scrapy errback's failure."""
        request = getattr(failure, "request", None)
        if request is None or failure.value is None:
            return iter(())
        return self.on_exception(request, failure.value)

    def _failed(
        self,
        url: str,
        state: dict[str, Any],
        reason: str,
        connect: bool = False,
        *,
        answered: bool = True,
    ) -> Iterator[Request]:
        """A fetch failed: log it, then fall back to http or to the well-known paths.

        ``connect``: no connection could be made; ``answered``: the server sent a status.
        A bare domain's https URL without any answer (refused, TLS failed, connection
        lost) is retried over http; an unreachable site gets no well-known path probes.
        """
        kind = state["kind"]
        if kind == "guess":
            self._count("guesses_missed")
            logger.debug("sitemap-reader: no sitemap at %s (%s)", url, reason)
            return
        if not answered and state["fallback"]:
            logger.info("sitemap-reader: %s: %s; trying http", url, reason)
            retry = state | {"fallback": None}
            request = self._sitemap_request(state["fallback"], retry)
            if request is not None:
                yield request
            return
        self._count("robots_failed" if kind == "robots" else "sitemaps_failed")
        self._count(f"problems/{'connect' if connect else 'fetch'}")
        logger.warning("sitemap-reader: %s failed: %s", url, reason)
        if kind == "robots" and not connect:
            yield from self._guesses(url, state)

    def _on_robots(self, response: Response, state: dict[str, Any]) -> Iterator[Request]:
        self._count("robots")
        status = response.status
        listed: Sequence[str] = ()
        if 200 <= status < 300:
            cap = self.limits.max_robots_bytes
            listed = parse_robots(response.body[:cap], response.url, max_bytes=cap).sitemaps
        elif status >= 500:
            self._count("problems/robots-status")
            logger.warning("sitemap-reader: %s: HTTP %d", response.url, status)
        hosts = [*state["hosts"], host_of(response.url) or ""]  # it vouches for its sitemaps
        child = _state("sitemap", state["target"], 0, hosts)
        if not listed:
            yield from self._guesses(response.url, child)
        for url in listed:
            request = self._sitemap_request(url, child) if self._follows(url) else None
            if request is not None:
                yield request

    def _guesses(self, robots_url: str, state: dict[str, Any]) -> Iterator[Request]:
        if not self.options.guess:
            logger.info("sitemap-reader: %s lists no sitemap", robots_url)
            return
        logger.info("sitemap-reader: %s lists no sitemap; trying well-known paths", robots_url)
        guess = state | {"kind": "guess", "depth": 0, "fallback": None}
        for path in WELL_KNOWN_PATHS:
            request = self._sitemap_request(urljoin(robots_url, path), guess)
            if request is not None:
                yield request

    def _on_sitemap(self, response: Response, state: dict[str, Any]) -> Iterator[Request]:
        self._count("sitemaps")
        content_type = response.headers.get("Content-Type")
        parser = SitemapParser(
            response.url,
            content_type.decode("latin-1") if content_type else None,
            strict=self.options.strict,
            limits=self._limits_for(response),
            now=self.now,
        )
        scope = self._scope(state["hosts"])
        child = _state("sitemap", state["target"], state["depth"] + 1, state["hosts"])
        body = response.body
        for start in range(0, len(body), _CHUNK):
            yield from self._items(parser.feed(body[start : start + _CHUNK]), scope, child)
            if parser.done:
                break
        yield from self._items(parser.close(), scope, child)
        self._report(response.url, parser, quiet=state["kind"] == "guess")

    def _limits_for(self, response: Response) -> Limits:
        """Our limits, the decompression cap lowered to the download size cap."""
        maxsize = int(response.meta.get("download_maxsize", self.maxsize) or 0)
        cap = self.limits.max_decompressed_bytes
        if maxsize <= 0 or maxsize >= cap:
            return self.limits
        limits = self._limits.get(maxsize)
        if limits is None:
            limits = self._limits[maxsize] = self.limits.replace(max_decompressed_bytes=maxsize)
        return limits

    def _scope(self, hosts: Sequence[str]) -> Scope:
        key = tuple(hosts)
        scope = self._scopes.get(key)
        if scope is None:
            scope = self._scopes[key] = Scope(self.options.scope, [h for h in hosts if h])
        return scope

    def _report(self, url: str, parser: SitemapParser, *, quiet: bool) -> None:
        """Log the parser's problems; count them in the crawl stats."""
        if quiet and parser.format == "unknown":  # a well-known path without a sitemap
            self._count("guesses_missed")
            logger.debug("sitemap-reader: no sitemap at %s", url)
            return
        if not parser.complete:
            self._count("sitemaps_incomplete")
        for problem in parser.problems:
            self._count(f"problems/{problem.code}")
            level = logging.WARNING if problem.fatal else logging.INFO
            logger.log(level, "sitemap-reader: %s: %s", url, _problem_text(problem))

    # -- records -------------------------------------------------------------------------

    def _items(self, items: list[Item], scope: Scope, child: dict[str, Any]) -> Iterator[Request]:
        records: list[UrlRecord] = []
        for item in items:
            if isinstance(item, UrlRecord):
                records.append(item)
                continue
            request = self._sitemap_request(item.url, child) if self._follows(item.url) else None
            if request is not None:
                yield request
        if records:
            yield from self._pages(records, scope)

    def _pages(self, records: list[UrlRecord], scope: Scope) -> Iterator[Request]:
        """Scope, score, the filter hook, then one request per new URL (alternates last)."""
        kept = [r for r in records if scope.allows(r.url, r.sitemap)]
        self._count("urls_out_of_scope", len(records) - len(kept))
        score = self.options.score
        if score is not None:
            kept = [dataclasses.replace(r, score=score(r, self.now)) for r in kept]
        if self.record_filter is not None:
            before = len(kept)
            kept = list(self.record_filter(kept))
            self._count("urls_filtered", before - len(kept))
        for record in kept:
            yield from self._page(record)
        if self.options.alternates:
            for record in kept:
                for alternate in record.alternates:
                    if scope.allows(alternate.url, record.sitemap):
                        yield from self._page(dataclasses.replace(record, url=alternate.url))

    def _page(self, record: UrlRecord) -> Iterator[Request]:
        cap = self.limits.max_urls
        if cap is not None and self.emitted >= cap:
            self._count("urls_over_max")
            return
        callback = next((cb for pattern, cb in self.rules if pattern.search(record.url)), None)
        if callback is None:
            self._count("urls_no_rule")
            return
        if not self.seen.add(record.url):
            self._count("urls_duplicate")
            return
        self.emitted += 1
        self._count("urls")
        # Sitemaps are bookkeeping, not link hops: a page starts at depth 0 (DEPTH_LIMIT
        # counts from it, as from a start URL; Scrapy >= 2.18 honours depth_reset).
        meta = {META_KEY: record.to_dict(), "depth_reset": True}
        yield Request(record.url, callback=callback, priority=priority_of(record.score), meta=meta)

    def _count(self, key: str, count: int = 1) -> None:
        if count and self.crawler.stats is not None:
            self.crawler.stats.inc_value(f"sitemap_reader/{key}", count)


def _problem_text(problem: Problem) -> str:
    times = f" ({problem.count} times)" if problem.count > 1 else ""
    return f"{problem.code}: {problem.message}{times}"
