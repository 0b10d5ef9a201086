"""More ways into a site, each opt-in: HTML sitemap pages, a subdomain's parent, sitemaps
listed as pages, and ``since`` on the children of an index.

Mixed into :class:`~sitemap_reader.discovery.Discovery`. The fallbacks start when a site
falls *idle*: every job of the target finished (``Site.pending`` is back to zero; the
core calls :meth:`WaysIn._retire` once per finished job) and nothing was found:

1. ``parent``: ``docs.example.com`` reads ``example.com``'s robots.txt (and its
   sitemaps, or its well-known paths), with the scope pinned to the subdomain: only
   URLs under ``docs.example.com`` are kept.
2. ``html`` (``"fallback"``; ``"always"`` starts at once, beside robots.txt): the
   home page is read for links that name a site map (node kind ``home``); if none of
   them is an HTML page, the usual paths are probed (kind ``html-guess``, renamed
   ``html`` when found). An HTML sitemap page (kind ``html``) gives records and section
   pages, read up to ``Limits.max_html_depth`` levels. The navigation links the home
   page showed are left out of every page of the site (:mod:`sitemap_reader.parse.html`).

A ``<loc>`` ending in ``.xml`` / ``.xml.gz`` (``follow_urlset_sitemaps``) becomes a child
of kind ``listed`` holding its record: read as a sitemap when its body is one (the node
becomes ``sitemap``), emitted as a page when it is not.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from yarl import URL

from sitemap_reader.discovery.actions import Action, Schedule
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import Run, SitemapNode
from sitemap_reader.discovery.parsing import BodyParser
from sitemap_reader.discovery.robots import RobotsRules
from sitemap_reader.discovery.rules import found_sitemap, server_of
from sitemap_reader.limits import Limits
from sitemap_reader.parse import sniff
from sitemap_reader.parse.html import HTML_FORMAT, HtmlLinks, html_sitemap_urls
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import Item
from sitemap_reader.parse.scope import Scope
from sitemap_reader.records import Problem, UrlRecord

if TYPE_CHECKING:
    from sitemap_reader.discovery.dedupe import UrlSet
    from sitemap_reader.discovery.model import Stats
    from sitemap_reader.options import Options

#: Node kinds of the HTML way in: the home page read for its links, an HTML sitemap page,
#: and a usual path probed for one.
HTML_KINDS = ("home", "html", "html-guess")
#: Kinds whose miss (no body of the kind looked for) is a skip, not a failure.
PROBE_KINDS = ("guess", "html-guess", "listed")
#: Every node kind this module adds (a ticket of another process may name them).
WAY_KINDS = (*HTML_KINDS, "listed")
#: The ends of a urlset ``<loc>`` that may be a sitemap (``follow_urlset``).
LISTED_SUFFIXES = (".xml", ".xml.gz")
#: Skip reason of an index child older than ``since``.
OLDER = "older than --since"

#: Problem codes on a target's root that say which way in was taken (for the summary).
WAY_CODES = ("parent-sitemaps", "html-fallback")


class PinnedScope(Scope):
    """A scope no robots.txt may widen: a parent's robots.txt does not vouch for its
    host, so the subdomain's scope stays the subdomain (the ``parent`` option)."""

    def __init__(self, host: str) -> None:
        super().__init__("site")
        super().add_host(host)

    def add_host(self, host: str) -> None:
        return None


