"""Keeping leases alive from a thread, whatever the event loop is busy with.

Parsing runs on the worker's event loop: a heartbeat task there would wait behind a
long stretch of parsing (or a blocked loop) and let the lease lapse while the target is
still being read, so another worker would read it again. The heartbeat therefore runs
in a daemon thread with its own synchronous Redis connection; Python switches threads
every few milliseconds even while the loop's thread parses, so a refresh is never late
by more than that. A lease is refreshed only while its run is inside its time budget
(``target_timeout``): a run that hangs for good loses its target to another worker
instead of holding it forever. The beat also carries when the event loop last ran
(:meth:`Heartbeat.tick`), so ``status`` can tell a blocked worker from a busy one.
Every refresh is fenced by the lease's attempt (see :mod:`.scripts`).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from sitemap_reader._safe_text import printable
from sitemap_reader.distributed import scripts
from sitemap_reader.distributed.config import GROUP, Keys, WorkerLimits
from sitemap_reader.distributed.queue import Lease

log = logging.getLogger("sitemap_reader.distributed")


class Heartbeat:
    """Refreshes the leases of one consumer every ``limits.heartbeat`` seconds.

    Use as a context manager; :meth:`hold` and :meth:`drop` tell it which leases the
    worker holds (they may be called from the loop's thread at any time).
    """

    def __init__(
        self, url: str, keys: Keys, queue_id: str, consumer: str, limits: WorkerLimits
    ) -> None:
        self.keys = keys
        self.queue_id = queue_id
        self.consumer = consumer
        self.limits = limits
        self.beats = 0
        # A beat that hangs (Redis stalled) gives up after one interval: the next beat
        # tries again, and the lease (three intervals) is still alive by then. No retries
        # inside redis-py (its default is ten per call, each a socket timeout).
        self._client = redis.Redis.from_url(
            url,
            decode_responses=False,
            socket_timeout=limits.heartbeat,
            socket_connect_timeout=limits.heartbeat,
            retry=Retry(NoBackoff(), 0),
        )
        self._script = self._client.register_script(scripts.HEARTBEAT)
        self._held: dict[str, Lease] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="lease-heartbeat", daemon=True)
        self._started = time.time()
        self._loop_seen = self._started
        self._failing = False

    def tick(self) -> None:
        """The event loop ran just now (called from the loop's thread)."""
        self._loop_seen = time.time()

    def __enter__(self) -> Heartbeat:
        self.beat()  # register the worker before it takes anything
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(self.limits.heartbeat + 5)
        self._client.close()

    def hold(self, lease: Lease) -> None:
        """Keep ``lease`` alive from now on."""
        with self._lock:
            self._held[lease.id] = lease

    def drop(self, lease: Lease) -> None:
        """Stop refreshing ``lease`` (its target is settled or given back)."""
        with self._lock:
            self._held.pop(lease.id, None)

    def _main(self) -> None:
        while not self._stop.wait(self.limits.heartbeat):
            try:
                self.beat()
            except redis.RedisError as exc:  # Redis away for a moment: try again next beat
                if not self._failing:  # one line per outage, not one per beat
                    log.warning("heartbeat failed (will keep trying): %s", printable(str(exc)))
                self._failing = True
            else:
                self._failing = False

    def beat(self) -> None:
        """One refresh of every lease within its time budget, and of the worker's entry."""
        now = time.monotonic()
        with self._lock:
            leases = [
                lease
                for lease in self._held.values()
                if now - lease.taken < self.limits.target_timeout
            ]
        info = self._info(leases)
        k = self.keys
        tokens = [part for lease in leases for part in (lease.id, lease.attempt)]
        held = self._script(
            keys=[k.queue_id, k.targets, k.claims, k.workers],
            args=[self.queue_id, GROUP, self.consumer, json.dumps(info), *tokens],
        )
        for lease, still in zip(leases, held, strict=True):
            if not int(still) and not lease.lost:
                lease.lost = True
                log.warning(
                    "lost the lease on %s: another worker took it over", printable(lease.target)
                )
        self.beats += 1

    def _info(self, leases: list[Lease]) -> dict[str, Any]:
        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": round(self._started, 3),
            "seen": round(time.time(), 3),
            "loop": round(self._loop_seen, 3),
            "lease": self.limits.lease,
            "targets": [lease.target for lease in leases],
        }
