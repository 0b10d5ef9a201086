"""robots.txt bodies: the sitemap URLs they list and their crawl rules (on protego).

Decoding follows RFC 9309 with the repairs real files need: only the first ``max_bytes``
bytes are read (complete lines only), a UTF-8 or UTF-16 byte-order mark selects the codec
and is removed (protego would lose the first line behind it), anything else is UTF-8 with
invalid bytes replaced. ``Sitemap:`` values (any alias protego knows: ``sitemap``,
``sitemaps``, ``site-map``, any case) are resolved against the robots.txt URL, normalized,
and deduplicated in order. A value containing U+FFFD (invalid UTF-8 on that line) or one
that does not normalize is dropped. As a leniency, a line holding nothing but an absolute
http(s) URL (a forgotten ``Sitemap:``) counts too, in its place: every sitemap is returned
in document order, whichever way it was written.

>>> body = b"User-agent: *\\nDisallow: /private/\\nSitemap: /sitemap.xml\\n"
>>> rules = parse_robots(body, "https://example.com/robots.txt")
>>> rules.sitemaps
('https://example.com/sitemap.xml',)
>>> rules.can_fetch("https://example.com/private/x", "mybot")
False
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from typing import Any

from protego import Protego

from sitemap_reader.parse.normalize import normalize_url

__all__ = ["DEFAULT_MAX_BYTES", "RobotsTxt", "parse_robots", "sitemaps_from_robots"]

#: RFC 9309 §2.5: parse at least 500 KiB (sitemap_reader.limits.Limits.max_robots_bytes).
DEFAULT_MAX_BYTES = 500 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# A line that is only an absolute http(s) URL, optionally followed by a comment.
_BARE_URL_RE = re.compile(r"[ \t]*(https?://[^\s#]+)[ \t]*(?:#.*)?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RobotsTxt:
    """A parsed robots.txt: its sitemap URLs, and its rules through protego."""

    sitemaps: tuple[str, ...]
    rules: Any = field(compare=False, repr=False)

    def can_fetch(self, url: str, user_agent: str) -> bool:
        """Whether ``user_agent`` may fetch ``url`` under these rules."""
        return bool(self.rules.can_fetch(url, user_agent))

    def crawl_delay(self, user_agent: str) -> float | None:
        """The ``Crawl-delay`` for ``user_agent`` in seconds, or None."""
        delay = self.rules.crawl_delay(user_agent)
        return None if delay is None else float(delay)


def sitemaps_from_robots(
    body: bytes | str, robots_url: str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> list[str]:
    """The sitemap URLs a robots.txt lists: absolute, normalized, deduplicated, in order.

    >>> sitemaps_from_robots("Sitemap: https://example.com/a.xml", "https://example.com/robots.txt")
    ['https://example.com/a.xml']
    """
    return list(parse_robots(body, robots_url, max_bytes=max_bytes).sitemaps)


def parse_robots(
    body: bytes | str, robots_url: str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> RobotsTxt:
    """Parse a robots.txt body fetched from ``robots_url``. Never raises on content."""
    text = decode_robots(body, max_bytes)
    rules = Protego.parse(text)
    values = _in_order(text, list(rules.sitemaps))
    return RobotsTxt(sitemaps=_resolve(values, robots_url), rules=rules)


def _in_order(text: str, directives: list[str]) -> list[str]:
    """The ``Sitemap:`` values protego found and the bare URL lines, in document order.

    protego reads the directives (every alias and spelling it accepts) in order but says
    not where; a bare URL line is never one of them. So the lines are walked once, with
    protego's values consumed in order: each at the first line that holds it after the
    previous one and names a sitemap directive (every alias contains "site").
    """
    found: list[str] = []
    pending = iter(directives)
    wanted = next(pending, None)
    for line in text.splitlines():  # the line breaks protego splits on
        bare = _BARE_URL_RE.fullmatch(line)
        if bare is not None:
            found.append(bare.group(1))
        elif wanted is not None and wanted in line and "site" in line.lower():
            found.append(wanted)
            wanted = next(pending, None)
    if wanted is not None:  # pragma: no cover - defensive: a value not matched to a line
        found.append(wanted)
        found.extend(pending)
    return found


def decode_robots(body: bytes | str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The text of a robots.txt body: first ``max_bytes`` bytes, BOM-sniffed, BOM removed."""
    if isinstance(body, str):
        if len(body) > max_bytes // 4:
            body = body.encode("utf-8", "replace")
        else:
            return body.lstrip("\ufeff")
    codec = "utf-8"
    for bom, name in _BOMS:
        if body.startswith(bom):
            body, codec = body[len(bom) :], name
            break
    if len(body) > max_bytes:
        body = _complete_lines(body[:max_bytes], "\n".encode(codec))
    return body.decode(codec, "replace").lstrip("\ufeff")


def _complete_lines(data: bytes, newline: bytes) -> bytes:
    """``data`` cut after its last line break (a cut line is not trusted)."""
    end = data.rfind(newline)
    return data[: end + len(newline)] if end >= 0 else data


def _resolve(values: list[str], robots_url: str) -> tuple[str, ...]:
    """Resolve, normalize and deduplicate sitemap values, keeping the first occurrence."""
    seen: dict[str, None] = {}
    for value in values:
        if "\ufffd" in value:
            continue
        url = normalize_url(value, robots_url)
        if url is not None:
            seen.setdefault(url, None)
    return tuple(seen)
