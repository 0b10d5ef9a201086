"""The installed ``sitemap-reader`` command, run as a subprocess against real servers."""

from __future__ import annotations

import asyncio
import csv
import fcntl
import gzip
import importlib.util
import io
import json
import os
import pty
import re
import signal
import struct
import termios
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.conftest_cli import SITEMAP_READER, Doc, Site, cli_env, index, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]

ROBOTS = "User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap.xml\n"
RICH_ENTRY = """<url><loc>{base}/a</loc><lastmod>2026-01-10</lastmod>
  <changefreq>daily</changefreq><priority>0.9</priority>
  <xhtml:link rel="alternate" hreflang="de" href="{base}/de/a"/>
  <image:image><image:loc>{base}/a.jpg</image:loc></image:image></url>"""
BASIC = {
    "/robots.txt": Doc(ROBOTS, content_type="text/plain"),
    "/sitemap.xml": Doc(
        urlset(
            RICH_ENTRY,
            "<url><loc>{base}/b</loc><lastmod>2025-05-01</lastmod><priority>0.2</priority></url>",
            "<url><loc>{base}/c</loc><priority>0.5</priority></url>",
            "<url><loc>{base}/blog/post-1</loc><lastmod>2026-06-01</lastmod>"
            "<priority>0.7</priority></url>",
            "<url><loc>{base}/blog/post-2</loc><lastmod>2024-01-01</lastmod></url>",
            "<url><loc>https://elsewhere.example.org/x</loc></url>",
        )
    ),
}
BASIC_PATHS = ["/a", "/b", "/c", "/blog/post-1", "/blog/post-2"]
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # anything but \t and \n


async def serve(factory: ServerFactory, site: Site) -> str:
    """Start the site; its origin (``http://127.0.0.1:PORT``)."""
    server = await factory(site.app())
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
async def basic(aiohttp_server: ServerFactory) -> tuple[str, Site]:
    """The basic site: robots.txt naming one sitemap of five URLs plus a foreign one."""
    site = Site(BASIC)
    return await serve(aiohttp_server, site), site


def paths(urls: list[str], base: str) -> list[str]:
    """The URLs with the origin taken off."""
    return [u.removeprefix(base) for u in urls]


# --------------------------------------------------------------------------- basics


async def test_help_lists_every_option_and_examples() -> None:
    """--help of dump names every option of the CLI's contract and shows examples."""
    result = await run_cli("dump", "--help")
    assert result.code == 0
    for option in (
        "-o", "--format", "--ranked", "--since", "--include", "--exclude", "--max-urls",
        "--concurrency", "--per-host", "--timeout", "--max-depth", "--max-sitemaps",
        "--strict", "--scope", "--no-robots", "--no-guess", "--user-agent", "--no-progress",
        "-q", "-v",
    ):  # fmt: skip
        assert re.search(rf"(^|[\s,\[]){re.escape(option)}\b", result.out), option
    assert "examples:" in result.out and "jq" in result.out
    top = await run_cli("--help")
    assert top.code == 0 and all(c in top.out for c in ("dump", "tree", "demo"))


@pytest.mark.parametrize("command", ["dump", "tree", "check", "report"])
async def test_short_help_describes_the_common_flags_and_names_the_rest(command: str) -> None:
    """A command's --help (on stdout) describes the common flags and names every other
    one under "more options" in far fewer lines; --help-all describes every flag; no
    flag's name is broken across two lines."""
    short, full = await run_cli(command, "--help"), await run_cli(command, "--help-all")
    assert short.code == full.code == 0 and short.err == full.err == ""
    assert len(short.out.splitlines()) <= len(full.out.splitlines()) - 45
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", full.out))
    assert flags == set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", short.out))
    more = short.out.split("more options (--help-all describes each):\n", 1)[1]
    named = set(re.findall(r"--[a-z][a-z-]+", more.split("\n\n", 1)[0]))
    assert {"--timeout", "--proxy", "--max-sitemaps"} <= named and "--since" not in named
    assert re.search(r"^  --since DATE +leave out records", short.out, re.MULTILINE)
    assert re.search(r"^  --timeout S +seconds for one sitemap", full.out, re.MULTILINE)
    assert not re.search(r"--[a-z]+-$", short.out + full.out, re.MULTILINE)
    assert short.out.startswith(f"usage: sitemap-reader {command} [options] ")


