"""Crawlee's request loader contract over :class:`~sitemap_reader.SitemapLoader`.

Crawlee pulls requests from a ``RequestLoader`` and reports each one handled. Ours hands
out a request per sitemap record (round-robin across sites, best first within each host if
asked), with the record as ``request.user_data["sitemap_reader"]`` (its JSON shape;
:func:`record_of` gives it back typed), and acknowledges the record when Crawlee marks
the request handled: the loader's progress file then knows it is done, and a crawl
restarted after a crash is handed only the rest.

:meth:`SitemapRequestLoader.to_tandem` gives Crawlee the request manager its crawlers
take (``request_manager=``). Unlike Crawlee's generic tandem, which moves each request
into a request queue and calls it handled at once, ours hands our requests to the
crawler directly, so "handled" means the crawler handled it; a retried request
(``reclaim_request``) stays ours and unacknowledged until then. Requests the crawler adds
itself (``enqueue_links``) go to the request manager given (Crawlee's default request
queue when none).

Theory of operation
-------------------
*Identity.* Crawlee knows a page by its request's ``unique_key`` (the URL normalised its
own way: host case, trailing slash, query order, some tracking parameters), which may
join two of our records (we deduplicate by our own normalisation). A record whose key is
already in flight rides on that request: no second request, and when Crawlee marks the
request handled every record it stands for is settled. Retries are Crawlee's: a
request it retries comes back through ``reclaim_request`` and is handed out again as
is; one it gave up on (marked handled in state ``ERROR``: its retries exhausted, or a
status such as 404 that Crawlee never retries) is *given up* in the loader (counted in
``failed``, never handed out again), so a page is fetched as often as Crawlee's own
loader would fetch it: a 404 once.

*Never silent.* The loader opens on Crawlee's first question (no ``async with`` needed)
and closes itself once finished. When reading failed (every target unreachable or
without sitemaps) the error is raised from ``is_finished()`` / ``is_empty()``, which
Crawlee's pool calls outside its retry wrapper: ``crawler.run()`` raises it, once,
instead of logging ``retrying (1/3)`` per waiting task and ending with 0 pages.
"""

from __future__ import annotations

import dataclasses
import logging
import types
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, Union, Unpack, get_args, get_origin, get_type_hints

from aiohttp import ClientSession
from aiohttp.abc import AbstractResolver
from crawlee import Request, RequestOptions, RequestState
from crawlee.request_loaders import RequestLoader, RequestManager, RequestManagerTandem
from crawlee.storage_clients.models import ProcessedRequest

from sitemap_reader._safe_text import printable
from sitemap_reader.errors import UsageError
from sitemap_reader.loader import SitemapLoader
from sitemap_reader.options import Options
from sitemap_reader.options._keywords import LoaderKeywords
from sitemap_reader.options.groups import loader_options
from sitemap_reader.records import UrlRecord

logger = logging.getLogger("sitemap_reader")

#: The ``user_data`` key of the sitemap record.
RECORD_KEY = "sitemap_reader"
#: ``transform(record, options)``: the options to build the request from, ``"unchanged"``,
#: or ``"skip"`` (the record is acknowledged without a request).
Transform = Callable[[UrlRecord, RequestOptions], RequestOptions | Literal["skip", "unchanged"]]


def record_of(request: Request) -> UrlRecord:
    """The sitemap record of a request the loader handed out, typed.

    >>> async def page(context: HttpCrawlingContext) -> None:     # doctest: +SKIP
    ...     record = record_of(context.request)
    ...     print(record.url, record.lastmod, record.score)

    Built from ``request.user_data["sitemap_reader"]`` (the record's JSON shape, which
    Crawlee persists with the request): scores are rounded to 4 digits there. A request
    without one (not ours, or a ``transform`` dropped it) is a UsageError.
    """
    data = request.user_data.get(RECORD_KEY)
    if not isinstance(data, Mapping):
        raise UsageError(
            f"record_of: {request.url}: not a request of SitemapRequestLoader (no record)"
        )
    try:
        record = _build(UrlRecord, data)
    except _Damaged as exc:
        raise UsageError(
            f"record_of: {request.url}: {exc.field}: the record in user_data is damaged: "
            f"{exc.reason}"
        ) from exc
    assert isinstance(record, UrlRecord)
    return record


