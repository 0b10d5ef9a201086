"""The client ladder (issue 42, point 3): the two clients send different TLS fingerprints,
the browser one a browser's; ``client="auto"`` reads a blocked target once more with the
browser client and says so; without the browser extra the option names the extra.

The fetcher's other promises are the fetch, retry, credential, network, guard and
incremental tests, each run with both clients (the ``client`` fixture).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import ssl
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from tests.conftest import NO_BROWSER, browser_extra
from tests.crawl.crawl_kit import (
    Reply,
    Site,
    ThreadedServer,
    collect,
    node_by_url,
    tree,
    urlset,
)
from tests.helpers import self_signed

needs_browser = pytest.mark.skipif(not browser_extra(), reason=NO_BROWSER)

# --------------------------------------------------------------------------- ClientHello

#: TLS extension numbers (IANA) the assertions name.
SERVER_NAME, GROUPS, POINT_FORMATS, ALPN = 0, 10, 11, 16
COMPRESS_CERTIFICATE, PSK_MODES, APPLICATION_SETTINGS, APPLICATION_SETTINGS_NEW = (
    27,
    45,
    17513,
    17613,
)
ENCRYPTED_CLIENT_HELLO = 0xFE0D
#: The cipher suites Chrome offers (since Chrome 70), GREASE left out, in its order: the
#: value JA3/JA4 databases list for every Chrome of the last years.
CHROME_CIPHERS = (
    0x1301, 0x1302, 0x1303, 0xC02B, 0xC02F, 0xC02C, 0xC030, 0xCCA9, 0xCCA8, 0xC013, 0xC014,
    0x009C, 0x009D, 0x002F, 0x0035,
)  # fmt: skip


def grease(value: int) -> bool:
    """A GREASE value (RFC 8701): 0x?A?A with both bytes equal."""
    return value & 0x0F0F == 0x0A0A and value >> 8 == value & 0xFF


@dataclass(frozen=True)
class Hello:
    """What a ClientHello offers, read from the raw record."""

    version: int
    ciphers: tuple[int, ...]
    extensions: tuple[int, ...]
    groups: tuple[int, ...] = ()
    point_formats: tuple[int, ...] = ()
    alpn: tuple[str, ...] = ()

    def ja3(self) -> str:
        """JA3's string with GREASE left out and the extensions sorted (browsers shuffle
        their order on every connection since Chrome 110: sorted, the digest is stable)."""

        def part(values: tuple[int, ...]) -> str:
            return "-".join(str(v) for v in values if not grease(v))

        sorted_ext = tuple(sorted(self.extensions))
        fields = (self.ciphers, sorted_ext, self.groups, self.point_formats)
        return ",".join([str(self.version), *(part(f) for f in fields)])

    def digest(self) -> str:
        return hashlib.md5(self.ja3().encode(), usedforsecurity=False).hexdigest()


def parse_hello(record: bytes) -> Hello:
    """A ClientHello from its TLS record (RFC 8446 section 4.1.2)."""
    assert record[0] == 0x16, "not a handshake record"
    body = record[5:]
    assert body[0] == 0x01, "not a ClientHello"
    at = 4
    version = struct.unpack_from("!H", body, at)[0]
    at += 2 + 32
    at += 1 + body[at]  # session id
    (size,) = struct.unpack_from("!H", body, at)
    ciphers = struct.unpack_from(f"!{size // 2}H", body, at + 2)
    at += 2 + size
    at += 1 + body[at]  # compression methods
    (size,) = struct.unpack_from("!H", body, at)
    at, end = at + 2, at + 2 + size
    extensions: list[int] = []
    found: dict[int, bytes] = {}
    while at < end:
        kind, length = struct.unpack_from("!HH", body, at)
        extensions.append(kind)
        found[kind] = body[at + 4 : at + 4 + length]
        at += 4 + length
    groups = found.get(GROUPS, b"\0\0")
    points = found.get(POINT_FORMATS, b"\0")
    alpn: list[str] = []
    names = found.get(ALPN, b"\0\0")[2:]
    while names:
        alpn.append(names[1 : 1 + names[0]].decode())
        names = names[1 + names[0] :]
    return Hello(
        version,
        tuple(ciphers),
        tuple(extensions),
        struct.unpack_from(f"!{(len(groups) - 2) // 2}H", groups, 2),
        tuple(points[1:]),
        tuple(alpn),
    )


@dataclass
class HelloServer:
    """A TLS server on 127.0.0.1 (a self-signed certificate made in-process) that keeps
    the raw ClientHello of every connection, then completes the handshake if the client
    does. Serves at most ``limit`` connections, each bounded by a timeout."""

    context: ssl.SSLContext
    limit: int = 8
    hellos: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(20)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        for _ in range(self.limit):
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.stopping:
                conn.close()
                return
            with conn:
                conn.settimeout(10)
                try:
                    self.hellos.append(_peek_record(conn))
                    with self.context.wrap_socket(conn, server_side=True):
                        pass
                except (OSError, ValueError):
                    continue  # the client refused our certificate: the hello is kept

    def close(self) -> None:
        """Stop: a connection of our own wakes the accepting thread."""
        self.stopping = True
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
            pass
        self.thread.join(30)
        self.sock.close()


def _peek_record(conn: socket.socket) -> bytes:
    """The first TLS record, read without taking it (the handshake reads it after)."""
    wanted = 5
    data = b""
    while len(data) < wanted:
        data = conn.recv(wanted, socket.MSG_PEEK)
        if not data:
            raise ValueError("closed before a ClientHello")
        if len(data) >= 5:
            wanted = 5 + struct.unpack_from("!H", data, 3)[0]
    return data[:wanted]


@pytest.fixture
def hello_server(tmp_path: Path) -> Iterator[HelloServer]:
    server = HelloServer(self_signed(tmp_path))
    yield server
    server.close()


async def _hello_of(server: HelloServer, client: str) -> tuple[Hello, str]:
    """The ClientHello the reader's client sent, and the failure the node records."""
    before = len(server.hellos)
    url = f"https://127.0.0.1:{server.port}/sitemap.xml"
    run = await tree(url, client=client, retries=0)
    assert len(server.hellos) == before + 1
    return parse_hello(server.hellos[-1]), run.tree[0].problems[0].message