async def test_version() -> None:
    """--version prints the program name, the installed version and the parser's active
    path, then the path with why, then the version of the bundled Public Suffix List's
    package (its last part the list's date)."""
    result = await run_cli("--version")
    assert result.code == 0
    match = re.fullmatch(
        r"sitemap-reader \d+\.\d+\.\d+\S*, (native|pure Python) parser\n"
        r"parser: (native|pure Python) \(.+\)\n"
        r"Public Suffix List: publicsuffixlist \d+\.\d+\.\d+\.20\d{6}\n",
        result.out,
    )
    assert match and match[1] == match[2], result.out


#: Was the compiled parser built for this interpreter (whichever path this process uses)?
BUILT = importlib.util.find_spec("sitemap_reader.parse._native._expatcore") is not None


async def test_version_names_the_parser_path() -> None:
    """--version says ``native`` where the extension is built and not switched off,
    ``pure Python`` with SITEMAP_READER_NO_EXTENSIONS=1 (saying it was forced), and
    ``pure Python`` with the reason where no extension was built."""
    env = {k: v for k, v in cli_env().items() if k != "SITEMAP_READER_NO_EXTENSIONS"}
    normal = (await run_cli("--version", env=env)).out.splitlines()[1]
    forced = (await run_cli("--version", env={**env, "SITEMAP_READER_NO_EXTENSIONS": "1"})).out
    assert forced.splitlines()[1] == "parser: pure Python (forced: SITEMAP_READER_NO_EXTENSIONS=1)"
    if BUILT:
        assert re.fullmatch(r"parser: native \(compiled, expat \d+\.\d+ through pyexpat\)", normal)
    else:
        assert normal.startswith("parser: pure Python (no compiled extension: ")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["dump"], "TARGET"),
        (["dump", "x.com", "--bogus"], "--bogus"),
        (["dump", "x.com", "--include", "("], "bad regular expression"),
        (["dump", "x.com", "--since", "yesterday"], "expected an ISO date"),
        (["dump", "x.com", "--max-urls", "0"], "--max-urls"),
        (["dump", "x.com", "--format", "xml"], "--format"),
        (["dump", "x.com", "--timeout", "-1"], "--timeout"),
        (["dump", "x.com", "--scope", "planet"], "--scope"),
        (["tree", "a.com", "b.com"], "unrecognized"),
        (["demo", "--json"], "--json"),
        ([], "COMMAND"),
    ],
)
async def test_usage_errors_exit_2_naming_the_problem(argv: list[str], needle: str) -> None:
    """Bad flags, regexes, dates and numbers exit 2 with a message naming the problem."""
    result = await run_cli(*argv)
    assert result.code == 2
    assert needle in result.err
    assert result.out == ""


# --------------------------------------------------------------------------- formats


async def test_jsonl_default_records_in_design_key_order(basic: tuple[str, Site]) -> None:
    """A domain-style target gives JSONL records, keys in the record's order, stdout only."""
    base, _ = basic
    result = await run_cli("dump", base + "/")
    assert result.code == 0, result.err
    records = result.jsonl()
    assert sorted(paths([r["url"] for r in records], base)) == sorted(BASIC_PATHS)
    first = next(r for r in records if r["url"] == base + "/a")
    assert list(first) == [
        "url", "lastmod", "changefreq", "priority", "score", "sitemap", "alternates", "images",
        "revisit", "robots",
    ]  # fmt: skip
    assert first["robots"] == "allowed"  # the site's robots.txt was read
    assert first["lastmod"] == "2026-01-10T00:00:00Z" and first["priority"] == 0.9
    assert first["alternates"] == [{"hreflang": "de", "url": base + "/de/a"}]
    assert first["sitemap"] == base + "/sitemap.xml"


