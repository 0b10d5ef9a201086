"""One run of the traversal: jobs for robots.txt, sitemaps and local files; the tree.

See :mod:`sitemap_reader.crawl.discover` for the theory of operation; this module holds
the per-run state (:class:`Traversal`) so the reader itself stays a thin, reusable shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING

from sitemap_reader.crawl.dedupe import UrlSet
from sitemap_reader.crawl.fetch import CHUNK_SIZE, Deadline, Fetcher, FetchFailed, Response
from sitemap_reader.crawl.incremental import Checkpoint, Incremental
from sitemap_reader.crawl.model import Run, SitemapNode
from sitemap_reader.crawl.schedule import Channel, HostScheduler, Job
from sitemap_reader.crawl.scoring import Scoring
from sitemap_reader.crawl.targets import Target, well_known_urls
from sitemap_reader.parse.gunzip import GZIP_MAGIC, Gunzip, GunzipError
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import Item, SitemapParser
from sitemap_reader.parse.robots import parse_robots
from sitemap_reader.parse.scope import Scope, host_of
from sitemap_reader.records import UrlRecord

if TYPE_CHECKING:
    from sitemap_reader.crawl.discover import SitemapReader
    from sitemap_reader.store import StoredSitemap

Batch = list[UrlRecord]
#: Skipped children kept as nodes per parent; further skips are only counted (a problem
#: on the parent), so an index of 50,000 duplicate entries cannot bloat the tree.
MAX_SKIPPED_NODES = 100
#: Records per channel item: one 64 KiB chunk of gzip can hold 8,000 records, so big
#: batches are split to keep the channel's bound (in items) a bound on memory too.
MAX_BATCH = 2048


@dataclasses.dataclass(slots=True, eq=False)
class Site:
    """Per-target state: its root node, scope filter, sitemap budget, reachability, and
    its fetcher (guarded by the SSRF policy unless the target allows private addresses)."""

    target: Target
    root: SitemapNode
    scope: Scope | None
    sitemaps: int = 0
    unreachable: str | None = None
    fetcher: Fetcher | None = None


def _server(url: str) -> str:
    """The scheduler's host key: ``host[:port]`` of an absolute URL."""
    return url.split("/", 3)[2] if "://" in url else ""


def _origin_prefix(url: str) -> str | None:
    """``scheme://authority`` plus the next delimiter: URLs starting with it share the origin."""
    start = url.find("//")
    if start < 0:
        return None
    end = url.find("/", start + 2)
    return url[: end + 1] if end > 0 else None


def _is_robots(url: str) -> bool:
    path = url.split("?", 1)[0]
    return path.count("/") == 3 and path.endswith("/robots.txt")


