"""The hostile test site: every bad thing a web server can do to a sitemap reader.

Each ``add_*`` function installs one case on a :class:`~tests.crawl.crawl_kit.Site`
(a real aiohttp app on 127.0.0.1) under its own path prefix, always next to good
siblings: the case's index lists a good urlset (``good_urls(site, case)``) besides the
hostile child, so a test can check that nothing good is lost. Big bodies are generated
while they are sent (a 1 GiB gzip bomb is about 1 MB on the wire and never exists in
memory, here or in the reader); the server writes at its own pace and stops quietly when
the reader hangs up.

:class:`SilentServer` is a raw asyncio server that accepts connections and never answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import struct
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator

from aiohttp import web

from tests.crawl.crawl_kit import SITEMAP_NS, Reply, Site, index, urlset

GiB = 1 << 30
MiB = 1 << 20
#: Bytes of filler per repeated deflate block of a bomb.
BOMB_BLOCK = MiB
URLSET_OPEN = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'.encode()
URLSET_CLOSE = b"</urlset>\n"
SOFT_404 = (
    b"<!DOCTYPE html><html><head><title>Page not found</title></head><body>"
    b"<h1>Sorry, nothing here</h1><a href='/'>home</a> <a href='/about'>about</a>"
    b"</body></html>"
)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HostileSite(Site):
    """A crawl-kit :class:`Site` that can answer unknown paths with a ``fallback``."""

    def __init__(self) -> None:
        super().__init__()
        self.fallback: Handler | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        known = request.path_qs in self.routes or request.path in self.routes
        if self.fallback is None or known:
            return await super()._handle(request)
        self.hits[request.path_qs] += 1
        return await self.fallback(request)


# --------------------------------------------------------------------------- builders


def good_urls(site: Site, case: str, count: int = 3) -> list[str]:
    """The page URLs of the good sibling of ``case``."""
    return [site.url(f"/{case}/page-{n}") for n in range(count)]


def add_good(site: Site, case: str, count: int = 3) -> str:
    """Serve the good sibling urlset of ``case``; its path."""
    path = f"/{case}/good.xml"
    site.add(path, urlset(good_urls(site, case, count)))
    return path


def add_index(site: Site, case: str, children: Iterable[str], name: str = "index.xml") -> str:
    """Serve an index of ``children`` (paths on the site) plus the good sibling; its URL."""
    listed = [site.url(add_good(site, case)), *(site.url(c) for c in children)]
    site.add(f"/{case}/{name}", index(listed))
    return site.url(f"/{case}/{name}")


def entries(urls: Iterable[str]) -> bytes:
    """``<url>`` elements for ``urls``."""
    return "".join(f"<url><loc>{u}</loc></url>\n" for u in urls).encode()


# --------------------------------------------------------------------------- gzip


def _gzip_header() -> bytes:
    # magic, deflate, no flags, mtime 0, no extra flags, OS unknown (RFC 1952 §2.3)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


@functools.lru_cache(maxsize=16)
def _crc_of_repeats(fill: bytes, count: int, start: int) -> int:
    crc = start
    for _ in range(count):
        crc = zlib.crc32(fill, crc)
    return crc


def gzip_member(prefix: bytes, fill: bytes, repeat: int, suffix: bytes) -> Iterator[bytes]:
    """One gzip member of ``prefix + fill * repeat + suffix``, produced piece by piece.

    After a full flush, deflate forgets its history, so the compressed form of ``fill``
    is the same every time: it is computed once and sent ``repeat`` times. A 1 MiB
    block of zeros or spaces compresses to about 1 KiB, so 1 GiB costs 1 MB on the wire.
    """
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    yield _gzip_header() + deflate.compress(prefix) + deflate.flush(zlib.Z_FULL_FLUSH)
    if repeat:
        block = deflate.compress(fill) + deflate.flush(zlib.Z_FULL_FLUSH)
        again = deflate.compress(fill) + deflate.flush(zlib.Z_FULL_FLUSH)
        assert block == again, "deflate output depends on history"
        group = block * 64
        sent = 2
        yield block + again
        while sent + 64 <= repeat:
            yield group
            sent += 64
        yield block * (repeat - sent)
    yield deflate.compress(suffix) + deflate.flush(zlib.Z_FINISH)
    crc = zlib.crc32(prefix)
    crc = _crc_of_repeats(fill, repeat, crc) if repeat else crc
    crc = zlib.crc32(suffix, crc)
    size = len(prefix) + len(fill) * repeat + len(suffix)
    yield struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)


def gzip_layer(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """Another gzip layer around a stream of pieces."""
    outer = zlib.compressobj(9, zlib.DEFLATED, 31)
    for piece in pieces:
        out = outer.compress(piece)
        if out:
            yield out
    yield outer.flush()


# --------------------------------------------------------------------------- streaming


def streamed(
    make: Callable[[web.Request], AsyncIterator[bytes] | Iterable[bytes]],
    *,
    content_type: str = "application/xml",
    headers: dict[str, str] | None = None,
) -> Handler:
    """A handler that streams the pieces ``make(request)`` gives, chunked; it stops
    quietly when the client goes away."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": content_type, **(headers or {})})
        response.enable_chunked_encoding()
        await response.prepare(request)
        pieces = make(request)
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            if isinstance(pieces, AsyncIterator):
                async for piece in pieces:
                    await response.write(piece)
            else:
                for piece in pieces:
                    await response.write(piece)
            await response.write_eof()
        return response

    return handler


