"""Every human line true, every field in every format (issue 34, rows 4-15): each row of
the issue's table as the user met it, on a loopback site, with the command run as a
subprocess; what the line says now, and the exit code."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
import json
import re
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sitemap_reader.delivery.frame import to_dataframe
from sitemap_reader.records import UrlRecord
from tests.conftest_cli import Doc, Site, cli_env, index, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
HTML = "text/html"
TEXT = "text/plain"


def origin(server: TestServer) -> str:
    """``http://127.0.0.1:PORT`` of a test server."""
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
async def stalls() -> AsyncIterator[asyncio.Event]:
    """Set at the end of the test: what a stalling handler waits for."""
    release = asyncio.Event()
    yield release
    release.set()


async def test_row4_check_a_slow_file_says_the_deadline_stopped_it(
    aiohttp_server: ServerFactory, stalls: asyncio.Event, tmp_path: Path
) -> None:
    """Row 4: ``check URL --deadline 1`` on a healthy file that stalls mid-body: the reading
    stopped at the deadline, said so; no invented XML syntax error. ``report`` the same:
    its line says the run stopped, its tree says the file was not finished."""

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        base = str(request.url.origin())
        await response.write(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
        await response.write(f"<url><loc>{base}/p</loc></url>\n".encode())
        await stalls.wait()
        return response

    server = await aiohttp_server(Site(handlers={"/sitemap.xml": slow}).app())
    result = await run_cli("check", origin(server) + "/sitemap.xml", "--deadline", "1")
    assert "xml-syntax" not in result.out + result.err
    assert "no element found" not in result.out + result.err
    assert "read stopped" in result.out and "deadline (1 s)" in result.out, result.out
    assert result.code != 0
    report = await run_cli(
        "report", origin(server) + "/sitemap.xml", "--deadline", "1", "-o", str(tmp_path / "r")
    )
    assert report.code == 0, report.err
    said, verdict = report.err.rstrip().splitlines()[-2:]
    assert said.endswith("(stopped at the deadline (1 s): not every file was read to the end)")
    assert verdict == "sitemap-reader: verdict: stopped"
    page = (tmp_path / "r").read_text()
    assert "not finished (the run stopped)" in page and "xml-syntax" not in page
    assert "Verdict: stopped" in page


async def test_row5_a_child_submitted_by_robots_is_in_location_however_reached(
    aiohttp_server: ServerFactory,
) -> None:
    """Row 5: a child under /sitemaps/ listing pages at the root, reached through the
    robots.txt of its host: checked by its own URL it is as clean as from the domain."""
    docs = {
        "/robots.txt": Doc("Sitemap: {base}/sitemap_index.xml\n", content_type=TEXT),
        "/sitemap_index.xml": Doc(index("/sitemaps/part-1.xml")),
        "/sitemaps/part-1.xml": Doc(urlset(*(f"/page-{n}" for n in range(30)))),
    }
    server = await aiohttp_server(Site(docs).app())
    base = origin(server)
    from_domain = await run_cli("check", base + "/")
    direct = await run_cli("check", base + "/sitemaps/part-1.xml")
    assert from_domain.code == 0, from_domain.out
    assert direct.code == 0, direct.out
    assert "out-of-location" not in direct.out + from_domain.out


async def test_row6_a_stop_asked_for_is_not_a_failure(aiohttp_server: ServerFactory) -> None:
    """Row 6: ``dump CHILD --max-urls 5``: five records, the file "not finished", nothing
    failed, no parse error invented."""
    docs = {"/part.xml": Doc(urlset(*(f"/p{n}" for n in range(40))))}
    server = await aiohttp_server(Site(docs).app())
    result = await run_cli("dump", origin(server) + "/part.xml", "--max-urls", "5")
    assert result.code == 0, result.err
    assert len(result.jsonl()) == 5
    assert "1 failed" not in result.err and "error" not in result.err.lower(), result.err
    assert "0 failed" in result.err and "not finished" in result.err, result.err


async def test_row8_since_says_what_it_skipped_and_tree_takes_it(
    aiohttp_server: ServerFactory,
) -> None:
    """Row 8: ``dump --since`` skips children whose index lastmod is older, and says so
    with how to read them anyway; ``tree --since`` is accepted."""
    stamped = index("/old.xml", "/new.xml").replace(
        "<loc>{base}/old.xml</loc>", "<loc>{base}/old.xml</loc><lastmod>2023-01-01</lastmod>"
    )
    docs = {
        "/sitemap.xml": Doc(stamped),
        "/old.xml": Doc(urlset("<url><loc>{base}/o</loc><lastmod>2026-02-01</lastmod></url>")),
        "/new.xml": Doc(urlset("<url><loc>{base}/n</loc><lastmod>2026-02-01</lastmod></url>")),
    }
    server = await aiohttp_server(Site(docs).app())
    base = origin(server)
    dump = await run_cli("dump", base + "/sitemap.xml", "--since", "2026-01-01")
    assert dump.code == 0, dump.err
    assert dump.urls() == [base + "/n"]
    assert "may be newer" in dump.err and "--ignore-index-lastmod" in dump.err, dump.err
    tree = await run_cli("tree", base + "/sitemap.xml", "--since", "2026-01-01")
    assert tree.code == 0, tree.err


async def test_row9_everything_out_of_scope_is_a_warning_even_quiet(
    aiohttp_server: ServerFactory,
) -> None:
    """Row 9: ``dump localhost:PORT`` whose robots.txt lists sitemaps on 127.0.0.1: a
    warning that every URL was out of scope and how to keep them, with ``-q`` too."""

    async def robots(request: web.Request) -> web.StreamResponse:
        return web.Response(text=f"Sitemap: http://127.0.0.1:{request.url.port}/sitemap.xml\n")

    site = Site({"/sitemap.xml": Doc(urlset("/a", "/b", "/c"))}, {"/robots.txt": robots})
    server = await aiohttp_server(site.app())
    target = f"localhost:{server.port}"
    for quiet in ((), ("-q",)):
        result = await run_cli("dump", target, *quiet)
        assert result.out == ""
        warning = [line for line in result.err.splitlines() if "warning:" in line]
        assert len(warning) == 1, result.err
        assert "all 3 URLs" in warning[0] and "--scope any" in warning[0]


async def test_row10_only_an_html_site_map_hints_html(aiohttp_server: ServerFactory) -> None:
    """Row 10: no XML sitemap, the home page links an HTML site map: "try --html"."""
    docs = {
        "/": Doc(
            "<!doctype html><html><body><main>hi</main>"
            "<footer><a href='/site-map'>Site map</a></footer></body></html>",
            content_type=HTML,
        ),
        "/site-map": Doc(
            "<!doctype html><html><body><main><ul><li><a href='/a'>a</a></li>"
            "<li><a href='/b'>b</a></li></ul></main></body></html>",
            content_type=HTML,
        ),
    }
    server = await aiohttp_server(Site(docs).app())
    result = await run_cli("dump", origin(server) + "/")
    assert result.code == 1
    assert "try --html: the home page links a site map" in result.err, result.err


async def test_row12_one_node_per_url_and_probes_are_not_findings(
    aiohttp_server: ServerFactory,
) -> None:
    """Row 12: ``tree`` on a robots.txt whose only sitemap fails: that sitemap once; the
    well-known paths probed after it, which hold nothing, are not shown as problems."""
    docs = {"/robots.txt": Doc("Sitemap: {base}/gone.xml\n", content_type=TEXT)}
    server = await aiohttp_server(Site(docs).app())
    base = origin(server)
    result = await run_cli("tree", base + "/robots.txt")
    assert result.out.count(f"{base}/gone.xml") == 1, result.out
    assert "already visited" not in result.out
    # The probes are one line saying what was tried, not a node and a problem each.
    probes = [line for line in result.out.splitlines() if "/sitemap_index.xml" in line]
    assert len(probes) == 1 and "probed 6 well-known paths, none found" in probes[0]
    assert [line for line in result.out.splitlines() if "! " in line and "404" in line] == [
        "│       ! http-status: HTTP 404"
    ]
    check = await run_cli("check", base + "/robots.txt", "--json")
    codes = [f["code"] for file in json.loads(check.out)["files"] for f in file["findings"]]
    assert codes == ["fetch-failed"], codes


async def test_row13_robots_slower_than_the_deadline(
    aiohttp_server: ServerFactory, stalls: asyncio.Event
) -> None:
    """Row 13: robots.txt never answers before the deadline: the run says it stopped at
    the deadline before robots.txt answered, not that no well-known path is a sitemap;
    ``check`` reports no false ``no-sitemap``."""

    async def silent(request: web.Request) -> web.StreamResponse:
        await stalls.wait()
        return web.Response(text="late")

    server = await aiohttp_server(Site(handlers={"/robots.txt": silent}).app())
    base = origin(server)
    dump = await run_cli("dump", base + "/", "--deadline", "1")
    assert "well-known" not in dump.err, dump.err
    assert "deadline" in dump.err and "robots.txt" in dump.err, dump.err
    check = await run_cli("check", base + "/", "--deadline", "1")
    assert "no-sitemap" not in check.out, check.out
    assert "stopped at the deadline (1 s) before robots.txt answered" in check.out
    assert check.code == 3  # could not be checked (docs/reference/audit.md), not a verdict


async def test_row15_messages_are_plural_aware_and_usage_errors_exit_2(
    aiohttp_server: ServerFactory,
) -> None:
    """Row 15: ``1 file``, ``1 URL``; a 404 target counted once; "did you mean" for a rule
    name; an out-of-range port a usage error; help in 80 columns; bare command: help."""
    docs = {"/one.xml": Doc(urlset("/only"))}
    server = await aiohttp_server(Site(docs).app())
    base = origin(server)
    dump = await run_cli("dump", base + "/one.xml")
    for line in dump.err.splitlines():
        assert re.search(r"\b1 (files|URLs|sitemaps|records)\b", line) is None, line
    missing = await run_cli("check", base + "/nothing.xml", "--json")
    assert missing.code == 3
    codes = [f["code"] for file in json.loads(missing.out)["files"] for f in file["findings"]]
    assert codes == ["fetch-failed"], codes  # not no-sitemap as well
    ignore = await run_cli("check", base + "/one.xml", "--ignore", "bad-dates")
    assert ignore.code == 2 and "did you mean 'bad-date'" in ignore.err, ignore.err
    port = await run_cli("demo", "serve", "--port", "80800")
    assert port.code == 2 and "Traceback" not in port.err, port.err
    bare = await run_cli()
    assert "usage:" in bare.out + bare.err and "Traceback" not in bare.err
    assert "commands" in (bare.out + bare.err).lower()
    commands = ("dump", "tree", "demo", "check", "report", "enqueue", "worker", "status")
    for command in ((), *((name,) for name in commands)):
        helped = await run_cli(*command, "--help")
        assert helped.code == 0
        wide = [line for line in helped.out.splitlines() if len(line) > 80]
        assert wide == [], (command, wide)


async def test_row7_every_record_field_in_every_format(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Row 7: csv, parquet and ``to_dataframe`` have a column per :class:`UrlRecord` field,
    ``robots`` and ``source`` among them, filled when the record has the value and empty
    when not (docs/reference/record.md promises every field)."""
    pd = pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    fields = [item.name for item in dataclasses.fields(UrlRecord)]
    assert {"robots", "source"} <= set(fields)
    docs = {
        "/robots.txt": Doc("User-agent: *\nDisallow: /private/\n", content_type=TEXT),
        "/": Doc(
            "<!doctype html><html><body><main>hi</main>"
            "<footer><a href='/site-map'>Site map</a></footer></body></html>",
            content_type=HTML,
        ),
        "/site-map": Doc(
            "<!doctype html><html><body><main><ul><li><a href='/a'>a</a></li>"
            "<li><a href='/private/b'>b</a></li></ul></main></body></html>",
            content_type=HTML,
        ),
    }
    server = await aiohttp_server(Site(docs).app())
    base = origin(server)
    csv_run = await run_cli("dump", base + "/", "--html", "--format", "csv")
    assert csv_run.code == 0, csv_run.err
    rows = list(csv.DictReader(io.StringIO(csv_run.out)))
    assert list(rows[0]) == fields
    by_url = {row["url"]: row for row in rows}
    assert by_url[base + "/private/b"]["robots"] == "disallowed"
    assert by_url[base + "/a"]["robots"] == "allowed"
    assert {row["source"] for row in rows} == {"html"}
    assert {row["pagemaps"] for row in rows} == {""}  # absent: empty
    out = tmp_path / "urls.parquet"
    parquet = await run_cli("dump", base + "/", "--html", "--format", "parquet", "-o", str(out))
    assert parquet.code == 0, parquet.err
    table = pq.read_table(out)
    assert table.column_names == fields
    read = table.to_pydict()
    assert dict(zip(read["url"], read["robots"], strict=True)) == {
        base + "/a": "allowed",
        base + "/private/b": "disallowed",
    }
    assert set(read["source"]) == {"html"}
    frame = to_dataframe(
        [UrlRecord("https://e.example/a", robots="disallowed", source="html"), UrlRecord("u")]
    )
    assert list(frame.columns) == fields
    assert frame["robots"][0] == "disallowed" and frame["source"][0] == "html"
    assert pd.isna(frame["robots"][1]) and pd.isna(frame["source"][1])


async def test_row14_report_on_a_full_disk_is_one_line(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Row 14: ``report -o`` when the disk takes no more (a file size limit: the write
    fails with an OSError as on a full disk): one line naming the file, exit 1, the old
    report kept whole. The real console script (a limit must be the process's own)."""
    docs = {"/sitemap.xml": Doc(urlset(*(f"/page-{n}" for n in range(200))))}
    server = await aiohttp_server(Site(docs).app())
    out = tmp_path / "r.html"
    out.write_text("the old report\n")
    script = str(Path(sys.executable).parent / "sitemap-reader")
    # ulimit -f 4: no file past 4 KiB, far below the report of 200 URLs.
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", 'ulimit -f 4 && exec "$@"', "bash",
        script, "report", origin(server) + "/sitemap.xml", "-o", str(out),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=cli_env(),
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    text = err.decode()
    assert proc.returncode == 1, text
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    assert str(out) in text
    assert out.read_text() == "the old report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]  # no temporary file left


async def test_row11_a_closed_pipe_stops_quietly(aiohttp_server: ServerFactory) -> None:
    """Row 11: ``dump SITE --format txt | head -3``: three lines out, nothing on stderr
    after the pipe closed (no robots line counting records never written)."""
    entries = [f"/p{n}" for n in range(30_000)]  # far more than a pipe holds
    docs = {
        "/robots.txt": Doc(
            "User-agent: *\nDisallow: /p1\nSitemap: {base}/s.xml\n", content_type=TEXT
        ),
        "/s.xml": Doc(urlset(*entries)),
    }
    server = await aiohttp_server(Site(docs).app())
    script = str(Path(sys.executable).parent / "sitemap-reader")
    proc = await asyncio.create_subprocess_exec(
        "bash", "-o", "pipefail", "-c", '"$@" | head -3', "bash",
        script, "dump", origin(server) + "/", "--format", "txt",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=cli_env(),
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert out.decode().splitlines() == [origin(server) + p for p in ("/p0", "/p1", "/p2")]
    assert err.decode() == ""
    assert proc.returncode == 0


async def test_row11_ctrl_c_counts_add_up(
    aiohttp_server: ServerFactory, stalls: asyncio.Event, tmp_path: Path
) -> None:
    """Row 11: Ctrl-C with ``-o`` while three children are being read (the signal sent
    once the server has had all three requests): the summary's count of the files not
    read to the end is the number it lists, none is called failed, and the records
    emitted are all accounted for."""
    asked: set[str] = set()
    all_asked = asyncio.Event()

    async def stalling(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        base = str(request.url.origin())
        await response.write(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
        entries = "".join(f"<url><loc>{base}{request.path}/{n}</loc></url>\n" for n in range(50))
        await response.write(entries.encode())  # past the 32 held for the lastmod vote
        asked.add(request.path)
        if len(asked) == 3:
            all_asked.set()
        await stalls.wait()
        return response

    children = ["/c1.xml", "/c2.xml", "/c3.xml"]
    site = Site({"/sitemap.xml": Doc(index(*children))}, dict.fromkeys(children, stalling))
    server = await aiohttp_server(site.app())
    out = tmp_path / "urls.jsonl"
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "sitemap-reader"),
        "dump", origin(server) + "/sitemap.xml", "-o", str(out),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=cli_env(),
    )  # fmt: skip
    await asyncio.wait_for(all_asked.wait(), 30)
    proc.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    text = err.decode()
    listed = [line for line in text.splitlines() if line.startswith("not finished: ")]
    counted = re.search(r"(\d+) failed, (\d+) not finished", text)
    assert counted is not None, text
    assert counted.group(1) == "0" and int(counted.group(2)) == len(listed) == 3, text
    assert "Traceback" not in text
    # -o replaces the file only at a clean end: none of the records emitted is kept, and
    # the line gives no count of them but the emitted one (some were still on their way
    # to the writer: a count of the writer's would not add up).
    left = re.escape(f"; records not kept: {out} left as it was")
    assert re.search(r"URLs: [0-9,]+ emitted, 0 duplicate, 0 out of scope" + left, text), text
    assert list(tmp_path.iterdir()) == []


async def test_row15_other_host_names_each_host_once(aiohttp_server: ServerFactory) -> None:
    """Row 15: a child its host's robots.txt submits, checked by its own URL, listing a
    URL on another host: the other-host line names the allowed host once, not
    "on H or H" (the file's host and the host vouching for it are the same)."""
    docs = {
        "/robots.txt": Doc("Sitemap: {base}/sitemap_index.xml\n", content_type=TEXT),
        "/sitemap_index.xml": Doc(index("/sitemaps/part-1.xml")),
        "/sitemaps/part-1.xml": Doc(urlset("/a", "<url><loc>https://other.example/x</loc></url>")),
    }
    server = await aiohttp_server(Site(docs).app())
    result = await run_cli("check", origin(server) + "/sitemaps/part-1.xml")
    assert result.code == 2, result.out
    lines = [line for line in result.out.splitlines() if "other-host" in line]
    assert len(lines) == 1, result.out
    assert lines[0].endswith("other-host: https://other.example/x is not on 127.0.0.1")
