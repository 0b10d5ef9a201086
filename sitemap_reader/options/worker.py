"""The knobs of the Redis workers (``sitemap-reader worker``, and
:class:`~sitemap_reader.distributed.Worker`'s ``limits``), declared like every other
option: the flags of ``worker`` are derived from here.

What each default is for is said beside it; a worker and the queue it shares must agree on
none of them (each worker may have its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sitemap_reader.options.declare import Declared, OptionError, count, option, seconds

#: Why these are no other door's options.
_WORKER: Final = "the Redis workers' own"
#: Why some are not flags of ``sitemap-reader worker``.
_PYTHON: Final = "Python only: distributed.Worker(limits=...)"
#: The retry delay and the poll when not given: at most these, and at most the lease's
#: share (a short lease in tests must not wait longer than it).
RETRY_DELAY: Final = 10.0
POLL: Final = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerLimits(Declared):
    """How long a worker may hold a target, and how often it may fail.

    >>> WorkerLimits().heartbeat, WorkerLimits(lease=3).retry_delay
    (10.0, 3.0)
    """

    #: Past it, any worker takes the target over (``XAUTOCLAIM``). What a killed worker
    #: costs in delay: 30 s is long against a GC pause or a busy Redis, short against a
    #: crawl of millions of domains.
    lease: float = option(
        30.0,
        "seconds without a heartbeat before another worker takes a target over",
        convert=seconds(),
        metavar="S",
        scrapy=_WORKER,
        loader=_WORKER,
    )
    #: A run that raised, timed out, or killed its worker while it ran alone counts;
    #: give-backs and takeovers of innocent neighbours do not. Three rides out a transient
    #: outage; a target that fails three times (maybe on other machines) is broken.
    max_deliveries: int = option(
        3,
        "failed tries of a target before the dead-letter stream (give-backs and innocent "
        "neighbours of a crash are free)",
        convert=count(1),
        metavar="N",
        scrapy=_WORKER,
        loader=_WORKER,
    )
    #: A site that is down for a moment gets a moment; 0 retries at once (tests).
    retry_delay: float | None = option(
        None,
        f"seconds before a failed target is tried again (default {RETRY_DELAY:g}, at most the "
        "lease)",
        convert=seconds(optional=True, zero=True),
        metavar="S",
        scrapy=_WORKER,
        loader=_WORKER,
    )
    #: Heartbeats keep a lease alive as long as the run goes on, so a run that never ends
    #: would hold its target forever. Per-sitemap timeouts make an hour generous.
    target_timeout: float = option(
        3600.0,
        "seconds one target may run (then it counts as a failed try)",
        convert=seconds(),
        metavar="S",
        scrapy=_WORKER,
        loader=_WORKER,
    )
    #: Restarts take seconds, failovers under a minute: three minutes rides out both
    #: without hiding a Redis that is gone for good.
    redis_wait: float = option(
        180.0,
        "seconds to keep reconnecting while Redis is away, then stop with an error",
        convert=seconds(zero=True),
        metavar="S",
        scrapy=_WORKER,
        loader=_WORKER,
    )
    #: Then it looks for targets to take over, and (``drain``) whether the queue is empty.
    poll: float | None = option(
        None,
        f"seconds a worker waits on the queue for new targets (default {POLL:g}, at most a "
        "third of the lease)",
        convert=seconds(optional=True),
        cli=_PYTHON,
        scrapy=_WORKER,
        loader=_WORKER,
    )
    #: Without it a half-open connection hangs a worker forever. Above the blocking read
    #: of ``poll`` and a slow script on a busy server.
    socket_timeout: float = option(
        10.0,
        "seconds one Redis call may take before it counts as a lost connection (retried)",
        convert=seconds(),
        cli=_PYTHON,
        scrapy=_WORKER,
        loader=_WORKER,
    )

    def __post_init__(self) -> None:
        Declared.__post_init__(self)
        if self.retry_delay is None:
            object.__setattr__(self, "retry_delay", min(RETRY_DELAY, self.lease))
        elif self.retry_delay > self.lease:
            raise OptionError("retry_delay", "at most the lease")
        if self.poll is None:
            object.__setattr__(self, "poll", min(POLL, self.lease / 3))
        if not self.socket_timeout > self.poll_seconds:
            raise OptionError("socket_timeout", "must be above the poll")

    @property
    def poll_seconds(self) -> float:
        """``poll``, as set (never None once built)."""
        return POLL if self.poll is None else self.poll

    @property
    def retry_seconds(self) -> float:
        """``retry_delay``, as set (never None once built)."""
        return RETRY_DELAY if self.retry_delay is None else self.retry_delay

    @property
    def heartbeat(self) -> float:
        """Seconds between lease refreshes: three chances before the lease lapses."""
        return self.lease / 3

    @property
    def lease_ms(self) -> int:
        """The lease in milliseconds (Redis idle times are in ms)."""
        return max(1, int(self.lease * 1000))

    @property
    def retry_ms(self) -> int:
        """The retry delay in milliseconds."""
        return int(self.retry_seconds * 1000)
