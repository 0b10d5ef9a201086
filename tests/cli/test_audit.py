"""The ``check`` command (sitemap_reader/cli/audit.py) run as a subprocess: the verdict and
the exit status by severity, findings by file, line and count, several targets, local
files and standard input, and a bounded run on a gzip bomb. The protocol checker itself
is tested in tests/parse/test_checker.py, ``report`` in tests/audit/test_report.py."""

from __future__ import annotations

import gzip
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.conftest_cli import Doc, Site, index, run_cli, urlset
from tests.parse.test_checker import doc

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


async def test_check_of_a_gzip_encoded_gz_file_is_clean(aiohttp_server: ServerFactory) -> None:
    """check URL of a .xml.gz served with Content-Encoding: gzip: clean (exit 0), as dump
    reads it."""
    inner = gzip.compress(doc("<url><loc>{base}/a</loc></url>"))

    async def handler(request: web.Request) -> web.Response:
        base = str(request.url.origin()).encode()
        body = gzip.compress(gzip.decompress(inner).replace(b"{base}", base))
        return web.Response(
            body=gzip.compress(body),
            headers={"Content-Type": "application/gzip", "Content-Encoding": "gzip"},
        )

    app = web.Application()
    app.router.add_get("/s.xml.gz", handler)
    server = await aiohttp_server(app)
    url = str(server.make_url("/s.xml.gz"))
    result = await run_cli("check", url)
    assert result.code == 0, result.out + result.err
    dump = await run_cli("dump", url, "--format", "txt")
    assert dump.out.splitlines() == [str(server.make_url("/a"))]


async def serve(factory: ServerFactory, site: Site) -> str:
    server = await factory(site.app())
    return str(server.make_url("")).rstrip("/")


CLEAN_SITE = {
    "/robots.txt": Doc("User-agent: *\nSitemap: {base}/sitemap.xml\n", content_type="text/plain"),
    "/sitemap.xml": Doc(index("/a.xml", "/b.xml.gz")),
    "/a.xml": Doc(urlset("/p1", "/p2")),
    "/b.xml.gz": Doc(urlset("/p3"), gzipped=True, content_type="application/gzip"),
}


async def test_check_clean_site_exits_0(aiohttp_server: ServerFactory) -> None:
    """A site that follows the protocol: exit 0 and a 'clean' verdict."""
    base = await serve(aiohttp_server, Site(CLEAN_SITE))
    result = await run_cli("check", base + "/")
    assert result.code == 0, result.out + result.err
    assert result.out.strip().splitlines()[-1].startswith("clean: 4 files, 3 URLs")


async def test_check_findings_exit_2_with_file_line_count(aiohttp_server: ServerFactory) -> None:
    """Findings name severity, file, line and count; duplicates across sitemaps and nesting
    are found; an error (the 404) makes the exit status 2."""
    docs = {
        "/robots.txt": Doc(
            "Sitemap: {base}/sitemap.xml\nSitemap: /rel.xml\n", content_type="text/plain"
        ),
        "/sitemap.xml": Doc(index("/a.xml", "/inner.xml")),
        "/inner.xml": Doc(index("/b.xml")),
        "/a.xml": Doc(urlset(
            "/p1",
            "<url><loc>{base}/p2</loc><lastmod>yesterday</lastmod></url>",
            "<url><loc>{base}/p3</loc><lastmod>2999-01-01</lastmod></url>",
        )),
        "/b.xml": Doc(urlset("/p1")),
    }  # fmt: skip
    base = await serve(aiohttp_server, Site(docs))
    # One sitemap at a time: "first in FILE" names the file the walk read first.
    result = await run_cli("check", base + "/", "--json", "--concurrency", "1")
    assert result.code == 2
    report = json.loads(result.out)
    assert report["clean"] is False
    by_file = {f["url"].removeprefix(base): f for f in report["files"]}
    got = {
        (path, x["code"], x["line"], x["count"])
        for path, f in by_file.items()
        for x in f["findings"]
    }
    assert got == {
        ("/robots.txt", "robots-relative-sitemap", 2, 1),
        ("/rel.xml", "fetch-failed", None, 1),  # robots.txt's /rel.xml, resolved: a 404
        ("/a.xml", "bad-date", 6, 1),
        ("/a.xml", "future-lastmod", 7, 1),
        ("/inner.xml", "nested-index", None, 1),
        ("/b.xml", "duplicate-url", 5, 1),
    }
    assert report["severities"] == {"error": 1, "warning": 3, "notice": 2}
    text = await run_cli("check", base + "/", "--concurrency", "1")
    assert text.code == 2
    a_xml = f"{base}/a.xml\n  line 6: warning bad-date: 'yesterday' is not a W3C Datetime\n"
    assert a_xml + "  line 7: notice future-lastmod: 2999-01-01 is in the future" in text.out
    assert "1 error, 3 warnings, 2 notices (6 rules broken) in 5 of" in text.out


