"""The queue's steps against a real Redis, in process: claims, fencing, heartbeats, state."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import redis

import sitemap_reader as sr
from sitemap_reader.distributed import (
    Output,
    StateOptions,
    TargetQueue,
    Worker,
    WorkerLimits,
    parse_autoclaim,
)
from sitemap_reader.distributed.config import GROUP, Keys
from sitemap_reader.distributed.heartbeat import Heartbeat
from sitemap_reader.distributed.state import MAGIC
from tests.distributed.farm import Farm
from tests.distributed.proc_kit import Peek, file_of, outputs, wait_until
from tests.distributed.redis_kit import RedisServer

QUICK = WorkerLimits(lease=0.3, retry_delay=0.0, poll=0.1)


def test_autoclaim_replies_of_redis_6_2_and_7_read_alike() -> None:
    """XAUTOCLAIM's 2-element (6.2) and 3-element (7) replies give the same entries."""
    entry = [b"5-0", [b"t", b"a.example"]]
    old = parse_autoclaim([b"0-0", [entry, None]])
    new = parse_autoclaim([b"7-0", [entry], [b"6-0"]])
    assert [(e.id, e.fields) for e in old.entries] == [("5-0", {"t": "a.example"})]
    assert [(e.id, e.fields) for e in new.entries] == [("5-0", {"t": "a.example"})]
    assert (old.cursor, old.deleted, new.cursor, new.deleted) == ("0-0", [], "7-0", ["6-0"])
    deleted_on_6_2 = parse_autoclaim([b"0-0", [[b"8-0", None]]])
    assert deleted_on_6_2.entries[0].fields is None


def _idle_past(peek: Peek, lease: float) -> bool:
    rows = peek.pending()
    return bool(rows) and all(r["time_since_delivered"] >= lease * 1000 for r in rows)


async def test_a_lapsed_lease_is_taken_over_and_the_old_owner_is_fenced_off(
    redis_server: RedisServer, namespace: str
) -> None:
    """After the lease, another worker takes the target; the first can no longer settle it."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    try:
        assert await queue.enqueue(["a.example"]) == (1, 0)
        first = await queue.take("first", QUICK)
        assert first is not None and (first.target, first.deliveries) == ("a.example", 1)
        assert await queue.take("second", QUICK) is None  # still leased
        wait_until(lambda: _idle_past(peek, QUICK.lease), "the lease to lapse")
        second = await queue.take("second", QUICK)  # through XAUTOCLAIM, live
        assert second is not None and (second.id, second.deliveries) == (first.id, 2)
        assert await queue.finish("first", first, {"urls": 1}) is False
        assert await queue.fail("first", first, "boom", QUICK) == 0
        assert not await queue.is_done("a.example")
        assert await queue.finish("second", second, {"urls": 1}) is True
        assert await queue.is_done("a.example")
        assert await queue.empty()
        print(f"\nRedis {redis_server.version}: XAUTOCLAIM takeover read by position")
    finally:
        peek.close()
        await queue.close()


async def test_the_heartbeat_keeps_a_lease_while_the_loop_thread_is_busy_parsing(
    redis_server: RedisServer, namespace: str
) -> None:
    """A CPU-bound parse on the loop's thread for 4 leases: the lease never lapses."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    body = "".join(f"https://example.com/{i}\n" for i in range(20_000)).encode()
    try:
        await queue.enqueue(["busy.example"])
        lease = await queue.take("busy", QUICK)
        assert lease is not None
        limits = WorkerLimits(lease=0.6, retry_delay=0.0, poll=0.1)
        heartbeat = Heartbeat(redis_server.url, Keys(namespace), "busy", limits)
        with heartbeat:
            heartbeat.hold(lease)
            started, parses, worst = time.monotonic(), 0, 0
            while time.monotonic() - started < 4 * limits.lease:  # no await: the loop is blocked
                parses += len(sr.parse(body).urls)
                worst = max(worst, peek.pending()[0]["time_since_delivered"])
            beats = heartbeat.beats
        assert parses >= 20_000
        assert beats >= 4
        assert worst < limits.lease * 1000
        assert await queue.take("thief", limits) is None
        row = peek.pending()[0]
        assert (row["consumer"], row["times_delivered"]) == ("busy", 1)
    finally:
        peek.close()
        await queue.close()