# --------------------------------------------------------------------------- cases


def add_bomb_zeros(site: Site) -> str:
    """1 GiB of zeros, gzipped (about 1 MB on the wire), as a child of an index."""
    bomb = streamed(
        lambda _: gzip_member(b"", b"\0" * BOMB_BLOCK, GiB // BOMB_BLOCK, b""),
        content_type="application/gzip",
    )
    site.add("/bomb/zeros.xml.gz", bomb)
    return add_index(site, "bomb", ["/bomb/zeros.xml.gz"])


def bomb_prefix(site: Site, case: str, count: int = 2) -> tuple[bytes, list[str]]:
    """The start of a urlset with ``count`` good URLs, and those URLs."""
    urls = [site.url(f"/{case}/in-bomb-{n}") for n in range(count)]
    return URLSET_OPEN + entries(urls), urls


def add_bomb_spaces(site: Site) -> tuple[str, list[str]]:
    """A valid urlset whose 1 GiB of whitespace (gzipped) only a byte cap can stop."""
    prefix, kept = bomb_prefix(site, "spaces")
    bomb = streamed(
        lambda _: gzip_member(prefix, b" " * BOMB_BLOCK, GiB // BOMB_BLOCK, URLSET_CLOSE),
        content_type="application/gzip",
    )
    site.add("/spaces/bomb.xml.gz", bomb)
    return add_index(site, "spaces", ["/spaces/bomb.xml.gz"]), kept


def add_bomb_layer2(site: Site) -> tuple[str, list[str]]:
    """The whitespace bomb inside a second gzip layer (a .gz sent with Content-Encoding)."""
    prefix, kept = bomb_prefix(site, "layer2")
    inner = functools.partial(
        gzip_member, prefix, b" " * BOMB_BLOCK, GiB // BOMB_BLOCK, URLSET_CLOSE
    )
    bomb = streamed(
        lambda _: gzip_layer(inner()),
        content_type="application/gzip",
        headers={"Content-Encoding": "gzip"},
    )
    site.add("/layer2/bomb.xml.gz", bomb)
    return add_index(site, "layer2", ["/layer2/bomb.xml.gz"]), kept


def add_bomb_member10(site: Site) -> tuple[str, list[str]]:
    """Nine honest gzip members (one URL each), then a tenth holding 1 GiB of spaces."""
    kept = [site.url(f"/member10/in-member-{n}") for n in range(9)]

    def members(_: web.Request) -> Iterator[bytes]:
        for n, url in enumerate(kept):
            head = URLSET_OPEN if n == 0 else b""
            yield from gzip_member(head + entries([url]), b"", 0, b"")
        yield from gzip_member(b"", b" " * BOMB_BLOCK, GiB // BOMB_BLOCK, URLSET_CLOSE)

    site.add("/member10/bomb.xml.gz", streamed(members, content_type="application/gzip"))
    return add_index(site, "member10", ["/member10/bomb.xml.gz"]), kept


def add_endless(site: Site) -> tuple[str, list[str]]:
    """A urlset that starts well and then never ends (whitespace as fast as it goes)."""
    prefix, kept = bomb_prefix(site, "endless")

    async def forever(_: web.Request) -> AsyncIterator[bytes]:
        yield prefix
        filler = b" " * (64 * 1024)
        while True:
            yield filler

    site.add("/endless/sitemap.xml", streamed(forever))
    return add_index(site, "endless", ["/endless/sitemap.xml"]), kept


def add_trickle(site: Site) -> tuple[str, list[str]]:
    """A urlset sent at 1 KiB per second, forever."""
    prefix, kept = bomb_prefix(site, "trickle")

    async def slow(_: web.Request) -> AsyncIterator[bytes]:
        yield prefix
        while True:
            await asyncio.sleep(1.0)  # the server's pace
            yield b" " * 1024

    site.add("/trickle/sitemap.xml", streamed(slow))
    return add_index(site, "trickle", ["/trickle/sitemap.xml"]), kept


class SilentServer:
    """Accepts TCP connections on 127.0.0.1 and never sends a byte (async context manager)."""

    def __init__(self) -> None:
        self.accepted = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._held: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> SilentServer:
        self._server = await asyncio.start_server(self._hold, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for writer in self._held:
            writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._held.append(writer)  # read nothing, answer nothing, close only at the end

    def url(self, path: str) -> str:
        """A URL on the silent server."""
        return f"http://127.0.0.1:{self.port}{path}"


def add_silent(site: Site, silent: SilentServer) -> str:
    """An index whose hostile child lives on a server that never answers."""
    good = site.url(add_good(site, "silent"))
    site.add("/silent/index.xml", index([good, silent.url("/sitemap.xml")]))
    return site.url("/silent/index.xml")


def add_reset_once(site: Site) -> tuple[str, list[str]]:
    """A urlset whose first response (per User-Agent) is cut mid-body by a reset."""
    urls = [site.url(f"/reset/in-reset-{n}") for n in range(5)]
    body = URLSET_OPEN + entries(urls) + URLSET_CLOSE
    tries: dict[str, int] = {}

    async def handler(request: web.Request) -> web.StreamResponse:
        agent = request.headers.get("User-Agent", "")
        tries[agent] = tries.get(agent, 0) + 1
        if tries[agent] > 1:
            return web.Response(body=body, content_type="application/xml")
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        response.content_length = len(body)
        await response.prepare(request)
        await response.write(body[: len(body) // 2])
        assert request.transport is not None
        request.transport.abort()  # RST mid-body
        return response

    site.add("/reset/sitemap.xml", handler)
    return add_index(site, "reset", ["/reset/sitemap.xml"]), urls


def add_redirects(site: Site) -> str:
    """A redirect loop (a -> b -> a) and a 30-hop chain, next to a good sibling."""
    site.add(
        "/redirect/loop-a.xml", Reply(status=302, headers={"Location": "/redirect/loop-b.xml"})
    )
    site.add(
        "/redirect/loop-b.xml", Reply(status=301, headers={"Location": "/redirect/loop-a.xml"})
    )
    for hop in range(30):
        site.add(
            f"/redirect/chain-{hop}.xml",
            Reply(status=302, headers={"Location": f"/redirect/chain-{hop + 1}.xml"}),
        )
    site.add("/redirect/chain-30.xml", urlset([site.url("/redirect/end-of-chain")]))
    return add_index(site, "redirect", ["/redirect/loop-a.xml", "/redirect/chain-0.xml"])


def add_fanout(site: HostileSite) -> str:
    """An index of 50,000 children, each an index of 1,000 more (a tiny urlset each)."""
    children = [site.url(f"/fanout/child-{n}.xml") for n in range(50_000)]
    site.add("/fanout/bomb.xml", index(children))

    async def child(request: web.Request) -> web.StreamResponse:
        name = request.match_info["tail"].rsplit("/", 1)[-1].removesuffix(".xml")
        if name.startswith("child-"):
            grand = [site.url(f"/fanout/grand-{name[6:]}-{m}.xml") for m in range(1000)]
            return web.Response(body=index(grand), content_type="application/xml")
        return web.Response(body=urlset([site.url(f"/fanout/{name}")]), content_type="text/xml")

    site.fallback = child
    return add_index(site, "fanout", ["/fanout/bomb.xml"])


def add_deep(site: Site, levels: int = 100) -> str:
    """An index chain ``levels`` deep; each level also lists a good urlset."""
    for level in range(levels):
        site.add(f"/deep/good-{level}.xml", urlset([site.url(f"/deep/page-{level}")]))
        listed = [site.url(f"/deep/good-{level}.xml"), site.url(f"/deep/level-{level + 1}.xml")]
        site.add(f"/deep/level-{level}.xml", index(listed))
    return site.url("/deep/level-0.xml")


def add_cycle(site: Site) -> str:
    """Index cycles closed by redirects: a -> b, and b redirects back to the index."""
    top = site.url("/cycle/index.xml")
    site.add("/cycle/a.xml", index([site.url("/cycle/b.xml"), site.url("/cycle/c.xml")]))
    site.add("/cycle/b.xml", Reply(status=302, headers={"Location": top}))
    site.add("/cycle/c.xml", Reply(status=301, headers={"Location": site.url("/cycle/a.xml")}))
    return add_index(site, "cycle", ["/cycle/a.xml"])


def add_big_robots(site: Site, size: int = 20 * MiB) -> tuple[str, str]:
    """A 20 MB robots.txt: a good Sitemap line first, one more after 20 MB of comments."""
    good = site.url(add_good(site, "robots"))
    late = site.url("/robots/late.xml")
    site.add("/robots/late.xml", urlset([site.url("/robots/too-late")]))
    line = b"# " + b"x" * 1021 + b"\n"

    def body(_: web.Request) -> Iterator[bytes]:
        yield f"User-agent: *\nAllow: /\nSitemap: {good}\n".encode()
        block = line * 64
        for _block in range(size // len(block)):
            yield block
        yield f"Sitemap: {late}\n".encode()

    site.add("/robots.txt", streamed(body, content_type="text/plain"))
    return site.url("/"), late


def add_xml_attacks(site: Site) -> tuple[str, list[str]]:
    """XXE (file and http), billion laughs and quadratic blowup, next to a good sibling."""
    probe = site.url("/xml/xxe-probe")
    site.add("/xml/xxe-probe", "<leak/>")
    kept = [site.url("/xml/before-dtd")]
    xxe_file = (
        '<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{site.url("/xml/")}&x;</loc></url></urlset>\n'
    )
    xxe_http = xxe_file.replace("file:///etc/passwd", probe)
    laughs = ['<!ENTITY l0 "lol">'] + [
        f'<!ENTITY l{n} "{f"&l{n - 1};" * 10}">' for n in range(1, 10)
    ]
    billion = (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [{"".join(laughs)}]>\n'
        f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{site.url("/xml/")}&l9;</loc></url></urlset>\n'
    )
    quadratic = (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY a "{"a" * 50_000}">]>\n'
        f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{site.url("/xml/")}{"&a;" * 50_000}'
        "</loc></url></urlset>\n"
    )
    site.add("/xml/xxe-file.xml", xxe_file)
    site.add("/xml/xxe-http.xml", xxe_http)
    site.add("/xml/laughs.xml", billion)
    site.add("/xml/quadratic.xml", quadratic)
    site.add("/xml/plain.xml", urlset(kept))
    children = ["/xml/xxe-file.xml", "/xml/xxe-http.xml", "/xml/laughs.xml", "/xml/quadratic.xml"]
    return add_index(site, "xml", [*children, "/xml/plain.xml"]), kept


def add_rate_limited(site: Site) -> str:
    """A child that answers 429 with Retry-After: 3600."""
    site.add("/ratelimit/child.xml", Reply(b"slow down", 429, {"Retry-After": "3600"}))
    return add_index(site, "ratelimit", ["/ratelimit/child.xml"])


def add_storm(site: Site, children: int = 12) -> str:
    """Every child but the good sibling answers 503 (no Retry-After), every time."""
    paths = [f"/storm/child-{n}.xml" for n in range(children)]
    for path in paths:
        site.add(path, Reply(b"busy", 503, content_type="text/html"))
    return add_index(site, "storm", paths)


def add_soft_404(site: HostileSite) -> str:
    """A site that answers every path, robots.txt included, with an HTML soft 404."""

    async def soft(_: web.Request) -> web.StreamResponse:
        return web.Response(body=SOFT_404, content_type="text/html")

    site.fallback = soft
    return site.url("/")


def add_long_urls(site: Site, length: int = 100 * 1024) -> tuple[str, list[str]]:
    """A urlset whose URLs alternate between honest ones and 100 KB long ones."""
    kept = [site.url(f"/long/short-{n}") for n in range(3)]
    huge = [site.url("/long/" + chr(ord("a") + n) * length) for n in range(2)]
    body = URLSET_OPEN + entries([kept[0], huge[0], kept[1], huge[1], kept[2]]) + URLSET_CLOSE
    site.add("/long/sitemap.xml", body)
    return add_index(site, "long", ["/long/sitemap.xml"]), kept


#: The million URLs are on a plain public-looking origin, as on a real site (URLs with a
#: port take the normalizer's slow path); the test reads them with ``--scope any``.
MILLION_BASE = "https://www.example.com/million/u"


def add_million(site: Site, count: int = 1_000_000) -> str:
    """One urlset of ``count`` URLs, generated while it is sent (about 50 MB)."""
    base = MILLION_BASE

    def body(_: web.Request) -> Iterator[bytes]:
        yield URLSET_OPEN
        step = 20_000
        for start in range(0, count, step):
            stop = min(count, start + step)
            yield "".join(f"<url><loc>{base}{n}</loc></url>\n" for n in range(start, stop)).encode()
        yield URLSET_CLOSE

    site.add("/million/sitemap.xml", streamed(body))
    return add_index(site, "million", ["/million/sitemap.xml"])


def million_url(n: int) -> str:
    """The ``n``-th URL of the million-URL sitemap."""
    return f"{MILLION_BASE}{n}"


def add_comment_flood(site: Site, comments: int = 400) -> tuple[str, list[str]]:
    """A valid urlset after 400 comments: once enough to hang the HTML sniffer."""
    kept = [site.url(f"/comments/in-flood-{n}") for n in range(2)]
    flood = b"<!-- generated by a plugin -->\n" * comments
    body = b'<?xml version="1.0"?>\n' + flood + URLSET_OPEN.split(b"\n", 1)[1]
    site.add("/comments/sitemap.xml", body + entries(kept) + URLSET_CLOSE)
    return add_index(site, "comments", ["/comments/sitemap.xml"]), kept


def add_bad_bytes(site: Site) -> tuple[str, list[str], list[str]]:
    """Invalid UTF-8 in one urlset, a NUL byte in another, good URLs before and after."""
    before = [site.url(f"/bytes/before-{n}") for n in range(2)]
    after = [site.url(f"/bytes/after-{n}") for n in range(2)]
    bad_utf8 = site.url("/bytes/bad-").encode() + b"\xff\xfe\xc3("
    utf8 = (
        URLSET_OPEN
        + entries(before[:1])
        + b"<url><loc>"
        + bad_utf8
        + b"</loc></url>\n"
        + entries(after[:1])
        + URLSET_CLOSE
    )
    nul = URLSET_OPEN + entries(before[1:]) + b"<url><loc>\0</loc></url>\0\n" + entries(after[1:])
    site.add("/bytes/utf8.xml", utf8)
    site.add("/bytes/nul.xml", nul + URLSET_CLOSE)
    return add_index(site, "bytes", ["/bytes/utf8.xml", "/bytes/nul.xml"]), before, after


# --------------------------------------------------------------------------- markup bombs
# Small gzip files that expand to one hostile markup construct (issue 10, items 1-3): each
# is a urlset that starts with good URLs, so a test can check they are kept.

#: The hostile constructs, each ``(prefix, fill, suffix)``: ``fill`` (1 MiB) is repeated
#: 60 times between the two. All but ``nesting`` are one markup token of 60 MiB.
MARKUP_BOMBS: dict[str, tuple[bytes, bytes, bytes]] = {
    "attribute": (b'<url a="', b"x" * MiB, b'"/>'),
    "comment": (b"<!--", b"x" * MiB, b"-->"),
    "tag-name": (b"<a", b"x" * MiB, b"/>"),
    "pi": (b"<?pi ", b"x" * MiB, b"?>"),
    "nesting": (b"", b"<a>" * (MiB // 3), b""),
}


def add_markup_bomb(site: Site, construct: str, repeat: int = 60) -> tuple[str, list[str]]:
    """A ~60 KB gzip of a urlset holding one 60 MiB ``construct`` after two good URLs."""
    case = f"markup-{construct}"
    prefix, kept = bomb_prefix(site, case)
    start, fill, end = MARKUP_BOMBS[construct]
    bomb = streamed(
        lambda _: gzip_member(prefix + start, fill, repeat, end + URLSET_CLOSE),
        content_type="application/gzip",
    )
    site.add(f"/{case}/bomb.xml.gz", bomb)
    return add_index(site, case, [f"/{case}/bomb.xml.gz"]), kept


def add_doctype_bomb(site: Site, repeat: int = 60) -> str:
    """A ~60 KB gzip of a DOCTYPE whose public identifier is 60 MiB long."""
    prefix = b'<?xml version="1.0"?>\n<!DOCTYPE urlset PUBLIC "'
    bomb = streamed(
        lambda _: gzip_member(prefix, b"x" * MiB, repeat, b'" "x.dtd">\n<urlset/>'),
        content_type="application/gzip",
    )
    site.add("/markup-doctype/bomb.xml.gz", bomb)
    return add_index(site, "markup-doctype", ["/markup-doctype/bomb.xml.gz"])


#: Name floods: ``count`` elements, each bringing a distinct name (or declaration) that
#: differs from the others only at its end, so the flood compresses like the bombs above.
NAME_FLOODS: dict[str, str] = {
    "tag-names": "<t{pad}{n}/>\n",
    "attribute-names": '<a n{pad}{n}="1"/>\n',
    "namespaces": '<a xmlns:p{n}="http://example.com/{pad}{n}"/>\n',
}


def add_name_flood(
    site: Site, flood: str, count: int = 1100, pad: int = 60_000
) -> tuple[str, list[str]]:
    """A gzip urlset after two good URLs with ``count`` distinct names of ``pad`` chars
    (about 64 MiB: expat, pyexpat and the reader each keep every distinct name)."""
    case = f"flood-{flood}"
    prefix, kept = bomb_prefix(site, case)
    template, filler = NAME_FLOODS[flood], "x" * pad

    def pieces() -> Iterator[bytes]:
        yield prefix
        for n in range(count):
            yield template.format(pad=filler, n=n).encode()
        yield URLSET_CLOSE

    bomb = streamed(lambda _: gzip_layer(pieces()), content_type="application/gzip")
    site.add(f"/{case}/bomb.xml.gz", bomb)
    return add_index(site, case, [f"/{case}/bomb.xml.gz"]), kept


def add_declared_encoding(site: Site, encoding: str) -> tuple[str, str]:
    """A tiny urlset declaring ``encoding`` (zlib, base64...) next to a good sibling;
    the index URL and the URL the child lists."""
    case = f"encoding-{encoding}"
    listed = site.url(f"/{case}/in-child")
    body = (
        f'<?xml version="1.0" encoding="{encoding}"?>\n'
        f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{listed}</loc></url></urlset>\n'
    ).encode()
    site.add(f"/{case}/child.xml", body)
    return add_index(site, case, [f"/{case}/child.xml"]), listed