async def test_csv_has_header_and_json_extension_fields(basic: tuple[str, Site]) -> None:
    """--format csv: a header row, one row per record, extension fields as JSON text."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "--format", "csv")
    assert result.code == 0, result.err
    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert result.out.splitlines()[0].split(",")[:6] == [
        "url", "lastmod", "changefreq", "priority", "score", "sitemap",
    ]  # fmt: skip
    assert sorted(paths([r["url"] for r in rows], base)) == sorted(BASIC_PATHS)
    a = next(r for r in rows if r["url"] == base + "/a")
    assert json.loads(a["images"]) == [{"loc": base + "/a.jpg"}]
    assert json.loads(a["alternates"])[0]["hreflang"] == "de"
    assert a["videos"] == "" and a["news"] == "" and float(a["priority"]) == 0.9
    c = next(r for r in rows if r["url"] == base + "/c")
    assert c["lastmod"] == ""


async def test_txt_is_urls_only(basic: tuple[str, Site]) -> None:
    """--format txt prints one URL a line and nothing else."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "--format", "txt")
    assert result.code == 0
    assert sorted(paths(result.out.splitlines(), base)) == sorted(BASIC_PATHS)


async def test_ranked_orders_by_score(basic: tuple[str, Site]) -> None:
    """--ranked writes the records best first: scores never increase."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "--ranked")
    scores = [r["score"] for r in result.jsonl()]
    assert len(scores) == len(BASIC_PATHS)
    assert scores == sorted(scores, reverse=True)
    assert result.jsonl()[0]["url"] == base + "/a"


# --------------------------------------------------------------------------- filters


async def test_since_drops_older_and_keeps_undated(basic: tuple[str, Site]) -> None:
    """--since drops records whose lastmod is older; records without lastmod stay."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "--since", "2026-01-01", "--format", "txt")
    assert sorted(paths(result.out.splitlines(), base)) == ["/a", "/blog/post-1", "/c"]
    later = await run_cli("dump", base + "/", "--since", "2026-01-10T00:00:01Z", "--format", "txt")
    assert sorted(paths(later.out.splitlines(), base)) == ["/blog/post-1", "/c"]
    assert "older than --since" in later.err


async def test_include_and_exclude_are_repeatable(basic: tuple[str, Site]) -> None:
    """--include keeps URLs matching any pattern; --exclude drops any match, and wins."""
    base, _ = basic
    result = await run_cli(
        "dump", base + "/", "--format", "txt",
        "--include", "/blog/", "--include", "/a$", "--exclude", "post-2",
    )  # fmt: skip
    assert sorted(paths(result.out.splitlines(), base)) == ["/a", "/blog/post-1"]


