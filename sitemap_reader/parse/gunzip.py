r"""Streaming, capped gunzip: one gzip layer, decoded while the body arrives (and
:class:`GzipLayers`: every layer of a body, one :class:`Gunzip` each).

Theory of operation. ``zlib.decompressobj`` decodes one gzip member; we call
``decompress(data, PIECE)`` so no call returns more than ``PIECE`` bytes, and carry the
input it did not consume (``unconsumed_tail``) into the next call. Memory therefore stays
bounded by ``PIECE`` however well the input compresses (a 1 GiB bomb is about 1 MB of gzip).
Output is counted and the stream ends with ``limit-bytes`` as soon as it crosses
``max_output``. When a member ends (``eof``), the bytes after it (``unused_data``) are either
NUL padding, another member (starting with :data:`GZIP_MAGIC`; a new decoder is started, at
most ``max_members``), or anything else: a newline a server appended, an HTML error page,
junk. Padding before a member costs nothing; bytes after the last complete member that do
not start one (padding included) are counted in :attr:`Gunzip.trailing` and ignored, never
an error: what was decompressed stands (the caller reports them as a non-fatal problem; its
wire-bytes cap bounds how many it reads). Feeding one byte at a time gives the same output
as feeding everything at once.

>>> import gzip
>>> g = Gunzip(max_output=1024)
>>> b"".join(g.feed(gzip.compress(b"hello ") + gzip.compress(b"world")))
b'hello world'
>>> g.close(); g.output_bytes
11
>>> g = Gunzip(max_output=1024)
>>> b"".join(g.feed(gzip.compress(b"hello") + b"\n"))
b'hello'
>>> g.close(); g.trailing
1
"""

from __future__ import annotations

import zlib
from collections.abc import Generator, Iterator
from typing import Any, NoReturn

from sitemap_reader.errors import SitemapReaderError
from sitemap_reader.parse.sniff import is_gzip_prefix

__all__ = ["GZIP_MAGIC", "PIECE", "Gunzip", "GunzipError"]

#: The first two bytes of every gzip member (RFC 1952 §2.3.1).
GZIP_MAGIC = b"\x1f\x8b"
#: Largest piece :meth:`Gunzip.feed` yields: bounds memory per step.
PIECE = 64 * 1024
# wbits for zlib: 16 + 15 = gzip container only, largest window.
_GZIP_WBITS = 31


class GunzipError(SitemapReaderError):
    """The gzip stream cannot be decoded further; ``code`` says why.

    Codes: ``gzip-corrupt``, ``gzip-truncated``, ``limit-bytes``, ``limit-gzip-members``.
    """

    def __init__(self, code: str, message: str | None = None) -> None:
        super().__init__(message or code)
        self.code = code


