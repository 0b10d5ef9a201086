"""The browser client (the ``browser`` extra): requests whose TLS ClientHello and HTTP/2
settings are a browser's, for sites whose bot protection turns away clients by their
fingerprint (``client="browser"``, and the ladder's second attempt with ``"auto"``).

It is a :class:`~sitemap_reader.crawl.fetch.Client` over curl_cffi, libcurl built as
curl-impersonate (:data:`IMPERSONATE`, the newest Chrome it knows). Chosen over impit and
primp (both Rust, reqwest-based), measured on this project's machine with curl_cffi
0.17.0, impit 0.15.1 and primp 2.0.1 (wheels for CPython 3.11-3.13 on Linux, macOS and
Windows for all three): only libcurl lets us pin a name to the addresses we checked
(``CURLOPT_RESOLVE``) and hand us the body as sent (``CURLOPT_HTTP_CONTENT_DECODING``
off); the other two resolve names themselves and decode bodies themselves, which would
step around the address guard and the capped gunzip of the parse core. The cost: a
14 MB wheel (41 MB installed; impit 5 MB, primp 7 MB) and 0.17 s to import (impit 0.08,
primp 0.06), paid only when the option asks for it.

Every promise of the fetcher holds as with aiohttp, because it sits above this module
(:class:`~sitemap_reader.crawl.fetch.Fetcher`: retries and ``Retry-After``, redirects
followed by hand, per-request headers kept on their site, the per-target cookie jar,
pacing, the deadline); here:

* names are resolved by the reader's resolver, the guard's
  (:class:`~sitemap_reader.crawl.resolver.PublicOnlyResolver`) unless the request is
  ``trusted``, and libcurl is pinned to the addresses it returned (``CURLOPT_RESOLVE``),
  so it never resolves a target's name itself; a proxy's name is resolved the same way
  (the open resolver) and the proxy is reached by its address. The guarded and the open
  requests go by two curl sessions, which share no connection and no DNS cache;
* no redirect is followed (``allow_redirects=False``), nothing is decoded, and
  ``Accept-Encoding: gzip`` is all that is asked, as with aiohttp;
* the connect timeout is libcurl's, the read timeout its low-speed limit (under one byte a
  second for ``read_timeout`` seconds ends the transfer); no total timeout: the
  per-sitemap deadline is the fetcher's;
* a connection serves one request (``CURLOPT_FORBID_REUSE``): libcurl resends a request
  whose reused connection dropped before the answer, which would make one of our attempts
  two requests (aiohttp's resend is turned off by :func:`~sitemap_reader.crawl.fetch.single_send`);
* curl keeps no cookie of its own (the target's jar is the fetcher's) and reads no
  proxy from the environment unless ``trust_env``.

Its User-Agent stays the ``user_agent`` option (robots.txt rules are matched against our
agent, not a browser's); the other headers are the browser's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ipaddress
import math
import socket
from collections.abc import AsyncGenerator, ItemsView, Mapping
from http.cookies import BaseCookie, CookieError, SimpleCookie
from typing import Any, Final

from aiohttp.abc import AbstractResolver
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from sitemap_reader.crawl.fetch import Answer, FetchFailed, SendFailed
from sitemap_reader.discovery.addresses import BlockedAddress
from sitemap_reader.errors import missing_extra
from sitemap_reader.options import Options

#: The browser curl_cffi impersonates: the newest Chrome of the installed release.
IMPERSONATE: Final = "chrome"

#: libcurl's error numbers (CURLcode) we tell apart.
_PROXY = frozenset({5, 97})  # COULDNT_RESOLVE_PROXY, PROXY
_DNS = 6  # COULDNT_RESOLVE_HOST
_CONNECT = 7  # COULDNT_CONNECT
_TIMEOUT = 28  # OPERATION_TIMEDOUT
_URL = frozenset({1, 3})  # UNSUPPORTED_PROTOCOL, URL_MALFORMAT
_TLS = frozenset({35, 53, 54, 58, 59, 64, 66, 77, 80, 82, 83, 90, 91, 98})
_CERTIFICATE = frozenset({51, 60})  # PEER_FAILED_VERIFICATION, SSL_CACERT
_BODY = frozenset({18, 56, 92})  # PARTIAL_FILE, RECV_ERROR, HTTP2_STREAM

#: The pins of the request being sent, read by :class:`_PerRequest`: curl_cffi takes
#: libcurl options per session only; a context variable is the task's own, so requests
#: of concurrent tasks never see each other's.
_PINS: contextvars.ContextVar[Mapping[Any, Any] | None] = contextvars.ContextVar(
    "pins", default=None
)


def require() -> None:
    """Refuse the browser client when curl_cffi is not installed (a missing extra)."""
    try:
        import curl_cffi  # noqa: F401
    except ImportError:
        raise missing_extra("client='browser' needs curl_cffi", "browser") from None


class _PerRequest(dict[Any, Any]):
    """A session's libcurl options with the current request's pins over them."""

    def items(self) -> ItemsView[Any, Any]:  # type: ignore[override]
        return {**self, **(_PINS.get() or {})}.items()


class BrowserAnswer:
    """A curl_cffi response (streamed) as an :class:`~sitemap_reader.crawl.fetch.Answer`."""

    __slots__ = ("_raw", "headers", "status", "url")

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self.status: int = raw.status_code
        self.url: str = str(raw.url)
        pairs = [(k, v or "") for k, v in raw.headers.multi_items()]
        self.headers: Mapping[str, str] = CIMultiDictProxy(CIMultiDict(pairs))

    def cookies(self) -> BaseCookie[str]:
        jar: SimpleCookie = SimpleCookie()
        for value in self.headers.getall("Set-Cookie", []):  # type: ignore[attr-defined]
            with contextlib.suppress(CookieError):
                jar.load(value)
        return jar

    async def chunks(self, size: int) -> AsyncGenerator[bytes, None]:
        from curl_cffi import CurlError

        try:
            async for chunk in _content(self._raw):
                yield chunk
        except CurlError as exc:
            code = int(exc.code)
            if code == _TIMEOUT:
                raise FetchFailed("timeout", "read timeout in body") from exc
            raise FetchFailed("body", f"body ended early: {_words(code)}") from exc

    def release(self) -> None:
        """Stop the transfer: curl drops the connection of a body not read to its end."""
        raw = self._raw
        if raw.quit_now is not None:
            raw.quit_now.set()
        task = raw.astream_task
        if task is not None and not task.done():
            task.cancel()


async def _content(raw: Any) -> AsyncGenerator[bytes, None]:
    """The body as it comes (curl's own pieces: at most 16 KiB each)."""
    queue: asyncio.Queue[Any] = raw.queue
    while True:
        item = await queue.get()
        if isinstance(item, BaseException):
            raise item
        if not isinstance(item, bytes):  # the end of the stream
            return
        yield item


class BrowserClient:
    """Requests with a browser's fingerprint (see the module doc): ``resolver`` resolves
    trusted names, ``guard`` the others (the reader's guarded resolver)."""

    name = "browser"

    def __init__(self, options: Options, resolver: AbstractResolver, guard: AbstractResolver):
        from curl_cffi.const import CurlOpt
        from curl_cffi.requests import AsyncSession

        timeouts, network = options.timeouts, options.network
        self._resolvers = {True: resolver, False: guard}
        base = {
            CurlOpt.HTTP_CONTENT_DECODING: 0,
            CurlOpt.CONNECTTIMEOUT_MS: int(timeouts.connect_timeout * 1000),
            CurlOpt.TIMEOUT_MS: 0,
            CurlOpt.LOW_SPEED_LIMIT: 1,
            CurlOpt.LOW_SPEED_TIME: max(1, math.ceil(timeouts.read_timeout)),
            # libcurl sends a request again, unasked, when a reused connection drops
            # before the answer: a connection per request keeps one attempt one request.
            CurlOpt.FORBID_REUSE: 1,
        }
        self._resolve_option = CurlOpt.RESOLVE
        self._sessions: dict[bool, Any] = {
            trusted: AsyncSession(
                impersonate=IMPERSONATE,
                headers={"User-Agent": options.politeness.user_agent, "Accept-Encoding": "gzip"},
                trust_env=network.trust_env,
                allow_redirects=False,
                max_clients=options.parallelism.concurrency,
                discard_cookies=True,
                http_version="v2tls",
                curl_options=_PerRequest(base),
            )
            for trusted in (False, True)
        }

    async def send(
        self,
        url: str,
        *,
        trusted: bool,
        sent: Mapping[str, str] | None,
        via: str | None,
        cookies: BaseCookie[str] | None,
    ) -> Answer:
        from curl_cffi import CurlError

        fields = dict(sent or {})
        if cookies:
            jar = "; ".join(f"{m.key}={m.value}" for m in cookies.values())
            own = fields.get("Cookie")
            fields["Cookie"] = f"{own}; {jar}" if own else jar
        pins: list[str] = []
        if via is not None:
            via = await self._pinned_proxy(via)
        else:
            pins = await self._pins(url, self._resolvers[trusted])
        token = _PINS.set({self._resolve_option: pins} if pins else {})
        try:
            raw = await self._sessions[trusted].request(
                "GET",
                url,
                headers=fields,
                proxy=via,
                stream=True,
                accept_encoding=None,
                timeout=None,
            )
        except CurlError as exc:
            raise _failed(int(exc.code), url, via) from exc
        finally:
            _PINS.reset(token)
        return BrowserAnswer(raw)

    async def _pins(self, url: str, resolver: AbstractResolver) -> list[str]:
        """``host:port:address,...`` for libcurl: the addresses ``resolver`` gave (the
        guard's drop every non-public one, or refuse the name); none for an IP literal
        (the fetcher checked it) or a URL without a host."""
        parsed = URL(url)
        host, port = parsed.raw_host, parsed.port
        if not host or port is None or _is_literal(host):
            return []
        addresses = await self._resolve(resolver, host, port, url)
        shown = ",".join(f"[{a}]" if ":" in a else a for a in addresses)
        return [f"{host}:{port}:{shown}"]

    async def _pinned_proxy(self, via: str) -> str:
        """The proxy's URL with its name replaced by an address the open resolver gave."""
        parsed = URL(via)
        host, port = parsed.raw_host, parsed.port
        if not host or port is None or _is_literal(host):
            return via
        addresses = await self._resolve(self._resolvers[True], host, port, via, of="proxy")
        return str(parsed.with_host(addresses[0]))

    async def _resolve(
        self, resolver: AbstractResolver, host: str, port: int, url: str, of: str = ""
    ) -> list[str]:
        try:
            found = await resolver.resolve(host, port, socket.AF_UNSPEC)
        except BlockedAddress as exc:
            failed = FetchFailed("blocked", str(exc))
            raise SendFailed(failed, retryable=False, connecting=True) from exc
        except OSError as exc:
            what = f"{of} name not found" if of else "name not found"
            failed = FetchFailed("connect", f"cannot connect: {what} ({host})")
            raise SendFailed(failed, retryable=True, connecting=True) from exc
        addresses = list(dict.fromkeys(r["host"] for r in found))
        if not addresses:
            failed = FetchFailed("connect", f"cannot connect: name not found ({host})")
            raise SendFailed(failed, retryable=True, connecting=True)
        return addresses

    async def close(self) -> None:
        for session in self._sessions.values():
            await session.close()


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _failed(code: int, url: str, via: str | None) -> SendFailed:
    """A libcurl failure before the answer, in our codes (what aiohttp's become)."""
    server = URL(url).host or url
    words = _words(code)
    if code in _PROXY:
        failed = FetchFailed("connect", f"cannot connect: {words} ({via})")
        return SendFailed(failed, retryable=False, connecting=True)
    if code in (_DNS, _CONNECT):
        failed = FetchFailed("connect", f"cannot connect: {words} ({server})")
        return SendFailed(failed, retryable=True, connecting=True)
    if code in _TLS or code in _CERTIFICATE:
        failed = FetchFailed("connect", f"cannot connect: {words} ({server})")
        return SendFailed(failed, retryable=False, connecting=True)
    if code == _TIMEOUT:
        return SendFailed(
            FetchFailed("timeout", f"timeout: {words}"), retryable=True, connecting=False
        )
    if code in _URL:
        return SendFailed(
            FetchFailed("url", f"invalid URL: {url}"), retryable=False, connecting=False
        )
    return SendFailed(
        FetchFailed("reset", f"connection failed: {words}"), retryable=True, connecting=False
    )


#: libcurl's failures in the words aiohttp's get (:func:`~sitemap_reader.crawl.fetch._describe`).
_WORDS: Final = {
    5: "proxy name not found",
    6: "name not found",
    7: "connection refused",
    18: "connection reset (the body ended early)",
    28: "no answer in time",
    51: "certificate invalid (wrong host)",
    52: "connection reset (the server disconnected)",
    55: "connection reset",
    56: "connection reset",
    60: "certificate invalid",
    92: "connection reset (HTTP/2 stream)",
    97: "proxy refused",
}


def _words(code: int) -> str:
    if code in _WORDS:
        return _WORDS[code]
    if code in _TLS:
        return "TLS handshake failed"
    return f"libcurl error {code}"
