"""The target queue on Redis: enqueue, take, heartbeat, commit, fail, status.

Theory of operation
-------------------
Targets are entries of one Redis stream read by one consumer group, so each entry is
delivered to one worker at a time and stays in the group's pending list (the PEL) until
it is settled. A worker *owns* a target while its claim (``{ns}:claims``, see
:mod:`.scripts`) names it with the current attempt and the entry is pending under it.
Ownership is a lease: the owner resets the entry's idle time from its heartbeat, and an
entry idle past the lease *its owner* declared is taken over by the next worker that
looks, as the next attempt. Every write of a run carries its fencing token (entry id,
attempt) and is refused once a later attempt exists.

A target is settled once, by its owner, in one script: ``FINISH`` (the fenced commit:
done with its summary and new state; its attempt-named file is renamed into place only
then), or ``FAIL`` (the error is kept and the entry waits under ``~retry`` for the retry
delay; past the failure limit it goes to the dead-letter stream). Failures are counted
apart from deliveries: a give-back (``~free``) costs nothing, and a takeover from a dead
owner counts a failure only for a target that was run alone (see ``TAKEOVER``). Settled
entries are deleted, so the stream holds exactly the targets queued or in flight.

Redis going away (a restart, a partition) is ridden out: every call is retried with capped
exponential backoff and jitter for ``redis_wait`` seconds. A queue that vanished (its id
gone: a restart without persistence) raises :class:`QueueGone`; it is never re-created
by a worker that already knew it.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, AuthorizationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from sitemap_reader._safe_text import printable, redact_url
from sitemap_reader.discovery.targets import canonical_spelling
from sitemap_reader.distributed import scripts
from sitemap_reader.distributed.config import (
    COMMIT_TTL,
    FREE,
    GROUP,
    RETRY,
    SENT_TTL,
    Keys,
    WorkerLimits,
    check_redis_url,
)
from sitemap_reader.errors import SitemapReaderError

T = TypeVar("T")

#: Targets sent to Redis per ``ENQUEUE`` call: a few hundred round trips per million.
ENQUEUE_CHUNK = 500
#: Pending entries one ``TAKEOVER`` call looks at: the next call goes on from there, so a
#: long pending list costs a bounded script per take, never a burst.
TAKEOVER_ROWS = 100
#: Dead letters ``status`` shows (newest first); the count of all is kept by Redis.
STATUS_DEAD = 10
#: Backoff between reconnection tries: doubles from the first to the cap, each wait
#: drawn in its upper half (jitter, so a fleet does not reconnect in step).
BACKOFF_FIRST = 0.05
BACKOFF_CAP = 5.0
#: The errors of a connection that went away (a restart, a partition, a timeout).
TRANSIENT = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError)


#: The scripts of :mod:`.scripts` a queue runs.
_SCRIPT_NAMES: tuple[str, ...] = ("OPEN", "ENQUEUE", "REGISTER", "TAKEOVER", "FINISH")
_SCRIPT_NAMES += ("FAIL", "RELEASE", "DISCARD", "PUBLISH", "LIVE")


class QueueGone(SitemapReaderError):
    """The queue vanished from Redis (restarted without persistence, or deleted)."""


class RedisUnavailable(SitemapReaderError):
    """Redis could not be reached for longer than the worker's ``redis_wait``."""


def text(value: Any) -> str:
    """A Redis reply value as text (replies are bytes: state blobs are binary)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


@dataclass(slots=True)
class Lease:
    """A target this worker owns: the entry, its attempt (with the id, the fencing token),
    the failures counted so far, and whether it must run alone (a suspect)."""

    id: str
    target: str
    attempt: int = 1
    failures: int = 0
    solo: bool = False
    taken: float = field(default_factory=time.monotonic)
    lost: bool = False  # set by the heartbeat when another attempt took it over

    @property
    def token(self) -> str:
        """The fencing token: entry id and attempt."""
        return f"{self.id}.{self.attempt}"


@dataclass(frozen=True, slots=True)
class Status:
    """What a queue holds: ``status`` prints it."""

    queued: int
    in_flight: dict[str, int]
    done: int
    failed: int
    retrying: int
    known: int
    workers: dict[str, dict[str, Any]]
    dead_letters: list[dict[str, str]]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``status --json``."""
        return {
            "queued": self.queued,
            "in_flight": sum(self.in_flight.values()),
            "in_flight_by_worker": self.in_flight,
            "done": self.done,
            "failed": self.failed,
            "retrying": self.retrying,
            "known": self.known,
            "workers": self.workers,
            "dead_letters": self.dead_letters,
        }


