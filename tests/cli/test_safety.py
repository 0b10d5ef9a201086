"""Site text reaches spreadsheets and terminals only made safe (issue 18, points 2 and 6).

- CSV: a cell of site text that a spreadsheet would run as a formula gets a leading ``'``
  (OWASP), unless ``--csv-raw``.
- Terminals: every line of ``dump`` and ``tree`` for humans (summary, failures, "not
  finished", problems with ``-v``, the text tree, usage errors) shows site text through
  ``safe_text.printable``: no ESC, BEL, C1 control or line separator reaches stdout or
  stderr raw, whatever robots.txt, a text sitemap or a feed holds.
- JSONL: no record spans several ``str.splitlines()`` lines; human text has every line
  break collapsed to a space.
- A local file whose name is not UTF-8 is read, and its name printed escaped.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import given
from hypothesis import strategies as st

from sitemap_reader.cli.output import CsvWriter, JsonlWriter
from sitemap_reader.parse.extensions import human_text
from tests.conftest_cli import Doc, Result, Site, run_cli
from tests.helpers import parse_all_ways, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]

#: What must never reach a terminal raw: C0 controls but tab and newline, DEL, the C1
#: controls, the Unicode line and paragraph separators, lone surrogates.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
#: ESC [ (CSI: colours, cursor moves), OSC 8 (a hidden link) and BEL, as sites may send.
CSI, OSC8, BEL = "\x1b[31m", "\x1b]8;;http://evil.example/\x1b\\", "\x07"
FORMULAS = ('=HYPERLINK("http://evil.example/","x")', "+1+1", "-2+3", "@SUM(A1)")


def _assert_clean(result: Result) -> None:
    """Neither stream holds a raw control character (nor a traceback)."""
    for name, text in (("stdout", result.out), ("stderr", result.err)):
        found = RAW_CONTROL.search(text)
        assert found is None, f"{name} holds {found.group()!r}: {text!r}"
    assert "Traceback" not in result.err


def _rss(*titles: str, base: str = "https://example.com") -> str:
    items = "".join(
        f"<item><title>{title}</title><link>{base}/t/{n}</link></item>"
        for n, title in enumerate(titles)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel>{items}</channel></rss>'


# --------------------------------------------------------------------------- CSV


def test_csv_writer_neutralises_every_site_text_cell() -> None:
    """CsvWriter: url, sitemap, title and JSON cells that start a formula get a ``'``;
    numbers (a negative score) stay numbers; raw=True writes them as they are."""
    (record,) = parse_all_ways(urlset("<url><loc>https://example.com/a</loc></url>")).urls
    hostile = dataclasses.replace(record, url="=1+1", sitemap="@x", score=-0.5)
    for raw, expect in ((False, ["'=1+1", "'@x", "-0.5"]), (True, ["=1+1", "@x", "-0.5"])):
        out = io.StringIO()
        CsvWriter(out, raw=raw).write(hostile)
        header, row = csv.reader(io.StringIO(out.getvalue()))
        cells = dict(zip(header, row, strict=True))
        assert [cells["url"], cells["sitemap"], cells["score"]] == expect


async def test_csv_titles_neutralised_by_default(tmp_path: Path) -> None:
    """dump --format csv of a feed whose titles start formulas: every title cell starts
    with ``'``; --csv-raw gives the titles as the site wrote them."""
    feed = tmp_path / "feed.xml"
    feed.write_text(_rss(*(t.replace("&", "&amp;").replace('"', "&quot;") for t in FORMULAS)))
    for extra, expect in (((), [f"'{t}" for t in FORMULAS]), (("--csv-raw",), list(FORMULAS))):
        result = await run_cli("dump", str(feed), "--format", "csv", *extra)
        assert result.code == 0, result.err
        rows = list(csv.DictReader(io.StringIO(result.out)))
        assert [row["title"] for row in rows] == expect
        assert [row["url"] for row in rows] == [f"https://example.com/t/{n}" for n in range(4)]


# --------------------------------------------------------------------------- terminals


@pytest.fixture
async def hostile_site(aiohttp_server: ServerFactory) -> str:
    """robots.txt with escape sequences in its Sitemap values; a text sitemap with escapes
    in its lines; a feed with C1 controls and line separators in its titles; a sitemap
    that breaks after a title full of escapes; the origin."""
    robots = (
        "User-agent: *\n"
        "Sitemap: {base}/feed.xml\n"
        "Sitemap: {base}/list.txt\n"
        f"Sitemap: {OSC8}click{OSC8}{BEL}\n"
        "Sitemap: {base}/broken.xml\n"
        f"Sitemap: {{base}}/gone{CSI}.xml{BEL}\n"
    )
    feed = _rss(
        "a&#x9b;31mred&#x85;b", "line&#x2028;sep&#x2029;par", f"ok{chr(0x85)}x", base="{base}"
    )
    site = Site(
        {
            "/robots.txt": Doc(robots, content_type="text/plain"),
            "/feed.xml": Doc(feed),
            "/list.txt": Doc(
                f"{{base}}/ok\n{CSI}\x1b]0;title{BEL}\n{{base}}/a{CSI}b{BEL}\n{OSC8}x\n",
                content_type="text/plain",
            ),
            "/broken.xml": Doc(
                '<?xml version="1.0"?><rss version="2.0"><channel><item>'
                "<title>&#x9b;2J&#x85;</title><link>{base}/b</link></item><item><title>\x1b"
            ),
        }
    )
    server = await aiohttp_server(site.app())
    return str(server.make_url("")).rstrip("/")


