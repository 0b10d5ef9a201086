"""Network control and politeness, checked on the server side: headers received, gaps
between requests measured where they arrive, the proxy hop seen by a loopback proxy,
the user's own session; the robots audit, follow, probe paths, unread children and the
URL budget's early stop (issue 15, points 8-11 and 1)."""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sitemap_reader.crawl import SitemapReader
from sitemap_reader.errors import DiscoveryError, UsageError
from tests.crawl.crawl_kit import FAST, Site, collect, gz, index, node_by_url, tree, urlset

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Arrivals:
    """When each request reached a site (monotonic seconds), by path."""

    times: list[tuple[str, float]] = field(default_factory=list)

    def gaps(self) -> list[float]:
        """Seconds between consecutive arrivals."""
        stamps = [t for _, t in self.times]
        return [b - a for a, b in itertools.pairwise(stamps)]


def _timed(site: Site) -> Arrivals:
    """Record the arrival time of every request of ``site``."""
    arrivals = Arrivals()

    @web.middleware
    async def stamp(request: web.Request, handler: Handler) -> web.StreamResponse:
        arrivals.times.append((request.path, time.monotonic()))
        return await handler(request)

    site.app.middlewares.append(stamp)
    return arrivals


@pytest.fixture
async def timed_site() -> AsyncIterator[tuple[Site, Arrivals]]:
    """A scripted site that stamps every arrival."""
    from tests.crawl.crawl_kit import start

    served = Site()
    arrivals = _timed(served)
    server = await start(served)
    yield served, arrivals
    await server.close()


def _four_sitemaps(site: Site, robots: str = "") -> None:
    site.add("/robots.txt", f"User-agent: *\n{robots}Sitemap: {site.url('/index.xml')}\n")
    site.add("/index.xml", index(site.url(f"/s{i}.xml") for i in range(3)))
    for i in range(3):
        site.add(f"/s{i}.xml", urlset([site.url(f"/p/{i}")]))


# --------------------------------------------------------------------------- headers


@pytest.mark.usefixtures("client")
async def test_headers_reach_the_server_with_every_request(site: Site) -> None:
    """headers= (a cookie, a custom name) arrive with robots.txt, index and children."""
    _four_sitemaps(site)
    records, _ = await collect(site.url("/"), headers={"Cookie": "s=1", "X-Team": "crawl"})
    assert len(records) == 3
    assert len(site.requests) == 5
    assert all(r.headers.get("Cookie") == "s=1" for r in site.requests)
    assert all(r.headers.get("X-Team") == "crawl" for r in site.requests)


async def test_a_header_with_a_line_break_is_a_usage_error() -> None:
    """A header value cannot smuggle a second header line."""
    with pytest.raises(UsageError):
        SitemapReader(headers={"X-A": "1\r\nX-B: 2"})
    with pytest.raises(UsageError):
        SitemapReader(headers={"Bad Name": "1"})


# --------------------------------------------------------------------------- politeness

#: The least gap asserted at the server for a 0.3 s delay. The pacer counts each delay
#: from the previous answer, so connect time never shortens it; but concurrent jobs of
#: one host reserve successive slots ahead, and on a loaded machine one job may wake late
#: for its slot while the next wakes on time. A missing delay shows gaps near 0.
MIN_GAP = 0.25


@pytest.mark.usefixtures("client")
async def test_delay_spaces_requests_to_one_host(timed_site: tuple[Site, Arrivals]) -> None:
    """delay=0.3: at the server, every request comes at least 0.3 s after the previous."""
    site, arrivals = timed_site
    _four_sitemaps(site)
    records, _ = await collect(site.url("/"), delay=0.3, concurrency=4, per_host=4)
    assert len(records) == 3 and len(arrivals.times) == 5
    assert min(arrivals.gaps()) >= MIN_GAP, arrivals.gaps()


async def test_robots_crawl_delay_is_honoured_and_reported(
    timed_site: tuple[Site, Arrivals],
) -> None:
    """Crawl-delay: 0.3 spaces the sitemap fetches; the robots node reports it."""
    site, arrivals = timed_site
    _four_sitemaps(site, "Crawl-delay: 0.3\n")
    records, run = await collect(site.url("/"), concurrency=4, per_host=4)
    assert len(records) == 3
    assert min(arrivals.gaps()) >= MIN_GAP, arrivals.gaps()
    robots = run.tree[0]
    assert robots.crawl_delay == 0.3 and robots.to_dict()["crawl_delay"] == 0.3


async def test_request_rate_and_the_cap(timed_site: tuple[Site, Arrivals]) -> None:
    """Request-rate: 1/9s is capped by Limits.max_crawl_delay (0.3 here), with a problem."""
    site, arrivals = timed_site
    _four_sitemaps(site, "Request-rate: 1/9s\n")
    _, run = await collect(site.url("/"), options=FAST.replace(max_crawl_delay=0.3))
    robots = run.tree[0]
    assert robots.crawl_delay == 0.3
    assert [p.code for p in robots.problems] == ["limit-crawl-delay"]
    assert min(arrivals.gaps()) >= MIN_GAP, arrivals.times


