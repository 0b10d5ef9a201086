"""HTTP for the crawler: the aiohttp session, retries, redirects, time budgets, streaming.

Everything that knows about aiohttp lives here. Its exceptions never leave this module:
they become :class:`FetchFailed` (a :class:`~sitemap_reader.errors.FetchError`) with a
stable ``code``, which the traversal records as a Problem on the sitemap's node.

Theory of operation
-------------------
* One ``ClientSession`` per :class:`~sitemap_reader.crawl.SitemapReader`, with
  ``auto_decompress=False``: bodies reach the parser exactly as sent (gzip included) and
  the parse core does the one capped gunzip for every case (.gz files, Content-Encoding,
  double gzip, lying headers).
* Redirects are followed by hand (``allow_redirects=False``) so the traversal can refuse
  a hop that lands on a sitemap it has already fetched *before* requesting it, and so the
  robots.txt limit (5) and the sitemap limit (10) are separate.
* One attempt is one request. aiohttp resends an idempotent request once, silently,
  when the connection drops before the answer (RFC 9112 section 9.3.1 allows it on a
  reused connection); our sessions carry the :func:`single_send` middleware, which turns
  that drop into an error aiohttp does not resend, so the retry below is the only one.
* Retries (408, 429, 500, 502, 503, 504, resets, socket timeouts) use full-jitter
  exponential backoff; ``Retry-After`` (seconds or HTTP date) replaces the backoff when
  it is within ``Limits.max_retry_after`` and ends the fetch when it is longer. A wait
  the server asks for counts against the per-sitemap budget (``timeout``): one longer
  than what is left of it ends the fetch at once, so a server that answers
  ``Retry-After`` to everything costs each sitemap one budget, not retries x the wait. Once a
  body has started, the fetcher retries nothing: its records are already out, and a body
  that ends early keeps them (the failure becomes a problem). The traversal fetches a
  body cut by a lost connection once more (``Limits.body_retries``; the run's dedupe
  drops what was already sent). A host whose sitemaps keep failing with retryable
  statuses gets single attempts (``Limits.max_host_storm_failures``).
* Credentials stay on their site: the user's ``headers`` (``--header``: cookies,
  ``Authorization``) go only to hosts of the target's own site, decided per request and
  per redirect hop: the target's host, its www twin and their subdomains, as in the
  ``site`` scope, but never a host that cross-submits in robots.txt (a site's robots.txt
  cannot claim another's credentials). A hop or a child elsewhere is sent without them;
  ``header_hosts="any"`` sends them everywhere. A target without a host (a file) has no
  site: its children get none. A target's own proxy (``per_target``) carries the requests
  to its site only. The cookies a site sets are kept per target (the reader's sessions
  keep none), so one target's site never has another target's requests carry them.
* Trust is per site: a target's typed name that may resolve to a private address, and
  the proxy it goes through, are reached by a session without the name guard, used for
  that target's own requests only (:class:`Fetcher`, ``trust``).
* SSRF: a guarded session (:mod:`~sitemap_reader.crawl.resolver`) refuses non-public
  addresses in its resolver, and :meth:`Fetcher._check_address` refuses non-public IP
  literals (which never reach a resolver) before every request and redirect hop.
* Politeness: a :class:`Pacer` spaces the requests to one host by the delay the core
  puts on each :class:`~sitemap_reader.discovery.Fetch` (``--delay``, robots.txt
  ``Crawl-delay``); every request counts, retries and redirect hops included, and the
  delay runs from the previous request's answer (its connect time does not shorten the
  gap the server sees). Slots are reserved in the order requests ask, so concurrent jobs
  of one host queue up, and the wait pauses the per-sitemap deadline like a backoff does.
* The user's own session (``SitemapReader(session=...)``): its connector, cookies,
  proxy and timeouts are the user's; our retries, redirect handling, deadlines, caps
  and the literal-address checks still apply per request and hop (the name-level
  guard lives in a connector's resolver, which is then the user's to set). Its
  middlewares are its own too: without :func:`single_send` among them, aiohttp's silent
  resend after a dropped connection stays.
* Time: aiohttp enforces the connect and the per-read timeouts; :class:`Deadline` is the
  per-sitemap budget. It restarts with each attempt and pauses while we wait on purpose
  (our backoff, the pacing delay, or a slow consumer holding the output queue), so only
  the server's time counts, and a ``Retry-After`` wait is the server's time.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import errno
import random
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http.cookies import BaseCookie
from types import TracebackType
from typing import Final, Protocol

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from sitemap_reader.discovery.addresses import (
    AddressPolicy,
    BlockedAddress,
    SiteTrust,
    check_numeric_host,
)
from sitemap_reader.discovery.targets import site_scope
from sitemap_reader.errors import FetchError, UsageError
from sitemap_reader.options import Options
from sitemap_reader.parse.scope import Scope

#: Statuses worth another attempt: timeouts, rate limiting and transient server errors.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Statuses we follow as redirects (with a Location header).
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: Read size: 64 KiB keeps each parser.feed() call short and memory flat.
CHUNK_SIZE = 64 * 1024


class FetchFailed(FetchError):
    """A fetch that failed for good, with a stable ``code`` for the problem it becomes.

    Codes: ``connect`` (includes DNS and TLS), ``blocked`` (a private address while
    ``allow_private`` is off), ``timeout``, ``reset``, ``body`` (the body ended early),
    ``redirects`` (too many, or a bad Location), ``retry-after`` (the server asked us to
    wait longer than the cap), ``url`` (not an http(s) URL), ``http-status`` (a final
    error status, set by the traversal).
    """

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    @property
    def cannot_connect(self) -> bool:
        """True when no connection could be made at all (the https -> http fallback case)."""
        return self.code in ("connect", "blocked")


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), or None.

    >>> retry_after_seconds("120")
    120.0
    >>> retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT",
    ...                     datetime(2015, 10, 21, 7, 28, tzinfo=UTC))
    10.0
    >>> retry_after_seconds("soon") is None
    True
    """
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def backoff_delay(attempt: int, base: float, cap: float, rand: Callable[[], float]) -> float:
    """Full-jitter exponential backoff: uniform(0, min(cap, base * 2**attempt))."""
    return rand() * min(cap, base * float(1 << attempt))


