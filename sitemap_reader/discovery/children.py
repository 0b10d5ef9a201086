"""The core's children and records: which listed sitemaps become jobs, which records
go out (scope, the run-wide dedupe, the incremental watch, the record shaper, the URL
budget). Mixed into :class:`~sitemap_reader.discovery.Discovery`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sitemap_reader.discovery.actions import Action, Done, Emit
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import NOT_READ, SitemapNode
from sitemap_reader.discovery.observer import StoredChildren
from sitemap_reader.discovery.rules import Batch, is_robots, limit_code, origin_prefix
from sitemap_reader.discovery.ways import WaysIn
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import Item
from sitemap_reader.records import UrlRecord, set_record_robots

if TYPE_CHECKING:
    from sitemap_reader.discovery.dedupe import UrlSet
    from sitemap_reader.discovery.model import Stats

#: Skipped children kept as nodes per parent; further skips are only counted (a problem
#: on the parent), so an index of 50,000 duplicate entries cannot bloat the tree.
MAX_SKIPPED_NODES = 100


class ChildRules(WaysIn):
    """Child sitemaps and the records of a chunk."""

    if TYPE_CHECKING:
        stats: Stats
        stopped: str | None
        visited: set[str]
        seen: UrlSet

        def _push(
            self,
            site: Site,
            node: SitemapNode,
            actions: list[Action],
            fallback: str | None = None,
        ) -> None: ...

        def stop(self, reason: str) -> list[Action]: ...

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
        reason: str | None = None,
    ) -> None:
        site, parent = job.site, job.node
        node = SitemapNode(url, kind=kind, depth=depth, lastmod=lastmod)
        key = normalize_url(url) or url
        job.watch.child(url, lastmod)
        reason = reason or self._skip_reason(site, key, kind, depth)
        if reason is None:
            self.visited.add(key)
            parent.children.append(node)
            self._push(site, node, actions)
            return
        node.skipped = reason
        if node.not_read:  # left unread on purpose: listed, neither a skip nor a limit
            self.stats.sitemaps_not_read += 1
            parent.children.append(node)
            actions.append(Done(node))
            return
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
        read_depth = self.options.walk.read_depth
        if read_depth is not None and depth > read_depth:
            return f"{NOT_READ} (max depth {read_depth})"
        if depth > limits.max_depth:
            return f"deeper than max_depth={limits.max_depth}"
        if site.sitemaps >= limits.max_sitemaps:
            return f"over max_sitemaps={limits.max_sitemaps}"
        follow = self.options.walk.follow
        # Scrapy's sitemap_follow: only an index's children (depth > 0) are filtered; the
        # sitemaps robots.txt lists (depth 0) are always read.
        if follow and kind == "sitemap" and depth > 0 and not any(p.search(key) for p in follow):
            return "not matched by follow"
        return None

    # -- records ---------------------------------------------------------------------------

    def _emit(self, job: Job, items: list[Item]) -> list[Action]:
        """Children become jobs; records pass scope and dedupe and go out as one batch."""
        actions: list[Action] = []
        batch = self._filter(job, items, actions)
        if batch and not self._held(job, batch, actions):
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
        merge = self.merge
        tracked: Batch | None = [] if merge or job.watch.tracks_duplicates else None
        child_kind, child_depth = self._child_of(node)
        listed = self.options.walk.follow_urlset_sitemaps
        for item in items:
            if type(item) is not UrlRecord:
                self._add_listed(job, item, child_kind, child_depth, actions)
                continue
            urls += 1
            url = item.url
            if allows is not None and (prefix is None or not url.startswith(prefix)):
                in_scope = allows(url, base)  # the verdict depends on the origin only
                prefix = origin_prefix(url)
            if not in_scope:
                out += 1
            elif listed and self._is_listed_sitemap(job, url):
                self._follow_listed(job, item, actions)
            elif seen_add(url):
                batch.append(item)
            else:
                duplicates += 1
                if tracked is not None:  # still listed by this sitemap: the state needs it
                    tracked.append(item)
        node.urls += urls
        self.stats.urls_out_of_scope += out
        self.stats.urls_duplicate += duplicates
        if site.robots is not None and batch:
            self._audit(job, batch)
        batch = job.watch.observe(batch, tracked or [], job.shaper.uniform)
        if merge and tracked and self.stopped is None:
            actions.append(Emit([], job.shaper.repeats(tracked)))
        return job.shaper.shape(node, batch) if batch else batch

    def _audit(self, job: Job, batch: Batch) -> None:
        """The robots audit: each new record on an origin of the site's robots.txt says
        whether its rules allow it for us (set on the fresh record, no rebuild)."""
        site, node = job.site, job.node
        robots = site.robots
        assert robots is not None
        can_fetch = robots.rules.can_fetch
        agent = self.options.politeness.user_agent
        everything = site.robots_open
        origins = site.robots_origins
        prefix: str | None = None
        audited = False
        disallowed = 0
        for record in batch:
            url = record.url
            if prefix is None or not url.startswith(prefix):
                prefix = origin_prefix(url)
                audited = prefix in origins
            if not audited:
                continue
            if everything or can_fetch(url, agent):
                set_record_robots(record, "allowed")
            else:
                set_record_robots(record, "disallowed")
                disallowed += 1
        node.disallowed += disallowed
        self.stats.urls_disallowed += disallowed

    def _send(self, batch: Batch, actions: list[Action]) -> None:
        """Drop what robots.txt disallows (``obey_robots``) and what is older than
        ``since``, apply the run's URL budget, then emit."""
        if self.options.politeness.obey_robots:
            batch = [r for r in batch if r.robots != "disallowed"]
        since = self.options.walk.since
        if since is not None:
            kept = [r for r in batch if r.lastmod is None or r.lastmod >= since]
            self.stats.urls_older += len(batch) - len(kept)
            batch = kept
        cap = self.limits.max_urls
        emitted = self.stats.urls_emitted
        if cap is not None and emitted + len(batch) >= cap:
            batch = batch[: max(0, cap - emitted)]
            actions.extend(self.stop(f"max_urls={cap} reached"))
        self.stats.urls_emitted += len(batch)
        if batch:
            actions.append(Emit(batch))
