"""The command line's ranked and incremental options: --top, --state, --changed-only,
--removed, --ignore-index-lastmod (issue 6), run as a subprocess against real servers."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.conftest_cli import SITEMAP_READER, Doc, Site, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]

ROBOTS = "User-agent: *\nSitemap: {base}/sitemap.xml\n"
ENTRIES = (
    "<url><loc>{base}/a</loc><lastmod>2025-01-10</lastmod><priority>0.9</priority></url>",
    "<url><loc>{base}/b</loc><lastmod>2025-01-10</lastmod><priority>0.2</priority></url>",
    "<url><loc>{base}/c</loc><priority>0.5</priority></url>",
)


async def serve(factory: ServerFactory, site: Site) -> str:
    """Start the site; its origin."""
    server = await factory(site.app())
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
async def served(aiohttp_server: ServerFactory) -> tuple[str, dict[str, Doc | str]]:
    """A site whose documents the test may change between runs."""
    docs: dict[str, Doc | str] = {
        "/robots.txt": Doc(ROBOTS, content_type="text/plain"),
        "/sitemap.xml": Doc(urlset(*ENTRIES)),
    }
    return await serve(aiohttp_server, Site(docs)), docs


async def test_top_writes_the_n_best(served: tuple[str, dict[str, Doc | str]]) -> None:
    """--top 2 writes the two best records, best first."""
    base, _ = served
    result = await run_cli("dump", base + "/", "--top", "2", "--format", "txt")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [base + "/a", base + "/c"]


async def test_state_changed_only_and_removed(
    served: tuple[str, dict[str, Doc | str]], tmp_path: Path
) -> None:
    """A second run writes nothing when nothing changed, then only the change and the
    removed URL; every record carries a revisit interval."""
    base, docs = served
    state = str(tmp_path / "state.db")
    args = ("dump", base + "/", "--state", state, "--changed-only", "--removed")
    first = await run_cli(*args)
    assert first.code == 0, first.err
    assert len(first.jsonl()) == 3 and all("revisit" in r for r in first.jsonl())
    second = await run_cli(*args)
    assert second.code == 0 and second.out == ""
    moved = ENTRIES[0].replace("2025-01-10", "2025-02-10")
    docs["/sitemap.xml"] = Doc(urlset(moved, ENTRIES[2]))
    third = await run_cli(*args)
    records = {r["url"].removeprefix(base): r for r in third.jsonl()}
    assert sorted(records) == ["/a", "/b"]
    assert records["/b"]["removed"] is True and "removed" not in records["/a"]
    assert records["/a"]["revisit"] == 31 * 86400


async def test_state_to_a_file_output(
    served: tuple[str, dict[str, Doc | str]], tmp_path: Path
) -> None:
    """With -o, the state advances together with the file."""
    base, _ = served
    state, out = str(tmp_path / "state.db"), tmp_path / "urls.jsonl"
    args = ("dump", base + "/", "--state", state, "--changed-only", "-o", str(out))
    assert (await run_cli(*args)).code == 0
    assert len(out.read_text().splitlines()) == 3
    assert (await run_cli(*args)).code == 0
    assert out.read_text() == ""


@pytest.mark.parametrize("flag", ["--changed-only", "--removed", "--ignore-index-lastmod"])
async def test_incremental_flags_need_state(flag: str) -> None:
    """--changed-only and friends without --state (--ignore-index-lastmod: nor --since)
    are usage errors (exit 2) naming the flag that needs it."""
    result = await run_cli("dump", "example.com", flag)
    named = "--ignore-index-lastmod" if flag == "--ignore-index-lastmod" else "--state"
    assert result.code == 2 and named in result.err and result.out == ""


async def test_bad_state_file_is_a_usage_error(
    served: tuple[str, dict[str, Doc | str]], tmp_path: Path
) -> None:
    """A --state FILE that is not a state file exits 2 with a one-line reason."""
    base, _ = served
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database" * 200)
    result = await run_cli("dump", base + "/", "--state", str(junk))
    assert result.code == 2 and "not a sitemap-reader state file" in result.err


async def test_foreign_sqlite_state_is_refused_untouched(
    served: tuple[str, dict[str, Doc | str]], tmp_path: Path
) -> None:
    """--state naming another program's SQLite file (tables sitemaps and urls of other
    columns): exit 2, one line on stderr, no record, and the file's bytes and mtime as
    they were."""
    base, _ = served
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE sitemaps (loc TEXT, fetched TEXT)")
    db.execute("CREATE TABLE urls (href TEXT PRIMARY KEY, title TEXT)")
    db.execute("INSERT INTO urls VALUES ('https://example.com/', 'home')")
    db.commit()
    db.close()
    before = path.read_bytes(), path.stat().st_mtime_ns
    result = await run_cli("dump", base + "/", "--state", str(path))
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and "not a sitemap-reader state file" in result.err
    assert "Traceback" not in result.err
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


async def test_newer_state_is_refused_untouched(
    served: tuple[str, dict[str, Doc | str]], tmp_path: Path
) -> None:
    """A state file written by a newer sitemap-reader: exit 2, one line naming both
    versions, file unchanged; the same file works again once it is of this version."""
    base, _ = served
    path = tmp_path / "state.db"
    assert (await run_cli("dump", base + "/", "--state", str(path))).code == 0
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 9")
    db.commit()
    db.close()
    before = path.read_bytes(), path.stat().st_mtime_ns
    result = await run_cli("dump", base + "/", "--state", str(path))
    assert result.code == 2 and result.err.count("\n") == 1
    assert "schema 9 is newer" in result.err
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def _read_only_prefix(folder: Path) -> list[str]:
    """A command prefix that runs its command in a private mount namespace where
    ``folder`` is bind-mounted read-only (root ignores file modes; a read-only mount it
    cannot ignore). Skips when this machine cannot make one."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1) for a private read-only mount")
    user = [] if os.geteuid() == 0 else ["-r"]
    mount = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder}"
    probe = subprocess.run(
        [unshare, *user, "-m", "sh", "-c", f"{mount} && ! touch {folder}/probe"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only bind mount here: {probe.stderr.decode().strip()}")
    return [unshare, *user, "-m", "sh", "-c", f'{mount} && exec "$0" "$@"']


async def test_a_sound_state_on_a_read_only_file_system(
    served: tuple[str, dict[str, Doc | str]], tmp_path: Path
) -> None:
    """A valid state file on a read-only mount: 'cannot write state FILE: read-only file
    system', exit 2, the file as it was (never 'not a sitemap-reader state file')."""
    base, _ = served
    folder = tmp_path / "ro"
    folder.mkdir()
    state = folder / "state.db"
    first = await run_cli("dump", base + "/", "--state", str(state), "--format", "txt")
    assert first.code == 0, first.err
    before = state.read_bytes()
    prefix = _read_only_prefix(folder)
    proc = await asyncio.create_subprocess_exec(
        *prefix, SITEMAP_READER, "dump", base + "/", "--state", str(state),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    text = err.decode()
    assert proc.returncode == 2, text
    assert f"cannot write state {state}: read-only file system" in text
    assert "not a sitemap-reader state file" not in text and "Traceback" not in text
    assert out == b"" and state.read_bytes() == before
