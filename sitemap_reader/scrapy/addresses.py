"""The private-address guard (SSRF) of the Scrapy integration: a downloader middleware.

The address policy of the aiohttp reader (:mod:`sitemap_reader.discovery.addresses`), applied to the
requests sitemap discovery makes Scrapy send: robots.txt and sitemap requests (their meta
holds ``SITEMAP_META_KEY``, and keeps it across redirects) and the page requests built from
sitemap entries (``META_KEY``). The spider's own requests are left alone.

Theory of operation
-------------------
``SITEMAP_READER_ALLOW_PRIVATE`` is the reader's ``allow_private``. Unset or ``False`` (the
default) trusts what was typed: a target that is a loopback or private IP literal, or
``localhost``, means a private network on purpose, so its site is not guarded; for any other
target, its own host name may resolve anywhere, and every other host it names (an index
child, a robots.txt ``Sitemap:`` line, a redirect, a page) must be public. ``True`` lets
everything through; ``"never"`` guards every request of ours, the typed targets' too (a
service crawling targets its users submit).

Trust is per site, never per crawl: each request is judged by the site of its own target
(a sitemap request's ticket says which, a page request carries ``sitemap_reader_target``),
so a name one target typed, or a private target's freedom, is nothing to another target's
index child or page.

:class:`PrivateAddressMiddleware` checks each such request before it is downloaded:

* a host written as a number that is not a canonical dotted quad (``http://2130706433/``,
  ``http://0177.0.0.1/``) is refused whatever the policy (see
  :mod:`sitemap_reader.discovery.addresses`:
  its meaning depends on who reads it);
* an IP literal must be public;
* a host name is resolved through the reactor's resolver, the one the download uses, and
  every address it gives must be public. With Scrapy's default caching resolver the download
  then connects to the very address that was checked (the answer is cached); with
  ``DNSCACHE_ENABLED = False``, or a download handler that resolves on its own (the aiohttp
  or httpx handlers), a name whose DNS answer changes between the two lookups could still
  slip through, so keep the cache on where targets are untrusted.

A refused request raises ``IgnoreRequest`` with the reason: the sitemap's errback (or the
start middleware) logs it as that sitemap's failure, the crawl goes on, and the
``sitemap_reader/problems/blocked`` stat counts it. The :class:`~sitemap_reader.scrapy.Addon`
and :class:`~sitemap_reader.scrapy.SitemapReaderMixin` enable the middleware themselves;
with :class:`~sitemap_reader.scrapy.SitemapStartMiddleware` enabled by hand, add it to
``DOWNLOADER_MIDDLEWARES`` too (a warning says so when it is missing).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from sitemap_reader.discovery.addresses import (
    PrivateMode,
    SiteTrust,
    is_ip_literal,
    is_public_address,
    numeric_host_problem,
    private_mode,
    site_trust,
)
from sitemap_reader.discovery.targets import Target, classify
from sitemap_reader.options.declare import PrivateSetting
from sitemap_reader.scrapy.settings import options_from_settings, setting_name, spider_overrides

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger("sitemap_reader.scrapy")

#: The setting: unset or False (trust what was typed), True, or "never".
SETTING: Final = setting_name("allow_private")
#: Place in DOWNLOADER_MIDDLEWARES: before RobotsTxtMiddleware (100), so a refused host's
#: robots.txt is not fetched either, and after OffsiteMiddleware (50).
GUARD_ORDER: Final = 80
# The meta keys of discovery's requests (sitemap_reader.scrapy.driver.SITEMAP_META_KEY
# and META_KEY), spelled here so the guard does not depend on the traversal's module.
_SITEMAP_META: Final = "sitemap_reader_sitemap"
_PAGE_META: Final = "sitemap_reader"
_TARGET_META: Final = "sitemap_reader_target"
#: The trust of a target that could not be read: public addresses only.
_GUARDED: Final = SiteTrust(open=False)
_HINT: Final = f"(see {SETTING})"


def enable(settings: BaseSettings) -> None:
    """Add the guard to ``DOWNLOADER_MIDDLEWARES`` (an order already given is kept)."""
    settings.setdefault_in_component_priority_dict(
        "DOWNLOADER_MIDDLEWARES", PrivateAddressMiddleware, GUARD_ORDER
    )


def warn_if_disabled(crawler: Crawler) -> None:
    """Log a warning when discovery runs without the guard in the downloader."""
    enabled = crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES")
    names = {k if isinstance(k, str) else f"{k.__module__}.{k.__qualname__}" for k in enabled}
    if f"{__name__}.PrivateAddressMiddleware" not in names:
        logger.warning(
            "sitemap-reader: the private-address guard is off; add %s.PrivateAddressMiddleware "
            "to DOWNLOADER_MIDDLEWARES (the Addon does it for you)",
            __name__,
        )


class Policy:
    """Which requests of ours may reach which addresses, for one crawl.

    ``private`` is the reader's ``allow_private`` (see the module docstring); ``targets``
    are the typed targets, in the order discovery numbers them. Each target's site has its
    own trust (:class:`~sitemap_reader.discovery.addresses.SiteTrust`): a name one target
    typed is trusted for that target's requests only.

    >>> policy = Policy(None, ["http://127.0.0.1:8080/", "example.com", "other.example"])
    >>> policy.private_allowed(0), policy.private_allowed(1)
    (True, False)
    >>> policy.trusted("example.com", 1), policy.trusted("example.com", 2)
    (True, False)
    >>> never = Policy("never", ["http://127.0.0.1:8080/", "example.com"])
    >>> never.private_allowed(0), never.trusted("example.com", 1)
    (False, False)
    """

    def __init__(self, private: PrivateSetting, targets: Iterable[str]) -> None:
        self.mode: PrivateMode = private_mode(private)
        self.targets: list[Target | None] = [_classify(t) for t in targets]
        self._sites = [_GUARDED if t is None else site_trust(t, private) for t in self.targets]
        everyone = bool(self._sites) and all(site.open for site in self._sites)
        #: A request that does not say its target (a page of an older crawl resumed
        #: from JOBDIR): unguarded only when every target's site is.
        self._unknown = SiteTrust(open=everyone)

    def _site(self, target: int | None) -> SiteTrust:
        if target is not None and 0 <= target < len(self._sites):
            return self._sites[target]
        return self._unknown

    def private_allowed(self, target: int | None) -> bool:
        """Whether the site of target number ``target`` is unguarded (None: a request
        that does not say its target, unguarded only when every target is)."""
        return self._site(target).open

    def trusted(self, host: str, target: int | None) -> bool:
        """True when ``host`` is a name target number ``target`` typed (it may resolve
        anywhere for that target's requests, and only for them)."""
        return self._site(target).trusts(host)

    def refusal(self, url: str, target: int | None) -> tuple[str | None, str | None]:
        """(why ``url`` is refused, or None; the host name still to resolve, or None)."""
        host = _host_of(url)
        problem = numeric_host_problem(host)
        if problem is not None:
            return problem, None
        if not host or self.private_allowed(target):
            return None, None
        if is_ip_literal(host):
            if is_public_address(host):
                return None, None
            return f"refused non-public address {host} {_HINT}", None
        if self.trusted(host, target):
            return None, None
        return None, host  # a name: its addresses decide


class PrivateAddressMiddleware:
    """Downloader middleware: refuse discovery's requests to non-public addresses.

    ``DOWNLOADER_MIDDLEWARES = {"sitemap_reader.scrapy.addresses.PrivateAddressMiddleware": 80}``
    (the Addon and the mixin add it themselves). See the module docstring for the policy.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._policy: Policy | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Scrapy's constructor hook."""
        return cls(crawler)

    @property
    def policy(self) -> Policy:
        """The policy, built on first use (the spider's targets are known by then)."""
        if self._policy is None:
            crawler = self.crawler
            spider = spider_overrides(crawler.spider)
            options, scrapy = options_from_settings(crawler.settings, spider)
            self._policy = Policy(options.network.allow_private, scrapy.targets)
        return self._policy

    async def process_request(self, request: Request, spider: Any = None) -> None:
        """Raise IgnoreRequest for a request of ours that may not reach its address."""
        meta = request.meta
        state = meta.get(_SITEMAP_META)
        if state is None and _PAGE_META not in meta:
            return  # the spider's own request: not ours to judge
        target = state.get("target") if isinstance(state, dict) else meta.get(_TARGET_META)
        reason, name = self.policy.refusal(request.url, target if isinstance(target, int) else None)
        if reason is None and name is not None:
            reason = _check_resolved(name, await _resolve(name))
        if reason is not None:
            self._refuse(request, reason, page=state is None)

    def _refuse(self, request: Request, reason: str, *, page: bool) -> None:
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("sitemap_reader/problems/blocked")
        # A sitemap's failure is logged as a warning by discovery (the reason is in the
        # IgnoreRequest); a page request has nobody else to report it.
        level = logging.WARNING if page else logging.INFO
        logger.log(level, "sitemap-reader: %s: blocked: %s", request.url, reason)
        raise IgnoreRequest(reason)


def _classify(text: str) -> Target | None:
    try:
        return classify(text)
    except ValueError:  # a bad target: discovery reports it; it trusts nothing here
        return None


def _host_of(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _check_resolved(name: str, addresses: list[str]) -> str | None:
    """Why the answers for ``name`` are refused (any non-public one), or None."""
    private = sorted({a for a in addresses if not is_public_address(a)})
    if not private:
        return None
    return f"refused non-public address: {name} resolves to {', '.join(private)} {_HINT}"


class _Addresses:
    """An ``IResolutionReceiver`` that collects the host of every address resolved."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.done: Deferred[list[str]] = Deferred()

    def resolutionBegan(self, resolution: object) -> None:
        """Twisted's hook: nothing to do."""

    def addressResolved(self, address: object) -> None:
        """Twisted's hook: one more address."""
        host = getattr(address, "host", None)
        if isinstance(host, str):
            self.hosts.append(host)

    def resolutionComplete(self) -> None:
        """Twisted's hook: the answer is complete (empty when the name did not resolve)."""
        self.done.callback(self.hosts)


async def _resolve(name: str) -> list[str]:
    """Every address the reactor's resolver gives for ``name`` (the download's own).

    Empty when it does not resolve: the download then fails with its own DNS error.
    """
    from twisted.internet import reactor  # the installed one, asyncio or not

    receiver = _Addresses()
    reactor.nameResolver.resolveHostName(receiver, name, 0)
    return await maybe_deferred_to_future(receiver.done)
