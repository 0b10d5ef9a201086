"""Attack corpus: the parser must refuse what defusedxml refuses, and never read or fetch.

Each payload (XXE with file:// and http://127.0.0.1, billion laughs, quadratic blowup,
parameter entities, unparsed entities, an external DTD, XInclude, a stylesheet PI), plain
and gzipped, goes through our ``SitemapParser`` and through
``defusedxml.ElementTree.fromstring``. A real HTTP server on 127.0.0.1 counts every request
(there must be none), and a temporary file holds a marker string that must never show up
in any output. Gzip bombs (1 GiB decompressed, built in ~0.3 s) must end quickly on a
limit with little memory.
"""

from __future__ import annotations

import gzip
import struct
import threading
import time
import tracemalloc
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.etree.ElementTree import ParseError

import defusedxml.ElementTree as defused_et
import pytest
from defusedxml import DefusedXmlException, EntitiesForbidden

from sitemap_reader.parse.parser import SitemapParser
from sitemap_reader.records import SitemapRef, UrlRecord

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SITEMAP_URL = "https://example.com/sitemap.xml"
PAYLOAD = "PAYLOAD-FROM-THE-NETWORK"
CHUNK = 65536
REFUSED = {"xml-entities-forbidden", "xml-external-forbidden"}


# --------------------------------------------------------------------------- fixtures


class CountingServer:
    """An HTTP server on 127.0.0.1 (own thread) that counts every request it gets."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                body = f'<!ENTITY ext "{PAYLOAD}"><!ENTITY xxe "{PAYLOAD}">'.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/xml-dtd")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture(scope="module")
def running_server() -> Iterator[CountingServer]:
    """One request counter for the module (shutting one down takes up to 0.5 s)."""
    counting = CountingServer()
    counting.thread.start()
    yield counting
    counting.httpd.shutdown()
    counting.httpd.server_close()
    counting.thread.join()


@pytest.fixture
def server(running_server: CountingServer) -> CountingServer:
    """The module's request counter, with its count reset for this test."""
    running_server.hits.clear()
    return running_server


@pytest.fixture
def secret(tmp_path: Path) -> tuple[Path, str]:
    """A local file holding a unique marker string, and that marker."""
    marker = f"SECRET-{uuid.uuid4().hex}"
    path = tmp_path / "secret.txt"
    path.write_text(marker)
    return path, marker


# --------------------------------------------------------------------------- payloads


def urlset(doctype: str, loc: str) -> bytes:
    """A sitemap with one good URL and one carrying ``loc``, after ``doctype``."""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n{doctype}\n'
        f'<urlset xmlns="{NS}">\n'
        f"<url><loc>https://example.com/good</loc></url>\n"
        f"<url><loc>{loc}</loc></url>\n"
        "</urlset>\n"
    ).encode()


def billion_laughs() -> str:
    """Ten levels of ten-fold entity expansion (10**10 'lol's)."""
    decls = ['<!ENTITY lol0 "lol">']
    decls += [f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 11)]
    return "<!DOCTYPE urlset [" + "".join(decls) + "]>"


@dataclass(frozen=True)
class Attack:
    """One payload and how defusedxml and our parser must react to it."""

    body: bytes
    #: What defusedxml.ElementTree.fromstring raises; None when it parses the document.
    defused: type[Exception] | None
    #: Whether our parser must refuse the document (a fatal xml-*-forbidden problem).
    refused: bool


