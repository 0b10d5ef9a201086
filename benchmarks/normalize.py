"""Micro benchmark of ``normalize_url`` per URL shape: fast, near and yarl paths (issue 13).

For each shape it builds N distinct URLs (yarl memoizes its parse, so repeating one URL
would measure a cache hit) and prints the cost per URL of:

- ``normalize_url``: the fast path, then the near path, then yarl;
- ``_normalize_url_slow``: yarl's full parse for every URL (the reference it must equal);

plus how many of the results are equal (they must all be). Best of N repeats, round-robin.
``--baseline FILE`` adds a column for the ``normalize_url`` of another version of
``normalize.py``, e.g. ``git show REV:sitemap_reader/parse/normalize.py > /tmp/old.py``.

Run: ``.venv/bin/python benchmarks/normalize.py [--urls N] [--repeat N] [--baseline FILE]``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the checkout importable (see parse.py)
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

from sitemap_reader.parse.normalize import _normalize_url_slow, normalize_url

#: Shape name -> URL for index i (every URL distinct).
SHAPES: dict[str, Callable[[int], str]] = {
    "plain host (normal form)": lambda i: f"https://www.example.com/products/item-{i}?ref=nav",
    "non-default port": lambda i: f"http://127.0.0.1:8765/products/item-{i}?ref=nav",
    "default port :443": lambda i: f"https://www.example.com:443/products/item-{i}",
    "port with leading zero": lambda i: f"http://127.0.0.1:08765/products/item-{i}",
    "raw UTF-8 path": lambda i: f"https://fa.example.com/محصولات/کالای-{i}/",
    "lower-case %xx path": lambda i: (
        f"https://fa.example.com/%d9%85%d8%ad%d8%b5%d9%88%d9%84/%da%a9-{i}/"
    ),
    "upper-case host": lambda i: f"https://WWW.Example.COM/products/item-{i}",
    "bare host": lambda i: f"https://host-{i}.example.com",
    "space and fragment": lambda i: f"https://www.example.com/a b/item-{i}#top",
    "dot segment (yarl)": lambda i: f"https://www.example.com/a/../item-{i}",
    "IDNA host (yarl)": lambda i: f"https://bücher-{i}.example/item",
    "userinfo (yarl)": lambda i: f"https://user@www.example.com/item-{i}",
}

Normalizer = Callable[[str], str | None]


def cost(function: Normalizer, urls: list[str]) -> float:
    """Seconds per URL for one pass of ``function`` over ``urls``."""
    gc.collect()
    started = time.perf_counter()
    for url in urls:
        function(url)
    return (time.perf_counter() - started) / len(urls)


def load_baseline(path: str) -> Normalizer:
    """``normalize_url`` from another copy of normalize.py (imported under its own name)."""
    spec = importlib.util.spec_from_file_location("baseline_normalize", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function: Normalizer = module.normalize_url
    return function


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 if any result differs from the yarl path's."""
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    cli.add_argument("--urls", type=int, default=20_000, help="distinct URLs per shape")
    cli.add_argument("--repeat", type=int, default=5, help="repeats (best kept)")
    cli.add_argument("--baseline", help="another normalize.py to compare with")
    args = cli.parse_args(argv)
    functions: dict[str, Normalizer] = {
        "normalize_url": normalize_url,
        "yarl path": _normalize_url_slow,
    }
    if args.baseline:
        functions["baseline"] = load_baseline(args.baseline)
    # A different offset per repeat: yarl's parse caches would otherwise serve repeats.
    batches = {
        shape: [[make(r * args.urls + i) for i in range(args.urls)] for r in range(args.repeat)]
        for shape, make in SHAPES.items()
    }
    best = {(shape, name): float("inf") for shape in SHAPES for name in functions}
    for round_ in range(args.repeat):
        for shape in SHAPES:
            for name, function in functions.items():
                seconds = cost(function, batches[shape][round_])
                best[shape, name] = min(best[shape, name], seconds)
    print(f"{args.urls:,} distinct URLs per shape, best of {args.repeat}; µs per URL")
    print()
    extra = " baseline normalize_url | baseline / ours |" if args.baseline else ""
    print(f"| URL shape | normalize_url | yarl path | yarl / ours |{extra} results equal |")
    print("|---|---:|---:|---:|" + ("---:|---:|" if args.baseline else "") + "---:|")
    all_equal = True
    for shape in SHAPES:
        urls = batches[shape][0]
        equal = sum(normalize_url(u) == _normalize_url_slow(u) for u in urls)
        all_equal = all_equal and equal == len(urls)
        ours, yarl = best[shape, "normalize_url"], best[shape, "yarl path"]
        if args.baseline:
            old = best[shape, "baseline"]
            extra = f" {old * 1e6:.2f} | {old / ours:.1f}x |"
        print(
            f"| {shape} | {ours * 1e6:.2f} | {yarl * 1e6:.2f} | {yarl / ours:.1f}x |{extra}"
            f" {equal:,}/{len(urls):,} |"
        )
    return 0 if all_equal else 1


if __name__ == "__main__":
    sys.exit(main())
