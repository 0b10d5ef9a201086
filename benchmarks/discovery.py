"""End-to-end discovery benchmark: sitemap-reader against ultimate-sitemap-parser (issue 3).

A synthetic site is served on 127.0.0.1 by a separate process: ``/robots.txt`` with two
``Sitemap:`` lines, an index of N children of 50,000 URLs each (loc, lastmod, changefreq,
priority; about 11 MB each; every other child gzipped as ``.xml.gz``), and a 1,000-URL
sitemap duplicating the start of child 0. Each tool runs in its own subprocess from the
homepage URL to the last URL; the subprocess reports its wall time, the time to its first
URL, the URLs it emitted and how many were unique (counted in a bitmap indexed by the
synthetic URL's numbers, so counting costs no memory worth measuring); the parent takes
its peak RSS from ``os.wait4`` (ru_maxrss of that child only).

Run: ``.venv/bin/python benchmarks/discovery.py [--children 4 20] [--latency 0.05]
[--tools ours usp] [--repeat 1]``. ``--latency`` delays every response (seconds), to see
the effect of concurrency; the default is none. Generated files are cached in
``$TMPDIR/sitemap-reader-bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the checkout importable, and
    # keep this folder off the path: incremental.py would shadow Twisted's "incremental"
    # (Scrapy needs it), parse.py the "parse" package.
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

URLS_PER_CHILD = 50_000
DUPLICATES = 1_000
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
CACHE = Path(tempfile.gettempdir()) / "sitemap-reader-bench"
FREQS = ("daily", "weekly", "monthly")


# -- the synthetic site ------------------------------------------------------------------


def child_name(i: int) -> str:
    """File name of child ``i``: odd children are gzipped."""
    return f"child-{i}.xml.gz" if i % 2 else f"child-{i}.xml"


def page(origin: str, child: int, n: int) -> str:
    """URL of page ``n`` of child ``child``."""
    return f"{origin}/c{child}/page-{n}.html"


def urlset_body(origin: str, child: int, count: int) -> bytes:
    """A urlset of ``count`` pages of ``child`` with realistic fields."""
    rng = random.Random(child)
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<urlset xmlns="{NS}">\n']
    for n in range(count):
        day = 1 + rng.randrange(28)
        parts.append(
            f"<url><loc>{page(origin, child, n)}</loc>"
            f"<lastmod>2024-0{1 + n % 9}-{day:02d}T10:{n % 60:02d}:00+00:00</lastmod>"
            f"<changefreq>{FREQS[n % 3]}</changefreq>"
            f"<priority>0.{1 + n % 9}</priority></url>\n"
        )
    parts.append("</urlset>\n")
    return "".join(parts).encode()


def build_files(directory: Path, children: int) -> None:
    """Write the children and the duplicate sitemap once (cached between runs)."""
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(children):
        path = directory / child_name(i)
        if path.exists():
            continue
        body = urlset_body(PAGE_ORIGIN, i, URLS_PER_CHILD)
        path.write_bytes(gzip.compress(body, 6, mtime=0) if i % 2 else body)
    dup = directory / "duplicates.xml"
    if not dup.exists():
        dup.write_bytes(urlset_body(PAGE_ORIGIN, 0, DUPLICATES))


#: Pages live on the server's host without its port: in the target's scope (ports do not
#: matter to it), never fetched, and the generated files do not depend on the port.
PAGE_ORIGIN = "http://127.0.0.1"


def serve(children: int, latency: float) -> None:
    """Serve the site; print the origin on stdout; run until killed."""
    from aiohttp import web

    build_files(CACHE, children)
    files = {f"/{child_name(i)}": CACHE / child_name(i) for i in range(children)}
    files["/duplicates.xml"] = CACHE / "duplicates.xml"
    texts: dict[str, tuple[str, str]] = {}  # path -> (body, content type), once bound

    async def handle(request: web.Request) -> web.StreamResponse:
        if latency:
            await asyncio.sleep(latency)
        if request.path in texts:
            text, kind = texts[request.path]
            return web.Response(text=text, content_type=kind)
        path = files.get(request.path)
        if path is None:
            return web.Response(status=404, text="not found", content_type="text/html")
        kind = "application/x-gzip" if path.suffix == ".gz" else "application/xml"
        return web.FileResponse(path, headers={"Content-Type": kind})

    async def main() -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        origin = f"http://127.0.0.1:{runner.addresses[0][1]}"
        entries = "".join(
            f"<sitemap><loc>{origin}/{child_name(i)}</loc></sitemap>" for i in range(children)
        )
        index = f'<?xml version="1.0"?><sitemapindex xmlns="{NS}">{entries}</sitemapindex>'
        robots = f"User-agent: *\nSitemap: {origin}/index.xml\nSitemap: {origin}/duplicates.xml\n"
        texts["/robots.txt"] = (robots, "text/plain")
        texts["/index.xml"] = (index, "application/xml")
        print(origin, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# -- the measured workers ----------------------------------------------------------------


class Uniques:
    """Count distinct synthetic page URLs in a bitmap (about 6 KiB per child)."""

    def __init__(self, children: int) -> None:
        self.bits = bytearray((children * URLS_PER_CHILD + 7) // 8)
        self.count = 0

    def add(self, url: str) -> None:
        tail = url.rsplit("/c", 1)[1]  # "{child}/page-{n}.html"
        child, rest = tail.split("/page-", 1)
        n = int(child) * URLS_PER_CHILD + int(rest[:-5])
        byte, bit = divmod(n, 8)
        if not self.bits[byte] & (1 << bit):
            self.bits[byte] |= 1 << bit
            self.count += 1


def work_ours(origin: str, children: int) -> dict[str, Any]:
    """sitemap-reader: stream every URL of the site."""
    from sitemap_reader.crawl import SitemapReader

    uniques = Uniques(children)
    result: dict[str, Any] = {}

    async def main() -> None:
        started = time.perf_counter()
        emitted = 0
        async with SitemapReader() as reader:
            async for batch in reader.batches(origin + "/"):
                if not emitted:
                    result["first"] = time.perf_counter() - started
                emitted += len(batch)
                for record in batch:
                    uniques.add(record.url)
        result["wall"] = time.perf_counter() - started
        result["emitted"] = emitted

    asyncio.run(main())
    result["unique"] = uniques.count
    return result


def work_usp(origin: str, children: int) -> dict[str, Any]:
    """ultimate-sitemap-parser: build the tree, then iterate all pages."""
    import logging

    from usp.tree import sitemap_tree_for_homepage

    logging.disable(logging.CRITICAL)
    uniques = Uniques(children)
    started = time.perf_counter()
    first = None
    emitted = 0
    tree = sitemap_tree_for_homepage(origin + "/")
    for item in tree.all_pages():
        if first is None:
            first = time.perf_counter() - started
        emitted += 1
        uniques.add(item.url)
    wall = time.perf_counter() - started
    return {"wall": wall, "first": first, "emitted": emitted, "unique": uniques.count}


# -- the driver --------------------------------------------------------------------------


def measure(tool: str, origin: str, children: int) -> dict[str, Any]:
    """Run one worker subprocess; its report plus its own peak RSS (MiB)."""
    command = [sys.executable, __file__, "--work", tool, "--origin", origin]
    command += ["--children", str(children)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{tool} worker failed with exit code {process.returncode}")
    report: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    report["rss"] = usage.ru_maxrss / 1024  # KiB on Linux
    report["cpu"] = usage.ru_utime + usage.ru_stime
    return report


def start_server(children: int, latency: float) -> tuple[subprocess.Popen[str], str]:
    """Start the site server subprocess; return it and its origin."""
    command = [sys.executable, __file__, "--serve", "--children", str(children)]
    command += ["--latency", str(latency)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    origin = server.stdout.readline().strip()
    if not origin.startswith("http://"):
        server.kill()
        raise SystemExit("the benchmark server did not start")
    return server, origin


def run_all(sizes: list[int], tools: list[str], latency: float, repeat: int) -> None:
    """Measure every tool at every size; print one markdown table."""
    rows: list[tuple[int, str, dict[str, Any]]] = []
    for children in sizes:
        server, origin = start_server(children, latency)
        try:
            for tool in tools:
                runs = [measure(tool, origin, children) for _ in range(repeat)]
                best = min(runs, key=lambda r: r["wall"])
                best["rss"] = max(r["rss"] for r in runs)
                rows.append((children, tool, best))
                print(f"  N={children} {tool}: {best}", file=sys.stderr, flush=True)
        finally:
            server.kill()
            server.wait()
    print_table(rows, latency)


def print_table(rows: list[tuple[int, str, dict[str, Any]]], latency: float) -> None:
    """The markdown table, with ratios usp / ours and RSS growth from the smallest N."""
    names = {"ours": "sitemap-reader", "usp": "ultimate-sitemap-parser"}
    print(f"\nlatency per response: {latency * 1000:.0f} ms\n")
    print(
        "| N | tool | wall (s) | CPU (s) | first URL (s) | URLs emitted | unique | peak RSS (MiB) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    by_key = {(n, tool): r for n, tool, r in rows}
    for n, tool, r in rows:
        print(
            f"| {n} | {names[tool]} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['first']:.3f} "
            f"| {r['emitted']:,} "
            f"| {r['unique']:,} | {r['rss']:.0f} |"
        )
    sizes = sorted({n for n, _, _ in rows})
    print()
    for n in sizes:
        ours, usp = by_key.get((n, "ours")), by_key.get((n, "usp"))
        if ours and usp:
            print(
                f"N={n}: usp/ours wall {usp['wall'] / ours['wall']:.1f}x, "
                f"first URL {usp['first'] / ours['first']:.0f}x, "
                f"peak RSS {usp['rss'] / ours['rss']:.2f}x"
            )
    if len(sizes) > 1 and all((n, "ours") in by_key for n in sizes):
        small, large = by_key[(sizes[0], "ours")], by_key[(sizes[-1], "ours")]
        print(
            f"sitemap-reader peak RSS N={sizes[-1]} / N={sizes[0]}: "
            f"{large['rss'] / small['rss']:.2f}x"
        )


def main() -> None:
    """Command line: the driver, or (internally) the server or one worker."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, nargs="+", default=[4, 20])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--tools", nargs="+", default=["ours", "usp"], choices=["ours", "usp"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work", choices=["ours", "usp"], help=argparse.SUPPRESS)
    parser.add_argument("--origin", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.children[0], args.latency)
    elif args.work:
        worker = work_ours if args.work == "ours" else work_usp
        print(json.dumps(worker(args.origin, args.children[0])), flush=True)
    else:
        run_all(args.children, args.tools, args.latency, args.repeat)


if __name__ == "__main__":
    main()
