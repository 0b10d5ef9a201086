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

The parts
---------
:class:`Discovery` is a facade over parts that each own their state and get their
collaborators in their constructors, in this order (no part imports one built after it):

* :class:`~.state.RunState`: what the run shares (options, stats, dedupe, visited,
  delays, sites, the clock, the stop);
* :class:`~.scheduling.Scheduling`: the jobs by number and their tickets;
* :class:`~.children.Children`: which child sitemaps become jobs (the skip rule,
  :func:`~.children.skip_reason`, is a pure function);
* :class:`~.records.RecordGate`: which records go out, and when;
* :class:`~.settle.Settling`: the end of a job;
* the job parts, one per node kind (:data:`Discovery.parts`): :class:`~.robots.RobotsJob`
  (``robots``), :class:`~.sitemaps.SitemapJob` (the sitemap kinds), the same class with the
  HTML page parser (:mod:`~.html`: ``home``, ``html``, ``html-guess``), and
  :class:`~.sitemaps.FileJob` (``file``, ``stdin``);
* :class:`~.ways.Ways`: what an idle site does next (the parent domain, HTML pages).

Each event finds its job by ticket and hands it to the part of the node's kind. A
node's kind changes only along :data:`~.model.KIND_CHANGES`, between kinds whose parts
handle a body alike, so a job never changes hands in the middle of one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from sitemap_reader.discovery.actions import Action, Done, Ticket
from sitemap_reader.discovery.children import VISITED, Children
from sitemap_reader.discovery.html import html_page, sniffing
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import HTML_KINDS, Run, SitemapNode, Stopped
from sitemap_reader.discovery.observer import Observer
from sitemap_reader.discovery.parsing import Expired, ParserFactory, local_parser
from sitemap_reader.discovery.records import RecordGate
from sitemap_reader.discovery.robots import RobotsJob
from sitemap_reader.discovery.robots_audit import RobotsAudit
from sitemap_reader.discovery.rules import run_error, target_errors
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.discovery.settle import Settling
from sitemap_reader.discovery.sitemaps import FileJob, SitemapJob, feed_size
from sitemap_reader.discovery.targets import Target
from sitemap_reader.discovery.verdicts import verdict_of, verdicts
from sitemap_reader.discovery.ways import Ways
from sitemap_reader.options import Options
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.scope import Scope
from sitemap_reader.records.outcomes import Verdict


class JobPart(Protocol):
    """What the core asks of the part of a node kind, one method per event of a job."""

    def begin(self, job: Job) -> list[Action]: ...

    def follows(self, job: Job, key: str) -> bool: ...

    def refused(self, job: Job, url: str, redirects: Sequence[str]) -> list[Action]: ...

    def response(
        self, job: Job, url: str, status: int, fields: Mapping[str, str], max_body: int | None
    ) -> list[Action]: ...

    def body(self, job: Job, chunk: bytes, expired: Expired | None = None) -> list[Action]: ...

    def parsed(self, job: Job) -> list[Action]: ...

    def end(self, job: Job) -> list[Action]: ...

    def failure(
        self, job: Job, code: str, message: str, cannot_connect: bool, status: int | None
    ) -> list[Action]: ...


