"""Run the command with made-up names resolving to 127.0.0.1 (for CLI tests of the guard).

``python tests/cli/fake_dns_cli.py NAME[,NAME...] ARGS...`` runs ``sitemap-reader ARGS`` with
aiohttp's default resolver replaced by the guard tests' fake one: each NAME answers
127.0.0.1, every other name fails like NXDOMAIN, so a "public" target stays on this
machine and no lookup leaves it.
"""

from __future__ import annotations

import functools
import sys

import aiohttp

from tests.hostile.test_guard import FakeResolver


def main() -> int:
    """Patch the resolver, then run the command's own entry point."""
    names, args = sys.argv[1], sys.argv[2:]
    fake = functools.partial(FakeResolver, *names.split(","))
    aiohttp.DefaultResolver = fake  # type: ignore[assignment]
    from sitemap_reader.cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
