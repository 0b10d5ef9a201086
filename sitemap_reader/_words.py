"""Words for humans: counts with their noun in the right number, lists in a line, and the
words of a stop, with each door's spelling of the options.

Every count the command prints next to a noun goes through :func:`plural`, so no line
says ``1 files`` or ``1 URLs`` (tests read every human line for that).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sitemap_reader.records.outcomes import Stopped, Verdict

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


def verdict_phrase(verdict: Verdict, *, named: bool = False) -> str:
    """A target's verdict in a few words: its kind, what listed how many URLs, or what
    blocked it (a failure's reason and a stop's are said by their own lines).

    >>> from sitemap_reader.records.outcomes import Evidence
    >>> verdict_phrase(Verdict("e.com", "blocked", 0, (Evidence("https://e.com/robots.txt",
    ...     403, "akamai", ("Akamai bot manager", "server: AkamaiGHost", "HTTP 403")),)))
    'blocked: Akamai bot manager answered https://e.com/robots.txt (server: AkamaiGHost, HTTP 403)'

    A target the client ladder read again (``client="auto"``) says so, with the first verdict:

    >>> wall = Verdict("e.com", "blocked", 0, (Evidence("https://e.com/robots.txt", 403,
    ...     "cloudflare-challenge", ("Cloudflare challenge", "HTTP 403")),))
    >>> phrase = verdict_phrase(Verdict("e.com", "ok", 3, (), wall))
    >>> phrase.split("; ")[0]
    'ok (3 URLs listed)'
    >>> phrase.split("; ")[1].startswith("read again with the browser client after aiohttp was")
    True
    """
    who = f"{verdict.target}: " if named else ""
    ladder = verdict.ladder
    after = (
        ""
        if ladder is None
        else (f"; read again with the browser client after aiohttp was {verdict_phrase(ladder)}")
    )
    first = verdict.evidence[0] if verdict.evidence else None
    if verdict.kind == "ok":
        return f"{who}ok ({plural(verdict.urls, 'URL')} listed){after}"
    if verdict.kind != "blocked" or first is None:
        return f"{who}{verdict.kind}{after}"
    words, *signals = first.seen  # the status is among the signals
    return f"{who}blocked: {words} answered {first.url} ({', '.join(signals)}){after}"
