"""``check`` and ``report`` ride on the reader's one walk: every file is fetched once,
through the same fetcher (proxy, user headers, address guard), and what they print of
the site's text is escaped; a local file whose name is not UTF-8 is shown, not a crash."""

from __future__ import annotations

import json
import os
import socket
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.test_utils import TestServer

from sitemap_reader.audit.survey import survey
from sitemap_reader.options import Options
from tests.conftest_cli import SITEMAP_READER, Doc, Site, cli_env, index, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"

SITE = {
    "/robots.txt": Doc("User-agent: *\nSitemap: {base}/sitemap.xml\n", content_type="text/plain"),
    "/sitemap.xml": Doc(index("/a.xml", "/b.xml.gz", "/gone.xml", "/c.txt")),
    "/a.xml": Doc(urlset("/p1", "/p2")),
    "/b.xml.gz": Doc(urlset("/p3"), gzipped=True, content_type="application/gzip"),
    "/c.txt": Doc("{base}/p4\n{base}/p5\n", content_type="text/plain"),
}
PATHS = {"/robots.txt", "/sitemap.xml", "/a.xml", "/b.xml.gz", "/gone.xml", "/c.txt"}


async def serve(factory: ServerFactory, site: Site) -> str:
    server = await factory(site.app())
    return str(server.make_url("")).rstrip("/")


@pytest.mark.parametrize("command", ["check", "report"])
async def test_each_file_is_requested_once(
    aiohttp_server: ServerFactory, tmp_path: Path, command: str
) -> None:
    """check and report: the site sees every file requested exactly once (one walk)."""
    site = Site(SITE)
    base = await serve(aiohttp_server, site)
    args = ["-o", str(tmp_path / "r.html")] if command == "report" else ["--json"]
    result = await run_cli(command, base + "/", *args)
    assert result.code == (2 if command == "check" else 0), result.err  # a 404: an error
    assert Counter(site.paths()) == dict.fromkeys(PATHS, 1)
    if command == "check":
        files = {f["url"].removeprefix(base): f for f in json.loads(result.out)["files"]}
        assert [x["code"] for x in files["/gone.xml"]["findings"]] == ["fetch-failed"]
        plain = SITE["/b.xml.gz"].body.replace("{base}", base).encode()
        assert files["/b.xml.gz"]["uncompressed"] == len(plain)  # checked after gunzip
        assert json.loads(result.out)["urls"] == 5


async def test_check_goes_through_the_proxy_with_the_users_header(unused_tcp_port: int) -> None:
    """check --proxy P --header 'Cookie: ..': every request goes to the proxy (absolute
    URL) with the cookie; nothing listens at the site's own address."""
    origin = f"http://127.0.0.1:{unused_tcp_port}"
    seen: list[tuple[str, str | None]] = []

    async def proxy(request: web.Request) -> web.StreamResponse:
        seen.append((str(request.url), request.headers.get("Cookie")))
        doc = SITE.get(request.path)
        if doc is None:
            return web.Response(status=404)
        return web.Response(body=doc.render(origin), content_type=doc.content_type)

    app = web.Application()
    app.router.add_get("/{tail:.*}", proxy)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        proxy_url = str(server.make_url("")).rstrip("/")
        result = await run_cli(
            "check", origin + "/", "--proxy", proxy_url, "--header", "Cookie: session=s3cret"
        )
    finally:
        await server.close()
    assert result.code == 2, result.err  # the 404 child
    assert "connection refused" not in result.out
    assert sorted(url for url, _ in seen) == sorted(origin + path for path in PATHS)
    assert {cookie for _, cookie in seen} == {"session=s3cret"}


