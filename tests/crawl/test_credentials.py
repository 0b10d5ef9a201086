"""Credentials stay on their site (issue 18, point 3): the user's headers reach the
target's own hosts only, decided for every request and every redirect hop (through the
API, and through the CLI as a subprocess: --header-hosts, a proxy password unprinted).

The target is a site on 127.0.0.1; "other hosts" are sites on 127.0.0.2 and 127.0.0.3
(other loopback addresses: other hosts to the scope, reachable without any DNS).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import aiohttp
import pytest

from sitemap_reader.crawl import SitemapReader
from sitemap_reader.errors import UsageError
from tests.conftest_cli import run_cli
from tests.crawl.crawl_kit import Reply, Site, collect, index, urlset
from tests.helpers import closed_port

MakeSite = Callable[[str], Awaitable[Site]]
SECRETS = {"Cookie": "session=s3cret", "Authorization": "Bearer t0ken"}


def _saw_secrets(site: Site) -> list[bool]:
    """For each request ``site`` received: did it carry the cookie or the token?"""
    return ["Cookie" in r.headers or "Authorization" in r.headers for r in site.requests]


async def _three_hosts(make_site: MakeSite) -> tuple[Site, Site, Site]:
    """Own site: robots.txt -> index listing a child on its own host, a child on another
    host, and a child that redirects (301) to a third host."""
    own, other, third = [await make_site(h) for h in ("127.0.0.1", "127.0.0.2", "127.0.0.3")]
    own.add("/robots.txt", f"Sitemap: {own.url('/index.xml')}\n", content_type="text/plain")
    own.add("/index.xml", index([own.url("/a.xml"), other.url("/b.xml"), own.url("/r.xml")]))
    own.add("/a.xml", urlset([own.url("/a")]))
    own.add("/r.xml", Reply(status=301, headers={"Location": third.url("/c.xml")}))
    other.add("/b.xml", urlset([other.url("/b")]))
    third.add("/c.xml", urlset([third.url("/c")]))
    return own, other, third


@pytest.mark.usefixtures("client")
async def test_headers_stay_on_the_targets_site(make_site: MakeSite) -> None:
    """A child on another host and a redirect hop to a third get no Cookie/Authorization."""
    own, other, third = await _three_hosts(make_site)
    records, run = await collect(own.url("/"), headers=SECRETS, scope="any")
    assert len(records) == 3 and run.stats.sitemaps_failed == 0
    assert sorted(r.path for r in own.requests) == ["/a.xml", "/index.xml", "/r.xml", "/robots.txt"]
    assert _saw_secrets(own) == [True] * 4
    assert len(other.requests) == 1 and _saw_secrets(other) == [False]
    assert len(third.requests) == 1 and _saw_secrets(third) == [False]
    assert all(r.headers.get("User-Agent") for r in other.requests + third.requests)


@pytest.mark.usefixtures("client")
async def test_header_hosts_any_sends_them_everywhere(make_site: MakeSite) -> None:
    """header_hosts='any' opts in: every host of the walk gets the headers."""
    own, other, third = await _three_hosts(make_site)
    records, _ = await collect(own.url("/"), headers=SECRETS, scope="any", header_hosts="any")
    assert len(records) == 3
    assert _saw_secrets(own) == [True] * 4
    assert _saw_secrets(other) == [True] and _saw_secrets(third) == [True]


@pytest.mark.usefixtures("client")
async def test_a_redirect_back_to_the_site_gets_them_again(make_site: MakeSite) -> None:
    """Per hop: own -> other host (without) -> back to own (with them again)."""
    own, other = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    own.add("/s.xml", Reply(status=302, headers={"Location": other.url("/hop")}))
    other.add("/hop", Reply(status=302, headers={"Location": own.url("/final.xml")}))
    own.add("/final.xml", urlset([own.url("/x")]))
    records, _ = await collect(own.url("/s.xml"), headers=SECRETS)
    assert [r.url for r in records] == [own.url("/x")]
    assert [r.path for r in own.requests] == ["/s.xml", "/final.xml"]
    assert _saw_secrets(own) == [True, True] and _saw_secrets(other) == [False]


@pytest.mark.usefixtures("client")
async def test_cross_submitting_hosts_get_no_credentials(make_site: MakeSite) -> None:
    """robots.txt redirected to another host: that host joins the URL scope (it vouches
    for what it lists), never the site the headers go to."""
    own, other = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    own.add("/robots.txt", Reply(status=301, headers={"Location": other.url("/robots.txt")}))
    other.add("/robots.txt", f"Sitemap: {other.url('/s.xml')}\n", content_type="text/plain")
    other.add("/s.xml", urlset([own.url("/x"), other.url("/y")]))
    records, _ = await collect(own.url("/"), headers=SECRETS)
    assert sorted(r.url for r in records) == sorted([own.url("/x"), other.url("/y")])
    assert _saw_secrets(own) == [True]
    assert [r.path for r in other.requests] == ["/robots.txt", "/s.xml"]
    assert _saw_secrets(other) == [False, False]


async def test_a_file_target_has_no_site(
    tmp_path_factory: pytest.TempPathFactory, site: Site
) -> None:
    """A local index names a remote child: a file has no site, so no credentials go."""
    site.add("/s.xml", urlset([site.url("/x")]))
    path = tmp_path_factory.mktemp("idx") / "index.xml"
    path.write_bytes(index([site.url("/s.xml")]))
    records, _ = await collect(str(path), headers=SECRETS)
    assert [r.url for r in records] == [site.url("/x")]
    assert _saw_secrets(site) == [False]


async def test_a_sessions_default_credentials_are_refused() -> None:
    """session= with a default Cookie header would send it everywhere: a UsageError."""
    async with aiohttp.ClientSession(headers={"Cookie": "a=1"}) as session:
        with pytest.raises(UsageError, match="header_hosts='any'"):
            SitemapReader(session=session)
        SitemapReader(session=session, header_hosts="any")  # the opt-in
    with pytest.raises(UsageError, match="header_hosts: expected one of site, any"):
        SitemapReader(header_hosts="everywhere")  # type: ignore[arg-type]


@pytest.mark.usefixtures("client")
async def test_a_cookie_one_targets_site_set_goes_to_no_other_target(site: Site) -> None:
    """Target a.test's robots.txt sets a cookie; its next request carries it. Target b.test's
    index lists a child on a.test, fetched after that: without a.test's cookie (each target
    keeps its own cookies)."""
    from aiohttp import web

    from tests.hostile.test_guard import FakeResolver

    port = site.host.rsplit(":", 1)[1]
    a, b = f"http://a.test:{port}", f"http://b.test:{port}"
    own_read = asyncio.Event()

    async def robots(request: web.Request) -> web.Response:
        text = f"Sitemap: {a}/a.xml\n" if request.host.startswith("a.test") else ""
        return web.Response(text=text, headers={"Set-Cookie": "sid=s3cret; Path=/"})

    async def own(request: web.Request) -> web.Response:
        own_read.set()  # a.test's cookie is in a jar by now: its robots.txt was read
        return web.Response(body=urlset([f"{a}/page"]), content_type="application/xml")

    async def other_index(request: web.Request) -> web.Response:
        await own_read.wait()
        return web.Response(body=index([f"{a}/child.xml"]), content_type="application/xml")

    site.add("/robots.txt", robots)
    site.add("/a.xml", own)
    site.add("/b-index.xml", other_index)
    site.add("/child.xml", urlset([f"{a}/from-child"]))
    resolver = FakeResolver("a.test", "b.test")
    targets = [f"{a}/", f"{b}/b-index.xml"]
    await collect(targets, resolver=resolver, allow_private=True, scope="any")
    cookies = {r.path: r.headers.get("Cookie") for r in site.requests}
    assert cookies["/a.xml"] == "sid=s3cret"
    assert cookies["/child.xml"] is None


# --------------------------------------------------------------------------- the CLI

HEADERS = ("--header", "Cookie: session=s3cret", "--header", "Authorization: Bearer t0ken")


@pytest.mark.parametrize(("hosts", "elsewhere"), [("site", False), ("any", True)])
async def test_header_hosts(make_site: MakeSite, hosts: str, elsewhere: bool) -> None:
    """An index on 127.0.0.1 lists a child on 127.0.0.2: the headers go there only with
    --header-hosts any; the own host gets them either way."""
    own, other = await make_site("127.0.0.1"), await make_site("127.0.0.2")
    own.add("/index.xml", index([own.url("/a.xml"), other.url("/b.xml")]))
    own.add("/a.xml", urlset([own.url("/a")]))
    other.add("/b.xml", urlset([other.url("/b")]))
    result = await run_cli(
        "dump", own.url("/index.xml"), *HEADERS, "--header-hosts", hosts,
        "--scope", "any", "--format", "txt",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert sorted(result.out.split()) == sorted([own.url("/a"), other.url("/b")])
    assert _saw_secrets(own) == [True, True]
    assert _saw_secrets(other) == [elsewhere]


@pytest.mark.parametrize("command", ["dump", "tree"])
async def test_a_proxy_password_is_never_printed(make_site: MakeSite, command: str) -> None:
    """A proxy that refuses connections: the error names the proxy, not its password."""
    site = await make_site("127.0.0.1")
    site.add("/s.xml", urlset([site.url("/a")]))
    with closed_port() as port:
        proxy = f"http://crawler:pr0xyS3cret@127.0.0.1:{port}"
        result = await run_cli(command, site.url("/s.xml"), "--proxy", proxy, "-v")
    assert site.requests == []
    assert result.code != 2, result.err
    assert "pr0xyS3cret" not in result.out + result.err
    assert result.err.strip()  # the failure is reported


async def test_a_bad_proxy_url_hides_its_password() -> None:
    """--proxy with a password but no host: a usage error that shows ***."""
    result = await run_cli("dump", "127.0.0.1", "--proxy", "ftp://crawler:pr0xyS3cret@x")
    assert result.code == 2
    assert "pr0xyS3cret" not in result.err and "***" in result.err
