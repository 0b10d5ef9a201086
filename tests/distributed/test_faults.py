"""The fault kit against real worker processes: zombies, partitions, severed connections,
kill -9 at random moments, Redis restarted under running workers (with and without AOF).

Every case ends with :func:`~tests.distributed.faults.assert_clean`: each target's file
once and whole, each record once on the records stream, no dead letter, no temporary
file, and no password (each server here has one) in anything a process printed.
"""

from __future__ import annotations

import json
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.distributed.farm import Farm
from tests.distributed.faults import Proxy, assert_clean, freeze, thaw
from tests.distributed.proc_kit import (
    DEADLINE,
    Peek,
    finish,
    outputs,
    run_cli,
    start_worker,
    wait_until,
)
from tests.distributed.redis_kit import RedisServer, find_redis_server

#: Every case injects a fault into real processes and waits it out: make test-slow runs them.
pytestmark = pytest.mark.slow

PASSWORD = "pw-Zq81x"


def _server(*, aof: bool = False) -> RedisServer:
    binary = find_redis_server()
    if binary is None:
        pytest.skip("no redis-server: set $REDIS_SERVER, put one on PATH, or install '.[test]'")
    return RedisServer(binary, aof=aof, password=PASSWORD)


@pytest.fixture
def server() -> Iterator[RedisServer]:
    """A redis-server of this test alone, with a password (it may be restarted)."""
    with _server() as running:
        yield running


@pytest.fixture
def aof_server() -> Iterator[RedisServer]:
    """A redis-server of this test alone with an append-only file fsynced on every write."""
    with _server(aof=True) as running:
        yield running


def _enqueue(url: str, ns: str, farm: Farm) -> None:
    targets = "".join(f"{site.target}\n" for site in farm.sites)
    done = run_cli("enqueue", "--redis", url, "--namespace", ns, "-i", "-", stdin=targets)
    assert done.returncode == 0, done.stderr


def _worker_info(peek: Peek, pid: int) -> dict[str, object]:
    raw: dict[str, str] = peek.client.hgetall(peek.keys.workers)  # type: ignore[assignment]
    for info in map(json.loads, raw.values()):
        if info["pid"] == pid:
            return dict(info)
    return {}


def _idle_since(peek: Peek, pid: int, moment: float) -> bool:
    """The worker beat after ``moment`` and holds nothing: it is done with what it had."""
    info = _worker_info(peek, pid)
    return bool(info) and float(info["seen"]) > moment and info["targets"] == []  # type: ignore[arg-type]


@pytest.mark.parametrize("fault", ["sigstop", "partition"])
def test_a_zombie_past_its_lease_changes_nothing_visible(
    server: RedisServer, namespace: str, tmp_path: Path, fault: str
) -> None:
    """A worker frozen (SIGSTOP) or partitioned past its lease comes back after a survivor
    settled its target: no file replaced, no record re-published, nothing left behind."""
    with Farm(6, kinds={0: "gated"}) as farm, Proxy(server.port) as proxy:
        _enqueue(server.url, namespace, farm)
        peek = Peek(server.url, namespace)
        try:
            url = proxy.url(PASSWORD) if fault == "partition" else server.url
            zombie = start_worker(url, namespace, tmp_path, "--parallel", "1", "--records-stream")
            assert farm.gate_reached.wait(DEADLINE), "the gated target was never read"
            if fault == "sigstop":
                freeze(zombie.pid)
            else:
                proxy.partition()
            farm.open_gate()  # the survivor reads the gated site whole; the zombie waits
            survivor = start_worker(server.url, namespace, tmp_path, "--drain", "--records-stream")
            code, survivor_err = finish(survivor)
            assert code == 0, survivor_err
            before = {name: (tmp_path / name).read_bytes() for name in outputs(tmp_path)}
            records_before = len(peek.records())
            back = time.time()
            if fault == "sigstop":
                thaw(zombie.pid)
            else:
                proxy.heal()
            wait_until(lambda: _idle_since(peek, zombie.pid, back), "the zombie to give up")
            zombie.send_signal(signal.SIGTERM)
            code, zombie_err = finish(zombie)
            assert code == 128 + signal.SIGTERM, zombie_err
            assert "1 taken over" in zombie_err
            after = {name: (tmp_path / name).read_bytes() for name in outputs(tmp_path)}
            assert after == before  # the zombie's run became visible nowhere
            assert len(peek.records()) == records_before
            assert peek.done()[farm.sites[0].target]["attempt"] == 2
            sent = peek.client.keys(f"{{{namespace}}}:sent:*")
            assert all(peek.client.ttl(key) > 0 for key in sent)  # a leftover set expires
            assert_clean(farm, tmp_path, peek, texts=[zombie_err, survivor_err], secret=PASSWORD)
        finally:
            peek.close()


