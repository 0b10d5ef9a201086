"""robots.txt cases through the real command against a loopback site (issues 25.2, 25.3,
25.5, 24.3, 18.8, 22.4): the robots audit, the crawl delay, the tree and the summary."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.conftest_cli import Doc, Result, Site, cli_env, index, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
#: The command with made-up public names resolving to 127.0.0.1.
FAKE_DNS = str(Path(__file__).with_name("fake_dns_cli.py"))


async def run_python(script: str, *args: str) -> Result:
    """Run ``python SCRIPT ARGS`` to the end (the repository on the path)."""
    root = str(Path(__file__).resolve().parents[2])
    proc = await asyncio.create_subprocess_exec(
        sys.executable, script, *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=cli_env(PYTHONPATH=root),
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode is not None
    return Result(proc.returncode, out.decode(), err.decode())


async def serve(factory: ServerFactory, site: Site) -> str:
    """Start the site on 127.0.0.1; its origin."""
    server = await factory(site.app())
    return str(server.make_url("")).rstrip("/")


def robots(text: str) -> Doc:
    """A plain-text robots.txt document."""
    return Doc(text, content_type="text/plain")


async def test_rfc_groups_in_the_audit_and_the_delay(aiohttp_server: ServerFactory) -> None:
    """A Crawl-delay between two user-agent lines: the Disallow binds the first agent too
    (audit and --obey-robots); the delay binds the first only, as crawler-commons reads it
    (the second agent got it before)."""
    site = Site(
        {
            "/robots.txt": robots(
                "User-agent: mybot\nCrawl-delay: 0.1\nUser-agent: yourbot\n"
                "Disallow: /private/\nSitemap: {base}/s.xml\n"
            ),
            "/s.xml": urlset("/open", "/private/x"),
        }
    )
    base = await serve(aiohttp_server, site)
    audit = await run_cli("dump", base + "/", "--user-agent", "mybot")
    assert audit.code == 0, audit.err
    verdicts = {r["url"].removeprefix(base): r["robots"] for r in audit.jsonl()}
    assert verdicts == {"/open": "allowed", "/private/x": "disallowed"}
    obey = await run_cli("dump", base + "/", "--user-agent", "mybot", "--obey-robots")
    assert obey.urls() == [base + "/open"]
    assert "crawl delay: 0.1 s between requests" in obey.err
    other = await run_cli("dump", base + "/", "--user-agent", "yourbot", "--format", "txt")
    assert "crawl delay" not in other.err


async def test_robots_503_disallows_everything(aiohttp_server: ServerFactory) -> None:
    """robots.txt answers 503 (after the retries): every record is disallowed, the tree
    and the summary say why, --obey-robots keeps nothing."""

    async def unavailable(request: web.Request) -> web.Response:
        return web.Response(status=503, text="busy", headers={"Retry-After": "0"})

    site = Site({"/sitemap.xml": urlset("/a", "/b")}, {"/robots.txt": unavailable})
    base = await serve(aiohttp_server, site)
    line = "robots.txt unavailable (HTTP 503): everything disallowed until it answers"
    dump = await run_cli("dump", base + "/")
    assert dump.code == 0, dump.err
    assert {r["robots"] for r in dump.jsonl()} == {"disallowed"} and len(dump.jsonl()) == 2
    assert line in dump.err
    tree = await run_cli("tree", base + "/")
    assert line in tree.out
    obey = await run_cli("dump", base + "/", "--obey-robots")
    assert obey.out == ""
    assert "robots.txt: disallows 2 URLs the sitemaps list; dropped (--obey-robots)" in obey.err


async def test_html_robots_is_no_sitemap_list(aiohttp_server: ServerFactory) -> None:
    """An HTML page as robots.txt: its bare link lines are not fetched as sitemaps; the
    well-known paths are; the tree says robots.txt is an HTML page."""
    page = (
        "<!DOCTYPE html>\n<html><body>\n{base}/link-page.xml\n"
        "https://twitter.com/intent/tweet?text=Home&\n</body></html>\n"
    )
    site = Site({"/robots.txt": Doc(page, content_type="text/html"), "/sitemap.xml": urlset("/a")})
    base = await serve(aiohttp_server, site)
    dump = await run_cli("dump", base + "/", "--format", "txt")
    assert dump.out.splitlines() == [base + "/a"]
    assert "/link-page.xml" not in site.paths()
    assert "robots.txt is an HTML page" in dump.err
    tree = await run_cli("tree", base + "/")
    assert "robots-html: robots.txt is an HTML page" in tree.out


async def test_robots_that_leads_nowhere(aiohttp_server: ServerFactory) -> None:
    """robots.txt lists a 404 and a soft-404 HTML page: the well-known paths are probed,
    their records come out; the tree and the summary say so."""
    site = Site(
        {
            "/robots.txt": robots("Sitemap: {base}/gone.xml\nSitemap: {base}/page.xml\n"),
            "/page.xml": Doc("<html><body>moved</body></html>", content_type="text/html"),
            "/sitemap.xml": urlset("/a", "/b"),
        }
    )
    base = await serve(aiohttp_server, site)
    dump = await run_cli("dump", base + "/", "--format", "txt")
    assert dump.code == 0, dump.err
    assert dump.out.splitlines() == [base + "/a", base + "/b"]
    said = "none of the 2 sitemaps robots.txt lists could be read"
    assert f"robots.txt: {said}: probed the well-known paths instead" in dump.err
    tree = await run_cli("tree", base + "/")
    assert f"robots-led-nowhere: {said}" in tree.out
    nothing = Site({"/robots.txt": robots("Sitemap: {base}/gone.xml\n")})
    base2 = await serve(aiohttp_server, nothing)
    failed = await run_cli("dump", base2 + "/")
    assert failed.code == 1
    assert "nor any of the 6 well-known paths probed then" in failed.err


async def test_refused_robots_redirect_still_probes(aiohttp_server: ServerFactory) -> None:
    """A public-looking host whose robots.txt redirects to a private name the guard
    refuses: nothing reaches it, and the host's own well-known paths are read."""

    async def to_private(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://internal.example:{request.url.port}/robots.txt")

    site = Site({"/sitemap.xml": urlset("/a")}, {"/robots.txt": to_private})
    port = (await serve(aiohttp_server, site)).rsplit(":", 1)[1]
    base = f"http://public.example:{port}"
    names = "public.example,internal.example"
    dump = await run_python(FAKE_DNS, names, "dump", base + "/", "--format", "txt")
    assert dump.code == 0, dump.err
    assert dump.out.splitlines() == [base + "/a"]
    assert site.paths()[0] == "/robots.txt" and "/sitemap.xml" in site.paths()
    assert site.paths().count("/robots.txt") == 1  # never reached through internal.example
    tree = await run_python(FAKE_DNS, names, "tree", base + "/", "--json")
    root = json.loads(tree.out)["tree"][0]
    assert root["problems"][0]["code"] == "blocked"
    assert "redirect refused" in root["problems"][0]["message"]


async def test_follow_has_scrapys_meaning(aiohttp_server: ServerFactory) -> None:
    """--follow filters the index's children only: the index robots.txt lists is read."""
    site = Site(
        {
            "/robots.txt": robots("Sitemap: {base}/index.xml\n"),
            "/index.xml": index("/part-01.xml", "/part-02.xml", "/part-03.xml"),
            "/part-01.xml": urlset("/1"),
            "/part-02.xml": urlset("/2"),
            "/part-03.xml": urlset("/3"),
        }
    )
    base = await serve(aiohttp_server, site)
    dump = await run_cli("dump", base + "/", "--follow", "part-0[12]", "--format", "txt")
    assert dump.code == 0, dump.err
    assert sorted(dump.out.splitlines()) == [base + "/1", base + "/2"]
    assert "/part-03.xml" not in site.paths()
