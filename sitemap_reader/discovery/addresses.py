"""The private-address policy (SSRF), sans-I/O: which addresses a fetch may connect to.

Every front door applies it: the aiohttp reader (:mod:`sitemap_reader.crawl.resolver` wraps
its resolver) and the Scrapy integration (:mod:`sitemap_reader.scrapy.addresses`, a downloader
middleware). This module only judges hosts, addresses and targets; it opens no socket and
imports no event loop.

Theory of operation
-------------------
A sitemap, an index or a redirect is content chosen by the site, so a public site could
point the crawler at ``http://127.0.0.1:6379/``, at a cloud metadata service
(``169.254.169.254``) or at an intranet host. The guard refuses every address that is not
globally routable (:func:`is_public_address`), and it checks the *address*, not the name,
at the moment a connection is made: a host name when it is resolved (every non-public
answer is dropped unless the user typed that name: :meth:`AddressPolicy.trusted`), an IP
literal before every request, redirect hops included (:meth:`AddressPolicy.check_url`).
Each driver applies these judgments where its client connects.

A host that is a number but not a canonical dotted quad (``2130706433``, ``0177.0.0.1``,
``127.1``, ``0x7f.1``, ``127.0.0.01``) is refused in every session, guarded or not
(:func:`numeric_host_problem`). The WHATWG URL standard and ``inet_aton`` read such hosts
as IPv4 addresses (all of those mean 127.0.0.1), strict :mod:`ipaddress` parsing calls
them names, and aiohttp versions disagree on whether to resolve them or connect to them:
a guard that reads them one way while the client reads them another can be walked
around. No real sitemap uses them, so they are refused outright, with their meaning
in the message; canonical dotted quads go through the literal check above.

Which sites are guarded (:func:`private_allowed`) follows the ``allow_private`` option
(:data:`PrivateSetting`):

* None or False, the default, trusts what the *user* typed: a local file, a loopback or
  private IP literal, or ``localhost`` as the target means a private network on purpose,
  so that site is not guarded; for any other target the site is guarded, except that the
  target's own host name may resolve anywhere (an intranet name typed by the user).
  Every other host it names, or redirects to, must be public. False means the same as
  None: a value that reads as the default behaves as the default.
* True guards no site.
* ``"never"`` guards every site, the typed targets included: a target that is a private
  address is refused, and a typed name must resolve to public addresses too (a service
  fetching targets its users submit).
"""

from __future__ import annotations

import ipaddress
from typing import Final, Literal, TypeAlias

from yarl import URL

from sitemap_reader.discovery.targets import Target
from sitemap_reader.errors import UsageError
from sitemap_reader.options.declare import PrivateSetting

#: What a :data:`PrivateSetting` means: trust the typed targets, allow all, or allow none.
PrivateMode: TypeAlias = Literal["typed", "all", "never"]
#: The ``allow_private`` value that guards the typed targets too.
NEVER: Final = "never"
#: Host names that always mean this machine (RFC 6761 §6.3).
_LOCAL_NAMES = ("localhost", "localhost.localdomain")


class BlockedAddress(OSError):
    """A connection to a non-public address was refused (raised by
    :meth:`AddressPolicy.check_url` and by the aiohttp reader's resolver, which aiohttp
    wraps; :mod:`~sitemap_reader.crawl.fetch` turns it into ``blocked``)."""


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