async def test_check_failed_fetch_is_a_finding(aiohttp_server: ServerFactory) -> None:
    """A listed sitemap that answers 404 is a fetch-failed finding; siblings are checked."""
    docs = {"/sitemap.xml": Doc(index("/gone.xml", "/a.xml")), "/a.xml": Doc(urlset("/p1"))}
    base = await serve(aiohttp_server, Site(docs))
    result = await run_cli("check", base + "/sitemap.xml", "--json")
    assert result.code == 2
    files = {f["url"].removeprefix(base): f for f in json.loads(result.out)["files"]}
    assert [x["code"] for x in files["/gone.xml"]["findings"]] == ["fetch-failed"]
    assert files["/a.xml"]["findings"] == [] and files["/a.xml"]["urls"] == 1


async def test_check_local_file_and_stdin(tmp_path: Path) -> None:
    """A local file and standard input are checked the same way (stdin shown as -)."""
    body = doc("<url><loc>https://example.com/a</loc><priority>7</priority></url>")
    path = tmp_path / "s.xml"
    path.write_bytes(body)
    from_file = await run_cli("check", str(path))
    from_stdin = await run_cli("check", "-", stdin=body)
    assert from_file.code == from_stdin.code == 1  # a warning
    assert from_file.out.splitlines()[1] == "  line 3: warning bad-priority: '7'"
    assert from_stdin.out.splitlines()[:2] == ["-", "  line 3: warning bad-priority: '7'"]


async def test_check_nothing_found_exits_3(unused_tcp_port: int) -> None:
    """An unreachable target could not be checked: exit 3 and a no-sitemap finding with a
    plain reason."""
    result = await run_cli("check", f"http://127.0.0.1:{unused_tcp_port}/")
    assert result.code == 3 and "Traceback" not in result.err
    assert "no-sitemap" in result.out and "connection refused" in result.out


async def test_check_command_on_a_bomb_is_bounded(aiohttp_server: ServerFactory) -> None:
    """check on an index with an 80 MiB gzip bomb: bounded time and peak RSS, the bomb's
    findings reported, the sibling checked with every URL."""
    import zlib

    from tests.hostile.cli_kit import measured

    packer = zlib.compressobj(1, zlib.DEFLATED, 31)
    head = doc()[:-10]
    bomb = packer.compress(head) + b"".join(packer.compress(b" " * (1 << 20)) for _ in range(80))
    bomb += packer.flush()

    async def serve_bomb(request: web.Request) -> web.StreamResponse:
        return web.Response(body=bomb, content_type="application/gzip")

    docs = {"/sitemap.xml": Doc(index("/bomb.xml.gz", "/good.xml")), "/good.xml": Doc(urlset("/a"))}
    site = Site(docs, handlers={"/bomb.xml.gz": serve_bomb})
    base = await serve(aiohttp_server, site)
    run = await measured(["check", base + "/sitemap.xml", "--json"], limit=60)
    assert run.code == 2, run.err
    assert run.peak_mib < 100, f"peak RSS {run.peak_mib:.0f} MiB"
    print(f"check on a bomb: {run.seconds:.1f} s, {run.peak_mib:.0f} MiB")
    files = {f["url"].removeprefix(base): f for f in json.loads(run.out)["files"]}
    assert [x["code"] for x in files["/bomb.xml.gz"]["findings"]] == ["check-limit", "too-large"]
    assert files["/good.xml"]["findings"] == [] and files["/good.xml"]["urls"] == 1