async def test_max_urls_stops_after_n_records(basic: tuple[str, Site]) -> None:
    """--max-urls N writes exactly N records, says so, and exits 0."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "--max-urls", "2")
    assert result.code == 0
    assert len(result.jsonl()) == 2
    assert "stopped after 2 URLs (--max-urls)" in result.err


# --------------------------------------------------------------------------- inputs


async def test_stdin_dash(tmp_path: Path) -> None:
    """'-' reads a sitemap from standard input (no scope filter: it has no site)."""
    body = urlset("/x", "/y").replace("{base}", "https://example.com").encode()
    result = await run_cli("dump", "-", "--format", "txt", stdin=body)
    assert result.code == 0, result.err
    assert result.out.splitlines() == ["https://example.com/x", "https://example.com/y"]


async def test_local_gzipped_file_and_several_targets(tmp_path: Path) -> None:
    """A local .xml.gz and a local text sitemap as two targets of one run."""
    xml = tmp_path / "map.xml.gz"
    xml.write_bytes(gzip.compress(urlset("/1", "/2").replace("{base}", "https://a.test").encode()))
    txt = tmp_path / "list.txt"
    txt.write_text("https://b.test/3\nhttps://b.test/4\n")
    result = await run_cli("dump", str(xml), str(txt), "--format", "txt")
    assert result.code == 0, result.err
    assert sorted(result.out.splitlines()) == [
        "https://a.test/1", "https://a.test/2", "https://b.test/3", "https://b.test/4",
    ]  # fmt: skip


# --------------------------------------------------------------------------- -o


async def test_output_file_written_whole(basic: tuple[str, Site], tmp_path: Path) -> None:
    """-o FILE gets every record, stdout stays empty, no temporary file is left."""
    base, _ = basic
    out = tmp_path / "urls.jsonl"
    result = await run_cli("dump", base + "/", "-o", str(out))
    assert result.code == 0 and result.out == ""
    assert len([json.loads(line) for line in out.read_text().splitlines()]) == 5
    assert os.listdir(tmp_path) == ["urls.jsonl"]
    assert str(out) in result.err


def hanging_sitemap(sent: asyncio.Event, release: asyncio.Event, count: int = 3000) -> Any:
    """A handler streaming ``count`` entries, then stalling until ``release``."""

    async def handler(request: web.Request) -> web.StreamResponse:
        base = str(request.url.origin())
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        head, _, _ = urlset().partition("\n</urlset>")
        await response.write(head.replace("{base}", base).encode())
        entries = "".join(f"<url><loc>{base}/page/{i}</loc></url>\n" for i in range(count))
        await response.write(entries.encode())
        sent.set()
        await release.wait()
        return response

    return handler


@pytest.fixture
async def hanging(aiohttp_server: ServerFactory) -> Any:
    """A site whose only sitemap streams 3,000 entries and then stalls."""
    sent, release = asyncio.Event(), asyncio.Event()
    site = Site(handlers={"/slow.xml": hanging_sitemap(sent, release)})
    base = await serve(aiohttp_server, site)
    yield base, sent
    release.set()


async def start_cli(
    *args: str, env: dict[str, str] | None = None, **kwargs: Any
) -> asyncio.subprocess.Process:
    """Start the command without waiting for it."""
    return await asyncio.create_subprocess_exec(
        SITEMAP_READER, *args, env=env or cli_env(), stdin=asyncio.subprocess.DEVNULL, **kwargs
    )


@pytest.mark.parametrize("previous", [None, "previous complete content\n"])
async def test_killed_run_leaves_no_half_file(
    hanging: tuple[str, asyncio.Event], tmp_path: Path, previous: str | None
) -> None:
    """SIGKILL mid-run: the -o file is absent, or still exactly its previous content."""
    base, sent = hanging
    out = tmp_path / "out.jsonl"
    if previous is not None:
        out.write_text(previous)
    proc = await start_cli("dump", base + "/slow.xml", "-o", str(out), "--no-progress")
    await asyncio.wait_for(sent.wait(), 20)
    proc.kill()
    assert await proc.wait() == -signal.SIGKILL
    if previous is None:
        assert not out.exists()
    else:
        assert out.read_text() == previous


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "txt"])
async def test_ctrl_c_prints_summary_and_keeps_whole_lines(
    hanging: tuple[str, asyncio.Event], fmt: str
) -> None:
    """SIGINT mid-run: exit 130, summary on stderr, every record the summary counts
    written whole. The signal lands while a batch of ~200 KB is being written to a full
    pipe; with PYTHONUNBUFFERED=1 (as in many containers) the text layer used to drop
    what the interrupted write did not take, and the next batch began mid-line."""
    base, sent = hanging
    proc = await start_cli(
        "dump",
        base + "/slow.xml",
        "--format",
        fmt,
        env=cli_env(PYTHONUNBUFFERED="1"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await asyncio.wait_for(sent.wait(), 20)
    assert proc.stdout is not None
    first = await asyncio.wait_for(proc.stdout.readline(), 20)  # records are flowing
    proc.send_signal(signal.SIGINT)
    rest, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 130
    lines = (first + rest).decode().splitlines()
    if fmt == "csv":
        lines = [row[0] for row in csv.reader(lines[1:])]
    elif fmt == "jsonl":
        lines = [json.loads(line)["url"] for line in lines]
    assert lines == [f"{base}/page/{i}" for i in range(len(lines))]
    text = err.decode()
    written = re.search(r"([\d,]+) written", text)
    assert written is not None and int(written[1].replace(",", "")) == len(lines)
    assert "interrupted" in text and "sitemaps:" in text and "Traceback" not in text


async def test_ctrl_c_leaves_output_file_untouched(
    hanging: tuple[str, asyncio.Event], tmp_path: Path
) -> None:
    """SIGINT with -o: the previous file stays, the temporary file is removed."""
    base, sent = hanging
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    proc = await start_cli(
        "dump", base + "/slow.xml", "-o", str(out), stderr=asyncio.subprocess.PIPE
    )
    await asyncio.wait_for(sent.wait(), 20)
    proc.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 130, err
    assert out.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.txt"]


async def test_closed_stdout_ends_quietly(aiohttp_server: ServerFactory) -> None:
    """'| head -n 3': three lines out, exit 0, and no traceback on stderr."""
    entries = [f"/p/{i}" for i in range(5000)]
    site = Site({"/big.xml": urlset(*entries)})
    base = await serve(aiohttp_server, site)
    script = (
        f"'{SITEMAP_READER}' dump {base}/big.xml | head -n 3; echo status=${{PIPESTATUS[0]}} >&2"
    )
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", script, env=cli_env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert len(out.decode().splitlines()) == 3
    text = err.decode()
    assert "Traceback" not in text and "Exception ignored" not in text and "Error" not in text
    assert "status=0" in text


async def test_closed_stdout_on_a_big_index_stops_quietly(
    aiohttp_server: ServerFactory,
) -> None:
    """'| head -n 3' on an index of 40 children: three lines, and nothing on stderr (a
    closed pipe is a stop the user asked for, as with any Unix filter: issue 34 row 11;
    the summary lines it used to print went on after the pipe closed)."""
    children = [f"/c/{n}.xml" for n in range(40)]
    docs: dict[str, Doc | str] = {"/index.xml": index(*children)}
    docs.update({path: urlset(*(f"{path}/{i}" for i in range(400))) for path in children})
    base = await serve(aiohttp_server, Site(docs))
    script = f"'{SITEMAP_READER}' dump {base}/index.xml --format txt | head -n 3"
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", script, env=cli_env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert len(out.decode().splitlines()) == 3
    assert err.decode() == ""


# --------------------------------------------------------------------------- summary, exits


async def test_summary_names_failed_sitemap_and_siblings_survive(
    aiohttp_server: ServerFactory,
) -> None:
    """A 404 child and a cut-off child fail; the summary names them; siblings' URLs stay."""
    site = Site(
        {
            "/robots.txt": Doc("Sitemap: {base}/index.xml\n", content_type="text/plain"),
            "/index.xml": index("/one.xml", "/missing.xml", "/cut.xml", "/two.xml"),
            "/one.xml": urlset("/1a", "/1b"),
            "/two.xml": urlset("/2a"),
            "/cut.xml": urlset("/3a").replace("</urlset>", "<url><loc>"),
        }
    )
    base = await serve(aiohttp_server, site)
    result = await run_cli("dump", base, "--format", "txt")
    assert result.code == 0
    assert sorted(paths(result.out.splitlines(), base)) == ["/1a", "/1b", "/2a", "/3a"]
    assert "sitemaps: 3 ok, 2 failed, 0 skipped" in result.err
    assert re.search(rf"failed: {re.escape(base)}/missing.xml \(.*404", result.err)
    assert f"failed: {base}/cut.xml (" in result.err
    assert re.search(r"URLs: 4 emitted, 0 duplicate, 0 out of scope", result.err)
    assert re.search(r"read: \d+\.\d\d MB in \d+\.\d\d s", result.err)


