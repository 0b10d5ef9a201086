"""End-to-end discovery benchmark: sitemap-reader against its peers (issues 3 and 13).

A synthetic site is served on 127.0.0.1 by a separate process: ``/robots.txt`` with two
``Sitemap:`` lines, an index of N children of 50,000 URLs each (loc, lastmod, changefreq,
priority; about 11 MB each; every other child gzipped as ``.xml.gz``), and a 1,000-URL
sitemap duplicating the start of child 0. It comes in two variants:

- ``port``: every URL carries the server's port, ``http://127.0.0.1:PORT/...`` (the page
  URLs a fixed ``:8765``, as they are never fetched). Every tool can reach it as is: this
  is the fair comparison.
- ``noport``: everything lives on the made-up host ``www.bench.test``, URLs without a port.
  sitemap-reader resolves the name to the server with its ``resolver`` hook; the peers,
  which have no such hook, are sent through the server as their HTTP proxy
  (``http_proxy``, which requests, urllib and Scrapy all honour): the server answers
  absolute-form requests as it answers the others. Nothing leaves loopback either way.

Each tool runs in its own subprocess, from the site's robots.txt or homepage to its last
URL, and reports its wall time and CPU time (both measured inside the worker, after its
imports), its time to the first URL (for tools that return everything at once, their whole
run), the URLs it emitted, how many were unique (a bitmap indexed by the synthetic URL's
numbers, so counting costs no memory worth measuring) and its own peak RSS (``VmHWM`` from
``/proc/self/status``, imports included). The tools:

- ``ours``: ``SitemapReader.batches`` from the homepage;
- ``usp``: ultimate-sitemap-parser's ``sitemap_tree_for_homepage`` then ``all_pages()``;
- ``scrapy``: a ``SitemapSpider`` from robots.txt whose ``sitemap_filter`` counts the
  entries of every urlset and yields none, so pages are never requested;
- ``advertools``: ``sitemap_to_df`` on robots.txt (a DataFrame of every entry).

The peers are in the ``bench`` extra: ``.venv/bin/pip install -e '.[bench]'``; a missing
one is reported and skipped.

Run: ``.venv/bin/python benchmarks/discovery.py [--urls 200k 1M | --children 4 20]
[--variants port noport] [--tools ours usp scrapy advertools] [--repeat 1] [--latency 0]
[--processes 0 2] [--path native|pure|both]``. ``--repeat`` runs take turns; medians are
reported. ``--path`` runs ours on the compiled parser path, the pure-Python one, or both
(the default where the compiled parser is built), each a row.
``--latency`` delays every response (seconds). Generated files are cached in
``$TMPDIR/sitemap-reader-bench`` (about 90 MB per variant at 1M URLs).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import importlib.util
import json
import os
import random
import resource
import socket
import statistics
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
    # SITEMAP_BENCH_SOURCE: another checkout's package instead (benchmarks/cli.py --source).
    sys.path.insert(0, os.environ.get("SITEMAP_BENCH_SOURCE") or str(_here.parent))

URLS_PER_CHILD = 50_000
DUPLICATES = 1_000
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
CACHE = Path(tempfile.gettempdir()) / "sitemap-reader-bench"
FREQS = ("daily", "weekly", "monthly")
#: The made-up host of the ``noport`` variant (``.test`` is reserved: it never resolves).
BENCH_HOST = "www.bench.test"
#: Page origins per variant: pages are never fetched, so the files need not know the port.
PAGE_ORIGINS = {"port": "http://127.0.0.1:8765", "noport": f"http://{BENCH_HOST}"}
TOOLS = ("ours", "usp", "scrapy", "advertools")
#: A file a worker writes one byte to when it sees its first URL (benchmarks/cli.py).
FIRST_URL_ENV = "SITEMAP_BENCH_FIRST"
#: Environment variable that passes ``--processes`` to the ``ours`` worker.
PROCESSES_ENV = "SITEMAP_BENCH_PROCESSES"
#: Set: ours runs on the pure-Python parser path (sitemap_reader/parse/native.py).
NO_EXTENSIONS = "SITEMAP_READER_NO_EXTENSIONS"
#: Module each tool needs (None: always there).
TOOL_MODULES = {"ours": None, "usp": "usp", "scrapy": "scrapy", "advertools": "advertools"}
NAMES = {
    "ours": "sitemap-reader",
    "usp": "ultimate-sitemap-parser",
    "scrapy": "Scrapy SitemapSpider",
    "advertools": "advertools sitemap_to_df",
}


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


def build_files(variant: str, children: int) -> Path:
    """Write the children and the duplicate sitemap of ``variant`` once (cached)."""
    directory = CACHE / variant
    directory.mkdir(parents=True, exist_ok=True)
    origin = PAGE_ORIGINS[variant]
    for i in range(children):
        path = directory / child_name(i)
        if path.exists():
            continue
        body = urlset_body(origin, i, URLS_PER_CHILD)
        partial = path.with_suffix(".partial")
        partial.write_bytes(gzip.compress(body, 6, mtime=0) if i % 2 else body)
        partial.replace(path)  # an interrupted build never leaves a short file behind
    dup = directory / "duplicates.xml"
    if not dup.exists():
        dup.write_bytes(urlset_body(origin, 0, DUPLICATES))
    return directory


def serve(children: int, latency: float, variants: list[str]) -> None:
    """Serve the variants; print the port on stdout; run until killed.

    A request for ``www.bench.test`` (by Host header, or an absolute-form proxy request)
    gets the ``noport`` site, anything else the ``port`` site.
    """
    from aiohttp import web

    folders = {variant: build_files(variant, children) for variant in variants}
    names = {f"/{child_name(i)}" for i in range(children)} | {"/duplicates.xml"}
    port = 0

    def texts(origin: str) -> dict[str, tuple[str, str]]:
        """robots.txt and the index of the site at ``origin``."""
        entries = "".join(
            f"<sitemap><loc>{origin}/{child_name(i)}</loc></sitemap>" for i in range(children)
        )
        index = f'<?xml version="1.0"?><sitemapindex xmlns="{NS}">{entries}</sitemapindex>'
        robots = f"User-agent: *\nSitemap: {origin}/index.xml\nSitemap: {origin}/duplicates.xml\n"
        return {"/robots.txt": (robots, "text/plain"), "/index.xml": (index, "application/xml")}

    sites: dict[str, dict[str, tuple[str, str]]] = {}

    async def handle(request: web.Request) -> web.StreamResponse:
        if latency:
            await asyncio.sleep(latency)
        variant = "noport" if request.host.partition(":")[0] == BENCH_HOST else "port"
        if variant not in folders:
            return web.Response(status=404, text="not served", content_type="text/html")
        text = sites[variant].get(request.path)
        if text is not None:
            return web.Response(text=text[0], content_type=text[1])
        if request.path not in names:
            return web.Response(status=404, text="not found", content_type="text/html")
        path = folders[variant] / request.path[1:]
        kind = "application/x-gzip" if path.suffix == ".gz" else "application/xml"
        return web.FileResponse(path, headers={"Content-Type": kind})

    async def main() -> None:
        nonlocal port
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        sites["port"] = texts(f"http://127.0.0.1:{port}")
        sites["noport"] = texts(f"http://{BENCH_HOST}")
        print(port, flush=True)
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


class Clock:
    """Wall and CPU time since creation, and the time of the first URL."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()  # every thread of this process
        self.first: float | None = None

    def url_seen(self) -> None:
        if self.first is None:
            self.first = time.perf_counter() - self.wall
            marker = os.environ.get(FIRST_URL_ENV)
            if marker:  # benchmarks/cli.py times the first output from outside
                Path(marker).write_bytes(b"1")

    def report(self, emitted: int, unique: int) -> dict[str, Any]:
        """The worker's JSON report (CPU and RSS of its own child processes included:
        sitemap-reader's parsing processes are waited for when the reader closes)."""
        wall = time.perf_counter() - self.wall
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {
            "wall": wall,
            "cpu": time.process_time() - self.cpu + children.ru_utime + children.ru_stime,
            "child_rss": children.ru_maxrss / 1024,
            "first": wall if self.first is None else self.first,
            "emitted": emitted,
            "unique": unique,
            "rss": vm_hwm_mib(),
        }