class Deadline:
    """A per-sitemap time budget that can pause while we wait on purpose.

    Wraps ``asyncio.timeout``: when the budget runs out the current await is cancelled
    and the ``async with`` block raises ``TimeoutError`` (check :attr:`expired`).
    """

    def __init__(self, seconds: float | None) -> None:
        self._seconds = seconds
        self._remaining = seconds
        self._timeout = asyncio.timeout(None)

    async def __aenter__(self) -> Deadline:
        await self._timeout.__aenter__()
        self.restart()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._timeout.__aexit__(kind, exc, tb)

    @property
    def expired(self) -> bool:
        """True once the budget ran out (the block then raises TimeoutError)."""
        return self._timeout.expired()

    def passed(self) -> bool:
        """True once the budget ran out, read from the loop's clock (for code that runs
        without awaiting, such as a long parse: the timeout itself fires only at an await)."""
        when = self._timeout.when()
        return when is not None and asyncio.get_running_loop().time() >= when

    def left(self) -> float | None:
        """Seconds left of the budget while the clock runs (None: no budget, or paused)."""
        when = self._timeout.when()
        return None if when is None else max(0.0, when - asyncio.get_running_loop().time())

    def restart(self) -> None:
        """Start the full budget again (a new attempt)."""
        self._remaining = self._seconds
        self.resume()

    def pause(self) -> None:
        """Stop the clock (backoff, or waiting for the consumer)."""
        when = self._timeout.when()
        if when is not None:
            self._remaining = max(0.0, when - asyncio.get_running_loop().time())
            self._timeout.reschedule(None)

    def resume(self) -> None:
        """Start the clock again with what was left."""
        if self._remaining is not None and not self._timeout.expired():
            self._timeout.reschedule(asyncio.get_running_loop().time() + self._remaining)

    def end_now(self) -> None:
        """Nothing is left (the run stopped): the current await is cut at once; a paused
        clock (a producer handing records to the consumer) ends as soon as it runs again,
        so what it hands over is never cut."""
        self._remaining = 0.0
        if self._timeout.when() is not None and not self._timeout.expired():
            self._timeout.reschedule(asyncio.get_running_loop().time())


