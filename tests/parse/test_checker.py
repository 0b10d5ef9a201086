"""The protocol checker (sitemap_reader.parse.checker) and the ``check`` command.

Time bounds on the checker are on the thread's CPU time (:func:`time.thread_time`): a
machine busy with other work stretches the wall clock, not the checker's work.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.checker import (
    BodyChecker,
    Finding,
    SiteCheck,
    check_robots,
    w3c_datetime,
)
from tests.conftest_cli import Doc, Site, index, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
BASE = "https://example.com/sitemap.xml"
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def findings(body: bytes, url: str = BASE, step: int | None = None) -> list[Finding]:
    """Check a body whole (or fed ``step`` bytes at a time)."""
    checker = BodyChecker(url, now=NOW)
    if step is None:
        checker.feed(body)
    else:
        for start in range(0, len(body), step):
            checker.feed(body[start : start + step])
    return checker.close()


def codes(found: list[Finding]) -> list[tuple[str, int | None, int]]:
    return [(f.code, f.line, f.count) for f in found]


def doc(*entries: str, root: str = "urlset", ns: str = NS) -> bytes:
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<{root} xmlns="{ns}">' if ns else f"<{root}>",
        *entries,
        f"</{root}>",
    ]
    return "\n".join(lines).encode()


CASES = [
    (doc("<url><loc>https://example.com/a</loc></url>"), []),
    (doc("<url><loc>https://example.com/a</loc></url>", ns="http://wrong/"), [("namespace", 2, 1)]),
    (doc("<url><loc>https://example.com/a</loc></url>", ns=""), [("namespace", 2, 1)]),
    (doc("<url><loc>https://other.org/a</loc></url>"), [("other-host", 3, 1)]),
    (doc(f"<url><loc>https://example.com/{'x' * 2100}</loc></url>"), [("url-too-long", 3, 1)]),
    (doc("<url><loc>/relative</loc></url>"), [("url-not-absolute", 3, 1)]),
    (doc("<url><loc>https://example.com/a b</loc></url>"), [("url-not-encoded", 3, 1)]),
    (doc("<url><loc>https://example.com/é</loc></url>"), [("url-not-encoded", 3, 1)]),
    (doc("<url><loc>https://example.com/?a='1'</loc></url>"), [("not-escaped", 3, 1)]),
    (doc("<url><loc>https://example.com/?a=&apos;1&apos;</loc></url>"), []),
    (doc("<url><loc>https://example.com/?a=1&b=2</loc></url>"), [("xml-syntax", 3, 1)]),
    (
        doc(
            "<url><loc>https://example.com/a</loc><lastmod>2024-1-5</lastmod></url>",
            "<url><loc>https://example.com/b</loc><lastmod>2024-01-05 10:00</lastmod></url>",
            "<url><loc>https://example.com/c</loc><lastmod>2024-02-30</lastmod></url>",
        ),
        [("bad-date", 3, 3)],
    ),
    (
        doc(
            "<url><loc>https://example.com/a</loc><lastmod>2024</lastmod></url>",
            "<url><loc>https://example.com/b</loc><lastmod>2024-05</lastmod></url>",
            "<url><loc>https://example.com/c</loc><lastmod>2024-05-06T10:30Z</lastmod></url>",
            "<url><loc>https://example.com/d</loc>"
            "<lastmod>2024-05-06T10:30:15.5+02:00</lastmod></url>",
        ),
        [],
    ),
    (
        doc("<url><loc>https://example.com/a</loc><lastmod>2027-01-01</lastmod></url>"),
        [("future-lastmod", 3, 1)],
    ),
    (
        doc("<url><loc>https://example.com/a</loc><changefreq>Daily</changefreq></url>"),
        [("bad-changefreq", 3, 1)],
    ),
    (
        doc(
            "<url><loc>https://example.com/a</loc><priority>1.5</priority></url>",
            "<url><loc>https://example.com/b</loc><priority>high</priority></url>",
            "<url><loc>https://example.com/c</loc><priority>0.8</priority></url>",
        ),
        [("bad-priority", 3, 2)],
    ),
    (doc("<url><lastmod>2024-01-01</lastmod></url>"), [("missing-loc", 3, 1)]),
    (doc("<sitemap><loc>https://example.com/s.xml</loc></sitemap>"), [("wrong-entry", 3, 1)]),
    (doc(), [("no-entries", None, 1)]),
    (doc("<url><loc>https://example.com/a</loc>", "</urlset>"), [("xml-syntax", 4, 1)]),
    (b"<html><body>hi</body></html>", [("not-a-sitemap", 1, 1)]),
    (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        f'<urlset xmlns="{NS}"><url><loc>https://example.com/\xe9</loc></url></urlset>'.encode(
            "latin-1"
        ),
        [("not-utf8", 1, 2), ("url-not-encoded", 2, 1)],
    ),
    (
        doc("<sitemap><loc>https://other.org/s.xml</loc></sitemap>", root="sitemapindex"),
        [("other-host", 3, 1)],
    ),
    (
        b"https://example.com/a\n\nhttps://example.com/b c\n/rel\n",
        [("url-not-encoded", 3, 1), ("url-not-absolute", 4, 1)],
    ),
]


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_rules_with_lines(body: bytes, expected: list[tuple[str, int | None, int]]) -> None:
    """Each rule is reported once per file with the line of its first case and a count."""
    found = codes(findings(body))
    # "not-utf8" can be reported by the declaration and by the bytes: compare as sets.
    assert sorted(found, key=str) == sorted(expected, key=str)


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_rules_byte_at_a_time(body: bytes, expected: list[tuple[str, int | None, int]]) -> None:
    """Fed one byte at a time, a body gives the same findings as fed whole."""
    assert findings(body, step=1) == findings(body)


def test_gzipped_body_is_checked_and_sized() -> None:
    """A gzipped sitemap is checked after gunzip; the uncompressed size is counted."""
    body = doc("<url><loc>https://example.com/a</loc><priority>9</priority></url>")
    checker = BodyChecker(BASE, now=NOW)
    checker.feed(gzip.compress(body))
    assert codes(checker.close()) == [("bad-priority", 3, 1)]
    assert checker.bytes_out == len(body)


@pytest.mark.parametrize("step", [None, 1, 7])
def test_a_gzip_file_sent_gzip_encoded_is_checked_as_the_reader_reads_it(
    step: int | None,
) -> None:
    """A .xml.gz sent with Content-Encoding: gzip arrives gzipped twice: both layers come
    off, as the reader takes them off, and the findings are the document's own (the
    checker used to see the inner gzip bytes: not-a-sitemap, not-utf8)."""
    body = doc("<url><loc>https://example.com/a</loc><priority>9</priority></url>")
    twice = gzip.compress(gzip.compress(body))
    assert codes(findings(twice, step=step)) == [("bad-priority", 3, 1)]


def test_a_third_gzip_layer_is_a_limit() -> None:
    """Three layers are more than the reader takes off: a check-limit finding, as the
    reader's limit-gzip-layers."""
    body = doc("<url><loc>https://example.com/a</loc></url>")
    found = findings(gzip.compress(gzip.compress(gzip.compress(body))))
    assert [f.code for f in found] == ["check-limit"]
    assert "gzip layers" in found[0].message


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