class Traversal:
    """The state of one run: visited sitemaps, the URL dedupe set, the scheduler."""

    def __init__(
        self,
        reader: SitemapReader,
        run: Run,
        targets: Sequence[Target],
        channel: Channel[Batch] | None,
    ) -> None:
        self.reader = reader
        self.fetcher = reader.fetcher
        self.limits = reader.limits
        self.run_info = run
        self.stats = run.stats
        self.targets = targets
        self.channel = channel
        self.scheduler = HostScheduler(reader.concurrency, reader.per_host)
        self.seen = UrlSet()
        self.visited: set[str] = set()
        self.sites: list[Site] = []
        self.now = datetime.now(UTC)
        self.stopped: str | None = None
        self._skipped_kept: dict[int, int] = {}
        self.scoring = Scoring(reader.score, self.now)
        #: Incremental state (set by the reader when ``state`` is given).
        self.state: Incremental | None = None

    # -- the run -------------------------------------------------------------------------

    async def run(self) -> None:
        """Start every target, wait for all jobs; set ``run.error`` if nothing was found."""
        try:
            for target in self.targets:
                self._start(target)
            await self.scheduler.run()
            if self.state is not None:
                await self._checkpoint(self.state.finale())
        finally:
            self.stats.finished = time.monotonic()
            if self.channel is not None:
                self.channel.close()
        self.run_info.error = self._error()

    def _start(self, target: Target) -> None:
        mode = self.reader.scope
        key = normalize_url(target.url) or target.url
        if target.kind in ("file", "stdin"):
            root = SitemapNode(target.url, kind=target.kind)
            site = Site(target, root, None)
            self._push(site, root, lambda: self._local(site, root))
        else:
            kind = "sitemap" if target.kind == "sitemap" else "robots"
            root = SitemapNode(target.url, kind=kind)
            site = Site(target, root, Scope(mode, [target.host or ""]))
            if key in self.visited:  # the same target twice in one run
                root.skipped = "already visited"
            elif kind == "sitemap":
                self.visited.add(key)
                self._push(site, root, lambda: self._sitemap(site, root, target))
            else:
                self.visited.add(key)
                self.scheduler.push(_server(target.url), lambda: self._robots(site, root))
        site.fetcher = self.reader.fetcher_for(target)
        self.sites.append(site)
        self.run_info.tree.append(root)

    def _push(self, site: Site, node: SitemapNode, job: Job) -> None:
        site.sitemaps += 1
        self.stats.sitemaps_queued += 1
        self.scheduler.push(_server(node.url), job)

    def stop(self, reason: str) -> None:
        """End the run early: queued sitemaps are skipped, running ones end at a chunk."""
        if self.stopped is None:
            self.stopped = self.stats.stopped = reason

    # -- robots.txt ----------------------------------------------------------------------

    async def _robots(self, site: Site, node: SitemapNode) -> None:
        listed: list[str] = []
        if self.reader.robots:
            body = await self._robots_body(site, node)
            if body is not None:
                base = node.final_url or node.url
                listed = list(
                    parse_robots(body, base, max_bytes=self.limits.max_robots_bytes).sitemaps
                )
                node.format = "robots"
            host = host_of(node.final_url or node.url)
            if site.scope is not None and host:
                site.scope.add_host(host)  # a robots.txt vouches for what it lists
        else:
            node.skipped = "robots.txt disabled"
            await self._pick_scheme(site, node)
        for url in listed:
            self._add_child(site, node, url, "sitemap", 0)
        if not listed and self.reader.guess and site.unreachable is None:
            for url in well_known_urls(node.final_url or node.url):
                self._add_child(site, node, url, "guess", 0)

    async def _robots_body(self, site: Site, node: SitemapNode) -> bytes | None:
        """The robots.txt body (None when absent: 4xx, or failed for good: 5xx, network)."""
        urls = [site.target.with_scheme(s) for s in site.target.schemes] or [node.url]
        for attempt, url in enumerate(urls):
            node.url = url
            last = attempt == len(urls) - 1
            try:
                return await self._read_robots(site, node, retry_connect=last)
            except FetchFailed as exc:
                if exc.cannot_connect and not last:
                    node.add_problem("https-unavailable", f"{exc.message}; trying http")
                    continue
                node.add_problem(exc.code, f"robots.txt: {exc.message}", fatal=True)
                if exc.cannot_connect:
                    site.unreachable = exc.message
        return None

    async def _read_robots(
        self, site: Site, node: SitemapNode, *, retry_connect: bool
    ) -> bytes | None:
        limits = self.limits
        async with (
            self._budget() as deadline,
            _fetcher(site).open(
                node.url,
                max_redirects=limits.max_robots_redirects,
                deadline=deadline,
                retry_connect=retry_connect,
            ) as resp,
        ):
            node.status, node.final_url = resp.status, resp.url
            if 400 <= resp.status < 500:
                return None  # RFC 9309 §2.3.1.3: unavailable, no restrictions, no sitemaps
            if not 200 <= resp.status < 300:
                raise FetchFailed("http-status", f"HTTP {resp.status}", status=resp.status)
            return await self._capped_body(node, resp, limits.max_robots_bytes)

    async def _capped_body(self, node: SitemapNode, resp: Response, cap: int) -> bytes:
        """At most ``cap`` bytes of the body, gunzipped when it is gzip."""
        data = bytearray()
        async with contextlib.aclosing(resp.chunks()) as chunks:
            async for chunk in chunks:
                data += chunk
                if len(data) >= cap:
                    node.add_problem(
                        "limit-robots-bytes", f"robots.txt longer than {cap:,} bytes: rest ignored"
                    )
                    break
        node.bytes = len(data)
        self.stats.bytes += len(data)
        if not data.startswith(GZIP_MAGIC):
            return bytes(data[:cap])
        out = bytearray()
        gunzip = Gunzip(max_output=cap, max_members=self.limits.max_gzip_members)
        try:
            for piece in gunzip.feed(bytes(data)):
                out += piece
        except GunzipError as exc:
            node.add_problem(exc.code, f"robots.txt: {exc}")
        return bytes(out[:cap])

    async def _pick_scheme(self, site: Site, node: SitemapNode) -> None:
        """Without robots.txt: find out whether a bare domain answers over https.

        One GET of the home page (body unread, redirects not followed) decides.
        """
        if len(site.target.schemes) < 2:
            return
        home = node.url.removesuffix("robots.txt")
        try:
            async with (
                self._budget() as deadline,
                _fetcher(site).open(home, max_redirects=0, deadline=deadline, retry_connect=False),
            ):
                pass
        except FetchFailed as exc:
            if exc.cannot_connect:
                node.add_problem("https-unavailable", f"{exc.message}; using http")
                node.url = site.target.with_scheme("http")

    # -- sitemaps ------------------------------------------------------------------------

    def _add_child(
        self,
        site: Site,
        parent: SitemapNode,
        url: str,
        kind: str,
        depth: int,
        lastmod: datetime | None = None,
    ) -> None:
        node = SitemapNode(url, kind=kind, depth=depth, lastmod=lastmod)
        key = normalize_url(url) or url
        if self.state is not None:
            self.state.child(parent, url, lastmod)
        reason = self._skip_reason(site, key, depth)
        if reason is None:
            self.visited.add(key)
            parent.children.append(node)
            self._push(site, node, lambda: self._sitemap(site, node, None))
            return
        node.skipped = reason
        self.stats.sitemaps_skipped += 1
        limit = _limit_code(reason)
        if limit is not None:  # sitemaps lost to a bound: say so where -v and the tree show it
            parent.add_problem(limit, f"child sitemaps not fetched: {reason}")
        kept = self._skipped_kept.get(id(parent), 0)
        if kept < MAX_SKIPPED_NODES:
            self._skipped_kept[id(parent)] = kept + 1
            parent.children.append(node)
        elif limit is None:
            parent.add_problem("children-skipped", f"more skipped child sitemaps, e.g. {url}")

    def _skip_reason(self, site: Site, key: str, depth: int) -> str | None:
        limits = self.limits
        if self.stopped is not None:
            return self.stopped
        if _is_robots(key):
            return "robots.txt is not a sitemap"
        if key in self.visited:
            return "already visited"
        if depth > limits.max_depth:
            return f"deeper than max_depth={limits.max_depth}"
        if site.sitemaps >= limits.max_sitemaps:
            return f"over max_sitemaps={limits.max_sitemaps}"
        return None

    async def _sitemap(self, site: Site, node: SitemapNode, target: Target | None) -> None:
        try:
            if self.stopped is not None:
                node.skipped = self.stopped
                return
            if self.state is None or not self._unchanged(site, node):
                await self._read(site, node, target)
        finally:
            self._finish(node)
        await self._settle(node)

    async def _read(self, site: Site, node: SitemapNode, target: Target | None) -> None:
        """Fetch and parse the sitemap; failures become problems on the node."""
        parsers: list[SitemapParser] = []
        try:
            await self._fetch_again_if_cut(site, node, parsers, target)
        except FetchFailed as exc:
            node.add_problem(exc.code, exc.message, fatal=True)
            if exc.cannot_connect and node is site.root:
                site.unreachable = exc.message
        if parsers:
            await self._close_parser(site, node, parsers[0])
        await self._release(node)

    # -- incremental runs (see crawl/incremental.py) -------------------------------------

    def _unchanged(self, site: Site, node: SitemapNode) -> bool:
        """Look the sitemap up in the state; True when its index lastmod says unchanged."""
        assert self.state is not None
        stored = self.state.plan(node)
        if stored is None:
            return False
        self._walk_stored(site, node, stored)
        return True

    def _walk_stored(self, site: Site, node: SitemapNode, stored: StoredSitemap) -> None:
        """An unchanged index: its children (as last read) may still have changed."""
        for url, lastmod in stored.child_refs():
            self._add_child(site, node, url, "sitemap", node.depth + 1, lastmod)

    async def _settle(self, node: SitemapNode) -> None:
        """Queue the state write of a finished sitemap behind its records."""
        if self.state is None:
            return
        status_ok = node.unchanged is not None or 200 <= (node.status or 0) < 300
        complete = node.ok and status_ok and self.stopped is None
        checkpoint = self.state.settle(node, complete)
        if checkpoint is not None:
            await self._checkpoint(checkpoint)

    async def _checkpoint(self, checkpoint: Checkpoint) -> None:
        if self.channel is None:  # tree(): nobody consumes records, write now
            for _ in checkpoint.run():
                pass
        else:
            await self.channel.put(checkpoint)

    async def _release(self, node: SitemapNode) -> None:
        """The sitemap ended: the records the scoring still held go out."""
        rest = self.scoring.release(node)
        if rest:
            await self._send(self._budget_urls(rest), None)

    async def _fetch_again_if_cut(
        self,
        site: Site,
        node: SitemapNode,
        parsers: list[SitemapParser],
        target: Target | None,
    ) -> None:
        """Fetch; a body cut by a lost connection is fetched again from its final URL,
        up to ``Limits.body_retries`` times. Records of the cut attempt are already out;
        the run's dedupe drops them the second time, so nothing is emitted twice."""
        retries = self.limits.body_retries
        for attempt in range(retries + 1):
            try:
                if attempt == 0:
                    await self._fetch(site, node, parsers, target)
                else:
                    again = node.final_url or node.url
                    await self._stream(site, node, parsers, retry_connect=True, url=again)
                return
            except FetchFailed as exc:
                if exc.code != "body" or attempt >= retries or self.stopped is not None:
                    raise
                node.add_problem("body-retried", f"{exc.message}; fetched again")
                parsers.clear()
                node.urls = 0

    async def _fetch(
        self,
        site: Site,
        node: SitemapNode,
        parsers: list[SitemapParser],
        target: Target | None,
    ) -> None:
        """Fetch with the https -> http fallback of a bare-domain target."""
        schemes = target.schemes if target is not None else ()
        if len(schemes) < 2 or target is None:
            await self._stream(site, node, parsers, retry_connect=True)
            return
        try:
            await self._stream(site, node, parsers, retry_connect=False)
        except FetchFailed as exc:
            if not exc.cannot_connect:
                raise
            node.add_problem("https-unavailable", f"{exc.message}; trying http")
            node.url = target.with_scheme("http")
            self.visited.add(normalize_url(node.url) or node.url)
            await self._stream(site, node, parsers, retry_connect=True)

    async def _stream(
        self,
        site: Site,
        node: SitemapNode,
        parsers: list[SitemapParser],
        *,
        retry_connect: bool,
        url: str | None = None,
    ) -> None:
        """GET the sitemap (or ``url``) and feed its body to a parser built on the final
        URL."""
        reader = self.reader
        async with (
            self._budget() as deadline,
            _fetcher(site).open(
                url or node.url,
                max_redirects=self.limits.max_redirects,
                deadline=deadline,
                accept_hop=self._accept_hop,
                retry_connect=retry_connect,
                headers=self.state.headers(node) if self.state is not None else None,
            ) as resp,
        ):
            node.status, node.final_url = resp.status, resp.url
            if resp.refused is not None:
                _check_loop(node, resp)
                what = "robots.txt" if _is_robots(resp.refused) else "an already visited sitemap"
                node.skipped = f"redirects to {what}: {resp.refused}"
                return
            if resp.status == 304 and self.state is not None:
                stored = self.state.unchanged(node, "not modified (304)", 304)
                if stored is not None:
                    self._walk_stored(site, node, stored)
                    return
            if not 200 <= resp.status < 300:
                raise FetchFailed("http-status", f"HTTP {resp.status}", status=resp.status)
            parser = SitemapParser(
                resp.url,
                resp.content_type,
                strict=reader.strict,
                limits=self.limits,
                now=self.now,
            )
            parsers.append(parser)
            state = self.state
            if state is not None:
                state.begin(node, resp)
            async with contextlib.aclosing(resp.chunks()) as chunks:
                async for chunk in chunks:
                    node.bytes += len(chunk)
                    self.stats.bytes += len(chunk)
                    if state is not None:
                        state.feed(node, chunk)
                    items = parser.feed(chunk)
                    if items:
                        await self._emit(site, node, items, deadline)
                    if parser.done or self.stopped is not None:
                        break

    def _accept_hop(self, url: str) -> bool:
        """A redirect hop: refuse robots.txt and sitemaps already visited; mark the rest."""
        key = normalize_url(url) or url
        if _is_robots(key) or key in self.visited:
            return False
        self.visited.add(key)
        return True

    @contextlib.asynccontextmanager
    async def _budget(self) -> AsyncIterator[Deadline]:
        """The per-sitemap deadline; running out becomes ``FetchFailed("timeout")``."""
        deadline = Deadline(self.reader.timeout)
        try:
            async with deadline:
                yield deadline
        except TimeoutError as exc:
            if not deadline.expired:
                raise
            message = f"no complete answer within {self.reader.timeout:g} s"
            raise FetchFailed("timeout", message) from exc

    async def _close_parser(self, site: Site, node: SitemapNode, parser: SitemapParser) -> None:
        """End of body (or of what arrived): flush the parser, copy its verdict to the node."""
        items = parser.close()
        if items and self.stopped is None:
            await self._emit(site, node, items, None)
        node.format = parser.format
        node.complete = parser.complete
        if any(p.fatal for p in node.problems):
            node.problems.extend(parser.problems)  # the fetch failure came first: the cause
        else:
            node.problems[:0] = parser.problems

    # -- local files and stdin -----------------------------------------------------------

    async def _local(self, site: Site, node: SitemapNode) -> None:
        parser = SitemapParser(None, None, strict=self.reader.strict, limits=self.limits)
        try:
            try:
                await self._read_local(site, node, parser)
            except OSError as exc:
                node.add_problem("read", f"cannot read {node.url}: {exc}", fatal=True)
            await self._close_parser(site, node, parser)
            await self._release(node)
        finally:
            self._finish(node)

    async def _read_local(self, site: Site, node: SitemapNode, parser: SitemapParser) -> None:
        if node.kind == "stdin":
            await self._pump_file(site, node, parser, sys.stdin.buffer)
            return
        stream = await asyncio.to_thread(open, node.url, "rb")
        try:
            await self._pump_file(site, node, parser, stream)
        finally:
            stream.close()

    async def _pump_file(
        self, site: Site, node: SitemapNode, parser: SitemapParser, stream: IO[bytes]
    ) -> None:
        read = getattr(stream, "read1", stream.read)  # read1: what a pipe has, no waiting
        while self.stopped is None and not parser.done:
            chunk = await asyncio.to_thread(read, CHUNK_SIZE)
            if not chunk:
                return
            node.bytes += len(chunk)
            self.stats.bytes += len(chunk)
            items = parser.feed(chunk)
            if items:
                await self._emit(site, node, items, None)

    # -- records -------------------------------------------------------------------------

    async def _emit(
        self, site: Site, node: SitemapNode, items: list[Item], deadline: Deadline | None
    ) -> None:
        """Children become jobs; records pass scope and dedupe and go out as one batch."""
        batch = self._filter(site, node, items)
        if batch:
            await self._send(self._budget_urls(batch), deadline)

    def _filter(self, site: Site, node: SitemapNode, items: list[Item]) -> Batch:
        """The hot loop: scope (cached per origin prefix), then the run-wide dedupe."""
        seen_add = self.seen.add
        allows = site.scope.allows if site.scope is not None else None
        base = node.final_url
        batch: Batch = []
        prefix: str | None = None
        in_scope = True
        urls = out = duplicates = 0
        tracked: Batch | None = [] if self.state is not None else None
        for item in items:
            if type(item) is not UrlRecord:
                self._add_child(site, node, item.url, "sitemap", node.depth + 1, item.lastmod)
                continue
            urls += 1
            url = item.url
            if allows is not None and (prefix is None or not url.startswith(prefix)):
                in_scope = allows(url, base)  # the verdict depends on the origin only
                prefix = _origin_prefix(url)
            if not in_scope:
                out += 1
            elif seen_add(url):
                batch.append(item)
            else:
                duplicates += 1
                if tracked is not None:  # still listed by this sitemap: the state needs it
                    tracked.append(item)
        node.urls += urls
        self.stats.urls_out_of_scope += out
        self.stats.urls_duplicate += duplicates
        if self.state is not None:
            batch = self.state.observe(node, batch, tracked or [])
        return self.scoring.shape(node, batch) if batch else batch

    def _budget_urls(self, batch: Batch) -> Batch:
        cap = self.limits.max_urls
        if cap is not None and self.stats.urls_emitted + len(batch) >= cap:
            batch = batch[: max(0, cap - self.stats.urls_emitted)]
            self.stop(f"max_urls={cap} reached")
        self.stats.urls_emitted += len(batch)
        return batch

    async def _send(self, batch: Batch, deadline: Deadline | None) -> None:
        """Put ``batch`` in the channel in parts of at most :data:`MAX_BATCH` records."""
        channel = self.channel
        if channel is None:
            return
        for start in range(0, len(batch), MAX_BATCH):
            part = batch[start : start + MAX_BATCH] if len(batch) > MAX_BATCH else batch
            if deadline is None or not channel.full():
                await channel.put(part)
                continue
            deadline.pause()  # the consumer's time is not the server's
            try:
                await channel.put(part)
            finally:
                deadline.resume()

    # -- bookkeeping ---------------------------------------------------------------------

    def _finish(self, node: SitemapNode) -> None:
        stats = self.stats
        stats.sitemaps_queued -= 1
        if node.kind == "guess" and node.skipped is None and node.format in (None, "unknown"):
            node.skipped = f"not found ({node.reason})"  # a probe that missed: no failure
            return
        if node.skipped is not None:
            stats.sitemaps_skipped += 1
        elif node.ok:
            stats.sitemaps_ok += 1
        else:
            stats.sitemaps_failed += 1

    def _error(self) -> str | None:
        """None when anything was discovered, else one line saying why for each target."""
        reasons = []
        for site in self.sites:
            if any(_found(n) for n in site.root.walk()):
                return None
            reasons.append(f"{site.target.text}: {_why_nothing(site, self.reader.guess)}")
        return "; ".join(reasons) or None