class RebindingResolver(AbstractResolver):
    """``public.example`` is 127.0.0.1 (the target's own name may resolve anywhere);
    ``rebind.example`` answers 127.0.0.1 too, as a DNS answer changed after a first read
    would: the guard must refuse it on the one read there is."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """127.0.0.1 for the two made-up names; anything else fails like NXDOMAIN."""
        self.asked.append(host)
        if host not in ("public.example", "rebind.example"):
            raise OSError(f"no such host {host}")
        return [
            ResolveResult(
                hostname=host, host="127.0.0.1", port=port, family=socket.AF_INET, proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]  # fmt: skip

    async def close(self) -> None:
        """Nothing to release."""


async def test_a_changed_dns_answer_never_reaches_loopback(aiohttp_server: ServerFactory) -> None:
    """A child on a name that now resolves to loopback: refused by the walk's guard, and
    no second read exists to reach it (the site never sees that request)."""
    docs: dict[str, Doc | str] = {}
    site = Site(docs)
    port = (await serve(aiohttp_server, site)).rsplit(":", 1)[1]
    secret = f"http://rebind.example:{port}/secret.xml"
    docs["/sitemap.xml"] = Doc(
        index("/a.xml").replace("</sitemapindex>", "")
        + f"<sitemap><loc>{secret}</loc></sitemap></sitemapindex>"
    )
    docs["/a.xml"] = Doc(urlset("/p1"))
    docs["/secret.xml"] = Doc(urlset("/secret"))
    target = f"http://public.example:{port}/sitemap.xml"
    resolver = RebindingResolver()
    found = await survey([target], Options.of(scope="any"), resolver=resolver)
    # robots.txt is asked whether it vouches for the target (issue 34 row 5); nothing else
    # is read twice, and no well-known path is probed for that.
    assert Counter(site.paths()) == {"/robots.txt": 1, "/sitemap.xml": 1, "/a.xml": 1}
    by_url = {r.url.split(":" + port)[1]: r for r in found.files}
    (failed,) = by_url["/secret.xml"].findings
    assert failed.code == "fetch-failed" and "127.0.0.1" in failed.message, failed
    assert resolver.asked.count("rebind.example") == 1


async def test_site_text_is_escaped_in_check_output(aiohttp_server: ServerFactory) -> None:
    """ESC [, OSC 8 links and BEL in text-sitemap lines and robots.txt Sitemap: values
    reach the terminal escaped, never raw."""
    evil = "\x1b[31mred\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07\x07"
    docs = {
        "/robots.txt": Doc(
            f"User-agent: *\nSitemap: {{base}}/s.txt\nSitemap: /rel{evil}.xml\n",
            content_type="text/plain",
        ),
        "/s.txt": Doc(f"{{base}}/ok\n/page{evil}\n", content_type="text/plain"),
    }
    base = await serve(aiohttp_server, Site(docs))
    result = await run_cli("check", base + "/")
    assert result.code == 2, result.err
    for raw in ("\x1b", "\x07"):
        assert raw not in result.out + result.err
    assert "\\x1b[31mred\\x1b]8;;http://evil.example/\\x07link" in result.out
    assert "robots-relative-sitemap" in result.out and "url-not-absolute" in result.out


@pytest.mark.parametrize("command", ["check", "report"])
async def test_a_local_file_named_in_latin_1(tmp_path: Path, command: str) -> None:
    """A local file named caf\\xe9.xml (not UTF-8): read and shown with the byte escaped,
    never a UnicodeEncodeError."""
    body = f'<urlset xmlns="{NS}"><url><loc>https://example.com/a</loc></url></urlset>'
    name = os.fsdecode(b"caf\xe9.xml")
    (tmp_path / name).write_bytes(body.encode())
    out = tmp_path / "r.html"
    args = ["-o", str(out)] if command == "report" else []
    proc = await run_bytes([command, name, *args], cwd=tmp_path)
    assert b"Traceback" not in proc[2], proc[2]
    assert proc[0] == 0, proc[2]
    if command == "report":
        assert "caf\\xe9.xml" in out.read_text(encoding="utf-8")
    else:
        assert proc[1].decode().splitlines()[-1].startswith("clean: 1 file, 1 URL")


async def run_bytes(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Run the command with arguments that may not be UTF-8; raw stdout and stderr."""
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        SITEMAP_READER,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(),
        cwd=str(cwd),
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode is not None
    return proc.returncode, out, err
