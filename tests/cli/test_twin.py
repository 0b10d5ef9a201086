"""The www/bare twin (issue 35.2) through the real command, with made-up names resolved
in-process to 127.0.0.1 (tests/cli/fake_dns_cli.py): one loopback server answers both names
and tells them apart by the Host header. The twin is not a host the user typed, so the
address guard wants it public: --allow-private lets it reach 127.0.0.1 here."""

from __future__ import annotations

import json

from aiohttp import web

from tests.cli.test_robots import FAKE_DNS, ServerFactory, run_python
from tests.conftest_cli import urlset

PRIVATE = ("--allow-private",)


def _app(bodies: dict[tuple[str, str], str], asked: list[tuple[str, str]]) -> web.Application:
    """A server answering ``(host, path)`` from ``bodies`` ({base} is that host's origin)."""

    async def handle(request: web.Request) -> web.Response:
        host = request.host.split(":")[0]
        asked.append((host, request.path))
        body = bodies.get((host, request.path))
        if body is None:
            return web.Response(status=404, text="not found")
        text = body.replace("{base}", str(request.url.origin()))
        kind = "text/plain" if request.path.endswith(".txt") else "application/xml"
        return web.Response(text=text, content_type=kind)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


async def test_a_bare_domain_that_answers_nothing_reads_its_www_twin(
    aiohttp_server: ServerFactory,
) -> None:
    """twin.example has no address at all; www.twin.example lists a sitemap in its
    robots.txt: its records come out and the tree says the twin was tried (before: no
    sitemap, nothing written). --no-twin keeps the old way."""
    asked: list[tuple[str, str]] = []
    www = "www.twin.example"
    bodies = {
        (www, "/robots.txt"): "Sitemap: {base}/s.xml\n",
        (www, "/s.xml"): urlset("/a", "/b"),
    }
    server = await aiohttp_server(_app(bodies, asked))
    port = server.port
    target = f"http://twin.example:{port}/"
    dump = await run_python(FAKE_DNS, www, "dump", target, "--format", "txt", *PRIVATE)
    assert dump.code == 0, dump.err
    assert dump.out.splitlines() == [f"http://{www}:{port}/a", f"http://{www}:{port}/b"]
    assert "no sitemap on twin.example: trying its twin www.twin.example" in dump.err
    tree = await run_python(FAKE_DNS, www, "tree", target, *PRIVATE)
    assert "trying its twin www.twin.example" in tree.out + tree.err
    off = await run_python(FAKE_DNS, www, "dump", target, "--format", "txt", "--no-twin", *PRIVATE)
    assert off.out == "" and "trying its twin" not in off.err


async def test_a_www_host_without_sitemaps_reads_the_bare_twin_before_html(
    aiohttp_server: ServerFactory,
) -> None:
    """www.twin.example answers with no robots.txt and no sitemap; twin.example has a
    /sitemap.xml: the twin is read before the HTML fallback, which never starts."""
    asked: list[tuple[str, str]] = []
    bodies = {("twin.example", "/sitemap.xml"): urlset("/x")}
    server = await aiohttp_server(_app(bodies, asked))
    port = server.port
    names = "twin.example,www.twin.example"
    target = f"http://www.twin.example:{port}/"
    tree = await run_python(FAKE_DNS, names, "tree", target, "--html", "--json", *PRIVATE)
    assert tree.code == 0, tree.err
    root = json.loads(tree.out)["tree"][0]
    assert [p["code"] for p in root["problems"]] == ["twin-host"]
    assert ("twin.example", "/sitemap.xml") in asked
    assert ("www.twin.example", "/") not in asked  # no home page read: no HTML fallback
