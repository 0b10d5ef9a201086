"""The queue's steps against a real Redis, in process: claims, fencing, heartbeats, state."""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio
from redis.exceptions import TimeoutError as RedisTimeoutError

import sitemap_reader as sr
from sitemap_reader.cli.distributed import REDIS_STATE
from sitemap_reader.distributed import (
    Output,
    TargetQueue,
    Worker,
    WorkerLimits,
    run_discovery,
)
from sitemap_reader.distributed.config import GROUP, Keys
from sitemap_reader.distributed.heartbeat import Heartbeat
from sitemap_reader.distributed.target_state import MAGIC
from sitemap_reader.distributed.worker import attempt_path
from sitemap_reader.options import Options
from tests.distributed.farm import Farm
from tests.distributed.proc_kit import DEADLINE, Peek, file_of, outputs, wait_until
from tests.distributed.redis_kit import RedisServer

QUICK = WorkerLimits(lease=0.3, retry_delay=0.0, poll=0.1)

#: The farm's sites are on 127.0.0.1: these workers may read private addresses.
PRIVATE = Options.of(allow_private=True)


def _idle_past(peek: Peek, lease: float) -> bool:
    rows = peek.pending()
    return bool(rows) and all(r["time_since_delivered"] >= lease * 1000 for r in rows)


async def test_one_site_is_one_target_whatever_its_spelling(
    redis_server: RedisServer, namespace: str
) -> None:
    """The library's enqueue spells each target the reader's way, as the CLI does: a root's
    trailing dot, case, a default port and a slash do not make a second target."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    try:
        spellings = ["example.com", "example.com.", "EXAMPLE.com", "https://example.com:443/"]
        assert await queue.enqueue(spellings) == (1, 0)
        assert await queue.enqueue(["Example.COM."]) == (0, 0)
        lease = await queue.take("w", QUICK)
        assert lease is not None and lease.target == "example.com"
    finally:
        await queue.close()


async def test_a_lapsed_lease_is_taken_over_and_the_old_owner_is_fenced_off(
    redis_server: RedisServer, namespace: str
) -> None:
    """After the lease, another worker takes the target; the first can no longer settle it."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    try:
        assert await queue.enqueue(["a.example"]) == (1, 0)
        first = await queue.take("first", QUICK)
        assert first is not None and (first.target, first.attempt) == ("a.example", 1)
        assert await queue.take("second", QUICK) is None  # still leased
        wait_until(lambda: _idle_past(peek, QUICK.lease), "the lease to lapse")
        second = await queue.take("second", QUICK)
        assert second is not None and (second.id, second.attempt) == (first.id, 2)
        assert await queue.finish("first", first, {"urls": 1}) is False
        assert await queue.fail("first", first, "boom", QUICK) == 0
        assert await queue.publish("first", first, [("k", "{}")]) == -1
        assert await queue.release("first", first) is False
        assert not await queue.is_done("a.example")
        assert await queue.finish("second", second, {"urls": 1}) is True
        assert await queue.is_done("a.example")
        assert await queue.empty()
        assert not await queue.redis.exists(Keys(namespace).records)  # nothing published
    finally:
        peek.close()
        await queue.close()


