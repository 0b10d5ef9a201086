"""The fault kit: what production clusters meet every week, made on demand.

- :class:`Proxy`, a TCP proxy on 127.0.0.1 in front of Redis. ``partition()`` holds the
  bytes both ways (the connections stay open, nothing arrives: a network partition or a
  paused switch); ``heal()`` lets them through again, in order; ``sever()`` drops every
  connection (a reset: the client sees the connection die); ``hold_replies_after(marker)``
  lets the request holding ``marker`` reach Redis and holds every reply from then on (the
  command ran; its client never hears so).
- :func:`freeze` / :func:`thaw`: SIGSTOP and SIGCONT of a worker (a paused VM, a long GC).
- kill -9 and Redis restarts come from ``os.kill`` and :meth:`RedisServer.restart`.
- :func:`assert_clean`: what every fault case must leave, checked whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tests.distributed.farm import Farm
from tests.distributed.proc_kit import Peek, file_of, outputs, temp_files

#: Bytes one read of the proxy moves.
CHUNK = 65536


class Proxy:
    """A TCP proxy from a port of its own to ``127.0.0.1:upstream`` (a context manager)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._flowing = threading.Event()
        self._flowing.set()
        self._replies = threading.Event()  # cleared: replies held, requests still go
        self._replies.set()
        self._marker: bytes | None = None
        #: Set once a request holding the marker went to Redis (its reply held).
        self.marked = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.connections = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def url(self, password: str | None = None) -> str:
        """A Redis URL through the proxy."""
        auth = f":{password}@" if password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def __enter__(self) -> Proxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        self._flowing.set()
        self._listener.close()
        self.sever()

    def partition(self) -> None:
        """Hold every byte from now on, both ways (connections stay open)."""
        self._flowing.clear()

    def heal(self) -> None:
        """Let the held bytes and all later ones through."""
        self._flowing.set()
        self._replies.set()

    def hold_replies_after(self, marker: bytes) -> None:
        """From the first request holding ``marker`` on (it is sent), hold every reply."""
        self._marker = marker

    def sever(self) -> None:
        """Drop every open connection (new ones are still accepted)."""
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream), timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets += [client, server]
                self.connections += 1
            for src, dst, reply in ((client, server, False), (server, client, True)):
                threading.Thread(target=self._pump, args=(src, dst, reply), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, reply: bool) -> None:
        try:
            while data := src.recv(CHUNK):
                self._flowing.wait()  # a partition holds the bytes here, in order
                if reply:
                    self._replies.wait()
                marked = not reply and self._marker is not None and self._marker in data
                if marked:
                    self._replies.clear()  # before the request goes: no reply slips by
                dst.sendall(data)
                if marked:
                    self.marked.set()
        except OSError:
            pass
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def freeze(pid: int) -> None:
    """SIGSTOP: the process stops where it is, its sockets open, its leases unrefreshed."""
    os.kill(pid, signal.SIGSTOP)


def thaw(pid: int) -> None:
    """SIGCONT: the process goes on as if nothing happened (a zombie, if its lease lapsed)."""
    os.kill(pid, signal.SIGCONT)


def assert_clean(
    farm: Farm,
    out: Path,
    peek: Peek,
    *,
    texts: Sequence[str] = (),
    secret: str | None = None,
    records: bool = True,
) -> None:
    """What every fault case must leave: each ok target's file once and whole (its URL
    count the done record's), each record once on the records stream with one end per
    target, no dead letter (no target here ever fails), no temporary file, no password
    in any output the processes printed."""
    found = outputs(out)
    done = peek.done()
    wanted = {file_of(s.target): s for s in farm.sites}
    assert set(found) == set(wanted), set(found) ^ set(wanted)
    for name, site in wanted.items():
        urls = found[name]
        assert len(urls) == len(set(urls)), f"duplicates in {name}"
        assert set(urls) == farm.expected_urls(site), f"wrong URLs in {name}"
        assert done[site.target]["urls"] == len(urls), f"{name}: file and done record differ"
    assert len(done) == len(farm.sites)
    assert peek.dead() == []
    assert temp_files(out) == []
    assert peek.pending() == []
    if records:
        entries = peek.records()
        ends = Counter(e["t"] for e in entries if "end" in e)
        assert ends == Counter({site.target: 1 for site in farm.sites})
        keys = [(e["t"], json.loads(e["r"])["url"]) for e in entries if "r" in e]
        assert len(keys) == len(set(keys)) == sum(len(u) for u in found.values())
    if secret is not None:
        for text in texts:
            assert secret not in text, "a password in the output"
