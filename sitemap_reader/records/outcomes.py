"""How a run or one of its sitemaps ended early, as data: :class:`Stopped`, :class:`Skipped`.

Codes and values for programs; the words a person reads are rendered by the door that
shows them (the CLI with its flags, the Python doors with the option names:
:mod:`sitemap_reader._words`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

#: Why a run ended before it read everything. ``deadline`` and ``budget`` are the core's
#: own (its ``deadline`` and ``max_urls``); ``asked`` is the caller's (a signal, a closed
#: loader); ``output-closed`` and ``output-failed`` are a door's (the reader of its output
#: went away, its output could not be written).
StopKind = Literal["deadline", "budget", "asked", "output-closed", "output-failed"]


@dataclass(frozen=True, slots=True)
class Stopped:
    """Why a run stopped early, as data: what stopped it, the option whose bound was
    reached and its value, or the signal that asked. Words are the door's to choose.

    >>> Stopped("budget", option="max_urls", limit=10).to_dict()
    {'kind': 'budget', 'option': 'max_urls', 'limit': 10}
    """

    kind: StopKind
    #: The option whose bound was reached (``deadline``, ``max_urls``).
    option: str | None = None
    #: Its value: seconds, or records.
    limit: float | None = None
    #: What asked for the stop: a signal's name (``SIGINT``), None for the caller.
    signal: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The stop as JSON: its kind, and what else it has."""
        found: dict[str, Any] = {"kind": self.kind}
        for name in ("option", "limit", "signal"):
            value = getattr(self, name)
            if value is not None:
                found[name] = value
        return found


@dataclass(frozen=True, slots=True)
class Skipped:
    """Why a node was not fetched: a code for programs, plain words for people (a door
    may render its own from the code), and the detail where there is one (the answer a
    probe got).

    Codes: ``stopped`` (the run stopped first), ``visited`` (fetched once a run),
    ``robots-txt`` (robots.txt is not a sitemap), ``not-read`` (beyond ``read_depth``:
    listed on purpose), ``follow`` (not matched by ``follow``), ``older`` (an index
    lastmod older than ``since``), ``limit-depth``, ``limit-sitemaps``,
    ``limit-html-depth``, ``limit-html-pages`` (a bound), ``redirect`` (redirects to
    robots.txt or a visited sitemap), ``not-found`` (a probe that found nothing),
    ``robots-off`` (robots.txt not read), ``page`` (a listed loc kept as a page).
    """

    code: str
    reason: str
    detail: str | None = None

    def __str__(self) -> str:
        return self.reason

    def to_dict(self) -> dict[str, Any]:
        """The skip as JSON."""
        found: dict[str, Any] = {"code": self.code, "reason": self.reason}
        if self.detail is not None:
            found["detail"] = self.detail
        return found


#: How a target ended: what it gave, and if nothing, why.
VerdictKind = Literal[
    "ok", "partial", "empty", "absent", "blocked", "unreachable", "broken", "refused", "stopped"
]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One thing a verdict rests on: a URL, its status, a code (a block rule, a problem's
    code, ``not-found``, a stop's kind) and what was seen (a block's signals, a reason)."""

    url: str
    status: int | None = None
    code: str = ""
    seen: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The evidence as JSON."""
        found: dict[str, Any] = {"url": self.url, "code": self.code}
        if self.status is not None:
            found["status"] = self.status
        if self.seen:
            found["seen"] = list(self.seen)
        return found


@dataclass(frozen=True, slots=True)
class Verdict:
    """How one target ended, with its evidence:

    ``ok`` (its sitemaps were read), ``partial`` (some failed), ``empty`` (sitemaps found,
    no URL), ``absent`` (no sitemap anywhere we looked), ``blocked`` (bot protection
    answered instead of the site), ``unreachable`` (DNS, connect, TLS), ``broken``
    (sitemaps found but unreadable, or the server failing), ``refused`` (our own address
    guard, or robots.txt rules we obey), ``stopped`` (the deadline, the records budget, a
    signal: the site was not read to its end). ``urls`` counts the page URLs its
    sitemaps listed (before scope and dedupe). ``ladder`` is the verdict of the first
    attempt (``blocked``) when the client ladder (``client="auto"``) read the target once
    more with the browser client: this verdict is then that second attempt's.
    """

    target: str
    kind: VerdictKind
    urls: int = 0
    evidence: tuple[Evidence, ...] = ()
    ladder: Verdict | None = None

    def to_dict(self) -> dict[str, Any]:
        """The verdict as JSON."""
        return {
            "target": self.target,
            "kind": self.kind,
            "urls": self.urls,
            "evidence": [e.to_dict() for e in self.evidence],
            **({"ladder": self.ladder.to_dict()} if self.ladder is not None else {}),
        }
