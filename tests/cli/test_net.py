"""The CLI's network, politeness, robots-audit and reading-choice options, through the
real command against a loopback site (issue 15, points 8-11 and 1)."""

from __future__ import annotations

import gzip
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.conftest_cli import Doc, Site, cli_env, index, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Logged(Site):
    """A site that also keeps each request's headers and arrival time."""

    def __init__(self, docs: dict[str, Doc | str]) -> None:
        super().__init__(docs)
        self.seen: list[tuple[str, dict[str, str], float]] = []

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def log(request: web.Request, handler: Handler) -> web.StreamResponse:
            self.seen.append((request.path, dict(request.headers), time.monotonic()))
            return await handler(request)

        app.middlewares.append(log)
        return app


def _site(robots: str = "") -> Logged:
    return Logged(
        {
            "/robots.txt": Doc(
                f"User-agent: *\n{robots}Sitemap: {{base}}/index.xml\n", content_type="text/plain"
            ),
            "/index.xml": index("/a.xml", "/b.xml"),
            "/a.xml": urlset("/a/1", "/private/2"),
            "/b.xml": urlset("/b/1"),
        }
    )


async def _serve(factory: ServerFactory, site: Site) -> str:
    server = await factory(site.app())
    return str(server.make_url("")).rstrip("/")


def _paced_span(site: Logged) -> float:
    """The mean gap between the requests the server saw, from first to last arrival.

    The CLI runs in another process: a loaded machine can hold one arrival back after it
    was sent on time, which shortens the next gap seen here though the client kept its
    pace. The span from first to last arrival is not fooled that way, and an unpaced run
    (all requests at once) still gives a span near zero.
    """
    stamps = [t for _, _, t in site.seen]
    return (stamps[-1] - stamps[0]) / (len(stamps) - 1)


