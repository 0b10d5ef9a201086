"""One politeness budget per host across processes (``--host-budget REDIS_URL``): CLI runs
side by side on a real Redis, one of them killed, never reach a host faster than its
delay between them all, and a server's Retry-After holds every one of them."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from aiohttp import web

from tests.distributed.proc_kit import CLI, DEADLINE, ROOT, wait_until
from tests.distributed.redis_kit import RedisServer
from tests.loopback_server import LoopbackServer

#: Sitemaps of the site, two URLs each.
SITEMAPS = 6
#: The delay asked for, and the least gap asserted at the server: a process may wake late
#: for its slot while the next one wakes on time (tests/crawl/test_network.py allows 0.05 s
#: of 0.3 in one process; three processes on a loaded machine get 0.1 s of 0.5). A
#: missing budget shows gaps near 0.
DELAY, MIN_GAP = 0.5, 0.4


class Site(LoopbackServer):
    """One host: robots.txt naming :data:`SITEMAPS` sitemaps; each request's arrival
    noted; ``busy`` paths answer 429 with ``Retry-After: 1`` the first time."""

    def __init__(self, busy: frozenset[str] = frozenset()) -> None:
        sock = socket.create_server(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        super().__init__([sock])
        self.busy = set(busy)
        self.arrivals: list[tuple[float, str, int]] = []
        self._lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def urls(self) -> set[str]:
        return {f"{self.base}/p{i}-{j}" for i in range(SITEMAPS) for j in range(2)}

    def gaps(self) -> list[float]:
        times = sorted(t for t, _, _ in self.arrivals)
        return [b - a for a, b in itertools.pairwise(times)]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        status = 429 if path in self.busy else 200
        self.busy.discard(path)
        with self._lock:
            self.arrivals.append((time.monotonic(), path, status))
        if status == 429:
            return web.Response(status=429, headers={"Retry-After": "1"})
        if path == "/robots.txt":
            lines = [f"Sitemap: {self.base}/s{i}.xml" for i in range(SITEMAPS)]
            return web.Response(text="User-agent: *\nAllow: /\n" + "\n".join(lines) + "\n")
        if path.startswith("/s") and path.endswith(".xml"):
            i = int(path[2:-4])
            locs = "".join(f"<url><loc>{self.base}/p{i}-{j}</loc></url>" for j in range(2))
            body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
            return web.Response(body=body.encode(), content_type="application/xml")
        return web.Response(status=404)


def _dump(site: Site, budget: str, out: Path, *extra: str) -> subprocess.Popen[str]:
    command = [
        *CLI, "dump", site.base + "/", "--host-budget", budget, "--allow-private",
        "--format", "txt", "-o", str(out), *extra,
    ]  # fmt: skip
    return subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def _budget(server: RedisServer) -> str:
    return server.url.rstrip("/").rsplit("/", 1)[0] + "/3"  # a database of its own


def test_runs_side_by_side_share_one_gap_even_when_one_is_killed(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Three dumps of one site with --delay 0.5 and one --host-budget; the first killed
    with SIGKILL once the site saw four requests: at the server every request comes at
    least the delay after the one before, whichever process sent it, and the two
    survivors read every URL."""
    with Site() as site:
        runs = [_dump(site, _budget(redis_server), tmp_path / f"{n}.txt", "-q",
                      "--concurrency", "4", "--delay", str(DELAY)) for n in range(3)]  # fmt: skip
        wait_until(lambda: len(site.arrivals) >= 4, "four requests")
        os.kill(runs[0].pid, signal.SIGKILL)
        for run in runs[1:]:
            _, err = run.communicate(timeout=DEADLINE)
            assert run.returncode == 0, err
        runs[0].communicate(timeout=DEADLINE)
        gaps = site.gaps()
    for n in (1, 2):
        assert set((tmp_path / f"{n}.txt").read_text().split()) == site.urls()
    assert len(gaps) >= 2 * (1 + SITEMAPS) - 1
    assert min(gaps) >= MIN_GAP, gaps


def test_a_retry_after_holds_every_process(redis_server: RedisServer, tmp_path: Path) -> None:
    """Two dumps without a delay, one request at a time each, one sitemap answering 429
    with Retry-After: 1: in the second after the 429, the host sees at most the request
    the other process had in flight (each run paced alone would send all of its own at
    once), and both read every URL."""
    with Site(busy=frozenset({"/s0.xml"})) as site:
        runs = [_dump(site, _budget(redis_server), tmp_path / f"{n}.txt", "-q",
                      "--concurrency", "1") for n in range(2)]  # fmt: skip
        for run in runs:
            _, err = run.communicate(timeout=DEADLINE)
            assert run.returncode == 0, err
        arrivals = sorted(site.arrivals)
    for n in range(2):
        assert set((tmp_path / f"{n}.txt").read_text().split()) == site.urls()
    (refused,) = [t for t, _, status in arrivals if status == 429]
    early = [t - refused for t, _, _ in arrivals if refused < t < refused + 0.9]
    assert len(early) <= 1, early
    assert len(arrivals) == 2 * (1 + SITEMAPS) + 1


def test_an_unreachable_budget_is_said_and_the_run_paces_alone(tmp_path: Path) -> None:
    """A budget whose Redis does not answer: one warning naming it (its password
    hidden), the run paced by itself and complete."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"redis://:secret@127.0.0.1:{sock.getsockname()[1]}/0"  # bound, not listening
        with Site() as site:
            run = _dump(site, dead, tmp_path / "out.txt", "--delay", "0.05")
            _, err = run.communicate(timeout=DEADLINE)
    assert run.returncode == 0, err
    assert set((tmp_path / "out.txt").read_text().split()) == site.urls()
    assert "cannot be reached" in err and "secret" not in err and ":***@" in err
