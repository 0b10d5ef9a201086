"""The loader's soak (issue 41): many URLs over many targets, SIGKILLs at random moments.

:class:`SoakSites` serves ``targets`` loopback sites, one per address 127.0.0.2,
127.0.0.3... (each its own site for the loader's fairness): a few huge (most of the
URLs), many small, some failing (their robots.txt answers 500 on every request, or
nothing listens at their address). Each good site is robots.txt -> /index.xml -> urlsets
of up to 50,000 URLs, bodies made on request. :func:`soak` runs ``soak_child.py`` on one
progress file, kills it with SIGKILL at ``kills`` random output lines (seeded), starts it
again, until a run ends on its own, and audits every line in compact memory (one byte a
URL, URLs mapped to numbers): lost (listed by a good site, not acknowledged in the file
at the end: must be 0), handed out again after its acknowledgement (must be 0),
redelivered (in flight at a kill), the child's RSS over time (sampled from /proc), the
longest wait for ``next()``, and the small sites' longest wait (seconds from the start of
the run that served them to the hand-out of their last URL).
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from sitemap_reader.store.progress import DONE, ProgressStore

CHILD = str(Path(__file__).with_name("soak_child.py"))
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
PER_URLSET = 50_000
#: Clears bit 1 (in flight) of every state byte.
_NOT_IN_FLIGHT = bytes(value & ~1 for value in range(256))
_PAGE = re.compile(r"^http://127\.0\.(\d+)\.(\d+):\d+/p/(\d+)/(\d+)$")


@dataclass(slots=True)
class Target:
    """One loopback site: its address, its URLs (0: a failing site) and how it fails."""

    number: int
    urls: int
    failing: str | None = None  # "500" or "dead"
    first_id: int = 0  # its URLs' numbers start here

    @property
    def address(self) -> str:
        """127.0.0.2 onwards (over 253 targets, 127.0.1.x...)."""
        spot = self.number + 2
        return f"127.0.{spot // 256}.{spot % 256}"

    @property
    def urlsets(self) -> int:
        return -(-self.urls // PER_URLSET)


def plan(total: int, count: int, *, huge: int = 3, failing: int = 7) -> list[Target]:
    """``count`` targets sharing ``total`` URLs: ``huge`` of them hold 96%, the small ones
    the rest; ``failing`` of the small ones fail (half answer 500, the rest are dead)."""
    small = count - huge - failing
    small_each = max(1, int(total * 0.04) // max(1, small))
    huge_each = (total - small_each * small) // max(1, huge)
    targets: list[Target] = []
    for number in range(count):
        if number < huge:
            targets.append(Target(number, huge_each))
        elif number < huge + failing:
            kind = "500" if (number - huge) % 2 == 0 else "dead"
            targets.append(Target(number, 0, kind))
        else:
            targets.append(Target(number, small_each))
    first = 0
    for target in targets:
        target.first_id = first
        first += target.urls
    return targets


class SoakSites:
    """The loopback sites of a soak (see the module docstring)."""

    def __init__(self, targets: list[Target]) -> None:
        self.targets = targets
        self.by_address = {t.address: t for t in targets}
        self.port = 0
        self.runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self.runner = runner
        for target in self.targets:
            if target.failing == "dead":
                continue
            site = web.TCPSite(runner, target.address, self.port)
            await site.start()
            if not self.port:
                self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def base(self, target: Target) -> str:
        return f"http://{target.address}:{self.port}"

    def total(self) -> int:
        return sum(t.urls for t in self.targets)

    def url_id(self, url: str) -> int | None:
        """The number of a page URL of a good site (None: not one of ours)."""
        found = _PAGE.match(url)
        if found is None:
            return None
        spot = int(found[1]) * 256 + int(found[2])
        target = self.targets[spot - 2]
        return target.first_id + int(found[3]) * PER_URLSET + int(found[4])

    def target_of(self, url_id: int) -> Target:
        low, high = 0, len(self.targets) - 1
        while low < high:  # the last target whose first id is <= url_id
            middle = (low + high + 1) // 2
            if self.targets[middle].first_id <= url_id:
                low = middle
            else:
                high = middle - 1
        return self.targets[low]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        address = request.transport.get_extra_info("sockname")[0]  # type: ignore[union-attr]
        target = self.by_address[address]
        if target.failing == "500":
            return web.Response(status=500, text="down")
        base = self.base(target)
        path = request.path
        if path == "/robots.txt":
            return web.Response(text=f"Sitemap: {base}/index.xml\n", content_type="text/plain")
        if path == "/index.xml":
            entries = "".join(
                f"<sitemap><loc>{base}/s/{n}.xml</loc></sitemap>" for n in range(target.urlsets)
            )
            body = f'<?xml version="1.0"?><sitemapindex xmlns="{SITEMAP_NS}">{entries}'
            return web.Response(text=body + "</sitemapindex>", content_type="application/xml")
        if path.startswith("/s/"):
            number = int(path[3:].split(".")[0])
            start = number * PER_URLSET
            end = min(target.urls, start + PER_URLSET)
            entries = "".join(
                f"<url><loc>{base}/p/{number}/{n - start}</loc></url>" for n in range(start, end)
            )
            body = f'<?xml version="1.0"?><urlset xmlns="{SITEMAP_NS}">{entries}</urlset>'
            return web.Response(text=body, content_type="application/xml")
        return web.Response(status=404, text="not found")


@dataclass(slots=True)
class SoakResult:
    """The soak's table (see the module docstring)."""

    urls: int
    targets: int
    kills: int = 0
    lost: int = 0
    twice_after_ack: int = 0
    redelivered: int = 0
    longest_wait: float = 0.0
    small_longest_wait: float = 0.0
    rss: list[tuple[float, float]] = field(default_factory=list)  # (seconds, MiB)
    seconds: float = 0.0

    @property
    def peak_rss(self) -> float:
        return max((mib for _, mib in self.rss), default=0.0)

    def table(self) -> str:
        """The table, as Markdown, and the RSS series (ten samples over the soak)."""
        step = max(1, len(self.rss) // 10)
        series = ", ".join(f"{t:.0f}s {m:.0f}" for t, m in self.rss[::step])
        return (
            "| URLs | targets | kills | lost | twice after ack | redelivered | longest next() "
            "| small sites' longest wait | peak RSS | time |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n"
            f"| {self.urls:,} | {self.targets} | {self.kills} | {self.lost} "
            f"| {self.twice_after_ack} | {self.redelivered} | {self.longest_wait:.2f} s "
            f"| {self.small_longest_wait:.1f} s | {self.peak_rss:.0f} MiB "
            f"| {self.seconds:.0f} s |\n"
            f"\nRSS over time (MiB): {series}"
        )


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            line = next(line for line in status if line.startswith("VmRSS:"))
            return int(line.split()[1]) / 1024
    except (OSError, StopIteration):
        return 0.0


async def soak(
    total: int, count: int, kills: int, *, progress: str, buffer: int = 1000, seed: int = 41,
    limit: float = 24 * 3600, say: bool = True,
) -> SoakResult:  # fmt: skip
    """Run the soak (see the module docstring); its result."""
    sites = SoakSites(plan(total, count))
    await sites.start()
    try:
        return await _soak(sites, kills, progress, buffer, seed, limit, say)
    finally:
        await sites.close()


async def _soak(
    sites: SoakSites, kills: int, progress: str, buffer: int, seed: int, limit: float, say: bool
) -> SoakResult:
    total = sites.total()
    result = SoakResult(total, len(sites.targets))
    chooser = random.Random(seed)
    lines = 2 * total
    points = sorted(chooser.sample(range(1, max(2, int(lines * 0.9))), kills))
    # One byte a URL: bit 1 handed out (this run), 2 ever handed out, 4 acknowledged.
    state = bytearray(total)
    small = {t.number for t in sites.targets if t.urls and t.urls < PER_URLSET}
    targets = [sites.base(t) for t in sites.targets]
    started = time.monotonic()
    printed = 0
    runs = [*(p for p in points), None]
    for kill_at in runs:
        budget = None if kill_at is None else kill_at - printed
        seen, killed = await _run(
            sites, state, small, result, targets, progress, buffer, budget, limit, started
        )
        printed += seen
        result.kills += killed
        if say:
            print(f"run ended after {seen:,} lines (killed: {killed}, "
                  f"RSS now {result.rss[-1][1] if result.rss else 0:.0f} MiB)",
                  file=sys.stderr)  # fmt: skip
    result.seconds = time.monotonic() - started
    store = ProgressStore(progress)
    try:
        done = bytearray(total)
        for url in store.urls_in([DONE]):
            number = sites.url_id(url)
            if number is not None:
                done[number] = 1
    finally:
        store.close()
    result.lost = total - sum(done)
    return result


async def _run(
    sites: SoakSites, state: bytearray, small: set[int], result: SoakResult,
    targets: list[str], progress: str, buffer: int, budget: int | None, limit: float,
    origin: float,
) -> tuple[int, bool]:  # fmt: skip
    """One child run: its lines audited; killed after ``budget`` lines (None: to its end).
    Its lines, and whether it was killed (a run may end before its kill point)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, CHILD, progress, str(buffer), *targets,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(),
             os.environ.get("PYTHONPATH")]))},
        limit=1 << 20,
    )  # fmt: skip
    assert child.stdout is not None
    began = time.monotonic()
    offset = began - origin
    state[:] = state.translate(_NOT_IN_FLIGHT)  # nothing of an earlier run is in flight now
    lines = 0
    killed = False
    next_sample = began
    url_id = sites.url_id
    try:
        async with asyncio.timeout(limit):
            while line := await child.stdout.readline():
                lines += 1
                kind, _, rest = line.decode().rstrip("\n").partition(" ")
                if kind == "o":
                    url, _, waited = rest.rpartition(" ")
                    result.longest_wait = max(result.longest_wait, float(waited) / 1000)
                    number = url_id(url)
                    if number is not None:
                        value = state[number]
                        if value & 4:
                            result.twice_after_ack += 1
                        elif value & 2:
                            result.redelivered += 1
                        state[number] = value | 3
                        if sites.target_of(number).number in small:
                            wait = time.monotonic() - began
                            result.small_longest_wait = max(result.small_longest_wait, wait)
                elif kind == "a":
                    number = url_id(rest)
                    if number is not None:
                        state[number] = (state[number] | 4) & ~1
                now = time.monotonic()
                if now >= next_sample:
                    result.rss.append((offset + now - began, _rss_mib(child.pid)))
                    next_sample = now + 2.0
                if budget is not None and lines >= budget:
                    result.rss.append((offset + now - began, _rss_mib(child.pid)))
                    child.send_signal(signal.SIGKILL)
                    killed = True
                    break
            await child.wait()
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    return lines, killed
