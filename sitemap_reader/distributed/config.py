"""The names and the bounds of the distributed queue: Redis keys, worker limits, file names.

Everything two workers must agree on lives here: the key layout of a queue (one
namespace, every key under one hash tag so the Lua scripts also work on Redis Cluster)
and the name of the output file of a target. The bounds of a worker are named with their
defaults and the reason for each, as :mod:`sitemap_reader.limits` does for a run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

from sitemap_reader.errors import UsageError

#: The namespace of a queue when none is given: the key prefix of every key.
DEFAULT_NAMESPACE: Final = "sitemap-reader"
#: The consumer group every worker of a queue joins (one group: each target goes to one
#: worker at a time).
GROUP: Final = "workers"
#: Extension of an output file, by ``--format``.
SUFFIXES: Final = {"jsonl": ".jsonl", "csv": ".csv", "txt": ".txt"}

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class WorkerLimits:
    """How long a worker may hold a target, and how often it may fail.

    >>> WorkerLimits().heartbeat
    10.0
    """

    #: Seconds a target stays owned by a worker without a heartbeat; past it, any worker
    #: takes it over (``XAUTOCLAIM``). What a killed worker costs in delay: 30 s is long
    #: against a GC pause or a busy Redis, short against a crawl of millions of domains.
    lease: float = 30.0
    #: Deliveries of one target before it goes to the dead-letter stream. Three rides out
    #: a transient outage or a worker killed once or twice; a target that fails three
    #: times in a row (on workers that may be on other machines) is broken.
    max_deliveries: int = 3
    #: Seconds before a target that failed may be taken again: a site that is down for a
    #: moment gets a moment; 0 retries at once (tests).
    retry_delay: float = 10.0
    #: Seconds one target may run before the worker gives up on it (counts as a failure):
    #: heartbeats keep a lease alive as long as the run goes on, so a run that never ends
    #: would hold its target forever. Per-sitemap timeouts make an hour generous.
    target_timeout: float = 3600.0
    #: Seconds a worker waits on the stream for new targets before it looks for targets
    #: to take over, and (with ``--drain``) whether the queue is empty.
    poll: float = 1.0

    def __post_init__(self) -> None:
        if not self.lease > 0 or not self.target_timeout > 0 or not self.poll > 0:
            raise UsageError("lease, target timeout and poll must be positive")
        if self.max_deliveries < 1:
            raise UsageError("max_deliveries must be at least 1")
        if not 0 <= self.retry_delay <= self.lease:
            raise UsageError("retry_delay must be between 0 and the lease")

    @property
    def heartbeat(self) -> float:
        """Seconds between lease refreshes: three chances before the lease lapses."""
        return self.lease / 3

    @property
    def lease_ms(self) -> int:
        """The lease in milliseconds (Redis idle times are in ms)."""
        return max(1, int(self.lease * 1000))


@dataclass(frozen=True, slots=True)
class Keys:
    """The Redis keys of one queue. ``{ns}`` is a hash tag: all keys share one slot.

    >>> Keys("q").targets
    '{q}:targets'
    """

    namespace: str = DEFAULT_NAMESPACE

    def _key(self, name: str) -> str:
        return f"{{{self.namespace}}}:{name}"

    @property
    def targets(self) -> str:
        """Stream of targets to do (field ``t``); entries are deleted once settled."""
        return self._key("targets")

    @property
    def known(self) -> str:
        """Set of every target ever enqueued: what makes ``enqueue`` idempotent."""
        return self._key("known")

    @property
    def done(self) -> str:
        """Hash target -> JSON summary of the run whose output is in place."""
        return self._key("done")

    @property
    def errors(self) -> str:
        """Hash target -> last error, while the target waits for another try."""
        return self._key("errors")

    @property
    def failed(self) -> str:
        """Hash target -> last error, for targets sent to the dead-letter stream."""
        return self._key("failed")

    @property
    def dead(self) -> str:
        """Dead-letter stream: fields ``t`` (target), ``error``, ``deliveries``."""
        return self._key("dead")

    @property
    def state(self) -> str:
        """Hash target -> incremental state (a compressed SQLite state file)."""
        return self._key("state")

    @property
    def workers(self) -> str:
        """Hash consumer -> JSON (host, pid, last heartbeat, targets held)."""
        return self._key("workers")

    @property
    def records(self) -> str:
        """Stream of records (fields ``t``, ``r``), and an end marker per target (``end``)."""
        return self._key("records")

    def sent(self, target: str) -> str:
        """Set of the URL keys of a target already in :attr:`records` (while it runs)."""
        digest = hashlib.blake2b(target.encode("utf-8", "surrogatepass"), digest_size=8)
        return self._key(f"sent:{digest.hexdigest()}")


def output_name(target: str, fmt: str = "jsonl") -> str:
    """The file name of a target's output: the target itself when it is a safe name,
    else a readable slug and a hash (so two targets never share a file).

    >>> output_name("example.com")
    'example.com.jsonl'
    >>> output_name("https://example.com/sitemap.xml")
    'https-example.com-sitemap.xml-6a8973f4864ac54f.jsonl'
    """
    suffix = SUFFIXES[fmt]
    if _SAFE_NAME.fullmatch(target) and not target.endswith("."):
        return target + suffix
    slug = _UNSAFE_RUN.sub("-", target).strip("-.")[:80] or "target"
    digest = hashlib.blake2b(target.encode("utf-8", "surrogatepass"), digest_size=8)
    return f"{slug}-{digest.hexdigest()}{suffix}"
