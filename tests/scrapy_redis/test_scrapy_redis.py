"""Scrapy on scrapy-redis in real processes: N processes, one Redis, one loopback site."""

from __future__ import annotations

import os
import pickle
import random
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from sitemap_reader.scrapy.redis import DEFAULT_KEY, Keys, owner_pid
from tests.distributed.redis_kit import RedisServer
from tests.scrapy_redis.chaos import (
    DEADLINE,
    done_paths,
    finish,
    held_by,
    run_trial,
    start,
    wait,
)
from tests.scrapy_redis.site import SLOW, Site

pytest.importorskip("scrapy_redis")

ROOT = Path(__file__).resolve().parents[2]


def _start(
    site: Site, server: RedisServer, name: str, out: Path, *sets: str
) -> subprocess.Popen[str]:
    return start(site, server.url, name, out, *sets)


def _pages(out: Path) -> list[str]:
    return out.read_text().splitlines() if out.exists() else []


class Crawl:
    """One test's spider name, Redis view and per-process output files."""

    def __init__(self, server: RedisServer, tmp: Path) -> None:
        self.name = f"t{uuid.uuid4().hex[:8]}"
        self.client = redis.Redis.from_url(server.url, decode_responses=True)
        self.keys = Keys(DEFAULT_KEY % {"spider": self.name})
        self.tmp = tmp

    def out(self, index: int) -> Path:
        return self.tmp / f"pages-{index}.txt"

    def workers(self) -> int:
        return int(self.client.hlen(self.keys.workers))

    def requeued(self) -> int:
        """Page leases put back in the queue: the only way to a page fetched twice."""
        return int(self.client.get(self.keys.page_requeued) or 0)


def test_two_processes_crawl_every_page_once(redis_server: RedisServer, tmp_path: Path) -> None:
    """Two processes on one Redis: every page fetched exactly once, both did work, both end."""
    crawl = Crawl(redis_server, tmp_path)
    with Site(children=8, per_child=40) as site:
        site.open("slow")
        procs = [_start(site, redis_server, crawl.name, crawl.out(i)) for i in range(2)]
        wait(lambda: crawl.workers() == 2, "both processes to open")
        site.open("index")
        for proc in procs:
            finish(proc)
        hits = site.page_hits()
    assert set(hits) == site.all_pages() and len(hits) == 360
    # Once each, but for a page whose lease lapsed under a stalled process (heavy load).
    assert sum(n - 1 for n in hits.values()) <= crawl.requeued()
    per_process = [_pages(crawl.out(i)) for i in range(2)]
    print(f"two processes: pages per process {[len(p) for p in per_process]}")
    assert all(per_process), [len(p) for p in per_process]
    assert sum(len(p) for p in per_process) == 360
    # Every sitemap read once across both processes, and each left marked done.
    assert all(
        site.hits[p] == 1 for p in ["/robots.txt", "/sitemap_index.xml", *site.sitemap_paths()]
    )
    assert crawl.client.scard(crawl.keys.done) == 2 + 9
    assert crawl.client.zcard(crawl.keys.expiry) == 0


@pytest.mark.parametrize("delay", [0.0, 0.3], ids=["sync", "awaiting"])
def test_page_leases_held_are_bounded(
    redis_server: RedisServer, tmp_path: Path, delay: float
) -> None:
    """One process at CONCURRENT_REQUESTS=4, callbacks that yield an item and a request
    (and await 0.3 s): it never holds more than 2 x 4 page leases, so a SIGKILL costs at
    most 8 pages fetched again (before: 11 sync, 49 awaiting); every page crawled once."""
    crawl = Crawl(redis_server, tmp_path)
    sets = ["CONCURRENT_REQUESTS=4", f"TEST_PAGE_DELAY={delay}", "TEST_FOLLOW=true"]
    with Site(children=4, per_child=30) as site:
        site.open("slow")
        site.open("index")
        err = finish(_start(site, redis_server, crawl.name, crawl.out(0), *sets))
        expected = site.final_pages() | {p + "/more" for p in site.final_pages()}
    peak = re.search(r"'sitemap_reader/redis/page_leases_peak': (\d+)", err)
    assert peak is not None, err[-2000:]
    assert 1 <= int(peak[1]) <= 2 * 4
    pages = done_paths([crawl.out(0)])
    assert len(pages) == len(set(pages)) and set(pages) == expected


def test_limits_are_shared(redis_server: RedisServer, tmp_path: Path) -> None:
    """max_urls and max_sitemaps hold across two processes, not per process."""
    crawl = Crawl(redis_server, tmp_path)
    limits = ["SITEMAP_READER_MAX_URLS=50", "SITEMAP_READER_MAX_SITEMAPS=4"]
    with Site(children=8, per_child=40) as site:
        site.open("slow")
        procs = [_start(site, redis_server, crawl.name, crawl.out(i), *limits) for i in range(2)]
        wait(lambda: crawl.workers() == 2, "both processes to open")
        site.open("index")
        for proc in procs:
            finish(proc)
        hits = site.page_hits()
        sitemaps = [p for p in ["/sitemap_index.xml", *site.sitemap_paths()] if site.hits[p]]
    assert len(hits) == 50 and sum(n - 1 for n in hits.values()) <= crawl.requeued()
    assert len(sitemaps) == 4  # the index and 3 children
    read = {page for sitemap in sitemaps[1:] for page in site.pages_of(sitemap)}
    assert set(hits) <= read


