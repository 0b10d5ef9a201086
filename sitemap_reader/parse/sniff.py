"""What is this body? Decided from its first bytes, never from a URL or a Content-Type.

Real servers send gzip as ``text/html``, XML as ``text/plain`` and soft-404 HTML pages as
``200 OK`` at ``/sitemap.xml``, so the only trustworthy witness is the content itself.
"""

from __future__ import annotations

import codecs
import re
from typing import Final

GZIP_MAGIC: Final = b"\x1f\x8b"
UTF8_BOM: Final = b"\xef\xbb\xbf"
UTF16_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")
UTF32_BOMS: Final = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")
# How "<" starts a body in each wide encoding, BOM-less (XML 1.0 appendix F): checked
# longest first, since UTF-32-LE "<" starts with UTF-16-LE "<".
_WIDE_STARTS: Final = (
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00", "utf-16-le"),
    (b"\x00<", "utf-16-be"),
)
_WIDE_HEADS: Final = (*UTF16_BOMS, *UTF32_BOMS, *(start for start, _ in _WIDE_STARTS))
#: Bytes of the body start we look at before deciding between XML and HTML.
SNIFF_BYTES: Final = 1024
_ASCII_SPACE: Final = b" \t\r\n\f\v"

# An HTML page, possibly after an XML declaration, comments and blank space: a soft 404,
# a login wall or a bot challenge served where a sitemap should be.
# The prolog loop is possessive (``*+``): with a plain ``*``, a run of comments or of blank
# space can be split between iterations in exponentially many ways, and a body that is not
# HTML after all made the regex backtrack through every one (200 comments: a hang).
_HTML_START: Final = re.compile(
    rb"(?:\s+|<\?xml.*?\?>|<!--.*?-->)*+<(?:!doctype\s+html|html[\s>/]|head[\s>]|body[\s>])",
    re.IGNORECASE | re.DOTALL,
)

# Body kinds returned by classify().
XML: Final = "xml"
XML16: Final = "xml16"  # UTF-16 or UTF-32 XML (BOM or a wide "<"): transcoded to UTF-8
HTML: Final = "html"
TEXT: Final = "text"
BINARY: Final = "binary"
EMPTY: Final = "empty"


def is_gzip_prefix(head: bytes) -> bool | None:
    """True/False once two bytes are known; None while it could still go either way."""
    if len(head) >= 2:
        return head.startswith(GZIP_MAGIC)
    if head == GZIP_MAGIC[:1]:
        return None
    return False


def strip_prolog(head: bytes) -> bytes:
    """Drop every UTF-8 byte order mark and all ASCII blank space before the first real
    byte: none of it is content.

    Expat rejects an XML declaration that does not start the document, and text
    sitemaps must not get a BOM glued to their first URL. A doubled mark is real (a file
    saved twice by an editor that adds one): it is stripped like one. Stripping is
    idempotent and never takes a mark in half, so the body's start is the same however it
    arrived in pieces: ``strip_prolog(strip_prolog(a) + b) == strip_prolog(a + b)``.

    >>> strip_prolog(b"\\xef\\xbb\\xbf\\n <?xml"), strip_prolog(b"\\xef\\xbb\\xbf" * 2 + b"<url")
    (b'<?xml', b'<url')
    """
    while True:
        rest = head.lstrip(_ASCII_SPACE)
        if not rest.startswith(UTF8_BOM):
            return rest
        head = rest[len(UTF8_BOM) :]


def classify(head: bytes, final: bool) -> str | None:
    """Classify a (decompressed) body from its start, after :func:`strip_prolog`.

    Returns None when more bytes are needed (never once ``final`` is true).
    """
    if not head:
        return EMPTY if final else None
    if head.startswith(_WIDE_HEADS):
        if len(head) < 4 and not final:
            return None  # "<\0" may yet be UTF-16 or UTF-32
        return XML16
    if len(head) < SNIFF_BYTES and not final:
        return None
    if head[:1] == b"<":
        return HTML if _HTML_START.match(head, 0, SNIFF_BYTES) else XML
    return BINARY if b"\x00" in head[:SNIFF_BYTES] else TEXT