async def test_summary_counts_duplicates_and_out_of_scope(basic: tuple[str, Site]) -> None:
    """The summary counts the foreign URL as out of scope and the MB read."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "--format", "txt")
    assert "sitemaps: 1 ok, 0 failed, 0 skipped" in result.err
    assert "URLs: 5 emitted, 0 duplicate, 1 out of scope; 5 written" in result.err


async def test_nothing_discovered_exits_1_with_one_line(aiohttp_server: ServerFactory) -> None:
    """No robots.txt and no sitemap anywhere: exit 1, a one-line reason and the verdict."""
    base = await serve(aiohttp_server, Site())
    result = await run_cli("dump", base + "/", "--no-progress")
    assert result.code == 1
    assert result.out == ""
    reason, verdict = result.err.strip().splitlines()
    assert reason.startswith("sitemap-reader: nothing discovered")
    assert verdict == "sitemap-reader: verdict: absent"


async def test_unreachable_target_exits_1(unused_tcp_port: int) -> None:
    """A port nobody listens on: exit 1 with a reason, no traceback."""
    result = await run_cli("dump", f"http://127.0.0.1:{unused_tcp_port}/", "-q")
    assert result.code == 1
    assert "nothing discovered" in result.err and "Traceback" not in result.err


async def test_missing_local_file_is_a_usage_error(tmp_path: Path) -> None:
    """A local path that does not exist is a bad argument: exit 2, one line naming it."""
    missing = str(tmp_path / "nope.xml")
    result = await run_cli("dump", missing)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert missing in result.err


async def test_quiet_and_verbose(aiohttp_server: ServerFactory) -> None:
    """-q prints nothing on stderr; -v adds one line per problem of every sitemap."""
    doc = urlset("<url><loc>{base}/a</loc><priority>high</priority></url>")
    base = await serve(aiohttp_server, Site({"/s.xml": doc}))
    quiet = await run_cli("dump", base + "/s.xml", "-q")
    assert quiet.code == 0 and quiet.err == "" and len(quiet.jsonl()) == 1
    verbose = await run_cli("dump", base + "/s.xml", "-v")
    assert re.search(rf"problem: {re.escape(base)}/s.xml \S+", verbose.err)


# --------------------------------------------------------------------------- crawl knobs


async def test_user_agent_robots_and_guess_switches(basic: tuple[str, Site]) -> None:
    """--user-agent is sent; --no-robots skips robots.txt; --no-guess skips probing."""
    base, site = basic
    result = await run_cli("dump", base + "/", "--user-agent", "TestBot/9", "--format", "txt")
    assert result.code == 0
    assert {ua for _, ua in site.requests} == {"TestBot/9"}
    site.requests.clear()
    nothing = await run_cli("dump", base + "/", "--no-robots", "--no-guess")
    assert nothing.code == 1 and site.paths() == []
    guessed = await run_cli("dump", base + "/", "--no-robots", "--format", "txt")
    assert "/robots.txt" not in site.paths() and "/sitemap.xml" in site.paths()
    assert sorted(paths(guessed.out.splitlines(), base)) == sorted(BASIC_PATHS)


async def test_scope_any_keeps_foreign_urls(basic: tuple[str, Site]) -> None:
    """--scope any keeps the foreign URL that the default site scope drops."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "--scope", "any", "--format", "txt")
    assert "https://elsewhere.example.org/x" in result.out.splitlines()
    host = await run_cli("dump", base + "/", "--scope", "host", "--format", "txt")
    assert "https://elsewhere.example.org/x" not in host.out.splitlines()


