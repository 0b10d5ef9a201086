"""The state of one target (:class:`Site`) and of one robots.txt / sitemap / file (:class:`Job`).

A job owns everything about its node: the node itself (the tree entry), the parser of
its body, the incremental watch, the record shaper (lastmod vote, records held back),
the robots.txt body being gathered, and the counters of its attempts. A site owns what
its jobs share: the scope, the sitemap budget, the robots audit (:mod:`.audit`), the
sitemaps robots.txt listed (:class:`Listed`) and the HTML way in (:class:`HtmlPages`).
Nothing about a job lives in a dict keyed by node identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sitemap_reader.discovery.actions import Checkpoint, Ticket
from sitemap_reader.discovery.model import SitemapNode
from sitemap_reader.discovery.observer import Watch
from sitemap_reader.discovery.parsing import BodyParser
from sitemap_reader.discovery.robots_audit import RobotsAudit
from sitemap_reader.discovery.shaping import Shaper
from sitemap_reader.discovery.targets import Target
from sitemap_reader.parse.scope import Scope
from sitemap_reader.records import UrlRecord, format_datetime
from sitemap_reader.records.outcomes import Verdict


@dataclass(slots=True, eq=False)
class HtmlPages:
    """A site's HTML way in (``discovery.ways``) and the records of its pages held back
    (``discovery.records``)."""

    #: 0 not started, 1 home page read, 2 usual paths probed.
    stage: int = 0
    #: HTML pages scheduled (home, probes, sitemap pages): ``Limits.max_html_pages``.
    queued: int = 0
    #: Navigation links of the site's HTML pages (header, footer, nav), left out of them.
    navigation: set[str] = field(default_factory=set)
    #: The page links every HTML sitemap page read so far shares (None: no page yet).
    shared: set[str] | None = None
    #: HTML sitemap pages read (the shared links tell navigation apart from two on).
    read: int = 0
    #: Records of HTML sitemap pages held until the site is idle: (the page's node, its
    #: records), at most ``Limits.max_html_held`` records.
    held: list[tuple[SitemapNode, list[UrlRecord]]] = field(default_factory=list)
    held_count: int = 0
    #: The checkpoints of the pages held, written once their records went out.
    checkpoints: list[Checkpoint] = field(default_factory=list)
    #: The hold overflowed: later pages go out at once, without the shared links.
    streaming: bool = False


@dataclass(slots=True, eq=False)
class Site:
    """Per-target state: its root node, scope filter, sitemap budget and reachability."""

    index: int
    target: Target
    root: SitemapNode
    #: Which URLs the target keeps (None: a local file, everything).
    url_scope: Scope | None
    #: The robots audit of the site's records (answers None until robots.txt was read).
    audit: RobotsAudit
    sitemaps: int = 0
    unreachable: str | None = None
    #: Skipped children kept as nodes, per parent (see ``MAX_SKIPPED_NODES``).
    kept_skips: dict[int, int] = field(default_factory=dict)
    #: The sitemaps robots.txt listed, until one leads somewhere (else: probe instead).
    listed: Listed | None = None
    #: Jobs of the target not finished yet (at zero the site is idle: ``discovery.ways``).
    pending: int = 0
    #: The parent domain's sitemaps were tried (the ``parent`` option).
    parent_tried: bool = False
    twin_tried: bool = False
    pages: HtmlPages = field(default_factory=HtmlPages)
    #: The HTTP client of its fetches (``aiohttp`` or ``browser``: the ``client`` option).
    client: str = "aiohttp"
    #: The verdict of the first attempt, when the ladder (``client="auto"``) read the
    #: target again with the browser client after bot protection blocked it.
    ladder: Verdict | None = None
    #: Redirect hops its jobs asked to follow (the ladder forgets them with its nodes).
    hops: set[str] = field(default_factory=set)


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
    #: The core has seen the job finish (``Ways.retired`` ran).
    retired: bool = False
    #: An HTML sitemap page: every page link it showed (for the site's shared links).
    links: set[str] | None = None
    #: The last response's headers, and its body's first bytes, until the job's end says
    #: whether bot protection answered (:mod:`~sitemap_reader.discovery.evidence`).
    heard: dict[str, str] | None = None
    evidence: bytearray | None = None

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
        if self.site.url_scope is not None:
            ticket["hosts"] = sorted(self.site.url_scope.hosts)
        return ticket


@dataclass(slots=True, eq=False)
class Listed:
    """The sitemaps a site's robots.txt listed, watched until one leads somewhere: when
    all of them failed, the well-known paths are probed as children of the robots.txt
    job (``Children.listed_settled``)."""

    job: Job
    pending: set[int] = field(default_factory=set)  # id() of the listed nodes not settled
