"""SIGKILLs at random moments under a scrapy-redis crawl, for the tests and the benchmark.

One trial: ``processes`` Scrapy processes (tests/scrapy_redis/runner.py) crawl the
loopback :class:`Site` from one Redis. At ``kills`` random points of the crawl (fractions
of the pages done) one live process is hit, ``how``:

* ``"kill"``: stopped (SIGSTOP, so what it holds can be read from Redis while it cannot
  change), its page leases counted, killed (SIGKILL) and replaced by a fresh process;
* ``"term"``: sent SIGTERM (Scrapy's graceful stop) and replaced once it has ended;
* ``"freeze"``: stopped, its leases counted, left stopped until the others have taken
  them over (its leases expired), then continued (SIGCONT) to finish as if nothing happened.

The trial ends when every process has finished.

What it measures: *lost* pages (listed by the site, no callback ran to its end in any
process), *duplicates* (page requests the server saw beyond the first, per page), *held*
(page leases the victims held when they were hit) and *requeued* (page leases put back in
the queue, as Redis counted them). Only a requeued lease can make a page fetched twice, so
duplicates <= requeued whatever the load; requeued exceeds held only when a live process's
reactor stalled for longer than a lease (seen on a machine with a load average of 17).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import redis

from sitemap_reader.scrapy.redis import DEFAULT_KEY, Keys, owner_pid, token_owner
from tests.distributed.redis_kit import RedisServer
from tests.scrapy_redis.runner import MORE
from tests.scrapy_redis.site import Site

RUNNER = Path(__file__).with_name("runner.py")
ROOT = Path(__file__).resolve().parents[2]
#: Seconds any one wait of a trial may take before it fails (generous: a loaded machine
#: was seen to need over 90 s for a runner to start, crawl 150 pages and end).
DEADLINE = 180.0


@dataclass(frozen=True, slots=True)
class Trial:
    """What one trial's crawl came to."""

    pages: int
    kills: int
    lost: int
    duplicates: int
    held: int
    requeued: int


def start(
    site: Site, server_url: str, name: str, out: Path, *sets: str, pythonpath: str = ""
) -> subprocess.Popen[str]:
    """One runner process (``pythonpath`` first on its path: another tree's sitemap_reader)."""
    command = [sys.executable, str(RUNNER), site.base, server_url, name, str(out)]
    for setting in sets:
        command += ["--set", setting]
    path = os.pathsep.join(p for p in (pythonpath, str(ROOT)) if p)
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> str:
    """Wait for a runner; it must end cleanly. Its standard error."""
    try:
        _, err = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"a runner did not end in {DEADLINE} s: {err[-3000:]}") from None
    assert process.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    return err


def wait(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` until true (bounded by DEADLINE)."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)  # the poll interval of a bounded wait


def done_paths(outs: list[Path]) -> list[str]:
    """The paths whose callbacks ran to their end, one entry per completion."""
    # A line is whole once its newline is written: the text after the last one is not.
    lines = [line for out in outs if out.exists() for line in out.read_text().split("\n")[:-1]]
    return [urlsplit(line).path for line in lines]


def held_by(client: redis.Redis, keys: Keys, pid: int) -> int:
    """Page leases the process ``pid`` holds in Redis."""
    tokens = client.zrange(keys.page_expiry, 0, -1)
    return sum(1 for token in tokens if owner_pid(token_owner(str(token))) == pid)


def run_trial(
    server: RedisServer,
    tmp: Path,
    *,
    rng: random.Random,
    concurrency: int,
    kills: int,
    processes: int = 3,
    delay: float = 0.0,
    follow: bool = False,
    how: str = "kill",
    redirect_every: int = 0,
    children: int = 4,
    per_child: int = 30,
    pythonpath: str = "",
) -> Trial:
    """One crawl with ``kills`` SIGKILLs at random moments; see the module docstring."""
    name = f"t{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(server.url, decode_responses=True)
    keys = Keys(DEFAULT_KEY % {"spider": name})
    sets = [
        f"CONCURRENT_REQUESTS={concurrency}",
        f"TEST_PAGE_DELAY={delay}",
        f"TEST_FOLLOW={'true' if follow else 'false'}",
    ]
    outs: list[Path] = []
    with Site(children, per_child, redirect_every) as site:
        expected = site.final_pages() | (
            {p + MORE for p in site.final_pages()} if follow else set()
        )

        def launch() -> subprocess.Popen[str]:
            outs.append(tmp / f"{name}-{len(outs)}.txt")
            return start(site, server.url, name, outs[-1], *sets, pythonpath=pythonpath)

        def reached(moment: float) -> Callable[[], bool]:
            def check() -> bool:
                crawled = len(done_paths(outs)) >= moment * len(expected)
                return crawled or all(p.poll() is not None for p in live)

            return check

        site.open("slow")
        live = [launch() for _ in range(processes)]
        wait(lambda: client.hlen(keys.workers) == processes, "every process to open")
        site.open("index")
        held = done_kills = 0
        for moment in sorted(rng.uniform(0.1, 0.8) for _ in range(kills)):
            wait(reached(moment), "the crawl to reach the next kill")
            running = [p for p in live if p.poll() is None]
            if not running:
                break
            victim = rng.choice(running)
            if how == "term":
                victim.send_signal(signal.SIGTERM)
                finish(victim)
                live[live.index(victim)] = launch()
                done_kills += 1
                continue
            victim.send_signal(signal.SIGSTOP)
            held += held_by(client, keys, victim.pid)
            if how == "freeze":
                taken = lambda pid=victim.pid: held_by(client, keys, pid) == 0  # noqa: E731
                wait(taken, "its leases to be taken over")
                victim.send_signal(signal.SIGCONT)
            else:
                victim.send_signal(signal.SIGKILL)
                victim.communicate(timeout=DEADLINE)
                live[live.index(victim)] = launch()
            done_kills += 1
        for process in live:
            finish(process)
        hits = site.page_hits()
        fetchable = expected | site.redirected  # a redirected page is fetched, not called back
    done = set(done_paths(outs))
    assert set(hits) <= fetchable and done <= expected, sorted((set(hits) | done) - fetchable)[:5]
    return Trial(
        pages=len(expected),
        kills=done_kills,
        lost=len(expected - done),
        duplicates=sum(n - 1 for n in hits.values()),
        held=held,
        requeued=int(client.get(keys.page_requeued) or 0),
    )
