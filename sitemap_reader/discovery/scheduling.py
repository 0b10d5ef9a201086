"""Jobs and their tickets (:class:`Scheduling`): made, scheduled, found, revived, closed.

A job is named outside the core by its ticket (a plain dict, :meth:`Job.ticket`). This
part owns the jobs of the run by number, makes each one with its watch and its record
shaper, and turns a ticket back into its job, rebuilding the job once when the ticket
comes from another run (a resumed Scrapy ``JOBDIR``, another worker's queue).
"""

from __future__ import annotations

from sitemap_reader.discovery.actions import Action, Done, Schedule, Ticket
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import REVIVABLE_KINDS, SitemapNode
from sitemap_reader.discovery.rules import server_of
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.shaping import Shaper
from sitemap_reader.parse.normalize import normalize_url, parse_lastmod


class Scheduling:
    """The run's jobs by number, and the tickets that name them."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        #: The jobs not finished yet, by number.
        self.jobs: dict[int, Job] = {}
        #: Tickets of other runs already rebuilt: (their run, their number) -> our number.
        self._revived: dict[tuple[str, int], int] = {}
        self._next_id = 0

    def new_job(self, site: Site, node: SitemapNode, fallback: str | None = None) -> Job:
        """A job for ``node`` (not counted as a sitemap: see :meth:`push`)."""
        state = self.state
        self._next_id += 1
        shaper = Shaper(state.options.walk.score, state.now, site.audit.verdict, state.due)
        job = Job(self._next_id, site, node, state.observer.watch(node), shaper, fallback)
        self.jobs[job.id] = job
        site.pending += 1
        return job

    def schedule(self, job: Job) -> Schedule:
        """The action that asks a driver to run ``job``."""
        return Schedule(job.ticket(self.state.token), server_of(job.node.url))

    def push(
        self, site: Site, node: SitemapNode, actions: list[Action], fallback: str | None = None
    ) -> Job:
        """A new sitemap job, counted in the site's budget and the stats, and scheduled."""
        site.sitemaps += 1
        self.state.stats.sitemaps_queued += 1
        job = self.new_job(site, node, fallback)
        actions.append(self.schedule(job))
        return job

    def close(self, job: Job) -> Done:
        """``job`` is finished: forgotten here; its node is final."""
        job.finished = True
        self.jobs.pop(job.id, None)
        return Done(job.node, job.ticket(self.state.token))

    def find(self, ticket: Ticket) -> Job | None:
        """The job of a ticket; a ticket of another run is rebuilt into a job (once)."""
        run, number = ticket.get("run"), ticket.get("job")
        if not isinstance(number, int):
            return None
        if run == self.state.token:
            return self.jobs.get(number)
        revived = self._revived.get((str(run), number))
        if revived is not None:
            return self.jobs.get(revived)
        return self._revive(ticket, (str(run), number))

    def _revive(self, ticket: Ticket, key: tuple[str, int]) -> Job | None:
        state = self.state
        index, url, kind = ticket.get("target"), ticket.get("url"), ticket.get("kind")
        if not isinstance(index, int) or not 0 <= index < len(state.sites):
            return None
        if not isinstance(url, str) or kind not in REVIVABLE_KINDS:
            return None
        site = state.sites[index]
        lastmod = ticket.get("lastmod")
        node = SitemapNode(
            url,
            kind=str(kind),
            depth=int(ticket.get("depth") or 0),
            lastmod=parse_lastmod(lastmod) if isinstance(lastmod, str) else None,
        )
        if site.url_scope is not None:
            for host in ticket.get("hosts") or ():
                site.url_scope.add_host(str(host))
        site.root.children.append(node)
        state.visited.add(normalize_url(url) or url)
        if kind != "robots":
            site.sitemaps += 1
            state.stats.sitemaps_queued += 1
        fallback = ticket.get("fallback")
        job = self.new_job(site, node, fallback if isinstance(fallback, str) else None)
        self._revived[key] = job.id
        return job