class WaysIn(RobotsRules):
    """The opt-in ways into a site (see the module docstring)."""

    if TYPE_CHECKING:
        options: Options
        merge: bool
        stats: Stats
        stopped: str | None
        visited: set[str]
        seen: UrlSet
        sites: list[Site]
        _next_id: int

        def _push(
            self, site: Site, node: SitemapNode, actions: list[Action], fallback: str | None = None
        ) -> None: ...

        def _new_job(self, site: Site, node: SitemapNode, fallback: str | None = None) -> Job: ...

        def _add_child(
            self,
            job: Job,
            url: str,
            kind: str,
            depth: int,
            lastmod: datetime | None,
            actions: list[Action],
            reason: str | None = None,
        ) -> None: ...

        def _audit(self, job: Job, batch: list[UrlRecord]) -> None: ...

        def _send(self, batch: list[UrlRecord], actions: list[Action]) -> None: ...

    # -- children --------------------------------------------------------------------------

    def _child_of(self, node: SitemapNode) -> tuple[str, int]:
        """The kind and depth of the children a node lists."""
        if node.kind == "home":
            return "html", 0
        if node.kind in HTML_KINDS:
            return "html", node.depth + 1
        return "sitemap", node.depth + 1

    def _add_listed(self, job: Job, item: Item, kind: str, depth: int, acts: list[Action]) -> None:
        """A child from a body: ``since`` and the HTML depth decide before the usual rules."""
        reason = None
        since = self.options.walk.since
        lastmod = item.lastmod
        if (
            kind == "sitemap"
            and since is not None
            and lastmod is not None
            and lastmod < since
            and self.options.walk.trust_index_lastmod
        ):
            reason = OLDER
            job.node.add_problem("children-older", f"child sitemaps older than --since: {item.url}")
        elif kind == "html":
            bound = self._html_bound(job.site, depth)
            if bound is not None:
                code, reason = bound
                job.node.add_problem(code, f"HTML sitemap pages not read: {reason}")
        before = self._next_id
        self._add_child(job, item.url, kind, depth, lastmod, acts, reason)
        if kind == "html" and self._next_id != before:
            job.site.html_queued += 1

    def _html_bound(self, site: Site, depth: int) -> tuple[str, str] | None:
        """The problem code and skip reason of a bound on HTML pages, or None."""
        limits = self.limits
        if depth >= limits.max_html_depth:
            return "limit-html-depth", f"deeper than max_html_depth={limits.max_html_depth}"
        if site.html_queued >= limits.max_html_pages:
            return "limit-html-pages", f"over max_html_pages={limits.max_html_pages}"
        return None

    def _is_listed_sitemap(self, job: Job, url: str) -> bool:
        """Is this record a sitemap listed as a page (``follow_urlset``)?"""
        return (
            self.options.walk.follow_urlset_sitemaps
            and job.node.kind not in HTML_KINDS
            and url.split("?", 1)[0].lower().endswith(LISTED_SUFFIXES)
        )

    def _follow_listed(self, job: Job, record: UrlRecord, actions: list[Action]) -> None:
        """Read a listed ``.xml`` loc as a sitemap; its record waits on the child's verdict."""
        before = self._next_id
        self._add_child(job, record.url, "listed", job.node.depth + 1, None, actions)
        child = self.jobs.get(self._next_id) if self._next_id != before else None
        if child is not None:
            child.page = record

    # -- parsers ---------------------------------------------------------------------------

    def _html_parser(
        self,
        job: Job,
        url: str,
        content_type: str | None,
        limits: Limits,
        other: Callable[[], BodyParser],
    ) -> BodyParser:
        """The parser of a body: an HTML page's links for the HTML kinds; for a target
        given as a URL with ``html`` on, whichever the body turns out to be; else ``other``."""
        node = job.node
        if node.kind in HTML_KINDS:
            return self._page(job, url, content_type, limits)
        if self.options.walk.html is not None and node is job.site.root and node.kind == "sitemap":
            return Sniffed(lambda: self._page(job, url, content_type, limits), other, node, limits)
        return other()

    def _page(self, job: Job, url: str, content_type: str | None, limits: Limits) -> HtmlLinks:
        mode = "home" if job.node.kind == "home" else "page"
        job.links = set() if mode == "page" else None
        return HtmlLinks(
            url,
            content_type,
            limits=limits,
            build=job.shaper.build,
            mode=mode,
            navigation=job.site.navigation,
            links=job.links,
        )

    # -- links every HTML sitemap page shares ------------------------------------------------

    def _held(self, job: Job, batch: list[UrlRecord], actions: list[Action]) -> bool:
        """Hold the records of an HTML sitemap page until the site is idle (then the links
        every page shares are told apart); False: send them now."""
        site = job.site
        if job.links is None or site.html_streaming:
            return False
        site.html_held.append((job.node, batch))
        site.html_held_count += len(batch)
        if site.html_held_count > self.limits.max_html_held:
            job.node.add_problem(
                "limit-html-held",
                f"more than {self.limits.max_html_held:,} records of HTML pages held: "
                "the later pages go out at once",
            )
            site.html_streaming = True
            self._release_html(site, actions)
        return True

    def _page_read(self, job: Job) -> None:
        """An HTML sitemap page ended: its links narrow the site's shared set."""
        links, site = job.links, job.site
        if links is None or job.node.format != HTML_FORMAT:
            return
        site.html_pages += 1
        site.shared = set(links) if site.shared is None else site.shared & links

    def _release_html(self, site: Site, actions: list[Action]) -> None:
        """Send the held records, minus the links every page shares (from two pages on)."""
        held, site.html_held, site.html_held_count = site.html_held, [], 0
        shared = site.shared if site.html_pages >= 2 and site.shared else set()
        for node, batch in held:
            kept = [r for r in batch if r.url not in shared]
            for record in batch if len(kept) < len(batch) else ():
                if record.url in shared:
                    message = f"a link every HTML sitemap page shares left out: {record.url}"
                    node.add_problem("html-shared", message)
            if kept:
                self._send(kept, actions)

    # -- a finished job, an idle site ----------------------------------------------------------

    def _retire(self, job: Job) -> list[Action]:
        """``job`` finished: settle what waited on it; an idle site may take another way in."""
        job.retired = True
        node, site = job.node, job.site
        actions: list[Action] = []
        if node.kind == "html-guess" and node.format == HTML_FORMAT:
            node.kind = "html"
        if node.kind == "listed":
            self._listed_verdict(job, actions)
        self._page_read(job)
        site.pending -= 1
        if site.pending == 0:
            if site.html_held:
                self._release_html(site, actions)
            self._idle(site, actions)
        return actions

    def _listed_verdict(self, job: Job, actions: list[Action]) -> None:
        node, record = job.node, job.page
        if node.format not in (None, "unknown"):
            node.kind = "sitemap"
            return
        node.skipped = "not a sitemap: kept as a page"
        if record is None or self.stopped is not None or not self.seen.add(record.url):
            return
        if job.site.robots is not None:
            self._audit(job, [record])
        self._send([record], actions)

    def _idle(self, site: Site, actions: list[Action]) -> None:
        """Every job of ``site`` is done: take the next way in, if any is left."""
        walk = self.options.walk
        if self.stopped is not None or site.target.kind not in ("site", "robots"):
            return
        found = any(found_sitemap(n) for n in site.root.walk())
        if walk.parent and not site.parent_tried and not found and site.unreachable is None:
            site.parent_tried = True
            if self._parent_start(site, actions):
                return
        if walk.html is None or site.unreachable is not None:
            return
        if site.html_stage == 0 and not found:
            self._html_start(site, actions)
        elif site.html_stage == 1 and not any(
            n.kind == "html" and found_sitemap(n) for n in site.root.walk()
        ):
            site.html_stage = 2
            for url in html_sitemap_urls(self._home(site)):
                self._new_node(site, url, "html-guess", actions)

    def _start_ways(self, site: Site, actions: list[Action]) -> None:
        """At the start of a site: ``html="always"`` reads the home page at once."""
        if self.options.walk.html == "always" and site.target.kind in ("site", "robots"):
            self._html_start(site, actions)

    def _html_start(self, site: Site, actions: list[Action]) -> None:
        site.html_stage = 1
        if self.options.walk.html == "fallback":
            site.root.add_problem(
                "html-fallback", "no XML or text sitemap found: reading HTML sitemap pages"
            )
        self._new_node(site, self._home(site), "home", actions)

    def _home(self, site: Site) -> str:
        root = site.root
        return str(URL(root.final_url or root.url).origin()) + "/"

    def _new_node(self, site: Site, url: str, kind: str, actions: list[Action]) -> None:
        key = normalize_url(url) or url
        if key in self.visited or site.html_queued >= self.limits.max_html_pages:
            return
        site.html_queued += 1
        self.visited.add(key)
        node = SitemapNode(url, kind=kind)
        site.root.children.append(node)
        self._push(site, node, actions)

    def _parent_start(self, site: Site, actions: list[Action]) -> bool:
        """``docs.example.com`` found nothing: read ``example.com``'s robots.txt, keeping
        only the URLs under the subdomain. False when the host has no parent domain."""
        host = site.target.host or ""
        parent = parent_domain(host)
        if parent is None:
            return False
        root = site.root
        url = URL(root.final_url or root.url)
        robots = str(url.with_host(parent).with_path("/robots.txt").with_query(None))
        key = normalize_url(robots) or robots
        if key in self.visited:
            return False
        self.visited.add(key)
        site.scope = PinnedScope(host)
        root.add_problem(
            "parent-sitemaps",
            f"no sitemap of its own: reading {parent}'s sitemaps, keeping URLs under {host}",
        )
        node = SitemapNode(robots, kind="robots")
        root.children.append(node)
        job = self._new_job(site, node)
        actions.append(Schedule(job.ticket(self.token), server_of(robots)))
        return True