async def test_strict_applies_the_location_rule(aiohttp_server: ServerFactory) -> None:
    """--strict drops URLs outside the sitemap's directory; the default keeps them."""
    doc = urlset("/catalog/in", "/elsewhere/out")
    base = await serve(aiohttp_server, Site({"/catalog/sitemap.xml": doc}))
    lenient = await run_cli("dump", base + "/catalog/sitemap.xml", "--format", "txt")
    assert len(lenient.out.splitlines()) == 2
    strict = await run_cli("dump", base + "/catalog/sitemap.xml", "--strict", "--format", "txt")
    assert paths(strict.out.splitlines(), base) == ["/catalog/in"]


async def test_depth_and_sitemap_budgets(aiohttp_server: ServerFactory) -> None:
    """--max-depth 0 skips the children of an index; --max-sitemaps caps the fetches."""
    site = Site(
        {
            "/index.xml": index("/one.xml", "/two.xml", "/three.xml"),
            "/one.xml": urlset("/1"),
            "/two.xml": urlset("/2"),
            "/three.xml": urlset("/3"),
        }
    )
    base = await serve(aiohttp_server, site)
    shallow = await run_cli("dump", base + "/index.xml", "--max-depth", "0", "--format", "txt")
    assert shallow.out == "" and "3 skipped" in shallow.err
    assert "limits hit: limit-depth" in shallow.err  # without -v too
    site.requests.clear()
    capped = await run_cli(
        "dump", base + "/index.xml", "--max-sitemaps", "2", "--concurrency", "1",
        "--per-host", "1", "--format", "txt",
    )  # fmt: skip
    assert len(site.paths()) == 2 and len(capped.out.splitlines()) == 1


