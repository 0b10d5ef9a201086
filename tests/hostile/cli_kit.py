"""Run the installed ``sitemap-reader`` against the hostile site and measure it.

Every hostile case runs two real processes at once: ``dump -v`` (the records, and the
summary with one line per problem on stderr) and ``tree --json`` (where the problem must
show on the right node). Each runs under :mod:`tests.hostile.rss_wrapper`, which waits
for its one child with ``os.wait4`` and writes the child's peak resident memory
(``ru_maxrss``) and its CPU time to a file: memory is measured on the process, not
guessed. Cost bounds are on that CPU time, which a busy machine (other workers, other
jobs) does not stretch; the wall time, measured here around the whole process, is bounded
only where a timer is the promise (``--timeout``, a backoff), and loosely: it tells which
limit ended the wait, not how fast the machine is. A run that overstays its ``limit`` is
killed (its process group) and the test fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.cli_zygote import PEAK_VAR, SOCKET_VAR
from tests.conftest_cli import SITEMAP_READER, cli_env

WRAPPER = str(Path(__file__).with_name("rss_wrapper.py"))
#: Flags every hostile run gets: no live progress, and the site is on 127.0.0.1.
COMMON = ("--no-progress", "--allow-private")
#: Wall seconds after which a run counts as hung and is killed (the test fails): far over
#: every bound a case asserts, so a hang reaches it and a busy machine does not.
HANG = 120.0


@dataclass(frozen=True, slots=True)
class Measured:
    """One finished process: exit code, output, wall seconds, peak RSS in MiB, and CPU
    seconds (None where only the wall time is known)."""

    code: int
    out: str
    err: str
    seconds: float
    peak_mib: float
    cpu: float | None = None

    @property
    def cost(self) -> float:
        """CPU seconds when known, else wall seconds."""
        return self.seconds if self.cpu is None else self.cpu

    def lines(self) -> list[str]:
        """stdout lines."""
        return self.out.splitlines()

    def urls(self) -> list[str]:
        """The URL of each JSONL record (or each line of --format txt)."""
        if self.out.startswith("{"):
            return [json.loads(line)["url"] for line in self.lines()]
        return self.lines()


@dataclass(frozen=True, slots=True)
class Case:
    """The dump run and the tree run of one hostile case."""

    dump: Measured
    tree: Measured

    @property
    def run(self) -> dict[str, Any]:
        """``tree --json`` output, parsed."""
        parsed: dict[str, Any] = json.loads(self.tree.out)
        return parsed

    @property
    def seconds(self) -> float:
        """The longer of the two wall times."""
        return max(self.dump.seconds, self.tree.seconds)

    @property
    def peak_mib(self) -> float:
        """The higher of the two peaks."""
        return max(self.dump.peak_mib, self.tree.peak_mib)

    def nodes(self) -> Iterator[dict[str, Any]]:
        """Every node of the tree, depth first."""
        stack = list(reversed(self.run["tree"]))
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node["children"]))

    def node(self, url: str) -> dict[str, Any]:
        """The tree node requested as ``url``."""
        for node in self.nodes():
            if node["url"] == url:
                return node
        raise AssertionError(f"no node {url} in the tree")

    def codes(self, url: str) -> set[str]:
        """Problem codes of the node requested as ``url``."""
        return {p["code"] for p in self.node(url)["problems"]}

    def check(
        self, *, seconds: float, mib: float, good: Sequence[str], wall: float | None = None
    ) -> list[str]:
        """Assert the bounds (``seconds`` of CPU time per process, ``wall`` seconds where
        a timer is the promise) and that every good URL was emitted; the emitted URLs."""
        urls = self.dump.urls()
        for name, run in (("dump", self.dump), ("tree", self.tree)):
            assert run.cost < seconds, f"{name} took {run.cost:.1f} s"
            if wall is not None:
                assert run.seconds < wall, f"{name} took {run.seconds:.1f} s of wall time"
        assert self.peak_mib < mib, f"peak RSS {self.peak_mib:.0f} MiB"
        missing = set(good) - set(urls)
        assert not missing, f"good URLs lost: {sorted(missing)[:5]}"
        assert len(urls) == len(set(urls)), "a URL was emitted twice"
        report(self)
        return urls


def report(case: Case) -> None:
    """One line for the closing table (shown with ``pytest -s``)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1].split(" ")[0]
    print(
        f"\nHOSTILE {test}: {case.seconds:.2f} s, {case.peak_mib:.0f} MiB, "
        f"{len(case.dump.lines())} records, exit {case.dump.code}",
        file=sys.stderr,
    )


