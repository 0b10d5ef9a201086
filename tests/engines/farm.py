"""A farm of loopback sites for the engine tests (and ``tests/engines/test_batch.py``).

Every site has its own port on 127.0.0.1 (its own host:port, as distinct domains would),
all served by one aiohttp application on an event loop in a daemon thread. Kinds:

* ``ok``: ``/robots.txt`` -> ``/sitemap_index.xml`` -> ``children`` urlsets of
  ``per_child`` URLs (``scale`` multiplies the children: the large site);
* ``plain``: no robots.txt; only ``/sitemap.xml``, one urlset (found by the probes);
* ``down``: a port nothing listens on (connections refused);
* ``badgz``: like ``ok``, but its last child is a ``.xml.gz`` whose gzip stream is corrupt;
* ``gated``: like ``ok``, but its last child sends half its body and then waits until the
  test opens the gate; the server notes the client's address when it gets there, so a
  test can find the process reading it (:func:`owner_of`) and kill it mid-target.

Bodies are made once and kept, so a 200k-URL site costs its bytes once.
"""

from __future__ import annotations

import gzip
import os
import socket
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from tests.loopback_server import LoopbackServer, listen

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: Seconds any wait of the kit may take before the test fails.
DEADLINE = 120.0


@dataclass(frozen=True, slots=True)
class Site:
    """One site of the farm."""

    port: int
    kind: str = "ok"
    children: int = 2
    per_child: int = 50

    @property
    def target(self) -> str:
        """The target that names the site, in its canonical spelling."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def child_path(self, child: int) -> str:
        gz = self.kind == "badgz" and child == self.children - 1
        return f"/s{child}.xml.gz" if gz else f"/s{child}.xml"

    def expected_urls(self) -> set[str]:
        """Every page URL a whole read of the site yields."""
        if self.kind == "down":
            return set()
        if self.kind == "plain":
            return {f"{self.base}/plain/{i}" for i in range(self.per_child)}
        children = self.children - 1 if self.kind == "badgz" else self.children
        return {f"{self.base}/page/{c}/{i}" for c in range(children) for i in range(self.per_child)}

    @property
    def status(self) -> str:
        """The summary status a whole run gives the site."""
        if self.kind == "badgz":  # its other children, if any, still give URLs
            return "partial" if self.children > 1 else "failed"
        return "failed" if self.kind == "down" else "ok"


class Farm(LoopbackServer):
    """Sites on loopback ports (a context manager): ``Farm([("ok", 2, 50), ...])`` with
    (kind, children, per child) each."""

    def __init__(self, specs: list[tuple[str, int, int]]) -> None:
        self.hits: Counter[tuple[int, str]] = Counter()
        self.gate_reached = threading.Event()
        self.gated_peer: tuple[str, int] | None = None
        self._bodies: dict[tuple[int, str], bytes] = {}
        sockets: list[socket.socket] = []
        self.sites: list[Site] = []
        for kind, children, per_child in specs:
            sock = listen()
            port = sock.getsockname()[1]
            if kind == "down":
                sock.close()  # nothing listens there any more: connections are refused
            else:
                sockets.append(sock)
            self.sites.append(Site(port, kind, children, per_child))
        self._site = {site.port: site for site in self.sites}
        super().__init__(sockets)

    def site(self, kind: str) -> Site:
        """The first site of a kind."""
        return next(site for site in self.sites if site.kind == kind)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        port = request.url.port or 0
        path = request.path
        self.hits[port, path] += 1
        site = self._site.get(port)
        if site is None:
            return web.Response(status=404)
        body = self._body(site, path)
        if body is None:
            return web.Response(status=404)
        if site.kind == "gated" and path == site.child_path(site.children - 1):
            return await self._gated(request, body)
        kind = "text/plain" if path == "/robots.txt" else "application/xml"
        return web.Response(body=body, content_type=kind)

    def _body(self, site: Site, path: str) -> bytes | None:
        key = (site.port, path)
        if key not in self._bodies:
            body = _render(site, path)
            if body is None:
                return None
            self._bodies[key] = body
        return self._bodies[key]

    async def _gated(self, request: web.Request, body: bytes) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        await response.write(body[: len(body) // 2])
        assert request.transport is not None
        self.gated_peer = request.transport.get_extra_info("peername")
        self.gate_reached.set()
        assert self._gate is not None
        await self._gate.wait()
        try:
            await response.write(body[len(body) // 2 :])
            await response.write_eof()
        except ConnectionError:  # the reader was killed while it waited
            pass
        return response


def _render(site: Site, path: str) -> bytes | None:
    """The body of ``path`` on ``site`` (None: 404)."""
    base = site.base
    if site.kind == "plain":
        if path != "/sitemap.xml":
            return None
        return _urlset(f"{base}/plain/{i}" for i in range(site.per_child))
    if path == "/robots.txt":
        return f"User-agent: *\nSitemap: {base}/sitemap_index.xml\n".encode()
    if path == "/sitemap_index.xml":
        locs = "".join(
            f"<sitemap><loc>{base}{site.child_path(c)}</loc></sitemap>"
            for c in range(site.children)
        )
        return f'<sitemapindex xmlns="{NS}">{locs}</sitemapindex>'.encode()
    for c in range(site.children):
        if path == site.child_path(c):
            body = _urlset(f"{base}/page/{c}/{i}" for i in range(site.per_child))
            if path.endswith(".gz"):  # a gzip stream broken in its middle
                packed = bytearray(gzip.compress(body, mtime=0))
                middle = len(packed) // 2
                packed[middle : middle + 16] = b"\xff" * 16
                return bytes(packed)
            return body
    return None


def _urlset(urls: object) -> bytes:
    entries = "".join(
        f"<url><loc>{url}</loc><lastmod>2024-01-02</lastmod></url>"
        for url in urls  # type: ignore[attr-defined]
    )
    return f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">{entries}</urlset>\n'.encode()


# --------------------------------------------------------------------------- processes


def owner_of(peer: tuple[str, int]) -> int:
    """The pid of the process whose TCP socket has the local address ``peer`` (the
    client side of a connection the farm accepted): Linux ``/proc``."""
    inode = _socket_inode(peer[1])
    target = f"socket:[{inode}]"
    for pid in _pids():
        try:
            with os.scandir(f"/proc/{pid}/fd") as fds:
                links = [_readlink(fd.path) for fd in fds]
        except OSError:
            continue
        if target in links:
            return pid
    raise LookupError(f"no process holds 127.0.0.1:{peer[1]}")


def _socket_inode(port: int) -> str:
    wanted = f"0100007F:{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[1] == wanted or fields[1].endswith(f"0100007F:{port:04X}"):
                return fields[9]
    raise LookupError(f"no socket has the local port {port}")


def peak_rss_mib(pid: int) -> float:
    """The peak resident set (VmHWM) of a live process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise LookupError(f"no VmHWM for {pid}")


def processes(marker: str) -> list[int]:
    """The pids whose command line contains ``marker``."""
    found = []
    for pid in _pids():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(pid)
    return found


def _pids() -> list[int]:
    with os.scandir("/proc") as entries:
        return [int(e.name) for e in entries if e.name.isdigit()]


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""
