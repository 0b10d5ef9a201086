"""Every example of ``--help``, of the README and of the docs site runs, as a shell would run it.

Help examples name ``example.com``; they run against a loopback site standing in for it
(``example.com`` becomes ``127.0.0.1:PORT``, https URLs become http ones). The shell blocks
of a page (README.md, docs/**/*.md: :mod:`tests.doc_pages`) that use ``.venv/bin/`` run as
written, top to bottom, from a scratch directory of that page with the venv's command
first on PATH (``.venv/bin/`` is the project's own venv); ``sitemap-reader`` there, or on
PATH, is the shim of the CLI zygote (:mod:`tests.cli_zygote`): each run a fork of a
process that imported the CLI already. The other blocks that run the command, and the
Python blocks, run with ``example.com`` pointed at the loopback site the same way. ``jq``
comes with the machine image; if it is missing, the examples that pipe into it are skipped
with that reason.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sitemap_reader.cli.args import build_parser
from sitemap_reader.cli.distributed import add_commands
from tests.conftest_cli import SITEMAP_READER, Doc, Site, cli_env, urlset
from tests.doc_pages import doc_blocks, name, page_blocks, pages

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
BIN = Path(sys.executable).parent
ENTRIES = (
    "<url><loc>{base}/</loc><lastmod>2026-01-02</lastmod><priority>1.0</priority></url>",
    "<url><loc>{base}/blog/a</loc><lastmod>2026-03-04</lastmod><priority>0.9</priority></url>",
    "<url><loc>{base}/about</loc><changefreq>yearly</changefreq><priority>0.3</priority></url>",
)
SITE = {
    "/robots.txt": Doc("User-agent: *\nSitemap: {base}/sitemap.xml\n", content_type="text/plain"),
    "/sitemap.xml": Doc(urlset(*ENTRIES)),
    "/sitemap.xml.gz": Doc(urlset(*ENTRIES), gzipped=True, content_type="application/gzip"),
}


def _handler(args: argparse.Namespace) -> int:
    return 0


#: Commands whose examples need a Redis: ``tests/distributed/test_examples.py`` runs them.
REDIS_COMMANDS = frozenset({"enqueue", "worker", "status"})


def help_examples() -> list[tuple[str, str]]:
    """(command, example line) for every ``examples:`` line of every subcommand's help."""
    parser = build_parser(_handler, _handler, _handler, _handler, _handler, (add_commands,))
    found: list[tuple[str, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                epilog = sub.epilog or ""
                block = epilog.split("examples:\n", 1)[1].split("\n\n", 1)[0]
                found.extend((name, example) for example in _commands(block.splitlines()))
    return found


def _commands(lines: list[str]) -> list[str]:
    """The example commands of an ``examples:`` block: a line ending in a pipe goes on in
    the next one (as the shell reads it; the help wraps there to fit 80 columns)."""
    commands: list[str] = []
    joined = False
    for line in lines:
        if joined:
            commands[-1] += "\n  " + line.strip()
        else:
            commands.append(line.strip())
        joined = commands[-1].endswith("|")
    return commands


def _venv_of_the_shim(folder: Path) -> None:
    """``folder`` as the project's venv (every part of it linked), but for its
    ``bin/sitemap-reader``: the zygote's shim (:mod:`tests.cli_zygote`)."""
    folder.mkdir()
    for part in BIN.parent.iterdir():
        if part != BIN:
            (folder / part.name).symlink_to(part)
    (folder / BIN.name).mkdir()
    for command in BIN.iterdir():
        mine = SITEMAP_READER if command.name == "sitemap-reader" else command
        (folder / BIN.name / command.name).symlink_to(mine)


def _needs_jq(text: str) -> None:
    if "jq " in text and shutil.which("jq") is None:
        pytest.skip("jq is not installed on this machine (the machine image ships it)")


async def _bash(script: str, cwd: Path, *, pipefail: bool = True) -> tuple[int, str, str]:
    """Run a script with bash -e (and -o pipefail: every stage of a pipe must succeed)."""
    # The command is the zygote's shim (tests/cli_zygote.py), the venv's scripts next.
    path = os.pathsep.join([os.path.dirname(SITEMAP_READER), str(BIN), os.environ.get("PATH", "")])
    env = cli_env(PATH=path)
    flags = ["-eo", "pipefail"] if pipefail else ["-e"]
    proc = await asyncio.create_subprocess_exec(
        "bash", *flags, "-c", script, cwd=cwd, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def _site(factory: ServerFactory) -> str:
    server = await factory(Site(SITE).app())
    return f"127.0.0.1:{server.port}"


def _localize(text: str, host: str) -> str:
    return text.replace("https://example.com", f"http://{host}").replace("example.com", host)


@pytest.mark.parametrize(
    ("command", "example"), [e for e in help_examples() if e[0] not in REDIS_COMMANDS]
)
async def test_help_example_runs(
    command: str, example: str, aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """An example of ``--help`` runs against the loopback site and exits 0 with output."""
    _needs_jq(example)
    host = await _site(aiohttp_server)
    (tmp_path / "sitemap.xml.gz").write_bytes(
        gzip.compress(urlset(*ENTRIES).replace("{base}", "https://example.com").encode())
    )
    code, out, err = await _bash(_localize(example, host), tmp_path)
    assert code == 0, (example, err)
    assert "Traceback" not in err
    written = [p for p in tmp_path.iterdir() if p.name != "sitemap.xml.gz"]
    assert out.strip() or written, f"{example}: no output"


def test_help_examples_are_found() -> None:
    """The help of every command has examples, and the collector sees them."""
    commands = {command for command, _ in help_examples()}
    assert commands == {"dump", "tree", "demo", "check", "report"} | REDIS_COMMANDS


def test_doc_shell_blocks_are_all_run() -> None:
    """Each shell block of the README and the docs is one of the kinds the tests below run,
    and the collector finds the blocks that run in order."""
    for block in doc_blocks("sh"):
        assert (
            ".venv/bin/sitemap-reader" in block
            or block.startswith(("make ", "python -m pip", "python examples/"))
            or "sitemap-reader" in block
        ), block
    assert len([b for b in doc_blocks("sh") if ".venv/bin/sitemap-reader" in b]) >= 5


@pytest.mark.parametrize(
    "page",
    [p for p in pages() if any(".venv/bin/sitemap-reader" in b for b in page_blocks(p, "sh"))],
    ids=name,
)
async def test_doc_shell_blocks_run_in_order(page: Path, tmp_path: Path) -> None:
    """The blocks of a page that use the venv's command run as written, top to bottom, in
    one directory (a later block may use a file an earlier one made), each with exit 0."""
    blocks = [b for b in page_blocks(page, "sh") if ".venv/bin/sitemap-reader" in b]
    if shutil.which("jq") is None:
        blocks = [b for b in blocks if "jq " not in b]  # jq ships with the machine image
    _venv_of_the_shim(tmp_path / ".venv")
    for block in blocks:
        code, out, err = await _bash(block, tmp_path, pipefail=False)
        assert code == 0, (block, err)
        assert "Traceback" not in err and (out.strip() or err.strip()), block


@pytest.mark.parametrize(
    "block",
    [b for b in doc_blocks("sh") if "sitemap-reader " in b and ".venv/bin/" not in b
     and not b.startswith("make ") and "--redis" not in b],
)  # fmt: skip
async def test_doc_real_site_block_runs(
    block: str, aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """A block written for a real site runs against the loopback stand-in, exit 0."""
    _needs_jq(block)
    host = await _site(aiohttp_server)
    code, _, err = await _bash(_localize(block, host), tmp_path)
    assert code == 0, (block, err)
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "block",
    [
        b
        for b in doc_blocks("python")
        if "import scrapy" not in b and "ADDONS" not in b and "sitemap_reader.distributed" not in b
    ],
)
async def test_doc_python_block_runs(
    block: str, aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """A Python block of the README or the docs runs (example.com pointed at the loopback
    site), exit 0."""
    host = await _site(aiohttp_server)
    script = tmp_path / "example.py"
    script.write_text(_localize(block, host))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), cwd=tmp_path, env=cli_env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, err.decode()
    assert out.strip()