async def test_timeout_ends_a_hung_sitemap(hanging: tuple[str, asyncio.Event]) -> None:
    """--timeout bounds a sitemap that stalls: records so far kept, it fails, exit 0."""
    base, _ = hanging
    result = await run_cli("dump", base + "/slow.xml", "--timeout", "1", "--format", "txt")
    assert result.code == 0
    assert len(result.out.splitlines()) == 3000
    assert f"failed: {base}/slow.xml (" in result.err


# --------------------------------------------------------------------------- tree


async def test_tree_text(aiohttp_server: ServerFactory) -> None:
    """tree prints an indented tree: status, format, URLs per node, the failure marked."""
    site = Site(
        {
            "/robots.txt": Doc("Sitemap: {base}/index.xml\n", content_type="text/plain"),
            "/index.xml": index("/one.xml", "/missing.xml"),
            "/one.xml": urlset("/1a", "/1b"),
        }
    )
    base = await serve(aiohttp_server, site)
    result = await run_cli("tree", base + "/")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith(f"{base}/robots.txt")
    one = next(line for line in lines if "/one.xml" in line)
    assert re.search(r"[└├]── ", one) and "200 urlset" in one and "2 URLs" in one
    missing = next(line for line in lines if "/missing.xml" in line)
    assert "404" in missing and "FAILED" in missing
    assert lines.index(one) > next(i for i, s in enumerate(lines) if "/index.xml" in s)


async def test_tree_json(aiohttp_server: ServerFactory) -> None:
    """tree --json prints the run as JSON: targets, tree of nodes, stats."""
    site = Site({"/index.xml": index("/one.xml"), "/one.xml": urlset("/1a", "/1b")})
    base = await serve(aiohttp_server, site)
    result = await run_cli("tree", base + "/index.xml", "--json")
    assert result.code == 0
    data = json.loads(result.out)
    root = data["tree"][0]
    assert root["format"] == "sitemapindex"
    assert root["children"][0]["url"] == base + "/one.xml"
    assert root["children"][0]["urls"] == 2
    assert data["stats"]["sitemaps_ok"] == 2


# --------------------------------------------------------------------------- terminals


async def test_non_tty_stderr_has_no_control_characters(basic: tuple[str, Site]) -> None:
    """With stderr a pipe: no progress animation, no colour, nothing but text lines."""
    base, _ = basic
    result = await run_cli("dump", base + "/", "-v")
    assert result.err and not CONTROL.search(result.err)


