"""Which child sitemaps become jobs: the skip rule (:func:`skip_reason`, a pure function)
and the part that applies it (:class:`Children`).

A child is named by robots.txt, by an index, by an HTML page, by the well-known paths
probed, or by a urlset loc that may be a sitemap (``follow_urlset_sitemaps``). The rule,
in order: a child named in a body just read is first held to ``since`` (an index child
older than it, when index lastmods are trusted) and, for an HTML page, to the HTML
bounds; then the run's stop, "robots.txt is not a sitemap", "already visited",
``read_depth`` (listed, not read), ``max_depth``, ``max_sitemaps`` and ``follow``.
A skipped child stays in the tree (up to :data:`MAX_SKIPPED_NODES` per parent), and a
skip that is a bound says so on its parent.
"""

from __future__ import annotations

from collections.abc import Container
from datetime import datetime
from typing import NamedTuple

from sitemap_reader.discovery.actions import Action, Done
from sitemap_reader.discovery.job import Job, Listed
from sitemap_reader.discovery.model import HTML_KINDS, SitemapNode, Skipped
from sitemap_reader.discovery.observer import StoredChildren
from sitemap_reader.discovery.rules import found_sitemap, is_robots
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.discovery.targets import well_known_urls
from sitemap_reader.options import Walk
from sitemap_reader.options.declare import follows
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.records import UrlRecord

#: Skipped children kept as nodes per parent; further skips are only counted (a problem
#: on the parent), so an index of 50,000 duplicate entries cannot bloat the tree.
MAX_SKIPPED_NODES = 100
#: The skip of a child sitemap because the run stopped, and of one named twice.
STOPPED = Skipped("stopped", "the run stopped")
VISITED = Skipped("visited", "already visited")
#: The ends of a urlset ``<loc>`` that may be a sitemap (``follow_urlset_sitemaps``).
LISTED_SUFFIXES = (".xml", ".xml.gz")


class Skip(NamedTuple):
    """Why a child is not read, and what its parent says about it (if anything)."""

    skipped: Skipped
    #: The parent's problem (code, message), or None.
    problem: tuple[str, str] | None = None
    #: A bound on the sitemaps read: its problem stands for every child it skips (no
    #: "children-skipped" note when the parent keeps no more skipped nodes).
    bound: bool = False


def skip_reason(
    url: str,
    kind: str,
    depth: int,
    lastmod: datetime | None = None,
    *,
    walk: Walk,
    limits: Limits,
    stopped: bool = False,
    visited: Container[str] = frozenset(),
    sitemaps: int = 0,
    html_queued: int = 0,
    from_body: bool = False,
) -> Skip | None:
    """Why the child ``url`` (of ``kind``, at ``depth``) is not read; None: read it.

    ``stopped``: the run stopped; ``visited`` is the normalized URLs already
    scheduled, ``sitemaps`` the sitemaps the site scheduled so far and ``html_queued``
    its HTML pages; ``from_body``: named in a body just read (``since`` and the HTML
    bounds apply). See the module docstring for the order.

    >>> from sitemap_reader.options import Walk
    >>> from sitemap_reader.options.limits import Limits
    >>> skip_reason("https://e.com/s.xml", "sitemap", 1, walk=Walk(), limits=Limits()) is None
    True
    >>> skip_reason("https://e.com/s.xml", "sitemap", 1, walk=Walk(), limits=Limits(),
    ...             visited={"https://e.com/s.xml"}).skipped.code
    'visited'
    """
    if from_body:
        early = _body_bound(url, kind, depth, lastmod, walk, limits, html_queued)
        if early is not None:
            return early
    key = normalize_url(url) or url
    if stopped:
        return Skip(STOPPED)
    if is_robots(key):
        return Skip(Skipped("robots-txt", "robots.txt is not a sitemap"))
    if key in visited:
        return Skip(VISITED)
    if walk.read_depth is not None and depth > walk.read_depth:
        return Skip(Skipped("not-read", f"not read (read_depth={walk.read_depth})"))
    if depth > limits.max_depth:
        return _bound("limit-depth", f"deeper than max_depth={limits.max_depth}")
    if sitemaps >= limits.max_sitemaps:
        return _bound("limit-sitemaps", f"over max_sitemaps={limits.max_sitemaps}")
    # Scrapy's sitemap_follow: only an index's children (depth > 0) are filtered; the
    # sitemaps robots.txt lists (depth 0) are always read.
    if kind == "sitemap" and depth > 0 and not follows(walk.follow, key):
        return Skip(Skipped("follow", "not matched by follow"))
    return None


