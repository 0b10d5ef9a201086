"""Crawlee's request loader contract over :class:`~sitemap_reader.SitemapLoader`.

Crawlee pulls requests from a ``RequestLoader`` and reports each one handled. Ours hands
out a request per sitemap record (best first within the buffer, if asked), with the
record as ``request.user_data["sitemap_reader"]`` (its JSON shape), and acknowledges
the record when Crawlee marks the request handled: the loader's progress file then
knows it is done, and a crawl restarted after a crash is handed only the rest.

:meth:`SitemapRequestLoader.to_tandem` gives Crawlee the request manager its crawlers
take (``request_manager=``). Unlike Crawlee's generic tandem, which moves each request
into a request queue and calls it handled at once, ours hands our requests to the
crawler directly, so "handled" means the crawler handled it; a retried request
(``reclaim_request``) stays ours and unacknowledged until then. Requests the crawler adds
itself (``enqueue_links``) go to the request manager given (Crawlee's default request
queue when none).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Literal, Unpack

from aiohttp import ClientSession
from aiohttp.abc import AbstractResolver
from crawlee import Request, RequestOptions
from crawlee.request_loaders import RequestLoader, RequestManager, RequestManagerTandem
from crawlee.storage_clients.models import ProcessedRequest

from sitemap_reader._keywords import LoaderKeywords
from sitemap_reader.errors import UsageError
from sitemap_reader.loader import SitemapLoader
from sitemap_reader.options import Options, loader_options
from sitemap_reader.records import UrlRecord

#: The ``user_data`` key of the sitemap record.
RECORD_KEY = "sitemap_reader"
#: ``transform(record, options)``: the options to build the request from, ``"unchanged"``,
#: or ``"skip"`` (the record is acknowledged without a request).
Transform = Callable[[UrlRecord, RequestOptions], RequestOptions | Literal["skip", "unchanged"]]


class SitemapRequestLoader(RequestLoader):
    """A Crawlee ``RequestLoader`` fed by a site's sitemaps, acknowledged and resumable.

    ``targets``, ``options``, ``session``, ``resolver`` and every keyword (the loader's
    and the reader's) are those of :class:`~sitemap_reader.SitemapLoader`. ``transform``
    may change or skip the request of each record. Use it inside ``async with``.
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
        #: Our requests handed out and not handled yet, by unique key: the record's URL.
        self._ours: dict[str, str] = {}
        #: Our requests the crawler gave back for a retry, to hand out again first.
        self._reclaimed: deque[Request] = deque()

    async def __aenter__(self) -> SitemapRequestLoader:
        await self.loader.__aenter__()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.loader.__aexit__(kind, exc, tb)

    # -- the RequestLoader contract ---------------------------------------------------------

    async def get_handled_count(self) -> int:
        return self.loader.handled

    async def get_total_count(self) -> int:
        return self.loader.total_known

    async def is_empty(self) -> bool:
        return not self._reclaimed and not self.loader.queued and not self.loader.reading

    async def is_finished(self) -> bool:
        return not self._reclaimed and not self._ours and self.loader.finished

    async def fetch_next_request(self) -> Request | None:
        if self._reclaimed:
            return self._reclaimed.popleft()
        while (record := await self.loader.next()) is not None:
            request = self._request(record)
            if request is not None:
                self._ours[request.unique_key] = record.url
                return request
            await self.loader.ack(record.url)  # skipped by the transform: nothing to do
        return None

    async def mark_request_as_handled(self, request: Request) -> ProcessedRequest | None:
        url = self._ours.pop(request.unique_key, None)
        if url is None:
            return None
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

    async def fetch_next_request(self) -> Request | None:
        if not await self.sitemaps.is_empty():  # waits while the sitemaps are still read
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
