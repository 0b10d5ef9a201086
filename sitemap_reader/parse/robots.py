"""robots.txt bodies: the sitemap URLs they list and their crawl rules (on protego).

Decoding follows RFC 9309 with the repairs real files need: only the first ``max_bytes``
bytes are read (complete lines only), a UTF-8 or UTF-16 byte-order mark selects the codec
and is removed (protego would lose the first line behind it), anything else is UTF-8 with
invalid bytes replaced. ``Sitemap:`` values (any alias protego knows: ``sitemap``,
``sitemaps``, ``site-map``, any case) are resolved against the robots.txt URL, normalized,
and deduplicated in order. A value containing U+FFFD (invalid UTF-8 on that line) or one
that does not normalize is dropped. As a leniency, a line holding nothing but an absolute
http(s) URL (a forgotten ``Sitemap:``) counts too, in its place: every sitemap is returned
in document order, whichever way it was written. Not in an HTML page served as robots.txt
(a soft 404, a login wall): its bare URL lines are page links, not sitemaps
(:attr:`RobotsTxt.is_html` says so).

Groups follow RFC 9309 section 2.2: a group is a run of ``user-agent`` lines and the rules
(``allow`` / ``disallow``) after them; any other line (``crawl-delay``, ``request-rate``,
``sitemap``, comments, unknown or misspelt records) neither ends a group nor starts one.
protego ends a group at such a line, so in ``user-agent: a / crawl-delay: 5 /
user-agent: b / disallow: /x`` it would give ``a`` no rule. The lines are regrouped before
protego reads them (:func:`regroup`): each group's user-agent lines first, then its other
lines in their order, so the rules apply to every agent of the group.

Pacing (``Crawl-delay``, ``Request-rate``) is not RFC 9309's, and is read the way
crawler-commons reads it, not through protego (:class:`Pacing`): a pacing line binds the
agents named since the previous line of its kind in the same group (in ``user-agent: a /
crawl-delay: 5 / user-agent: b / disallow: /x`` the delay is ``a``'s, not ``b``'s); our
agent's values come from the most specific name that matches it (the longest one found in
it at a word boundary, as protego matches the rules), ``*`` only when no name does; when
several lines bind that name (groups merged, or a second stint of the same name), the
shortest value wins.

>>> body = b"User-agent: *\\nDisallow: /private/\\nSitemap: /sitemap.xml\\n"
>>> rules = parse_robots(body, "https://example.com/robots.txt")
>>> rules.sitemaps
('https://example.com/sitemap.xml',)
>>> rules.can_fetch("https://example.com/private/x", "mybot")
False
"""

from __future__ import annotations

import codecs
import math
import re
from dataclasses import dataclass, field
from typing import Any

from protego import Protego

from sitemap_reader.parse import sniff
from sitemap_reader.parse.normalize import normalize_url

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Pacing",
    "RobotsTxt",
    "parse_robots",
    "regroup",
    "sitemaps_from_robots",
]

#: RFC 9309 §2.5: parse at least 500 KiB (sitemap_reader.options.limits.Limits.max_robots_bytes).
DEFAULT_MAX_BYTES = 500 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# A line that is only an absolute http(s) URL, optionally followed by a comment.
_BARE_URL_RE = re.compile(r"[ \t]*(https?://[^\s#]+)[ \t]*(?:#.*)?", re.IGNORECASE)
# The start of a user-agent line and of a rule line, in every spelling protego reads
# (with or without the colon; misspelt disallows included): the two kinds that shape groups.
_AGENT_RE = re.compile(r"\s*user[- ]?agent(?=\s*:|\s|$)", re.IGNORECASE)
_RULE_RE = re.compile(
    r"\s*(?:allow|disallow|dissallow|dissalow|disalow|diasllow|disallaw)(?=\s*:|\s|$)",
    re.IGNORECASE,
)
# The two pacing records, with or without the colon (as protego spells them).
_DELAY_RE = re.compile(r"\s*crawl[- ]delay(?=\s*:|\s|$)", re.IGNORECASE)
_RATE_RE = re.compile(r"\s*request[- ]rate(?=\s*:|\s|$)", re.IGNORECASE)
# ``Request-rate: <requests>/<period>[s|m|h|d] [<time window>]``.
_RATE_VALUE_RE = re.compile(r"(\d+)/(\d+)([smhd]?)(?:\s.*)?", re.IGNORECASE)
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
CRAWL_DELAY = "crawl-delay"
REQUEST_RATE = "request-rate"


