"""Micro benchmark of per-parser and per-sitemap set-up costs (issue 13, item 3).

Real sitemaps are mostly 1k-3k URLs, so a cost paid once per sitemap matters more there
than on the 50k-URL files of ``parse.py``. This prints, in thread CPU time (best of N):

- the pieces of a parser's set-up: ``Limits()``, the clock, the scorer, the emitter, the
  expat parser, a whole ``SitemapParser`` with and without ``limits``/``now`` given;
- the fixed cost of one sitemap end to end (an empty urlset, a 1-URL urlset: create,
  feed, close), and what share of the whole parse it is at 100, 1k, 3k and 50k URLs;
- on the real corpus (``../shared/realdata``, when present) the same share over its files.

Run: ``.venv/bin/python benchmarks/small_files.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import pyexpat
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the checkout importable (see parse.py)
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

from benchmarks.parse import make_sitemap, real_corpus, run_ours
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.parser import SitemapParser, _Emitter
from sitemap_reader.records.scoring import make_scorer

SITEMAP_URL = "https://www.example.com/sitemap.xml"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
EMPTY = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}"></urlset>\n'.encode()
ONE = (
    f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}"><url>'
    "<loc>https://www.example.com/a</loc><lastmod>2024-01-01</lastmod></url></urlset>\n"
).encode()
SIZES = (100, 1_000, 3_000, 50_000)


def per_call(function: Callable[[], object], repeat: int, calls: int) -> float:
    """Best thread CPU seconds per call of ``function`` over ``repeat`` rounds of ``calls``."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        started = time.thread_time()
        for _ in range(calls):
            function()
        best = min(best, (time.thread_time() - started) / calls)
    return best


def whole(body: bytes) -> Callable[[], object]:
    """A call that parses ``body`` end to end with a fresh parser."""
    return lambda: run_ours(body)


def main(argv: list[str] | None = None) -> int:
    """Print the three tables."""
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    cli.add_argument("--repeat", type=int, default=5, help="rounds (best kept)")
    args = cli.parse_args(argv)
    repeat = max(1, args.repeat)
    now = datetime.now(UTC)
    limits = Limits()
    pieces: dict[str, Callable[[], object]] = {
        "Limits()": Limits,
        "datetime.now(UTC)": lambda: datetime.now(UTC),
        "make_scorer(now)": lambda: make_scorer(now),
        "_Emitter(...)": lambda: _Emitter(SITEMAP_URL, False, limits, now),
        "pyexpat.ParserCreate()": pyexpat.ParserCreate,
        "SitemapParser(url)": lambda: SitemapParser(SITEMAP_URL),
        "SitemapParser(url, limits=, now=)": lambda: SitemapParser(
            SITEMAP_URL, limits=limits, now=now
        ),
        "empty urlset, end to end": whole(EMPTY),
        "1-URL urlset, end to end": whole(ONE),
    }
    print(f"Set-up costs, thread CPU, best of {repeat}")
    print()
    print("| step | µs |")
    print("|---|---:|")
    costs = {}
    for name, function in pieces.items():
        costs[name] = per_call(function, repeat, 2_000)
        print(f"| {name} | {costs[name] * 1e6:.2f} |")
    fixed = costs["empty urlset, end to end"]
    print()
    print("| file | µs per URL | whole parse (ms) | fixed cost share |")
    print("|---|---:|---:|---:|")
    for size in SIZES:
        body = make_sitemap(size, "plain")
        seconds = per_call(whole(body), repeat, max(1, 20_000 // size))
        print(
            f"| {size:,} plain URLs | {seconds / size * 1e6:.2f} | {seconds * 1e3:.2f} "
            f"| {fixed / seconds:.1%} |"
        )
    corpus = real_corpus()
    if corpus:
        total = 0.0
        for _, body, _ in corpus:
            try:
                total += per_call(whole(body), repeat, 1)
            except Exception as error:
                print(f"(skipped a real file: {error!r})", file=sys.stderr)
        entries = sum(count for _, _, count in corpus)
        print(
            f"| real corpus, {len(corpus)} files, {entries:,} entries "
            f"| {total / entries * 1e6:.2f} | {total * 1e3:.2f} "
            f"| {fixed * len(corpus) / total:.1%} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