def read_pty(fd: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closes it."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


async def run_with_tty_stderr(*args: str, **env: str) -> tuple[int, bytes, str]:
    """Run the command with stderr on a pseudo-terminal (100 columns); code, out, tty text."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        proc = await start_cli(
            *args, env=cli_env(**env), stdout=asyncio.subprocess.PIPE, stderr=slave
        )
        os.close(slave)
        reading = asyncio.create_task(asyncio.to_thread(read_pty, master))
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
        tty = await asyncio.wait_for(reading, 30)
    finally:
        os.close(master)
    assert proc.returncode is not None
    return proc.returncode, out, tty.decode()


def pty_chunks(fd: int, loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue[bytes]) -> None:
    """Read a pseudo-terminal until its last writer closes it, handing each chunk to the
    event loop as it arrives (an empty chunk at the end)."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side is closed
            chunk = b""
        loop.call_soon_threadsafe(chunks.put_nowait, chunk)
        if not chunk:
            return


async def test_tty_shows_progress_then_summary(aiohttp_server: ServerFactory) -> None:
    """stderr on a terminal: a live progress line with counts while a sitemap stalls, then
    the summary, in colour. The stall ends (the body cut: a failure, in red) once the test
    has seen the line, so no timing is involved."""
    sent, release = asyncio.Event(), asyncio.Event()
    site = Site(
        {"/index.xml": index("/slow.xml", "/gone.xml")},
        handlers={"/slow.xml": hanging_sitemap(sent, release)},
    )
    base = await serve(aiohttp_server, site)
    live = re.compile(
        r"\d/\d sitemaps \|.*\| [1-9][\d,]* URLs \([\d,]+/s\), \d+\.\d MB \(\d+\.\d MB/s\)"
    )
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        proc = await start_cli(
            "dump", base + "/index.xml", stdout=asyncio.subprocess.PIPE, stderr=slave
        )
        os.close(slave)
        reading = asyncio.create_task(
            asyncio.to_thread(pty_chunks, master, asyncio.get_running_loop(), chunks)
        )
        out_task = asyncio.create_task(proc.communicate())
        seen = b""
        while not live.search(seen.decode(errors="replace")):  # redrawn with live counts
            chunk = await asyncio.wait_for(chunks.get(), 30)
            assert chunk, f"no live progress line before the end: {seen!r}"
            seen += chunk
        release.set()
        out, _ = await asyncio.wait_for(out_task, 30)
        while chunk := await asyncio.wait_for(chunks.get(), 30):
            seen += chunk
        await reading
    finally:
        release.set()
        os.close(master)
    assert proc.returncode == 0 and len(out.splitlines()) == 3000
    tail = seen.decode().replace("\r\n", "\n").rpartition("\r")[2]
    assert "sitemaps: 1 ok, 2 failed" in tail and "\x1b[31mfailed: " in tail, tail


async def test_tty_no_color(aiohttp_server: ServerFactory) -> None:
    """NO_COLOR on a terminal: progress still shown, no escape sequences at all."""
    site = Site({"/index.xml": index("/one.xml", "/gone.xml"), "/one.xml": urlset("/1")})
    base = await serve(aiohttp_server, site)
    code, _, tty = await run_with_tty_stderr("dump", base + "/index.xml", NO_COLOR="1")
    assert code == 0 and "sitemaps |" in tty
    assert "\x1b" not in tty and "failed:" in tty


async def test_tree_of_a_host_and_port_says_each_thing_once(basic: tuple[str, Site]) -> None:
    """``tree 127.0.0.1:PORT`` (a plain-HTTP server: https cannot connect, http answers):
    no "https-unavailable" problem on the tree unless -v, and the verdict once (on
    standard output, the tree's own; not again in the summary)."""
    base, _ = basic
    bare = base.removeprefix("http://")
    plain = await run_cli("tree", bare, "--no-progress")
    assert plain.code == 0, plain.err
    assert "https-unavailable" not in plain.out + plain.err
    assert plain.out.splitlines()[-1] == "verdict: ok (6 URLs listed)"  # one off the site
    assert "verdict" not in plain.err
    verbose = await run_cli("tree", bare, "--no-progress", "-v")
    assert "! https-unavailable: " in verbose.out
