"""The private-address guard (SSRF) of the aiohttp reader: its resolver.

The policy itself (what is public, what a numeric host means, which sites are guarded)
is sans-I/O, in :mod:`sitemap_reader.discovery.addresses`. A guarded session applies it at the two
places aiohttp connects:

* host names go through :class:`PublicOnlyResolver`, the resolver of the guarded
  aiohttp connector: it resolves with the real resolver and drops non-public answers, so
  a DNS name pointing at 10.0.0.1 (or rebinding to it) never gets a socket;
* IP literals never reach a resolver (aiohttp connects to them directly), so the fetcher
  asks :meth:`~sitemap_reader.discovery.addresses.AddressPolicy.check_url` before every request,
  redirect hops included.
"""

from __future__ import annotations

import socket

from aiohttp.abc import AbstractResolver, ResolveResult

from sitemap_reader.discovery.addresses import AddressPolicy, BlockedAddress, is_public_address


class PublicOnlyResolver(AbstractResolver):
    """A resolver wrapper that drops every non-public answer for untrusted names.

    Raises :class:`~sitemap_reader.discovery.addresses.BlockedAddress` when nothing public
    is left, so
    aiohttp never opens a socket to a private address. ``inner`` is the real resolver (a
    test may pass one that maps made-up names to 127.0.0.1).
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
            raise BlockedAddress(f"refused non-public address: {host} resolves to {shown}")
        return public

    async def close(self) -> None:
        """Release the inner resolver."""
        await self._inner.close()