@pytest.mark.parametrize(
    "argv",
    [
        ["dump", "-v"],
        ["dump", "--format", "csv", "-v"],
        ["dump", "--format", "txt"],
        ["tree"],
        ["tree", "--json"],
        ["dump", "--max-urls", "1"],
    ],
    ids=["jsonl-verbose", "csv-verbose", "txt", "tree", "tree-json", "stopped"],
)
async def test_no_raw_control_reaches_the_terminal(hostile_site: str, argv: list[str]) -> None:
    """ESC [, OSC 8 and BEL in robots.txt Sitemap values and text-sitemap lines, C1
    controls and line separators in feed titles, a broken sitemap: nothing raw on stdout
    or stderr, and the run still reads the good sitemaps."""
    command, *options = argv
    result = await run_cli(command, hostile_site + "/", *options)
    assert result.code == 0, result.err
    _assert_clean(result)
    if command == "dump" and "--max-urls" not in options:
        assert "failed: " in result.err  # the broken and the missing sitemap are named
    if options == ["-v"]:
        urls = [record["url"] for record in result.jsonl()]
        assert hostile_site + "/ok" in urls and hostile_site + "/t/0" in urls
        titles = [record.get("title") for record in result.jsonl()]
        assert "a 31mred b" in titles and "line sep par" in titles and "ok x" in titles


async def test_usage_error_echoing_a_name_is_escaped(tmp_path: Path) -> None:
    """A missing local file whose name holds ESC and BEL: one escaped line, exit 2."""
    name = str(tmp_path / f"no{CSI}such{BEL}.xml")
    result = await run_cli("dump", name)
    assert result.code == 2
    _assert_clean(result)
    assert result.err.splitlines() == [
        f"sitemap-reader dump: error: no such file: {tmp_path}/no\\x1b[31msuch\\x07.xml"
    ]


@pytest.mark.parametrize("command", ["dump", "tree"])
async def test_argparse_error_echoing_an_argument_is_escaped(command: str) -> None:
    """An unknown argument pasted from site text (ESC, BEL, OSC 8): the usage error shows
    it escaped, exit 2."""
    result = await run_cli(command, "example.invalid", f"--x{CSI}{OSC8}{BEL}")
    assert result.code == 2
    _assert_clean(result)
    assert "unrecognized arguments: --x\\x1b[31m\\x1b]8;;http://evil.example/" in result.err


async def test_output_name_with_escapes_is_escaped_in_the_summary(tmp_path: Path) -> None:
    """-o FILE whose name holds ESC: the file is written, the summary names it escaped."""
    sitemap = tmp_path / "s.xml"
    sitemap.write_bytes(urlset("<url><loc>https://example.com/a</loc></url>"))
    out = tmp_path / f"out{CSI}.jsonl"
    result = await run_cli("dump", str(sitemap), "-o", str(out))
    assert result.code == 0, result.err
    _assert_clean(result)
    assert f"written to {tmp_path}/out\\x1b[31m.jsonl" in result.err
    assert json.loads(out.read_text())["url"] == "https://example.com/a"


# --------------------------------------------------------------------------- JSONL


BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


@given(st.text(st.sampled_from(f" \t{BREAKS}ab\u00a0é\x1b\x9b"), max_size=12))
def test_human_text_is_one_printable_line(text: str) -> None:
    """human_text: no line break splitlines() knows and no control is left; runs of them
    and of spaces are one space; other text (a no-break space) is kept."""
    value = human_text(text)
    expected = re.sub(f"[ \t{BREAKS}\x1b\x9b]+", " ", text).strip(" ") or None
    assert value == expected
    assert value is None or (len(value.splitlines()) == 1 and not RAW_CONTROL.search(value))


