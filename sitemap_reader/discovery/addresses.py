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
answer is dropped unless the target the request is made for typed that name:
:class:`SiteTrust`), an IP literal before every request, redirect hops included
(:meth:`AddressPolicy.check_url`). Each driver applies these judgments where its client
connects.

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

Trust is per site, never per run (:class:`SiteTrust`, :func:`site_trust`): what one
target may reach (its typed name resolving to a private address, the proxy it was given)
is that target's alone, so another target's index child on that name is guarded like any
other host. A name is compared in its ASCII form (an IDN as ``xn--``), so one site has one
identity whatever the spelling it was typed in.

Targets read from data (a Spark or Ray table, the Redis queue) are not typed targets:
nobody chose them on purpose, so :func:`from_data` reads ``allow_private`` for them as
"only True allows private addresses". A private or loopback literal, ``localhost`` or a
file among them is refused before anything is fetched (:func:`data_refusal`), and a name
that resolves to a private address is refused when it is resolved (the ``"never"`` mode).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from yarl import URL

from sitemap_reader.discovery.targets import Target, classify
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


def host_name(host: str) -> str:
    """The one spelling of a host for the guard and for the site: ASCII (an IDN in its
    ``xn--`` form), lower case, without the root's trailing dot.

    >>> host_name("Bücher.Example."), host_name("xn--bcher-kva.example")
    ('xn--bcher-kva.example', 'xn--bcher-kva.example')
    """
    host = host.rstrip(".").lower()
    if host.isascii() or is_ip_literal(host):
        return host
    try:
        return URL.build(scheme="http", host=host).raw_host or host
    except ValueError:
        return host


@dataclass(frozen=True, slots=True)
class SiteTrust:
    """What the site of one target may reach (see the module doc).

    ``open``: every address (a private target, ``allow_private=True``). Otherwise only
    public addresses, except the host ``names`` (the target's own typed name, in
    :func:`host_name`'s spelling), which may resolve anywhere. One per target, never
    shared: nothing one target may reach is another's.
    """

    open: bool
    names: frozenset[str] = frozenset()

    def trusts(self, host: str) -> bool:
        """True when ``host`` (a name) may resolve anywhere for this site."""
        return self.open or host_name(host) in self.names


def site_trust(target: Target, private: PrivateSetting) -> SiteTrust:
    """What the site of ``target`` may reach under ``allow_private`` = ``private``.

    >>> from sitemap_reader.discovery.targets import classify
    >>> site_trust(classify("intranet.example"), None)
    SiteTrust(open=False, names=frozenset({'intranet.example'}))
    >>> site_trust(classify("intranet.example"), "never")
    SiteTrust(open=False, names=frozenset())
    >>> site_trust(classify("http://10.0.0.1/"), None).open
    True
    """
    if private_allowed(target, private):
        return SiteTrust(open=True)
    host = target.host or ""
    if private_mode(private) == "typed" and host and not is_ip_literal(host):
        return SiteTrust(open=False, names=frozenset({host_name(host)}))
    return SiteTrust(open=False)


def from_data(private: PrivateSetting) -> PrivateSetting:
    """The ``allow_private`` of targets read from data (tables, queues): True stays True,
    anything else is ``"never"``, so a name from the data that resolves to a private
    address is refused like a private literal (see the module doc).

    >>> [from_data(value) for value in (None, False, True, "never")]
    ['never', 'never', True, 'never']
    """
    return True if private is True else NEVER


#: Why :func:`data_refusal` refuses a target (the door adds how to allow it).
NOT_HTTP: Final = "refused: not an http(s) URL or a domain"
PRIVATE_DATA: Final = "refused: a private or loopback target"


def data_refusal(text: str, private: PrivateSetting) -> str | None:
    """Why a target read from data is not run (None: it is run): it is no http(s) URL or
    domain (a file, standard input, junk), or, unless ``private`` is True, a private or
    loopback literal or ``localhost``. A name that resolves to a private address is
    refused later, when it is resolved (:func:`from_data`).

    >>> data_refusal("/etc/passwd", None) == NOT_HTTP
    True
    >>> data_refusal("http://127.0.0.1:8080/", False) == PRIVATE_DATA
    True
    >>> data_refusal("http://127.0.0.1:8080/", True) is None
    True
    """
    try:
        target = classify(text)
    except UsageError:
        return NOT_HTTP
    if target.kind not in ("site", "robots", "sitemap"):
        return NOT_HTTP
    if private is not True and private_allowed(target, None):
        return PRIVATE_DATA
    return None


class AddressPolicy:
    """The guard of one guarded session: public addresses only, plus the host names in
    ``trusted`` (none by default), which may resolve anywhere.

    The reader's guarded sessions trust no name: a target's own typed name is requested
    through its own unguarded session (:class:`SiteTrust`), so no other target's request
    ever meets a DNS answer or a pooled connection that trust made.
    """

    def __init__(self, trusted: Iterable[str] = ()) -> None:
        self._trusted = frozenset(host_name(host) for host in trusted if not is_ip_literal(host))

    def trusted(self, host: str) -> bool:
        """True when ``host`` is one of the names this guard trusts."""
        return host_name(host) in self._trusted

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
