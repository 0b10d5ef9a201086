"""The state of one target (:class:`Site`) and of one robots.txt / sitemap / file (:class:`Job`).

A job owns everything about its node: the node itself (the tree entry), the parser of
its body, the incremental watch, the record shaper (lastmod vote, records held back),
the robots.txt body being gathered, and the counters of its attempts. Nothing about a
job lives in a dict keyed by node identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sitemap_reader.discovery.actions import Ticket
from sitemap_reader.discovery.model import SitemapNode
from sitemap_reader.discovery.observer import Watch
from sitemap_reader.discovery.parsing import BodyParser
from sitemap_reader.discovery.shaping import Shaper
from sitemap_reader.discovery.targets import Target
from sitemap_reader.parse.robots import RobotsTxt
from sitemap_reader.parse.scope import Scope
from sitemap_reader.records import UrlRecord, format_datetime

if TYPE_CHECKING:
    from sitemap_reader.discovery.robots import Listed


@dataclass(slots=True, eq=False)
class Site:
    """Per-target state: its root node, scope filter, sitemap budget and reachability."""

    index: int
    target: Target
    root: SitemapNode
    scope: Scope | None
    sitemaps: int = 0
    unreachable: str | None = None
    #: Skipped children kept as nodes, per parent (see ``MAX_SKIPPED_NODES``).
    kept_skips: dict[int, int] = field(default_factory=dict)
    #: The site's robots.txt rules, once read (the robots audit of its records).
    robots: RobotsTxt | None = None
    #: The origins (``scheme://host[:port]/``) those rules apply to: the robots.txt's own,
    #: and the one it redirected to.
    robots_origins: tuple[str, ...] = ()
    #: No rule of that robots.txt applies to us: every URL on those origins is allowed.
    robots_open: bool = False
    #: The sitemaps robots.txt listed, until one leads somewhere (else: probe instead).
    listed: Listed | None = None
    #: Jobs of the target not finished yet (at zero the site is idle: ``discovery.ways``).
    pending: int = 0
    #: The parent domain's sitemaps were tried (the ``parent`` option).
    parent_tried: bool = False
    #: HTML way in: 0 not started, 1 home page read, 2 usual paths probed.
    html_stage: int = 0
    #: HTML pages scheduled (home, probes, sitemap pages): ``Limits.max_html_pages``.
    html_queued: int = 0
    #: Navigation links of the site's HTML pages (header, footer, nav), left out of them.
    navigation: set[str] = field(default_factory=set)
    #: The page links every HTML sitemap page read so far shares (None: no page yet).
    shared: set[str] | None = None
    #: HTML sitemap pages read (the shared links tell navigation apart from two on).
    html_pages: int = 0
    #: Records of HTML sitemap pages held until the site is idle (``discovery.ways``):
    #: (the page's node, its records), at most ``Limits.max_html_held`` records.
    html_held: list[tuple[SitemapNode, list[UrlRecord]]] = field(default_factory=list)
    html_held_count: int = 0
    #: The hold overflowed: later pages go out at once, without the shared links.
    html_streaming: bool = False


@dataclass(slots=True, eq=False)
class Job:
    """One robots.txt, sitemap, probe or local file being read (see the module docstring)."""

    id: int
    site: Site
    node: SitemapNode
    watch: Watch
    shaper: Shaper
    #: The http:// URL to try when the https one cannot connect (bare-domain targets).
    fallback: str | None = None
    parser: BodyParser | None = None
    #: True while the driver should go on reading the body.
    reading: bool = False
    #: robots.txt: the body gathered so far (None: no body, or absent).
    robots_body: bytearray | None = None
    #: A probe of the home page (robots.txt disabled): only the status matters.
    probe: bool = False
    attempts: int = 0
    finished: bool = False
    #: Raw bytes per parser feed under a deadline (adapted to how much gzip expands).
    slice: int = 16 * 1024
    #: The most raw bytes one feed may have, set at the body's first bytes: lower for a
    #: gzip body (see ``feed_size`` in sitemaps.py); None until then.
    slice_cap: int | None = None
    #: Redirect hops this job followed (its own, so a second report of one is no loop).
    hops: set[str] = field(default_factory=set)
    #: A urlset loc read as a sitemap (``follow_urlset``): its record, emitted if the
    #: body is not a sitemap after all.
    page: UrlRecord | None = None
    #: The core has seen the job finish (``WaysIn._retire`` ran).
    retired: bool = False
    #: An HTML sitemap page: every page link it showed (for the site's shared links).
    links: set[str] | None = None

    def ticket(self, run: str) -> Ticket:
        """The job's ticket: enough to rebuild it in another process."""
        node = self.node
        ticket: dict[str, Any] = {
            "run": run,
            "job": self.id,
            "url": node.url,
            "kind": node.kind,
            "target": self.site.index,
            "depth": node.depth,
        }
        if node.lastmod is not None:
            ticket["lastmod"] = format_datetime(node.lastmod)
        if self.fallback is not None:
            ticket["fallback"] = self.fallback
        if self.site.scope is not None:
            ticket["hosts"] = sorted(self.site.scope.hosts)
        return ticket
