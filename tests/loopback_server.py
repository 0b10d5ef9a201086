"""An aiohttp application on 127.0.0.1 served from a thread of its own, for tests whose
code under test runs in other threads or processes (workers, engine executors)."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Self

from aiohttp import web

#: Seconds to wait for the server to start or stop.
DEADLINE = 30.0


def listen() -> socket.socket:
    """A listening, non-blocking socket on a free port of 127.0.0.1."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class LoopbackServer:
    """Serves :meth:`_handle` on ``sockets`` from its own event loop in a daemon thread
    (a context manager). ``_gate`` is an event a handler may wait on until the test calls
    :meth:`open_gate`."""

    def __init__(self, sockets: list[socket.socket]) -> None:
        self._sockets = sockets
        self._loop: asyncio.AbstractEventLoop | None = None
        self._gate: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    def open_gate(self) -> None:
        """Let the handlers waiting on the gate go on (now and from now on)."""
        assert self._loop is not None and self._gate is not None
        self._loop.call_soon_threadsafe(self._gate.set)

    def __enter__(self) -> Self:
        self._thread.start()
        if not self._ready.wait(DEADLINE):
            raise RuntimeError("the loopback server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(DEADLINE)
        for sock in self._sockets:
            sock.close()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._gate, self._stop = asyncio.Event(), asyncio.Event()
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        for sock in self._sockets:
            await web.SockSite(runner, sock).start()
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raise NotImplementedError