def test_over_50000_urls_and_line_of_the_first_extra() -> None:
    """The 50,001st entry is named with its line."""
    entries = [f"<url><loc>https://example.com/{i}</loc></url>" for i in range(50_002)]
    assert codes(findings(doc(*entries))) == [("too-many-urls", 50_003, 1)]


def test_over_50_mb_uncompressed() -> None:
    """More than 52,428,800 bytes uncompressed is a finding (gzip makes it cheap to send)."""
    pad = " " * 1_000_000  # character data: no markup bound applies
    entries = [pad] * 53 + ["<url><loc>https://example.com/a</loc></url>"]
    checker = BodyChecker(BASE, now=NOW)
    checker.feed(gzip.compress(doc(*entries), compresslevel=1))
    assert [f.code for f in checker.close()] == ["too-large"]


def test_entity_declarations_are_refused_fast() -> None:
    """A billion-laughs body is refused at its first declaration, in well under a second."""
    lol = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + b"".join(
            f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">'.encode() for i in range(1, 10)
        ).replace(b"&lol0;", b"&lol;")
        + b']><urlset xmlns="'
        + NS.encode()
        + b'"><url><loc>https://example.com/&lol9;</loc></url></urlset>'
    )
    started = time.thread_time()
    found = findings(lol)
    assert time.thread_time() - started < 1.0
    assert [f.code for f in found] == ["xml-forbidden"]


def test_deep_nesting_is_bounded() -> None:
    """A million nested elements stop at the nesting bound with one finding."""
    body = doc("<a>" * 1_000_000)
    started = time.thread_time()
    found = findings(body)
    assert time.thread_time() - started < 5.0
    depth = Limits().max_xml_depth
    assert [(f.code, f.message) for f in found] == [
        ("check-limit", f"elements nested more than {depth} deep; the rest was not checked")
    ]


def test_feeds_are_not_held_to_the_sitemap_rules() -> None:
    """An RSS feed is a valid sitemap form: no findings about it."""
    body = b'<rss version="2.0"><channel><item><link>x</link></item></channel></rss>'
    checker = BodyChecker(BASE, now=NOW)
    checker.feed(body)
    assert checker.close() == [] and checker.format == "rss"


