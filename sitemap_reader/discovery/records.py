"""The record gate (:class:`RecordGate`): which records of a body go out, and when.

Each chunk's items pass here in order. A child sitemap goes to
:class:`~sitemap_reader.discovery.children.Children`. A record passes the site's scope
(decided once per origin), becomes a child of kind ``listed`` when it names a sitemap
(``follow_urlset_sitemaps``), then the run-wide dedupe; the records robots.txt
disallows (each record's builder asked the site's robots audit) are counted; then the
incremental watch and the job's record shaper (:mod:`~sitemap_reader.discovery.shaping`)
have their say. The records of an HTML
sitemap page are held until the site is idle, so the links every page shares
(navigation) are told apart, and the page's checkpoint with them; the rest go out at
once. A listed loc that is a page goes out as its job settles, under a deadline too. On the way out,
``obey_robots`` drops what robots.txt disallows, ``since`` what is older, ``include``
and ``exclude`` what the delivery leaves out (each counted), and the records budget
(``max_urls``, unless the output waits for the whole run) stops the run.
"""

from __future__ import annotations

import dataclasses

from sitemap_reader.discovery.actions import Action, Checkpoint, Emit
from sitemap_reader.discovery.children import Children, listed_sitemap
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import Stopped
from sitemap_reader.discovery.robots_audit import origin_prefix
from sitemap_reader.discovery.rules import Batch
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.parse.html import HTML_FORMAT
from sitemap_reader.parse.parser import Item
from sitemap_reader.records import UrlRecord


