"""What a run of the discovery core is asked to do: :class:`Config` (policy, not I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sitemap_reader.errors import UsageError
from sitemap_reader.limits import Limits
from sitemap_reader.parse.scope import SCOPE_MODES
from sitemap_reader.scoring import ScoreFunc


@dataclass(frozen=True, slots=True)
class Config:
    """The policy of a run, the same for every driver.

    ``timeout`` is the per-sitemap budget in seconds (``Limits.sitemap_timeout`` when
    None); drivers enforce it and the core names it in the problem. ``follow`` are
    regexes a listed child sitemap must match to be fetched (empty: all). ``score``
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
    deadline: float | None = None

    def __post_init__(self) -> None:
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
