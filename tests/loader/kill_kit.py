"""Kill a loader with SIGKILL at chosen points, restart it, and audit what it handed out.

:class:`GeneratedSite` is a loopback site of ``sitemaps`` urlsets of ``per_sitemap`` URLs
each (bodies made on request), under one index that robots.txt lists; it counts the
requests of each path. :func:`run_child` runs ``loader_child.py`` and kills it once it
printed ``kill_after`` lines (None: it runs to its end), reading the child's peak memory
from ``/proc`` just before the kill. :class:`Audit` checks the rules of the loader over
all the runs on one progress file: nothing lost, nothing handed out again after an
acknowledgement, finished sitemaps never fetched again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from sitemap_reader.store.progress import DONE, ProgressStore
from tests.crawl.crawl_kit import SITEMAP_NS, Site, index

CHILD = str(Path(__file__).with_name("loader_child.py"))


class GeneratedSite(Site):
    """robots.txt -> /index.xml -> /s/0.xml ... : ``sitemaps`` x ``per_sitemap`` URLs,
    and a tiny HTML page at each of them."""

    def __init__(self, sitemaps: int, per_sitemap: int) -> None:
        super().__init__()
        self.sitemaps = sitemaps
        self.per_sitemap = per_sitemap
        self.add("/robots.txt", "Sitemap: /index.xml\n", content_type="text/plain")
        self.add("/index.xml", self._index)
        for number in range(sitemaps):
            self.add(self.sitemap_path(number), self._urlset)

    @staticmethod
    def sitemap_path(number: int) -> str:
        """The path of urlset ``number``."""
        return f"/s/{number}.xml"

    def page_urls(self) -> set[str]:
        """Every page URL the site lists."""
        return {
            self.url(f"/p/{s}/{n}") for s in range(self.sitemaps) for n in range(self.per_sitemap)
        }

    def sitemap_hits(self) -> int:
        """Requests for the index and the urlsets."""
        return self.hits["/index.xml"] + sum(
            self.hits[self.sitemap_path(n)] for n in range(self.sitemaps)
        )

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        """Every page URL answers a tiny HTML page (counted like the rest)."""
        if not request.path.startswith("/p/"):
            return await super()._handle(request)
        self.hits[request.path] += 1
        html = f"<html><head><title>{request.path}</title></head><body></body></html>"
        return web.Response(text=html, content_type="text/html")

    def page_hits(self) -> Counter[str]:
        """Requests per page path."""
        return Counter({p: n for p, n in self.hits.items() if p.startswith("/p/")})

    async def _index(self, request: web.Request) -> web.Response:
        children = [self.url(self.sitemap_path(n)) for n in range(self.sitemaps)]
        return web.Response(body=index(children), content_type="application/xml")

    async def _urlset(self, request: web.Request) -> web.Response:
        number = request.path.rsplit("/", 1)[1].split(".")[0]
        head = f'<?xml version="1.0"?>\n<urlset xmlns="{SITEMAP_NS}">'
        entries = "".join(
            f"<url><loc>{self.base}/p/{number}/{n}</loc><priority>{n % 10 / 10}</priority></url>"
            for n in range(self.per_sitemap)
        )
        return web.Response(body=(head + entries + "</urlset>\n").encode(), content_type="text/xml")


def dead_target() -> str:
    """A loopback site URL nothing listens on (its port was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    return f"http://127.0.0.1:{port}/"


@dataclass(slots=True)
class ChildRun:
    """What one child printed, and how it ended."""

    out: list[str] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)
    killed: bool = False
    peak_kib: int = 0
    code: int | None = None


def _peak_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            return int(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
    except (OSError, StopIteration):
        return 0


async def run_child(
    target: str,
    progress: str,
    *,
    buffer: int,
    kill_after: int | None,
    limit: float = 120.0,
    script: str = CHILD,
    env: dict[str, str] | None = None,
) -> ChildRun:
    """Run the loader child (or another ``script`` printing ``out``/``ack`` lines);
    SIGKILL it after ``kill_after`` lines of output."""
    path = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
    child = await asyncio.create_subprocess_exec(
        sys.executable, script, target, progress, str(buffer),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {}), "PYTHONPATH": path},
    )  # fmt: skip
    run = ChildRun()
    assert child.stdout is not None
    lines = 0
    try:
        async with asyncio.timeout(limit):
            while line := (await child.stdout.readline()).decode():
                kind, _, rest = line.rstrip("\n").partition(" ")
                if kind == "out":
                    run.out.append(rest)
                elif kind == "ack":
                    run.acked.append(rest)
                elif kind == "end":
                    run.peak_kib = int(rest.split()[1])
                lines += 1
                if kill_after is not None and lines >= kill_after:
                    run.peak_kib = _peak_of(child.pid)
                    child.send_signal(signal.SIGKILL)
                    run.killed = True
                    break
            _, err = await child.communicate()
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    run.code = child.returncode
    if not run.killed and run.code != 0:
        raise AssertionError(f"loader child failed ({run.code}): {err.decode()[-2000:]}")
    return run


@dataclass(slots=True)
class Audit:
    """The loader's promises over every run on one progress file."""

    runs: list[ChildRun] = field(default_factory=list)

    def add(self, run: ChildRun) -> None:
        self.runs.append(run)

    def duplicates(self) -> list[str]:
        """URLs handed out again after they were acknowledged, or twice in one run."""
        acked: set[str] = set()
        again: list[str] = []
        for run in self.runs:
            counts = Counter(run.out)
            again += [url for url, n in counts.items() if n > 1 or url in acked]
            acked.update(run.acked)
        return again

    def redelivered(self) -> list[str]:
        """URLs handed out again because a kill caught them in flight (allowed)."""
        seen: set[str] = set()
        again: list[str] = []
        for run in self.runs:
            again += [url for url in run.out if url in seen]
            seen.update(run.out)
        return again

    def lost(self, expected: set[str], progress: str) -> set[str]:
        """Expected URLs not acknowledged in the progress file at the end."""
        store = ProgressStore(progress)
        try:
            return expected - set(store.urls_in([DONE]))
        finally:
            store.close()