def vm_hwm_mib() -> float:
    """This process's peak RSS in MiB (VmHWM: ru_maxrss would include the parent's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_url(variant: str, port: int) -> str:
    """The site's origin as the tools see it."""
    return f"http://127.0.0.1:{port}" if variant == "port" else f"http://{BENCH_HOST}"


def work_ours(variant: str, port: int, children: int) -> dict[str, Any]:
    """sitemap-reader: stream every URL of the site from the homepage."""
    from aiohttp.abc import AbstractResolver, ResolveResult

    from sitemap_reader.crawl import SitemapReader

    class BenchResolver(AbstractResolver):
        """www.bench.test -> the server (address and port); anything else fails."""

        async def resolve(
            self, host: str, port_: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[ResolveResult]:
            if host != BENCH_HOST:
                raise OSError(f"no such host {host}")
            return [
                ResolveResult(
                    hostname=host,
                    host="127.0.0.1",
                    port=port,
                    family=socket.AF_INET,
                    proto=0,
                    flags=socket.AI_NUMERICHOST,
                )
            ]

        async def close(self) -> None:
            """Nothing to release."""

    uniques = Uniques(children)
    options: dict[str, Any] = {}
    if variant == "noport":
        options = {"resolver": BenchResolver(), "allow_private": True}
    processes = os.environ.get(PROCESSES_ENV)
    if processes:
        options["processes"] = int(processes)
    emitted = 0
    clock = Clock()

    async def main() -> None:
        nonlocal emitted
        async with SitemapReader(**options) as reader:
            async for batch in reader.batches(start_url(variant, port) + "/"):
                clock.url_seen()
                emitted += len(batch)
                for record in batch:
                    uniques.add(record.url)

    asyncio.run(main())
    return clock.report(emitted, uniques.count)


def work_usp(variant: str, port: int, children: int) -> dict[str, Any]:
    """ultimate-sitemap-parser: build the tree from the homepage, then iterate all pages."""
    import logging

    from usp.tree import sitemap_tree_for_homepage

    logging.disable(logging.CRITICAL)
    uniques = Uniques(children)
    emitted = 0
    clock = Clock()
    tree = sitemap_tree_for_homepage(start_url(variant, port) + "/")
    for item in tree.all_pages():
        clock.url_seen()
        emitted += 1
        uniques.add(item.url)
    return clock.report(emitted, uniques.count)


def work_scrapy(variant: str, port: int, children: int) -> dict[str, Any]:
    """Scrapy's SitemapSpider from robots.txt; entries counted, no page requested."""
    from collections.abc import Iterable, Iterator

    from scrapy.crawler import CrawlerProcess
    from scrapy.spiders import SitemapSpider

    uniques = Uniques(children)
    emitted = 0
    clock = Clock()

    class CountingSpider(SitemapSpider):
        name = "bench"
        sitemap_urls = [start_url(variant, port) + "/robots.txt"]  # noqa: RUF012

        def sitemap_filter(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            nonlocal emitted
            if getattr(entries, "type", None) != "urlset":
                yield from entries  # an index: follow its children
                return
            for entry in entries:
                clock.url_seen()
                emitted += 1
                uniques.add(entry["loc"])

    settings = {
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "DOWNLOAD_WARNSIZE": 0,
    }
    process = CrawlerProcess(settings=settings)
    process.crawl(CountingSpider)
    process.start()
    return clock.report(emitted, uniques.count)


def work_advertools(variant: str, port: int, children: int) -> dict[str, Any]:
    """advertools: sitemap_to_df on robots.txt (every sitemap, then one DataFrame)."""
    import logging

    import advertools

    logging.disable(logging.CRITICAL)
    uniques = Uniques(children)
    clock = Clock()
    frame = advertools.sitemap_to_df(start_url(variant, port) + "/robots.txt")
    locs = frame["loc"].dropna()
    for url in locs:
        uniques.add(url)
    clock.url_seen()  # everything arrives at once
    return clock.report(len(locs), uniques.count)


WORKERS = {
    "ours": work_ours,
    "usp": work_usp,
    "scrapy": work_scrapy,
    "advertools": work_advertools,
}


# -- the driver --------------------------------------------------------------------------


def measure(
    tool: str,
    variant: str,
    port: int,
    children: int,
    processes: int | None = None,
    pure: bool = False,
) -> dict[str, Any]:
    """Run one worker subprocess and return its report (``pure``: ours on the pure-Python
    parser path)."""
    command = [sys.executable, __file__, "--work", tool, "--variant", variant]
    command += ["--port", str(port), "--urls", str(children * URLS_PER_CHILD)]
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "all_proxy")}
    for key in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        env.pop(key, None)
    if variant == "noport" and tool != "ours":
        env["http_proxy"] = env["HTTP_PROXY"] = f"http://127.0.0.1:{port}"
    env.pop(PROCESSES_ENV, None)
    env.pop(NO_EXTENSIONS, None)
    if pure:
        env[NO_EXTENSIONS] = "1"
    if processes is not None:
        env[PROCESSES_ENV] = str(processes)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tool} worker failed with exit code {done.returncode}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def start_server(
    children: int, latency: float, variants: list[str]
) -> tuple[subprocess.Popen[str], int]:
    """Start the site server subprocess; return it and its port."""
    command = [sys.executable, __file__, "--serve", "--urls", str(children * URLS_PER_CHILD)]
    command += ["--latency", str(latency), "--variants", *variants]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    line = server.stdout.readline().strip()
    if not line.isdigit():
        server.kill()
        raise SystemExit("the benchmark server did not start")
    return server, int(line)