async def measured(args: Sequence[str], *, limit: float) -> Measured:
    """Run ``sitemap-reader ARGS``, its peak RSS measured; kill it after ``limit`` s.

    A run forked by the CLI zygote (:mod:`tests.cli_zygote`) has its peak sent back by the
    zygote's ``wait4`` (its count starts at the zygote's resident set, as a fresh process's
    would after the same imports); a real one runs under the RSS wrapper.
    """
    if os.environ.get(SOCKET_VAR):
        return await _measured([SITEMAP_READER, *args], args, limit, required=True, shim=True)
    return await _measured([sys.executable, WRAPPER, "{peak}", SITEMAP_READER, *args], args, limit)


async def _measured(
    command: Sequence[str],
    args: Sequence[str],
    limit: float,
    *,
    required: bool = False,
    shim: bool = False,
) -> Measured:
    """Run ``COMMAND`` (``{peak}`` is the file it writes ``KiB [CPU-SECONDS]`` in; with
    ``shim``, the shim writes it), kill it after ``limit`` s; ``required``: a missing peak
    fails the test."""
    fd, peak_file = tempfile.mkstemp(prefix="rss-")
    os.close(fd)
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *(peak_file if part == "{peak}" else part for part in command),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(**({PEAK_VAR: peak_file} if shim else {})),
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=limit)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        raise AssertionError(f"sitemap-reader {' '.join(args)} ran over {limit} s") from None
    finally:
        text = Path(peak_file).read_text().strip()
        os.unlink(peak_file)
    seconds = time.monotonic() - started
    assert proc.returncode is not None
    assert text or not required, "the child recorded no peak"
    peak, _, cpu = text.partition(" ")
    used = float(cpu) if cpu else None
    return Measured(
        proc.returncode, out.decode(), err.decode(), seconds, int(peak or 0) / 1024, used
    )


async def run_case(
    target: str | Sequence[str],
    *flags: str,
    limit: float = HANG,
    dump_flags: Sequence[str] = (),
) -> Case:
    """``dump -v`` and ``tree --json`` of ``target`` with the crawl ``flags``, at once.

    The two send different User-Agents, so a site can keep per-client state (the reset
    case resets each client's first request).
    """
    targets = [target] if isinstance(target, str) else list(target)
    crawl = [*COMMON, *flags]
    dump = measured(
        ["dump", *targets, "-v", *crawl, *dump_flags, "--user-agent", "hostile-dump"],
        limit=limit,
    )
    tree = measured(
        ["tree", targets[0], "--json", *crawl, "--user-agent", "hostile-tree"], limit=limit
    )
    dumped, treed = await asyncio.gather(dump, tree)
    return Case(dumped, treed)


# --------------------------------------------------------------------------- own peak (VmHWM)

#: Runs the CLI in-process and writes the process's own VmHWM at exit.
LAUNCHER = str(Path(__file__).with_name("hwm_launcher.py"))


async def measured_own(args: Sequence[str], *, limit: float) -> Measured:
    """Like :func:`measured`, but the peak is the process's own ``VmHWM``, read by the
    process itself from ``/proc/self/status`` as it exits (see ``hwm_launcher``)."""
    return await _measured([sys.executable, LAUNCHER, "{peak}", *args], args, limit, required=True)


async def run_own_case(target: str, *flags: str, limit: float = HANG) -> Case:
    """:func:`run_case` with each process's own VmHWM as its peak."""
    crawl = [*COMMON, *flags]
    dump = measured_own(["dump", target, "-v", *crawl, "--user-agent", "hostile-dump"], limit=limit)
    tree = measured_own(
        ["tree", target, "--json", *crawl, "--user-agent", "hostile-tree"], limit=limit
    )
    dumped, treed = await asyncio.gather(dump, tree)
    return Case(dumped, treed)
