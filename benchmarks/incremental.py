"""Incremental re-discovery benchmark (issue 6): what a second visit costs with ``state=``.

The synthetic site of ``benchmarks/discovery.py`` (its generator is imported, not copied):
robots.txt naming an index of N children of 50,000 URLs each (every other one gzipped)
plus a 1,000-URL duplicate sitemap. Here the server is a separate process that serves
the children as files (aiohttp's ``FileResponse``: ``ETag``, ``Last-Modified`` and 304s),
writes each child's file mtime as its ``<lastmod>`` in the index, and counts requests.

Runs, one after the other, each with a fresh :class:`SitemapReader`:

1. no state (the baseline: what any run costs without ``state=``);
2. first run with an empty state (``changed_only=True``: every URL is new);
3. second run, nothing changed;
4. third run, one child changed (100 of its URLs get a later lastmod);
5. the same again with ``trust_index_lastmod=False``: every child is asked for with
   ``If-None-Match`` / ``If-Modified-Since`` and answers 304.

For each: requests the server answered, body bytes downloaded, seconds, URLs emitted;
then the state file's size per URL, and whether the unchanged run stays under 2% of the
first run's bytes and 10% of its time.

Run: ``.venv/bin/python benchmarks/incremental.py [--children 20] [--latency 0]
[--repeat 1]`` (``--repeat 5``: five baseline / first-run pairs in turns, medians).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the checkout importable, and
    # keep this folder off the path: incremental.py would shadow Twisted's "incremental"
    # (Scrapy needs it), parse.py the "parse" package.
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

from benchmarks.discovery import (
    NS,
    PAGE_ORIGINS,
    URLS_PER_CHILD,
    build_files,
    child_name,
    urlset_body,
)

CHANGED_CHILD = 3
CHANGED_URLS = 100


# -- the server --------------------------------------------------------------------------


def serve(directory: Path, children: int, latency: float) -> None:
    """Serve the site from ``directory``; print the origin; run until killed."""
    from aiohttp import web

    counter = {"requests": 0}

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/__count__":  # the driver's question, not counted
            count, counter["requests"] = counter["requests"], 0
            return web.json_response({"requests": count})
        counter["requests"] += 1
        if latency:
            await asyncio.sleep(latency)
        origin = f"http://{request.host}"
        if request.path == "/robots.txt":
            text = f"User-agent: *\nSitemap: {origin}/index.xml\nSitemap: {origin}/duplicates.xml\n"
            return web.Response(text=text, content_type="text/plain")
        if request.path == "/index.xml":
            return web.Response(
                text=index_body(directory, origin, children), content_type="application/xml"
            )
        path = directory / request.path.lstrip("/")
        if "/" in request.path.lstrip("/") or not path.is_file():
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
        print(f"http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def index_body(directory: Path, origin: str, children: int) -> str:
    """The index, each child's lastmod being its file's mtime."""
    entries = []
    for i in range(children):
        mtime = datetime.fromtimestamp((directory / child_name(i)).stat().st_mtime, UTC)
        stamp = mtime.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        entries.append(
            f"<sitemap><loc>{origin}/{child_name(i)}</loc><lastmod>{stamp}</lastmod></sitemap>"
        )
    return f'<?xml version="1.0"?><sitemapindex xmlns="{NS}">{"".join(entries)}</sitemapindex>'


# -- the driver --------------------------------------------------------------------------


def prepare(children: int) -> Path:
    """A site directory of links to the cached files (which are never modified)."""
    cached = build_files("port", children)
    directory = Path(tempfile.mkdtemp(prefix="sitemap-reader-incremental-"))
    for name in [child_name(i) for i in range(children)] + ["duplicates.xml"]:
        (directory / name).symlink_to(cached / name)
    return directory


def change_child(directory: Path, child: int) -> None:
    """Give ``CHANGED_URLS`` URLs of one child a later lastmod (a new file, a new mtime)."""
    body = urlset_body(PAGE_ORIGINS["port"], child, URLS_PER_CHILD)
    body = body.replace(b"<lastmod>2024-", b"<lastmod>2025-", CHANGED_URLS)
    path = directory / child_name(child)
    path.unlink()
    path.write_bytes(gzip.compress(body, 6, mtime=0) if child % 2 else body)
    later = time.time() + 5  # newer than anything stored, whatever the clock resolution
    os.utime(path, (later, later))


def requests_since(origin: str) -> int:
    """Requests the server answered since the last call."""
    with urllib.request.urlopen(origin + "/__count__") as answer:
        return int(json.load(answer)["requests"])


def one_run(origin: str, **options: Any) -> dict[str, Any]:
    """One run; its numbers."""
    from sitemap_reader.crawl import SitemapReader

    async def main() -> dict[str, Any]:
        started, cpu = time.perf_counter(), time.process_time()
        emitted = 0
        async with SitemapReader(**options) as reader:
            async for batch in reader.batches(origin + "/"):
                emitted += len(batch)
            assert reader.last_run is not None
            stats = reader.last_run.stats
        return {
            "seconds": time.perf_counter() - started,
            "cpu": time.process_time() - cpu,  # every thread of this process
            "bytes": stats.bytes,
            "emitted": emitted,
            "unchanged": stats.sitemaps_unchanged,
        }

    requests_since(origin)
    result = asyncio.run(main())
    result["requests"] = requests_since(origin)
    return result


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time, with the median CPU time."""
    middle = dict(sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2])
    middle["cpu"] = statistics.median(r["cpu"] for r in runs)
    return middle