def test_a_kill_between_commit_and_rename_is_repaired_by_a_running_survivor(
    server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """A worker killed after its commit won and before its file's rename, while another
    worker is already running: the survivor renames the file into place before it ends
    (it exited 0 with 'done' targets whose file was only a hidden .tmp)."""
    with Farm(4, kinds={0: "gated"}) as farm, Proxy(server.port) as proxy:
        _enqueue(server.url, namespace, farm)
        peek = Peek(server.url, namespace)
        try:
            victim = start_worker(proxy.url(PASSWORD), namespace, tmp_path, "--parallel", "1")
            assert farm.gate_reached.wait(DEADLINE), "the gated target was never read"
            survivor = start_worker(server.url, namespace, tmp_path, "--drain", "--parallel", "1")
            wait_until(lambda: len(peek.done()) == 3, "the survivor reading the other sites")
            proxy.hold_replies_after(b":commit:")  # the victim's fenced commit, and after it
            farm.open_gate()
            assert proxy.marked.wait(DEADLINE), "the victim never committed"
            wait_until(lambda: farm.sites[0].target in peek.done(), "the victim's commit")
            victim.send_signal(signal.SIGKILL)  # inside the window: committed, not renamed
            texts = list(victim.communicate(timeout=DEADLINE))
            code, err = finish(survivor)
            assert code == 0, err
            assert "into place (its worker stopped before)" in err
            assert_clean(farm, tmp_path, peek, texts=[*texts, err], secret=PASSWORD, records=False)
        finally:
            peek.close()


def test_severed_connections_are_reopened_and_the_run_goes_on(
    server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Every Redis connection of a running worker is dropped: it reconnects and drains."""
    with Farm(12, kinds={3: "gated"}) as farm, Proxy(server.port) as proxy:
        _enqueue(server.url, namespace, farm)
        peek = Peek(server.url, namespace)
        try:
            worker = start_worker(
                proxy.url(PASSWORD), namespace, tmp_path, "--drain", "--records-stream"
            )
            assert farm.gate_reached.wait(DEADLINE), "the gated target was never read"
            opened = proxy.connections
            proxy.sever()
            farm.open_gate()
            code, err = finish(worker)
            assert code == 0, err
            assert proxy.connections > opened  # it came back through new connections
            assert "Traceback" not in err
            assert_clean(farm, tmp_path, peek, texts=[err], secret=PASSWORD)
        finally:
            peek.close()


def test_kill_9_at_random_moments_keeps_every_target_exactly_once(
    server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Three workers, one killed with SIGKILL at four random moments and replaced: exactly once."""
    chance = random.Random(19)
    with Farm(60) as farm:
        _enqueue(server.url, namespace, farm)
        peek = Peek(server.url, namespace)
        args = ("--parallel", "2", "--records-stream")
        workers = [start_worker(server.url, namespace, tmp_path, *args) for _ in range(3)]
        texts: list[str] = []
        try:
            for when in sorted(chance.sample(range(3, 45), 4)):
                wait_until(lambda: len(peek.done()) >= when, f"{when} targets done")  # noqa: B023
                victim = workers.pop(chance.randrange(len(workers)))
                victim.send_signal(signal.SIGKILL)
                texts += victim.communicate(timeout=DEADLINE)
                workers.append(start_worker(server.url, namespace, tmp_path, *args))
            last = start_worker(server.url, namespace, tmp_path, "--drain", *args)
            code, err = finish(last)
            assert code == 0, err
            texts.append(err)
        finally:
            for process in workers:
                process.send_signal(signal.SIGTERM)
                texts += process.communicate(timeout=DEADLINE)
        hits = sum(farm.hits.values())
        try:
            assert_clean(farm, tmp_path, peek, texts=texts, secret=PASSWORD)
        finally:
            peek.close()
    # Each kill costs at most the --parallel targets the victim held, read again.
    assert hits - 60 * farm.fetches_per_site() <= 4 * 2 * farm.fetches_per_site()


def test_a_redis_restart_with_aof_under_running_workers_is_ridden_out(
    aof_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Redis (AOF) restarted while two workers hold targets: both reconnect and drain, exit 0."""
    with Farm(30, kinds={5: "gated"}) as farm:
        _enqueue(aof_server.url, namespace, farm)
        peek = Peek(aof_server.url, namespace)
        args = ("--drain", "--records-stream", "--parallel", "2")
        workers = [start_worker(aof_server.url, namespace, tmp_path, *args) for _ in range(2)]
        try:
            assert farm.gate_reached.wait(DEADLINE), "the gated target was never read"
            peek.close()
            aof_server.restart()
            peek = Peek(aof_server.url, namespace)
            farm.open_gate()
            results = [finish(w) for w in workers]
            for code, err in results:
                assert code == 0, err
                assert "Traceback" not in err and "never retrieved" not in err
            assert_clean(farm, tmp_path, peek, texts=[e for _, e in results], secret=PASSWORD)
        finally:
            peek.close()


def test_a_queue_lost_in_a_restart_without_persistence_stops_the_workers(
    server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Redis restarted without persistence: each worker says the queue is gone and exits 1,
    and no worker makes it again empty."""
    with Farm(8, kinds={0: "gated"}) as farm:
        _enqueue(server.url, namespace, farm)
        worker = start_worker(server.url, namespace, tmp_path, "--parallel", "2")
        assert farm.gate_reached.wait(DEADLINE), "the gated target was never read"
        server.restart()
        code, err = finish(worker)
        farm.open_gate()
    assert code == 1, err
    assert "is gone from Redis" in err and "not making it again" in err
    assert "Traceback" not in err and "never retrieved" not in err
    assert PASSWORD not in err
    peek = Peek(server.url, namespace)
    try:
        assert peek.client.keys(f"{{{namespace}}}:*") == []  # not re-created
    finally:
        peek.close()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_redis_away_past_redis_wait_ends_the_worker_with_one_line(
    server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Redis stopped for good: the worker retries for --redis-wait 1 s, then one line, exit 1."""
    worker = start_worker(server.url, namespace, tmp_path, "--redis-wait", "1")
    peek = Peek(server.url, namespace)
    try:
        wait_until(lambda: bool(_worker_info(peek, worker.pid)), "the worker to start")
    finally:
        peek.close()
    server.stop()
    code, err = finish(worker)
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.startswith("sitemap-reader worker: error:")]
    assert len(lines) == 1, err
    assert "cannot reach Redis at redis://:***@127.0.0.1" in lines[0], err
    assert "--redis-wait 1" in lines[0], err
    assert PASSWORD not in err and "Traceback" not in err