#: An HTTP header name (RFC 9110 token characters).


#: Headers of a user's own session that aiohttp would send to every host.
_CREDENTIALS = ("Authorization", "Cookie")


def check_session(session: aiohttp.ClientSession | None, hosts: str) -> None:
    """Refuse a user's ``session`` whose default headers carry credentials (aiohttp would
    send them to every host), unless the user's headers may go to ``any`` host."""
    if session is None or hosts != "site":
        return
    for name in _CREDENTIALS:
        if name in session.headers:
            raise UsageError(
                f"the session's default {name} header would go to every host: pass it "
                "as headers= (kept on the target's site), or set header_hosts='any'"
            )


class _Dropped(aiohttp.ClientConnectionError):
    """The connection closed before the answer (the error :func:`single_send` raises)."""


async def single_send(
    request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
) -> aiohttp.ClientResponse:
    """A client middleware: a request whose connection drops is not sent again.

    aiohttp resends an idempotent request once when it meets ``ServerDisconnectedError``
    or ``ClientOSError`` (and only those), so they leave here as :class:`_Dropped`, a
    ``ClientConnectionError`` it passes on: our own retry counts that attempt.
    """
    try:
        return await handler(request)
    except aiohttp.ClientConnectorError:
        raise  # no connection was made (a ClientOSError too): aiohttp never resends these
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
        raise _Dropped(_describe(exc)) from exc


class Pacing(Protocol):
    """What the fetcher asks of a pacer: :class:`Pacer` in one process, or
    :class:`~sitemap_reader.crawl.budget.RedisPacer` across processes (``host_budget``)."""

    async def wait(self, host: str, gap: float) -> None: ...

    def answered(self, host: str) -> None: ...

    async def hold(self, host: str, seconds: float) -> None: ...


class Pacer:
    """The least time between two requests to one host (see the module doc).

    ``wait(host, gap)`` reserves the host's next slot at once (no await in between, so
    concurrent callers get successive slots) and sleeps until it comes; ``answered(host)``
    moves the host's mark to the moment a response (or a failure) came back, so the time
    a request spent connecting never shortens the gap the server sees before the next.
    """

    def __init__(self) -> None:
        self._last: dict[str, float] = {}  # host -> start of its latest request (reserved)
        self._held: dict[str, float] = {}  # host -> no request before this moment

    async def wait(self, host: str, gap: float) -> None:
        """Sleep until ``gap`` seconds passed since the previous request to ``host``
        (and any hold on it ended).

        Every request is noted, with a delay or not: a delay learnt from robots.txt
        counts from the robots.txt request itself."""
        now = asyncio.get_running_loop().time()
        last = self._last.get(host)
        start = now if last is None or gap <= 0 else max(now, last + gap)
        start = max(start, self._held.get(host, start))
        self._last[host] = start
        if start > now:
            await asyncio.sleep(start - now)

    async def hold(self, host: str, seconds: float) -> None:
        """No request to ``host`` for ``seconds`` from now (a server asked to wait)."""
        until = asyncio.get_running_loop().time() + seconds
        self._held[host] = max(self._held.get(host, until), until)

    def answered(self, host: str) -> None:
        """A request to ``host`` has its answer: the next one counts its delay from now
        (or from a later slot already reserved)."""
        now = asyncio.get_running_loop().time()
        self._last[host] = max(self._last.get(host, now), now)


def build_session(
    options: Options, resolver: AbstractResolver | None = None
) -> aiohttp.ClientSession:
    """A session of a reader: bounded pool, our timeouts, no transparent gunzip.

    ``resolver`` is the connector's resolver (the SSRF guard's
    :class:`~sitemap_reader.crawl.resolver.PublicOnlyResolver` for guarded sites).
    ``trust_env`` lets aiohttp read ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` (and
    ``~/.netrc``) from the environment.
    """
    parallelism, timeouts = options.parallelism, options.timeouts
    connector = aiohttp.TCPConnector(
        limit=parallelism.concurrency,
        limit_per_host=parallelism.per_host,
        ttl_dns_cache=300,
        resolver=resolver,
    )
    timeout = aiohttp.ClientTimeout(
        total=None, sock_connect=timeouts.connect_timeout, sock_read=timeouts.read_timeout
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        auto_decompress=False,
        headers={"User-Agent": options.politeness.user_agent, "Accept-Encoding": "gzip"},
        trust_env=options.network.trust_env,
        middlewares=(single_send,),
        cookie_jar=aiohttp.DummyCookieJar(),  # each target's fetcher keeps its own
    )


