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
  final URL (or to the parser a driver's factory makes, which may parse in another
  process: :mod:`~sitemap_reader.discovery.parsing`; :meth:`Discovery.parsed` then
  collects what it has ready between chunks). Each chunk's child sitemaps become new
  jobs (unless skipped: already visited, robots.txt, too deep, over the sitemap
  budget, not followed); its records pass the scope filter and the run-wide dedupe,
  the incremental watch and the record shaper, and leave as one :class:`Emit`.

Every policy lives here: the https -> http fallback of a bare domain, "robots.txt is
not a sitemap", the refused redirect hops ("visited" holds every sitemap scheduled and
every hop followed, so each sitemap is fetched at most once per run), the body retry of
a cut connection, the budgets (``max_urls`` stops the run, ``max_sitemaps`` and
``max_depth`` skip children; with ``max_urls`` a body is fed in small slices so the
run stops within a slice of the budget; ``deadline`` stops the run once that many seconds
passed, read on the driver's clock at every job start and chunk, see :meth:`Discovery.overdue`),
the per-sitemap deadline *while parsing* (a driver passes
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

from sitemap_reader.discovery.actions import Action, Done, Schedule, Stop, Ticket
from sitemap_reader.discovery.dedupe import UrlSet
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import Run, SitemapNode
from sitemap_reader.discovery.observer import NULL_OBSERVER, Observer
from sitemap_reader.discovery.parsing import ParserFactory, local_parser
from sitemap_reader.discovery.rules import is_robots, run_error, server_of
from sitemap_reader.discovery.shaping import Shaper
from sitemap_reader.discovery.sitemaps import Expired, SitemapRules, feed_size
from sitemap_reader.discovery.targets import Target
from sitemap_reader.discovery.ways import WAY_KINDS
from sitemap_reader.options import Options
from sitemap_reader.parse.normalize import normalize_url, parse_lastmod
from sitemap_reader.parse.scope import Scope

#: How the reason of a deadline stop begins (a summary tells it from a budget by this).
DEADLINE_STOP = "at the deadline"


def deadline_reason(seconds: float | None) -> str:
    """The stop reason of a run that reached its deadline: ``at the deadline (30 s)``."""
    return f"{DEADLINE_STOP} ({seconds:g} s)"


class Discovery(SitemapRules):
    """One run of discovery over ``targets`` (see the module docstring)."""

    def __init__(
        self,
        targets: Sequence[Target],
        options: Options | None = None,
        *,
        observer: Observer | None = None,
        run: Run | None = None,
        now: datetime | None = None,
        parsers: ParserFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        merge: bool = False,
    ) -> None:
        self.options = options = options or Options()
        #: The output is held (ranked, ``top``): the in-scope copies of URLs emitted before
        #: go out too, as :attr:`~sitemap_reader.discovery.actions.Emit.repeats`, to merge.
        self.merge = merge
        #: The driver's clock (seconds, monotonic) and the instant the run's deadline passes.
        self.clock = clock
        deadline = options.timeouts.deadline
        self.deadline_at = None if deadline is None else clock() + deadline
        self.deadline_passed = False
        #: Makes the parser of each body (a driver may parse elsewhere: ``parsing``).
        self.parsers: ParserFactory = parsers or local_parser
        self.limits = options.limits
        self.targets = list(targets)
        self.run = run if run is not None else Run(targets=tuple(t.text for t in targets))
        self.stats = self.run.stats
        self.observer = observer or NULL_OBSERVER
        self.now = now or datetime.now(UTC)
        self.token = uuid.uuid4().hex[:12]
        self.seen = UrlSet()
        self.visited: set[str] = set()
        #: Crawl delays robots.txt asked for, by server (``host[:port]``), as honoured.
        self.delays: dict[str, float] = {}
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
        site = Site(index, target, root, Scope(self.options.walk.scope, [target.host or ""]))
        self.sites.append(site)
        self.run.tree.append(root)
        key = normalize_url(target.url) or target.url
        fallback = target.with_scheme("http") if len(target.schemes) > 1 else None
        if key in self.visited:  # the same target twice in one run
            root.skipped = "already visited"
            actions.append(Done(root))
            return
        self.visited.add(key)
        self._start_ways(site, actions)
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

    def overdue(self) -> list[Action]:
        """Stop the run if its deadline passed (a driver may call it at any time, e.g. when
        a wait of its own ends); the core itself calls it as each job starts and each chunk
        arrives."""
        if self.deadline_at is None or self.stopped is not None or self.clock() < self.deadline_at:
            return []
        self.deadline_passed = True
        return self.stop(deadline_reason(self.options.timeouts.deadline))

    def remaining(self) -> float | None:
        """Seconds until the run's deadline (0 once it passed; None without one)."""
        if self.deadline_at is None:
            return None
        return max(0.0, self.deadline_at - self.clock())

    def finish(self) -> list[Action]:
        """Every job is done: the observer's last write; the run's verdict in ``run.error``."""
        actions: list[Action] = []
        checkpoint = self.observer.finale()
        if checkpoint is not None:
            actions.append(checkpoint)
        self.stats.finished = time.monotonic()
        self.run.error = run_error(self.sites, self.options.walk.guess)
        return actions

    def delay_for(self, url: str) -> float:
        """Seconds between two requests to the server of ``url``: the ``delay`` option, or
        the crawl delay its robots.txt asked for (capped) when that is longer."""
        return max(self.options.politeness.delay, self.delays.get(server_of(url), 0.0))

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
        late = self.overdue()
        return late + self._safely(job, self._begin, job)

    def redirect(self, ticket: Ticket, url: str) -> bool:
        """May the job follow a redirect to ``url``? (refuses robots.txt and visited URLs)"""
        job = self._find(ticket)
        if job is None:
            return True
        key = normalize_url(url) or url
        if job.node.kind == "robots":
            job.hops.add(key)  # followed: a failure after it is the hop's, not the host's
            return True
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
        response_headers: Mapping[str, str] | None = None,
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
        fields = response_headers or {}
        return self._safely(job, self._response, job, url, status, fields, max_body)

    def body(self, ticket: Ticket, chunk: bytes, expired: Expired | None = None) -> list[Action]:
        """A raw chunk of the body; ``expired()`` is the driver's per-sitemap deadline."""
        job = self._find(ticket)
        if job is None or not job.reading:
            return []
        late = self.overdue()
        return late + self._safely(job, self._body, job, chunk, expired)

    def feed_size(self, ticket: Ticket, chunk: bytes) -> int:
        """How many raw bytes of ``chunk`` to pass to :meth:`body` at once (see
        :func:`~sitemap_reader.discovery.sitemaps.feed_size`)."""
        job = self._find(ticket)
        return len(chunk) if job is None or job.parser is None else feed_size(job, chunk)

    def parsed(self, ticket: Ticket) -> list[Action]:
        """The job's parser, working elsewhere, has items ready: the core collects them."""
        job = self._find(ticket)
        if job is None or not job.reading or self.stopped is not None:
            return []
        return self._safely(job, self._parsed, job)

    def end(self, ticket: Ticket, *, seconds: float | None = None) -> list[Action]:
        """The body ended (or was not wanted, or the driver stopped reading); ``seconds``
        is how long the download took, if the driver measured it (the tree shows it)."""
        job = self._find(ticket)
        if job is None:
            return []
        if seconds is not None:
            job.node.seconds = seconds
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
        shaper = Shaper(self.options.walk.score, self.now)
        job = Job(self._next_id, site, node, self.observer.watch(node), shaper, fallback)
        self.jobs[job.id] = job
        site.pending += 1
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
        if not isinstance(url, str) or kind not in ("robots", "sitemap", "guess", *WAY_KINDS):
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
        """Run one event of ``job``: any exception fails that job only. A job that
        finished is retired (what waited on it, an idle site's next way in)."""
        try:
            actions = step(*args)
        except Exception as exc:
            actions = self._crash(job, exc)
        if job.finished and not job.retired:
            try:
                actions += self._retire(job)
            except Exception as exc:
                job.node.add_problem("internal", f"internal error: {type(exc).__name__}: {exc}")
        return actions

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
