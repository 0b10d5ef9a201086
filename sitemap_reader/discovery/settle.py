"""The end of a job (:class:`Settling`): what it held goes out, it is counted, its state
is written, and the sitemaps robots.txt listed learn whether it led anywhere.

Every job that is not a robots.txt ends here (a robots.txt job ends itself when its
children are known), and so does any job whose handling raised (``core._crash``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sitemap_reader.discovery import evidence
from sitemap_reader.discovery.actions import Action
from sitemap_reader.discovery.children import STOPPED, Children
from sitemap_reader.discovery.job import Job
from sitemap_reader.discovery.model import PROBE_KINDS, SitemapNode, Skipped, change_kind
from sitemap_reader.discovery.records import RecordGate
from sitemap_reader.discovery.rules import is_robots
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.parse.normalize import normalize_url

#: A part's failure event: (job, code, message, cannot_connect, status) -> actions.
Failure = Callable[[Job, str, str, bool, int | None], list[Action]]


class Settling:
    """Ends jobs (see the module docstring)."""

    def __init__(
        self, state: RunState, scheduling: Scheduling, children: Children, gate: RecordGate
    ) -> None:
        self.state = state
        self.scheduling = scheduling
        self.children = children
        self.gate = gate

    def settle(self, job: Job) -> list[Action]:
        """The job ended: held records go out, the stats count it, a listed loc gets its
        verdict, the state is written (behind the records it covers, also an HTML page's
        held until the site is idle)."""
        node = job.node
        actions: list[Action] = []
        self.gate.release(job, actions)
        evidence.judge(job)
        # Before _count: a probe's miss becomes a skip there, whatever cut it.
        cut = self.state.stopped is not None and (node.skipped is STOPPED or node.cut_short)
        self._count(node)
        if node.kind == "listed":
            self._listed_verdict(job, cut, actions)
        status_ok = node.unchanged is not None or 200 <= (node.status or 0) < 300
        complete = node.ok and status_ok and self.state.stopped is None
        checkpoint = job.watch.settle(node, complete)
        if checkpoint is not None and not self.gate.hold_checkpoint(job, checkpoint):
            actions.append(checkpoint)
        actions.append(self.scheduling.close(job))
        actions += self.children.listed_settled(job)  # robots.txt may have led nowhere
        return actions

    def _listed_verdict(self, job: Job, cut: bool, actions: list[Action]) -> None:
        """A listed loc ended: a sitemap after all, or a page whose record goes out
        before the job's checkpoint (the write that covers it). One the run's stop cut
        before its body said which keeps no verdict; its record still goes out under a
        deadline (what was read is kept), as it does under a timeout."""
        node = job.node
        if node.format not in (None, "unknown"):
            change_kind(node, "sitemap")
            return
        if not cut:
            node.skipped = Skipped("page", "not a sitemap: kept as a page")
        self.gate.kept_as_page(job, actions)

    def refused(
        self, job: Job, url: str, redirects: Sequence[str], failure: Failure
    ) -> list[Action]:
        """The driver stopped at a hop the core refused: a hop back into the job's own
        chain is a loop (the job's ``failure``), any other a skip."""
        node = job.node
        refused = normalize_url(url) or url
        if refused in {normalize_url(u) or u for u in [node.url, *redirects[:-1]]}:
            chain = " -> ".join([node.url, *redirects])
            return failure(job, "redirects", f"redirect loop: {chain}", False, None)
        what = "robots.txt" if is_robots(url) else "an already visited sitemap"
        node.skipped = Skipped("redirect", f"redirects to {what}: {url}")
        job.reading = False
        return self.settle(job)

    def _count(self, node: SitemapNode) -> None:
        stats = self.state.stats
        stats.sitemaps_queued -= 1
        if node.kind in PROBE_KINDS and node.skipped is None and node.format in (None, "unknown"):
            # A probe that missed: no failure; its answer is the detail.
            node.skipped = Skipped("not-found", f"not found ({node.reason})", node.reason)
            return
        if node.skipped is not None:
            stats.sitemaps_skipped += 1
        elif node.ok:
            stats.sitemaps_ok += 1
        else:
            stats.sitemaps_failed += 1