def attacks(base: str, secret: Path) -> dict[str, Attack]:
    """The attack corpus, pointed at the counting server and the secret file."""
    file_url = secret.as_uri()
    return {
        "xxe-file": Attack(
            urlset(f'<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "{file_url}">]>', "https://x.com/&xxe;"),
            EntitiesForbidden,
            refused=True,
        ),
        "xxe-http": Attack(
            urlset(f'<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "{base}/xxe">]>', "https://x.com/&xxe;"),
            EntitiesForbidden,
            refused=True,
        ),
        "xxe-public-id": Attack(
            urlset(
                f'<!DOCTYPE urlset [<!ENTITY xxe PUBLIC "-//A//B" "{base}/pub">]>',
                "https://x.com/&xxe;",
            ),
            EntitiesForbidden,
            refused=True,
        ),
        "billion-laughs": Attack(
            urlset(billion_laughs(), "https://x.com/&lol10;"), EntitiesForbidden, refused=True
        ),
        "quadratic-blowup": Attack(
            urlset(
                '<!DOCTYPE urlset [<!ENTITY a "' + "A" * 100_000 + '">]>',
                "https://x.com/" + "&a;" * 20_000,
            ),
            EntitiesForbidden,
            refused=True,
        ),
        "parameter-entity-http": Attack(
            urlset(
                f'<!DOCTYPE urlset [<!ENTITY % pe SYSTEM "{base}/pe.dtd"> %pe;]>',
                "https://x.com/&ext;",
            ),
            EntitiesForbidden,
            refused=True,
        ),
        "parameter-entity-file": Attack(
            urlset(
                f'<!DOCTYPE urlset [<!ENTITY % pe SYSTEM "{file_url}"> %pe;]>', "https://x.com/p"
            ),
            EntitiesForbidden,
            refused=True,
        ),
        "unparsed-entity": Attack(
            urlset(
                f'<!DOCTYPE urlset [<!NOTATION gif SYSTEM "image/gif">'
                f'<!ENTITY u SYSTEM "{base}/u.gif" NDATA gif>]>',
                "https://x.com/u",
            ),
            EntitiesForbidden,
            refused=True,
        ),
        "external-dtd-with-reference": Attack(
            urlset(f'<!DOCTYPE urlset SYSTEM "{base}/ext.dtd">', "https://x.com/&ext;"),
            ParseError,  # defusedxml does not load the DTD: "undefined entity"
            refused=False,
        ),
        "external-dtd": Attack(
            urlset(f'<!DOCTYPE urlset SYSTEM "{base}/ext.dtd">', "https://x.com/plain"),
            None,  # a DTD reference alone is harmless: parsed, never fetched
            refused=False,
        ),
        "xinclude": Attack(
            urlset(
                "",
                f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{file_url}"'
                ' parse="text"/>',
            ),
            None,  # XInclude is never processed
            refused=False,
        ),
        "stylesheet-pi": Attack(
            urlset(
                f'<?xml-stylesheet type="text/xsl" href="{base}/style.xsl"?>', "https://x.com/s"
            ),
            None,
            refused=False,
        ),
    }


ATTACK_NAMES = [
    "xxe-file",
    "xxe-http",
    "xxe-public-id",
    "billion-laughs",
    "quadratic-blowup",
    "parameter-entity-http",
    "parameter-entity-file",
    "unparsed-entity",
    "external-dtd-with-reference",
    "external-dtd",
    "xinclude",
    "stylesheet-pi",
]


@dataclass(frozen=True)
class Run:
    """What our parser did with one body."""

    items: list[UrlRecord | SitemapRef]
    codes: set[str]
    fatal: set[str]
    complete: bool
    done: bool
    seconds: float
    text: str  # every emitted string, for payload searches


def feed_all(body: bytes, chunk: int = CHUNK) -> Run:
    """Feed ``body`` in chunks (stopping once the parser is done) and close; ``seconds`` is
    the CPU time it took (a busy machine stretches the wall clock, not the work)."""
    started = time.thread_time()
    parser = SitemapParser(SITEMAP_URL)
    items: list[UrlRecord | SitemapRef] = []
    for start in range(0, len(body), chunk):
        items += parser.feed(body[start : start + chunk])
        if parser.done:
            break
    items += parser.close()
    seconds = time.thread_time() - started
    text = repr(items) + repr(parser.problems)
    return Run(
        items=items,
        codes={p.code for p in parser.problems},
        fatal={p.code for p in parser.problems if p.fatal},
        complete=parser.complete,
        done=parser.done,
        seconds=seconds,
        text=text,
    )


# --------------------------------------------------------------------------- entity attacks


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", ATTACK_NAMES)
def test_attack_is_refused_like_defusedxml(
    name: str, gzipped: bool, server: CountingServer, secret: tuple[Path, str]
) -> None:
    """Each payload: defusedxml's verdict, ours matches; no payload, no fetch, no file read."""
    path, marker = secret
    attack = attacks(server.base, path)[name]
    # defusedxml gets the plain document (it does not gunzip); we get the raw body.
    if attack.defused is None:
        assert defused_et.fromstring(attack.body) is not None
    else:
        with pytest.raises(attack.defused):
            defused_et.fromstring(attack.body)
    body = gzip.compress(attack.body) if gzipped else attack.body
    run = feed_all(body)
    assert run.seconds < 1.0
    assert PAYLOAD not in run.text
    assert marker not in run.text
    assert "lollol" not in run.text and "AAAAAAAA" not in run.text
    if attack.refused:
        assert run.fatal & REFUSED, run.codes
        assert run.complete is False and run.done is True
        assert run.items == []
    else:
        assert "https://example.com/good" in [i.url for i in run.items]
    assert server.hits == []


def test_defusedxml_exceptions_are_the_defused_family() -> None:
    """The entity refusals we mirror are defusedxml's own DefusedXmlException subclasses."""
    assert issubclass(EntitiesForbidden, DefusedXmlException)


