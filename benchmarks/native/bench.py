"""What each URL costs, step by step, on the pure path and on the compiled path.

Variants (each parses the whole body, 64 KiB chunks):

- ``a`` the floor: pyexpat with ``buffer_text`` and three empty Python handlers;
- ``b`` our parser as it is (``SitemapParser``: scanner, lite path, Python emitter);
- ``c`` C expat through the capsule with three empty C handlers; ``c+str`` the same
  building every text as a Python str;
- ``d0`` the compiled C reader, entries built and dropped (no emitter work);
- ``d1`` C reader, the reference's Python ``drain``;
- ``d2``..``d6`` C reader and the C drain, each adding one step done in C: the drain loop
  itself (every field still parsed by the reference's Python functions), the location's
  normal-form test, lastmod, changefreq and priority, the score and the record.

Workloads: ``plain``, 50,000 generated URLs in normal form (``benchmarks/parse.py``), and
``real``, every urlset and sitemapindex of the real corpus (read in place), summed; more
shapes with ``--shapes``. Timing is this thread's CPU time, best of ``--repeat`` runs taken
round-robin, with ``/proc/loadavg`` printed beside each table. ``--callgrind`` counts
instructions instead (one run of each variant in ``valgrind --tool=callgrind``, only the
parse itself counted): those do not depend on the machine's load.

Run: ``.venv/bin/python benchmarks/native/build.py && .venv/bin/python
benchmarks/native/bench.py [--repeat N] [--shapes fat,non-ASCII] [--callgrind]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import os
import pyexpat
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the checkout (run as a script)

from benchmarks.native.common import ALL, bench_parse, core, native_parser  # noqa: E402
from sitemap_reader.parse import native  # noqa: E402
from sitemap_reader.parse.parser import SitemapParser  # noqa: E402

bench = bench_parse()
DATA = HERE / "build" / "data"
Runner = Callable[[bytes], int | None]


def load_region() -> Any:
    """The callgrind region helper (build.py builds it)."""
    folder = HERE / "build" / os.environ.get("SITEMAP_NATIVE_BUILD", "release")
    path = next(folder.glob("_cgregion*.so"))
    spec = importlib.util.spec_from_file_location("_cgregion", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def native_runner(flags: int | None, *, drop: bool = False) -> Runner:
    """The compiled parser with the C drain's ``flags`` (None: the Python drain)."""

    def run(body: bytes) -> int:
        parser = native_parser(bench.SITEMAP_URL, flags, drop=drop)
        count = 0
        for chunk in bench.chunks(body):
            count += len(parser.feed(chunk))
        return count + len(parser.close())

    return run


def pure_ours(body: bytes) -> int:
    """parse.py's run of our parser, on the pure-Python path."""
    with native.using("pure"):
        count: int = bench.run_ours(body)
    return count


def null_runner(build: bool) -> Runner:
    def run(body: bytes) -> int:
        events: int = core.null_parse(bench.chunks(body), build)[0]
        return events

    return run


def variants() -> dict[str, Runner]:
    """Every variant, in table order."""
    c = core
    return {
        "a  pyexpat + 3 empty Python handlers (floor)": floor,
        "b  ours, pure Python (SitemapParser)": pure_ours,
        "c  C expat + 3 empty C handlers": null_runner(False),
        "c+str  ... building every text as a str": null_runner(True),
        "d0 C reader, entries dropped": native_runner(None, drop=True),
        "d1 C reader + Python drain": native_runner(None),
        "d2 + C drain loop (fields by Python)": native_runner(0),
        "d3 + loc normal-form test in C": native_runner(c.N_LOC),
        "d4 + lastmod in C": native_runner(c.N_LOC | c.N_DATE),
        "d5 + changefreq/priority in C": native_runner(c.N_LOC | c.N_DATE | c.N_FIELDS),
        "d6 + score and record in C (all)": native_runner(ALL),
    }


def workload(name: str) -> tuple[bytes, int]:
    """(body, URL count): ``real`` is the corpus's XML sitemaps joined as one list of
    bodies, separated by a marker (split again by :func:`bodies`)."""
    if name == "real":
        files = bench.real_corpus()
        return MARK.join(body for _, body, _ in files), 0
    path = DATA / f"{name.replace(' ', '_').replace('%', 'pct')}-50000.xml"
    if not path.is_file():
        DATA.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bench.make_sitemap(50_000, name))
    return path.read_bytes(), 0


MARK = b"\x00--next-body--\x00"