async def test_ignore_crawl_delay(site: Site) -> None:
    """crawl_delay=False: nothing is honoured or reported."""
    _four_sitemaps(site, "Crawl-delay: 30\n")
    records, run = await collect(site.url("/"), crawl_delay=False)
    assert len(records) == 3 and run.tree[0].crawl_delay is None


# --------------------------------------------------------------------------- proxy, session


@pytest.fixture
async def proxy() -> AsyncIterator[tuple[str, list[str]]]:
    """A tiny forward HTTP proxy on 127.0.0.1 (passing X- headers on): the URLs it was
    asked for, and its URL."""
    seen: list[str] = []
    client = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.StreamResponse:
        target = str(request.url)  # an absolute-form request target: the URL asked for
        seen.append(target)
        ours = {k: v for k, v in request.headers.items() if k.startswith("X-")}
        async with client.get(target, allow_redirects=False, headers=ours) as upstream:
            body = await upstream.read()
            return web.Response(
                status=upstream.status, body=body, content_type=upstream.content_type
            )

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", forward)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("")).rstrip("/"), seen
    await server.close()
    await client.close()


@pytest.mark.usefixtures("client")
async def test_proxy_carries_every_request(site: Site, proxy: tuple[str, list[str]]) -> None:
    """proxy=URL: robots.txt, the index and its children all go through the proxy."""
    url, seen = proxy
    _four_sitemaps(site)
    records, _ = await collect(site.url("/"), proxy=url)
    assert len(records) == 3
    assert sorted(s.removeprefix(site.base) for s in seen) == [
        "/index.xml", "/robots.txt", "/s0.xml", "/s1.xml", "/s2.xml",
    ]  # fmt: skip


@pytest.mark.usefixtures("client")
async def test_per_target_headers_and_proxy_stay_with_their_target(
    make_site: Callable[[str], Awaitable[Site]], proxy: tuple[str, list[str]]
) -> None:
    """per_target: the first site's requests carry its own header and go through the
    proxy; the second's carry the run's header and go direct (scrapy PR #7174)."""
    url, seen = proxy
    first, second = await make_site("127.0.0.1"), await make_site("127.0.0.1")
    for served in (first, second):
        _four_sitemaps(served)
    own = {first.base: {"headers": {"X-Team": "first"}, "proxy": url}}
    targets = [first.url("/"), second.url("/")]
    records, _ = await collect(targets, headers={"X-Team": "run"}, per_target=own)
    assert len(records) == 6
    assert {r.headers.get("X-Team") for r in first.requests} == {"first"}
    assert {r.headers.get("X-Team") for r in second.requests} == {"run"}
    assert sorted(seen) == sorted(first.base + path for path in first.hits)
    assert len(seen) == 5 and not any(s.startswith(second.base) for s in seen)


async def test_per_target_naming_no_target_is_a_usage_error(site: Site) -> None:
    """A per_target entry for a site that is not a target of the run: UsageError at once,
    with several targets or one (issue 41: a misspelt entry of a one-target run was
    ignored); a run that is one target of a longer list (an engine's, a Redis worker's:
    ``one_of_many``) leaves the others' entries aside."""
    _four_sitemaps(site)
    own = {"other.example": {"proxy": "http://p:1"}}
    with pytest.raises(UsageError, match=r"per_target names 'other\.example'"):
        await collect([site.url("/"), site.url("/s0.xml")], per_target=own)
    with pytest.raises(UsageError, match=r"per_target names 'other\.example'"):
        await collect(site.url("/"), per_target=own)
    assert not site.hits
    async with SitemapReader(FAST, per_target=own) as reader:
        reader.one_of_many = True
        records = [record async for record in reader.urls(site.url("/"))]
    assert len(records) == 3


async def test_per_target_refuses_an_option_a_target_cannot_have() -> None:
    """Only headers, header_hosts and proxy may be set per target."""
    with pytest.raises(UsageError, match="'deadline' cannot be set per target"):
        SitemapReader(per_target={"a.example": {"deadline": 5}})


async def test_a_proxy_must_be_a_url() -> None:
    """proxy='nonsense' is refused at once."""
    with pytest.raises(UsageError):
        SitemapReader(proxy="nonsense")


async def test_the_users_session_is_used_and_left_open(site: Site) -> None:
    """session=: its own default headers reach the server; it is still open afterwards."""
    _four_sitemaps(site)
    async with aiohttp.ClientSession(headers={"X-Mine": "yes"}) as session:
        records, _ = await collect(site.url("/"), session=session)
        assert not session.closed
    assert len(records) == 3
    assert all(r.headers.get("X-Mine") == "yes" for r in site.requests)


async def test_the_guard_holds_with_the_users_session(site: Site) -> None:
    """session= with allow_private="never": a loopback literal is still refused, unsent."""
    _four_sitemaps(site)
    async with aiohttp.ClientSession() as session:
        run = await tree(site.url("/"), session=session, allow_private="never")
    assert site.requests == []
    assert run.tree[0].problems[0].code == "blocked"


# --------------------------------------------------------------------------- robots audit