def test_huge_token_ends_at_the_parsers_token_bound() -> None:
    """A 4 MiB attribute fed in 64 KiB chunks ends at max_xml_token, as in the parser."""
    body = doc(f'<url a="{"x" * (4 << 20)}"><loc>https://example.com/a</loc></url>')
    started = time.thread_time()
    found = findings(body, step=65536)
    assert time.thread_time() - started < 5.0
    assert [(f.code, f.line) for f in found] == [("check-limit", 3)]
    assert "longer than 65536 bytes" in found[0].message


def test_w3c_datetime() -> None:
    """W3C Datetime forms parse to UTC; other ISO-ish forms do not."""
    assert w3c_datetime("2024-05-06T10:30+02:00") == datetime(2024, 5, 6, 8, 30, tzinfo=UTC)
    assert w3c_datetime("2024") == datetime(2024, 1, 1, tzinfo=UTC)
    for bad in ("2024-05-06T10:30", "20240506", "2024-05-06T25:00Z", "May 6, 2024"):
        assert w3c_datetime(bad) is None, bad


def test_robots_sitemap_lines_must_be_absolute() -> None:
    """Relative Sitemap: lines in robots.txt are findings with their line."""
    body = b"User-agent: *\nSitemap: https://example.com/s.xml\nsitemap: /a.xml\nSitemap: b.xml\n"
    assert codes(check_robots(body, "r")) == [("robots-relative-sitemap", 3, 2)]


def test_duplicates_across_files_name_the_first() -> None:
    """A URL listed again in a later file is a duplicate there, naming the first file."""
    site = SiteCheck(now=NOW)
    first = site.checker("https://example.com/one.xml")
    first.feed(doc("<url><loc>https://example.com/a</loc></url>"))
    first.close()
    second = site.checker("https://example.com/two.xml")
    second.feed(doc("<url><loc>https://example.com/b</loc></url>",
                    "<url><loc>https://example.com/a</loc></url>"))  # fmt: skip
    second.close()
    assert site.duplicates("https://example.com/one.xml") == []
    (dupe,) = site.duplicates("https://example.com/two.xml")
    assert (dupe.code, dupe.line) == ("duplicate-url", 4)
    assert "first in https://example.com/one.xml" in dupe.message


# --------------------------------------------------------------------------- the command


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


def test_gzip_bombs_are_bounded() -> None:
    """Zeros stop at once as binary; a urlset of 80 MiB of blanks stops at the 64 MiB cap."""
    import zlib

    for head, expected in ((b"", ["not-a-sitemap"]), (doc()[:-10], ["check-limit", "too-large"])):
        packer = zlib.compressobj(1, zlib.DEFLATED, 31)
        filler = (b"\0" if not head else b" ") * (1 << 20)
        bomb = packer.compress(head) + b"".join(packer.compress(filler) for _ in range(80))
        bomb += packer.flush()
        assert len(bomb) < 1_000_000
        started = time.thread_time()
        checker = BodyChecker(BASE, now=NOW)
        for start in range(0, len(bomb), 65536):
            checker.feed(bomb[start : start + 65536])
        found = checker.close()
        assert time.thread_time() - started < 10.0
        assert [f.code for f in found] == expected
        assert checker.bytes_out <= 64 * 1024 * 1024 + 256 * 1024


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


def test_every_rule_has_a_severity() -> None:
    """Each rule names one of the three severities and a meaning."""
    from sitemap_reader.parse.checker import RULES, SEVERITIES

    assert all(rule.severity in SEVERITIES and rule.meaning for rule in RULES.values())


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


def test_messages_in_plain_words() -> None:
    """An unescaped & says so; a raw quote in <loc> is quoted as text, not a bytes repr."""
    (amp,) = findings(doc("<url><loc>https://example.com/?a=1&b=2</loc></url>"))
    assert amp.message.startswith("an unescaped & (write it as &amp;)")
    (quote,) = findings(doc("<url><loc>https://example.com/?a='1'</loc></url>"))
    assert (
        quote.message == "https://example.com/?a='1' has ' \" or > not written &apos; &quot; &gt;"
    )


def test_examples_keep_the_earliest_occurrences() -> None:
    """With examples=N a rule keeps its N earliest lines and the full count, however fed."""
    dates = [
        f"<url><loc>https://example.com/{i}</loc><lastmod>x{i}</lastmod></url>" for i in range(5)
    ]
    body = doc(*dates)
    whole, bytewise = BodyChecker(BASE, now=NOW, examples=3), BodyChecker(BASE, now=NOW, examples=3)
    whole.feed(body)
    for start in range(len(body)):
        bytewise.feed(body[start : start + 1])
    (found,) = whole.close()
    assert bytewise.close() == [found]
    assert found.count == 5 and [line for line, _ in found.examples] == [3, 4, 5]
    assert [text for _, text in found.examples] == [
        f"'x{i}' is not a W3C Datetime" for i in range(3)
    ]


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
