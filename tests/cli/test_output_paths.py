"""``-o PATH`` never destroys what PATH is (issue 18, point 1).

A regular file is replaced atomically (or left as it was); a symlink is followed and its
target replaced in the target's own directory; anything else (a FIFO, a character device,
``/dev/stdout`` on a pipe) is written in place; a socket is refused up front. Each case
runs the command as a subprocess on a local sitemap file and asserts that the node or
link survives and that the bytes arrived.

The device cases make a private node with ``mknod`` (a copy of ``/dev/null``'s or
``/dev/full``'s major/minor) in the test's own directory: they need root, and skip
without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from sitemap_reader.cli.output import AtomicFile
from tests.conftest_cli import Result, run_cli

PAGES = 50
URLSET = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    + "".join(f"<url><loc>https://example.com/p/{n}</loc></url>\n" for n in range(PAGES))
    + "</urlset>\n"
)
EXPECTED = [f"https://example.com/p/{n}" for n in range(PAGES)]


@pytest.fixture
def sitemap(tmp_path: Path) -> str:
    """A local sitemap of PAGES URLs, in a directory of its own."""
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / "s.xml"
    path.write_text(URLSET)
    return str(path)


def _urls(text: str) -> list[str]:
    return [json.loads(line)["url"] for line in text.splitlines()]


def _device(path: Path, like: str) -> os.stat_result:
    """A private character device node at ``path`` with the numbers of ``like``."""
    numbers = os.stat(like).st_rdev
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, numbers)
    except PermissionError:
        pytest.skip("mknod needs root (CAP_MKNOD)")
    return os.stat(path)


def _no_temporary_files(*folders: Path) -> None:
    for folder in folders:
        leftovers = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
        assert leftovers == [], leftovers


async def _through_fifo(
    fifo: Path, read: Callable[[IO[bytes]], bytes], *args: str
) -> tuple[bytes, Result]:
    """Run ``sitemap-reader ARGS`` with ``read`` at the other end of ``fifo``.

    The read end is opened first (non-blocking open, then blocking reads) and a writer of
    ours holds the FIFO open until the command has exited: the reader never waits for an
    open that a failed command would never make, and sees EOF only after the command.
    """
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)
    reader = open(fd, "rb")  # noqa: SIM115 - closed below, or by ``read``
    holder = os.open(fifo, os.O_WRONLY)
    try:
        reading = asyncio.ensure_future(asyncio.to_thread(read, reader))
        result = await run_cli(*args)
    finally:
        os.close(holder)
    data = await reading
    reader.close()
    return data, result


async def test_fifo_is_written_in_place(sitemap: str, tmp_path: Path) -> None:
    """-o on a FIFO: a reader at its other end gets every record; the FIFO stays a FIFO."""
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    received, result = await _through_fifo(
        fifo, lambda reader: reader.read(), "dump", sitemap, "-o", str(fifo)
    )
    assert result.code == 0, result.err
    assert _urls(received.decode()) == EXPECTED
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert f"{PAGES} written to {fifo}" in result.err
    _no_temporary_files(tmp_path)


def _first_line_then_close(reader: IO[bytes]) -> bytes:
    line = reader.readline()
    reader.close()
    return line


async def test_fifo_reader_leaving_stops_quietly(sitemap: str, tmp_path: Path) -> None:
    """-o on a FIFO whose reader closes after the first line: the run stops quietly (a
    closed pipe is a stop, not a failure); the FIFO survives."""
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.xml"
    more = "".join(f"<url><loc>https://example.com/q/{n}</loc></url>\n" for n in range(20_000))
    big.write_text(URLSET.replace("</urlset>", more + "</urlset>"))
    line, result = await _through_fifo(
        fifo, _first_line_then_close, "dump", str(big), "-o", str(fifo)
    )
    assert json.loads(line)["url"] == EXPECTED[0]
    assert result.code == 0, result.err
    assert result.err == ""  # quiet, as any filter whose reader left (issue 34 row 11)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


async def test_char_device_copy_of_dev_null_survives(sitemap: str, tmp_path: Path) -> None:
    """-o on a private copy of /dev/null: exit 0, the node is still that character device,
    nothing is created beside it."""
    node = tmp_path / "null"
    before = _device(node, "/dev/null")
    result = await run_cli("dump", sitemap, "-o", str(node))
    assert result.code == 0, result.err
    after = os.lstat(node)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "null"]


async def test_char_device_copy_of_dev_full_is_written_not_renamed(
    sitemap: str, tmp_path: Path
) -> None:
    """-o on a private copy of /dev/full: the write itself fails (ENOSPC), which proves it
    went to the device and not to a file renamed over it; one line, exit 1, node kept."""
    node = tmp_path / "full"
    before = _device(node, "/dev/full")
    result = await run_cli("dump", sitemap, "-o", str(node))
    assert result.code == 1, result.err
    assert f"sitemap-reader: cannot write {node}: No space left on device" in result.err
    assert "Traceback" not in result.err
    after = os.lstat(node)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "in"]


async def test_symlink_to_a_file_is_followed(sitemap: str, tmp_path: Path) -> None:
    """-o latest.jsonl, a symlink to a file in another directory: the link stays, its
    target holds the records (replaced in its own directory), the old bytes are gone."""
    store = tmp_path / "store"
    store.mkdir()
    target = store / "run-1.jsonl"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    result = await run_cli("dump", sitemap, "-o", str(link))
    assert result.code == 0, result.err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert _urls(target.read_text()) == EXPECTED
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    _no_temporary_files(tmp_path, store)


async def test_dangling_symlink_creates_its_target(sitemap: str, tmp_path: Path) -> None:
    """-o on a dangling symlink: the target file is created with the records; the link
    is still the same link."""
    store = tmp_path / "store"
    store.mkdir()
    link = tmp_path / "latest.jsonl"
    link.symlink_to("store/new.jsonl")
    result = await run_cli("dump", sitemap, "-o", str(link))
    assert result.code == 0, result.err
    assert link.is_symlink() and os.readlink(link) == "store/new.jsonl"
    assert _urls((store / "new.jsonl").read_text()) == EXPECTED
    _no_temporary_files(tmp_path, store)


async def test_dangling_symlink_into_a_missing_directory(sitemap: str, tmp_path: Path) -> None:
    """-o on a symlink whose target directory does not exist: one line, exit 2, before
    anything is read; the link is untouched."""
    link = tmp_path / "latest.jsonl"
    link.symlink_to("nowhere/new.jsonl")
    result = await run_cli("dump", sitemap, "-o", str(link))
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines() == [
        f"sitemap-reader dump: error: cannot write {link}: No such file or directory"
    ]
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [
        "in",
        "latest.jsonl",
    ]


async def test_symlink_to_dev_stdout_on_a_pipe(sitemap: str, tmp_path: Path) -> None:
    """-o on a symlink to /dev/stdout while stdout is a pipe: the records come out of the
    pipe, the link and /dev/stdout stay links."""
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    result = await run_cli("dump", sitemap, "-o", str(link))
    assert result.code == 0, result.err
    assert _urls(result.out) == EXPECTED
    assert link.is_symlink() and os.readlink(link) == "/dev/stdout"
    assert os.path.islink("/dev/stdout")
    _no_temporary_files(tmp_path)


async def test_socket_is_refused_up_front(sitemap: str, tmp_path: Path) -> None:
    """-o on a Unix socket: one line, exit 2; the socket is still a socket."""
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        result = await run_cli("dump", sitemap, "-o", str(path))
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines() == [
        f"sitemap-reader dump: error: cannot write {path}: No such device or address"
    ]
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


async def test_report_on_a_device_node(sitemap: str, tmp_path: Path) -> None:
    """report -o on a private /dev/null copy goes through the same writer: exit 0, the
    node survives."""
    node = tmp_path / "null"
    before = _device(node, "/dev/null")
    result: Result = await run_cli("report", sitemap, "-o", str(node))
    assert result.code == 0, result.err
    after = os.lstat(node)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "null"]


async def test_parquet_into_a_fifo(sitemap: str, tmp_path: Path) -> None:
    """--format parquet -o FIFO: the reader gets a whole Parquet file (a stream, no
    seeking); the FIFO stays a FIFO."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    received, result = await _through_fifo(
        fifo, lambda reader: reader.read(), "dump", sitemap, "--format", "parquet", "-o", str(fifo)
    )
    assert result.code == 0, result.err
    table = pq.read_table(pa.BufferReader(received))
    assert table.column("url").to_pylist() == EXPECTED
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_regular_file_replaced_atomically_or_left(tmp_path: Path) -> None:
    """AtomicFile on a regular file: untouched until commit, replaced whole on commit,
    left as it was on abort; the mode is kept."""
    path = tmp_path / "out.jsonl"
    path.write_text("old\n")
    path.chmod(0o604)
    first = AtomicFile(str(path))
    assert not first.in_place
    first.stream.write("new\n")
    assert path.read_text() == "old\n"
    first.commit()
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == 0o604
    second = AtomicFile(str(path))
    second.stream.write("lost\n")
    second.abort()
    assert path.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_a_new_files_mode_leaves_the_process_umask_alone(tmp_path: Path) -> None:
    """Committing new files while another thread creates files: every file of that
    thread gets the process umask (``_file_mode`` set the umask to 0 and back, and a
    file created in that window got 0666), and each committed file gets the mode ``open``
    gives a new file (umask 027: 0640)."""
    old = os.umask(0o027)
    stop = threading.Event()
    modes: set[int] = set()

    def create() -> None:
        n = 0
        while not stop.is_set():
            path = tmp_path / f"other-{n % 8}"
            with open(path, "w"):
                pass
            modes.add(stat.S_IMODE(path.stat().st_mode))
            path.unlink()
            n += 1

    worker = threading.Thread(target=create)
    worker.start()
    try:
        for n in range(300):
            out = AtomicFile(str(tmp_path / f"out-{n}.jsonl"))
            out.stream.write("{}\n")
            out.commit()
            assert stat.S_IMODE(os.stat(out.path).st_mode) == 0o640
    finally:
        stop.set()
        worker.join()
        os.umask(old)
    assert modes == {0o640}
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no probe left


