"""Parity: the aiohttp reader and a real Scrapy crawl, both over the one discovery core,
give the same records, the same tree and the same counts for the same loopback site.

The site has robots.txt, nested indexes, a gzipped child, a text sitemap, a broken
child, a missing one (404), one on a closed port, a redirect, URLs listed twice (with a
lastmod in one copy, bare in the other), a foreign host (scope), a sitemap whose URLs
share one lastmod (the lastmod-lie discount) and an index entry naming robots.txt. It
runs once with the default limits and once with tight ones (depth and sitemap budget).
Both drivers read one sitemap at a time, first in first out, so first-seen duplicates
resolve the same way. Lastmods are old (2001), so scores do not depend on the clock.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from sitemap_reader import SitemapReader
from sitemap_reader.options import Options
from tests.crawl.crawl_kit import FAST
from tests.helpers import closed_port
from tests.scrapy.testsite import ServerThread

pytest.importorskip("scrapy")

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tests" / "scrapy" / "runner.py"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
#: The record fields both drivers must agree on.
FIELDS = ("url", "lastmod", "changefreq", "priority", "score", "revisit", "sitemap", "robots")


def _urlset(*entries: str) -> str:
    return f'<?xml version="1.0"?>\n<urlset {NS}>' + "".join(entries) + "</urlset>\n"


def _url(path: str, extra: str = "") -> str:
    return f"<url><loc>{{base}}{path}</loc>{extra}</url>"


def _index(*locs: str) -> str:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?>\n<sitemapindex {NS}>{entries}</sitemapindex>\n'


def site_files(closed: int) -> dict[str, str]:
    """The parity site: path -> body template (``{base}`` is the origin)."""
    uniform = "".join(
        _url(f"/u/{i}", "<lastmod>2001-01-01</lastmod><changefreq>daily</changefreq>")
        for i in range(40)
    )
    return {
        "/robots.txt": (
            "User-agent: *\nDisallow: /p/2\nSitemap: {base}/index.xml\nSitemap: {base}/list.txt\n"
        ),
        "/index.xml": _index(
            "{base}/pages.xml.gz",
            "{base}/nested.xml",
            "{base}/broken.xml",
            "{base}/missing.xml",
            f"http://127.0.0.1:{closed}/gone.xml",
            "{base}/old.xml",
            "{base}/uniform.xml",
            "{base}/robots.txt",
            "{base}/pages.xml.gz",
        ),
        "/pages.xml.gz": _urlset(
            _url("/p/1", "<lastmod>2001-02-03</lastmod><priority>0.7</priority>"),
            _url("/p/2", "<changefreq>weekly</changefreq>"),
            _url("/dup", "<lastmod>2001-05-06T07:08:09Z</lastmod><priority>0.9</priority>"),
            "<url><loc>http://elsewhere.example/x</loc></url>",
        ),
        "/nested.xml": _index("{base}/deep.xml"),
        "/deep.xml": _index("{base}/deepest.xml"),
        "/deepest.xml": _urlset(_url("/d/1"), _url("/dup")),
        "/broken.xml": _urlset(_url("/b/1"), _url("/b/2"), "<url><lo")[:-12],
        "/new.xml": _urlset(_url("/r/1", "<priority>0.2</priority>"), _url("/dup")),
        "/uniform.xml": _urlset(uniform),
        "/list.txt": "{base}/t/1\n{base}/dup\n{base}/p/2\n",
    }


def make_app(closed: int) -> web.Application:
    """The parity site as an aiohttp app (pages answer a tiny HTML page)."""
    files = site_files(closed)

    async def handle(request: web.Request) -> web.StreamResponse:
        base = str(request.url.origin())
        if request.path == "/old.xml":
            raise web.HTTPMovedPermanently(base + "/new.xml")
        template = files.get(request.path)
        if template is None:
            if request.path.endswith((".xml", ".gz", ".txt")):
                raise web.HTTPNotFound()
            return web.Response(text="<html>page</html>", content_type="text/html")
        body = template.replace("{base}", base).encode()
        if request.path.endswith(".gz"):
            return web.Response(
                body=gzip.compress(body, mtime=0), content_type="application/x-gzip"
            )
        kind = "text/plain" if request.path.endswith(".txt") else "application/xml"
        return web.Response(body=body, content_type=kind)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The parity site, served from a thread (the Scrapy crawl runs in a subprocess)."""
    with closed_port() as dead, ServerThread(make_app(dead)) as origin:
        yield origin


