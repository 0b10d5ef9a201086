"""cli/hints.py: the lines that say what to try next, in the command line's own words."""

from __future__ import annotations

from tests.cli.test_commands import ServerFactory
from tests.conftest_cli import Site, run_cli, urlset


async def test_a_refused_private_address_names_the_flag(aiohttp_server: ServerFactory) -> None:
    """The address guard refuses a loopback site with --allow-private never: the core says
    only what it refused; the command line adds which of its flags reads it."""
    server = await aiohttp_server(Site({"/s.xml": urlset("/a")}).app())
    result = await run_cli("dump", str(server.make_url("/s.xml")), "--allow-private", "never")
    assert result.code == 1, result.err
    assert "refused non-public address" in result.err
    assert "refused: 1 file on a private or loopback address (--allow-private reads them)" in (
        result.err
    )
    assert "see --allow-private" not in result.err