class Answer(Protocol):
    """A client's answer to one request (no redirect followed), its body still to stream."""

    @property
    def status(self) -> int: ...

    @property
    def url(self) -> str: ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Case-insensitive; a repeated name (Set-Cookie) appears once per value in
        ``items()``."""
        ...

    def cookies(self) -> BaseCookie[str]:
        """The cookies the answer sets."""
        ...

    def chunks(self, size: int) -> AsyncGenerator[bytes, None]:
        """The raw body (as sent: no decoding); failures are :class:`FetchFailed`."""
        ...

    def release(self) -> None:
        """Give the connection back (or close it when the body was not read)."""
        ...


class Client(Protocol):
    """What the fetcher asks of an HTTP client: one GET, no redirect followed, no body
    decoded, every name resolved through the reader's resolver (the guard's, unless
    ``trusted``). Failures are :class:`SendFailed`. Our retries, redirects, caps, deadlines
    and pacing sit above it, the same for every client."""

    #: The client's name, as the ``client`` option spells it (``aiohttp``, ``browser``).
    name: str

    async def send(
        self,
        url: str,
        *,
        trusted: bool,
        sent: Mapping[str, str] | None,
        via: str | None,
        cookies: BaseCookie[str] | None,
    ) -> Answer:
        """GET ``url`` with the headers ``sent``, through the proxy ``via`` (None:
        none); ``trusted``: a name the target's site trusts, or a request through a proxy,
        goes without the name guard."""
        ...

    async def close(self) -> None: ...


class SendFailed(Exception):
    """A request that got no answer: what it becomes (``failed``), whether another
    attempt is worth it, and whether no connection was made at all (``connecting``: not
    retried when the fetch has an http fallback)."""

    def __init__(self, failed: FetchFailed, *, retryable: bool, connecting: bool) -> None:
        super().__init__(failed.message)
        self.failed = failed
        self.retryable = retryable
        self.connecting = connecting


@dataclass(slots=True, eq=False)
class Response:
    """The final response of a fetch (after redirects), with its body still to stream.

    ``refused`` is set (and there is no body) when a redirect hop was refused by the
    caller, e.g. because it leads to a sitemap that was already fetched.
    """

    url: str
    status: int
    content_type: str | None
    redirects: tuple[str, ...]
    refused: str | None = None
    _raw: Answer | None = None

    async def chunks(self, size: int = CHUNK_SIZE) -> AsyncGenerator[bytes, None]:
        """The raw body in chunks; network failures become :class:`FetchFailed`."""
        if self._raw is None:
            return
        async with contextlib.aclosing(self._raw.chunks(size)) as body:
            async for chunk in body:
                yield chunk

    @property
    def headers(self) -> Mapping[str, str]:
        """The final response's headers (case-insensitive; empty without a response)."""
        return {} if self._raw is None else self._raw.headers

    def header(self, name: str) -> str | None:
        """A header of the final response (None when absent, or without a response)."""
        return None if self._raw is None else self._raw.headers.get(name)

    def release(self) -> None:
        """Return the connection to the pool (or close it if the body was not read)."""
        if self._raw is not None:
            self._raw.release()


class AiohttpAnswer:
    """An aiohttp response as an :class:`Answer`."""

    __slots__ = ("_raw",)

    def __init__(self, raw: aiohttp.ClientResponse) -> None:
        self._raw = raw

    @property
    def status(self) -> int:
        return self._raw.status

    @property
    def url(self) -> str:
        return str(self._raw.url)

    @property
    def headers(self) -> Mapping[str, str]:
        return self._raw.headers

    def cookies(self) -> BaseCookie[str]:
        return self._raw.cookies

    async def chunks(self, size: int) -> AsyncGenerator[bytes, None]:
        try:
            async for chunk in self._raw.content.iter_chunked(size):
                yield chunk
        except aiohttp.ClientPayloadError as exc:
            raise FetchFailed("body", f"body ended early: {_describe(exc)}") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise FetchFailed("body", f"connection lost in body: {_describe(exc)}") from exc
        except TimeoutError as exc:
            raise FetchFailed("timeout", "read timeout in body") from exc

    def release(self) -> None:
        self._raw.release()