def over_bodies(runner: Runner) -> Runner:
    """A runner over every body of a joined workload (the real corpus)."""

    def run(joined: bytes) -> int | None:
        total = 0
        for body in joined.split(MARK):
            total += runner(body) or 0
        return total

    return run


def floor(body: bytes) -> None:
    """The floor (benchmarks/parse.py's), stopping where a body is not well-formed."""
    with contextlib.suppress(pyexpat.ExpatError):
        bench.run_floor(body)


def timed(runner: Runner, body: bytes) -> tuple[float, int | None]:
    gc.collect()
    started = time.thread_time()
    count = runner(body)
    return time.thread_time() - started, count


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def urls_in(body: bytes) -> int:
    """Records the reference makes from a (joined) workload."""
    count = over_bodies(pure_ours)(body)
    assert count is not None
    return count


def table(name: str, repeat: int) -> str:
    body, _ = workload(name)
    urls = urls_in(body)
    runners = {k: over_bodies(v) for k, v in variants().items()}
    best: dict[str, float] = {}
    for _ in range(repeat):
        for key, runner in runners.items():
            seconds, _count = timed(runner, body)
            best[key] = min(best.get(key, seconds), seconds)
    floor = best[next(iter(best))]
    cexpat = best["c  C expat + 3 empty C handlers"]
    lines = [
        f"### {name}: {urls:,} URLs, {len(body) / 1e6:.1f} MB (load average: {loadavg()})",
        "",
        "| variant | us/URL | URLs/s | x floor (a) | x C expat (c) |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, seconds in best.items():
        lines.append(
            f"| {key} | {seconds / urls * 1e6:.3f} | {urls / seconds:,.0f} | "
            f"{floor / seconds:.2f} | {cexpat / seconds:.2f} |"
        )
    lines.append(f"\n(load average after: {loadavg()})")
    return "\n".join(lines)


# --------------------------------------------------------------------------- callgrind


def one(name: str, key: str) -> None:
    """Child of --callgrind: one run of one variant, inside the counted region."""
    body, _ = workload(name)
    runner = over_bodies(variants()[key])
    load_region().run(lambda: runner(body))


def callgrind(names: list[str]) -> str:
    lines = [
        "| workload | variant | instructions/URL | x floor (a) | x C expat (c) |",
        "|---|---|---:|---:|---:|",
    ]
    for name in names:
        body, _ = workload(name)
        urls = urls_in(body)
        counts: dict[str, int] = {}
        for key in variants():
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "callgrind.out"
                cmd = [
                    "valgrind", "--tool=callgrind", "--instr-atstart=no",
                    f"--callgrind-out-file={out}.%p", sys.executable, __file__, "--one", name, key,
                ]  # fmt: skip
                subprocess.run(cmd, check=True, capture_output=True)
                dumps = [p for p in Path(tmp).iterdir() if p.name.endswith(".1")]
                text = dumps[0].read_text(errors="replace")  # the region's own dump
            found = re.search(r"^totals: (\d+)", text, re.MULTILINE)
            assert found is not None, "no totals in the callgrind output"
            counts[key] = int(found.group(1))
            print(f"  {name} / {key}: {counts[key] / urls:,.0f} Ir/URL", file=sys.stderr)
        floor = counts[next(iter(counts))]
        cexpat = counts["c  C expat + 3 empty C handlers"]
        for key, count in counts.items():
            lines.append(
                f"| {name} | {key} | {count / urls:,.0f} | {floor / count:.2f} | "
                f"{cexpat / count:.2f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--shapes", default="", help="more synthetic shapes, comma-separated")
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--one", nargs=2, metavar=("WORKLOAD", "VARIANT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        one(*args.one)
        return 0
    names = ["plain", "real", *filter(None, args.shapes.split(","))]
    # the compiled path must agree with the reference before its speed means anything
    for name in names:
        body, _ = workload(name)
        for part in body.split(MARK):
            with native.using("pure"):
                ours = SitemapParser(bench.SITEMAP_URL)
            with native.using("native"):
                mine = SitemapParser(bench.SITEMAP_URL, now=ours._emit.now)
            a = ours.feed(part) + ours.close()
            b = mine.feed(part) + mine.close()
            assert a == b and ours.problems == mine.problems, f"{name}: results differ"
    if args.callgrind:
        print(f"load average: {loadavg()} (instruction counts do not depend on it)")
        print(callgrind(names))
        return 0
    for name in names:
        print(table(name, args.repeat))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
