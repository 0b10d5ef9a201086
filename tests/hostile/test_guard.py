"""The private-address guard (SSRF) of the aiohttp reader, on a real server with a
resolver that lies.

The test site runs on 127.0.0.1. A fake resolver maps made-up public-looking names to
127.0.0.1, so a "public" target can be crawled while every other name it mentions
resolves to a private address, as a hostile site's DNS would arrange. The policy's pure
functions are tested in tests/discovery/test_addresses.py.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

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


#: allow_private left unset, and given as False: the same default.
DEFAULTS = [pytest.param({}, id="unset"), pytest.param({"allow_private": False}, id="False")]


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("default", DEFAULTS)
async def test_public_target_never_reaches_private_addresses(
    site: Site, default: dict[str, bool]
) -> None:
    """Public target: an index entry, a DNS answer, a redirect or an IP literal to a private
    address is refused before any request; the good sibling is still read (the typed name
    itself resolves to loopback: it is trusted)."""
    target, bad = _build(site)
    resolver = FakeResolver("public.example", "internal.example")
    records, run = await collect(target, resolver=resolver, scope="any", **default)
    assert [r.url for r in records] == [_on(site, "public.example", "/page")]
    for url in bad.values():
        node = node_by_url(run, url)
        assert node.failed and node.problems[0].code == "blocked", (url, node.problems)
        assert "non-public address" in node.problems[0].message
        assert "--" not in node.problems[0].message  # no CLI flag: the CLI adds its own
    assert site.hits["/secret-name.xml"] == site.hits["/secret-redirect.xml"] == 0
    assert site.hits["/secret-literal.xml"] == 0
    assert "internal.example" in resolver.asked  # refused on the resolved address


@pytest.mark.usefixtures("client")
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


@pytest.mark.usefixtures("client")
async def test_never_refuses_the_target_itself(site: Site) -> None:
    """allow_private="never" (a service fetching user input): a target name that resolves
    to loopback is refused too, and nothing is discovered."""
    target, _ = _build(site)
    run = await tree(target, resolver=FakeResolver("public.example"), allow_private="never")
    assert run.tree[0].problems[0].code == "blocked" and run.error is not None
    assert "public.example resolves to 127.0.0.1" in run.tree[0].problems[0].message
    assert site.hits["/index.xml"] == 0


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("default", DEFAULTS)
async def test_private_target_implies_allow_private(
    make_site: Any, default: dict[str, bool]
) -> None:
    """A loopback target (the default: allow_private unset or False) may read children on
    other private addresses: intranet use and tests work without a flag."""
    first, second = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    second.add("/child.xml", urlset([first.url("/from-second")]))
    first.add("/index.xml", index([second.url("/child.xml")]))
    records, run = await collect(first.url("/index.xml"), scope="any", **default)
    assert [r.url for r in records] == [first.url("/from-second")]
    assert run.stats.sitemaps_failed == 0


@pytest.mark.usefixtures("client")
async def test_never_refuses_a_private_target(make_site: Any) -> None:
    """allow_private="never": the loopback target itself is refused, nothing is requested."""
    first, second = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    second.add("/child.xml", urlset([first.url("/from-second")]))
    first.add("/index.xml", index([second.url("/child.xml")]))
    run = await tree(first.url("/index.xml"), scope="any", allow_private="never")
    assert run.tree[0].problems[0].code == "blocked" and run.error is not None
    assert "non-public address 127.0.0.1" in run.tree[0].problems[0].message
    assert not first.hits and not second.hits


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


@pytest.mark.usefixtures("client")
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


@pytest.mark.usefixtures("client")
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


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
async def test_numeric_target_never_connects(site: Site, host: str) -> None:
    """An odd numeric spelling typed as the target is refused too: no request, no lookup."""
    site.add("/s.xml", urlset([site.url("/a")]))
    resolver = FakeResolver()
    run = await tree(_on(site, host, "/s.xml"), resolver=resolver)
    assert run.tree[0].problems[0].code == "blocked", run.tree[0].problems
    assert site.hits["/s.xml"] == 0 and resolver.asked == []
