"""The CLI says what happened: usage errors first, paths, plain reasons, help width, packaging."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

import sitemap_reader as sr
from tests.conftest_cli import Site, run_cli, urlset
from tests.helpers import self_signed

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["dump", "tree", "check", "report", "demo"]


@pytest.mark.parametrize(
    "target",
    ["./nope.xml", "../nope/sitemap.xml", "/no/such/file", ".", "sitemaps/missing.xml.gz"],
)
async def test_path_like_target_that_is_no_file(target: str, tmp_path: Path) -> None:
    """A path that does not exist (or a directory) is 'no such file', exit 2, one line,
    before any lookup: ``sitemaps/missing.xml.gz`` is not a host named ``sitemaps``."""
    # Every command shares the rule: the others are tried with two of the targets only.
    every = target in ("./nope.xml", "sitemaps/missing.xml.gz")
    for command in ("dump", "tree", "check", "report") if every else ("dump",):
        extra = ("-o", str(tmp_path / "r.html")) if command == "report" else ()
        result = await run_cli(command, target, *extra, cwd=str(tmp_path))
        assert result.code == 2, (command, result.err)
        assert result.err.splitlines() == [
            f"sitemap-reader {command}: error: no such file: {target}"
            + (" (it is a directory)" if target == "." else "")
        ]


async def test_misspelt_flag_leads_with_the_error_and_a_suggestion() -> None:
    """The first line names the problem, the second suggests the flag; no usage block."""
    result = await run_cli("dump", "example.com", "--max-url", "3", "--inclde", "x")
    assert result.code == 2 and result.out == ""
    lines = result.err.splitlines()
    assert lines[0] == "sitemap-reader dump: error: unrecognized arguments: --inclde x"
    assert lines[1] == "did you mean --include?"
    assert lines[2] == "(see 'sitemap-reader dump --help')"
    assert len(lines) == 3


async def test_misspelt_command_suggests_the_command() -> None:
    """An unknown command gets 'did you mean' with the closest one."""
    result = await run_cli("chek", "example.com")
    assert result.code == 2
    lines = result.err.splitlines()
    assert lines[0].startswith("sitemap-reader: error: argument COMMAND: invalid choice: 'chek'")
    assert lines[1] == "did you mean 'check'?"


async def test_missing_target_is_one_line_then_help_pointer() -> None:
    """A missing TARGET: the message first, then where the help is."""
    result = await run_cli("tree")
    assert result.err.splitlines() == [
        "sitemap-reader tree: error: the following arguments are required: TARGET",
        "(see 'sitemap-reader tree --help')",
    ]


@pytest.mark.parametrize("command", [None, *COMMANDS])
async def test_no_help_line_over_100_characters(command: str | None) -> None:
    """Every line of every --help fits in 100 columns."""
    result = await run_cli(*([command] if command else []), "--help")
    assert result.code == 0
    long = [line for line in result.out.splitlines() if len(line) > 100]
    assert long == []


async def test_connection_refused_is_said_plainly(unused_tcp_port: int) -> None:
    """A refused connection reads 'connection refused', not the raw aiohttp text, in one
    line with the attempts made (issue 32: one line per target, not one per retry)."""
    result = await run_cli("dump", f"http://127.0.0.1:{unused_tcp_port}/sitemap.xml")
    assert result.code == 1
    assert result.err.strip() == (
        f"sitemap-reader: nothing discovered: http://127.0.0.1:{unused_tcp_port}/sitemap.xml: "
        f"cannot connect: connection refused (127.0.0.1:{unused_tcp_port}) (4 attempts)\n"
        "sitemap-reader: verdict: unreachable"
    )


async def test_invalid_certificate_is_said_plainly(tmp_path: Path) -> None:
    """A self-signed certificate on a real TLS server reads 'certificate invalid'."""
    app = Site({"/sitemap.xml": urlset("/a")}).app()
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=self_signed(tmp_path))
    await site.start()
    try:
        port = runner.addresses[0][1]
        result = await run_cli("tree", f"https://127.0.0.1:{port}/sitemap.xml")
    finally:
        await runner.cleanup()
    assert result.code == 1
    assert "certificate invalid (127.0.0.1" in result.out
    assert "certificate invalid (127.0.0.1" in result.err
    assert "SSLCertVerificationError" not in result.out + result.err


async def test_name_not_found_is_said_plainly_where_it_happens() -> None:
    """A name the resolver cannot find is 'name not found' from the fetcher itself (by the
    exception's type, not its text), in the tree, the target's reason and the
    DiscoveryError a Python caller sees: no door has raw aiohttp text to translate."""
    from sitemap_reader.crawl import SitemapReader
    from sitemap_reader.errors import DiscoveryError
    from tests.hostile.test_guard import FakeResolver

    async with SitemapReader(resolver=FakeResolver(), retries=0) as reader:
        with pytest.raises(DiscoveryError) as raised:
            [r async for r in reader.urls("https://shop.invalid/sitemap.xml")]
        run = reader.last_run
    assert run is not None and run.tree[0].reason == "cannot connect: name not found (shop.invalid)"
    assert "name not found (shop.invalid)" in str(raised.value)
    assert "ClientConnector" not in str(raised.value) + str(run.failed_targets)


def test_version_attribute_matches_the_package_metadata() -> None:
    """sitemap_reader.__version__ is the installed distribution's version."""
    from importlib.metadata import version

    assert sr.__version__ == version("sitemap-reader")
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", sr.__version__)


def test_license_is_mit_with_our_copyright() -> None:
    """LICENSE is the MIT text with the project's own copyright line."""
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 sitemap-reader developers\n")
    assert "Permission is hereby granted, free of charge" in text


def test_wheel_ships_only_the_package(tmp_path: Path) -> None:
    """A built wheel holds sitemap_reader/ (with py.typed), the license and metadata only."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("sitemap_reader-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"sitemap_reader", f"sitemap_reader-{sr.__version__}.dist-info"}
    assert "sitemap_reader/py.typed" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert not any("/tests/" in n or n.startswith("tests/") for n in names)