def test_human_text_fields_collapse_unicode_line_breaks() -> None:
    """Every human-text field (image title and caption, video title, description,
    uploader, tags, news title and name) collapses NEL, U+2028, U+2029 and C1 controls;
    fed whole, in chunks and byte by byte."""
    odd = "one&#x85;two\u2028three&#x2029;four&#x9b;five"
    body = urlset(
        '<url xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
        'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
        'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
        "<loc>https://example.com/v</loc>"
        f"<image:image><image:loc>https://example.com/i.jpg</image:loc>"
        f"<image:title>{odd}</image:title><image:caption>{odd}</image:caption></image:image>"
        "<video:video><video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
        f"<video:title>{odd}</video:title><video:description>{odd}</video:description>"
        f"<video:uploader>{odd}</video:uploader><video:tag>{odd}</video:tag></video:video>"
        f"<news:news><news:publication><news:name>{odd}</news:name>"
        "<news:language>en</news:language></news:publication>"
        f"<news:title>{odd}</news:title></news:news></url>"
    )
    (record,) = parse_all_ways(body).urls
    clean = "one two three four five"
    (image,) = record.images
    (video,) = record.videos
    assert record.news is not None
    assert [image.title, image.caption, video.title, video.description, video.uploader] == [
        clean
    ] * 5
    assert video.tags == (clean,)
    assert [record.news.title, record.news.publication_name] == [clean, clean]


def test_feed_titles_collapse_unicode_line_breaks() -> None:
    """RSS and Atom titles: NEL, U+2028 and U+2029 (raw or as references) are spaces;
    fed whole, in chunks and byte by byte."""
    rss = _rss("a&#x2028;b\u2029c\u0085d").encode()
    atom = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        "<title>a\u2028b&#x85;c&#x2029;d</title><link href='https://example.com/e'/></entry></feed>"
    ).encode()
    for body in (rss, atom):
        (record,) = parse_all_ways(body, "https://example.com/feed").urls
        assert record.title == "a b c d"


def test_urls_carry_no_line_break_after_normalisation() -> None:
    """A <loc> or an image:loc holding NEL, U+2028, U+2029 or a C1 control is
    percent-encoded by normalisation: no URL holds a raw line break or control; fed whole,
    in chunks and byte by byte."""
    odd = "a\u2028b&#x85;c\u2029d&#x9b;e"
    body = urlset(
        '<url xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        f"<loc>https://example.com/{odd}</loc><image:image>"
        f"<image:loc>https://example.com/{odd}.jpg</image:loc></image:image></url>"
    )
    (record,) = parse_all_ways(body).urls
    assert record.url == "https://example.com/a%E2%80%A8b%C2%85c%E2%80%A9d%C2%9Be"
    assert record.images[0].loc == record.url + ".jpg"


def test_jsonl_record_is_always_one_line() -> None:
    """JsonlWriter: a record whose field that is no human text (here its sitemap) holds
    every line break splitlines() knows and a C1 control is still one line, free of raw
    controls, and reads back equal."""
    (record,) = parse_all_ways(urlset("<url><loc>https://example.com/a</loc></url>")).urls
    odd = dataclasses.replace(record, sitemap=f"https://example.com/s{BREAKS}\x9b\x7f.xml")
    out = io.StringIO()
    JsonlWriter(out).write(odd)
    (line,) = out.getvalue().splitlines()
    assert json.loads(line)["sitemap"] == odd.sitemap
    assert RAW_CONTROL.search(line) is None


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("command", ["dump", "tree"])
async def test_local_file_name_not_utf8(tmp_path: Path, command: str) -> None:
    """A local sitemap named caf\\xe9.xml (Latin-1 bytes): read, its name escaped in the
    tree, no traceback; a missing one: one escaped line, exit 2."""
    folder = os.fsencode(tmp_path)
    name = folder + b"/caf\xe9.xml"
    with open(name, "wb") as handle:
        handle.write(urlset("<url><loc>https://example.com/a</loc></url>"))
    result = await run_cli(command, os.fsdecode(name))
    assert result.code == 0, result.err
    _assert_clean(result)
    if command == "dump":
        assert result.urls() == ["https://example.com/a"]
    else:
        assert result.out.startswith(f"{tmp_path}/caf\\xe9.xml  [")
    missing = await run_cli(command, os.fsdecode(folder + b"/gon\xe9.xml"))
    assert missing.code == 2
    _assert_clean(missing)
    assert missing.err.splitlines() == [
        f"sitemap-reader {command}: error: no such file: {tmp_path}/gon\\xe9.xml"
    ]


@pytest.mark.parametrize("argv", [["check"], ["check", "--json"]], ids=["text", "json"])
async def test_check_prints_no_raw_control(aiohttp_server: ServerFactory, argv: list[str]) -> None:
    """A C1 control (U+009B, a terminal's CSI) in a robots.txt Sitemap value that is no
    URL: check, as text or JSON, shows it escaped (``check --json`` printed it raw), and
    the JSON still decodes to the value robots.txt gave."""
    site = Site(
        {
            "/robots.txt": Doc(
                f"User-agent: *\nSitemap: {chr(0x9B)}2Jnot-a-url\n",
                content_type="text/plain",
            ),
        }
    )
    server = await aiohttp_server(site.app())
    base = str(server.make_url("")).rstrip("/")
    result = await run_cli(*argv, base + "/")
    assert result.code in (1, 2, 3), result.err
    _assert_clean(result)
    if argv == ["check", "--json"]:
        assert chr(0x9B) in json.dumps(json.loads(result.out), ensure_ascii=False)
