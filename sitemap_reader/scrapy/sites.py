"""A target's own headers and proxy stay on its site, in a Scrapy crawl.

``SITEMAP_READER_PER_TARGET`` gives a target headers or a proxy of its own. They go with
discovery's robots.txt and sitemap requests of that target only when the request goes to
the target's own site: its host, its www twin and their subdomains, the site the aiohttp
reader keeps the user's headers on (docs/security.md). A child sitemap on another host is
requested without them; the target's own ``header_hosts = "any"`` lets its headers (never
its proxy) go everywhere.

The driver decides for each request it makes, and :class:`SiteCredentialsMiddleware`, a
downloader middleware the add-on and the mixin enable, decides again for every request
Scrapy sends: Scrapy's RedirectMiddleware copies a request's headers and meta to the next
hop, so a hop to another host would carry them otherwise. A hop back to the site gets them
again. Both ask :meth:`TargetSites.apply`.

The cookies a site sets are kept per target too: each target's robots.txt and sitemap
requests have a cookie jar of their own (the ``cookiejar`` meta key of Scrapy's
CookiesMiddleware), so one target's cookie never goes with another target's request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Self

from scrapy import Request

from sitemap_reader.discovery.targets import Target, classify, options_for, site_scope
from sitemap_reader.options import Network, Options
from sitemap_reader.parse.scope import Scope
from sitemap_reader.scrapy.settings import options_from_settings, spider_overrides

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

#: Place in DOWNLOADER_MIDDLEWARES: before HttpProxyMiddleware (750), which reads the
#: proxy this one leaves in the meta, and before DefaultHeadersMiddleware (400), so a
#: crawl-wide default of the same name still fills what a hop elsewhere lost.
CREDENTIALS_ORDER: Final = 85
# The meta key of discovery's robots.txt and sitemap requests (the driver's
# SITEMAP_META_KEY), spelled here as the guard spells it.
_SITEMAP_META: Final = "sitemap_reader_sitemap"


@dataclass(frozen=True, slots=True)
class Own:
    """The network options one target has of its own, the site they stay on, and its own
    proxy (None: the crawl's)."""

    site: Scope
    network: Network
    proxy: str | None


class TargetSites:
    """The own values of each target of a crawl, by target number (see the module doc)."""

    def __init__(self, targets: Sequence[Target], options: Options) -> None:
        self._own = [_own(target, options) for target in targets]

    def apply(self, request: Request, target: object) -> None:
        """Put the own headers and proxy of target number ``target`` on ``request`` when
        it goes to that target's site, and take them off when it does not."""
        if not isinstance(target, int) or not 0 <= target < len(self._own):
            return
        own = self._own[target]
        if own is None:
            return
        on_site = own.site.allows(request.url, None)
        anywhere = own.network.header_hosts == "any"
        for name, value in own.network.headers:
            if on_site or anywhere:
                request.headers[name] = value
            else:
                request.headers.pop(name, None)
        if own.proxy is None:
            return
        if on_site:
            request.meta["proxy"] = own.proxy
        elif request.meta.get("proxy") == own.proxy:
            del request.meta["proxy"]  # HttpProxyMiddleware then drops its credentials too


def _own(target: Target, options: Options) -> Own | None:
    """What ``target`` has of its own (None: nothing, or no site to keep it on)."""
    mine = options_for(target, options)
    site = site_scope(target.host)
    if mine is options or site is None:
        return None
    network = mine.network
    proxy = network.proxy if network.proxy != options.network.proxy else None
    return Own(site, network, proxy)


class SiteCredentialsMiddleware:
    """Downloader middleware: a target's own headers and proxy only on its own site.

    ``DOWNLOADER_MIDDLEWARES = {"sitemap_reader.scrapy.sites.SiteCredentialsMiddleware":
    85}`` (the Addon and the mixin add it themselves). See the module docstring.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._sites: TargetSites | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Scrapy's constructor hook."""
        return cls(crawler)

    @property
    def sites(self) -> TargetSites:
        """The crawl's targets and their own values, read on first use (the spider's
        targets are known by then)."""
        if self._sites is None:
            spider = spider_overrides(self.crawler.spider)
            options, scrapy = options_from_settings(self.crawler.settings, spider)
            self._sites = TargetSites([classify(t) for t in scrapy.targets], options)
        return self._sites

    def process_request(self, request: Request, spider: Any = None) -> None:
        """Discovery's robots.txt and sitemap requests (redirect hops included): the
        target's own values on its site, none elsewhere."""
        ticket = request.meta.get(_SITEMAP_META)
        if isinstance(ticket, dict):
            self.sites.apply(request, ticket.get("target"))


def enable(settings: BaseSettings) -> None:
    """Add the middleware to ``DOWNLOADER_MIDDLEWARES`` (an order already given is kept)."""
    settings.setdefault_in_component_priority_dict(
        "DOWNLOADER_MIDDLEWARES", SiteCredentialsMiddleware, CREDENTIALS_ORDER
    )
