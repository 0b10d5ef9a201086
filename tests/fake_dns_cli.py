"""Run the command with made-up names resolving to 127.0.0.1 (for CLI tests of the guard).

``python tests/fake_dns_cli.py NAME[,NAME...] ARGS...`` runs ``sitemap-reader ARGS`` with
aiohttp's default resolver replaced: each NAME answers 127.0.0.1, every other name fails
like NXDOMAIN, so a "public" target stays on this machine and no lookup leaves it.
"""

from __future__ import annotations

import socket
import sys

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult


def fake_resolver(names: frozenset[str]) -> type[AbstractResolver]:
    """A resolver class answering 127.0.0.1 for ``names`` only."""

    class Resolver(AbstractResolver):
        async def resolve(
            self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[ResolveResult]:
            if host not in names:
                raise OSError(f"no such host {host} (test resolver)")
            return [
                ResolveResult(
                    hostname=host,
                    host="127.0.0.1",
                    port=port,
                    family=socket.AF_INET,
                    proto=0,
                    flags=socket.AI_NUMERICHOST,
                )
            ]

        async def close(self) -> None:
            """Nothing to release."""

    return Resolver


def main() -> int:
    """Patch the resolver, then run the command's own entry point."""
    names, args = sys.argv[1], sys.argv[2:]
    aiohttp.DefaultResolver = fake_resolver(frozenset(names.split(",")))  # type: ignore[assignment]
    from sitemap_reader.cli import main as cli_main

    sys.argv = ["sitemap-reader", *args]
    return int(cli_main() or 0)


if __name__ == "__main__":
    sys.exit(main())
