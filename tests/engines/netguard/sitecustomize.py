"""The engine tests' network guard: loaded by every Python process they start.

``make test-engines`` puts this folder first on ``PYTHONPATH``, so Python imports it at start
in pytest itself, in Spark's Python workers (the JVM hands them its environment) and in
Ray's workers (the raylet does the same). From then on the process may connect, send a
datagram to, or look up only loopback: a connection or ``sendto`` outside 127.0.0.0/8 and
::1 raises ``OSError(ENETUNREACH)``, and a name lookup that ``/etc/hosts`` does not answer
with a loopback address raises ``socket.gaierror``, before any packet is sent. Each refusal
is also appended to the file ``$SITEMAP_READER_NETGUARD_LOG`` (when set) with the process
and a short stack, because a refusal inside an engine's helper thread may be swallowed:
the tests fail when that file is not empty. Unix sockets are not touched.

Set ``SITEMAP_READER_NETGUARD=off`` to load nothing (to compare against the bare engines).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
import traceback
from typing import Any

_LOG = os.environ.get("SITEMAP_READER_NETGUARD_LOG")


def _hosts_loopback_names() -> frozenset[str]:
    """Names /etc/hosts maps to a loopback address (answered from the file: no packet)."""
    names: set[str] = {"localhost"}
    try:
        with open("/etc/hosts", encoding="utf-8", errors="replace") as hosts:
            for line in hosts:
                fields = line.split("#", 1)[0].split()
                if len(fields) >= 2 and _loopback_literal(fields[0]):
                    names.update(name.lower() for name in fields[1:])
    except OSError:
        pass
    return frozenset(names)


def _loopback_literal(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified  # 0.0.0.0 and :: mean this host


_NAMES = _hosts_loopback_names()


def _local_name(host: object) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port): a wildcard or loopback address to bind
    if isinstance(host, bytes | bytearray):
        host = bytes(host).decode("ascii", "replace")
    text = str(host).rstrip(".").lower()
    return text == "" or text in _NAMES or _loopback_literal(text)


def _refuse(what: str) -> None:
    if _LOG:
        stack = "".join(traceback.format_stack(limit=8)[:-2])
        line = f"pid {os.getpid()} ({' '.join(sys.argv[:3])}): refused {what}\n{stack}\n"
        try:
            with open(_LOG, "a", encoding="utf-8") as log:
                log.write(line)
        except OSError:
            pass


def _check_address(sock: socket.socket, address: Any, verb: str) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if not _loopback_literal(str(host)) and not _local_name(host):
        _refuse(f"{verb} {address!r}")
        raise OSError(errno.ENETUNREACH, f"netguard: {verb} {address!r} refused")


def _install() -> None:
    cls = socket.socket
    connect, connect_ex, sendto = cls.connect, cls.connect_ex, cls.sendto

    def guarded_connect(self: socket.socket, address: Any) -> None:
        _check_address(self, address, "connect to")
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        _check_address(self, address, "connect to")
        return connect_ex(self, address)

    def guarded_sendto(self: socket.socket, data: Any, *rest: Any) -> int:
        _check_address(self, rest[-1], "send to")
        sent: int = sendto(self, data, *rest)
        return sent

    guarded = {"connect": guarded_connect, "connect_ex": guarded_connect_ex}
    for name, method in {**guarded, "sendto": guarded_sendto}.items():
        setattr(cls, name, method)

    def lookup(original: Any, name: str) -> Any:
        def guarded(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not _local_name(host):
                _refuse(f"{name}({host!r})")
                raise socket.gaierror(socket.EAI_NONAME, f"netguard: lookup of {host!r} refused")
            return original(host, *args, **kwargs)

        return guarded

    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
        setattr(socket, name, lookup(getattr(socket, name), name))


if os.environ.get("SITEMAP_READER_NETGUARD", "on") != "off":
    _install()