async def test_the_heartbeat_keeps_a_lease_while_the_loop_thread_is_busy_parsing(
    redis_server: RedisServer, namespace: str
) -> None:
    """A CPU-bound parse on the loop's thread while the heartbeat beats 4 times (more
    than a lease): the lease is refreshed all along and never lapses, at any load."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    body = "".join(f"https://example.com/{i}\n" for i in range(20_000)).encode()
    try:
        # A beat every 1.5 s: a lease lapses only if the heartbeat's thread waits over 3 s
        # for a core, which a load of 20 on two cores does not come near (a 0.6 s lease
        # lapsed once at a load average of 9; a 1.5 s one at 6-17). The lease is taken with
        # the same limits: the claim keeps the lease it was taken with, and one taken with a
        # 0.3 s lease was taken over by the thief at load 8 in the moment between the last
        # beat and the thief's try.
        limits = WorkerLimits(lease=4.5, retry_delay=0.0, poll=0.1)
        await queue.enqueue(["busy.example"])
        lease = await queue.take("busy", limits)
        assert lease is not None
        assert queue.id is not None
        heartbeat = Heartbeat(redis_server.url, Keys(namespace), queue.id, "busy", limits)
        with heartbeat:
            heartbeat.hold(lease)
            started, parses, worst = time.monotonic(), 0, 0
            first = heartbeat.beats
            # The loop counts beats, not seconds (no await: the event loop stays blocked).
            while heartbeat.beats < first + 4:
                assert time.monotonic() - started < DEADLINE, "the heartbeat stopped beating"
                parses += len(sr.parse(body).urls)
                worst = max(worst, peek.pending()[0]["time_since_delivered"])
        assert parses >= 20_000
        assert worst < limits.lease * 1000
        assert await queue.take("thief", limits) is None
        assert peek.pending()[0]["consumer"] == "busy"
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
            state = Options.of(allow_private=True, state=REDIS_STATE, changed_only=True)
            first = Worker(
                redis_server.url,
                Output(str(tmp_path)),
                state,
                namespace=namespace,
                limits=QUICK,
            )
            report = await first.run(drain=True)
            assert (report.done, report.urls) == (2, 200)
            blobs: Any = await queue.redis.hgetall(Keys(namespace).state)
            assert len(blobs) == 2 and all(b.startswith(MAGIC) for b in blobs.values())
            assert await queue.enqueue(targets, again=True) == (0, 2)
            second = Worker(
                redis_server.url,
                Output(str(tmp_path)),
                state,
                namespace=namespace,
                limits=QUICK,
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
                redis_server.url,
                Output(str(tmp_path)),
                PRIVATE,
                namespace=namespace,
                limits=QUICK,
            )
            assert (await worker.run(drain=True)).done == 1
            path = tmp_path / file_of(target)
            stamp = os.stat(path).st_mtime_ns
            fetched = sum(farm.hits.values())
            await queue.redis.xadd(Keys(namespace).targets, {"t": target})
            again = Worker(
                redis_server.url,
                Output(str(tmp_path)),
                PRIVATE,
                namespace=namespace,
                limits=QUICK,
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
        await queue.enqueue(["a.example", "b.example"])
        a, b = await queue.take("w", QUICK), await queue.take("w", QUICK)
        assert a is not None and b is not None
        pairs = [(f"{i:016x}", f'{{"url": "u{i}"}}') for i in range(10)]
        assert await queue.publish("w", a, pairs[:6]) == 6
        assert await queue.publish("w", a, pairs) == 4
        assert await queue.publish("w", b, pairs[:3]) == 3  # per target
        assert await queue.redis.xlen(Keys(namespace).records) == 13
        ttl = await queue.redis.ttl(Keys(namespace).sent(a.target))
        assert 0 < ttl <= 24 * 3600  # a dedupe set never outlives its use for good
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

    async def both() -> None:
        queues = [TargetQueue.from_url(redis_server.url, namespace) for _ in range(2)]
        try:
            await asyncio.gather(*(q.open() for q in queues))
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


def _lapse(peek: Peek, limits: WorkerLimits) -> None:
    wait_until(lambda: _idle_past(peek, limits.lease), "the leases to lapse")


async def test_a_target_that_kills_its_workers_is_dead_lettered_and_its_neighbours_are_not(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """An OOM target beside 3 healthy ones: only the OOM one counts failures, is dead-lettered."""
    limits = WorkerLimits(lease=0.3, retry_delay=0.0, poll=0.1, max_deliveries=3)
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    try:
        await queue.enqueue(["oom.example", "a.example", "b.example", "c.example"])
        held = [await queue.take("dies-1", limits) for _ in range(4)]  # --parallel 4, killed
        assert all(lease is not None and not lease.solo for lease in held)
        _lapse(peek, limits)
        taken = {}
        for _ in range(4):  # the next worker takes each over: suspects, not failures
            lease = await queue.take("w-2", limits)
            assert lease is not None and (lease.solo, lease.failures) == (True, 0)
            taken[lease.target] = lease
        for name in ("a.example", "b.example", "c.example"):  # run alone, each finishes
            assert await queue.finish("w-2", taken[name], {"urls": 0})
        for n in range(2):  # the OOM target kills its lone worker again, twice
            _lapse(peek, limits)
            lease = await queue.take(f"dies-{n + 3}", limits)
            assert lease is not None and lease.failures == n + 1
        _lapse(peek, limits)
        worker = Worker(redis_server.url, Output(str(tmp_path)), namespace=namespace, limits=limits)
        report = await worker.run(drain=True)  # finds 3 failures: dead-lettered, not run
        assert (report.dead, report.done) == (1, 0)
        (dead,) = peek.dead()
        assert (dead["t"], dead["failures"]) == ("oom.example", "3")
        assert "died 3 times" in dead["error"]
        assert set(peek.done()) == {"a.example", "b.example", "c.example"}
    finally:
        peek.close()
        await queue.close()


async def test_give_backs_cost_a_target_nothing(redis_server: RedisServer, namespace: str) -> None:
    """A target given back (SIGTERM) four times is taken again at once, with no failure."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    try:
        await queue.enqueue(["a.example"])
        for n in range(4):
            lease = await queue.take(f"w-{n}", QUICK)
            assert lease is not None and (lease.attempt, lease.failures) == (n + 1, 0)
            assert not lease.solo
            assert await queue.release(f"w-{n}", lease)
        status = await queue.status()
        assert (status.queued, status.in_flight, status.retrying) == (1, {}, 0)
    finally:
        await queue.close()


