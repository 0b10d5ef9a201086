"""Benchmark of record construction and reading (issue 28 §4: records built whole).

Measures, on a 50,000-URL urlset (loc, lastmod, changefreq, priority on every URL):

- ``parse``: :class:`SitemapParser` turning the body into records (64 KiB feeds), the
  bare parser's builder;
- ``core``: the discovery core reading the same body as a site's sitemap after a
  robots.txt with one Disallow rule, driven by hand (every record built by the job's
  builder, audited against robots.txt, deduped, shaped, emitted);
- ``read``: reading the rare fields (``title``, ``mobile``, ``pagemaps``, ``robots``,
  ``source``) of every parser-made record;
- ``to_dict``: the JSON shape of every parser-made record, and of every core-made one.

Each figure is the best of ``--repeat`` runs, in nanoseconds per record, on the thread's
CPU clock (a shared machine's other load costs wall time, less so CPU time). With
``--against PATH`` (another checkout, e.g. an ``git archive`` of an older commit) the two
are run in turn, in fresh processes, round after round, and the table gives both and
their ratio; the load average is printed before and after.

Run: ``.venv/bin/python benchmarks/records.py [--repeat N] [--rounds N] [--against PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

URLS = 50_000
CHUNK = 64 * 1024
BASE = "https://site.example"
METRICS = ("parse", "core", "read", "to_dict", "to_dict_core")


def urlset(count: int) -> bytes:
    """A urlset of ``count`` URLs with every field, a few under a disallowed path."""
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    entries = [
        f"<url><loc>{BASE}/{'private' if i % 10 == 0 else 'page'}/{i}</loc>"
        f"<lastmod>2024-01-{1 + i % 28:02d}T10:00:00+00:00</lastmod>"
        f"<changefreq>daily</changefreq><priority>0.{i % 10}</priority></url>"
        for i in range(count)
    ]
    return f'<?xml version="1.0"?>\n<urlset {ns}>{"".join(entries)}</urlset>\n'.encode()


def best(run: Callable[[], object], repeat: int) -> tuple[float, Any]:
    """The least thread CPU time of ``repeat`` calls of ``run``, and its last result."""
    times = []
    result: Any = None
    for _ in range(repeat):
        start = time.thread_time()
        result = run()
        times.append(time.thread_time() - start)
    return min(times), result


def measure(repeat: int) -> dict[str, float]:
    """Nanoseconds per record of each metric, in this process (this checkout)."""
    from sitemap_reader.discovery import Discovery, Emit, Fetch, Schedule, classify
    from sitemap_reader.parse.parser import SitemapParser
    from sitemap_reader.records import UrlRecord

    body = urlset(URLS)

    def parse() -> list[Any]:
        parser = SitemapParser(f"{BASE}/s.xml")
        items = []
        for start in range(0, len(body), CHUNK):
            items += parser.feed(body[start : start + CHUNK])
        return items + parser.close()

    def core() -> list[UrlRecord]:
        robots = f"User-agent: *\nDisallow: /private/\nSitemap: {BASE}/s.xml\n"
        bodies = {"/robots.txt": robots.encode()}
        bodies["/s.xml"] = body
        engine = Discovery([classify(BASE + "/")])
        records: list[UrlRecord] = []
        queue = [a.ticket for a in engine.start() if isinstance(a, Schedule)]
        while queue:
            ticket = queue.pop(0)
            actions = engine.begin(ticket)
            for fetch in [a for a in actions if isinstance(a, Fetch)]:
                data = bodies[fetch.url.removeprefix(BASE)]
                actions += engine.response(fetch.ticket, url=fetch.url, status=200)
                for start in range(0, len(data), CHUNK):
                    actions += engine.body(fetch.ticket, data[start : start + CHUNK])
                actions += engine.end(fetch.ticket)
            queue += [a.ticket for a in actions if isinstance(a, Schedule)]
            records += [r for a in actions if isinstance(a, Emit) for r in a.records]
        assert len(records) == URLS, len(records)
        return records

    seconds, items = best(parse, repeat)
    records = [i for i in items if isinstance(i, UrlRecord)]
    assert len(records) == URLS
    out = {"parse": seconds}
    out["core"], made = best(core, repeat)

    def read() -> None:
        for record in records:
            record.title, record.mobile, record.pagemaps, record.robots, record.source  # noqa: B018

    out["read"] = best(read, repeat)[0]
    out["to_dict"] = best(lambda: [r.to_dict() for r in records], repeat)[0]
    out["to_dict_core"] = best(lambda: [r.to_dict() for r in made], repeat)[0]
    return {name: value * 1e9 / URLS for name, value in out.items()}


def load() -> str:
    """The load averages (1, 5, 15 minutes)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def compare(against: Path, rounds: int, repeat: int) -> None:
    """Run this checkout and ``against`` in turn, round after round; print the table."""
    here = Path(__file__).resolve().parents[1]
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    print(f"load average before: {load()}")
    for _ in range(rounds):
        for name, root in (("before", against), ("after", here)):
            code = (
                f"import sys, json; sys.path.insert(0, {str(root)!r}); "
                f"sys.path.insert(0, {str(here / 'benchmarks')!r}); import records; "
                f"print(json.dumps(records.measure({repeat})))"
            )
            env = {**os.environ, "PYTHONPATH": str(root)}
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True
            )
            if done.returncode:
                raise SystemExit(done.stderr)
            runs[name].append(json.loads(done.stdout))
    print(f"load average after:  {load()}")
    print(f"{'ns per record':<14}{'before':>10}{'after':>10}{'after/before':>14}")
    for metric in METRICS:
        old = min(r[metric] for r in runs["before"])
        new = min(r[metric] for r in runs["after"])
        print(f"{metric:<14}{old:>10.0f}{new:>10.0f}{new / old:>14.2f}")


def main() -> None:
    """Measure this checkout, or compare it with another (``--against``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (best kept)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --against")
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    args = parser.parse_args()
    if args.against is not None:
        compare(args.against.resolve(), args.rounds, args.repeat)
        return
    here = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(here))
    print(f"load average: {load()}")
    for metric, value in measure(args.repeat).items():
        print(f"{metric:<14}{value:>10.0f} ns per record")


if __name__ == "__main__":
    main()