class AiohttpClient:
    """The aiohttp client: the guarded session (its resolver refuses non-public
    addresses) and the open one, for trusted names and proxied requests. A user's own
    session is both."""

    name = "aiohttp"

    def __init__(
        self, session: aiohttp.ClientSession, open_session: aiohttp.ClientSession | None = None
    ) -> None:
        self._session = session
        self._open = open_session or session

    async def send(
        self,
        url: str,
        *,
        trusted: bool,
        sent: Mapping[str, str] | None,
        via: str | None,
        cookies: BaseCookie[str] | None,
    ) -> Answer:
        session = self._open if trusted else self._session
        try:
            raw = await session.get(
                url, allow_redirects=False, headers=sent or None, proxy=via, cookies=cookies
            )
        except (aiohttp.ClientError, TimeoutError, ValueError, OSError) as exc:
            retry, connecting = _retryable(exc), _is_connect_error(exc)
            raise SendFailed(_failure(exc), retryable=retry, connecting=connecting) from exc
        return AiohttpAnswer(raw)

    async def close(self) -> None:
        """The sessions are the reader's (or the user's): it closes them."""


#: What an OS error number means to someone who reads a failure line.
_ERRNO_WORDS: Final = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.ECONNABORTED: "connection reset",
    errno.EPIPE: "connection reset",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "network unreachable",
    errno.ETIMEDOUT: "connect timeout",
}
#: OpenSSL's verify code of a certificate for another host.
_HOSTNAME_MISMATCH: Final = 62


def _describe(exc: BaseException) -> str:
    """An exception of aiohttp, the OS or SSL in plain words, decided by its type, its
    errno or its OpenSSL reason code (never by its text), with the server it names: this
    is the one place where foreign errors become our words, so no layer above reads an
    exception's text back. One we do not know keeps its type and text (for a bug report).

    >>> _describe(ConnectionRefusedError(errno.ECONNREFUSED, "refused"))
    'connection refused'
    """
    if isinstance(exc, _Dropped):
        return str(exc)  # the drop aiohttp reported, described once
    words = _plain(exc)
    if words is None:
        text = str(exc).strip()
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    server = _server_of(exc)
    return f"{words} ({server})" if server else words


def _plain(exc: BaseException) -> str | None:
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        cause = exc.certificate_error
        wrong_host = getattr(cause, "verify_code", None) == _HOSTNAME_MISMATCH
        return "certificate invalid (wrong host)" if wrong_host else "certificate invalid"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "name not found"
    ssl_error = exc if isinstance(exc, ssl.SSLError) else getattr(exc, "os_error", None)
    if isinstance(exc, aiohttp.ClientSSLError) or isinstance(ssl_error, ssl.SSLError):
        reason = getattr(ssl_error, "reason", None)
        return "TLS handshake failed" + (
            " (not HTTPS?)" if reason == "WRONG_VERSION_NUMBER" else ""
        )
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "connection reset (the server disconnected)"
    os_error = exc.os_error if isinstance(exc, aiohttp.ClientConnectorError) else exc
    if isinstance(os_error, OSError) and os_error.errno in _ERRNO_WORDS:
        return _ERRNO_WORDS[os_error.errno]
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "cannot connect"
    return None


def _server_of(exc: BaseException) -> str | None:
    """``host[:port]`` of a connection error (the default port of its scheme left out)."""
    if not isinstance(exc, aiohttp.ClientConnectorError):
        return None
    host, port = exc.host, exc.port
    return host if port in (80, 443) else f"{host}:{port}"


