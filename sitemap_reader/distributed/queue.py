"""The target queue on Redis: enqueue, take, heartbeat, finish, fail, status.

Theory of operation
-------------------
Targets are entries of one Redis stream read by one consumer group, so each entry is
delivered to one worker at a time and stays in the group's pending list (the PEL) until
it is acknowledged. A worker *owns* a target while the entry is pending under its
consumer name; ownership is a lease: an entry idle for longer than the lease is taken
over by the next worker that looks (``XAUTOCLAIM``, which also counts a delivery). An
owner keeps its lease by resetting the idle time (``XCLAIM ... JUSTID``, which does not
count one) from its heartbeat.

A target is settled exactly once, by its owner, in one script: ``FINISH`` (the output
file is already in place: mark it done with its summary and new state, ack, delete the
entry), or ``FAIL`` (remember the error and make the entry claimable after the retry
delay; on the last allowed delivery, move it to the dead-letter stream instead). Settled
entries are deleted, so the stream holds exactly the targets queued or in flight: the
queue is drained when the stream is empty.

Duplicates: ``enqueue`` adds a target to the stream only when it enters the ``known``
set (one script), and a worker that is handed a target already done drops the entry.
Deliveries are at least once; output is exactly once per target, because a run writes
its whole file atomically and the file of a later run of the same target replaces it.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from sitemap_reader.distributed import scripts
from sitemap_reader.distributed.config import GROUP, Keys, WorkerLimits

#: Targets sent to Redis per ``ENQUEUE`` call: a few hundred round trips per million.
ENQUEUE_CHUNK = 500
#: ``XAUTOCLAIM`` calls per take at most (see :meth:`TargetQueue._take_over`).
TAKEOVER_CALLS = 8


def text(value: Any) -> str:
    """A Redis reply value as text (replies are bytes: state blobs are binary)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


@dataclass(frozen=True, slots=True)
class Claimed:
    """One entry of an ``XAUTOCLAIM`` reply: its id, and its fields (None when the entry
    was deleted while pending; Redis 6.2 hands those out, 7 drops them)."""

    id: str
    fields: dict[str, str] | None


@dataclass(frozen=True, slots=True)
class AutoClaim:
    """An ``XAUTOCLAIM`` reply, read by position."""

    cursor: str
    entries: list[Claimed]
    deleted: list[str]


def parse_autoclaim(reply: Sequence[Any]) -> AutoClaim:
    """Read an ``XAUTOCLAIM`` reply of Redis 6.2 (cursor, entries) or 7 (cursor,
    entries, deleted ids).

    >>> parse_autoclaim([b"0-0", [[b"1-0", [b"t", b"a.com"]]]]).entries[0].fields
    {'t': 'a.com'}
    >>> parse_autoclaim([b"0-0", [], [b"2-0"]]).deleted
    ['2-0']
    """
    cursor = text(reply[0])
    entries = []
    for entry in reply[1] or ():
        if not entry:  # a nil entry: nothing to claim there
            continue
        raw = entry[1] if len(entry) > 1 else None
        if not raw:
            entries.append(Claimed(text(entry[0]), None))
            continue
        pairs = list(raw)
        fields = {text(pairs[i]): text(pairs[i + 1]) for i in range(0, len(pairs) - 1, 2)}
        entries.append(Claimed(text(entry[0]), fields))
    deleted = [text(i) for i in reply[2]] if len(reply) > 2 and reply[2] else []
    return AutoClaim(cursor, entries, deleted)


@dataclass(slots=True)
class Lease:
    """A target this worker owns: the stream entry and how often it was delivered."""

    id: str
    target: str
    deliveries: int
    taken: float = field(default_factory=time.monotonic)
    lost: bool = False  # set by the heartbeat when another worker took it over


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
        }


