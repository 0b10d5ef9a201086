"""Distributed discovery on Redis: many workers, on many machines, sharing one queue.

Install with ``pip install 'sitemap-reader[distributed]'`` (the ``redis`` package's
asyncio client). Targets go into a Redis stream read by one consumer group; each worker
owns whole targets under a lease kept alive by a heartbeat, writes each target's records
to an attempt-named file, and makes it visible only after its fenced commit won (a worker
whose lease is gone cannot change what is visible). Delivery is at least once, output
exactly once per target. See docs/tutorials/data-engineer.md, "Without a cluster".

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

EXTRA_MESSAGE = (
    "sitemap_reader.distributed needs the 'distributed' extra: "
    "pip install 'sitemap-reader[distributed]'"
)

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
        raise ImportError(EXTRA_MESSAGE)


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
