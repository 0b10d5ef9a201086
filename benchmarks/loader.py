"""SitemapLoader under SIGKILL (issue 22): a 1M-URL site, killed at random points, resumed.

One crawl of a generated loopback site (``--sitemaps`` urlsets of ``--per-sitemap`` URLs
under one index; 20 x 50,000 = 1,000,000 by default) by ``tests/loader/loader_child.py``
(take a record, print it, acknowledge it, print that), with ``--buffer`` 1000. The child
is killed with SIGKILL ``--kills`` times, at random output lines (seeded), and started
again on the same progress file each time, until a last run ends on its own.

Reported (one table): trials (kills), URLs, lost (listed but not acknowledged at the
end), duplicates (handed out again after their acknowledgement, or twice in one run),
redelivered (in flight at a kill, handed out again: allowed), extra fetches (sitemap
requests beyond one per sitemap: each kill re-reads the urlsets it was reading and the
index), peak RSS (the largest VmHWM of any child run, read from /proc before each kill)
and wall time.

Run: ``.venv/bin/python benchmarks/loader.py [--kills 10] [--sitemaps 20]
[--per-sitemap 50000] [--buffer 1000] [--seed 22]``.

``--soak`` (issue 41): ``--urls`` (10,000,000) over ``--targets`` (200) loopback sites, a
few huge, many small, some failing, killed ``--kills`` times at random and restarted on
one progress file (``tests/loader/soak_kit.py``); prints lost (must be 0), handed out
again after acknowledgement (0), redelivered in flight, the child's RSS over time, the
longest wait for ``next()`` and the small sites' longest wait. The 10 M run takes hours
on a quiet machine (each acknowledgement is a commit); ``--urls 100000`` checks it works.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.crawl.crawl_kit import start
from tests.loader.kill_kit import Audit, GeneratedSite, run_child
from tests.loader.soak_kit import soak


async def bench(args: argparse.Namespace) -> dict[str, object]:
    """Crawl with kills; the table's numbers."""
    site = GeneratedSite(args.sitemaps, args.per_sitemap)
    server = await start(site)
    expected = site.page_urls()
    chooser = random.Random(args.seed)
    lines = 2 * len(expected)  # out + ack per URL
    kills = sorted(chooser.sample(range(1, int(lines * 0.95)), args.kills))
    audit = Audit()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        progress = str(Path(folder) / "progress.db")
        printed = 0
        for kill_at in kills:
            run = await run_child(
                site.base, progress, buffer=args.buffer, kill_after=kill_at - printed, limit=3600
            )
            printed = kill_at
            audit.add(run)
            print(
                f"killed after {kill_at:,} lines (peak {run.peak_kib / 1024:.0f} MiB)",
                file=sys.stderr,
            )
        audit.add(
            await run_child(site.base, progress, buffer=args.buffer, kill_after=None, limit=3600)
        )
        lost = audit.lost(expected, progress)
    seconds = time.monotonic() - started
    await server.close()
    return {
        "trials": sum(run.killed for run in audit.runs),
        "urls": len(expected),
        "lost": len(lost),
        "duplicates": len(audit.duplicates()),
        "redelivered": len(audit.redelivered()),
        "extra_fetches": site.sitemap_hits() - (1 + args.sitemaps),
        "peak_rss_mib": max(run.peak_kib for run in audit.runs) / 1024,
        "seconds": seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--sitemaps", type=int, default=20)
    parser.add_argument("--per-sitemap", type=int, default=50_000)
    parser.add_argument("--buffer", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--soak", action="store_true", help="the soak (see the docstring)")
    parser.add_argument("--urls", type=int, default=10_000_000)
    parser.add_argument("--targets", type=int, default=200)
    args = parser.parse_args()
    if args.soak:
        return run_soak(args)
    result = asyncio.run(bench(args))
    print(
        "| trials (kills) | URLs | lost | duplicates | redelivered (in flight) "
        "| extra fetches | peak RSS | time |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {result['trials']} | {result['urls']:,} | {result['lost']} | {result['duplicates']} "
        f"| {result['redelivered']} | {result['extra_fetches']} "
        f"| {result['peak_rss_mib']:.0f} MiB | {result['seconds']:.0f} s |"
    )
    return 0 if result["lost"] == 0 and result["duplicates"] == 0 else 1


def run_soak(args: argparse.Namespace) -> int:
    """The soak: its table; 1 unless nothing was lost or handed out twice."""
    with tempfile.TemporaryDirectory() as folder:
        result = asyncio.run(
            soak(
                args.urls, args.targets, args.kills, progress=str(Path(folder) / "p.db"),
                buffer=args.buffer, seed=args.seed,
            )
        )  # fmt: skip
    print(result.table())
    return 0 if result.lost == 0 and result.twice_after_ack == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