@pytest.mark.slow
def test_sigkill_then_restart_reads_the_lost_sitemap(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """SIGKILL of the process holding a sitemap, then a restart: it is re-read, no page lost."""
    crawl = Crawl(redis_server, tmp_path)
    with Site(children=8, per_child=40) as site:
        procs = [_start(site, redis_server, crawl.name, crawl.out(i)) for i in range(2)]
        wait(lambda: crawl.workers() == 2, "both processes to open")
        site.open("index")
        assert site.slow_reached.wait(DEADLINE)
        owner = crawl.client.hget(crawl.keys.owners, site.base + SLOW)
        assert isinstance(owner, str)
        index = next(i for i, p in enumerate(procs) if p.pid == owner_pid(owner))
        victim, survivor = procs[index], procs[1 - index]
        # Mid-run: the victim holds the gated sitemap and is crawling pages meanwhile.
        wait(lambda: len(_pages(crawl.out(index))) >= 20, "the victim to crawl pages")
        victim.send_signal(signal.SIGSTOP)
        held = held_by(crawl.client, crawl.keys, victim.pid)
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=DEADLINE)
        assert victim.returncode == -signal.SIGKILL
        site.open("slow")  # the dead process's request for it is gone; a re-read is served
        restarted = _start(site, redis_server, crawl.name, crawl.out(2))
        finish(survivor)
        finish(restarted)
        hits = site.page_hits()
        slow_reads = site.hits[SLOW]
    expected = site.all_pages()
    lost = expected - set(done_paths([crawl.out(i) for i in range(3)]))  # no callback ended
    done = [len(_pages(crawl.out(i))) for i in range(3)]
    requeued = crawl.requeued()
    print(f"kill: pages per process {done}, victim {index}, held {held}, requeued {requeued}")
    assert set(hits) <= expected and not lost, sorted(lost)
    assert sum(n - 1 for n in hits.values()) <= requeued  # fetched twice: only leases lapsed
    assert set(site.pages_of(SLOW)) <= set(hits)  # the sitemap it held was read again
    assert slow_reads == 2
    assert crawl.client.zcard(crawl.keys.expiry) == 0


def test_scheduler_persist_false_is_refused(redis_server: RedisServer, tmp_path: Path) -> None:
    """SCHEDULER_PERSIST = False: the crawl does not start and the error says why."""
    crawl = Crawl(redis_server, tmp_path)
    with Site(children=1, per_child=1) as site:
        proc = _start(site, redis_server, crawl.name, crawl.out(0), "SCHEDULER_PERSIST=false")
        _, err = proc.communicate(timeout=DEADLINE)
        hits = sum(site.hits.values())
    assert "needs SCHEDULER_PERSIST = True" in err
    assert hits == 0 and not crawl.out(0).exists()


def test_example_crawls_the_demo_site_once(redis_server: RedisServer) -> None:
    """examples/scrapy_redis/run.py: two processes, every demo page crawled once in all."""
    from sitemap_reader import demo

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "examples/scrapy_redis/run.py", "--redis", redis_server.url]
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=DEADLINE
    )
    assert result.returncode == 0, result.stderr[-3000:]
    line = result.stdout.strip().splitlines()[-1]
    counts, distinct = line.removeprefix("pages per process: ").split("; distinct pages: ")
    assert sum(int(n) for n in counts.split(", ")) == int(distinct) == len(demo.EXPECTED_PATHS)


def _seeded() -> random.Random:
    seed = random.SystemRandom().randrange(2**32)
    print(f"chaos seed {seed}")  # shown with a failure, to replay the same kill moments
    return random.Random(seed)


#: Processes hit mid-crawl: run_trial's keywords (``how`` is SIGKILL unless said).
CHAOS = [
    pytest.param(
        {"concurrency": 4, "kills": 2, "follow": True, "redirect_every": 7},
        id="sigkill-at-4-redirects-callbacks-yielding-items-and-requests",
    ),
    pytest.param({"concurrency": 16, "kills": 2, "delay": 0.3}, id="sigkill-at-16-awaiting"),
    pytest.param({"concurrency": 16, "kills": 1, "delay": 0.3, "how": "term"}, id="sigterm"),
    pytest.param(
        {"concurrency": 16, "kills": 1, "delay": 0.3, "how": "freeze"}, id="frozen-past-lease"
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", CHAOS)
def test_process_hit_mid_crawl_loses_no_page(
    redis_server: RedisServer, tmp_path: Path, case: dict[str, Any]
) -> None:
    """A process killed, stopped or frozen mid-crawl (the id): no page lost, duplicates bounded."""
    trial = run_trial(redis_server, tmp_path, rng=_seeded(), **case)
    print(f"{case}: {trial}")
    assert trial.kills == case["kills"]
    assert trial.lost == 0
    # Fetched twice: only pages whose lease lapsed (the victims', or a stalled process's).
    assert trial.duplicates <= trial.requeued
    # A victim held at most 2 x CONCURRENT_REQUESTS pages (async callbacks included).
    assert trial.held <= 2 * case["concurrency"] * trial.kills


def test_undecodable_queue_entries_are_dropped_with_one_line_each(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Garbage and an unknown callback first in the queue: one line each, dropped, pages once."""
    crawl = Crawl(redis_server, tmp_path)
    gone = pickle.dumps({"url": "http://127.0.0.1:9/x", "callback": "gone", "method": "GET"})
    crawl.client.zadd(f"{crawl.name}:requests", {b"not a pickle": -10, gone: -10})
    with Site(children=2, per_child=10) as site:
        site.open("slow")
        site.open("index")
        err = finish(_start(site, redis_server, crawl.name, crawl.out(0)))
        hits = site.page_hits()
    dropped = [line for line in err.splitlines() if "does not decode" in line]
    assert len(dropped) == 2, dropped
    assert "Traceback" not in err
    assert set(hits) == site.all_pages()
    assert sum(n - 1 for n in hits.values()) <= crawl.requeued()
    assert crawl.client.zcard(f"{crawl.name}:requests") == 0
    assert crawl.client.zcard(crawl.keys.page_expiry) == 0