def _body_bound(
    url: str,
    kind: str,
    depth: int,
    lastmod: datetime | None,
    walk: Walk,
    limits: Limits,
    html_queued: int,
) -> Skip | None:
    """``since`` on an index child, the HTML bounds on an HTML page's (checked first)."""
    since = walk.since
    if kind == "sitemap":
        if since is None or lastmod is None or lastmod >= since or not walk.trust_index_lastmod:
            return None
        older = Skipped("older", "index lastmod older than since")
        return Skip(older, ("children-older", f"child sitemaps older than since: {url}"))
    if kind != "html":
        return None
    if depth >= limits.max_html_depth:
        reason, code = f"deeper than max_html_depth={limits.max_html_depth}", "limit-html-depth"
    elif html_queued >= limits.max_html_pages:
        reason, code = f"over max_html_pages={limits.max_html_pages}", "limit-html-pages"
    else:
        return None
    return Skip(Skipped(code, reason), (code, f"HTML sitemap pages not read: {reason}"))


def _bound(code: str, reason: str) -> Skip:
    problem = (code, f"child sitemaps not fetched: {reason}")
    return Skip(Skipped(code, reason), problem, bound=True)


def child_of(node: SitemapNode) -> tuple[str, int]:
    """The kind and depth of the children a node's body names: an HTML page's are HTML
    pages (the home page's at depth 0), any other's are sitemaps one level down."""
    if node.kind == "home":
        return "html", 0
    if node.kind in HTML_KINDS:
        return "html", node.depth + 1
    return "sitemap", node.depth + 1


def listed_sitemap(url: str, kind: str, walk: Walk) -> bool:
    """Is this record of a ``kind`` node a sitemap listed as a page (``follow_urlset``)?"""
    return (
        walk.follow_urlset_sitemaps
        and kind not in HTML_KINDS
        and url.split("?", 1)[0].lower().endswith(LISTED_SUFFIXES)
    )