def parent_domain(host: str) -> str | None:
    """The parent of a subdomain (``docs.example.com`` -> ``example.com``); None for a
    name of two labels or fewer, or an IP address. Public suffixes are not known: the
    parent of ``example.co.uk`` is ``co.uk``, whose robots.txt simply lists nothing.

    >>> parent_domain("docs.example.com"), parent_domain("example.com"), parent_domain("127.0.0.1")
    ('example.com', None, None)
    """
    host = host.rstrip(".").lower()
    if not host or host.replace(".", "").isdigit() or ":" in host:
        return None
    parent = host.split(".", 1)[1] if "." in host else ""
    return parent if "." in parent else None


class Sniffed:
    """The parser of a target given as a URL when ``html`` is on: an HTML page's links
    when the body sniffs as HTML (the node becomes kind ``html``), else the sitemap parser."""

    def __init__(
        self,
        html: Callable[[], BodyParser],
        other: Callable[[], BodyParser],
        node: SitemapNode,
        limits: Limits,
    ) -> None:
        self._html, self._other, self._node = html, other, node
        self._head = b""
        self._chosen: BodyParser | None = None
        self.limits = limits
        self.done = False
        self.complete = False
        self.bytes_out = 0

    @property
    def format(self) -> str:
        return "unknown" if self._chosen is None else self._chosen.format

    @property
    def problems(self) -> list[Problem]:
        return [] if self._chosen is None else self._chosen.problems

    def feed(self, data: bytes) -> list[Item]:
        parser = self._chosen
        if parser is None:
            self._head += data
            if len(self._head) < sniff.SNIFF_BYTES:
                return []
            parser, data = self._choose(False), self._head
        return self._copy(parser, parser.feed(data))

    def close(self) -> list[Item]:
        parser = self._chosen
        items: list[Item] = []
        if parser is None:
            parser = self._choose(True)
            items = parser.feed(self._head)
        return self._copy(parser, items + parser.close())

    def _choose(self, final: bool) -> BodyParser:
        head = sniff.strip_prolog(self._head)
        html = not head.startswith(sniff.GZIP_MAGIC) and sniff.classify(head, final) == sniff.HTML
        if html:
            self._node.kind = "html"
        self._chosen = parser = self._html() if html else self._other()
        self.limits = parser.limits
        return parser

    def _copy(self, parser: BodyParser, items: list[Item]) -> list[Item]:
        self.done, self.complete, self.bytes_out = parser.done, parser.complete, parser.bytes_out
        return items


def way_lines(run: Run) -> list[str]:
    """Summary lines for the ways in a run took (parent, HTML) and the children ``since``
    left unread."""
    lines = [
        f"{root.url.split('/')[2]}: {problem.message}"
        for root in run.tree
        for problem in root.problems
        if problem.code in WAY_CODES
    ]
    older = sum(p.count for n in run.nodes() for p in n.problems if p.code == "children-older")
    if older:
        lines.append(f"not fetched: {older:,} child sitemaps older than --since")
    return lines
