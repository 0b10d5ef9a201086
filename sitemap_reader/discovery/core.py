"""The discovery core: the rules of walking a site, with no I/O (told what happened,
it answers what to do).

Theory of operation
-------------------
A run turns each target into a root node and a first job: the site's robots.txt (then
the sitemaps it lists, or the well-known paths when it lists none), the sitemap given
as the target, or a local file / stdin. A driver (aiohttp in :mod:`sitemap_reader.crawl`,
Scrapy in :mod:`sitemap_reader.scrapy`) carries out the actions the core returns
(:mod:`~sitemap_reader.discovery.actions`) and reports each outcome back:

* :meth:`Discovery.start` gives one :class:`Schedule` per target; for each,
  :meth:`Discovery.begin` answers with a :class:`Fetch` (or with nothing to fetch: an
  unchanged sitemap of an incremental run, a run already stopped).
* :meth:`Discovery.response` (status and headers), :meth:`Discovery.body` (each raw
  chunk), then :meth:`Discovery.end`, or :meth:`Discovery.failure` at any point.
  :meth:`Discovery.reading` says whether the job still wants its body.
* A sitemap's body goes to a :class:`~sitemap_reader.parse.SitemapParser` built on the
  final URL. Each chunk's child sitemaps become new jobs (unless skipped: already
  visited, robots.txt, too deep, over the sitemap budget, not followed); its records
  pass the scope filter and the run-wide dedupe, the incremental watch and the record
  shaper, and leave as one :class:`Emit`.

Every policy lives here: the https -> http fallback of a bare domain, "robots.txt is
not a sitemap", the refused redirect hops ("visited" holds every sitemap scheduled and
every hop followed, so each sitemap is fetched at most once per run), the body retry of
a cut connection, the budgets (``max_urls`` stops the run, ``max_sitemaps`` and
``max_depth`` skip children), the per-sitemap deadline *while parsing* (a driver passes
an ``expired`` check; the body is fed in slices and the check runs between them), the
cap on raw wire bytes, and the run's verdict when nothing was found.

One sitemap's exception never ends the run: whatever a job raises (parser, gunzip,
scope, store, a bug) becomes a fatal ``internal`` problem on its node, and its siblings
go on. Jobs are named by tickets (plain dicts), so a driver holds no core objects and a
ticket from an earlier process is rebuilt into a job.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from sitemap_reader.discovery.actions import Action, Done, Emit, Fetch, Schedule, Stop, Ticket
from sitemap_reader.discovery.config import Config
from sitemap_reader.discovery.dedupe import UrlSet
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import Run, SitemapNode
from sitemap_reader.discovery.observer import NULL_OBSERVER, Observer, StoredChildren
from sitemap_reader.discovery.robots import RobotsRules
from sitemap_reader.discovery.rules import (
    Batch,
    is_robots,
    limit_code,
    origin_prefix,
    run_error,
    server_of,
)
from sitemap_reader.discovery.shaping import Shaper
from sitemap_reader.discovery.targets import Target
from sitemap_reader.parse.normalize import normalize_url, parse_lastmod
from sitemap_reader.parse.parser import Item, SitemapParser
from sitemap_reader.parse.scope import Scope
from sitemap_reader.records import UrlRecord

#: Skipped children kept as nodes per parent; further skips are only counted (a problem
#: on the parent), so an index of 50,000 duplicate entries cannot bloat the tree.
MAX_SKIPPED_NODES = 100
#: Raw bytes per parser feed while a deadline is checked: between two slices the
#: driver's clock is read, so a slow parse ends at the deadline, not after the chunk.
FEED_SLICE = 16 * 1024

Expired = Callable[[], bool]


class Discovery(RobotsRules):
    """One run of discovery over ``targets`` (see the module docstring)."""

    def __init__(
        self,
        targets: Sequence[Target],
        config: Config | None = None,
        *,
        observer: Observer | None = None,
        run: Run | None = None,
        now: datetime | None = None,
    ) -> None:
        self.config = config = config or Config()
        self.limits = config.limits
        self.targets = list(targets)
        self.run = run if run is not None else Run(targets=tuple(t.text for t in targets))
        self.stats = self.run.stats
        self.observer = observer or NULL_OBSERVER
        self.now = now or datetime.now(UTC)
        self.token = uuid.uuid4().hex[:12]
        self.seen = UrlSet()
        self.visited: set[str] = set()
        self.sites: list[Site] = []
        self.jobs: dict[int, Job] = {}
        self.stopped: str | None = None
        self._revived: dict[tuple[str, int], int] = {}
        self._next_id = 0

    # -- the run -------------------------------------------------------------------------

    def start(self) -> list[Action]:
        """The first job of every target."""
        actions: list[Action] = []
        for index, target in enumerate(self.targets):
            self._start(index, target, actions)
        return actions

    def _start(self, index: int, target: Target, actions: list[Action]) -> None:
        if target.kind in ("file", "stdin"):
            root = SitemapNode(target.url, kind=target.kind)
            site = Site(index, target, root, None)
            self.sites.append(site)
            self.run.tree.append(root)
            self._push(site, root, actions)
            return
        kind = "sitemap" if target.kind == "sitemap" else "robots"
        root = SitemapNode(target.url, kind=kind)
        site = Site(index, target, root, Scope(self.config.scope, [target.host or ""]))
        self.sites.append(site)
        self.run.tree.append(root)
        key = normalize_url(target.url) or target.url
        fallback = target.with_scheme("http") if len(target.schemes) > 1 else None
        if key in self.visited:  # the same target twice in one run
            root.skipped = "already visited"
            actions.append(Done(root))
            return
        self.visited.add(key)
        if kind == "sitemap":
            self._push(site, root, actions, fallback)
        else:  # robots.txt jobs are not sitemaps: not in the sitemap counts
            job = self._new_job(site, root, fallback)
            actions.append(Schedule(job.ticket(self.token), server_of(root.url)))

    def stop(self, reason: str) -> list[Action]:
        """End the run early: queued sitemaps are skipped, running ones end at a chunk."""
        if self.stopped is not None:
            return []
        self.stopped = self.stats.stopped = reason
        return [Stop(reason)]

    def finish(self) -> list[Action]:
        """Every job is done: the observer's last write; the run's verdict in ``run.error``."""
        actions: list[Action] = []
        checkpoint = self.observer.finale()
        if checkpoint is not None:
            actions.append(checkpoint)
        self.stats.finished = time.monotonic()
        self.run.error = run_error(self.sites, self.config.guess)
        return actions

    def in_scope(self, url: str, sitemap_url: str | None) -> bool:
        """Whether any target's scope allows ``url`` (for URLs a driver adds itself)."""
        return any(s.scope is None or s.scope.allows(url, sitemap_url) for s in self.sites)

    # -- events ----------------------------------------------------------------------------

    def reading(self, ticket: Ticket) -> bool:
        """True while the job of ``ticket`` wants (more of) its body."""
        job = self._find(ticket)
        return job is not None and job.reading and self.stopped is None

    def begin(self, ticket: Ticket) -> list[Action]:
        """A driver has a slot for the job: what to fetch (or nothing: it is settled)."""
        job = self._find(ticket)
        if job is None:
            return []
        return self._safely(job, self._begin, job)

    def redirect(self, ticket: Ticket, url: str) -> bool:
        """May the job follow a redirect to ``url``? (refuses robots.txt and visited URLs)"""
        job = self._find(ticket)
        if job is None or job.node.kind == "robots":
            return True
        key = normalize_url(url) or url
        if key in job.hops:
            return True
        if is_robots(key) or key in self.visited:
            return False
        self.visited.add(key)
        job.hops.add(key)
        return True

    def refused(
        self, ticket: Ticket, url: str, redirects: Sequence[str], status: int | None = None
    ) -> list[Action]:
        """The driver stopped at a hop :meth:`redirect` refused (``status``: the redirect's)."""
        job = self._find(ticket)
        if job is None:
            return []
        if status is not None:
            job.node.status, job.node.final_url = status, url
        return self._safely(job, self._refused, job, url, redirects)

    def response(
        self,
        ticket: Ticket,
        *,
        url: str,
        status: int,
        headers: Mapping[str, str] | None = None,
        redirects: Sequence[str] = (),
        max_body: int | None = None,
    ) -> list[Action]:
        """The final response's status and headers (after redirects, ``redirects`` the hops).

        ``max_body`` lowers the decompressed-bytes cap (a driver's own download cap)."""
        job = self._find(ticket)
        if job is None:
            return []
        for hop in redirects:  # a driver that follows redirects itself reports them here
            if not self.redirect(ticket, hop):
                return self.refused(ticket, hop, redirects)
        return self._safely(job, self._response, job, url, status, headers or {}, max_body)

    def body(self, ticket: Ticket, chunk: bytes, expired: Expired | None = None) -> list[Action]:
        """A raw chunk of the body; ``expired()`` is the driver's per-sitemap deadline."""
        job = self._find(ticket)
        if job is None or not job.reading:
            return []
        return self._safely(job, self._body, job, chunk, expired)

    def end(self, ticket: Ticket) -> list[Action]:
        """The body ended (or was not wanted, or the driver stopped reading)."""
        job = self._find(ticket)
        if job is None:
            return []
        return self._safely(job, self._end, job)

    def failure(
        self,
        ticket: Ticket,
        code: str,
        message: str,
        *,
        cannot_connect: bool = False,
        status: int | None = None,
    ) -> list[Action]:
        """The fetch failed (``code`` as in :class:`~sitemap_reader.crawl.fetch.FetchFailed`).

        ``cannot_connect``: no connection at all (the https -> http fallback case)."""
        job = self._find(ticket)
        if job is None:
            return []
        return self._safely(job, self._failure, job, code, message, cannot_connect, status)

    def crashed(self, ticket: Ticket, exc: BaseException) -> list[Action]:
        """The driver's own handling of the job raised ``exc``: the job fails, the run goes on."""
        job = self._find(ticket)
        if job is None:
            return []
        return self._crash(job, exc)

    # -- jobs ------------------------------------------------------------------------------

    def _new_job(self, site: Site, node: SitemapNode, fallback: str | None = None) -> Job:
        self._next_id += 1
        shaper = Shaper(self.config.score, self.now)
        job = Job(self._next_id, site, node, self.observer.watch(node), shaper, fallback)
        self.jobs[job.id] = job
        return job

    def _push(
        self, site: Site, node: SitemapNode, actions: list[Action], fallback: str | None = None
    ) -> None:
        site.sitemaps += 1
        self.stats.sitemaps_queued += 1
        job = self._new_job(site, node, fallback)
        actions.append(Schedule(job.ticket(self.token), server_of(node.url)))

    def _find(self, ticket: Ticket) -> Job | None:
        """The job of a ticket; a ticket of another run is rebuilt into a job (once)."""
        run, number = ticket.get("run"), ticket.get("job")
        if not isinstance(number, int):
            return None
        if run == self.token:
            return self.jobs.get(number)
        revived = self._revived.get((str(run), number))
        if revived is not None:
            return self.jobs.get(revived)
        return self._revive(ticket, (str(run), number))

    def _revive(self, ticket: Ticket, key: tuple[str, int]) -> Job | None:
        index, url, kind = ticket.get("target"), ticket.get("url"), ticket.get("kind")
        if not isinstance(index, int) or not 0 <= index < len(self.sites):
            return None
        if not isinstance(url, str) or kind not in ("robots", "sitemap", "guess"):
            return None
        site = self.sites[index]
        lastmod = ticket.get("lastmod")
        node = SitemapNode(
            url,
            kind=str(kind),
            depth=int(ticket.get("depth") or 0),
            lastmod=parse_lastmod(lastmod) if isinstance(lastmod, str) else None,
        )
        if site.scope is not None:
            for host in ticket.get("hosts") or ():
                site.scope.add_host(str(host))
        site.root.children.append(node)
        self.visited.add(normalize_url(url) or url)
        if kind != "robots":
            site.sitemaps += 1
            self.stats.sitemaps_queued += 1
        fallback = ticket.get("fallback")
        job = self._new_job(site, node, fallback if isinstance(fallback, str) else None)
        self._revived[key] = job.id
        return job

    def _safely(self, job: Job, step: Callable[..., list[Action]], *args: object) -> list[Action]:
        """Run one event of ``job``: any exception fails that job only."""
        try:
            return step(*args)
        except Exception as exc:
            return self._crash(job, exc)

    def _crash(self, job: Job, exc: BaseException) -> list[Action]:
        if job.finished:
            return []
        text = str(exc).strip()
        message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        job.node.add_problem("internal", f"internal error: {message}", fatal=True)
        job.reading = False
        job.parser = None  # it may be what broke
        try:
            return self._settle(job)
        except Exception:  # the bookkeeping itself broke: drop the job, keep the run
            job.finished = True
            self.jobs.pop(job.id, None)
            return [Done(job.node)]

    # -- sitemaps and files ----------------------------------------------------------------

    def _begin(self, job: Job) -> list[Action]:
        node = job.node
        if node.kind == "robots":
            return self._robots_begin(job)
        if node.kind in ("file", "stdin"):
            job.parser = SitemapParser(
                None,
                None,
                strict=self.config.strict,
                limits=self.limits,
                now=self.now,
                build=job.shaper.build,
            )
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

    def _fetch(self, job: Job, url: str, *, retry_connect: bool) -> Fetch:
        return Fetch(
            job.ticket(self.token),
            url,
            headers=job.watch.headers(),
            max_redirects=self.limits.max_redirects,
            retry_connect=retry_connect,
            target=job.site.index,
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
        headers: Mapping[str, str],
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
        job.parser = SitemapParser(
            url,
            _header(headers, "content-type"),
            strict=self.config.strict,
            limits=limits,
            now=self.now,
            build=job.shaper.build,
        )
        job.watch.begin(_header(headers, "etag"), _header(headers, "last-modified"))
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
        items = _feed(parser, chunk, expired)
        actions = self._emit(job, items) if items else []
        if expired is not None and not parser.done and expired():
            timeout = self.config.seconds
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
        items = parser.close()
        actions = self._emit(job, items) if items and self.stopped is None else []
        node.format = parser.format
        node.complete = parser.complete
        if any(p.fatal for p in node.problems):
            node.problems.extend(parser.problems)  # the fetch failure came first: the cause
        else:
            node.problems[:0] = parser.problems
        return actions

    def _settle(self, job: Job) -> list[Action]:
        """The job ended: held records go out, the stats count it, the state is written."""
        node = job.node
        actions: list[Action] = []
        rest = job.shaper.release(node)
        if rest:
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
        return actions

    def _count(self, node: SitemapNode) -> None:
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

    # -- children --------------------------------------------------------------------------

    def _walk(self, job: Job, children: StoredChildren, actions: list[Action]) -> None:
        """An unchanged index: its children (as last read) may still have changed."""
        for url, lastmod in children:
            self._add_child(job, url, "sitemap", job.node.depth + 1, lastmod, actions)

    def _add_child(
        self,
        job: Job,
        url: str,
        kind: str,
        depth: int,
        lastmod: datetime | None,
        actions: list[Action],
    ) -> None:
        site, parent = job.site, job.node
        node = SitemapNode(url, kind=kind, depth=depth, lastmod=lastmod)
        key = normalize_url(url) or url
        job.watch.child(url, lastmod)
        reason = self._skip_reason(site, key, kind, depth)
        if reason is None:
            self.visited.add(key)
            parent.children.append(node)
            self._push(site, node, actions)
            return
        node.skipped = reason
        self.stats.sitemaps_skipped += 1
        limit = limit_code(reason)
        if limit is not None:  # sitemaps lost to a bound: say so where -v and the tree show it
            parent.add_problem(limit, f"child sitemaps not fetched: {reason}")
        kept = site.kept_skips.get(job.id, 0)
        if kept < MAX_SKIPPED_NODES:
            site.kept_skips[job.id] = kept + 1
            parent.children.append(node)
            actions.append(Done(node))
        elif limit is None:
            parent.add_problem("children-skipped", f"more skipped child sitemaps, e.g. {url}")

    def _skip_reason(self, site: Site, key: str, kind: str, depth: int) -> str | None:
        limits = self.limits
        if self.stopped is not None:
            return self.stopped
        if is_robots(key):
            return "robots.txt is not a sitemap"
        if key in self.visited:
            return "already visited"
        if depth > limits.max_depth:
            return f"deeper than max_depth={limits.max_depth}"
        if site.sitemaps >= limits.max_sitemaps:
            return f"over max_sitemaps={limits.max_sitemaps}"
        follow = self.config.follow
        if follow and kind == "sitemap" and not any(p.search(key) for p in follow):
            return "not matched by follow"
        return None

    # -- records ---------------------------------------------------------------------------

    def _emit(self, job: Job, items: list[Item]) -> list[Action]:
        """Children become jobs; records pass scope and dedupe and go out as one batch."""
        actions: list[Action] = []
        batch = self._filter(job, items, actions)
        if batch:
            self._send(batch, actions)
        return actions

    def _filter(self, job: Job, items: list[Item], actions: list[Action]) -> Batch:
        """The hot loop: scope (cached per origin prefix), then the run-wide dedupe."""
        node, site = job.node, job.site
        seen_add = self.seen.add
        allows = site.scope.allows if site.scope is not None else None
        base = node.final_url
        batch: Batch = []
        prefix: str | None = None
        in_scope = True
        urls = out = duplicates = 0
        merge = self.config.merge_duplicates
        tracked: Batch | None = [] if merge or job.watch.tracks_duplicates else None
        for item in items:
            if type(item) is not UrlRecord:
                self._add_child(job, item.url, "sitemap", node.depth + 1, item.lastmod, actions)
                continue
            urls += 1
            url = item.url
            if allows is not None and (prefix is None or not url.startswith(prefix)):
                in_scope = allows(url, base)  # the verdict depends on the origin only
                prefix = origin_prefix(url)
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
        batch = job.watch.observe(batch, tracked or [], job.shaper.uniform)
        if merge and tracked and self.stopped is None:
            actions.append(Emit([], job.shaper.repeats(tracked)))
        return job.shaper.shape(node, batch) if batch else batch

    def _send(self, batch: Batch, actions: list[Action]) -> None:
        """Apply the run's URL budget, then emit."""
        cap = self.limits.max_urls
        emitted = self.stats.urls_emitted
        if cap is not None and emitted + len(batch) >= cap:
            batch = batch[: max(0, cap - emitted)]
            actions.extend(self.stop(f"max_urls={cap} reached"))
        self.stats.urls_emitted += len(batch)
        if batch:
            actions.append(Emit(batch))


def _feed(parser: SitemapParser, chunk: bytes, expired: Expired | None) -> list[Item]:
    """Feed a chunk, in slices when there is a deadline to check between them."""
    if expired is None or len(chunk) <= FEED_SLICE:
        return parser.feed(chunk)
    items: list[Item] = []
    for start in range(0, len(chunk), FEED_SLICE):
        items += parser.feed(chunk[start : start + FEED_SLICE])
        if parser.done or expired():
            break
    return items


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """A header by lower-case name from a mapping that may use any case."""
    value = headers.get(name)
    if value is None:
        for key, found in headers.items():
            if key.lower() == name:
                return found
    return value