async def test_header_and_delay(aiohttp_server: ServerFactory) -> None:
    """--header twice and --delay 0.25: the server sees both headers, gaps >= 0.25 s."""
    site = _site()
    base = await _serve(aiohttp_server, site)
    result = await run_cli(
        "dump", base + "/", "--header", "Cookie: s=abc", "--header", "X-Run: 7",
        "--delay", "0.25", "--format", "txt",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert len(result.out.splitlines()) == 3
    assert next(p for p, _, _ in site.seen) == "/robots.txt" and len(site.seen) == 4
    assert all(h.get("Cookie") == "s=abc" and h.get("X-Run") == "7" for _, h, _ in site.seen)
    assert _paced_span(site) >= 0.24


async def test_a_bad_header_is_a_usage_error() -> None:
    """--header without a colon: exit 2 with the reason."""
    result = await run_cli("dump", "example.com", "--header", "nocolon")
    assert result.code == 2 and "Name: value" in result.err


async def test_crawl_delay_reported_and_ignored(aiohttp_server: ServerFactory) -> None:
    """robots.txt Crawl-delay is honoured and named in the summary; --ignore-crawl-delay
    turns it off (no line)."""
    site = _site("Crawl-delay: 0.2\n")
    base = await _serve(aiohttp_server, site)
    polite = await run_cli("dump", base + "/", "--format", "txt")
    assert polite.code == 0 and "crawl delay: 0.2 s between requests to" in polite.err
    assert _paced_span(site) >= 0.19
    rude = await run_cli("dump", base + "/", "--format", "txt", "--ignore-crawl-delay")
    assert rude.code == 0 and "crawl delay" not in rude.err


async def test_robots_audit_and_obey_robots(aiohttp_server: ServerFactory) -> None:
    """Records carry robots; the summary counts the disallowed; --obey-robots drops them;
    the tree JSON counts them on their sitemap."""
    site = _site("Disallow: /private/\n")
    base = await _serve(aiohttp_server, site)
    audit = await run_cli("dump", base + "/")
    verdicts = {r["url"].removeprefix(base): r["robots"] for r in audit.jsonl()}
    assert verdicts == {"/a/1": "allowed", "/private/2": "disallowed", "/b/1": "allowed"}
    assert (
        'robots.txt: disallows 1 URL the sitemaps list; their records say "robots": "disallowed"'
        in audit.err
    )
    obey = await run_cli("dump", base + "/", "--obey-robots", "--format", "txt")
    assert obey.out.splitlines() == [base + "/a/1", base + "/b/1"]
    assert "dropped (--obey-robots)" in obey.err
    tree = await run_cli("tree", base + "/", "--json")
    nodes = tree.out
    assert '"disallowed": 1' in nodes and '"urls_disallowed": 1' in nodes


async def test_follow_and_paths(aiohttp_server: ServerFactory) -> None:
    """--follow keeps only matching children; --paths probes the given paths instead."""
    site = _site()
    base = await _serve(aiohttp_server, site)
    followed = await run_cli(
        "dump", base + "/", "--follow", "index", "--follow", r"/b\.xml", "--format", "txt"
    )
    assert followed.out.splitlines() == [base + "/b/1"]
    assert "/a.xml" not in [p for p, _, _ in site.seen]
    probed = Site({"/robots.txt": Doc("User-agent: *\n"), "/maps/x.xml": urlset("/x")})
    base2 = await _serve(aiohttp_server, probed)
    result = await run_cli("dump", base2 + "/", "--paths", "/maps/x.xml", "--format", "txt")
    assert result.out.splitlines() == [base2 + "/x"]
    assert probed.paths() == ["/robots.txt", "/maps/x.xml"]


async def test_tree_read_depth_lists_children_as_not_read(aiohttp_server: ServerFactory) -> None:
    """tree --read-depth 0: the index's children are listed as not read, never fetched."""
    site = _site()
    base = await _serve(aiohttp_server, site)
    result = await run_cli("tree", base + "/index.xml", "--read-depth", "0")
    assert result.code == 0, result.err
    assert f"{base}/a.xml  [not read]" in result.out and f"{base}/b.xml  [not read]" in result.out
    assert "skipped:" not in result.out and "limit" not in result.err
    assert "0 skipped" in result.err and "not read: 2 child sitemaps" in result.err
    assert [p for p, _, _ in site.seen] == ["/index.xml"]


async def test_max_urls_stops_soon(aiohttp_server: ServerFactory) -> None:
    """--max-urls 2 over a 30,000-URL gzip sitemap: two records, and the tree of the run
    shows few URLs parsed (it stopped within a slice of the budget)."""
    body = urlset(*(f"/p/{i}" for i in range(30_000)))
    site = Site({"/big.xml.gz": Doc(body, gzipped=True, content_type="application/gzip")})
    base = await _serve(aiohttp_server, site)
    result = await run_cli("dump", base + "/big.xml.gz", "--max-urls", "2", "--format", "txt", "-v")
    assert result.code == 0 and len(result.out.splitlines()) == 2
    assert "stopped after 2 URLs" in result.err
    assert len(gzip.compress(body.encode())) > 64 * 1024  # more than one read


@pytest.fixture
async def proxy() -> AsyncIterator[tuple[str, list[str]]]:
    """A tiny forward HTTP proxy on 127.0.0.1 that logs the URLs asked for."""
    seen: list[str] = []
    client = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.StreamResponse:
        seen.append(str(request.url))
        async with client.get(str(request.url), allow_redirects=False) as upstream:
            body = await upstream.read()
            return web.Response(status=upstream.status, body=body)

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", forward)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("")).rstrip("/"), seen
    await server.close()
    await client.close()


async def test_proxy_and_trust_env(
    aiohttp_server: ServerFactory, proxy: tuple[str, list[str]]
) -> None:
    """--proxy URL and HTTP_PROXY with --trust-env carry the requests; NO_PROXY exempts the
    site; without --trust-env the variables are ignored."""
    url, seen = proxy
    site = _site()
    base = await _serve(aiohttp_server, site)
    names = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")
    clean = {k: v for k, v in cli_env().items() if k.lower() not in names}
    direct = await run_cli("dump", base + "/", "--proxy", url, "--format", "txt")
    assert direct.code == 0 and len(direct.out.splitlines()) == 3
    assert len(seen) == 4 and seen[0] == base + "/robots.txt"
    seen.clear()
    env = {**clean, "HTTP_PROXY": url}
    trusted = await run_cli("dump", base + "/", "--trust-env", "--format", "txt", env=env)
    assert trusted.code == 0 and len(seen) == 4
    seen.clear()
    ignored = await run_cli("dump", base + "/", "--format", "txt", env=env)
    assert ignored.code == 0 and seen == []
    bypass = {**env, "NO_PROXY": "127.0.0.1"}
    exempt = await run_cli("dump", base + "/", "--trust-env", "--format", "txt", env=bypass)
    assert exempt.code == 0 and len(exempt.out.splitlines()) == 3 and seen == []


async def test_a_typed_private_name_is_no_other_targets(aiohttp_server: ServerFactory) -> None:
    """dump intranet.test/own.xml public.example/index.xml (both names resolving to
    loopback): the first is read as typed; the second's child on intranet.test is refused,
    not read on the first target's trust."""
    from tests.cli.test_robots import FAKE_DNS, run_python

    docs: dict[str, Doc | str] = {
        "/own.xml": urlset("/own-page"),
        "/secret.xml": urlset("/secret-page"),
    }
    site = Site(docs)
    port = (await _serve(aiohttp_server, site)).rsplit(":", 1)[1]
    docs["/index.xml"] = index("/secret.xml").replace("{base}", f"http://intranet.test:{port}")
    result = await run_python(
        FAKE_DNS, "intranet.test,public.example", "dump", "--no-progress",
        f"http://intranet.test:{port}/own.xml", f"http://public.example:{port}/index.xml",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.urls() == [f"http://intranet.test:{port}/own-page"]
    assert "/secret.xml" not in site.paths()
    assert "intranet.test resolves to 127.0.0.1" in result.err


@pytest.mark.parametrize("spelling", ["bücher.example", "xn--bcher-kva.example"])
async def test_an_idn_target_gets_its_header(aiohttp_server: ServerFactory, spelling: str) -> None:
    """dump http://bücher.example/s.xml --header (or its xn-- spelling): one site whatever
    the spelling: the header reaches it, its typed name (resolving to loopback) is read, and
    its URLs are in its scope."""
    from tests.cli.test_robots import FAKE_DNS, run_python

    site = Logged({"/s.xml": urlset("/seite")})
    port = (await _serve(aiohttp_server, site)).rsplit(":", 1)[1]
    result = await run_python(
        FAKE_DNS, "xn--bcher-kva.example", "dump", "--no-progress",
        f"http://{spelling}:{port}/s.xml", "--header", "X-Token: t0ken",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.urls() == [f"http://xn--bcher-kva.example:{port}/seite"]
    assert [headers.get("X-Token") for _, headers, _ in site.seen] == ["t0ken"]