SEVERITY_SITE = {
    "/sitemap.xml": Doc(urlset(
        "<url><loc>{base}/a</loc><priority>9</priority></url>",  # warning
        "<url><loc>{base}/b</loc><lastmod>2999-01-01</lastmod></url>",  # notice
    )),
}  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "code"),
    [
        ((), 1),
        (("--fail-on", "error"), 0),
        (("--fail-on", "notice"), 1),
        (("--ignore", "bad-priority"), 0),
        (("--ignore", "bad-priority", "--fail-on", "notice"), 1),
        (("--ignore", "bad-priority", "--ignore", "future-lastmod", "--fail-on", "notice"), 0),
    ],
)
async def test_check_exit_status_by_severity(
    aiohttp_server: ServerFactory, flags: tuple[str, ...], code: int
) -> None:
    """A warning and a notice: the exit status follows --fail-on; --ignore drops rules."""
    base = await serve(aiohttp_server, Site(SEVERITY_SITE))
    result = await run_cli("check", base + "/sitemap.xml", "--json", *flags)
    assert result.code == code, result.err
    ignored = {flags[i + 1] for i, flag in enumerate(flags) if flag == "--ignore"}
    found = {x["code"] for f in json.loads(result.out)["files"] for x in f["findings"]}
    assert found == {"bad-priority", "future-lastmod"} - ignored


async def test_check_ignore_of_an_unknown_rule_is_a_usage_error() -> None:
    """--ignore with a code that is no rule: one line naming it, exit 2, nothing read."""
    result = await run_cli("check", "http://127.0.0.1:9/", "--ignore", "no-such-rule")
    assert result.code == 2
    assert result.err.strip() == (
        "sitemap-reader check: error: --ignore: no rule 'no-such-rule' (see the README)"
    )


LOCATION_SITE = {
    "/robots.txt": Doc(
        "Sitemap: {base}/sitemaps/listed.xml\nSitemap: {base}/sitemaps/index.xml\n",
        content_type="text/plain",
    ),
    "/sitemaps/listed.xml": Doc(urlset("/", "/a")),  # listed by robots.txt: any URL of the host
    "/sitemaps/index.xml": Doc(index("/sitemaps/child.xml")),
    "/sitemaps/child.xml": Doc(urlset("/b")),  # a child of a listed index: the same
    "/sitemaps/unlisted.xml": Doc(urlset("/", "/c")),  # no robots.txt line leads here
}


async def test_location_rule_as_engines_apply_it(aiohttp_server: ServerFactory) -> None:
    """Sitemaps under /sitemaps/ that robots.txt lists (or a listed index's children) may
    list root URLs, however they are reached: given alone, their host's robots.txt is
    consulted (issue 34 row 5); one no robots.txt line leads to may not, and the message
    names the directory; a URL on another host is other-host."""
    base = await serve(aiohttp_server, Site(LOCATION_SITE))
    listed = await run_cli("check", base + "/")
    assert listed.code == 0, listed.out + listed.err
    for path in ("/sitemaps/listed.xml", "/sitemaps/child.xml"):
        alone = await run_cli("check", base + path)
        assert alone.code == 0, alone.out
    unlisted = await run_cli("check", base + "/sitemaps/unlisted.xml")
    assert unlisted.code == 1
    assert f"warning out-of-location: {base}/ is not under {base}/sitemaps/" in unlisted.out
    docs = {"/s.xml": Doc(urlset("<url><loc>https://other.example/a</loc></url>"))}
    other = await run_cli("check", (await serve(aiohttp_server, Site(docs))) + "/s.xml")
    assert "error other-host: https://other.example/a is not on 127.0.0.1" in other.out


async def test_check_examples_several_targets_and_distinct_rules(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """--examples 2 shows two lines per rule and file; two targets in one run; "rules
    broken" counts distinct rules; a local file says which rules it could not get."""
    bad = "<url><loc>{base}/%s</loc><priority>9</priority></url>"
    docs = {"/one.xml": Doc(urlset(*(bad % i for i in range(3)))), "/two.xml": Doc(urlset(bad % 9))}
    base = await serve(aiohttp_server, Site(docs))
    local = tmp_path / "local.xml"
    local.write_bytes(doc("<url><loc>https://example.com/a</loc></url>"))
    result = await run_cli(
        "check", base + "/one.xml", base + "/two.xml", str(local), "--examples", "2"
    )
    assert result.code == 1, result.err
    lines = result.out.splitlines()
    at = lines.index(f"{base}/one.xml")
    assert lines[at + 1 : at + 3] == [
        "  line 5: warning bad-priority: '9' (x3)",
        "    line 6: '9'",
    ]
    assert f"{base}/two.xml" in lines
    assert lines[-2] == "local files have no URL: out-of-location, other-host were not applied"
    assert lines[-1] == "4 warnings (1 rule broken) in 2 of 3 files"
    as_json = json.loads(
        (await run_cli("check", base + "/one.xml", "--json", "--examples", "2")).out
    )
    (finding,) = as_json["files"][0]["findings"]
    assert [x["line"] for x in finding["examples"]] == [5, 6]
