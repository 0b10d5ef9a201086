"""Which parser reads a body of the HTML way in: the two parser choices of
:class:`~sitemap_reader.discovery.sitemaps.SitemapJob`.

* :func:`html_page`: the jobs of the HTML kinds (``home``, ``html``, ``html-guess``) read
  an HTML page's links (:class:`~sitemap_reader.parse.html.HtmlLinks`): the home page for
  links that name a site map, a sitemap page for its records and section pages. The
  site's navigation links are shared by its pages.
* :func:`sniffing`: with ``html`` on, a target given as a sitemap URL may turn out to be
  an HTML sitemap page: its body is sniffed (:class:`Sniffed`), and read as a page when
  it is one (the node becomes kind ``html``), else as a sitemap.
"""

from __future__ import annotations

from collections.abc import Callable

from sitemap_reader.discovery.job import Job
from sitemap_reader.discovery.model import SitemapNode, change_kind
from sitemap_reader.discovery.parsing import BodyParser
from sitemap_reader.discovery.sitemaps import ParserChoice, sitemap_parser
from sitemap_reader.options import Walk
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import sniff
from sitemap_reader.parse.html import HtmlLinks
from sitemap_reader.parse.parser import Item
from sitemap_reader.records import Problem


def html_page(
    job: Job, url: str, content_type: str | None, limits: Limits, other: Callable[[], BodyParser]
) -> BodyParser:
    """The parser of an HTML way-in job: the page's links (``other`` is never made)."""
    return _links(job, url, content_type, limits)


def sniffing(walk: Walk) -> ParserChoice:
    """The parser choice of the sitemap jobs: the sitemap parser, or, with ``html`` on and
    for a target given as a sitemap URL, whichever the body turns out to be."""
    if walk.html is None:
        return sitemap_parser

    def choose(
        job: Job,
        url: str,
        content_type: str | None,
        limits: Limits,
        other: Callable[[], BodyParser],
    ) -> BodyParser:
        node = job.node
        if node is job.site.root and node.kind == "sitemap":
            return Sniffed(lambda: _links(job, url, content_type, limits), other, node, limits)
        return other()

    return choose


def _links(job: Job, url: str, content_type: str | None, limits: Limits) -> HtmlLinks:
    """An HTML page's links: the home page's (links naming a site map) or a page's."""
    mode = "home" if job.node.kind == "home" else "page"
    job.links = set() if mode == "page" else None
    return HtmlLinks(
        url,
        content_type,
        limits=limits,
        build=job.shaper.page_build,
        mode=mode,
        navigation=job.site.pages.navigation,
        links=job.links,
    )


class Sniffed:
    """The parser of a target given as a URL when ``html`` is on: an HTML page's links
    when the body sniffs as HTML (the node becomes kind ``html``), else the sitemap parser."""

    def __init__(
        self,
        page: Callable[[], BodyParser],
        other: Callable[[], BodyParser],
        node: SitemapNode,
        limits: Limits,
    ) -> None:
        self._page, self._other, self._node = page, other, node
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
        page = not head.startswith(sniff.GZIP_MAGIC) and sniff.classify(head, final) == sniff.HTML
        if page:
            change_kind(self._node, "html")
        self._chosen = parser = self._page() if page else self._other()
        self.limits = parser.limits
        return parser

    def _copy(self, parser: BodyParser, items: list[Item]) -> list[Item]:
        self.done, self.complete, self.bytes_out = parser.done, parser.complete, parser.bytes_out
        return items