def consumer_name() -> str:
    """A consumer name unique to this process: host, pid and a random tail."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _lease(entry_id: str, claim: Any, target: str) -> Lease:
    c = json.loads(text(claim))
    return Lease(entry_id, target, int(c["a"]), int(c["f"]), bool(c["q"]))


class TargetQueue:
    """The queue of one namespace on one Redis, as seen by one process.

    ``wait`` is how long a call keeps retrying while Redis is away (0: fail at once).

    >>> async def main() -> None:                                   # doctest: +SKIP
    ...     queue = TargetQueue.from_url("redis://127.0.0.1:6379/0")
    ...     print(await queue.enqueue(["example.com", "example.org"]))
    ...     print((await queue.status()).to_dict())
    ...     await queue.close()
    """

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None, wait: float = 0) -> None:
        self.redis = client
        self.keys = keys or Keys()
        self.wait = wait
        self.where = "?"  # the server, as it may be printed (no password)
        self.id: str | None = None
        self._scripts = {
            name: client.register_script(getattr(scripts, name)) for name in _SCRIPT_NAMES
        }
        self._cursor = "0-0"

    @classmethod
    def from_url(
        cls, url: str, namespace: str | None = None, limits: WorkerLimits | None = None
    ) -> TargetQueue:
        """A queue on the Redis at ``url`` (``redis://host:port/db``); with ``limits``, a
        worker's queue (socket timeouts, and retries for ``limits.redis_wait``)."""
        check_redis_url(url)
        timeout = limits.socket_timeout if limits else WorkerLimits().socket_timeout
        # No retries inside redis-py (its default retries each call ten times, so a
        # held socket costs eleven socket timeouts): :meth:`_call` is the one retry loop,
        # bounded by ``redis_wait`` and ended by a cancellation (SIGTERM) at once.
        client = aioredis.Redis.from_url(
            url,
            decode_responses=False,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )
        keys = Keys(namespace) if namespace else None
        queue = cls(client, keys, limits.redis_wait if limits else 0)
        queue.where = printable(redact_url(url))
        return queue

    async def close(self) -> None:
        """Close the connections."""
        await self.redis.aclose()

    async def _call(self, op: Callable[[], Awaitable[T]], *, once: bool = False) -> T:
        """``op()``, retried while Redis is away, for up to ``wait`` seconds (``once``:
        tried once, as a give-back while shutting down is).

        A task being cancelled (SIGTERM) is never retried: a cancellation that surfaces
        as a socket timeout or a lost connection (the timeout of a read fired with it)
        would otherwise be swallowed here, and the worker would go on for good."""
        first: float | None = None
        delay = BACKOFF_FIRST
        while True:
            if not once:
                raise_if_cancelling()
            try:
                return await op()
            except (AuthenticationError, AuthorizationError):
                raise  # not an outage: waiting will not change the password
            except TRANSIENT as exc:
                if not once:
                    raise_if_cancelling()
                now = time.monotonic()
                first = now if first is None else first
                if once or now - first >= self.wait:
                    gone = RedisUnavailable(
                        f"cannot reach Redis at {self.where} (tried for {now - first:.0f} s, "
                        f"--redis-wait {self.wait:g}): {redact_url(str(exc))}"
                    )
                    self.wait = 0  # given up: what follows (give-backs) fails at once
                    raise gone from exc
                await asyncio.sleep(random.uniform(delay / 2, delay))
                delay = min(BACKOFF_CAP, delay * 2)
            except ResponseError as exc:
                if "SRQUEUEGONE" in str(exc) or "NOGROUP" in str(exc):
                    raise QueueGone(
                        f"the queue {self.keys.namespace!r} is gone from Redis (restarted "
                        "without persistence, or deleted); not making it again"
                    ) from exc
                raise

    async def _script(
        self, name: str, keys: list[str], args: Sequence[Any], *, once: bool = False
    ) -> Any:
        """Run one of :mod:`.scripts` with the common keys and arguments in front."""
        queue_id = self.id
        if queue_id is None:
            raise QueueGone(f"the queue {self.keys.namespace!r} was not opened")
        k = self.keys
        script = self._scripts[name]
        every = [k.queue_id, k.targets, k.claims, *keys]
        return await self._call(
            lambda: script(keys=every, args=[queue_id, GROUP, *args]), once=once
        )

    async def open(self, *, create: bool = True) -> str | None:
        """The queue's id, made with its stream and group when there is none and ``create``
        (None when there is no queue and not ``create``)."""
        if self.id is not None:
            return self.id
        k = self.keys
        script = self._scripts["OPEN"]
        args = [uuid.uuid4().hex, GROUP, "1" if create else "0"]
        found = await self._call(lambda: script(keys=[k.queue_id, k.targets], args=args))
        self.id = None if found is None else text(found)
        return self.id

    # -- producers ---------------------------------------------------------------------

    async def enqueue(self, targets: Iterable[str], *, again: bool = False) -> tuple[int, int]:
        """Queue the targets never queued before (with ``again``, also those done or
        failed), each in its canonical spelling (``Example.com.`` is ``example.com``: one
        site is one target); (new, queued again). A file or standard input is refused
        (:class:`~sitemap_reader.errors.UsageError`)."""
        await self.open()
        k = self.keys
        new = requeued = 0
        chunk: list[str] = []

        async def flush() -> None:
            nonlocal new, requeued
            if chunk:
                keys = [k.known, k.done, k.failed, k.errors]
                added, back = await self._script("ENQUEUE", keys, ["1" if again else "0", *chunk])
                new, requeued = new + int(added), requeued + int(back)
                chunk.clear()

        for target in targets:
            chunk.append(canonical_spelling(target))
            if len(chunk) >= ENQUEUE_CHUNK:
                await flush()
        await flush()
        return new, requeued

    # -- workers -----------------------------------------------------------------------

    async def take(self, consumer: str, limits: WorkerLimits) -> Lease | None:
        """The next target for ``consumer``: one whose lease lapsed (or that was given back,
        or waited out its retry delay) first, else a new one (waiting up to
        ``limits.poll`` for it); None when there is none."""
        await self.open()
        args = [consumer, limits.lease_ms, self._cursor, TAKEOVER_ROWS]
        reply = await self._script("TAKEOVER", [], args)
        self._cursor = text(reply[0])
        if len(reply) > 1:
            pairs = [text(v) for v in reply[3:]]
            fields = dict(zip(pairs[::2], pairs[1::2], strict=True))
            return _lease(text(reply[1]), reply[2], fields.get("t", ""))
        block = max(1, int(limits.poll_seconds * 1000))
        streams: Any = {self.keys.targets: ">"}
        read: Any = await self._call(
            lambda: self.redis.xreadgroup(GROUP, consumer, streams, count=1, block=block)
        )
        for _stream, entries in read or ():
            for entry_id, fields in entries:
                eid = text(entry_id)
                claim = await self._script("REGISTER", [], [consumer, eid, limits.lease_ms])
                if claim is None:
                    continue
                return _lease(eid, claim, text(fields.get(b"t", b"")))
        return None

    async def is_done(self, target: str) -> bool:
        """True when the target's output is in place (a duplicate entry needs no run)."""
        return bool(await self._call(lambda: self.redis.hexists(self.keys.done, target)))

    async def last_error(self, target: str) -> str | None:
        """The error of the target's last failed try, if any."""
        value = await self._call(lambda: self.redis.hget(self.keys.errors, target))
        return None if value is None else text(value)

    async def state(self, target: str) -> bytes | None:
        """The stored incremental state of a target (see :mod:`.state`)."""
        value: Any = await self._call(lambda: self.redis.hget(self.keys.state, target))
        return None if value is None else bytes(value)

    async def finish(
        self,
        consumer: str,
        lease: Lease,
        summary: dict[str, Any],
        *,
        state: bytes | None = None,
        records_end: bool = False,
    ) -> bool:
        """The fenced commit: mark the target done and drop its entry; False when this
        attempt no longer owns it. On True the caller renames its file into place, then
        calls :meth:`renamed`."""
        k = self.keys
        keys = [k.done, k.errors, k.state, k.records, k.sent(lease.target), k.commit(lease.token)]
        args: list[bytes | str | int] = [
            consumer,
            lease.id,
            lease.attempt,
            lease.target,
            json.dumps(summary, separators=(",", ":")),
            "0" if state is None else "1",
            state or b"",
            "1" if records_end else "0",
            COMMIT_TTL,
        ]
        return bool(await self._script("FINISH", keys, args))

    async def renamed(self, token: str) -> None:
        """The file of the attempt ``token`` is in place: drop its commit marker."""
        await self._call(lambda: self.redis.delete(self.keys.commit(token)))

    async def committed(self, token: str) -> bool:
        """Whether the attempt ``token`` won its commit and its file waits for its rename."""
        return bool(await self._call(lambda: self.redis.exists(self.keys.commit(token))))

    async def live(self, entry_id: str, attempt: int) -> bool:
        """Whether the attempt still holds its claim (its file is not a leftover)."""
        return bool(await self._script("LIVE", [], [entry_id, attempt]))

    async def fail(
        self, consumer: str, lease: Lease, error: str, limits: WorkerLimits, *, count: int = 1
    ) -> int:
        """Record a failed try (``count`` failures): 1 (to be retried after the retry
        delay), 2 (sent to the dead-letter stream), 0 (not the owner any more)."""
        k = self.keys
        keys = [k.errors, k.failed, k.dead, k.sent(lease.target)]
        args = [consumer, lease.id, lease.attempt, lease.target, error]
        return int(
            await self._script("FAIL", keys, [*args, limits.max_deliveries, limits.retry_ms, count])
        )

    async def release(self, consumer: str, lease: Lease) -> bool:
        """Give a target back at once (shutting down): any worker may take it now. Tried
        once (one socket timeout at most): a worker told to stop does not wait for Redis;
        a target not given back is taken over when its lease lapses."""
        args = [consumer, lease.id, lease.attempt]
        return bool(await self._script("RELEASE", [], args, once=True))

    async def discard(self, consumer: str, lease: Lease) -> bool:
        """Acknowledge and delete an owned entry that needs no run."""
        return bool(await self._script("DISCARD", [], [consumer, lease.id, lease.attempt]))

    async def publish(self, consumer: str, lease: Lease, pairs: list[tuple[str, str]]) -> int:
        """Append records (URL key, JSON) to the records stream, once per URL and target;
        -1 when this attempt does not own the target any more (nothing appended)."""
        k = self.keys
        args: list[str | int] = [consumer, lease.id, lease.attempt, lease.target, SENT_TTL]
        for key, record in pairs:
            args += (key, record)
        return int(await self._script("PUBLISH", [k.records, k.sent(lease.target)], args))

    async def leave(self, consumer: str) -> None:
        """Forget a worker that stops: its heartbeat entry, and its consumer when it holds
        nothing (a consumer with pending entries stays, so they can be taken over)."""
        await self.redis.hdel(self.keys.workers, consumer)
        rows = await self.redis.xpending_range(
            self.keys.targets, GROUP, min="-", max="+", count=1, consumername=consumer
        )
        if not rows:
            await self.redis.xgroup_delconsumer(self.keys.targets, GROUP, consumer)

    # -- observers ---------------------------------------------------------------------

    async def empty(self) -> bool:
        """True when nothing is queued and nothing is in flight on any worker."""
        return int(await self._call(lambda: self.redis.xlen(self.keys.targets))) == 0

    async def status(self, dead: int = STATUS_DEAD) -> Status:
        """Queued, in flight by worker, done, failed (dead-lettered), waiting to retry, and
        the ``dead`` newest dead letters: bounded reads, whatever the queue holds."""
        if await self.open(create=False) is None:
            return Status(0, {}, 0, 0, 0, 0, {}, [])
        k = self.keys
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xlen(k.targets)
            pipe.execute_command("XPENDING", k.targets, GROUP)
            pipe.hlen(k.done)
            pipe.hlen(k.failed)
            pipe.scard(k.known)
            pipe.hgetall(k.workers)
            pipe.xrevrange(k.dead, count=dead)
            length, pending, done, failed, known, workers, letters = await pipe.execute()
        held = _pending_by_consumer(pending)
        retrying = held.pop(RETRY, 0)
        held.pop(FREE, None)  # given back: queued again
        return Status(
            queued=int(length) - sum(held.values()) - retrying,
            in_flight=held,
            done=int(done),
            failed=int(failed),
            retrying=retrying,
            known=int(known),
            workers={text(name): json.loads(info) for name, info in workers.items()},
            dead_letters=[{text(a): text(b) for a, b in f.items()} for _id, f in letters],
        )


def raise_if_cancelling() -> None:
    """Raise CancelledError when the current task was asked to stop (even if the request
    was caught on its way, e.g. turned into a timeout by a read's own deadline)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def _pending_by_consumer(summary: Any) -> dict[str, int]:
    """Per-consumer counts of an ``XPENDING key group`` summary (parsed or raw)."""
    if isinstance(summary, dict):  # redis-py's parsed form
        rows = summary.get("consumers") or []
        return {text(r["name"]): int(r["pending"]) for r in rows}
    rows = summary[3] if summary and len(summary) > 3 and summary[3] else []
    return {text(name): int(count) for name, count in rows}