def counted(failed: FetchFailed, attempts: int) -> FetchFailed:
    """The failure of a fetch (not raised here: the caller chains it); its message says
    how many attempts were made when there was more than one, so a failure is one line
    with its count, not a line per retry."""
    if attempts > 1:
        return FetchFailed(failed.code, f"{failed.message} ({attempts} attempts)")
    return failed


def _failure(exc: BaseException) -> FetchFailed:
    if _is_blocked(exc):
        return FetchFailed("blocked", str(getattr(exc, "os_error", exc)))
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ClientSSLError):
        reason = _describe(exc)
        reason = reason if reason.startswith("cannot connect") else f"cannot connect: {reason}"
        return FetchFailed("connect", reason)
    if isinstance(exc, TimeoutError):
        return FetchFailed("timeout", f"timeout: {_describe(exc)}")
    if isinstance(exc, ValueError) and not isinstance(exc, aiohttp.ClientError | OSError):
        return FetchFailed("url", f"invalid URL: {_describe(exc)}")
    if isinstance(exc, aiohttp.InvalidURL):
        return FetchFailed("url", f"invalid URL: {_describe(exc)}")
    return FetchFailed("reset", f"connection failed: {_describe(exc)}")


def _retryable(exc: BaseException) -> bool:
    """Resets and timeouts are worth another attempt; TLS and bad URLs are not."""
    if isinstance(exc, aiohttp.ClientSSLError | aiohttp.InvalidURL) or _is_blocked(exc):
        return False
    return isinstance(exc, aiohttp.ClientConnectionError | TimeoutError)


def _is_blocked(exc: BaseException) -> bool:
    """The SSRF guard refused the address (aiohttp wraps the resolver's error)."""
    return isinstance(exc, BlockedAddress) or isinstance(
        getattr(exc, "os_error", None), BlockedAddress
    )