@dataclass(frozen=True, slots=True)
class Pacing:
    """The pacing lines of a robots.txt, each with the agent names it binds (see the
    module docstring), and every agent name the file has.

    >>> pacing = Pacing.read("User-agent: a\\nCrawl-delay: 5\\nUser-agent: b\\nDisallow: /x")
    >>> pacing.seconds("a", CRAWL_DELAY), pacing.seconds("b", CRAWL_DELAY)
    (5.0, None)
    """

    #: Every name of a user-agent line, lowercased.
    names: frozenset[str] = frozenset()
    #: (kind, names bound, seconds) for each pacing line that binds a name; seconds is
    #: None for a value that does not read as one (it binds, as crawler-commons has it).
    lines: tuple[tuple[str, frozenset[str], float | None], ...] = ()

    @classmethod
    def read(cls, text: str) -> Pacing:
        """The pacing lines of a decoded robots.txt."""
        names: set[str] = set()
        lines: list[tuple[str, frozenset[str], float | None]] = []
        pending: dict[str, set[str]] = {CRAWL_DELAY: set(), REQUEST_RATE: set()}
        ruled = False
        for line in text.splitlines():
            code = line.split("#", 1)[0]
            if agent := _AGENT_RE.match(code):
                if ruled:  # a new group: what the previous one named binds nothing more
                    ruled = False
                    for bound in pending.values():
                        bound.clear()
                added = _agent_names(_value(code, agent.end()))
                names.update(added)
                for bound in pending.values():
                    bound.update(added)
            elif _RULE_RE.match(code):
                ruled = True
            else:
                kind, seconds = _pacing(code)
                if kind and pending[kind]:
                    lines.append((kind, frozenset(pending[kind]), seconds))
                    pending[kind].clear()
        return cls(frozenset(names), tuple(lines))

    def seconds(self, agent: str, kind: str) -> float | None:
        """Seconds between requests that the lines of ``kind`` ask of ``agent``, or None."""
        chosen = self.chosen(agent)
        found = [s for k, bound, s in self.lines if k == kind and bound & chosen and s is not None]
        return min(found) if found else None

    def chosen(self, agent: str) -> frozenset[str]:
        """The names whose lines apply to ``agent``: the longest that match, else ``*``."""
        agent = agent.strip().lower()
        scores = {name: len(name) for name in self.names if name != "*" and _names(name, agent)}
        if not scores:
            return frozenset({"*"})
        best = max(scores.values())
        return frozenset(name for name, score in scores.items() if score == best)


@dataclass(frozen=True, slots=True)
class RobotsTxt:
    """A parsed robots.txt: its sitemap URLs, and its rules through protego."""

    sitemaps: tuple[str, ...]
    rules: Any = field(compare=False, repr=False)
    #: The body is an HTML page, not a robots.txt (its bare URL lines were not taken).
    is_html: bool = False
    #: Its Crawl-delay and Request-rate lines, and the agents each binds.
    pacing: Pacing = field(default=Pacing(), compare=False, repr=False)

    def can_fetch(self, url: str, agent: str) -> bool:
        """Whether the crawler named ``agent`` may fetch ``url`` under these rules."""
        return bool(self.rules.can_fetch(url, agent))

    def crawl_delay(self, agent: str) -> float | None:
        """The ``Crawl-delay`` for the crawler named ``agent`` in seconds, or None."""
        return self.pacing.seconds(agent, CRAWL_DELAY)

    def request_interval(self, agent: str) -> float | None:
        """Seconds per request of the ``Request-rate`` for ``agent`` (``1/5s``: 5), or None."""
        return self.pacing.seconds(agent, REQUEST_RATE)


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
    rules = Protego.parse(regroup(text))
    is_html = _is_html(text)
    values = _in_order(text, list(rules.sitemaps), bare=not is_html)
    return RobotsTxt(
        sitemaps=_resolve(values, robots_url),
        rules=rules,
        is_html=is_html,
        pacing=Pacing.read(text),
    )