async def test_an_output_that_is_the_state_is_refused(sitemap: str, tmp_path: Path) -> None:
    """dump --state S.db -o S.db (or its -wal, or a link to it): exit 2 before anything
    is opened for writing; the state stays a state, byte for byte."""
    state = tmp_path / "s.db"
    first = await run_cli("dump", sitemap, "--state", str(state), "-o", str(tmp_path / "a"))
    assert first.code == 0, first.err
    kept = state.read_bytes()
    (tmp_path / "link.db").symlink_to(state)
    for output in (state, tmp_path / "s.db-wal", tmp_path / "link.db"):
        result = await run_cli("dump", sitemap, "--state", str(state), "-o", str(output))
        assert result.code == 2, result.err
        assert "is the state of the run" in result.err
        assert state.read_bytes() == kept
    assert not (tmp_path / "s.db-wal").exists()


@pytest.mark.parametrize("command", ["dump", "report"])
async def test_an_output_that_is_a_target_is_refused(
    sitemap: str, tmp_path: Path, command: str
) -> None:
    """dump (or report) s.xml -o s.xml, or -o a hard link to it: exit 2, the sitemap
    untouched."""
    os.link(sitemap, tmp_path / "hard.xml")
    for output in (sitemap, str(tmp_path / "hard.xml")):
        result = await run_cli(command, sitemap, "-o", output)
        assert result.code == 2, result.err
        assert "is a target of the run" in result.err
        assert Path(sitemap).read_text() == URLSET
