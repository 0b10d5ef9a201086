"""Words for humans: counts with their noun in the right number, lists in a line, and plain
failure reasons.

Every count the command prints next to a noun goes through :func:`plural`, so no line
says ``1 files`` or ``1 URLs`` (tests read every human line for that).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sitemap_reader.records.outcomes import Stopped

#: Nouns whose plural is not the noun with an ``s``.
_IRREGULAR = {"child sitemap": "child sitemaps", "entry": "entries", "was": "were"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 file``, ``2 files``, ``12,345 URLs``: the count (with thousands separators)
    and the noun in the number the count asks for.

    >>> plural(1, "file"), plural(2, "file"), plural(1_000, "entry")
    ('1 file', '2 files', '1,000 entries')
    """
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {many or _IRREGULAR.get(noun) or noun + 's'}"


def listing(items: Sequence[str], shown: int = 3) -> str:
    """``a, b, c and 4 more``: the first ``shown`` items, then how many are left.

    >>> listing(["a"]), listing(["a", "b"]), listing(["a", "b", "c", "d", "e"])
    ('a', 'a and b', 'a, b, c and 2 more')
    """
    head = list(items[:shown])
    rest = len(items) - len(head)
    if rest:
        return f"{', '.join(head)} and {rest:,} more"
    if len(head) <= 1:
        return "".join(head)
    return f"{', '.join(head[:-1])} and {head[-1]}"


# --------------------------------------------------------------------------- stops

#: How a door names an option in its words (the Python name unless it says otherwise).
Spell = Callable[[str], str]
#: The words of a signal that asked a run to stop.
_SIGNALS = {"SIGINT": "Ctrl-C"}


def stop_phrase(stopped: Stopped, spell: Spell = str) -> str:
    """What a stop means, in words, with the option spelled by the door that shows it.

    >>> stop_phrase(Stopped("deadline", "deadline", 30.0))
    'stopped at the deadline (30 s)'
    >>> stop_phrase(Stopped("budget", "max_urls", 10), lambda name: "--max-urls")
    'stopped after 10 URLs (--max-urls)'
    >>> stop_phrase(Stopped("asked", signal="SIGINT")), stop_phrase(Stopped("output-failed"))
    ('interrupted (Ctrl-C)', 'stopped: output failed')
    """
    option = spell(stopped.option) if stopped.option else None
    if stopped.kind == "deadline":
        return f"stopped at the deadline ({stopped.limit or 0:g} s)"
    if stopped.kind == "budget":
        return f"stopped after {plural(int(stopped.limit or 0), 'URL')} ({option})"
    if stopped.kind == "asked":
        if stopped.signal is None:
            return "stopped: asked to stop"
        return f"interrupted ({_SIGNALS.get(stopped.signal, stopped.signal)})"
    return f"stopped: {stopped.kind.replace('-', ' ')}"


# --------------------------------------------------------------------------- reasons

#: (pattern in the raw text, plain reason), first match wins. The raw text comes from
#: aiohttp's exception messages, which carry the OS or SSL error inside them.
_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reason)
    for pattern, reason in (
        (r"CERTIFICATE_VERIFY_FAILED|certificate verify failed", "certificate invalid"),
        (r"hostname mismatch|doesn't match|not valid for", "certificate invalid (wrong host)"),
        (r"WRONG_VERSION_NUMBER|wrong version number", "TLS handshake failed (not HTTPS?)"),
        (r"\[SSL|SSLError|ClientSSLError", "TLS handshake failed"),
        (r"Connect call failed|Connection refused|ECONNREFUSED", "connection refused"),
        (
            r"Name or service not known|nodename nor servname|No address associated|"
            r"getaddrinfo failed|Temporary failure in name resolution|DNSError",
            "name not found",
        ),
        (r"Network is unreachable|No route to host", "network unreachable"),
        (r"Connection reset|ServerDisconnected|Server disconnected", "connection reset"),
    )
)


def plain_reason(text: str) -> str:
    """A failure text with raw exception detail replaced by a plain reason.

    Each ``; ``-separated part is looked at on its own; the exception part (``SomeError:
    detail``) becomes the reason and the host it names. Text naming no known low-level
    error is returned as it is.

    >>> plain_reason("cannot connect: ClientConnectorError: Cannot connect to host "
    ...              "127.0.0.1:9 ssl:default [Connect call failed ('127.0.0.1', 9)]")
    'cannot connect: connection refused (127.0.0.1:9)'
    >>> plain_reason("HTTP 404")
    'HTTP 404'
    """
    return "; ".join(_plain_part(part) for part in text.split("; "))


_EXCEPTION = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception): ")
_HOST = re.compile(r"to host (\S+?)(?::443|:80)? ssl:")


def _plain_part(part: str) -> str:
    found = _EXCEPTION.search(part)
    if found is None:
        return part
    start = found.start()
    close = part.rfind("]", start)
    end = close + 1 if close != -1 else len(part)
    if close == -1 and part.endswith(")") and part.count("(") > part.count(")") - 1:
        end = len(part) - 1  # keep the parenthesis the exception text sits in
    detail = part[start:end]
    for pattern, reason in _REASONS:
        if pattern.search(detail):
            host = _HOST.search(detail)
            plain = f"{reason} ({host.group(1)})" if host else reason
            return part[:start] + plain + part[end:]
    return part