def regroup(text: str) -> str:
    """The lines of a robots.txt grouped as RFC 9309 says, for a parser that ends a group
    at any line that is not a user-agent line: each group's user-agent lines first, then
    its other lines in order (see the module docstring).

    >>> print(regroup("User-agent: a\\nCrawl-delay: 5\\nUser-agent: b\\nDisallow: /x"))
    User-agent: a
    User-agent: b
    Crawl-delay: 5
    Disallow: /x
    """
    out: list[str] = []  # everything before the first user-agent line, then done groups
    agents: list[str] = []
    body: list[str] = []
    ruled = False
    for line in text.splitlines():  # the line breaks protego splits on
        code = line.split("#", 1)[0]
        if _AGENT_RE.match(code):
            if ruled:  # a user-agent line after a rule starts the next group
                out += agents + body
                agents, body, ruled = [], [], False
            agents.append(line)
        elif agents:
            body.append(line)
            ruled = ruled or _RULE_RE.match(code) is not None
        else:
            out.append(line)
    return "\n".join(out + agents + body)


def _value(code: str, start: int) -> str:
    """The value of a record whose field ends at ``start`` (the colon is optional)."""
    return code[start:].strip().removeprefix(":").strip()


def _agent_names(value: str) -> set[str]:
    """The names a user-agent value gives, lowercased: the value, and without its ``*``
    when it has one and is not ``*`` (protego matches both), none when empty."""
    name = value.lower()
    names = {name, name.replace("*", "")} if name != "*" else {name}
    return {n for n in names if n}


def _names(name: str, agent: str) -> bool:
    """Whether a robots.txt agent ``name`` names our ``agent``: found in it where a word
    starts (``bot`` does not name ``mybot``; ``mybot`` names ``Mozilla (mybot/1.0)``)."""
    return re.search(r"(?<![\w-])" + re.escape(name), agent) is not None


def _pacing(code: str) -> tuple[str, float | None]:
    """The kind of a pacing line ("" for another line) and its seconds per request."""
    if delay := _DELAY_RE.match(code):
        try:
            seconds = float(_value(code, delay.end()))
        except ValueError:
            return CRAWL_DELAY, None
        return CRAWL_DELAY, seconds if math.isfinite(seconds) and seconds >= 0 else None
    if rate := _RATE_RE.match(code):
        value = _RATE_VALUE_RE.fullmatch(_value(code, rate.end()))
        if value is None or int(value.group(1)) == 0:
            return REQUEST_RATE, None
        period = int(value.group(2)) * _UNIT_SECONDS[value.group(3).lower()]
        return REQUEST_RATE, period / int(value.group(1))
    return "", None


def _is_html(text: str) -> bool:
    """True when the body is an HTML page (sniffed like a sitemap body)."""
    head = sniff.strip_prolog(text[: sniff.SNIFF_BYTES].encode("utf-8", "replace"))
    return sniff.classify(head, final=True) == sniff.HTML


def _in_order(text: str, directives: list[str], *, bare: bool = True) -> list[str]:
    """The ``Sitemap:`` values protego found and the bare URL lines, in document order.

    protego reads the directives (every alias and spelling it accepts) in order but says
    not where; a bare URL line is never one of them (and is taken only when ``bare``).
    So the lines are walked once, with protego's values consumed in order: each at the
    first line that holds it after the previous one and names a sitemap directive (every
    alias contains "site").
    """
    found: list[str] = []
    pending = iter(directives)
    wanted = next(pending, None)
    for line in text.splitlines():  # the line breaks protego splits on
        url = _BARE_URL_RE.fullmatch(line) if bare else None
        if url is not None:
            found.append(url.group(1))
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
