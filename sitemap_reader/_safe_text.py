"""Text from sites and queues, made safe to show: terminals, spreadsheets, logs.

Site- or queue-supplied text (a robots.txt ``Sitemap:`` value, a text-sitemap line, an RSS
title, a queued target) may carry control characters: ESC starts terminal sequences (colours,
cursor moves, OSC 8 links, title changes), BEL rings, CR rewrites the line already printed. And a
URL the user typed may carry a password. Every place that prints such text goes through one of
the functions here; nothing else in the package escapes text for display.

Pure functions, no I/O: every layer may import this module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

# C0 controls, DEL, C1 controls, and the line/paragraph separators and bidi controls that
# reorder or break what a terminal shows (U+200E/F, U+202A-E, U+2066-9, U+2028/9); and
# lone surrogates, which no terminal can show: a file name that is not UTF-8 holds them
# (U+DC80-U+DCFF stand for its undecodable bytes, shown as those bytes).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape_one(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        code -= 0xDC00  # a byte that os.fsdecode could not decode: shown as that byte
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    r"""``text`` with every control character shown as an escape, safe for a terminal or log.

    Tab and newline are escaped too: one printed value stays one line.

    >>> printable("a\x1b[31mred\x07")
    'a\\x1b[31mred\\x07'
    >>> printable("plain https://example.com/é")
    'plain https://example.com/é'
    """
    return _UNSAFE.sub(_escape_one, text) if _UNSAFE.search(text) else text


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """``text`` made inert for a spreadsheet: a cell that would start a formula gets a ``'``.

    >>> csv_cell("=HYPERLINK(\\"http://x\\")")
    '\\'=HYPERLINK("http://x")'
    >>> csv_cell("https://example.com/a")
    'https://example.com/a'
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def redact_url(url: str) -> str:
    """``url`` with its password (and a user name given with it) replaced by ``***``.

    Used for every URL the user gave that may carry credentials (``--proxy``, ``--redis``)
    wherever it is printed: start lines, errors, status, logs.

    >>> redact_url("redis://user:secret@db.example:6379/0")
    'redis://user:***@db.example:6379/0'
    >>> redact_url("redis://:secret@db.example")
    'redis://:***@db.example'
    >>> redact_url("http://proxy.example:3128")
    'http://proxy.example:3128'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>" if "@" in url else printable(url)
    if "@" not in parts.netloc:
        return printable(url)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, colon, _password = userinfo.partition(":")
    safe = f"{user}:***" if colon else "***"
    return printable(urlunsplit(parts._replace(netloc=f"{safe}@{hostport}")))


#: A header name (RFC 9110 token characters), as ``Name: value`` lines start.
_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def masked(value: object) -> str:
    r"""A value the user gave, for an error message, with every credential it may hold
    hidden: a URL's password shows as ``***`` (:func:`redact_url`), a ``Name: value`` line
    as its name and ``***``, any other text as its length only; a mapping keeps its keys
    (targets, option and header names) and a sequence its shape, their values masked so.
    A refused header value, a token read from a file with its newline, a proxy's password:
    none of them is ever echoed.

    >>> masked("http://crawler:s3cret@proxy.example:3128")
    "'http://crawler:***@proxy.example:3128'"
    >>> masked("Authorization: Bearer t0ken\n"), masked("t0ken\n")
    ("'Authorization: ***'", '<hidden text, length 6>')
    >>> masked({"a.example": {"proxy": "http://u:p@h", "headers": {"X-Key": "k"}}})
    "{'a.example': {'proxy': 'http://u:***@h', 'headers': {'X-Key': <hidden text, length 1>}}}"
    """
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)}: {masked(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        shown = ", ".join(masked(item) for item in value)
        return f"[{shown}]" if isinstance(value, list) else f"({shown})"
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if not isinstance(value, str):
        return f"<hidden {type(value).__name__}>"
    if "://" in value:
        return repr(redact_url(value))
    name, colon, _ = value.partition(":")
    if colon and _NAME.fullmatch(name.strip()):
        return repr(f"{name.strip()}: ***")
    return f"<hidden text, length {len(value)}>"


def _key(key: object) -> str:
    """A mapping's key as :func:`masked` shows it (a target, an option, a header name)."""
    return repr(printable(key)) if isinstance(key, str) else masked(key)