@pytest.mark.parametrize("name", [n for n in ATTACK_NAMES if n != "quadratic-blowup"])
def test_attack_fed_byte_by_byte(
    name: str, server: CountingServer, secret: tuple[Path, str]
) -> None:
    """The same payloads one byte at a time: the same verdict, still nothing fetched."""
    path, marker = secret
    attack = attacks(server.base, path)[name]
    whole = feed_all(attack.body)
    bytewise = feed_all(attack.body, chunk=1)
    assert (bytewise.codes, bytewise.complete) == (whole.codes, whole.complete)
    assert [i.url for i in bytewise.items] == [i.url for i in whole.items]
    assert marker not in bytewise.text
    assert server.hits == []


def test_attack_after_records_keeps_earlier_records_only() -> None:
    """10,000 undeclared entity references in one loc: handled fast, the good record kept."""
    body = urlset("", "https://x.com/" + "&undefined;" * 10_000)
    run = feed_all(body)
    assert run.seconds < 1.0
    assert "https://example.com/good" in [i.url for i in run.items]
    for item in run.items:
        assert item.url.startswith("https://")


# --------------------------------------------------------------------------- gzip bombs


def gzip_bomb(prefix: bytes, fill: bytes, mib: int) -> bytes:
    """A valid one-member gzip of ``prefix`` + ``mib`` MiB of ``fill`` bytes, built fast.

    A full flush resets the deflate state, so every further MiB compresses to the very
    same bytes: compress one MiB once and repeat it. Only the CRC walks the whole input.
    """
    block = fill * (1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = deflate.compress(prefix) + deflate.flush(zlib.Z_FULL_FLUSH)
    unit = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.flush()
    crc = zlib.crc32(prefix)
    for _ in range(mib):
        crc = zlib.crc32(block, crc)
    size = (len(prefix) + mib * len(block)) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + head + unit * mib + tail + struct.pack("<II", crc, size)


def test_gzip_bomb_builder_is_valid() -> None:
    """The fast bomb builder makes real gzip (checked on a small instance)."""
    small = gzip_bomb(b"<x>", b"\0", 3)
    assert gzip.decompress(small) == b"<x>" + b"\0" * (3 << 20)


XML_PREFIX = (
    f'<?xml version="1.0"?>\n<urlset xmlns="{NS}"><url><loc>https://example.com/1</loc></url>'
)


@pytest.mark.parametrize(
    ("name", "prefix", "fill", "code"),
    [
        ("xml-whitespace", XML_PREFIX.encode(), b" ", "limit-bytes"),
        ("text-newlines", b"https://example.com/1\n", b"\n", "limit-bytes"),
        ("zeros", b"", b"\0", None),
    ],
)
def test_gzip_bomb_ends_fast_with_little_memory(
    name: str, prefix: bytes, fill: bytes, code: str | None
) -> None:
    """1 GiB behind 1 MB of gzip: ends < 3 s, tracemalloc peak < 20 MiB, a fatal problem."""
    bomb = gzip_bomb(prefix, fill, 1024)
    run = feed_all(bomb)  # timed without tracemalloc, which slows Python code down
    assert run.seconds < 3.0
    assert run.complete is False
    assert run.fatal, run.codes
    if code is not None:
        assert code in run.fatal
        assert [i.url for i in run.items] == ["https://example.com/1"]
    else:
        assert run.items == []  # a NUL body is not a sitemap: refused at once
    tracemalloc.start()
    try:
        traced = feed_all(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert traced.codes == run.codes
    assert peak < 20 * 1024 * 1024


def test_gzip_bomb_stops_consuming_input() -> None:
    """Once the byte limit hits, ``done`` is set and later chunks are not needed."""
    bomb = gzip_bomb(XML_PREFIX.encode(), b" ", 1024)
    parser = SitemapParser(SITEMAP_URL)
    fed = 0
    for start in range(0, len(bomb), CHUNK):
        parser.feed(bomb[start : start + CHUNK])
        fed += CHUNK
        if parser.done:
            break
    assert parser.done
    assert fed < len(bomb) // 2
    assert parser.bytes_out <= 64 * 1024 * 1024 + CHUNK * 8


def test_double_gzip_bomb_is_capped() -> None:
    """A gzip bomb gzipped again (two layers, both legal): still capped by limit-bytes."""
    inner = gzip_bomb(XML_PREFIX.encode(), b" ", 1024)
    run = feed_all(gzip.compress(inner, compresslevel=1))
    assert run.seconds < 3.0
    assert "limit-bytes" in run.fatal


def test_triple_gzip_is_refused() -> None:
    """A third gzip layer is an attack: refused with limit-gzip-layers."""
    body = gzip.compress(gzip.compress(gzip.compress(XML_PREFIX.encode() + b"</urlset>")))
    run = feed_all(body)
    assert "limit-gzip-layers" in run.fatal
    assert run.items == []
