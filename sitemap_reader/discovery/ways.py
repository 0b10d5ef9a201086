"""More ways into a site: its www/bare twin, and, each opt-in, HTML sitemap pages, a
subdomain's parent, sitemaps listed as pages, and ``since`` on the children of an index.

The fallbacks start when a site falls *idle*: every job of the target finished
(``Site.pending`` is back to zero; the core calls :meth:`Ways.retired` once per finished
job) and nothing was found:

0. ``twin`` (on by default): a site typed as ``example.com`` whose sitemaps live only on
   ``www.example.com`` (or the reverse) reads the twin's robots.txt (and its sitemaps, or
   its well-known paths), whether the host typed answered or not; the scope already keeps
   both hosts. One line on the target's root says so (``twin-host``). Only a registrable
   domain and its ``www`` have a twin (:func:`twin_host`, the Public Suffix List).
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
of kind ``listed`` holding its record (``discovery.children``): read as a sitemap when
its body is one (the node becomes ``sitemap`` as it settles, ``discovery.settle``),
emitted as a page when it is not.
"""

from __future__ import annotations

from collections.abc import Callable

from yarl import URL

from sitemap_reader.discovery.actions import Action
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import HTML_KINDS as HTML_KINDS
from sitemap_reader.discovery.model import SitemapNode, change_kind
from sitemap_reader.discovery.records import RecordGate
from sitemap_reader.discovery.rules import found_sitemap
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.parse.domains import registrable_domain
from sitemap_reader.parse.html import HTML_FORMAT, html_sitemap_urls
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.scope import Scope

#: Problem codes on a target's root that say which way in was taken (for the summary).
WAY_CODES = ("twin-host", "parent-sitemaps", "html-fallback")


class PinnedScope(Scope):
    """A scope no robots.txt may widen: a parent's robots.txt does not vouch for its
    host, so the subdomain's scope stays the subdomain (the ``parent`` option)."""

    def __init__(self, host: str) -> None:
        super().__init__("site")
        super().add_host(host)

    def add_host(self, host: str) -> None:
        return None