Row = tuple[int, str, str, dict[str, Any]]
#: (tool, processes, parser path: "native", "pure", or "" for a peer)
Config = tuple[str, int | None, str]


def run_all(
    sizes: list[int],
    variants: list[str],
    tools: list[str],
    latency: float,
    repeat: int,
    processes: list[int | None],
    paths: list[str],
) -> None:
    """Measure every tool on every variant and size (ours on each parser path of
    ``paths``); print one markdown table."""
    missing = [t for t in tools if (m := TOOL_MODULES[t]) and importlib.util.find_spec(m) is None]
    for tool in missing:
        print(f"skipped {tool}: not installed (pip install -e '.[bench]')", file=sys.stderr)
    tools = [t for t in tools if t not in missing]
    rows: list[Row] = []
    for urls in sizes:
        children = max(1, urls // URLS_PER_CHILD)
        server, port = start_server(children, latency, variants)
        try:
            for variant in variants:
                # (tool, processes) pairs, measured in turns so that a busy moment of the
                # shared machine does not land on one of them only; the median is reported
                configs = [
                    (t, p, path)
                    for t in tools
                    for p in (processes if t == "ours" else [None])
                    for path in (paths if t == "ours" else [""])
                ]
                runs: dict[Config, list[dict[str, Any]]] = {c: [] for c in configs}
                for _ in range(repeat):
                    for tool, count, path in configs:
                        report = measure(tool, variant, port, children, count, path == "pure")
                        runs[(tool, count, path)].append(report)
                        print(
                            f"  N={children} {variant} {tool} {path} p={count}: {report}",
                            file=sys.stderr,
                            flush=True,
                        )
                for (tool, count, path), done in runs.items():
                    middle = sorted(done, key=lambda r: r["wall"])[len(done) // 2]
                    middle = dict(middle)
                    for key in ("wall", "cpu", "first"):
                        middle[key] = statistics.median(r[key] for r in done)
                    middle["rss"] = max(r["rss"] for r in done)
                    middle["child_rss"] = max(r.get("child_rss", 0.0) for r in done)
                    middle["label"] = (
                        NAMES[tool]
                        + (f", {path}" if path else "")
                        + ("" if count is None else f" (processes={count})")
                    )
                    rows.append((children, variant, tool, middle))
        finally:
            server.kill()
            server.wait()
    print_table(rows, latency)


def print_table(rows: list[Row], latency: float) -> None:
    """The markdown table, and every peer's wall, first URL and RSS relative to ours."""
    print(f"\nlatency per response: {latency * 1000:.0f} ms; wall and CPU inside the worker")
    one, five, fifteen = os.getloadavg()
    print(f"load average at the end: {one:.2f} {five:.2f} {fifteen:.2f} (figures taken above")
    print("about 1.5 on 2 cores are not figures to quote)")
    print()
    print(
        "| URLs | variant | tool | wall (s) | CPU (s) | first URL (s) | URLs emitted | unique "
        "| peak RSS (MiB) | worker RSS (MiB) | wall / ours |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ours: dict[tuple[int, str], dict[str, Any]] = {}
    for n, v, tool, r in rows:
        if tool == "ours":
            ours.setdefault((n, v), r)  # the first processes value given is the reference
    for n, variant, tool, r in rows:
        mine = ours.get((n, variant))
        ratio = f"{r['wall'] / mine['wall']:.2f}x" if mine else "n/a"
        print(
            f"| {n * URLS_PER_CHILD + DUPLICATES:,} | {variant} | {r.get('label', NAMES[tool])} "
            f"| {r['wall']:.2f} | {r['cpu']:.2f} | {r['first']:.3f} | {r['emitted']:,} "
            f"| {r['unique']:,} | {r['rss']:.0f} | {r.get('child_rss', 0.0):.0f} | {ratio} |"
        )


def size(text: str) -> int:
    """A URL count such as 200000, 200k or 1M."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def main() -> None:
    """Command line: the driver, or (internally) the server or one worker."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=size, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--children", type=int, nargs="+", help="sizes as children (x 50,000)")
    parser.add_argument("--variants", nargs="+", default=["port", "noport"], choices=PAGE_ORIGINS)
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--processes",
        type=int,
        nargs="+",
        help="sitemap-reader's processes= values to measure, in turns (default: its default)",
    )
    parser.add_argument(
        "--path",
        choices=["native", "pure", "both"],
        default="both",
        help="our parser path(s): native, pure or both (default, where the compiled is built)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work", choices=TOOLS, help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=PAGE_ORIGINS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.children:
        args.urls = [n * URLS_PER_CHILD for n in args.children]
    children = max(1, args.urls[0] // URLS_PER_CHILD)
    if args.serve:
        serve(children, args.latency, args.variants)
    elif args.work:
        report = WORKERS[args.work](args.variant, args.port, children)
        print(json.dumps(report), flush=True)
    else:
        processes: list[int | None] = list(args.processes) if args.processes else [None]
        built = importlib.util.find_spec("sitemap_reader.parse._native._expatcore") is not None
        both = ["native", "pure"] if built else ["pure"]
        paths = both if args.path == "both" else [args.path]
        if "native" in paths and not built:
            raise SystemExit("--path native: the compiled parser is not built (pip install -e .)")
        run_all(
            args.urls,
            args.variants,
            args.tools,
            args.latency,
            max(1, args.repeat),
            processes,
            paths,
        )


if __name__ == "__main__":
    main()