class Fetcher:
    """GETs with retries and hand-followed redirects over one :class:`Client`.

    ``options`` give the bounds and the network options: the user's ``headers`` (over
    the session's own) go to the hosts of the target's site, or to every host with
    ``header_hosts="any"`` (see the module doc); ``proxy`` is the proxy URL of the
    requests to the target's site (None: none, or the environment's with a ``trust_env``
    session), ``run``'s proxy (default: the same) that of the requests elsewhere, so a
    target's own proxy (``per_target``) carries its own site only.
    ``rand`` is the jitter source (``random.random``); tests may pass a fixed one.
    ``policy`` is the SSRF guard of a guarded session (None: any address); ``pacer``
    spaces requests per host (shared by the fetchers of one reader, so a delay holds
    across its guarded and open sessions).

    ``jar`` keeps the cookies the target's sites set (None: the session's own jar does,
    as a user's session has it); :meth:`for_target` gives each target a jar of its own,
    so a cookie one target's site set is never sent with another target's request.

    ``trust`` is what the target's site may reach (:class:`SiteTrust`): a request to one
    of its trusted names, or through a proxy (the client then resolves the proxy's
    name only, and the proxy the rest), is sent ``trusted``: by the client's part without
    the name guard, which no other target's untrusted request ever uses; every other
    request of a guarded fetcher goes by the part whose resolver trusts no name.
    ``client`` sends the requests (:class:`AiohttpClient`, or the browser client of
    :mod:`~sitemap_reader.crawl.browser`).
    """

    def __init__(
        self,
        client: Client,
        options: Options,
        *,
        policy: AddressPolicy | None = None,
        rand: Callable[[], float] = random.random,
        pacer: Pacing | None = None,
        trust: SiteTrust | None = None,
        run: Options | None = None,
        storms: dict[str, int] | None = None,
        jar: aiohttp.CookieJar | None = None,
    ) -> None:
        network = options.network
        self._jar = jar
        self.client = client
        self._trust = trust or SiteTrust(open=policy is None)
        self._limits = options.limits
        self._policy = policy
        self._user = dict(network.headers)
        self._anywhere = network.header_hosts == "any" or not self._user
        self._sites: dict[str, Scope | None] = {}  # target host -> its site (site_scope)
        self._run = run or options
        self._site_proxy = network.proxy
        self._proxy = self._run.network.proxy
        self._pacer: Pacing = pacer or Pacer()
        # host -> sitemaps failed in a row after retries (shared by a reader's fetchers)
        self._storms: dict[str, int] = {} if storms is None else storms
        self._rand = rand

    def for_target(self, options: Options, trust: SiteTrust) -> Fetcher:
        """A fetcher for one target on the same sessions, guard, pacer and storm counts:
        its own network options (``per_target``: headers, proxy, over this fetcher's as
        the run's) and what its site may reach (an open site is not guarded at all)."""
        return self.on(self.client, options, trust)

    def on(self, client: Client, options: Options, trust: SiteTrust) -> Fetcher:
        """:meth:`for_target` over another client (the ladder's browser client)."""
        return Fetcher(
            client,
            options,
            policy=None if trust.open else self._policy,
            rand=self._rand,
            pacer=self._pacer,
            trust=trust,
            run=self._run,
            storms=self._storms,
            jar=None if self._jar is None else aiohttp.CookieJar(),
        )

    @contextlib.asynccontextmanager
    async def open(
        self,
        url: str,
        *,
        max_redirects: int,
        budget: Deadline | None = None,
        accept_hop: Callable[[str], bool] | None = None,
        retry_connect: bool = True,
        request_headers: Mapping[str, str] | None = None,
        spacing: float = 0.0,
        site: str | None = None,
    ) -> AsyncIterator[Response]:
        """GET ``url`` following redirects; yield the final :class:`Response`.

        ``request_headers`` go with every request of the fetch (an incremental run's
        ``If-None-Match`` / ``If-Modified-Since``; a 304 is returned like any status).
        ``budget`` is the per-sitemap deadline.
        ``site`` is the target's host: the user's headers go to the hosts of its site
        only, decided again for each redirect hop (None: a target without a site).
        ``spacing`` is the least time between two requests of the fetch to one host.

        ``accept_hop(url)`` is asked before each redirect is followed; False stops there
        with ``Response.refused`` set. Raises :class:`FetchFailed` when no final response
        could be had. A final retryable status (a 503 after all retries) is returned, not
        raised: the caller records the status.
        """
        hops: list[str] = []
        current = url
        while True:
            on_site = self._on_site(current, site)
            sent = self._headers_for(on_site, request_headers)
            via = self._site_proxy if on_site else self._proxy
            raw = await self._attempts(current, budget, retry_connect, sent, spacing, via)
            location = raw.headers.get("Location") if raw.status in REDIRECT_STATUSES else None
            if location is None:
                break
            raw.release()
            target = self._redirect_target(raw, location, len(hops), max_redirects)
            hops.append(target)
            if accept_hop is not None and not accept_hop(target):
                yield Response(target, raw.status, None, tuple(hops), refused=target)
                return
            current = target
        response = Response(
            url=str(raw.url),
            status=raw.status,
            content_type=raw.headers.get("Content-Type"),
            redirects=tuple(hops),
            _raw=raw,
        )
        try:
            yield response
        finally:
            response.release()

    def _headers_for(self, on_site: bool, own: Mapping[str, str] | None) -> Mapping[str, str]:
        """The headers of one request: the user's when it goes to the target's site (or
        they may go anywhere), then the fetch's own."""
        user = self._user if self._anywhere or on_site else {}
        return {**user, **own} if own else user

    def _on_site(self, url: str, site: str | None) -> bool:
        if site is None:
            return False
        if site not in self._sites:
            self._sites[site] = site_scope(site)
        scope = self._sites[site]
        return scope is not None and scope.allows(url, None)

    def _redirect_target(self, raw: Answer, location: str, hops: int, max_redirects: int) -> str:
        if hops >= max_redirects:
            raise FetchFailed(
                "redirects", f"more than {max_redirects} redirects", status=raw.status
            )
        try:
            target = URL(raw.url).join(URL(location.strip())).with_fragment(None)
        except ValueError as exc:
            raise FetchFailed("redirects", f"bad redirect Location: {location!r}") from exc
        if target.scheme not in ("http", "https") or not target.host:
            raise FetchFailed("redirects", f"redirect to a non-http URL: {location!r}")
        return str(target)

    async def _attempts(
        self,
        url: str,
        budget: Deadline | None,
        retry_connect: bool,
        sent: Mapping[str, str] | None = None,
        spacing: float = 0.0,
        via: str | None = None,
    ) -> Answer:
        """One URL, up to ``1 + Limits.retries`` attempts; the last response is returned.
        ``via`` is the proxy of the request (None: none).

        A host whose sitemaps keep failing with retryable statuses (a 503 storm) gets one
        attempt per URL once ``Limits.max_host_storm_failures`` of them failed in a row.
        """
        self._check_address(url)
        trusted = via is not None or self._trust.trusts(URL(url).raw_host or "")
        limits = self._limits
        host = _host_key(url)
        attempt = 0
        while True:
            if budget is not None and spacing > 0:
                budget.pause()  # waiting on purpose: not the server's time
            await self._pacer.wait(host, spacing)
            if budget is not None:
                budget.restart()
            storm = self._storms.get(host, 0) >= limits.max_host_storm_failures
            last = attempt >= limits.retries or storm
            try:
                try:
                    raw = await self.client.send(
                        url,
                        trusted=trusted,
                        sent=sent or None,
                        via=via,
                        cookies=self._cookies(url),
                    )
                finally:
                    self._pacer.answered(host)
                if self._jar is not None:
                    self._jar.update_cookies(raw.cookies(), URL(raw.url))
            except SendFailed as exc:
                retry = exc.retryable and (retry_connect or not exc.connecting)
                if last or not retry:
                    raise counted(exc.failed, attempt + 1) from exc
                pause = self._backoff(attempt)
            else:
                if raw.status not in RETRY_STATUSES:
                    self._storms.pop(host, None)  # the host answers again
                    return raw
                if last:
                    self._storms[host] = self._storms.get(host, 0) + 1
                    return raw
                asked = self._retry_after(raw, budget)
                raw.release()
                if asked is not None:  # the server's time: the budget keeps running
                    await self._pacer.hold(host, asked)  # every request to it waits as long
                    await asyncio.sleep(asked)
                    attempt += 1
                    continue
                pause = self._backoff(attempt)
            await self._sleep(pause, budget)
            attempt += 1

    def _retry_after(self, raw: Answer, budget: Deadline | None) -> float | None:
        """The wait a retryable answer asks for (None: none, back off); a FetchFailed when
        it is longer than ``Limits.max_retry_after`` or than the budget has left."""
        wait = retry_after_seconds(raw.headers.get("Retry-After"))
        if wait is None:
            return None
        cap, why = self._limits.max_retry_after, "the longest wait honoured"
        left = None if budget is None else budget.left()
        if left is not None and left <= cap:
            cap, why = left, "the time left of the sitemap's budget"
        if wait > cap or (wait > 0 and wait == left):
            raw.release()
            raise FetchFailed(
                "retry-after",
                f"HTTP {raw.status} asks to retry after {wait:.0f} s "
                f"(more than {cap:.0f} s, {why}): gave up",
                status=raw.status,
            )
        return wait

    def _backoff(self, attempt: int) -> float:
        limits = self._limits
        return backoff_delay(attempt, limits.backoff_base, limits.max_retry_after, self._rand)

    async def _sleep(self, pause: float, budget: Deadline | None) -> None:
        if budget is not None:
            budget.pause()
        await asyncio.sleep(pause)

    def _cookies(self, url: str) -> BaseCookie[str] | None:
        """The cookies the target's own jar holds for ``url`` (None: no jar, or none)."""
        if self._jar is None:
            return None
        return self._jar.filter_cookies(URL(url)) or None

    def _check_address(self, url: str) -> None:
        """Refuse odd numeric hosts always, and in a guarded session IP literals that are
        not public (every hop).

        Host names are checked by the guarded session's resolver when they are resolved.
        """
        try:
            if self._policy is None:
                check_numeric_host(url)
            else:
                self._policy.check_url(url)
        except BlockedAddress as exc:
            raise FetchFailed("blocked", str(exc)) from exc


def _host_key(url: str) -> str:
    """``host:port`` of a URL (the unit a 503 storm is counted on)."""
    parsed = URL(url)
    return f"{parsed.host}:{parsed.port}"


def _is_connect_error(exc: BaseException) -> bool:
    return isinstance(exc, aiohttp.ClientConnectorError)
