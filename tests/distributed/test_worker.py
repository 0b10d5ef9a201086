"""Workers as real processes on a real Redis, reading loopback sites: the guarantees."""

from __future__ import annotations

import json
import signal
import sys
from collections import Counter
from pathlib import Path

import pytest

from sitemap_reader.errors import install_line
from tests.distributed.farm import Farm
from tests.distributed.proc_kit import (
    DEADLINE,
    Peek,
    file_of,
    finish,
    outputs,
    run_cli,
    start_worker,
    temp_files,
    wait_until,
)
from tests.distributed.redis_kit import RedisServer


def _enqueue(server: RedisServer, ns: str, farm: Farm) -> None:
    targets = "\n".join(site.target for site in farm.sites) + "\n"
    done = run_cli("enqueue", "--redis", server.url, "--namespace", ns, "-i", "-", stdin=targets)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{len(farm.sites)} new targets queued"), done.stdout


def _assert_exactly_once(farm: Farm, out: Path) -> None:
    """Every ok site has one file with each of its URLs once; nothing else is there."""
    found = outputs(out)
    wanted = {file_of(s.target): s for s in farm.sites if s.kind != "broken"}
    assert set(found) == set(wanted)
    for name, site in wanted.items():
        urls = found[name]
        assert len(urls) == len(set(urls)), f"duplicates in {name}"
        assert set(urls) == farm.expected_urls(site), f"wrong URLs in {name}"


