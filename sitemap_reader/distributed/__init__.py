"""Distributed discovery on Redis: many workers, on many machines, sharing one queue.

Needs the ``distributed`` extra (the ``redis`` package's asyncio client; the error of a
missing name says how to install it here). Targets go into a Redis stream read by one
consumer group; each worker owns whole targets under a lease kept alive by a heartbeat,
writes each target's records to an attempt-named file, and makes it visible only after
its fenced commit won (a worker whose lease is gone cannot change what is visible).
Delivery is at least once, output exactly once per target. See
docs/tutorials/data-engineer.md, "Without a cluster".

>>> from sitemap_reader.distributed import Output, TargetQueue, Worker  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from sitemap_reader.distributed.config import (
    Keys,
    WorkerLimits,
    check_redis_url,
    output_name,
)
from sitemap_reader.errors import missing_extra

#: Why the names that need redis cannot be had, and how to get them.
NEEDS = "sitemap_reader.distributed needs the 'distributed' extra"

# Without redis, the names that need it raise an ImportError naming the extra; config
# (key names, limits, file names) still imports, for the command line's help.
try:
    import redis.asyncio  # noqa: F401
except ImportError:
    HAVE_REDIS = False
else:
    HAVE_REDIS = True

if HAVE_REDIS:
    from sitemap_reader.distributed.queue import QueueGone, RedisUnavailable, Status, TargetQueue
    from sitemap_reader.distributed.worker import (
        Output,
        TargetRunner,
        Worker,
        WorkerReport,
        run_discovery,
    )
else:  # pragma: no cover - exercised by a subprocess test

    def __getattr__(name: str) -> Any:
        raise missing_extra(NEEDS, "distributed")


__all__ = [
    "Keys",
    "Output",
    "QueueGone",
    "RedisUnavailable",
    "Status",
    "TargetQueue",
    "TargetRunner",
    "Worker",
    "WorkerLimits",
    "WorkerReport",
    "check_redis_url",
    "output_name",
    "run_discovery",
]