class Gunzip:
    """Incremental gzip decoder with an output cap and a member cap.

    ``feed(data)`` yields decompressed pieces of at most :data:`PIECE` bytes; iterate it to
    the end before feeding more. ``close()`` checks that the stream did not stop inside a
    member. Errors raise :class:`GunzipError`; after one, every later call raises it again.
    """

    def __init__(self, max_output: int, max_members: int = 64) -> None:
        self.max_output = max_output
        self.max_members = max_members
        self._decoder = zlib.decompressobj(_GZIP_WBITS)
        self._members = 1
        self._output = 0
        self._pending = b""  # a lone b"\x1f" after a member: maybe the start of the next one
        self._padding = 0  # NUL bytes since the last member ended (padding, or the tail)
        self._junk = 0  # bytes after the last member that do not start another one
        self._error: GunzipError | None = None

    @property
    def output_bytes(self) -> int:
        """Decompressed bytes produced so far."""
        return self._output

    @property
    def trailing(self) -> int:
        """Bytes after the last complete member that start no other member (ignored)."""
        return self._padding + self._junk

    @property
    def members(self) -> int:
        """gzip members started so far."""
        return self._members

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decode ``data``; yield the output in pieces of at most :data:`PIECE` bytes."""
        self._check()
        if self._junk:  # past the last member for good: count, decode nothing
            self._junk += len(data)
            return
        if self._pending:
            data, self._pending = self._pending + data, b""
        while data:
            if self._decoder.eof:
                data = self._next_member(data)
                if not data:
                    return
            data = yield from self._inflate(data)

    def close(self) -> None:
        """End of input: raise ``gzip-truncated`` if the last member is incomplete."""
        self._check()
        if self._pending or not self._decoder.eof:
            self._fail("gzip-truncated", "the gzip stream ended inside a member")

    def _inflate(self, data: bytes) -> Generator[bytes, None, bytes]:
        """Decode within the current member; return the input left after it ends."""
        decoder = self._decoder
        while True:
            backup = decoder.copy()
            try:
                piece = decoder.decompress(data, PIECE)
            except zlib.error as exc:
                yield from self._salvage(backup, data)
                self._fail("gzip-corrupt", f"corrupt gzip data: {exc}", exc)
            if piece:
                yield from self._capped(piece)
            if decoder.eof:
                return decoder.unused_data
            data = decoder.unconsumed_tail
            # A full piece may leave output inside zlib even when all input was consumed.
            if not data and len(piece) < PIECE:
                return b""

    def _capped(self, piece: bytes) -> Iterator[bytes]:
        """Count and hand out ``piece``; past the cap, hand out what fits, then fail."""
        room = self.max_output - self._output
        if len(piece) <= room:
            self._output += len(piece)
            yield piece
            return
        if room:
            self._output = self.max_output
            yield piece[:room]
        self._fail("limit-bytes", f"decompressed size exceeds {self.max_output} bytes")

    def _salvage(self, decoder: Any, data: bytes) -> Iterator[bytes]:
        """zlib drops the output of a call that fails: replay it byte by byte from a copy
        of the decoder, so everything before the corrupt byte is kept, exactly as if the
        body had been fed one byte at a time."""
        for index in range(len(data)):
            try:
                piece = decoder.decompress(data[index : index + 1])
            except zlib.error:
                return
            if piece:
                yield from self._capped(piece)

    def _next_member(self, data: bytes) -> bytes:
        """After a member ended: skip NUL padding, start the next member, or count the
        rest as trailing bytes (everything from the first byte that starts no member)."""
        stripped = data.lstrip(b"\0")
        self._padding += len(data) - len(stripped)
        data = stripped
        if not data:
            return b""
        if len(data) < len(GZIP_MAGIC) and GZIP_MAGIC.startswith(data):
            self._pending = data
            return b""
        if not data.startswith(GZIP_MAGIC):
            self._junk = len(data)
            return b""
        if self._members >= self.max_members:
            self._fail("limit-gzip-members", f"more than {self.max_members} gzip members")
        self._members += 1
        self._padding = 0  # it was padding between members
        self._decoder = zlib.decompressobj(_GZIP_WBITS)
        return data

    def _check(self) -> None:
        """Raise the error that already ended this stream, if any."""
        if self._error is not None:
            raise self._error

    def _fail(self, code: str, message: str, cause: BaseException | None = None) -> NoReturn:
        """Remember and raise a :class:`GunzipError`."""
        self._error = GunzipError(code, message)
        raise self._error from cause


class GzipLayers:
    """The gzip layers of a body, taken off while it arrives: a stage whose first two
    bytes are :data:`GZIP_MAGIC` goes through a capped :class:`Gunzip`, and what comes out
    is the next stage, up to ``max_layers`` deep (double gzip is real: a ``.xml.gz`` sent
    with ``Content-Encoding: gzip``; a third layer raises ``limit-gzip-layers``). The
    reader's parser and the checker both read a body through one, so both see the same
    document.

    >>> import gzip
    >>> layers = GzipLayers(max_output=1024, max_members=4, max_layers=2)
    >>> b"".join(layers.feed(gzip.compress(gzip.compress(b"<urlset/>"))))
    b'<urlset/>'
    >>> list(layers.held()), layers.close()
    ([], [])
    """

    __slots__ = ("_gunzips", "_heads", "max_layers", "max_members", "max_output")

    def __init__(self, max_output: int, max_members: int, max_layers: int) -> None:
        self.max_output = max_output
        self.max_members = max_members
        self.max_layers = max_layers
        self._heads: list[bytes | None] = [b""]  # per stage: undecided start, None once decided
        self._gunzips: list[Gunzip] = []

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The document's bytes that ``data`` (the body as sent) gives so far."""
        return self._stage(0, data)

    def held(self) -> Iterator[bytes]:
        """At the end: what a stage held back undecided (a lone first byte that could have
        begun the magic), as the document's bytes."""
        for level, head in enumerate(self._heads):
            if head:
                self._heads[level] = None
                yield head

    def close(self) -> list[int]:
        """End of the body: close every layer (``gzip-truncated`` when one ended inside a
        member); the bytes ignored after each layer's last member, where there were some."""
        trailing = []
        for gunzip in self._gunzips:
            gunzip.close()
            if gunzip.trailing:
                trailing.append(gunzip.trailing)
        return trailing

    def _stage(self, level: int, data: bytes) -> Iterator[bytes]:
        head = self._heads[level]
        if head is not None:
            data = head + data
            gz = is_gzip_prefix(data)
            if gz is None:
                self._heads[level] = data
                return
            self._heads[level] = None
            if gz:
                if level >= self.max_layers:
                    raise GunzipError(
                        "limit-gzip-layers", f"more than {self.max_layers} gzip layers"
                    )
                self._gunzips.append(Gunzip(self.max_output, self.max_members))
                self._heads.append(b"")
        if level < len(self._gunzips):
            for piece in self._gunzips[level].feed(data):
                yield from self._stage(level + 1, piece)
        else:
            yield data
