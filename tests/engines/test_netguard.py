"""The network guard itself (netguard/sitecustomize.py), in a process of its own: off
loopback, connections, datagrams and name lookups are refused before a packet leaves, and
each refusal is noted in the guard's log (which the other tests require to stay empty)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.engines.conftest import HERE

_PROBE = """
import errno, socket
for address in [("192.0.2.1", 80), ("169.254.169.254", 80)]:
    sock = socket.socket()
    try:
        sock.connect(address)
    except OSError as exc:
        assert exc.errno == errno.ENETUNREACH, exc
    else:
        raise SystemExit("connected off loopback")
    finally:
        sock.close()
for name in ["metadata.google.internal", "example.com"]:
    try:
        socket.getaddrinfo(name, 80)
    except socket.gaierror:
        pass
    else:
        raise SystemExit("looked a name up")
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    udp.sendto(b"x", ("8.8.8.8", 53))
except OSError as exc:
    assert exc.errno == errno.ENETUNREACH, exc
udp.sendto(b"x", ("127.0.0.1", 9))
udp.close()
server = socket.create_server(("127.0.0.1", 0))
socket.create_connection(server.getsockname(), timeout=5).close()
socket.create_connection(("localhost", server.getsockname()[1]), timeout=5).close()
server.close()
print("done")
"""


def test_the_guard_refuses_and_notes_every_way_off_loopback(tmp_path: Path) -> None:
    """Two connections, two lookups and a datagram refused and noted; loopback works."""
    log = tmp_path / "guard.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(HERE / "netguard"),
        "SITEMAP_READER_NETGUARD_LOG": str(log),
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    refusals = [line for line in log.read_text().splitlines() if "refused" in line]
    assert len(refusals) == 5, refusals
