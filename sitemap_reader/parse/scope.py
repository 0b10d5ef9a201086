"""Which URLs a sitemap may vouch for: the protocol's location rule and the scope filter.

Two different questions live here:

* :func:`in_location` is the sitemaps.org rule, applied in strict mode: a sitemap at
  ``http://example.com/catalog/sitemap.xml`` may only list URLs with the same scheme, host
  and port whose path starts with ``/catalog/`` (a query on the sitemap URL is ignored).
* :class:`Scope` is the crawler's filter (``--scope``): ``any`` keeps everything, ``host``
  keeps URLs on the sitemap's own host, ``site`` (the default) keeps URLs on the target's
  hosts, their www/non-www twins and their subdomains, plus hosts that cross-submit the
  sitemap in their robots.txt (:meth:`Scope.add_host`). Ports are ignored, case too. A
  public suffix (the Public Suffix List: :mod:`sitemap_reader.parse.domains`) is never a
  twin, and never admits its subdomains: they are other parties' sites.

Both work on normalized URLs (what :func:`~sitemap_reader.parse.normalize.normalize_url`
returns) and are cheap: string operations and a bounded per-host cache.

>>> in_location("http://example.com/catalog/a?x=1", "http://example.com/catalog/sitemap.xml")
True
>>> scope = Scope("site", ["example.com"])
>>> scope.allows("https://blog.example.com/post", None), scope.allows("https://evil.org/", None)
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from sitemap_reader.errors import UsageError
from sitemap_reader.parse.domains import is_public_suffix
from sitemap_reader.parse.normalize import normalize_url

__all__ = ["SCOPE_MODES", "Scope", "ScopeMode", "host_of", "in_location"]

ScopeMode = Literal["site", "host", "any"]
#: The accepted scope modes.
SCOPE_MODES: tuple[str, ...] = ("site", "host", "any")
# Hosts remembered by Scope.allows; past this many the cache starts over (bounded memory).
_CACHE_SIZE = 4096


def in_location(url: str, sitemap_url: str) -> bool:
    """Whether ``url`` lies under ``sitemap_url``'s directory (same scheme, host and port).

    >>> in_location("https://example.com/image/1", "https://example.com/catalog/sitemap.xml")
    False
    """
    prefix = _location_prefix(sitemap_url)
    if prefix is None:
        return False
    target = normalize_url(url)
    return target is not None and target.startswith(prefix)


@lru_cache(maxsize=256)
def _location_prefix(sitemap_url: str) -> str | None:
    """``scheme://host[:port]/dir/`` of a sitemap: its URL up to the last '/' of the path."""
    normalized = normalize_url(sitemap_url)
    if normalized is None:
        return None
    path_end = normalized.find("?")
    head = normalized if path_end < 0 else normalized[:path_end]
    return head[: head.rfind("/") + 1]


def host_of(url: str) -> str | None:
    """The lower-case host of an absolute URL, without userinfo or port; None if absent.

    >>> host_of("https://User@WWW.Example.com:8080/x?y")
    'www.example.com'
    """
    start = url.find("//")
    if start < 0:
        return None
    return _host_of_authority(_authority(url, start + 2))


def _authority(url: str, start: int) -> str:
    """The authority part of ``url``, beginning at ``start``."""
    end = len(url)
    for stop in "/?#":
        found = url.find(stop, start, end)
        if found >= 0:
            end = found
    return url[start:end]


def _host_of_authority(authority: str) -> str | None:
    """The host of an authority (``user@host:port``), lower-case."""
    host = authority.rpartition("@")[2]
    # An IPv6 literal keeps its brackets (and its colons); otherwise the port goes.
    host = host[: host.find("]") + 1] if host.startswith("[") else host.partition(":")[0]
    return host.lower().rstrip(".") or None


def _twins(host: str) -> tuple[str, ...]:
    """A host and its www/non-www twin; a public suffix has none (``www.github.io``'s
    bare twin would admit every ``*.github.io`` site)."""
    host = host.lower().rstrip(".")
    if is_public_suffix(host):
        return (host,)
    if host.startswith("www."):
        bare = host[4:]
        return (host,) if is_public_suffix(bare) else (host, bare)
    return host, "www." + host


class Scope:
    """The scope filter for one target: ``Scope(mode, target_hosts).allows(url, sitemap_url)``.

    In ``site`` mode without any target host (a local file has no site) the sitemap's host
    is used instead, as in ``host`` mode.

    >>> Scope("site", ["this.github.io"]).allows("https://that.github.io/", None)
    False
    """

    def __init__(self, mode: str, target_hosts: Iterable[str] = ()) -> None:
        if mode not in SCOPE_MODES:
            raise UsageError(f"scope must be one of {', '.join(SCOPE_MODES)}, not {mode!r}")
        self.mode = mode
        self._roots: set[str] = set()
        self._cache: dict[str, bool] = {}
        for host in target_hosts:
            self.add_host(host)

    @property
    def hosts(self) -> frozenset[str]:
        """The hosts (with their twins) whose subdomains are in scope, in ``site`` mode."""
        return frozenset(self._roots)

    def add_host(self, host: str) -> None:
        """Put ``host`` (and its twin and subdomains) in scope: it cross-submits a sitemap."""
        host = _host_of_authority(host) or ""
        if host and host not in self._roots:
            self._roots.update(_twins(host))
            self._cache.clear()

    def allows(self, url: str, sitemap_url: str | None) -> bool:
        """Whether ``url`` (found in ``sitemap_url``, None for a local file) is in scope."""
        if self.mode == "any":
            return True
        start = url.find("//")
        if start < 0:
            return False
        if self.mode == "host" or not self._roots:
            if sitemap_url is None:
                return True
            return host_of(url) == host_of(sitemap_url)
        authority = _authority(url, start + 2)
        known = self._cache.get(authority)
        if known is None:
            known = self._in_site(_host_of_authority(authority))
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[authority] = known
        return known

    def _in_site(self, host: str | None) -> bool:
        """``host`` is a root, or a subdomain of one that is not a public suffix (a typed
        ``github.io`` keeps itself, not every site under it)."""
        if host is None:
            return False
        roots = self._roots
        if host in roots:
            return True
        dot = host.find(".")
        while dot >= 0:
            parent = host[dot + 1 :]
            if parent in roots:
                return not is_public_suffix(parent)
            dot = host.find(".", dot + 1)
        return False
