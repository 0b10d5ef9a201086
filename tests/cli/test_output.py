"""Output errors of ``dump`` (issue 10 §8): a directory as ``-o``, a full disk, a failing
stdout. The command runs as a subprocess against a site on 127.0.0.1.

A full disk is made without root and without a special filesystem: the child process gets
``RLIMIT_FSIZE`` (writes past the limit fail with EFBIG, as they fail with ENOSPC on a full
disk; SIGXFSZ is ignored so the write returns the error), or its stdout is ``/dev/full``.
The command must treat any OSError of its output the same way.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sitemap_reader.cli.output import AtomicFile
from tests.conftest_cli import SITEMAP_READER, Doc, Result, Site, cli_env, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]

#: URLs in the test sitemap: about 400 KB of JSONL, far past the file size limit below.
PAGES = 4000
#: The child's file size limit: the output fails after a few batches.
FSIZE_LIMIT = 64 * 1024
#: Every run here ends in well under this (they stop at the first failed write).
BOUND_SECONDS = 20.0


@pytest.fixture
async def big(aiohttp_server: ServerFactory) -> tuple[str, Site]:
    """robots.txt naming one sitemap of PAGES URLs; the site's origin and its log."""
    entries = [f"/page/{n}?with=a-longer-query-string-{n}" for n in range(PAGES)]
    site = Site(
        {
            "/robots.txt": Doc("User-agent: *\nSitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Doc(urlset(*entries)),
        }
    )
    server = await aiohttp_server(site.app())
    return str(server.make_url("")).rstrip("/"), site


def _limit_file_size() -> None:
    """preexec_fn of the child: a full disk after FSIZE_LIMIT bytes of any one file."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


async def run_limited(
    *args: str, stdout: IO[bytes] | None = None, limit: bool = False
) -> tuple[Result, float]:
    """Run ``sitemap-reader ARGS`` (file size limited when ``limit``); result and seconds."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        SITEMAP_READER,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=stdout if stdout is not None else asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(),
        preexec_fn=_limit_file_size if limit else None,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=BOUND_SECONDS)
    assert proc.returncode is not None
    result = Result(proc.returncode, (out or b"").decode(), err.decode())
    return result, time.monotonic() - started


def _assert_one_failure_line(err: str, name: str) -> None:
    """Exactly one ``cannot write NAME: reason`` line, the summary, no traceback."""
    lines = err.splitlines()
    failures = [line for line in lines if "cannot write" in line]
    assert failures == [line for line in failures if line.startswith("sitemap-reader: ")]
    assert len(failures) == 1 and f"cannot write {name}: " in failures[0], err
    assert any(line.startswith("sitemaps: ") for line in lines), err
    assert "stopped: output failed" in err
    assert "Traceback" not in err and "Exception ignored" not in err, err


async def test_full_disk_on_output_file(big: tuple[str, Site], tmp_path: Path) -> None:
    """-o on a full disk: exit 1 with one line and the summary; the old file is kept as it
    was and the temporary file is gone."""
    base, _ = big
    out = tmp_path / "urls.jsonl"
    out.write_text("previous run\n")
    result, seconds = await run_limited("dump", base + "/", "-o", str(out), limit=True)
    assert result.code == 1, result.err
    _assert_one_failure_line(result.err, str(out))
    assert "File too large" in result.err  # EFBIG, the stand-in for ENOSPC
    assert out.read_text() == "previous run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["urls.jsonl"]
    assert seconds < BOUND_SECONDS


async def test_full_disk_on_new_output_file(big: tuple[str, Site], tmp_path: Path) -> None:
    """-o FILE that did not exist, on a full disk: no FILE, no temporary file left."""
    base, _ = big
    out = tmp_path / "new.csv"
    result, _ = await run_limited("dump", base + "/", "--format", "csv", "-o", str(out), limit=True)
    assert result.code == 1, result.err
    _assert_one_failure_line(result.err, str(out))
    assert list(tmp_path.iterdir()) == []


async def test_full_disk_on_stdout(big: tuple[str, Site]) -> None:
    """stdout on a full device (/dev/full): exit 1, one line naming standard output, the
    summary, and no second error from the interpreter's exit flush."""
    base, _ = big
    with open("/dev/full", "wb") as full:
        result, seconds = await run_limited("dump", base + "/", stdout=full)
    assert result.code == 1, result.err
    _assert_one_failure_line(result.err, "standard output")
    assert "No space left on device" in result.err
    assert seconds < BOUND_SECONDS


async def test_output_directory_refused_up_front(big: tuple[str, Site], tmp_path: Path) -> None:
    """-o naming an existing directory: exit 2 with one line before anything is fetched;
    nothing is created beside it."""
    base, site = big
    target = tmp_path / "out"
    target.mkdir()
    result, _ = await run_limited("dump", base + "/", "-o", str(target))
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines() == [
        f"sitemap-reader dump: error: cannot write {target}: Is a directory"
    ]
    assert site.paths() == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert list(target.iterdir()) == []


def test_abort_removes_the_temporary_file_when_close_fails(tmp_path: Path) -> None:
    """AtomicFile.abort unlinks its temporary file even when closing it fails again (the
    final flush of buffered lines on a full disk), and leaves the target alone."""
    target = tmp_path / "out.txt"
    target.write_text("kept\n")
    sink = AtomicFile(str(target))
    sink.stream.write("x" * 100)  # buffered: close() has to write it
    os.close(sink.stream.fileno())  # the descriptor fails under the stream
    with pytest.raises(OSError):
        sink.stream.flush()
    sink.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert target.read_text() == "kept\n"
    sink.abort()  # a second abort is a no-op


def test_atomic_file_refuses_a_directory(tmp_path: Path) -> None:
    """AtomicFile on a directory raises IsADirectoryError before creating anything."""
    with pytest.raises(IsADirectoryError):
        AtomicFile(str(tmp_path))
    assert list(tmp_path.iterdir()) == []


async def test_tree_on_full_stdout(big: tuple[str, Site]) -> None:
    """``tree`` with stdout on a full device: exit 1, one line, the summary, no traceback."""
    base, _ = big
    with open("/dev/full", "wb") as full:
        result, seconds = await run_limited("tree", base + "/", stdout=full)
    assert result.code == 1, result.err
    _assert_one_failure_line(result.err, "standard output")
    assert seconds < BOUND_SECONDS


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "txt"])
async def test_full_disk_on_stdout_file_counts_the_whole_records(
    big: tuple[str, Site], tmp_path: Path, fmt: str
) -> None:
    """stdout redirected to a file on a full disk: "N written" is the number of whole
    records the file holds, no more and no fewer (before: "689 written" with 1,096 whole
    records in the file, or 0 with hundreds)."""
    import re

    base, _ = big
    out = tmp_path / f"out.{fmt}"
    with open(out, "wb") as file:
        result, _ = await run_limited("dump", base + "/", "--format", fmt, stdout=file, limit=True)
    assert result.code == 1, result.err
    _assert_one_failure_line(result.err, "standard output")
    said = re.search(r"; ([\d,]+) written", result.err)
    assert said is not None, result.err
    data = out.read_bytes()
    assert len(data) == FSIZE_LIMIT
    whole = data.count(b"\n") - (1 if fmt == "csv" else 0)  # no cell here holds a line break
    assert int(said.group(1).replace(",", "")) == whole > 0
