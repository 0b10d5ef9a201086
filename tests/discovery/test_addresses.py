"""The address policy (sitemap_reader.discovery.addresses): public addresses, numeric hosts, which
sites are guarded under each value of allow_private. Pure functions, no network; the
policy on real servers is in tests/hostile/test_guard.py (aiohttp) and
tests/scrapy/test_addresses.py (Scrapy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitemap_reader.discovery.addresses import (
    is_public_address,
    numeric_host_problem,
    parse_numeric_host,
    private_allowed,
    private_mode,
)
from sitemap_reader.discovery.targets import classify
from sitemap_reader.errors import UsageError
from sitemap_reader.options.declare import PrivateSetting


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("::1", False),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.1.1", False),
        ("100.64.0.1", False),  # shared address space (CGNAT)
        ("169.254.169.254", False),  # link-local: cloud metadata
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("224.0.0.251", False),  # multicast
        ("ff02::1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("240.0.0.1", False),  # reserved
        ("192.0.2.1", False),  # documentation
        ("::ffff:127.0.0.1", False),  # IPv4-mapped loopback
        ("2002:7f00:1::1", False),  # 6to4 around 127.0.0.1
        ("[::1]", False),
        ("localhost", False),  # a name is never an address
    ],
)
def test_is_public_address(address: str, public: bool) -> None:
    """Only globally routable unicast addresses are public, however they are written."""
    assert is_public_address(address) is public


#: private_allowed under the default (None, and False: the same), by target.
_BY_TARGET = [
    ("https://example.com/sitemap.xml", False),
    ("example.com", False),
    ("http://127.0.0.1:8080/s.xml", True),
    ("http://[::1]:8080/", True),
    ("http://10.1.2.3/", True),
    ("http://localhost:8080/", True),
    ("http://app.localhost/", True),
    ("http://93.184.216.34/", False),
]


@pytest.mark.parametrize("option", [None, False])
@pytest.mark.parametrize(("target", "allowed"), _BY_TARGET)
def test_default_follows_the_target(target: str, option: bool | None, allowed: bool) -> None:
    """allow_private None and False (the same default): a target that is itself private,
    local or a file leaves its site unguarded; any other target's site is guarded."""
    assert private_allowed(classify(target), option) is allowed


@pytest.mark.parametrize("target", [target for target, _ in _BY_TARGET])
def test_true_and_never_are_absolute(target: str) -> None:
    """allow_private True unguards every site, "never" guards every one."""
    assert private_allowed(classify(target), True) is True
    assert private_allowed(classify(target), "never") is False


def test_local_file_target_allows_private(tmp_path: Path) -> None:
    """A local file has no network origin: nothing to guard (unless "never")."""
    path = tmp_path / "s.xml"
    path.write_bytes(b"https://example.com/\n")
    target = classify(str(path))
    assert private_allowed(target, None) is private_allowed(target, False) is True
    assert private_allowed(target, "never") is False


@pytest.mark.parametrize(
    ("value", "mode"), [(None, "typed"), (False, "typed"), (True, "all"), ("never", "never")]
)
def test_private_mode(value: PrivateSetting, mode: str) -> None:
    """The three meanings of allow_private: False means the default, as None does."""
    assert private_mode(value) == mode


@pytest.mark.parametrize("value", ["Never", "no", "false", 0, 1, ""])
def test_other_values_are_refused(value: object) -> None:
    """A value that is not True, False, None or "never" is a usage error, never a guess
    (a string used to read as true and allow everything)."""
    with pytest.raises(UsageError, match="allow_private must be"):
        private_allowed(classify("example.com"), value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("host", "meaning"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("127.0.0.01", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0xA9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("0xa.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("0x", "0.0.0.0"),
        ("1.2.3.4.", "1.2.3.4"),
        ("4294967295", "255.255.255.255"),
    ],
)
def test_parse_numeric_host(host: str, meaning: str) -> None:
    """Numeric hosts mean what inet_aton and the WHATWG URL parser say they mean."""
    assert str(parse_numeric_host(host)) == meaning
    assert numeric_host_problem(host) is not None


@pytest.mark.parametrize(
    "host", ["1.2.3.4.5", "08.0.0.1", "0x1g.1", "256.0.0.1", "4294967296", "1.16777216", "1e2.1"]
)
def test_numeric_hosts_that_are_no_address(host: str) -> None:
    """A host ending in a number that is no IPv4 address is refused as such."""
    with pytest.raises(ValueError):
        parse_numeric_host(host)
    assert (numeric_host_problem(host) or "").startswith("refused numeric host")


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "93.184.216.34", "example.com", "1.example", "[::1]", ""]
)
def test_canonical_hosts_are_not_numeric_problems(host: str) -> None:
    """Names, canonical dotted quads and IPv6 literals are left to the other checks."""
    assert numeric_host_problem(host) is None