async def test_the_owners_lease_decides_a_takeover(
    redis_server: RedisServer, namespace: str
) -> None:
    """The owner's lease decides: a 0.3 s worker takes a lapsed 0.3 s target, not a 9 s one."""
    short = WorkerLimits(lease=0.3, retry_delay=0.0, poll=0.1)
    long = WorkerLimits(lease=9, retry_delay=0.0, poll=0.1)
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    try:
        await queue.enqueue(["slow.example", "quick.example"])
        slow = await queue.take("long-lease", long)
        quick = await queue.take("short-lease", short)
        assert slow is not None and quick is not None
        _lapse(peek, short)  # both idle past 0.3 s
        taken = await queue.take("other-short", short)
        assert taken is not None and taken.target == "quick.example"  # its owner's 0.3 s
        assert await queue.take("other-short", short) is None  # slow's owner said 9 s
        assert peek.pending()[0]["consumer"] == "long-lease"
    finally:
        peek.close()
        await queue.close()


async def test_a_failed_target_waits_its_retry_delay_and_counts_once_in_status(
    redis_server: RedisServer, namespace: str
) -> None:
    """A failed try: status shows it retrying (not in flight); it is taken again after the delay."""
    limits = WorkerLimits(lease=5, retry_delay=0.3, poll=0.1)
    queue = TargetQueue.from_url(redis_server.url, namespace)
    peek = Peek(redis_server.url, namespace)
    try:
        await queue.enqueue(["flaky.example"])
        lease = await queue.take("w", limits)
        assert lease is not None
        assert await queue.fail("w", lease, "boom", limits) == 1
        status = await queue.status()
        assert (status.queued, status.in_flight, status.retrying) == (0, {}, 1)
        assert await queue.take("w", limits) is None  # the delay, not the 5 s lease
        wait_until(lambda: _idle_past(peek, limits.retry_seconds), "the retry delay")
        again = await queue.take("w", limits)
        assert again is not None and (again.attempt, again.failures) == (2, 1)
    finally:
        peek.close()
        await queue.close()