def test_two_workers_share_150_targets_exactly_once(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """Two worker processes drain 150 targets: each target's file once, every sitemap read
    once, and both take a share (the sites hold robots.txt until both workers hold targets,
    so a worker that starts late on a loaded machine still meets the other)."""
    with Farm(150, hold_robots=True) as farm:
        _enqueue(redis_server, namespace, farm)
        workers = [
            # A long lease: under a loaded machine no heartbeat can be late enough to matter.
            start_worker(
                redis_server.url, namespace, tmp_path, "--drain", "--parallel", "2", "--lease", "5"
            )
            for _ in range(2)
        ]
        peek = Peek(redis_server.url, namespace)
        try:
            wait_until(
                lambda: len({entry["consumer"] for entry in peek.pending()}) == 2,
                "both workers holding targets",
            )
        finally:
            peek.close()
        farm.open_gate()
        results = [finish(w) for w in workers]
        hits = Counter(farm.hits)
    for code, err in results:
        assert code == 0, err
    _assert_exactly_once(farm, tmp_path)
    assert set(hits.values()) == {1}  # no sitemap fetched twice: no target ran twice
    assert len(hits) == 150 * farm.fetches_per_site()
    peek = Peek(redis_server.url, namespace)
    try:
        done = peek.done()
        assert len(done) == 150
        by_worker = Counter(summary["worker"] for summary in done.values())
        assert len(by_worker) == 2, by_worker  # both took a share
        assert all(summary["urls"] == 100 for summary in done.values())
        assert peek.pending() == []
        assert temp_files(tmp_path) == []
    finally:
        peek.close()


@pytest.mark.slow
def test_kill_9_mid_run_then_a_new_worker_loses_and_duplicates_nothing(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """kill -9 of a worker holding a half-read target; a new worker finishes exactly once."""
    with Farm(40, kinds={20: "gated"}) as farm:
        gated = farm.sites[20]
        _enqueue(redis_server, namespace, farm)
        peek = Peek(redis_server.url, namespace)
        try:
            first = start_worker(
                redis_server.url, namespace, tmp_path, "--parallel", "1", "--records-stream"
            )
            assert farm.gate_reached.wait(DEADLINE), "the gated target was never read"
            wait_until(
                lambda: any(p["consumer"] for p in peek.pending()), "the worker to hold targets"
            )
            status = json.loads(
                run_cli(
                    "status", "--redis", redis_server.url, "--namespace", namespace, "--json"
                ).stdout
            )
            assert status["in_flight"] >= 1
            assert sum(status["in_flight_by_worker"].values()) == status["in_flight"]
            first.send_signal(signal.SIGKILL)
            first.communicate(timeout=DEADLINE)
            held = {p["message_id"] for p in peek.pending()}
            assert held, "the killed worker held nothing"
            before = len(peek.done())
            farm.open_gate()
            second = start_worker(
                redis_server.url, namespace, tmp_path, "--drain", "--records-stream"
            )
            code, err = finish(second)
            assert code == 0, err
            hits = Counter(farm.hits)
            _assert_exactly_once(farm, tmp_path)
            done = peek.done()
            assert len(done) == 40
            assert done[gated.target]["attempt"] == 2  # taken over, read again
            assert peek.pending() == []
            # The records stream: each URL once per target, one end marker per target.
            entries = peek.records()
            ends = Counter(e["t"] for e in entries if "end" in e)
            assert ends == Counter({site.target: 1 for site in farm.sites})
            urls = [json.loads(e["r"])["url"] for e in entries if "r" in e]
            assert len(urls) == len(set(urls)) == 40 * 100
        finally:
            peek.close()
    extra = sum(hits.values()) - 40 * farm.fetches_per_site()
    # Only the target the killed worker held is read again, from the start.
    assert extra == farm.fetches_per_site(), extra
    assert temp_files(tmp_path) == []  # the taker removed the dead attempt's file
    print(f"\nkill -9: {before}/40 done at the kill, {len(held)} held, {extra} extra fetches")


@pytest.mark.slow
def test_a_target_failing_every_time_lands_in_the_dead_letter_stream(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """A site with nothing to discover is tried max-deliveries times, then dead-lettered."""
    with Farm(4, kinds={1: "broken"}) as farm:
        broken = farm.sites[1]
        _enqueue(redis_server, namespace, farm)
        worker = start_worker(
            redis_server.url, namespace, tmp_path, "--drain", "--max-deliveries", "3"
        )
        code, err = finish(worker)
        robots_hits = farm.hits[broken.port, "/robots.txt"]
    assert code == 0, err
    assert "1 dead-lettered" in err
    assert robots_hits == 3  # three tries, no more
    _assert_exactly_once(farm, tmp_path)
    peek = Peek(redis_server.url, namespace)
    try:
        dead = peek.dead()
        assert len(dead) == 1
        assert dead[0]["t"] == broken.target
        assert dead[0]["failures"] == "3"
        assert "no sitemap found" in dead[0]["error"]
        assert dead[0]["error"].startswith("absent: ")  # the verdict first, as data says
        assert broken.target not in dead[0]["error"]  # named beside it, not in it
        assert broken.target not in peek.done()
        (ok,) = (s for t, s in peek.done().items() if t == farm.sites[0].target)
        assert [v["kind"] for v in ok["stats"]["verdicts"]] == ["ok"]
    finally:
        peek.close()
    text = run_cli("status", "--redis", redis_server.url, "--namespace", namespace)
    assert text.returncode == 0
    lines = dict(line.split(None, 1) for line in text.stdout.splitlines() if line[:1] != " ")
    assert {k: lines[k].strip() for k in ("queued", "done", "failed", "known")} == {
        "queued": "0",
        "done": "3",
        "failed": "1",
        "known": "4",
    }
    (dead_line,) = [line for line in text.stdout.splitlines() if "dead: " in line]
    assert dead_line.startswith(f"  dead: {broken.target}: absent: ")
    assert dead_line.count(broken.target) == 1
    data = json.loads(
        run_cli("status", "--redis", redis_server.url, "--namespace", namespace, "--json").stdout
    )
    assert (data["queued"], data["in_flight"], data["done"], data["failed"]) == (0, 0, 3, 1)
    assert data["dead_letters"][0]["t"] == broken.target


def test_enqueue_counts_only_new_targets(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """enqueue from arguments, a file and stdin says how many were new; repeats are not queued."""
    base = ("--redis", redis_server.url, "--namespace", namespace)
    first = run_cli("enqueue", *base, "a.example", "b.example", "a.example")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "2 new targets queued, 1 already known"
    listing = tmp_path / "targets.txt"
    listing.write_text("# a comment\nb.example\n\nc.example\n")
    second = run_cli("enqueue", *base, "-i", str(listing))
    assert second.stdout.strip() == "1 new target queued, 1 already known"
    third = run_cli("enqueue", *base, "-i", "-", stdin="c.example\nd.example\n")
    assert third.stdout.strip() == "1 new target queued, 1 already known"
    bad = run_cli("enqueue", *base, "e.example", "ftp://x.example/")
    assert bad.returncode == 2 and "ftp://x.example/" in bad.stderr  # nothing queued
    data = json.loads(run_cli("status", *base, "--json").stdout)
    assert (data["queued"], data["known"], data["done"]) == (4, 4, 0)


def test_worker_usage_errors_and_an_unreachable_redis(tmp_path: Path) -> None:
    """A missing output directory is a usage error (2); a Redis nobody listens on exits 1."""
    from tests.distributed.redis_kit import free_port

    url = f"redis://127.0.0.1:{free_port()}/0"
    missing = run_cli("worker", "--redis", url, "-o", str(tmp_path / "nope"), "--drain")
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr
    away = run_cli("status", "--redis", url)
    assert away.returncode == 1
    assert "cannot reach Redis" in away.stderr
    assert "Traceback" not in away.stderr + missing.stderr


def test_without_the_extra_the_commands_name_it(tmp_path: Path) -> None:
    """With the redis package hidden, each distributed command names the extra to install."""
    script = (
        "import sys; sys.modules['redis'] = None; sys.modules['redis.asyncio'] = None\n"
        "from sitemap_reader.cli import main\n"
        "url = ['--redis', 'redis://127.0.0.1:1/0']\n"
        f"worker = ['worker', '-o', {str(tmp_path)!r}]\n"
        "for command in (['status'], ['enqueue', 'a.example'], worker):\n"
        "    print(main(command + url))\n"
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=DEADLINE
    )
    assert done.stdout.split() == ["2", "2", "2"], done.stderr
    assert done.stderr.count(install_line("distributed")) == 3
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_sigterm_gives_the_targets_in_flight_back_at_once(
    redis_server: RedisServer, namespace: str, tmp_path: Path
) -> None:
    """SIGTERM: the worker exits 143 and its half-read target is claimable without a lease wait."""
    with Farm(3, kinds={0: "gated"}) as farm:
        _enqueue(redis_server, namespace, farm)
        peek = Peek(redis_server.url, namespace)
        try:
            worker = start_worker(redis_server.url, namespace, tmp_path, "--parallel", "1")
            assert farm.gate_reached.wait(DEADLINE), "the gated target was never read"
            worker.send_signal(signal.SIGTERM)
            code, err = finish(worker)
            assert code == 128 + signal.SIGTERM, err
            (row,) = peek.pending()
            assert row["consumer"] == "~free"  # given back: anyone takes it at once
            shown = run_cli("status", "--redis", redis_server.url, "--namespace", namespace)
            data = json.loads(
                run_cli(
                    "status", "--redis", redis_server.url, "--namespace", namespace, "--json"
                ).stdout
            )
            assert (data["queued"], data["in_flight"], data["retrying"]) == (3, 0, 0)
            assert "~free" not in shown.stdout  # not in flight under the departed worker
            assert temp_files(tmp_path) == []  # the run cleaned up after itself
            farm.open_gate()
            code, err = finish(start_worker(redis_server.url, namespace, tmp_path, "--drain"))
            assert code == 0, err
            assert peek.done()[farm.sites[0].target]["attempt"] == 2
        finally:
            peek.close()
    _assert_exactly_once(farm, tmp_path)


def test_an_attempts_file_is_never_written_through_a_link(tmp_path: Path) -> None:
    """A link planted at an attempt's hidden name in the output folder: refused (the
    attempt fails, to be retried under a new name); the link's target is not created."""
    from sitemap_reader.distributed.queue import Lease
    from sitemap_reader.distributed.worker import AttemptOutput, attempt_path

    lease = Lease("1700000000000-0", "example.com", attempt=2)
    path = str(tmp_path / "example.com.jsonl")
    Path(attempt_path(path, lease)).symlink_to(tmp_path / "victim")
    with pytest.raises(OSError, match="exists already"):
        AttemptOutput(path, lease)
    assert not (tmp_path / "victim").exists()
