"""The private-address guard (SSRF), on a real server with a resolver that lies.

The test site runs on 127.0.0.1. A fake resolver maps made-up public-looking names to
127.0.0.1, so a "public" target can be crawled while every other name it mentions
resolves to a private address, as a hostile site's DNS would arrange.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from aiohttp import ThreadedResolver
from aiohttp.abc import AbstractResolver, ResolveResult

from sitemap_reader.crawl.guard import is_public_address, private_allowed
from sitemap_reader.crawl.targets import classify
from tests.crawl.crawl_kit import Reply, Site, collect, index, node_by_url, tree, urlset


class FakeResolver(AbstractResolver):
    """Resolves every name in ``names`` to 127.0.0.1; anything else fails like NXDOMAIN."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """127.0.0.1 for a known name."""
        self.asked.append(host)
        if host not in self.names:
            raise OSError(f"no such host {host}")
        return [
            ResolveResult(
                hostname=host,
                host="127.0.0.1",
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        """Nothing to release."""


def _on(site: Site, host: str, path: str) -> str:
    return f"http://{host}:{site.host.rsplit(':', 1)[1]}{path}"


def _build(site: Site) -> tuple[str, dict[str, str]]:
    """A public-looking index whose children reach private addresses in every way."""
    pub = "public.example"
    bad = {
        "name": _on(site, "internal.example", "/secret-name.xml"),
        "literal": site.url("/secret-literal.xml"),
        "redirect": _on(site, pub, "/to-internal.xml"),
        "redirect-literal": _on(site, pub, "/to-metadata.xml"),
    }
    site.add("/good.xml", urlset([_on(site, pub, "/page")]))
    for path in ("/secret-name.xml", "/secret-literal.xml", "/secret-redirect.xml"):
        site.add(path, urlset([_on(site, pub, path + "-page")]))
    site.add(
        "/to-internal.xml",
        Reply(
            status=302, headers={"Location": _on(site, "internal.example", "/secret-redirect.xml")}
        ),
    )
    site.add(
        "/to-metadata.xml",
        Reply(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}),
    )
    site.add("/index.xml", index([_on(site, pub, "/good.xml"), *bad.values()]))
    return _on(site, pub, "/index.xml"), bad


async def test_public_target_never_reaches_private_addresses(site: Site) -> None:
    """Public target: an index entry, a DNS answer, a redirect or an IP literal to a private
    address is refused before any request; the good sibling is still read."""
    target, bad = _build(site)
    resolver = FakeResolver("public.example", "internal.example")
    records, run = await collect(target, resolver=resolver, scope="any")
    assert [r.url for r in records] == [_on(site, "public.example", "/page")]
    for url in bad.values():
        node = node_by_url(run, url)
        assert node.failed and node.problems[0].code == "blocked", (url, node.problems)
        assert "non-public address" in node.problems[0].message
        assert "--allow-private" in node.problems[0].message
    assert site.hits["/secret-name.xml"] == site.hits["/secret-redirect.xml"] == 0
    assert site.hits["/secret-literal.xml"] == 0
    assert "internal.example" in resolver.asked  # refused on the resolved address


async def test_allow_private_lets_everything_through(site: Site) -> None:
    """allow_private=True: the same index is read whole (the metadata hop still fails to
    connect, but as a network error, not a refusal)."""
    target, _ = _build(site)
    resolver = FakeResolver("public.example", "internal.example")
    records, run = await collect(target, resolver=resolver, scope="any", allow_private=True)
    urls = {r.url for r in records}
    assert _on(site, "public.example", "/secret-name.xml-page") in urls
    assert _on(site, "public.example", "/secret-redirect.xml-page") in urls
    assert _on(site, "public.example", "/secret-literal.xml-page") in urls
    assert all("blocked" not in {p.code for p in n.problems} for n in run.nodes())
    assert site.hits["/secret-name.xml"] == 1


async def test_allow_private_false_refuses_the_target_itself(site: Site) -> None:
    """allow_private=False (a service fetching user input): a target name that resolves to
    loopback is refused too, and nothing is discovered."""
    target, _ = _build(site)
    run = await tree(target, resolver=FakeResolver("public.example"), allow_private=False)
    assert run.tree[0].problems[0].code == "blocked" and run.error is not None
    assert site.hits["/index.xml"] == 0


async def test_private_target_implies_allow_private(make_site: Any) -> None:
    """A loopback target (the default, allow_private=None) may read children on other
    private addresses: intranet use and tests work without a flag."""
    first, second = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    second.add("/child.xml", urlset([first.url("/from-second")]))
    first.add("/index.xml", index([second.url("/child.xml")]))
    records, run = await collect(first.url("/index.xml"), scope="any")
    assert [r.url for r in records] == [first.url("/from-second")]
    assert run.stats.sitemaps_failed == 0


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


@pytest.mark.parametrize(
    ("target", "option", "allowed"),
    [
        ("https://example.com/sitemap.xml", None, False),
        ("example.com", None, False),
        ("http://127.0.0.1:8080/s.xml", None, True),
        ("http://[::1]:8080/", None, True),
        ("http://10.1.2.3/", None, True),
        ("http://localhost:8080/", None, True),
        ("http://app.localhost/", None, True),
        ("http://93.184.216.34/", None, False),
        ("https://example.com/", True, True),
        ("http://127.0.0.1/", False, False),
    ],
)
def test_private_allowed_by_target(target: str, option: bool | None, allowed: bool) -> None:
    """allow_private None follows the target; True and False are absolute."""
    assert private_allowed(classify(target), option) is allowed


def test_local_file_target_allows_private(tmp_path: Any) -> None:
    """A local file has no network origin: nothing to guard."""
    path = tmp_path / "s.xml"
    path.write_bytes(urlset(["https://example.com/"]))
    assert private_allowed(classify(str(path)), None) is True


@pytest.mark.parametrize(
    ("host", "code"), [("0x7f.0.0.1", "blocked"), ("2130706433", "url"), ("127.1", "url")]
)
async def test_numeric_host_spellings_never_connect(site: Site, host: str, code: str) -> None:
    """Odd spellings of 127.0.0.1: yarl refuses the non-canonical IPv4 ones as bad URLs;
    the others are names to aiohttp, which the system resolver turns into 127.0.0.1 and
    the guard refuses at connect time. No request either way."""
    site.add("/s.xml", urlset([site.url("/a")]))
    run = await tree(_on(site, host, "/s.xml"), resolver=ThreadedResolver(), allow_private=False)
    assert run.tree[0].problems[0].code == code, run.tree[0].problems
    assert site.hits["/s.xml"] == 0
