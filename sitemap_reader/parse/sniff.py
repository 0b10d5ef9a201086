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
XML16: Final = "xml16"  # UTF-16 XML: handed to expat untouched (it reads the BOM)
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
    """Drop a UTF-8 BOM and any ASCII blank space before the first real byte.

    Expat rejects an XML declaration that does not start the document, and text
    sitemaps must not get a BOM glued to their first URL.

    >>> strip_prolog(b"\\xef\\xbb\\xbf\\n <?xml")
    b'<?xml'
    """
    if head.startswith(UTF8_BOM):
        head = head[3:]
    return head.lstrip(_ASCII_SPACE)


def classify(head: bytes, final: bool) -> str | None:
    """Classify a (decompressed) body from its start, after :func:`strip_prolog`.

    Returns None when more bytes are needed (never once ``final`` is true).
    """
    if not head:
        return EMPTY if final else None
    if head.startswith((*UTF16_BOMS, b"<\x00", b"\x00<")):
        return XML16
    if len(head) < SNIFF_BYTES and not final:
        return None
    if head[:1] == b"<":
        return HTML if _HTML_START.match(head, 0, SNIFF_BYTES) else XML
    return BINARY if b"\x00" in head[:SNIFF_BYTES] else TEXT


# The encoding named in an XML declaration.
_DECLARED: Final = re.compile(
    rb"<\?xml[^>]{0,200}?encoding\s*=\s*[\"']([A-Za-z0-9._:-]{1,40})[\"']"
)
# Encodings expat reads natively from UTF-8-compatible bytes: no transcoding needed.
_NATIVE: Final = frozenset({"utf-8", "ascii"})


def xml_codec(head: bytes, kind: str) -> tuple[str | None, str | None]:
    """Which Python codec must turn this XML body into UTF-8 before expat sees it.

    Returns ``(codec, problem)``: codec None means the bytes are UTF-8 already (or
    declared so); a problem message when the declared encoding is unknown (then the body
    is read as UTF-8 with replacement). Expat itself reads only UTF-8, UTF-16, Latin-1
    and ASCII, and pyexpat refuses multi-byte encodings (Shift_JIS, GB2312, Big5...), so
    everything else is transcoded: one code path for every declared encoding.
    """
    if kind == XML16:
        if head.startswith(UTF16_BOMS):
            return "utf-16", None
        return ("utf-16-le" if head.startswith(b"<\x00") else "utf-16-be"), None
    found = _DECLARED.match(head)
    if found is None:
        return None, None
    name = found.group(1).decode("ascii")
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return "utf-8", f"unknown encoding {name!r}; read as UTF-8"
    return (None if codec in _NATIVE else codec), None