@needs_browser
async def test_the_two_clients_send_different_fingerprints(hello_server: HelloServer) -> None:
    """aiohttp sends OpenSSL's ClientHello; the browser client sends Chrome's: GREASE in
    its cipher suites and extensions, Chrome's fifteen cipher suites in Chrome's order,
    ALPN h2 then http/1.1, certificate compression, ALPS and an ECH extension. Both
    refuse the self-signed certificate (the browser client verifies too)."""
    ours, refused = await _hello_of(hello_server, "aiohttp")
    browser, refused_too = await _hello_of(hello_server, "browser")
    assert "certificate invalid" in refused and "certificate invalid" in refused_too

    assert ours.digest() != browser.digest()
    assert not any(grease(v) for v in (*ours.ciphers, *ours.extensions))
    assert ours.alpn in ((), ("http/1.1",))

    assert grease(browser.ciphers[0]) and any(grease(v) for v in browser.extensions)
    assert tuple(c for c in browser.ciphers if not grease(c)) == CHROME_CIPHERS
    assert browser.alpn == ("h2", "http/1.1")
    wanted = {COMPRESS_CERTIFICATE, PSK_MODES, ENCRYPTED_CLIENT_HELLO}  # no SNI: an IP
    assert wanted <= set(browser.extensions)
    assert {APPLICATION_SETTINGS, APPLICATION_SETTINGS_NEW} & set(browser.extensions)
    assert any(grease(g) for g in browser.groups)


async def test_the_hello_parser_reads_a_known_record(hello_server: HelloServer) -> None:
    """The parser on Python's own ClientHello: the ALPN it was told to offer, and no
    GREASE (OpenSSL sends none)."""
    context = ssl.create_default_context()
    context.set_alpn_protocols(["h2", "http/1.1"])
    address = ("127.0.0.1", hello_server.port)
    with socket.create_connection(address, timeout=10) as raw, pytest.raises(ssl.SSLError):
        context.wrap_socket(raw, server_hostname="localhost")
    hello = parse_hello(hello_server.hellos[-1])
    assert hello.alpn == ("h2", "http/1.1")
    assert SERVER_NAME in hello.extensions and not any(grease(c) for c in hello.ciphers)


# --------------------------------------------------------------------------- the ladder

CHALLENGE = b"<html><head><title>Just a moment...</title></head><body>challenge-platform</body>"


def fingerprint_wall(site: Site, paths: list[str], *, everyone: bool = False) -> None:
    """Cloudflare-like challenges on ``paths`` for clients without a browser's client
    hints (a stand-in, on plain HTTP, for a check of the TLS fingerprint), or for
    ``everyone``."""

    def handler(reply: Reply) -> object:
        async def answer(request: web.Request) -> web.StreamResponse:
            if everyone or "sec-ch-ua" not in request.headers:
                return web.Response(
                    status=403,
                    body=CHALLENGE,
                    headers={"cf-mitigated": "challenge", "Server": "cloudflare"},
                    content_type="text/html",
                )
            return web.Response(body=reply.body, content_type="application/xml")

        return answer

    for path in paths:
        route = site.routes[path]
        assert isinstance(route, Reply)
        site.add(path, handler(route))  # type: ignore[arg-type]


@needs_browser
async def test_auto_reads_a_blocked_target_again_with_the_browser_client(site: Site) -> None:
    """client=auto: robots.txt and the sitemap behind a fingerprint wall; aiohttp is
    blocked, the ladder's second attempt reads the URLs, and the verdict says both."""
    urls = [site.url(f"/p{i}") for i in range(3)]
    site.add("/robots.txt", f"Sitemap: {site.url('/s.xml')}\n", content_type="text/plain")
    site.add("/s.xml", urlset(urls))
    fingerprint_wall(site, ["/robots.txt", "/s.xml"])
    records, run = await collect(site.url("/"), client="auto")
    assert [r.url for r in records] == urls
    verdict = run.verdicts[site.url("/")]
    assert verdict.kind == "ok" and verdict.ladder is not None
    assert verdict.ladder.kind == "blocked"
    assert verdict.ladder.evidence[0].code == "cloudflare-challenge"
    assert verdict.to_dict()["ladder"]["kind"] == "blocked"
    assert site.hits["/robots.txt"] == 2  # once with each client
    assert node_by_url(run, site.url("/s.xml")).ok


