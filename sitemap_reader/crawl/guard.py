"""The private-address guard (SSRF): which addresses a fetch may connect to.

Theory of operation
-------------------
A sitemap, an index or a redirect is content chosen by the site, so a public site could
point the crawler at ``http://127.0.0.1:6379/``, at a cloud metadata service
(``169.254.169.254``) or at an intranet host. The guard refuses every address that is not
globally routable, and it checks the *address*, not the name, at the moment a connection
is made:

* host names go through :class:`PublicOnlyResolver`, the resolver of the guarded
  aiohttp connector: it resolves with the real resolver and drops non-public answers, so
  a DNS name pointing at 10.0.0.1 (or rebinding to it) never gets a socket;
* IP literals never reach a resolver (aiohttp connects to them directly), so the fetcher
  asks :meth:`AddressPolicy.check_url` before every request, redirect hops included.

Which sites are guarded (:func:`private_allowed`): with ``allow_private=True`` none, with
``False`` all (a service fetching user-submitted targets wants this: the target itself is
then untrusted too). The default, ``None``, trusts what the *user* typed: a local file, a
loopback or private IP literal, or ``localhost`` as the target means a private network on
purpose, so that site is not guarded; for any other target the site is guarded, except
that the target's own host name may resolve anywhere (an intranet name typed by the
user). Every other host it names, or redirects to, must be public.
"""

from __future__ import annotations

import ipaddress
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from sitemap_reader.crawl.targets import Target

#: Host names that always mean this machine (RFC 6761 §6.3).
_LOCAL_NAMES = ("localhost", "localhost.localdomain")


class BlockedAddress(OSError):
    """A connection to a non-public address was refused (raised from the resolver, so
    aiohttp wraps it; :mod:`~sitemap_reader.crawl.fetch` turns it into ``blocked``)."""


def is_public_address(text: str) -> bool:
    """True when ``text`` is an IP address that is globally routable unicast.

    Loopback, private (RFC 1918, ULA), link-local, multicast, reserved, unspecified,
    shared (CGNAT) and documentation ranges are not public; an IPv4 address embedded in
    IPv6 (mapped, 6to4, Teredo) is judged as that IPv4 address.

    >>> [is_public_address(a) for a in ("93.184.216.34", "127.0.0.1", "10.1.2.3")]
    [True, False, False]
    >>> [is_public_address(a) for a in ("169.254.169.254", "224.0.0.1", "::ffff:127.0.0.1")]
    [False, False, False]
    >>> is_public_address("example.com")
    False
    """
    try:
        address = ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is not None:
            return is_public_address(str(embedded))
    return address.is_global and not (
        address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or address.is_loopback
        or address.is_link_local
        or address.is_private
    )


def is_ip_literal(host: str) -> bool:
    """True when ``host`` is an IPv4 or IPv6 address rather than a name."""
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def _is_local_name(host: str) -> bool:
    host = host.rstrip(".").lower()
    return host in _LOCAL_NAMES or host.endswith(".localhost")


def private_allowed(target: Target, allow_private: bool | None) -> bool:
    """Whether the site of ``target`` may reach non-public addresses (see the module doc).

    >>> from sitemap_reader.crawl.targets import classify
    >>> private_allowed(classify("http://127.0.0.1:8080/s.xml"), None)
    True
    >>> public = classify("example.com")
    >>> private_allowed(public, None), private_allowed(public, True)
    (False, True)
    >>> private_allowed(classify("http://localhost/"), False)
    False
    """
    if allow_private is not None:
        return allow_private
    if target.kind in ("file", "stdin"):
        return True
    host = target.host or ""
    if is_ip_literal(host):
        return not is_public_address(host)
    return _is_local_name(host)


class AddressPolicy:
    """The guard of one guarded session: public addresses, plus trusted host names.

    ``trust(host)`` adds a host name the user typed as a target: it may resolve to any
    address. Trust only grows over the life of a reader, so a DNS answer the connector
    cached, or a pooled connection, can never outlive the policy that allowed it.
    """

    def __init__(self) -> None:
        self._trusted: set[str] = set()

    def trust(self, host: str) -> None:
        """Let ``host`` (a name, not an IP literal) resolve to private addresses."""
        if host and not is_ip_literal(host):
            self._trusted.add(host.rstrip(".").lower())

    def trusted(self, host: str) -> bool:
        """True when ``host`` was typed by the user as a target."""
        return host.rstrip(".").lower() in self._trusted

    def check_url(self, url: str) -> None:
        """Raise :class:`BlockedAddress` when ``url`` names a non-public IP literal.

        Names are left to :class:`PublicOnlyResolver` (checked when resolved).
        """
        host = URL(url).raw_host or ""
        if is_ip_literal(host) and not is_public_address(host):
            raise BlockedAddress(f"refused non-public address {host} (see --allow-private)")


class PublicOnlyResolver(AbstractResolver):
    """A resolver wrapper that drops every non-public answer for untrusted names.

    Raises :class:`BlockedAddress` when nothing public is left, so aiohttp never opens a
    socket to a private address. ``inner`` is the real resolver (a test may pass one that
    maps made-up names to 127.0.0.1).
    """

    def __init__(self, inner: AbstractResolver, policy: AddressPolicy) -> None:
        self._inner = inner
        self._policy = policy

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """Resolve ``host``; keep only public addresses unless the host is trusted."""
        found = await self._inner.resolve(host, port, family)
        if self._policy.trusted(host):
            return found
        public = [r for r in found if is_public_address(r["host"])]
        if not public:
            shown = ", ".join(sorted({r["host"] for r in found})) or "nothing"
            raise BlockedAddress(
                f"refused non-public address: {host} resolves to {shown} (see --allow-private)"
            )
        return public

    async def close(self) -> None:
        """Release the inner resolver."""
        await self._inner.close()