def _audited(site: Site) -> None:
    site.add(
        "/robots.txt",
        f"User-agent: *\nDisallow: /private/\nSitemap: {site.url('/s.xml')}\n",
    )
    site.add(
        "/s.xml",
        urlset([site.url("/a"), site.url("/private/b"), site.url("/private/c")]),
    )


async def test_every_record_says_what_robots_txt_allows(site: Site) -> None:
    """robots is 'allowed' or 'disallowed' per record; the node and stats count them."""
    _audited(site)
    records, run = await collect(site.url("/"))
    verdicts = {r.url.removeprefix(site.base): r.robots for r in records}
    assert verdicts == {"/a": "allowed", "/private/b": "disallowed", "/private/c": "disallowed"}
    assert run.stats.urls_disallowed == 2
    assert node_by_url(run, site.url("/s.xml")).to_dict()["disallowed"] == 2
    assert records[0].to_dict()["robots"] == "allowed"


async def test_obey_robots_drops_the_disallowed(site: Site) -> None:
    """obey_robots=True: only the allowed URL comes out, the others are counted."""
    _audited(site)
    records, run = await collect(site.url("/"), obey_robots=True)
    assert [r.url for r in records] == [site.url("/a")]
    assert run.stats.urls_disallowed == 2 and run.stats.urls_emitted == 1


async def test_no_robots_txt_no_field(site: Site) -> None:
    """A sitemap target (no robots.txt read): the field is absent."""
    _audited(site)
    records, _ = await collect(site.url("/s.xml"))
    assert len(records) == 3 and all(r.robots is None for r in records)
    assert all("robots" not in r.to_dict() for r in records)


# --------------------------------------------------------------------------- what to read


async def test_follow_fetches_only_matching_children(site: Site) -> None:
    """follow: robots.txt's index and /s1.xml match and are read; the others are skipped."""
    _four_sitemaps(site)
    records, run = await collect(site.url("/"), follow=[r"/index\.xml$", r"/s1\.xml$"])
    assert [r.url for r in records] == [site.url("/p/1")]
    assert site.hits["/s0.xml"] == 0 and site.hits["/s2.xml"] == 0
    assert str(node_by_url(run, site.url("/s0.xml")).skipped) == "not matched by follow"


async def test_follow_as_a_function_sees_each_child_url(site: Site) -> None:
    """follow=function: asked once per index child with its URL; only /s2.xml is read."""
    _four_sitemaps(site)
    asked: list[str] = []

    def wanted(url: str) -> bool:
        asked.append(url)
        return url.endswith("/s2.xml")

    records, run = await collect(site.url("/"), follow=wanted)
    assert [r.url for r in records] == [site.url("/p/2")]
    assert sorted(asked) == [site.url(f"/s{i}.xml") for i in range(3)]
    assert site.hits["/s0.xml"] == 0 and site.hits["/s1.xml"] == 0
    assert str(node_by_url(run, site.url("/s1.xml")).skipped) == "not matched by follow"


async def test_follow_function_that_raises_ends_the_run(site: Site) -> None:
    """A follow function that raises: the index fails naming the exception, and the run
    (whose only index it was) raises DiscoveryError saying so, never a silent skip."""
    _four_sitemaps(site)

    def broken(url: str) -> bool:
        raise LookupError(f"no rule for {url}")

    with pytest.raises(DiscoveryError, match="internal error: LookupError: no rule for"):
        await collect(site.url("/"), follow=broken)


async def test_guess_paths_replace_the_well_known_ones(site: Site) -> None:
    """guess_paths=['/maps/all.xml']: only that path is probed, and it is read."""
    site.add("/robots.txt", "User-agent: *\n")
    site.add("/maps/all.xml", urlset([site.url("/x")]))
    records, _ = await collect(site.url("/"), guess_paths=["/maps/all.xml"])
    assert [r.url for r in records] == [site.url("/x")]
    assert sorted(site.hits) == ["/maps/all.xml", "/robots.txt"]


async def test_read_depth_lists_children_as_not_read(site: Site) -> None:
    """read_depth=0: the index is read, its children are listed 'not read', unfetched."""
    _four_sitemaps(site)
    run = await tree(site.url("/"), read_depth=0)
    children = node_by_url(run, site.url("/index.xml")).children
    assert len(children) == 3 and all(c.not_read for c in children)
    assert all(not c.failed for c in children)
    assert site.hits["/s0.xml"] == 0
    assert run.stats.sitemaps_not_read == 3 and run.stats.sitemaps_skipped == 0
    assert not node_by_url(run, site.url("/index.xml")).problems  # a choice, not a limit


async def test_max_urls_stops_reading_soon_after_the_budget(site: Site) -> None:
    """max_urls=2 over a 20,000-URL gzip sitemap: well under one read's worth is parsed."""
    site.add("/big.xml.gz", gz(urlset(site.url(f"/p/{i}") for i in range(20_000))))
    records, run = await collect(site.url("/big.xml.gz"), options=FAST.replace(max_urls=2))
    assert len(records) == 2
    parsed = node_by_url(run, site.url("/big.xml.gz")).urls
    assert parsed < 1_000, parsed  # a 64 KiB read of this gzip holds ~8,000 URLs