async def test_suspects_run_alone_and_finish(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Four targets of a worker that died: the next worker (--parallel 4) runs each alone."""
    with Farm(4) as farm:
        targets = [site.target for site in farm.sites]
        queue = TargetQueue.from_url(redis_server.url, namespace)
        peek = Peek(redis_server.url, namespace)
        running, most = 0, 0

        async def counted(*args: Any, **kwargs: Any) -> AsyncGenerator[sr.UrlRecord, None]:
            nonlocal running, most
            running += 1
            most = max(most, running)
            try:
                async for record in run_discovery(*args, **kwargs):
                    yield record
            finally:
                running -= 1

        try:
            await queue.enqueue(targets)
            assert all([await queue.take("dies", QUICK) for _ in targets])
            _lapse(peek, QUICK)
            worker = Worker(
                redis_server.url,
                Output(str(tmp_path)),
                PRIVATE,
                namespace=namespace,
                limits=QUICK,
                parallel=4,
                discovery=counted,
            )
            report = await worker.run(drain=True)
            assert (report.done, report.dead, most) == (4, 0, 1)
            assert all(summary["attempt"] == 2 for summary in peek.done().values())
        finally:
            peek.close()
            await queue.close()


async def test_a_crash_between_commit_and_rename_is_repaired_by_the_next_start(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """On start, a worker renames a won attempt's file, removes a dead one's, keeps a live one's."""
    queue = TargetQueue.from_url(redis_server.url, namespace)
    output = Output(str(tmp_path))
    try:
        await queue.enqueue(["won.example", "live.example"])
        won = await queue.take("crashed", QUICK)
        live = await queue.take("running", WorkerLimits(lease=60, retry_delay=0, poll=0.1))
        assert won is not None and live is not None
        won_file = Path(attempt_path(output.path(won.target), won))
        won_file.write_text('{"url": "https://won.example/a"}\n')
        live_file = Path(attempt_path(output.path(live.target), live))
        live_file.write_text("")
        dead_file = tmp_path / f".{file_of('gone.example')}.1-0.3.tmp"
        dead_file.write_text("")
        assert await queue.finish("crashed", won, {"urls": 1})  # ... and it died right here
        assert await queue.committed(won.token)
        worker = Worker(redis_server.url, output, namespace=namespace, limits=QUICK)
        try:
            await worker.queue.open()
            await worker._repair()  # what Worker.run does first
        finally:
            await worker.queue.close()
        assert not won_file.exists() and not dead_file.exists()
        final = tmp_path / file_of("won.example")
        assert final.read_text() == '{"url": "https://won.example/a"}\n'
        assert live_file.exists()  # another worker's run in progress: left alone
        assert not await queue.committed(won.token)
    finally:
        await queue.close()


async def test_a_stop_request_that_surfaces_as_a_socket_timeout_is_not_retried() -> None:
    """A cancellation (SIGTERM) caught on its way and turned into a Redis timeout ends the
    call at once: retrying it for ``redis_wait`` would keep a stopped worker running."""
    queue = TargetQueue(redis.asyncio.Redis(), Keys("never-used"), wait=60.0)
    tries = 0

    async def op() -> None:
        nonlocal tries
        tries += 1
        task = asyncio.current_task()
        assert task is not None
        task.cancel()  # the stop request...
        try:
            await asyncio.sleep(DEADLINE)
        except asyncio.CancelledError:
            raise RedisTimeoutError("Timeout reading from socket") from None  # ...swallowed

    with pytest.raises(asyncio.CancelledError):
        await queue._call(op)
    assert tries == 1
    await queue.close()


@pytest.mark.parametrize("allowed", [False, True])
async def test_a_queued_name_resolving_to_loopback_needs_allow_private(
    redis_server: RedisServer, namespace: str, tmp_path: Path, allowed: bool
) -> None:
    """A queued name that resolves to loopback: a worker without --allow-private refuses
    it before any request (its reader guards the queue's targets too: "never"), one with
    it reads the site."""
    from tests.hostile.test_guard import FakeResolver

    with Farm(1) as farm:
        target = f"http://public.example:{farm.sites[0].port}/"
        queue = TargetQueue.from_url(redis_server.url, namespace)
        try:
            await queue.enqueue([target])
            worker = Worker(
                redis_server.url,
                Output(str(tmp_path)),
                Options.of(allow_private=allowed),
                namespace=namespace,
                limits=QUICK,
                discovery=functools.partial(run_discovery, resolver=FakeResolver("public.example")),
            )
            report = await worker.run(drain=True)
        finally:
            await queue.close()
    if allowed:
        assert (report.done, report.dead) == (1, 0)
        assert sum(farm.hits.values()) == farm.fetches_per_site()
    else:
        assert (report.done, report.dead) == (0, 1)
        assert sum(farm.hits.values()) == 0