class _Damaged(ValueError):
    """A field of a stored record that cannot be read back: its name and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _build(kind: type, data: Mapping[str, Any], where: str = "") -> object:
    """A record class (or one of its nested classes) from its ``to_dict()`` shape; a
    value that cannot be read back is a :class:`_Damaged` naming its field."""
    if not isinstance(data, Mapping):
        raise _Damaged(where or kind.__name__, f"expected an object, got {type(data).__name__}")
    hints = get_type_hints(kind)
    given = {}
    for item in dataclasses.fields(kind):
        if item.name in data:
            name = f"{where}.{item.name}" if where else item.name
            given[item.name] = _value(hints[item.name], data[item.name], name)
    try:
        return kind(**given)
    except (TypeError, ValueError) as exc:
        raise _Damaged(where or kind.__name__, str(exc)) from exc


def _value(hint: Any, value: Any, name: str) -> Any:
    """One field back from JSON: datetimes, nested records, tuples of them."""
    origin = get_origin(hint)
    if value is None:
        if origin in (Union, types.UnionType) and type(None) in get_args(hint):
            return None
        raise _Damaged(name, f"expected {getattr(hint, '__name__', hint)}, got null")
    if origin in (Union, types.UnionType):
        (hint,) = [arg for arg in get_args(hint) if arg is not type(None)]
        return _value(hint, value, name)
    if origin is tuple:
        items = value.items() if isinstance(value, Mapping) else value  # PageMap attributes
        if isinstance(items, str) or not hasattr(items, "__iter__"):
            raise _Damaged(name, f"expected a list, got {type(value).__name__}")
        return tuple(_value(get_args(hint)[0], item, name) for item in items)
    if hint is datetime:
        return _moment(value, name)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value, name)
    plain = _PLAIN.get(hint)
    if plain is not None and (
        not isinstance(value, plain) or (isinstance(value, bool) and hint is not bool)
    ):
        raise _Damaged(name, f"expected {hint.__name__}, got {type(value).__name__}")
    return value


#: What JSON gives for each plain field type (a float field holds an int JSON wrote).
_PLAIN: dict[object, type | tuple[type, ...]] = {
    str: str,
    float: (int, float),
    int: int,
    bool: bool,
}


def _moment(value: object, name: str) -> datetime:
    """An ISO 8601 text back to a datetime (``Z`` is UTC)."""
    if not isinstance(value, str):
        raise _Damaged(name, f"expected ISO 8601 text, got {type(value).__name__} {value!r:.40}")
    try:
        return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError as exc:
        raise _Damaged(name, str(exc)) from None


class SitemapRequestLoader(RequestLoader):
    """A Crawlee ``RequestLoader`` fed by a site's sitemaps, acknowledged and resumable.

    ``targets``, ``options``, ``session``, ``resolver`` and every keyword (the loader's
    and the reader's) are those of :class:`~sitemap_reader.SitemapLoader`. ``transform``
    may change or skip the request of each record. ``async with`` opens and closes it;
    without it, it opens on the crawler's first question and closes once finished.
    """

    def __init__(
        self,
        targets: str | Sequence[str],
        options: Options | None = None,
        *,
        transform: Transform | None = None,
        session: ClientSession | None = None,
        resolver: AbstractResolver | None = None,
        **flat: Unpack[LoaderKeywords],
    ) -> None:
        reader, own = loader_options(
            "SitemapRequestLoader", options, flat, ("transform", "session", "resolver")
        )
        self.loader = SitemapLoader(targets, reader, session=session, resolver=resolver, loader=own)
        self.transform = transform
        #: Our requests handed out and not handled yet, by unique key: the URLs of the
        #: records each stands for.
        self._ours: dict[str, list[str]] = {}
        #: Our requests the crawler gave back for a retry, to hand out again first.
        self._reclaimed: deque[Request] = deque()
        #: Why handing out failed (raised from is_finished / is_empty).
        self._failure: BaseException | None = None
        self._implicit = False

    async def __aenter__(self) -> SitemapRequestLoader:
        await self.loader.open()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.loader.close()

    async def close(self) -> None:
        """Close the loader (idempotent; ``async with`` and the end of a crawl call it)."""
        await self.loader.close()

    # -- the RequestLoader contract ---------------------------------------------------------

    async def get_handled_count(self) -> int:
        return self.loader.handled

    async def get_total_count(self) -> int:
        await self._started()
        return self.loader.total_known

    async def is_empty(self) -> bool:
        loader = await self._started()
        if self._reclaimed:
            return False
        await self._raise_when_failed()
        return not loader.queued and not loader.reading

    async def is_finished(self) -> bool:
        loader = await self._started()
        if self._reclaimed or self._ours:
            return False
        await self._raise_when_failed()
        if not loader.finished:
            return False
        if self._implicit:
            await loader.close()
        return True

    async def fetch_next_request(self) -> Request | None:
        if self._reclaimed:
            return self._reclaimed.popleft()
        loader = await self._started()
        if loader.closed:  # finished: it closed itself (Crawlee may still ask)
            return None
        try:
            while (record := await loader.next()) is not None:
                try:
                    request = self._request(record)
                except UsageError:
                    raise
                except Exception as exc:  # the transform broke on this record: its URL only
                    logger.error(
                        "transform failed for %s: %s: %s",
                        printable(record.url), type(exc).__name__, printable(str(exc)),
                    )  # fmt: skip
                    await loader.fail(record.url)  # again later, given up after max_tries
                    continue
                if request is None:
                    await loader.ack(record.url)  # skipped by the transform: nothing to do
                    continue
                riders = self._ours.get(request.unique_key)
                if riders is not None:  # Crawlee's one page: rides on the request in flight
                    riders.append(record.url)
                    continue
                self._ours[request.unique_key] = [record.url]
                return request
        except UsageError:
            raise  # a bad transform: the caller's mistake, said at once
        except Exception as exc:  # Crawlee retries this call, logging each: raise it once
            self._failure = exc
        return None

    async def mark_request_as_handled(self, request: Request) -> ProcessedRequest | None:
        urls = self._ours.pop(request.unique_key, None)
        if urls is None:
            return None
        gave_up = request.state == RequestState.ERROR  # after Crawlee's own retries
        for url in urls:
            if gave_up:
                await self.loader.fail(url, again=False)
            else:
                await self.loader.ack(url)
        return ProcessedRequest(
            unique_key=request.unique_key, was_already_present=True, was_already_handled=True
        )

    def owns(self, request: Request) -> bool:
        """True for a request this loader handed out and that is not handled yet."""
        return request.unique_key in self._ours

    def reclaim(self, request: Request) -> None:
        """Hand ``request`` (ours) out again before new ones (a retry)."""
        self._reclaimed.append(request)

    async def to_tandem(self, request_manager: RequestManager | None = None) -> SitemapTandem:
        """The request manager for a crawler: our requests, then those it adds itself
        (into ``request_manager``; Crawlee's default request queue when None)."""
        if request_manager is None:
            from crawlee.storages import RequestQueue

            request_manager = await RequestQueue.open()
        return SitemapTandem(self, request_manager)

    # -- internals ---------------------------------------------------------------------------

    async def _started(self) -> SitemapLoader:
        """The loader, opened on first use (then it closes itself once finished)."""
        loader = self.loader
        if not loader.opened and not loader.closed:
            await loader.open()
            self._implicit = True
        return loader

    async def _raise_when_failed(self) -> None:
        """Once nothing is left to hand out, a failed read is the crawl's failure."""
        failure = self._failure or self.loader.error
        if failure is not None and not self.loader.queued:
            if self._implicit:
                await self.loader.close()
            raise failure

    def has_more(self) -> bool:
        """True while our requests may still come (reading, queued or given back); never
        raises: a failed read is raised by ``is_empty`` / ``is_finished`` instead."""
        loader = self.loader
        if loader.closed:  # finished (it closed itself), or closed by its owner
            return bool(self._reclaimed)
        if self._failure is not None or loader.error is not None:
            return bool(self._reclaimed or loader.queued)
        return bool(self._reclaimed or loader.queued or loader.reading or not loader.opened)

    def ready(self) -> bool:
        """True when a request of ours can be handed out without waiting on the reading."""
        return bool(self._reclaimed) or self.loader.ready

    def _request(self, record: UrlRecord) -> Request | None:
        options: RequestOptions = {"url": record.url, "user_data": {RECORD_KEY: record.to_dict()}}
        if self.transform is not None:
            changed = self.transform(record, options)
            if changed == "skip":
                return None
            if changed != "unchanged":
                options = changed
        try:
            return Request.from_url(**options)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"the transform gave bad request options: {exc}") from exc


class SitemapTandem(RequestManagerTandem):
    """Our requests straight to the crawler (acknowledged when it handles them), and the
    requests it adds in ``request_manager``."""

    def __init__(self, loader: SitemapRequestLoader, request_manager: RequestManager) -> None:
        super().__init__(loader, request_manager)
        self.sitemaps = loader
        self.manager = request_manager

    async def get_handled_count(self) -> int:
        return await self.sitemaps.get_handled_count() + await self.manager.get_handled_count()

    async def fetch_next_request(self) -> Request | None:
        sitemaps = self.sitemaps
        if sitemaps.has_more() and not sitemaps.ready() and not await self.manager.is_empty():
            return await self.manager.fetch_next_request()  # no waiting on slow sitemaps
        if sitemaps.has_more():  # waits while the sitemaps are still read
            request = await self.sitemaps.fetch_next_request()
            if request is not None:
                return request
        return await self.manager.fetch_next_request()

    async def mark_request_as_handled(self, request: Request) -> None:
        if self.sitemaps.owns(request):
            await self.sitemaps.mark_request_as_handled(request)
        else:
            await self.manager.mark_request_as_handled(request)

    async def reclaim_request(self, request: Request, *, forefront: bool = False) -> None:
        if self.sitemaps.owns(request):
            self.sitemaps.reclaim(request)
            return
        await self.manager.reclaim_request(request, forefront=forefront)
