"""The embedded demo site (sitemap_reader/demo.py) and ``sitemap-reader demo`` end to end."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer

import sitemap_reader as sr
from sitemap_reader import demo
from sitemap_reader.parse.robots import sitemaps_from_robots
from tests.conftest_cli import SITEMAP_READER, cli_env, run_cli

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
BANNER = re.compile(r"demo site running at (http://127\.0\.0\.1:\d+)/")


@pytest.fixture
async def demo_base(aiohttp_server: ServerFactory) -> str:
    """The demo app on a test server; its origin."""
    server = await aiohttp_server(demo.make_app())
    return str(server.make_url("")).rstrip("/")


async def fetch(base: str, path: str) -> tuple[int, str, bytes]:
    """GET a path of the demo site: status, Content-Type, raw body."""
    async with (
        ClientSession(auto_decompress=False) as session,
        session.get(base + path) as response,
    ):
        return response.status, response.content_type, await response.read()


async def test_robots_has_two_sitemap_lines_one_relative(demo_base: str) -> None:
    """robots.txt lists the index absolutely and the text sitemap relatively."""
    status, _, body = await fetch(demo_base, "/robots.txt")
    assert status == 200
    assert re.search(rb"^Sitemap: /sitemap.txt$", body, re.M)
    assert sitemaps_from_robots(body, demo_base + "/robots.txt") == [
        demo_base + "/sitemap_index.xml",
        demo_base + "/sitemap.txt",
    ]


async def test_documents_parse_to_the_expected_urls(demo_base: str) -> None:
    """Parsing every sitemap of the site gives the expected URLs plus the foreign one."""
    found: set[str] = set()
    formats = {}
    for path in demo.SITEMAP_PATHS:
        status, _, body = await fetch(demo_base, path)
        assert status == 200, path
        result = sr.parse(body, url=demo_base + path)
        formats[path] = result.format
        found.update(record.url for record in result.urls)
    assert found == demo.expected_urls(demo_base) | {demo.FOREIGN_URL}
    assert formats["/sitemaps/news.xml"] == "urlset" and formats["/feeds/blog.rss"] == "rss"
    assert formats["/sitemap.txt"] == "text"


async def test_gzipped_child_and_broken_child(demo_base: str) -> None:
    """The .xml.gz child really is gzip; the broken child parses incomplete, 2 URLs kept."""
    _, _, body = await fetch(demo_base, "/sitemaps/pages.xml.gz")
    assert gzip.decompress(body).startswith(b"<?xml")
    _, _, body = await fetch(demo_base, demo.BROKEN_PATH)
    result = sr.parse(body, url=demo_base + demo.BROKEN_PATH)
    assert not result.complete and len(result.urls) == 2


async def test_unknown_path_is_404(demo_base: str) -> None:
    """A path outside the site answers 404 (so probes of well-known paths miss)."""
    status, _, _ = await fetch(demo_base, "/wp-sitemap.xml")
    assert status == 404


def test_expected_urls_are_absolute() -> None:
    """expected_urls joins the origin and each path, whatever trailing slash it has."""
    urls = demo.expected_urls("http://127.0.0.1:1/")
    assert "http://127.0.0.1:1/" in urls and "http://127.0.0.1:1/docs/api" in urls
    assert len(urls) == len(demo.EXPECTED_PATHS)


async def test_demo_command_dumps_exactly_the_expected_urls() -> None:
    """sitemap-reader demo: exactly the expected URL set, each once, and the summary."""
    result = await run_cli("demo")
    assert result.code == 0, result.err
    match = BANNER.search(result.err)
    assert match, result.err
    base = match.group(1)
    urls = result.urls()
    assert len(urls) == len(set(urls))
    assert set(urls) == demo.expected_urls(base)
    assert f"sitemaps: {len(demo.SITEMAP_PATHS) - 1} ok, 1 failed, 0 skipped" in result.err
    assert f"failed: {base}{demo.BROKEN_PATH} (" in result.err
    assert "1 duplicate, 1 out of scope" in result.err


async def test_demo_ranked_txt() -> None:
    """demo --ranked --format txt: every URL, the homepage (priority 1.0) first."""
    result = await run_cli("demo", "--ranked", "--format", "txt")
    assert result.code == 0
    base = BANNER.search(result.err).group(1)  # type: ignore[union-attr]
    lines = result.out.splitlines()
    assert set(lines) == demo.expected_urls(base) and lines[0] == base + "/"


async def test_demo_tree_text_and_json() -> None:
    """demo tree shows every sitemap of the site; --json gives the same nodes as JSON."""
    text = await run_cli("demo", "tree")
    assert text.code == 0
    for path in demo.SITEMAP_PATHS:
        assert path in text.out, path
    assert "FAILED" in next(line for line in text.out.splitlines() if demo.BROKEN_PATH in line)
    data = await run_cli("demo", "tree", "--json", "-q")
    assert data.err == ""
    tree = json.loads(data.out)
    urls = {node["url"] for node in _walk(tree["tree"])}
    base = tree["targets"][0].rstrip("/")
    assert {base + p for p in demo.SITEMAP_PATHS} <= urls


def _walk(nodes: list[dict[str, object]]) -> list[dict[str, object]]:
    out = []
    for node in nodes:
        out.append(node)
        out.extend(_walk(node["children"]))  # type: ignore[arg-type]
    return out


async def test_every_listed_page_is_a_small_html_page(demo_base: str) -> None:
    """Every page URL the demo lists answers 200 with HTML: its title and links to pages
    of the demo (so a crawler pointed at it has pages to fetch)."""
    for path in sorted(demo.EXPECTED_PATHS):
        status, kind, body = await fetch(demo_base, path)
        assert (status, kind) == (200, "text/html"), path
        text = body.decode()
        title = re.search(r"<title>(.*?)</title>", text)
        assert title and title.group(1) == demo.page_title(path).replace("&", "&amp;")
        links = re.findall(r'href="([^"]+)"', text)
        assert len(links) >= 2 and set(links) <= demo.EXPECTED_PATHS, (path, links)


async def test_demo_check_and_report(tmp_path: Path) -> None:
    """demo check reports the demo's findings like check (exit 2: it breaks rules on purpose);
    demo report -o FILE writes the HTML report; without -o it is a usage error."""
    checked = await run_cli("demo", "check", "--json")
    assert checked.code == 2, checked.err
    data = json.loads(checked.out)
    assert not data["clean"] and any(f["url"].endswith(demo.BROKEN_PATH) for f in data["files"])
    out = tmp_path / "demo.html"
    reported = await run_cli("demo", "report", "-o", str(out))
    assert reported.code == 0, reported.err
    assert out.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    missing = await run_cli("demo", "report")
    assert missing.code == 2 and "needs -o FILE" in missing.err


async def test_demo_port_only_with_serve() -> None:
    """--port goes with 'demo serve' only (exit 2 otherwise)."""
    result = await run_cli("demo", "tree", "--port", "1")
    assert result.code == 2 and "--port goes with 'demo serve'" in result.err


async def test_demo_serve_runs_until_interrupted() -> None:
    """demo serve prints its URL on stdout, serves sitemaps and pages, and ends with exit 0
    on SIGINT (Ctrl-C)."""
    proc = await asyncio.create_subprocess_exec(
        SITEMAP_READER, "demo", "serve", env=cli_env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        base = line.decode().strip().rstrip("/")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", base), line
        assert (await fetch(base, "/robots.txt"))[0] == 200
        assert (await fetch(base, "/pricing"))[1] == "text/html"
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err
        assert b"Ctrl-C stops it" in err
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_an_unchanged_demo_gives_nothing_the_second_time(
    demo_base: str, tmp_path: Path
) -> None:
    """dump --state --changed-only --removed twice on the unchanged demo: everything the
    first time, nothing the second, not even the URLs the broken child listed before it
    broke (they went out the first time)."""
    state = str(tmp_path / "state.db")
    args = ("dump", demo_base, "--state", state, "--changed-only", "--removed", "-q")
    first = await run_cli(*args)
    assert first.code == 0, first.err  # a broken child is a partial result, not a failure
    assert set(first.urls()) == demo.expected_urls(demo_base)
    second = await run_cli(*args)
    assert second.code == 0, second.err
    assert second.urls() == []