def consumer_name() -> str:
    """A consumer name unique to this process: host, pid and a random tail."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class TargetQueue:
    """The queue of one namespace on one Redis, as seen by one process.

    >>> async def main() -> None:                                   # doctest: +SKIP
    ...     queue = TargetQueue.from_url("redis://127.0.0.1:6379/0")
    ...     print(await queue.enqueue(["example.com", "example.org"]))
    ...     print((await queue.status()).to_dict())
    ...     await queue.close()
    """

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None) -> None:
        self.redis = client
        self.keys = keys or Keys()
        self._enqueue = client.register_script(scripts.ENQUEUE)
        self._autoclaim = client.register_script(scripts.AUTOCLAIM)
        self._finish = client.register_script(scripts.FINISH)
        self._fail = client.register_script(scripts.FAIL)
        self._release = client.register_script(scripts.RELEASE)
        self._discard = client.register_script(scripts.DISCARD)
        self._publish = client.register_script(scripts.PUBLISH)
        self._cursor = "0-0"
        self._group_ready = False

    @classmethod
    def from_url(cls, url: str, namespace: str | None = None) -> TargetQueue:
        """A queue on the Redis at ``url`` (``redis://host:port/db``)."""
        client = aioredis.Redis.from_url(url, decode_responses=False)
        return cls(client, Keys(namespace) if namespace else None)

    async def close(self) -> None:
        """Close the connections."""
        await self.redis.aclose()

    async def ensure_group(self) -> None:
        """Create the stream and the consumer group if they do not exist yet."""
        if self._group_ready:
            return
        try:
            await self.redis.xgroup_create(self.keys.targets, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    # -- producers ---------------------------------------------------------------------

    async def enqueue(self, targets: Iterable[str], *, again: bool = False) -> tuple[int, int]:
        """Queue the targets never queued before (with ``again``, also those done or
        failed); (new, queued again)."""
        await self.ensure_group()
        k = self.keys
        new = requeued = 0
        chunk: list[str] = []

        async def flush() -> None:
            nonlocal new, requeued
            if chunk:
                keys = [k.known, k.done, k.failed, k.errors, k.targets]
                added, back = await self._enqueue(keys=keys, args=["1" if again else "0", *chunk])
                new, requeued = new + int(added), requeued + int(back)
                chunk.clear()

        for target in targets:
            chunk.append(target)
            if len(chunk) >= ENQUEUE_CHUNK:
                await flush()
        await flush()
        return new, requeued

    # -- workers -----------------------------------------------------------------------

    async def take(self, consumer: str, limits: WorkerLimits) -> Lease | None:
        """The next target for ``consumer``: one whose lease lapsed first, else a new one
        (waiting up to ``limits.poll`` for it); None when there is none."""
        await self.ensure_group()
        try:
            return await self._take(consumer, limits)
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._group_ready = False  # the stream was deleted under us: make it again
            await self.ensure_group()
            return None

    async def _take(self, consumer: str, limits: WorkerLimits) -> Lease | None:
        lease = await self._take_over(consumer, limits)
        if lease is not None:
            return lease
        reply: Any = await self.redis.xreadgroup(
            GROUP,
            consumer,
            {self.keys.targets: ">"},
            count=1,
            block=max(1, int(limits.poll * 1000)),
        )
        for _stream, entries in reply or ():
            for entry_id, fields in entries:
                target = fields.get(b"t")
                if target is None:  # not one of ours: drop it
                    await self.discard(consumer, text(entry_id))
                    continue
                return Lease(text(entry_id), text(target), deliveries=1)
        return None

    async def _take_over(self, consumer: str, limits: WorkerLimits) -> Lease | None:
        """Claim one entry idle past the lease (a dead or stuck owner, or a failed try)."""
        # XAUTOCLAIM scans the pending list from a cursor kept across calls (Redis 7 looks
        # at 10 entries per call with COUNT 1): a few calls per take, and the next takes
        # go on where this one stopped, so a long pending list costs no burst.
        for _ in range(TAKEOVER_CALLS):
            reply = await self._autoclaim(
                keys=[self.keys.targets], args=[GROUP, consumer, limits.lease_ms, self._cursor]
            )
            claim = parse_autoclaim(reply)
            self._cursor = claim.cursor
            for entry in claim.entries:
                target = None if entry.fields is None else entry.fields.get("t")
                if target is None:  # deleted while pending (6.2), or not ours
                    await self.discard(consumer, entry.id)
                    continue
                return Lease(entry.id, target, await self._deliveries(entry.id))
            if claim.cursor == "0-0":
                return None
        return None

    async def _deliveries(self, entry_id: str) -> int:
        rows = await self.redis.xpending_range(
            self.keys.targets, GROUP, min=entry_id, max=entry_id, count=1
        )
        return int(rows[0]["times_delivered"]) if rows else 1

    async def is_done(self, target: str) -> bool:
        """True when the target's output is in place (a duplicate entry needs no run)."""
        return bool(await self.redis.hexists(self.keys.done, target))

    async def last_error(self, target: str) -> str | None:
        """The error of the target's last failed try, if any."""
        value = await self.redis.hget(self.keys.errors, target)
        return None if value is None else text(value)

    async def state(self, target: str) -> bytes | None:
        """The stored incremental state of a target (see :mod:`.state`)."""
        value: Any = await self.redis.hget(self.keys.state, target)
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
        """Mark the target done (its file is in place) and drop its entry; False when
        this worker no longer owns it (another worker took over and will settle it)."""
        k = self.keys
        args: list[bytes | str | int] = [
            GROUP,
            consumer,
            lease.id,
            lease.target,
            json.dumps(summary, separators=(",", ":")),
            "0" if state is None else "1",
            state or b"",
            "1" if records_end else "0",
        ]
        done = await self._finish(
            keys=[k.targets, k.done, k.errors, k.state, k.records, k.sent(lease.target)],
            args=args,
        )
        return bool(done)

    async def fail(self, consumer: str, lease: Lease, error: str, limits: WorkerLimits) -> int:
        """Record a failed try: 1 (to be retried after the retry delay), 2 (sent to the
        dead-letter stream), 0 (not the owner any more)."""
        k = self.keys
        idle = max(0, int((limits.lease - limits.retry_delay) * 1000))
        outcome = await self._fail(
            keys=[k.targets, k.errors, k.failed, k.dead, k.sent(lease.target)],
            args=[GROUP, consumer, lease.id, lease.target, error, limits.max_deliveries, idle],
        )
        return int(outcome)

    async def release(self, consumer: str, lease: Lease, limits: WorkerLimits) -> bool:
        """Give a target back at once (shutting down): any worker may take it now."""
        args: list[str | int] = [GROUP, consumer, lease.id, limits.lease_ms + 1]
        return bool(await self._release(keys=[self.keys.targets], args=args))

    async def discard(self, consumer: str, entry_id: str) -> bool:
        """Acknowledge and delete an owned entry that needs no run."""
        args = [GROUP, consumer, entry_id]
        return bool(await self._discard(keys=[self.keys.targets], args=args))

    async def publish(self, target: str, pairs: list[tuple[str, str]]) -> int:
        """Append records (URL key, JSON) to the records stream, once per URL and target."""
        args: list[str] = [target]
        for key, record in pairs:
            args += (key, record)
        return int(await self._publish(keys=[self.keys.records, self.keys.sent(target)], args=args))

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
        return int(await self.redis.xlen(self.keys.targets)) == 0

    async def status(self) -> Status:
        """Queued, in flight by worker, done, failed (dead-lettered), waiting to retry."""
        await self.ensure_group()
        k = self.keys
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xlen(k.targets)
            pipe.execute_command("XPENDING", k.targets, GROUP)
            pipe.hlen(k.done)
            pipe.hlen(k.failed)
            pipe.hlen(k.errors)
            pipe.scard(k.known)
            pipe.hgetall(k.workers)
            length, pending, done, failed, errors, known, workers = await pipe.execute()
        in_flight = _pending_by_consumer(pending)
        return Status(
            queued=int(length) - sum(in_flight.values()),
            in_flight=in_flight,
            done=int(done),
            failed=int(failed),
            retrying=int(errors),
            known=int(known),
            workers={text(name): json.loads(info) for name, info in workers.items()},
        )

    async def dead_letters(self) -> list[dict[str, str]]:
        """Every entry of the dead-letter stream (target, error, deliveries)."""
        entries: Any = await self.redis.xrange(self.keys.dead)
        return [{text(a): text(b) for a, b in fields.items()} for _id, fields in entries]


def _pending_by_consumer(summary: Any) -> dict[str, int]:
    """Per-consumer counts of an ``XPENDING key group`` summary (parsed or raw)."""
    if isinstance(summary, dict):  # redis-py's parsed form
        rows = summary.get("consumers") or []
        return {text(r["name"]): int(r["pending"]) for r in rows}
    rows = summary[3] if summary and len(summary) > 3 and summary[3] else []
    return {text(name): int(count) for name, count in rows}