async def test_state_moves_with_the_target_from_one_worker_to_another(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """--state: a second round on another worker sees the first round's state (changed-only)."""
    with Farm(2) as farm:
        targets = [site.target for site in farm.sites]
        queue = TargetQueue.from_url(redis_server.url, namespace)
        try:
            await queue.enqueue(targets)
            state = StateOptions(changed_only=True)
            first = Worker(
                redis_server.url,
                Output(str(tmp_path)),
                namespace=namespace,
                limits=QUICK,
                state=state,
            )
            report = await first.run(drain=True)
            assert (report.done, report.urls) == (2, 200)
            blobs: Any = await queue.redis.hgetall(Keys(namespace).state)
            assert len(blobs) == 2 and all(b.startswith(MAGIC) for b in blobs.values())
            assert await queue.enqueue(targets, again=True) == (0, 2)
            second = Worker(
                redis_server.url,
                Output(str(tmp_path)),
                namespace=namespace,
                limits=QUICK,
                state=state,
            )
            report = await second.run(drain=True)
            assert (report.done, report.urls) == (2, 0)  # nothing changed since round one
            assert first.consumer != second.consumer
        finally:
            await queue.close()
    assert outputs(tmp_path) == {file_of(t): [] for t in targets}


async def test_a_duplicate_entry_of_a_done_target_is_dropped_unread(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """An extra stream entry for a finished target is acknowledged without a second run."""
    with Farm(1) as farm:
        target = farm.sites[0].target
        queue = TargetQueue.from_url(redis_server.url, namespace)
        try:
            await queue.enqueue([target])
            worker = Worker(
                redis_server.url, Output(str(tmp_path)), namespace=namespace, limits=QUICK
            )
            assert (await worker.run(drain=True)).done == 1
            path = tmp_path / file_of(target)
            stamp = os.stat(path).st_mtime_ns
            fetched = sum(farm.hits.values())
            await queue.redis.xadd(Keys(namespace).targets, {"t": target})
            again = Worker(
                redis_server.url, Output(str(tmp_path)), namespace=namespace, limits=QUICK
            )
            report = await again.run(drain=True)
            assert (report.done, report.duplicates) == (0, 1)
            assert os.stat(path).st_mtime_ns == stamp
            assert sum(farm.hits.values()) == fetched
            assert await queue.empty()
        finally:
            await queue.close()


async def test_records_published_twice_for_a_target_appear_once(
    redis_server: RedisServer, namespace: str
) -> None:
    """The records stream dedupes per target: a re-run appends only URLs not yet sent."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    try:
        pairs = [(f"{i:016x}", f'{{"url": "u{i}"}}') for i in range(10)]
        assert await queue.publish("a.example", pairs[:6]) == 6
        assert await queue.publish("a.example", pairs) == 4
        assert await queue.publish("b.example", pairs[:3]) == 3  # per target
        assert await queue.redis.xlen(Keys(namespace).records) == 13
    finally:
        await queue.close()


def test_worker_limits_refuse_nonsense() -> None:
    """A zero lease or a retry delay longer than the lease is a usage error."""
    with pytest.raises(sr.UsageError):
        WorkerLimits(lease=0)
    with pytest.raises(sr.UsageError):
        WorkerLimits(lease=1, retry_delay=2)
    with pytest.raises(sr.UsageError):
        WorkerLimits(max_deliveries=0)


def test_the_group_is_created_once_and_survives_a_second_create(
    redis_server: RedisServer, namespace: str
) -> None:
    """Two workers starting together both find the one consumer group (BUSYGROUP is fine)."""
    import asyncio

    async def both() -> None:
        queues = [TargetQueue.from_url(redis_server.url, namespace) for _ in range(2)]
        try:
            await asyncio.gather(*(q.ensure_group() for q in queues))
        finally:
            for q in queues:
                await q.close()

    asyncio.run(both())
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    try:
        groups = client.xinfo_groups(Keys(namespace).targets)
        assert [g["name"] for g in groups] == [GROUP]
    finally:
        client.close()


async def test_a_target_whose_workers_keep_dying_is_dead_lettered_unread(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Delivered past the limit without ever finishing: dead-lettered, not run once more."""
    limits = WorkerLimits(lease=0.3, retry_delay=0.0, poll=0.1, max_deliveries=2)
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    try:
        await queue.enqueue(["gone.example"])
        assert await queue.take("dies-1", limits) is not None
        wait_until(lambda: _idle_past(peek, limits.lease), "the first lease to lapse")
        assert await queue.take("dies-2", limits) is not None
        wait_until(lambda: _idle_past(peek, limits.lease), "the second lease to lapse")
        worker = Worker(redis_server.url, Output(str(tmp_path)), namespace=namespace, limits=limits)
        report = await worker.run(drain=True)
        assert (report.dead, report.done) == (1, 0)
        (dead,) = peek.dead()
        assert (dead["t"], dead["deliveries"]) == ("gone.example", "3")
        assert "without finishing" in dead["error"]
        assert outputs(tmp_path) == {}
    finally:
        peek.close()
        await queue.close()
