"""The private-address guard (SSRF), on a real server with a resolver that lies.

The test site runs on 127.0.0.1. A fake resolver maps made-up public-looking names to
127.0.0.1, so a "public" target can be crawled while every other name it mentions
resolves to a private address, as a hostile site's DNS would arrange.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from sitemap_reader.crawl.guard import (
    is_public_address,
    numeric_host_problem,
    parse_numeric_host,
    private_allowed,
)
from sitemap_reader.discovery.targets import classify
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


async def test_allow_private_never_refuses_the_target_itself(site: Site) -> None:
    """allow_private="never" (a service fetching user input): a target name that resolves
    to loopback is refused too, and nothing is discovered."""
    target, _ = _build(site)
    run = await tree(target, resolver=FakeResolver("public.example"), allow_private="never")
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


#: Spellings of 127.0.0.1 that inet_aton / WHATWG read as an address and strict
#: ``ipaddress`` parsing calls names (only loopback meanings: if the guard let one
#: through, the connection would still stay on this machine).
LOOPBACK_SPELLINGS = (
    "2130706433",
    "0177.0.0.1",
    "127.1",
    "017700000001",
    "127.0.0.01",
    "0x7f.1",
    "0x7f000001",
    "0x7F.0.0.1",
    "127.000.0.1",
    "127.0.0.1.",
    "0177.1",
)


def _numeric_site(site: Site) -> tuple[str, dict[str, str]]:
    """A public-named site whose robots.txt, index and redirect name odd numeric hosts."""
    pub = "public.example"
    port = site.host.rsplit(":", 1)[1]
    odd = {h: f"http://{h}:{port}" for h in LOOPBACK_SPELLINGS}
    spelling = iter(LOOPBACK_SPELLINGS)
    robots_child, index_child = next(spelling), next(spelling)
    listed = {
        "robots": f"{odd[robots_child]}/secret-robots.xml",
        "index": f"{odd[index_child]}/secret-index.xml",
    }
    redirects = {}
    for host in spelling:
        path = f"/hop-{host}.xml"
        site.add(path, Reply(status=302, headers={"Location": f"{odd[host]}/secret-hop.xml"}))
        redirects[host] = _on(site, pub, path)
    for path in ("/secret-robots.xml", "/secret-index.xml", "/secret-hop.xml"):
        site.add(path, urlset([_on(site, pub, path + "-page")]))
    site.add("/good.xml", urlset([_on(site, pub, "/page")]))
    site.add(
        "/index.xml", index([_on(site, pub, "/good.xml"), listed["index"], *redirects.values()])
    )
    robots = f"Sitemap: {_on(site, pub, '/index.xml')}\nSitemap: {listed['robots']}\n"
    site.add("/robots.txt", robots, content_type="text/plain")
    return _on(site, pub, "/"), listed | redirects


async def test_numeric_hosts_refused_on_every_hop(site: Site) -> None:
    """Public target: a robots.txt Sitemap: line, an index child and redirect Locations
    naming 127.0.0.1 in non-canonical numeric spellings are refused before any request,
    with the address they mean; the good sibling is still read."""
    target, bad = _numeric_site(site)
    resolver = FakeResolver("public.example")
    records, run = await collect(target, resolver=resolver, scope="any")
    assert [r.url for r in records] == [_on(site, "public.example", "/page")]
    for url in bad.values():
        node = node_by_url(run, url)
        problem = node.problems[0]
        assert node.failed and problem.code == "blocked", (url, node.problems)
        assert "numeric host" in problem.message and "127.0.0.1" in problem.message
    assert set(resolver.asked) == {"public.example"}  # no odd host was ever resolved
    assert not [k for k in site.hits if k.startswith("/secret")]
    assert run.stats.sitemaps_failed == len(bad)


async def test_numeric_hosts_refused_even_when_private_is_allowed(site: Site) -> None:
    """allow_private=True: canonical literals are fetched, odd numeric spellings are still
    refused (their meaning depends on who reads them), siblings unharmed."""
    target, bad = _numeric_site(site)
    canonical = site.url("/secret-index.xml")  # 127.0.0.1 written the one normal way
    site.add("/index.xml", index([_on(site, "public.example", "/good.xml"), canonical]))
    records, run = await collect(
        target, resolver=FakeResolver("public.example"), scope="any", allow_private=True
    )
    urls = {r.url for r in records}
    assert _on(site, "public.example", "/secret-index.xml-page") in urls
    node = node_by_url(run, bad["robots"])
    assert node.problems[0].code == "blocked" and "it means 127.0.0.1" in node.problems[0].message
    assert site.hits["/secret-robots.xml"] == 0


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
async def test_numeric_target_never_connects(site: Site, host: str) -> None:
    """An odd numeric spelling typed as the target is refused too: no request, no lookup."""
    site.add("/s.xml", urlset([site.url("/a")]))
    resolver = FakeResolver()
    run = await tree(_on(site, host, "/s.xml"), resolver=resolver)
    assert run.tree[0].problems[0].code == "blocked", run.tree[0].problems
    assert site.hits["/s.xml"] == 0 and resolver.asked == []


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
