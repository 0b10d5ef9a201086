"""The state one run shares between the parts of the core (:class:`RunState`).

Every part of :class:`~sitemap_reader.discovery.Discovery` gets this one object in its
constructor: the options, the run and its stats, the run-wide dedupe and the set of
sitemaps visited, the crawl delays robots.txt asked for, the sites, the clock and the
deadline, and whether (and why) the run stopped. What only one part needs (the jobs and
their tickets, the records held back) lives in that part.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from sitemap_reader.discovery.actions import Action, Stop
from sitemap_reader.discovery.dedupe import Seen, url_set
from sitemap_reader.discovery.job import Site
from sitemap_reader.discovery.model import Run, Stopped
from sitemap_reader.discovery.observer import NULL_OBSERVER, Observer
from sitemap_reader.discovery.rules import server_of
from sitemap_reader.discovery.targets import Target
from sitemap_reader.options import Options


class RunState:
    """What the parts of one run share (see the module docstring)."""

    def __init__(
        self,
        targets: Sequence[Target],
        options: Options,
        *,
        observer: Observer | None,
        run: Run | None,
        now: datetime | None,
        clock: Callable[[], float],
    ) -> None:
        self.options = options
        self.limits = options.limits
        self.targets = list(targets)
        self.run = run if run is not None else Run(targets=tuple(t.text for t in targets))
        self.stats = self.run.stats
        self.observer = observer or NULL_OBSERVER
        #: The run's "now": scores do not depend on when a record is built.
        self.now = now or datetime.now(UTC)
        #: Names this run in its tickets (a ticket of another run is rebuilt into a job).
        self.token = uuid.uuid4().hex[:12]
        #: The driver's clock (seconds, monotonic) and the instant the run's deadline passes.
        self.clock = clock
        deadline = options.timeouts.deadline
        self.deadline_at = None if deadline is None else clock() + deadline
        self.deadline_passed = False
        #: The run-wide dedupe of page URLs.
        self.seen: Seen = url_set()
        #: Every sitemap scheduled and every hop followed (normalized): fetched once a run.
        self.visited: set[str] = set()
        #: Crawl delays robots.txt asked for, by server (``host[:port]``), as honoured.
        self.delays: dict[str, float] = {}
        self.sites: list[Site] = []
        self.stopped: Stopped | None = None

    def stop(self, stopped: Stopped) -> list[Action]:
        """End the run early (the first stop is the one kept): queued sitemaps are
        skipped, the bodies being read end (:class:`Stop` tells the driver)."""
        if self.stopped is not None:
            return []
        self.stopped = self.stats.stopped = stopped
        return [Stop(stopped)]

    def overdue(self) -> list[Action]:
        """Stop the run if its deadline passed."""
        if self.stopped is not None or not self.due():
            return []
        self.deadline_passed = True
        return self.stop(Stopped("deadline", "deadline", self.options.timeouts.deadline))

    def due(self) -> bool:
        """True once the run's deadline passed: read between two calls of a function of
        the caller's (``follow``, ``score``), so a slow one ends the run at most one call
        late (:meth:`overdue` then stops it)."""
        return self.deadline_at is not None and self.clock() >= self.deadline_at

    def remaining(self) -> float | None:
        """Seconds until the run's deadline (0 once it passed; None without one)."""
        if self.deadline_at is None:
            return None
        return max(0.0, self.deadline_at - self.clock())

    def delay_for(self, url: str) -> float:
        """Seconds between two requests to the server of ``url``: the ``delay`` option, or
        the crawl delay its robots.txt asked for (capped) when that is longer."""
        return max(self.options.politeness.delay, self.delays.get(server_of(url), 0.0))

    def in_scope(self, url: str, sitemap_url: str | None) -> bool:
        """Whether any target's scope allows ``url``."""
        return any(s.url_scope is None or s.url_scope.allows(url, sitemap_url) for s in self.sites)