class Discovery:
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
        options = options or Options()
        state = self.state = RunState(
            targets, options, observer=observer, run=run, now=now, clock=clock
        )
        jobs = self.scheduling = Scheduling(state)
        children = Children(state, jobs)
        gate = self.gate = RecordGate(state, children, merge=merge)
        settling = self.settling = Settling(state, jobs, children, gate)
        robots = RobotsJob(state, jobs, children, settling)
        made = parsers or local_parser
        sitemaps = SitemapJob(state, jobs, children, gate, settling, made, sniffing(options.walk))
        pages = SitemapJob(state, jobs, children, gate, settling, made, html_page)
        local = FileJob(sitemaps)
        self.ways = Ways(state, jobs, gate, self._climb)
        #: The part of each node kind.
        self.parts: Mapping[str, JobPart] = {
            "robots": robots,
            "sitemap": sitemaps,
            "guess": sitemaps,
            "listed": sitemaps,
            "file": local,
            "stdin": local,
            **dict.fromkeys(HTML_KINDS, pages),
        }
        # The run's values a driver reads (the same objects the parts hold).
        self.options, self.run, self.stats = options, state.run, state.stats
        self.seen, self.sites, self.jobs = state.seen, state.sites, jobs.jobs
        self.visited, self.delays, self.merge = state.visited, state.delays, merge
        self.limits, self.now, self.token = state.limits, state.now, state.token

    @property
    def stopped(self) -> Stopped | None:
        """Why the run stopped early (its records budget, the deadline), or None while it
        goes on."""
        return self.state.stopped

    # -- the run -------------------------------------------------------------------------

    def start(self) -> list[Action]:
        """The first job of every target."""
        actions: list[Action] = []
        for index, target in enumerate(self.state.targets):
            self._start(index, target, actions)
        return actions

    def _start(
        self, index: int, target: Target, actions: list[Action], ladder: Verdict | None = None
    ) -> None:
        state = self.state
        politeness = state.options.politeness
        audit = RobotsAudit(politeness.robots_agent or politeness.user_agent)
        client = (
            "browser"
            if ladder is not None or state.options.network.client == "browser"
            else "aiohttp"
        )
        if target.kind in ("file", "stdin"):
            root = SitemapNode(target.url, kind=target.kind)
            site = Site(index, target, root, None, audit)
            self._place(site)
            self.scheduling.push(site, root, actions)
            return
        kind = "sitemap" if target.kind == "sitemap" else "robots"
        root = SitemapNode(target.url, kind=kind)
        scope = Scope(state.options.walk.scope, [target.host or ""])
        site = Site(index, target, root, scope, audit, client=client, ladder=ladder)
        self._place(site)
        key = normalize_url(target.url) or target.url
        fallback = target.with_scheme("http") if len(target.schemes) > 1 else None
        if key in state.visited:  # the same target twice in one run
            root.skipped = VISITED
            actions.append(Done(root))
            return
        state.visited.add(key)
        self.ways.start(site, actions)
        if kind == "sitemap":
            self.scheduling.push(site, root, actions, fallback)
        else:  # robots.txt jobs are not sitemaps: not in the sitemap counts
            job = self.scheduling.new_job(site, root, fallback)
            actions.append(self.scheduling.schedule(job))

    def _place(self, site: Site) -> None:
        """A new site in the run (or in place of its target's first attempt)."""
        state = self.state
        if site.index < len(state.sites):
            old = state.sites[site.index]
            state.sites[site.index] = site
            tree = state.run.tree
            tree[next(i for i, root in enumerate(tree) if root is old.root)] = site.root
            return
        state.sites.append(site)
        state.run.tree.append(site.root)

    def _climb(self, site: Site, actions: list[Action]) -> None:
        """The client ladder (``client="auto"``): a target that bot protection blocked,
        idle with no other way in left, is read once more from its start with the browser
        client, which presents a browser's TLS and HTTP/2 fingerprint. Once only; the new
        attempt's verdict keeps the first one (``Verdict.ladder``), and its tree replaces
        the first attempt's (the URLs the first fetched are forgotten, so the second may
        fetch them again)."""
        state = self.state
        if state.options.network.client != "auto" or site.client != "aiohttp":
            return
        if state.stopped is not None or site.target.kind in ("file", "stdin"):
            return
        first = verdict_of(site, None, state.options.politeness.obey_robots)
        if first.kind != "blocked":
            return
        visited = state.visited
        for node in site.root.walk():
            for url in (node.url, node.final_url):
                if url is not None:
                    visited.discard(normalize_url(url) or url)
        visited.difference_update(site.hops)
        self._start(site.index, site.target, actions, ladder=first)

    def stop(self, stopped: Stopped) -> list[Action]:
        """End the run early (a driver's stop, say the caller's): queued sitemaps are
        skipped, the bodies being read end."""
        return self.state.stop(stopped)

    def overdue(self) -> list[Action]:
        """Stop the run if its deadline passed (a driver may call it at any time, e.g. when
        a wait of its own ends); the core itself calls it as each job starts and each chunk
        arrives."""
        return self.state.overdue()

    def remaining(self) -> float | None:
        """Seconds until the run's deadline (0 once it passed; None without one)."""
        return self.state.remaining()

    def finish(self) -> list[Action]:
        """Every job is done: the observer's last write; the run's verdict in
        ``run.failed_targets`` (each target that gave nothing) and ``run.error`` (all did)."""
        state = self.state
        actions: list[Action] = []
        checkpoint = state.observer.finale()
        if checkpoint is not None:
            actions.append(checkpoint)
        state.stats.finished = time.monotonic()
        failed = target_errors(state.sites, state.options.walk.guess, state.stopped)
        state.run.failed_targets = failed
        obey = state.options.politeness.obey_robots
        state.run.verdicts = verdicts(state.sites, state.stopped, obey)
        state.run.error = run_error(state.sites, failed)
        return actions

    def delay_for(self, url: str) -> float:
        """Seconds between two requests to the server of ``url``: the ``delay`` option, or
        the crawl delay its robots.txt asked for (capped) when that is longer."""
        return self.state.delay_for(url)

    def in_scope(self, url: str, sitemap_url: str | None) -> bool:
        """Whether any target's scope allows ``url`` (for URLs a driver adds itself)."""
        return self.state.in_scope(url, sitemap_url)

    # -- events ----------------------------------------------------------------------------

    def reading(self, ticket: Ticket) -> bool:
        """True while the job of ``ticket`` wants (more of) its body."""
        job = self.scheduling.find(ticket)
        return job is not None and job.reading and self.state.stopped is None

    def begin(self, ticket: Ticket) -> list[Action]:
        """A driver has a slot for the job: what to fetch (or nothing: it is settled)."""
        job = self.scheduling.find(ticket)
        if job is None:
            return []
        late = self.state.overdue()
        return late + self._safely(job, self._part(job).begin, job)

    def redirect(self, ticket: Ticket, url: str) -> bool:
        """May the job follow a redirect to ``url``? (refuses robots.txt and visited URLs)"""
        job = self.scheduling.find(ticket)
        if job is None:
            return True
        return self._part(job).follows(job, normalize_url(url) or url)

    def refused(
        self, ticket: Ticket, url: str, redirects: Sequence[str], status: int | None = None
    ) -> list[Action]:
        """The driver stopped at a hop :meth:`redirect` refused (``status``: the redirect's)."""
        job = self.scheduling.find(ticket)
        if job is None:
            return []
        if status is not None:
            job.node.status, job.node.final_url = status, url
        return self._safely(job, self._part(job).refused, job, url, redirects)

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
        job = self.scheduling.find(ticket)
        if job is None:
            return []
        for hop in redirects:  # a driver that follows redirects itself reports them here
            if not self.redirect(ticket, hop):
                return self.refused(ticket, hop, redirects)
        fields = response_headers or {}
        return self._safely(job, self._part(job).response, job, url, status, fields, max_body)

    def body(self, ticket: Ticket, chunk: bytes, expired: Expired | None = None) -> list[Action]:
        """A raw chunk of the body; ``expired()`` is the driver's per-sitemap deadline."""
        job = self.scheduling.find(ticket)
        if job is None or not job.reading:
            return []
        late = self.state.overdue()
        return late + self._safely(job, self._part(job).body, job, chunk, expired)

    def feed_size(self, ticket: Ticket, chunk: bytes) -> int:
        """How many raw bytes of ``chunk`` to pass to :meth:`body` at once (see
        :func:`~sitemap_reader.discovery.sitemaps.feed_size`)."""
        job = self.scheduling.find(ticket)
        return len(chunk) if job is None or job.parser is None else feed_size(job, chunk)

    def parsed(self, ticket: Ticket) -> list[Action]:
        """The job's parser, working elsewhere, has items ready: the core collects them."""
        job = self.scheduling.find(ticket)
        if job is None or not job.reading or self.state.stopped is not None:
            return []
        return self._safely(job, self._part(job).parsed, job)

    def end(self, ticket: Ticket, *, seconds: float | None = None) -> list[Action]:
        """The body ended (or was not wanted, or the driver stopped reading); ``seconds``
        is how long the download took, if the driver measured it (the tree shows it)."""
        job = self.scheduling.find(ticket)
        if job is None:
            return []
        if seconds is not None:
            job.node.seconds = seconds
        return self._safely(job, self._part(job).end, job)

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
        job = self.scheduling.find(ticket)
        if job is None:
            return []
        part = self._part(job)
        return self._safely(job, part.failure, job, code, message, cannot_connect, status)

    def crashed(self, ticket: Ticket, exc: BaseException) -> list[Action]:
        """The driver's own handling of the job raised ``exc``: the job fails, the run goes on."""
        job = self.scheduling.find(ticket)
        if job is None:
            return []
        return self._crash(job, exc)

    # -- jobs ------------------------------------------------------------------------------

    def _part(self, job: Job) -> JobPart:
        """The part that handles the events of ``job`` (by the kind of its node)."""
        return self.parts[job.node.kind]

    def _safely(self, job: Job, step: Callable[..., list[Action]], *args: object) -> list[Action]:
        """Run one event of ``job``: any exception fails that job only. A job that
        finished is retired (what waited on it, an idle site's next way in)."""
        try:
            actions = step(*args)
        except Exception as exc:
            actions = self._crash(job, exc)
        if job.finished and not job.retired:
            try:
                actions += self.ways.retired(job)
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
            return self.settling.settle(job)
        except Exception:  # the bookkeeping itself broke: drop the job, keep the run
            job.finished = True
            self.scheduling.jobs.pop(job.id, None)
            return [Done(job.node)]
