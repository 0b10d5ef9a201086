"""Registrable domains, from the Public Suffix List that the ``publicsuffixlist`` package
ships (its bundled copy, read from the package once, on first use; never downloaded).

The registrable domain of a host is its public suffix plus one label: ``example.co.uk``
for ``docs.example.co.uk``, ``alice.github.io`` for ``www.alice.github.io`` (the list's
private section counts: ``github.io`` belongs to no one site). One rule, used wherever the
library asks "the same site?": ``--parent`` never climbs above it, the "site" scope never
admits a public suffix's subdomains, the www/bare twin exists only for the registrable
domain and its ``www``, and the user's headers go only where the scope goes. A name the
list does not know ends in an unknown top-level label, which is taken as a public suffix
(``site.example`` is registrable). An IP address has no registrable domain.

>>> registrable_domain("docs.example.co.uk"), registrable_domain("co.uk")
('example.co.uk', None)
>>> is_public_suffix("github.io"), is_public_suffix("alice.github.io")
(True, False)
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib.metadata import PackageNotFoundError, version

from publicsuffixlist import PublicSuffixList

__all__ = ["is_public_suffix", "list_version", "registrable_domain"]

# Hosts whose answers are remembered (a run sees a few hosts, a scope filter many URLs).
_CACHE_SIZE = 4096


@cache
def _list() -> PublicSuffixList:
    """The bundled list, parsed once."""
    return PublicSuffixList()


def _name(host: str) -> str | None:
    """A host as the list reads it (lower case, no final dot); None for an IP address."""
    host = host.rstrip(".").lower()
    if not host or ":" in host or host.startswith("[") or host.replace(".", "").isdigit():
        return None
    return host


@lru_cache(maxsize=_CACHE_SIZE)
def registrable_domain(host: str) -> str | None:
    """The registrable domain of ``host``; None for a public suffix or an IP address."""
    name = _name(host)
    if name is None:
        return None
    found: str | None = _list().privatesuffix(name)
    return found


@lru_cache(maxsize=_CACHE_SIZE)
def is_public_suffix(host: str) -> bool:
    """Whether ``host`` is itself a public suffix (``com``, ``co.uk``, ``github.io``)."""
    name = _name(host)
    return name is not None and bool(_list().is_public(name))


def list_version() -> str:
    """The version of the bundled list's package (its last part is the list's date)."""
    try:
        return version("publicsuffixlist")
    except PackageNotFoundError:  # pragma: no cover - a dependency, always installed
        return "unknown"