def _records(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["url"]: {k: r.get(k) for k in FIELDS} for r in records}


def _tree(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tree without what depends on the client (failure messages, timing)."""
    out = []
    for node in nodes:
        node = dict(node)
        node["problems"] = [(p["code"], p["count"]) for p in node["problems"]]
        node.pop("seconds", None)  # measured by the aiohttp driver only
        node["children"] = _tree(node["children"])
        out.append(node)
    return out


async def _aiohttp_run(base: str, options: Options) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    async with SitemapReader(options, concurrency=1, per_host=1) as reader:
        records = [r.to_dict() async for r in reader.urls(base + "/")]
        assert reader.last_run is not None
        return records, reader.last_run.to_dict()


def _scrapy_run(
    base: str, tmp: Path, settings: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    out, run_json = tmp / "pages.jsonl", tmp / "run.json"
    options = [f"--set={name}={json.dumps(value)}" for name, value in settings.items()]
    command = [sys.executable, str(RUNNER), "mixin", base, str(out), "--run-json", str(run_json)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*command, *options], env=env, cwd=tmp, capture_output=True, timeout=90)
    log = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    pages = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return [page["meta"] for page in pages], json.loads(run_json.read_text("utf-8"))


CASES = {
    "defaults": (FAST, {}),
    "tight": (
        FAST.replace(max_depth=1, max_sitemaps=6),
        {"SITEMAP_READER_MAX_DEPTH": 1, "SITEMAP_READER_MAX_SITEMAPS": 6},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_aiohttp_and_scrapy_agree(case: str, base: str, tmp_path: Path) -> None:
    """Same site, both drivers: the same records, tree (statuses, formats, problems), counts."""
    options, settings = CASES[case]
    settings = {"DOWNLOAD_MAXSIZE": 0, **settings}
    records, run = await _aiohttp_run(base, options)
    scrapy_records, scrapy_run = _scrapy_run(base, tmp_path, settings)
    assert len(records) == len({r["url"] for r in records})  # each URL once
    assert _records(scrapy_records) == _records(records)
    assert _tree(scrapy_run["tree"]) == _tree(run["tree"])
    ignore = {"seconds"}
    counts = {k: v for k, v in run["stats"].items() if k not in ignore}
    assert {k: v for k, v in scrapy_run["stats"].items() if k not in ignore} == counts
    assert scrapy_run["error"] == run["error"] is None
    # The site's traps did what they should, in both (checked once, on the aiohttp side).
    assert run["tree"][0]["format"] == "robots"
    nodes = {n["url"].removeprefix(base): n for n in _walk(run["tree"][0]["children"])}
    if case == "defaults":
        assert ("uniform-lastmod", 1) in _tree([nodes["/uniform.xml"]])[0]["problems"]
        assert nodes["/old.xml"]["final_url"] == base + "/new.xml"
        assert nodes["/missing.xml"]["status"] == 404
        assert run["stats"]["urls_out_of_scope"] == 1
        by_url = _records(records)
        # Streaming keeps the first copy read: sitemaps are read breadth first, in order,
        # so the bare copy of list.txt (depth 0) wins over the one in pages.xml.gz.
        assert by_url[base + "/dup"]["sitemap"] == base + "/list.txt"
        assert by_url[base + "/u/0"]["score"] < 0.55  # uniform lastmod: recency ignored
        # The robots audit, from the one core: /p/2 is disallowed, the others allowed.
        assert by_url[base + "/p/2"]["robots"] == "disallowed"
        assert by_url[base + "/p/1"]["robots"] == "allowed"
        assert run["stats"]["urls_disallowed"] == 1
    else:
        assert run["stats"]["sitemaps_skipped"] >= 2
    skipped = {n["skipped"]["reason"] for n in _walk(run["tree"]) if n["skipped"]}
    assert "robots.txt is not a sitemap" in skipped or case == "tight"


def _walk(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        yield node
        yield from _walk(node["children"])