class Ways:
    """The opt-in ways into a site (see the module docstring)."""

    def __init__(
        self,
        state: RunState,
        scheduling: Scheduling,
        gate: RecordGate,
        climb: Callable[[Site, list[Action]], None],
    ) -> None:
        self.state = state
        self.scheduling = scheduling
        self.gate = gate
        #: The last way: the client ladder (``Discovery._climb``), once the others are done.
        self.climb = climb

    def start(self, site: Site, actions: list[Action]) -> None:
        """At the start of a site: ``html="always"`` reads the home page at once."""
        if self.state.options.walk.html == "always" and site.target.kind in ("site", "robots"):
            self._html_start(site, actions)

    def retired(self, job: Job) -> list[Action]:
        """``job`` finished: settle what waited on it; an idle site may take another way in."""
        job.retired = True
        node, site = job.node, job.site
        actions: list[Action] = []
        if node.kind == "html-guess" and node.format == HTML_FORMAT:
            change_kind(node, "html")
        self.gate.page_read(job)
        site.pending -= 1
        if site.pending == 0:
            if site.pages.held:
                self.gate.release_html(site, actions)
            self._idle(site, actions)
            if site.pending == 0:
                self.climb(site, actions)
        return actions

    def _idle(self, site: Site, actions: list[Action]) -> None:
        """Every job of ``site`` is done: take the next way in, if any is left."""
        walk = self.state.options.walk
        if self.state.stopped is not None or site.target.kind not in ("site", "robots"):
            return
        found = any(found_sitemap(n) for n in site.root.walk())
        # The twin is tried whether the host typed answered or not, but not when our
        # address guard refused it: its twin would be another way around the guard.
        refused = any(p.code == "blocked" for p in site.root.problems)
        twin = walk.twin and site.target.kind == "site" and not site.twin_tried
        if twin and not found and not refused:
            site.twin_tried = True
            if self._twin_start(site, actions):
                return
        if walk.parent and not site.parent_tried and not found and site.unreachable is None:
            site.parent_tried = True
            if self._parent_start(site, actions):
                return
        if walk.html is None or site.unreachable is not None:
            return
        pages = site.pages
        if pages.stage == 0 and not found:
            self._html_start(site, actions)
        elif pages.stage == 1 and not any(
            n.kind == "html" and found_sitemap(n) for n in site.root.walk()
        ):
            pages.stage = 2
            for url in html_sitemap_urls(_home(site)):
                self._new_node(site, url, "html-guess", actions)

    def _html_start(self, site: Site, actions: list[Action]) -> None:
        site.pages.stage = 1
        if self.state.options.walk.html == "fallback":
            site.root.add_problem(
                "html-fallback", "no XML or text sitemap found: reading HTML sitemap pages"
            )
        self._new_node(site, _home(site), "home", actions)

    def _new_node(self, site: Site, url: str, kind: str, actions: list[Action]) -> None:
        state = self.state
        key = normalize_url(url) or url
        if key in state.visited or site.pages.queued >= state.limits.max_html_pages:
            return
        site.pages.queued += 1
        state.visited.add(key)
        node = SitemapNode(url, kind=kind)
        site.root.children.append(node)
        self.scheduling.push(site, node, actions)

    def _twin_start(self, site: Site, actions: list[Action]) -> bool:
        """``example.com`` found nothing: read ``www.example.com``'s robots.txt (or the
        reverse). False when the host has no twin or its robots.txt was already read."""
        host = site.target.host or ""
        twin = twin_host(host)
        if twin is None:
            return False
        # The target's own URL: a bare domain tries https, then http (as the host typed).
        target = site.target
        url = URL(target.url).with_host(twin).with_path("/robots.txt").with_query(None)
        robots = str(url)
        key = normalize_url(robots) or robots
        if key in self.state.visited:
            return False
        self.state.visited.add(key)
        fallback = str(url.with_scheme("http")) if len(target.schemes) > 1 else None
        root = site.root
        root.add_problem("twin-host", f"no sitemap on {host}: trying its twin {twin}")
        node = SitemapNode(robots, kind="robots")
        root.children.append(node)
        job = self.scheduling.new_job(site, node, fallback)
        actions.append(self.scheduling.schedule(job))
        return True

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
        visited = self.state.visited
        if key in visited:
            return False
        visited.add(key)
        site.url_scope = PinnedScope(host)
        root.add_problem(
            "parent-sitemaps",
            f"no sitemap of its own: reading {parent}'s sitemaps, keeping URLs under {host}",
        )
        node = SitemapNode(robots, kind="robots")
        root.children.append(node)
        actions.append(self.scheduling.schedule(self.scheduling.new_job(site, node)))
        return True


def _home(site: Site) -> str:
    """The home page of a site (of the origin its robots.txt or sitemap answered at)."""
    root = site.root
    return str(URL(root.final_url or root.url).origin()) + "/"


def parent_domain(host: str) -> str | None:
    """The parent of a subdomain (``docs.example.com`` -> ``example.com``), never above
    its registrable domain (:mod:`sitemap_reader.parse.domains`): None for a registrable
    domain itself (``example.co.uk``, ``alice.github.io``: their parents are public
    suffixes, other parties' hosts), a public suffix, or an IP address.

    >>> parent_domain("docs.example.co.uk"), parent_domain("example.co.uk")
    ('example.co.uk', None)
    >>> parent_domain("alice.github.io"), parent_domain("127.0.0.1")
    (None, None)
    """
    host = host.rstrip(".").lower()
    domain = registrable_domain(host)
    if domain is None or host == domain:
        return None
    return host.split(".", 1)[1]


def twin_host(host: str) -> str | None:
    """The www/bare twin of a host: a registrable domain and its ``www`` (see
    :mod:`sitemap_reader.parse.domains`); None for any other host, an IP address or a
    public suffix (``docs.example.com`` has no twin).

    >>> twin_host("example.co.uk"), twin_host("www.example.com"), twin_host("docs.example.com")
    ('www.example.co.uk', 'example.com', None)
    """
    host = host.rstrip(".").lower()
    domain = registrable_domain(host)
    if domain is None:
        return None
    if host == domain:  # www.github.io is registrable, but its bare twin is a suffix
        return None if host.startswith("www.") else "www." + host
    return domain if host == "www." + domain else None