def parse_numeric_host(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host means when it "ends in a number" (WHATWG URL standard).

    Each dot-separated part is decimal, octal (a leading ``0``) or hex (``0x``); the
    last part fills the remaining bytes, as ``inet_aton`` reads it. Returns None for a
    host whose last label is not a number (a name); raises ValueError for a numeric host
    that is no address at all (``1.2.3.4.5``, ``08.1``, ``256.0.0.1``).

    >>> [str(parse_numeric_host(h)) for h in ("2130706433", "0177.0.0.1", "127.1", "0x7f.1")]
    ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1']
    >>> parse_numeric_host("example.com") is None
    True
    """
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()  # one trailing dot (a fully qualified name) is allowed
    if not _is_number_label(labels[-1]):
        return None
    if len(labels) > 4:
        raise ValueError(f"{host}: more than 4 numeric parts")
    numbers = [_parse_number(label, host) for label in labels]
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (4 - len(numbers)):
        raise ValueError(f"{host}: a part is out of range")
    value = last
    for place, number in enumerate(numbers):
        value += number << (8 * (3 - place))
    return ipaddress.IPv4Address(value)


def _is_number_label(label: str) -> bool:
    """The WHATWG "ends in a number" test for the last label of a host."""
    if label.isascii() and label.isdigit():
        return True
    lower = label.lower()
    return lower.startswith("0x") and all(c in "0123456789abcdef" for c in lower[2:])


def _parse_number(label: str, host: str) -> int:
    lower = label.lower()
    try:
        if lower.startswith("0x"):
            return int(lower[2:] or "0", 16)
        if len(lower) > 1 and lower.startswith("0"):
            return int(lower[1:], 8)
        if lower.isascii() and lower.isdigit():
            return int(lower, 10)
    except ValueError:
        pass
    raise ValueError(f"{host}: {label!r} is not a number")


def numeric_host_problem(host: str) -> str | None:
    """Why ``host`` is refused as a numeric host that is not a canonical dotted quad.

    None for names, canonical dotted quads and IPv6 literals (their meaning is not in
    doubt). The reason names the address the host means, when it means one.

    >>> numeric_host_problem("0177.0.0.1")
    'refused non-canonical numeric host 0177.0.0.1 (it means 127.0.0.1)'
    >>> numeric_host_problem("1.2.3.4.5")
    'refused numeric host 1.2.3.4.5: more than 4 numeric parts'
    >>> numeric_host_problem("127.0.0.1"), numeric_host_problem("example.com")
    (None, None)
    """
    if not host or host.startswith("["):
        return None
    try:
        address = parse_numeric_host(host)
    except ValueError as exc:
        return f"refused numeric host {exc}"
    if address is None or str(address) == host:
        return None
    return f"refused non-canonical numeric host {host} (it means {address})"


def _is_local_name(host: str) -> bool:
    host = host.rstrip(".").lower()
    return host in _LOCAL_NAMES or host.endswith(".localhost")


def private_mode(private: PrivateSetting) -> PrivateMode:
    """What a value of the ``allow_private`` option means (see the module doc).

    >>> [private_mode(value) for value in (None, False, True, "never")]
    ['typed', 'typed', 'all', 'never']
    """
    if private is None or private is False:
        return "typed"
    if private is True:
        return "all"
    if private == NEVER:
        return "never"
    raise UsageError(f"allow_private must be True, False, None or {NEVER!r}, not {private!r}")


def private_allowed(target: Target, private: PrivateSetting) -> bool:
    """Whether the site of ``target`` may reach non-public addresses (see the module doc).

    ``private`` is the ``allow_private`` option: None and False trust a target that is
    itself private, True allows every site, ``"never"`` none.

    >>> from sitemap_reader.discovery.targets import classify
    >>> loopback, public = classify("http://127.0.0.1:8080/s.xml"), classify("example.com")
    >>> private_allowed(loopback, None), private_allowed(loopback, False)
    (True, True)
    >>> private_allowed(public, None), private_allowed(public, True)
    (False, True)
    >>> private_allowed(loopback, "never")
    False
    """
    mode = private_mode(private)
    if mode != "typed":
        return mode == "all"
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
        """Raise :class:`BlockedAddress` when ``url`` names a non-public IP literal (or a
        numeric host of another spelling, see :func:`check_numeric_host`).

        Names are left to the resolver (checked when resolved: see
        :class:`~sitemap_reader.crawl.resolver.PublicOnlyResolver`).
        """
        host = check_numeric_host(url)
        if is_ip_literal(host) and not is_public_address(host):
            raise BlockedAddress(f"refused non-public address {host}")


def check_numeric_host(url: str) -> str:
    """The raw host of ``url``; :class:`BlockedAddress` when it is a numeric host that is
    not a canonical dotted quad (refused whatever the policy, see the module doc)."""
    host = URL(url).raw_host or ""
    problem = numeric_host_problem(host)
    if problem is not None:
        raise BlockedAddress(problem)
    return host