class Children:
    """Applies :func:`skip_reason` to each child a job names; the read ones become jobs."""

    def __init__(self, state: RunState, scheduling: Scheduling) -> None:
        self.state = state
        self.scheduling = scheduling

    def add(
        self,
        job: Job,
        url: str,
        kind: str,
        depth: int,
        lastmod: datetime | None,
        actions: list[Action],
        *,
        from_body: bool = False,
    ) -> Job | None:
        """A child of ``job``: its job, scheduled in ``actions``; None when skipped."""
        state, site, parent = self.state, job.site, job.node
        node = SitemapNode(url, kind=kind, depth=depth, lastmod=lastmod)
        key = normalize_url(url) or url
        job.watch.child(url, lastmod)
        if callable(state.options.walk.follow):  # the caller's function may be slow
            actions.extend(state.overdue())
        skip = skip_reason(
            url,
            kind,
            depth,
            lastmod,
            walk=state.options.walk,
            limits=state.limits,
            stopped=state.stopped is not None,
            visited=state.visited,
            sitemaps=site.sitemaps,
            html_queued=site.pages.queued,
            from_body=from_body,
        )
        if skip is None:
            state.visited.add(key)
            parent.children.append(node)
            return self.scheduling.push(site, node, actions)
        node.skipped = skip.skipped
        if skip.skipped.code == "older":
            state.stats.sitemaps_older += 1
        if node.not_read:  # left unread on purpose: listed, neither a skip nor a limit
            state.stats.sitemaps_not_read += 1
            parent.children.append(node)
            actions.append(Done(node))
            return None
        state.stats.sitemaps_skipped += 1
        if skip.problem is not None:  # a bound, or since: say so where -v and the tree show it
            parent.add_problem(*skip.problem)
        kept = site.kept_skips.get(job.id, 0)
        if kept < MAX_SKIPPED_NODES:
            site.kept_skips[job.id] = kept + 1
            parent.children.append(node)
            actions.append(Done(node))
        elif not skip.bound:
            parent.add_problem("children-skipped", f"more skipped child sitemaps, e.g. {url}")
        return None

    def named(self, job: Job, url: str, lastmod: datetime | None, actions: list[Action]) -> None:
        """A child a body names (an index's sitemap, an HTML page's section page)."""
        kind, depth = child_of(job.node)
        child = self.add(job, url, kind, depth, lastmod, actions, from_body=True)
        if kind == "html" and child is not None:
            job.site.pages.queued += 1

    def walk(self, job: Job, children: StoredChildren, actions: list[Action]) -> None:
        """An unchanged index: its children (as last read) may still have changed; of
        the kind its body names (an HTML page's are HTML pages, never sitemaps)."""
        kind, depth = child_of(job.node)
        for url, lastmod in children:
            child = self.add(job, url, kind, depth, lastmod, actions)
            if kind == "html" and child is not None:
                job.site.pages.queued += 1

    def follow_listed(self, job: Job, record: UrlRecord, actions: list[Action]) -> None:
        """Read a listed ``.xml`` loc as a sitemap; its record waits on the child's verdict."""
        child = self.add(job, record.url, "listed", job.node.depth + 1, None, actions)
        if child is not None:
            child.page = record

    def from_robots(self, job: Job, urls: list[str], actions: list[Action]) -> None:
        """The sitemaps a robots.txt lists; when it lists none, the well-known paths; else
        they are watched until one leads somewhere (:meth:`listed_settled`)."""
        site, node = job.site, job.node
        first = len(node.children)
        for url in urls:
            self.add(job, url, "sitemap", 0, None, actions)
        if not urls and site.unreachable is None:
            self.probe(job, actions)
        elif self.state.options.walk.guess:
            pushed = {id(c) for c in node.children[first:] if c.skipped is None}
            site.listed = Listed(job, pushed) if pushed else None

    def probe(self, job: Job, actions: list[Action]) -> None:
        """The well-known paths of a robots.txt's own origin, as children of its node."""
        walk = self.state.options.walk
        if walk.guess:
            node, visited = job.node, self.state.visited
            for url in well_known_urls(node.final_url or node.url, walk.guess_paths):
                # robots.txt may have listed a well-known path that failed: one node a URL
                if (normalize_url(url) or url) not in visited:
                    self.add(job, url, "guess", 0, None, actions)

    def listed_settled(self, job: Job) -> list[Action]:
        """A sitemap robots.txt listed has settled: when it was the last of them and none
        led anywhere, robots.txt led nowhere: probe the well-known paths instead."""
        site, node = job.site, job.node
        listed = site.listed
        if listed is None or id(node) not in listed.pending:
            return []
        listed.pending.discard(id(node))
        if found_sitemap(node) or node.unchanged is not None:
            site.listed = None  # one of them leads somewhere: nothing to do
            return []
        if listed.pending or self.state.stopped is not None:
            return []
        site.listed = None
        robots = listed.job.node
        count = sum(1 for c in robots.children if c.kind == "sitemap")
        listed_text = (
            "the sitemap robots.txt lists could not be read"
            if count == 1
            else f"none of the {count} sitemaps robots.txt lists could be read"
        )
        robots.add_problem(
            "robots-led-nowhere", f"{listed_text}: probed the well-known paths instead"
        )
        actions: list[Action] = []
        self.probe(listed.job, actions)
        return actions