# The encoding named in an XML declaration. The name is taken loosely (any run of
# characters that cannot end the value, its first 200 only) so that a junk or overlong
# name is reported as unknown instead of slipping past unseen.
_DECLARED: Final = re.compile(rb"<\?xml[^>]{0,200}?encoding\s*=\s*[\"']([^\"'<>]{1,200})")
# Encodings expat reads natively from UTF-8-compatible bytes: no transcoding needed.
_NATIVE: Final = frozenset({"utf-8", "ascii"})


def xml_codec(head: bytes, kind: str) -> tuple[str | None, str | None]:
    """Which Python codec must turn this XML body into UTF-8 before expat sees it.

    Returns ``(codec, problem)``: codec None means the bytes are UTF-8 already (or
    declared so). Expat itself reads only UTF-8, UTF-16, Latin-1 and ASCII, and pyexpat
    refuses multi-byte encodings (Shift_JIS, GB2312, Big5...), so everything else is
    transcoded: one code path for every declared encoding.

    The bytes have the last word over the declaration. A wide body (BOM, or ``<`` as two
    or four bytes) is UTF-16/32 whatever it declares. An ASCII-compatible body (it starts
    with a one-byte ``<``) is read with the declared codec only if that is a real text
    encoding that reads the declaration's own bytes back as the same ASCII text; anything
    else (an unknown name, a bytes-to-bytes codec such as ``zlib`` or ``base64``,
    ``rot13``, ``undefined``, ``idna``, UTF-16/32 declared on single-byte text, EBCDIC) is
    read as UTF-8 with replacement, and the message says why.

    >>> xml_codec(b'<?xml version="1.0" encoding="iso-8859-1"?><urlset/>', XML)
    ('iso8859-1', None)
    >>> xml_codec(b'<?xml version="1.0" encoding="zlib"?><urlset/>', XML)[1]
    "'zlib' is not a text encoding; read as UTF-8"
    """
    if kind == XML16:
        return _wide_codec(head), None
    found = _DECLARED.match(head)
    if found is None:
        return None, None
    name = found.group(1).decode("latin-1")
    shown = name if len(name) <= 60 else name[:60] + "..."
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):  # ValueError: a name with a NUL in it
        return "utf-8", f"unknown encoding {shown!r}; read as UTF-8"
    # Bytes-to-bytes and str-to-str codecs (zlib, base64, hex, rot13...) are not text
    # encodings: the codec registry marks them so.
    if not getattr(info, "_is_text_encoding", True):
        return "utf-8", f"{shown!r} is not a text encoding; read as UTF-8"
    if info.name in _NATIVE:
        return None, None
    if not _reads_ascii(info.name, head[: found.end()]):
        return "utf-8", f"declared {shown!r} does not match the bytes; read as UTF-8"
    return info.name, None


def _wide_codec(head: bytes) -> str:
    """The codec of a UTF-16/32 body, from its BOM or how its ``<`` is written."""
    if head.startswith(UTF32_BOMS):
        return "utf-32"
    if head.startswith(UTF16_BOMS):
        return "utf-16"
    for start, codec in _WIDE_STARTS:
        if head.startswith(start):
            return codec
    return "utf-16"  # pragma: no cover - classify() said XML16


def _reads_ascii(codec: str, declaration: bytes) -> bool:
    """Does the decoder the reader will use turn the declaration back into itself?

    A codec that cannot even read ``<?xml ... encoding="..."`` as written cannot be what
    the body is in. The check builds the very decoder XmlReader builds (``idna`` refuses
    ``errors="replace"``; the UTF-16/32 ones demand a BOM), so a codec that passes here
    cannot fail there.
    """
    try:
        decoder = codecs.getincrementaldecoder(codec)(errors="replace")
        text = decoder.decode(declaration)
    except Exception:  # any codec failure means: not this codec
        return False
    return bool(text == declaration.decode("ascii", "replace"))