@needs_browser
async def test_auto_climbs_once_and_a_wall_for_everyone_stays_blocked(site: Site) -> None:
    """A wall that turns away the browser client too: one more attempt, no third; the
    verdict stays blocked (never absent), the first attempt's kept beside it."""
    site.add("/robots.txt", "User-agent: *\n", content_type="text/plain")
    fingerprint_wall(site, ["/robots.txt"], everyone=True)
    run = await tree(site.url("/"), client="auto", twin=False)
    verdict = run.verdicts[site.url("/")]
    assert verdict.kind == "blocked" and verdict.ladder is not None
    assert verdict.ladder.kind == "blocked"
    assert site.hits["/robots.txt"] == 2


@needs_browser
@pytest.mark.parametrize("client", ["auto", "aiohttp"])
async def test_no_climb_without_a_block(site: Site, client: str) -> None:
    """A site with no sitemap (404s) is absent with one attempt, whatever the client; a
    wall for aiohttp only: client=aiohttp stays blocked, auto reads it again and finds the
    site has no sitemap (absent, the block kept as the first verdict)."""
    run = await tree(site.url("/"), client=client, twin=False)
    verdict = run.verdicts[site.url("/")]
    assert verdict.kind == "absent" and verdict.ladder is None
    assert site.hits["/robots.txt"] == 1
    site.add("/robots.txt", "User-agent: *\n", content_type="text/plain")
    fingerprint_wall(site, ["/robots.txt"])
    run = await tree(site.url("/"), client=client, twin=False)
    verdict = run.verdicts[site.url("/")]
    if client == "aiohttp":
        assert verdict.kind == "blocked" and verdict.ladder is None
    else:
        assert verdict.kind == "absent" and verdict.ladder is not None
        assert verdict.ladder.kind == "blocked"


# --------------------------------------------------------------------------- the extra


@pytest.mark.parametrize("client", ["browser", "auto"])
def test_without_the_extra_the_option_names_it(client: str) -> None:
    """curl_cffi missing: the reader and the CLI refuse the option with the line that
    installs the browser extra; aiohttp needs nothing."""
    hide = "import sys; sys.modules['curl_cffi'] = None; "
    code = (
        hide + "from sitemap_reader import SitemapReader\n"
        "from sitemap_reader.errors import MissingExtraError\n"
        "SitemapReader(client='aiohttp')\n"
        "try:\n"
        f"    SitemapReader(client={client!r})\n"
        "except MissingExtraError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "client='browser' needs curl_cffi" in done.stdout
    assert "[browser]" in done.stdout and "pip install" in done.stdout
    cli = hide + "from sitemap_reader.cli import main; sys.exit(main())"
    args = [sys.executable, "-c", cli, "tree", "--client", client, "http://127.0.0.1:9/"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "[browser]" in done.stderr and "curl_cffi" in done.stderr


def test_scrapy_refuses_the_option_and_names_its_own_way() -> None:
    """Scrapy downloads with its own handlers: SITEMAP_READER_CLIENT is refused, the
    message saying where a browser's fingerprint goes there."""
    pytest.importorskip("scrapy")
    from scrapy.settings import Settings

    from sitemap_reader.errors import UsageError
    from sitemap_reader.scrapy import options_from_settings

    with pytest.raises(UsageError) as caught:
        options_from_settings(Settings({"SITEMAP_READER_CLIENT": "browser"}))
    assert str(caught.value) == (
        "Scrapy settings: SITEMAP_READER_CLIENT is not a setting: Scrapy downloads with its "
        "own handlers: DOWNLOAD_HANDLERS (a browser's fingerprint: scrapy-impersonate's handler)"
    )


@needs_browser
def test_batch_summary_rows_show_the_ladder() -> None:
    """discover_batches with client=auto: the summary row's verdict is the second
    attempt's, its evidence ends with the first attempt's block, marked as the ladder's."""
    pytest.importorskip("pyarrow")
    from sitemap_reader.engines.batch import discover_batches

    served = Site()
    with ThreadedServer(served) as site:
        urls = [site.url(f"/p{i}") for i in range(2)]
        site.add("/robots.txt", f"Sitemap: {site.url('/s.xml')}\n", content_type="text/plain")
        site.add("/s.xml", urlset(urls))
        fingerprint_wall(site, ["/robots.txt"])
        rows = [
            row
            for batch in discover_batches([site.url("/")], allow_private=True, client="auto")
            for row in batch.to_pylist()
        ]
    summary = next(r for r in rows if r["kind"] == "summary")
    assert summary["verdict"] == "ok" and summary["urls"] == 2
    evidence = json.loads(summary["evidence"])
    assert evidence[-1]["ladder"] == "blocked"
    assert evidence[-1]["code"] == "cloudflare-challenge"