def start_server(
    directory: Path, children: int, latency: float
) -> tuple[subprocess.Popen[str], str]:
    """The server subprocess and its origin."""
    command = [sys.executable, __file__, "--serve", str(directory), "--children", str(children)]
    command += ["--latency", str(latency)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    origin = server.stdout.readline().strip()
    if not origin.startswith("http://"):
        server.kill()
        raise SystemExit("the benchmark server did not start")
    return server, origin


def run_all(children: int, latency: float, repeat: int = 1) -> None:
    """The five runs; print the table and the verdict.

    With ``repeat`` > 1 the baseline and the first run are measured that many times in
    turns (a fresh state file each time) and their medians reported, with the ratio of
    the first run to the baseline (issue 13: at most 1.15x)."""
    directory = prepare(children)
    state = directory / "state.db"
    server, origin = start_server(directory, children, latency)
    rows: list[tuple[str, dict[str, Any]]] = []
    try:
        incremental = {"state": state, "changed_only": True}
        bases, firsts = [], []
        for _ in range(max(1, repeat)):
            state.unlink(missing_ok=True)
            bases.append(one_run(origin))
            firsts.append(one_run(origin, **incremental))
        rows.append(("no state (baseline)", _median(bases)))
        rows.append(("1st run, empty state", _median(firsts)))
        ratios = [f["seconds"] / b["seconds"] for b, f in zip(bases, firsts, strict=True)]
        cpu = [f["cpu"] / b["cpu"] for b, f in zip(bases, firsts, strict=True)]
        print(
            f"1st run / baseline over {len(bases)} pairs: wall {statistics.median(ratios):.2f}x "
            f"(each: {', '.join(f'{r:.2f}' for r in ratios)}), CPU {statistics.median(cpu):.2f}x "
            f"(each: {', '.join(f'{r:.2f}' for r in cpu)})",
            file=sys.stderr,
            flush=True,
        )
        rows.append(("2nd run, nothing changed", one_run(origin, **incremental)))
        change_child(directory, CHANGED_CHILD)
        rows.append(("3rd run, one child changed", one_run(origin, **incremental)))
        rows.append(
            (
                "4th run, unchanged, index lastmod ignored (304s)",
                one_run(origin, **incremental, trust_index_lastmod=False),
            )
        )
        for name, row in rows:
            print(f"  {name}: {row}", file=sys.stderr, flush=True)
        size = state.stat().st_size
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)
    print_table(rows, children, latency, size)


def print_table(
    rows: list[tuple[str, dict[str, Any]]], children: int, latency: float, state_bytes: int
) -> None:
    """The markdown table and the two targets of issue 6."""
    urls = children * URLS_PER_CHILD
    print(
        f"\n{children} children x {URLS_PER_CHILD:,} URLs (+1,000 duplicates); "
        f"latency per response: {latency * 1000:.0f} ms\n"
    )
    print("| run | requests | bytes downloaded | seconds | URLs emitted | sitemaps unchanged |")
    print("|---|---|---|---|---|---|")
    for name, r in rows:
        print(
            f"| {name} | {r['requests']} | {r['bytes']:,} | {r['seconds']:.2f} | "
            f"{r['emitted']:,} | {r['unchanged']} |"
        )
    first, second = rows[1][1], rows[2][1]
    byte_share = second["bytes"] / first["bytes"]
    time_share = second["seconds"] / first["seconds"]
    print(
        f"\nunchanged 2nd run vs 1st: {byte_share:.4%} of the bytes (target < 2%: "
        f"{'met' if byte_share < 0.02 else 'MISSED'}), {time_share:.2%} of the time "
        f"(target < 10%: {'met' if time_share < 0.10 else 'MISSED'})"
    )
    print(f"state file: {state_bytes:,} bytes for {urls:,} URLs = {state_bytes / urls:.1f} B/URL")


def main() -> None:
    """Command line: run the benchmark, or serve (internal)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=1, help="baseline/1st-run pairs")
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve), args.children, args.latency)
    else:
        run_all(args.children, args.latency, args.repeat)


if __name__ == "__main__":
    main()
