"""Field normalizers: URLs (on yarl), lastmod dates, changefreq and priority.

Every function here takes the raw text of one field and returns the normalized value or
None; none of them raises on content. They run once per URL record, so each has a fast
path for the common, already-clean input and falls back to the general code otherwise.
``normalize_url`` has three tiers, all giving exactly the same result: a regex that
recognises URLs already in normal form (returned as is), a near path for URLs that only
need yarl's quoters (ports, non-ASCII text, escape case, upper-case hosts, no path), and
yarl's full parse for the rest (``_normalize_url_slow`` is that tier alone, for the tests).

URL normalization (``normalize_url``), in order:

1. ASCII tab, CR and LF are removed anywhere (as browsers do); surrounding whitespace,
   C0 controls and Unicode spaces (NBSP, U+2000..U+200B, U+3000, BOM...) are stripped.
2. Empty results, inputs over ``max_length`` and schemes other than http/https are rejected.
3. Relative references (``/a``, ``a/b``, ``//host/x``) are resolved against ``base`` in lenient
   mode; with ``absolute_only=True`` (the parser's strict mode) or without a base they
   are rejected.
4. yarl normalizes: scheme and host lower-cased, IDNA host in punycode, default port dropped,
   dot segments removed, unreserved ``%XX`` decoded, unsafe characters percent-encoded.
5. The host must be a DNS-like name (letters, digits, ``-``, ``_``), an IPv4 or an IPv6 address.
6. The fragment is dropped; an empty path becomes ``/``; the query is kept as it is.

>>> normalize_url("HTTP://Example.COM:80/a/./b/../c#top")
'http://example.com/a/c'
>>> normalize_url("/news?id=1", base="https://example.com/sitemap.xml")
'https://example.com/news?id=1'
>>> normalize_url("mailto:someone@example.com") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import lru_cache
from ipaddress import IPv6Address

from yarl import URL

__all__ = [
    "CHANGEFREQS",
    "fast_url_match",
    "normalize_url",
    "parse_changefreq",
    "parse_lastmod",
    "parse_priority",
]

#: The protocol's changefreq values, from most to least frequent.
CHANGEFREQS: tuple[str, ...] = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
_CHANGEFREQ_SET = frozenset(CHANGEFREQS)

# --- URLs -------------------------------------------------------------------------------------

#: The longest DNS label and host name (RFC 1035 section 2.3.4: 63 octets a label, 255 a
#: name in wire form, so 253 characters written without the root dot).
MAX_LABEL = 63
MAX_HOST = 253

# One DNS-like label: lower-case letters, digits, '_' (seen in real hostnames) and '-'.
_LABEL = r"[a-z0-9_][a-z0-9_-]{0,62}"
# Labels joined by dots, maybe one trailing dot. Written label-first with possessive
# quantifiers ((L.)*L.? and L(.L)*.? are the same language): a label never contains a dot,
# so giving characters back can never help, and a failing host fails at once.
_HOST_RE = re.compile(r"[a-z0-9_][a-z0-9_-]{0,62}+(?:\.[a-z0-9_][a-z0-9_-]{0,62}+)*+\.?")

# Characters yarl leaves unchanged in a path and in a query (checked by a test that tries
# every printable ASCII character).
_PATH_CHARS = r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]"
_QUERY_CHARS = r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]"
# Percent escapes yarl leaves unchanged (upper-case hex only; checked by a test over all 256
# bytes): bytes >= 0x80 (UTF-8 of non-ASCII text), controls, and the ASCII characters that
# must stay escaped in that component. Escapes of other characters are decoded by yarl
# ("%41" -> "A", "%3A" in a path -> ":"), and lower-case hex is upper-cased: slow path.
_PATH_PCT = r"%(?:[89A-F][0-9A-F]|[01][0-9A-F]|2[0235BF]|3[CEF]|5[B-E]|60|7[B-DF])"
_QUERY_PCT = r"%(?:[89A-F][0-9A-F]|[01][0-9A-F]|2[02356B]|3[B-E]|5[B-E]|60|7[B-DF])"
# A port in the form yarl prints it: 1-59999 without leading zeros (yarl drops them; 6xxxx
# ports are rare enough for the near path), neither 80 nor 443 whatever the scheme (a
# scheme-conditional group costs more than the rare https://host:80/ sent to the near path).
_PORT = r"(?::(?!80/|443/)(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}))?"
# The host's labels, possessive: a label never contains ".", so backtracking into them can
# never help, and without it the optional port after the host costs nothing on plain URLs.
_FAST_LABEL = r"[a-z0-9_][a-z0-9_-]{0,62}+"
# A URL that is already in normalized form: lower-case http(s) scheme and host, no userinfo,
# no default port, a path starting with '/', an optional non-empty query, no fragment, no
# whitespace, only characters and escapes yarl keeps. Dot segments are excluded separately
# (no "/." anywhere), which is cheaper than a lookahead per segment. Such a string is
# returned as is. The loops are unrolled (chars*(escape chars*)*) so the common escape-free
# URL is one scan, and possessive (a character class never overlaps "%" or what may follow
# it), so a URL that is not in normal form fails where it differs, without backtracking.
_FAST_RE = re.compile(
    rf"https?://(?=[^/]{{1,{MAX_HOST}}}+/)(?:{_FAST_LABEL}\.)*+{_FAST_LABEL}{_PORT}"
    rf"/{_PATH_CHARS}*+(?:{_PATH_PCT}{_PATH_CHARS}*+)*+"
    rf"(?:\?(?:{_QUERY_CHARS}|{_QUERY_PCT}){_QUERY_CHARS}*+(?:{_QUERY_PCT}{_QUERY_CHARS}*+)*+)?"
)
_fast_match = _FAST_RE.fullmatch
#: Matches URLs already in normal form, except that a "/." anywhere (a dot segment) must
#: be excluded separately; callers on a hot path inline normalize_url's fast path with it.
fast_url_match = _fast_match


def _is_normal_form(raw: str) -> bool:
    """The fast-path test of :func:`normalize_url` (inlined there; tests use this one)."""
    return _fast_match(raw) is not None and "/." not in raw


# Scheme of an absolute reference (RFC 3986 §3.1).
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_HTTP_SCHEMES = frozenset(("http", "https"))
# Browsers remove these anywhere in a URL (WHATWG URL standard, "ASCII tab or newline").
_REMOVE_TAB_NEWLINE = str.maketrans("", "", "\t\r\n")
# Stripped at both ends: C0 controls and space (WHATWG), plus Unicode spaces seen around locs
# (NBSP, U+2000..U+200B, line/paragraph separators, ideographic space, BOM).
_STRIP_CHARS = (
    "".join(map(chr, range(0x21)))
    + "\x7f\x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200C)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# Everything yarl or the stdlib may raise on a malformed URL.
_URL_ERRORS = (ValueError, TypeError, UnicodeError, IndexError, OverflowError)


def normalize_url(
    raw: str, base: str | None = None, *, absolute_only: bool = False, max_length: int = 8192
) -> str | None:
    """The normalized absolute http(s) URL for ``raw``, or None when it is not usable.

    ``base`` resolves relative references unless ``absolute_only`` (see the module
    docstring for every step). Never raises on content.

    >>> normalize_url("  https://bücher.example/straße?x=1#frag\\u00a0")
    'https://xn--bcher-kva.example/stra%C3%9Fe?x=1'
    """
    # The fast path: _is_normal_form, inlined (a function call costs ~10% here).
    if _fast_match(raw) is not None and "/." not in raw and len(raw) <= max_length:
        return raw
    return _normalize_slow(raw, base, absolute_only, max_length)


def _normalize_slow(raw: str, base: str | None, absolute_only: bool, max_length: int) -> str | None:
    """The general path of :func:`normalize_url`: clean, then the near path or yarl."""
    # Three `in` checks are much cheaper than str.translate, slow on non-ASCII text.
    if "\t" in raw or "\n" in raw or "\r" in raw:
        raw = raw.translate(_REMOVE_TAB_NEWLINE)
    text = raw.strip(_STRIP_CHARS)
    if not text or len(text) > max_length:
        return None
    if _near_match is not None:
        parts = _near_match(text)
        if parts is not None:
            result = _near(parts)
            if result is not None:
                return result if len(result) <= max_length else None
    return _yarl_path(text, base, absolute_only, max_length)


def _normalize_url_slow(
    raw: str, base: str | None = None, *, absolute_only: bool = False, max_length: int = 8192
) -> str | None:
    """:func:`normalize_url` with yarl's full parse for every URL: the reference the fast
    and near paths are tested against (same contract, same results, 3-15x slower)."""
    text = raw.translate(_REMOVE_TAB_NEWLINE).strip(_STRIP_CHARS)
    if not text or len(text) > max_length:
        return None
    return _yarl_path(text, base, absolute_only, max_length)


def _yarl_path(text: str, base: str | None, absolute_only: bool, max_length: int) -> str | None:
    """Resolve the cleaned ``text`` if relative, let yarl normalize it, check the result."""
    scheme = _SCHEME_RE.match(text)
    try:
        if scheme is not None:
            if scheme.group(1).lower() not in _HTTP_SCHEMES:
                return None
            if not _host_fits(text, scheme.end()):
                return None
            url = URL(text)
        elif absolute_only or base is None or not _host_fits(text, 0):
            return None
        else:
            base_url = _parse_base(base)
            if base_url is None:
                return None
            # Parse the joined URL again: join escapes some characters (':' in a first
            # segment) that parsing would decode, and the result must be a fixed point.
            url = URL(str(base_url.join(URL(text))))
        result = _to_string(url)
    except _URL_ERRORS:
        return None
    if result is None or len(result) > max_length:
        return None
    return result


# What IDNA (UTS 46) splits a host on: the full stop and its ideographic and full-width forms.
_DOTS = re.compile("[.\u3002\uff0e\uff61]")


def _host_fits(text: str, start: int) -> bool:
    """False when the host of ``text`` (its authority begins with "//" at ``start``) has a
    label over :data:`MAX_LABEL` characters or is over :data:`MAX_HOST` in all.

    Checked on the raw text, before yarl's IDNA encoding, whose cost grows with the
    label (about 0.2 s for one 4,000-character label), while this check costs one pass
    over the authority. A label with non-ASCII characters becomes "xn--" and at least one
    letter for each character, so one over 59 characters cannot fit in 63 once encoded.
    The rare labels that IDNA would shorten (characters it maps to nothing, full-width
    letters it maps to ASCII) are judged by their written length all the same.

    >>> _host_fits("https://" + "a" * 64 + ".example/", 6)
    False
    """
    if not text.startswith("//", start):
        return True  # no authority: yarl decides
    start += 2
    end = len(text)
    for stop in "/?#":
        found = text.find(stop, start, end)
        if found >= 0:
            end = found
    host = text[start:end].rpartition("@")[2]
    if host.startswith("["):
        return True  # an IPv6 literal: checked by address
    host = host.partition(":")[0]
    if host.endswith("."):
        host = host[:-1]
    if len(host) > MAX_HOST:
        return False
    if host.isascii():
        return all(len(label) <= MAX_LABEL for label in host.split("."))
    # "xn--" and at least one letter for each character: a label of more than 59 cannot fit
    return all(
        len(label) <= (MAX_LABEL if label.isascii() else MAX_LABEL - 4)
        for label in _DOTS.split(host)
    )


@lru_cache(maxsize=64)
def _parse_base(base: str) -> URL | None:
    """The base URL parsed once (a sitemap's records share it); None if unusable."""
    try:
        url = URL(base.strip(_STRIP_CHARS))
    except _URL_ERRORS:
        return None
    return url if url.absolute else None


def _to_string(url: URL) -> str | None:
    """The final string for a yarl URL, or None if its scheme or host is not acceptable."""
    if url.scheme not in _HTTP_SCHEMES or not _valid_host(url.raw_host):
        return None
    text = str(url)
    cut = text.find("#")
    if cut >= 0:
        text = text[:cut]
    # yarl prints "https://example.com" for an empty path; the key needs the root slash.
    if text.find("/", len(url.scheme) + 3) < 0:
        text += "/"
    return text


def _valid_host(host: str | None) -> bool:
    """True for a DNS-like name, an IPv4 or an IPv6 address (yarl accepts 'ex ample.com')."""
    if not host:
        return False
    if ":" in host:
        try:
            IPv6Address(host.partition("%")[0])
        except ValueError:
            return False
        return True
    return len(host.rstrip(".")) <= MAX_HOST and _HOST_RE.fullmatch(host) is not None


# --- the near path ------------------------------------------------------------------------
#
# Most URLs that miss the fast path differ from normal form only in ways yarl fixes with its
# quoters alone: a port, raw non-ASCII text, lower-case or needless escapes, an upper-case
# scheme or host, a missing path. For those the near path splits the URL with one regex and
# runs yarl's own C requoters on the path and query, exactly the calls yarl's parser makes,
# without the rest of yarl's parse (3-5x cheaper). Anything else (userinfo, IPv6 and
# non-ASCII hosts, dot segments, odd ports, relative references) goes to yarl as before.
# ``_near`` mirrors yarl 1.x ``encode_url`` + ``URL.__str__`` for this subset; the quoters
# live in a private module, so the import is guarded and the result self-checked against
# yarl at import time: if either fails, every such URL simply takes the yarl path.

# scheme, ASCII host, optional port (digits, maybe empty), path, query, fragment; split the
# way yarl's split_url does (the authority ends at the first of "/?#", the fragment at the
# first "#", the query at the first "?" before it).
_NEAR_RE = re.compile(
    r"([Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9_.-]++(?::[0-9]{0,5}+)?)"
    r"(/[^?#]*+)?(?:\?([^#]*+))?(#.*)?",
    re.DOTALL,
)
# The origin part of a _NEAR_RE match again, split into scheme, host and port.
_ORIGIN_RE = re.compile(r"([A-Za-z]+)://([A-Za-z0-9_.-]+)(?::([0-9]*))?")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Raw origin ("HTTPS://Example.com:0443") -> its normal form, or None when yarl must
# decide. The URLs of one sitemap share a few origins, so most lookups hit; when the table
# is full it starts again empty (a long-lived process moves on to other sites).
_ORIGINS: dict[str, str | None] = {}
_ORIGINS_SIZE = 1024


def _near_origin(raw: str) -> str | None:
    """``scheme://host[:port]`` in normal form for a raw origin, or None to let yarl decide."""
    parts = _ORIGIN_RE.fullmatch(raw)
    if parts is None:  # pragma: no cover - _NEAR_RE matched it
        return None
    scheme, host, port = parts.groups()
    scheme = scheme.lower()
    host = host.lower()
    if not _valid_host(host):
        return None  # yarl rejects it, or keeps an odd form: its verdict
    if port:
        number = int(port)
        if number > 65535:
            return None
        if number != _DEFAULT_PORTS[scheme]:
            return f"{scheme}://{host}:{number}"  # int() drops leading zeros, as yarl does
    return f"{scheme}://{host}"


def _near(parts: re.Match[str]) -> str | None:
    """The normalized URL for a ``_NEAR_RE`` match, or None to let yarl decide."""
    raw_origin, path, query, fragment = parts.groups()
    origin = _ORIGINS.get(raw_origin, "")
    if origin == "":
        origin = _near_origin(raw_origin)
        if len(_ORIGINS) >= _ORIGINS_SIZE:
            _ORIGINS.clear()
        _ORIGINS[raw_origin] = origin
    if origin is None:
        return None
    try:
        if path:
            path = _path_requote(path)
            if "/." in path:
                return None  # a dot segment (perhaps escaped): yarl removes it
        else:
            path = "/"
        if fragment is not None and not fragment.isascii():
            _fragment_requote(fragment)  # only for its errors: yarl's parse requotes it
        if query:
            query = _query_requote(query)  # may come out empty (a lone surrogate)
            if query:
                return f"{origin}{path}?{query}"
    except _URL_ERRORS:
        return None
    return f"{origin}{path}"


def _near_self_check() -> bool:
    """True if the near path gives yarl's result on URLs of every shape it takes."""
    samples = (
        "HTTP://Example.COM:8080/a%7eb/%c3%a9?q=%41%zz#f",
        "https://example.com:443",
        "http://example.com:0080/x?",
        "https://bücher.example.com/straße?x=ü y#ü",
        "https://example.com/%2e%2E/a%2F%2fb?%2F=%3d&a+b",
        'http://1.2.3.4:65535/~a b/[x]{y}|\\^`<>"',
        "https://example.com/\u0000\u007f\u0085\u2028/%",
    )
    for sample in samples:
        parts = _near_match(sample) if _near_match is not None else None
        near = _near(parts) if parts is not None else None
        if near is not None and near != _normalize_url_slow(sample):
            return False
    return True


_near_match: Callable[[str], re.Match[str] | None] | None = None
try:
    from yarl._quoters import FRAGMENT_REQUOTER as _fragment_requote
    from yarl._quoters import PATH_REQUOTER as _path_requote
    from yarl._quoters import QUERY_REQUOTER as _query_requote
except ImportError:  # pragma: no cover - a yarl without the module: the yarl path for all
    pass
else:
    _near_match = _NEAR_RE.fullmatch
    if not _near_self_check():  # pragma: no cover - a yarl whose quoters changed
        _near_match = None


# --- lastmod ----------------------------------------------------------------------------------

_DATE_ERRORS = (ValueError, TypeError, OverflowError, IndexError)


def parse_lastmod(text: str) -> datetime | None:
    """An aware UTC datetime from a W3C Datetime or an RFC 822 date, or None.

    Accepted: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, with ``Thh:mm[:ss[.fff]]`` (or a space
    instead of ``T``) and a zone ``Z``/``z``/``+hh:mm``/``-hh:mm``; a missing zone means UTC.
    RFC 822/2822 dates from feeds (``Thu, 05 Jan 2017 12:34:50 GMT``) need a zone.

    >>> parse_lastmod("2024-03-05T14:30:15+02:00").isoformat()
    '2024-03-05T12:30:15+00:00'
    >>> parse_lastmod("2014").isoformat()
    '2014-01-01T00:00:00+00:00'
    """
    text = text.strip()
    size = len(text)
    if size < 10 or text[4] != "-" or text[7] != "-":
        return _parse_short_or_rfc822(text, size)
    try:
        if size == 10:
            # Appending the zone is much cheaper than .replace(tzinfo=UTC) afterwards.
            return datetime.fromisoformat(text + "T00:00:00+00:00")
        value = datetime.fromisoformat(text)
    except ValueError:
        if text[-1] == "z":  # fromisoformat knows only an upper-case Z
            return parse_lastmod(text[:-1] + "Z")
        return None
    zone = value.tzinfo
    if zone is UTC:
        return value
    try:
        if zone is None:  # W3C requires a zone with a time; real sitemaps omit it: UTC
            return datetime.fromisoformat(text + "+00:00")
        return value.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _parse_short_or_rfc822(text: str, size: int) -> datetime | None:
    """``YYYY`` or ``YYYY-MM`` at midnight UTC, else an RFC 822 date, else None."""
    try:
        if size == 4 and text.isdigit():
            return datetime.fromisoformat(text + "-01-01T00:00:00+00:00")
        if size == 7 and text[4] == "-":
            return datetime.fromisoformat(text + "-01T00:00:00+00:00")
    except ValueError:
        return None
    return _parse_rfc822(text) if size > 10 else None


def _parse_rfc822(text: str) -> datetime | None:
    """An RFC 822/2822 date (RSS pubDate) with an explicit zone, in UTC; else None."""
    try:
        value = parsedate_to_datetime(text)
    except _DATE_ERRORS:
        return None
    if value.tzinfo is None:
        return None  # no zone (or -0000, "unknown"): refuse to guess
    try:
        return value.astimezone(UTC)
    except _DATE_ERRORS:
        return None


# --- changefreq and priority -------------------------------------------------------------------


def parse_changefreq(text: str) -> str | None:
    """The lower-case protocol changefreq value, or None for anything else.

    >>> parse_changefreq("\\n Daily \\n")
    'daily'
    """
    value = text.strip().lower()
    return value if value in _CHANGEFREQ_SET else None


def parse_priority(text: str) -> float | None:
    """A priority in [0, 1]; None for garbage, NaN, infinities and out-of-range values.

    >>> parse_priority(" 0.8 ")
    0.8
    >>> parse_priority("1.1") is None
    True
    """
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None  # False for NaN too
