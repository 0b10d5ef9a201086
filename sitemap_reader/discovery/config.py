"""What a run of the discovery core is asked to do: :class:`Config` (policy, not I/O)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sitemap_reader.errors import UsageError
from sitemap_reader.limits import Limits
from sitemap_reader.parse.scope import SCOPE_MODES
from sitemap_reader.scoring import ScoreFunc

#: ``Config.html``: off, read HTML sitemap pages when nothing else was found, or always.
HTML_MODES = (None, "fallback", "always")


def html_mode(value: bool | str | None) -> str | None:
    """``Config.html`` from a keyword: True is ``"fallback"``, False and None are off.

    >>> html_mode(True), html_mode("always"), html_mode(False)
    ('fallback', 'always', None)
    """
    if value is True:
        return "fallback"
    if value is False or value is None:
        return None
    return value


def compile_patterns(
    values: Iterable[str | re.Pattern[str]], option: str = "follow"
) -> tuple[re.Pattern[str], ...]:
    """Regexes from strings (compiled ones pass through); a bad one is a :class:`UsageError`
    naming ``option``, never ``re.error``.

    >>> compile_patterns(["/blog/"])[0].search("https://example.com/blog/a") is not None
    True
    >>> compile_patterns(["("], "--follow")
    Traceback (most recent call last):
    ...
    sitemap_reader.errors.UsageError: --follow: bad regular expression '(': missing ), ...
    """
    if isinstance(values, str | re.Pattern):
        values = [values]  # one pattern given alone, not its characters
    patterns: list[re.Pattern[str]] = []
    for value in values:
        if isinstance(value, re.Pattern):
            patterns.append(value)
            continue
        if not isinstance(value, str):
            raise UsageError(f"{option}: a pattern is a string or a compiled regex, not {value!r}")
        try:
            patterns.append(re.compile(value))
        except re.error as exc:
            raise UsageError(f"{option}: bad regular expression {value!r}: {exc}") from None
    return tuple(patterns)


@dataclass(frozen=True, slots=True)
class Config:
    """The policy of a run, the same for every driver.

    ``timeout`` is the per-sitemap budget in seconds (``Limits.sitemap_timeout`` when
    None); drivers enforce it and the core names it in the problem. ``follow`` are
    regexes a child sitemap of an index must match to be fetched (empty: all); as
    Scrapy's ``sitemap_follow``, the sitemaps robots.txt lists are always read. ``score``
    replaces the default ranking score. ``merge_duplicates``: the output is held (ranked,
    ``top``), so the in-scope copies of URLs already emitted go out too, as
    :attr:`~sitemap_reader.discovery.actions.Emit.repeats`, for the holder to merge.

    Politeness and robots.txt: ``user_agent`` is the name robots.txt rules are read
    for; every record on the origin of a robots.txt that was read says whether those
    rules allow it (``robots``), and ``obey_robots`` drops the disallowed ones. ``delay``
    is the least time in seconds between two requests to one host; ``crawl_delay``
    honours a robots.txt ``Crawl-delay`` / ``Request-rate`` for its host (capped at
    ``Limits.max_crawl_delay``). ``guess_paths`` replaces the well-known paths probed
    when robots.txt lists no sitemap (None: :data:`~sitemap_reader.discovery.WELL_KNOWN_PATHS`).
    ``read_depth``: children of an index deeper than this are listed in the tree as
    "not read" (a choice, not a limit: neither a problem nor counted as skipped).

    More ways in (:mod:`~sitemap_reader.discovery.ways`): ``html`` reads HTML sitemap
    pages, ``"fallback"`` when no XML or text sitemap was found, ``"always"`` beside
    them (None: never); ``parent`` reads the parent domain's sitemaps for a subdomain that
    has none, keeping the URLs under the subdomain; ``since`` skips, unfetched, the index
    children whose lastmod is older; ``follow_urlset`` reads a urlset ``<loc>`` ending in
    ``.xml`` / ``.xml.gz`` as a sitemap when its body is one.
    ``deadline`` bounds the whole run in seconds (None: no bound): once it passed, the
    run stops as a URL budget stops it, and what was read is kept (the driver supplies
    the clock, see :meth:`~sitemap_reader.discovery.Discovery.overdue`).
    """

    limits: Limits = field(default_factory=Limits)
    strict: bool = False
    scope: str = "site"
    robots: bool = True
    guess: bool = True
    timeout: float | None = None
    score: ScoreFunc | None = None
    follow: tuple[re.Pattern[str], ...] = ()
    merge_duplicates: bool = False
    user_agent: str = "sitemap-reader"
    obey_robots: bool = False
    delay: float = 0.0
    crawl_delay: bool = True
    guess_paths: tuple[str, ...] | None = None
    read_depth: int | None = None
    html: str | None = None
    parent: bool = False
    since: datetime | None = None
    follow_urlset: bool = False
    deadline: float | None = None

    def __post_init__(self) -> None:
        if self.html not in HTML_MODES:
            raise UsageError(f"html must be one of fallback, always (or off), not {self.html!r}")
        if self.since is not None and self.since.tzinfo is None:
            raise UsageError("since must be an aware datetime (with a time zone)")
        if self.scope not in SCOPE_MODES:
            raise UsageError(f"scope must be one of {', '.join(SCOPE_MODES)}, not {self.scope!r}")
        if self.timeout is not None and self.timeout <= 0:
            raise UsageError("timeout must be positive")
        if self.deadline is not None and not 0 < self.deadline < float("inf"):
            raise UsageError("deadline must be a number of seconds > 0")
        if not self.delay >= 0 or self.delay == float("inf"):
            raise UsageError("delay must be a number of seconds >= 0")
        if self.read_depth is not None and self.read_depth < 0:
            raise UsageError("read_depth must be >= 0")
        for path in self.guess_paths or ():
            if not path.startswith("/"):
                raise UsageError(f"a probed path starts with '/': {path!r}")

    @property
    def seconds(self) -> float:
        """The per-sitemap budget, resolved."""
        return self.limits.sitemap_timeout if self.timeout is None else self.timeout