class RecordGate:
    """Records from a body to the output (see the module docstring)."""

    def __init__(self, state: RunState, children: Children, *, merge: bool = False) -> None:
        self.state = state
        self.children = children
        #: The output is held (ranked, ``top``): the in-scope copies of URLs emitted before
        #: go out too, as :attr:`~sitemap_reader.discovery.actions.Emit.repeats`, to merge.
        self.merge = merge

    def emit(self, job: Job, items: list[Item]) -> list[Action]:
        """Children become jobs; records pass scope and dedupe and go out as one batch."""
        actions: list[Action] = []
        batch = self._filter(job, items, actions)
        self._scorer_late(actions)
        if batch and not self._held(job, batch, actions):
            self.send(batch, actions)
        return actions

    def release(self, job: Job, actions: list[Action]) -> None:
        """The job ended: what its shaper still holds goes out (or waits with the page's)."""
        rest = job.shaper.release(job.node)
        self._scorer_late(actions)
        if rest and not self._held(job, rest, actions):
            self.send(rest, actions)

    def _scorer_late(self, actions: list[Action]) -> None:
        """A custom scorer may be slow: the shaper stopped calling it at the deadline (and
        dropped the records it did not score), so the run stops now."""
        if self.state.options.walk.score is not None:
            actions.extend(self.state.overdue())

    def _filter(self, job: Job, items: list[Item], actions: list[Action]) -> Batch:
        """The hot loop: scope (cached per origin prefix), then the run-wide dedupe."""
        state, node, site = self.state, job.node, job.site
        seen_add = state.seen.add
        allows = site.url_scope.allows if site.url_scope is not None else None
        base = node.final_url
        batch: Batch = []
        prefix: str | None = None
        in_scope = True
        urls = out = duplicates = 0
        merge = self.merge
        tracked: Batch | None = [] if merge or job.watch.tracks_duplicates else None
        walk = state.options.walk
        listed = walk.follow_urlset_sitemaps
        for item in items:
            if type(item) is not UrlRecord:
                self.children.named(job, item.url, item.lastmod, actions)
                continue
            urls += 1
            url = item.url
            if allows is not None and (prefix is None or not url.startswith(prefix)):
                in_scope = allows(url, base)  # the verdict depends on the origin only
                prefix = origin_prefix(url)
            if not in_scope:
                out += 1
            elif listed and listed_sitemap(url, node.kind, walk):
                self.children.follow_listed(job, item, actions)
            elif seen_add(url):
                batch.append(item)
            else:
                duplicates += 1
                if tracked is not None:  # still listed by this sitemap: the state needs it
                    tracked.append(item)
        node.urls += urls
        state.stats.urls_out_of_scope += out
        state.stats.urls_duplicate += duplicates
        if site.audit.rules is not None and batch:
            self._count_disallowed(job, batch)
        batch = job.watch.observe(batch, tracked or [], job.shaper.uniform)
        if merge and tracked and state.stopped is None:
            repeats = self._passing(job.shaper.repeats(tracked))[0]
            if repeats:  # a copy the output would drop never comes back through a merge
                actions.append(Emit([], repeats))
        return job.shaper.shape(node, batch) if batch else batch

    def _count_disallowed(self, job: Job, batch: Batch) -> None:
        """The new records robots.txt disallows (their builder asked the site's audit),
        counted on the node and in the stats."""
        disallowed = [r.robots for r in batch].count("disallowed")
        job.node.disallowed += disallowed
        self.state.stats.urls_disallowed += disallowed

    def kept_as_page(self, job: Job, actions: list[Action]) -> None:
        """A listed loc whose body is not a sitemap: its record goes out as a page, with
        the robots verdict as of now (rebuilt if robots.txt was read since it was built)."""
        record, state, audit = job.page, self.state, job.site.audit
        # A deadline keeps what was read (the loc was), a budget stop does not.
        dropped = state.stopped is not None and not state.deadline_passed
        if record is None or dropped or not state.seen.add(record.url):
            return
        if audit.rules is not None:
            verdict = audit.verdict(record.url)
            if verdict != record.robots:
                record = dataclasses.replace(record, robots=verdict)
            self._count_disallowed(job, [record])
        self.send([record], actions)

    def _passing(self, batch: Batch) -> tuple[Batch, int, int]:
        """The records ``obey_robots``, ``since``, ``include`` and ``exclude`` let
        through, and how many of the others were older than ``since`` and how many the
        delivery's filters left out."""
        options = self.state.options
        if options.politeness.obey_robots:
            batch = [r for r in batch if r.robots != "disallowed"]
        older = filtered = 0
        since = options.walk.since
        if since is not None:
            kept = [r for r in batch if r.lastmod is None or r.lastmod >= since]
            older, batch = len(batch) - len(kept), kept
        delivery = options.delivery
        if delivery.wanted:
            kept = [r for r in batch if delivery.keeps(r.url)]
            filtered, batch = len(batch) - len(kept), kept
        return batch, older, filtered

    def send(self, batch: Batch, actions: list[Action]) -> None:
        """Drop what robots.txt disallows (``obey_robots``), what is older than ``since``
        and what the delivery's filters leave out (counted), apply the run's records
        budget, then emit."""
        state = self.state
        stats = state.stats
        batch, older, filtered = self._passing(batch)
        stats.urls_older += older
        stats.urls_filtered += filtered
        cap = state.options.delivery.budget
        emitted = stats.urls_emitted
        if cap is not None and emitted + len(batch) >= cap:
            batch = batch[: max(0, cap - emitted)]
            actions.extend(state.stop(Stopped("budget", "max_urls", cap)))
        stats.urls_emitted += len(batch)
        if batch:
            actions.append(Emit(batch))

    # -- links every HTML sitemap page shares ------------------------------------------------

    def _held(self, job: Job, batch: Batch, actions: list[Action]) -> bool:
        """Hold the records of an HTML sitemap page until the site is idle (then the links
        every page shares are told apart); False: send them now."""
        pages = job.site.pages
        if job.links is None or pages.streaming:
            return False
        pages.held.append((job.node, batch))
        pages.held_count += len(batch)
        cap = self.state.limits.max_html_held
        if pages.held_count > cap:
            job.node.add_problem(
                "limit-html-held",
                f"more than {cap:,} records of HTML pages held: the later pages go out at once",
            )
            pages.streaming = True
            self.release_html(job.site, actions)
        return True

    def hold_checkpoint(self, job: Job, checkpoint: Checkpoint) -> bool:
        """An HTML page whose records are held: its checkpoint waits behind them (a
        consumer killed before they go out finds the page not written); False: not held."""
        pages = job.site.pages
        if not any(node is job.node for node, _ in pages.held):
            return False
        pages.checkpoints.append(checkpoint)
        return True

    def page_read(self, job: Job) -> None:
        """An HTML sitemap page ended: its links narrow the site's shared set."""
        links, pages = job.links, job.site.pages
        if links is None or job.node.format != HTML_FORMAT:
            return
        pages.read += 1
        pages.shared = set(links) if pages.shared is None else pages.shared & links

    def release_html(self, site: Site, actions: list[Action]) -> None:
        """Send the held records, minus the links every page shares (from two pages on)."""
        pages = site.pages
        held, pages.held, pages.held_count = pages.held, [], 0
        shared = pages.shared if pages.read >= 2 and pages.shared else set()
        for node, batch in held:
            kept = [r for r in batch if r.url not in shared]
            for record in batch if len(kept) < len(batch) else ():
                if record.url in shared:
                    message = f"a link every HTML sitemap page shares left out: {record.url}"
                    node.add_problem("html-shared", message)
            if kept:
                self.send(kept, actions)
        checkpoints, pages.checkpoints = pages.checkpoints, []
        actions.extend(checkpoints)  # behind the records they cover