#: Skip reasons that are a bound of :class:`~sitemap_reader.limits.Limits`, and the problem
#: code they become on the parent index.
_LIMIT_SKIPS = (("deeper than max_depth", "limit-depth"), ("over max_sitemaps", "limit-sitemaps"))


def _limit_code(reason: str) -> str | None:
    for prefix, code in _LIMIT_SKIPS:
        if reason.startswith(prefix):
            return code
    return None


def _fetcher(site: Site) -> Fetcher:
    if site.fetcher is None:  # set by Traversal._start for every site
        raise AssertionError("site without a fetcher")
    return site.fetcher


def _check_loop(node: SitemapNode, resp: Response) -> None:
    """A refused hop back into this fetch's own chain is a redirect loop: a failure.

    (A hop into a sitemap fetched for another node is a legitimate skip.)"""
    refused = normalize_url(resp.refused or "") or resp.refused
    own = [node.url, *resp.redirects[:-1]]
    if refused in {normalize_url(u) or u for u in own}:
        chain = " -> ".join([node.url, *resp.redirects])
        raise FetchFailed("redirects", f"redirect loop: {chain}", status=resp.status)


def _found(node: SitemapNode) -> bool:
    return node.kind != "robots" and node.skipped is None and node.format not in (None, "unknown")


def _why_nothing(site: Site, guess: bool) -> str:
    root = site.root
    if site.unreachable is not None:
        return site.unreachable
    if root.kind != "robots":
        return root.reason or "not a sitemap"
    prefix = f"{root.reason}; " if root.failed and root.reason else ""
    listed = [c for c in root.children if c.kind == "sitemap"]
    if listed:
        first = listed[0]
        return (
            f"{prefix}robots.txt lists {len(listed)} sitemap(s), none could be read "
            f"({first.url}: {first.reason})"
        )
    if not guess:
        return f"{prefix}no sitemap listed in robots.txt (probing well-known paths is off)"
    return (
        f"{prefix}no sitemap found: robots.txt lists none and none of the "
        f"{len(root.children)} well-known paths is a sitemap"
    )
