"""Bare-ampersand repair in the byte stream, before expat sees it.

A bare ``&`` (``?a=1&b=2``) or an HTML entity (``&nbsp;``) makes expat give up on the
whole document. :class:`AmpFixer` escapes such ampersands (outside CDATA sections), so
the URL survives exactly as written; well-formed XML passes through untouched.
"""

from __future__ import annotations

import re
from typing import Final

# The digits of a character reference that are read: leading zeros are legal XML, but a
# reference with more digits than this is no reference (its "&" is text). The bound is
# what makes the verdict the same however the bytes arrive: an unfinished reference is
# held back across a chunk boundary only while it could still be one (see
# _HOLD_REFERENCE), and the verdict on a longer one is taken from its first digits.
MAX_REFERENCE_DIGITS: Final = 60
_DIGITS: Final = b"{1,%d}" % MAX_REFERENCE_DIGITS
# Any "&" that does not start a well-formed reference to one of XML's predefined entities
# or a character: if this finds nothing, the chunk passes through untouched.
_NOT_A_REFERENCE: Final = re.compile(
    rb"&(?!(?:amp|lt|gt|quot|apos|#[0-9]" + _DIGITS + rb"|#x[0-9A-Fa-f]" + _DIGITS + rb");)"
)
# What an "&" starts: a predefined entity, a character reference (maybe missing its ";").
_AMP: Final = re.compile(
    rb"&(?:(?:amp|lt|gt|quot|apos);|#([0-9]"
    + _DIGITS
    + rb")(;?)|#x([0-9A-Fa-f]"
    + _DIGITS
    + rb")(;?))?"
)
# An unfinished reference at the end of a chunk: held back until the next chunk.
_INCOMPLETE: Final = re.compile(
    rb"&(?:#[xX]?[0-9A-Fa-f]{0,%d}|[A-Za-z]{0,%d})" % (MAX_REFERENCE_DIGITS, MAX_REFERENCE_DIGITS)
)
_CDATA_OPEN: Final = b"<![CDATA["
_CDATA_CLOSE: Final = b"]]>"
# Longest reference we wait for across a chunk boundary: "&#x", the digits and ";".
_HOLD_REFERENCE: Final = MAX_REFERENCE_DIGITS + 4


def _xml_char(code: int) -> bool:
    """Is ``code`` a character XML 1.0 allows in a character reference?"""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0x10FFFF


def _repair(match: re.Match[bytes]) -> bytes | None:
    """The repair of one ``&``, or None when it is well-formed as it stands."""
    decimal, dsemi, hexa, hsemi = match.groups()
    if decimal is None and hexa is None:
        # A predefined entity stays; a bare "&" (or &nbsp;, &copy=) becomes literal text.
        return None if match.end() - match.start() > 1 else b"&amp;"
    code = int(decimal) if decimal is not None else int(hexa, 16)
    if not _xml_char(code):
        return b"&amp;" + match.group()[1:]
    # A character reference without its ";" means what HTML makes of it: the character.
    return None if (dsemi or hsemi) else match.group() + b";"


def _marker_prefix(data: bytes) -> int:
    """Length of the longest end of ``data`` that may be the start of a CDATA marker."""
    tail = data[-len(_CDATA_OPEN) :]
    if b"<" not in tail and b"]" not in tail:
        return 0
    for size in range(len(tail), 0, -1):
        end = tail[-size:]
        if _CDATA_OPEN.startswith(end) or _CDATA_CLOSE.startswith(end):
            return size if end not in (_CDATA_OPEN, _CDATA_CLOSE) else 0
    return 0


class AmpFixer:
    """Streaming filter that repairs stray ampersands outside CDATA sections.

    Well-formed XML passes through unchanged. A bare ``&`` becomes ``&amp;`` (so
    ``?a=1&b=2`` survives exactly), a character reference missing its ``;`` gets one, and
    a reference to a character XML forbids becomes literal text. An unfinished reference
    or CDATA marker at a chunk's end is held back until the next chunk.
    """

    __slots__ = ("_carry", "_in_cdata", "repairs")

    def __init__(self) -> None:
        self._carry = b""
        self._in_cdata = False
        self.repairs = 0  # ampersands changed so far

    def _fix_segment(self, data: bytes) -> bytes:
        # Character references are checked one by one (&#0; is well-formed yet fatal).
        if b"&#" not in data and not _NOT_A_REFERENCE.search(data):
            return data
        return _AMP.sub(self._replace, data)

    def _replace(self, match: re.Match[bytes]) -> bytes:
        fixed = _repair(match)
        if fixed is None:
            return match.group()
        self.repairs += 1
        return fixed

    def feed(self, data: bytes) -> bytes:
        if self._carry:
            data = self._carry + data
        size = cut = len(data) - _marker_prefix(data)
        amp = data.rfind(b"&", max(0, size - _HOLD_REFERENCE), size)
        if amp != -1 and _INCOMPLETE.fullmatch(data, amp, size):
            cut = amp
        self._carry = data[cut:]
        return self._fix(data[:cut] if cut < len(data) else data)

    def flush(self) -> bytes:
        data, self._carry = self._carry, b""
        return self._fix(data)

    def _fix(self, data: bytes) -> bytes:
        if not self._in_cdata and _CDATA_OPEN not in data:
            return self._fix_segment(data) if b"&" in data else data
        out: list[bytes] = []
        pos = 0
        while pos < len(data):
            if self._in_cdata:
                end = data.find(_CDATA_CLOSE, pos)
                if end == -1:
                    out.append(data[pos:])
                    break
                end += len(_CDATA_CLOSE)
                out.append(data[pos:end])
                self._in_cdata = False
            else:
                end = data.find(_CDATA_OPEN, pos)
                if end == -1:
                    out.append(self._fix_segment(data[pos:]))
                    break
                end += len(_CDATA_OPEN)
                out.append(self._fix_segment(data[pos:end]))
                self._in_cdata = True
            pos = end
        return b"".join(out)
